//! Built-in microbenchmarks: the copy sweep of Harris's kernels ([`measure_copy_sweep`]) and
//! the measurements behind a [`warpscope_traffic::Profile`] ([`calibrate`]).
//!
//! Method (as the device tool's METHOD.md asks, and as copy-bandwidth.csv's header says): data is
//! filled with random values on the GPU before timing, every kernel is warmed up, times come
//! from CUDA events, each figure is the median of several samples, and the arrays are large
//! enough (≥ 20× L2 where DRAM is measured) that caches do not hold them. GB/s = 1e9 B/s.

use crate::device::{Buffer, Device, Function, Launch, Module};
use crate::error::{Error, Result};
use crate::stats::{median, stats};
use serde::Serialize;
use std::time::Duration;
use warpscope_toolkit::nvrtc::{self, Program};
use warpscope_traffic::{gpus, Profile};

/// The kernels, all `extern "C"` (their symbols are their names). Harris's copies keep the
/// post's form (`int` index, no `__restrict__`) so that their figures compare with
/// shared/ground-truth/h100/copy-bandwidth.csv.
pub const SOURCE: &str = r#"
#define OFFSET_COPY(NAME, T) \
extern "C" __global__ void NAME(const T* a, T* b, int n, int offset) \
{ int i = blockIdx.x * blockDim.x + threadIdx.x + offset; if (i < n) b[i] = a[i]; }
#define STRIDE_COPY(NAME, T) \
extern "C" __global__ void NAME(const T* a, T* b, int n, int stride) \
{ int i = (blockIdx.x * blockDim.x + threadIdx.x) * stride; if (i < n) b[i] = a[i]; }
OFFSET_COPY(ws_offset_copy_f32, float)
OFFSET_COPY(ws_offset_copy_f64, double)
STRIDE_COPY(ws_stride_copy_f32, float)
STRIDE_COPY(ws_stride_copy_f64, double)

// The reference copy: float4, grid-stride.
extern "C" __global__ void ws_copy_f4(const float4* __restrict__ a, float4* __restrict__ b, unsigned long long n4)
{
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n4;
         i += (unsigned long long)gridDim.x * blockDim.x)
        b[i] = a[i];
}

// Random words (xorshift on a hash of the index): fills buffers without a host copy.
extern "C" __global__ void ws_fill(unsigned int* p, unsigned long long n, unsigned int seed)
{
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
         i += (unsigned long long)gridDim.x * blockDim.x) {
        unsigned int x = (unsigned int)(i * 2654435761ull) ^ seed;
        x ^= x << 13; x ^= x >> 17; x ^= x << 5;
        // A float in [1, 2): finite, no denormals, random mantissa.
        p[i] = 0x3f800000u | (x >> 9);
    }
}

// Re-reads a power-of-two array (mask = elements - 1) `passes` times, rotating the start
// each pass so no load can be hoisted. __ldcg: through L2 only (bypasses L1).
extern "C" __global__ void ws_read_l2(const float4* __restrict__ a, unsigned int mask, int passes, float* out)
{
    unsigned int t = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned int stride = gridDim.x * blockDim.x;
    float s = 0.f;
    for (int p = 0; p < passes; ++p) {
        for (unsigned int i = t; i <= mask; i += stride) {
            float4 v = __ldcg(a + ((i + p * 4099u) & mask));
            s += v.x + v.y + v.z + v.w;
        }
    }
    if (s == -1.0f) out[t] = s;
}

// Each block re-reads a small array (mask + 1 float4) that stays in its SM's L1.
extern "C" __global__ void ws_read_l1(const float4* __restrict__ a, unsigned int mask, int passes, float* out)
{
    unsigned int t = threadIdx.x;
    float s = 0.f;
    for (int p = 0; p < passes; ++p) {
        float4 v = __ldca(a + ((t + p * blockDim.x) & mask));
        s += v.x + v.y + v.z + v.w;
    }
    if (s == -1.0f) out[blockIdx.x * blockDim.x + t] = s;
}

// DRAM probes, read by Nsight Compute: one float per thread, `stride` floats apart.
extern "C" __global__ void ws_probe_load(const float* a, float* out, unsigned long long n, int stride)
{
    unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
    if (i < n) { float v = a[i * stride]; if (v == -1.0f) out[i] = v; }
}
extern "C" __global__ void ws_probe_store(float* a, unsigned long long n, int stride)
{
    unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
    if (i < n) a[i * stride] = 1.0f;
}
"#;

/// Which of Harris's copies ([`SOURCE`]'s `offset_copy` / `stride_copy`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CopyKind {
    /// `i = blockIdx.x*blockDim.x + threadIdx.x + offset; if (i < n) b[i] = a[i];` with
    /// `n / block` blocks.
    Offset,
    /// `i = (blockIdx.x*blockDim.x + threadIdx.x) * stride; if (i < n) b[i] = a[i];` with
    /// `n / stride / block` blocks (at least one).
    Stride,
}

/// Element type of the copy.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Elem {
    Float,
    Double,
}

impl Elem {
    /// Bytes of one element.
    pub fn bytes(self) -> u64 {
        match self {
            Elem::Float => 4,
            Elem::Double => 8,
        }
    }
}

/// The compiled benchmark kernels on one device.
pub struct Bench<'d> {
    pub dev: &'d Device,
    module: Module,
}

/// Timing repeats of the sweep and of calibration, as copy-bandwidth.csv's header: 1 warm-up
/// launch, then 5 back-to-back launches per sample; [`SAMPLES`] samples, median taken.
pub const WARMUP: u32 = 1;
/// Launches per timed sample.
pub const PER_SAMPLE: u32 = 5;
/// Samples per figure (the median is reported).
pub const SAMPLES: u32 = 7;
const TIMEOUT: Duration = Duration::from_secs(60);

impl<'d> Bench<'d> {
    /// Compiles [`SOURCE`] for `dev`. Errors: NVRTC's.
    pub fn new(dev: &'d Device) -> Result<Bench<'d>> {
        let c = nvrtc::compile(&Program {
            file: "warpscope-bench.cu",
            source: SOURCE,
            kernels: Vec::new(),
            cc: dev.info.cc,
            defines: Vec::new(),
            include_dirs: Vec::new(),
            lineinfo: false,
            std: None,
        })?;
        Ok(Bench {
            dev,
            module: dev.load(&c.image)?,
        })
    }

    fn f(&self, name: &str) -> Result<Function> {
        self.module.function(name, name)
    }

    /// Fills `b` with random floats in [1, 2) on the GPU.
    pub fn fill_random(&self, b: &Buffer, seed: u32) -> Result<()> {
        let f = self.f("ws_fill")?;
        let words = b.bytes() / 4;
        let params = [p64(b.ptr()), p64(words), p32(seed)];
        self.dev.launch(&Launch {
            function: &f,
            grid: [(self.dev.info.sms * 8).max(1), 1, 1],
            block: [256, 1, 1],
            shared_bytes: 0,
            params: &params,
        })?;
        self.dev.wait("ws_fill", TIMEOUT)
    }

    /// Median seconds per launch of `l` (1 warm-up, [`SAMPLES`] × [`PER_SAMPLE`] launches).
    pub fn time(&self, l: &Launch) -> Result<f64> {
        let s = self.dev.time(l, WARMUP, SAMPLES, PER_SAMPLE, TIMEOUT)?;
        Ok(median(&s.seconds))
    }

    /// Harris's copy of `n` elements from `a` to `b` with `value` (offset or stride), block
    /// `block`: effective GB/s counting 2 × element bytes (read + write) per element copied.
    pub fn harris_copy(
        &self,
        kind: CopyKind,
        elem: Elem,
        a: &Buffer,
        b: &Buffer,
        n: u64,
        value: u32,
        block: u32,
    ) -> Result<f64> {
        let name = match (kind, elem) {
            (CopyKind::Offset, Elem::Float) => "ws_offset_copy_f32",
            (CopyKind::Offset, Elem::Double) => "ws_offset_copy_f64",
            (CopyKind::Stride, Elem::Float) => "ws_stride_copy_f32",
            (CopyKind::Stride, Elem::Double) => "ws_stride_copy_f64",
        };
        let f = self.f(name)?;
        let (blocks, copied) = match kind {
            CopyKind::Offset => (n.div_ceil(block as u64), n.saturating_sub(value as u64)),
            CopyKind::Stride => {
                let threads = n / value.max(1) as u64;
                (
                    threads.div_ceil(block as u64).max(1),
                    threads.min(n.div_ceil(value.max(1) as u64)),
                )
            }
        };
        if blocks > i32::MAX as u64 || n > i32::MAX as u64 {
            return Err(Error::Argument(format!(
                "{n} elements: Harris's kernels index with int; at most 2^31 - 1"
            )));
        }
        let params = [p64(a.ptr()), p64(b.ptr()), p32(n as u32), p32(value)];
        let t = self.time(&Launch {
            function: &f,
            grid: [blocks as u32, 1, 1],
            block: [block, 1, 1],
            shared_bytes: 0,
            params: &params,
        })?;
        Ok(2.0 * elem.bytes() as f64 * copied as f64 / t / 1e9)
    }

    /// The float4 grid-stride copy of `a` to `b` (`bytes` each, a multiple of 16), best over
    /// five grid sizes (4, 8, 16, 32 blocks of 256 per SM, and one thread per float4): GB/s of
    /// bytes read + written.
    pub fn copy_f4(&self, a: &Buffer, b: &Buffer, bytes: u64) -> Result<f64> {
        let f = self.f("ws_copy_f4")?;
        let n4 = bytes / 16;
        let params = [p64(a.ptr()), p64(b.ptr()), p64(n4)];
        let mut best: f64 = 0.0;
        // A few waves of blocks per SM, and one float4 per thread (the whole array in one
        // grid): the same kernel, whichever the GPU runs fastest.
        let one_each = n4.div_ceil(256).clamp(1, i32::MAX as u64) as u32;
        for grid in [4u32, 8, 16, 32]
            .map(|w| self.dev.info.sms * w)
            .into_iter()
            .chain([one_each])
        {
            let t = self.time(&Launch {
                function: &f,
                grid: [grid, 1, 1],
                block: [256, 1, 1],
                shared_bytes: 0,
                params: &params,
            })?;
            best = best.max(2.0 * (n4 * 16) as f64 / t / 1e9);
        }
        Ok(best)
    }

    /// Re-reading `a` (`elems4` float4, a power of two) through L2 only: GB/s read.
    pub fn read_l2(&self, a: &Buffer, out: &Buffer, elems4: u64, passes: u32) -> Result<f64> {
        let f = self.f("ws_read_l2")?;
        let params = [
            p64(a.ptr()),
            p32((elems4 - 1) as u32),
            p32(passes),
            p64(out.ptr()),
        ];
        let t = self.time(&Launch {
            function: &f,
            grid: [self.dev.info.sms * 8, 1, 1],
            block: [256, 1, 1],
            shared_bytes: 0,
            params: &params,
        })?;
        // Each pass reads every element once (threads stride over the array).
        Ok(16.0 * elems4 as f64 * passes as f64 / t / 1e9)
    }

    /// Every block re-reading a 16 KiB array from its SM's L1: GB/s summed over the GPU.
    pub fn read_l1(&self, a: &Buffer, out: &Buffer, passes: u32) -> Result<f64> {
        let f = self.f("ws_read_l1")?;
        let elems4 = 1024u32; // 16 KiB
        let params = [p64(a.ptr()), p32(elems4 - 1), p32(passes), p64(out.ptr())];
        let (grid, block) = (self.dev.info.sms * 8, 256u32);
        let t = self.time(&Launch {
            function: &f,
            grid: [grid, 1, 1],
            block: [block, 1, 1],
            shared_bytes: 0,
            params: &params,
        })?;
        Ok(16.0 * grid as f64 * block as f64 * passes as f64 / t / 1e9)
    }
}

fn p64(x: u64) -> Vec<u8> {
    x.to_le_bytes().to_vec()
}

fn p32(x: u32) -> Vec<u8> {
    x.to_le_bytes().to_vec()
}

/// Times Harris's copy kernels on GPU 0 for each of `values` (offsets or strides) and returns
/// the effective bandwidth of each, GB/s: 2 × element bytes (read + write) per element
/// copied, divided by the median time per launch (1 warm-up, then [`SAMPLES`] samples of
/// [`PER_SAMPLE`] back-to-back launches, CUDA events). `n_elems` elements per array (2^28 in
/// copy-bandwidth.csv), `block` threads per block (256 there). Both arrays are filled with
/// random floats first; they hold `n_elems` (+ the largest offset) elements.
///
/// Errors: no driver, GPU or NVRTC; not enough device memory; a value of 0 for a stride;
/// `n_elems` over 2^31 − 1 (the kernels index with `int`).
pub fn measure_copy_sweep(
    kind: CopyKind,
    values: &[u32],
    elem: Elem,
    n_elems: u64,
    block: u32,
) -> Result<Vec<f64>> {
    let dev = Device::open(0)?;
    let bench = Bench::new(&dev)?;
    copy_sweep(&bench, kind, values, elem, n_elems, block)
}

/// [`measure_copy_sweep`] on an opened device.
pub fn copy_sweep(
    bench: &Bench,
    kind: CopyKind,
    values: &[u32],
    elem: Elem,
    n_elems: u64,
    block: u32,
) -> Result<Vec<f64>> {
    if kind == CopyKind::Stride && values.contains(&0) {
        return Err(Error::Argument("stride 0: strides start at 1".into()));
    }
    if block == 0 || block > 1024 {
        return Err(Error::Argument(format!(
            "block {block}: expected 1 to 1024 threads"
        )));
    }
    let extra = match kind {
        CopyKind::Offset => values.iter().copied().max().unwrap_or(0) as u64,
        CopyKind::Stride => 0,
    };
    let bytes = (n_elems + extra) * elem.bytes();
    let a = bench.dev.alloc(bytes)?;
    let b = bench.dev.alloc(bytes)?;
    bench.fill_random(&a, 1)?;
    bench.fill_random(&b, 2)?;
    values
        .iter()
        .map(|&v| bench.harris_copy(kind, elem, &a, &b, n_elems, v, block))
        .collect()
}

/// What calibration measured, with the raw figures behind each profile field.
#[derive(Clone, Debug, Serialize)]
pub struct Calibration {
    /// The profile (`warpscope_traffic::Profile`), ready for `--profile`.
    pub profile: Profile,
    /// Whether the device is in warpscope's GPU table (else the profile's `gpu` is the
    /// device's own name and `--gpu` cannot use it).
    pub in_table: bool,
    /// float4 grid-stride copy, GB/s read + written.
    pub copy_gbps: f64,
    /// One-float-per-thread copy (offset 0, block 256), effective GB/s.
    pub scalar_copy_gbps: f64,
    /// Stride-32 float copy, effective GB/s (8 bytes per thread).
    pub stride32_copy_gbps: f64,
    /// L2 re-read, GB/s.
    pub l2_gbps: f64,
    /// L1 re-read, GB/s over all SMs.
    pub l1_gbps: f64,
    /// DRAM bytes read per load of a stride-16-float load (ncu), when measured.
    pub dram_read_bytes_per_load: Option<f64>,
    /// DRAM bytes read per sector of a stride-8-float store (ncu), when measured.
    pub dram_read_bytes_per_partial_sector: Option<f64>,
    /// Array sizes used, bytes.
    pub copy_bytes: u64,
    /// Notes: what came from where, what was left at its default.
    pub notes: Vec<String>,
}

/// Threads of the DRAM probes (2^24: 1 GiB spanned by the stride-16 load, ≫ any L2).
pub const PROBE_THREADS: u64 = 1 << 24;

/// Launches the two DRAM probe kernels once each (for Nsight Compute to read
/// `dram__bytes_read.sum`): `ws_probe_load` (stride 16 floats) then `ws_probe_store` (stride
/// 8 floats), [`PROBE_THREADS`] threads each, on zero-filled memory.
pub fn dram_probes(dev: &Device) -> Result<()> {
    let bench = Bench::new(dev)?;
    let a = dev.alloc(PROBE_THREADS * 16 * 4)?;
    a.zero()?;
    let out = dev.alloc(4096)?;
    let grid = [(PROBE_THREADS / 256) as u32, 1, 1];
    let f = bench.f("ws_probe_load")?;
    let params = [p64(a.ptr()), p64(out.ptr()), p64(PROBE_THREADS), p32(16)];
    dev.launch(&Launch {
        function: &f,
        grid,
        block: [256, 1, 1],
        shared_bytes: 0,
        params: &params,
    })?;
    dev.wait("ws_probe_load", TIMEOUT)?;
    let f = bench.f("ws_probe_store")?;
    let params = [p64(a.ptr()), p64(PROBE_THREADS), p32(8)];
    dev.launch(&Launch {
        function: &f,
        grid,
        block: [256, 1, 1],
        shared_bytes: 0,
        params: &params,
    })?;
    dev.wait("ws_probe_store", TIMEOUT)
}

/// Measures GPU `dev` and builds a traffic [`Profile`]:
///
/// | field | measurement |
/// | --- | --- |
/// | `copy_gbps` | float4 grid-stride copy of `copy_bytes` per array, best of 5 grid sizes |
/// | `latency_ns` | Harris's copy at offset 0 (2^28 floats or what fits), block 256, through [`Profile::latency_from_scalar_copy`] |
/// | `dram_min_bytes_per_line` | Harris's stride copy at stride 32, through [`Profile::min_line_bytes_from_sparse_copy`] |
/// | `l2_gbps` | re-reading a quarter of L2 (power of two) 20 times through L2 only |
/// | `l1_gbps` | each block re-reading a 16 KiB array |
/// | `dram_read_granularity_bytes` | `dram_probe.0`: DRAM bytes per load of a stride-16-float load (from ncu), rounded to 32, 64 or 128 |
/// | `partial_write_read_bytes` | `dram_probe.1`: DRAM bytes read per sector of a stride-8-float store, rounded to a multiple of 32 |
///
/// `dram_probe` comes from running [`dram_probes`] under Nsight Compute (the caller does
/// that: it needs a second process); `None` keeps those two fields at their datasheet
/// defaults, said in `notes`. `origin` says device, driver and date.
///
/// Errors: not enough device memory for two 64 MiB arrays; what the launches report.
pub fn calibrate(dev: &Device, dram_probe: Option<(f64, f64)>, date: &str) -> Result<Calibration> {
    let bench = Bench::new(dev)?;
    let info = &dev.info;
    let (free, _) = dev.memory()?;
    // 2^28 floats (1 GiB) per array, as copy-bandwidth.csv; less when memory is short.
    let mut copy_bytes: u64 = 1 << 30;
    while 2 * copy_bytes + (64 << 20) > free && copy_bytes > (64 << 20) {
        copy_bytes /= 2;
    }
    if 2 * copy_bytes > free {
        return Err(Error::Argument(format!(
            "calibration needs two arrays of at least 64 MiB; the GPU has {} MiB free",
            free >> 20
        )));
    }
    let mut notes = Vec::new();
    if copy_bytes < (20 * info.l2_bytes).max(1 << 28) {
        notes.push(format!(
            "arrays of {} MiB (less than 2^28 floats: memory is short); DRAM figures may include L2 hits",
            copy_bytes >> 20
        ));
    }
    let a = dev.alloc(copy_bytes)?;
    let b = dev.alloc(copy_bytes)?;
    bench.fill_random(&a, 11)?;
    bench.fill_random(&b, 12)?;

    let copy_gbps = bench.copy_f4(&a, &b, copy_bytes)?;
    let n = (copy_bytes / 4).min(i32::MAX as u64);
    let scalar_copy_gbps = bench.harris_copy(CopyKind::Offset, Elem::Float, &a, &b, n, 0, 256)?;
    let stride32_copy_gbps =
        bench.harris_copy(CopyKind::Stride, Elem::Float, &a, &b, n, 32, 256)?;

    // L2: a power-of-two array of about a quarter of L2, re-read through L2 only.
    let mut l2_elems4: u64 = 1;
    while l2_elems4 * 2 * 16 <= info.l2_bytes / 4 {
        l2_elems4 *= 2;
    }
    let out = dev.alloc(info.sms as u64 * 8 * 256 * 4)?;
    // About 2 GB read in all: long enough for event timing.
    let passes = ((1u64 << 31) / (16 * l2_elems4)).clamp(20, 100_000) as u32;
    let l2_gbps = bench.read_l2(&a, &out, l2_elems4, passes)?;
    let l1_gbps = bench.read_l1(&a, &out, 4096)?;

    let table = find_gpu(&info.name);
    let latency_ns = match table {
        Some(g) => Profile::latency_from_scalar_copy(g, scalar_copy_gbps, 256),
        // The same Little's-law round with the device's own residency limits.
        None => {
            let resident = (info.max_threads_per_sm / 256)
                .min(info.max_blocks_per_sm)
                .max(1)
                * 8;
            info.sms as f64 * resident as f64 * 32.0 * 8.0 / (scalar_copy_gbps * 1e9) * 1e9
        }
    };
    let base = match table {
        Some(g) => Profile::datasheet(g),
        None => Profile {
            gpu: info.name.clone(),
            origin: String::new(),
            copy_gbps,
            dram_read_granularity_bytes: if info.cc.0 >= 7 { 64 } else { 32 },
            partial_write_read_bytes: 32,
            dram_min_bytes_per_line: 0,
            l2_gbps,
            l1_gbps,
            latency_ns,
        },
    };
    if table.is_none() {
        notes.push(format!(
            "'{}' is not in warpscope's GPU table (warpscope gpus): the profile is named after the device and --gpu cannot select it",
            info.name
        ));
    }
    let (gran, partial) = match dram_probe {
        Some((per_load, per_sector)) => {
            let g = [32u32, 64, 128]
                .into_iter()
                .min_by(|x, y| {
                    let d = |v: u32| ((per_load / v as f64).ln()).abs();
                    d(*x).total_cmp(&d(*y))
                })
                .unwrap_or(64);
            let p = ((per_sector / 32.0).round() * 32.0).clamp(0.0, 128.0) as u32;
            notes.push(format!(
                "DRAM probes (ncu dram__bytes_read.sum): stride-16-float load {per_load:.1} B per load -> granularity {g}; stride-8-float store {per_sector:.1} B read per sector -> {p}"
            ));
            (g, p)
        }
        None => {
            notes.push(format!(
                "dram_read_granularity_bytes ({}) and partial_write_read_bytes ({}) kept at their defaults: no Nsight Compute measurement",
                base.dram_read_granularity_bytes, base.partial_write_read_bytes
            ));
            (
                base.dram_read_granularity_bytes,
                base.partial_write_read_bytes,
            )
        }
    };
    let profile = Profile {
        gpu: base.gpu.clone(),
        origin: format!(
            "warpscope calibrate on {} (CC {}, {} SMs, {} MiB L2), driver CUDA {}, {date}",
            info.name,
            info.cc_string(),
            info.sms,
            info.l2_bytes >> 20,
            info.driver_cuda
        ),
        copy_gbps,
        dram_read_granularity_bytes: gran,
        partial_write_read_bytes: partial,
        dram_min_bytes_per_line: Profile::min_line_bytes_from_sparse_copy(
            copy_gbps,
            stride32_copy_gbps,
        ),
        l2_gbps,
        l1_gbps,
        latency_ns,
    };
    profile
        .check()
        .map_err(|e| Error::Argument(format!("calibration gave an invalid profile: {e}")))?;
    Ok(Calibration {
        profile,
        in_table: table.is_some(),
        copy_gbps,
        scalar_copy_gbps,
        stride32_copy_gbps,
        l2_gbps,
        l1_gbps,
        dram_read_bytes_per_load: dram_probe.map(|d| d.0),
        dram_read_bytes_per_partial_sector: dram_probe.map(|d| d.1),
        copy_bytes,
        notes,
    })
}

/// The GPU table's entry for a device name ("NVIDIA H100 80GB HBM3" → H100 SXM5 80GB), if any.
pub fn find_gpu(device_name: &str) -> Option<&'static warpscope_traffic::Gpu> {
    gpus::lookup(device_name).ok()
}

/// Summaries of samples in GB/s, for reports: (median, min, max).
pub fn spread(samples: &[f64]) -> Option<(f64, f64, f64)> {
    stats(samples).map(|s| (s.median, s.min, s.max))
}
