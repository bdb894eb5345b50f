//! `warpscope analyze`: the table, JSON or CSV of every access of a launch, or a sweep of it.

use super::launch::{job, LaunchArgs};
use super::{emit, project, quick};
use anyhow::{Context, Result};
use clap::ValueEnum;
use std::io::IsTerminal;
use warpscope::report::{SweepCurves, SweepOutput, Versioned};

#[derive(clap::Args)]
#[command(
    mut_arg("file", |a| a.required_unless_present_any(["expr", "launches"])),
    mut_arg("kernel", |a| a.required_unless_present_any(["expr", "launch", "launches"])),
    mut_arg("grid", |a| a.required_unless_present_any(["expr", "launch", "launches"])),
    mut_arg("block", |a| a.required_unless_present_any(["expr", "launch", "launches"]))
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
}

#[derive(Clone, Copy, ValueEnum)]
pub enum AnalyzeFormat {
    Table,
    Json,
    Csv,
}

pub fn analyze(a: AnalyzeArgs) -> Result<()> {
    if let Some(path) = &a.launches {
        let profile = a.profile.as_deref().map(std::path::Path::new);
        let gpu = a.gpu.as_deref().map(|g| (g, profile));
        return project::analyze_all(path, &a.only, gpu, a.format);
    }
    let sweep = a.sweep.as_deref().map(quick::Sweep::parse).transpose()?;
    let mut job = job(&a.launch, sweep.as_ref().zip(a.sweep.as_deref()))?;
    if let Some(name) = &a.gpu {
        let json = a
            .profile
            .as_deref()
            .map(|p| {
                std::fs::read_to_string(p).with_context(|| format!("cannot read --profile {p}"))
            })
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
        return match a.format {
            AnalyzeFormat::Json => emit(None, &json(&Versioned::new(&analysis))?),
            AnalyzeFormat::Csv => emit(None, &warpscope::report::render_csv(&analysis)?),
            AnalyzeFormat::Table => emit(
                None,
                &warpscope::report::render_table_fit(&analysis, color, width),
            ),
        };
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
    match a.format {
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
    }
}

/// Pretty JSON with a final newline.
pub fn json(v: &impl serde::Serialize) -> Result<String> {
    Ok(serde_json::to_string_pretty(v)? + "\n")
}
