//! Host code in a `.cu` file: file-scope declarations and functions the kernel never uses.
//!
//! Real programs mix host code (`FILE *fp;`, `const char *name = "k";`, `new int *[n]`)
//! with their kernels. Such code is outside the CUDA warpscope interprets, yet it must not
//! stop the analysis of a kernel that does not use it: a file-scope item that cannot be
//! read is set aside with its error ([`Deferred`]), and the error is raised only when device
//! code names what the item declares. Syntax errors in the bodies of host functions are
//! likewise left to the moment such a function is lowered (see [`is_host_function_body`]).

use super::*;

/// Why a file-scope name is not available to device code.
#[derive(Clone, Debug)]
pub(super) enum Deferred {
    /// Its declaration could not be read: the error, as it would have been raised there.
    Failed(Error),
    /// A host variable (file scope, not `__device__`, `__constant__` or a constant).
    HostVariable,
}

/// The body of a function only the host can call (neither `__device__` nor `__global__`):
/// a syntax error inside it does not stop the analysis of a kernel (the parse check leaves
/// such bodies out; [`Lowerer::lower_fn`] reports the error if device code calls it).
pub(crate) fn is_host_function_body(n: Node) -> bool {
    if n.kind() != "compound_statement" {
        return false;
    }
    let Some(f) = n.parent() else {
        return false;
    };
    f.kind() == "function_definition"
        && f.child_by_field_name("body")
            .is_some_and(|b| b.id() == n.id())
        && !has_token(f, "__device__")
        && !has_token(f, "__global__")
}

/// A function declaration (prototype) such as `float *make_buffer(int n);`: pointer or
/// reference declarators around a function declarator whose name is not parenthesized
/// (`float (*fp)(int)` declares a function pointer, not a function).
pub(super) fn is_prototype(d: Node) -> bool {
    let mut d = d;
    loop {
        match d.kind() {
            "pointer_declarator" => match d.child_by_field_name("declarator") {
                Some(inner) => d = inner,
                None => return false,
            },
            "reference_declarator" => match named_children(d).into_iter().next() {
                Some(inner) => d = inner,
                None => return false,
            },
            "function_declarator" => {
                return d
                    .child_by_field_name("declarator")
                    .is_some_and(|n| n.kind() != "parenthesized_declarator")
            }
            _ => return false,
        }
    }
}

/// The name a declarator declares (`**wall`, `a[3] = {…}`, `(x)` → `wall`, `a`, `x`).
pub(super) fn declarator_name(d: Node, src: &str) -> Option<String> {
    let mut d = d;
    loop {
        match d.kind() {
            "identifier" | "type_identifier" | "field_identifier" => {
                return Some(text(d, src).to_string())
            }
            "qualified_identifier" => return Some(text(cg::unqualify(d), src).to_string()),
            "parenthesized_declarator" | "reference_declarator" => {
                d = named_children(d).into_iter().next()?
            }
            _ => d = d.child_by_field_name("declarator")?,
        }
    }
}

/// The names a struct, union or enum specifier with a body introduces: its tag and, for an
/// enum, its enumerators.
fn specifier_names(t: Node, src: &str) -> Vec<String> {
    if !matches!(
        t.kind(),
        "struct_specifier" | "class_specifier" | "union_specifier" | "enum_specifier"
    ) {
        return Vec::new();
    }
    let Some(body) = t.child_by_field_name("body") else {
        return Vec::new();
    };
    let mut out: Vec<String> = t
        .child_by_field_name("name")
        .map(|n| text(n, src).to_string())
        .into_iter()
        .collect();
    if t.kind() == "enum_specifier" {
        out.extend(
            named_children(body)
                .into_iter()
                .filter(|e| e.kind() == "enumerator")
                .filter_map(|e| e.child_by_field_name("name"))
                .map(|n| text(n, src).to_string()),
        );
    }
    out
}

/// Every name a file-scope item declares: the variables or typedef names of a declaration
/// or typedef, and the tag (and enumerators) of a type it defines.
pub(super) fn declared_names(item: Node, src: &str) -> Vec<String> {
    let ty = item.child_by_field_name("type");
    let mut out = match ty {
        Some(t) => specifier_names(t, src),
        None => specifier_names(item, src),
    };
    if matches!(item.kind(), "declaration" | "type_definition") {
        for d in named_children(item) {
            if ty.is_some_and(|t| t.id() == d.id())
                || matches!(d.kind(), "type_qualifier" | "storage_class_specifier")
            {
                continue;
            }
            out.extend(declarator_name(d, src));
        }
    }
    out
}

impl<'t> Lowerer<'t> {
    /// Sets `names` aside with the error their declaration raised: device code that names
    /// one of them gets that error (the first one, where a name is declared more than once).
    pub(super) fn defer(&mut self, names: Vec<String>, error: Error) {
        for name in names {
            self.deferred
                .entry(name)
                .or_insert_with(|| Deferred::Failed(error.clone()));
        }
    }

    /// Marks `name` as a host variable, so that device code naming it is told why it
    /// cannot.
    pub(super) fn note_host_variable(&mut self, name: &str) {
        self.deferred
            .entry(name.to_string())
            .or_insert(Deferred::HostVariable);
    }

    /// The error for device code naming `name` at `at`, when `name` is a file-scope name
    /// that is not available to device code.
    pub(super) fn deferred_error(&self, name: &str, at: Node) -> Option<Error> {
        Some(match self.deferred.get(name)? {
            Deferred::Failed(e) => e.clone(),
            Deferred::HostVariable => self.err_at(
                at,
                format!("'{name}' is a host variable (declared at file scope without __device__ or __constant__), which device code cannot use; pass its value to the kernel as an argument, or declare it __device__"),
            ),
        })
    }

    /// The error for device code naming the type `name`, when the declaration of a type of
    /// that name could not be read.
    pub(super) fn deferred_type_error(&self, name: &str) -> Option<Error> {
        match self.deferred.get(name)? {
            Deferred::Failed(e) => Some(e.clone()),
            Deferred::HostVariable => None,
        }
    }

    /// Collects a file-scope item with `read`; an error in it is deferred to the names it
    /// declares, as the kernel may not use them.
    pub(super) fn collect_deferring(
        &mut self,
        item: Node,
        read: impl FnOnce(&mut Self) -> Result<()>,
    ) {
        if let Err(e) = read(self) {
            let names = declared_names(item, self.src);
            self.defer(names, e);
        }
    }
}
