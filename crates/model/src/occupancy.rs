//! Theoretical occupancy: how many blocks and warps of a kernel one SM holds at once, by the
//! rules of the CUDA Occupancy Calculator.
//!
//! Sources, per figure of [`SmResources`]:
//! - \[PG\] CUDA C++ Programming Guide, "Compute Capabilities", table "Technical
//!   Specifications per Compute Capability": resident blocks, warps and threads per SM,
//!   32-bit registers per SM, per block and per thread, shared memory per SM and per block.
//! - \[PG5\] CUDA C Programming Guide 5.0, Appendix F, Table 12: the same rows for 1.x and 2.x.
//! - \[OCC\] the toolkit's `cuda_occupancy.h` (CUDA 13.0; the Occupancy Calculator's rules as
//!   code): register allocation unit (256 registers per warp, 64 on 2.x), sub-partitions (the
//!   warp allocation granularity: 4, 2 on 6.0), shared-memory allocation unit (256 bytes on
//!   3.x–7.x, 128 from 8.0), resident blocks per SM, the largest shared-memory carveout of
//!   each CC, and the 1 KB the driver reserves per block from 8.0 on
//!   (`reservedSharedMemPerBlock`; PG "Compute Capability 8.x": "1 KB of shared memory is
//!   reserved for system use" per block).
//! - \[XLS\] the CUDA Occupancy Calculator spreadsheet's "GPU Data" for 1.x and 2.x (register
//!   allocation per block on 1.x: 256 registers on 1.0/1.1, 512 on 1.2/1.3, warps rounded
//!   up to 2; 512-byte shared allocation on 1.x, 128 on 2.x).
//!
//! Carveout: the shared memory an SM gives its blocks is the largest the CC allows (the
//! calculator's default, `cudaSharedmemCarveoutDefault`): a kernel that set a smaller
//! carveout (`cudaFuncAttributePreferredSharedMemoryCarveout`) can get fewer blocks. Not
//! modelled: barriers per SM (Hopper's limit is at least twice the block limit, so one
//! `__syncthreads` barrier never binds), partitioned global caching (5.2/6.x `-dlcm`),
//! kernel parameters in shared memory on 1.x.

use crate::arch::ComputeCapability;
use schemars::JsonSchema;
use serde::Serialize;
use std::fmt;

const KB: u32 = 1024;

/// How registers are handed out (\[XLS\] "Register allocation granularity").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RegisterGranularity {
    /// 1.x: per block, for its warps rounded up to the warp allocation granularity.
    Block,
    /// 2.0 and later: per warp, `registers × 32` rounded up to the allocation unit.
    Warp,
}

/// What one SM of a compute capability holds, the figures occupancy is computed from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct SmResources {
    /// Threads one block may have \[PG\].
    pub max_threads_per_block: u32,
    /// Resident warps per SM \[PG\].
    pub max_warps_per_sm: u32,
    /// Resident blocks per SM \[PG, OCC\].
    pub max_blocks_per_sm: u32,
    /// 32-bit registers per SM \[PG\].
    pub registers_per_sm: u32,
    /// 32-bit registers one block may use \[PG\].
    pub max_registers_per_block: u32,
    /// Registers one thread may use \[PG\].
    pub max_registers_per_thread: u32,
    /// Registers are allocated in multiples of this many \[OCC, XLS\].
    pub register_unit: u32,
    /// Per warp or per block \[XLS\].
    pub register_granularity: RegisterGranularity,
    /// Warps per SM that registers can hold are counted in multiples of this (the SM's
    /// sub-partitions; on 1.x a block's warps are rounded up to it) \[OCC, XLS\].
    pub warp_granularity: u32,
    /// Shared memory per SM at the largest carveout, bytes \[PG, OCC\].
    pub shared_per_sm: u32,
    /// Shared memory one block may use (static + dynamic, opt-in maximum), bytes \[PG\].
    pub max_shared_per_block: u32,
    /// Shared memory is allocated per block in multiples of this many bytes \[OCC, XLS\].
    pub shared_unit: u32,
    /// Bytes of shared memory the driver reserves per block (1024 from 8.0 on, else 0) \[OCC\].
    pub reserved_shared_per_block: u32,
}

/// The figures of `cc`, or `None` for a CC warpscope does not know (see
/// [`crate::arch::all`]; every CC there has a row here).
pub fn resources(cc: ComputeCapability) -> Option<SmResources> {
    use RegisterGranularity::{Block, Warp};
    // (warps/SM, blocks/SM, regs/SM, regs/block, regs/thread, shared/SM KB, shared/block KB)
    let (warps, blocks, regs, regs_block, regs_thread, smem_sm, smem_block) =
        match (cc.major, cc.minor) {
            (1, 0 | 1) => (24, 8, 8 * KB, 8 * KB, 127, 16, 16),
            (1, 2 | 3) => (32, 8, 16 * KB, 16 * KB, 127, 16, 16),
            (2, 0 | 1) => (48, 8, 32 * KB, 32 * KB, 63, 48, 48),
            (3, 0) => (64, 16, 64 * KB, 64 * KB, 63, 48, 48),
            (3, 2) => (64, 16, 64 * KB, 32 * KB, 255, 48, 48),
            (3, 5) => (64, 16, 64 * KB, 64 * KB, 255, 48, 48),
            (3, 7) => (64, 16, 128 * KB, 64 * KB, 255, 112, 48),
            (5, 0) => (64, 32, 64 * KB, 64 * KB, 255, 64, 48),
            (5, 2) => (64, 32, 64 * KB, 64 * KB, 255, 96, 48),
            (5, 3) => (64, 32, 64 * KB, 32 * KB, 255, 64, 48),
            (6, 0) => (64, 32, 64 * KB, 64 * KB, 255, 64, 48),
            (6, 1) => (64, 32, 64 * KB, 64 * KB, 255, 96, 48),
            (6, 2) => (64, 32, 64 * KB, 32 * KB, 255, 64, 48),
            (7, 0 | 2) => (64, 32, 64 * KB, 64 * KB, 255, 96, 96),
            (7, 5) => (32, 16, 64 * KB, 64 * KB, 255, 64, 64),
            (8, 0 | 7) => (
                if cc.minor == 0 { 64 } else { 48 },
                if cc.minor == 0 { 32 } else { 16 },
                64 * KB,
                64 * KB,
                255,
                164,
                163,
            ),
            (8, 6) => (48, 16, 64 * KB, 64 * KB, 255, 100, 99),
            (8, 9) => (48, 24, 64 * KB, 64 * KB, 255, 100, 99),
            (9, 0) | (10, 0 | 3) => (64, 32, 64 * KB, 64 * KB, 255, 228, 227),
            (11, 0) => (48, 24, 64 * KB, 64 * KB, 255, 228, 227),
            (12, 0 | 1) => (48, 24, 64 * KB, 64 * KB, 255, 100, 99),
            _ => return None,
        };
    let (register_unit, register_granularity, warp_granularity) = match (cc.major, cc.minor) {
        (1, 0 | 1) => (256, Block, 2),
        (1, _) => (512, Block, 2),
        (2, _) => (64, Warp, 2),
        (6, 0) => (256, Warp, 2),
        _ => (256, Warp, 4),
    };
    let shared_unit = match cc.major {
        1 => 512,
        2 => 128,
        3..=7 => 256,
        _ => 128,
    };
    Some(SmResources {
        max_threads_per_block: if cc.major == 1 { 512 } else { 1024 },
        max_warps_per_sm: warps,
        max_blocks_per_sm: blocks,
        registers_per_sm: regs,
        max_registers_per_block: regs_block,
        max_registers_per_thread: regs_thread,
        register_unit,
        register_granularity,
        warp_granularity,
        shared_per_sm: smem_sm * KB,
        max_shared_per_block: smem_block * KB,
        shared_unit,
        reserved_shared_per_block: if cc.major >= 8 { KB } else { 0 },
    })
}

/// What a kernel's launch asks of an SM: the block size and, from `ptxas -v`, registers
/// per thread and static shared memory; dynamic shared memory from the launch.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KernelUse {
    /// Threads per block (all dimensions multiplied).
    pub threads_per_block: u32,
    /// Registers per thread (`ptxas -v`: `Used N registers`).
    pub registers_per_thread: u32,
    /// Static shared memory per block, bytes (`ptxas -v`: `N bytes smem`).
    pub static_shared_bytes: u32,
    /// Dynamic shared memory per block, bytes (the launch's third `<<<>>>` argument).
    pub dynamic_shared_bytes: u32,
}

/// What bounds the blocks per SM (\[OCC\] `cudaOccLimitingFactor`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Limiter {
    /// Resident warps (threads) per SM.
    Warps,
    /// Resident blocks per SM.
    Blocks,
    /// The register file.
    Registers,
    /// Shared memory per SM.
    SharedMemory,
}

impl Limiter {
    /// The words for a report: "warps", "blocks per SM", "registers", "shared memory".
    pub const fn name(self) -> &'static str {
        match self {
            Limiter::Warps => "warps",
            Limiter::Blocks => "blocks per SM",
            Limiter::Registers => "registers",
            Limiter::SharedMemory => "shared memory",
        }
    }
}

/// The theoretical occupancy of one launch on one CC.
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
pub struct Occupancy {
    /// The compute capability, "9.0".
    pub cc: ComputeCapability,
    /// Blocks resident per SM: the least of the four limits.
    pub blocks_per_sm: u32,
    /// Warps resident per SM (`blocks_per_sm` × warps per block).
    pub warps_per_sm: u32,
    /// The CC's resident warps per SM.
    pub max_warps_per_sm: u32,
    /// `warps_per_sm / max_warps_per_sm`, 0–1.
    pub occupancy: f64,
    /// What bounds `blocks_per_sm`; on a tie, every bound that is reached, in the order
    /// warps, blocks per SM, registers, shared memory (the first is the one reported).
    pub limited_by: Vec<Limiter>,
    /// Blocks per SM each resource allows, in the order warps, blocks per SM, registers,
    /// shared memory (`None`: that resource is not used, no limit).
    pub limits: [Option<u32>; 4],
    /// Registers allocated per block (after rounding to the allocation unit).
    pub registers_per_block: u32,
    /// Shared memory allocated per block, bytes (static + dynamic + the reserved 1 KB from
    /// 8.0 on, rounded up to the allocation unit).
    pub shared_per_block: u32,
}

impl Occupancy {
    /// The first limiter ([`Occupancy::limited_by`]).
    pub fn limiter(&self) -> Limiter {
        self.limited_by.first().copied().unwrap_or(Limiter::Warps)
    }
}

/// A launch no SM of the CC can run; `Display` gives the sentence for the user.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OccupancyError {
    /// The CC is not in warpscope's table.
    UnknownCc(ComputeCapability),
    /// A block of 0 threads.
    NoThreads(ComputeCapability),
    /// More threads per block than the CC allows.
    ThreadsPerBlock {
        /// The capability.
        cc: ComputeCapability,
        /// Threads per block asked for.
        threads: u32,
        /// The limit.
        max: u32,
    },
    /// More registers per thread than the CC allows.
    RegistersPerThread {
        /// The capability.
        cc: ComputeCapability,
        /// Registers per thread.
        registers: u32,
        /// The limit.
        max: u32,
    },
    /// The block's registers (as allocated) exceed the per-block maximum.
    RegistersPerBlock {
        /// The capability.
        cc: ComputeCapability,
        /// Registers the block is allocated (as the hardware checks them).
        registers: u32,
        /// The limit.
        max: u32,
    },
    /// More shared memory per block than the CC allows.
    SharedPerBlock {
        /// The capability.
        cc: ComputeCapability,
        /// Static + dynamic shared memory per block, bytes.
        bytes: u64,
        /// The limit, bytes.
        max: u32,
    },
}

impl fmt::Display for OccupancyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OccupancyError::UnknownCc(cc) => {
                write!(f, "no occupancy figures for CC {cc}: not in warpscope's table")
            }
            OccupancyError::NoThreads(cc) => {
                write!(f, "a block of 0 threads cannot run on CC {cc}")
            }
            OccupancyError::ThreadsPerBlock { cc, threads, max } => write!(
                f,
                "a block of {threads} threads cannot run on CC {cc}: at most {max} threads per block"
            ),
            OccupancyError::RegistersPerThread { cc, registers, max } => write!(
                f,
                "{registers} registers per thread cannot run on CC {cc}: at most {max} per thread (lower them with -maxrregcount or __launch_bounds__)"
            ),
            OccupancyError::RegistersPerBlock { cc, registers, max } => write!(
                f,
                "the block needs {registers} registers and CC {cc} gives a block at most {max} (the launch fails with 'too many resources requested'): use fewer threads per block or fewer registers per thread (-maxrregcount, __launch_bounds__)"
            ),
            OccupancyError::SharedPerBlock { cc, bytes, max } => write!(
                f,
                "the block uses {bytes} bytes of shared memory and CC {cc} allows at most {max} ({} KB) per block",
                max / KB
            ),
        }
    }
}

impl std::error::Error for OccupancyError {}

fn round_up(x: u64, unit: u64) -> u64 {
    x.div_ceil(unit) * unit
}

/// The theoretical occupancy of a launch using `k` on `cc`, by the Occupancy Calculator's
/// rules (module docs): the blocks per SM are the least of
///
/// - warps: `max_warps_per_sm / warps per block`, and the CC's resident blocks per SM;
/// - registers, 2.0 on: per warp `registers × 32` rounded up to the unit (256; 64 on 2.x);
///   the SM holds `⌊registers per SM / that⌋` warps, rounded down to the warp granularity
///   (its sub-partitions), divided among blocks; 1.x: per block, warps rounded up to 2;
/// - shared memory: static + dynamic + the reserved 1 KB (8.0 on), rounded up to the unit,
///   into the shared memory of the largest carveout.
///
/// Errors ([`OccupancyError`]): an unknown CC; 0 or too many threads per block; more
/// registers per thread than the CC allows; a block whose registers exceed the per-block
/// maximum (checked as the hardware does, warps rounded up to the sub-partitions); more
/// shared memory than the per-block maximum. Never panics.
pub fn occupancy(cc: ComputeCapability, k: KernelUse) -> Result<Occupancy, OccupancyError> {
    let r = resources(cc).ok_or(OccupancyError::UnknownCc(cc))?;
    if k.threads_per_block == 0 {
        return Err(OccupancyError::NoThreads(cc));
    }
    if k.threads_per_block > r.max_threads_per_block {
        return Err(OccupancyError::ThreadsPerBlock {
            cc,
            threads: k.threads_per_block,
            max: r.max_threads_per_block,
        });
    }
    if k.registers_per_thread > r.max_registers_per_thread {
        return Err(OccupancyError::RegistersPerThread {
            cc,
            registers: k.registers_per_thread,
            max: r.max_registers_per_thread,
        });
    }
    let shared_user = u64::from(k.static_shared_bytes) + u64::from(k.dynamic_shared_bytes);
    if shared_user > u64::from(r.max_shared_per_block) {
        return Err(OccupancyError::SharedPerBlock {
            cc,
            bytes: shared_user,
            max: r.max_shared_per_block,
        });
    }
    let warps = u64::from(k.threads_per_block.div_ceil(32));
    let g = u64::from(r.warp_granularity);
    let regs = u64::from(k.registers_per_thread);
    let unit = u64::from(r.register_unit);

    let by_warps = (u64::from(r.max_warps_per_sm) / warps) as u32;
    let by_blocks = r.max_blocks_per_sm;
    let (registers_per_block, by_registers) = match r.register_granularity {
        RegisterGranularity::Block => {
            let per_block = round_up(round_up(warps, g) * 32 * regs, unit);
            if per_block > u64::from(r.max_registers_per_block) {
                return Err(OccupancyError::RegistersPerBlock {
                    cc,
                    registers: per_block as u32,
                    max: r.max_registers_per_block,
                });
            }
            let limit = (per_block > 0).then(|| (u64::from(r.registers_per_sm) / per_block) as u32);
            (per_block, limit)
        }
        RegisterGranularity::Warp => {
            let per_warp = round_up(regs * 32, unit);
            // The hardware's check counts the warps rounded up to the sub-partitions (4
            // even on 6.0, whose code must also run on 6.1) [OCC].
            let check_g = if r.register_unit == 256 { 4 } else { g };
            let assumed = per_warp * round_up(warps, check_g);
            let per_block = per_warp * warps;
            if assumed.max(per_block) > u64::from(r.max_registers_per_block) {
                return Err(OccupancyError::RegistersPerBlock {
                    cc,
                    registers: assumed.max(per_block) as u32,
                    max: r.max_registers_per_block,
                });
            }
            let limit = (per_warp > 0).then(|| {
                let warps_sm = u64::from(r.registers_per_sm) / g / per_warp * g;
                (warps_sm / warps) as u32
            });
            (per_block, limit)
        }
    };
    let shared_alloc = round_up(
        shared_user + u64::from(r.reserved_shared_per_block),
        u64::from(r.shared_unit),
    );
    let by_shared = (shared_alloc > 0).then(|| (u64::from(r.shared_per_sm) / shared_alloc) as u32);

    let limits = [Some(by_warps), Some(by_blocks), by_registers, by_shared];
    let blocks = limits.iter().flatten().copied().min().unwrap_or(0);
    let order = [
        Limiter::Warps,
        Limiter::Blocks,
        Limiter::Registers,
        Limiter::SharedMemory,
    ];
    let limited_by = order
        .iter()
        .zip(limits)
        .filter(|(_, l)| *l == Some(blocks))
        .map(|(w, _)| *w)
        .collect();
    let warps_per_sm = blocks * warps as u32;
    Ok(Occupancy {
        cc,
        blocks_per_sm: blocks,
        warps_per_sm,
        max_warps_per_sm: r.max_warps_per_sm,
        occupancy: f64::from(warps_per_sm) / f64::from(r.max_warps_per_sm),
        limited_by,
        limits,
        registers_per_block: registers_per_block as u32,
        shared_per_block: shared_alloc as u32,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cc(major: u8, minor: u8) -> ComputeCapability {
        ComputeCapability::new(major, minor)
    }

    fn run(c: ComputeCapability, threads: u32, regs: u32, smem: u32) -> Occupancy {
        occupancy(
            c,
            KernelUse {
                threads_per_block: threads,
                registers_per_thread: regs,
                static_shared_bytes: smem,
                dynamic_shared_bytes: 0,
            },
        )
        .unwrap()
    }

    #[test]
    fn every_known_cc_has_figures_that_agree_with_the_launch_limits() {
        for a in crate::arch::all() {
            let r = resources(a.cc).unwrap_or_else(|| panic!("no row for {}", a.cc));
            assert_eq!(r.max_threads_per_block, a.limits.max_threads_per_block);
            assert_eq!(
                r.max_shared_per_block, a.limits.max_shared_per_block,
                "{}",
                a.cc
            );
            // A block's own shared memory and the reserve fit an SM.
            assert!(r.max_shared_per_block + r.reserved_shared_per_block <= r.shared_per_sm);
        }
        assert_eq!(resources(cc(4, 0)), None);
    }

    #[test]
    fn hopper_256_threads_32_registers_is_full() {
        // 8 warps per block; warps: 64 / 8 = 8 blocks; registers: 32 × 32 = 1024 per warp,
        // 65536 / 4 sub-partitions = 16384 → 16 warps each → 64 warps → 8 blocks; shared:
        // only the 1 KB reserve, 233472 / 1024 = 228 blocks. 8 blocks × 8 = 64 warps = 100 %.
        let o = run(cc(9, 0), 256, 32, 0);
        assert_eq!((o.blocks_per_sm, o.warps_per_sm, o.occupancy), (8, 64, 1.0));
        assert_eq!(o.limits, [Some(8), Some(32), Some(8), Some(228)]);
        assert_eq!(o.limited_by, [Limiter::Warps, Limiter::Registers]);
        assert_eq!((o.registers_per_block, o.shared_per_block), (8192, 1024));
    }

    #[test]
    fn hopper_64_registers_halves_it() {
        // 64 × 32 = 2048 registers per warp; 16384 / 2048 = 8 warps per sub-partition → 32
        // warps → 32 / 8 = 4 blocks → 32 of 64 warps = 50 %, limited by registers.
        let o = run(cc(9, 0), 256, 64, 0);
        assert_eq!((o.blocks_per_sm, o.warps_per_sm, o.occupancy), (4, 32, 0.5));
        assert_eq!(o.limiter(), Limiter::Registers);
    }

    #[test]
    fn registers_round_up_to_256_per_warp() {
        // 33 registers: 33 × 32 = 1056 → 1280 per warp; 16384 / 1280 = 12 warps per
        // sub-partition → 48 warps → 6 blocks of 8 warps = 48 warps = 75 %.
        let o = run(cc(9, 0), 256, 33, 0);
        assert_eq!(
            (o.blocks_per_sm, o.warps_per_sm, o.occupancy),
            (6, 48, 0.75)
        );
        assert_eq!(o.registers_per_block, 1280 * 8);
    }

    #[test]
    fn best_practices_guide_example_on_volta() {
        // BPG "Calculating Occupancy": on 7.0, 128-thread blocks of 37 registers per thread
        // give 12 blocks and 75 %; 320-thread blocks give 4 blocks and "63 %".
        // 37 × 32 = 1184 → 1280 per warp; 16384 / 1280 = 12 warps per sub-partition → 48.
        let o = run(cc(7, 0), 128, 37, 0);
        assert_eq!(
            (o.blocks_per_sm, o.warps_per_sm, o.occupancy),
            (12, 48, 0.75)
        );
        assert_eq!(o.limiter(), Limiter::Registers);
        // 320 threads = 10 warps: 48 / 10 = 4 blocks → 40 of 64 warps = 62.5 %.
        let o = run(cc(7, 0), 320, 37, 0);
        assert_eq!(
            (o.blocks_per_sm, o.warps_per_sm, o.occupancy),
            (4, 40, 0.625)
        );
    }

    #[test]
    fn ampere_8_6_has_48_warps_and_16_blocks() {
        // 256 threads × 32 registers: warps 48 / 8 = 6 blocks (registers allow 8): 48 of 48
        // warps = 100 %.
        let o = run(cc(8, 6), 256, 32, 0);
        assert_eq!((o.blocks_per_sm, o.warps_per_sm, o.occupancy), (6, 48, 1.0));
        assert_eq!(o.limiter(), Limiter::Warps);
        // 64 threads = 2 warps: warps allow 24 blocks but 8.6 holds 16: 32 of 48 warps.
        let o = run(cc(8, 6), 64, 32, 0);
        assert_eq!((o.blocks_per_sm, o.warps_per_sm), (16, 32));
        assert_eq!(o.limiter(), Limiter::Blocks);
        assert!((o.occupancy - 2.0 / 3.0).abs() < 1e-12);
        // The same on 9.0: 32 blocks of 2 warps = 64 warps = 100 %.
        assert_eq!(run(cc(9, 0), 64, 32, 0).occupancy, 1.0);
    }

    #[test]
    fn shared_memory_with_the_1_kb_reserve() {
        // 9.0 SM: 228 KB = 233472 bytes. 57 KB = 58368 static per block: without the reserve
        // 4 × 57 KB = 228 KB would fit 4 blocks; with it each takes 58368 + 1024 = 59392
        // (a multiple of 128), 233472 / 59392 = 3.93 → 3 blocks × 4 warps = 12 of 64 = 18.75 %.
        let o = run(cc(9, 0), 128, 32, 57 * 1024);
        assert_eq!(
            (o.blocks_per_sm, o.warps_per_sm, o.occupancy),
            (3, 12, 0.1875)
        );
        assert_eq!(o.limiter(), Limiter::SharedMemory);
        assert_eq!(o.shared_per_block, 59392);
        // 7.0 reserves nothing: 48 KB blocks, 96 KB SM → 2 blocks exactly.
        let o = run(cc(7, 0), 128, 32, 48 * 1024);
        assert_eq!((o.blocks_per_sm, o.shared_per_block), (2, 49152));
        // 100 bytes on 7.5 take a 256-byte unit: 65536 / 256 = 256 blocks, not the limit.
        assert_eq!(run(cc(7, 5), 128, 32, 100).limits[3], Some(256));
    }

    #[test]
    fn turing_has_32_warps() {
        // 256 threads: 32 / 8 = 4 blocks (registers allow 8, blocks 16) → 32 of 32 = 100 %.
        let o = run(cc(7, 5), 256, 32, 0);
        assert_eq!((o.blocks_per_sm, o.warps_per_sm, o.occupancy), (4, 32, 1.0));
        // 768 threads = 24 warps: one block, 24 of 32 = 75 %, limited by warps.
        let o = run(cc(7, 5), 768, 32, 0);
        assert_eq!(
            (o.blocks_per_sm, o.warps_per_sm, o.occupancy),
            (1, 24, 0.75)
        );
        assert_eq!(o.limiter(), Limiter::Warps);
    }

    #[test]
    fn fermi_allocates_64_registers_per_warp_in_pairs_of_warps() {
        // 2.0: 24 × 32 = 768 per warp (a multiple of 64); 32768 / 768 = 42 warps (even) → 5
        // blocks of 8 warps = 40 of 48 warps = 83.3 %, limited by registers.
        let o = run(cc(2, 0), 256, 24, 0);
        assert_eq!((o.blocks_per_sm, o.warps_per_sm), (5, 40));
        assert_eq!(o.limiter(), Limiter::Registers);
        // 21 registers: 672 → 704 per warp; 32768 / 704 = 46 warps → 5 blocks.
        assert_eq!(run(cc(2, 0), 256, 21, 0).limits[2], Some(5));
    }

    #[test]
    fn tesla_allocates_registers_per_block() {
        // 1.0: 256 threads × 10 registers: 8 warps (even) × 32 × 10 = 2560 (a multiple of
        // 256); 8192 / 2560 = 3 blocks; warps 24 / 8 = 3 → 24 of 24 = 100 %.
        let o = run(cc(1, 0), 256, 10, 0);
        assert_eq!((o.blocks_per_sm, o.warps_per_sm, o.occupancy), (3, 24, 1.0));
        assert_eq!(o.registers_per_block, 2560);
        // 1.3: 96 threads = 3 warps, rounded up to 4: 4 × 32 × 11 = 1408 → 1536 (512-register
        // unit); 16384 / 1536 = 10 blocks; warps 32 / 3 = 10; blocks 8 → 8 blocks, 24 of 32.
        let o = run(cc(1, 3), 96, 11, 0);
        assert_eq!(
            (o.blocks_per_sm, o.warps_per_sm, o.occupancy),
            (8, 24, 0.75)
        );
        assert_eq!(o.registers_per_block, 1536);
        // 512-byte shared unit: 5000 bytes → 5120; 16384 / 5120 = 3 blocks.
        assert_eq!(run(cc(1, 3), 96, 11, 5000).blocks_per_sm, 3);
    }

    #[test]
    fn impossible_launches_are_errors() {
        let k = |threads, regs, smem| KernelUse {
            threads_per_block: threads,
            registers_per_thread: regs,
            static_shared_bytes: smem,
            dynamic_shared_bytes: 0,
        };
        let e = occupancy(cc(9, 0), k(1025, 32, 0)).unwrap_err();
        assert!(e.to_string().contains("at most 1024 threads"), "{e}");
        assert!(matches!(
            occupancy(cc(1, 3), k(768, 8, 0)),
            Err(OccupancyError::ThreadsPerBlock { max: 512, .. })
        ));
        assert!(matches!(
            occupancy(cc(9, 0), k(32, 256, 0)),
            Err(OccupancyError::RegistersPerThread { max: 255, .. })
        ));
        assert!(matches!(
            occupancy(cc(3, 0), k(32, 64, 0)),
            Err(OccupancyError::RegistersPerThread { max: 63, .. })
        ));
        // 1024 threads × 72 registers: 2304 per warp × 32 warps = 73728 > 65536.
        assert_eq!(
            occupancy(cc(9, 0), k(1024, 72, 0)),
            Err(OccupancyError::RegistersPerBlock {
                cc: cc(9, 0),
                registers: 73728,
                max: 65536
            })
        );
        // 1024 × 64 = 65536 fits exactly: one block, 32 of 64 warps.
        assert_eq!(run(cc(9, 0), 1024, 64, 0).blocks_per_sm, 1);
        // 5.3 gives a block only 32 K registers: 1024 × 40 → 1280 × 32 = 40960.
        assert!(matches!(
            occupancy(cc(5, 3), k(1024, 40, 0)),
            Err(OccupancyError::RegistersPerBlock { max: 32768, .. })
        ));
        // 227 KB is 9.0's per-block maximum; one byte more is an error.
        assert_eq!(run(cc(9, 0), 32, 16, 227 * 1024).blocks_per_sm, 1);
        assert!(matches!(
            occupancy(cc(9, 0), k(32, 16, 227 * 1024 + 1)),
            Err(OccupancyError::SharedPerBlock { max: 232448, .. })
        ));
        assert!(matches!(
            occupancy(cc(9, 0), k(0, 16, 0)),
            Err(OccupancyError::NoThreads(_))
        ));
        assert!(matches!(
            occupancy(cc(4, 0), k(32, 16, 0)),
            Err(OccupancyError::UnknownCc(_))
        ));
    }

    #[test]
    fn no_registers_and_no_shared_leave_warps_and_blocks() {
        // 7.0 reserves no shared memory: with none used only warps and blocks bound.
        let o = run(cc(7, 0), 32, 0, 0);
        assert_eq!(o.limits, [Some(64), Some(32), None, None]);
        assert_eq!((o.blocks_per_sm, o.limiter()), (32, Limiter::Blocks));
    }
}
