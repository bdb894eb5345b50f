//! The `warpscope` command line: a thin layer over [`warpscope::analyze`].

use anyhow::{bail, Context, Result};
use clap::{Parser, Subcommand, ValueEnum};
use std::io::IsTerminal;
use std::process::ExitCode;
use warpscope::model::{arch, Config, L1Mode, SmemBankMode};
use warpscope::AnalyzeRequest;

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
    /// List the compute capabilities warpscope models.
    Archs,
}

#[derive(clap::Args)]
struct AnalyzeArgs {
    /// The CUDA source file (.cu).
    file: String,
    /// Kernel name; a template with its arguments, e.g. 'stride<float>'.
    #[arg(long)]
    kernel: String,
    /// Grid dimensions X[,Y[,Z]] (blocks).
    #[arg(long)]
    grid: String,
    /// Block dimensions X[,Y[,Z]] (threads).
    #[arg(long)]
    block: String,
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
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
    /// Iterations a loop may run in one block before it is reported as runaway.
    #[arg(long, default_value_t = warpscope::cuda::DEFAULT_MAX_STEPS)]
    max_steps: u64,
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

fn analyze(a: AnalyzeArgs) -> Result<()> {
    let source =
        std::fs::read_to_string(&a.file).with_context(|| format!("cannot read {}", a.file))?;
    let mut req = AnalyzeRequest::new(
        &a.file,
        &source,
        &a.kernel,
        dims(&a.grid, "grid")?,
        dims(&a.block, "block")?,
    );
    req.args = pairs(&a.args, "arg")?;
    req.allocs = pairs(&a.allocs, "alloc")?
        .into_iter()
        .map(|(n, v)| {
            v.parse::<u64>()
                .map(|e| (n.clone(), e))
                .with_context(|| format!("--alloc {n}={v}: expected a number of elements"))
        })
        .collect::<Result<_>>()?;
    req.defines = a.defines;
    if let Some(cc) = &a.cc {
        req = req.ccs(cc)?;
    }
    req.dynamic_shared_bytes = a.dynamic_smem;
    req.max_steps = a.max_steps;
    req.config = Config {
        l1: match a.l1 {
            L1Arg::Default => L1Mode::Default,
            L1Arg::Ca => L1Mode::Ca,
            L1Arg::Cg => L1Mode::Cg,
        },
        smem_bank_mode: if a.smem_bank_size == "8" {
            SmemBankMode::EightByte
        } else {
            SmemBankMode::FourByte
        },
    };
    let analysis = warpscope::analyze(&req)?;
    match a.format {
        Format::Json => println!("{}", serde_json::to_string_pretty(&analysis)?),
        Format::Table => print!(
            "{}",
            warpscope::report::render_table(&analysis, std::io::stdout().is_terminal())
        ),
    }
    Ok(())
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let r = match cli.cmd {
        Cmd::Analyze(a) => analyze(a),
        Cmd::Archs => {
            for a in arch::all() {
                println!("{:5} {:10} {:?}", a.cc.to_string(), a.name, a.family);
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
