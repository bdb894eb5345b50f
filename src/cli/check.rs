//! `warpscope check`: analyzes the launches of a launch file that have budgets and compares
//! their figures with them (`warpscope::budget`). Exit status 0 when every budget is met,
//! 1 on a violation, 2 on an error (a bad launch file, a launch that does not analyze, a
//! budget that checks nothing). Reports as text, JUnit XML (`quick-junit`) or SARIF 2.1.0
//! (`serde-sarif`), so that CI shows the violations on the source lines.

use super::emit;
use super::project::{load, Launch, PlacedBudget};
use anyhow::{Context, Result};
use clap::ValueEnum;
use std::path::PathBuf;
use std::process::ExitCode;
use warpscope::budget::{evaluate, fmt_figure, Checked, Limit, Violation};
use warpscope::report::Analysis;

#[derive(clap::Args)]
pub struct CheckArgs {
    /// The launch file with the budgets.
    #[arg(long, value_name = "FILE", default_value = "warpscope.toml")]
    launches: PathBuf,
    /// Check only the launch of this name (repeatable; default: every launch with a budget).
    #[arg(long, value_name = "NAME")]
    only: Vec<String>,
    /// Report format: text for people; junit (JUnit XML, one test case per launch and budget
    /// limit) or sarif (SARIF 2.1.0, one result per violation on its source line) for CI.
    #[arg(long, value_enum, default_value_t = CheckFormat::Text)]
    format: CheckFormat,
    /// Write the report to FILE (a one-line summary still goes to standard error).
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    output: Option<String>,
}

#[derive(Clone, Copy, ValueEnum)]
pub enum CheckFormat {
    Text,
    Junit,
    Sarif,
}

/// One launch's results: each budget's checked limits.
struct Outcome<'a> {
    launch: &'a Launch,
    analysis: Analysis,
    budgets: Vec<(&'a PlacedBudget, Vec<Checked>)>,
}

impl Outcome<'_> {
    fn violations(&self) -> impl Iterator<Item = (&PlacedBudget, &Violation)> {
        self.budgets.iter().flat_map(|(b, cs)| {
            cs.iter()
                .flat_map(move |c| c.violations.iter().map(move |v| (*b, v)))
        })
    }
}

/// Runs `check`; errors are printed and give exit status 2.
pub fn check(a: CheckArgs) -> ExitCode {
    match run(&a) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
    }
}

/// Whether every budget is met.
fn run(a: &CheckArgs) -> Result<bool> {
    let project = load(&a.launches)?;
    let selected = project.select(&a.only)?;
    let mut outcomes = Vec::new();
    for launch in selected.into_iter().filter(|l| !l.budgets.is_empty()) {
        let analysis = launch.analyze_named(None)?;
        let mut budgets = Vec::new();
        for b in &launch.budgets {
            let checked = evaluate(&analysis, &b.budget)
                .with_context(|| format!("{}: budget of launch '{}'", b.at, launch.name))?;
            budgets.push((b, checked));
        }
        outcomes.push(Outcome {
            launch,
            analysis,
            budgets,
        });
    }
    let violations: usize = outcomes.iter().map(|o| o.violations().count()).sum();
    let limits: usize = outcomes
        .iter()
        .flat_map(|o| &o.budgets)
        .map(|(_, c)| c.len())
        .sum();
    let violated: usize = outcomes
        .iter()
        .flat_map(|o| &o.budgets)
        .flat_map(|(_, c)| c)
        .filter(|c| !c.violations.is_empty())
        .count();
    let summary = if outcomes.is_empty() {
        format!(
            "{}: no launch has a budget; add [[launch.budget]] tables (examples/warpscope.toml shows them)",
            project.path.display()
        )
    } else if violations == 0 {
        format!(
            "check: all {} of {} met",
            limits_text(limits),
            launches(outcomes.len())
        )
    } else {
        format!(
            "check: {violated} of {} violated ({violations} figure{} over budget) in {}",
            limits_text(limits),
            if violations == 1 { "" } else { "s" },
            launches(outcomes.len())
        )
    };
    let mut inputs = vec![a.launches.clone()];
    inputs.extend(
        project
            .launches
            .iter()
            .filter_map(|l| l.file().map(PathBuf::from)),
    );
    super::input::output_not_input(
        "-o",
        a.output.as_deref(),
        inputs.iter().map(|p| p.as_path()),
    )?;
    let report = match a.format {
        CheckFormat::Text => text(&outcomes, &summary),
        CheckFormat::Junit => junit(&outcomes)?,
        CheckFormat::Sarif => sarif(&outcomes)?,
    };
    emit(a.output.as_deref(), &report)?;
    for o in &outcomes {
        super::emit_findings(&o.analysis.findings);
    }
    if a.output.is_some() && !super::quiet() {
        eprintln!("{summary}");
    }
    Ok(violations == 0)
}

fn limits_text(n: usize) -> String {
    format!("{n} budget limit{}", if n == 1 { "" } else { "s" })
}

fn launches(n: usize) -> String {
    format!("{n} launch{}", if n == 1 { "" } else { "es" })
}

/// `max_sectors_per_request ≤ 4` / `min_efficiency ≥ 50 %`.
fn limit_text(c: &Checked) -> String {
    match c.limit {
        Limit::MinEfficiency => format!("{} ≥ {}%", c.limit.key(), fmt_figure(c.budget)),
        _ => format!("{} ≤ {}", c.limit.key(), fmt_figure(c.budget)),
    }
}

fn ccs_text(b: &PlacedBudget) -> String {
    match &b.budget.ccs {
        Some(c) => format!(", CC {}", c.join(", ")),
        None => String::new(),
    }
}

/// One violation, self-contained (launch, access, CC, figure, budget and its place).
fn violation_text(o: &Outcome, b: &PlacedBudget, v: &Violation) -> String {
    format!(
        "{}: {} [budget at {}]",
        o.launch.name,
        v.message(&o.analysis.source),
        b.at
    )
}

/// "1 figure", "8 figures" (one per access and CC compared).
fn figures(n: usize) -> String {
    format!("{n} figure{}", if n == 1 { "" } else { "s" })
}

/// "2 accesses of 8 figures" / "the launch total".
fn violations(c: &Checked) -> String {
    let n = c.violations.len();
    if c.violations.iter().all(|v| v.site.is_none()) {
        return format!("{n} of {}", figures(c.compared));
    }
    format!(
        "{n} access{} ({} of {})",
        if n == 1 { "" } else { "es" },
        c.violations
            .iter()
            .map(|v| v.site.as_ref().map_or(1, |s| s.rows.len()))
            .sum::<usize>(),
        figures(c.compared)
    )
}

fn text(outcomes: &[Outcome], summary: &str) -> String {
    let mut out = String::new();
    for o in outcomes {
        out.push_str(&format!(
            "launch {} ({} of {}, {})\n",
            o.launch.name, o.analysis.kernel, o.analysis.source, o.launch.at
        ));
        for (b, checked) in &o.budgets {
            for c in checked {
                let head = format!(
                    "{} ({}{}) at {}",
                    limit_text(c),
                    b.budget.scope_text(),
                    ccs_text(b),
                    b.at
                );
                if c.violations.is_empty() {
                    out.push_str(&format!("  ok    {head}: {}\n", figures(c.compared)));
                } else {
                    out.push_str(&format!("  FAIL  {head}: {} over budget\n", violations(c)));
                    for v in &c.violations {
                        out.push_str(&format!("        {}\n", violation_text(o, b, v)));
                    }
                }
            }
        }
    }
    out.push_str(summary);
    out.push('\n');
    out
}

/// JUnit XML: a test suite per launch, a test case per budget limit, failing with every
/// violation in its text.
fn junit(outcomes: &[Outcome]) -> Result<String> {
    use quick_junit::{NonSuccessKind, Report, TestCase, TestCaseStatus, TestSuite};
    let mut report = Report::new("warpscope check");
    for o in outcomes {
        let mut suite = TestSuite::new(o.launch.name.as_str());
        for (b, checked) in &o.budgets {
            for c in checked {
                let name = format!(
                    "{} ({}{})",
                    limit_text(c),
                    b.budget.scope_text(),
                    ccs_text(b)
                );
                let status = if c.violations.is_empty() {
                    TestCaseStatus::success()
                } else {
                    let mut s = TestCaseStatus::non_success(NonSuccessKind::Failure);
                    s.set_message(format!(
                        "{} over budget; first: {}",
                        violations(c),
                        c.violations[0].message(&o.analysis.source)
                    ));
                    s.set_type(c.limit.key());
                    s.set_description(
                        c.violations
                            .iter()
                            .map(|v| violation_text(o, b, v))
                            .collect::<Vec<_>>()
                            .join("\n"),
                    );
                    s
                };
                let mut case = TestCase::new(name, status);
                case.set_classname(format!("{}.{}", o.launch.name, c.limit.key()));
                case.set_assertions(c.compared);
                suite.add_test_case(case);
            }
        }
        report.add_test_suite(suite);
    }
    report
        .to_string()
        .map(|s| s + "\n")
        .context("cannot write the JUnit XML report")
}

/// A path as a SARIF URI reference: forward slashes, no leading `./`.
fn uri(path: &str) -> String {
    let p = path.replace('\\', "/");
    p.strip_prefix("./").unwrap_or(&p).to_string()
}

/// The SARIF rules of findings (bugs in the kernel), after the budget limits' rules.
const FINDING_RULES: [(&str, &str); 3] = [
    ("synccheck", "a block barrier reached by only part of a warp's non-exited lanes (divergent __syncthreads()/bar.sync)"),
    ("racecheck", "two warps of a block access one shared-memory byte, at least one writing, with no __syncthreads() between them (RAW, WAR or WAW hazard)"),
    ("initcheck", "a read of shared memory that no thread of the block has written"),
];

/// SARIF 2.1.0: a rule per budget limit and a result per violation, located on the
/// access's source line and column, or on the budget's line in the launch file for a
/// launch's total sectors.
fn sarif(outcomes: &[Outcome]) -> Result<String> {
    use serde_sarif::sarif;
    let mut rules: Vec<sarif::ReportingDescriptor> = Limit::ALL
        .iter()
        .map(|l| {
            sarif::ReportingDescriptor::builder()
                .id(l.key())
                .name(l.key())
                .short_description(&l.description().to_string())
                .build()
        })
        .collect();
    // Findings (bugs in the kernel) follow the budget limits' rules (listed when any).
    if outcomes.iter().any(|o| !o.analysis.findings.is_empty()) {
        for (id, text) in FINDING_RULES {
            rules.push(
                sarif::ReportingDescriptor::builder()
                    .id(id)
                    .name(id)
                    .short_description(&text.to_string())
                    .build(),
            );
        }
    }
    let mut results = Vec::new();
    for o in outcomes {
        for (b, v) in o.violations() {
            let (file, line, column) = match &v.site {
                Some(s) => (s.file.clone(), s.line as i64, s.column as i64),
                None => (b.at.file.clone(), b.at.line as i64, b.at.column as i64),
            };
            let location = sarif::Location::builder()
                .physical_location(
                    sarif::PhysicalLocation::builder()
                        .artifact_location(
                            sarif::ArtifactLocation::builder().uri(uri(&file)).build(),
                        )
                        .region(
                            sarif::Region::builder()
                                .start_line(line)
                                .start_column(column)
                                .build(),
                        )
                        .build(),
                )
                .build();
            let index = Limit::ALL.iter().position(|l| *l == v.limit).unwrap_or(0);
            results.push(
                sarif::Result::builder()
                    .rule_id(v.limit.key())
                    .rule_index(index as i64)
                    .level(sarif::ResultLevel::Error)
                    .message(&violation_text(o, b, v))
                    .locations(vec![location])
                    .build(),
            );
        }
        for f in &o.analysis.findings {
            let location = sarif::Location::builder()
                .physical_location(
                    sarif::PhysicalLocation::builder()
                        .artifact_location(
                            sarif::ArtifactLocation::builder().uri(uri(&f.file)).build(),
                        )
                        .region(
                            sarif::Region::builder()
                                .start_line(f.line as i64)
                                .start_column(f.column as i64)
                                .build(),
                        )
                        .build(),
                )
                .build();
            results.push(
                sarif::Result::builder()
                    .rule_id(f.kind.as_str())
                    .rule_index(
                        (Limit::ALL.len()
                            + FINDING_RULES
                                .iter()
                                .position(|(id, _)| *id == f.kind)
                                .unwrap_or(0)) as i64,
                    )
                    .level(sarif::ResultLevel::Warning)
                    .message(&format!("launch {}: {}", o.launch.name, f.message))
                    .locations(vec![location])
                    .build(),
            );
        }
    }
    let driver = sarif::ToolComponent::builder()
        .name("warpscope")
        .version(env!("CARGO_PKG_VERSION"))
        .rules(rules)
        .build();
    let run = sarif::Run::builder().tool(driver).results(results).build();
    let log = sarif::Sarif::builder()
        .schema(sarif::SCHEMA_URL)
        .version(serde_json::Value::String(
            sarif::Version::V2_1_0.to_string(),
        ))
        .runs(vec![run])
        .build();
    Ok(serde_json::to_string_pretty(&log)? + "\n")
}
