//! The traffic model: warp accesses in, bytes at each level below the request and a
//! predicted time out.
//!
//! # What it simulates
//!
//! Fed every global/local warp access of a launch in schedule order ([`TrafficModel::add`]),
//! it keeps:
//!
//! - **Blocks on SMs**: block *b* runs on SM `b % SMs` (round-robin dispatch). Up to the
//!   occupancy limit of resident warps run at once on each SM ([`resident_warps_per_sm`]).
//! - **L1, one per SM** (CC 2.0 on), only for the accesses the capability caches there
//!   ([`Arch::global_path`], [`Arch::l1_caches_global_loads_by_default`], `__ldg`): LRU, 4-way,
//!   128-byte lines of four 32-byte sectors, capacity [`Gpu::l1_bytes_per_sm`]. On 2.x/3.x
//!   an L1 miss fetches the whole 128-byte line from L2 [PG5 F.4.2]; from 5.x on only the
//!   missing sectors [reference "CC 5.0 … 12.0"]. Stores do not allocate in L1; they
//!   invalidate the sectors they write in their SM's L1 (write-through, no coherence between
//!   SMs, as on the hardware).
//! - **L2, shared**: LRU, 16-way, capacity [`Gpu::l2_bytes`], 128-byte lines; each sector
//!   holds a valid bit (its data came from DRAM) and a byte mask of what stores wrote.
//!   - A load of a sector that is neither valid nor fully written is a miss: DRAM delivers the
//!     aligned piece of [`Profile::dram_read_granularity_bytes`] holding it (64 bytes on H100:
//!     a 32-byte miss fetches its 64-byte pair, so the neighbour sector then hits) \[H100\].
//!   - A store writes into L2 without reading DRAM (write-allocate, byte masks).
//!   - When a line leaves L2 (evicted, or at [`TrafficModel::finish`], which writes back
//!     everything still dirty so that a small launch counts its writes too), each dirty
//!     sector is written (32 bytes); a dirty sector whose bytes were not all written and whose
//!     data never came from DRAM is first read: [`Profile::partial_write_read_bytes`]
//!     (read-modify-write; measured on H100: a stride-2 float store reads 27 MB from DRAM for
//!     16 MB written).
//!   - Neighbour warps that touch a line shortly after one another hit in L2 (and in L1 when
//!     they run on the same SM): this is what makes a misaligned unit-stride access nearly
//!     free from 2.0 on — its fifth sector is the neighbour warp's first [H100: 5 sectors per
//!     request, no extra DRAM bytes].
//! - **1.x** has no cache for global memory [PG5 F.3]: every transaction of the coalescing
//!   rules ([`warpscope_model::cost()`]) goes to DRAM, loads as reads and stores as writes.
//! - **Texture cache**: from 5.x on it is the L1 above. On 1.x–3.x it is a cache of its own
//!   ([`Gpu::texture_cache`]: one per TPC on 1.x, where a miss reads its 32-byte sector from
//!   DRAM; one per SM on 2.x/3.x, missing to L2) for texture fetches and surface loads, and
//!   on 3.5/3.7 for `__ldg` loads, which read through it [PG "Compute Capability 3.x"].
//!
//! The L2 sees accesses in the order given (block order, which is dispatch order); the
//! interleaving of concurrently running blocks is not modelled, nor are L2 partitions (H100
//! splits its L2 in two), the hashing of addresses to DRAM channels, or any cycle timing.
//!
//! # Time (a roofline-style bound)
//!
//! The predicted time is the largest of four lower bounds, each a level's bytes over its
//! achievable rate (the [`Profile`]):
//!
//! - DRAM: DRAM time-bytes / `copy_gbps`, where each L2 line residency costs at least
//!   [`Profile::dram_min_bytes_per_line`] (0 by default: time-bytes = bytes read + written);
//! - L2: sector bytes L2 serves / `l2_gbps` (2.0 on);
//! - L1: bytes of the transactions the L1 serves / `l1_gbps` (2.0 on);
//! - latency: Little's law. Each SM runs its global loads in rounds of at most its resident
//!   warps, one dependent load per warp per round, each round one `latency_ns`: time = the
//!   busiest SM's warp-loads / min(resident warps, warps it runs) × latency. This is what
//!   keeps a one-float-per-thread copy below the streaming bandwidth (2393 vs 2854 GB/s on
//!   H100). Loads are assumed dependent, stores fire-and-forget; a texture fetch is one
//!   load however many requests it takes.
//!
//! Overlap between the levels is assumed perfect (max, not sum). On 1.x the DRAM bound is
//! transaction bytes / `copy_gbps`, which gives Harris's 1/8 on CC 1.0 \[HB\].

use crate::cache::{LineCache, LINE_BYTES};
use crate::gpus::Gpu;
use crate::profile::{resident_warps_per_sm, Profile};
use schemars::JsonSchema;
use serde::Serialize;
use warpscope_model::arch::GlobalPath;
use warpscope_model::{
    is_tma_fill, Arch, ComputeCapability, Config, L1Mode, Op, Space, WarpAccess, WARP_SIZE,
};

const SECTOR: u64 = 32;
const FULL: u32 = u32::MAX;
const L1_WAYS: usize = 4;
/// Ways of a separate texture cache (1.x–3.x): assumed as the L1's.
const TEXTURE_WAYS: usize = 4;
const L2_WAYS: usize = 16;

/// Bytes, hits and misses at one cache level. `hits` and `misses` count 32-byte sectors
/// (an L1 line hit on 2.x/3.x counts its four sectors); for L2, a store sector counts as a
/// hit when its line was resident.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Level {
    /// Bytes the level served: for L1 the transaction bytes of the accesses that pass it
    /// (loads it caches; from 5.x on every global access, all of which go through the L1TEX
    /// unit); for L2 32 bytes per sector requested (load misses from L1, uncached loads,
    /// stores).
    pub bytes: u64,
    /// Sectors found (loads: valid or fully written; stores: line resident).
    pub hits: u64,
    /// Sectors not found.
    pub misses: u64,
}

/// Which bound set the predicted time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Limit {
    /// DRAM bytes / achievable copy bandwidth.
    Dram,
    /// L2 sector bytes / L2 bandwidth.
    L2,
    /// L1 bytes / L1 bandwidth.
    L1,
    /// Loads in flight per round / latency (Little's law).
    Latency,
}

/// The four lower bounds on the time, seconds, and the one that won.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, JsonSchema)]
pub struct Bounds {
    /// DRAM time-bytes / `copy_gbps`.
    pub dram_s: f64,
    /// L2 bytes / `l2_gbps` (0 without L2).
    pub l2_s: f64,
    /// L1 bytes / `l1_gbps` (0 without L1 traffic).
    pub l1_s: f64,
    /// Busiest SM's rounds of loads × `latency_ns`.
    pub latency_s: f64,
    /// The largest.
    pub limit: Limit,
}

/// What one kernel launch moved below the request, and how long it should take.
///
/// Shapes: bytes are totals over the launch; `predicted_seconds` = the largest of
/// [`Traffic::bounds`]; GB/s = 1e9 B/s.
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
pub struct Traffic {
    /// The GPU's table name.
    pub gpu: String,
    /// Its compute capability.
    pub cc: ComputeCapability,
    /// Global/local requests, as the analysis counts them for this compute capability (one
    /// per warp instruction with an active lane from 5.x on; half-warps on 1.x; 8/16-byte
    /// splits on 2.x/3.x), plus texture and surface requests (one per quad or 8 lanes,
    /// `warpscope_model::texture`).
    pub requests: u64,
    /// Bytes the active lanes asked for (width × active lanes, loads and stores): the useful
    /// bytes of Harris's effective bandwidth.
    pub bytes_requested: u64,
    /// Bytes of the transactions of the coalescing rules (the model's `transaction_bytes`).
    pub transaction_bytes: u64,
    /// Per-SM L1s, summed (global, local, texture and surface accesses).
    pub l1: Level,
    /// Lookups of the texture cache: texture fetches and surface loads (and on 3.5/3.7
    /// `__ldg` loads, which read through it); `bytes` are their sectors' bytes (surface
    /// stores included). From 5.x on the texture cache is the L1, so these are part of
    /// [`Traffic::l1`] and equal Nsight Compute's `l1tex__t_sectors_pipe_tex_lookup_hit`/
    /// `_miss` (`l1tex__t_sectors_pipe_tex` × 32); on 1.x–3.x it is a cache of its own
    /// ([`crate::TextureCache`]) and not part of [`Traffic::l1`].
    pub texture: Level,
    /// The shared L2.
    pub l2: Level,
    /// Bytes read from DRAM: L2 fills plus read-modify-write reads (1.x: load transactions).
    pub dram_read_bytes: u64,
    /// Of which read-modify-write reads for partially written sectors.
    pub dram_rmw_read_bytes: u64,
    /// Bytes written to DRAM (dirty sectors written back; 1.x: store transactions).
    pub dram_write_bytes: u64,
    /// DRAM bytes as the time bound counts them (≥ read + write when the profile sets a
    /// minimum per line).
    pub dram_time_bytes: u64,
    /// The lower bounds on the time.
    pub bounds: Bounds,
    /// Predicted kernel time, seconds (the largest bound).
    pub predicted_seconds: f64,
}

impl Traffic {
    /// Bytes read plus written in DRAM.
    pub fn dram_bytes(&self) -> u64 {
        self.dram_read_bytes + self.dram_write_bytes
    }

    /// Effective bandwidth, GB/s: `useful_bytes` / predicted time (Harris counts the bytes
    /// the kernel reads plus writes, e.g. [`Traffic::bytes_requested`]). 0 when nothing ran.
    pub fn effective_gbps(&self, useful_bytes: u64) -> f64 {
        if self.predicted_seconds > 0.0 {
            useful_bytes as f64 / self.predicted_seconds / 1e9
        } else {
            0.0
        }
    }
}

/// Immediate traffic of one access: what [`TrafficModel::add`] returns, for per-site sums.
/// Write-backs happen later, at eviction, and are counted per launch only (in [`Traffic`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct AccessTraffic {
    /// Bytes the SM's first-level cache served for it: the L1, or on 1.x–3.x the separate
    /// texture cache for texture fetches (and `__ldg` loads on 3.5/3.7).
    pub l1_bytes: u64,
    /// Sector bytes it asked of L2.
    pub l2_bytes: u64,
    /// DRAM bytes its L2 misses read (1.x: its transaction bytes, read or written).
    pub dram_bytes: u64,
}

/// L2 state of one line.
#[derive(Clone, Copy, Debug, Default)]
struct L2Line {
    /// Bit *k*: sector *k*'s data came from DRAM.
    valid: u8,
    /// Bytes of sector *k* written by stores (bit *j* = byte *j*).
    dirty: [u32; 4],
    /// DRAM bytes moved for this line during its residency (fills so far).
    dram_bytes: u32,
}

/// How one access goes through the hierarchy.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Route {
    /// 1.x: transactions straight to DRAM.
    Uncached,
    /// Load through L1, whole 128-byte lines fetched on a miss (2.x/3.x `-dlcm=ca`).
    L1Lines,
    /// Load through L1 (or the read-only cache), missing sectors fetched.
    L1Sectors,
    /// Load through the separate texture cache of 1.x–3.x, missing sectors fetched from L2
    /// (from DRAM on 1.x).
    TextureCache,
    /// Load served by L2 directly.
    L2Load,
    /// Store to L2.
    Store,
}

/// Feeds warp accesses, in the order the warps are scheduled, through per-SM L1s, a shared
/// L2 and DRAM; [`TrafficModel::finish`] gives the [`Traffic`] and the predicted time.
///
/// Allocates its caches once in [`TrafficModel::new`] (about 40 bytes per L2 line: 16 MB for
/// H100's 50 MiB L2); [`TrafficModel::add`] does not allocate.
pub struct TrafficModel {
    gpu: Gpu,
    arch: Arch,
    config: Config,
    profile: Profile,
    l1: Vec<LineCache<u8>>,
    /// The separate texture caches of 1.x–3.x (one per `sms_per_texture_cache` SMs); empty
    /// where textures go through the L1.
    texture_caches: Vec<LineCache<u8>>,
    sms_per_texture_cache: usize,
    l2: Option<LineCache<L2Line>>,
    // Per SM: warp-level global loads, blocks seen, last block seen.
    loads_per_sm: Vec<u64>,
    blocks_per_sm: Vec<u64>,
    last_block: Vec<u64>,
    warps_per_block: u32,
    t: Traffic,
}

impl TrafficModel {
    /// A model of `gpu` running code costed under `arch` and `config` (normally
    /// `gpu.arch()`: `--gpu` fixes the capability), with the rates of `profile`.
    pub fn new(gpu: &Gpu, arch: &Arch, config: &Config, profile: &Profile) -> TrafficModel {
        let has_caches = arch.cc.major >= 2;
        let l1 = if has_caches && gpu.l1_bytes_per_sm > 0 {
            (0..gpu.sms)
                .map(|_| LineCache::new(gpu.l1_bytes_per_sm, L1_WAYS))
                .collect()
        } else {
            Vec::new()
        };
        let l2 = (has_caches && gpu.l2_bytes > 0).then(|| LineCache::new(gpu.l2_bytes, L2_WAYS));
        let sms = gpu.sms.max(1) as usize;
        let (texture_caches, sms_per_texture_cache) = match gpu.texture_cache {
            Some(tc) if tc.bytes > 0 => {
                let per = tc.sms.max(1) as usize;
                let caches = (0..sms.div_ceil(per))
                    .map(|_| LineCache::new(tc.bytes, TEXTURE_WAYS))
                    .collect();
                (caches, per)
            }
            _ => (Vec::new(), 1),
        };
        TrafficModel {
            gpu: *gpu,
            arch: *arch,
            config: *config,
            profile: profile.clone(),
            l1,
            texture_caches,
            sms_per_texture_cache,
            l2,
            loads_per_sm: vec![0; sms],
            blocks_per_sm: vec![0; sms],
            last_block: vec![u64::MAX; sms],
            warps_per_block: 1,
            t: Traffic {
                gpu: gpu.name.to_string(),
                cc: arch.cc,
                requests: 0,
                bytes_requested: 0,
                transaction_bytes: 0,
                l1: Level::default(),
                texture: Level::default(),
                l2: Level::default(),
                dram_read_bytes: 0,
                dram_rmw_read_bytes: 0,
                dram_write_bytes: 0,
                dram_time_bytes: 0,
                bounds: Bounds {
                    dram_s: 0.0,
                    l2_s: 0.0,
                    l1_s: 0.0,
                    latency_s: 0.0,
                    limit: Limit::Dram,
                },
                predicted_seconds: 0.0,
            },
        }
    }

    /// Adds one warp access of warp `warp` (index within its block, from 0) of block
    /// `block_linear` (the block's linear index in the grid, which decides its SM). Call in
    /// schedule order: block after block, and within a block in program order with the warps
    /// in lockstep (as the front end runs them). Accesses of one block should come together
    /// (the per-SM block count assumes so).
    ///
    /// Shared and constant accesses, and accesses with no active lane, move nothing below the
    /// request and return zeros. Returns the access's immediate traffic.
    ///
    /// Texture fetches and surface loads (one request each, `warpscope_model::texture`) go
    /// through the SM's L1 like cached global loads: each distinct sector of the request is
    /// looked up in turn, a miss fetches it from L2, so a sector an earlier request of the
    /// same fetch brought in hits. Their transaction bytes are the texture model's sectors
    /// (a trilinear quad's two passes may count one sector twice; it is looked up once).
    /// Surface stores go to L2 like global stores. Compared with H100 ncu
    /// (`tests/data/h100/texture/texture-probes.csv`, `l1tex__t_sectors_pipe_tex_lookup_hit`
    /// /`_miss`): single-warp probes equal it (a row from x = 2: 9 misses, 7 hits; surface
    /// loads of an 8×4 tile: 4 and 4); whole launches depend on which blocks share an SM
    /// (here block *b* runs on SM *b* mod SMs, one after the other): `examples/texture.cu`'s
    /// conv_texture is 30 lookups off in 11.8 million (243,588 misses against 243,558), the
    /// random tex1Dfetch gather 6, the iota gather exact (`tests/texture.rs`).
    /// On 1.x–3.x texture fetches (and `__ldg` loads on 3.5/3.7) go through the GPU's separate
    /// texture cache instead ([`crate::TextureCache`]: one per TPC on 1.x, where a miss reads
    /// its 32-byte sector from DRAM; one per SM on 2.x/3.x, missing to L2), sector by sector
    /// as above; sizes from the Programming Guide, the rest assumed (no such GPU measured).
    /// Surface store lookups (ncu counts them as hits/misses too) are not counted.
    pub fn add(&mut self, block_linear: u64, warp: u32, a: &WarpAccess) -> AccessTraffic {
        if a.mask == 0
            || !matches!(
                a.space,
                Space::Global | Space::Local | Space::Texture | Space::Surface
            )
        {
            return AccessTraffic::default();
        }
        let texture_path = matches!(a.space, Space::Texture | Space::Surface);
        let sm = (block_linear % self.loads_per_sm.len() as u64) as usize;
        if self.last_block[sm] != block_linear {
            self.last_block[sm] = block_linear;
            self.blocks_per_sm[sm] += 1;
        }
        self.warps_per_block = self.warps_per_block.max(warp + 1);
        // The latency bound counts warp instructions, not the requests of one.
        if a.op == Op::Load && a.starts_execution() {
            self.loads_per_sm[sm] += 1;
        }
        let mut buf = [(0u64, 0u32); 2 * WARP_SIZE];
        let mut n = sectors(a, &mut buf);
        // The TMA's fill sectors (the parts of a box outside its tensor) move nothing.
        if a.space == Space::Global && buf[..n].iter().any(|&(s, _)| is_tma_fill(s * SECTOR)) {
            let mut k = 0;
            for i in 0..n {
                if !is_tma_fill(buf[i].0 * SECTOR) {
                    buf[k] = buf[i];
                    k += 1;
                }
            }
            n = k;
            if n == 0 {
                return AccessTraffic::default();
            }
        }
        let sectors = &buf[..n];
        // From 5.x on the transactions are the distinct sectors [reference "CC 5.0 … 12.0"]:
        // no need to run the model's rules again; older families need them.
        let (transaction_bytes, requests) = if texture_path {
            (warpscope_model::texture::cost(a).transaction_bytes, 1)
        } else if self.arch.cc.major >= 5 {
            (SECTOR * n as u64, 1)
        } else {
            let c = warpscope_model::cost(&self.arch, &self.config, a);
            (c.transaction_bytes, c.requests)
        };
        self.t.requests += requests;
        self.t.bytes_requested += u64::from(a.active_lanes()) * u64::from(a.width);
        self.t.transaction_bytes += transaction_bytes;
        let route = self.route(a);
        if texture_path || route == Route::TextureCache {
            self.t.texture.bytes += transaction_bytes;
        }

        let mut out = AccessTraffic::default();
        if route == Route::TextureCache {
            out.l1_bytes = transaction_bytes;
            let unit = sm / self.sms_per_texture_cache;
            for &(s, _) in sectors {
                if lookup_sector(&mut self.texture_caches[unit], s) {
                    self.t.texture.hits += 1;
                    continue;
                }
                self.t.texture.misses += 1;
                if self.l2.is_some() {
                    self.l2_read(s, &mut out);
                } else {
                    self.t.dram_read_bytes += SECTOR;
                    self.t.dram_time_bytes += SECTOR;
                    out.dram_bytes += SECTOR;
                }
            }
            return out;
        }
        if route == Route::Uncached || self.l2.is_none() {
            let b = transaction_bytes;
            match a.op {
                Op::Load | Op::Prefetch => self.t.dram_read_bytes += b,
                Op::Store | Op::Atomic => self.t.dram_write_bytes += b,
            }
            self.t.dram_time_bytes += b;
            out.dram_bytes = b;
            return out;
        }
        // An L2 prefetch reads its sectors into L2 and nothing into the SM.
        if a.op == Op::Prefetch {
            for &(s, _) in sectors {
                self.l2_read(s, &mut out);
            }
            return out;
        }
        let through_l1 = matches!(route, Route::L1Lines | Route::L1Sectors) && !self.l1.is_empty();
        // From 5.x on every global access passes the L1TEX unit, cached or not.
        if through_l1 || self.arch.cc.major >= 5 {
            self.t.l1.bytes += transaction_bytes;
            out.l1_bytes = transaction_bytes;
        }
        match route {
            Route::Store => {
                for &(s, mask) in sectors {
                    if let Some(l1) = self.l1.get_mut(sm) {
                        if let Some(slot) = l1.find(s >> 2) {
                            *l1.payload_mut(slot) &= !(1u8 << (s & 3));
                        }
                    }
                    self.l2_write(s, mask, &mut out);
                }
            }
            Route::L2Load => {
                for &(s, _) in sectors {
                    self.l2_read(s, &mut out);
                }
            }
            Route::L1Sectors | Route::L1Lines if self.l1.is_empty() => {
                for &(s, _) in sectors {
                    self.l2_read(s, &mut out);
                }
            }
            Route::L1Sectors => {
                for &(s, _) in sectors {
                    if lookup_sector(&mut self.l1[sm], s) {
                        self.t.l1.hits += 1;
                        self.t.texture.hits += u64::from(texture_path);
                    } else {
                        self.t.l1.misses += 1;
                        self.t.texture.misses += u64::from(texture_path);
                        self.l2_read(s, &mut out);
                    }
                }
            }
            Route::L1Lines => {
                let mut last = u64::MAX;
                for &(s, _) in sectors {
                    let line = s >> 2;
                    if line == last {
                        continue;
                    }
                    last = line;
                    let l1 = &mut self.l1[sm];
                    let acc = l1.access(line);
                    let p = l1.payload_mut(acc.slot);
                    if *p == 0xF {
                        self.t.l1.hits += 4;
                    } else {
                        *p = 0xF;
                        self.t.l1.misses += 4;
                        for k in 0..4 {
                            self.l2_read(line * 4 + k, &mut out);
                        }
                    }
                }
            }
            Route::Uncached | Route::TextureCache => unreachable!("handled above"),
        }
        out
    }

    /// How `a` goes through the hierarchy on this capability.
    fn route(&self, a: &WarpAccess) -> Route {
        if matches!(a.space, Space::Texture | Space::Surface) {
            return if a.op.writes() {
                if self.l2.is_some() {
                    Route::Store
                } else {
                    Route::Uncached
                }
            } else if !self.texture_caches.is_empty() {
                Route::TextureCache
            } else if self.arch.cc.major >= 2 {
                Route::L1Sectors
            } else {
                Route::Uncached
            };
        }
        let local = a.space == Space::Local;
        match self
            .arch
            .global_path(&self.config, a.op, a.read_only, local)
        {
            GlobalPath::Uncached => Route::Uncached,
            _ if a.op.writes() => Route::Store,
            GlobalPath::L1Lines => Route::L1Lines,
            // 3.5/3.7's read-only data cache is the texture cache.
            GlobalPath::ReadOnly if !self.texture_caches.is_empty() => Route::TextureCache,
            GlobalPath::ReadOnly => Route::L1Sectors,
            GlobalPath::L2Segments => Route::L2Load,
            GlobalPath::Sectors => {
                let cached = self.arch.l1_caches_global_loads_by_default
                    || a.read_only
                    || self.config.l1 == L1Mode::Ca;
                if cached {
                    Route::L1Sectors
                } else {
                    Route::L2Load
                }
            }
        }
    }

    fn l2_read(&mut self, s: u64, out: &mut AccessTraffic) {
        let gran = u64::from(self.profile.dram_read_granularity_bytes).clamp(SECTOR, LINE_BYTES);
        let l2 = self.l2.as_mut().expect("cached route implies L2");
        let acc = l2.access(s >> 2);
        if let Some((_, victim)) = acc.evicted {
            self.write_back(victim);
        }
        let l2 = self.l2.as_mut().expect("cached route implies L2");
        let p = l2.payload_mut(acc.slot);
        let k = (s & 3) as usize;
        self.t.l2.bytes += SECTOR;
        out.l2_bytes += SECTOR;
        if p.valid & (1 << k) != 0 || p.dirty[k] == FULL {
            self.t.l2.hits += 1;
            return;
        }
        self.t.l2.misses += 1;
        let per = (gran / SECTOR) as usize;
        let first = k & !(per - 1);
        for j in first..first + per {
            p.valid |= 1 << j;
        }
        p.dram_bytes += gran as u32;
        self.t.dram_read_bytes += gran;
        out.dram_bytes += gran;
    }

    fn l2_write(&mut self, s: u64, mask: u32, out: &mut AccessTraffic) {
        let l2 = self.l2.as_mut().expect("cached route implies L2");
        let acc = l2.access(s >> 2);
        if let Some((_, victim)) = acc.evicted {
            self.write_back(victim);
        }
        let l2 = self.l2.as_mut().expect("cached route implies L2");
        l2.payload_mut(acc.slot).dirty[(s & 3) as usize] |= mask;
        if acc.hit {
            self.t.l2.hits += 1;
        } else {
            self.t.l2.misses += 1;
        }
        self.t.l2.bytes += SECTOR;
        out.l2_bytes += SECTOR;
    }

    /// A line leaves L2: write its dirty sectors (reading partially written ones first) and
    /// charge its residency's DRAM time.
    fn write_back(&mut self, p: L2Line) {
        let mut bytes = u64::from(p.dram_bytes);
        for k in 0..4 {
            if p.dirty[k] == 0 {
                continue;
            }
            if p.valid & (1 << k) == 0 && p.dirty[k] != FULL {
                let r = u64::from(self.profile.partial_write_read_bytes);
                self.t.dram_read_bytes += r;
                self.t.dram_rmw_read_bytes += r;
                bytes += r;
            }
            self.t.dram_write_bytes += SECTOR;
            bytes += SECTOR;
        }
        if bytes > 0 {
            self.t.dram_time_bytes += bytes.max(u64::from(self.profile.dram_min_bytes_per_line));
        }
    }

    /// Writes back every line still in L2 (a launch's writes all reach DRAM in the end) and
    /// computes the bounds and the predicted time (see the module doc).
    pub fn finish(mut self) -> Traffic {
        if let Some(mut l2) = self.l2.take() {
            let mut lines = Vec::new();
            l2.drain(|_, p| lines.push(p));
            for p in lines {
                self.write_back(p);
            }
        }
        let p = &self.profile;
        let mut t = self.t;
        let dram_s = t.dram_time_bytes as f64 / (p.copy_gbps * 1e9);
        let l2_s = t.l2.bytes as f64 / (p.l2_gbps * 1e9);
        let l1_s = if p.l1_gbps > 0.0 {
            t.l1.bytes as f64 / (p.l1_gbps * 1e9)
        } else {
            0.0
        };
        let resident = u64::from(resident_warps_per_sm(&self.gpu, self.warps_per_block));
        let warps_per_block = u64::from(self.warps_per_block);
        let rounds = self
            .loads_per_sm
            .iter()
            .zip(&self.blocks_per_sm)
            .filter(|&(_, &b)| b > 0)
            .map(|(&loads, &blocks)| loads as f64 / resident.min(blocks * warps_per_block) as f64)
            .fold(0.0, f64::max);
        let latency_s = rounds * p.latency_ns * 1e-9;
        let mut limit = Limit::Dram;
        let mut best = dram_s;
        for (l, s) in [
            (Limit::L2, l2_s),
            (Limit::L1, l1_s),
            (Limit::Latency, latency_s),
        ] {
            if s > best {
                best = s;
                limit = l;
            }
        }
        t.bounds = Bounds {
            dram_s,
            l2_s,
            l1_s,
            latency_s,
            limit,
        };
        t.predicted_seconds = best;
        t
    }
}

/// Looks sector `s` up in `cache` (a valid bit per sector of each line) and fills it on a
/// miss; whether it hit.
fn lookup_sector(cache: &mut LineCache<u8>, s: u64) -> bool {
    let acc = cache.access(s >> 2);
    let bit = 1u8 << (s & 3);
    let p = cache.payload_mut(acc.slot);
    let hit = *p & bit != 0;
    *p |= bit;
    hit
}

/// The distinct 32-byte sectors touched by the active lanes of `a`, ascending, each with the
/// byte mask of the lanes' ranges `[addr, addr + width)` inside it (width clamped to 1–16 as
/// in the model). Returns how many of `buf` are filled; a lane touches at most two sectors,
/// so 64 entries suffice. Allocation-free.
fn sectors(a: &WarpAccess, buf: &mut [(u64, u32); 2 * WARP_SIZE]) -> usize {
    let w = u64::from(a.width.clamp(1, 16));
    let mut n = 0;
    let mut sorted = true;
    let mut m = a.mask;
    while m != 0 {
        let l = m.trailing_zeros() as usize;
        m &= m - 1;
        let start = a.addrs[l];
        let end = start.saturating_add(w); // exclusive
        let mut s = start;
        while s < end {
            let sector = s / SECTOR;
            let lo = (s % SECTOR) as u32;
            let hi = ((end - sector * SECTOR).min(SECTOR)) as u32; // exclusive, ≤ 32
            let mask = if hi - lo == 32 {
                FULL
            } else {
                ((1u32 << (hi - lo)) - 1) << lo
            };
            if n > 0 && buf[n - 1].0 == sector {
                buf[n - 1].1 |= mask;
            } else {
                if n > 0 && buf[n - 1].0 > sector {
                    sorted = false;
                }
                buf[n] = (sector, mask);
                n += 1;
            }
            s = (sector + 1) * SECTOR;
        }
    }
    if !sorted {
        let v = &mut buf[..n];
        v.sort_unstable_by_key(|e| e.0);
        let mut k = 0;
        for i in 0..n {
            if k > 0 && buf[k - 1].0 == buf[i].0 {
                buf[k - 1].1 |= buf[i].1;
            } else {
                buf[k] = buf[i];
                k += 1;
            }
        }
        n = k;
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpus::lookup;
    use warpscope_model::LaneForm;

    const BASE: u64 = 0x7f00_0000_0000;

    fn access(op: Op, width: u32, f: impl Fn(u64) -> u64) -> WarpAccess {
        let mut addrs = [0u64; 32];
        for (l, a) in addrs.iter_mut().enumerate() {
            *a = f(l as u64);
        }
        WarpAccess {
            space: Space::Global,
            op,
            width,
            mask: u32::MAX,
            addrs,
            read_only: false,
            lanes: LaneForm::Unknown,
        }
    }

    #[test]
    fn sector_masks() {
        let mut buf = [(0u64, 0u32); 64];
        // Unit-stride floats: 4 full sectors.
        let a = access(Op::Load, 4, |l| BASE + 4 * l);
        let n = sectors(&a, &mut buf);
        assert_eq!(n, 4);
        assert!(buf[..4].iter().all(|&(_, m)| m == FULL));
        // Misaligned by one float: 5 sectors, first missing its first 4 bytes, last holding 4.
        let a = access(Op::Load, 4, |l| BASE + 4 * (l + 1));
        let n = sectors(&a, &mut buf);
        assert_eq!(n, 5);
        assert_eq!(buf[0].1, !0xF);
        assert_eq!(buf[4].1, 0xF);
        // Stride 2: half of every byte... every other float of 8 sectors.
        let a = access(Op::Store, 4, |l| BASE + 8 * l);
        let n = sectors(&a, &mut buf);
        assert_eq!(n, 8);
        assert!(buf[..8].iter().all(|&(_, m)| m == 0x0F0F_0F0F));
        // Reversed lanes sort; a misaligned 8-byte lane straddles two sectors.
        let a = access(Op::Load, 8, |l| BASE + 28 + 64 * (31 - l));
        let n = sectors(&a, &mut buf);
        assert_eq!(n, 64);
        assert!(buf[..n].windows(2).all(|w| w[0].0 < w[1].0));
        assert_eq!(buf[0].1, 0xF000_0000);
        assert_eq!(buf[1].1, 0xF);
    }

    fn run(gpu: &str, accesses: &[(u64, u32, WarpAccess)]) -> Traffic {
        let g = lookup(gpu).unwrap();
        let mut m = TrafficModel::new(g, g.arch(), &Config::default(), &Profile::datasheet(g));
        for (b, w, a) in accesses {
            m.add(*b, *w, a);
        }
        m.finish()
    }

    /// `requests` counts as the analysis does: one per warp instruction from 5.x on, half-warps
    /// on 1.x, quarter-warps for 16-byte words on 2.x [PG5 F.3.2, F.4.2].
    #[test]
    fn requests_are_the_analysis_requests_of_the_gpus_cc() {
        let float4 = access(Op::Load, 16, |l| BASE + 16 * l);
        let float = access(Op::Load, 4, |l| BASE + 4 * l);
        let two = [(0, 0, float4), (0, 1, float)];
        assert_eq!(run("h100", &two).requests, 2);
        // 2.0: float4 in 4 quarter-warp requests, the float in one.
        assert_eq!(run("c2050", &two).requests, 5);
        // 1.3: half-warps, 2 each.
        assert_eq!(run("c1060", &two).requests, 4);
    }

    #[test]
    fn h100_dram_granularity_and_rmw() {
        // A warp reading one float every 64 bytes: 64 DRAM bytes per lane [H100].
        let t = run("h100", &[(0, 0, access(Op::Load, 4, |l| BASE + 64 * l))]);
        assert_eq!(t.dram_read_bytes, 32 * 64);
        assert_eq!(t.l2.misses, 32);
        // Every 32 bytes: one 64-byte piece serves two lanes.
        let t = run("h100", &[(0, 0, access(Op::Load, 4, |l| BASE + 32 * l))]);
        assert_eq!(t.dram_read_bytes, 16 * 64);
        assert_eq!((t.l2.hits, t.l2.misses), (16, 16));
        // Unit stride: 128 bytes read, nothing written.
        let t = run("h100", &[(0, 0, access(Op::Load, 4, |l| BASE + 4 * l))]);
        assert_eq!((t.dram_read_bytes, t.dram_write_bytes), (128, 0));
        // A stride-2 float store half-writes 8 sectors: each read (RMW) then written.
        let t = run("h100", &[(0, 0, access(Op::Store, 4, |l| BASE + 8 * l))]);
        assert_eq!(t.dram_write_bytes, 8 * 32);
        assert_eq!(t.dram_rmw_read_bytes, 8 * 32);
        // A full-sector store reads nothing.
        let t = run("h100", &[(0, 0, access(Op::Store, 4, |l| BASE + 4 * l))]);
        assert_eq!((t.dram_read_bytes, t.dram_write_bytes), (0, 128));
    }

    #[test]
    fn neighbour_warps_make_misalignment_free_below_l2() {
        // Warps 0..7 of one block load a float array shifted by one element: 5 sectors per
        // request, but DRAM reads the span once [H100: same DRAM bytes as aligned].
        let mis: Vec<_> = (0..8u32)
            .map(|w| {
                let a = access(Op::Load, 4, |l| BASE + 4 * (32 * w as u64 + l + 1));
                (0u64, w, a)
            })
            .collect();
        let t = run("h100", &mis);
        assert_eq!(t.transaction_bytes, 8 * 5 * 32);
        // Bytes 4 .. 1028: sectors 0..32, fetched as 64-byte pairs 0..=16 → 17 × 64.
        assert_eq!(t.dram_read_bytes, 17 * 64);
        // The fifth sector of warp w is warp w+1's first: an L1 hit (same SM).
        assert_eq!(t.l1.hits, 7);
        assert_eq!(t.l1.misses, 33);
        // Stores misaligned the same way: partial edge sectors merge in L2, no RMW except
        // for the two ends of the whole span.
        let st: Vec<_> = (0..8u32)
            .map(|w| {
                (
                    0u64,
                    w,
                    access(Op::Store, 4, |l| BASE + 4 * (32 * w as u64 + l + 1)),
                )
            })
            .collect();
        let t = run("h100", &st);
        assert_eq!(t.dram_write_bytes, 33 * 32);
        assert_eq!(t.dram_rmw_read_bytes, 2 * 32);
    }

    #[test]
    fn sector_counts_equal_the_model_rules() {
        // From 5.x on `add` counts transactions itself; they must be the model's sectors.
        let mut x = 0x2545_F491_4F6C_DD1Du64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for cc in ["9.0", "5.2", "12.0"] {
            let arch = warpscope_model::arch::lookup(cc.parse().unwrap()).unwrap();
            for _ in 0..2000 {
                let width = [1u32, 2, 4, 8, 16][(next() % 5) as usize];
                let spread = [64u64, 1024, 1 << 20][(next() % 3) as usize];
                let mut a = access(Op::Load, width, |_| 0);
                for l in 0..32 {
                    a.addrs[l] = BASE + next() % spread;
                }
                a.mask = next() as u32;
                let mut buf = [(0u64, 0u32); 64];
                let n = sectors(&a, &mut buf) as u64;
                let c = warpscope_model::cost(arch, &Config::default(), &a);
                assert_eq!(32 * n, c.transaction_bytes, "{a:?}");
                let ones: u64 = buf[..n as usize]
                    .iter()
                    .map(|e| e.1.count_ones() as u64)
                    .sum();
                assert!(
                    ones <= c.bytes_requested,
                    "masks cover at most the requested bytes"
                );
            }
        }
    }

    #[test]
    fn cc1_goes_straight_to_dram() {
        let t = run(
            "c870",
            &[(0, 0, access(Op::Load, 4, |l| BASE + 4 * (l + 1)))],
        );
        assert_eq!(t.dram_read_bytes, 32 * 32);
        assert_eq!(t.l2, Level::default());
        let t = run(
            "c1060",
            &[(0, 0, access(Op::Store, 4, |l| BASE + 4 * (l + 1)))],
        );
        assert_eq!(t.dram_write_bytes, 128 + 64 + 32);
    }

    #[test]
    fn fermi_l1_lines_and_l2_segments() {
        // A misaligned float load on 2.0: two 128-byte L1 lines per warp; the neighbour warp
        // hits the second in L1.
        let mis: Vec<_> = (0..8u32)
            .map(|w| {
                (
                    0u64,
                    w,
                    access(Op::Load, 4, |l| BASE + 4 * (32 * w as u64 + l + 1)),
                )
            })
            .collect();
        let t = run("c2050", &mis);
        assert_eq!(t.transaction_bytes, 8 * 256);
        assert_eq!((t.l1.hits, t.l1.misses), (7 * 4, 9 * 4));
        assert_eq!(t.l2.bytes, 9 * 128);
        assert_eq!(t.dram_read_bytes, 9 * 128);
        // -dlcm=cg: L2 only, 32-byte segments.
        let g = lookup("c2050").unwrap();
        let cg = Config {
            l1: L1Mode::Cg,
            ..Config::default()
        };
        let mut m = TrafficModel::new(g, g.arch(), &cg, &Profile::datasheet(g));
        for (b, w, a) in &mis {
            m.add(*b, *w, a);
        }
        let t = m.finish();
        assert_eq!(t.l1, Level::default());
        assert_eq!(t.l2.bytes, 8 * 5 * 32);
        assert_eq!(t.dram_read_bytes, 33 * 32);
    }

    #[test]
    fn shared_and_inactive_accesses_move_nothing() {
        let g = lookup("h100").unwrap();
        let mut m = TrafficModel::new(g, g.arch(), &Config::default(), &Profile::datasheet(g));
        let mut a = access(Op::Load, 4, |l| 4 * l);
        a.space = Space::Shared;
        assert_eq!(m.add(0, 0, &a), AccessTraffic::default());
        a.space = Space::Global;
        a.mask = 0;
        assert_eq!(m.add(0, 0, &a), AccessTraffic::default());
        let t = m.finish();
        assert_eq!((t.requests, t.predicted_seconds), (0, 0.0));
        assert_eq!(t.effective_gbps(100), 0.0);
    }

    #[test]
    fn store_invalidates_l1() {
        let g = lookup("h100").unwrap();
        let mut m = TrafficModel::new(g, g.arch(), &Config::default(), &Profile::datasheet(g));
        let ld = access(Op::Load, 4, |l| BASE + 4 * l);
        let st = access(Op::Store, 4, |l| BASE + 4 * l);
        m.add(0, 0, &ld);
        assert_eq!(m.add(0, 0, &ld).l2_bytes, 0, "second load hits L1");
        m.add(0, 0, &st);
        let again = m.add(0, 0, &ld);
        assert_eq!(again.l2_bytes, 128, "after the store the load goes to L2");
        assert_eq!(
            again.dram_bytes, 0,
            "and hits there (fully written sectors)"
        );
    }

    #[test]
    fn latency_bound_counts_rounds_of_resident_warps() {
        // One block of 8 warps, one load each: one round, one latency.
        let ld: Vec<_> = (0..8u32)
            .map(|w| {
                (
                    0u64,
                    w,
                    access(Op::Load, 4, |l| BASE + 4 * (32 * w as u64 + l)),
                )
            })
            .collect();
        let t = run("h100", &ld);
        assert!(
            (t.bounds.latency_s - 900e-9).abs() < 1e-12,
            "{:?}",
            t.bounds
        );
        assert_eq!(t.bounds.limit, Limit::Latency);
    }

    /// The requests of one warp fetching texel `xy(lane)` (nearest-point) from a 1024×1024
    /// float CUDA array, or loading it as a surface.
    fn texture_fetch(surface: bool, op: Op, xy: impl Fn(i64) -> (i64, i64)) -> Vec<WarpAccess> {
        use warpscope_model::texture::{footprint, warp_requests, Coords, Sampling};
        let t: warpscope_model::texture::TextureDesc = "t=array:1024x1024:float".parse().unwrap();
        let lanes: Vec<_> = (0..32)
            .map(|l| {
                let (x, y) = xy(l as i64);
                let c = Coords::Int([x, y, 0]);
                (l, footprint(&t, c, 2, None, Sampling::Tex))
            })
            .collect();
        warp_requests(&t, BASE, &lanes, 1, surface, op)
    }

    /// Single-warp H100 probes (`tests/data/h100/texture/texture-probes.csv`, cold cache):
    /// lookups per sector of each request in turn equal ncu's
    /// `l1tex__t_sectors_pipe_tex_lookup_hit`/`_miss`.
    #[test]
    fn texture_lookups_equal_the_h100_probes() {
        let run_all = |reqs: Vec<WarpAccess>| {
            let v: Vec<_> = reqs.into_iter().map(|a| (0, 0, a)).collect();
            run("h100", &v)
        };
        // a2d_f32_point_row_x2: x = 2 + lane: 8 quads of 2 sectors (16), 9 distinct:
        // 9 misses, 7 hits (ncu: 7 hits, 9 misses, 16 sectors).
        let t = run_all(texture_fetch(false, Op::Load, |l| (2 + l, 0)));
        assert_eq!(
            (t.texture.hits, t.texture.misses, t.texture.bytes),
            (7, 9, 16 * 32)
        );
        assert_eq!(t.requests, 8);
        // L2 reads are the misses: 9 sectors (ncu lts__t_sectors_srcunit_tex_op_read 25 counts
        // the probe's coordinate loads and store too).
        assert_eq!(t.l2.hits + t.l2.misses, 9);
        // surf_f32_ld_t8x4: an 8×4 tile as surface loads, 4 requests of 8 lanes, 2 sectors
        // each (8), 4 distinct: 4 hits, 4 misses (ncu: 4, 4).
        let t = run_all(texture_fetch(true, Op::Load, |l| (l % 8, l / 8)));
        assert_eq!(
            (t.texture.hits, t.texture.misses, t.texture.bytes),
            (4, 4, 8 * 32)
        );
        // surf_f32_ld_col: a column, 4 requests of 4 sectors, 16 distinct: all miss (ncu 0, 16).
        let t = run_all(texture_fetch(true, Op::Load, |l| (0, l)));
        assert_eq!((t.texture.hits, t.texture.misses), (0, 16));
        // A surface store is written to L2: no L1 lookups counted, 8 sectors stored.
        let t = run_all(texture_fetch(true, Op::Store, |l| (l, 0)));
        assert_eq!(
            (t.texture.hits, t.texture.misses, t.texture.bytes),
            (0, 0, 4 * 32 * 2)
        );
        assert_eq!(t.l1.hits + t.l1.misses, 0);
    }

    /// One warp fetching texels 0–31 of row 0: 8 requests of one sector each, 8 distinct.
    fn row_fetch() -> Vec<WarpAccess> {
        texture_fetch(false, Op::Load, |l| (l, 0))
    }

    /// `(block, warp 0, access)` for every access of `reqs`.
    fn in_block(block: u64, reqs: Vec<WarpAccess>) -> impl Iterator<Item = (u64, u32, WarpAccess)> {
        reqs.into_iter().map(move |a| (block, 0, a))
    }

    /// 1.x: one texture cache per TPC (2 SMs on G80, 3 on GT200); a miss reads its 32-byte
    /// sector from DRAM (no L2). Blocks on SMs of one TPC hit what a neighbour fetched.
    #[test]
    fn texture_cache_is_shared_by_the_sms_of_a_tpc_on_1x() {
        let blocks = |n: u64| -> Vec<_> { (0..n).flat_map(|b| in_block(b, row_fetch())).collect() };
        // C870: blocks 0 and 1 share TPC 0 (8 misses, then 8 hits), block 2 is on TPC 1.
        let t = run("c870", &blocks(3));
        assert_eq!((t.texture.hits, t.texture.misses), (8, 16));
        assert_eq!((t.dram_read_bytes, t.texture.bytes), (16 * 32, 24 * 32));
        assert_eq!((t.l1.hits + t.l1.misses, t.l2.bytes), (0, 0));
        // C1060: blocks 0–2 share TPC 0, block 3 is on TPC 1.
        let t = run("c1060", &blocks(4));
        assert_eq!((t.texture.hits, t.texture.misses), (16, 16));
        assert_eq!(t.dram_read_bytes, 16 * 32);
    }

    /// 2.x: the texture cache is independent of the L1 [PG "Compute Capability 2.x"]: 32 KB of
    /// cached global loads thrash the 16 KB L1 but leave the texture cache's lines alone. On
    /// P100 (6.0) the same texels live in the unified L1/texture cache, and 32 KB of `__ldg`
    /// loads through its 24 KB evict them.
    #[test]
    fn texture_cache_is_apart_from_l1_before_5x() {
        let sweep = |read_only: bool| {
            (0..256u64).map(move |k| {
                let mut a = access(Op::Load, 4, |l| BASE + (1 << 20) + 128 * k + 4 * l);
                a.read_only = read_only;
                (0, 0, a)
            })
        };
        let seq = |read_only: bool| -> Vec<_> {
            in_block(0, row_fetch())
                .chain(sweep(read_only))
                .chain(in_block(0, row_fetch()))
                .collect()
        };
        let t = run("c2050", &seq(false));
        assert_eq!((t.texture.hits, t.texture.misses), (8, 8));
        // The sweep's 256 lines all miss L1 (counted per sector, 4 a line); no texel in L1.
        assert_eq!((t.l1.hits, t.l1.misses), (0, 1024));
        let t = run("p100", &seq(true));
        assert_eq!((t.texture.hits, t.texture.misses), (0, 16));
        assert_eq!(t.l1.misses, 16 + 1024);
    }

    /// 3.5: `__ldg` reads through the 48 KB read-only data (texture) cache [PG "Compute
    /// Capability 3.x"], not the 16 KB L1: a 32 KB read-only working set read twice hits the
    /// second time (1,024 sectors), and the L1 sees none of it.
    #[test]
    fn ldg_reads_through_the_texture_cache_on_3_5() {
        let pass = (0..256u64).map(|k| {
            let mut a = access(Op::Load, 4, |l| BASE + 128 * k + 4 * l);
            a.read_only = true;
            (0, 0, a)
        });
        let v: Vec<_> = pass.clone().chain(pass).collect();
        let t = run("k40", &v);
        assert_eq!((t.texture.hits, t.texture.misses), (1024, 1024));
        assert_eq!(t.texture.bytes, 2 * 32 * 1024);
        assert_eq!(t.l1.hits + t.l1.misses + t.l1.bytes, 0);
        assert_eq!(t.l2.hits + t.l2.misses, 1024);
    }

    /// The latency bound counts warp instructions: a texture fetch is 8 requests but one load.
    #[test]
    fn latency_bound_counts_a_texture_fetch_once() {
        let v: Vec<_> = in_block(0, row_fetch()).collect();
        let t = run("h100", &v);
        assert_eq!(t.requests, 8);
        assert!(
            (t.bounds.latency_s - 900e-9).abs() < 1e-12,
            "{:?}",
            t.bounds
        );
    }
}
