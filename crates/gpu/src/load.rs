//! Finding the CUDA driver (libcuda) at run time.
//!
//! cudarc loads it with `dlopen` the first time one of its functions is called, trying
//! library names (`libcuda.so`, `libcuda.so.1`) on the loader's search path — and panics
//! when none loads. [`driver`] runs first and turns that into an [`Error`]: it checks the
//! loader path, then looks in the usual install folders and, when the library is there,
//! loads it by its full path so that cudarc's later `dlopen` by name finds it already loaded
//! (glibc matches a loaded library by its soname). NVRTC is found the same way by
//! `warpscope_toolkit::nvrtc::load`, whose [`preload`] and [`missing_symbols`] this uses.

use crate::error::{Error, Result};
use std::path::PathBuf;
use std::sync::OnceLock;
use warpscope_toolkit::dylib::{missing_symbols, preload};

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
