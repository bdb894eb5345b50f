//! Errors of the PTX front end.

use thiserror::Error;

/// A lexical or syntax error in PTX text, at a 1-based line and byte column.
///
/// `Display` writes `LINE:COL: message`; the message says what was expected and what was
/// found (`3:14: expected ';' after the operands, found identifier 'ld'`).
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[error("{line}:{col}: {message}")]
pub struct ParseError {
    /// 1-based line of the offending token.
    pub line: u32,
    /// 1-based column of the offending token, in bytes from the start of the line.
    pub col: u32,
    /// What was expected and what was found.
    pub message: String,
}

/// Why [`crate::find_entry`] found no single kernel for a name.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum LookupError {
    /// No `.entry` matches the name. `entries` lists every `.entry` of the module as
    /// (mangled, demangled) names.
    #[error("{}", missing_message(.name, .entries))]
    Missing {
        /// The name looked up, as given.
        name: String,
        /// Every `.entry` of the module: (mangled, demangled).
        entries: Vec<(String, String)>,
    },
    /// Several `.entry` functions match the name (overloads or template instances), as
    /// (mangled, demangled) names.
    #[error("{}", ambiguous_message(.name, .candidates))]
    Ambiguous {
        /// The name looked up, as given.
        name: String,
        /// The matching entries: (mangled, demangled).
        candidates: Vec<(String, String)>,
    },
}

fn entry_list(entries: &[(String, String)]) -> String {
    let items: Vec<String> = entries
        .iter()
        .map(|(mangled, demangled)| {
            if mangled == demangled {
                mangled.clone()
            } else {
                format!("{demangled} ({mangled})")
            }
        })
        .collect();
    items.join(", ")
}

fn missing_message(name: &str, entries: &[(String, String)]) -> String {
    if entries.is_empty() {
        format!("no kernel named `{name}`: the PTX has no .entry")
    } else {
        format!(
            "no kernel named `{name}`; the PTX's kernels are: {}",
            entry_list(entries)
        )
    }
}

fn ambiguous_message(name: &str, candidates: &[(String, String)]) -> String {
    let example = candidates.first().map(|(m, d)| (m.as_str(), d.as_str()));
    let hint = match example {
        Some((m, d)) if m != d => format!(
            "; name one by its full signature (e.g. `{d}`) or its mangled name (e.g. `{m}`)"
        ),
        Some((m, _)) => format!("; name one by its mangled name (e.g. `{m}`)"),
        None => String::new(),
    };
    format!(
        "`{name}` names {} kernels: {}{hint}",
        candidates.len(),
        entry_list(candidates)
    )
}
