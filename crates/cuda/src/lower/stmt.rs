//! Statements and local declarations; memory-access sites.

use super::*;

impl<'t> Lowerer<'t> {
    pub(super) fn stmt(&mut self, n: Node, src: &str) -> Result<Stmt> {
        self.nested(n, |l| l.stmt_inner(n, src))
    }

    /// Runs one level of nesting: refuses code nested deeper than [`MAX_NESTING`].
    pub(super) fn nested<R>(
        &mut self,
        n: Node,
        f: impl FnOnce(&mut Self) -> Result<R>,
    ) -> Result<R> {
        if self.st.depth >= MAX_NESTING {
            return Err(self.err_at(
                n,
                format!("statements and expressions nested more than {MAX_NESTING} levels deep; warpscope stops here to protect its stack. Split the expression or the block into smaller parts"),
            ));
        }
        self.st.depth += 1;
        let r = with_stack(|| f(self));
        self.st.depth -= 1;
        r
    }

    pub(super) fn stmt_inner(&mut self, n: Node, src: &str) -> Result<Stmt> {
        let loc = self.loc(n);
        Ok(match n.kind() {
            "compound_statement" => {
                self.st.scopes.push(HashMap::new());
                let mut v = Vec::new();
                for c in named_children(n) {
                    v.push(self.stmt(c, src)?);
                }
                self.st.scopes.pop();
                Stmt::Block(v)
            }
            "declaration" => self.local_decl(n, src)?,
            "expression_statement" => match named_children(n).into_iter().next() {
                None => Stmt::Block(vec![]),
                Some(x) => {
                    if is_call_to(x, "__syncthreads", src) || self.is_block_sync(x, src)? {
                        Stmt::Sync(self.loc(x))
                    } else if self.misparsed_tile_decl(x, src)? {
                        Stmt::Block(vec![])
                    } else {
                        Stmt::Expr(self.rvalue(x, src)?)
                    }
                }
            },
            "if_statement" => {
                if has_token(n, "constexpr") {
                    return Err(self.unsupported(n, "if constexpr"));
                }
                let c = n
                    .child_by_field_name("condition")
                    .ok_or_else(|| self.err_at(n, "if without a condition"))?;
                let cond = self.condition(c, src)?;
                let then = self.stmt(
                    n.child_by_field_name("consequence")
                        .ok_or_else(|| self.err_at(n, "if without a body"))?,
                    src,
                )?;
                let els = match n.child_by_field_name("alternative") {
                    Some(a) => {
                        let a = if a.kind() == "else_clause" {
                            named_children(a)
                                .into_iter()
                                .next()
                                .ok_or_else(|| self.err_at(a, "empty else"))?
                        } else {
                            a
                        };
                        Some(Box::new(self.stmt(a, src)?))
                    }
                    None => None,
                };
                Stmt::If {
                    cond,
                    then: Box::new(then),
                    els,
                }
            }
            "for_statement" => {
                self.st.scopes.push(HashMap::new());
                let init = match n.child_by_field_name("initializer") {
                    Some(i) if i.kind() == "declaration" => Some(self.local_decl(i, src)?),
                    Some(i) => Some(Stmt::Expr(self.rvalue(i, src)?)),
                    None => None,
                };
                let cond = match n.child_by_field_name("condition") {
                    Some(c) => Some(self.to_bool_node(c, src)?),
                    None => None,
                };
                let step = match n.child_by_field_name("update") {
                    Some(u) => Some(self.rvalue(u, src)?),
                    None => None,
                };
                let unrolled =
                    self.unrolled_induction(n, init.as_ref(), cond.as_ref(), step.as_ref(), src);
                self.st.unrolled.extend(unrolled);
                let body = self.stmt(
                    n.child_by_field_name("body")
                        .ok_or_else(|| self.err_at(n, "for without a body"))?,
                    src,
                );
                if unrolled.is_some() {
                    self.st.unrolled.pop();
                }
                let body = body?;
                self.st.scopes.pop();
                let lp = Stmt::Loop {
                    cond,
                    body: Box::new(body),
                    step,
                    test_first: true,
                    loc,
                };
                Stmt::Block(init.into_iter().chain(std::iter::once(lp)).collect())
            }
            "for_range_loop" => return Err(self.unsupported(n, "range-based for")),
            "while_statement" => {
                let c = n
                    .child_by_field_name("condition")
                    .ok_or_else(|| self.err_at(n, "while without a condition"))?;
                let cond = self.condition(c, src)?;
                let body = self.stmt(
                    n.child_by_field_name("body")
                        .ok_or_else(|| self.err_at(n, "while without a body"))?,
                    src,
                )?;
                Stmt::Loop {
                    cond: Some(cond),
                    body: Box::new(body),
                    step: None,
                    test_first: true,
                    loc,
                }
            }
            "do_statement" => {
                let body = self.stmt(
                    n.child_by_field_name("body")
                        .ok_or_else(|| self.err_at(n, "do without a body"))?,
                    src,
                )?;
                let c = n
                    .child_by_field_name("condition")
                    .ok_or_else(|| self.err_at(n, "do without a condition"))?;
                let cond = self.to_bool_node(c, src)?;
                Stmt::Loop {
                    cond: Some(cond),
                    body: Box::new(body),
                    step: None,
                    test_first: false,
                    loc,
                }
            }
            "break_statement" => Stmt::Break,
            "continue_statement" => Stmt::Continue,
            "return_statement" => {
                let ret = self.st.ret.clone().unwrap_or(Ty::Void);
                match named_children(n).into_iter().next() {
                    Some(x) => {
                        let v = self.rvalue(x, src)?;
                        Stmt::Return(Some(self.convert(v, &ret, x)?))
                    }
                    None => Stmt::Return(None),
                }
            }
            "switch_statement" => {
                let c = n
                    .child_by_field_name("condition")
                    .ok_or_else(|| self.err_at(n, "switch without a value"))?;
                let value = self.condition_value(c, src)?;
                let vt = promote(&value.ty);
                let value = self.convert(value, &vt, c)?;
                let body = n
                    .child_by_field_name("body")
                    .ok_or_else(|| self.err_at(n, "switch without a body"))?;
                let mut stmts = Vec::new();
                let mut cases = Vec::new();
                let mut default = None;
                self.st.scopes.push(HashMap::new());
                for cs in named_children(body) {
                    if cs.kind() != "case_statement" {
                        stmts.push(self.stmt(cs, src)?);
                        continue;
                    }
                    match cs.child_by_field_name("value") {
                        Some(v) => {
                            let ex = self.rvalue(v, src)?;
                            let ex = self.convert(ex, &vt, v)?;
                            let k = const_eval(&ex)
                                .ok_or_else(|| self.err_at(v, "case label is not a constant"))?;
                            cases.push((k, stmts.len()));
                        }
                        None => default = Some(stmts.len()),
                    }
                    let value_id = cs.child_by_field_name("value").map(|v| v.id());
                    for s in named_children(cs) {
                        if Some(s.id()) == value_id {
                            continue;
                        }
                        stmts.push(self.stmt(s, src)?);
                    }
                }
                self.st.scopes.pop();
                Stmt::Switch {
                    value,
                    cases,
                    default,
                    body: stmts,
                }
            }
            "preproc_call" | "comment" | "preproc_include" => Stmt::Block(vec![]),
            "using_declaration" | "alias_declaration" | "namespace_alias_definition" => {
                Stmt::Block(vec![])
            }
            "labeled_statement" | "goto_statement" => {
                return Err(self.unsupported(n, "goto and labels"))
            }
            "type_definition" => {
                self.typedef(n)?;
                Stmt::Block(vec![])
            }
            "ERROR" => {
                return Err(Error::Syntax {
                    file: self.file.clone(),
                    loc,
                    msg: format!("cannot parse '{}'", text(n, src)),
                })
            }
            other => return Err(self.unsupported(n, format!("statement {other}"))),
        })
    }

    pub(super) fn condition(&mut self, c: Node, src: &str) -> Result<Expr> {
        let v = self.condition_value(c, src)?;
        self.to_bool(v, c)
    }

    pub(super) fn condition_value(&mut self, c: Node, src: &str) -> Result<Expr> {
        let inner = match c.kind() {
            "condition_clause" => c
                .child_by_field_name("value")
                .or_else(|| named_children(c).into_iter().next()),
            "parenthesized_expression" => named_children(c).into_iter().next(),
            _ => Some(c),
        };
        let inner = inner.ok_or_else(|| self.err_at(c, "empty condition"))?;
        if inner.kind() == "declaration" {
            return Err(self.unsupported(inner, "declarations in conditions"));
        }
        self.rvalue(inner, src)
    }

    pub(super) fn to_bool_node(&mut self, n: Node, src: &str) -> Result<Expr> {
        let v = self.rvalue(n, src)?;
        self.to_bool(v, n)
    }

    pub(super) fn to_bool(&mut self, v: Expr, n: Node) -> Result<Expr> {
        if !v.ty.is_scalar() {
            return Err(self.err_at(n, "condition is not a number or pointer"));
        }
        let loc = v.loc;
        Ok(e(ExprKind::Cast(Box::new(v)), Ty::Bool, loc))
    }

    pub(super) fn local_decl(&mut self, n: Node, src: &str) -> Result<Stmt> {
        let tn = n
            .child_by_field_name("type")
            .ok_or_else(|| self.err_at(n, "declaration without a type"))?;
        if let Some(s) = self.reference_decl(n, tn, src)? {
            return Ok(s);
        }
        if let Some(s) = self.group_decl(n, tn, src)? {
            return Ok(s);
        }
        let is_auto = matches!(tn.kind(), "placeholder_type_specifier" | "auto");
        let base = if is_auto {
            self.auto_type(n, src)?
        } else {
            self.base_type(tn, src)?
        };
        let is_shared = has_token(n, "__shared__");
        let is_extern = has_token(n, "extern");
        let is_const = has_token(n, "const") || has_token(n, "constexpr");
        if has_token(n, "static") && !is_shared {
            return Err(self.unsupported(n, "static local variables"));
        }
        let mut out = Vec::new();
        for d in named_children(n) {
            if !matches!(
                d.kind(),
                "identifier" | "init_declarator" | "array_declarator" | "pointer_declarator"
            ) {
                continue;
            }
            let (name, ty) = self.declarator(d, base.clone(), src)?;
            let init = (d.kind() == "init_declarator")
                .then(|| d.child_by_field_name("value"))
                .flatten();
            let ty = Self::complete_array(ty, init);
            let loc = self.loc(d);
            if is_shared {
                if init.is_some() {
                    return Err(self.err_at(d, "__shared__ variables cannot have an initializer"));
                }
                let home = if is_extern {
                    VarHome::DynShared
                } else {
                    let a = self.structs.align(&ty).max(1);
                    // Saturating: an absurd size is refused against the CC's limit later.
                    let off = self.shared_bytes.div_ceil(a).saturating_mul(a);
                    self.shared_bytes = off.saturating_add(self.structs.size(&ty));
                    VarHome::Shared(off)
                };
                self.bind(
                    &name,
                    Var {
                        ty,
                        home,
                        read_only: false,
                    },
                );
                continue;
            }
            if ty.is_scalar() && !self.st.addr_taken.contains(&name) {
                if is_const {
                    if let Some(iv) = init {
                        let ex = self.init_value(iv, src)?;
                        let ex = self.convert(ex, &ty, iv)?;
                        if let Some(v) = const_eval(&ex) {
                            self.bind(
                                &name,
                                Var {
                                    ty,
                                    home: VarHome::Const(v),
                                    read_only: false,
                                },
                            );
                            continue;
                        }
                    }
                }
                let slot = self.new_slot();
                // Bind after the initializer: `int i = i;` reads an outer i in C++ too rarely to matter.
                let init_ex = match init {
                    Some(iv) => {
                        if iv.kind() == "initializer_list" {
                            let items = named_children(iv);
                            match items.first() {
                                Some(x) => Some(self.rvalue(*x, src)?),
                                None => Some(e(ExprKind::Const(0), ty.clone(), loc)),
                            }
                        } else {
                            Some(self.init_value(iv, src)?)
                        }
                    }
                    None => None,
                };
                self.bind(
                    &name,
                    Var {
                        ty: ty.clone(),
                        home: VarHome::Reg(slot),
                        read_only: false,
                    },
                );
                if let (Some(ex), Some(iv)) = (init_ex, init) {
                    let ex = self.convert(ex, &ty, iv)?;
                    out.push(Stmt::Expr(e(
                        ExprKind::SetReg {
                            slot,
                            value: Box::new(ex),
                        },
                        ty,
                        loc,
                    )));
                }
                continue;
            }
            if matches!(ty, Ty::Void) {
                return Err(self.err_at(d, "variable of type void"));
            }
            let off = self.alloc_private(&ty, d, &name)?;
            self.bind(
                &name,
                Var {
                    ty: ty.clone(),
                    home: VarHome::Private(off),
                    read_only: false,
                },
            );
            if self.structs.size(&ty) > MAX_REGISTER_BYTES {
                self.mark_local(
                    off,
                    loc,
                    &format!(
                        "{} bytes: more than the 255 32-bit registers a thread can have",
                        self.structs.size(&ty)
                    ),
                );
            }
            if let Some(iv) = init {
                let base_addr = e(ExprKind::PrivateAddr(off), ty.clone().ptr(), loc);
                if iv.kind() == "initializer_list" {
                    // Zero the whole variable, then store each member.
                    let parts = self.structs.access_parts(&ty);
                    for (o, w) in parts {
                        let t = Ty::Int {
                            bytes: w as u8,
                            signed: false,
                        };
                        let a = self.offset_addr(base_addr.clone(), o, t.clone());
                        let z = e(ExprKind::Const(0), t.clone(), loc);
                        let site = self.site(loc, String::new(), Op::Store, false);
                        out.push(Stmt::Expr(e(
                            ExprKind::Store {
                                addr: Box::new(a),
                                value: Box::new(z),
                                site,
                            },
                            t,
                            loc,
                        )));
                    }
                    for (o, ex) in self.init_items(iv, &ty, 0, src)? {
                        let t = ex.ty.clone();
                        let a = self.offset_addr(base_addr.clone(), o, t.clone());
                        let site = self.site(loc, String::new(), Op::Store, false);
                        out.push(Stmt::Expr(e(
                            ExprKind::Store {
                                addr: Box::new(a),
                                value: Box::new(ex),
                                site,
                            },
                            t,
                            loc,
                        )));
                    }
                } else {
                    let ex = self.init_value(iv, src)?;
                    let ex = self.convert(ex, &ty, iv)?;
                    let site = self.site(loc, String::new(), Op::Store, false);
                    out.push(Stmt::Expr(e(
                        ExprKind::Store {
                            addr: Box::new(base_addr),
                            value: Box::new(ex),
                            site,
                        },
                        ty,
                        loc,
                    )));
                }
            }
        }
        Ok(Stmt::Block(out))
    }

    /// `T& r = x;`, `auto& r = a[i];`, `const T& r = e;`: a reference to a register variable
    /// is another name for it, one to memory a register holding the address; a `const`
    /// reference to a value that has no address holds a copy. `None` when `n` declares no
    /// reference.
    fn reference_decl(&mut self, n: Node, tn: Node, src: &str) -> Result<Option<Stmt>> {
        let decls: Vec<Node> = named_children(n)
            .into_iter()
            .filter(|d| {
                d.kind() == "init_declarator"
                    && d.child_by_field_name("declarator")
                        .is_some_and(|x| x.kind() == "reference_declarator")
            })
            .collect();
        if decls.is_empty() {
            return Ok(None);
        }
        let is_auto = matches!(tn.kind(), "placeholder_type_specifier" | "auto");
        let is_const = has_token(n, "const");
        let mut out = Vec::new();
        for d in decls {
            let (inner, _) = strip_reference(
                d.child_by_field_name("declarator")
                    .ok_or_else(|| self.err_at(d, "reference without a name"))?,
            );
            let iv = d
                .child_by_field_name("value")
                .ok_or_else(|| self.err_at(d, "a reference needs an initializer"))?;
            let declared = if is_auto {
                None
            } else {
                let base = self.base_type(tn, src)?;
                Some(self.declarator(inner, base, src)?.1)
            };
            let name = if is_auto {
                text(inner, src).to_string()
            } else {
                self.declarator(inner, Ty::Void, src)?.0
            };
            let loc = self.loc(d);
            let target = self.try_place(iv, src)?;
            let fits = |t: &Ty| declared.as_ref().is_none_or(|d| d == t);
            match target {
                Some(Place::Reg(s, ty)) if fits(&ty) => self.bind(
                    &name,
                    Var {
                        ty,
                        home: VarHome::Reg(s),
                        read_only: false,
                    },
                ),
                Some(Place::Mem { addr, ty, .. }) if fits(&ty) => {
                    let slot = self.new_slot();
                    let pty = addr.ty.clone();
                    out.push(Stmt::Expr(e(
                        ExprKind::SetReg {
                            slot,
                            value: Box::new(addr),
                        },
                        pty,
                        loc,
                    )));
                    self.bind(
                        &name,
                        Var {
                            ty,
                            home: VarHome::Ref(slot),
                            read_only: false,
                        },
                    );
                }
                _ if is_const => {
                    let v = self.rvalue(iv, src)?;
                    let ty = declared.unwrap_or_else(|| v.ty.clone());
                    if !ty.is_scalar() {
                        return Err(self.unsupported(d, "a const reference to this temporary"));
                    }
                    let v = self.convert(v, &ty, iv)?;
                    let slot = self.new_slot();
                    out.push(Stmt::Expr(e(
                        ExprKind::SetReg {
                            slot,
                            value: Box::new(v),
                        },
                        ty.clone(),
                        loc,
                    )));
                    self.bind(
                        &name,
                        Var {
                            ty,
                            home: VarHome::Reg(slot),
                            read_only: false,
                        },
                    );
                }
                _ => {
                    return Err(self.err_at(
                        iv,
                        format!(
                        "'{}' is not a variable of the reference's type that '{name}' can refer to",
                        text(iv, src)
                    ),
                    ))
                }
            }
        }
        Ok(Some(Stmt::Block(out)))
    }

    /// An initializer's value, taken from [`FnState::auto_init`] when an `auto` declaration
    /// lowered it already.
    fn init_value(&mut self, iv: Node, src: &str) -> Result<Expr> {
        match self.st.auto_init.take() {
            Some((id, x)) if id == iv.id() => Ok(x),
            _ => self.rvalue(iv, src),
        }
    }

    /// `auto x = e;`: the type of `e` (arrays decay to pointers).
    fn auto_type(&mut self, n: Node, src: &str) -> Result<Ty> {
        let inits: Vec<Node> = named_children(n)
            .into_iter()
            .filter(|d| d.kind() == "init_declarator")
            .collect();
        let [d] = inits.as_slice() else {
            return Err(self.unsupported(n, "auto here; declare one variable with an initializer"));
        };
        if d.child_by_field_name("declarator").map(|x| x.kind()) != Some("identifier") {
            return Err(self.unsupported(
                *d,
                "auto with a pointer, reference or array declarator; write the type",
            ));
        }
        let iv = d
            .child_by_field_name("value")
            .ok_or_else(|| self.err_at(*d, "auto needs an initializer"))?;
        if iv.kind() == "initializer_list" {
            return Err(self.unsupported(iv, "auto from a brace list; write the type"));
        }
        let x = self.rvalue(iv, src)?;
        let ty = x.ty.clone();
        self.st.auto_init = Some((iv.id(), x));
        Ok(ty)
    }

    /// A declaration of cooperative groups (`cg::thread_block b = cg::this_thread_block();`,
    /// `auto t = cg::tiled_partition<32>(b);`): bound at compile time, no code.
    fn group_decl(&mut self, n: Node, tn: Node, src: &str) -> Result<Option<Stmt>> {
        let by_type = self.group_type(tn, src)?;
        let is_auto = matches!(tn.kind(), "placeholder_type_specifier" | "auto");
        if by_type.is_none() && !is_auto {
            return Ok(None);
        }
        let mut bound = Vec::new();
        for d in named_children(n) {
            if !matches!(d.kind(), "identifier" | "init_declarator") {
                continue;
            }
            let name_node = if d.kind() == "identifier" {
                d
            } else {
                d.child_by_field_name("declarator")
                    .filter(|x| x.kind() == "identifier")
                    .ok_or_else(|| self.unsupported(d, "this cooperative-group declarator"))?
            };
            let init = d.child_by_field_name("value");
            let from_init = match init {
                Some(iv) => self.group_of(iv, src)?,
                None => None,
            };
            let g = match (by_type, from_init) {
                (_, Some(g)) => g,
                (Some(g), None) if init.is_none() => g,
                (None, None) => return Ok(None),
                (Some(_), None) => {
                    return Err(self.unsupported(
                        d,
                        "this cooperative-group initializer (this_thread_block(), tiled_partition<N>(g) or another group)",
                    ))
                }
            };
            bound.push((text(name_node, src).to_string(), g));
        }
        for (name, g) in bound {
            self.bind(
                &name,
                Var {
                    ty: Ty::Void,
                    home: VarHome::Group(g),
                    read_only: false,
                },
            );
        }
        Ok(Some(Stmt::Block(vec![])))
    }

    pub(super) fn offset_addr(&self, base: Expr, off: u64, to: Ty) -> Expr {
        let loc = base.loc;
        let idx = e(ExprKind::Const(off), LONG, loc);
        e(
            ExprKind::PtrAdd {
                ptr: Box::new(base),
                index: Box::new(idx),
                scale: 1,
            },
            to.ptr(),
            loc,
        )
    }

    pub(super) fn site(&mut self, loc: Loc, txt: String, op: Op, read_only: bool) -> usize {
        let key = (loc, op, txt.clone());
        if let Some(&i) = self.site_keys.get(&key) {
            if read_only {
                self.sites[i].read_only = true;
            }
            return i;
        }
        self.sites.push(Site {
            loc,
            text: txt,
            op,
            read_only,
        });
        self.site_keys.insert(key, self.sites.len() - 1);
        self.sites.len() - 1
    }

    pub(super) fn site_text(&self, n: Node, src: &str) -> String {
        text(n, src)
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    }
}
