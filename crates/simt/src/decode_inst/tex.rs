//! Texture and surface instructions [PTX ISA §9.7.10]: `tex`, `tld4`, `suld.b`, `sust.b`/`.p`
//! on texture/surface objects (unified mode: `[handle, {coordinates}]`; independent mode's
//! sampler operand is skipped).

use super::*;

impl<'a> InstDecoder<'a> {
    pub(super) fn texture(&self) -> Result<Decoded> {
        let op =
            match self.i.opcode.as_str() {
                "tex" => TexOp::Fetch,
                "tld4" => TexOp::Gather,
                "suld" => TexOp::SurfLoad,
                "sust" => TexOp::SurfStore,
                _ => return Err(self.unsupported(
                    "txq, suq, sured and istypep are not supported (tex, tld4, suld and sust are)",
                )),
            };
        if self.has("level") || self.has("grad") {
            return Err(self.unsupported(
                "mipmapped fetches (tex.level, tex.grad) are not supported: warpscope models level 0",
            ));
        }
        let (axes, layered) = match ["1d", "2d", "3d", "a1d", "a2d"]
            .iter()
            .find(|g| self.has(g))
        {
            Some(&"1d") => (1, false),
            Some(&"2d") => (2, false),
            Some(&"3d") => (3, false),
            Some(&"a1d") => (1, true),
            Some(&"a2d") => (2, true),
            _ => {
                return Err(self.unsupported(
                    "texture geometries other than 1d, 2d, 3d, a1d and a2d (cube maps, multisample) are not supported",
                ))
            }
        };
        let store = op == TexOp::SurfStore;
        let addr = self.op(if store { 0 } else { 1 })?;
        let items = match addr {
            Operand::Address {
                base: Some(b),
                offset: 0,
            } => match b.as_ref() {
                Operand::List(items) if items.len() >= 2 => items,
                _ => return Err(self.invalid("expected [object, {coordinates}]")),
            },
            _ => return Err(self.invalid("expected [object, {coordinates}]")),
        };
        let handle = (self.resolve)(&items[0], Some(Ty::U64))?;
        let coord_ops: Vec<&Operand> = match items.last() {
            Some(Operand::Vector(v)) => v.iter().collect(),
            Some(o) => vec![o],
            None => Vec::new(),
        };
        let types = self.types();
        // tex/tld4: .dtype.ctype (the last type is the coordinates'); surfaces: .s32 x (bytes).
        let float_coords = matches!(op, TexOp::Fetch | TexOp::Gather)
            && types.last().is_some_and(|t| t.kind == Kind::Float);
        let cty = if float_coords {
            Ty {
                kind: Kind::Float,
                bytes: 4,
            }
        } else {
            Ty {
                kind: Kind::Signed,
                bytes: 4,
            }
        };
        let s32 = Ty {
            kind: Kind::Signed,
            bytes: 4,
        };
        let skip = usize::from(layered);
        if coord_ops.len() < skip + axes {
            return Err(self.invalid(&format!(
                "expected {} coordinate(s){}",
                axes,
                if layered { " after the layer" } else { "" }
            )));
        }
        let layer = if layered {
            Some((self.resolve)(coord_ops[0], Some(s32))?)
        } else {
            None
        };
        let coords = coord_ops[skip..skip + axes]
            .iter()
            .map(|o| (self.resolve)(o, Some(cty)))
            .collect::<Result<Vec<_>>>()?;
        let regs = |o: &Operand| -> Result<Vec<Option<Reg>>> {
            match o {
                Operand::Vector(v) => v.iter().map(|o| (self.dest)(o)).collect(),
                o => Ok(vec![(self.dest)(o)?]),
            }
        };
        let (ds, srcs) = if store {
            let ty = types.first().copied().unwrap_or(Ty::U32);
            let srcs = match self.op(1)? {
                Operand::Vector(v) => v
                    .iter()
                    .map(|o| match o {
                        Operand::Sink => Ok(Src::Imm(0)),
                        o => (self.resolve)(o, Some(ty)),
                    })
                    .collect::<Result<Vec<_>>>()?,
                o => vec![(self.resolve)(o, Some(ty))?],
            };
            (Vec::new(), srcs)
        } else {
            (regs(self.op(0)?)?, Vec::new())
        };
        let boundary = if self.has("clamp") {
            Boundary::Clamp
        } else if self.has("zero") {
            Boundary::Zero
        } else {
            Boundary::Trap
        };
        let surface = matches!(op, TexOp::SurfLoad | TexOp::SurfStore);
        Ok(Decoded::Memory(
            Instr::Texture(Box::new(TexInstr {
                op,
                handle,
                coords,
                layer,
                float_coords,
                ds,
                srcs,
                boundary,
                site: 0,
            })),
            vec![SiteKind {
                op: if store { Op::Store } else { Op::Load },
                space: Some(if surface {
                    Space::Surface
                } else {
                    Space::Texture
                }),
                read_only: false,
                atomic: false,
            }],
        ))
    }
}
