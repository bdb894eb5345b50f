//! Fifth-generation tensor core instructions [PTX ISA §9.7.16, "TensorCore 5th Generation
//! Family Instructions"]: tensor memory allocation (`tcgen05.alloc`, `.dealloc`,
//! `.relinquish_alloc_permit`, §9.7.16.7), moves between registers and tensor memory
//! (`tcgen05.ld`, `.st`, `.wait`, §9.7.16.8), the MMA (`tcgen05.mma`, §9.7.16.10) and its
//! completion (`tcgen05.commit`, §9.7.16.11), and the ordering fences (§9.7.16.6).
//!
//! The executor completes every `tcgen05` operation when it is issued (`exec/tcgen05.rs`),
//! so `tcgen05.wait::ld`/`wait::st` and `tcgen05.fence::*` decode to no-ops, and
//! `tcgen05.commit … mbarrier::arrive::one [mbar]` is an arrival on the barrier at once (as
//! an `mbarrier.arrive` would be; with `.multicast::cluster`, one on the barrier at the same
//! offset in each block of the ctaMask). Supported: `.cta_group::1` and `::2` (a CTA pair of a
//! cluster, §9.7.16.5.1); `tcgen05.ld/st` of every shape (`.32x32b`, `.16x64b`, `.16x128b`,
//! `.16x256b`, `.16x32bx2`) and `.num` `.x1`…`.x128` without `.pack::16b`/`.unpack::16b`;
//! `tcgen05.cp` of every shape, multicast and decompression (§9.7.16.9.2); `tcgen05.shift`
//! (§9.7.16.9.3); dense `tcgen05.mma` of `.kind::f16`, `::tf32`, `::f8f6f4` and `::i8`, its
//! `.ws` form (§9.7.16.10.9.3) and the block-scaled `.kind::mxf8f6f4`, `::mxf4`,
//! `::mxf4nvf4` (`.block_scale`, §9.7.16.10.7), with A in shared memory or tensor memory.
//! Not supported (a clear error): `.sp`, the disable-output-lane mask, `scale-input-d`, the
//! `.ws` zero-column mask.

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
        let pair = self.has("cta_group::2");
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
                    pair,
                }))))
            }
            "dealloc" => Ok(Decoded::Plain(Instr::Tcgen05(Box::new(Tc5Op::Dealloc {
                taddr: self.s(0, Ty::U32)?,
                ncols: self.s(1, Ty::U32)?,
                pair,
            })))),
            "relinquish_alloc_permit" => Ok(Decoded::Plain(Instr::Tcgen05(Box::new(
                Tc5Op::Relinquish { pair },
            )))),
            "ld" | "st" => self.tcgen05_move(sub == "st"),
            "commit" => {
                if !self.has("mbarrier::arrive::one") {
                    return Err(self.invalid("tcgen05.commit takes .mbarrier::arrive::one"));
                }
                if self.has("multicast::cluster") {
                    return match self.i.operands.as_slice() {
                        [m @ Operand::Address { .. }, k] => {
                            Ok(Decoded::Plain(Instr::Tcgen05(Box::new(Tc5Op::CommitMulticast {
                                mbar: (self.addr)(m)?,
                                mask: (self.resolve)(k, Some(Ty::U32))?,
                            }))))
                        }
                        _ => Err(self.invalid(
                            "tcgen05.commit….multicast::cluster takes [mbar] and a 16-bit ctaMask",
                        )),
                    };
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
            "mma" => self.tcgen05_mma(pair),
            "cp" => self.tcgen05_cp(pair),
            "shift" => {
                if !self.has("down") {
                    return Err(self.invalid("tcgen05.shift takes .down"));
                }
                match self.i.operands.as_slice() {
                    [o @ Operand::Address { .. }] => {
                        Ok(Decoded::Plain(Instr::Tcgen05(Box::new(Tc5Op::Shift {
                            taddr: (self.addr)(o)?,
                            pair,
                        }))))
                    }
                    _ => Err(self.invalid("tcgen05.shift takes one operand, [taddr]")),
                }
            }
            _ => Err(self.unsupported(
                "unknown tcgen05 operation (supported: tcgen05.alloc, dealloc, relinquish_alloc_permit, ld, st, wait, fence, cp, shift, mma, commit)",
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

    /// `tcgen05.cp.cta_group.shape{.multicast}{.dst_fmt.src_fmt} [taddr], s-desc` [PTX ISA
    /// §9.7.16.9.2]: `.64x128b` requires `.warpx2::02_13` or `::01_23`, `.32x128b`
    /// requires `.warpx4`, the others take no multicast; decompression is `.b8x16` from
    /// `.b6x16_p32` or `.b4x16_p64`.
    fn tcgen05_cp(&self, pair: bool) -> Result<Decoded> {
        if !pair && !self.has("cta_group::1") {
            return Err(self.invalid("no .cta_group (.cta_group::1 or ::2)"));
        }
        let warpx = self
            .i
            .mods
            .iter()
            .find(|m| m.starts_with("warpx"))
            .map(|m| m.as_str());
        let rows = self
            .i
            .mods
            .iter()
            .find(|m| m.ends_with('b') && m.contains('x') && m.as_bytes()[0].is_ascii_digit())
            .map(|m| m.as_str());
        let shape = match (rows, warpx) {
            (Some("128x256b"), None) => Tc5CpShape::S128x256b,
            (Some("4x256b"), None) => Tc5CpShape::S4x256b,
            (Some("128x128b"), None) => Tc5CpShape::S128x128b,
            (Some("64x128b"), Some("warpx2::02_13")) => Tc5CpShape::S64x128bWarpx2_02_13,
            (Some("64x128b"), Some("warpx2::01_23")) => Tc5CpShape::S64x128bWarpx2_01_23,
            (Some("32x128b"), Some("warpx4")) => Tc5CpShape::S32x128bWarpx4,
            (Some(r @ ("128x256b" | "4x256b" | "128x128b")), Some(w)) => {
                return Err(self.invalid(&format!(
                    "tcgen05.cp.{r} takes no multicast, .{w} given (.64x128b takes .warpx2::02_13 or ::01_23, .32x128b .warpx4) [PTX ISA §9.7.16.9.2]"
                )))
            }
            (Some(r @ ("64x128b" | "32x128b")), w) => {
                return Err(self.invalid(&format!(
                    "tcgen05.cp.{r} requires {}, {} given [PTX ISA §9.7.16.9.2]",
                    if r == "64x128b" { ".warpx2::02_13 or .warpx2::01_23" } else { ".warpx4" },
                    w.map_or("none".to_string(), |w| format!(".{w}"))
                )))
            }
            (other, _) => {
                return Err(self.invalid(&format!(
                    "tcgen05.cp shape {}: one of .128x256b, .4x256b, .128x128b, .64x128b, .32x128b",
                    other.map_or("missing".to_string(), |o| format!(".{o}"))
                )))
            }
        };
        let decompress = match (
            self.has("b8x16"),
            self.has("b6x16_p32"),
            self.has("b4x16_p64"),
        ) {
            (false, false, false) => None,
            (true, true, false) => Some(Tc5Decompress::B6),
            (true, false, true) => Some(Tc5Decompress::B4),
            _ => {
                return Err(self.invalid(
                    "tcgen05.cp decompression is .b8x16 (destination) with one source format, .b6x16_p32 or .b4x16_p64",
                ))
            }
        };
        let (taddr, desc) = match self.i.operands.as_slice() {
            [t @ Operand::Address { .. }, d @ (Operand::Reg(_) | Operand::Int(_))] => {
                ((self.addr)(t)?, (self.resolve)(d, Some(Ty::U64))?)
            }
            _ => {
                return Err(self.invalid(
                    "tcgen05.cp takes [taddr] (tensor memory) and s-desc (a .b64 shared-memory descriptor)",
                ))
            }
        };
        Ok(Decoded::Memory(
            Instr::Tcgen05(Box::new(Tc5Op::Cp(Tc5Cp {
                shape,
                decompress,
                pair,
                taddr,
                desc,
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

    /// `tcgen05.mma{.ws}.cta_group.kind{.block_scale{.scale_vec::NX|.blockN}}
    /// {.collector::…} [d-tmem], a-desc|[a-tmem], b-desc, idesc, {[scale-A-tmem],
    /// [scale-B-tmem],} enable-input-d` [PTX ISA §9.7.16.10.9].
    fn tcgen05_mma(&self, pair: bool) -> Result<Decoded> {
        if self.has("sp") {
            return Err(self.unsupported("sparse tcgen05.mma.sp is not supported yet"));
        }
        let kind = match self.i.mods.iter().find(|m| m.starts_with("kind::")) {
            Some(k) => match k.as_str() {
                "kind::f16" => Tc5Kind::F16,
                "kind::tf32" => Tc5Kind::Tf32,
                "kind::f8f6f4" => Tc5Kind::F8f6f4,
                "kind::i8" => Tc5Kind::I8,
                "kind::mxf8f6f4" => Tc5Kind::MxF8f6f4,
                "kind::mxf4" => Tc5Kind::MxF4,
                "kind::mxf4nvf4" => Tc5Kind::MxF4Nvf4,
                other => {
                    return Err(self.unsupported(&format!(
                    ".{other} is not a tcgen05.mma kind (.kind::f16, ::tf32, ::f8f6f4, ::i8, ::mxf8f6f4, ::mxf4, ::mxf4nvf4)"
                )))
                }
            },
            None => return Err(self.invalid("no .kind (.kind::f16, ::tf32, ::f8f6f4, ::i8, …)")),
        };
        if !pair && !self.has("cta_group::1") {
            return Err(self.invalid("no .cta_group (.cta_group::1 or ::2)"));
        }
        let ws = self.has("ws");
        let scaled = matches!(kind, Tc5Kind::MxF8f6f4 | Tc5Kind::MxF4 | Tc5Kind::MxF4Nvf4);
        if scaled != self.has("block_scale") {
            return Err(self.invalid(if scaled {
                "the .kind::mxf* kinds are block-scaled: they take .block_scale and the scale factors [scale-A-tmem], [scale-B-tmem] [PTX ISA §9.7.16.10.7]"
            } else {
                ".block_scale takes .kind::mxf8f6f4, ::mxf4 or ::mxf4nvf4"
            }));
        }
        if ws && (pair || scaled) {
            return Err(self.invalid(
                "tcgen05.mma.ws is .cta_group::1 of .kind::f16, ::tf32, ::f8f6f4 or ::i8 only [PTX ISA §9.7.16.2.1, Table 39]",
            ));
        }
        // `.collector::bN::op` (.ws) / `.collector::a::op`: reuse of an operand buffer.
        let collector = self
            .i
            .mods
            .iter()
            .find_map(|m| m.strip_prefix("collector::"));
        let ws = if ws {
            let (buffer, op) = match collector {
                None => (0, "discard"),
                Some(c) => {
                    let (b, op) = c.split_once("::").unwrap_or((c, ""));
                    let buffer = match b {
                        "b0" => 0,
                        "b1" => 1,
                        "b2" => 2,
                        "b3" => 3,
                        _ => return Err(self.invalid(&format!(
                            ".collector::{c}: tcgen05.mma.ws takes .collector::b0 … ::b3 with ::fill, ::use, ::lastuse or ::discard"
                        ))),
                    };
                    (buffer, op)
                }
            };
            let (reuse, keep) = match op {
                "fill" => (false, true),
                "use" => (true, true),
                "lastuse" => (true, false),
                "discard" => (false, false),
                _ => {
                    return Err(self
                        .invalid("the collector usage is ::fill, ::use, ::lastuse or ::discard"))
                }
            };
            Some(Tc5Collector {
                buffer,
                reuse,
                keep,
            })
        } else {
            if let Some(c) = collector {
                if !c.starts_with("a::") {
                    return Err(self.invalid(&format!(
                        ".collector::{c}: tcgen05.mma takes .collector::a::{{fill,use,lastuse,discard}} (the B collectors are .ws's)"
                    )));
                }
            }
            None
        };
        let vec = if scaled {
            let given = self
                .i
                .mods
                .iter()
                .find_map(|m| m.strip_prefix("scale_vec::"))
                .map(|v| v.trim_end_matches('X').parse::<u32>().unwrap_or(0));
            let block = if self.has("block32") {
                Some(32)
            } else if self.has("block16") {
                Some(16)
            } else {
                None
            };
            // .block32 is scale_vec::1X (mxf8f6f4) or 2X (mxf4*), .block16 4X [§9.7.16.10.7.1].
            let vec = match (given, block, kind) {
                (Some(v), None, _) => v,
                (None, Some(32), Tc5Kind::MxF8f6f4) => 1,
                (None, Some(32), _) => 2,
                (None, Some(16), _) => 4,
                (None, None, Tc5Kind::MxF8f6f4) => 1,
                (None, None, _) => 2,
                _ => return Err(self.invalid("give one of .scale_vec::NX and .blockN, not both")),
            };
            let ok = match kind {
                Tc5Kind::MxF8f6f4 => vec == 1,
                Tc5Kind::MxF4 => vec == 2,
                _ => vec == 2 || vec == 4,
            };
            if !ok {
                return Err(self.invalid(&format!(
                    ".scale_vec::{vec}X with .{}: the ISA allows mxf8f6f4 1X (.block32), mxf4 2X (.block32), mxf4nvf4 2X (.block32) or 4X (.block16) [PTX ISA §9.7.16.10.7.1, Table 55]",
                    format!("{kind:?}").to_lowercase().replace("mx", "kind::mx")
                )));
            }
            vec
        } else {
            0
        };
        let want = if scaled { 7 } else { 5 };
        match self.i.operands.len() {
            n if n == want => {}
            6 if ws.is_some() && !scaled => {
                return Err(self.unsupported(
                    "the zero-column mask descriptor of tcgen05.mma.ws is not supported yet",
                ))
            }
            n if n == want + 1 && matches!(self.i.operands[4], Operand::Vector(_)) => {
                return Err(self.unsupported("the disable-output-lane mask is not supported yet"))
            }
            n if n == want + 1 => {
                return Err(self.unsupported("scale-input-d is not supported yet"))
            }
            n => {
                return Err(self.invalid(&format!(
                    "expected {want} operands ([d-tmem], a-desc or [a-tmem], b-desc, idesc, {}enable-input-d), {n} given",
                    if scaled { "[scale-A-tmem], [scale-B-tmem], " } else { "" }
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
        let scale = if scaled {
            let at = |k: usize, which: &str| {
                match self.op(k)? {
                o @ Operand::Address { .. } => (self.addr)(o),
                _ => Err(self.invalid(&format!(
                    "operand {} must be the tensor memory address of {which}'s scale factors [scale-{which}-tmem]",
                    k + 1
                ))),
            }
            };
            Some(Tc5Scale {
                a: at(4, "A")?,
                b: at(5, "B")?,
                vec,
            })
        } else {
            None
        };
        let enable_d = self.s(want - 1, Ty::PRED)?;
        Ok(Decoded::Memory(
            Instr::Tcgen05(Box::new(Tc5Op::Mma(Tc5Mma {
                kind,
                pair,
                ws,
                scale,
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
