//! The errors of finding and running the CUDA compiler.

use std::path::PathBuf;

/// The pip command that installs a CUDA compiler into the active Python environment.
///
/// `nvidia-cuda-nvcc` is the CUDA 13 wheel that ships `nvcc` itself (the CUDA 12 wheel,
/// `nvidia-cuda-nvcc-cu12`, ships only `ptxas`); `-runtime` and `-crt` bring the headers
/// every `.cu` file includes, `-cccl` the `<nv/target>`, `<cuda/…>`, CUB and Thrust headers
/// that `cuda_fp16.h` and `cuda_bf16.h` include, `-nvrtc` the runtime compiler,
/// `-profiler-api` the `cuda_profiler_api.h` that cuda-samples host code includes,
/// `-nvdisasm` the disassembler that checks what ptxas made of the PTX.
pub const PIP_INSTALL: &str = "pip install nvidia-cuda-nvcc nvidia-cuda-runtime nvidia-cuda-crt \
                               nvidia-cuda-cccl nvidia-cuda-nvrtc nvidia-cuda-profiler-api \
                               nvidia-cuda-nvdisasm";

/// Everything that can go wrong while finding the CUDA compiler or compiling with it.
#[derive(Debug, thiserror::Error)]
pub enum ToolkitError {
    /// No `nvcc` was found anywhere [`crate::find`] looks. `searched` lists each place
    /// looked at, in order, with what was (not) there, e.g. `"CUDA_HOME (unset)"`.
    #[error(
        "no CUDA compiler (nvcc) found; searched {}.\n\
         To get one: `{PIP_INSTALL}` (into the active Python environment), \
         or set CUDA_HOME to a CUDA toolkit, or pass --nvcc PATH.",
        .searched.join(", ")
    )]
    NotFound {
        /// The places searched, in order, each with a short remark.
        searched: Vec<String>,
    },

    /// The compiler given explicitly (`--nvcc PATH`) does not exist.
    #[error("--nvcc {}: no such file", .path.display())]
    ExplicitMissing {
        /// The path as given.
        path: PathBuf,
    },

    /// A compiler file exists but does not run as `nvcc --version`, or does not answer
    /// like nvcc.
    #[error("{} does not run as a CUDA compiler: {reason}", .path.display())]
    NotRunnable {
        /// The compiler's path.
        path: PathBuf,
        /// Why: the operating system's error, the exit status and output, or a timeout.
        reason: String,
    },

    /// The `.cu` file (or the PTX nvcc wrote) could not be read.
    #[error("cannot read {}: {source}", .path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The operating system's error.
        source: std::io::Error,
    },

    /// nvcc could not be started for a compile.
    #[error("cannot run `{command}`: {source}")]
    Spawn {
        /// The command line, shell-quoted.
        command: String,
        /// The operating system's error.
        source: std::io::Error,
    },

    /// nvcc ran and failed. Displays the command line and then the compiler's output
    /// verbatim.
    #[error("compile failed: {command}\n{stderr}")]
    Compile {
        /// The command line that failed, shell-quoted so it can be pasted into a shell.
        command: String,
        /// What the compiler printed: its standard error, then its standard output if any.
        stderr: String,
    },

    /// A tool ran past [`crate::tool_timeout`] (`--tool-timeout`) and was stopped with its
    /// process group. A hang guard only: the limit is far above any real compile.
    #[error(
        "{tool} did not finish within {seconds} s (--tool-timeout); it was stopped: {command}"
    )]
    Timeout {
        /// `nvcc`, `ptxas`, `nvdisasm` …
        tool: String,
        /// The command line, shell-quoted.
        command: String,
        /// The limit it ran under, in seconds.
        seconds: f64,
    },

    /// A tool printed more than [`crate::max_output_bytes`] and was stopped with its process
    /// group.
    #[error("{tool} printed over {limit} bytes and was stopped (raise the bound with --max-input-bytes): {command}")]
    OutputTooLarge {
        /// `nvcc`, `ptxas`, `nvdisasm` …
        tool: String,
        /// The command line, shell-quoted.
        command: String,
        /// The bound, in bytes.
        limit: u64,
    },
}
