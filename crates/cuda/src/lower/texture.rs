//! Texture and surface functions [CUDA C++ Programming Guide, "Texture Functions", "Surface
//! Functions"] on texture and surface objects (`tex2D<float>(obj, x, y)`,
//! `surf2Dread(&v, surf, x, y)`) and on texture and surface references (`texture<T, dim,
//! mode> NAME;` and `surface<void, dim> NAME;` globals, which CUDA 12 removed), lowered to
//! [`ExprKind::Texture`]: the PTX `tex`, `tld4`, `suld` and `sust` nvcc emits for them.

use super::*;
use crate::ir::{SurfBoundary, TexAccess, TexGeom, TexOp, TexSource};

/// A texture or surface reference: a file-scope `texture<T, dim, mode> NAME;` or
/// `surface<void, dim> NAME;` [CUDA 11 Programming Guide, "Texture Reference API", "Surface
/// Reference API"]. The kernel's PTX declares it `.global .texref NAME;` (`.surfref`), and
/// the launch binds it by name (`--texture NAME=…`).
#[derive(Clone, Debug)]
pub struct TextureRefDecl {
    pub name: String,
    pub surface: bool,
    /// The texel type `T` (`void` for a surface).
    pub elem: Ty,
    pub geom: TexGeom,
    /// `cudaReadModeNormalizedFloat`: integer texels read as floats in [0, 1] ([-1, 1]).
    pub normalized_float: bool,
    /// Where it is declared (the user's file once [`crate::Source::kernel`] has placed it).
    pub loc: Loc,
    /// The declaration as written (`texture<float, 2> img`), for messages.
    pub decl: String,
}

/// A texture or surface function's name: what it does and the geometry it names.
fn function(name: &str) -> Option<(TexOp, TexGeom)> {
    use TexGeom::*;
    Some(match name {
        "tex1Dfetch" | "tex1D" => (TexOp::Fetch, D1),
        "tex2D" => (TexOp::Fetch, D2),
        "tex3D" => (TexOp::Fetch, D3),
        "tex1DLayered" => (TexOp::Fetch, A1),
        "tex2DLayered" => (TexOp::Fetch, A2),
        "tex2Dgather" => (TexOp::Gather(0), D2),
        _ => {
            let (op, rest) = if let Some(r) = name.strip_suffix("read") {
                (TexOp::SurfRead, r)
            } else {
                (TexOp::SurfWrite, name.strip_suffix("write")?)
            };
            let geom = match rest {
                "surf1D" => D1,
                "surf2D" => D2,
                "surf3D" => D3,
                "surf1DLayered" => A1,
                "surf2DLayered" => A2,
                _ => return None,
            };
            (op, geom)
        }
    })
}

/// Texture and surface functions warpscope does not model, and why.
fn unsupported_function(name: &str) -> Option<&'static str> {
    let tex = name.starts_with("tex") || name.starts_with("surf");
    if tex && (name.ends_with("Lod") || name.ends_with("Grad")) {
        return Some("mipmapped fetches (level of detail, gradients) are not supported: warpscope models level 0; fetch with tex1D/tex2D/tex3D");
    }
    if tex && name.contains("Cubemap") {
        return Some(
            "cube-map textures and surfaces are not supported (1-D, 2-D, 3-D and layered ones are)",
        );
    }
    None
}

/// The geometry a reference's `dim` template argument names (`2`, `cudaTextureType2D`,
/// `cudaTextureType2DLayered`, `0xF2`, ...).
fn ref_geometry(dim: &str) -> std::result::Result<TexGeom, &'static str> {
    let d = dim.trim();
    let number = parse_int_literal(d).map(|(v, _)| v);
    Ok(
        match (d.trim_start_matches("cudaTextureType").trim_start_matches("cudaSurfaceType"), number) {
            ("1D", _) | (_, Some(1)) => TexGeom::D1,
            ("2D", _) | (_, Some(2)) => TexGeom::D2,
            ("3D", _) | (_, Some(3)) => TexGeom::D3,
            ("1DLayered", _) | (_, Some(0xF1)) => TexGeom::A1,
            ("2DLayered", _) | (_, Some(0xF2)) => TexGeom::A2,
            ("Cubemap" | "CubemapLayered", _) | (_, Some(0x0C | 0xFC)) => {
                return Err("cube-map textures and surfaces are not supported (1-D, 2-D, 3-D and layered ones are)")
            }
            _ => return Err("expected a dimension 1, 2 or 3, or cudaTextureType1D … cudaTextureType2DLayered"),
        },
    )
}

/// The four-component vector of `scalar`'s kind (`float` → `float4`, `unsigned char` →
/// `uchar4`): what `tex2Dgather` on a reference of that texel returns.
fn vector4_name(scalar: &Ty) -> Option<&'static str> {
    Some(match scalar {
        Ty::Float(_) => "float4",
        Ty::Int { bytes: 1, signed } => {
            if *signed {
                "char4"
            } else {
                "uchar4"
            }
        }
        Ty::Int { bytes: 2, signed } => {
            if *signed {
                "short4"
            } else {
                "ushort4"
            }
        }
        Ty::Int { bytes: 4, signed } => {
            if *signed {
                "int4"
            } else {
                "uint4"
            }
        }
        _ => return None,
    })
}

impl<'t> Lowerer<'t> {
    /// A file-scope `texture<…> a, b;` or `surface<…> s;`: records each reference; `false`
    /// when `n` declares something else.
    pub(super) fn texture_ref_decl(&mut self, n: Node, tn: Node) -> Result<bool> {
        let src = self.src;
        if tn.kind() != "template_type" {
            return Ok(false);
        }
        let name = tn
            .child_by_field_name("name")
            .map(|x| text(cg::unqualify(x), src))
            .unwrap_or_default();
        let surface = match name {
            "texture" => false,
            "surface" => true,
            _ => return Ok(false),
        };
        let args: Vec<Node> = tn
            .child_by_field_name("arguments")
            .map(named_children)
            .unwrap_or_default();
        let usage = if surface {
            "surface<void, DIM> NAME;"
        } else {
            "texture<T, DIM, cudaReadModeElementType|cudaReadModeNormalizedFloat> NAME;"
        };
        let Some(&first) = args.first() else {
            return Err(self.err_at(tn, format!("{name} needs its type: {usage}")));
        };
        let elem = if first.kind() == "type_descriptor" {
            self.type_descriptor(first, src)?
        } else {
            return Err(self.err_at(first, format!("expected a type: {usage}")));
        };
        if !surface && !elem.is_arith() && !matches!(elem, Ty::Struct(_)) {
            return Err(self.err_at(
                first,
                format!(
                    "a texture's texels are numbers or vectors of them, not {}",
                    self.structs.name(&elem)
                ),
            ));
        }
        let geom = match args.get(1) {
            Some(d) => ref_geometry(text(*d, src)).map_err(|why| self.err_at(*d, why))?,
            None => TexGeom::D1,
        };
        let normalized_float = match args.get(2).map(|m| text(*m, src).trim()) {
            None | Some("cudaReadModeElementType") | Some("0") => false,
            Some("cudaReadModeNormalizedFloat") | Some("1") => true,
            Some(other) => {
                return Err(self.err_at(
                    args[2],
                    format!("unknown read mode '{other}': cudaReadModeElementType or cudaReadModeNormalizedFloat"),
                ))
            }
        };
        for d in named_children(n) {
            if d.kind() != "identifier" {
                if d.id() != tn.id() && d.kind() != "storage_class_specifier" {
                    return Err(self.err_at(d, format!("declare a {name} reference as {usage}")));
                }
                continue;
            }
            let ref_name = text(d, src).to_string();
            if self.texture_refs.iter().any(|r| r.name == ref_name) {
                return Err(self.err_at(d, format!("'{ref_name}' is declared twice")));
            }
            self.texture_refs.push(TextureRefDecl {
                decl: format!(
                    "{} {ref_name}",
                    text(tn, src)
                        .split_whitespace()
                        .collect::<Vec<_>>()
                        .join(" ")
                ),
                name: ref_name,
                surface,
                elem: elem.clone(),
                geom,
                normalized_float,
                loc: self.loc(d),
            });
        }
        Ok(true)
    }

    /// The texture or surface reference `n` names, if it is an identifier naming one that no
    /// variable hides.
    fn texture_ref_named(&self, n: Node, src: &str) -> Option<TextureRefDecl> {
        if n.kind() != "identifier" {
            return None;
        }
        let name = text(n, src);
        if self.lookup(name).is_some() {
            return None;
        }
        self.texture_refs.iter().find(|r| r.name == name).cloned()
    }

    /// The reference `name` used as a value: where it may be used instead.
    pub(super) fn texture_ref_as_value(&self, n: Node, name: &str) -> Option<Error> {
        let r = self.texture_refs.iter().find(|r| r.name == name)?;
        Some(self.err_at(
            n,
            if r.surface {
                format!("'{name}' is a surface reference: read and write it with surf1Dread/surf2Dread/… and surf1Dwrite/surf2Dwrite/…")
            } else {
                format!("'{name}' is a texture reference: read it with tex1Dfetch, tex1D, tex2D, tex3D, tex1DLayered, tex2DLayered or tex2Dgather")
            },
        ))
    }

    /// A call of a texture or surface function; `None` when `name` is none.
    pub(super) fn texture_call(
        &mut self,
        name: &str,
        targ_node: Option<Node>,
        arg_nodes: &[Node],
        n: Node,
        src: &str,
    ) -> Result<Option<Expr>> {
        if let Some(why) = unsupported_function(name) {
            return Err(self.unsupported(n, format!("{name}: {why}")));
        }
        let Some((mut op, geom)) = function(name) else {
            return Ok(None);
        };
        let loc = self.loc(n);
        let surface = matches!(op, TexOp::SurfRead | TexOp::SurfWrite);
        let given_t = match targ_node {
            Some(tl) => match named_children(tl).first() {
                Some(&td) if td.kind() == "type_descriptor" => Some(self.type_descriptor(td, src)?),
                _ => return Err(self.err_at(tl, format!("{name}<T> takes a type"))),
            },
            None => None,
        };
        // Where the texture is among the arguments: after a surface write's value, after a
        // result pointer (`tex2D(&v, obj, x, y)`, `surf2Dread(&v, s, x, y)`), else first.
        let mut at = usize::from(op == TexOp::SurfWrite);
        let mut out_ptr = None;
        let mut first = None;
        if op != TexOp::SurfWrite {
            if let Some(&a0) = arg_nodes.first() {
                if self.texture_ref_named(a0, src).is_none() {
                    let p = self.rvalue(a0, src)?;
                    // `f(&v, tex, coordinates…)`: one argument more than the value form.
                    let coords = geom.axes() + usize::from(geom.layered());
                    if p.ty.is_ptr() && arg_nodes.len() >= coords + 2 {
                        out_ptr = Some(p);
                        at = 1;
                    } else {
                        first = Some(p);
                    }
                }
            }
        }
        let what = if surface { "surface" } else { "texture" };
        let Some(&obj_node) = arg_nodes.get(at) else {
            return Err(self.err_at(n, format!("{name} needs a {what}")));
        };
        let reference = self.texture_ref_named(obj_node, src);
        let source = match &reference {
            Some(r) if r.surface != surface => {
                return Err(self.err_at(
                    obj_node,
                    format!(
                        "{name} needs a {what}; '{}' is a {} reference ({})",
                        r.name,
                        if r.surface { "surface" } else { "texture" },
                        r.decl
                    ),
                ))
            }
            Some(r) => {
                if r.geom != geom && !(name == "tex1Dfetch" && r.geom == TexGeom::D1) {
                    return Err(self.err_at(
                        obj_node,
                        format!(
                            "{name} reads a {} {what}; '{}' is {} ({})",
                            geom_words(geom),
                            r.name,
                            geom_words(r.geom),
                            r.decl
                        ),
                    ));
                }
                TexSource::Ref(r.name.clone())
            }
            None => {
                let obj = match first.take() {
                    Some(o) => o,
                    None => self.rvalue(obj_node, src)?,
                };
                if !matches!(obj.ty, Ty::Int { bytes: 8, .. }) {
                    return Err(self.err_at(
                        obj_node,
                        format!(
                            "{name} reads a {what} object ({}) or a {what} reference; '{}' has type {}",
                            if surface {
                                "cudaSurfaceObject_t"
                            } else {
                                "cudaTextureObject_t"
                            },
                            text(obj_node, src),
                            self.structs.name(&obj.ty)
                        ),
                    ));
                }
                TexSource::Object(obj)
            }
        };
        // The texel type: the result pointer's, the template argument, the written value's,
        // or (references) the declaration's.
        let value = if op == TexOp::SurfWrite {
            let Some(&vn) = arg_nodes.first() else {
                return Err(self.err_at(n, format!("{name} needs the value to write")));
            };
            Some(self.rvalue(vn, src)?)
        } else {
            None
        };
        let texel = match (&out_ptr, &given_t, &value, &reference) {
            (Some(p), _, _, _) => p.ty.pointee().cloned().unwrap_or(Ty::Void),
            (None, Some(t), _, _) => t.clone(),
            (None, None, Some(v), _) => v.ty.clone(),
            (None, None, None, Some(r)) if !r.surface => self.reference_result(r, op, n)?,
            _ => {
                let example = if surface {
                    format!("{name}<float>(surf, x, y) or {name}(&v, surf, x, y)")
                } else {
                    format!("{name}<float>(tex, x, y)")
                };
                return Err(self.err_at(
                    n,
                    format!("{name} on a {what} object needs the type it reads: {example}"),
                ));
            }
        };
        if !(texel.is_arith() || matches!(texel, Ty::Struct(_))) {
            return Err(self.err_at(
                n,
                format!(
                    "{name} moves numbers or vectors of them, not {}",
                    self.structs.name(&texel)
                ),
            ));
        }
        let value = match value {
            Some(v) => Some(self.convert(v, &texel, arg_nodes[0])?),
            None => None,
        };
        // Coordinates, the layer, then a gather's component or a surface's boundary mode.
        let rest = &arg_nodes[at + 1..];
        let need = geom.axes() + usize::from(geom.layered());
        let extra = usize::from(matches!(op, TexOp::Gather(_)) || surface);
        if rest.len() < need || rest.len() > need + extra {
            let mut list: Vec<&str> = ["x", "y", "z"][..geom.axes()].to_vec();
            if geom.layered() {
                list.push("layer");
            }
            return Err(self.err_at(
                n,
                format!(
                    "{name} takes the {what} then {}{}; {} given after it",
                    list.join(", "),
                    match op {
                        TexOp::Gather(_) => " and an optional component 0–3",
                        _ if surface => " and an optional boundary mode",
                        _ => "",
                    },
                    rest.len()
                ),
            ));
        }
        let coord_ty = if surface || name == "tex1Dfetch" {
            INT
        } else {
            FLOAT
        };
        let mut coords = Vec::new();
        for &c in &rest[..geom.axes()] {
            let v = self.rvalue(c, src)?;
            coords.push(self.convert(v, &coord_ty, c)?);
        }
        let layer = if geom.layered() {
            let l = rest[geom.axes()];
            let v = self.rvalue(l, src)?;
            Some(self.convert(v, &INT, l)?)
        } else {
            None
        };
        let mut boundary = SurfBoundary::Trap;
        if let Some(&last) = rest.get(need) {
            let word = text(last, src).trim();
            if let TexOp::Gather(_) = op {
                let v = self.rvalue(last, src)?;
                match const_eval(&v).map(|c| crate::value::as_i64(c, &v.ty)) {
                    Some(c @ 0..=3) => op = TexOp::Gather(c as u8),
                    _ => {
                        return Err(self.err_at(
                            last,
                            "tex2Dgather's component must be a constant 0–3 (x, y, z, w)",
                        ))
                    }
                }
            } else {
                boundary = match word.trim_start_matches("cudaBoundaryMode") {
                    "Trap" | "2" => SurfBoundary::Trap,
                    "Clamp" | "1" => SurfBoundary::Clamp,
                    "Zero" | "0" => SurfBoundary::Zero,
                    _ => {
                        return Err(self.err_at(
                            last,
                            format!("unknown boundary mode '{word}': cudaBoundaryModeTrap, cudaBoundaryModeClamp or cudaBoundaryModeZero"),
                        ))
                    }
                };
            }
        }
        let kind_op = if op == TexOp::SurfWrite {
            Op::Store
        } else {
            Op::Load
        };
        let site = self.site(loc, self.site_text(n, src), kind_op, false);
        let result_ty = if op == TexOp::SurfWrite {
            Ty::Void
        } else {
            texel.clone()
        };
        let access = e(
            ExprKind::Texture(Box::new(TexAccess {
                op,
                geom,
                source,
                coords,
                layer,
                value,
                texel: texel.clone(),
                boundary,
                site,
            })),
            result_ty,
            loc,
        );
        Ok(Some(match out_ptr {
            Some(p) => {
                let place = Place::Mem {
                    addr: p,
                    ty: texel,
                    read_only: false,
                };
                let store = self.store(place, access, n, src);
                Expr {
                    ty: Ty::Void,
                    ..self.void_seq(vec![store], loc)
                }
            }
            None => access,
        }))
    }

    /// What a fetch from reference `r` returns: its texel type, or for
    /// `cudaReadModeNormalizedFloat` the float vector of as many components; `tex2Dgather`
    /// gives four components of the texel's scalar kind (float4 when normalized).
    fn reference_result(&mut self, r: &TextureRefDecl, op: TexOp, n: Node) -> Result<Ty> {
        let (scalar, count) = match &r.elem {
            Ty::Struct(i) => {
                let d = &self.structs.defs[*i];
                match d.fields.first() {
                    Some(f) if d.builtin => (f.ty.clone(), d.fields.len()),
                    _ => {
                        return Err(self.err_at(
                            n,
                            format!(
                                "texture '{}' of a {}: its texels must be numbers or CUDA vectors",
                                r.name, d.name
                            ),
                        ))
                    }
                }
            }
            t => (t.clone(), 1),
        };
        let want = match (op, r.normalized_float) {
            (TexOp::Gather(_), true) => Some("float4".to_string()),
            (TexOp::Gather(_), false) => vector4_name(&scalar).map(str::to_string),
            (_, true) if count == 1 && !matches!(r.elem, Ty::Struct(_)) => return Ok(FLOAT),
            (_, true) => Some(format!("float{count}")),
            (_, false) => return Ok(r.elem.clone()),
        };
        want.and_then(|w| self.structs.vector(&w)).ok_or_else(|| {
            self.err_at(
                n,
                format!(
                    "cannot read texture '{}' of {} this way",
                    r.name,
                    self.structs.name(&r.elem)
                ),
            )
        })
    }
}

fn geom_words(g: TexGeom) -> &'static str {
    match g {
        TexGeom::D1 => "1-D",
        TexGeom::D2 => "2-D",
        TexGeom::D3 => "3-D",
        TexGeom::A1 => "1-D layered",
        TexGeom::A2 => "2-D layered",
    }
}
