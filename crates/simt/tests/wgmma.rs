//! `wgmma.mma_async` (Hopper warpgroup MMA): D lane by lane for known matrices in every
//! supported type, A and B from shared memory through hand-built matrix descriptors in the
//! canonical layouts (no swizzle, 32B, 64B, 128B, MN-major) or A from registers; the
//! shared-memory reads reported at the wgmma's site, costed on compute capability 9.0; the
//! H100's own counts for the kernel of `tests/data/h100/wgmma/` (its PTX analyzed here, its
//! Nsight Compute CSV read here); and malformed instructions or descriptors named in errors.
//!
//! D is read back with probes: `st.global.u8 [p0 + bits]` stores at an address that is the
//! register's bits, so the access's lane addresses are the values.

use warpscope_model::{arch, ComputeCapability, Config, Cost, Op, Space, WarpAccess};
use warpscope_simt::decode::window;
use warpscope_simt::{Alloc, Error, Launch, Program, WarpOrigin};

/// Bytes of the test kernels' shared memory: A's region at 0, B's at [`B_REGION`].
const SMEM: usize = 49152;
const B_REGION: u64 = 16384;

/// A descriptor's layout: swizzle mode as the descriptor encodes it (0 none, 1 128B, 2 64B,
/// 3 32B), M-/N-major (`imm-trans` 1), LBO and SBO in bytes.
#[derive(Clone, Copy, Debug)]
struct Lay {
    mode: u64,
    mn_major: bool,
    lbo: u64,
    sbo: u64,
}

/// The packed no-swizzle K-major layout: core matrices of 8 rows × 16 bytes, K neighbours
/// 128 bytes apart, 8-row groups 256 apart.
const NONE: Lay = Lay {
    mode: 0,
    mn_major: false,
    lbo: 128,
    sbo: 256,
};
/// 128B swizzle, K-major: rows 128 bytes apart, 8-row groups 1024 apart (CUTLASS's/TMA's).
const SW128: Lay = Lay {
    mode: 1,
    mn_major: false,
    lbo: 16,
    sbo: 1024,
};

impl Lay {
    /// The row width of the swizzle pattern (16 with none) and the bits it XORs.
    fn pattern(&self) -> (u64, u32) {
        match self.mode {
            1 => (128, 3),
            2 => (64, 2),
            3 => (32, 1),
            _ => (16, 0),
        }
    }

    /// The shared address of element (mn, k) of `size`-byte elements in the region at
    /// `base` (written out from the PTX ISA's canonical layouts, independently of the
    /// executor; the same formulas gave exact results on the H100, `wgmma_smem.cu`).
    fn addr(&self, base: u64, size: u64, mn: u64, k: u64) -> u64 {
        let t = 16 / size;
        let (p, bits) = self.pattern();
        let off = match (self.mn_major, self.mode) {
            (false, 0) => (mn / 8) * self.sbo + (k / t) * self.lbo + (mn % 8) * 16 + (k % t) * size,
            (false, _) => (mn / 8) * self.sbo + (mn % 8) * p + k * size,
            (true, 0) => (mn % t) * size + (mn / t) * self.sbo + (k % 8) * 16 + (k / 8) * self.lbo,
            (true, _) => {
                let w = p / 16;
                (mn % t) * size
                    + ((mn / t) % w) * 16
                    + (mn / (t * w)) * self.lbo
                    + (k % 8) * p
                    + (k / 8) * self.sbo
            }
        };
        let a = base + off;
        a ^ (((a >> 7) & ((1 << bits) - 1)) << 4)
    }

    /// The descriptor's bits other than the start address.
    fn bits(&self) -> u64 {
        ((self.lbo >> 4) << 16) | ((self.sbo >> 4) << 32) | (self.mode << 62)
    }
}

/// One wgmma test: shape, types, where A comes from, and the scalar operands.
#[derive(Clone, Debug)]
struct Case {
    n: u32,
    k: u32,
    d: &'static str,
    a: &'static str,
    b: &'static str,
    /// `None`: A from registers.
    a_lay: Option<Lay>,
    b_lay: Lay,
    /// scale-d: accumulate into the initial D (every element `c`).
    accumulate: bool,
    c: i64,
    neg_a: bool,
    neg_b: bool,
}

impl Case {
    fn new(n: u32, k: u32, d: &'static str, ab: &'static str, lay: Lay) -> Case {
        Case {
            n,
            k,
            d,
            a: ab,
            b: ab,
            a_lay: Some(lay),
            b_lay: lay,
            accumulate: false,
            c: 0,
            neg_a: false,
            neg_b: false,
        }
    }

    fn size(ty: &str) -> u64 {
        match ty {
            "f16" | "bf16" => 2,
            "tf32" => 4,
            _ => 1,
        }
    }

    /// D registers per thread.
    fn dregs(&self) -> usize {
        let per = if self.d == "f16" { 4 } else { 2 };
        self.n as usize / per
    }

    fn unsigned(&self) -> bool {
        self.a == "u8"
    }

    /// A[m][k] and B[k][n]: small integers, exact in every type.
    fn a_at(&self, m: u64, k: u64) -> i64 {
        ((m * 37 + k * 11 + 5) % 7) as i64 - if self.unsigned() { 0 } else { 3 }
    }

    fn b_at(&self, k: u64, n: u64) -> i64 {
        ((n * 13 + k * 29 + 3) % 7) as i64 - if self.b == "u8" { 0 } else { 3 }
    }

    /// D[row][col] of the product (with the negations and the initial D).
    fn want(&self, row: u64, col: u64) -> i64 {
        let s = if self.neg_a != self.neg_b { -1 } else { 1 };
        let dot: i64 = (0..self.k as u64)
            .map(|k| self.a_at(row, k) * self.b_at(k, col))
            .sum();
        s * dot + if self.accumulate { self.c } else { 0 }
    }
}

/// The bits of the small integer `v` as an element of `ty`.
fn enc(ty: &str, v: i64) -> u64 {
    let sign = if v < 0 { 0x80 } else { 0 };
    let m = v.unsigned_abs();
    match ty {
        "f16" => half::f16::from_f64(v as f64).to_bits() as u64,
        "bf16" => half::bf16::from_f64(v as f64).to_bits() as u64,
        "tf32" | "f32" => (v as f32).to_bits() as u64,
        // 1.0, 2.0, 3.0 (0 is 0): e4m3 bias 7, e5m2 bias 15.
        "e4m3" => sign | [0x00, 0x38, 0x40, 0x44][m as usize],
        "e5m2" => sign | [0x00, 0x3C, 0x40, 0x42][m as usize],
        "s8" | "u8" => v as u8 as u64,
        "s32" => v as i32 as u32 as u64,
        _ => unreachable!("{ty}"),
    }
}

/// The PTX of one wgmma test: every thread copies its part of the shared image from `p1`
/// (16 bytes a time), loads its A fragment from `p1 + 32768` (A in registers), sets every D
/// register to `c`, runs the wgmma with scale-d from `p2` and probes each D register.
fn kernel(c: &Case, instr: &str) -> String {
    let nd = c.dregs();
    let dlist = (0..nd)
        .map(|j| format!("%r{}", 100 + j))
        .collect::<Vec<_>>()
        .join(", ");
    let desc = |lay: &Lay, base: u64| lay.bits() | (base >> 4);
    let a = match c.a_lay {
        Some(l) => format!("{:#x}", desc(&l, 0)),
        None => "{%r20, %r21, %r22, %r23}".into(),
    };
    let mut imm = String::new();
    if !matches!(c.a, "s8" | "u8") {
        imm += &format!(
            ", {}, {}",
            if c.neg_a { -1 } else { 1 },
            if c.neg_b { -1 } else { 1 }
        );
        if Case::size(c.a) == 2 {
            if let Some(l) = c.a_lay {
                imm += &format!(", {}", l.mn_major as u32);
            }
            imm += &format!(", {}", c.b_lay.mn_major as u32);
        }
    }
    let mut body = format!(
        "ld.param.u64 %rd30, [p0];\nld.param.u64 %rd1, [p1];\nld.param.u32 %r3, [p2];\n\
mov.u32 %r1, %tid.x;\nmov.u32 %r2, 0;\nmov.u64 %rd9, smem;\n\
$copy:\nmad.lo.u32 %r4, %r2, 128, %r1;\nmul.wide.u32 %rd2, %r4, 16;\nadd.s64 %rd3, %rd1, %rd2;\n\
ld.global.v4.u32 {{%r5, %r6, %r7, %r8}}, [%rd3];\nadd.s64 %rd4, %rd9, %rd2;\n\
st.shared.v4.u32 [%rd4], {{%r5, %r6, %r7, %r8}};\nadd.u32 %r2, %r2, 1;\n\
setp.lt.u32 %p1, %r2, {};\n@%p1 bra $copy;\nbar.sync 0;\n\
mul.wide.u32 %rd5, %r1, 16;\nadd.s64 %rd6, %rd1, %rd5;\n\
ld.global.v4.u32 {{%r20, %r21, %r22, %r23}}, [%rd6+{SMEM}];\n\
mov.u64 %rd11, {:#x};\nsetp.ne.u32 %p2, %r3, 0;\n",
        SMEM / 16 / 128,
        desc(&c.b_lay, B_REGION),
    );
    if c.a_lay.is_some() {
        body += &format!("mov.u64 %rd10, {a};\n");
    }
    let c_bits = if c.d == "f16" {
        let h = enc("f16", c.c);
        h | (h << 16)
    } else {
        enc(c.d, c.c)
    };
    for j in 0..nd {
        body += &format!("mov.b32 %r{}, {c_bits};\n", 100 + j);
    }
    let a_op = if c.a_lay.is_some() { "%rd10" } else { &a };
    body += &format!(
        "wgmma.fence.sync.aligned;\n{instr} {{{dlist}}}, {a_op}, %rd11, %p2{imm};\n\
wgmma.commit_group.sync.aligned;\nwgmma.wait_group.sync.aligned 0;\n"
    );
    for j in 0..nd {
        body += &format!(
            "cvt.u64.u32 %rd31, %r{};\nadd.s64 %rd32, %rd30, %rd31;\nst.global.u8 [%rd32], 0;\n",
            100 + j
        );
    }
    format!(
        ".version 8.5\n.target sm_90a\n.address_size 64\n.shared .align 1024 .b8 smem[{SMEM}];\n\
.visible .entry k(.param .u64 p0, .param .u64 p1, .param .u32 p2)\n{{\n\
.reg .pred %p<8>;\n.reg .b32 %r<400>;\n.reg .b64 %rd<40>;\n{body}ret;\n}}\n"
    )
}

/// The bytes `p1` holds: the shared image (A's and B's elements where their layouts put
/// them) and, after it, each thread's A fragment (4 registers of the m16nNkK A layout on
/// its warp's 16 rows).
fn image(c: &Case) -> Vec<u8> {
    let mut img = vec![0u8; SMEM + 128 * 16];
    let (sa, sb) = (Case::size(c.a), Case::size(c.b));
    let mut put = |addr: u64, bytes: u64, v: u64| {
        for i in 0..bytes {
            img[(addr + i) as usize] = (v >> (8 * i)) as u8;
        }
    };
    for m in 0..64 {
        for k in 0..c.k as u64 {
            if let Some(l) = c.a_lay {
                put(l.addr(0, sa, m, k), sa, enc(c.a, c.a_at(m, k)));
            }
        }
    }
    for n in 0..c.n as u64 {
        for k in 0..c.k as u64 {
            put(c.b_lay.addr(B_REGION, sb, n, k), sb, enc(c.b, c.b_at(k, n)));
        }
    }
    // A fragment: register j of lane (g, t) of warp w holds row 16w + g + 8(j%2), columns
    // e·t + s + 4e·(j/2) for its e elements s [PTX ISA §9.7.15.5.1.1].
    let e = 4 / sa;
    for thread in 0..128u64 {
        let (w, l) = (thread / 32, thread % 32);
        let (g, t) = (l / 4, l % 4);
        for j in 0..4 {
            let row = 16 * w + g + 8 * (j % 2);
            let mut v = 0u64;
            for s in 0..e {
                let k = e * t + s + 4 * e * (j / 2);
                v |= enc(c.a, c.a_at(row, k)) << (8 * sa * s);
            }
            put(SMEM as u64 + 16 * thread + 4 * j, 4, v);
        }
    }
    img
}

fn alloc(k: u64, bytes: Vec<u8>) -> (Alloc, warpscope_init::Contents) {
    let base = window::ALLOC_BASE + k * window::ALLOC_SPACING;
    let contents = if bytes.is_empty() {
        warpscope_init::Contents::Zero
    } else {
        warpscope_init::Contents::Bytes(bytes.into())
    };
    (
        Alloc {
            name: format!("p{k}"),
            base,
            size: None,
        },
        contents,
    )
}

fn decode(text: &str, entry: &str) -> Result<Program, Error> {
    let m = warpscope_ptx::parse(text).unwrap();
    let e = warpscope_ptx::find_entry(&m, entry).unwrap();
    Program::decode(&m, e)
}

/// Runs `c` (one block of 128 threads): every access, and the program.
fn run(c: &Case) -> (Program, Vec<(u32, WarpAccess, WarpOrigin)>) {
    let instr = format!(
        "wgmma.mma_async.sync.aligned.m64n{}k{}.{}.{}.{}",
        c.n, c.k, c.d, c.a, c.b
    );
    let p = decode(&kernel(c, &instr), "k").unwrap();
    let allocs = vec![alloc(0, vec![]), alloc(1, image(c))];
    let mut args: Vec<Vec<u8>> = allocs
        .iter()
        .map(|(a, _)| a.base.to_le_bytes().to_vec())
        .collect();
    args.push((c.accumulate as u32).to_le_bytes().to_vec());
    let l = Launch {
        block: [128, 1, 1],
        args,
        allocs,
        max_steps: 1 << 24,
        ..Default::default()
    };
    let mut v = Vec::new();
    p.run(&l, &mut |s, a, o| v.push((s, *a, o))).unwrap();
    (p, v)
}

/// The wgmma site's accesses, in order.
fn wgmma_accesses<'a>(
    p: &Program,
    v: &'a [(u32, WarpAccess, WarpOrigin)],
) -> Vec<&'a (u32, WarpAccess, WarpOrigin)> {
    v.iter()
        .filter(|(s, _, _)| p.sites[*s as usize].ptx.starts_with("wgmma.mma_async"))
        .collect()
}

/// Checks every D register of every lane of the 4 warps against the reference.
fn check_d(c: &Case) -> Vec<(u32, WarpAccess, WarpOrigin)> {
    let (_, v) = run(c);
    let nd = c.dregs();
    let probes: Vec<_> = v
        .iter()
        .filter(|(_, a, _)| a.op == Op::Store && a.width == 1 && a.space == Space::Global)
        .collect();
    assert_eq!(probes.len(), 4 * nd, "{c:?}");
    for (i, (_, a, o)) in probes.iter().enumerate() {
        let (w, j) = (o.warp as u64, i % nd);
        assert_eq!(w, (i / nd) as u64);
        assert_eq!(a.mask, u32::MAX);
        for lane in 0..32u64 {
            let got = a.addrs[lane as usize] - window::ALLOC_BASE;
            let (g, t) = (lane / 4, lane % 4);
            // D element e of the lane (two per .f16x2 register): row g + 8·((e/2)%2),
            // column 8·(e/4) + 2t + e%2 of the warp's 16 rows.
            let at = |e: u64| (16 * w + g + 8 * ((e / 2) % 2), 8 * (e / 4) + 2 * t + e % 2);
            let want = if c.d == "f16" {
                let (r0, c0) = at(2 * j as u64);
                let (r1, c1) = at(2 * j as u64 + 1);
                enc("f16", c.want(r0, c0)) | (enc("f16", c.want(r1, c1)) << 16)
            } else {
                let (r, col) = at(j as u64);
                enc(c.d, c.want(r, col))
            };
            assert_eq!(got, want, "{c:?}: warp {w} lane {lane} d{j}");
        }
    }
    v
}

fn cc90() -> &'static warpscope_model::Arch {
    arch::lookup(ComputeCapability::new(9, 0)).unwrap()
}

/// The model's total over the wgmma site's accesses.
fn cost_of(p: &Program, v: &[(u32, WarpAccess, WarpOrigin)]) -> Cost {
    let mut total = Cost::default();
    for (_, a, _) in wgmma_accesses(p, v) {
        total.add(&warpscope_model::cost(cc90(), &Config::default(), a));
    }
    total
}

/// m64n8k16, f16 A and B (no swizzle) into f32: each of the 4 warps gets its 16 rows of D,
/// lane by lane (D[0][0] = Σₖ A[0][k]·B[k][0] = 27, D[63][7] = 27 with A[m][k] =
/// (37m + 11k + 5) mod 7 − 3, B[k][n] = (13n + 29k + 3) mod 7 − 3). The shared reads: one
/// access per warp for its 16 rows of A (4 core matrices, lane l at 512w + 16l: the packed
/// layout is contiguous) and one of B's 2 core matrices (warp 0, lanes 0–15 at 16384 +
/// 16l): 18 wavefronts, 2304 bytes (A 64·16·2 + B 8·16·2), as the H100 counts them (one
/// wavefront per core matrix).
#[test]
fn m64n8k16_f16_values_and_reads_without_swizzle() {
    let c = Case::new(8, 16, "f32", "f16", NONE);
    assert_eq!((c.want(0, 0), c.want(63, 7)), (27, 27));
    let v = check_d(&c);
    let p = decode(
        &kernel(&c, "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16"),
        "k",
    )
    .unwrap();
    let acc = wgmma_accesses(&p, &v);
    assert_eq!(acc.len(), 5);
    for (i, (_, a, o)) in acc.iter().enumerate() {
        assert_eq!((a.op, a.space, a.width), (Op::Load, Space::Shared, 16));
        let w = o.warp as u64;
        let a_access = match (w, i) {
            (0, 0) | (1, 2) | (2, 3) | (3, 4) => true,
            (0, 1) => false,
            _ => panic!("access {i} by warp {w}"),
        };
        if a_access {
            assert_eq!(a.mask, u32::MAX);
            for lane in [0u64, 1, 7, 8, 17, 31] {
                assert_eq!(
                    a.addrs[lane as usize],
                    512 * w + 16 * lane,
                    "warp {w} lane {lane}"
                );
            }
        } else {
            assert_eq!(a.mask, 0xFFFF);
            for lane in [0u64, 7, 8, 15] {
                assert_eq!(a.addrs[lane as usize], B_REGION + 16 * lane);
            }
        }
    }
    let cost = cost_of(&p, &v);
    assert_eq!(
        (cost.requests, cost.wavefronts, cost.bytes_requested),
        (5, 18, 2304)
    );
}

/// The same product with A and B in the 128B-swizzle layout (rows 128 bytes apart): lane
/// 8q + r reads row r of core matrix q = 2i + c (8-row group i, 16-byte K chunk c), at
/// 1024·(2w + i) + 128·r + 16·(c XOR r). Still one wavefront per core matrix.
#[test]
fn m64n8k16_f16_with_128b_swizzle() {
    let c = Case::new(8, 16, "f32", "f16", SW128);
    let v = check_d(&c);
    let p = decode(
        &kernel(&c, "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16"),
        "k",
    )
    .unwrap();
    let acc = wgmma_accesses(&p, &v);
    assert_eq!(acc.len(), 5);
    let (_, a0, _) = acc[0];
    // Warp 0's A: lane 1 (q 0, r 1) at 128 + 16; lane 9 (q 1: c 1, r 1) at 128 + 0;
    // lane 31 (q 3: i 1, c 1, r 7) at 1024 + 896 + 16·6.
    assert_eq!(
        [a0.addrs[0], a0.addrs[1], a0.addrs[9], a0.addrs[31]],
        [0, 144, 128, 1024 + 896 + 96]
    );
    let (_, a3, o3) = acc[4];
    assert_eq!(o3.warp, 3);
    assert_eq!(a3.addrs[10], 6 * 1024 + 2 * 128 + 16 * (1 ^ 2));
    let (_, b, _) = acc[1];
    assert_eq!(
        (b.mask, b.addrs[3], b.addrs[12]),
        (
            0xFFFF,
            B_REGION + 3 * 128 + 3 * 16,
            B_REGION + 4 * 128 + 5 * 16
        )
    );
    let cost = cost_of(&p, &v);
    assert_eq!(
        (cost.requests, cost.wavefronts, cost.bytes_requested),
        (5, 18, 2304)
    );
}

/// Every type wgmma takes, from shared memory in several layouts and from registers.
#[test]
fn every_type_and_layout_gives_the_exact_product() {
    let sw32 = Lay {
        mode: 3,
        mn_major: false,
        lbo: 16,
        sbo: 256,
    };
    let sw64 = Lay {
        mode: 2,
        mn_major: false,
        lbo: 16,
        sbo: 512,
    };
    let cases = [
        Case::new(64, 16, "f32", "f16", NONE),
        Case::new(64, 16, "f32", "f16", SW128),
        Case::new(24, 16, "f32", "f16", sw32),
        Case::new(40, 16, "f16", "f16", sw64),
        Case::new(256, 16, "f32", "bf16", SW128),
        Case::new(16, 8, "f32", "tf32", NONE),
        Case::new(32, 8, "f32", "tf32", SW128),
        Case::new(8, 32, "f32", "e4m3", SW128),
        Case::new(16, 32, "f16", "e5m2", NONE),
        Case::new(48, 32, "s32", "s8", SW128),
        Case::new(32, 32, "s32", "u8", NONE),
    ];
    for c in &cases {
        check_d(c);
    }
    // Mixed fp8, mixed integer signedness.
    let mut c = Case::new(16, 32, "f32", "e4m3", sw64);
    c.b = "e5m2";
    check_d(&c);
    let mut c = Case::new(16, 32, "s32", "s8", NONE);
    c.b = "u8";
    check_d(&c);
}

/// M-/N-major A and B (`imm-trans-a` = `imm-trans-b` = 1) with 128B swizzle and without
/// (the H100 gave the exact D for m64n64k16 M-/N-major 128B, `wgmma_smem.cu` layout mn128);
/// A from registers; scale-d true adds the initial D; imm-scale −1 negates.
#[test]
fn transposes_registers_scale_and_negation() {
    let mn128 = Lay {
        mode: 1,
        mn_major: true,
        lbo: 8192,
        sbo: 1024,
    };
    let mn_none = Lay {
        mode: 0,
        mn_major: true,
        lbo: 4096,
        sbo: 128,
    };
    check_d(&Case::new(64, 16, "f32", "f16", mn128));
    check_d(&Case::new(128, 16, "f32", "bf16", mn_none));
    // K-major A, N-major B.
    let mut c = Case::new(72, 16, "f32", "f16", NONE);
    c.b_lay = mn128;
    check_d(&c);
    // A from registers: only B is read, one access per 4 core matrices.
    let mut c = Case::new(64, 16, "f32", "f16", NONE);
    c.a_lay = None;
    let v = check_d(&c);
    let p = decode(
        &kernel(&c, "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16"),
        "k",
    )
    .unwrap();
    let cost = cost_of(&p, &v);
    assert_eq!(
        (cost.requests, cost.wavefronts, cost.bytes_requested),
        (4, 16, 2048)
    );
    for (ty, k) in [("tf32", 8), ("e4m3", 32), ("s8", 32)] {
        let d = if ty == "s8" { "s32" } else { "f32" };
        let mut c = Case::new(16, k, d, ty, SW128);
        c.a_lay = None;
        check_d(&c);
    }
    // scale-d: D = A·B + D (D starts at 100 everywhere), f16 D, and the negations.
    let mut c = Case::new(32, 16, "f16", "f16", SW128);
    c.accumulate = true;
    c.c = 100;
    check_d(&c);
    c.neg_a = true;
    check_d(&c);
    c.neg_b = true;
    check_d(&c);
    let mut c = Case::new(16, 32, "s32", "s8", NONE);
    c.accumulate = true;
    c.c = -7;
    check_d(&c);
    // scale-d false ignores the initial D.
    let mut c = Case::new(8, 16, "f32", "bf16", NONE);
    c.c = 55;
    check_d(&c);
}

/// The ncu CSV of `tests/data/h100/wgmma/`: per kernel, a counter's value.
fn measured() -> std::collections::HashMap<(String, String), f64> {
    let text = include_str!("../../../tests/data/h100/wgmma/ncu-wgmma.csv");
    let mut out = std::collections::HashMap::new();
    let mut lines = text.lines().filter(|l| l.starts_with('"'));
    let header: Vec<String> = split_csv(lines.next().unwrap());
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    let (kernel, metric, value) = (col("Kernel Name"), col("Metric Name"), col("Metric Value"));
    for l in lines {
        let f = split_csv(l);
        let k = f[kernel].split('(').next().unwrap().trim().to_string();
        let v: f64 = f[value].replace(',', "").parse().unwrap();
        out.insert((k, f[metric].clone()), v);
    }
    out
}

fn split_csv(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    for ch in line.chars() {
        match ch {
            '"' => quoted = !quoted,
            ',' if !quoted => out.push(std::mem::take(&mut cur)),
            c => cur.push(c),
        }
    }
    out.push(cur);
    out
}

/// The kernel measured on the H100 (`tests/data/h100/wgmma/wgmma_smem.cu`, its PTX from
/// nvcc 13.5 `-ptx -arch=sm_90a`), analyzed: for each layout and REPS = 1 and 9
/// back-to-back m64n64k16 wgmmas, the wgmma site's model wavefronts equal the measured
/// `l1tex__data_pipe_lsu_wavefronts_mem_shared_op_gmma.sum` (32 a wgmma from shared memory,
/// 16 with A in registers: 32, 288 and 16, 144), its bytes
/// `sm__sass_data_bytes_mem_shared_op_gmma.sum` (4096 a wgmma, 2048 with A in registers);
/// the H100 saw no bank conflict (`l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_gmma`
/// 0) and neither does the model (a wavefront per 128 bytes); the requests differ by design:
/// the H100 counts one per warp (`l1tex__lsuin_requests_op_gmma.sum` 4 a wgmma), warpscope
/// one per 512-byte access (8 a wgmma from shared memory, 4 with A in registers).
#[test]
fn measured_h100_counts_of_the_wgmma_kernel() {
    let m = measured();
    let get = |k: &str, metric: &str| {
        *m.get(&(k.to_string(), metric.to_string()))
            .unwrap_or_else(|| panic!("{k} {metric} not in the CSV")) as u64
    };
    let text = include_str!("../../../tests/data/h100/wgmma/wgmma_smem.ptx");
    let module = warpscope_ptx::parse(text).unwrap();
    let mut checked = 0;
    for layout in ["none", "sw32", "sw64", "sw128", "samebank", "mn128", "rs"] {
        for reps in [1u64, 9] {
            let name = format!("wg_{layout}_r{reps}");
            let p = Program::decode(&module, warpscope_ptx::find_entry(&module, &name).unwrap())
                .unwrap();
            let allocs: Vec<_> = (0..3).map(|k| alloc(k, vec![])).collect();
            let args = allocs
                .iter()
                .map(|(a, _)| a.base.to_le_bytes().to_vec())
                .collect();
            let l = Launch {
                block: [128, 1, 1],
                args,
                allocs,
                ..Default::default()
            };
            let mut v = Vec::new();
            p.run(&l, &mut |s, a, o| v.push((s, *a, o))).unwrap();
            let cost = cost_of(&p, &v);
            let wavefronts = get(
                &name,
                "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_gmma.sum",
            );
            let bytes = get(&name, "sm__sass_data_bytes_mem_shared_op_gmma.sum");
            let requests = get(&name, "l1tex__lsuin_requests_op_gmma.sum");
            let conflicts = get(
                &name,
                "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_gmma.sum",
            );
            let a_in_smem = layout != "rs";
            let per = if a_in_smem { 32 } else { 16 };
            assert_eq!(wavefronts, per * reps, "{name}");
            assert_eq!(bytes, 128 * per * reps, "{name}");
            assert_eq!((requests, conflicts), (4 * reps, 0), "{name}");
            assert_eq!(cost.wavefronts, wavefronts, "{name}");
            assert_eq!(cost.bytes_requested, bytes, "{name}");
            assert_eq!(cost.wavefronts * 128, cost.bytes_requested, "{name}");
            assert_eq!(
                cost.requests,
                requests * if a_in_smem { 2 } else { 1 },
                "{name}"
            );
            checked += 1;
        }
    }
    assert_eq!(checked, 14);
    // The H100 computed the exact D for every kernel.
    let run = include_str!("../../../tests/data/h100/wgmma/run.txt");
    assert!(run.contains("0 kernels with a wrong D"));
    assert!(include_str!("../../../tests/data/h100/wgmma/env.txt").contains("NVIDIA H100"));
}

/// Malformed instructions and launches are errors naming the instruction (or the thread and
/// block), never a panic or a wrong run.
#[test]
fn bad_wgmma_is_an_error() {
    let c = Case::new(8, 16, "f32", "f16", NONE);
    let good = "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16";
    let swap = |from: &str, to: &str| kernel(&c, good).replace(from, to);
    let msg = |text: String| match decode(&text, "k") {
        Err(e) => e.to_string(),
        Ok(_) => panic!("decoded: {text}"),
    };
    // Wrong D register count for N (n16 takes 8).
    let e = msg(swap("m64n8k16", "m64n16k16"));
    assert!(e.contains("takes 8 D registers, 4 given"), "{e}");
    // Unknown shapes and types.
    let e = msg(swap("m64n8k16", "m64n12k16"));
    assert!(e.contains("no wgmma of shape m64n12k16"), "{e}");
    let e = msg(swap("m64n8k16", "m128n8k16"));
    assert!(
        e.contains("unsupported instruction") && e.contains("m128n8k16"),
        "{e}"
    );
    let e = msg(swap("m64n8k16.f32.f16.f16", "m64n8k16.f32.f64.f64"));
    assert!(e.contains("does not multiply F64"), "{e}");
    let e = msg(swap("m64n8k16.f32.f16.f16", "m64n8k16.f16.bf16.bf16"));
    assert!(e.contains("accumulates into F32, not F16"), "{e}");
    let e = msg(swap("m64n8k16.f32.f16.f16", "m64n8k32.s32.s8.s8"));
    assert!(e.contains("takes 4 operands"), "{e}");
    let e = msg(swap("mma_async.sync", "mma_async.sp.sync"));
    assert!(e.contains("sparse"), "{e}");
    let e = msg(swap(", 1, 1, 0, 0;", ", 1, 2, 0, 0;"));
    assert!(
        e.contains("imm-scale-b (operand 6) must be the immediate 1 or -1"),
        "{e}"
    );
    let e = msg(swap(", 1, 1, 0, 0;", ", 1, 1, 0;"));
    assert!(e.contains("takes 8 operands"), "{e}");
    // A tcgen05.cp shape without its required multicast (tcgen05 runs: tests/tcgen05.rs).
    let e = msg(swap(
        "wgmma.fence.sync.aligned;",
        "tcgen05.cp.cta_group::1.32x128b [%r1], %rd1;",
    ));
    assert!(
        e.contains("tcgen05.cp") && e.contains("requires .warpx4"),
        "{e}"
    );

    // At run time: a descriptor outside the block's shared memory.
    let far = kernel(&c, good).replace(
        &format!("mov.u64 %rd10, {:#x}", NONE.bits()),
        &format!("mov.u64 %rd10, {:#x}", NONE.bits() | 0x3000),
    );
    let p = decode(&far, "k").unwrap();
    let launch = |p: &Program, threads: u32| {
        let allocs = vec![alloc(0, vec![]), alloc(1, image(&c))];
        let mut args: Vec<Vec<u8>> = allocs
            .iter()
            .map(|(a, _)| a.base.to_le_bytes().to_vec())
            .collect();
        args.push(0u32.to_le_bytes().to_vec());
        let l = Launch {
            block: [threads, 1, 1],
            args,
            allocs,
            max_steps: 1 << 24,
            ..Default::default()
        };
        p.run(&l, &mut |_, _, _| {}).unwrap_err().to_string()
    };
    let e = launch(&p, 128);
    assert!(
        e.contains("A's matrix descriptor")
            && e.contains("starts at shared address 0x30000")
            && e.contains("outside the block's 49152 bytes")
            && e.contains("thread (0,0,0) of block (0,0,0)"),
        "{e}"
    );
    // A block that ends inside a warpgroup.
    let p = decode(&kernel(&c, good), "k").unwrap();
    let e = launch(&p, 96);
    assert!(
        e.contains("warpgroup of 4 whole warps") && e.contains("96 threads"),
        "{e}"
    );
    // B's second K chunk past the end of shared memory (LBO 128 + 64 KiB).
    let sbo = kernel(&c, good).replace(
        &format!("mov.u64 %rd11, {:#x}", NONE.bits() | (B_REGION >> 4)),
        &format!(
            "mov.u64 %rd11, {:#x}",
            (NONE.bits() | (B_REGION >> 4)) + (0x1000u64 << 16)
        ),
    );
    let p = decode(&sbo, "k").unwrap();
    let e = launch(&p, 128);
    assert!(
        e.contains("wgmma.mma_async: B (descriptor start 0x4000, LBO 65664, SBO 256, no swizzle)")
            && e.contains("at shared address 0x14080, past the block's 49152 bytes"),
        "{e}"
    );
}
