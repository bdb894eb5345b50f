//! Compiling a `.cu` file with NVRTC (the runtime compiler, loaded at run time through
//! cudarc; cargo feature `nvrtc`): to a CUBIN for a GPU's own architecture
//! (`--gpu-architecture=sm_XY`, machine code, no PTX JIT; [`compile`], what `warpscope run`,
//! `verify` and `calibrate` load), or to PTX for `compute_XY` ([`compile_ptx`], the compiled
//! path's compiler when no nvcc is found). Kernels are named as warpscope takes them —
//! `offset<float>` instantiates the template — through NVRTC name expressions
//! (`nvrtcAddNameExpression`, then `nvrtcGetLoweredName` gives the mangled symbol the driver
//! looks up). [`load`] finds libnvrtc.

pub mod load;

use cudarc::nvrtc::sys;
use std::ffi::{c_char, CStr, CString};

/// What can go wrong compiling with NVRTC. `Display` gives the message warpscope prints.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum Error {
    /// NVRTC (libnvrtc.so, part of the CUDA toolkit) could not be loaded.
    #[error("no NVRTC found (libnvrtc.so, from the CUDA toolkit): {0}")]
    NoNvrtc(String),
    /// NVRTC rejected the source: the compile log, its `FILE(LINE)` positions rewritten as
    /// `FILE:LINE` ([`map_log`]).
    #[error("NVRTC could not compile {file}:\n{}", .log.trim_end())]
    Compile { file: String, log: String },
    /// Bad input: a NUL byte in the source or a name, a kernel NVRTC did not find.
    #[error("{0}")]
    Argument(String),
}

/// NVRTC's results.
pub type Result<T> = std::result::Result<T, Error>;

/// One NVRTC compilation.
#[derive(Clone, Debug)]
pub struct Program<'a> {
    /// The path shown in NVRTC's messages (the program's name).
    pub file: &'a str,
    /// The source text.
    pub source: &'a str,
    /// Kernels to instantiate and look up, as warpscope names them (`stride<float>`,
    /// `offset_copy`).
    pub kernels: Vec<String>,
    /// Compute capability to compile for: `(9, 0)` gives `--gpu-architecture=sm_90`.
    pub cc: (u32, u32),
    /// `-D` macros, `NAME` or `NAME=VALUE`.
    pub defines: Vec<String>,
    /// `-I` folders for the source's `#include "…"` (the source's own folder first).
    pub include_dirs: Vec<String>,
    /// Source-line information in the CUBIN (`-lineinfo`), for Nsight Compute's source view.
    pub lineinfo: bool,
    /// The C++ dialect (`"c++20"` → `-std=c++20`); `None`: C++17, nvcc 13's default.
    pub std: Option<String>,
}

/// What NVRTC produced.
#[derive(Clone, Debug)]
pub struct Compiled {
    /// The CUBIN (ELF) image (for `warpscope_gpu::Device::load`).
    pub image: Vec<u8>,
    /// (kernel as named in [`Program::kernels`], lowered symbol) for each kernel.
    pub lowered: Vec<(String, String)>,
    /// NVRTC's log (warnings), positions as `FILE:LINE` ([`map_log`]).
    pub log: String,
    /// The options passed to NVRTC.
    pub options: Vec<String>,
}

impl Compiled {
    /// The lowered symbol of `kernel`.
    pub fn symbol(&self, kernel: &str) -> Option<&str> {
        self.lowered
            .iter()
            .find(|(k, _)| k == kernel)
            .map(|(_, s)| s.as_str())
    }
}

/// NVRTC's version (major, minor). Errors: [`Error::NoNvrtc`].
pub fn version() -> Result<(i32, i32)> {
    load::nvrtc()?;
    let (mut a, mut b) = (0, 0);
    // SAFETY: plain NVRTC call writing two ints; the library is loaded.
    unsafe { sys::nvrtcVersion(&mut a, &mut b) };
    Ok((a, b))
}

fn nvrtc_err(r: sys::nvrtcResult, what: &str) -> Error {
    Error::NoNvrtc(format!("{what} failed with {r:?}"))
}

struct Prog(sys::nvrtcProgram);

impl Drop for Prog {
    fn drop(&mut self) {
        // SAFETY: created by nvrtcCreateProgram, destroyed once.
        unsafe {
            sys::nvrtcDestroyProgram(&mut self.0);
        }
    }
}

/// The NVRTC options for `p`: machine code for `sm_XY` (a CUBIN).
pub fn options(p: &Program) -> Vec<String> {
    options_for(p, "sm")
}

/// The options [`compile_ptx`] passes: `--gpu-architecture=compute_XY` (PTX).
pub fn ptx_options(p: &Program) -> Vec<String> {
    options_for(p, "compute")
}

/// The options with `--gpu-architecture={prefix}_XY` (`sm` for a CUBIN, `compute` for PTX).
fn options_for(p: &Program, prefix: &str) -> Vec<String> {
    let std = p.std.as_deref().unwrap_or("c++17");
    let mut o = vec![
        format!("--gpu-architecture={prefix}_{}{}", p.cc.0, p.cc.1),
        format!("-std={}", std.strip_prefix("-std=").unwrap_or(std)),
    ];
    if p.lineinfo {
        o.push("-lineinfo".into());
    }
    for d in &p.defines {
        o.push(format!("-D{d}"));
    }
    for i in &p.include_dirs {
        o.push(format!("-I{i}"));
    }
    o
}

/// Compiles `p` to a CUBIN for `sm_XY` and looks up every kernel's lowered name.
///
/// Errors: [`Error::NoNvrtc`] (no NVRTC library); [`Error::Compile`] with NVRTC's log, its
/// positions rewritten as `FILE:LINE: error: …` (also when this NVRTC does not know the
/// architecture, e.g. an old toolkit on a new GPU); [`Error::Argument`] for a NUL byte in the
/// source or a name.
pub fn compile(p: &Program) -> Result<Compiled> {
    let Built {
        prog,
        lowered,
        log,
        options: opts,
    } = build(p, "sm")?;
    let image = output(
        &prog,
        sys::nvrtcGetCUBINSize,
        sys::nvrtcGetCUBIN,
        "nvrtcGetCUBIN",
    )?;
    Ok(Compiled {
        image,
        lowered,
        log,
        options: opts,
    })
}

/// Compiles `p` to PTX for the virtual architecture `compute_XY` (what warpscope's compiled
/// path runs when nvcc is missing): the PTX text and every kernel's lowered (mangled) name.
///
/// Errors: as [`compile`].
pub fn compile_ptx(p: &Program) -> Result<(String, Vec<(String, String)>)> {
    let Built { prog, lowered, .. } = build(p, "compute")?;
    let mut ptx = output(&prog, sys::nvrtcGetPTXSize, sys::nvrtcGetPTX, "nvrtcGetPTX")?;
    // The size counts the terminating NUL.
    while ptx.last() == Some(&0) {
        ptx.pop();
    }
    Ok((String::from_utf8_lossy(&ptx).into_owned(), lowered))
}

type SizeFn = unsafe fn(sys::nvrtcProgram, *mut usize) -> sys::nvrtcResult;
type GetFn = unsafe fn(sys::nvrtcProgram, *mut c_char) -> sys::nvrtcResult;

/// One of a compiled program's outputs (CUBIN or PTX) through its size and get functions.
fn output(prog: &Prog, size_of: SizeFn, get: GetFn, what: &str) -> Result<Vec<u8>> {
    let mut size = 0usize;
    // SAFETY: live, compiled program.
    let r = unsafe { size_of(prog.0, &mut size) };
    if r != sys::nvrtcResult::NVRTC_SUCCESS || size == 0 {
        return Err(nvrtc_err(r, what));
    }
    let mut buf = vec![0u8; size];
    // SAFETY: the buffer holds `size` bytes, as NVRTC asked.
    let r = unsafe { get(prog.0, buf.as_mut_ptr() as *mut c_char) };
    if r != sys::nvrtcResult::NVRTC_SUCCESS {
        return Err(nvrtc_err(r, what));
    }
    Ok(buf)
}

/// Creates, names and compiles the program.
fn build(p: &Program, prefix: &str) -> Result<Built> {
    load::nvrtc()?;
    let nul = |what: &str| Error::Argument(format!("{what} contains a NUL byte"));
    let src = CString::new(p.source).map_err(|_| nul(p.file))?;
    let name = CString::new(p.file).map_err(|_| nul("the file name"))?;
    let mut raw = std::ptr::null_mut();
    // SAFETY: both strings are NUL-terminated and outlive the program (dropped at the end).
    let r = unsafe {
        sys::nvrtcCreateProgram(
            &mut raw,
            src.as_ptr(),
            name.as_ptr(),
            0,
            std::ptr::null(),
            std::ptr::null(),
        )
    };
    if r != sys::nvrtcResult::NVRTC_SUCCESS {
        return Err(nvrtc_err(r, "nvrtcCreateProgram"));
    }
    let prog = Prog(raw);
    let names: Vec<CString> = p
        .kernels
        .iter()
        .map(|k| CString::new(k.as_str()).map_err(|_| nul("a kernel name")))
        .collect::<Result<_>>()?;
    for n in &names {
        // SAFETY: live program, NUL-terminated name.
        let r = unsafe { sys::nvrtcAddNameExpression(prog.0, n.as_ptr()) };
        if r != sys::nvrtcResult::NVRTC_SUCCESS {
            return Err(nvrtc_err(r, "nvrtcAddNameExpression"));
        }
    }
    let opts = options_for(p, prefix);
    let copts: Vec<CString> = opts
        .iter()
        .map(|o| CString::new(o.as_str()).map_err(|_| nul("an option")))
        .collect::<Result<_>>()?;
    let ptrs: Vec<*const c_char> = copts.iter().map(|c| c.as_ptr()).collect();
    // SAFETY: live program; `ptrs` holds NUL-terminated options alive for the call.
    let r = unsafe { sys::nvrtcCompileProgram(prog.0, ptrs.len() as i32, ptrs.as_ptr()) };
    let log = map_log(&program_log(&prog));
    if r != sys::nvrtcResult::NVRTC_SUCCESS {
        let log = if log.trim().is_empty() {
            format!("{r:?} (options: {})", opts.join(" "))
        } else {
            log
        };
        return Err(Error::Compile {
            file: p.file.to_string(),
            log,
        });
    }
    let mut lowered = Vec::new();
    for (k, n) in p.kernels.iter().zip(&names) {
        let mut out: *const c_char = std::ptr::null();
        // SAFETY: live, compiled program; NVRTC owns the returned string until destroyed.
        let r = unsafe { sys::nvrtcGetLoweredName(prog.0, n.as_ptr(), &mut out) };
        if r != sys::nvrtcResult::NVRTC_SUCCESS || out.is_null() {
            return Err(Error::Argument(format!(
                "NVRTC found no kernel '{k}' in {} ({r:?})",
                p.file
            )));
        }
        // SAFETY: NUL-terminated, owned by the live program.
        let s = unsafe { CStr::from_ptr(out) }
            .to_string_lossy()
            .into_owned();
        lowered.push((k.clone(), s));
    }
    Ok(Built {
        prog,
        lowered,
        log,
        options: opts,
    })
}

/// A compiled program, before its output (CUBIN or PTX) is taken.
struct Built {
    prog: Prog,
    lowered: Vec<(String, String)>,
    log: String,
    options: Vec<String>,
}

fn program_log(prog: &Prog) -> String {
    let mut size = 0usize;
    // SAFETY: live program.
    if unsafe { sys::nvrtcGetProgramLogSize(prog.0, &mut size) } != sys::nvrtcResult::NVRTC_SUCCESS
        || size <= 1
    {
        return String::new();
    }
    let mut buf = vec![0u8; size];
    // SAFETY: the buffer holds `size` bytes, as NVRTC asked.
    unsafe { sys::nvrtcGetProgramLog(prog.0, buf.as_mut_ptr() as *mut c_char) };
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..end]).into_owned()
}

/// Rewrites NVRTC's positions `FILE(LINE): ` at the start of a log line as `FILE:LINE: ` (the
/// form editors and warpscope's own messages use); other lines are kept as they are. FILE is
/// the program name NVRTC was given (the user's path) or a header's path.
///
/// `examples/k.cu(12): error: identifier "x" is undefined` becomes
/// `examples/k.cu:12: error: identifier "x" is undefined`.
pub fn map_log(log: &str) -> String {
    let mut out = String::with_capacity(log.len());
    for line in log.lines() {
        out.push_str(&map_line(line));
        out.push('\n');
    }
    out
}

fn map_line(line: &str) -> String {
    // The first "(digits): " whose '(' follows a non-space character.
    let b = line.as_bytes();
    let mut i = 0;
    while let Some(off) = line[i..].find('(') {
        let open = i + off;
        let digits_end = line[open + 1..]
            .find(|c: char| !c.is_ascii_digit())
            .map(|d| open + 1 + d)
            .unwrap_or(line.len());
        if open > 0
            && b[open - 1] != b' '
            && digits_end > open + 1
            && line[digits_end..].starts_with("): ")
        {
            return format!(
                "{}:{}: {}",
                &line[..open],
                &line[open + 1..digits_end],
                &line[digits_end + 3..]
            );
        }
        i = open + 1;
    }
    line.to_string()
}
