//! From a launch as warpscope's interpreter takes it to a real launch: the bytes of every
//! scalar parameter, the size of every pointer parameter's allocation, how to fill it.
//!
//! A pointer parameter's allocation is `--alloc NAME=ELEMENTS` when given; otherwise the
//! interpreter runs the launch (memory reads as zero, as `analyze` assumes) and the
//! allocation spans every byte the kernel touched through that parameter: offsets `0 ..
//! max(offset + width)` of the addresses `ALLOC_BASE + k·ALLOC_SPACING + offset` of its
//! allocation `k` ([`warpscope_cuda::Kernel::param_alloc`]). A kernel whose addresses depend
//! on the data it reads may touch other bytes on the GPU when memory is not zero: give
//! `--alloc` then.

use crate::error::{Error, Result};
use serde::Serialize;
use warpscope_cuda::{ir::addr, Kernel, LaunchConfig, Source};
use warpscope_model::{Space, WarpAccess};

/// How an allocation is filled before the launches.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Init {
    /// Every byte 0 (what `analyze` assumes; the default).
    Zero,
    /// Floating-point elements uniform in [0, 1); integer elements uniform in [0, 2^15)
    /// (non-negative, so small index arrays stay small — still give `--alloc` for arrays
    /// indexed by them); other types random bytes. Reproducible (fixed seed per parameter).
    Random,
    /// Element k (component k of a vector type) holds k, in the element's type.
    Iota,
}

impl Init {
    /// "zero" | "random" | "iota".
    pub fn parse(s: &str) -> Option<Init> {
        match s.trim() {
            "zero" => Some(Init::Zero),
            "random" => Some(Init::Random),
            "iota" => Some(Init::Iota),
            _ => None,
        }
    }

    /// The name as `--init` takes it.
    pub fn name(self) -> &'static str {
        match self {
            Init::Zero => "zero",
            Init::Random => "random",
            Init::Iota => "iota",
        }
    }
}

/// One `--init`: `NAME=MODE` for one pointer parameter, or `MODE` for all of them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InitRule {
    pub param: Option<String>,
    pub mode: Init,
}

/// Parses `--init` text. Errors: [`Error::Argument`] for an unknown mode.
pub fn parse_init(s: &str) -> Result<InitRule> {
    let (param, mode) = match s.split_once('=') {
        Some((n, m)) => (Some(n.trim().to_string()), m),
        None => (None, s),
    };
    let mode = Init::parse(mode).ok_or_else(|| {
        Error::Argument(format!(
            "--init {s}: expected NAME=zero|random|iota or zero|random|iota (for every pointer parameter)"
        ))
    })?;
    if param.as_deref() == Some("") {
        return Err(Error::Argument(format!("--init {s}: empty parameter name")));
    }
    Ok(InitRule { param, mode })
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
            let t = match &r.param {
                Some(p) => format!("{p}={}", r.mode.name()),
                None => r.mode.name().to_string(),
            };
            w.extend(["--init".into(), t]);
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
        self.init
            .iter()
            .rev()
            .find(|r| r.param.as_deref().map_or(true, |p| p == name))
            .map(|r| r.mode)
            .unwrap_or(Init::Zero)
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
}

/// The element type of a pointer parameter, as far as filling it needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum ElemKind {
    /// IEEE floating point of this many bytes (2, 4, 8); vector types by their component.
    Float(u8),
    /// Integer of this many bytes (1, 2, 4, 8).
    Int(u8),
    /// A structure or anything else: filled byte-wise.
    Opaque,
}

/// The component type of a pointer parameter's type text (`const float*`, `float4 *`,
/// `unsigned int*`, `struct data*`).
pub fn elem_kind(ty: &str) -> ElemKind {
    let t: Vec<&str> = ty
        .split(|c: char| c.is_whitespace() || c == '*' || c == '&')
        .filter(|w| !w.is_empty() && !["const", "volatile", "__restrict__", "struct"].contains(w))
        .collect();
    let base = t.join(" ");
    let strip_vec = |s: &str| s.trim_end_matches(|c: char| c.is_ascii_digit()).to_string();
    let b = strip_vec(&base);
    match b.as_str() {
        "float" => ElemKind::Float(4),
        "double" => ElemKind::Float(8),
        "__half" | "half" => ElemKind::Float(2),
        "char" | "signed char" | "unsigned char" | "uchar" | "int8_t" | "uint8_t" | "bool" => {
            ElemKind::Int(1)
        }
        "short" | "unsigned short" | "ushort" | "int16_t" | "uint16_t" => ElemKind::Int(2),
        "int" | "unsigned" | "unsigned int" | "uint" | "int32_t" | "uint32_t" => ElemKind::Int(4),
        "long" | "unsigned long" | "long long" | "unsigned long long" | "longlong"
        | "ulonglong" | "ulong" | "size_t" | "int64_t" | "uint64_t" | "ptrdiff_t" => {
            ElemKind::Int(8)
        }
        _ => ElemKind::Opaque,
    }
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
        elem: ElemKind,
    },
}

impl ParamPlan {
    pub fn name(&self) -> &str {
        match self {
            ParamPlan::Scalar { name, .. } | ParamPlan::Pointer { name, .. } => name,
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
    /// Bytes of all allocations.
    pub fn allocated_bytes(&self) -> u64 {
        self.params
            .iter()
            .map(|p| match p {
                ParamPlan::Pointer { bytes, .. } => *bytes,
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

/// Smallest allocation made for a parameter the kernel never touches, bytes.
pub const MIN_ALLOC_BYTES: u64 = 256;

/// Lowers the kernel of `spec` and plans its launch: scalar bytes, allocation sizes (from
/// `--alloc`, else from the interpreter's run), init modes.
///
/// Errors: [`Error::Interpreter`] for anything the front end rejects (syntax, arguments,
/// out-of-bounds accesses with `--alloc`), [`Error::Argument`] for an `--init` naming no
/// pointer parameter.
pub fn plan(spec: &LaunchSpec) -> Result<Plan> {
    let src = Source::parse(&spec.file, &spec.source, &spec.defines)?;
    let kernel = src.kernel(&spec.kernel)?;
    let cfg = kernel.configure(
        &spec.args,
        &spec.allocs,
        spec.grid,
        spec.block,
        spec.dynamic_shared_bytes,
        spec.max_steps,
    )?;
    let params = kernel.params();
    for r in &spec.init {
        if let Some(n) = &r.param {
            if !params.iter().any(|p| &p.name == n && p.is_pointer) {
                let ptrs: Vec<&str> = params
                    .iter()
                    .filter(|p| p.is_pointer)
                    .map(|p| p.name.as_str())
                    .collect();
                return Err(Error::Argument(format!(
                    "--init {n}={}: {} has no pointer parameter '{n}'; its pointer parameters: {}",
                    r.mode.name(),
                    spec.kernel,
                    if ptrs.is_empty() {
                        "none".to_string()
                    } else {
                        ptrs.join(", ")
                    }
                )));
            }
        }
    }
    let needs_run = params.iter().enumerate().any(|(i, p)| {
        p.is_pointer
            && !spec.allocs.iter().any(|(n, _)| n == &p.name)
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
        let (bytes, sizing) = match (given, range) {
            (Some(e), _) => (e.saturating_mul(p.elem_size.max(1)), Sizing::Alloc),
            (None, Some((_, end))) => (end, Sizing::Touched),
            (None, None) => (MIN_ALLOC_BYTES, Sizing::Untouched),
        };
        out.push(ParamPlan::Pointer {
            name: p.name.clone(),
            ty: p.ty.clone(),
            elem_size: p.elem_size,
            // Whole 256-byte pieces: cudaMalloc's alignment, and room for vector accesses.
            bytes: bytes.max(1).div_ceil(256) * 256,
            sizing,
            touched: range,
            init: spec.init_of(&p.name),
            elem: elem_kind(&p.ty),
        });
    }
    Ok(Plan {
        params: out,
        interpreted: needs_run,
    })
}

/// Runs the launch in the interpreter and returns, for every global allocation index `k`,
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

/// The initial contents of an allocation of `bytes` bytes of `elem` elements filled per
/// `init` (`seed` varies the random stream per parameter). [`Init::Zero`] gives an empty
/// vector (the caller zeroes device memory instead).
pub fn fill(init: Init, elem: ElemKind, bytes: u64, seed: u64) -> Result<Vec<u8>> {
    if init == Init::Zero {
        return Ok(Vec::new());
    }
    let n = bytes as usize;
    let mut v = vec![0u8; n];
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut next = move || {
        // xorshift64*: fast and good enough for test data.
        s ^= s >> 12;
        s ^= s << 25;
        s ^= s >> 27;
        s.wrapping_mul(0x2545_F491_4F6C_DD1D)
    };
    match (init, elem) {
        (Init::Iota, ElemKind::Opaque) => {
            return Err(Error::Argument(
                "--init iota needs an arithmetic element type (float, int, float4, …); this parameter points to a structure".into(),
            ))
        }
        (Init::Iota, ElemKind::Float(w)) | (Init::Iota, ElemKind::Int(w)) => {
            let w = w as usize;
            for (k, c) in v.chunks_exact_mut(w).enumerate() {
                let b: Vec<u8> = match elem {
                    ElemKind::Float(2) => half_bits(k as f64).to_le_bytes().to_vec(),
                    ElemKind::Float(4) => (k as f32).to_le_bytes().to_vec(),
                    ElemKind::Float(_) => (k as f64).to_le_bytes().to_vec(),
                    _ => (k as u64).to_le_bytes()[..w].to_vec(),
                };
                c.copy_from_slice(&b);
            }
        }
        (Init::Random, ElemKind::Float(w)) => {
            let w = w as usize;
            for c in v.chunks_exact_mut(w) {
                let u = (next() >> 11) as f64 / (1u64 << 53) as f64;
                match w {
                    2 => c.copy_from_slice(&half_bits(u).to_le_bytes()),
                    4 => c.copy_from_slice(&(u as f32).to_le_bytes()),
                    _ => c.copy_from_slice(&u.to_le_bytes()),
                }
            }
        }
        (Init::Random, ElemKind::Int(w)) => {
            let w = w as usize;
            let max = if w == 1 { 1u64 << 7 } else { 1u64 << 15 };
            for c in v.chunks_exact_mut(w) {
                let x = next() % max;
                c.copy_from_slice(&x.to_le_bytes()[..w]);
            }
        }
        (Init::Random, ElemKind::Opaque) => {
            for c in v.chunks_mut(8) {
                let x = next().to_le_bytes();
                let l = c.len();
                c.copy_from_slice(&x[..l]);
            }
        }
        (Init::Zero, _) => unreachable!("handled above"),
    }
    Ok(v)
}

/// IEEE half-precision bits of `x` (round to nearest; values here are small and finite).
fn half_bits(x: f64) -> u16 {
    if x == 0.0 {
        return 0;
    }
    let f = x as f32;
    let b = f.to_bits();
    let sign = ((b >> 16) & 0x8000) as u16;
    let exp = ((b >> 23) & 0xff) as i32 - 127 + 15;
    let man = b & 0x7f_ffff;
    if exp >= 31 {
        return sign | 0x7c00;
    }
    if exp <= 0 {
        // Subnormal halves.
        let m = (man | 0x80_0000) >> (14 - exp);
        return sign | ((m + 0x1000) >> 13) as u16;
    }
    let h = ((exp as u32) << 10) | (man >> 13);
    let round = (man >> 12) & 1;
    sign | (h + round) as u16
}
