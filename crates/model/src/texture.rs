//! Texture and surface memory: what a texture is (its `--texture` description), which texels
//! one lane's fetch reads (coordinates, addressing modes, filtering), where those texels lie
//! in memory (pitch-linear rows or the block-linear layout of CUDA arrays), how a warp's fetch
//! splits into requests, and what each request costs.
//!
//! Sources, rule by rule:
//! - Coordinates, addressing and filtering: [PG] appendix "Texture Fetching" (nearest-point:
//!   `i = floor(x)`; linear: `xB = x − 0.5`, `i = floor(xB)`, `α = frac(xB)` held in 9-bit
//!   fixed point with 8 fractional bits; normalized coordinates scaled by the size; wrap and
//!   mirror only with normalized coordinates).
//! - Block-linear layout of CUDA arrays: a GOB is 64 bytes × 8 rows (512 bytes) whose 32-byte
//!   sectors are 16 bytes × 2 rows (NVIDIA's Tegra TRM "block linear" and Mesa's nouveau/NVK
//!   `nil` tiling code, third-party); **measured on H100**: every texel size (1, 4, 16 bytes)
//!   and pattern of `tests/data/h100/texture-probes.csv` gives the sector counts of 16 B × 2-row
//!   sectors, a 1-D array is a 2-D one of height 1 (16 useful bytes a sector), 3-D and layered
//!   arrays have one z slice or layer per sector. How GOBs stack into blocks (block height and
//!   depth) is the driver's choice and changes no sector count; [`block_gobs`] is an assumption.
//! - Requests and sectors (**measured on H100**, `tests/data/h100/texture-probes.csv`): a
//!   fetch from a CUDA array or pitch-linear memory (`tex.1d/2d/3d/a2d`, `tld4`) is one
//!   request per quad (4 consecutive lanes) with an active lane; `tex1Dfetch` from linear
//!   memory and surface loads/stores (`suld`/`sust`) one request per 8 lanes (4 lanes for
//!   16-byte texels); each request fetches the distinct 32-byte sectors of its lanes' texels
//!   (no merging across requests), a trilinear (2×2×2) quad as two lane pairs; a linear-filtered fetch reads the 2×2 (2×2×2) neighbourhood
//!   but skips texels whose weight is 0 (a coordinate at a texel centre reads one texel), while
//!   `tld4` always reads all four; border addressing costs as clamp (out-of-range lanes still
//!   look up the clamped texel's sector); a `tex1Dfetch` index outside the texture reads
//!   nothing (no request).
//! - CC 1.x–3.x (texture cache per TPC/SM): the guides do not say how the texture cache splits
//!   a warp's fetch. warpscope applies the rule measured on 9.0 to every capability and says
//!   so (an assumption, not a measurement).

use crate::access::WarpAccess;
use crate::cost::Cost;
use crate::lanes::LaneForm;
use serde::Serialize;

/// Sector size of the texture path, bytes (5.x+ unified L1/texture cache; measured on H100).
pub const SECTOR_BYTES: u64 = 32;

/// Where a texture's texels live.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// `cudaResourceTypeLinear`: a 1-D buffer read with `tex1Dfetch` (integer index).
    Linear,
    /// `cudaResourceTypePitch2D`: rows of `pitch` bytes (row-major).
    Pitch2d,
    /// A CUDA array (`cudaMallocArray`/`cudaMalloc3DArray`): block-linear.
    Array,
}

/// What a coordinate outside the texture reads [PG "Texture Fetching"].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum AddressMode {
    Clamp,
    Wrap,
    Mirror,
    Border,
}

/// Nearest-point or linear filtering.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Filter {
    Point,
    Linear,
}

/// What a fetch returns: the element type, or 8/16-bit integers as floats in [0, 1]/[−1, 1].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ReadMode {
    Element,
    NormalizedFloat,
}

/// One texture (or surface) as described at launch with `--texture`.
///
/// `size` is (width, height, depth) in texels; absent dimensions are 1, `dims` says how many
/// were given (1–3). `texel_bytes` is the element's size (`float` 4, `uchar4` 4, `float4`
/// 16). `pitch` is the row pitch in bytes of a pitch-linear texture (0 for other kinds).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TextureDesc {
    /// The kernel parameter (`cudaTextureObject_t` or `cudaSurfaceObject_t`) or the module's
    /// texture or surface reference (`texture<…> NAME;`, PTX `.global .texref NAME;`) it is
    /// bound to.
    pub name: String,
    pub kind: Kind,
    pub size: [u64; 3],
    pub dims: u8,
    /// The element type as written (`float`, `uchar4`, ...).
    pub format: String,
    pub texel_bytes: u32,
    /// Whether the element is a floating-point type (linear filtering needs a float result).
    pub float_format: bool,
    pub address: AddressMode,
    pub filter: Filter,
    pub normalized: bool,
    pub read: ReadMode,
    pub pitch: u64,
}

/// The element types `--texture` accepts, with their scalar size and whether they are float.
const SCALARS: &[(&str, u32, bool)] = &[
    ("char", 1, false),
    ("uchar", 1, false),
    ("short", 2, false),
    ("ushort", 2, false),
    ("half", 2, true),
    ("int", 4, false),
    ("uint", 4, false),
    ("float", 4, true),
];

/// The size in bytes and float-ness of an element type name (`float`, `uchar4`, `short2`,
/// `unsigned char`); `None` for names not listed in [`SCALARS`] with 1, 2 or 4 components.
pub fn format_bytes(name: &str) -> Option<(u32, bool)> {
    let name = name.trim().replace("unsigned ", "u");
    let (base, lanes) = match name.chars().last() {
        Some(c @ ('1' | '2' | '4')) => (&name[..name.len() - 1], c as u32 - '0' as u32),
        _ => (name.as_str(), 1),
    };
    SCALARS
        .iter()
        .find(|(n, _, _)| *n == base)
        .map(|&(_, b, f)| (b * lanes, f))
}

/// What `--texture` takes, for error messages.
pub const SPEC_SYNTAX: &str = "NAME=KIND:W[xH[xD]]:FORMAT[,addr=clamp|wrap|mirror|border][,filter=point|linear][,normalized][,read=element|normalized-float][,pitch=BYTES] with KIND linear, pitch2d or array and FORMAT an element type such as float, float4, uchar4";

impl std::str::FromStr for TextureDesc {
    type Err = String;

    /// Parses `NAME=KIND:W[xH[xD]]:FORMAT[,options]` (see [`SPEC_SYNTAX`]). Defaults are
    /// CUDA's: clamp addressing, point filtering, unnormalized coordinates, element read mode;
    /// a pitch-linear texture's pitch defaults to its row's bytes rounded up to 512 (an
    /// assumption about `cudaMallocPitch`; give `pitch=` when it differs).
    ///
    /// Errors: a message naming the part that is wrong and what to write instead.
    fn from_str(spec: &str) -> Result<TextureDesc, String> {
        let (name, rest) = spec
            .split_once('=')
            .ok_or_else(|| format!("'{spec}' has no '=': write {SPEC_SYNTAX}"))?;
        let name = name.trim();
        if name.is_empty() || !name.chars().all(|c| c.is_alphanumeric() || c == '_') {
            return Err(format!(
                "'{name}' is not a parameter name: write the kernel's cudaTextureObject_t parameter before '='"
            ));
        }
        let mut fields = rest.split(',');
        let head = fields.next().unwrap_or("");
        let parts: Vec<&str> = head.split(':').collect();
        let [kind, size, format] = parts[..] else {
            return Err(format!(
                "'{head}' should be KIND:SIZE:FORMAT (for example array:1024x768:float)"
            ));
        };
        let kind = match kind.trim() {
            "linear" => Kind::Linear,
            "pitch2d" => Kind::Pitch2d,
            "array" => Kind::Array,
            k => {
                return Err(format!(
                    "unknown kind '{k}': write linear (tex1Dfetch), pitch2d or array"
                ))
            }
        };
        let dims_text: Vec<&str> = size.trim().split('x').collect();
        if dims_text.is_empty() || dims_text.len() > 3 {
            return Err(format!("size '{size}' should be W, WxH or WxHxD"));
        }
        let mut sz = [1u64; 3];
        for (k, d) in dims_text.iter().enumerate() {
            sz[k] = match d.trim().parse::<u64>() {
                Ok(v) if (1..=1 << 30).contains(&v) => v,
                _ => {
                    return Err(format!(
                        "size '{size}': '{d}' is not a whole number of texels from 1 to 2^30"
                    ))
                }
            };
        }
        let dims = dims_text.len() as u8;
        match (kind, dims) {
            (Kind::Linear, 1) | (Kind::Pitch2d, 2) | (Kind::Array, _) => {}
            (Kind::Linear, _) => {
                return Err(format!(
                    "a linear texture has one dimension (its texel count), not '{size}'"
                ))
            }
            (Kind::Pitch2d, _) => {
                return Err(format!("a pitch2d texture is WxH, not '{size}'"));
            }
        }
        let (texel_bytes, float_format) = format_bytes(format).ok_or_else(|| {
            format!(
                "unknown format '{format}': write char, uchar, short, ushort, half, int, uint or float, with 1, 2 or 4 components (float4, uchar2)"
            )
        })?;
        let mut d = TextureDesc {
            name: name.to_string(),
            kind,
            size: sz,
            dims,
            format: format.trim().to_string(),
            texel_bytes,
            float_format,
            address: AddressMode::Clamp,
            filter: Filter::Point,
            normalized: false,
            read: ReadMode::Element,
            pitch: 0,
        };
        let mut pitch = None;
        for f in fields {
            let (k, v) = match f.split_once('=') {
                Some((k, v)) => (k.trim(), Some(v.trim())),
                None => (f.trim(), None),
            };
            match (k, v) {
                ("addr", Some(v)) => {
                    d.address = match v {
                        "clamp" => AddressMode::Clamp,
                        "wrap" => AddressMode::Wrap,
                        "mirror" => AddressMode::Mirror,
                        "border" => AddressMode::Border,
                        _ => return Err(format!("addr={v}: write clamp, wrap, mirror or border")),
                    }
                }
                ("filter", Some(v)) => {
                    d.filter = match v {
                        "point" => Filter::Point,
                        "linear" => Filter::Linear,
                        _ => return Err(format!("filter={v}: write point or linear")),
                    }
                }
                ("normalized", None) => d.normalized = true,
                ("read", Some(v)) => {
                    d.read = match v {
                        "element" => ReadMode::Element,
                        "normalized-float" => ReadMode::NormalizedFloat,
                        _ => return Err(format!("read={v}: write element or normalized-float")),
                    }
                }
                ("pitch", Some(v)) => match v.parse::<u64>() {
                    Ok(p) if p >= sz[0] * texel_bytes as u64 => pitch = Some(p),
                    _ => {
                        return Err(format!(
                            "pitch={v}: give the row pitch in bytes, at least width × {texel_bytes}"
                        ))
                    }
                },
                _ => {
                    return Err(format!(
                        "unknown option '{f}': write addr=..., filter=..., normalized, read=... or pitch=..."
                    ))
                }
            }
        }
        if d.kind == Kind::Linear
            && (d.filter == Filter::Linear || d.address != AddressMode::Clamp || d.normalized)
        {
            return Err(
                "a linear texture (tex1Dfetch) has no filtering, addressing modes or normalized coordinates: drop those options"
                    .into(),
            );
        }
        if matches!(d.address, AddressMode::Wrap | AddressMode::Mirror) && !d.normalized {
            return Err(format!(
                "addr={:?} works only with normalized coordinates in CUDA (add ,normalized)",
                d.address
            )
            .to_lowercase());
        }
        if d.filter == Filter::Linear && !d.float_format && d.read == ReadMode::Element {
            return Err(format!(
                "filter=linear needs a float result: use a float format or add ,read=normalized-float to '{}'",
                d.format
            ));
        }
        if d.read == ReadMode::NormalizedFloat && (d.float_format || texel_bytes / 4 > 1) {
            // 8/16-bit integer elements only (uchar4 is 4 bytes of 8-bit components).
            let scalar = d.format.trim_end_matches(['1', '2', '4']);
            if d.float_format || !matches!(scalar, "char" | "uchar" | "short" | "ushort") {
                return Err(format!(
                    "read=normalized-float applies to 8- and 16-bit integer formats, not '{}'",
                    d.format
                ));
            }
        }
        if d.kind == Kind::Pitch2d {
            d.pitch = pitch.unwrap_or_else(|| (sz[0] * texel_bytes as u64).div_ceil(512) * 512);
        } else if pitch.is_some() {
            return Err("pitch= applies to pitch2d textures only".into());
        }
        Ok(d)
    }
}

/// A lane's coordinates as the instruction gives them: integers (`tex1Dfetch`, `.s32`
/// coordinates, surfaces) or floats; the layer of a layered fetch is always an integer.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Coords {
    Int([i64; 3]),
    Float([f32; 3]),
}

/// The texels one lane reads: up to 8 (the 2×2×2 neighbourhood), in-range coordinates.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Footprint {
    pub texels: [[u64; 3]; 8],
    pub len: usize,
}

impl Footprint {
    /// The texels, in order (x fastest).
    pub fn iter(&self) -> impl Iterator<Item = [u64; 3]> + '_ {
        self.texels[..self.len].iter().copied()
    }
}

/// How a fetch samples: `tex` (filtered as the texture says) or `tld4` (the 2×2 bilinear
/// footprint, always all four texels).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sampling {
    Tex,
    Gather,
}

/// Applies the addressing mode to integer texel index `i` on an axis of `n` texels [PG].
/// Border costs as clamp (measured on H100: out-of-range lanes still look up a sector).
pub fn address(mode: AddressMode, i: i64, n: u64) -> u64 {
    let n = n.max(1) as i64;
    (match mode {
        AddressMode::Clamp | AddressMode::Border => i.clamp(0, n - 1),
        AddressMode::Wrap => i.rem_euclid(n),
        AddressMode::Mirror => {
            let m = i.rem_euclid(2 * n);
            if m >= n {
                2 * n - 1 - m
            } else {
                m
            }
        }
    }) as u64
}

/// The texels lane coordinates `c` read from `t`, with `axes` coordinate axes (1, 2 or 3;
/// `layer` the layer of a layered fetch, clamped to the array's depth).
///
/// Rules [PG "Texture Fetching"]: a normalized coordinate is multiplied by the axis' size;
/// nearest-point reads `floor(x)`; linear filtering (and `tld4`) reads `floor(x − 0.5)` and
/// the next texel, with weight `α = frac(x − 0.5)` rounded to 8 fractional bits: a texel of
/// weight 0 is not read (measured on H100), except by `tld4`. Indices then pass through the
/// addressing mode. A linear texture (`tex1Dfetch`) takes an integer index and reads nothing
/// outside `[0, width)` (measured: no request, no sector).
pub fn footprint(
    t: &TextureDesc,
    c: Coords,
    axes: usize,
    layer: Option<i64>,
    sampling: Sampling,
) -> Footprint {
    let mut f = Footprint::default();
    if t.kind == Kind::Linear {
        let i = match c {
            Coords::Int(v) => v[0],
            Coords::Float(v) => v[0].floor() as i64,
        };
        if i >= 0 && (i as u64) < t.size[0] {
            f.texels[0] = [i as u64, 0, 0];
            f.len = 1;
        }
        return f;
    }
    let linear = sampling == Sampling::Gather || t.filter == Filter::Linear;
    // Per axis: one or two addressed indices.
    let mut per_axis: [[u64; 2]; 3] = [[0; 2]; 3];
    let mut count = [1usize; 3];
    for a in 0..axes.min(3) {
        let n = t.size[a];
        let (i0, two) = match c {
            Coords::Int(v) => (v[a], false),
            Coords::Float(v) => {
                let mut x = v[a] as f64;
                if t.normalized {
                    x *= n as f64;
                }
                if !x.is_finite() {
                    x = 0.0;
                }
                if linear {
                    let xb = x - 0.5;
                    let i = xb.floor();
                    let q = ((xb - i) * 256.0).round() as i64;
                    match q {
                        0 if sampling == Sampling::Tex => (i as i64, false),
                        256 if sampling == Sampling::Tex => (i as i64 + 1, false),
                        _ => (i as i64, true),
                    }
                } else {
                    (x.floor() as i64, false)
                }
            }
        };
        per_axis[a][0] = address(t.address, i0, n);
        if two {
            let i1 = address(t.address, i0 + 1, n);
            if i1 != per_axis[a][0] {
                per_axis[a][1] = i1;
                count[a] = 2;
            }
        }
    }
    if let Some(l) = layer {
        per_axis[2][0] = l.clamp(0, t.size[2] as i64 - 1) as u64;
        count[2] = 1;
    }
    for k in 0..count[2] {
        for j in 0..count[1] {
            for i in 0..count[0] {
                f.texels[f.len] = [per_axis[0][i], per_axis[1][j], per_axis[2][k]];
                f.len += 1;
            }
        }
    }
    f
}

/// GOBs a block-linear block spans in y and z for an array of `size` texels: the smallest
/// power of two covering the array, at most 16 in y and 8 in z (nouveau's choice; an
/// assumption — it changes addresses but no sector or line count).
pub fn block_gobs(t: &TextureDesc) -> (u64, u64) {
    let gobs_y = t.size[1].div_ceil(8);
    let bh = gobs_y.next_power_of_two().min(16);
    let bd = if t.dims == 3 {
        t.size[2].next_power_of_two().min(8)
    } else {
        1
    };
    (bh, bd)
}

/// Byte offset of texel (x, y, z) from the texture's first byte.
///
/// Linear: `x · texel_bytes`. Pitch2d: `y · pitch + x · texel_bytes`. Array (block-linear):
/// a GOB of 64 bytes × 8 rows holds its 512 bytes as `((xb % 64) / 32) · 256 + ((y % 8) / 2)
/// · 64 + ((xb % 32) / 16) · 32 + (y % 2) · 16 + xb % 16` (xb = x · texel_bytes), so each
/// 32-byte sector is 16 bytes × 2 rows and each 128-byte line 32 bytes × 4 rows; GOBs stack
/// into blocks of [`block_gobs`] GOBs (y, then z), blocks run along x, then y, then z.
pub fn texel_offset(t: &TextureDesc, [x, y, z]: [u64; 3]) -> u64 {
    let b = t.texel_bytes as u64;
    match t.kind {
        Kind::Linear => x * b,
        Kind::Pitch2d => y * t.pitch + x * b,
        Kind::Array => {
            let xb = x * b;
            let in_gob = ((xb % 64) / 32) * 256
                + ((y % 8) / 2) * 64
                + ((xb % 32) / 16) * 32
                + (y % 2) * 16
                + xb % 16;
            let (bh, bd) = block_gobs(t);
            let gobs_x = (t.size[0] * b).div_ceil(64);
            let blocks_y = t.size[1].div_ceil(8).div_ceil(bh);
            let block_bytes = 512 * bh * bd;
            let (gx, gy) = (xb / 64, y / 8);
            let block = (z / bd) * blocks_y * gobs_x + (gy / bh) * gobs_x + gx;
            let gob = (z % bd) * bh + gy % bh;
            block * block_bytes + gob * 512 + in_gob
        }
    }
}

/// The texel at byte `offset` from the texture's first byte: the inverse of
/// [`texel_offset`] (same layouts; `None` past [`footprint_bytes`]). The explain picture
/// uses it to put a request's addresses back on the texture's grid.
pub fn texel_at(t: &TextureDesc, offset: u64) -> Option<[u64; 3]> {
    if offset >= footprint_bytes(t) {
        return None;
    }
    let b = t.texel_bytes.max(1) as u64;
    let texel = match t.kind {
        Kind::Linear => [offset / b, 0, 0],
        Kind::Pitch2d => {
            let pitch = t.pitch.max(1);
            [(offset % pitch) / b, offset / pitch, 0]
        }
        Kind::Array => {
            let (bh, bd) = block_gobs(t);
            let gobs_x = (t.size[0] * b).div_ceil(64);
            let blocks_y = t.size[1].div_ceil(8).div_ceil(bh);
            let block_bytes = 512 * bh * bd;
            let (block, in_block) = (offset / block_bytes, offset % block_bytes);
            let (gob, in_gob) = (in_block / 512, in_block % 512);
            let gx = block % gobs_x;
            let gy = (block / gobs_x) % blocks_y * bh + gob % bh;
            let z = block / gobs_x / blocks_y * bd + gob / bh;
            let xb = gx * 64 + (in_gob / 256) * 32 + (in_gob % 64 / 32) * 16 + in_gob % 16;
            let y = gy * 8 + (in_gob % 256 / 64) * 2 + (in_gob % 32) / 16;
            [xb / b, y, z]
        }
    };
    (texel[0] < t.size[0] && texel[1] < t.size[1] && texel[2] < t.size[2]).then_some(texel)
}

/// Texels across and rows down one 32-byte sector covers on the texture's grid: 16 bytes ×
/// 2 rows in a CUDA array (block-linear, see [`texel_offset`]), 32 bytes × 1 row in linear
/// and pitch-linear memory (rows start 32-byte aligned: the pitch is a multiple of 32).
/// A 16-byte texel in an array is 1 × 2.
pub fn sector_texels(t: &TextureDesc) -> (u64, u64) {
    let b = t.texel_bytes.max(1) as u64;
    match t.kind {
        Kind::Array if t.size[1] > 1 => ((16 / b).max(1), 2),
        Kind::Array => ((16 / b).max(1), 1),
        _ => ((SECTOR_BYTES / b).max(1), 1),
    }
}

/// Bytes the texture occupies from its first byte (for its allocation's size).
pub fn footprint_bytes(t: &TextureDesc) -> u64 {
    let last = [t.size[0] - 1, t.size[1] - 1, t.size[2] - 1];
    match t.kind {
        Kind::Array => {
            let (bh, bd) = block_gobs(t);
            let gobs_x = (t.size[0] * t.texel_bytes as u64).div_ceil(64);
            let blocks_y = t.size[1].div_ceil(8).div_ceil(bh);
            let blocks_z = t.size[2].div_ceil(bd);
            gobs_x * blocks_y * blocks_z * 512 * bh * bd
        }
        _ => texel_offset(t, last) + t.texel_bytes as u64,
    }
}

/// Lanes whose fetches form one request (measured on H100): 4 (a quad) for `tex`/`tld4` on
/// arrays and pitch-linear memory; 8 for `tex1Dfetch` on linear memory and for surfaces,
/// 4 when the texel is wider than 8 bytes (measured for 4- and 16-byte texels; 1-, 2- and
/// 8-byte texels are assumed to follow the 4-byte rule).
pub fn lanes_per_request(t: &TextureDesc, surface: bool) -> u32 {
    if surface || t.kind == Kind::Linear {
        if t.texel_bytes > 8 {
            4
        } else {
            8
        }
    } else {
        4
    }
}

/// Texel slots one lane takes in a request: its full footprint, 2^axes for linear filtering
/// and `tld4` (2, 4 or 8), 1 for nearest-point, `tex1Dfetch` and surfaces, whatever texels
/// the lane's coordinates end up reading.
pub fn slots_per_lane(t: &TextureDesc, axes: usize, sampling: Sampling) -> usize {
    if t.kind != Kind::Linear && (sampling == Sampling::Gather || t.filter == Filter::Linear) {
        1 << axes.clamp(1, 3)
    } else {
        1
    }
}

/// One warp's texture fetch or surface access split into its requests (see
/// [`lanes_per_request`]): one [`WarpAccess`] per group of lanes with at least one texel to
/// read. Lane `l` of the group owns slots `(l % lanes_per_request) · slots_per_lane ..` (at
/// most 4 lanes × 8 slots or 8 lanes × 1); its texels fill them in order and slots it does
/// not need stay inactive. `width` = texel bytes; addresses `base` + [`texel_offset`]. The
/// first request has `read_only` false, the others true (further requests of one
/// execution). `lanes` holds (lane, texels) of the executing lanes, in lane order.
pub fn warp_requests(
    t: &TextureDesc,
    base: u64,
    lanes: &[(usize, Footprint)],
    slots_per_lane: usize,
    surface: bool,
    op: crate::access::Op,
) -> Vec<WarpAccess> {
    let per = lanes_per_request(t, surface) as usize;
    let slots = slots_per_lane.clamp(1, crate::access::WARP_SIZE / per);
    let space = if surface {
        crate::access::Space::Surface
    } else {
        crate::access::Space::Texture
    };
    let mut out: Vec<WarpAccess> = Vec::new();
    let mut current: Option<(usize, WarpAccess)> = None;
    for &(lane, f) in lanes {
        if f.len == 0 {
            continue;
        }
        let group = lane / per;
        if current.as_ref().is_some_and(|(g, _)| *g != group) {
            if let Some((_, a)) = current.take() {
                out.push(a);
            }
        }
        let (_, a) = current.get_or_insert((
            group,
            WarpAccess {
                space,
                op,
                width: t.texel_bytes,
                mask: 0,
                addrs: [0; crate::access::WARP_SIZE],
                read_only: !out.is_empty(),
                lanes: LaneForm::Unknown,
            },
        ));
        for (k, texel) in f.iter().take(slots).enumerate() {
            let slot = (lane % per) * slots + k;
            a.addrs[slot] = base + texel_offset(t, texel);
            a.mask |= 1 << slot;
        }
    }
    if let Some((_, a)) = current {
        out.push(a);
    }
    out
}

/// Costs one texture or surface request (one [`WarpAccess`] of [`crate::Space::Texture`] or
/// [`crate::Space::Surface`], laid out by [`warp_requests`]): one request; its texel slots are
/// looked up in passes of 16 (slots 0–15, then 16–31: a bilinear quad in one pass, a
/// trilinear quad as two lane pairs), each pass fetching one 32-byte sector per distinct
/// sector its texels touch (transactions = sectors). Measured on H100 (9.0): a trilinear
/// quad's sectors are those of its two lane pairs summed (`a3d_f32_linear_*` probes); applied
/// to every capability (see the module's notes for 1.x–3.x).
pub fn cost(a: &WarpAccess) -> Cost {
    let mut n = 0u64;
    for pass in [0x0000_FFFFu32, 0xFFFF_0000] {
        let mut seen = [0u64; 32];
        let mut k = 0usize;
        for l in 0..crate::access::WARP_SIZE {
            if a.mask & pass & (1 << l) == 0 {
                continue;
            }
            let addr = a.addrs[l];
            let first = addr / SECTOR_BYTES;
            let last = (addr + a.width.max(1) as u64 - 1) / SECTOR_BYTES;
            for s in first..=last {
                if k < seen.len() && !seen[..k].contains(&s) {
                    seen[k] = s;
                    k += 1;
                }
            }
        }
        n += k as u64;
    }
    Cost {
        requests: 1,
        transactions: n,
        transaction_bytes: n * SECTOR_BYTES,
        sectors: n,
        ..Cost::default()
    }
}

#[cfg(test)]
mod tests;
