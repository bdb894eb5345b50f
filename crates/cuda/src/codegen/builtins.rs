//! Intrinsics, atomics and warp-level operations: PTX's own instructions where it has them
//! (`sqrt`, `ex2`, `popc`, `atom`, `shfl.sync`, `vote.sync`), short sequences otherwise.

use super::{imm, scalar, Class, Gen, Val};
use crate::error::Result;
use crate::ir::{AtomicOp, Expr, Intrinsic, Loc, SiteId, WarpOp};
use crate::types::{Ty, UINT};

impl Gen<'_> {
    /// A float constant of class `c`.
    fn fconst(c: Class, x: f64) -> String {
        imm(x.to_bits(), &Ty::Float(if c == Class::F64 { 8 } else { 4 })).text
    }

    /// `intrinsic(args)` of result type `ty`.
    pub fn intrinsic(&mut self, f: Intrinsic, args: &[Expr], ty: &Ty, loc: Loc) -> Result<Val> {
        let mut vals = Vec::with_capacity(args.len());
        for a in args {
            let v = self.val(a)?;
            vals.push(self.in_reg(v)?);
        }
        let needs = match f {
            Intrinsic::Pow | Intrinsic::MulHi | Intrinsic::Mul24 => 2,
            Intrinsic::Fma => 3,
            _ => 1,
        };
        if vals.len() < needs {
            return Err(self.unsupported(loc, format!("{f:?} with {} operands", args.len())));
        }
        let arg = |i: usize| -> Result<Val> { Ok(vals[i].clone()) };
        let a = arg(0)?;
        let at = args.first().map(|x| x.ty.clone()).unwrap_or(UINT);
        let sc = scalar(&at).unwrap_or_else(|| scalar(&UINT).expect("scalar"));
        let c = sc.class;
        let t = if c == Class::F64 { "f64" } else { "f32" };
        let bits = if c == Class::B64 || c == Class::F64 {
            64
        } else {
            32
        };
        if f == Intrinsic::Assert {
            // @(!a) trap, its PTX line kept so that the fault reads as a failed assertion.
            let p = self.reg(Class::Pred);
            self.ins(format!("setp.eq.{} {}, {}, 0", sc.ptx, p.text, a.text))?;
            self.assert_trap(&p, loc)?;
            return Ok(a);
        }
        if f == Intrinsic::BitCast {
            let rc = scalar(ty)
                .ok_or_else(|| self.unsupported(loc, "a bit cast to this type"))?
                .class;
            let d = self.reg(rc);
            self.ins(format!("mov.b{bits} {}, {}", d.text, a.text))?;
            return Ok(d);
        }
        let d = self.reg(
            if matches!(f, Intrinsic::Popc | Intrinsic::Clz | Intrinsic::Ffs) {
                Class::B32
            } else {
                c
            },
        );
        let (dt, at_) = (d.text.clone(), a.text.clone());
        let scaled = |g: &mut Gen, op: &str, k: f64| -> Result<()> {
            // op(a · k), for e^a = 2^(a·log2 e) and 10^a.
            let m = g.reg(c);
            g.ins(format!(
                "mul.rn.{t} {}, {at_}, {}",
                m.text,
                Gen::fconst(c, k)
            ))?;
            g.ins(format!("{op}.approx.{t} {dt}, {}", m.text))
        };
        let logk = |g: &mut Gen, k: f64| -> Result<()> {
            let l = g.reg(c);
            g.ins(format!("lg2.approx.{t} {}, {at_}", l.text))?;
            g.ins(format!(
                "mul.rn.{t} {dt}, {}, {}",
                l.text,
                Gen::fconst(c, k)
            ))
        };
        match f {
            Intrinsic::Sqrt => self.ins(format!("sqrt.rn.{t} {dt}, {at_}"))?,
            Intrinsic::Rsqrt => self.ins(format!("rsqrt.approx.{t} {dt}, {at_}"))?,
            Intrinsic::Exp => scaled(self, "ex2", std::f64::consts::LOG2_E)?,
            Intrinsic::Exp2 => self.ins(format!("ex2.approx.{t} {dt}, {at_}"))?,
            Intrinsic::Exp10 => scaled(self, "ex2", std::f64::consts::LOG2_10)?,
            Intrinsic::Log => logk(self, std::f64::consts::LN_2)?,
            Intrinsic::Log2 => self.ins(format!("lg2.approx.{t} {dt}, {at_}"))?,
            Intrinsic::Log10 => logk(self, std::f64::consts::LOG10_2)?,
            Intrinsic::Pow => {
                // 2^(b · log2 a): the sign of a negative base is lost (values only).
                let b = arg(1)?;
                let l = self.reg(c);
                self.ins(format!("lg2.approx.{t} {}, {at_}", l.text))?;
                let m = self.reg(c);
                self.ins(format!("mul.rn.{t} {}, {}, {}", m.text, l.text, b.text))?;
                self.ins(format!("ex2.approx.{t} {dt}, {}", m.text))?;
            }
            Intrinsic::Sin => self.ins(format!("sin.approx.{t} {dt}, {at_}"))?,
            Intrinsic::Cos => self.ins(format!("cos.approx.{t} {dt}, {at_}"))?,
            Intrinsic::Tan => {
                let (s, k) = (self.reg(c), self.reg(c));
                self.ins(format!("sin.approx.{t} {}, {at_}", s.text))?;
                self.ins(format!("cos.approx.{t} {}, {at_}", k.text))?;
                self.ins(format!("div.rn.{t} {dt}, {}, {}", s.text, k.text))?;
            }
            Intrinsic::Tanh => self.ins(format!("tanh.approx.{t} {dt}, {at_}"))?,
            Intrinsic::Floor => self.ins(format!("cvt.rmi.{t}.{t} {dt}, {at_}"))?,
            Intrinsic::Ceil => self.ins(format!("cvt.rpi.{t}.{t} {dt}, {at_}"))?,
            Intrinsic::Trunc => self.ins(format!("cvt.rzi.{t}.{t} {dt}, {at_}"))?,
            Intrinsic::Round => {
                // Half away from zero: floor(|a| + 0.5) with a's sign.
                let m = self.reg(c);
                self.ins(format!("abs.{t} {}, {at_}", m.text))?;
                self.ins(format!(
                    "add.{t} {}, {}, {}",
                    m.text,
                    m.text,
                    Gen::fconst(c, 0.5)
                ))?;
                self.ins(format!("cvt.rmi.{t}.{t} {}, {}", m.text, m.text))?;
                self.ins(format!("copysign.{t} {dt}, {at_}, {}", m.text))?;
            }
            Intrinsic::Fma => {
                let (b, cc) = (arg(1)?, arg(2)?);
                self.ins(format!("fma.rn.{t} {dt}, {at_}, {}, {}", b.text, cc.text))?;
            }
            Intrinsic::Saturate => self.ins(format!("cvt.sat.{t}.{t} {dt}, {at_}"))?,
            Intrinsic::Popc => self.ins(format!("popc.b{bits} {dt}, {at_}"))?,
            Intrinsic::Clz => self.ins(format!("clz.b{bits} {dt}, {at_}"))?,
            Intrinsic::Ffs => {
                // Trailing zeros + 1 (clz of the reversed bits), 0 for 0.
                let r = self.reg(c);
                self.ins(format!("brev.b{bits} {}, {at_}", r.text))?;
                let z = self.reg(Class::B32);
                self.ins(format!("clz.b{bits} {}, {}", z.text, r.text))?;
                self.ins(format!("add.u32 {}, {}, 1", z.text, z.text))?;
                let p = self.reg(Class::Pred);
                self.ins(format!("setp.eq.u{bits} {}, {at_}, 0", p.text))?;
                self.ins(format!("selp.u32 {dt}, 0, {}, {}", z.text, p.text))?;
            }
            Intrinsic::Brev => self.ins(format!("brev.b{bits} {dt}, {at_}"))?,
            // Both returned above.
            Intrinsic::BitCast | Intrinsic::Assert => {}
            Intrinsic::MulHi => {
                let b = arg(1)?;
                self.ins(format!("mul.hi.{} {dt}, {at_}, {}", sc.ptx, b.text))?;
            }
            Intrinsic::Mul24 => {
                let b = arg(1)?;
                self.ins(format!("mul24.lo.{} {dt}, {at_}, {}", sc.ptx, b.text))?;
            }
        }
        Ok(d)
    }

    /// An atomic read-modify-write at `addr`; its old value.
    pub fn atomic(
        &mut self,
        op: AtomicOp,
        addr: &Expr,
        value: &Expr,
        compare: Option<&Expr>,
        site: SiteId,
        ty: &Ty,
        loc: Loc,
    ) -> Result<Val> {
        let a = self.val(addr)?;
        let a = self.in_reg(a)?;
        let v = self.val(value)?;
        let v = self.in_reg(v)?;
        let cmp = match compare {
            Some(c) => {
                let c = self.val(c)?;
                Some(self.in_reg(c)?)
            }
            None => None,
        };
        let Some(sc) = scalar(ty).filter(|s| !s.half && !s.boolean && s.bytes >= 4) else {
            return Err(self.unsupported(
                loc,
                "an atomic on a type other than a 32- or 64-bit integer or float",
            ));
        };
        let bits = sc.bytes as u32 * 8;
        let (name, t) = match op {
            AtomicOp::Add => ("add", sc.ptx.replace('s', "u")),
            AtomicOp::Min => ("min", sc.ptx.to_string()),
            AtomicOp::Max => ("max", sc.ptx.to_string()),
            AtomicOp::Exch => ("exch", format!("b{bits}")),
            AtomicOp::Cas => ("cas", format!("b{bits}")),
            AtomicOp::And => ("and", format!("b{bits}")),
            AtomicOp::Or => ("or", format!("b{bits}")),
            AtomicOp::Xor => ("xor", format!("b{bits}")),
            AtomicOp::Inc => ("inc", "u32".into()),
            AtomicOp::Dec => ("dec", "u32".into()),
        };
        let d = self.reg(sc.class);
        self.at(loc);
        let tail = match &cmp {
            // PTX's operand order: atom.cas d, [a], compare, new.
            Some(c) => format!("{}, {}", c.text, v.text),
            None => v.text.clone(),
        };
        self.mem(
            format!("atom.{name}.{t} {}, [{}], {tail}", d.text, a.text),
            Some(site),
        )?;
        Ok(d)
    }

    /// A warp shuffle or vote.
    pub fn warp(&mut self, op: WarpOp, args: &[Expr], ty: &Ty, loc: Loc) -> Result<Val> {
        let mut vals = Vec::with_capacity(args.len());
        for a in args {
            let v = self.val(a)?;
            vals.push((self.in_reg(v)?, a.ty.clone()));
        }
        let needs = match op {
            WarpOp::ActiveMask => 0,
            WarpOp::Ballot | WarpOp::All | WarpOp::Any => 2,
            _ => 3,
        };
        if vals.len() < needs {
            return Err(self.unsupported(loc, format!("{op:?} with {} operands", args.len())));
        }
        let get = |i: usize| -> Result<(Val, Ty)> { Ok(vals[i].clone()) };
        match op {
            WarpOp::ActiveMask => {
                let d = self.reg(Class::B32);
                self.ins(format!("activemask.b32 {}", d.text))?;
                Ok(d)
            }
            WarpOp::Ballot | WarpOp::All | WarpOp::Any => {
                let (p, pt) = get(1)?;
                let p = self.truth(&p, &pt)?;
                if op == WarpOp::Ballot {
                    let d = self.reg(Class::B32);
                    self.ins(format!("vote.sync.ballot.b32 {}, {}, -1", d.text, p.text))?;
                    return Ok(d);
                }
                let q = self.reg(Class::Pred);
                let mode = if op == WarpOp::All { "all" } else { "any" };
                self.ins(format!("vote.sync.{mode}.pred {}, {}, -1", q.text, p.text))?;
                let d = self.reg(Class::B32);
                self.ins(format!("selp.u32 {}, 1, 0, {}", d.text, q.text))?;
                Ok(d)
            }
            WarpOp::ShflIdx | WarpOp::ShflUp | WarpOp::ShflDown | WarpOp::ShflXor => {
                let (v, _) = get(1)?;
                let (k, kt) = get(2)?;
                let k = self.convert(k, &kt, &UINT)?;
                // c = ((32 - width) << 8) | clamp: the segment and its last lane.
                let cw = match vals.get(3).cloned() {
                    Some((w, wt)) => {
                        let w = self.convert(w, &wt, &UINT)?;
                        let c = self.reg(Class::B32);
                        self.ins(format!("sub.u32 {}, 32, {}", c.text, w.text))?;
                        self.ins(format!("shl.b32 {}, {}, 8", c.text, c.text))?;
                        if op != WarpOp::ShflUp {
                            self.ins(format!("or.b32 {}, {}, 31", c.text, c.text))?;
                        }
                        c.text
                    }
                    None if op == WarpOp::ShflUp => "0".into(),
                    None => "31".into(),
                };
                let mode = match op {
                    WarpOp::ShflIdx => "idx",
                    WarpOp::ShflUp => "up",
                    WarpOp::ShflDown => "down",
                    _ => "bfly",
                };
                let class = scalar(ty).map(|s| s.class).unwrap_or(v.class);
                let shfl = |g: &mut Gen, src: &str| -> Result<Val> {
                    let d = g.reg(Class::B32);
                    g.ins(format!(
                        "shfl.sync.{mode}.b32 {}, {src}, {}, {cw}, -1",
                        d.text, k.text
                    ))?;
                    Ok(d)
                };
                match class {
                    Class::B64 | Class::F64 => {
                        // Two 32-bit halves.
                        let (lo, hi) = (self.reg(Class::B32), self.reg(Class::B32));
                        self.ins(format!("mov.b64 {{{}, {}}}, {}", lo.text, hi.text, v.text))?;
                        let (l2, h2) = (shfl(self, &lo.text)?, shfl(self, &hi.text)?);
                        let d = self.reg(class);
                        self.ins(format!("mov.b64 {}, {{{}, {}}}", d.text, l2.text, h2.text))?;
                        Ok(d)
                    }
                    Class::F32 => {
                        let b = self.reg(Class::B32);
                        self.ins(format!("mov.b32 {}, {}", b.text, v.text))?;
                        let r = shfl(self, &b.text)?;
                        let d = self.reg(Class::F32);
                        self.ins(format!("mov.b32 {}, {}", d.text, r.text))?;
                        Ok(d)
                    }
                    _ => shfl(self, &v.text),
                }
            }
        }
    }
}
