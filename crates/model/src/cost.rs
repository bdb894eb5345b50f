//! The counters of one access and the entry point that applies the rules of one compute
//! capability to one warp access.

use crate::access::{Space, WarpAccess};
use crate::arch::Arch;
use serde::Serialize;

/// Caching of global loads on CC 2.x/3.x (`-Xptxas -dlcm=`) [PG5 F.4.2, F.5.2; seed 003].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum L1Mode {
    /// The architecture's default: L1 on 2.x, L2 only on 3.x.
    #[default]
    Default,
    /// Cache in L1 and L2: 128-byte line transactions.
    Ca,
    /// Cache in L2 only: 32-byte segment transactions.
    Cg,
}

/// Shared-memory bank width on CC 3.x (`cudaDeviceSetSharedMemConfig`) [PG5 F.5.3].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub enum SmemBankMode {
    /// 4-byte banks (the default).
    #[default]
    FourByte,
    /// 8-byte banks.
    EightByte,
}

/// Options that change how accesses are costed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Config {
    pub l1: L1Mode,
    pub smem_bank_mode: SmemBankMode,
}

/// The counters of one warp access, or the sum over many (see the reference's "Words").
///
/// Units: `transaction_bytes` and `bytes_requested` in bytes; `sectors` = transaction_bytes / 32.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Cost {
    /// Warp-level executions with at least one active lane.
    pub executions: u64,
    /// Requests after the architecture's split (half-warps on 1.x, 8/16-byte splits on
    /// 2.x/3.x, one per instruction from 5.x; for constant memory, one per distinct address).
    pub requests: u64,
    /// Memory transactions (global/local); on 5.x+ one per sector.
    pub transactions: u64,
    /// Bytes moved by those transactions.
    pub transaction_bytes: u64,
    /// `transaction_bytes / 32`.
    pub sectors: u64,
    /// Sum over active lanes of the access width.
    pub bytes_requested: u64,
    /// Shared memory: conflict-free passes through the banks.
    pub wavefronts: u64,
    /// Lanes whose address is not a multiple of the width.
    pub misaligned_lanes: u64,
    /// Global, local, texture, surface and distributed shared memory: the 32-byte sectors
    /// the bytes requested need at least, `⌈bytes_requested / 32⌉` per warp access (the
    /// reference's "sector"; Nsight Compute's ideal sectors). 0 for other spaces.
    pub ideal_sectors: u64,
    /// Σ over warp accesses of `sectors − ideal_sectors` where positive (a broadcast's
    /// shortfall does not offset another access's excess); Nsight Compute's "excessive
    /// sectors".
    pub excess_sectors: u64,
    /// Shared and distributed shared memory: the wavefronts a conflict-free access of the
    /// same width by the same lanes needs ([`crate::shared::ideal_wavefronts`]). 0 for
    /// other spaces.
    pub ideal_wavefronts: u64,
    /// Σ over warp accesses of `wavefronts − ideal_wavefronts` where positive: the passes
    /// bank conflicts add (Nsight Compute's "bank conflicts" of
    /// `l1tex__data_bank_conflicts_pipe_lsu_mem_shared`, without its unrelated arbitration).
    pub excess_wavefronts: u64,
}

impl Cost {
    /// Every counter times `num / den`, rounded to nearest: the extrapolation of a sample of
    /// `den` blocks to a grid of `num` (ratios such as efficiency are unchanged). Returns
    /// false, leaving a counter at `u64::MAX`, where a product does not fit 64 bits (a
    /// sample of a grid of 9·10^18 blocks); the caller refuses such totals.
    #[must_use]
    pub fn scale(&mut self, num: u64, den: u64) -> bool {
        let mut fits = true;
        let mut f = |x: &mut u64| {
            let v = (*x as u128 * num as u128 + den as u128 / 2) / den.max(1) as u128;
            *x = u64::try_from(v).unwrap_or_else(|_| {
                fits = false;
                u64::MAX
            });
        };
        f(&mut self.executions);
        f(&mut self.requests);
        f(&mut self.transactions);
        f(&mut self.transaction_bytes);
        f(&mut self.sectors);
        f(&mut self.bytes_requested);
        f(&mut self.wavefronts);
        f(&mut self.misaligned_lanes);
        f(&mut self.ideal_sectors);
        f(&mut self.excess_sectors);
        f(&mut self.ideal_wavefronts);
        f(&mut self.excess_wavefronts);
        fits
    }

    /// Adds `count` times `other` (the same access shape repeated `count` times), each
    /// counter saturating at `u64::MAX`.
    pub fn add_times(&mut self, other: &Cost, count: u64) {
        let f = |x: &mut u64, y: u64| *x = x.saturating_add(y.saturating_mul(count));
        f(&mut self.executions, other.executions);
        f(&mut self.requests, other.requests);
        f(&mut self.transactions, other.transactions);
        f(&mut self.transaction_bytes, other.transaction_bytes);
        f(&mut self.sectors, other.sectors);
        f(&mut self.bytes_requested, other.bytes_requested);
        f(&mut self.wavefronts, other.wavefronts);
        f(&mut self.misaligned_lanes, other.misaligned_lanes);
        f(&mut self.ideal_sectors, other.ideal_sectors);
        f(&mut self.excess_sectors, other.excess_sectors);
        f(&mut self.ideal_wavefronts, other.ideal_wavefronts);
        f(&mut self.excess_wavefronts, other.excess_wavefronts);
    }

    /// Adds `other` into `self`, counter by counter.
    pub fn add(&mut self, other: &Cost) {
        self.executions += other.executions;
        self.requests += other.requests;
        self.transactions += other.transactions;
        self.transaction_bytes += other.transaction_bytes;
        self.sectors += other.sectors;
        self.bytes_requested += other.bytes_requested;
        self.wavefronts += other.wavefronts;
        self.misaligned_lanes += other.misaligned_lanes;
        self.ideal_sectors += other.ideal_sectors;
        self.excess_sectors += other.excess_sectors;
        self.ideal_wavefronts += other.ideal_wavefronts;
        self.excess_wavefronts += other.excess_wavefronts;
    }

    /// `bytes_requested / transaction_bytes` (nvprof's `gld_efficiency`); `None` when no
    /// transaction was issued (shared and constant accesses).
    pub fn efficiency(&self) -> Option<f64> {
        (self.transaction_bytes > 0)
            .then(|| self.bytes_requested as f64 / self.transaction_bytes as f64)
    }

    /// `ideal_wavefronts / wavefronts`: 1 for conflict-free shared accesses, 1/n for an
    /// n-way conflict, above 1 where lanes share words (broadcast); `None` without a
    /// wavefront (every space but shared and distributed shared memory).
    pub fn wavefront_efficiency(&self) -> Option<f64> {
        (self.wavefronts > 0).then(|| self.ideal_wavefronts as f64 / self.wavefronts as f64)
    }
}

/// Costs one warp access under the rules of `arch` with options `config`.
///
/// An access with no active lane costs nothing (`executions` = 0). Global and local accesses
/// follow [`crate::global`], shared accesses [`crate::shared`], constant accesses
/// [`crate::constant`], texture and surface requests [`crate::texture`]. An execution is
/// counted on an instruction's first request only: a texture, surface or local access with
/// `read_only` set is a further request of the same instruction. The ideals and excesses
/// ([`Cost::ideal_sectors`], [`Cost::ideal_wavefronts`]) are filled for the spaces that
/// have sectors or wavefronts.
pub fn cost(arch: &Arch, config: &Config, access: &WarpAccess) -> Cost {
    if access.mask == 0 {
        return Cost::default();
    }
    let mut c = match access.space {
        Space::Global | Space::Local => crate::global::cost(arch, config, access),
        Space::Shared => crate::shared::cost(arch, config, access),
        Space::Constant => crate::constant::cost(arch, access),
        Space::Texture | Space::Surface => crate::texture::cost(access),
        Space::DistributedShared => dsmem_cost(arch, config, access),
    };
    c.executions = u64::from(access.starts_execution());
    c.bytes_requested = access.active_lanes() as u64 * access.width as u64;
    c.misaligned_lanes = access
        .active()
        .filter(|&(_, a)| a % access.width as u64 != 0)
        .count() as u64;
    if matches!(access.space, Space::Shared | Space::DistributedShared) {
        c.ideal_wavefronts = if access.space == Space::Shared {
            crate::shared::ideal_wavefronts(arch, config, access)
        } else {
            dsmem_ideal_wavefronts(access).min(c.wavefronts)
        };
        c.excess_wavefronts = c.wavefronts.saturating_sub(c.ideal_wavefronts);
    }
    if access.space != Space::Shared && access.space != Space::Constant {
        c.ideal_sectors = c.bytes_requested.div_ceil(32);
        c.excess_sectors = c.sectors.saturating_sub(c.ideal_sectors);
    }
    c
}

/// A distributed-shared-memory access ([`Space::DistributedShared`]): the requests the
/// shared-memory rules give ([`crate::shared`]: one a warp instruction), the distinct
/// 32-byte sectors its lanes' bytes cover, and the wavefronts the requesting SM's L1TEX
/// t-stage outputs, as Nsight Compute counts `mem_dshared`
/// (`l1tex__t_{requests,sectors,output_wavefronts}_pipe_lsu_mem_dshared_op_{ld,st,atom}`).
///
/// - Sectors: the global-memory rule of CC 5.x+ (one per distinct 32-byte block touched).
/// - Wavefronts: one per 4 distinct 128-byte lines the lanes touch, at least 1:
///   `⌈lines / 4⌉`. The target's banks play no part: 32 lanes 128 bytes apart (a 32-way bank
///   conflict in the target) and 132 bytes apart (none) both take 8; lanes 32 bytes apart
///   (8 lines) 2; 16-byte lanes in a row (4 lines) 1; a broadcast 1 (measured on H100 for
///   `ld`, `st` and `atom.shared::cluster` of 1-, 2-, 4-, 8- and 16-byte lanes, 34 patterns
///   of one cluster of 2 blocks: tests/data/h100/dsmem/; the t-stage's tag look-ups,
///   `l1tex__t_set_accesses_pipe_lsu_mem_dshared`, are the lines, one a line).
///
/// A per-lane atomic ([`dsmem_per_lane`]: `red.async`'s) takes one sector and one wavefront
/// per active lane and 32-byte block its bytes touch, even when lanes share a word
/// (measured on H100: `red.async.add.u32` of 32 lanes on one word, 32 sectors and 32 output
/// wavefronts a warp, `…_mem_dshared_op_redas`; tests/data/h100/bulk/). Global and shared
/// atomics coalesce like stores instead ([`crate::Op::Atomic`]). A bulk copy's or
/// reduction's 16-byte lanes (`cp.async.bulk`, `cp.reduce.async.bulk`: the TMA unit's)
/// follow the same sector and wavefront rules: their wavefronts are in no ncu counter
/// (the TMA is not the LSU pipe), an assumption.
fn dsmem_cost(arch: &Arch, config: &Config, access: &WarpAccess) -> Cost {
    let mut c = crate::shared::cost(arch, config, access);
    let w = u64::from(access.width.clamp(1, 16));
    let per_lane = dsmem_per_lane(access);
    let mut sectors: Vec<u64> = Vec::with_capacity(crate::WARP_SIZE);
    for (_, a) in access.active() {
        for s in a / 32..=(a + w - 1) / 32 {
            sectors.push(s);
        }
    }
    if !per_lane {
        sectors.sort_unstable();
        sectors.dedup();
    }
    c.sectors = sectors.len() as u64;
    c.transactions = c.sectors;
    c.transaction_bytes = 32 * c.sectors;
    c.wavefronts = if per_lane {
        c.sectors
    } else {
        let mut lines: Vec<u64> = sectors.iter().map(|s| s / 4).collect();
        lines.dedup();
        (lines.len() as u64).div_ceil(4).max(1)
    };
    c
}

/// Whether a distributed-shared-memory access merges no lanes: an atomic of at most 8
/// bytes a lane. `red.async`'s do not merge (measured on H100, see [`dsmem_cost`]); the
/// model cannot tell them from `atom.shared::cluster`'s, which do merge on the H100 (4
/// sectors a warp for 32 consecutive words, 1 for 32 lanes on one word:
/// tests/data/h100/dsmem/), so those are costed as `red.async`'s too: a known difference.
fn dsmem_per_lane(access: &WarpAccess) -> bool {
    access.space == Space::DistributedShared && access.op == crate::Op::Atomic && access.width <= 8
}

/// The wavefronts a distributed-shared-memory access needs at least: one per 512 bytes
/// requested (4 lines of 128 bytes; [`dsmem_cost`]), or one per active lane for a per-lane
/// atomic ([`dsmem_per_lane`]).
fn dsmem_ideal_wavefronts(access: &WarpAccess) -> u64 {
    if dsmem_per_lane(access) {
        access.active_lanes() as u64
    } else {
        (access.active_lanes() as u64 * access.width as u64)
            .div_ceil(512)
            .max(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::access::Op;
    use crate::lanes::LaneForm;

    fn access(space: Space, width: u32, f: impl Fn(u64) -> u64) -> WarpAccess {
        let mut addrs = [0u64; crate::WARP_SIZE];
        for (l, a) in addrs.iter_mut().enumerate() {
            *a = (1 << 20) + f(l as u64);
        }
        WarpAccess {
            space,
            op: Op::Load,
            width,
            mask: u32::MAX,
            addrs,
            read_only: false,
            lanes: LaneForm::Unknown,
        }
    }

    fn arch(cc: &str) -> &'static Arch {
        crate::arch::lookup(cc.parse().unwrap()).unwrap()
    }

    /// (sectors, ideal sectors, excess sectors) of a global access.
    fn sectors(cc: &str, a: &WarpAccess) -> (u64, u64, u64) {
        let c = cost(arch(cc), &Config::default(), a);
        (c.sectors, c.ideal_sectors, c.excess_sectors)
    }

    /// Distributed shared memory: sectors and output wavefronts (⌈distinct 128-byte lines /
    /// 4⌉) of patterns measured on H100 (tests/data/h100/dsmem/, per warp): consecutive
    /// words 4 and 1; words 8 apart 32 and 2; 16 apart 32 and 4; 32 apart (a 32-way bank
    /// conflict in the target) and 33 apart (none) both 32 and 8; 16-byte lanes in a row 16
    /// and 1; a broadcast 1 and 1. A per-lane atomic: 32 and 32.
    #[test]
    fn dsmem_sectors_and_wavefronts() {
        let d = |w, f: fn(u64) -> u64| {
            let c = cost(
                arch("9.0"),
                &Config::default(),
                &access(Space::DistributedShared, w, f),
            );
            (c.sectors, c.wavefronts, c.ideal_wavefronts)
        };
        assert_eq!(d(4, |l| 4 * l), (4, 1, 1));
        assert_eq!(d(4, |l| 32 * l), (32, 2, 1));
        assert_eq!(d(4, |l| 64 * l), (32, 4, 1));
        assert_eq!(d(4, |l| 128 * l), (32, 8, 1));
        assert_eq!(d(4, |l| 132 * l), (32, 8, 1));
        assert_eq!(d(16, |l| 16 * l), (16, 1, 1));
        assert_eq!(d(16, |l| 32 * l), (32, 2, 1));
        assert_eq!(d(4, |_| 0), (1, 1, 1));
        let mut red = access(Space::DistributedShared, 4, |_| 0);
        red.op = Op::Atomic;
        let c = cost(arch("9.0"), &Config::default(), &red);
        assert_eq!((c.sectors, c.wavefronts, c.excess_wavefronts), (32, 32, 0));
    }

    /// Ideal sectors are ⌈bytes requested / 32⌉; the excess never goes below 0 (a broadcast
    /// moves fewer sectors than the bytes requested need).
    #[test]
    fn global_ideal_and_excess_sectors() {
        let g = |w, f: fn(u64) -> u64| access(Space::Global, w, f);
        assert_eq!(sectors("9.0", &g(4, |l| 4 * l)), (4, 4, 0));
        assert_eq!(sectors("9.0", &g(4, |l| 4 * l + 4)), (5, 4, 1));
        assert_eq!(sectors("9.0", &g(4, |l| 8 * l)), (8, 4, 4));
        assert_eq!(sectors("9.0", &g(4, |l| 128 * l)), (32, 4, 28));
        assert_eq!(sectors("9.0", &g(16, |l| 16 * l)), (16, 16, 0));
        assert_eq!(sectors("9.0", &g(4, |_| 0)), (1, 4, 0));
        assert_eq!(sectors("9.0", &g(1, |l| l)), (1, 1, 0));
        // 1.0: a half-warp of bytes never coalesces: 16 transactions of 32 bytes each.
        assert_eq!(sectors("1.0", &g(1, |l| l)), (32, 1, 31));
        // Local memory likewise; shared and constant memory have no sectors to compare.
        assert_eq!(
            sectors("9.0", &access(Space::Local, 4, |l| 4 * l)),
            (4, 4, 0)
        );
        let s = cost(
            arch("9.0"),
            &Config::default(),
            &access(Space::Shared, 4, |l| 4 * l),
        );
        assert_eq!((s.ideal_sectors, s.ideal_wavefronts), (0, 1));
        let k = cost(
            arch("9.0"),
            &Config::default(),
            &access(Space::Constant, 4, |l| 4 * l),
        );
        assert_eq!((k.ideal_sectors, k.ideal_wavefronts), (0, 0));
    }

    /// Sums and extrapolation carry the new counters.
    #[test]
    fn add_and_scale_carry_ideal_and_excess() {
        let a = cost(
            arch("9.0"),
            &Config::default(),
            &access(Space::Global, 4, |l| 8 * l),
        );
        let mut s = a;
        s.add(&a);
        assert_eq!((s.ideal_sectors, s.excess_sectors), (8, 8));
        assert!(s.scale(3, 2));
        assert_eq!((s.ideal_sectors, s.excess_sectors), (12, 12));
    }
}
