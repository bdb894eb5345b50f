//! Expressions: rvalues and member access.

use super::*;

impl<'t> Lowerer<'t> {
    /// The value of an expression: lvalues are loaded, arrays decay to pointers.
    pub(super) fn rvalue(&mut self, n: Node, src: &str) -> Result<Expr> {
        self.nested(n, |l| l.rvalue_inner(n, src))
    }

    pub(super) fn rvalue_inner(&mut self, n: Node, src: &str) -> Result<Expr> {
        let loc = self.loc(n);
        match n.kind() {
            "number_literal" => {
                let t = text(n, src);
                if let Some((v, ty)) = parse_int_literal(t) {
                    return Ok(e(ExprKind::Const(encode_int(v as i128, &ty)), ty, loc));
                }
                let (v, ty) = parse_float_literal(t)
                    .ok_or_else(|| self.err_at(n, format!("cannot read the number '{t}'")))?;
                Ok(e(ExprKind::Const(v.to_bits()), ty, loc))
            }
            "char_literal" => {
                let t = text(n, src);
                let inner = t.trim_matches('\'');
                let v = match inner {
                    "\\n" => 10,
                    "\\0" => 0,
                    "\\t" => 9,
                    s => s.bytes().next().unwrap_or(0) as u64,
                };
                Ok(e(
                    ExprKind::Const(v),
                    Ty::Int {
                        bytes: 1,
                        signed: true,
                    },
                    loc,
                ))
            }
            "true" | "false" => Ok(e(
                ExprKind::Const((n.kind() == "true") as u64),
                Ty::Bool,
                loc,
            )),
            "null" | "nullptr" => Ok(e(ExprKind::Const(0), Ty::Void.ptr(), loc)),
            "parenthesized_expression" => {
                let inner = named_children(n)
                    .into_iter()
                    .next()
                    .ok_or_else(|| self.err_at(n, "empty parentheses"))?;
                self.rvalue(inner, src)
            }
            "this" => {
                let p = self.place(n, src)?;
                self.load(p, n, src)
            }
            "identifier" | "type_identifier" => {
                let name = text(n, src);
                if let Some(b) = builtin_var(name) {
                    return Err(self.err_at(n, format!("{b} is a dim3; use {b}.x, {b}.y or {b}.z")));
                }
                if name == "warpSize" && self.lookup(name).is_none() {
                    return Ok(e(ExprKind::Builtin(Builtin::WarpSize), INT, loc));
                }
                if let Some(TArg::Int(v)) = self.st.tenv.get(name) {
                    return Ok(e(ExprKind::Const(*v as u64), INT, loc));
                }
                if let Some(Var {
                    ty,
                    home: VarHome::Const(c),
                    ..
                }) = self.lookup(name)
                {
                    return Ok(e(ExprKind::Const(c), ty, loc));
                }
                let p = self.place(n, src)?;
                self.load(p, n, src)
            }
            "field_expression" => {
                let arg = n
                    .child_by_field_name("argument")
                    .ok_or_else(|| self.err_at(n, "member access without an object"))?;
                let field = n
                    .child_by_field_name("field")
                    .map(|f| text(f, src))
                    .unwrap_or("");
                if let Some(b) = builtin_var(text(arg, src)) {
                    if self.lookup(text(arg, src)).is_none() {
                        let axis = match field {
                            "x" => 0,
                            "y" => 1,
                            "z" => 2,
                            _ => return Err(self.err_at(n, format!("{b} has members x, y and z"))),
                        };
                        let bi = match b {
                            "threadIdx" => Builtin::ThreadIdx(axis),
                            "blockIdx" => Builtin::BlockIdx(axis),
                            "blockDim" => Builtin::BlockDim(axis),
                            _ => Builtin::GridDim(axis),
                        };
                        return Ok(e(ExprKind::Builtin(bi), UINT, loc));
                    }
                }
                if let Some(p) = self.try_place(n, src)? {
                    return self.load(p, n, src);
                }
                // A member of an rvalue aggregate (a call's result, make_float4(...).x).
                let base = self.rvalue(arg, src)?;
                let Ty::Struct(si) = base.ty else {
                    return Err(self.err_at(n, "member access on something that is not a struct"));
                };
                let f = self.field(si, field, n)?;
                Ok(e(
                    ExprKind::Member {
                        base: Box::new(base),
                        offset: f.0,
                    },
                    f.1,
                    loc,
                ))
            }
            "subscript_expression" | "pointer_expression" => {
                if n.kind() == "pointer_expression"
                    && n.child_by_field_name("operator").map(|o| o.kind()) == Some("&")
                {
                    let a = n
                        .child_by_field_name("argument")
                        .ok_or_else(|| self.err_at(n, "& without an operand"))?;
                    let p = self.place(a, src)?;
                    return match p {
                        Place::Mem { addr, ty, .. } => {
                            if let ExprKind::PrivateAddr(off) = addr.kind {
                                self.mark_local(off, loc, "its address is taken");
                            }
                            Ok(Expr {
                                kind: addr.kind,
                                ty: ty.ptr(),
                                loc,
                            })
                        }
                        Place::Reg(..) => {
                            Err(self.unsupported(n, "the address of this local variable"))
                        }
                    };
                }
                let p = self.place(n, src)?;
                self.load(p, n, src)
            }
            "call_expression" => self.call(n, src),
            "cast_expression" => {
                let tn = n
                    .child_by_field_name("type")
                    .ok_or_else(|| self.err_at(n, "cast without a type"))?;
                let ty = self.type_descriptor(tn, src)?;
                let vn = n
                    .child_by_field_name("value")
                    .ok_or_else(|| self.err_at(n, "cast without a value"))?;
                let v = self.rvalue(vn, src)?;
                self.cast(v, &ty, n)
            }
            "binary_expression" => self.binary(n, src),
            "unary_expression" => {
                let a = n
                    .child_by_field_name("argument")
                    .ok_or_else(|| self.err_at(n, "operator without an operand"))?;
                let op = n
                    .child_by_field_name("operator")
                    .map(|o| o.kind())
                    .unwrap_or("");
                let v = self.rvalue(a, src)?;
                match op {
                    "!" => {
                        let b = self.to_bool(v, a)?;
                        Ok(e(ExprKind::Unary(UnOp::LogicalNot, Box::new(b)), INT, loc))
                    }
                    "-" | "~" | "+" => {
                        if !v.ty.is_arith() || (op == "~" && !v.ty.is_int()) {
                            return Err(self.err_at(n, format!("operator {op} needs a number")));
                        }
                        let t = promote(&v.ty);
                        let v = self.convert(v, &t, a)?;
                        Ok(match op {
                            "-" => e(ExprKind::Unary(UnOp::Neg, Box::new(v)), t, loc),
                            "~" => e(ExprKind::Unary(UnOp::BitNot, Box::new(v)), t, loc),
                            _ => v,
                        })
                    }
                    _ => Err(self.unsupported(n, format!("operator {op}"))),
                }
            }
            "update_expression" => {
                let a = n
                    .child_by_field_name("argument")
                    .ok_or_else(|| self.err_at(n, "++/-- without an operand"))?;
                let op = n
                    .child_by_field_name("operator")
                    .ok_or_else(|| self.err_at(n, "++/-- without an operator"))?;
                let post = op.start_byte() > a.start_byte();
                let bop = if op.kind() == "++" {
                    BinOp::Add
                } else {
                    BinOp::Sub
                };
                let one = e(ExprKind::Const(1), INT, loc);
                self.compound(a, bop, one, post, n, src)
            }
            "assignment_expression" => {
                let l = n
                    .child_by_field_name("left")
                    .ok_or_else(|| self.err_at(n, "assignment without a target"))?;
                let r = n
                    .child_by_field_name("right")
                    .ok_or_else(|| self.err_at(n, "assignment without a value"))?;
                let op = n
                    .child_by_field_name("operator")
                    .map(|o| o.kind())
                    .unwrap_or("=");
                let rv = self.rvalue(r, src)?;
                if op == "=" {
                    let p = self.place(l, src)?;
                    let ty = p.ty().clone();
                    let rv = self.convert(rv, &ty, r)?;
                    return Ok(self.store(p, rv, l, src));
                }
                let bop = match op {
                    "+=" => BinOp::Add,
                    "-=" => BinOp::Sub,
                    "*=" => BinOp::Mul,
                    "/=" => BinOp::Div,
                    "%=" => BinOp::Rem,
                    "<<=" => BinOp::Shl,
                    ">>=" => BinOp::Shr,
                    "&=" => BinOp::BitAnd,
                    "|=" => BinOp::BitOr,
                    "^=" => BinOp::BitXor,
                    _ => return Err(self.unsupported(n, format!("operator {op}"))),
                };
                self.compound(l, bop, rv, false, n, src)
            }
            "conditional_expression" => {
                let c = n
                    .child_by_field_name("condition")
                    .ok_or_else(|| self.err_at(n, "?: without a condition"))?;
                let a = n
                    .child_by_field_name("consequence")
                    .ok_or_else(|| self.err_at(n, "?: without a value"))?;
                let b = n
                    .child_by_field_name("alternative")
                    .ok_or_else(|| self.err_at(n, "?: without an alternative"))?;
                let c = self.to_bool_node(c, src)?;
                let av = self.rvalue(a, src)?;
                let bv = self.rvalue(b, src)?;
                let ty = if av.ty.is_arith() && bv.ty.is_arith() {
                    common(&av.ty, &bv.ty)
                } else if av.ty.is_ptr() {
                    av.ty.clone()
                } else {
                    bv.ty.clone()
                };
                let av = self.convert(av, &ty, a)?;
                let bv = self.convert(bv, &ty, b)?;
                Ok(e(
                    ExprKind::Cond(Box::new(c), Box::new(av), Box::new(bv)),
                    ty,
                    loc,
                ))
            }
            "comma_expression" => {
                let l = n
                    .child_by_field_name("left")
                    .ok_or_else(|| self.err_at(n, "bad comma expression"))?;
                let r = n
                    .child_by_field_name("right")
                    .ok_or_else(|| self.err_at(n, "bad comma expression"))?;
                let a = self.rvalue(l, src)?;
                let b = self.rvalue(r, src)?;
                let ty = b.ty.clone();
                Ok(e(ExprKind::Seq(Box::new(a), Box::new(b)), ty, loc))
            }
            "sizeof_expression" => {
                let ty = match n.child_by_field_name("type") {
                    Some(t) => self.type_descriptor(t, src)?,
                    None => {
                        let v = n
                            .child_by_field_name("value")
                            .ok_or_else(|| self.err_at(n, "sizeof of nothing"))?;
                        let v = if v.kind() == "parenthesized_expression" {
                            named_children(v).into_iter().next().unwrap_or(v)
                        } else {
                            v
                        };
                        let is_type_name = matches!(v.kind(), "identifier" | "type_identifier")
                            && self.lookup(text(v, src)).is_none();
                        if is_type_name {
                            let ty = self.named_type(text(v, src), v)?;
                            return Ok(e(ExprKind::Const(self.structs.size(&ty)), ULONG, loc));
                        }
                        match self.try_place(v, src)? {
                            Some(p) => p.ty().clone(),
                            None => self.rvalue(v, src)?.ty,
                        }
                    }
                };
                Ok(e(ExprKind::Const(self.structs.size(&ty)), ULONG, loc))
            }
            "initializer_list" => Err(self.unsupported(
                n,
                "a brace list here; use make_<type>(...) or a declaration",
            )),
            "string_literal" | "concatenated_string" => Err(self.unsupported(n, "string literals")),
            "lambda_expression" => Err(self.unsupported(n, "lambdas")),
            "new_expression" | "delete_expression" => Err(self.unsupported(n, "new/delete")),
            // `ns::x`: namespaces are flattened, so the last name is looked up.
            "qualified_identifier" => {
                let inner = cg::unqualify(n);
                if inner.id() == n.id() || inner.kind() == "template_function" {
                    return Err(self.unsupported(n, format!("qualified name '{}'", text(n, src))));
                }
                self.rvalue(inner, src)
            }
            "ERROR" => Err(Error::Syntax {
                file: self.file.clone(),
                loc,
                msg: format!("cannot parse '{}'", text(n, src)),
            }),
            other => Err(self.unsupported(n, format!("expression {other} '{}'", text(n, src)))),
        }
    }

    pub(super) fn field(&mut self, si: usize, name: &str, n: Node) -> Result<(u64, Ty)> {
        let def = &self.structs.defs[si];
        match def.fields.iter().find(|f| f.name == name) {
            Some(f) => Ok((f.offset, f.ty.clone())),
            None => {
                let names: Vec<_> = def.fields.iter().map(|f| f.name.clone()).collect();
                let sname = def.name.clone();
                Err(self.err_at(
                    n,
                    format!(
                        "{sname} has no member '{name}' (members: {})",
                        names.join(", ")
                    ),
                ))
            }
        }
    }
}
