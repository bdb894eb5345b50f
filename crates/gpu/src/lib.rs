//! warpscope on a real GPU: compile a kernel's `.cu` source for the present device (with
//! `warpscope_toolkit::nvrtc`), run and time it, profile it under Nsight Compute, calibrate a
//! traffic profile.
//!
//! - [`load`]: finds the CUDA driver at run time (cudarc's dynamic loading, turned into
//!   errors instead of panics): the crate builds, and the binary starts, without CUDA.
//! - [`device`]: the GPU through the driver API — memory, modules, launches with raw
//!   parameter bytes, CUDA-event timing, faults and time limits as errors.
//! - [`plan`]: a launch as warpscope's front ends take it → real parameter bytes and
//!   allocation sizes (from `--alloc` or the byte range the executor saw touched).
//! - [`run`]: compile + plan + allocate + launch/time: `warpscope run`.
//! - [`texture`]: texture and surface objects made from `--texture` descriptions.
//! - [`stats`]: medians and spreads of timings.
//! - [`ncu`]: Nsight Compute — finding it, its CSV, the agreement rule of `warpscope verify`.
//! - [`bench`](mod@bench): built-in microbenchmarks: `warpscope calibrate` and [`measure_copy_sweep`].
//!
//! Units throughout: bytes; seconds; GB/s = 1e9 bytes/s.

pub mod bench;
pub mod device;
pub mod error;
pub mod load;
pub mod ncu;
pub mod plan;
pub mod run;
pub mod stats;
pub mod texture;

pub use bench::{calibrate, measure_copy_sweep, CopyKind, Elem};
pub use device::{device_info, Buffer, Device, DeviceInfo, Function, Launch, Module};
pub use error::{Error, Result};
pub use plan::{Init, InitRule, LaunchSpec, Plan};
