//! The errors of this crate: each one a sentence for the user, never a panic.

use std::fmt;

/// What went wrong. `Display` gives the message warpscope prints.
#[derive(Clone, Debug, PartialEq)]
pub enum Error {
    /// The CUDA driver library could not be loaded (no NVIDIA driver on this machine); the
    /// text says which names and folders were tried.
    NoDriver(String),
    /// NVRTC (libnvrtc.so, part of the CUDA toolkit) could not be loaded.
    NoNvrtc(String),
    /// The driver loaded but there is no usable GPU (cuInit or cuDeviceGet failed), or the
    /// driver lacks a function warpscope needs (too old).
    NoDevice(String),
    /// A CUDA driver call failed: the call, its CUDA error name (`CUDA_ERROR_…`) and what
    /// warpscope was doing.
    Cuda {
        call: String,
        name: String,
        doing: String,
    },
    /// The kernel faulted while running: its name and the CUDA error (e.g.
    /// `CUDA_ERROR_ILLEGAL_ADDRESS`). The context is unusable afterwards.
    KernelFault {
        kernel: String,
        name: String,
        description: String,
    },
    /// The kernel did not finish within the time limit.
    Timeout { kernel: String, seconds: f64 },
    /// NVRTC rejected the source: the compile log, its `FILE(LINE)` positions rewritten as
    /// `FILE:LINE` ([`warpscope_toolkit::nvrtc::map_log`]).
    Compile { file: String, log: String },
    /// Nsight Compute could not be found or run, or gave no usable result.
    Ncu(String),
    /// Nsight Compute ran but may not read the GPU's performance counters
    /// (`ERR_NVGPUCTRPERM`).
    NcuPermission(String),
    /// Bad input: a launch, an argument, a batch line, a size.
    Argument(String),
    /// The source front end (`warpscope-cuda`) rejected the kernel or the launch.
    Interpreter(String),
    /// A file could not be read or written.
    Io(String),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::NoDriver(d) => write!(f, "no CUDA driver found (libcuda.so): {d}"),
            Error::NoNvrtc(d) => write!(f, "no NVRTC found (libnvrtc.so, from the CUDA toolkit): {d}"),
            Error::NoDevice(d) => write!(f, "no usable CUDA GPU: {d}"),
            Error::Cuda { call, name, doing } => write!(f, "{call} failed with {name} while {doing}"),
            Error::KernelFault {
                kernel,
                name,
                description,
            } => write!(f, "kernel {kernel} faulted: {name} ({description})"),
            Error::Timeout { kernel, seconds } => write!(
                f,
                "kernel {kernel} did not finish within {seconds:.0} s (a loop that never ends?); raise the limit with --timeout"
            ),
            Error::Compile { file, log } => {
                write!(f, "NVRTC could not compile {file}:\n{}", log.trim_end())
            }
            Error::Ncu(m) => write!(f, "Nsight Compute: {m}"),
            Error::NcuPermission(m) => write!(
                f,
                "Nsight Compute may not read the GPU's performance counters (ERR_NVGPUCTRPERM): {m}. Run as root, or let users profile (NVreg_RestrictProfilingToAdminUsers=0; see https://developer.nvidia.com/ERR_NVGPUCTRPERM)"
            ),
            Error::Argument(m) | Error::Interpreter(m) | Error::Io(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for Error {}

impl From<warpscope_cuda::Error> for Error {
    fn from(e: warpscope_cuda::Error) -> Self {
        Error::Interpreter(e.to_string())
    }
}

impl From<warpscope_toolkit::nvrtc::Error> for Error {
    fn from(e: warpscope_toolkit::nvrtc::Error) -> Self {
        use warpscope_toolkit::nvrtc::Error as N;
        match e {
            N::NoNvrtc(d) => Error::NoNvrtc(d),
            N::Compile { file, log } => Error::Compile { file, log },
            N::Argument(m) => Error::Argument(m),
        }
    }
}

/// This crate's results.
pub type Result<T> = std::result::Result<T, Error>;
