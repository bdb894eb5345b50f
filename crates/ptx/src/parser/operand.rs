//! Instructions and their operands [PTX ISA §6, §9].

use super::{PResult, Parser};
use crate::ast::{Guard, Instruction, Operand};
use crate::lexer::Tok;

impl Parser<'_> {
    /// `[@[!]PRED] OPCODE[.MOD]* [OPERAND[|OPERAND] {, …}] ;` [PTX ISA §9.1].
    pub(super) fn instruction(&mut self) -> PResult<Instruction> {
        let pos = self.here();
        let mut guard = None;
        if self.eat(Tok::At) {
            let negated = self.eat(Tok::Bang);
            if !matches!(self.peek(), Some(Tok::Reg | Tok::Ident)) {
                return Err(self.expected("a predicate register after '@'"));
            }
            guard = Some(Guard {
                negated,
                reg: self.text().to_string(),
            });
            self.bump();
        }
        let t = self.expect(Tok::Ident, "an opcode")?;
        let opcode = self.slice(t).to_string();
        let mut mods = Vec::new();
        while self.at(Tok::Dir) {
            mods.push(self.text()[1..].to_string());
            self.bump();
        }
        let mut operands = Vec::new();
        if !self.eat(Tok::Semi) {
            loop {
                operands.push(self.operand()?);
                // `setp … %p1|%p2, …` and `shfl … %r|%p, …`: two destinations.
                while self.eat(Tok::Pipe) {
                    operands.push(self.operand()?);
                }
                if self.eat(Tok::Comma) {
                    continue;
                }
                self.expect(Tok::Semi, "',' or ';' after an operand")?;
                break;
            }
        }
        Ok(Instruction {
            guard,
            opcode,
            mods,
            operands,
            pos,
        })
    }

    /// One operand [PTX ISA §6.4].
    fn operand(&mut self) -> PResult<Operand> {
        match self.peek() {
            Some(Tok::Reg) => {
                let r = Operand::Reg(self.text().to_string());
                self.bump();
                Ok(r)
            }
            Some(Tok::Ident) => {
                let text = self.text();
                self.bump();
                Ok(if text == "_" {
                    Operand::Sink
                } else {
                    Operand::Symbol(text.to_string())
                })
            }
            Some(Tok::Num | Tok::Float) => self.literal(false),
            Some(Tok::Minus) => {
                self.bump();
                if !matches!(self.peek(), Some(Tok::Num | Tok::Float)) {
                    return Err(self.expected("a number after '-'"));
                }
                self.literal(true)
            }
            Some(Tok::Bang) => {
                self.enter()?;
                self.bump();
                let inner = self.operand()?;
                self.leave();
                Ok(Operand::Not(Box::new(inner)))
            }
            Some(Tok::LBracket) => self.address(),
            Some(Tok::LBrace) => {
                let items = self.group(Tok::LBrace, Tok::RBrace, "'}'")?;
                Ok(Operand::Vector(items))
            }
            Some(Tok::LParen) => {
                let items = self.group(Tok::LParen, Tok::RParen, "')'")?;
                Ok(Operand::List(items))
            }
            _ => Err(self.expected("an operand")),
        }
    }

    /// `OPEN operand, … CLOSE` (possibly empty).
    fn group(&mut self, open: Tok, close: Tok, close_text: &str) -> PResult<Vec<Operand>> {
        self.enter()?;
        self.expect(open, "a group")?;
        let mut items = Vec::new();
        if !self.eat(close) {
            loop {
                items.push(self.operand()?);
                if self.eat(Tok::Comma) {
                    continue;
                }
                self.expect(close, &format!("',' or {close_text} in the operand list"))?;
                break;
            }
        }
        self.leave();
        Ok(items)
    }

    /// `[%rd1]`, `[%rd1+16]`, `[%rd1+-4]`, `[%rd1-4]`, `[sym+8]`, `[0x10]` [PTX ISA §6.4.1].
    /// Texture and surface operands `[tex, {%f1, %f2}]` become an `Address` whose base is
    /// an `Operand::List` of the items and whose offset is 0.
    fn address(&mut self) -> PResult<Operand> {
        self.enter()?;
        self.expect(Tok::LBracket, "'['")?;
        let mut base = match self.peek() {
            Some(Tok::Reg) => Some(Operand::Reg(self.text().to_string())),
            Some(Tok::Ident) => Some(Operand::Symbol(self.text().to_string())),
            Some(Tok::Num | Tok::Minus) => None,
            _ => return Err(self.expected("a register, a symbol or an integer inside '[ ]'")),
        };
        let mut offset: i64 = 0;
        if base.is_some() {
            self.bump();
        } else {
            offset = self.signed_int(false)?;
        }
        loop {
            let negative = if self.eat(Tok::Plus) {
                false
            } else if self.eat(Tok::Minus) {
                true
            } else {
                break;
            };
            offset = offset.wrapping_add(self.signed_int(negative)?);
        }
        if self.at(Tok::Comma) {
            // Texture/surface form: the first item was a plain operand.
            let first = match base.take() {
                Some(b) if offset == 0 => b,
                _ => return Err(self.expected("']' after the address")),
            };
            let mut items = vec![first];
            while self.eat(Tok::Comma) {
                items.push(self.operand()?);
            }
            base = Some(Operand::List(items));
        }
        self.expect(Tok::RBracket, "']' after the address")?;
        self.leave();
        Ok(Operand::Address {
            base: base.map(Box::new),
            offset,
        })
    }
}
