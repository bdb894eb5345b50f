//! Finding and running the CUDA compiler.
//!
//! [`find`] looks for `nvcc` (`--nvcc`, `CUDA_HOME`, `CUDA_PATH`, `PATH`, then the pip
//! wheels `nvidia-cuda-nvcc` … of the active Python environment) and describes it as a
//! [`Toolkit`]; [`Toolkit::target_for_cc`] picks the `sm_XX` to compile for a compute
//! capability; [`Toolkit::compile_ptx`] compiles a `.cu` file to PTX
//! (`nvcc -ptx -lineinfo`), keeping the result in a cache keyed by the source, the headers
//! it includes, the flags and the toolkit.
//!
//! No GPU is needed: `nvcc -ptx` only compiles.
//!
//! With the cargo feature `nvrtc`, [`nvrtc`] is the second compiler: NVRTC (libnvrtc, from
//! the CUDA toolkit or the `nvidia-cuda-nvrtc` wheel, loaded at run time) compiles a
//! device-only `.cu` to PTX when no `nvcc` is found ([`nvrtc::compile_ptx`], uncached), or to
//! a CUBIN for the GPU at hand ([`nvrtc::compile`], what `warpscope run` and `verify` load);
//! [`dylib`] holds the run-time loading both it and `warpscope-gpu`'s driver use.
//!
//! The SASS side: [`SassTools`] runs `ptxas` and `nvdisasm` to show what the assembler made
//! of the PTX ([`parse_ptxas_report`], [`parse_nvdisasm`]).

mod cache;
mod compile;
#[cfg(feature = "nvrtc")]
pub mod dylib;
mod error;
mod find;
mod guard;
#[cfg(feature = "nvrtc")]
pub mod nvrtc;
mod sass;
mod store;
mod wrapper;

use std::fmt;
use std::path::PathBuf;

pub use cache::default_cache_dir;
pub use compile::{CompileOptions, Compiled};
pub use error::{ToolkitError, PIP_INSTALL};
pub use find::{find, Source};
pub use guard::{
    max_output_bytes, run_tool, set_max_output_bytes, set_tool_timeout, stop_all, tool_timeout,
    DEFAULT_MAX_OUTPUT_BYTES, DEFAULT_TOOL_TIMEOUT,
};
pub use sass::{
    parse_nvdisasm, parse_nvdisasm_text, parse_ptxas_report, ptxas_options, tag_lines,
    FunctionResources, SassListing, SassMemory, SassText, SassTools,
};
pub use store::{
    check_input, max_input_bytes, private_dir, read_input, set_max_input_bytes,
    DEFAULT_MAX_INPUT_BYTES,
};
pub use wrapper::{wrapper_file, WrapperFile};

/// A CUDA compiler (`nvcc`) found on this machine, as [`find`] describes it.
#[derive(Debug, Clone)]
pub struct Toolkit {
    /// Absolute path of the `nvcc` executable.
    pub nvcc: PathBuf,
    /// The toolkit's release, `major.minor`, as `nvcc --version` prints it (e.g. `"13.5"`).
    pub version: String,
    /// The architectures `nvcc --list-gpu-arch` names, as numbers (`compute_90` → 90),
    /// ascending, e.g. 75, 80, 86, 87, 88, 89, 90, 100, 103, 110, 120, 121 for CUDA 13.5.
    /// Empty for a toolkit too old to answer `--list-gpu-arch`.
    pub supported_archs: Vec<u32>,
    /// Folders of the toolkit's own headers (`cuda_runtime.h`, `crt/…`), which
    /// [`Toolkit::compile_ptx`] passes as `-isystem`: nvcc's own `nvcc.profile` names the
    /// folder next to `bin/`, but the CUDA 12 pip layout spreads them over several wheels.
    pub include_dirs: Vec<PathBuf>,
    /// Where it was found.
    pub found_via: Source,
    /// `nvcc --version`'s whole output (build number included), for the cache key.
    banner: String,
}

impl fmt::Display for Toolkit {
    /// `nvcc 13.5 (/path/to/nvcc, found via PATH)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "nvcc {} ({}, found via {})",
            self.version,
            self.nvcc.display(),
            self.found_via
        )
    }
}

/// The architecture to compile for, as [`Toolkit::target_for_cc`] chose it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// The `-arch` value, e.g. `"sm_90"`.
    pub sm: String,
    /// Set when `sm` is not the compute capability asked for (one the toolkit no longer or
    /// not yet targets): one sentence saying what was chosen and why, for the user.
    pub note: Option<String>,
}

impl Target {
    /// The architecture number, e.g. 90 for `sm_90`.
    pub fn arch(&self) -> Option<u32> {
        self.sm.strip_prefix("sm_")?.parse().ok()
    }
}

impl Toolkit {
    /// The `sm_XX` to compile for compute capability `cc_major.cc_minor`.
    ///
    /// The exact architecture where the toolkit targets it (9.0 → `sm_90`, never the
    /// arch-specific `sm_90a`; 8.6 → `sm_86`; 12.0 → `sm_120`). Otherwise, with a
    /// [`Target::note`] saying so: the oldest one it targets for an older capability (CUDA 13
    /// dropped everything below 7.5), the newest one for a newer capability, and the
    /// closest older one for a capability in between that it skips. A toolkit that listed
    /// no architectures gets the exact one, unchecked.
    pub fn target_for_cc(&self, cc_major: u32, cc_minor: u32) -> Target {
        let cc = cc_major * 10 + cc_minor;
        let asked = format!("CC {cc_major}.{cc_minor}");
        let nvcc = format!("nvcc {}", self.version);
        let archs = &self.supported_archs;
        let (Some(&oldest), Some(&newest)) = (archs.first(), archs.last()) else {
            return Target {
                sm: format!("sm_{cc}"),
                note: None,
            };
        };
        if archs.contains(&cc) {
            return Target {
                sm: format!("sm_{cc}"),
                note: None,
            };
        }
        let (sm, note) = if cc < oldest {
            (
                oldest,
                format!(
                    "{asked} is not a target of {nvcc}; compiled for sm_{oldest}, the oldest it \
                     supports: the memory instructions may differ from what an older compiler emitted"
                ),
            )
        } else if cc > newest {
            (
                newest,
                format!(
                    "{asked} is newer than any target of {nvcc}; compiled for sm_{newest}, the \
                     newest it supports"
                ),
            )
        } else {
            let below = archs
                .iter()
                .copied()
                .filter(|&a| a < cc)
                .max()
                .unwrap_or(oldest);
            (
                below,
                format!(
                    "{asked} is not a target of {nvcc}; compiled for sm_{below}, the closest \
                     older one it supports"
                ),
            )
        };
        Target {
            sm: format!("sm_{sm}"),
            note: Some(note),
        }
    }
}

#[cfg(test)]
pub(crate) fn test_toolkit(version: &str, archs: &[u32]) -> Toolkit {
    Toolkit {
        nvcc: PathBuf::from("/opt/cuda/bin/nvcc"),
        version: version.to_string(),
        supported_archs: archs.to_vec(),
        include_dirs: Vec::new(),
        found_via: Source::Path,
        banner: String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CUDA13: &[u32] = &[75, 80, 86, 87, 88, 89, 90, 100, 103, 110, 120, 121];

    #[test]
    fn exact_targets() {
        let tk = test_toolkit("13.5", CUDA13);
        for (maj, min, sm) in [
            (9, 0, "sm_90"),
            (8, 6, "sm_86"),
            (12, 0, "sm_120"),
            (10, 0, "sm_100"),
        ] {
            let t = tk.target_for_cc(maj, min);
            assert_eq!(t.sm, sm);
            assert_eq!(t.note, None);
        }
        assert_eq!(tk.target_for_cc(9, 0).arch(), Some(90));
    }

    #[test]
    fn too_old_too_new_and_between() {
        let tk = test_toolkit("13.5", CUDA13);
        let t = tk.target_for_cc(2, 0);
        assert_eq!(t.sm, "sm_75");
        assert_eq!(
            t.note.as_deref(),
            Some(
                "CC 2.0 is not a target of nvcc 13.5; compiled for sm_75, the oldest it supports: \
                 the memory instructions may differ from what an older compiler emitted"
            )
        );
        assert_eq!(tk.target_for_cc(7, 0).sm, "sm_75");
        let t = tk.target_for_cc(13, 0);
        assert_eq!(t.sm, "sm_121");
        assert!(t.note.unwrap().contains("newer"));
        let t = tk.target_for_cc(8, 5);
        assert_eq!(t.sm, "sm_80");
        assert!(t.note.is_some());
        // A toolkit that listed nothing: the exact one.
        let t = test_toolkit("10.2", &[]).target_for_cc(6, 1);
        assert_eq!((t.sm.as_str(), t.note), ("sm_61", None));
    }
}
