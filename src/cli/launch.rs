//! The launch flags shared by `analyze` and `explain`, and the request built from them.

use super::{launches, quick};
use anyhow::{bail, Context, Result};
use clap::ValueEnum;
use warpscope::model::{Config, L1Mode, SmemBankMode};
use warpscope::AnalyzeRequest;

/// The launch: the kernel (a file's or an -e pattern's), its configuration and the
/// architectures, shared by `analyze` and `explain`.
#[derive(clap::Args, Clone)]
pub struct LaunchArgs {
    /// The CUDA source file (.cu); or give a pattern with -e.
    #[arg(required_unless_present = "expr", conflicts_with = "expr")]
    file: Option<String>,
    /// A quick pattern instead of a file: declarations, then one access, ';'-separated, e.g.
    /// 'float a[]; a[(blockIdx.x*blockDim.x + threadIdx.x) * 2]' or
    /// '__shared__ float t[32][33]; t[threadIdx.x][threadIdx.y]'. Undeclared names are int
    /// parameters (--arg, --sweep).
    #[arg(short = 'e', long = "expr", value_name = "EXPR")]
    expr: Option<String>,
    /// Kernel name; a template with its arguments, e.g. 'stride<float>' (with a FILE). `all`,
    /// or a glob ('transpose*'): every kernel of the FILE that has a launch in its host code
    /// (`warpscope launches`), or with --grid and --block given, every kernel the glob
    /// matches, each analyzed in turn.
    #[arg(long, required_unless_present_any = ["expr", "launch"], conflicts_with = "expr")]
    kernel: Option<String>,
    /// The launch N (0-based) of the FILE's host code, as `warpscope launches FILE` lists
    /// them: its kernel, grid, block, shared memory and constant scalar arguments; flags given
    /// override them, and what is not a compile-time constant must be given.
    #[arg(long, value_name = "N", conflicts_with = "expr", requires = "file")]
    launch: Option<usize>,
    /// Grid dimensions X[,Y[,Z]] (blocks; with -e the default is 1). Required with --kernel
    /// NAME; --launch N takes the host code's.
    #[arg(long)]
    grid: Option<String>,
    /// Block dimensions X[,Y[,Z]] (threads; with -e the default is 32: one warp). Required
    /// with --kernel NAME; --launch N takes the host code's.
    #[arg(long)]
    block: Option<String>,
    /// Scalar kernel parameter NAME=VALUE (repeatable); a struct passed by value takes its
    /// fields as NAME.FIELD=VALUE (fields not given are 0).
    #[arg(long = "arg", value_name = "NAME=VALUE")]
    args: Vec<String>,
    /// Size of a pointer parameter's allocation in elements, NAME=ELEMENTS (enables bounds checks).
    #[arg(long = "alloc", value_name = "NAME=ELEMENTS")]
    allocs: Vec<String>,
    /// What a pointer parameter's memory holds before the launch, NAME=MODE (MODE alone: every
    /// pointer parameter; repeatable, the last naming a parameter wins). MODE: zero (the
    /// default), iota (element k holds k), random[:SEED] (floats uniform in [0,1), integers
    /// uniform in [0, its --alloc elements) or [0, 32768) without --alloc; SEED defaults to the
    /// parameter's position + 1), const:V, file:PATH (a NumPy .npy of the element type, or raw
    /// little-endian elements; its element count sizes the allocation, and must equal --alloc).
    #[arg(long = "init", value_name = "NAME=MODE")]
    init: Vec<String>,
    /// A texture or surface object parameter, or a texture/surface reference (`texture<…>
    /// NAME;` global) by its name, repeatable:
    /// NAME=KIND:W[xH[xD]]:FORMAT[,addr=clamp|wrap|mirror|border][,filter=point|linear]
    /// [,normalized][,read=element|normalized-float][,pitch=BYTES]; KIND linear (tex1Dfetch),
    /// pitch2d or array (a CUDA array, block-linear); FORMAT float, float4, uchar4, ...;
    /// defaults as CUDA's: clamp, point, unnormalized, element. Example:
    /// --texture img=array:1024x1024:float
    #[arg(long = "texture", value_name = "NAME=KIND:SIZE:FORMAT")]
    textures: Vec<String>,
    /// A `CUtensorMap` parameter of a TMA kernel, repeatable, with the fields of
    /// cuTensorMapEncodeTiled: NAME=DTYPE:DIMS:STRIDES:BOX[:swizzle=none|32|64|128,
    /// oob=zero|nan,elem_strides=AxB…]; DIMS and BOX innermost first (`4096x4096`), STRIDES
    /// the byte strides of dimensions 1.. (`-`: packed). The tensor gets its own allocation.
    /// Example: --tensor-map tmap=f16:4096x4096:8192:64x64:swizzle=128. An im2col map
    /// (cuTensorMapEncodeIm2col, for `.im2col` copies) has BOX `im2col` and the options
    /// channels=channelsPerPixel, pixels=pixelsPerColumn, lower=/upper= the pixel box's
    /// corners per spatial dimension (innermost first, e.g. -1x-1); DIMS as C×W×H×N:
    /// --tensor-map act=f16:64x56x56x8:-:im2col:channels=64,pixels=128,lower=-1x-1,upper=-1x-1
    #[arg(long = "tensor-map", value_name = "NAME=DTYPE:DIMS:STRIDES:BOX")]
    tensor_maps: Vec<String>,
    /// Preprocessor macro NAME[=VALUE], as nvcc takes it.
    #[arg(short = 'D', value_name = "NAME[=VALUE]")]
    defines: Vec<String>,
    /// Compute capabilities, comma-separated: 9.0, 90, sm_90 or compute_90; an architecture
    /// name for its first CC (tesla 1.0, fermi 2.0, kepler 3.0, maxwell 5.0, pascal 6.0,
    /// volta 7.0, turing 7.5, ampere 8.0, ada 8.9, hopper 9.0, blackwell 10.0); 'all'; or
    /// 'guide' (1.0,1.3,2.0,3.5,5.2,7.0,8.0,9.0,12.0: the Programming Guide's classic
    /// comparison, then one per later generation). `warpscope archs` lists them. Default: the
    /// GPU at hand's CC in a build with the `cuda` feature, else 9.0.
    #[arg(long, value_name = "LIST")]
    cc: Option<String>,
    /// Blocks per thread-block cluster, X,Y,Z (CC 9.0+; default: the kernel's
    /// __cluster_dims__, else no cluster). Must divide the grid; at most 8 blocks, 16 with
    /// --cluster-non-portable (CUDA Programming Guide, "Thread Block Clusters").
    #[arg(long, value_name = "X,Y,Z", value_parser = parse_cluster)]
    cluster: Option<[u32; 3]>,
    /// Allow non-portable cluster sizes (up to 16 blocks on CC 9.0).
    #[arg(long)]
    cluster_non_portable: bool,
    /// Bytes of extern __shared__ memory per block (default 0, or the --launch's).
    #[arg(long, value_name = "BYTES")]
    dynamic_smem: Option<u64>,
    /// Caching of global loads on CC 2.x/3.x (-Xptxas -dlcm).
    #[arg(long, value_enum, default_value_t = L1Arg::Default)]
    l1: L1Arg,
    /// Shared-memory bank width in bytes on CC 3.x.
    #[arg(long, default_value = "4", value_parser = ["4", "8"])]
    smem_bank_size: String,
    /// Steps one block may run before it is reported as runaway: a step is 32 warp
    /// instructions (both front ends run on the same executor) [default: 4000000, which
    /// lets a 1,024-thread block run 100,000 iterations of a 40-instruction loop]. Only
    /// this count decides, never the time taken, so a loaded machine gives the same result.
    #[arg(long, value_name = "N")]
    max_steps: Option<u64>,
    /// Memory the executor may hold for the launch's memory images: global memory written
    /// (kept when loaded values reach addresses or branches), each running block's shared
    /// and local memory and its warps' registers; a launch that needs more is refused. Bytes,
    /// or with K, M, G, T (powers of 1024): 512M, 4G [default: half the memory available when
    /// warpscope starts (the OS's, or a container's limit less its use when lower), at least
    /// 256M].
    #[arg(long, value_name = "BYTES", value_parser = parse_bytes)]
    max_memory: Option<u64>,
    /// Run only a sample of the grid's blocks and extrapolate the totals: N blocks, or a
    /// FRACTION of them (0.01), spread evenly and always with the first, the last and the
    /// last block of each grid dimension. Every output states the fraction and the error to
    /// expect (three standard errors of the sample's 16 interleaved groups). `auto`: a pilot
    /// of 8 blocks counts its work (warp instructions, and 16 for each warp access), then
    /// about 24 million units' worth of blocks run (every block when the launch fits).
    #[arg(long, value_name = "N|FRACTION|auto", value_parser = parse_sample)]
    sample_blocks: Option<SampleArg>,
    /// Skip the checks that find bugs in the kernel (synccheck, racecheck, initcheck): their
    /// shadow of shared memory costs time on kernels that use it much (the 512³ tiled matmul:
    /// about twice the CPU time); the figures are the same either way.
    #[arg(long)]
    no_checks: bool,
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
    /// A further nvcc argument, passed as it is (repeatable): --nvcc-flag=-maxrregcount=32,
    /// --nvcc-flag=--use_fast_math, --nvcc-flag=-Xptxas=-O1. ptxas's own (-Xptxas,
    /// -maxrregcount) also reach the SASS check.
    #[arg(long = "nvcc-flag", value_name = "ARG", allow_hyphen_values = true)]
    nvcc_flags: Vec<String>,
    /// Analyze the PTX as written. By default the compiled path asks ptxas (and nvdisasm)
    /// what it made of the PTX and costs loads and stores it merged into one wider SASS
    /// instruction (LDS.128 from four ld.shared.f32) as that instruction.
    #[arg(long)]
    no_sass: bool,
}

#[derive(Clone, Copy, ValueEnum)]
pub enum FrontendArg {
    Auto,
    Ptx,
    Source,
}

#[derive(Clone, Copy, ValueEnum)]
pub enum L1Arg {
    Default,
    Ca,
    Cg,
}

impl LaunchArgs {
    /// Whether `--cc` was given.
    pub fn cc_given(&self) -> bool {
        self.cc.is_some()
    }
}

/// The default compute capability when `--cc` is not given, and a note saying where it came
/// from: the GPU at hand's (device 0) when the driver finds one and warpscope models its CC.
/// `None`: the library's default, 9.0.
#[cfg(feature = "cuda")]
fn device_default() -> Option<(&'static warpscope::model::Arch, String)> {
    let info = warpscope_gpu::device_info(0).ok()?;
    let cc = warpscope::model::ComputeCapability::new(
        u8::try_from(info.cc.0).ok()?,
        u8::try_from(info.cc.1).ok()?,
    );
    warpscope::model::arch::lookup(cc).map(|a| {
        let note = format!(
            "CC {cc} is the GPU at hand's ({}); choose others with --cc",
            info.name
        );
        (a, note)
    })
}

#[cfg(not(feature = "cuda"))]
fn device_default() -> Option<(&'static warpscope::model::Arch, String)> {
    None
}

pub fn dims(s: &str, what: &str) -> Result<[u32; 3]> {
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

/// A size in bytes: `4294967296`, `512M`, `4G`, `1.5GiB` (K, M, G, T: powers of 1024).
/// `--sample-blocks`: a count of blocks or a fraction of the grid.
#[derive(Clone, Copy, Debug)]
enum SampleArg {
    Blocks(u64),
    Fraction(f64),
    /// `auto`: sized from a pilot's warp instructions, its error stated.
    Auto,
}

fn parse_sample(s: &str) -> std::result::Result<SampleArg, String> {
    let t = s.trim();
    if t.eq_ignore_ascii_case("auto") {
        return Ok(SampleArg::Auto);
    }
    if let Ok(n) = t.replace('_', "").parse::<u64>() {
        return if n == 0 {
            Err("--sample-blocks 0: give at least 1 block (or a fraction such as 0.01)".into())
        } else {
            Ok(SampleArg::Blocks(n))
        };
    }
    match t.parse::<f64>() {
        Ok(f) if f > 0.0 && f <= 1.0 => Ok(SampleArg::Fraction(f)),
        _ => Err(format!(
            "--sample-blocks {s}: give a number of blocks (1000), a fraction of the grid between 0 and 1 (0.01), or auto"
        )),
    }
}

fn parse_bytes(s: &str) -> std::result::Result<u64, String> {
    match parse_size::Config::new().with_binary().parse_size(s) {
        Ok(0) => Err("the memory cap must be at least 1 byte".into()),
        Ok(n) => Ok(n),
        Err(e) => Err(format!(
            "'{s}' is not a size ({e}): give bytes, or a number with K, M, G or T (powers of 1024), e.g. 512M or 4G"
        )),
    }
}

pub fn pairs(v: &[String], flag: &str) -> Result<Vec<(String, String)>> {
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
impl LaunchArgs {
    /// The kernel's file, when one is given (not -e).
    pub fn file(&self) -> Option<&str> {
        self.file.as_deref()
    }

    /// The -I folders.
    pub fn include_dirs(&self) -> &[std::path::PathBuf] {
        &self.include_dirs
    }

    /// The files this launch reads that an output must not overwrite: the kernel's file
    /// and the `--init file:PATH` data.
    pub fn inputs(&self) -> Vec<std::path::PathBuf> {
        let mut v: Vec<std::path::PathBuf> = self.file.iter().map(Into::into).collect();
        v.extend(self.init.iter().filter_map(
            |s| match warpscope::init::Rule::parse(s).ok()?.mode {
                warpscope::init::Mode::File(p) => Some(p),
                _ => None,
            },
        ));
        v
    }
}

/// Whether `kernel` (a --kernel value) selects several kernels: `all` or a glob (not a
/// demangled signature such as `k(float*, int)`, whose `*` is a pointer).
pub fn selects_many(kernel: &str) -> bool {
    kernel == "all" || (kernel.contains(['*', '?', '[']) && !kernel.contains('('))
}

/// The launches `--kernel all|GLOB` selects in `l`'s file, each as its own launch flags and
/// a name for its heading: with --grid and --block given, every kernel of the file the glob
/// matches (templates, which need their arguments, left out); else every launch of the host
/// code whose kernel matches, as `--launch N`. `None` when `l` names one kernel.
///
/// Errors: an invalid glob; a file that cannot be read or parsed; no kernel matching (the
/// error lists the kernels and launches there are).
pub fn kernel_selection(l: &LaunchArgs) -> Result<Option<Vec<(String, LaunchArgs)>>> {
    let (Some(kernel), Some(file)) = (&l.kernel, &l.file) else {
        return Ok(None);
    };
    if !selects_many(kernel) {
        return Ok(None);
    }
    let pattern = if kernel == "all" {
        "*"
    } else {
        kernel.as_str()
    };
    let glob = glob::Pattern::new(pattern)
        .map_err(|e| anyhow::anyhow!("--kernel {kernel}: not a glob pattern: {e}"))?;
    // A template matches by its name alone too ('scale*' takes scale<float>).
    let matches =
        |name: &str| glob.matches(name) || glob.matches(name.split('<').next().unwrap_or(name));
    let text = super::input::read_text(file, "file")?;
    let ptx = file.to_ascii_lowercase().ends_with(".ptx");
    let mut chosen = Vec::new();
    let mut there = Vec::new();
    let full_launch = l.grid.is_some() && l.block.is_some();
    if full_launch {
        for name in warpscope::kernels_of(file, &text, &l.defines)? {
            there.push(name.clone());
            // A template's generic declaration (`k<T>`) cannot run without its arguments.
            if matches(&name) && !name.contains('<') {
                let mut one = l.clone();
                one.kernel = Some(name.clone());
                one.launch = None;
                chosen.push((name, one));
            }
        }
    } else if !ptx {
        let list = warpscope::cuda::host_launches(file, &text, &l.defines)
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        for (i, h) in list.iter().enumerate() {
            there.push(format!("{} (launch {i})", h.kernel));
            if matches(&h.kernel) {
                let mut one = l.clone();
                one.kernel = None;
                one.launch = Some(i);
                chosen.push((
                    format!("{} (launch {i}, {file}:{}:{})", h.kernel, h.line, h.column),
                    one,
                ));
            }
        }
    }
    if chosen.is_empty() {
        let what = if full_launch {
            "kernel"
        } else {
            "host-code launch"
        };
        bail!(
            "--kernel {kernel}: no {what} of {file} matches ({}); {}",
            if there.is_empty() {
                "it has none".to_string()
            } else {
                format!("there are: {}", there.join(", "))
            },
            if full_launch {
                "give another pattern"
            } else {
                "give --grid and --block (and --arg) to analyze kernels with no launch in the file"
            }
        );
    }
    Ok(Some(chosen))
}

pub struct Job {
    pub quick: Option<quick::Quick>,
    pub req: AnalyzeRequest,
}

impl Job {
    /// Positions in the generated kernel of -e are reported in the -e text.
    pub fn relocate(&self, e: anyhow::Error) -> anyhow::Error {
        match &self.quick {
            Some(q) => anyhow::anyhow!(q.relocate(&format!("{e:#}"))),
            None => e,
        }
    }

    /// Analyzes `req`, with progress on standard error for a long launch (and, after
    /// [`announce`], the line saying what is analyzed).
    pub fn analyze(&self, req: &AnalyzeRequest) -> Result<warpscope::report::Analysis> {
        let announced;
        let req = match announcer() {
            Some(f) => {
                let mut r = req.clone();
                r.on_loaded = Some(f);
                announced = r;
                &announced
            }
            None => req,
        };
        let mut an = super::progress::with_progress(|progress| match progress {
            Some(p) => {
                let mut req = req.clone();
                req.progress = Some(p);
                warpscope::analyze(&req)
            }
            None => warpscope::analyze(req),
        })
        .map_err(|e| self.relocate(e))?;
        if let Some(q) = &self.quick {
            q.fix_analysis(&mut an);
        }
        Ok(an)
    }
}

/// Builds the request of `l`, checking that the names given to --arg (for -e) and to
/// `sweep` are scalar parameters.
pub fn job(l: &LaunchArgs, sweep: Option<(&quick::Sweep, &str)>) -> Result<Job> {
    if l.expr.is_none() && l.launch.is_none() {
        let missing: Vec<&str> = [("--grid", l.grid.is_none()), ("--block", l.block.is_none())]
            .iter()
            .filter(|(_, m)| *m)
            .map(|(f, _)| *f)
            .collect();
        if !missing.is_empty() {
            bail!(
                "give {} with --kernel (or --launch N to take a launch of the file's host code: `warpscope launches FILE` lists them)",
                missing.join(" and ")
            );
        }
    }
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
        (None, Some(f), k) if k.is_some() || l.launch.is_some() => {
            let bytes = super::input::read_bytes(f, "file")?;
            let src = warpscope::cuda::decode_source(f, &bytes)?;
            (None, f.clone(), src, k.clone().unwrap_or_default())
        }
        _ => bail!("give a FILE with --kernel NAME (or --launch N), or a pattern with -e"),
    };
    let mut args = pairs(&l.args, "arg")?;
    // --launch N: what the flags leave open, from the host code's launch.
    let host = match l.launch {
        Some(n) => Some(launches::from_host(
            &file,
            &source,
            &l.defines,
            n,
            &launches::Given {
                kernel: l.kernel.as_deref(),
                grid: l.grid.is_some(),
                block: l.block.is_some(),
                dynamic_smem: l.dynamic_smem.is_some(),
                // A swept parameter's values are the sweep's.
                args: args
                    .iter()
                    .map(|(n, _)| n.as_str())
                    .chain(sweep.map(|(s, _)| s.name.as_str()))
                    .collect(),
            },
        )?),
        None => None,
    };
    let (kernel, grid, block) = match &host {
        Some(h) => (h.kernel.clone(), h.grid, h.block),
        None => (kernel, [1, 1, 1], [32, 1, 1]),
    };
    let mut req = AnalyzeRequest::new(
        &file,
        &source,
        &kernel,
        match &l.grid {
            Some(g) => dims(g, "grid")?,
            None => grid,
        },
        match &l.block {
            Some(b) => dims(b, "block")?,
            None => block,
        },
    );
    if let Some(h) = &host {
        args.extend(h.args.iter().cloned());
    }
    req.args = args;
    req.textures = l
        .textures
        .iter()
        .map(|t| {
            t.parse::<warpscope::model::texture::TextureDesc>()
                .map_err(|e| anyhow::anyhow!("--texture {t}: {e}"))
        })
        .collect::<Result<_>>()?;
    req.tensor_maps = l
        .tensor_maps
        .iter()
        .map(|t| {
            let (name, spec) = t.split_once('=').ok_or_else(|| {
                anyhow::anyhow!("--tensor-map {t}: expected NAME=DTYPE:DIMS:STRIDES:BOX")
            })?;
            warpscope_simt::TensorMap::parse(spec)
                .map(|m| (name.to_string(), m))
                .map_err(|e| anyhow::anyhow!("--tensor-map {t}: {e}"))
        })
        .collect::<Result<_>>()?;
    req.allocs = pairs(&l.allocs, "alloc")?
        .into_iter()
        .map(|(n, v)| {
            v.parse::<u64>()
                .map(|e| (n.clone(), e))
                .with_context(|| format!("--alloc {n}={v}: expected a number of elements"))
        })
        .collect::<Result<_>>()?;
    req.init = l
        .init
        .iter()
        .map(|s| warpscope::init::Rule::parse(s))
        .collect::<Result<_, _>>()?;
    // Data files are read later, by the init crate: refuse a FIFO or an oversized file now.
    for r in &req.init {
        if let warpscope::init::Mode::File(p) = &r.mode {
            super::input::check(p, "--init file")?;
        }
    }
    req.defines = l.defines.clone();
    match &l.cc {
        Some(cc) => req = req.ccs(cc)?,
        None => {
            if let Some((arch, note)) = device_default() {
                req.archs = Some(vec![arch]);
                req.notes.push(note);
            }
        }
    }
    req.cluster = l.cluster;
    req.cluster_non_portable = l.cluster_non_portable;
    // A -e pattern is one access, not a kernel: no bug to find in it.
    req.checks = quick.is_none() && !l.no_checks;
    req.dynamic_shared_bytes = l
        .dynamic_smem
        .or(host.as_ref().map(|h| h.dynamic_smem))
        .unwrap_or(0);
    req.max_steps = l.max_steps.unwrap_or(warpscope::cuda::DEFAULT_MAX_STEPS);
    req.max_memory = l
        .max_memory
        .unwrap_or_else(super::memory::default_max_memory);
    let blocks: u64 = req.grid.iter().map(|&x| x as u64).product();
    req.sample_auto = matches!(l.sample_blocks, Some(SampleArg::Auto));
    req.sample_blocks = l.sample_blocks.and_then(|s| match s {
        SampleArg::Blocks(n) => Some(n),
        SampleArg::Fraction(f) => Some(((blocks as f64 * f).ceil() as u64).max(1)),
        SampleArg::Auto => None,
    });
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
        no_sass: l.no_sass,
        sass_listing: false,
        nvcc_flags: l.nvcc_flags.clone(),
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
        let params = warpscope::cuda::Source::parse_with_includes(
            &req.file,
            &req.source,
            &req.defines,
            &req.compile.include_dirs,
        )
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

/// `--cluster X,Y,Z` (or `X`, `X,Y`): blocks per cluster, each at least 1.
fn parse_cluster(s: &str) -> Result<[u32; 3], String> {
    let v: Vec<u32> = s
        .split(',')
        .map(|x| x.trim().parse::<u32>())
        .collect::<Result<_, _>>()
        .map_err(|e| format!("--cluster {s}: {e}; give X,Y,Z, e.g. 2,1,1"))?;
    if v.is_empty() || v.len() > 3 || v.contains(&0) {
        return Err(format!(
            "--cluster {s}: give 1 to 3 dimensions, each at least 1, e.g. 2,1,1"
        ));
    }
    Ok(std::array::from_fn(|i| v.get(i).copied().unwrap_or(1)))
}

static ANNOUNCE: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// From now on [`Job::analyze`] writes, before each run, a line on standard error saying what
/// is analyzed (front end, compiler and version, PTX target, CCs), unless `-q`; the same line
/// twice in a row (the points of a sweep) once.
pub fn announce() {
    ANNOUNCE.store(true, std::sync::atomic::Ordering::Relaxed);
}

fn announcer() -> Option<warpscope::OnLoaded> {
    if !ANNOUNCE.load(std::sync::atomic::Ordering::Relaxed) || super::quiet() {
        return None;
    }
    static LAST: std::sync::Mutex<String> = std::sync::Mutex::new(String::new());
    Some(warpscope::OnLoaded(std::sync::Arc::new(|line: &str| {
        if let Ok(mut last) = LAST.lock() {
            if *last != line {
                eprintln!("{line}");
                *last = line.to_string();
            }
        }
    })))
}
