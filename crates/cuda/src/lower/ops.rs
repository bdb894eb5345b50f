//! Operators and conversions: arithmetic, comparisons, pointer arithmetic, implicit and explicit casts.

use super::*;

impl<'t> Lowerer<'t> {
    pub(super) fn arith(&mut self, op: BinOp, a: Expr, b: Expr, ty: Ty, n: Node) -> Result<Expr> {
        if matches!(
            op,
            BinOp::Rem | BinOp::Shl | BinOp::Shr | BinOp::BitAnd | BinOp::BitOr | BinOp::BitXor
        ) && !ty.is_int()
        {
            return Err(self.err_at(n, "this operator needs integers"));
        }
        let loc = self.loc(n);
        Ok(e(ExprKind::Binary(op, Box::new(a), Box::new(b)), ty, loc))
    }

    pub(super) fn binary(&mut self, n: Node, src: &str) -> Result<Expr> {
        let loc = self.loc(n);
        let ln = n
            .child_by_field_name("left")
            .ok_or_else(|| self.err_at(n, "operator without a left operand"))?;
        let rn = n
            .child_by_field_name("right")
            .ok_or_else(|| self.err_at(n, "operator without a right operand"))?;
        let op = n
            .child_by_field_name("operator")
            .map(|o| o.kind())
            .unwrap_or("");
        if op == "&&" || op == "||" {
            let a = self.to_bool_node(ln, src)?;
            let b = self.to_bool_node(rn, src)?;
            let k = if op == "&&" {
                ExprKind::LogicalAnd(Box::new(a), Box::new(b))
            } else {
                ExprKind::LogicalOr(Box::new(a), Box::new(b))
            };
            return Ok(e(k, INT, loc));
        }
        let a = self.rvalue(ln, src)?;
        let b = self.rvalue(rn, src)?;
        let bop = match op {
            "+" => BinOp::Add,
            "-" => BinOp::Sub,
            "*" => BinOp::Mul,
            "/" => BinOp::Div,
            "%" => BinOp::Rem,
            "<<" => BinOp::Shl,
            ">>" => BinOp::Shr,
            "&" => BinOp::BitAnd,
            "|" => BinOp::BitOr,
            "^" => BinOp::BitXor,
            "<" => BinOp::Lt,
            "<=" => BinOp::Le,
            ">" => BinOp::Gt,
            ">=" => BinOp::Ge,
            "==" => BinOp::Eq,
            "!=" => BinOp::Ne,
            _ => return Err(self.unsupported(n, format!("operator {op}"))),
        };
        // Pointer arithmetic and comparison.
        if a.ty.is_ptr() || b.ty.is_ptr() {
            match bop {
                BinOp::Add | BinOp::Sub if a.ty.is_ptr() && b.ty.is_int() => {
                    let scale = a.ty.pointee().map(|t| self.structs.size(t)).unwrap_or(1);
                    let idx = self.convert(b, &LONG, rn)?;
                    let idx = if bop == BinOp::Sub {
                        e(ExprKind::Unary(UnOp::Neg, Box::new(idx)), LONG, loc)
                    } else {
                        idx
                    };
                    let ty = a.ty.clone();
                    return Ok(e(
                        ExprKind::PtrAdd {
                            ptr: Box::new(a),
                            index: Box::new(idx),
                            scale,
                        },
                        ty,
                        loc,
                    ));
                }
                BinOp::Add if b.ty.is_ptr() && a.ty.is_int() => {
                    let scale = b.ty.pointee().map(|t| self.structs.size(t)).unwrap_or(1);
                    let idx = self.convert(a, &LONG, ln)?;
                    let ty = b.ty.clone();
                    return Ok(e(
                        ExprKind::PtrAdd {
                            ptr: Box::new(b),
                            index: Box::new(idx),
                            scale,
                        },
                        ty,
                        loc,
                    ));
                }
                BinOp::Sub if a.ty.is_ptr() && b.ty.is_ptr() => {
                    let scale =
                        a.ty.pointee()
                            .map(|t| self.structs.size(t))
                            .unwrap_or(1)
                            .max(1);
                    return Ok(e(
                        ExprKind::PtrDiff {
                            a: Box::new(a),
                            b: Box::new(b),
                            scale,
                        },
                        LONG,
                        loc,
                    ));
                }
                BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge | BinOp::Eq | BinOp::Ne => {
                    let a = self.convert(a, &ULONG, ln)?;
                    let b = self.convert(b, &ULONG, rn)?;
                    return Ok(e(ExprKind::Binary(bop, Box::new(a), Box::new(b)), INT, loc));
                }
                _ => {
                    return Err(self.err_at(
                        n,
                        format!("operator {op} does not apply to these pointer operands"),
                    ))
                }
            }
        }
        if !a.ty.is_arith() || !b.ty.is_arith() {
            return Err(self.err_at(
                n,
                format!(
                    "operator {op} needs numbers; '{}' or '{}' is not one",
                    text(ln, src),
                    text(rn, src)
                ),
            ));
        }
        if matches!(bop, BinOp::Shl | BinOp::Shr) {
            let t = promote(&a.ty);
            let a = self.convert(a, &t, ln)?;
            let bt = promote(&b.ty);
            let b = self.convert(b, &bt, rn)?;
            let b = self.convert(b, &t, rn)?;
            return self.arith(bop, a, b, t, n);
        }
        let ct = common(&a.ty, &b.ty);
        let a = self.convert(a, &ct, ln)?;
        let b = self.convert(b, &ct, rn)?;
        if matches!(
            bop,
            BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge | BinOp::Eq | BinOp::Ne
        ) {
            return Ok(e(ExprKind::Binary(bop, Box::new(a), Box::new(b)), INT, loc));
        }
        self.arith(bop, a, b, ct, n)
    }

    /// Implicit conversion (assignment, argument passing, return).
    pub(super) fn convert(&mut self, v: Expr, to: &Ty, n: Node) -> Result<Expr> {
        if &v.ty == to {
            return Ok(v);
        }
        if matches!(v.ty, Ty::Struct(_)) && to.is_scalar() {
            if let Some(c) = self.conversion_operator(v.clone(), to, n)? {
                return self.convert(c, to, n);
            }
        }
        let ok = (v.ty.is_arith() && to.is_arith())
            || (v.ty.is_ptr() && to.is_ptr())
            || (to.is_ptr() && v.ty.is_int() && matches!(v.kind, ExprKind::Const(0)))
            || (to == &Ty::Bool && v.ty.is_scalar())
            || (v.ty.is_ptr() && to.is_int() && self.structs.size(to) == 8);
        if !ok {
            let (f, t) = (self.structs.name(&v.ty), self.structs.name(to));
            return Err(self.err_at(n, format!("cannot convert {f} to {t}")));
        }
        let loc = v.loc;
        Ok(e(ExprKind::Cast(Box::new(v)), to.clone(), loc))
    }

    /// Explicit cast: also pointer ↔ integer.
    pub(super) fn cast(&mut self, v: Expr, to: &Ty, n: Node) -> Result<Expr> {
        if to == &Ty::Void {
            // `(void)x`: evaluated for its effects; a load keeps its own width.
            return Ok(v);
        }
        if (v.ty.is_ptr() && to.is_int()) || (v.ty.is_int() && to.is_ptr()) {
            let loc = v.loc;
            return Ok(e(ExprKind::Cast(Box::new(v)), to.clone(), loc));
        }
        self.convert(v, to, n)
    }
}
