//! `warpscope launches FILE.cu`: the `<<<…>>>` launches of a file's host code, and what
//! `analyze --launch N` / `explain --launch N` take from one of them.

use super::{emit, Format};
use anyhow::{bail, Result};
use comfy_table::{presets::UTF8_FULL_CONDENSED, ContentArrangement, Table};
use warpscope::cuda::launches::{HostLaunch, LaunchExpr};

#[derive(clap::Args)]
pub struct LaunchesArgs {
    /// The CUDA source file (.cu) with host code.
    file: String,
    /// Preprocessor macro NAME[=VALUE], as nvcc takes it (chooses #if branches and values).
    #[arg(short = 'D', value_name = "NAME[=VALUE]")]
    defines: Vec<String>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
}

/// The launches of `file`, numbered from 0. Errors: an unreadable file, a malformed -D.
fn read(file: &str, defines: &[String]) -> Result<Vec<HostLaunch>> {
    let source = super::input::read_text(file, "file")?;
    Ok(warpscope::cuda::host_launches(file, &source, defines)?)
}

/// `256`, or `` `blocks` = 4096 ``, or `` `(n + 255) / 256` (not constant) ``.
fn shown(e: &LaunchExpr) -> String {
    match &e.value {
        Some(v) if v.to_string() == e.text => e.text.clone(),
        Some(v) => format!("{} = {v}", e.text),
        None => format!("{} (not constant)", e.text),
    }
}

/// `warpscope launches`.
pub fn launches(a: LaunchesArgs) -> Result<()> {
    let list = read(&a.file, &a.defines)?;
    if let Format::Json = a.format {
        #[derive(serde::Serialize)]
        struct Out<'a> {
            file: &'a str,
            launches: &'a [HostLaunch],
        }
        let out = Out {
            file: &a.file,
            launches: &list,
        };
        return emit(None, &(serde_json::to_string_pretty(&out)? + "\n"));
    }
    if list.is_empty() {
        return emit(
            None,
            &format!("{}: no <<<…>>> launch in the host code\n", a.file),
        );
    }
    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Dynamic)
        .set_header([
            "#",
            "at",
            "kernel",
            "grid",
            "block",
            "shared bytes",
            "arguments",
        ]);
    for l in &list {
        let args: Vec<String> = l
            .args
            .iter()
            .map(|x| match (&x.param, x.pointer) {
                (Some(p), Some(true)) => format!("{p}: {} (pointer)", x.expr.text),
                (Some(p), _) => format!("{p}: {}", shown(&x.expr)),
                (None, _) => shown(&x.expr),
            })
            .collect();
        t.add_row([
            l.index.to_string(),
            format!("{}:{}:{}", a.file, l.line, l.column),
            l.kernel.clone(),
            shown(&l.grid),
            shown(&l.block),
            l.shared_bytes
                .as_ref()
                .map_or_else(|| "0".to_string(), shown),
            args.join("\n"),
        ]);
    }
    let hint = format!(
        "analyze one with: warpscope analyze {} --launch N (flags given override the launch's; what is not constant must be given)\n",
        a.file
    );
    emit(None, &format!("{t}\n{hint}"))
}

/// What a launch fixes for `analyze`/`explain`: the parts its flags did not give.
pub struct FromHost {
    pub kernel: String,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub dynamic_smem: u64,
    /// Scalar arguments with constant values that no --arg gives.
    pub args: Vec<(String, String)>,
}

/// Which launch flags the command line gave (they override the launch's).
pub struct Given<'a> {
    pub kernel: Option<&'a str>,
    pub grid: bool,
    pub block: bool,
    pub dynamic_smem: bool,
    /// Names given with --arg.
    pub args: Vec<&'a str>,
}

/// Launch `n` of `file` (text `source`) as flags.
///
/// Errors: no launch `n` (how many there are), and every part the command line does not
/// give whose expression is not a compile-time constant: the launch's place, the
/// expression, why, and the flag to give.
pub fn from_host(
    file: &str,
    source: &str,
    defines: &[String],
    n: usize,
    given: &Given,
) -> Result<FromHost> {
    let list = warpscope::cuda::host_launches(file, source, defines)?;
    let Some(l) = list.get(n) else {
        if list.is_empty() {
            bail!("--launch {n}: {file} has no <<<…>>> launch in its host code; give --kernel, --grid and --block");
        }
        bail!(
            "--launch {n}: {file} has {} launch{} (<<<…>>>), numbered 0 to {}; `warpscope launches {file}` lists them",
            list.len(),
            if list.len() == 1 { "" } else { "es" },
            list.len() - 1
        );
    };
    let mut missing = Vec::new();
    let why = |e: &LaunchExpr| {
        e.why
            .as_deref()
            .map(|w| format!(" ({w})"))
            .unwrap_or_default()
    };
    let mut dims = |e: &LaunchExpr, what: &str, flag: &str| -> [u32; 3] {
        match e.value.map(|v| (v, v.dims())) {
            Some((_, Some(d))) => d,
            Some((v, None)) => {
                missing.push(format!(
                    "the {what} `{}` is {v}, not launch dimensions (1 or more each); give {flag}",
                    e.text
                ));
                [1; 3]
            }
            None => {
                missing.push(format!(
                    "the {what} `{}` is not a compile-time constant{}; give {flag}",
                    e.text,
                    why(e)
                ));
                [1; 3]
            }
        }
    };
    let grid = if given.grid {
        [1; 3]
    } else {
        dims(&l.grid, "grid", "--grid")
    };
    let block = if given.block {
        [1; 3]
    } else {
        dims(&l.block, "block", "--block")
    };
    let dynamic_smem = match (&l.shared_bytes, given.dynamic_smem) {
        (None, _) | (_, true) => 0,
        (Some(e), false) => match e.value {
            Some(warpscope::cuda::launches::Value::Int(b)) if b >= 0 => b as u64,
            _ => {
                missing.push(format!(
                    "the shared-memory size `{}` is not a compile-time constant number of bytes{}; give --dynamic-smem",
                    e.text,
                    why(e)
                ));
                0
            }
        },
    };
    // Arguments by position, for the launch's own kernel.
    let mut args = Vec::new();
    if given.kernel.is_none_or(|k| k == l.kernel) {
        for a in &l.args {
            let (Some(p), Some(false)) = (&a.param, a.pointer) else {
                continue;
            };
            if given.args.contains(&p.as_str()) {
                continue;
            }
            match a.expr.value {
                Some(v @ (warpscope::cuda::launches::Value::Int(_)
                | warpscope::cuda::launches::Value::Float(_))) => {
                    args.push((p.clone(), v.to_string()))
                }
                _ => missing.push(format!(
                    "the argument `{}` of parameter '{p}' is not a compile-time constant{}; give --arg {p}=VALUE",
                    a.expr.text,
                    why(&a.expr)
                )),
            }
        }
    }
    if !missing.is_empty() {
        bail!(
            "launch {n} ({file}:{}:{}): {}",
            l.line,
            l.column,
            missing.join("; ")
        );
    }
    Ok(FromHost {
        kernel: given.kernel.unwrap_or(&l.kernel).to_string(),
        grid,
        block,
        dynamic_smem,
        args,
    })
}
