//! warpscope's SIMT executor: runs every warp of every block of a launch over PTX decoded once
//! into a compact instruction array, and hands each warp-level memory access to a sink.
//!
//! - [`Program::decode`] resolves one `.entry` (and the `.func`s it calls) from the PTX
//!   front end's syntax tree: registers to indices, labels to instruction indices, symbols to
//!   addresses, each memory instruction to a [`Site`] with its `.loc`.
//! - [`Program::run`] executes a [`Launch`]: per warp with an active mask and a
//!   reconvergence stack (divergent paths meet again at the branch's immediate
//!   post-dominator); predicated instructions; barriers by running the block's warps in turn;
//!   `call`/`ret`; warp-level `shfl`/`vote`/`match`/`redux`; loads, stores, atomics and
//!   `cp.async` in every state space, generic addresses resolved by window as the hardware
//!   does [PTX ISA §6.4.1]. Warp-uniform values are computed once, not per lane.

mod alu;
mod cfg;
mod dataflow;
pub mod decode;
mod decode_inst;
pub mod error;
mod exec;
pub mod fuzzing;
pub mod instr;
pub mod memory;
pub mod minifloat;
pub mod sass;
mod special;

pub use decode::{GlobalVar, Param, Program, TextureRef};
pub use error::RunawayLimit;
pub use error::{At, Error, Result};
pub use exec::{
    decode_tensor_map, replace_field, sample_blocks, tensormap_layout, texref_handle,
    texture_handle, AccessKind, Findings, Hazard, Im2col, InitFinding, Launch, Progress,
    RaceFinding, Swizzle, SyncFinding, TensorMap, TensorMapBinding, TextureBinding, WarpOrigin,
    DEFAULT_MAX_MEMORY, DEFAULT_MAX_STEPS, MAX_CLUSTER_BLOCKS, MIN_STEPS_FOR_TIME,
    PARAM_ADDRESS_BASE, PARAM_ADDRESS_SPACING, RANK_SHIFT, TEXTURE_BASE, TEXTURE_SPACING,
};
pub use instr::Site;
pub use memory::Alloc;
