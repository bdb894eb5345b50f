//! Calls: user functions, C++ casts, built-in functions; parsing a snippet of text.

use super::*;

impl<'t> Lowerer<'t> {
    pub(super) fn call(&mut self, n: Node, src: &str) -> Result<Expr> {
        let loc = self.loc(n);
        let f = n
            .child_by_field_name("function")
            .ok_or_else(|| self.err_at(n, "call without a function"))?;
        let args_node = n
            .child_by_field_name("arguments")
            .ok_or_else(|| self.err_at(n, "call without arguments"))?;
        if all_children(n)
            .iter()
            .any(|c| c.kind() == "kernel_call_syntax")
            || named_children(args_node)
                .iter()
                .any(|c| c.kind() == "kernel_call_syntax")
        {
            return Err(
                self.unsupported(n, "kernel launches from device code (dynamic parallelism)")
            );
        }
        let arg_nodes = named_children(args_node);
        // `S::f(…)`: a static member function.
        if f.kind() == "qualified_identifier" {
            if let (Some(scope), Some(name)) = (
                f.child_by_field_name("scope"),
                f.child_by_field_name("name"),
            ) {
                if name.kind() == "identifier" {
                    if let Some(si) = self.scope_struct(scope, src) {
                        let m = text(name, src).to_string();
                        if let Some(c) = self.method_call(si, &m, None, &arg_nodes, n, src)? {
                            return Ok(c);
                        }
                    }
                }
            }
        }
        let f = cg::unqualify(f);
        let (fname, targ_node) = match f.kind() {
            "identifier" => (text(f, src).to_string(), None),
            "template_function" => {
                let nm = f
                    .child_by_field_name("name")
                    .map(|x| text(x, src).to_string())
                    .unwrap_or_default();
                (nm, f.child_by_field_name("arguments"))
            }
            "field_expression" => return self.member_call(f, &arg_nodes, n, src),
            // Functional casts: `float(x)`, `unsigned(x)`.
            "primitive_type" | "sized_type_specifier" => {
                let ty = self.base_type(f, src)?;
                return self.functional_cast(ty, &arg_nodes, n, src);
            }
            _ => return Err(self.unsupported(n, format!("call through '{}'", text(f, src)))),
        };
        // C++ casts.
        if matches!(
            fname.as_str(),
            "reinterpret_cast" | "static_cast" | "const_cast"
        ) {
            let tl = targ_node.ok_or_else(|| self.err_at(n, format!("{fname} needs a type")))?;
            let td = named_children(tl)
                .into_iter()
                .next()
                .ok_or_else(|| self.err_at(n, format!("{fname} needs a type")))?;
            let ty = self.type_descriptor(td, src)?;
            let a = arg_nodes
                .first()
                .copied()
                .ok_or_else(|| self.err_at(n, format!("{fname} needs a value")))?;
            let v = self.rvalue(a, src)?;
            return self.cast(v, &ty, n);
        }
        // Another member of the struct whose member function this is.
        if let Some(Var {
            ty: Ty::Ptr(inner),
            home: VarHome::Reg(slot),
            ..
        }) = self.lookup("this")
        {
            if let Ty::Struct(si) = *inner {
                let this = e(ExprKind::Reg(slot), Ty::Struct(si).ptr(), loc);
                if let Some(c) = self.method_call(si, &fname, Some(this), &arg_nodes, n, src)? {
                    return Ok(c);
                }
            }
        }
        // `S<float>()`: a temporary of a struct template's instance.
        if let Some(tl) = targ_node {
            if self.struct_templates.contains_key(&fname) && !self.fns.contains_key(&fname) {
                let targs = self.template_args(tl, src)?;
                let ty = self.struct_instance(&fname, targs, n)?;
                return self.functional_cast(ty, &arg_nodes, n, src);
            }
        }
        // Built-in functions.
        let mut args = Vec::new();
        let user_fn = self.fns.contains_key(&fname);
        if !user_fn {
            if let Some(t) = self.texture_call(&fname, targ_node, &arg_nodes, n, src)? {
                return Ok(t);
            }
        }
        if !user_fn && self.lookup(&fname).is_none() && targ_node.is_none() {
            // `T(x)` with a typedef, template parameter or struct name.
            if let Ok(ty) = self.named_type(&fname, f) {
                return self.functional_cast(ty, &arg_nodes, n, src);
            }
        }
        if !user_fn {
            if fname == "printf" {
                // Output is not modelled: the arguments are evaluated (their loads count),
                // the format string is skipped.
                for a in &arg_nodes {
                    if !matches!(a.kind(), "string_literal" | "concatenated_string") {
                        args.push(self.rvalue(*a, src)?);
                    }
                }
                let v = self.void_seq(args, loc);
                return Ok(Expr { ty: INT, ..v });
            }
            match fname.as_str() {
                "reduce" => return self.group_reduce(&arg_nodes, n, src),
                "sync" if arg_nodes.len() == 1 => {
                    return match self.group_of(arg_nodes[0], src)? {
                        Some(g) => self.group_method(g, "sync", &[], n, src),
                        None => Err(self.err_at(n, "sync(g) needs a cooperative group")),
                    }
                }
                "this_thread_block" | "tiled_partition" => {
                    return Err(self.unsupported(
                        n,
                        format!("{fname}() outside a declaration; declare the group (cg::thread_block b = cg::this_thread_block();)"),
                    ))
                }
                _ => {}
            }
            if fname == "__ldg" {
                let a = arg_nodes
                    .first()
                    .copied()
                    .ok_or_else(|| self.err_at(n, "__ldg needs a pointer"))?;
                let p = self.rvalue(a, src)?;
                let Ty::Ptr(el) = p.ty.clone() else {
                    return Err(self.err_at(n, "__ldg needs a pointer"));
                };
                let site = self.site(loc, self.site_text(n, src), Op::Load, true);
                return Ok(e(
                    ExprKind::Load {
                        addr: Box::new(p),
                        site,
                    },
                    *el,
                    loc,
                ));
            }
            if fname == "__syncthreads" {
                return Err(self.unsupported(
                    n,
                    "__syncthreads() inside an expression; call it as a statement",
                ));
            }
            if let Some(rest) = fname.strip_prefix("make_") {
                let Some(vt) = self.structs.vector(rest) else {
                    return Err(self.err_at(n, format!("unknown vector type {rest}")));
                };
                let Ty::Struct(si) = vt else {
                    return Err(self.err_at(n, "bad vector type"));
                };
                let fields = self.structs.defs[si].fields.clone();
                if arg_nodes.len() != fields.len() {
                    return Err(self.err_at(n, format!("{fname} takes {} arguments", fields.len())));
                }
                let mut items = Vec::new();
                for (fd, a) in fields.iter().zip(arg_nodes) {
                    let v = self.rvalue(a, src)?;
                    items.push((fd.offset, self.convert(v, &fd.ty, a)?));
                }
                return Ok(e(ExprKind::MakeAgg(items), vt, loc));
            }
            for a in &arg_nodes {
                args.push(self.rvalue(*a, src)?);
            }
            return self.builtin_call(&fname, args, n, src);
        }
        for a in &arg_nodes {
            args.push(self.rvalue(*a, src)?);
        }
        let targs = match targ_node {
            Some(tl) => self.template_args(tl, src)?,
            None => Vec::new(),
        };
        let tys: Vec<Ty> = args.iter().map(|a| a.ty.clone()).collect();
        let id = self.instantiate(&fname, targs, Some(&tys), Some(n))?;
        let params = self.funcs[id].params.clone();
        let mut conv = Vec::new();
        for ((a, p), an) in args.into_iter().zip(&params).zip(&arg_nodes) {
            conv.push(if p.by_ref {
                self.reference_argument(*an, &p.ty, src)?
            } else {
                self.convert(a, &p.ty, *an)?
            });
        }
        let ret = self.funcs[id].ret.clone();
        Ok(e(
            ExprKind::Call {
                func: id,
                args: conv,
            },
            ret,
            loc,
        ))
    }

    /// `T(x)`: an explicit conversion; `T()` is zero; `S(a, b)` builds struct `S` member by
    /// member.
    fn functional_cast(&mut self, ty: Ty, args: &[Node], n: Node, src: &str) -> Result<Expr> {
        let loc = self.loc(n);
        match (args, &ty) {
            ([], _) if ty.is_scalar() => Ok(e(ExprKind::Const(encode_int(0, &ty)), ty, loc)),
            ([a], _) if ty.is_scalar() => {
                let v = self.rvalue(*a, src)?;
                self.cast(v, &ty, n)
            }
            (_, Ty::Struct(si)) => {
                let fields = self.structs.defs[*si].fields.clone();
                if args.len() > fields.len() {
                    return Err(self.err_at(n, "more values than the struct has members"));
                }
                let mut items = Vec::new();
                for (fd, a) in fields.iter().zip(args) {
                    if !fd.ty.is_scalar() {
                        return Err(self.unsupported(*a, "a nested aggregate member here"));
                    }
                    let v = self.rvalue(*a, src)?;
                    items.push((fd.offset, self.convert(v, &fd.ty, *a)?));
                }
                Ok(e(ExprKind::MakeAgg(items), ty, loc))
            }
            _ => Err(self.err_at(
                n,
                format!(
                    "cannot build a {} from these values",
                    self.structs.name(&ty)
                ),
            )),
        }
    }

    /// `obj.method(args)`: a cooperative group's member or a struct's member function.
    fn member_call(&mut self, f: Node, args: &[Node], n: Node, src: &str) -> Result<Expr> {
        let obj = f
            .child_by_field_name("argument")
            .ok_or_else(|| self.err_at(f, "member call without an object"))?;
        let method = f
            .child_by_field_name("field")
            .map(|m| text(m, src).to_string())
            .unwrap_or_default();
        if let Some(g) = self.group_of(obj, src)? {
            return self.group_method(g, &method, args, n, src);
        }
        let arrow = all_children(f).iter().any(|c| c.kind() == "->");
        let this = if arrow {
            self.rvalue(obj, src)?
        } else {
            match self.try_place(obj, src)? {
                Some(Place::Mem { addr, .. }) => addr,
                _ => {
                    let v = self.rvalue(obj, src)?;
                    if !matches!(v.ty, Ty::Struct(_)) {
                        return Err(
                            self.err_at(n, format!("'{}' has no member functions", text(obj, src)))
                        );
                    }
                    self.object_address(v, n)?
                }
            }
        };
        let si = match this.ty.pointee() {
            Some(Ty::Struct(si)) => *si,
            _ => {
                return Err(self.err_at(
                    n,
                    format!("'{}' is not a struct with member functions", text(obj, src)),
                ))
            }
        };
        match self.method_call(si, &method, Some(this), args, n, src)? {
            Some(c) => Ok(c),
            None => Err(self.err_at(
                n,
                format!(
                    "{} has no member function '{method}'",
                    self.structs.name(&Ty::Struct(si))
                ),
            )),
        }
    }

    pub(super) fn with_snippet_root<R>(
        &mut self,
        snippet: &str,
        f: impl FnOnce(&mut Self, Node, &str) -> Result<R>,
    ) -> Result<R> {
        let mut parser = tree_sitter::Parser::new();
        parser
            .set_language(&tree_sitter_cuda::LANGUAGE.into())
            .map_err(|e| Error::Argument(format!("cannot load the CUDA grammar: {e}")))?;
        let tree = parser
            .parse(snippet, None)
            .ok_or_else(|| Error::Argument(format!("cannot parse '{snippet}'")))?;
        let root = tree.root_node();
        if root.has_error() {
            return Err(Error::Argument(format!("cannot parse '{snippet}'")));
        }
        f(self, root, snippet)
    }
}
