//! The `warpscope` command line, one module per subcommand; the launch flags that
//! `analyze`, `explain` and `annotate` share live in [`launch`].

use anyhow::{Context, Result};
use clap::{Parser, Subcommand, ValueEnum};
use std::process::ExitCode;

mod analyze;
mod annotate;
mod check;
mod diff;
mod explain;
#[cfg(feature = "cuda")]
mod gpu;
mod input;
mod launch;
mod launches;
mod lists;
mod memory;
mod progress;
mod project;
use warpscope::quick;
mod sweep;

#[derive(Parser)]
#[command(
    name = "warpscope",
    version,
    about = "Why is this CUDA kernel slow on its memory? Requests, transactions, sectors and bank conflicts of every access, for every compute capability, without a GPU."
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
    /// No progress bar, notes or summaries on standard error (errors still are).
    #[arg(short, long, global = true)]
    quiet: bool,
    /// Seconds one run of nvcc, ptxas or nvdisasm may take before it is stopped with its
    /// process group (a hang guard: far above any real compile).
    #[arg(long, global = true, value_name = "SECONDS", default_value_t = 600.0, value_parser = parse_seconds)]
    tool_timeout: f64,
    /// The largest input file read (source, PTX, launch file, --init data, JSON result),
    /// and the most one external tool may print: bytes, or K, M, G (powers of 1024).
    #[arg(long, global = true, value_name = "SIZE", default_value = "256M", value_parser = parse_input_bytes)]
    max_input_bytes: u64,
    /// Let a launch file's `nvcc = "…"` key choose the compiler that runs (it names a
    /// program to execute; without this flag such a launch file is refused).
    #[arg(long, global = true)]
    allow_launch_file_tools: bool,
    /// A folder whose files a PTX's `.file` lines may show (repeatable); by default only the
    /// files given and those under the PTX's (or source's) own folder are read.
    #[arg(long, global = true, value_name = "DIR")]
    source_root: Vec<std::path::PathBuf>,
}

fn parse_seconds(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(x) if x > 0.0 && x.is_finite() && x <= 1e9 => Ok(x),
        _ => Err(format!(
            "'{s}' is not a number of seconds above 0 (e.g. 600, or 2.5)"
        )),
    }
}

fn parse_input_bytes(s: &str) -> Result<u64, String> {
    match parse_size::Config::new().with_binary().parse_size(s) {
        Ok(0) => Err("give at least 1 byte".into()),
        Ok(n) => Ok(n),
        Err(e) => Err(format!(
            "'{s}' is not a size ({e}): give bytes, or a number with K, M, G (powers of 1024), e.g. 256M"
        )),
    }
}

/// `--allow-launch-file-tools`, set once from the command line.
static ALLOW_TOOLS: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Whether a launch file may name the compiler to run (`--allow-launch-file-tools`).
pub fn launch_file_tools_allowed() -> bool {
    ALLOW_TOOLS.load(std::sync::atomic::Ordering::Relaxed)
}

/// Stops the external tools (their process groups) and removes their scratch files when
/// warpscope gets SIGINT or SIGTERM, then exits with 130 as a shell does for Ctrl-C.
fn on_interrupt() {
    let _ = ctrlc::set_handler(|| {
        if warpscope_toolkit::stop_all() > 0 {
            eprintln!("error: interrupted; the running compiler tools were stopped");
        }
        std::process::exit(130);
    });
}

/// `--quiet`, set once from the command line.
static QUIET: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Whether `--quiet` was given: stderr carries errors only.
pub fn quiet() -> bool {
    QUIET.load(std::sync::atomic::Ordering::Relaxed)
}

#[derive(Subcommand)]
enum Cmd {
    /// Count the requests, transactions, sectors and wavefronts of every memory access of a kernel launch.
    Analyze(analyze::AnalyzeArgs),
    /// Show why one access costs what it costs, warp by warp and CC by CC, and how to fix it.
    Explain(explain::ExplainArgs),
    /// Show the kernel's source with each access's requests, sectors or wavefronts, excess
    /// and efficiency per CC in the margin; its PTX and SASS instructions with --show
    /// ptx,sass; text, or an HTML page with each access's costliest warp.
    Annotate(annotate::AnnotateArgs),
    /// List the <<<…>>> kernel launches of a file's host code: kernel, grid, block, shared
    /// memory and arguments, with the values of those that are compile-time constants
    /// (`analyze --launch N` takes them).
    Launches(launches::LaunchesArgs),
    /// Harris's experiment: predicted effective bandwidth of his copy kernels against offset
    /// or stride, for each GPU, as a table and an SVG plot.
    Sweep(sweep::SweepArgs),
    /// Check the budgets of a launch file (warpscope.toml): exit 1 on a violation, naming
    /// the access, the CC, the figure and the budget; 2 on an error. Text, JUnit or SARIF.
    Check(check::CheckArgs),
    /// Compare two results of `analyze --format json` (or two launches of a launch file)
    /// access by access and in total; --fail-on-regression exits 1 when a total grew.
    Diff(diff::DiffArgs),
    /// List the compute capabilities warpscope models: architecture, chips and products, the
    /// rules of global memory, where the rules come from, and what --cc takes.
    Archs,
    /// List the GPUs --gpu knows, with their compute capability, SMs, L2, DRAM bandwidth and
    /// the datasheets the figures come from.
    Gpus,
    /// Compile a kernel with NVRTC for the GPU at hand, run and time it: median time, spread, requested bytes, effective GB/s.
    #[cfg(feature = "cuda")]
    Run(gpu::RunArgs),
    /// Run a kernel under Nsight Compute and compare its requests, sectors and wavefronts with warpscope's; non-zero exit on disagreement.
    #[cfg(feature = "cuda")]
    Verify(gpu::VerifyArgs),
    /// Measure the GPU at hand (copy bandwidth, latency, DRAM granularity, L2/L1) and write a traffic profile JSON for --profile.
    #[cfg(feature = "cuda")]
    Calibrate(gpu::CalibrateArgs),
}

#[derive(Clone, Copy, ValueEnum)]
pub enum Format {
    Table,
    Json,
}

/// Writes `text` to `path`, or to standard output (a closed pipe, as with `| head`, is not
/// an error).
pub fn emit(path: Option<&str>, text: &str) -> Result<()> {
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

/// Writes `notes` to standard error as `note: …` lines, unless `--quiet`.
/// Writes each finding (a bug found in the kernel: `Analysis::findings`) to standard error
/// as a `warning: FILE:LINE:COL: KIND: MESSAGE` line, `--quiet` or not.
pub fn emit_findings(findings: &[warpscope::report::Finding]) {
    for f in findings {
        eprintln!("{}", f.warning_line());
    }
}

/// Writes notes to standard error (unless `--quiet`).
pub fn emit_notes<S: AsRef<str>>(notes: &[S]) {
    if !quiet() && !notes.is_empty() {
        eprint!("{}", warpscope::report::render_notes(notes));
    }
}

/// Parses the command line and runs the subcommand; errors are printed with their causes.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    QUIET.store(cli.quiet, std::sync::atomic::Ordering::Relaxed);
    ALLOW_TOOLS.store(
        cli.allow_launch_file_tools,
        std::sync::atomic::Ordering::Relaxed,
    );
    warpscope_toolkit::set_tool_timeout(std::time::Duration::from_secs_f64(cli.tool_timeout));
    warpscope_toolkit::set_max_input_bytes(cli.max_input_bytes);
    warpscope_toolkit::set_max_output_bytes(cli.max_input_bytes);
    warpscope::sources::set_source_roots(cli.source_root.clone());
    on_interrupt();
    let r = match cli.cmd {
        Cmd::Analyze(a) => {
            launch::announce();
            analyze::analyze(a)
        }
        Cmd::Explain(a) => explain::explain(a),
        Cmd::Annotate(a) => annotate::annotate(a),
        Cmd::Sweep(a) => sweep::sweep(a),
        Cmd::Check(a) => return check::check(a),
        Cmd::Diff(a) => return diff::diff_main(a),
        Cmd::Launches(a) => launches::launches(a),
        #[cfg(feature = "cuda")]
        Cmd::Run(a) => gpu::run(a),
        #[cfg(feature = "cuda")]
        Cmd::Verify(a) => gpu::verify(a),
        #[cfg(feature = "cuda")]
        Cmd::Calibrate(a) => gpu::calibrate(a),
        Cmd::Gpus => lists::gpus(),
        Cmd::Archs => lists::archs(),
    };
    match r {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
