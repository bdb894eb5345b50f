//! Texture fetches and surface accesses as nvcc emits them [PTX ISA §9.7.10, §9.7.11]:
//! `tex.GEOM.v4.DTYPE.CTYPE {d0, d1, d2, d3}, [tex, {coords}]`, `tld4.COMP.2d.v4…`,
//! `suld.b.GEOM.WIDTH.MODE {data}, [surf, {coords}]` and `sust.b…`, the texture a register
//! holding an object's handle or a reference's name (`.global .texref NAME;`). 3-D and 2-D
//! layered coordinates are four-vectors (the last repeated, as nvcc writes them); a layered
//! fetch's layer comes first.

use super::{scalar, Class, Gen, Val};
use crate::error::Result;
use crate::ir::{Loc, SurfBoundary, TexAccess, TexGeom, TexOp, TexSource};
use crate::types::{Ty, FLOAT, INT, UINT};

impl Gen<'_> {
    /// Emits `t` (the call at `loc`); its value (of type `t.texel`) for a fetch or surface
    /// read, `None` for a surface write.
    pub fn texture(&mut self, t: &TexAccess, loc: Loc) -> Result<Option<Val>> {
        let handle = match &t.source {
            TexSource::Object(x) => {
                let v = self.val(x)?;
                self.in_reg(v)?.text
            }
            TexSource::Ref(name) => name.clone(),
        };
        let mut coords = Vec::new();
        for c in &t.coords {
            let v = self.val(c)?;
            coords.push(self.in_reg(v)?.text);
        }
        let mut list = Vec::new();
        if let Some(l) = &t.layer {
            let v = self.val(l)?;
            list.push(self.in_reg(v)?.text);
        }
        list.extend(coords.iter().cloned());
        if matches!(t.geom, TexGeom::D3 | TexGeom::A2) {
            if let Some(last) = list.last().cloned() {
                list.push(last);
            }
        }
        let at = format!("[{handle}, {{{}}}]", list.join(", "));
        if t.op == TexOp::SurfWrite {
            // The value's code comes first; the instruction is the call's.
            return self.surface_write(t, &at, loc).map(|()| None);
        }
        self.at(loc);
        match t.op {
            TexOp::Fetch | TexOp::Gather(_) => self.fetch(t, &at).map(Some),
            TexOp::SurfRead => self.surface_read(t, &at).map(Some),
            TexOp::SurfWrite => Ok(None),
        }
    }

    /// `tex`/`tld4` into four registers of the texel's kind, then the value.
    fn fetch(&mut self, t: &TexAccess, at: &str) -> Result<Val> {
        let (fields, scalar_ty) = self.components(&t.texel);
        let base = fields.first().map(|f| f.1.clone()).unwrap_or(FLOAT);
        let (dt, dty, class) = match scalar(&base) {
            Some(s) if s.float => ("f32", FLOAT, Class::F32),
            Some(s) if s.signed => ("s32", INT, Class::B32),
            _ => ("u32", UINT, Class::B32),
        };
        let d: Vec<Val> = (0..4).map(|_| self.reg(class)).collect();
        let names = d.iter().map(|v| v.text.clone()).collect::<Vec<_>>();
        let ct = if t.coords.first().is_some_and(|c| c.ty.is_float()) {
            "f32"
        } else {
            "s32"
        };
        let ins = match t.op {
            TexOp::Gather(c) => format!(
                "tld4.{}.2d.v4.{dt}.f32 {{{}}}, {at}",
                ["r", "g", "b", "a"][c.min(3) as usize],
                names.join(", ")
            ),
            _ => format!(
                "tex.{}.v4.{dt}.{ct} {{{}}}, {at}",
                t.geom.ptx(),
                names.join(", ")
            ),
        };
        self.mem(ins, Some(t.site))?;
        if scalar_ty {
            return self.convert(d[0].clone(), &dty, &t.texel);
        }
        let s = self.scratch(self.prog.structs.size(&t.texel))?;
        for (k, (off, fty)) in fields.iter().enumerate().take(4) {
            let v = self.convert(d[k].clone(), &dty, fty)?;
            self.store_scalar(&s, *off, fty, &v, None)?;
        }
        Ok(s)
    }

    /// The (offset, type) of each component of `t`, and whether `t` is a scalar.
    fn components(&self, t: &Ty) -> (Vec<(u64, Ty)>, bool) {
        match t {
            Ty::Struct(i) => (
                self.prog.structs.defs[*i]
                    .fields
                    .iter()
                    .map(|f| (f.offset, f.ty.clone()))
                    .collect(),
                false,
            ),
            other => (vec![(0, other.clone())], true),
        }
    }

    /// The data operand of a surface access of `t`'s bytes: (PTX width, registers' class,
    /// how many, bytes of each).
    fn surface_width(&self, t: &TexAccess) -> Result<(&'static str, Class, usize, u64)> {
        let bytes = self.prog.structs.size(&t.texel);
        Ok(match (bytes, matches!(t.texel, Ty::Struct(_))) {
            (1, _) => ("b8", Class::B32, 1, 1),
            (2, _) => ("b16", Class::B32, 1, 2),
            (4, _) => ("b32", Class::B32, 1, 4),
            (8, false) => ("b64", Class::B64, 1, 8),
            (8, true) => ("v2.b32", Class::B32, 2, 4),
            (16, _) => ("v4.b32", Class::B32, 4, 4),
            _ => {
                return Err(self.unsupported(
                    self.prog.sites[t.site].loc,
                    format!(
                    "a surface element of {bytes} bytes ({}): surfaces move 1, 2, 4, 8 or 16 bytes",
                    self.prog.structs.name(&t.texel)
                ),
                ))
            }
        })
    }

    fn boundary(t: &TexAccess) -> &'static str {
        match t.boundary {
            SurfBoundary::Trap => "trap",
            SurfBoundary::Clamp => "clamp",
            SurfBoundary::Zero => "zero",
        }
    }

    /// `suld.b` into raw registers, their bytes put in scratch and read back as the texel.
    fn surface_read(&mut self, t: &TexAccess, at: &str) -> Result<Val> {
        let (w, class, count, each) = self.surface_width(t)?;
        let d: Vec<Val> = (0..count).map(|_| self.reg(class)).collect();
        let names = d.iter().map(|v| v.text.clone()).collect::<Vec<_>>();
        self.mem(
            format!(
                "suld.b.{}.{w}.{} {{{}}}, {at}",
                t.geom.ptx(),
                Self::boundary(t),
                names.join(", ")
            ),
            Some(t.site),
        )?;
        let s = self.scratch(self.prog.structs.size(&t.texel))?;
        for (k, r) in d.iter().enumerate() {
            self.ins(format!(
                "st.u{} [{}+{}], {}",
                each * 8,
                s.text,
                k as u64 * each,
                r.text
            ))?;
        }
        if scalar(&t.texel).is_some() {
            return self.load_scalar(&s, 0, &t.texel, None);
        }
        Ok(s)
    }

    /// The value's bytes put in scratch and read as raw registers, then `sust.b`.
    fn surface_write(&mut self, t: &TexAccess, at: &str, loc: Loc) -> Result<()> {
        let (w, class, count, each) = self.surface_width(t)?;
        let Some(value) = &t.value else {
            return Err(self.unsupported(
                self.prog.sites[t.site].loc,
                "a surface write without a value",
            ));
        };
        let v = self.val(value)?;
        let s = self.scratch(self.prog.structs.size(&t.texel))?;
        if scalar(&t.texel).is_some() {
            self.store_scalar(&s, 0, &t.texel, &v, None)?;
        } else {
            self.copy(&s, &v, &t.texel)?;
        }
        let d: Vec<Val> = (0..count).map(|_| self.reg(class)).collect();
        for (k, r) in d.iter().enumerate() {
            self.ins(format!(
                "ld.u{} {}, [{}+{}]",
                each * 8,
                r.text,
                s.text,
                k as u64 * each
            ))?;
        }
        let names = d.iter().map(|v| v.text.clone()).collect::<Vec<_>>();
        self.at(loc);
        self.mem(
            format!(
                "sust.b.{}.{w}.{} {at}, {{{}}}",
                t.geom.ptx(),
                Self::boundary(t),
                names.join(", ")
            ),
            Some(t.site),
        )
    }
}
