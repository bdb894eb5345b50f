//! warpscope's traffic model: below the request. Given the warp accesses of a kernel launch
//! in the order warps are scheduled, it predicts the bytes moved at each level — per-SM L1
//! (where the capability and flags cache the access), the texture cache (the L1 from 5.x
//! on, a cache per TPC or SM before), the GPU's shared L2, DRAM reads and writes — and a
//! time and effective bandwidth for a named GPU.
//!
//! - [`gpus`]: the GPU table (CC, SMs, L1/texture/L2 sizes, DRAM peak and bus width) with sources;
//!   [`gpus::lookup`] finds a GPU by name or alias.
//! - [`profile`]: the achievable rates and DRAM behaviour of a GPU ([`Profile`]): datasheet
//!   defaults, or a calibration read from JSON.
//! - [`model`]: the cache/DRAM simulation and the time bound ([`TrafficModel`], [`Traffic`]).
//!
//! The rules below the request come from `shared/reference/memory-model.md`, section "Below
//! the request: traffic and time" (measured on H100): DRAM reads in 64-byte pieces, partial
//! sector stores cause read-modify-write DRAM reads, and neighbour warps re-reading a line hit
//! in L1/L2 (why a misaligned unit stride is nearly free). Pure: no I/O.
//!
//! # Example
//!
//! Harris's copy `b[i] = a[i]` misaligned by one float, 2^20 floats in blocks of 256 threads,
//! on an H100 with its datasheet profile:
//!
//! ```
//! use warpscope_model::{Config, LaneForm, Op, Space, WarpAccess};
//! use warpscope_traffic::{gpus, Profile, TrafficModel};
//!
//! let gpu = gpus::lookup("h100-sxm").unwrap();
//! let profile = Profile::datasheet(gpu); // or Profile::from_json(&calibrated)?
//! let mut model = TrafficModel::new(gpu, gpu.arch(), &Config::default(), &profile);
//! let (a, b) = (0x7f00_0000_0000u64, 0x7f00_1000_0000u64);
//! let n = 1u64 << 20;
//! for block in 0..n / 256 {
//!     for op in [Op::Load, Op::Store] {
//!         for warp in 0..8u32 {
//!             let first = block * 256 + warp as u64 * 32 + 1; // offset 1
//!             let mut access = WarpAccess {
//!                 space: Space::Global,
//!                 op,
//!                 width: 4,
//!                 mask: 0,
//!                 addrs: [0; 32],
//!                 read_only: false,
//!                 lanes: LaneForm::Unknown,
//!             };
//!             for lane in 0..32 {
//!                 let i = first + lane as u64;
//!                 if i < n {
//!                     access.mask |= 1 << lane;
//!                     access.addrs[lane] = if op == Op::Load { a } else { b } + 4 * i;
//!                 }
//!             }
//!             model.add(block, warp, &access);
//!         }
//!     }
//! }
//! let t = model.finish();
//! // 5 sectors per request, yet DRAM moves (almost) only the useful bytes.
//! assert!(t.transaction_bytes as f64 > 1.2 * t.bytes_requested as f64);
//! assert!((t.dram_bytes() as f64) < 1.01 * t.bytes_requested as f64);
//! println!("{:.0} GB/s ({:?}-bound)", t.effective_gbps(t.bytes_requested), t.bounds.limit);
//! ```

mod cache;
pub mod gpus;
pub mod model;
pub mod profile;

#[cfg(test)]
mod experiments;

pub use gpus::{Gpu, MemoryType, TextureCache};
pub use model::{AccessTraffic, Bounds, Level, Limit, Traffic, TrafficModel};
pub use profile::Profile;

use std::fmt;

/// Errors of this crate; `Display` gives the sentence for the user.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Error {
    /// No GPU in the table has this name or alias; `known` lists "Name (alias, …); …".
    UnknownGpu {
        /// The name asked for (trimmed).
        name: String,
        /// Every known name with its aliases.
        known: String,
    },
    /// A profile that could not be read or is out of range (the message names the field).
    Profile(String),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::UnknownGpu { name, known } => {
                write!(f, "unknown GPU '{name}'; known: {known}")
            }
            Error::Profile(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for Error {}
