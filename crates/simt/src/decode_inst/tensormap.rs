//! Device-side tensor maps: `tensormap.replace` [PTX ISA, "Data Movement and Conversion
//! Instructions: tensormap.replace"] and `tensormap.cp_fenceproxy` [PTX ISA, "Parallel
//! Synchronization and Communication Instructions: tensormap.cp_fenceproxy"], as Triton's
//! `tl.make_tensor_descriptor` emits them: a zeroed 128-byte object in shared memory, its
//! fields replaced one by one, copied to a global scratch buffer, then used by
//! `cp.async.bulk.tensor` through its generic address. The executor runs them in
//! `exec/tensormap.rs`.

use super::*;

impl<'a> InstDecoder<'a> {
    /// `tensormap.replace.*` and `tensormap.cp_fenceproxy.*`.
    pub(super) fn tensormap(&self) -> Result<Decoded> {
        if self.has("cp_fenceproxy") {
            return self.tensormap_copy();
        }
        if !self.has("replace") {
            return Err(self.invalid("expected tensormap.replace or tensormap.cp_fenceproxy"));
        }
        if !self.has("tile") {
            return Err(self.invalid(
                "tensormap.replace has one mode, .tile (tensormap.replace.tile.FIELD...)",
            ));
        }
        if !self.has("b1024") {
            return Err(self.invalid("a tensor-map object is .b1024 (128 bytes)"));
        }
        let field = self.pick(&TensormapField::ALL).ok_or_else(|| {
            self.invalid(
                "expected a field: .global_address, .rank, .box_dim, .global_dim, .global_stride, .element_stride, .elemtype, .interleave_layout, .swizzle_mode, .swizzle_atomicity or .fill_mode",
            )
        })?;
        let space = match self.space() {
            None => MemSpace::Generic,
            Some(s @ (MemSpace::Global | MemSpace::Shared)) => s,
            Some(_) => {
                return Err(self
                    .invalid("a tensor-map object to modify is in .global or .shared::cta memory"))
            }
        };
        if self.has("shared::cluster") {
            return Err(self.invalid(
                "a tensor-map object to modify is in .global or .shared::cta memory (not .shared::cluster)",
            ));
        }
        let (want, ty) = if field.wide() {
            ("b64", Ty::U64)
        } else {
            ("b32", Ty::U32)
        };
        if !self.has(want) {
            return Err(self.invalid(&format!(
                "the .{} field takes a .{want} value",
                field.name()
            )));
        }
        let addr = match self.op(0)? {
            o @ Operand::Address { .. } => (self.addr)(o)?,
            _ => return Err(self.invalid("expected [addr] first")),
        };
        let (ord, k) = if field.has_ord() {
            let ord = match self.op(1)? {
                Operand::Int(x) => *x,
                o => {
                    return Err(self.invalid(&format!(
                        "the dimension (ord) of .{} is an integer constant, not {o:?}",
                        field.name()
                    )))
                }
            };
            let max = if field == TensormapField::GlobalStride {
                3
            } else {
                4
            };
            if !(0..=max).contains(&ord) {
                return Err(self.invalid(&format!(
                    "ord {ord}: the .{} of dimension 0 to {max}",
                    field.name()
                )));
            }
            (ord as u8, 2)
        } else {
            (0, 1)
        };
        if self.i.operands.len() != k + 1 {
            return Err(self.invalid(&format!(
                "expected {}",
                if field.has_ord() {
                    "[addr], ord, new_val"
                } else {
                    "[addr], new_val"
                }
            )));
        }
        let val = self.s(k, ty)?;
        // An enumeration's value given as a constant is checked here; a register's when it
        // runs.
        if let (Some(max), Src::Imm(v)) = (field.max_value(), val) {
            if v > max {
                return Err(
                    self.invalid(&format!("{v} is no .{} value (0 to {max})", field.name()))
                );
            }
        }
        if field == TensormapField::Rank {
            if let Src::Imm(v) = val {
                if v > 4 {
                    return Err(self.invalid(&format!(
                        ".rank {v}: the value is the rank minus one, 0 to 4 (1 to 5 dimensions)"
                    )));
                }
            }
        }
        let site = |op| SiteKind {
            op,
            space: Self::model_space(space),
            read_only: false,
            atomic: false,
        };
        let mut sites = Vec::new();
        if field.accesses().iter().any(|a| !a.0) {
            sites.push(site(Op::Load));
        }
        sites.push(site(Op::Store));
        Ok(Decoded::Memory(
            Instr::TensormapReplace(Box::new(TensormapReplace {
                space,
                addr,
                field,
                ord,
                val,
                load_site: 0,
                store_site: 0,
            })),
            sites,
        ))
    }

    /// `tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.scope.sync
    /// .aligned [dst], [src], 128`.
    fn tensormap_copy(&self) -> Result<Decoded> {
        let spaces: Vec<MemSpace> = self.spaces().collect();
        if spaces != [MemSpace::Global, MemSpace::Shared] || self.has("shared::cluster") {
            return Err(self.invalid(
                "tensormap.cp_fenceproxy copies a tensor-map object from .shared::cta to .global memory (.global.shared::cta)",
            ));
        }
        let (dst, src) = match (self.op(0)?, self.op(1)?) {
            (d @ Operand::Address { .. }, s @ Operand::Address { .. }) => {
                ((self.addr)(d)?, (self.addr)(s)?)
            }
            _ => return Err(self.invalid("expected [dst], [src], 128")),
        };
        match self.op(2)? {
            Operand::Int(128) => {}
            o => {
                return Err(self.invalid(&format!(
                    "the size of a tensor-map object is 128 bytes, not {o:?}"
                )))
            }
        }
        let kind = |op, space| SiteKind {
            op,
            space: Some(space),
            read_only: false,
            atomic: op == Op::Atomic,
        };
        Ok(Decoded::Memory(
            Instr::TensormapCopy {
                dst,
                src,
                load_site: 0,
                store_site: 0,
            },
            vec![
                kind(Op::Load, Space::Shared),
                kind(Op::Atomic, Space::Global),
            ],
        ))
    }
}
