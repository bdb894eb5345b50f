//! The aggregator's compact keys for affine lanes ([`AffineShape`]) against costing
//! every access lane by lane: random streams of affine and non-affine accesses (random
//! masks; strides negative, 0, small and huge; widths 1 to 16; misaligned starts) must give
//! the sums, costliest accesses, lane strides and start offsets of costing each access one
//! by one, one tally per distinct (row, [`Shape`]), and the same report whether or not the
//! executor worked out the lanes' form.

use super::*;
use proptest::prelude::*;

const ARCHS: &str = "1.0,1.3,2.0,3.5,7.0,9.0";

/// What the accesses of one instruction share: site, space, op, width, read-only path, lane
/// stride and mask.
type Pattern = (usize, Space, Op, u32, bool, i64, u32);

fn pattern() -> impl Strategy<Value = Pattern> {
    let space = prop::sample::select(vec![
        Space::Global,
        Space::Shared,
        Space::Local,
        Space::Constant,
    ]);
    let op = prop::sample::select(vec![Op::Load, Op::Store, Op::Atomic]);
    let width = prop::sample::select(vec![1u32, 2, 4, 8, 16]);
    let stride = prop_oneof![
        4 => prop::sample::select(vec![0i64, 1, 2, 4, 8, -4, -8, 12, 128, 16384, -16384]),
        1 => prop::sample::select(vec![1i64 << 27, -(1 << 27), 1 << 33, i64::MIN]),
        1 => any::<i64>(),
    ];
    let mask = prop_oneof![
        3 => Just(u32::MAX),
        1 => any::<u32>(),
        1 => (0u32..32).prop_map(|l| 1 << l),
        1 => (0u32..32).prop_map(|n| u32::MAX >> n),
        1 => Just(0x5555_5555u32),
    ];
    (0usize..3, space, op, width, any::<bool>(), stride, mask)
}

/// A stream of accesses, each of one of a few patterns (so that rows see their patterns
/// again and switch between them) at a random start: few bases 256 bytes apart (shapes
/// repeat at shifted bases), misaligned starts, or anywhere (lanes 4 GiB apart or
/// wrapping); maybe one lane moved (not affine); its form worked out or not.
fn stream() -> impl Strategy<Value = Vec<(usize, WarpAccess)>> {
    let first = prop_oneof![
        4 => (0u64..4, prop::sample::select(vec![0u64, 1, 2, 4, 12, 130, 252]))
            .prop_map(|(k, off)| (1 << 40) + 256 * k + off),
        1 => any::<u64>(),
    ];
    let moved = prop_oneof![4 => Just(None), 1 => (0usize..WARP_SIZE, -64i64..64).prop_map(Some)];
    let one = (0usize..8, first, moved, any::<bool>());
    (
        prop::collection::vec(pattern(), 1..5),
        prop::collection::vec(one, 1..200),
    )
        .prop_map(|(patterns, picks)| {
            picks
                .into_iter()
                .map(|(p, first, moved, settled)| {
                    let (site, space, op, width, read_only, stride, mask) =
                        patterns[p % patterns.len()];
                    let mut addrs: [u64; WARP_SIZE] = std::array::from_fn(|l| {
                        first.wrapping_add((l as u64).wrapping_mul(stride as u64))
                    });
                    if let Some((l, d)) = moved {
                        addrs[l] = addrs[l].wrapping_add_signed(d);
                    }
                    let mut a = WarpAccess {
                        space,
                        op,
                        width,
                        mask,
                        addrs,
                        read_only: read_only && space == Space::Global,
                        lanes: LaneForm::Unknown,
                    };
                    if settled {
                        a.settle_lanes();
                    }
                    (site, a)
                })
                .collect()
        })
}

fn sites() -> Vec<SiteInfo> {
    (0..3)
        .map(|i| SiteInfo {
            line: i + 1,
            column: 1,
            text: format!("s{i}"),
            op: Op::Load,
            read_only: false,
            file: None,
            ptx: None,
            ptx_line: None,
        })
        .collect()
}

fn header() -> Header {
    Header {
        kernel: "k".into(),
        source: "k.cu".into(),
        grid: [1, 1, 1],
        block: [32, 1, 1],
        local_arrays: Vec::new(),
        notes: Vec::new(),
    }
}

fn report(agg: Aggregator) -> String {
    serde_json::to_string(&agg.finish(header(), &sites())).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    #[test]
    fn affine_keys_tally_as_costing_every_access(
        stream in stream(),
        cut in 0usize..200,
    ) {
        let archs = warpscope_model::arch::parse_list(ARCHS).unwrap();
        let config = Config::default();
        let mut agg = Aggregator::new(archs.clone(), config);
        for (s, a) in &stream {
            agg.add(*s, a);
        }
        let row_of = |agg: &Aggregator, s: usize, a: &WarpAccess| {
            agg.rows[&RowKey { site: s, space: a.space, width: a.width }]
        };
        // One tally per distinct (row, shape): the compact keys split and merge nothing.
        let mut shapes = std::collections::HashSet::new();
        for (s, a) in &stream {
            if let Some(shape) = Shape::of(a) {
                shapes.insert((row_of(&agg, *s, a), shape));
            }
        }
        prop_assert_eq!(agg.tallies.len(), shapes.len());
        // Lane strides and start offsets as recorded access by access.
        let mut strides = vec![LaneStrides::default(); agg.keys.len()];
        let mut starts = vec![0u128; agg.keys.len()];
        for (s, a) in &stream {
            let row = row_of(&agg, *s, a);
            strides[row].record(a);
            if let Some((_, x)) = a.active().next() {
                starts[row] |= 1 << (x % 128);
            }
        }
        prop_assert_eq!(&agg.strides, &strides);
        prop_assert_eq!(&agg.start_offsets, &starts);
        // The same report with no form worked out, and summed in two parts and merged.
        let mut unknown = Aggregator::new(archs.clone(), config);
        let (mut head, mut tail) =
            (Aggregator::new(archs.clone(), config), Aggregator::new(archs.clone(), config));
        let cut = cut.min(stream.len());
        for (i, (s, a)) in stream.iter().enumerate() {
            unknown.add(*s, &WarpAccess { lanes: LaneForm::Unknown, ..*a });
            if i < cut { head.add(*s, a) } else { tail.add(*s, a) }
        }
        head.merge(tail);
        // Sums and the first costliest access per row, as costing each access one by one.
        agg.settle();
        for (i, arch) in archs.iter().enumerate() {
            let mut totals = vec![Cost::default(); agg.keys.len()];
            let mut worst: Vec<Option<(u64, usize)>> = vec![None; agg.keys.len()];
            for (seq, (s, a)) in stream.iter().enumerate() {
                let row = row_of(&agg, *s, a);
                let c = cost(arch, &config, a);
                totals[row].add(&c);
                let w = weight(&c, a.space);
                if worst[row].is_none_or(|(x, _)| w > x) {
                    worst[row] = Some((w, seq));
                }
            }
            prop_assert_eq!(&agg.totals[i], &totals, "CC {}", arch.cc);
            for (row, w) in worst.iter().enumerate() {
                let got = agg.worst[i][row].map(|w| (w.weight, w.seq as usize));
                prop_assert_eq!(got, *w, "CC {} row {}", arch.cc, row);
                prop_assert_eq!(agg.worst[i][row].unwrap().access, stream[w.unwrap().1].1);
            }
        }
        let one = report(agg);
        prop_assert_eq!(&one, &report(unknown));
        prop_assert_eq!(&one, &report(head));
    }
}

/// The transpose's store (lanes 16 KiB apart, ascending or descending): one compact key
/// per shape, found again 256 bytes on, and a different one 4 bytes on.
#[test]
fn strided_lanes_key_by_lowest_offset_and_stride() {
    let at = |first: u64, stride: i64| {
        let mut a = WarpAccess {
            space: Space::Global,
            op: Op::Store,
            width: 4,
            mask: u32::MAX,
            addrs: std::array::from_fn(|l| first.wrapping_add_signed(stride * l as i64)),
            read_only: false,
            lanes: LaneForm::Unknown,
        };
        a.settle_lanes();
        a
    };
    let shape = |a: &WarpAccess| match a.lane_form() {
        LaneForm::Affine { stride } => AffineShape::of(a, stride),
        _ => panic!("not affine"),
    };
    let key = |a: &WarpAccess| shape(a).map(|k| (k.low, k.lanes.stride)).unwrap();
    let up = at((1 << 40) + 4, 16384);
    assert_eq!(key(&up), (4, 16384));
    assert!(shape(&up) == shape(&at((1 << 40) + 4 + 256 * 9, 16384)));
    assert!(shape(&up) != shape(&at((1 << 40) + 8, 16384)));
    // Descending: the lowest lane is the last.
    let down = at((1 << 40) + 31 * 16384 + 4, -16384);
    assert_eq!(key(&down), (4, -16384));
    // Lanes 4 GiB apart or more have no shape, as Shape::of says.
    assert!(shape(&at(1 << 40, 1 << 28)).is_none());
    assert!(Shape::of(&at(1 << 40, 1 << 28)).is_none());
}
