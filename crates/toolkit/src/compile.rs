//! `nvcc -ptx`: compiling a `.cu` file to PTX, through the cache.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use crate::cache::{self, KeyBuilder};
use crate::{Target, Toolkit, ToolkitError};

/// What to pass to nvcc besides the file and the target.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CompileOptions {
    /// Macro definitions, `NAME` or `NAME=VALUE`, each passed as `-DNAME[=VALUE]` (a
    /// leading `-D` is accepted and not doubled).
    pub defines: Vec<String>,
    /// Header folders, each passed as `-I DIR`, searched for `#include "…"` after the
    /// including file's own folder; their headers are part of the cache key.
    pub include_dirs: Vec<PathBuf>,
    /// The C++ dialect, e.g. `"c++17"` → `-std=c++17`; `None` is nvcc's default.
    pub std: Option<String>,
    /// The optimisation level, e.g. `"3"` → `-O3` (`"O3"` and `"-O3"` are accepted too);
    /// `None` is nvcc's default (`-O3` for device code).
    pub opt_level: Option<String>,
    /// Further nvcc arguments, passed as they are, before the file.
    pub extra: Vec<String>,
    /// Compile with nvcc even where NVRTC would take the file (see [`Toolkit::compile_ptx`]);
    /// the environment variable `WARPSCOPE_NVCC_ONLY` does the same for every compile.
    pub nvcc_only: bool,
}

/// PTX produced by [`Toolkit::compile_ptx`].
#[derive(Debug, Clone, PartialEq)]
pub struct Compiled {
    /// The PTX text (`.version`, `.target`, the `.entry` kernels, `.loc` lines from
    /// `-lineinfo`).
    pub ptx: String,
    /// The nvcc command line, shell-quoted (`NVRTC OPTIONS… FILE` when NVRTC compiled it).
    /// For a cached result, nvcc's command that produced the entry, with `-o` naming the cache
    /// file (`NVRTC (cached: FILE)` for NVRTC's).
    pub command: String,
    /// True when the PTX came from the cache and nvcc was not run.
    pub cached: bool,
    /// True when NVRTC made the PTX (now, or the cached entry), false for nvcc.
    pub by_nvrtc: bool,
    /// Wall-clock seconds the call took: the compile, or for a cached result, hashing the
    /// inputs and reading the entry.
    pub seconds: f64,
    /// Why the result could not be stored in, or the cache folder could not be used, if
    /// so; the compile itself succeeded. `None` when caching worked or was off.
    pub cache_error: Option<String>,
    /// Set when the cache held an entry for this compile that failed its SHA-256 check
    /// (truncated, changed): a `note:` line for the user; the PTX was compiled afresh.
    pub cache_note: Option<String>,
}

impl Toolkit {
    /// Compiles `file` to PTX for `target`:
    /// `nvcc -ptx -lineinfo -arch=sm_XX [-D…] [-I…] [-isystem TOOLKIT_INCLUDE…] [-std=…]
    /// [-O…] [EXTRA…] FILE -o OUT`, through the cache in [`crate::default_cache_dir`].
    ///
    /// `file` may hold host code and `main()`; only the device code becomes PTX. It is
    /// passed to nvcc as an absolute path, which the PTX's `.file` directives then name.
    ///
    /// With the `nvrtc` feature, NVRTC compiles the file in-process first, with the same
    /// defines, folders and dialect (not when an optimisation level or further nvcc
    /// arguments are given, or [`CompileOptions::nvcc_only`]): a tenth of nvcc's time, the
    /// same instructions. A file NVRTC refuses (host code, system headers) goes to nvcc;
    /// [`Compiled::command`] then starts with `NVRTC` instead of nvcc's path.
    ///
    /// Errors: [`ToolkitError::Read`] if `file` cannot be read, [`ToolkitError::Spawn`] if
    /// nvcc does not start, [`ToolkitError::Compile`] (the command and nvcc's output) if it
    /// fails. A cache that cannot be read or written is not an error: the file is compiled
    /// and [`Compiled::cache_error`] says why the result was not kept.
    pub fn compile_ptx(
        &self,
        file: &Path,
        target: &Target,
        opts: &CompileOptions,
    ) -> Result<Compiled, ToolkitError> {
        self.compile_ptx_with_cache(file, target, opts, crate::default_cache_dir().as_deref())
    }

    /// [`Toolkit::compile_ptx`] with the cache in `cache_dir` (created if missing), or
    /// with no cache at all when `cache_dir` is `None`.
    pub fn compile_ptx_with_cache(
        &self,
        file: &Path,
        target: &Target,
        opts: &CompileOptions,
        cache_dir: Option<&Path>,
    ) -> Result<Compiled, ToolkitError> {
        // Without instances `compile` always answers (nvcc at the latest).
        self.compile(file, target, opts, cache_dir, &[])?
            .ok_or_else(|| ToolkitError::Compile {
                command: file.display().to_string(),
                stderr: "no compiler ran".into(),
            })
    }

    /// `file` compiled to PTX for `target` by NVRTC alone, with the template kernels
    /// `instances` instantiated (NVRTC name expressions, e.g. `offset<float>`), through the
    /// cache of [`Toolkit::compile_ptx`]; `Ok(None)` when NVRTC does not take the file or the
    /// options (see [`Toolkit::compile_ptx`]): nvcc then needs a file that instantiates them.
    ///
    /// Errors: as [`Toolkit::compile_ptx`].
    pub fn compile_ptx_instantiating(
        &self,
        file: &Path,
        target: &Target,
        opts: &CompileOptions,
        instances: &[String],
    ) -> Result<Option<Compiled>, ToolkitError> {
        self.compile(
            file,
            target,
            opts,
            crate::default_cache_dir().as_deref(),
            instances,
        )
    }

    /// The compile of [`Toolkit::compile_ptx_with_cache`]; with `instances`, NVRTC's alone
    /// (`None` when it does not take the file).
    fn compile(
        &self,
        file: &Path,
        target: &Target,
        opts: &CompileOptions,
        cache_dir: Option<&Path>,
        instances: &[String],
    ) -> Result<Option<Compiled>, ToolkitError> {
        let start = Instant::now();
        let file = std::path::absolute(file).unwrap_or_else(|_| file.to_path_buf());
        let source = std::fs::read(&file).map_err(|source| ToolkitError::Read {
            path: file.clone(),
            source,
        })?;
        let mut flags = self.flags(target, opts);
        if !is_cu_file(&file) {
            // A kernel in a header (`.cuh`, `.h`, `.hpp`, `.inc`): nvcc picks the language
            // from the extension and refuses these, so say it is CUDA.
            flags.splice(0..0, ["-x".into(), "cu".into()]);
        }

        let nvrtc_first = nvrtc_takes(target, opts);
        if !instances.is_empty() && !nvrtc_first {
            return Ok(None);
        }
        let key = {
            let mut k = KeyBuilder::new();
            if nvrtc_first {
                // NVRTC's PTX differs from nvcc's in debug strings and assert's function
                // names: the two never share an entry.
                k.field("compiler", b"NVRTC, else nvcc");
            }
            for i in instances {
                k.field("instantiate", i.as_bytes());
            }
            k.field("nvcc", self.nvcc.as_os_str().as_encoded_bytes());
            k.field("nvcc --version", self.banner.as_bytes());
            k.field("version", self.version.as_bytes());
            k.field("target", target.sm.as_bytes());
            for f in &flags {
                k.field("flag", cache::os_bytes(f));
            }
            k.field("file", file.as_os_str().as_encoded_bytes());
            k.field("source", &source);
            let mut dirs = opts.include_dirs.clone();
            dirs.extend(cache::include_flags_of(&opts.extra));
            cache::hash_includes(&mut k, &file, &String::from_utf8_lossy(&source), &dirs);
            k.finish()
        };

        let mut cache_error = None;
        let mut cache_note = None;
        let mut out_dir = None;
        if let Some(dir) = cache_dir {
            match cache::prepare(dir) {
                Ok(()) => {
                    match cache::load(dir, &key) {
                        crate::store::Entry::Good(ptx) => {
                            let entry = cache::entry(dir, &key);
                            let by_nvrtc = ptx.ends_with(NVRTC_MARK);
                            let command = if by_nvrtc {
                                format!("NVRTC (cached: {})", entry.display())
                            } else {
                                self.command_line(&flags, &file, &entry)
                            };
                            return Ok(Some(Compiled {
                                by_nvrtc,
                                ptx,
                                command,
                                cached: true,
                                seconds: start.elapsed().as_secs_f64(),
                                cache_error: None,
                                cache_note: None,
                            }));
                        }
                        crate::store::Entry::Corrupt(note) => cache_note = Some(note),
                        crate::store::Entry::Missing => {}
                    }
                    out_dir = Some(dir.to_path_buf());
                }
                Err(e) => cache_error = Some(format!("compile cache not used: {e}")),
            }
        }
        // nvcc writes into a private folder of its own (removed when dropped, and by the
        // signal handler), inside the cache when there is one.
        let scratch = cache::scratch(out_dir.as_deref()).map_err(|source| ToolkitError::Read {
            path: out_dir.clone().unwrap_or_else(std::env::temp_dir),
            source,
        })?;
        let _guard = crate::guard::ScratchGuard::new(scratch.path().to_path_buf());
        let out = scratch.path().join("out.ptx");
        let (ptx, command) = match nvrtc_first
            .then(|| self.nvrtc_ptx(&file, &source, target, opts, instances))
            .flatten()
        {
            Some(done) => done,
            None if !instances.is_empty() => return Ok(None),
            None => (
                self.run_nvcc(&flags, &file, &out)?,
                self.command_line(&flags, &file, &out),
            ),
        };
        if let Some(dir) = out_dir.as_deref() {
            if let Err(e) = cache::store(dir, &key, &ptx) {
                cache_error = Some(format!("compiled PTX not cached: {e}"));
            }
        }
        Ok(Some(Compiled {
            by_nvrtc: ptx.ends_with(NVRTC_MARK),
            ptx,
            command,
            cached: false,
            seconds: start.elapsed().as_secs_f64(),
            cache_error,
            cache_note,
        }))
    }

    /// The flags before the file, in order.
    fn flags(&self, target: &Target, opts: &CompileOptions) -> Vec<OsString> {
        let mut f: Vec<OsString> = vec![
            "-ptx".into(),
            "-lineinfo".into(),
            format!("-arch={}", target.sm).into(),
        ];
        for d in &opts.defines {
            let d = d.strip_prefix("-D").unwrap_or(d);
            f.push(format!("-D{d}").into());
        }
        for dir in &opts.include_dirs {
            f.push("-I".into());
            f.push(dir.clone().into_os_string());
        }
        for dir in &self.include_dirs {
            f.push("-isystem".into());
            f.push(dir.clone().into_os_string());
        }
        if let Some(std) = &opts.std {
            let std = std.strip_prefix("-std=").unwrap_or(std);
            f.push(format!("-std={std}").into());
        }
        if let Some(o) = &opts.opt_level {
            let o = o.strip_prefix('-').unwrap_or(o);
            let o = o.strip_prefix('O').unwrap_or(o);
            f.push(format!("-O{o}").into());
        }
        f.extend(opts.extra.iter().map(OsString::from));
        f
    }

    /// The PTX of `file` (its bytes `source`) from NVRTC, in-process, with the options nvcc
    /// would get, and the options as a command line; `None` when NVRTC is missing, of another
    /// release than nvcc, or refuses the file (host code, a system header it lacks): nvcc
    /// compiles it then.
    ///
    /// NVRTC takes 0.03–0.08 s where nvcc takes 0.3–0.7 s (nvcc preprocesses the host headers
    /// and starts cicc), measured on this project's 2-core machine, and gives the same
    /// instructions: on the repository's 38 kernel files that both compile, the PTX is the
    /// same but for debug strings, assert's function names (`checked_copy` for nvcc's
    /// `void checked_copy(const float *, float *, int)`) and `.weak` for `.visible` on
    /// template instantiations.
    #[cfg(feature = "nvrtc")]
    fn nvrtc_ptx(
        &self,
        file: &Path,
        source: &[u8],
        target: &Target,
        opts: &CompileOptions,
        instances: &[String],
    ) -> Option<(String, String)> {
        let cc = target_cc(target)?;
        // Only the NVRTC of nvcc's own release (the one nvcc's headers and cicc go with).
        let (major, minor) = crate::nvrtc::version().ok()?;
        if format!("{major}.{minor}") != self.version {
            return None;
        }
        let source = std::str::from_utf8(source).ok()?;
        let name = file.to_str()?;
        // nvcc looks for `#include "…"` beside the including file first; NVRTC only in -I.
        let mut include_dirs: Vec<String> = file
            .parent()
            .map(|d| d.display().to_string())
            .into_iter()
            .collect();
        include_dirs.extend(opts.include_dirs.iter().map(|d| d.display().to_string()));
        include_dirs.extend(self.include_dirs.iter().map(|d| d.display().to_string()));
        let program = crate::nvrtc::Program {
            file: name,
            source,
            kernels: instances.to_vec(),
            cc,
            defines: opts
                .defines
                .iter()
                .map(|d| d.strip_prefix("-D").unwrap_or(d).to_string())
                .collect(),
            include_dirs,
            lineinfo: true,
            std: opts.std.clone(),
        };
        let (mut ptx, _) = crate::nvrtc::compile_ptx(&program).ok()?;
        if !ptx.ends_with('\n') {
            ptx.push('\n');
        }
        ptx.push_str(NVRTC_MARK);
        let options = crate::nvrtc::ptx_options(&program);
        let command = std::iter::once("NVRTC".to_string())
            .chain(options.iter().map(|o| shell_quote(o)))
            .chain([shell_quote(name)])
            .collect::<Vec<_>>()
            .join(" ");
        Some((ptx, command))
    }

    #[cfg(not(feature = "nvrtc"))]
    fn nvrtc_ptx(
        &self,
        _file: &Path,
        _source: &[u8],
        _target: &Target,
        _opts: &CompileOptions,
        _instances: &[String],
    ) -> Option<(String, String)> {
        None
    }

    /// Runs nvcc and reads the PTX it wrote to `out`.
    fn run_nvcc(
        &self,
        flags: &[OsString],
        file: &Path,
        out: &Path,
    ) -> Result<String, ToolkitError> {
        let mut cmd = Command::new(&self.nvcc);
        cmd.args(flags).arg(file).arg("-o").arg(out);
        // nvcc runs cicc, cudafe++ and ptxas from its own folder and nvvm/bin (its
        // nvcc.profile says so, but a pip wheel's folders are not on PATH): put them first.
        if let Some(bin) = self.nvcc.parent() {
            let mut path: Vec<PathBuf> = vec![bin.to_path_buf()];
            if let Some(root) = bin.parent() {
                path.push(root.join("nvvm").join("bin"));
            }
            path.retain(|p| p.is_dir());
            if let Some(old) = std::env::var_os("PATH") {
                path.extend(std::env::split_paths(&old));
            }
            if let Ok(joined) = std::env::join_paths(path) {
                cmd.env("PATH", joined);
            }
        }
        let command = self.command_line(flags, file, out);
        let output = crate::guard::run_tool(&mut cmd, "nvcc", &command)?;
        if !output.status.success() {
            return Err(failed(command, "nvcc", &output));
        }
        std::fs::read_to_string(out).map_err(|source| ToolkitError::Read {
            path: out.to_path_buf(),
            source,
        })
    }

    /// The command line, shell-quoted.
    fn command_line(&self, flags: &[OsString], file: &Path, out: &Path) -> String {
        std::iter::once(self.nvcc.as_os_str())
            .chain(flags.iter().map(OsString::as_os_str))
            .chain([file.as_os_str(), OsStr::new("-o"), out.as_os_str()])
            .map(|a| shell_quote(&a.to_string_lossy()))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// The comment line that ends the PTX NVRTC made (kept in the cache with it), so that a
/// cached entry still says which compiler made it.
pub const NVRTC_MARK: &str = "// compiled by NVRTC (warpscope)\n";

/// Whether [`Toolkit::compile_ptx`] tries NVRTC before nvcc: built with the `nvrtc`
/// feature, neither [`CompileOptions::nvcc_only`] nor `WARPSCOPE_NVCC_ONLY` set, a plain `sm_XY` target, and no option NVRTC does not
/// share with nvcc (an optimisation level, further nvcc arguments).
fn nvrtc_takes(target: &Target, opts: &CompileOptions) -> bool {
    cfg!(feature = "nvrtc")
        && !opts.nvcc_only
        && std::env::var_os("WARPSCOPE_NVCC_ONLY").is_none()
        && target_cc(target).is_some()
        && opts.opt_level.is_none()
        && opts.extra.is_empty()
}

/// The CC of a plain target: `sm_90` → (9, 0), `sm_100` → (10, 0); `None` for `sm_90a`.
fn target_cc(target: &Target) -> Option<(u32, u32)> {
    let digits = target.sm.strip_prefix("sm_")?;
    if digits.len() < 2 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let n: u32 = digits.parse().ok()?;
    Some((n / 10, n % 10))
}

/// Whether nvcc takes `file` as CUDA by its extension (`.cu`); other names need `-x cu`.
pub fn is_cu_file(file: &Path) -> bool {
    file.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("cu"))
}

/// The error of `tool`, run as `command`, that exited with a failure: what it printed
/// (standard error, then standard output), or that it printed nothing.
pub(crate) fn failed(command: String, tool: &str, output: &std::process::Output) -> ToolkitError {
    let mut stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    let stdout = String::from_utf8_lossy(&output.stdout);
    if !stdout.trim().is_empty() {
        if !stderr.is_empty() && !stderr.ends_with('\n') {
            stderr.push('\n');
        }
        stderr.push_str(&stdout);
    }
    if stderr.trim().is_empty() {
        stderr = format!("({tool} printed nothing; it exited with {})", output.status);
    }
    ToolkitError::Compile { command, stderr }
}

/// `arg` as a POSIX shell reads it back: bare when safe, else in single quotes.
fn shell_quote(arg: &str) -> String {
    let safe = !arg.is_empty()
        && arg
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_=+./:,@%".contains(c));
    if safe {
        arg.to_string()
    } else {
        format!("'{}'", arg.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nvrtc_takes_plain_targets_without_nvcc_only_options() {
        let t = |sm: &str| Target {
            sm: sm.into(),
            note: None,
        };
        assert_eq!(target_cc(&t("sm_90")), Some((9, 0)));
        assert_eq!(target_cc(&t("sm_75")), Some((7, 5)));
        assert_eq!(target_cc(&t("sm_100")), Some((10, 0)));
        assert_eq!(target_cc(&t("sm_121")), Some((12, 1)));
        assert_eq!(target_cc(&t("sm_90a")), None);
        assert_eq!(target_cc(&t("compute_90")), None);
        let plain = CompileOptions::default();
        assert_eq!(nvrtc_takes(&t("sm_90"), &plain), cfg!(feature = "nvrtc"));
        assert!(!nvrtc_takes(&t("sm_90a"), &plain));
        for opts in [
            CompileOptions {
                opt_level: Some("1".into()),
                ..Default::default()
            },
            CompileOptions {
                extra: vec!["--use_fast_math".into()],
                ..Default::default()
            },
            CompileOptions {
                nvcc_only: true,
                ..Default::default()
            },
        ] {
            assert!(!nvrtc_takes(&t("sm_90"), &opts), "{opts:?}");
        }
    }

    #[test]
    fn flags_are_normalised() {
        let tk = crate::test_toolkit("13.5", &[90]);
        let opts = CompileOptions {
            defines: vec!["N=4".into(), "-DFAST".into()],
            include_dirs: vec!["inc dir".into()],
            std: Some("-std=c++17".into()),
            opt_level: Some("O2".into()),
            extra: vec!["--use_fast_math".into()],
            nvcc_only: false,
        };
        let target = tk.target_for_cc(9, 0);
        let flags = tk.flags(&target, &opts);
        let line = tk.command_line(&flags, Path::new("/k.cu"), Path::new("/o.ptx"));
        assert_eq!(
            line,
            "/opt/cuda/bin/nvcc -ptx -lineinfo -arch=sm_90 -DN=4 -DFAST -I 'inc dir' \
             -std=c++17 -O2 --use_fast_math /k.cu -o /o.ptx"
        );
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
    }
}
