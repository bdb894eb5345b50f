//! warpscope: how a CUDA kernel's memory accesses turn into requests, transactions, sectors
//! and shared-memory wavefronts, on every compute capability, without a GPU.
//!
//! The pipeline, one way: the CUDA front end (`warpscope-cuda`) interprets the kernel once
//! and yields warp-level accesses; the model (`warpscope-model`) costs each for every
//! requested compute capability; the report (`warpscope-report`) sums and renders them.
//! [`analyze`] runs it; the binary is a thin command line over it.

use anyhow::{bail, Context, Result};
use std::path::Path;
use warpscope_cuda::Source;
use warpscope_model::Space;
use warpscope_model::{arch, Arch, Config};
use warpscope_report::{
    Aggregator, Analysis, Header, LocalArrayInfo, SiteInfo, SiteTraffic, TrafficReport,
};
use warpscope_traffic::{AccessTraffic, Gpu, Profile, TrafficModel};

pub mod budget;
pub mod compiled;
pub mod diff;
pub mod quick;
mod explain;
mod sass;
pub mod schema;
pub mod sweep;

pub use compiled::{CompileRequest, Frontend};
pub use explain::{explain, ExplainRequest, SiteSelector};
pub use warpscope_cuda as cuda;
pub use warpscope_init as init;
pub use warpscope_model as model;
pub use warpscope_report as report;
pub use warpscope_simt::{Progress, DEFAULT_MAX_MEMORY};
pub use warpscope_traffic as traffic;

/// What to analyze: a kernel of a source file and its launch.
#[derive(Clone, Debug)]
pub struct AnalyzeRequest {
    /// Path shown in messages and reports.
    pub file: String,
    /// The source text.
    pub source: String,
    /// Kernel name, with template arguments for a template (`stride<float>`).
    pub kernel: String,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    /// Scalar kernel arguments: (parameter name, value text).
    pub args: Vec<(String, String)>,
    /// Allocation sizes in elements: (pointer parameter name, elements).
    pub allocs: Vec<(String, u64)>,
    /// `--init` rules: what the allocations hold before the launch (zero without one; the
    /// last rule naming a parameter wins).
    pub init: Vec<warpscope_init::Rule>,
    /// `-D` macros (`NAME` or `NAME=VALUE`).
    pub defines: Vec<String>,
    /// Compute capabilities; `None` means the default, CC 9.0 ([`arch::default_set`]).
    pub archs: Option<Vec<&'static Arch>>,
    /// Leave out, with a note, the capabilities of `archs` that cannot run the launch (too
    /// many threads, too much shared memory) instead of failing: set for the named sets
    /// `all` and `guide` by [`AnalyzeRequest::ccs`].
    pub leave_out_unfit: bool,
    /// Notes to carry into the report (e.g. where the default compute capability came from).
    pub notes: Vec<String>,
    /// Bytes of `extern __shared__` memory per block.
    pub dynamic_shared_bytes: u64,
    pub config: Config,
    /// Loop-iteration limit per loop and block (the compiled path: 32 warp instructions per
    /// iteration and block).
    pub max_steps: u64,
    /// Wall-clock time a block of the compiled path may run, once past
    /// [`warpscope_simt::MIN_STEPS_FOR_TIME`] warp instructions, before it is called a
    /// runaway loop; `None` (the default): only `max_steps`. The command line sets 1 s
    /// unless `--max-steps` is given.
    pub max_block_time: Option<std::time::Duration>,
    /// Bytes the executor's memory images may hold (global memory written, each running
    /// block's shared and local memory): `--max-memory`, default [`DEFAULT_MAX_MEMORY`]
    /// (4 GiB).
    pub max_memory: u64,
    /// Counters of the running launch (blocks done of total) for a progress bar on another
    /// thread; the compiled path fills them.
    pub progress: Option<std::sync::Arc<Progress>>,
    /// Run a sample of this many blocks (`--sample-blocks`) and extrapolate the totals to the
    /// grid; `None`: every block.
    pub sample_blocks: Option<u64>,
    /// Predict traffic below the request and time on these GPUs (`--gpu`); they also fix
    /// the compute capabilities (one analysis per distinct CC, one interpretation for all).
    pub gpus: Vec<GpuTarget>,
    /// Which front end reads a `.cu` file and how to compile it (`.ptx` files always take
    /// the compiled path).
    pub compile: CompileRequest,
    /// `--texture`: the texture and surface objects the kernel's parameters hold, and the
    /// module's texture and surface references, each by its name (both front ends).
    pub textures: Vec<warpscope_model::texture::TextureDesc>,
    /// `--tensor-map`: the `CUtensorMap` parameters of TMA kernels, by name (compiled path).
    pub tensor_maps: Vec<(String, warpscope_simt::TensorMap)>,
    /// Names for a `.ptx` entry's parameters, in order, where no CUDA source declares them
    /// (the Python package names a Triton kernel's by its Python arguments); parameters
    /// past the list keep `param_K`. Empty by default.
    pub param_names: Vec<String>,
}

/// A GPU of the table and the rates to predict with (datasheet or calibrated).
#[derive(Clone, Debug)]
pub struct GpuTarget {
    pub gpu: &'static Gpu,
    pub profile: Profile,
}

impl GpuTarget {
    /// `name` from the GPU table (`h100`, `c2050`, …) with `profile_json` (a `calibrate`
    /// profile) or the datasheet rates.
    ///
    /// Errors: an unknown GPU (the message lists the table), a profile that does not parse
    /// or is out of range.
    pub fn new(name: &str, profile_json: Option<&str>) -> Result<GpuTarget> {
        let gpu = warpscope_traffic::gpus::lookup(name)
            .map_err(|e| anyhow::anyhow!("--gpu {name}: {e}"))?;
        let profile = match profile_json {
            Some(j) => {
                let p = Profile::from_json(j).map_err(|e| anyhow::anyhow!("--profile: {e}"))?;
                p.check().map_err(|e| anyhow::anyhow!("--profile: {e}"))?;
                p
            }
            None => Profile::datasheet(gpu),
        };
        Ok(GpuTarget { gpu, profile })
    }
}

impl AnalyzeRequest {
    /// A request with no arguments, the default architectures and limits.
    pub fn new(file: &str, source: &str, kernel: &str, grid: [u32; 3], block: [u32; 3]) -> Self {
        AnalyzeRequest {
            file: file.to_string(),
            source: source.to_string(),
            kernel: kernel.to_string(),
            grid,
            block,
            args: Vec::new(),
            allocs: Vec::new(),
            init: Vec::new(),
            defines: Vec::new(),
            archs: None,
            leave_out_unfit: false,
            notes: Vec::new(),
            dynamic_shared_bytes: 0,
            config: Config::default(),
            max_steps: warpscope_cuda::DEFAULT_MAX_STEPS,
            max_block_time: None,
            max_memory: DEFAULT_MAX_MEMORY,
            progress: None,
            sample_blocks: None,
            gpus: Vec::new(),
            compile: CompileRequest::default(),
            textures: Vec::new(),
            tensor_maps: Vec::new(),
            param_names: Vec::new(),
        }
    }

    /// Adds `--arg name=value`.
    pub fn arg(mut self, name: &str, value: impl ToString) -> Self {
        self.args.push((name.to_string(), value.to_string()));
        self
    }

    /// Sets the compute capabilities: `"9.0"`, `"sm_90"`, `"hopper"`, `"1.0,2.0"`, or the
    /// named sets `"all"` and `"guide"` ([`arch::parse_list`]); a list of named sets only
    /// also sets [`AnalyzeRequest::leave_out_unfit`].
    ///
    /// Errors: what [`arch::parse_list`] reports, prefixed with `--cc LIST`.
    pub fn ccs(mut self, list: &str) -> Result<Self> {
        self.archs = Some(arch::parse_list(list).map_err(|e| anyhow::anyhow!("--cc {list}: {e}"))?);
        self.leave_out_unfit = arch::is_named_set(list);
        Ok(self)
    }
}

/// Interprets the launch once and costs every access for every requested compute
/// capability.
///
/// Errors: everything the front end reports (syntax, unsupported constructs, bad
/// arguments, out-of-bounds or misaligned accesses, runaway loops), and a launch over the
/// limits of a requested compute capability. With [`AnalyzeRequest::leave_out_unfit`] (the
/// named sets `all`, `guide`) the capabilities that cannot run the launch are left out with
/// a note instead, and it is an error only when none is left.
pub fn analyze(req: &AnalyzeRequest) -> Result<Analysis> {
    let p = prepare(req)?;
    analyze_prepared(req, &p)
}

/// A kernel ready to run, from either front end.
enum Loaded {
    /// The source interpreter's lowered kernel and its launch.
    Source(warpscope_cuda::Kernel, warpscope_cuda::LaunchConfig),
    /// PTX (compiled from the `.cu`, or given) on the SIMT executor.
    Compiled(Box<compiled::CompiledKernel>),
}

impl Loaded {
    fn sites(&self) -> Vec<SiteInfo> {
        match self {
            Loaded::Source(k, _) => k
                .sites()
                .iter()
                .enumerate()
                .map(|(i, s)| SiteInfo {
                    line: s.loc.line,
                    column: s.loc.col,
                    text: s.text.clone(),
                    op: s.op,
                    read_only: s.read_only,
                    ptx: None,
                    ptx_line: None,
                    file: k.site_file(i).map(str::to_string),
                })
                .collect(),
            Loaded::Compiled(k) => k.sites.clone(),
        }
    }

    /// Runs the launch; the sink gets (site, access, origin).
    fn run(
        &self,
        sink: &mut dyn FnMut(usize, &warpscope_model::WarpAccess, warpscope_cuda::WarpOrigin),
    ) -> Result<()> {
        match self {
            Loaded::Source(k, cfg) => Ok(k.run_with_origin(cfg, sink)?),
            Loaded::Compiled(k) => Ok(k.prog.run(&k.launch, &mut |s, a, o| {
                sink(
                    s as usize,
                    a,
                    warpscope_cuda::WarpOrigin {
                        block: o.block,
                        warp: o.warp,
                    },
                )
            })?),
        }
    }

    /// Blocks of the sample the launch runs (`--sample-blocks`), `None` for every block.
    fn sampled_blocks(&self) -> Option<u64> {
        let sample = match self {
            Loaded::Source(_, cfg) => &cfg.sample,
            Loaded::Compiled(k) => &k.launch.sample,
        };
        sample.as_ref().map(|s| s.len() as u64)
    }

    /// Bytes of shared memory per block (static, then `dynamic` of `extern __shared__`).
    fn shared_bytes(&self, dynamic: u64) -> u64 {
        match self {
            Loaded::Source(k, _) => k.shared_bytes(dynamic),
            Loaded::Compiled(k) => k.shared_bytes(),
        }
    }

    /// Bytes of local memory one thread declares (PTX `.local`); the source path checks its
    /// own arrays as it lowers them.
    fn local_bytes_per_thread(&self) -> u64 {
        match self {
            Loaded::Source(..) => 0,
            Loaded::Compiled(k) => k.prog.local_bytes,
        }
    }

    fn local_arrays(&self) -> Vec<LocalArrayInfo> {
        match self {
            Loaded::Source(k, _) => k
                .local_arrays()
                .iter()
                .map(|l| LocalArrayInfo {
                    name: l.name.clone(),
                    line: l.loc.line,
                    column: l.loc.col,
                    reason: l.reason.clone(),
                })
                .collect(),
            Loaded::Compiled(_) => Vec::new(),
        }
    }
}

/// A loaded kernel and the architectures to cost it on.
struct Prepared {
    kernel: Loaded,
    archs: Vec<&'static Arch>,
    notes: Vec<String>,
}

fn is_ptx_file(file: &str) -> bool {
    file.to_ascii_lowercase().ends_with(".ptx")
}

/// The kernel of `req` (a `.cu`, or a `.ptx`) through the compiled path: nvcc, else NVRTC
/// (feature `cuda`), for the CCs of `req` (default: 9.0). For `warpscope run`/`verify`, which
/// size real buffers from what the executor touched.
///
/// Errors: no compiler (how to get one), a compiler error, what [`analyze`] reports.
pub fn load_compiled(req: &AnalyzeRequest) -> Result<compiled::CompiledKernel> {
    let archs = match &req.archs {
        Some(a) => a.clone(),
        None => arch::default_set(),
    };
    if is_ptx_file(&req.file) {
        return compiled::load_ptx(req, &req.source, &req.file);
    }
    match compiled::toolkit(&req.compile) {
        Ok(tk) => compiled::compile_and_load(req, &tk, &archs),
        #[cfg(feature = "cuda")]
        Err(_) if req.compile.nvcc.is_none() => compiled::nvrtc_compile_and_load(req, &archs),
        Err(e) => bail!("{e}"),
    }
}

/// Loads the kernel through the front end the request asks for.
fn load(req: &AnalyzeRequest, archs: &[&'static Arch], notes: &mut Vec<String>) -> Result<Loaded> {
    if is_ptx_file(&req.file) {
        if req.compile.frontend == Frontend::Source {
            bail!(
                "{}: a PTX file has no source for --frontend source; drop the flag",
                req.file
            );
        }
        let mut k = compiled::load_ptx(req, &req.source, &req.file)?;
        notes.append(&mut k.notes);
        return Ok(Loaded::Compiled(Box::new(k)));
    }
    let try_compiled = req.compile.frontend != Frontend::Source && Path::new(&req.file).exists();
    if try_compiled {
        match compiled::toolkit(&req.compile) {
            Ok(tk) => match compiled::compile_and_load(req, &tk, archs) {
                Ok(mut k) => {
                    notes.append(&mut k.notes);
                    return Ok(Loaded::Compiled(Box::new(k)));
                }
                Err(e) => match texture_references_refused(&e.to_string()) {
                    Some(line) if req.compile.frontend == Frontend::Auto => notes.push(format!(
                        "source interpreter used: texture references (texture<…>/surface<…> globals) were removed in CUDA 12, and nvcc {} refuses them ({line}); the source interpreter reads them",
                        tk.version
                    )),
                    Some(_) => bail!("{e}\ntexture references were removed in CUDA 12: without --frontend ptx the source interpreter reads them"),
                    None => return Err(e),
                },
            },
            Err(e) => {
                // No nvcc: NVRTC (feature `cuda`) compiles device code the same way.
                #[cfg(feature = "cuda")]
                if req.compile.nvcc.is_none() {
                    match compiled::nvrtc_compile_and_load(req, archs) {
                        Ok(mut k) => {
                            notes.append(&mut k.notes);
                            return Ok(Loaded::Compiled(Box::new(k)));
                        }
                        Err(n) if req.compile.frontend == Frontend::Ptx => {
                            bail!("--frontend ptx needs a CUDA compiler: {e}\nNVRTC: {n}")
                        }
                        Err(_) => {}
                    }
                }
                if req.compile.frontend == Frontend::Ptx || req.compile.nvcc.is_some() {
                    bail!("--frontend ptx needs a CUDA compiler: {e}")
                }
                notes.push(format!(
                    "source interpreter used (no CUDA compiler found, so the figures are for the accesses as written, not as compiled): {}",
                    e.to_string().lines().next().unwrap_or_default()
                ));
            }
        }
    }
    let src = Source::parse_with_includes(
        &req.file,
        &req.source,
        &req.defines,
        &req.compile.include_dirs,
    )?;
    let kernel = src.kernel(&req.kernel)?;
    let mut cfg = kernel.configure(
        &req.args,
        &req.allocs,
        req.grid,
        req.block,
        req.dynamic_shared_bytes,
        req.max_steps,
    )?;
    kernel.apply_init(&mut cfg, &req.init, &req.allocs)?;
    kernel.set_textures(&mut cfg, &req.textures)?;
    cfg.max_block_time = req.max_block_time;
    cfg.max_memory = req.max_memory;
    cfg.progress = req.progress.clone();
    cfg.sample = sample_of(req);
    Ok(Loaded::Source(kernel, cfg))
}

/// The line of nvcc's output that refuses a texture or surface reference (`f.cu(3): error:
/// texture is not a template`, CUDA 12 and later, which removed them), if `compile_error`
/// has one.
fn texture_references_refused(compile_error: &str) -> Option<&str> {
    compile_error.lines().map(str::trim).find(|l| {
        l.ends_with("error: texture is not a template")
            || l.ends_with("error: surface is not a template")
    })
}

/// The blocks `--sample-blocks` runs, when it is given and smaller than the grid.
pub(crate) fn sample_of(req: &AnalyzeRequest) -> Option<std::sync::Arc<Vec<u64>>> {
    let want = req.sample_blocks?;
    let total: u64 = req.grid.iter().map(|&x| x as u64).product();
    (want < total).then(|| std::sync::Arc::new(warpscope_simt::sample_blocks(req.grid, want)))
}

fn prepare(req: &AnalyzeRequest) -> Result<Prepared> {
    if req.sample_blocks.is_some() && !req.gpus.is_empty() {
        bail!("--sample-blocks with --gpu: the cache model needs every block in order; drop one of them");
    }
    let grid = req.grid.map(|x| x as u64);
    let block = req.block.map(|x| x as u64);
    let mut notes = Vec::new();
    let mut fixed: Vec<&'static Arch> = Vec::new();
    for g in &req.gpus {
        let a = g.gpu.arch();
        if let Some(list) = &req.archs {
            if list.len() != 1 || list[0].cc != a.cc {
                bail!(
                    "--gpu {} is CC {}; --cc {} asks for others: drop --cc (the GPU fixes it)",
                    g.gpu.name,
                    a.cc,
                    list.iter()
                        .map(|a| a.cc.to_string())
                        .collect::<Vec<_>>()
                        .join(",")
                );
            }
        }
        if !fixed.iter().any(|f| f.cc == a.cc) {
            fixed.push(a);
        }
    }
    let lenient = fixed.is_empty() && req.leave_out_unfit;
    let requested: Vec<&'static Arch> = if !fixed.is_empty() {
        fixed
    } else {
        req.archs.clone().unwrap_or_else(arch::default_set)
    };
    notes.extend(req.notes.iter().cloned());
    let mut candidates: Vec<&'static Arch> = Vec::new();
    for a in requested {
        match a.check_launch(grid, block) {
            Ok(()) => candidates.push(a),
            Err(e) if lenient => notes.push(format!("CC {} left out: {e}", a.cc)),
            Err(e) => {
                return Err(e).context(
                    "the launch cannot run on this compute capability; choose another with --cc",
                )
            }
        }
    }
    if candidates.is_empty() {
        bail!(
            "no compute capability of the set can run this launch: {}",
            notes.join("; ")
        );
    }
    let kernel = load(req, &candidates, &mut notes)?;
    let shared = kernel.shared_bytes(req.dynamic_shared_bytes);
    let local = kernel.local_bytes_per_thread();
    let mut archs: Vec<&'static Arch> = Vec::new();
    for a in candidates {
        match a
            .limits
            .check_shared(shared)
            .and_then(|()| a.limits.check_local(local))
        {
            Ok(()) => archs.push(a),
            Err(e) if lenient => notes.push(format!("CC {} left out: {e}", a.cc)),
            Err(e) => return Err(e).context("choose another compute capability with --cc"),
        }
    }
    if archs.is_empty() {
        bail!(
            "no compute capability of the set can run this launch: {}",
            notes.join("; ")
        );
    }
    Ok(Prepared {
        kernel,
        archs,
        notes,
    })
}

fn analyze_prepared(req: &AnalyzeRequest, p: &Prepared) -> Result<Analysis> {
    let kernel = &p.kernel;
    let mut agg = Aggregator::new(p.archs.clone(), req.config);
    // One traffic model per GPU, all fed by the one interpretation, each with its
    // immediate traffic per (site, space, width).
    type PerRow = std::collections::HashMap<(usize, Space, u32), AccessTraffic>;
    let mut traffic: Vec<(TrafficModel, PerRow)> = req
        .gpus
        .iter()
        .map(|g| {
            let arch = g.gpu.arch();
            (
                TrafficModel::new(g.gpu, arch, &req.config, &g.profile),
                PerRow::new(),
            )
        })
        .collect();
    let grid = req.grid.map(u64::from);
    let (archs, config) = (p.archs.clone(), req.config);
    // No cache model to feed in order: the accesses are summed on the threads that run the
    // blocks, and the parts merged in block order.
    if let (Loaded::Compiled(k), true) = (kernel, traffic.is_empty()) {
        k.prog.run_parts(
            &k.launch,
            &|| Aggregator::on_this_thread(archs.clone(), config),
            &|part, site, a, _| part.add(site as usize, a),
            &mut |part| agg.merge(part),
        )?;
    } else if let (Loaded::Source(k, cfg), true) = (kernel, traffic.is_empty()) {
        k.run_parts(
            cfg,
            &|| Aggregator::on_this_thread(archs.clone(), config),
            &|part, site, a, _| part.add(site, a),
            &mut |part| agg.merge(part),
        )?;
    } else {
        kernel.run(&mut |site, a, origin| {
            agg.add(site, a);
            if traffic.is_empty()
                || !matches!(
                    a.space,
                    Space::Global | Space::Local | Space::Texture | Space::Surface
                )
            {
                return;
            }
            let b = origin.block.map(u64::from);
            let block_linear = b[0] + grid[0] * (b[1] + grid[1] * b[2]);
            for (t, per_row) in &mut traffic {
                let x = t.add(block_linear, origin.warp, a);
                let r = per_row.entry((site, a.space, a.width)).or_default();
                r.l1_bytes += x.l1_bytes;
                r.l2_bytes += x.l2_bytes;
                r.dram_bytes += x.dram_bytes;
            }
        })?;
    }
    let total_blocks: u64 = req.grid.iter().map(|&x| x as u64).product();
    let sample = kernel.sampled_blocks();
    if let Some(n) = sample {
        agg.scale(total_blocks, n);
    }
    let sites: Vec<SiteInfo> = kernel.sites();
    let local_arrays = kernel.local_arrays();
    let header = Header {
        kernel: req.kernel.clone(),
        source: req.file.clone(),
        grid: req.grid,
        block: req.block,
        local_arrays,
        notes: p.notes.clone(),
    };
    let mut analysis = agg.finish(header, &sites);
    if let Some(n) = sample {
        analysis.notes.push(format!(
            "sampled {} of {} blocks ({:.2} %): the totals are extrapolated to the whole grid (×{:.1}); per-access figures (sectors per request, efficiency) are those of the sampled blocks",
            warpscope_report::thousands(n), warpscope_report::thousands(total_blocks), 100.0 * n as f64 / total_blocks as f64, total_blocks as f64 / n as f64
        ));
    }
    for ((t, per_row), g) in traffic.into_iter().zip(&req.gpus) {
        let launch = t.finish();
        let mut rows: Vec<SiteTraffic> = per_row
            .into_iter()
            .map(|((site, space, _), x)| {
                let s = &sites[site];
                SiteTraffic {
                    line: s.line,
                    column: s.column,
                    text: s.text.clone(),
                    space,
                    op: s.op,
                    l1_bytes: x.l1_bytes,
                    l2_bytes: x.l2_bytes,
                    dram_bytes: x.dram_bytes,
                }
            })
            .collect();
        rows.sort_by_key(|r| (r.line, r.column, r.op));
        analysis.traffic.push(TrafficReport {
            profile: g.profile.origin.clone(),
            copy_gbps: g.profile.copy_gbps,
            effective_gbps: launch.effective_gbps(launch.bytes_requested),
            launch,
            sites: rows,
        });
    }
    Ok(analysis)
}
