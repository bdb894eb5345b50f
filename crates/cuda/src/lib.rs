//! warpscope's CUDA C++ front end: kernel source → warp-level memory accesses.
//!
//! [`Source::parse`] reads a `.cu` file with tree-sitter (grammar `tree-sitter-cuda`);
//! [`Source::kernel`] lowers one kernel (and the `__device__` functions it calls, templates
//! instantiated) to a typed IR, and the IR to PTX for the SIMT executor (`warpscope-simt`,
//! the one executor of both front ends); [`Kernel::run`] executes a launch and hands every
//! warp-level access — the addresses of the active lanes of one warp for one memory
//! instruction — to a sink, tagged with its source site. The model crate
//! (`warpscope-model`) then costs those accesses per compute capability.

mod codegen;
pub mod error;
pub mod fuzzing;
pub mod ir;
pub mod launches;
mod lower;
pub mod preprocess;
mod text;
pub mod types;
mod value;

pub use error::{Error, Result, ThreadCoord};
pub use ir::Loc;
pub use launches::{host_launches, HostLaunch};
pub use lower::{AllocInfo, LocalArray, Site};
pub use text::decode_source;
pub use types::ScalarField;
pub use value::{LaunchConfig, WarpOrigin};

use lower::{Lowered, Lowerer};
use preprocess::{blank_attributes, SourceMap};
use types::Ty;
use warpscope_model::WarpAccess;

/// Default for [`LaunchConfig::max_steps`]: steps (32 warp instructions each) one block may
/// run, 1.28·10⁸ warp instructions: a 1,024-thread block (32 warps) running 100,000 iterations
/// of a 40-instruction loop fits. A count, never a time, so that results do not depend on
/// the machine's load.
pub const DEFAULT_MAX_STEPS: u64 = 4_000_000;

/// A parsed `.cu` file.
pub struct Source {
    file: String,
    text: String,
    tree: tree_sitter::Tree,
    aligns: Vec<(usize, u64)>,
    /// Positions in `text` (the preprocessor's output) → the user's files.
    map: std::sync::Arc<SourceMap>,
}

impl Source {
    /// Parses `text` (the contents of `file`) with `defines` (`NAME`, `NAME=VALUE` or
    /// `NAME(a,b)=BODY`, as `-D` takes them) and no `-I` folders: [`Source::parse_with_includes`].
    pub fn parse(file: &str, text: &str, defines: &[String]) -> Result<Source> {
        Self::parse_with_includes(file, text, defines, &[])
    }

    /// Preprocesses `text` (the contents of `file`; [`preprocess::preprocess`]: `#include
    /// "…"` searches `file`'s folder then `include_dirs`, `<…>` `include_dirs`; the standard
    /// and CUDA runtime headers in [`preprocess::SYSTEM_HEADERS`] are skipped) and parses it.
    /// Every position reported later (errors, [`Site::loc`]) is the user's file:line:col; a
    /// macro's output is placed at the macro's use.
    ///
    /// Errors: [`Error::Semantic`] from the preprocessor (a missing `"…"` header with the
    /// folders searched, an include cycle, `#error`, a bad `#if`); [`Error::Syntax`] at the
    /// first place the parse tree marks as an error or a missing token, outside the bodies
    /// of host functions (those wait until device code calls one); [`Error::Argument`] for
    /// a malformed define.
    pub fn parse_with_includes(
        file: &str,
        text: &str,
        defines: &[String],
        include_dirs: &[std::path::PathBuf],
    ) -> Result<Source> {
        let pp = preprocess::preprocess(file, text, defines, include_dirs)?;
        let map = std::sync::Arc::new(pp.map);
        let (blanked, aligns) = blank_attributes(&pp.text);
        let mut parser = tree_sitter::Parser::new();
        parser
            .set_language(&tree_sitter_cuda::LANGUAGE.into())
            .map_err(|e| Error::Argument(format!("cannot load the CUDA grammar: {e}")))?;
        text::check_bracket_depth(file, &blanked, lower::MAX_NESTING)
            .map_err(|e| relocate(&map, e))?;
        let budget = parse_budget(&blanked);
        let gave_up = || {
            Error::Argument(format!("{file}: the parser gave up after {budget} progress checks (tree-sitter's, one per 100 parse operations: badly broken or very deeply nested code); check the file compiles"))
        };
        let mut tree = parse_bounded(&mut parser, &blanked).ok_or_else(gave_up)?;
        let mut blanked = blanked;
        // `((x)>=(lo) && (x)<=(hi))`: casts of `&&(…)` to a variable, read again as the
        // expressions they are (a few rounds for casts inside such casts).
        for _ in 0..4 {
            match text::unparenthesize_false_casts(tree.root_node(), &blanked) {
                Some(t) => {
                    blanked = t;
                    tree = parse_bounded(&mut parser, &blanked).ok_or_else(gave_up)?;
                }
                None => break,
            }
        }
        // Syntax errors in host functions' bodies wait until device code calls one.
        if let Some((loc, msg)) = first_error(tree.root_node(), &blanked, true) {
            return Err(relocate(
                &map,
                Error::Syntax {
                    file: file.to_string(),
                    loc,
                    msg,
                },
            ));
        }
        Ok(Source {
            file: file.to_string(),
            text: blanked,
            tree,
            aligns,
            map,
        })
    }

    /// The preprocessed text the parser reads.
    pub fn preprocessed(&self) -> &str {
        &self.text
    }

    fn lowerer(&self) -> Result<Lowerer<'_>> {
        Lowerer::new(
            &self.file,
            &self.text,
            self.tree.root_node(),
            self.aligns.clone(),
        )
    }

    /// The `__global__` functions of the file (templates as `name<T, N>`).
    pub fn kernels(&self) -> Result<Vec<String>> {
        Ok(self
            .lowerer()
            .map_err(|e| relocate(&self.map, e))?
            .kernel_names())
    }

    /// Bytes of the type named `name` in the file (`Node`, `struct Node`, a typedef, a CUDA
    /// vector type), laid out as C++ does; `None` when the file declares no such type or its
    /// file-scope declarations cannot be read. (The compiled path sizes `--alloc` elements of
    /// pointers to structs with it: PTX has no pointee types.)
    pub fn type_size(&self, name: &str) -> Option<u64> {
        self.lowerer().ok()?.named_type_size(strip_tag(name))
    }

    /// The scalars of the aggregate type named `name` in the file, in layout order, nested
    /// structs and arrays flattened (`dims.n`: path `n`; `box.x`; `w[2]`), with their byte
    /// offsets and sizes as C++ lays them out; `None` as for [`Source::type_size`]. (The
    /// compiled path encodes a struct passed by value from `--arg NAME.FIELD=V` with it.)
    pub fn type_fields(&self, name: &str) -> Option<Vec<ScalarField>> {
        self.lowerer().ok()?.named_type_fields(strip_tag(name))
    }

    /// Lowers the kernel `name`, written with its template arguments for a template
    /// (`stride<float>`).
    ///
    /// Errors: [`Error::UnknownKernel`] listing the kernels found (or [`Error::Syntax`] at a
    /// syntax error in host code, which may hide the kernel); [`Error::Unsupported`] or
    /// [`Error::Semantic`] at the construct that cannot be interpreted, also in a file-scope
    /// declaration the kernel uses; [`Error::Syntax`] in a host function the kernel calls.
    pub fn kernel(&self, name: &str) -> Result<Kernel> {
        let lower = || -> Result<Lowered> {
            let mut l = self.lowerer()?;
            // `k(float*, int)` names one of several overloads by its parameter types.
            let (head, sig) = match name.find('(') {
                Some(p) => (
                    &name[..p],
                    Some(name[p + 1..].trim_end().trim_end_matches(')')),
                ),
                None => (name, None),
            };
            let (base, targs) = l.parse_targs(head)?;
            l.lower_kernel(&base, targs, sig)
        };
        let mut prog = lower()
            .map_err(|e| self.hidden_by_host_syntax_error(e))
            .map_err(|e| relocate(&self.map, e))?;
        // Sites and local arrays name the user's file:line:col and spelling.
        let mut site_files = Vec::with_capacity(prog.sites.len());
        for s in &mut prog.sites {
            let origin = self.map.origin(s.loc);
            if let Some(text) = self.map.written_text(s.loc, &s.text, &self.text) {
                s.text = text;
            }
            match origin {
                Some(o) => {
                    s.loc = o.loc;
                    site_files.push((o.file != self.file).then_some(o.file));
                }
                None => site_files.push(None),
            }
        }
        for a in &mut prog.local_arrays {
            if let Some(o) = self.map.origin(a.loc) {
                a.loc = o.loc;
            }
        }
        for r in &mut prog.texture_refs {
            if let Some(o) = self.map.origin(r.loc) {
                r.loc = o.loc;
            }
        }
        let exe = Executable::build(&prog, &self.file).map_err(|e| relocate(&self.map, e))?;
        Ok(Kernel {
            file: self.file.clone(),
            name: name.to_string(),
            prog,
            map: self.map.clone(),
            site_files,
            exe,
        })
    }

    /// A kernel not found in a file whose host code has a syntax error may be hidden by it
    /// (a missing `}` makes the kernel part of a host function): that error is the one to
    /// fix first.
    fn hidden_by_host_syntax_error(&self, e: Error) -> Error {
        let Error::UnknownKernel { name, .. } = &e else {
            return e;
        };
        match first_error(self.tree.root_node(), &self.text, false) {
            Some((loc, msg)) => Error::Syntax {
                file: self.file.clone(),
                loc,
                msg: format!("{msg} (in host code; no kernel named '{name}' was found, and this error may hide it)"),
            },
            None => e,
        }
    }
}

/// Moves an error's position from the preprocessed text to the user's file:line:col.
fn relocate(map: &SourceMap, mut e: Error) -> Error {
    if let Some((file, loc)) = e.location_mut() {
        if let Some(o) = map.origin(*loc) {
            *file = o.file;
            *loc = o.loc;
        }
    }
    e
}

/// The parser's progress checks (tree-sitter calls back every 100 parse operations) one file
/// may take: a count, never a time, so the same file parses or fails the same way on a busy
/// machine. Real code takes about one check per 80 bytes, a garbled file one per 110, nested
/// template-like `a<b<c<…` one per 10; [`parse_budget`] allows one per 4 bytes, so only
/// super-linear error recovery on badly broken input reaches it.
const PARSE_CHECKS_BASE: u64 = 10_000;

/// [`PARSE_CHECKS_BASE`] plus one progress check per 4 bytes of `text`.
fn parse_budget(text: &str) -> u64 {
    PARSE_CHECKS_BASE + text.len() as u64 / 4
}

/// Parses `text`, cancelled after [`parse_budget`] progress checks.
pub(crate) fn parse_bounded(
    parser: &mut tree_sitter::Parser,
    text: &str,
) -> Option<tree_sitter::Tree> {
    let budget = parse_budget(text);
    let mut checks = 0u64;
    let mut progress = |_: &tree_sitter::ParseState| {
        checks += 1;
        if checks > budget {
            std::ops::ControlFlow::Break(())
        } else {
            std::ops::ControlFlow::Continue(())
        }
    };
    let options = tree_sitter::ParseOptions::new().progress_callback(&mut progress);
    let bytes = text.as_bytes();
    parser.parse_with_options(
        &mut |i, _| bytes.get(i..).unwrap_or_default(),
        None,
        Some(options),
    )
}

/// The first error or missing node in document order under `root`, leaving out the bodies
/// of host functions when `skip_host_bodies` (see [`lower::is_host_function_body`]).
/// Iterative (a tree cursor), as a deeply nested file makes a deep tree.
pub(crate) fn first_error(
    root: tree_sitter::Node,
    src: &str,
    skip_host_bodies: bool,
) -> Option<(Loc, String)> {
    if !root.has_error() {
        return None;
    }
    let mut c = root.walk();
    loop {
        let n = c.node();
        let skipped = skip_host_bodies && n.has_error() && lower::is_host_function_body(n);
        if skipped {
            // Left out: go on with the next sibling below.
        } else if n.is_error() || n.is_missing() {
            let p = n.start_position();
            let loc = Loc {
                line: p.row as u32 + 1,
                col: p.column as u32 + 1,
            };
            let snippet: String = src
                .get(n.byte_range())
                .unwrap_or("")
                .chars()
                .take(40)
                .collect();
            let msg = if n.is_missing() {
                format!("missing '{}'", n.kind())
            } else {
                format!(
                    "unexpected '{}'",
                    snippet.split_whitespace().collect::<Vec<_>>().join(" ")
                )
            };
            return Some((loc, msg));
        }
        // Descend only into subtrees holding an error; else move to the next sibling,
        // climbing as needed.
        if !skipped && n.has_error() && c.goto_first_child() {
            continue;
        }
        loop {
            if c.goto_next_sibling() {
                break;
            }
            if !c.goto_parent() {
                return None;
            }
        }
    }
}

/// A kernel parameter as the launch sees it.
#[derive(Clone, Debug)]
pub struct ParamInfo {
    pub name: String,
    /// The type as CUDA spells it (`const float*`, `int`).
    pub ty: String,
    pub is_pointer: bool,
    /// Bytes of one element a pointer parameter points to.
    pub elem_size: u64,
    pub read_only: bool,
}

/// One lowered kernel instance, ready to launch.
pub struct Kernel {
    file: String,
    name: String,
    prog: Lowered,
    map: std::sync::Arc<SourceMap>,
    /// Per site: the header it is in, `None` for the kernel's own file.
    site_files: Vec<Option<String>>,
    exe: Executable,
}

/// A lowered kernel as the SIMT executor runs it: its PTX decoded, and the way back from
/// the executor's memory instructions to the IR's sites.
struct Executable {
    prog: warpscope_simt::Program,
    /// Per executor site: the IR site, `None` for data movement that is no access.
    site_map: Vec<Option<usize>>,
    /// PTX lines of the traps that guard integer divisions.
    division_traps: Vec<u32>,
    /// PTX lines of the traps of `assert`s.
    assert_traps: Vec<u32>,
    /// Loops: (first PTX line, last PTX line, source position).
    loops: Vec<(u32, u32, Loc)>,
    ptx: String,
}

impl Executable {
    fn build(prog: &Lowered, file: &str) -> Result<Executable> {
        let generated = codegen::generate(prog, file)?;
        if std::env::var_os("WARPSCOPE_DUMP_PTX").is_some() {
            eprintln!("{}", generated.ptx);
        }
        let internal = |what: String| {
            Error::Argument(format!("{file}: internal error lowering the kernel to the executor's form: {what}. Please report it with the kernel; the compiled path (nvcc) may work meanwhile"))
        };
        let module = warpscope_ptx::parse(&generated.ptx).map_err(|e| internal(e.to_string()))?;
        let entry = module
            .functions
            .iter()
            .find(|f| f.is_entry)
            .ok_or_else(|| internal("no entry".into()))?;
        let mut exe =
            warpscope_simt::Program::decode(&module, entry).map_err(|e| internal(e.to_string()))?;
        // Only the real local arrays are local-memory accesses; the rest of the frame
        // holds what the compiler keeps in registers.
        exe.local_reported = Some(prog.local_arrays.iter().map(|a| (a.start, a.end)).collect());
        let site_map: Vec<Option<usize>> = exe
            .sites
            .iter()
            .map(|s| generated.line_sites.get(&s.ptx_line).copied())
            .collect();
        for (s, m) in exe.sites.iter_mut().zip(&site_map) {
            if let Some(i) = m {
                s.read_only = prog.sites[*i].read_only;
            }
        }
        Ok(Executable {
            prog: exe,
            site_map,
            division_traps: generated.division_traps,
            assert_traps: generated.assert_traps,
            loops: generated.loops,
            ptx: generated.ptx,
        })
    }
}

impl Kernel {
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The memory accesses in the source, indexed by the site id [`Kernel::run`] reports.
    pub fn sites(&self) -> &[Site] {
        &self.prog.sites
    }

    /// Per site of the executor's program (`warpscope_simt::Program::sites`, the indices
    /// the checks' findings name): the site of [`Kernel::sites`] it is, `None` for data
    /// movement that is no access of the source.
    pub fn executor_sites(&self) -> &[Option<usize>] {
        &self.exe.site_map
    }

    /// The header site `site` is in (as found on the include path), `None` when it is in
    /// the kernel's own file.
    pub fn site_file(&self, site: usize) -> Option<&str> {
        self.site_files.get(site)?.as_deref()
    }

    /// Per-thread arrays placed in local memory, with the reason.
    pub fn local_arrays(&self) -> &[LocalArray] {
        &self.prog.local_arrays
    }

    /// Bytes of static `__shared__` memory per block.
    pub fn static_shared_bytes(&self) -> u64 {
        self.prog.static_shared_bytes
    }

    /// Bytes of shared memory one block uses: the static `__shared__` variables, then
    /// `dynamic_bytes` of `extern __shared__` memory 16-byte aligned after them.
    pub fn shared_bytes(&self, dynamic_bytes: u64) -> u64 {
        // Saturating: `--dynamic-smem 2^64-1` must not wrap to a small block.
        value::dynamic_shared_base(&self.prog).saturating_add(dynamic_bytes)
    }

    /// The kernel's parameters, in order.
    pub fn params(&self) -> Vec<ParamInfo> {
        let k = &self.prog.funcs[self.prog.kernel];
        k.params
            .iter()
            .zip(&self.prog.texture_params)
            .map(|(p, object)| ParamInfo {
                name: p.name.clone(),
                ty: match object {
                    Some(t) => t.to_string(),
                    None => self.prog.structs.name(&p.ty),
                },
                is_pointer: p.ty.is_ptr(),
                elem_size: p
                    .ty
                    .pointee()
                    .map(|t| self.prog.structs.size(t))
                    .unwrap_or(0),
                read_only: p.read_only,
            })
            .collect()
    }

    /// The global allocation pointer parameter `param` (0-based, in declaration order)
    /// points to: the `k` of the addresses `ir::addr::ALLOC_BASE + k·ir::addr::ALLOC_SPACING
    /// + offset` that [`Kernel::run`] reports for accesses through it, and the index of its
    /// size in [`LaunchConfig::alloc_sizes`]. `None` for a scalar parameter or an index past
    /// the last parameter. (Used by `warpscope run` to size a real allocation from the range
    /// of offsets the interpreter saw.)
    pub fn param_alloc(&self, param: usize) -> Option<usize> {
        self.prog.param_allocs.get(param).copied().flatten()
    }

    /// The bytes a real launch passes for scalar parameter `param` with the values of `cfg`
    /// ([`Kernel::configure`]): the value in the parameter's own type, little-endian, as many
    /// bytes as the type has (4 for `int` and `float`, 8 for `double` and `long`, 2 for
    /// `__half`, 1 for `bool` and `char`). `None` for a pointer parameter or an index past
    /// the last parameter.
    pub fn scalar_arg_bytes(&self, cfg: &LaunchConfig, param: usize) -> Option<Vec<u8>> {
        let p = self.prog.funcs[self.prog.kernel].params.get(param)?;
        if let Some(Some(bytes)) = cfg.aggregates.get(param) {
            return Some(bytes.clone());
        }
        let v = *cfg.args.get(param)?;
        matches!(p.ty, Ty::Float(_) | Ty::Bool | Ty::Int { .. }).then(|| scalar_bytes(v, &p.ty))
    }

    /// Builds a launch configuration from user input: scalar arguments by parameter name
    /// (`args`: name, value text), allocation sizes of pointer parameters in elements
    /// (`allocs`), the grid and block shape, `extern __shared__` bytes and the loop limit.
    ///
    /// Errors ([`Error::Argument`]): an unknown parameter name (the message lists them), a
    /// missing or ill-typed value, a size for a parameter that is not a pointer.
    pub fn configure(
        &self,
        args: &[(String, String)],
        allocs: &[(String, u64)],
        grid: [u32; 3],
        block: [u32; 3],
        dynamic_shared_bytes: u64,
        max_steps: u64,
    ) -> Result<LaunchConfig> {
        let k = &self.prog.funcs[self.prog.kernel];
        let names = || {
            k.params
                .iter()
                .map(|p| format!("{} ({})", p.name, self.prog.structs.name(&p.ty)))
                .collect::<Vec<_>>()
                .join(", ")
        };
        // `--arg d.n=V`, `--arg d.w[2]=V`: a scalar of a struct parameter passed by value.
        let field_of = |n: &str| -> Option<(usize, String)> {
            let split = n.find(['.', '['])?;
            let i = k.params.iter().position(|p| p.name == n[..split])?;
            matches!(k.params[i].ty, Ty::Struct(_))
                .then(|| (i, n[split..].trim_start_matches('.').to_string()))
        };
        for (n, _) in args {
            if field_of(n).is_some() {
                continue;
            }
            if let Some(i) = k.params.iter().position(|p| &p.name == n) {
                if let Some(t) = self.prog.texture_params.get(i).copied().flatten() {
                    return Err(Error::Argument(format!(
                        "--arg {n}: '{n}' is a {t}: describe it with --texture {n}=KIND:W[xH[xD]]:FORMAT"
                    )));
                }
            }
            match k.params.iter().find(|p| &p.name == n) {
                None => return Err(Error::Argument(format!("--arg {n}: {} has no parameter '{n}'; its parameters are: {}", self.name, names()))),
                Some(p) if p.ty.is_ptr() => {
                    return Err(Error::Argument(format!(
                        "--arg {n}: '{n}' is a pointer; warpscope gives each pointer parameter its own allocation (size it with --alloc {n}=ELEMENTS)"
                    )))
                }
                Some(_) => {}
            }
        }
        let mut values = Vec::new();
        let mut aggregates = vec![None; k.params.len()];
        for (i, p) in k.params.iter().enumerate() {
            // A texture or surface object's handle comes from --texture.
            if p.ty.is_ptr() || self.prog.texture_params.get(i).copied().flatten().is_some() {
                values.push(0);
                continue;
            }
            if let Ty::Struct(_) = p.ty {
                let given: Vec<(String, &str)> = args
                    .iter()
                    .filter_map(|(n, v)| {
                        field_of(n)
                            .filter(|(j, _)| *j == i)
                            .map(|(_, path)| (path, v.as_str()))
                    })
                    .collect();
                let whole = args.iter().any(|(n, _)| n == &p.name);
                let structs = &self.prog.structs;
                aggregates[i] = Some(encode_struct_arg(
                    &p.name,
                    &structs.name(&p.ty),
                    structs.size(&p.ty),
                    &structs.scalar_fields(&p.ty, usize::MAX),
                    whole,
                    &given,
                )?);
                values.push(0);
                continue;
            }
            if !p.ty.is_arith() {
                return Err(Error::Argument(format!(
                    "parameter '{}' of {} is a {}; only numbers and pointers can be passed",
                    p.name,
                    self.name,
                    self.prog.structs.name(&p.ty)
                )));
            }
            let Some((_, v)) = args.iter().rev().find(|(n, _)| n == &p.name) else {
                return Err(Error::Argument(format!(
                    "kernel parameter '{}' ({}) has no value: pass --arg {}=VALUE",
                    p.name,
                    self.prog.structs.name(&p.ty),
                    p.name
                )));
            };
            values.push(parse_scalar(v, &p.ty).ok_or_else(|| {
                Error::Argument(format!(
                    "--arg {}={v}: '{}' is a {}; '{v}' is not one",
                    p.name,
                    p.name,
                    self.prog.structs.name(&p.ty)
                ))
            })?);
        }
        let mut sizes: Vec<Option<u64>> = self.prog.allocs.iter().map(|a| a.size).collect();
        for (n, elems) in allocs {
            let Some(i) = k.params.iter().position(|p| &p.name == n) else {
                return Err(Error::Argument(format!(
                    "--alloc {n}: {} has no parameter '{n}'; its parameters are: {}",
                    self.name,
                    names()
                )));
            };
            let Some(Some(a)) = self.prog.param_allocs.get(i) else {
                return Err(Error::Argument(format!(
                    "--alloc {n}: '{n}' is not a pointer parameter"
                )));
            };
            sizes[*a] = Some(elems.saturating_mul(self.prog.allocs[*a].elem_size));
        }
        Ok(LaunchConfig {
            grid,
            block,
            args: values,
            aggregates,
            alloc_contents: vec![warpscope_init::Contents::Zero; sizes.len()],
            alloc_sizes: sizes,
            dynamic_shared_bytes,
            max_steps,
            max_memory: warpscope_simt::DEFAULT_MAX_MEMORY,
            progress: None,
            sample: None,
            textures: Vec::new(),
            findings: Some(Default::default()),
        })
    }

    /// The kernel's texture and surface object parameters and the file's texture and surface
    /// references, as `--texture` names them: (name, what it is).
    pub fn texture_names(&self) -> Vec<(String, String)> {
        let k = &self.prog.funcs[self.prog.kernel];
        let params = k
            .params
            .iter()
            .zip(&self.prog.texture_params)
            .filter_map(|(p, t)| t.map(|t| (p.name.clone(), t.to_string())));
        let refs = self.prog.texture_refs.iter().map(|r| {
            (
                r.name.clone(),
                format!(
                    "{} reference, line {}",
                    if r.surface { "surface" } else { "texture" },
                    r.loc.line
                ),
            )
        });
        params.chain(refs).collect()
    }

    /// Binds `--texture` descriptions to the kernel's texture and surface object parameters
    /// and the file's texture and surface references, by name, in `cfg`.
    ///
    /// Errors ([`Error::Argument`]): a name that is neither (the message lists the kernel's
    /// parameters and the file's references), or a parameter that is no texture or surface
    /// object.
    pub fn set_textures(
        &self,
        cfg: &mut LaunchConfig,
        textures: &[warpscope_model::texture::TextureDesc],
    ) -> Result<()> {
        let k = &self.prog.funcs[self.prog.kernel];
        for t in textures {
            if let Some(i) = k.params.iter().position(|p| p.name == t.name) {
                if self.prog.texture_params.get(i).copied().flatten().is_none() {
                    return Err(Error::Argument(format!(
                        "--texture {}: '{}' ({}) is not a texture or surface object (cudaTextureObject_t or cudaSurfaceObject_t)",
                        t.name,
                        t.name,
                        self.prog.structs.name(&k.params[i].ty)
                    )));
                }
                continue;
            }
            if self.prog.texture_refs.iter().any(|r| r.name == t.name) {
                continue;
            }
            let names = self.texture_names();
            let known = if names.is_empty() {
                "it reads no texture or surface".to_string()
            } else {
                format!(
                    "its textures and surfaces are: {}",
                    names
                        .iter()
                        .map(|(n, what)| format!("{n} ({what})"))
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            };
            return Err(Error::Argument(format!(
                "--texture {}: {} has no texture or surface parameter or reference '{}'; {known}",
                t.name, self.name, t.name
            )));
        }
        cfg.textures = textures.to_vec();
        Ok(())
    }

    /// Applies `--init` rules to `cfg` ([`Kernel::configure`]'s, with the same `allocs`): each
    /// pointer parameter's allocation starts with its contents, and one filled from a file
    /// and not sized by `--alloc` gets the file's size. Returns the resolved initial state of
    /// each parameter (`None` for scalars), as `warpscope verify` fills real buffers.
    ///
    /// Errors ([`Error::Argument`]): what [`warpscope_init::resolve`] reports (a rule naming
    /// no pointer parameter, a file that does not match the element type or `--alloc`).
    pub fn apply_init(
        &self,
        cfg: &mut LaunchConfig,
        rules: &[warpscope_init::Rule],
        allocs: &[(String, u64)],
    ) -> Result<Vec<Option<warpscope_init::Initial>>> {
        let infos = self.params();
        let params: Vec<warpscope_init::Param> = infos
            .iter()
            .map(|p| warpscope_init::Param {
                name: &p.name,
                c_type: &p.ty,
                pointer: p.is_pointer,
                elem_bytes: p.elem_size,
            })
            .collect();
        let initial = warpscope_init::resolve(rules, &self.name, &params, allocs)
            .map_err(|e| Error::Argument(e.0))?;
        for (i, init) in initial.iter().enumerate() {
            let (Some(init), Some(a)) = (init, self.param_alloc(i)) else {
                continue;
            };
            if let Some(slot) = cfg.alloc_contents.get_mut(a) {
                *slot = init.contents.clone();
            }
            if let (Some(n), Some(size)) = (init.file_elements, cfg.alloc_sizes.get_mut(a)) {
                *size = Some(n.saturating_mul(self.prog.allocs[a].elem_size));
            }
        }
        Ok(initial)
    }

    /// Runs the launch, calling `sink(site, access)` for each warp-level access in execution
    /// order.
    ///
    /// Errors: the first out-of-bounds or misaligned access, division by zero or runaway
    /// loop, naming the source position and the thread and block.
    pub fn run(&self, cfg: &LaunchConfig, sink: &mut dyn FnMut(usize, &WarpAccess)) -> Result<()> {
        self.run_with_origin(cfg, &mut |s, a, _| sink(s, a))
    }

    /// [`Kernel::run`], also telling the sink which warp of which block issued each access.
    pub fn run_with_origin(
        &self,
        cfg: &LaunchConfig,
        sink: &mut dyn FnMut(usize, &WarpAccess, WarpOrigin),
    ) -> Result<()> {
        let launch = self.launch(cfg)?;
        let map = &self.exe.site_map;
        self.exe
            .prog
            .run(&launch, &mut |s, a, o| {
                if let Some(Some(site)) = map.get(s as usize) {
                    sink(
                        *site,
                        a,
                        WarpOrigin {
                            block: o.block,
                            warp: o.warp,
                        },
                    )
                }
            })
            .map_err(|e| relocate(&self.map, self.runtime_error(e)))
    }

    /// [`Kernel::run`] with the accesses summed in parts on the threads that run the blocks
    /// (when blocks cannot see each other's stores): `part()` makes an empty summary,
    /// `feed(part, site, access, origin)` adds one access, and `merge` receives the parts in
    /// block order.
    ///
    /// Errors: as [`Kernel::run`].
    pub fn run_parts<T: Send>(
        &self,
        cfg: &LaunchConfig,
        part: &(dyn Fn() -> T + Sync),
        feed: &(dyn Fn(&mut T, usize, &WarpAccess, WarpOrigin) + Sync),
        merge: &mut dyn FnMut(T),
    ) -> Result<()> {
        let launch = self.launch(cfg)?;
        let map = &self.exe.site_map;
        self.exe
            .prog
            .run_parts(
                &launch,
                part,
                &|t, s, a, o| {
                    if let Some(Some(site)) = map.get(s as usize) {
                        feed(
                            t,
                            *site,
                            a,
                            WarpOrigin {
                                block: o.block,
                                warp: o.warp,
                            },
                        )
                    }
                },
                merge,
            )
            .map_err(|e| relocate(&self.map, self.runtime_error(e)))
    }

    /// The PTX the kernel runs as (for `--emit-ptx` and debugging).
    pub fn ptx(&self) -> &str {
        &self.exe.ptx
    }

    /// The executor's launch for `cfg`: pointer parameters point at their allocations,
    /// laid out as [`ir::addr`] says.
    fn launch(&self, cfg: &LaunchConfig) -> Result<warpscope_simt::Launch> {
        if self.shared_bytes(cfg.dynamic_shared_bytes) > (1 << 32) {
            return Err(Error::Argument(
                "shared memory larger than 4 GiB requested".into(),
            ));
        }
        let k = &self.prog.funcs[self.prog.kernel];
        let mut args = Vec::with_capacity(k.params.len());
        for (i, p) in k.params.iter().enumerate() {
            if let Some(t) = self.prog.texture_params.get(i).copied().flatten() {
                let Some(j) = cfg.textures.iter().position(|d| d.name == p.name) else {
                    return Err(Error::Argument(format!(
                        "kernel parameter '{}' is a {t}: describe it with --texture {}=KIND:W[xH[xD]]:FORMAT (KIND linear, pitch2d or array; e.g. --texture {}=array:1024x1024:float)",
                        p.name, p.name, p.name
                    )));
                };
                args.push(warpscope_simt::texture_handle(j).to_le_bytes().to_vec());
                continue;
            }
            args.push(match self.param_alloc(i) {
                Some(a) => alloc_base(a).to_le_bytes().to_vec(),
                None if p.ty.is_ptr() => 0u64.to_le_bytes().to_vec(),
                None => self.scalar_arg_bytes(cfg, i).ok_or_else(|| {
                    Error::Argument(format!("parameter '{}' has no value", p.name))
                })?,
            });
        }
        let allocs = self
            .prog
            .allocs
            .iter()
            .enumerate()
            .map(|(i, a)| {
                let contents = if !a.init.is_empty() {
                    warpscope_init::Contents::Bytes(a.init.clone().into())
                } else {
                    cfg.alloc_contents.get(i).cloned().unwrap_or_default()
                };
                (
                    warpscope_simt::Alloc {
                        name: a.name.clone(),
                        base: alloc_base(i),
                        size: cfg.alloc_sizes.get(i).copied().flatten().or(a.size),
                    },
                    contents,
                )
            })
            .collect();
        Ok(warpscope_simt::Launch {
            grid: cfg.grid,
            block: cfg.block,
            args,
            allocs,
            dynamic_shared_bytes: cfg.dynamic_shared_bytes,
            max_steps: cfg.max_steps.saturating_mul(32),
            max_block_time: None,
            max_memory: cfg.max_memory,
            threads: 0,
            progress: cfg.progress.clone(),
            textures: self.texture_bindings(cfg),
            // The source front end has no TMA: tensor copies come from compiled code.
            tensor_maps: Vec::new(),
            sample: cfg.sample.clone(),
            // The source front end runs no clusters (its kernels take the compiled path).
            cluster: [1, 1, 1],
            explicit_cluster: false,
            findings: cfg.findings.clone(),
        })
    }

    /// The executor's binding of each `--texture` of `cfg`: a parameter's handle, or the
    /// handle the decoded PTX gives the reference of that name; each texture's texels at
    /// `TEXTURE_BASE + k · TEXTURE_SPACING` for its index k (as the compiled path lays them).
    fn texture_bindings(&self, cfg: &LaunchConfig) -> Vec<warpscope_simt::TextureBinding> {
        cfg.textures
            .iter()
            .enumerate()
            .map(|(j, d)| {
                let handle = self
                    .exe
                    .prog
                    .texture_refs
                    .iter()
                    .find(|r| r.name == d.name)
                    .filter(|_| {
                        !self.prog.funcs[self.prog.kernel]
                            .params
                            .iter()
                            .any(|p| p.name == d.name)
                    })
                    .map(|r| r.handle)
                    .unwrap_or_else(|| warpscope_simt::texture_handle(j));
                warpscope_simt::TextureBinding {
                    handle,
                    desc: d.clone(),
                    base: warpscope_simt::TEXTURE_BASE + j as u64 * warpscope_simt::TEXTURE_SPACING,
                }
            })
            .collect()
    }

    /// An executor error in the source's terms (positions still in the preprocessed text).
    fn runtime_error(&self, e: warpscope_simt::Error) -> Error {
        let at_loc = |at: &warpscope_simt::At| {
            at.loc
                .map(|(_, line, col)| Loc { line, col })
                .unwrap_or_default()
        };
        match e {
            warpscope_simt::Error::Fault {
                at,
                msg,
                thread,
                block,
            } => {
                let thread = ThreadCoord { thread, block };
                let loc = at_loc(&at);
                if self.exe.division_traps.contains(&at.ptx_line) {
                    return Error::DivisionByZero {
                        file: self.file.clone(),
                        loc,
                        thread,
                    };
                }
                if self.exe.assert_traps.contains(&at.ptx_line) {
                    return Error::Fault {
                        file: self.file.clone(),
                        loc,
                        msg: "assertion failed: the kernel aborts here".into(),
                        thread,
                    };
                }
                Error::Fault {
                    file: self.file.clone(),
                    loc,
                    msg,
                    thread,
                }
            }
            warpscope_simt::Error::Runaway {
                at,
                steps,
                block,
                limit,
            } => {
                // Named by the innermost loop around the instruction it stopped at.
                let loc = self
                    .exe
                    .loops
                    .iter()
                    .filter(|(a, b, _)| *a <= at.ptx_line && at.ptx_line <= *b)
                    .min_by_key(|(a, b, _)| b - a)
                    .map(|l| l.2)
                    .unwrap_or_else(|| at_loc(&at));
                match limit {
                    warpscope_simt::RunawayLimit::Steps => Error::StepLimit {
                        file: self.file.clone(),
                        loc,
                        limit: steps / 32,
                        block,
                    },
                    warpscope_simt::RunawayLimit::Time(t) => Error::TimeLimit {
                        file: self.file.clone(),
                        loc,
                        seconds: t.as_secs_f64(),
                        block,
                    },
                }
            }
            other => Error::Argument(format!("{}: {other}", self.file)),
        }
    }
}

/// The base address of global allocation `i` ([`ir::addr`]).
fn alloc_base(i: usize) -> u64 {
    ir::addr::ALLOC_BASE + i as u64 * ir::addr::ALLOC_SPACING
}

fn parse_scalar(v: &str, ty: &Ty) -> Option<u64> {
    let v = v.trim();
    match ty {
        Ty::Float(b) => {
            let x: f64 = v.trim_end_matches(['f', 'F']).parse().ok()?;
            Some(value::cast_scalar(
                x.to_bits(),
                &types::DOUBLE,
                &Ty::Float(*b),
            ))
        }
        Ty::Bool => match v {
            "true" | "1" => Some(1),
            "false" | "0" => Some(0),
            _ => None,
        },
        Ty::Int { bytes, signed } => {
            let (neg, body) = match v.strip_prefix('-') {
                Some(b) => (true, b),
                None => (false, v),
            };
            let mag = if let Some(h) = body.strip_prefix("0x").or_else(|| body.strip_prefix("0X")) {
                u64::from_str_radix(h, 16).ok()?
            } else {
                body.parse::<u64>().ok()?
            };
            if neg && !signed {
                return None;
            }
            let raw = if neg { mag.wrapping_neg() } else { mag };
            // The value must fit the parameter's type.
            let c = value::canon(raw, *bytes, *signed);
            (c == raw || (!neg && *bytes == 8)).then_some(c)
        }
        _ => None,
    }
}

/// `struct Node` → `Node`.
fn strip_tag(name: &str) -> &str {
    let name = name.trim();
    ["struct ", "class ", "union "]
        .iter()
        .find_map(|k| name.strip_prefix(k))
        .unwrap_or(name)
        .trim()
}

/// The bytes (`size` long) of the struct kernel parameter `param`, of type `struct_name`,
/// passed by value, from `--arg PARAM.FIELD=V` for its scalars (`given`: field path, value
/// text; `fields` as [`Source::type_fields`] gives them); fields not given are 0. Both front
/// ends encode struct arguments with it.
///
/// Errors ([`Error::Argument`]): a whole value (`whole`), no field given, an unknown field
/// (the fields are listed with their types and offsets), a value its field cannot hold, a
/// field past `size` bytes.
pub fn encode_struct_arg(
    param: &str,
    struct_name: &str,
    size: u64,
    fields: &[ScalarField],
    whole: bool,
    given: &[(String, &str)],
) -> Result<Vec<u8>> {
    let listing = || {
        let mut v: Vec<String> = fields
            .iter()
            .take(12)
            .map(|f| format!("{param}.{} ({} at +{})", f.path, f.type_name, f.offset))
            .collect();
        if fields.len() > 12 {
            v.push(format!("… {} more", fields.len() - 12));
        }
        v.join(", ")
    };
    if whole || given.is_empty() {
        return Err(Error::Argument(format!(
            "kernel parameter '{param}' is a struct {struct_name} passed by value ({size} bytes): give the fields the kernel reads as --arg {param}.FIELD=VALUE (the others are 0); its fields: {}",
            listing()
        )));
    }
    let mut out = vec![0u8; size as usize];
    for (path, v) in given {
        let Some(f) = fields.iter().find(|f| &f.path == path) else {
            return Err(Error::Argument(format!(
                "--arg {param}.{path}: {struct_name} has no field '{path}'; its fields: {}",
                listing()
            )));
        };
        let bits = parse_scalar(v, &f.ty).ok_or_else(|| {
            Error::Argument(format!(
                "--arg {param}.{path}={v}: the field is a {}; '{v}' is not one",
                f.type_name
            ))
        })?;
        let bytes = scalar_bytes(bits, &f.ty);
        let at = f.offset as usize;
        let Some(slot) = out.get_mut(at..at + bytes.len()) else {
            return Err(Error::Argument(format!(
                "--arg {param}.{path}: the field at +{at} lies past the parameter's {size} bytes (the source's layout and the compiled one differ)"
            )));
        };
        slot.copy_from_slice(&bytes);
    }
    Ok(out)
}

/// The bytes of scalar value `v` of type `t` as the kernel receives it, little-endian (values
/// are kept as the interpreter keeps them: floats as f64 bits, integers sign- or
/// zero-extended to 64 bits).
fn scalar_bytes(v: u64, t: &Ty) -> Vec<u8> {
    match t {
        Ty::Float(2) => half::f16::from_f64(f64::from_bits(v))
            .to_bits()
            .to_le_bytes()
            .to_vec(),
        Ty::Float(4) => (f64::from_bits(v) as f32).to_le_bytes().to_vec(),
        Ty::Float(_) => v.to_le_bytes().to_vec(),
        Ty::Bool => vec![(v != 0) as u8],
        Ty::Int { bytes, .. } => v.to_le_bytes()[..*bytes as usize].to_vec(),
        _ => v.to_le_bytes().to_vec(),
    }
}
