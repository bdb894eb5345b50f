//! Nsight Compute (`ncu`): finding it, running a program under it, reading its CSV, and
//! comparing its counters with warpscope's predictions.
//!
//! The counters are those of `scripts/h100/measure.sh` (the H100 measurements in
//! `tests/data/h100/`), read per kernel launch with
//! `ncu --clock-control none --print-units base --csv --metrics <list>`.
//!
//! # The agreement rule (`warpscope verify`'s exit code)
//!
//! Compared, and required to be equal: global load and store requests and sectors, shared
//! load and store wavefronts, texture-fetch requests and sectors, surface load and store
//! requests and sectors ([`COUNTERS`] with `compared: true`), as the hardware counters read
//! them. One documented exception, [`Verdict::KnownNoise`]: the only differences are
//! shared-load (or shared-store) wavefronts measured *above* the model, and ncu's
//! instrumented count of the same quantity — the `SourceCounters` section's "L1 Wavefronts
//! Shared" of the kernel's shared-load (store) instructions, computed by SASS patching from
//! the addresses each warp issued — equals the prediction exactly. On an H100 the hardware
//! counter `l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld` overcounts loads issued right
//! at block start by a varying amount (never below the model; +0 to +14 % seen for load-only
//! kernels, up to +40 % with stores after the loads; tests/data/h100/examples-noisy.csv,
//! scripts/h100/shared_noise.sh), while the instrumented count does not vary; its `_op_st`
//! twin overcounts the tiled matmul's stores the same way (561,680 and 4,223,605 against the
//! instrumented 524,288 and 4,194,304, which the model predicts: tests/data/h100/compiled/
//! compiled.csv). Such a launch is
//! reported as noisy, with both figures and the excess, and passes unless `--strict`. No
//! tolerance is applied anywhere: everything else that differs fails. DRAM bytes and
//! shared-load instruction counts are shown, not compared (DRAM bytes vary run to run; ncu
//! counts predicated-off shared loads as instructions).

use crate::error::{Error, Result};
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// One counter: the column name warpscope uses (as in tests/data/h100/examples.csv), the ncu
/// metric, and whether `verify` requires equality.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Counter {
    pub column: &'static str,
    pub metric: &'static str,
    pub compared: bool,
}

/// The counter of `verify` for warpscope's figure `m` ([`warpscope_report::ncu`], the one
/// table of metric names that `--format csv` uses too).
const fn of(m: warpscope_report::ncu::Metric, compared: bool) -> Counter {
    Counter {
        column: m.column,
        metric: m.metric,
        compared,
    }
}

/// The counters `verify` reads, in display order: warpscope's figures named as in
/// [`warpscope_report::ncu`], and DRAM bytes (shown, never predicted).
pub const COUNTERS: &[Counter] = {
    use warpscope_report::ncu::*;
    &[
        of(GLOBAL_LD_REQUESTS, true),
        of(GLOBAL_LD_SECTORS, true),
        of(GLOBAL_ST_REQUESTS, true),
        of(GLOBAL_ST_SECTORS, true),
        of(SHARED_LD_WAVEFRONTS, true),
        of(SHARED_ST_WAVEFRONTS, true),
        of(SHARED_LD_INSTRUCTIONS, false),
        of(LOCAL_LD_REQUESTS, true),
        of(LOCAL_LD_SECTORS, true),
        of(LOCAL_ST_REQUESTS, true),
        of(LOCAL_ST_SECTORS, true),
        of(TEXTURE_LD_REQUESTS, true),
        of(TEXTURE_LD_SECTORS, true),
        of(SURFACE_LD_REQUESTS, true),
        of(SURFACE_LD_SECTORS, true),
        of(SURFACE_ST_REQUESTS, true),
        of(SURFACE_ST_SECTORS, true),
        of(GLOBAL_TMA_LD_SECTORS, true),
        of(GLOBAL_TMA_ST_SECTORS, true),
        of(SHARED_GMMA_WAVEFRONTS, true),
        of(DSMEM_TMA_ST_SECTORS, true),
        of(GLOBAL_TMA_RED_SECTORS, true),
        of(DSMEM_TMA_RED_SECTORS, true),
        Counter {
            column: "dram_read_bytes",
            metric: "dram__bytes_read.sum",
            compared: false,
        },
        Counter {
            column: "dram_write_bytes",
            metric: "dram__bytes_write.sum",
            compared: false,
        },
    ]
};

/// The `--metrics` list for [`COUNTERS`] on a GPU of compute capability `cc_major`.x: the
/// TMA, wgmma and distributed-shared-memory counters exist from 9.0 on (ncu refuses a
/// metric the chip lacks, and a counter it does not report compares as zero).
pub fn metrics_list(cc_major: u32) -> String {
    COUNTERS
        .iter()
        .filter(|c| cc_major >= 9 || !hopper_only(c.metric))
        .map(|c| c.metric)
        .collect::<Vec<_>>()
        .join(",")
}

/// Whether an ncu metric exists from CC 9.0 on only: the TMA unit's (`_op_tma_`), wgmma's
/// (`_op_gmma`) and distributed shared memory's (`_dshared`).
fn hopper_only(metric: &str) -> bool {
    metric.contains("_op_tma_") || metric.contains("_op_gmma") || metric.contains("_dshared")
}

/// The ncu executable: `explicit` (`--ncu PATH`), else `ncu` on `PATH`, else the usual
/// install folders (`/usr/local/cuda/bin`, `/opt/nvidia/nsight-compute/*/`).
///
/// Errors: [`Error::Ncu`] saying where it looked.
pub fn find(explicit: Option<&str>) -> Result<PathBuf> {
    if let Some(p) = explicit {
        let p = PathBuf::from(p);
        if p.is_file() {
            return Ok(p);
        }
        return Err(Error::Ncu(format!("--ncu {}: no such file", p.display())));
    }
    let mut tried = Vec::new();
    if let Some(path) = std::env::var_os("PATH") {
        for d in std::env::split_paths(&path) {
            let p = d.join("ncu");
            if p.is_file() {
                return Ok(p);
            }
        }
        tried.push("PATH".to_string());
    }
    let mut dirs = vec![PathBuf::from("/usr/local/cuda/bin")];
    if let Ok(rd) = std::fs::read_dir("/opt/nvidia/nsight-compute") {
        let mut v: Vec<PathBuf> = rd.flatten().map(|e| e.path()).collect();
        v.sort();
        v.reverse();
        dirs.extend(v);
    }
    for d in dirs {
        let p = d.join("ncu");
        if p.is_file() {
            return Ok(p);
        }
        tried.push(d.display().to_string());
    }
    Err(Error::Ncu(format!(
        "ncu not found (looked in {}); install Nsight Compute or pass --ncu PATH",
        tried.join(", ")
    )))
}

/// One profiled kernel launch of ncu's raw CSV page.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct KernelResult {
    /// ncu's result ID (launch order).
    pub id: u64,
    /// The kernel name as ncu prints it (demangled, e.g. `offset<float>(float *, int)`).
    pub name: String,
    /// Metric name → value in base units (bytes, sectors, …).
    pub metrics: BTreeMap<String, f64>,
}

/// Splits one CSV line (fields in double quotes, `""` for a quote inside).
fn csv_fields(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut q = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, q) {
            ('"', true) if chars.peek() == Some(&'"') => {
                cur.push('"');
                chars.next();
            }
            ('"', _) => q = !q,
            (',', false) => out.push(std::mem::take(&mut cur)),
            (c, _) => cur.push(c),
        }
    }
    out.push(cur);
    out
}

fn unit_scale(u: &str) -> f64 {
    match u.trim() {
        "Kbyte" | "KB" => 1e3,
        "Mbyte" | "MB" => 1e6,
        "Gbyte" | "GB" => 1e9,
        "KiB" => 1024.0,
        "MiB" => 1024.0 * 1024.0,
        "GiB" => 1024.0 * 1024.0 * 1024.0,
        _ => 1.0,
    }
}

/// Parses ncu's `--csv` output of the raw/details page (one row per metric, columns `ID`,
/// `Kernel Name`, `Metric Name`, `Metric Unit`, `Metric Value`, …). Lines not starting with a
/// quote (program output, `==PROF==` lines) are skipped. Values lose thousands separators and
/// are scaled to base units. Results come back in ID order.
///
/// Errors: [`Error::Ncu`] when no CSV header is found.
pub fn parse_csv(text: &str) -> Result<Vec<KernelResult>> {
    let mut header: Option<BTreeMap<String, usize>> = None;
    let mut results: BTreeMap<u64, KernelResult> = BTreeMap::new();
    for line in text.lines() {
        if !line.starts_with('"') {
            continue;
        }
        let row = csv_fields(line);
        if row.first().map(String::as_str) == Some("ID") {
            header = Some(
                row.iter()
                    .enumerate()
                    .map(|(i, n)| (n.clone(), i))
                    .collect(),
            );
            continue;
        }
        let Some(h) = &header else { continue };
        let get = |name: &str| h.get(name).and_then(|&i| row.get(i)).map(String::as_str);
        let (Some(id), Some(kname), Some(metric), Some(value)) = (
            get("ID").and_then(|s| s.trim().parse::<u64>().ok()),
            get("Kernel Name"),
            get("Metric Name"),
            get("Metric Value"),
        ) else {
            continue;
        };
        let v = value.trim().replace(',', "");
        let Ok(x) = v.parse::<f64>() else { continue };
        let x = x * unit_scale(get("Metric Unit").unwrap_or(""));
        results
            .entry(id)
            .or_insert_with(|| KernelResult {
                id,
                name: kname.to_string(),
                metrics: BTreeMap::new(),
            })
            .metrics
            .insert(metric.to_string(), x);
    }
    if header.is_none() {
        return Err(Error::Ncu(
            "no CSV results in ncu's output (no line starting \"ID\")".into(),
        ));
    }
    Ok(results.into_values().collect())
}

/// The kernel name without template arguments: `offset<float>` → `offset`.
pub fn base_name(kernel: &str) -> &str {
    kernel.split('<').next().unwrap_or(kernel).trim()
}

/// Whether ncu's (demangled) `ncu_name` is kernel `kernel`: its base name, standing alone
/// and followed by `<`, `(` or the end (`offset<float>(float *, int)` is `offset<float>`;
/// `offset_copy(…)` is not `offset`).
pub fn name_matches(kernel: &str, ncu_name: &str) -> bool {
    let b = base_name(kernel);
    let n = ncu_name.trim();
    let mut start = 0;
    while let Some(off) = n[start..].find(b) {
        let i = start + off;
        let before_ok = i == 0 || n[..i].ends_with([' ', ':', '*', '&']);
        let rest = n[i + b.len()..].trim_start();
        let after_ok = rest.is_empty() || rest.starts_with('<') || rest.starts_with('(');
        if before_ok && after_ok {
            return true;
        }
        start = i + 1;
    }
    false
}

/// The `==ERROR==` (and permission) problems in ncu's output, as an error; `Ok` when none.
///
/// Errors: [`Error::NcuPermission`] for `ERR_NVGPUCTRPERM`; [`Error::Ncu`] with the first
/// error lines otherwise.
pub fn check_output(output: &str) -> Result<()> {
    if output.contains("ERR_NVGPUCTRPERM") {
        let line = output
            .lines()
            .find(|l| l.contains("ERR_NVGPUCTRPERM"))
            .unwrap_or("")
            .trim();
        return Err(Error::NcuPermission(line.to_string()));
    }
    let errors: Vec<&str> = output
        .lines()
        .filter(|l| l.contains("==ERROR=="))
        .take(5)
        .collect();
    if !errors.is_empty() {
        return Err(Error::Ncu(errors.join("\n")));
    }
    Ok(())
}

/// What one ncu run gave.
#[derive(Clone, Debug)]
pub struct Run {
    /// The command line run.
    pub command: Vec<String>,
    /// ncu's standard output (CSV and ==PROF== lines).
    pub stdout: String,
    /// Standard error (the profiled program's messages).
    pub stderr: String,
    /// Exit status (None when killed by a signal).
    pub status: Option<i32>,
}

/// Runs `program args…` under ncu with `ncu_args` (e.g. `--clock-control none --csv
/// --metrics …`) and returns its output, checked with [`check_output`].
///
/// Errors: [`Error::Ncu`] when ncu cannot be started or reports an error,
/// [`Error::NcuPermission`].
pub fn run(ncu: &Path, ncu_args: &[String], program: &Path, args: &[String]) -> Result<Run> {
    let run = run_unchecked(ncu, ncu_args, program, args)?;
    check_output(&format!("{}\n{}", run.stdout, run.stderr))?;
    Ok(run)
}

/// [`run`] without [`check_output`]: the output of a run that reported errors (a profiled
/// program that stopped part way), for the caller to read what it measured. ncu runs as
/// nvcc does ([`warpscope_toolkit::run_tool`]): in its own process group, killed whole
/// (the profiled program too) after `--tool-timeout` ([`warpscope_toolkit::tool_timeout`]),
/// past `--max-input-bytes` of output, or when warpscope is stopped (SIGINT, SIGTERM).
///
/// Errors: [`Error::Ncu`] when ncu cannot be started, does not finish in time or prints
/// too much (the message names the limit and the command); [`Error::NcuPermission`].
pub fn run_unchecked(
    ncu: &Path,
    ncu_args: &[String],
    program: &Path,
    args: &[String],
) -> Result<Run> {
    let mut cmd = Command::new(ncu);
    cmd.args(ncu_args).arg(program).args(args);
    let mut command = vec![ncu.display().to_string()];
    command.extend(ncu_args.iter().cloned());
    command.push(program.display().to_string());
    command.extend(args.iter().cloned());
    let out =
        warpscope_toolkit::run_tool(&mut cmd, "ncu", &command.join(" ")).map_err(|e| match e {
            warpscope_toolkit::ToolkitError::Spawn { source, .. } => {
                Error::Ncu(format!("cannot run {}: {source}", ncu.display()))
            }
            other => Error::Ncu(other.to_string()),
        })?;
    let run = Run {
        command,
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        status: out.status.code(),
    };
    if let Err(e @ Error::NcuPermission(_)) =
        check_output(&format!("{}\n{}", run.stdout, run.stderr))
    {
        return Err(e);
    }
    Ok(run)
}

/// warpscope's prediction of the counters, by column ([`Counter::column`]); columns it does
/// not predict are absent.
pub type Predicted = BTreeMap<&'static str, u64>;

/// One counter of one launch, predicted against measured.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Row {
    pub column: &'static str,
    pub metric: &'static str,
    pub predicted: Option<u64>,
    pub measured: Option<f64>,
    /// Whether the agreement rule compares this counter.
    pub compared: bool,
    /// predicted == measured (false when either is missing).
    pub equal: bool,
}

/// The outcome of one launch under the agreement rule (module doc).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Every compared hardware counter equal.
    Exact,
    /// Only the hardware shared-load (or -store) wavefronts differ, above the model, and
    /// ncu's instrumented counts of them equal the prediction.
    KnownNoise,
    /// Anything else.
    Differs,
    /// The launch could not be planned, run or measured (its note says why); nothing was
    /// compared.
    Failed,
}

impl Verdict {
    /// Whether the hardware counters alone leave the launch undecided: only shared-load or
    /// shared-store wavefronts differ, each measured above the model (the case an
    /// instrumented count settles).
    pub fn needs_instrumented(c: &Comparison) -> bool {
        let mut bad = c.rows.iter().filter(|r| r.compared && !r.equal).peekable();
        bad.peek().is_some()
            && bad.all(|r| {
                matches!(r.column, "shared_ld_wavefronts" | "shared_st_wavefronts")
                    && matches!((r.predicted, r.measured), (Some(p), Some(m)) if m > p as f64)
            })
    }
}

/// One launch's comparison.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Comparison {
    pub rows: Vec<Row>,
    pub verdict: Verdict,
    /// ncu's instrumented counts (source counters), when they were collected.
    pub instrumented: Option<BTreeMap<&'static str, f64>>,
    /// Sentences explaining a noisy or differing verdict.
    pub notes: Vec<String>,
}

impl Comparison {
    /// The comparison of a launch that could not be measured: no rows, verdict
    /// [`Verdict::Failed`], `why` as its note.
    pub fn failed(why: String) -> Comparison {
        Comparison {
            rows: Vec::new(),
            verdict: Verdict::Failed,
            instrumented: None,
            notes: vec![why],
        }
    }
}

/// Compares `predicted` with one kernel's hardware counters `measured` (and, when collected,
/// its instrumented counts) under the agreement rule.
pub fn compare(
    predicted: &Predicted,
    measured: &BTreeMap<String, f64>,
    instrumented: Option<&SourceCounts>,
) -> Comparison {
    let mut rows = Vec::new();
    for c in COUNTERS {
        let p = predicted.get(c.column).copied();
        let m = measured.get(c.metric).copied();
        // Nothing predicted and nothing reported (a metric this ncu or GPU lacks) agree.
        let equal = match (p, m) {
            (Some(p), Some(m)) => (p as f64 - m).abs() < 0.5,
            (p, None) => p.unwrap_or(0) == 0,
            (None, Some(m)) => m < 0.5,
        };
        rows.push(Row {
            column: c.column,
            metric: c.metric,
            predicted: p,
            measured: m,
            compared: c.compared,
            equal,
        });
    }
    let mut c = Comparison {
        rows,
        verdict: Verdict::Exact,
        instrumented: instrumented.map(|s| s.totals.clone()),
        notes: Vec::new(),
    };
    let bad: Vec<Row> = c
        .rows
        .iter()
        .filter(|r| r.compared && !r.equal)
        .cloned()
        .collect();
    if bad.is_empty() {
        return c;
    }
    c.verdict = Verdict::Differs;
    if Verdict::needs_instrumented(&c) {
        let mut all_noise = true;
        for r in &bad {
            let (p, m) = (r.predicted.unwrap_or(0), r.measured.unwrap_or(0.0));
            let excess = if p > 0 {
                (m / p as f64 - 1.0) * 100.0
            } else {
                f64::INFINITY
            };
            let what = if r.column == "shared_ld_wavefronts" {
                "loads"
            } else {
                "stores"
            };
            let inst = instrumented.map(|s| s.totals.get(r.column).copied().unwrap_or(0.0));
            match inst {
                Some(i) if (i - p as f64).abs() < 0.5 => c.notes.push(format!(
                    "shared-{} wavefronts: hardware counter {m:.0}, {excess:+.2} % over the prediction {p}; ncu's instrumented count (SourceCounters, SASS-patched) {i:.0} equals it: the known overcount of shared {what} at block start; passes unless --strict",
                    &what[..what.len() - 1]
                )),
                Some(i) => {
                    all_noise = false;
                    c.notes.push(format!(
                        "{}: predicted {p}, hardware counter {m:.0} ({excess:+.2} %), instrumented count {i:.0}: not the known counter noise",
                        r.column
                    ))
                }
                None => {
                    all_noise = false;
                    c.notes.push(format!(
                        "{}: predicted {p}, hardware counter {m:.0} ({excess:+.2} %); no instrumented count to tell counter noise from a model error",
                        r.column
                    ))
                }
            }
        }
        if all_noise {
            c.verdict = Verdict::KnownNoise;
        }
        return c;
    }
    for r in &bad {
        c.notes.push(match (r.predicted, r.measured) {
            (Some(p), Some(m)) => format!("{}: predicted {p}, measured {m:.0}", r.column),
            (None, Some(m)) => format!("{}: not predicted, measured {m:.0}", r.column),
            (Some(p), None) => format!(
                "{}: predicted {p}, ncu gave no value ({})",
                r.column, r.metric
            ),
            (None, None) => format!("{}: neither predicted nor measured", r.column),
        });
    }
    c
}

/// Counts of one kernel launch from ncu's source counters (`--section SourceCounters --page
/// source`): SASS-patched, per instruction, computed from the addresses each warp issued —
/// deterministic, unlike the hardware counters. Keys are [`Counter::column`] names:
/// `global_ld_requests` ("L1 Tag Requests Global" of global loads), `global_ld_sectors` ("L2
/// Theoretical Sectors Global"), the same for stores, `shared_ld_wavefronts` and
/// `shared_st_wavefronts` ("L1 Wavefronts Shared").
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct SourceCounts {
    /// The kernel as ncu names it.
    pub kernel: String,
    /// Totals over the launch.
    pub totals: BTreeMap<&'static str, f64>,
    /// Per CUDA source line of the user's file (only from `--print-source cuda,sass`).
    pub lines: BTreeMap<u32, BTreeMap<&'static str, f64>>,
}

/// The counter an instruction row adds to: (column, source-page metric).
fn source_columns(space: &str, op: &str) -> &'static [(&'static str, &'static str)] {
    match (space, op) {
        ("Global", "Load") => &[
            ("global_ld_requests", "L1 Tag Requests Global"),
            ("global_ld_sectors", "L2 Theoretical Sectors Global"),
        ],
        ("Global", "Store") => &[
            ("global_st_requests", "L1 Tag Requests Global"),
            ("global_st_sectors", "L2 Theoretical Sectors Global"),
        ],
        ("Shared", "Load") => &[("shared_ld_wavefronts", "L1 Wavefronts Shared")],
        ("Shared", "Store") => &[("shared_st_wavefronts", "L1 Wavefronts Shared")],
        _ => &[],
    }
}

/// One instruction row's contributions.
fn instruction_counts(h: &BTreeMap<String, usize>, row: &[String]) -> Vec<(&'static str, f64)> {
    let get = |name: &str| h.get(name).and_then(|&i| row.get(i)).map(|s| s.trim());
    let (Some(space), Some(op)) = (get("Address Space"), get("Access Operation")) else {
        return Vec::new();
    };
    source_columns(space, op)
        .iter()
        .filter_map(|(col, metric)| {
            let v = get(metric)?.replace(',', "").parse::<f64>().ok()?;
            Some((*col, v))
        })
        .collect()
}

/// Header map of a source-page header row: the first column of each name (the page repeats
/// "Source").
fn header_map(row: &[String]) -> BTreeMap<String, usize> {
    let mut h = BTreeMap::new();
    for (i, n) in row.iter().enumerate() {
        h.entry(n.clone()).or_insert(i);
    }
    h
}

/// Parses ncu's SASS source page (`--section SourceCounters --page source --print-source sass
/// --csv`) of a run of `launches` kernel launches into one [`SourceCounts`] per launch, in
/// launch order. Each launch's block starts with a `"Kernel Name"` row; ncu 2025.3 prints every
/// launch's block twice in a row, so when there are k × `launches` blocks every k-th is taken.
///
/// Errors: [`Error::Ncu`] when there is no block, or the block count is not a multiple of
/// `launches`.
pub fn parse_sass_page(text: &str, launches: usize) -> Result<Vec<SourceCounts>> {
    let mut blocks: Vec<SourceCounts> = Vec::new();
    let mut h: Option<BTreeMap<String, usize>> = None;
    for line in text.lines() {
        if !line.starts_with('"') {
            continue;
        }
        let row = csv_fields(line);
        match row.first().map(String::as_str) {
            Some("Kernel Name") => {
                blocks.push(SourceCounts {
                    kernel: row.get(1).cloned().unwrap_or_default(),
                    ..Default::default()
                });
                h = None;
            }
            Some("Address") => h = Some(header_map(&row)),
            Some(a) if a.starts_with("0x") => {
                let (Some(hm), Some(b)) = (&h, blocks.last_mut()) else {
                    continue;
                };
                for (col, v) in instruction_counts(hm, &row) {
                    *b.totals.entry(col).or_insert(0.0) += v;
                }
            }
            _ => {}
        }
    }
    // ncu prints some kernels' pages twice, one after the other, and not others (on the
    // H100: the tiled matmuls twice and reduce_cg once, 5 blocks for 3 launches): a block
    // equal to the one before it is that repetition.
    let mut distinct: Vec<SourceCounts> = Vec::new();
    for b in &blocks {
        if distinct.last() != Some(b) {
            distinct.push(b.clone());
        }
    }
    if distinct.len() == launches && launches > 0 {
        return Ok(distinct);
    }
    // Launches alike in kernel and counts: every page printed the same number of times.
    if blocks.is_empty() || launches == 0 || !blocks.len().is_multiple_of(launches) {
        return Err(Error::Ncu(format!(
            "ncu's source page has {} kernel blocks ({} distinct) for {launches} launches",
            blocks.len(),
            distinct.len()
        )));
    }
    let k = blocks.len() / launches;
    Ok(blocks.into_iter().step_by(k).collect())
}

/// Parses ncu's CUDA + SASS source page (`--print-source cuda,sass --csv`) of a run with one
/// kernel launch: instructions are attributed to the CUDA line above them (rows with a "Line
/// No"), lines counted only in the file whose path ends with `file`; each instruction address
/// is counted once (ncu prints the page twice).
///
/// Errors: [`Error::Ncu`] when no instruction row is found.
pub fn parse_cuda_sass_page(text: &str, file: &str) -> Result<SourceCounts> {
    let mut out = SourceCounts::default();
    let mut h: Option<BTreeMap<String, usize>> = None;
    let mut in_file = true;
    let mut line_no: Option<u32> = None;
    let mut seen = std::collections::BTreeSet::new();
    let want = file.trim_start_matches("./");
    for line in text.lines() {
        if !line.starts_with('"') {
            continue;
        }
        let row = csv_fields(line);
        match row.first().map(String::as_str) {
            Some("File Path") => {
                let p = row.get(1).map(String::as_str).unwrap_or("");
                in_file = std::path::Path::new(p).ends_with(want);
                line_no = None;
            }
            Some("Function Name") => out.kernel = row.get(1).cloned().unwrap_or_default(),
            Some("Line No") => h = Some(header_map(&row)),
            Some(_) => {
                let Some(hm) = &h else { continue };
                let get = |name: &str| hm.get(name).and_then(|&i| row.get(i)).map(String::as_str);
                if let Some(n) = get("Line No").and_then(|v| v.trim().parse::<u32>().ok()) {
                    line_no = Some(n);
                    continue;
                }
                let Some(addr) = get("Address").filter(|a| a.starts_with("0x")) else {
                    continue;
                };
                if !seen.insert(addr.to_string()) {
                    continue;
                }
                for (col, v) in instruction_counts(hm, &row) {
                    *out.totals.entry(col).or_insert(0.0) += v;
                    if let (true, Some(n)) = (in_file, line_no) {
                        *out.lines.entry(n).or_default().entry(col).or_insert(0.0) += v;
                    }
                }
            }
            None => {}
        }
    }
    if seen.is_empty() {
        return Err(Error::Ncu("no instructions in ncu's source page".into()));
    }
    Ok(out)
}

#[cfg(test)]
mod metric_list_tests {
    use super::*;

    #[test]
    fn gpus_before_hopper_are_asked_for_no_tma_gmma_or_dshared_metric() {
        let old = metrics_list(8);
        assert!(old.contains("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"));
        for part in ["tma", "gmma", "dshared"] {
            assert!(!old.contains(part), "{old}");
        }
        let hopper = metrics_list(9);
        for m in [
            "l1tex__m_l1tex2xbar_write_sectors_mem_dshared_op_tma_st.sum",
            "l1tex__m_l1tex2xbar_write_sectors_mem_global_op_tma_red.sum",
            "l1tex__m_xbar2l1tex_read_sectors_mem_dshared_op_tma_red.sum",
        ] {
            assert!(hopper.split(',').any(|x| x == m), "{m}");
        }
    }
}
