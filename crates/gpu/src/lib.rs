//! warpscope on a real GPU: compile a kernel's `.cu` source with NVRTC for the present
//! device, run and time it, profile it under Nsight Compute, calibrate a traffic profile.
//!
//! - [`load`]: finds the CUDA driver and NVRTC at run time (cudarc's dynamic loading, turned
//!   into errors instead of panics): the crate builds, and the binary starts, without CUDA.
//! - [`device`]: the GPU through the driver API — memory, modules, launches with raw
//!   parameter bytes, CUDA-event timing, faults and time limits as errors.
//! - [`nvrtc`]: compiling for the device's own `sm_XY`, templates instantiated by name.
//! - [`plan`]: a launch as warpscope's interpreter takes it → real parameter bytes and
//!   allocation sizes (from `--alloc` or the byte range the interpreter saw touched).
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
pub mod nvrtc;
pub mod plan;
pub mod run;
pub mod stats;
pub mod texture;

pub use bench::{calibrate, measure_copy_sweep, CopyKind, Elem};
pub use device::{device_info, Buffer, Device, DeviceInfo, Function, Launch, Module};
pub use error::{Error, Result};
pub use plan::{Init, InitRule, LaunchSpec, Plan};
