//! `warpscope analyze`: the table, JSON or CSV of every access of a launch, or a sweep of it.

use super::launch::{job, LaunchArgs};
use super::{emit, project, quick};
use anyhow::{bail, Context, Result};
use clap::ValueEnum;
use std::io::IsTerminal;
use warpscope::report::{SweepCurves, SweepOutput, Versioned};

#[derive(clap::Args)]
#[command(
    mut_arg("file", |a| a.required_unless_present_any(["expr", "launches"])),
    mut_arg("kernel", |a| a.required_unless_present_any(["expr", "launch", "launches"]))
)]
pub struct AnalyzeArgs {
    #[command(flatten)]
    pub launch: LaunchArgs,
    /// Analyze every launch of a launch file (warpscope.toml; examples/warpscope.toml
    /// documents its keys) instead of one launch given by flags.
    #[arg(long, value_name = "FILE", conflicts_with_all = project::LAUNCH_FLAGS)]
    launches: Option<std::path::PathBuf>,
    /// With --launches: only the launch of this name (repeatable).
    #[arg(long, value_name = "NAME", requires = "launches")]
    only: Vec<String>,
    /// Also predict the bytes at L1, L2 and DRAM and the time on this GPU (fixes the CC);
    /// `warpscope gpus` lists them.
    #[arg(long, value_name = "NAME")]
    gpu: Option<String>,
    /// Rates measured by `warpscope calibrate` for --gpu, instead of the datasheet's.
    #[arg(long, value_name = "FILE", requires = "gpu")]
    profile: Option<String>,
    /// Run once per value of a scalar parameter, NAME=A..B[:STEP] (both ends included),
    /// and print one table per access with one row per value.
    #[arg(long, value_name = "NAME=A..B[:STEP]")]
    sweep: Option<String>,
    /// With --sweep: the table's curves are the kernel's totals, one per memory space,
    /// instead of one per access (JSON and CSV carry both).
    #[arg(long, requires = "sweep")]
    sweep_total: bool,
    /// Output format: a table (fitted to the terminal's width, or COLUMNS), JSON
    /// (docs/schema/analyze.schema.json; with --sweep analyze-sweep.schema.json), or CSV (one
    /// row per site and CC, with Nsight Compute's metric names as extra columns).
    #[arg(long, value_enum, default_value_t = AnalyzeFormat::Table)]
    format: AnalyzeFormat,
    /// Analyze again whenever the file, a header or PTX beside it, or a file in an -I folder
    /// changes (until Ctrl-C); an error is shown and the watch goes on.
    #[arg(long, conflicts_with = "launches")]
    watch: bool,
    /// Exit with status 1 when the run finds a bug in the kernel (a finding, shown as a
    /// `warning:` line: synccheck's divergent barrier, racecheck's shared-memory race,
    /// initcheck's read of unwritten shared memory), after writing the output.
    #[arg(long, conflicts_with = "launches")]
    strict: bool,
    #[command(flatten)]
    pub rows: RowArgs,
}

/// How the table's rows are made, ordered and cut (the table only: JSON and CSV keep one
/// entry per instruction, in source order).
#[derive(clap::Args, Clone, Copy)]
pub struct RowArgs {
    /// Table rows: one per access of the source (`line`: an unrolled loop's copies of one
    /// load, the same text, operation, space, width and PTX instruction, are one row with
    /// their figures summed and `×N` after the access), or one per instruction, as JSON and
    /// CSV keep them.
    #[arg(long, value_enum, default_value_t = ByArg::Line)]
    by: ByArg,
    /// Order of the table's rows: by source position (`site`), or most first of requests,
    /// sectors (wavefronts for shared memory) or excess over the ideal, on the first CC.
    #[arg(long, value_enum, default_value_t = SortArg::Site)]
    sort: SortArg,
    /// Show only the first N rows (after --sort); the total row stays the kernel's.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    top: Option<u64>,
}

#[derive(Clone, Copy, ValueEnum)]
pub enum ByArg {
    Line,
    Instruction,
}

#[derive(Clone, Copy, ValueEnum)]
pub enum SortArg {
    Site,
    Requests,
    Sectors,
    Excess,
}

impl RowArgs {
    /// The report's row view of these flags.
    pub fn view(&self) -> warpscope::report::rows::RowView {
        use warpscope::report::rows::{By, RowView, SortBy};
        RowView {
            by: match self.by {
                ByArg::Line => By::Line,
                ByArg::Instruction => By::Instruction,
            },
            sort: match self.sort {
                SortArg::Site => SortBy::Site,
                SortArg::Requests => SortBy::Requests,
                SortArg::Sectors => SortBy::Sectors,
                SortArg::Excess => SortBy::Excess,
            },
            top: self.top.map(|n| usize::try_from(n).unwrap_or(usize::MAX)),
        }
    }
}

#[derive(Clone, Copy, ValueEnum)]
pub enum AnalyzeFormat {
    Table,
    Json,
    Csv,
}

pub fn analyze(a: AnalyzeArgs) -> Result<()> {
    if a.watch {
        return watch(&a);
    }
    analyze_once(&a)
}

/// Extensions whose change re-runs a `--watch`: CUDA sources and headers, PTX, data files.
const WATCHED: [&str; 10] = [
    "cu", "cuh", "h", "hpp", "hh", "inc", "ptx", "npy", "bin", "toml",
];

/// `--watch`: the analysis, then again after each change of a watched file (changes within
/// 300 ms of the first count once; reads, which the analysis itself makes, do not count),
/// until the process is stopped.
fn watch(a: &AnalyzeArgs) -> Result<()> {
    use notify::{event::ModifyKind, EventKind, RecursiveMode, Watcher};
    let file = a
        .launch
        .file()
        .ok_or_else(|| anyhow::anyhow!("--watch needs a FILE to watch"))?;
    let folder = std::path::Path::new(file)
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(std::path::Path::new("."))
        .to_path_buf();
    let (tx, rx) = std::sync::mpsc::channel();
    let mut watcher =
        notify::recommended_watcher(tx).context("--watch: cannot watch files on this system")?;
    for dir in std::iter::once(&folder).chain(a.launch.include_dirs()) {
        watcher
            .watch(dir, RecursiveMode::NonRecursive)
            .with_context(|| format!("--watch: cannot watch {}", dir.display()))?;
    }
    let watched = |e: &notify::Event| {
        let written = matches!(
            e.kind,
            EventKind::Create(_)
                | EventKind::Remove(_)
                | EventKind::Modify(ModifyKind::Data(_) | ModifyKind::Name(_) | ModifyKind::Any)
        );
        let path = e.paths.iter().find(|p| {
            p.extension()
                .and_then(|x| x.to_str())
                .is_some_and(|x| WATCHED.contains(&x.to_ascii_lowercase().as_str()))
        });
        path.filter(|_| written).cloned()
    };
    loop {
        if let Err(e) = analyze_once(a) {
            eprintln!("error: {e:#}");
        }
        if !super::quiet() {
            eprintln!("watching {} for changes (Ctrl-C to stop)", folder.display());
        }
        let changed = loop {
            match rx.recv() {
                Ok(Ok(e)) => {
                    if let Some(p) = watched(&e) {
                        break p;
                    }
                }
                Ok(Err(e)) => bail!("--watch: {e}"),
                Err(_) => return Ok(()),
            }
        };
        // The rest of an editor's save (truncate, write, rename) counts as this change.
        while rx
            .recv_timeout(std::time::Duration::from_millis(300))
            .is_ok()
        {}
        println!("\n── {} changed: analyzing again ──", changed.display());
    }
}

fn analyze_once(a: &AnalyzeArgs) -> Result<()> {
    if let Some(path) = &a.launches {
        let profile = a.profile.as_deref().map(std::path::Path::new);
        let gpu = a.gpu.as_deref().map(|g| (g, profile));
        return project::analyze_all(path, &a.only, gpu, a.format, &a.rows.view());
    }
    if let Some(many) = super::launch::kernel_selection(&a.launch)? {
        anyhow::ensure!(
            a.sweep.is_none() && a.gpu.is_none(),
            "--kernel all (or a glob) analyzes each kernel once: give one kernel for --sweep or --gpu"
        );
        let found = analyze_many(&many, a.format, &a.rows.view())?;
        return strict(a.strict, found);
    }
    let sweep = a.sweep.as_deref().map(quick::Sweep::parse).transpose()?;
    let mut job = job(&a.launch, sweep.as_ref().zip(a.sweep.as_deref()))?;
    if let Some(name) = &a.gpu {
        let json = a
            .profile
            .as_deref()
            .map(|p| super::input::read_text(p, "--profile"))
            .transpose()?;
        job.req.gpus = vec![warpscope::GpuTarget::new(name, json.as_deref())?];
        // The GPU fixes the CC: the default (the GPU at hand's) gives way.
        if !a.launch.cc_given() {
            job.req.archs = None;
            job.req.notes.clear();
        }
    }
    let color = std::io::stdout().is_terminal();
    let width = warpscope::report::table_width();
    let Some(sw) = sweep else {
        let analysis = job.analyze(&job.req)?;
        let shown = match a.format {
            AnalyzeFormat::Json => emit(None, &json(&Versioned::new(&analysis))?),
            AnalyzeFormat::Csv => emit(None, &warpscope::report::render_csv(&analysis)?),
            AnalyzeFormat::Table => emit(
                None,
                &warpscope::report::render_table_view(&analysis, color, width, &a.rows.view()),
            ),
        };
        super::emit_notes(&analysis.notes);
        super::emit_findings(&analysis.findings);
        shown?;
        return strict(a.strict, analysis.findings.len());
    };
    let mut points = Vec::with_capacity(sw.values.len());
    for &v in &sw.values {
        let mut r = job.req.clone();
        r.args.push((sw.name.clone(), v.to_string()));
        let analysis = job
            .analyze(&r)
            .with_context(|| format!("--sweep {}={v}", sw.name))?;
        points.push(warpscope::report::SweepPoint { value: v, analysis });
    }
    let out = SweepOutput {
        parameter: sw.name.clone(),
        points,
    };
    let shown = match a.format {
        AnalyzeFormat::Json => emit(None, &json(&Versioned::new(&out))?),
        AnalyzeFormat::Csv => emit(None, &warpscope::report::render_sweep_csv(&out)?),
        AnalyzeFormat::Table => emit(
            None,
            &warpscope::report::render_sweep_fit(
                &sw.name,
                &out.points,
                if a.sweep_total {
                    SweepCurves::Total
                } else {
                    SweepCurves::PerAccess
                },
                color,
                width,
            ),
        ),
    };
    let mut notes: Vec<&str> = Vec::new();
    for n in out.points.iter().flat_map(|p| &p.analysis.notes) {
        if !notes.contains(&n.as_str()) {
            notes.push(n);
        }
    }
    super::emit_notes(&notes);
    let mut found = 0;
    for p in &out.points {
        super::emit_findings(&p.analysis.findings);
        found += p.analysis.findings.len();
    }
    shown?;
    strict(a.strict, found)
}

/// `--strict`: an error (exit status 1) when `found` findings were reported.
fn strict(strict: bool, found: usize) -> Result<()> {
    anyhow::ensure!(
        !strict || found == 0,
        "--strict: {found} finding(s) in the kernel (the warning lines above)"
    );
    Ok(())
}

/// `--kernel all|GLOB`: each selected launch analyzed in turn, as tables under a
/// `== kernel NAME ==` heading, JSON `{"kernels": [{"name", "analysis"}, ...]}`, or CSV with a
/// leading `selected` column (the heading name). Returns the number of findings.
fn analyze_many(
    many: &[(String, LaunchArgs)],
    format: AnalyzeFormat,
    view: &warpscope::report::rows::RowView,
) -> Result<usize> {
    let color = std::io::stdout().is_terminal();
    let width = warpscope::report::table_width();
    let mut done = Vec::with_capacity(many.len());
    for (name, l) in many {
        let job = job(l, None)?;
        let analysis = job
            .analyze(&job.req)
            .with_context(|| format!("kernel {name}"))?;
        if let AnalyzeFormat::Table = format {
            let sep = if done.is_empty() { "" } else { "\n" };
            emit(
                None,
                &format!(
                    "{sep}== kernel {name} ==\n{}",
                    warpscope::report::render_table_view(&analysis, color, width, view)
                ),
            )?;
            super::emit_notes(&analysis.notes);
        }
        super::emit_findings(&analysis.findings);
        done.push((name.clone(), analysis));
    }
    let found = done.iter().map(|(_, a)| a.findings.len()).sum();
    match format {
        AnalyzeFormat::Table => Ok(()),
        AnalyzeFormat::Json => {
            #[derive(serde::Serialize)]
            struct Named<'a> {
                name: &'a str,
                analysis: &'a warpscope::report::Analysis,
            }
            let kernels: Vec<Named> = done
                .iter()
                .map(|(name, analysis)| Named { name, analysis })
                .collect();
            emit(None, &json(&serde_json::json!({ "kernels": kernels }))?)
        }
        AnalyzeFormat::Csv => {
            let labeled: Vec<(Vec<String>, &warpscope::report::Analysis)> = done
                .iter()
                .map(|(name, a)| (vec![name.clone()], a))
                .collect();
            emit(
                None,
                &warpscope::report::render_labeled_csv(&["selected"], &labeled)?,
            )
        }
    }?;
    Ok(found)
}

/// Pretty JSON with a final newline.
pub fn json(v: &impl serde::Serialize) -> Result<String> {
    Ok(serde_json::to_string_pretty(v)? + "\n")
}
