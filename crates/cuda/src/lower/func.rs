//! Functions: kernel selection, template arguments and instantiation, parameters, scopes.

use super::*;

impl<'t> Lowerer<'t> {
    /// Lowers the kernel `name` (with template arguments `targs`; `sig`, the parameter types
    /// written after the name as in `k(float*, int)`, picks one of several overloads) and
    /// everything it calls.
    ///
    /// Errors: [`Error::UnknownKernel`]; [`Error::Argument`] when several `__global__`
    /// functions have this name and `sig` names none of them, listing their signatures.
    pub fn lower_kernel(
        mut self,
        name: &str,
        targs: Vec<TArg>,
        sig: Option<&str>,
    ) -> Result<Lowered> {
        let defs = self.fns.get(name);
        let is_kernel = defs.is_some_and(|d| d.iter().any(|f| f.is_global));
        if !is_kernel {
            return Err(Error::UnknownKernel {
                file: self.file.clone(),
                name: name.to_string(),
                found: self.kernel_names(),
            });
        }
        let overloads: Vec<Node> = defs
            .map(|d| d.iter().filter(|f| f.is_global).map(|f| f.node).collect())
            .unwrap_or_default();
        let squash = |s: &str| s.chars().filter(|c| !c.is_whitespace()).collect::<String>();
        if overloads.len() > 1 || sig.is_some() {
            let mut sigs = Vec::new();
            for &n in &overloads {
                let tys = self.param_types(n).unwrap_or_default();
                let written = tys
                    .iter()
                    .map(|t| self.structs.name(t))
                    .collect::<Vec<_>>()
                    .join(", ");
                if sig.is_some_and(|s| squash(s) == squash(&written)) {
                    self.kernel_node = Some(n.id());
                }
                let at = loc_of(n);
                sigs.push(format!(
                    "{name}({written}) at {}:{}:{}",
                    self.file, at.line, at.col
                ));
            }
            if self.kernel_node.is_none() {
                let example = sigs
                    .first()
                    .and_then(|s| s.split(" at ").next())
                    .unwrap_or(name);
                return Err(Error::Argument(format!(
                    "{} __global__ functions are named '{name}'{}: {}. Name one with its parameter types, e.g. --kernel '{example}'",
                    overloads.len(),
                    sig.map(|s| format!(" and none takes ({s})")).unwrap_or_default(),
                    sigs.join("; ")
                )));
            }
        }
        let kernel = self.instantiate(name, targs, None, None)?;
        let mut param_allocs = Vec::new();
        for p in self.funcs[kernel].params.clone() {
            if p.ty.is_ptr() {
                let es = p.ty.pointee().map(|t| self.structs.size(t)).unwrap_or(1);
                self.allocs.push(AllocInfo {
                    name: p.name.clone(),
                    size: None,
                    elem_size: es,
                    init: Vec::new(),
                });
                param_allocs.push(Some(self.allocs.len() - 1));
            } else {
                param_allocs.push(None);
            }
        }
        let objects = self
            .object_params
            .get(&self.funcs[kernel].name)
            .cloned()
            .unwrap_or_default();
        let texture_params = self.funcs[kernel]
            .params
            .iter()
            .map(|p| objects.iter().find(|(n, _)| *n == p.name).map(|(_, t)| *t))
            .collect();
        Ok(Lowered {
            funcs: self.funcs,
            kernel,
            structs: self.structs,
            sites: self.sites,
            slots: self.slots,
            private_bytes: self.private_bytes,
            static_shared_bytes: self.shared_bytes,
            constant: self.constant,
            allocs: self.allocs,
            param_allocs,
            local_arrays: self.local_arrays,
            texture_params,
            texture_refs: self.texture_refs,
        })
    }

    /// Parses a template argument list written as text (`float, 2`).
    pub fn parse_targs(&mut self, name_with_args: &str) -> Result<(String, Vec<TArg>)> {
        let Some(lt) = name_with_args.find('<') else {
            return Ok((name_with_args.trim().to_string(), Vec::new()));
        };
        let name = name_with_args[..lt].trim().to_string();
        let snippet = format!("void __warpscope_k() {{ {name_with_args}(); }}");
        let r = self.with_snippet_root(&snippet, |l, root, s| {
            let call = find_kind(root, "template_argument_list");
            match call {
                Some(list) => l.template_args(list, s),
                None => Err(Error::Argument(format!("cannot read the template arguments of kernel '{name_with_args}'; write it as name<type, value>"))),
            }
        });
        Ok((name, r?))
    }

    pub(super) fn template_args(&mut self, list: Node, src: &str) -> Result<Vec<TArg>> {
        let mut out = Vec::new();
        for a in named_children(list) {
            if a.kind() == "type_descriptor" {
                // `N` alone parses as a type; an integer template parameter or constant wins.
                let tn = a.child_by_field_name("type");
                if let (Some(tn), None) = (tn, a.child_by_field_name("declarator")) {
                    let nm = text(tn, src);
                    if tn.kind() == "type_identifier" && self.lookup_value(nm).is_some() {
                        let ex = self.rvalue(tn, src)?;
                        if let Some(v) = const_eval(&ex) {
                            out.push(TArg::Int(v as i64));
                            continue;
                        }
                    }
                }
                out.push(TArg::Type(self.type_descriptor(a, src)?));
            } else {
                let ex = self.rvalue(a, src)?;
                let v = const_eval(&ex)
                    .ok_or_else(|| self.err_at(a, "template argument is not a constant"))?;
                out.push(TArg::Int(crate::value::as_i64(v, &ex.ty)));
            }
        }
        Ok(out)
    }

    pub(super) fn lookup_value(&self, name: &str) -> Option<()> {
        (matches!(self.st.tenv.get(name), Some(TArg::Int(_))) || self.lookup(name).is_some())
            .then_some(())
    }

    pub(super) fn instantiate(
        &mut self,
        name: &str,
        targs: Vec<TArg>,
        arg_tys: Option<&[Ty]>,
        call: Option<Node>,
    ) -> Result<FuncId> {
        let defs = self.fns.get(name).map(|v| {
            v.iter()
                .map(|d| (d.node, d.tparams.clone(), d.is_global))
                .collect::<Vec<_>>()
        });
        let defs = defs.unwrap_or_default();
        let pick = match arg_tys {
            Some(a) => self.resolve_overload(name, &defs, a, call)?,
            // No call: the kernel itself (the overload chosen by signature), never a
            // __device__ function of the same name.
            None => defs
                .iter()
                .find(|(node, _, is_global)| {
                    *is_global && self.kernel_node.is_none_or(|id| id == node.id())
                })
                .cloned(),
        };
        let Some((node, tparams, _)) = pick else {
            let at = call
                .map(|c| self.err_at(c, format!("no function '{name}' taking these arguments")));
            return Err(at.unwrap_or_else(|| Error::Argument(format!("no function '{name}'"))));
        };
        // Deduce the missing template arguments from the call's argument types.
        let mut targs = targs;
        if targs.len() < tparams.len() {
            if let Some(arg_tys) = arg_tys {
                let deduced = self.deduce(node, &tparams, &targs, arg_tys);
                targs = deduced;
            }
        }
        if targs.len() != tparams.len() {
            let msg = format!(
                "{name} takes {} template argument(s) ({}); {} given",
                tparams.len(),
                tparams
                    .iter()
                    .map(|p| p.0.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
                targs.len()
            );
            return Err(match call {
                Some(c) => self.err_at(c, msg),
                None => Error::Argument(format!(
                    "{msg}: name the kernel with its arguments, e.g. --kernel '{name}<float>'"
                )),
            });
        }
        for (i, ((pn, is_type), a)) in tparams.iter().zip(&targs).enumerate() {
            if *is_type != matches!(a, TArg::Type(_)) {
                let msg = format!(
                    "template argument {} of {name} ({pn}) must be a {}",
                    i + 1,
                    if *is_type { "type" } else { "constant" }
                );
                return Err(match call {
                    Some(c) => self.err_at(c, msg),
                    None => Error::Argument(msg),
                });
            }
        }
        // Overloads are told apart by where they are defined.
        let key = (format!("{name}@{}", node.start_byte()), targs.clone());
        if let Some(&id) = self.func_keys.get(&key) {
            return Ok(id);
        }
        if self.in_progress.len() >= MAX_CALL_DEPTH {
            return Err(self.err_at(
                call.unwrap_or(node),
                format!("calls of __device__ functions nested more than {MAX_CALL_DEPTH} deep (kernel → f → g → …); warpscope stops here to protect its stack"),
            ));
        }
        if !self.in_progress.insert(key.clone()) {
            return Err(self.unsupported(call.unwrap_or(node), format!("recursive call of {name}")));
        }
        let saved = std::mem::take(&mut self.st);
        self.st.tenv = tparams
            .iter()
            .map(|p| p.0.clone())
            .zip(targs.iter().cloned())
            .collect();
        let r = self.lower_fn(name, node);
        self.st = saved;
        self.in_progress.remove(&key);
        let f = r?;
        self.funcs.push(f);
        let id = self.funcs.len() - 1;
        self.func_keys.insert(key, id);
        Ok(id)
    }

    pub(super) fn deduce(
        &mut self,
        node: Node,
        tparams: &[(String, bool)],
        given: &[TArg],
        arg_tys: &[Ty],
    ) -> Vec<TArg> {
        let mut found: HashMap<String, TArg> = HashMap::new();
        let params = node
            .child_by_field_name("declarator")
            .and_then(|d| d.child_by_field_name("parameters"))
            .map(named_children)
            .unwrap_or_default();
        for (p, at) in params.iter().zip(arg_tys) {
            let Some(tn) = p.child_by_field_name("type") else {
                continue;
            };
            let tname = text(tn, self.src);
            if !tparams.iter().any(|(n, t)| *t && n == tname) {
                continue;
            }
            let mut depth = 0;
            let mut d = p.child_by_field_name("declarator");
            while let Some(x) = d {
                if x.kind() == "pointer_declarator" {
                    depth += 1;
                }
                d = x.child_by_field_name("declarator");
            }
            let mut t = at.clone();
            for _ in 0..depth {
                t = match t {
                    Ty::Ptr(e) | Ty::Array(e, _) => *e,
                    other => other,
                };
            }
            found.entry(tname.to_string()).or_insert(TArg::Type(t));
        }
        let mut out = given.to_vec();
        for (n, _) in tparams.iter().skip(given.len()) {
            match found.get(n) {
                Some(a) => out.push(a.clone()),
                None => break,
            }
        }
        out
    }

    pub(super) fn lower_fn(&mut self, name: &str, node: Node<'t>) -> Result<Func> {
        let src = self.src;
        // A host function's syntax errors were left for the moment device code calls it.
        if let Some((loc, msg)) = crate::first_error(node, src, false) {
            return Err(Error::Syntax {
                file: self.file.clone(),
                loc,
                msg,
            });
        }
        let decl = node
            .child_by_field_name("declarator")
            .ok_or_else(|| self.err_at(node, "function without a declarator"))?;
        let (fdecl, ret) = if decl.kind() == "operator_cast" {
            self.conversion_signature(decl, src)?
        } else {
            let ret = match node.child_by_field_name("type") {
                Some(tn) => self.base_type(tn, src)?,
                None => return Err(self.unsupported(node, "constructors")),
            };
            match decl.kind() {
                "function_declarator" => (decl, ret),
                "pointer_declarator" => (
                    decl.child_by_field_name("declarator")
                        .filter(|d| d.kind() == "function_declarator")
                        .ok_or_else(|| self.unsupported(decl, "this function declarator"))?,
                    ret.ptr(),
                ),
                _ => return Err(self.unsupported(decl, "this function declarator")),
            }
        };
        let body = node
            .child_by_field_name("body")
            .ok_or_else(|| self.err_at(node, "function without a body"))?;
        self.st.ret = Some(ret.clone());
        self.st.scopes.push(HashMap::new());
        self.st.addr_taken = addr_taken_names(body, src, &self.ref_fns);
        let mut params = Vec::new();
        let mut objects = Vec::new();
        if let Some(this_ty) = self.pending_this.take() {
            let slot = self.new_slot();
            self.bind(
                "this",
                Var {
                    ty: this_ty.clone(),
                    home: VarHome::Reg(slot),
                    read_only: false,
                },
            );
            params.push(Param {
                name: "this".to_string(),
                ty: this_ty,
                home: Home::Reg(slot),
                read_only: false,
                by_ref: false,
            });
        }
        if let Some(plist) = fdecl.child_by_field_name("parameters") {
            for p in named_children(plist) {
                if p.kind() == "variadic_parameter" {
                    return Err(self.unsupported(p, "variadic functions"));
                }
                let Some(ptn) = p.child_by_field_name("type") else {
                    continue;
                };
                let base = self.base_type(ptn, src)?;
                let by_ref = is_mutable_reference(p);
                let (pname, mut ty) = match p.child_by_field_name("declarator") {
                    Some(d) => self.declarator(strip_reference(d).0, base, src)?,
                    None => (String::new(), base),
                };
                if ty == Ty::Void {
                    continue;
                }
                if by_ref {
                    let slot = self.new_slot();
                    self.bind(
                        &pname,
                        Var {
                            ty: ty.clone(),
                            home: VarHome::Ref(slot),
                            read_only: false,
                        },
                    );
                    params.push(Param {
                        name: pname,
                        ty: ty.ptr(),
                        home: Home::Reg(slot),
                        read_only: false,
                        by_ref,
                    });
                    continue;
                }
                if let Ty::Array(el, _) = ty {
                    ty = Ty::Ptr(el);
                }
                let t = text(p, src);
                let read_only = ty.is_ptr() && t.contains("const") && t.contains("__restrict__");
                let object = match text(cg::unqualify(ptn), src) {
                    "cudaTextureObject_t" => Some("cudaTextureObject_t"),
                    "cudaSurfaceObject_t" => Some("cudaSurfaceObject_t"),
                    _ => None,
                };
                if let (Some(o), false) = (object, ty.is_ptr()) {
                    objects.push((pname.clone(), o));
                }
                let home = if ty.is_scalar() && !self.st.addr_taken.contains(&pname) {
                    Home::Reg(self.new_slot())
                } else {
                    Home::Private(self.alloc_private(&ty, p, &pname)?)
                };
                let vh = match home {
                    Home::Reg(s) => VarHome::Reg(s),
                    Home::Private(o) => VarHome::Private(o),
                };
                self.bind(
                    &pname,
                    Var {
                        ty: ty.clone(),
                        home: vh,
                        read_only,
                    },
                );
                params.push(Param {
                    name: pname,
                    ty,
                    home,
                    read_only,
                    by_ref: false,
                });
            }
        }
        if !objects.is_empty() {
            self.object_params.insert(name.to_string(), objects);
        }
        let body = self.stmt(body, src)?;
        self.st.scopes.pop();
        Ok(Func {
            name: name.to_string(),
            params,
            ret,
            body,
            loc: loc_of(node),
        })
    }

    pub(super) fn new_slot(&mut self) -> Slot {
        self.slots += 1;
        self.slots - 1
    }

    /// Places a per-thread variable in local memory; refuses one that takes the thread past
    /// [`MAX_LOCAL_BYTES`].
    pub(super) fn alloc_private(&mut self, ty: &Ty, n: Node, name: &str) -> Result<u64> {
        let a = self.structs.align(ty).max(1);
        let off = self.private_bytes.div_ceil(a).saturating_mul(a);
        let size = self.structs.size(ty);
        let end = off.saturating_add(size);
        if end > MAX_LOCAL_BYTES {
            return Err(self.err_at(
                n,
                format!("'{name}' needs {size} bytes per thread, and the thread's local variables would reach {end} bytes; a thread has at most {MAX_LOCAL_BYTES} bytes (512 KiB) of local memory on CC 2.0 and later, 16 KB on 1.x [PG \"Technical Specifications per Compute Capability\"]. Use global memory (a pointer parameter) for large per-thread data"),
            ));
        }
        self.private_bytes = end;
        Ok(off)
    }

    pub(super) fn bind(&mut self, name: &str, v: Var) {
        if let Some(s) = self.st.scopes.last_mut() {
            s.insert(name.to_string(), v);
        }
    }

    pub(super) fn lookup(&self, name: &str) -> Option<Var> {
        for s in self.st.scopes.iter().rev() {
            if let Some(v) = s.get(name) {
                return Some(v.clone());
            }
        }
        self.globals.get(name).cloned()
    }

    /// The parameter types of function definition `node` (arrays as pointers).
    pub(super) fn param_types(&mut self, node: Node) -> Result<Vec<Ty>> {
        let src = self.src;
        let mut d = node.child_by_field_name("declarator");
        while let Some(x) = d {
            if x.kind() == "function_declarator" {
                break;
            }
            d = x.child_by_field_name("declarator");
        }
        let Some(plist) = d.and_then(|x| x.child_by_field_name("parameters")) else {
            return Ok(Vec::new());
        };
        let mut out = Vec::new();
        for p in named_children(plist) {
            let Some(ptn) = p.child_by_field_name("type") else {
                continue;
            };
            let base = self.base_type(ptn, src)?;
            let ty = match p.child_by_field_name("declarator") {
                Some(d) => self.declarator(strip_reference(d).0, base, src)?.1,
                None => base,
            };
            match ty {
                Ty::Void => {}
                Ty::Array(el, _) => out.push(Ty::Ptr(el)),
                t => out.push(t),
            }
        }
        Ok(out)
    }

    /// Chooses among the definitions of `name` for a call with arguments of types `args` by
    /// C++'s ranking of implicit conversions [C++ [over.match.best], [over.ics.rank]]: exact
    /// match (also array-to-pointer) beats promotion (integral promotion, float → double),
    /// which beats conversion; the best candidate is at least as good for every argument
    /// and better for one; a non-template beats a template on a tie. Error when two are
    /// equally good, listing them.
    fn resolve_overload(
        &mut self,
        name: &str,
        defs: &[(Node<'t>, Vec<(String, bool)>, bool)],
        args: &[Ty],
        call: Option<Node>,
    ) -> Result<Option<(Node<'t>, Vec<(String, bool)>, bool)>> {
        let src = self.src;
        let viable: Vec<_> = defs
            .iter()
            .filter(|(node, _, _)| param_count(*node, src) == args.len())
            .cloned()
            .collect();
        if viable.len() <= 1 {
            return Ok(viable.into_iter().next());
        }
        // Per candidate: ranks per argument (0 exact, 1 promotion, 2 conversion), a template
        // counting as an exact match of its deduced types.
        let mut ranked = Vec::new();
        for c in &viable {
            let ranks = if c.1.is_empty() {
                match self.param_types(c.0) {
                    Ok(ps) => ps
                        .iter()
                        .zip(args)
                        .map(|(p, a)| conversion_rank(a, p))
                        .collect::<Option<Vec<u8>>>(),
                    Err(_) => None,
                }
            } else {
                Some(vec![0; args.len()])
            };
            if let Some(r) = ranks {
                ranked.push((c.clone(), r, !c.1.is_empty()));
            }
        }
        let better = |a: &(Vec<u8>, bool), b: &(Vec<u8>, bool)| {
            let all = a.0.iter().zip(&b.0).all(|(x, y)| x <= y);
            let one = a.0.iter().zip(&b.0).any(|(x, y)| x < y);
            all && (one || (!a.1 && b.1))
        };
        let best: Vec<usize> = (0..ranked.len())
            .filter(|&i| {
                (0..ranked.len()).all(|j| {
                    i == j
                        || better(
                            &(ranked[i].1.clone(), ranked[i].2),
                            &(ranked[j].1.clone(), ranked[j].2),
                        )
                })
            })
            .collect();
        if let [i] = best.as_slice() {
            return Ok(Some(ranked[*i].0.clone()));
        }
        if ranked.is_empty() {
            return Ok(None);
        }
        let mut cands = Vec::new();
        for (c, _, _) in &ranked {
            let tys = self.param_types(c.0).unwrap_or_default();
            let at = loc_of(c.0);
            cands.push(format!(
                "{name}({}) at {}:{}:{}",
                tys.iter()
                    .map(|t| self.structs.name(t))
                    .collect::<Vec<_>>()
                    .join(", "),
                self.file,
                at.line,
                at.col
            ));
        }
        let given = args
            .iter()
            .map(|t| self.structs.name(t))
            .collect::<Vec<_>>()
            .join(", ");
        let msg = format!(
            "the call of {name}({given}) is ambiguous: candidates {}. Convert an argument to the parameter type wanted",
            cands.join("; ")
        );
        Err(match call {
            Some(c) => self.err_at(c, msg),
            None => Error::Argument(msg),
        })
    }
}

/// The rank of converting an argument of type `from` to a parameter of type `to`: 0 exact
/// match, 1 promotion, 2 conversion, `None` when not implicitly convertible.
fn conversion_rank(from: &Ty, to: &Ty) -> Option<u8> {
    if from == to {
        return Some(0);
    }
    match (from, to) {
        (Ty::Array(a, _), Ty::Ptr(b)) if a == b => Some(0),
        (Ty::Ptr(_) | Ty::Array(..), Ty::Ptr(b)) if **b == Ty::Void => Some(2),
        (Ty::Ptr(_), Ty::Ptr(_)) => None,
        (Ty::Float(4), Ty::Float(8)) => Some(1),
        (
            Ty::Bool | Ty::Int { bytes: 1 | 2, .. },
            Ty::Int {
                bytes: 4,
                signed: true,
            },
        ) => Some(1),
        (f, t) if f.is_arith() && t.is_arith() => Some(2),
        (f, Ty::Bool) if f.is_ptr() => Some(2),
        _ => None,
    }
}
