//! Expressions: values into registers, memory accesses into `ld`/`st`, C conversions into
//! `cvt`, short-circuit operators into branches where the skipped side has effects.

use super::{imm, scalar, Class, Gen, Scalar, Val};
use crate::error::Result;
use crate::ir::{BinOp, Builtin, Expr, ExprKind, Home, Loc, SiteId, UnOp};
use crate::lower::with_stack;
use crate::types::{Ty, INT};

/// Whether evaluating `x` can touch memory, assign a variable, call or fault: such an
/// operand of `?:`, `&&`, `||` must run only on the lanes that choose it.
fn has_effects(x: &Expr) -> bool {
    with_stack(|| match &x.kind {
        ExprKind::Load { .. }
        | ExprKind::Store { .. }
        | ExprKind::SetReg { .. }
        | ExprKind::Call { .. }
        | ExprKind::MakeAgg(_)
        | ExprKind::Member { .. } => true,
        ExprKind::Binary(op, a, b) => {
            (matches!(op, BinOp::Div | BinOp::Rem) && !a.ty.is_float())
                || has_effects(a)
                || has_effects(b)
        }
        ExprKind::Unary(_, a) | ExprKind::Cast(a) => has_effects(a),
        ExprKind::Atomic { .. } | ExprKind::Warp(..) | ExprKind::Texture(_) => true,
        ExprKind::Intrinsic(crate::ir::Intrinsic::Assert, _) => true,
        ExprKind::Intrinsic(_, args) => args.iter().any(has_effects),
        ExprKind::PtrAdd { ptr, index, .. } => has_effects(ptr) || has_effects(index),
        ExprKind::PtrDiff { a, b, .. } | ExprKind::Seq(a, b) => has_effects(a) || has_effects(b),
        ExprKind::LogicalAnd(a, b) | ExprKind::LogicalOr(a, b) => has_effects(a) || has_effects(b),
        ExprKind::Cond(c, a, b) => has_effects(c) || has_effects(a) || has_effects(b),
        ExprKind::Const(_)
        | ExprKind::Reg(_)
        | ExprKind::Builtin(_)
        | ExprKind::PrivateAddr(_)
        | ExprKind::DynSharedBase => false,
    })
}

fn cmp_name(op: BinOp, float: bool) -> &'static str {
    match op {
        BinOp::Lt => "lt",
        BinOp::Le => "le",
        BinOp::Gt => "gt",
        BinOp::Ge => "ge",
        BinOp::Eq => "eq",
        _ if float => "neu",
        _ => "ne",
    }
}

/// The `ld`/`st` type of `bytes` raw bytes.
fn raw(bytes: u64) -> &'static str {
    match bytes {
        1 => "u8",
        2 => "u16",
        4 => "u32",
        _ => "u64",
    }
}

impl Gen<'_> {
    /// The value of `x`; `None` for `void`.
    pub fn expr(&mut self, x: &Expr) -> Result<Option<Val>> {
        with_stack(|| self.expr_inner(x))
    }

    /// The value of `x`, which must have one.
    pub fn val(&mut self, x: &Expr) -> Result<Val> {
        match self.expr(x)? {
            Some(v) => Ok(v),
            None => Err(self.unsupported(x.loc, "a void expression used as a value")),
        }
    }

    /// `v` in a register (immediates are moved into one).
    pub fn in_reg(&mut self, v: Val) -> Result<Val> {
        if !v.imm {
            return Ok(v);
        }
        let d = self.reg(v.class);
        self.ins(format!("mov.{} {}, {}", v.class.bits_ty(), d.text, v.text))?;
        Ok(d)
    }

    /// A predicate: `v` (of type `t`) is not zero.
    pub fn truth(&mut self, v: &Val, t: &Ty) -> Result<Val> {
        // A 0/1 made from a predicate: that predicate.
        if let Some(p) = self.preds.get(&v.text) {
            return Ok(p.clone());
        }
        let p = self.reg(Class::Pred);
        let (cmp, ty) = match scalar(t) {
            Some(s) if s.float => ("neu", s.ptx),
            Some(s) => ("ne", if s.class == Class::B64 { "u64" } else { "u32" }),
            None => ("ne", "u64"),
        };
        let zero = if ty.starts_with('f') {
            imm(0, &Ty::Float(if ty == "f64" { 8 } else { 4 })).text
        } else {
            "0".into()
        };
        self.ins(format!("setp.{cmp}.{ty} {}, {}, {zero}", p.text, v.text))?;
        Ok(p)
    }

    /// 1 or 0 in a 32-bit register from a predicate.
    fn from_pred(&mut self, p: &Val) -> Result<Val> {
        let d = self.reg(Class::B32);
        self.ins(format!("selp.u32 {}, 1, 0, {}", d.text, p.text))?;
        self.preds.insert(d.text.clone(), p.clone());
        Ok(d)
    }

    fn expr_inner(&mut self, x: &Expr) -> Result<Option<Val>> {
        self.at(x.loc);
        let v = match &x.kind {
            ExprKind::Const(v) => imm(*v, &x.ty),
            ExprKind::Reg(s) => self.slot(*s, &x.ty),
            ExprKind::Builtin(b) => {
                let (name, axis) = match b {
                    Builtin::ThreadIdx(a) => ("tid", a),
                    Builtin::BlockIdx(a) => ("ctaid", a),
                    Builtin::BlockDim(a) => ("ntid", a),
                    Builtin::GridDim(a) => ("nctaid", a),
                    Builtin::WarpSize => return Ok(Some(imm(32, &x.ty))),
                };
                let axis = ["x", "y", "z"][(*axis as usize).min(2)];
                let d = self.reg(Class::B32);
                self.ins(format!("mov.u32 {}, %{name}.{axis}", d.text))?;
                self.convert(d, &crate::types::UINT, &x.ty)?
            }
            ExprKind::Load { addr, site } => {
                let a = self.val(addr)?;
                let a = self.in_reg(a)?;
                self.at(x.loc);
                if scalar(&x.ty).is_some() {
                    self.load_scalar(&a, 0, &x.ty, Some(*site))?
                } else {
                    self.load_agg(&a, &x.ty, Some(*site))?
                }
            }
            ExprKind::Store { addr, value, site } => {
                let a = self.val(addr)?;
                let a = self.in_reg(a)?;
                let v = self.val(value)?;
                self.at(x.loc);
                if scalar(&x.ty).is_some() {
                    self.store_scalar(&a, 0, &x.ty, &v, Some(*site))?;
                } else {
                    self.store_agg(&a, &x.ty, &v, Some(*site))?;
                }
                v
            }
            ExprKind::SetReg { slot, value } => {
                let v = self.val(value)?;
                let d = self.slot(*slot, &x.ty);
                self.mov(&d, &v)?;
                d
            }
            ExprKind::Unary(op, a) => {
                let v = self.val(a)?;
                self.unary(*op, v, &a.ty)?
            }
            ExprKind::Binary(op, a, b) => {
                let va = self.val(a)?;
                let vb = self.val(b)?;
                self.binary(*op, va, vb, &a.ty, x.loc)?
            }
            ExprKind::Cast(a) => {
                let v = self.expr(a)?;
                match v {
                    Some(v) => self.convert(v, &a.ty, &x.ty)?,
                    None => return Ok(None),
                }
            }
            ExprKind::PtrAdd { ptr, index, scale } => {
                let p = self.val(ptr)?;
                let i = self.val(index)?;
                let i = self.convert(i, &index.ty, &crate::types::LONG)?;
                let d = self.reg(Class::B64);
                if i.imm {
                    let k = i.text.parse::<i64>().unwrap_or(0);
                    let off = k.wrapping_mul(*scale as i64);
                    self.ins(format!("add.s64 {}, {}, {off}", d.text, p.text))?;
                } else {
                    self.ins(format!(
                        "mad.lo.s64 {}, {}, {}, {}",
                        d.text, i.text, scale, p.text
                    ))?;
                }
                d
            }
            ExprKind::PtrDiff { a, b, scale } => {
                let va = self.val(a)?;
                let vb = self.val(b)?;
                let t = self.reg(Class::B64);
                self.ins(format!("sub.s64 {}, {}, {}", t.text, va.text, vb.text))?;
                let d = self.reg(Class::B64);
                self.ins(format!("div.s64 {}, {}, {}", d.text, t.text, scale))?;
                d
            }
            ExprKind::Cond(c, a, b) => return self.cond(x, c, a, b),
            ExprKind::LogicalAnd(a, b) => self.logical(a, b, true)?,
            ExprKind::LogicalOr(a, b) => self.logical(a, b, false)?,
            ExprKind::Call { func, args } => return self.call(*func, args, x.loc),
            ExprKind::Member { base, offset } => {
                let b = self.val(base)?;
                if scalar(&x.ty).is_some() {
                    self.load_scalar(&b, *offset, &x.ty, None)?
                } else {
                    let d = self.reg(Class::B64);
                    self.ins(format!("add.s64 {}, {}, {offset}", d.text, b.text))?;
                    d
                }
            }
            ExprKind::Seq(a, b) => {
                self.expr(a)?;
                return self.expr(b);
            }
            ExprKind::MakeAgg(items) => {
                let size = self.prog.structs.size(&x.ty);
                let s = self.scratch(size)?;
                let covered: u64 = items
                    .iter()
                    .map(|(_, it)| self.prog.structs.size(&it.ty))
                    .sum();
                if covered < size {
                    for o in (0..size).step_by(4) {
                        self.ins(format!("st.u32 [{}+{o}], 0", s.text))?;
                    }
                }
                for (off, it) in items {
                    let v = self.val(it)?;
                    if scalar(&it.ty).is_some() {
                        self.store_scalar(&s, *off, &it.ty, &v, None)?;
                    } else {
                        let d = self.reg(Class::B64);
                        self.ins(format!("add.s64 {}, {}, {off}", d.text, s.text))?;
                        self.copy(&d, &v, &it.ty)?;
                    }
                }
                s
            }
            ExprKind::Intrinsic(f, args) => self.intrinsic(*f, args, &x.ty, x.loc)?,
            ExprKind::Atomic {
                op,
                addr,
                value,
                compare,
                site,
            } => self.atomic(*op, addr, value, compare.as_deref(), *site, &x.ty, x.loc)?,
            ExprKind::Warp(op, args) => self.warp(*op, args, &x.ty, x.loc)?,
            ExprKind::Texture(t) => return self.texture(t, x.loc),
            ExprKind::PrivateAddr(off) => self.private_addr(*off)?,
            ExprKind::DynSharedBase => imm(crate::ir::addr::SHARED + self.dyn_base, &x.ty),
        };
        Ok(Some(v))
    }

    /// `d = v` (same class).
    pub fn mov(&mut self, d: &Val, v: &Val) -> Result<()> {
        let ty = d.class.bits_ty();
        let v = if v.class != d.class && !v.imm {
            // Only a slot reused with another type gets here; move the bits.
            let t = self.reg(d.class);
            self.ins(format!("mov.b{} {}, {}", bits(d.class), t.text, v.text))?;
            t
        } else {
            v.clone()
        };
        self.ins(format!("mov.{ty} {}, {}", d.text, v.text))
    }

    /// Loads a scalar of type `t` at `a + off`.
    pub fn load_scalar(&mut self, a: &Val, off: u64, t: &Ty, site: Option<SiteId>) -> Result<Val> {
        let sc = scalar(t).unwrap_or_else(|| scalar(&INT).expect("int is a scalar"));
        if sc.half {
            let r = self.reg(Class::B32);
            self.mem(format!("ld.u16 {}, [{}+{off}]", r.text, a.text), site)?;
            let f = self.reg(Class::F32);
            self.ins(format!("cvt.f32.f16 {}, {}", f.text, r.text))?;
            return Ok(f);
        }
        if sc.float {
            let d = self.reg(sc.class);
            self.mem(
                format!("ld.{} {}, [{}+{off}]", sc.ptx, d.text, a.text),
                site,
            )?;
            return Ok(d);
        }
        let d = self.reg(sc.class);
        self.mem(
            format!("ld.{} {}, [{}+{off}]", raw(sc.bytes as u64), d.text, a.text),
            site,
        )?;
        if sc.boolean {
            let p = self.truth(&d, &crate::types::UINT)?;
            return self.from_pred(&p);
        }
        if sc.bytes < 4 && sc.signed {
            let e = self.reg(Class::B32);
            self.ins(format!("cvt.s32.s{} {}, {}", sc.bytes * 8, e.text, d.text))?;
            return Ok(e);
        }
        Ok(d)
    }

    /// Stores scalar `v` of type `t` at `a + off`.
    pub fn store_scalar(
        &mut self,
        a: &Val,
        off: u64,
        t: &Ty,
        v: &Val,
        site: Option<SiteId>,
    ) -> Result<()> {
        let sc = scalar(t).unwrap_or_else(|| scalar(&INT).expect("int is a scalar"));
        let v = self.in_reg(v.clone())?;
        if sc.half {
            let r = self.reg(Class::B32);
            self.ins(format!("cvt.rn.f16.f32 {}, {}", r.text, v.text))?;
            return self.mem(format!("st.u16 [{}+{off}], {}", a.text, r.text), site);
        }
        let ty = if sc.float {
            sc.ptx
        } else {
            raw(sc.bytes as u64)
        };
        self.mem(format!("st.{ty} [{}+{off}], {}", a.text, v.text), site)
    }

    /// The parts an aggregate of type `t` is accessed in: (offset, bytes).
    fn parts(&self, t: &Ty) -> Vec<(u64, u32)> {
        self.prog.structs.access_parts(t)
    }

    /// Moves `w` bytes at `src + off` to `dst + off` through registers; the load or the
    /// store (not both) may be an IR access.
    fn move_part(
        &mut self,
        dst: &Val,
        src: &Val,
        off: u64,
        w: u32,
        load_site: Option<SiteId>,
        store_site: Option<SiteId>,
    ) -> Result<()> {
        match w {
            16 => {
                let r: Vec<Val> = (0..4).map(|_| self.reg(Class::B32)).collect();
                let list = r
                    .iter()
                    .map(|v| v.text.clone())
                    .collect::<Vec<_>>()
                    .join(",");
                self.mem(
                    format!("ld.v4.u32 {{{list}}}, [{}+{off}]", src.text),
                    load_site,
                )?;
                self.mem(
                    format!("st.v4.u32 [{}+{off}], {{{list}}}", dst.text),
                    store_site,
                )
            }
            _ => {
                let class = if w == 8 { Class::B64 } else { Class::B32 };
                let r = self.reg(class);
                let ty = raw(w as u64);
                self.mem(
                    format!("ld.{ty} {}, [{}+{off}]", r.text, src.text),
                    load_site,
                )?;
                self.mem(
                    format!("st.{ty} [{}+{off}], {}", dst.text, r.text),
                    store_site,
                )
            }
        }
    }

    /// Loads an aggregate at `a` into fresh scratch; its address.
    pub fn load_agg(&mut self, a: &Val, t: &Ty, site: Option<SiteId>) -> Result<Val> {
        let s = self.scratch(self.prog.structs.size(t))?;
        for (o, w) in self.parts(t) {
            self.move_part(&s, a, o, w, site, None)?;
        }
        Ok(s)
    }

    /// Stores the aggregate at scratch `v` to `a`.
    pub fn store_agg(&mut self, a: &Val, t: &Ty, v: &Val, site: Option<SiteId>) -> Result<()> {
        for (o, w) in self.parts(t) {
            self.move_part(a, v, o, w, None, site)?;
        }
        Ok(())
    }

    /// Copies an aggregate of type `t` from `src` to `dst` (neither an access).
    pub fn copy(&mut self, dst: &Val, src: &Val, t: &Ty) -> Result<()> {
        for (o, w) in self.parts(t) {
            self.move_part(dst, src, o, w, None, None)?;
        }
        Ok(())
    }

    /// Puts `v` where a parameter or variable lives.
    pub fn assign_home(&mut self, home: Home, t: &Ty, v: Val) -> Result<()> {
        match home {
            Home::Reg(s) => {
                let d = self.slot(s, t);
                self.mov(&d, &v)
            }
            Home::Private(off) => {
                let a = self.private_addr(off)?;
                if scalar(t).is_some() {
                    self.store_scalar(&a, 0, t, &v, None)
                } else {
                    self.copy(&a, &v, t)
                }
            }
        }
    }

    /// Rounds an `f32` to half precision (a `__half` result).
    fn round_half(&mut self, v: Val) -> Result<Val> {
        let v = self.in_reg(v)?;
        let r = self.reg(Class::B32);
        self.ins(format!("cvt.rn.f16.f32 {}, {}", r.text, v.text))?;
        let f = self.reg(Class::F32);
        self.ins(format!("cvt.f32.f16 {}, {}", f.text, r.text))?;
        Ok(f)
    }

    /// Wraps a 1- or 2-byte integer result to its type.
    fn narrow(&mut self, v: Val, sc: Scalar) -> Result<Val> {
        if sc.class != Class::B32 || sc.bytes >= 4 || sc.boolean {
            return Ok(v);
        }
        let d = self.reg(Class::B32);
        let s = if sc.signed { 's' } else { 'u' };
        self.ins(format!(
            "cvt.{s}32.{s}{} {}, {}",
            sc.bytes * 8,
            d.text,
            v.text
        ))?;
        Ok(d)
    }

    fn unary(&mut self, op: UnOp, v: Val, at: &Ty) -> Result<Val> {
        if op == UnOp::LogicalNot {
            let p = self.truth(&v, at)?;
            let d = self.reg(Class::B32);
            self.ins(format!("selp.u32 {}, 0, 1, {}", d.text, p.text))?;
            return Ok(d);
        }
        let Some(sc) = scalar(at) else {
            return Ok(v);
        };
        let d = self.reg(sc.class);
        let ty = if sc.boolean { "s32" } else { sc.ptx };
        match op {
            UnOp::Neg => self.ins(format!("neg.{ty} {}, {}", d.text, v.text))?,
            UnOp::Abs => self.ins(format!("abs.{ty} {}, {}", d.text, v.text))?,
            UnOp::BitNot => self.ins(format!("not.b{} {}, {}", bits(sc.class), d.text, v.text))?,
            UnOp::LogicalNot => unreachable!("handled above"),
        }
        if sc.half {
            return self.round_half(d);
        }
        self.narrow(d, sc)
    }

    fn binary(&mut self, op: BinOp, a: Val, b: Val, t: &Ty, loc: Loc) -> Result<Val> {
        let sc = scalar(t).unwrap_or_else(|| scalar(&crate::types::ULONG).expect("scalar"));
        let ty = if sc.boolean { "s32" } else { sc.ptx };
        if matches!(
            op,
            BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge | BinOp::Eq | BinOp::Ne
        ) {
            let p = self.reg(Class::Pred);
            let a = self.in_reg(a)?;
            self.ins(format!(
                "setp.{}.{ty} {}, {}, {}",
                cmp_name(op, sc.float),
                p.text,
                a.text,
                b.text
            ))?;
            return self.from_pred(&p);
        }
        let d = self.reg(sc.class);
        let bitty = format!("b{}", bits(sc.class));
        let a = self.in_reg(a)?;
        let text = match op {
            BinOp::Add => format!("add.{ty} {}, {}, {}", d.text, a.text, b.text),
            BinOp::Sub => format!("sub.{ty} {}, {}, {}", d.text, a.text, b.text),
            BinOp::Mul if sc.float => format!("mul.rn.{ty} {}, {}, {}", d.text, a.text, b.text),
            BinOp::Mul => format!("mul.lo.{ty} {}, {}, {}", d.text, a.text, b.text),
            BinOp::Div if sc.float => format!("div.rn.{ty} {}, {}, {}", d.text, a.text, b.text),
            BinOp::Div | BinOp::Rem => {
                if sc.float {
                    // C has no `%` on floats; the lowerer never asks for it.
                    return Err(self.unsupported(loc, "'%' on floating-point operands"));
                }
                let p = self.reg(Class::Pred);
                self.ins(format!("setp.eq.{ty} {}, {}, 0", p.text, b.text))?;
                self.division_trap(&p)?;
                let name = if op == BinOp::Div { "div" } else { "rem" };
                format!("{name}.{ty} {}, {}, {}", d.text, a.text, b.text)
            }
            BinOp::Shl | BinOp::Shr => {
                let n = self.convert(b, t, &crate::types::UINT)?;
                let name = if op == BinOp::Shl {
                    format!("shl.{bitty}")
                } else {
                    format!("shr.{ty}")
                };
                format!("{name} {}, {}, {}", d.text, a.text, n.text)
            }
            BinOp::BitAnd => format!("and.{bitty} {}, {}, {}", d.text, a.text, b.text),
            BinOp::BitOr => format!("or.{bitty} {}, {}, {}", d.text, a.text, b.text),
            BinOp::BitXor => format!("xor.{bitty} {}, {}, {}", d.text, a.text, b.text),
            BinOp::Min => format!("min.{ty} {}, {}, {}", d.text, a.text, b.text),
            BinOp::Max => format!("max.{ty} {}, {}, {}", d.text, a.text, b.text),
            _ => unreachable!("comparisons handled above"),
        };
        self.ins(text)?;
        if sc.half {
            return self.round_half(d);
        }
        self.narrow(d, sc)
    }

    /// C's conversion of `v` from `from` to `to`.
    pub fn convert(&mut self, v: Val, from: &Ty, to: &Ty) -> Result<Val> {
        if from == to {
            return Ok(v);
        }
        let (Some(f), Some(t)) = (scalar(from), scalar(to)) else {
            return Ok(v);
        };
        if t.boolean {
            let p = self.truth(&v, from)?;
            return self.from_pred(&p);
        }
        let v = self.in_reg(v)?;
        match (f.float, t.float) {
            (true, true) => {
                let d = match (f.class, t.class) {
                    (Class::F32, Class::F64) => {
                        let d = self.reg(Class::F64);
                        self.ins(format!("cvt.f64.f32 {}, {}", d.text, v.text))?;
                        d
                    }
                    (Class::F64, Class::F32) => {
                        let d = self.reg(Class::F32);
                        self.ins(format!("cvt.rn.f32.f64 {}, {}", d.text, v.text))?;
                        d
                    }
                    _ => v,
                };
                if t.half && !f.half {
                    return self.round_half(d);
                }
                Ok(d)
            }
            (true, false) => {
                let wide = if t.class == Class::B64 {
                    t.ptx
                } else if t.signed {
                    "s32"
                } else {
                    "u32"
                };
                let d = self.reg(t.class);
                self.ins(format!("cvt.rzi.{wide}.{} {}, {}", f.ptx, d.text, v.text))?;
                self.narrow(d, t)
            }
            (false, true) => {
                let src = if f.boolean { "u32" } else { f.ptx };
                let d = self.reg(t.class);
                self.ins(format!("cvt.rn.{}.{src} {}, {}", t.ptx, d.text, v.text))?;
                if t.half {
                    return self.round_half(d);
                }
                Ok(d)
            }
            (false, false) => {
                let fs = f.signed && !f.boolean;
                if t.class == Class::B64 {
                    if f.class == Class::B64 {
                        return Ok(v);
                    }
                    let d = self.reg(Class::B64);
                    let (dt, st) = if fs { ("s64", "s32") } else { ("u64", "u32") };
                    self.ins(format!("cvt.{dt}.{st} {}, {}", d.text, v.text))?;
                    return Ok(d);
                }
                let v = if f.class == Class::B64 {
                    let d = self.reg(Class::B32);
                    self.ins(format!("cvt.u32.u64 {}, {}", d.text, v.text))?;
                    d
                } else {
                    v
                };
                if t.bytes >= 4 || (f.bytes <= t.bytes && fs == t.signed && f.class == Class::B32) {
                    return Ok(v);
                }
                self.narrow(v, t)
            }
        }
    }

    fn cond(&mut self, x: &Expr, c: &Expr, a: &Expr, b: &Expr) -> Result<Option<Val>> {
        let cv = self.val(c)?;
        let p = self.truth(&cv, &c.ty)?;
        let sc = scalar(&x.ty);
        let class = sc.map(|s| s.class).unwrap_or(Class::B64);
        if !has_effects(a) && !has_effects(b) && x.ty != Ty::Void {
            let va = self.val(a)?;
            let vb = self.val(b)?;
            let va = self.in_reg(va)?;
            let d = self.reg(class);
            self.ins(format!(
                "selp.{} {}, {}, {}, {}",
                class.bits_ty(),
                d.text,
                va.text,
                vb.text,
                p.text
            ))?;
            return Ok(Some(d));
        }
        let (els, end) = (self.label(), self.label());
        let d = (x.ty != Ty::Void).then(|| self.reg(class));
        self.ins(format!("@!{} bra {els}", p.text))?;
        let va = self.expr(a)?;
        if let (Some(d), Some(v)) = (&d, &va) {
            self.mov(d, v)?;
        }
        self.ins(format!("bra {end}"))?;
        self.place_label(&els);
        let vb = self.expr(b)?;
        if let (Some(d), Some(v)) = (&d, &vb) {
            self.mov(d, v)?;
        }
        self.place_label(&end);
        Ok(d)
    }

    /// `a && b` (`and`) or `a || b`: 1 or 0; `b` runs only on the lanes that need it.
    fn logical(&mut self, a: &Expr, b: &Expr, and: bool) -> Result<Val> {
        let va = self.val(a)?;
        let pa = self.truth(&va, &a.ty)?;
        if !has_effects(b) {
            let vb = self.val(b)?;
            let pb = self.truth(&vb, &b.ty)?;
            let p = self.reg(Class::Pred);
            let op = if and { "and" } else { "or" };
            self.ins(format!("{op}.pred {}, {}, {}", p.text, pa.text, pb.text))?;
            return self.from_pred(&p);
        }
        let d = self.from_pred(&pa)?;
        // Assigned again below: no longer just `pa`.
        self.preds.remove(&d.text);
        let end = self.label();
        let neg = if and { "!" } else { "" };
        self.ins(format!("@{neg}{} bra {end}", pa.text))?;
        let vb = self.val(b)?;
        let pb = self.truth(&vb, &b.ty)?;
        self.ins(format!("selp.u32 {}, 1, 0, {}", d.text, pb.text))?;
        self.place_label(&end);
        Ok(d)
    }

    /// Inlines a call of function `id`.
    fn call(&mut self, id: usize, args: &[Expr], loc: Loc) -> Result<Option<Val>> {
        if self.inlining.contains(&id) {
            return Err(self.unsupported(loc, "a recursive call"));
        }
        let f = &self.prog.funcs[id];
        let mut vals = Vec::with_capacity(args.len());
        for a in args {
            vals.push((self.expr(a)?, a.ty.clone()));
        }
        for (p, (v, ty)) in f.params.iter().zip(vals) {
            if let Some(v) = v {
                let v = self.convert(v, &ty, &p.ty)?;
                self.assign_home(p.home, &p.ty, v)?;
            }
        }
        let result = match scalar(&f.ret) {
            Some(s) => Some(self.reg(s.class)),
            None if f.ret == Ty::Void => None,
            // Aggregates come back in the call's own scratch.
            None => Some(self.scratch(self.prog.structs.size(&f.ret))?),
        };
        let end = self.label();
        self.inlining.push(id);
        let r = self.function_body(&f.body, end.clone(), result.clone());
        self.inlining.pop();
        r?;
        self.place_label(&end);
        Ok(result)
    }
}

/// Bits of a register class.
fn bits(c: Class) -> u32 {
    match c {
        Class::B64 | Class::F64 => 64,
        _ => 32,
    }
}
