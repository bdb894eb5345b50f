//! Tensor-core instructions [PTX ISA §9.7.14]: `mma.sync`, `wmma.mma` and `movmatrix`
//! (warp-wide register arithmetic: they move no memory) and `wmma.load`/`wmma.store`
//! (memory instructions whose accesses are those ptxas emits for them). Sparse `mma.sp`
//! spreads its non-zeros into a dense A (`mma_sp.rs`) and computes D here.
//!
//! An `mma` gathers the warp's A, B and C fragment registers into matrices through the
//! fragment layout ([`Layout`]), computes `D = A·B + C` and scatters D back the same way.
//! Products and sums are taken in f64 (exact for every integer type, and for the products
//! of every float type but f64) and rounded once to D's type; the hardware's accumulation
//! order and intermediate precision are unspecified [PTX ISA §9.7.14.5.14], so float
//! results agree with the GPU's to rounding, not always bit for bit.
//!
//! `wmma` fragment layouts are unspecified by the ISA; the ones here are what the GPU
//! does. Measured on an H100 with nvcc 13.5 (`ptxas -arch=sm_90`; sm_80 gets the same
//! SASS): every global `wmma.load`/`wmma.store` of the `.f16`, `.bf16`, `.s8`, `.u8`,
//! `.tf32`, `.f32`, `.s32` and `.f64` shapes, each register of each lane, matches
//! [`Layout`] (for `.s4`/`.u4`/`.b1`, m8n8k32 and m8n8k128, the SASS addresses say the same);
//! and `mma.sync` of every shape and type here, `wmma.mma` of every shape and `movmatrix`
//! gave the H100's D bit for bit on inputs whose sums are exact:
//! - the fragments are those of `mma.m16n8kK` (m16n8k16 for f16/bf16/s8/u8, m16n8k8 for
//!   tf32, m8n8k4 for f64, m8n8k32/k128 for s4/u4/b1), one tile after another: m16n16k16 is
//!   two n8 tiles, m32n8k16 two m16 tiles; m8n32k16 is computed transposed (Dᵀ = Bᵀ·Aᵀ as
//!   an m32n8k16 product), so its A is laid out as that product's B, its B as its A and its
//!   accumulator as Dᵀ;
//! - a `.f16` A or B fragment names 8 registers whatever it holds: the distinct ones
//!   (4 for m16n16k16's A, 2 for m32n8k16's B, …) repeat, register `j` holding what
//!   register `j mod distinct` does.
//!
//! The SASS of nvcc 13.5 for sm_90 (and sm_80: the same instructions) loads and stores a
//! fragment as follows ([`BlockCtx::wmma`] emits one warp access per SASS instruction, of
//! its width; all 200 combinations of shape, type, fragment, layout and space checked):
//! - a register whose elements are consecutive in memory is one access of its 4 bytes
//!   (`LDG.E`), or 8 for `.f64`; two registers in a row (`j` even, `j + 1`) that continue
//!   each other are one access of both (`LDG.E.64`: a row-major f32 accumulator; `.128`:
//!   f64). `wmma.load.a.sync.aligned.row.m16n16k16.global.f16` is 4 `LDG.E`, lane `l` at
//!   rows `l/4`, `l/4 + 8` and columns `2·(l%4)`, `2·(l%4) + 8` of the tile;
//! - a 16-bit fragment stored the other way (`.col` A, `.row` B, or an accumulator across
//!   its pairs) is loaded as the transposed 8×8 blocks, one 32-bit word per lane per block
//!   (`LDG.E` then `MOVM.16.MT88`), lane `l` at row `l/4`, columns `2·(l%4)` of the block;
//! - an 8-bit fragment stored the other way is one byte access per element
//!   (`LDG.E.U8` then `PRMT`); a 32- or 64-bit element is always its own access unless
//!   merged as above;
//! - from `.shared`, 16-bit A and B fragments and 8-bit (and narrower) ones whose registers
//!   are consecutive in memory are loaded with `ldmatrix` (`LDSM.16.M88.{1,2,4}`, `.MT88`
//!   for the transposed 16-bit ones): groups of up to 4 (16-bit) or 2 (8-bit) registers in
//!   order, lane `8i + r` giving the address of row `r` of register `i`'s 8×16-byte block,
//!   16 bytes each. Everything else from shared memory (and every generic access, which
//!   `LD.E` serves) follows the global rules.

use crate::minifloat::Format;
use warpscope_model::{Op, WARP_SIZE};

use super::*;
use crate::instr::*;

/// An operand of `D = A·B + C`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Part {
    A,
    B,
    C,
    D,
}

/// Where each element of a fragment lives: element `s` of (distinct) register `j` of lane
/// `l` is element (row, column) of its operand's matrix (A: m×k, B: k×n, C and D: m×n).
///
/// `mma.sync` layouts [PTX ISA §9.7.14.5.x, the figures "MMA .mMnNkK fragment layout"],
/// with g = `l/4` and t = `l%4`, `e` elements per register:
/// - A: registers alternate rows g and g + 8 (m16; m8: row g only), then step 4e columns;
///   element `s` is column `e·t + s` of its step;
/// - B: column g; register `j` holds rows `e·t + s + 4e·j`;
/// - C/D: the lane's `i`-th element is row `g + 8·(i/2)`, column `2t + i%2`;
/// - `m8n8k4` on `.f16` is four independent 8×8×4 products, one per quad-pair (lanes
///   `4q … 4q+3` and `4q+16 … 4q+19`); they are placed block-diagonally here: quad-pair q
///   owns rows and columns `8q …` of C/D and `4q …` of k.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Layout {
    api: MmaApi,
    m: u32,
    n: u32,
    k: u32,
    /// Elements per register of A, B, C and D.
    per: [u32; 4],
    /// `mma.sync.m8n8k4` on `.f16`: the quad-pair layouts, with `.row` A and `.row` B.
    pub(crate) quad: Option<(bool, bool)>,
}

impl Layout {
    /// The layout of an `mma.sync`/`wmma.mma`.
    pub(crate) fn mma(s: &MmaShape) -> Layout {
        let quad = (s.api == MmaApi::Sync && (s.m, s.n, s.k) == (8, 8, 4) && s.a == MmaElem::F16)
            .then_some((s.a_row, s.b_row));
        Layout {
            api: s.api,
            m: s.m,
            n: s.n,
            k: s.k,
            per: [s.a, s.b, s.c, s.d].map(MmaElem::per_reg),
            quad,
        }
    }

    /// The layout of a `wmma.load`/`wmma.store` of `elem` elements.
    pub(crate) fn wmma(m: u32, n: u32, k: u32, elem: MmaElem) -> Layout {
        Layout {
            api: MmaApi::Wmma,
            m,
            n,
            k,
            per: [elem.per_reg(); 4],
            quad: None,
        }
    }

    /// Rows and columns of the matrices the fragments are gathered into: (m, k, n), the
    /// quad-pairs' four products side by side for `m8n8k4.f16`.
    pub(crate) fn dims(&self) -> (u32, u32, u32) {
        match self.quad {
            Some(_) => (32, 16, 32),
            None => (self.m, self.k, self.n),
        }
    }

    /// Elements of `p` one lane holds.
    fn elems(&self, p: Part) -> u32 {
        match (self.quad, p) {
            (Some(_), Part::A | Part::B) => 4,
            (Some(_), _) => 8,
            (None, Part::A) => self.m * self.k / 32,
            (None, Part::B) => self.k * self.n / 32,
            (None, _) => self.m * self.n / 32,
        }
    }

    /// Distinct registers of `p` per lane (0 for a shape the type cannot fill).
    pub(crate) fn regs(&self, p: Part) -> u32 {
        self.elems(p) / self.per[p as usize]
    }

    /// (row, column) of element `s` of distinct register `j` of lane `l` of `p`.
    pub(crate) fn pos(&self, p: Part, l: u32, j: u32, s: u32) -> (u32, u32) {
        let e = self.per[p as usize];
        if let Some((a_row, b_row)) = self.quad {
            return quad_pos(p, a_row, b_row, l, e, j, s);
        }
        // wmma m8n32k16: ptxas computes Dᵀ = Bᵀ·Aᵀ as an m32n8k16 product.
        let transposed = self.api == MmaApi::Wmma && (self.m, self.n) == (8, 32);
        match (p, transposed) {
            (Part::A, false) => a_pos(self.m, self.k, e, l, j, s),
            (Part::B, false) => b_pos(self.k, e, l, j, s),
            (_, false) => c_pos(self.n, e, l, j, s),
            (Part::A, true) => {
                let (k, m) = b_pos(self.k, e, l, j, s);
                (m, k)
            }
            (Part::B, true) => {
                let (n, k) = a_pos(self.n, self.k, e, l, j, s);
                (k, n)
            }
            (_, true) => {
                let (n, m) = c_pos(self.m, e, l, j, s);
                (m, n)
            }
        }
    }
}

/// A of `rows`×`k` in m16 tiles of the m16n8kK A fragment (or the one m8 block).
fn a_pos(rows: u32, k: u32, e: u32, l: u32, j: u32, s: u32) -> (u32, u32) {
    let (g, t) = (l / 4, l % 4);
    if rows == 8 {
        return (g, e * t + s + 4 * e * j);
    }
    let per_tile = (16 * k / (32 * e)).max(1);
    let (tile, jj) = (j / per_tile, j % per_tile);
    (16 * tile + g + 8 * (jj % 2), e * t + s + 4 * e * (jj / 2))
}

/// B of k×(8·tiles) in n8 tiles of the m16n8kK B fragment.
fn b_pos(k: u32, e: u32, l: u32, j: u32, s: u32) -> (u32, u32) {
    let (g, t) = (l / 4, l % 4);
    let per_tile = (8 * k / (32 * e)).max(1);
    let (tile, jj) = (j / per_tile, j % per_tile);
    (e * t + s + 4 * e * jj, 8 * tile + g)
}

/// C/D in 16×8 tiles (n tiles first) of the m16n8kK accumulator; an m8 shape's two
/// elements per lane are the first half of one.
fn c_pos(n: u32, e: u32, l: u32, j: u32, s: u32) -> (u32, u32) {
    let (g, t) = (l / 4, l % 4);
    let i = j * e + s;
    let (tile, i) = (i / 4, i % 4);
    let n_tiles = (n / 8).max(1);
    let (mt, nt) = (tile / n_tiles, tile % n_tiles);
    (16 * mt + g + 8 * (i / 2), 8 * nt + 2 * t + i % 2)
}

/// `mma.sync.m8n8k4` on `.f16` [PTX ISA §9.7.14.5.x "Matrix fragments for mma.m8n8k4 with
/// .f16 floating point type"; the same as CUTLASS's SM70 quad-pair layouts]: lane `l` is
/// thread `l%4 + 4·(l/16 % 2)` of quad-pair `(l/4) % 4`.
fn quad_pos(p: Part, a_row: bool, b_row: bool, l: u32, e: u32, j: u32, s: u32) -> (u32, u32) {
    let q = (l >> 2) & 3;
    let (t0, t1) = (l % 4, (l >> 4) & 1);
    let tq = t0 + 4 * t1;
    let v = j * e + s;
    match p {
        Part::A => {
            let (r, k) = if a_row { (tq, v) } else { (4 * t1 + v, t0) };
            (8 * q + r, 4 * q + k)
        }
        Part::B => {
            let (k, c) = if b_row { (t0, 4 * t1 + v) } else { (v, tq) };
            (4 * q + k, 8 * q + c)
        }
        _ => {
            let (r, c) = if e == 2 {
                (tq, v)
            } else {
                (
                    (l & 1) + (v & 2) + 4 * t1,
                    2 * ((l >> 1) & 1) + (v & 1) + (v & 4),
                )
            };
            (8 * q + r, 8 * q + c)
        }
    }
}

/// Bits `[s·bits, (s+1)·bits)` of a register.
#[inline]
pub(crate) fn field(v: u64, s: u32, bits: u32) -> u64 {
    if bits >= 64 {
        v
    } else {
        (v >> (s * bits)) & ((1u64 << bits) - 1)
    }
}

/// The value of one element's bits.
pub(crate) fn value(t: MmaElem, x: u64) -> f64 {
    use MmaElem::*;
    match t {
        F16 => half::f16::from_bits(x as u16).to_f64(),
        BF16 => half::bf16::from_bits(x as u16).to_f64(),
        // The hardware reads the sign, the 8 exponent bits and the top 10 mantissa bits.
        TF32 => f32::from_bits(x as u32 & 0xFFFF_E000) as f64,
        F32 => f32::from_bits(x as u32) as f64,
        F64 => f64::from_bits(x),
        E4M3 => Format::E4M3.decode(x & 0xFF),
        E5M2 => Format::E5M2.decode(x & 0xFF),
        E3M2 => Format::E3M2.decode((x >> 2) & 0x3F),
        E2M3 => Format::E2M3.decode((x >> 2) & 0x3F),
        E2M1Byte => Format::E2M1.decode((x >> 2) & 0xF),
        E2M1 => Format::E2M1.decode(x & 0xF),
        S8 => x as u8 as i8 as f64,
        U8 => (x & 0xFF) as f64,
        S4 => (((x as u8) << 4) as i8 >> 4) as f64,
        U4 => (x & 0xF) as f64,
        S32 => x as u32 as i32 as f64,
        B1 => (x & 1) as f64,
    }
}

/// D's bits for the exact (or f64) result `x`.
pub(crate) fn encode(t: MmaElem, x: f64, satfinite: bool) -> u64 {
    match t {
        MmaElem::F16 => half::f16::from_f64(x).to_bits() as u64,
        MmaElem::F64 => x.to_bits(),
        MmaElem::S32 => {
            let v = x as i64;
            if satfinite {
                v.clamp(i32::MIN as i64, i32::MAX as i64) as i32 as u32 as u64
            } else {
                v as i32 as u32 as u64
            }
        }
        _ => (x as f32).to_bits() as u64,
    }
}

/// A (m×k) and B (k×n) elements of the largest shapes: sparse m16n8k128 (s4) spreads A to
/// 16·128 and B is 128·8; wmma m32n8k16 A and m8n32k16 B are 512; the m8n8k4 quad-pairs
/// are 32·16 and 16·32.
pub(crate) const MAX_A: usize = 2048;
const MAX_B: usize = 1024;
/// C elements: the m8n8k4 quad-pairs' 32×32 (wmma's are 256).
const MAX_C: usize = 1024;
/// D registers per lane at most (wmma f32 and the m8n8k4 f32 quad-pairs: 8).
const MAX_D: usize = 8;

/// b1 A rows and B columns as bits: k ≤ 256.
const B1_WORDS: usize = 4;

impl<'a> BlockCtx<'a> {
    /// `mma`, `wmma.mma`, `movmatrix` ([`Instr::Tensor`]) and `wmma.load`/`wmma.store`
    /// ([`Instr::Wmma`]).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn tensor(
        &mut self,
        warp: &mut Warp,
        pc: u32,
        exec: u32,
        global: &mut Global,
        instr: &Instr,
        sink: &mut dyn FnMut(u32, &WarpAccess, WarpOrigin),
    ) -> Result<()> {
        match instr {
            Instr::Tensor(t) => {
                match &t.op {
                    TensorOp::Mma(s) if s.a == MmaElem::B1 => mma_b1(warp, exec, s, t),
                    TensorOp::Mma(s) => mma(warp, exec, s, t),
                    TensorOp::MmaScaled { shape, scale } => {
                        return self.mma_scaled(warp, pc, exec, shape, scale, t)
                    }
                    TensorOp::MmaSp {
                        shape,
                        e,
                        sel,
                        ordered,
                    } => return self.mma_sp(warp, pc, exec, t, shape, *e, *sel, *ordered),
                    TensorOp::MovTrans => movmatrix(warp, exec, t),
                }
                Ok(())
            }
            Instr::Wmma(w) => self.wmma(warp, pc, exec, global, w, sink),
            _ => Ok(()),
        }
    }

    /// `wmma.load`/`wmma.store`: the accesses ptxas emits (see the module's notes), then,
    /// when memory is modelled, the elements moved.
    fn wmma(
        &mut self,
        warp: &mut Warp,
        pc: u32,
        exec: u32,
        global: &mut Global,
        w: &WmmaInstr,
        sink: &mut dyn FnMut(u32, &WarpAccess, WarpOrigin),
    ) -> Result<()> {
        let lay = Layout::wmma(w.m, w.n, w.k, w.elem);
        let part = match w.frag {
            WmmaFrag::A => Part::A,
            WmmaFrag::B => Part::B,
            WmmaFrag::C => Part::C,
        };
        let n = lay.regs(part);
        let bits = w.elem.bits();
        let e = w.elem.per_reg();
        // Each lane's own base address and stride (they are uniform in a correct program).
        let base = self.addresses(warp, w.addr, u32::MAX);
        let (rows, cols) = match w.frag {
            WmmaFrag::A => (w.m, w.k),
            WmmaFrag::B => (w.k, w.n),
            WmmaFrag::C => (w.m, w.n),
        };
        let packed = if w.row { cols } else { rows } as u64;
        let mut ld = [packed; WARP_SIZE];
        if let Some(s) = w.stride {
            for (l, x) in ld.iter_mut().enumerate() {
                *x = get(warp, s, l) & 0xFFFF_FFFF;
            }
        }
        // (major, minor) in memory of element (row, col).
        let stored = |(r, c): (u32, u32)| if w.row { (r, c) } else { (c, r) };
        // Bit offset from lane `l`'s base of the element at (major, minor).
        let bit_at = |l: usize, (maj, min): (u32, u32)| -> u64 {
            (maj as u64)
                .wrapping_mul(ld[l])
                .wrapping_add(min as u64)
                .wrapping_mul(bits as u64)
        };
        let addr_at = |l: usize, p: (u32, u32)| base[l].wrapping_add(bit_at(l, p) / 8);
        let at = |l: u32, j: u32, s: u32| stored(lay.pos(part, l, j, s));
        // Whether each register's elements are consecutive in memory.
        let contiguous = (0..n).all(|j| {
            (0..WARP_SIZE as u32).all(|l| {
                let (maj, min) = at(l, j, 0);
                (1..e).all(|s| at(l, j, s) == (maj, min + s))
            })
        });
        let op = if w.store { Op::Store } else { Op::Load };
        let mut addrs = [0u64; WARP_SIZE];
        let ldsm = w.space == MemSpace::Shared
            && w.frag != WmmaFrag::C
            && (bits == 16 || (bits <= 8 && contiguous));
        if ldsm {
            // ldmatrix: lane 8i + r gives row r of register i's 8×16-byte block.
            let group = if bits == 16 { 4 } else { 2 };
            let mut j = 0;
            while j < n {
                let cnt = group.min(n - j);
                for i in 0..cnt {
                    let (maj, min) = at(0, j + i, 0);
                    for r in 0..8 {
                        let lane = (8 * i + r) as usize;
                        addrs[lane] = addr_at(lane, (maj + r, min));
                    }
                }
                let lanes_used = if cnt >= 4 {
                    u32::MAX
                } else {
                    (1u32 << (8 * cnt)) - 1
                };
                self.emit(
                    warp,
                    pc,
                    w.site,
                    w.space,
                    op,
                    16,
                    exec & lanes_used,
                    &addrs,
                    sink,
                    None,
                )?;
                j += cnt;
            }
        } else {
            let mut j = 0;
            while j < n {
                if contiguous {
                    let chunk = (e * bits / 8).max(1);
                    let merge = j % 2 == 0
                        && j + 1 < n
                        && (0..WARP_SIZE as u32).all(|l| {
                            let (maj, min) = at(l, j, 0);
                            at(l, j + 1, 0) == (maj, min + e)
                        });
                    for (l, a) in addrs.iter_mut().enumerate() {
                        *a = addr_at(l, at(l as u32, j, 0));
                    }
                    let width = if merge { 2 * chunk } else { chunk };
                    self.emit(
                        warp, pc, w.site, w.space, op, width, exec, &addrs, sink, None,
                    )?;
                    j += 1 + merge as u32;
                } else if bits == 16 {
                    // The transposed 8×8 block, a 32-bit word of row l/4 per lane (MOVM
                    // transposes it in registers).
                    let (maj, min) = at(0, j, 0);
                    for (l, a) in addrs.iter_mut().enumerate() {
                        let l32 = l as u32;
                        *a = addr_at(l, (maj + l32 / 4, min + 2 * (l32 % 4)));
                    }
                    self.emit(warp, pc, w.site, w.space, op, 4, exec, &addrs, sink, None)?;
                    j += 1;
                } else {
                    for s in 0..e {
                        for (l, a) in addrs.iter_mut().enumerate() {
                            *a = addr_at(l, at(l as u32, j, s));
                        }
                        self.emit(
                            warp,
                            pc,
                            w.site,
                            w.space,
                            op,
                            (bits / 8).max(1),
                            exec,
                            &addrs,
                            sink,
                            None,
                        )?;
                    }
                    j += 1;
                }
            }
        }
        if !self.prog.needs_memory || n == 0 {
            return Ok(());
        }
        // The elements moved (the accesses above have checked every byte).
        let bytes = (bits / 8).max(1);
        for l in lanes(exec) {
            for (jp, r) in w.regs.iter().enumerate() {
                let j = jp as u32 % n;
                if w.store {
                    if jp as u32 >= n {
                        continue;
                    }
                    let v = get(warp, *r, l);
                    for s in 0..e {
                        let p = at(l as u32, j, s);
                        let (sp, _, img) = self.locate(w.space, addr_at(l, p), warp, l);
                        self.store(global, pc, sp, img, bytes, field(v, s, bits))?;
                    }
                } else if let Src::Reg(d) = r {
                    let mut v = 0u64;
                    for s in 0..e {
                        let p = at(l as u32, j, s);
                        let (sp, _, img) = self.locate(w.space, addr_at(l, p), warp, l);
                        let x = self.load(global, sp, img, bytes);
                        let x = if bits < 8 {
                            field(x >> (bit_at(l, p) % 8), 0, bits)
                        } else {
                            x
                        };
                        v |= x << (s * bits);
                    }
                    warp.regs[*d as usize * WARP_SIZE + l] = v;
                }
            }
        }
        if !w.store {
            for r in &w.regs {
                if let Src::Reg(d) = r {
                    warp.uni[*d as usize] = false;
                }
            }
        }
        Ok(())
    }
}

/// `D = A·B + C` over the warp: every lane's fragments gathered (a warp-wide instruction
/// reads all 32 lanes), D written to the executing lanes.
fn mma(warp: &mut Warp, exec: u32, s: &MmaShape, t: &TensorInstr) {
    let lay = Layout::mma(s);
    let (_, kk, _) = lay.dims();
    let mut a = [0f64; MAX_A];
    gather(warp, &lay, Part::A, s.a, &t.a, kk as usize, &mut a);
    product(warp, exec, s, &lay, t, &a);
}

/// Reads fragment `p` (registers `regs` of type `ty`) of every lane into the row-major
/// matrix `m` of `stride` columns.
pub(super) fn gather(
    warp: &Warp,
    lay: &Layout,
    p: Part,
    ty: MmaElem,
    regs: &[Src],
    stride: usize,
    m: &mut [f64],
) {
    let (bits, e) = (ty.bits(), ty.per_reg());
    for (j, r) in regs.iter().enumerate().take(lay.regs(p) as usize) {
        for l in 0..WARP_SIZE {
            let v = get(warp, *r, l);
            for x in 0..e {
                let (row, col) = lay.pos(p, l as u32, j as u32, x);
                if let Some(slot) = m.get_mut(row as usize * stride + col as usize) {
                    *slot = value(ty, field(v, x, bits));
                }
            }
        }
    }
}

/// `D = A·B + C` for the dense A (`m`×`k` row-major, as `lay.dims()` gives them): B and C
/// gathered from their fragments, D written to the executing lanes.
pub(super) fn product(
    warp: &mut Warp,
    exec: u32,
    s: &MmaShape,
    lay: &Layout,
    t: &TensorInstr,
    a: &[f64],
) {
    let (_, _, cols) = lay.dims();
    let mut b = [0f64; MAX_B];
    gather(warp, lay, Part::B, s.b, &t.b, cols as usize, &mut b);
    product_with(warp, exec, s, lay, t, a, &b);
}

/// [`product`] with B gathered (and scaled) by the caller (`k`×`n` row-major).
fn product_with(
    warp: &mut Warp,
    exec: u32,
    s: &MmaShape,
    lay: &Layout,
    t: &TensorInstr,
    a: &[f64],
    b: &[f64],
) {
    let (_, kk, cols) = lay.dims();
    let (kk, cols) = (kk as usize, cols as usize);
    let mut c = [0f64; MAX_C];
    gather(warp, lay, Part::C, s.c, &t.c, cols, &mut c);
    let (bits, e) = (s.d.bits(), s.d.per_reg());
    let nd = (lay.regs(Part::D) as usize).min(t.d.len()).min(MAX_D);
    let mut out = [[0u64; MAX_D]; WARP_SIZE];
    for l in lanes(exec) {
        for (j, o) in out[l].iter_mut().enumerate().take(nd) {
            for x in 0..e {
                let (row, col) = lay.pos(Part::D, l as u32, j as u32, x);
                let (row, col) = (row as usize, col as usize);
                // A quad-pair multiplies its own k range only.
                let ks = match lay.quad {
                    Some(_) => 4 * (row / 8)..4 * (row / 8) + 4,
                    None => 0..kk,
                };
                let mut acc = 0f64;
                for k in ks {
                    let (x_a, x_b) = (a.get(row * kk + k), b.get(k * cols + col));
                    acc += x_a.copied().unwrap_or(0.0) * x_b.copied().unwrap_or(0.0);
                }
                acc += c.get(row * cols + col).copied().unwrap_or(0.0);
                *o |= field(encode(s.d, acc, s.satfinite), 0, bits) << (x * bits);
            }
        }
    }
    write_out(warp, exec, &t.d[..nd], &out);
}

impl BlockCtx<'_> {
    /// A block-scaled `mma.sync` ([`TensorOp::MmaScaled`]): A and B gathered, each chunk
    /// of K of A's rows and B's columns multiplied by its scale factor ([`BlockScale`]),
    /// then `D = A·B + C` as [`product`] computes it. Errors: a selector the ISA does not
    /// allow (byte-id past the register for the chunks, thread-id past the quad's half).
    fn mma_scaled(
        &self,
        warp: &mut Warp,
        pc: u32,
        exec: u32,
        s: &MmaShape,
        sc: &BlockScale,
        t: &TensorInstr,
    ) -> Result<()> {
        let lay = Layout::mma(s);
        let (m, kk, n) = lay.dims();
        let (m, kk, n) = (m as usize, kk as usize, n as usize);
        let mut a = [0f64; MAX_A];
        gather(warp, &lay, Part::A, s.a, &t.a, kk, &mut a);
        let Some(lane) = lanes(exec).next() else {
            return Ok(());
        };
        let vec = sc.vec as u64;
        let sel = |byte: Src, thread: Src, threads: u64| -> Result<(u64, u64)> {
            let (b, th) = (
                get(warp, byte, lane) & 0xFFFF,
                get(warp, thread, lane) & 0xFFFF,
            );
            let bytes_ok = match vec {
                1 => b < 4,
                2 => b == 0 || b == 2,
                _ => b == 0,
            };
            if !bytes_ok || th >= threads {
                return Err(Error::Fault {
                    at: self.at(pc),
                    msg: format!(
                        "mma.block_scale with selector {{byte-id {b}, thread-id {th}}}: .scale_vec::{vec}X takes byte-id {} and thread-id 0 to {} [PTX ISA §9.7.14.3]",
                        match vec {
                            1 => "0 to 3",
                            2 => "0 or 2",
                            _ => "0",
                        },
                        threads - 1
                    ),
                    thread: self.thread(warp, lane),
                    block: self.block,
                });
            }
            Ok((b, th))
        };
        let (ab, at) = sel(sc.sfa_byte, sc.sfa_thread, 2)?;
        let (bb, bt) = sel(sc.sfb_byte, sc.sfb_thread, 4)?;
        let factor = |reg: Src, l: u64, byte: u64| -> f64 {
            let x = (get(warp, reg, l as usize) >> (8 * byte)) & 0xFF;
            if sc.ue4m3 {
                Format::E4M3.decode(x & 0x7F)
            } else {
                Format::UE8M0.decode(x)
            }
        };
        let chunk = kk / vec as usize;
        for row in 0..m {
            let l = 4 * (row as u64 % 8) + 2 * at + row as u64 / 8;
            for k in 0..kk {
                a[row * kk + k] *= factor(sc.sfa, l, ab + (k / chunk) as u64);
            }
        }
        let mut b = [0f64; MAX_B];
        gather(warp, &lay, Part::B, s.b, &t.b, n, &mut b);
        for col in 0..n {
            let l = 4 * col as u64 + bt;
            for k in 0..kk {
                b[k * n + col] *= factor(sc.sfb, l, bb + (k / chunk) as u64);
            }
        }
        product_with(warp, exec, s, &lay, t, &a, &b);
        Ok(())
    }
}

/// `.b1` products: D = C + popc(A row AND/XOR B column) over k.
fn mma_b1(warp: &mut Warp, exec: u32, s: &MmaShape, t: &TensorInstr) {
    let lay = Layout::mma(s);
    let (rows, _, cols) = lay.dims();
    let mut a = [[0u64; B1_WORDS]; 16];
    let mut b = [[0u64; B1_WORDS]; 8];
    let mut c = [0i64; 16 * 8];
    let set = |m: &mut [[u64; B1_WORDS]], i: u32, k: u32, bit: u64| {
        if let Some(row) = m.get_mut(i as usize) {
            if let Some(w) = row.get_mut(k as usize / 64) {
                *w |= bit << (k % 64);
            }
        }
    };
    for l in 0..WARP_SIZE as u32 {
        for (j, r) in t.a.iter().enumerate().take(lay.regs(Part::A) as usize) {
            let v = get(warp, *r, l as usize);
            for x in 0..32 {
                let (row, k) = lay.pos(Part::A, l, j as u32, x);
                set(&mut a, row, k, field(v, x, 1));
            }
        }
        for (j, r) in t.b.iter().enumerate().take(lay.regs(Part::B) as usize) {
            let v = get(warp, *r, l as usize);
            for x in 0..32 {
                let (k, col) = lay.pos(Part::B, l, j as u32, x);
                set(&mut b, col, k, field(v, x, 1));
            }
        }
        for (j, r) in t.c.iter().enumerate().take(lay.regs(Part::C) as usize) {
            let (row, col) = lay.pos(Part::C, l, j as u32, 0);
            if row < rows && col < cols {
                c[(row * cols + col) as usize] = get(warp, *r, l as usize) as u32 as i32 as i64;
            }
        }
    }
    let nd = (lay.regs(Part::D) as usize).min(t.d.len()).min(MAX_D);
    let mut out = [[0u64; MAX_D]; WARP_SIZE];
    for l in lanes(exec) {
        for (j, o) in out[l].iter_mut().enumerate().take(nd) {
            let (row, col) = lay.pos(Part::D, l as u32, j as u32, 0);
            let (row, col) = ((row as usize).min(15), (col as usize).min(7));
            let ones: u32 = a[row]
                .iter()
                .zip(&b[col])
                .map(|(x, y)| if s.bit_and { x & y } else { x ^ y }.count_ones())
                .sum();
            let v = c[row * cols as usize + col] + ones as i64;
            *o = encode(MmaElem::S32, v as f64, s.satfinite);
        }
    }
    write_out(warp, exec, &t.d[..nd], &out);
}

/// `movmatrix.sync.aligned.m8n8.trans.b16`: lane `l` receives row `l/4` of the transpose,
/// i.e. elements (2·(l%4) + h, l/4) of the source, which lane `4·row + col/2` holds.
fn movmatrix(warp: &mut Warp, exec: u32, t: &TensorInstr) {
    let (Some(&src), Some(&d)) = (t.a.first(), t.d.first()) else {
        return;
    };
    let mut vals = [0u64; WARP_SIZE];
    for (l, v) in vals.iter_mut().enumerate() {
        *v = get(warp, src, l);
    }
    let mut out = [[0u64; MAX_D]; WARP_SIZE];
    for l in lanes(exec) {
        let col = l / 4;
        for h in 0..2 {
            let row = 2 * (l % 4) + h;
            let from = vals[4 * row + col / 2];
            out[l][0] |= field(from, (col % 2) as u32, 16) << (16 * h);
        }
    }
    write_out(warp, exec, &[d], &out);
}

/// Writes the computed registers (after every source was read: D may name C's registers).
fn write_out(warp: &mut Warp, exec: u32, d: &[Reg], out: &[[u64; MAX_D]; WARP_SIZE]) {
    for (j, r) in d.iter().enumerate() {
        let base = *r as usize * WARP_SIZE;
        for l in lanes(exec) {
            warp.regs[base + l] = out[l][j];
        }
        warp.uni[*r as usize] = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(m: u32, n: u32, k: u32, a: MmaElem, c: MmaElem) -> MmaShape {
        MmaShape {
            api: MmaApi::Sync,
            m,
            n,
            k,
            a,
            b: a,
            c,
            d: c,
            a_row: true,
            b_row: false,
            satfinite: false,
            bit_and: false,
        }
    }

    /// Every element of every operand is held by exactly one (lane, register, element).
    #[test]
    fn sync_layouts_cover_each_matrix_once() {
        use MmaElem::*;
        let shapes = [
            shape(16, 8, 16, F16, F32),
            shape(16, 8, 8, F16, F16),
            shape(16, 8, 8, TF32, F32),
            shape(16, 8, 4, TF32, F32),
            shape(16, 8, 32, S8, S32),
            shape(16, 8, 16, S8, S32),
            shape(16, 8, 64, S4, S32),
            shape(8, 8, 16, U8, S32),
            shape(8, 8, 32, U4, S32),
            shape(8, 8, 128, B1, S32),
            shape(16, 8, 256, B1, S32),
            shape(8, 8, 4, F64, F64),
            shape(16, 8, 16, F64, F64),
            shape(16, 8, 32, E4M3, F32),
            shape(8, 8, 4, F16, F32),
            shape(8, 8, 4, F16, F16),
        ];
        for s in shapes {
            let lay = Layout::mma(&s);
            let (m, k, n) = lay.dims();
            for (p, rows, cols, ty) in [
                (Part::A, m, k, s.a),
                (Part::B, k, n, s.b),
                (Part::C, m, n, s.c),
            ] {
                let mut seen = std::collections::HashSet::new();
                for l in 0..32 {
                    for j in 0..lay.regs(p) {
                        for x in 0..ty.per_reg() {
                            let (r, c) = lay.pos(p, l, j, x);
                            assert!(r < rows && c < cols, "{s:?} {p:?} ({r}, {c})");
                            assert!(seen.insert((r, c)), "{s:?} {p:?} ({r}, {c}) twice");
                        }
                    }
                }
                let want = match lay.quad {
                    // Four 8×4 / 4×8 / 8×8 blocks.
                    Some(_) => [128, 128, 256][p as usize],
                    None => rows * cols,
                };
                assert_eq!(seen.len() as u32, want, "{s:?} {p:?}");
            }
        }
    }

    #[test]
    fn fp8_values() {
        assert_eq!(value(MmaElem::E4M3, 0x38), 1.0);
        assert_eq!(value(MmaElem::E4M3, 0xC0), -2.0);
        assert_eq!(value(MmaElem::E4M3, 0x7E), 448.0);
        assert!(value(MmaElem::E4M3, 0x7F).is_nan());
        assert_eq!(value(MmaElem::E4M3, 0x01), 2f64.powi(-9));
        assert_eq!(value(MmaElem::E5M2, 0x3C), 1.0);
        assert_eq!(value(MmaElem::E5M2, 0x7B), 57344.0);
        assert_eq!(value(MmaElem::E5M2, 0x7C), f64::INFINITY);
        assert_eq!(value(MmaElem::S4, 0xF), -1.0);
    }
}
