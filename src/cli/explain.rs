//! `warpscope explain`: one access, warp by warp and CC by CC, as text, SVG, HTML or JSON.

use super::emit;
use super::launch::{job, LaunchArgs};
use anyhow::{bail, Context, Result};
use clap::ValueEnum;
use std::io::IsTerminal;

#[derive(clap::Args)]
pub struct ExplainArgs {
    #[command(flatten)]
    launch: LaunchArgs,
    /// The access to explain: LINE or LINE:COLUMN of the source (with -e, the default is its access).
    #[arg(long, value_name = "L[:COL]", conflicts_with = "site")]
    line: Option<String>,
    /// The access to explain by its number (#) in analyze's table (0-based).
    #[arg(long, value_name = "N")]
    site: Option<usize>,
    /// Which warp-level execution of the access, 0-based in launch order (default: the costliest).
    #[arg(long, value_name = "N")]
    warp: Option<u64>,
    /// Output format: a terminal picture, a standalone SVG figure, a self-contained HTML page,
    /// or JSON (docs/schema/explain.schema.json).
    #[arg(long, value_enum, default_value_t = ExplainFormat::Text)]
    format: ExplainFormat,
    /// Write the output to FILE instead of standard output.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    output: Option<String>,
}

#[derive(Clone, Copy, ValueEnum)]
pub enum ExplainFormat {
    Text,
    Svg,
    Html,
    Json,
}

pub fn explain(a: ExplainArgs) -> Result<()> {
    use warpscope::report::explain as render;
    let job = job(&a.launch, None)?;
    let site = match (&a.line, a.site) {
        (_, Some(n)) => warpscope::SiteSelector::Number(n),
        (Some(l), None) => {
            let (line, col) = match l.split_once(':') {
                Some((x, c)) => (x, Some(c)),
                None => (l.as_str(), None),
            };
            let bad = || format!("--line {l}: expected LINE or LINE:COLUMN (numbers from 1)");
            let line: u32 = line.trim().parse().with_context(bad)?;
            let column = col
                .map(|c| c.trim().parse::<u32>())
                .transpose()
                .with_context(bad)?;
            if line == 0 || column == Some(0) {
                bail!(bad());
            }
            warpscope::SiteSelector::Line { line, column }
        }
        // A pattern has one access (two with an assignment's right side: the first row).
        (None, None) if job.quick.is_some() => warpscope::SiteSelector::Number(0),
        (None, None) => {
            bail!("choose the access with --line L[:COL] or --site N (the # of analyze's table)")
        }
    };
    let mut e = super::progress::with_progress(|progress| {
        let mut analyze = job.req.clone();
        analyze.progress = progress;
        warpscope::explain(&warpscope::ExplainRequest {
            analyze,
            site,
            warp: a.warp,
        })
    })
    .map_err(|e| job.relocate(e))?;
    if let Some(q) = &job.quick {
        q.fix_explanation(&mut e);
    }
    let out = a.output.as_deref();
    super::input::output_not_input("-o", out, a.launch.inputs().iter().map(|p| p.as_path()))?;
    let text = match a.format {
        ExplainFormat::Text => {
            render::render_text(&e, out.is_none() && std::io::stdout().is_terminal())
        }
        ExplainFormat::Svg => render::render_svg_all(&e),
        ExplainFormat::Html => render::render_html(&e),
        ExplainFormat::Json => super::analyze::json(&warpscope::report::Versioned::new(&e))?,
    };
    emit(out, &text)
}
