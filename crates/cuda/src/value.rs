//! Scalar values as the IR encodes them (integers sign- or zero-extended to 64 bits, floats
//! as `f64` bits) and C's operations on them, used where the lowerer folds constants and a
//! launch passes arguments; and the description of a launch. Kernels run on the SIMT
//! executor (`warpscope-simt`) after [`crate::codegen`] lowers them to PTX.

use crate::ir::{BinOp, UnOp};
use crate::lower::Lowered;
use crate::types::Ty;
use warpscope_init::Contents;

/// Canonical form of an integer of `bytes` bytes: wrapped to its width, then sign- or
/// zero-extended to 64 bits.
pub fn canon(v: u64, bytes: u8, signed: bool) -> u64 {
    if bytes >= 8 {
        return v;
    }
    let bits = bytes as u32 * 8;
    let m = (1u64 << bits) - 1;
    let x = v & m;
    if signed && (x >> (bits - 1)) & 1 == 1 {
        x | !m
    } else {
        x
    }
}

fn f(v: u64) -> f64 {
    f64::from_bits(v)
}

fn round_float(x: f64, bytes: u8) -> u64 {
    match bytes {
        2 => (half::f16::from_f64(x).to_f64()).to_bits(),
        4 => (x as f32 as f64).to_bits(),
        _ => x.to_bits(),
    }
}

/// The value `v` of type `t` as a signed 64-bit integer (for indexes and messages).
pub fn as_i64(v: u64, t: &Ty) -> i64 {
    match t {
        Ty::Float(_) => f(v) as i64,
        _ => v as i64,
    }
}

/// Converts a scalar from type `from` to type `to` (C conversions; float → int truncates and
/// saturates as PTX's `cvt.rzi` does).
pub fn cast_scalar(v: u64, from: &Ty, to: &Ty) -> u64 {
    match (from, to) {
        (_, Ty::Bool) => match from {
            Ty::Float(_) => (f(v) != 0.0) as u64,
            _ => (v != 0) as u64,
        },
        (Ty::Float(_), Ty::Float(b)) => round_float(f(v), *b),
        (Ty::Float(_), Ty::Int { bytes, signed }) => {
            let x = f(v);
            if *signed {
                canon(x as i64 as u64, *bytes, true)
            } else {
                canon(x as u64, *bytes, false)
            }
        }
        (Ty::Int { signed, .. }, Ty::Float(b)) => {
            let x = if *signed { v as i64 as f64 } else { v as f64 };
            round_float(x, *b)
        }
        (Ty::Bool, Ty::Float(b)) => round_float(v as f64, *b),
        (_, Ty::Int { bytes, signed }) => canon(v, *bytes, *signed),
        _ => v,
    }
}

pub fn unop_scalar(op: UnOp, v: u64, t: &Ty) -> u64 {
    match (op, t) {
        (UnOp::LogicalNot, _) => (v == 0) as u64,
        (UnOp::Neg, Ty::Float(b)) => round_float(-f(v), *b),
        (UnOp::Abs, Ty::Float(b)) => round_float(f(v).abs(), *b),
        (UnOp::Neg, Ty::Int { bytes, signed }) => canon(v.wrapping_neg(), *bytes, *signed),
        (UnOp::BitNot, Ty::Int { bytes, signed }) => canon(!v, *bytes, *signed),
        (UnOp::Abs, Ty::Int { bytes, signed }) => {
            if *signed && (v as i64) < 0 {
                canon(v.wrapping_neg(), *bytes, true)
            } else {
                v
            }
        }
        _ => v,
    }
}

/// Applies a binary operator to operands of type `t` (already converted). Comparisons give
/// 0/1. `Err(())` for an integer division by zero.
pub fn binop_scalar(op: BinOp, a: u64, b: u64, t: &Ty) -> std::result::Result<u64, ()> {
    Ok(match t {
        Ty::Float(bytes) => {
            let (x, y) = (f(a), f(b));
            let r = match op {
                BinOp::Add => x + y,
                BinOp::Sub => x - y,
                BinOp::Mul => x * y,
                BinOp::Div => x / y,
                BinOp::Min => x.min(y),
                BinOp::Max => x.max(y),
                BinOp::Lt => return Ok((x < y) as u64),
                BinOp::Le => return Ok((x <= y) as u64),
                BinOp::Gt => return Ok((x > y) as u64),
                BinOp::Ge => return Ok((x >= y) as u64),
                BinOp::Eq => return Ok((x == y) as u64),
                BinOp::Ne => return Ok((x != y) as u64),
                _ => x,
            };
            round_float(r, *bytes)
        }
        _ => {
            let (bytes, signed) = match t {
                Ty::Int { bytes, signed } => (*bytes, *signed),
                Ty::Bool => (4, true),
                _ => (8, false),
            };
            let bits = bytes as u32 * 8;
            let (sa, sb) = (a as i64, b as i64);
            let r = match op {
                BinOp::Add => a.wrapping_add(b),
                BinOp::Sub => a.wrapping_sub(b),
                BinOp::Mul => a.wrapping_mul(b),
                BinOp::Div | BinOp::Rem => {
                    if canon(b, bytes, signed) == 0 {
                        return Err(());
                    }
                    match (op, signed) {
                        (BinOp::Div, true) => sa.wrapping_div(sb) as u64,
                        (BinOp::Div, false) => canon(a, bytes, false) / canon(b, bytes, false),
                        (_, true) => sa.wrapping_rem(sb) as u64,
                        (_, false) => canon(a, bytes, false) % canon(b, bytes, false),
                    }
                }
                // Shift counts of the width or more give 0 (or the sign), as PTX's shl/shr do.
                BinOp::Shl => {
                    if b >= bits as u64 {
                        0
                    } else {
                        a << b
                    }
                }
                BinOp::Shr => {
                    let n = b.min(bits as u64 - 1 + (!signed) as u64) as u32;
                    if signed {
                        (sa >> n.min(63)) as u64
                    } else if n >= bits {
                        0
                    } else {
                        canon(a, bytes, false) >> n
                    }
                }
                BinOp::BitAnd => a & b,
                BinOp::BitOr => a | b,
                BinOp::BitXor => a ^ b,
                BinOp::Min
                | BinOp::Max
                | BinOp::Lt
                | BinOp::Le
                | BinOp::Gt
                | BinOp::Ge
                | BinOp::Eq
                | BinOp::Ne => {
                    let ord = if signed { sa.cmp(&sb) } else { a.cmp(&b) };
                    use std::cmp::Ordering::*;
                    return Ok(match op {
                        BinOp::Min => {
                            if ord == Greater {
                                b
                            } else {
                                a
                            }
                        }
                        BinOp::Max => {
                            if ord == Less {
                                b
                            } else {
                                a
                            }
                        }
                        BinOp::Lt => (ord == Less) as u64,
                        BinOp::Le => (ord != Greater) as u64,
                        BinOp::Gt => (ord == Greater) as u64,
                        BinOp::Ge => (ord != Less) as u64,
                        BinOp::Eq => (ord == Equal) as u64,
                        _ => (ord != Equal) as u64,
                    });
                }
            };
            canon(r, bytes, signed)
        }
    })
}

/// The in-memory bytes (little-endian) of scalar `v` of type `t`; 8 bytes, of which the
/// first `size(t)` are meaningful.
pub fn to_bytes(v: u64, t: &Ty) -> [u8; 8] {
    match t {
        Ty::Float(2) => (half::f16::from_f64(f(v)).to_bits() as u64).to_le_bytes(),
        Ty::Float(4) => ((f(v) as f32).to_bits() as u64).to_le_bytes(),
        _ => v.to_le_bytes(),
    }
}

/// A launch: grid and block shape, kernel arguments, sizes.
#[derive(Clone, Debug)]
pub struct LaunchConfig {
    pub grid: [u32; 3],
    pub block: [u32; 3],
    /// One encoded value per kernel parameter (ignored for pointer parameters).
    pub args: Vec<u64>,
    /// The bytes of each struct parameter passed by value, as the kernel receives them
    /// (`None` for the others), indexed like `args`.
    pub aggregates: Vec<Option<Vec<u8>>>,
    /// Bytes of each global allocation when bounded (indexed like `Lowered::allocs`).
    pub alloc_sizes: Vec<Option<u64>>,
    /// Initial contents of each global allocation (indexed like `alloc_sizes`; missing
    /// entries are zero). A `__device__` variable's initializer is written over it.
    pub alloc_contents: Vec<Contents>,
    /// Bytes of `extern __shared__` memory.
    pub dynamic_shared_bytes: u64,
    /// Steps (32 warp instructions each) one block may run before it is called runaway.
    pub max_steps: u64,
    /// Bytes the executor's memory images may hold ([`warpscope_simt::Launch::max_memory`]).
    pub max_memory: u64,
    /// Counters of the running launch, for a progress bar.
    pub progress: Option<std::sync::Arc<warpscope_simt::Progress>>,
    /// Run only these blocks ([`warpscope_simt::Launch::sample`]).
    pub sample: Option<std::sync::Arc<Vec<u64>>>,
    /// `--texture`: each texture or surface object parameter and each texture or surface
    /// reference the kernel reads, by name ([`crate::Kernel::set_textures`]).
    pub textures: Vec<warpscope_model::texture::TextureDesc>,
    /// Where the run records synccheck's findings ([`warpscope_simt::Launch::findings`]).
    pub findings: Option<std::sync::Arc<warpscope_simt::Findings>>,
}

/// Where `extern __shared__` memory starts: after the static shared variables, 16-byte
/// aligned.
pub fn dynamic_shared_base(prog: &Lowered) -> u64 {
    prog.static_shared_bytes.div_ceil(16).saturating_mul(16)
}

/// Which warp issued an access: its block's coordinates and its index within the block
/// (threads `32·warp … 32·warp + 31` in linear thread order).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WarpOrigin {
    pub block: [u32; 3],
    pub warp: u32,
}
