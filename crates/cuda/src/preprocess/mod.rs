//! The C preprocessor of the source path, written to the C standard's translation phases:
//! [`lex`] (line splicing, comments, pp-tokens), [`run`] (directives, `#if`, `#include`),
//! [`expand`] (macro replacement with `#`, `##`, `__VA_ARGS__` and hide sets), [`expr`]
//! (`#if` expressions) and [`map`] (output position → the user's file:line:col).
//! [`preprocess`] is the entry point.
//!
//! Also here: blanking of CUDA attributes the tree-sitter grammar does not parse
//! (`__align__(n)`, `__launch_bounds__(…)`), keeping every other byte where it was, and the
//! lowerer's own small macro helpers ([`Macro`], [`substitute`]).

pub mod expand;
pub mod expr;
pub mod lex;
pub mod map;
pub mod run;
#[cfg(test)]
mod tests_limits;
#[cfg(test)]
mod tests_pp;

pub use expand::{MAX_TOKENS, MAX_TOTAL_TOKENS};
pub use map::{Origin, SourceMap};
pub use run::{
    is_system_header, preprocess, Output, MAX_INCLUDES, MAX_INCLUDE_DEPTH, MAX_OUTPUT_BYTES,
    SYSTEM_HEADERS,
};

use std::collections::HashMap;

/// A `#define` (or `-D`).
#[derive(Clone, Debug)]
pub struct Macro {
    /// `Some` for a function-like macro: its parameter names.
    pub params: Option<Vec<String>>,
    pub body: String,
}

pub type Macros = HashMap<String, Macro>;

/// Parses `-D NAME[=VALUE]` as nvcc takes it (`-D NAME` defines NAME as 1).
pub fn parse_define(def: &str) -> Option<(String, Macro)> {
    let (name, body) = match def.split_once('=') {
        Some((n, v)) => (n.trim(), v.trim().to_string()),
        None => (def.trim(), "1".to_string()),
    };
    let valid = !name.is_empty()
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !name.starts_with(|c: char| c.is_ascii_digit());
    valid.then(|| (name.to_string(), Macro { params: None, body }))
}

/// Replaces `__align__(n)`, `__launch_bounds__(…)` and `__builtin_align__(n)` with spaces.
/// Returns the blanked text and, for each `__align__`, its byte position and alignment.
pub fn blank_attributes(src: &str) -> (String, Vec<(usize, u64)>) {
    let mut out = src.as_bytes().to_vec();
    let mut aligns = Vec::new();
    for kw in ["__align__", "__builtin_align__", "__launch_bounds__"] {
        let mut from = 0;
        while let Some(p) = src[from..].find(kw).map(|p| p + from) {
            from = p + kw.len();
            let before_ok = p == 0 || !is_ident_byte(src.as_bytes()[p - 1]);
            let rest = &src[from..];
            let ws = rest.len() - rest.trim_start().len();
            if !before_ok || !rest.trim_start().starts_with('(') {
                continue;
            }
            let open = from + ws;
            let mut depth = 0;
            let mut end = None;
            for (i, b) in src.as_bytes()[open..].iter().enumerate() {
                match b {
                    b'(' => depth += 1,
                    b')' => {
                        depth -= 1;
                        if depth == 0 {
                            end = Some(open + i + 1);
                            break;
                        }
                    }
                    _ => {}
                }
            }
            let Some(end) = end else { continue };
            if kw != "__launch_bounds__" {
                let inner = src[open + 1..end - 1].trim();
                if let Ok(n) = inner.parse::<u64>() {
                    aligns.push((p, n));
                }
            }
            for b in &mut out[p..end] {
                if *b != b'\n' {
                    *b = b' ';
                }
            }
        }
    }
    // Only ASCII bytes were replaced by ASCII spaces, so the text stays valid UTF-8.
    (String::from_utf8_lossy(&out).into_owned(), aligns)
}

fn is_ident_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// Substitutes `args` for the parameters of a function-like macro body, token by token
/// (identifiers outside string and character literals). `#` and `##` are not supported.
pub fn substitute(body: &str, params: &[String], args: &[String]) -> Result<String, String> {
    if body.contains('#') {
        return Err("the # and ## macro operators".into());
    }
    let b = body.as_bytes();
    let mut out = String::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c == b'"' || c == b'\'' {
            let start = i;
            i += 1;
            while i < b.len() && b[i] != c {
                if b[i] == b'\\' {
                    i += 1;
                }
                i += 1;
            }
            i = (i + 1).min(b.len());
            out.push_str(&body[start..i]);
        } else if c.is_ascii_alphabetic() || c == b'_' {
            let start = i;
            while i < b.len() && is_ident_byte(b[i]) {
                i += 1;
            }
            let word = &body[start..i];
            match params.iter().position(|p| p == word) {
                Some(k) => out.push_str(&args[k]),
                None => out.push_str(word),
            }
        } else if c.is_ascii_digit() {
            let start = i;
            while i < b.len() && (is_ident_byte(b[i]) || b[i] == b'.') {
                i += 1;
            }
            out.push_str(&body[start..i]);
        } else {
            let ch = body[i..].chars().next().unwrap_or(' ');
            out.push(ch);
            i += ch.len_utf8();
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blanks_align_and_keeps_positions() {
        let src =
            "struct __align__(16) S { float x; };\n__global__ void __launch_bounds__(256) k() {}";
        let (out, aligns) = blank_attributes(src);
        assert_eq!(out.len(), src.len());
        assert_eq!(aligns, vec![(7, 16)]);
        assert!(out.starts_with("struct               S {"));
        assert!(!out.contains("__launch_bounds__"));
    }

    #[test]
    fn substitutes_parameters_only_as_whole_tokens() {
        let params = vec!["r".to_string(), "c".to_string()];
        let args = vec!["ty".to_string(), "tx + 1".to_string()];
        assert_eq!(
            substitute("((r)*W + (c)) + rc", &params, &args).unwrap(),
            "((ty)*W + (tx + 1)) + rc"
        );
        assert!(substitute("a ## b", &params, &args).is_err());
    }

    #[test]
    fn parses_defines_like_nvcc() {
        let (n, m) = parse_define("N=1024").unwrap();
        assert_eq!((n.as_str(), m.body.as_str()), ("N", "1024"));
        assert_eq!(parse_define("DEBUG").unwrap().1.body, "1");
        assert!(parse_define("1X=2").is_none());
    }
}
