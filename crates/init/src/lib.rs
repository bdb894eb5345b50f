//! The initial contents of a launch's allocations: what `--init` puts in the memory a pointer
//! parameter points to, for `analyze`, `explain` (both front ends, on the SIMT executor) and
//! `verify` (real GPU buffers), so that data-dependent kernels — gathers, histograms, CSR —
//! are analyzed on their data rather than on zeros.
//!
//! A rule is `NAME=MODE` for one pointer parameter or `MODE` for all of them; the last rule
//! that names a parameter wins. Modes ([`Mode`]):
//!
//! - `zero`: every byte 0 (the default; what the executors assume without `--init`).
//! - `iota`: component `k` of the array holds `k` in its type (`float` `k.0`, `int` `k`);
//!   a vector type counts components (`float4` element 1 holds 4, 5, 6, 7).
//! - `random[:SEED]`: reproducible pseudo-random values, a function of (SEED, component
//!   index): floating-point components uniform in [0, 1); integer components uniform in
//!   [0, N) where N is the parameter's `--alloc` element count (so an index array that
//!   indexes an array of its own length stays in bounds), or [`DEFAULT_RANDOM_BOUND`]
//!   without `--alloc`, never more than the type holds (128 for `char`, 256 for `unsigned
//!   char`); structures get random bytes. SEED defaults to the parameter's position + 1 (so
//!   two parameters differ); the same SEED gives the same values on every run and machine.
//! - `const:V`: every component `V` (an integer for integer types, in range; any number for
//!   floating point).
//! - `file:PATH`: a NumPy `.npy` array whose dtype is the element type (a signed/unsigned
//!   difference of the same width is accepted), or raw little-endian bytes of the element
//!   type; the file's element count must equal `--alloc`, and sizes the allocation when there
//!   is none.
//!
//! [`Contents`] computes the bytes at any offset without materializing the allocation, so an
//! allocation without `--alloc` (unbounded in the executors) holds the pattern everywhere.

mod elem;
mod file;
pub mod fuzzing;

pub use elem::{ElemType, Scalar};

use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;

/// What went wrong in an `--init` rule, with the rule and what to do.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Error(pub String);

pub type Result<T> = std::result::Result<T, Error>;

/// Integer components of `random` without `--alloc` are uniform in [0, this).
pub const DEFAULT_RANDOM_BOUND: u64 = 1 << 15;

/// How an allocation is filled.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Mode {
    Zero,
    Iota,
    /// `random` or `random:SEED`.
    Random {
        seed: Option<u64>,
    },
    /// `const:V`, the number's text as given (checked to be a number).
    Const(String),
    /// `file:PATH` (relative to the working folder).
    File(PathBuf),
}

const MODES: &str = "zero, iota, random[:SEED], const:V or file:PATH";

impl Mode {
    /// Parses `zero`, `iota`, `random`, `random:SEED`, `const:V`, `file:PATH`.
    ///
    /// Errors: anything else, a SEED that is not a non-negative integer, a V that is not a
    /// number, an empty PATH.
    pub fn parse(s: &str) -> Result<Mode> {
        let t = s.trim();
        let bad = |why: &str| Error(format!("'{t}': {why}"));
        Ok(match t {
            "zero" => Mode::Zero,
            "iota" => Mode::Iota,
            "random" => Mode::Random { seed: None },
            _ => {
                if let Some(seed) = t.strip_prefix("random:") {
                    let seed = parse_int(seed)
                        .filter(|v| *v >= 0 && *v <= u64::MAX as i128)
                        .ok_or_else(|| {
                            bad("the SEED of random:SEED must be a non-negative integer")
                        })?;
                    Mode::Random {
                        seed: Some(seed as u64),
                    }
                } else if let Some(v) = t.strip_prefix("const:") {
                    if parse_int(v).is_none() && parse_float(v).is_none() {
                        return Err(bad("the V of const:V must be a number (7, -1, 0x10, 2.5)"));
                    }
                    Mode::Const(v.trim().to_string())
                } else if let Some(p) = t.strip_prefix("file:") {
                    if p.trim().is_empty() {
                        return Err(bad("file:PATH needs a path"));
                    }
                    Mode::File(PathBuf::from(p.trim()))
                } else {
                    return Err(Error(format!("'{t}' is not a mode ({MODES})")));
                }
            }
        })
    }
}

impl fmt::Display for Mode {
    /// The mode as `--init` takes it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Mode::Zero => write!(f, "zero"),
            Mode::Iota => write!(f, "iota"),
            Mode::Random { seed: None } => write!(f, "random"),
            Mode::Random { seed: Some(s) } => write!(f, "random:{s}"),
            Mode::Const(v) => write!(f, "const:{v}"),
            Mode::File(p) => write!(f, "file:{}", p.display()),
        }
    }
}

impl serde::Serialize for Mode {
    /// As its `--init` text (`random:7`).
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// One `--init`: `NAME=MODE` for pointer parameter NAME, or `MODE` (`param: None`) for every
/// pointer parameter.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rule {
    pub param: Option<String>,
    pub mode: Mode,
}

impl Rule {
    /// Parses `--init` text.
    ///
    /// Errors: a malformed mode (see [`Mode::parse`]) or parameter name, each naming the
    /// flag and the accepted forms.
    pub fn parse(s: &str) -> Result<Rule> {
        let t = s.trim();
        let flag = |e: Error| {
            Error(format!(
                "--init {s}: {}; write NAME=MODE, or MODE for every pointer parameter",
                e.0
            ))
        };
        // A mode that carries text (a path may hold '=') is a rule for every parameter.
        let global = t.starts_with("file:") || t.starts_with("const:") || !t.contains('=');
        if global {
            return Ok(Rule {
                param: None,
                mode: Mode::parse(t).map_err(flag)?,
            });
        }
        let (name, mode) = t.split_once('=').unwrap_or((t, ""));
        let name = name.trim();
        let ident = !name.is_empty()
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            && !name.starts_with(|c: char| c.is_ascii_digit());
        if !ident {
            return Err(flag(Error(format!("'{name}' is not a parameter name"))));
        }
        Ok(Rule {
            param: Some(name.to_string()),
            mode: Mode::parse(mode).map_err(flag)?,
        })
    }
}

impl std::str::FromStr for Rule {
    type Err = Error;
    fn from_str(s: &str) -> Result<Rule> {
        Rule::parse(s)
    }
}

impl fmt::Display for Rule {
    /// The rule as `--init` takes it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.param {
            Some(p) => write!(f, "{p}={}", self.mode),
            None => write!(f, "{}", self.mode),
        }
    }
}

/// The rule that applies to pointer parameter `name`: the last that names it or names none.
pub fn rule_for<'a>(rules: &'a [Rule], name: &str) -> Option<&'a Rule> {
    rules
        .iter()
        .rev()
        .find(|r| r.param.as_deref().is_none_or(|p| p == name))
}

/// The mode of pointer parameter `name` ([`Mode::Zero`] when no rule applies).
pub fn mode_for(rules: &[Rule], name: &str) -> Mode {
    rule_for(rules, name)
        .map(|r| r.mode.clone())
        .unwrap_or(Mode::Zero)
}

/// The bytes of an allocation at any offset.
#[derive(Clone, Default, PartialEq)]
pub enum Contents {
    /// Every byte 0.
    #[default]
    Zero,
    /// These bytes from offset 0 (a file's); bytes past the end read 0.
    Bytes(Arc<[u8]>),
    /// A pattern computed per component.
    Pattern(Pattern),
}

impl fmt::Debug for Contents {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Contents::Zero => write!(f, "Zero"),
            Contents::Bytes(b) => write!(f, "Bytes({} bytes)", b.len()),
            Contents::Pattern(p) => write!(f, "{p:?}"),
        }
    }
}

/// `iota`, `random` or `const` over components of one type.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Pattern {
    fill: Fill,
    /// The component type; `None`: 8-byte words of random bytes (a structure).
    unit: Option<Scalar>,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Fill {
    Iota,
    /// Integers uniform in [0, bound).
    Random {
        seed: u64,
        bound: u64,
    },
    /// The little-endian bytes of one component.
    Const(u64),
}

impl Contents {
    /// Whether every byte is 0.
    pub fn is_zero(&self) -> bool {
        matches!(self, Contents::Zero)
    }

    /// Bytes held when they come from a file (the allocation's size when no `--alloc`
    /// gives one).
    pub fn file_bytes(&self) -> Option<u64> {
        match self {
            Contents::Bytes(b) => Some(b.len() as u64),
            _ => None,
        }
    }

    /// Writes the bytes at `offset .. offset + out.len()` of the allocation into `out`.
    pub fn read(&self, offset: u64, out: &mut [u8]) {
        match self {
            Contents::Zero => out.fill(0),
            Contents::Bytes(b) => {
                out.fill(0);
                let start = (offset as usize).min(b.len());
                let end = (start + out.len()).min(b.len());
                out[..end - start].copy_from_slice(&b[start..end]);
            }
            Contents::Pattern(p) => {
                let w = p.unit.map_or(8, |s| s.bytes());
                let end = offset + out.len() as u64;
                let mut j = offset / w;
                while j * w < end {
                    let v = p.component(j).to_le_bytes();
                    for k in 0..w {
                        let at = j * w + k;
                        if at >= offset && at < end {
                            out[(at - offset) as usize] = v[k as usize];
                        }
                    }
                    j += 1;
                }
            }
        }
    }

    /// The first `bytes` bytes (for a real buffer).
    pub fn to_vec(&self, bytes: u64) -> Vec<u8> {
        let mut v = vec![0u8; bytes as usize];
        self.read(0, &mut v);
        v
    }
}

/// SplitMix64's finalizer over (seed, index): a counter-based generator, so that any
/// component is computed without the ones before it.
fn mix(seed: u64, j: u64) -> u64 {
    let mut z = seed
        .wrapping_mul(0x9E37_79B9_7F4A_7C15)
        .wrapping_add(j.wrapping_mul(0xD1B5_4A32_D192_ED03))
        .wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The bits of `x` in scalar `s` (floats rounded to nearest; integers wrapped).
fn encode(s: Scalar, x: f64, int: u64) -> u64 {
    match s {
        Scalar::F16 => half::f16::from_f64(x).to_bits() as u64,
        Scalar::Bf16 => half::bf16::from_f64(x).to_bits() as u64,
        Scalar::F32 => (x as f32).to_bits() as u64,
        Scalar::F64 => x.to_bits(),
        Scalar::Int { bytes, .. } if bytes < 8 => int & ((1u64 << (8 * bytes)) - 1),
        Scalar::Int { .. } => int,
    }
}

impl Pattern {
    /// The little-endian bits of component `j`.
    fn component(&self, j: u64) -> u64 {
        let Some(s) = self.unit else {
            return match self.fill {
                Fill::Random { seed, .. } => mix(seed, j),
                _ => 0,
            };
        };
        match self.fill {
            Fill::Iota => encode(s, j as f64, j),
            Fill::Const(bits) => bits,
            Fill::Random { seed, bound } => {
                let h = mix(seed, j);
                match s {
                    // Exactly representable fractions, so no value rounds up to 1.
                    Scalar::F16 => encode(s, (h >> 53) as f64 / 2048.0, 0),
                    Scalar::Bf16 => encode(s, (h >> 56) as f64 / 256.0, 0),
                    Scalar::F32 => encode(s, (h >> 40) as f64 / (1u64 << 24) as f64, 0),
                    Scalar::F64 => encode(s, (h >> 11) as f64 / (1u64 << 53) as f64, 0),
                    Scalar::Int { .. } => encode(s, 0.0, h % bound.max(1)),
                }
            }
        }
    }
}

/// A kernel parameter as the rules see it.
#[derive(Clone, Debug)]
pub struct Param<'a> {
    pub name: &'a str,
    /// Its C type (`const float*`, `float const*`, `int`).
    pub c_type: &'a str,
    pub pointer: bool,
    /// Bytes of the element a pointer points to, as the front end computed it.
    pub elem_bytes: u64,
}

/// What a pointer parameter's allocation starts as.
#[derive(Clone, Debug, PartialEq)]
pub struct Initial {
    /// The rule's mode ([`Mode::Zero`] when none applies).
    pub mode: Mode,
    pub elem: ElemType,
    pub contents: Contents,
    /// The file's element count when a file fills it and no `--alloc` sizes it: the
    /// allocation's size.
    pub file_elements: Option<u64>,
}

/// Resolves `rules` against the parameters of `kernel` (in order), with the `--alloc` sizes
/// in elements: one entry per parameter, `Some` for pointers.
///
/// Errors: a rule naming no pointer parameter (the pointer parameters are listed); for
/// a parameter, what [`contents`] reports.
pub fn resolve(
    rules: &[Rule],
    kernel: &str,
    params: &[Param],
    allocs: &[(String, u64)],
) -> Result<Vec<Option<Initial>>> {
    for r in rules {
        let Some(n) = &r.param else { continue };
        if !params.iter().any(|p| p.pointer && p.name == n) {
            let ptrs: Vec<&str> = params
                .iter()
                .filter(|p| p.pointer)
                .map(|p| p.name)
                .collect();
            let what = if params.iter().any(|p| p.name == n) {
                format!("'{n}' is a scalar parameter of {kernel} (give it with --arg)")
            } else {
                format!("{kernel} has no parameter '{n}'")
            };
            return Err(Error(format!(
                "--init {r}: {what}; its pointer parameters: {}",
                if ptrs.is_empty() {
                    "none".to_string()
                } else {
                    ptrs.join(", ")
                }
            )));
        }
    }
    params
        .iter()
        .enumerate()
        .map(|(position, p)| {
            if !p.pointer {
                return Ok(None);
            }
            let elem = ElemType::of_pointer(p.c_type, p.elem_bytes);
            let alloc = allocs
                .iter()
                .rev()
                .find(|(n, _)| n == p.name)
                .map(|(_, e)| *e);
            let Some(rule) = rule_for(rules, p.name) else {
                return Ok(Some(Initial {
                    mode: Mode::Zero,
                    elem,
                    contents: Contents::Zero,
                    file_elements: None,
                }));
            };
            let flag = match &rule.param {
                Some(_) => format!("--init {rule}"),
                None => format!("--init {rule} (for {})", p.name),
            };
            let (contents, file_elements) = contents(&rule.mode, p.name, &elem, position, alloc)
                .map_err(|e| Error(format!("{flag}: {}", e.0)))?;
            Ok(Some(Initial {
                mode: rule.mode.clone(),
                elem,
                contents,
                file_elements: file_elements.filter(|_| alloc.is_none()),
            }))
        })
        .collect()
}

/// The contents `mode` gives pointer parameter `name` (at `position` in the parameter list,
/// the default seed's source) of element type `elem` with `alloc` elements when `--alloc`
/// gave them; and a file's element count.
///
/// Errors (without the flag; [`resolve`] adds it): `iota`/`const` for a structure, a
/// `const` value that is not of the type or out of its range, an unreadable or malformed
/// file, a `.npy` dtype other than the element type, a file whose element count differs
/// from `alloc` (both named).
pub fn contents(
    mode: &Mode,
    name: &str,
    elem: &ElemType,
    position: usize,
    alloc: Option<u64>,
) -> Result<(Contents, Option<u64>)> {
    let need_type = |m: &str| {
        Error(format!(
            "{m} needs an arithmetic element type (float, int, float4, …), but '{name}' points to {}",
            elem.describe()
        ))
    };
    let pattern = |fill, unit| Ok((Contents::Pattern(Pattern { fill, unit }), None));
    match mode {
        Mode::Zero => Ok((Contents::Zero, None)),
        Mode::Iota => match elem.scalar {
            Some(s) => pattern(Fill::Iota, Some(s)),
            None => Err(need_type("iota")),
        },
        Mode::Random { seed } => {
            let seed = seed.unwrap_or(position as u64 + 1);
            let bound = match elem.scalar {
                Some(Scalar::Int { bytes, signed }) => {
                    let bits = 8 * bytes as u32 - signed as u32;
                    let type_max = if bits >= 64 { u64::MAX } else { 1u64 << bits };
                    alloc.unwrap_or(DEFAULT_RANDOM_BOUND).clamp(1, type_max)
                }
                _ => 1,
            };
            pattern(Fill::Random { seed, bound }, elem.scalar)
        }
        Mode::Const(v) => {
            let s = elem.scalar.ok_or_else(|| need_type("const"))?;
            let bits = const_bits(v, s).ok_or_else(|| {
                Error(format!(
                    "{v} is not a value of '{name}''s element type, {}",
                    s.describe()
                ))
            })?;
            pattern(Fill::Const(bits), Some(s))
        }
        Mode::File(path) => {
            let loaded = file::load(path, elem).map_err(Error)?;
            if let Some(a) = alloc {
                if a != loaded.elements {
                    return Err(Error(format!(
                        "{} holds {} elements of {}, but --alloc {name}={a} asks for {a}; make them agree, or drop --alloc {name} (the file then sizes the allocation)",
                        path.display(),
                        loaded.elements,
                        elem.name
                    )));
                }
            }
            Ok((Contents::Bytes(loaded.bytes.into()), Some(loaded.elements)))
        }
    }
}

/// The contents of a `file:` data file from its bytes `data`, for a parameter whose elements
/// are `elem`: a NumPy `.npy` array (told apart by its magic string; its dtype must be the
/// element type) or raw little-endian elements. Returns the little-endian bytes and their
/// count in elements of `elem`.
///
/// Errors: a malformed or truncated `.npy` (a header over 1 MiB, a
/// shape whose element or byte count passes 2^64, fewer data bytes than the shape says), a
/// dtype other than the element type, a size that is not whole elements; the message names
/// no path (the caller adds it, as [`contents`] does).
pub fn read_data(data: Vec<u8>, elem: &ElemType) -> Result<(Vec<u8>, u64)> {
    let loaded = file::from_bytes(data, elem).map_err(Error)?;
    Ok((loaded.bytes, loaded.elements))
}

/// The bits of `const:V` in scalar `s`, if V is a value of it.
fn const_bits(v: &str, s: Scalar) -> Option<u64> {
    match s {
        Scalar::Int { bytes, signed } => {
            let x = parse_int(v).or_else(|| {
                parse_float(v)
                    .filter(|f| f.fract() == 0.0 && f.abs() < 1e30)
                    .map(|f| f as i128)
            })?;
            let bits = 8 * bytes as u32;
            let (lo, hi) = if signed {
                (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
            } else {
                (0, (1i128 << bits) - 1)
            };
            (lo..=hi)
                .contains(&x)
                .then(|| encode(s, 0.0, x as i64 as u64))
        }
        _ => {
            let x = parse_float(v).or_else(|| parse_int(v).map(|i| i as f64))?;
            Some(encode(s, x, 0))
        }
    }
}

/// An integer literal: decimal or `0x` hex, optional sign, C suffixes `u`, `l`.
fn parse_int(v: &str) -> Option<i128> {
    let v = v.trim();
    let (neg, body) = match v.strip_prefix('-') {
        Some(b) => (true, b),
        None => (false, v.strip_prefix('+').unwrap_or(v)),
    };
    let body = body.trim_end_matches(['u', 'U', 'l', 'L']);
    let mag = match body.strip_prefix("0x").or_else(|| body.strip_prefix("0X")) {
        Some(h) => u64::from_str_radix(h, 16).ok()?,
        None if !body.is_empty() && body.bytes().all(|b| b.is_ascii_digit()) => {
            body.parse::<u64>().ok()?
        }
        None => return None,
    } as i128;
    Some(if neg { -mag } else { mag })
}

/// A floating-point literal (`2.5`, `1e-3`, `2.0f`).
fn parse_float(v: &str) -> Option<f64> {
    let v = v.trim().trim_end_matches(['f', 'F']);
    let x: f64 = v.parse().ok()?;
    x.is_finite().then_some(x)
}

#[cfg(test)]
mod tests;
