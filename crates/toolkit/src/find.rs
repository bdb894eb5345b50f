//! Finding `nvcc`: `--nvcc`, `CUDA_HOME`, `CUDA_PATH`, `PATH`, then the pip wheels.

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::fmt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use crate::{Toolkit, ToolkitError};

/// How long `nvcc --version` and `nvcc --list-gpu-arch` may take: a guard against a hung
/// tool only, generous enough that a loaded machine never changes which compiler is found.
const NVCC_PROBE_TIMEOUT: Duration = Duration::from_secs(120);
/// How long a Python interpreter may take to name its site-packages folders (a hang guard,
/// as above; a virtual environment's are found without running Python).
const PYTHON_TIMEOUT: Duration = Duration::from_secs(60);

/// Where a [`Toolkit`]'s `nvcc` was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// Given explicitly (`--nvcc PATH`).
    Flag,
    /// `$CUDA_HOME/bin/nvcc`.
    CudaHome,
    /// `$CUDA_PATH/bin/nvcc`.
    CudaPath,
    /// `nvcc` on `PATH`.
    Path,
    /// A pip wheel (`nvidia-cuda-nvcc`) installed in this site-packages folder.
    PipWheel(PathBuf),
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::Flag => f.write_str("--nvcc"),
            Source::CudaHome => f.write_str("CUDA_HOME"),
            Source::CudaPath => f.write_str("CUDA_PATH"),
            Source::Path => f.write_str("PATH"),
            Source::PipWheel(site) => write!(f, "the pip wheel in {}", site.display()),
        }
    }
}

/// The environment variables the search reads, passed as a value so that tests can search
/// a made-up environment without touching the process's.
#[derive(Debug, Clone, Default)]
pub(crate) struct Env {
    vars: BTreeMap<String, OsString>,
}

impl Env {
    /// The process's environment.
    pub(crate) fn process() -> Env {
        Env {
            vars: std::env::vars_os()
                .filter_map(|(k, v)| Some((k.into_string().ok()?, v)))
                .collect(),
        }
    }

    /// An environment with exactly these variables (tests).
    #[cfg(test)]
    pub(crate) fn of(vars: &[(&str, &OsStr)]) -> Env {
        Env {
            vars: vars
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_os_string()))
                .collect(),
        }
    }

    /// The variable's value, if set and not empty.
    pub(crate) fn get(&self, name: &str) -> Option<&OsStr> {
        self.vars
            .get(name)
            .map(OsString::as_os_str)
            .filter(|v| !v.is_empty())
    }

    /// The executable `name` (with the platform's `.exe`) in the first `PATH` folder that
    /// has it.
    fn which(&self, name: &str) -> Option<PathBuf> {
        let path = self.get("PATH")?;
        std::env::split_paths(path)
            .filter(|dir| !dir.as_os_str().is_empty())
            .map(|dir| dir.join(exe(name)))
            .find(|p| is_executable(p))
    }
}

/// `name` with the platform's executable suffix.
fn exe(name: &str) -> String {
    format!("{name}{}", std::env::consts::EXE_SUFFIX)
}

fn is_executable(p: &Path) -> bool {
    let Ok(meta) = p.metadata() else {
        return false;
    };
    if !meta.is_file() {
        return false;
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        meta.permissions().mode() & 0o111 != 0
    }
    #[cfg(not(unix))]
    {
        true
    }
}

/// Finds a CUDA compiler and describes it ([`Toolkit::probe`]).
///
/// Looks, in order, at: `explicit` (`--nvcc PATH`: the `nvcc` file, or a toolkit folder
/// or its `bin/`); `$CUDA_HOME/bin/nvcc`; `$CUDA_PATH/bin/nvcc`; `nvcc` on `PATH`; then
/// the pip wheels (`nvidia/cu13/bin/nvcc`, or the CUDA 12 layout
/// `nvidia/cuda_nvcc/bin/nvcc`) in the site-packages of the active Python environment:
/// `$VIRTUAL_ENV`'s, then those that the `python3` and `python` on `PATH` report
/// (`sysconfig` purelib/platlib, `site.getsitepackages()`, the user site; 5 s at most each).
///
/// Errors: with `explicit`, [`ToolkitError::ExplicitMissing`] or
/// [`ToolkitError::NotRunnable`] for that path alone. Without it,
/// [`ToolkitError::NotFound`], which lists what was searched (a candidate that exists but
/// does not run is named there and skipped) and how to install a compiler.
///
/// A toolkit found is remembered for the process (keyed by `explicit` and the variables the
/// search reads), so `nvcc --version` runs once however many kernels are analyzed.
pub fn find(explicit: Option<&Path>) -> Result<Toolkit, ToolkitError> {
    type Found = Vec<(Vec<Option<OsString>>, Toolkit)>;
    static FOUND: std::sync::Mutex<Found> = std::sync::Mutex::new(Vec::new());
    let env = Env::process();
    let mut key: Vec<Option<OsString>> = ["CUDA_HOME", "CUDA_PATH", "PATH", "VIRTUAL_ENV"]
        .iter()
        .map(|v| env.get(v).map(OsStr::to_os_string))
        .collect();
    key.push(explicit.map(|p| p.as_os_str().to_os_string()));
    let known = |f: &Found| f.iter().find(|(k, _)| *k == key).map(|(_, t)| t.clone());
    if let Some(t) = FOUND.lock().ok().and_then(|f| known(&f)) {
        return Ok(t);
    }
    let t = find_in(explicit, &env)?;
    if let Ok(mut f) = FOUND.lock() {
        f.push((key, t.clone()));
    }
    Ok(t)
}

/// [`find`] in the environment `env` instead of the process's.
pub(crate) fn find_in(explicit: Option<&Path>, env: &Env) -> Result<Toolkit, ToolkitError> {
    if let Some(path) = explicit {
        // A folder is taken as a toolkit root or its bin folder.
        let nvcc = if path.is_dir() {
            [path.join("bin").join(exe("nvcc")), path.join(exe("nvcc"))]
                .into_iter()
                .find(|p| p.is_file())
                .unwrap_or_else(|| path.to_path_buf())
        } else {
            path.to_path_buf()
        };
        if !nvcc.exists() {
            return Err(ToolkitError::ExplicitMissing {
                path: path.to_path_buf(),
            });
        }
        return Toolkit::probe(&nvcc, Source::Flag);
    }

    let mut searched = Vec::new();
    let attempt = |nvcc: PathBuf, source: Source, label: String, searched: &mut Vec<String>| {
        match Toolkit::probe(&nvcc, source) {
            Ok(tk) => Some(tk),
            Err(e) => {
                searched.push(format!(
                    "{label} ({} does not run: {})",
                    nvcc.display(),
                    short(&e)
                ));
                None
            }
        }
    };

    for (var, source) in [
        ("CUDA_HOME", Source::CudaHome),
        ("CUDA_PATH", Source::CudaPath),
    ] {
        match env.get(var) {
            None => searched.push(format!("{var} (unset)")),
            Some(root) => {
                let nvcc = Path::new(root).join("bin").join(exe("nvcc"));
                if nvcc.is_file() {
                    if let Some(tk) = attempt(nvcc, source, var.to_string(), &mut searched) {
                        return Ok(tk);
                    }
                } else {
                    searched.push(format!("{var} (no {})", nvcc.display()));
                }
            }
        }
    }

    match env.which("nvcc") {
        Some(nvcc) => {
            if let Some(tk) = attempt(nvcc, Source::Path, "PATH".into(), &mut searched) {
                return Ok(tk);
            }
        }
        None => searched.push("PATH (no nvcc)".into()),
    }

    let mut sites: Vec<PathBuf> = Vec::new();
    let mut check_sites = |new: Vec<PathBuf>, searched: &mut Vec<String>| -> Option<Toolkit> {
        for site in new {
            if sites.contains(&site) {
                continue;
            }
            sites.push(site.clone());
            if let Some(nvcc) = wheel_nvcc(&site) {
                let label = format!("pip wheels in {}", site.display());
                if let Some(tk) = attempt(nvcc, Source::PipWheel(site.clone()), label, searched) {
                    return Some(tk);
                }
            } else if site.join("nvidia").join("cuda_nvcc").is_dir() {
                searched.push(format!(
                    "{} (nvidia/cuda_nvcc has no bin/nvcc: the CUDA 12 wheel ships only ptxas)",
                    site.display()
                ));
            }
        }
        None
    };

    let venv = env.get("VIRTUAL_ENV").map(PathBuf::from);
    if let Some(venv) = &venv {
        if let Some(tk) = check_sites(venv_site_dirs(venv), &mut searched) {
            return Ok(tk);
        }
    }
    let mut pythons: Vec<PathBuf> = Vec::new();
    if let Some(venv) = &venv {
        for p in [
            venv.join("bin").join(exe("python")),
            venv.join("Scripts").join(exe("python")),
        ] {
            if is_executable(&p) {
                pythons.push(p);
            }
        }
    }
    pythons.extend(env.which("python3"));
    pythons.extend(env.which("python"));
    pythons.dedup();
    let mut asked = Vec::new();
    for py in pythons {
        if asked.contains(&py) {
            continue;
        }
        asked.push(py.clone());
        if let Some(tk) = check_sites(python_site_dirs(&py), &mut searched) {
            return Ok(tk);
        }
    }
    let listed: Vec<String> = sites
        .iter()
        .filter(|s| s.is_dir())
        .map(|s| s.display().to_string())
        .collect();
    searched.push(if listed.is_empty() {
        if asked.is_empty() {
            "pip wheels (no VIRTUAL_ENV, no python3 or python on PATH)".to_string()
        } else {
            "pip wheels (Python named no site-packages folder)".to_string()
        }
    } else {
        format!("pip wheels in {}", listed.join(" and "))
    });
    Err(ToolkitError::NotFound { searched })
}

/// The first line of an error, for the one-line list of `NotFound`.
fn short(e: &ToolkitError) -> String {
    let text = match e {
        ToolkitError::NotRunnable { reason, .. } => reason.clone(),
        other => other.to_string(),
    };
    text.lines().next().unwrap_or("").trim().to_string()
}

/// `nvcc` of the pip wheels installed in `site`, if any: CUDA 13's
/// `nvidia/cu13/bin/nvcc` (any `nvidia/cuNN`), or the CUDA 12 layout
/// `nvidia/cuda_nvcc/bin/nvcc`.
pub(crate) fn wheel_nvcc(site: &Path) -> Option<PathBuf> {
    let nvidia = site.join("nvidia");
    let mut roots: Vec<PathBuf> = std::fs::read_dir(&nvidia)
        .ok()?
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(OsStr::to_str)
                .and_then(|n| n.strip_prefix("cu"))
                .is_some_and(|v| !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()))
        })
        .collect();
    // The newest CUDA first (cu13 before cu12), comparing numerically.
    roots.sort_by_key(|p| {
        std::cmp::Reverse(
            p.file_name()
                .and_then(OsStr::to_str)
                .and_then(|n| n[2..].parse::<u32>().ok())
                .unwrap_or(0),
        )
    });
    roots.push(nvidia.join("cuda_nvcc"));
    roots
        .into_iter()
        .map(|r| r.join("bin").join(exe("nvcc")))
        .find(|p| is_executable(p))
}

/// The site-packages folders of a virtual environment, found without running Python.
fn venv_site_dirs(venv: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for lib in ["lib", "lib64"] {
        if let Ok(entries) = std::fs::read_dir(venv.join(lib)) {
            let mut found: Vec<PathBuf> = entries
                .filter_map(|e| e.ok())
                .filter(|e| e.file_name().to_string_lossy().starts_with("python"))
                .map(|e| e.path().join("site-packages"))
                .filter(|p| p.is_dir())
                .collect();
            found.sort();
            out.extend(found);
        }
    }
    let windows = venv.join("Lib").join("site-packages");
    if windows.is_dir() {
        out.push(windows);
    }
    out
}

/// Asks the interpreter for its site-packages folders (purelib, platlib,
/// `site.getsitepackages()`, the user site). Empty if it fails or takes over 5 s.
fn python_site_dirs(python: &Path) -> Vec<PathBuf> {
    const SCRIPT: &str = "import site, sysconfig\n\
        p = sysconfig.get_paths()\n\
        out = [p.get('purelib'), p.get('platlib')]\n\
        try:\n    out += site.getsitepackages()\n\
        except Exception:\n    pass\n\
        try:\n    out.append(site.getusersitepackages())\n\
        except Exception:\n    pass\n\
        print('\\n'.join(x for x in out if x))\n";
    let mut cmd = Command::new(python);
    cmd.arg("-c").arg(SCRIPT);
    match run_with_timeout(&mut cmd, PYTHON_TIMEOUT) {
        Ok(out) if out.status.success() => String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .map(PathBuf::from)
            .collect(),
        _ => Vec::new(),
    }
}

/// Output of a finished command.
pub(crate) type Output = std::process::Output;

/// Runs `cmd` through [`crate::guard::run_tool_within`] with the smaller of `limit` and
/// `--tool-timeout`; the error as one line of text (a timeout names the limit).
pub(crate) fn run_with_timeout(cmd: &mut Command, limit: Duration) -> Result<Output, String> {
    let tool = Path::new(cmd.get_program())
        .file_name()
        .unwrap_or_default()
        .to_string_lossy()
        .into_owned();
    let command = std::iter::once(cmd.get_program())
        .chain(cmd.get_args())
        .map(|a| a.to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join(" ");
    let limit = limit.min(crate::guard::tool_timeout());
    crate::guard::run_tool_within(cmd, &tool, &command, limit).map_err(|e| match e {
        ToolkitError::Timeout { seconds, .. } => {
            format!("no answer within {seconds} s (--tool-timeout)")
        }
        e => e.to_string(),
    })
}

impl Toolkit {
    /// Describes the `nvcc` at `nvcc`: runs `nvcc --version` (for [`Toolkit::version`]) and
    /// `nvcc --list-gpu-arch` (for [`Toolkit::supported_archs`]; left empty on toolkits
    /// too old to answer it), 30 s at most each.
    ///
    /// Errors: [`ToolkitError::NotRunnable`] if it does not start, fails, or prints no
    /// `release X.Y`.
    pub fn probe(nvcc: &Path, found_via: Source) -> Result<Toolkit, ToolkitError> {
        let not_runnable = |reason: String| ToolkitError::NotRunnable {
            path: nvcc.to_path_buf(),
            reason,
        };
        let out = run_with_timeout(Command::new(nvcc).arg("--version"), NVCC_PROBE_TIMEOUT)
            .map_err(not_runnable)?;
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        if !out.status.success() {
            let mut reason = format!("`nvcc --version` exited with {}", out.status);
            let stderr = String::from_utf8_lossy(&out.stderr);
            if let Some(line) = stderr.lines().find(|l| !l.trim().is_empty()) {
                reason.push_str(": ");
                reason.push_str(line.trim());
            }
            return Err(not_runnable(reason));
        }
        let version = parse_release(&stdout).ok_or_else(|| {
            not_runnable("`nvcc --version` names no `release X.Y`: not nvcc?".into())
        })?;
        let supported_archs = run_with_timeout(
            Command::new(nvcc).arg("--list-gpu-arch"),
            NVCC_PROBE_TIMEOUT,
        )
        .ok()
        .filter(|o| o.status.success())
        .map(|o| parse_archs(&String::from_utf8_lossy(&o.stdout)))
        .unwrap_or_default();
        let nvcc = std::path::absolute(nvcc).unwrap_or_else(|_| nvcc.to_path_buf());
        let include_dirs = toolkit_include_dirs(&nvcc, &found_via);
        Ok(Toolkit {
            nvcc,
            version,
            supported_archs,
            include_dirs,
            found_via,
            banner: stdout,
        })
    }
}

/// `13.5` from nvcc's `Cuda compilation tools, release 13.5, V13.5.37`.
pub(crate) fn parse_release(version_output: &str) -> Option<String> {
    let rest = &version_output[version_output.find("release ")? + "release ".len()..];
    let v: String = rest
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '.')
        .collect();
    let v = v.trim_end_matches('.');
    (!v.is_empty()).then(|| v.to_string())
}

/// The architecture numbers of `nvcc --list-gpu-arch` (`compute_90`, `sm_90a`, … → 90),
/// sorted and without repeats.
pub(crate) fn parse_archs(list: &str) -> Vec<u32> {
    let mut archs: Vec<u32> = list
        .split_whitespace()
        .filter_map(|w| w.strip_prefix("compute_").or_else(|| w.strip_prefix("sm_")))
        .filter_map(|n| {
            let digits: String = n.chars().take_while(char::is_ascii_digit).collect();
            digits.parse().ok()
        })
        .collect();
    archs.sort_unstable();
    archs.dedup();
    archs
}

/// The folders of the toolkit's own headers: `<nvcc>/../include`, and for the CUDA 12 pip
/// layout, whose headers are spread over several wheels, each wheel's `include`.
fn toolkit_include_dirs(nvcc: &Path, found_via: &Source) -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    if let Some(root) = nvcc.parent().and_then(Path::parent) {
        dirs.push(root.join("include"));
    }
    if let Source::PipWheel(site) = found_via {
        for wheel in [
            "cuda_runtime",
            "cuda_crt",
            "cuda_nvcc",
            "cuda_cccl",
            "cuda_nvrtc",
        ] {
            dirs.push(site.join("nvidia").join(wheel).join("include"));
        }
    }
    dirs.retain(|d| d.is_dir());
    dirs.dedup();
    dirs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn release_and_archs_parse() {
        let v = "nvcc: NVIDIA (R) Cuda compiler driver\n\
                 Cuda compilation tools, release 13.5, V13.5.37\n";
        assert_eq!(parse_release(v).as_deref(), Some("13.5"));
        assert_eq!(parse_release("nothing"), None);
        let list = "compute_75\ncompute_80\ncompute_90\ncompute_120\ncompute_100\nsm_90a\n";
        assert_eq!(parse_archs(list), vec![75, 80, 90, 100, 120]);
    }

    #[test]
    fn not_found_names_the_pip_command_and_what_was_searched() {
        let env = Env::of(&[("PATH", OsStr::new(""))]);
        let err = find_in(None, &env).unwrap_err();
        let text = err.to_string();
        assert!(matches!(err, ToolkitError::NotFound { .. }), "{text}");
        assert!(text.contains(crate::PIP_INSTALL), "{text}");
        assert!(
            text.contains("`pip install nvidia-cuda-nvcc nvidia-cuda-runtime"),
            "{text}"
        );
        assert!(text.contains("CUDA_HOME (unset)"), "{text}");
        assert!(text.contains("--nvcc"), "{text}");
        assert!(text.lines().count() <= 2, "{text}");
    }

    #[test]
    fn not_found_reports_a_bad_cuda_home() {
        let env = Env::of(&[
            ("PATH", OsStr::new("")),
            ("CUDA_HOME", OsStr::new("/nonexistent/cuda")),
        ]);
        let text = find_in(None, &env).unwrap_err().to_string();
        assert!(text.contains("/nonexistent/cuda/bin/nvcc"), "{text}");
    }

    #[test]
    fn explicit_missing_is_its_own_error() {
        let env = Env::of(&[]);
        let err = find_in(Some(Path::new("/no/such/nvcc")), &env).unwrap_err();
        assert!(matches!(err, ToolkitError::ExplicitMissing { .. }));
        assert!(err.to_string().contains("/no/such/nvcc"));
    }

    /// The development venv's real wheel, found through `VIRTUAL_ENV` and through its
    /// `python3` on `PATH` (which is asked for its site-packages).
    #[test]
    fn finds_the_development_venv_wheel() {
        let venv = Path::new("/work/cuda-venv");
        if !venv.join("bin/python3").is_file() {
            use std::io::Write as _;
            let _ = writeln!(
                std::io::stderr(),
                "skipped: no CUDA compiler (no /work/cuda-venv)"
            );
            return;
        }
        let env = Env::of(&[("PATH", OsStr::new("")), ("VIRTUAL_ENV", venv.as_os_str())]);
        let tk = find_in(None, &env).unwrap();
        assert!(matches!(tk.found_via, Source::PipWheel(_)), "{tk}");
        let env = Env::of(&[("PATH", venv.join("bin").as_os_str())]);
        let tk = find_in(None, &env).unwrap();
        assert!(matches!(tk.found_via, Source::PipWheel(_)), "{tk}");
        eprintln!("{tk}");
    }

    /// A fake nvcc (a shell script) in a made-up environment, to test the search order
    /// without a toolkit.
    #[cfg(unix)]
    mod fake {
        use super::*;
        use std::os::unix::fs::PermissionsExt as _;

        fn fake_nvcc(path: &Path, release: &str) {
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            let script = format!(
                "#!/bin/sh\ncase \"$1\" in\n\
                 --version) echo 'Cuda compilation tools, release {release}, V{release}.0';;\n\
                 --list-gpu-arch) printf 'compute_75\\ncompute_80\\ncompute_86\\ncompute_90\\ncompute_120\\n';;\n\
                 *) exit 1;;\nesac\n"
            );
            std::fs::write(path, script).unwrap();
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
        }

        #[test]
        fn search_order_and_wheel_layouts() {
            let tmp = tempfile::tempdir().unwrap();
            let t = tmp.path();
            let venv = t.join("venv");
            let site = venv.join("lib/python3.11/site-packages");
            fake_nvcc(&site.join("nvidia/cu13/bin/nvcc"), "13.5");
            std::fs::create_dir_all(site.join("nvidia/cu13/include")).unwrap();
            fake_nvcc(&t.join("home/bin/nvcc"), "12.8");
            fake_nvcc(&t.join("pathdir/nvcc"), "12.4");

            // The venv's wheel, with nothing else around.
            let env = Env::of(&[("PATH", OsStr::new("")), ("VIRTUAL_ENV", venv.as_os_str())]);
            let tk = find_in(None, &env).unwrap();
            assert_eq!(tk.found_via, Source::PipWheel(site.clone()));
            assert_eq!(tk.version, "13.5");
            assert_eq!(tk.supported_archs, vec![75, 80, 86, 90, 120]);
            assert_eq!(tk.include_dirs, vec![site.join("nvidia/cu13/include")]);
            assert!(tk.found_via.to_string().contains("site-packages"));

            // PATH before the wheels, CUDA_HOME before PATH.
            let env = Env::of(&[
                ("PATH", t.join("pathdir").as_os_str()),
                ("VIRTUAL_ENV", venv.as_os_str()),
            ]);
            let tk = find_in(None, &env).unwrap();
            assert_eq!((tk.found_via, tk.version.as_str()), (Source::Path, "12.4"));
            let env = Env::of(&[
                ("PATH", t.join("pathdir").as_os_str()),
                ("CUDA_HOME", t.join("home").as_os_str()),
            ]);
            let tk = find_in(None, &env).unwrap();
            assert_eq!(
                (tk.found_via, tk.version.as_str()),
                (Source::CudaHome, "12.8")
            );
            // --nvcc before all.
            let tk = find_in(Some(&t.join("pathdir/nvcc")), &env).unwrap();
            assert_eq!((tk.found_via, tk.version.as_str()), (Source::Flag, "12.4"));

            // The CUDA 12 layout.
            let site12 = t.join("v12/lib/python3.10/site-packages");
            fake_nvcc(&site12.join("nvidia/cuda_nvcc/bin/nvcc"), "12.9");
            std::fs::create_dir_all(site12.join("nvidia/cuda_runtime/include")).unwrap();
            let env = Env::of(&[
                ("PATH", OsStr::new("")),
                ("VIRTUAL_ENV", t.join("v12").as_os_str()),
            ]);
            let tk = find_in(None, &env).unwrap();
            assert_eq!(tk.found_via, Source::PipWheel(site12.clone()));
            assert_eq!(
                tk.include_dirs,
                vec![site12.join("nvidia/cuda_runtime/include")]
            );
        }

        #[test]
        fn a_file_that_is_not_nvcc_does_not_run() {
            let tmp = tempfile::tempdir().unwrap();
            let bogus = tmp.path().join("nvcc");
            std::fs::write(&bogus, "#!/bin/sh\necho hello\n").unwrap();
            std::fs::set_permissions(&bogus, std::fs::Permissions::from_mode(0o755)).unwrap();
            let err = find_in(Some(&bogus), &Env::of(&[])).unwrap_err();
            assert!(matches!(err, ToolkitError::NotRunnable { .. }), "{err}");
            assert!(err.to_string().contains("not nvcc"), "{err}");
        }
    }
}
