//! Thread-block clusters (CC 9.0+) [PTX ISA §5.1.7, §9.7.9.22–23, §9.7.13.4; CUDA
//! Programming Guide "Thread Block Clusters", "Distributed Shared Memory"]: the blocks of
//! one cluster run together, their warps interleaved, so that they can wait for each other
//! (`barrier.cluster`) and read and write each other's shared memory.
//!
//! A `shared::cluster` address names a block of the cluster and an offset in its shared
//! memory. warpscope writes it as the 32-bit shared-window offset with the target block's
//! cluster rank plus one in bits 24–31 ([`RANK_SHIFT`]): bits 24–31 zero is the executing
//! block's own shared memory (every `shared::cta` address is also a `shared::cluster`
//! address of the own block, PTX ISA §5.1.7), so a block's shared memory may be at most
//! 16 MiB (far above every CC's 227 KB). A generic address of another block's shared
//! memory (generic `mapa`) is that value in the generic shared window.

use warpscope_model::{WarpAccess, WARP_SIZE};

use super::{mbarrier, BlockCtx, Warp, WarpOrigin, Yield};
use crate::decode::window;
use crate::error::{Error, Result};
use crate::memory::Global;

/// Bits 24–31 of a `shared::cluster` address hold the target block's cluster rank plus one
/// (0: the executing block).
pub const RANK_SHIFT: u32 = 24;

/// Blocks a cluster may hold at most on any compute capability: 16, the non-portable
/// maximum of CC 9.0 (CUDA Programming Guide, "Thread Block Clusters": 8 blocks is the
/// portable maximum, 16 with `cudaFuncAttributeNonPortableClusterSizeAllowed`). The
/// executor's own bound; the capability's rule is
/// `warpscope_model::LaunchLimits::check_cluster`.
pub const MAX_CLUSTER_BLOCKS: u32 = 16;

/// The state the blocks of one cluster share: their shared-memory images and the
/// cluster-wide barrier. Moved into the [`BlockCtx`] whose warps run (its own image then
/// lives in `BlockCtx::shared`, its slot here is empty) and back.
#[derive(Default)]
pub(super) struct Cluster {
    /// Shared-memory images by cluster rank.
    pub images: Vec<Vec<u8>>,
    /// Tensor memories by cluster rank (`exec/tcgen05.rs`; `.cta_group::2` reaches the
    /// peer block's), moved like the images.
    pub tmems: Vec<Option<Box<super::tcgen05::Tmem>>>,
    /// Completed phases of the cluster barrier (`barrier.cluster`).
    pub phase: u64,
    /// Some thread arrived on the open phase since the last completion check.
    pub pending: bool,
}

/// Where a shared-window offset (of a `shared::cluster` or `shared::cta` address) lies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Target {
    /// The executing block's own shared memory, at this offset.
    Own(u64),
    /// Another block's: its cluster rank and the offset.
    Remote(u32, u64),
}

impl BlockCtx<'_> {
    /// The block and offset a 32-bit shared-window offset names (bits above 31 ignored).
    pub(super) fn target(&self, off: u64) -> Target {
        let off = off & 0xFFFF_FFFF;
        let field = (off >> RANK_SHIFT) as u32;
        let o = off & ((1 << RANK_SHIFT) - 1);
        match field {
            0 => Target::Own(o),
            r if r - 1 == self.rank => Target::Own(o),
            r => Target::Remote(r - 1, o),
        }
    }

    /// The shared-memory image of cluster rank `rank` (`None`: the executing block).
    pub(super) fn image(&self, rank: Option<u32>) -> &[u8] {
        match rank {
            Some(r) if r != self.rank => self
                .cluster
                .images
                .get(r as usize)
                .map_or(&[][..], |v| &v[..]),
            _ => &self.shared,
        }
    }

    /// The shared-memory image of cluster rank `rank`, to write.
    pub(super) fn image_mut(&mut self, rank: Option<u32>) -> &mut Vec<u8> {
        match rank {
            Some(r) if r != self.rank && (r as usize) < self.cluster.images.len() => {
                &mut self.cluster.images[r as usize]
            }
            _ => &mut self.shared,
        }
    }

    /// Blocks in the cluster.
    pub(super) fn cluster_blocks(&self) -> u32 {
        self.launch.cluster.iter().product()
    }

    /// `mapa`: the address of `a`'s shared-memory location in the block of rank `rank`.
    /// Errors: a rank outside the cluster (PTX ISA §9.7.9.22 leaves it undefined).
    pub(super) fn mapa(
        &self,
        a: u64,
        rank: u64,
        generic: bool,
    ) -> std::result::Result<u64, String> {
        let n = self.cluster_blocks() as u64;
        if rank >= n {
            return Err(format!(
                "mapa to cluster rank {rank}, but the cluster has {n} block(s) (ranks 0 to {}); launch with a larger cluster (--cluster, __cluster_dims__) or check the rank",
                n - 1
            ));
        }
        let off = if generic {
            if a >> 60 != 1 {
                return Err(format!(
                    "generic mapa of {a:#x}, which is not a shared-memory address"
                ));
            }
            a - window::SHARED
        } else {
            a
        };
        let o = match self.target(off) {
            Target::Own(o) | Target::Remote(_, o) => o,
        };
        let v = ((rank + 1) << RANK_SHIFT) | o;
        Ok(if generic { window::SHARED + v } else { v })
    }

    /// `getctarank`: the cluster rank of the block whose shared memory `a` lies in.
    pub(super) fn getctarank(&self, a: u64, generic: bool) -> u64 {
        let off = if generic {
            a.wrapping_sub(window::SHARED)
        } else {
            a
        };
        match self.target(off) {
            Target::Own(_) => self.rank as u64,
            Target::Remote(r, _) => r as u64,
        }
    }

    /// `barrier.cluster.arrive` by the lanes `exec`.
    pub(super) fn cluster_arrive(&mut self, warp: &mut Warp, exec: u32) {
        warp.cluster_arrived |= exec;
        warp.cluster_wait = Some(self.cluster.phase);
        self.cluster.pending = true;
    }

    /// `barrier.cluster.wait`: whether the phase the warp arrived on has completed (a warp
    /// that did not arrive waits for the open phase, as the hardware's wait does).
    pub(super) fn cluster_wait_done(&self, warp: &mut Warp) -> bool {
        let p = *warp.cluster_wait.get_or_insert(self.cluster.phase);
        if self.cluster.phase <= p {
            return false;
        }
        warp.cluster_wait = None;
        true
    }
}

/// The warps of one block of a running cluster.
struct Block {
    warps: Vec<Warp>,
    done: Vec<bool>,
}

/// A warp that waits and did nothing else in a round: its block, its index, and on what.
#[derive(Clone, Copy)]
enum Waiting {
    Mbarrier(u64, mbarrier::State),
    Cluster,
}

/// Runs the blocks of one cluster (`ctxs`, by rank; one block when no cluster is launched)
/// to completion: round after round, every unfinished warp of every block, in rank then warp
/// order, runs until it reaches a barrier, waits or ends. A block barrier (`bar.sync`) holds
/// a warp until the next round (every warp of the block runs up to it in between); the
/// cluster barrier holds it until every non-exited thread of the cluster has arrived.
///
/// Errors: those of the warps' instructions, and a deadlock: every unfinished warp waits on
/// an mbarrier phase or cluster barrier phase that no warp can complete.
pub(super) fn run(
    ctxs: &mut [BlockCtx],
    global: &mut Global,
    sink: &mut dyn FnMut(u32, &WarpAccess, WarpOrigin),
) -> Result<()> {
    let mut cluster = Cluster {
        images: ctxs
            .iter_mut()
            .map(|c| std::mem::take(&mut c.shared))
            .collect(),
        tmems: ctxs.iter_mut().map(|c| c.tmem.take()).collect(),
        phase: 0,
        pending: false,
    };
    let mut blocks: Vec<Block> = ctxs
        .iter_mut()
        .map(|c| {
            let n = c.threads.div_ceil(WARP_SIZE as u32);
            Block {
                warps: (0..n).map(|w| c.new_warp(w)).collect(),
                done: vec![false; n as usize],
            }
        })
        .collect();
    let mut waiting: Vec<(usize, u32, Waiting)> = Vec::new();
    let result = loop {
        let mut any = false;
        let mut live = 0u64;
        let steps: u64 = ctxs.iter().map(|c| c.steps).sum();
        let phase = cluster.phase;
        waiting.clear();
        let mut failure = None;
        for b in 0..ctxs.len() {
            let (ctx, block) = (&mut ctxs[b], &mut blocks[b]);
            ctx.shared = std::mem::take(&mut cluster.images[b]);
            ctx.tmem = cluster.tmems[b].take();
            ctx.cluster = std::mem::take(&mut cluster);
            for (w, warp) in block.warps.iter_mut().enumerate() {
                if block.done[w] {
                    continue;
                }
                any = true;
                live += 1;
                if let Some(c) = &ctx.checks {
                    c.borrow_mut().turn(w as u32, ctx.steps);
                }
                match ctx.run_warp(warp, global, sink) {
                    Ok(Yield::Done) => block.done[w] = true,
                    Ok(Yield::Barrier | Yield::Spin) => {}
                    Ok(Yield::Blocked(off, s)) => {
                        waiting.push((b, w as u32, Waiting::Mbarrier(off, s)))
                    }
                    Ok(Yield::ClusterWait) => waiting.push((b, w as u32, Waiting::Cluster)),
                    Err(e) => {
                        failure = Some(e);
                        break;
                    }
                }
            }
            cluster = std::mem::take(&mut ctx.cluster);
            cluster.images[b] = std::mem::take(&mut ctx.shared);
            cluster.tmems[b] = ctx.tmem.take();
            if failure.is_some() {
                break;
            }
            if cluster.pending {
                settle(&mut cluster, &mut blocks);
            }
        }
        if let Some(e) = failure {
            break Err(e);
        }
        if !any {
            break Ok(());
        }
        // Every unfinished warp waits and none did anything but retry its wait, and no
        // cluster barrier phase completed: no arrival can ever come.
        let now: u64 = ctxs.iter().map(|c| c.steps).sum();
        if waiting.len() as u64 == live && now - steps == live && cluster.phase == phase {
            break Err(deadlock(ctxs, &blocks, &waiting));
        }
    };
    for ((ctx, img), block) in ctxs.iter_mut().zip(cluster.images).zip(blocks) {
        ctx.shared = img;
        // The next block's warps reuse these warps' storage (`BlockCtx::new_warp`).
        ctx.spare_warps = block.warps;
    }
    result
}

/// Completes the cluster barrier's open phase when every non-exited thread of the cluster
/// has arrived on it.
fn settle(cluster: &mut Cluster, blocks: &mut [Block]) {
    let all = blocks.iter().all(|b| {
        b.warps
            .iter()
            .zip(&b.done)
            .all(|(w, &done)| done || (w.live & !w.exited) & !w.cluster_arrived == 0)
    });
    if all {
        cluster.phase += 1;
        cluster.pending = false;
        for b in blocks.iter_mut() {
            for w in &mut b.warps {
                w.cluster_arrived = 0;
            }
        }
    }
}

/// The error for warps that wait on phases that cannot complete.
fn deadlock(ctxs: &[BlockCtx], blocks: &[Block], waiting: &[(usize, u32, Waiting)]) -> Error {
    let &(b, w, what) = &waiting[0];
    let ctx = &ctxs[b];
    let warp = &blocks[b].warps[w as usize];
    let pc = warp.stack.last().map_or(0, |e| e.pc);
    let lane = warp.stack.last().map_or(0, |e| {
        (e.mask & !warp.exited).trailing_zeros() as usize % WARP_SIZE
    });
    let ids: Vec<String> = waiting
        .iter()
        .filter(|x| x.0 == b)
        .map(|x| x.1.to_string())
        .collect();
    let msg = match what {
        Waiting::Mbarrier(off, s) => format!(
            "deadlock: warp(s) {} wait on the mbarrier at shared offset {off} for its phase of parity {}, which never completes ({} of {} arrivals and {} transaction bytes still pending, and every warp of the {} is waiting): check the arrival count given to mbarrier.init / cuda::barrier init and the bytes given to expect_tx",
            ids.join(", "),
            s.parity,
            s.pending,
            s.expected,
            s.tx,
            if ctxs.len() > 1 { "cluster" } else { "block" },
        ),
        Waiting::Cluster => {
            let (mut arrived, mut threads) = (0u32, 0u32);
            for blk in blocks {
                for (x, &done) in blk.warps.iter().zip(&blk.done) {
                    if !done {
                        let alive = x.live & !x.exited;
                        threads += alive.count_ones();
                        arrived += (alive & x.cluster_arrived).count_ones();
                    }
                }
            }
            format!(
                "deadlock: warp(s) {} wait at barrier.cluster.wait (cooperative_groups this_cluster().sync()) for phase {} of the cluster barrier, which never completes: {arrived} of the {threads} non-exited threads of the cluster's {} block(s) have arrived (barrier.cluster.arrive) and every other warp waits elsewhere: every thread of every block of the cluster must arrive before any can pass",
                ids.join(", "),
                ctx.cluster.phase.max(phase_of(blocks)),
                ctxs.len()
            )
        }
    };
    Error::Fault {
        at: ctx.at(pc),
        msg,
        thread: ctx.thread(warp, lane),
        block: ctx.block,
    }
}

/// The phase the waiting warps arrived on (for the message).
fn phase_of(blocks: &[Block]) -> u64 {
    blocks
        .iter()
        .flat_map(|b| b.warps.iter())
        .filter_map(|w| w.cluster_wait)
        .max()
        .unwrap_or(0)
}
