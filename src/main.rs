//! The `warpscope` command line: a thin layer over [`warpscope::analyze`].

use anyhow::{bail, Context, Result};
use clap::{Parser, Subcommand, ValueEnum};
use std::io::IsTerminal;
use std::process::ExitCode;
use warpscope::model::{arch, Config, L1Mode, SmemBankMode};
use warpscope::AnalyzeRequest;

#[cfg(feature = "cuda")]
mod gpu_cli;
mod quick;

#[derive(Parser)]
#[command(
    name = "warpscope",
    version,
    about = "Why is this CUDA kernel slow on its memory? Requests, transactions, sectors and bank conflicts of every access, for every compute capability, without a GPU."
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Count the requests, transactions, sectors and wavefronts of every memory access of a kernel launch.
    Analyze(AnalyzeArgs),
    /// Show why one access costs what it costs, warp by warp and CC by CC, and how to fix it.
    Explain(ExplainArgs),
    /// The seeds' experiment: predicted effective bandwidth of Harris's copy kernels against
    /// offset or stride, for each GPU, as a table and an SVG plot.
    Sweep(SweepArgs),
    /// List the compute capabilities warpscope models.
    Archs,
    /// List the GPUs --gpu knows, with their compute capability, SMs, L2 and DRAM bandwidth.
    Gpus,
    /// Compile a kernel with NVRTC for the GPU at hand, run and time it: median time, spread, requested bytes, effective GB/s.
    #[cfg(feature = "cuda")]
    Run(gpu_cli::RunArgs),
    /// Run a kernel under Nsight Compute and compare its requests, sectors and wavefronts with warpscope's; non-zero exit on disagreement.
    #[cfg(feature = "cuda")]
    Verify(gpu_cli::VerifyArgs),
    /// Measure the GPU at hand (copy bandwidth, latency, DRAM granularity, L2/L1) and write a traffic profile JSON for --profile.
    #[cfg(feature = "cuda")]
    Calibrate(gpu_cli::CalibrateArgs),
}

/// The launch: the kernel (a file's or an -e pattern's), its configuration and the
/// architectures, shared by `analyze` and `explain`.
#[derive(clap::Args)]
struct LaunchArgs {
    /// The CUDA source file (.cu); or give a pattern with -e.
    #[arg(required_unless_present = "expr", conflicts_with = "expr")]
    file: Option<String>,
    /// A quick pattern instead of a file: declarations, then one access, ';'-separated, e.g.
    /// 'float a[]; a[(blockIdx.x*blockDim.x + threadIdx.x) * 2]' or
    /// '__shared__ float t[32][33]; t[threadIdx.x][threadIdx.y]'. Undeclared names are int
    /// parameters (--arg, --sweep).
    #[arg(short = 'e', long = "expr", value_name = "EXPR")]
    expr: Option<String>,
    /// Kernel name; a template with its arguments, e.g. 'stride<float>' (with a FILE).
    #[arg(long, required_unless_present = "expr", conflicts_with = "expr")]
    kernel: Option<String>,
    /// Grid dimensions X[,Y[,Z]] (blocks; with -e the default is 1).
    #[arg(long, required_unless_present = "expr")]
    grid: Option<String>,
    /// Block dimensions X[,Y[,Z]] (threads; with -e the default is 32: one warp).
    #[arg(long, required_unless_present = "expr")]
    block: Option<String>,
    /// Scalar kernel parameter NAME=VALUE (repeatable).
    #[arg(long = "arg", value_name = "NAME=VALUE")]
    args: Vec<String>,
    /// Size of a pointer parameter's allocation in elements, NAME=ELEMENTS (enables bounds checks).
    #[arg(long = "alloc", value_name = "NAME=ELEMENTS")]
    allocs: Vec<String>,
    /// Preprocessor macro NAME[=VALUE], as nvcc takes it.
    #[arg(short = 'D', value_name = "NAME[=VALUE]")]
    defines: Vec<String>,
    /// Compute capabilities: a list like 9.0 or 1.0,1.3,2.0,9.0, or 'all' (default: a representative set).
    #[arg(long)]
    cc: Option<String>,
    /// Bytes of extern __shared__ memory per block.
    #[arg(long, default_value_t = 0, value_name = "BYTES")]
    dynamic_smem: u64,
    /// Caching of global loads on CC 2.x/3.x (-Xptxas -dlcm).
    #[arg(long, value_enum, default_value_t = L1Arg::Default)]
    l1: L1Arg,
    /// Shared-memory bank width in bytes on CC 3.x.
    #[arg(long, default_value = "4", value_parser = ["4", "8"])]
    smem_bank_size: String,
    /// Iterations a loop may run in one block before it is reported as runaway (the
    /// compiled path allows 32 warp instructions per step and block).
    #[arg(long, default_value_t = warpscope::cuda::DEFAULT_MAX_STEPS)]
    max_steps: u64,
    /// How a .cu file is read: 'auto' compiles it to PTX when a CUDA compiler is found
    /// (nvcc from --nvcc, CUDA_HOME, CUDA_PATH, PATH or the pip wheels), else interprets the
    /// source; 'ptx' always compiles; 'source' never does. A .ptx file is always run as PTX.
    #[arg(long, value_enum, default_value_t = FrontendArg::Auto)]
    frontend: FrontendArg,
    /// The nvcc to compile with (default: searched).
    #[arg(long, value_name = "PATH")]
    nvcc: Option<std::path::PathBuf>,
    /// Include folder for the compiler (repeatable).
    #[arg(short = 'I', value_name = "DIR")]
    include_dirs: Vec<std::path::PathBuf>,
    /// C++ standard for the compiler, e.g. c++17.
    #[arg(long, value_name = "STD")]
    std: Option<String>,
    /// Optimization level for the compiler (nvcc's default is 3).
    #[arg(short = 'O', value_name = "LEVEL")]
    opt_level: Option<String>,
}

#[derive(Clone, Copy, ValueEnum)]
enum FrontendArg {
    Auto,
    Ptx,
    Source,
}

#[derive(clap::Args)]
struct AnalyzeArgs {
    #[command(flatten)]
    launch: LaunchArgs,
    /// Also predict the bytes at L1, L2 and DRAM and the time on this GPU (fixes the CC);
    /// `warpscope gpus` lists them.
    #[arg(long, value_name = "NAME")]
    gpu: Option<String>,
    /// Rates measured by `warpscope calibrate` for --gpu, instead of the datasheet's.
    #[arg(long, value_name = "FILE", requires = "gpu")]
    profile: Option<String>,
    /// Run once per value of a scalar parameter, NAME=A..B[:STEP] (both ends included),
    /// and print one row per value.
    #[arg(long, value_name = "NAME=A..B[:STEP]")]
    sweep: Option<String>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
}

#[derive(clap::Args)]
struct ExplainArgs {
    #[command(flatten)]
    launch: LaunchArgs,
    /// The access to explain: LINE or LINE:COLUMN of the source (with -e, the default is its access).
    #[arg(long, value_name = "L[:COL]", conflicts_with = "site")]
    line: Option<String>,
    /// The access to explain by its number (#) in analyze's table.
    #[arg(long, value_name = "N")]
    site: Option<usize>,
    /// Which warp-level execution of the access, 0-based in launch order (default: the costliest).
    #[arg(long, value_name = "N")]
    warp: Option<u64>,
    /// Output format: a terminal picture, a standalone SVG figure, a self-contained HTML page,
    /// or JSON.
    #[arg(long, value_enum, default_value_t = ExplainFormat::Text)]
    format: ExplainFormat,
    /// Write the output to FILE instead of standard output.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    output: Option<String>,
}

#[derive(clap::Args)]
struct SweepArgs {
    /// offset: i = blockIdx.x*blockDim.x + threadIdx.x + offset; stride: i = (…) * stride.
    #[arg(value_enum)]
    kind: SweepKindArg,
    /// Element type of the copied arrays.
    #[arg(long = "type", value_enum, default_value_t = ElemArg::Float)]
    elem: ElemArg,
    /// Values, A..B (both ends included) [default: offset 0..32, stride 1..32].
    #[arg(long, value_name = "A..B")]
    range: Option<String>,
    /// GPUs, comma-separated (`warpscope gpus` lists them).
    #[arg(long, default_value = "c870,c1060,c2050,h100")]
    gpu: String,
    /// A calibrated profile for one of the GPUs, NAME=FILE (repeatable).
    #[arg(long = "profile", value_name = "NAME=FILE")]
    profiles: Vec<String>,
    /// Elements per array (the ground truth ran 2^28; fewer interpret faster).
    #[arg(long, default_value_t = 1 << 22)]
    n: u64,
    /// Threads per block.
    #[arg(long, default_value_t = 256)]
    block: u32,
    /// Measured effective bandwidths of one of the GPUs to compare with, NAME=CSV; rows
    /// experiment,parameter,GB/s (the format of the ground truth's copy-bandwidth.csv).
    #[arg(long, value_name = "NAME=CSV")]
    measured: Option<String>,
    /// Also measure the GPU at hand (needs the `cuda` feature and a GPU); it is compared with
    /// its curve, which is added to --gpu when missing.
    #[arg(long, conflicts_with = "measured")]
    measure: bool,
    /// Elements per array when measuring (the ground truth's 2^28: arrays far larger than L2).
    #[arg(long, default_value_t = 1 << 28, requires = "measure")]
    measure_n: u64,
    /// Write the plot to this SVG file.
    #[arg(long, value_name = "FILE")]
    svg: Option<String>,
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
}

#[derive(Clone, Copy, ValueEnum)]
enum SweepKindArg {
    Offset,
    Stride,
}

#[derive(Clone, Copy, ValueEnum)]
enum ElemArg {
    Float,
    Double,
}

#[derive(Clone, Copy, ValueEnum)]
enum ExplainFormat {
    Text,
    Svg,
    Html,
    Json,
}

#[derive(Clone, Copy, ValueEnum)]
enum L1Arg {
    Default,
    Ca,
    Cg,
}

#[derive(Clone, Copy, ValueEnum)]
enum Format {
    Table,
    Json,
}

fn dims(s: &str, what: &str) -> Result<[u32; 3]> {
    let parts: Vec<&str> = s.split([',', 'x']).map(str::trim).collect();
    if parts.is_empty() || parts.len() > 3 {
        bail!("--{what} {s}: expected X, X,Y or X,Y,Z");
    }
    let mut d = [1u32; 3];
    for (i, p) in parts.iter().enumerate() {
        d[i] = p
            .parse()
            .with_context(|| format!("--{what} {s}: '{p}' is not a positive integer"))?;
        if d[i] == 0 {
            bail!("--{what} {s}: dimensions must be at least 1");
        }
    }
    Ok(d)
}

fn pairs(v: &[String], flag: &str) -> Result<Vec<(String, String)>> {
    v.iter()
        .map(|s| match s.split_once('=') {
            Some((n, x)) if !n.trim().is_empty() => {
                Ok((n.trim().to_string(), x.trim().to_string()))
            }
            _ => bail!("--{flag} {s}: expected NAME=VALUE"),
        })
        .collect()
}

/// A request built from the command line, and the -e pattern it came from, if any.
struct Job {
    quick: Option<quick::Quick>,
    req: AnalyzeRequest,
}

impl Job {
    /// Positions in the generated kernel of -e are reported in the -e text.
    fn relocate(&self, e: anyhow::Error) -> anyhow::Error {
        match &self.quick {
            Some(q) => anyhow::anyhow!(q.relocate(&format!("{e:#}"))),
            None => e,
        }
    }

    fn analyze(&self, req: &AnalyzeRequest) -> Result<warpscope::report::Analysis> {
        let mut an = warpscope::analyze(req).map_err(|e| self.relocate(e))?;
        if let Some(q) = &self.quick {
            q.fix_analysis(&mut an);
        }
        Ok(an)
    }
}

/// Builds the request of `l`, checking that the names given to --arg (for -e) and to
/// `sweep` are scalar parameters.
fn job(l: &LaunchArgs, sweep: Option<(&quick::Sweep, &str)>) -> Result<Job> {
    // The kernel: a file's, or the one generated from the -e pattern.
    let (quick, file, source, kernel) = match (&l.expr, &l.file, &l.kernel) {
        (Some(e), _, _) => {
            let q = quick::generate(e, &l.defines)?;
            let src = q.source.clone();
            (
                Some(q),
                quick::FILE.to_string(),
                src,
                quick::KERNEL.to_string(),
            )
        }
        (None, Some(f), Some(k)) => {
            let src = std::fs::read_to_string(f).with_context(|| format!("cannot read {f}"))?;
            (None, f.clone(), src, k.clone())
        }
        _ => bail!("give a FILE with --kernel NAME, or a pattern with -e"),
    };
    let mut req = AnalyzeRequest::new(
        &file,
        &source,
        &kernel,
        dims(l.grid.as_deref().unwrap_or("1"), "grid")?,
        dims(l.block.as_deref().unwrap_or("32"), "block")?,
    );
    req.args = pairs(&l.args, "arg")?;
    req.allocs = pairs(&l.allocs, "alloc")?
        .into_iter()
        .map(|(n, v)| {
            v.parse::<u64>()
                .map(|e| (n.clone(), e))
                .with_context(|| format!("--alloc {n}={v}: expected a number of elements"))
        })
        .collect::<Result<_>>()?;
    req.defines = l.defines.clone();
    if let Some(cc) = &l.cc {
        req = req.ccs(cc)?;
    }
    req.dynamic_shared_bytes = l.dynamic_smem;
    req.max_steps = l.max_steps;
    req.compile = warpscope::CompileRequest {
        frontend: match l.frontend {
            FrontendArg::Auto => warpscope::Frontend::Auto,
            FrontendArg::Ptx => warpscope::Frontend::Ptx,
            FrontendArg::Source => warpscope::Frontend::Source,
        },
        nvcc: l.nvcc.clone(),
        include_dirs: l.include_dirs.clone(),
        std: l.std.clone(),
        opt_level: l.opt_level.clone(),
    };
    req.config = Config {
        l1: match l.l1 {
            L1Arg::Default => L1Mode::Default,
            L1Arg::Ca => L1Mode::Ca,
            L1Arg::Cg => L1Mode::Cg,
        },
        smem_bank_mode: if l.smem_bank_size == "8" {
            SmemBankMode::EightByte
        } else {
            SmemBankMode::FourByte
        },
    };
    let job = Job { quick, req };
    // Names given to --arg and --sweep must be scalar parameters; for a file the front end
    // checks --arg itself, for -e a clearer message names the pattern.
    if job.quick.is_some() || sweep.is_some() {
        let req = &job.req;
        let params = warpscope::cuda::Source::parse(&req.file, &req.source, &req.defines)
            .and_then(|s| s.kernel(&req.kernel))
            .map_err(|e| job.relocate(e.into()))?
            .params();
        let scalars: Vec<&str> = params
            .iter()
            .filter(|p| !p.is_pointer)
            .map(|p| p.name.as_str())
            .collect();
        let list = if scalars.is_empty() {
            "none".to_string()
        } else {
            scalars.join(", ")
        };
        let mut names: Vec<(String, &str)> = Vec::new();
        if job.quick.is_some() {
            names.extend(
                req.args
                    .iter()
                    .map(|(n, _)| (format!("--arg {n}"), n.as_str())),
            );
        }
        if let Some((sw, text)) = sweep {
            if req.args.iter().any(|(n, _)| n == &sw.name) {
                bail!(
                    "--sweep {text} and --arg {0}=... both set '{0}'; drop the --arg",
                    sw.name
                );
            }
            names.push((format!("--sweep {text}"), sw.name.as_str()));
        }
        for (flag, n) in names {
            match params.iter().find(|p| p.name == n) {
                Some(p) if p.is_pointer => bail!(
                    "{flag}: '{n}' is a pointer parameter; only scalar parameters take values"
                ),
                Some(_) => {}
                None if job.quick.is_some() => bail!(
                    "{flag}: '{n}' is not a parameter of the -e pattern (an undeclared name in the access, or a declared scalar); its parameters: {list}"
                ),
                None => bail!("{flag}: {kernel} has no scalar parameter '{n}'; its scalar parameters: {list}"),
            }
        }
    }
    Ok(job)
}

/// Writes `text` to `path`, or to standard output (a closed pipe, as with `| head`, is not
/// an error).
fn emit(path: Option<&str>, text: &str) -> Result<()> {
    use std::io::Write;
    match path {
        Some(p) => std::fs::write(p, text).with_context(|| {
            format!("cannot write {p}: check that its folder exists and is writable")
        }),
        None => match std::io::stdout().lock().write_all(text.as_bytes()) {
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
            r => r.context("cannot write to standard output"),
        },
    }
}

fn analyze(a: AnalyzeArgs) -> Result<()> {
    let sweep = a.sweep.as_deref().map(quick::Sweep::parse).transpose()?;
    let mut job = job(&a.launch, sweep.as_ref().zip(a.sweep.as_deref()))?;
    if let Some(name) = &a.gpu {
        let json = a
            .profile
            .as_deref()
            .map(|p| {
                std::fs::read_to_string(p).with_context(|| format!("cannot read --profile {p}"))
            })
            .transpose()?;
        job.req.gpus = vec![warpscope::GpuTarget::new(name, json.as_deref())?];
    }
    let color = std::io::stdout().is_terminal();
    let Some(sw) = sweep else {
        let analysis = job.analyze(&job.req)?;
        return match a.format {
            Format::Json => emit(None, &(serde_json::to_string_pretty(&analysis)? + "\n")),
            Format::Table => emit(None, &warpscope::report::render_table(&analysis, color)),
        };
    };
    let mut points = Vec::with_capacity(sw.values.len());
    for &v in &sw.values {
        let mut r = job.req.clone();
        r.args.push((sw.name.clone(), v.to_string()));
        let analysis = job
            .analyze(&r)
            .with_context(|| format!("--sweep {}={v}", sw.name))?;
        points.push(warpscope::report::SweepPoint { value: v, analysis });
    }
    match a.format {
        Format::Json => emit(None, &(serde_json::to_string_pretty(&points)? + "\n")),
        Format::Table => emit(
            None,
            &warpscope::report::render_sweep(&sw.name, &points, color),
        ),
    }
}

fn explain(a: ExplainArgs) -> Result<()> {
    use warpscope::report::explain as render;
    let job = job(&a.launch, None)?;
    let site = match (&a.line, a.site) {
        (_, Some(n)) => warpscope::SiteSelector::Number(n),
        (Some(l), None) => {
            let (line, col) = match l.split_once(':') {
                Some((x, c)) => (x, Some(c)),
                None => (l.as_str(), None),
            };
            let bad = || format!("--line {l}: expected LINE or LINE:COLUMN (numbers from 1)");
            let line: u32 = line.trim().parse().with_context(bad)?;
            let column = col
                .map(|c| c.trim().parse::<u32>())
                .transpose()
                .with_context(bad)?;
            if line == 0 || column == Some(0) {
                bail!(bad());
            }
            warpscope::SiteSelector::Line { line, column }
        }
        // A pattern has one access (two with an assignment's right side: the first row).
        (None, None) if job.quick.is_some() => warpscope::SiteSelector::Number(1),
        (None, None) => {
            bail!("choose the access with --line L[:COL] or --site N (the # of analyze's table)")
        }
    };
    let req = warpscope::ExplainRequest {
        analyze: job.req.clone(),
        site,
        warp: a.warp,
    };
    let mut e = warpscope::explain(&req).map_err(|e| job.relocate(e))?;
    if let Some(q) = &job.quick {
        q.fix_explanation(&mut e);
    }
    let out = a.output.as_deref();
    let text = match a.format {
        ExplainFormat::Text => {
            render::render_text(&e, out.is_none() && std::io::stdout().is_terminal())
        }
        ExplainFormat::Svg => render::render_svg_all(&e),
        ExplainFormat::Html => render::render_html(&e),
        ExplainFormat::Json => serde_json::to_string_pretty(&e)? + "\n",
    };
    emit(out, &text)
}

fn sweep(a: SweepArgs) -> Result<()> {
    use warpscope::sweep::{compare, harris_sweep, read_measured, HarrisSweep, SweepKind};
    let kind = match a.kind {
        SweepKindArg::Offset => SweepKind::Offset,
        SweepKindArg::Stride => SweepKind::Stride,
    };
    let range = a.range.clone().unwrap_or(match kind {
        SweepKind::Offset => "0..32".into(),
        SweepKind::Stride => "1..32".into(),
    });
    let bad = || format!("--range {range}: expected A..B with 0 ≤ A ≤ B ≤ 4096");
    let (lo, hi) = range.split_once("..").with_context(bad)?;
    let (lo, hi): (u32, u32) = (
        lo.trim().parse().with_context(bad)?,
        hi.trim()
            .trim_start_matches('=')
            .parse()
            .with_context(bad)?,
    );
    if lo > hi || hi > 4096 {
        bail!(bad());
    }
    let profiles = pairs(&a.profiles, "profile")?;
    let mut gpus = Vec::new();
    for name in a.gpu.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let json = match profiles.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)) {
            Some((_, f)) => Some(
                std::fs::read_to_string(f)
                    .with_context(|| format!("cannot read --profile {name}={f}"))?,
            ),
            None => None,
        };
        gpus.push(warpscope::GpuTarget::new(name, json.as_deref())?);
    }
    if gpus.is_empty() {
        bail!(
            "--gpu {}: name at least one GPU (`warpscope gpus` lists them)",
            a.gpu
        );
    }
    for (n, _) in &profiles {
        if !a.gpu.split(',').any(|g| g.trim().eq_ignore_ascii_case(n)) {
            bail!("--profile {n}=…: '{n}' is not in --gpu {}", a.gpu);
        }
    }
    let s = HarrisSweep {
        kind,
        elem: match a.elem {
            ElemArg::Float => "float",
            ElemArg::Double => "double",
        },
        values: (lo..=hi).collect(),
        n: a.n,
        block: a.block,
    };
    // --measure: the GPU at hand, timed, joins the comparison.
    let mut at_hand: Option<(String, Vec<(u32, f64)>)> = None;
    if a.measure {
        at_hand = Some(measure_sweep(&s, a.measure_n)?);
        let name = &at_hand.as_ref().map(|m| m.0.clone()).unwrap_or_default();
        if !gpus.iter().any(|g| g.gpu.name == name.as_str()) {
            gpus.push(warpscope::GpuTarget::new(name, None)?);
        }
    }
    let curves = harris_sweep(&s, &gpus)?;
    // The measured GPU's curve: compared, and drawn in its colour.
    let (measured, which) = match (&a.measured, at_hand) {
        (_, Some((name, m))) => {
            let i = curves.iter().position(|c| c.gpu == name).unwrap_or(0);
            (Some(m), i)
        }
        (None, None) => (None, 0),
        (Some(m), None) => {
            let Some((name, f)) = m.split_once('=') else {
                bail!("--measured {m}: expected GPU=CSV, e.g. h100=copy-bandwidth.csv");
            };
            let g = warpscope::traffic::gpus::lookup(name.trim())
                .map_err(|e| anyhow::anyhow!("--measured {m}: {e}"))?;
            let Some(i) = curves.iter().position(|c| c.gpu == g.name) else {
                bail!("--measured {m}: {} is not in --gpu {}", g.name, a.gpu);
            };
            let text = std::fs::read_to_string(f.trim())
                .with_context(|| format!("cannot read --measured {m}"))?;
            (
                Some(read_measured(&text, kind).with_context(|| format!("--measured {m}"))?),
                i,
            )
        }
    };
    if let Some(path) = &a.svg {
        let mut series: Vec<warpscope::report::plot::Series> = curves
            .iter()
            .map(|c| warpscope::report::plot::Series {
                name: format!("{} (predicted)", c.gpu),
                points: c.points.iter().map(|p| (p.value as f64, p.gbps)).collect(),
                measured: false,
            })
            .collect();
        if let Some(m) = &measured {
            series.push(warpscope::report::plot::Series {
                name: format!("{} (measured)", curves[which].gpu),
                points: m.iter().map(|&(v, g)| (v as f64, g)).collect(),
                measured: true,
            });
        }
        let title = format!(
            "{} copy, {} — effective bandwidth (read + written)",
            s.kind.name(),
            s.elem
        );
        let xl = format!("{} ({}s)", s.kind.name(), s.elem);
        let svg = warpscope::report::plot::bandwidth_svg(&title, &xl, &series)
            .map_err(|e| anyhow::anyhow!("cannot draw the plot: {e}"))?;
        emit(Some(path), &svg)?;
    }
    let cmp = measured.as_ref().and_then(|m| compare(&curves[which], m));
    if let Format::Json = a.format {
        #[derive(serde::Serialize)]
        struct Out<'a> {
            curves: &'a [warpscope::sweep::Curve],
            measured: &'a Option<Vec<(u32, f64)>>,
            median_error: Option<f64>,
            worst_error: Option<f64>,
        }
        let out = Out {
            curves: &curves,
            measured: &measured,
            median_error: cmp.as_ref().map(|c| c.0),
            worst_error: cmp.as_ref().map(|c| c.1),
        };
        return emit(None, &(serde_json::to_string_pretty(&out)? + "\n"));
    }
    let mut t = comfy_table::Table::new();
    t.load_preset(comfy_table::presets::UTF8_FULL_CONDENSED)
        .set_content_arrangement(comfy_table::ContentArrangement::Disabled);
    let mut header = vec![s.kind.name().to_string()];
    for c in &curves {
        header.push(format!("{} GB/s", c.gpu));
    }
    if measured.is_some() {
        header.push(format!("{} measured", curves[which].gpu));
        header.push("error".into());
    }
    t.set_header(header);
    for (i, &v) in s.values.iter().enumerate() {
        let mut row = vec![v.to_string()];
        for c in &curves {
            let p = &c.points[i];
            row.push(format!("{:.1} ({})", p.gbps, p.limit));
        }
        if let Some(m) = &measured {
            match m.iter().find(|x| x.0 == v) {
                Some(&(_, g)) => {
                    row.push(format!("{g:.1}"));
                    row.push(format!(
                        "{:+.1}%",
                        100.0 * (curves[which].points[i].gbps - g) / g
                    ));
                }
                None => row.extend(["-".to_string(), "-".to_string()]),
            }
        }
        t.add_row(row);
    }
    let mut out = format!(
        "Harris's {} copy of {} {}s, blocks of {} — predicted effective bandwidth (bytes read + written ÷ predicted time; bound in parentheses)\n{t}\n",
        s.kind.name(),
        s.n,
        s.elem,
        s.block
    );
    for c in &curves {
        out.push_str(&format!("{}: CC {}, {} profile\n", c.gpu, c.cc, c.profile));
    }
    if let Some((median, worst, _)) = cmp {
        out.push_str(&format!(
            "{} predicted against measured: median error {:.1}%, worst {:.1}%\n",
            curves[which].gpu,
            100.0 * median,
            100.0 * worst
        ));
    }
    emit(None, &out)
}

/// Times Harris's copy on the GPU at hand at every value of `s`: (the GPU table's name of
/// the device, (value, GB/s) points).
#[cfg(feature = "cuda")]
fn measure_sweep(s: &warpscope::sweep::HarrisSweep, n: u64) -> Result<(String, Vec<(u32, f64)>)> {
    use warpscope::sweep::SweepKind;
    use warpscope_gpu::{CopyKind, Elem};
    let info = warpscope_gpu::device_info(0).map_err(|e| anyhow::anyhow!("--measure: {e}"))?;
    let Some(g) = warpscope_gpu::bench::find_gpu(&info.name) else {
        bail!(
            "--measure: the GPU at hand, {}, is not in the GPU table (`warpscope gpus`)",
            info.name
        );
    };
    let kind = match s.kind {
        SweepKind::Offset => CopyKind::Offset,
        SweepKind::Stride => CopyKind::Stride,
    };
    let elem = if s.elem == "double" {
        Elem::Double
    } else {
        Elem::Float
    };
    let gbps = warpscope_gpu::measure_copy_sweep(kind, &s.values, elem, n, s.block)
        .map_err(|e| anyhow::anyhow!("--measure on {}: {e}", info.name))?;
    Ok((
        g.name.to_string(),
        s.values.iter().copied().zip(gbps).collect(),
    ))
}

#[cfg(not(feature = "cuda"))]
fn measure_sweep(_: &warpscope::sweep::HarrisSweep, _: u64) -> Result<(String, Vec<(u32, f64)>)> {
    bail!("--measure needs a GPU build of warpscope: cargo build --release --features cuda")
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let r = match cli.cmd {
        Cmd::Analyze(a) => analyze(a),
        Cmd::Explain(a) => explain(a),
        Cmd::Sweep(a) => sweep(a),
        #[cfg(feature = "cuda")]
        Cmd::Run(a) => gpu_cli::run(a),
        #[cfg(feature = "cuda")]
        Cmd::Verify(a) => gpu_cli::verify(a),
        #[cfg(feature = "cuda")]
        Cmd::Calibrate(a) => gpu_cli::calibrate(a),
        Cmd::Gpus => {
            let mut out = String::new();
            for g in warpscope::traffic::gpus::all() {
                out.push_str(&format!(
                    "{:18} CC {:5} {:4} SMs  L2 {:>6} KiB  {:7.1} GB/s  {:5}-bit {}  [{}]\n",
                    g.name,
                    g.cc.to_string(),
                    g.sms,
                    g.l2_bytes / 1024,
                    g.dram_gbps,
                    g.bus_bits,
                    g.memory,
                    g.aliases.join(", ")
                ));
            }
            emit(None, &out)
        }
        Cmd::Archs => {
            for a in arch::all() {
                let _ = emit(
                    None,
                    &format!("{:5} {:10} {:?}\n", a.cc.to_string(), a.name, a.family),
                );
            }
            Ok(())
        }
    };
    match r {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
