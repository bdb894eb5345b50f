//! `warpscope run`, `verify` and `calibrate`: the kernel on the GPU at hand (cargo feature
//! `cuda`). The work is in `warpscope-gpu`, the analysis side (warpscope's predictions for
//! the device's compute capability, the launch's plan) in `warpscope::gpu`; this module
//! holds the flags, the batch files, the runs and the output.

use anyhow::{anyhow, bail, Context, Result};
use clap::{Parser, ValueEnum};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;
use warpscope::gpu::{modeled, plan_all, plan_of};
use warpscope::report::{thousands, Analysis};
use warpscope_gpu::ncu::{self, Verdict};
use warpscope_gpu::plan::{self, LaunchSpec, ParamPlan, Plan, Sizing};
use warpscope_gpu::run::Runner;
use warpscope_gpu::stats::{stats, Stats};
use warpscope_gpu::{bench, Device, DeviceInfo};

/// A launch on the GPU: the kernel of a file and its configuration (as `analyze` takes
/// them), or a batch file of such launches.
#[derive(clap::Args, Clone, Debug)]
pub struct GpuLaunch {
    /// The CUDA source file (.cu).
    #[arg(required_unless_present = "batch")]
    file: Option<String>,
    /// Kernel name; a template with its arguments, e.g. 'stride<float>' (instantiated by
    /// NVRTC name expression).
    #[arg(long, required_unless_present = "batch")]
    kernel: Option<String>,
    /// Grid dimensions X[,Y[,Z]] (blocks).
    #[arg(long, required_unless_present = "batch")]
    grid: Option<String>,
    /// Block dimensions X[,Y[,Z]] (threads).
    #[arg(long, required_unless_present = "batch")]
    block: Option<String>,
    /// Scalar kernel parameter NAME=VALUE (repeatable).
    #[arg(long = "arg", value_name = "NAME=VALUE")]
    args: Vec<String>,
    /// Size of a pointer parameter's allocation in elements, NAME=ELEMENTS. Without it the
    /// allocation spans the bytes warpscope's interpreter sees the kernel touch (memory read
    /// as zero).
    #[arg(long = "alloc", value_name = "NAME=ELEMENTS")]
    allocs: Vec<String>,
    /// Preprocessor macro NAME[=VALUE] (passed to NVRTC and to the interpreter).
    #[arg(short = 'D', value_name = "NAME[=VALUE]")]
    defines: Vec<String>,
    /// Bytes of extern __shared__ memory per block.
    #[arg(long, default_value_t = 0, value_name = "BYTES")]
    dynamic_smem: u64,
    /// How to fill allocations, as analyze takes it: NAME=MODE, or MODE for all of them;
    /// MODE zero (the default), iota, random[:SEED], const:V or file:PATH (.npy or raw
    /// little-endian). Use random for timings. Repeatable, later wins. The analysis compared
    /// with the GPU reads the same data.
    #[arg(long = "init", value_name = "NAME=MODE")]
    init: Vec<String>,
    /// A texture or surface object parameter, as analyze takes it:
    /// NAME=KIND:W[xH[xD]]:FORMAT[,addr=…][,filter=…][,normalized][,read=…][,pitch=BYTES].
    /// warpscope makes it on the GPU, zero-filled: a CUDA array (a surface-enabled one for a
    /// cudaSurfaceObject_t parameter, a layered one when the kernel calls tex2DLayered on it),
    /// linear memory, or pitched rows of exactly the pitch the model uses. Repeatable.
    #[arg(long = "texture", value_name = "NAME=KIND:SIZE:FORMAT")]
    textures: Vec<String>,
    /// Iterations a loop may run in one block in the interpreter.
    #[arg(long, default_value_t = warpscope::cuda::DEFAULT_MAX_STEPS)]
    max_steps: u64,
    /// Launches from a file instead, one per line in the form of this command line
    /// (FILE --kernel K --grid G --block B [--arg …] [--alloc …] [--init …]); '#' starts a
    /// comment; paths relative to the current folder.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["file", "kernel", "grid", "block"])]
    batch: Option<String>,
    /// GPU ordinal.
    #[arg(long, default_value_t = 0)]
    device: usize,
    /// Seconds a launch (or a timed sample) may take before warpscope gives up on it.
    #[arg(long, default_value_t = 60.0, value_name = "SECONDS")]
    timeout: f64,
}

/// One line of a batch file.
#[derive(Parser)]
#[command(name = "batch-line", no_binary_name = true)]
struct BatchLine {
    #[command(flatten)]
    launch: GpuLaunch,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum Format {
    Table,
    Json,
}

#[derive(clap::Args, Debug)]
pub struct RunArgs {
    #[command(flatten)]
    launch: GpuLaunch,
    /// Timed launches (each timed alone with CUDA events).
    #[arg(long, default_value_t = 20)]
    repeat: u32,
    /// Untimed launches first.
    #[arg(long, default_value_t = 3)]
    warmup: u32,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
    /// Launch each kernel once, untimed, and print nothing on standard output: what `verify`
    /// profiles under Nsight Compute.
    #[arg(long, hide = true)]
    once: bool,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum ClockControl {
    /// Leave the GPU's clocks as they are (as the H100 measurements were made).
    None,
    /// Lock them to base clocks (ncu's default).
    Base,
}

#[derive(clap::Args, Debug)]
pub struct VerifyArgs {
    #[command(flatten)]
    launch: GpuLaunch,
    /// Nsight Compute executable (default: ncu on PATH, then /usr/local/cuda/bin and
    /// /opt/nvidia/nsight-compute/*/).
    #[arg(long, value_name = "PATH")]
    ncu: Option<String>,
    /// ncu --clock-control.
    #[arg(long, value_enum, default_value_t = ClockControl::None)]
    clock_control: ClockControl,
    /// Fail on known-noisy shared-load wavefronts too (see the rule printed under the table).
    #[arg(long)]
    strict: bool,
    /// Also compare per source line (a second ncu pass with its source counters; single
    /// launches only).
    #[arg(long)]
    lines: bool,
    /// Save ncu's raw CSV output here.
    #[arg(long, value_name = "FILE")]
    ncu_csv: Option<String>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
}

#[derive(clap::Args, Debug)]
pub struct CalibrateArgs {
    /// Where to write the profile (default: warpscope-profile-<gpu>.json).
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    output: Option<String>,
    /// Nsight Compute for the DRAM granularity and partial-write probes (default: ncu on
    /// PATH; without it those two fields keep their defaults).
    #[arg(long, value_name = "PATH")]
    ncu: Option<String>,
    /// Do not run the ncu probes.
    #[arg(long)]
    no_ncu: bool,
    /// Also time Harris's copy sweep (offsets 0..32, strides 1..32, 2^28 floats, block 256)
    /// and write it as CSV in copy-bandwidth.csv's form.
    #[arg(long, value_name = "FILE")]
    sweep_csv: Option<String>,
    /// GPU ordinal.
    #[arg(long, default_value_t = 0)]
    device: usize,
    /// Output format of the summary.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
    /// Run the DRAM probe kernels once (what calibrate profiles under ncu).
    #[arg(long, hide = true)]
    probe_dram: bool,
}

/// A list of launches as a JSON object, beside `schema_version` (run and verify).
#[derive(serde::Serialize)]
struct Launches<'a, T> {
    launches: &'a [T],
}

/// `launches` as versioned, pretty JSON.
fn launches_json<T: serde::Serialize>(launches: &[T]) -> Result<String> {
    super::analyze::json(&warpscope::report::Versioned::new(Launches { launches }))
}

fn out(text: &str) -> Result<()> {
    match std::io::stdout().lock().write_all(text.as_bytes()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        r => r.context("cannot write to standard output"),
    }
}

fn gpu_err(e: warpscope_gpu::Error) -> anyhow::Error {
    anyhow!("{e}")
}

/// The launches of `l`: its own, or its batch file's.
fn specs(l: &GpuLaunch) -> Result<Vec<LaunchSpec>> {
    let Some(batch) = &l.batch else {
        return Ok(vec![spec(l)?]);
    };
    let text = super::input::read_text(batch, "--batch")?;
    let mut v = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let at = || format!("{batch}:{}", i + 1);
        let words = plan::split_words(line).map_err(|e| anyhow!("{}: {e}", at()))?;
        if words.is_empty() {
            continue;
        }
        let b = BatchLine::try_parse_from(&words)
            .map_err(|e| anyhow!("{}: {}", at(), e.render().to_string().trim_end()))?;
        if b.launch.batch.is_some() {
            bail!("{}: --batch inside a batch file", at());
        }
        v.push(spec(&b.launch).with_context(at)?);
    }
    if v.is_empty() {
        bail!("--batch {batch}: no launches in the file");
    }
    Ok(v)
}

fn spec(l: &GpuLaunch) -> Result<LaunchSpec> {
    let (Some(file), Some(kernel), Some(grid), Some(block)) =
        (&l.file, &l.kernel, &l.grid, &l.block)
    else {
        bail!("give FILE --kernel NAME --grid X[,Y,Z] --block X[,Y,Z], or --batch FILE");
    };
    let source = super::input::read_text(file, "file")?;
    let allocs = plan::parse_pairs(&l.allocs, "alloc")
        .map_err(gpu_err)?
        .into_iter()
        .map(|(n, v)| {
            v.parse::<u64>()
                .map(|e| (n.clone(), e))
                .with_context(|| format!("--alloc {n}={v}: expected a number of elements"))
        })
        .collect::<Result<_>>()?;
    Ok(LaunchSpec {
        file: file.clone(),
        source,
        kernel: kernel.clone(),
        grid: plan::parse_dims(grid, "grid").map_err(gpu_err)?,
        block: plan::parse_dims(block, "block").map_err(gpu_err)?,
        args: plan::parse_pairs(&l.args, "arg").map_err(gpu_err)?,
        allocs,
        defines: l.defines.clone(),
        dynamic_shared_bytes: l.dynamic_smem,
        max_steps: l.max_steps,
        init: l
            .init
            .iter()
            .map(|s| plan::parse_init(s))
            .collect::<Result<_, _>>()
            .map_err(gpu_err)?,
        textures: l.textures.clone(),
    })
}

/// Bytes of global loads and stores the kernel asks for (warpscope's `bytes_requested`).
fn requested_bytes(a: &Analysis) -> u64 {
    let t = &a.architectures[0].totals;
    t.global_load.bytes_requested + t.global_store.bytes_requested
}

fn mib(b: u64) -> String {
    if b >= 1 << 20 {
        format!("{:.1} MiB", b as f64 / (1u64 << 20) as f64)
    } else if b >= 1024 {
        format!("{:.1} KiB", b as f64 / 1024.0)
    } else {
        format!("{b} B")
    }
}

fn alloc_summary(p: &Plan) -> String {
    let v: Vec<String> = p
        .params
        .iter()
        .filter_map(|x| match x {
            ParamPlan::Pointer {
                name,
                bytes,
                sizing,
                init,
                ..
            } => Some(format!(
                "{name} {} ({}, {})",
                mib(*bytes),
                match sizing {
                    Sizing::Alloc => "--alloc",
                    Sizing::File => "--init file",
                    Sizing::Touched => "touched range",
                    Sizing::Untouched => "untouched",
                },
                init
            )),
            ParamPlan::Texture {
                name,
                desc,
                surface,
                layered,
            } => Some(format!(
                "{name} {} ({}{} {:?} of {}, zero)",
                mib(plan::texture_bytes(desc)),
                if *layered { "layered " } else { "" },
                if *surface { "surface on" } else { "texture on" },
                desc.kind,
                desc.format
            )),
            _ => None,
        })
        .collect();
    if v.is_empty() {
        "none".into()
    } else {
        v.join(", ")
    }
}

/// One timed launch, as `run --format json` prints it.
#[derive(serde::Serialize)]
struct RunReport {
    file: String,
    kernel: String,
    args: Vec<(String, String)>,
    grid: [u32; 3],
    block: [u32; 3],
    device: String,
    cc: String,
    registers: u32,
    plan: Plan,
    warmup: u32,
    repeat: u32,
    /// Seconds per launch.
    seconds: Stats,
    /// Bytes of global loads + stores requested (warpscope, device CC).
    bytes_requested: Option<u64>,
    /// bytes_requested / median seconds / 1e9.
    effective_gbps: Option<f64>,
    notes: Vec<String>,
}

pub fn run(a: RunArgs) -> Result<()> {
    let specs = specs(&a.launch)?;
    let timeout = Duration::from_secs_f64(a.launch.timeout.max(0.001));
    if a.once {
        return run_once(&specs, a.launch.device, timeout);
    }
    let dev = Device::open(a.launch.device).map_err(gpu_err)?;
    let cc = dev.info.cc_string();
    let modeled = modeled(&dev.info);
    // NVRTC first: the GPU's compiler has the last word on the source.
    let mut runner = Runner::new(&dev);
    runner
        .compile(&specs.iter().collect::<Vec<_>>())
        .map_err(gpu_err)?;
    let planned = plan_all(&specs, modeled.then_some(cc.as_str()));
    let mut reports = Vec::new();
    for (s, (p, an)) in specs.iter().zip(planned) {
        let p = p?;
        let an = an.transpose()?;
        let ready = runner.prepare(s, &p).map_err(gpu_err)?;
        let samples = runner
            .time(&ready, a.warmup, a.repeat.max(1), timeout)
            .map_err(gpu_err)?;
        let st = stats(&samples.seconds).ok_or_else(|| anyhow!("no valid timing samples"))?;
        let req = an.as_ref().map(requested_bytes);
        let mut notes = Vec::new();
        if !modeled {
            notes.push(format!(
                "warpscope does not model CC {cc}: no requested bytes"
            ));
        }
        let total = p.allocated_bytes();
        if total < 2 * dev.info.l2_bytes {
            notes.push(format!(
                "the allocations ({}) fit in L2 ({}) twice over: repeated launches partly measure the cache",
                mib(total),
                mib(dev.info.l2_bytes)
            ));
        }
        if s.init.is_empty() {
            notes.push("memory is zero (analyze's assumption); --init random times on data".into());
        }
        reports.push(RunReport {
            file: s.file.clone(),
            kernel: s.kernel.clone(),
            args: s.args.clone(),
            grid: s.grid,
            block: s.block,
            device: dev.info.name.clone(),
            cc: cc.clone(),
            registers: ready.function.registers().unwrap_or(0),
            plan: p,
            warmup: a.warmup,
            repeat: a.repeat.max(1),
            seconds: st,
            bytes_requested: req,
            effective_gbps: req.map(|b| b as f64 / st.median / 1e9),
            notes,
        });
    }
    match a.format {
        Format::Json => out(&launches_json(&reports)?),
        Format::Table => {
            let mut t = String::new();
            for r in &reports {
                let us = |s: f64| s * 1e6;
                t += &format!(
                    "{} — {} — grid ({},{},{}) block ({},{},{}) — {} (CC {}), {} registers\n",
                    label(&r.kernel, &r.args),
                    r.file,
                    r.grid[0],
                    r.grid[1],
                    r.grid[2],
                    r.block[0],
                    r.block[1],
                    r.block[2],
                    r.device,
                    r.cc,
                    r.registers
                );
                t += &format!("  allocations: {}\n", alloc_summary(&r.plan));
                t += &format!(
                    "  time: median {:.2} µs (min {:.2}, max {:.2}, IQR {:.2}; {} launches after {} warm-up)\n",
                    us(r.seconds.median),
                    us(r.seconds.min),
                    us(r.seconds.max),
                    us(r.seconds.iqr()),
                    r.repeat,
                    r.warmup
                );
                if let (Some(b), Some(g)) = (r.bytes_requested, r.effective_gbps) {
                    t += &format!(
                        "  requested: {} B of global loads and stores (warpscope, CC {})\n",
                        thousands(b),
                        r.cc
                    );
                    t += &format!("  effective bandwidth: {g:.1} GB/s (requested bytes / median time; GB/s = 1e9 B/s)\n");
                }
                for n in &r.notes {
                    t += &format!("  note: {n}\n");
                }
            }
            out(&t)
        }
    }
}

fn label(kernel: &str, args: &[(String, String)]) -> String {
    let a: Vec<String> = args.iter().map(|(n, v)| format!("{n}={v}")).collect();
    if a.is_empty() {
        kernel.to_string()
    } else {
        format!("{kernel} {}", a.join(";"))
    }
}

/// `run --once`: each launch once, in order, nothing on standard output (Nsight Compute's CSV
/// goes there).
fn run_once(specs: &[LaunchSpec], device: usize, timeout: Duration) -> Result<()> {
    let dev = Device::open(device).map_err(gpu_err)?;
    let mut runner = Runner::new(&dev);
    runner
        .compile(&specs.iter().collect::<Vec<_>>())
        .map_err(gpu_err)?;
    for (i, s) in specs.iter().enumerate() {
        let p = plan_of(s).with_context(|| format!("{} {}", s.file, s.label()))?;
        let ready = runner.prepare(s, &p).map_err(gpu_err)?;
        runner.once(&ready, timeout).map_err(gpu_err)?;
        if super::quiet() {
            continue;
        }
        eprintln!(
            "warpscope: launch {} of {} done: {} {}",
            i + 1,
            specs.len(),
            s.file,
            s.label()
        );
    }
    Ok(())
}

/// One launch of `verify`, as `--format json` prints it.
#[derive(serde::Serialize)]
struct VerifyReport {
    file: String,
    kernel: String,
    args: Vec<(String, String)>,
    grid: [u32; 3],
    block: [u32; 3],
    ncu_kernel: String,
    comparison: ncu::Comparison,
    lines: Vec<LineReport>,
    #[serde(skip)]
    hardware: BTreeMap<String, f64>,
}

/// Per-source-line comparison: warpscope's sites summed per line against ncu's instrumented
/// source counters of the instructions attributed to that line (`-lineinfo`).
#[derive(serde::Serialize, Clone, Debug)]
struct LineReport {
    line: u32,
    counter: &'static str,
    predicted: u64,
    measured: Option<f64>,
    /// Whether a difference fails (sectors and wavefronts; requests are shown).
    compared: bool,
}

impl LineReport {
    fn equal(&self) -> bool {
        self.measured
            .is_some_and(|m| (m - self.predicted as f64).abs() < 0.5)
    }
}

/// The ncu arguments of a source-counter pass (`--print-source` `what`).
fn source_args(clock: &str, what: &str) -> Vec<String> {
    [
        "--clock-control",
        clock,
        "--csv",
        "--section",
        "SourceCounters",
        "--page",
        "source",
        "--print-source",
        what,
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

/// warpscope's figures of `site` in `verify`'s columns ([`ncu::COUNTERS`], named by
/// [`warpscope::report::ncu`]): (column, value).
fn site_figures(s: &warpscope::report::SiteReport) -> Vec<(&'static str, u64)> {
    warpscope::report::ncu::row_metrics(s.space, s.op, s.ptx.as_deref(), &s.counters)
        .into_iter()
        .filter(|(m, _)| ncu::COUNTERS.iter().any(|c| c.column == m.column))
        .map(|(m, v)| (m.column, v))
        .collect()
}

/// warpscope's counts per line and counter, next to the instrumented ones (the compared
/// counters: those ncu's source page counts).
fn line_reports(an: &Analysis, sc: &ncu::SourceCounts) -> Vec<LineReport> {
    // The source page's columns (global and shared; no local ones are read from it).
    let compared = |k: &str| {
        !k.starts_with("local_") && ncu::COUNTERS.iter().any(|c| c.column == k && c.compared)
    };
    let mut pred: BTreeMap<(u32, &'static str), u64> = BTreeMap::new();
    for s in &an.architectures[0].sites {
        for (k, v) in site_figures(s) {
            if compared(k) {
                *pred.entry((s.line, k)).or_default() += v;
            }
        }
    }
    // Lines where ncu counted something warpscope did not predict, too.
    for (line, m) in &sc.lines {
        for (k, v) in m {
            if *v != 0.0 {
                pred.entry((*line, k)).or_default();
            }
        }
    }
    pred.into_iter()
        .map(|((line, counter), p)| LineReport {
            line,
            counter,
            predicted: p,
            measured: Some(
                sc.lines
                    .get(&line)
                    .and_then(|m| m.get(counter))
                    .copied()
                    .unwrap_or(0.0),
            ),
            compared: !counter.ends_with("requests"),
        })
        .collect()
}

/// warpscope's figures in ncu's columns, summed over the sites (which site counts where:
/// `warpscope::report::ncu::row_metrics`: cp.async's shared side nowhere, ldmatrix's
/// wavefronts but not its instructions, TMA's global side in the TMA columns).
fn predicted(a: &Analysis) -> ncu::Predicted {
    let mut m = ncu::Predicted::new();
    for c in ncu::COUNTERS {
        if warpscope::report::ncu::METRICS
            .iter()
            .any(|x| x.column == c.column)
        {
            m.insert(c.column, 0);
        }
    }
    for s in &a.architectures[0].sites {
        for (k, v) in site_figures(s) {
            *m.entry(k).or_default() += v;
        }
    }
    m
}

pub fn verify(a: VerifyArgs) -> Result<()> {
    let specs = specs(&a.launch)?;
    let info = warpscope_gpu::device_info(a.launch.device).map_err(gpu_err)?;
    if !modeled(&info) {
        bail!(
            "warpscope does not model CC {} ({}): nothing to compare",
            info.cc_string(),
            info.name
        );
    }
    let ncu_path = ncu::find(a.ncu.as_deref()).map_err(gpu_err)?;
    let cc = info.cc_string();
    // NVRTC errors here, with their file:line, rather than from inside the profiled child;
    // a launch whose file NVRTC cannot compile fails alone.
    let all: Vec<&LaunchSpec> = specs.iter().collect();
    let not_compiled: Vec<Option<String>> =
        match warpscope_gpu::run::compile_groups(&all, info.cc, false) {
            Ok(_) => vec![None; specs.len()],
            Err(_) => specs
                .iter()
                .map(|s| {
                    warpscope_gpu::run::compile_groups(&[s], info.cc, false)
                        .err()
                        .map(|e| e.to_string())
                })
                .collect(),
        };
    let planned = plan_all(&specs, Some(&cc));
    // The child process gets every allocation size explicitly: it need not interpret again.
    // A launch that cannot be planned or analyzed fails alone; the others are measured.
    let tmp = TempDir::new("verify")?;
    let batch = tmp.0.path().join("launches.txt");
    let mut child_lines = vec![String::new(); specs.len()];
    let mut analyses: Vec<Option<Analysis>> = Vec::new();
    let mut failed: Vec<Option<String>> = vec![None; specs.len()];
    for (i, (s, (p, an))) in specs.iter().zip(planned).enumerate() {
        let an = an.unwrap_or_else(|| Err(anyhow!("no analysis was asked for")));
        if let Some(e) = &not_compiled[i] {
            failed[i] = Some(e.clone());
            analyses.push(None);
            continue;
        }
        match (p, an) {
            (Ok(p), Ok(an)) => {
                let mut child = s.clone();
                child.allocs = p.alloc_elements();
                child_lines[i] = child.to_line();
                analyses.push(Some(an));
            }
            (Err(e), _) | (_, Err(e)) => {
                failed[i] = Some(format!("{e:#}"));
                analyses.push(None);
            }
        }
    }
    let exe = std::env::current_exe().context("cannot find warpscope's own executable")?;
    let child_args = |batch: &std::path::Path| -> Vec<String> {
        vec![
            "run".into(),
            "--batch".into(),
            batch.display().to_string(),
            "--once".into(),
            "--device".into(),
            a.launch.device.to_string(),
            "--timeout".into(),
            a.launch.timeout.to_string(),
        ]
    };
    let write_batch = |path: &std::path::Path, which: &[usize]| -> Result<()> {
        let text: String = which
            .iter()
            .map(|&i| format!("{}\n", child_lines[i]))
            .collect();
        std::fs::write(path, text).with_context(|| format!("cannot write {}", path.display()))
    };
    let clock = match a.clock_control {
        ClockControl::None => "none",
        ClockControl::Base => "base",
    };
    let ncu_args: Vec<String> = [
        "--clock-control",
        clock,
        "--print-units",
        "base",
        "--csv",
        "--target-processes",
        "all",
        "--metrics",
    ]
    .iter()
    .map(|s| s.to_string())
    .chain([ncu::metrics_list(info.cc.0)])
    .collect();
    // Measure the launches in one profiled run; when the run stops at a launch (a kernel
    // fault, a timeout, a launch the GPU refuses), that launch fails and a fresh run
    // measures the rest. Results match launches in order, skipping other kernels'.
    let mut measured: Vec<Option<BTreeMap<String, f64>>> = vec![None; specs.len()];
    let mut ncu_names: Vec<String> = vec![String::new(); specs.len()];
    let mut csv = String::new();
    let mut pending: Vec<usize> = (0..specs.len()).filter(|&i| failed[i].is_none()).collect();
    while !pending.is_empty() {
        write_batch(&batch, &pending)?;
        let r =
            ncu::run_unchecked(&ncu_path, &ncu_args, &exe, &child_args(&batch)).map_err(gpu_err)?;
        csv += &r.stdout;
        let results = ncu::parse_csv(&r.stdout).unwrap_or_default();
        let mut j = 0;
        let mut done = 0;
        for &i in &pending {
            while j < results.len() && !ncu::name_matches(&specs[i].kernel, &results[j].name) {
                j += 1;
            }
            if j >= results.len() {
                break;
            }
            measured[i] = Some(results[j].metrics.clone());
            ncu_names[i] = results[j].name.clone();
            j += 1;
            done += 1;
        }
        if done == pending.len() {
            break;
        }
        let why = child_error(&r);
        if done == 0 && why.is_none() {
            bail!(
                "ncu gave no result for {} {} (the profiled run stopped early?); its output ends:\n{}",
                specs[pending[0]].file,
                specs[pending[0]].label(),
                tail(&format!("{}\n{}", r.stdout, r.stderr), 15)
            );
        }
        let stopped = pending[done];
        failed[stopped] = Some(why.unwrap_or_else(|| {
            format!(
                "the profiled run stopped at this launch; its output ends:\n{}",
                tail(&r.stderr, 8)
            )
        }));
        pending.drain(..=done);
    }
    if let Some(f) = &a.ncu_csv {
        std::fs::write(f, &csv).with_context(|| format!("cannot write {f}"))?;
    }
    let mut reports = Vec::new();
    for (i, s) in specs.iter().enumerate() {
        let comparison = match (&failed[i], &measured[i], &analyses[i]) {
            (None, Some(m), Some(an)) => ncu::compare(&predicted(an), m, None),
            (Some(why), _, _) => ncu::Comparison::failed(why.clone()),
            _ => ncu::Comparison::failed("not measured".into()),
        };
        reports.push(VerifyReport {
            file: s.file.clone(),
            kernel: s.kernel.clone(),
            args: s.args.clone(),
            grid: s.grid,
            block: s.block,
            ncu_kernel: ncu_names[i].clone(),
            comparison,
            lines: Vec::new(),
            hardware: measured[i].clone().unwrap_or_default(),
        });
    }
    // Launches the hardware counters leave undecided (shared-load wavefronts above the model)
    // get ncu's instrumented counts: a second, deterministic measurement.
    let single_lines = a.lines && specs.len() == 1 && failed[0].is_none();
    let undecided: Vec<usize> = (0..reports.len())
        .filter(|&i| !single_lines && Verdict::needs_instrumented(&reports[i].comparison))
        .collect();
    if !undecided.is_empty() {
        let sub = tmp.0.path().join("undecided.txt");
        write_batch(&sub, &undecided)?;
        let sc = ncu::run(
            &ncu_path,
            &source_args(clock, "sass"),
            &exe,
            &child_args(&sub),
        )
        .and_then(|r| ncu::parse_sass_page(&r.stdout, undecided.len()));
        match sc {
            Ok(counts) => {
                for (&i, c) in undecided.iter().zip(&counts) {
                    if let Some(an) = &analyses[i] {
                        let hw = reports[i].hardware.clone();
                        reports[i].comparison = ncu::compare(&predicted(an), &hw, Some(c));
                    }
                }
            }
            Err(e) => {
                for &i in &undecided {
                    reports[i]
                        .comparison
                        .notes
                        .push(format!("instrumented pass failed: {e}"));
                }
            }
        }
    }
    if a.lines && specs.len() > 1 && !super::quiet() {
        eprintln!("warpscope: --lines compares single launches only; skipped for the batch");
    }
    if let (true, Some(an)) = (single_lines, &analyses[0]) {
        write_batch(&batch, &[0])?;
        let r = ncu::run(
            &ncu_path,
            &source_args(clock, "cuda,sass"),
            &exe,
            &child_args(&batch),
        )
        .map_err(gpu_err)?;
        let sc = ncu::parse_cuda_sass_page(&r.stdout, &specs[0].file).map_err(gpu_err)?;
        reports[0].lines = line_reports(an, &sc);
        let hw = reports[0].hardware.clone();
        reports[0].comparison = ncu::compare(&predicted(an), &hw, Some(&sc));
    }
    drop(tmp);
    let differs = reports
        .iter()
        .filter(|r| matches!(r.comparison.verdict, Verdict::Differs | Verdict::Failed))
        .count();
    let noisy = reports
        .iter()
        .filter(|r| r.comparison.verdict == Verdict::KnownNoise)
        .count();
    let lines_bad = reports
        .iter()
        .any(|r| r.lines.iter().any(|l| l.compared && !l.equal()));
    match a.format {
        Format::Json => out(&launches_json(&reports)?)?,
        Format::Table => out(&verify_table(&info, &reports, a.strict))?,
    }
    if differs > 0 || (a.strict && noisy > 0) || lines_bad {
        bail!(
            "{} of {} launches disagree with Nsight Compute or could not be measured{}{}",
            differs + if a.strict { noisy } else { 0 },
            reports.len(),
            if a.strict && noisy > 0 {
                format!(" ({noisy} known-noisy, failing under --strict)")
            } else {
                String::new()
            },
            if lines_bad {
                "; per-line counters disagree"
            } else {
                ""
            }
        );
    }
    Ok(())
}

/// Why the profiled `run --once` child stopped: its `error:` lines (the launch it was at),
/// or `None` when it printed none.
fn child_error(r: &ncu::Run) -> Option<String> {
    let lines: Vec<&str> = r
        .stderr
        .lines()
        .chain(r.stdout.lines())
        .filter_map(|l| {
            let l = l.trim();
            l.strip_prefix("error:")
                .or_else(|| l.strip_prefix("Error:"))
                .map(str::trim)
        })
        .collect();
    (!lines.is_empty()).then(|| lines.join("\n"))
}

/// A private scratch folder (unpredictable name, 0700, created by the `tempfile` crate),
/// removed when dropped: never a predictable `/tmp` name another user could plant first.
struct TempDir(tempfile::TempDir);

impl TempDir {
    fn new(what: &str) -> Result<TempDir> {
        tempfile::Builder::new()
            .prefix(&format!("warpscope-{what}-"))
            .tempdir()
            .map(TempDir)
            .context("cannot create a temporary folder")
    }
}

fn tail(s: &str, n: usize) -> String {
    let v: Vec<&str> = s.lines().collect();
    v[v.len().saturating_sub(n)..].join("\n")
}

fn verify_table(info: &DeviceInfo, reports: &[VerifyReport], strict: bool) -> String {
    // Local, texture, surface, DSMEM and bulk-reduction columns only where a launch predicts
    // or measures something there.
    let used = |k: usize| {
        reports.iter().any(|r| {
            r.comparison.rows.get(k).is_some_and(|c| {
                c.predicted.unwrap_or(0) > 0 || c.measured.is_some_and(|m| m >= 0.5)
            })
        })
    };
    let shown: Vec<usize> = (0..ncu::COUNTERS.len())
        .filter(|&k| {
            let c = ncu::COUNTERS[k].column;
            !(c.starts_with("texture_")
                || c.starts_with("surface_")
                || c.starts_with("local_")
                || c.starts_with("dsmem_")
                || c == "global_tma_red_sectors")
                || used(k)
        })
        .collect();
    let cols: Vec<&ncu::Counter> = shown.iter().map(|&k| &ncu::COUNTERS[k]).collect();
    let short = |c: &str| {
        match c {
            "global_ld_requests" => "ld req",
            "global_ld_sectors" => "ld sect",
            "global_st_requests" => "st req",
            "global_st_sectors" => "st sect",
            "shared_ld_wavefronts" => "sh ld wf",
            "shared_st_wavefronts" => "sh st wf",
            "shared_ld_instructions" => "sh ld inst",
            "local_ld_requests" => "loc ld req",
            "local_ld_sectors" => "loc ld sect",
            "local_st_requests" => "loc st req",
            "local_st_sectors" => "loc st sect",
            "texture_ld_requests" => "tex req",
            "texture_ld_sectors" => "tex sect",
            "surface_ld_requests" => "surf ld req",
            "surface_ld_sectors" => "surf ld sect",
            "surface_st_requests" => "surf st req",
            "surface_st_sectors" => "surf st sect",
            "global_tma_ld_sectors" => "tma ld sect",
            "global_tma_st_sectors" => "tma st sect",
            "shared_gmma_wavefronts" => "gmma wf",
            "dsmem_tma_st_sectors" => "dsm tma st sect",
            "global_tma_red_sectors" => "tma red sect",
            "dsmem_tma_red_sectors" => "dsm tma red sect",
            "dram_read_bytes" => "DRAM rd B",
            "dram_write_bytes" => "DRAM wr B",
            _ => c,
        }
        .to_string()
    };
    let mut header = vec!["#".to_string(), "launch".to_string()];
    header.extend(cols.iter().map(|c| short(c.column)));
    header.push("verdict".into());
    let mut rows = vec![header];
    for (i, r) in reports.iter().enumerate() {
        let mut row = vec![
            (i + 1).to_string(),
            format!(
                "{} {}",
                r.file.rsplit('/').next().unwrap_or(&r.file),
                label(&r.kernel, &r.args)
            ),
        ];
        if r.comparison.verdict == Verdict::Failed {
            row.extend(shown.iter().map(|_| "-".to_string()));
        }
        for c in shown.iter().filter_map(|&k| r.comparison.rows.get(k)) {
            let m = c.measured.map(|m| m.round() as u64);
            row.push(match (c.compared, c.predicted, m) {
                (true, Some(p), Some(m)) if p == m => thousands(m),
                (true, p, m) => format!(
                    "{}≠{}",
                    p.map_or("-".into(), thousands),
                    m.map_or("-".into(), thousands)
                ),
                (false, _, Some(m)) => thousands(m),
                (false, _, None) => "-".into(),
            });
        }
        row.push(
            match r.comparison.verdict {
                Verdict::Exact => "exact",
                Verdict::KnownNoise if strict => "NOISY (fails: --strict)",
                Verdict::KnownNoise => "noisy",
                Verdict::Differs => "DIFFERS",
                Verdict::Failed => "FAILED",
            }
            .into(),
        );
        rows.push(row);
    }
    let widths: Vec<usize> = (0..rows[0].len())
        .map(|k| rows.iter().map(|r| r[k].chars().count()).max().unwrap_or(0))
        .collect();
    let mut t = format!(
        "warpscope (CC {}) against Nsight Compute on {} (driver CUDA {})\n",
        info.cc_string(),
        info.name,
        info.driver_cuda
    );
    for row in &rows {
        let cells: Vec<String> = row
            .iter()
            .enumerate()
            .map(|(k, c)| {
                let pad = widths[k] - c.chars().count();
                if k == 1 {
                    format!("{c}{}", " ".repeat(pad))
                } else {
                    format!("{}{c}", " ".repeat(pad))
                }
            })
            .collect();
        t += cells.join("  ").trim_end();
        t.push('\n');
    }
    for (i, r) in reports.iter().enumerate() {
        for n in &r.comparison.notes {
            t += &format!("#{}: {n}\n", i + 1);
        }
        if !r.lines.is_empty() {
            t += &format!(
                "#{}: per source line, warpscope against ncu's instrumented source counters:\n",
                i + 1
            );
        }
        for l in &r.lines {
            let m = l
                .measured
                .map_or("-".to_string(), |m| thousands(m.round() as u64));
            t += &format!(
                "    {}:{:<5} {:<22} predicted {:>12} measured {:>12}  {}\n",
                r.file,
                l.line,
                l.counter,
                thousands(l.predicted),
                m,
                match (l.equal(), l.compared) {
                    (true, _) => "exact",
                    (false, true) => "DIFFERS",
                    (false, false) => "differs (requests: shown, not compared)",
                }
            );
        }
    }
    let exact = reports
        .iter()
        .filter(|r| r.comparison.verdict == Verdict::Exact)
        .count();
    let count = |v: Verdict| reports.iter().filter(|r| r.comparison.verdict == v).count();
    t += &format!(
        "{exact} of {} launches exact, {} noisy, {} differ{}. Cells: the measured value where it equals the prediction, predicted≠measured where not; DRAM bytes and shared-load instructions are shown, not compared.\n",
        reports.len(),
        count(Verdict::KnownNoise),
        count(Verdict::Differs),
        match count(Verdict::Failed) {
            0 => String::new(),
            n => format!(", {n} failed (their notes say why)"),
        }
    );
    t += &format!(
        "Rule: requests, sectors and wavefronts must be equal, no tolerance; 'noisy' = only the hardware shared-load (or -store) wavefronts differ, above the model, while ncu's instrumented counts (SourceCounters) equal the prediction: the H100's known overcount at block start{}.\n",
        if strict { ": fails under --strict" } else { ": passes (use --strict to fail)" }
    );
    t
}

/// Today's date (UTC), YYYY-MM-DD.
fn today() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs()) as i64;
    // Days to civil date (Howard Hinnant's algorithm).
    let z = secs.div_euclid(86_400) + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + if m <= 2 { 1 } else { 0 };
    format!("{y:04}-{m:02}-{d:02}")
}

pub fn calibrate(a: CalibrateArgs) -> Result<()> {
    if a.probe_dram {
        let dev = Device::open(a.device).map_err(gpu_err)?;
        return bench::dram_probes(&dev).map_err(gpu_err);
    }
    let info = warpscope_gpu::device_info(a.device).map_err(gpu_err)?;
    // The DRAM probes need Nsight Compute, in a process of their own.
    let mut probe_note = None;
    let probe = if a.no_ncu {
        None
    } else {
        match dram_probe(&a) {
            Ok(p) => Some(p),
            Err(e) => {
                probe_note = Some(format!("DRAM probes skipped: {e:#}"));
                None
            }
        }
    };
    let dev = Device::open(a.device).map_err(gpu_err)?;
    let mut cal = bench::calibrate(&dev, probe, &today()).map_err(gpu_err)?;
    if let Some(n) = probe_note {
        cal.notes.push(n);
    }
    let slug = bench::find_gpu(&info.name)
        .map(|g| g.aliases[0].to_string())
        .unwrap_or_else(|| {
            info.name
                .to_lowercase()
                .chars()
                .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
                .collect::<String>()
                .trim_matches('-')
                .to_string()
        });
    let path = a
        .output
        .clone()
        .unwrap_or_else(|| format!("warpscope-profile-{slug}.json"));
    std::fs::write(&path, cal.profile.to_json() + "\n")
        .with_context(|| format!("cannot write {path}"))?;
    let mut sweep = None;
    if let Some(csv) = &a.sweep_csv {
        let b = bench::Bench::new(&dev).map_err(gpu_err)?;
        let n = 1u64 << 28;
        let offsets: Vec<u32> = (0..=32).collect();
        let strides: Vec<u32> = (1..=32).collect();
        let o = bench::copy_sweep(
            &b,
            bench::CopyKind::Offset,
            &offsets,
            bench::Elem::Float,
            n,
            256,
        )
        .map_err(gpu_err)?;
        let s = bench::copy_sweep(
            &b,
            bench::CopyKind::Stride,
            &strides,
            bench::Elem::Float,
            n,
            256,
        )
        .map_err(gpu_err)?;
        let mut t = format!(
            "# {} (CC {}, {} SMs, {}-bit bus, {} MiB L2), driver CUDA {}; measured by warpscope calibrate --sweep-csv ({})\n",
            info.name,
            info.cc_string(),
            info.sms,
            info.bus_width_bits,
            info.l2_bytes >> 20,
            info.driver_cuda,
            today()
        );
        t += "# offset kernel: i = blockIdx.x*blockDim.x + threadIdx.x + offset; if (i < n) b[i] = a[i];  (float, n = 2^28, block 256)\n";
        t += "# stride kernel: i = (blockIdx.x*blockDim.x + threadIdx.x) * stride; if (i < n) b[i] = a[i];  (float, n = 2^28, n/stride threads, block 256)\n";
        t += &format!(
            "# NVRTC-compiled for sm_{}{}; random data; CUDA events: 1 warm-up, then the median of {} samples of {} back-to-back launches\n",
            info.cc.0, info.cc.1, bench::SAMPLES, bench::PER_SAMPLE
        );
        t += "# effective bandwidth counts 8 useful bytes (4 read + 4 written) per element copied; GB/s = 1e9 bytes/s\n";
        t += &format!("# reference: float4 grid-stride copy of 2^28 floats reached {:.0} GB/s (bytes read + written)\n", cal.copy_gbps);
        t += "experiment,parameter,effective_GBps\n";
        for (v, g) in offsets.iter().zip(&o) {
            t += &format!("offset,{v},{g:.1}\n");
        }
        for (v, g) in strides.iter().zip(&s) {
            t += &format!("stride,{v},{g:.1}\n");
        }
        std::fs::write(csv, &t).with_context(|| format!("cannot write {csv}"))?;
        sweep = Some((o, s));
    }
    match a.format {
        Format::Json => {
            #[derive(serde::Serialize)]
            struct J<'a> {
                device: &'a DeviceInfo,
                calibration: &'a bench::Calibration,
                profile_file: &'a str,
                sweep_offset_gbps: Option<&'a Vec<f64>>,
                sweep_stride_gbps: Option<&'a Vec<f64>>,
            }
            out(&super::analyze::json(&warpscope::report::Versioned::new(
                J {
                    device: &info,
                    calibration: &cal,
                    profile_file: &path,
                    sweep_offset_gbps: sweep.as_ref().map(|s| &s.0),
                    sweep_stride_gbps: sweep.as_ref().map(|s| &s.1),
                },
            ))?)
        }
        Format::Table => {
            let p = &cal.profile;
            let mut t = format!(
                "calibrated {} (CC {}, {} SMs, {} L2) → {path}\n",
                info.name,
                info.cc_string(),
                info.sms,
                mib(info.l2_bytes)
            );
            t += &format!("  copy_gbps                   {:>9.1}  float4 grid-stride copy, 2 × {} (read + written)\n", p.copy_gbps, mib(cal.copy_bytes));
            t += &format!("  latency_ns                  {:>9.1}  from the scalar copy at {:.1} GB/s (Little's law)\n", p.latency_ns, cal.scalar_copy_gbps);
            t += &format!(
                "  dram_min_bytes_per_line     {:>9}  from the stride-32 copy at {:.1} GB/s\n",
                p.dram_min_bytes_per_line, cal.stride32_copy_gbps
            );
            t += &format!(
                "  dram_read_granularity_bytes {:>9}  {}\n",
                p.dram_read_granularity_bytes,
                cal.dram_read_bytes_per_load
                    .map_or("default (no ncu)".into(), |b| format!(
                        "stride-16-float load: {b:.1} DRAM B per load"
                    ))
            );
            t += &format!(
                "  partial_write_read_bytes    {:>9}  {}\n",
                p.partial_write_read_bytes,
                cal.dram_read_bytes_per_partial_sector
                    .map_or("default (no ncu)".into(), |b| format!(
                        "stride-8-float store: {b:.1} DRAM B read per sector"
                    ))
            );
            t += &format!("  l2_gbps                     {:>9.1}  re-reading a quarter of L2 through L2 only\n", p.l2_gbps);
            t += &format!(
                "  l1_gbps                     {:>9.1}  each block re-reading 16 KiB from L1\n",
                p.l1_gbps
            );
            for n in &cal.notes {
                t += &format!("  note: {n}\n");
            }
            if let Some((o, s)) = &sweep {
                t += &format!(
                    "  copy sweep → {}: offset 0 {:.1}, offset 1 {:.1}, stride 2 {:.1}, stride 32 {:.1} GB/s\n",
                    a.sweep_csv.as_deref().unwrap_or(""),
                    o[0], o[1], s[1], s[31]
                );
            }
            out(&t)
        }
    }
}

/// Runs `calibrate --probe-dram` under ncu: DRAM bytes read per load (stride-16 load) and
/// per sector (stride-8 store).
fn dram_probe(a: &CalibrateArgs) -> Result<(f64, f64)> {
    let ncu_path = ncu::find(a.ncu.as_deref()).map_err(gpu_err)?;
    let exe: PathBuf = std::env::current_exe().context("cannot find warpscope's own executable")?;
    let args: Vec<String> = [
        "--clock-control",
        "none",
        "--print-units",
        "base",
        "--csv",
        "--kernel-name",
        "regex:ws_probe_",
        "--metrics",
        "dram__bytes_read.sum,dram__bytes_write.sum",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let child = vec![
        "calibrate".into(),
        "--probe-dram".into(),
        "--device".into(),
        a.device.to_string(),
    ];
    let r = ncu::run(&ncu_path, &args, &exe, &child).map_err(gpu_err)?;
    let res = ncu::parse_csv(&r.stdout).map_err(gpu_err)?;
    let get = |k: &str| {
        res.iter()
            .find(|x| ncu::name_matches(k, &x.name))
            .and_then(|x| x.metrics.get("dram__bytes_read.sum").copied())
            .ok_or_else(|| anyhow!("ncu gave no dram__bytes_read.sum for {k}"))
    };
    let n = bench::PROBE_THREADS as f64;
    Ok((get("ws_probe_load")? / n, get("ws_probe_store")? / n))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The H100 histogram's PTX (`tests/data/h100/compiled/`): `verify`'s predicted columns,
    /// named by the report's ncu table, equal ncu's measurement (compiled.csv), with every
    /// column warpscope predicts present even at 0; its atomics are in no compared column.
    #[test]
    fn predicted_columns_of_the_histogram() {
        let file = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/data/h100/compiled/nvcc_histogram.ptx"
        );
        let source = std::fs::read_to_string(file).unwrap();
        let req = warpscope::AnalyzeRequest::new(
            file,
            &source,
            "histogram256",
            [1024, 1, 1],
            [256, 1, 1],
        )
        .arg("n", 4194304)
        .ccs("9.0")
        .unwrap();
        let an = warpscope::analyze(&req).unwrap();
        let p = predicted(&an);
        let want: ncu::Predicted = [
            ("global_ld_requests", 131072),
            ("global_ld_sectors", 131072),
            ("global_st_requests", 0),
            ("global_st_sectors", 0),
            ("shared_ld_wavefronts", 8192),
            ("shared_st_wavefronts", 8192),
            ("shared_ld_instructions", 8192),
            ("local_ld_requests", 0),
            ("local_ld_sectors", 0),
            ("local_st_requests", 0),
            ("local_st_sectors", 0),
            ("texture_ld_requests", 0),
            ("texture_ld_sectors", 0),
            ("surface_ld_requests", 0),
            ("surface_ld_sectors", 0),
            ("surface_st_requests", 0),
            ("surface_st_sectors", 0),
            ("global_tma_ld_sectors", 0),
            ("global_tma_st_sectors", 0),
            ("global_tma_red_sectors", 0),
            ("dsmem_tma_st_sectors", 0),
            ("dsmem_tma_red_sectors", 0),
            ("shared_gmma_wavefronts", 0),
        ]
        .into_iter()
        .collect();
        assert_eq!(p, want);
    }
}
