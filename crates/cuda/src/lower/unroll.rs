//! Which `for` loops nvcc unrolls fully, so that a per-thread array indexed by their
//! induction variables stays in registers rather than local memory.
//!
//! The CUDA C++ Programming Guide ("#pragma unroll") says the compiler unrolls small loops
//! with a known trip count by default; an array indexed only by constants after unrolling is
//! kept in registers ("Local Memory": arrays it cannot tell are indexed with constant
//! quantities go to local memory). The size limit is not documented and depends on the
//! body: nvcc 13 (-O3, sm_90) kept a 64-float array in registers through loops of up to 200
//! iterations that index it and put it in local memory at 256, so loops of at most
//! [`MAX_UNROLLED_TRIPS`] iterations count as unrolled here (Parboil sgemm's `c[16]`). The
//! compiled path shows what nvcc really did.

use super::*;
use crate::ir::{BinOp, Expr, ExprKind, Stmt};

/// Trip count up to which a constant-count `for` loop counts as fully unrolled.
pub const MAX_UNROLLED_TRIPS: i64 = 200;

impl<'t> Lowerer<'t> {
    /// The register slot of the induction variable of `for` loop `n` when the loop runs a
    /// constant number of times (at most [`MAX_UNROLLED_TRIPS`]): `for (int i = A; i < B;
    /// i += C)` with constants A, B, C (also `<=`, `>`, `>=`, `!=`, `++`, `--`, `-=`) and a
    /// body that does not assign `i` or take its address.
    pub(super) fn unrolled_induction(
        &self,
        n: Node,
        init: Option<&Stmt>,
        cond: Option<&Expr>,
        step: Option<&Expr>,
        src: &str,
    ) -> Option<Slot> {
        let name = induction_name(n.child_by_field_name("initializer")?, src)?;
        let var = self.lookup(&name)?;
        let VarHome::Reg(slot) = var.home else {
            return None;
        };
        if !var.ty.is_int() {
            return None;
        }
        let signed = |v: u64| -> i64 {
            match var.ty {
                Ty::Int { bytes: 8, .. } => v as i64,
                Ty::Int { signed: true, .. } => v as u32 as i32 as i64,
                _ => v as u32 as i64,
            }
        };
        let start = signed(stmt_sets(init?, slot)?);
        let (op, bound) = compares(cond?, slot)?;
        let bound = signed(bound);
        let step = step?;
        // `i++` saves the old value in a register first and adds to that copy.
        let copy = copy_of(step, slot);
        let by = signed(
            expr_sets(step, slot).and_then(|v| steps_by(v, |s| s == slot || Some(s) == copy))?,
        );
        if by == 0 || assigns(n.child_by_field_name("body")?, &name, src) {
            return None;
        }
        let trips = match op {
            BinOp::Lt if by > 0 => (bound - start + by - 1).div_euclid(by),
            BinOp::Le if by > 0 => (bound - start).div_euclid(by) + 1,
            BinOp::Gt if by < 0 => (start - bound - by - 1).div_euclid(-by),
            BinOp::Ge if by < 0 => (start - bound).div_euclid(-by) + 1,
            BinOp::Ne if (bound - start) % by == 0 => (bound - start) / by,
            _ => return None,
        };
        (0..=MAX_UNROLLED_TRIPS).contains(&trips).then_some(slot)
    }

    /// Whether index `x` is a constant once the loops in `st.unrolled` are unrolled: built
    /// from constants and their induction variables only.
    pub(super) fn constant_when_unrolled(&self, x: &Expr) -> bool {
        match &x.kind {
            ExprKind::Const(_) => true,
            ExprKind::Reg(s) => self.st.unrolled.contains(s),
            ExprKind::Cast(a) | ExprKind::Unary(_, a) => self.constant_when_unrolled(a),
            ExprKind::Binary(_, a, b) => {
                self.constant_when_unrolled(a) && self.constant_when_unrolled(b)
            }
            _ => false,
        }
    }
}

/// The variable a `for` initializer declares or assigns (`int i = 0`, `i = 0`).
fn induction_name(init: Node, src: &str) -> Option<String> {
    let target = match init.kind() {
        "declaration" => {
            let ds: Vec<Node> = named_children(init)
                .into_iter()
                .filter(|c| c.kind() == "init_declarator")
                .collect();
            match ds.as_slice() {
                [d] => d.child_by_field_name("declarator")?,
                _ => return None,
            }
        }
        "assignment_expression" => init.child_by_field_name("left")?,
        _ => return None,
    };
    (target.kind() == "identifier").then(|| text(target, src).to_string())
}

/// Whether the subtree `n` assigns `name` (`=`, `+=`, `++`, `--`) or takes its address.
fn assigns(n: Node, name: &str, src: &str) -> bool {
    let is_name =
        |c: Option<Node>| c.is_some_and(|c| c.kind() == "identifier" && text(c, src) == name);
    let hit = match n.kind() {
        "assignment_expression" => is_name(n.child_by_field_name("left")),
        "update_expression" => is_name(n.child_by_field_name("argument")),
        "pointer_expression" => {
            n.child(0).is_some_and(|op| text(op, src) == "&")
                && is_name(n.child_by_field_name("argument"))
        }
        _ => false,
    };
    hit || named_children(n).into_iter().any(|c| assigns(c, name, src))
}

fn strip(x: &Expr) -> &Expr {
    match &x.kind {
        ExprKind::Cast(a) => strip(a),
        _ => x,
    }
}

/// The constant an initializer statement gives `slot`.
fn stmt_sets(s: &Stmt, slot: Slot) -> Option<u64> {
    match s {
        Stmt::Expr(e) => const_eval(expr_sets(e, slot)?),
        Stmt::Block(v) => v.iter().find_map(|s| stmt_sets(s, slot)),
        _ => None,
    }
}

/// The value an expression assigns to `slot` (through `,` sequences).
fn expr_sets(x: &Expr, slot: Slot) -> Option<&Expr> {
    match &x.kind {
        ExprKind::SetReg { slot: s, value } if *s == slot => Some(value),
        ExprKind::Seq(a, b) => expr_sets(a, slot).or_else(|| expr_sets(b, slot)),
        ExprKind::Cast(a) | ExprKind::SetReg { value: a, .. } => expr_sets(a, slot),
        _ => None,
    }
}

/// The register an expression copies `slot` into (a postfix `++`'s saved old value).
fn copy_of(x: &Expr, slot: Slot) -> Option<Slot> {
    match &x.kind {
        ExprKind::SetReg { slot: s, value } if matches!(strip(value).kind, ExprKind::Reg(r) if r == slot) => {
            Some(*s)
        }
        ExprKind::SetReg { value, .. } | ExprKind::Cast(value) => copy_of(value, slot),
        ExprKind::Seq(a, b) => copy_of(a, slot).or_else(|| copy_of(b, slot)),
        _ => None,
    }
}

/// `x ± C` as the constant step (two's complement for `-`), `x` a register `is_var` accepts.
fn steps_by(v: &Expr, is_var: impl Fn(Slot) -> bool) -> Option<u64> {
    let ExprKind::Binary(op, a, b) = &strip(v).kind else {
        return None;
    };
    if !matches!(strip(a).kind, ExprKind::Reg(s) if is_var(s)) {
        return None;
    }
    let c = const_eval(b)?;
    match op {
        BinOp::Add => Some(c),
        BinOp::Sub => Some(c.wrapping_neg()),
        _ => None,
    }
}

/// `slot OP C` (or `C OP slot`, turned around) in a loop condition.
fn compares(cond: &Expr, slot: Slot) -> Option<(BinOp, u64)> {
    let ExprKind::Binary(op, a, b) = &strip(cond).kind else {
        return None;
    };
    let is_slot = |x: &Expr| matches!(strip(x).kind, ExprKind::Reg(s) if s == slot);
    if is_slot(a) {
        return Some((*op, const_eval(b)?));
    }
    if is_slot(b) {
        let flipped = match op {
            BinOp::Lt => BinOp::Gt,
            BinOp::Le => BinOp::Ge,
            BinOp::Gt => BinOp::Lt,
            BinOp::Ge => BinOp::Le,
            BinOp::Ne => BinOp::Ne,
            _ => return None,
        };
        return Some((flipped, const_eval(a)?));
    }
    // `to_bool` may wrap a comparison as `(cmp) != 0`.
    match (op, const_eval(b)) {
        (BinOp::Ne, Some(0)) => compares(a, slot),
        _ => None,
    }
}
