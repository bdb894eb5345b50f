//! Device-side tensor maps [PTX ISA §5.5 "Tensors" ("Tensor-map": its fields), "Data Movement and
//! Conversion Instructions: tensormap.replace", "Parallel Synchronization and Communication
//! Instructions: tensormap.cp_fenceproxy"]: a kernel builds a 128-byte tensor-map object in
//! memory field by field (`tensormap.replace`), copies it to global memory
//! (`tensormap.cp_fenceproxy`) and hands its generic address to `cp.async.bulk.tensor`,
//! which reads the map from there ([`BlockCtx::memory_tensor_map`]). Triton's
//! `tl.make_tensor_descriptor` does exactly this: it zeroes the object in shared memory,
//! replaces every field, and copies it into its per-program slice of the launch's
//! `global_scratch` buffer.
//!
//! The object's layout is opaque in the PTX ISA. warpscope keeps the fields at offsets of
//! its own ([`layout`]); as the hardware does (ptxas writes `N − 1` for a dimension of `N`,
//! 63 for a box of 64), the rank, the dimensions, the box and the element strides are kept
//! as the value minus one, so a zeroed object whose fields were never replaced reads as
//! rank 1, dimensions, box and element strides of 1.

use super::*;
use crate::instr::{TensormapField, TensormapReplace};
use warpscope_model::Op;

/// Where warpscope keeps each field of the 128-byte tensor-map object (byte offsets) [PTX
/// ISA §5.5 "Tensor-map" (the object is opaque: this layout is warpscope's), "Data Movement
/// and Conversion Instructions: tensormap.replace" (the fields)].
pub mod layout {
    /// `global_address`: 8 bytes.
    pub const ADDRESS: u64 = 0;
    /// `rank − 1`: 4 bytes.
    pub const RANK: u64 = 8;
    /// `elemtype`: 4 bytes.
    pub const ELEMTYPE: u64 = 12;
    /// `interleave_layout`: 4 bytes.
    pub const INTERLEAVE: u64 = 16;
    /// `swizzle_mode`: 4 bytes.
    pub const SWIZZLE: u64 = 20;
    /// `swizzle_atomicity`: 4 bytes.
    pub const ATOMICITY: u64 = 24;
    /// `fill_mode`: 4 bytes.
    pub const FILL: u64 = 28;
    /// `global_dim[ord] − 1`: 5 × 4 bytes.
    pub const GLOBAL_DIM: u64 = 32;
    /// `box_dim[ord] − 1`: 5 × 4 bytes.
    pub const BOX_DIM: u64 = 52;
    /// `element_stride[ord] − 1`: 5 × 4 bytes.
    pub const ELEMENT_STRIDE: u64 = 72;
    /// `global_stride[ord]` (bytes): 4 × 8 bytes, to the object's end.
    pub const GLOBAL_STRIDE: u64 = 96;
    /// Bytes of the object.
    pub const SIZE: u64 = 128;
}

/// The byte offset, width and stored value of `field` (dimension `ord`) set to `v`.
fn slot(field: TensormapField, ord: u8, v: u64) -> (u64, u32, u64) {
    use layout::*;
    use TensormapField::*;
    let o = ord as u64;
    let less = |v: u64| (v as u32).wrapping_sub(1) as u64;
    match field {
        GlobalAddress => (ADDRESS, 8, v),
        Rank => (RANK, 4, v & 0xFFFF_FFFF),
        ElemType => (ELEMTYPE, 4, v & 0xFFFF_FFFF),
        InterleaveLayout => (INTERLEAVE, 4, v & 0xFFFF_FFFF),
        SwizzleMode => (SWIZZLE, 4, v & 0xFFFF_FFFF),
        SwizzleAtomicity => (ATOMICITY, 4, v & 0xFFFF_FFFF),
        FillMode => (FILL, 4, v & 0xFFFF_FFFF),
        GlobalDim => (GLOBAL_DIM + 4 * o, 4, less(v)),
        BoxDim => (BOX_DIM + 4 * o, 4, less(v)),
        ElementStride => (ELEMENT_STRIDE + 4 * o, 4, less(v)),
        GlobalStride => (GLOBAL_STRIDE + 8 * o, 8, v),
    }
}

/// Writes `field` = `v` into a 128-byte object as `tensormap.replace` does [PTX ISA "Data
/// Movement and Conversion Instructions: tensormap.replace"] (a helper for tests and hosts
/// that build one).
pub fn replace_field(obj: &mut [u8; 128], field: TensormapField, ord: u8, v: u64) {
    let (off, n, v) = slot(field, ord, v);
    let off = off as usize;
    obj[off..off + n as usize].copy_from_slice(&v.to_le_bytes()[..n as usize]);
}

/// The element types of `.elemtype` [PTX ISA, "tensormap.replace"]: (bytes, name as
/// `TensorMap::dtype` has it).
const ELEMTYPES: [(u32, &str); 13] = [
    (1, "u8"),
    (2, "u16"),
    (4, "u32"),
    (4, "s32"),
    (8, "u64"),
    (8, "s64"),
    (2, "f16"),
    (4, "f32"),
    (4, "f32"), // .f32.ftz
    (8, "f64"),
    (2, "bf16"),
    (4, "tf32"),
    (4, "tf32"), // .tf32.ftz
];

/// The tensor map a 128-byte object holds, and its global address [PTX ISA §5.5, "Tensor-map"]: the
/// fields checked as `cuTensorMapEncodeTiled` checks them ([`TensorMap`]'s limits), and the
/// global address aligned to 16 bytes. Errors name the field at fault; values the ISA
/// defines that warpscope does not model (interleaved layouts, the 96-byte swizzle, swizzle
/// atomicities other than 16 bytes, the packed sub-byte element types) are refused by name.
pub fn decode_tensor_map(obj: &[u8; 128]) -> std::result::Result<(TensorMap, u64), String> {
    use layout::*;
    // The offsets are the layout's constants, all inside the 128-byte object: the slices
    // have the length asked for, so the conversions cannot fail.
    let u32_at = |o: u64| u32::from_le_bytes(obj[o as usize..o as usize + 4].try_into().unwrap());
    let u64_at = |o: u64| u64::from_le_bytes(obj[o as usize..o as usize + 8].try_into().unwrap());
    let base = u64_at(ADDRESS);
    let rank = u32_at(RANK) as u64 + 1;
    if rank > 5 {
        return Err(format!(
            ".rank {}: a tensor map has 1 to 5 dimensions (.rank is the rank minus one, 0 to 4)",
            rank - 1
        ));
    }
    let rank = rank as usize;
    let elemtype = u32_at(ELEMTYPE);
    let (elem_bytes, dtype) = match elemtype {
        13..=15 => {
            return Err(format!(
                ".elemtype {elemtype} ({}): the packed sub-byte element types are not supported",
                ["b4x16", "b4x16_p64", "b6x16_p32"][elemtype as usize - 13]
            ))
        }
        t => *ELEMTYPES.get(t as usize).ok_or_else(|| {
            format!(".elemtype {t}: the element types are 0 (.u8) to 15 (.b6x16_p32)")
        })?,
    };
    match u32_at(INTERLEAVE) {
        0 => {}
        1 | 2 => {
            return Err(format!(
                ".interleave_layout {} ({} bytes): interleaved tensor maps are not supported yet",
                u32_at(INTERLEAVE),
                16 * u32_at(INTERLEAVE)
            ))
        }
        v => {
            return Err(format!(
                ".interleave_layout {v}: 0 (none), 1 (16 bytes) or 2 (32 bytes)"
            ))
        }
    }
    let swizzle = match u32_at(SWIZZLE) {
        0 => Swizzle::None,
        1 => Swizzle::B32,
        2 => Swizzle::B64,
        3 => Swizzle::B128,
        4 => return Err(".swizzle_mode 4 (96 bytes, sm_100's): not supported yet".into()),
        v => {
            return Err(format!(
                ".swizzle_mode {v}: 0 (none), 1 (32 bytes), 2 (64 bytes), 3 (128 bytes) or 4 (96 bytes)"
            ))
        }
    };
    match u32_at(ATOMICITY) {
        0 => {}
        v @ 1..=3 => {
            return Err(format!(
                ".swizzle_atomicity {v} ({}): only the 16-byte atomicity (0) is supported",
                ["32 bytes", "32 bytes with an 8-byte flip", "64 bytes"][v as usize - 1]
            ))
        }
        v => {
            return Err(format!(
                ".swizzle_atomicity {v}: 0 (16 bytes), 1 (32 bytes), 2 (32 bytes, 8-byte flip) or 3 (64 bytes)"
            ))
        }
    }
    let oob_nan = match u32_at(FILL) {
        0 => false,
        1 => true,
        v => return Err(format!(".fill_mode {v}: 0 (zero) or 1 (NaN)")),
    };
    let plus = |o: u64| u32_at(o) as u64 + 1;
    let plus32 = |o: u64| u32_at(o).wrapping_add(1);
    let map = TensorMap {
        elem_bytes,
        dtype: dtype.to_string(),
        dims: (0..rank as u64).map(|d| plus(GLOBAL_DIM + 4 * d)).collect(),
        strides: (0..rank as u64 - 1)
            .map(|d| u64_at(GLOBAL_STRIDE + 8 * d))
            .collect(),
        box_dims: (0..rank as u64).map(|d| plus32(BOX_DIM + 4 * d)).collect(),
        elem_strides: (0..rank as u64)
            .map(|d| plus32(ELEMENT_STRIDE + 4 * d))
            .collect(),
        swizzle,
        oob_nan,
        im2col: None,
    };
    map.check()?;
    if !base.is_multiple_of(16) {
        return Err(format!(
            ".global_address {base:#x} is not 16-byte aligned, as a tensor map's must be"
        ));
    }
    Ok((map, base))
}

impl BlockCtx<'_> {
    fn tensormap_fault(&self, warp: &Warp, pc: u32, lane: usize, msg: String) -> Error {
        Error::Fault {
            at: self.at(pc),
            msg,
            thread: self.thread(warp, lane),
            block: self.block,
        }
    }

    /// Where the 128-byte object at `a` (in `space`) is: its space and image offset.
    /// Errors: an object not 64-byte aligned, or outside the block's shared memory or the
    /// launch's allocations, or in local, constant or parameter memory (which a kernel
    /// cannot write).
    fn tensormap_object(
        &self,
        warp: &Warp,
        pc: u32,
        lane: usize,
        space: MemSpace,
        a: u64,
        what: &str,
    ) -> Result<(Space, u64)> {
        let (s, _, image) = self.locate(space, a, warp, lane);
        let fault = |msg: String| self.tensormap_fault(warp, pc, lane, msg);
        if !a.is_multiple_of(64) {
            return Err(fault(format!(
                "{what}: the tensor-map object at {a:#x} is not 64-byte aligned"
            )));
        }
        match s {
            Space::Shared => {
                if image + layout::SIZE > self.shared.len() as u64 {
                    return Err(fault(format!(
                        "{what}: the 128-byte tensor-map object at shared offset {image} runs past the block's {} bytes of shared memory",
                        self.shared.len()
                    )));
                }
            }
            Space::Global => {
                let inside = |x: u64| {
                    matches!(
                        memory::place(self.allocs, x),
                        memory::Placement::Inside
                    )
                };
                if !inside(image) || !inside(image + layout::SIZE - 1) {
                    return Err(fault(format!(
                        "{what}: the 128-byte tensor-map object at {a:#x} is not inside one of the launch's allocations"
                    )));
                }
            }
            other => {
                return Err(fault(format!(
                    "{what}: the tensor-map object at {a:#x} is in {other:?} memory: a kernel modifies tensor maps in global or shared::cta memory"
                )))
            }
        }
        Ok((s, image))
    }

    /// Runs `tensormap.replace` ([`TensormapReplace`]) for the lanes `exec`: the accesses
    /// ptxas makes of it ([`TensormapField::accesses`], at the field's word in each lane's
    /// object), then the field.
    pub(super) fn tensormap_replace(
        &mut self,
        warp: &Warp,
        pc: u32,
        exec: u32,
        t: &TensormapReplace,
        global: &mut Global,
        sink: &mut dyn FnMut(u32, &WarpAccess, WarpOrigin),
    ) -> Result<()> {
        let what = format!("tensormap.replace.{}", t.field.name());
        for lane in lanes(exec) {
            let a = t
                .addr
                .base
                .map_or(0, |r| warp.regs[r as usize * WARP_SIZE + lane])
                .wrapping_add(t.addr.offset as u64);
            let (space, image) = self.tensormap_object(warp, pc, lane, t.space, a, &what)?;
            let v = get(warp, t.val, lane);
            let v = if t.field.wide() { v } else { v & 0xFFFF_FFFF };
            if let Some(max) = t.field.max_value() {
                if v > max {
                    return Err(self.tensormap_fault(
                        warp,
                        pc,
                        lane,
                        format!("{what}: {v} is no .{} value (0 to {max})", t.field.name()),
                    ));
                }
            }
            if v == 0 && t.field == TensormapField::GlobalDim {
                return Err(self.tensormap_fault(
                    warp,
                    pc,
                    lane,
                    format!(
                        "{what}: dimension {} of 0 elements: a tensor's dimensions have 1 to 2^32 − 1 elements",
                        t.ord
                    ),
                ));
            }
            let (off, n, stored) = slot(t.field, t.ord, v);
            self.store(global, pc, space, image + off, n, stored)?;
        }
        let base = self.addresses(warp, t.addr, exec);
        let (word, _, _) = slot(t.field, t.ord, 0);
        for &(store, delta, width) in t.field.accesses() {
            let mut a = [0u64; WARP_SIZE];
            for lane in lanes(exec) {
                a[lane] = base[lane].wrapping_add(word + delta);
            }
            let (op, site) = if store {
                (Op::Store, t.store_site)
            } else {
                (Op::Load, t.load_site)
            };
            self.emit(warp, pc, site, t.space, op, width, exec, &a, sink, None)?;
        }
        Ok(())
    }

    /// Runs `tensormap.cp_fenceproxy` for the lanes `exec`: the warp copies the object at
    /// shared `src` to global `dst`, reported as 32 lanes of 4 bytes each side.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn tensormap_copy(
        &mut self,
        warp: &Warp,
        pc: u32,
        exec: u32,
        (dst, src): (Addr, Addr),
        (load_site, store_site): (u32, u32),
        global: &mut Global,
        sink: &mut dyn FnMut(u32, &WarpAccess, WarpOrigin),
    ) -> Result<()> {
        let Some(first) = lanes(exec).next() else {
            return Ok(());
        };
        let at = |a: &Addr, lane: usize| {
            a.base
                .map_or(0, |r| warp.regs[r as usize * WARP_SIZE + lane])
                .wrapping_add(a.offset as u64)
        };
        let (d, s) = (at(&dst, first), at(&src, first));
        if let Some(l) = lanes(exec).find(|&l| at(&dst, l) != d || at(&src, l) != s) {
            return Err(self.tensormap_fault(warp, pc, l, format!(
                "tensormap.cp_fenceproxy: lane {l} copies [{:#x}] to [{:#x}], lane {first} [{s:#x}] to [{d:#x}]: the warp copies one tensor-map object (.sync.aligned), so every lane gives the same addresses",
                at(&src, l),
                at(&dst, l)
            )));
        }
        let what = "tensormap.cp_fenceproxy";
        let (ss, si) = self.tensormap_object(warp, pc, first, MemSpace::Shared, s, what)?;
        let (ds, di) = self.tensormap_object(warp, pc, first, MemSpace::Global, d, what)?;
        let mut from = [0u64; WARP_SIZE];
        let mut to = [0u64; WARP_SIZE];
        for l in 0..WARP_SIZE {
            from[l] = s + 4 * l as u64;
            to[l] = d + 4 * l as u64;
        }
        let all = u32::MAX;
        self.emit(
            warp,
            pc,
            load_site,
            MemSpace::Shared,
            Op::Load,
            4,
            all,
            &from,
            sink,
            None,
        )?;
        self.emit(
            warp,
            pc,
            store_site,
            MemSpace::Global,
            Op::Atomic,
            4,
            all,
            &to,
            sink,
            None,
        )?;
        for k in (0..layout::SIZE).step_by(8) {
            let v = self.load(global, ss, si + k, 8);
            self.store(global, pc, ds, di + k, 8, v)?;
        }
        Ok(())
    }

    /// The tensor map at generic address `handle` (global, constant or parameter memory)
    /// that a `cp.async.bulk.tensor` names, and the tensor's global address. Errors: an
    /// object in shared or local memory, outside memory, or whose fields do not make a
    /// valid map ([`decode_tensor_map`]).
    pub(super) fn memory_tensor_map(
        &self,
        warp: &Warp,
        pc: u32,
        lane: usize,
        handle: u64,
        global: &Global,
    ) -> Result<(TensorMap, u64)> {
        let fault = |msg: String| self.tensormap_fault(warp, pc, lane, msg);
        let (space, _, image) = self.locate(MemSpace::Generic, handle, warp, lane);
        let what = "cp.async.bulk.tensor";
        match space {
            Space::Global | Space::Constant => {}
            other => {
                return Err(fault(format!(
                    "{what} through the tensor map at {handle:#x}, in {other:?} memory: the TMA reads tensor maps from global, constant or parameter memory (copy one built in shared memory to global memory with tensormap.cp_fenceproxy)"
                )))
            }
        }
        if !handle.is_multiple_of(64) {
            return Err(fault(format!(
                "{what} through the tensor map at {handle:#x}, which is not 64-byte aligned"
            )));
        }
        if space == Space::Global {
            let inside =
                |x: u64| matches!(memory::place(self.allocs, x), memory::Placement::Inside);
            if !inside(image) || !inside(image + layout::SIZE - 1) {
                return Err(fault(format!(
                    "{what} through the tensor map at {handle:#x}, which is neither a CUtensorMap parameter described by --tensor-map nor a 128-byte object inside one of the launch's allocations"
                )));
            }
        }
        let mut obj = [0u8; 128];
        for k in (0..layout::SIZE).step_by(8) {
            let v = self.load(global, space, image + k, 8);
            obj[k as usize..k as usize + 8].copy_from_slice(&v.to_le_bytes());
        }
        decode_tensor_map(&obj).map_err(|e| {
            fault(format!(
                "{what} through the tensor map at {handle:#x} (written by tensormap.replace): {e}"
            ))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use TensormapField::*;

    /// The object Triton builds for a 2-d fp16 descriptor of M×N with a 64×64 box and a
    /// 128-byte swizzle (tensormap.replace's values as its PTX gives them).
    fn triton_2d(m: u64, n: u64) -> [u8; 128] {
        let mut o = [0u8; 128];
        replace_field(&mut o, GlobalAddress, 0, 0x1000);
        replace_field(&mut o, Rank, 0, 1);
        replace_field(&mut o, BoxDim, 0, 64);
        replace_field(&mut o, BoxDim, 1, 64);
        replace_field(&mut o, GlobalDim, 0, n);
        replace_field(&mut o, GlobalDim, 1, m);
        replace_field(&mut o, GlobalStride, 0, 2 * n);
        replace_field(&mut o, ElementStride, 0, 1);
        replace_field(&mut o, ElementStride, 1, 1);
        replace_field(&mut o, ElemType, 0, 6);
        replace_field(&mut o, InterleaveLayout, 0, 0);
        replace_field(&mut o, SwizzleMode, 0, 3);
        replace_field(&mut o, FillMode, 0, 0);
        o
    }

    #[test]
    fn a_replaced_object_decodes_to_its_map() {
        let (map, base) = decode_tensor_map(&triton_2d(256, 128)).unwrap();
        assert_eq!(base, 0x1000);
        assert_eq!(
            map,
            TensorMap::parse("f16:128x256:256:64x64:swizzle=128").unwrap()
        );
        // A zeroed object: rank 1, one element, a box of one (16 bytes short of a valid
        // inner box of u8 elements).
        let err = decode_tensor_map(&[0u8; 128]).unwrap_err();
        assert!(err.contains("multiple of 16"), "{err}");
    }

    #[test]
    fn bad_fields_are_named() {
        let err = |f: TensormapField, ord: u8, v: u64| {
            let mut o = triton_2d(256, 128);
            replace_field(&mut o, f, ord, v);
            decode_tensor_map(&o).unwrap_err()
        };
        assert!(err(Rank, 0, 5).contains(".rank 5"));
        assert!(err(ElemType, 0, 14).contains("b4x16_p64"));
        assert!(err(InterleaveLayout, 0, 2).contains("interleaved"));
        assert!(err(SwizzleMode, 0, 4).contains("96 bytes"));
        assert!(err(SwizzleAtomicity, 0, 1).contains("16-byte atomicity"));
        assert!(err(FillMode, 0, 2).contains(".fill_mode 2"));
        assert!(err(BoxDim, 0, 300).contains("1 to 256"));
        assert!(err(BoxDim, 1, 0).contains("1 to 256"));
        assert!(err(GlobalStride, 0, 100).contains("multiple of 16"));
        assert!(err(GlobalStride, 0, 128).contains("does not fit its tensor"));
        // A dimension of 0 would be kept as 2^32 − 1 + 1: tensormap.replace refuses it
        // (exec::tensormap_replace), the object holds 2^32.
        let mut o = triton_2d(256, 128);
        replace_field(&mut o, GlobalDim, 1, 0);
        assert_eq!(decode_tensor_map(&o).unwrap().0.dims, vec![128, 1 << 32]);
        assert!(err(GlobalAddress, 0, 0x1008).contains("16-byte aligned"));
        // bf16 (10), f64 (9): the ISA's numbering, not CUtensorMapDataType's.
        let mut o = triton_2d(256, 128);
        replace_field(&mut o, ElemType, 0, 10);
        assert_eq!(decode_tensor_map(&o).unwrap().0.dtype, "bf16");
        replace_field(&mut o, ElemType, 0, 9);
        replace_field(&mut o, SwizzleMode, 0, 0);
        replace_field(&mut o, GlobalStride, 0, 8 * 128);
        let (m, _) = decode_tensor_map(&o).unwrap();
        assert_eq!((m.dtype.as_str(), m.elem_bytes), ("f64", 8));
    }
}
