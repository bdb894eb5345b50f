//! The GPUs warpscope can predict a time for: compute capability, SM count, cache sizes,
//! DRAM peak bandwidth and bus width, each row with its source.
//!
//! Units: bytes for sizes (KiB = 1024 B, MiB = 1024² B: NVIDIA's "MB" of cache means MiB, as
//! `cudaDevAttrL2CacheSize` reports it, e.g. 52,428,800 B = 50 MiB on H100), GB/s = 1e9 B/s
//! for bandwidths (NVIDIA's datasheet convention), MHz for clocks.
//!
//! What `l1_bytes_per_sm` holds (the brief asked to state it): the L1 data-cache capacity
//! the model simulates for a kernel that uses no shared memory.
//! - 1.x: 0 (no cache for global memory [PG5 F.3]).
//! - 2.x and 3.x: 16 KiB, the default split of the 64 KiB L1/shared array (48 KiB shared,
//!   16 KiB L1) [Fermi and GK110 whitepapers; PG5 F.4.1].
//! - P100 (6.0): 24 KiB, its separate L1/texture cache (shared memory is a separate 64 KiB).
//! - 7.0 and later: the whole unified L1/shared capacity per SM (128 KiB on V100, 96 on T4,
//!   192 on A100, 256 on H100/H200/B200, 128 on Ada and RTX Blackwell): with no shared memory
//!   in use, the driver's carveout leaves (almost) all of it to L1. A kernel that uses shared
//!   memory has less; the model does not know the carveout and says so.
//!
//! What `texture_cache` holds: the texture cache where it is not the L1 (see
//! [`TextureCache`]); from 5.x on textures share the unified L1/texture cache.

use crate::Error;
use serde::Serialize;
use std::fmt;
use warpscope_model::arch::{self, Arch};
use warpscope_model::ComputeCapability;

const KIB: u64 = 1024;
const MIB: u64 = 1024 * 1024;

/// DRAM technology of a board (datasheet wording).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum MemoryType {
    Gddr3,
    Gddr5,
    Gddr6,
    Gddr6x,
    Gddr7,
    Hbm2,
    Hbm2e,
    Hbm3,
    Hbm3e,
}

impl MemoryType {
    /// Whether the memory is a stacked HBM part (the H100 measurements of the reference's
    /// last section were made on HBM3).
    pub const fn is_hbm(self) -> bool {
        matches!(
            self,
            MemoryType::Hbm2 | MemoryType::Hbm2e | MemoryType::Hbm3 | MemoryType::Hbm3e
        )
    }
}

impl fmt::Display for MemoryType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            MemoryType::Gddr3 => "GDDR3",
            MemoryType::Gddr5 => "GDDR5",
            MemoryType::Gddr6 => "GDDR6",
            MemoryType::Gddr6x => "GDDR6X",
            MemoryType::Gddr7 => "GDDR7",
            MemoryType::Hbm2 => "HBM2",
            MemoryType::Hbm2e => "HBM2e",
            MemoryType::Hbm3 => "HBM3",
            MemoryType::Hbm3e => "HBM3e",
        })
    }
}

/// One GPU board: the facts the traffic model needs, and where they come from.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Gpu {
    /// Product name, e.g. "H100 SXM5 80GB".
    pub name: &'static str,
    /// Other names [`lookup`] accepts (compared case-insensitively, ignoring spaces, `-`,
    /// `_` and a leading "nvidia"): "h100", "h100-sxm", "rtx4090", "c2050", ….
    pub aliases: &'static [&'static str],
    /// Compute capability; fixes the coalescing rules (`--gpu` implies `--cc`).
    pub cc: ComputeCapability,
    /// Streaming multiprocessors enabled on this product.
    pub sms: u32,
    /// L1 data-cache capacity per SM that the model simulates, bytes (see the module doc for
    /// what is taken on each generation; 0 = no L1 for global memory).
    pub l1_bytes_per_sm: u64,
    /// The texture cache, where it is a cache of its own (1.x–3.x); `None` from 5.x on, where
    /// texture fetches go through the unified L1/texture cache of `l1_bytes_per_sm`.
    pub texture_cache: Option<TextureCache>,
    /// L2 capacity, bytes, shared by all SMs (0 on 1.x, which has no L2 for global memory).
    pub l2_bytes: u64,
    /// DRAM peak bandwidth, GB/s (1e9 B/s), as the datasheet states it.
    pub dram_gbps: f64,
    /// DRAM interface width, bits.
    pub bus_bits: u32,
    /// DRAM technology.
    pub memory: MemoryType,
    /// Boost (or shader) clock, MHz; used only for the default L1 bandwidth of a profile.
    pub clock_mhz: u32,
    /// Where the row's numbers come from (datasheet / whitepaper titles, measurements).
    pub source: &'static str,
}

/// A texture cache separate from the L1: one per `sms` SMs (a TPC on 1.x, an SM on 2.x/3.x),
/// of `bytes` bytes, caching texture fetches (and on 3.5/3.7 `__ldg` loads: the read-only
/// data cache is the texture cache [PG "Compute Capability 3.x", Global Memory]).
///
/// Sizes: [PG] table "Technical Specifications per Compute Capability", row "Cache working
/// set per multiprocessor for texture memory": 6–8 KB on 1.x (taken as 8 KB for each SM the
/// TPC's cache serves), 12 KB on 2.x [PG "Compute Capability 2.x": the texture cache is
/// independent of the L1], 48 KB on 3.5/3.7 (the read-only data cache [PG "Compute Capability
/// 3.x"]). Not measured here (no such GPU is lent): associativity and line size are assumed
/// as the L1's (4 ways, 128-byte lines of 32-byte sectors).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct TextureCache {
    /// Capacity of one cache, bytes.
    pub bytes: u64,
    /// SMs sharing one cache (SM *k* uses cache *k* / `sms`): 2 on G80 and 3 on GT200 (a TPC
    /// [G80 and GT200 technical briefs]), 1 on 2.x and 3.x.
    pub sms: u32,
}

impl Gpu {
    /// The model's table row for this GPU's compute capability (every GPU of [`all`] has one).
    pub fn arch(&self) -> &'static Arch {
        arch::lookup(self.cc).expect("every GPU's compute capability is in the model's table")
    }

    /// Most threads resident on one SM, from the CUDA C++ Programming Guide's table
    /// "Technical Specifications per Compute Capability" (row "Maximum number of resident
    /// threads per SM"; 1.x and 2.x columns from the guides of CUDA 3.x–8.0): 768 on 1.0/1.1,
    /// 1024 on 1.2/1.3, 1536 on 2.x, 8.6, 8.9 and 12.x, 1024 on 7.5, 2048 otherwise.
    pub fn max_threads_per_sm(&self) -> u32 {
        let cc = self.cc;
        match (cc.major, cc.minor) {
            (1, 0) | (1, 1) => 768,
            (1, _) => 1024,
            (2, _) => 1536,
            (7, 5) => 1024,
            (8, 6) | (8, 9) => 1536,
            (12, _) => 1536,
            _ => 2048,
        }
    }

    /// Most blocks resident on one SM, same table (row "Maximum number of resident blocks
    /// per SM"): 8 on 1.x and 2.x, 16 on 3.x, 7.5 and 8.6, 24 on 8.9, 32 otherwise.
    pub fn max_blocks_per_sm(&self) -> u32 {
        let cc = self.cc;
        match (cc.major, cc.minor) {
            (1, _) | (2, _) => 8,
            (3, _) => 16,
            (7, 5) | (8, 6) => 16,
            (8, 9) => 24,
            _ => 32,
        }
    }
}

const fn cc(major: u8, minor: u8) -> ComputeCapability {
    ComputeCapability::new(major, minor)
}

static GPUS: [Gpu; 16] = [
    Gpu {
        name: "Tesla C870",
        aliases: &["c870", "g80"],
        cc: cc(1, 0),
        sms: 16,
        l1_bytes_per_sm: 0,
        texture_cache: Some(TextureCache { bytes: 16 * KIB, sms: 2 }),
        l2_bytes: 0,
        dram_gbps: 76.8,
        bus_bits: 384,
        memory: MemoryType::Gddr3,
        clock_mhz: 1350,
        source: "NVIDIA Tesla C870 GPU Computing Processor board specification: 128 thread \
                 processors (16 SMs × 8) at 1.35 GHz, 1.5 GB GDDR3 on a 384-bit bus at 800 MHz \
                 (1600 MT/s) = 76.8 GB/s; same figures in the 'Nvidia Tesla' encyclopedia table. \
                 Harris's article on global-memory access names the board but gives no figures.",
    },
    Gpu {
        name: "Tesla C1060",
        aliases: &["c1060", "gt200"],
        cc: cc(1, 3),
        sms: 30,
        l1_bytes_per_sm: 0,
        texture_cache: Some(TextureCache { bytes: 24 * KIB, sms: 3 }),
        l2_bytes: 0,
        dram_gbps: 102.4,
        bus_bits: 512,
        memory: MemoryType::Gddr3,
        clock_mhz: 1296,
        source: "NVIDIA Tesla C1060 Computing Processor board specification: 240 cores (30 SMs \
                 × 8) at 1.296 GHz, 4 GB GDDR3 on a 512-bit bus at 800 MHz = 102.4 GB/s \
                 ('Nvidia Tesla' encyclopedia table: 102.4 GB/s, 512 bit; hwupgrade.it T10 \
                 article: 102 GB/s).",
    },
    Gpu {
        name: "Tesla C2050",
        aliases: &["c2050", "c2070", "gf100"],
        cc: cc(2, 0),
        sms: 14,
        l1_bytes_per_sm: 16 * KIB,
        texture_cache: Some(TextureCache { bytes: 12 * KIB, sms: 1 }),
        l2_bytes: 768 * KIB,
        dram_gbps: 144.0,
        bus_bits: 384,
        memory: MemoryType::Gddr5,
        clock_mhz: 1150,
        source: "NVIDIA Tesla C2050/C2070 GPU Computing Processor datasheet: 448 CUDA cores (14 \
                 SMs × 32) at 1.15 GHz, 3 GB GDDR5, 384-bit, 144 GB/s (ECC off); Fermi \
                 whitepaper ('NVIDIA's Next Generation CUDA Compute Architecture: Fermi'): 768 \
                 KB L2, 64 KB L1/shared per SM (default 16 KB L1 + 48 KB shared).",
    },
    Gpu {
        name: "Tesla K40",
        aliases: &["k40", "k40c", "k40m"],
        cc: cc(3, 5),
        sms: 15,
        l1_bytes_per_sm: 16 * KIB,
        texture_cache: Some(TextureCache { bytes: 48 * KIB, sms: 1 }),
        l2_bytes: 1536 * KIB,
        dram_gbps: 288.0,
        bus_bits: 384,
        memory: MemoryType::Gddr5,
        clock_mhz: 875,
        source: "NVIDIA Tesla K40 GPU Accelerator board specification: 2880 CUDA cores (15 SMX × \
                 192), 745 MHz base / 875 MHz boost, 12 GB GDDR5, 384-bit, 288 GB/s; Kepler \
                 GK110 whitepaper: 1536 KB L2, 64 KB L1/shared per SMX (default 16 KB L1).",
    },
    Gpu {
        name: "Tesla P100 SXM2",
        aliases: &["p100", "p100-sxm2", "gp100"],
        cc: cc(6, 0),
        sms: 56,
        l1_bytes_per_sm: 24 * KIB,
        texture_cache: None,
        l2_bytes: 4 * MIB,
        dram_gbps: 732.0,
        bus_bits: 4096,
        memory: MemoryType::Hbm2,
        clock_mhz: 1480,
        source: "NVIDIA Tesla P100 datasheet (SXM2: 16 GB CoWoS HBM2, 732 GB/s); 'NVIDIA Tesla \
                 P100' whitepaper (GP100): 56 SMs, 4096 KB L2, 4096-bit HBM2, 1480 MHz boost, \
                 24 KB L1/texture cache per SM beside 64 KB shared memory.",
    },
    Gpu {
        name: "Tesla V100 SXM2",
        aliases: &["v100", "v100-sxm2", "gv100"],
        cc: cc(7, 0),
        sms: 80,
        l1_bytes_per_sm: 128 * KIB,
        texture_cache: None,
        l2_bytes: 6 * MIB,
        dram_gbps: 900.0,
        bus_bits: 4096,
        memory: MemoryType::Hbm2,
        clock_mhz: 1530,
        source: "NVIDIA Tesla V100 datasheet (SXM2: 900 GB/s HBM2); 'NVIDIA Tesla V100 GPU \
                 Architecture' whitepaper: 80 SMs, 6144 KB L2, 4096-bit HBM2, 1530 MHz boost, \
                 128 KB combined L1/shared per SM.",
    },
    Gpu {
        name: "Tesla T4",
        aliases: &["t4"],
        cc: cc(7, 5),
        sms: 40,
        l1_bytes_per_sm: 96 * KIB,
        texture_cache: None,
        l2_bytes: 4 * MIB,
        dram_gbps: 320.0,
        bus_bits: 256,
        memory: MemoryType::Gddr6,
        clock_mhz: 1590,
        source: "NVIDIA T4 datasheet: 2560 CUDA cores (40 SMs × 64), 16 GB GDDR6, 320+ GB/s; \
                 'NVIDIA Turing GPU Architecture' whitepaper (TU104): 256-bit GDDR6, 4 MB L2, \
                 96 KB L1/shared per SM; 1590 MHz boost.",
    },
    Gpu {
        name: "A100 SXM4 80GB",
        aliases: &["a100", "a100-80gb", "a100-sxm4", "ga100"],
        cc: cc(8, 0),
        sms: 108,
        l1_bytes_per_sm: 192 * KIB,
        texture_cache: None,
        l2_bytes: 40 * MIB,
        dram_gbps: 2039.0,
        bus_bits: 5120,
        memory: MemoryType::Hbm2e,
        clock_mhz: 1410,
        source: "NVIDIA A100 Tensor Core GPU datasheet (80GB SXM: HBM2e, 2,039 GB/s); 'NVIDIA \
                 A100 Tensor Core GPU Architecture' whitepaper: 108 SMs, 40 MB L2, 5120-bit, \
                 192 KB L1/shared per SM, 1410 MHz boost.",
    },
    Gpu {
        name: "A100 SXM4 40GB",
        aliases: &["a100-40gb"],
        cc: cc(8, 0),
        sms: 108,
        l1_bytes_per_sm: 192 * KIB,
        texture_cache: None,
        l2_bytes: 40 * MIB,
        dram_gbps: 1555.0,
        bus_bits: 5120,
        memory: MemoryType::Hbm2,
        clock_mhz: 1410,
        source: "NVIDIA A100 Tensor Core GPU datasheet (40GB: HBM2, 1,555 GB/s); 'NVIDIA A100 \
                 Tensor Core GPU Architecture' whitepaper: 108 SMs, 40 MB L2, 5120-bit, 192 KB \
                 L1/shared per SM, 1410 MHz boost.",
    },
    Gpu {
        name: "H100 SXM5 80GB",
        aliases: &["h100", "h100-sxm", "h100-sxm5", "h100-80gb-hbm3", "gh100"],
        cc: cc(9, 0),
        sms: 132,
        l1_bytes_per_sm: 256 * KIB,
        texture_cache: None,
        l2_bytes: 50 * MIB,
        dram_gbps: 3350.0,
        bus_bits: 5120,
        memory: MemoryType::Hbm3,
        clock_mhz: 1980,
        source: "NVIDIA H100 Tensor Core GPU datasheet (SXM: 80 GB HBM3, 3.35 TB/s); 'NVIDIA H100 \
                 Tensor Core GPU Architecture' whitepaper: 132 SMs (SXM5), 50 MB L2, 5120-bit \
                 HBM3, 256 KB L1/shared per SM, 1980 MHz max boost. Checked on the measured board: 'NVIDIA H100 80GB HBM3 (CC 9.0, \
                 132 SMs, 5120-bit bus, 50 MiB L2)' (ground-truth/h100/copy-bandwidth.csv).",
    },
    Gpu {
        name: "H100 PCIe 80GB",
        aliases: &["h100-pcie"],
        cc: cc(9, 0),
        sms: 114,
        l1_bytes_per_sm: 256 * KIB,
        texture_cache: None,
        l2_bytes: 50 * MIB,
        dram_gbps: 2039.0,
        bus_bits: 5120,
        memory: MemoryType::Hbm2e,
        clock_mhz: 1755,
        source: "NVIDIA H100 Tensor Core GPU datasheet (PCIe: 80 GB HBM2e, 2 TB/s; 2,039 GB/s = \
                 5120 bit × 3186 MT/s / 8); 'NVIDIA H100 Tensor Core GPU Architecture' \
                 whitepaper: 114 SMs (PCIe), 50 MB L2; Chips and Cheese, 'Nvidia's H100: Funny \
                 L2, and Tons of Bandwidth' (114 SMs, 50 MB L2, 1755 MHz boost, 10 HBM2e \
                 controllers of 512 bits).",
    },
    Gpu {
        name: "H200 SXM 141GB",
        aliases: &["h200", "h200-sxm", "h200-nvl"],
        cc: cc(9, 0),
        sms: 132,
        l1_bytes_per_sm: 256 * KIB,
        texture_cache: None,
        l2_bytes: 50 * MIB,
        dram_gbps: 4800.0,
        bus_bits: 6144,
        memory: MemoryType::Hbm3e,
        clock_mhz: 1980,
        source: "NVIDIA H200 Tensor Core GPU datasheet: 141 GB HBM3e, 4.8 TB/s; same GH100 die \
                 and SM configuration as H100 SXM5 (132 SMs, 50 MB L2, 256 KB L1/shared per SM; \
                 H100 whitepaper); six 1024-bit HBM3e stacks = 6144-bit (SC23 announcement as \
                 reported by geektopia.es; one third-party page says 8192-bit, not taken).",
    },
    Gpu {
        name: "L40S",
        aliases: &["l40s-48gb", "ad102-l40s"],
        cc: cc(8, 9),
        sms: 142,
        l1_bytes_per_sm: 128 * KIB,
        texture_cache: None,
        l2_bytes: 96 * MIB,
        dram_gbps: 864.0,
        bus_bits: 384,
        memory: MemoryType::Gddr6,
        clock_mhz: 2520,
        source: "NVIDIA L40S datasheet: 48 GB GDDR6 with ECC, 864 GB/s, 18,176 CUDA cores (142 \
                 SMs × 128); 'NVIDIA Ada GPU Architecture' whitepaper (AD102): 96 MB L2 with all \
                 twelve 32-bit memory controllers (384-bit), 128 KB L1/shared per SM; 2520 MHz \
                 boost. Third-party spec pages disagree on the L2 (48 MB vs 96 MB); the \
                 full-bus AD102's 96 MB is taken.",
    },
    Gpu {
        name: "B200",
        aliases: &["hgx-b200", "dgx-b200", "gb100"],
        cc: cc(10, 0),
        sms: 148,
        l1_bytes_per_sm: 256 * KIB,
        texture_cache: None,
        l2_bytes: 126 * MIB,
        dram_gbps: 8000.0,
        bus_bits: 8192,
        memory: MemoryType::Hbm3e,
        clock_mhz: 1965,
        source: "NVIDIA DGX B200 / HGX B200 datasheets: 8 TB/s HBM3e per GPU, eight 1024-bit \
                 stacks = 8192-bit; Chips and Cheese, 'Nvidia's B200: Keeping the CUDA \
                 Juggernaut Rolling': two dies × 74 SMs = 148 SMs, 256 KB L1/shared per SM \
                 (unchanged from H100), 126 MB L2 across the two dies, clocks similar to H100 \
                 SXM5 (1965 MHz taken).",
    },
    Gpu {
        name: "GeForce RTX 4090",
        aliases: &["rtx4090", "4090", "ad102"],
        cc: cc(8, 9),
        sms: 128,
        l1_bytes_per_sm: 128 * KIB,
        texture_cache: None,
        l2_bytes: 72 * MIB,
        dram_gbps: 1008.0,
        bus_bits: 384,
        memory: MemoryType::Gddr6x,
        clock_mhz: 2520,
        source: "'NVIDIA Ada GPU Architecture' whitepaper, GeForce RTX 4090: 128 SMs, 72 MB L2, \
                 24 GB GDDR6X at 21 Gbps on 384 bits = 1008 GB/s, 2520 MHz boost, 128 KB \
                 L1/shared per SM.",
    },
    Gpu {
        name: "GeForce RTX 5090",
        aliases: &["rtx5090", "5090", "gb202"],
        cc: cc(12, 0),
        sms: 170,
        l1_bytes_per_sm: 128 * KIB,
        texture_cache: None,
        l2_bytes: 96 * MIB,
        dram_gbps: 1792.0,
        bus_bits: 512,
        memory: MemoryType::Gddr7,
        clock_mhz: 2407,
        source: "'NVIDIA RTX Blackwell GPU Architecture' whitepaper, GeForce RTX 5090: 170 SMs, \
                 96 MB L2, 32 GB GDDR7 at 28 Gbps on 512 bits = 1792 GB/s, 2407 MHz boost, \
                 128 KB L1/shared per SM (same figures in Linux Format's RTX 5090 review).",
    },
];

/// Every GPU in the table, oldest first: Tesla C870, C1060, C2050, K40, P100, V100, T4,
/// A100 80GB and 40GB, H100 SXM5 and PCIe, H200, L40S, B200, RTX 4090, RTX 5090.
pub fn all() -> &'static [Gpu] {
    &GPUS
}

/// Lower-cases `s`, keeps only its letters and digits, and drops a leading "nvidia".
fn normalize(s: &str) -> String {
    let t: String = s
        .chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .map(|c| c.to_ascii_lowercase())
        .collect();
    match t.strip_prefix("nvidia") {
        Some(rest) if !rest.is_empty() => rest.to_string(),
        _ => t,
    }
}

/// The GPU called `name`: its table name or one of its aliases, compared case-insensitively
/// and ignoring spaces, `-`, `_` and a leading "NVIDIA" ("h100", "H100-SXM", "nvidia h100 80gb
/// hbm3", "rtx4090", "GeForce RTX 4090", "c2050" all work).
///
/// Errors: [`Error::UnknownGpu`], whose message lists every known name with its aliases.
pub fn lookup(name: &str) -> Result<&'static Gpu, Error> {
    let want = normalize(name);
    if !want.is_empty() {
        for g in all() {
            if normalize(g.name) == want || g.aliases.iter().any(|a| normalize(a) == want) {
                return Ok(g);
            }
        }
    }
    Err(Error::UnknownGpu {
        name: name.trim().to_string(),
        known: known_names(),
    })
}

/// "Tesla C870 (c870, tesla-c870, g80); …" for error messages.
pub(crate) fn known_names() -> String {
    all()
        .iter()
        .map(|g| format!("{} ({})", g.name, g.aliases.join(", ")))
        .collect::<Vec<_>>()
        .join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_gpu_has_a_source_and_plausible_fields() {
        assert!(all().len() >= 16);
        for g in all() {
            assert!(g.source.len() > 60, "{}: source too thin", g.name);
            assert!(!g.aliases.is_empty(), "{}", g.name);
            let a = g.arch();
            assert_eq!(a.cc, g.cc);
            assert!((14..=200).contains(&g.sms), "{}: {} SMs", g.name, g.sms);
            assert!(
                (50.0..=10_000.0).contains(&g.dram_gbps),
                "{}: {} GB/s",
                g.name,
                g.dram_gbps
            );
            assert!(
                g.bus_bits.is_power_of_two() || g.bus_bits % 128 == 0,
                "{}",
                g.name
            );
            assert!((500..=3000).contains(&g.clock_mhz), "{}", g.name);
            // A texture cache of its own before 5.x, the unified L1/texture cache after.
            assert_eq!(g.texture_cache.is_some(), g.cc.major < 5, "{}", g.name);
            if let Some(tc) = g.texture_cache {
                assert!(g.sms % tc.sms == 0 && tc.bytes >= 8 * KIB, "{}", g.name);
            }
            if g.cc.major == 1 {
                assert_eq!((g.l1_bytes_per_sm, g.l2_bytes), (0, 0), "{}", g.name);
            } else {
                assert!(
                    (16 * KIB..=256 * KIB).contains(&g.l1_bytes_per_sm),
                    "{}",
                    g.name
                );
                assert!((512 * KIB..=128 * MIB).contains(&g.l2_bytes), "{}", g.name);
            }
            // Peak bandwidth consistent with the bus: a data rate of 1–40 Gb/s per pin.
            let gbit_per_pin = g.dram_gbps * 8.0 / g.bus_bits as f64;
            assert!(
                (1.0..=40.0).contains(&gbit_per_pin),
                "{}: {gbit_per_pin} Gb/s per pin",
                g.name
            );
            assert!(g.max_threads_per_sm() >= 768 && g.max_blocks_per_sm() >= 8);
        }
        // Names and aliases are unique.
        let mut seen = std::collections::HashSet::new();
        for g in all() {
            for n in std::iter::once(g.name).chain(g.aliases.iter().copied()) {
                assert!(seen.insert(normalize(n)), "duplicate name {n}");
            }
        }
    }

    #[test]
    fn table_values() {
        let h = lookup("h100").unwrap();
        assert_eq!(
            (h.sms, h.l2_bytes, h.bus_bits),
            (132, 52_428_800, 5120),
            "the ground-truth header's H100"
        );
        assert_eq!(h.cc, ComputeCapability::new(9, 0));
        assert_eq!(lookup("c870").unwrap().cc, ComputeCapability::new(1, 0));
        assert_eq!(lookup("c1060").unwrap().cc, ComputeCapability::new(1, 3));
        assert_eq!(lookup("c2050").unwrap().cc, ComputeCapability::new(2, 0));
        assert_eq!(lookup("rtx5090").unwrap().cc, ComputeCapability::new(12, 0));
        assert_eq!(lookup("b200").unwrap().cc, ComputeCapability::new(10, 0));
        assert_eq!(lookup("l40s").unwrap().cc, ComputeCapability::new(8, 9));
        assert_eq!(lookup("c870").unwrap().dram_gbps, 76.8);
        assert_eq!(lookup("c1060").unwrap().dram_gbps, 102.4);
        assert_eq!(lookup("c2050").unwrap().dram_gbps, 144.0);
        assert_eq!(h.max_threads_per_sm(), 2048);
        assert_eq!(lookup("c870").unwrap().max_threads_per_sm(), 768);
        assert_eq!(lookup("t4").unwrap().max_threads_per_sm(), 1024);
        assert_eq!(lookup("rtx4090").unwrap().max_blocks_per_sm(), 24);
    }

    #[test]
    fn lookup_aliases() {
        let name = |s: &str| lookup(s).map(|g| g.name).unwrap();
        assert_eq!(name("h100"), "H100 SXM5 80GB");
        assert_eq!(name("H100-SXM"), "H100 SXM5 80GB");
        assert_eq!(name(" h100 sxm5 "), "H100 SXM5 80GB");
        assert_eq!(name("NVIDIA H100 80GB HBM3"), "H100 SXM5 80GB");
        assert_eq!(name("h100-pcie"), "H100 PCIe 80GB");
        assert_eq!(name("a100"), "A100 SXM4 80GB");
        assert_eq!(name("A100_40GB"), "A100 SXM4 40GB");
        assert_eq!(name("rtx4090"), "GeForce RTX 4090");
        assert_eq!(name("GeForce RTX 4090"), "GeForce RTX 4090");
        assert_eq!(name("RTX-5090"), "GeForce RTX 5090");
        assert_eq!(name("c2050"), "Tesla C2050");
        assert_eq!(name("Tesla C870"), "Tesla C870");
        assert_eq!(name("tesla-c1060"), "Tesla C1060");
        assert_eq!(name("k40"), "Tesla K40");
        assert_eq!(name("V100"), "Tesla V100 SXM2");
        assert_eq!(name("h200"), "H200 SXM 141GB");
    }

    #[test]
    fn unknown_gpu_lists_the_known_names() {
        let e = lookup("h300").unwrap_err();
        let m = e.to_string();
        assert!(m.starts_with("unknown GPU 'h300'"), "{m}");
        for g in all() {
            assert!(m.contains(g.name), "{m} lacks {}", g.name);
        }
        assert!(m.contains("rtx4090") && m.contains("c2050"), "{m}");
        assert!(lookup("").is_err());
        assert!(lookup("nvidia").is_err());
    }
}
