//! warpscope: how a CUDA kernel's memory accesses turn into requests, transactions, sectors
//! and shared-memory wavefronts, on every compute capability, without a GPU.
//!
//! The pipeline, one way: a kernel is loaded from a `.cu` file (compiled to PTX by nvcc, or
//! by NVRTC with the feature `cuda`; or read by the CUDA source front end,
//! `warpscope-cuda`), from a `.ptx` file, or from source text; either front end ends as a
//! PTX program on the SIMT executor (`warpscope-simt`), which runs the launch once and hands
//! over every warp-level access; the model (`warpscope-model`) costs each for every
//! requested compute capability, the traffic model (`warpscope-traffic`) adds the bytes
//! below the request for a named GPU, and the report (`warpscope-report`) sums them into an
//! [`Analysis`](report::Analysis). The command line (package `warpscope-cli`) and the Python
//! module are two faces over this crate.
//!
//! The API: an [`AnalyzeRequest`] names the kernel (file, source text, kernel name with
//! template arguments), its launch (grid, block, dynamic shared memory), its arguments
//! ([`AnalyzeRequest::arg`]), allocations ([`AnalyzeRequest::alloc`]) and their contents
//! ([`AnalyzeRequest::init`]), the compute capabilities ([`AnalyzeRequest::ccs`]) or GPUs
//! ([`GpuTarget`]) and the options (model [`Config`](model::Config), limits, front end
//! [`CompileRequest`]); [`analyze`] returns the [`Analysis`](report::Analysis), [`explain`]
//! one access's [`Explanation`](report::explain::Explanation), [`annotate`] the
//! [`Annotation`](report::annotate::Annotation) of the source view (the analysis with its
//! source files, PTX and SASS instructions and costliest warps). Both serialize (serde) to the
//! JSON documents of `docs/schema` ([`schema`]).
//!
//! Modules: `load` (front-end loading and the choice of compute capabilities), `run` (the
//! launch run once, costed and summed), [`compiled`] (the compiled path: nvcc/NVRTC, PTX,
//! the launch's parameters and allocations), `access_text` (which source access a PTX
//! memory instruction is), `sass` (ptxas's merges), [`quick`] (`-e`
//! patterns and `--sweep`), [`sweep`] (Harris's offset and stride experiments), [`budget`]
//! (limits on an analysis's figures), [`launch_file`] (the launch file `warpscope.toml`:
//! launches as `analyze` flags, with budgets), [`diff`] (two analyses side by side), `explain` (one
//! access, warp by warp), `annotate` (the source with its figures, instructions and
//! costliest warps), [`schema`] (the JSON Schemas).

use anyhow::Result;
use warpscope_model::{arch, Arch, Config};
use warpscope_report::Analysis;
use warpscope_traffic::{Gpu, Profile};

mod access_text;
mod annotate;
mod announce;
pub mod budget;
pub mod compiled;
pub mod diff;
mod explain;
mod findings;
pub mod fuzzing;
#[cfg(feature = "cuda")]
pub mod gpu;
pub mod launch_file;
mod load;
pub mod quick;
mod resources;
mod run;
pub mod sample;
pub mod sass;
pub mod schema;
pub mod sources;
pub mod sweep;

pub use annotate::{annotate, AnnotateRequest};
pub use announce::OnLoaded;
pub use compiled::{CompileRequest, Frontend};
pub use explain::{explain, ExplainRequest, SiteSelector};
use load::{is_ptx_file, prepare, sample_of};
pub use load::{kernels_of, load_compiled};
use run::analyze_prepared;
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
    /// Steps one block may run before it is reported as runaway; a step is 32 warp
    /// instructions. Default [`warpscope_cuda::DEFAULT_MAX_STEPS`]; no time limit applies.
    pub max_steps: u64,
    /// Bytes the executor's memory images may hold (global memory written, each running
    /// block's shared and local memory, its warps' registers): `--max-memory`. Default
    /// [`DEFAULT_MAX_MEMORY`] (4 GiB) here and in the Python package; the command line's
    /// default is half the memory available when it starts, at least 256 MiB.
    pub max_memory: u64,
    /// Counters of the running launch (blocks done of total) for a progress bar on another
    /// thread; the compiled path fills them.
    pub progress: Option<std::sync::Arc<Progress>>,
    /// Run a sample of this many blocks (`--sample-blocks`) and extrapolate the totals to the
    /// grid; `None`: every block.
    pub sample_blocks: Option<u64>,
    /// `--sample-blocks auto`: choose the sample from the launch's cost (a pilot of
    /// [`sample::PILOT_BLOCKS`] blocks, then blocks for about [`sample::AUTO_SAMPLE_WORK`]
    /// work units: warp instructions plus [`sample::ACCESS_WORK`] a warp access; every block
    /// when the launch fits) and state its error (two
    /// interleaved half-samples compared). Deterministic: counts decide, never the clock.
    /// Overrides `sample_blocks`.
    pub sample_auto: bool,
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
    /// `--cluster X,Y,Z`: blocks per thread-block cluster (CC 9.0+, compiled path); `None`:
    /// the kernel's `__cluster_dims__` (`.reqnctapercluster`) if it declares one, else none.
    pub cluster: Option<[u32; 3]>,
    /// `--cluster-non-portable`: allow 16 blocks per cluster instead of 8 (the
    /// `cudaFuncAttributeNonPortableClusterSizeAllowed` opt-in).
    pub cluster_non_portable: bool,
    /// Called once the front end has read the kernel, with one line saying what is analyzed
    /// (front end, compiler and version, PTX target, the CCs); `None` by default.
    pub on_loaded: Option<OnLoaded>,
    /// Run the checks that find bugs in the kernel (synccheck, racecheck, initcheck:
    /// `Analysis::findings`); `true` by default. A `-e` pattern is one access, not a
    /// kernel: it reads shared memory nothing wrote by design, so it runs without them.
    pub checks: bool,
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
            max_memory: DEFAULT_MAX_MEMORY,
            progress: None,
            sample_blocks: None,
            sample_auto: false,
            gpus: Vec::new(),
            compile: CompileRequest::default(),
            textures: Vec::new(),
            tensor_maps: Vec::new(),
            param_names: Vec::new(),
            cluster: None,
            cluster_non_portable: false,
            on_loaded: None,
            checks: true,
        }
    }

    /// Adds `--arg name=value`.
    pub fn arg(mut self, name: &str, value: impl ToString) -> Self {
        self.args.push((name.to_string(), value.to_string()));
        self
    }

    /// Adds `--alloc name=elements`: the pointer parameter `name` points at an allocation
    /// of that many elements (accesses past it are errors).
    pub fn alloc(mut self, name: &str, elements: u64) -> Self {
        self.allocs.push((name.to_string(), elements));
        self
    }

    /// Adds an `--init` rule (`NAME=MODE` or `MODE`: `zero`, `iota`, `random[:SEED]`,
    /// `const:V`, `file:PATH`; [`init::Rule::parse`]); the last rule naming a parameter wins.
    ///
    /// Errors: a rule that does not parse, prefixed with `--init RULE`.
    pub fn init(mut self, rule: &str) -> Result<Self> {
        let r =
            warpscope_init::Rule::parse(rule).map_err(|e| anyhow::anyhow!("--init {rule}: {e}"))?;
        self.init.push(r);
        Ok(self)
    }

    /// Adds a `-D` macro (`NAME` or `NAME=VALUE`).
    pub fn define(mut self, macro_: &str) -> Self {
        self.defines.push(macro_.to_string());
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

/// Runs the launch once and costs every access for every requested compute
/// capability.
///
/// Errors: everything the front end reports (syntax, unsupported constructs, bad
/// arguments, out-of-bounds or misaligned accesses, runaway loops), and a launch over the
/// limits of a requested compute capability. With [`AnalyzeRequest::leave_out_unfit`] (the
/// named sets `all`, `guide`) the capabilities that cannot run the launch are left out with
/// a note instead, and it is an error only when none is left.
pub fn analyze(req: &AnalyzeRequest) -> Result<Analysis> {
    let mut p = prepare(req)?;
    if req.sample_auto {
        return sample::analyze_auto(req, &mut p);
    }
    // A sample of blocks (not of clusters), with no cache model to feed in order: its
    // groups give the error.
    if req.gpus.is_empty() && p.kernel.cluster().iter().product::<u32>() <= 1 {
        if let Some(all) = load::sample_of(req) {
            return sample::analyze_fixed(req, &mut p, &all);
        }
    }
    analyze_prepared(req, &p)
}
