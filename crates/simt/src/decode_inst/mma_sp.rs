//! Sparse tensor-core MMA: `mma.sp{::ordered_metadata}.sync.aligned.shape.row.col[.satfinite]
//! .dtype.atype.btype.ctype d, a, b, c, e, f` [PTX ISA §9.7.14.6]. Shapes and types are
//! checked against the ISA's table (§9.7.14.6.x "Description of .atype/.btype … for
//! mma.sp"), each fragment's register count against its shape (A holds the m×k/2
//! non-zeros), and the sparsity selector `f` against the shape (see
//! [`crate::exec::mma_sp::Sparse`]): a malformed instruction is an error naming it.

use super::*;
use crate::exec::mma::{Layout, Part};
use crate::exec::mma_sp::Sparse;

/// Whether `mma.sp.mMnNkK` takes these A, B, C and D types [PTX ISA §9.7.14.6]: f16 and
/// bf16 m16n8k16/k32, tf32 m16n8k8/k16, s8/u8 m16n8k32/k64, e4m3/e5m2 m16n8k64, s4/u4
/// m16n8k64/k128 (the `.kind::f8f6f4` forms of sm_120 are refused before this).
fn sp_ok((m, n, k): (u32, u32, u32), a: MmaElem, b: MmaElem, c: MmaElem, d: MmaElem) -> bool {
    use MmaElem::*;
    let both = |x: &[MmaElem]| x.contains(&a) && x.contains(&b);
    let float_cd = matches!(c, F16 | F32) && matches!(d, F16 | F32);
    let f32_cd = c == F32 && d == F32;
    let s32_cd = c == S32 && d == S32;
    if (m, n) != (16, 8) {
        return false;
    }
    match k {
        8 => both(&[TF32]) && f32_cd,
        16 => (both(&[F16]) && float_cd) || (both(&[BF16]) && f32_cd) || (both(&[TF32]) && f32_cd),
        32 => {
            (both(&[F16]) && float_cd) || (both(&[BF16]) && f32_cd) || (both(&[S8, U8]) && s32_cd)
        }
        64 => {
            (both(&[S8, U8]) && s32_cd)
                || (both(&[E4M3, E5M2]) && float_cd)
                || (both(&[S4, U4]) && s32_cd)
        }
        128 => both(&[S4, U4]) && s32_cd,
        _ => false,
    }
}

impl<'a> InstDecoder<'a> {
    /// `mma.sp{::ordered_metadata}.sync.aligned.shape.row.col[.satfinite].dtype.atype.btype
    /// .ctype d, a, b, c, e, f` [PTX ISA §9.7.14.6.3].
    pub(super) fn mma_sp(&self) -> Result<Decoded> {
        if self
            .i
            .mods
            .iter()
            .any(|m| m.starts_with("kind::") || m == "block_scale")
        {
            return Err(self.unsupported(
                "mma.sp with .kind:: or .block_scale (sm_120 narrow floats) is not supported yet",
            ));
        }
        let ordered = self.has("sp::ordered_metadata");
        if !ordered && !self.has("sp") {
            return Err(self.invalid("expected .sp or .sp::ordered_metadata"));
        }
        if !(self.has("sync") && self.has("aligned")) {
            return Err(self.invalid("mma.sp is .sync.aligned"));
        }
        let (shape, [d, a, b, c]) = self.typed_shape("mma.sp", "§9.7.14.6", sp_ok)?;
        if self.layouts() != [true, false] {
            return Err(self.invalid("mma.sp takes .row.col only"));
        }
        let s = MmaShape {
            api: MmaApi::Sync,
            m: shape.0,
            n: shape.1,
            k: shape.2,
            a,
            b,
            c,
            d,
            a_row: true,
            b_row: false,
            satfinite: self.has("satfinite"),
            bit_and: false,
        };
        if s.satfinite && d != MmaElem::S32 {
            return Err(self.invalid(".satfinite is for integer (.s32) results"));
        }
        if self.i.operands.len() != 6 {
            return Err(self.invalid("expected d, a, b, c, e, f (metadata and sparsity selector)"));
        }
        let sp = Sparse::new(&s);
        let lay = Layout::mma(&s);
        let dv = self.frag_dests(0)?;
        let av = self.frag_srcs(1, a)?;
        let bv = self.frag_srcs(2, b)?;
        let cv = self.frag_srcs(3, c)?;
        self.check_count("D", dv.len(), lay.regs(Part::D))?;
        self.check_count("A", av.len(), sp.a_layout().regs(Part::A))?;
        self.check_count("B", bv.len(), lay.regs(Part::B))?;
        self.check_count("C", cv.len(), lay.regs(Part::C))?;
        let e = match self.op(4)? {
            o @ (Operand::Reg(_) | Operand::Int(_)) => (self.resolve)(o, Some(Ty::U32))?,
            _ => return Err(self.invalid("the metadata operand e must be a 32-bit register")),
        };
        let max = sp.max_selector();
        let sel = match self.op(5)? {
            Operand::Int(f) if (0..=max as i64).contains(f) => *f as u8,
            Operand::Int(f) => {
                return Err(self.invalid(&format!(
                    "the sparsity selector of m{}n{}k{} with .{} is {} (PTX ISA §9.7.14.6.1), {f} given",
                    s.m,
                    s.n,
                    s.k,
                    format!("{a:?}").to_lowercase(),
                    if max == 0 {
                        "0".to_string()
                    } else {
                        format!("0 to {max}")
                    }
                )))
            }
            _ => return Err(self.invalid("the sparsity selector f must be an integer constant")),
        };
        Ok(Decoded::Plain(Instr::Tensor(Box::new(TensorInstr {
            op: TensorOp::MmaSp {
                shape: s,
                e,
                sel,
                ordered,
            },
            d: dv,
            a: av,
            b: bv,
            c: cv,
        }))))
    }
}
