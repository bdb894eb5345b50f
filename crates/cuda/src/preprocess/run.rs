//! Phase 4 (C17 §6.10): directives, conditional inclusion, `#include`, and the output text
//! with its [`SourceMap`].

use super::expand::{Define, Expander, PTok, MAX_TOTAL_TOKENS};
use super::expr::evaluate;
use super::lex::{tokenize, Kind};
use super::map::{File, Piece, SourceMap};
use crate::error::{Error, Result};
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

/// Deepest `#include` nesting accepted (an include cycle without a guard stops here).
pub const MAX_INCLUDE_DEPTH: usize = 200;

/// Headers read in one file, counting each time one is read again (a header skipped by
/// `#pragma once` or its include guard is not read, and does not count): a header included
/// 10,000 times without a guard, or a tree of headers that each include the next twice
/// (2^20 reads), stops here. Real kernels read tens; CUTLASS's largest units a few hundred.
pub const MAX_INCLUDES: usize = 4_096;

/// Bytes of preprocessed text one file may become, its headers and macros included, and the
/// largest header read: 64 MiB, a hundred times the largest kernel file in the corpus. The
/// output keeps a position map entry per token, several times its own size.
pub const MAX_OUTPUT_BYTES: usize = 64 << 20;

/// Headers the source path never reads: the C and C++ standard library and the CUDA
/// runtime, whose declarations the interpreter knows itself (or which hold host code).
/// An `#include` of one of these, with `"…"` or `<…>`, adds nothing.
pub const SYSTEM_HEADERS: &[&str] = &[
    "assert.h",
    "ctype.h",
    "errno.h",
    "float.h",
    "limits.h",
    "math.h",
    "stdarg.h",
    "stdbool.h",
    "stddef.h",
    "stdint.h",
    "stdio.h",
    "stdlib.h",
    "string.h",
    "time.h",
    "unistd.h",
    "malloc.h",
    "inttypes.h",
    "cassert",
    "cctype",
    "cfloat",
    "climits",
    "cmath",
    "cstdarg",
    "cstddef",
    "cstdint",
    "cstdio",
    "cstdlib",
    "cstring",
    "ctime",
    "algorithm",
    "array",
    "chrono",
    "iostream",
    "fstream",
    "sstream",
    "iomanip",
    "string",
    "vector",
    "memory",
    "utility",
    "limits",
    "type_traits",
    "numeric",
    "functional",
    "random",
    "map",
    "set",
    "cuda.h",
    "cuda_runtime.h",
    "cuda_runtime_api.h",
    "device_launch_parameters.h",
    "device_functions.h",
    "cuda_fp16.h",
    "cuda_bf16.h",
    "cuda_fp8.h",
    "cooperative_groups.h",
    "mma.h",
    "cuda_pipeline.h",
    "cuda_awbarrier.h",
    "sm_20_atomic_functions.h",
    "sm_32_intrinsics.h",
    "vector_types.h",
    "vector_functions.h",
    "helper_cuda.h",
    "helper_functions.h",
    "helper_math.h",
    "helper_string.h",
    "helper_timer.h",
    "omp.h",
    "curand.h",
    "curand_kernel.h",
    "cublas_v2.h",
    "cufft.h",
];

/// Folders whose headers are system headers too (`<sys/time.h>`, `<cuda/pipeline>`).
const SYSTEM_FOLDERS: &[&str] = &["sys/", "cuda/", "cooperative_groups/", "thrust/", "cub/"];

/// Whether `name` is a header the source path skips ([`SYSTEM_HEADERS`]).
pub fn is_system_header(name: &str) -> bool {
    SYSTEM_HEADERS.contains(&name) || SYSTEM_FOLDERS.iter().any(|f| name.starts_with(f))
}

/// Whether `next` written right after `out` would read as one token with its end.
fn fuses(out: &str, next: &str) -> bool {
    let (Some(a), Some(b)) = (out.chars().last(), next.chars().next()) else {
        return false;
    };
    let word = |c: char| c.is_alphanumeric() || c == '_' || c == '.';
    let op = |c: char| "+-*/%<>=&|^!:#.".contains(c);
    (word(a) && word(b)) || (op(a) && op(b)) || a == '"' || a == '\''
}

/// What the preprocessor produced: the text the parser reads and its position map.
#[derive(Clone, Debug, Default)]
pub struct Output {
    pub text: String,
    pub map: SourceMap,
}

struct Frame {
    /// The enclosing region is kept.
    parent: bool,
    /// This branch is kept.
    active: bool,
    /// Some branch of this `#if` was kept already.
    taken: bool,
    else_seen: bool,
    /// The `#if`'s `#` (file index, byte).
    at: (usize, usize),
}

struct Pp<'a> {
    defs: HashMap<String, Define>,
    files: Vec<File>,
    out: String,
    pieces: Vec<Piece>,
    include_dirs: &'a [PathBuf],
    once: HashSet<PathBuf>,
    /// Headers whose whole text is inside `#ifndef GUARD` … `#endif`: their guard macro. A
    /// header is not read again while its guard is defined (GCC's multiple-include
    /// optimization), so guarded headers count once toward [`MAX_INCLUDES`].
    guards: HashMap<PathBuf, String>,
    /// Headers read so far ([`MAX_INCLUDES`]).
    includes: usize,
    /// Tokens macros produced so far ([`MAX_TOTAL_TOKENS`]).
    macro_tokens: usize,
}

/// Preprocesses `text` (the contents of `file`) with `defines` (`-D NAME`, `NAME=VALUE`,
/// `NAME(a,b)=BODY`) and `include_dirs` (`-I`, searched after the including file's folder
/// for `"…"`, alone for `<…>`).
///
/// Errors ([`Error::Semantic`] at the directive's or macro use's file:line:col,
/// [`Error::Argument`] for a bad `-D`): a `"…"` header found nowhere (the message lists the
/// folders searched), an include cycle deeper than [`MAX_INCLUDE_DEPTH`], more than
/// [`MAX_INCLUDES`] headers read, a header or an output over [`MAX_OUTPUT_BYTES`], macros
/// producing more than [`super::expand::MAX_TOKENS`] tokens in one run of text or
/// [`MAX_TOTAL_TOKENS`] in the file, `#error`, an unterminated `#if`, a bad `#if` expression
/// or macro use. Each message names the limit passed.
pub fn preprocess(
    file: &str,
    text: &str,
    defines: &[String],
    include_dirs: &[PathBuf],
) -> Result<Output> {
    let mut pp = Pp {
        defs: HashMap::new(),
        files: Vec::new(),
        out: String::with_capacity(text.len()),
        pieces: Vec::new(),
        include_dirs,
        once: HashSet::new(),
        guards: HashMap::new(),
        includes: 0,
        macro_tokens: 0,
    };
    let mut builtin =
        String::from("#define __CUDACC__ 1\n#define __NVCC__ 1\n#define __cplusplus 201703L\n");
    for d in defines {
        let (head, body) = d.split_once('=').unwrap_or((d.as_str(), "1"));
        let name_end = head.find('(').unwrap_or(head.len());
        let name = head[..name_end].trim();
        let valid = !name.is_empty()
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            && !name.starts_with(|c: char| c.is_ascii_digit())
            && !body.contains('\n');
        if !valid {
            return Err(Error::Argument(format!(
                "-D {d}: expected NAME, NAME=VALUE or NAME(PARAMS)=BODY"
            )));
        }
        builtin.push_str(&format!(
            "#define {name}{} {body}\n",
            head[name_end..].trim()
        ));
    }
    pp.files.push(File::new("<command line>".into(), builtin));
    pp.run_file(0, None, 0, true)?;
    let main_dir = Path::new(file)
        .parent()
        .map(Path::to_path_buf)
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or_else(|| PathBuf::from("."));
    pp.files.push(File::new(file.to_string(), text.to_string()));
    pp.run_file(1, Some(main_dir), 0, false)?;
    let map = SourceMap::new(pp.files, pp.pieces, &pp.out);
    Ok(Output { text: pp.out, map })
}

impl Pp<'_> {
    fn err(&self, file: usize, at: usize, msg: String) -> Error {
        let f = &self.files[file];
        Error::Semantic {
            file: f.name.clone(),
            loc: f.loc(at.min(f.text.len())),
            msg,
        }
    }

    /// Processes file `idx` (already in `files`), `dir` its folder for `"…"` includes.
    fn run_file(
        &mut self,
        idx: usize,
        dir: Option<PathBuf>,
        depth: usize,
        quiet: bool,
    ) -> Result<()> {
        let toks: Vec<PTok> = tokenize(&self.files[idx].text)
            .into_iter()
            .map(|t| PTok {
                kind: t.kind,
                text: t.text,
                space_before: false,
                hide: Vec::new(),
                file: idx,
                start: t.start,
                end: t.end,
                verbatim: true,
            })
            .collect();
        let mut stack: Vec<Frame> = Vec::new();
        let mut pending: Vec<PTok> = Vec::new();
        let mut i = 0;
        while i < toks.len() {
            let line_end = toks[i..]
                .iter()
                .position(|t| t.kind == Kind::Newline)
                .map_or(toks.len(), |p| i + p + 1);
            let line = &toks[i..line_end];
            i = line_end;
            let active = stack.last().is_none_or(|f| f.active);
            let first = line.iter().position(|t| t.kind != Kind::Space);
            if let Some(h) = first.filter(|&h| line[h].is("#")) {
                self.flush(&mut pending)?;
                let words: Vec<PTok> = line[h + 1..]
                    .iter()
                    .filter(|t| !t.is_space())
                    .cloned()
                    .collect();
                // Keep the file's lines: a directive leaves its newlines (spliced ones too).
                let raw = &self.files[idx].text;
                let span_end = line.last().map_or(line[h].end, |t| t.end).min(raw.len());
                let newlines = raw[line[h].start..span_end].matches('\n').count();
                if !quiet {
                    self.out.push_str(&"\n".repeat(newlines));
                }
                self.directive(idx, &dir, depth, &line[h], &words, &mut stack, active)?;
                continue;
            }
            if active && !quiet {
                pending.extend(line.iter().cloned());
            } else if !quiet {
                let raw = &self.files[idx].text;
                let end = line.last().map_or(line[0].end, |t| t.end).min(raw.len());
                let n = raw[line[0].start.min(end)..end].matches('\n').count();
                pending.push(PTok {
                    kind: Kind::Newline,
                    text: "\n".repeat(n),
                    ..line[0].clone()
                });
            }
        }
        self.flush(&mut pending)?;
        if let Some(f) = stack.last() {
            return Err(self.err(f.at.0, f.at.1, "#if without #endif".into()));
        }
        Ok(())
    }

    /// Expands the pending text and appends it to the output.
    fn flush(&mut self, pending: &mut Vec<PTok>) -> Result<()> {
        if pending.is_empty() {
            return Ok(());
        }
        let run = std::mem::take(pending);
        let expanded = self.expand(run)?;
        for t in expanded {
            // A macro's tokens keep their spacing, and a space where two would fuse (`- -x`).
            let after_space = self.out.is_empty() || self.out.ends_with(char::is_whitespace);
            if !t.verbatim && !after_space && (t.space_before || fuses(&self.out, &t.text)) {
                self.out.push(' ');
            }
            self.pieces.push(Piece {
                out: self.out.len(),
                file: t.file,
                start: t.start,
                end: t.end,
                verbatim: t.verbatim,
            });
            self.out.push_str(&t.text);
            if self.out.len() > MAX_OUTPUT_BYTES {
                return Err(self.err(
                    t.file,
                    t.start,
                    format!("the preprocessed text passes {MAX_OUTPUT_BYTES} bytes (64 MiB, the limit of one file with its headers and macros) here: headers included many times, or a large macro used many times?"),
                ));
            }
        }
        Ok(())
    }

    /// Expands the macros of `run`, counting what they produce toward [`MAX_TOTAL_TOKENS`].
    fn expand(&mut self, run: Vec<PTok>) -> Result<Vec<PTok>> {
        let mut ex = Expander::new(
            &self.defs,
            &self.files,
            MAX_TOTAL_TOKENS.saturating_sub(self.macro_tokens),
        );
        let expanded = ex.expand(run);
        self.macro_tokens += ex.produced();
        expanded.map_err(|(t, m)| self.err(t.file, t.start, m))
    }

    #[allow(clippy::too_many_arguments)]
    fn directive(
        &mut self,
        idx: usize,
        dir: &Option<PathBuf>,
        depth: usize,
        hash: &PTok,
        words: &[PTok],
        stack: &mut Vec<Frame>,
        active: bool,
    ) -> Result<()> {
        let Some(name) = words.first() else {
            return Ok(()); // the null directive
        };
        let rest = &words[1..];
        let at = |t: &PTok| (t.file, t.start);
        match name.text.as_str() {
            "if" | "ifdef" | "ifndef" => {
                let keep = active && self.condition(&name.text, name, rest)?;
                stack.push(Frame {
                    parent: active,
                    active: keep,
                    taken: keep,
                    else_seen: false,
                    at: at(hash),
                });
            }
            "elif" | "elifdef" | "elifndef" | "else" => {
                let Some(f) = stack.last() else {
                    return Err(self.err(idx, hash.start, format!("#{} without #if", name.text)));
                };
                if f.else_seen {
                    return Err(self.err(idx, hash.start, format!("#{} after #else", name.text)));
                }
                let (parent, taken) = (f.parent, f.taken);
                let keep = if name.text == "else" {
                    parent && !taken
                } else if parent && !taken {
                    let kind = name.text.trim_start_matches("el");
                    self.condition(kind, name, rest)?
                } else {
                    false
                };
                if let Some(f) = stack.last_mut() {
                    f.active = keep;
                    f.taken |= keep;
                    f.else_seen = name.text == "else";
                }
            }
            "endif" => {
                if stack.pop().is_none() {
                    return Err(self.err(idx, hash.start, "#endif without #if".into()));
                }
            }
            _ if !active => {}
            "define" => self.define(idx, hash, rest)?,
            "undef" => {
                if let Some(n) = rest.first() {
                    self.defs.remove(&n.text);
                }
            }
            "include" | "include_next" => self.include(idx, dir, depth, hash, rest)?,
            "pragma" => {
                if rest.first().is_some_and(|t| t.text == "once") {
                    if let Ok(p) = std::fs::canonicalize(&self.files[idx].name) {
                        self.once.insert(p);
                    }
                }
            }
            "error" => {
                let msg: Vec<&str> = rest.iter().map(|t| t.text.as_str()).collect();
                return Err(self.err(idx, hash.start, format!("#error {}", msg.join(" "))));
            }
            "line" | "warning" | "ident" | "sccs" => {}
            other => {
                return Err(self.err(
                    idx,
                    name.start,
                    format!("unknown preprocessor directive '#{other}'"),
                ))
            }
        }
        Ok(())
    }

    /// `#if expr`, `#ifdef NAME`, `#ifndef NAME`.
    fn condition(&mut self, kind: &str, name: &PTok, rest: &[PTok]) -> Result<bool> {
        match kind {
            "ifdef" | "def" | "ifndef" | "ndef" => {
                let Some(n) = rest.first().filter(|t| t.kind == Kind::Ident) else {
                    return Err(self.err(
                        name.file,
                        name.end,
                        format!("#{} needs a macro name", name.text),
                    ));
                };
                Ok(self.defs.contains_key(&n.text) != kind.ends_with("ndef"))
            }
            _ => {
                // `defined X` and `defined(X)` first, then macros, then evaluation.
                let mut toks = Vec::new();
                let mut k = 0;
                while k < rest.len() {
                    let t = &rest[k];
                    if t.kind == Kind::Ident && t.text == "defined" {
                        let (n, skip) = match (rest.get(k + 1), rest.get(k + 2), rest.get(k + 3)) {
                            (Some(o), Some(n), Some(c)) if o.is("(") && c.is(")") => (n, 4),
                            (Some(n), _, _) if n.kind == Kind::Ident => (n, 2),
                            _ => {
                                return Err(self.err(
                                    t.file,
                                    t.start,
                                    "'defined' needs a macro name".into(),
                                ))
                            }
                        };
                        toks.push(PTok {
                            kind: Kind::Number,
                            text: if self.defs.contains_key(&n.text) {
                                "1"
                            } else {
                                "0"
                            }
                            .into(),
                            ..t.clone()
                        });
                        k += skip;
                    } else {
                        toks.push(t.clone());
                        k += 1;
                    }
                }
                let expanded = self.expand(toks)?;
                let v = evaluate(&expanded).map_err(|m| self.err(name.file, name.start, m))?;
                Ok(v != 0)
            }
        }
    }

    fn define(&mut self, idx: usize, hash: &PTok, rest: &[PTok]) -> Result<()> {
        let Some(name) = rest.first().filter(|t| t.kind == Kind::Ident) else {
            return Err(self.err(idx, hash.start, "#define needs a macro name".into()));
        };
        let mut body_at = 1;
        let mut params = None;
        let mut variadic = false;
        // Function-like only when `(` follows the name with no space (C17 §6.10.3 ¶3).
        if rest
            .get(1)
            .is_some_and(|t| t.is("(") && t.start == name.end)
        {
            let mut ps = Vec::new();
            let mut k = 2;
            loop {
                let Some(t) = rest.get(k) else {
                    return Err(self.err(
                        idx,
                        name.start,
                        format!("missing ')' in the parameters of macro {}", name.text),
                    ));
                };
                k += 1;
                match t.kind {
                    _ if t.is(")") => break,
                    _ if t.is(",") => {}
                    _ if t.is("...") => {
                        variadic = true;
                        ps.push("__VA_ARGS__".to_string());
                    }
                    Kind::Ident if rest.get(k).is_some_and(|n| n.is("...")) => {
                        variadic = true;
                        ps.push(t.text.clone());
                        k += 1;
                    }
                    Kind::Ident => ps.push(t.text.clone()),
                    _ => {
                        return Err(self.err(
                            idx,
                            t.start,
                            format!("'{}' cannot be a parameter of macro {}", t.text, name.text),
                        ))
                    }
                }
            }
            params = Some(ps);
            body_at = k;
        }
        let mut body: Vec<PTok> = rest.get(body_at..).unwrap_or(&[]).to_vec();
        for k in 0..body.len() {
            let prev_end = if k == 0 {
                rest[body_at - 1].end
            } else {
                body[k - 1].end
            };
            body[k].space_before = body[k].start > prev_end;
        }
        self.defs.insert(
            name.text.clone(),
            Define {
                params,
                variadic,
                body,
            },
        );
        Ok(())
    }

    fn include(
        &mut self,
        idx: usize,
        dir: &Option<PathBuf>,
        depth: usize,
        hash: &PTok,
        rest: &[PTok],
    ) -> Result<()> {
        let (name, quoted) = match rest.first() {
            Some(t) if t.kind == Kind::Literal && t.text.starts_with('"') => {
                (t.text.trim_matches('"').to_string(), true)
            }
            Some(t) if t.is("<") => {
                let end = rest.iter().position(|t| t.is(">")).unwrap_or(rest.len());
                let parts: Vec<&str> = rest[1..end].iter().map(|t| t.text.as_str()).collect();
                (parts.concat(), false)
            }
            _ => {
                return Err(self.err(
                    idx,
                    hash.start,
                    "#include expects \"FILE\" or <FILE>".into(),
                ))
            }
        };
        if is_system_header(&name) {
            return Ok(());
        }
        let mut searched: Vec<PathBuf> = Vec::new();
        if quoted {
            searched.extend(dir.clone());
        }
        searched.extend(self.include_dirs.iter().cloned());
        let found = searched.iter().map(|d| d.join(&name)).find(|p| p.is_file());
        let Some(path) = found else {
            if !quoted {
                return Ok(()); // another system header: not the kernel's code
            }
            let list: Vec<String> = searched.iter().map(|d| d.display().to_string()).collect();
            return Err(self.err(
                idx,
                hash.start,
                format!(
                    "cannot find header \"{name}\" (searched: {}); add the folder that holds it with -I DIR",
                    list.join(", ")
                ),
            ));
        };
        if depth + 1 > MAX_INCLUDE_DEPTH {
            return Err(self.err(
                idx,
                hash.start,
                format!("#include nested more than {MAX_INCLUDE_DEPTH} deep (an include cycle? guard the header with #pragma once or #ifndef)"),
            ));
        }
        let key = std::fs::canonicalize(&path).unwrap_or_else(|_| path.clone());
        if self.once.contains(&key) {
            return Ok(());
        }
        if self
            .guards
            .get(&key)
            .is_some_and(|g| self.defs.contains_key(g))
        {
            return Ok(());
        }
        self.includes += 1;
        if self.includes > MAX_INCLUDES {
            return Err(self.err(
                idx,
                hash.start,
                format!("more than {MAX_INCLUDES} headers read (the limit of one file; {} is read again here): a header included many times without a guard? Guard it with #pragma once or #ifndef", path.display()),
            ));
        }
        let size = std::fs::metadata(&path).map_or(0, |m| m.len());
        if size > MAX_OUTPUT_BYTES as u64 {
            return Err(self.err(
                idx,
                hash.start,
                format!(
                    "header {} holds {size} bytes, over the limit of {MAX_OUTPUT_BYTES} bytes (64 MiB) for a header",
                    path.display()
                ),
            ));
        }
        let bytes = std::fs::read(&path).map_err(|e| {
            self.err(
                idx,
                hash.start,
                format!("cannot read header {}: {e}", path.display()),
            )
        })?;
        let text = String::from_utf8_lossy(&bytes).into_owned();
        let header_dir = path.parent().map(Path::to_path_buf);
        // Named as found: `dir/x.cuh`, or `x.cuh` beside a kernel given without a folder.
        let shown = path
            .strip_prefix(".")
            .unwrap_or(&path)
            .display()
            .to_string();
        self.files.push(File::new(shown, text));
        let h = self.files.len() - 1;
        self.run_file(h, header_dir, depth + 1, false)?;
        if let Some(g) = include_guard(&self.files[h].text) {
            self.guards.insert(key, g);
        }
        if !self.out.ends_with('\n') {
            self.out.push('\n');
        }
        Ok(())
    }
}

/// The macro of `text`'s include guard, when the whole file is `#ifndef NAME` (or `#if
/// !defined(NAME)`, `#if !defined NAME`) … its matching `#endif`, with nothing but white space
/// and comments outside, and no `#else` or `#elif` of that `#if` (C17 §6.10.1; GCC's
/// multiple-include optimization reads the same pattern).
fn include_guard(text: &str) -> Option<String> {
    let toks = tokenize(text);
    let mut guard = None;
    let mut depth = 0usize;
    let mut closed = false;
    let mut at_line_start = true;
    let mut i = 0;
    while i < toks.len() {
        let t = &toks[i];
        if matches!(t.kind, Kind::Space) {
            i += 1;
            continue;
        }
        if t.kind == Kind::Newline {
            at_line_start = true;
            i += 1;
            continue;
        }
        if closed {
            return None; // something after the guard's #endif
        }
        if !(at_line_start && t.kind == Kind::Punct && t.text == "#") {
            if guard.is_none() {
                return None; // code before the guard
            }
            at_line_start = false;
            i += 1;
            continue;
        }
        let words: Vec<&str> = toks[i + 1..]
            .iter()
            .take_while(|w| w.kind != Kind::Newline)
            .filter(|w| w.kind != Kind::Space)
            .map(|w| w.text.as_str())
            .collect();
        match words.first().copied() {
            Some("if" | "ifdef" | "ifndef") if guard.is_none() => {
                let name = match words.as_slice() {
                    ["ifndef", n] => *n,
                    ["if", "!", "defined", "(", n, ")"] | ["if", "!", "defined", n] => *n,
                    _ => return None,
                };
                guard = Some(name.to_string());
                depth = 1;
            }
            None if guard.is_none() => {}
            _ if guard.is_none() => return None,
            Some("if" | "ifdef" | "ifndef") => depth += 1,
            Some("else" | "elif" | "elifdef" | "elifndef") if depth == 1 => return None,
            Some("endif") => {
                depth = depth.saturating_sub(1);
                closed = depth == 0;
            }
            _ => {}
        }
        // On to the directive's newline.
        i += toks[i..]
            .iter()
            .position(|w| w.kind == Kind::Newline)
            .unwrap_or(toks.len() - i);
    }
    guard.filter(|_| closed)
}
