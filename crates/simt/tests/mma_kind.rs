//! sm_120's narrow-float `mma.sync` on hand-written PTX, against results computed by hand:
//! `.kind::f8f6f4` (e2m1, e3m2, e2m3 in 8-bit containers, e4m3) and the block-scaled
//! `.kind::mxf8f6f4` (scale_vec::1X, ue8m0), `.kind::mxf4` (2X, ue8m0) and `.kind::mxf4nvf4`
//! (4X, ue4m3), and the errors of malformed ones. (The PTX here assembles with ptxas 13 for
//! sm_120a; no sm_120 GPU ran it.)
//!
//! Each lane loads its fragment registers from `p0` (16 words a lane: A, B, C, scale-a,
//! scale-b), runs the mma, and probes its D registers: `st.global.u8 [p1 + bits]`, so the
//! store's lane addresses are D's bits.

use warpscope_model::Op;
use warpscope_simt::decode::window;
use warpscope_simt::{Alloc, Error, Launch, Program};

const P0: u64 = window::ALLOC_BASE;
const P1: u64 = window::ALLOC_BASE + window::ALLOC_SPACING;

/// The kernel: loads A (`na` registers), B (2), C (`nc`), the two scale registers, runs
/// `mma` (its operands filled in), probes the `nd` D registers.
fn kernel(mma: &str, na: usize, nc: usize, nd: usize) -> String {
    let mut s = String::from(
        ".version 8.7\n.target sm_120a\n.address_size 64\n\
         .visible .entry k(.param .u64 p0, .param .u64 p1)\n{\n\
         .reg .b32 %r<64>;\n.reg .b64 %rd<16>;\n\
         ld.param.u64 %rd1, [p0];\nld.param.u64 %rd2, [p1];\nmov.u32 %r60, %laneid;\n\
         mul.wide.u32 %rd3, %r60, 64;\nadd.s64 %rd4, %rd1, %rd3;\n",
    );
    for i in 0..16 {
        s += &format!("ld.global.b32 %r{}, [%rd4+{}];\n", i + 1, 4 * i);
    }
    let regs = |from: usize, n: usize| {
        (from..from + n)
            .map(|i| format!("%r{i}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let d = (0..nd)
        .map(|i| format!("%r{}", 40 + i))
        .collect::<Vec<_>>()
        .join(", ");
    s += &mma
        .replace("SA", "{%r11}")
        .replace("SB", "{%r12}")
        .replace("D", &format!("{{{d}}}"))
        .replace("A", &format!("{{{}}}", regs(1, na)))
        .replace("B", &format!("{{{}}}", regs(5, 2)))
        .replace("C", &format!("{{{}}}", regs(7, nc)));
    s += ";\n";
    for i in 0..nd {
        s += &format!(
            "cvt.u64.u32 %rd5, %r{};\nadd.s64 %rd6, %rd2, %rd5;\nst.global.u8 [%rd6], 0;\n",
            40 + i
        );
    }
    s + "ret;\n}\n"
}

fn try_program(text: &str) -> Result<Program, Error> {
    let m = warpscope_ptx::parse(text).unwrap();
    Program::decode(&m, warpscope_ptx::find_entry(&m, "k").unwrap())
}

/// Runs `prog` with lane `l`'s 16 input words `words(l)`; D's bits `[register][lane]`.
fn run(prog: &Program, words: impl Fn(usize) -> [u32; 16]) -> Result<Vec<[u32; 32]>, Error> {
    let image: Vec<u8> = (0..32)
        .flat_map(|l| words(l).into_iter().flat_map(|w| w.to_le_bytes()))
        .collect();
    let alloc = |k: u64, base| {
        (
            Alloc {
                name: format!("p{k}"),
                base,
                size: None,
            },
            if k == 0 {
                warpscope_init::Contents::Bytes(image.clone().into())
            } else {
                warpscope_init::Contents::Zero
            },
        )
    };
    let launch = Launch {
        args: vec![P0.to_le_bytes().to_vec(), P1.to_le_bytes().to_vec()],
        allocs: vec![alloc(0, P0), alloc(1, P1)],
        max_steps: 1 << 20,
        ..Default::default()
    };
    let mut out = Vec::new();
    prog.run(&launch, &mut |_, a, _| {
        if a.op == Op::Store && a.width == 1 {
            out.push(a.addrs.map(|x| (x - P1) as u32));
        }
    })?;
    Ok(out)
}

/// The bits of `v` in a float format of `e` exponent and `m` mantissa bits (bias
/// 2^(e−1) − 1, no infinities): found by decoding every code (values chosen exact).
fn code(v: f64, e: u32, m: u32) -> u32 {
    let bias = (1i32 << (e - 1)) - 1;
    (0..1u32 << (1 + e + m))
        .find(|&c| {
            let (s, x, f) = (c >> (e + m), (c >> m) & ((1 << e) - 1), c & ((1 << m) - 1));
            let mag = if x == 0 {
                f as f64 * 2f64.powi(1 - bias - m as i32)
            } else {
                (1.0 + f as f64 / (1u32 << m) as f64) * 2f64.powi(x as i32 - bias)
            };
            (if s == 1 { -mag } else { mag }) == v
        })
        .unwrap_or_else(|| panic!("{v} is not exact in e{e}m{m}"))
}

/// The fragment layouts of mma.m16n8k32 (8-bit elements) and m16n8k64 (4-bit) [PTX ISA
/// §9.7.14.5.x, "Matrix fragments for mma.m16n8k32 / m16n8k64"]: element `s` of register `j`
/// of lane (g, t), `e` elements a register. A: row g + 8·(j mod 2), column e·t + s +
/// 4e·⌊j/2⌋; B: row e·t + s + 4e·j, column g; C/D: element i is row g + 8·⌊i/2⌋, column
/// 2t + i mod 2.
fn a_at(l: usize, j: usize, s: usize, e: usize) -> (usize, usize) {
    (l / 4 + 8 * (j % 2), e * (l % 4) + s + 4 * e * (j / 2))
}
fn b_at(l: usize, j: usize, s: usize, e: usize) -> (usize, usize) {
    (e * (l % 4) + s + 4 * e * j, l / 4)
}
fn d_at(l: usize, i: usize) -> (usize, usize) {
    (l / 4 + 8 * (i / 2), 2 * (l % 4) + i % 2)
}

/// A register of `e` elements of `bits` bits each, element s = `f(s)`.
fn pack(e: usize, bits: usize, f: impl Fn(usize) -> u32) -> u32 {
    (0..e).fold(0, |w, s| w | f(s) << (bits * s))
}

/// D as f32 values, `[row][col]`, from the probes of a 4-register f32 D.
fn d_f32(out: &[[u32; 32]]) -> Vec<Vec<f32>> {
    let mut d = vec![vec![f32::NAN; 8]; 16];
    for (i, reg) in out.iter().enumerate() {
        for (l, &bits) in reg.iter().enumerate() {
            let (r, c) = d_at(l, i);
            d[r][c] = f32::from_bits(bits);
        }
    }
    d
}

#[test]
fn f8f6f4_e2m1_by_e3m2_in_containers() {
    // A (16×32, e2m1 in bits 5–2 of each byte): 1 where k = m; B (32×8, e3m2 in bits 7–2):
    // (k mod 4) + (n mod 4); C = m/4. D = B[m][n] + C = (m mod 4) + (n mod 4) + m/4.
    let p = try_program(&kernel(
        "mma.sync.aligned.kind::f8f6f4.m16n8k32.row.col.f32.e2m1.e3m2.f32 D, A, B, C",
        4,
        4,
        4,
    ))
    .unwrap();
    let a = |m: usize, k: usize| if k == m { 1.0 } else { 0.0 };
    let b = |k: usize, n: usize| ((k % 4) + (n % 4)) as f64;
    let out = run(&p, |l| {
        let mut w = [0u32; 16];
        for (j, x) in w.iter_mut().enumerate().take(4) {
            *x = pack(4, 8, |s| {
                let (m, k) = a_at(l, j, s, 4);
                code(a(m, k), 2, 1) << 2
            });
        }
        for j in 0..2 {
            w[4 + j] = pack(4, 8, |s| {
                let (k, n) = b_at(l, j, s, 4);
                code(b(k, n), 3, 2) << 2
            });
        }
        for i in 0..4 {
            w[6 + i] = (d_at(l, i).0 as f32 / 4.0).to_bits();
        }
        w
    })
    .unwrap();
    let d = d_f32(&out);
    for (m, row) in d.iter().enumerate() {
        for (n, &x) in row.iter().enumerate() {
            assert_eq!(
                x,
                ((m % 4) + (n % 4)) as f32 + m as f32 / 4.0,
                "D[{m}][{n}]"
            );
        }
    }
}

#[test]
fn f8f6f4_e4m3_by_e2m3_into_f16() {
    // A = 1.0 (e4m3 0x38) in columns 0–3, else 0; B (e2m3 in bits 7–2) = (k mod 4)/2 +
    // (n mod 2); C = 1 (f16). D[m][n] = Σ_{k<4} B[k][n] + 1 = 3 + 4·(n mod 2) + 1.
    let p = try_program(&kernel(
        "mma.sync.aligned.kind::f8f6f4.m16n8k32.row.col.f16.e4m3.e2m3.f16 D, A, B, C",
        4,
        2,
        2,
    ))
    .unwrap();
    let out = run(&p, |l| {
        let mut w = [0u32; 16];
        for (j, x) in w.iter_mut().enumerate().take(4) {
            *x = pack(4, 8, |s| if a_at(l, j, s, 4).1 < 4 { 0x38 } else { 0 });
        }
        for j in 0..2 {
            w[4 + j] = pack(4, 8, |s| {
                let (k, n) = b_at(l, j, s, 4);
                code((k % 4) as f64 / 2.0 + (n % 2) as f64, 2, 3) << 2
            });
        }
        // f16 accumulators, two to a register.
        w[6] = 0x3C00_3C00;
        w[7] = 0x3C00_3C00;
        w
    })
    .unwrap();
    for (j, reg) in out.iter().enumerate() {
        for (l, &bits) in reg.iter().enumerate() {
            for h in 0..2 {
                let (_, n) = d_at(l, 2 * j + h);
                let x = half::f16::from_bits((bits >> (16 * h)) as u16).to_f32();
                assert_eq!(
                    x,
                    (4 + 4 * (n % 2)) as f32,
                    "lane {l} register {j} half {h}"
                );
            }
        }
    }
}

#[test]
fn mxf8f6f4_block_scales_come_from_the_selected_lanes_and_bytes() {
    // A = B = 1.0 (e4m3), C = 0: D[m][n] = 32 · SFA[m] · SFB[n]. With selectors {2, 1} and
    // {2, 3}: SFA[m] is byte 2 of lane 4(m mod 8) + 2 + ⌊m/8⌋'s scale-a, here 2^(m mod 3);
    // SFB[n] byte 2 of lane 4n + 3's scale-b, here 2^−(n mod 2). Every other byte and lane
    // holds 0xFF (NaN in ue8m0): a wrong selection shows as NaN.
    let p = try_program(&kernel(
        "mma.sync.aligned.kind::mxf8f6f4.block_scale.scale_vec::1X.m16n8k32.row.col.f32.e4m3.e4m3.f32.ue8m0 D, A, B, C, SA, {2, 1}, SB, {2, 3}",
        4,
        4,
        4,
    ))
    .unwrap();
    let out = run(&p, |l| {
        let mut w = [0x3838_3838u32; 16];
        w[6..10].fill(0);
        w[10] = u32::MAX;
        w[11] = u32::MAX;
        if l % 4 >= 2 {
            let m = l / 4 + 8 * (l % 4 - 2);
            w[10] = 0xFF00_FFFF | (127 + (m % 3) as u32) << 16;
        }
        if l % 4 == 3 {
            w[11] = 0xFF00_FFFF | (127 - (l / 4 % 2) as u32) << 16;
        }
        w
    })
    .unwrap();
    let d = d_f32(&out);
    for (m, row) in d.iter().enumerate() {
        for (n, &x) in row.iter().enumerate() {
            let want = 32.0 * 2f32.powi((m % 3) as i32) * 2f32.powi(-((n % 2) as i32));
            assert_eq!(x, want, "D[{m}][{n}]");
        }
    }
}

#[test]
fn mxf4_and_mxf4nvf4_scale_each_chunk_of_k() {
    // m16n8k64, e2m1 packed eight to a register: A = 0.5 (nibble 1), B = 1.0 (nibble 2).
    // mxf4, scale_vec::2X, ue8m0, selector {2, 0}: k 0–31 by byte 2 (2^0), k 32–63 by byte
    // 3 (2^1); scale-b 1; C = 1. D = 32·0.5·1 + 32·0.5·2 + 1 = 49.
    let mxf4 = try_program(&kernel(
        "mma.sync.aligned.kind::mxf4.block_scale.scale_vec::2X.m16n8k64.row.col.f32.e2m1.e2m1.f32.ue8m0 D, A, B, C, SA, {2, 0}, SB, {0, 0}",
        4,
        4,
        4,
    ))
    .unwrap();
    let words = |sa: u32, sb: u32, c: f32| {
        move |_l: usize| {
            let mut w = [0u32; 16];
            w[0..4].fill(0x1111_1111);
            w[4..6].fill(0x2222_2222);
            w[6..10].fill(c.to_bits());
            w[10] = sa;
            w[11] = sb;
            w
        }
    };
    let out = run(&mxf4, words(0x807F_0000, 0x7F7F_7F7F, 1.0)).unwrap();
    assert!(d_f32(&out).iter().flatten().all(|&x| x == 49.0));
    // mxf4nvf4, scale_vec::4X, ue4m3 (unsigned e4m3: 0x38 = 1, 0x40 = 2, 0x30 = 0.5, 0x48
    // = 4) for the four chunks of 16: D = 16·0.5·(1 + 2 + 0.5 + 4) = 60.
    let nvf4 = try_program(&kernel(
        "mma.sync.aligned.kind::mxf4nvf4.block_scale.scale_vec::4X.m16n8k64.row.col.f32.e2m1.e2m1.f32.ue4m3 D, A, B, C, SA, {0, 0}, SB, {0, 0}",
        4,
        4,
        4,
    ))
    .unwrap();
    let out = run(&nvf4, words(0x4830_4038, 0x3838_3838, 0.0)).unwrap();
    assert!(d_f32(&out).iter().flatten().all(|&x| x == 60.0));
}

#[test]
fn malformed_narrow_mma_is_a_clear_error() {
    let err = |mma: &str| match try_program(&kernel(mma, 4, 4, 4)) {
        Err(e) => e.to_string(),
        Ok(_) => panic!("decoded: {mma}"),
    };
    let e = err(
        "mma.sync.aligned.kind::f8f6f4.block_scale.m16n8k32.row.col.f32.e4m3.e4m3.f32 D, A, B, C",
    );
    assert!(e.contains(".kind::f8f6f4 takes no .block_scale"), "{e}");
    let e = err("mma.sync.aligned.kind::mxf4.block_scale.scale_vec::2X.m16n8k64.row.col.f32.e4m3.e4m3.f32.ue8m0 D, A, B, C, SA, {0, 0}, SB, {0, 0}");
    assert!(e.contains("m16n8k64 of e2m1"), "{e}");
    let e = err("mma.sync.aligned.kind::mxf8f6f4.block_scale.scale_vec::2X.m16n8k32.row.col.f32.e4m3.e4m3.f32.ue8m0 D, A, B, C, SA, {0, 0}, SB, {0, 0}");
    assert!(e.contains("mxf8f6f4 1X ue8m0"), "{e}");
    let e = err("mma.sync.aligned.kind::mxf4nvf4.block_scale.scale_vec::2X.m16n8k64.row.col.f32.e2m1.e2m1.f32.ue4m3 D, A, B, C, SA, {0, 0}, SB, {0, 0}");
    assert!(e.contains("4X ue8m0/ue4m3"), "{e}");
    let e = err("mma.sync.aligned.kind::mxf8f6f4.block_scale.scale_vec::1X.m16n8k32.row.col.f32.e4m3.e4m3.f32.ue8m0 D, A, B, C, SA, {0, 2}, SB, {0, 0}");
    assert!(e.contains("thread-id-a 2: 0 to 1"), "{e}");
    let e = err("mma.sync.aligned.kind::mxf4.block_scale.scale_vec::2X.m16n8k64.row.col.f32.e2m1.e2m1.f32.ue8m0 D, A, B, C, SA, {1, 0}, SB, {0, 0}");
    assert!(
        e.contains("byte-id-a 1: .scale_vec::2X takes 0 or 2"),
        "{e}"
    );
    let e = err("mma.sync.aligned.kind::f8f6f4.m16n8k16.row.col.f32.e4m3.e4m3.f32 D, A, B, C");
    assert!(e.contains("is m16n8k32"), "{e}");
    let e = err("mma.sync.aligned.kind::i8.m16n8k32.row.col.s32.s8.s8.s32 D, A, B, C");
    assert!(e.contains(".kind::i8 is not supported"), "{e}");
    let e = err("mma.sync.aligned.kind::mxf8f6f4.block_scale.scale_vec::1X.m16n8k32.row.col.f32.e4m3.e4m3.f32.ue8m0 D, A, B, C");
    assert!(e.contains("scale-a, {byte-id-a, thread-id-a}"), "{e}");
    // A selector in registers is checked when it runs.
    let text = kernel(
        "mma.sync.aligned.kind::mxf8f6f4.block_scale.scale_vec::1X.m16n8k32.row.col.f32.e4m3.e4m3.f32.ue8m0 D, A, B, C, SA, {%h1, %h2}, SB, {0, 0}",
        4,
        4,
        4,
    )
    .replace(
        ".reg .b64 %rd<16>;",
        ".reg .b64 %rd<16>;\n.reg .b16 %h<4>;\nmov.b16 %h1, 0;\nmov.b16 %h2, 3;",
    );
    let p = try_program(&text).unwrap();
    let e = run(&p, |_| [0; 16]).unwrap_err().to_string();
    assert!(
        e.contains("thread-id 3") && e.contains("thread-id 0 to 1"),
        "{e}"
    );
}
