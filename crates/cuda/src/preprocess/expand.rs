//! Macro replacement (C17 §6.10.3): object- and function-like macros, `#` stringizing,
//! `##` pasting, variadic `__VA_ARGS__`, and rescanning with hide sets (a macro is not
//! replaced again inside its own expansion, §6.10.3.4).

use super::lex::{tokenize, Kind};
use super::map::File;
use std::collections::{HashMap, VecDeque};

/// A token on its way through the preprocessor.
#[derive(Clone, Debug)]
pub struct PTok {
    pub kind: Kind,
    pub text: String,
    /// White space came before it (for stringizing and output spacing).
    pub space_before: bool,
    /// Macros that must not be replaced in it again.
    pub hide: Vec<String>,
    /// The file (index in the source map) and byte range it stands for: its own bytes, or
    /// the whole macro use that produced it.
    pub file: usize,
    pub start: usize,
    pub end: usize,
    /// Its bytes are the file's own (not produced by a macro).
    pub verbatim: bool,
}

impl PTok {
    pub fn is(&self, punct: &str) -> bool {
        self.kind == Kind::Punct && self.text == punct
    }
    pub fn is_space(&self) -> bool {
        matches!(self.kind, Kind::Space | Kind::Newline)
    }
}

/// A `#define`d macro.
#[derive(Clone, Debug)]
pub struct Define {
    /// `Some` for a function-like macro: its parameters (`__VA_ARGS__` last when variadic).
    pub params: Option<Vec<String>>,
    pub variadic: bool,
    /// The replacement list, without white-space tokens.
    pub body: Vec<PTok>,
}

/// Upper bound on tokens produced by macros in one run of text (the lines between two
/// directives, or one `#if` condition): stops runaway (exponential) macros, `#define A B B`,
/// `#define B C C`, … The largest expansion in the corpus's headers is under 2,000 tokens.
pub const MAX_TOKENS: usize = 1 << 18;

/// Upper bound on tokens produced by macros in a whole file, its headers included: a macro
/// of [`MAX_TOKENS`] tokens used on every other line would otherwise produce gigabytes.
pub const MAX_TOTAL_TOKENS: usize = 1 << 22;

/// Deepest nesting of macro uses inside macro arguments (`F(F(F(x)))`): arguments are
/// expanded recursively, so this bounds the stack.
pub const MAX_ARG_DEPTH: usize = 200;

/// Expands macros in a token run.
pub struct Expander<'d> {
    pub defs: &'d HashMap<String, Define>,
    /// The files tokens come from, for `__LINE__` and `__FILE__`.
    pub files: &'d [File],
    produced: usize,
    /// Tokens macros may still produce in the whole file ([`MAX_TOTAL_TOKENS`] less what
    /// earlier runs produced).
    total_left: usize,
    depth: usize,
}

impl<'d> Expander<'d> {
    /// An expander of one run of text; `total_left` is what macros may still produce in the
    /// whole file ([`MAX_TOTAL_TOKENS`] less [`Expander::produced`] of earlier runs).
    pub fn new(defs: &'d HashMap<String, Define>, files: &'d [File], total_left: usize) -> Self {
        Expander {
            defs,
            files,
            produced: 0,
            total_left,
            depth: 0,
        }
    }

    /// Tokens macros produced so far in this run.
    pub fn produced(&self) -> usize {
        self.produced
    }

    /// The error for a run whose macros produced more than they may, if this one did.
    fn over_limit(&self, name: &str, more: usize) -> Option<String> {
        let n = self.produced.saturating_add(more);
        if n > MAX_TOKENS {
            Some(format!("macro {name} expands to more than {MAX_TOKENS} tokens (the limit of one expansion: a macro that doubles at each level?)"))
        } else if n > self.total_left {
            Some(format!("macros expand to more than {MAX_TOTAL_TOKENS} tokens in all in this file and its headers (the limit of one file), reached at this use of {name}: a large macro used many times?"))
        } else {
            None
        }
    }

    /// Replaces every macro use in `input` (white-space tokens pass through).
    ///
    /// Errors: a function-like macro use without its `)`, a wrong argument count, more than
    /// [`MAX_TOKENS`] tokens produced by macros in this run or more than the file's
    /// `total_left`; the message names the macro and the limit.
    pub fn expand(&mut self, input: Vec<PTok>) -> Result<Vec<PTok>, (PTok, String)> {
        let mut queue: VecDeque<PTok> = input.into();
        let mut out = Vec::new();
        while let Some(t) = queue.pop_front() {
            let def = match self.defs.get(&t.text) {
                Some(d) if t.kind == Kind::Ident && !t.hide.contains(&t.text) => d,
                None if t.kind == Kind::Ident
                    && matches!(t.text.as_str(), "__LINE__" | "__FILE__") =>
                {
                    // The line of the use (a macro's output: of the macro's use).
                    let file = self.files.get(t.file);
                    let (kind, text) = match (t.text.as_str(), file) {
                        ("__LINE__", Some(f)) => (
                            Kind::Number,
                            f.loc(t.start.min(f.text.len())).line.to_string(),
                        ),
                        (_, Some(f)) => (Kind::Literal, format!("{:?}", f.name)),
                        (_, None) => (Kind::Number, "0".to_string()),
                    };
                    out.push(PTok {
                        kind,
                        text,
                        verbatim: false,
                        ..t
                    });
                    continue;
                }
                _ => {
                    out.push(t);
                    continue;
                }
            };
            let name = t.text.clone();
            let (args, hide, end_tok) = match &def.params {
                None => (Vec::new(), with(&t.hide, &name), None),
                Some(_) => {
                    let Some(open) = queue.iter().position(|q| !q.is_space()) else {
                        out.push(t);
                        continue;
                    };
                    if !queue[open].is("(") {
                        out.push(t);
                        continue;
                    }
                    queue.drain(..=open);
                    let (args, rparen) = collect_args(&mut queue).ok_or_else(|| {
                        (
                            t.clone(),
                            format!("unterminated use of macro {name}: no closing ')'"),
                        )
                    })?;
                    let common: Vec<String> = t
                        .hide
                        .iter()
                        .filter(|h| rparen.hide.contains(h))
                        .cloned()
                        .collect();
                    (args, with(&common, &name), Some(rparen))
                }
            };
            let (file, start, end) = match &end_tok {
                Some(r) if t.verbatim && r.verbatim && r.file == t.file && r.end > t.start => {
                    (t.file, t.start, r.end)
                }
                _ => (t.file, t.start, t.end),
            };
            let args = match &def.params {
                Some(params) => {
                    fit_args(&name, params, def.variadic, args).map_err(|m| (t.clone(), m))?
                }
                None => Vec::new(),
            };
            let mut body = self
                .substitute(&name, def, &args)
                .map_err(|m| (t.clone(), m))?;
            if let Some(m) = self.over_limit(&name, body.len()) {
                return Err((t, m));
            }
            self.produced += body.len();
            for (k, b) in body.iter_mut().enumerate() {
                for h in &hide {
                    if !b.hide.contains(h) {
                        b.hide.push(h.clone());
                    }
                }
                b.file = file;
                b.start = start;
                b.end = end;
                b.verbatim = false;
                if k == 0 {
                    b.space_before = t.space_before;
                }
            }
            for b in body.into_iter().rev() {
                queue.push_front(b);
            }
        }
        Ok(out)
    }

    /// The replacement list of `def` with `args` substituted, stringized and pasted.
    fn substitute(
        &mut self,
        name: &str,
        def: &Define,
        args: &[Vec<PTok>],
    ) -> Result<Vec<PTok>, String> {
        let params: &[String] = def.params.as_deref().unwrap_or(&[]);
        let param = |t: &PTok| {
            (t.kind == Kind::Ident)
                .then(|| params.iter().position(|p| p == &t.text))
                .flatten()
        };
        let body = &def.body;
        let mut res: Vec<PTok> = Vec::new();
        let mut paste_next = false;
        let mut last_empty = false;
        let mut i = 0;
        while i < body.len() {
            let b = &body[i];
            let seq: Vec<PTok> =
                if def.params.is_some() && b.is("#") && body.get(i + 1).and_then(param).is_some() {
                    i += 1;
                    let k = param(&body[i]).unwrap_or(0);
                    vec![PTok {
                        kind: Kind::Literal,
                        text: stringize(&args[k]),
                        space_before: b.space_before,
                        ..b.clone()
                    }]
                } else if b.is("##") && i > 0 && i + 1 < body.len() {
                    paste_next = true;
                    i += 1;
                    continue;
                } else if let Some(k) = param(b) {
                    let pasted = paste_next || body.get(i + 1).is_some_and(|n| n.is("##"));
                    let mut s = if pasted {
                        args[k].clone()
                    } else {
                        if self.depth >= MAX_ARG_DEPTH {
                            return Err(format!(
                                "macro uses nested more than {MAX_ARG_DEPTH} deep in arguments"
                            ));
                        }
                        self.depth += 1;
                        let expanded = self.expand(args[k].clone());
                        self.depth -= 1;
                        expanded.map_err(|(_, m)| m)?
                    };
                    if let Some(f) = s.first_mut() {
                        f.space_before = b.space_before;
                    }
                    s
                } else {
                    vec![b.clone()]
                };
            i += 1;
            // A long argument substituted many times is bounded before it is built.
            if let Some(m) = self.over_limit(name, res.len() + seq.len()) {
                return Err(m);
            }
            if paste_next && !seq.is_empty() && !last_empty {
                if let Some(lhs) = res.pop() {
                    let joined = format!("{}{}", lhs.text, seq[0].text);
                    let toks: Vec<_> = tokenize(&joined);
                    if toks.len() != 1 {
                        return Err(format!(
                            "pasting '{}' and '{}' does not give a valid token",
                            lhs.text, seq[0].text
                        ));
                    }
                    res.push(PTok {
                        kind: toks[0].kind,
                        text: joined,
                        ..lhs
                    });
                    res.extend(seq.into_iter().skip(1));
                    paste_next = false;
                    last_empty = false;
                    continue;
                }
            }
            paste_next = false;
            last_empty = seq.is_empty();
            res.extend(seq);
        }
        Ok(res)
    }
}

fn with(set: &[String], name: &str) -> Vec<String> {
    let mut v = set.to_vec();
    if !v.iter().any(|h| h == name) {
        v.push(name.to_string());
    }
    v
}

/// Reads a macro's arguments after its `(`: returns them (white space dropped, recorded in
/// `space_before`) and the `)`.
fn collect_args(queue: &mut VecDeque<PTok>) -> Option<(Vec<Vec<PTok>>, PTok)> {
    let mut args = vec![Vec::new()];
    let mut depth = 0usize;
    let mut space = false;
    while let Some(mut t) = queue.pop_front() {
        if t.is_space() {
            space = true;
            continue;
        }
        t.space_before = t.space_before || space;
        space = false;
        if t.is(")") && depth == 0 {
            return Some((args, t));
        }
        if t.is("(") {
            depth += 1;
        } else if t.is(")") {
            depth -= 1;
        } else if t.is(",") && depth == 0 {
            args.push(Vec::new());
            continue;
        }
        if let Some(a) = args.last_mut() {
            a.push(t);
        }
    }
    None
}

/// Matches arguments to parameters: `()` is no argument for a macro without parameters;
/// the variadic parameter takes the rest, commas included.
fn fit_args(
    name: &str,
    params: &[String],
    variadic: bool,
    mut args: Vec<Vec<PTok>>,
) -> Result<Vec<Vec<PTok>>, String> {
    if params.is_empty() && args.len() == 1 && args[0].is_empty() {
        args.clear();
    }
    if variadic && args.len() + 1 == params.len() {
        args.push(Vec::new());
    }
    if variadic && args.len() > params.len() {
        let rest = args.split_off(params.len() - 1);
        let mut joined = Vec::new();
        for (k, a) in rest.into_iter().enumerate() {
            if k > 0 {
                if let Some(first) = a.first() {
                    joined.push(PTok {
                        kind: Kind::Punct,
                        text: ",".into(),
                        space_before: false,
                        ..first.clone()
                    });
                }
            }
            joined.extend(a);
        }
        args.push(joined);
    }
    if args.len() != params.len() {
        return Err(format!(
            "macro {name} takes {} argument{}, {} given",
            params.len(),
            if params.len() == 1 { "" } else { "s" },
            args.len()
        ));
    }
    Ok(args)
}

/// `#x`: the argument's spelling as a string literal (C17 §6.10.3.2).
fn stringize(arg: &[PTok]) -> String {
    let mut s = String::from("\"");
    for (k, t) in arg.iter().enumerate() {
        if k > 0 && t.space_before {
            s.push(' ');
        }
        if t.kind == Kind::Literal {
            for c in t.text.chars() {
                if c == '"' || c == '\\' {
                    s.push('\\');
                }
                s.push(c);
            }
        } else {
            s.push_str(&t.text);
        }
    }
    s.push('"');
    s
}
