//! What the traffic model needs to know about one GPU beyond its datasheet: achievable
//! bandwidths, DRAM access granularity, the cost of partial writes, the loaded memory
//! latency. [`Profile::datasheet`] gives defaults from the [`Gpu`] table; `warpscope
//! calibrate` (not in this crate) measures a GPU and writes a profile as JSON
//! ([`Profile::to_json`]) that replaces them ([`Profile::from_json`]).
//!
//! Units: GB/s = 1e9 bytes/s; bytes; nanoseconds.
//!
//! What calibration should measure, field by field (each field's doc says it again):
//!
//! | field | kernel that measures it |
//! | --- | --- |
//! | `copy_gbps` | a float4 grid-stride copy of a large array (bytes read + written / s) |
//! | `latency_ns` | a one-float-per-thread copy (`b[i] = a[i]`), see [`Profile::latency_from_scalar_copy`] |
//! | `dram_read_granularity_bytes` | DRAM bytes read by a stride-16-float load (64 on H100) |
//! | `partial_write_read_bytes` | DRAM bytes read per sector by a stride-8-float store (32 on H100) |
//! | `dram_min_bytes_per_line` | a stride-32-float copy, see [`Profile::min_line_bytes_from_sparse_copy`] |
//! | `l2_gbps` | re-reading an array that fits in L2 |
//! | `l1_gbps` | re-reading an array that fits in L1 |

use crate::gpus::Gpu;
use crate::Error;
use serde::{Deserialize, Serialize};

/// Fraction of the datasheet peak DRAM bandwidth a streaming copy achieves, used when no
/// calibration exists: 0.85. Source: measured on H100 — a float4 grid-stride copy reached
/// 2854 GB/s (ground-truth/h100/copy-bandwidth.csv, header) of the 3350 GB/s datasheet peak,
/// 0.852. Assumed for every other GPU (GDDR and HBM parts typically sustain 75–90 % of peak).
pub const DATASHEET_COPY_EFFICIENCY: f64 = 0.85;

/// Default loaded memory latency, ns: the time one full-occupancy round of warps takes for
/// one dependent global load. Measured on H100: a one-float-per-thread copy of 2^28 floats
/// ran at 2393.2 GB/s (copy-bandwidth.csv, offset 0), which
/// [`Profile::latency_from_scalar_copy`] turns into 904 ns (132 SMs × 64 resident warps ×
/// 32 threads × 8 bytes per round). Assumed, rounded to 900, for every other GPU.
pub const DEFAULT_LATENCY_NS: f64 = 900.0;

/// Default L2 bandwidth as a multiple of the datasheet DRAM peak: 2.5. *Assumed*: NVIDIA's
/// datasheets do not state L2 bandwidth; published microbenchmarks put it at 2–3× DRAM.
/// Calibration replaces it. It only matters for kernels whose L2 traffic is several times
/// their DRAM traffic.
pub const DEFAULT_L2_OVER_DRAM: f64 = 2.5;

/// A GPU's calibration profile: the achievable rates and DRAM behaviour the time model uses.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Profile {
    /// The GPU's table name ([`Gpu::name`]).
    pub gpu: String,
    /// Where the numbers come from: "datasheet defaults" or what calibration says of itself
    /// (device name, driver, date).
    pub origin: String,
    /// Achievable DRAM bandwidth, GB/s of bytes read + written: a float4 grid-stride
    /// device-to-device copy of a large array (2854 on H100). The time model divides DRAM
    /// bytes by it. Default: [`DATASHEET_COPY_EFFICIENCY`] × datasheet peak.
    pub copy_gbps: f64,
    /// Bytes DRAM delivers for one L2 sector miss: 32, 64 or 128. Measured on H100: 64 (a warp
    /// reading one float every 64 bytes or more moves 64 DRAM bytes per lane; reference,
    /// "Below the request"); the CUDA limit `cudaLimitMaxL2FetchGranularity` (0–128 bytes) is
    /// the same knob. Default: 64 from CC 7.0 on (*assumed* from H100), 32 before.
    pub dram_read_granularity_bytes: u32,
    /// DRAM bytes read (read-modify-write) when L2 writes back a sector that stores covered
    /// only in part: 0 (no RMW) to 128. Measured on H100: a stride-2 float store read 27 MB
    /// from DRAM for 16 MB written, i.e. each half-written sector was read (32 bytes; the
    /// stride-16 copy time rules out 64). Default: 32 on every cached GPU (*assumed* beyond
    /// H100: GDDR parts with write masks may need none).
    pub partial_write_read_bytes: u32,
    /// Least DRAM time, in bytes at `copy_gbps`, that one 128-byte line costs each time it is
    /// brought into L2 and written back (its residency), however few bytes move: sparse
    /// accesses waste DRAM row and command bandwidth. 0 = off (the default: no datasheet gives
    /// it). Calibration: [`Profile::min_line_bytes_from_sparse_copy`] (86 on H100).
    pub dram_min_bytes_per_line: u32,
    /// Achievable L2 bandwidth, GB/s of sector traffic (reads + writes). Default:
    /// [`DEFAULT_L2_OVER_DRAM`] × datasheet DRAM peak.
    pub l2_gbps: f64,
    /// Achievable L1 bandwidth summed over all SMs, GB/s. Default: SMs × bytes per clock ×
    /// boost clock, with 64 B/clk per SM on 2.x/3.x and 128 B/clk (one 128-byte line) from 5.0
    /// on (*assumed*); 0 on 1.x, which has no L1 (0 = no L1 bound).
    pub l1_gbps: f64,
    /// Loaded memory latency, ns: time for one full-occupancy round of warps to complete one
    /// dependent global load. Default: [`DEFAULT_LATENCY_NS`] (from H100). Calibration:
    /// [`Profile::latency_from_scalar_copy`].
    pub latency_ns: f64,
}

impl Profile {
    /// The defaults used when `gpu` has not been calibrated; every field's doc says where its
    /// default comes from.
    pub fn datasheet(gpu: &Gpu) -> Profile {
        let l1_bytes_per_clock = match gpu.cc.major {
            1 => 0.0,
            2 | 3 => 64.0,
            _ => 128.0,
        };
        Profile {
            gpu: gpu.name.to_string(),
            origin: "datasheet defaults".to_string(),
            copy_gbps: DATASHEET_COPY_EFFICIENCY * gpu.dram_gbps,
            dram_read_granularity_bytes: if gpu.cc.major >= 7 { 64 } else { 32 },
            partial_write_read_bytes: if gpu.cc.major >= 2 { 32 } else { 0 },
            dram_min_bytes_per_line: 0,
            l2_gbps: DEFAULT_L2_OVER_DRAM * gpu.dram_gbps,
            l1_gbps: gpu.sms as f64 * l1_bytes_per_clock * gpu.clock_mhz as f64 * 1e6 / 1e9,
            latency_ns: DEFAULT_LATENCY_NS,
        }
    }

    /// Reads a profile from JSON (the object [`Profile::to_json`] writes; every field
    /// required, no unknown field) and checks it.
    ///
    /// Errors: [`Error::Profile`] for malformed JSON, a missing or unknown field, or a value
    /// out of range (see [`Profile::check`]).
    pub fn from_json(s: &str) -> Result<Profile, Error> {
        let p: Profile =
            serde_json::from_str(s).map_err(|e| Error::Profile(format!("profile JSON: {e}")))?;
        p.check()?;
        Ok(p)
    }

    /// The profile as pretty-printed JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("a profile always serializes")
    }

    /// Checks the ranges: bandwidths finite and > 0 (`l1_gbps` ≥ 0, 0 meaning no L1),
    /// latency finite and ≥ 0, granularity 32,
    /// 64 or 128, partial-write bytes and line minimum ≤ 128 and ≤ 4096.
    ///
    /// Errors: [`Error::Profile`] naming the field and its value.
    pub fn check(&self) -> Result<(), Error> {
        let bad = |field: &str, v: String, want: &str| {
            Err(Error::Profile(format!(
                "profile for '{}': {field} = {v}, expected {want}",
                self.gpu
            )))
        };
        for (field, v) in [("copy_gbps", self.copy_gbps), ("l2_gbps", self.l2_gbps)] {
            if !(v.is_finite() && v > 0.0) {
                return bad(field, v.to_string(), "a bandwidth > 0 GB/s");
            }
        }
        if !(self.l1_gbps.is_finite() && self.l1_gbps >= 0.0) {
            return bad("l1_gbps", self.l1_gbps.to_string(), "≥ 0 GB/s (0: no L1)");
        }
        if !(self.latency_ns.is_finite() && self.latency_ns >= 0.0) {
            return bad("latency_ns", self.latency_ns.to_string(), "≥ 0 ns");
        }
        if ![32, 64, 128].contains(&self.dram_read_granularity_bytes) {
            return bad(
                "dram_read_granularity_bytes",
                self.dram_read_granularity_bytes.to_string(),
                "32, 64 or 128",
            );
        }
        if self.partial_write_read_bytes > 128 {
            return bad(
                "partial_write_read_bytes",
                self.partial_write_read_bytes.to_string(),
                "0 to 128 bytes",
            );
        }
        if self.dram_min_bytes_per_line > 4096 {
            return bad(
                "dram_min_bytes_per_line",
                self.dram_min_bytes_per_line.to_string(),
                "0 to 4096 bytes",
            );
        }
        Ok(())
    }

    /// Calibration helper: the loaded latency (ns) implied by a measured one-float-per-thread
    /// copy `b[i] = a[i]` at full occupancy, `measured_gbps` counting 8 useful bytes per thread
    /// (Harris's effective bandwidth), blocks of `threads_per_block`.
    ///
    /// Little's law: each round, every resident warp has one 128-byte load in flight and
    /// then stores; a round moves `SMs × resident warps × 32 × 8` bytes and lasts one latency,
    /// so latency = those bytes / measured bandwidth. H100 (132 SMs × 64 warps, 2393.2 GB/s):
    /// 904 ns. Resident warps as in [`resident_warps_per_sm`].
    pub fn latency_from_scalar_copy(gpu: &Gpu, measured_gbps: f64, threads_per_block: u32) -> f64 {
        let warps = threads_per_block.div_ceil(32).max(1);
        let resident = resident_warps_per_sm(gpu, warps) as f64;
        let bytes_per_round = gpu.sms as f64 * resident * 32.0 * 8.0;
        bytes_per_round / (measured_gbps * 1e9) * 1e9
    }

    /// Calibration helper: [`Profile::dram_min_bytes_per_line`] from a measured stride-32
    /// float copy (`b[i*32] = a[i*32]`, effective GB/s counting 8 useful bytes per thread)
    /// and the profile's `copy_gbps`.
    ///
    /// Each thread's load and store then touch a line of their own: two line residencies per
    /// thread, which without a minimum would cost 64 + (32 RMW + 32) = 128 DRAM bytes. The
    /// measured time per thread, at `copy_gbps`, is worth `copy_gbps × 8 / measured` bytes;
    /// half of it per line. H100 (2854 GB/s copy, 132.0 GB/s at stride 32): 86 bytes.
    pub fn min_line_bytes_from_sparse_copy(copy_gbps: f64, measured_gbps: f64) -> u32 {
        let per_thread = copy_gbps * 8.0 / measured_gbps;
        (per_thread / 2.0).round().clamp(0.0, 4096.0) as u32
    }
}

/// Warps resident on one SM when blocks have `warps_per_block` warps and use no shared
/// memory and few registers: `min(max blocks per SM, max threads per SM / threads per block)`
/// blocks (at least one), times `warps_per_block` [PG "Technical Specifications per Compute
/// Capability"; see [`Gpu::max_threads_per_sm`]]. Registers and shared memory can lower it;
/// the model does not know them.
pub fn resident_warps_per_sm(gpu: &Gpu, warps_per_block: u32) -> u32 {
    let w = warps_per_block.max(1);
    let blocks = (gpu.max_threads_per_sm() / (32 * w))
        .min(gpu.max_blocks_per_sm())
        .max(1);
    blocks * w
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpus::{all, lookup};

    #[test]
    fn datasheet_defaults() {
        let h = lookup("h100").unwrap();
        let p = Profile::datasheet(h);
        assert_eq!(p.gpu, "H100 SXM5 80GB");
        assert!((p.copy_gbps - 2847.5).abs() < 0.1, "{}", p.copy_gbps);
        assert_eq!(p.dram_read_granularity_bytes, 64);
        assert_eq!(p.partial_write_read_bytes, 32);
        assert_eq!(p.dram_min_bytes_per_line, 0);
        // 132 SMs × 128 B × 1.98 GHz.
        assert!((p.l1_gbps - 33454.08).abs() < 0.01, "{}", p.l1_gbps);
        let c = Profile::datasheet(lookup("c870").unwrap());
        assert!((c.copy_gbps - 65.28).abs() < 1e-9);
        assert_eq!(c.partial_write_read_bytes, 0);
        assert_eq!(
            Profile::datasheet(lookup("c2050").unwrap()).dram_read_granularity_bytes,
            32
        );
        for g in all() {
            Profile::datasheet(g).check().unwrap();
        }
    }

    #[test]
    fn json_round_trip_and_errors() {
        let p = Profile::datasheet(lookup("a100").unwrap());
        let s = p.to_json();
        assert!(s.contains("\"copy_gbps\""), "{s}");
        let q = Profile::from_json(&s).unwrap();
        // serde_json's default float parsing may differ in the last bit.
        let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * a.abs().max(1.0);
        assert!(
            close(q.copy_gbps, p.copy_gbps) && close(q.l1_gbps, p.l1_gbps),
            "{q:?}"
        );
        assert_eq!(
            Profile {
                copy_gbps: p.copy_gbps,
                l1_gbps: p.l1_gbps,
                ..q
            },
            p
        );

        let e = Profile::from_json("{").unwrap_err().to_string();
        assert!(e.starts_with("profile JSON:"), "{e}");
        let missing = s.replace("\"latency_ns\"", "\"latency\"");
        let e = Profile::from_json(&missing).unwrap_err().to_string();
        assert!(e.contains("latency"), "{e}");
        let mut q = p.clone();
        q.dram_read_granularity_bytes = 48;
        let e = Profile::from_json(&q.to_json()).unwrap_err().to_string();
        assert!(
            e.contains("dram_read_granularity_bytes = 48, expected 32, 64 or 128"),
            "{e}"
        );
        let mut q = p.clone();
        q.copy_gbps = 0.0;
        assert!(q.check().unwrap_err().to_string().contains("copy_gbps = 0"));
        let mut q = p;
        q.latency_ns = f64::NAN;
        assert!(q.check().is_err());
    }

    #[test]
    fn calibration_helpers_on_h100_numbers() {
        let h = lookup("h100").unwrap();
        assert_eq!(resident_warps_per_sm(h, 8), 64);
        assert_eq!(resident_warps_per_sm(lookup("c870").unwrap(), 8), 24);
        assert_eq!(resident_warps_per_sm(lookup("c2050").unwrap(), 8), 48);
        assert_eq!(resident_warps_per_sm(lookup("rtx4090").unwrap(), 8), 48);
        // One warp of 32 threads per block: the block limit binds (32 blocks on 9.0).
        assert_eq!(resident_warps_per_sm(h, 1), 32);
        // copy-bandwidth.csv, offset 0: 2393.2 GB/s → 904 ns.
        let l = Profile::latency_from_scalar_copy(h, 2393.2, 256);
        assert!((l - 903.7).abs() < 0.1, "{l}");
        // copy-bandwidth.csv, stride 32: 132.0 GB/s with a 2854 GB/s copy → 86 bytes.
        assert_eq!(Profile::min_line_bytes_from_sparse_copy(2854.0, 132.0), 86);
    }
}
