//! Running planned launches on a [`Device`]: one NVRTC compilation per source file (all its
//! kernels of a batch instantiated by name), allocations sized and filled per [`Plan`], then
//! one launch (`run --once`, what Nsight Compute profiles) or warm-up + timed repeats.

use crate::device::{Buffer, Device, Function, Launch, Module, Samples};
use crate::error::{Error, Result};
use crate::plan::{LaunchSpec, ParamPlan, Plan};
use crate::texture::{TextureObject, Usage};
use std::collections::BTreeMap;
use std::time::Duration;
use warpscope_toolkit::nvrtc::{self, Compiled, Program};

/// Compiles and keeps the modules of the launches it is given.
pub struct Runner<'d> {
    dev: &'d Device,
    modules: BTreeMap<String, (Module, Compiled)>,
    /// Add `-lineinfo` (for Nsight Compute's source view).
    pub lineinfo: bool,
}

fn module_key(spec: &LaunchSpec) -> String {
    format!("{}\u{0}{}", spec.file, spec.defines.join("\u{0}"))
}

/// A launch whose buffers are allocated and filled, ready to run.
pub struct Ready {
    pub function: Function,
    /// The allocations, one per pointer parameter, in parameter order.
    pub buffers: Vec<Buffer>,
    /// The texture and surface objects, one per `--texture` parameter, in parameter order.
    pub textures: Vec<TextureObject>,
    /// Parameter bytes, one vector per parameter.
    pub params: Vec<Vec<u8>>,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub shared_bytes: u32,
}

impl Ready {
    /// The launch as [`Device::launch`] takes it.
    pub fn launch(&self) -> Launch<'_> {
        Launch {
            function: &self.function,
            grid: self.grid,
            block: self.block,
            shared_bytes: self.shared_bytes,
            params: &self.params,
        }
    }
}

impl<'d> Runner<'d> {
    pub fn new(dev: &'d Device) -> Runner<'d> {
        Runner {
            dev,
            modules: BTreeMap::new(),
            lineinfo: true,
        }
    }

    /// Compiles every source file of `specs` once, for the device's compute capability,
    /// with all the kernels the specs name in that file (and the same `-D` macros), and loads
    /// the modules.
    ///
    /// Errors: [`Error::Compile`] with NVRTC's log in `FILE:LINE` form, [`Error::NoNvrtc`].
    pub fn compile(&mut self, specs: &[&LaunchSpec]) -> Result<()> {
        let todo: Vec<&LaunchSpec> = specs
            .iter()
            .copied()
            .filter(|s| !self.modules.contains_key(&module_key(s)))
            .collect();
        for (key, compiled) in compile_groups(&todo, self.dev.info.cc, self.lineinfo)? {
            let module = self.dev.load(&compiled.image)?;
            self.modules.insert(key, (module, compiled));
        }
        Ok(())
    }

    /// NVRTC's options and log for the file of `spec` (after [`Runner::compile`]).
    pub fn compiled(&self, spec: &LaunchSpec) -> Option<&Compiled> {
        self.modules.get(&module_key(spec)).map(|(_, c)| c)
    }

    /// Allocates and fills the buffers of `plan` and looks up the kernel (compiling its file
    /// first if needed).
    ///
    /// Errors: not enough free device memory ([`Error::Argument`], naming the sizes), and what
    /// compiling, allocating or copying reports.
    pub fn prepare(&mut self, spec: &LaunchSpec, plan: &Plan) -> Result<Ready> {
        self.compile(&[spec])?;
        let (module, compiled) = &self.modules[&module_key(spec)];
        let symbol = compiled.symbol(&spec.kernel).ok_or_else(|| {
            Error::Argument(format!("NVRTC gave no symbol for kernel {}", spec.kernel))
        })?;
        let function = module.function(symbol, &spec.kernel)?;
        let need = plan.allocated_bytes();
        let (free, _) = self.dev.memory()?;
        if need > free {
            return Err(Error::Argument(format!(
                "the launch needs {:.2} GiB of device memory for its allocations ({}); the GPU has {:.2} GiB free: pass smaller --alloc sizes",
                need as f64 / (1u64 << 30) as f64,
                plan.params
                    .iter()
                    .filter_map(|p| match p {
                        ParamPlan::Pointer { name, bytes, .. } => Some(format!("{name} {bytes} B")),
                        _ => None,
                    })
                    .collect::<Vec<_>>()
                    .join(", "),
                free as f64 / (1u64 << 30) as f64
            )));
        }
        let mut buffers = Vec::new();
        let mut textures = Vec::new();
        let mut params = Vec::new();
        for p in &plan.params {
            match p {
                ParamPlan::Scalar { bytes, .. } => params.push(bytes.clone()),
                ParamPlan::Texture {
                    desc,
                    surface,
                    layered,
                    ..
                } => {
                    let t = self.dev.texture(
                        desc,
                        Usage {
                            surface: *surface,
                            layered: *layered,
                        },
                    )?;
                    params.push(t.handle().to_le_bytes().to_vec());
                    textures.push(t);
                }
                ParamPlan::Pointer {
                    bytes, contents, ..
                } => {
                    let b = self.dev.alloc(*bytes)?;
                    b.zero()?;
                    if !contents.is_zero() {
                        b.write(&contents.to_vec(*bytes))?;
                    }
                    params.push(b.ptr().to_le_bytes().to_vec());
                    buffers.push(b);
                }
            }
        }
        if spec.dynamic_shared_bytes > u32::MAX as u64 {
            return Err(Error::Argument("--dynamic-smem: more than 4 GiB".into()));
        }
        Ok(Ready {
            function,
            buffers,
            textures,
            params,
            grid: spec.grid,
            block: spec.block,
            shared_bytes: spec.dynamic_shared_bytes as u32,
        })
    }

    /// Launches once and waits (at most `timeout`).
    ///
    /// Errors: [`Error::KernelFault`] (the CUDA error name and the kernel),
    /// [`Error::Timeout`], launch errors.
    pub fn once(&self, r: &Ready, timeout: Duration) -> Result<()> {
        self.dev.launch(&r.launch())?;
        self.dev.wait(&r.function.name, timeout)
    }

    /// `warmup` launches, then `repeat` launches each timed alone with CUDA events: seconds
    /// per launch.
    pub fn time(&self, r: &Ready, warmup: u32, repeat: u32, timeout: Duration) -> Result<Samples> {
        self.dev.time(&r.launch(), warmup, repeat, 1, timeout)
    }
}

/// Compiles the source files of `specs` with NVRTC for compute capability `cc` (no GPU
/// needed): one program per file and `-D` set, holding every kernel the specs name in it.
/// Returns (module key, result) per program.
///
/// Errors: the first file NVRTC rejects ([`Error::Compile`]), [`Error::NoNvrtc`].
pub fn compile_groups(
    specs: &[&LaunchSpec],
    cc: (u32, u32),
    lineinfo: bool,
) -> Result<Vec<(String, Compiled)>> {
    let mut groups: BTreeMap<String, (&LaunchSpec, Vec<String>)> = BTreeMap::new();
    for s in specs {
        let e = groups
            .entry(module_key(s))
            .or_insert_with(|| (*s, Vec::new()));
        if !e.1.contains(&s.kernel) {
            e.1.push(s.kernel.clone());
        }
    }
    let mut out = Vec::new();
    for (key, (s, kernels)) in groups {
        let dir = std::path::Path::new(&s.file)
            .parent()
            .map(|p| p.display().to_string())
            .filter(|d| !d.is_empty())
            .unwrap_or_else(|| ".".into());
        let compiled = nvrtc::compile(&Program {
            file: &s.file,
            source: &s.source,
            kernels,
            cc,
            defines: s.defines.clone(),
            include_dirs: include_dirs(dir),
            lineinfo,
            std: None,
        })?;
        out.push((key, compiled));
    }
    Ok(out)
}

/// NVRTC's `-I` folders: the source's own, then the CUDA toolkit's headers where one is found
/// (`<cooperative_groups.h>`, `<cuda_pipeline.h>` are not among NVRTC's built-in headers),
/// and their `cccl/` folder.
fn include_dirs(source_dir: String) -> Vec<String> {
    let mut v = vec![source_dir];
    if let Ok(tk) = warpscope_toolkit::find(None) {
        for d in &tk.include_dirs {
            v.push(d.display().to_string());
            // CUDA 13 keeps libcu++ (`<cuda/std/…>`, used by cooperative groups) in cccl/.
            if d.join("cccl").is_dir() {
                v.push(d.join("cccl").display().to_string());
            }
        }
    }
    v
}
