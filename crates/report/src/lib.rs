//! Reports: the counters of every access site summed over a launch, per compute capability,
//! and their renderings (a table for people, JSON for programs).
//!
//! [`Aggregator`] receives the warp-level accesses of one run of a kernel launch, tallies
//! their distinct shapes and costs each shape once for every requested compute capability
//! (the architectures in parallel, rayon). [`Analysis`] is the result; [`render_table`] and
//! `serde_json` render it, [`rows`] groups its sites into the table's rows (an unrolled
//! loop's copies of one access summed), and [`annotate`] renders the source view.

mod advise;
mod aggregate;
pub mod annotate;
mod csv_table;
pub mod explain;
pub mod ncu;
pub mod plot;
pub mod resources;
pub mod rows;
mod sweep;
mod table;

pub use advise::{advise, cc_list};
pub use aggregate::Aggregator;
pub use csv_table::{render_csv, render_labeled_csv, render_sweep_csv};
pub use sweep::{render_sweep, render_sweep_fit, SweepCurves, SweepOutput, SweepPoint};
pub use table::num as thousands;
pub use table::{
    cause_name, render_advice, render_notes, render_table, render_table_fit, render_table_view,
    render_traffic, table_width,
};

use schemars::JsonSchema;
use serde::Serialize;
use warpscope_model::{Cost, Op, Space};

use explain::SiteAdvice;

/// A site's source text for a table or a message: at most 48 characters, the rest cut to
/// `…` (JSON and CSV carry the text whole).
pub fn short_text(text: &str) -> String {
    if text.chars().count() > 48 {
        format!("{}…", text.chars().take(47).collect::<String>())
    } else {
        text.to_string()
    }
}

/// Splits `text` into lines of at most `width` characters at spaces (a longer word gets a
/// line of its own).
pub fn wrap(text: &str, width: usize) -> Vec<String> {
    explain::wrap(text, width)
}

/// The static description of an access site, as the front end names it.
#[derive(Clone, Debug, Serialize)]
pub struct SiteInfo {
    pub line: u32,
    pub column: u32,
    /// The expression's source text.
    pub text: String,
    pub op: Op,
    /// Loads through the read-only path (`__ldg`, `const __restrict__`).
    pub read_only: bool,
    /// The source file of the line when it is not the analyzed file (a header, Triton's
    /// `.py`, the `.cu` of a `.ptx`); `None` otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// The PTX instruction of a site of the compiled path (`ld.global.v4.f32`); `None` for
    /// the source interpreter's sites.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ptx: Option<String>,
    /// Its 1-based line in the PTX file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ptx_line: Option<u32>,
}

/// What the report says about the launch besides the counters.
#[derive(Clone, Debug, Default)]
pub struct Header {
    pub kernel: String,
    pub source: String,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub local_arrays: Vec<LocalArrayInfo>,
    pub notes: Vec<String>,
}

/// A per-thread array placed in local memory.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct LocalArrayInfo {
    /// The array's name in the source.
    pub name: String,
    /// 1-based line of its declaration.
    pub line: u32,
    /// 1-based column of its declaration.
    pub column: u32,
    /// Why it is in local memory rather than registers, in words.
    pub reason: String,
}

/// Counters with their efficiency, as reported: sums over the warp-level executions counted
/// (a site's over the launch, a total's over its sites, or one warp's in `explain`).
#[derive(Clone, Copy, Debug, Default, Serialize, JsonSchema)]
pub struct Counters {
    /// Warp-level executions (warp instructions) with at least one active lane.
    pub executions: u64,
    /// Requests after the compute capability's split: half-warps on 1.x, 8/16-byte splits
    /// on 2.x/3.x, one per warp instruction from 5.x; for constant memory, one per distinct
    /// address (Nsight Compute's `l1tex__t_requests_…` for global and local memory).
    pub requests: u64,
    /// Memory transactions (global and local memory): 32, 64 or 128 bytes each on 1.x, 128
    /// (L1 lines) or 32 (L2 segments) on 2.x/3.x, one per 32-byte sector from 5.x.
    pub transactions: u64,
    /// Bytes moved by those transactions.
    pub transaction_bytes: u64,
    /// 32-byte sectors: `transaction_bytes / 32` (Nsight Compute's `l1tex__t_sectors_…`).
    pub sectors: u64,
    /// Bytes the active lanes asked for: access width × active lanes, summed.
    pub bytes_requested: u64,
    /// Efficiency as a fraction (not a percentage): `bytes_requested / transaction_bytes`
    /// (nvprof's `gld_efficiency` / 100). Above 1 where lanes share words (a broadcast moves
    /// fewer bytes than it requests; the table shows it capped at 100 % and marked). Absent
    /// where no transaction was issued (shared and constant memory).
    pub efficiency: Option<f64>,
    /// Shared memory: wavefronts, the conflict-free passes through the banks (Nsight
    /// Compute's `l1tex__data_pipe_lsu_wavefronts_mem_shared_…`). A conflict-free access
    /// needs `ideal_wavefronts` of them: one per 128 bytes a phase requests from 5.x on
    /// (a warp's `float` 1, `double` 2, `float4` 4). 0 for other spaces.
    pub wavefronts: u64,
    /// Active lanes whose address is not a multiple of the access width.
    pub misaligned_lanes: u64,
    /// The 32-byte sectors the bytes requested need at least: ⌈bytes requested ÷ 32⌉ per
    /// warp access, summed (Nsight Compute's ideal sectors). Global, local, texture, surface
    /// and distributed shared memory; 0 for shared and constant memory.
    pub ideal_sectors: u64,
    /// Sectors above `ideal_sectors`, summed over warp accesses where positive (Nsight
    /// Compute's excessive sectors).
    pub excess_sectors: u64,
    /// Shared (and distributed shared) memory: the wavefronts a conflict-free access of the
    /// same width by the same lanes needs, per the compute capability's bank rules
    /// (`warpscope_model::shared::ideal_wavefronts`); 0 for other spaces.
    pub ideal_wavefronts: u64,
    /// Wavefronts above `ideal_wavefronts`, summed over warp accesses where positive: the
    /// passes bank conflicts add (Nsight Compute's "bank conflicts").
    pub excess_wavefronts: u64,
    /// Shared memory's efficiency as a fraction: `ideal_wavefronts / wavefronts` (1 =
    /// conflict free, 1/n = an n-way conflict, above 1 where lanes share words). Absent
    /// without wavefronts.
    pub wavefront_efficiency: Option<f64>,
}

impl Counters {
    /// Whether nothing was counted (no execution and no request).
    pub fn is_empty(&self) -> bool {
        self.executions == 0 && self.requests == 0
    }

    /// Adds `other` counter by counter; the efficiencies are recomputed from the sums.
    pub fn add(&mut self, other: &Counters) {
        let sum = |f: fn(&Counters) -> u64| f(self) + f(other);
        *self = Cost {
            executions: sum(|c| c.executions),
            requests: sum(|c| c.requests),
            transactions: sum(|c| c.transactions),
            transaction_bytes: sum(|c| c.transaction_bytes),
            sectors: sum(|c| c.sectors),
            bytes_requested: sum(|c| c.bytes_requested),
            wavefronts: sum(|c| c.wavefronts),
            misaligned_lanes: sum(|c| c.misaligned_lanes),
            ideal_sectors: sum(|c| c.ideal_sectors),
            excess_sectors: sum(|c| c.excess_sectors),
            ideal_wavefronts: sum(|c| c.ideal_wavefronts),
            excess_wavefronts: sum(|c| c.excess_wavefronts),
        }
        .into();
    }

    /// The table's `eff` of a row of `space`, as a fraction, uncapped:
    /// [`Counters::wavefront_efficiency`] for shared memory, [`Counters::efficiency`]
    /// (bytes) for the spaces with sectors, `None` for constant memory.
    pub fn efficiency_in(&self, space: Space) -> Option<f64> {
        match space {
            Space::Shared => self.wavefront_efficiency,
            Space::Constant => None,
            _ => self.efficiency,
        }
    }

    /// The table's `excess` of a row of `space`: wavefronts above the ideal for shared
    /// memory, sectors above the ideal for the spaces with sectors, `None` for constant
    /// memory.
    pub fn excess_in(&self, space: Space) -> Option<u64> {
        match space {
            Space::Shared => Some(self.excess_wavefronts),
            Space::Constant => None,
            _ => Some(self.excess_sectors),
        }
    }
}

impl From<Cost> for Counters {
    fn from(c: Cost) -> Self {
        Counters {
            executions: c.executions,
            requests: c.requests,
            transactions: c.transactions,
            transaction_bytes: c.transaction_bytes,
            sectors: c.sectors,
            bytes_requested: c.bytes_requested,
            efficiency: c.efficiency(),
            wavefronts: c.wavefronts,
            misaligned_lanes: c.misaligned_lanes,
            ideal_sectors: c.ideal_sectors,
            excess_sectors: c.excess_sectors,
            ideal_wavefronts: c.ideal_wavefronts,
            excess_wavefronts: c.excess_wavefronts,
            wavefront_efficiency: c.wavefront_efficiency(),
        }
    }
}

/// One access site's counters summed over the launch for one compute capability.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct SiteReport {
    /// 1-based source line of the access.
    pub line: u32,
    /// 1-based source column of the access.
    pub column: u32,
    /// The access's source text (`a[i]`).
    pub text: String,
    /// The memory space.
    pub space: Space,
    /// Load, store or atomic.
    pub op: Op,
    /// Width of the access in bytes per lane (1, 2, 4, 8 or 16).
    pub width: u32,
    /// Loads through the read-only (texture) path: `__ldg`, `const __restrict__`.
    pub read_only: bool,
    /// The source file of the line: the analyzed file, a header it includes, or for a
    /// `.ptx` the CUDA source its `.loc` names. (Results of warpscope before 0.2 left it out
    /// for the analyzed file.)
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// The PTX instruction (compiled path only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ptx: Option<String>,
    /// Its 1-based line in the PTX file (compiled path only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ptx_line: Option<u32>,
    /// The counters, summed over the launch.
    #[serde(flatten)]
    pub counters: Counters,
}

impl SiteReport {
    fn new(s: &SiteInfo, space: Space, width: u32, c: Cost) -> Self {
        SiteReport {
            line: s.line,
            column: s.column,
            text: s.text.clone(),
            space,
            op: s.op,
            width,
            read_only: s.read_only && s.op == Op::Load,
            file: s.file.clone(),
            ptx: s.ptx.clone(),
            ptx_line: s.ptx_line,
            counters: c.into(),
        }
    }
}

#[derive(Default)]
struct Totals {
    b: [Cost; 14],
    /// Per memory space, in [`SPACES`]' order.
    spaces: [Cost; 7],
}

/// The memory spaces in the order of the per-space totals (the table's total rows).
pub const SPACES: [Space; 7] = [
    Space::Global,
    Space::Local,
    Space::Shared,
    Space::DistributedShared,
    Space::Constant,
    Space::Texture,
    Space::Surface,
];

impl Totals {
    fn add(&mut self, space: Space, op: Op, c: &Cost) {
        self.bucket(space, op).add(c);
        // An L2 prefetch moves nothing through L1: its own bucket only.
        if op == Op::Prefetch {
            return;
        }
        if let Some(i) = SPACES.iter().position(|&s| s == space) {
            self.spaces[i].add(c);
        }
    }

    fn bucket(&mut self, space: Space, op: Op) -> &mut Cost {
        let i = match (space, op) {
            (_, Op::Prefetch) => 13,
            (Space::Global, Op::Atomic) => 8,
            // Distributed shared memory is summed with shared memory in the totals; its
            // rows are its own.
            (Space::Shared | Space::DistributedShared, Op::Atomic) => 9,
            (Space::Global, _) => 0,
            (Space::Shared | Space::DistributedShared, _) => 2,
            (Space::Local, _) => 4,
            (Space::Constant, _) => 6,
            (Space::Texture, _) => 10,
            (Space::Surface, _) => 11,
        } + (op == Op::Store) as usize;
        &mut self.b[i]
    }
    fn finish(self) -> TotalsReport {
        let c = |i: usize| Counters::from(self.b[i]);
        TotalsReport {
            global_load: c(0),
            global_store: c(1),
            shared_load: c(2),
            shared_store: c(3),
            local_load: c(4),
            local_store: c(5),
            constant_load: c(6),
            global_atomic: c(8),
            shared_atomic: c(9),
            texture_load: c(10),
            surface_load: c(11),
            surface_store: c(12),
            global: self.spaces[0].into(),
            local: self.spaces[1].into(),
            shared: self.spaces[2].into(),
            distributed_shared: self.spaces[3].into(),
            constant: self.spaces[4].into(),
            texture: self.spaces[5].into(),
            surface: self.spaces[6].into(),
            global_prefetch: c(13),
        }
    }
}

/// Sums over every site of the launch: per memory space and direction (`global_load`, …),
/// and per memory space alone (`global`, `shared`, …), never across spaces.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct TotalsReport {
    /// Global loads (`ld.global`, `__ldg`).
    pub global_load: Counters,
    /// Global stores.
    pub global_store: Counters,
    /// Shared-memory loads.
    pub shared_load: Counters,
    /// Shared-memory stores.
    pub shared_store: Counters,
    /// Local-memory loads (per-thread arrays, spills).
    pub local_load: Counters,
    /// Local-memory stores.
    pub local_store: Counters,
    /// Constant-memory loads.
    pub constant_load: Counters,
    /// `atom`/`red` on global memory (Nsight Compute's `op_atom` plus `op_red`).
    pub global_atomic: Counters,
    /// `atom` on shared memory (`op_atom`).
    pub shared_atomic: Counters,
    /// Texture fetches (`tex`, `tld4`; Nsight Compute's `l1tex__t_*_pipe_tex_mem_texture`).
    /// Left out of JSON when the launch has none.
    #[serde(skip_serializing_if = "Counters::is_empty")]
    pub texture_load: Counters,
    /// Surface loads (`suld`; `l1tex__t_*_pipe_tex_mem_surface_op_ld`), left out when none.
    #[serde(skip_serializing_if = "Counters::is_empty")]
    pub surface_load: Counters,
    /// Surface stores (`sust`; `l1tex__t_*_pipe_tex_mem_surface_op_st`), left out when none.
    #[serde(skip_serializing_if = "Counters::is_empty")]
    pub surface_store: Counters,
    /// L2 prefetches (`cp.async.bulk.prefetch.L2`, `cp.async.bulk.prefetch.tensor`
    /// [PTX ISA §9.7.9.25.4.3, §9.7.9.25.5.3]): sectors read into L2, none into the SM, so
    /// in no per-space total below; left out when none.
    #[serde(skip_serializing_if = "Counters::is_empty")]
    pub global_prefetch: Counters,
    /// Global memory, loads, stores and atomics together: the table's `total global` row.
    /// Efficiencies are only ever of one space: bytes requested ÷ bytes moved here.
    pub global: Counters,
    /// Local memory, loads and stores together (`total local`).
    pub local: Counters,
    /// Shared memory of the block, loads, stores and atomics together (`total shared`):
    /// its efficiency is `wavefront_efficiency`, ideal ÷ actual wavefronts. Unlike
    /// `shared_load`/`shared_store`/`shared_atomic`, distributed shared memory is not in it.
    pub shared: Counters,
    /// Distributed shared memory (another block's of the cluster), left out when none.
    #[serde(skip_serializing_if = "Counters::is_empty")]
    pub distributed_shared: Counters,
    /// Constant memory (`total constant`).
    pub constant: Counters,
    /// Texture fetches (`total texture`), left out when none.
    #[serde(skip_serializing_if = "Counters::is_empty")]
    pub texture: Counters,
    /// Surface loads and stores (`total surface`), left out when none.
    #[serde(skip_serializing_if = "Counters::is_empty")]
    pub surface: Counters,
}

impl TotalsReport {
    /// The per-space totals in [`SPACES`]' order, each with its space.
    pub fn by_space(&self) -> [(Space, &Counters); 7] {
        [
            (Space::Global, &self.global),
            (Space::Local, &self.local),
            (Space::Shared, &self.shared),
            (Space::DistributedShared, &self.distributed_shared),
            (Space::Constant, &self.constant),
            (Space::Texture, &self.texture),
            (Space::Surface, &self.surface),
        ]
    }
}

/// The counters of every site for one compute capability.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct ArchReport {
    /// The compute capability, major.minor ("9.0").
    pub cc: String,
    /// The architecture's name ("Hopper").
    pub name: &'static str,
    /// One entry per row of the table, in its order (row *i* is `--site i`, 0-based).
    pub sites: Vec<SiteReport>,
    /// Sums per memory space and direction, and per memory space.
    pub totals: TotalsReport,
}

/// The result of `warpscope analyze`: one launch of one kernel, for several compute
/// capabilities.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct Analysis {
    /// The kernel's name, with template arguments for a template.
    pub kernel: String,
    /// The analyzed file (or `<expr>` for `-e`).
    pub source: String,
    /// Grid dimensions in blocks (x, y, z).
    pub grid: [u32; 3],
    /// Block dimensions in threads (x, y, z).
    pub block: [u32; 3],
    /// One report per compute capability, in the order asked for.
    pub architectures: Vec<ArchReport>,
    /// Per-thread arrays placed in local memory.
    pub local_arrays: Vec<LocalArrayInfo>,
    /// Notes on how the figures were obtained (front end, left-out capabilities, …).
    pub notes: Vec<String>,
    /// Computed advice for the rows that cost more than they must.
    pub advice: Vec<SiteAdvice>,
    /// Bytes below the request and predicted time on each GPU asked for (`--gpu`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub traffic: Vec<TrafficReport>,
    /// Registers, spills and static shared memory from `ptxas -v`, and the theoretical
    /// occupancy per CC (compiled path with the SASS check only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resources: Option<resources::KernelResources>,
    /// Bugs the run found in the kernel, as compute-sanitizer reports them (synccheck,
    /// racecheck, initcheck); empty (and left out of the JSON) when none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub findings: Vec<Finding>,
}

/// A bug the run found in the kernel, as compute-sanitizer would report it: one per site
/// (synccheck: per barrier instruction; racecheck: per pair of source lines and hazard;
/// initcheck: per source line), summed over the blocks and warps where it happened. The
/// fields after `warp` that a check does not give are left out of the JSON.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct Finding {
    /// The check, as compute-sanitizer names its tool: `synccheck` (a block barrier that a
    /// warp reaches with only part of its non-exited lanes: `__syncthreads()` in divergent
    /// code) [PTX ISA §9.7.13.1; CUDA C++ Programming Guide §10.6]; `racecheck` (two warps
    /// of a block access one shared byte, at least one writing, with no block barrier
    /// between them) [CUDA C++ Programming Guide "Synchronization Functions"; PTX ISA §8.2];
    /// `initcheck` (a read of shared memory that no instruction of the block has written).
    pub kind: String,
    /// The kernel.
    pub kernel: String,
    /// The source file of the site (the PTX file when no `.loc` names one); racecheck: of
    /// the later access of the two (the read of a RAW, the write of a WAR).
    pub file: String,
    /// 1-based line and column of the site in `file`.
    pub line: u32,
    pub column: u32,
    /// 1-based line of the site's instruction in the PTX.
    pub ptx_line: u32,
    /// The first block (in run order) where it happened (x, y, z).
    pub block: [u32; 3],
    /// The warp of that block (threads `32·warp … 32·warp + 31`) that ran the site.
    pub warp: u32,
    /// synccheck: lanes of that warp that reached the barrier (bit i: lane i).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lanes_arrived: Option<Lanes>,
    /// synccheck: non-exited lanes of that warp that did not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lanes_missing: Option<Lanes>,
    /// initcheck: lanes of that warp whose read touched an unwritten byte.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lanes: Option<Lanes>,
    /// racecheck: `RAW` (a write, then a read of its bytes by another warp), `WAR` (a read,
    /// then a write) or `WAW` (two writes), in the order the two warps would meet the
    /// accesses running in lockstep.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hazard: Option<String>,
    /// racecheck and initcheck: what the site did to shared memory: `read`, `write` or
    /// `atomic`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub access: Option<String>,
    /// racecheck: the other access of the race (the earlier one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub other: Option<OtherAccess>,
    /// racecheck and initcheck: the first shared byte found, as an offset in bytes from the
    /// start of the block's shared memory.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shared_offset: Option<u64>,
    /// Warp executions where it happened, over the run (the sampled blocks' with
    /// `--sample-blocks`): synccheck, with lanes missing; racecheck, accesses that closed a
    /// race (the later of the two in run order); initcheck, reads of an unwritten byte.
    pub warps: u64,
    /// Blocks where it happened at least once.
    pub blocks: u64,
    /// What happened and what to do, in words.
    pub message: String,
}

/// A lane mask (bit i: lane i), written as `"0x0000ffff"`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(transparent)]
pub struct Lanes(
    #[serde(with = "warpscope_model::mask")]
    #[schemars(with = "warpscope_model::mask::LaneMask")]
    pub u32,
);

/// The other access of a racecheck finding: where it is, the warp of the finding's block
/// that made it, and what it did.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct OtherAccess {
    /// Its source file, 1-based line and column (the PTX's when no `.loc` names one).
    pub file: String,
    pub line: u32,
    pub column: u32,
    /// 1-based line of its instruction in the PTX.
    pub ptx_line: u32,
    /// The warp of the finding's block that made it.
    pub warp: u32,
    /// `read`, `write` or `atomic`.
    pub access: String,
}

impl Finding {
    /// The text output's line: `warning: FILE:LINE:COL: KIND: MESSAGE`.
    pub fn warning_line(&self) -> String {
        format!(
            "warning: {}:{}:{}: {}: {}",
            self.file, self.line, self.column, self.kind, self.message
        )
    }
}

/// The version of the JSON that `--format json` writes, in its `schema_version` field.
/// Raised when a field is renamed, removed or changes meaning (adding one does not); the
/// schemas of each version are in `docs/schema/`.
pub const SCHEMA_VERSION: u32 = 1;

/// A command's JSON output: `schema_version` ([`SCHEMA_VERSION`]) and the output's own
/// fields, flattened beside it.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct Versioned<T> {
    /// The version of this JSON's schema (see `docs/schema/`).
    pub schema_version: u32,
    /// The output.
    #[serde(flatten)]
    pub output: T,
}

impl<T> Versioned<T> {
    /// `output` under the current [`SCHEMA_VERSION`].
    pub fn new(output: T) -> Self {
        Versioned {
            schema_version: SCHEMA_VERSION,
            output,
        }
    }
}

/// One row's traffic below the request on the `--gpu` GPU: the bytes its accesses asked of
/// each level when they ran (write-backs of dirty lines are counted per launch only).
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct SiteTraffic {
    /// 1-based source line of the access.
    pub line: u32,
    /// 1-based source column.
    pub column: u32,
    /// The access's source text.
    pub text: String,
    /// The memory space (global or local).
    pub space: Space,
    /// Load, store or atomic.
    pub op: Op,
    /// Bytes the SM's first-level cache served: the L1, or on 1.x–3.x the separate texture
    /// cache for texture fetches (and `__ldg` loads on 3.5/3.7); 0 where the access bypasses
    /// both.
    pub l1_bytes: u64,
    /// Bytes asked of L2 (32 per sector).
    pub l2_bytes: u64,
    /// DRAM bytes its L2 misses read (1.x: its transaction bytes).
    pub dram_bytes: u64,
}

/// The launch's traffic and predicted time on one GPU ([`warpscope_traffic`]).
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct TrafficReport {
    /// Where the rates came from: "datasheet" or the calibration profile's origin.
    pub profile: String,
    /// Achievable DRAM bandwidth the prediction used, GB/s (1e9 B/s).
    pub copy_gbps: f64,
    /// Launch totals, the bounds and the predicted time.
    pub launch: warpscope_traffic::Traffic,
    /// Effective bandwidth, GB/s: bytes requested by global/local loads and stores ÷ time.
    pub effective_gbps: f64,
    /// Per row of the analysis with global or local accesses.
    pub sites: Vec<SiteTraffic>,
}
