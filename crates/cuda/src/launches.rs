//! Kernel launches in host code: every `kernel<<<grid, block[, shared[, stream]]>>>(args)` of a
//! `.cu` file (tree-sitter's `kernel_call_syntax`), with each expression's text and, where it
//! is a compile-time constant, its value.
//!
//! Constants are what a reader of the host code can fold without running it: literals,
//! `#define`s (and `-D`, with `#if`/`#ifdef` branches chosen as the preprocessor would),
//! `const`/`constexpr` and plain variables initialized with a constant and not changed before
//! the launch (no assignment, `++`/`--` or `&` of them earlier in the function, none in an
//! enclosing loop), `dim3 name(a, b, c)`, `dim3 name{…}`, `dim3(a, b)`, their fields, `sizeof`
//! of a built-in type, casts, and integer arithmetic with C's rules (ceil-div `(n + b - 1) /
//! b` included). Anything else (a function call, a value read at run time) is not constant,
//! and the reason says which name made it so.

use crate::error::{Error, Result};
use crate::lower::{parse_float_literal, parse_int_literal};
use crate::preprocess::{blank_attributes, parse_define, substitute, Macro, Macros};
use serde::Serialize;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use tree_sitter::{Node, Parser, Tree};

/// The value of a constant expression.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Value {
    Int(i64),
    Float(f64),
    /// A `dim3`: x, y, z.
    Dim3([u64; 3]),
}

impl Value {
    /// As launch dimensions (an integer `n` is `(n, 1, 1)`); `None` when not all are in
    /// 1 ..= 2³²−1.
    pub fn dims(&self) -> Option<[u32; 3]> {
        let d = match *self {
            Value::Int(n) => [u64::try_from(n).ok()?, 1, 1],
            Value::Dim3(d) => d,
            Value::Float(_) => return None,
        };
        let mut out = [1u32; 3];
        for (o, x) in out.iter_mut().zip(d) {
            *o = u32::try_from(x).ok().filter(|v| *v >= 1)?;
        }
        Some(out)
    }
}

impl std::fmt::Display for Value {
    /// `256`, `2.5`, `(32,8,1)`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Value::Int(n) => write!(f, "{n}"),
            Value::Float(x) => write!(f, "{x:?}"),
            Value::Dim3([x, y, z]) => write!(f, "({x},{y},{z})"),
        }
    }
}

/// One expression of a launch.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LaunchExpr {
    /// As written (whitespace collapsed).
    pub text: String,
    /// Its value when it is a compile-time constant.
    pub value: Option<Value>,
    /// Why it is not one (`` `n` is a parameter of the enclosing function ``), when it is not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
}

/// One argument of a launch and the kernel parameter it is passed to.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LaunchArg {
    #[serde(flatten)]
    pub expr: LaunchExpr,
    /// The kernel parameter at its position, when the kernel's definition is in the file.
    pub param: Option<String>,
    /// Whether that parameter is a pointer (its allocation is warpscope's, not a value).
    pub pointer: Option<bool>,
}

/// One `<<<…>>>` launch.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct HostLaunch {
    /// 0-based, in the order of the file (launches in `#if` branches not taken are left out).
    pub index: usize,
    /// Where the launch starts (1-based line and column).
    pub line: u32,
    pub column: u32,
    /// The kernel as written, template arguments included (`saxpy`, `scale<float>`).
    pub kernel: String,
    /// Blocks per grid (`dim3` or an integer).
    pub grid: LaunchExpr,
    /// Threads per block.
    pub block: LaunchExpr,
    /// Bytes of dynamic shared memory per block, when given.
    pub shared_bytes: Option<LaunchExpr>,
    /// The stream, when given (text only).
    pub stream: Option<String>,
    pub args: Vec<LaunchArg>,
}

/// Every `<<<…>>>` launch of `text` (the contents of `file`) with `defines` (`-D NAME[=VALUE]`).
/// Parts of the file that do not parse are skipped; launches elsewhere are still found.
///
/// Errors: [`Error::Argument`] for a malformed define or a grammar that cannot load.
pub fn host_launches(file: &str, text: &str, defines: &[String]) -> Result<Vec<HostLaunch>> {
    let mut macros = Macros::new();
    for d in defines {
        let (n, m) = parse_define(d)
            .ok_or_else(|| Error::Argument(format!("-D {d}: expected NAME or NAME=VALUE")))?;
        macros.insert(n, m);
    }
    let mut kernels = HashMap::new();
    // Kernels and macros of the headers the file includes with `#include "…"` (a main.cu
    // whose kernels live in a .cuh): their parameters name the launch's arguments.
    let mut seen = HashSet::new();
    absorb_includes(
        Path::new(file),
        text,
        0,
        &mut seen,
        &mut kernels,
        &mut macros,
    );
    let (blanked, _) = blank_attributes(text);
    let tree = parse(&blanked).ok_or_else(|| {
        Error::Argument(format!(
            "{file}: the parser gave up (badly broken or very deeply nested code); check the file compiles"
        ))
    })?;
    let root = tree.root_node();
    check_tree_depth(file, root, &blanked)?;
    collect_kernels(root, &blanked, &mut kernels);
    let mut w = Walker {
        src: &blanked,
        macros,
        scopes: vec![HashMap::new()],
        launches: Vec::new(),
        kernels: &kernels,
    };
    w.walk(root);
    Ok(w.launches)
}

/// Headers deeper than this in a chain of `#include "…"` are not read for launches.
const MAX_INCLUDE_DEPTH: usize = 16;
/// Headers read for one file's launches, at most (each once).
const MAX_INCLUDED_FILES: usize = 256;
/// Bytes of one header read for launches, at most.
const MAX_HEADER_BYTES: u64 = 16 << 20;

/// Reads the headers `text` (the contents of `file`) includes with `#include "NAME"`, found
/// next to the including file, depth first: each one's `__global__` declarations go into
/// `kernels` and its top-level `#define`s into `macros`. A header that cannot be found or
/// read is skipped (nvcc reports it), as is one already read.
fn absorb_includes(
    file: &Path,
    text: &str,
    depth: usize,
    seen: &mut HashSet<PathBuf>,
    kernels: &mut HashMap<String, Signature>,
    macros: &mut Macros,
) {
    if depth >= MAX_INCLUDE_DEPTH {
        return;
    }
    let dir = file.parent().unwrap_or(Path::new(""));
    for line in text.lines() {
        let Some(rest) = line.trim_start().strip_prefix('#') else {
            continue;
        };
        let Some(rest) = rest.trim_start().strip_prefix("include") else {
            continue;
        };
        let Some(name) = rest
            .trim()
            .strip_prefix('"')
            .and_then(|r| r.split('"').next())
        else {
            continue;
        };
        let path = dir.join(name);
        if seen.len() >= MAX_INCLUDED_FILES || !path.is_file() {
            continue;
        }
        let key = path.canonicalize().unwrap_or_else(|_| path.clone());
        if !seen.insert(key) {
            continue;
        }
        let small = std::fs::metadata(&path).is_ok_and(|m| m.len() <= MAX_HEADER_BYTES);
        let Some(header) = small.then(|| std::fs::read_to_string(&path).ok()).flatten() else {
            continue;
        };
        absorb_includes(&path, &header, depth + 1, seen, kernels, macros);
        let (blanked, _) = blank_attributes(&header);
        let Some(tree) = parse(&blanked) else {
            continue;
        };
        let root = tree.root_node();
        // A header too deeply nested to walk is skipped, as an unreadable one is.
        if check_tree_depth(&path.to_string_lossy(), root, &blanked).is_err() {
            continue;
        }
        collect_kernels(root, &blanked, kernels);
        let none = HashMap::new();
        let mut w = Walker {
            src: &blanked,
            macros: std::mem::take(macros),
            scopes: vec![HashMap::new()],
            launches: Vec::new(),
            kernels: &none,
        };
        for n in named(root) {
            if matches!(n.kind(), "preproc_def" | "preproc_function_def") {
                w.define(n);
            }
        }
        *macros = w.macros;
    }
}

/// Parses `text`, bounded as the source front end's parse is ([`crate::parse_bounded`]):
/// `None` if the grammar does not load or the parser gives up.
fn parse(text: &str) -> Option<Tree> {
    let mut parser = Parser::new();
    parser
        .set_language(&tree_sitter_cuda::LANGUAGE.into())
        .ok()?;
    crate::parse_bounded(&mut parser, text)
}

/// Macro bodies one launch expression's outermost macro may evaluate, nested uses included:
/// real launch macros (`#define BLOCKS ((N + THREADS - 1) / THREADS)`) use a handful, and each
/// use is a parse.
pub const MAX_MACRO_USES: usize = 4_096;

/// Syntax-tree levels the host-code walk descends at most: its recursion (statements,
/// expressions, `#if` blocks) must fit the stack. Brackets nested 512 deep, the source front
/// end's limit, make about 1,000 levels.
const MAX_TREE_DEPTH: usize = 2_000;

/// Refuses a syntax tree deeper than [`MAX_TREE_DEPTH`] (9,000 nested parentheses, an
/// `if` chain or `#if` blocks nested thousands deep), measured without recursion.
///
/// Errors: [`Error::Syntax`] at the first node that goes past the limit.
fn check_tree_depth(file: &str, root: Node, src: &str) -> Result<()> {
    let mut cursor = root.walk();
    let mut depth = 0usize;
    loop {
        if depth > MAX_TREE_DEPTH {
            let n = cursor.node();
            let at = n.start_position();
            let line_start = src[..n.start_byte()].rfind('\n').map_or(0, |i| i + 1);
            return Err(Error::Syntax {
                file: file.to_string(),
                loc: crate::Loc {
                    line: at.row as u32 + 1,
                    col: src[line_start..n.start_byte()].chars().count() as u32 + 1,
                },
                msg: format!(
                    "code nested more than {MAX_TREE_DEPTH} levels deep (brackets, statements or #if blocks); warpscope stops here to protect its stack when it looks for launches. Split the code into smaller parts, or give the launch with --grid and --block"
                ),
            });
        }
        if cursor.goto_first_child() {
            depth += 1;
            continue;
        }
        loop {
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                return Ok(());
            }
            depth -= 1;
        }
    }
}

fn text<'s>(n: Node, src: &'s str) -> &'s str {
    &src[n.byte_range()]
}

fn collapse(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn named(n: Node) -> Vec<Node> {
    let mut c = n.walk();
    n.named_children(&mut c)
        .filter(|c| c.kind() != "comment")
        .collect()
}

/// A kernel parameter: name and whether it is a pointer.
type Signature = Vec<(String, bool)>;

/// `__global__` functions (definitions and prototypes) by name without template arguments.
fn collect_kernels(n: Node, src: &str, out: &mut HashMap<String, Signature>) {
    if matches!(n.kind(), "function_definition" | "declaration") {
        let is_global = {
            let mut c = n.walk();
            let found = n
                .children(&mut c)
                .take_while(|ch| n.child_by_field_name("declarator") != Some(*ch))
                .any(|ch| text(ch, src).contains("__global__"));
            found
        };
        if let Some(f) = n
            .child_by_field_name("declarator")
            .filter(|d| is_global && d.kind() == "function_declarator")
        {
            let name = f
                .child_by_field_name("declarator")
                .map(|d| base_name(text(d, src)))
                .unwrap_or_default();
            let params = f
                .child_by_field_name("parameters")
                .map(|p| {
                    named(p)
                        .into_iter()
                        .filter(|d| d.kind().contains("parameter_declaration"))
                        .map(|d| param_of(d, src))
                        .collect()
                })
                .unwrap_or_default();
            if !name.is_empty() {
                out.insert(name, params);
            }
            return;
        }
    }
    for c in named(n) {
        collect_kernels(c, src, out);
    }
}

/// `ns::k<float>` → `k`.
fn base_name(s: &str) -> String {
    let s = s.split('<').next().unwrap_or(s);
    s.rsplit("::").next().unwrap_or(s).trim().to_string()
}

/// A parameter declaration's name and whether it is a pointer (or an array, passed as one).
fn param_of(d: Node, src: &str) -> (String, bool) {
    let mut pointer = false;
    let mut cur = d.child_by_field_name("declarator");
    while let Some(n) = cur {
        match n.kind() {
            "identifier" => return (text(n, src).to_string(), pointer),
            "pointer_declarator"
            | "array_declarator"
            | "abstract_pointer_declarator"
            | "abstract_array_declarator" => pointer = true,
            _ => {}
        }
        cur = n.child_by_field_name("declarator");
    }
    (String::new(), pointer)
}

/// What a name stands for at a point of the host code.
#[derive(Clone, Debug)]
enum Binding {
    Known(Value),
    /// Not a constant, and why.
    Unknown(String),
}

struct Walker<'a> {
    src: &'a str,
    macros: Macros,
    scopes: Vec<HashMap<String, Binding>>,
    launches: Vec<HostLaunch>,
    kernels: &'a HashMap<String, Signature>,
}

impl<'a> Walker<'a> {
    fn walk(&mut self, n: Node<'a>) {
        match n.kind() {
            "preproc_def" | "preproc_function_def" => self.define(n),
            "preproc_call" => {
                let directive = n
                    .child_by_field_name("directive")
                    .map(|d| text(d, self.src).trim())
                    .unwrap_or("");
                if directive == "#undef" {
                    if let Some(a) = n.child_by_field_name("argument") {
                        self.macros.remove(text(a, self.src).trim());
                    }
                }
            }
            "preproc_ifdef" | "preproc_if" | "preproc_elif" | "preproc_elifdef"
            | "preproc_else" => self.branch(n),
            "function_definition" => {
                self.scopes.push(HashMap::new());
                self.bind_parameters(n);
                if let Some(b) = n.child_by_field_name("body") {
                    self.walk(b);
                }
                self.scopes.pop();
            }
            "compound_statement" => {
                self.scopes.push(HashMap::new());
                self.walk_children(n);
                self.scopes.pop();
            }
            "for_statement" | "while_statement" | "do_statement" | "for_range_loop" => {
                // A variable changed anywhere in the loop is not constant in any iteration.
                let mut changed = Vec::new();
                changed_names(n, self.src, &mut changed);
                for name in changed {
                    self.change(&name, "changes in an enclosing loop");
                }
                self.scopes.push(HashMap::new());
                self.walk_children(n);
                self.scopes.pop();
            }
            "declaration" => self.declaration(n),
            "assignment_expression" | "update_expression" | "pointer_expression" => {
                let mut changed = Vec::new();
                changed_names(n, self.src, &mut changed);
                self.walk_children(n);
                for name in changed {
                    self.change(&name, "is changed before the launch");
                }
            }
            "call_expression" => {
                let launch = named(n)
                    .into_iter()
                    .find(|c| c.kind() == "kernel_call_syntax");
                self.walk_children(n);
                if let Some(k) = launch {
                    self.launch(n, k);
                }
            }
            _ => self.walk_children(n),
        }
    }

    fn walk_children(&mut self, n: Node<'a>) {
        for c in named(n) {
            self.walk(c);
        }
    }

    fn define(&mut self, n: Node) {
        let Some(name) = n.child_by_field_name("name") else {
            return;
        };
        let body = n
            .child_by_field_name("value")
            .map(|v| without_comments(text(v, self.src)).trim().to_string())
            .unwrap_or_default();
        let params = n.child_by_field_name("parameters").map(|p| {
            named(p)
                .iter()
                .map(|x| text(*x, self.src).to_string())
                .collect()
        });
        self.macros
            .insert(text(name, self.src).to_string(), Macro { params, body });
    }

    /// `#if`/`#ifdef`/`#elif`/`#else`: walks the items of the branch the preprocessor keeps.
    fn branch(&mut self, n: Node<'a>) {
        let keep = match n.kind() {
            "preproc_ifdef" | "preproc_elifdef" => {
                let name = n
                    .child_by_field_name("name")
                    .map(|x| text(x, self.src))
                    .unwrap_or("");
                // `# ifndef` may have spaces after the '#'.
                let directive = text(n, self.src)
                    .trim_start()
                    .trim_start_matches('#')
                    .trim_start();
                let negated = directive.starts_with("ifndef") || directive.starts_with("elifndef");
                self.macros.contains_key(name) != negated
            }
            "preproc_if" | "preproc_elif" => n
                .child_by_field_name("condition")
                .is_some_and(|c| matches!(self.eval_in(c, self.src, true), Ok(v) if truthy(v))),
            _ => true,
        };
        if !keep {
            if let Some(alt) = n.child_by_field_name("alternative") {
                self.walk(alt);
            }
            return;
        }
        let mut c = n.walk();
        let items: Vec<(Option<&str>, Node<'a>)> = n
            .children(&mut c)
            .enumerate()
            .map(|(i, ch)| (n.field_name_for_child(i as u32), ch))
            .collect();
        for (field, ch) in items {
            if ch.is_named()
                && ch.kind() != "comment"
                && !matches!(field, Some("name" | "condition" | "alternative"))
            {
                self.walk(ch);
            }
        }
    }

    fn bind_parameters(&mut self, f: Node) {
        let mut cur = f.child_by_field_name("declarator");
        while let Some(d) = cur {
            if d.kind() == "function_declarator" {
                if let Some(p) = d.child_by_field_name("parameters") {
                    for pd in named(p) {
                        let (name, _) = param_of(pd, self.src);
                        if !name.is_empty() {
                            let why = format!("`{name}` is a parameter of the enclosing function");
                            self.bind(&name, Binding::Unknown(why));
                        }
                    }
                }
                return;
            }
            cur = d.child_by_field_name("declarator");
        }
    }

    fn bind(&mut self, name: &str, b: Binding) {
        if let Some(s) = self.scopes.last_mut() {
            s.insert(name.to_string(), b);
        }
    }

    /// Marks `name` (in the innermost scope that has it) as not constant.
    fn change(&mut self, name: &str, why: &str) {
        for s in self.scopes.iter_mut().rev() {
            if let Some(b) = s.get_mut(name) {
                if matches!(b, Binding::Known(_)) {
                    *b = Binding::Unknown(format!("`{name}` {why}"));
                }
                return;
            }
        }
    }

    fn declaration(&mut self, n: Node<'a>) {
        let ty = n
            .child_by_field_name("type")
            .map(|t| collapse(text(t, self.src)))
            .unwrap_or_default();
        let kind = type_kind(&ty);
        let mut c = n.walk();
        let decls: Vec<Node<'a>> = n.children_by_field_name("declarator", &mut c).collect();
        for d in decls {
            // Initializers may hold launches or assignments too.
            self.walk_children(d);
            let (name, b) = match d.kind() {
                "init_declarator" => {
                    let Some(inner) = d.child_by_field_name("declarator") else {
                        continue;
                    };
                    if inner.kind() != "identifier" {
                        if let Some(name) = first_of_kind(inner, "identifier") {
                            let name = text(name, self.src);
                            let why = format!("`{name}` is a pointer, array or reference");
                            self.bind(name, Binding::Unknown(why));
                        }
                        continue;
                    }
                    let name = text(inner, self.src);
                    let b = match self.initial(kind, d.child_by_field_name("value")) {
                        Ok(v) => Binding::Known(v),
                        Err(why) => Binding::Unknown(format!("`{name}` is {why}")),
                    };
                    (name, b)
                }
                // `dim3 block(BLOCK)` parses as a function declaration whose parameter
                // "types" are the arguments.
                "function_declarator" if kind == Kind::Dim3 => {
                    let Some(name) = d.child_by_field_name("declarator") else {
                        continue;
                    };
                    let args: Vec<Node<'a>> = d
                        .child_by_field_name("parameters")
                        .map(named)
                        .unwrap_or_default();
                    let name = text(name, self.src);
                    let b = match self.dim3_in(&args, self.src, false) {
                        Ok(v) => Binding::Known(v),
                        Err(e) => Binding::Unknown(format!("`{name}` is set at run time: {e}")),
                    };
                    (name, b)
                }
                "identifier" => {
                    let name = text(d, self.src);
                    (
                        name,
                        Binding::Unknown(format!("`{name}` is declared without a value")),
                    )
                }
                "pointer_declarator" | "array_declarator" | "reference_declarator" => {
                    let Some(name) = first_of_kind(d, "identifier") else {
                        continue;
                    };
                    let name = text(name, self.src);
                    (
                        name,
                        Binding::Unknown(format!("`{name}` is a pointer, array or reference")),
                    )
                }
                _ => continue,
            };
            self.bind(name, b);
        }
    }

    /// The value of a variable of `kind` initialized by `value`, or what it is instead
    /// ("declared without a value").
    fn initial(&self, kind: Kind, value: Option<Node<'a>>) -> std::result::Result<Value, String> {
        match (kind, value) {
            (Kind::Other, _) => Err("not an integer, floating-point or dim3 variable".to_string()),
            (_, None) => Err("declared without a value".to_string()),
            (Kind::Dim3, Some(v)) if matches!(v.kind(), "argument_list" | "initializer_list") => {
                self.dim3_in(&named(v), self.src, false)
            }
            (_, Some(v)) => {
                let v = match v.kind() {
                    "argument_list" | "initializer_list" => named(v).into_iter().next(),
                    _ => Some(v),
                };
                match v {
                    Some(v) => self
                        .eval(v)
                        .and_then(|x| convert(kind, x))
                        .map_err(|e| format!("set at run time: {e}")),
                    None => Err("declared without a value".to_string()),
                }
            }
        }
    }

    fn eval(&self, n: Node) -> std::result::Result<Value, String> {
        self.eval_in(n, self.src, false)
    }

    fn launch(&mut self, call: Node, k: Node) {
        let parts = named(k);
        let expr = |w: &Self, n: Option<&Node>| -> LaunchExpr {
            match n {
                None => LaunchExpr {
                    text: String::new(),
                    value: None,
                    why: Some("missing".into()),
                },
                Some(n) => {
                    let r = w.eval(*n);
                    LaunchExpr {
                        text: collapse(text(*n, w.src)),
                        value: r.as_ref().ok().copied(),
                        why: r.err(),
                    }
                }
            }
        };
        let kernel = call
            .child_by_field_name("function")
            .map(|f| collapse(text(f, self.src)))
            .unwrap_or_default();
        let signature = self.kernels.get(&base_name(&kernel));
        let args = call
            .child_by_field_name("arguments")
            .map(named)
            .unwrap_or_default()
            .iter()
            .enumerate()
            .map(|(i, a)| {
                let p = signature.and_then(|s| s.get(i));
                let mut e = expr(self, Some(a));
                if p.is_some_and(|(_, ptr)| *ptr) {
                    // A pointer's value is warpscope's allocation, never the host's.
                    (e.value, e.why) = (None, None);
                }
                LaunchArg {
                    expr: e,
                    param: p.map(|(n, _)| n.clone()),
                    pointer: p.map(|(_, ptr)| *ptr),
                }
            })
            .collect();
        let pos = call.start_position();
        self.launches.push(HostLaunch {
            index: self.launches.len(),
            line: pos.row as u32 + 1,
            column: pos.column as u32 + 1,
            kernel,
            grid: expr(self, parts.first()),
            block: expr(self, parts.get(1)),
            shared_bytes: parts.get(2).map(|n| expr(self, Some(n))),
            stream: parts.get(3).map(|n| collapse(text(*n, self.src))),
            args,
        });
    }

    /// Evaluates `n` of the text `src` (the file, or a macro's body); in `#if` conditions
    /// (`preproc`) a name that is no macro is 0.
    fn eval_in(&self, n: Node, src: &str, preproc: bool) -> std::result::Result<Value, String> {
        let ev = |x: Node| self.eval_in(x, src, preproc);
        let child = |f: &str| {
            n.child_by_field_name(f)
                .ok_or_else(|| format!("`{}` is incomplete", collapse(text(n, src))))
        };
        match n.kind() {
            "number_literal" => {
                let t = text(n, src);
                let (neg, digits) = match t.strip_prefix('-') {
                    Some(d) => (true, d.trim()),
                    None => (false, t),
                };
                if let Some((v, _)) = parse_int_literal(digits) {
                    let v = i64::try_from(v).map_err(|_| format!("{t} is too large"))?;
                    return Ok(Value::Int(if neg { -v } else { v }));
                }
                parse_float_literal(t)
                    .map(|(x, _)| x)
                    .filter(|x| x.is_finite())
                    .map(Value::Float)
                    .ok_or_else(|| format!("`{t}` is not a finite number"))
            }
            "char_literal" => {
                let t = text(n, src);
                let inner = t.trim_matches('\'');
                match inner.chars().collect::<Vec<_>>()[..] {
                    [c] => Ok(Value::Int(c as i64)),
                    _ => Err(format!("the character {t}")),
                }
            }
            "true" => Ok(Value::Int(1)),
            "false" => Ok(Value::Int(0)),
            "parenthesized_expression" | "preproc_parenthesized_expression" => named(n)
                .into_iter()
                .next()
                .ok_or_else(|| "empty parentheses".to_string())
                .and_then(ev),
            "identifier" | "type_identifier" | "parameter_declaration" => {
                self.lookup(text(n, src).trim(), preproc)
            }
            "preproc_defined" => {
                let name = named(n)
                    .into_iter()
                    .next()
                    .map(|i| text(i, src).to_string())
                    .unwrap_or_default();
                Ok(Value::Int(self.macros.contains_key(&name) as i64))
            }
            "unary_expression" | "preproc_unary_expression" => {
                let a = ev(child("argument")?)?;
                let op = child("operator")?.kind();
                unary(op, a)
            }
            "binary_expression" | "preproc_binary_expression" => {
                let op = child("operator")?.kind();
                let l = ev(child("left")?)?;
                // Short-circuit as C does.
                match (op, truthy(l)) {
                    ("&&", false) => return Ok(Value::Int(0)),
                    ("||", true) => return Ok(Value::Int(1)),
                    _ => {}
                }
                let r = ev(child("right")?)?;
                binary(op, l, r)
            }
            "conditional_expression" => {
                if truthy(ev(child("condition")?)?) {
                    ev(child("consequence")?)
                } else {
                    ev(child("alternative")?)
                }
            }
            "cast_expression" => {
                let ty = collapse(text(child("type")?, src));
                convert(type_kind(&ty), ev(child("value")?)?)
            }
            "sizeof_expression" => {
                let ty = n
                    .child_by_field_name("type")
                    .map(|t| collapse(text(t, src)))
                    .ok_or_else(|| "sizeof of an expression".to_string())?;
                size_of(&ty)
                    .map(Value::Int)
                    .ok_or_else(|| format!("sizeof({ty}) is not a built-in type's"))
            }
            "field_expression" => {
                let base = ev(child("argument")?)?;
                let field = text(child("field")?, src);
                match (base, field) {
                    (Value::Dim3(d), "x") => Ok(Value::Int(d[0] as i64)),
                    (Value::Dim3(d), "y") => Ok(Value::Int(d[1] as i64)),
                    (Value::Dim3(d), "z") => Ok(Value::Int(d[2] as i64)),
                    _ => Err(format!("the field `{}`", collapse(text(n, src)))),
                }
            }
            "compound_literal_expression" => {
                let ty = collapse(text(child("type")?, src));
                let vals = named(child("value")?);
                if ty == "dim3" {
                    self.dim3_in(&vals, src, preproc)
                } else {
                    Err(format!("`{}`", collapse(text(n, src))))
                }
            }
            "call_expression" => {
                let f = child("function")?;
                let fname = collapse(text(f, src));
                let args = child("arguments").map(named).unwrap_or_default();
                if fname == "dim3" {
                    return self.dim3_in(&args, src, preproc);
                }
                if let Some(Macro {
                    params: Some(params),
                    body,
                }) = self.macros.get(&fname)
                {
                    if params.len() == args.len() {
                        let actual: Vec<String> = args
                            .iter()
                            .map(|a| format!("({})", text(*a, src)))
                            .collect();
                        let expanded = substitute(body, params, &actual)
                            .map_err(|e| format!("the macro {fname} uses {e}"))?;
                        return self.eval_text(&expanded, &fname);
                    }
                }
                Err(format!("`{fname}(…)` is a call, evaluated at run time"))
            }
            other => Err(format!(
                "`{}` ({}) is not a compile-time constant",
                collapse(text(n, src)),
                other.replace('_', " ")
            )),
        }
    }

    /// A `dim3` of 1 to 3 integer expressions.
    fn dim3_in(
        &self,
        args: &[Node],
        src: &str,
        preproc: bool,
    ) -> std::result::Result<Value, String> {
        if args.is_empty() || args.len() > 3 {
            return Err(format!("a dim3 of {} values", args.len()));
        }
        let mut d = [1u64; 3];
        for (o, a) in d.iter_mut().zip(args) {
            *o = match self.eval_in(*a, src, preproc)? {
                Value::Int(n) if n >= 0 => n as u64,
                v => return Err(format!("a dim3 component of {v}")),
            };
        }
        Ok(Value::Dim3(d))
    }

    fn lookup(&self, name: &str, preproc: bool) -> std::result::Result<Value, String> {
        if let Some(m) = self.macros.get(name) {
            if m.params.is_some() {
                return Err(format!("`{name}` is a function-like macro"));
            }
            return self.eval_text(&m.body.clone(), name);
        }
        if preproc {
            return Ok(Value::Int(0));
        }
        for s in self.scopes.iter().rev() {
            match s.get(name) {
                Some(Binding::Known(v)) => return Ok(*v),
                Some(Binding::Unknown(why)) => return Err(why.clone()),
                None => {}
            }
        }
        Err(format!("`{name}` is not declared in this file"))
    }

    /// Evaluates text (a macro's body) as an expression.
    fn eval_text(&self, body: &str, name: &str) -> std::result::Result<Value, String> {
        thread_local!(static DEPTH: std::cell::Cell<u32> = const { std::cell::Cell::new(0) });
        // Macro bodies evaluated for the outermost macro use: `#define M1 (M0 + M0)` … `M29`
        // doubles at each level (2^29 parses before this bound).
        thread_local!(static USES: std::cell::Cell<usize> = const { std::cell::Cell::new(0) });
        if body.trim().is_empty() {
            return Err(format!("the macro `{name}` is empty"));
        }
        let depth = DEPTH.with(|d| d.get());
        if depth > 32 {
            return Err(format!("the macro `{name}` expands too deeply"));
        }
        let uses = if depth == 0 {
            1
        } else {
            USES.with(|u| u.get()) + 1
        };
        USES.with(|u| u.set(uses));
        if uses > MAX_MACRO_USES {
            return Err(String::new()); // the outermost use names itself below
        }
        let snippet = format!("auto warpscope_value = ({body});");
        let tree = parse(&snippet).ok_or_else(|| format!("the macro `{name}` does not parse"))?;
        let root = tree.root_node();
        if root.has_error() {
            return Err(format!("the macro `{name}` is not an expression: {body}"));
        }
        let value = first_of_kind(root, "init_declarator")
            .and_then(|d| d.child_by_field_name("value"))
            .ok_or_else(|| format!("the macro `{name}` is not an expression: {body}"))?;
        DEPTH.with(|d| d.set(depth + 1));
        let r = self.eval_in(value, &snippet, false);
        DEPTH.with(|d| d.set(depth));
        if depth == 0 && USES.with(|u| u.get()) > MAX_MACRO_USES {
            return Err(format!(
                "the macro `{name}` expands to more than {MAX_MACRO_USES} macro uses (a #define chain that doubles at each level?)"
            ));
        }
        r
    }
}

/// `body` with its `//` and `/* */` comments removed (outside string and character literals):
/// a comment after a `#define` body is not part of the macro.
fn without_comments(body: &str) -> String {
    let mut out = String::with_capacity(body.len());
    let mut chars = body.chars().peekable();
    let mut quote: Option<char> = None;
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), _) => {
                out.push(c);
                if c == '\\' {
                    out.extend(chars.next());
                } else if c == q {
                    quote = None;
                }
            }
            (None, '"' | '\'') => {
                quote = Some(c);
                out.push(c);
            }
            (None, '/') if chars.peek() == Some(&'/') => break,
            (None, '/') if chars.peek() == Some(&'*') => {
                chars.next();
                let mut prev = ' ';
                for d in chars.by_ref() {
                    if prev == '*' && d == '/' {
                        break;
                    }
                    prev = d;
                }
                out.push(' ');
            }
            _ => out.push(c),
        }
    }
    out
}

fn first_of_kind<'t>(n: Node<'t>, kind: &str) -> Option<Node<'t>> {
    if n.kind() == kind {
        return Some(n);
    }
    named(n).into_iter().find_map(|c| first_of_kind(c, kind))
}

/// Names assigned, incremented or whose address is taken anywhere under `n`.
fn changed_names(n: Node, src: &str, out: &mut Vec<String>) {
    let root = |x: Option<Node>| -> Option<String> {
        let mut x = x?;
        while matches!(x.kind(), "field_expression" | "parenthesized_expression") {
            x = x
                .child_by_field_name("argument")
                .or_else(|| named(x).into_iter().next())?;
        }
        (x.kind() == "identifier").then(|| text(x, src).to_string())
    };
    let name = match n.kind() {
        "assignment_expression" => root(n.child_by_field_name("left")),
        "update_expression" => root(n.child_by_field_name("argument")),
        "pointer_expression"
            if n.child_by_field_name("operator").map(|o| o.kind()) == Some("&") =>
        {
            root(n.child_by_field_name("argument"))
        }
        _ => None,
    };
    out.extend(name);
    for c in named(n) {
        changed_names(c, src, out);
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Int,
    Float,
    Dim3,
    /// `auto`: the value's own.
    Auto,
    Other,
}

/// The kind of a declaration's type text (qualifiers are separate nodes).
fn type_kind(ty: &str) -> Kind {
    let t: Vec<&str> = ty
        .split_whitespace()
        .filter(|w| !["const", "constexpr", "static", "volatile", "std::"].contains(w))
        .collect();
    let t = t.join(" ");
    let t = t.trim_start_matches("std::");
    match t {
        "dim3" => Kind::Dim3,
        "float" | "double" => Kind::Float,
        "auto" => Kind::Auto,
        "int" | "unsigned" | "unsigned int" | "signed" | "long" | "unsigned long" | "long long"
        | "unsigned long long" | "short" | "unsigned short" | "char" | "unsigned char"
        | "size_t" | "int32_t" | "uint32_t" | "int64_t" | "uint64_t" | "long int"
        | "long long int" | "unsigned long int" | "signed int" | "bool" => Kind::Int,
        _ => Kind::Other,
    }
}

/// `v` as a variable or cast of `kind` holds it.
fn convert(kind: Kind, v: Value) -> std::result::Result<Value, String> {
    match (kind, v) {
        (Kind::Int, Value::Float(x)) => Ok(Value::Int(x.trunc() as i64)),
        (Kind::Float, Value::Int(n)) => Ok(Value::Float(n as f64)),
        (Kind::Dim3, Value::Int(n)) if n >= 0 => Ok(Value::Dim3([n as u64, 1, 1])),
        (Kind::Int | Kind::Float, Value::Dim3(_)) => {
            Err("a dim3 where a number is expected".into())
        }
        (Kind::Other, _) => Err("not an integer, floating-point or dim3 value".into()),
        (_, v) => Ok(v),
    }
}

fn truthy(v: Value) -> bool {
    match v {
        Value::Int(n) => n != 0,
        Value::Float(x) => x != 0.0,
        Value::Dim3(_) => true,
    }
}

fn unary(op: &str, a: Value) -> std::result::Result<Value, String> {
    Ok(match (op, a) {
        ("-", Value::Int(n)) => Value::Int(n.checked_neg().ok_or("overflow")?),
        ("-", Value::Float(x)) => Value::Float(-x),
        ("+", v) => v,
        ("!", v) => Value::Int(!truthy(v) as i64),
        ("~", Value::Int(n)) => Value::Int(!n),
        _ => return Err(format!("the operator {op}")),
    })
}

fn binary(op: &str, l: Value, r: Value) -> std::result::Result<Value, String> {
    let cmp = |b: bool| Ok(Value::Int(b as i64));
    match (l, r) {
        (Value::Int(a), Value::Int(b)) => {
            let over = || format!("{a} {op} {b} overflows");
            let v = match op {
                "+" => a.checked_add(b).ok_or_else(over)?,
                "-" => a.checked_sub(b).ok_or_else(over)?,
                "*" => a.checked_mul(b).ok_or_else(over)?,
                "/" | "%" if b == 0 => return Err(format!("{a} {op} 0 divides by zero")),
                // C's integer division truncates toward zero, as Rust's does.
                "/" => a.checked_div(b).ok_or_else(over)?,
                "%" => a.checked_rem(b).ok_or_else(over)?,
                "<<" => {
                    let n = u32::try_from(b).ok().filter(|n| *n < 64).ok_or_else(over)?;
                    i64::try_from((a as i128) << n).map_err(|_| over())?
                }
                ">>" => a
                    .checked_shr(u32::try_from(b).map_err(|_| over())?)
                    .ok_or_else(over)?,
                "&" => a & b,
                "|" => a | b,
                "^" => a ^ b,
                "<" => return cmp(a < b),
                "<=" => return cmp(a <= b),
                ">" => return cmp(a > b),
                ">=" => return cmp(a >= b),
                "==" => return cmp(a == b),
                "!=" => return cmp(a != b),
                "&&" => return cmp(a != 0 && b != 0),
                "||" => return cmp(a != 0 || b != 0),
                _ => return Err(format!("the operator {op}")),
            };
            Ok(Value::Int(v))
        }
        (Value::Dim3(_), _) | (_, Value::Dim3(_)) => Err(format!("a dim3 in `{op}`")),
        (a, b) => {
            let f = |v: Value| match v {
                Value::Int(n) => n as f64,
                Value::Float(x) => x,
                Value::Dim3(_) => 0.0,
            };
            let (x, y) = (f(a), f(b));
            let v = match op {
                "+" => x + y,
                "-" => x - y,
                "*" => x * y,
                "/" => x / y,
                "<" => return cmp(x < y),
                "<=" => return cmp(x <= y),
                ">" => return cmp(x > y),
                ">=" => return cmp(x >= y),
                "==" => return cmp(x == y),
                "!=" => return cmp(x != y),
                "&&" => return cmp(x != 0.0 && y != 0.0),
                "||" => return cmp(x != 0.0 || y != 0.0),
                _ => return Err(format!("the operator {op} on floating point")),
            };
            if !v.is_finite() {
                return Err(format!("{x} {op} {y} is not a finite number"));
            }
            Ok(Value::Float(v))
        }
    }
}

/// Bytes of a built-in type [CUDA C++ Programming Guide, "Built-in Vector Types"; LP64].
fn size_of(ty: &str) -> Option<i64> {
    let t = ty.replace("const ", "").replace("std::", "");
    let t = t.trim();
    if t.ends_with('*') {
        return Some(8);
    }
    Some(match t {
        "char" | "signed char" | "unsigned char" | "bool" | "int8_t" | "uint8_t" | "uchar1"
        | "char1" => 1,
        "short" | "unsigned short" | "__half" | "half" | "__nv_bfloat16" | "int16_t"
        | "uint16_t" | "char2" | "uchar2" => 2,
        "int" | "unsigned" | "unsigned int" | "float" | "int32_t" | "uint32_t" | "__half2"
        | "char4" | "uchar4" | "short2" | "ushort2" | "int1" | "uint1" | "float1" => 4,
        "long" | "unsigned long" | "long long" | "unsigned long long" | "double" | "size_t"
        | "int64_t" | "uint64_t" | "float2" | "int2" | "uint2" | "short4" | "ushort4"
        | "double1" | "long1" | "longlong1" => 8,
        "float3" | "int3" | "uint3" => 12,
        "float4" | "int4" | "uint4" | "double2" | "long2" | "longlong2" | "ulonglong2" => 16,
        "double3" => 24,
        "double4" | "longlong4" => 32,
        _ => return None,
    })
}

#[cfg(test)]
mod tests;
