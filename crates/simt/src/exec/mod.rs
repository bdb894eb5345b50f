//! The SIMT executor: every warp of every block, in lockstep under an active mask, with a
//! reconvergence stack; blocks' warps run in turn up to each barrier.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use warpscope_model::{Space, WarpAccess, WARP_SIZE};

mod access;
mod bulk;
mod checks;
mod cluster;
mod initcheck;
mod mbarrier;
pub(crate) mod mma;
pub(crate) mod mma_sp;
mod packed;
mod racecheck;
mod step;
mod sync;
mod tcgen05;
mod tensormap;
mod texture;
mod tma;
mod wgmma;

pub use checks::{Findings, InitFinding, RaceFinding};
pub use cluster::{MAX_CLUSTER_BLOCKS, RANK_SHIFT};
pub use racecheck::{AccessKind, Hazard};
pub use sync::SyncFinding;
pub use tensormap::{decode_tensor_map, layout as tensormap_layout, replace_field};
pub use texture::{texref_handle, texture_handle, TextureBinding, TEXTURE_BASE, TEXTURE_SPACING};
pub use tma::{
    Im2col, Swizzle, TensorMap, TensorMapBinding, PARAM_ADDRESS_BASE, PARAM_ADDRESS_SPACING,
};

use crate::decode::{window, Program};
use crate::error::{At, Error, Result, RunawayLimit};
use crate::instr::*;
use crate::memory::{self, Alloc, Global};
use crate::special::idx;
use warpscope_init::Contents;

/// Which warp issued an access: its block's coordinates and its index within the block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WarpOrigin {
    pub block: [u32; 3],
    pub warp: u32,
}

/// A launch of a decoded kernel.
#[derive(Clone, Debug)]
pub struct Launch {
    /// Blocks per grid and threads per block (x, y, z).
    pub grid: [u32; 3],
    pub block: [u32; 3],
    /// Blocks per thread-block cluster (x, y, z; CC 9.0+): each dimension must divide the
    /// grid's. `[1, 1, 1]` (the default): no cluster, every block alone (an implicit cluster
    /// of one). The blocks of a cluster run together, interleaved (`exec/cluster.rs`).
    pub cluster: [u32; 3],
    /// Whether the cluster shape is the kernel's or the launch's own (`%is_explicit_cluster`):
    /// `.explicitcluster`/`.reqnctapercluster` or a launch with a cluster attribute.
    pub explicit_cluster: bool,
    /// The bytes of each kernel parameter, in order (pointer parameters hold an
    /// allocation's base address).
    pub args: Vec<Vec<u8>>,
    /// Global allocations of the pointer parameters, and their initial contents (`--init`;
    /// read only when loaded values reach an address or a branch, else they cannot matter).
    pub allocs: Vec<(Alloc, Contents)>,
    /// Bytes of dynamic (`extern .shared`) shared memory per block.
    pub dynamic_shared_bytes: u64,
    /// Warp instructions one block may execute before the run is called runaway.
    pub max_steps: u64,
    /// Wall-clock time one block may run before it is called runaway, once it has also
    /// executed [`MIN_STEPS_FOR_TIME`] warp instructions (the floor keeps a slow or busy
    /// machine from flagging small blocks). `None`: only [`Launch::max_steps`] applies.
    pub max_block_time: Option<Duration>,
    /// Bytes the memory images may hold: global memory written (kept when loaded values
    /// matter) plus each running block's shared and local memory. Default
    /// [`DEFAULT_MAX_MEMORY`].
    pub max_memory: u64,
    /// Threads that run blocks when blocks are independent; 0: one per core.
    pub threads: usize,
    /// Counters a progress bar reads while the launch runs (blocks done of total).
    pub progress: Option<Arc<Progress>>,
    /// The texture and surface objects (`--texture`) the parameters hold handles of.
    pub textures: Vec<TextureBinding>,
    /// The tensor maps (`--tensor-map`) of `CUtensorMap` parameters, for TMA tensor copies.
    pub tensor_maps: Vec<TensorMapBinding>,
    /// Run only these blocks (linear indices `x + gx·(y + gy·z)`, ascending): a sample of the
    /// grid ([`sample_blocks`]); `None`: every block. With a cluster of more than one block,
    /// the indices are those of clusters in the grid of clusters (`grid / cluster`): a
    /// cluster runs whole or not at all.
    pub sample: Option<Arc<Vec<u64>>>,
    /// Where the run records what synccheck, racecheck and initcheck find
    /// (`exec/checks.rs`); `None`: no check (and no cost but a test per shared access).
    pub findings: Option<Arc<Findings>>,
}

impl Default for Launch {
    /// One block of one warp, no parameters, the default limits.
    fn default() -> Self {
        Launch {
            grid: [1, 1, 1],
            block: [32, 1, 1],
            cluster: [1, 1, 1],
            explicit_cluster: false,
            args: Vec::new(),
            allocs: Vec::new(),
            dynamic_shared_bytes: 0,
            max_steps: DEFAULT_MAX_STEPS,
            max_block_time: None,
            max_memory: DEFAULT_MAX_MEMORY,
            threads: 0,
            progress: None,
            textures: Vec::new(),
            tensor_maps: Vec::new(),
            sample: None,
            findings: None,
        }
    }
}

/// A sample of `want` blocks of `grid`, spread evenly over the linear order and always
/// holding the first and the last block and the last block of each grid dimension (where a
/// grid that does not divide the problem has its partial blocks): linear indices,
/// ascending, without repeats. Every block when `want` ≥ the grid's blocks.
pub fn sample_blocks(grid: [u32; 3], want: u64) -> Vec<u64> {
    let [gx, gy, gz] = grid.map(|x| x as u64);
    let total = gx * gy * gz;
    if want >= total {
        return (0..total).collect();
    }
    let want = want.max(2);
    let mut v: Vec<u64> = (0..want)
        .map(|i| ((i as u128 * (total - 1) as u128) / (want - 1) as u128) as u64)
        .collect();
    // The corners where x, y or z is last.
    for (x, y, z) in [
        (gx - 1, 0, 0),
        (0, gy - 1, 0),
        (0, 0, gz - 1),
        (gx - 1, gy - 1, 0),
        (gx - 1, gy - 1, gz - 1),
    ] {
        v.push(x + gx * (y + gy * z));
    }
    v.sort_unstable();
    v.dedup();
    v
}

#[cfg(test)]
mod sample_tests {
    use super::sample_blocks;

    #[test]
    fn samples_hold_the_ends_and_the_last_block_of_each_dimension() {
        // 10 × 4 grid, 5 blocks spread over 0 … 39, plus (9,0), (0,3), (9,3).
        assert_eq!(sample_blocks([10, 4, 1], 5), vec![0, 9, 19, 29, 30, 39]);
        // A sample as large as the grid is the grid.
        assert_eq!(sample_blocks([3, 2, 1], 6), (0..6).collect::<Vec<_>>());
        assert_eq!(sample_blocks([3, 2, 1], 100).len(), 6);
        // 3-D: the last z plane's corner is in.
        let s = sample_blocks([4, 4, 4], 3);
        assert!(s.contains(&0) && s.contains(&63) && s.contains(&48));
    }
}

/// Default for [`Launch::max_steps`].
pub const DEFAULT_MAX_STEPS: u64 = 200_000_000;

/// Default for [`Launch::max_memory`]: 4 GiB.
pub const DEFAULT_MAX_MEMORY: u64 = 4 << 30;

/// Warp instructions a block must have executed before [`Launch::max_block_time`] can call it
/// runaway: 2²⁰, a quarter to half a second of a loop with memory accesses on a busy machine,
/// so that a slow machine alone does not flag a small block.
pub const MIN_STEPS_FOR_TIME: u64 = 1 << 20;

/// Warp instructions between two checks of the clock and of the stop flag (the hot loop
/// compares one counter).
const CHECK_EVERY: u64 = 1 << 16;

/// Progress of a running launch, shared with another thread (a progress bar): the executor
/// adds to it once per block, so reading it costs the run nothing.
#[derive(Debug, Default)]
pub struct Progress {
    /// Blocks of the launch (set when the run starts).
    pub blocks_total: AtomicU64,
    /// Blocks finished.
    pub blocks_done: AtomicU64,
    /// Warp instructions of the finished blocks.
    pub steps_done: AtomicU64,
    /// When the run started (after decoding and checking the launch).
    started: Mutex<Option<Instant>>,
}

impl Progress {
    /// Time since the run started; `None` before it starts.
    pub fn elapsed(&self) -> Option<Duration> {
        let started = *self.started.lock().unwrap_or_else(|e| e.into_inner());
        started.map(|t| t.elapsed())
    }

    /// (blocks done, blocks in all).
    pub fn blocks(&self) -> (u64, u64) {
        (
            self.blocks_done.load(Ordering::Relaxed),
            self.blocks_total.load(Ordering::Relaxed),
        )
    }

    /// Time the whole launch takes at the rate of the blocks done so far (every block
    /// assumed to cost the same); `None` before the first block is done. Seconds, as f64:
    /// a 2³¹×65535×65535 grid's estimate overflows a `Duration`.
    pub fn estimated_total_secs(&self) -> Option<f64> {
        let (done, total) = self.blocks();
        let t = self.elapsed()?.as_secs_f64();
        (done > 0).then(|| t * total as f64 / done as f64)
    }

    /// Starts counting a run of `blocks` blocks (a reused `Progress` starts again).
    fn start(&self, blocks: u64) {
        self.blocks_total.store(blocks, Ordering::Relaxed);
        self.blocks_done.store(0, Ordering::Relaxed);
        self.steps_done.store(0, Ordering::Relaxed);
        *self.started.lock().unwrap_or_else(|e| e.into_inner()) = Some(Instant::now());
    }

    fn block_done(&self, steps: u64) {
        self.blocks_done.fetch_add(1, Ordering::Relaxed);
        self.steps_done.fetch_add(steps, Ordering::Relaxed);
    }
}

#[derive(Clone, Copy, Debug)]
struct Entry {
    pc: u32,
    rpc: u32,
    mask: u32,
}

struct Frame {
    /// Stack depth below the callee's first entry.
    base: usize,
    /// The `call` instruction (for its return moves).
    call: u32,
    returned: u32,
}

enum Yield {
    Barrier,
    Done,
    /// A `nanosleep` or an unsuccessful `mbarrier.test_wait`: others run, then this warp.
    Spin,
    /// An `mbarrier.try_wait` on an open phase (the wait runs again when the warp resumes):
    /// the barrier's shared offset and state.
    Blocked(u64, mbarrier::State),
    /// A `barrier.cluster.wait` on an open phase (runs again when the warp resumes).
    ClusterWait,
}

struct Warp {
    /// Registers: `r·32 + lane`; the special registers (`crate::special::SPECIALS`) first.
    regs: Vec<u64>,
    uni: Vec<bool>,
    stack: Vec<Entry>,
    frames: Vec<Frame>,
    exited: u32,
    /// Lanes that exist (a partial last warp has fewer).
    live: u32,
    /// Linear index of lane 0's thread in the block.
    first_thread: u32,
    index: u32,
    /// Lanes that arrived on the cluster barrier's open phase (`barrier.cluster.arrive`).
    cluster_arrived: u32,
    /// The cluster barrier phase the warp arrived on and has not waited for yet.
    cluster_wait: Option<u64>,
    /// Barriers the warp reached with lanes missing, not yet judged (`exec/sync.rs`).
    sync_pending: Vec<sync::Pending>,
}

impl Warp {
    /// A placeholder with no storage (left where a warp was taken out of a pool).
    fn empty() -> Warp {
        Warp {
            regs: Vec::new(),
            uni: Vec::new(),
            stack: Vec::new(),
            frames: Vec::new(),
            exited: 0,
            live: 0,
            first_thread: 0,
            index: 0,
            cluster_arrived: 0,
            cluster_wait: None,
            sync_pending: Vec::new(),
        }
    }
}

/// Where the executing lanes of one memory instruction land: space and image offset.
struct Located {
    space: [Space; WARP_SIZE],
    image: [u64; WARP_SIZE],
}

impl Default for Located {
    fn default() -> Self {
        Located {
            space: [Space::Global; WARP_SIZE],
            image: [0; WARP_SIZE],
        }
    }
}

struct BlockCtx<'a> {
    prog: &'a Program,
    launch: &'a Launch,
    allocs: &'a [Alloc],
    block: [u32; 3],
    block_linear: u64,
    /// The block's place in the run order (its linear index, or its slot in a sample).
    slot: u64,
    threads: u32,
    shared: Vec<u8>,
    local: Vec<u8>,
    steps: u64,
    /// The step count at which the slow checks run next (budget, clock, stop flag).
    next_check: u64,
    /// When the block started, when [`Launch::max_block_time`] is set.
    started: Option<Instant>,
    /// Lowest slot of a block (cluster) that failed (`u64::MAX`: none); later ones stop.
    failed: &'a AtomicU64,
    /// The block's rank in its cluster (`%cluster_ctarank`; 0 without a cluster).
    rank: u32,
    /// The cluster's shared state while this block's warps run (see `exec/cluster.rs`).
    cluster: cluster::Cluster,
    /// The block's tensor memory, from its first `tcgen05` allocation (`exec/tcgen05.rs`).
    tmem: Option<Box<tcgen05::Tmem>>,
    /// Barrier instructions synccheck has flagged in this block (to count blocks once).
    divergent_bars: Vec<u32>,
    /// The previous block's warps, by index: their storage is reused (`new_warp`).
    spare_warps: Vec<Warp>,
    /// The worker's racecheck and initcheck state while this block runs (`exec/checks.rs`).
    checks: Option<Box<std::cell::RefCell<checks::Checks>>>,
    /// wgmma's operand rows by descriptor, kept from block to block (`exec/wgmma.rs`).
    core_memo: wgmma::CoreMemo,
}

impl Program {
    /// Where instruction `pc` is: its PTX line and column, and its `.loc` source position.
    pub(crate) fn at(&self, pc: u32) -> At {
        let i = &self.insts[pc as usize];
        At {
            ptx_line: i.ptx_line,
            ptx_col: i.ptx_col,
            source: i.loc.map(|(f, l, c)| {
                let file = self
                    .files
                    .iter()
                    .find(|(k, _)| *k == f)
                    .map(|(_, p)| p.as_str())
                    .unwrap_or("?");
                format!("{file}:{l}:{c}")
            }),
            loc: i.loc,
        }
    }

    /// The NUL-terminated string at a (generic or global) address of a module-scope
    /// `.global` variable (nvcc's `$str` constants), at most 4 KiB.
    fn c_string(&self, addr: u64) -> Option<String> {
        let g = self
            .globals
            .iter()
            .find(|g| addr >= g.base && addr - g.base < g.init.len() as u64)?;
        // The initializer may stop before the terminating zero (the rest of the array is 0).
        let bytes = &g.init[(addr - g.base) as usize..];
        let bytes = &bytes[..bytes.len().min(4096)];
        let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
        Some(String::from_utf8_lossy(&bytes[..end]).into_owned())
    }

    /// Runs the launch: every block in order, calling `sink(site, access, origin)` for each
    /// warp-level memory access (site indices into [`Program::sites`]).
    ///
    /// Errors: a lane reading or writing outside every allocation or misaligned (naming the
    /// thread, block, PTX line and source line), a block that runs past
    /// [`Launch::max_steps`], a launch whose arguments do not match the parameters.
    pub fn run(
        &self,
        launch: &Launch,
        sink: &mut dyn FnMut(u32, &WarpAccess, WarpOrigin),
    ) -> Result<()> {
        // Accesses of chunks run on other threads are buffered and delivered in order.
        self.schedule(
            launch,
            &|run, start, end| {
                let mut out = packed::Buffer::with_capacity(CHUNK_ACCESSES as usize + 64);
                let mut n = 0;
                run(start, end, &mut |s, a, o| {
                    n += 1;
                    out.push(s, a, o)
                })?;
                Ok((out, n))
            },
            &mut |b: packed::Buffer| {
                b.deliver(sink);
                Ok(())
            },
        )
    }

    /// Runs the launch with the accesses summed in parts: `part()` makes an empty summary,
    /// `feed` adds one access to it, and `merge` receives the parts in block order (each
    /// covering the blocks after the previous one's). Parts are made and fed on the threads
    /// that run blocks, so summing runs on every core; the result is what feeding one
    /// summary with every access in order gives, provided merging does the same.
    ///
    /// Errors: as [`Program::run`].
    pub fn run_parts<T: Send>(
        &self,
        launch: &Launch,
        part: &(dyn Fn() -> T + Sync),
        feed: &(dyn Fn(&mut T, u32, &WarpAccess, WarpOrigin) + Sync),
        merge: &mut dyn FnMut(T),
    ) -> Result<()> {
        self.schedule(
            launch,
            &|run, start, end| {
                let mut t = part();
                let mut n = 0;
                run(start, end, &mut |s, a, o| {
                    n += 1;
                    feed(&mut t, s, a, o)
                })?;
                Ok((t, n))
            },
            &mut |t| {
                merge(t);
                Ok(())
            },
        )
    }

    /// Runs every block: sequentially when blocks may see each other's stores (a memory
    /// image is kept), else in chunks on worker threads. `produce(run, start, end)` runs
    /// blocks `start..end` through `run` into a product and counts the accesses;
    /// `consume` receives the products in block order.
    fn schedule<T: Send>(
        &self,
        launch: &Launch,
        produce: &(dyn Fn(&RunBlocks, u64, u64) -> Result<(T, usize)> + Sync),
        consume: &mut dyn FnMut(T) -> Result<()>,
    ) -> Result<()> {
        if launch.args.len() != self.params.len() {
            return Err(Error::Launch(format!(
                "{} takes {} parameters; the launch gives {}",
                self.name,
                self.params.len(),
                launch.args.len()
            )));
        }
        let threads = launch.block.iter().map(|&x| x as u64).product::<u64>();
        if threads == 0 || threads > 1024 {
            return Err(Error::Launch(format!(
                "a block of {threads} threads: CUDA allows 1 to 1024"
            )));
        }
        let threads = threads as u32;
        let grid_blocks = launch.grid.iter().map(|&x| x as u64).product::<u64>();
        if grid_blocks == 0 {
            return Err(Error::Launch(format!(
                "a grid of {}×{}×{} blocks: every dimension must be at least 1",
                launch.grid[0], launch.grid[1], launch.grid[2]
            )));
        }
        let cluster_blocks = self.check_cluster(launch)?;
        // The units run are clusters (blocks when there is none); with a sample, its slots.
        let grid_units = grid_blocks / cluster_blocks as u64;
        let blocks = match &launch.sample {
            Some(s) => (s.len() as u64).min(grid_units),
            None => grid_units,
        };
        if blocks == 0 {
            return Err(Error::Launch("a sample of no blocks".into()));
        }
        // A running block's shared and local images, checked against the cap before any
        // is made; the global image gets what is left.
        let shared_bytes = self
            .dynamic_shared_base()
            .saturating_add(launch.dynamic_shared_bytes);
        let local_bytes = self.local_bytes.saturating_mul(threads as u64);
        // Each warp's registers: 8 bytes per PTX register per lane (`Warp::regs`).
        let register_bytes = (self.nregs as u64)
            .saturating_mul(8 * WARP_SIZE as u64)
            .saturating_mul((threads as u64).div_ceil(WARP_SIZE as u64));
        // Every block of a cluster holds its images while the cluster runs.
        let per_block = shared_bytes
            .saturating_add(local_bytes)
            .saturating_mul(cluster_blocks as u64);
        // Registers are held beside the images; they count against the cap too (a PTX with a
        // million registers per thread), but leave the global image its share.
        let held = per_block.saturating_add(register_bytes.saturating_mul(cluster_blocks as u64));
        if held > launch.max_memory {
            return Err(Error::Memory(format!(
                "a block of {} needs {shared_bytes} bytes of shared memory, {local_bytes} bytes of local memory ({} bytes per thread × {threads} threads) and {register_bytes} bytes for its {} PTX registers per thread{}: more than the memory cap of {} bytes (--max-memory); give a larger --max-memory, or launch fewer threads per block",
                self.name, self.local_bytes, self.nregs,
                if cluster_blocks > 1 { format!(", × {cluster_blocks} blocks of a cluster held at once") } else { String::new() },
                launch.max_memory
            )));
        }
        let mut global = Global::with_limit(launch.max_memory - per_block);
        let mut allocs: Vec<Alloc> = Vec::new();
        for (a, init) in &launch.allocs {
            if self.needs_memory {
                global.back(a.base, init);
            }
            allocs.push(a.clone());
        }
        for g in &self.globals {
            if self.needs_memory {
                global.fill(g.base, &g.init).map_err(|f| {
                    Error::Memory(format!(
                        "the initial contents of .global variable {} ({} bytes) do not fit in the memory cap of {} bytes (--max-memory); give a larger --max-memory",
                        g.name, g.bytes, f.limit
                    ))
                })?;
            }
            allocs.push(Alloc {
                name: g.name.clone(),
                base: g.base,
                size: Some(g.bytes),
            });
        }
        if let Some(p) = &launch.progress {
            p.start(blocks * cluster_blocks as u64);
        }
        // The lowest failed block: blocks after it stop early (their results are never
        // delivered, the failure is).
        let failed = AtomicU64::new(u64::MAX);
        let failed = &failed;
        let workers = match launch.threads {
            0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
            n => n,
        } as u64;
        // Each worker holds one block's images.
        let workers = workers.min((launch.max_memory / per_block.max(1)).max(1));
        // Blocks see each other only through global memory; with a memory image they run
        // in order, here, on that one image.
        if self.needs_memory || workers < 2 || blocks < 2 * workers {
            let global = std::sync::Mutex::new(global);
            let run: &RunBlocks = &|start, end, sink| {
                let mut g = global.lock().unwrap_or_else(|e| e.into_inner());
                self.run_blocks(launch, &allocs, threads, start..end, &mut g, failed, sink)
            };
            let (t, _) = produce(run, 0, blocks)?;
            return consume(t);
        }
        // Without one they are independent: worker threads run chunks of blocks while this
        // thread consumes finished chunks in block order.
        let run: &RunBlocks = &|start, end, sink| {
            self.run_blocks(
                launch,
                &allocs,
                threads,
                start..end,
                &mut Global::default(),
                failed,
                sink,
            )
        };
        // The first block, run here, sizes the chunks (~CHUNK_ACCESSES accesses each).
        let (t, first_block) = produce(run, 0, 1)?;
        consume(t)?;
        let chunk = (CHUNK_ACCESSES / (first_block as u64).max(1)).clamp(1, 256);
        let chunks = (blocks - 1).div_ceil(chunk) as usize;
        let chunk_range = |c: usize| {
            let start = 1 + c as u64 * chunk;
            (start, (start + chunk).min(blocks))
        };
        // Chunks may run at most WINDOW ahead of the one being consumed: bounded memory.
        let window = 2 * workers as usize + 2;
        struct State<T> {
            next: usize,
            delivered: usize,
            stop: bool,
            done: std::collections::BTreeMap<usize, Result<(T, usize)>>,
        }
        let state = std::sync::Mutex::new(State {
            next: 0,
            delivered: 0,
            stop: false,
            done: Default::default(),
        });
        let changed = std::sync::Condvar::new();
        let lock = || state.lock().unwrap_or_else(|e| e.into_inner());
        std::thread::scope(|sc| {
            for _ in 0..workers {
                sc.spawn(|| loop {
                    let c = {
                        let mut st = lock();
                        while !st.stop && st.next < chunks && st.next >= st.delivered + window {
                            st = changed.wait(st).unwrap_or_else(|e| e.into_inner());
                        }
                        if st.stop || st.next >= chunks {
                            return;
                        }
                        st.next += 1;
                        st.next - 1
                    };
                    let (start, end) = chunk_range(c);
                    let r = produce(run, start, end);
                    lock().done.insert(c, r);
                    changed.notify_all();
                });
            }
            let mut result = Ok(());
            for c in 0..chunks {
                let part = {
                    let mut st = lock();
                    loop {
                        if let Some(p) = st.done.remove(&c) {
                            st.delivered = c + 1;
                            break p;
                        }
                        st = changed.wait(st).unwrap_or_else(|e| e.into_inner());
                    }
                };
                changed.notify_all();
                if let Err(e) = part.and_then(|(t, _)| consume(t)) {
                    result = Err(e);
                    break;
                }
            }
            lock().stop = true;
            changed.notify_all();
            result
        })
    }

    /// Checks the launch's cluster shape and returns the blocks of one cluster.
    ///
    /// Errors: a zero dimension, more than [`MAX_CLUSTER_BLOCKS`] blocks, a grid dimension
    /// that the cluster's does not divide (CUDA requires whole clusters: PG "Thread Block
    /// Clusters"), and a kernel that declares another shape (`.reqnctapercluster`).
    fn check_cluster(&self, launch: &Launch) -> Result<u32> {
        let c = launch.cluster;
        let n = c.iter().map(|&x| x as u64).product::<u64>();
        if n == 0 || n > MAX_CLUSTER_BLOCKS as u64 {
            return Err(Error::Launch(format!(
                "a cluster of {}×{}×{} blocks: a cluster holds 1 to {MAX_CLUSTER_BLOCKS} blocks (8 portable, 16 with the non-portable opt-in; CUDA Programming Guide, \"Thread Block Clusters\")",
                c[0], c[1], c[2]
            )));
        }
        for (axis, name) in ["x", "y", "z"].iter().enumerate() {
            if launch.grid[axis] % c[axis] != 0 {
                return Err(Error::Launch(format!(
                    "the grid ({}×{}×{} blocks) is not a whole number of {}×{}×{} clusters: gridDim.{name} = {} is not a multiple of the cluster's {name} dimension {}; give a grid that the cluster divides (CUDA launches whole clusters only)",
                    launch.grid[0], launch.grid[1], launch.grid[2], c[0], c[1], c[2],
                    launch.grid[axis], c[axis]
                )));
            }
        }
        if let Some(k) = self.cluster_dims {
            if k.map(|x| x as u32) != c {
                return Err(Error::Launch(format!(
                    "{} declares clusters of {}×{}×{} blocks (.reqnctapercluster, __cluster_dims__); the launch asks for {}×{}×{}: launch with the kernel's shape (or leave --cluster out)",
                    self.name, k[0], k[1], k[2], c[0], c[1], c[2]
                )));
            }
        }
        Ok(n as u32)
    }

    /// Runs the clusters (blocks, without a cluster) of run-order slots `range` in order
    /// (x fastest; a cluster's blocks by rank). A failing cluster lowers `failed` to its
    /// slot; a cluster after the lowest failed one stops with [`Error::Stopped`].
    #[allow(clippy::too_many_arguments)]
    fn run_blocks(
        &self,
        launch: &Launch,
        allocs: &[Alloc],
        threads: u32,
        range: std::ops::Range<u64>,
        global: &mut Global,
        failed: &AtomicU64,
        sink: &mut dyn FnMut(u32, &WarpAccess, WarpOrigin),
    ) -> Result<()> {
        let shared_bytes = self
            .dynamic_shared_base()
            .saturating_add(launch.dynamic_shared_bytes);
        let local_bytes = self.local_bytes.saturating_mul(threads as u64);
        let cap = launch.max_memory;
        let c = launch.cluster;
        let n = c.iter().product::<u32>().max(1);
        // Each rank's images, zeroed again for each cluster.
        let mut shared: Vec<Vec<u8>> = Vec::new();
        let mut local: Vec<Vec<u8>> = Vec::new();
        let mut spare: Vec<Vec<Warp>> = (0..n).map(|_| Vec::new()).collect();
        let mut memos: Vec<wgmma::CoreMemo> = (0..n).map(|_| Default::default()).collect();
        for _ in 0..n {
            shared.push(
                memory::zeroed(shared_bytes, cap, &|| {
                    format!("the shared memory of a block of {}", self.name)
                })
                .map_err(Error::Memory)?,
            );
            local.push(
                memory::zeroed(local_bytes, cap, &|| {
                    format!(
                        "the local memory of a block of {} ({} bytes per thread × {threads} threads)",
                        self.name, self.local_bytes
                    )
                })
                .map_err(Error::Memory)?,
            );
        }
        let mut checks = checks::Checks::new(self, launch, shared_bytes);
        let [gx, gy, _] = launch.grid.map(|x| x as u64);
        let [ux, uy] = [gx / c[0] as u64, gy / c[1] as u64];
        for slot in range {
            if slot > failed.load(Ordering::Relaxed) {
                return Err(Error::Stopped);
            }
            let unit = match &launch.sample {
                Some(s) => s[slot as usize],
                None => slot,
            };
            let origin = [unit % ux, (unit / ux) % uy, unit / (ux * uy)];
            let mut ctxs: Vec<BlockCtx> = Vec::with_capacity(n as usize);
            for rank in 0..n {
                let local_id = [rank % c[0], (rank / c[0]) % c[1], rank / (c[0] * c[1])];
                let block: [u32; 3] =
                    std::array::from_fn(|i| (origin[i] * c[i] as u64) as u32 + local_id[i]);
                let linear = block[0] as u64 + gx * (block[1] as u64 + gy * block[2] as u64);
                let mut sh = std::mem::take(&mut shared[rank as usize]);
                let mut lo = std::mem::take(&mut local[rank as usize]);
                sh.fill(0);
                lo.fill(0);
                ctxs.push(BlockCtx {
                    prog: self,
                    launch,
                    allocs,
                    block,
                    block_linear: linear,
                    slot,
                    threads,
                    shared: sh,
                    local: lo,
                    steps: 0,
                    next_check: CHECK_EVERY.min(launch.max_steps.saturating_add(1)),
                    started: launch.max_block_time.map(|_| Instant::now()),
                    failed,
                    rank,
                    cluster: Default::default(),
                    tmem: None,
                    divergent_bars: Vec::new(),
                    spare_warps: std::mem::take(&mut spare[rank as usize]),
                    checks: None,
                    core_memo: std::mem::take(&mut memos[rank as usize]),
                });
            }
            if let (Some(mut ch), Some(ctx)) = (checks.take(), ctxs.first_mut()) {
                let warps = threads.div_ceil(WARP_SIZE as u32) as usize;
                ch.get_mut().begin_block(slot, ctx.block, warps);
                ctx.checks = Some(ch);
            }
            let r = cluster::run(&mut ctxs, global, sink);
            checks = ctxs.first_mut().and_then(|ctx| ctx.checks.take());
            if let Err(e) = r {
                if !matches!(e, Error::Stopped) {
                    failed.fetch_min(slot, Ordering::Relaxed);
                }
                return Err(e);
            }
            for (rank, ctx) in ctxs.into_iter().enumerate() {
                if let Some(p) = &launch.progress {
                    p.block_done(ctx.steps);
                }
                shared[rank] = ctx.shared;
                local[rank] = ctx.local;
                spare[rank] = ctx.spare_warps;
                memos[rank] = ctx.core_memo;
            }
        }
        if let Some(ch) = checks {
            checks::Checks::flush(ch, self);
        }
        Ok(())
    }
}

/// Runs blocks `start..end` into a sink.
type RunBlocks<'a> =
    dyn Fn(u64, u64, &mut dyn FnMut(u32, &WarpAccess, WarpOrigin)) -> Result<()> + Sync + 'a;

/// Warp accesses one worker's chunk of blocks holds, about.
const CHUNK_ACCESSES: u64 = 16_384;

impl<'a> BlockCtx<'a> {
    /// Warp `w` of the block at its start: the special registers (`%tid`, `%ctaid`, …) and
    /// the parameters set, every other register 0, one stack entry at pc 0. Reuses the
    /// storage of the previous block's warp `w` (same launch, so the same lanes, `%tid` and
    /// launch-wide registers): only what differs between blocks is written again.
    fn new_warp(&mut self, w: u32) -> Warp {
        let n = self.prog.nregs as usize;
        let specials = crate::special::SPECIALS.len();
        let reused = !self.prog.writes_specials
            && (w as usize) < self.spare_warps.len()
            && self.spare_warps[w as usize].regs.len() == n * WARP_SIZE;
        if reused {
            let mut warp = std::mem::replace(&mut self.spare_warps[w as usize], Warp::empty());
            // Registers of the program (a PTX register is never a special one): back to 0,
            // but those every thread writes before reading (`dataflow::zeroed_on_reuse`).
            for &(first, end) in &self.prog.zeroed_on_reuse {
                warp.regs[first as usize * WARP_SIZE..end as usize * WARP_SIZE].fill(0);
            }
            warp.uni[specials..].fill(true);
            warp.stack.clear();
            warp.frames.clear();
            warp.exited = 0;
            warp.cluster_arrived = 0;
            warp.cluster_wait = None;
            warp.sync_pending.clear();
            self.set_block_registers(&mut warp, true);
            warp.stack.push(Entry {
                pc: 0,
                rpc: u32::MAX,
                mask: warp.live,
            });
            return warp;
        }
        self.fresh_warp(w)
    }

    /// [`BlockCtx::new_warp`] with new storage.
    fn fresh_warp(&self, w: u32) -> Warp {
        let n = self.prog.nregs as usize;
        let mut warp = Warp {
            regs: vec![0u64; n * WARP_SIZE],
            uni: vec![true; n],
            stack: Vec::with_capacity(16),
            frames: Vec::new(),
            exited: 0,
            live: 0,
            first_thread: w * WARP_SIZE as u32,
            index: w,
            cluster_arrived: 0,
            cluster_wait: None,
            sync_pending: Vec::new(),
        };
        let [bx, by, _] = self.launch.block;
        let live_lanes = (self.threads - warp.first_thread).min(WARP_SIZE as u32);
        warp.live = if live_lanes == 32 {
            u32::MAX
        } else {
            (1u32 << live_lanes) - 1
        };
        for lane in 0..WARP_SIZE {
            let t = warp.first_thread + lane as u32;
            let set =
                |warp: &mut Warp, r: Reg, v: u64| warp.regs[r as usize * WARP_SIZE + lane] = v;
            set(&mut warp, idx::TID, (t % bx) as u64);
            set(&mut warp, idx::TID + 1, ((t / bx) % by) as u64);
            set(&mut warp, idx::TID + 2, (t / (bx * by)) as u64);
            set(&mut warp, idx::LANEID, lane as u64);
            set(&mut warp, idx::LANEMASK_EQ, 1u64 << lane);
            set(
                &mut warp,
                idx::LANEMASK_EQ + 1,
                (((1u64 << lane) << 1) - 1) & 0xFFFF_FFFF,
            );
            set(&mut warp, idx::LANEMASK_EQ + 2, (1u64 << lane) - 1);
            set(
                &mut warp,
                idx::LANEMASK_EQ + 3,
                (!((1u64 << lane) - 1)) & 0xFFFF_FFFF,
            );
            set(
                &mut warp,
                idx::LANEMASK_EQ + 4,
                (!(((1u64 << lane) << 1) - 1)) & 0xFFFF_FFFF,
            );
        }
        for r in [idx::TID, idx::TID + 1, idx::TID + 2, idx::LANEID] {
            warp.uni[r as usize] = false;
        }
        // A `%tid` component its live lanes share (`%tid.y` of a 32×8 block's warp) is
        // warp-uniform: arithmetic on it runs once for the warp.
        for r in [idx::TID, idx::TID + 1, idx::TID + 2] {
            let base = r as usize * WARP_SIZE;
            let v = warp.regs[base];
            if lanes(warp.live).all(|l| warp.regs[base + l] == v) {
                splat(&mut warp, r, v);
            }
        }
        for k in 0..5 {
            warp.uni[(idx::LANEMASK_EQ + k) as usize] = false;
        }
        let uniform: [(Reg, u64); 9] = [
            (idx::NTID, self.launch.block[0] as u64),
            (idx::NTID + 1, self.launch.block[1] as u64),
            (idx::NTID + 2, self.launch.block[2] as u64),
            (idx::NCTAID, self.launch.grid[0] as u64),
            (idx::NCTAID + 1, self.launch.grid[1] as u64),
            (idx::NCTAID + 2, self.launch.grid[2] as u64),
            (idx::WARPID, w as u64),
            (idx::NWARPID, 64),
            (idx::NSMID, 132),
        ];
        for (r, v) in uniform {
            splat(&mut warp, r, v);
        }
        // Cluster registers [PTX ISA §10.14–10.20]; without a cluster every block is an
        // implicit cluster of one.
        let c = self.launch.cluster.map(|x| x.max(1));
        for i in 0..3u32 {
            let k = i as usize;
            splat(&mut warp, idx::CLUSTER_NCTAID + i, c[k] as u64);
        }
        let ncluster = std::array::from_fn::<u64, 3, _>(|k| (self.launch.grid[k] / c[k]) as u64);
        splat(&mut warp, idx::NCLUSTERID_X, ncluster[0]);
        splat(&mut warp, idx::NCLUSTERID_Y, ncluster[1]);
        splat(&mut warp, idx::NCLUSTERID_Y + 1, ncluster[2]);
        splat(
            &mut warp,
            idx::CLUSTER_NCTARANK,
            (c[0] * c[1] * c[2]) as u64,
        );
        splat(
            &mut warp,
            idx::IS_EXPLICIT_CLUSTER,
            self.launch.explicit_cluster as u64,
        );
        self.set_block_registers(&mut warp, false);
        warp.stack.push(Entry {
            pc: 0,
            rpc: u32::MAX,
            mask: warp.live,
        });
        warp
    }

    /// The registers that differ from block to block (`%ctaid`, `%smid`, the cluster
    /// position, the shared memory size) and the parameters' registers; with `read_only`,
    /// only the special registers the program reads (a reused warp's others are never
    /// looked at).
    fn set_block_registers(&self, warp: &mut Warp, read_only: bool) {
        let read = |r: Reg| {
            !read_only
                || self
                    .prog
                    .read_specials
                    .get(r as usize)
                    .copied()
                    .unwrap_or(true)
        };
        let splat = |warp: &mut Warp, r: Reg, v: u64| {
            if read(r) {
                splat(warp, r, v)
            }
        };
        let uniform: [(Reg, u64); 6] = [
            (idx::CTAID, self.block[0] as u64),
            (idx::CTAID + 1, self.block[1] as u64),
            (idx::CTAID + 2, self.block[2] as u64),
            (idx::DYN_SMEM, self.launch.dynamic_shared_bytes),
            (idx::TOTAL_SMEM, self.shared.len() as u64),
            (idx::SMID, self.block_linear % 132),
        ];
        for (r, v) in uniform {
            splat(warp, r, v);
        }
        let c = self.launch.cluster.map(|x| x.max(1));
        for i in 0..3u32 {
            let k = i as usize;
            splat(warp, idx::CLUSTERID + i, (self.block[k] / c[k]) as u64);
            splat(warp, idx::CLUSTER_CTAID + i, (self.block[k] % c[k]) as u64);
        }
        splat(warp, idx::CLUSTER_CTARANK, self.rank as u64);
        for (p, bytes) in self.prog.params.iter().zip(&self.launch.args) {
            for &(off, n, r) in &p.regs {
                splat(warp, r, memory::read_flat(bytes, off, n as u32));
            }
        }
    }

    /// The slow checks, every [`CHECK_EVERY`] steps and at the budget: the budget, the
    /// clock, and whether an earlier block failed.
    #[cold]
    fn check_limits(&mut self, pc: u32) -> Result<()> {
        let max = self.launch.max_steps;
        let runaway = |ctx: &Self, limit| Error::Runaway {
            at: ctx.at(pc),
            steps: ctx.steps - 1,
            block: ctx.block,
            limit,
        };
        if self.steps > max {
            return Err(runaway(self, RunawayLimit::Steps));
        }
        if self.slot > self.failed.load(Ordering::Relaxed) {
            return Err(Error::Stopped);
        }
        if let (Some(limit), Some(started)) = (self.launch.max_block_time, self.started) {
            let t = started.elapsed();
            if t >= limit && self.steps > MIN_STEPS_FOR_TIME {
                return Err(runaway(self, RunawayLimit::Time(t)));
            }
        }
        self.next_check = self
            .steps
            .saturating_add(CHECK_EVERY)
            .min(max.saturating_add(1));
        Ok(())
    }

    fn at(&self, pc: u32) -> At {
        self.prog.at(pc)
    }

    fn thread(&self, warp: &Warp, lane: usize) -> [u32; 3] {
        let t = warp.first_thread + lane as u32;
        let [bx, by, _] = self.launch.block;
        [t % bx, (t / bx) % by, t / (bx * by)]
    }

    /// Pops the top entry; completes a call whose frame empties.
    fn pop(&self, warp: &mut Warp) {
        warp.stack.pop();
        while let Some(f) = warp.frames.last() {
            if warp.stack.len() > f.base {
                break;
            }
            let f = warp.frames.pop().unwrap_or(Frame {
                base: 0,
                call: 0,
                returned: 0,
            });
            if let Instr::Call { rets, .. } = &self.prog.insts[f.call as usize].instr {
                for &(d, s) in rets {
                    for lane in lanes(f.returned) {
                        let v = warp.regs[s as usize * WARP_SIZE + lane];
                        warp.regs[d as usize * WARP_SIZE + lane] = v;
                    }
                    warp.uni[d as usize] = false;
                }
            }
        }
    }

    fn run_warp(
        &mut self,
        warp: &mut Warp,
        global: &mut Global,
        sink: &mut dyn FnMut(u32, &WarpAccess, WarpOrigin),
    ) -> Result<Yield> {
        let insts = &self.prog.insts;
        let n = insts.len() as u32;
        loop {
            let Some(top) = warp.stack.last().copied() else {
                return Ok(Yield::Done);
            };
            let mask = top.mask & !warp.exited;
            if top.pc == top.rpc || top.pc >= n || mask == 0 {
                self.pop(warp);
                continue;
            }
            self.steps += 1;
            if self.steps >= self.next_check {
                self.check_limits(top.pc)?;
            }
            let pc = top.pc;
            let inst = &insts[pc as usize];
            let exec = match inst.guard {
                None => mask,
                Some((p, neg)) => {
                    let base = p as usize * WARP_SIZE;
                    if warp.uni[p as usize] {
                        // A warp-uniform predicate (a loop's test): all lanes or none.
                        if (warp.regs[base] != 0) != neg {
                            mask
                        } else {
                            0
                        }
                    } else {
                        // Branch-free over the 32 lanes, then the active ones kept.
                        let mut m = 0u32;
                        for (lane, &v) in warp.regs[base..base + WARP_SIZE].iter().enumerate() {
                            m |= (((v != 0) != neg) as u32) << lane;
                        }
                        m & mask
                    }
                }
            };
            if !warp.sync_pending.is_empty() && exec != 0 {
                self.sync_step(warp, &inst.instr, exec);
            }
            let full = exec == (warp.live & !warp.exited);
            let next = pc + 1;
            let set_pc = |warp: &mut Warp, pc: u32| {
                if let Some(t) = warp.stack.last_mut() {
                    t.pc = pc;
                }
            };
            match &inst.instr {
                Instr::Bra { target } => {
                    if inst.guard.is_none() || exec == mask {
                        set_pc(warp, *target);
                    } else if exec == 0 {
                        set_pc(warp, next);
                    } else {
                        let rpc = self.prog.reconv[pc as usize];
                        set_pc(warp, rpc);
                        warp.stack.push(Entry {
                            pc: next,
                            rpc,
                            mask: mask & !exec,
                        });
                        warp.stack.push(Entry {
                            pc: *target,
                            rpc,
                            mask: exec,
                        });
                    }
                    continue;
                }
                Instr::Exit => {
                    warp.exited |= exec;
                    set_pc(warp, next);
                    continue;
                }
                Instr::Trap if exec != 0 => {
                    return Err(Error::Fault {
                        at: self.at(pc),
                        msg: "trap: the kernel aborts here (an assert that failed, or __trap())"
                            .into(),
                        thread: self.thread(warp, exec.trailing_zeros() as usize),
                        block: self.block,
                    });
                }
                Instr::AssertFail {
                    message,
                    file,
                    line,
                } if exec != 0 => {
                    let lane = exec.trailing_zeros() as usize;
                    let text = |s: Src| self.prog.c_string(get(warp, s, lane));
                    let (message, file) = (text(*message), text(*file));
                    let line = get(warp, *line, lane) as u32;
                    return Err(Error::Fault {
                        at: self.at(pc),
                        msg: format!(
                            "assertion `{}` failed at {}:{line}: the kernel aborts here",
                            message.as_deref().unwrap_or("?"),
                            file.as_deref().unwrap_or("?"),
                        ),
                        thread: self.thread(warp, lane),
                        block: self.block,
                    });
                }
                Instr::Ret => {
                    let base = warp.frames.last().map(|f| f.base).unwrap_or(0);
                    if let Some(f) = warp.frames.last_mut() {
                        f.returned |= exec;
                    } else {
                        warp.exited |= exec;
                    }
                    for e in warp.stack.iter_mut().skip(base) {
                        e.mask &= !exec;
                    }
                    set_pc(warp, next);
                    continue;
                }
                Instr::Bar => {
                    set_pc(warp, next);
                    if exec != 0 {
                        self.check_barrier(warp, pc, exec);
                        return Ok(Yield::Barrier);
                    }
                    continue;
                }
                Instr::Sleep => {
                    set_pc(warp, next);
                    if exec != 0 {
                        return Ok(Yield::Spin);
                    }
                    continue;
                }
                Instr::ClusterArrive => {
                    set_pc(warp, next);
                    if exec != 0 {
                        self.cluster_arrive(warp, exec);
                    }
                    continue;
                }
                Instr::ClusterWait => {
                    if exec == 0 || self.cluster_wait_done(warp) {
                        set_pc(warp, next);
                        continue;
                    }
                    // The same wait runs again when the warp resumes.
                    return Ok(Yield::ClusterWait);
                }
                Instr::MbarrierWait {
                    d,
                    space,
                    addr,
                    token,
                    blocking,
                } => {
                    if exec == 0 {
                        set_pc(warp, next);
                        continue;
                    }
                    let addr = (addr.base, addr.offset);
                    match self.mbarrier_wait(warp, pc, exec, *space, *d, addr, *token)? {
                        mbarrier::Wait::Done => set_pc(warp, next),
                        // The same wait runs again when the warp resumes.
                        mbarrier::Wait::Open(off, s) if *blocking => {
                            return Ok(Yield::Blocked(off, s))
                        }
                        mbarrier::Wait::Open(..) => {
                            set_pc(warp, next);
                            return Ok(Yield::Spin);
                        }
                    }
                    continue;
                }
                Instr::Call { target, args, .. } => {
                    set_pc(warp, next);
                    if exec == 0 {
                        continue;
                    }
                    for &(d, s) in args {
                        write(warp, d, s, exec, full, |v| v);
                    }
                    warp.frames.push(Frame {
                        base: warp.stack.len(),
                        call: pc,
                        returned: 0,
                    });
                    warp.stack.push(Entry {
                        pc: *target,
                        rpc: u32::MAX,
                        mask: exec,
                    });
                    continue;
                }
                _ => {}
            }
            set_pc(warp, next);
            if exec == 0 {
                continue;
            }
            self.step(warp, pc, exec, full, global, sink)?;
        }
    }
}
/// The lanes set in a mask, lowest first.
#[inline]
fn lanes(mut m: u32) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        if m == 0 {
            None
        } else {
            let l = m.trailing_zeros() as usize;
            m &= m - 1;
            Some(l)
        }
    })
}

#[inline]
fn get(warp: &Warp, s: Src, lane: usize) -> u64 {
    match s {
        Src::Reg(r) => warp.regs[r as usize * WARP_SIZE + lane],
        Src::Imm(x) => x,
    }
}

/// The 32 lanes of an operand (an immediate's value in each).
#[inline(always)]
fn all_lanes(warp: &Warp, s: Src) -> [u64; WARP_SIZE] {
    match s {
        Src::Reg(r) => {
            let base = r as usize * WARP_SIZE;
            (&warp.regs[base..base + WARP_SIZE])
                .try_into()
                .expect("a register holds WARP_SIZE lanes")
        }
        Src::Imm(x) => [x; WARP_SIZE],
    }
}

#[inline]
fn is_uni(warp: &Warp, s: Src) -> bool {
    match s {
        Src::Reg(r) => warp.uni[r as usize],
        Src::Imm(_) => true,
    }
}

#[inline]
fn splat(warp: &mut Warp, d: Reg, v: u64) {
    let base = d as usize * WARP_SIZE;
    warp.regs[base..base + WARP_SIZE].fill(v);
    warp.uni[d as usize] = true;
}

/// `d = f(a)` for the executing lanes, once when `a` is warp-uniform and every live lane
/// executes.
#[inline]
fn write(warp: &mut Warp, d: Reg, a: Src, exec: u32, full: bool, f: impl Fn(u64) -> u64) {
    if full && is_uni(warp, a) {
        let v = f(get(warp, a, 0));
        splat(warp, d, v);
    } else if exec == u32::MAX {
        // A whole warp: a loop the compiler vectorizes.
        let x = all_lanes(warp, a);
        let base = d as usize * WARP_SIZE;
        for (o, v) in warp.regs[base..base + WARP_SIZE].iter_mut().zip(x) {
            *o = f(v);
        }
        warp.uni[d as usize] = false;
    } else {
        let base = d as usize * WARP_SIZE;
        for lane in lanes(exec) {
            warp.regs[base + lane] = f(get(warp, a, lane));
        }
        warp.uni[d as usize] = false;
    }
}

#[inline]
fn write_value(warp: &mut Warp, d: Reg, v: u64, exec: u32, full: bool) {
    write(warp, d, Src::Imm(v), exec, full, |x| x)
}
