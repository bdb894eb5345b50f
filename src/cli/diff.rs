//! `warpscope diff OLD NEW`: two results of `analyze --format json` (or two launches of a
//! launch file) side by side, access by access and in total (`warpscope::diff`). Exit
//! status 1 with `--fail-on-regression` when a watched launch total grew, 2 on an error.

use super::emit;
use super::project::load;
use super::Format;
use anyhow::{bail, Result};
use clap::ValueEnum;
use comfy_table::{presets::UTF8_FULL_CONDENSED, Cell, CellAlignment, ContentArrangement, Table};
use std::path::PathBuf;
use std::process::ExitCode;
use warpscope::diff::{diff, read_runs, regressions, Diff, Measure, Side, SiteChange, Status};

#[derive(clap::Args)]
pub struct DiffArgs {
    /// The old result: the JSON of `warpscope analyze --format json` (one analysis) or of
    /// `analyze --launches FILE --format json` (launches matched by name).
    #[arg(value_name = "OLD")]
    old: Option<PathBuf>,
    /// The new result, of the same kind.
    #[arg(value_name = "NEW")]
    new: Option<PathBuf>,
    /// Instead of OLD and NEW: analyze this launch of the launch file as the old side...
    #[arg(long, value_name = "NAME", requires = "new_launch", conflicts_with_all = ["old", "new"])]
    old_launch: Option<String>,
    /// ...and this one as the new side.
    #[arg(long, value_name = "NAME", requires = "old_launch")]
    new_launch: Option<String>,
    /// The launch file of --old-launch and --new-launch.
    #[arg(long, value_name = "FILE", default_value = "warpscope.toml")]
    launches: PathBuf,
    /// Exit with status 1 when a launch total of --regression-on grew.
    #[arg(long)]
    fail_on_regression: bool,
    /// The launch totals --fail-on-regression watches (comma-separated). Time is the
    /// predicted time of each --gpu GPU both results have.
    #[arg(
        long,
        value_enum,
        value_delimiter = ',',
        default_value = "requests,sectors,wavefronts,time"
    )]
    regression_on: Vec<MeasureArg>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
    /// Write the output to FILE instead of standard output.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    output: Option<String>,
}

#[derive(Clone, Copy, ValueEnum)]
pub enum MeasureArg {
    Requests,
    Sectors,
    Wavefronts,
    Time,
}

impl From<MeasureArg> for Measure {
    fn from(m: MeasureArg) -> Measure {
        match m {
            MeasureArg::Requests => Measure::Requests,
            MeasureArg::Sectors => Measure::Sectors,
            MeasureArg::Wavefronts => Measure::Wavefronts,
            MeasureArg::Time => Measure::Time,
        }
    }
}

/// Runs `diff`; errors are printed and give exit status 2.
pub fn diff_main(a: DiffArgs) -> ExitCode {
    match run(&a) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
    }
}

/// The JSON of each side: read from the files, or analyzed from the launch file.
fn inputs(a: &DiffArgs) -> Result<[(String, String); 2]> {
    match (&a.old, &a.new, &a.old_launch, &a.new_launch) {
        (Some(o), Some(n), None, None) => {
            let read = |p: &PathBuf| {
                super::input::read_text(p, "JSON result").map(|t| (p.display().to_string(), t))
            };
            Ok([read(o)?, read(n)?])
        }
        (None, None, Some(o), Some(n)) => {
            let project = load(&a.launches)?;
            let run = |name: &String| -> Result<(String, String)> {
                let l = project.select(std::slice::from_ref(name))?[0];
                let an = l.analyze_named(None)?;
                Ok((format!("launch {name}"), serde_json::to_string(&an)?))
            };
            Ok([run(o)?, run(n)?])
        }
        _ => bail!(
            "give two JSON results, OLD and NEW (of `warpscope analyze --format json`), or --old-launch NAME --new-launch NAME with --launches FILE"
        ),
    }
}

/// Whether nothing watched regressed (always true without --fail-on-regression).
fn run(a: &DiffArgs) -> Result<bool> {
    let given = [a.old.as_ref(), a.new.as_ref(), Some(&a.launches)];
    super::input::output_not_input(
        "-o",
        a.output.as_deref(),
        given.into_iter().flatten().map(|p| p.as_path()),
    )?;
    let [(old_name, old_json), (new_name, new_json)] = inputs(a)?;
    let old = read_runs(&old_json, &old_name)?;
    let new = read_runs(&new_json, &new_name)?;
    let d = diff(&old, &new)?;
    let watch: Vec<Measure> = a.regression_on.iter().map(|&m| m.into()).collect();
    let regressed = regressions(&d, &watch);
    let out = match a.format {
        Format::Json => {
            serde_json::to_string_pretty(&serde_json::json!({
                "old": old_name,
                "new": new_name,
                "diff": d,
                "regressions": regressed,
            }))? + "\n"
        }
        Format::Table => table(&d, &old_name, &new_name, &regressed),
    };
    emit(a.output.as_deref(), &out)?;
    Ok(!a.fail_on_regression || regressed.is_empty())
}

/// 1234567 → "1,234,567".
fn num(n: u64) -> String {
    let s = n.to_string();
    let head = s.len() % 3;
    let mut parts: Vec<&str> = Vec::new();
    if head > 0 {
        parts.push(&s[..head]);
    }
    parts.extend((head..s.len()).step_by(3).map(|i| &s[i..i + 3]));
    parts.join(",")
}

/// "old → new (+Δ)", "n" when equal, "– → new" / "old → –" for one side, blank when
/// every side present is 0 (sectors of a shared access, wavefronts of a global one).
fn pair(o: Option<u64>, n: Option<u64>) -> String {
    if o.unwrap_or(0) == 0 && n.unwrap_or(0) == 0 {
        return String::new();
    }
    match (o, n) {
        (Some(a), Some(b)) if a == b => num(a),
        (Some(a), Some(b)) if b > a => format!("{} → {} (+{})", num(a), num(b), num(b - a)),
        (Some(a), Some(b)) => format!("{} → {} (−{})", num(a), num(b), num(a - b)),
        (Some(a), None) => format!("{} → –", num(a)),
        (None, Some(b)) => format!("– → {}", num(b)),
        (None, None) => String::new(),
    }
}

/// The efficiency as the analyze table prints it: capped at 100 % and marked `*` above
/// (a broadcast).
fn eff(s: Option<&Side>) -> String {
    match s.and_then(|s| s.efficiency_percent) {
        Some(e) if e > 100.0 + 1e-7 => "100.0%*".into(),
        Some(e) => format!("{e:.1}%"),
        None => "–".into(),
    }
}

fn eff_pair(o: Option<&Side>, n: Option<&Side>) -> String {
    let (a, b) = (eff(o), eff(n));
    match (o.is_some(), n.is_some()) {
        (true, true) if a == b => a,
        (true, true) => format!("{a} → {b}"),
        (true, false) => format!("{a} → –"),
        _ => format!("– → {b}"),
    }
}

fn short(text: &str) -> String {
    let t: Vec<char> = text.chars().collect();
    if t.len() > 40 {
        t[..39].iter().collect::<String>() + "…"
    } else {
        text.to_string()
    }
}

/// The rows of one source access with one status summed (the compiled path's copies of an
/// unrolled loop): (first row, copies, old sum, new sum), in order of first appearance.
fn grouped(sites: &[SiteChange]) -> Vec<(&SiteChange, usize, Option<Side>, Option<Side>)> {
    let key = |s: &SiteChange| {
        (
            s.status,
            s.file.clone(),
            s.line,
            s.column,
            s.old_line,
            s.op.clone(),
            s.space.clone(),
            s.width,
        )
    };
    let sum = |a: Option<Side>, b: Option<Side>, space: &str| match (a, b) {
        (Some(a), Some(b)) => {
            let mut f = a.figures;
            f.add(&b.figures);
            Some(Side::new(f, Some(space)))
        }
        (a, b) => a.or(b),
    };
    let mut out: Vec<(&SiteChange, usize, Option<Side>, Option<Side>)> = Vec::new();
    for s in sites {
        match out.iter_mut().find(|(f, ..)| key(f) == key(s)) {
            Some(g) => {
                g.1 += 1;
                g.2 = sum(g.2, s.old, &s.space);
                g.3 = sum(g.3, s.new, &s.space);
            }
            None => out.push((s, 1, s.old, s.new)),
        }
    }
    out
}

fn table(d: &Diff, old_name: &str, new_name: &str, regressed: &[String]) -> String {
    let mut out = format!("old: {old_name}\nnew: {new_name}\n");
    let mut broadcast = false;
    for l in &d.launches {
        out.push('\n');
        if let Some(n) = &l.name {
            out.push_str(&format!("launch {n}: "));
        }
        out.push_str(&format!(
            "{} ({}) → {} ({})\n",
            l.old_kernel, l.old_source, l.new_kernel, l.new_source
        ));
        for c in &l.ccs {
            let mut t = Table::new();
            t.load_preset(UTF8_FULL_CONDENSED)
                .set_content_arrangement(ContentArrangement::Disabled)
                .force_no_tty();
            t.set_header(vec![
                "",
                "site",
                "access",
                "op",
                "space",
                "requests",
                "sectors",
                "wavefronts",
                "eff",
            ]);
            for (s, copies, o, n) in grouped(&c.sites) {
                let (o, n) = (o.as_ref(), n.as_ref());
                broadcast |= [o, n]
                    .iter()
                    .flatten()
                    .any(|x| x.efficiency_percent.is_some_and(|e| e > 100.0 + 1e-7));
                let get = |f: fn(&Side) -> u64| (o.map(f), n.map(f));
                let (ro, rn) = get(|x| x.figures.requests);
                let (so, sn) = get(|x| x.figures.sectors);
                let (wo, wn) = get(|x| x.figures.wavefronts);
                let mark = match s.status {
                    Status::Matched => "",
                    Status::Added => "+",
                    Status::Removed => "−",
                };
                let mut site = match s.old_line {
                    Some(ol) => format!("{}:{} (was {ol})", s.line, s.column),
                    None => format!("{}:{}", s.line, s.column),
                };
                if copies > 1 {
                    site.push_str(&format!(" ×{copies}"));
                }
                t.add_row(vec![
                    Cell::new(mark),
                    Cell::new(site),
                    Cell::new(short(&s.text)),
                    Cell::new(&s.op),
                    Cell::new(&s.space),
                    Cell::new(pair(ro, rn)).set_alignment(CellAlignment::Right),
                    Cell::new(pair(so, sn)).set_alignment(CellAlignment::Right),
                    Cell::new(pair(wo, wn)).set_alignment(CellAlignment::Right),
                    Cell::new(eff_pair(o, n)).set_alignment(CellAlignment::Right),
                ]);
            }
            // One total per memory space: an efficiency is never summed across spaces.
            for st in &c.spaces {
                let (o, n) = (&st.old, &st.new);
                broadcast |= [o, n]
                    .iter()
                    .any(|x| x.efficiency_percent.is_some_and(|e| e > 100.0 + 1e-7));
                t.add_row(vec![
                    Cell::new(""),
                    Cell::new("total"),
                    Cell::new(""),
                    Cell::new(""),
                    Cell::new(&st.space),
                    Cell::new(pair(Some(o.figures.requests), Some(n.figures.requests)))
                        .set_alignment(CellAlignment::Right),
                    Cell::new(pair(Some(o.figures.sectors), Some(n.figures.sectors)))
                        .set_alignment(CellAlignment::Right),
                    Cell::new(pair(Some(o.figures.wavefronts), Some(n.figures.wavefronts)))
                        .set_alignment(CellAlignment::Right),
                    Cell::new(eff_pair(Some(o), Some(n))).set_alignment(CellAlignment::Right),
                ]);
            }
            out.push_str(&format!("CC {}\n{t}\n", c.cc));
        }
        for cc in &l.only_old_ccs {
            out.push_str(&format!("CC {cc}: only in the old result (not compared)\n"));
        }
        for cc in &l.only_new_ccs {
            out.push_str(&format!("CC {cc}: only in the new result (not compared)\n"));
        }
        for t in &l.times {
            out.push_str(&format!(
                "predicted time on {}: {:.3} µs → {:.3} µs ({:+.1}%)\n",
                t.gpu,
                t.old_seconds * 1e6,
                t.new_seconds * 1e6,
                t.change_percent
            ));
        }
    }
    for n in &d.removed_launches {
        out.push_str(&format!("launch {n}: only in the old result\n"));
    }
    for n in &d.added_launches {
        out.push_str(&format!("launch {n}: only in the new result\n"));
    }
    out.push_str("+: access only in the new result; −: only in the old; ×N: N rows of one access (an unrolled loop's copies) summed; total: per memory space; eff: bytes requested / bytes moved (shared: ideal / actual wavefronts)\n");
    if broadcast {
        out.push_str("*: broadcast: lanes share words, so fewer sectors or wavefronts than the bytes requested need (capped at 100 %; the JSON has the raw percentage)\n");
    }
    if regressed.is_empty() {
        out.push_str("no watched total grew\n");
    } else {
        out.push_str("grew:\n");
        for r in regressed {
            out.push_str(&format!("  {r}\n"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn thousands_are_separated() {
        assert_eq!(super::num(0), "0");
        assert_eq!(super::num(999), "999");
        assert_eq!(super::num(1000), "1,000");
        assert_eq!(super::num(1_179_648), "1,179,648");
        assert_eq!(super::num(65_536), "65,536");
    }
}
