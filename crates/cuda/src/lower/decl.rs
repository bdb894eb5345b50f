//! Declarations and types: typedefs, file-scope variables, initializers, base types, structs and declarators.

use super::*;

impl<'t> Lowerer<'t> {
    pub(super) fn typedef(&mut self, n: Node) -> Result<()> {
        let src = self.src;
        let tn = n
            .child_by_field_name("type")
            .ok_or_else(|| self.err_at(n, "typedef without a type"))?;
        let base = self.base_type(tn, src)?;
        for d in named_children(n) {
            if d.kind() == "type_qualifier" || d.id() == tn.id() {
                continue;
            }
            let (name, ty) = self.declarator(d, base.clone(), src)?;
            self.typedefs.insert(name, ty);
        }
        Ok(())
    }

    /// A file-scope declaration. One of device memory (`__device__`, `__constant__`,
    /// `__shared__`) or a texture reference is read now, errors and all; a host declaration
    /// that cannot be read is set aside (see [`host`]): the kernel may not use it.
    pub(super) fn global_decl(&mut self, n: Node) -> Result<()> {
        let src = self.src;
        let Some(tn) = n.child_by_field_name("type") else {
            return Ok(());
        };
        if self.texture_ref_decl(n, tn)? {
            return Ok(());
        }
        let device = ["__constant__", "__device__", "__shared__"]
            .iter()
            .any(|q| has_token(n, q));
        let declarators: Vec<Node> = named_children(n)
            .into_iter()
            .filter(|d| {
                matches!(
                    d.kind(),
                    "identifier" | "init_declarator" | "array_declarator" | "pointer_declarator"
                )
            })
            .collect();
        // Prototypes (`float *make_buffer(int n);`): functions are found by their definitions.
        let variables: Vec<Node> = declarators
            .iter()
            .copied()
            .filter(|d| !host::is_prototype(*d))
            .collect();
        if variables.is_empty() && !declarators.is_empty() {
            return Ok(());
        }
        let base = match self.base_type(tn, src) {
            Ok(t) => t,
            Err(e) if !device => {
                self.defer(host::declared_names(n, src), e);
                return Ok(());
            }
            Err(e) => return Err(e),
        };
        for d in variables {
            match self.global_variable(n, d, base.clone()) {
                Err(e) if !device => {
                    let name = host::declarator_name(d, src);
                    self.defer(name.into_iter().collect(), e);
                }
                r => r?,
            }
        }
        Ok(())
    }

    /// One variable `d` of the file-scope declaration `n`, of base type `base`.
    fn global_variable(&mut self, n: Node, d: Node, base: Ty) -> Result<()> {
        let src = self.src;
        let is_const_mem = has_token(n, "__constant__");
        let is_device = has_token(n, "__device__");
        let is_shared = has_token(n, "__shared__");
        let is_const = has_token(n, "const") || has_token(n, "constexpr");
        let (name, ty) = self.declarator(d, base, src)?;
        let init = (d.kind() == "init_declarator")
            .then(|| d.child_by_field_name("value"))
            .flatten();
        let ty = Self::complete_array(ty, init);
        let size = self.structs.size(&ty);
        let home = if is_const_mem {
            let al = self.structs.align(&ty);
            let off = (self.constant.len() as u64).div_ceil(al) * al;
            let end = off.saturating_add(size);
            if end > CONSTANT_MEMORY_BYTES {
                return Err(self.err_at(
                    d,
                    format!(
                        "__constant__ variable '{name}' needs {size} bytes (ending at byte {end} of constant memory); the hardware has {CONSTANT_MEMORY_BYTES} bytes (64 KB) of constant memory [PG \"Device Memory Accesses\"/\"Technical Specifications\"]. Make it smaller or put it in global memory"
                    ),
                ));
            }
            self.constant.resize(end as usize, 0);
            if let Some(iv) = init {
                let bytes = self.const_init_bytes(iv, &ty, src)?;
                let (at, n) = (off as usize, bytes.len().min(size as usize));
                self.constant[at..at + n].copy_from_slice(&bytes[..n]);
            }
            VarHome::Constant(off)
        } else if is_shared {
            return Err(self.unsupported(
                d,
                "__shared__ variables at file scope; declare them inside the kernel",
            ));
        } else if is_device {
            let init_bytes = match init {
                Some(iv) => self.const_init_bytes(iv, &ty, src)?,
                None => Vec::new(),
            };
            self.allocs.push(AllocInfo {
                name: name.clone(),
                size: Some(size),
                elem_size: size,
                init: init_bytes,
            });
            VarHome::Global(self.allocs.len() - 1)
        } else if is_const && ty.is_scalar() {
            let Some(iv) = init else {
                self.note_host_variable(&name);
                return Ok(());
            };
            let ex = self.rvalue(iv, src)?;
            let ex = self.convert(ex, &ty, iv)?;
            match const_eval(&ex) {
                Some(v) => VarHome::Const(v),
                None => {
                    self.note_host_variable(&name);
                    return Ok(());
                }
            }
        } else {
            // Host variables are not visible to device code.
            self.note_host_variable(&name);
            return Ok(());
        };
        self.globals.insert(
            name,
            Var {
                ty,
                home,
                read_only: false,
            },
        );
        Ok(())
    }

    /// `T a[] = {…}` takes its size from the initializer.
    pub(super) fn complete_array(ty: Ty, init: Option<Node>) -> Ty {
        match (&ty, init) {
            (Ty::Array(el, 0), Some(iv)) if iv.kind() == "initializer_list" => {
                Ty::Array(el.clone(), named_children(iv).len() as u64)
            }
            _ => ty,
        }
    }

    /// The bytes of a constant initializer (`{1.0f, 2.0f}`, nested lists, scalars), up to
    /// its last initialized byte: the rest of the variable is zero, and is not materialized
    /// (`__device__ float big[1 << 30] = {1.0f}` is 4 bytes here, not 4 GB).
    ///
    /// Errors: a non-constant initializer; an initializer this machine cannot hold.
    pub(super) fn const_init_bytes(&mut self, n: Node, ty: &Ty, src: &str) -> Result<Vec<u8>> {
        let mut out: Vec<u8> = Vec::new();
        let items = self.init_items(n, ty, 0, src)?;
        for (off, ex) in items {
            let v = const_eval(&ex)
                .ok_or_else(|| self.err_at(n, "this initializer is not a constant"))?;
            let w = self.structs.size(&ex.ty) as usize;
            let bytes = crate::value::to_bytes(v, &ex.ty);
            let end = off as usize + w;
            if out.len() < end {
                out.try_reserve(end - out.len()).map_err(|_| {
                    self.err_at(
                        n,
                        format!("this initializer reaches byte {end}, more than this machine can hold; initialize the array at run time"),
                    )
                })?;
                out.resize(end, 0);
            }
            out[off as usize..end].copy_from_slice(&bytes[..w]);
        }
        Ok(out)
    }

    /// Flattens an initializer into (byte offset, scalar expression converted to its member's
    /// type) pairs.
    pub(super) fn init_items(
        &mut self,
        n: Node,
        ty: &Ty,
        base: u64,
        src: &str,
    ) -> Result<Vec<(u64, Expr)>> {
        let mut out = Vec::new();
        if n.kind() != "initializer_list" {
            let ex = self.rvalue(n, src)?;
            let ex = self.convert(ex, ty, n)?;
            if ty.is_scalar() {
                out.push((base, ex));
            } else {
                // A whole aggregate (e.g. float4 v = make_float4(...)) handled by the caller.
                return Err(self.unsupported(n, "aggregate initializer from an expression here"));
            }
            return Ok(out);
        }
        let items = named_children(n);
        match ty {
            Ty::Array(el, cnt) => {
                if items.len() as u64 > *cnt {
                    return Err(self.err_at(
                        n,
                        format!("{} initializers for an array of {cnt}", items.len()),
                    ));
                }
                let es = self.structs.size(el);
                for (k, it) in items.into_iter().enumerate() {
                    out.extend(self.init_items(it, el, base + k as u64 * es, src)?);
                }
            }
            Ty::Struct(i) => {
                let fields = self.structs.defs[*i].fields.clone();
                if items.len() > fields.len() {
                    return Err(self.err_at(n, "too many initializers for this struct"));
                }
                for (f, it) in fields.iter().zip(items) {
                    out.extend(self.init_items(it, &f.ty, base + f.offset, src)?);
                }
            }
            _ => {
                if let Some(first) = items.into_iter().next() {
                    out.extend(self.init_items(first, ty, base, src)?);
                }
            }
        }
        Ok(out)
    }

    // ---------------------------------------------------------------- types

    pub(super) fn base_type(&mut self, n: Node, src: &str) -> Result<Ty> {
        match n.kind() {
            "primitive_type" => self.named_type(text(n, src), n),
            "sized_type_specifier" => {
                let t = text(n, src);
                let words: Vec<&str> = t.split_whitespace().collect();
                let unsigned = words.contains(&"unsigned");
                let longs = words.iter().filter(|w| **w == "long").count();
                if words.contains(&"double") {
                    return Ok(DOUBLE);
                }
                let bytes = if words.contains(&"char") {
                    1
                } else if words.contains(&"short") {
                    2
                } else if longs >= 1 {
                    8
                } else {
                    4
                };
                Ok(Ty::Int {
                    bytes,
                    signed: !unsigned,
                })
            }
            "type_identifier" => self.named_type(text(n, src), n),
            "struct_specifier" | "class_specifier" => self.struct_type(n, src),
            "union_specifier" | "enum_specifier" => {
                Err(self.unsupported(n, n.kind().replace("_specifier", "")))
            }
            "template_type" => {
                let name = n
                    .child_by_field_name("name")
                    .map(|x| text(cg::unqualify(x), src).to_string())
                    .unwrap_or_default();
                match n.child_by_field_name("arguments") {
                    Some(list) if self.struct_templates.contains_key(&name) => {
                        let targs = self.template_args(list, src)?;
                        self.struct_instance(&name, targs, n)
                    }
                    _ => Err(self.unsupported(n, format!("template type '{}'", text(n, src)))),
                }
            }
            // `ns::T`: namespaces are flattened, so the last name is looked up.
            "qualified_identifier" => {
                let inner = cg::unqualify(n);
                if inner.id() == n.id() {
                    return Err(self.unsupported(n, format!("qualified name '{}'", text(n, src))));
                }
                self.base_type(inner, src)
            }
            "placeholder_type_specifier" | "auto" => {
                Err(self.unsupported(n, "auto; write the type"))
            }
            other => Err(self.unsupported(n, format!("type {other} '{}'", text(n, src)))),
        }
    }

    pub(super) fn named_type(&mut self, name: &str, n: Node) -> Result<Ty> {
        Ok(match name {
            "void" => Ty::Void,
            "bool" => Ty::Bool,
            "char" | "int8_t" | "signed char" => Ty::Int {
                bytes: 1,
                signed: true,
            },
            "uchar" | "uint8_t" | "unsigned char" => Ty::Int {
                bytes: 1,
                signed: false,
            },
            "short" | "int16_t" => Ty::Int {
                bytes: 2,
                signed: true,
            },
            "ushort" | "uint16_t" => Ty::Int {
                bytes: 2,
                signed: false,
            },
            "int" | "int32_t" => INT,
            "uint" | "uint32_t" | "unsigned" => UINT,
            "long" | "int64_t" | "ptrdiff_t" | "ssize_t" | "intptr_t" | "long long" => LONG,
            // Texture and surface objects are `unsigned long long` handles [CUDA runtime
            // API, texture_types.h/surface_types.h].
            "size_t"
            | "uint64_t"
            | "uintptr_t"
            | "ulong"
            | "cudaTextureObject_t"
            | "cudaSurfaceObject_t" => ULONG,
            "float" => FLOAT,
            "double" => DOUBLE,
            "__half" | "half" | "__nv_bfloat16" | "nv_bfloat16" => Ty::Float(2),
            _ => {
                if let Some(TArg::Type(t)) = self.st.tenv.get(name) {
                    return Ok(t.clone());
                }
                if let Some(t) = self.typedefs.get(name) {
                    return Ok(t.clone());
                }
                if let Some(&i) = self.struct_names.get(name) {
                    return Ok(Ty::Struct(i));
                }
                if let Some(t) = self.structs.vector(name) {
                    return Ok(t);
                }
                if let Some(e) = self.deferred_type_error(name) {
                    return Err(e);
                }
                return Err(self.err_at(
                    n,
                    format!("unknown type '{name}': it is defined neither in this file nor in its project headers (the standard library's and CUDA's headers are read as empty, so their host types such as FILE are unknown here); check the spelling, define the type, or analyze the compiled path (--frontend ptx), which reads the real headers"),
                ));
            }
        })
    }

    pub(super) fn struct_type(&mut self, n: Node, src: &str) -> Result<Ty> {
        let name = n
            .child_by_field_name("name")
            .map(|x| text(x, src).to_string());
        let Some(body) = n.child_by_field_name("body") else {
            let name = name.unwrap_or_default();
            if let Some(&i) = self.struct_names.get(&name) {
                return Ok(Ty::Struct(i));
            }
            return Err(self
                .deferred_type_error(&name)
                .unwrap_or_else(|| self.err_at(n, format!("unknown struct '{name}'"))));
        };
        let mut fields = Vec::new();
        for f in named_children(body) {
            if f.kind() != "field_declaration" {
                // Member functions are lowered when called (see `methods`).
                if matches!(
                    f.kind(),
                    "comment"
                        | "function_definition"
                        | "template_declaration"
                        | "access_specifier"
                        | "declaration"
                        | "friend_declaration"
                ) {
                    continue;
                }
                return Err(self.unsupported(f, format!("struct member '{}'", text(f, src))));
            }
            // A member function's declaration, or a static member: not part of the layout.
            if f.child_by_field_name("declarator")
                .is_some_and(|d| d.kind() == "function_declarator")
                || has_token(f, "static")
            {
                continue;
            }
            let tn = f
                .child_by_field_name("type")
                .ok_or_else(|| self.err_at(f, "member without a type"))?;
            let base = self.base_type(tn, src)?;
            for d in named_children(f) {
                if matches!(
                    d.kind(),
                    "field_identifier" | "array_declarator" | "pointer_declarator"
                ) {
                    fields.push(self.declarator(d, base.clone(), src)?);
                } else if d.kind() == "bitfield_clause" {
                    return Err(self.unsupported(d, "bit-fields"));
                }
            }
        }
        // __align__(n) between `struct` and the body (blanked before parsing).
        let (s, b) = (n.start_byte(), body.start_byte());
        let min_align = if std::ptr::eq(src, self.src) {
            self.aligns
                .iter()
                .filter(|(p, _)| *p >= s && *p < b)
                .map(|(_, a)| *a)
                .max()
                .unwrap_or(1)
        } else {
            1
        };
        let nm = name
            .clone()
            .unwrap_or_else(|| format!("struct@{}", loc_of(n).line));
        let idx = self.structs.define(&nm, fields, min_align, false);
        if std::ptr::eq(src, self.src) {
            self.struct_bodies.insert(
                idx,
                methods::StructBody {
                    range: (body.start_byte(), body.end_byte()),
                    tenv: self.st.tenv.clone(),
                },
            );
        }
        if let Some(nm) = name {
            self.struct_names.insert(nm, idx);
        }
        Ok(Ty::Struct(idx))
    }

    /// Applies a declarator to a base type: returns the declared name and full type.
    pub(super) fn declarator(&mut self, n: Node, base: Ty, src: &str) -> Result<(String, Ty)> {
        self.nested(n, |l| l.declarator_inner(n, base, src))
    }

    pub(super) fn declarator_inner(
        &mut self,
        n: Node,
        base: Ty,
        src: &str,
    ) -> Result<(String, Ty)> {
        match n.kind() {
            "identifier" | "field_identifier" | "type_identifier" => {
                Ok((text(n, src).to_string(), base))
            }
            "pointer_declarator" | "abstract_pointer_declarator" => {
                match n.child_by_field_name("declarator") {
                    Some(d) => self.declarator(d, base.ptr(), src),
                    None => Ok((String::new(), base.ptr())),
                }
            }
            "array_declarator" | "abstract_array_declarator" => {
                let count = match n.child_by_field_name("size") {
                    Some(sz) => {
                        let ex = self.rvalue(sz, src)?;
                        match const_eval(&ex) {
                            Some(v) if ex.ty.is_int() && (v as i64) >= 0 => v,
                            _ => {
                                return Err(self.err_at(
                                    sz,
                                    format!(
                                        "array size '{}' is not a non-negative integer constant",
                                        text(sz, src)
                                    ),
                                ))
                            }
                        }
                    }
                    None => 0,
                };
                let t = Ty::Array(Box::new(base), count);
                match n.child_by_field_name("declarator") {
                    Some(d) => self.declarator(d, t, src),
                    None => Ok((String::new(), t)),
                }
            }
            "init_declarator" => {
                let d = n
                    .child_by_field_name("declarator")
                    .ok_or_else(|| self.err_at(n, "declaration without a name"))?;
                self.declarator(d, base, src)
            }
            "parenthesized_declarator" => match named_children(n).into_iter().next() {
                Some(d) => self.declarator(d, base, src),
                None => Err(self.err_at(n, "empty declarator")),
            },
            "reference_declarator" => {
                Err(self.unsupported(n, "C++ references; pass a pointer or a value"))
            }
            "function_declarator" => {
                Err(self.unsupported(n, "function pointers or local function declarations"))
            }
            other => Err(self.unsupported(n, format!("declarator {other}"))),
        }
    }

    pub(super) fn type_descriptor(&mut self, n: Node, src: &str) -> Result<Ty> {
        let tn = n
            .child_by_field_name("type")
            .ok_or_else(|| self.err_at(n, "type expected"))?;
        let base = self.base_type(tn, src)?;
        match n.child_by_field_name("declarator") {
            Some(d) => Ok(self.declarator(d, base, src)?.1),
            None => Ok(base),
        }
    }

    /// Bytes of the file-scope type named `name` (a struct, class, union, typedef or CUDA
    /// vector type), as the source front end lays it out; `None` when the file declares no
    /// such type.
    pub fn named_type_size(&mut self, name: &str) -> Option<u64> {
        let ty = self.file_scope_type(name)?;
        Some(self.structs.size(&ty))
    }

    /// The scalars of the file-scope aggregate type `name`, flattened
    /// ([`Structs::scalar_fields`]); `None` when the file declares no such type.
    pub fn named_type_fields(&mut self, name: &str) -> Option<Vec<crate::types::ScalarField>> {
        let ty = self.file_scope_type(name)?;
        Some(self.structs.scalar_fields(&ty, 4096))
    }

    fn file_scope_type(&mut self, name: &str) -> Option<Ty> {
        if let Some(t) = self.typedefs.get(name) {
            Some(t.clone())
        } else if let Some(&i) = self.struct_names.get(name) {
            Some(Ty::Struct(i))
        } else {
            self.structs.vector(name)
        }
    }
}
