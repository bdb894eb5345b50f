//! Finding a kernel by the name a user gives: mangled, demangled, or short.

use cpp_demangle::{DemangleOptions, Symbol};

use crate::ast::{Function, Module};
use crate::error::LookupError;

/// The C++ name of an Itanium-mangled symbol, without the return type that templates
/// carry (`_Z6offsetIfEvPT_i` → `offset<float>(float*, int)`); `name` itself when it is
/// not a mangled C++ name (`add_kernel`).
pub fn demangle(name: &str) -> String {
    demangle_with(name, DemangleOptions::new().no_return_type()).unwrap_or_else(|| name.to_string())
}

fn demangle_with(name: &str, options: DemangleOptions) -> Option<String> {
    if !name.starts_with("_Z") {
        return None;
    }
    let sym = Symbol::new(name.as_bytes()).ok()?;
    sym.demangle_with_options(&options).ok()
}

/// Finds the `.entry` function `name` designates, from the most to the least specific
/// way of naming it (whitespace is ignored throughout):
/// 1. its mangled name (`_Z15transpose_naivePfPKfii`);
/// 2. its demangled signature, with or without a template's return type
///    (`transpose_naive(float*, float const*, int, int)`, `void offset<float>(float*, int)`);
/// 3. its name without parameters (`transpose_naive`, `offset<float>`, `ns::k`);
/// 4. that name without trailing template arguments and ABI tags (`offset`);
/// 5. that name without some or all of its namespaces (`k` for `ns::k`; `axpy` or
///    `__main__::axpy` for Numba's `cudapy::__main__::axpy[abi:…]`).
///
/// The first of these ways that matches any entry decides.
///
/// # Errors
/// [`LookupError::Ambiguous`] when several entries match the same way (overloads, template
/// instances), listing them; [`LookupError::Missing`] when none does, listing every entry.
pub fn find_entry<'m>(m: &'m Module, name: &str) -> Result<&'m Function, LookupError> {
    let query = squash(name);
    let entries: Vec<(&Function, Forms)> = m
        .functions
        .iter()
        .filter(|f| f.is_entry)
        .map(|f| (f, Forms::of(&f.name)))
        .collect();
    for tier in 0..Forms::TIERS {
        let hits: Vec<&(&Function, Forms)> = entries
            .iter()
            .filter(|(_, forms)| {
                forms
                    .tier(tier)
                    .iter()
                    .any(|f| *f == query || plain_literals(f) == plain_literals(&query))
            })
            .collect();
        match hits.as_slice() {
            [] => continue,
            [(f, _)] => return Ok(f),
            many => {
                return Err(LookupError::Ambiguous {
                    name: name.to_string(),
                    candidates: many
                        .iter()
                        .map(|(f, forms)| (f.name.clone(), forms.display.clone()))
                        .collect(),
                })
            }
        }
    }
    Err(LookupError::Missing {
        name: name.to_string(),
        entries: entries
            .iter()
            .map(|(f, forms)| (f.name.clone(), forms.display.clone()))
            .collect(),
    })
}

/// The ways of naming one entry, whitespace removed, by tier.
struct Forms {
    display: String,
    tiers: [Vec<String>; Forms::TIERS],
}

impl Forms {
    const TIERS: usize = 5;

    fn of(mangled: &str) -> Forms {
        let display = demangle(mangled);
        let full =
            demangle_with(mangled, DemangleOptions::new()).unwrap_or_else(|| mangled.to_string());
        let bare = demangle_with(mangled, DemangleOptions::new().no_params().no_return_type())
            .unwrap_or_else(|| mangled.to_string());
        let bare = squash(&bare);
        let plain = strip_template_args(&strip_abi_tags(&bare));
        let untagged = strip_abi_tags(&bare);
        let mut short: Vec<String> = qualifier_suffixes(&untagged)
            .chain(qualifier_suffixes(&plain))
            .map(str::to_string)
            .collect();
        short.sort();
        short.dedup();
        Forms {
            tiers: [
                vec![mangled.to_string()],
                vec![squash(&display), squash(&full)],
                vec![bare.clone(), strip_abi_tags(&bare)],
                vec![plain.clone()],
                short,
            ],
            display,
        }
    }

    fn tier(&self, i: usize) -> &[String] {
        self.tiers.get(i).map_or(&[], |v| v.as_slice())
    }
}

/// Integer template arguments as plain numbers: the demangler's `(unsignedint)256` and a
/// user's `256u` are both `256` (whitespace already removed).
fn plain_literals(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    while i < b.len() {
        // `(type)` right before a number: the cast the demangler writes.
        if b[i] == b'(' {
            if let Some(j) = s[i..].find(')').map(|j| i + j) {
                let inner = &s[i + 1..j];
                let next = b.get(j + 1).copied();
                if !inner.is_empty()
                    && inner.bytes().all(|c| c.is_ascii_alphabetic())
                    && matches!(next, Some(c) if c.is_ascii_digit() || c == b'-')
                {
                    i = j + 1;
                    continue;
                }
            }
        }
        // A number's `u`/`l` suffix before `,` or `>`.
        if b[i].is_ascii_digit() {
            let start = i;
            while i < b.len() && b[i].is_ascii_digit() {
                i += 1;
            }
            out.push_str(&s[start..i]);
            let suffix_end = (i..b.len())
                .find(|&k| !matches!(b[k], b'u' | b'U' | b'l' | b'L'))
                .unwrap_or(b.len());
            if suffix_end > i && matches!(b.get(suffix_end), Some(b',' | b'>')) {
                i = suffix_end;
            }
            continue;
        }
        out.push(b[i] as char);
        i += 1;
    }
    out
}

fn squash(s: &str) -> String {
    s.chars().filter(|c| !c.is_whitespace()).collect()
}

/// `kernel[abi:v1][abi:cw51c]` → `kernel`.
fn strip_abi_tags(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find("[abi:") {
        out.push_str(&rest[..i]);
        rest = match rest[i..].find(']') {
            Some(j) => &rest[i + j + 1..],
            None => "",
        };
    }
    out.push_str(rest);
    out
}

/// `offset<float>` → `offset`; names not ending in `>` are kept.
fn strip_template_args(s: &str) -> String {
    if !s.ends_with('>') {
        return s.to_string();
    }
    let mut depth = 0i32;
    for (i, c) in s.char_indices().rev() {
        match c {
            '>' => depth += 1,
            '<' => {
                depth -= 1;
                if depth == 0 {
                    return s[..i].to_string();
                }
            }
            _ => {}
        }
    }
    s.to_string()
}

/// `ns::inner::k` → `inner::k`, `k` (`::` inside template arguments is not a qualifier).
fn qualifier_suffixes(s: &str) -> impl Iterator<Item = &str> {
    let bytes = s.as_bytes();
    let mut cuts = Vec::new();
    let mut depth = 0i32;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'<' | b'(' => depth += 1,
            b'>' | b')' => depth -= 1,
            b':' if depth == 0 && bytes.get(i + 1) == Some(&b':') => {
                cuts.push(i + 2);
                i += 1;
            }
            _ => {}
        }
        i += 1;
    }
    cuts.into_iter().filter_map(move |c| s.get(c..))
}
