//! Literals and constant folding.

use super::*;

/// Parses a C integer literal with its type [C11 6.4.4.1]: decimal literals are int, long;
/// hex/octal also unsigned; suffixes u, l, ll.
pub fn parse_int_literal(t: &str) -> Option<(u64, Ty)> {
    if let Some(pos) = t.trim().strip_prefix('-') {
        let (v, ty) = parse_int_literal(pos)?;
        return Some((v.wrapping_neg(), ty));
    }
    let t = t.replace('\'', "");
    let lower = t.to_ascii_lowercase();
    let digits_end = lower.trim_end_matches(['u', 'l']).len();
    let (body, suffix) = lower.split_at(digits_end);
    let (radix, digits) = if let Some(h) = body.strip_prefix("0x") {
        (16, h)
    } else if let Some(b) = body.strip_prefix("0b") {
        (2, b)
    } else if body.len() > 1 && body.starts_with('0') {
        (8, &body[1..])
    } else {
        (10, body)
    };
    if digits.is_empty() || body.contains('.') || (radix != 16 && body.contains('e')) {
        return None;
    }
    let v = u64::from_str_radix(digits, radix).ok()?;
    let unsigned = suffix.contains('u');
    let long = suffix.contains('l');
    let ty = if !long && !unsigned && v <= i32::MAX as u64 {
        INT
    } else if !long && (unsigned || radix != 10) && v <= u32::MAX as u64 {
        UINT
    } else if !unsigned && v <= i64::MAX as u64 {
        LONG
    } else {
        ULONG
    };
    Some((v, ty))
}

pub(crate) fn parse_float_literal(t: &str) -> Option<(f64, Ty)> {
    let lower = t.to_ascii_lowercase();
    if let Some(b) = lower.strip_suffix('f') {
        let v: f32 = b.parse().ok()?;
        return Some((v as f64, FLOAT));
    }
    let b = lower.strip_suffix('l').unwrap_or(&lower);
    Some((b.parse().ok()?, DOUBLE))
}

/// Folds a constant expression; `None` when it depends on run-time values.
pub fn const_eval(x: &Expr) -> Option<u64> {
    use crate::value::{binop_scalar, cast_scalar, unop_scalar};
    match &x.kind {
        ExprKind::Const(v) => Some(*v),
        ExprKind::Cast(a) => Some(cast_scalar(const_eval(a)?, &a.ty, &x.ty)),
        ExprKind::Unary(op, a) => Some(unop_scalar(*op, const_eval(a)?, &x.ty)),
        ExprKind::Binary(op, a, b) => {
            let (av, bv) = (const_eval(a)?, const_eval(b)?);
            binop_scalar(*op, av, bv, &a.ty).ok()
        }
        ExprKind::Cond(c, a, b) => {
            if const_eval(c)? != 0 {
                const_eval(a)
            } else {
                const_eval(b)
            }
        }
        ExprKind::LogicalAnd(a, b) => Some((const_eval(a)? != 0 && const_eval(b)? != 0) as u64),
        ExprKind::LogicalOr(a, b) => Some((const_eval(a)? != 0 || const_eval(b)? != 0) as u64),
        _ => None,
    }
}
