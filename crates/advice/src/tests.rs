use super::*;
use warpscope_model::arch::lookup;
use warpscope_model::LaneForm;

fn arch(s: &str) -> &'static Arch {
    lookup(s.parse().unwrap()).unwrap()
}

fn access(space: Space, width: u32, f: impl Fn(u64) -> u64) -> WarpAccess {
    WarpAccess {
        space,
        op: Op::Load,
        width,
        mask: u32::MAX,
        addrs: std::array::from_fn(|l| f(l as u64)),
        read_only: false,
        lanes: LaneForm::Unknown,
    }
}

fn after(cc: &str, f: &Finding) -> Cost {
    cost(arch(cc), &Config::default(), f.fixed.as_ref().unwrap())
}

#[test]
fn coalesced_access_needs_no_advice() {
    let a = access(Space::Global, 4, |l| 4096 + 4 * l);
    for cc in ["1.0", "1.3", "2.0", "3.5", "9.0"] {
        assert!(diagnose(&SiteFacts::default(), arch(cc), &Config::default(), &a).is_empty());
    }
}

fn only(cc: &str, text: &str, a: &WarpAccess) -> Vec<Finding> {
    let facts = SiteFacts {
        text,
        start_offsets: 1,
        ..Default::default()
    };
    diagnose(&facts, arch(cc), &Config::default(), a)
}

#[test]
fn harris_offset_one_is_a_misaligned_start_costing_one_more_sector() {
    // Harris's offset kernel, s = 1: floats from byte 4 of a line [seed 003].
    let a = access(Space::Global, 4, |l| 4 + 4 * l);
    let f = only("9.0", "a[i]", &a);
    assert_eq!(f.len(), 1);
    assert_eq!(f[0].cause, Cause::MisalignedStart { offset_bytes: 4 });
    assert_eq!(cost(arch("9.0"), &Config::default(), &a).sectors, 5);
    assert_eq!(after("9.0", &f[0]).sectors, 4);
    // 1.0/1.1: misaligned half-warps are not coalesced at all: 16 transactions each.
    let f = only("1.0", "a[i]", &a);
    assert_eq!(cost(arch("1.0"), &Config::default(), &a).transactions, 32);
    assert_eq!(after("1.0", &f[0]).transactions, 2);
}

#[test]
fn varying_row_alignment_of_a_2d_index_is_a_pitch_problem() {
    let a = access(Space::Global, 4, |l| 4 * 1001 + 4 * l);
    let facts = SiteFacts {
        text: "a[y * width + x]",
        start_offsets: 0b1_0001,
        ..Default::default()
    };
    let f = diagnose(&facts, arch("9.0"), &Config::default(), &a);
    assert_eq!(f[0].cause, Cause::RowPitch);
    assert_eq!(after("9.0", &f[0]).sectors, 4);
}

#[test]
fn field_of_16_byte_structure_is_aos_with_soa_and_vector_fixes() {
    // Seed 001's struct { int index; double value; }: 16 bytes, `index` at offset 0.
    let a = access(Space::Global, 4, |l| 16 * l);
    let f = only("9.0", "myData[idx].index", &a);
    assert_eq!(f[0].cause, Cause::ArrayOfStructures { struct_bytes: 16 });
    assert_eq!(cost(arch("9.0"), &Config::default(), &a).sectors, 16);
    assert_eq!(after("9.0", &f[0]).sectors, 4);
    assert_eq!(
        f[1].cause,
        Cause::VectorWidth {
            elements: 4,
            vector_bytes: 16
        }
    );
    // One 16-byte load per lane: 512 bytes, 16 sectors, all of them used.
    let v = after("9.0", &f[1]);
    assert_eq!((v.sectors, v.efficiency()), (16, Some(1.0)));
}

#[test]
fn plain_stride_is_not_offered_a_vector_type() {
    let a = access(Space::Global, 4, |l| 8 * l);
    let f = only("9.0", "a[i * s]", &a);
    assert_eq!(f.len(), 1);
    assert_eq!(
        f[0].cause,
        Cause::Stride {
            elements: 2,
            bytes: 8
        }
    );
    assert_eq!(
        (
            cost(arch("9.0"), &Config::default(), &a).sectors,
            after("9.0", &f[0]).sectors
        ),
        (8, 4)
    );
}

#[test]
fn row_stride_of_a_2d_array_is_a_column_walk() {
    let a = access(Space::Global, 4, |l| 4096 * l);
    let f = only("9.0", "in[threadIdx.x][k]", &a);
    assert_eq!(f[0].cause, Cause::ColumnWalk { row_bytes: 4096 });
    assert_eq!(cost(arch("9.0"), &Config::default(), &a).sectors, 32);
    assert_eq!(after("9.0", &f[0]).sectors, 4);
}

#[test]
fn shared_stride_32_words_is_32_way_and_padding_removes_it() {
    // t[threadIdx.x][c] of float t[32][32]: 32 words apart, all in one bank.
    let a = access(Space::Shared, 4, |l| 128 * l);
    let f = only("9.0", "t[threadIdx.x][c]", &a);
    assert_eq!(
        f[0].cause,
        Cause::BankStride {
            words: 32,
            common_factor: 32,
            banks: 32
        }
    );
    assert_eq!(cost(arch("9.0"), &Config::default(), &a).wavefronts, 32);
    assert_eq!(after("9.0", &f[0]).wavefronts, 1);
    // 1.x: 16 banks, two half-warps of 16-way conflicts.
    let f = only("1.3", "t[threadIdx.x][c]", &a);
    assert_eq!(cost(arch("1.3"), &Config::default(), &a).wavefronts, 32);
    assert_eq!(after("1.3", &f[0]).wavefronts, 2);
}

#[test]
fn shared_stride_2_words_is_2_way() {
    let a = access(Space::Shared, 4, |l| 8 * l);
    let f = only("9.0", "s[2 * threadIdx.x]", &a);
    assert_eq!(
        f[0].cause,
        Cause::BankStride {
            words: 2,
            common_factor: 2,
            banks: 32
        }
    );
    assert_eq!(cost(arch("9.0"), &Config::default(), &a).wavefronts, 2);
    assert_eq!(after("9.0", &f[0]).wavefronts, 1);
}

#[test]
fn byte_shared_accesses_conflict_on_1x_only() {
    let mut a = access(Space::Shared, 1, |l| l);
    a.op = Op::Store;
    let f = only("1.3", "c[threadIdx.x]", &a);
    assert_eq!(f[0].cause, Cause::NarrowSharedOn1x { width: 1 });
    // Stores: 4 lanes on each word, so 4 passes per half-warp; 32-bit words: 1.
    assert_eq!(cost(arch("1.3"), &Config::default(), &a).wavefronts, 8);
    assert_eq!(after("1.3", &f[0]).wavefronts, 2);
    assert!(only("9.0", "c[threadIdx.x]", &a).is_empty());
}

#[test]
fn divergent_constant_reads_serialize() {
    let a = access(Space::Constant, 4, |l| 4 * (l % 4));
    let f = only("9.0", "coef[threadIdx.x % 4]", &a);
    assert_eq!(f[0].cause, Cause::DivergentConstant { addresses: 4 });
    assert_eq!(cost(arch("9.0"), &Config::default(), &a).requests, 4);
    let g = after("9.0", &f[0]);
    assert_eq!((g.requests, g.sectors), (1, 1));
    // A broadcast (every lane on one address) is what constant memory is for.
    let b = access(Space::Constant, 4, |_| 8);
    assert!(only("9.0", "coef[0]", &b).is_empty());
}

// ---- Per-warp layouts: 2-D blocks narrower than a warp, AoS, padding, no __ldg on stores.

/// Warp `warp` of a block `bx`×`by` (threads numbered x fastest, 32 per warp): lane *l* is
/// thread (tx, ty) = (t % bx, t / bx) with t = 32·warp + l, at `base + f(tx, ty)`; lanes past
/// the block's last thread are inactive.
fn block_access(
    space: Space,
    op: Op,
    width: u32,
    block: (u64, u64),
    warp: u64,
    f: impl Fn(u64, u64) -> u64,
) -> WarpAccess {
    let (bx, by) = block;
    let base = if space == Space::Shared { 0 } else { 1 << 20 };
    let mut a = WarpAccess {
        space,
        op,
        width,
        mask: 0,
        addrs: [0; 32],
        read_only: false,
        lanes: LaneForm::Unknown,
    };
    for l in 0..32u64 {
        let t = 32 * warp + l;
        if t < bx * by {
            a.mask |= 1 << l;
            a.addrs[l as usize] = base + f(t % bx, t / bx);
        }
    }
    a
}

fn costs(cc: &str, a: &WarpAccess) -> Cost {
    cost(arch(cc), &Config::default(), a)
}

fn causes(f: &[Finding]) -> Vec<Cause> {
    f.iter().map(|x| x.cause).collect()
}

#[test]
fn rows_of_a_16x16_block_at_four_sectors_get_no_advice() {
    // a[(by*16 + ty)*1024 + bx*16 + tx], block 16×16: each warp reads 2 half-rows of 16
    // floats, 64 bytes each, 4096 bytes apart.
    let row = |op| block_access(Space::Global, op, 4, (16, 16), 0, |x, y| 4 * (y * 1024 + x));
    let a = row(Op::Load);
    assert_eq!(
        Layout::of(&a),
        Some(Layout {
            row_lanes: 16,
            phase: 0,
            rows: 2,
            origin: 1 << 20,
            inner: 4,
            outer: 4096
        })
    );
    // 7.0/9.0: 2 aligned 64-byte pieces = 4 sectors for 128 bytes, 100 %: the minimum.
    for cc in ["7.0", "9.0"] {
        let c = costs(cc, &a);
        assert_eq!((c.requests, c.sectors, c.efficiency()), (1, 4, Some(1.0)));
    }
    for op in [Op::Load, Op::Store] {
        for cc in ["1.0", "1.3", "3.0", "3.5", "5.0", "7.0", "8.6", "9.0"] {
            assert!(
                only(cc, "a[y * 1024 + x]", &row(op)).is_empty(),
                "{cc} {op:?}"
            );
        }
    }
    // 2.0 stores go to L2 in 32-byte segments: 4 of them, 100 %.
    assert_eq!(costs("2.0", &row(Op::Store)).transaction_bytes, 128);
    assert!(only("2.0", "a[y * 1024 + x]", &row(Op::Store)).is_empty());
    // 2.0 loads through L1 fetch a 128-byte line per half-row: 2 lines, 50 %. The cause is
    // the block's width, not scattering; the fix (a 32-wide block) is 1 line.
    let c = costs("2.0", &a);
    assert_eq!((c.transactions, c.transaction_bytes), (2, 256));
    let f = only("2.0", "a[y * 1024 + x]", &a);
    assert_eq!(
        causes(&f),
        [Cause::NarrowRows {
            rows: 2,
            row_lanes: 16
        }]
    );
    let g = after("2.0", &f[0]);
    assert_eq!((g.transactions, g.transaction_bytes), (1, 128));
    assert!(f[0].fix.contains("-dlcm=cg") && !f[0].fix.contains("__ldg"));
    // With -dlcm=cg the same load is at its minimum.
    let cg = Config {
        l1: warpscope_model::L1Mode::Cg,
        ..Config::default()
    };
    let facts = SiteFacts {
        text: "a[y * 1024 + x]",
        start_offsets: 1,
        ..Default::default()
    };
    assert!(diagnose(&facts, arch("2.0"), &cg, &a).is_empty());
}

#[test]
fn rows_of_4_threads_fill_half_a_sector() {
    // Block 4×8: each warp reads 8 rows of 4 floats (16 bytes), 4096 bytes apart: 8 sectors
    // for 128 bytes on 9.0 (50 %), where one row of 32 would take 4.
    let a = block_access(Space::Global, Op::Load, 4, (4, 8), 0, |x, y| {
        4 * (y * 1024 + x)
    });
    assert_eq!(costs("9.0", &a).sectors, 8);
    let f = only("9.0", "a[y * 1024 + x]", &a);
    assert_eq!(
        causes(&f),
        [Cause::NarrowRows {
            rows: 8,
            row_lanes: 4
        }]
    );
    assert_eq!(after("9.0", &f[0]).sectors, 4);
    assert!(!f[0].fix.contains("dlcm"), "no L1 lines on 9.0");
}

#[test]
fn rows_of_a_16x16_block_one_element_off_are_a_misaligned_start() {
    // a[… + x + 1]: each 64-byte half-row starts 4 bytes into a sector, so it touches 3.
    let a = block_access(Space::Global, Op::Load, 4, (16, 16), 0, |x, y| {
        4 * (y * 1024 + x + 1)
    });
    assert_eq!(costs("9.0", &a).sectors, 6);
    let f = only("9.0", "a[y * 1024 + x + 1]", &a);
    assert_eq!(causes(&f), [Cause::MisalignedStart { offset_bytes: 4 }]);
    assert_eq!(after("9.0", &f[0]).sectors, 4);
}

#[test]
fn rows_of_a_16x16_block_with_an_odd_pitch_are_a_pitch_problem() {
    // Pitch 1001 floats: row 0 at 0, row 1 at 4004 (36 bytes past a 64-byte boundary): 2 + 3
    // sectors; padded rows take 2 + 2.
    let a = block_access(Space::Global, Op::Load, 4, (16, 16), 0, |x, y| {
        4 * (y * 1001 + x)
    });
    assert_eq!(costs("9.0", &a).sectors, 5);
    let f = only("9.0", "a[y * width + x]", &a);
    assert_eq!(causes(&f), [Cause::RowPitch]);
    assert_eq!(after("9.0", &f[0]).sectors, 4);
}

#[test]
fn column_walk_of_a_16x16_block_swaps_indices() {
    // a[(bx*16 + tx)*1024 + by*16 + ty]: each warp walks down 2 neighbouring columns; lanes
    // l and l + 16 share a sector, so 16 sectors for 128 bytes on 9.0 (25 %).
    let a = block_access(Space::Global, Op::Load, 4, (16, 16), 0, |x, y| {
        4 * (x * 1024 + y)
    });
    let lay = Layout::of(&a).unwrap();
    assert_eq!(
        (lay.row_lanes, lay.rows, lay.inner, lay.outer),
        (16, 2, 4096, 4)
    );
    let c = costs("9.0", &a);
    assert_eq!((c.sectors, c.efficiency()), (16, Some(0.25)));
    let f = only("9.0", "a[x * 1024 + y]", &a);
    assert_eq!(causes(&f), [Cause::ColumnWalk { row_bytes: 4096 }]);
    // Swapped: 2 half-rows of 64 bytes = 4 sectors.
    assert_eq!(after("9.0", &f[0]).sectors, 4);
    // 2.0 (L1 lines): 16 lines → 2; 1.3: 16 32-byte transactions per half-warp → 1 of 64.
    let f = only("2.0", "a[x * 1024 + y]", &a);
    assert_eq!(
        (
            costs("2.0", &a).transactions,
            after("2.0", &f[0]).transactions
        ),
        (16, 2)
    );
    let f = only("1.3", "a[x * 1024 + y]", &a);
    assert_eq!(
        (
            costs("1.3", &a).transactions,
            after("1.3", &f[0]).transactions
        ),
        (32, 2)
    );
    assert!(f.iter().all(|x| x.cause != Cause::Scattered));
}

#[test]
fn float3_array_gets_structure_of_arrays_and_padding_to_float4() {
    // float3 p = pos[i]: 3 loads of 4 bytes, lanes 12 bytes apart. 9.0: 32 × 12 = 384 bytes
    // = 12 sectors for 128 bytes (33 %).
    for (text, op) in [
        ("float3 p = pos[i];", Op::Load),
        ("p[i].x", Op::Load),
        ("a[3 * i]", Op::Load),
        ("pos[i] = p;", Op::Store),
    ] {
        let mut a = access(Space::Global, 4, |l| 12 * l);
        a.op = op;
        let c = costs("9.0", &a);
        assert_eq!((c.sectors, c.bytes_requested), (12, 128));
        let f = only("9.0", text, &a);
        assert_eq!(
            causes(&f),
            [
                Cause::ArrayOfStructures { struct_bytes: 12 },
                Cause::PadStructure {
                    struct_bytes: 12,
                    padded_bytes: 16
                }
            ],
            "{text}"
        );
        // Structure of arrays: 32 consecutive floats, 4 sectors.
        let soa = after("9.0", &f[0]);
        assert_eq!((soa.sectors, soa.efficiency()), (4, Some(1.0)));
        // float4: one 16-byte access per lane, 512 bytes = 16 sectors, replacing 3 × 12 = 36.
        let pad = after("9.0", &f[1]);
        assert_eq!(f[1].fixed.unwrap().width, 16);
        assert_eq!((pad.sectors, pad.bytes_requested), (16, 512));
        assert!(pad.sectors < 3 * c.sectors);
        assert!(f[1].fix.contains("float4"));
        assert!(f[1].fix.contains(if op == Op::Load {
            "load each"
        } else {
            "store each"
        }));
        assert!(f.iter().all(|x| !x.fix.contains("__ldg")));
    }
    // 2.0 (L1 lines): 3 lines → SoA 1 line; float4: 4 quarter-warp requests of one line.
    let a = access(Space::Global, 4, |l| 12 * l);
    let f = only("2.0", "float3 p = pos[i];", &a);
    assert_eq!(costs("2.0", &a).transactions, 3);
    assert_eq!(after("2.0", &f[0]).transactions, 1);
    let pad = after("2.0", &f[1]);
    assert_eq!((pad.requests, pad.transactions), (4, 4));
}

#[test]
fn rgb_pixels_pad_to_uchar4() {
    // uchar3 pixels: bytes 3 apart; 96 bytes = 3 sectors + 1 where 32 bytes would do.
    let a = access(Space::Global, 1, |l| 3 * l);
    assert_eq!(costs("9.0", &a).sectors, 3);
    let f = only("9.0", "img[i].r", &a);
    assert_eq!(
        causes(&f),
        [
            Cause::ArrayOfStructures { struct_bytes: 3 },
            Cause::PadStructure {
                struct_bytes: 3,
                padded_bytes: 4
            }
        ]
    );
    assert_eq!(after("9.0", &f[0]).sectors, 1);
    assert_eq!(after("9.0", &f[1]).sectors, 4);
    assert!(f[1].fix.contains("uchar4"));
}

#[test]
fn shared_column_walk_of_a_16x16_block_pads_rows_first() {
    // __shared__ float t[16][16]; t[tx][ty], block 16×16: words 16·tx + ty. 9.0: each
    // column's 16 lanes land on banks 0 and 16 (ty = 0) or 1 and 17: 8 wavefronts.
    let tile = |pitch: u64| {
        block_access(Space::Shared, Op::Load, 4, (16, 16), 0, move |x, y| {
            4 * (x * pitch + y)
        })
    };
    let a = tile(16);
    assert_eq!(costs("9.0", &a).wavefronts, 8);
    // Padding checked directly: [16][17] 2 wavefronts (the warp's 2 columns meet), [16][18] 1.
    assert_eq!(costs("9.0", &tile(17)).wavefronts, 2);
    assert_eq!(costs("9.0", &tile(18)).wavefronts, 1);
    let f = only("9.0", "t[threadIdx.x][threadIdx.y]", &a);
    assert_eq!(
        causes(&f),
        [Cause::BankStride {
            words: 16,
            common_factor: 16,
            banks: 32
        }]
    );
    assert_eq!(f[0].fixed, Some(tile(18)));
    assert_eq!(after("9.0", &f[0]).wavefronts, 1);
    let fix = &f[0].fix;
    assert!(fix.contains("[N][18]") && fix.contains("[N][17], leaves 2 wavefronts"));
    assert!(fix.find("pad").unwrap() < fix.find("XOR").unwrap(), "{fix}");
    // 1.3: 16 banks per half-warp: a 16-way conflict in each, 32 passes; [16][17] is
    // conflict-free: 1 per half-warp.
    assert_eq!(costs("1.3", &a).wavefronts, 32);
    assert_eq!(costs("1.3", &tile(17)).wavefronts, 2);
    let f = only("1.3", "t[threadIdx.x][threadIdx.y]", &a);
    assert_eq!(f[0].fixed, Some(tile(17)));
    assert!(f[0].fix.contains("[N][17] instead of [N][16]"));
}

#[test]
fn shared_column_walk_of_a_32_wide_tile_pads_to_33() {
    // __shared__ float t[32][32]; t[tx][ty], block 32×8: 32 words apart, one bank: 32
    // wavefronts; [32][33]: 1.
    let a = block_access(Space::Shared, Op::Load, 4, (32, 8), 0, |x, y| {
        4 * (x * 32 + y)
    });
    assert_eq!(costs("9.0", &a).wavefronts, 32);
    let f = only("9.0", "t[threadIdx.x][threadIdx.y]", &a);
    assert!(f[0].fix.starts_with("pad each row") && f[0].fix.contains("[N][33]"));
    assert!(f[0].fix.contains("XOR"));
    assert_eq!(after("9.0", &f[0]).wavefronts, 1);
    // The row-wise read of the same tile is conflict-free: nothing to say.
    let r = block_access(Space::Shared, Op::Load, 4, (32, 8), 0, |x, y| {
        4 * (y * 32 + x)
    });
    assert!(only("9.0", "t[threadIdx.y][threadIdx.x]", &r).is_empty());
}

/// A warp whose lanes follow no stride: lane l at line (37·l mod 32) + 4·(l mod 3).
fn scattered(op: Op) -> WarpAccess {
    let mut a = access(Space::Global, 4, |l| 128 * ((37 * l) % 32) + 4 * (l % 3));
    a.op = op;
    a
}

#[test]
fn scattered_access_offers_ldg_only_to_loads_where_it_helps() {
    let a = scattered(Op::Load);
    assert_eq!(Layout::of(&a), None);
    // 9.0: 32 sectors for 128 bytes; sorting is the fix, __ldg changes no sector.
    assert_eq!(costs("9.0", &a).sectors, 32);
    let f = only("9.0", "a[idx[i]]", &a);
    assert_eq!(causes(&f), [Cause::Scattered]);
    assert!(f[0].fixed.is_none() && !f[0].fix.contains("__ldg"));
    // 3.5 with loads cached in L1 (-dlcm=ca): 32 lines of 128 bytes; through the read-only
    // cache 32 segments of 32 bytes.
    let ca = Config {
        l1: warpscope_model::L1Mode::Ca,
        ..Config::default()
    };
    let facts = SiteFacts {
        text: "a[idx[i]]",
        start_offsets: 1,
        ..Default::default()
    };
    let f = diagnose(&facts, arch("3.5"), &ca, &a);
    assert_eq!(causes(&f), [Cause::Scattered, Cause::Scattered]);
    assert!(f[1].fix.contains("__ldg"));
    assert_eq!(cost(arch("3.5"), &ca, &a).transaction_bytes, 32 * 128);
    let g = cost(arch("3.5"), &ca, f[1].fixed.as_ref().unwrap());
    assert_eq!(g.transaction_bytes, 32 * 32);
    // Stores and atomics never get the read-only path, on any CC and configuration.
    for op in [Op::Store, Op::Atomic] {
        for config in [Config::default(), ca] {
            for arch in warpscope_model::arch::all() {
                for x in diagnose(&facts, arch, &config, &scattered(op)) {
                    assert!(!x.fix.contains("__ldg") && !x.fix.contains("read-only"));
                    assert!(x.fix.contains("write"), "{}", x.fix);
                }
            }
        }
    }
}

#[test]
fn permuted_lanes_within_one_line_are_at_the_minimum() {
    // a[perm(i)] inside 32 consecutive floats: 4 sectors on 9.0, one line on 2.0: nothing.
    let a = access(Space::Global, 4, |l| 4096 + 4 * ((5 * l + 3) % 32));
    for cc in ["2.0", "3.5", "5.0", "7.0", "9.0"] {
        assert!(only(cc, "a[perm[i]]", &a).is_empty(), "{cc}");
    }
    // 1.0/1.1 coalesce only lane k on word k: 16 transactions per half-warp, so this one
    // is advice-worthy there, and not about __ldg.
    let f = only("1.0", "a[perm[i]]", &a);
    assert_eq!(costs("1.0", &a).transactions, 32);
    assert_eq!(causes(&f), [Cause::Scattered]);
    assert!(!f[0].fix.contains("__ldg"));
}

#[test]
fn layout_of_a_warp_starting_mid_row() {
    // Block 24 threads wide, warp 2: threads 64–95 = (16, 2) … (23, 2), then row 3 whole:
    // lanes 0–7 end row 2, lanes 8–31 are row 3, so rows of 24 with phase 16.
    let warp = |w| {
        block_access(Space::Global, Op::Load, 4, (24, 4), w, |x, y| {
            4 * (y * 1024 + x)
        })
    };
    let lay = Layout::of(&warp(2)).unwrap();
    assert_eq!(
        (lay.row_lanes, lay.phase, lay.rows, lay.inner, lay.outer),
        (24, 16, 2, 4, 4096)
    );
    assert_eq!((lay.coords(0), lay.coords(8)), ((16, 0), (0, 1)));
    // Warp 1 (16 lanes of row 1, 16 of row 2) is also 2 pieces of 16: the narrowest rows
    // that fit, 4064 bytes from the start of one piece to the next.
    let lay = Layout::of(&warp(1)).unwrap();
    assert_eq!(
        (lay.row_lanes, lay.phase, lay.rows, lay.inner, lay.outer),
        (16, 0, 2, 4, 4064)
    );
    // Neither is above its minimum on 9.0 (3 + 1 and 2 + 2 sectors).
    for w in [1, 2] {
        assert_eq!(costs("9.0", &warp(w)).sectors, 4);
        assert!(only("9.0", "a[y * 1024 + x]", &warp(w)).is_empty());
    }
}

fn texture_path_of(f: &[Finding]) -> Option<Cause> {
    f.iter()
        .map(|f| f.cause)
        .find(|c| matches!(c, Cause::TexturePath { .. }))
}

#[test]
fn column_walk_through_a_texture_takes_half_the_sectors() {
    // in[threadIdx.x][k] with 4096-byte rows: 32 sectors in 1 request on 9.0. As texels
    // (0, l) of a CUDA array: each quad reads rows 4q..4q+3 of one column = two 16 B × 2-row
    // sectors: 8 requests, 16 sectors.
    let a = access(Space::Global, 4, |l| 4096 * l);
    let f = only("9.0", "in[threadIdx.x][k]", &a);
    assert_eq!(
        texture_path_of(&f),
        Some(Cause::TexturePath {
            global_requests: 1,
            global_sectors: 32,
            texture_requests: 8,
            texture_sectors: 16,
        })
    );
    let t = f
        .iter()
        .find(|f| matches!(f.cause, Cause::TexturePath { .. }))
        .unwrap();
    assert!(t.fixed.is_none());
    // __ldg on 9.0 goes through the same 32-byte sectors: no better.
    assert!(
        t.why.contains("__ldg does not help here (32 sectors"),
        "{}",
        t.why
    );
    // The swap of indices stays the first fix.
    assert_eq!(f[0].cause, Cause::ColumnWalk { row_bytes: 4096 });
}

#[test]
fn rows_of_a_2x16_block_through_a_texture_take_8_sectors_not_16() {
    // a[y * 1024 + x] with a 2×16 block: 16 rows of 8 bytes, one sector each (16 on 9.0).
    // Texture: quad q holds rows 2q, 2q+1 of x 0–1 = one 16 B × 2-row sector: 8 and 8.
    let a = block_access(Space::Global, Op::Load, 4, (2, 16), 0, |x, y| {
        4 * (y * 1024 + x)
    });
    assert_eq!(costs("9.0", &a).sectors, 16);
    let f = only("9.0", "a[y * 1024 + x]", &a);
    assert_eq!(
        texture_path_of(&f),
        Some(Cause::TexturePath {
            global_requests: 1,
            global_sectors: 16,
            texture_requests: 8,
            texture_sectors: 8,
        })
    );
}

#[test]
fn texture_is_not_advised_where_it_fetches_more() {
    // conv_global with 16×16 blocks, dx = 2: 2 half-rows of 64 bytes from 8 bytes into a
    // sector, 3 sectors each (6); a texture would take 8 requests of 2 sectors (texels
    // 2–5 straddle two 4-texel sectors): 16 — the H100 measured conv_texture slower.
    let a = block_access(Space::Global, Op::Load, 4, (16, 16), 0, |x, y| {
        4 * (y * 1024 + x + 2)
    });
    assert_eq!(costs("9.0", &a).sectors, 6);
    let f = only("9.0", "img[yy * w + xx]", &a);
    assert_eq!(texture_path_of(&f), None);
    assert_eq!(
        memory::texture_path(arch("9.0"), &Config::default(), &a, 4096),
        None
    );
    // 2 neighbouring columns of 16 rows (a 16×16 column walk): 16 sectors either way.
    let a = block_access(Space::Global, Op::Load, 4, (16, 16), 0, |x, y| {
        4 * (x * 1024 + y)
    });
    assert_eq!(texture_path_of(&only("9.0", "a[x * 1024 + y]", &a)), None);
    // A store never goes through a texture.
    let mut s = access(Space::Global, 4, |l| 4096 * l);
    s.op = Op::Store;
    assert_eq!(
        texture_path_of(&only("9.0", "out[threadIdx.x][k]", &s)),
        None
    );
}

#[test]
fn neutral_verbs_word_a_finding_for_loads_and_stores() {
    assert_eq!(
        neutral_verbs("consecutive lanes read consecutive elements; reads, writes, written"),
        "consecutive lanes access consecutive elements; accesses, accesses, accessed"
    );
    assert_eq!(
        neutral_verbs("load each element (the read-only cache: __ldg), reread"),
        "load or store each element (the read-only cache: __ldg), reread"
    );
}

// ---- Issue 19 §3: the fix a CUDA engineer would pick.

/// The strides a site showed: one warp per stride in `bytes`, starting at `starts`.
fn history(strides: &[u64], starts: &[u64]) -> LaneStrides {
    let mut h = LaneStrides::default();
    for &d in strides {
        for &s in starts {
            h.record(&access(Space::Global, 4, |l| (1 << 20) + s + d * l));
        }
    }
    h
}

#[test]
fn interleaved_reduction_gets_sequential_addressing_not_padding() {
    // Harris's reduction 2, index = 2*s*tid, at s = 4: lanes 8 floats apart; the site's
    // warps ran s = 1 … 128, strides of 8 … 1024 bytes.
    let a = access(Space::Shared, 4, |l| 32 * l);
    let facts = SiteFacts {
        text: "sdata[index]",
        strides: history(&[8, 16, 32, 64, 128, 256, 512, 1024], &[0]),
        ..Default::default()
    };
    for (cc, before, after) in [("9.0", 8, 1), ("1.3", 16, 2), ("3.5", 4, 1)] {
        let f = diagnose(&facts, arch(cc), &Config::default(), &a);
        assert_eq!(
            causes(&f),
            [Cause::InterleavedReduction {
                elements: 8,
                bytes: 32
            }],
            "{cc}"
        );
        assert!(
            f[0].fix.starts_with("use sequential addressing"),
            "{}",
            f[0].fix
        );
        assert!(f[0]
            .fix
            .contains("for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) { if (tid < s) sdata[tid] += sdata[tid + s];"));
        assert!(f[0]
            .why
            .contains("lanes 2, 4, 8, 16, 32, 64, 128 and 256 elements apart"));
        assert_eq!(
            (costs(cc, &a).wavefronts, after_of(cc, &f[0]).wavefronts),
            (before, after),
            "{cc}"
        );
    }
    // One stride only (a fixed stride, not a reduction): padding, as before.
    let facts = SiteFacts {
        text: "sdata[8 * tid]",
        strides: history(&[32], &[0]),
        ..Default::default()
    };
    let f = diagnose(&facts, arch("9.0"), &Config::default(), &a);
    assert!(matches!(f[0].cause, Cause::BankStride { .. }), "{f:?}");
}

/// The cost of `f`'s fixed access on `cc`, under the configuration the fix sets.
fn after_of(cc: &str, f: &Finding) -> Cost {
    cost(
        arch(cc),
        &f.fixed_config.unwrap_or_default(),
        f.fixed.as_ref().unwrap(),
    )
}

#[test]
fn doubles_on_3x_get_the_8_byte_bank_mode_before_any_rewrite() {
    // double tile[32][33] read down a column: lane l at 8·33·l. 3.5 in 4-byte mode: words
    // 66·l and 66·l + 1 put lanes l and l + 16 on one bank: 2 wavefronts; 8-byte mode: 1.
    let padded = access(Space::Shared, 8, |l| 264 * l);
    let f = only("3.5", "tile[threadIdx.x][threadIdx.y]", &padded);
    assert_eq!(causes(&f), [Cause::EightByteBanks { width: 8 }]);
    assert!(f[0]
        .fix
        .starts_with("set 8-byte banks before the launch: cudaDeviceSetSharedMemConfig(cudaSharedMemBankSizeEightByte)"));
    assert_eq!(f[0].fixed, Some(padded));
    assert_eq!(
        (
            costs("3.5", &padded).wavefronts,
            after_of("3.5", &f[0]).wavefronts
        ),
        (2, 1)
    );
    // From 5.x on a double is served per half-warp: 2 wavefronts, the minimum.
    assert!(only("9.0", "tile[threadIdx.x][threadIdx.y]", &padded).is_empty());
    // Unpadded, tile[32][32]: the mode alone changes nothing (32 either way); padding
    // first (32 → 2), then the mode on top of it (→ 1).
    let unpadded = access(Space::Shared, 8, |l| 256 * l);
    let f = only("3.5", "tile[threadIdx.x][threadIdx.y]", &unpadded);
    assert!(matches!(f[0].cause, Cause::BankStride { .. }), "{f:?}");
    assert!(f[0].fix.contains("declare [N][33] instead of [N][32]"));
    assert_eq!(f[1].cause, Cause::EightByteBanks { width: 8 });
    assert_eq!(f[1].fixed, f[0].fixed);
    assert_eq!(
        (
            costs("3.5", &unpadded).wavefronts,
            after_of("3.5", &f[0]).wavefronts,
            after_of("3.5", &f[1]).wavefronts
        ),
        (32, 2, 1)
    );
    // Already in 8-byte mode: nothing about the mode.
    let eight = Config {
        smem_bank_mode: warpscope_model::SmemBankMode::EightByte,
        ..Config::default()
    };
    let facts = SiteFacts::default();
    assert!(diagnose(&facts, arch("3.5"), &eight, &padded).is_empty());
}

#[test]
fn a_1d_stride_is_strided_access_and_a_loop_over_columns_a_column_walk() {
    // Lanes 128 bytes apart: `in[i * stride]` with stride 32, or row `i` of a 32-float
    // matrix. The warps of a strided read all start at one offset within the stride.
    let a = access(Space::Global, 4, |l| (1 << 20) + 128 * l);
    for text in ["in[i * stride]", "out[i] = in[i * 32];", "a[row * n + k]"] {
        let facts = SiteFacts {
            text,
            start_offsets: 1,
            strides: history(&[128], &[0]),
        };
        let f = diagnose(&facts, arch("9.0"), &Config::default(), &a);
        assert_eq!(
            causes(&f),
            [Cause::Stride {
                elements: 32,
                bytes: 128
            }],
            "{text}"
        );
        assert!(f[0]
            .fix
            .starts_with("restructure so that consecutive threads read consecutive elements"));
        assert!(f[0].fix.contains("stage the data through shared memory"));
        assert!(!f[0].why.contains('%'), "{}", f[0].why);
        assert_eq!(
            (costs("9.0", &a).sectors, after("9.0", &f[0]).sectors),
            (32, 4)
        );
    }
    // A loop over the columns (`a[row * n + k]`, k = 0 … 31): the warps start at every
    // column; two subscripts say 2-D by themselves.
    let facts = SiteFacts {
        text: "a[row * n + k]",
        start_offsets: 1,
        strides: history(&[128], &[0, 4, 8, 12]),
    };
    let f = diagnose(&facts, arch("9.0"), &Config::default(), &a);
    assert_eq!(f[0].cause, Cause::ColumnWalk { row_bytes: 128 });
    assert!(f[0].why.contains("read the other columns too"));
    let f = only("9.0", "in[threadIdx.x][k]", &a);
    assert_eq!(f[0].cause, Cause::ColumnWalk { row_bytes: 128 });
}
