//! Texture fetches and surface accesses: each lane's coordinates become the texels it reads
//! (`warpscope_model::texture`), lanes group into requests, and each request goes to the sink
//! as one access of `Space::Texture`/`Space::Surface`. Results are written as 0 (texture
//! contents are not modelled).

use warpscope_model::texture::{self, Coords, Footprint, Sampling, TextureDesc};
use warpscope_model::Op;

use super::*;

/// A texture or surface object of the launch: the handle its kernel parameter holds, what
/// it is, and the byte address its texels start at (in its own address window).
#[derive(Clone, Debug)]
pub struct TextureBinding {
    pub handle: u64,
    pub desc: TextureDesc,
    pub base: u64,
}

/// First texture's base address; each next one [`TEXTURE_SPACING`] higher.
pub const TEXTURE_BASE: u64 = 0x0000_4000_0000_0000;
/// Spacing of textures' base addresses (64 GiB).
pub const TEXTURE_SPACING: u64 = 1 << 36;
/// The handle the launch gives texture/surface parameter `k` (of the `--texture` list).
pub const fn texture_handle(k: usize) -> u64 {
    0x7E7E_0000_0000_0001 + k as u64
}

/// The handle of the module's texture/surface reference `k` ([`crate::decode::TextureRef`]):
/// an instruction naming the reference reads it, and a [`TextureBinding`] with it binds the
/// reference.
pub const fn texref_handle(k: usize) -> u64 {
    0x7E7F_0000_0000_0001 + k as u64
}

impl<'a> BlockCtx<'a> {
    pub(super) fn texture(
        &self,
        warp: &mut Warp,
        pc: u32,
        exec: u32,
        full: bool,
        t: &TexInstr,
        sink: &mut dyn FnMut(u32, &WarpAccess, WarpOrigin),
    ) -> Result<()> {
        let lane0 = lanes(exec).next().unwrap_or(0);
        let handle = get(warp, t.handle, lane0);
        // Named by the line that called the header's texture function, when inlined.
        let mut at = self.at(pc);
        if let Some((f, l, c)) = self
            .prog
            .sites
            .get(t.site as usize)
            .and_then(|s| s.inlined_at)
        {
            let file = self.prog.files.iter().find(|(k, _)| *k == f);
            at.source = Some(format!(
                "{}:{l}:{c}",
                file.map(|(_, p)| p.as_str()).unwrap_or("?")
            ));
            at.loc = Some((f, l, c));
        }
        let fault = |lane: usize, msg: String| Error::Fault {
            at: at.clone(),
            msg,
            thread: self.thread(warp, lane),
            block: self.block,
        };
        let binding = self
            .launch
            .textures
            .iter()
            .find(|b| b.handle == handle)
            .ok_or_else(|| {
                if let Some(r) = self.prog.texture_refs.iter().find(|r| r.handle == handle) {
                    return fault(
                        lane0,
                        format!(
                            "{} reference '{}' has no --texture: describe it with --texture {}=KIND:W[xH[xD]]:FORMAT (KIND linear, pitch2d or array; e.g. --texture {}=array:1024x1024:float)",
                            if r.surface { "surface" } else { "texture" },
                            r.name,
                            r.name,
                            r.name
                        ),
                    );
                }
                fault(
                    lane0,
                    format!(
                        "a {} object that no --texture describes: pass --texture PARAM=KIND:WxH:FORMAT for the kernel's cudaTextureObject_t/cudaSurfaceObject_t parameter",
                        if matches!(t.op, TexOp::SurfLoad | TexOp::SurfStore) { "surface" } else { "texture" }
                    ),
                )
            })?;
        let d = &binding.desc;
        let surface = matches!(t.op, TexOp::SurfLoad | TexOp::SurfStore);
        let axes = t.coords.len();
        let sampling = if t.op == TexOp::Gather {
            Sampling::Gather
        } else {
            Sampling::Tex
        };
        let mut per_lane: Vec<(usize, Footprint)> = Vec::with_capacity(WARP_SIZE);
        for lane in lanes(exec) {
            if get(warp, t.handle, lane) != handle {
                return Err(fault(
                    lane,
                    "lanes of one warp fetch from different texture objects: not supported".into(),
                ));
            }
            let layer = t.layer.map(|s| get(warp, s, lane) as u32 as i32 as i64);
            let mut c = [0i64; 3];
            let mut fc = [0f32; 3];
            for (k, s) in t.coords.iter().enumerate().take(3) {
                let v = get(warp, *s, lane);
                c[k] = v as u32 as i32 as i64;
                fc[k] = f32::from_bits(v as u32);
            }
            let fp = if surface {
                // x is in bytes [PTX ISA suld/sust].
                c[0] = c[0].div_euclid(d.texel_bytes as i64);
                let size = d.size;
                let out = (0..axes).any(|k| c[k] < 0 || c[k] as u64 >= size[k])
                    || layer.is_some_and(|l| l < 0 || l as u64 >= size[2]);
                match (out, t.boundary) {
                    (true, Boundary::Trap) => {
                        return Err(fault(
                            lane,
                            format!(
                            "surface access at ({}, {}, {}) outside '{}' ({}x{}x{} texels; .trap)",
                            c[0], c[1], c[2], d.name, size[0], size[1], size[2]
                        ),
                        ))
                    }
                    (true, Boundary::Zero) => Footprint::default(),
                    _ => texture::footprint(d, Coords::Int(c), axes, layer, Sampling::Tex),
                }
            } else if t.float_coords {
                texture::footprint(d, Coords::Float(fc), axes, layer, sampling)
            } else {
                texture::footprint(d, Coords::Int(c), axes, layer, sampling)
            };
            per_lane.push((lane, fp));
        }
        let slots = if surface {
            1
        } else {
            texture::slots_per_lane(d, axes, sampling)
        };
        let op = if t.op == TexOp::SurfStore {
            Op::Store
        } else {
            Op::Load
        };
        let origin = WarpOrigin {
            block: self.block,
            warp: warp.index,
        };
        for a in texture::warp_requests(d, binding.base, &per_lane, slots, surface, op) {
            sink(t.site, &a, origin);
        }
        for dr in t.ds.iter().flatten() {
            write_value(warp, *dr, 0, exec, full);
        }
        Ok(())
    }
}
