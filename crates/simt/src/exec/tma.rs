//! TMA tensor copies (`cp.async.bulk.tensor`, tile mode) [PTX ISA §9.7.9.25.5.1, §5.5
//! "Tensor"; the fields of the driver's `cuTensorMapEncodeTiled`]: a box of a tensor in global
//! memory copied to or from a dense (optionally swizzled) box in shared memory by one thread.
//! The im2col mode of a load (`.im2col`, maps of `cuTensorMapEncodeIm2col`) copies a column
//! of pixels instead, one shared row of channels each ([`im2col_rows`]); its rows are
//! reported and copied as a box's.
//!
//! The global side is reported as warp-wide accesses of 16-byte lanes over the box's rows
//! (512 bytes an access), so its sectors are the 32-byte sectors the box touches, as the
//! H100's TMA counters count them (`l1tex__m_xbar2l1tex_read_sectors_mem_global_op_tma_ld`,
//! `…_write_sectors_mem_global_op_tma_st`). A tile-mode load (and an L2 prefetch,
//! `cp.async.bulk.prefetch.tensor` [PTX ISA §9.7.9.25.5.3], whose sectors L2 counts the
//! same) reads every row of the box: the part inside the tensor by the sectors it covers,
//! row by row, and each part outside it (before, after, or a whole row past an outer
//! dimension) as `ceil(bytes / 32)` sectors of its own, from no address (measured on H100
//! for 16 boxes: rows misaligned by 16 bytes read 5 sectors, a row 112 of whose 128 bytes
//! are inside reads 4 + 1, a row outside 4; `tests/data/h100/prefetch/`). A store writes
//! only the elements inside (the shared box of a load gets zero, or NaN with `oob=nan`, for
//! the elements outside). Its requests are those 512-byte pieces: the TMA unit has no LSU
//! requests (ncu counts one TMA instruction per copy). The shared side is reported the same
//! way at the swizzled addresses the box lands on.

use warpscope_model::{Op, WARP_SIZE};

use super::*;

/// The first kernel parameter's address as `mov.b64 %rd, PARAM` gives it for a parameter
/// passed by value that spans several registers (a `__grid_constant__ CUtensorMap`); the
/// next parameter's is [`PARAM_ADDRESS_SPACING`] higher.
pub const PARAM_ADDRESS_BASE: u64 = 0x7E7D_0000_0000_0000;
/// Spacing of parameters' addresses.
pub const PARAM_ADDRESS_SPACING: u64 = 1 << 12;

/// The shared-memory swizzle of a tensor map (`CU_TENSOR_MAP_SWIZZLE_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Swizzle {
    None,
    B32,
    B64,
    B128,
}

impl Swizzle {
    /// The byte offset a dense box offset lands on: 16-byte chunk bits 4.. XORed with the
    /// 128-byte row bits 7.. (1, 2 or 3 bits for 32, 64, 128 bytes), as CUTLASS's
    /// `Swizzle<B,4,3>` and the PTX ISA's swizzle modes define it.
    pub fn apply(self, off: u64) -> u64 {
        let mask = match self {
            Swizzle::None => return off,
            Swizzle::B32 => 1,
            Swizzle::B64 => 3,
            Swizzle::B128 => 7,
        };
        off ^ (((off >> 7) & mask) << 4)
    }

    /// Bytes of the inner box dimension the mode allows (none: any).
    fn span(self) -> Option<u64> {
        match self {
            Swizzle::None => None,
            Swizzle::B32 => Some(32),
            Swizzle::B64 => Some(64),
            Swizzle::B128 => Some(128),
        }
    }
}

/// A tiled tensor map: what `cuTensorMapEncodeTiled` takes. Dimensions are innermost first;
/// `strides` are the byte strides of dimensions 1.. (dimension 0 is packed).
#[derive(Clone, Debug, PartialEq)]
pub struct TensorMap {
    /// Bytes of one element (1, 2, 4 or 8).
    pub elem_bytes: u32,
    /// The element type as `DTYPE` names it (`u8`, `f16`, `bf16`, `tf32`, `e4m3`, …): a
    /// tensor reduction's arithmetic (`cp.reduce.async.bulk.tensor`).
    pub dtype: String,
    /// Elements in each dimension (1 to 5 dimensions, each 1 ..= 2^32).
    pub dims: Vec<u64>,
    /// Byte stride of dimensions 1.. (multiples of 16).
    pub strides: Vec<u64>,
    /// Elements of the box in each dimension (1 ..= 256; the inner one's bytes a multiple
    /// of 16).
    pub box_dims: Vec<u32>,
    /// Traversal stride of each dimension in elements (1 ..= 8); 1 is every element.
    pub elem_strides: Vec<u32>,
    pub swizzle: Swizzle,
    /// Out-of-bounds elements of a load read as NaN (`CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA`), else zero.
    pub oob_nan: bool,
    /// An im2col map (`cuTensorMapEncodeIm2col`) instead of a tiled one: then `box_dims` is
    /// `[channelsPerPixel, 1, …]` and the copy is a column of pixels.
    pub im2col: Option<Im2col>,
}

/// The im2col fields of a tensor map (`cuTensorMapEncodeIm2col`) [PTX ISA §5.5.4 "im2col
/// mode"]: dimension 0 is the channel, the last one the image (N), those between the
/// spatial ones (W, H, D, innermost first).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Im2col {
    /// `pixelBoxLowerCorner`, one per spatial dimension (innermost first): the bounding
    /// box's first pixel in the tensor's coordinates.
    pub lower: Vec<i32>,
    /// `pixelBoxUpperCorner`, one per spatial dimension: the bounding box's last pixel,
    /// relative to the dimension's last (`dim - 1 + upper`).
    pub upper: Vec<i32>,
    /// `channelsPerPixel`: the channels copied of each pixel (a shared row), 1 ..= 256.
    pub channels: u32,
    /// `pixelsPerColumn`: the pixels copied (shared rows), 1 ..= 1024.
    pub pixels: u32,
}

impl TensorMap {
    /// Parses `DTYPE:DIMS:STRIDES:BOX[:KEY=VALUE,…]` (`f16:4096x4096:8192:64x64:swizzle=128`):
    /// DIMS and BOX as `AxBx…` innermost first, STRIDES the byte strides of dimensions 1..
    /// (`-` for a packed tensor), keys `swizzle` (none, 32, 64, 128), `oob` (zero, nan),
    /// `elem_strides` (`1x1`), `interleave` (none only).
    ///
    /// An im2col map (`cuTensorMapEncodeIm2col`) has the word `im2col` for BOX and the keys
    /// `channels` (channelsPerPixel), `pixels` (pixelsPerColumn), `lower` and `upper`
    /// (pixelBoxLowerCorner/UpperCorner, one per spatial dimension, innermost first, e.g.
    /// `-1x-1`; default 0): `f16:64x8x8x2:-:im2col:channels=64,pixels=128,lower=-1x-1,upper=-1x-1`
    /// for an NHWC tensor of 64 channels, W = H = 8 and N = 2 (DIMS C×W×H×N). It has 3 to 5
    /// dimensions; channels × element bytes a multiple of 16 (at most 256 channels), at
    /// most 1,024 pixels, corners within ±2^15 (3-D), ±2^7 (4-D) or ±2^4 (5-D), element
    /// strides 1.
    ///
    /// Errors: a malformed field, or a map the hardware refuses (more than 5 dimensions, a
    /// box dimension over 256, an inner box not a multiple of 16 bytes or wider than the
    /// swizzle span, a stride not a multiple of 16 or smaller than the dimension below it).
    pub fn parse(spec: &str) -> std::result::Result<TensorMap, String> {
        let parts: Vec<&str> = spec.split(':').collect();
        if parts.len() < 4 {
            return Err("expected DTYPE:DIMS:STRIDES:BOX[:swizzle=…,oob=…,elem_strides=…] (e.g. f16:4096x4096:8192:64x64:swizzle=128)".into());
        }
        let elem_bytes = match parts[0] {
            "u8" | "s8" | "e4m3" | "e5m2" => 1,
            "u16" | "s16" | "f16" | "bf16" => 2,
            "u32" | "s32" | "f32" | "tf32" => 4,
            "u64" | "s64" | "f64" => 8,
            t => return Err(format!("unknown element type '{t}': u8, s8, u16, s16, f16, bf16, u32, s32, f32, tf32, u64, s64, f64, e4m3, e5m2")),
        };
        let list = |s: &str, what: &str| -> std::result::Result<Vec<u64>, String> {
            s.split('x')
                .map(|x| {
                    x.trim()
                        .parse::<u64>()
                        .map_err(|_| format!("{what} '{s}': expected numbers joined by 'x'"))
                })
                .collect()
        };
        let dims = list(parts[1], "dims")?;
        let strides = if parts[2] == "-" || parts[2].is_empty() {
            Vec::new()
        } else {
            list(parts[2], "strides")?
        };
        let is_im2col = parts[3] == "im2col";
        let box_dims: Vec<u32> = if is_im2col {
            vec![1; dims.len()]
        } else {
            list(parts[3], "box")?
                .into_iter()
                .map(|b| u32::try_from(b).unwrap_or(u32::MAX))
                .collect()
        };
        let corners = |s: &str, what: &str| -> std::result::Result<Vec<i32>, String> {
            s.split('x')
                .map(|x| {
                    x.trim().parse::<i32>().map_err(|_| {
                        format!("{what} '{s}': expected signed numbers joined by 'x' (-1x-1)")
                    })
                })
                .collect()
        };
        let spatial = dims.len().saturating_sub(2);
        let mut map = TensorMap {
            elem_bytes,
            dtype: parts[0].to_string(),
            elem_strides: vec![1; dims.len()],
            strides,
            box_dims,
            dims,
            swizzle: Swizzle::None,
            oob_nan: false,
            im2col: is_im2col.then(|| Im2col {
                lower: vec![0; spatial],
                upper: vec![0; spatial],
                channels: 0,
                pixels: 0,
            }),
        };
        for kv in parts[4..].iter().flat_map(|p| p.split(',')) {
            let (k, v) = kv
                .split_once('=')
                .ok_or_else(|| format!("option '{kv}': expected KEY=VALUE"))?;
            match k {
                "swizzle" => {
                    map.swizzle = match v {
                        "none" | "0" => Swizzle::None,
                        "32" | "32B" => Swizzle::B32,
                        "64" | "64B" => Swizzle::B64,
                        "128" | "128B" => Swizzle::B128,
                        _ => return Err(format!("swizzle={v}: none, 32, 64 or 128")),
                    }
                }
                "oob" => map.oob_nan = v == "nan",
                "elem_strides" => {
                    map.elem_strides = list(v, "elem_strides")?
                        .into_iter()
                        .map(|s| u32::try_from(s).unwrap_or(u32::MAX))
                        .collect()
                }
                "channels" | "pixels" | "lower" | "upper" => {
                    let Some(i) = map.im2col.as_mut() else {
                        return Err(format!(
                            "option '{k}' belongs to an im2col map (BOX field 'im2col')"
                        ));
                    };
                    match k {
                        "channels" => {
                            i.channels = v.parse().map_err(|_| format!("channels={v}: a number"))?
                        }
                        "pixels" => {
                            i.pixels = v.parse().map_err(|_| format!("pixels={v}: a number"))?
                        }
                        "lower" => i.lower = corners(v, "lower")?,
                        _ => i.upper = corners(v, "upper")?,
                    }
                }
                "interleave" if v == "none" => {}
                "interleave" => {
                    return Err(
                        "interleaved tensor maps are not supported yet (interleave=none)".into(),
                    )
                }
                _ => {
                    return Err(format!(
                        "unknown option '{k}': swizzle, oob, elem_strides, interleave (an im2col map also channels, pixels, lower, upper)"
                    ))
                }
            }
        }
        if map.strides.is_empty() {
            let mut s = map.dims[0] * elem_bytes as u64;
            for d in map.dims.iter().skip(1) {
                map.strides.push(s);
                s = s.saturating_mul(*d);
            }
        }
        if let Some(i) = &map.im2col {
            map.box_dims[0] = i.channels;
        }
        map.check()?;
        Ok(map)
    }

    /// The limits `cuTensorMapEncodeIm2col` adds to the tiled map's.
    fn check_im2col(&self, i: &Im2col) -> std::result::Result<(), String> {
        let rank = self.dims.len();
        if !(3..=5).contains(&rank) {
            return Err(format!(
                "an im2col tensor map has 3 to 5 dimensions (C, spatial, N), not {rank}"
            ));
        }
        if i.lower.len() != rank - 2 || i.upper.len() != rank - 2 {
            return Err(format!(
                "{rank} dimensions have {} spatial ones: lower and upper need {} corners each",
                rank - 2,
                rank - 2
            ));
        }
        if i.channels == 0 || i.channels > 256 {
            return Err(format!(
                "channels={}: channelsPerPixel is 1 to 256 (give channels=…)",
                i.channels
            ));
        }
        let bytes = i.channels as u64 * self.elem_bytes as u64;
        if bytes % 16 != 0 {
            return Err(format!(
                "channels={} of {}-byte elements is {bytes} bytes: channelsPerPixel's bytes must be a multiple of 16",
                i.channels, self.elem_bytes
            ));
        }
        if i.pixels == 0 || i.pixels > 1024 {
            return Err(format!(
                "pixels={}: pixelsPerColumn is 1 to 1024 (give pixels=…)",
                i.pixels
            ));
        }
        let range = match rank {
            3 => 1 << 15,
            4 => 1 << 7,
            _ => 1 << 4,
        };
        if let Some(c) = i
            .lower
            .iter()
            .chain(&i.upper)
            .find(|&&c| c < -range || c >= range)
        {
            return Err(format!(
                "corner {c}: a {rank}-d im2col map's corners lie in [-{range}, {}]",
                range - 1
            ));
        }
        if self.elem_strides.iter().any(|&e| e != 1) {
            return Err("im2col maps with element strides other than 1 are not supported".into());
        }
        Ok(())
    }

    /// The hardware's limits on a tiled map [`cuTensorMapEncodeTiled`'s requirements].
    pub(crate) fn check(&self) -> std::result::Result<(), String> {
        let rank = self.dims.len();
        if !(1..=5).contains(&rank) {
            return Err(format!("{rank} dimensions: a tensor map has 1 to 5"));
        }
        if self.box_dims.len() != rank
            || self.strides.len() != rank - 1
            || self.elem_strides.len() != rank
        {
            return Err(format!(
                "{rank} dimensions need {rank} box sizes, {} strides and {rank} element strides ({} box sizes, {} strides, {} element strides given)",
                rank - 1,
                self.box_dims.len(),
                self.strides.len(),
                self.elem_strides.len()
            ));
        }
        if let Some(d) = self.dims.iter().find(|&&d| d == 0 || d > 1 << 32) {
            return Err(format!("dimension of {d} elements: 1 to 2^32"));
        }
        if let Some(i) = &self.im2col {
            self.check_im2col(i)?;
        }
        if let Some(b) = self.box_dims.iter().find(|&&b| b == 0 || b > 256) {
            return Err(format!(
                "box dimension of {b} elements: the hardware allows 1 to 256"
            ));
        }
        if let Some(e) = self.elem_strides.iter().find(|&&e| e == 0 || e > 8) {
            return Err(format!("element stride {e}: 1 to 8"));
        }
        let inner = self.box_dims[0] as u64 * self.elem_bytes as u64;
        if inner % 16 != 0 {
            return Err(format!(
                "the box's inner dimension is {inner} bytes: it must be a multiple of 16"
            ));
        }
        if let Some(span) = self.swizzle.span() {
            if inner > span {
                return Err(format!("the box's inner dimension is {inner} bytes, wider than the {span}-byte swizzle"));
            }
        }
        let mut below = self.dims[0] * self.elem_bytes as u64;
        for (i, &s) in self.strides.iter().enumerate() {
            if s % 16 != 0 || s >= 1 << 40 {
                return Err(format!(
                    "stride of dimension {}: {s} bytes is not a multiple of 16 below 2^40",
                    i + 1
                ));
            }
            if s < below {
                return Err(format!(
                    "stride of dimension {} ({s} bytes) is smaller than dimension {i} spans ({below} bytes): the map does not fit its tensor",
                    i + 1
                ));
            }
            below = s.saturating_mul(self.dims[i + 1]);
        }
        Ok(())
    }

    /// Bytes from the tensor's start to one past its last element.
    pub fn extent(&self) -> u64 {
        let last = self.dims.len() - 1;
        self.strides
            .get(last.wrapping_sub(1))
            .map_or(self.dims[0] * self.elem_bytes as u64, |&s| {
                s.saturating_mul(self.dims[last])
            })
    }

    /// Bytes a load may read from the tensor's start: its extent and one box row past it (a
    /// box row that reaches inside the tensor is read whole, measured on H100).
    pub fn reach(&self) -> u64 {
        self.extent()
            .saturating_add(self.box_dims[0] as u64 * self.elem_bytes as u64)
    }

    /// Bytes of the box in shared memory (an im2col map's: pixels × channels).
    pub fn box_bytes(&self) -> u64 {
        if let Some(i) = &self.im2col {
            return i.pixels as u64 * i.channels as u64 * self.elem_bytes as u64;
        }
        self.box_dims
            .iter()
            .zip(&self.elem_strides)
            .map(|(&b, &e)| (b as u64).div_ceil(e as u64))
            .product::<u64>()
            * self.elem_bytes as u64
    }
}

/// A tensor map the launch binds to a kernel parameter (by its index).
#[derive(Clone, Debug)]
pub struct TensorMapBinding {
    pub param: usize,
    pub map: TensorMap,
    /// The global address of the tensor's first element (an allocation of the launch).
    pub base: u64,
}

/// One row of a box: its global byte address (None past the tensor's end in an outer
/// dimension), the in-bounds elements from its start, and its offset in the dense box.
struct Row {
    global: u64,
    /// The first element of the row inside the tensor, and how many are (0: none; a row
    /// whose outer coordinates lie outside has none).
    lo: u64,
    in_bounds: u64,
    box_off: u64,
}

impl BlockCtx<'_> {
    /// Runs one lane's `cp.async.bulk.tensor` (tile mode).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn tensor_copy(
        &mut self,
        warp: &mut Warp,
        pc: u32,
        lane: usize,
        t: &crate::instr::TensorCopy,
        global: &mut Global,
        sink: &mut dyn FnMut(u32, &WarpAccess, WarpOrigin),
    ) -> Result<()> {
        let fault = |ctx: &Self, warp: &Warp, msg: String| Error::Fault {
            at: ctx.at(pc),
            msg,
            thread: ctx.thread(warp, lane),
            block: ctx.block,
        };
        let handle = get(warp, t.map, lane);
        let param = handle
            .checked_sub(PARAM_ADDRESS_BASE)
            .map(|d| d / PARAM_ADDRESS_SPACING)
            .unwrap_or(u64::MAX);
        // A `CUtensorMap` parameter (`--tensor-map`), or a map the kernel built in memory
        // (`tensormap.replace`, exec/tensormap.rs) that `handle` points to.
        let from_memory;
        let b = match self
            .launch
            .tensor_maps
            .iter()
            .find(|b| b.param as u64 == param)
        {
            Some(b) => b,
            None if param < self.prog.params.len() as u64 => {
                let name = &self.prog.params[param as usize].name;
                return Err(fault(self, warp, format!(
                    "cp.async.bulk.tensor with tensor map parameter '{name}', which no --tensor-map describes: give --tensor-map NAME=DTYPE:DIMS:STRIDES:BOX[:swizzle=…]"
                )));
            }
            None => {
                let (map, base) = self.memory_tensor_map(warp, pc, lane, handle, global)?;
                from_memory = TensorMapBinding {
                    param: usize::MAX,
                    map,
                    base,
                };
                &from_memory
            }
        };
        let map = &b.map;
        let map_name = self.prog.params.get(b.param).map_or_else(
            || format!("at {handle:#x} (built by tensormap.replace)"),
            |p| format!("'{}'", p.name),
        );
        match (&map.im2col, &t.im2col) {
            (Some(_), None) => {
                return Err(fault(self, warp, format!(
                    "a tile-mode cp.async.bulk.tensor through the im2col tensor map {map_name}: use .im2col with {{im2colOffsets}}, or a tiled map"
                )))
            }
            (None, Some(_)) => {
                return Err(fault(self, warp, format!(
                    "a .im2col cp.async.bulk.tensor through the tiled tensor map {map_name}: give it the im2col fields (BOX 'im2col' with channels=…,pixels=…,lower=…,upper=…)"
                )))
            }
            _ => {}
        }
        if t.coords.len() != map.dims.len() {
            return Err(fault(
                self,
                warp,
                format!(
                    "a {}-d tensor copy through a {}-d tensor map",
                    t.coords.len(),
                    map.dims.len()
                ),
            ));
        }
        let coords: Vec<i64> = t
            .coords
            .iter()
            .map(|&c| crate::alu::sext(get(warp, c, lane), 32))
            .collect();
        let at = |a: &Addr| {
            a.base
                .map_or(0, |r| warp.regs[r as usize * WARP_SIZE + lane])
                .wrapping_add(a.offset as u64)
        };
        let smem = at(&t.smem) & 0xFFFF_FFFF;
        // The blocks the box lands in (a load): every block of a multicast's ctaMask, at the
        // same offset, or the block the shared::cluster address names.
        let dests: Vec<u64> = match &t.multicast {
            Some(m) => self
                .cta_ranks(warp, pc, lane, get(warp, *m, lane))?
                .into_iter()
                .map(|r| super::bulk::at_rank(smem, r))
                .collect(),
            None => vec![smem],
        };
        let reduce_ty = match t.reduce {
            None => None,
            Some(op) => {
                if !crate::decode_inst::bulk::tensor_reduction_allowed(op, &map.dtype) {
                    return Err(fault(self, warp, format!(
                        "cp.reduce.async.bulk.tensor .{} on a tensor map of {}: the PTX ISA defines .add for u32, s32, u64, f32, f16, bf16; .min/.max for u32, s32, s64, f16, bf16; .inc/.dec for u32; .and/.or/.xor for the integer types [PTX ISA §9.7.9.25.5.2]",
                        format!("{op:?}").to_lowercase(),
                        map.dtype
                    )));
                }
                Ty::parse(&map.dtype)
            }
        };
        let align = if map.swizzle == Swizzle::None {
            128
        } else {
            1024
        };
        if !t.prefetch && smem % align != 0 {
            return Err(fault(
                self,
                warp,
                format!(
                "the shared box at {smem:#x} is not {align}-byte aligned, as a tensor copy{} needs",
                if align == 1024 { " with a swizzle" } else { "" }
            ),
            ));
        }
        if !t.prefetch && self.own_offset(smem) + map.box_bytes() > self.shared.len() as u64 {
            return Err(fault(self, warp, format!(
                "the {}-byte box at shared offset {smem} runs past the block's {} bytes of shared memory",
                map.box_bytes(),
                self.shared.len()
            )));
        }
        let eb = map.elem_bytes as u64;
        let rank = map.dims.len();
        if let (Some(i), Some(offs)) = (&map.im2col, &t.im2col) {
            let offs: Vec<i64> = offs
                .iter()
                .map(|&o| crate::alu::sext(get(warp, o, lane), 16))
                .collect();
            let rows = im2col_rows(map, i, b.base, &coords, &offs);
            return self.tensor_copy_rows(
                warp,
                pc,
                lane,
                t,
                global,
                sink,
                (map, smem, &dests, reduce_ty),
                rows,
                i.channels as u64,
            );
        }
        // The box's rows: every combination of its outer coordinates, innermost first.
        let inner_elems = (map.box_dims[0] as u64).div_ceil(map.elem_strides[0] as u64);
        let row_bytes = inner_elems * eb;
        let outer: Vec<u64> = (1..rank)
            .map(|d| (map.box_dims[d] as u64).div_ceil(map.elem_strides[d] as u64))
            .collect();
        let nrows: u64 = outer.iter().product();
        let mut rows = Vec::with_capacity(nrows as usize);
        for r in 0..nrows {
            let (mut rest, mut off, mut inside) = (r, 0u64, true);
            for d in 1..rank {
                let k = rest % outer[d - 1];
                rest /= outer[d - 1];
                let c = coords[d] + (k * map.elem_strides[d] as u64) as i64;
                inside &= c >= 0 && (c as u64) < map.dims[d];
                off = off.wrapping_add((c as u64).wrapping_mul(map.strides[d - 1]));
            }
            let c0 = coords[0];
            let inside_at = |e: u64| {
                let c = c0 + (e * map.elem_strides[0] as u64) as i64;
                inside && c >= 0 && (c as u64) < map.dims[0]
            };
            let lo = (0..inner_elems)
                .find(|&e| inside_at(e))
                .unwrap_or(inner_elems);
            let in_bounds = (lo..inner_elems).take_while(|&e| inside_at(e)).count() as u64;
            rows.push(Row {
                global: b
                    .base
                    .wrapping_add(off)
                    .wrapping_add((c0 as u64).wrapping_mul(eb)),
                lo,
                in_bounds,
                box_off: r * row_bytes,
            });
        }
        self.tensor_copy_rows(
            warp,
            pc,
            lane,
            t,
            global,
            sink,
            (map, smem, &dests, reduce_ty),
            rows,
            inner_elems,
        )
    }

    /// The copy of a tensor copy's rows (a tile box's or an im2col column's), each
    /// `inner_elems` elements: its global and shared accesses, the data, the mbarrier.
    #[allow(clippy::too_many_arguments)]
    fn tensor_copy_rows(
        &mut self,
        warp: &mut Warp,
        pc: u32,
        lane: usize,
        t: &crate::instr::TensorCopy,
        global: &mut Global,
        sink: &mut dyn FnMut(u32, &WarpAccess, WarpOrigin),
        (map, smem, dests, reduce_ty): (&TensorMap, u64, &[u64], Option<Ty>),
        rows: Vec<Row>,
        inner_elems: u64,
    ) -> Result<()> {
        let eb = map.elem_bytes as u64;
        let row_bytes = inner_elems * eb;
        let at = |a: &Addr| {
            a.base
                .map_or(0, |r| warp.regs[r as usize * WARP_SIZE + lane])
                .wrapping_add(a.offset as u64)
        };
        // 16-byte chunks of each row. A store writes only the chunks that hold elements
        // inside the tensor (measured on H100: a 128-byte box row with 88 bytes inside the
        // tensor writes 3 sectors; tests/data/h100/tma/). A tile-mode load or prefetch reads
        // every row of the box, as the H100 counts it (tests/data/h100/prefetch/, 16 boxes
        // with rows misaligned, straddling lines, or partly or wholly outside the tensor):
        // the chunks that hold elements inside the tensor from memory, their sectors counted
        // row by row (two rows sharing a sector count it twice), and each run of chunks
        // outside it (before, after, or the whole row) as `ceil(bytes / 32)` sectors of its
        // own, read from no address (a TMA fill window, warpscope_model::TMA_FILL_BASE). An
        // im2col load reads the whole of every row that reaches into the tensor and nothing
        // of the others (measured: tests/data/h100/im2col/).
        let tile_rule = t.load && t.im2col.is_none() && map.elem_strides[0] == 1;
        let mut fill_at = warpscope_model::TMA_FILL_BASE;
        let mut chunks: Vec<Chunk> = Vec::new();
        for (ri, row) in rows.iter().enumerate() {
            let (c_lo, c_hi) = if row.in_bounds == 0 {
                (0, 0)
            } else {
                (
                    row.lo * eb / 16,
                    ((row.lo + row.in_bounds) * eb).div_ceil(16),
                )
            };
            let mut in_run = false;
            for c in 0..row_bytes / 16 {
                let data = map.elem_strides[0] == 1 && c >= c_lo && c < c_hi;
                let global = if tile_rule && !data {
                    if !in_run {
                        fill_at = fill_at.next_multiple_of(32);
                        in_run = true;
                    }
                    fill_at += 16;
                    fill_at - 16
                } else {
                    in_run = false;
                    row.global.wrapping_add(c * 16)
                };
                chunks.push(Chunk {
                    global,
                    shared: map.swizzle.apply(row.box_off + c * 16),
                    inside: match (tile_rule, t.load) {
                        (true, _) => true,
                        (false, true) => row.in_bounds > 0,
                        (false, false) => data,
                    },
                    data: data || (row.in_bounds > 0 && map.elem_strides[0] != 1),
                    row: ri as u32,
                });
            }
        }
        let g_op = match (t.load, t.reduce) {
            _ if t.prefetch => Op::Prefetch,
            (true, _) => Op::Load,
            (false, None) => Op::Store,
            (false, Some(_)) => Op::Atomic,
        };
        let s_op = if t.load { Op::Store } else { Op::Load };
        let inside: Vec<Chunk> = chunks.iter().copied().filter(|c| c.inside).collect();
        // The global side's accesses: 32 chunks (512 bytes) each, a new one begun where a
        // chunk's sector is already another row's in it (a tile-mode load).
        let mut groups: Vec<&[Chunk]> = Vec::new();
        let mut first = 0;
        let mut seen = GroupSectors::default();
        for (i, c) in inside.iter().enumerate() {
            let sector = c.global / 32;
            let clash = tile_rule && seen.other_row_has(sector, c.row);
            if i - first == WARP_SIZE || clash {
                groups.push(&inside[first..i]);
                first = i;
                seen = GroupSectors::default();
            }
            seen.push(sector, c.row);
        }
        if first < inside.len() {
            groups.push(&inside[first..]);
        }
        let shared_groups: Vec<&[Chunk]> = if t.load {
            chunks.chunks(WARP_SIZE).collect()
        } else {
            inside.chunks(WARP_SIZE).collect()
        };
        // The global side, once (a multicast's once per destination block, as its bulk
        // copy's: exec/bulk.rs). The shared side: the whole box on a load (out-of-bounds
        // elements are filled), in every destination block (a multicast's as `Space::Shared`
        // rows); the written part on a store; none for a prefetch.
        let bases: Vec<u64> = if t.load { dests.to_vec() } else { vec![smem] };
        let mut sides = Vec::new();
        for &b in &bases {
            if sides.is_empty() || t.multicast.is_some() {
                sides.push((&groups, t.global_site, MemSpace::Global, g_op, None));
            }
            if !t.prefetch {
                sides.push((
                    &shared_groups,
                    t.shared_site,
                    MemSpace::Shared,
                    s_op,
                    Some(b),
                ));
            }
        }
        let mc = t.multicast.is_some();
        let mut sink =
            |s: u32, a: &WarpAccess, o: WarpOrigin| super::bulk::multicast_row(mc, s, a, o, sink);
        for (list, site, space, op, base) in sides {
            for group in list.iter() {
                let mut a = [0u64; WARP_SIZE];
                for (l, c) in group.iter().enumerate() {
                    a[l] = base.map_or(c.global, |b| b + c.shared);
                }
                let mask = lane_mask(group.len());
                let access = WarpAccess {
                    space: warpscope_model::Space::Global,
                    op,
                    width: 16,
                    mask,
                    addrs: a,
                    read_only: false,
                    lanes: warpscope_model::LaneForm::of(mask, &a),
                };
                if base.is_none() && t.load && !self.access_ok(&access) {
                    // The reads of a load or prefetch that are not the tensor's elements
                    // (fill chunks; the rest of a box row past the tensor's last element,
                    // which may lie past the end of its allocation) are counted unchecked;
                    // the chunks that hold elements are checked.
                    for (l, c) in group.iter().enumerate() {
                        if c.data {
                            let g = warpscope_model::Space::Global;
                            self.check(warp, pc, g, c.global, c.global, 16, l, op)?;
                        }
                    }
                    let origin = WarpOrigin {
                        block: self.block,
                        warp: warp.index,
                    };
                    sink(site, &access, origin);
                    continue;
                }
                self.emit(warp, pc, site, space, op, 16, mask, &a, &mut sink, None)?;
            }
        }
        // The data, element by element for the in-bounds part; none when no loaded value can
        // matter (no memory image: the accesses above are all that counts).
        let data = self.prog.needs_memory && !t.prefetch;
        let fill = if map.oob_nan {
            match eb {
                2 => 0x7FFF,
                4 => 0x7FFF_FFFF,
                _ => u64::MAX >> 1,
            }
        } else {
            0
        };
        for row in if data { &rows[..] } else { &[] } {
            for e in 0..inner_elems {
                let g = row.global.wrapping_add(e * map.elem_strides[0] as u64 * eb);
                let s = map.swizzle.apply(row.box_off + e * eb);
                let inside = e >= row.lo && e < row.lo + row.in_bounds;
                if t.load {
                    let v = if inside {
                        let (sp, _, img) = self.locate(MemSpace::Global, g, warp, lane);
                        self.load(global, sp, img, eb as u32)
                    } else {
                        fill
                    };
                    // A shared::cluster offset: the own block's or another's image.
                    for &d in dests {
                        let space = warpscope_model::Space::DistributedShared;
                        self.store(global, pc, space, d + s, eb as u32, v)?;
                    }
                } else if inside {
                    let s = self.own_offset(smem) + s;
                    let v = self.load(global, warpscope_model::Space::Shared, s, eb as u32);
                    let (sp, _, img) = self.locate(MemSpace::Global, g, warp, lane);
                    let v = match (t.reduce, reduce_ty) {
                        (Some(op), Some(ty)) => {
                            let old = self.load(global, sp, img, eb as u32);
                            super::step::atom_value(op, ty, old, v, 0)
                        }
                        _ => v,
                    };
                    self.store(global, pc, sp, img, eb as u32, v)?;
                }
            }
        }
        if let Some(m) = &t.mbar {
            // Each destination's mbarrier: the one given, or with a multicast the one at the
            // same offset in every block of the mask.
            let bar = at(m);
            let bars: Vec<u64> = match &t.multicast {
                Some(_) => dests
                    .iter()
                    .map(|&d| super::bulk::at_rank(bar, self.rank_of(d)))
                    .collect(),
                None => vec![bar],
            };
            for b in bars {
                let count = Some(Src::Imm(map.box_bytes()));
                self.mbarrier(
                    warp,
                    pc,
                    1 << lane,
                    MbarOp::CompleteTx,
                    MemSpace::Shared,
                    None,
                    (None, b as i64),
                    count,
                )?;
            }
        }
        Ok(())
    }
}

/// The rows of an im2col column [PTX ISA §5.5.4]: `pixelsPerColumn` pixels, each
/// `channelsPerPixel` channels from channel `coords[0]`. The walk starts at the pixel the
/// spatial and N coordinates name and runs through the bounding box — from `lower` to
/// `dim - 1 + upper` in each spatial dimension — innermost (W) first: past the box's W end it
/// goes on at its W start in the next H row, past the H end at the H start of the next D
/// plane, past the last spatial end in the next image (N). Each pixel read is the walked
/// one moved by the instruction's im2colOffsets (a filter tap); a pixel outside the tensor
/// (or a channel past its last, or a negative channel: the whole pixel) is filled, not read.
fn im2col_rows(map: &TensorMap, i: &Im2col, base: u64, coords: &[i64], offs: &[i64]) -> Vec<Row> {
    let eb = map.elem_bytes as u64;
    let rank = map.dims.len();
    let spatial = rank - 2;
    let c0 = coords[0];
    let channels = i.channels as u64;
    let mut pos: Vec<i64> = coords[1..rank].to_vec();
    let mut rows = Vec::with_capacity(i.pixels as usize);
    for p in 0..i.pixels as u64 {
        let mut inside = pos[spatial] >= 0 && (pos[spatial] as u64) < map.dims[rank - 1];
        let mut off = (pos[spatial] as u64).wrapping_mul(map.strides[rank - 2]);
        for s in 0..spatial {
            let c = pos[s] + offs[s];
            inside &= c >= 0 && (c as u64) < map.dims[s + 1];
            off = off.wrapping_add((c as u64).wrapping_mul(map.strides[s]));
        }
        let in_bounds = if inside && c0 >= 0 {
            map.dims[0].saturating_sub(c0 as u64).min(channels)
        } else {
            0
        };
        rows.push(Row {
            global: base
                .wrapping_add(off)
                .wrapping_add((c0 as u64).wrapping_mul(eb)),
            lo: 0,
            in_bounds,
            box_off: p * channels * eb,
        });
        // The next pixel of the bounding box: W on, past its end back to its start with a
        // carry into H (then D, then N, which has no end).
        for (s, q) in pos.iter_mut().enumerate() {
            *q += 1;
            if s == spatial || *q <= map.dims[s + 1] as i64 - 1 + i.upper[s] as i64 {
                break;
            }
            *q = i.lower[s] as i64;
        }
    }
    rows
}

/// A 16-byte piece of a tensor copy: its global address (a TMA fill address for a piece
/// outside the tensor that a tile-mode load counts), its offset in the (swizzled) shared
/// box, whether the global side moves it, whether it holds elements inside the tensor, and
/// its row.
#[derive(Clone, Copy)]
struct Chunk {
    global: u64,
    shared: u64,
    inside: bool,
    data: bool,
    row: u32,
}

/// The sectors of one global-side group of a tensor copy, with the rows that read them, and
/// the range of sectors read by rows before the newest: a chunk clashes (begins a new group)
/// when a sector it reads was read by another row, and the range answers "no" at once for
/// the usual box, whose rows lie apart.
#[derive(Default)]
struct GroupSectors {
    seen: Vec<(u64, u32)>,
    /// Sectors of the rows before the current one, lowest and highest.
    earlier: Option<(u64, u64)>,
    /// The current row and the lowest and highest sector it read.
    current: Option<(u32, u64, u64)>,
}

impl GroupSectors {
    /// Whether a row other than `row` read `sector` in this group.
    fn other_row_has(&self, sector: u64, row: u32) -> bool {
        let near =
            |range: Option<(u64, u64)>| range.is_some_and(|(lo, hi)| lo <= sector && sector <= hi);
        let current_other = self
            .current
            .is_some_and(|(r, lo, hi)| r != row && lo <= sector && sector <= hi);
        (near(self.earlier) || current_other)
            && self.seen.iter().any(|&(s, r)| s == sector && r != row)
    }

    fn push(&mut self, sector: u64, row: u32) {
        match &mut self.current {
            Some((r, lo, hi)) if *r == row => {
                *lo = (*lo).min(sector);
                *hi = (*hi).max(sector);
            }
            cur => {
                if let Some((_, lo, hi)) = *cur {
                    self.earlier = Some(match self.earlier {
                        Some((a, b)) => (a.min(lo), b.max(hi)),
                        None => (lo, hi),
                    });
                }
                *cur = Some((row, sector, sector));
            }
        }
        if self.seen.last() != Some(&(sector, row)) {
            self.seen.push((sector, row));
        }
    }
}

fn lane_mask(n: usize) -> u32 {
    if n >= WARP_SIZE {
        u32::MAX
    } else {
        (1u32 << n) - 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_checks_the_hardware_limits() {
        let m = TensorMap::parse("f16:4096x2048:8192:64x64:swizzle=128").unwrap();
        assert_eq!(m.elem_bytes, 2);
        assert_eq!(m.box_bytes(), 8192);
        assert_eq!(m.extent(), 8192 * 2048);
        let packed = TensorMap::parse("f32:100x30x7:-:4x2x1").unwrap();
        assert_eq!(packed.strides, vec![400, 12_000]);
        let err = |s: &str| TensorMap::parse(s).unwrap_err();
        assert!(err("f16:4096x4096:8192:300x64").contains("1 to 256"));
        assert!(err("f16:4096x4096:8192:4x64").contains("multiple of 16"));
        assert!(err("f16:4096x4096:4096:64x64").contains("does not fit its tensor"));
        assert!(err("f16:4096x4096:8192:128x64:swizzle=128")
            .contains("wider than the 128-byte swizzle"));
        assert!(err("f16:1x1x1x1x1x1:-:1x1x1x1x1x1").contains("1 to 5"));
    }

    #[test]
    fn swizzle_xors_chunks_with_rows() {
        // Row 1 of a 128-byte swizzle: chunk 0 lands on chunk 1, chunk 1 on chunk 0.
        assert_eq!(Swizzle::B128.apply(128), 128 + 16);
        assert_eq!(Swizzle::B128.apply(128 + 16), 128);
        // Row 7: chunk 0 → chunk 7.
        assert_eq!(Swizzle::B128.apply(7 * 128), 7 * 128 + 7 * 16);
        assert_eq!(Swizzle::B64.apply(7 * 128), 7 * 128 + 3 * 16);
        assert_eq!(Swizzle::None.apply(7 * 128), 7 * 128);
    }

    /// The range test only skips scans that would find nothing: on rows of chunks at random
    /// sectors (near and far, repeating), the clashes are those of scanning every entry.
    #[test]
    fn group_sectors_clash_exactly_when_another_row_read_the_sector() {
        let mut x = 0x2545_F491_4F6C_DD1Du64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut clashes = 0;
        for _ in 0..200 {
            let mut fast = GroupSectors::default();
            let mut all: Vec<(u64, u32)> = Vec::new();
            for row in 0..6u32 {
                let start = next() % 40;
                for c in 0..1 + next() % 8 {
                    let sector = start + c / 2;
                    let naive = all.iter().any(|&(s, r)| s == sector && r != row);
                    assert_eq!(fast.other_row_has(sector, row), naive);
                    clashes += naive as u32;
                    fast.push(sector, row);
                    all.push((sector, row));
                }
            }
        }
        assert!(clashes > 0);
    }
}
