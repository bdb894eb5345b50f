//! `warpscope sweep offset|stride`: the seeds' experiment. Harris's copy kernels, interpreted
//! at every offset or stride, with their traffic and time predicted on each GPU asked for.

use anyhow::{bail, Context, Result};
use rayon::prelude::*;
use schemars::JsonSchema;
use serde::Serialize;

use crate::{analyze, AnalyzeRequest, GpuTarget};

/// The two copy kernels of Harris's "How to Access Global Memory Efficiently" (seed 003), as
/// `copy-bandwidth.csv` (ground truth, H100) ran them: `b[i] = a[i]` with `i` shifted by an
/// offset, or multiplied by a stride.
pub const HARRIS_COPY: &str = r#"
template <typename T>
__global__ void offset_copy(const T* a, T* b, int n, int offset)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x + offset;
    if (i < n) b[i] = a[i];
}

template <typename T>
__global__ void stride_copy(const T* a, T* b, int n, int stride)
{
    int i = (blockIdx.x * blockDim.x + threadIdx.x) * stride;
    if (i < n) b[i] = a[i];
}
"#;

/// Which of the two experiments.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum SweepKind {
    /// `i = blockIdx.x·blockDim.x + threadIdx.x + offset`, n threads.
    Offset,
    /// `i = (blockIdx.x·blockDim.x + threadIdx.x)·stride`, n / stride threads.
    Stride,
}

impl SweepKind {
    pub fn name(self) -> &'static str {
        match self {
            SweepKind::Offset => "offset",
            SweepKind::Stride => "stride",
        }
    }
}

/// The experiment: kernel, element type, values, array length and block size.
#[derive(Clone, Debug)]
pub struct HarrisSweep {
    pub kind: SweepKind,
    /// `float` or `double`.
    pub elem: &'static str,
    /// Offsets or strides, in elements.
    pub values: Vec<u32>,
    /// Elements per array (`n`).
    pub n: u64,
    /// Threads per block.
    pub block: u32,
}

/// One predicted point.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct SweepPoint {
    /// The offset or stride, in elements.
    pub value: u32,
    /// Effective bandwidth, GB/s (1e9 B/s): bytes read plus written by the active threads
    /// (Harris's count) ÷ predicted time.
    pub effective_gbps: f64,
    /// Predicted kernel time, seconds.
    pub predicted_seconds: f64,
    /// The bound that set the time ("dram", "l2", "l1", "latency").
    pub limit: String,
    /// Transactions (sectors from 5.x) per request of the load.
    pub load_transactions_per_request: f64,
}

/// One GPU's predicted curve.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct Curve {
    /// The GPU's table name (`warpscope gpus`).
    pub gpu: String,
    /// Its compute capability, major.minor.
    pub cc: String,
    /// "datasheet" or the calibration profile's origin.
    pub profile: String,
    /// One point per value, in the order swept.
    pub points: Vec<SweepPoint>,
}

/// One measured point of a GPU.
#[derive(Clone, Copy, Debug, Serialize, JsonSchema)]
pub struct MeasuredPoint {
    /// The offset or stride, in elements.
    pub value: u32,
    /// Measured effective bandwidth, GB/s (1e9 B/s).
    pub effective_gbps: f64,
}

/// The result of `warpscope sweep offset|stride`: the predicted curves, and when measured
/// figures were given (`--measured`, `--measure`) those and the errors of the measured GPU's
/// curve.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct HarrisOutput {
    /// The experiment.
    pub experiment: SweepKind,
    /// Element type of the copied arrays: `float` or `double`.
    pub elem: String,
    /// Elements per array.
    pub n: u64,
    /// Threads per block.
    pub block: u32,
    /// One predicted curve per GPU, in the order asked for.
    pub curves: Vec<Curve>,
    /// The GPU whose figures were measured (a name of `curves`), when any.
    pub measured_gpu: Option<String>,
    /// Its measured points; absent when nothing was measured.
    pub measured: Option<Vec<MeasuredPoint>>,
    /// Median of |predicted − measured| ÷ measured over the common values, as a fraction
    /// (0.05 = 5 %); absent without measured figures.
    pub median_error: Option<f64>,
    /// The largest such relative error, as a fraction.
    pub worst_error: Option<f64>,
}

/// Interprets the copy kernel at each value and predicts its time on each GPU: one
/// interpretation per (GPU, value), in parallel.
///
/// Errors: a value of 0 for a stride, an `n` that does not fit the kernel's `int`, a launch
/// the GPU cannot run (grid too large for its CC: lower `n`).
pub fn harris_sweep(s: &HarrisSweep, gpus: &[GpuTarget]) -> Result<Vec<Curve>> {
    if s.n == 0 || s.n > i32::MAX as u64 {
        bail!(
            "--n {}: the kernels index with int; choose 1 to {}",
            s.n,
            i32::MAX
        );
    }
    if s.block == 0 {
        bail!("--block 0: a block needs at least one thread");
    }
    if s.kind == SweepKind::Stride && s.values.contains(&0) {
        bail!("stride 0 copies one element with every thread; start the range at 1");
    }
    // One interpretation per value feeds every GPU's model; values run in parallel.
    let per_value: Vec<Vec<SweepPoint>> = s
        .values
        .par_iter()
        .map(|&v| points(s, gpus, v))
        .collect::<Result<_>>()?;
    let curves = gpus
        .iter()
        .enumerate()
        .map(|(i, g)| Curve {
            gpu: g.gpu.name.to_string(),
            cc: g.gpu.cc.to_string(),
            profile: g.profile.origin.clone(),
            points: per_value.iter().map(|p| p[i].clone()).collect(),
        })
        .collect();
    Ok(curves)
}

/// The points of every GPU at value `v`, in the order of `gpus`.
fn points(s: &HarrisSweep, gpus: &[GpuTarget], v: u32) -> Result<Vec<SweepPoint>> {
    let threads = match s.kind {
        SweepKind::Offset => s.n,
        SweepKind::Stride => s.n.div_ceil(u64::from(v)),
    };
    let grid = threads.div_ceil(u64::from(s.block));
    let grid = u32::try_from(grid).context("the grid does not fit 32 bits: lower --n")?;
    let kernel = format!("{}_copy<{}>", s.kind.name(), s.elem);
    let mut req = AnalyzeRequest::new(
        &format!("<{} copy>", s.kind.name()),
        HARRIS_COPY,
        &kernel,
        [grid, 1, 1],
        [s.block, 1, 1],
    )
    .arg("n", s.n)
    .arg(s.kind.name(), v);
    // Offsets read up to n + offset - 1: size the arrays so every thread stays in bounds.
    req.allocs = vec![
        ("a".into(), s.n + u64::from(v)),
        ("b".into(), s.n + u64::from(v)),
    ];
    req.gpus = gpus.to_vec();
    let an = analyze(&req).with_context(|| format!("{} {v}", s.kind.name()))?;
    if an.traffic.len() != gpus.len() {
        bail!(
            "internal: {} GPUs asked for, {} traffic reports",
            gpus.len(),
            an.traffic.len()
        );
    }
    Ok(gpus
        .iter()
        .zip(&an.traffic)
        .map(|(g, t)| {
            // The load's counters on this GPU's compute capability.
            let cc = g.gpu.cc.to_string();
            let load = an
                .architectures
                .iter()
                .find(|x| x.cc == cc)
                .and_then(|x| x.sites.iter().find(|x| x.op == warpscope_model::Op::Load))
                .map(|x| x.counters)
                .unwrap_or_default();
            SweepPoint {
                value: v,
                effective_gbps: t.effective_gbps,
                predicted_seconds: t.launch.predicted_seconds,
                limit: format!("{:?}", t.launch.bounds.limit).to_lowercase(),
                load_transactions_per_request: if load.requests > 0 {
                    load.transactions as f64 / load.requests as f64
                } else {
                    0.0
                },
            }
        })
        .collect())
}

/// Measured effective bandwidth, GB/s, by value, read from a CSV of
/// `experiment,parameter,effective_GBps` rows (the format of the ground truth's
/// `copy-bandwidth.csv`; `#` lines are comments) for the experiment `kind`.
///
/// Errors: an unreadable row (named by its line number).
pub fn read_measured(csv: &str, kind: SweepKind) -> Result<Vec<(u32, f64)>> {
    let mut out = Vec::new();
    for (i, line) in csv.lines().enumerate() {
        let l = line.trim();
        if l.is_empty() || l.starts_with('#') || l.starts_with("experiment") {
            continue;
        }
        let f: Vec<&str> = l.split(',').map(str::trim).collect();
        let bad = || {
            format!(
                "line {}: expected experiment,parameter,effective_GBps, got '{l}'",
                i + 1
            )
        };
        if f.len() < 3 {
            bail!(bad());
        }
        if f[0] != kind.name() {
            continue;
        }
        out.push((
            f[1].parse().with_context(bad)?,
            f[2].parse().with_context(bad)?,
        ));
    }
    Ok(out)
}

/// One compared value: (value, predicted GB/s, measured GB/s, relative error).
pub type Compared = (u32, f64, f64, f64);

/// Relative errors |predicted − measured| / measured of `curve` at the measured values, and
/// their median and maximum (`None` when no value is in common).
pub fn compare(curve: &Curve, measured: &[(u32, f64)]) -> Option<(f64, f64, Vec<Compared>)> {
    let mut rows = Vec::new();
    for &(v, m) in measured {
        if let Some(p) = curve.points.iter().find(|p| p.value == v) {
            rows.push((v, p.effective_gbps, m, (p.effective_gbps - m).abs() / m));
        }
    }
    if rows.is_empty() {
        return None;
    }
    let mut e: Vec<f64> = rows.iter().map(|r| r.3).collect();
    e.sort_by(|a, b| a.total_cmp(b));
    let median = if e.len() % 2 == 1 {
        e[e.len() / 2]
    } else {
        (e[e.len() / 2 - 1] + e[e.len() / 2]) / 2.0
    };
    Some((median, e[e.len() - 1], rows))
}
