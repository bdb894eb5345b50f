//! The compute capabilities warpscope knows: their names, launch limits, shared-memory
//! banks and the caching of global loads, and the family of memory rules each one follows.
//!
//! Sources: the CUDA C++ Programming Guide's table "Technical Specifications per Compute
//! Capability" (launch limits, shared memory per block) and its compute-capability
//! appendices \[PG\]; the CUDA C Programming Guide v5.0, Appendix F \[PG5\]; the Best Practices
//! Guide \[BPG\]; see `shared/reference/memory-model.md`.

use crate::access::Op;
use crate::cost::{Config, L1Mode};
use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};
use serde::{Serialize, Serializer};
use std::borrow::Cow;
use std::fmt;
use std::str::FromStr;

/// A compute capability `major.minor` (e.g. 9.0 for Hopper).
///
/// Parses from `"9.0"`, `"90"`, `"sm_90"`, `"sm_90a"`, `"compute_90"` (the last digit of the
/// dotless forms is the minor version: `"100"` is 10.0, `"121"` is 12.1). Displays and
/// serializes as `"9.0"`. Ordered by (major, minor). Parsing checks only the syntax; whether
/// warpscope knows the capability is [`lookup`]'s business.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ComputeCapability {
    /// Major version (9 in 9.0).
    pub major: u8,
    /// Minor version, 0–9 (0 in 9.0).
    pub minor: u8,
}

impl ComputeCapability {
    /// The capability `major.minor`.
    pub const fn new(major: u8, minor: u8) -> Self {
        ComputeCapability { major, minor }
    }

    /// `true` when `self` is `major.minor` or later.
    pub const fn at_least(self, major: u8, minor: u8) -> bool {
        self.major > major || (self.major == major && self.minor >= minor)
    }
}

impl fmt::Display for ComputeCapability {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

impl Serialize for ComputeCapability {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl JsonSchema for ComputeCapability {
    fn schema_name() -> Cow<'static, str> {
        "ComputeCapability".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "type": "string",
            "pattern": "^[0-9]+\\.[0-9]$",
            "description": "A compute capability, major.minor: \"9.0\" for Hopper."
        })
    }
}

impl FromStr for ComputeCapability {
    type Err = ArchError;

    /// Errors: [`ArchError::Syntax`] when `s` is none of the accepted forms.
    fn from_str(s: &str) -> Result<Self, ArchError> {
        let bad = || ArchError::Syntax(s.trim().to_string());
        let t = s.trim().to_ascii_lowercase();
        let prefixed = t.strip_prefix("sm_").or_else(|| t.strip_prefix("compute_"));
        let body = match prefixed {
            // Architecture-specific and family suffixes: sm_90a, sm_100f.
            Some(b) => b.strip_suffix(['a', 'f']).unwrap_or(b),
            None => t.as_str(),
        };
        let digits = |x: &str| !x.is_empty() && x.bytes().all(|b| b.is_ascii_digit());
        let (major, minor) = match body.split_once('.') {
            Some((ma, mi)) if digits(ma) && digits(mi) => (ma, mi),
            Some(_) => return Err(bad()),
            None if digits(body) && body.len() >= 2 => body.split_at(body.len() - 1),
            None => return Err(bad()),
        };
        let major: u8 = major.parse().map_err(|_| bad())?;
        let minor: u8 = minor.parse().map_err(|_| bad())?;
        if minor > 9 {
            return Err(bad());
        }
        Ok(ComputeCapability { major, minor })
    }
}

/// The family of memory rules a compute capability follows (reference, "Global memory").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub enum Family {
    /// 1.0, 1.1: half-warps coalesce only in the strict in-order pattern [PG5 F.3.2.1].
    Cc1Strict,
    /// 1.2, 1.3: half-warps follow the segment protocol [PG5 F.3.2.2, BPG].
    Cc1Segment,
    /// 2.x: L1-cached 128-byte lines by default [PG5 F.4.2].
    Fermi,
    /// 3.x: L2-only 32-byte segments by default [PG5 F.5.2].
    Kepler,
    /// 5.0 and later: 32-byte sectors [PG 5.x appendix, measured on H100].
    Sector,
}

impl Family {
    /// The family of `cc` (any capability, known or not; 4.x, which never shipped, counts as
    /// Kepler's successor, i.e. [`Family::Sector`]).
    pub const fn of(cc: ComputeCapability) -> Family {
        match cc.major {
            0 | 1 if cc.minor < 2 => Family::Cc1Strict,
            0 | 1 => Family::Cc1Segment,
            2 => Family::Fermi,
            3 => Family::Kepler,
            _ => Family::Sector,
        }
    }
}

/// Launch limits of one compute capability.
///
/// Source: CUDA C++ Programming Guide, "Technical Specifications per Compute Capability"
/// (rows "Maximum number of threads per block", "Maximum x-/y-/z-dimension of a block",
/// "Maximum x-/y-/z-dimension of a grid of thread blocks", "Maximum amount of shared memory
/// per thread block"); the 1.x and 2.x columns from the same table in the guides of CUDA
/// 3.x–8.0. Shared memory is the opt-in maximum (`cudaFuncAttributeMaxDynamicSharedMemorySize`);
/// without opting in a block gets at most 48 KB on every capability from 2.0 on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct LaunchLimits {
    /// The capability these limits belong to (named in error messages).
    pub cc: ComputeCapability,
    /// Threads per block, all dimensions multiplied.
    pub max_threads_per_block: u32,
    /// Largest `blockDim` per dimension (x, y, z).
    pub max_block: [u32; 3],
    /// Largest `gridDim` per dimension (x, y, z).
    pub max_grid: [u32; 3],
    /// Shared memory one block may use, bytes (static + dynamic, opt-in maximum).
    pub max_shared_per_block: u32,
}

const KB: u32 = 1024;

impl LaunchLimits {
    /// 1.x: 512 threads, block 512×512×64, grid 65535×65535×1, 16 KB shared memory \[PG\].
    const fn cc1(cc: ComputeCapability) -> Self {
        LaunchLimits {
            cc,
            max_threads_per_block: 512,
            max_block: [512, 512, 64],
            max_grid: [65535, 65535, 1],
            max_shared_per_block: 16 * KB,
        }
    }

    /// 2.x: 1024 threads, block 1024×1024×64, grid 65535×65535×65535, 48 KB \[PG\].
    const fn cc2(cc: ComputeCapability) -> Self {
        LaunchLimits {
            cc,
            max_threads_per_block: 1024,
            max_block: [1024, 1024, 64],
            max_grid: [65535, 65535, 65535],
            max_shared_per_block: 48 * KB,
        }
    }

    /// 3.0 and later: 1024 threads, block 1024×1024×64, grid (2³¹−1)×65535×65535, and the
    /// capability's shared memory per block in KB \[PG\].
    const fn cc3(cc: ComputeCapability, shared_kb: u32) -> Self {
        LaunchLimits {
            cc,
            max_threads_per_block: 1024,
            max_block: [1024, 1024, 64],
            max_grid: [i32::MAX as u32, 65535, 65535],
            max_shared_per_block: shared_kb * KB,
        }
    }

    /// Checks a launch's `grid` and `block` dimensions (x, y, z) against these limits.
    ///
    /// Errors ([`LaunchError`], checked in this order): a zero dimension; more threads per
    /// block than allowed; a block dimension over its maximum; a grid dimension over its
    /// maximum. The message names the limit and the capability, e.g. "block 2048×1×1 has
    /// 2048 threads; CC 9.0 allows at most 1024 threads per block".
    pub fn check(&self, grid: [u64; 3], block: [u64; 3]) -> Result<(), LaunchError> {
        let cc = self.cc;
        for (what, dims) in [("grid", grid), ("block", block)] {
            if dims.contains(&0) {
                return Err(LaunchError::ZeroDimension { cc, what, dims });
            }
        }
        let threads = block[0].saturating_mul(block[1]).saturating_mul(block[2]);
        if threads > u64::from(self.max_threads_per_block) {
            return Err(LaunchError::ThreadsPerBlock {
                cc,
                block,
                threads,
                max: self.max_threads_per_block,
            });
        }
        for axis in 0..3 {
            if block[axis] > u64::from(self.max_block[axis]) {
                return Err(LaunchError::BlockDimension {
                    cc,
                    block,
                    axis,
                    max: self.max_block[axis],
                });
            }
        }
        for axis in 0..3 {
            if grid[axis] > u64::from(self.max_grid[axis]) {
                return Err(LaunchError::GridDimension {
                    cc,
                    grid,
                    axis,
                    max: self.max_grid[axis],
                });
            }
        }
        Ok(())
    }

    /// Local memory one thread may use, bytes: 16 KB on 1.x, 512 KB from 2.0 on \[PG
    /// Technical Specifications, "Maximum amount of local memory per thread"\].
    pub const fn max_local_per_thread(&self) -> u32 {
        if self.cc.major == 1 {
            16 * KB
        } else {
            512 * KB
        }
    }

    /// Checks `bytes` of local memory per thread against
    /// [`LaunchLimits::max_local_per_thread`]. Errors: [`LaunchError::LocalMemory`].
    pub fn check_local(&self, bytes: u64) -> Result<(), LaunchError> {
        let max = self.max_local_per_thread();
        if bytes > u64::from(max) {
            return Err(LaunchError::LocalMemory {
                cc: self.cc,
                bytes,
                max,
            });
        }
        Ok(())
    }

    /// Static shared memory (`__shared__` arrays of fixed size) one block may declare, bytes:
    /// 16 KB on 1.x, 48 KB from 2.0 on. More needs dynamic shared memory and the opt-in
    /// (CUDA C++ Programming Guide, "Technical Specifications per Compute Capability":
    /// "kernels relying on shared memory allocations over 48 KB per block … must use dynamic
    /// shared memory (rather than statically sized arrays)"; ptxas refuses more).
    pub const fn max_static_shared_per_block(&self) -> u32 {
        if self.cc.major == 1 {
            16 * KB
        } else {
            48 * KB
        }
    }

    /// Checks `bytes` of static shared memory per block against
    /// [`LaunchLimits::max_static_shared_per_block`]. Errors:
    /// [`LaunchError::StaticSharedMemory`].
    pub fn check_static_shared(&self, bytes: u64) -> Result<(), LaunchError> {
        let max = self.max_static_shared_per_block();
        if bytes > u64::from(max) {
            return Err(LaunchError::StaticSharedMemory {
                cc: self.cc,
                bytes,
                max,
            });
        }
        Ok(())
    }

    /// Checks `bytes` of shared memory per block (static + dynamic) against
    /// [`LaunchLimits::max_shared_per_block`]. Errors: [`LaunchError::SharedMemory`].
    pub fn check_shared(&self, bytes: u64) -> Result<(), LaunchError> {
        if bytes > u64::from(self.max_shared_per_block) {
            return Err(LaunchError::SharedMemory {
                cc: self.cc,
                bytes,
                max: self.max_shared_per_block,
            });
        }
        Ok(())
    }
}

impl LaunchLimits {
    /// Blocks a thread-block cluster may hold: 8 (portable), or 16 with the non-portable
    /// opt-in (`cudaFuncAttributeNonPortableClusterSizeAllowed`) on CC 9.0 and later; 0
    /// before 9.0, which has no clusters. Source: CUDA C++ Programming Guide, "Thread Block
    /// Clusters" ("a maximum of 8 thread blocks in a cluster is supported as a portable
    /// cluster size … on GPU hardware … that supports non-portable cluster sizes, 16").
    pub const fn max_cluster_blocks(&self, non_portable: bool) -> u32 {
        if self.cc.major < 9 {
            0
        } else if non_portable {
            16
        } else {
            8
        }
    }

    /// Checks a thread-block cluster of `cluster` blocks (x, y, z) whose blocks each use
    /// `shared_bytes` of shared memory: clusters need CC 9.0 ([`LaunchError::NoClusters`]);
    /// at most [`LaunchLimits::max_cluster_blocks`] blocks ([`LaunchError::ClusterSize`]);
    /// every block of the cluster runs on its own SM at once, so the cluster's distributed
    /// shared memory is at most that many times the per-block limit
    /// ([`LaunchError::ClusterSharedMemory`]). A cluster of one block is no cluster and
    /// always passes.
    pub fn check_cluster(
        &self,
        cluster: [u64; 3],
        shared_bytes: u64,
        non_portable: bool,
    ) -> Result<(), LaunchError> {
        let blocks = cluster[0]
            .saturating_mul(cluster[1])
            .saturating_mul(cluster[2]);
        if blocks <= 1 {
            return Ok(());
        }
        let cc = self.cc;
        if cc.major < 9 {
            return Err(LaunchError::NoClusters { cc, cluster });
        }
        let max = self.max_cluster_blocks(non_portable);
        if blocks > u64::from(max) {
            return Err(LaunchError::ClusterSize {
                cc,
                cluster,
                blocks,
                max,
                non_portable,
            });
        }
        let total = shared_bytes.saturating_mul(blocks);
        let limit = u64::from(self.max_shared_per_block) * blocks;
        if total > limit {
            return Err(LaunchError::ClusterSharedMemory {
                cc,
                cluster,
                bytes: total,
                max: limit,
            });
        }
        Ok(())
    }
}

/// A launch that exceeds a [`LaunchLimits`]; `Display` gives the sentence for the user.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LaunchError {
    /// `what` ("grid" or "block") has a zero dimension.
    ZeroDimension {
        /// The capability whose limit was exceeded.
        cc: ComputeCapability,
        /// "grid" or "block".
        what: &'static str,
        /// The offending dimensions (x, y, z).
        dims: [u64; 3],
    },
    /// `block[axis]` is over `max`.
    BlockDimension {
        /// The capability whose limit was exceeded.
        cc: ComputeCapability,
        /// The block dimensions (x, y, z).
        block: [u64; 3],
        /// 0, 1, 2 for x, y, z.
        axis: usize,
        /// The limit.
        max: u32,
    },
    /// The block has `threads` threads, over `max`.
    ThreadsPerBlock {
        /// The capability whose limit was exceeded.
        cc: ComputeCapability,
        /// The block dimensions (x, y, z).
        block: [u64; 3],
        /// Threads in the block (the product of its dimensions).
        threads: u64,
        /// The limit.
        max: u32,
    },
    /// `grid[axis]` is over `max`.
    GridDimension {
        /// The capability whose limit was exceeded.
        cc: ComputeCapability,
        /// The grid dimensions (x, y, z).
        grid: [u64; 3],
        /// 0, 1, 2 for x, y, z.
        axis: usize,
        /// The limit.
        max: u32,
    },
    /// The block asks for `bytes` of shared memory, over `max`.
    SharedMemory {
        /// The capability whose limit was exceeded.
        cc: ComputeCapability,
        /// Shared memory the block asks for, bytes.
        bytes: u64,
        /// The limit.
        max: u32,
    },
    /// The kernel declares `bytes` of static shared memory, over `max`.
    StaticSharedMemory {
        /// The capability whose limit was exceeded.
        cc: ComputeCapability,
        /// Static shared memory of the kernel, bytes.
        bytes: u64,
        /// The limit ([`LaunchLimits::max_static_shared_per_block`]).
        max: u32,
    },
    /// A thread-block cluster on a CC before 9.0.
    NoClusters {
        /// The capability.
        cc: ComputeCapability,
        /// The cluster's blocks (x, y, z).
        cluster: [u64; 3],
    },
    /// A cluster of `blocks` blocks, over `max`.
    ClusterSize {
        /// The capability.
        cc: ComputeCapability,
        /// The cluster's blocks (x, y, z).
        cluster: [u64; 3],
        /// Blocks in the cluster.
        blocks: u64,
        /// The limit ([`LaunchLimits::max_cluster_blocks`]).
        max: u32,
        /// Whether the non-portable opt-in was given.
        non_portable: bool,
    },
    /// A cluster whose blocks' shared memory adds up to `bytes`, over `max`.
    ClusterSharedMemory {
        /// The capability.
        cc: ComputeCapability,
        /// The cluster's blocks (x, y, z).
        cluster: [u64; 3],
        /// Shared memory of all the cluster's blocks, bytes.
        bytes: u64,
        /// The limit: blocks × the per-block maximum, bytes.
        max: u64,
    },
    /// A thread declares `bytes` of local memory, over `max`.
    LocalMemory {
        /// The capability whose limit was exceeded.
        cc: ComputeCapability,
        /// Local memory one thread declares, bytes.
        bytes: u64,
        /// The limit.
        max: u32,
    },
}

fn dims(d: [u64; 3]) -> String {
    format!("{}×{}×{}", d[0], d[1], d[2])
}

const AXES: [char; 3] = ['x', 'y', 'z'];

impl fmt::Display for LaunchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LaunchError::ZeroDimension { cc, what, dims: d } => write!(
                f,
                "{what} {} has a zero dimension; CC {cc} needs every {what} dimension to be at least 1",
                dims(*d)
            ),
            LaunchError::BlockDimension { cc, block, axis, max } => write!(
                f,
                "block {} has blockDim.{} = {}; CC {cc} allows at most {max} in {}",
                dims(*block),
                AXES[*axis % 3],
                block[*axis % 3],
                AXES[*axis % 3]
            ),
            LaunchError::ThreadsPerBlock { cc, block, threads, max } => write!(
                f,
                "block {} has {threads} threads; CC {cc} allows at most {max} threads per block",
                dims(*block)
            ),
            LaunchError::GridDimension { cc, grid, axis, max } => write!(
                f,
                "grid {} has gridDim.{} = {}; CC {cc} allows at most {max} in {}",
                dims(*grid),
                AXES[*axis % 3],
                grid[*axis % 3],
                AXES[*axis % 3]
            ),
            LaunchError::SharedMemory { cc, bytes, max } => write!(
                f,
                "a block uses {bytes} bytes of shared memory; CC {cc} allows at most {max} bytes ({} KB) per block",
                max / KB
            ),
            LaunchError::StaticSharedMemory { cc, bytes, max } => write!(
                f,
                "the kernel declares {bytes} bytes of static shared memory; CC {cc} allows at most {max} bytes ({} KB) of static __shared__ arrays per block, and ptxas refuses more: declare the array `extern __shared__` and give its size at launch (--dynamic-smem; cudaFuncSetAttribute(…, cudaFuncAttributeMaxDynamicSharedMemorySize, …) on the host)",
                max / KB
            ),
            LaunchError::NoClusters { cc, cluster } => write!(
                f,
                "a cluster of {} blocks; CC {cc} has no thread-block clusters (CC 9.0 and later; CUDA Programming Guide, \"Thread Block Clusters\"): choose --cc 9.0 or later, or launch without --cluster",
                dims(*cluster)
            ),
            LaunchError::ClusterSize { cc, cluster, blocks, max, non_portable } => write!(
                f,
                "a cluster of {} = {blocks} blocks; CC {cc} allows at most {max} blocks per cluster{} (CUDA Programming Guide, \"Thread Block Clusters\": 8 portable, 16 non-portable)",
                dims(*cluster),
                if *non_portable { "" } else { " without the non-portable opt-in (--cluster-non-portable, cudaFuncAttributeNonPortableClusterSizeAllowed)" }
            ),
            LaunchError::ClusterSharedMemory { cc, cluster, bytes, max } => write!(
                f,
                "a cluster of {} blocks uses {bytes} bytes of shared memory in all; CC {cc} allows at most {max} bytes (the per-block maximum on each of its blocks' SMs)",
                dims(*cluster)
            ),
            LaunchError::LocalMemory { cc, bytes, max } => write!(
                f,
                "a thread uses {bytes} bytes of local memory; CC {cc} allows at most {max} bytes ({} KiB) per thread; put large per-thread data in global memory",
                max / KB
            ),
        }
    }
}

impl std::error::Error for LaunchError {}

/// An architecture name or list that could not be used.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ArchError {
    /// Not of the form `9.0`, `90`, `sm_90`, nor an architecture name or a named set (the
    /// offending text).
    Syntax(String),
    /// Well-formed but not in warpscope's table.
    Unknown(ComputeCapability),
    /// An empty list (or an empty item between commas).
    Empty,
}

/// The known capabilities as "1.0, 1.1, …" for error messages.
fn known_list() -> String {
    let v: Vec<String> = all().iter().map(|a| a.cc.to_string()).collect();
    v.join(", ")
}

impl fmt::Display for ArchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ArchError::Syntax(s) => write!(
                f,
                "'{s}' is not a compute capability: write it as 9.0, 90, sm_90 or compute_90, an architecture name ({}), or a set (all, guide); known: {}",
                names_list(),
                known_list()
            ),
            ArchError::Unknown(cc) => write!(
                f,
                "compute capability {cc} is not in warpscope's table; known: {} (or all, guide)",
                known_list()
            ),
            ArchError::Empty => write!(
                f,
                "empty compute-capability list; give 'all', 'guide' or a comma-separated list of: {}",
                known_list()
            ),
        }
    }
}

impl std::error::Error for ArchError {}

/// How global (and local) accesses of one kind are turned into transactions on 1.x–3.x, and
/// that 5.x+ counts sectors; see [`Arch::global_path`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, JsonSchema)]
pub enum GlobalPath {
    /// 1.x: no cache; the half-warp coalescing rules of the family decide the transactions.
    Uncached,
    /// Cached in L1: one 128-byte transaction per distinct 128-byte line per request (2.x/3.x).
    L1Lines,
    /// Cached in L2 only: one 32-byte transaction per distinct 32-byte segment per request.
    L2Segments,
    /// Through the read-only (texture) cache, 32-byte granularity (3.5/3.7 `__ldg`).
    ReadOnly,
    /// 5.x and later: one transaction per distinct 32-byte sector.
    Sectors,
}

impl GlobalPath {
    /// Bytes of one transaction, or `None` on 1.x where sizes vary (32, 64, 128).
    pub const fn transaction_bytes(self) -> Option<u32> {
        match self {
            GlobalPath::Uncached => None,
            GlobalPath::L1Lines => Some(128),
            GlobalPath::L2Segments | GlobalPath::ReadOnly | GlobalPath::Sectors => Some(32),
        }
    }
}

/// One compute capability and the facts about it that the model uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Arch {
    /// The compute capability.
    pub cc: ComputeCapability,
    /// The family of global-memory rules it follows ([`Family::of`] of `cc`).
    pub family: Family,
    /// Architecture name, e.g. "Hopper".
    pub name: &'static str,
    /// Chips and example products, e.g. "GH100: H100, H200, GH200".
    pub example: &'static str,
    /// Launch limits (threads, block and grid dimensions, shared memory per block).
    pub limits: LaunchLimits,
    /// Shared-memory banks: 16 on 1.x, 32 from 2.0 on [PG5 F.3.3, F.4.3].
    pub shared_banks: u32,
    /// Whether ordinary global loads are cached in L1 by default: 2.x yes; 1.x (no L1), 3.x,
    /// 5.0, 5.2, 5.3 no; 6.0 and later yes [BPG; reference "CC 5.0 … 12.0"]. On 5.x+ this
    /// changes hits, not sector counts.
    pub l1_caches_global_loads_by_default: bool,
    /// Whether `__ldg`/`const __restrict__` loads can use the read-only data cache: 3.5 and
    /// later [PG 3.x appendix "Read-Only Data Cache"].
    pub read_only_cache: bool,
    /// Where the row's facts come from.
    pub source: &'static str,
}

impl Arch {
    /// The path global or local accesses take on this architecture [reference "Global
    /// memory", PG5 F.4.2/F.5.2, seed 003]:
    ///
    /// - 1.x: [`GlobalPath::Uncached`] (global and local alike).
    /// - 2.x: local loads and stores: L1 lines (local memory is cached in L1 on 2.x/3.x;
    ///   *assumed* for stores too, as L1 is write-back for local data); global stores: L2
    ///   segments; global loads: L1 lines unless `config.l1` is [`L1Mode::Cg`]. No read-only
    ///   cache, so `read_only` loads are ordinary loads.
    /// - 3.x: as 2.x, except that global loads default to L2 segments (L1 lines only with
    ///   [`L1Mode::Ca`]) and `read_only` loads on 3.5/3.7 take the read-only cache
    ///   (32-byte granularity), whatever `config.l1` says.
    /// - 5.x and later: [`GlobalPath::Sectors`].
    pub fn global_path(
        &self,
        config: &Config,
        op: Op,
        read_only: bool,
        is_local: bool,
    ) -> GlobalPath {
        match self.family {
            Family::Cc1Strict | Family::Cc1Segment => GlobalPath::Uncached,
            Family::Sector => GlobalPath::Sectors,
            Family::Fermi | Family::Kepler if is_local => GlobalPath::L1Lines,
            Family::Fermi | Family::Kepler if op.writes() => GlobalPath::L2Segments,
            Family::Fermi => match config.l1 {
                L1Mode::Cg => GlobalPath::L2Segments,
                L1Mode::Default | L1Mode::Ca => GlobalPath::L1Lines,
            },
            Family::Kepler if read_only && self.read_only_cache => GlobalPath::ReadOnly,
            Family::Kepler => match config.l1 {
                L1Mode::Ca => GlobalPath::L1Lines,
                L1Mode::Default | L1Mode::Cg => GlobalPath::L2Segments,
            },
        }
    }

    /// Shorthand for `self.limits.check(grid, block)`.
    pub fn check_launch(&self, grid: [u64; 3], block: [u64; 3]) -> Result<(), LaunchError> {
        self.limits.check(grid, block)
    }
}

const SRC_1X: &str = "PG Technical Specifications table (1.x column); PG5 F.3 (memory rules)";
const SRC_2X: &str = "PG Technical Specifications table (2.x column); PG5 F.4 (memory rules)";
const SRC_3X: &str = "PG Technical Specifications table (3.x columns); PG5 F.5 (memory rules)";
const SRC_5P: &str =
    "PG Technical Specifications table; PG compute-capability appendices (global memory as on 5.x)";
const SRC_90: &str = "PG Technical Specifications table; PG 9.0 appendix; measured on H100";

const fn arch(
    major: u8,
    minor: u8,
    name: &'static str,
    example: &'static str,
    shared_kb: u32,
    source: &'static str,
) -> Arch {
    let cc = ComputeCapability::new(major, minor);
    let family = Family::of(cc);
    let limits = match family {
        Family::Cc1Strict | Family::Cc1Segment => LaunchLimits::cc1(cc),
        Family::Fermi => LaunchLimits::cc2(cc),
        Family::Kepler | Family::Sector => LaunchLimits::cc3(cc, shared_kb),
    };
    Arch {
        cc,
        family,
        name,
        example,
        limits,
        shared_banks: if major == 1 { 16 } else { 32 },
        l1_caches_global_loads_by_default: major == 2 || major >= 6,
        read_only_cache: cc.at_least(3, 5),
        source,
    }
}

/// The table, in ascending order. Shared memory per block (KB, opt-in maximum) per the PG
/// table: 1.x 16; 2.x–6.x 48; 7.0/7.2 96; 7.5 64; 8.0/8.7 163; 8.6/8.9 99; 9.0, 10.x, 11.0
/// 227; 12.x 99.
static ARCHS: [Arch; 29] = [
    arch(
        1,
        0,
        "Tesla",
        "G80: GeForce 8800 GTX, Tesla C870",
        16,
        SRC_1X,
    ),
    arch(
        1,
        1,
        "Tesla",
        "G84/G86/G92: GeForce 8600 GT, 9800 GTX",
        16,
        SRC_1X,
    ),
    arch(
        1,
        2,
        "Tesla",
        "GT215/GT216/GT218: GeForce GT 240",
        16,
        SRC_1X,
    ),
    arch(
        1,
        3,
        "Tesla",
        "GT200: GeForce GTX 280, Tesla C1060",
        16,
        SRC_1X,
    ),
    arch(
        2,
        0,
        "Fermi",
        "GF100/GF110: GeForce GTX 480, Tesla C2050",
        48,
        SRC_2X,
    ),
    arch(
        2,
        1,
        "Fermi",
        "GF104/GF106/GF108: GeForce GTX 460",
        48,
        SRC_2X,
    ),
    arch(
        3,
        0,
        "Kepler",
        "GK104/GK106/GK107: GeForce GTX 680, Tesla K10",
        48,
        SRC_3X,
    ),
    arch(3, 2, "Kepler", "GK20A: Tegra K1", 48, SRC_3X),
    arch(
        3,
        5,
        "Kepler",
        "GK110/GK208: Tesla K20, K40, GeForce GTX Titan",
        48,
        SRC_3X,
    ),
    arch(3, 7, "Kepler", "GK210: Tesla K80", 48, SRC_3X),
    arch(
        5,
        0,
        "Maxwell",
        "GM107/GM108: GeForce GTX 750 Ti",
        48,
        SRC_5P,
    ),
    arch(
        5,
        2,
        "Maxwell",
        "GM200/GM204/GM206: GeForce GTX 980, Tesla M40",
        48,
        SRC_5P,
    ),
    arch(5, 3, "Maxwell", "GM20B: Tegra X1", 48, SRC_5P),
    arch(6, 0, "Pascal", "GP100: Tesla P100", 48, SRC_5P),
    arch(
        6,
        1,
        "Pascal",
        "GP102/GP104/GP106: GeForce GTX 1080, Tesla P40",
        48,
        SRC_5P,
    ),
    arch(6, 2, "Pascal", "GP10B: Tegra X2", 48, SRC_5P),
    arch(7, 0, "Volta", "GV100: Tesla V100", 96, SRC_5P),
    arch(7, 2, "Volta", "GV10B: Jetson AGX Xavier", 96, SRC_5P),
    arch(
        7,
        5,
        "Turing",
        "TU10x: GeForce RTX 2080, Tesla T4",
        64,
        SRC_5P,
    ),
    arch(8, 0, "Ampere", "GA100: A100", 163, SRC_5P),
    arch(8, 6, "Ampere", "GA10x: GeForce RTX 3090, A40", 99, SRC_5P),
    arch(8, 7, "Ampere", "GA10B: Jetson AGX Orin", 163, SRC_5P),
    arch(
        8,
        9,
        "Ada Lovelace",
        "AD10x: GeForce RTX 4090, L40",
        99,
        SRC_5P,
    ),
    arch(9, 0, "Hopper", "GH100: H100, H200, GH200", 227, SRC_90),
    arch(10, 0, "Blackwell", "GB100: B200, GB200", 227, SRC_5P),
    arch(10, 3, "Blackwell", "GB300: B300", 227, SRC_5P),
    arch(
        11,
        0,
        "Blackwell",
        "Jetson Thor (CC 10.1 before CUDA 13)",
        227,
        SRC_5P,
    ),
    arch(
        12,
        0,
        "Blackwell",
        "GB20x: GeForce RTX 5090, RTX PRO 6000",
        99,
        SRC_5P,
    ),
    arch(12, 1, "Blackwell", "GB10: DGX Spark", 99, SRC_5P),
];

/// Every compute capability warpscope knows, in ascending order: 1.0, 1.1, 1.2, 1.3, 2.0,
/// 2.1, 3.0, 3.2, 3.5, 3.7, 5.0, 5.2, 5.3, 6.0, 6.1, 6.2, 7.0, 7.2, 7.5, 8.0, 8.6, 8.7, 8.9,
/// 9.0, 10.0, 10.3, 11.0, 12.0, 12.1.
pub fn all() -> &'static [Arch] {
    &ARCHS
}

/// The table row of `cc`, or `None` when warpscope does not know it.
pub fn lookup(cc: ComputeCapability) -> Option<&'static Arch> {
    ARCHS.iter().find(|a| a.cc == cc)
}

/// The compute capabilities `--cc` analyzes when none is given: 9.0 (Hopper), the one
/// whose rules were measured (on an H100). The command line takes the GPU at hand instead
/// when it is built with the `cuda` feature and finds one.
pub const DEFAULT_CC: ComputeCapability = ComputeCapability::new(9, 0);

/// The named set `guide`: the compute capabilities of the Programming Guide's classic
/// comparison of coalescing rules, then one per later generation of rules:
///
/// - 1.0 (strict half-warp coalescing), 1.3 (half-warp segments of 32/64/128 bytes) and 2.0
///   (128-byte L1 lines): the three columns of the guide's "Examples of Global Memory
///   Accesses" figures [PG5 F.3.2, F.4.2];
/// - 3.5 (32-byte L2 segments, the read-only cache), 5.2 (the first 32-byte-sector
///   generation), 7.0 (Volta's unified L1), 8.0 (A100), 9.0 (H100, measured) and 12.0
///   (consumer Blackwell): the guide's later appendices, where the rules are sectors.
pub const GUIDE_SET: [ComputeCapability; 9] = [
    ComputeCapability::new(1, 0),
    ComputeCapability::new(1, 3),
    ComputeCapability::new(2, 0),
    ComputeCapability::new(3, 5),
    ComputeCapability::new(5, 2),
    ComputeCapability::new(7, 0),
    ComputeCapability::new(8, 0),
    ComputeCapability::new(9, 0),
    ComputeCapability::new(12, 0),
];

/// The named sets `--cc` takes: `all` (every row of the table) and `guide` ([`GUIDE_SET`]).
pub const NAMED_SETS: [&str; 2] = ["all", "guide"];

/// The rows of a named set ([`NAMED_SETS`], case-insensitive), or `None`.
pub fn named_set(name: &str) -> Option<Vec<&'static Arch>> {
    match name.trim().to_ascii_lowercase().as_str() {
        "all" => Some(ARCHS.iter().collect()),
        "guide" => Some(GUIDE_SET.iter().filter_map(|&cc| lookup(cc)).collect()),
        _ => None,
    }
}

/// Whether every item of the list `s` is a named set (`all`, `guide`): the analysis then
/// leaves out, with a note, the capabilities that cannot run a launch instead of failing.
pub fn is_named_set(s: &str) -> bool {
    s.split(',').all(|item| named_set(item).is_some())
}

/// The compute capability an architecture name stands for: its first (lowest) row in the
/// table. Names are those of [`Arch::name`], case-insensitive, or one word of them: `tesla`
/// 1.0, `fermi` 2.0, `kepler` 3.0, `maxwell` 5.0, `pascal` 6.0, `volta` 7.0, `turing` 7.5,
/// `ampere` 8.0, `ada` (or `lovelace`, `ada lovelace`) 8.9, `hopper` 9.0, `blackwell` 10.0.
pub fn by_name(name: &str) -> Option<&'static Arch> {
    let n = name.trim().to_ascii_lowercase().replace(['_', '-'], " ");
    if n.is_empty() {
        return None;
    }
    ARCHS.iter().find(|a| {
        let full = a.name.to_ascii_lowercase();
        full == n || full.split(' ').any(|w| w == n)
    })
}

/// The architecture names [`by_name`] knows, each with its compute capability, in table
/// order: "tesla 1.0, fermi 2.0, …".
pub fn names_list() -> String {
    let mut out: Vec<String> = Vec::new();
    for a in ARCHS.iter() {
        let n = a.name.to_ascii_lowercase();
        let first = n.split(' ').next().unwrap_or(&n).to_string();
        if !out.iter().any(|x| x.starts_with(&format!("{first} "))) {
            out.push(format!("{first} {}", a.cc));
        }
    }
    out.join(", ")
}

/// Parses a `--cc` list into table rows, in the order given, duplicates removed. Each
/// comma-separated item (spaces allowed) is one of:
///
/// - a compute capability: `9.0`, `90`, `sm_90`, `sm_90a`, `compute_90` ([`ComputeCapability`]);
/// - an architecture name, standing for its first compute capability: `hopper` (9.0),
///   `ampere` (8.0), `kepler` (3.0), … ([`by_name`]);
/// - a named set: `all` (every capability) or `guide` ([`GUIDE_SET`]).
///
/// Errors: [`ArchError::Syntax`] for an item that is none of these, [`ArchError::Unknown`]
/// for a capability not in the table, [`ArchError::Empty`] for an empty list or item; every
/// message lists what is accepted.
pub fn parse_list(s: &str) -> Result<Vec<&'static Arch>, ArchError> {
    let mut out: Vec<&'static Arch> = Vec::new();
    let mut push = |a: &'static Arch| {
        if !out.iter().any(|b| b.cc == a.cc) {
            out.push(a);
        }
    };
    for item in s.split(',') {
        let item = item.trim();
        if item.is_empty() {
            return Err(ArchError::Empty);
        }
        if let Some(set) = named_set(item) {
            set.into_iter().for_each(&mut push);
            continue;
        }
        if let Some(a) = by_name(item) {
            push(a);
            continue;
        }
        let cc: ComputeCapability = item.parse()?;
        push(lookup(cc).ok_or(ArchError::Unknown(cc))?);
    }
    Ok(out)
}

/// The default: [`DEFAULT_CC`] alone.
pub fn default_set() -> Vec<&'static Arch> {
    lookup(DEFAULT_CC).into_iter().collect()
}

/// The rows of [`GUIDE_SET`].
pub fn guide_set() -> Vec<&'static Arch> {
    GUIDE_SET.iter().filter_map(|&cc| lookup(cc)).collect()
}

/// The family of rules of `family` in words, for people: "half-warps, strict coalescing"
/// (1.0/1.1), "half-warps, 32/64/128-byte segments" (1.2/1.3), "128-byte L1 lines" (2.x),
/// "32-byte L2 segments" (3.x), "32-byte sectors" (5.0 on).
pub const fn rules_in_words(family: Family) -> &'static str {
    match family {
        Family::Cc1Strict => "half-warps, strict coalescing",
        Family::Cc1Segment => "half-warps, 32/64/128-byte segments",
        Family::Fermi => "128-byte L1 lines",
        Family::Kepler => "32-byte L2 segments",
        Family::Sector => "32-byte sectors",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cc(s: &str) -> ComputeCapability {
        s.parse().unwrap()
    }

    #[test]
    fn parse_forms() {
        for s in [
            "9.0",
            "90",
            "sm_90",
            "SM_90",
            "sm_90a",
            "compute_90",
            " 9.0 ",
        ] {
            assert_eq!(cc(s), ComputeCapability::new(9, 0), "{s}");
        }
        assert_eq!(cc("8.6"), ComputeCapability::new(8, 6));
        assert_eq!(cc("100"), ComputeCapability::new(10, 0));
        assert_eq!(cc("sm_100f"), ComputeCapability::new(10, 0));
        assert_eq!(cc("121"), ComputeCapability::new(12, 1));
        assert_eq!(cc("10.3"), ComputeCapability::new(10, 3));
        for s in [
            "", "9", "9.", ".0", "x9.0", "9.0.1", "sm_", "9.10", "a.b", "-9.0",
        ] {
            assert!(
                s.parse::<ComputeCapability>().is_err(),
                "{s:?} should not parse"
            );
        }
    }

    #[test]
    fn display_and_order() {
        assert_eq!(cc("sm_90").to_string(), "9.0");
        assert_eq!(cc("121").to_string(), "12.1");
        assert!(cc("8.9") < cc("9.0"));
        assert!(cc("9.0") < cc("10.0"));
        assert!(cc("1.3") < cc("2.0"));
        assert!(cc("9.0").at_least(7, 0) && !cc("6.2").at_least(7, 0));
        let mut v = vec![cc("12.0"), cc("1.0"), cc("10.0"), cc("9.0")];
        v.sort();
        assert_eq!(v, vec![cc("1.0"), cc("9.0"), cc("10.0"), cc("12.0")]);
    }

    #[test]
    fn table_is_sorted_complete_and_consistent() {
        let want = "1.0,1.1,1.2,1.3,2.0,2.1,3.0,3.2,3.5,3.7,5.0,5.2,5.3,6.0,6.1,6.2,7.0,7.2,7.5,8.0,8.6,8.7,8.9,9.0,10.0,10.3,11.0,12.0,12.1";
        let got: Vec<String> = all().iter().map(|a| a.cc.to_string()).collect();
        assert_eq!(got.join(","), want);
        for w in all().windows(2) {
            assert!(w[0].cc < w[1].cc);
        }
        for a in all() {
            assert_eq!(a.limits.cc, a.cc);
            assert_eq!(a.family, Family::of(a.cc));
            assert_eq!(lookup(a.cc), Some(a));
            assert_eq!(a.shared_banks, if a.cc.major == 1 { 16 } else { 32 });
            assert_eq!(a.read_only_cache, a.cc >= cc("3.5"));
        }
    }

    #[test]
    fn families() {
        let f = |s| lookup(cc(s)).unwrap().family;
        assert_eq!(f("1.0"), Family::Cc1Strict);
        assert_eq!(f("1.1"), Family::Cc1Strict);
        assert_eq!(f("1.2"), Family::Cc1Segment);
        assert_eq!(f("1.3"), Family::Cc1Segment);
        assert_eq!(f("2.1"), Family::Fermi);
        assert_eq!(f("3.7"), Family::Kepler);
        assert_eq!(f("5.0"), Family::Sector);
        assert_eq!(f("12.1"), Family::Sector);
    }

    #[test]
    fn limits_values() {
        let l = |s| lookup(cc(s)).unwrap().limits;
        assert_eq!(l("1.3").max_threads_per_block, 512);
        assert_eq!(l("1.3").max_block, [512, 512, 64]);
        assert_eq!(l("1.0").max_grid, [65535, 65535, 1]);
        assert_eq!(l("1.0").max_shared_per_block, 16384);
        assert_eq!(l("2.0").max_grid, [65535, 65535, 65535]);
        assert_eq!(l("2.0").max_shared_per_block, 49152);
        assert_eq!(l("3.0").max_grid, [2147483647, 65535, 65535]);
        assert_eq!(l("7.0").max_shared_per_block, 96 * 1024);
        assert_eq!(l("7.5").max_shared_per_block, 64 * 1024);
        assert_eq!(l("8.0").max_shared_per_block, 163 * 1024);
        assert_eq!(l("8.6").max_shared_per_block, 99 * 1024);
        assert_eq!(l("8.9").max_shared_per_block, 99 * 1024);
        assert_eq!(l("9.0").max_shared_per_block, 227 * 1024);
        assert_eq!(l("10.0").max_shared_per_block, 227 * 1024);
        assert_eq!(l("12.0").max_shared_per_block, 99 * 1024);
        assert_eq!(l("9.0").max_threads_per_block, 1024);
    }

    #[test]
    fn cluster_checks() {
        let h = lookup(cc("9.0")).unwrap().limits;
        assert_eq!(h.check_cluster([1, 1, 1], 0, false), Ok(()));
        assert_eq!(h.check_cluster([2, 2, 2], 1024, false), Ok(()));
        let e = h
            .check_cluster([4, 4, 1], 0, false)
            .unwrap_err()
            .to_string();
        assert!(e.contains("4×4×1 = 16 blocks; CC 9.0 allows at most 8 blocks per cluster without the non-portable opt-in"), "{e}");
        assert_eq!(h.check_cluster([4, 4, 1], 0, true), Ok(()));
        let e = h.check_cluster([4, 4, 2], 0, true).unwrap_err().to_string();
        assert!(
            e.contains("32 blocks; CC 9.0 allows at most 16 blocks per cluster ("),
            "{e}"
        );
        let a = lookup(cc("8.0")).unwrap().limits;
        let e = a
            .check_cluster([2, 1, 1], 0, false)
            .unwrap_err()
            .to_string();
        assert!(e.contains("CC 8.0 has no thread-block clusters"), "{e}");
        // 2 blocks of 228 KB each: 2 × 227 KB are allowed.
        let e = h
            .check_cluster([2, 1, 1], 228 * 1024, false)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains(
                "uses 466944 bytes of shared memory in all; CC 9.0 allows at most 464896 bytes"
            ),
            "{e}"
        );
    }

    #[test]
    fn launch_checks() {
        let h = lookup(cc("9.0")).unwrap();
        assert_eq!(h.check_launch([1, 1, 1], [1024, 1, 1]), Ok(()));
        assert_eq!(
            h.check_launch([2147483647, 65535, 65535], [32, 32, 1]),
            Ok(())
        );
        let e = h.check_launch([1, 1, 1], [2048, 1, 1]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "block 2048×1×1 has 2048 threads; CC 9.0 allows at most 1024 threads per block"
        );
        let e = h.check_launch([1, 1, 1], [64, 32, 1]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "block 64×32×1 has 2048 threads; CC 9.0 allows at most 1024 threads per block"
        );
        let e = h.check_launch([1, 1, 1], [1, 1, 65]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "block 1×1×65 has blockDim.z = 65; CC 9.0 allows at most 64 in z"
        );
        let e = h.check_launch([0, 1, 1], [32, 1, 1]).unwrap_err();
        assert!(
            e.to_string().contains("grid 0×1×1 has a zero dimension"),
            "{e}"
        );
        let e = h.check_launch([1, 1, 1], [32, 0, 1]).unwrap_err();
        assert!(e.to_string().contains("block 32×0×1"), "{e}");
        let e = h.check_launch([1, 65536, 1], [32, 1, 1]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "grid 1×65536×1 has gridDim.y = 65536; CC 9.0 allows at most 65535 in y"
        );
        let t = lookup(cc("1.0")).unwrap();
        let e = t.check_launch([1, 1, 2], [32, 1, 1]).unwrap_err();
        assert!(
            e.to_string().contains("CC 1.0 allows at most 1 in z"),
            "{e}"
        );
        let e = t.check_launch([70000, 1, 1], [32, 1, 1]).unwrap_err();
        assert!(e.to_string().contains("at most 65535 in x"), "{e}");
        let e = t.check_launch([1, 1, 1], [513, 1, 1]).unwrap_err();
        assert!(
            e.to_string()
                .contains("513 threads; CC 1.0 allows at most 512"),
            "{e}"
        );
        let e = t.check_launch([1, 1, 1], [1, 1, 65]).unwrap_err();
        assert!(
            e.to_string().contains("CC 1.0 allows at most 64 in z"),
            "{e}"
        );
        let e = t.check_launch([1, 1, 1], [32, 32, 1]).unwrap_err();
        assert!(
            e.to_string()
                .contains("1024 threads; CC 1.0 allows at most 512"),
            "{e}"
        );
        assert!(h.limits.check_shared(227 * 1024).is_ok());
        let e = h.limits.check_shared(227 * 1024 + 1).unwrap_err();
        assert!(
            e.to_string()
                .contains("CC 9.0 allows at most 232448 bytes (227 KB)"),
            "{e}"
        );
        // Huge dimensions must not overflow.
        assert!(h
            .check_launch([1, 1, 1], [u64::MAX, u64::MAX, u64::MAX])
            .is_err());
    }

    #[test]
    fn grid_x_limit_per_generation() {
        let check = |c: &str, x: u64| lookup(cc(c)).unwrap().check_launch([x, 1, 1], [32, 1, 1]);
        // 1.x and 2.x: 65535 blocks in x; 3.0 on: 2^31 - 1.
        for c in ["1.0", "1.3", "2.0", "2.1"] {
            assert!(check(c, 65535).is_ok(), "{c}");
            assert_eq!(
                check(c, 65536).unwrap_err().to_string(),
                format!("grid 65536×1×1 has gridDim.x = 65536; CC {c} allows at most 65535 in x")
            );
        }
        for c in ["3.0", "9.0", "12.0"] {
            assert!(check(c, 2147483647).is_ok(), "{c}");
            assert_eq!(
                check(c, 2147483648).unwrap_err().to_string(),
                format!("grid 2147483648×1×1 has gridDim.x = 2147483648; CC {c} allows at most 2147483647 in x")
            );
        }
        // z: one block on 1.x, 65535 from 2.0 on.
        let z = |c: &str, z: u64| lookup(cc(c)).unwrap().check_launch([1, 1, z], [32, 1, 1]);
        assert!(z("2.0", 65535).is_ok() && z("9.0", 65535).is_ok());
        assert!(z("9.0", 65536)
            .unwrap_err()
            .to_string()
            .contains("at most 65535 in z"));
    }

    #[test]
    fn local_memory_per_thread() {
        let l = |c: &str| lookup(cc(c)).unwrap().limits;
        assert_eq!(l("1.3").max_local_per_thread(), 16 * 1024);
        assert_eq!(l("2.0").max_local_per_thread(), 512 * 1024);
        assert_eq!(l("9.0").max_local_per_thread(), 512 * 1024);
        assert!(l("9.0").check_local(512 * 1024).is_ok());
        assert_eq!(
            l("9.0").check_local(512 * 1024 + 4).unwrap_err().to_string(),
            "a thread uses 524292 bytes of local memory; CC 9.0 allows at most 524288 bytes (512 KiB) per thread; put large per-thread data in global memory"
        );
        assert!(l("1.0")
            .check_local(16 * 1024 + 1)
            .unwrap_err()
            .to_string()
            .contains("CC 1.0 allows at most 16384 bytes (16 KiB)"));
    }

    #[test]
    fn lists() {
        assert_eq!(parse_list("all").unwrap().len(), all().len());
        assert_eq!(parse_list(" ALL ").unwrap().len(), all().len());
        let v = parse_list("9.0").unwrap();
        assert_eq!(v.len(), 1);
        assert_eq!(v[0].name, "Hopper");
        let v: Vec<String> = parse_list("1.0, 1.3,2.0,sm_90,9.0")
            .unwrap()
            .iter()
            .map(|a| a.cc.to_string())
            .collect();
        assert_eq!(v, ["1.0", "1.3", "2.0", "9.0"]);
        let e = parse_list("9.0,4.0").unwrap_err();
        assert_eq!(e, ArchError::Unknown(ComputeCapability::new(4, 0)));
        let m = e.to_string();
        assert!(m.contains("4.0 is not in warpscope's table"), "{m}");
        assert!(
            m.contains("1.0, 1.1, 1.2, 1.3, 2.0") && m.contains("12.1"),
            "{m}"
        );
        assert!(matches!(parse_list("hoper"), Err(ArchError::Syntax(_))));
        let m = parse_list("hoper").unwrap_err().to_string();
        assert!(m.contains("'hoper' is not a compute capability"), "{m}");
        assert!(m.contains("hopper 9.0") && m.contains("all, guide"), "{m}");
        assert_eq!(parse_list(""), Err(ArchError::Empty));
        assert_eq!(parse_list("9.0,,8.0"), Err(ArchError::Empty));
        let d: Vec<String> = default_set().iter().map(|a| a.cc.to_string()).collect();
        assert_eq!(d, ["9.0"]);
    }

    fn ccs(s: &str) -> Vec<String> {
        parse_list(s)
            .unwrap()
            .iter()
            .map(|a| a.cc.to_string())
            .collect()
    }

    /// Every spelling of 9.0 `--cc` takes, names standing for their first CC, the guide set,
    /// and lists mixing them (in order, duplicates dropped).
    #[test]
    fn names_sets_and_spellings() {
        for s in [
            "9.0",
            "90",
            "sm_90",
            "compute_90",
            "sm_90a",
            "hopper",
            "Hopper",
        ] {
            assert_eq!(ccs(s), ["9.0"], "{s}");
        }
        let names = [
            ("tesla", "1.0"),
            ("fermi", "2.0"),
            ("kepler", "3.0"),
            ("maxwell", "5.0"),
            ("pascal", "6.0"),
            ("volta", "7.0"),
            ("turing", "7.5"),
            ("ampere", "8.0"),
            ("ada", "8.9"),
            ("lovelace", "8.9"),
            ("ada lovelace", "8.9"),
            ("ada_lovelace", "8.9"),
            ("blackwell", "10.0"),
        ];
        for (n, cc) in names {
            assert_eq!(ccs(n), [cc], "{n}");
        }
        assert_eq!(
            ccs("guide"),
            ["1.0", "1.3", "2.0", "3.5", "5.2", "7.0", "8.0", "9.0", "12.0"]
        );
        assert_eq!(ccs("volta, 9.0 ,ampere,sm_70"), ["7.0", "9.0", "8.0"]);
        assert_eq!(ccs("guide,10.0,9.0").len(), 10);
        assert_eq!(ccs("all,guide").len(), all().len());
        assert!(is_named_set("all") && is_named_set("guide, ALL"));
        assert!(!is_named_set("guide,9.0") && !is_named_set("hopper"));
        assert_eq!(
            names_list(),
            "tesla 1.0, fermi 2.0, kepler 3.0, maxwell 5.0, pascal 6.0, volta 7.0, turing 7.5, ampere 8.0, ada 8.9, hopper 9.0, blackwell 10.0"
        );
        assert_eq!(rules_in_words(Family::Fermi), "128-byte L1 lines");
    }

    #[test]
    fn global_paths() {
        let a = |s| lookup(cc(s)).unwrap();
        let d = Config::default();
        let ca = Config {
            l1: L1Mode::Ca,
            ..d
        };
        let cg = Config {
            l1: L1Mode::Cg,
            ..d
        };
        use GlobalPath::*;
        assert_eq!(a("1.3").global_path(&d, Op::Load, false, false), Uncached);
        assert_eq!(a("1.0").global_path(&d, Op::Load, false, true), Uncached);
        assert_eq!(a("2.0").global_path(&d, Op::Load, false, false), L1Lines);
        assert_eq!(a("2.0").global_path(&ca, Op::Load, false, false), L1Lines);
        assert_eq!(
            a("2.0").global_path(&cg, Op::Load, false, false),
            L2Segments
        );
        assert_eq!(a("2.0").global_path(&d, Op::Load, true, false), L1Lines);
        assert_eq!(
            a("2.0").global_path(&d, Op::Store, false, false),
            L2Segments
        );
        assert_eq!(a("2.0").global_path(&cg, Op::Load, false, true), L1Lines);
        assert_eq!(a("3.5").global_path(&d, Op::Load, false, false), L2Segments);
        assert_eq!(a("3.5").global_path(&ca, Op::Load, false, false), L1Lines);
        assert_eq!(a("3.5").global_path(&ca, Op::Load, true, false), ReadOnly);
        assert_eq!(a("3.0").global_path(&d, Op::Load, true, false), L2Segments);
        assert_eq!(a("3.7").global_path(&d, Op::Store, false, true), L1Lines);
        assert_eq!(a("9.0").global_path(&ca, Op::Store, true, true), Sectors);
        assert_eq!(L1Lines.transaction_bytes(), Some(128));
        assert_eq!(Uncached.transaction_bytes(), None);
    }

    #[test]
    fn defaults_for_l1() {
        let a = |s| lookup(cc(s)).unwrap().l1_caches_global_loads_by_default;
        assert!(
            !a("1.3") && a("2.0") && !a("3.5") && !a("5.0") && !a("5.2") && a("6.0") && a("9.0")
        );
    }
}
