//! Built-in device functions: math library, integer intrinsics, atomics, warp shuffles and
//! votes, `__half` arithmetic, and the no-op fences and warp barriers.

use super::*;
use crate::ir::{AtomicOp, Intrinsic, WarpOp};

/// The floating-point type a math function computes in: its `f`-suffixed or `__` fast form
/// is `float`; the plain C++ name takes `float` for a `float` operand and `double` otherwise
/// (the CUDA math API's overloads).
#[derive(Clone, Copy)]
enum Prec {
    F32,
    Generic,
}

/// A math function's name: its intrinsic, operand count and precision.
fn math_fn(name: &str) -> Option<(Intrinsic, usize, Prec)> {
    use Intrinsic::*;
    let (base, prec) = if let Some(b) = name.strip_prefix("__") {
        (b.strip_suffix("_rn").unwrap_or(b), Prec::F32)
    } else {
        (name, Prec::Generic)
    };
    let table: &[(&str, Intrinsic, usize)] = &[
        ("sqrt", Sqrt, 1),
        ("fsqrt", Sqrt, 1),
        ("rsqrt", Rsqrt, 1),
        ("exp", Exp, 1),
        ("exp2", Exp2, 1),
        ("exp10", Exp10, 1),
        ("log", Log, 1),
        ("log2", Log2, 1),
        ("log10", Log10, 1),
        ("pow", Pow, 2),
        ("sin", Sin, 1),
        ("cos", Cos, 1),
        ("tan", Tan, 1),
        ("tanh", Tanh, 1),
        ("floor", Floor, 1),
        ("ceil", Ceil, 1),
        ("trunc", Trunc, 1),
        ("round", Round, 1),
        ("fma", Fma, 3),
        ("saturate", Saturate, 1),
    ];
    for (n, f, k) in table {
        if base == *n {
            return Some((*f, *k, prec));
        }
        if base.strip_suffix('f') == Some(*n) {
            return Some((*f, *k, Prec::F32));
        }
    }
    None
}

fn atomic_fn(name: &str) -> Option<AtomicOp> {
    let base = name
        .strip_suffix("_block")
        .or_else(|| name.strip_suffix("_system"))
        .unwrap_or(name);
    Some(match base {
        "atomicAdd" | "atomicSub" => AtomicOp::Add,
        "atomicMin" => AtomicOp::Min,
        "atomicMax" => AtomicOp::Max,
        "atomicExch" => AtomicOp::Exch,
        "atomicCAS" => AtomicOp::Cas,
        "atomicAnd" => AtomicOp::And,
        "atomicOr" => AtomicOp::Or,
        "atomicXor" => AtomicOp::Xor,
        "atomicInc" => AtomicOp::Inc,
        "atomicDec" => AtomicOp::Dec,
        _ => return None,
    })
}

const HALF: Ty = Ty::Float(2);

impl<'t> Lowerer<'t> {
    pub(super) fn builtin_call(
        &mut self,
        name: &str,
        mut args: Vec<Expr>,
        n: Node,
        src: &str,
    ) -> Result<Expr> {
        let loc = self.loc(n);
        let want = |k: usize, l: &Self, args: &[Expr]| -> Result<()> {
            if args.len() != k {
                Err(l.err_at(
                    n,
                    format!("{name} takes {k} argument(s), {} given", args.len()),
                ))
            } else {
                Ok(())
            }
        };
        if let Some((f, k, prec)) = math_fn(name) {
            want(k, self, &args)?;
            let t = match prec {
                Prec::F32 => FLOAT,
                Prec::Generic => {
                    if args
                        .iter()
                        .all(|a| matches!(a.ty, Ty::Float(4) | Ty::Float(2)))
                    {
                        FLOAT
                    } else {
                        DOUBLE
                    }
                }
            };
            let mut ops = Vec::new();
            for a in args {
                ops.push(self.convert(a, &t, n)?);
            }
            return Ok(e(ExprKind::Intrinsic(f, ops), t, loc));
        }
        if let Some(op) = atomic_fn(name) {
            return self.atomic_call(name, op, args, n, src);
        }
        if let Some(r) = self.warp_call(name, &mut args, n)? {
            return Ok(r);
        }
        if let Some(r) = self.half_call(name, &mut args, n)? {
            return Ok(r);
        }
        let int_fn = |nm: &str| -> Option<(Intrinsic, Ty, Ty)> {
            Some(match nm {
                "__popc" => (Intrinsic::Popc, UINT, INT),
                "__popcll" => (Intrinsic::Popc, ULONG, INT),
                "__clz" => (Intrinsic::Clz, UINT, INT),
                "__clzll" => (Intrinsic::Clz, ULONG, INT),
                "__ffs" => (Intrinsic::Ffs, UINT, INT),
                "__ffsll" => (Intrinsic::Ffs, ULONG, INT),
                "__brev" => (Intrinsic::Brev, UINT, UINT),
                "__brevll" => (Intrinsic::Brev, ULONG, ULONG),
                "__mulhi" => (Intrinsic::MulHi, INT, INT),
                "__umulhi" => (Intrinsic::MulHi, UINT, UINT),
                "__mul24" => (Intrinsic::Mul24, INT, INT),
                "__umul24" => (Intrinsic::Mul24, UINT, UINT),
                "__int_as_float" => (Intrinsic::BitCast, INT, FLOAT),
                "__uint_as_float" => (Intrinsic::BitCast, UINT, FLOAT),
                "__float_as_int" => (Intrinsic::BitCast, FLOAT, INT),
                "__float_as_uint" => (Intrinsic::BitCast, FLOAT, UINT),
                "__double_as_longlong" => (Intrinsic::BitCast, DOUBLE, LONG),
                "__longlong_as_double" => (Intrinsic::BitCast, LONG, DOUBLE),
                _ => return None,
            })
        };
        if let Some((f, at, rt)) = int_fn(name) {
            let k = if matches!(f, Intrinsic::MulHi | Intrinsic::Mul24) {
                2
            } else {
                1
            };
            want(k, self, &args)?;
            let mut ops = Vec::new();
            for a in args {
                ops.push(self.convert(a, &at, n)?);
            }
            return Ok(e(ExprKind::Intrinsic(f, ops), rt, loc));
        }
        match name {
            "min" | "max" | "fminf" | "fmaxf" | "fmin" | "fmax" | "umin" | "umax" | "llmin"
            | "llmax" => {
                want(2, self, &args)?;
                let b = args
                    .pop()
                    .ok_or_else(|| self.err_at(n, "missing argument"))?;
                let a = args
                    .pop()
                    .ok_or_else(|| self.err_at(n, "missing argument"))?;
                let ct = match name {
                    "fminf" | "fmaxf" => FLOAT,
                    "fmin" | "fmax" => DOUBLE,
                    _ => common(&a.ty, &b.ty),
                };
                let a = self.convert(a, &ct, n)?;
                let b = self.convert(b, &ct, n)?;
                let op = if name.contains("min") {
                    BinOp::Min
                } else {
                    BinOp::Max
                };
                Ok(e(ExprKind::Binary(op, Box::new(a), Box::new(b)), ct, loc))
            }
            "abs" | "fabsf" | "fabs" | "labs" | "llabs" => {
                want(1, self, &args)?;
                let a = args
                    .pop()
                    .ok_or_else(|| self.err_at(n, "missing argument"))?;
                let t = match name {
                    "fabsf" => FLOAT,
                    "fabs" => DOUBLE,
                    _ => promote(&a.ty),
                };
                let a = self.convert(a, &t, n)?;
                Ok(e(ExprKind::Unary(UnOp::Abs, Box::new(a)), t, loc))
            }
            "__fdividef" | "__fdiv_rn" | "__fadd_rn" | "__fsub_rn" | "__fmul_rn" | "__dadd_rn"
            | "__dmul_rn" => {
                want(2, self, &args)?;
                let t = if name.starts_with("__d") {
                    DOUBLE
                } else {
                    FLOAT
                };
                let b = args
                    .pop()
                    .ok_or_else(|| self.err_at(n, "missing argument"))?;
                let a = args
                    .pop()
                    .ok_or_else(|| self.err_at(n, "missing argument"))?;
                let op = match &name[name.len() - 6..] {
                    _ if name.contains("div") => BinOp::Div,
                    _ if name.contains("add") => BinOp::Add,
                    _ if name.contains("sub") => BinOp::Sub,
                    _ => BinOp::Mul,
                };
                let a = self.convert(a, &t, n)?;
                let b = self.convert(b, &t, n)?;
                Ok(e(ExprKind::Binary(op, Box::new(a), Box::new(b)), t, loc))
            }
            "__int2float_rn" | "__uint2float_rn" | "__float2int_rz" | "__float2uint_rz"
            | "__int2double_rn" | "__double2float_rn" | "__float2ll_rz" | "__ll2float_rn" => {
                want(1, self, &args)?;
                let a = args
                    .pop()
                    .ok_or_else(|| self.err_at(n, "missing argument"))?;
                let t = match name {
                    "__int2float_rn" | "__uint2float_rn" | "__double2float_rn"
                    | "__ll2float_rn" => FLOAT,
                    "__int2double_rn" => DOUBLE,
                    "__float2uint_rz" => UINT,
                    "__float2ll_rz" => LONG,
                    _ => INT,
                };
                self.convert(a, &t, n)
            }
            "__float2int_rn" | "__float2int_rd" | "__float2int_ru" | "__float2uint_rn"
            | "__double2int_rn" => {
                // Round as named, then convert.
                want(1, self, &args)?;
                let a = args
                    .pop()
                    .ok_or_else(|| self.err_at(n, "missing argument"))?;
                let ft = if name.starts_with("__double") {
                    DOUBLE
                } else {
                    FLOAT
                };
                let a = self.convert(a, &ft, n)?;
                let f = match &name[name.len() - 2..] {
                    "rd" => Intrinsic::Floor,
                    "ru" => Intrinsic::Ceil,
                    _ => Intrinsic::Round,
                };
                let r = e(ExprKind::Intrinsic(f, vec![a]), ft, loc);
                let t = if name.contains("uint") { UINT } else { INT };
                self.convert(r, &t, n)
            }
            "assert" => {
                want(1, self, &args)?;
                let c = args
                    .pop()
                    .ok_or_else(|| self.err_at(n, "assert takes 1 argument"))?;
                let c = self.to_bool(c, n)?;
                Ok(e(
                    ExprKind::Intrinsic(Intrinsic::Assert, vec![c]),
                    Ty::Void,
                    loc,
                ))
            }
            "__trap" => {
                let never = e(ExprKind::Const(0), Ty::Bool, loc);
                let mut seq = self.void_seq(args, loc);
                seq = e(
                    ExprKind::Seq(
                        Box::new(seq),
                        Box::new(e(
                            ExprKind::Intrinsic(Intrinsic::Assert, vec![never]),
                            Ty::Void,
                            loc,
                        )),
                    ),
                    Ty::Void,
                    loc,
                );
                Ok(seq)
            }
            "__syncwarp"
            | "__threadfence"
            | "__threadfence_block"
            | "__threadfence_system"
            | "__nanosleep"
            | "__assert_fail" => {
                // The interpreter runs a block in lockstep: warp barriers and fences order
                // nothing further. Operands are evaluated for their effects.
                Ok(self.void_seq(args, loc))
            }
            _ => Err(self.err_at(n, format!("unknown function '{name}'"))),
        }
    }

    /// Evaluates `args` for their effects; the value is `void`.
    pub(super) fn void_seq(&self, args: Vec<Expr>, loc: Loc) -> Expr {
        let mut acc = e(ExprKind::Const(0), Ty::Void, loc);
        for a in args.into_iter().rev() {
            acc = e(ExprKind::Seq(Box::new(a), Box::new(acc)), Ty::Void, loc);
        }
        acc
    }

    fn atomic_call(
        &mut self,
        name: &str,
        op: AtomicOp,
        args: Vec<Expr>,
        n: Node,
        src: &str,
    ) -> Result<Expr> {
        let loc = self.loc(n);
        let k = if op == AtomicOp::Cas { 3 } else { 2 };
        if args.len() != k {
            return Err(self.err_at(
                n,
                format!("{name} takes {k} arguments, {} given", args.len()),
            ));
        }
        let mut it = args.into_iter();
        let (Some(p), Some(a1)) = (it.next(), it.next()) else {
            return Err(self.err_at(n, format!("{name} takes {k} arguments")));
        };
        let Ty::Ptr(el) = p.ty.clone() else {
            return Err(self.err_at(
                n,
                format!("{name}'s first argument must be a pointer (the address to update)"),
            ));
        };
        let ty = *el;
        if !ty.is_arith() {
            return Err(self.err_at(n, format!("{name} on a {}", self.structs.name(&ty))));
        }
        let (compare, value) = match it.next() {
            Some(v) => (Some(self.convert(a1, &ty, n)?), self.convert(v, &ty, n)?),
            None => (None, self.convert(a1, &ty, n)?),
        };
        let value = if name.starts_with("atomicSub") {
            e(ExprKind::Unary(UnOp::Neg, Box::new(value)), ty.clone(), loc)
        } else {
            value
        };
        let site = self.site(loc, self.site_text(n, src), Op::Atomic, false);
        Ok(e(
            ExprKind::Atomic {
                op,
                addr: Box::new(p),
                value: Box::new(value),
                compare: compare.map(Box::new),
                site,
            },
            ty,
            loc,
        ))
    }

    /// Warp shuffles, votes and `__activemask`; `None` when `name` is none of them.
    fn warp_call(&mut self, name: &str, args: &mut Vec<Expr>, n: Node) -> Result<Option<Expr>> {
        let loc = self.loc(n);
        let full = || e(ExprKind::Const(u32::MAX as u64), UINT, loc);
        let (op, synced) = match name {
            "__shfl_sync" => (WarpOp::ShflIdx, true),
            "__shfl_up_sync" => (WarpOp::ShflUp, true),
            "__shfl_down_sync" => (WarpOp::ShflDown, true),
            "__shfl_xor_sync" => (WarpOp::ShflXor, true),
            "__shfl" => (WarpOp::ShflIdx, false),
            "__shfl_up" => (WarpOp::ShflUp, false),
            "__shfl_down" => (WarpOp::ShflDown, false),
            "__shfl_xor" => (WarpOp::ShflXor, false),
            "__ballot_sync" => (WarpOp::Ballot, true),
            "__all_sync" => (WarpOp::All, true),
            "__any_sync" => (WarpOp::Any, true),
            "__ballot" => (WarpOp::Ballot, false),
            "__all" => (WarpOp::All, false),
            "__any" => (WarpOp::Any, false),
            "__activemask" => (WarpOp::ActiveMask, true),
            _ => return Ok(None),
        };
        if !synced {
            args.insert(0, full());
        }
        let ops = std::mem::take(args);
        Ok(Some(self.warp_expr(op, ops, n, loc)?))
    }

    /// Builds a [`WarpOp`] expression from (mask, operands…), converting each operand.
    pub(super) fn warp_expr(
        &mut self,
        op: WarpOp,
        mut ops: Vec<Expr>,
        n: Node,
        loc: Loc,
    ) -> Result<Expr> {
        let shfl = matches!(
            op,
            WarpOp::ShflIdx | WarpOp::ShflUp | WarpOp::ShflDown | WarpOp::ShflXor
        );
        let (lo, hi) = match op {
            _ if shfl => (3, 4),
            WarpOp::ActiveMask => (0, 0),
            _ => (2, 2),
        };
        if ops.len() < lo || ops.len() > hi {
            return Err(self.err_at(
                n,
                format!(
                    "this warp function takes {lo} to {hi} arguments, {} given",
                    ops.len()
                ),
            ));
        }
        let mut conv = Vec::new();
        let mut vt = UINT;
        for (i, a) in ops.drain(..).enumerate() {
            let t = match (i, shfl) {
                (0, _) => UINT,
                (1, true) => {
                    if !a.ty.is_scalar() {
                        return Err(self.err_at(n, "a shuffle moves a number or a pointer"));
                    }
                    vt = promote(&a.ty);
                    vt.clone()
                }
                (1, false) => Ty::Bool,
                _ => INT,
            };
            conv.push(self.convert(a, &t, n)?);
        }
        if shfl && conv.len() == 3 {
            conv.push(e(ExprKind::Const(32), INT, loc));
        }
        let ty = match op {
            _ if shfl => vt,
            WarpOp::All | WarpOp::Any => INT,
            _ => UINT,
        };
        Ok(e(ExprKind::Warp(op, conv), ty, loc))
    }

    /// `__half`/`__nv_bfloat16` conversions and arithmetic; `None` when `name` is none.
    fn half_call(&mut self, name: &str, args: &mut Vec<Expr>, n: Node) -> Result<Option<Expr>> {
        let loc = self.loc(n);
        let to = match name {
            "__float2half"
            | "__float2half_rn"
            | "__double2half"
            | "__int2half_rn"
            | "__float2bfloat16"
            | "__float2bfloat16_rn"
            | "__double2bfloat16" => Some(HALF),
            "__half2float" | "__bfloat162float" | "__low2float" => Some(FLOAT),
            "__half2int_rz" | "__bfloat162int_rz" => Some(INT),
            _ => None,
        };
        if let Some(t) = to {
            if args.len() != 1 {
                return Err(self.err_at(n, format!("{name} takes 1 argument")));
            }
            let a = args.remove(0);
            return self.convert(a, &t, n).map(Some);
        }
        let bin = match name {
            "__hadd" => Some(BinOp::Add),
            "__hsub" => Some(BinOp::Sub),
            "__hmul" => Some(BinOp::Mul),
            "__hdiv" => Some(BinOp::Div),
            "__hmin" => Some(BinOp::Min),
            "__hmax" => Some(BinOp::Max),
            "__hlt" => Some(BinOp::Lt),
            "__hle" => Some(BinOp::Le),
            "__hgt" => Some(BinOp::Gt),
            "__hge" => Some(BinOp::Ge),
            "__heq" => Some(BinOp::Eq),
            "__hne" => Some(BinOp::Ne),
            _ => None,
        };
        if let Some(op) = bin {
            if args.len() != 2 {
                return Err(self.err_at(n, format!("{name} takes 2 arguments")));
            }
            let b = args.remove(1);
            let a = args.remove(0);
            let a = self.convert(a, &HALF, n)?;
            let b = self.convert(b, &HALF, n)?;
            let t = if matches!(
                op,
                BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge | BinOp::Eq | BinOp::Ne
            ) {
                Ty::Bool
            } else {
                HALF
            };
            return Ok(Some(e(
                ExprKind::Binary(op, Box::new(a), Box::new(b)),
                t,
                loc,
            )));
        }
        let unary = matches!(name, "__hneg" | "__habs" | "hsqrt" | "__hsqrt");
        if name == "__hfma" {
            if args.len() != 3 {
                return Err(self.err_at(n, "__hfma takes 3 arguments"));
            }
            let mut ops = Vec::new();
            for a in args.drain(..) {
                ops.push(self.convert(a, &HALF, n)?);
            }
            return Ok(Some(e(ExprKind::Intrinsic(Intrinsic::Fma, ops), HALF, loc)));
        }
        if unary {
            if args.len() != 1 {
                return Err(self.err_at(n, format!("{name} takes 1 argument")));
            }
            let a = args.remove(0);
            let a = self.convert(a, &HALF, n)?;
            let k = match name {
                "hsqrt" | "__hsqrt" => ExprKind::Intrinsic(Intrinsic::Sqrt, vec![a]),
                "__habs" => ExprKind::Unary(UnOp::Abs, Box::new(a)),
                _ => ExprKind::Unary(UnOp::Neg, Box::new(a)),
            };
            return Ok(Some(e(k, HALF, loc)));
        }
        Ok(None)
    }
}
