use super::*;
use warpscope_model::arch::lookup;

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
