//! Hopper's bulk and asynchronous memory paths [PTX ISA §9.7.9.25.4–5, §9.7.9.12,
//! §9.7.13.6]: `cp.async.bulk` (with `.multicast::cluster`), `cp.reduce.async.bulk`,
//! `cp.async.bulk.tensor` / `cp.reduce.async.bulk.tensor` (tile mode), their prefetch and
//! group forms, and `st.async` / `red.async` into a block's shared memory of the cluster.
//! The executor runs them in `exec/bulk.rs` and `exec/tma.rs`.

use super::*;

/// Whether the PTX ISA allows reduction `op` on type word `ty` (`u32`, `b64`, `f16`, …) for
/// `cp.reduce.async.bulk` into global memory (`global`) or into shared::cluster memory, and
/// for `red.async` (the shared::cluster table) [PTX ISA §9.7.9.25.4.2, §9.7.13.6; CCCL's
/// `cuda::ptx::cp_reduce_async_bulk` and `red_async` overloads list the same pairs]:
///
/// | type        | shared::cluster            | global                      |
/// |-------------|----------------------------|-----------------------------|
/// | b32         | and or xor                 | and or xor                  |
/// | b64         | –                          | and or xor                  |
/// | u32         | add inc dec min max        | add inc dec min max         |
/// | s32         | add min max                | add min max                 |
/// | u64         | add                        | add min max                 |
/// | s64         | –                          | min max                     |
/// | f32, f64    | –                          | add                         |
/// | f16, bf16   | –                          | add(.noftz) min max         |
pub(crate) fn reduction_allowed(op: AtomOp, ty: &str, global: bool) -> bool {
    use AtomOp::*;
    match (op, ty) {
        (And | Or | Xor, "b32") => true,
        (And | Or | Xor, "b64") => global,
        (Add | Inc | Dec | Min | Max, "u32") => true,
        (Add | Min | Max, "s32") => true,
        (Add, "u64") => true,
        (Min | Max, "u64" | "s64") => global,
        (Add, "f32" | "f64") => global,
        (Add | Min | Max, "f16" | "bf16") => global,
        _ => false,
    }
}

/// Whether `cp.reduce.async.bulk.tensor` allows `op` on a tensor map of element type `ty`
/// (the map's `DTYPE`, which has no `b` types: the bitwise operations take the integer
/// types) [PTX ISA §9.7.9.25.5.2].
pub(crate) fn tensor_reduction_allowed(op: AtomOp, ty: &str) -> bool {
    use AtomOp::*;
    matches!(
        (op, ty),
        (Add, "u32" | "s32" | "u64" | "f32" | "f16" | "bf16")
            | (Min | Max, "u32" | "s32" | "s64" | "f16" | "bf16")
            | (Inc | Dec, "u32")
            | (And | Or | Xor, "u32" | "s32" | "u64" | "s64")
    )
}

/// The reduction operations' modifiers.
const RED_OPS: [(&str, AtomOp); 8] = [
    ("add", AtomOp::Add),
    ("min", AtomOp::Min),
    ("max", AtomOp::Max),
    ("inc", AtomOp::Inc),
    ("dec", AtomOp::Dec),
    ("and", AtomOp::And),
    ("or", AtomOp::Or),
    ("xor", AtomOp::Xor),
];

fn op_name(op: AtomOp) -> &'static str {
    RED_OPS
        .iter()
        .find(|(_, o)| *o == op)
        .map_or("?", |(n, _)| n)
}

impl<'a> InstDecoder<'a> {
    /// The last modifier that is a scalar type, as written (`b32` stays `b32`).
    fn type_word(&self) -> Option<&'a str> {
        self.i
            .mods
            .iter()
            .rev()
            .find(|m| Ty::parse(m).is_some())
            .map(|m| m.as_str())
    }

    /// The reduction operation and checked type of `cp.reduce.async.bulk` / `red.async`.
    fn reduction(&self, global: bool, what: &str) -> Result<(AtomOp, Ty)> {
        let op = self.pick(&RED_OPS).ok_or_else(|| {
            self.invalid(
                "expected a reduction operation (.add, .min, .max, .inc, .dec, .and, .or, .xor)",
            )
        })?;
        let word = self
            .type_word()
            .ok_or_else(|| self.invalid("the reduction has no type"))?;
        if !reduction_allowed(op, word, global) {
            return Err(self.invalid(&format!(
                ".{}.{word} is not a reduction the PTX ISA defines for {what} (into {}): see its table of operations and types (e.g. .add.u32, .min.s32, .and.b32{})",
                op_name(op),
                if global { "global memory" } else { "shared::cluster memory" },
                if global { ", .add.f32" } else { "" }
            )));
        }
        Ok((op, self.ty()?))
    }

    /// `cp.async.bulk.*`, `cp.reduce.async.bulk.*` and the group instructions [PTX ISA
    /// §9.7.9.25.4].
    pub(super) fn cp_bulk(&self) -> Result<Decoded> {
        if self.has("commit_group") || self.has("wait_group") {
            // Completion is immediate here.
            return Ok(Decoded::Plain(Instr::Nop));
        }
        if self.has("prefetch") && !self.has("tensor") {
            return self.bulk_prefetch();
        }
        if self.has("tensor") {
            return self.tensor_copy();
        }
        let spaces: Vec<MemSpace> = self.spaces().collect();
        let [dst_space @ (MemSpace::Global | MemSpace::Shared), src_space @ (MemSpace::Global | MemSpace::Shared)] =
            spaces[..]
        else {
            return Err(self.invalid("expected a destination and a source state space"));
        };
        let multicast = self.has("multicast::cluster");
        let reduce = if self.has("reduce") {
            if src_space != MemSpace::Shared {
                return Err(self.invalid(
                    "a bulk reduction reads shared::cta memory (.global.shared::cta or .shared::cluster.shared::cta)",
                ));
            }
            Some(self.reduction(dst_space == MemSpace::Global, "cp.reduce.async.bulk")?)
        } else {
            None
        };
        if multicast && (dst_space, src_space) != (MemSpace::Shared, MemSpace::Global) {
            return Err(self.invalid(
                ".multicast::cluster copies global memory into shared::cluster memory (.shared::cluster.global)",
            ));
        }
        if self.has("multicast::cluster::32b") || self.has("cp_mask") || self.has("ignore_oob") {
            return Err(self.unsupported(
                "sm_100's .multicast::cluster::32b, .cp_mask and .ignore_oob bulk copies are not supported (sm_90's forms are)",
            ));
        }
        let complete_tx = self.has("mbarrier::complete_tx::bytes");
        let mbar = match self.i.operands.get(3) {
            Some(o @ Operand::Address { .. }) if complete_tx => Some((self.addr)(o)?),
            _ => None,
        };
        let cta_mask = if multicast {
            if mbar.is_none() {
                return Err(self.invalid("expected [dst], [src], size, [mbar], ctaMask"));
            }
            Some(self.s(
                4,
                Ty {
                    kind: Kind::Unsigned,
                    bytes: 2,
                },
            )?)
        } else {
            None
        };
        let kind = |op, space| SiteKind {
            op,
            space: Some(match space {
                MemSpace::Global => Space::Global,
                _ => Space::Shared,
            }),
            read_only: false,
            atomic: op == Op::Atomic,
        };
        let dst_op = if reduce.is_some() {
            Op::Atomic
        } else {
            Op::Store
        };
        Ok(Decoded::Memory(
            Instr::CpBulk {
                dst: (self.addr)(self.op(0)?)?,
                src: (self.addr)(self.op(1)?)?,
                dst_space,
                src_space,
                size: self.s(2, Ty::U32)?,
                mbar,
                multicast: cta_mask,
                reduce,
                load_site: 0,
                store_site: 0,
            },
            vec![kind(Op::Load, src_space), kind(dst_op, dst_space)],
        ))
    }

    /// `cp.async.bulk.tensor` and `cp.reduce.async.bulk.tensor` (tile mode, and the im2col
    /// mode of a load: `[smem], [map, {coords}, {im2colOffsets}], [mbar]`) [PTX ISA
    /// §9.7.9.25.5.1–2].
    fn tensor_copy(&self) -> Result<Decoded> {
        if self.has("im2col_no_offs")
            || self.has("im2col::w")
            || self.has("im2col::w::128")
            || self.has("tile::gather4")
            || self.has("tile::scatter4")
        {
            return Err(self.unsupported("only the tile and im2col modes of cp.async.bulk.tensor are supported (not im2col_no_offs, im2col::w or gather4/scatter4)"));
        }
        let im2col = self.has("im2col");
        let prefetch = self.has("prefetch");
        if prefetch && !(self.has("L2") && self.has("global")) {
            return Err(self.invalid("a tensor prefetch reads global memory into L2 (.L2.global)"));
        }
        if self
            .i
            .mods
            .iter()
            .any(|m| m.starts_with("cta_group") || m.starts_with("override::"))
        {
            return Err(self.unsupported(
                "sm_100's .cta_group and .override:: tensor copies are not supported (sm_90's forms are)",
            ));
        }
        // The load names shared memory first: `.shared::cluster.global`.
        let load = match self.space() {
            _ if prefetch => true,
            Some(MemSpace::Shared) => true,
            Some(MemSpace::Global) => false,
            _ => {
                return Err(self.invalid("expected .shared::cluster.global or .global.shared::cta"))
            }
        };
        let reduce = if self.has("reduce") {
            if load {
                return Err(
                    self.invalid("a tensor reduction writes global memory (.global.shared::cta)")
                );
            }
            Some(self.pick(&RED_OPS).ok_or_else(|| {
                self.invalid("expected a reduction operation (.add, .min, .max, .inc, .dec, .and, .or, .xor)")
            })?)
        } else {
            None
        };
        let (map_op, smem_op) = match (prefetch, load) {
            (true, _) => (0, usize::MAX),
            (false, true) => (1, 0),
            (false, false) => (0, 1),
        };
        // [map, {c0, c1, …}]: the parser gives the tensor operand as a list or a vector.
        let tensor = match self.op(map_op)? {
            Operand::Address { base: Some(b), .. } => b.as_ref(),
            o => o,
        };
        let (map, coords, offsets) = match tensor {
            Operand::List(v) | Operand::Vector(v)
                if v.len() == 2 + im2col as usize || (prefetch && v.len() == 2) =>
            {
                let map = match &v[0] {
                    Operand::Address { base: Some(b), .. } => (self.resolve)(b, Some(Ty::U64))?,
                    o => (self.resolve)(o, Some(Ty::U64))?,
                };
                let coords = match &v[1] {
                    Operand::Vector(c) => c
                        .iter()
                        .map(|o| (self.resolve)(o, Some(Ty::U32)))
                        .collect::<Result<Vec<_>>>()?,
                    o => vec![(self.resolve)(o, Some(Ty::U32))?],
                };
                let u16 = Ty {
                    kind: Kind::Unsigned,
                    bytes: 2,
                };
                // A prefetch's im2colOffsets follow the brackets: `[map, {coords}], {offs}`.
                let outside = match self.i.operands.get(1) {
                    Some(o @ Operand::Vector(_)) if prefetch && im2col => Some(o),
                    _ => None,
                };
                let offsets = match v.get(2).or(outside) {
                    None if im2col => {
                        return Err(self.invalid("an im2col copy gives {im2colOffsets}"))
                    }
                    None => None,
                    Some(Operand::Vector(c)) => Some(
                        c.iter()
                            .map(|o| (self.resolve)(o, Some(u16)))
                            .collect::<Result<Vec<_>>>()?,
                    ),
                    Some(o) => Some(vec![(self.resolve)(o, Some(u16))?]),
                };
                (map, coords, offsets)
            }
            o => {
                return Err(self.invalid(&format!(
                    "expected [tensorMap, {{coordinates}}{}], found {o:?}",
                    if im2col { ", {im2colOffsets}" } else { "" }
                )))
            }
        };
        if !(1..=5).contains(&coords.len()) {
            return Err(self.invalid("a tensor copy has 1 to 5 coordinates"));
        }
        if let Some(o) = &offsets {
            if !load {
                return Err(self.unsupported(
                    "a tensor store in im2col mode (.im2col_no_offs) is not supported",
                ));
            }
            if coords.len() < 3 || o.len() != coords.len() - 2 {
                return Err(self.invalid(&format!(
                    "an im2col copy is 3-d to 5-d with one offset per spatial dimension ({} coordinates, {} offsets)",
                    coords.len(),
                    o.len()
                )));
            }
        }
        let mbar = match (load, self.i.operands.get(2)) {
            (true, Some(o @ Operand::Address { .. })) => Some((self.addr)(o)?),
            _ => None,
        };
        let multicast = if self.has("multicast::cluster") {
            if !load || mbar.is_none() {
                return Err(self.invalid(
                    ".multicast::cluster is a load: [dstMem], [tensorMap, coords], [mbar], ctaMask",
                ));
            }
            Some(self.s(
                3,
                Ty {
                    kind: Kind::Unsigned,
                    bytes: 2,
                },
            )?)
        } else {
            None
        };
        let kind = |op, space| SiteKind {
            op,
            space: Some(space),
            read_only: false,
            atomic: op == Op::Atomic,
        };
        let (g, s) = match (load, reduce) {
            _ if prefetch => (Op::Prefetch, Op::Store),
            (true, _) => (Op::Load, Op::Store),
            (false, None) => (Op::Store, Op::Load),
            (false, Some(_)) => (Op::Atomic, Op::Load),
        };
        let mut sites = vec![kind(g, Space::Global), kind(s, Space::Shared)];
        if prefetch {
            // No shared side: one site.
            sites.pop();
        }
        Ok(Decoded::Memory(
            Instr::TensorCopy(Box::new(TensorCopy {
                load,
                prefetch,
                smem: if prefetch {
                    Addr {
                        base: None,
                        offset: 0,
                    }
                } else {
                    (self.addr)(self.op(smem_op)?)?
                },
                map,
                coords,
                mbar,
                multicast,
                reduce,
                im2col: offsets,
                global_site: 0,
                shared_site: 0,
            })),
            sites,
        ))
    }

    /// `cp.async.bulk.prefetch.L2.global{.L2::cache_hint} [src], size{, policy}` [PTX ISA
    /// §9.7.9.25.4.3].
    fn bulk_prefetch(&self) -> Result<Decoded> {
        if !(self.has("L2") && self.has("global")) {
            return Err(self.invalid("a bulk prefetch reads global memory into L2 (.L2.global)"));
        }
        let addr = match self.op(0)? {
            o @ Operand::Address { .. } => (self.addr)(o)?,
            _ => return Err(self.invalid("expected [srcMem], size")),
        };
        Ok(Decoded::Memory(
            Instr::BulkPrefetch {
                addr,
                size: self.s(1, Ty::U32)?,
                site: 0,
            },
            vec![SiteKind {
                op: Op::Prefetch,
                space: Some(Space::Global),
                read_only: false,
                atomic: false,
            }],
        ))
    }

    /// `st.async` and `red.async` [PTX ISA §9.7.9.12, §9.7.13.6]: `[a], b, [mbar]`.
    pub(super) fn async_store(&self) -> Result<Decoded> {
        if !self.has("shared::cluster") && self.space().is_some() {
            return Err(self.invalid("st.async / red.async write shared::cluster memory"));
        }
        if !self.has("mbarrier::complete_tx::bytes") {
            return Err(self.unsupported(
                "st.async / red.async without .mbarrier::complete_tx::bytes (sm_100's forms) are not supported",
            ));
        }
        let red = self.i.opcode == "red";
        let (op, ty) = if red {
            if self.vec_len() > 1 {
                return Err(self.invalid("red.async takes one value"));
            }
            let (op, ty) = self.reduction(false, "red.async")?;
            (Some(op), ty)
        } else {
            (None, self.ty()?)
        };
        let srcs: Vec<Src> = match self.op(1)? {
            Operand::Vector(v) => v
                .iter()
                .map(|o| (self.resolve)(o, Some(ty)))
                .collect::<Result<_>>()?,
            o => vec![(self.resolve)(o, Some(ty))?],
        };
        if srcs.len() * ty.bytes as usize > 16 {
            return Err(
                self.invalid("st.async stores at most 16 bytes a thread (.v4.b32, .v2.b64)")
            );
        }
        let mbar = match self.op(2)? {
            o @ Operand::Address { .. } => (self.addr)(o)?,
            _ => return Err(self.invalid("expected [addr], value, [remote_bar]")),
        };
        Ok(Decoded::Memory(
            Instr::AsyncStore(Box::new(AsyncStore {
                ty,
                srcs,
                red: op,
                addr: (self.addr)(self.op(0)?)?,
                mbar,
                site: 0,
            })),
            vec![SiteKind {
                op: if red { Op::Atomic } else { Op::Store },
                space: Some(Space::Shared),
                read_only: false,
                atomic: red,
            }],
        ))
    }
}
