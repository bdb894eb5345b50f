//! Computed advice: why a warp access costs more than it must, named in the CUDA guides'
//! terms, and the fix they teach, re-modelled per compute capability where the fix is a
//! layout change warpscope can model (padding, pitch, structure of arrays, vector width,
//! swapped indices).
//!
//! [`diagnose`] looks at one representative warp access of a site (the costliest one the
//! launch produced on that compute capability) and at what the front end knows about the
//! site ([`SiteFacts`]). It first reads how the warp's lanes cover memory ([`Layout`]: one
//! row, or several rows of a 2-D block narrower than a warp, e.g. 2 rows of 16 threads in a
//! 16×16 block), and says nothing when the access already costs what the same lanes cost
//! reading consecutive elements from an aligned start (for global and local memory: never
//! at 100 % efficiency). It returns [`Finding`]s; each carries the access as it would be
//! after the fix, so callers can cost it with [`warpscope_model::cost`] on every compute
//! capability (under [`Finding::fixed_config`] where the fix is a setting: 3.x's 8-byte
//! banks). Pure: no I/O.
//!
//! The findings come in the order an engineer tries the fixes: a setting before a rewrite
//! (3.x's bank mode), the rewrite that removes the cause (sequential addressing for a tree
//! reduction whose stride doubles every pass, rather than padding), then alternatives. What
//! one warp cannot show comes from the whole launch ([`LaneStrides`]): a column walk of a
//! 2-D array reads the other columns too, a 1-D strided read never does.
//!
//! Sources of the causes and fixes: Best Practices Guide (BPG), "Coalesced Access to Global
//! Memory" (misaligned and strided access, the coalesced transpose, the padded shared tile)
//! and "Shared Memory in Matrix Multiplication"; Programming Guide (PG), "Device Memory
//! Accesses" (size and alignment, built-in vector types, 2-D arrays and `cudaMallocPitch`),
//! "Shared Memory" (banks, strided access, padding) and "Constant Memory"; PG "Thread
//! Hierarchy" (threads numbered x fastest, so a 2-D block narrower than 32 threads puts
//! several rows in one warp); Harris, "How to Access Global Memory Efficiently" (offset and
//! stride) and "Optimizing Parallel Reduction in CUDA" (interleaved and sequential
//! addressing); CUDA C Programming Guide 5.0 (PG5) F.5.3 (3.x bank modes).

mod layout;
mod memory;
mod shared;
mod strides;

pub use layout::Layout;
pub use strides::LaneStrides;

use schemars::JsonSchema;
use serde::Serialize;
use warpscope_model::arch::Family;
use warpscope_model::{cost, Arch, Config, Cost, LaneForm, Op, Space, WarpAccess};

/// What the front end knows about a site besides the one warp access diagnosed.
#[derive(Clone, Debug, Default)]
pub struct SiteFacts<'a> {
    /// The access's source text, e.g. `p[i].x` or `t[threadIdx.x][threadIdx.y]` (on the
    /// compiled path, the whole source line).
    pub text: &'a str,
    /// Distinct values of (first active lane's address mod 128) over the site's warps, as a
    /// bit set (bit *k* = some warp started *k* bytes into a 128-byte line). Tells a constant
    /// misalignment (one bit) from rows of varying alignment (several bits: a pitch problem).
    pub start_offsets: u128,
    /// The lane strides the site's warps showed over the launch: tells a 1-D strided read
    /// from a column walk of a 2-D array, and finds the doubling stride of an interleaved
    /// tree reduction. Empty (the default) when unknown.
    pub strides: LaneStrides,
}

/// The cause of a cost above the ideal, in the guides' terms.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Cause {
    /// Consecutive lanes read consecutive elements, but the warp's range starts
    /// `offset_bytes` into a 128-byte line [BPG "A Sequential but Misaligned Access
    /// Pattern"; Harris, offset].
    MisalignedStart { offset_bytes: u64 },
    /// Rows of a 2-D array start at different alignments because the row width is not a
    /// multiple of 32 elements [PG "Two-Dimensional Arrays", `cudaMallocPitch`].
    RowPitch,
    /// `elements` elements (`bytes` bytes) between consecutive lanes [BPG "Strided
    /// Accesses"; Harris, stride].
    Stride { elements: u64, bytes: u64 },
    /// Each lane reads one field of a `struct_bytes`-byte structure: an array of structures.
    ArrayOfStructures { struct_bytes: u64 },
    /// Consecutive lanes walk down a column of a row-major 2-D array (`row_bytes` apart);
    /// with a block narrower than a warp, each warp walks down several neighbouring columns
    /// [BPG "Shared Memory in Matrix Multiplication", the transpose].
    ColumnWalk { row_bytes: u64 },
    /// Each lane reads its own `elements` neighbouring elements one at a time where one
    /// `vector_bytes`-byte vector load would do [PG "Size and Alignment Requirement",
    /// built-in vector types].
    VectorWidth { elements: u64, vector_bytes: u64 },
    /// Each warp covers `rows` rows of `row_lanes` threads (a 2-D block narrower than a
    /// warp), and the pieces of rows are smaller than the transactions that fetch them
    /// (128-byte L1 lines on 2.x, half-warps on 1.x, 32-byte sectors for rows under 32
    /// bytes) [PG "Thread Hierarchy"; BPG "Coalesced Access to Global Memory"].
    NarrowRows { rows: u32, row_lanes: u32 },
    /// Each lane moves its `struct_bytes`-byte element (e.g. a 12-byte `float3`) in several
    /// narrow accesses because no single access moves that size; padded to `padded_bytes`
    /// (a built-in vector type such as `float4`) one access per element would do [PG "Size
    /// and Alignment Requirement", built-in vector types].
    PadStructure {
        struct_bytes: u64,
        padded_bytes: u64,
    },
    /// Lanes scattered over memory with no constant stride, or a stride that is not a
    /// positive multiple of the width.
    Scattered,
    /// Shared memory: a stride of `words` 4-byte words (between the lanes of a row, or the
    /// row pitch when each warp covers several rows) shares the factor `common_factor` with
    /// the bank count, so lanes pile onto `banks / common_factor` banks; the fix is padding
    /// each row [PG "Shared Memory", strided access; BPG, the padded shared tile].
    BankStride {
        words: u64,
        common_factor: u64,
        banks: u64,
    },
    /// 1.x: 8- or 16-bit shared-memory accesses; lanes on different bytes of one 32-bit
    /// word are in the same bank [PG5 F.3.3 "8-Bit and 16-Bit Access"].
    NarrowSharedOn1x { width: u32 },
    /// Shared memory: conflicts with no constant stride.
    BankConflicts,
    /// Shared memory: lanes `elements` elements (`bytes` bytes, a power of two) apart at a
    /// site whose stride doubles from one pass of a loop to the next: the interleaved
    /// addressing of a tree reduction (`index = 2*s*tid`), whose fix is sequential
    /// addressing, not padding [Harris, "Optimizing Parallel Reduction in CUDA", kernels 2
    /// and 3; PG "Shared Memory"].
    InterleavedReduction { elements: u64, bytes: u64 },
    /// 3.x: `width`-byte words (8 or 16) in the default 4-byte bank mode, which the 8-byte
    /// mode (`cudaDeviceSetSharedMemConfig(cudaSharedMemBankSizeEightByte)`) serves in
    /// fewer wavefronts [PG5 F.5.3].
    EightByteBanks { width: u32 },
    /// Constant memory: the warp's lanes read `addresses` distinct addresses, served one
    /// after the other [PG "Constant Memory"].
    DivergentConstant { addresses: u64 },
    /// A global load walking a 2-D array badly (a column walk, rows of a 2-D block) whose
    /// footprint a 2-D texture (a CUDA array, block-linear) fetches in fewer 32-byte
    /// sectors: `global_sectors` in `global_requests` requests as it is, `texture_sectors`
    /// in `texture_requests` requests through the texture (the texture model of
    /// `warpscope_model::texture`, measured on H100) [PG "Texture and Surface Memory": the
    /// texture cache is optimized for 2-D spatial locality].
    TexturePath {
        global_requests: u64,
        global_sectors: u64,
        texture_requests: u64,
        texture_sectors: u64,
    },
}

/// One diagnosis for one compute capability.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Finding {
    pub cause: Cause,
    /// Why, in words, from what the model saw.
    pub why: String,
    /// The fix the guides teach.
    pub fix: String,
    /// The access after the fix, when the fix is a layout change warpscope can model.
    #[serde(skip)]
    pub fixed: Option<WarpAccess>,
    /// The configuration [`Finding::fixed`] is costed under when the fix changes it (the
    /// 3.x bank mode); `None`: the one diagnosed under.
    #[serde(skip)]
    pub fixed_config: Option<Config>,
}

impl Cause {
    /// The cause's name in the guides' terms, for people (the JSON carries the `kind` tag).
    pub fn name(&self) -> &'static str {
        match self {
            Cause::MisalignedStart { .. } => "misaligned start",
            Cause::RowPitch => "row width not a multiple of 32 elements (pitch)",
            Cause::Stride { .. } => "stride between lanes",
            Cause::ArrayOfStructures { .. } => "array of structures",
            Cause::ColumnWalk { .. } => "column-wise walk of a row-major array",
            Cause::VectorWidth { .. } => "narrow loads where a vector type would do",
            Cause::NarrowRows { .. } => "rows of a block narrower than a warp",
            Cause::PadStructure { .. } => "structure size that no single access moves",
            Cause::Scattered => "scattered addresses",
            Cause::BankStride { .. } => "bank conflict: stride shares a factor with the bank count",
            Cause::NarrowSharedOn1x { .. } => "8/16-bit shared-memory access on 1.x",
            Cause::BankConflicts => "bank conflicts",
            Cause::InterleavedReduction { .. } => {
                "bank conflicts of a tree reduction's interleaved addressing"
            }
            Cause::EightByteBanks { .. } => "8-byte words in 3.x's 4-byte bank mode",
            Cause::DivergentConstant { .. } => "divergent constant addresses",
            Cause::TexturePath { .. } => "2-D access a texture fetches in fewer sectors",
        }
    }
}

/// The active lanes' addresses as (first lane, first address, stride in bytes) when they are
/// affine in the lane index (`addr = first + (lane − lane0)·stride`, exactly: see
/// [`warpscope_model::LaneForm`]), else `None`. A warp with one active lane has stride 0.
pub fn affine(a: &WarpAccess) -> Option<(usize, u64, i64)> {
    // The form carried with the access (worked out from the lanes when it is not).
    let warpscope_model::LaneForm::Affine { stride } = a.lane_form() else {
        return None;
    };
    let l0 = a.mask.trailing_zeros() as usize;
    Some((l0, a.addrs[l0], stride))
}

/// `a` with each active lane *l* moved to `base + (l − l0)·stride`, width `width`.
fn relaid(a: &WarpAccess, l0: usize, base: u64, stride: u64, width: u32) -> WarpAccess {
    let mut b = *a;
    b.width = width;
    b.lanes = LaneForm::Unknown;
    for (l, x) in b.addrs.iter_mut().enumerate() {
        *x = base.wrapping_add((l as u64).wrapping_sub(l0 as u64).wrapping_mul(stride));
    }
    b
}

/// "1 element", "3 elements".
fn plural(n: u64, what: &str) -> String {
    if n == 1 {
        format!("1 {what}")
    } else {
        format!("{n} {what}s")
    }
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// Whether the text reads a field of a structure element (`p[i].x`, `p[i]->x`).
fn reads_field(text: &str) -> bool {
    text.rfind(']')
        .map(|i| {
            let rest = &text[i + 1..];
            rest.starts_with('.') || rest.starts_with("->")
        })
        .unwrap_or(false)
}

/// Whether the text indexes in two dimensions (`a[y][x]`) or multiplies in its index
/// (`a[y * width + x]`).
fn two_dimensional(text: &str) -> bool {
    text.contains("][") || text.contains('*')
}

/// What the access costs in the units that matter for its space: transaction bytes (global,
/// local, texture, surface), wavefronts (shared), requests (constant).
pub fn weight(c: &Cost, space: Space) -> u64 {
    match space {
        Space::Global | Space::Local | Space::Texture | Space::Surface => c.transaction_bytes,
        Space::Shared | Space::DistributedShared => c.wavefronts,
        Space::Constant => c.requests,
    }
}

/// The yardstick of every diagnosis: `a` with each active lane *l* on element *l* − *l0*
/// after a 128-byte boundary (*l0*: its first active lane), i.e. the same lanes and width
/// reading consecutive elements from an aligned start. An access costing no more gets no
/// advice.
pub fn contiguous(a: &WarpAccess) -> WarpAccess {
    match a.active().next() {
        Some((l0, first)) => relaid(
            a,
            l0,
            first - first % 128,
            u64::from(a.width.max(1)),
            a.width,
        ),
        None => *a,
    }
}

/// Diagnoses `a` (one warp access of the site described by `facts`) on `arch` under
/// `config`. Returns nothing when the access already costs what [`contiguous`] costs
/// (global and local memory: no more transaction bytes, and never at 100 % efficiency;
/// shared: no more wavefronts; constant: one address per request group). The findings name
/// the cause from the warp's [`Layout`]; [`Finding::fixed`] is the access after the fix when
/// it can be modelled. Never suggests the read-only path (`__ldg`) for a store or atomic.
pub fn diagnose(facts: &SiteFacts, arch: &Arch, config: &Config, a: &WarpAccess) -> Vec<Finding> {
    if a.mask == 0 {
        return Vec::new();
    }
    match a.space {
        Space::Global | Space::Local => memory::memory(facts, arch, config, a),
        Space::Shared => shared::shared(facts, arch, config, a),
        Space::Constant => constant(arch, a),
        // One request of a texture fetch: no advice yet (the fetch's own sectors are its
        // layout's; see warpscope_model::texture).
        Space::Texture | Space::Surface => Vec::new(),
        // Another block's banks: the same rules as the block's own shared memory.
        Space::DistributedShared => shared::shared(facts, arch, config, a),
    }
}

/// Built-in vector types of `d` bytes with `w`-byte components [PG "Built-in Vector Types"].
fn vector_names(w: u64, d: u64) -> &'static str {
    match (w, d) {
        (4, 8) => "float2/int2",
        (4, 16) => "float4/int4",
        (8, 16) => "double2/longlong2",
        (2, 8) => "short4",
        (1, 4) => "uchar4/char4",
        (2, 4) => "short2",
        (1, 8) => "char8 is not built in: use int2",
        (2, 16) => "short8 is not built in: use int4",
        _ => "int2/int4",
    }
}

/// "read" or "write", as the access does.
fn verb(op: Op) -> &'static str {
    if op == Op::Load {
        "read"
    } else {
        "write"
    }
}

/// `text` (a finding's `why` or `fix`) worded for loads and stores alike, for one advice
/// over several accesses of a line that read and write (`a[i] = a[i] + 1`): the verbs the
/// findings use for one direction ("read", "writes", "written", "load", "store") become
/// "access", "accesses", "accessed", "load or store"; hyphenated words ("read-only") stay.
pub fn neutral_verbs(text: &str) -> String {
    fn neutral(word: &str) -> &str {
        match word {
            "read" | "write" => "access",
            "reads" | "writes" => "accesses",
            "written" => "accessed",
            "load" | "store" => "load or store",
            _ => word,
        }
    }
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len() + 16);
    let mut i = 0;
    while i < chars.len() {
        if !chars[i].is_ascii_alphabetic() {
            out.push(chars[i]);
            i += 1;
            continue;
        }
        let start = i;
        while i < chars.len() && chars[i].is_ascii_alphabetic() {
            i += 1;
        }
        let word: String = chars[start..i].iter().collect();
        let hyphenated = (start > 0 && chars[start - 1] == '-') || chars.get(i) == Some(&'-');
        out.push_str(if hyphenated { &word } else { neutral(&word) });
    }
    out
}

fn constant(arch: &Arch, a: &WarpAccess) -> Vec<Finding> {
    let mut addrs: Vec<u64> = a.active().map(|(_, x)| x).collect();
    addrs.sort_unstable();
    addrs.dedup();
    let per_group = cost(arch, &Config::default(), a).requests;
    let groups = if matches!(arch.family, Family::Cc1Strict | Family::Cc1Segment) {
        u64::from(a.mask & 0xFFFF != 0) + u64::from(a.mask >> 16 != 0)
    } else {
        1
    };
    if per_group <= groups {
        return Vec::new();
    }
    let mut fixed = *a;
    fixed.space = Space::Global;
    fixed.read_only = true;
    fixed.op = Op::Load;
    vec![Finding {
        cause: Cause::DivergentConstant {
            addresses: addrs.len() as u64,
        },
        why: format!(
            "the lanes read {} different constant addresses; constant memory serves one \
             address at a time, so the request splits into {per_group}",
            addrs.len()
        ),
        fix: "keep constant memory for values every lane of a warp reads at once; for data \
              indexed per thread use a global array read with __ldg (read-only cache) or \
              staged in shared memory — the figures after the fix are for that global load"
            .into(),
        fixed: Some(fixed),
        fixed_config: None,
    }]
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod sweep_tests;
