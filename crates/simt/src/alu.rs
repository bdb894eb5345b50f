//! Scalar semantics of PTX arithmetic, comparisons and conversions [PTX ISA §9.7.1–§9.7.9].
//! Values are raw bits in a `u64`, zero-extended from the type's width. Transcendental
//! approximations (`sin.approx`, `ex2.approx`, …) use the host's math library.

use crate::instr::{Alu, BoolOp, Cmp, Kind, PrmtMode, Round, TestpKind, Ty};

/// Keeps the low `bits` bits.
#[inline]
pub fn trunc(v: u64, bits: u32) -> u64 {
    if bits >= 64 {
        v
    } else {
        v & ((1u64 << bits) - 1)
    }
}

/// Sign-extends the low `bits` bits.
#[inline]
pub fn sext(v: u64, bits: u32) -> i64 {
    if bits >= 64 {
        v as i64
    } else {
        let s = 64 - bits;
        ((v << s) as i64) >> s
    }
}

/// A float of type `ty` (f16, bf16, f32 or f64) as f64.
#[inline]
pub fn to_f(v: u64, ty: Ty) -> f64 {
    match (ty.kind, ty.bytes) {
        (Kind::Float, 2) => half::f16::from_bits(v as u16).to_f64(),
        (Kind::BFloat, _) => half::bf16::from_bits(v as u16).to_f64(),
        (_, 4) => f32::from_bits(v as u32) as f64,
        _ => f64::from_bits(v),
    }
}

/// An f64 rounded to the float type `ty`, as bits.
#[inline]
pub fn from_f(x: f64, ty: Ty) -> u64 {
    match (ty.kind, ty.bytes) {
        (Kind::Float, 2) => half::f16::from_f64(x).to_bits() as u64,
        (Kind::BFloat, _) => half::bf16::from_f64(x).to_bits() as u64,
        (_, 4) => (x as f32).to_bits() as u64,
        _ => x.to_bits(),
    }
}

fn is_float(ty: Ty) -> bool {
    matches!(ty.kind, Kind::Float | Kind::BFloat)
}

/// One lane of an [`Alu`] operation.
#[allow(clippy::too_many_arguments)]
#[inline]
pub fn alu(op: Alu, ty: Ty, dty: Ty, a: u64, b: u64, c: u64, e: u64, sat: bool) -> u64 {
    if is_float(ty) {
        return float_alu(op, ty, a, b, c, sat);
    }
    let bits = ty.bits();
    let signed = ty.kind == Kind::Signed;
    let ia = sext(a, bits);
    let ib = sext(b, bits);
    let r: u64 = match op {
        Alu::Add => {
            if sat && signed {
                (ia as i32).saturating_add(ib as i32) as i64 as u64
            } else {
                a.wrapping_add(b)
            }
        }
        Alu::Sub => {
            if sat && signed {
                (ia as i32).saturating_sub(ib as i32) as i64 as u64
            } else {
                a.wrapping_sub(b)
            }
        }
        Alu::Mul => a.wrapping_mul(b),
        Alu::MulHi => {
            if signed {
                ((ia as i128 * ib as i128) >> bits) as u64
            } else {
                ((trunc(a, bits) as u128 * trunc(b, bits) as u128) >> bits) as u64
            }
        }
        Alu::MulWide => {
            return if signed {
                trunc((ia as i128 * ib as i128) as u64, dty.bits())
            } else {
                trunc(trunc(a, bits).wrapping_mul(trunc(b, bits)), dty.bits())
            }
        }
        Alu::MadWide => {
            let p = if signed {
                (ia as i128 * ib as i128) as u64
            } else {
                trunc(a, bits).wrapping_mul(trunc(b, bits))
            };
            return trunc(p.wrapping_add(c), dty.bits());
        }
        Alu::Mul24Lo => {
            let (x, y) = if signed {
                (sext(a, 24), sext(b, 24))
            } else {
                (trunc(a, 24) as i64, trunc(b, 24) as i64)
            };
            x.wrapping_mul(y) as u64
        }
        Alu::Mul24Hi => {
            let (x, y) = if signed {
                (sext(a, 24), sext(b, 24))
            } else {
                (trunc(a, 24) as i64, trunc(b, 24) as i64)
            };
            (x.wrapping_mul(y) >> 16) as u64
        }
        Alu::Mad24Lo => {
            let (x, y) = if signed {
                (sext(a, 24), sext(b, 24))
            } else {
                (trunc(a, 24) as i64, trunc(b, 24) as i64)
            };
            (x.wrapping_mul(y) as u64).wrapping_add(c)
        }
        Alu::Div => {
            if signed {
                if ib == 0 {
                    u64::MAX
                } else {
                    ia.wrapping_div(ib) as u64
                }
            } else {
                let (x, y) = (trunc(a, bits), trunc(b, bits));
                x.checked_div(y).unwrap_or(u64::MAX)
            }
        }
        Alu::Rem => {
            if signed {
                if ib == 0 {
                    a
                } else {
                    ia.wrapping_rem(ib) as u64
                }
            } else {
                let (x, y) = (trunc(a, bits), trunc(b, bits));
                x.checked_rem(y).unwrap_or(x)
            }
        }
        Alu::Min => {
            if signed {
                ia.min(ib) as u64
            } else {
                trunc(a, bits).min(trunc(b, bits))
            }
        }
        Alu::Max => {
            if signed {
                ia.max(ib) as u64
            } else {
                trunc(a, bits).max(trunc(b, bits))
            }
        }
        Alu::And => a & b,
        Alu::Or => a | b,
        Alu::Xor => a ^ b,
        Alu::Not => !a,
        Alu::CNot => (trunc(a, bits) == 0) as u64,
        Alu::Shl => {
            let s = trunc(b, 32);
            if s >= bits as u64 {
                0
            } else {
                a << s
            }
        }
        Alu::Shr => {
            let s = trunc(b, 32).min(bits as u64);
            if signed {
                (ia >> s.min(63)) as u64
            } else if s >= bits as u64 {
                0
            } else {
                trunc(a, bits) >> s
            }
        }
        Alu::Mad => a.wrapping_mul(b).wrapping_add(c),
        Alu::MadHi => {
            let hi = if signed {
                ((ia as i128 * ib as i128) >> bits) as u64
            } else {
                ((trunc(a, bits) as u128 * trunc(b, bits) as u128) >> bits) as u64
            };
            hi.wrapping_add(c)
        }
        Alu::Abs => ia.unsigned_abs(),
        Alu::Neg => (ia.wrapping_neg()) as u64,
        Alu::Popc => return trunc(a, bits).count_ones() as u64,
        Alu::Clz => return (trunc(a, bits).leading_zeros() - (64 - bits)) as u64,
        Alu::Brev => trunc(a, bits).reverse_bits() >> (64 - bits),
        Alu::Bfind => {
            let v = if signed && ia < 0 { !a } else { a };
            let v = trunc(v, bits);
            return if v == 0 {
                0xFFFF_FFFF
            } else {
                63 - v.leading_zeros() as u64
            };
        }
        Alu::Bfe => {
            let pos = trunc(b, 8) as u32;
            let len = trunc(c, 8) as u32;
            if len == 0 {
                0
            } else {
                let shifted = if pos >= 64 { 0 } else { trunc(a, bits) >> pos };
                let len = len.min(bits);
                let field = trunc(shifted, len);
                if signed {
                    let sbit = if pos + len > bits {
                        (ia < 0) as u64
                    } else {
                        (a >> (pos + len - 1)) & 1
                    };
                    if sbit == 1 {
                        field | !((1u64 << len.min(63)) - 1)
                    } else {
                        field
                    }
                } else {
                    field
                }
            }
        }
        Alu::Bfi => {
            // bfi f, a(insert), b(base), pos(c), len(e)
            let pos = trunc(c, 8) as u32;
            let len = trunc(e, 8) as u32;
            if len == 0 || pos >= bits {
                b
            } else {
                let len = len.min(bits - pos);
                let m = trunc(u64::MAX, len) << pos;
                (b & !m) | ((a << pos) & m)
            }
        }
        Alu::Prmt => {
            let bytes = (trunc(a, 32)) | (trunc(b, 32) << 32);
            let mut r = 0u64;
            for k in 0..4 {
                let sel = (c >> (4 * k)) & 0xF;
                let byte = (bytes >> ((sel & 7) * 8)) & 0xFF;
                let byte = if sel & 8 != 0 {
                    if byte & 0x80 != 0 {
                        0xFF
                    } else {
                        0
                    }
                } else {
                    byte
                };
                r |= byte << (8 * k);
            }
            r
        }
        Alu::PrmtMode(mode) => {
            let bytes = (trunc(a, 32)) | (trunc(b, 32) << 32);
            let n = (c & 3) as usize;
            // Byte indices b0..b3 of each mode's table [PTX ISA §9.7.8.7].
            let sel: [u64; 4] = match mode {
                PrmtMode::F4e => [0, 1, 2, 3].map(|k| (k + n as u64) % 8),
                PrmtMode::B4e => [[0, 7, 6, 5], [1, 0, 7, 6], [2, 1, 0, 7], [3, 2, 1, 0]][n],
                PrmtMode::Rc8 => [n as u64; 4],
                PrmtMode::Ecl => [[0, 1, 2, 3], [1, 1, 2, 3], [2, 2, 2, 3], [3, 3, 3, 3]][n],
                PrmtMode::Ecr => [[0, 0, 0, 0], [0, 1, 1, 1], [0, 1, 2, 2], [0, 1, 2, 3]][n],
                PrmtMode::Rc16 => [[0, 1, 0, 1], [2, 3, 2, 3], [0, 1, 0, 1], [2, 3, 2, 3]][n],
            };
            sel.iter()
                .enumerate()
                .fold(0, |r, (k, &i)| r | ((bytes >> (8 * i)) & 0xFF) << (8 * k))
        }
        Alu::Bmsk { clamp } => {
            let (pos, len) = (trunc(a, 32), trunc(b, 32));
            let (pos, len) = if clamp {
                (pos.min(32), len.min(32))
            } else {
                (pos & 31, len & 31)
            };
            if pos >= 32 {
                0
            } else {
                let ones = if len >= 64 {
                    u64::MAX
                } else {
                    (1u64 << len) - 1
                };
                trunc(ones << pos, 32)
            }
        }
        Alu::Szext { clamp } => {
            let w = trunc(b, 32);
            let w = if clamp { w.min(32) } else { w & 31 };
            if w == 0 {
                0
            } else if signed {
                trunc(sext(a, w as u32) as u64, 32)
            } else {
                trunc(a, w as u32)
            }
        }
        Alu::Dp2a {
            a_signed,
            b_signed,
            hi,
        } => {
            let mut acc = c as i64;
            let first = if hi { 2 } else { 0 };
            for k in 0..2 {
                let x = (a >> (16 * k)) & 0xFFFF;
                let y = (b >> (8 * (first + k))) & 0xFF;
                let x = if a_signed { sext(x, 16) } else { x as i64 };
                let y = if b_signed { sext(y, 8) } else { y as i64 };
                acc = acc.wrapping_add(x * y);
            }
            acc as u64
        }
        Alu::Lop3 => {
            let lut = e & 0xFF;
            let mut r = 0u64;
            for bit in 0..bits {
                let idx = (((a >> bit) & 1) << 2) | (((b >> bit) & 1) << 1) | ((c >> bit) & 1);
                r |= ((lut >> idx) & 1) << bit;
            }
            r
        }
        Alu::ShfL { clamp } => {
            let n = if clamp { trunc(c, 32).min(32) } else { c & 31 };
            let v = (trunc(b, 32) << 32) | trunc(a, 32);
            (v << n) >> 32
        }
        Alu::ShfR { clamp } => {
            let n = if clamp { trunc(c, 32).min(32) } else { c & 31 };
            let v = (trunc(b, 32) << 32) | trunc(a, 32);
            v >> n
        }
        Alu::Sad => {
            let d = if signed {
                (ia - ib).unsigned_abs()
            } else {
                trunc(a, bits).abs_diff(trunc(b, bits))
            };
            d.wrapping_add(c)
        }
        Alu::Dp4a { a_signed, b_signed } => {
            let mut acc = c as i64;
            for k in 0..4 {
                let x = (a >> (8 * k)) & 0xFF;
                let y = (b >> (8 * k)) & 0xFF;
                let x = if a_signed { sext(x, 8) } else { x as i64 };
                let y = if b_signed { sext(y, 8) } else { y as i64 };
                acc = acc.wrapping_add(x * y);
            }
            acc as u64
        }
        Alu::Fns => {
            // fns.b32 d, mask, base, offset: the n-th set bit from base (offset signed).
            let mask = trunc(a, 32) as u32;
            let base = trunc(b, 32) as i64;
            let mut off = sext(c, 32);
            let mut pos = base;
            if off == 0 {
                return if (0..32).contains(&pos) && mask >> pos & 1 == 1 {
                    pos as u64
                } else {
                    0xFFFF_FFFF
                };
            }
            let step = if off > 0 { 1 } else { -1 };
            loop {
                if !(0..32).contains(&pos) {
                    return 0xFFFF_FFFF;
                }
                if mask >> pos & 1 == 1 {
                    off -= step;
                    if off == 0 {
                        return pos as u64;
                    }
                }
                pos += step;
            }
        }
        Alu::Testp(_)
        | Alu::Rcp
        | Alu::Sqrt
        | Alu::Rsqrt
        | Alu::Sin
        | Alu::Cos
        | Alu::Lg2
        | Alu::Ex2
        | Alu::Tanh
        | Alu::Copysign => 0,
    };
    if sat && signed && matches!(op, Alu::Add | Alu::Sub) {
        return trunc(r, bits);
    }
    // A predicate is one bit: `not.pred` of 1 is 0, not 0xFE.
    if ty.kind == Kind::Pred {
        return r & 1;
    }
    trunc(r, dty.bits())
}

fn float_alu(op: Alu, ty: Ty, a: u64, b: u64, c: u64, sat: bool) -> u64 {
    let (x, y, z) = (to_f(a, ty), to_f(b, ty), to_f(c, ty));
    let single = ty.bytes == 4;
    let r = match op {
        Alu::Add => {
            if single {
                (x as f32 + y as f32) as f64
            } else {
                x + y
            }
        }
        Alu::Sub => {
            if single {
                (x as f32 - y as f32) as f64
            } else {
                x - y
            }
        }
        Alu::Mul => {
            if single {
                (x as f32 * y as f32) as f64
            } else {
                x * y
            }
        }
        Alu::Div => {
            if single {
                (x as f32 / y as f32) as f64
            } else {
                x / y
            }
        }
        Alu::Mad => {
            if single {
                (x as f32).mul_add(y as f32, z as f32) as f64
            } else {
                x.mul_add(y, z)
            }
        }
        Alu::Min => {
            if x.is_nan() {
                y
            } else if y.is_nan() {
                x
            } else {
                x.min(y)
            }
        }
        Alu::Max => {
            if x.is_nan() {
                y
            } else if y.is_nan() {
                x
            } else {
                x.max(y)
            }
        }
        Alu::Abs => x.abs(),
        Alu::Neg => -x,
        Alu::Rcp => 1.0 / x,
        Alu::Sqrt => x.sqrt(),
        Alu::Rsqrt => 1.0 / x.sqrt(),
        Alu::Sin => x.sin(),
        Alu::Cos => x.cos(),
        Alu::Lg2 => x.log2(),
        Alu::Ex2 => x.exp2(),
        Alu::Tanh => x.tanh(),
        Alu::Copysign => y.copysign(x),
        Alu::Testp(k) => {
            return match k {
                TestpKind::Finite => x.is_finite(),
                TestpKind::Infinite => x.is_infinite(),
                TestpKind::Number => !x.is_nan(),
                TestpKind::NotANumber => x.is_nan(),
                TestpKind::Normal => x.is_normal(),
                TestpKind::Subnormal => x.is_subnormal(),
            } as u64
        }
        // Bitwise ops on float-typed operands do not occur (PTX types them .b).
        _ => x,
    };
    let r = if sat {
        if r.is_nan() {
            0.0
        } else {
            r.clamp(0.0, 1.0)
        }
    } else {
        r
    };
    from_f(r, ty)
}

/// A comparison of two values of type `ty`.
#[inline]
pub fn compare(cmp: Cmp, ty: Ty, a: u64, b: u64) -> bool {
    if is_float(ty) {
        let (x, y) = (to_f(a, ty), to_f(b, ty));
        let unord = x.is_nan() || y.is_nan();
        return match cmp {
            Cmp::Eq => x == y,
            Cmp::Ne => !unord && x != y,
            Cmp::Lt => x < y,
            Cmp::Le => x <= y,
            Cmp::Gt => x > y,
            Cmp::Ge => x >= y,
            Cmp::Equ => unord || x == y,
            Cmp::Neu => unord || x != y,
            Cmp::Ltu => unord || x < y,
            Cmp::Leu => unord || x <= y,
            Cmp::Gtu => unord || x > y,
            Cmp::Geu => unord || x >= y,
            Cmp::Num => !unord,
            Cmp::Nan => unord,
            Cmp::Lo => x < y,
            Cmp::Ls => x <= y,
            Cmp::Hi => x > y,
            Cmp::Hs => x >= y,
        };
    }
    let bits = ty.bits();
    if ty.kind == Kind::Signed && !matches!(cmp, Cmp::Lo | Cmp::Ls | Cmp::Hi | Cmp::Hs) {
        let (x, y) = (sext(a, bits), sext(b, bits));
        return match cmp {
            Cmp::Eq | Cmp::Equ => x == y,
            Cmp::Ne | Cmp::Neu => x != y,
            Cmp::Lt | Cmp::Ltu => x < y,
            Cmp::Le | Cmp::Leu => x <= y,
            Cmp::Gt | Cmp::Gtu => x > y,
            Cmp::Ge | Cmp::Geu => x >= y,
            _ => false,
        };
    }
    let (x, y) = (trunc(a, bits), trunc(b, bits));
    match cmp {
        Cmp::Eq | Cmp::Equ => x == y,
        Cmp::Ne | Cmp::Neu => x != y,
        Cmp::Lt | Cmp::Lo | Cmp::Ltu => x < y,
        Cmp::Le | Cmp::Ls | Cmp::Leu => x <= y,
        Cmp::Gt | Cmp::Hi | Cmp::Gtu => x > y,
        Cmp::Ge | Cmp::Hs | Cmp::Geu => x >= y,
        Cmp::Num => true,
        Cmp::Nan => false,
    }
}

/// Combines a comparison result with a predicate (`setp.cmp.and` …).
#[inline]
pub fn combine(op: BoolOp, x: bool, p: bool) -> bool {
    match op {
        BoolOp::And => x && p,
        BoolOp::Or => x || p,
        BoolOp::Xor => x ^ p,
    }
}

fn round_f(x: f64, r: Option<Round>) -> f64 {
    match r {
        Some(Round::Zero) => x.trunc(),
        Some(Round::Down) => x.floor(),
        Some(Round::Up) => x.ceil(),
        // Float-to-integer default (`.rzi` is required by PTX, `.rni` rounds to even).
        Some(Round::Nearest) => x.round_ties_even(),
        None => x.trunc(),
    }
}

/// `cvt` of one value [PTX ISA §9.7.9.21]: integer widening sign- or zero-extends by the
/// source type, narrowing truncates (or saturates with `.sat`); float to integer rounds as
/// asked and saturates (NaN → 0); integer to float rounds to nearest.
pub fn convert(a: u64, dty: Ty, sty: Ty, round: Option<Round>, int_round: bool, sat: bool) -> u64 {
    let sbits = sty.bits();
    let dbits = dty.bits();
    match (is_float(dty), is_float(sty)) {
        (false, false) => {
            let v: i128 = if sty.kind == Kind::Signed {
                sext(a, sbits) as i128
            } else {
                trunc(a, sbits) as i128
            };
            if sat {
                let (lo, hi) = int_range(dty);
                return trunc(v.clamp(lo, hi) as u64, dbits);
            }
            // Widening to a 64-bit register keeps the sign of a signed source.
            trunc(v as u64, dbits)
        }
        (true, false) => {
            let v = if sty.kind == Kind::Signed {
                sext(a, sbits) as f64
            } else {
                trunc(a, sbits) as f64
            };
            let v = if dty.bytes == 4 && sbits == 64 {
                // i64 → f32 rounds once.
                if sty.kind == Kind::Signed {
                    sext(a, 64) as f32 as f64
                } else {
                    a as f32 as f64
                }
            } else {
                v
            };
            from_f(v, dty)
        }
        (false, true) => {
            let x = to_f(a, sty);
            if x.is_nan() {
                return 0;
            }
            let x = round_f(x, round);
            let (lo, hi) = int_range(dty);
            let v = if x <= lo as f64 {
                lo
            } else if x >= hi as f64 {
                hi
            } else {
                x as i128
            };
            trunc(v as u64, dbits)
        }
        (true, true) => {
            let x = to_f(a, sty);
            let x = if int_round { round_f(x, round) } else { x };
            let x = if sat {
                if x.is_nan() {
                    0.0
                } else {
                    x.clamp(0.0, 1.0)
                }
            } else {
                x
            };
            from_f(x, dty)
        }
    }
}

fn int_range(ty: Ty) -> (i128, i128) {
    let bits = ty.bits();
    if ty.kind == Kind::Signed {
        (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
    } else {
        (0, (1i128 << bits) - 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S32: Ty = Ty {
        kind: Kind::Signed,
        bytes: 4,
    };
    const F32: Ty = Ty {
        kind: Kind::Float,
        bytes: 4,
    };

    #[test]
    fn not_of_a_predicate_is_its_negation() {
        assert_eq!(alu(Alu::Not, Ty::PRED, Ty::PRED, 1, 0, 0, 0, false), 0);
        assert_eq!(alu(Alu::Not, Ty::PRED, Ty::PRED, 0, 0, 0, 0, false), 1);
        assert_eq!(alu(Alu::And, Ty::PRED, Ty::PRED, 1, 1, 0, 0, false), 1);
    }

    #[test]
    fn mul_wide_sign_extends() {
        let s64 = Ty {
            kind: Kind::Signed,
            bytes: 8,
        };
        let r = alu(
            Alu::MulWide,
            S32,
            s64,
            trunc((-3i64) as u64, 32),
            4,
            0,
            0,
            false,
        );
        assert_eq!(r as i64, -12);
    }

    #[test]
    fn signed_compare_and_unordered() {
        assert!(compare(Cmp::Lt, S32, trunc(-1i64 as u64, 32), 0));
        assert!(!compare(Cmp::Lo, S32, trunc(-1i64 as u64, 32), 0));
        let nan = f32::NAN.to_bits() as u64;
        assert!(!compare(Cmp::Lt, F32, nan, 0));
        assert!(compare(Cmp::Ltu, F32, nan, 0));
        assert!(compare(Cmp::Ne, F32, 1.0f32.to_bits() as u64, 0));
        assert!(!compare(Cmp::Ne, F32, nan, 0));
    }

    #[test]
    fn cvt_rounding_and_saturation() {
        let u8t = Ty {
            kind: Kind::Unsigned,
            bytes: 1,
        };
        assert_eq!(convert(300, u8t, Ty::U32, None, false, true), 255);
        assert_eq!(convert(300, u8t, Ty::U32, None, false, false), 44);
        assert_eq!(
            convert(
                2.5f32.to_bits() as u64,
                S32,
                F32,
                Some(Round::Nearest),
                true,
                false
            ),
            2
        );
        assert_eq!(
            convert(
                (-1.5f32).to_bits() as u64,
                S32,
                F32,
                Some(Round::Down),
                true,
                false
            ),
            trunc(-2i64 as u64, 32)
        );
        assert_eq!(
            convert(
                f32::NAN.to_bits() as u64,
                S32,
                F32,
                Some(Round::Zero),
                true,
                false
            ),
            0
        );
    }

    #[test]
    fn permute_modes_masks_and_extensions() {
        let (a, b) = (0x33221100, 0x77665544);
        let p = |m, sel| alu(Alu::PrmtMode(m), Ty::U32, Ty::U32, a, b, sel, 0, false);
        assert_eq!(p(PrmtMode::F4e, 1), 0x44332211);
        assert_eq!(p(PrmtMode::B4e, 0), 0x55667700);
        assert_eq!(p(PrmtMode::Rc8, 2), 0x22222222);
        assert_eq!(p(PrmtMode::Ecl, 1), 0x33221111);
        assert_eq!(p(PrmtMode::Ecr, 2), 0x22221100);
        assert_eq!(p(PrmtMode::Rc16, 1), 0x33223322);
        let bmsk =
            |clamp, pos, len| alu(Alu::Bmsk { clamp }, Ty::U32, Ty::U32, pos, len, 0, 0, false);
        assert_eq!(bmsk(true, 4, 8), 0xFF0);
        assert_eq!(bmsk(true, 0, 40), 0xFFFF_FFFF);
        assert_eq!(bmsk(false, 36, 4), 0xF0);
        let s32 = Ty {
            kind: Kind::Signed,
            bytes: 4,
        };
        assert_eq!(
            alu(Alu::Szext { clamp: true }, s32, s32, 0xF0, 8, 0, 0, false),
            0xFFFF_FFF0
        );
        assert_eq!(
            alu(
                Alu::Szext { clamp: true },
                Ty::U32,
                Ty::U32,
                0x1F0,
                8,
                0,
                0,
                false
            ),
            0xF0
        );
        // dp2a.lo: 3·1 + (-2)·2 + 10 = 9 with signed halves and bytes.
        let dp2a = Alu::Dp2a {
            a_signed: true,
            b_signed: true,
            hi: false,
        };
        assert_eq!(
            alu(dp2a, Ty::U32, Ty::U32, 0xFFFE_0003, 0x0201, 10, 0, false) as u32,
            9
        );
    }

    #[test]
    fn bit_fields_and_permute() {
        assert_eq!(
            alu(Alu::Bfe, Ty::U32, Ty::U32, 0xABCD, 4, 8, 0, false),
            0xBC
        );
        assert_eq!(alu(Alu::Bfi, Ty::U32, Ty::U32, 0xF, 0, 4, 4, false), 0xF0);
        assert_eq!(
            alu(
                Alu::Prmt,
                Ty::U32,
                Ty::U32,
                0x33221100,
                0x77665544,
                0x5140,
                0,
                false
            ),
            0x55114400
        );
        assert_eq!(
            alu(Alu::Lop3, Ty::U32, Ty::U32, 0xF0, 0xCC, 0xAA, 0x80, false),
            0x80
        );
        assert_eq!(alu(Alu::Clz, Ty::U32, Ty::U32, 1, 0, 0, 0, false), 31);
    }
}
