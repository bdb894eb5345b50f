//! Texture and surface objects on the GPU, made from a `--texture` description
//! ([`TextureDesc`]) so that `warpscope run`/`verify` launch a texture kernel with the texture
//! warpscope's model assumes: a CUDA array (`cuArray3DCreate`), linear memory or pitched
//! memory of exactly the description's pitch, zero-filled (the model's fetches return 0), and
//! a texture object (`cuTexObjectCreate`) with the description's addressing, filtering,
//! normalized coordinates and read mode, or a surface object (`cuSurfObjectCreate`) on an
//! array made with `CUDA_ARRAY3D_SURFACE_LDST`.
//!
//! Sources: CUDA Driver API "Texture Object Management" and "Surface Object Management";
//! Programming Guide "Texture and Surface Memory" (surfaces need a CUDA array; pitched memory
//! needs `CU_DEVICE_ATTRIBUTE_TEXTURE_PITCH_ALIGNMENT`-aligned rows).

use crate::device::{check, Buffer, Ctx, Device};
use crate::error::{Error, Result};
use cudarc::driver::sys;
use std::ffi::c_void;
use std::rc::Rc;
use warpscope_model::texture::{AddressMode, Filter, Kind, ReadMode, TextureDesc};

/// How a kernel uses a `--texture` parameter, which decides the object made for it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Usage {
    /// A `cudaSurfaceObject_t` (read with `surf*read`, written with `surf*write`).
    pub surface: bool,
    /// A layered array (`tex1DLayered`/`tex2DLayered`): the last dimension counts layers.
    pub layered: bool,
}

/// The driver's element format and channel count of a `--texture` FORMAT (`float`,
/// `uchar4`, `unsigned short2`, `half`).
///
/// Errors: [`Error::Argument`] for a name [`warpscope_model::texture::format_bytes`] rejects.
pub fn array_format(format: &str) -> Result<(sys::CUarray_format, u32)> {
    use sys::CUarray_format::*;
    let name = format.trim().replace("unsigned ", "u");
    let (base, channels) = match name.chars().last() {
        Some(c @ ('1' | '2' | '4')) => (&name[..name.len() - 1], c as u32 - '0' as u32),
        _ => (name.as_str(), 1),
    };
    let f = match base {
        "char" => CU_AD_FORMAT_SIGNED_INT8,
        "uchar" => CU_AD_FORMAT_UNSIGNED_INT8,
        "short" => CU_AD_FORMAT_SIGNED_INT16,
        "ushort" => CU_AD_FORMAT_UNSIGNED_INT16,
        "half" => CU_AD_FORMAT_HALF,
        "int" => CU_AD_FORMAT_SIGNED_INT32,
        "uint" => CU_AD_FORMAT_UNSIGNED_INT32,
        "float" => CU_AD_FORMAT_FLOAT,
        _ => {
            return Err(Error::Argument(format!(
                "--texture format '{format}' has no CUDA array format: write char, uchar, short, ushort, half, int, uint or float with 1, 2 or 4 components"
            )))
        }
    };
    Ok((f, channels))
}

/// Where the texels live.
enum Storage {
    Array(sys::CUarray),
    /// Device memory, kept alive (freed after the object, see [`TextureObject`]'s Drop).
    Memory {
        _owned: Buffer,
    },
}

/// A texture or surface object with its storage; destroyed when dropped.
pub struct TextureObject {
    ctx: Rc<Ctx>,
    storage: Storage,
    handle: u64,
    surface: bool,
    /// Bytes of texel storage (the array's texels, or the allocation).
    pub bytes: u64,
}

impl TextureObject {
    /// The 64-bit handle the kernel's `cudaTextureObject_t`/`cudaSurfaceObject_t` receives.
    pub fn handle(&self) -> u64 {
        self.handle
    }
}

impl Drop for TextureObject {
    fn drop(&mut self) {
        if self.ctx.make_current().is_err() {
            return;
        }
        // SAFETY: the handle and array were created by this object and are destroyed once;
        // the object goes before its storage.
        unsafe {
            if self.surface {
                sys::cuSurfObjectDestroy(self.handle);
            } else {
                sys::cuTexObjectDestroy(self.handle);
            }
            if let Storage::Array(a) = self.storage {
                sys::cuArrayDestroy(a);
            }
        }
    }
}

fn address_mode(m: AddressMode) -> sys::CUaddress_mode {
    use sys::CUaddress_mode::*;
    match m {
        AddressMode::Clamp => CU_TR_ADDRESS_MODE_CLAMP,
        AddressMode::Wrap => CU_TR_ADDRESS_MODE_WRAP,
        AddressMode::Mirror => CU_TR_ADDRESS_MODE_MIRROR,
        AddressMode::Border => CU_TR_ADDRESS_MODE_BORDER,
    }
}

impl Device {
    /// Makes the texture or surface object `t` describes, zero-filled.
    ///
    /// - `array`: a CUDA array of `t.size` (1-, 2- or 3-D; layered when `usage.layered`,
    ///   surface load/store enabled when `usage.surface`).
    /// - `linear`: `width × texel_bytes` bytes of device memory.
    /// - `pitch2d`: `height` rows of `t.pitch` bytes, the first row aligned to the device's
    ///   texture alignment; `t.pitch` must be a multiple of its pitch alignment.
    ///
    /// Errors: [`Error::Argument`] for a surface on linear or pitched memory (CUDA binds
    /// surfaces to arrays only), a pitch the device rejects or an unknown format;
    /// [`Error::Cuda`] from the driver (sizes beyond the device's texture limits name the call).
    pub fn texture(&self, t: &TextureDesc, usage: Usage) -> Result<TextureObject> {
        self.ctx.make_current()?;
        let (format, channels) = array_format(&t.format)?;
        let texel = t.texel_bytes as u64;
        let [w, h, d] = t.size;
        if usage.surface && t.kind != Kind::Array {
            return Err(Error::Argument(format!(
                "--texture {}: a surface object needs a CUDA array: write {}=array:…",
                t.name, t.name
            )));
        }
        // SAFETY: an all-zero resource description is a valid starting point (plain data).
        let mut res: sys::CUDA_RESOURCE_DESC = unsafe { std::mem::zeroed() };
        self.check_texture_limits(t, usage)?;
        let (storage, bytes) = match t.kind {
            Kind::Array => {
                // A layered array counts its layers in Depth (a 1-D layered one has Height 0).
                let (height, depth, rows, slices) = match (usage.layered, t.dims) {
                    (true, 2) => (0, h, 1, h),
                    (_, 1) => (0, 0, 1, 1),
                    (_, 2) => (h, 0, h, 1),
                    _ => (h, d, h, d),
                };
                let desc = sys::CUDA_ARRAY3D_DESCRIPTOR {
                    Width: w as usize,
                    Height: height as usize,
                    Depth: depth as usize,
                    Format: format,
                    NumChannels: channels,
                    Flags: (if usage.layered {
                        sys::CUDA_ARRAY3D_LAYERED
                    } else {
                        0
                    }) | (if usage.surface {
                        sys::CUDA_ARRAY3D_SURFACE_LDST
                    } else {
                        0
                    }),
                };
                let mut a = std::ptr::null_mut();
                // SAFETY: plain driver call; the array is destroyed in Drop.
                check(
                    unsafe { sys::cuArray3DCreate_v2(&mut a, &desc) },
                    "cuArray3DCreate",
                    || format!("creating the CUDA array of --texture {}", t.name),
                )?;
                let bytes = w * h * d * texel;
                if let Err(e) = zero_array(a, w * texel, rows, slices, &t.name) {
                    // SAFETY: created above, not yet owned by anything.
                    unsafe { sys::cuArrayDestroy(a) };
                    return Err(e);
                }
                res.resType = sys::CUresourcetype::CU_RESOURCE_TYPE_ARRAY;
                res.res.array =
                    sys::CUDA_RESOURCE_DESC_st__bindgen_ty_1__bindgen_ty_1 { hArray: a };
                (Storage::Array(a), bytes)
            }
            Kind::Linear => {
                let bytes = w * texel;
                let b = self.alloc(bytes)?;
                b.zero()?;
                res.resType = sys::CUresourcetype::CU_RESOURCE_TYPE_LINEAR;
                res.res.linear = sys::CUDA_RESOURCE_DESC_st__bindgen_ty_1__bindgen_ty_3 {
                    devPtr: b.ptr(),
                    format,
                    numChannels: channels,
                    sizeInBytes: bytes as usize,
                };
                (Storage::Memory { _owned: b }, bytes)
            }
            Kind::Pitch2d => {
                let pitch_align = self.attribute(
                    sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_TEXTURE_PITCH_ALIGNMENT,
                )? as u64;
                let base_align = self
                    .attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT)?
                    .max(1) as u64;
                if pitch_align > 0 && !t.pitch.is_multiple_of(pitch_align) {
                    return Err(Error::Argument(format!(
                        "--texture {}: pitch {} bytes is not a multiple of this GPU's texture pitch alignment ({} bytes): give pitch={}",
                        t.name,
                        t.pitch,
                        pitch_align,
                        t.pitch.div_ceil(pitch_align) * pitch_align
                    )));
                }
                let bytes = t.pitch * h;
                let b = self.alloc(bytes + base_align)?;
                b.zero()?;
                let base = b.ptr().div_ceil(base_align) * base_align;
                res.resType = sys::CUresourcetype::CU_RESOURCE_TYPE_PITCH2D;
                res.res.pitch2D = sys::CUDA_RESOURCE_DESC_st__bindgen_ty_1__bindgen_ty_4 {
                    devPtr: base,
                    format,
                    numChannels: channels,
                    width: w as usize,
                    height: h as usize,
                    pitchInBytes: t.pitch as usize,
                };
                (Storage::Memory { _owned: b }, bytes)
            }
        };
        let mut handle = 0u64;
        let made = if usage.surface {
            // SAFETY: `res` describes a live surface-enabled array.
            check(
                unsafe { sys::cuSurfObjectCreate(&mut handle, &res) },
                "cuSurfObjectCreate",
                || format!("creating the surface object of --texture {}", t.name),
            )
        } else {
            let integer = !t.float_format && t.read == ReadMode::Element;
            let mode = address_mode(t.address);
            let tex = sys::CUDA_TEXTURE_DESC {
                addressMode: [mode; 3],
                filterMode: match t.filter {
                    Filter::Point => sys::CUfilter_mode::CU_TR_FILTER_MODE_POINT,
                    Filter::Linear => sys::CUfilter_mode::CU_TR_FILTER_MODE_LINEAR,
                },
                flags: (if integer {
                    sys::CU_TRSF_READ_AS_INTEGER
                } else {
                    0
                }) | (if t.normalized {
                    sys::CU_TRSF_NORMALIZED_COORDINATES
                } else {
                    0
                }),
                maxAnisotropy: 0,
                mipmapFilterMode: sys::CUfilter_mode::CU_TR_FILTER_MODE_POINT,
                mipmapLevelBias: 0.0,
                minMipmapLevelClamp: 0.0,
                maxMipmapLevelClamp: 0.0,
                borderColor: [0.0; 4],
                reserved: [0; 12],
            };
            // SAFETY: `res` and `tex` are complete descriptions; no resource view.
            check(
                unsafe { sys::cuTexObjectCreate(&mut handle, &res, &tex, std::ptr::null()) },
                "cuTexObjectCreate",
                || format!("creating the texture object of --texture {}", t.name),
            )
        };
        if let Err(e) = made {
            if let Storage::Array(a) = storage {
                // SAFETY: created above, not yet owned by anything.
                unsafe { sys::cuArrayDestroy(a) };
            }
            return Err(e);
        }
        Ok(TextureObject {
            ctx: self.ctx.clone(),
            storage,
            handle,
            surface: usage.surface,
            bytes,
        })
    }
}

impl Device {
    /// The device's largest texture (or surface) of `t`'s kind and shape, checked before the
    /// driver is asked, so that a too-large description names the limit.
    ///
    /// Errors: [`Error::Argument`] naming the dimension, the size and the limit.
    fn check_texture_limits(&self, t: &TextureDesc, usage: Usage) -> Result<()> {
        use sys::CUdevice_attribute::*;
        let [w, h, d] = t.size;
        let dims: Vec<(&str, u64, sys::CUdevice_attribute)> = match (t.kind, usage, t.dims) {
            (Kind::Linear, _, _) => vec![(
                "width",
                w,
                CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LINEAR_WIDTH,
            )],
            (Kind::Pitch2d, _, _) => vec![
                (
                    "width",
                    w,
                    CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LINEAR_WIDTH,
                ),
                (
                    "height",
                    h,
                    CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LINEAR_HEIGHT,
                ),
                (
                    "pitch",
                    t.pitch,
                    CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LINEAR_PITCH,
                ),
            ],
            (Kind::Array, Usage { surface: true, .. }, 1) => {
                vec![("width", w, CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE1D_WIDTH)]
            }
            (Kind::Array, Usage { surface: true, .. }, 2) => vec![
                ("width", w, CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_WIDTH),
                ("height", h, CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_HEIGHT),
            ],
            (Kind::Array, Usage { surface: true, .. }, _) => vec![
                ("width", w, CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE3D_WIDTH),
                ("height", h, CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE3D_HEIGHT),
                ("depth", d, CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE3D_DEPTH),
            ],
            (Kind::Array, Usage { layered: true, .. }, 2) => vec![
                (
                    "width",
                    w,
                    CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LAYERED_WIDTH,
                ),
                (
                    "layers",
                    h,
                    CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LAYERED_LAYERS,
                ),
            ],
            (Kind::Array, Usage { layered: true, .. }, _) => vec![
                (
                    "width",
                    w,
                    CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_WIDTH,
                ),
                (
                    "height",
                    h,
                    CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_HEIGHT,
                ),
                (
                    "layers",
                    d,
                    CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_LAYERS,
                ),
            ],
            (Kind::Array, _, 1) => vec![("width", w, CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_WIDTH)],
            (Kind::Array, _, 2) => vec![
                ("width", w, CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_WIDTH),
                ("height", h, CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_HEIGHT),
            ],
            (Kind::Array, _, _) => vec![
                ("width", w, CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_WIDTH),
                ("height", h, CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_HEIGHT),
                ("depth", d, CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_DEPTH),
            ],
        };
        for (what, size, a) in dims {
            let limit = self.attribute(a)? as u64;
            if limit > 0 && size > limit {
                return Err(Error::Argument(format!(
                    "--texture {}: {what} {size} is over this GPU's limit of {limit} for a {}{}{} (driver attribute {a:?}): describe a smaller texture",
                    t.name,
                    if usage.layered { "layered " } else { "" },
                    if usage.surface { "surface on a " } else { "" },
                    match (t.kind, t.dims) {
                        (Kind::Linear, _) => "linear texture".to_string(),
                        (Kind::Pitch2d, _) => "pitch2d texture".to_string(),
                        (Kind::Array, n) => format!("{n}-D CUDA array"),
                    }
                )));
            }
        }
        Ok(())
    }
}

/// Copies zeros into every texel of array `a` (`row_bytes` × `rows` × `slices`).
fn zero_array(a: sys::CUarray, row_bytes: u64, rows: u64, slices: u64, name: &str) -> Result<()> {
    let zeros = vec![0u8; (row_bytes * rows) as usize];
    for z in 0..slices {
        // Every field written out: CUmemorytype has no zero value, so no mem::zeroed here.
        let c = sys::CUDA_MEMCPY3D {
            srcXInBytes: 0,
            srcY: 0,
            srcZ: 0,
            srcLOD: 0,
            srcMemoryType: sys::CUmemorytype::CU_MEMORYTYPE_HOST,
            srcHost: zeros.as_ptr() as *const c_void,
            srcDevice: 0,
            srcArray: std::ptr::null_mut(),
            reserved0: std::ptr::null_mut(),
            srcPitch: row_bytes as usize,
            srcHeight: rows as usize,
            dstXInBytes: 0,
            dstY: 0,
            dstZ: z as usize,
            dstLOD: 0,
            dstMemoryType: sys::CUmemorytype::CU_MEMORYTYPE_ARRAY,
            dstHost: std::ptr::null_mut(),
            dstDevice: 0,
            dstArray: a,
            reserved1: std::ptr::null_mut(),
            dstPitch: 0,
            dstHeight: 0,
            WidthInBytes: row_bytes as usize,
            Height: rows as usize,
            Depth: 1,
        };
        // SAFETY: source and destination ranges lie inside `zeros` and the array.
        check(unsafe { sys::cuMemcpy3D_v2(&c) }, "cuMemcpy3D", || {
            format!("zeroing the CUDA array of --texture {name}")
        })?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_map_to_driver_formats_and_channels() {
        use sys::CUarray_format::*;
        assert_eq!(array_format("float").unwrap(), (CU_AD_FORMAT_FLOAT, 1));
        assert_eq!(
            array_format("uchar4").unwrap(),
            (CU_AD_FORMAT_UNSIGNED_INT8, 4)
        );
        assert_eq!(
            array_format("unsigned short2").unwrap(),
            (CU_AD_FORMAT_UNSIGNED_INT16, 2)
        );
        assert_eq!(array_format("half").unwrap(), (CU_AD_FORMAT_HALF, 1));
        assert!(array_format("double").is_err());
    }
}
