//! Lvalues (places), loads, stores and compound assignment.

use super::*;

impl<'t> Lowerer<'t> {
    pub(super) fn try_place(&mut self, n: Node, src: &str) -> Result<Option<Place>> {
        match n.kind() {
            "identifier"
                if matches!(
                    self.lookup(text(n, src)),
                    Some(Var {
                        home: VarHome::Const(_),
                        ..
                    })
                ) =>
            {
                Ok(None)
            }
            "identifier" | "this" | "subscript_expression" => self.place(n, src).map(Some),
            "pointer_expression" => {
                if n.child_by_field_name("operator").map(|o| o.kind()) == Some("*") {
                    self.place(n, src).map(Some)
                } else {
                    Ok(None)
                }
            }
            "parenthesized_expression" => match named_children(n).into_iter().next() {
                Some(c) => self.try_place(c, src),
                None => Ok(None),
            },
            "field_expression" => {
                let arg = n
                    .child_by_field_name("argument")
                    .ok_or_else(|| self.err_at(n, "member access without an object"))?;
                let arrow = all_children(n).iter().any(|c| c.kind() == "->");
                let field = n
                    .child_by_field_name("field")
                    .map(|f| text(f, src).to_string())
                    .unwrap_or_default();
                let (base_addr, sty, ro) = if arrow {
                    let p = self.rvalue(arg, src)?;
                    let Ty::Ptr(inner) = p.ty.clone() else {
                        return Err(self.err_at(n, "-> on something that is not a pointer"));
                    };
                    let ro = self.is_read_only_ptr(&p);
                    (p, *inner, ro)
                } else {
                    match self.try_place(arg, src)? {
                        Some(Place::Mem {
                            addr,
                            ty,
                            read_only,
                        }) => (addr, ty, read_only),
                        Some(Place::Reg(..)) => {
                            return Err(self.err_at(n, "member access on a number"))
                        }
                        None => return Ok(None),
                    }
                };
                let Ty::Struct(si) = sty else {
                    return Err(self.err_at(n, format!("'{}' is not a struct", text(arg, src))));
                };
                let (off, fty) = self.field(si, &field, n)?;
                let addr = self.offset_addr(base_addr, off, fty.clone());
                Ok(Some(Place::Mem {
                    addr,
                    ty: fty,
                    read_only: ro,
                }))
            }
            _ => Ok(None),
        }
    }

    pub(super) fn is_read_only_ptr(&self, p: &Expr) -> bool {
        match &p.kind {
            ExprKind::Reg(s) => self
                .st
                .scopes
                .iter()
                .flat_map(|sc| sc.values())
                .any(|v| v.read_only && matches!(v.home, VarHome::Reg(x) if x == *s)),
            ExprKind::PtrAdd { ptr, .. } => self.is_read_only_ptr(ptr),
            ExprKind::Cast(inner) => self.is_read_only_ptr(inner),
            _ => false,
        }
    }

    pub(super) fn place(&mut self, n: Node, src: &str) -> Result<Place> {
        self.nested(n, |l| l.place_inner(n, src))
    }

    pub(super) fn place_inner(&mut self, n: Node, src: &str) -> Result<Place> {
        let loc = self.loc(n);
        match n.kind() {
            "identifier" | "this" => {
                let name = text(n, src);
                let Some(v) = self.lookup(name) else {
                    if let Some(p) = self.this_member(name, n)? {
                        return Ok(p);
                    }
                    if let Some(e) = self.texture_ref_as_value(n, name) {
                        return Err(e);
                    }
                    if let Some(e) = self.deferred_error(name, n) {
                        return Err(e);
                    }
                    return Err(self.err_at(n, format!("'{name}' is not declared")));
                };
                let ty = v.ty.clone();
                let a = |k: ExprKind| e(k, ty.clone().ptr(), loc);
                Ok(match v.home {
                    VarHome::Reg(s) => Place::Reg(s, v.ty),
                    VarHome::Ref(s) => Place::Mem {
                        addr: a(ExprKind::Reg(s)),
                        ty: v.ty,
                        read_only: false,
                    },
                    VarHome::Group(_) => {
                        return Err(self.err_at(
                            n,
                            format!("'{name}' is a cooperative group; use its members (thread_rank(), size(), sync(), …)"),
                        ));
                    }
                    VarHome::Const(_) => {
                        return Err(self.err_at(
                            n,
                            format!("'{name}' is a constant; it cannot be assigned or addressed"),
                        ));
                    }
                    VarHome::Private(o) => Place::Mem {
                        addr: a(ExprKind::PrivateAddr(o)),
                        ty: v.ty,
                        read_only: false,
                    },
                    VarHome::Shared(o) => Place::Mem {
                        addr: a(ExprKind::Const(addr::SHARED + o)),
                        ty: v.ty,
                        read_only: false,
                    },
                    VarHome::DynShared => Place::Mem {
                        addr: a(ExprKind::DynSharedBase),
                        ty: v.ty,
                        read_only: false,
                    },
                    VarHome::Constant(o) => Place::Mem {
                        addr: a(ExprKind::Const(addr::CONSTANT + o)),
                        ty: v.ty,
                        read_only: true,
                    },
                    VarHome::Global(i) => Place::Mem {
                        addr: a(ExprKind::Const(
                            addr::ALLOC_BASE + i as u64 * addr::ALLOC_SPACING,
                        )),
                        ty: v.ty,
                        read_only: false,
                    },
                })
            }
            "parenthesized_expression" => {
                let inner = named_children(n)
                    .into_iter()
                    .next()
                    .ok_or_else(|| self.err_at(n, "empty parentheses"))?;
                self.place(inner, src)
            }
            "subscript_expression" => {
                let arg = n
                    .child_by_field_name("argument")
                    .ok_or_else(|| self.err_at(n, "subscript without an array"))?;
                let idxn = n
                    .child_by_field_name("indices")
                    .or_else(|| n.child_by_field_name("index"))
                    .ok_or_else(|| self.err_at(n, "subscript without an index"))?;
                let idxn = if idxn.kind() == "subscript_argument_list" {
                    let items = named_children(idxn);
                    if items.len() != 1 {
                        return Err(self.unsupported(idxn, "multiple subscript arguments"));
                    }
                    items[0]
                } else {
                    idxn
                };
                let idx = self.rvalue(idxn, src)?;
                if !idx.ty.is_int() {
                    return Err(self.err_at(idxn, "array index is not an integer"));
                }
                // The array operand: an array lvalue (kept as a place so that constant
                // indexes into per-thread arrays stay in registers) or a pointer value.
                let (base, elem, ro) = match self.try_place(arg, src)? {
                    Some(Place::Mem {
                        addr,
                        ty: Ty::Array(el, _),
                        read_only,
                    }) => {
                        if let ExprKind::PrivateAddr(off) = addr.kind {
                            if const_eval(&idx).is_none() && !self.constant_when_unrolled(&idx) {
                                let at = self.loc(arg);
                                self.mark_local(
                                    off,
                                    at,
                                    "indexed with a value known only at run time",
                                );
                            }
                        }
                        (addr, *el, read_only)
                    }
                    Some(p) => {
                        let v = self.load(p, arg, src)?;
                        let Ty::Ptr(el) = v.ty.clone() else {
                            return Err(self.err_at(
                                n,
                                format!("'{}' is not an array or pointer", text(arg, src)),
                            ));
                        };
                        let ro = self.is_read_only_ptr(&v);
                        (v, *el, ro)
                    }
                    None => {
                        let v = self.rvalue(arg, src)?;
                        let Ty::Ptr(el) = v.ty.clone() else {
                            return Err(self.err_at(
                                n,
                                format!("'{}' is not an array or pointer", text(arg, src)),
                            ));
                        };
                        let ro = self.is_read_only_ptr(&v);
                        (v, *el, ro)
                    }
                };
                if elem == Ty::Void {
                    return Err(self.err_at(n, "subscript of a void pointer"));
                }
                let scale = self.structs.size(&elem);
                let idx = self.convert(idx, &LONG, idxn)?;
                let addr = e(
                    ExprKind::PtrAdd {
                        ptr: Box::new(base),
                        index: Box::new(idx),
                        scale,
                    },
                    elem.clone().ptr(),
                    loc,
                );
                Ok(Place::Mem {
                    addr,
                    ty: elem,
                    read_only: ro,
                })
            }
            "pointer_expression" => {
                let a = n
                    .child_by_field_name("argument")
                    .ok_or_else(|| self.err_at(n, "* without an operand"))?;
                if n.child_by_field_name("operator").map(|o| o.kind()) != Some("*") {
                    return Err(self.err_at(n, "not an lvalue"));
                }
                let p = self.rvalue(a, src)?;
                let Ty::Ptr(el) = p.ty.clone() else {
                    return Err(self.err_at(n, "* on something that is not a pointer"));
                };
                if *el == Ty::Void {
                    return Err(self.err_at(n, "dereference of a void pointer"));
                }
                let ro = self.is_read_only_ptr(&p);
                Ok(Place::Mem {
                    addr: p,
                    ty: *el,
                    read_only: ro,
                })
            }
            "field_expression" => match self.try_place(n, src)? {
                Some(p) => Ok(p),
                None => Err(self.err_at(n, "this member is not an lvalue")),
            },
            "call_expression" => Err(self.err_at(n, "a function call is not an lvalue")),
            _ => Err(self.err_at(n, format!("'{}' is not an lvalue", text(n, src)))),
        }
    }

    /// The address an argument for reference parameter `param` (of type `T*`) binds to.
    pub(super) fn reference_argument(&mut self, an: Node, param: &Ty, src: &str) -> Result<Expr> {
        match self.place(an, src)? {
            Place::Mem { addr, ty, .. } if Some(&ty) == param.pointee() => Ok(Expr {
                ty: param.clone(),
                ..addr
            }),
            Place::Mem { ty, .. } => Err(self.err_at(
                an,
                format!(
                    "a {} reference cannot bind to this {}",
                    self.structs.name(param.pointee().unwrap_or(&Ty::Void)),
                    self.structs.name(&ty)
                ),
            )),
            Place::Reg(..) => Err(self.unsupported(
                an,
                format!("passing '{}' by reference from here; pass a local variable or an element of an array", text(an, src)),
            )),
        }
    }

    /// A member of `*this` named by its name alone inside a member function.
    fn this_member(&mut self, name: &str, n: Node) -> Result<Option<Place>> {
        let Some(this) = self.lookup("this") else {
            return Ok(None);
        };
        let (VarHome::Reg(slot), Ty::Ptr(inner)) = (this.home, &this.ty) else {
            return Ok(None);
        };
        let Ty::Struct(si) = **inner else {
            return Ok(None);
        };
        if !self.structs.defs[si].fields.iter().any(|f| f.name == name) {
            return Ok(None);
        }
        let (off, fty) = self.field(si, name, n)?;
        let base = e(ExprKind::Reg(slot), this.ty.clone(), self.loc(n));
        let addr = self.offset_addr(base, off, fty.clone());
        Ok(Some(Place::Mem {
            addr,
            ty: fty,
            read_only: false,
        }))
    }

    /// Records that the per-thread array at private offset `off` lives in local memory.
    pub(super) fn mark_local(&mut self, off: u64, loc: Loc, why: &str) {
        if self
            .local_arrays
            .iter()
            .any(|l| l.start <= off && off < l.end)
        {
            return;
        }
        let found = self.st.scopes.iter().flat_map(|s| s.iter()).find(|(_, v)| {
            matches!(v.home, VarHome::Private(o) if o == off)
                && matches!(v.ty, Ty::Array(..) | Ty::Struct(_))
        });
        if let Some((name, v)) = found {
            let size = self.structs.size(&v.ty);
            self.local_arrays.push(LocalArray {
                name: name.clone(),
                loc,
                start: off,
                end: off + size,
                reason: why.to_string(),
            });
        }
    }

    pub(super) fn load(&mut self, p: Place, n: Node, src: &str) -> Result<Expr> {
        let loc = self.loc(n);
        Ok(match p {
            Place::Reg(s, ty) => e(ExprKind::Reg(s), ty, loc),
            Place::Mem {
                addr,
                ty: Ty::Array(el, _),
                ..
            } => {
                if let ExprKind::PrivateAddr(off) = addr.kind {
                    self.mark_local(off, self.loc(n), "used as a pointer");
                }
                Expr {
                    kind: addr.kind,
                    ty: el.ptr(),
                    loc,
                }
            }
            Place::Mem {
                addr,
                ty,
                read_only,
            } => {
                let site = self.site(loc, self.site_text(n, src), Op::Load, read_only);
                e(
                    ExprKind::Load {
                        addr: Box::new(addr),
                        site,
                    },
                    ty,
                    loc,
                )
            }
        })
    }

    pub(super) fn store(&mut self, p: Place, v: Expr, n: Node, src: &str) -> Expr {
        let loc = self.loc(n);
        let ty = p.ty().clone();
        match p {
            Place::Reg(slot, _) => e(
                ExprKind::SetReg {
                    slot,
                    value: Box::new(v),
                },
                ty,
                loc,
            ),
            Place::Mem { addr, .. } => {
                let site = self.site(loc, self.site_text(n, src), Op::Store, false);
                e(
                    ExprKind::Store {
                        addr: Box::new(addr),
                        value: Box::new(v),
                        site,
                    },
                    ty,
                    loc,
                )
            }
        }
    }

    /// `a op= b`, `++a`, `a++`: the address is computed once.
    pub(super) fn compound(
        &mut self,
        target: Node,
        op: BinOp,
        rhs: Expr,
        post: bool,
        n: Node,
        src: &str,
    ) -> Result<Expr> {
        let loc = self.loc(n);
        let p = self.place(target, src)?;
        let ty = p.ty().clone();
        if !ty.is_scalar() {
            return Err(self.err_at(
                n,
                "compound assignment to something that is not a number or pointer",
            ));
        }
        let (pre, cur, p2) = match p {
            Place::Reg(s, t) => (None, e(ExprKind::Reg(s), t.clone(), loc), Place::Reg(s, t)),
            Place::Mem {
                addr,
                ty: t,
                read_only,
            } => {
                let tmp = self.new_slot();
                let at = addr.ty.clone();
                let set = e(
                    ExprKind::SetReg {
                        slot: tmp,
                        value: Box::new(addr),
                    },
                    at.clone(),
                    loc,
                );
                let a2 = e(ExprKind::Reg(tmp), at, loc);
                let pl = Place::Mem {
                    addr: a2,
                    ty: t,
                    read_only,
                };
                let cur = self.load(pl.clone(), target, src)?;
                (Some(set), cur, pl)
            }
        };
        // Postfix: the old value is read once into a register and the new value computed
        // from that register, so `x[i]++` is one load and one store.
        let (save, cur) = if post {
            let old = self.new_slot();
            let save = e(
                ExprKind::SetReg {
                    slot: old,
                    value: Box::new(cur),
                },
                ty.clone(),
                loc,
            );
            (Some((save, old)), e(ExprKind::Reg(old), ty.clone(), loc))
        } else {
            (None, cur)
        };
        let newv = if ty.is_ptr() {
            if !matches!(op, BinOp::Add | BinOp::Sub) {
                return Err(self.err_at(n, "only + and - apply to pointers"));
            }
            let scale = ty.pointee().map(|t| self.structs.size(t)).unwrap_or(1);
            let idx = self.convert(rhs, &LONG, n)?;
            let idx = if op == BinOp::Sub {
                e(ExprKind::Unary(UnOp::Neg, Box::new(idx)), LONG, loc)
            } else {
                idx
            };
            e(
                ExprKind::PtrAdd {
                    ptr: Box::new(cur.clone()),
                    index: Box::new(idx),
                    scale,
                },
                ty.clone(),
                loc,
            )
        } else {
            let ct = if matches!(op, BinOp::Shl | BinOp::Shr) {
                promote(&ty)
            } else {
                common(&ty, &rhs.ty)
            };
            let a = self.convert(cur.clone(), &ct, n)?;
            let b = self.convert(rhs, &ct, n)?;
            let r = self.arith(op, a, b, ct, n)?;
            self.convert(r, &ty, n)?
        };
        let result = if let Some((save, old)) = save {
            let st = self.store(p2, newv, target, src);
            let oldv = e(ExprKind::Reg(old), ty.clone(), loc);
            e(
                ExprKind::Seq(
                    Box::new(save),
                    Box::new(e(
                        ExprKind::Seq(Box::new(st), Box::new(oldv)),
                        ty.clone(),
                        loc,
                    )),
                ),
                ty.clone(),
                loc,
            )
        } else {
            self.store(p2, newv, target, src)
        };
        Ok(match pre {
            Some(set) => e(ExprKind::Seq(Box::new(set), Box::new(result)), ty, loc),
            None => result,
        })
    }
}
