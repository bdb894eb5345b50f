//! The compiled path: a `.cu` compiled to PTX by nvcc (or a `.ptx` file as given), decoded
//! and run by the SIMT executor, each PTX memory instruction a site attributed through
//! `.loc` to its source line.

use anyhow::{anyhow, bail, Context, Result};
use std::path::{Path, PathBuf};
use warpscope_model::Arch;
use warpscope_report::SiteInfo;
use warpscope_simt::decode::window;
use warpscope_simt::{Alloc, Launch, Program};
use warpscope_toolkit::{CompileOptions, Toolkit};

use crate::AnalyzeRequest;

/// Which front end reads a `.cu` file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Frontend {
    /// Compiled to PTX when a CUDA compiler is found, else the source interpreter (with a
    /// note saying why and how to get the compiler).
    #[default]
    Auto,
    /// Always the compiled path (an error without a compiler).
    Ptx,
    /// The source interpreter (no compiler needed).
    Source,
}

/// How to compile a `.cu` for the compiled path.
#[derive(Clone, Debug, Default)]
pub struct CompileRequest {
    pub frontend: Frontend,
    /// `--nvcc PATH`.
    pub nvcc: Option<PathBuf>,
    /// `-I` folders.
    pub include_dirs: Vec<PathBuf>,
    /// `--std` (`c++17`).
    pub std: Option<String>,
    /// `-O` level (`3`).
    pub opt_level: Option<String>,
    /// `--no-sass`: analyze the PTX as written, without applying ptxas's merges.
    pub no_sass: bool,
    /// Disassemble (nvdisasm) even where no SASS listing can change the figures, for a face
    /// that shows the listing (annotate). Otherwise nvdisasm runs only where the PTX has
    /// loads or stores ptxas could merge, or ptxas reports a stack frame ([`crate::sass`]).
    pub sass_listing: bool,
    /// `--nvcc-flag`: further nvcc arguments, passed as they are (`-maxrregcount=32`,
    /// `--use_fast_math`, `-Xptxas -O1`); those meant for ptxas also reach the SASS check's
    /// ptxas ([`warpscope_toolkit::ptxas_options`]).
    pub nvcc_flags: Vec<String>,
}

/// A kernel of the compiled path, ready to run.
pub struct CompiledKernel {
    pub prog: Program,
    pub launch: Launch,
    /// The entry's parameters as the launch passes them, in order.
    pub params: Vec<ParamDesc>,
    pub sites: Vec<SiteInfo>,
    pub notes: Vec<String>,
    /// The PTX text the program was decoded from (its lines are the sites' `ptx_line`s).
    pub ptx: String,
    /// The SASS ptxas made of the module, each instruction tied to its PTX line; empty when
    /// the SASS was not checked (`--no-sass`, no ptxas or nvdisasm).
    pub sass: Vec<warpscope_toolkit::SassText>,
    /// What `ptxas -v` reported for the kernel (with the SASS check only).
    pub ptxas: Option<warpscope_report::resources::PtxasFigures>,
    /// Whether NVRTC compiled the `.cu` (in-process, where it takes the file), not nvcc.
    pub by_nvrtc: bool,
}

/// One kernel parameter of a compiled-path launch.
#[derive(Clone, Debug)]
pub struct ParamDesc {
    /// The source's name, else `param_K`.
    pub name: String,
    /// Its C type from the demangled signature (`float const*`), else the PTX type (`.u64`).
    pub ty: String,
    /// A pointer: its allocation is `launch.allocs[alloc]`.
    pub alloc: Option<usize>,
    /// Bytes of one element a pointer points to (1 when unknown).
    pub elem_size: u64,
    /// The bytes passed for a scalar (for a pointer, its allocation's base address).
    pub bytes: Vec<u8>,
}

impl CompiledKernel {
    /// For each allocation of the launch, the lowest and one-past-highest byte offset any
    /// global access of the run touched (`None`: untouched), as `warpscope run`/`verify`
    /// size real buffers.
    ///
    /// Errors: what the run reports (faults, runaway loops).
    pub fn touched_ranges(&self) -> Result<Vec<Option<(u64, u64)>>> {
        let mut r: Vec<Option<(u64, u64)>> = vec![None; self.launch.allocs.len()];
        let allocs = &self.launch.allocs;
        self.prog.run(&self.launch, &mut |_, a, _| {
            if a.space != warpscope_model::Space::Global {
                return;
            }
            for lane in (0..32).filter(|l| a.mask >> l & 1 == 1) {
                let x = a.addrs[lane];
                let Some(k) = allocs
                    .iter()
                    .position(|(al, _)| x >= al.base && x - al.base < window::ALLOC_SPACING)
                else {
                    continue;
                };
                let (lo, hi) = (x - allocs[k].0.base, x - allocs[k].0.base + a.width as u64);
                r[k] = Some(r[k].map_or((lo, hi), |(a, b)| (a.min(lo), b.max(hi))));
            }
        })?;
        Ok(r)
    }
}

impl CompiledKernel {
    /// Bytes of shared memory per block (static and dynamic).
    pub fn shared_bytes(&self) -> u64 {
        self.prog
            .dynamic_shared_base()
            .saturating_add(self.launch.dynamic_shared_bytes)
    }
}

/// The one CC a compile (and its SASS check) serves for all of `archs`: the H100's 9.0
/// when asked for (the code the ground truth was measured on), else the newest.
///
/// Errors: `archs` is empty.
fn compile_arch(archs: &[&'static Arch]) -> Result<&'static Arch> {
    archs
        .iter()
        .find(|a| a.cc.major == 9 && a.cc.minor == 0)
        .or_else(|| archs.iter().max_by_key(|a| (a.cc.major, a.cc.minor)))
        .copied()
        .ok_or_else(|| anyhow!("no compute capability to compile for"))
}

/// The toolkit for `req`, or why there is none.
pub fn toolkit(
    c: &CompileRequest,
) -> std::result::Result<Toolkit, warpscope_toolkit::ToolkitError> {
    warpscope_toolkit::find(c.nvcc.as_deref())
}

/// Compiles `req.file` (a `.cu`) with `tk` for the newest of `archs` and loads the kernel.
pub fn compile_and_load(
    req: &AnalyzeRequest,
    tk: &Toolkit,
    archs: &[&'static Arch],
) -> Result<CompiledKernel> {
    // One compile serves every CC: the H100's sm_90 when 9.0 is asked for (the code the
    // ground truth was measured on), else the newest CC's target.
    let newest = compile_arch(archs)?;
    let target = tk.target_for_cc(newest.cc.major as u32, newest.cc.minor as u32);
    let mut notes = Vec::new();
    if let Some(n) = &target.note {
        notes.push(n.clone());
    }
    let opts = CompileOptions {
        defines: req.defines.clone(),
        include_dirs: req.compile.include_dirs.clone(),
        std: req.compile.std.clone(),
        opt_level: req.compile.opt_level.clone(),
        extra: req.compile.nvcc_flags.clone(),
        // An nvcc named on purpose (--nvcc) compiles; NVRTC could be another release's.
        nvcc_only: req.compile.nvcc.is_some(),
    };
    let path = Path::new(&req.file);
    // A template kernel is emitted only where it is instantiated: NVRTC instantiates it by
    // name; nvcc compiles a wrapper that takes its address.
    let template = req.kernel.contains('<');
    let instances = [req.kernel.clone()];
    let by_name = |t: &warpscope_toolkit::Target| {
        if template {
            tk.compile_ptx_instantiating(path, t, &opts, &instances)
        } else {
            Ok(None)
        }
    };
    // The analyzed target's compile, when NVRTC instantiated the template.
    let first = by_name(&target).map_err(|e| anyhow!("{e}"))?;
    let by_nvrtc_name = first.is_some();
    let wrapper = (template && !by_nvrtc_name)
        .then(|| instantiation_wrapper(path, &req.kernel))
        .transpose()?;
    notes.extend(wrapper.as_ref().and_then(|w| w.note.clone()));
    let compile_path = wrapper.as_ref().map_or(path, |w| w.as_path());
    let compile = |t: &warpscope_toolkit::Target| {
        if by_nvrtc_name {
            by_name(t)?.ok_or_else(|| warpscope_toolkit::ToolkitError::Compile {
                command: format!("NVRTC {}", req.file),
                stderr: format!("NVRTC did not instantiate {} for {}", req.kernel, t.sm),
            })
        } else {
            tk.compile_ptx(compile_path, t, &opts)
        }
    };
    // The other CCs' own targets: compiled too, and their memory instructions compared with
    // the analyzed code's; where they are the same, every CC's figures are those of its own
    // code.
    let mut targets: Vec<(String, Vec<String>)> = Vec::new();
    for a in archs {
        let t = tk.target_for_cc(a.cc.major as u32, a.cc.minor as u32);
        if t.sm == target.sm {
            continue;
        }
        match targets.iter_mut().find(|(sm, _)| *sm == t.sm) {
            Some((_, ccs)) => ccs.push(a.cc.to_string()),
            None => targets.push((t.sm.clone(), vec![a.cc.to_string()])),
        }
    }
    // Every target compiles at once (nvcc is one process a target; the analyzed target's
    // SASS check runs meanwhile): a cold cache costs the slowest compile, not their sum.
    let (compiled, mut k, others) = std::thread::scope(|scope| -> Result<_> {
        let handles: Vec<_> = targets
            .iter()
            .map(|(sm, _)| {
                let t = warpscope_toolkit::Target {
                    sm: sm.clone(),
                    note: None,
                };
                let compile = &compile;
                scope.spawn(move || {
                    compile(&t)
                        .ok()
                        .and_then(|c| memory_signature(&c.ptx, &req.kernel))
                })
            })
            .collect();
        let compiled = match first {
            Some(c) => c,
            None => compile(&target).map_err(|e| anyhow!("{e}"))?,
        };
        let label = format!("{} ({})", req.file, target.sm);
        let k = load_entry(req, &compiled.ptx, &label, &req.kernel, Some(tk))?;
        let others: Vec<_> = handles
            .into_iter()
            .map(|h| h.join().ok().flatten())
            .collect();
        Ok((compiled, k, others))
    })?;
    notes.extend(
        compiled
            .cache_note
            .iter()
            .chain(&compiled.cache_error)
            .cloned(),
    );
    let mine = memory_signature(&compiled.ptx, &req.kernel);
    for ((sm, ccs), other) in targets.into_iter().zip(others) {
        let same = other.is_some() && other == mine;
        if !same {
            notes.push(format!(
                "CC {} costed on the code for {}: nvcc emits other memory instructions for their own target {sm}; analyze them alone (--cc {}) for that code",
                ccs.join(", "),
                target.sm,
                ccs[0]
            ));
        }
    }
    notes.append(&mut k.notes);
    k.notes = notes;
    k.by_nvrtc = compiled.by_nvrtc;
    Ok(k)
}

/// The memory instructions of `kernel` in PTX text with their widths and source lines,
/// sorted (the schedule may differ between targets): two compiles with the same signature
/// issue the same accesses.
fn memory_signature(ptx: &str, kernel: &str) -> Option<Vec<(String, Option<(u32, u32)>)>> {
    let module = warpscope_ptx::parse(ptx).ok()?;
    let entry = warpscope_ptx::find_entry(&module, kernel).ok()?;
    let prog = Program::decode(&module, entry).ok()?;
    let mut sig: Vec<(String, Option<(u32, u32)>)> = prog
        .sites
        .iter()
        .map(|s| {
            // Types by their width: `ld.global.f32` and `ld.global.b32` move the same bytes.
            let shape: Vec<String> = s
                .ptx
                .split('.')
                .map(|m| match warpscope_simt::instr::Ty::parse(m) {
                    Some(t) => t.bits().to_string(),
                    None => m.to_string(),
                })
                .collect();
            (shape.join("."), s.loc.map(|(_, l, c)| (l, c)))
        })
        .collect();
    sig.sort();
    Some(sig)
}

/// The compiled path through NVRTC (loaded at run time) when no nvcc is found: the `.cu`
/// compiled to PTX for `compute_XY` of CC 9.0 when asked for, else the newest CC (at least
/// 7.5, the oldest NVRTC 13 targets), the kernel named by an NVRTC name expression (templates
/// instantiated). Device code only: a file with host code needs nvcc.
///
/// Errors: no NVRTC library (with where it looked), NVRTC's compile log.
#[cfg(feature = "cuda")]
pub fn nvrtc_compile_and_load(
    req: &AnalyzeRequest,
    archs: &[&'static Arch],
) -> Result<CompiledKernel> {
    let arch = compile_arch(archs)?;
    let mut cc = (arch.cc.major as u32, arch.cc.minor as u32);
    let mut notes = Vec::new();
    if cc < (7, 5) {
        notes.push(format!(
            "CC {} is not a target of NVRTC 13; compiled for compute_75, the oldest it supports",
            arch.cc
        ));
        cc = (7, 5);
    }
    let folder = Path::new(&req.file)
        .parent()
        .map(|p| p.display().to_string())
        .filter(|p| !p.is_empty())
        .unwrap_or_else(|| ".".into());
    let mut include_dirs = vec![folder];
    include_dirs.extend(
        req.compile
            .include_dirs
            .iter()
            .map(|d| d.display().to_string()),
    );
    let program = warpscope_toolkit::nvrtc::Program {
        file: &req.file,
        source: &req.source,
        kernels: vec![req.kernel.clone()],
        cc,
        defines: req.defines.clone(),
        include_dirs,
        lineinfo: true,
        std: req.compile.std.clone(),
    };
    let (ptx, lowered) =
        warpscope_toolkit::nvrtc::compile_ptx(&program).map_err(|e| anyhow!("{e}"))?;
    let entry = lowered
        .first()
        .map(|(_, l)| l.clone())
        .unwrap_or_else(|| req.kernel.clone());
    let mut k = load_entry(
        req,
        &ptx,
        &format!("{} (NVRTC compute_{}{})", req.file, cc.0, cc.1),
        &entry,
        None,
    )?;
    notes.push(format!(
        "compiled with NVRTC for compute_{}{} (no nvcc found)",
        cc.0, cc.1
    ));
    k.notes = notes;
    Ok(k)
}

/// The wrapper that instantiates the template `kernel` of `path`, written privately
/// ([`warpscope_toolkit::wrapper_file`]).
fn instantiation_wrapper(path: &Path, kernel: &str) -> Result<warpscope_toolkit::WrapperFile> {
    let abs =
        std::fs::canonicalize(path).with_context(|| format!("cannot read {}", path.display()))?;
    let text = format!(
        "// generated by warpscope: instantiates {kernel} for the compiled path\n#include \"{}\"\nstatic void* const warpscope_instantiate_kernel = (void*)&{kernel};\n",
        abs.display()
    );
    let name = format!(
        "{}-instantiate.cu",
        path.file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or("kernel")
    );
    warpscope_toolkit::wrapper_file(&name, &text).map_err(|e| anyhow!("{e}"))
}

/// Parses PTX text, finds `req.kernel` and prepares the launch of `req`.
///
/// Errors: malformed PTX (`FILE:LINE:COL`), a kernel missing from the PTX (the entries are
/// listed), an unsupported instruction (its PTX line), arguments that do not match the
/// entry's parameters.
pub fn load_ptx(req: &AnalyzeRequest, ptx: &str, label: &str) -> Result<CompiledKernel> {
    load_entry(req, ptx, label, &req.kernel, None)
}

/// [`load_ptx`] of the entry named `entry` (its mangled name, when the compiler said it).
///
/// Unless `--no-sass`, ptxas's merges of loads and stores are applied ([`crate::sass`]),
/// with `tk` (found here when `None`) for the target of [`compile_arch`].
fn load_entry(
    req: &AnalyzeRequest,
    ptx: &str,
    label: &str,
    entry: &str,
    tk: Option<&Toolkit>,
) -> Result<CompiledKernel> {
    let module = warpscope_ptx::parse(ptx).map_err(|e| anyhow!("{label}:{e}"))?;
    let entry = warpscope_ptx::find_entry(&module, entry).map_err(|e| anyhow!("{e}"))?;
    let mut prog = Program::decode(&module, entry).map_err(|e| anyhow!("{label}: {e}"))?;
    let mut notes = Vec::new();
    let mut sass = Vec::new();
    let mut ptxas_figures = None;
    if !req.compile.no_sass {
        let found;
        let tk = match tk {
            Some(t) => Some(t),
            None => {
                found = toolkit(&req.compile).ok();
                found.as_ref()
            }
        };
        match tk {
            Some(tk) => {
                let archs = req.archs.clone().unwrap_or_else(warpscope_model::arch::default_set);
                let sm = compile_arch(&archs).map_or_else(
                    |_| "sm_90".to_string(),
                    |a| tk.target_for_cc(a.cc.major as u32, a.cc.minor as u32).sm,
                );
                let ptxas = warpscope_toolkit::ptxas_options(&req.compile.nvcc_flags);
                let checked = crate::sass::check(
                    &mut prog,
                    ptx,
                    &module,
                    tk,
                    &sm,
                    &ptxas,
                    req.compile.sass_listing,
                );
                notes.extend(checked.note);
                sass = checked.listing;
                ptxas_figures =
                    crate::resources::ptxas_figures(&checked.resources, &checked.sm, &entry.name);
            }
            None => notes.push(
                "SASS not checked (figures for the PTX as written; ptxas may merge loads): no CUDA toolkit found for ptxas and nvdisasm".to_string(),
            ),
        }
    }
    let demangled = warpscope_ptx::demangle(&entry.name);
    let mut types = param_types(&demangled);
    // Parameter names come from the CUDA source: the request's, else (a .ptx file, or a
    // kernel declared in a header the source includes) the first `.file` that is a CUDA
    // source or header found here and declares the kernel.
    let mut declared = Vec::new();
    if !crate::is_ptx_file(&req.file) {
        declared = source_params(&req.source, &req.kernel, prog.params.len());
    }
    if declared.is_empty() {
        for (_, f) in &prog.files {
            if !crate::load::is_cuda_source_name(f) {
                continue;
            }
            if let Some(text) = find_source(f).and_then(|p| crate::sources::read_source(req, &p)) {
                declared = source_params(
                    &text,
                    &warpscope_ptx::demangle(&entry.name),
                    prog.params.len(),
                );
                if !declared.is_empty() {
                    break;
                }
            }
        }
    }
    let names: Vec<String> = if declared.is_empty() {
        req.param_names.clone()
    } else {
        declared.iter().map(|(n, _)| n.clone()).collect()
    };
    // An `extern "C"` kernel's name carries no types: the source's declarations do.
    if types.is_empty() {
        types = declared.into_iter().map(|(_, t)| t).collect();
    }
    // PTX has no pointee or aggregate types: a pointer to a struct is sized, and a struct
    // passed by value laid out, by the source's declarations (parsed once, when needed).
    let source = std::cell::OnceCell::new();
    let source = || {
        source
            .get_or_init(|| {
                (!crate::is_ptx_file(&req.file))
                    .then(|| {
                        warpscope_cuda::Source::parse_with_includes(
                            &req.file,
                            &req.source,
                            &req.defines,
                            &req.compile.include_dirs,
                        )
                        .ok()
                    })
                    .flatten()
            })
            .as_ref()
    };
    let elem_bytes: Vec<u64> = types
        .iter()
        .map(|t| {
            pointee_bytes(t)
                .or_else(|| {
                    let pointee = t.trim().strip_suffix('*')?.replace("const", "");
                    source()?.type_size(&pointee)
                })
                .unwrap_or(1)
        })
        .collect();
    let fields: Vec<Option<Vec<warpscope_cuda::ScalarField>>> = prog
        .params
        .iter()
        .zip(types.iter().map(Some).chain(std::iter::repeat(None)))
        .map(|(p, t)| {
            let t = t?;
            let aggregate =
                p.ty == "b8" && !t.ends_with('*') && pointee_bytes(&format!("{t}*")).is_none();
            aggregate.then(|| source()?.type_fields(t)).flatten()
        })
        .collect();
    let (launch, params) = build_launch(req, &prog, &names, &types, &elem_bytes, &fields)?;
    let pointer = |k: usize| match types.get(k) {
        Some(t) => t.trim_end().ends_with('*'),
        None => prog.params.get(k).is_some_and(|p| p.bytes == 8),
    };
    let roots = crate::access_text::address_roots(&module, entry, &pointer);
    let sites = site_infos(req, &prog, &roots, &names, &mut notes);
    Ok(CompiledKernel {
        prog,
        launch,
        params,
        sites,
        notes,
        ptx: ptx.to_string(),
        sass,
        ptxas: ptxas_figures,
        by_nvrtc: false,
    })
}

/// A `.file` path of the PTX as found on this machine: as written, or with leading folders
/// dropped until it exists relative to the working folder (PTX made on another machine).
fn find_source(path: &str) -> Option<PathBuf> {
    let p = Path::new(path);
    if p.exists() {
        return Some(p.to_path_buf());
    }
    let parts: Vec<_> = p.components().collect();
    (1..parts.len()).find_map(|k| {
        let q: PathBuf = parts[k..].iter().collect();
        q.exists().then_some(q)
    })
}

/// `p` as shown: relative to the working folder when it is inside it (compared through
/// symbolic links), or when the working folder holds the same file under a trailing part of
/// `p` (a checkout of the same project at another path); else as found.
fn shown_path(p: &Path) -> String {
    let Ok(dir) = std::env::current_dir() else {
        return p.display().to_string();
    };
    let canon = |q: &Path| std::fs::canonicalize(q).ok();
    if let (Some(cp), Some(cd)) = (canon(p), canon(&dir)) {
        if let Ok(rel) = cp.strip_prefix(&cd) {
            return rel.display().to_string();
        }
    }
    if let Ok(rel) = p.strip_prefix(&dir) {
        return rel.display().to_string();
    }
    let parts: Vec<_> = p.components().collect();
    // Regular files within --max-input-bytes only: a `.file` may name a FIFO or a device.
    let read = |q: &Path| warpscope_toolkit::read_input(q, "PTX .file");
    if let Ok(text) = read(p) {
        for k in 1..parts.len() {
            let q: PathBuf = parts[k..].iter().collect();
            if q.is_relative() && read(&q).is_ok_and(|t| t == text) {
                return q.display().to_string();
            }
        }
    }
    p.display().to_string()
}

/// A `.file` of the PTX: the name to show for it (`None` when it is the analyzed file) and
/// its lines, when it can be read.
/// A memory instruction whose `.loc` line does not access the variable its address comes
/// from, while one line of the kernel does (nvcc moved a load next to its use).
struct MovedLoc {
    ptx_line: u32,
    op: warpscope_model::Op,
    /// The variable the address comes from.
    base: String,
    loc_line: u32,
    /// The kernel's lines that access `base` so, with the access's text.
    source: Vec<(u32, String)>,
}

/// Whether `line` accesses variable `base` (subscript or member).
fn mentions(line: &str, base: &str) -> bool {
    crate::access_text::accesses_in(line)
        .iter()
        .any(|a| a.base == base)
}

/// The lines of the kernel's definition `span` in `lines` (1-based) that hold an access of `base`
/// fitting `op`, with the first such access's text, when `loc_line` is inside that
/// definition too; empty if none does or the definition is not in this file.
fn source_lines_of(
    lines: &[String],
    span: Option<(u32, u32)>,
    loc_line: u32,
    op: warpscope_model::Op,
    base: &str,
) -> Vec<(u32, String)> {
    let Some((first, last)) = span else {
        return Vec::new();
    };
    if !(first..=last).contains(&loc_line) {
        return Vec::new();
    }
    (first..=last)
        .filter_map(|l| {
            let t = lines.get(l as usize - 1)?;
            crate::access_text::accesses_in(t)
                .into_iter()
                .find(|a| {
                    a.base == base
                        && match op {
                            warpscope_model::Op::Load => a.load,
                            warpscope_model::Op::Store => a.store,
                            _ => true,
                        }
                })
                .map(|a| (l, a.text))
        })
        .collect()
}

/// The note on instructions nvcc's `.loc` puts on another line than their access: the
/// figures stay on the `.loc` line (as Nsight Compute's source view shows them).
fn moved_loc_note(moved: &[MovedLoc]) -> Option<String> {
    if moved.is_empty() {
        return None;
    }
    let shown: Vec<String> = moved
        .iter()
        .take(3)
        .map(|m| {
            let at = match m.source.as_slice() {
                [(l, text)] => format!("the source's line {l}, `{text}`"),
                many => format!(
                    "`{}` is accessed at lines {}",
                    m.base,
                    many.iter()
                        .map(|(l, _)| l.to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            };
            let op = if m.op == warpscope_model::Op::Store {
                "store"
            } else {
                "load"
            };
            format!(
                "PTX line {}'s {op} of `{}` at line {} ({at})",
                m.ptx_line, m.base, m.loc_line
            )
        })
        .collect();
    let more = match moved.len() {
        n if n > 3 => format!(", and {} more", n - 3),
        _ => String::new(),
    };
    Some(format!(
        "nvcc's line information puts {} memory instruction{} on another line than the access it makes: {}{more}; the figures are on nvcc's line, as in Nsight Compute's source view",
        moved.len(),
        if moved.len() == 1 { "" } else { "s" },
        shown.join("; ")
    ))
}

struct SourceFile {
    shown: Option<String>,
    lines: Option<Vec<String>>,
}

fn source_file(req: &AnalyzeRequest, prog: &Program, index: u32) -> SourceFile {
    let Some(path) = prog
        .files
        .iter()
        .find(|(k, _)| *k == index)
        .map(|(_, p)| p.as_str())
    else {
        return SourceFile {
            shown: None,
            lines: None,
        };
    };
    let found = find_source(path);
    let canon = |p: &Path| std::fs::canonicalize(p).ok();
    let same = path == req.file
        || (found.as_deref().and_then(canon).is_some()
            && found.as_deref().and_then(canon) == canon(Path::new(&req.file)));
    let text = if same {
        Some(req.source.clone())
    } else {
        found
            .as_ref()
            .and_then(|p| crate::sources::read_source(req, p))
    };
    SourceFile {
        shown: (!same).then(|| match found {
            Some(p) => shown_path(&p),
            None => path.to_string(),
        }),
        lines: text.map(|t| t.lines().map(|l| l.to_string()).collect()),
    }
}

/// The report's sites of `prog`'s memory instructions: each at the source position of its
/// `.loc` (through inlined headers, at the user's call), named by the access of that line it
/// stands for (`roots`: the variables each PTX line's address comes from, `names`: the
/// entry's parameter names; see [`crate::access_text`]), else by the line's text. Where
/// accesses of different text share a line and column, each takes its own column.
fn site_infos(
    req: &AnalyzeRequest,
    prog: &Program,
    roots: &std::collections::HashMap<u32, std::collections::BTreeSet<crate::access_text::Root>>,
    names: &[String],
    notes: &mut Vec<String>,
) -> Vec<SiteInfo> {
    let mut files: std::collections::HashMap<u32, SourceFile> = Default::default();
    let mut moved: Vec<MovedLoc> = Vec::new();
    let kernel = warpscope_ptx::demangle(&req.kernel);
    // Per source file, the kernel's definition (first, last line), found once.
    let mut spans: std::collections::HashMap<u32, Option<(u32, u32)>> = Default::default();
    let mut own_columns: Vec<Option<u32>> = Vec::new();
    let mut sites: Vec<SiteInfo> = prog
        .sites
        .iter()
        .map(|s| {
            // Code inlined from a header (atomicAdd's `__iAtomicAdd`, a library's device
            // function) is attributed to the line that called it, when that line is the
            // user's: outside the analyzed `.cu` (for a `.ptx`, inside a toolkit include
            // folder) counts as a header.
            let mut header = |f: u32| {
                let sf = files.entry(f).or_insert_with(|| source_file(req, prog, f));
                sf.shown
                    .as_deref()
                    .is_some_and(|p| !crate::is_ptx_file(&req.file) || p.contains("/include/"))
            };
            let loc = match s.loc {
                // The first call site in the user's code, through any number of headers
                // (cuda::memcpy_async inlines through four of CCCL's).
                Some((f, ..)) if header(f) => {
                    s.callers.iter().copied().find(|at| !header(at.0)).or(s.loc)
                }
                loc => loc,
            };
            // The variable the address comes from (instructions ptxas added have none).
            let from_ptx = s.ptx.starts_with(|c: char| c.is_ascii_lowercase());
            let base = roots
                .get(&s.ptx_line)
                .filter(|r| from_ptx && r.len() == 1)
                .and_then(|r| r.first())
                .map(|r| crate::access_text::root_name(r, names));
            let (line, column, text, file) = match loc {
                Some((f, l, c)) => {
                    let sf = files.entry(f).or_insert_with(|| source_file(req, prog, f));
                    let src = sf
                        .lines
                        .as_ref()
                        .and_then(|ls| ls.get(l.saturating_sub(1) as usize));
                    let own = src.filter(|_| from_ptx).and_then(|t| {
                        crate::access_text::match_access(t, s.op, base.as_deref(), c)
                    });
                    if let (Some(b), Some(ls), Some(t)) = (&base, &sf.lines, src) {
                        if own.is_none() && !mentions(t, b) {
                            let span = *spans.entry(f).or_insert_with(|| {
                                crate::annotate::kernel_lines(&ls.join("\n"), &kernel)
                            });
                            let source = source_lines_of(ls, span, l, s.op, b);
                            if !source.is_empty() {
                                moved.push(MovedLoc {
                                    ptx_line: s.ptx_line,
                                    op: s.op,
                                    base: b.clone(),
                                    loc_line: l,
                                    source,
                                });
                            }
                        }
                    }
                    own_columns.push(own.as_ref().map(|o| o.1));
                    let t = match own {
                        Some((t, _)) => shorten(&t),
                        None => src.map(|t| shorten(t.trim())).unwrap_or_default(),
                    };
                    (l, c, t, sf.shown.clone())
                }
                None => {
                    own_columns.push(None);
                    (0, 0, String::new(), None)
                }
            };
            let text = if text.is_empty() { s.ptx.clone() } else { text };
            SiteInfo {
                line,
                column,
                text,
                op: s.op,
                read_only: s.read_only,
                file,
                // ptxas merged this and the next members into one wider instruction.
                ptx: Some(match s.sass {
                    warpscope_simt::sass::SassFate::Widened { members, .. }
                    | warpscope_simt::sass::SassFate::WidenedAcrossTrips { members, .. } => {
                        format!("{} ×{members}", s.ptx)
                    }
                    _ => s.ptx.clone(),
                }),
                ptx_line: Some(s.ptx_line),
            }
        })
        .collect();
    if let Some(note) = moved_loc_note(&moved) {
        notes.push(note);
    }
    // Accesses of different text at one line and column (the statement's): each at its own.
    let mut texts: std::collections::HashMap<(Option<String>, u32, u32), Vec<&str>> =
        Default::default();
    for s in &sites {
        let t = texts.entry((s.file.clone(), s.line, s.column)).or_default();
        if !t.contains(&s.text.as_str()) {
            t.push(&s.text);
        }
    }
    let shared: std::collections::HashSet<(Option<String>, u32, u32)> = texts
        .into_iter()
        .filter(|(_, t)| t.len() > 1)
        .map(|(k, _)| k)
        .collect();
    for (s, own) in sites.iter_mut().zip(own_columns) {
        if let Some(c) = own {
            if s.line > 0 && shared.contains(&(s.file.clone(), s.line, s.column)) {
                s.column = c;
            }
        }
    }
    sites
}

/// The source line as one line of text, spaces collapsed; never cut (JSON and CSV carry it
/// whole; the table shortens it, [`warpscope_report::short_text`]).
fn shorten(t: &str) -> String {
    t.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Parameter types from a demangled signature `name(float*, int const*, int)`; the list is
/// the parentheses that close the signature (`reduce3<float, (unsigned int)256>(float*, …)`
/// has a cast in its template arguments).
fn param_types(demangled: &str) -> Vec<String> {
    let Some(close) = demangled.rfind(')') else {
        return Vec::new();
    };
    let mut depth = 0i32;
    let mut open = None;
    for (i, c) in demangled[..=close].char_indices().rev() {
        match c {
            ')' => depth += 1,
            '(' => {
                depth -= 1;
                if depth == 0 {
                    open = Some(i);
                    break;
                }
            }
            _ => {}
        }
    }
    let Some(open) = open else {
        return Vec::new();
    };
    let inner = &demangled[open + 1..close];
    split_top(inner)
        .into_iter()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect()
}

fn split_top(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut start = 0;
    for (i, c) in s.char_indices() {
        match c {
            '(' | '<' | '[' => depth += 1,
            ')' | '>' | ']' => depth -= 1,
            ',' if depth == 0 => {
                out.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&s[start..]);
    out
}

/// The parameter names of the `__global__` function `kernel` in CUDA source text, when a
/// definition with `count` parameters is found.
pub fn source_param_names(source: &str, kernel: &str, count: usize) -> Vec<String> {
    source_params(source, kernel, count)
        .into_iter()
        .map(|(n, _)| n)
        .collect()
}

/// The parameters (name, C type) of the `__global__` function `kernel` in CUDA source text,
/// when a definition with `count` parameters is found (the definition's names, not a
/// prototype's, which C++ lets differ; a prototype's when the file has no definition); an
/// array parameter's type is its pointer (`float a[]`: `float*`).
pub fn source_params(source: &str, kernel: &str, count: usize) -> Vec<(String, String)> {
    let mut prototype = Vec::new();
    let base = kernel.split(['<', '(']).next().unwrap_or(kernel).trim();
    let base = base.rsplit("::").next().unwrap_or(base);
    if base.is_empty() {
        return Vec::new();
    }
    let bytes = source.as_bytes();
    let mut from = 0;
    while let Some(k) = source[from..].find(base) {
        let at = from + k;
        from = at + base.len();
        let before_ok =
            at == 0 || !(bytes[at - 1].is_ascii_alphanumeric() || bytes[at - 1] == b'_');
        let rest = &source[from..];
        let after = rest.trim_start();
        if !before_ok || !after.starts_with('(') {
            continue;
        }
        // Must be a __global__ definition: the keyword in the 200 bytes before.
        let mut from_head = at.saturating_sub(200);
        while !source.is_char_boundary(from_head) {
            from_head += 1;
        }
        let head = &source[from_head..at];
        let head = head.rsplit([';', '}']).next().unwrap_or(head);
        if !head.contains("__global__") {
            continue;
        }
        let open = source.len() - after.len();
        let mut depth = 0;
        let mut close = None;
        for (i, c) in source[open..].char_indices() {
            match c {
                '(' => depth += 1,
                ')' => {
                    depth -= 1;
                    if depth == 0 {
                        close = Some(open + i);
                        break;
                    }
                }
                _ => {}
            }
        }
        let Some(close) = close else { continue };
        let params: Vec<(String, String)> = split_top(&source[open + 1..close])
            .into_iter()
            .filter(|p| !p.trim().is_empty() && p.trim() != "void")
            .map(|p| {
                let p = p.split('=').next().unwrap_or(p);
                let array = p.contains('[');
                let p = p.split('[').next().unwrap_or(p).trim_end();
                let name = p
                    .rsplit(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                    .next()
                    .unwrap_or("")
                    .to_string();
                // As a demangled signature spells it: no restrict, `float*`.
                let ty = p[..p.len() - name.len()]
                    .replace('*', " * ")
                    .split_whitespace()
                    .filter(|w| !["__restrict__", "__restrict", "restrict"].contains(w))
                    .collect::<Vec<_>>()
                    .join(" ")
                    .replace(" *", "*");
                (name, if array { format!("{ty}*") } else { ty })
            })
            .collect();
        if params.len() == count && params.iter().all(|(n, _)| !n.is_empty()) {
            if !source[close + 1..].trim_start().starts_with(';') {
                return params;
            }
            if prototype.is_empty() {
                prototype = params;
            }
        }
    }
    prototype
}

/// Bytes of the element a pointer of C type `ty` (`float*`, `float4 const*`) points to.
fn pointee_bytes(ty: &str) -> Option<u64> {
    let t = ty
        .trim()
        .strip_suffix('*')?
        .replace("const", "")
        .replace("volatile", "");
    let t = t.split_whitespace().collect::<Vec<_>>().join(" ");
    Some(match t.as_str() {
        "char" | "signed char" | "unsigned char" | "bool" | "int8_t" | "uint8_t" => 1,
        "short" | "unsigned short" | "__half" | "half" | "__nv_bfloat16" => 2,
        "int" | "unsigned int" | "float" | "unsigned" | "int32_t" | "uint32_t" | "char4"
        | "uchar4" | "short2" | "__half2" => 4,
        "long" | "unsigned long" | "long long" | "unsigned long long" | "double" | "float2"
        | "int2" | "uint2" | "size_t" => 8,
        "float4" | "int4" | "uint4" | "double2" | "longlong2" => 16,
        "float3" | "int3" => 12,
        _ => return None,
    })
}

fn build_launch(
    req: &AnalyzeRequest,
    prog: &Program,
    names: &[String],
    types: &[String],
    elem_bytes: &[u64],
    fields: &[Option<Vec<warpscope_cuda::ScalarField>>],
) -> Result<(Launch, Vec<ParamDesc>)> {
    let n = prog.params.len();
    // Each parameter answers to its source name, its PTX name, `param_K` and `K`.
    let label = |k: usize| -> String {
        let p = &prog.params[k];
        match (names.get(k), types.get(k)) {
            (Some(nm), Some(t)) => format!("{nm} ({t})"),
            (Some(nm), None) => format!("{nm} (.{})", p.ty),
            (None, Some(t)) => format!("param_{k} ({t})"),
            (None, None) => format!("param_{k} (.{})", p.ty),
        }
    };
    let all = || (0..n).map(label).collect::<Vec<_>>().join(", ");
    let name = |k: usize| {
        names
            .get(k)
            .cloned()
            .unwrap_or_else(|| format!("param_{k}"))
    };
    let find = |name: &str| -> Option<usize> {
        (0..n).find(|&k| {
            names.get(k).is_some_and(|s| s == name)
                || prog.params[k].name == name
                || name == format!("param_{k}")
                || name == k.to_string()
        })
    };
    let mut args: Vec<Option<&str>> = vec![None; n];
    // `--arg d.n=V`, `--arg d.w[2]=V`: one scalar of a struct passed by value.
    let mut field_args: Vec<Vec<(&str, &str)>> = vec![Vec::new(); n];
    for (name, v) in &req.args {
        if let Some(k) = find(name) {
            args[k] = Some(v.as_str());
            continue;
        }
        let split = name.find(['.', '[']).unwrap_or(name.len());
        let (base, path) = (&name[..split], name[split..].trim_start_matches('.'));
        match find(base) {
            Some(k) if !path.is_empty() => field_args[k].push((path, v.as_str())),
            _ => bail!(
                "--arg {name}: {} has no parameter '{name}'; its parameters are: {}",
                req.kernel,
                all()
            ),
        }
    }
    let mut sizes: Vec<Option<u64>> = vec![None; n];
    for (name, elems) in &req.allocs {
        let k = find(name).ok_or_else(|| {
            anyhow!(
                "--alloc {name}: {} has no parameter '{name}'; its parameters are: {}",
                req.kernel,
                all()
            )
        })?;
        let el = elem_bytes.get(k).copied().unwrap_or(1);
        sizes[k] = Some(elems.saturating_mul(el));
    }
    let mut launch = Launch {
        grid: req.grid,
        block: req.block,
        args: Vec::with_capacity(n),
        allocs: Vec::new(),
        dynamic_shared_bytes: req.dynamic_shared_bytes,
        max_steps: req.max_steps.saturating_mul(32),
        max_block_time: None,
        max_memory: req.max_memory,
        threads: 0,
        progress: req.progress.clone(),
        textures: Vec::new(),
        tensor_maps: Vec::new(),
        sample: crate::sample_of(req),
        cluster: [1, 1, 1],
        explicit_cluster: prog.explicit_cluster,
        findings: req.checks.then(Default::default),
    };
    // The cluster shape: the kernel's `__cluster_dims__` (`.reqnctapercluster`), which the
    // GPU enforces, or --cluster; both must agree.
    let declared = prog.cluster_dims.map(|d| d.map(|x| x as u32));
    launch.cluster = match (declared, req.cluster) {
        (Some(d), Some(c)) if d != c => bail!(
            "--cluster {},{},{} disagrees with {}'s __cluster_dims__({},{},{}) (.reqnctapercluster): the kernel's shape is the one the GPU launches; drop --cluster or give the same shape",
            c[0], c[1], c[2], req.kernel, d[0], d[1], d[2]
        ),
        (Some(d), _) => d,
        (None, Some(c)) => c,
        (None, None) => [1, 1, 1],
    };
    launch.explicit_cluster |= req.cluster.is_some() || declared.is_some();
    if launch.cluster.iter().product::<u32>() > 1 && launch.sample.is_some() {
        bail!("--sample-blocks with a thread-block cluster is not supported yet (a sample must hold whole clusters): drop --sample-blocks");
    }
    let mut texture_of: Vec<Option<usize>> = vec![None; n];
    for (i, t) in req.textures.iter().enumerate() {
        let base = warpscope_simt::TEXTURE_BASE + i as u64 * warpscope_simt::TEXTURE_SPACING;
        let Some(k) = find(&t.name) else {
            // A module-scope texture or surface reference of that name.
            if let Some(r) = prog.texture_refs.iter().find(|r| r.name == t.name) {
                launch.textures.push(warpscope_simt::TextureBinding {
                    handle: r.handle,
                    desc: t.clone(),
                    base,
                });
                continue;
            }
            let refs: Vec<&str> = prog.texture_refs.iter().map(|r| r.name.as_str()).collect();
            bail!(
                "--texture {}: {} has no parameter '{}'{}; its parameters are: {}{}",
                t.name,
                req.kernel,
                t.name,
                if refs.is_empty() {
                    ""
                } else {
                    " and the module no texture reference of that name"
                },
                all(),
                if refs.is_empty() {
                    String::new()
                } else {
                    format!("; its texture and surface references: {}", refs.join(", "))
                }
            );
        };
        if prog.params[k].bytes != 8 {
            bail!(
                "--texture {}: '{}' is not a texture or surface object (a 64-bit handle)",
                t.name,
                label(k)
            );
        }
        texture_of[k] = Some(i);
        launch.textures.push(warpscope_simt::TextureBinding {
            handle: warpscope_simt::texture_handle(i),
            desc: t.clone(),
            base,
        });
    }
    let mut tensor_map_of: Vec<Option<&warpscope_simt::TensorMap>> = vec![None; n];
    for (tname, map) in &req.tensor_maps {
        let k = find(tname).ok_or_else(|| {
            anyhow!(
                "--tensor-map {tname}: {} has no parameter '{tname}'; its parameters are: {}",
                req.kernel,
                all()
            )
        })?;
        tensor_map_of[k] = Some(map);
    }
    let mut slot = 0u64;
    let mut descs = Vec::with_capacity(n);
    for k in 0..n {
        let ty = types
            .get(k)
            .cloned()
            .unwrap_or_else(|| format!(".{}", prog.params[k].ty));
        let p = &prog.params[k];
        if let Some(i) = texture_of[k] {
            let handle = warpscope_simt::texture_handle(i).to_le_bytes().to_vec();
            launch.args.push(handle.clone());
            descs.push(ParamDesc {
                name: name(k),
                ty,
                alloc: None,
                elem_size: 0,
                bytes: handle,
            });
            continue;
        }
        if let Some(map) = tensor_map_of[k] {
            // A CUtensorMap by value: the tensor is an allocation of its own, named after the
            // parameter; the parameter's bytes are not read (TMA copies find the map by the
            // parameter's address).
            let base = window::ALLOC_BASE + slot * window::ALLOC_SPACING;
            slot += 1;
            launch.allocs.push((
                Alloc {
                    name: name(k),
                    base,
                    size: Some(map.reach()),
                },
                warpscope_init::Contents::Zero,
            ));
            launch.tensor_maps.push(warpscope_simt::TensorMapBinding {
                param: k,
                map: map.clone(),
                base,
            });
            let bytes = vec![0u8; p.bytes as usize];
            launch.args.push(bytes.clone());
            descs.push(ParamDesc {
                name: name(k),
                ty,
                alloc: Some(launch.allocs.len() - 1),
                elem_size: map.elem_bytes as u64,
                bytes,
            });
            continue;
        }
        if types.get(k).is_some_and(|t| t.contains("CUtensorMap")) {
            bail!(
                "kernel parameter {} is a tensor map: describe it with --tensor-map {}=DTYPE:DIMS:STRIDES:BOX[:swizzle=none|32|64|128] (the fields of cuTensorMapEncodeTiled, innermost dimension first; e.g. --tensor-map {}=f16:4096x4096:8192:64x64:swizzle=128; an im2col map: DTYPE:CxWxHxN:STRIDES:im2col:channels=…,pixels=…,lower=…,upper=…)",
                label(k),
                name(k),
                name(k)
            );
        }
        if types
            .get(k)
            .is_some_and(|t| t.contains("cudaTextureObject_t") || t.contains("cudaSurfaceObject_t"))
            || (args[k].is_none()
                && types.get(k).is_none_or(|t| t == "unsigned long long")
                && declared_as_object(&req.source, &name(k)))
        {
            bail!(
                "kernel parameter {} is a texture or surface object: describe it with --texture {}=KIND:W[xH[xD]]:FORMAT (KIND linear, pitch2d or array; e.g. --texture {}=array:1024x1024:float)",
                label(k),
                name(k),
                name(k)
            );
        }
        let is_ptr_type = types.get(k).map(|t| t.trim_end().ends_with('*'));
        let wide = p.bytes == 8
            && (p.ty.starts_with('u') || p.ty.starts_with('b') || p.ty.starts_with('s'));
        let pointer = match is_ptr_type {
            Some(b) => b,
            None => wide && args[k].is_none(),
        };
        if pointer {
            if args[k].is_some() {
                bail!(
                    "--arg {}: '{}' is a pointer; warpscope gives each pointer parameter its own allocation (size it with --alloc {}=ELEMENTS)",
                    name(k),
                    label(k),
                    name(k)
                );
            }
            let base = window::ALLOC_BASE + slot * window::ALLOC_SPACING;
            slot += 1;
            launch.allocs.push((
                Alloc {
                    name: name(k),
                    base,
                    size: sizes[k],
                },
                warpscope_init::Contents::Zero,
            ));
            launch.args.push(base.to_le_bytes().to_vec());
            descs.push(ParamDesc {
                name: name(k),
                elem_size: elem_bytes.get(k).copied().unwrap_or(1),
                ty,
                alloc: Some(launch.allocs.len() - 1),
                bytes: base.to_le_bytes().to_vec(),
            });
            continue;
        }
        let bytes = if let Some(fs) = fields.get(k).and_then(Option::as_ref) {
            let given: Vec<(String, &str)> = field_args[k]
                .iter()
                .map(|&(path, v)| (path.to_string(), v))
                .collect();
            warpscope_cuda::encode_struct_arg(
                &name(k),
                types.get(k).map_or("", String::as_str),
                p.bytes,
                fs,
                args[k].is_some(),
                &given,
            )?
        } else {
            if let Some((path, _)) = field_args[k].first() {
                bail!(
                    "--arg {}.{path}: kernel parameter {} is not a struct whose fields warpscope \
                     can find in the source; pass --arg {}=VALUE",
                    name(k),
                    label(k),
                    name(k)
                );
            }
            let Some(v) = args[k] else {
                bail!(
                    "kernel parameter {} has no value: pass --arg {}=VALUE",
                    label(k),
                    name(k)
                );
            };
            let float = p.ty.starts_with('f')
                || types.get(k).is_some_and(|t| t == "float" || t == "double");
            encode_scalar(v, p.bytes, float).ok_or_else(|| {
                anyhow!(
                    "--arg {}={v}: {} takes a {}-byte {}; '{v}' is not one",
                    name(k),
                    label(k),
                    p.bytes,
                    if float { "float" } else { "integer" }
                )
            })?
        };
        descs.push(ParamDesc {
            name: name(k),
            ty,
            alloc: None,
            elem_size: 0,
            bytes: bytes.clone(),
        });
        launch.args.push(bytes);
    }
    // `--init`: each allocation's initial contents; a file sizes one that --alloc does not.
    let params: Vec<warpscope_init::Param> = descs
        .iter()
        .map(|d| warpscope_init::Param {
            name: &d.name,
            c_type: &d.ty,
            pointer: d.alloc.is_some(),
            elem_bytes: d.elem_size,
        })
        .collect();
    let initial = warpscope_init::resolve(&req.init, &req.kernel, &params, &req.allocs)
        .map_err(|e| anyhow!("{e}"))?;
    for (d, init) in descs.iter().zip(initial) {
        let (Some(a), Some(init)) = (d.alloc, init) else {
            continue;
        };
        let (alloc, contents) = &mut launch.allocs[a];
        if let Some(n) = init.file_elements {
            alloc.size = Some(n.saturating_mul(init.elem.bytes));
        }
        *contents = init.contents;
    }
    Ok((launch, descs))
}

/// Whether `source` declares a parameter `name` as a `cudaTextureObject_t` or
/// `cudaSurfaceObject_t` (the mangled name only says `unsigned long long`).
fn declared_as_object(source: &str, name: &str) -> bool {
    ["cudaTextureObject_t", "cudaSurfaceObject_t"]
        .iter()
        .any(|kw| {
            source.match_indices(kw).any(|(at, _)| {
                let rest = source[at + kw.len()..].trim_start();
                let rest = rest.strip_prefix("const").map_or(rest, str::trim_start);
                let ident: String = rest
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                ident == name
            })
        })
}

fn encode_scalar(v: &str, bytes: u64, float: bool) -> Option<Vec<u8>> {
    let v = v.trim();
    if float {
        let x: f64 = v.trim_end_matches(['f', 'F']).parse().ok()?;
        return Some(match bytes {
            4 => (x as f32).to_le_bytes().to_vec(),
            8 => x.to_le_bytes().to_vec(),
            2 => half::f16::from_f64(x).to_le_bytes().to_vec(),
            _ => return None,
        });
    }
    let (neg, body) = match v.strip_prefix('-') {
        Some(b) => (true, b),
        None => (false, v),
    };
    let mag = if let Some(h) = body.strip_prefix("0x").or_else(|| body.strip_prefix("0X")) {
        u64::from_str_radix(h, 16).ok()?
    } else if body == "true" {
        1
    } else if body == "false" {
        0
    } else {
        body.parse::<u64>().ok()?
    };
    let raw = if neg { mag.wrapping_neg() } else { mag };
    let n = bytes.min(8) as usize;
    if n < 8 {
        let bits = n as u32 * 8;
        let fits = if neg {
            mag <= 1u64 << (bits - 1)
        } else {
            mag < 1u64 << bits
        };
        if !fits {
            return None;
        }
    }
    Some(raw.to_le_bytes()[..n].to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_from_source_after_multibyte_text() {
        // 200 bytes before the name fall inside a 2-byte character for one of the pads: no
        // split, no panic.
        for pad in 0..2 {
            let s = format!(
                "// {}{}\n__global__ void k(float* in, int n) {{}}\n",
                "é".repeat(120),
                " ".repeat(pad)
            );
            assert_eq!(source_param_names(&s, "k", 2), vec!["in", "n"]);
        }
    }

    #[test]
    fn names_from_source() {
        let src = "template <typename T>\n__global__ void offset(T* a, int s)\n{ }\n__global__ void k(const float* __restrict__ in, float out[], int n = 3) {}";
        assert_eq!(source_param_names(src, "offset<float>", 2), vec!["a", "s"]);
        assert_eq!(
            param_types("reduce3<float, (unsigned int)256>(float*, float*, unsigned int)"),
            vec!["float*", "float*", "unsigned int"]
        );
        assert_eq!(source_param_names(src, "k", 3), vec!["in", "out", "n"]);
        // A prototype's names give way to the definition's (Rodinia gaussian's Fan2).
        let proto =
            "__global__ void k(float *m, int Size);\n__global__ void k(float *m_cuda, int n) {}";
        assert_eq!(source_param_names(proto, "k", 2), vec!["m_cuda", "n"]);
        let only = "__global__ void k(float *m, int Size);";
        assert_eq!(source_param_names(only, "k", 2), vec!["m", "Size"]);
        assert!(source_param_names(src, "k", 2).is_empty());
        let p = source_params(src, "k", 3);
        assert_eq!(
            p.iter().map(|(_, t)| t.as_str()).collect::<Vec<_>>(),
            vec!["const float*", "float*", "int"]
        );
    }

    #[test]
    fn types_from_signature() {
        assert_eq!(
            param_types("void offset<float>(float*, int)"),
            vec!["float*", "int"]
        );
        assert_eq!(pointee_bytes("float const*"), Some(4));
        assert_eq!(pointee_bytes("float4*"), Some(16));
        assert_eq!(pointee_bytes("int"), None);
    }

    #[test]
    fn scalars_encode_in_their_width() {
        assert_eq!(encode_scalar("-1", 4, false), Some(vec![0xFF; 4]));
        assert_eq!(
            encode_scalar("1.5", 4, true),
            Some(1.5f32.to_le_bytes().to_vec())
        );
        assert_eq!(encode_scalar("70000", 2, false), None);
    }
}
