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
        let (fname, targ_node) = match f.kind() {
            "identifier" => (text(f, src).to_string(), None),
            "template_function" => {
                let nm = f
                    .child_by_field_name("name")
                    .map(|x| text(x, src).to_string())
                    .unwrap_or_default();
                (nm, f.child_by_field_name("arguments"))
            }
            "field_expression" => return Err(self.unsupported(n, "member functions")),
            "qualified_identifier" => {
                return Err(self.unsupported(n, format!("qualified name '{}'", text(f, src))))
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
        // Built-in functions.
        let mut args = Vec::new();
        let user_fn = self.fns.contains_key(&fname);
        if !user_fn {
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
            return self.builtin_call(&fname, args, n);
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
            conv.push(self.convert(a, &p.ty, *an)?);
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

    pub(super) fn builtin_call(
        &mut self,
        name: &str,
        mut args: Vec<Expr>,
        n: Node,
    ) -> Result<Expr> {
        let loc = self.loc(n);
        let want = |k: usize, l: &Self| -> Result<()> {
            if args.len() != k {
                Err(l.err_at(n, format!("{name} takes {k} argument(s)")))
            } else {
                Ok(())
            }
        };
        match name {
            "min" | "max" | "fminf" | "fmaxf" | "fmin" | "fmax" | "umin" | "umax" | "llmin" | "llmax" => {
                want(2, self)?;
                let b = args.pop().ok_or_else(|| self.err_at(n, "missing argument"))?;
                let a = args.pop().ok_or_else(|| self.err_at(n, "missing argument"))?;
                let ct = match name {
                    "fminf" | "fmaxf" => FLOAT,
                    "fmin" | "fmax" => DOUBLE,
                    _ => common(&a.ty, &b.ty),
                };
                let a = self.convert(a, &ct, n)?;
                let b = self.convert(b, &ct, n)?;
                let op = if name.contains("min") { BinOp::Min } else { BinOp::Max };
                Ok(e(ExprKind::Binary(op, Box::new(a), Box::new(b)), ct, loc))
            }
            "abs" | "fabsf" | "fabs" | "labs" | "llabs" => {
                want(1, self)?;
                let a = args.pop().ok_or_else(|| self.err_at(n, "missing argument"))?;
                let t = match name {
                    "fabsf" => FLOAT,
                    "fabs" => DOUBLE,
                    _ => promote(&a.ty),
                };
                let a = self.convert(a, &t, n)?;
                Ok(e(ExprKind::Unary(UnOp::Abs, Box::new(a)), t, loc))
            }
            "__float2half" | "__half2float" | "__int2float_rn" | "__float2int_rz" | "__int_as_float" | "__float_as_int" => {
                want(1, self)?;
                let a = args.pop().ok_or_else(|| self.err_at(n, "missing argument"))?;
                let t = match name {
                    "__float2half" => Ty::Float(2),
                    "__half2float" | "__int2float_rn" => FLOAT,
                    _ => INT,
                };
                if name.contains("_as_") {
                    return Err(self.unsupported(n, name.to_string()));
                }
                self.convert(a, &t, n)
            }
            "sqrtf" | "sqrt" | "expf" | "exp" | "__expf" | "logf" | "log" | "sinf" | "cosf" | "sin" | "cos" | "floorf" | "floor" | "ceilf" | "ceil" | "rsqrtf" | "__fdividef" | "powf" | "pow" | "fmaf" | "fma" => Err(self.unsupported(
                n,
                format!("math function {name} (only memory-addressing arithmetic is interpreted; min, max and abs are built in)"),
            )),
            _ => Err(self.err_at(n, format!("unknown function '{name}'"))),
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
