//! The line that says what an analysis reads, for standard error before the run: the front
//! end, the compiler and its version, the PTX target and the CCs it is costed for, e.g.
//! "analyzing saxpy.cu: nvcc 13.0 → sm_90 PTX, SASS checked, costed for CC 7.5, 9.0; own
//! targets compared: sm_75 for 7.5".

use std::sync::Arc;
use warpscope_model::Arch;

use crate::load::Loaded;
use crate::AnalyzeRequest;

/// A function [`crate::analyze`] calls once the front end has read the kernel, with the
/// line saying what is analyzed (front end, compiler and version, PTX target, CCs; the
/// command line prints it on standard error, `-q` drops it).
#[derive(Clone)]
pub struct OnLoaded(pub Arc<dyn Fn(&str) + Send + Sync>);

impl std::fmt::Debug for OnLoaded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("OnLoaded(..)")
    }
}

/// The CCs as "1.0, 9.0", or "1.0–7.2" for three or more in a row of the table.
fn cc_span(ccs: &[&Arch]) -> String {
    let mut v: Vec<&Arch> = ccs.to_vec();
    v.sort_by_key(|a| a.cc);
    if v.len() >= 3 {
        let all = warpscope_model::arch::all();
        let first = all.iter().position(|a| a.cc == v[0].cc);
        let last = all.iter().position(|a| a.cc == v[v.len() - 1].cc);
        if let (Some(f), Some(l)) = (first, last) {
            if l + 1 - f == v.len() {
                return format!("{}–{}", v[0].cc, v[v.len() - 1].cc);
            }
        }
    }
    v.iter()
        .map(|a| a.cc.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// What `kernel` (as [`crate::load`] read it for `req`) is, for the CCs `archs`:
///
/// - the source interpreter: "analyzing F: CUDA source interpreter, for CC …";
/// - a `.ptx` file: "analyzing F: PTX file (.target sm_90), SASS checked, for CC …";
/// - a `.cu` through nvcc (or NVRTC where it takes the file, named so): the one compile all
///   CCs are costed on (9.0's target when 9.0 is
///   asked for, else the newest CC's, as [`crate::compiled`] picks it), then the other CCs'
///   own targets, whose memory instructions are compared with it (a note names those that
///   differ), and those nvcc has no target for;
/// - a `.cu` through NVRTC: its `compute_XX` target.
pub(crate) fn describe(req: &AnalyzeRequest, archs: &[&'static Arch], kernel: &Loaded) -> String {
    let what = match kernel {
        Loaded::Source(..) => format!("CUDA source interpreter, for CC {}", cc_span(archs)),
        Loaded::Compiled(k) => {
            let sass = k.ptxas.as_ref().map(|p| p.sass_target.as_str());
            if crate::is_ptx_file(&req.file) {
                let target = req
                    .source
                    .lines()
                    .find_map(|l| l.trim().strip_prefix(".target"))
                    .map(|t| t.split([',', ' ']).find(|w| !w.is_empty()).unwrap_or("?"))
                    .unwrap_or("?");
                format!(
                    "PTX file (.target {target}){}, for CC {}",
                    checked(sass, target),
                    cc_span(archs)
                )
            } else {
                compiled(req, archs, sass, k.by_nvrtc)
            }
        }
    };
    format!("analyzing {}: {what}", req.file)
}

/// The nvcc (or NVRTC) part of [`describe`]; `by_nvrtc`: NVRTC compiled the file although
/// nvcc is there (it takes device-only files, [`warpscope_toolkit::Toolkit::compile_ptx`]).
fn compiled(
    req: &AnalyzeRequest,
    archs: &[&'static Arch],
    sass: Option<&str>,
    by_nvrtc: bool,
) -> String {
    let main = archs
        .iter()
        .find(|a| a.cc.major == 9 && a.cc.minor == 0)
        .or_else(|| archs.iter().max_by_key(|a| a.cc))
        .copied();
    let Some(main) = main else {
        return "compiled path".into();
    };
    let tk = match crate::compiled::toolkit(&req.compile) {
        Ok(tk) => tk,
        // load() fell back to NVRTC (feature `cuda`): compute_75 at least.
        Err(_) => {
            let cc = (main.cc.major, main.cc.minor).max((7, 5));
            let t = format!("sm_{}{}", cc.0, cc.1);
            return format!(
                "NVRTC → compute_{}{} PTX{}, costed for CC {}",
                cc.0,
                cc.1,
                checked(sass, &t),
                cc_span(archs)
            );
        }
    };
    let target = |a: &Arch| tk.target_for_cc(a.cc.major as u32, a.cc.minor as u32);
    let sm = target(main).sm;
    let mut own: Vec<(String, Vec<&'static Arch>, bool)> = Vec::new();
    for &a in archs {
        let t = target(a);
        if t.sm == sm {
            continue;
        }
        let older = tk
            .supported_archs
            .first()
            .is_some_and(|&o| u32::from(a.cc.major) * 10 + u32::from(a.cc.minor) < o);
        match own.iter_mut().find(|(s, _, o)| *s == t.sm && *o == older) {
            Some((_, v, _)) => v.push(a),
            None => own.push((t.sm, vec![a], older)),
        }
    }
    let mut s = format!(
        "{} {} → {sm} PTX{}, costed for CC {}",
        if by_nvrtc { "NVRTC" } else { "nvcc" },
        tk.version,
        checked(sass, &sm),
        cc_span(archs)
    );
    if !own.is_empty() {
        let parts: Vec<String> = own
            .iter()
            .map(|(t, v, older)| {
                format!(
                    "{t} for {}{}",
                    cc_span(v),
                    if *older {
                        format!(" (CUDA {} has none older)", tk.version)
                    } else {
                        String::new()
                    }
                )
            })
            .collect();
        s.push_str(&format!("; own targets compared: {}", parts.join(", ")));
    }
    s
}

/// ", SASS checked" when ptxas assembled for `target`, ", SASS checked for sm_90a" for
/// another target (the PTX's own `a`/`f` one), nothing without the check.
fn checked(sass: Option<&str>, target: &str) -> String {
    match sass {
        Some(t) if t == target => ", SASS checked".into(),
        Some(t) => format!(", SASS checked for {t}"),
        None => String::new(),
    }
}
