//! Reading source bytes: files written in Latin-1 or another 8-bit encoding usually hold
//! their non-ASCII bytes only in comments (an author's name, `°C`, `é`) or string literals.

use crate::error::{Error, Result};
use crate::ir::Loc;

/// The text of a source file from its bytes. Bytes that are not UTF-8 inside a comment, a
/// string literal or a character literal are each replaced by one `?`, so every byte keeps
/// its offset and every line:col its place; the code does not change.
///
/// Errors: [`Error::Syntax`] at the first byte that is not UTF-8 outside comments and
/// literals, where it cannot be part of any CUDA C++ token.
pub fn decode_source(file: &str, bytes: &[u8]) -> Result<String> {
    if let Ok(s) = std::str::from_utf8(bytes) {
        return Ok(s.to_string());
    }
    let mut out = Vec::with_capacity(bytes.len());
    let mut replaced = Vec::new();
    let mut rest = bytes;
    while !rest.is_empty() {
        match std::str::from_utf8(rest) {
            Ok(s) => {
                out.extend_from_slice(s.as_bytes());
                break;
            }
            Err(e) => {
                let good = e.valid_up_to();
                let bad = e.error_len().unwrap_or(rest.len() - good);
                out.extend_from_slice(&rest[..good]);
                for _ in 0..bad {
                    replaced.push(out.len());
                    out.push(b'?');
                }
                rest = &rest[good + bad..];
            }
        }
    }
    let in_text = commented_or_quoted(&out);
    if let Some(&at) = replaced.iter().find(|&&at| !in_text[at]) {
        let line_start = out[..at]
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |p| p + 1);
        let line = out[..at].iter().filter(|&&b| b == b'\n').count() as u32 + 1;
        return Err(Error::Syntax {
            file: file.to_string(),
            loc: Loc {
                line,
                col: (at - line_start) as u32 + 1,
            },
            msg: format!(
                "byte {:#04x} is not UTF-8; outside comments and string literals the source must be UTF-8 (convert the file, e.g. with iconv -f latin1 -t utf-8)",
                bytes[at]
            ),
        });
    }
    // Only ASCII '?' was written in place of invalid bytes: the result is UTF-8.
    String::from_utf8(out).map_err(|e| Error::Argument(format!("{file}: {e}")))
}

/// For each byte: whether it lies inside a comment or a string/character literal
/// [C11 6.4.4.4, 6.4.5, 6.4.9].
fn commented_or_quoted(b: &[u8]) -> Vec<bool> {
    #[derive(PartialEq)]
    enum State {
        Code,
        Line,
        Block,
        Quote(u8),
    }
    let mut inside = vec![false; b.len()];
    let mut st = State::Code;
    let mut i = 0;
    while i < b.len() {
        match st {
            State::Code => match (b[i], b.get(i + 1)) {
                (b'/', Some(b'/')) => {
                    st = State::Line;
                    i += 1;
                }
                (b'/', Some(b'*')) => {
                    st = State::Block;
                    i += 1;
                }
                (q @ (b'"' | b'\''), _) => st = State::Quote(q),
                _ => {}
            },
            State::Line => {
                if b[i] == b'\n' {
                    st = State::Code;
                } else {
                    inside[i] = true;
                }
            }
            State::Block => {
                inside[i] = true;
                if b[i] == b'*' && b.get(i + 1) == Some(&b'/') {
                    st = State::Code;
                    i += 1;
                }
            }
            State::Quote(q) => {
                if b[i] == b'\\' {
                    inside[i] = true;
                    if let Some(x) = inside.get_mut(i + 1) {
                        *x = true;
                    }
                    i += 1;
                } else if b[i] == q || b[i] == b'\n' {
                    st = State::Code;
                } else {
                    inside[i] = true;
                }
            }
        }
        i += 1;
    }
    inside
}

/// Refuses brackets (`(`, `[`, `{`) nested more than `limit` deep outside comments and
/// literals, before the parser sees them: such code is beyond the lowering's nesting limit
/// anyway, and the parser's error recovery on it can take seconds.
///
/// Errors: [`Error::Syntax`] at the opener that goes past `limit`.
pub(crate) fn check_bracket_depth(file: &str, text: &str, limit: usize) -> Result<()> {
    let b = text.as_bytes();
    let inside = commented_or_quoted(b);
    let mut depth = 0usize;
    let (mut line, mut line_start) = (1u32, 0usize);
    for (i, &c) in b.iter().enumerate() {
        if c == b'\n' {
            line += 1;
            line_start = i + 1;
        }
        if inside[i] {
            continue;
        }
        match c {
            b'(' | b'[' | b'{' => {
                depth += 1;
                if depth > limit {
                    let col = text[line_start..i].chars().count() as u32 + 1;
                    return Err(Error::Syntax {
                        file: file.to_string(),
                        loc: Loc { line, col },
                        msg: format!("brackets nested more than {limit} deep; warpscope stops here to protect its stack. Split the expression or the block into smaller parts"),
                    });
                }
            }
            b')' | b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    Ok(())
}

/// Rewrites the casts the parser made of parenthesized variables: tree-sitter reads
/// `(y) && (z)`, `(y) & m`, `(y) * k` and `(y) - k` as a cast of `&&(z)`, `&m`, `*k`, `-k`
/// to a type `y`, since it cannot know `y` names no type. Where `y` is declared as no type
/// in the file (no typedef, struct, class, enum, template parameter or `using`) and is no
/// built-in type name, the parentheses become spaces: same length, so every position is
/// kept. `None` when there is nothing to rewrite.
pub(crate) fn unparenthesize_false_casts(root: tree_sitter::Node, text: &str) -> Option<String> {
    let mut types = std::collections::HashSet::new();
    let mut casts = Vec::new();
    let mut stack = vec![root];
    while let Some(n) = stack.pop() {
        match n.kind() {
            "type_definition"
            | "alias_declaration"
            | "struct_specifier"
            | "class_specifier"
            | "union_specifier"
            | "enum_specifier"
            | "type_parameter_declaration"
            | "optional_type_parameter_declaration" => {
                let mut c = n.walk();
                for ch in n.named_children(&mut c) {
                    if ch.kind() == "type_identifier" {
                        types.insert(&text[ch.byte_range()]);
                    }
                }
                if let Some(d) = n.child_by_field_name("declarator") {
                    types.insert(&text[d.byte_range()]);
                }
                if let Some(d) = n.child_by_field_name("name") {
                    types.insert(&text[d.byte_range()]);
                }
            }
            "cast_expression" => {
                let ty = n.child_by_field_name("type");
                let value = n.child_by_field_name("value");
                if let (Some(ty), Some(value)) = (ty, value) {
                    let lone = ty.child_by_field_name("declarator").is_none()
                        && ty
                            .child_by_field_name("type")
                            .is_some_and(|t| t.kind() == "type_identifier")
                        && ty.named_child_count() == 1;
                    let ambiguous =
                        matches!(value.kind(), "pointer_expression" | "unary_expression");
                    if lone && ambiguous {
                        casts.push((n.start_byte(), ty.end_byte(), &text[ty.byte_range()]));
                    }
                }
            }
            _ => {}
        }
        let mut c = n.walk();
        stack.extend(n.children(&mut c));
    }
    let mut out = text.as_bytes().to_vec();
    let mut changed = false;
    for (open, ty_end, name) in casts {
        if types.contains(name) || is_builtin_type_name(name) {
            continue;
        }
        let Some(close) = text[ty_end..].find(')').map(|i| ty_end + i) else {
            continue;
        };
        if text.as_bytes()[open] == b'(' {
            out[open] = b' ';
            out[close] = b' ';
            changed = true;
        }
    }
    // Only ASCII parentheses were replaced by ASCII spaces.
    changed.then(|| String::from_utf8(out).unwrap_or_else(|_| text.to_string()))
}

/// Type names CUDA's headers give that the parser reads as identifiers.
fn is_builtin_type_name(name: &str) -> bool {
    const NAMES: &[&str] = &[
        "size_t",
        "ptrdiff_t",
        "ssize_t",
        "intptr_t",
        "uintptr_t",
        "int8_t",
        "uint8_t",
        "int16_t",
        "uint16_t",
        "int32_t",
        "uint32_t",
        "int64_t",
        "uint64_t",
        "uint",
        "uchar",
        "ushort",
        "ulong",
        "half",
        "__half",
        "__half2",
        "half2",
        "__nv_bfloat16",
        "nv_bfloat16",
        "__nv_bfloat162",
        "dim3",
        "cudaTextureObject_t",
        "cudaSurfaceObject_t",
    ];
    if NAMES.contains(&name) {
        return true;
    }
    crate::types::is_vector_type_name(name)
}
