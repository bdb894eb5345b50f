//! Lane-level semantics of the IR's intrinsics, atomics and warp operations
//! ([`crate::ir::Intrinsic`], [`crate::ir::AtomicOp`], [`crate::ir::WarpOp`]), shared by the
//! interpreter and constant folding.

use crate::exec::{binop_scalar, canon};
use crate::ir::{AtomicOp, BinOp, Intrinsic, WarpOp};
use crate::types::Ty;
use warpscope_model::WARP_SIZE;

fn f(v: u64) -> f64 {
    f64::from_bits(v)
}

fn round_float(x: f64, bytes: u8) -> u64 {
    crate::exec::cast_scalar(x.to_bits(), &Ty::Float(8), &Ty::Float(bytes))
}

/// The value of intrinsic `f` on operands `ops` of type `at`, giving type `ty`
/// ([`Intrinsic`]'s semantics).
pub fn intrinsic_scalar(func: Intrinsic, ops: &[u64], at: &Ty, ty: &Ty) -> u64 {
    let a = ops.first().copied().unwrap_or(0);
    let b = ops.get(1).copied().unwrap_or(0);
    let int_bits = match at {
        Ty::Int { bytes, .. } => *bytes as u32 * 8,
        _ => 32,
    };
    let mask = if int_bits >= 64 {
        u64::MAX
    } else {
        (1u64 << int_bits) - 1
    };
    let int = |v: u64| match ty {
        Ty::Int { bytes, signed } => canon(v, *bytes, *signed),
        _ => v,
    };
    match func {
        Intrinsic::Popc => return int((a & mask).count_ones() as u64),
        Intrinsic::Clz => return int(((a & mask).leading_zeros() - (64 - int_bits)) as u64),
        Intrinsic::Ffs => {
            let x = a & mask;
            return int(if x == 0 {
                0
            } else {
                x.trailing_zeros() as u64 + 1
            });
        }
        Intrinsic::Brev => return int((a & mask).reverse_bits() >> (64 - int_bits)),
        Intrinsic::MulHi => {
            let p = if at.is_signed() {
                ((a as i32 as i64) * (b as i32 as i64)) as u64
            } else {
                (a as u32 as u64) * (b as u32 as u64)
            };
            return int(p >> 32);
        }
        Intrinsic::Mul24 => {
            let ext = |v: u64| {
                if at.is_signed() {
                    (((v as u32) << 8) as i32 >> 8) as i64 as u64
                } else {
                    v & 0xff_ffff
                }
            };
            return int(ext(a).wrapping_mul(ext(b)));
        }
        _ => {}
    }
    let single = matches!(ty, Ty::Float(4) | Ty::Float(2));
    let (x, y) = (f(a), f(b));
    let z = f(ops.get(2).copied().unwrap_or(0));
    let r = if single {
        let (x, y, z) = (x as f32, y as f32, z as f32);
        (match func {
            Intrinsic::Sqrt => x.sqrt(),
            Intrinsic::Rsqrt => 1.0 / x.sqrt(),
            Intrinsic::Exp => x.exp(),
            Intrinsic::Exp2 => x.exp2(),
            Intrinsic::Exp10 => 10f32.powf(x),
            Intrinsic::Log => x.ln(),
            Intrinsic::Log2 => x.log2(),
            Intrinsic::Log10 => x.log10(),
            Intrinsic::Pow => x.powf(y),
            Intrinsic::Sin => x.sin(),
            Intrinsic::Cos => x.cos(),
            Intrinsic::Tan => x.tan(),
            Intrinsic::Tanh => x.tanh(),
            Intrinsic::Floor => x.floor(),
            Intrinsic::Ceil => x.ceil(),
            Intrinsic::Trunc => x.trunc(),
            Intrinsic::Round => x.round(),
            Intrinsic::Fma => x.mul_add(y, z),
            Intrinsic::Saturate => {
                if x.is_nan() {
                    0.0
                } else {
                    x.clamp(0.0, 1.0)
                }
            }
            _ => x,
        }) as f64
    } else {
        match func {
            Intrinsic::Sqrt => x.sqrt(),
            Intrinsic::Rsqrt => 1.0 / x.sqrt(),
            Intrinsic::Exp => x.exp(),
            Intrinsic::Exp2 => x.exp2(),
            Intrinsic::Exp10 => 10f64.powf(x),
            Intrinsic::Log => x.ln(),
            Intrinsic::Log2 => x.log2(),
            Intrinsic::Log10 => x.log10(),
            Intrinsic::Pow => x.powf(y),
            Intrinsic::Sin => x.sin(),
            Intrinsic::Cos => x.cos(),
            Intrinsic::Tan => x.tan(),
            Intrinsic::Tanh => x.tanh(),
            Intrinsic::Floor => x.floor(),
            Intrinsic::Ceil => x.ceil(),
            Intrinsic::Trunc => x.trunc(),
            Intrinsic::Round => x.round(),
            Intrinsic::Fma => x.mul_add(y, z),
            Intrinsic::Saturate => {
                if x.is_nan() {
                    0.0
                } else {
                    x.clamp(0.0, 1.0)
                }
            }
            _ => x,
        }
    };
    match ty {
        Ty::Float(bytes) => round_float(r, *bytes),
        _ => r.to_bits(),
    }
}

/// The new value of an atomic ([`AtomicOp`]) on `old` with operand `v` of type `t`.
pub fn atomic_scalar(op: AtomicOp, old: u64, v: u64, compare: Option<u64>, t: &Ty) -> u64 {
    let bin = |o: BinOp| binop_scalar(o, old, v, t).unwrap_or(old);
    let (bytes, signed) = match t {
        Ty::Int { bytes, signed } => (*bytes, *signed),
        _ => (8, false),
    };
    match op {
        AtomicOp::Add => bin(BinOp::Add),
        AtomicOp::Min => bin(BinOp::Min),
        AtomicOp::Max => bin(BinOp::Max),
        AtomicOp::And => bin(BinOp::BitAnd),
        AtomicOp::Or => bin(BinOp::BitOr),
        AtomicOp::Xor => bin(BinOp::BitXor),
        AtomicOp::Exch => v,
        AtomicOp::Cas => {
            if Some(old) == compare {
                v
            } else {
                old
            }
        }
        AtomicOp::Inc => {
            let (o, w) = (canon(old, bytes, false), canon(v, bytes, false));
            canon(if o >= w { 0 } else { o + 1 }, bytes, signed)
        }
        AtomicOp::Dec => {
            let (o, w) = (canon(old, bytes, false), canon(v, bytes, false));
            canon(if o == 0 || o > w { w } else { o - 1 }, bytes, signed)
        }
    }
}

/// One warp-level operation ([`WarpOp`]) over the block's threads, warp by warp; operands
/// as lowered (`vals[k]` holds operand `k` of every thread).
pub fn warp_op(op: WarpOp, vals: &[Vec<u64>], m: &[bool]) -> Vec<u64> {
    let t = m.len();
    let mut out = vec![0u64; t];
    for lo in (0..t).step_by(WARP_SIZE) {
        let hi = (lo + WARP_SIZE).min(t);
        let active: u64 = (lo..hi).filter(|&l| m[l]).map(|l| 1u64 << (l - lo)).sum();
        let pred = |l: usize| vals.get(1).is_some_and(|p| p[l] != 0);
        let ballot: u64 = (lo..hi)
            .filter(|&l| m[l] && pred(l))
            .map(|l| 1u64 << (l - lo))
            .sum();
        for l in lo..hi {
            let lane = l - lo;
            out[l] = match op {
                WarpOp::ActiveMask => active,
                WarpOp::Ballot => ballot,
                WarpOp::All => (ballot == active) as u64,
                WarpOp::Any => (ballot != 0) as u64,
                WarpOp::ShflIdx | WarpOp::ShflUp | WarpOp::ShflDown | WarpOp::ShflXor => {
                    let v = &vals[1];
                    let k = vals[2][l] as u32 as usize;
                    let width = match vals.get(3).map(|w| w[l] as u32 as usize) {
                        Some(w) if w.is_power_of_two() && w <= WARP_SIZE => w,
                        _ => WARP_SIZE,
                    };
                    let base = lane & !(width - 1);
                    let src = match op {
                        WarpOp::ShflIdx => Some(base + k % width),
                        WarpOp::ShflUp => lane.checked_sub(k).filter(|&s| s >= base),
                        WarpOp::ShflDown => Some(lane + k).filter(|&s| s < base + width),
                        _ => Some(lane ^ k).filter(|&s| s >= base && s < base + width),
                    };
                    match src.map(|s| lo + s).filter(|&s| s < hi) {
                        Some(s) => v[s],
                        None => v[l],
                    }
                }
            };
        }
    }
    out
}
