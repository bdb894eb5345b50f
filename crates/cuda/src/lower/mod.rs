//! Lowering of the tree-sitter parse tree to the typed IR ([`crate::ir`]): name resolution,
//! C's conversions, templates (instantiated per argument list), macros, struct layout, and
//! the placement of every variable (register, private/local, shared, constant, global).

use crate::error::{Error, Result};
use crate::ir::{
    addr, BinOp, Builtin, Expr, ExprKind, Func, FuncId, Home, Loc, Param, Slot, Stmt, UnOp,
};
use crate::types::{common, promote, Structs, Ty, DOUBLE, FLOAT, INT, LONG, UINT, ULONG};
use std::collections::{HashMap, HashSet};
use tree_sitter::Node;
use warpscope_model::Op;

mod builtins;
mod call;
mod cg;
mod decl;
mod expr;
mod func;
mod host;
mod literal;
mod methods;
mod ops;
mod place;
mod stmt;
mod texture;
mod unroll;

pub(crate) use host::is_host_function_body;
pub(crate) use literal::parse_float_literal;
pub use literal::{const_eval, parse_int_literal};
pub use texture::TextureRefDecl;

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
    /// A cooperative group (no run-time value).
    Group(cg::Group),
    /// A C++ reference parameter: the register holds the referenced object's address.
    Ref(Slot),
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
    /// An `auto` declaration's initializer, lowered once to learn its type: (node id, value).
    auto_init: Option<(usize, Expr)>,
    /// Induction variables of the enclosing `for` loops nvcc unrolls fully ([`unroll`]).
    unrolled: Vec<Slot>,
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
    /// The file's texture and surface references, in file order.
    pub texture_refs: Vec<TextureRefDecl>,
    /// Per kernel parameter: `Some("cudaTextureObject_t")` or `Some("cudaSurfaceObject_t")`
    /// for a texture or surface object (a 64-bit handle the launch binds with `--texture`).
    pub texture_params: Vec<Option<&'static str>>,
}

pub struct Lowerer<'t> {
    file: String,
    src: &'t str,
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
    /// The node id of the `__global__` overload chosen by signature (`k(float*)`).
    kernel_node: Option<usize>,
    /// The file's syntax tree: member functions are found again from a struct's body range.
    root: Node<'t>,
    /// Per struct index: its body's byte range in the file and the template arguments it
    /// was instantiated with (for its member functions).
    struct_bodies: HashMap<usize, methods::StructBody>,
    /// `template <class T> struct S { … }`: the definition and its parameters.
    struct_templates: HashMap<String, (Node<'t>, Vec<(String, bool)>)>,
    /// `template <> struct S<double> { … }`: the name, argument list and definition.
    struct_specs: Vec<(String, Node<'t>, Node<'t>)>,
    /// Instances of struct templates: (name, arguments) → struct index.
    struct_insts: HashMap<(String, Vec<TArg>), usize>,
    /// The `this` type a member function being lowered takes first.
    pending_this: Option<Ty>,
    /// Functions and member functions with a non-const reference parameter: a local
    /// variable passed to one of them needs an address.
    ref_fns: HashSet<String>,
    /// `texture<…>`/`surface<…>` references of the file.
    texture_refs: Vec<TextureRefDecl>,
    /// Per lowered function name: its parameters declared as texture or surface objects
    /// (name, type name).
    object_params: HashMap<String, Vec<(String, &'static str)>>,
    /// File-scope names device code cannot use, and why (host code the kernel may not need).
    deferred: HashMap<String, host::Deferred>,
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
        aligns: Vec<(usize, u64)>,
    ) -> Result<Self> {
        let mut l = Lowerer {
            file: file.to_string(),
            src,
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
            kernel_node: None,
            root,
            struct_bodies: HashMap::new(),
            struct_templates: HashMap::new(),
            struct_specs: Vec::new(),
            struct_insts: HashMap::new(),
            pending_this: None,
            ref_fns: HashSet::new(),
            texture_refs: Vec::new(),
            object_params: HashMap::new(),
            deferred: HashMap::new(),
        };
        l.collect(root, None)?;
        l.ref_fns = ref_taking_functions(root, src);
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
        loc_of(n)
    }

    fn collect(&mut self, n: Node<'t>, tparams: Option<Node<'t>>) -> Result<()> {
        for c in named_children(n) {
            match c.kind() {
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
                            "struct_specifier" | "class_specifier" => {
                                self.add_struct_template(d, params)
                            }
                            "template_parameter_list" => {}
                            "declaration" => {}
                            other => return Err(self.unsupported(d, format!("template {other}"))),
                        }
                    }
                }
                "declaration" => self.global_decl(c)?,
                // A type the kernel does not use may be host code warpscope cannot read.
                "type_definition" => self.collect_deferring(c, |l| l.typedef(c)),
                "struct_specifier" | "union_specifier" | "enum_specifier" => {
                    self.collect_deferring(c, |l| l.base_type(c, l.src).map(drop))
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
                "declaration_list" => self.collect(c, None)?,
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

    fn add_fn(&mut self, n: Node<'t>, tparams: Option<Node<'t>>) {
        let Some(name) = fn_name(n, self.src) else {
            return;
        };
        let is_global = has_token(n, "__global__");
        let tparams = tparam_list(tparams, self.src);
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
}

/// The (name, is a type) of each parameter of a `template <…>` list.
fn tparam_list(p: Option<Node>, src: &str) -> Vec<(String, bool)> {
    p.map(|p| {
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
                id.map(|i| (text(i, src).to_string(), is_type))
            })
            .collect()
    })
    .unwrap_or_default()
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

/// A declarator's reference: `& r` gives (`r`, true); anything else (itself, false).
fn strip_reference(d: Node) -> (Node, bool) {
    if d.kind() == "reference_declarator" {
        if let Some(inner) = named_children(d).into_iter().next() {
            return (inner, true);
        }
    }
    (d, false)
}

/// A parameter declared `T&` without `const` (a `const T&` is taken by value: the same
/// values are read).
fn is_mutable_reference(p: Node) -> bool {
    p.child_by_field_name("declarator")
        .is_some_and(|d| d.kind() == "reference_declarator")
        && !has_token(p, "const")
}

/// The names of the functions (and member functions) of the file with a non-const
/// reference parameter.
fn ref_taking_functions(root: Node, src: &str) -> HashSet<String> {
    let mut out = HashSet::new();
    let mut stack = vec![root];
    while let Some(n) = stack.pop() {
        if n.kind() == "function_definition" {
            let mut d = n.child_by_field_name("declarator");
            while let Some(x) = d {
                if x.kind() == "function_declarator" {
                    let takes = x
                        .child_by_field_name("parameters")
                        .is_some_and(|ps| named_children(ps).into_iter().any(is_mutable_reference));
                    if let (true, Some(name)) = (takes, x.child_by_field_name("declarator")) {
                        out.insert(text(cg::unqualify(name), src).to_string());
                    }
                    break;
                }
                d = x.child_by_field_name("declarator");
            }
        }
        stack.extend(all_children(n));
    }
    out
}

fn addr_taken_names(body: Node, src: &str, ref_fns: &HashSet<String>) -> HashSet<String> {
    let mut out = HashSet::new();
    let mut stack = vec![body];
    while let Some(n) = stack.pop() {
        if n.kind() == "call_expression" {
            let callee = n.child_by_field_name("function").map(|f| match f.kind() {
                "field_expression" => f.child_by_field_name("field").unwrap_or(f),
                "template_function" => f.child_by_field_name("name").unwrap_or(f),
                _ => cg::unqualify(f),
            });
            if callee.is_some_and(|c| ref_fns.contains(text(c, src))) {
                if let Some(args) = n.child_by_field_name("arguments") {
                    for a in named_children(args) {
                        if a.kind() == "identifier" {
                            out.insert(text(a, src).to_string());
                        }
                    }
                }
            }
        }
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
