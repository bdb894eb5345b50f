//! The narrow float formats of `cvt` [PTX ISA §5.2.1 "Fundamental types", §9.7.9.21 "cvt"]:
//! f16, bf16, tf32, the fp8 formats e4m3/e5m2, the fp6 formats e2m3/e3m2, the fp4 format
//! e2m1 and the scale format ue8m0, each encoded from and decoded to f64 with the rounding
//! `cvt` names. Only values that feed addresses or branches matter to the counts, but a value
//! read back must still be the one the GPU computes.

use crate::instr::Round;

/// A float format `cvt` converts between: its field widths and special values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    F32,
    F16,
    BF16,
    /// 32-bit container, 10-bit mantissa (`cvt.rna.tf32.f32`).
    TF32,
    /// fp8 e4m3 (OCP "FN"): no infinity, NaN is S.1111.111, largest finite 448.
    E4M3,
    /// fp8 e5m2: IEEE-like with infinities, largest finite 57344.
    E5M2,
    /// fp6 e2m3 and e3m2, fp4 e2m1: no infinity, no NaN.
    E2M3,
    E3M2,
    E2M1,
    /// 8-bit unsigned power of two (exponent only, bias 127; 0xFF is NaN).
    UE8M0,
}

impl Format {
    /// The format of a `cvt` type word without its `x2` suffix (`e4m3`, `bf16`, `tf32`).
    pub fn parse(s: &str) -> Option<Format> {
        Some(match s {
            "f32" => Format::F32,
            "f16" => Format::F16,
            "bf16" => Format::BF16,
            "tf32" => Format::TF32,
            "e4m3" => Format::E4M3,
            "e5m2" => Format::E5M2,
            "e2m3" => Format::E2M3,
            "e3m2" => Format::E3M2,
            "e2m1" => Format::E2M1,
            "ue8m0" => Format::UE8M0,
            _ => return None,
        })
    }

    /// Bits one element occupies in a register (tf32 sits in 32).
    pub fn bits(self) -> u32 {
        match self {
            Format::F32 | Format::TF32 => 32,
            Format::F16 | Format::BF16 => 16,
            Format::E4M3 | Format::E5M2 | Format::UE8M0 => 8,
            // fp6 and fp4 elements are stored one per byte when packed by two (e2m1x2 is
            // one byte: the ISA packs fp4 pairs into 8 bits).
            Format::E2M3 | Format::E3M2 => 8,
            Format::E2M1 => 4,
        }
    }

    /// (exponent bits, mantissa bits, has infinities, has NaN) of the IEEE-style formats.
    fn fields(self) -> (u32, u32, bool, bool) {
        match self {
            Format::F32 => (8, 23, true, true),
            Format::F16 => (5, 10, true, true),
            Format::BF16 => (8, 7, true, true),
            Format::TF32 => (8, 10, true, true),
            Format::E4M3 => (4, 3, false, true),
            Format::E5M2 => (5, 2, true, true),
            Format::E2M3 => (2, 3, false, false),
            Format::E3M2 => (3, 2, false, false),
            Format::E2M1 => (2, 1, false, false),
            Format::UE8M0 => (8, 0, false, true),
        }
    }

    /// The largest finite value.
    pub fn max_finite(self) -> f64 {
        match self {
            Format::F32 => f32::MAX as f64,
            Format::E4M3 => 448.0,
            Format::UE8M0 => 2f64.powi(127),
            _ => {
                let (e, m, inf, _) = self.fields();
                let bias = (1i32 << (e - 1)) - 1;
                let top = if inf {
                    (1i32 << e) - 2
                } else {
                    (1i32 << e) - 1
                };
                (2.0 - 2f64.powi(-(m as i32))) * 2f64.powi(top - bias)
            }
        }
    }

    /// Decodes an element's bits.
    pub fn decode(self, bits: u64) -> f64 {
        match self {
            Format::F32 => f32::from_bits(bits as u32) as f64,
            Format::TF32 => f32::from_bits(bits as u32 & !0x1FFF) as f64,
            Format::F16 => half::f16::from_bits(bits as u16).to_f64(),
            Format::BF16 => half::bf16::from_bits(bits as u16).to_f64(),
            Format::UE8M0 => {
                let e = bits & 0xFF;
                if e == 0xFF {
                    f64::NAN
                } else {
                    2f64.powi(e as i32 - 127)
                }
            }
            _ => {
                let (e, m, inf, _) = self.fields();
                let width = 1 + e + m;
                let v = bits & ((1 << width) - 1);
                let sign = if v >> (e + m) & 1 == 1 { -1.0 } else { 1.0 };
                let exp = (v >> m) & ((1 << e) - 1);
                let man = v & ((1 << m) - 1);
                let bias = (1i32 << (e - 1)) - 1;
                if self == Format::E4M3 && exp == 0xF && man == 0x7 {
                    return f64::NAN;
                }
                if inf && exp == (1 << e) - 1 {
                    return if man == 0 {
                        sign * f64::INFINITY
                    } else {
                        f64::NAN
                    };
                }
                let frac = man as f64 / (1u64 << m) as f64;
                if exp == 0 {
                    sign * frac * 2f64.powi(1 - bias)
                } else {
                    sign * (1.0 + frac) * 2f64.powi(exp as i32 - bias)
                }
            }
        }
    }

    /// Encodes `x` with rounding `round` (`None`: to nearest, ties to even; `rna`: ties away
    /// is given as `away`). `satfinite` clamps to the largest finite value and keeps NaN;
    /// without it an overflow gives infinity (or NaN where the format has no infinity).
    pub fn encode(self, x: f64, round: Option<Round>, away: bool, satfinite: bool) -> u64 {
        match self {
            Format::F32 => return (round_to_f32(x, round)).to_bits() as u64,
            Format::UE8M0 => {
                if x.is_nan() || x <= 0.0 {
                    return if x.is_nan() { 0xFF } else { 0 };
                }
                let e = x.log2();
                let k = match round {
                    Some(Round::Up) => e.ceil(),
                    _ => e.floor(),
                };
                return (k as i64 + 127).clamp(0, 254) as u64;
            }
            _ => {}
        }
        let (e, m, inf, has_nan) = self.fields();
        let width = 1 + e + m;
        let sign_bit = 1u64 << (e + m);
        let sign = if x.is_sign_negative() { sign_bit } else { 0 };
        let bias = (1i32 << (e - 1)) - 1;
        let nan_bits = match self {
            Format::E4M3 => 0x7F,
            _ if has_nan => (((1u64 << e) - 1) << m) | (1 << (m - 1)),
            _ => ((1u64 << (e + m)) - 1) | sign, // no NaN: the largest magnitude
        };
        if x.is_nan() {
            return nan_bits & ((1 << width) - 1);
        }
        let mag = x.abs();
        let max = self.max_finite();
        let overflow = |sat: bool| -> u64 {
            if sat || !inf && !has_nan {
                sign | self.encode(max, None, false, false) & !sign_bit
            } else if inf {
                sign | (((1u64 << e) - 1) << m)
            } else {
                nan_bits
            }
        };
        if mag.is_infinite() {
            return if satfinite {
                overflow(true)
            } else {
                overflow(false)
            };
        }
        // Quantum of the binade holding `mag` (subnormals share the lowest binade's).
        let min_exp = 1 - bias;
        let exp = if mag == 0.0 {
            min_exp
        } else {
            (mag.log2().floor() as i32).max(min_exp)
        };
        let quantum = 2f64.powi(exp - m as i32);
        let q = mag / quantum;
        let toward = |up: bool| if up { q.ceil() } else { q.floor() };
        let n = match round {
            Some(Round::Zero) => q.floor(),
            Some(Round::Down) => toward(x < 0.0),
            Some(Round::Up) => toward(x > 0.0),
            _ if away => (q + 0.5).floor(),
            _ => {
                let f = q.floor();
                let r = q - f;
                if r > 0.5 || (r == 0.5 && f % 2.0 == 1.0) {
                    f + 1.0
                } else {
                    f
                }
            }
        };
        let value = n * quantum;
        if value > max {
            // Directed roundings toward zero keep the largest finite value.
            let keeps_max = matches!(round, Some(Round::Zero))
                || matches!(round, Some(Round::Down)) && x > 0.0
                || matches!(round, Some(Round::Up)) && x < 0.0;
            return overflow(satfinite || keeps_max);
        }
        if value == 0.0 {
            return sign;
        }
        let vexp = (value.log2().floor() as i32).max(min_exp);
        let man_scaled = value / 2f64.powi(vexp - m as i32);
        let (exp_field, man) = if vexp == min_exp && value < 2f64.powi(min_exp) {
            (0u64, man_scaled as u64)
        } else {
            ((vexp + bias) as u64, man_scaled as u64 - (1u64 << m))
        };
        let bits = sign | (exp_field << m) | man;
        match self {
            // tf32 keeps f32's layout with the low 13 mantissa bits zero.
            Format::TF32 => bits << 13,
            _ => bits,
        }
    }
}

/// Rounds to f32 with a directed rounding (the float `cvt`'s `.rz/.rm/.rp`).
fn round_to_f32(x: f64, round: Option<Round>) -> f32 {
    let n = x as f32;
    let back = n as f64;
    if back == x || x.is_nan() {
        return n;
    }
    let step = |v: f32, up: bool| {
        let b = v.to_bits();
        let away = (v >= 0.0) == up;
        f32::from_bits(if v == 0.0 {
            if up {
                1
            } else {
                0x8000_0001
            }
        } else if away {
            b + 1
        } else {
            b - 1
        })
    };
    match round {
        Some(Round::Zero) if back.abs() > x.abs() => step(n, n < 0.0),
        Some(Round::Down) if back > x => step(n, false),
        Some(Round::Up) if back < x => step(n, true),
        _ => n,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fp8_values_of_the_ocp_spec() {
        // e4m3: 448 is S.1111.110, the smallest subnormal 2^-9.
        assert_eq!(Format::E4M3.encode(448.0, None, false, false), 0x7E);
        assert_eq!(Format::E4M3.decode(0x7E), 448.0);
        assert_eq!(Format::E4M3.decode(0x01), 2f64.powi(-9));
        assert!(Format::E4M3.decode(0x7F).is_nan());
        // Overflow: NaN without satfinite, 448 with it.
        assert_eq!(Format::E4M3.encode(1000.0, None, false, false), 0x7F);
        assert_eq!(Format::E4M3.encode(-1000.0, None, false, true), 0xFE);
        // e5m2: 57344 largest, infinity 0x7C.
        assert_eq!(Format::E5M2.encode(57344.0, None, false, false), 0x7B);
        assert_eq!(Format::E5M2.encode(1e6, None, false, false), 0x7C);
        assert_eq!(Format::E5M2.encode(1.5, None, false, false), 0x3E);
        // Ties to even: 1.0625 lies between 1.0 (0x38) and 1.125 (0x39) in e4m3.
        assert_eq!(Format::E4M3.encode(1.0625, None, false, false), 0x38);
        assert_eq!(Format::E4M3.encode(1.1875, None, false, false), 0x3A);
    }

    #[test]
    fn bf16_directed_rounding_and_tf32() {
        let x = f32::from_bits(0x3F80_FFFF) as f64; // just below 1 + 2^-7
        assert_eq!(
            Format::BF16.encode(x, Some(Round::Zero), false, false),
            0x3F80
        );
        assert_eq!(Format::BF16.encode(x, None, false, false), 0x3F81);
        assert_eq!(
            Format::BF16.encode(-x, Some(Round::Down), false, false),
            0xBF81
        );
        // tf32 rna: ties away from zero on the 10-bit mantissa.
        let t = f32::from_bits(0x3F80_1000) as f64; // exactly half an ulp of tf32
        assert_eq!(Format::TF32.encode(t, None, true, false), 0x3F80_2000);
        assert_eq!(Format::TF32.encode(t, None, false, false), 0x3F80_0000);
        assert_eq!(Format::E2M1.encode(6.0, None, false, false), 0x7);
        assert_eq!(Format::E2M1.encode(100.0, None, false, false), 0x7);
        assert_eq!(Format::E2M1.decode(0x3), 1.5);
        assert_eq!(Format::UE8M0.encode(8.0, None, false, false), 130);
    }
}
