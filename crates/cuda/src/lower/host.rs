//! Host code in a `.cu` file: file-scope declarations and functions the kernel never uses.

use super::*;

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
