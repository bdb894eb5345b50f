//! Warpgroup matrix instructions [PTX ISA §9.7.15]: `wgmma.mma_async` (dense) and the
//! ordering instructions `wgmma.fence`, `wgmma.commit_group` and `wgmma.wait_group`.
//!
//! The executor completes each `wgmma.mma_async` when a warp executes it (`exec/wgmma.rs`),
//! so the three ordering instructions have nothing left to order: they decode to no-ops.
//! Shapes, types, the fragment's register count and the immediates are checked against the
//! ISA's tables, so that a malformed instruction is an error naming it, never a wrong run.
//! Not supported: `wgmma.mma_async.sp` (sparse A) and the `.b1` (`.and.popc`) variant.

use super::*;

/// `m64nNkK` → (N, K); `None` unless M is 64.
fn parse_shape(s: &str) -> Option<(u32, u32)> {
    let r = s.strip_prefix("m64n")?;
    let (n, k) = r.split_once('k')?;
    Some((n.parse().ok()?, k.parse().ok()?))
}

/// Whether a dense `wgmma.mma_async` has N = `n` [PTX ISA §9.7.15.2]: every multiple of 8
/// up to 256 for the float types; 8, 16, 24, 32, then multiples of 16 up to 256 for
/// `.s8`/`.u8`.
pub(crate) fn n_ok(int: bool, n: u32) -> bool {
    if int {
        matches!(n, 8 | 16 | 24 | 32) || ((48..=256).contains(&n) && n.is_multiple_of(16))
    } else {
        (8..=256).contains(&n) && n.is_multiple_of(8)
    }
}

/// The K of a wgmma of multiplicand type `a` and the D types it accumulates into
/// [PTX ISA §9.7.15.3]; `None` for a type wgmma does not take.
fn k_and_d(a: MmaElem, b: MmaElem) -> Option<(u32, &'static [MmaElem])> {
    use MmaElem::*;
    Some(match (a, b) {
        (F16, F16) => (16, &[F16, F32]),
        (BF16, BF16) => (16, &[F32]),
        (TF32, TF32) => (8, &[F32]),
        (E4M3 | E5M2, E4M3 | E5M2) => (32, &[F16, F32]),
        (S8 | U8, S8 | U8) => (32, &[S32]),
        _ => return None,
    })
}

impl<'a> InstDecoder<'a> {
    /// `wgmma.*`.
    pub(super) fn wgmma(&self) -> Result<Decoded> {
        if self.has("fence") || self.has("commit_group") || self.has("wait_group") {
            // Ordering only: every wgmma.mma_async is complete once a warp has executed it.
            return Ok(Decoded::Plain(Instr::Nop));
        }
        if !self.has("mma_async") {
            return Err(self.invalid(
                "expected wgmma.fence, wgmma.commit_group, wgmma.wait_group or wgmma.mma_async",
            ));
        }
        if self.has("sp") {
            return Err(self.unsupported("sparse wgmma (wgmma.mma_async.sp) is not supported yet"));
        }
        if !(self.has("sync") && self.has("aligned")) {
            return Err(self.invalid("wgmma.mma_async is .sync.aligned"));
        }
        let (n, k) = self
            .i
            .mods
            .iter()
            .find(|m| m.len() > 1 && m.starts_with('m') && m.as_bytes()[1].is_ascii_digit())
            .map(|m| {
                parse_shape(m).ok_or_else(|| {
                    self.unsupported(&format!(
                        "no wgmma shape .{m}: wgmma is m64nNkK (PTX ISA §9.7.15.2)"
                    ))
                })
            })
            .ok_or_else(|| self.invalid("no shape modifier (.m64nNkK)"))??;
        let ts: Vec<MmaElem> = self
            .i
            .mods
            .iter()
            .filter_map(|m| MmaElem::parse(m))
            .collect();
        let [d, a, b] = ts[..] else {
            return Err(self.invalid("expected three types: .dtype.atype.btype"));
        };
        if a == MmaElem::B1 || b == MmaElem::B1 {
            return Err(self.unsupported("single-bit wgmma (.b1 .and.popc) is not supported yet"));
        }
        let (want_k, ds) = k_and_d(a, b).ok_or_else(|| {
            self.unsupported(&format!(
                "wgmma does not multiply {a:?} by {b:?} (PTX ISA §9.7.15.3)"
            ))
        })?;
        let int = matches!(a, MmaElem::S8 | MmaElem::U8);
        if !ds.contains(&d) {
            return Err(self.unsupported(&format!(
                "wgmma of {a:?} accumulates into {}, not {d:?} (PTX ISA §9.7.15.3)",
                ds.iter()
                    .map(|t| format!("{t:?}"))
                    .collect::<Vec<_>>()
                    .join(" or ")
            )));
        }
        if k != want_k || !n_ok(int, n) {
            return Err(self.unsupported(&format!(
                "no wgmma of shape m64n{n}k{k} on {a:?} (PTX ISA §9.7.15.2: K is {want_k}, N {})",
                if int {
                    "8, 16, 24, 32, then a multiple of 16 up to 256"
                } else {
                    "a multiple of 8 up to 256"
                }
            )));
        }
        if self.has("satfinite") && !int {
            return Err(self.invalid(".satfinite is for the integer (.s32) wgmma only"));
        }
        // d: N/2 registers (f32, s32) or N/4 (.f16x2).
        let dregs: Vec<Reg> = match self.op(0)? {
            Operand::Vector(v) => {
                v.iter()
                    .map(|o| match o {
                        Operand::Reg(_) => (self.dest)(o)?
                            .ok_or_else(|| self.invalid("a sink '_' cannot receive D")),
                        _ => Err(self.invalid("operand 1 must be D's registers in braces {d0, …}")),
                    })
                    .collect::<Result<_>>()?
            }
            _ => return Err(self.invalid("operand 1 must be D's registers in braces {d0, …}")),
        };
        let want_d = n * 16 / 32 / d.per_reg();
        if dregs.len() != want_d as usize {
            return Err(self.invalid(&format!(
                "m64n{n} with a .{} accumulator takes {want_d} D registers, {} given",
                format!("{d:?}").to_lowercase(),
                dregs.len()
            )));
        }
        // a: four fragment registers, or a descriptor.
        let (a_regs, a_desc) = match self.op(1)? {
            Operand::Vector(v) => {
                if v.len() != 4 {
                    return Err(self.invalid(&format!(
                        "A in registers is 4 registers, {} given",
                        v.len()
                    )));
                }
                let regs = v
                    .iter()
                    .map(|o| match o {
                        Operand::Reg(_) | Operand::Int(_) => (self.resolve)(o, Some(Ty::U32)),
                        _ => Err(self.invalid("A's fragment must be registers")),
                    })
                    .collect::<Result<Vec<_>>>()?;
                (regs, None)
            }
            o @ (Operand::Reg(_) | Operand::Int(_)) => {
                (Vec::new(), Some((self.resolve)(o, Some(Ty::U64))?))
            }
            _ => {
                return Err(self.invalid(
                    "operand 2 must be A's descriptor (a .b64 register) or its 4 registers {a0, a1, a2, a3}",
                ))
            }
        };
        let b_desc = match self.op(2)? {
            o @ (Operand::Reg(_) | Operand::Int(_)) => (self.resolve)(o, Some(Ty::U64))?,
            _ => return Err(self.invalid("operand 3 must be B's descriptor (a .b64 register)")),
        };
        let scale_d = self.s(3, Ty::PRED)?;
        // The immediates: imm-scale-a, imm-scale-b (float types), then imm-trans-a (A from a
        // descriptor) and imm-trans-b (16-bit types).
        let float = !int;
        let sixteen = a.bits() == 16;
        let names: Vec<&str> = [
            (float, "imm-scale-a"),
            (float, "imm-scale-b"),
            (sixteen && a_desc.is_some(), "imm-trans-a"),
            (sixteen, "imm-trans-b"),
        ]
        .iter()
        .filter(|(on, _)| *on)
        .map(|(_, n)| *n)
        .collect();
        if self.i.operands.len() != 4 + names.len() {
            let list = [
                "d",
                if a_desc.is_some() { "a-desc" } else { "a" },
                "b-desc",
                "scale-d",
            ]
            .into_iter()
            .chain(names.iter().copied())
            .collect::<Vec<_>>()
            .join(", ");
            return Err(self.invalid(&format!(
                "this wgmma takes {} operands: {list}; {} given",
                4 + names.len(),
                self.i.operands.len()
            )));
        }
        let imm = |idx: usize, allowed: &[i64]| -> Result<i64> {
            match self.op(idx)? {
                Operand::Int(v) if allowed.contains(v) => Ok(*v),
                _ => Err(self.invalid(&format!(
                    "{} (operand {}) must be the immediate {}",
                    names[idx - 4],
                    idx + 1,
                    allowed
                        .iter()
                        .map(|x| x.to_string())
                        .collect::<Vec<_>>()
                        .join(" or ")
                ))),
            }
        };
        let (mut neg_a, mut neg_b, mut trans_a, mut trans_b) = (false, false, false, false);
        for (j, name) in names.iter().enumerate() {
            let idx = 4 + j;
            match *name {
                "imm-scale-a" => neg_a = imm(idx, &[1, -1])? == -1,
                "imm-scale-b" => neg_b = imm(idx, &[1, -1])? == -1,
                "imm-trans-a" => trans_a = imm(idx, &[0, 1])? == 1,
                _ => trans_b = imm(idx, &[0, 1])? == 1,
            }
        }
        Ok(Decoded::Memory(
            Instr::Wgmma(Box::new(WgmmaInstr {
                n,
                k,
                a,
                b,
                d,
                dregs,
                a_regs,
                a_desc,
                b_desc,
                scale_d,
                neg_a,
                neg_b,
                trans_a,
                trans_b,
                satfinite: self.has("satfinite"),
                site: 0,
            })),
            vec![SiteKind {
                op: Op::Load,
                space: Some(Space::Shared),
                read_only: false,
                atomic: false,
            }],
        ))
    }
}
