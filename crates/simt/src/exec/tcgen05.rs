//! Tensor memory and the fifth-generation tensor core [PTX ISA §9.7.16].
//!
//! **Tensor memory (TMEM)** [§9.7.16.2.1]: per block (CTA) 128 lanes × 512 columns of 32-bit
//! cells, addressed by a 32-bit value with the lane in bits 31–16 and the column in bits
//! 15–0. Columns are allocated by `tcgen05.alloc` in powers of two from 32 to 512, freed by
//! `tcgen05.dealloc` [§9.7.16.7.1]. warpscope allocates the lowest free run of `ncols`
//! columns that starts at a multiple of `ncols` (the hardware's choice of column is not
//! specified; programs read it back from shared memory, as they must), and keeps one TMEM
//! per block: it does not model several blocks sharing an SM's 512 columns. A request the
//! free columns cannot meet would wait for a `dealloc` that this block's warps, run one after
//! another, never reach first: a fault ("deadlock") naming the thread and block; so is an
//! `alloc` after `tcgen05.relinquish_alloc_permit`, an `ncols` other than 32 … 512 (a power
//! of two), and a `dealloc` of columns not allocated.
//!
//! **`tcgen05.ld`/`tcgen05.st`** [§9.7.16.8.3]: warp `w` reaches the 32 lanes
//! `32·(w%4) … 32·(w%4)+31` only; a shape of 16 lanes may start at either half. Register `r`
//! of thread `l` holds the cell (lane, column) relative to the address, per repetition of
//! the shape (`.xN` repeats it along the columns) [§9.7.16.2.3.1, Figures 183–187]:
//! `.32x32b` (l, r); `.16x64b` (l/4 + 8·(l%2), (l/2)%2 + 2r); `.16x128b` (l/4 + 8·(r%2),
//! l%4 + 4·(r/2)); `.16x256b` (l/4 + 8·((r/2)%2), r%2 + 2·(l%4) + 8·(r/4)); `.16x32bx2`
//! (l%16, r + (l/16)·immHalfSplitoff). The figures are images in the ISA; these formulas are
//! CUTLASS's `Copy_Traits<SM100_TMEM_LOAD_*>` layouts (checked for .16x64b and .16x32bx2)
//! and TVM's table of them, not measured (no Blackwell GPU here). Every cell moved must be
//! allocated. The moves complete at once, so `tcgen05.wait::ld/st` are no-ops. TMEM is not
//! in the memory model: these moves are not accesses.
//!
//! **`tcgen05.mma`** [§9.7.16.10]: issued by one thread (each executing lane issues its
//! own), `D = A·B (+ D)` with A M×K, B K×N (B's descriptor gives it as N×K, like wgmma's),
//! D M×N in TMEM at lanes 0 … M−1 (M = 128) or, for M = 64, rows 16i … 16i+15 at lanes
//! 32i … 32i+15 [§9.7.16.10.5, data path layouts], one 32-bit column per element (f32/s32
//! D), from the address's column on. The instruction descriptor [§9.7.16.10.4.1, the
//! "Instruction descriptor" table] gives: bit 2 sparsity (refused), bit 3 saturate (i8),
//! bits 4–5 D's type (0 f16, 1 f32, 2 s32), bits 7–9 / 10–12 A's / B's type (kind::f16: 0
//! f16, 1 bf16; kind::tf32: 2 tf32; kind::f8f6f4: 0 e4m3, 1 e5m2, 3–5 6- and 4-bit types;
//! kind::i8: 0 u8, 1 s8), bits 13/14 negate A/B, bits 15/16 A/B MN-major ("transpose"),
//! bits 17–22 N/8, bits 24–28 M/16, bits 30–31 the `.ws` shift (must be 0). K is 32 bytes
//! of elements (16 f16/bf16, 8 tf32, 32 8-bit). Valid for `.cta_group::1`: M 64 with N a
//! multiple of 8 from 8 to 256, M 128 with N a multiple of 16 from 16 to 256. Values as in
//! `exec/wgmma.rs`: exact products summed in f64, rounded once to D's type. A in TMEM: row
//! r's K elements packed from the address's column on (4/size elements per column, low
//! bits first) at D's lane of row r.
//!
//! **Shared-memory descriptors** [§9.7.16.4.1, "Shared memory descriptor"]: as wgmma's
//! (start bits 0–13, LBO 16–29, SBO 32–45, all ×16 bytes; base offset 49–51) with the
//! version 0b001 in bits 46–48, the LBO mode in bit 52 (1, absolute, refused) and the
//! swizzle in bits 61–63: 0 none, 2 128B, 4 64B, 6 32B (1, 128B with 32-byte atoms, refused;
//! others reserved). The canonical layouts and the swizzle are wgmma's, so the operands'
//! element addresses are `exec/wgmma.rs`'s [`Desc::addr`].
//!
//! **What is reported.** Each `tcgen05.mma` reports A's (from shared memory) and B's core
//! matrices (8 rows × 16 bytes) as accesses of its own at the MMA's site (an `Op::Load` of
//! shared memory, 16-byte lanes, four core matrices an access, lanes `8q … 8q+7` the rows of
//! core matrix `q`): M·K·size bytes of A and N·K·size of B, in the issuing warp. The shared-
//! memory model then costs one wavefront per core matrix, the rule measured on the H100 for
//! wgmma (`exec/wgmma.rs`). That Blackwell's tensor core reads its operands the same way is
//! an assumption, unmeasured: there is no Blackwell GPU here.

use warpscope_model::{Space, WARP_SIZE};

use super::mma::{encode, value};
use super::wgmma::{Desc, Swizzle};
use super::*;
use crate::instr::*;

/// TMEM lanes and columns per block.
pub(super) const LANES: usize = 128;
pub(super) const COLUMNS: usize = 512;

/// A block's tensor memory: cells (`lane·512 + column`), the allocated 32-column granules
/// (bit g: columns 32g … 32g+31) and whether the block gave up its allocation permit.
#[derive(Clone, Debug)]
pub(super) struct Tmem {
    cells: Vec<u32>,
    used: u16,
    relinquished: bool,
}

impl Default for Tmem {
    fn default() -> Tmem {
        Tmem {
            cells: vec![0; LANES * COLUMNS],
            used: 0,
            relinquished: false,
        }
    }
}

/// The granules of columns `lo … hi−1` (`hi` ≤ 512).
fn granules(lo: u32, hi: u32) -> u16 {
    if hi <= lo {
        return 0;
    }
    let (g0, g1) = (lo / 32, (hi - 1) / 32);
    (((1u32 << (g1 + 1)) - 1) & !((1u32 << g0) - 1)) as u16
}

/// Decodes an sm_100 shared-memory matrix descriptor (see the module's notes).
pub(crate) fn sm100_desc(raw: u64) -> std::result::Result<Desc, String> {
    if (raw >> 46) & 7 != 1 {
        return Err(format!(
            "matrix descriptor {raw:#018x} has {} in bits 46–48, where tcgen05's descriptor holds the version 0b001 (a wgmma descriptor?) [PTX ISA §9.7.16.4.1]",
            (raw >> 46) & 7
        ));
    }
    if (raw >> 52) & 1 != 0 {
        return Err(format!(
            "matrix descriptor {raw:#018x} sets bit 52 (LBO as an absolute address), which is not supported yet"
        ));
    }
    let swizzle = match raw >> 61 {
        0 => Swizzle::None,
        2 => Swizzle::B128,
        4 => Swizzle::B64,
        6 => Swizzle::B32,
        1 => {
            return Err(format!(
                "matrix descriptor {raw:#018x}: swizzle mode 1 (128B with 32-byte atoms) is not supported yet"
            ))
        }
        m => {
            return Err(format!(
                "matrix descriptor {raw:#018x}: swizzle mode {m} (bits 61–63) is reserved; 0 none, 2 128B, 4 64B, 6 32B"
            ))
        }
    };
    Ok(Desc {
        start: (raw & 0x3FFF) << 4,
        lbo: ((raw >> 16) & 0x3FFF) << 4,
        sbo: ((raw >> 32) & 0x3FFF) << 4,
        base_offset: (raw >> 49) & 7,
        swizzle,
    })
}

/// A decoded instruction descriptor (see the module's notes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Idesc {
    pub m: u32,
    pub n: u32,
    pub a: MmaElem,
    pub b: MmaElem,
    pub d: MmaElem,
    pub neg_a: bool,
    pub neg_b: bool,
    pub a_mn: bool,
    pub b_mn: bool,
    pub satfinite: bool,
}

impl Idesc {
    pub(crate) fn decode(kind: Tc5Kind, raw: u32) -> std::result::Result<Idesc, String> {
        use MmaElem::*;
        let bit = |i: u32| (raw >> i) & 1 != 0;
        if bit(2) {
            return Err(format!(
                "instruction descriptor {raw:#010x} sets bit 2 (sparse A), which tcgen05.mma without .sp does not take"
            ));
        }
        if raw >> 30 != 0 {
            return Err(format!(
                "instruction descriptor {raw:#010x} sets bits 30–31 (the .ws B shift), which is for tcgen05.mma.ws only"
            ));
        }
        let elem = |f: u32| -> std::result::Result<MmaElem, String> {
            Ok(match (kind, f) {
                (Tc5Kind::F16, 0) => F16,
                (Tc5Kind::F16, 1) => BF16,
                (Tc5Kind::Tf32, 2) => TF32,
                (Tc5Kind::F8f6f4, 0) => E4M3,
                (Tc5Kind::F8f6f4, 1) => E5M2,
                (Tc5Kind::F8f6f4, 3..=5) => {
                    return Err(format!(
                        "instruction descriptor {raw:#010x}: 6- and 4-bit operands (format {f}) are not supported yet"
                    ))
                }
                (Tc5Kind::I8, 0) => U8,
                (Tc5Kind::I8, 1) => S8,
                _ => {
                    return Err(format!(
                        "instruction descriptor {raw:#010x}: operand format {f} is not one of .kind::{}'s",
                        format!("{kind:?}").to_lowercase()
                    ))
                }
            })
        };
        let a = elem((raw >> 7) & 7)?;
        let b = elem((raw >> 10) & 7)?;
        let d = match ((raw >> 4) & 3, kind) {
            (1, Tc5Kind::F16 | Tc5Kind::Tf32 | Tc5Kind::F8f6f4) => F32,
            (2, Tc5Kind::I8) => S32,
            (0, Tc5Kind::F16 | Tc5Kind::F8f6f4) => {
                return Err(format!(
                    "instruction descriptor {raw:#010x}: an f16 accumulator (bits 4–5 = 0) is not supported yet; use f32"
                ))
            }
            (f, _) => {
                return Err(format!(
                    "instruction descriptor {raw:#010x}: D format {f} (bits 4–5) is not valid for .kind::{}",
                    format!("{kind:?}").to_lowercase()
                ))
            }
        };
        let (m, n) = (((raw >> 24) & 31) << 4, ((raw >> 17) & 63) << 3);
        let n_ok = match m {
            64 => (8..=256).contains(&n) && n % 8 == 0,
            128 => (16..=256).contains(&n) && n % 16 == 0,
            _ => false,
        };
        if !n_ok {
            return Err(format!(
                "instruction descriptor {raw:#010x} gives M = {m}, N = {n}: .cta_group::1 takes M 64 (N a multiple of 8 up to 256) or M 128 (N a multiple of 16 up to 256)"
            ));
        }
        let int = kind == Tc5Kind::I8;
        if int && (bit(13) || bit(14)) {
            return Err(format!(
                "instruction descriptor {raw:#010x} negates an integer operand (bits 13–14), which .kind::i8 does not allow"
            ));
        }
        Ok(Idesc {
            m,
            n,
            a,
            b,
            d,
            neg_a: bit(13),
            neg_b: bit(14),
            a_mn: bit(15),
            b_mn: bit(16),
            satfinite: int && bit(3),
        })
    }

    /// K: 32 bytes of elements.
    fn k(&self) -> u32 {
        32 / size(self.a) as u32
    }
}

/// Bytes of one element.
fn size(e: MmaElem) -> u64 {
    (e.bits() / 8).max(1) as u64
}

/// The TMEM lane of D's (or A's) row `r` for M = `m` (see the module's notes).
fn row_lane(m: u32, r: u32) -> u32 {
    if m == 64 {
        32 * (r / 16) + r % 16
    } else {
        r
    }
}

/// (lane, column) of register `r` of thread `l`, relative to the address.
fn cell_of(shape: Tc5Shape, l: u32, r: u32, split: u32) -> (u32, u32) {
    match shape {
        Tc5Shape::S32x32b => (l, r),
        Tc5Shape::S16x64b => (l / 4 + 8 * (l % 2), (l / 2) % 2 + 2 * r),
        Tc5Shape::S16x128b => (l / 4 + 8 * (r % 2), l % 4 + 4 * (r / 2)),
        Tc5Shape::S16x256b => (l / 4 + 8 * ((r / 2) % 2), r % 2 + 2 * (l % 4) + 8 * (r / 4)),
        Tc5Shape::S16x32bx2 => (l % 16, r + (l / 16) * split),
    }
}

impl<'a> BlockCtx<'a> {
    fn tc5_fault(&self, pc: u32, warp: &Warp, lane: usize, msg: String) -> Error {
        Error::Fault {
            at: self.at(pc),
            msg,
            thread: self.thread(warp, lane),
            block: self.block,
        }
    }

    /// A `.sync.aligned` tcgen05 instruction: every lane of the warp executes it.
    fn tc5_whole_warp(&self, pc: u32, warp: &Warp, exec: u32, what: &str) -> Result<()> {
        if exec != u32::MAX {
            let off = (!exec).trailing_zeros() as usize % WARP_SIZE;
            return Err(self.tc5_fault(
                pc,
                warp,
                off,
                format!(
                    "{what} is .sync.aligned: every thread of the warp executes it, but lane {off} of warp {} does not (active lanes {exec:#010x})",
                    warp.index
                ),
            ));
        }
        Ok(())
    }

    /// Checks that TMEM columns `lo … hi−1` are allocated.
    fn tc5_allocated(
        &self,
        pc: u32,
        warp: &Warp,
        lane: usize,
        what: &str,
        lo: u32,
        hi: u32,
    ) -> Result<()> {
        let used = self.tmem.as_ref().map_or(0, |t| t.used);
        if hi as usize > COLUMNS || granules(lo, hi) & !used != 0 {
            return Err(self.tc5_fault(
                pc,
                warp,
                lane,
                format!(
                    "{what} reaches TMEM columns {lo} … {}, but the block has allocated {} (tcgen05.alloc first; 512 columns in all)",
                    hi.saturating_sub(1),
                    describe(used)
                ),
            ));
        }
        Ok(())
    }

    /// One `tcgen05` operation (see the module's notes).
    pub(super) fn tcgen05(
        &mut self,
        warp: &mut Warp,
        pc: u32,
        exec: u32,
        global: &mut Global,
        op: &Tc5Op,
        sink: &mut dyn FnMut(u32, &WarpAccess, WarpOrigin),
    ) -> Result<()> {
        if exec == 0 {
            return Ok(());
        }
        let lane0 = exec.trailing_zeros() as usize;
        match op {
            Tc5Op::Alloc { dst, ncols } => {
                self.tc5_whole_warp(pc, warp, exec, "tcgen05.alloc")?;
                let n = get(warp, *ncols, lane0);
                if !(32..=512).contains(&n) || !n.is_power_of_two() {
                    return Err(self.tc5_fault(pc, warp, lane0, format!(
                        "tcgen05.alloc of {n} columns: ncols is a power of two from 32 to 512 [PTX ISA §9.7.16.7.1]"
                    )));
                }
                let tm = self.tmem.get_or_insert_with(Default::default);
                if tm.relinquished {
                    return Err(self.tc5_fault(pc, warp, lane0, format!(
                        "tcgen05.alloc of {n} columns after the block executed tcgen05.relinquish_alloc_permit (undefined behaviour) [PTX ISA §9.7.16.7.1]"
                    )));
                }
                let k = (n / 32) as u32;
                let used = tm.used;
                let start = (0..16u32)
                    .step_by(k as usize)
                    .find(|s| granules(32 * s, 32 * (s + k)) & used == 0);
                let Some(s) = start else {
                    return Err(self.tc5_fault(pc, warp, lane0, format!(
                        "deadlock: tcgen05.alloc asks for {n} TMEM columns, but the block holds {} of the 512 and no run of {n} free columns is left; the warp would wait for a tcgen05.dealloc forever (free columns first, or allocate fewer)",
                        describe(used)
                    )));
                };
                tm.used |= granules(32 * s, 32 * (s + k));
                let a = dst
                    .base
                    .map_or(0, |r| warp.regs[r as usize * WARP_SIZE + lane0])
                    .wrapping_add(dst.offset as u64)
                    & 0xFFFF_FFFF;
                if a % 4 != 0 || a + 4 > self.shared.len() as u64 {
                    return Err(self.tc5_fault(pc, warp, lane0, format!(
                        "tcgen05.alloc writes the TMEM address to shared address {a:#x}, not a 4-byte-aligned word of the block's {} bytes of shared memory",
                        self.shared.len()
                    )));
                }
                crate::memory::write_flat(&mut self.shared, a, 4, (32 * s) as u64);
            }
            Tc5Op::Dealloc { taddr, ncols } => {
                self.tc5_whole_warp(pc, warp, exec, "tcgen05.dealloc")?;
                let t = get(warp, *taddr, lane0) as u32;
                let n = get(warp, *ncols, lane0);
                let col = t & 0xFFFF;
                if !(32..=512).contains(&n) || !n.is_power_of_two() || t >> 16 != 0 || col % 32 != 0
                {
                    return Err(self.tc5_fault(pc, warp, lane0, format!(
                        "tcgen05.dealloc of {n} columns at TMEM address {t:#x}: ncols is a power of two from 32 to 512 and the address an allocation's (lane 0, a column a multiple of 32)"
                    )));
                }
                self.tc5_allocated(pc, warp, lane0, "tcgen05.dealloc", col, col + n as u32)?;
                if let Some(tm) = self.tmem.as_mut() {
                    tm.used &= !granules(col, col + n as u32);
                }
            }
            Tc5Op::Relinquish => {
                self.tmem.get_or_insert_with(Default::default).relinquished = true;
            }
            Tc5Op::Move {
                store,
                shape,
                num,
                regs,
                taddr,
                split,
            } => {
                let what = if *store { "tcgen05.st" } else { "tcgen05.ld" };
                self.tc5_whole_warp(pc, warp, exec, what)?;
                let t = taddr
                    .base
                    .map_or(0, |r| warp.regs[r as usize * WARP_SIZE + lane0])
                    .wrapping_add(taddr.offset as u64) as u32;
                let (lane, col) = (t >> 16, t & 0xFFFF);
                let rows = if *shape == Tc5Shape::S32x32b { 32 } else { 16 };
                let q = warp.index % 4;
                if lane < 32 * q || lane + rows > 32 * q + 32 {
                    return Err(self.tc5_fault(pc, warp, lane0, format!(
                        "{what} at TMEM address {t:#x} reaches lanes {lane} … {}, but warp {} (warp index % 4 = {q}) may access TMEM lanes {} … {} only [PTX ISA §9.7.16.2.1]",
                        lane + rows - 1, warp.index, 32 * q, 32 * q + 31
                    )));
                }
                let width = match shape {
                    Tc5Shape::S32x32b => *num,
                    Tc5Shape::S16x64b => 2 * num,
                    Tc5Shape::S16x128b => 4 * num,
                    Tc5Shape::S16x256b => 8 * num,
                    Tc5Shape::S16x32bx2 => split + num,
                };
                self.tc5_allocated(pc, warp, lane0, what, col, col + width)?;
                let tm = self.tmem.get_or_insert_with(Default::default);
                for l in 0..WARP_SIZE as u32 {
                    for (r, s) in regs.iter().enumerate() {
                        let (dl, dc) = cell_of(*shape, l, r as u32, *split);
                        let cell = (lane + dl) as usize * COLUMNS + (col + dc) as usize;
                        if *store {
                            tm.cells[cell] = get(warp, *s, l as usize) as u32;
                        } else if let Src::Reg(d) = s {
                            warp.regs[*d as usize * WARP_SIZE + l as usize] = tm.cells[cell] as u64;
                        }
                    }
                }
                if !*store {
                    for s in regs {
                        if let Src::Reg(d) = s {
                            warp.uni[*d as usize] = false;
                        }
                    }
                }
            }
            Tc5Op::Mma(m) => {
                for l in lanes(exec) {
                    self.tc5_mma(warp, pc, l, global, m, sink)?;
                }
            }
        }
        Ok(())
    }

    /// One `tcgen05.mma`, issued by lane `l`.
    fn tc5_mma(
        &mut self,
        warp: &mut Warp,
        pc: u32,
        l: usize,
        global: &mut Global,
        m: &Tc5Mma,
        sink: &mut dyn FnMut(u32, &WarpAccess, WarpOrigin),
    ) -> Result<()> {
        let raw = get(warp, m.idesc, l) as u32;
        let id = Idesc::decode(m.kind, raw)
            .map_err(|e| self.tc5_fault(pc, warp, l, format!("tcgen05.mma: {e}")))?;
        let k = id.k();
        let tmem_at = |a: &Addr| {
            a.base
                .map_or(0, |r| warp.regs[r as usize * WARP_SIZE + l])
                .wrapping_add(a.offset as u64) as u32
        };
        let dt = tmem_at(&m.d);
        if dt >> 16 != 0 {
            return Err(self.tc5_fault(pc, warp, l, format!(
                "tcgen05.mma: D's TMEM address {dt:#x} is at lane {}; D starts at lane 0 (its rows fill the data path's lanes)",
                dt >> 16
            )));
        }
        let dcol = dt & 0xFFFF;
        self.tc5_allocated(pc, warp, l, "tcgen05.mma's D", dcol, dcol + id.n)?;
        let (sa, sb) = (size(id.a), size(id.b));
        let a_tmem = m.a_tmem.as_ref().map(tmem_at);
        if let Some(at) = a_tmem {
            if at >> 16 != 0 {
                return Err(self.tc5_fault(
                    pc,
                    warp,
                    l,
                    format!(
                        "tcgen05.mma: A's TMEM address {at:#x} is at lane {}; A starts at lane 0",
                        at >> 16
                    ),
                ));
            }
            let c = at & 0xFFFF;
            self.tc5_allocated(pc, warp, l, "tcgen05.mma's A", c, c + 8)?;
        }
        let shared_len = self.shared.len() as u64;
        let desc = |ctx: &Self, s: Src, which: &str| -> Result<Desc> {
            let raw = get(warp, s, l);
            let d = sm100_desc(raw)
                .map_err(|e| ctx.tc5_fault(pc, warp, l, format!("tcgen05.mma: {which}'s {e}")))?;
            if d.start >= shared_len {
                return Err(ctx.tc5_fault(pc, warp, l, format!(
                    "tcgen05.mma: {which}'s matrix descriptor {raw:#018x} starts at shared address {:#x}, outside the block's {shared_len} bytes of shared memory (set the dynamic size with --dynamic-smem)",
                    d.start
                )));
            }
            Ok(d)
        };
        let a_desc = match m.a_desc {
            Some(s) => Some(desc(self, s, "A")?),
            None => None,
        };
        let b_desc = desc(self, m.b_desc, "B")?;
        let mut parts: Vec<(&str, Desc, Vec<[u64; 8]>)> = Vec::new();
        if let Some(d) = a_desc {
            parts.push(("A", d, d.cores(id.a_mn, sa, 0, id.m as u64, k as u64)));
        }
        parts.push((
            "B",
            b_desc,
            b_desc.cores(id.b_mn, sb, 0, id.n as u64, k as u64),
        ));
        for (which, d, cores) in &parts {
            if let Some(&end) = cores
                .iter()
                .flatten()
                .find(|&&a| (a & 0xFFFF_FFFF) + 16 > shared_len)
            {
                return Err(self.tc5_fault(pc, warp, l, format!(
                    "tcgen05.mma: {which} (descriptor start {:#x}, LBO {}, SBO {}, {} swizzle) reads 16 bytes at shared address {end:#x}, past the block's {shared_len} bytes of shared memory",
                    d.start, d.lbo, d.sbo, d.swizzle.name()
                )));
            }
        }
        for (_, _, cores) in &parts {
            self.emit_core_matrices(warp, pc, m.site, cores, sink)?;
        }
        if !self.prog.needs_memory {
            return Ok(());
        }
        // Values: A (M×K), B (K×N), then D in TMEM.
        let (mm, n, kk) = (id.m as usize, id.n as usize, k as usize);
        let element = |ctx: &Self, ty: MmaElem, addr: u64| {
            value(
                ty,
                ctx.load(global, Space::Shared, addr & 0xFFFF_FFFF, size(ty) as u32),
            )
        };
        let mut a = vec![0f64; mm * kk];
        for r in 0..mm {
            for c in 0..kk {
                a[r * kk + c] = match (&a_desc, a_tmem) {
                    (Some(d), _) => element(self, id.a, d.addr(id.a_mn, sa, r as u64, c as u64)),
                    (None, Some(at)) => {
                        let tm = self.tmem.as_ref().map_or(0, |t| {
                            let byte = c as u64 * sa;
                            let cell = row_lane(id.m, r as u32) as usize * COLUMNS
                                + ((at & 0xFFFF) as u64 + byte / 4) as usize;
                            ((t.cells[cell] as u64) >> (8 * (byte % 4))) & ((1u64 << (8 * sa)) - 1)
                        });
                        value(id.a, tm)
                    }
                    (None, None) => 0.0,
                };
            }
        }
        let mut b = vec![0f64; kk * n];
        for c in 0..kk {
            for j in 0..n {
                b[c * n + j] = element(self, id.b, b_desc.addr(id.b_mn, sb, j as u64, c as u64));
            }
        }
        let accumulate = get(warp, m.enable_d, l) & 1 != 0;
        let sign = if id.neg_a != id.neg_b { -1.0 } else { 1.0 };
        let tm = self.tmem.get_or_insert_with(Default::default);
        for r in 0..mm {
            let base = row_lane(id.m, r as u32) as usize * COLUMNS + dcol as usize;
            for j in 0..n {
                let mut acc = 0f64;
                for c in 0..kk {
                    acc += a[r * kk + c] * b[c * n + j];
                }
                acc *= sign;
                if accumulate {
                    acc += value(id.d, tm.cells[base + j] as u64);
                }
                tm.cells[base + j] = encode(id.d, acc, id.satfinite) as u32;
            }
        }
        Ok(())
    }
}

/// The allocated columns as runs ("none", "columns 0 … 127").
fn describe(used: u16) -> String {
    if used == 0 {
        return "none".into();
    }
    let mut runs = Vec::new();
    let mut g = 0;
    while g < 16 {
        if used >> g & 1 == 1 {
            let s = g;
            while g < 16 && used >> g & 1 == 1 {
                g += 1;
            }
            runs.push(format!("{} … {}", 32 * s, 32 * g - 1));
        } else {
            g += 1;
        }
    }
    format!("columns {}", runs.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn granules_and_descriptions() {
        assert_eq!(granules(0, 32), 1);
        assert_eq!(granules(32, 128), 0b1110);
        assert_eq!(granules(0, 512), u16::MAX);
        assert_eq!(describe(0b1100_0011), "columns 0 … 63, 192 … 255");
    }

    /// Triton's sm_100 matmul: idesc 0x08210010 is M 128, N 128, f16 × f16 → f32, B
    /// MN-major; its A descriptor 0x4000404000000000 is 128B swizzle, SBO 1024.
    #[test]
    fn tritons_descriptors() {
        let id = Idesc::decode(Tc5Kind::F16, 0x0821_0010).unwrap();
        assert_eq!(
            (id.m, id.n, id.a, id.d, id.a_mn, id.b_mn),
            (128, 128, MmaElem::F16, MmaElem::F32, false, true)
        );
        let d = sm100_desc(0x4000_4040_0000_0000).unwrap();
        assert_eq!(
            (d.start, d.lbo, d.sbo, d.swizzle),
            (0, 0, 1024, Swizzle::B128)
        );
        assert!(sm100_desc(0x4000_0040_0000_0000).is_err());
    }
}
