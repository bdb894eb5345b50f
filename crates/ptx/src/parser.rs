//! Recursive-descent parser: tokens → [`Module`] [PTX ISA §4, §5, §11].
//!
//! Module level and function bodies live here; declarations and numbers in
//! `parser/decl.rs`, instructions and operands in `parser/operand.rs`.

mod decl;
mod operand;

use crate::ast::{Function, Loc, Module, Pos, Statement};
use crate::error::ParseError;
use crate::lexer::{tokenize, LineIndex, Tok, Token};

/// Deepest nesting of `{}` blocks, initializer braces and operand groups accepted; deeper
/// input is an error rather than a stack overflow.
pub const MAX_DEPTH: u32 = 256;

type PResult<T> = Result<T, ParseError>;

/// Linking directives that may precede a declaration [PTX ISA §11.6].
const LINKAGE: [&str; 4] = [".extern", ".visible", ".weak", ".common"];

/// Parses a whole module. See [`crate::parse`].
pub fn parse_module(src: &str) -> PResult<Module> {
    let lines = LineIndex::new(src);
    let toks = tokenize(src, &lines)?;
    let mut p = Parser {
        src,
        toks,
        pos: 0,
        lines,
        depth: 0,
    };
    let mut m = Module::default();
    while let Some(kind) = p.peek() {
        if kind != Tok::Dir {
            return Err(p.expected("a directive (.version, .target, .entry, .func, .global, …)"));
        }
        p.module_directive(&mut m)?;
    }
    Ok(m)
}

/// The cursor over the token list.
struct Parser<'a> {
    src: &'a str,
    toks: Vec<Token>,
    pos: usize,
    lines: LineIndex,
    depth: u32,
}

impl<'a> Parser<'a> {
    // ---- cursor ----

    fn peek(&self) -> Option<Tok> {
        self.toks.get(self.pos).map(|t| t.kind)
    }

    fn peek_at(&self, n: usize) -> Option<Tok> {
        self.toks.get(self.pos + n).map(|t| t.kind)
    }

    fn at(&self, kind: Tok) -> bool {
        self.peek() == Some(kind)
    }

    /// The current token's text ("" at the end).
    fn text(&self) -> &'a str {
        self.toks.get(self.pos).map_or("", |t| self.slice(*t))
    }

    fn slice(&self, t: Token) -> &'a str {
        self.src.get(t.start..t.end).unwrap_or("")
    }

    fn bump(&mut self) -> Option<Token> {
        let t = self.toks.get(self.pos).copied();
        if t.is_some() {
            self.pos += 1;
        }
        t
    }

    fn eat(&mut self, kind: Tok) -> bool {
        if self.at(kind) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    /// Consumes a token of `kind`, or fails with "expected `what`, found …".
    fn expect(&mut self, kind: Tok, what: &str) -> PResult<Token> {
        match self.toks.get(self.pos).copied() {
            Some(t) if t.kind == kind => {
                self.pos += 1;
                Ok(t)
            }
            _ => Err(self.expected(what)),
        }
    }

    /// Byte offset of the current token (the end of the text at the end).
    fn offset(&self) -> usize {
        self.toks.get(self.pos).map_or(self.src.len(), |t| t.start)
    }

    fn pos_of(&self, offset: usize) -> Pos {
        let (line, col) = self.lines.line_col(offset);
        Pos { line, col }
    }

    fn here(&self) -> Pos {
        self.pos_of(self.offset())
    }

    fn error_at(&self, offset: usize, message: impl Into<String>) -> ParseError {
        self.lines.error(offset, message)
    }

    /// "expected `what`, found <current token>" at the current token.
    fn expected(&self, what: &str) -> ParseError {
        self.error_at(
            self.offset(),
            format!("expected {what}, found {}", self.found()),
        )
    }

    /// Describes the current token for an error message.
    fn found(&self) -> String {
        let Some(t) = self.toks.get(self.pos).copied() else {
            return "end of input".to_string();
        };
        let mut text = self.slice(t).to_string();
        if text.chars().count() > 48 {
            text = text.chars().take(45).collect::<String>() + "…";
        }
        match t.kind {
            Tok::Ident => format!("identifier '{text}'"),
            Tok::Reg => format!("register '{text}'"),
            Tok::Dir => format!("directive '{text}'"),
            Tok::Num | Tok::Float => format!("number '{text}'"),
            Tok::Str => format!("string {text}"),
            _ => format!("'{text}'"),
        }
    }

    /// Enters one nesting level (block, brace, operand group).
    fn enter(&mut self) -> PResult<()> {
        if self.depth >= MAX_DEPTH {
            return Err(self.error_at(
                self.offset(),
                format!("nesting deeper than {MAX_DEPTH} levels: expected fewer nested braces"),
            ));
        }
        self.depth += 1;
        Ok(())
    }

    fn leave(&mut self) {
        self.depth = self.depth.saturating_sub(1);
    }

    /// Skips one statement whose content is not needed: up to and including its `;`, or
    /// through its balanced `{ … }` group. Stops before a `}` that closes an outer block.
    /// Returns the end offset of the last token kept (the `;` excluded).
    fn skip_statement(&mut self, what: &str) -> PResult<usize> {
        let start = self.offset();
        let mut end = start;
        let mut depth = 0usize;
        loop {
            let Some(t) = self.toks.get(self.pos).copied() else {
                return Err(self.expected(&format!("';' to end {what}")));
            };
            match t.kind {
                Tok::Semi if depth == 0 => {
                    self.pos += 1;
                    return Ok(end);
                }
                Tok::LBrace => depth += 1,
                Tok::RBrace if depth == 0 => return Ok(end),
                Tok::RBrace => {
                    depth -= 1;
                    if depth == 0 {
                        self.pos += 1;
                        return Ok(t.end);
                    }
                }
                _ => {}
            }
            end = t.end;
            self.pos += 1;
        }
    }

    // ---- module level ----

    fn module_directive(&mut self, m: &mut Module) -> PResult<()> {
        match self.text() {
            ".version" => {
                self.bump();
                m.version = Some(self.version()?);
            }
            ".target" => {
                self.bump();
                loop {
                    let t = self.expect(Tok::Ident, "a target name (sm_90, debug, …)")?;
                    m.target.push(self.slice(t).to_string());
                    if !self.eat(Tok::Comma) {
                        break;
                    }
                }
            }
            ".address_size" => {
                self.bump();
                m.address_size = Some(self.u32("the address size in bits")?);
            }
            ".file" => {
                self.bump();
                let n = self.u32("a file number")?;
                let t = self.expect(Tok::Str, "a quoted file name")?;
                m.files.push((n, unquote(self.slice(t))));
                // Optional `, timestamp, size` [PTX ISA §11.5, .file].
                while self.eat(Tok::Comma) {
                    self.uint("a timestamp or file size")?;
                }
            }
            ".section" => self.skip_section()?,
            ".loc" => {
                self.loc()?;
            }
            w if LINKAGE.contains(&w)
                || w == ".entry"
                || w == ".func"
                || decl::space(w).is_some() =>
            {
                self.linked_item(m)?;
            }
            // `.pragma`, `.alias`, and directives of later ISAs: kept out of the tree.
            _ => {
                let what = format!("the {} directive", self.text());
                self.bump();
                self.skip_statement(&what)?;
            }
        }
        Ok(())
    }

    /// `.version MAJOR.MINOR`: lexed as a decimal float.
    fn version(&mut self) -> PResult<(u32, u32)> {
        let off = self.offset();
        if !matches!(self.peek(), Some(Tok::Float | Tok::Num)) {
            return Err(self.expected("a version number MAJOR.MINOR"));
        }
        let text = self.text();
        self.bump();
        let (major, minor) = text.split_once('.').unwrap_or((text, "0"));
        match (major.parse(), minor.parse()) {
            (Ok(a), Ok(b)) => Ok((a, b)),
            _ => Err(self.error_at(
                off,
                format!("expected a version number MAJOR.MINOR, found '{text}'"),
            )),
        }
    }

    /// `.section NAME … { … }` [PTX ISA §11.5]: debug sections, skipped whole without
    /// recursion.
    fn skip_section(&mut self) -> PResult<()> {
        let start = self.offset();
        self.bump();
        while !self.at(Tok::LBrace) {
            if self.peek().is_none() || self.at(Tok::Semi) {
                return Err(self.expected("'{' to open the .section's content"));
            }
            self.bump();
        }
        let mut depth = 0usize;
        while let Some(t) = self.bump() {
            match t.kind {
                Tok::LBrace => depth += 1,
                Tok::RBrace => {
                    depth -= 1;
                    if depth == 0 {
                        return Ok(());
                    }
                }
                _ => {}
            }
        }
        let (l, c) = self.lines.line_col(start);
        Err(self.expected(&format!("'}}' to close the .section at {l}:{c}")))
    }

    /// Linking directives, then `.entry`, `.func` or a variable declaration.
    fn linked_item(&mut self, m: &mut Module) -> PResult<()> {
        let start = self.offset();
        let linkage = self.linkage();
        match self.text() {
            ".entry" | ".func" => {
                let f = self.function(linkage, start)?;
                m.functions.push(f);
            }
            w if decl::space(w).is_some() => {
                let vars = self.declaration(linkage, start, true)?;
                m.globals.extend(vars);
            }
            _ => return Err(self.expected(".entry, .func or a state space (.global, .shared, …)")),
        }
        Ok(())
    }

    fn linkage(&mut self) -> Vec<String> {
        let mut out = Vec::new();
        while self.at(Tok::Dir) && LINKAGE.contains(&self.text()) {
            out.push(self.text()[1..].to_string());
            self.bump();
        }
        out
    }

    /// `.entry NAME (PARAMS) DIRECTIVES { BODY }` or
    /// `.func (RETURNS) NAME (PARAMS) DIRECTIVES { BODY } | ;` [PTX ISA §11.2].
    fn function(&mut self, linkage: Vec<String>, start: usize) -> PResult<Function> {
        let is_entry = self.text() == ".entry";
        self.bump();
        let mut returns = Vec::new();
        if !is_entry && self.at(Tok::LParen) {
            returns = self.param_list()?;
        }
        let t = self.expect(
            Tok::Ident,
            if is_entry {
                "the kernel's name"
            } else {
                "the function's name"
            },
        )?;
        let name = self.slice(t).to_string();
        let params = if self.at(Tok::LParen) {
            self.param_list()?
        } else {
            Vec::new()
        };
        let mut directives = Vec::new();
        while self.at(Tok::Dir) {
            let word = self.text()[1..].to_string();
            self.bump();
            if word == "pragma" {
                self.skip_statement("the .pragma directive")?;
                continue;
            }
            let mut nums = Vec::new();
            if self.at(Tok::Num) {
                loop {
                    nums.push(self.uint("a number")?);
                    if !self.eat(Tok::Comma) {
                        break;
                    }
                }
            }
            directives.push((word, nums));
        }
        let body = if self.eat(Tok::Semi) {
            None
        } else if self.at(Tok::LBrace) {
            Some(self.block()?)
        } else {
            return Err(self.expected("'{' to open the body, or ';' after the declaration"));
        };
        Ok(Function {
            name,
            is_entry,
            returns,
            params,
            directives,
            body,
            linkage,
            pos: self.pos_of(start),
        })
    }

    /// `( .param … , .param … )`.
    fn param_list(&mut self) -> PResult<Vec<crate::ast::Variable>> {
        self.expect(Tok::LParen, "'('")?;
        let mut out = Vec::new();
        if self.eat(Tok::RParen) {
            return Ok(out);
        }
        loop {
            let start = self.offset();
            if !(self.at(Tok::Dir) && decl::space(self.text()).is_some()) {
                return Err(self.expected("a parameter declaration (.param, .reg)"));
            }
            out.extend(self.declaration(Vec::new(), start, false)?);
            if self.eat(Tok::Comma) {
                continue;
            }
            self.expect(Tok::RParen, "',' or ')' after a parameter")?;
            return Ok(out);
        }
    }

    // ---- function bodies ----

    /// `{ STATEMENTS }`, the cursor on `{`.
    fn block(&mut self) -> PResult<Vec<Statement>> {
        self.enter()?;
        let open = self.offset();
        self.expect(Tok::LBrace, "'{'")?;
        let mut out = Vec::new();
        loop {
            match self.peek() {
                None => {
                    let (l, c) = self.lines.line_col(open);
                    return Err(
                        self.expected(&format!("'}}' to close the block opened at {l}:{c}"))
                    );
                }
                Some(Tok::RBrace) => {
                    self.bump();
                    break;
                }
                Some(_) => self.statement(&mut out)?,
            }
        }
        self.leave();
        Ok(out)
    }

    /// One statement, appended to `out` (a declaration of several names appends one
    /// variable each).
    fn statement(&mut self, out: &mut Vec<Statement>) -> PResult<()> {
        let here = self.here();
        match self.peek() {
            Some(Tok::LBrace) => out.push(Statement::Block(self.block()?, here)),
            Some(Tok::Ident) if self.peek_at(1) == Some(Tok::Colon) => {
                let name = self.text().to_string();
                self.pos += 2;
                out.push(Statement::Label(name, here));
            }
            Some(Tok::Ident | Tok::At) => out.push(Statement::Instruction(self.instruction()?)),
            Some(Tok::Dir) => self.body_directive(out)?,
            _ => return Err(self.expected("an instruction, a label, a directive or '}'")),
        }
        Ok(())
    }

    fn body_directive(&mut self, out: &mut Vec<Statement>) -> PResult<()> {
        let start = self.offset();
        let here = self.here();
        let w = self.text();
        if w == ".loc" {
            out.push(Statement::Loc(self.loc()?));
            return Ok(());
        }
        if LINKAGE.contains(&w) || decl::space(w).is_some() {
            let linkage = self.linkage();
            if !(self.at(Tok::Dir) && decl::space(self.text()).is_some()) {
                return Err(self.expected("a state space (.reg, .local, .shared, …)"));
            }
            let vars = self.declaration(linkage, start, true)?;
            out.extend(vars.into_iter().map(Statement::Variable));
            return Ok(());
        }
        // `.pragma "nounroll";`, `.callprototype …;` and the like: kept as text.
        let what = format!("the {w} directive");
        self.bump();
        let end = self.skip_statement(&what)?;
        let text = self
            .src
            .get(start..end.max(start))
            .unwrap_or("")
            .trim_end()
            .to_string();
        out.push(Statement::Directive(text, here));
        Ok(())
    }

    /// `.loc FILE LINE COL [, function_name NAME] [, inlined_at FILE LINE COL]`; the cursor
    /// on `.loc` [PTX ISA §11.5, .loc].
    fn loc(&mut self) -> PResult<Loc> {
        let pos = self.here();
        self.bump();
        let file = self.u32("the .loc file number")?;
        let line = self.u32("the .loc line")?;
        let col = self.u32("the .loc column")?;
        let mut inlined_at = None;
        while self.at(Tok::Comma) && self.peek_at(1) == Some(Tok::Ident) {
            self.bump();
            let key = self.text();
            self.bump();
            match key {
                "function_name" => {
                    if !matches!(self.peek(), Some(Tok::Ident | Tok::Str)) {
                        return Err(self.expected("a function name label"));
                    }
                    self.bump();
                }
                "inlined_at" => {
                    let f = self.u32("the inlined_at file number")?;
                    let l = self.u32("the inlined_at line")?;
                    let c = self.u32("the inlined_at column")?;
                    inlined_at = Some((f, l, c));
                }
                _ => {
                    self.pos -= 1;
                    return Err(self.expected("function_name or inlined_at"));
                }
            }
        }
        Ok(Loc {
            file,
            line,
            col,
            inlined_at,
            pos,
        })
    }
}

/// `"a\"b"` → `a"b`.
fn unquote(s: &str) -> String {
    let inner = s
        .strip_prefix('"')
        .and_then(|s| s.strip_suffix('"'))
        .unwrap_or(s);
    let mut out = String::with_capacity(inner.len());
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            if let Some(n) = chars.next() {
                out.push(n);
            }
        } else {
            out.push(c);
        }
    }
    out
}
