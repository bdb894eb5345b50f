//! `warpscope._warpscope`: the native half of the Python package, a thin face over the
//! `warpscope` library crate.
//!
//! A launch comes in as one JSON document (the Python side builds it from keyword
//! arguments: see `warpscope/__init__.py`), is turned into a [`warpscope::AnalyzeRequest`]
//! the way the command line's `job()` fills one from its flags, and runs through
//! [`warpscope::analyze`] or [`warpscope::explain`] with the GIL released. Results stay in
//! Rust ([`PyAnalysis`], [`PyExplanation`]) and are rendered on demand by the same functions
//! the command line prints with, so `to_json()` is byte for byte what
//! `warpscope analyze --format json` prints.
//!
//! Errors: every failure is raised as `_warpscope.NativeError(kind, message)`, where
//! `message` is what the CLI prints after `error: ` and `kind` one of `input`, `compile`,
//! `launch` or `error`; the Python side turns it into `warpscope.InputError`,
//! `CompileError`, `LaunchError` or `Error`. A Rust panic is caught (`catch_unwind`) and
//! raised as an `error` too: nothing unwinds into Python.

use anyhow::{anyhow, bail, Context, Result};
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use serde::Deserialize;
use std::panic::{catch_unwind, AssertUnwindSafe};
use warpscope::model::{Config, L1Mode, SmemBankMode};
use warpscope::AnalyzeRequest;

pyo3::create_exception!(
    _warpscope,
    NativeError,
    PyException,
    "A warpscope failure: args are (kind, message); the Python package re-raises it as warpscope.Error or a subclass."
);

/// A launch, as the Python side sends it (field names follow the CLI's flags).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Spec {
    /// Path of the `.cu`/`.ptx` file (read unless `source` is given).
    file: String,
    /// The file's text, when the caller has it (a source string written to `file`).
    #[serde(default)]
    source: Option<String>,
    /// The name reports show for the file (a source string's synthetic name).
    #[serde(default)]
    display: Option<String>,
    kernel: String,
    grid: [u32; 3],
    block: [u32; 3],
    #[serde(default)]
    args: Vec<(String, String)>,
    #[serde(default)]
    allocs: Vec<(String, u64)>,
    /// `--init` rules as the CLI takes them (`NAME=MODE` or `MODE`).
    #[serde(default)]
    init: Vec<String>,
    /// `--cc LIST`.
    #[serde(default)]
    cc: Option<String>,
    #[serde(default)]
    defines: Vec<String>,
    /// `--tensor-map NAME=SPEC`, as (NAME, SPEC).
    #[serde(default)]
    tensor_maps: Vec<(String, String)>,
    /// `--texture NAME=SPEC`, as the CLI takes it.
    #[serde(default)]
    textures: Vec<String>,
    #[serde(default)]
    frontend: Option<String>,
    #[serde(default)]
    nvcc: Option<String>,
    #[serde(default)]
    include_dirs: Vec<String>,
    #[serde(default)]
    std: Option<String>,
    #[serde(default)]
    opt_level: Option<String>,
    #[serde(default)]
    no_sass: bool,
    #[serde(default)]
    nvcc_flags: Vec<String>,
    #[serde(default)]
    dynamic_smem: u64,
    #[serde(default)]
    max_steps: Option<u64>,
    #[serde(default)]
    max_memory: Option<u64>,
    /// A number of blocks (an integer), a fraction of the grid (a float in (0, 1]) or
    /// `"auto"` (sized from a pilot, its error stated: `warpscope::sample`).
    #[serde(default)]
    sample_blocks: Option<serde_json::Value>,
    #[serde(default)]
    l1: Option<String>,
    #[serde(default)]
    smem_bank_size: Option<u32>,
    /// `--gpu NAME` and `--profile FILE`.
    #[serde(default)]
    gpu: Option<String>,
    #[serde(default)]
    profile: Option<String>,
    /// Names of a `.ptx` entry's parameters, in order (a Triton kernel's Python arguments).
    #[serde(default)]
    param_names: Vec<String>,
}

/// The request of `spec`, filled as `src/cli/launch.rs`'s `job()` fills one from flags.
fn request(spec: &Spec) -> Result<AnalyzeRequest> {
    let source = match &spec.source {
        Some(s) => s.clone(),
        None => {
            let bytes =
                std::fs::read(&spec.file).with_context(|| format!("cannot read {}", spec.file))?;
            warpscope::cuda::decode_source(&spec.file, &bytes)?
        }
    };
    for (what, d) in [("grid", spec.grid), ("block", spec.block)] {
        if d.contains(&0) {
            bail!(
                "--{what} {},{},{}: dimensions must be at least 1",
                d[0],
                d[1],
                d[2]
            );
        }
    }
    let mut req = AnalyzeRequest::new(&spec.file, &source, &spec.kernel, spec.grid, spec.block);
    req.args = spec.args.clone();
    req.allocs = spec.allocs.clone();
    req.param_names = spec.param_names.clone();
    req.textures = spec
        .textures
        .iter()
        .map(|t| {
            t.parse::<warpscope::model::texture::TextureDesc>()
                .map_err(|e| anyhow!("--texture {t}: {e}"))
        })
        .collect::<Result<_>>()?;
    req.tensor_maps = spec
        .tensor_maps
        .iter()
        .map(|(name, m)| {
            warpscope_simt::TensorMap::parse(m)
                .map(|t| (name.clone(), t))
                .map_err(|e| anyhow!("--tensor-map {name}={m}: {e}"))
        })
        .collect::<Result<_>>()?;
    req.init = spec
        .init
        .iter()
        .map(|s| warpscope::init::Rule::parse(s))
        .collect::<Result<_, _>>()?;
    req.defines = spec.defines.clone();
    if let Some(cc) = &spec.cc {
        req = req.ccs(cc)?;
    }
    req.dynamic_shared_bytes = spec.dynamic_smem;
    req.max_steps = spec.max_steps.unwrap_or(warpscope::cuda::DEFAULT_MAX_STEPS);
    req.max_memory = spec.max_memory.unwrap_or(warpscope::DEFAULT_MAX_MEMORY);
    if req.max_memory == 0 {
        bail!("--max-memory 0: the memory cap must be at least 1 byte");
    }
    let blocks: u64 = req.grid.iter().map(|&x| x as u64).product();
    req.sample_auto = matches!(&spec.sample_blocks, Some(serde_json::Value::String(s)) if s == "auto");
    req.sample_blocks = match &spec.sample_blocks {
        None => None,
        Some(serde_json::Value::String(s)) if s == "auto" => None,
        Some(n) => Some(match (n.as_u64(), n.as_f64()) {
            (Some(0), _) => bail!(
                "--sample-blocks 0: give at least 1 block (or a fraction such as 0.01)"
            ),
            (Some(b), _) => b,
            (None, Some(f)) if f > 0.0 && f <= 1.0 => ((blocks as f64 * f).ceil() as u64).max(1),
            _ => bail!(
                "--sample-blocks {n}: give a number of blocks (1000), a fraction of the grid between 0 and 1 (0.01), or \"auto\""
            ),
        }),
    };
    req.compile = warpscope::CompileRequest {
        frontend: match spec.frontend.as_deref().unwrap_or("auto") {
            "auto" => warpscope::Frontend::Auto,
            "ptx" => warpscope::Frontend::Ptx,
            "source" => warpscope::Frontend::Source,
            f => bail!("--frontend {f}: expected auto, ptx or source"),
        },
        nvcc: spec.nvcc.as_ref().map(Into::into),
        include_dirs: spec.include_dirs.iter().map(Into::into).collect(),
        std: spec.std.clone(),
        opt_level: spec.opt_level.clone(),
        no_sass: spec.no_sass,
        sass_listing: false,
        nvcc_flags: spec.nvcc_flags.clone(),
    };
    req.config = Config {
        l1: match spec.l1.as_deref().unwrap_or("default") {
            "default" => L1Mode::Default,
            "ca" => L1Mode::Ca,
            "cg" => L1Mode::Cg,
            l => bail!("--l1 {l}: expected default, ca or cg"),
        },
        smem_bank_mode: match spec.smem_bank_size.unwrap_or(4) {
            4 => SmemBankMode::FourByte,
            8 => SmemBankMode::EightByte,
            b => bail!("--smem-bank-size {b}: expected 4 or 8"),
        },
    };
    if let Some(name) = &spec.gpu {
        let json = spec
            .profile
            .as_deref()
            .map(|p| {
                std::fs::read_to_string(p).with_context(|| format!("cannot read --profile {p}"))
            })
            .transpose()?;
        req.gpus = vec![warpscope::GpuTarget::new(name, json.as_deref())?];
    } else if spec.profile.is_some() {
        bail!("--profile needs --gpu NAME");
    }
    Ok(req)
}

/// Which Python exception an error is: by the error types in its chain, else by the CLI
/// flag or phrase its message starts with.
fn kind_of(e: &anyhow::Error) -> &'static str {
    for cause in e.chain() {
        if let Some(c) = cause.downcast_ref::<warpscope::cuda::Error>() {
            use warpscope::cuda::Error as E;
            return match c {
                E::Syntax { .. } | E::Unsupported { .. } | E::Semantic { .. } => "compile",
                E::UnknownKernel { .. } | E::Argument(_) => "input",
                _ => "launch",
            };
        }
        if let Some(s) = cause.downcast_ref::<warpscope_simt::Error>() {
            use warpscope_simt::Error as E;
            return match s {
                E::Unsupported { .. } | E::Invalid { .. } => "compile",
                _ => "launch",
            };
        }
        if cause.is::<warpscope_ptx::ParseError>() {
            return "compile";
        }
        if cause.is::<warpscope_ptx::LookupError>() || cause.is::<warpscope::init::Error>() {
            return "input";
        }
        if cause.is::<warpscope_toolkit::ToolkitError>() {
            return "compile";
        }
        if cause.is::<warpscope::model::arch::LaunchError>() {
            return "launch";
        }
        if cause.is::<warpscope::model::arch::ArchError>() {
            return "input";
        }
    }
    let text = format!("{e:#}");
    let first = text.lines().next().unwrap_or_default();
    if text.contains("needs a CUDA compiler") || text.contains("no CUDA compiler") {
        return "compile";
    }
    const INPUT: [&str; 20] = [
        "--arg ",
        "--alloc ",
        "--init ",
        "--cc ",
        "--tensor-map ",
        "--texture ",
        "--frontend ",
        "--grid ",
        "--block ",
        "--gpu ",
        "--profile",
        "--sample-blocks",
        "--max-memory",
        "--l1 ",
        "--smem-bank-size",
        "--sample-blocks with --gpu",
        "cannot read ",
        "no kernel named",
        "kernel parameter ",
        "--nvcc ",
    ];
    if INPUT.iter().any(|p| first.starts_with(p)) || first.contains("no kernel named") {
        return "input";
    }
    // A PTX decode error, named by the file's label: `k.ptx: PTX line 6:3: ...` (a fault
    // while running keeps its type and is a launch error above).
    let ptx_decode = first
        .split_once(": PTX line ")
        .is_some_and(|(label, _)| !label.contains(' ') || label.ends_with(')'));
    if ptx_decode
        || text.contains("compile failed:")
        || text.contains("syntax error")
        || text.contains("unsupported construct")
        || text.contains("unsupported instruction")
        || text.contains("no CUDA compiler")
        || text.contains("needs a CUDA compiler")
    {
        return "compile";
    }
    if text.contains("cannot run on this compute capability")
        || text.contains("no compute capability of the set")
        || text.contains("choose another compute capability")
        || text.contains("without finishing")
        || text.contains(" by thread (")
    {
        return "launch";
    }
    "error"
}

fn native_error(kind: &str, message: String) -> PyErr {
    NativeError::new_err((kind.to_string(), message))
}

/// Runs `f` with the GIL released, turning its error (and any panic) into a NativeError.
fn run<T: Send>(py: Python<'_>, f: impl FnOnce() -> Result<T> + Send) -> PyResult<T> {
    let r = py.detach(|| catch_unwind(AssertUnwindSafe(f)));
    match r {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => Err(native_error(kind_of(&e), format!("{e:#}"))),
        Err(panic) => {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".into());
            Err(native_error(
                "error",
                format!(
                    "internal error (a bug in warpscope; please report it with the launch): {what}"
                ),
            ))
        }
    }
}

fn parse_spec(spec_json: &str) -> Result<Spec> {
    serde_json::from_str(spec_json).map_err(|e| anyhow!("bad launch description: {e}"))
}

/// The result of an analysis, rendered on demand.
#[pyclass(frozen, module = "warpscope._warpscope", name = "Analysis")]
struct PyAnalysis {
    inner: warpscope::report::Analysis,
}

#[pymethods]
impl PyAnalysis {
    /// The JSON document `warpscope analyze --format json` prints (with `schema_version`,
    /// pretty-printed, with a final newline).
    fn json(&self) -> PyResult<String> {
        serde_json::to_string_pretty(&warpscope::report::Versioned::new(&self.inner))
            .map(|s| s + "\n")
            .map_err(|e| native_error("error", e.to_string()))
    }

    /// The CSV of `warpscope analyze --format csv`: one row per site and CC.
    fn csv(&self) -> PyResult<String> {
        warpscope::report::render_csv(&self.inner)
            .map_err(|e| native_error("error", format!("{e:#}")))
    }

    /// The table of `warpscope analyze`, fitted to `width` columns (None: unlimited), with
    /// ANSI colours when `color`, and the notes (which the command line writes to standard
    /// error) as `note:` lines at the end.
    #[pyo3(signature = (width=None, color=false))]
    fn table(&self, width: Option<usize>, color: bool) -> String {
        warpscope::report::render_table_fit(&self.inner, color, width)
            + &warpscope::report::render_notes(&self.inner.notes)
    }
}

/// One access explained warp by warp and CC by CC (`warpscope explain`).
#[pyclass(frozen, module = "warpscope._warpscope", name = "Explanation")]
struct PyExplanation {
    inner: warpscope::report::explain::Explanation,
}

#[pymethods]
impl PyExplanation {
    /// The terminal picture (`--format text`).
    #[pyo3(signature = (color=false))]
    fn text(&self, color: bool) -> String {
        warpscope::report::explain::render_text(&self.inner, color)
    }
    /// The standalone SVG figure (`--format svg`).
    fn svg(&self) -> String {
        warpscope::report::explain::render_svg_all(&self.inner)
    }
    /// The self-contained HTML page (`--format html`).
    fn html(&self) -> String {
        warpscope::report::explain::render_html(&self.inner)
    }
    /// The JSON document of `--format json`.
    fn json(&self) -> PyResult<String> {
        serde_json::to_string_pretty(&warpscope::report::Versioned::new(&self.inner))
            .map(|s| s + "\n")
            .map_err(|e| native_error("error", e.to_string()))
    }
}

/// Analyzes the launch described by `spec_json` (see `Spec`).
#[pyfunction]
fn analyze(py: Python<'_>, spec_json: &str) -> PyResult<PyAnalysis> {
    let inner = run(py, || {
        let spec = parse_spec(spec_json)?;
        let req = request(&spec)?;
        let mut an = warpscope::analyze(&req)?;
        if let Some(d) = &spec.display {
            an.source = d.clone();
        }
        Ok(an)
    })?;
    Ok(PyAnalysis { inner })
}

/// Explains one access of the launch: the site by `line` (and `column`) or by its row
/// number `site`; `warp` its warp-level execution (default: the costliest).
#[pyfunction]
#[pyo3(signature = (spec_json, line=None, column=None, site=None, warp=None))]
fn explain(
    py: Python<'_>,
    spec_json: &str,
    line: Option<u32>,
    column: Option<u32>,
    site: Option<usize>,
    warp: Option<u64>,
) -> PyResult<PyExplanation> {
    let inner = run(py, || {
        let spec = parse_spec(spec_json)?;
        let analyze = request(&spec)?;
        let site = match (line, site) {
            (_, Some(n)) => warpscope::SiteSelector::Number(n),
            (Some(0), None) => bail!("--line 0: lines are numbered from 1"),
            (Some(line), None) => warpscope::SiteSelector::Line { line, column },
            (None, None) => bail!(
                "choose the access with line=L (and column=C) or site=N (the # of analyze's table)"
            ),
        };
        let mut e = warpscope::explain(&warpscope::ExplainRequest {
            analyze,
            site,
            warp,
        })?;
        if let Some(d) = &spec.display {
            e.source = d.clone();
        }
        Ok(e)
    })?;
    Ok(PyExplanation { inner })
}

/// The compute capabilities a `cc=` list names (`"all"`, `"guide"`, `"9.0,8.0"`), as
/// `"major.minor"` strings.
#[pyfunction]
fn parse_ccs(py: Python<'_>, list: &str) -> PyResult<Vec<String>> {
    let list = list.to_string();
    run(py, move || {
        Ok(warpscope::model::arch::parse_list(&list)
            .map_err(|e| anyhow!("--cc {list}: {e}"))?
            .iter()
            .map(|a| a.cc.to_string())
            .collect())
    })
}

/// Panics inside the native code, for the test that nothing unwinds into Python.
#[pyfunction]
fn _panic_for_test(py: Python<'_>) -> PyResult<()> {
    run(py, || -> Result<()> { panic!("a deliberate panic") })
}

#[pymodule]
fn _warpscope(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("NativeError", m.py().get_type::<NativeError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_class::<PyAnalysis>()?;
    m.add_class::<PyExplanation>()?;
    m.add_function(wrap_pyfunction!(analyze, m)?)?;
    m.add_function(wrap_pyfunction!(explain, m)?)?;
    m.add_function(wrap_pyfunction!(parse_ccs, m)?)?;
    m.add_function(wrap_pyfunction!(_panic_for_test, m)?)?;
    Ok(())
}
