//! The executor's fast paths (warp-uniform values computed once, whole-warp lane loops, the
//! integer operations chosen once per instruction) against per-lane semantics written out
//! here from the PTX ISA (§9.7.1 integer arithmetic, §9.7.7 logic and shift, §9.7.9 `cvt`,
//! §9.7.6 `setp`/`selp`), on random straight-line programs. Each program's last values
//! become store addresses, so the accesses show every lane's result. A guard lets only the
//! first `active` lanes run the program: 32 takes the whole-warp and uniform paths, fewer the
//! per-lane ones.

use proptest::prelude::*;
use warpscope_model::Op;
use warpscope_simt::decode::window;
use warpscope_simt::{Alloc, Launch, Program};

/// A source operand: a register of the program so far, or an immediate.
#[derive(Clone, Copy, Debug)]
enum Src {
    Reg(usize),
    Imm(u32),
}

/// One instruction: `d = op(a, b, c)` on 32-bit registers (d is the next register).
#[derive(Clone, Copy, Debug)]
enum Ins {
    Add(Src, Src),
    Sub(Src, Src),
    MulLo(Src, Src),
    Mad(Src, Src, Src),
    And(Src, Src),
    Or(Src, Src),
    Xor(Src, Src),
    Shl(Src, Src),
    Shr(Src, Src),
    /// `mul.wide.s32` into a 64-bit register, then its low half (`cvt.u32.u64`).
    MulWideLow(Src, Src),
    /// `mul.wide.s32`, then its high half (`shr.u64` by 32, `cvt.u32.u64`).
    MulWideHigh(Src, Src),
    /// `setp.lt.s32 p, a, b; selp.b32 d, a, b, p`: the signed minimum.
    MinSelp(Src, Src),
}

/// Registers 0, 1, 2 hold `%tid.x` (varies by lane), the parameter `k` (uniform) and
/// `%ntid.x` (uniform) before the program's own.
const INPUTS: usize = 3;

fn src(regs: usize) -> impl Strategy<Value = Src> {
    prop_oneof![
        3 => (0..regs).prop_map(Src::Reg),
        1 => prop_oneof![any::<u32>(), 0u32..40].prop_map(Src::Imm),
    ]
}

fn ins(regs: usize) -> impl Strategy<Value = Ins> {
    let s = || src(regs);
    prop_oneof![
        (s(), s()).prop_map(|(a, b)| Ins::Add(a, b)),
        (s(), s()).prop_map(|(a, b)| Ins::Sub(a, b)),
        (s(), s()).prop_map(|(a, b)| Ins::MulLo(a, b)),
        (s(), s(), s()).prop_map(|(a, b, c)| Ins::Mad(a, b, c)),
        (s(), s()).prop_map(|(a, b)| Ins::And(a, b)),
        (s(), s()).prop_map(|(a, b)| Ins::Or(a, b)),
        (s(), s()).prop_map(|(a, b)| Ins::Xor(a, b)),
        (s(), s()).prop_map(|(a, b)| Ins::Shl(a, b)),
        (s(), s()).prop_map(|(a, b)| Ins::Shr(a, b)),
        (s(), s()).prop_map(|(a, b)| Ins::MulWideLow(a, b)),
        (s(), s()).prop_map(|(a, b)| Ins::MulWideHigh(a, b)),
        (s(), s()).prop_map(|(a, b)| Ins::MinSelp(a, b)),
    ]
}

/// A program of 1–12 instructions, each reading only registers defined before it.
fn program() -> impl Strategy<Value = Vec<Ins>> {
    (1usize..=12).prop_flat_map(|n| (0..n).map(|i| ins(INPUTS + i).boxed()).collect::<Vec<_>>())
}

/// The PTX ISA's result of `i` on one lane whose registers are `r`.
fn reference(i: Ins, r: &[u32]) -> u32 {
    let v = |s: Src| match s {
        Src::Reg(k) => r[k],
        Src::Imm(x) => x,
    };
    let wide = |a: Src, b: Src| (v(a) as i32 as i64).wrapping_mul(v(b) as i32 as i64) as u64;
    match i {
        Ins::Add(a, b) => v(a).wrapping_add(v(b)),
        Ins::Sub(a, b) => v(a).wrapping_sub(v(b)),
        Ins::MulLo(a, b) => v(a).wrapping_mul(v(b)),
        Ins::Mad(a, b, c) => v(a).wrapping_mul(v(b)).wrapping_add(v(c)),
        Ins::And(a, b) => v(a) & v(b),
        Ins::Or(a, b) => v(a) | v(b),
        Ins::Xor(a, b) => v(a) ^ v(b),
        // Shift amounts above the register width give 0 (§9.7.7.7, §9.7.7.8).
        Ins::Shl(a, b) => v(a).checked_shl(v(b)).unwrap_or(0),
        Ins::Shr(a, b) => v(a).checked_shr(v(b)).unwrap_or(0),
        Ins::MulWideLow(a, b) => wide(a, b) as u32,
        Ins::MulWideHigh(a, b) => (wide(a, b) >> 32) as u32,
        Ins::MinSelp(a, b) => (v(a) as i32).min(v(b) as i32) as u32,
    }
}

fn operand(s: Src) -> String {
    match s {
        Src::Reg(k) => format!("%r{k}"),
        Src::Imm(x) => x.to_string(),
    }
}

/// The PTX of `prog`, run by lanes below `active`; its last (up to) 3 values are stored at
/// `p0 + 4 × (value mod 1024)`.
fn ptx(prog: &[Ins], active: u32) -> String {
    let n = INPUTS + prog.len();
    let mut body = format!(
        ".reg .pred %p<3>;\n.reg .b32 %r<{n}>;\n.reg .b64 %rd<8>;\n\
         mov.u32 %r0, %tid.x;\nld.param.u32 %r1, [k];\nmov.u32 %r2, %ntid.x;\n\
         ld.param.u64 %rd0, [p0];\nsetp.ge.u32 %p0, %r0, {active};\n@%p0 bra DONE;\n"
    );
    for (i, ins) in prog.iter().enumerate() {
        let d = format!("%r{}", INPUTS + i);
        let o = operand;
        body += &match *ins {
            Ins::Add(a, b) => format!("add.s32 {d}, {}, {};\n", o(a), o(b)),
            Ins::Sub(a, b) => format!("sub.s32 {d}, {}, {};\n", o(a), o(b)),
            Ins::MulLo(a, b) => format!("mul.lo.s32 {d}, {}, {};\n", o(a), o(b)),
            Ins::Mad(a, b, c) => format!("mad.lo.s32 {d}, {}, {}, {};\n", o(a), o(b), o(c)),
            Ins::And(a, b) => format!("and.b32 {d}, {}, {};\n", o(a), o(b)),
            Ins::Or(a, b) => format!("or.b32 {d}, {}, {};\n", o(a), o(b)),
            Ins::Xor(a, b) => format!("xor.b32 {d}, {}, {};\n", o(a), o(b)),
            Ins::Shl(a, b) => format!("shl.b32 {d}, {}, {};\n", o(a), o(b)),
            Ins::Shr(a, b) => format!("shr.u32 {d}, {}, {};\n", o(a), o(b)),
            Ins::MulWideLow(a, b) => format!(
                "mul.wide.s32 %rd1, {}, {};\ncvt.u32.u64 {d}, %rd1;\n",
                o(a),
                o(b)
            ),
            Ins::MulWideHigh(a, b) => format!(
                "mul.wide.s32 %rd1, {}, {};\nshr.u64 %rd1, %rd1, 32;\ncvt.u32.u64 {d}, %rd1;\n",
                o(a),
                o(b)
            ),
            Ins::MinSelp(a, b) => format!(
                "setp.lt.s32 %p1, {a}, {b};\nselp.b32 {d}, {a}, {b}, %p1;\n",
                a = o(a),
                b = o(b)
            ),
        };
    }
    for k in n.saturating_sub(3)..n {
        body += &format!(
            "and.b32 %r{k}, %r{k}, 1023;\nmul.wide.u32 %rd2, %r{k}, 4;\nadd.s64 %rd3, %rd0, %rd2;\nst.global.u32 [%rd3], 0;\n"
        );
    }
    body += "DONE:\nret;";
    format!(
        ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry t(.param .u64 p0, .param .u32 k)\n{{\n{body}\n}}\n"
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn fast_paths_equal_per_lane_semantics(prog in program(), active in prop_oneof![Just(32u32), 1u32..32], k in any::<u32>()) {
        let text = ptx(&prog, active);
        let m = warpscope_ptx::parse(&text).unwrap();
        let p = Program::decode(&m, warpscope_ptx::find_entry(&m, "t").unwrap()).unwrap();
        let base = window::ALLOC_BASE;
        let launch = Launch {
            grid: [1, 1, 1],
            block: [32, 1, 1],
            args: vec![base.to_le_bytes().to_vec(), k.to_le_bytes().to_vec()],
            allocs: vec![(
                Alloc { name: "p0".into(), base, size: None },
                warpscope_init::Contents::Zero,
            )],
            max_steps: 1 << 20,
            ..Default::default()
        };
        let mut stores = Vec::new();
        p.run(&launch, &mut |_, a, _| {
            if a.op == Op::Store {
                stores.push(*a)
            }
        })
        .unwrap();
        // Per lane: the inputs, then each instruction's value.
        let n = INPUTS + prog.len();
        let lanes: Vec<Vec<u32>> = (0..active)
            .map(|tid| {
                let mut r = vec![tid, k, 32];
                for &i in &prog {
                    let x = reference(i, &r);
                    r.push(x);
                }
                r
            })
            .collect();
        let observed: Vec<usize> = (n.saturating_sub(3)..n).collect();
        prop_assert_eq!(stores.len(), observed.len());
        let mask = if active == 32 { u32::MAX } else { (1u32 << active) - 1 };
        for (st, &reg) in stores.iter().zip(&observed) {
            prop_assert_eq!(st.mask, mask);
            for (lane, r) in lanes.iter().enumerate() {
                let want = base + 4 * (r[reg] % 1024) as u64;
                prop_assert_eq!(st.addrs[lane], want, "register {} lane {}\n{}", reg, lane, text);
            }
        }
    }
}
