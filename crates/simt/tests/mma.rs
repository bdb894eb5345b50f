//! Tensor-core instructions on hand-written PTX: `mma.sync` results lane by lane as the PTX
//! ISA's fragment layouts place them, `wmma.load`/`wmma.store` accesses as the SASS of
//! nvcc 13.5 makes them (and costed on compute capability 9.0), `wmma.mma` values through
//! the fragment layout measured on an H100, `movmatrix`, and malformed instructions named
//! in errors.
//!
//! Register values are read back with probes: `st.global.u8 [p0 + bits]` stores at an
//! address that is the register's bits, so the access's lane addresses are the values.

use warpscope_model::{arch, ComputeCapability, Config, Op, Space, WarpAccess};
use warpscope_simt::decode::window;
use warpscope_simt::{Alloc, Error, Launch, Program, WarpOrigin};

const REGS: &str = ".reg .pred %p<4>;\n.reg .b16 %h<64>;\n.reg .b32 %r<200>;\n.reg .b64 %rd<40>;\n.reg .f32 %f<64>;\n.reg .f64 %fd<16>;\n";

fn module(body: &str, params: &str) -> String {
    format!(
        ".version 8.5\n.target sm_90\n.address_size 64\n.visible .entry k({params})\n{{\n{REGS}{body}\nret;\n}}\n"
    )
}

fn try_program(body: &str, params: &str) -> Result<Program, Error> {
    let text = module(body, params);
    let m = warpscope_ptx::parse(&text).unwrap();
    let e = warpscope_ptx::find_entry(&m, "k").unwrap();
    Program::decode(&m, e)
}

fn program(body: &str, params: &str) -> Program {
    try_program(body, params).unwrap()
}

/// One warp; pointer parameters first (allocation `k` at slot `k`, with `init[k]` bytes),
/// then the `u32` values.
fn launch(prog: &Program, init: Vec<Vec<u8>>, ints: &[u32]) -> Launch {
    let mut allocs = Vec::new();
    let mut args = Vec::new();
    for (k, bytes) in init.into_iter().enumerate() {
        let base = window::ALLOC_BASE + k as u64 * window::ALLOC_SPACING;
        let contents = if bytes.is_empty() {
            warpscope_init::Contents::Zero
        } else {
            warpscope_init::Contents::Bytes(bytes.into())
        };
        allocs.push((
            Alloc {
                name: format!("p{k}"),
                base,
                size: None,
            },
            contents,
        ));
        args.push(base.to_le_bytes().to_vec());
    }
    args.extend(ints.iter().map(|x| x.to_le_bytes().to_vec()));
    assert_eq!(args.len(), prog.params.len());
    Launch {
        args,
        allocs,
        max_steps: 1 << 24,
        ..Default::default()
    }
}

fn accesses(prog: &Program, l: &Launch) -> Vec<(u32, WarpAccess, WarpOrigin)> {
    let mut v = Vec::new();
    prog.run(l, &mut |s, a, o| v.push((s, *a, o))).unwrap();
    v
}

/// The values the probes read, in probe order: `[probe][lane]`.
fn probes(prog: &Program, l: &Launch) -> Vec<[u64; 32]> {
    accesses(prog, l)
        .into_iter()
        .filter(|(_, a, _)| a.op == Op::Store && a.width == 1)
        .map(|(_, a, _)| {
            assert_eq!(a.mask, u32::MAX);
            a.addrs.map(|x| x - window::ALLOC_BASE)
        })
        .collect()
}

/// PTX that computes `%r91` = g = lane/4 and `%r92` = t = lane%4 and loads `p0` into `%rd30`.
const PRELUDE: &str = "ld.param.u64 %rd30, [p0];\nmov.u32 %r90, %laneid;\nshr.u32 %r91, %r90, 2;\nand.b32 %r92, %r90, 3;\n";

/// A probe of the 32-bit register `reg`.
fn probe(reg: &str) -> String {
    format!("mov.b32 %r99, {reg};\ncvt.u64.u32 %rd31, %r99;\nadd.s64 %rd32, %rd30, %rd31;\nst.global.u8 [%rd32], 0;\n")
}

/// An element position as a function of the lane: row = rg·g + rt·t + rc, col likewise.
#[derive(Clone, Copy)]
struct Pos {
    rg: i32,
    rt: i32,
    rc: i32,
    cg: i32,
    ct: i32,
    cc: i32,
}

impl Pos {
    fn at(&self, g: i32, t: i32) -> (usize, usize) {
        (
            (self.rg * g + self.rt * t + self.rc) as usize,
            (self.cg * g + self.ct * t + self.cc) as usize,
        )
    }
}

/// A matrix whose element (i, j) is `a·i + b·j + c`.
#[derive(Clone, Copy)]
struct Affine(i32, i32, i32);

impl Affine {
    fn at(&self, i: usize, j: usize) -> i32 {
        self.0 * i as i32 + self.1 * j as i32 + self.2
    }

    /// PTX: `%r80` = the element at `p` for this lane (an integer).
    fn ptx(&self, p: Pos) -> String {
        let kg = self.0 * p.rg + self.1 * p.cg;
        let kt = self.0 * p.rt + self.1 * p.ct;
        let c = self.0 * p.rc + self.1 * p.cc + self.2;
        format!("mul.lo.s32 %r80, %r91, {kg};\nmad.lo.s32 %r80, %r92, {kt}, %r80;\nadd.s32 %r80, %r80, {c};\n")
    }
}

/// PTX setting register `dst` to elements of `m` at `pos(j, s)` for s in 0..per, packed as
/// `kind`: "f16" (two halves), "f32"/"tf32" (one float), "s8" (four bytes), "s32".
fn fill(dst: &str, m: Affine, kind: &str, pos: impl Fn(usize) -> Pos) -> String {
    let mut out = String::new();
    match kind {
        "f16" => {
            for s in 0..2 {
                out += &m.ptx(pos(s));
                out += &format!("cvt.rn.f16.s32 %h{}, %r80;\n", s + 1);
            }
            out += &format!("mov.b32 {dst}, {{%h1, %h2}};\n");
        }
        "f32" => {
            out += &m.ptx(pos(0));
            out += &format!("cvt.rn.f32.s32 {dst}, %r80;\n");
        }
        "s32" => {
            out += &m.ptx(pos(0));
            out += &format!("mov.b32 {dst}, %r80;\n");
        }
        "s8" => {
            out += &format!("mov.b32 {dst}, 0;\n");
            for s in 0..4 {
                out += &m.ptx(pos(s));
                out += &format!(
                    "and.b32 %r80, %r80, 255;\nshl.b32 %r80, %r80, {};\nor.b32 {dst}, {dst}, %r80;\n",
                    8 * s
                );
            }
        }
        _ => unreachable!(),
    }
    out
}

/// `D = A·B + C` (integers, exact).
fn reference(a: Affine, b: Affine, c: Affine, m: usize, n: usize, k: usize) -> Vec<Vec<i64>> {
    (0..m)
        .map(|i| {
            (0..n)
                .map(|j| {
                    c.at(i, j) as i64
                        + (0..k)
                            .map(|x| a.at(i, x) as i64 * b.at(x, j) as i64)
                            .sum::<i64>()
                })
                .collect()
        })
        .collect()
}

/// The mma.m16n8kK accumulator layout [PTX ISA §9.7.14.5.x, "MMA .m16n8k* fragment layout
/// for accumulator matrix C/D"]: register j of lane (g, t) is row g + 8·(j/2), column
/// 2t + j%2.
fn c_pos(j: usize) -> Pos {
    Pos {
        rg: 1,
        rt: 0,
        rc: 8 * (j as i32 / 2),
        cg: 0,
        ct: 2,
        cc: j as i32 % 2,
    }
}

/// Runs `mma` with fragments filled from `a`, `b`, `c` at the given positions and checks
/// each lane's D registers against the reference product.
#[allow(clippy::too_many_arguments)]
fn check_mma(
    mma: &str,
    (m, n, k): (usize, usize, usize),
    (a, a_kind, a_regs, a_pos): (Affine, &str, usize, &dyn Fn(usize, usize) -> Pos),
    (b, b_kind, b_regs, b_pos): (Affine, &str, usize, &dyn Fn(usize, usize) -> Pos),
    (c, cd_kind): (Affine, &str),
    want: &dyn Fn(i64) -> u64,
) {
    let mut body = PRELUDE.to_string();
    for j in 0..a_regs {
        body += &fill(&format!("%r{}", 10 + j), a, a_kind, |s| a_pos(j, s));
    }
    for j in 0..b_regs {
        body += &fill(&format!("%r{}", 20 + j), b, b_kind, |s| b_pos(j, s));
    }
    let (c_reg, d_reg) = if cd_kind == "f32" {
        ("%f", "%f")
    } else {
        ("%r", "%r")
    };
    for j in 0..4 {
        body += &fill(&format!("{c_reg}{}", 30 + j), c, cd_kind, |_| c_pos(j));
    }
    let list = |p: &str, first: usize, n: usize| {
        (first..first + n)
            .map(|x| format!("{p}{x}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    body += &format!(
        "{mma} {{{}}}, {{{}}}, {{{}}}, {{{}}};\n",
        list(d_reg, 40, 4),
        list("%r", 10, a_regs),
        list("%r", 20, b_regs),
        list(c_reg, 30, 4)
    );
    for j in 0..4 {
        body += &probe(&format!("{d_reg}{}", 40 + j));
    }
    let p = program(&body, ".param .u64 p0");
    assert!(!p.needs_memory);
    let got = probes(&p, &launch(&p, vec![vec![]], &[]));
    assert_eq!(got.len(), 4);
    let d = reference(a, b, c, m, n, k);
    for (j, lanes) in got.iter().enumerate() {
        for (lane, &v) in lanes.iter().enumerate() {
            let (g, t) = (lane as i32 / 4, lane as i32 % 4);
            let (i, col) = c_pos(j).at(g, t);
            assert_eq!(
                v,
                want(d[i][col]),
                "{mma}: lane {lane} register d{j} = D[{i}][{col}] = {}",
                d[i][col]
            );
        }
    }
}

fn f32_bits(x: i64) -> u64 {
    (x as f32).to_bits() as u64
}

/// m16n8k16, f16 inputs, f32 accumulator: A[i][k] = i + k, B[k][n] = k − n,
/// C[i][n] = 100·i + n, so D[i][n] = 100·i + n + Σₖ (i + k)(k − n); D[0][0] = 1240,
/// D[15][7] = 1507 + Σₖ (15 + k)(k − 7) = 1507 + 520 = 2027. Fragments at the ISA's
/// places: A register j of lane (g, t) holds row g + 8·(j%2), columns 2t + {0,1} + 8·(j/2);
/// B register j rows 2t + {0,1} + 8j of column g.
#[test]
fn mma_m16n8k16_f16_f32_gives_each_lane_its_elements() {
    let d = reference(
        Affine(1, 1, 0),
        Affine(1, -1, 0),
        Affine(100, 1, 0),
        16,
        8,
        16,
    );
    assert_eq!((d[0][0], d[15][7]), (1240, 2027));
    check_mma(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32",
        (16, 8, 16),
        (Affine(1, 1, 0), "f16", 4, &|j, s| Pos {
            rg: 1,
            rt: 0,
            rc: 8 * (j as i32 % 2),
            cg: 0,
            ct: 2,
            cc: s as i32 + 8 * (j as i32 / 2),
        }),
        (Affine(1, -1, 0), "f16", 2, &|j, s| Pos {
            rg: 0,
            rt: 2,
            rc: s as i32 + 8 * j as i32,
            cg: 1,
            ct: 0,
            cc: 0,
        }),
        (Affine(100, 1, 0), "f32"),
        &f32_bits,
    );
}

/// m16n8k8 tf32: A[i][k] = 2i − 3k + 1, B[k][n] = n − k, C[i][n] = −10·i; A register j of
/// lane (g, t) holds row g + 8·(j%2), column t + 4·(j/2); B register j row t + 4j of
/// column g.
#[test]
fn mma_m16n8k8_tf32() {
    let d = reference(
        Affine(2, -3, 1),
        Affine(-1, 1, 0),
        Affine(-10, 0, 0),
        16,
        8,
        8,
    );
    // D[0][0] = Σₖ (1 − 3k)(−k) = Σ 3k² − k = 420 − 28.
    assert_eq!(d[0][0], 392);
    check_mma(
        "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32",
        (16, 8, 8),
        (Affine(2, -3, 1), "f32", 4, &|j, _| Pos {
            rg: 1,
            rt: 0,
            rc: 8 * (j as i32 % 2),
            cg: 0,
            ct: 1,
            cc: 4 * (j as i32 / 2),
        }),
        (Affine(-1, 1, 0), "f32", 2, &|j, _| Pos {
            rg: 0,
            rt: 1,
            rc: 4 * j as i32,
            cg: 1,
            ct: 0,
            cc: 0,
        }),
        (Affine(-10, 0, 0), "f32"),
        &f32_bits,
    );
}

/// m16n8k32 s8 × s8 → s32: A[i][k] = i − k (−31 … 15), B[k][n] = k + n − 20, C[i][n] =
/// 1000·i − n. A register j of lane (g, t) holds bytes (row g + 8·(j%2), columns 4t + s +
/// 16·(j/2)); B register j bytes (rows 4t + s + 16j, column g).
#[test]
fn mma_m16n8k32_s8_s32() {
    let d = reference(
        Affine(1, -1, 0),
        Affine(1, 1, -20),
        Affine(1000, -1, 0),
        16,
        8,
        32,
    );
    // D[0][0] = Σₖ (−k)(k − 20) = −Σk² + 20Σk = −10416 + 9920.
    assert_eq!(d[0][0], -496);
    check_mma(
        "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32",
        (16, 8, 32),
        (Affine(1, -1, 0), "s8", 4, &|j, s| Pos {
            rg: 1,
            rt: 0,
            rc: 8 * (j as i32 % 2),
            cg: 0,
            ct: 4,
            cc: s as i32 + 16 * (j as i32 / 2),
        }),
        (Affine(1, 1, -20), "s8", 2, &|j, s| Pos {
            rg: 0,
            rt: 4,
            rc: s as i32 + 16 * j as i32,
            cg: 1,
            ct: 0,
            cc: 0,
        }),
        (Affine(1000, -1, 0), "s32"),
        &|x| x as i32 as u32 as u64,
    );
}

/// D may be C's own registers: every source is read before D is written.
#[test]
fn mma_accumulates_in_place() {
    let mut body = PRELUDE.to_string();
    // A = all ones (f16 1.0 = 0x3C00), B = all ones: D = C + 16.
    for j in 0..4 {
        body += &format!("mov.b32 %r{}, 0x3C003C00;\n", 10 + j);
    }
    body += "mov.b32 %r20, 0x3C003C00;\nmov.b32 %r21, 0x3C003C00;\n";
    for j in 0..4 {
        body += &format!("mov.f32 %f{}, 0f3F800000;\n", 30 + j);
    }
    body += "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%f30, %f31, %f32, %f33}, {%r10, %r11, %r12, %r13}, {%r20, %r21}, {%f30, %f31, %f32, %f33};\n";
    body += "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%f30, %f31, %f32, %f33}, {%r10, %r11, %r12, %r13}, {%r20, %r21}, {%f30, %f31, %f32, %f33};\n";
    body += &probe("%f30");
    body += &probe("%f33");
    let p = program(&body, ".param .u64 p0");
    let got = probes(&p, &launch(&p, vec![vec![]], &[]));
    assert_eq!(got[0], [33f32.to_bits() as u64; 32]);
    assert_eq!(got[1], [33f32.to_bits() as u64; 32]);
}

/// movmatrix transposes the 8×8 b16 matrix: lane l holds M[l/4][2·(l%4) + h] = 16·row +
/// col before, and M[2·(l%4) + h][l/4] after.
#[test]
fn movmatrix_transposes() {
    let mut body = PRELUDE.to_string();
    // %r10 = halves (16g + 2t, 16g + 2t + 1).
    body += "shl.b32 %r11, %r91, 4;\nshl.b32 %r12, %r92, 1;\nadd.s32 %r13, %r11, %r12;\nadd.s32 %r14, %r13, 1;\nshl.b32 %r14, %r14, 16;\nor.b32 %r10, %r13, %r14;\n";
    body += "movmatrix.sync.aligned.m8n8.trans.b16 %r20, %r10;\n";
    body += &probe("%r10");
    body += &probe("%r20");
    let p = program(&body, ".param .u64 p0");
    let got = probes(&p, &launch(&p, vec![vec![]], &[]));
    for lane in 0..32u64 {
        let (g, t) = (lane / 4, lane % 4);
        assert_eq!(
            got[0][lane as usize],
            (16 * g + 2 * t) | (16 * g + 2 * t + 1) << 16
        );
        let want = (16 * (2 * t) + g) | (16 * (2 * t + 1) + g) << 16;
        assert_eq!(got[1][lane as usize], want, "lane {lane}");
    }
    // Lane 1 (row 0, columns 2, 3) receives M[2][0] = 32 and M[3][0] = 48.
    assert_eq!(got[1][1], 32 | 48 << 16);
}

fn list(p: &str, first: usize, n: usize) -> String {
    (first..first + n)
        .map(|x| format!("{p}{x}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The wmma_gemm kernel of tests/kernels/modern/wmma.cu, one k step, by hand: A row-major
/// and B column-major f16 with ldm = k, C row-major f32 with ldm = n.
fn wmma_gemm(space_a: &str) -> String {
    format!(
        "ld.param.u64 %rd1, [p0];\nld.param.u64 %rd2, [p1];\nld.param.u64 %rd3, [p2];\nld.param.u32 %r1, [p3];\nld.param.u32 %r2, [p4];\n\
wmma.load.a.sync.aligned.row.m16n16k16{space_a}.f16 {{{}}}, [%rd1], %r1;\n\
wmma.load.b.sync.aligned.col.m16n16k16.global.f16 {{{}}}, [%rd2], %r1;\n\
mov.f32 %f0, 0f00000000;\n\
wmma.mma.sync.aligned.row.col.m16n16k16.f32.f32 {{{}}}, {{{}}}, {{{}}}, {{%f0, %f0, %f0, %f0, %f0, %f0, %f0, %f0}};\n\
wmma.store.d.sync.aligned.row.m16n16k16.global.f32 [%rd3], {{{}}}, %r2;\n",
        list("%r", 10, 8),
        list("%r", 20, 8),
        list("%f", 10, 8),
        list("%r", 10, 8),
        list("%r", 20, 8),
        list("%f", 10, 8),
    )
}

const GEMM_PARAMS: &str =
    ".param .u64 p0, .param .u64 p1, .param .u64 p2, .param .u32 p3, .param .u32 p4";

/// The wmma loads and store of a 16×16 tile as the SASS of nvcc 13.5 for sm_90 (and sm_80)
/// does them, costed on compute capability 9.0, with k = 64 and n = 64 (the tests/kernels
/// wmma_gemm launch):
/// - `wmma.load.a.sync.aligned.row.m16n16k16.global.f16 {8 regs}, [a], 64` is 4 `LDG.E`
///   (4 bytes a lane): lane l reads row l/4 (+8 for the second and fourth), columns
///   2·(l%4) (+8 for the third and fourth), at `a + 128·row + 2·col` bytes. Each is 8 rows ×
///   16 bytes, 128 bytes apart: 8 sectors, 1 request; the two column halves of a row share
///   a sector, so the tile's 512 bytes cost 32 sectors (1024 bytes) in 4 requests;
/// - the column-major B load (`LDG.E` ×4) is the same pattern over B's columns (memory
///   rows), its registers in the other order: lane l reads column l/4 (+8 for the third and
///   fourth), rows 2·(l%4) (+8 for the second and fourth): 4 requests, 32 sectors;
/// - `wmma.store.d.sync.aligned.row.m16n16k16.global.f32 [c], {8 regs}, 64` is 4
///   `STG.E.64`: lane l writes row l/4 (+8), columns 2·(l%4) (+8), two floats, at
///   `c + 256·row + 4·col`: 8 rows × 32 bytes, one whole sector each: 4 requests, 32
///   sectors for the tile's 1024 bytes.
#[test]
fn wmma_loads_and_store_are_the_sass_accesses() {
    let p = program(&wmma_gemm(".global"), GEMM_PARAMS);
    assert!(!p.needs_memory);
    let l = launch(&p, vec![vec![], vec![], vec![]], &[64, 64]);
    let v = accesses(&p, &l);
    let (a0, b0, c0) = (
        window::ALLOC_BASE,
        window::ALLOC_BASE + window::ALLOC_SPACING,
        window::ALLOC_BASE + 2 * window::ALLOC_SPACING,
    );
    assert_eq!(v.len(), 12);
    let cc90 = arch::lookup(ComputeCapability::new(9, 0)).unwrap();
    let sites: Vec<u32> = v.iter().map(|x| x.0).collect();
    assert_eq!(
        sites,
        [0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2].map(|k| sites[0] + k)
    );
    // (base, register offsets in bytes, row bytes, bytes per lane, op)
    let checks = [
        (a0, [0, 8 * 128, 16, 8 * 128 + 16], 128, 4, Op::Load),
        (b0, [0, 16, 8 * 128, 8 * 128 + 16], 128, 4, Op::Load),
        (c0, [0, 8 * 256, 32, 8 * 256 + 32], 256, 8, Op::Store),
    ];
    for (ins, (base, offs, row, w, op)) in checks.into_iter().enumerate() {
        let mut total = warpscope_model::Cost::default();
        for (r, off) in offs.into_iter().enumerate() {
            let a = v[4 * ins + r].1;
            assert_eq!(
                (a.op, a.space, a.width, a.mask),
                (op, Space::Global, w, u32::MAX)
            );
            for lane in 0..32u64 {
                let want = base + off + row * (lane / 4) + w as u64 * (lane % 4);
                assert_eq!(
                    a.addrs[lane as usize], want,
                    "instruction {ins} access {r} lane {lane}"
                );
            }
            let c = warpscope_model::cost(cc90, &Config::default(), &a);
            assert_eq!((c.requests, c.sectors), (1, 8));
            total.add(&c);
        }
        assert_eq!((total.requests, total.sectors), (4, 32));
        assert_eq!(total.bytes_requested, if w == 4 { 512 } else { 1024 });
    }
}

/// From shared memory the A fragment is one `LDSM.16.M88.4` (ldmatrix .x4): lane 8i + r
/// gives the 16-byte row r of block i, blocks (rows 0–7, cols 0–7), (rows 8–15, cols 0–7),
/// (rows 0–7, cols 8–15), (rows 8–15, cols 8–15). With ldm = 24 halves (48-byte rows) the
/// rows of each 8-lane phase fall in distinct banks: 4 wavefronts for 512 bytes.
#[test]
fn wmma_load_from_shared_is_one_ldmatrix() {
    let body = format!(
        "mov.u64 %rd1, sA;\nld.param.u32 %r1, [p0];\n\
wmma.load.a.sync.aligned.row.m16n16k16.shared.f16 {{{}}}, [%rd1], %r1;\n",
        list("%r", 10, 8)
    );
    let text = format!(
        ".version 8.5\n.target sm_90\n.address_size 64\n.shared .align 16 .b8 sA[1024];\n.visible .entry k(.param .u32 p0)\n{{\n{REGS}{body}\nret;\n}}\n"
    );
    let m = warpscope_ptx::parse(&text).unwrap();
    let p = Program::decode(&m, warpscope_ptx::find_entry(&m, "k").unwrap()).unwrap();
    let v = accesses(&p, &launch(&p, vec![], &[24]));
    assert_eq!(v.len(), 1);
    let a = v[0].1;
    assert_eq!(
        (a.op, a.space, a.width, a.mask),
        (Op::Load, Space::Shared, 16, u32::MAX)
    );
    let base = a.addrs[0];
    for lane in 0..32u64 {
        let (i, r) = (lane / 8, lane % 8);
        let (row, col) = (r + 8 * (i % 2), 8 * (i / 2));
        assert_eq!(
            a.addrs[lane as usize] - base,
            48 * row + 2 * col,
            "lane {lane}"
        );
    }
    let cc90 = arch::lookup(ComputeCapability::new(9, 0)).unwrap();
    let c = warpscope_model::cost(cc90, &Config::default(), &a);
    assert_eq!((c.requests, c.wavefronts, c.bytes_requested), (1, 4, 512));
}

/// wmma through memory: A[i][k] = i + k, B[k][n] = (k == n) (identity), so D = A's first
/// columns… all 16: D[i][n] = i + n. The accumulator register j of lane (g, t) holds (as
/// measured on an H100) row g + 8·((j%4)/2), column 8·(j/4) + 2t + j%2; wmma.store puts
/// each element back where a row-major 16×16 f32 tile has it, read back by 8 probes of
/// `c[32·i + lane]`.
#[test]
fn wmma_values_follow_the_measured_layout() {
    let h = |x: f32| half::f16::from_f32(x).to_bits().to_le_bytes();
    let a: Vec<u8> = (0..16 * 16)
        .flat_map(|e| h((e / 16 + e % 16) as f32))
        .collect();
    // B column-major: element (k, n) at n·16 + k.
    let b: Vec<u8> = (0..16 * 16)
        .flat_map(|e| h(if e / 16 == e % 16 { 1.0 } else { 0.0 }))
        .collect();
    let mut body = wmma_gemm(".global");
    body += "ld.param.u64 %rd30, [p5];\n";
    // The accumulator registers, then c[32·i + lane] after the store.
    for j in 0..8 {
        body += &probe(&format!("%f{}", 10 + j));
    }
    body += "mov.u32 %r90, %laneid;\nmul.wide.u32 %rd33, %r90, 4;\nadd.s64 %rd34, %rd3, %rd33;\n";
    for i in 0..8 {
        body += &format!("ld.global.f32 %f40, [%rd34+{}];\n", 128 * i);
        body += &probe("%f40");
    }
    let p = program(&body, &format!("{GEMM_PARAMS}, .param .u64 p5"));
    assert!(p.needs_memory);
    let l = launch(&p, vec![a, b, vec![], vec![]], &[16, 16]);
    // Reorder the parameters: p3, p4 are the u32s, p5 the probe base (allocation 3).
    let mut l2 = l.clone();
    l2.args = vec![
        l.args[0].clone(),
        l.args[1].clone(),
        l.args[2].clone(),
        l.args[4].clone(),
        l.args[5].clone(),
        l.args[3].clone(),
    ];
    let got: Vec<[u64; 32]> = accesses(&p, &l2)
        .into_iter()
        .filter(|(_, a, _)| a.op == Op::Store && a.width == 1)
        .map(|(_, a, _)| {
            a.addrs
                .map(|x| x - (window::ALLOC_BASE + 3 * window::ALLOC_SPACING))
        })
        .collect();
    assert_eq!(got.len(), 16);
    let bits = |x: u64| (x as f32).to_bits() as u64;
    for lane in 0..32u64 {
        let (g, t) = (lane / 4, lane % 4);
        for j in 0..8u64 {
            let (row, col) = (g + 8 * ((j % 4) / 2), 8 * (j / 4) + 2 * t + j % 2);
            assert_eq!(
                got[j as usize][lane as usize],
                bits(row + col),
                "lane {lane} d{j}"
            );
        }
        for i in 0..8u64 {
            let e = 32 * i + lane;
            assert_eq!(
                got[8 + i as usize][lane as usize],
                bits(e / 16 + e % 16),
                "c[{e}]"
            );
        }
    }
}

/// The error of a decode that must fail.
fn decode_error(body: &str) -> Error {
    match try_program(body, ".param .u64 p0") {
        Ok(_) => panic!("decoded: {body}"),
        Err(e) => e,
    }
}

#[test]
fn malformed_tensor_instructions_are_errors_naming_them() {
    // A fragment of the wrong size.
    let e = decode_error("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%f0, %f1, %f2, %f3}, {%r0, %r1, %r2}, {%r4, %r5}, {%f4, %f5, %f6, %f7};");
    assert!(
        matches!(&e, Error::Invalid { msg, .. } if msg.contains("mma.sync.aligned.m16n8k16") && msg.contains("A fragment") && msg.contains("takes 4 registers, 3 given")),
        "{e}"
    );
    // An unknown shape/type combination.
    let e = decode_error("mma.sync.aligned.m16n8k12.row.col.f32.f16.f16.f32 {%f0, %f1, %f2, %f3}, {%r0, %r1, %r2, %r3}, {%r4, %r5}, {%f4, %f5, %f6, %f7};");
    assert!(
        matches!(&e, Error::Unsupported { instr, .. } if instr.starts_with("mma.sync.aligned.m16n8k12")),
        "{e}"
    );
    let e = decode_error("wmma.load.a.sync.aligned.row.m16n16k16.global.f32 {%r0, %r1, %r2, %r3, %r4, %r5, %r6, %r7}, [%rd1], 16;");
    assert!(
        matches!(&e, Error::Unsupported { instr, .. } if instr.starts_with("wmma.load.a")),
        "{e}"
    );
    let e =
        decode_error("wmma.store.d.sync.aligned.row.m16n16k16.global.f32 [%rd1], {%f0, %f1}, 16;");
    assert!(
        matches!(&e, Error::Invalid { msg, .. } if msg.contains("wmma.store.d") && msg.contains("takes 8 registers, 2 given")),
        "{e}"
    );
    // Operands out of place: an address for a fragment, a register for an address.
    let e = decode_error("wmma.store.d.sync.aligned.row.m16n16k16.global.f32 {%f0}, [%rd1];");
    assert!(
        matches!(&e, Error::Invalid { msg, .. } if msg.contains("wmma.store.d") && msg.contains("must be a fragment")),
        "{e}"
    );
    let e = decode_error("wmma.load.c.sync.aligned.row.m16n16k16.global.f32 {%f0, %f1, %f2, %f3, %f4, %f5, %f6, %f7}, %rd1;");
    assert!(
        matches!(&e, Error::Invalid { msg, .. } if msg.contains("wmma.load.c") && msg.contains("must be an address")),
        "{e}"
    );
    // No shape, no layout, a sink.
    let e = decode_error("mma.sync.aligned.row.col.f32.f16.f16.f32 {%f0}, {%r0}, {%r4}, {%f4};");
    assert!(
        matches!(&e, Error::Invalid { msg, .. } if msg.contains("no shape")),
        "{e}"
    );
    let e = decode_error("wmma.load.c.sync.aligned.m16n16k16.global.f32 {%f0, %f1, %f2, %f3, %f4, %f5, %f6, %f7}, [%rd1];");
    assert!(
        matches!(&e, Error::Invalid { msg, .. } if msg.contains("layout")),
        "{e}"
    );
    let e = decode_error("movmatrix.sync.aligned.m8n8.trans.b16 _, %r1;");
    assert!(
        matches!(&e, Error::Invalid { msg, .. } if msg.contains("movmatrix")),
        "{e}"
    );
    // tcgen05.mma.sp is not run (the others are: tests/tcgen05.rs; wgmma: tests/wgmma.rs).
    let e =
        decode_error("tcgen05.mma.sp.cta_group::1.kind::f16 [%r1], %rd1, %rd1, [%r1], %r1, %p1;");
    assert!(
        matches!(&e, Error::Unsupported { instr, .. } if instr.starts_with("tcgen05")),
        "{e}"
    );
}

/// Shapes and types beyond the ones above decode and run: f64, bf16, e4m3, s4, b1, the
/// m8n8k4 quad-pairs; accumulators f16.
#[test]
fn other_mma_shapes_decode_and_run() {
    let cases = [
        "mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%fd0, %fd1}, {%fd2}, {%fd3}, {%fd4, %fd5};",
        "mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64 {%fd0, %fd1, %fd2, %fd3}, {%fd4, %fd5, %fd6, %fd7, %fd8, %fd9, %fd10, %fd11}, {%fd12, %fd13, %fd14, %fd15}, {%fd0, %fd1, %fd2, %fd3};",
        "mma.sync.aligned.m16n8k8.row.col.f32.bf16.bf16.f32 {%f0, %f1, %f2, %f3}, {%r0, %r1}, {%r4}, {%f4, %f5, %f6, %f7};",
        "mma.sync.aligned.m16n8k8.row.col.f16.f16.f16.f16 {%r0, %r1}, {%r2, %r3}, {%r4}, {%r6, %r7};",
        "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e5m2.f32 {%f0, %f1, %f2, %f3}, {%r0, %r1, %r2, %r3}, {%r4, %r5}, {%f4, %f5, %f6, %f7};",
        "mma.sync.aligned.m16n8k64.row.col.satfinite.s32.s4.u4.s32 {%r0, %r1, %r2, %r3}, {%r4, %r5, %r6, %r7}, {%r8, %r9}, {%r10, %r11, %r12, %r13};",
        "mma.sync.aligned.m16n8k256.row.col.s32.b1.b1.s32.xor.popc {%r0, %r1, %r2, %r3}, {%r4, %r5, %r6, %r7}, {%r8, %r9}, {%r10, %r11, %r12, %r13};",
        "mma.sync.aligned.m8n8k16.row.col.s32.u8.s8.s32 {%r0, %r1}, {%r2}, {%r3}, {%r4, %r5};",
        "mma.sync.aligned.m8n8k4.col.row.f32.f16.f16.f16 {%f0, %f1, %f2, %f3, %f4, %f5, %f6, %f7}, {%r0, %r1}, {%r2, %r3}, {%r4, %r5, %r6, %r7};",
        "wmma.mma.sync.aligned.row.col.m16n16k8.f32.tf32.tf32.f32 {%f0, %f1, %f2, %f3, %f4, %f5, %f6, %f7}, {%r0, %r1, %r2, %r3}, {%r4, %r5, %r6, %r7}, {%f8, %f9, %f10, %f11, %f12, %f13, %f14, %f15};",
        "wmma.mma.xor.popc.sync.aligned.row.col.m8n8k128.s32.b1.b1.s32 {%r0, %r1}, {%r2}, {%r3}, {%r4, %r5};",
    ];
    for c in cases {
        let p = program(c, ".param .u64 p0");
        accesses(&p, &launch(&p, vec![vec![]], &[]));
    }
}

/// One case of tests/data/h100/mma_sp/checks.txt: an `mma.sp` instruction (with its
/// selector), how its operands were drawn, and per lane the registers in and D out.
struct SpCase {
    instr: String,
    sel: u32,
    counts: [usize; 3],
    exact: bool,
    lanes: Vec<Vec<u32>>,
}

fn sp_cases() -> Vec<SpCase> {
    let text = include_str!("../../../tests/data/h100/mma_sp/checks.txt");
    let mut cases: Vec<SpCase> = Vec::new();
    for line in text.lines().filter(|l| !l.starts_with('#')) {
        if let Some(h) = line.strip_prefix("case ") {
            let w: Vec<&str> = h.split(' ').collect();
            let num = |k: &str| -> usize {
                w.iter()
                    .find_map(|x| x.strip_prefix(k))
                    .unwrap()
                    .parse()
                    .unwrap()
            };
            cases.push(SpCase {
                instr: w[0].to_string(),
                sel: num("sel=") as u32,
                counts: [num("na="), num("nb="), num("nc=")],
                exact: h.ends_with("mode=exact"),
                lanes: Vec::new(),
            });
        } else {
            let regs = line
                .split(' ')
                .map(|x| u32::from_str_radix(x, 16).unwrap())
                .collect();
            cases.last_mut().unwrap().lanes.push(regs);
        }
    }
    cases
}

/// Runs `case`'s instruction on its inputs (each lane loads its registers from `p1`) and
/// returns each lane's D registers, `[register][lane]`.
fn run_sp(case: &SpCase) -> Result<Vec<[u64; 32]>, Error> {
    let [na, nb, nc] = case.counts;
    let n_in = na + nb + nc + 1;
    let mut body = format!("{PRELUDE}ld.param.u64 %rd1, [p1];\nmul.wide.u32 %rd2, %r90, {};\nadd.s64 %rd3, %rd1, %rd2;\n", 4 * n_in);
    for i in 0..n_in {
        body += &format!("ld.global.u32 %r{}, [%rd3+{}];\n", 10 + i, 4 * i);
    }
    let e = 10 + n_in - 1;
    body += &format!(
        "{} {{{}}}, {{{}}}, {{{}}}, {{{}}}, %r{e}, {};\n",
        case.instr,
        list("%r", 40, nc),
        list("%r", 10, na),
        list("%r", 10 + na, nb),
        list("%r", 10 + na + nb, nc),
        case.sel
    );
    for j in 0..nc {
        body += &probe(&format!("%r{}", 40 + j));
    }
    let p = try_program(&body, ".param .u64 p0, .param .u64 p1")?;
    let bytes: Vec<u8> = case
        .lanes
        .iter()
        .flat_map(|l| l[..n_in].iter().flat_map(|x| x.to_le_bytes()))
        .collect();
    let l = launch(&p, vec![vec![], bytes], &[]);
    let mut v = Vec::new();
    p.run(&l, &mut |s, a, o| v.push((s, *a, o)))?;
    Ok(v.into_iter()
        .filter(|(_, a, _)| a.op == Op::Store && a.width == 1)
        .map(|(_, a, _)| a.addrs.map(|x| x - window::ALLOC_BASE))
        .collect())
}

/// `mma.sp` and `mma.sp::ordered_metadata` of every shape and type of PTX ISA §9.7.14.6
/// that sm_90 runs, every selector, against an H100 (tests/data/h100/mma_sp/checks.txt,
/// from scripts/h100/mma_sp): random operands and random valid metadata in every lane
/// (the lanes the selector leaves out included). D is bit-exact on the operands whose sums
/// are exact ("exact": small integers, all integer types at full range) and on the
/// arbitrary float operands whenever D is f16; an f32 D of arbitrary floats differs from
/// the exact sum rounded once in about a third of the registers, by up to 58 ulps where
/// the sum nearly cancels: the H100 accumulates with less precision (the order and the
/// intermediate precision are unspecified [PTX ISA §9.7.14.5.14]; fp8 runs as two f16
/// sparse MMAs, each rounded).
#[test]
fn mma_sp_matches_the_h100() {
    let cases = sp_cases();
    assert_eq!(cases.len(), 68);
    let mut float_cases = 0;
    for case in &cases {
        let got = run_sp(case).unwrap_or_else(|e| panic!("{} sel {}: {e}", case.instr, case.sel));
        let [na, nb, nc] = case.counts;
        let first_d = na + nb + nc + 1;
        assert_eq!(got.len(), nc);
        let mut diffs = 0;
        let mut max_ulps = 0i64;
        for (lane, regs) in case.lanes.iter().enumerate() {
            for j in 0..nc {
                if got[j][lane] != regs[first_d + j] as u64 {
                    diffs += 1;
                    let ord = |x: u32| {
                        if x >> 31 == 1 {
                            -((x & 0x7FFF_FFFF) as i64)
                        } else {
                            x as i64
                        }
                    };
                    max_ulps =
                        max_ulps.max((ord(got[j][lane] as u32) - ord(regs[first_d + j])).abs());
                    assert!(
                        !case.exact,
                        "{} sel {} lane {lane} d{j}: {:#x}, the H100 {:#x}",
                        case.instr,
                        case.sel,
                        got[j][lane],
                        regs[first_d + j]
                    );
                }
            }
        }
        if !case.exact {
            assert!(
                max_ulps <= 64,
                "{} sel {}: {max_ulps} ulps",
                case.instr,
                case.sel
            );
            float_cases += 1;
            eprintln!(
                "{} sel {} float: {diffs} registers differ, by {max_ulps} ulps at most",
                case.instr, case.sel
            );
        }
    }
    assert!(float_cases > 0);
}

/// Plain `mma.sp` takes a chunk's two indices in either order (the H100 puts each non-zero
/// at its own index): swapping every A register's two f16 non-zeros and their metadata
/// fields gives the H100's D of the unswapped case; `::ordered_metadata` requires them in
/// increasing order, and its fault names the thread holding the descending pair.
#[test]
fn mma_sp_descending_metadata() {
    let cases = sp_cases();
    let base = cases
        .iter()
        .find(|c| {
            c.instr == "mma.sp.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"
                && c.sel == 0
                && c.exact
        })
        .unwrap();
    let mut swapped = SpCase {
        instr: base.instr.clone(),
        sel: 0,
        counts: base.counts,
        exact: true,
        lanes: base.lanes.clone(),
    };
    for regs in &mut swapped.lanes {
        // A: two registers, each one chunk's two halves (compressed columns 2t, 2t + 1).
        for a in &mut regs[..2] {
            *a = a.rotate_left(16);
        }
        // E (after A 2, B 2, C 4): every nibble's two 2-bit indices exchanged.
        let e = &mut regs[8];
        *e = ((*e & 0x3333_3333) << 2) | ((*e >> 2) & 0x3333_3333);
    }
    let got = run_sp(&swapped).unwrap();
    for (lane, regs) in base.lanes.iter().enumerate() {
        for j in 0..4 {
            assert_eq!(got[j][lane], regs[9 + j] as u64, "lane {lane} d{j}");
        }
    }
    swapped.instr = swapped
        .instr
        .replace("mma.sp.", "mma.sp::ordered_metadata.");
    match run_sp(&swapped) {
        Err(Error::Fault {
            msg, thread, block, ..
        }) => {
            assert!(
                msg.contains("mma.sp") && msg.contains("increasing order"),
                "{msg}"
            );
            assert_eq!((thread, block), ([0, 0, 0], [0, 0, 0]), "{msg}");
        }
        r => panic!("{:?}", r.map(|_| ())),
    }
}

/// Invalid metadata is a fault naming the thread that holds it: equal indices (0b0101), and
/// for tf32 any nibble but 0b0100 and 0b1110; lanes the selector leaves out are not read.
#[test]
fn mma_sp_invalid_metadata_faults() {
    let cases = sp_cases();
    let pick = |instr: &str, sel: u32| {
        let c = cases
            .iter()
            .find(|c| c.instr == instr && c.sel == sel && c.exact)
            .unwrap();
        SpCase {
            instr: c.instr.clone(),
            sel,
            counts: c.counts,
            exact: true,
            lanes: c.lanes.clone(),
        }
    };
    // f16 m16n8k32, selector 1: threads 2 and 3 of each group supply the metadata.
    let mut c = pick(
        "mma.sp::ordered_metadata.sync.aligned.m16n8k32.row.col.f32.f16.f16.f32",
        1,
    );
    let e = 4 + 4 + 4;
    let want: Vec<u32> = c.lanes.iter().map(|l| l[e + 1]).collect();
    c.lanes[9][e] = 0x5555_5555; // lane 9 = thread 1 of group 2: not read
    let got = run_sp(&c).unwrap();
    for (lane, w) in want.iter().enumerate() {
        assert_eq!(got[0][lane], *w as u64);
    }
    c.lanes[10][e] = (c.lanes[10][e] & !0xF0) | 0x50; // thread 2 of group 2, row 2, chunk 1
    match run_sp(&c) {
        Err(Error::Fault { msg, thread, .. }) => {
            assert_eq!(thread, [10, 0, 0], "{msg}");
            assert!(
                msg.contains("row 2, chunk 1") && msg.contains("0b0101"),
                "{msg}"
            );
        }
        r => panic!("{:?}", r.map(|_| ())),
    }
    let mut c = pick(
        "mma.sp::ordered_metadata.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32",
        3,
    );
    c.lanes[31][8] = (c.lanes[31][8] & !0xF) | 0x6; // E after A 2, B 2, C 4; lane 31 = thread 3 of group 7
    match run_sp(&c) {
        Err(Error::Fault { msg, thread, .. }) => {
            assert_eq!(thread, [31, 0, 0], "{msg}");
            assert!(
                msg.contains("row 7, chunk 0") && msg.contains("0b0110") && msg.contains("tf32"),
                "{msg}"
            );
        }
        r => panic!("{:?}", r.map(|_| ())),
    }
}

#[test]
fn malformed_sparse_mma_is_an_error_naming_it() {
    let sp = |s: &str| decode_error(s);
    // The A fragment holds k/2 columns: 2 registers for f16 m16n8k16, not the dense 4.
    let e = sp("mma.sp::ordered_metadata.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%f0, %f1, %f2, %f3}, {%r0, %r1, %r2, %r3}, {%r4, %r5}, {%f4, %f5, %f6, %f7}, %r9, 0;");
    assert!(
        matches!(&e, Error::Invalid { msg, .. } if msg.contains("mma.sp::ordered_metadata") && msg.contains("A fragment") && msg.contains("takes 2 registers, 4 given")),
        "{e}"
    );
    // Selectors beyond the shape's: f16 m16n8k32 takes 0 or 1, s8 m16n8k64 only 0.
    let e = sp("mma.sp.sync.aligned.m16n8k32.row.col.f32.f16.f16.f32 {%f0, %f1, %f2, %f3}, {%r0, %r1, %r2, %r3}, {%r4, %r5, %r6, %r7}, {%f4, %f5, %f6, %f7}, %r9, 2;");
    assert!(
        matches!(&e, Error::Invalid { msg, .. } if msg.contains("sparsity selector") && msg.contains("0 to 1") && msg.contains("2 given")),
        "{e}"
    );
    let e = sp("mma.sp.sync.aligned.m16n8k64.row.col.s32.s8.s8.s32 {%r0, %r1, %r2, %r3}, {%r4, %r5, %r6, %r7}, {%r8, %r10, %r11, %r12}, {%r0, %r1, %r2, %r3}, %r9, 1;");
    assert!(
        matches!(&e, Error::Invalid { msg, .. } if msg.contains("sparsity selector") && msg.contains("is 0 ")),
        "{e}"
    );
    // The selector is a constant; e and f are both required.
    let e = sp("mma.sp.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%f0, %f1, %f2, %f3}, {%r0, %r1}, {%r4, %r5}, {%f4, %f5, %f6, %f7}, %r9, %r8;");
    assert!(
        matches!(&e, Error::Invalid { msg, .. } if msg.contains("integer constant")),
        "{e}"
    );
    let e = sp("mma.sp.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%f0, %f1, %f2, %f3}, {%r0, %r1}, {%r4, %r5}, {%f4, %f5, %f6, %f7}, %r9;");
    assert!(
        matches!(&e, Error::Invalid { msg, .. } if msg.contains("e, f")),
        "{e}"
    );
    // A shape/type the table lacks, and the sm_120 .kind:: forms.
    let e = sp("mma.sp.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%f0, %f1, %f2, %f3}, {%r0}, {%r4}, {%f4, %f5, %f6, %f7}, %r9, 0;");
    assert!(
        matches!(&e, Error::Unsupported { instr, why, .. } if instr.starts_with("mma.sp") && why.contains("§9.7.14.6")),
        "{e}"
    );
    let e = sp("mma.sp::ordered_metadata.sync.aligned.m16n8k64.row.col.kind::f8f6f4.f32.e3m2.e2m1.f32 {%f0, %f1, %f2, %f3}, {%r0, %r1, %r2, %r3}, {%r4, %r5, %r6, %r7}, {%f4, %f5, %f6, %f7}, %r9, 0;");
    assert!(
        matches!(&e, Error::Unsupported { why, .. } if why.contains(".kind::")),
        "{e}"
    );
}
