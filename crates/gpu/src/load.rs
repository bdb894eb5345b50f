//! Finding the CUDA driver (libcuda) and NVRTC (libnvrtc) at run time.
//!
//! cudarc loads both with `dlopen` the first time one of their functions is called, trying
//! library names (`libcuda.so`, `libcuda.so.1`, `libnvrtc.so.13`, …) on the loader's search
//! path — and panics when none loads. [`driver`] and [`nvrtc`] run first and turn that into
//! an [`Error`]: they check the loader path, then look in the usual install folders and, when
//! a library is there, load it by its full path so that cudarc's later `dlopen` by name finds
//! it already loaded (glibc matches a loaded library by its soname).

use crate::error::{Error, Result};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// Driver API functions warpscope calls; a driver that lacks one is reported as too old
/// instead of panicking inside cudarc.
const DRIVER_SYMBOLS: &[&str] = &[
    "cuInit",
    "cuDriverGetVersion",
    "cuDeviceGetCount",
    "cuDeviceGet",
    "cuDeviceGetName",
    "cuDeviceGetAttribute",
    "cuDeviceTotalMem_v2",
    "cuDevicePrimaryCtxRetain",
    "cuDevicePrimaryCtxRelease_v2",
    "cuCtxSetCurrent",
    "cuCtxSynchronize",
    "cuMemAlloc_v2",
    "cuMemFree_v2",
    "cuMemsetD8_v2",
    "cuMemcpyHtoD_v2",
    "cuMemcpyDtoH_v2",
    "cuMemGetInfo_v2",
    "cuModuleLoadData",
    "cuModuleUnload",
    "cuModuleGetFunction",
    "cuFuncSetAttribute",
    "cuFuncGetAttribute",
    "cuLaunchKernel",
    "cuEventCreate",
    "cuEventRecord",
    "cuEventQuery",
    "cuEventDestroy_v2",
    "cuGetErrorName",
    "cuGetErrorString",
];

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

/// Folders where NVIDIA's installers put libcuda.so.1 when the loader path lacks it.
fn driver_dirs() -> Vec<PathBuf> {
    [
        "/usr/lib/x86_64-linux-gnu",
        "/usr/lib64",
        "/usr/lib",
        "/usr/local/nvidia/lib64",
        "/usr/local/nvidia/lib",
        "/usr/lib/wsl/lib",
        "/usr/lib/aarch64-linux-gnu",
    ]
    .iter()
    .map(PathBuf::from)
    .collect()
}

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

/// Library files in `dir` whose names start with `prefix` followed by `.so` (with any
/// version suffix), highest version first; `exclude` drops names containing it.
fn candidates_in(dir: &Path, prefix: &str, exclude: &str) -> Vec<PathBuf> {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut v: Vec<PathBuf> = rd
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name().and_then(|n| n.to_str()).is_some_and(|n| {
                n.starts_with(&format!("{prefix}.so"))
                    && (exclude.is_empty() || !n.contains(exclude))
            })
        })
        .collect();
    v.sort();
    v.reverse();
    v
}

/// Loads `path` for the rest of the process (never unloaded), so that a later `dlopen` of
/// its soname returns it.
fn preload(path: &Path) -> std::result::Result<(), String> {
    // SAFETY: loading a vendor library runs its initialisers; that is what using it means.
    match unsafe { libloading::Library::new(path) } {
        Ok(lib) => {
            std::mem::forget(lib);
            Ok(())
        }
        Err(e) => Err(e.to_string()),
    }
}

fn missing_symbols(lib: &libloading::Library, names: &[&str]) -> Vec<String> {
    names
        .iter()
        // SAFETY: only the symbol's presence is checked; it is never called through this.
        .filter(|n| unsafe { lib.get::<*const ()>(n.as_bytes()) }.is_err())
        .map(|n| n.to_string())
        .collect()
}

/// Makes sure cudarc can load the CUDA driver library and that it has every function
/// warpscope calls. Cached: the search runs once per process.
///
/// Errors: [`Error::NoDriver`] (no libcuda.so found: names the places tried, and the loader's
/// last message), [`Error::NoDevice`] (a driver without a function warpscope needs).
pub fn driver() -> Result<()> {
    static DONE: OnceLock<Result<()>> = OnceLock::new();
    DONE.get_or_init(|| {
        // SAFETY: is_culib_present only tries to dlopen candidate names.
        let mut present = unsafe { cudarc::driver::sys::is_culib_present() };
        let mut last_err = String::new();
        if !present {
            for dir in driver_dirs() {
                for f in ["libcuda.so.1", "libcuda.so"] {
                    let p = dir.join(f);
                    if p.exists() {
                        match preload(&p) {
                            Ok(()) => {
                                present = unsafe { cudarc::driver::sys::is_culib_present() };
                            }
                            Err(e) => last_err = e,
                        }
                    }
                    if present {
                        break;
                    }
                }
                if present {
                    break;
                }
            }
        }
        if !present {
            let dirs: Vec<String> = driver_dirs().iter().map(|d| d.display().to_string()).collect();
            return Err(Error::NoDriver(format!(
                "tried libcuda.so and libcuda.so.1 on the loader path (LD_LIBRARY_PATH, ld.so.cache) and in {}{}; is the NVIDIA driver installed?",
                dirs.join(", "),
                if last_err.is_empty() { String::new() } else { format!(" (last error: {last_err})") }
            )));
        }
        // SAFETY: the library is present (checked above), so culib() does not panic.
        let lib = unsafe { cudarc::driver::sys::culib() };
        let missing = missing_symbols(lib, DRIVER_SYMBOLS);
        if !missing.is_empty() {
            return Err(Error::NoDevice(format!(
                "the CUDA driver is too old: it lacks {}",
                missing.join(", ")
            )));
        }
        Ok(())
    })
    .clone()
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

/// Whether the loaded driver exports `name` (for functions that newer drivers renamed, such
/// as `cuEventElapsedTime_v2`). False before [`driver`] succeeded.
pub fn driver_has(name: &str) -> bool {
    if driver().is_err() {
        return false;
    }
    // SAFETY: the driver is loaded (checked above); the symbol is only looked up.
    let lib = unsafe { cudarc::driver::sys::culib() };
    unsafe { lib.get::<*const ()>(name.as_bytes()) }.is_ok()
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
