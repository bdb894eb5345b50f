//! Quick patterns (`analyze -e 'EXPR'`) and sweeps (`analyze --sweep NAME=A..B[:STEP]`).
//!
//! [`generate`] turns a one-line pattern such as `float a[]; a[threadIdx.x * 2]` into the
//! source of one kernel, [`KERNEL`], that the ordinary pipeline analyzes. Every piece of the
//! user's text is copied onto a line of its own at the same byte column it has in the `-e`
//! text, so a position the front end reports on such a line maps back to `-e:1:COL` with the
//! column unchanged ([`Quick::relocate`]).

use anyhow::{bail, Result};
use std::collections::HashSet;
use warpscope_report::Analysis;

/// The name of the generated kernel.
pub const KERNEL: &str = "pattern";

/// The file name the generated source is given; messages say `-e:LINE:COL`.
pub const FILE: &str = "-e";

/// Most values one `--sweep` may run.
pub const MAX_SWEEP_VALUES: usize = 4096;

/// A pattern turned into a kernel.
#[derive(Clone, Debug)]
pub struct Quick {
    /// CUDA source of one `__global__` kernel named [`KERNEL`].
    pub source: String,
    /// Identifiers of the access that were not declared: each is an `int` kernel parameter,
    /// in order of first use, and takes its value from `--arg NAME=V` or `--sweep`. (The
    /// command line reads them off the kernel's parameters; the tests read them here.)
    #[allow(dead_code)]
    free: Vec<String>,
    /// 1-based lines of `source` that hold `-e` text at its own columns.
    user_lines: Vec<u32>,
    /// The `-e` text, trimmed (of trailing `;` too), as reports show it.
    text: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Ident,
    Number,
    Punct,
    Literal,
}

#[derive(Clone, Copy, Debug)]
struct Tok {
    kind: Kind,
    /// Byte range in the `-e` text.
    start: usize,
    end: usize,
}

/// Words that start a declaration: storage qualifiers, cv-qualifiers and the type names the
/// front end knows (vector types are recognized by [`warpscope_cuda::types::is_vector_type_name`]).
#[rustfmt::skip]
const DECL_WORDS: &[&str] = &[
    "__shared__", "__constant__", "__device__", "extern", "static", "const", "volatile",
    "signed", "unsigned", "void", "bool", "char", "short", "int", "long", "float", "double",
    "uchar", "ushort", "uint", "ulong", "int8_t", "uint8_t", "int16_t", "uint16_t", "int32_t",
    "uint32_t", "int64_t", "uint64_t", "size_t", "ptrdiff_t", "ssize_t", "intptr_t",
    "uintptr_t", "half", "__half",
];

/// Identifiers of an expression that are never kernel parameters.
#[rustfmt::skip]
const NOT_FREE: &[&str] = &[
    "threadIdx", "blockIdx", "blockDim", "gridDim", "warpSize", "sizeof", "alignof", "true",
    "false", "nullptr", "static_cast", "reinterpret_cast", "const_cast", "dynamic_cast", "new",
    "delete", "this", "typename", "template", "operator", "return", "if", "else", "for",
    "while", "do", "switch", "case", "default", "break", "continue", "goto",
];

fn is_decl_word(w: &str) -> bool {
    DECL_WORDS.contains(&w) || warpscope_cuda::types::is_vector_type_name(w)
}

/// `-e:1:COL: msg`, COL being the 1-based byte column of `at` in the text.
fn at(pos: usize, msg: impl std::fmt::Display) -> anyhow::Error {
    anyhow::anyhow!("{FILE}:1:{}: {msg}", pos + 1)
}

fn tokenize(s: &str) -> Result<Vec<Tok>> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let start = i;
        let kind = if c.is_ascii_whitespace() {
            i += 1;
            continue;
        } else if c.is_ascii_alphabetic() || c == b'_' {
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            Kind::Ident
        } else if c.is_ascii_digit() || (c == b'.' && b.get(i + 1).is_some_and(u8::is_ascii_digit))
        {
            // A preprocessing number: digits, letters (suffixes, hex, exponents), dots, and
            // a sign right after an exponent letter.
            i += 1;
            while i < b.len() {
                let d = b[i];
                let sign =
                    (d == b'+' || d == b'-') && matches!(b[i - 1], b'e' | b'E' | b'p' | b'P');
                if !(d.is_ascii_alphanumeric() || d == b'_' || d == b'.' || sign) {
                    break;
                }
                i += 1;
            }
            Kind::Number
        } else if c == b'\'' || c == b'"' {
            i += 1;
            while i < b.len() && b[i] != c {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            if i >= b.len() {
                return Err(at(
                    start,
                    format!(
                        "unterminated {} literal",
                        if c == b'"' { "string" } else { "character" }
                    ),
                ));
            }
            i += 1;
            Kind::Literal
        } else if c.is_ascii_punctuation() {
            i += 1;
            Kind::Punct
        } else {
            let ch = s[i..].chars().next().unwrap_or('?');
            return Err(at(i, format!("unexpected character '{ch}'")));
        };
        out.push(Tok {
            kind,
            start,
            end: i,
        });
    }
    Ok(out)
}

/// Checks that `(`, `[` and `{` close in order within one statement.
fn check_brackets(s: &str, toks: &[Tok]) -> Result<()> {
    let mut stack: Vec<(u8, usize)> = Vec::new();
    for t in toks.iter().filter(|t| t.kind == Kind::Punct) {
        let c = s.as_bytes()[t.start];
        match c {
            b'(' | b'[' | b'{' => stack.push((c, t.start)),
            b')' | b']' | b'}' => {
                let want = match c {
                    b')' => b'(',
                    b']' => b'[',
                    _ => b'{',
                };
                match stack.pop() {
                    Some((o, _)) if o == want => {}
                    Some((o, p)) => {
                        return Err(at(
                            t.start,
                            format!(
                                "'{}' closes the '{}' opened at column {}",
                                c as char,
                                o as char,
                                p + 1
                            ),
                        ))
                    }
                    None => return Err(at(t.start, format!("'{}' closes nothing", c as char))),
                }
            }
            _ => {}
        }
    }
    if let Some((o, p)) = stack.pop() {
        return Err(at(
            p,
            format!("unbalanced '{}': it is never closed", o as char),
        ));
    }
    Ok(())
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Place {
    /// File scope, as written (`__constant__`, `__device__`).
    FileScope,
    /// File scope behind a `__device__` line: a sized global array.
    DeviceArray,
    /// A kernel parameter, as written (`float a[]`, `int n`).
    Param,
    /// Inside the kernel, as written (`__shared__`).
    Body,
}

struct Decl {
    name: String,
    place: Place,
    /// Byte range of the declaration in the text.
    start: usize,
    end: usize,
}

fn text_of<'a>(s: &'a str, t: &Tok) -> &'a str {
    &s[t.start..t.end]
}

fn is_punct(s: &str, t: Option<&Tok>, c: char) -> bool {
    t.is_some_and(|t| t.kind == Kind::Punct && text_of(s, t).starts_with(c))
}

const DECL_FORM: &str =
    "a declaration is [__shared__|__constant__] TYPE NAME[N]... (or TYPE NAME[] for a global array)";

fn parse_decl(s: &str, toks: &[Tok]) -> Result<Decl> {
    let stop = toks
        .iter()
        .position(|t| t.kind == Kind::Punct && matches!(text_of(s, t), "[" | "="))
        .unwrap_or(toks.len());
    if let Some(t) = toks[..stop].iter().find(|t| t.kind != Kind::Ident) {
        let w = text_of(s, t);
        let hint = if w == "*" {
            "; pointers are not declared: write TYPE NAME[] for a global array"
        } else {
            ""
        };
        return Err(at(
            t.start,
            format!("unexpected '{w}' in a declaration{hint}; {DECL_FORM}"),
        ));
    }
    let first = &toks[0];
    if stop < 2 {
        return Err(at(
            first.start,
            format!("'{}' declares no name; {DECL_FORM}", text_of(s, first)),
        ));
    }
    let name_tok = &toks[stop - 1];
    let name = text_of(s, name_tok).to_string();
    let words: Vec<&str> = toks[..stop - 1].iter().map(|t| text_of(s, t)).collect();
    if is_decl_word(&name) {
        return Err(at(
            name_tok.start,
            format!("'{name}' is a type or qualifier, not a name; {DECL_FORM}"),
        ));
    }
    if !words.iter().any(|w| {
        !matches!(
            *w,
            "__shared__"
                | "__constant__"
                | "__device__"
                | "extern"
                | "static"
                | "const"
                | "volatile"
        )
    }) {
        return Err(at(
            first.start,
            format!("the declaration of '{name}' has no type; {DECL_FORM}"),
        ));
    }
    // The dimensions: `[...]` groups, then maybe an initializer.
    let mut dims = 0;
    let mut first_empty = false;
    let mut i = stop;
    while i < toks.len() && is_punct(s, toks.get(i), '[') {
        let mut depth = 0;
        let open = i;
        while i < toks.len() {
            match text_of(s, &toks[i]) {
                "[" => depth += 1,
                "]" => {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                }
                _ => {}
            }
            i += 1;
        }
        if dims == 0 {
            first_empty = i == open + 1;
        }
        dims += 1;
        i += 1;
    }
    let has_init = is_punct(s, toks.get(i), '=');
    if i < toks.len() && !has_init {
        return Err(at(
            toks[i].start,
            format!(
                "unexpected '{}' after the declaration of '{name}'; {DECL_FORM}",
                text_of(s, &toks[i])
            ),
        ));
    }
    let has = |w: &str| words.contains(&w);
    let place = if has("__shared__") {
        Place::Body
    } else if has("__constant__") || has("__device__") {
        Place::FileScope
    } else if has("extern") || has("static") {
        return Err(at(
            first.start,
            format!("'extern' and 'static' go with __shared__ only; {DECL_FORM}"),
        ));
    } else if has_init {
        return Err(at(
            toks[i].start,
            format!("'{name}' cannot have an initializer: it is a kernel argument or a global array; declare it __constant__ to give it values"),
        ));
    } else if dims == 0 || first_empty {
        Place::Param
    } else {
        Place::DeviceArray
    };
    Ok(Decl {
        name,
        place,
        start: first.start,
        end: toks.last().map_or(first.end, |t| t.end),
    })
}

/// Names of the `-D` macros (`NAME`, `NAME=VALUE`, `NAME(ARGS)=VALUE`), with the values of
/// object-like ones.
fn macros(defines: &[String]) -> Vec<(String, Option<String>)> {
    defines
        .iter()
        .map(|d| {
            let (head, value) = match d.split_once('=') {
                Some((h, v)) => (h, Some(v.to_string())),
                None => (d.as_str(), None),
            };
            match head.split_once('(') {
                Some((n, _)) => (n.trim().to_string(), None),
                None => (head.trim().to_string(), value),
            }
        })
        .collect()
}

/// The free identifiers of `toks` (see [`Quick::free`]), added to `free` in order.
/// `strict`: an undeclared identifier followed by `[` is an error.
fn free_idents(
    s: &str,
    toks: &[Tok],
    known: &HashSet<String>,
    strict: bool,
    free: &mut Vec<String>,
) -> Result<()> {
    for (i, t) in toks.iter().enumerate() {
        if t.kind != Kind::Ident {
            continue;
        }
        let w = text_of(s, t);
        let prev = i.checked_sub(1).and_then(|j| toks.get(j));
        let member = is_punct(s, prev, '.')
            || (is_punct(s, prev, '>') && i >= 2 && is_punct(s, toks.get(i - 2), '-'))
            || (is_punct(s, prev, ':') && i >= 2 && is_punct(s, toks.get(i - 2), ':'));
        let call = is_punct(s, toks.get(i + 1), '(');
        if member
            || call
            || known.contains(w)
            || NOT_FREE.contains(&w)
            || is_decl_word(w)
            || w.starts_with("__")
        {
            continue;
        }
        if strict && is_punct(s, toks.get(i + 1), '[') {
            return Err(at(
                t.start,
                format!("'{w}' is not declared: declare the array before the access, e.g. 'float {w}[]; {w}[threadIdx.x]'"),
            ));
        }
        if !free.iter().any(|f| f == w) {
            free.push(w.to_string());
        }
    }
    Ok(())
}

/// Turns the `-e` text into a kernel.
///
/// The text is `;`-separated statements: declarations, then one access expression, the last
/// statement. A declaration `[__shared__|__constant__|__device__] TYPE NAME[dims]` goes
/// inside the kernel (`__shared__`) or at file scope (`__constant__`, `__device__`); without a
/// qualifier `TYPE NAME[]` and `TYPE NAME` are kernel parameters (a global array with its own
/// allocation, sized with `--alloc`; a scalar needing `--arg`), and `TYPE NAME[N]...` is a
/// `__device__` array of that size, bounds-checked. The access is a statement of its own: a
/// load unless it assigns. `defines` are the `-D` flags, whose names are not parameters.
///
/// Errors, each `-e:1:COL: ...` with the column of the offending text: empty text, no access,
/// a declaration after the access or malformed, brackets that do not balance, a name
/// declared twice or reserved, an undeclared array.
pub fn generate(expr: &str, defines: &[String]) -> Result<Quick> {
    // One line: positions are byte columns of this text.
    let s: String = expr
        .chars()
        .map(|c| if c == '\n' || c == '\r' { ' ' } else { c })
        .collect();
    let toks = tokenize(&s)?;
    let stmts: Vec<&[Tok]> = toks
        .split(|t| t.kind == Kind::Punct && text_of(&s, t) == ";")
        .filter(|st| !st.is_empty())
        .collect();
    let Some((access, decls)) = stmts.split_last() else {
        bail!("-e: the pattern is empty; give declarations and one access, e.g. -e 'float a[]; a[blockIdx.x*blockDim.x + threadIdx.x]'");
    };
    for st in &stmts {
        check_brackets(&s, st)?;
    }
    let starts_decl = |st: &[Tok]| {
        st[0].kind == Kind::Ident
            && (is_decl_word(text_of(&s, &st[0]))
                || st.get(1).is_some_and(|t| t.kind == Kind::Ident))
    };
    if starts_decl(access) {
        return Err(at(
            access[0].start,
            "no access after the declarations: end with an expression such as 'a[threadIdx.x]' (a load) or 'a[threadIdx.x] = 0' (a store)",
        ));
    }
    let mut parsed: Vec<Decl> = Vec::new();
    for st in decls {
        if !starts_decl(st) {
            return Err(at(
                st[0].start,
                format!("only the last statement may be an access; this one is not a declaration ({DECL_FORM})"),
            ));
        }
        let d = parse_decl(&s, st)?;
        let reserved =
            d.name == KERNEL || NOT_FREE.contains(&d.name.as_str()) || d.name.starts_with("__");
        let name_pos = st
            .iter()
            .find(|t| text_of(&s, t) == d.name)
            .map_or(d.start, |t| t.start);
        if reserved {
            return Err(at(
                name_pos,
                format!("'{}' is a reserved name; choose another", d.name),
            ));
        }
        if parsed.iter().any(|p| p.name == d.name) {
            return Err(at(name_pos, format!("'{}' is declared twice", d.name)));
        }
        parsed.push(d);
    }

    let macros = macros(defines);
    let mut known: HashSet<String> = parsed.iter().map(|d| d.name.clone()).collect();
    known.extend(macros.iter().map(|(n, _)| n.clone()));
    let mut free = Vec::new();
    free_idents(&s, access, &known, true, &mut free)?;
    // Identifiers a macro's value brings into the access are parameters too.
    for (_, v) in &macros {
        if let Some(v) = v {
            if let Ok(t) = tokenize(v) {
                free_idents(v, &t, &known, false, &mut free)?;
            }
        }
    }

    // The kernel, each piece of user text on a line of its own at its own column.
    let mut g = Gen::default();
    let user = |start: usize, end: usize, tail: &str| {
        format!("{}{}{tail}", " ".repeat(start), &s[start..end])
    };
    for d in &parsed {
        match d.place {
            Place::FileScope => g.user(user(d.start, d.end, ";")),
            Place::DeviceArray => {
                g.line("__device__");
                g.user(user(d.start, d.end, ";"));
            }
            _ => {}
        }
    }
    g.line(&format!("__global__ void {KERNEL}("));
    let params: Vec<&Decl> = parsed.iter().filter(|d| d.place == Place::Param).collect();
    let nparams = params.len() + free.len();
    let mut k = 0;
    for d in &params {
        k += 1;
        g.user(user(d.start, d.end, if k < nparams { "," } else { "" }));
    }
    for f in &free {
        k += 1;
        g.line(&format!("int {f}{}", if k < nparams { "," } else { "" }));
    }
    g.line(") {");
    for d in parsed.iter().filter(|d| d.place == Place::Body) {
        g.user(user(d.start, d.end, ";"));
    }
    let (a0, a1) = (access[0].start, access[access.len() - 1].end);
    g.user(user(a0, a1, ";"));
    g.line("}");
    Ok(Quick {
        source: g.out,
        free,
        user_lines: g.user_lines,
        text: s
            .trim()
            .trim_end_matches(|c: char| c == ';' || c.is_whitespace())
            .to_string(),
    })
}

#[derive(Default)]
struct Gen {
    out: String,
    lines: u32,
    user_lines: Vec<u32>,
}

impl Gen {
    fn line(&mut self, l: &str) {
        self.out.push_str(l);
        self.out.push('\n');
        self.lines += 1;
    }
    fn user(&mut self, l: String) {
        self.line(&l);
        self.user_lines.push(self.lines);
    }
}

impl Quick {
    /// Rewrites every `-e:LINE:COL` of a message about the generated source to `-e:1:COL`
    /// where LINE holds `-e` text; a position on a generated line is named as such.
    pub fn relocate(&self, msg: &str) -> String {
        let pat = format!("{FILE}:");
        let mut out = String::new();
        let mut rest = msg;
        while let Some(i) = rest.find(&pat) {
            out.push_str(&rest[..i]);
            let after = &rest[i + pat.len()..];
            let digits = |t: &str| t.bytes().take_while(u8::is_ascii_digit).count();
            let nl = digits(after);
            let line: Option<u32> = after[..nl].parse().ok();
            let tail = &after[nl..];
            match (line, tail.strip_prefix(':')) {
                (Some(line), Some(t)) if digits(t) > 0 => {
                    let nc = digits(t);
                    let col = &t[..nc];
                    if self.user_lines.contains(&line) {
                        out.push_str(&format!("{FILE}:1:{col}"));
                    } else {
                        let text = self.source.lines().nth(line as usize - 1).unwrap_or("");
                        out.push_str(&format!(
                            "{FILE} (generated line {line}:{col}: '{}')",
                            text.trim()
                        ));
                    }
                    rest = &t[nc..];
                }
                _ => {
                    out.push_str(&pat);
                    rest = after;
                }
            }
        }
        out.push_str(rest);
        out
    }

    /// Makes a report of the generated kernel read as one of the `-e` text: the expression
    /// stands for the kernel name, `-e` for the file, sites (and their advice) are on line 1;
    /// a note says when
    /// the pattern made no memory access.
    pub fn fix_analysis(&self, a: &mut Analysis) {
        a.kernel = self.text.clone();
        a.source = FILE.to_string();
        for arch in &mut a.architectures {
            for s in &mut arch.sites {
                if self.user_lines.contains(&s.line) {
                    s.line = 1;
                }
            }
        }
        for l in &mut a.local_arrays {
            if self.user_lines.contains(&l.line) {
                l.line = 1;
            }
        }
        for s in &mut a.advice {
            if self.user_lines.contains(&s.line) {
                s.line = 1;
            }
        }
        if a.architectures.iter().all(|x| x.sites.is_empty()) {
            a.notes.push(
                "the pattern made no memory access (is every dimension of the array indexed?)"
                    .into(),
            );
        }
    }
}

impl Quick {
    /// [`Quick::fix_analysis`] for an explanation: its site, kernel and file read as the
    /// `-e` text's.
    pub fn fix_explanation(&self, e: &mut warpscope_report::explain::Explanation) {
        self.fix_analysis(&mut e.analysis);
        // The site's text already shows the access; the title needs no second copy.
        e.kernel = "pattern".into();
        e.source = FILE.to_string();
        if self.user_lines.contains(&e.line) {
            e.line = 1;
        }
    }
}

/// `--sweep NAME=A..B[:STEP]`: the values A, A+STEP, ... up to B.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sweep {
    pub name: String,
    pub values: Vec<i64>,
}

impl Sweep {
    /// Parses `NAME=A..B[:STEP]` (A ≤ B, STEP ≥ 1, default 1; negative bounds allowed).
    ///
    /// Errors: a malformed text, A > B, STEP < 1, more than [`MAX_SWEEP_VALUES`] values.
    pub fn parse(text: &str) -> Result<Sweep> {
        let form = "expected NAME=A..B or NAME=A..B:STEP, e.g. --sweep s=0..32";
        let Some((name, range)) = text.split_once('=') else {
            bail!("--sweep {text}: {form}");
        };
        let name = name.trim();
        let ident = name
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !ident {
            bail!("--sweep {text}: '{name}' is not a parameter name; {form}");
        }
        let Some((a, rest)) = range.split_once("..") else {
            bail!("--sweep {text}: {form}");
        };
        let (b, step) = match rest.split_once(':') {
            Some((b, st)) => (b, Some(st)),
            None => (rest, None),
        };
        let num = |v: &str, what: &str| -> Result<i64> {
            v.trim().parse().map_err(|_| {
                anyhow::anyhow!(
                    "--sweep {text}: {what} '{}' is not an integer; {form}",
                    v.trim()
                )
            })
        };
        let (a, b) = (num(a, "the start")?, num(b, "the end")?);
        let step = match step {
            Some(st) => num(st, "the step")?,
            None => 1,
        };
        if a > b {
            bail!("--sweep {text}: the range is empty: the start {a} is above the end {b}");
        }
        if step < 1 {
            bail!("--sweep {text}: the step must be at least 1");
        }
        let n = (b as i128 - a as i128) / step as i128 + 1;
        if n > MAX_SWEEP_VALUES as i128 {
            bail!("--sweep {text}: {n} values; at most {MAX_SWEEP_VALUES}, take a larger step");
        }
        let values = (0..n as i64).map(|k| a + k * step).collect();
        Ok(Sweep {
            name: name.to_string(),
            values,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gen(e: &str) -> Quick {
        generate(e, &[]).unwrap_or_else(|err| panic!("{e}: {err:#}"))
    }

    fn err(e: &str) -> String {
        match generate(e, &[]) {
            Ok(q) => panic!("{e}: expected an error, got\n{}", q.source),
            Err(x) => format!("{x:#}"),
        }
    }

    /// The line of the generated source holding `needle`.
    fn line_of(q: &Quick, needle: &str) -> (u32, usize) {
        let (i, l) = q
            .source
            .lines()
            .enumerate()
            .find(|(_, l)| l.contains(needle))
            .unwrap();
        (i as u32 + 1, l.find(needle).unwrap())
    }

    #[test]
    fn global_array_is_a_pointer_parameter_and_free_names_are_ints() {
        let e = "float a[]; a[(blockIdx.x*blockDim.x + threadIdx.x) * s + off]";
        let q = gen(e);
        assert_eq!(q.free, ["s", "off"]);
        assert!(q.source.contains("__global__ void pattern(\n"));
        assert!(
            q.source.contains("float a[],\nint s,\nint off\n) {\n"),
            "{}",
            q.source
        );
        // The access keeps its column of the -e text.
        let (line, col) = line_of(&q, "a[(blockIdx");
        assert_eq!(col, e.find("a[(").unwrap());
        assert!(q.user_lines.contains(&line));
        assert!(q
            .source
            .lines()
            .nth(line as usize - 1)
            .unwrap()
            .ends_with("+ off];"));
    }

    #[test]
    fn shared_constant_and_sized_arrays_are_placed() {
        let e = "__shared__ float t[32][33]; __constant__ int c[64]; double g[8][8]; t[threadIdx.x][threadIdx.y] = c[threadIdx.x] + g[1][2]";
        let q = gen(e);
        let src = &q.source;
        let kernel = src.find("__global__").unwrap();
        let shared = src.find("__shared__ float t[32][33];").unwrap();
        let constant = src.find("__constant__ int c[64];").unwrap();
        let device = src.find("__device__\n").unwrap();
        assert!(
            constant < kernel && device < kernel && shared > kernel,
            "{src}"
        );
        let padded = format!(
            "__device__\n{}double g[8][8];\n",
            " ".repeat(e.find("double").unwrap())
        );
        assert!(src[device..].starts_with(&padded), "{src}");
        assert!(q.free.is_empty());
        assert!(src.contains("pattern(\n) {"), "{src}");
    }

    #[test]
    fn scalar_declaration_is_a_typed_parameter() {
        let q = gen("size_t n; float a[]; a[n * threadIdx.x]");
        assert!(q.free.is_empty());
        assert!(q.source.contains("size_t n,\n"), "{}", q.source);
    }

    #[test]
    fn builtins_members_calls_literals_and_macros_are_not_parameters() {
        let q = generate(
            "float4 v[]; const float b[]; v[min(threadIdx.x, warpSize) + TILE].y = b[(int)1.5e+3f + 0x1Fu + sizeof(float2)]",
            &["TILE=K*2".to_string(), "DEBUG".into()],
        )
        .unwrap();
        // K comes from the value of -D TILE.
        assert_eq!(q.free, ["K"]);
    }

    #[test]
    fn report_text_is_trimmed() {
        assert_eq!(gen("  float a[]; a[0] ;; ").text, "float a[]; a[0]");
    }

    #[test]
    fn newlines_keep_columns() {
        let q = gen("float a[];\na[threadIdx.x]");
        let (_, col) = line_of(&q, "a[threadIdx.x]");
        assert_eq!(col, 11);
    }

    #[test]
    fn errors_point_into_the_expression() {
        assert!(err("").contains("empty"));
        assert!(err("  ; ;").contains("empty"));
        let e = err("float a[]; a[");
        assert!(e.starts_with("-e:1:13: unbalanced '['"), "{e}");
        let e = err("float a[]; a[(threadIdx.x])");
        assert!(
            e.starts_with("-e:1:26: ']' closes the '(' opened at column 14"),
            "{e}"
        );
        let e = err("float a[]; a[0])");
        assert!(e.starts_with("-e:1:16: ')' closes nothing"), "{e}");
        let e = err("float a[]");
        assert!(e.starts_with("-e:1:1: no access"), "{e}");
        let e = err("float a[]; a[0]; float b[]");
        assert!(e.starts_with("-e:1:18: no access"), "{e}");
        let e = err("a[0]; float a[]; a[1]");
        assert!(e.starts_with("-e:1:1: only the last statement"), "{e}");
        let e = err("float *a; a[0]");
        assert!(e.starts_with("-e:1:7: unexpected '*'"), "{e}");
        let e = err("float a[]; float a[]; a[0]");
        assert!(e.starts_with("-e:1:18: 'a' is declared twice"), "{e}");
        let e = err("float pattern[]; pattern[0]");
        assert!(e.starts_with("-e:1:7: 'pattern' is a reserved name"), "{e}");
        let e = err("float a[]; b[threadIdx.x]");
        assert!(e.starts_with("-e:1:12: 'b' is not declared"), "{e}");
        let e = err("float a[] x; a[0]");
        assert!(
            e.starts_with("-e:1:11: unexpected 'x' after the declaration"),
            "{e}"
        );
        let e = err("float a[4] = {1}; a[0]");
        assert!(e.contains("cannot have an initializer"), "{e}");
        let e = err("float a[]; a[threadIdx.x] + 'x");
        assert!(
            e.starts_with("-e:1:29: unterminated character literal"),
            "{e}"
        );
        let e = err("float a[]; a[threadIdx.x] ± 1");
        assert!(e.starts_with("-e:1:27: unexpected character '±'"), "{e}");
        let e = err("const a[]; a[0]");
        assert!(e.contains("'a' has no type"), "{e}");
    }

    #[test]
    fn positions_on_user_lines_map_to_line_one() {
        let q = gen("flot a[]; a[threadIdx.x]");
        let (line, _) = line_of(&q, "flot a[]");
        let msg = format!("-e:{line}:1: unknown type 'flot'");
        assert_eq!(q.relocate(&msg), "-e:1:1: unknown type 'flot'");
        let (aline, _) = line_of(&q, "a[threadIdx.x];");
        let msg = format!("ctx: -e:{aline}:11: x; -e:{line}:3: y; -e: z");
        assert_eq!(q.relocate(&msg), "ctx: -e:1:11: x; -e:1:3: y; -e: z");
        assert_eq!(
            q.relocate("-e:1:2: w"),
            "-e (generated line 1:2: '__global__ void pattern('): w"
        );
    }

    #[test]
    fn sweep_ranges() {
        let s = Sweep::parse("s=0..32").unwrap();
        assert_eq!(s.name, "s");
        assert_eq!(s.values, (0..=32).collect::<Vec<i64>>());
        assert_eq!(Sweep::parse("off=-4..4:3").unwrap().values, [-4, -1, 2]);
        assert_eq!(Sweep::parse("n=7..7").unwrap().values, [7]);
        assert_eq!(Sweep::parse("n=0..4095").unwrap().values.len(), 4096);
        for (bad, needle) in [
            ("s=5..1", "range is empty"),
            ("s=0..4096", "4097 values"),
            ("s=0..8:0", "step must be at least 1"),
            ("s=0..8:-1", "step must be at least 1"),
            ("s0..8", "expected NAME=A..B"),
            ("s=0-8", "expected NAME=A..B"),
            ("=0..8", "not a parameter name"),
            ("1s=0..8", "not a parameter name"),
            ("s=a..8", "the start 'a' is not an integer"),
            ("s=0..", "the end '' is not an integer"),
        ] {
            let e = format!("{:#}", Sweep::parse(bad).unwrap_err());
            assert!(e.contains(needle), "{bad}: {e}");
        }
        // Extreme bounds must not overflow.
        assert!(Sweep::parse("s=-9223372036854775808..9223372036854775807").is_err());
        assert_eq!(
            Sweep::parse("s=9223372036854775806..9223372036854775807")
                .unwrap()
                .values
                .len(),
            2
        );
    }
}
