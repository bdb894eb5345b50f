//! Bulk copies and asynchronous stores of Hopper (CC 9.0+):
//!
//! - `cp.async.bulk` [PTX ISA §9.7.9.25.4.1]: `size` bytes (a multiple of 16) by one thread,
//!   global → shared, shared → global, shared::cta → shared::cluster (another block's
//!   shared memory, completing on its mbarrier), and global → shared::cluster with
//!   `.multicast::cluster`: the same bytes at the same shared offset of every block of the
//!   16-bit `ctaMask`, completing `size` transaction bytes on each one's mbarrier at the
//!   same offset, the global side read once.
//! - `cp.reduce.async.bulk` [PTX ISA §9.7.9.25.4.2]: the same movement, each destination
//!   element becoming `redOp(destination, source)`.
//! - `st.async` / `red.async` [PTX ISA §9.7.9.12, §9.7.13.6]: a thread's store (≤ 16
//!   bytes) or reduction into a block's shared memory of the cluster, completing its bytes
//!   on that block's mbarrier.
//!
//! Everything completes when the thread executes it (the executor has no time), so a later
//! wait on the mbarrier, or a later load, sees the bytes.
//!
//! Reporting: a bulk copy's two sides are warp-wide accesses of 16-byte lanes (512 bytes an
//! access), so the sectors are the bytes' own; a reduction's destination side is an
//! atomic access (`Op::Atomic`) of the same lanes. A shared side in another block of the
//! cluster is a `Space::DistributedShared` access, the own block's a `Space::Shared` one.
//! `st.async` is one store access of the instruction's width a lane, `red.async` one atomic.
//!
//! A multicast (`.multicast::cluster`, bulk or tensor) is, per destination block, the global
//! side read and a `Space::Shared` store at the same offset in that block: the crossbar
//! delivers the bytes to each destination SM and ncu counts the TMA load sectors once per
//! destination, while none of its distributed-shared-memory counters sees the copy
//! (measured on H100: a 1-KiB multicast into the 2 blocks of each of 2 clusters reads
//! `l1tex__m_xbar2l1tex_read_sectors_mem_global_op_tma_ld` = 128 sectors, L2 giving each
//! cluster's 1 KiB once, `…_tma_ld_dest_multicast` 16 requests of 128 B; every `dshared`
//! metric 0; tests/data/h100/bulk/).

use warpscope_model::{Op, Space, WarpAccess, WARP_SIZE};

use super::cluster::{Target, RANK_SHIFT};
use super::*;

/// The offset bits of a shared::cluster address (below the rank field).
pub(super) const OFFSET_MASK: u64 = (1 << RANK_SHIFT) - 1;

/// One destination of a bulk copy: its address (global, or a shared-window offset with the
/// block's rank field) and the mbarrier to complete (a shared::cluster offset).
struct Dest {
    addr: u64,
    mbar: Option<u64>,
}

impl BlockCtx<'_> {
    fn bulk_fault(&self, warp: &Warp, pc: u32, lane: usize, msg: String) -> Error {
        Error::Fault {
            at: self.at(pc),
            msg,
            thread: self.thread(warp, lane),
            block: self.block,
        }
    }

    /// The cluster ranks a `.multicast::cluster` `ctaMask` names (bit r: rank r), in rank
    /// order. Errors: a launch without a cluster, an empty mask, or a bit past the cluster.
    pub(super) fn cta_ranks(
        &self,
        warp: &Warp,
        pc: u32,
        lane: usize,
        mask: u64,
    ) -> Result<Vec<u32>> {
        let n = self.cluster_blocks();
        let mask = mask & 0xFFFF;
        if n == 1 && !self.launch.explicit_cluster {
            return Err(self.bulk_fault(warp, pc, lane, format!(
                ".multicast::cluster with ctaMask {mask:#06x}, but the launch has no thread-block cluster: launch with one (__cluster_dims__, --cluster X,Y,Z) or copy without .multicast::cluster"
            )));
        }
        if mask == 0 {
            return Err(self.bulk_fault(
                warp,
                pc,
                lane,
                ".multicast::cluster with ctaMask 0, which names no block of the cluster".into(),
            ));
        }
        if mask >> n != 0 {
            let r = 63 - (mask >> n).leading_zeros() + n;
            return Err(self.bulk_fault(warp, pc, lane, format!(
                ".multicast::cluster with ctaMask {mask:#06x}, whose bit {r} names cluster rank {r}, but the cluster has {n} block(s) (ranks 0 to {}): clear the bits past the cluster's size",
                n - 1
            )));
        }
        Ok((0..n).filter(|r| mask >> r & 1 == 1).collect())
    }

    /// The offset of a shared-window address in its block (the rank field dropped).
    pub(super) fn own_offset(&self, a: u64) -> u64 {
        match self.target(a) {
            Target::Own(o) | Target::Remote(_, o) => o,
        }
    }

    /// The cluster rank of the block a shared-window address names.
    pub(super) fn rank_of(&self, a: u64) -> u32 {
        match self.target(a) {
            Target::Own(_) => self.rank,
            Target::Remote(r, _) => r,
        }
    }

    /// Runs `cp.async.bulk` / `cp.reduce.async.bulk` ([`Instr::CpBulk`]) for the lanes
    /// `exec`, lane by lane.
    pub(super) fn cp_bulk(
        &mut self,
        warp: &mut Warp,
        pc: u32,
        exec: u32,
        i: &Instr,
        global: &mut Global,
        sink: &mut dyn FnMut(u32, &WarpAccess, WarpOrigin),
    ) -> Result<()> {
        let Instr::CpBulk {
            dst,
            src,
            dst_space,
            src_space,
            size,
            mbar,
            multicast,
            reduce,
            load_site,
            store_site,
        } = i
        else {
            return Ok(());
        };
        for lane in lanes(exec) {
            let at = |a: &Addr| {
                a.base
                    .map_or(0, |r| warp.regs[r as usize * WARP_SIZE + lane])
                    .wrapping_add(a.offset as u64)
            };
            let (from, to, bytes) = (at(src), at(dst), get(warp, *size, lane));
            let what = if reduce.is_some() {
                "cp.reduce.async.bulk"
            } else {
                "cp.async.bulk"
            };
            if bytes % 16 != 0 || from % 16 != 0 || to % 16 != 0 {
                return Err(self.bulk_fault(warp, pc, lane, format!(
                    "{what} of {bytes} bytes from {from:#x} to {to:#x}: the size and both addresses must be multiples of 16 [PTX ISA §9.7.9.25.4]"
                )));
            }
            let dests: Vec<Dest> = match multicast {
                None => vec![Dest {
                    addr: to,
                    mbar: mbar.as_ref().map(at),
                }],
                Some(m) => {
                    let ranks = self.cta_ranks(warp, pc, lane, get(warp, *m, lane))?;
                    let o = self.own_offset(to);
                    let mo = mbar.as_ref().map(|m| self.own_offset(at(m)));
                    ranks
                        .iter()
                        .map(|&r| {
                            let field = (r as u64 + 1) << RANK_SHIFT;
                            Dest {
                                addr: field | o,
                                mbar: mo.map(|mo| field | mo),
                            }
                        })
                        .collect()
                }
            };
            if *dst_space == MemSpace::Shared {
                for d in &dests {
                    if let Some(m) = d.mbar {
                        if self.rank_of(m) != self.rank_of(d.addr) {
                            return Err(self.bulk_fault(warp, pc, lane, format!(
                                "{what} into the shared memory of cluster rank {} completes on an mbarrier of rank {}: the mbarrier must be in the block the bytes land in [PTX ISA §9.7.9.25.4]",
                                self.rank_of(d.addr),
                                self.rank_of(m)
                            )));
                        }
                    }
                }
            }
            let dst_op = if reduce.is_some() {
                Op::Atomic
            } else {
                Op::Store
            };
            // A multicast's destinations are the hardware's shared stores in each block (see
            // the module's notes): its rows of another block are `Space::Shared` ones.
            let mc = multicast.is_some();
            let mut sink = |s: u32, a: &WarpAccess, o: WarpOrigin| multicast_row(mc, s, a, o, sink);
            // 512 bytes (32 lanes of 16) an access.
            let mut chunk = 0;
            while chunk < bytes {
                let n = ((bytes - chunk) / 16).min(WARP_SIZE as u64) as u32;
                let mask = if n == 32 { u32::MAX } else { (1u32 << n) - 1 };
                let mut s_addrs = [0u64; WARP_SIZE];
                for (l, a) in s_addrs.iter_mut().enumerate().take(n as usize) {
                    *a = from + chunk + 16 * l as u64;
                }
                for d in &dests {
                    // The source side, once per destination (a multicast's global read is
                    // counted per destination SM, measured on H100: see the module's notes).
                    let mut src_at = Located::default();
                    self.emit(
                        warp,
                        pc,
                        *load_site,
                        *src_space,
                        Op::Load,
                        16,
                        mask,
                        &s_addrs,
                        &mut sink,
                        Some(&mut src_at),
                    )?;
                    let mut d_addrs = [0u64; WARP_SIZE];
                    for (l, a) in d_addrs.iter_mut().enumerate().take(n as usize) {
                        *a = d.addr + chunk + 16 * l as u64;
                    }
                    let mut dst_at = Located::default();
                    self.emit(
                        warp,
                        pc,
                        *store_site,
                        *dst_space,
                        dst_op,
                        16,
                        mask,
                        &d_addrs,
                        &mut sink,
                        Some(&mut dst_at),
                    )?;
                    let step = reduce.map_or(8, |(_, ty)| ty.bytes as u64);
                    for l in lanes(mask) {
                        for k in (0..16).step_by(step as usize) {
                            let (s, t) = (src_at.image[l] + k, dst_at.image[l] + k);
                            let v = self.load(global, src_at.space[l], s, step as u32);
                            let v = match reduce {
                                None => v,
                                Some((op, ty)) => {
                                    let old = self.load(global, dst_at.space[l], t, step as u32);
                                    super::step::atom_value(*op, *ty, old, v, 0)
                                }
                            };
                            self.store(global, pc, dst_at.space[l], t, step as u32, v)?;
                        }
                    }
                }
                chunk += 16 * n as u64;
            }
            for d in &dests {
                if let Some(m) = d.mbar {
                    self.mbarrier(
                        warp,
                        pc,
                        1 << lane,
                        MbarOp::CompleteTx,
                        MemSpace::Shared,
                        None,
                        (None, m as i64),
                        Some(Src::Imm(bytes)),
                    )?;
                }
            }
        }
        Ok(())
    }

    /// Runs `cp.async.bulk.prefetch.L2` ([`Instr::BulkPrefetch`]) for the lanes `exec`,
    /// lane by lane: `size` bytes from `addr` as accesses of 16-byte lanes (the 512-byte
    /// aligned pieces of the range) of `Op::Prefetch`, which move nothing.
    pub(super) fn bulk_prefetch(
        &mut self,
        warp: &Warp,
        pc: u32,
        exec: u32,
        (addr, size): (Addr, Src),
        site: u32,
        sink: &mut dyn FnMut(u32, &WarpAccess, WarpOrigin),
    ) -> Result<()> {
        for lane in lanes(exec) {
            let from = addr
                .base
                .map_or(0, |r| warp.regs[r as usize * WARP_SIZE + lane])
                .wrapping_add(addr.offset as u64);
            let bytes = get(warp, size, lane);
            if !bytes.is_multiple_of(16) || !from.is_multiple_of(16) {
                return Err(self.bulk_fault(warp, pc, lane, format!(
                    "cp.async.bulk.prefetch of {bytes} bytes from {from:#x}: the size and the address must be multiples of 16 [PTX ISA §9.7.9.25.4.3]"
                )));
            }
            // The pieces end at 512-byte boundaries of the address, so that a sector is in
            // one piece only: the H100 counts the sectors the range covers (129 for 4,096
            // bytes from 16 past a sector, tests/data/h100/prefetch/).
            let (mut at, end) = (from, from + bytes);
            while at < end {
                let stop = (at / 512 + 1) * 512;
                let n = ((stop.min(end) - at) / 16) as u32;
                let mask = if n == 32 { u32::MAX } else { (1u32 << n) - 1 };
                let mut a = [0u64; WARP_SIZE];
                for (l, x) in a.iter_mut().enumerate().take(n as usize) {
                    *x = at + 16 * l as u64;
                }
                let g = MemSpace::Global;
                self.emit(warp, pc, site, g, Op::Prefetch, 16, mask, &a, sink, None)?;
                at += 16 * n as u64;
            }
        }
        Ok(())
    }

    /// Runs `st.async` / `red.async` ([`AsyncStore`]) for the lanes `exec`: the store or
    /// reduction, then `ty.bytes × srcs.len()` transaction bytes completed on each lane's
    /// mbarrier (which must be in the block the lane writes).
    pub(super) fn async_store(
        &mut self,
        warp: &mut Warp,
        pc: u32,
        exec: u32,
        a: &AsyncStore,
        global: &mut Global,
        sink: &mut dyn FnMut(u32, &WarpAccess, WarpOrigin),
    ) -> Result<()> {
        let w = a.ty.bytes as u32;
        let width = w * a.srcs.len() as u32;
        let addrs = self.addresses(warp, a.addr, exec);
        let bars = self.addresses(warp, a.mbar, exec);
        let name = if a.red.is_some() {
            "red.async"
        } else {
            "st.async"
        };
        for lane in lanes(exec) {
            if addrs[lane] >> 32 != 0 {
                return Err(self.bulk_fault(warp, pc, lane, format!(
                    "{name} to {:#x}, which is not a shared::cluster address (a 32-bit shared window offset, as mapa.shared::cluster gives it)",
                    addrs[lane]
                )));
            }
            let (r, m) = (self.rank_of(addrs[lane]), self.rank_of(bars[lane]));
            if r != m {
                return Err(self.bulk_fault(warp, pc, lane, format!(
                    "{name} into the shared memory of cluster rank {r} completes on an mbarrier of rank {m}: the mbarrier must be in the block the store writes [PTX ISA §9.7.9.12]"
                )));
            }
        }
        let op = if a.red.is_some() {
            Op::Atomic
        } else {
            Op::Store
        };
        let mut at = Located::default();
        self.emit(
            warp,
            pc,
            a.site,
            MemSpace::Shared,
            op,
            width,
            exec,
            &addrs,
            sink,
            Some(&mut at),
        )?;
        for lane in lanes(exec) {
            for (k, s) in a.srcs.iter().enumerate() {
                let off = at.image[lane] + k as u64 * w as u64;
                let b = get(warp, *s, lane);
                let v = match a.red {
                    None => b,
                    Some(op) => {
                        let old = self.load(global, at.space[lane], off, w);
                        super::step::atom_value(op, a.ty, old, b, 0)
                    }
                };
                self.store(global, pc, at.space[lane], off, w, v)?;
            }
        }
        self.mbarrier(
            warp,
            pc,
            exec,
            MbarOp::CompleteTx,
            MemSpace::Shared,
            None,
            (a.mbar.base, a.mbar.offset),
            Some(Src::Imm(width as u64)),
        )
    }
}

/// Hands `a` to `sink`, a multicast's (`mc`) store into another block of the cluster as a
/// `Space::Shared` row at the offset in that block (see the module's notes).
pub(super) fn multicast_row(
    mc: bool,
    site: u32,
    a: &WarpAccess,
    o: WarpOrigin,
    sink: &mut dyn FnMut(u32, &WarpAccess, WarpOrigin),
) {
    if mc && a.space == Space::DistributedShared {
        let mut b = *a;
        b.space = Space::Shared;
        sink(site, &b, o)
    } else {
        sink(site, a, o)
    }
}

/// The shared-window offset `a` with its rank field replaced by cluster rank `r`'s.
pub(super) fn at_rank(a: u64, r: u32) -> u64 {
    ((r as u64 + 1) << RANK_SHIFT) | (a & OFFSET_MASK)
}
