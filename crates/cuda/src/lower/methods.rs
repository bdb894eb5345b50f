//! C++ structs with member functions: struct templates (instantiated per argument list, with
//! explicit specializations), member functions lowered as functions taking `this` first,
//! static member functions, and conversion operators (`operator T*()`, as cuda-samples'
//! `SharedMemory<T>` gives `extern __shared__` memory a type).

use super::*;

/// Where a struct's members are written: its body's byte range in the file and the
/// template arguments in force there.
#[derive(Clone, Debug)]
pub(super) struct StructBody {
    pub range: (usize, usize),
    pub tenv: HashMap<String, TArg>,
}

/// Name given to conversion operators among a struct's members.
const CONVERSION: &str = "operator cast";

impl<'t> Lowerer<'t> {
    /// Records `template <…> struct S { … }` (or an explicit specialization
    /// `template <> struct S<double> { … }`) found at file scope.
    pub(super) fn add_struct_template(&mut self, n: Node<'t>, params: Option<Node<'t>>) {
        let Some(name) = n.child_by_field_name("name") else {
            return;
        };
        if n.child_by_field_name("body").is_none() {
            return;
        }
        if name.kind() == "template_type" {
            if let (Some(nm), Some(args)) = (
                name.child_by_field_name("name"),
                name.child_by_field_name("arguments"),
            ) {
                let nm = text(nm, self.src).to_string();
                self.struct_specs.push((nm, args, n));
            }
            return;
        }
        let tparams = tparam_list(params, self.src);
        self.struct_templates
            .insert(text(name, self.src).to_string(), (n, tparams));
    }

    /// The struct `name<targs>`: an explicit specialization when one matches, else the
    /// template laid out with its parameters bound to `targs`.
    pub(super) fn struct_instance(&mut self, name: &str, targs: Vec<TArg>, at: Node) -> Result<Ty> {
        let key = (name.to_string(), targs.clone());
        if let Some(&i) = self.struct_insts.get(&key) {
            return Ok(Ty::Struct(i));
        }
        let mut chosen = None;
        for (nm, args, node) in self.struct_specs.clone() {
            if nm == name && self.template_args(args, self.src)? == targs {
                chosen = Some((node, Vec::new()));
            }
        }
        let (node, tparams) = match chosen {
            Some(c) => c,
            None => self
                .struct_templates
                .get(name)
                .cloned()
                .ok_or_else(|| self.err_at(at, format!("unknown struct template '{name}'")))?,
        };
        if !tparams.is_empty() && tparams.len() != targs.len() {
            return Err(self.err_at(
                at,
                format!(
                    "{name} takes {} template argument(s); {} given",
                    tparams.len(),
                    targs.len()
                ),
            ));
        }
        let tenv = tparams
            .iter()
            .map(|p| p.0.clone())
            .zip(targs.clone())
            .collect();
        let saved_tenv = std::mem::replace(&mut self.st.tenv, tenv);
        let saved_name = self.struct_names.get(name).copied();
        let r = self.struct_type(node, self.src);
        self.st.tenv = saved_tenv;
        match saved_name {
            Some(i) => self.struct_names.insert(name.to_string(), i),
            None => self.struct_names.remove(name),
        };
        let Ty::Struct(i) = r? else {
            return Err(self.err_at(at, format!("'{name}' is not a struct")));
        };
        let shown = targs
            .iter()
            .map(|a| match a {
                TArg::Type(t) => self.structs.name(t),
                TArg::Int(v) => v.to_string(),
            })
            .collect::<Vec<_>>()
            .join(", ");
        self.structs.defs[i].name = format!("{name}<{shown}>");
        self.struct_insts.insert(key, i);
        Ok(Ty::Struct(i))
    }

    /// The struct a scope names (`S` of `S::f`, `S<float>` of `S<float>::f`), if any.
    pub(super) fn scope_struct(&mut self, scope: Node, src: &str) -> Option<usize> {
        let nm = match scope.kind() {
            "template_type" => scope.child_by_field_name("name").map(|x| text(x, src))?,
            _ => text(scope, src),
        };
        if !self.struct_names.contains_key(nm) && !self.struct_templates.contains_key(nm) {
            return None;
        }
        let ty = match scope.kind() {
            "template_type" => self.base_type(scope, src),
            _ => self.named_type(nm, scope),
        };
        match ty {
            Ok(Ty::Struct(i)) => Some(i),
            _ => None,
        }
    }

    /// The member functions of struct `si` named `name` ([`CONVERSION`] for conversion
    /// operators), each with whether it is `static`.
    pub(super) fn methods(&self, si: usize, name: &str) -> Vec<(Node<'t>, bool)> {
        let Some(b) = self.struct_bodies.get(&si) else {
            return Vec::new();
        };
        let Some(body) = self.root.descendant_for_byte_range(b.range.0, b.range.1) else {
            return Vec::new();
        };
        named_children(body)
            .into_iter()
            .filter(|f| f.kind() == "function_definition")
            .filter(|f| method_name(*f, self.src).as_deref() == Some(name))
            .map(|f| (f, has_token(f, "static")))
            .collect()
    }

    /// Lowers member function `node` of struct `si` (once per struct instance).
    fn instantiate_method(
        &mut self,
        si: usize,
        node: Node<'t>,
        is_static: bool,
        call: Node,
    ) -> Result<FuncId> {
        let mname = method_name(node, self.src).unwrap_or_default();
        let key = (format!("#{si}::{mname}@{}", node.start_byte()), Vec::new());
        if let Some(&id) = self.func_keys.get(&key) {
            return Ok(id);
        }
        if self.in_progress.len() >= MAX_CALL_DEPTH || !self.in_progress.insert(key.clone()) {
            return Err(self.unsupported(call, format!("recursive or too deep call of {mname}")));
        }
        let tenv = self
            .struct_bodies
            .get(&si)
            .map(|b| b.tenv.clone())
            .unwrap_or_default();
        let saved = std::mem::take(&mut self.st);
        self.st.tenv = tenv;
        self.pending_this = (!is_static).then(|| Ty::Struct(si).ptr());
        let shown = format!("{}::{mname}", self.structs.defs[si].name);
        let r = self.lower_fn(&shown, node);
        self.pending_this = None;
        self.st = saved;
        self.in_progress.remove(&key);
        let f = r?;
        self.funcs.push(f);
        let id = self.funcs.len() - 1;
        self.func_keys.insert(key, id);
        Ok(id)
    }

    /// Calls member `name` of struct `si` on the object at `this` (`None` for a static
    /// call), with arguments `arg_nodes`. `Ok(None)` when the struct has no such member.
    pub(super) fn method_call(
        &mut self,
        si: usize,
        name: &str,
        this: Option<Expr>,
        arg_nodes: &[Node],
        n: Node,
        src: &str,
    ) -> Result<Option<Expr>> {
        let cands = self.methods(si, name);
        if cands.is_empty() {
            return Ok(None);
        }
        let mut args = Vec::new();
        for a in arg_nodes {
            args.push(self.rvalue(*a, src)?);
        }
        let fitting: Vec<_> = cands
            .iter()
            .filter(|(f, _)| param_count(*f, self.src) == args.len())
            .copied()
            .collect();
        let (node, is_static) = match fitting.as_slice() {
            [one] => *one,
            [] => {
                return Err(self.err_at(
                    n,
                    format!(
                        "no member function '{name}' taking {} argument(s)",
                        args.len()
                    ),
                ))
            }
            several => {
                // Overloads of one arity: the first whose parameters take the arguments
                // exactly, else the first.
                let tys: Vec<Ty> = args.iter().map(|a| a.ty.clone()).collect();
                let mut pick = several[0];
                for c in several {
                    if self.param_types(c.0).ok().as_deref() == Some(&tys[..]) {
                        pick = *c;
                        break;
                    }
                }
                pick
            }
        };
        let id = self.instantiate_method(si, node, is_static, n)?;
        let params = self.funcs[id].params.clone();
        let mut conv = Vec::new();
        let mut ps = params.iter();
        if !is_static {
            let Some(this) = this else {
                return Err(self.err_at(
                    n,
                    format!("'{name}' is not static; call it on an object (obj.{name}(…))"),
                ));
            };
            ps.next();
            conv.push(this);
        }
        for ((a, p), an) in args.into_iter().zip(ps).zip(arg_nodes) {
            conv.push(if p.by_ref {
                self.reference_argument(*an, &p.ty, src)?
            } else {
                self.convert(a, &p.ty, *an)?
            });
        }
        let ret = self.funcs[id].ret.clone();
        Ok(Some(e(
            ExprKind::Call {
                func: id,
                args: conv,
            },
            ret,
            self.loc(n),
        )))
    }

    /// The address of a struct value for a member call: where it lives, or a private
    /// temporary holding it.
    pub(super) fn object_address(&mut self, v: Expr, n: Node) -> Result<Expr> {
        let loc = v.loc;
        let pty = v.ty.clone().ptr();
        match v.kind {
            ExprKind::Load { addr, .. } => Ok(Expr { ty: pty, ..*addr }),
            // An empty temporary (`SharedMemory<float>()`): no member is ever read.
            ExprKind::MakeAgg(items) if items.is_empty() => Ok(e(ExprKind::Const(0), pty, loc)),
            kind => {
                let ty = v.ty.clone();
                let off = self.alloc_private(&ty, n, "a temporary")?;
                let a = e(ExprKind::PrivateAddr(off), pty.clone(), loc);
                let site = self.site(loc, String::new(), Op::Store, false);
                let st = e(
                    ExprKind::Store {
                        addr: Box::new(a.clone()),
                        value: Box::new(e(kind, ty.clone(), loc)),
                        site,
                    },
                    ty,
                    loc,
                );
                Ok(e(ExprKind::Seq(Box::new(st), Box::new(a)), pty, loc))
            }
        }
    }

    /// A struct value converted by its conversion operator to `to` (one whose type is `to`,
    /// else the first); `Ok(None)` when the struct has none.
    pub(super) fn conversion_operator(
        &mut self,
        v: Expr,
        to: &Ty,
        n: Node,
    ) -> Result<Option<Expr>> {
        let Ty::Struct(si) = v.ty else {
            return Ok(None);
        };
        let cands = self.methods(si, CONVERSION);
        if cands.is_empty() {
            return Ok(None);
        }
        let mut ids = Vec::new();
        for (f, _) in cands {
            ids.push(self.instantiate_method(si, f, false, n)?);
        }
        let id = ids
            .iter()
            .copied()
            .find(|&i| &self.funcs[i].ret == to)
            .unwrap_or(ids[0]);
        let this = self.object_address(v, n)?;
        let ret = self.funcs[id].ret.clone();
        let loc = this.loc;
        Ok(Some(e(
            ExprKind::Call {
                func: id,
                args: vec![this],
            },
            ret,
            loc,
        )))
    }

    /// The return type and parameter-list holder of a conversion operator
    /// (`operator T*()`: `T*`).
    pub(super) fn conversion_signature<'n>(
        &mut self,
        oc: Node<'n>,
        src: &str,
    ) -> Result<(Node<'n>, Ty)> {
        let tn = oc
            .child_by_field_name("type")
            .ok_or_else(|| self.err_at(oc, "conversion operator without a type"))?;
        let mut ty = self.base_type(tn, src)?;
        let mut d = oc.child_by_field_name("declarator");
        while let Some(x) = d {
            match x.kind() {
                "abstract_pointer_declarator" => ty = ty.ptr(),
                "abstract_function_declarator" => return Ok((x, ty)),
                _ => {}
            }
            d = x.child_by_field_name("declarator");
        }
        Err(self.unsupported(oc, "this conversion operator"))
    }
}

/// A member function's name: `add` of `void add(float)`, [`CONVERSION`] for `operator T*()`.
fn method_name(f: Node, src: &str) -> Option<String> {
    let mut d = f.child_by_field_name("declarator")?;
    loop {
        match d.kind() {
            "operator_cast" => return Some(CONVERSION.to_string()),
            "function_declarator" => {
                return d
                    .child_by_field_name("declarator")
                    .map(|x| text(x, src).to_string())
            }
            _ => d = d.child_by_field_name("declarator")?,
        }
    }
}
