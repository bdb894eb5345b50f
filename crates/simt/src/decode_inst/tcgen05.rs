//! Fifth-generation tensor core instructions [PTX ISA §9.7.16, "TensorCore 5th Generation
//! Family Instructions"]: tensor memory allocation (`tcgen05.alloc`, `.dealloc`,
//! `.relinquish_alloc_permit`, §9.7.16.7), moves between registers and tensor memory
//! (`tcgen05.ld`, `.st`, `.wait`, §9.7.16.8), the MMA (`tcgen05.mma`, §9.7.16.10) and its
//! completion (`tcgen05.commit`, §9.7.16.11), and the ordering fences (§9.7.16.6).
//!
//! The executor completes every `tcgen05` operation when it is issued (`exec/tcgen05.rs`),
//! so `tcgen05.wait::ld`/`wait::st` and `tcgen05.fence::*` decode to no-ops, and
//! `tcgen05.commit … mbarrier::arrive::one [mbar]` is an arrival on the barrier at once (as
//! an `mbarrier.arrive` would be). Supported: `.cta_group::1`; `tcgen05.ld/st` of every
//! shape (`.32x32b`, `.16x64b`, `.16x128b`, `.16x256b`, `.16x32bx2`) and `.num` `.x1`…
//! `.x128` without `.pack::16b`/`.unpack::16b`; dense `tcgen05.mma` of `.kind::f16`,
//! `::tf32`, `::f8f6f4` (E4M3/E5M2 operands) and `::i8` with A in shared memory or tensor
//! memory. Not supported (a clear error): `.cta_group::2`, `tcgen05.cp`, `tcgen05.shift`,
//! `.sp`, `.ws`, `.block_scale`/`.kind::mxf*`, `.kind::f8f6f4` with 6- or 4-bit types, the
//! disable-output-lane mask, `scale-input-d`, `.multicast::cluster` commits.

use super::*;

/// `.xN` → N (a power of two up to 128).
fn num(m: &str) -> Option<u32> {
    let n: u32 = m.strip_prefix('x')?.parse().ok()?;
    (n.is_power_of_two() && n <= 128).then_some(n)
}

/// Registers per thread of one repetition of `shape` [PTX ISA §9.7.16.8.3, Table 49].
fn regs_per_rep(shape: Tc5Shape) -> u32 {
    match shape {
        Tc5Shape::S32x32b | Tc5Shape::S16x64b | Tc5Shape::S16x32bx2 => 1,
        Tc5Shape::S16x128b => 2,
        Tc5Shape::S16x256b => 4,
    }
}

impl<'a> InstDecoder<'a> {
    /// `tcgen05.*`.
    pub(super) fn tcgen05(&self) -> Result<Decoded> {
        let sub = self
            .i
            .mods
            .first()
            .map(|s| s.as_str())
            .ok_or_else(|| self.invalid("tcgen05 needs an operation (.alloc, .ld, .mma, …)"))?;
        if self.has("cta_group::2") {
            return Err(self.unsupported(
                ".cta_group::2 (a CTA pair's tensor memory) is not supported yet: only .cta_group::1",
            ));
        }
        match sub {
            "fence::before_thread_sync" | "fence::after_thread_sync" | "wait::ld" | "wait::st" => {
                // Every tcgen05 operation completes when it is issued: nothing to order.
                Ok(Decoded::Plain(Instr::Nop))
            }
            "alloc" => {
                if self.space() != Some(MemSpace::Shared) {
                    return Err(self.invalid("tcgen05.alloc writes the address to .shared::cta"));
                }
                Ok(Decoded::Plain(Instr::Tcgen05(Box::new(Tc5Op::Alloc {
                    dst: (self.addr)(self.op(0)?)?,
                    ncols: self.s(1, Ty::U32)?,
                }))))
            }
            "dealloc" => Ok(Decoded::Plain(Instr::Tcgen05(Box::new(Tc5Op::Dealloc {
                taddr: self.s(0, Ty::U32)?,
                ncols: self.s(1, Ty::U32)?,
            })))),
            "relinquish_alloc_permit" => Ok(Decoded::Plain(Instr::Tcgen05(Box::new(
                Tc5Op::Relinquish,
            )))),
            "ld" | "st" => self.tcgen05_move(sub == "st"),
            "commit" => {
                if self.has("multicast::cluster") {
                    return Err(self.unsupported(
                        "tcgen05.commit.multicast::cluster (arrivals in several CTAs) is not supported yet",
                    ));
                }
                if !self.has("mbarrier::arrive::one") {
                    return Err(self.invalid("tcgen05.commit takes .mbarrier::arrive::one"));
                }
                // One arrival on the barrier, now (every MMA before it is complete). The
                // address is a shared::cluster one (with no state space named it is generic:
                // Triton passes a zero-extended shared::cta address there, which the
                // executor reads as the shared address it is).
                Ok(Decoded::Plain(Instr::Mbarrier {
                    op: MbarOp::Arrive {
                        drop: false,
                        expect_tx: false,
                        no_complete: false,
                    },
                    space: MemSpace::Shared,
                    d: None,
                    addr: (self.addr)(self.op(0)?)?,
                    count: None,
                }))
            }
            "mma" => self.tcgen05_mma(),
            "cp" | "shift" => Err(self.unsupported(&format!(
                "tcgen05.{sub} is not supported yet (supported: tcgen05.alloc, dealloc, relinquish_alloc_permit, ld, st, wait, fence, mma, commit)"
            ))),
            _ => Err(self.unsupported(
                "unknown tcgen05 operation (supported: tcgen05.alloc, dealloc, relinquish_alloc_permit, ld, st, wait, fence, mma, commit)",
            )),
        }
    }

    /// `tcgen05.ld` / `tcgen05.st` [PTX ISA §9.7.16.8.3–4].
    fn tcgen05_move(&self, store: bool) -> Result<Decoded> {
        if !(self.has("sync") && self.has("aligned")) {
            return Err(self.invalid("tcgen05.ld/st are .sync.aligned"));
        }
        if self.has("pack::16b") || self.has("unpack::16b") {
            return Err(self.unsupported(".pack::16b / .unpack::16b is not supported yet"));
        }
        let shape = self
            .pick(&[
                ("32x32b", Tc5Shape::S32x32b),
                ("16x64b", Tc5Shape::S16x64b),
                ("16x128b", Tc5Shape::S16x128b),
                ("16x256b", Tc5Shape::S16x256b),
                ("16x32bx2", Tc5Shape::S16x32bx2),
            ])
            .ok_or_else(|| {
                self.invalid("no shape: .32x32b, .16x64b, .16x128b, .16x256b or .16x32bx2")
            })?;
        let n = self
            .i
            .mods
            .iter()
            .find_map(|m| num(m))
            .ok_or_else(|| self.invalid("no .num: .x1, .x2, .x4, … .x128"))?;
        let want = regs_per_rep(shape) * n;
        if want > 128 {
            return Err(self.invalid(&format!(
                "this shape takes {} registers per repetition: .x{n} would be {want}, over 128",
                regs_per_rep(shape)
            )));
        }
        let split_op = shape == Tc5Shape::S16x32bx2;
        let (addr_k, regs_k, split_k) = if store {
            (0, if split_op { 2 } else { 1 }, 1)
        } else {
            (1, 0, 2)
        };
        if self.i.operands.len() != 2 + split_op as usize {
            return Err(self.invalid(&format!(
                "expected {} operands{}",
                2 + split_op as usize,
                if split_op {
                    " (.16x32bx2 takes immHalfSplitoff)"
                } else {
                    ""
                }
            )));
        }
        let split = if split_op {
            match self.op(split_k)? {
                Operand::Int(v) if (0..512).contains(v) => *v as u32,
                _ => {
                    return Err(
                        self.invalid("immHalfSplitoff must be an immediate column offset 0 … 511")
                    )
                }
            }
        } else {
            0
        };
        let taddr = (self.addr)(self.op(addr_k)?)?;
        let items: Vec<&Operand> = match self.op(regs_k)? {
            Operand::Vector(v) => v.iter().collect(),
            o => vec![o],
        };
        if items.len() != want as usize {
            return Err(self.invalid(&format!(
                "this shape and .x{n} move {want} registers per thread, {} given",
                items.len()
            )));
        }
        let regs = items
            .iter()
            .map(|o| {
                if store {
                    (self.resolve)(o, Some(Ty::U32))
                } else {
                    (self.dest)(o)?
                        .map(Src::Reg)
                        .ok_or_else(|| self.invalid("a sink '_' cannot receive tensor memory"))
                }
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Decoded::Plain(Instr::Tcgen05(Box::new(Tc5Op::Move {
            store,
            shape,
            num: n,
            regs,
            taddr,
            split,
        }))))
    }

    /// `tcgen05.mma.cta_group::1.kind [d-tmem], a-desc|[a-tmem], b-desc, idesc,
    /// enable-input-d` [PTX ISA §9.7.16.10.9].
    fn tcgen05_mma(&self) -> Result<Decoded> {
        for (m, why) in [
            ("sp", "sparse tcgen05.mma.sp"),
            ("ws", "tcgen05.mma.ws"),
            ("block_scale", "tcgen05.mma.block_scale"),
        ] {
            if self.has(m) {
                return Err(self.unsupported(&format!("{why} is not supported yet")));
            }
        }
        let kind = match self.i.mods.iter().find(|m| m.starts_with("kind::")) {
            Some(k) => match k.as_str() {
                "kind::f16" => Tc5Kind::F16,
                "kind::tf32" => Tc5Kind::Tf32,
                "kind::f8f6f4" => Tc5Kind::F8f6f4,
                "kind::i8" => Tc5Kind::I8,
                other => {
                    return Err(self.unsupported(&format!(
                    ".{other} is not supported yet (supported: .kind::f16, ::tf32, ::f8f6f4, ::i8)"
                )))
                }
            },
            None => return Err(self.invalid("no .kind (.kind::f16, ::tf32, ::f8f6f4, ::i8)")),
        };
        if !self.has("cta_group::1") {
            return Err(self.invalid("no .cta_group::1"));
        }
        match self.i.operands.len() {
            5 => {}
            6 if matches!(self.i.operands[4], Operand::Vector(_)) => {
                return Err(self.unsupported("the disable-output-lane mask is not supported yet"))
            }
            6 => return Err(self.unsupported("scale-input-d is not supported yet")),
            n => {
                return Err(self.invalid(&format!(
                    "expected 5 operands ([d-tmem], a-desc or [a-tmem], b-desc, idesc, enable-input-d), {n} given"
                )))
            }
        }
        let d = match self.op(0)? {
            o @ Operand::Address { .. } => (self.addr)(o)?,
            _ => return Err(self.invalid("operand 1 must be D's tensor memory address [d-tmem]")),
        };
        let (a_tmem, a_desc) = match self.op(1)? {
            o @ Operand::Address { .. } => (Some((self.addr)(o)?), None),
            o @ (Operand::Reg(_) | Operand::Int(_)) => (None, Some((self.resolve)(o, Some(Ty::U64))?)),
            _ => {
                return Err(self.invalid(
                    "operand 2 must be A's shared-memory descriptor (.b64) or its tensor memory address [a-tmem]",
                ))
            }
        };
        let b_desc = match self.op(2)? {
            o @ (Operand::Reg(_) | Operand::Int(_)) => (self.resolve)(o, Some(Ty::U64))?,
            _ => return Err(self.invalid("operand 3 must be B's shared-memory descriptor (.b64)")),
        };
        let idesc = self.s(3, Ty::U32)?;
        let enable_d = self.s(4, Ty::PRED)?;
        Ok(Decoded::Memory(
            Instr::Tcgen05(Box::new(Tc5Op::Mma(Tc5Mma {
                kind,
                d,
                a_tmem,
                a_desc,
                b_desc,
                idesc,
                enable_d,
                site: 0,
            }))),
            vec![SiteKind {
                op: Op::Load,
                space: Some(Space::Shared),
                read_only: false,
                atomic: false,
            }],
        ))
    }
}
