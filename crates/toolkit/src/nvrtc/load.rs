//! Finding NVRTC (libnvrtc) at run time.
//!
//! cudarc loads it with `dlopen` the first time one of its functions is called, trying
//! library names (`libnvrtc.so`, `libnvrtc.so.13`, …) on the loader's search path — and
//! panics when none loads. [`nvrtc`] runs first and turns that into an [`Error`]: it checks
//! the loader path, then looks in the CUDA toolkit's folders and the pip wheels of the usual
//! Python prefixes and, when a library is there, loads it by its full path so that cudarc's
//! later `dlopen` by name finds it already loaded (glibc matches a loaded library by its
//! soname).

use super::Error;
use crate::dylib::{candidates_in, missing_symbols, preload};
use std::path::PathBuf;
use std::sync::OnceLock;

type Result<T> = std::result::Result<T, Error>;

/// NVRTC functions warpscope calls.
const NVRTC_SYMBOLS: &[&str] = &[
    "nvrtcVersion",
    "nvrtcCreateProgram",
    "nvrtcAddNameExpression",
    "nvrtcCompileProgram",
    "nvrtcGetLoweredName",
    "nvrtcGetProgramLogSize",
    "nvrtcGetProgramLog",
    "nvrtcGetCUBINSize",
    "nvrtcGetCUBIN",
    "nvrtcGetPTXSize",
    "nvrtcGetPTX",
    "nvrtcDestroyProgram",
];

/// Folders of the CUDA toolkit (and of pip's nvidia-cuda-nvrtc wheels) that may hold
/// libnvrtc.so.
fn nvrtc_dirs() -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    for var in [
        "CUDA_HOME",
        "CUDA_PATH",
        "CUDA_ROOT",
        "CUDA_TOOLKIT_ROOT_DIR",
    ] {
        if let Some(v) = std::env::var_os(var) {
            let p = PathBuf::from(v);
            dirs.push(p.join("lib64"));
            dirs.push(p.join("lib"));
            dirs.push(p.join("targets/x86_64-linux/lib"));
        }
    }
    for d in [
        "/usr/local/cuda/lib64",
        "/usr/local/cuda/targets/x86_64-linux/lib",
        "/usr/local/cuda/targets/sbsa-linux/lib",
        "/opt/cuda/lib64",
        "/usr/lib/x86_64-linux-gnu",
        "/usr/lib64",
    ] {
        dirs.push(PathBuf::from(d));
    }
    // Versioned toolkits (/usr/local/cuda-13.0/lib64), newest name last.
    if let Ok(rd) = std::fs::read_dir("/usr/local") {
        let mut v: Vec<PathBuf> = rd
            .flatten()
            .map(|e| e.path())
            .filter(|p| {
                p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with("cuda-"))
            })
            .map(|p| p.join("lib64"))
            .collect();
        v.sort();
        v.reverse();
        dirs.extend(v);
    }
    dirs
}

/// Makes sure cudarc can load NVRTC with every function warpscope calls. Cached.
///
/// Errors: [`Error::NoNvrtc`] naming the places tried; install the CUDA toolkit (or pip's
/// nvidia-cuda-nvrtc) or put its lib folder on `LD_LIBRARY_PATH`.
pub fn nvrtc() -> Result<()> {
    static DONE: OnceLock<Result<()>> = OnceLock::new();
    DONE.get_or_init(|| {
        // SAFETY: is_culib_present only tries to dlopen candidate names.
        let mut present = unsafe { cudarc::nvrtc::sys::is_culib_present() };
        let mut last_err = String::new();
        let mut dirs = nvrtc_dirs();
        dirs.extend(python_nvrtc_dirs());
        if !present {
            'outer: for dir in &dirs {
                for p in candidates_in(dir, "libnvrtc", "builtins") {
                    match preload(&p) {
                        Ok(()) => {
                            present = unsafe { cudarc::nvrtc::sys::is_culib_present() };
                            if present {
                                break 'outer;
                            }
                        }
                        Err(e) => last_err = e,
                    }
                }
            }
        }
        if !present {
            let tried: Vec<String> = dirs.iter().map(|d| d.display().to_string()).collect();
            return Err(Error::NoNvrtc(format!(
                "tried libnvrtc.so, libnvrtc.so.13, .12, .11 on the loader path and in {}{}; install the CUDA toolkit or add its lib64 folder to LD_LIBRARY_PATH",
                tried.join(", "),
                if last_err.is_empty() { String::new() } else { format!(" (last error: {last_err})") }
            )));
        }
        // SAFETY: present, so culib() does not panic.
        let lib = unsafe { cudarc::nvrtc::sys::culib() };
        let missing = missing_symbols(lib, NVRTC_SYMBOLS);
        if !missing.is_empty() {
            return Err(Error::NoNvrtc(format!(
                "the NVRTC found is too old: it lacks {}",
                missing.join(", ")
            )));
        }
        Ok(())
    })
    .clone()
}

/// `site-packages/nvidia/cuda_nvrtc/lib` (CUDA 12 wheels) and `site-packages/nvidia/cu13/lib`
/// (CUDA 13 wheels) under the usual Python prefixes.
fn python_nvrtc_dirs() -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut roots: Vec<PathBuf> = vec!["/usr/local/lib".into(), "/usr/lib".into(), "/opt".into()];
    if let Some(h) = std::env::var_os("VIRTUAL_ENV") {
        roots.push(PathBuf::from(h).join("lib"));
    }
    for root in roots {
        let mut stack = vec![(root, 0)];
        // A shallow walk: prefix/lib/pythonX.Y/{site,dist}-packages/nvidia/...
        while let Some((d, depth)) = stack.pop() {
            if depth > 6 {
                continue;
            }
            let Ok(rd) = std::fs::read_dir(&d) else {
                continue;
            };
            for e in rd.flatten() {
                let p = e.path();
                let name = e.file_name().to_string_lossy().to_string();
                if !p.is_dir() {
                    continue;
                }
                if name == "nvidia" {
                    out.push(p.join("cuda_nvrtc/lib"));
                    out.push(p.join("cu13/lib"));
                    out.push(p.join("cu12/lib"));
                } else if name.starts_with("python")
                    || name.ends_with("-packages")
                    || name == "lib"
                    || (depth == 0
                        && (name == "torch" || name.starts_with("venv") || name == ".venv"))
                    || (depth == 1 && name == ".venv")
                {
                    stack.push((p, depth + 1));
                }
            }
        }
    }
    out
}
