//! Tensor-core instructions [PTX ISA §9.7.14]: `mma.sync.aligned` (§9.7.14.5.14),
//! `wmma.load`/`wmma.store`/`wmma.mma` (§9.7.14.4.3–5) and `movmatrix` (§9.7.14.5.17).
//! Shapes and types are checked against the ISA's tables and each fragment's register
//! count against its shape, so that a malformed instruction is an error naming it, never a
//! wrong run. Sparse `mma.sp{::ordered_metadata}` (§9.7.14.6) is decoded in `mma_sp.rs`;
//! the `.kind::f8f6f4` and block-scaled `.kind::mxf*` forms of sm_120 in
//! [`InstDecoder::mma_kind`] (`wgmma` is decoded in `wgmma.rs`, `tcgen05` in `tcgen05.rs`).

use super::*;
use crate::exec::mma::{Layout, Part};

/// `mMnNkK` → (M, N, K).
fn parse_mnk(s: &str) -> Option<(u32, u32, u32)> {
    let r = s.strip_prefix('m')?;
    let (m, r) = r.split_once('n')?;
    let (n, k) = r.split_once('k')?;
    Some((m.parse().ok()?, n.parse().ok()?, k.parse().ok()?))
}

/// The register type a fragment of `e` is read as (for immediates).
pub(super) fn reg_ty(e: MmaElem) -> Ty {
    match e {
        MmaElem::F64 => Ty {
            kind: Kind::Float,
            bytes: 8,
        },
        MmaElem::F32 | MmaElem::TF32 => Ty {
            kind: Kind::Float,
            bytes: 4,
        },
        _ => Ty::U32,
    }
}

/// Whether `mma.sync.aligned.mMnNkK` takes these A, B, C and D types [PTX ISA §9.7.14.5.14,
/// table "Description of .atype/.btype … for mma"].
fn sync_ok((m, n, k): (u32, u32, u32), a: MmaElem, b: MmaElem, c: MmaElem, d: MmaElem) -> bool {
    use MmaElem::*;
    let both = |x: &[MmaElem]| x.contains(&a) && x.contains(&b);
    let float_cd = matches!(c, F16 | F32) && matches!(d, F16 | F32);
    let f32_cd = c == F32 && d == F32;
    let s32_cd = c == S32 && d == S32;
    let f16 = both(&[F16]) && float_cd;
    let bf16 = both(&[BF16]) && f32_cd;
    let tf32 = both(&[TF32]) && f32_cd;
    let f64 = both(&[F64]) && c == F64 && d == F64;
    let int8 = both(&[S8, U8]) && s32_cd;
    let int4 = both(&[S4, U4]) && s32_cd;
    let fp8 = both(&[E4M3, E5M2]) && float_cd;
    let b1 = both(&[B1]) && s32_cd;
    match (m, n, k) {
        (8, 8, 4) => f16 || f64,
        (16, 8, 4) => tf32 || f64,
        (16, 8, 8) => f16 || bf16 || tf32 || f64,
        (16, 8, 16) => f16 || bf16 || int8 || f64 || fp8,
        (16, 8, 32) => int8 || int4 || fp8,
        (16, 8, 64) => int4,
        (8, 8, 16) => int8,
        (8, 8, 32) => int4,
        (8, 8, 128) | (16, 8, 128) | (16, 8, 256) => b1,
        _ => false,
    }
}

/// The A/B types and accumulator types a `wmma` shape takes [PTX ISA §9.7.14.4.1].
fn wmma_types((m, n, k): (u32, u32, u32)) -> Option<(&'static [MmaElem], &'static [MmaElem])> {
    use MmaElem::*;
    Some(match (m, n, k) {
        (16, 16, 16) | (32, 8, 16) | (8, 32, 16) => (&[F16, BF16, S8, U8], &[F16, F32, S32]),
        (16, 16, 8) => (&[TF32], &[F32]),
        (8, 8, 4) => (&[F64], &[F64]),
        (8, 8, 32) => (&[S4, U4], &[S32]),
        (8, 8, 128) => (&[B1], &[S32]),
        _ => return None,
    })
}

/// Whether a `wmma.mma` takes these types (the accumulator must suit A and B).
fn wmma_ok(shape: (u32, u32, u32), a: MmaElem, b: MmaElem, c: MmaElem, d: MmaElem) -> bool {
    use MmaElem::*;
    let Some((ab, cd)) = wmma_types(shape) else {
        return false;
    };
    let acc = |x: MmaElem| match a {
        F16 => matches!(x, F16 | F32),
        BF16 | TF32 => x == F32,
        S8 | U8 | S4 | U4 | B1 => x == S32,
        F64 => x == F64,
        _ => false,
    };
    let same_class = match a {
        S8 | U8 => matches!(b, S8 | U8),
        S4 | U4 => matches!(b, S4 | U4),
        _ => a == b,
    };
    ab.contains(&a) && same_class && cd.contains(&c) && cd.contains(&d) && acc(c) && acc(d)
}

impl<'a> InstDecoder<'a> {
    /// `mma`, `wmma` and `movmatrix`.
    pub(super) fn tensor(&self) -> Result<Decoded> {
        match self.i.opcode.as_str() {
            "mma" => self.mma_sync(),
            "wmma" if self.has("load") || self.has("store") => self.wmma_mem(),
            "wmma" if self.has("mma") => self.wmma_mma(),
            "wmma" => Err(self.invalid("expected wmma.load, wmma.store or wmma.mma")),
            "movmatrix" => self.movmatrix(),
            _ => Err(self.unsupported("this matrix instruction is not supported")),
        }
    }

    pub(super) fn shape(&self) -> Result<(u32, u32, u32)> {
        self.i
            .mods
            .iter()
            .find_map(|m| parse_mnk(m))
            .ok_or_else(|| self.invalid("no shape modifier (.mMnNkK)"))
    }

    /// The element-type modifiers, in order.
    pub(super) fn elem_types(&self) -> Vec<MmaElem> {
        self.i
            .mods
            .iter()
            .filter_map(|m| MmaElem::parse(m))
            .collect()
    }

    /// The elements of fragment operand `k` (`{r0, …}` or one register): an error naming
    /// the instruction unless each is a register or an immediate.
    pub(super) fn frag_items(&self, k: usize) -> Result<Vec<&'a Operand>> {
        let items: Vec<&'a Operand> = match self.op(k)? {
            Operand::Vector(v) => v.iter().collect(),
            o => vec![o],
        };
        let value = |o: &Operand| {
            matches!(
                o,
                Operand::Reg(_)
                    | Operand::Int(_)
                    | Operand::F32(_)
                    | Operand::F64(_)
                    | Operand::Sink
            )
        };
        if items.is_empty() || !items.iter().all(|o| value(o)) {
            return Err(self.invalid(&format!(
                "operand {} must be a fragment: registers in braces {{r0, …}}",
                k + 1
            )));
        }
        Ok(items)
    }

    /// The address operand `k`: an error naming the instruction unless it is `[p]`.
    fn frag_addr(&self, k: usize) -> Result<Addr> {
        match self.op(k)? {
            o @ Operand::Address { .. } => (self.addr)(o),
            _ => Err(self.invalid(&format!("operand {} must be an address [p]", k + 1))),
        }
    }

    /// The operands of a fragment `{r0, …}` (or one register) as sources.
    pub(super) fn frag_srcs(&self, k: usize, e: MmaElem) -> Result<Vec<Src>> {
        let ty = reg_ty(e);
        let items = self.frag_items(k)?;
        if items.iter().any(|o| matches!(o, Operand::Sink)) {
            return Err(self.invalid("a sink '_' cannot be a source fragment"));
        }
        items.iter().map(|o| (self.resolve)(o, Some(ty))).collect()
    }

    /// The destination registers of a fragment.
    pub(super) fn frag_dests(&self, k: usize) -> Result<Vec<Reg>> {
        let one = |o: &Operand| {
            (self.dest)(o)?.ok_or_else(|| self.invalid("a sink '_' cannot receive a fragment"))
        };
        let items = self.frag_items(k)?;
        if !items
            .iter()
            .all(|o| matches!(o, Operand::Reg(_) | Operand::Sink))
        {
            return Err(self.invalid(&format!("operand {} must be destination registers", k + 1)));
        }
        items.into_iter().map(one).collect()
    }

    /// The shape and `.dtype.atype.btype.ctype` of an `mma` form, checked by `ok` against
    /// the ISA's table for `what` (named with its section in the error).
    pub(super) fn typed_shape(
        &self,
        what: &str,
        section: &str,
        ok: fn((u32, u32, u32), MmaElem, MmaElem, MmaElem, MmaElem) -> bool,
    ) -> Result<((u32, u32, u32), [MmaElem; 4])> {
        let shape = self.shape()?;
        let ts = self.elem_types();
        let [d, a, b, c] = ts[..] else {
            return Err(self.invalid("expected four types: .dtype.atype.btype.ctype"));
        };
        if !ok(shape, a, b, c, d) {
            return Err(self.unsupported(&format!(
                "no {what} of shape m{}n{}k{} multiplies {a:?}×{b:?} into {c:?}/{d:?} (PTX ISA {section})",
                shape.0, shape.1, shape.2
            )));
        }
        Ok((shape, [d, a, b, c]))
    }

    /// The `.row`/`.col` modifiers in order: `true` for row-major.
    pub(super) fn layouts(&self) -> Vec<bool> {
        self.i
            .mods
            .iter()
            .filter_map(|m| match m.as_str() {
                "row" => Some(true),
                "col" => Some(false),
                _ => None,
            })
            .collect()
    }

    pub(super) fn check_count(&self, what: &str, got: usize, want: u32) -> Result<()> {
        if want == 0 || got != want as usize {
            return Err(self.invalid(&format!(
                "the {what} fragment of this shape and type takes {want} registers, {got} given"
            )));
        }
        Ok(())
    }

    /// Reads `d, a, b, c` of an mma and checks their register counts.
    fn mma_operands(&self, s: MmaShape) -> Result<Decoded> {
        self.mma_operands_with(s, 4)
    }

    /// [`Self::mma_operands`] of an instruction of `ops` operands (a block-scaled one has 8).
    fn mma_operands_with(&self, s: MmaShape, ops: usize) -> Result<Decoded> {
        let lay = Layout::mma(&s);
        // wmma's .f16 A and B fragments name 8 registers whatever they hold.
        let named = |p: Part, e: MmaElem| match (s.api, e, p) {
            (MmaApi::Wmma, MmaElem::F16, Part::A | Part::B) => 8,
            _ => lay.regs(p),
        };
        let d = self.frag_dests(0)?;
        let a = self.frag_srcs(1, s.a)?;
        let b = self.frag_srcs(2, s.b)?;
        let c = self.frag_srcs(3, s.c)?;
        self.check_count("D", d.len(), lay.regs(Part::D))?;
        self.check_count("A", a.len(), named(Part::A, s.a))?;
        self.check_count("B", b.len(), named(Part::B, s.b))?;
        self.check_count("C", c.len(), lay.regs(Part::C))?;
        if self.i.operands.len() != ops {
            return Err(self.invalid(if ops == 4 {
                "expected d, a, b, c"
            } else {
                "expected d, a, b, c, scale-a, {byte-id-a, thread-id-a}, scale-b, {byte-id-b, thread-id-b}"
            }));
        }
        Ok(Decoded::Plain(Instr::Tensor(Box::new(TensorInstr {
            op: TensorOp::Mma(s),
            d,
            a,
            b,
            c,
        }))))
    }

    /// `mma.sync.aligned.shape.alayout.blayout[.satfinite].dtype.atype.btype.ctype[.op.popc]
    /// d, a, b, c` [PTX ISA §9.7.14.5.14].
    fn mma_sync(&self) -> Result<Decoded> {
        if self.has("sp") || self.i.mods.iter().any(|m| m.starts_with("sp::")) {
            return self.mma_sp();
        }
        if self
            .i
            .mods
            .iter()
            .any(|m| m.starts_with("kind::") || m == "block_scale")
        {
            return self.mma_kind();
        }
        let (shape, [d, a, b, c]) = self.typed_shape("mma.sync", "§9.7.14.5.14", sync_ok)?;
        let [a_row, b_row] = self.layouts()[..] else {
            return Err(self.invalid("expected .alayout.blayout (.row/.col)"));
        };
        let quad = shape == (8, 8, 4) && a == MmaElem::F16;
        if !quad && (!a_row || b_row) {
            return Err(self.invalid("this shape takes .row.col only"));
        }
        if a == MmaElem::B1 && !(self.has("popc") && (self.has("xor") || self.has("and"))) {
            return Err(self.invalid(".b1 takes .xor.popc or .and.popc"));
        }
        self.mma_operands(MmaShape {
            api: MmaApi::Sync,
            m: shape.0,
            n: shape.1,
            k: shape.2,
            a,
            b,
            c,
            d,
            a_row,
            b_row,
            satfinite: self.has("satfinite"),
            bit_and: self.has("and"),
        })
    }

    /// `mma.sync.aligned.kind::f8f6f4.m16n8k32.row.col.dtype.atype.btype.ctype d, a, b, c`
    /// and the block-scaled `mma.sync.aligned.kind::{mxf8f6f4,mxf4,mxf4nvf4}.block_scale
    /// [.scale_vec::NX].shape.row.col.f32.atype.btype.f32.stype d, a, b, c, scale-a,
    /// {byte-id-a, thread-id-a}, scale-b, {byte-id-b, thread-id-b}` of sm_120a [PTX ISA
    /// §9.7.14.5.14, §9.7.14.3 "Block Scaling for mma.sync", tables "Valid combinations of
    /// .scale_vec_size and .kind"]:
    ///
    /// | kind      | shape    | A, B                          | C, D     | scale                      |
    /// |-----------|----------|-------------------------------|----------|----------------------------|
    /// | f8f6f4    | m16n8k32 | e4m3 e5m2 e3m2 e2m3 e2m1 (8-bit containers) | f16, f32 | –          |
    /// | mxf8f6f4  | m16n8k32 | the same                      | f32      | ue8m0, 1X                  |
    /// | mxf4      | m16n8k64 | e2m1 (packed)                 | f32      | ue8m0, 2X                  |
    /// | mxf4nvf4  | m16n8k64 | e2m1 (packed)                 | f32      | ue8m0 2X or 4X, ue4m3 4X   |
    fn mma_kind(&self) -> Result<Decoded> {
        use MmaElem::*;
        let kind = self
            .i
            .mods
            .iter()
            .find_map(|m| m.strip_prefix("kind::"))
            .ok_or_else(|| {
                self.invalid(".block_scale needs a .kind (::mxf8f6f4, ::mxf4, ::mxf4nvf4)")
            })?;
        let block = self.has("block_scale");
        let (scaled, shape_k) = match kind {
            "f8f6f4" => (false, 32),
            "mxf8f6f4" => (true, 32),
            "mxf4" | "mxf4nvf4" => (true, 64),
            k => {
                return Err(self.unsupported(&format!(
                    "mma.sync .kind::{k} is not supported (supported: .kind::f8f6f4, ::mxf8f6f4, ::mxf4, ::mxf4nvf4)"
                )))
            }
        };
        if block != scaled {
            return Err(self.invalid(&format!(
                ".kind::{kind} {} .block_scale",
                if scaled { "takes" } else { "takes no" }
            )));
        }
        let shape = self.shape()?;
        let ts = self.elem_types();
        let [d, a, b, c] = ts[..] else {
            return Err(self.invalid("expected four types: .dtype.atype.btype.ctype"));
        };
        let narrow = |x: MmaElem| matches!(x, E4M3 | E5M2 | E3M2 | E2M3 | E2M1);
        let types_ok = match kind {
            "f8f6f4" => narrow(a) && narrow(b) && matches!(c, F16 | F32) && matches!(d, F16 | F32),
            "mxf8f6f4" => narrow(a) && narrow(b) && c == F32 && d == F32,
            _ => a == E2M1 && b == E2M1 && c == F32 && d == F32,
        };
        if shape != (16, 8, shape_k) || !types_ok {
            return Err(self.unsupported(&format!(
                "no mma.sync .kind::{kind} of shape m{}n{}k{} multiplies {a:?}×{b:?} into {c:?}/{d:?}: .kind::{kind} is m16n8k{shape_k} of {} into {} (PTX ISA §9.7.14.5.14)",
                shape.0,
                shape.1,
                shape.2,
                if shape_k == 32 { "e4m3, e5m2, e3m2, e2m3, e2m1" } else { "e2m1" },
                if kind == "f8f6f4" { "f16 or f32" } else { "f32" },
            )));
        }
        let [a_row, b_row] = self.layouts()[..] else {
            return Err(self.invalid("expected .row.col"));
        };
        if !a_row || b_row {
            return Err(self.invalid("this shape takes .row.col only"));
        }
        // m16n8k32's fp4 is one to an 8-bit container.
        let boxed = |x: MmaElem| {
            if x == E2M1 && shape_k == 32 {
                E2M1Byte
            } else {
                x
            }
        };
        let s = MmaShape {
            api: MmaApi::Sync,
            m: 16,
            n: 8,
            k: shape_k,
            a: boxed(a),
            b: boxed(b),
            c,
            d,
            a_row,
            b_row,
            satfinite: false,
            bit_and: false,
        };
        if !scaled {
            return self.mma_operands(s);
        }
        let vec = match self
            .i
            .mods
            .iter()
            .find_map(|m| m.strip_prefix("scale_vec::"))
        {
            None if kind == "mxf8f6f4" => 1,
            None => 2,
            Some("1X") => 1,
            Some("2X") => 2,
            Some("4X") => 4,
            Some(v) => return Err(self.invalid(&format!(".scale_vec::{v}: 1X, 2X or 4X"))),
        };
        let ue4m3 = self.has("ue4m3");
        if !ue4m3 && !self.has("ue8m0") {
            return Err(self.invalid("expected the scale type .ue8m0 or .ue4m3 last"));
        }
        let allowed = match kind {
            "mxf8f6f4" => vec == 1 && !ue4m3,
            "mxf4" => vec == 2 && !ue4m3,
            _ => vec == 4 || (vec == 2 && !ue4m3),
        };
        if !allowed {
            return Err(self.unsupported(&format!(
                ".kind::{kind} with .scale_vec::{vec}X and .{}: the ISA allows mxf8f6f4 1X ue8m0, mxf4 2X ue8m0, mxf4nvf4 2X ue8m0 or 4X ue8m0/ue4m3 (PTX ISA §9.7.14.3)",
                if ue4m3 { "ue4m3" } else { "ue8m0" }
            )));
        }
        if self.i.operands.len() != 8 {
            return Err(self.invalid(
                "expected d, a, b, c, scale-a, {byte-id-a, thread-id-a}, scale-b, {byte-id-b, thread-id-b}",
            ));
        }
        let one = |k: usize| -> Result<Src> {
            match self.op(k)? {
                Operand::Vector(v) if v.len() == 1 => (self.resolve)(&v[0], Some(Ty::U32)),
                o @ (Operand::Reg(_) | Operand::Int(_)) => (self.resolve)(o, Some(Ty::U32)),
                o => Err(self.invalid(&format!(
                    "operand {} must be a scale register, not {o:?}",
                    k + 1
                ))),
            }
        };
        let u16 = Ty {
            kind: Kind::Unsigned,
            bytes: 2,
        };
        let pair = |k: usize| -> Result<(Src, Src)> {
            match self.op(k)? {
                Operand::Vector(v) if v.len() == 2 => Ok((
                    (self.resolve)(&v[0], Some(u16))?,
                    (self.resolve)(&v[1], Some(u16))?,
                )),
                o => Err(self.invalid(&format!(
                    "operand {} must be the selector {{byte-id, thread-id}}, not {o:?}",
                    k + 1
                ))),
            }
        };
        let (sfa_byte, sfa_thread) = pair(5)?;
        let (sfb_byte, sfb_thread) = pair(7)?;
        // Constant selectors are checked here (as ptxas checks them), registers when run.
        for (byte, thread, threads, what) in [
            (sfa_byte, sfa_thread, 2, "a"),
            (sfb_byte, sfb_thread, 4, "b"),
        ] {
            if let Src::Imm(b) = byte {
                let ok = match vec {
                    1 => b < 4,
                    2 => b == 0 || b == 2,
                    _ => b == 0,
                };
                if !ok {
                    return Err(self.invalid(&format!(
                        "byte-id-{what} {b}: .scale_vec::{vec}X takes {}",
                        match vec {
                            1 => "0 to 3",
                            2 => "0 or 2",
                            _ => "0",
                        }
                    )));
                }
            }
            if let Src::Imm(t) = thread {
                if t >= threads {
                    return Err(
                        self.invalid(&format!("thread-id-{what} {t}: 0 to {}", threads - 1))
                    );
                }
            }
        }
        let scale = BlockScale {
            vec,
            ue4m3,
            sfa: one(4)?,
            sfa_byte,
            sfa_thread,
            sfb: one(6)?,
            sfb_byte,
            sfb_thread,
        };
        match self.mma_operands_with(s, 8)? {
            Decoded::Plain(Instr::Tensor(mut t)) => {
                t.op = TensorOp::MmaScaled { shape: s, scale };
                Ok(Decoded::Plain(Instr::Tensor(t)))
            }
            other => Ok(other),
        }
    }

    /// `wmma.mma[.op.popc].sync.aligned.alayout.blayout.shape[.rnd].dtype[.atype.btype].ctype
    /// [.satfinite] d, a, b, c` (`.f16` A and B name only D's and C's types).
    fn wmma_mma(&self) -> Result<Decoded> {
        let shape = self.shape()?;
        let ts = self.elem_types();
        let (d, a, b, c) = match ts[..] {
            [d, c] => (d, MmaElem::F16, MmaElem::F16, c),
            [d, a, b, c] => (d, a, b, c),
            _ => {
                return Err(
                    self.invalid("expected .dtype.ctype (f16 A and B) or .dtype.atype.btype.ctype")
                )
            }
        };
        if !wmma_ok(shape, a, b, c, d) {
            return Err(self.unsupported(&format!(
                "no wmma.mma of shape m{}n{}k{} multiplies {a:?}×{b:?} into {c:?}/{d:?} (PTX ISA §9.7.14.4.1)",
                shape.0, shape.1, shape.2
            )));
        }
        if a == MmaElem::B1 && !(self.has("popc") && (self.has("xor") || self.has("and"))) {
            return Err(self.invalid(".b1 takes .xor.popc or .and.popc"));
        }
        self.mma_operands(MmaShape {
            api: MmaApi::Wmma,
            m: shape.0,
            n: shape.1,
            k: shape.2,
            a,
            b,
            c,
            d,
            // wmma fragments do not depend on the layouts (its loads made them).
            a_row: self.has("row"),
            b_row: false,
            satfinite: self.has("satfinite"),
            bit_and: self.has("and"),
        })
    }

    /// `wmma.load.{a,b,c}.sync.aligned.layout.shape[.ss].type r, [p][, stride]` and
    /// `wmma.store.d.sync.aligned.layout.shape[.ss].type [p], r[, stride]`.
    fn wmma_mem(&self) -> Result<Decoded> {
        let store = self.has("store");
        let frag = if store {
            if !self.has("d") {
                return Err(self.invalid("wmma.store stores the .d fragment"));
            }
            WmmaFrag::C
        } else if self.has("a") {
            WmmaFrag::A
        } else if self.has("b") {
            WmmaFrag::B
        } else if self.has("c") {
            WmmaFrag::C
        } else {
            return Err(self.invalid("expected wmma.load.a, .b or .c"));
        };
        let row = if self.has("row") {
            true
        } else if self.has("col") {
            false
        } else {
            return Err(self.invalid("expected a layout (.row or .col)"));
        };
        let shape = self.shape()?;
        let elem = *self
            .elem_types()
            .last()
            .ok_or_else(|| self.invalid("no element type"))?;
        let (ab, cd) = wmma_types(shape).ok_or_else(|| {
            self.unsupported(&format!(
                "no wmma shape m{}n{}k{} (PTX ISA §9.7.14.4.1)",
                shape.0, shape.1, shape.2
            ))
        })?;
        let allowed = if frag == WmmaFrag::C { cd } else { ab };
        if !allowed.contains(&elem) {
            return Err(self.unsupported(&format!(
                "wmma m{}n{}k{} has no {elem:?} {} fragment",
                shape.0,
                shape.1,
                shape.2,
                if frag == WmmaFrag::C {
                    "accumulator"
                } else {
                    "A/B"
                }
            )));
        }
        // Sub-byte fragments come .row A and .col B only.
        if elem.bits() < 8 && ((frag == WmmaFrag::A) != row) {
            return Err(self.invalid("sub-byte A is .row only and B .col only"));
        }
        let space = match self.i.mods.iter().find_map(|m| match m.as_str() {
            "global" => Some(MemSpace::Global),
            "shared" | "shared::cta" => Some(MemSpace::Shared),
            "local" | "const" | "param" | "shared::cluster" => Some(MemSpace::Param),
            _ => None,
        }) {
            None => MemSpace::Generic,
            Some(MemSpace::Param) => {
                return Err(self.invalid("wmma accesses .global, .shared or generic memory"))
            }
            Some(s) => s,
        };
        let lay = Layout::wmma(shape.0, shape.1, shape.2, elem);
        let part = match frag {
            WmmaFrag::A => Part::A,
            WmmaFrag::B => Part::B,
            WmmaFrag::C => Part::C,
        };
        let want = match (elem, frag) {
            (MmaElem::F16, WmmaFrag::A | WmmaFrag::B) => 8,
            _ => lay.regs(part),
        };
        let (regs_op, addr_op) = if store { (1, 0) } else { (0, 1) };
        let regs: Vec<Src> = if store {
            self.frag_srcs(regs_op, elem)?
        } else {
            self.frag_dests(regs_op)?
                .into_iter()
                .map(Src::Reg)
                .collect()
        };
        self.check_count(
            if store {
                "D"
            } else {
                ["A", "B", "C"][frag as usize]
            },
            regs.len(),
            want,
        )?;
        let stride = match self.i.operands.get(2) {
            Some(o) => Some((self.resolve)(o, Some(Ty::U32))?),
            None => None,
        };
        if self.i.operands.len() > 3 {
            return Err(self.invalid("expected a fragment, an address and a stride"));
        }
        Ok(Decoded::Memory(
            Instr::Wmma(Box::new(WmmaInstr {
                store,
                frag,
                m: shape.0,
                n: shape.1,
                k: shape.2,
                elem,
                row,
                space,
                regs,
                addr: self.frag_addr(addr_op)?,
                stride,
                site: 0,
            })),
            vec![SiteKind {
                op: if store { Op::Store } else { Op::Load },
                space: Self::model_space(space),
                read_only: false,
                atomic: false,
            }],
        ))
    }

    /// `movmatrix.sync.aligned.m8n8.trans.b16 d, a`.
    fn movmatrix(&self) -> Result<Decoded> {
        if !(self.has("m8n8") && self.has("trans") && self.has("b16")) {
            return Err(self.unsupported("movmatrix is .m8n8.trans.b16 only"));
        }
        let d = self.frag_dests(0)?;
        let a = self.frag_srcs(1, MmaElem::F16)?;
        if d.len() != 1 || a.len() != 1 || self.i.operands.len() != 2 {
            return Err(self.invalid("expected one destination and one source register"));
        }
        Ok(Decoded::Plain(Instr::Tensor(Box::new(TensorInstr {
            op: TensorOp::MovTrans,
            d,
            a,
            b: Vec::new(),
            c: Vec::new(),
        }))))
    }
}
