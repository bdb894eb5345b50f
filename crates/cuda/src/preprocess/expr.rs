//! `#if` constant expressions (C17 §6.10.1): integers in 64 bits with C's operators and
//! precedence; `defined` is resolved and macros replaced before this runs, and any
//! identifier left is 0 (`true` is 1, as in C++).

use super::expand::PTok;
use super::lex::Kind;

/// Evaluates `toks` (no white space). Errors name what is wrong with the expression.
pub fn evaluate(toks: &[PTok]) -> Result<i64, String> {
    if toks.is_empty() {
        return Err("#if with no expression".into());
    }
    let mut p = Parser { toks, at: 0 };
    let v = p.ternary(0)?;
    match p.toks.get(p.at) {
        None => Ok(v),
        Some(t) => Err(format!("unexpected '{}' in #if expression", t.text)),
    }
}

struct Parser<'t> {
    toks: &'t [PTok],
    at: usize,
}

/// Binary operators by precedence level, loosest first.
const LEVELS: [&[&str]; 10] = [
    &["||"],
    &["&&"],
    &["|"],
    &["^"],
    &["&"],
    &["==", "!="],
    &["<", ">", "<=", ">="],
    &["<<", ">>"],
    &["+", "-"],
    &["*", "/", "%"],
];

/// Deeper nesting than this is refused rather than risking the stack.
const MAX_DEPTH: usize = 256;

impl Parser<'_> {
    fn peek(&self) -> Option<&str> {
        self.toks
            .get(self.at)
            .filter(|t| t.kind == Kind::Punct)
            .map(|t| t.text.as_str())
    }

    fn ternary(&mut self, depth: usize) -> Result<i64, String> {
        if depth > MAX_DEPTH {
            return Err(format!("#if expression nested more than {MAX_DEPTH} deep"));
        }
        let c = self.binary(0, depth)?;
        if self.peek() != Some("?") {
            return Ok(c);
        }
        self.at += 1;
        let a = self.ternary(depth + 1)?;
        if self.peek() != Some(":") {
            return Err("expected ':' in #if expression".into());
        }
        self.at += 1;
        let b = self.ternary(depth + 1)?;
        Ok(if c != 0 { a } else { b })
    }

    fn binary(&mut self, level: usize, depth: usize) -> Result<i64, String> {
        if level == LEVELS.len() {
            return self.unary(depth);
        }
        let mut l = self.binary(level + 1, depth)?;
        while let Some(op) = self.peek().filter(|o| LEVELS[level].contains(o)) {
            let op = op.to_string();
            self.at += 1;
            let r = self.binary(level + 1, depth)?;
            l = match op.as_str() {
                "||" => (l != 0 || r != 0) as i64,
                "&&" => (l != 0 && r != 0) as i64,
                "|" => l | r,
                "^" => l ^ r,
                "&" => l & r,
                "==" => (l == r) as i64,
                "!=" => (l != r) as i64,
                "<" => (l < r) as i64,
                ">" => (l > r) as i64,
                "<=" => (l <= r) as i64,
                ">=" => (l >= r) as i64,
                "<<" => l.wrapping_shl(r as u32),
                ">>" => l.wrapping_shr(r as u32),
                "+" => l.wrapping_add(r),
                "-" => l.wrapping_sub(r),
                "*" => l.wrapping_mul(r),
                _ if r == 0 => return Err("division by zero in #if expression".into()),
                "/" => l.wrapping_div(r),
                _ => l.wrapping_rem(r),
            };
        }
        Ok(l)
    }

    fn unary(&mut self, depth: usize) -> Result<i64, String> {
        if depth > MAX_DEPTH {
            return Err(format!("#if expression nested more than {MAX_DEPTH} deep"));
        }
        let Some(t) = self.toks.get(self.at) else {
            return Err("#if expression ends early".into());
        };
        self.at += 1;
        match (t.kind, t.text.as_str()) {
            (Kind::Punct, "!") => Ok((self.unary(depth + 1)? == 0) as i64),
            (Kind::Punct, "~") => Ok(!self.unary(depth + 1)?),
            (Kind::Punct, "-") => Ok(self.unary(depth + 1)?.wrapping_neg()),
            (Kind::Punct, "+") => self.unary(depth + 1),
            (Kind::Punct, "(") => {
                let v = self.ternary(depth + 1)?;
                if self.peek() != Some(")") {
                    return Err("missing ')' in #if expression".into());
                }
                self.at += 1;
                Ok(v)
            }
            (Kind::Number, n) => integer(n),
            (Kind::Literal, l) if l.starts_with('\'') => character(l),
            (Kind::Ident, "true") => Ok(1),
            (Kind::Ident, _) => Ok(0),
            _ => Err(format!("unexpected '{}' in #if expression", t.text)),
        }
    }
}

/// An integer literal (`42`, `0x2A`, `052`, `0b101010`, `42UL`).
fn integer(n: &str) -> Result<i64, String> {
    let digits = n.trim_end_matches(['u', 'U', 'l', 'L']).replace('\'', "");
    let (radix, body) = if let Some(h) = digits
        .strip_prefix("0x")
        .or_else(|| digits.strip_prefix("0X"))
    {
        (16, h)
    } else if let Some(b) = digits
        .strip_prefix("0b")
        .or_else(|| digits.strip_prefix("0B"))
    {
        (2, b)
    } else if digits.len() > 1 && digits.starts_with('0') {
        (8, &digits[1..])
    } else {
        (10, digits.as_str())
    };
    u64::from_str_radix(body, radix)
        .map(|v| v as i64)
        .map_err(|_| format!("'{n}' is not an integer constant (#if takes integers only)"))
}

/// A character constant's value (`'a'`, `'\n'`).
fn character(l: &str) -> Result<i64, String> {
    let inner = l.trim_start_matches('\'').trim_end_matches('\'');
    let v = match inner.strip_prefix('\\') {
        Some("n") => 10,
        Some("t") => 9,
        Some("0") => 0,
        Some("\\") => 92,
        Some("'") => 39,
        Some(_) | None => inner.chars().next().map_or(0, |c| c as i64),
    };
    Ok(v)
}
