//! warpscope's memory model: the per-compute-capability rules that turn the memory access of
//! one warp (the addresses of its active lanes) into requests, transactions, sectors and
//! shared-memory wavefronts.
//!
//! Pure and I/O-free. The specification is `shared/reference/memory-model.md`; every rule
//! names its source there ([PG], [PG5], [BPG], [HB] or measured on H100).
//!
//! Layout: [`access`] (what the front ends hand over), [`lanes`] (the form of its lanes'
//! addresses, found once per access), [`arch`] (the table of compute capabilities),
//! [`global`], [`shared`], [`constant`], [`texture`] (one module per memory space), and
//! [`cost`] (the counters and the entry point [`cost::cost`]); [`occupancy`] (theoretical
//! occupancy per CC, by the Occupancy Calculator's rules).

pub mod access;
pub mod arch;
pub mod constant;
pub mod cost;
pub mod detail;
pub mod global;
pub mod lanes;
pub mod mask;
pub mod occupancy;
pub mod shared;
pub mod texture;

pub use access::{is_tma_fill, Op, Space, WarpAccess, TMA_FILL_BASE, WARP_SIZE};
pub use arch::{Arch, ComputeCapability, LaunchLimits};
pub use cost::{cost, Config, Cost, L1Mode, SmemBankMode};
pub use lanes::{Bounds, LaneForm};
