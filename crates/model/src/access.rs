//! One warp-level memory access: what a front end hands to the model.

use schemars::JsonSchema;
use serde::Serialize;

use crate::lanes::LaneForm;

/// Threads in a warp on every compute capability [PG].
pub const WARP_SIZE: usize = 32;

/// The state space an access goes to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Space {
    /// Device memory through `ld.global`/`st.global` (also `__ldg`).
    Global,
    /// On-chip shared memory of the block; addresses are byte offsets in the block's window.
    Shared,
    /// Per-thread local memory; addresses are already interleaved by the front end
    /// (word *w* of thread *t* at `4·(w·threads + t)`, [PG] "Local Memory").
    Local,
    /// `__constant__` memory; addresses are byte offsets in the constant bank.
    Constant,
    /// A texture fetch (`tex`, `tld4`): one [`WarpAccess`] per request, whose active slots are
    /// the texels it reads (byte addresses in the texture's layout, `width` = texel bytes);
    /// see [`crate::texture`].
    Texture,
    /// A surface load or store (`suld`, `sust`): one [`WarpAccess`] per request, as
    /// [`Space::Texture`].
    Surface,
    /// Distributed shared memory (DSMEM, CC 9.0+): another block's shared memory in the
    /// same thread-block cluster, reached through a `shared::cluster` address (`mapa`,
    /// `cluster.map_shared_rank`) [PTX ISA §5.1.7 "Shared State Space", PG "Distributed
    /// Shared Memory"]. Addresses are byte offsets in the *target* block's window; costed
    /// by the 32-byte sectors the request moves over the SM-to-SM network and the
    /// wavefronts of 4 128-byte lines the requesting SM's L1TEX outputs, whatever the
    /// target's banks (measured on H100; see [`crate::cost`]).
    /// An access through a `shared::cluster` address to the block's own shared memory is
    /// [`Space::Shared`].
    #[serde(rename = "distributed_shared")]
    DistributedShared,
}

impl Space {
    /// Whether accesses of this space are split into one [`WarpAccess`] per request
    /// (texture and surface accesses; see [`WarpAccess::read_only`]).
    pub fn per_request(self) -> bool {
        matches!(self, Space::Texture | Space::Surface)
    }
}

/// Load, store, atomic or L2 prefetch.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Op {
    /// A load (`ld`).
    Load,
    /// A store (`st`).
    Store,
    /// `atom`/`red` (read-modify-write at L2 for global memory, in the shared-memory unit for
    /// shared): coalesced into sectors and split into bank passes as a store (measured on
    /// H100: a histogram's `RED` per bin and `ATOMS` per element, `tests/h100_compiled.rs`).
    Atomic,
    /// An L2 prefetch (`cp.async.bulk.prefetch.L2`, `cp.async.bulk.prefetch.tensor.*.L2`
    /// [PTX ISA §9.7.9.25.4.3, §9.7.9.25.5.3]): global memory read into L2 only. Its sectors
    /// are L2's (measured on H100 in `lts__t_sectors_srcunit_tex`, under no `op_read`); it
    /// moves nothing into L1 or shared memory (`tests/data/h100/prefetch/`).
    Prefetch,
}

impl Op {
    /// Whether the access writes memory (a store or an atomic).
    pub fn writes(self) -> bool {
        matches!(self, Op::Store | Op::Atomic)
    }
}

/// Global addresses from here on stand for the sectors the TMA counts for the parts of a box
/// that lie outside its tensor (out-of-bound elements, filled, not read [PTX ISA §5.5
/// "Tensors", "Bounding box"; §9.7.9.25.5.1 cp.async.bulk.tensor]): each part has a run of
/// sectors of its own here, so that it is counted as the H100 counts it
/// (`tests/data/h100/prefetch/probe-ncu.csv`), and the traffic model moves nothing for them.
pub const TMA_FILL_BASE: u64 = 0x0E00_0000_0000_0000;

/// Whether global address `a` is one of the TMA's fill sectors ([`TMA_FILL_BASE`]; PTX ISA
/// §9.7.9.25.5.1).
pub fn is_tma_fill(a: u64) -> bool {
    (TMA_FILL_BASE..TMA_FILL_BASE + (1 << 56)).contains(&a)
}

/// One dynamic execution of one memory instruction by one warp.
///
/// Shape: 32 lane addresses (bytes), of which only the lanes set in `mask` are active;
/// inactive lanes' addresses are ignored. `width` is the bytes one lane moves: 1, 2, 4, 8
/// or 16. Wider values (a 32-byte struct, say) are split by the front end into several
/// accesses, as the compiler splits them into several instructions [PG "Size and Alignment
/// Requirement"].
///
/// Equality compares what the access is (space, op, width, mask, read-only path and the
/// active and inactive lanes' addresses), not whether [`WarpAccess::lanes`] was worked out.
#[derive(Clone, Copy, Debug)]
pub struct WarpAccess {
    pub space: Space,
    pub op: Op,
    /// Bytes per lane: 1, 2, 4, 8 or 16.
    pub width: u32,
    /// Bit *l* set when lane *l* is active.
    pub mask: u32,
    /// Byte address of each lane.
    pub addrs: [u64; WARP_SIZE],
    /// Global: load through the read-only (texture) path (`__ldg` or a `const __restrict__`
    /// pointer). Texture and surface ([`Space::per_request`]), and the 4-byte words of a wide
    /// local access: set on every request of a warp instruction after its first (a further
    /// request, not a further execution).
    pub read_only: bool,
    /// The form of the active lanes' addresses, when worked out where they were made
    /// ([`LaneForm::of`]); [`LaneForm::Unknown`] otherwise. Whatever changes `addrs` or
    /// `mask` after it is set must set it again or to `Unknown` (see
    /// [`WarpAccess::settle_lanes`], [`WarpAccess::shift_active`]); read it through
    /// [`WarpAccess::lane_form`].
    pub lanes: LaneForm,
}

impl PartialEq for WarpAccess {
    fn eq(&self, other: &Self) -> bool {
        self.space == other.space
            && self.op == other.op
            && self.width == other.width
            && self.mask == other.mask
            && self.addrs == other.addrs
            && self.read_only == other.read_only
    }
}

impl Eq for WarpAccess {}

impl WarpAccess {
    /// Iterator over (lane, address) of the active lanes, lowest lane first.
    pub fn active(&self) -> impl Iterator<Item = (usize, u64)> + '_ {
        (0..WARP_SIZE)
            .filter(move |&l| self.mask & (1 << l) != 0)
            .map(move |l| (l, self.addrs[l]))
    }

    /// Number of active lanes.
    pub fn active_lanes(&self) -> u32 {
        self.mask.count_ones()
    }

    /// Whether this access starts a warp instruction's execution: false for the further
    /// requests of a texture fetch or surface access and the further words of a wide local
    /// access (see [`WarpAccess::read_only`]).
    pub fn starts_execution(&self) -> bool {
        !(self.read_only && self.space != Space::Global)
    }
}
