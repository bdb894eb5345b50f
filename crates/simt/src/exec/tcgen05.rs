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
//! **Block scaling** [§9.7.16.10.7]: `.kind::mxf8f6f4` (K 32; E4M3, E5M2, and E2M3, E3M2,
//! E2M1 of 6 and 4 bits), `::mxf4` and `::mxf4nvf4` (K 64, E2M1) compute (A·scale_A)·
//! (B·scale_B) + D with `.scale_vec::NX` (`.block32`, `.block16`) factors a row of A /
//! column of B, each for K/N consecutive elements; the instruction descriptor (Tables 43–44)
//! moves M to bits 27–28 (M/128), puts scale A's / B's data ID in bits 29–30 / 4–5 and the
//! scale type in bit 23 (1 UE8M0, 0 UE4M3: mxf4nvf4 4X only). The ISA draws where the
//! factors lie in TMEM only in figures (231–257); warpscope reads row r's factors from
//! D's lane of row r and the scale-A address's column, bytes `ID … ID+N−1` of the cell
//! (1X: the byte the ID names, 2X: the half word, 4X: the word), column n's from lane
//! n % 128 and column `scale-B + n / 128`: an interpretation, unmeasured. Shared memory
//! holds 4- and 6-bit elements of f8f6f4/mxf8f6f4 as 16 elements from bit 0 of each
//! 16-byte chunk then padding (§9.7.16.10.4.4, the form `tcgen05.cp` decompresses), those of
//! mxf4* two a byte, low nibble first (§9.7.16.10.4.6); in TMEM (A) one a byte, value at
//! bits 2 and up (mxf8f6f4) or two a byte (mxf4*). K-major only for these (MN-major: an
//! error). The tests check the 8-bit E4M3 path by hand.
//!
//! **`.ws`** [§9.7.16.10.9.3]: weight-stationary MMAs of `.cta_group::1` with M 32, 64 or
//! 128 and N 64, 128 or 256; warpscope runs M = 128 (data path Layout D, lanes = rows) and
//! refuses 32 and 64 (Layouts G and E, drawn only in figures). `.collector::bN::fill` keeps
//! B in buffer N, `::use` and `::lastuse` take B from it (no shared-memory read, the point
//! of weight stationary; `::lastuse` empties it), `::discard` neither; a `::use` of an empty
//! buffer is an error. The zero-column mask operand is refused.
//!
//! **`.cta_group::2`** [§9.7.16.5]: the blocks of cluster ranks 2i and 2i+1 form a CTA pair;
//! a launch without the peer (no cluster, an odd cluster size) is an error naming the rule.
//! `alloc`/`dealloc`/`relinquish_alloc_permit` are issued by a warp of each block, each
//! allocating its own TMEM (the same columns, as the allocator is deterministic). The MMA
//! (M = 256, Layout A; M = 128's Layout B and block-scaled pairs are refused) is issued by one thread of either
//! block: A's rows 0–127 and B's columns 0 … N/2−1 come from the even block's shared memory,
//! rows 128–255 and the other columns from the odd block's, at the same descriptor
//! addresses (CUTLASS's 2-SM MMA), D's rows 0–127 go to the even block's TMEM, 128–255 to
//! the odd's. `tcgen05.cp` and `.shift` act on both blocks' TMEM, the copy from each
//! block's own shared memory. Each block's reads are reported (as shared reads at the
//! issuing instruction's site).
//!
//! **`tcgen05.cp`** [§9.7.16.9.2]: one thread copies a shape of rows × 128 or 256 bits from
//! shared memory to TMEM; row r's 16-byte chunk h is at the descriptor's canonical K-major
//! address of 4-byte element (r, 4h) (`exec/wgmma.rs`'s [`Desc::addr`]: no swizzle, (r/8)·SBO
//! + (r%8)·16 + h·LBO), its words into columns 4h … 4h+3. Lanes: `.128x256b`, `.128x128b`
//! lanes 0 … 127; `.4x256b` lanes 0, 32, 64, 96; `.64x128b.warpx2::02_13` row r into lanes r
//! and r + 64, `::01_23` into 64·(r/32) + r%32 and that + 32; `.32x128b.warpx4` into r +
//! 32q for q 0 … 3 (the ISA: "each warp in the warp pair receives half of the data"; the
//! lane formulas are TVM's reading of its figures). Decompression (§9.7.16.9.1,
//! `.b8x16.b4x16_p64`/`.b6x16_p32`): each 16-byte chunk's 16 elements of 4/6 bits (from bit
//! 0, then padding) into 16 bytes, each value at bits 2 and up (the container warpscope's
//! f8f6f4 MMAs read; the ISA's Figures 195–198 are images). Reported like the MMA's reads:
//! 16-byte pieces, 32 an access, by 8-row group, chunk, row. **`tcgen05.shift.down`**
//! (§9.7.16.9.3): rows 0 … 30 of the 32-lane partition at the address (its lane a multiple
//! of 32), 8 columns (32 bytes), move down one lane; row 0 keeps its value.
//!
//! Accumulation: D = Σ of exact products in f64, rounded once to D's type; the hardware's
//! order and intermediate precision are unspecified by the ISA, so results of inexact sums
//! may differ from a Blackwell GPU's in the last bits (the tests use exact integers).
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

use warpscope_model::{Op, WARP_SIZE};

use super::mma::{encode, value};
use super::wgmma::{Desc, Swizzle};
use super::*;
use crate::instr::*;
use crate::minifloat::Format;

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
    /// `tcgen05.mma.ws`'s B collector buffers b0 … b3: (K, N, B's K×N values).
    collectors: [Option<(usize, usize, Vec<f64>)>; 4],
}

impl Default for Tmem {
    fn default() -> Tmem {
        Tmem {
            cells: vec![0; LANES * COLUMNS],
            used: 0,
            relinquished: false,
            collectors: Default::default(),
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
    /// Block-scaled kinds: the scale factor A / B data IDs (bits 29–30 / 4–5) and the
    /// scale type (bit 23: 0 UE4M3, 1 UE8M0).
    pub sfa: u32,
    pub sfb: u32,
    pub ue4m3: bool,
}

impl Idesc {
    /// Decodes `raw` for `kind`, of a `.cta_group::2` MMA (`pair`) or a `.ws` one (`ws`)
    /// [PTX ISA §9.7.16.4.2, Tables 42–44; shapes §9.7.16.2.1, Table 39].
    pub(crate) fn decode(
        kind: Tc5Kind,
        raw: u32,
        pair: bool,
        ws: bool,
    ) -> std::result::Result<Idesc, String> {
        use MmaElem::*;
        let bit = |i: u32| (raw >> i) & 1 != 0;
        let name = format!("{kind:?}").to_lowercase();
        if bit(2) {
            return Err(format!(
                "instruction descriptor {raw:#010x} sets bit 2 (sparse A), which tcgen05.mma without .sp does not take"
            ));
        }
        let scaled = matches!(kind, Tc5Kind::MxF8f6f4 | Tc5Kind::MxF4 | Tc5Kind::MxF4Nvf4);
        if !scaled && !ws && raw >> 30 != 0 {
            return Err(format!(
                "instruction descriptor {raw:#010x} sets bits 30–31 (the .ws B shift), which is for tcgen05.mma.ws only"
            ));
        }
        let elem = |f: u32| -> std::result::Result<MmaElem, String> {
            Ok(match (kind, f) {
                (Tc5Kind::F16, 0) => F16,
                (Tc5Kind::F16, 1) => BF16,
                (Tc5Kind::Tf32, 2) => TF32,
                (Tc5Kind::F8f6f4 | Tc5Kind::MxF8f6f4, 0) => E4M3,
                (Tc5Kind::F8f6f4 | Tc5Kind::MxF8f6f4, 1) => E5M2,
                (Tc5Kind::F8f6f4 | Tc5Kind::MxF8f6f4, 3) => E2M3,
                (Tc5Kind::F8f6f4 | Tc5Kind::MxF8f6f4, 4) => E3M2,
                (Tc5Kind::F8f6f4 | Tc5Kind::MxF8f6f4, 5) => E2M1Byte,
                (Tc5Kind::MxF4 | Tc5Kind::MxF4Nvf4, 1) => E2M1,
                (Tc5Kind::I8, 0) => U8,
                (Tc5Kind::I8, 1) => S8,
                _ => {
                    return Err(format!(
                        "instruction descriptor {raw:#010x}: operand format {f} is not one of .kind::{name}'s"
                    ))
                }
            })
        };
        let nibble = matches!(kind, Tc5Kind::MxF4 | Tc5Kind::MxF4Nvf4);
        let a = elem((raw >> 7) & 7)?;
        let b = elem((raw >> 10) & if nibble { 3 } else { 7 })?;
        let (d, m, sfa, sfb, ue4m3) = if scaled {
            if nibble && bit(31) {
                return Err(format!(
                    "instruction descriptor {raw:#010x} sets bit 31 (K = 96), which is not supported yet"
                ));
            }
            let ue4m3 = !bit(23);
            if ue4m3 && kind != Tc5Kind::MxF4Nvf4 {
                return Err(format!(
                    "instruction descriptor {raw:#010x}: bit 23 = 0 (UE4M3 scale factors) is .kind::mxf4nvf4's only; .kind::{name} scales by UE8M0 (bit 23 = 1)"
                ));
            }
            let (sfa, sfb) = ((raw >> 29) & 3, (raw >> 4) & 3);
            (F32, ((raw >> 27) & 3) << 7, sfa, sfb, ue4m3)
        } else {
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
                        "instruction descriptor {raw:#010x}: D format {f} (bits 4–5) is not valid for .kind::{name}"
                    ))
                }
            };
            (d, ((raw >> 24) & 31) << 4, 0, 0, false)
        };
        let n = ((raw >> 17) & 63) << 3;
        let step = if pair { 16 } else { 8 };
        let n_ok = |lo: u32, step: u32| (lo..=256).contains(&n) && n.is_multiple_of(step);
        let (ok, rule) = if ws {
            (
                matches!(m, 32 | 64 | 128) && matches!(n, 64 | 128 | 256),
                ".ws takes M 32, 64 or 128 and N 64, 128 or 256",
            )
        } else if pair {
            (
                matches!(m, 128 | 256) && n_ok(16, step),
                ".cta_group::2 takes M 128 or 256 and N a multiple of 16 from 16 to 256",
            )
        } else if scaled {
            (
                m == 128 && n_ok(8, 8),
                ".cta_group::1 block-scaled takes M 128 and N a multiple of 8 up to 256",
            )
        } else {
            (
                (m == 64 && n_ok(8, 8)) || (m == 128 && n_ok(16, 16)),
                ".cta_group::1 takes M 64 (N a multiple of 8 up to 256) or M 128 (N a multiple of 16 up to 256)",
            )
        };
        if !ok {
            return Err(format!(
                "instruction descriptor {raw:#010x} gives M = {m}, N = {n}: {rule} [PTX ISA §9.7.16.2.1, Table 39]"
            ));
        }
        if ws && m != 128 {
            return Err(format!(
                "instruction descriptor {raw:#010x} gives .ws M = {m}: only M = 128 (data path Layout D) is supported yet; M = 32 and 64 use Layouts G and E [PTX ISA §9.7.16.10.5]"
            ));
        }
        if pair && scaled {
            return Err(format!(
                "instruction descriptor {raw:#010x}: a block-scaled .cta_group::2 MMA is not supported yet (where each block's scale factors lie is drawn only in the ISA's figures)"
            ));
        }
        if pair && m != 256 {
            return Err(format!(
                "instruction descriptor {raw:#010x} gives .cta_group::2 M = 128 (data path Layout B), which is not supported yet; M = 256 is"
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
            sfa,
            sfb,
            ue4m3,
        })
    }
}

/// K of one `tcgen05.mma` of `kind` (32 bytes of elements; 64 4-bit ones for mxf4*).
fn k_of(kind: Tc5Kind) -> usize {
    match kind {
        Tc5Kind::F16 => 16,
        Tc5Kind::Tf32 => 8,
        Tc5Kind::F8f6f4 | Tc5Kind::I8 | Tc5Kind::MxF8f6f4 => 32,
        Tc5Kind::MxF4 | Tc5Kind::MxF4Nvf4 => 64,
    }
}

/// How an operand's elements lie in shared memory [PTX ISA §9.7.16.10.4]: `Plain(bytes)`;
/// `Nibbles`, two E2M1 a byte, low first (`.kind::mxf4*`); `Padded(bits)`, 16 elements of 4
/// or 6 bits from bit 0 of each 16-byte chunk, then padding (`.kind::f8f6f4`/`mxf8f6f4`,
/// the format `tcgen05.cp` decompresses).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Packing {
    Plain(u64),
    Nibbles,
    Padded(u32),
}

fn packing(kind: Tc5Kind, ty: MmaElem) -> Packing {
    match (kind, ty) {
        (Tc5Kind::MxF4 | Tc5Kind::MxF4Nvf4, _) => Packing::Nibbles,
        (_, MmaElem::E2M1Byte) => Packing::Padded(4),
        (_, MmaElem::E3M2 | MmaElem::E2M3) => Packing::Padded(6),
        _ => Packing::Plain(size(ty)),
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
        self.tc5_allocated_at(pc, warp, lane, what, self.rank, lo, hi)
    }

    /// Checks that TMEM columns `lo … hi−1` of cluster rank `rank`'s block are allocated.
    #[allow(clippy::too_many_arguments)]
    fn tc5_allocated_at(
        &self,
        pc: u32,
        warp: &Warp,
        lane: usize,
        what: &str,
        rank: u32,
        lo: u32,
        hi: u32,
    ) -> Result<()> {
        let used = self.tmem_ref(rank).map_or(0, |t| t.used);
        if hi as usize > COLUMNS || granules(lo, hi) & !used != 0 {
            return Err(self.tc5_fault(
                pc,
                warp,
                lane,
                format!(
                    "{what} reaches TMEM columns {lo} … {}, but {} has allocated {} (tcgen05.alloc first; 512 columns in all)",
                    hi.saturating_sub(1),
                    if rank == self.rank { "the block".to_string() } else { format!("its peer block (cluster rank {rank})") },
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
            Tc5Op::Alloc { dst, ncols, pair } => {
                self.tc5_whole_warp(pc, warp, exec, "tcgen05.alloc")?;
                if *pair {
                    self.tc5_peer(pc, warp, lane0, "tcgen05.alloc")?;
                }
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
                self.check_raw_write(a, 4);
                crate::memory::write_flat(&mut self.shared, a, 4, (32 * s) as u64);
            }
            Tc5Op::Dealloc { taddr, ncols, pair } => {
                self.tc5_whole_warp(pc, warp, exec, "tcgen05.dealloc")?;
                if *pair {
                    self.tc5_peer(pc, warp, lane0, "tcgen05.dealloc")?;
                }
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
            Tc5Op::Relinquish { pair } => {
                if *pair {
                    self.tc5_peer(pc, warp, lane0, "tcgen05.relinquish_alloc_permit")?;
                }
                self.tmem.get_or_insert_with(Default::default).relinquished = true;
            }
            Tc5Op::Cp(c) => {
                for l in lanes(exec) {
                    self.tc5_cp(warp, pc, l, c, sink)?;
                }
            }
            Tc5Op::CommitMulticast { mbar, mask } => {
                for l in lanes(exec) {
                    let a = Self::tmem_addr(warp, mbar, l) as u64;
                    let m = get(warp, *mask, l);
                    let off = self.own_offset(a);
                    for r in self.cta_ranks(warp, pc, l, m)? {
                        self.mbarrier(
                            warp,
                            pc,
                            1 << l,
                            MbarOp::Arrive {
                                drop: false,
                                expect_tx: false,
                                no_complete: false,
                            },
                            MemSpace::Shared,
                            None,
                            (None, super::bulk::at_rank(off, r) as i64),
                            None,
                        )?;
                    }
                }
            }
            Tc5Op::Shift { taddr, pair } => {
                for l in lanes(exec) {
                    self.tc5_shift(warp, pc, l, taddr, *pair)?;
                }
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

    /// The tensor memory of cluster rank `rank`'s block (the executing block's or, for a
    /// `.cta_group::2` operation, its peer's).
    fn tmem_ref(&self, rank: u32) -> Option<&Tmem> {
        if rank == self.rank {
            self.tmem.as_deref()
        } else {
            self.cluster.tmems.get(rank as usize)?.as_deref()
        }
    }

    fn tmem_mut(&mut self, rank: u32) -> &mut Tmem {
        if rank == self.rank {
            self.tmem.get_or_insert_with(Default::default)
        } else {
            if self.cluster.tmems.len() <= rank as usize {
                self.cluster.tmems.resize_with(rank as usize + 1, || None);
            }
            self.cluster.tmems[rank as usize].get_or_insert_with(Default::default)
        }
    }

    /// The peer block of a `.cta_group::2` operation: cluster rank `rank ^ 1` [PTX ISA
    /// §9.7.16.5.1–2]. Error: a launch whose cluster has no such block.
    fn tc5_peer(&self, pc: u32, warp: &Warp, lane: usize, what: &str) -> Result<u32> {
        let n: u32 = self.launch.cluster.iter().product();
        let peer = self.rank ^ 1;
        if peer >= n {
            return Err(self.tc5_fault(pc, warp, lane, format!(
                "{what} with .cta_group::2 works on a CTA pair (cluster ranks 2i and 2i+1) [PTX ISA §9.7.16.5.1], but this launch's clusters hold {n} block(s), so cluster rank {} has no peer: launch with clusters of an even number of blocks (--cluster 2,1,1, __cluster_dims__(2,1,1)) or use .cta_group::1",
                self.rank
            )));
        }
        Ok(peer)
    }

    /// `n` bytes (≤ 16) at shared offset `a` of cluster rank `rank`'s block, little-endian
    /// (bounds were checked by the caller).
    fn smem_bits(&self, rank: u32, a: u64, n: usize) -> u128 {
        let img = self.image(Some(rank));
        let a = (a & 0xFFFF_FFFF) as usize;
        let mut v = 0u128;
        for i in (0..n).rev() {
            v = (v << 8) | *img.get(a + i).unwrap_or(&0) as u128;
        }
        v
    }

    /// The TMEM address of `a` for lane `l`.
    fn tmem_addr(warp: &Warp, a: &Addr, l: usize) -> u32 {
        a.base
            .map_or(0, |r| warp.regs[r as usize * WARP_SIZE + l])
            .wrapping_add(a.offset as u64) as u32
    }

    /// A shared-memory descriptor operand, checked against the shared window.
    fn tc5_desc(&self, warp: &Warp, pc: u32, l: usize, s: Src, what: &str) -> Result<Desc> {
        let raw = get(warp, s, l);
        let shared_len = self.shared.len() as u64;
        let d =
            sm100_desc(raw).map_err(|e| self.tc5_fault(pc, warp, l, format!("{what}'s {e}")))?;
        if d.start >= shared_len {
            return Err(self.tc5_fault(pc, warp, l, format!(
                "{what}'s matrix descriptor {raw:#018x} starts at shared address {:#x}, outside the block's {shared_len} bytes of shared memory (set the dynamic size with --dynamic-smem)",
                d.start
            )));
        }
        Ok(d)
    }

    /// Reports 16-byte shared-memory pieces (their addresses) as warp accesses of 16-byte
    /// lanes, 32 pieces an access, in the order given.
    fn emit_pieces(
        &self,
        warp: &Warp,
        pc: u32,
        site: u32,
        pieces: &[u64],
        sink: &mut dyn FnMut(u32, &WarpAccess, WarpOrigin),
    ) -> Result<()> {
        for chunk in pieces.chunks(WARP_SIZE) {
            let mut addrs = [0u64; WARP_SIZE];
            addrs[..chunk.len()].copy_from_slice(chunk);
            let mask = if chunk.len() == WARP_SIZE {
                u32::MAX
            } else {
                (1u32 << chunk.len()) - 1
            };
            self.emit(
                warp,
                pc,
                site,
                MemSpace::Shared,
                Op::Load,
                16,
                mask,
                &addrs,
                sink,
                None,
            )?;
        }
        Ok(())
    }

    /// One `tcgen05.cp`, issued by lane `l` (see the module's notes).
    fn tc5_cp(
        &mut self,
        warp: &mut Warp,
        pc: u32,
        l: usize,
        c: &Tc5Cp,
        sink: &mut dyn FnMut(u32, &WarpAccess, WarpOrigin),
    ) -> Result<()> {
        let t = Self::tmem_addr(warp, &c.taddr, l);
        let (lane0, col) = (t >> 16, t & 0xFFFF);
        let (rows, bytes, name) = match c.shape {
            Tc5CpShape::S128x256b => (128, 32, "128x256b"),
            Tc5CpShape::S4x256b => (4, 32, "4x256b"),
            Tc5CpShape::S128x128b => (128, 16, "128x128b"),
            Tc5CpShape::S64x128bWarpx2_02_13 => (64, 16, "64x128b.warpx2::02_13"),
            Tc5CpShape::S64x128bWarpx2_01_23 => (64, 16, "64x128b.warpx2::01_23"),
            Tc5CpShape::S32x128bWarpx4 => (32, 16, "32x128b.warpx4"),
        };
        let dests = |r: u32| -> Vec<u32> {
            match c.shape {
                Tc5CpShape::S128x256b | Tc5CpShape::S128x128b => vec![lane0 + r],
                Tc5CpShape::S4x256b => vec![lane0 + 32 * r],
                Tc5CpShape::S64x128bWarpx2_02_13 => vec![lane0 + r, lane0 + r + 64],
                Tc5CpShape::S64x128bWarpx2_01_23 => {
                    let x = lane0 + 64 * (r / 32) + r % 32;
                    vec![x, x + 32]
                }
                Tc5CpShape::S32x128bWarpx4 => (0..4).map(|q| lane0 + r + 32 * q).collect(),
            }
        };
        let what = format!("tcgen05.cp.{name}");
        let top = (0..rows).flat_map(dests).max().unwrap_or(0);
        if top as usize >= LANES || (rows == 128 && lane0 != 0) {
            return Err(self.tc5_fault(pc, warp, l, format!(
                "{what} at TMEM address {t:#x} reaches lane {top}: its rows fill lanes {} from lane {lane0}, past the 128 lanes (start at lane 0) [PTX ISA §9.7.16.9.2]",
                match c.shape { Tc5CpShape::S4x256b => "0, 32, 64 and 96", Tc5CpShape::S32x128bWarpx4 => "r + 32q (4 copies)", Tc5CpShape::S64x128bWarpx2_02_13 | Tc5CpShape::S64x128bWarpx2_01_23 => "of both warps of each pair", _ => "0 … 127" }
            )));
        }
        let words = bytes / 4;
        let mut ranks = vec![self.rank];
        if c.pair {
            ranks.push(self.tc5_peer(pc, warp, l, &what)?);
        }
        for &r in &ranks {
            self.tc5_allocated_at(pc, warp, l, &what, r, col, col + words)?;
        }
        let d = self.tc5_desc(warp, pc, l, c.desc, &what)?;
        // Row r's 16-byte chunk h: the canonical K-major layout of 4-byte elements.
        let at = |r: u32, h: u32| d.addr(false, 4, r as u64, 4 * h as u64) & 0xFFFF_FFFF;
        let mut pieces = Vec::with_capacity((rows * bytes / 16) as usize);
        for g in 0..rows.div_ceil(8) {
            for h in 0..bytes / 16 {
                for r in 8 * g..(8 * g + 8).min(rows) {
                    pieces.push(at(r, h));
                }
            }
        }
        let shared_len = self.shared.len() as u64;
        if let Some(&a) = pieces.iter().find(|&&a| a + 16 > shared_len) {
            return Err(self.tc5_fault(pc, warp, l, format!(
                "{what} (descriptor start {:#x}, LBO {}, SBO {}, {} swizzle) reads 16 bytes at shared address {a:#x}, past the block's {shared_len} bytes of shared memory",
                d.start, d.lbo, d.sbo, d.swizzle.name()
            )));
        }
        for _ in &ranks {
            self.emit_pieces(warp, pc, c.site, &pieces, sink)?;
        }
        if !self.prog.needs_memory {
            return Ok(());
        }
        for &rank in &ranks {
            for r in 0..rows {
                for h in 0..bytes / 16 {
                    let src = self.smem_bits(rank, at(r, h), 16);
                    let out = decompress(c.decompress, src);
                    let tm = self.tmem_mut(rank);
                    for lane in dests(r) {
                        for w in 0..4 {
                            let cell = lane as usize * COLUMNS + (col + 4 * h + w) as usize;
                            tm.cells[cell] = (out >> (32 * w)) as u32;
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// One `tcgen05.shift.down`, issued by lane `l`: in the 32-lane partition at the
    /// address (its lane a multiple of 32), rows 0 … 30 of the 8 columns (32 bytes) from the
    /// address's move down one row; row 0 keeps its value [PTX ISA §9.7.16.9.3].
    fn tc5_shift(
        &mut self,
        warp: &Warp,
        pc: u32,
        l: usize,
        taddr: &Addr,
        pair: bool,
    ) -> Result<()> {
        let t = Self::tmem_addr(warp, taddr, l);
        let (lane0, col) = (t >> 16, t & 0xFFFF);
        if lane0 % 32 != 0 || lane0 as usize >= LANES {
            return Err(self.tc5_fault(pc, warp, l, format!(
                "tcgen05.shift at TMEM address {t:#x}: its lane {lane0} must be a multiple of 32 below 128 [PTX ISA §9.7.16.9.3]"
            )));
        }
        let mut ranks = vec![self.rank];
        if pair {
            ranks.push(self.tc5_peer(pc, warp, l, "tcgen05.shift")?);
        }
        for &r in &ranks {
            self.tc5_allocated_at(pc, warp, l, "tcgen05.shift", r, col, col + 8)?;
        }
        for rank in ranks {
            let tm = self.tmem_mut(rank);
            for i in (1..32).rev() {
                for c in 0..8 {
                    let to = (lane0 + i) as usize * COLUMNS + (col + c) as usize;
                    tm.cells[to] = tm.cells[to - COLUMNS];
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
        let _ = global;
        let raw = get(warp, m.idesc, l) as u32;
        let id = Idesc::decode(m.kind, raw, m.pair, m.ws.is_some())
            .map_err(|e| self.tc5_fault(pc, warp, l, format!("tcgen05.mma: {e}")))?;
        let kk = k_of(m.kind);
        // The blocks holding the halves (M = 256 over a CTA pair: even, odd), their rows of
        // A and D and their columns of B.
        let halves: Vec<u32> = if m.pair {
            let peer = self.tc5_peer(pc, warp, l, "tcgen05.mma")?;
            vec![self.rank.min(peer), self.rank.max(peer)]
        } else {
            vec![self.rank]
        };
        let (hm, hn) = (id.m / halves.len() as u32, id.n / halves.len() as u32);
        let dt = Self::tmem_addr(warp, &m.d, l);
        if dt >> 16 != 0 {
            return Err(self.tc5_fault(pc, warp, l, format!(
                "tcgen05.mma: D's TMEM address {dt:#x} is at lane {}; D starts at lane 0 (its rows fill the data path's lanes)",
                dt >> 16
            )));
        }
        let dcol = dt & 0xFFFF;
        for &r in &halves {
            self.tc5_allocated_at(pc, warp, l, "tcgen05.mma's D", r, dcol, dcol + id.n)?;
        }
        let (pa, pb) = (packing(m.kind, id.a), packing(m.kind, id.b));
        for (p, mn, which) in [(pa, id.a_mn, "A"), (pb, id.b_mn, "B")] {
            if mn && !matches!(p, Packing::Plain(_)) {
                return Err(self.tc5_fault(pc, warp, l, format!(
                    "tcgen05.mma: {which} is MN-major (transposed) with 4- or 6-bit elements, which is not supported yet"
                )));
            }
        }
        let a_tmem = m.a_tmem.as_ref().map(|a| Self::tmem_addr(warp, a, l));
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
            for &r in &halves {
                self.tc5_allocated_at(pc, warp, l, "tcgen05.mma's A", r, c, c + 8)?;
            }
        }
        let a_desc = match m.a_desc {
            Some(s) => Some(self.tc5_desc(warp, pc, l, s, "tcgen05.mma: A")?),
            None => None,
        };
        let b_desc = self.tc5_desc(warp, pc, l, m.b_desc, "tcgen05.mma: B")?;
        // B from a .ws collector buffer: not read from shared memory.
        let b_reused = m.ws.is_some_and(|w| w.reuse);
        let cores_of = |d: &Desc, mn_major: bool, p: Packing, rows: u32| match p {
            Packing::Plain(s) => d.cores(mn_major, s, 0, rows as u64, 32 / s),
            _ => d.cores(false, 1, 0, rows as u64, 32),
        };
        let mut parts: Vec<(&str, Desc, Vec<[u64; 8]>)> = Vec::new();
        if let Some(d) = a_desc {
            parts.push(("A", d, cores_of(&d, id.a_mn, pa, hm)));
        }
        if !b_reused {
            parts.push(("B", b_desc, cores_of(&b_desc, id.b_mn, pb, hn)));
        }
        let shared_len = self.shared.len() as u64;
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
        for _ in &halves {
            for (_, _, cores) in &parts {
                self.emit_core_matrices(warp, pc, m.site, cores, sink)?;
            }
        }
        if !self.prog.needs_memory {
            return Ok(());
        }
        // Values: A (M×K), B (K×N), then D in TMEM.
        let (mm, n) = (id.m as usize, id.n as usize);
        let shared_elem = |ctx: &Self,
                           rank: u32,
                           d: &Desc,
                           ty: MmaElem,
                           p: Packing,
                           mn_major: bool,
                           mn: u64,
                           k: u64|
         -> f64 {
            match p {
                Packing::Plain(s) => value(
                    ty,
                    ctx.smem_bits(rank, d.addr(mn_major, s, mn, k), s as usize) as u64,
                ),
                Packing::Nibbles => {
                    let byte = ctx.smem_bits(rank, d.addr(false, 1, mn, k / 2), 1) as u64;
                    value(ty, (byte >> (4 * (k % 2))) & 0xF)
                }
                Packing::Padded(w) => {
                    let chunk = ctx.smem_bits(rank, d.addr(false, 1, mn, 16 * (k / 16)), 16);
                    value(
                        ty,
                        (((chunk >> (w as u64 * (k % 16))) as u64) & ((1 << w) - 1)) << 2,
                    )
                }
            }
        };
        let mut a = vec![0f64; mm * kk];
        for r in 0..mm {
            let (h, lr) = (r / hm as usize, (r % hm as usize) as u64);
            let rank = halves[h];
            for c in 0..kk {
                a[r * kk + c] = match (&a_desc, a_tmem) {
                    (Some(d), _) => shared_elem(self, rank, d, id.a, pa, id.a_mn, lr, c as u64),
                    (None, Some(at)) => {
                        // 8-bit containers for 4/6-bit types, two E2M1 a byte for mxf4*.
                        let (byte, nib) = match pa {
                            Packing::Plain(s) => (c as u64 * s, None),
                            Packing::Nibbles => (c as u64 / 2, Some(c as u64 % 2)),
                            Packing::Padded(_) => (c as u64, None),
                        };
                        let bytes = match pa {
                            Packing::Plain(s) => s,
                            _ => 1,
                        };
                        let x = self.tmem_ref(rank).map_or(0, |t| {
                            let cell = row_lane(hm, lr as u32) as usize * COLUMNS
                                + ((at & 0xFFFF) as u64 + byte / 4) as usize;
                            ((t.cells[cell] as u64) >> (8 * (byte % 4)))
                                & ((1u64 << (8 * bytes)) - 1)
                        });
                        value(id.a, nib.map_or(x, |q| (x >> (4 * q)) & 0xF))
                    }
                    (None, None) => 0.0,
                };
            }
        }
        let mut b = vec![0f64; kk * n];
        let collector = m.ws.and_then(|w| {
            w.reuse
                .then(|| {
                    self.tmem_ref(self.rank)
                        .and_then(|t| t.collectors[w.buffer as usize].clone())
                })
                .flatten()
        });
        if let Some(w) = m.ws.filter(|w| w.reuse) {
            match collector {
                Some((ck, cn, v)) if ck == kk && cn == n => b = v,
                _ => {
                    return Err(self.tc5_fault(pc, warp, l, format!(
                        "tcgen05.mma.ws.collector::b{}::{} reuses B from collector buffer b{}, but no earlier tcgen05.mma.ws of this K × N ({kk} × {n}) filled it (::fill first) [PTX ISA §9.7.16.10.9.3]",
                        w.buffer, if w.keep { "use" } else { "lastuse" }, w.buffer
                    )))
                }
            }
        } else {
            for c in 0..kk {
                for j in 0..n {
                    let (h, lj) = (j / hn as usize, (j % hn as usize) as u64);
                    b[c * n + j] =
                        shared_elem(self, halves[h], &b_desc, id.b, pb, id.b_mn, lj, c as u64);
                }
            }
        }
        if let Some(w) = m.ws {
            let keep = w.keep.then(|| (kk, n, b.clone()));
            self.tmem_mut(self.rank).collectors[w.buffer as usize] = keep;
        }
        if let Some(sc) = &m.scale {
            self.tc5_scale(warp, pc, l, &id, sc, kk, &mut a, &mut b)?;
        }
        let accumulate = get(warp, m.enable_d, l) & 1 != 0;
        let sign = if id.neg_a != id.neg_b { -1.0 } else { 1.0 };
        for r in 0..mm {
            let (h, lr) = (r / hm as usize, (r % hm as usize) as u32);
            let tm = self.tmem_mut(halves[h]);
            let base = row_lane(hm, lr) as usize * COLUMNS + dcol as usize;
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

    /// Multiplies A's and B's elements by their scale factors [PTX ISA §9.7.16.10.7]: K in
    /// `vec` chunks; row r of A takes byte `SFA_ID + j` (chunk j) of the 32-bit TMEM cell at
    /// D's lane of row r and the scale-A address's column; column n of B byte `SFB_ID + j`
    /// of the cell at lane n % 128 and column `scale-B column + n / 128` (see the module's
    /// notes). UE8M0 is 2^(x − 127), UE4M3 an E4M3 without sign.
    #[allow(clippy::too_many_arguments)]
    fn tc5_scale(
        &self,
        warp: &Warp,
        pc: u32,
        l: usize,
        id: &Idesc,
        sc: &Tc5Scale,
        kk: usize,
        a: &mut [f64],
        b: &mut [f64],
    ) -> Result<()> {
        let (sa, sb) = (
            Self::tmem_addr(warp, &sc.a, l),
            Self::tmem_addr(warp, &sc.b, l),
        );
        for (id_v, which) in [(id.sfa, "A"), (id.sfb, "B")] {
            let ok = match sc.vec {
                1 => true,
                2 => id_v % 2 == 0,
                _ => id_v == 0,
            };
            if !ok {
                return Err(self.tc5_fault(pc, warp, l, format!(
                    "tcgen05.mma: scale factor {which} ID {id_v} with .scale_vec::{}X: 1X takes 0 … 3 (a byte), 2X 0 or 2 (a half word), 4X 0 [PTX ISA §9.7.16.10.7.2–3]",
                    sc.vec
                )));
            }
        }
        if sb >> 16 != 0 || sa >> 16 != 0 {
            return Err(self.tc5_fault(
                pc,
                warp,
                l,
                format!(
                "tcgen05.mma: the scale factors' TMEM addresses {sa:#x}, {sb:#x} must be at lane 0"
            ),
            ));
        }
        let bcols = (id.n as usize).div_ceil(LANES) as u32;
        self.tc5_allocated(
            pc,
            warp,
            l,
            "tcgen05.mma's scale A",
            sa & 0xFFFF,
            (sa & 0xFFFF) + 1,
        )?;
        self.tc5_allocated(
            pc,
            warp,
            l,
            "tcgen05.mma's scale B",
            sb & 0xFFFF,
            (sb & 0xFFFF) + bcols,
        )?;
        let tm = self.tmem_ref(self.rank);
        let cell = |lane: usize, col: u32| tm.map_or(0, |t| t.cells[lane * COLUMNS + col as usize]);
        let factor = |word: u32, byte: u32| -> f64 {
            let x = ((word >> (8 * byte)) & 0xFF) as u64;
            if id.ue4m3 {
                Format::E4M3.decode(x & 0x7F)
            } else {
                Format::UE8M0.decode(x)
            }
        };
        let chunk = kk / sc.vec as usize;
        let n = id.n as usize;
        for r in 0..id.m as usize {
            let w = cell(row_lane(id.m, r as u32) as usize, sa & 0xFFFF);
            for c in 0..kk {
                a[r * kk + c] *= factor(w, id.sfa + (c / chunk) as u32);
            }
        }
        for j in 0..n {
            let w = cell(j % LANES, (sb & 0xFFFF) + (j / LANES) as u32);
            for c in 0..kk {
                b[c * n + j] *= factor(w, id.sfb + (c / chunk) as u32);
            }
        }
        Ok(())
    }
}

/// `tcgen05.cp`'s decompression of a 16-byte chunk (see the module's notes): element i of
/// 4 (`.b4x16_p64`) or 6 bits (`.b6x16_p32`) from bit `4i`/`6i` into byte i, at bits 2 and
/// up (the 8-bit container the f8f6f4 MMAs read, `exec/mma.rs`'s `E2M1Byte`, `E3M2`,
/// `E2M3`); none: the chunk as it is.
fn decompress(d: Option<Tc5Decompress>, src: u128) -> u128 {
    let w = match d {
        None => return src,
        Some(Tc5Decompress::B4) => 4,
        Some(Tc5Decompress::B6) => 6,
    };
    (0..16).fold(0u128, |acc, i| {
        acc | ((((src >> (w * i)) & ((1 << w) - 1)) << 2) << (8 * i))
    })
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
        let id = Idesc::decode(Tc5Kind::F16, 0x0821_0010, false, false).unwrap();
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

    /// Block-scaled descriptors [PTX ISA §9.7.16.4.2, Tables 43–44]: M/128 at bits 27–28,
    /// the scale IDs at 29–30 (A) and 4–5 (B), bit 23 the scale type; `.cta_group::2` and
    /// `.ws` shapes; the refused ones name the rule.
    #[test]
    fn block_scaled_pair_and_ws_descriptors() {
        // mxf8f6f4: E2M1 A (5), E4M3 B (0), N 64, UE8M0, M 128, SFA 3, SFB 1.
        let raw = 1 << 4 | 5 << 7 | 8 << 17 | 1 << 23 | 1 << 27 | 3 << 29;
        let id = Idesc::decode(Tc5Kind::MxF8f6f4, raw, false, false).unwrap();
        assert_eq!(
            (id.m, id.n, id.a, id.b, id.sfa, id.sfb, id.ue4m3),
            (128, 64, MmaElem::E2M1Byte, MmaElem::E4M3, 3, 1, false)
        );
        // UE4M3 (bit 23 clear) is mxf4nvf4's only.
        let e = Idesc::decode(
            Tc5Kind::MxF4,
            1 << 7 | 1 << 10 | 8 << 17 | 1 << 27,
            false,
            false,
        );
        assert!(e.unwrap_err().contains("mxf4nvf4's only"));
        // .cta_group::2: M 256 runs, M 128 (Layout B) is refused; N a multiple of 16.
        let f16 = |m: u32, n: u32| 0x10 | (n / 8) << 17 | (m / 16) << 24;
        assert_eq!(
            Idesc::decode(Tc5Kind::F16, f16(256, 32), true, false)
                .unwrap()
                .m,
            256
        );
        assert!(Idesc::decode(Tc5Kind::F16, f16(128, 32), true, false)
            .unwrap_err()
            .contains("Layout B"));
        assert!(Idesc::decode(Tc5Kind::F16, f16(256, 24), true, false)
            .unwrap_err()
            .contains("multiple of 16"));
        let scaled_pair = 1 << 7 | 1 << 10 | 4 << 17 | 1 << 23 | 2 << 27;
        assert!(Idesc::decode(Tc5Kind::MxF4, scaled_pair, true, false)
            .unwrap_err()
            .contains("not supported yet"));
        // .ws: N 64, 128 or 256; M 128 runs, 64 is refused (Layout E); the B shift bits pass.
        assert!(Idesc::decode(Tc5Kind::F16, f16(128, 64) | 1 << 30, false, true).is_ok());
        assert!(Idesc::decode(Tc5Kind::F16, f16(128, 32), false, true)
            .unwrap_err()
            .contains("N 64, 128 or 256"));
        assert!(Idesc::decode(Tc5Kind::F16, f16(64, 64), false, true)
            .unwrap_err()
            .contains("Layout"));
    }
}
