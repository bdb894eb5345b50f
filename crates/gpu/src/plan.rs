//! From a launch as warpscope's source front end takes it to a real launch: the bytes of
//! every scalar parameter, the size of every pointer parameter's allocation, how to fill it.
//!
//! A pointer parameter's allocation is `--alloc NAME=ELEMENTS` when given, else the element
//! count of its `--init NAME=file:PATH`; otherwise the front end runs the launch (memory
//! holding what `--init` puts there, as `analyze` reads it) and the allocation spans every
//! byte the kernel touched through that parameter: offsets `0 .. max(offset + width)` of the
//! addresses `ALLOC_BASE + k·ALLOC_SPACING + offset` of its allocation `k`
//! ([`warpscope_cuda::Kernel::param_alloc`]).

use crate::error::{Error, Result};
use serde::Serialize;
use warpscope_cuda::{ir::addr, Kernel, LaunchConfig, Source};
use warpscope_model::texture::TextureDesc;
use warpscope_model::{Space, WarpAccess};

/// How an allocation is filled before the launches: `--init` rules and modes, shared with
/// `analyze` (see [`warpscope_init`] for the modes and their values).
pub use warpscope_init::{ElemType, Mode as Init, Rule as InitRule};

/// Parses `--init` text. Errors: [`Error::Argument`] for an unknown mode or a malformed
/// rule (the message names the flag and the accepted forms).
pub fn parse_init(s: &str) -> Result<InitRule> {
    InitRule::parse(s).map_err(|e| Error::Argument(e.0))
}

/// Parses grid or block dimensions `X`, `X,Y` or `X,Y,Z` (`x` also separates). Errors name
/// the flag `--{what}`.
pub fn parse_dims(s: &str, what: &str) -> Result<[u32; 3]> {
    let parts: Vec<&str> = s.split([',', 'x']).map(str::trim).collect();
    if parts.is_empty() || parts.len() > 3 {
        return Err(Error::Argument(format!(
            "--{what} {s}: expected X, X,Y or X,Y,Z"
        )));
    }
    let mut d = [1u32; 3];
    for (i, p) in parts.iter().enumerate() {
        d[i] = p.parse().map_err(|_| {
            Error::Argument(format!("--{what} {s}: '{p}' is not a positive integer"))
        })?;
        if d[i] == 0 {
            return Err(Error::Argument(format!(
                "--{what} {s}: dimensions must be at least 1"
            )));
        }
    }
    Ok(d)
}

/// Parses `NAME=VALUE` pairs of flag `--{flag}`.
pub fn parse_pairs(v: &[String], flag: &str) -> Result<Vec<(String, String)>> {
    v.iter()
        .map(|s| match s.split_once('=') {
            Some((n, x)) if !n.trim().is_empty() => {
                Ok((n.trim().to_string(), x.trim().to_string()))
            }
            _ => Err(Error::Argument(format!(
                "--{flag} {s}: expected NAME=VALUE"
            ))),
        })
        .collect()
}

/// A kernel launch as the command line gives it.
#[derive(Clone, Debug, PartialEq)]
pub struct LaunchSpec {
    /// Path of the `.cu` file (as shown in messages).
    pub file: String,
    /// Its text.
    pub source: String,
    /// Kernel name, with template arguments for a template (`stride<float>`).
    pub kernel: String,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    /// Scalar arguments (parameter name, value text).
    pub args: Vec<(String, String)>,
    /// Allocation sizes of pointer parameters, in elements (parameter name, elements).
    pub allocs: Vec<(String, u64)>,
    /// `-D` macros.
    pub defines: Vec<String>,
    /// Bytes of `extern __shared__` memory per block.
    pub dynamic_shared_bytes: u64,
    /// The interpreter's loop limit (for sizing runs).
    pub max_steps: u64,
    /// `--init` rules, later ones win.
    pub init: Vec<InitRule>,
    /// `--texture` descriptions of texture and surface object parameters
    /// ([`warpscope_model::texture::SPEC_SYNTAX`]), as written.
    pub textures: Vec<String>,
}

impl LaunchSpec {
    /// The launch as command-line words (`FILE --kernel K --grid X,Y,Z …`), which
    /// [`split_words`] splits back; used for the batch file `verify` hands to the profiled
    /// child process.
    pub fn to_words(&self) -> Vec<String> {
        let mut w = vec![self.file.clone(), "--kernel".into(), self.kernel.clone()];
        let d = |x: [u32; 3]| format!("{},{},{}", x[0], x[1], x[2]);
        w.extend([
            "--grid".into(),
            d(self.grid),
            "--block".into(),
            d(self.block),
        ]);
        for (n, v) in &self.args {
            w.extend(["--arg".into(), format!("{n}={v}")]);
        }
        for (n, e) in &self.allocs {
            w.extend(["--alloc".into(), format!("{n}={e}")]);
        }
        for def in &self.defines {
            w.extend(["-D".into(), def.clone()]);
        }
        if self.dynamic_shared_bytes > 0 {
            w.extend([
                "--dynamic-smem".into(),
                self.dynamic_shared_bytes.to_string(),
            ]);
        }
        for r in &self.init {
            w.extend(["--init".into(), r.to_string()]);
        }
        for t in &self.textures {
            w.extend(["--texture".into(), t.clone()]);
        }
        w
    }

    /// [`LaunchSpec::to_words`] as one line, each word quoted where [`split_words`] needs it.
    pub fn to_line(&self) -> String {
        self.to_words()
            .iter()
            .map(|w| quote(w))
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// "kernel s=1;n=4" — the kernel and its scalar arguments, for tables.
    pub fn label(&self) -> String {
        let args: Vec<String> = self.args.iter().map(|(n, v)| format!("{n}={v}")).collect();
        if args.is_empty() {
            self.kernel.clone()
        } else {
            format!("{} {}", self.kernel, args.join(";"))
        }
    }

    /// The init mode of pointer parameter `name`: the last matching rule, else zero.
    pub fn init_of(&self, name: &str) -> Init {
        warpscope_init::mode_for(&self.init, name)
    }
}

fn quote(w: &str) -> String {
    if !w.is_empty()
        && w.chars()
            .all(|c| c.is_ascii_alphanumeric() || "_-.,/=:+@%".contains(c))
    {
        w.to_string()
    } else {
        format!("'{}'", w.replace('\'', "'\\''"))
    }
}

/// Splits a batch-file line into words as a POSIX shell would for plain words, 'single' and
/// "double" quotes and backslash escapes (no variables, no globs). A `#` starting a word
/// begins a comment. Errors: an unterminated quote.
pub fn split_words(line: &str) -> Result<Vec<String>> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '#' if !in_word => break,
            c if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            '\'' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(x) => cur.push(x),
                        None => return Err(Error::Argument(format!("unterminated ' in: {line}"))),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(x) => cur.push(x),
                            None => {
                                return Err(Error::Argument(format!("unterminated \" in: {line}")))
                            }
                        },
                        Some(x) => cur.push(x),
                        None => return Err(Error::Argument(format!("unterminated \" in: {line}"))),
                    }
                }
            }
            '\\' => {
                in_word = true;
                if let Some(x) = chars.next() {
                    cur.push(x);
                }
            }
            c => {
                in_word = true;
                cur.push(c);
            }
        }
    }
    if in_word {
        words.push(cur);
    }
    Ok(words)
}

/// Where a pointer parameter's allocation size comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Sizing {
    /// `--alloc NAME=ELEMENTS`.
    Alloc,
    /// The bytes the interpreter saw the kernel touch.
    Touched,
    /// Never touched: a minimal allocation.
    Untouched,
    /// `--init NAME=file:PATH`: the file's elements.
    File,
}

/// One kernel parameter of a planned launch.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum ParamPlan {
    /// A scalar: the bytes passed.
    Scalar {
        name: String,
        ty: String,
        bytes: Vec<u8>,
    },
    /// A texture or surface object (`--texture`): made on the GPU, its handle passed.
    Texture {
        name: String,
        desc: TextureDesc,
        /// Whether the kernel declares it a `cudaSurfaceObject_t`.
        surface: bool,
        /// Whether the kernel fetches it with `tex1DLayered`/`tex2DLayered`.
        layered: bool,
    },
    /// A pointer: its allocation.
    Pointer {
        name: String,
        ty: String,
        /// Bytes of one element.
        elem_size: u64,
        /// Bytes to allocate (≥ 1).
        bytes: u64,
        sizing: Sizing,
        /// Lowest and one-past-highest byte offset the interpreter saw touched, when it ran.
        touched: Option<(u64, u64)>,
        init: Init,
        elem: ElemType,
        /// The initial bytes per offset (`init` resolved for this parameter).
        #[serde(skip)]
        contents: warpscope_init::Contents,
    },
}

impl ParamPlan {
    pub fn name(&self) -> &str {
        match self {
            ParamPlan::Scalar { name, .. }
            | ParamPlan::Pointer { name, .. }
            | ParamPlan::Texture { name, .. } => name,
        }
    }
}

/// A launch ready to run: one entry per kernel parameter, in order.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Plan {
    pub params: Vec<ParamPlan>,
    /// Whether the interpreter ran to size allocations.
    pub interpreted: bool,
}

impl Plan {
    /// Bytes of all allocations and textures.
    pub fn allocated_bytes(&self) -> u64 {
        self.params
            .iter()
            .map(|p| match p {
                ParamPlan::Pointer { bytes, .. } => *bytes,
                ParamPlan::Texture { desc, .. } => texture_bytes(desc),
                _ => 0,
            })
            .sum()
    }

    /// `--alloc NAME=ELEMENTS` for every pointer parameter (elements rounded up), so that a
    /// second run of the same launch needs no interpretation.
    pub fn alloc_elements(&self) -> Vec<(String, u64)> {
        self.params
            .iter()
            .filter_map(|p| match p {
                ParamPlan::Pointer {
                    name,
                    elem_size,
                    bytes,
                    ..
                } => Some((name.clone(), bytes.div_ceil((*elem_size).max(1)))),
                _ => None,
            })
            .collect()
    }
}

/// Bytes of a texture's storage: its texels, or `pitch × height` for pitched memory.
pub fn texture_bytes(t: &TextureDesc) -> u64 {
    match t.kind {
        warpscope_model::texture::Kind::Pitch2d => t.pitch.saturating_mul(t.size[1]),
        _ => t
            .size
            .iter()
            .product::<u64>()
            .saturating_mul(t.texel_bytes as u64),
    }
}

/// Parses the `--texture` descriptions of `spec`.
///
/// Errors: [`Error::Argument`] naming the description and what is wrong in it.
pub fn textures(spec: &LaunchSpec) -> Result<Vec<TextureDesc>> {
    spec.textures
        .iter()
        .map(|t| {
            t.parse::<TextureDesc>()
                .map_err(|e| Error::Argument(format!("--texture {t}: {e}")))
        })
        .collect()
}

/// How kernel `kernel` (a name, template arguments ignored) of `source` uses its texture
/// parameter `name`: (declared `cudaSurfaceObject_t`, fetched with
/// `tex1DLayered`/`tex2DLayered`). The driver needs both to make the object (a surface object,
/// a layered array); PTX does not tell them apart, as both are 64-bit handles. Only the
/// kernel's own declaration and body are read (other kernels may use the same name); where
/// the kernel is not found, the whole source.
pub fn texture_usage(source: &str, kernel: &str, name: &str) -> (bool, bool) {
    let text = kernel_text(source, kernel).unwrap_or(source);
    let name = regex::escape(name);
    let surface = regex::Regex::new(&format!(r"\bcudaSurfaceObject_t\s+(const\s+)?{name}\b"));
    let layered = regex::Regex::new(&format!(
        r"\btex[12]DLayered(Lod|Grad)?\s*(<[^>]*>)?\s*\(\s*{name}\b"
    ));
    (
        surface.is_ok_and(|r| r.is_match(text)),
        layered.is_ok_and(|r| r.is_match(text)),
    )
}

/// The text of `__global__` function `kernel` from its name to the brace closing its body.
fn kernel_text<'s>(source: &'s str, kernel: &str) -> Option<&'s str> {
    let base = kernel.split('<').next().unwrap_or(kernel).trim();
    let head = regex::Regex::new(&format!(
        r"__global__[^;{{}}]*?\b{}\s*\(",
        regex::escape(base)
    ))
    .ok()?;
    let start = head.find(source)?.start();
    let open = start + source[start..].find('{')?;
    let mut depth = 0usize;
    for (i, c) in source[open..].char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(&source[start..open + i + 1]);
                }
            }
            _ => {}
        }
    }
    None
}

/// Smallest allocation made for a parameter the kernel never touches, bytes.
pub const MIN_ALLOC_BYTES: u64 = 256;

/// Lowers the kernel of `spec` and plans its launch: scalar bytes, allocation sizes (from
/// `--alloc`, else an `--init` file's, else the front end's run), initial contents.
///
/// Errors: [`Error::Interpreter`] for anything the front end rejects (syntax, arguments,
/// out-of-bounds accesses with `--alloc`, an `--init` naming no pointer parameter or a file
/// that does not fit the parameter).
pub fn plan(spec: &LaunchSpec) -> Result<Plan> {
    let src = Source::parse(&spec.file, &spec.source, &spec.defines)?;
    let kernel = src.kernel(&spec.kernel)?;
    let mut cfg = kernel.configure(
        &spec.args,
        &spec.allocs,
        spec.grid,
        spec.block,
        spec.dynamic_shared_bytes,
        spec.max_steps,
    )?;
    let initial = kernel.apply_init(&mut cfg, &spec.init, &spec.allocs)?;
    let params = kernel.params();
    let sized_by_file = |i: usize| {
        initial
            .get(i)
            .and_then(|x| x.as_ref())
            .and_then(|x| x.file_elements)
    };
    let needs_run = params.iter().enumerate().any(|(i, p)| {
        p.is_pointer
            && !spec.allocs.iter().any(|(n, _)| n == &p.name)
            && sized_by_file(i).is_none()
            && kernel.param_alloc(i).is_some()
    });
    let touched = if needs_run {
        Some(touched_ranges(&kernel, &cfg)?)
    } else {
        None
    };
    let mut out = Vec::new();
    for (i, p) in params.iter().enumerate() {
        if !p.is_pointer {
            let bytes = kernel.scalar_arg_bytes(&cfg, i).ok_or_else(|| {
                Error::Argument(format!(
                    "parameter '{}' ({}) cannot be passed",
                    p.name, p.ty
                ))
            })?;
            out.push(ParamPlan::Scalar {
                name: p.name.clone(),
                ty: p.ty.clone(),
                bytes,
            });
            continue;
        }
        let k = kernel.param_alloc(i);
        let range = match (&touched, k) {
            (Some(t), Some(k)) => t.get(k).copied().flatten(),
            _ => None,
        };
        let given = spec
            .allocs
            .iter()
            .rev()
            .find(|(n, _)| n == &p.name)
            .map(|(_, e)| *e);
        let (bytes, sizing) = match (given, sized_by_file(i), range) {
            (Some(e), _, _) => (e.saturating_mul(p.elem_size.max(1)), Sizing::Alloc),
            (None, Some(e), _) => (e.saturating_mul(p.elem_size.max(1)), Sizing::File),
            (None, None, Some((_, end))) => (end, Sizing::Touched),
            (None, None, None) => (MIN_ALLOC_BYTES, Sizing::Untouched),
        };
        let init =
            initial.get(i).cloned().flatten().ok_or_else(|| {
                Error::Argument(format!("parameter '{}' has no allocation", p.name))
            })?;
        out.push(ParamPlan::Pointer {
            name: p.name.clone(),
            ty: p.ty.clone(),
            elem_size: p.elem_size,
            // Whole 256-byte pieces: cudaMalloc's alignment, and room for vector accesses.
            bytes: bytes.max(1).div_ceil(256) * 256,
            sizing,
            touched: range,
            init: init.mode,
            elem: init.elem,
            contents: init.contents,
        });
    }
    Ok(Plan {
        params: out,
        interpreted: needs_run,
    })
}

/// Runs the launch through the source front end and returns, for every global allocation index `k`,
/// the lowest and one-past-highest byte offset any access touched (`None` if untouched).
///
/// Errors: what [`Kernel::run`] reports.
pub fn touched_ranges(kernel: &Kernel, cfg: &LaunchConfig) -> Result<Vec<Option<(u64, u64)>>> {
    let mut r: Vec<Option<(u64, u64)>> = Vec::new();
    kernel.run(cfg, &mut |_site, a: &WarpAccess| {
        if a.space != Space::Global {
            return;
        }
        for lane in 0..32 {
            if a.mask & (1 << lane) == 0 {
                continue;
            }
            let x = a.addrs[lane];
            if x < addr::ALLOC_BASE || (x >> addr::SPACE_SHIFT) != 0 {
                continue;
            }
            let k = ((x - addr::ALLOC_BASE) / addr::ALLOC_SPACING) as usize;
            let off = (x - addr::ALLOC_BASE) % addr::ALLOC_SPACING;
            if r.len() <= k {
                r.resize(k + 1, None);
            }
            let end = off + a.width as u64;
            r[k] = Some(match r[k] {
                Some((lo, hi)) => (lo.min(off), hi.max(end)),
                None => (off, end),
            });
        }
    })?;
    Ok(r)
}
