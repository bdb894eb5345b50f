//! `wgmma.mma_async` [PTX ISA §9.7.15.5.2]: a warpgroup (4 consecutive warps, warp index
//! divisible by 4 first) computes `D = A·B (+ D)` with A 64×K, B K×N, D 64×N.
//!
//! **How the four warps meet.** The executor runs a block's warps one after another, so a
//! warpgroup's warps reach a wgmma at different times. None has to wait for another: B
//! comes from shared memory, A from shared memory or from each warp's own registers, and
//! the accumulator fragment of warp `w` covers only rows `16·(w%4) … 16·(w%4)+15` of D
//! [PTX ISA §9.7.15.5.1.1, "register fragment layout for accumulator matrix D"]. So each warp,
//! when it executes the wgmma, computes its own 16 rows of D from its rows of A and all of B
//! and is done: the instruction completes at once, which is why `wgmma.fence`,
//! `wgmma.commit_group` and `wgmma.wait_group` are no-ops here. The warp's fragments are
//! those of `mma.m16n8kK` on its 16 rows (A: 4 registers; D: register `i` holds row
//! `g + 8·((i/2)%2)`, column `8·(i/4) + 2t + i%2` of the warp's rows, g = lane/4, t = lane%4;
//! `.f16` D packs two of those per register), as [`Layout`] gives them for an m16nNkK shape.
//! A whole warpgroup must execute it: a warp whose group is incomplete (the block ends inside
//! it) or that executes it with some lanes off is a fault naming thread and block.
//!
//! **Values.** Products and sums are taken in f64 (exact for every input type) and rounded
//! once to D's type; the hardware's accumulation order, intermediate precision and subnormal
//! handling are unspecified [PTX ISA §9.7.15.5.2 "Precision and rounding"], so float results
//! agree with the GPU's to rounding, not always bit for bit (on inputs whose sums are exact
//! they agree exactly: measured on an H100, `tests/data/h100/wgmma/`).
//!
//! **Shared-memory operands.** A matrix descriptor [PTX ISA §9.7.15.5.1.2.2] gives the
//! operand's start address (bits 0–13, ×16), leading- and stride-dimension byte offsets
//! (LBO bits 16–29, SBO bits 32–45, ×16), base offset (bits 49–51) and swizzle mode (bits
//! 62–63: 0 none/interleave, 1 128B, 2 64B, 3 32B). The operand is made of core matrices of
//! 8 rows × 16 bytes, placed by the canonical layouts [§9.7.15.5.1.2.1.3], with T = 16 bytes
//! of elements and P the swizzle width (16 with none):
//! - K-major: element (mn, k) at `(mn/8)·SBO + (mn%8)·16 + (k/T)·LBO + (k%T)·size` with no
//!   swizzle, else `(mn/8)·SBO + (mn%8)·P + k·size` (one wgmma's 32 bytes of K fit a row);
//! - MN-major (`imm-trans` 1, 16-bit types): `(mn%T)·size + (mn/T)·SBO + (k%8)·16 +
//!   (k/8)·LBO` with no swizzle, else `(mn%T)·size + ((mn/T)%(P/16))·16 + (mn/(T·P/16))·LBO +
//!   (k%8)·P + (k/8)·SBO`;
//! - then the swizzle, on the absolute shared address (CUTLASS's `Swizzle<b,4,3>`, b = 3, 2,
//!   1 for 128B, 64B, 32B): bits 4 … 4+b−1 (the 16-byte chunk within the row) XOR the row
//!   within the pattern, bits 7 … 7+b−1 — less the descriptor's base offset, which the ISA
//!   sets to `(pattern start >> 7) & 7` when the pattern does not start on its 1024/512/256-byte
//!   boundary (that reading of the base offset is the ISA's, not measured; every measured
//!   and CUTLASS descriptor has base offset 0).
//!
//! Each core matrix is read whole: its 8 rows of 16 bytes. What the hardware counts was
//! measured on an H100 (`tests/data/h100/wgmma/`, Nsight Compute 2025.3.1): for
//! `m64n64k16.f32.f16.f16`, each wgmma adds 32 to `l1tex__data_pipe_lsu_wavefronts_mem_shared`
//! (all of it `…_op_gmma`, and `…_cmd_read`), 4096 to `sm__sass_data_bytes_mem_shared_op_gmma`
//! and 4 to `l1tex__lsuin_requests_op_gmma` (one per warp) with A and B from shared memory,
//! whatever the layout (no swizzle, 32B, 64B, 128B, MN-major 128B, and every core matrix on
//! bank 0); with A in registers, 16 wavefronts and 2048 bytes. That is one wavefront per core
//! matrix (128 bytes), A read once (its 64 rows) and B read once per warpgroup, not once per
//! warp, and no bank conflicts: the 8 rows of a core matrix always cover the 32 banks once,
//! in every swizzle mode and at any 16-byte aligned start, so no valid descriptor can make
//! one conflict. warpscope reports them as warp accesses of 16-byte lanes at the site of the
//! wgmma (an `Op::Load` of shared memory): lanes `8q … 8q+7` read rows 0–7 of the access's
//! core matrix `q` at their (swizzled) addresses, so the shared-memory model costs each core
//! matrix as one quarter-warp phase of one wavefront, and the bytes are the operands' own
//! (M·K·size for A, N·K·size for B). Warp `w%4` reports A's core matrices of its own 16 rows
//! (4 of them: one access) and every fourth access of B's N/4 core matrices (access `j` by
//! warp `j % 4`), so a warpgroup reports A once and B once. The wavefronts and bytes equal
//! the measured counters; the requests do not: warpscope counts one per access (2 per warp
//! for m64n64k16 from shared memory, 8 a wgmma), the hardware one per warp (4).

use warpscope_model::{Op, WARP_SIZE};

use super::mma::{encode, field, value, Layout, Part};
use super::*;
use crate::instr::*;

/// The swizzle mode of a matrix descriptor (bits 62–63).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Swizzle {
    None,
    B32,
    B64,
    B128,
}

impl Swizzle {
    /// Bytes between the rows of a core matrix (the pattern's row width).
    fn row(self) -> u64 {
        match self {
            Swizzle::None => 16,
            Swizzle::B32 => 32,
            Swizzle::B64 => 64,
            Swizzle::B128 => 128,
        }
    }

    /// The mode as errors name it.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Swizzle::None => "no",
            Swizzle::B32 => "32B",
            Swizzle::B64 => "64B",
            Swizzle::B128 => "128B",
        }
    }

    /// Bits of the 16-byte chunk index the pattern XORs (b of `Swizzle<b,4,3>`).
    fn bits(self) -> u32 {
        match self {
            Swizzle::None => 0,
            Swizzle::B32 => 1,
            Swizzle::B64 => 2,
            Swizzle::B128 => 3,
        }
    }
}

/// A decoded shared-memory matrix descriptor [PTX ISA §9.7.15.5.1.2.2]: byte addresses and
/// offsets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Desc {
    pub start: u64,
    pub lbo: u64,
    pub sbo: u64,
    pub base_offset: u64,
    pub swizzle: Swizzle,
}

impl Desc {
    pub(crate) fn decode(d: u64) -> Desc {
        Desc {
            start: (d & 0x3FFF) << 4,
            lbo: ((d >> 16) & 0x3FFF) << 4,
            sbo: ((d >> 32) & 0x3FFF) << 4,
            base_offset: (d >> 49) & 7,
            swizzle: match d >> 62 {
                1 => Swizzle::B128,
                2 => Swizzle::B64,
                3 => Swizzle::B32,
                _ => Swizzle::None,
            },
        }
    }

    /// The swizzled address of `a`: its 16-byte chunk index XOR the row within the pattern.
    fn swizzle(&self, a: u64) -> u64 {
        let b = self.swizzle.bits();
        if b == 0 {
            return a;
        }
        let mask = (1u64 << b) - 1;
        let row = ((a >> 7).wrapping_sub(self.base_offset)) & mask;
        a ^ (row << 4)
    }

    /// The shared address of element (`mn`, `k`) of an operand of `size`-byte elements:
    /// `mn` is A's row (M) or B's column (N); `mn_major` is `imm-trans` 1.
    pub(crate) fn addr(&self, mn_major: bool, size: u64, mn: u64, k: u64) -> u64 {
        let t = 16 / size;
        let p = self.swizzle.row();
        let off = match (mn_major, self.swizzle) {
            (false, Swizzle::None) => {
                (mn / 8) * self.sbo + (mn % 8) * 16 + (k / t) * self.lbo + (k % t) * size
            }
            (false, _) => (mn / 8) * self.sbo + (mn % 8) * p + k * size,
            (true, Swizzle::None) => {
                (mn % t) * size + (mn / t) * self.sbo + (k % 8) * 16 + (k / 8) * self.lbo
            }
            (true, _) => {
                let w = p / 16;
                (mn % t) * size
                    + ((mn / t) % w) * 16
                    + (mn / (t * w)) * self.lbo
                    + (k % 8) * p
                    + (k / 8) * self.sbo
            }
        };
        self.swizzle(self.start.wrapping_add(off))
    }

    /// The core matrices (8 rows × 16 bytes: each row's address) of MN elements
    /// `mn0 … mn0 + rows − 1` by K elements `0 … k − 1`: K-major, each group of 8 MN
    /// elements by each 16 bytes of K; MN-major, each 16 bytes of MN by each group of 8 K.
    pub(crate) fn cores(
        &self,
        mn_major: bool,
        size: u64,
        mn0: u64,
        rows: u64,
        k: u64,
    ) -> Vec<[u64; 8]> {
        let t = 16 / size;
        let mut out = Vec::new();
        if mn_major {
            for i in 0..rows / t {
                for j in 0..k / 8 {
                    out.push(std::array::from_fn(|r| {
                        self.addr(true, size, mn0 + i * t, 8 * j + r as u64)
                    }));
                }
            }
        } else {
            for i in 0..rows / 8 {
                for c in 0..k / t {
                    out.push(std::array::from_fn(|r| {
                        self.addr(false, size, mn0 + 8 * i + r as u64, c * t)
                    }));
                }
            }
        }
        out
    }
}

/// What one operand's core-matrix rows depend on: the raw matrix descriptor, the
/// transpose, the element size (bytes) and the MN rows and K elements read.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub(super) struct CoreKey {
    raw: u64,
    mn0: u64,
    rows: u64,
    k: u64,
    size: u64,
    mn_major: bool,
}

impl CoreKey {
    fn new(raw: u64, mn_major: bool, size: u64, mn0: u64, rows: u64, k: u64) -> CoreKey {
        CoreKey {
            raw,
            mn0,
            rows,
            k,
            size,
            mn_major,
        }
    }
}

/// An operand's core-matrix rows ([`Desc::cores`]) and the end of the highest (byte
/// address + 16), shared by the instructions that read the same operand.
pub(super) struct Cores {
    pub rows: Vec<[u64; 8]>,
    pub end: u64,
}

/// The core-matrix rows of the descriptors a worker's blocks have used (at most
/// [`CoreMemo::CAPACITY`], then forgotten all at once): a pipelined matmul cycles through a
/// few per stage and warp, the same in every block (a descriptor holds the shared address,
/// not the block).
#[derive(Default)]
pub(super) struct CoreMemo(rustc_hash::FxHashMap<CoreKey, std::rc::Rc<Cores>>);

impl CoreMemo {
    const CAPACITY: usize = 4096;

    /// The rows for `key`, computed by `make` when not remembered.
    fn get(&mut self, key: CoreKey, make: impl FnOnce() -> Vec<[u64; 8]>) -> std::rc::Rc<Cores> {
        if let Some(c) = self.0.get(&key) {
            return c.clone();
        }
        let rows = make();
        let end = rows.iter().flatten().map(|&a| a + 16).max().unwrap_or(0);
        let c = std::rc::Rc::new(Cores { rows, end });
        if self.0.len() == Self::CAPACITY {
            self.0.clear();
        }
        self.0.insert(key, c.clone());
        c
    }
}

/// Bytes of one element of `e` (the 8-, 16- and 32-bit multiplicand types).
fn size(e: MmaElem) -> u64 {
    (e.bits() / 8).max(1) as u64
}

impl<'a> BlockCtx<'a> {
    /// One warp's part of a `wgmma.mma_async` (see the module's notes): its shared-memory
    /// reads reported, then, when memory is modelled, its 16 rows of D.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn wgmma(
        &mut self,
        warp: &mut Warp,
        pc: u32,
        exec: u32,
        global: &mut Global,
        w: &WgmmaInstr,
        sink: &mut dyn FnMut(u32, &WarpAccess, WarpOrigin),
    ) -> Result<()> {
        let lane0 = exec.trailing_zeros() as usize % WARP_SIZE;
        let fault = |ctx: &Self, lane: usize, msg: String| Error::Fault {
            at: ctx.at(pc),
            msg,
            thread: ctx.thread(warp, lane),
            block: ctx.block,
        };
        let group = warp.index / 4;
        let last_thread = (group * 4 + 4) * WARP_SIZE as u32;
        if last_thread > self.threads {
            return Err(fault(
                self,
                lane0,
                format!(
                    "wgmma.mma_async is executed by a warpgroup of 4 whole warps, but warp {} is in warpgroup {group}, threads {} … {}, and the block has {} threads: launch a multiple of 128 threads",
                    warp.index,
                    group * 128,
                    last_thread - 1,
                    self.threads
                ),
            ));
        }
        if exec != u32::MAX {
            let off = (!exec).trailing_zeros() as usize % WARP_SIZE;
            return Err(fault(
                self,
                off,
                format!(
                    "wgmma.mma_async.sync.aligned must be executed by every thread of the warpgroup, but lane {off} of warp {} does not execute it (active lanes {exec:#010x})",
                    warp.index
                ),
            ));
        }
        let wq = (warp.index % 4) as u64;
        let shared_len = self.shared.len() as u64;
        let desc = |ctx: &Self, s: Src, which: &str| -> Result<(u64, Desc)> {
            let raw = get(warp, s, lane0);
            let d = Desc::decode(raw);
            if d.start >= shared_len {
                return Err(fault(
                    ctx,
                    lane0,
                    format!(
                        "wgmma.mma_async: {which}'s matrix descriptor {raw:#018x} starts at shared address {:#x}, outside the block's {shared_len} bytes of shared memory (set the dynamic size with --dynamic-smem)",
                        d.start
                    ),
                ));
            }
            Ok((raw, d))
        };
        let a_desc = match w.a_desc {
            Some(s) => Some(desc(self, s, "A")?),
            None => None,
        };
        let (b_raw, b_desc) = desc(self, w.b_desc, "B")?;
        let (sa, sb) = (size(w.a), size(w.b));
        let k = w.k as u64;
        // A's core matrices of this warp's 16 rows (one access), then every fourth access of
        // B's; each list computed once per block for its descriptor (the warps of a
        // warpgroup and the stages of a pipeline use the same few).
        let a_cores = a_desc.map(|(raw, d)| {
            self.core_memo
                .get(CoreKey::new(raw, w.trans_a, sa, 16 * wq, 16, k), || {
                    d.cores(w.trans_a, sa, 16 * wq, 16, k)
                })
        });
        let b_cores = self
            .core_memo
            .get(CoreKey::new(b_raw, w.trans_b, sb, 0, w.n as u64, k), || {
                b_desc.cores(w.trans_b, sb, 0, w.n as u64, k)
            });
        // Every row the warpgroup reads must lie in the block's shared memory (checked for
        // all of B in each warp: each computes with all of it).
        for (which, d, cores) in [
            ("A", a_desc.as_ref().map(|(_, d)| d), a_cores.as_ref()),
            ("B", Some(&b_desc), Some(&b_cores)),
        ] {
            let (Some(d), Some(cores)) = (d, cores) else {
                continue;
            };
            if cores.end <= shared_len {
                continue;
            }
            if let Some(&end) = cores.rows.iter().flatten().find(|&&a| a + 16 > shared_len) {
                return Err(fault(
                    self,
                    lane0,
                    format!(
                        "wgmma.mma_async: {which} (descriptor start {:#x}, LBO {}, SBO {}, {} swizzle) reads 16 bytes at shared address {end:#x}, past the block's {shared_len} bytes of shared memory",
                        d.start,
                        d.lbo,
                        d.sbo,
                        d.swizzle.name()
                    ),
                ));
            }
        }
        if let Some(a) = &a_cores {
            self.emit_core_matrices(warp, pc, w.site, &a.rows, sink)?;
        }
        for (j, chunk) in b_cores.rows.chunks(4).enumerate() {
            if j as u64 % 4 == wq {
                self.emit_core_matrices(warp, pc, w.site, chunk, sink)?;
            }
        }
        if !self.prog.needs_memory {
            return Ok(());
        }
        let a_desc = a_desc.map(|(_, d)| d);
        self.wgmma_values(warp, exec, global, w, a_desc.as_ref(), &b_desc);
        Ok(())
    }

    /// Shared-memory reads of 8×16-byte core matrices (rows of `[u64; 8]` addresses), four a
    /// warp access of 16-byte lanes (8 lanes a core matrix): how wgmma's and tcgen05.mma's
    /// operand reads are reported.
    pub(super) fn emit_core_matrices(
        &self,
        warp: &Warp,
        pc: u32,
        site: u32,
        cores: &[[u64; 8]],
        sink: &mut dyn FnMut(u32, &WarpAccess, WarpOrigin),
    ) -> Result<()> {
        let mut addrs = [0u64; WARP_SIZE];
        for chunk in cores.chunks(4) {
            for (q, rows) in chunk.iter().enumerate() {
                addrs[8 * q..8 * q + 8].copy_from_slice(rows);
            }
            let lanes_used = if chunk.len() >= 4 {
                u32::MAX
            } else {
                (1u32 << (8 * chunk.len())) - 1
            };
            self.emit(
                warp,
                pc,
                site,
                MemSpace::Shared,
                Op::Load,
                16,
                lanes_used,
                &addrs,
                sink,
                None,
            )?;
        }
        Ok(())
    }

    /// This warp's 16 rows of `D = A·B (+ D)`, written to its D registers (every address
    /// read was checked when the accesses were emitted).
    fn wgmma_values(
        &self,
        warp: &mut Warp,
        exec: u32,
        global: &Global,
        w: &WgmmaInstr,
        a_desc: Option<&Desc>,
        b_desc: &Desc,
    ) {
        let (n, k) = (w.n as usize, w.k as usize);
        let wq = (warp.index % 4) as u64;
        let lay = Layout::mma(&MmaShape {
            api: MmaApi::Sync,
            m: 16,
            n: w.n,
            k: w.k,
            a: w.a,
            b: w.b,
            c: w.d,
            d: w.d,
            a_row: true,
            b_row: false,
            satfinite: w.satfinite,
            bit_and: false,
        });
        let element = |ty: MmaElem, addr: u64| {
            let bytes = size(ty) as u32;
            value(
                ty,
                self.load(global, Space::Shared, addr & 0xFFFF_FFFF, bytes),
            )
        };
        let sign = |neg: bool| if neg { -1.0 } else { 1.0 };
        // A: this warp's 16 rows × K.
        let mut a = vec![0f64; 16 * k];
        match a_desc {
            Some(d) => {
                for (r, row) in a.chunks_mut(k).enumerate() {
                    for (kk, x) in row.iter_mut().enumerate() {
                        let addr = d.addr(w.trans_a, size(w.a), 16 * wq + r as u64, kk as u64);
                        *x = element(w.a, addr);
                    }
                }
            }
            None => {
                let (bits, e) = (w.a.bits(), w.a.per_reg());
                for (j, s) in w.a_regs.iter().enumerate().take(lay.regs(Part::A) as usize) {
                    for l in 0..WARP_SIZE {
                        let v = get(warp, *s, l);
                        for x in 0..e {
                            let (row, col) = lay.pos(Part::A, l as u32, j as u32, x);
                            if let Some(slot) = a.get_mut(row as usize * k + col as usize) {
                                *slot = value(w.a, field(v, x, bits));
                            }
                        }
                    }
                }
            }
        }
        // B: K × N.
        let mut b = vec![0f64; k * n];
        for kk in 0..k {
            for col in 0..n {
                let addr = b_desc.addr(w.trans_b, size(w.b), col as u64, kk as u64);
                b[kk * n + col] = element(w.b, addr);
            }
        }
        let scale = sign(w.neg_a) * sign(w.neg_b);
        let (bits, e) = (w.d.bits(), w.d.per_reg());
        let nd = (lay.regs(Part::D) as usize).min(w.dregs.len());
        let mut out = vec![0u64; WARP_SIZE * nd];
        for l in lanes(exec) {
            let accumulate = get(warp, w.scale_d, l) & 1 != 0;
            for j in 0..nd {
                let c = warp.regs[w.dregs[j] as usize * WARP_SIZE + l];
                let mut o = 0u64;
                for x in 0..e {
                    let (row, col) = lay.pos(Part::D, l as u32, j as u32, x);
                    let (row, col) = (row as usize, col as usize);
                    let mut acc = 0f64;
                    for kk in 0..k {
                        acc += a[row * k + kk] * b[kk * n + col];
                    }
                    acc *= scale;
                    if accumulate {
                        acc += value(w.d, field(c, x, bits));
                    }
                    o |= field(encode(w.d, acc, w.satfinite), 0, bits) << (x * bits);
                }
                out[l * nd + j] = o;
            }
        }
        // Written after every lane's accumulator was read.
        for (j, r) in w.dregs.iter().enumerate().take(nd) {
            let base = *r as usize * WARP_SIZE;
            for l in lanes(exec) {
                warp.regs[base + l] = out[l * nd + j];
            }
            warp.uni[*r as usize] = false;
        }
    }
}
