//! Statements: structured control flow into branches. Divergent lanes meet again where the
//! executor's reconvergence (the branch's immediate post-dominator) puts them, which for
//! structured code is the end of the `if`, loop or `switch`.

use super::{imm, scalar, Gen};
use crate::error::Result;
use crate::ir::Stmt;
use crate::lower::with_stack;

/// Whether `s` holds a `return` of the function it is in.
pub(crate) fn has_return(s: &Stmt) -> bool {
    with_stack(|| match s {
        Stmt::Return(_) => true,
        Stmt::Block(v) => v.iter().any(has_return),
        Stmt::If { then, els, .. } => has_return(then) || els.as_deref().is_some_and(has_return),
        Stmt::Loop { body, .. } => has_return(body),
        Stmt::Switch { body, .. } => body.iter().any(has_return),
        Stmt::Expr(_) | Stmt::Break | Stmt::Continue | Stmt::Sync(_) => false,
    })
}

impl Gen<'_> {
    /// Lanes of the function that returned go to `target`.
    fn skip_if_done(&mut self, target: &str) -> Result<()> {
        let Some(done) = self.rets.last().and_then(|r| r.2.clone()) else {
            return Ok(());
        };
        let p = self.reg(super::Class::Pred);
        self.ins(format!("setp.ne.u32 {}, {}, 0", p.text, done.text))?;
        self.ins(format!("@{} bra {target}", p.text))
    }

    /// A loop's body: `break` leaves for `end`, `continue` (and `return`) for `next`,
    /// placed after the body; lanes that returned then leave the loop.
    fn loop_body(&mut self, body: &Stmt, end: &str, next: &str) -> Result<()> {
        self.brk.push(end.to_string());
        self.cont.push(Some(next.to_string()));
        self.skips.push(next.to_string());
        let r = self.stmt(body);
        self.brk.pop();
        self.cont.pop();
        self.skips.pop();
        r?;
        self.place_label(next);
        if has_return(body) {
            self.skip_if_done(end)?;
        }
        Ok(())
    }

    pub fn stmt(&mut self, s: &Stmt) -> Result<()> {
        with_stack(|| self.stmt_inner(s))
    }

    fn stmt_inner(&mut self, s: &Stmt) -> Result<()> {
        match s {
            Stmt::Expr(x) => {
                self.expr(x)?;
            }
            Stmt::Block(v) => {
                // Lanes that return skip the rest of the block: they wait at its end, where
                // the others arrive (the reconvergence the interpreter's masks gave).
                let end = self.label();
                self.skips.push(end.clone());
                let mut r = Ok(());
                for (i, st) in v.iter().enumerate() {
                    r = self.stmt(st);
                    if r.is_err() {
                        break;
                    }
                    if i + 1 < v.len() && has_return(st) {
                        r = self.skip_if_done(&end);
                        if r.is_err() {
                            break;
                        }
                    }
                }
                self.skips.pop();
                r?;
                self.place_label(&end);
            }
            Stmt::If { cond, then, els } => {
                let c = self.val(cond)?;
                let p = self.truth(&c, &cond.ty)?;
                let (other, end) = (self.label(), self.label());
                self.ins(format!("@!{} bra {other}", p.text))?;
                self.stmt(then)?;
                if let Some(e) = els {
                    self.ins(format!("bra {end}"))?;
                    self.place_label(&other);
                    self.stmt(e)?;
                    self.place_label(&end);
                } else {
                    self.place_label(&other);
                }
            }
            Stmt::Loop {
                cond,
                body,
                step,
                test_first,
                loc,
            } => {
                let (top, next, end) = (self.label(), self.label(), self.label());
                self.at(*loc);
                let first = self.next_line();
                if *test_first {
                    self.place_label(&top);
                    if let Some(c) = cond {
                        let v = self.val(c)?;
                        let p = self.truth(&v, &c.ty)?;
                        self.ins(format!("@!{} bra {end}", p.text))?;
                    }
                    self.loop_body(body, &end, &next)?;
                    if let Some(st) = step {
                        self.expr(st)?;
                    }
                    self.at(*loc);
                    self.ins(format!("bra {top}"))?;
                } else {
                    self.place_label(&top);
                    self.loop_body(body, &end, &next)?;
                    if let Some(st) = step {
                        self.expr(st)?;
                    }
                    match cond {
                        Some(c) => {
                            let v = self.val(c)?;
                            let p = self.truth(&v, &c.ty)?;
                            self.ins(format!("@{} bra {top}", p.text))?;
                        }
                        None => self.ins(format!("bra {top}"))?,
                    }
                }
                let last = self.next_line();
                self.loops.push((first, last, *loc));
                self.place_label(&end);
            }
            Stmt::Break => {
                if let Some(l) = self.brk.last().cloned() {
                    self.ins(format!("bra {l}"))?;
                }
            }
            Stmt::Continue => {
                if let Some(l) = self.cont.iter().rev().flatten().next().cloned() {
                    self.ins(format!("bra {l}"))?;
                }
            }
            Stmt::Return(v) => {
                let (_, result, done) = self.rets.last().cloned().unwrap_or_default();
                if let Some(x) = v {
                    let val = self.expr(x)?;
                    if let (Some(d), Some(val)) = (result, val) {
                        if scalar(&x.ty).is_some() {
                            let ret_ty = self
                                .inlining
                                .last()
                                .map(|f| self.prog.funcs[*f].ret.clone())
                                .unwrap_or_else(|| x.ty.clone());
                            let val = self.convert(val, &x.ty, &ret_ty)?;
                            self.mov(&d, &val)?;
                        } else {
                            self.copy(&d, &val, &x.ty)?;
                        }
                    }
                }
                if let Some(d) = done {
                    self.ins(format!("mov.u32 {}, 1", d.text))?;
                }
                let skip = self.skips.last().cloned().unwrap_or_default();
                self.ins(format!("bra {skip}"))?;
            }
            Stmt::Switch {
                value,
                cases,
                default,
                body,
            } => {
                let v = self.val(value)?;
                let v = self.in_reg(v)?;
                let sc = scalar(&value.ty);
                let ty = match sc {
                    Some(s) if s.class == super::Class::B64 => "b64",
                    _ => "b32",
                };
                let entries: Vec<String> = (0..body.len()).map(|_| self.label()).collect();
                let end = self.label();
                for (k, at) in cases {
                    let p = self.reg(super::Class::Pred);
                    let k = imm(*k, &value.ty);
                    self.ins(format!("setp.eq.{ty} {}, {}, {}", p.text, v.text, k.text))?;
                    match entries.get(*at) {
                        Some(l) => self.ins(format!("@{} bra {l}", p.text))?,
                        None => self.ins(format!("@{} bra {end}", p.text))?,
                    }
                }
                match default.and_then(|d| entries.get(d)) {
                    Some(l) => self.ins(format!("bra {l}"))?,
                    None => self.ins(format!("bra {end}"))?,
                }
                self.brk.push(end.clone());
                self.skips.push(end.clone());
                // `continue` inside a switch belongs to the enclosing loop.
                self.cont.push(None);
                let mut r = Ok(());
                for (st, l) in body.iter().zip(&entries) {
                    self.place_label(l);
                    r = self.stmt(st);
                    if r.is_err() {
                        break;
                    }
                }
                self.brk.pop();
                self.skips.pop();
                self.cont.pop();
                r?;
                self.place_label(&end);
            }
            Stmt::Sync(loc) => {
                // The barrier's own line, for synccheck's findings.
                self.at(*loc);
                self.ins("bar.sync 0".into())?
            }
        }
        Ok(())
    }
}
