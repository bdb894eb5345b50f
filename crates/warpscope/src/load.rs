//! Front-end loading: a request's kernel (a `.cu` through nvcc or NVRTC to PTX, a `.cu`
//! through the source front end, or a `.ptx` as given) becomes a [`Loaded`] kernel with its
//! launch, and the compute capabilities that can run it are chosen ([`prepare`]).
//!
//! Both front ends end on the SIMT executor (`warpscope-simt`): the source front end lowers
//! its IR to PTX of its own, the compiled path decodes the compiler's. [`Loaded`] is the one
//! interface the run ([`crate::run`]) uses for either.

use anyhow::{bail, Context, Result};
use std::path::Path;
use warpscope_cuda::Source;
use warpscope_model::{arch, Arch};
use warpscope_report::{LocalArrayInfo, SiteInfo};

use crate::compiled::{self, Frontend};
use crate::AnalyzeRequest;

/// What [`Loaded::run_parts`] feeds each access to: `(part, site, access, block)`, the block
/// as its x, y, z in the grid.
pub(crate) type Feed<'a, T> =
    dyn Fn(&mut T, usize, &warpscope_model::WarpAccess, [u32; 3]) + Sync + 'a;

/// A kernel ready to run, from either front end.
pub(crate) enum Loaded {
    /// The source front end's kernel (its IR lowered to PTX for the SIMT executor) and
    /// its launch.
    Source(warpscope_cuda::Kernel, warpscope_cuda::LaunchConfig),
    /// PTX (compiled from the `.cu`, or given) on the SIMT executor.
    Compiled(Box<compiled::CompiledKernel>),
}

impl Loaded {
    pub(crate) fn sites(&self) -> Vec<SiteInfo> {
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
    pub(crate) fn run(
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

    /// [`Loaded::run`] with the accesses summed in parts on the threads that run the blocks
    /// (when no cache model needs them in order): `part()` makes an empty summary,
    /// `feed(part, site, access, block)` adds one access of a warp of `block` (its x, y, z
    /// in the grid), and `merge` receives the parts in block order.
    pub(crate) fn run_parts<T: Send>(
        &self,
        part: &(dyn Fn() -> T + Sync),
        feed: &Feed<'_, T>,
        merge: &mut dyn FnMut(T),
    ) -> Result<()> {
        match self {
            Loaded::Source(k, cfg) => {
                Ok(k.run_parts(cfg, part, &|t, s, a, o| feed(t, s, a, o.block), merge)?)
            }
            Loaded::Compiled(k) => Ok(k.prog.run_parts(
                &k.launch,
                part,
                &|t, s, a, o| feed(t, s as usize, a, o.block),
                merge,
            )?),
        }
    }

    /// Per site of the executor's program (the sites the checks' findings name): the
    /// report's site ([`Loaded::sites`]) it is, `None` for data movement that is no access.
    pub(crate) fn executor_sites(&self) -> Vec<Option<usize>> {
        match self {
            Loaded::Source(k, _) => k.executor_sites().to_vec(),
            Loaded::Compiled(k) => (0..k.prog.sites.len()).map(Some).collect(),
        }
    }

    /// What the checks (synccheck, racecheck, initcheck) found in the last run; `None` when
    /// none were asked for (see [`warpscope_simt::Findings`]).
    pub(crate) fn findings(&self) -> Option<&warpscope_simt::Findings> {
        let f = match self {
            Loaded::Source(_, cfg) => &cfg.findings,
            Loaded::Compiled(k) => &k.launch.findings,
        };
        f.as_deref()
    }

    /// Runs `sample` (linear block indices, ascending) from now on; `None`: every block.
    pub(crate) fn set_sample(&mut self, sample: Option<std::sync::Arc<Vec<u64>>>) {
        match self {
            Loaded::Source(_, cfg) => cfg.sample = sample,
            Loaded::Compiled(k) => k.launch.sample = sample,
        }
    }

    /// Reports the run's progress (blocks, warp instructions) to `progress` from now on.
    pub(crate) fn set_progress(
        &mut self,
        progress: Option<std::sync::Arc<warpscope_simt::Progress>>,
    ) {
        match self {
            Loaded::Source(_, cfg) => cfg.progress = progress,
            Loaded::Compiled(k) => k.launch.progress = progress,
        }
    }

    /// Blocks of the sample the launch runs (`--sample-blocks`), `None` for every block.
    pub(crate) fn sampled_blocks(&self) -> Option<u64> {
        let sample = match self {
            Loaded::Source(_, cfg) => &cfg.sample,
            Loaded::Compiled(k) => &k.launch.sample,
        };
        sample.as_ref().map(|s| s.len() as u64)
    }

    /// Blocks per thread-block cluster the launch runs (x, y, z); `[1, 1, 1]`: none.
    pub(crate) fn cluster(&self) -> [u32; 3] {
        match self {
            Loaded::Source(..) => [1, 1, 1],
            Loaded::Compiled(k) => k.launch.cluster,
        }
    }

    /// Bytes of shared memory per block (static, then `dynamic` of `extern __shared__`).
    /// Bytes of the kernel's static shared memory (fixed-size `__shared__` arrays) per block.
    pub(crate) fn static_shared_bytes(&self) -> u64 {
        match self {
            Loaded::Source(k, _) => k.shared_bytes(0),
            Loaded::Compiled(k) => k.prog.static_shared_bytes,
        }
    }

    pub(crate) fn shared_bytes(&self, dynamic: u64) -> u64 {
        match self {
            Loaded::Source(k, _) => k.shared_bytes(dynamic),
            Loaded::Compiled(k) => k.shared_bytes(),
        }
    }

    /// Bytes of local memory one thread declares (PTX `.local`); the source path checks its
    /// own arrays as it lowers them.
    pub(crate) fn local_bytes_per_thread(&self) -> u64 {
        match self {
            Loaded::Source(..) => 0,
            Loaded::Compiled(k) => k.prog.local_bytes,
        }
    }

    pub(crate) fn local_arrays(&self) -> Vec<LocalArrayInfo> {
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
pub(crate) struct Prepared {
    pub(crate) kernel: Loaded,
    pub(crate) archs: Vec<&'static Arch>,
    pub(crate) notes: Vec<String>,
}

pub(crate) fn is_ptx_file(file: &str) -> bool {
    file.to_ascii_lowercase().ends_with(".ptx")
}

/// The kernels of `file` (its contents `text`): a PTX file's `.entry` functions, demangled
/// without their parameter list (`offset<float>`); a CUDA file's `__global__` functions as the
/// source front end reads them, `defines` applied (templates as `name<T>`).
///
/// Errors: PTX that does not parse, CUDA source the front end cannot read (file:line:col).
pub fn kernels_of(file: &str, text: &str, defines: &[String]) -> Result<Vec<String>> {
    if is_ptx_file(file) {
        let module = warpscope_ptx::parse(text).map_err(|e| anyhow::anyhow!("{file}: {e}"))?;
        return Ok(module
            .functions
            .iter()
            .filter(|f| f.is_entry)
            .map(|f| {
                let d = warpscope_ptx::demangle(&f.name);
                d.split('(').next().unwrap_or(&d).to_string()
            })
            .collect());
    }
    warpscope_cuda::Source::parse(file, text, defines)
        .and_then(|s| s.kernels())
        .map_err(|e| anyhow::anyhow!("{e}"))
}

/// Whether `file` names CUDA source by its extension: `.cu`, or a header that holds kernels
/// (`.cuh`, `.h`, `.hpp`, `.inc`), compiled as CUDA.
pub(crate) fn is_cuda_source_name(file: &str) -> bool {
    let lower = file.to_ascii_lowercase();
    [".cu", ".cuh", ".h", ".hpp", ".inc"]
        .iter()
        .any(|e| lower.ends_with(e))
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
    cfg.max_memory = req.max_memory;
    cfg.progress = req.progress.clone();
    cfg.sample = sample_of(req);
    if !req.checks {
        cfg.findings = None;
    }
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

/// The launch's threads (blocks × threads per block, in u128) must fit the 64-bit counters
/// that sum per-thread executions: a grid of (2^31−1, 65535, 65535) blocks of 32 threads
/// (2.95·10^20 threads) is legal CUDA but is refused here, sampled or not, instead of
/// running for ages or wrapping its totals.
fn check_thread_count(grid: [u64; 3], block: [u64; 3]) -> Result<()> {
    let blocks: u128 = grid.iter().map(|&x| x as u128).product();
    let threads = blocks * block.iter().map(|&x| x as u128).product::<u128>();
    if threads > u64::MAX as u128 {
        bail!(
            "the launch has {threads} threads ({blocks} blocks of {} threads), over 2^64 (18,446,744,073,709,551,615), the limit of the 64-bit counters that total its accesses; analyze a smaller grid (the figures per block are the same)",
            block.iter().product::<u64>()
        );
    }
    Ok(())
}

pub(crate) fn prepare(req: &AnalyzeRequest) -> Result<Prepared> {
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
    check_thread_count(grid, block)?;
    let kernel = load(req, &candidates, &mut notes)?;
    if let Some(f) = &req.on_loaded {
        (f.0)(&crate::announce::describe(req, &candidates, &kernel));
    }
    let shared = kernel.shared_bytes(req.dynamic_shared_bytes);
    let static_shared = kernel.static_shared_bytes();
    let local = kernel.local_bytes_per_thread();
    let mut archs: Vec<&'static Arch> = Vec::new();
    let cluster = kernel.cluster().map(u64::from);
    for a in candidates {
        match a
            .limits
            .check_cluster(cluster, shared, req.cluster_non_portable)
            .and_then(|()| a.limits.check_static_shared(static_shared))
            .and_then(|()| a.limits.check_shared(shared))
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
