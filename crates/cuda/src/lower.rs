//! Lowering of the tree-sitter parse tree to the typed IR ([`crate::ir`]): name resolution,
//! C's conversions, templates (instantiated per argument list), macros, struct layout, and
//! the placement of every variable (register, private/local, shared, constant, global).

use crate::error::{Error, Result};
use crate::ir::{
    addr, BinOp, Builtin, Expr, ExprKind, Func, FuncId, Home, Loc, Param, Slot, Stmt, UnOp,
};
use crate::preprocess::{substitute, Macro, Macros};
use crate::types::{common, promote, Structs, Ty, DOUBLE, FLOAT, INT, LONG, UINT, ULONG};
use std::collections::{HashMap, HashSet};
use tree_sitter::Node;
use warpscope_model::Op;

/// A template argument: a type or an integer constant.
/// Bytes a thread's registers can hold at most: 255 32-bit registers (PG, Technical
/// Specifications, "Maximum number of 32-bit registers per thread", 3.5 and later; fewer
/// before). A per-thread variable larger than this cannot be in registers on any CC.
const MAX_REGISTER_BYTES: u64 = 255 * 4;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum TArg {
    Type(Ty),
    Int(i64),
}

/// Where a named variable lives.
#[derive(Clone, Debug)]
enum VarHome {
    Reg(Slot),
    Private(u64),
    Shared(u64),
    DynShared,
    Constant(u64),
    Global(usize),
    /// A compile-time constant (template integer parameter, `const int N = 32;`).
    Const(u64),
}

#[derive(Clone, Debug)]
struct Var {
    ty: Ty,
    home: VarHome,
    read_only: bool,
}

/// An lvalue: a register variable or a typed address.
#[derive(Clone, Debug)]
enum Place {
    Reg(Slot, Ty),
    Mem { addr: Expr, ty: Ty, read_only: bool },
}

impl Place {
    fn ty(&self) -> &Ty {
        match self {
            Place::Reg(_, t) => t,
            Place::Mem { ty, .. } => ty,
        }
    }
}

/// A memory access in the source: where it is and what it does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Site {
    pub loc: Loc,
    /// The expression's source text, whitespace collapsed.
    pub text: String,
    pub op: Op,
    /// Goes through the read-only path (`__ldg`, `const __restrict__`).
    pub read_only: bool,
}

/// A global-memory allocation: a kernel pointer parameter or a `__device__` variable.
#[derive(Clone, Debug)]
pub struct AllocInfo {
    pub name: String,
    /// Bytes, when known (`__device__` arrays, `--alloc`).
    pub size: Option<u64>,
    /// Element size of the pointer parameter (for `--alloc NAME=ELEMENTS`).
    pub elem_size: u64,
    /// Initial contents (from an initializer), else zeros.
    pub init: Vec<u8>,
}

/// A per-thread array placed in local memory, and why.
#[derive(Clone, Debug)]
pub struct LocalArray {
    pub name: String,
    pub loc: Loc,
    /// Byte range in the thread's private area.
    pub start: u64,
    pub end: u64,
    pub reason: String,
}

struct FnDef<'t> {
    node: Node<'t>,
    tparams: Vec<(String, bool)>, // (name, is_type)
    is_global: bool,
}

#[derive(Default)]
struct FnState {
    scopes: Vec<HashMap<String, Var>>,
    tenv: HashMap<String, TArg>,
    ret: Option<Ty>,
    addr_taken: HashSet<String>,
    /// Statements and expressions being lowered inside one another in this function.
    depth: usize,
}

/// Deepest nesting of statements and expressions inside one function that the front end
/// accepts; deeper code is refused with an error rather than risking the stack.
pub const MAX_NESTING: usize = 512;

/// Bytes of local memory one thread may use: 512 KiB on CC 2.0 and later (16 KB on 1.x)
/// [CUDA C++ Programming Guide, "Technical Specifications per Compute Capability"].
pub const MAX_LOCAL_BYTES: u64 = 512 * 1024;

/// Longest chain of `__device__` calls (kernel → f → g → …) the front end accepts.
pub const MAX_CALL_DEPTH: usize = 128;

/// Bytes of stack kept free before a recursive step grows the stack onto the heap.
const STACK_RED_ZONE: usize = 256 * 1024;
/// Size of each stack segment added when the red zone is reached.
const STACK_SEGMENT: usize = 8 * 1024 * 1024;

/// Runs `f` with at least [`STACK_RED_ZONE`] bytes of stack, growing it if needed: lowering
/// and evaluation recurse over the syntax tree.
pub(crate) fn with_stack<R>(f: impl FnOnce() -> R) -> R {
    stacker::maybe_grow(STACK_RED_ZONE, STACK_SEGMENT, f)
}

/// Everything lowered for one kernel instance.
pub struct Lowered {
    pub funcs: Vec<Func>,
    pub kernel: FuncId,
    pub structs: Structs,
    pub sites: Vec<Site>,
    pub slots: usize,
    pub private_bytes: u64,
    pub static_shared_bytes: u64,
    pub constant: Vec<u8>,
    pub allocs: Vec<AllocInfo>,
    /// For each kernel parameter that is a pointer: its allocation index.
    pub param_allocs: Vec<Option<usize>>,
    pub local_arrays: Vec<LocalArray>,
}

pub struct Lowerer<'t> {
    file: String,
    src: &'t str,
    macros: Macros,
    aligns: Vec<(usize, u64)>,
    pub structs: Structs,
    struct_names: HashMap<String, usize>,
    typedefs: HashMap<String, Ty>,
    globals: HashMap<String, Var>,
    fns: HashMap<String, Vec<FnDef<'t>>>,
    funcs: Vec<Func>,
    func_keys: HashMap<(String, Vec<TArg>), FuncId>,
    in_progress: HashSet<(String, Vec<TArg>)>,
    st: FnState,
    sites: Vec<Site>,
    site_keys: HashMap<(Loc, Op, String), usize>,
    slots: usize,
    private_bytes: u64,
    shared_bytes: u64,
    constant: Vec<u8>,
    allocs: Vec<AllocInfo>,
    local_arrays: Vec<LocalArray>,
    /// Set while lowering a macro expansion: every node takes the use site's position/text.
    macro_site: Option<(Loc, String)>,
    macro_depth: usize,
}

fn loc_of(n: Node) -> Loc {
    let p = n.start_position();
    Loc {
        line: p.row as u32 + 1,
        col: p.column as u32 + 1,
    }
}

fn text<'s>(n: Node, src: &'s str) -> &'s str {
    &src[n.byte_range()]
}

fn named_children<'a>(n: Node<'a>) -> Vec<Node<'a>> {
    let mut c = n.walk();
    n.named_children(&mut c)
        .filter(|c| c.kind() != "comment")
        .collect()
}

fn all_children<'a>(n: Node<'a>) -> Vec<Node<'a>> {
    let mut c = n.walk();
    n.children(&mut c).collect()
}

fn has_token(n: Node, tok: &str) -> bool {
    all_children(n)
        .iter()
        .any(|c| !c.is_named() && c.kind() == tok)
        || all_children(n).iter().any(|c| {
            matches!(c.kind(), "type_qualifier" | "storage_class_specifier")
                && all_children(*c).iter().any(|d| d.kind() == tok)
        })
}

fn e(kind: ExprKind, ty: Ty, loc: Loc) -> Expr {
    Expr { kind, ty, loc }
}

/// Bytes of `__constant__` memory a module may declare: 64 KB on every compute capability
/// [CUDA C++ Programming Guide, "Technical Specifications per Compute Capability"].
pub const CONSTANT_MEMORY_BYTES: u64 = 64 * 1024;

/// Encodes an integer constant as values of type `ty` are held.
pub fn encode_int(v: i128, ty: &Ty) -> u64 {
    match ty {
        Ty::Float(_) => (v as f64).to_bits(),
        Ty::Bool => (v != 0) as u64,
        Ty::Int { bytes, signed } => crate::value::canon(v as u64, *bytes, *signed),
        _ => v as u64,
    }
}

impl<'t> Lowerer<'t> {
    /// Collects the file-scope items of `root`: macros, structs, typedefs, variables and
    /// functions (lowered later, on demand).
    pub fn new(
        file: &str,
        src: &'t str,
        root: Node<'t>,
        macros: Macros,
        aligns: Vec<(usize, u64)>,
    ) -> Result<Self> {
        let mut l = Lowerer {
            file: file.to_string(),
            src,
            macros,
            aligns,
            structs: Structs::default(),
            struct_names: HashMap::new(),
            typedefs: HashMap::new(),
            globals: HashMap::new(),
            fns: HashMap::new(),
            funcs: Vec::new(),
            func_keys: HashMap::new(),
            in_progress: HashSet::new(),
            st: FnState::default(),
            sites: Vec::new(),
            site_keys: HashMap::new(),
            slots: 0,
            private_bytes: 0,
            shared_bytes: 0,
            constant: Vec::new(),
            allocs: Vec::new(),
            local_arrays: Vec::new(),
            macro_site: None,
            macro_depth: 0,
        };
        l.collect(root, None)?;
        Ok(l)
    }

    fn err_at(&self, n: Node, msg: impl Into<String>) -> Error {
        Error::Semantic {
            file: self.file.clone(),
            loc: self.loc(n),
            msg: msg.into(),
        }
    }
    fn unsupported(&self, n: Node, what: impl Into<String>) -> Error {
        Error::Unsupported {
            file: self.file.clone(),
            loc: self.loc(n),
            what: what.into(),
        }
    }
    fn loc(&self, n: Node) -> Loc {
        self.macro_site
            .as_ref()
            .map(|m| m.0)
            .unwrap_or_else(|| loc_of(n))
    }

    fn collect(&mut self, n: Node<'t>, tparams: Option<Node<'t>>) -> Result<()> {
        for c in named_children(n) {
            match c.kind() {
                "preproc_def" | "preproc_function_def" => self.define(c)?,
                "preproc_ifdef" | "preproc_if" | "preproc_else" | "preproc_elif"
                | "preproc_elifdef" => {
                    if let Some(branch) = self.preproc_branch(c)? {
                        self.collect(branch, None)?;
                    }
                }
                "preproc_include"
                | "preproc_call"
                | "comment"
                | "expression_statement"
                | "template_instantiation" => {}
                "function_definition" => self.add_fn(c, tparams),
                "template_declaration" => {
                    let params = c.child_by_field_name("parameters");
                    for d in named_children(c) {
                        match d.kind() {
                            "function_definition" => self.add_fn(d, params),
                            "template_parameter_list" => {}
                            "declaration" => {}
                            other => return Err(self.unsupported(d, format!("template {other}"))),
                        }
                    }
                }
                "declaration" => self.global_decl(c)?,
                "type_definition" => self.typedef(c)?,
                "struct_specifier" | "union_specifier" | "enum_specifier" => {
                    self.base_type(c, self.src)?;
                }
                "linkage_specification" => {
                    if let Some(b) = c.child_by_field_name("body") {
                        if b.kind() == "declaration_list" {
                            self.collect(b, None)?;
                        } else {
                            self.collect(c, None)?;
                        }
                    }
                }
                "string_literal" | "declaration_list" => {
                    if c.kind() == "declaration_list" {
                        self.collect(c, None)?;
                    }
                }
                "namespace_definition" => {
                    if let Some(b) = c.child_by_field_name("body") {
                        self.collect(b, None)?;
                    }
                }
                // A struct definition followed by `;` parses as a declaration; anything else
                // at file scope is host code we do not need.
                _ => {}
            }
        }
        Ok(())
    }

    fn define(&mut self, n: Node) -> Result<()> {
        let name = n
            .child_by_field_name("name")
            .map(|x| text(x, self.src).to_string())
            .unwrap_or_default();
        let body = n
            .child_by_field_name("value")
            .map(|x| text(x, self.src).trim().to_string())
            .unwrap_or_default();
        let params = n.child_by_field_name("parameters").map(|p| {
            named_children(p)
                .iter()
                .map(|x| text(*x, self.src).to_string())
                .collect::<Vec<_>>()
        });
        self.macros.insert(name, Macro { params, body });
        Ok(())
    }

    /// Chooses the branch of `#if`/`#ifdef`/`#ifndef` to keep (a node whose named children are
    /// the kept items), or `None`.
    fn preproc_branch<'n>(&mut self, n: Node<'n>) -> Result<Option<Node<'n>>> {
        let cond = match n.kind() {
            "preproc_ifdef" | "preproc_elifdef" => {
                let name = n
                    .child_by_field_name("name")
                    .map(|x| text(x, self.src))
                    .unwrap_or("");
                let defined = self.macros.contains_key(name);
                let neg = text(n, self.src).trim_start().starts_with("#ifndef")
                    || text(n, self.src).trim_start().starts_with("#elifndef");
                defined != neg
            }
            "preproc_if" | "preproc_elif" => {
                let c = n
                    .child_by_field_name("condition")
                    .ok_or_else(|| self.err_at(n, "#if without a condition"))?;
                self.preproc_cond(c)? != 0
            }
            "preproc_else" => return Ok(Some(n)),
            _ => return Ok(None),
        };
        if cond {
            // Keep the items of this node but not its alternative.
            return Ok(Some(n));
        }
        match n.child_by_field_name("alternative") {
            Some(alt) => self.preproc_branch(alt),
            None => Ok(None),
        }
    }

    fn preproc_cond(&mut self, n: Node) -> Result<i64> {
        Ok(match n.kind() {
            "number_literal" => parse_int_literal(text(n, self.src))
                .map(|(v, _)| v as i64)
                .unwrap_or(0),
            "identifier" => {
                let name = text(n, self.src);
                match self.macros.get(name) {
                    Some(m) => parse_int_literal(m.body.trim())
                        .map(|(v, _)| v as i64)
                        .unwrap_or(0),
                    None => 0,
                }
            }
            "preproc_defined" => {
                let id = named_children(n).into_iter().next();
                id.map(|i| self.macros.contains_key(text(i, self.src)) as i64)
                    .unwrap_or(0)
            }
            "parenthesized_expression" => match named_children(n).into_iter().next() {
                Some(c) => self.preproc_cond(c)?,
                None => 0,
            },
            "unary_expression" => {
                let a = n
                    .child_by_field_name("argument")
                    .map(|a| self.preproc_cond(a))
                    .transpose()?
                    .unwrap_or(0);
                match n.child_by_field_name("operator").map(|o| o.kind()) {
                    Some("!") => (a == 0) as i64,
                    Some("-") => -a,
                    _ => a,
                }
            }
            "binary_expression" => {
                let a = n
                    .child_by_field_name("left")
                    .map(|a| self.preproc_cond(a))
                    .transpose()?
                    .unwrap_or(0);
                let b = n
                    .child_by_field_name("right")
                    .map(|a| self.preproc_cond(a))
                    .transpose()?
                    .unwrap_or(0);
                match n
                    .child_by_field_name("operator")
                    .map(|o| o.kind())
                    .unwrap_or("")
                {
                    "&&" => (a != 0 && b != 0) as i64,
                    "||" => (a != 0 || b != 0) as i64,
                    "==" => (a == b) as i64,
                    "!=" => (a != b) as i64,
                    "<" => (a < b) as i64,
                    "<=" => (a <= b) as i64,
                    ">" => (a > b) as i64,
                    ">=" => (a >= b) as i64,
                    "+" => a + b,
                    "-" => a - b,
                    "*" => a * b,
                    _ => return Err(self.unsupported(n, "this operator in #if")),
                }
            }
            _ => return Err(self.unsupported(n, format!("#if condition '{}'", text(n, self.src)))),
        })
    }

    fn add_fn(&mut self, n: Node<'t>, tparams: Option<Node<'t>>) {
        let Some(name) = fn_name(n, self.src) else {
            return;
        };
        let is_global = has_token(n, "__global__");
        let tparams = tparams
            .map(|p| {
                named_children(p)
                    .into_iter()
                    .filter_map(|d| {
                        let is_type = matches!(
                            d.kind(),
                            "type_parameter_declaration" | "optional_type_parameter_declaration"
                        );
                        let id = if is_type {
                            named_children(d)
                                .into_iter()
                                .find(|x| x.kind() == "type_identifier")
                        } else {
                            d.child_by_field_name("declarator")
                        };
                        id.map(|i| (text(i, self.src).to_string(), is_type))
                    })
                    .collect()
            })
            .unwrap_or_default();
        self.fns.entry(name).or_default().push(FnDef {
            node: n,
            tparams,
            is_global,
        });
    }

    /// The names of the `__global__` functions, templates with their parameter list.
    pub fn kernel_names(&self) -> Vec<String> {
        let mut v: Vec<String> = self
            .fns
            .iter()
            .flat_map(|(name, defs)| {
                defs.iter().filter(|d| d.is_global).map(move |d| {
                    if d.tparams.is_empty() {
                        name.clone()
                    } else {
                        format!(
                            "{name}<{}>",
                            d.tparams
                                .iter()
                                .map(|p| p.0.as_str())
                                .collect::<Vec<_>>()
                                .join(", ")
                        )
                    }
                })
            })
            .collect();
        v.sort();
        v
    }

    fn typedef(&mut self, n: Node) -> Result<()> {
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

    fn global_decl(&mut self, n: Node) -> Result<()> {
        let src = self.src;
        let Some(tn) = n.child_by_field_name("type") else {
            return Ok(());
        };
        let base = self.base_type(tn, src)?;
        let is_const_mem = has_token(n, "__constant__");
        let is_device = has_token(n, "__device__");
        let is_shared = has_token(n, "__shared__");
        let is_const = has_token(n, "const") || has_token(n, "constexpr");
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
                    self.constant[off as usize..(off + size) as usize].copy_from_slice(&bytes);
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
                let Some(iv) = init else { continue };
                let ex = self.rvalue(iv, src)?;
                let ex = self.convert(ex, &ty, iv)?;
                match const_eval(&ex) {
                    Some(v) => VarHome::Const(v),
                    None => continue,
                }
            } else {
                // Host variables are not visible to device code.
                continue;
            };
            self.globals.insert(
                name,
                Var {
                    ty,
                    home,
                    read_only: false,
                },
            );
        }
        Ok(())
    }

    /// `T a[] = {…}` takes its size from the initializer.
    fn complete_array(ty: Ty, init: Option<Node>) -> Ty {
        match (&ty, init) {
            (Ty::Array(el, 0), Some(iv)) if iv.kind() == "initializer_list" => {
                Ty::Array(el.clone(), named_children(iv).len() as u64)
            }
            _ => ty,
        }
    }

    /// The bytes of a constant initializer (`{1.0f, 2.0f}`, nested lists, scalars).
    fn const_init_bytes(&mut self, n: Node, ty: &Ty, src: &str) -> Result<Vec<u8>> {
        let size = self.structs.size(ty) as usize;
        let mut out = vec![0u8; size];
        let items = self.init_items(n, ty, 0, src)?;
        for (off, ex) in items {
            let v = const_eval(&ex)
                .ok_or_else(|| self.err_at(n, "this initializer is not a constant"))?;
            let w = self.structs.size(&ex.ty) as usize;
            let bytes = crate::value::to_bytes(v, &ex.ty);
            out[off as usize..off as usize + w].copy_from_slice(&bytes[..w]);
        }
        Ok(out)
    }

    /// Flattens an initializer into (byte offset, scalar expression converted to its member's
    /// type) pairs.
    fn init_items(&mut self, n: Node, ty: &Ty, base: u64, src: &str) -> Result<Vec<(u64, Expr)>> {
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

    fn base_type(&mut self, n: Node, src: &str) -> Result<Ty> {
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
            "struct_specifier" => self.struct_type(n, src),
            "union_specifier" | "enum_specifier" | "class_specifier" => {
                Err(self.unsupported(n, n.kind().replace("_specifier", "")))
            }
            "template_type" => {
                Err(self.unsupported(n, format!("template type '{}'", text(n, src))))
            }
            "qualified_identifier" => {
                Err(self.unsupported(n, format!("qualified name '{}'", text(n, src))))
            }
            "placeholder_type_specifier" | "auto" => {
                Err(self.unsupported(n, "auto; write the type"))
            }
            other => Err(self.unsupported(n, format!("type {other} '{}'", text(n, src)))),
        }
    }

    fn named_type(&mut self, name: &str, n: Node) -> Result<Ty> {
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
            "size_t" | "uint64_t" | "uintptr_t" | "ulong" => ULONG,
            "float" => FLOAT,
            "double" => DOUBLE,
            "__half" | "half" => Ty::Float(2),
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
                if let Some(m) = self.macros.get(name).cloned() {
                    if m.params.is_none() && self.macro_depth < 32 {
                        let snippet = format!("{} __warpscope_v;", m.body);
                        return self.with_snippet(&snippet, n, String::new(), |l, root, s| {
                            let decl = named_children(root).into_iter().next();
                            let tn = decl.and_then(|d| d.child_by_field_name("type"));
                            match tn {
                                Some(tn) => l.base_type(tn, s),
                                None => {
                                    Err(l.err_at(n, format!("macro {name} does not name a type")))
                                }
                            }
                        });
                    }
                }
                return Err(self.err_at(n, format!("unknown type '{name}'")));
            }
        })
    }

    fn struct_type(&mut self, n: Node, src: &str) -> Result<Ty> {
        let name = n
            .child_by_field_name("name")
            .map(|x| text(x, src).to_string());
        let Some(body) = n.child_by_field_name("body") else {
            return match name.as_deref().and_then(|nm| self.struct_names.get(nm)) {
                Some(&i) => Ok(Ty::Struct(i)),
                None => {
                    Err(self.err_at(n, format!("unknown struct '{}'", name.unwrap_or_default())))
                }
            };
        };
        let mut fields = Vec::new();
        for f in named_children(body) {
            if f.kind() != "field_declaration" {
                if f.kind() == "comment" {
                    continue;
                }
                return Err(self.unsupported(f, format!("struct member '{}'", text(f, src))));
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
        if let Some(nm) = name {
            self.struct_names.insert(nm, idx);
        }
        Ok(Ty::Struct(idx))
    }

    /// Applies a declarator to a base type: returns the declared name and full type.
    fn declarator(&mut self, n: Node, base: Ty, src: &str) -> Result<(String, Ty)> {
        self.nested(n, |l| l.declarator_inner(n, base, src))
    }

    fn declarator_inner(&mut self, n: Node, base: Ty, src: &str) -> Result<(String, Ty)> {
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

    fn type_descriptor(&mut self, n: Node, src: &str) -> Result<Ty> {
        let tn = n
            .child_by_field_name("type")
            .ok_or_else(|| self.err_at(n, "type expected"))?;
        let base = self.base_type(tn, src)?;
        match n.child_by_field_name("declarator") {
            Some(d) => Ok(self.declarator(d, base, src)?.1),
            None => Ok(base),
        }
    }

    // ------------------------------------------------------------- functions

    /// Lowers the kernel `name` (with template arguments `targs`) and everything it calls.
    pub fn lower_kernel(mut self, name: &str, targs: Vec<TArg>) -> Result<Lowered> {
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
        if overloads.len() > 1 {
            let sigs: Vec<String> = overloads
                .iter()
                .map(|&n| {
                    let sig = n
                        .child_by_field_name("declarator")
                        .map(|d| {
                            text(d, self.src)
                                .split_whitespace()
                                .collect::<Vec<_>>()
                                .join(" ")
                        })
                        .unwrap_or_else(|| name.to_string());
                    let at = loc_of(n);
                    format!("{sig} at {}:{}:{}", self.file, at.line, at.col)
                })
                .collect();
            return Err(Error::Argument(format!(
                "{} kernels are named '{name}': {}. The source path picks a kernel by its name alone: rename all but one (e.g. {name}_f32), or keep one with #if/-D",
                overloads.len(),
                sigs.join("; ")
            )));
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

    fn template_args(&mut self, list: Node, src: &str) -> Result<Vec<TArg>> {
        let mut out = Vec::new();
        for a in named_children(list) {
            if a.kind() == "type_descriptor" {
                // `N` alone parses as a type; an integer template parameter or macro wins.
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

    fn lookup_value(&self, name: &str) -> Option<()> {
        if matches!(self.st.tenv.get(name), Some(TArg::Int(_))) || self.globals.contains_key(name) {
            return Some(());
        }
        self.macros
            .get(name)
            .filter(|m| m.params.is_none() && parse_int_literal(m.body.trim()).is_some())
            .map(|_| ())
    }

    fn instantiate(
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
        // Choose the overload by parameter count.
        let pick = defs.iter().find(|(node, _, is_global)| match arg_tys {
            Some(a) => param_count(*node, self.src) == a.len(),
            // No call: the kernel itself, never a __device__ function of the same name.
            None => *is_global,
        });
        let Some((node, tparams, _)) = pick.cloned() else {
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
        let key = (name.to_string(), targs.clone());
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

    fn deduce(
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

    fn lower_fn(&mut self, name: &str, node: Node<'t>) -> Result<Func> {
        let src = self.src;
        let tn = node
            .child_by_field_name("type")
            .ok_or_else(|| self.err_at(node, "function without a return type"))?;
        let ret = self.base_type(tn, src)?;
        let decl = node
            .child_by_field_name("declarator")
            .ok_or_else(|| self.err_at(node, "function without a declarator"))?;
        let (fdecl, ret) = match decl.kind() {
            "function_declarator" => (decl, ret),
            "pointer_declarator" => (
                decl.child_by_field_name("declarator")
                    .filter(|d| d.kind() == "function_declarator")
                    .ok_or_else(|| self.unsupported(decl, "this function declarator"))?,
                ret.ptr(),
            ),
            _ => return Err(self.unsupported(decl, "this function declarator")),
        };
        let body = node
            .child_by_field_name("body")
            .ok_or_else(|| self.err_at(node, "function without a body"))?;
        self.st.ret = Some(ret.clone());
        self.st.scopes.push(HashMap::new());
        self.st.addr_taken = addr_taken_names(body, src);
        let mut params = Vec::new();
        if let Some(plist) = fdecl.child_by_field_name("parameters") {
            for p in named_children(plist) {
                if p.kind() == "variadic_parameter" {
                    return Err(self.unsupported(p, "variadic functions"));
                }
                let Some(ptn) = p.child_by_field_name("type") else {
                    continue;
                };
                let base = self.base_type(ptn, src)?;
                let (pname, mut ty) = match p.child_by_field_name("declarator") {
                    Some(d) => self.declarator(d, base, src)?,
                    None => (String::new(), base),
                };
                if ty == Ty::Void {
                    continue;
                }
                if let Ty::Array(el, _) = ty {
                    ty = Ty::Ptr(el);
                }
                let t = text(p, src);
                let read_only = ty.is_ptr() && t.contains("const") && t.contains("__restrict__");
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
                });
            }
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

    fn new_slot(&mut self) -> Slot {
        self.slots += 1;
        self.slots - 1
    }

    /// Places a per-thread variable in local memory; refuses one that takes the thread past
    /// [`MAX_LOCAL_BYTES`].
    fn alloc_private(&mut self, ty: &Ty, n: Node, name: &str) -> Result<u64> {
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

    fn bind(&mut self, name: &str, v: Var) {
        if let Some(s) = self.st.scopes.last_mut() {
            s.insert(name.to_string(), v);
        }
    }

    fn lookup(&self, name: &str) -> Option<Var> {
        for s in self.st.scopes.iter().rev() {
            if let Some(v) = s.get(name) {
                return Some(v.clone());
            }
        }
        self.globals.get(name).cloned()
    }

    // ------------------------------------------------------------ statements

    fn stmt(&mut self, n: Node, src: &str) -> Result<Stmt> {
        self.nested(n, |l| l.stmt_inner(n, src))
    }

    /// Runs one level of nesting: refuses code nested deeper than [`MAX_NESTING`].
    fn nested<R>(&mut self, n: Node, f: impl FnOnce(&mut Self) -> Result<R>) -> Result<R> {
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

    fn stmt_inner(&mut self, n: Node, src: &str) -> Result<Stmt> {
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
                    if is_call_to(x, "__syncthreads", src) {
                        Stmt::Sync
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
                let body = self.stmt(
                    n.child_by_field_name("body")
                        .ok_or_else(|| self.err_at(n, "for without a body"))?,
                    src,
                )?;
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
            "preproc_def" | "preproc_function_def" => {
                self.define(n)?;
                Stmt::Block(vec![])
            }
            "preproc_ifdef" | "preproc_if" | "preproc_else" | "preproc_elif" => {
                let mut v = Vec::new();
                if let Some(b) = self.preproc_branch(n)? {
                    for c in named_children(b) {
                        if matches!(
                            c.kind(),
                            "identifier"
                                | "preproc_defined"
                                | "preproc_else"
                                | "preproc_elif"
                                | "preproc_elifdef"
                        ) || Some(c.id()) == b.child_by_field_name("condition").map(|x| x.id())
                            || Some(c.id()) == b.child_by_field_name("name").map(|x| x.id())
                        {
                            continue;
                        }
                        v.push(self.stmt(c, src)?);
                    }
                }
                Stmt::Block(v)
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

    fn condition(&mut self, c: Node, src: &str) -> Result<Expr> {
        let v = self.condition_value(c, src)?;
        self.to_bool(v, c)
    }

    fn condition_value(&mut self, c: Node, src: &str) -> Result<Expr> {
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

    fn to_bool_node(&mut self, n: Node, src: &str) -> Result<Expr> {
        let v = self.rvalue(n, src)?;
        self.to_bool(v, n)
    }

    fn to_bool(&mut self, v: Expr, n: Node) -> Result<Expr> {
        if !v.ty.is_scalar() {
            return Err(self.err_at(n, "condition is not a number or pointer"));
        }
        let loc = v.loc;
        Ok(e(ExprKind::Cast(Box::new(v)), Ty::Bool, loc))
    }

    fn local_decl(&mut self, n: Node, src: &str) -> Result<Stmt> {
        let tn = n
            .child_by_field_name("type")
            .ok_or_else(|| self.err_at(n, "declaration without a type"))?;
        let base = self.base_type(tn, src)?;
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
                        let ex = self.rvalue(iv, src)?;
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
                            Some(self.rvalue(iv, src)?)
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
                    let ex = self.rvalue(iv, src)?;
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

    fn offset_addr(&self, base: Expr, off: u64, to: Ty) -> Expr {
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

    fn site(&mut self, loc: Loc, txt: String, op: Op, read_only: bool) -> usize {
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

    fn site_text(&self, n: Node, src: &str) -> String {
        match &self.macro_site {
            Some((_, t)) => t.clone(),
            None => text(n, src)
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" "),
        }
    }

    // ----------------------------------------------------------- expressions

    /// The value of an expression: lvalues are loaded, arrays decay to pointers.
    fn rvalue(&mut self, n: Node, src: &str) -> Result<Expr> {
        self.nested(n, |l| l.rvalue_inner(n, src))
    }

    fn rvalue_inner(&mut self, n: Node, src: &str) -> Result<Expr> {
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
                if self.lookup(name).is_none() {
                    if let Some(m) = self.macros.get(name).cloned() {
                        if m.params.is_none() {
                            return self.expand_macro(n, &m.body, src);
                        }
                    }
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
                            && self.lookup(text(v, src)).is_none()
                            && !self.macros.contains_key(text(v, src));
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
            "qualified_identifier" => {
                Err(self.unsupported(n, format!("qualified name '{}'", text(n, src))))
            }
            "ERROR" => Err(Error::Syntax {
                file: self.file.clone(),
                loc,
                msg: format!("cannot parse '{}'", text(n, src)),
            }),
            other => Err(self.unsupported(n, format!("expression {other} '{}'", text(n, src)))),
        }
    }

    fn field(&mut self, si: usize, name: &str, n: Node) -> Result<(u64, Ty)> {
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

    fn try_place(&mut self, n: Node, src: &str) -> Result<Option<Place>> {
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
            "identifier" | "subscript_expression" => self.place(n, src).map(Some),
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

    fn is_read_only_ptr(&self, p: &Expr) -> bool {
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

    fn place(&mut self, n: Node, src: &str) -> Result<Place> {
        self.nested(n, |l| l.place_inner(n, src))
    }

    fn place_inner(&mut self, n: Node, src: &str) -> Result<Place> {
        let loc = self.loc(n);
        match n.kind() {
            "identifier" => {
                let name = text(n, src);
                let Some(v) = self.lookup(name) else {
                    if let Some(m) = self.macros.get(name).cloned() {
                        if m.params.is_none() {
                            let body = m.body.clone();
                            return self
                                .with_macro_site(n, src, &body, |l, root, s| l.place(root, s));
                        }
                    }
                    return Err(self.err_at(n, format!("'{name}' is not declared")));
                };
                let ty = v.ty.clone();
                let a = |k: ExprKind| e(k, ty.clone().ptr(), loc);
                Ok(match v.home {
                    VarHome::Reg(s) => Place::Reg(s, v.ty),
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
                            if const_eval(&idx).is_none() {
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
            "call_expression" => {
                // A macro that expands to an lvalue: AT(a, i) = v.
                if let Some(f) = n.child_by_field_name("function") {
                    let name = text(f, src);
                    if let Some(m) = self.macros.get(name).cloned() {
                        if let Some(params) = m.params.clone() {
                            let args = self.macro_args(n, src)?;
                            let body = substitute(&m.body, &params, &args)
                                .map_err(|w| self.unsupported(n, w))?;
                            return self
                                .with_macro_site(n, src, &body, |l, root, s| l.place(root, s));
                        }
                    }
                }
                Err(self.err_at(n, "a function call is not an lvalue"))
            }
            _ => Err(self.err_at(n, format!("'{}' is not an lvalue", text(n, src)))),
        }
    }

    /// Records that the per-thread array at private offset `off` lives in local memory.
    fn mark_local(&mut self, off: u64, loc: Loc, why: &str) {
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

    fn load(&mut self, p: Place, n: Node, src: &str) -> Result<Expr> {
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

    fn store(&mut self, p: Place, v: Expr, n: Node, src: &str) -> Expr {
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
    fn compound(
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

    fn arith(&mut self, op: BinOp, a: Expr, b: Expr, ty: Ty, n: Node) -> Result<Expr> {
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

    fn binary(&mut self, n: Node, src: &str) -> Result<Expr> {
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
    fn convert(&mut self, v: Expr, to: &Ty, n: Node) -> Result<Expr> {
        if &v.ty == to {
            return Ok(v);
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
    fn cast(&mut self, v: Expr, to: &Ty, n: Node) -> Result<Expr> {
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

    // ----------------------------------------------------------------- calls

    fn macro_args(&mut self, n: Node, src: &str) -> Result<Vec<String>> {
        let args = n
            .child_by_field_name("arguments")
            .ok_or_else(|| self.err_at(n, "call without arguments"))?;
        Ok(named_children(args)
            .into_iter()
            .map(|a| text(a, src).to_string())
            .collect())
    }

    fn call(&mut self, n: Node, src: &str) -> Result<Expr> {
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
        // Function-like macros.
        if targ_node.is_none() && self.lookup(&fname).is_none() {
            if let Some(m) = self.macros.get(&fname).cloned() {
                if let Some(params) = m.params {
                    let args = self.macro_args(n, src)?;
                    if args.len() != params.len() {
                        return Err(self.err_at(
                            n,
                            format!(
                                "macro {fname} takes {} arguments, {} given",
                                params.len(),
                                args.len()
                            ),
                        ));
                    }
                    let body =
                        substitute(&m.body, &params, &args).map_err(|w| self.unsupported(n, w))?;
                    return self.expand_macro(n, &body, src);
                }
            }
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

    fn builtin_call(&mut self, name: &str, mut args: Vec<Expr>, n: Node) -> Result<Expr> {
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

    // ---------------------------------------------------------------- macros

    fn expand_macro(&mut self, n: Node, body: &str, src: &str) -> Result<Expr> {
        self.with_macro_site(n, src, body, |l, root, s| l.rvalue(root, s))
    }

    /// Lowers `body` (a macro's expansion, an expression) as if it stood at `n`.
    fn with_macro_site<R>(
        &mut self,
        n: Node,
        src: &str,
        body: &str,
        f: impl FnOnce(&mut Self, Node, &str) -> Result<R>,
    ) -> Result<R> {
        if self.macro_depth >= 32 {
            return Err(self.err_at(n, "macro expansion nested too deeply (recursive macro?)"));
        }
        let snippet = format!("void __warpscope_m() {{ ({body}); }}");
        let site_text = text(n, src)
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        self.with_snippet(&snippet, n, site_text, |l, root, s| {
            let expr = find_kind(root, "parenthesized_expression")
                .and_then(|p| named_children(p).into_iter().next())
                .ok_or_else(|| {
                    l.unsupported(
                        n,
                        format!("macro body '{body}' (only expression macros are supported)"),
                    )
                })?;
            f(l, expr, s)
        })
    }

    /// Lowers a parsed `snippet` (a macro's expansion) as if it stood at `at`: every node in
    /// it takes the position of the outermost use and `site_text` as its text.
    fn with_snippet<R>(
        &mut self,
        snippet: &str,
        at: Node,
        site_text: String,
        f: impl FnOnce(&mut Self, Node, &str) -> Result<R>,
    ) -> Result<R> {
        let outer = self.macro_site.clone();
        if outer.is_none() {
            self.macro_site = Some((loc_of(at), site_text));
        }
        self.macro_depth += 1;
        let r = self.with_snippet_root(snippet, f);
        self.macro_depth -= 1;
        self.macro_site = outer;
        r
    }

    fn with_snippet_root<R>(
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
            .ok_or_else(|| Error::Argument("the parser gave up on a macro expansion".into()))?;
        let root = tree.root_node();
        if root.has_error() {
            let loc = self.macro_site.as_ref().map(|m| m.0).unwrap_or_default();
            return Err(Error::Syntax {
                file: self.file.clone(),
                loc,
                msg: format!("cannot parse the expansion '{snippet}'"),
            });
        }
        f(self, root, snippet)
    }
}

fn builtin_var(name: &str) -> Option<&'static str> {
    match name {
        "threadIdx" => Some("threadIdx"),
        "blockIdx" => Some("blockIdx"),
        "blockDim" => Some("blockDim"),
        "gridDim" => Some("gridDim"),
        _ => None,
    }
}

fn is_call_to(n: Node, name: &str, src: &str) -> bool {
    n.kind() == "call_expression"
        && n.child_by_field_name("function")
            .is_some_and(|f| text(f, src) == name)
}

fn find_kind<'a>(n: Node<'a>, kind: &str) -> Option<Node<'a>> {
    if n.kind() == kind {
        return Some(n);
    }
    for c in all_children(n) {
        if let Some(x) = find_kind(c, kind) {
            return Some(x);
        }
    }
    None
}

fn fn_name(n: Node, src: &str) -> Option<String> {
    let mut d = n.child_by_field_name("declarator")?;
    loop {
        match d.kind() {
            "function_declarator" => {
                let inner = d.child_by_field_name("declarator")?;
                return Some(text(inner, src).to_string());
            }
            _ => d = d.child_by_field_name("declarator")?,
        }
    }
}

fn param_count(n: Node, src: &str) -> usize {
    let mut d = n.child_by_field_name("declarator");
    while let Some(x) = d {
        if x.kind() == "function_declarator" {
            return x
                .child_by_field_name("parameters")
                .map(|p| {
                    named_children(p)
                        .into_iter()
                        .filter(|c| c.kind() == "parameter_declaration" && !is_void_param(*c, src))
                        .count()
                })
                .unwrap_or(0);
        }
        d = x.child_by_field_name("declarator");
    }
    0
}

/// `f(void)`: a parameter list holding a lone `void`.
fn is_void_param(p: Node, src: &str) -> bool {
    p.child_by_field_name("declarator").is_none()
        && p.child_by_field_name("type")
            .is_some_and(|t| text(t, src) == "void")
}

fn addr_taken_names(body: Node, src: &str) -> HashSet<String> {
    let mut out = HashSet::new();
    let mut stack = vec![body];
    while let Some(n) = stack.pop() {
        if n.kind() == "pointer_expression"
            && n.child_by_field_name("operator").map(|o| o.kind()) == Some("&")
        {
            if let Some(a) = n.child_by_field_name("argument") {
                if a.kind() == "identifier" {
                    out.insert(text(a, src).to_string());
                }
            }
        }
        stack.extend(all_children(n));
    }
    out
}

/// Parses a C integer literal with its type [C11 6.4.4.1]: decimal literals are int, long;
/// hex/octal also unsigned; suffixes u, l, ll.
pub fn parse_int_literal(t: &str) -> Option<(u64, Ty)> {
    if let Some(pos) = t.trim().strip_prefix('-') {
        let (v, ty) = parse_int_literal(pos)?;
        return Some((
            v.wrapping_neg(),
            if ty == INT || ty == LONG { ty } else { ty },
        ));
    }
    let t = t.replace('\'', "");
    let lower = t.to_ascii_lowercase();
    let digits_end = lower.trim_end_matches(['u', 'l']).len();
    let (body, suffix) = lower.split_at(digits_end);
    let (radix, digits) = if let Some(h) = body.strip_prefix("0x") {
        (16, h)
    } else if let Some(b) = body.strip_prefix("0b") {
        (2, b)
    } else if body.len() > 1 && body.starts_with('0') {
        (8, &body[1..])
    } else {
        (10, body)
    };
    if digits.is_empty() || body.contains('.') || (radix != 16 && body.contains('e')) {
        return None;
    }
    let v = u64::from_str_radix(digits, radix).ok()?;
    let unsigned = suffix.contains('u');
    let long = suffix.contains('l');
    let ty = if !long && !unsigned && v <= i32::MAX as u64 {
        INT
    } else if !long && (unsigned || radix != 10) && v <= u32::MAX as u64 {
        UINT
    } else if !unsigned && v <= i64::MAX as u64 {
        LONG
    } else {
        ULONG
    };
    Some((v, ty))
}

pub(crate) fn parse_float_literal(t: &str) -> Option<(f64, Ty)> {
    let lower = t.to_ascii_lowercase();
    if let Some(b) = lower.strip_suffix('f') {
        let v: f32 = b.parse().ok()?;
        return Some((v as f64, FLOAT));
    }
    let b = lower.strip_suffix('l').unwrap_or(&lower);
    Some((b.parse().ok()?, DOUBLE))
}

/// Folds a constant expression; `None` when it depends on run-time values.
pub fn const_eval(x: &Expr) -> Option<u64> {
    use crate::value::{binop_scalar, cast_scalar, unop_scalar};
    match &x.kind {
        ExprKind::Const(v) => Some(*v),
        ExprKind::Cast(a) => Some(cast_scalar(const_eval(a)?, &a.ty, &x.ty)),
        ExprKind::Unary(op, a) => Some(unop_scalar(*op, const_eval(a)?, &x.ty)),
        ExprKind::Binary(op, a, b) => {
            let (av, bv) = (const_eval(a)?, const_eval(b)?);
            binop_scalar(*op, av, bv, &a.ty).ok()
        }
        ExprKind::Cond(c, a, b) => {
            if const_eval(c)? != 0 {
                const_eval(a)
            } else {
                const_eval(b)
            }
        }
        ExprKind::LogicalAnd(a, b) => Some((const_eval(a)? != 0 && const_eval(b)? != 0) as u64),
        ExprKind::LogicalOr(a, b) => Some((const_eval(a)? != 0 || const_eval(b)? != 0) as u64),
        _ => None,
    }
}
