//! `warpscope annotate`: the kernel's source with each access's figures in the margin, as
//! terminal text or a self-contained HTML page.

use super::emit;
use super::launch::{job, LaunchArgs};
use anyhow::{bail, Context, Result};
use clap::ValueEnum;
use std::io::IsTerminal;
use warpscope::report::annotate::{self as render, AnnotateOptions};

#[derive(clap::Args)]
pub struct AnnotateArgs {
    #[command(flatten)]
    launch: LaunchArgs,
    /// What each access expands to, comma-separated: `ptx`, its PTX instructions, each with
    /// its own figures (and those ptxas merged or removed); `sass`, the SASS instructions
    /// ptxas made of them (with the SASS check: not with --no-sass). The HTML page always
    /// has both, behind a click on the line.
    #[arg(long, value_enum, value_delimiter = ',', value_name = "ptx,sass")]
    show: Vec<ShowArg>,
    /// Show only these lines of the source, L or FIRST-LAST (1-based), every one of them,
    /// instead of the kernel's definition and the lines with accesses.
    #[arg(long, value_name = "L|FIRST-LAST")]
    lines: Option<String>,
    /// Colours in the text: `auto` where standard output is a terminal.
    #[arg(long, value_enum, default_value_t = ColorArg::Auto)]
    color: ColorArg,
    /// Output format: text for the terminal, or one self-contained HTML page (lines coloured
    /// by excess and efficiency; a click on a line shows its PTX and SASS instructions and the
    /// `explain` picture of its accesses' costliest warps: runs the launch twice).
    #[arg(long, value_enum, default_value_t = AnnotateFormat::Text)]
    format: AnnotateFormat,
    /// Write the output to FILE instead of standard output.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    output: Option<String>,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ShowArg {
    Ptx,
    Sass,
}

#[derive(Clone, Copy, ValueEnum)]
pub enum ColorArg {
    Auto,
    Always,
    Never,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum AnnotateFormat {
    Text,
    Html,
}

/// `--lines L` or `--lines A-B`: (first, last), 1-based.
fn parse_lines(s: &str) -> Result<(u32, u32)> {
    let bad = || format!("--lines {s}: expected a line L or lines FIRST-LAST, numbered from 1");
    let (a, b) = match s.split_once(['-', ':']) {
        Some((a, b)) => (a, b),
        None => (s, s),
    };
    let a: u32 = a.trim().parse().with_context(bad)?;
    let b: u32 = b.trim().parse().with_context(bad)?;
    if a == 0 || b < a {
        bail!(bad());
    }
    Ok((a, b))
}

/// Checks that `lines` are in the file `shown` of `n` lines.
fn check_lines(lines: (u32, u32), shown: &str, n: usize) -> Result<()> {
    if lines.0 as usize > n || lines.1 as usize > n {
        bail!(
            "--lines {}-{}: {shown} has {n} lines; choose lines from 1 to {n}",
            lines.0,
            lines.1
        );
    }
    Ok(())
}

pub fn annotate(a: AnnotateArgs) -> Result<()> {
    let job = job(&a.launch, None)?;
    if job.quick.is_some() {
        bail!("annotate shows a file's source: give a FILE with --kernel NAME (or --launch N), not a pattern (-e)");
    }
    let lines = a.lines.as_deref().map(parse_lines).transpose()?;
    // A .ptx's lines are checked against the source its sites name, once it is read.
    let ptx_input = job.req.file.ends_with(".ptx");
    if let (Some(l), false) = (lines, ptx_input) {
        check_lines(l, &job.req.file, job.req.source.lines().count())?;
    }
    let html = a.format == AnnotateFormat::Html;
    let annotation = super::progress::with_progress(|progress| {
        let mut analyze = job.req.clone();
        analyze.progress = progress;
        warpscope::annotate(&warpscope::AnnotateRequest {
            analyze,
            explain: html,
        })
    })?;
    if let (Some(l), true) = (lines, ptx_input) {
        match annotation.files.first() {
            Some(f) => check_lines(l, &f.shown, f.lines.as_ref().map_or(0, Vec::len))?,
            None => bail!("--lines: no source file of this PTX was found to show lines of"),
        }
    }
    let show_sass = a.show.contains(&ShowArg::Sass);
    let mut notes: Vec<String> = Vec::new();
    if (a.show.contains(&ShowArg::Ptx) || show_sass) && annotation.instructions.is_empty() {
        notes.push("--show: the source front end runs no compiler's PTX; there are no instructions to show (--frontend ptx compiles)".into());
    } else if show_sass && !annotation.sass_checked {
        notes.push("--show sass: the SASS was not checked (--no-sass, or no ptxas and nvdisasm), so there is no SASS to show".into());
    }
    let out = a.output.as_deref();
    let options = AnnotateOptions {
        show_ptx: a.show.contains(&ShowArg::Ptx),
        show_sass,
        color: match a.color {
            ColorArg::Always => true,
            ColorArg::Never => false,
            ColorArg::Auto => out.is_none() && std::io::stdout().is_terminal(),
        },
        lines,
    };
    let text = if html {
        render::render_html(&annotation, &options)
    } else {
        render::render_text(&annotation, &options)
    };
    let shown = emit(out, &text);
    super::emit_notes(&annotation.analysis.notes);
    super::emit_notes(&notes);
    shown
}
