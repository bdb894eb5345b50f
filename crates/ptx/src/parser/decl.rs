//! Variable declarations, initializers and numeric literals [PTX ISA §4.5, §5.1–§5.4].

use super::{PResult, Parser};
use crate::ast::{Operand, StateSpace, Variable};
use crate::lexer::Tok;

/// The state space a directive word names, if any [PTX ISA §5.1].
pub(super) fn space(word: &str) -> Option<StateSpace> {
    Some(match word {
        ".reg" => StateSpace::Reg,
        ".sreg" => StateSpace::Sreg,
        ".const" => StateSpace::Const,
        ".global" => StateSpace::Global,
        ".local" => StateSpace::Local,
        ".param" => StateSpace::Param,
        ".shared" => StateSpace::Shared,
        ".tex" => StateSpace::Tex,
        _ => return None,
    })
}

/// A numeric literal, classified.
pub(super) enum Number {
    /// An integer's 64 bits.
    Int(u64),
    F32(u32),
    F64(u64),
}

/// Classifies a `Num` or `Float` token's text [PTX ISA §4.5.1]; `Err` says why it is not
/// a number.
pub(super) fn number(text: &str, is_float_token: bool) -> Result<Number, String> {
    if is_float_token {
        return decimal_float(text);
    }
    let lower = text.to_ascii_lowercase();
    if let Some(hex) = lower.strip_prefix("0f") {
        return fixed_hex(text, hex, 8).map(|b| Number::F32(b as u32));
    }
    if let Some(hex) = lower.strip_prefix("0d") {
        return fixed_hex(text, hex, 16).map(Number::F64);
    }
    let digits = lower.strip_suffix('u').unwrap_or(&lower);
    let (radix, body) = if let Some(h) = digits.strip_prefix("0x") {
        (16, h)
    } else if let Some(b) = digits.strip_prefix("0b") {
        (2, b)
    } else if digits.len() > 1
        && digits.starts_with('0')
        && digits.bytes().all(|b| b.is_ascii_digit())
    {
        (8, &digits[1..])
    } else if digits.contains('e') && !digits.starts_with("0x") {
        return decimal_float(text);
    } else {
        (10, digits)
    };
    if body.is_empty() || !body.chars().all(|c| c.is_digit(radix)) {
        return Err(format!("malformed number '{text}'"));
    }
    u64::from_str_radix(body, radix)
        .map(Number::Int)
        .map_err(|_| format!("integer literal '{text}' does not fit in 64 bits"))
}

fn fixed_hex(text: &str, hex: &str, digits: usize) -> Result<u64, String> {
    if hex.len() != digits || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(format!(
            "malformed float literal '{text}': expected exactly {digits} hex digits after '{}'",
            text.get(..2).unwrap_or("")
        ));
    }
    u64::from_str_radix(hex, 16).map_err(|_| format!("malformed float literal '{text}'"))
}

fn decimal_float(text: &str) -> Result<Number, String> {
    match text.parse::<f64>() {
        Ok(v) if v.is_finite() => Ok(Number::F64(v.to_bits())),
        _ => Err(format!("float literal '{text}' is out of range")),
    }
}

impl Parser<'_> {
    /// A non-negative integer literal.
    pub(super) fn uint(&mut self, what: &str) -> PResult<u64> {
        let off = self.offset();
        if !self.at(Tok::Num) {
            return Err(self.expected(what));
        }
        let text = self.text();
        match number(text, false) {
            Ok(Number::Int(v)) => {
                self.bump();
                Ok(v)
            }
            Ok(_) => Err(self.expected(&format!("{what} (an integer)"))),
            Err(msg) => Err(self.error_at(off, msg)),
        }
    }

    /// A non-negative integer literal that fits in 32 bits.
    pub(super) fn u32(&mut self, what: &str) -> PResult<u32> {
        let off = self.offset();
        let text = self.text();
        let v = self.uint(what)?;
        u32::try_from(v)
            .map_err(|_| self.error_at(off, format!("{what} '{text}' does not fit in 32 bits")))
    }

    /// A literal operand, the cursor on a `Num` or `Float` token; `negative` when a `-`
    /// preceded it (integers are then stored two's-complement, floats get their sign
    /// flipped).
    pub(super) fn literal(&mut self, negative: bool) -> PResult<Operand> {
        let off = self.offset();
        let is_float = match self.peek() {
            Some(Tok::Num) => false,
            Some(Tok::Float) => true,
            _ => return Err(self.expected("a number")),
        };
        let text = self.text();
        let n = number(text, is_float).map_err(|msg| self.error_at(off, msg))?;
        self.bump();
        Ok(match (n, negative) {
            (Number::Int(v), false) => Operand::Int(v as i64),
            (Number::Int(v), true) if v <= 1 << 63 => Operand::Int((v as i64).wrapping_neg()),
            (Number::Int(_), true) => {
                return Err(self.error_at(
                    off,
                    format!("integer literal '-{text}' does not fit in 64 bits"),
                ))
            }
            (Number::F32(b), neg) => Operand::F32(if neg { b ^ (1 << 31) } else { b }),
            (Number::F64(b), neg) => Operand::F64(if neg { b ^ (1 << 63) } else { b }),
        })
    }

    /// An integer offset after `+` or `-` in an address: `+16`, `+-4`, `-4`, `+0x10`.
    pub(super) fn signed_int(&mut self, negative: bool) -> PResult<i64> {
        let negative = negative ^ self.eat(Tok::Minus);
        if !self.at(Tok::Num) {
            return Err(self.expected("an integer offset"));
        }
        match self.literal(negative)? {
            Operand::Int(v) => Ok(v),
            _ => Err(self.error_at(self.offset(), "expected an integer offset, found a float")),
        }
    }

    /// `SPACE [.align N] [.ptr[.SPACE][.align N]] [.vN] .TYPE NAME[<N>][DIMS][= INIT]`, the
    /// cursor on the state space [PTX ISA §5.4]. `statement` allows several names
    /// (`.reg .b32 a, b;`) and requires the closing `;`; a parameter has one name and no `;`.
    pub(super) fn declaration(
        &mut self,
        linkage: Vec<String>,
        start: usize,
        statement: bool,
    ) -> PResult<Vec<Variable>> {
        let pos = self.pos_of(start);
        let space_word = self.text();
        let Some(var_space) = space(space_word) else {
            return Err(self.expected("a state space (.reg, .global, .shared, …)"));
        };
        self.bump();
        let mut align = None;
        let mut vector = 1;
        let mut ty: Option<String> = None;
        let mut ptr_space = None;
        while self.at(Tok::Dir) {
            let word = self.text();
            match word {
                ".align" => {
                    self.bump();
                    align = Some(self.u32("the alignment in bytes")?);
                }
                // `.ptr.global.align 16` [PTX ISA §5.1.6, kernel parameter attributes]: the pointee's space.
                ".ptr" => {
                    self.bump();
                    if self.at(Tok::Dir) {
                        if let Some(s) = space(self.text()) {
                            ptr_space = Some(s);
                            self.bump();
                        }
                    }
                }
                ".v2" | ".v4" | ".v8" => {
                    vector = word[2..].parse().unwrap_or(1);
                    self.bump();
                }
                // `.attribute(.managed)`, `.unified(…)`: not needed, skipped.
                ".attribute" | ".unified" => {
                    self.bump();
                    self.skip_parens()?;
                }
                _ if ty.is_none() => {
                    ty = Some(word[1..].to_string());
                    self.bump();
                }
                _ => return Err(self.expected("the variable's name")),
            }
        }
        let Some(ty) = ty else {
            return Err(self.expected(&format!(
                "a type after {space_word} (.b32, .f32, .u64, .pred, …)"
            )));
        };
        let mut out = Vec::new();
        loop {
            if !matches!(self.peek(), Some(Tok::Ident | Tok::Reg)) {
                return Err(self.expected("the variable's name"));
            }
            let name = self.text().to_string();
            self.bump();
            let mut range = None;
            if self.eat(Tok::Lt) {
                range = Some(self.u32("the register count")?);
                self.expect(Tok::Gt, "'>' after the register count")?;
            }
            let mut dims = Vec::new();
            while self.eat(Tok::LBracket) {
                if self.eat(Tok::RBracket) {
                    dims.push(None);
                } else {
                    dims.push(Some(self.uint("an array size")?));
                    self.expect(Tok::RBracket, "']' after the array size")?;
                }
            }
            let mut init = Vec::new();
            if self.eat(Tok::Eq) {
                self.initializer(&mut init)?;
            }
            out.push(Variable {
                space: var_space,
                ty: ty.clone(),
                vector,
                name,
                range,
                align,
                dims,
                init,
                linkage: linkage.clone(),
                ptr_space,
                pos,
            });
            if !statement {
                return Ok(out);
            }
            if self.eat(Tok::Comma) {
                continue;
            }
            self.expect(Tok::Semi, "',' or ';' after the declaration")?;
            return Ok(out);
        }
    }

    /// `( … )` skipped, balanced, without recursion.
    fn skip_parens(&mut self) -> PResult<()> {
        self.expect(Tok::LParen, "'('")?;
        let mut depth = 1usize;
        while depth > 0 {
            match self.bump().map(|t| t.kind) {
                Some(Tok::LParen) => depth += 1,
                Some(Tok::RParen) => depth -= 1,
                Some(_) => {}
                None => return Err(self.expected("')'")),
            }
        }
        Ok(())
    }

    /// An initializer after `=`: a value or `{…}` (nested braces flattened) [PTX ISA §5.4.4].
    fn initializer(&mut self, out: &mut Vec<Operand>) -> PResult<()> {
        if !self.at(Tok::LBrace) {
            out.push(self.init_value()?);
            return Ok(());
        }
        self.enter()?;
        self.bump();
        if !self.eat(Tok::RBrace) {
            loop {
                self.initializer(out)?;
                if self.eat(Tok::Comma) {
                    continue;
                }
                self.expect(Tok::RBrace, "',' or '}' in the initializer")?;
                break;
            }
        }
        self.leave();
        Ok(())
    }

    /// `12`, `-1`, `0f3F800000`, `sym`, `generic(sym)`, `sym+4`: symbols become
    /// `Operand::Symbol`, `sym+4` becomes `Operand::Address { base: sym, offset: 4 }`.
    fn init_value(&mut self) -> PResult<Operand> {
        match self.peek() {
            Some(Tok::Num | Tok::Float) => self.literal(false),
            Some(Tok::Minus) => {
                self.bump();
                self.literal(true)
            }
            Some(Tok::Ident) => {
                let mut name = self.text().to_string();
                self.bump();
                if name == "generic" && self.eat(Tok::LParen) {
                    let t = self.expect(Tok::Ident, "a symbol inside generic( )")?;
                    name = self.slice(t).to_string();
                    self.expect(Tok::RParen, "')' after the symbol")?;
                }
                let sym = Operand::Symbol(name);
                let mut offset: i64 = 0;
                let mut has_offset = false;
                loop {
                    let negative = if self.eat(Tok::Plus) {
                        false
                    } else if self.eat(Tok::Minus) {
                        true
                    } else {
                        break;
                    };
                    offset = offset.wrapping_add(self.signed_int(negative)?);
                    has_offset = true;
                }
                Ok(if has_offset {
                    Operand::Address {
                        base: Some(Box::new(sym)),
                        offset,
                    }
                } else {
                    sym
                })
            }
            _ => Err(self.expected("an initializer value (a number or a symbol)")),
        }
    }
}
