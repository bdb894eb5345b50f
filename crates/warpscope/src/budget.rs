//! Budgets: upper (or, for efficiency, lower) limits on the figures of an [`Analysis`], which
//! `warpscope check` enforces in CI.
//!
//! A [`Budget`] applies to the whole launch or to the accesses of one source line or one row
//! (the `#` of `analyze`'s table), for every compute capability of the analysis or only the
//! ones it names. Its limits, each optional:
//!
//! - `max_sectors_per_request`: 32-byte sectors ÷ requests of each global or local access
//!   (CC 9.0: a warp reading 32 consecutive aligned floats = 4; a column walk of floats with a
//!   row pitch ≥ 32 bytes = 32).
//! - `min_efficiency`: the table's `eff`, in percent, of each access that has one: bytes
//!   requested ÷ bytes moved for a global or local access, ideal ÷ actual wavefronts for a
//!   shared one (100 % = conflict free, whatever the width); constant accesses have none.
//! - `max_wavefronts_per_request`: shared-memory wavefronts ÷ requests of each shared access.
//!   A conflict-free access needs one per 128 bytes a phase requests (CC 9.0: a warp's
//!   `float` 1, `double` 2, `float4` 4), so for bank conflicts prefer the next two.
//! - `max_excess_wavefronts`: wavefronts above the ideal (Nsight Compute's "bank
//!   conflicts"; `warpscope_model::shared::ideal_wavefronts`) of each shared access, summed
//!   over the launch (0 = no bank conflict).
//! - `max_conflict_ways`: wavefronts ÷ ideal wavefronts of each shared access (1 = conflict
//!   free; an n-way bank conflict = n; below 1 for a broadcast).
//! - `max_total_sectors`: for the launch, the sectors of all its accesses summed (the table's
//!   total `tx` from CC 5.0 on); for a line or row, each access's sectors summed over the
//!   launch.
//!
//! The figures are the report's counters summed over the launch (`warpscope_report`), so a
//! per-request figure is the launch's average for that access. [`evaluate`] is pure.

use anyhow::{bail, Result};
use warpscope_model::{Op, Space};
use warpscope_report::{Analysis, ArchReport, SiteReport};

/// The figure a budget limits; [`Limit::key`] is its name in the launch file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Limit {
    /// Sectors ÷ requests of each global/local access at most this.
    MaxSectorsPerRequest,
    /// Efficiency (percent, the table's `eff`) of each global/local/shared access at least this.
    MinEfficiency,
    /// Wavefronts ÷ requests of each shared access at most this.
    MaxWavefrontsPerRequest,
    /// Sectors of the launch (or of each selected access) at most this.
    MaxTotalSectors,
    /// Wavefronts above the ideal of each shared access, over the launch, at most this.
    MaxExcessWavefronts,
    /// Wavefronts ÷ ideal wavefronts of each shared access at most this.
    MaxConflictWays,
}

impl Limit {
    /// Every limit, in the order the launch file documents them.
    pub const ALL: [Limit; 6] = [
        Limit::MaxSectorsPerRequest,
        Limit::MinEfficiency,
        Limit::MaxWavefrontsPerRequest,
        Limit::MaxTotalSectors,
        Limit::MaxExcessWavefronts,
        Limit::MaxConflictWays,
    ];

    /// The key of the launch file (and the SARIF rule id): `max_sectors_per_request`, ….
    pub fn key(self) -> &'static str {
        match self {
            Limit::MaxSectorsPerRequest => "max_sectors_per_request",
            Limit::MinEfficiency => "min_efficiency",
            Limit::MaxWavefrontsPerRequest => "max_wavefronts_per_request",
            Limit::MaxTotalSectors => "max_total_sectors",
            Limit::MaxExcessWavefronts => "max_excess_wavefronts",
            Limit::MaxConflictWays => "max_conflict_ways",
        }
    }

    /// What the figure is, with its unit, for messages.
    pub fn figure_name(self) -> &'static str {
        match self {
            Limit::MaxSectorsPerRequest => "sectors per request",
            Limit::MinEfficiency => "% efficiency",
            Limit::MaxWavefrontsPerRequest => "wavefronts per request",
            Limit::MaxTotalSectors => "sectors",
            Limit::MaxExcessWavefronts => "excess wavefronts",
            Limit::MaxConflictWays => "ways (wavefronts / ideal)",
        }
    }

    /// One sentence on the rule, for reports (SARIF rule descriptions).
    pub fn description(self) -> &'static str {
        match self {
            Limit::MaxSectorsPerRequest => {
                "32-byte sectors per request of a global or local access at most the budget"
            }
            Limit::MinEfficiency => {
                "efficiency of an access at least the budget, in percent: bytes requested / bytes moved (global, local), ideal / actual wavefronts (shared)"
            }
            Limit::MaxWavefrontsPerRequest => {
                "shared-memory wavefronts per request of a shared access at most the budget (a conflict-free float needs 1, a double 2, a float4 4 on CC 9.0)"
            }
            Limit::MaxTotalSectors => {
                "32-byte sectors of the launch (or of the selected access) at most the budget"
            }
            Limit::MaxExcessWavefronts => {
                "shared-memory wavefronts above a conflict-free access's (bank conflicts) of a shared access, summed over the launch, at most the budget"
            }
            Limit::MaxConflictWays => {
                "shared-memory wavefronts / ideal wavefronts of a shared access at most the budget (1 = conflict free, n = n-way bank conflict)"
            }
        }
    }

    /// Whether `figure` breaks `budget` (a small tolerance absorbs float rounding: 100 % is
    /// met by an access whose efficiency is 0.9999999999).
    fn broken(self, figure: f64, budget: f64) -> bool {
        let tol = 1e-9 * budget.abs().max(1.0);
        match self {
            Limit::MinEfficiency => figure < budget - tol,
            _ => figure > budget + tol,
        }
    }

    /// Whether `s` has this figure: sectors for global/local accesses, wavefronts for shared
    /// ones, efficiency where a transaction or a wavefront was issued.
    fn applies_to(self, s: &SiteReport) -> bool {
        let memory = matches!(s.space, Space::Global | Space::Local);
        let shared = s.space == Space::Shared;
        match self {
            Limit::MaxSectorsPerRequest => memory && s.counters.requests > 0,
            Limit::MinEfficiency => {
                (memory && s.counters.efficiency.is_some()) || (shared && s.counters.wavefronts > 0)
            }
            Limit::MaxWavefrontsPerRequest => shared && s.counters.requests > 0,
            Limit::MaxTotalSectors => memory,
            Limit::MaxExcessWavefronts => shared,
            Limit::MaxConflictWays => shared && s.counters.ideal_wavefronts > 0,
        }
    }

    /// The figure of one access.
    fn figure(self, s: &SiteReport) -> f64 {
        let c = &s.counters;
        match self {
            Limit::MaxSectorsPerRequest => c.sectors as f64 / c.requests as f64,
            Limit::MinEfficiency => 100.0 * c.efficiency_in(s.space).unwrap_or(0.0),
            Limit::MaxWavefrontsPerRequest => c.wavefronts as f64 / c.requests as f64,
            Limit::MaxTotalSectors => c.sectors as f64,
            Limit::MaxExcessWavefronts => c.excess_wavefronts as f64,
            Limit::MaxConflictWays => c.wavefronts as f64 / c.ideal_wavefronts as f64,
        }
    }
}

/// The `#` of the first row of `analyze`'s table: `site = N` and the rows named in
/// violations count from it.
pub const FIRST_ROW: usize = 0;

/// Which accesses a budget covers.
#[derive(Clone, Debug, PartialEq)]
pub enum Scope {
    /// Every access of the launch (and the launch's total for `max_total_sectors`).
    Launch,
    /// The accesses of a source line (1-based), or the one at `line:column`.
    Line { line: u32, column: Option<u32> },
    /// One row of `analyze`'s table, by its `#` (from [`FIRST_ROW`]).
    Row(usize),
}

/// Limits for one scope and some compute capabilities. Efficiency in percent (0–100),
/// the others in counts.
#[derive(Clone, Debug, PartialEq)]
pub struct Budget {
    pub scope: Scope,
    /// The CCs it applies to, as the report names them (`"9.0"`); `None`: all of the analysis.
    pub ccs: Option<Vec<String>>,
    pub max_sectors_per_request: Option<f64>,
    /// Percent.
    pub min_efficiency: Option<f64>,
    pub max_wavefronts_per_request: Option<f64>,
    pub max_total_sectors: Option<u64>,
    /// Wavefronts above the ideal, summed over the launch, per shared access.
    pub max_excess_wavefronts: Option<u64>,
    /// Wavefronts ÷ ideal wavefronts per shared access (1 = conflict free).
    pub max_conflict_ways: Option<f64>,
}

impl Budget {
    /// A budget for `scope` on every CC with no limit set yet.
    pub fn new(scope: Scope) -> Budget {
        Budget {
            scope,
            ccs: None,
            max_sectors_per_request: None,
            min_efficiency: None,
            max_wavefronts_per_request: None,
            max_total_sectors: None,
            max_excess_wavefronts: None,
            max_conflict_ways: None,
        }
    }

    /// The limits set, with their values, in [`Limit::ALL`] order.
    pub fn limits(&self) -> Vec<(Limit, f64)> {
        [
            (Limit::MaxSectorsPerRequest, self.max_sectors_per_request),
            (Limit::MinEfficiency, self.min_efficiency),
            (
                Limit::MaxWavefrontsPerRequest,
                self.max_wavefronts_per_request,
            ),
            (
                Limit::MaxTotalSectors,
                self.max_total_sectors.map(|v| v as f64),
            ),
            (
                Limit::MaxExcessWavefronts,
                self.max_excess_wavefronts.map(|v| v as f64),
            ),
            (Limit::MaxConflictWays, self.max_conflict_ways),
        ]
        .into_iter()
        .filter_map(|(l, v)| v.map(|v| (l, v)))
        .collect()
    }

    /// Checks the values: at least one limit, none negative or not finite, efficiency at
    /// most 100, row numbers and lines from 1. Errors name the key.
    pub fn validate(&self) -> Result<()> {
        if self.limits().is_empty() {
            bail!(
                "a budget needs at least one of {}",
                Limit::ALL.map(Limit::key).join(", ")
            );
        }
        for (l, v) in self.limits() {
            if !v.is_finite() || v < 0.0 {
                bail!("{} = {v}: expected a number ≥ 0", l.key());
            }
        }
        if self.min_efficiency.is_some_and(|e| e > 100.0) {
            bail!("min_efficiency is in percent: at most 100");
        }
        match self.scope {
            Scope::Line { line: 0, .. }
            | Scope::Line {
                column: Some(0), ..
            } => {
                bail!("line and column are numbered from 1")
            }
            _ => Ok(()),
        }
    }

    /// `launch`, `line 40`, `line 40:5` or `site #3`, for messages.
    pub fn scope_text(&self) -> String {
        match self.scope {
            Scope::Launch => "launch".into(),
            Scope::Line { line, column: None } => format!("line {line}"),
            Scope::Line {
                line,
                column: Some(c),
            } => format!("line {line}:{c}"),
            Scope::Row(n) => format!("site #{n}"),
        }
    }
}

/// An access named in a violation: its rows in `analyze`'s table and where it is.
#[derive(Clone, Debug, PartialEq)]
pub struct SiteRef {
    /// The `#` of `analyze`'s table (from [`FIRST_ROW`]) of each row of the access that broke the
    /// budget: one source access may be several rows (an unrolled loop's copies of the
    /// compiled path).
    pub rows: Vec<usize>,
    /// The file of the line: the analyzed file, or the header/`.cu` the report names.
    pub file: String,
    pub line: u32,
    pub column: u32,
    /// The access's source text.
    pub text: String,
    pub op: Op,
    pub space: Space,
}

/// A figure over (or, for efficiency, under) its budget on one CC: one per source access
/// (file, line, column, operation, space), with the worst figure of its rows.
#[derive(Clone, Debug, PartialEq)]
pub struct Violation {
    pub limit: Limit,
    /// The compute capability, as the report names it (`"9.0"`).
    pub cc: String,
    /// The access; `None` for the launch's total sectors.
    pub site: Option<SiteRef>,
    /// The figure, in the unit of [`Limit::figure_name`] (the worst of the access's rows).
    pub figure: f64,
    pub budget: f64,
}

impl Violation {
    /// `examples/transpose.cu:40:5 odata[x * width + y] (global store) on CC 9.0: 32 sectors
    /// per request > 4 (max_sectors_per_request)`.
    pub fn message(&self, source: &str) -> String {
        let at = match &self.site {
            Some(s) => format!(
                "{}:{}:{} `{}` ({} {}, {} {})",
                s.file,
                s.line,
                s.column,
                warpscope_report::short_text(&s.text),
                if s.rows.len() == 1 { "site" } else { "sites" },
                s.rows
                    .iter()
                    .map(|r| format!("#{r}"))
                    .collect::<Vec<_>>()
                    .join(", "),
                format!("{:?}", s.space).to_lowercase(),
                format!("{:?}", s.op).to_lowercase(),
            ),
            None => format!("{source} (launch total)"),
        };
        let cmp = if self.limit == Limit::MinEfficiency {
            "<"
        } else {
            ">"
        };
        format!(
            "{at} on CC {}: {} {} {cmp} budget {} ({})",
            self.cc,
            fmt_figure(self.figure),
            self.limit.figure_name(),
            fmt_figure(self.budget),
            self.limit.key()
        )
    }
}

/// 4 → "4", 5.25 → "5.25", 99.99 → "99.99" (at most 2 decimals, no trailing zeros).
pub fn fmt_figure(x: f64) -> String {
    let s = format!("{x:.2}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    s.to_string()
}

/// The result of one limit of one budget on one launch: how many figures were compared
/// (accesses × CCs, or CCs for the launch total) and which broke it.
#[derive(Clone, Debug, PartialEq)]
pub struct Checked {
    pub limit: Limit,
    pub budget: f64,
    pub compared: usize,
    pub violations: Vec<Violation>,
}

/// Compares the figures of `analysis` with each limit of `budget`.
///
/// Errors (a budget that would check nothing is a mistake in the launch file): a CC the
/// analysis does not have, a line with no access, a row number past the table, a limit with
/// no access it applies to (e.g. `max_wavefronts_per_request` on a line with no shared
/// access).
pub fn evaluate(analysis: &Analysis, budget: &Budget) -> Result<Vec<Checked>> {
    budget.validate()?;
    let archs: Vec<&ArchReport> = match &budget.ccs {
        None => analysis.architectures.iter().collect(),
        Some(ccs) => ccs
            .iter()
            .map(|cc| {
                analysis
                    .architectures
                    .iter()
                    .find(|a| &a.cc == cc)
                    .ok_or_else(|| {
                        anyhow::anyhow!(
                            "cc = {cc}: the launch is analyzed for CC {} only; add {cc} to the launch's cc",
                            analysis
                                .architectures
                                .iter()
                                .map(|a| a.cc.as_str())
                                .collect::<Vec<_>>()
                                .join(", ")
                        )
                    })
            })
            .collect::<Result<_>>()?,
    };
    let rows: Vec<usize> = match (&budget.scope, analysis.architectures.first()) {
        (_, None) => Vec::new(),
        (Scope::Launch, Some(a)) => (0..a.sites.len()).collect(),
        (Scope::Row(n), Some(a)) => {
            let Some(i) = n.checked_sub(FIRST_ROW).filter(|&i| i < a.sites.len()) else {
                bail!(
                    "site = {n}: {} has {} accesses (rows #{FIRST_ROW} to #{})",
                    analysis.kernel,
                    a.sites.len(),
                    (a.sites.len() + FIRST_ROW).saturating_sub(1),
                );
            };
            vec![i]
        }
        (Scope::Line { line, column }, Some(a)) => {
            let rows: Vec<usize> = (0..a.sites.len())
                .filter(|&i| {
                    a.sites[i].line == *line && column.is_none_or(|c| a.sites[i].column == c)
                })
                .collect();
            if rows.is_empty() {
                let mut lines: Vec<String> = a.sites.iter().map(|s| s.line.to_string()).collect();
                lines.dedup();
                bail!(
                    "{}: {} has no memory access there; its accesses are on lines {}",
                    budget.scope_text(),
                    analysis.kernel,
                    lines.join(", ")
                );
            }
            rows
        }
    };
    let mut out = Vec::new();
    for (limit, value) in budget.limits() {
        let mut c = Checked {
            limit,
            budget: value,
            compared: 0,
            violations: Vec::new(),
        };
        for arch in &archs {
            if limit == Limit::MaxTotalSectors && budget.scope == Scope::Launch {
                let total: u64 = arch.sites.iter().map(|s| s.counters.sectors).sum();
                c.compared += 1;
                if limit.broken(total as f64, value) {
                    c.violations.push(Violation {
                        limit,
                        cc: arch.cc.clone(),
                        site: None,
                        figure: total as f64,
                        budget: value,
                    });
                }
                continue;
            }
            for &i in &rows {
                let Some(s) = arch.sites.get(i) else { continue };
                if !limit.applies_to(s) {
                    continue;
                }
                c.compared += 1;
                let figure = limit.figure(s);
                if !limit.broken(figure, value) {
                    continue;
                }
                let file = s.file.clone().unwrap_or_else(|| analysis.source.clone());
                let same = |v: &&mut Violation| {
                    v.cc == arch.cc
                        && v.site.as_ref().is_some_and(|x| {
                            (&x.file, x.line, x.column, x.op, x.space)
                                == (&file, s.line, s.column, s.op, s.space)
                        })
                };
                if let Some(v) = c.violations.iter_mut().find(same) {
                    if let Some(x) = v.site.as_mut() {
                        x.rows.push(i + FIRST_ROW);
                    }
                    let worse = if limit == Limit::MinEfficiency {
                        figure < v.figure
                    } else {
                        figure > v.figure
                    };
                    if worse {
                        v.figure = figure;
                    }
                    continue;
                }
                c.violations.push(Violation {
                    limit,
                    cc: arch.cc.clone(),
                    site: Some(SiteRef {
                        rows: vec![i + FIRST_ROW],
                        file,
                        line: s.line,
                        column: s.column,
                        text: s.text.clone(),
                        op: s.op,
                        space: s.space,
                    }),
                    figure,
                    budget: value,
                });
            }
        }
        if c.compared == 0 {
            let what = match limit {
                Limit::MaxWavefrontsPerRequest
                | Limit::MaxExcessWavefronts
                | Limit::MaxConflictWays => "shared-memory access",
                Limit::MinEfficiency => "access with an efficiency (global, local or shared)",
                _ => "global or local access",
            };
            bail!(
                "{} ({}): {} has no {what} {}",
                limit.key(),
                budget.scope_text(),
                analysis.kernel,
                if budget.scope == Scope::Launch {
                    "to check".to_string()
                } else {
                    format!("at {}", budget.scope_text())
                }
            );
        }
        out.push(c);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use warpscope_model::{arch, cost, Config, LaneForm, WarpAccess, WARP_SIZE};
    use warpscope_report::{Aggregator, Header, SiteInfo};

    /// A warp access of `width`-byte lanes at `base + stride · lane`.
    fn access(space: Space, op: Op, base: u64, stride: u64, width: u32) -> WarpAccess {
        let mut addrs = [0u64; WARP_SIZE];
        for (l, a) in addrs.iter_mut().enumerate() {
            *a = base + stride * l as u64;
        }
        WarpAccess {
            space,
            op,
            width,
            mask: u32::MAX,
            addrs,
            read_only: false,
            lanes: LaneForm::Unknown,
        }
    }

    /// Three sites on CC 9.0 and 2.0, each executed by 10 warps:
    /// #1 line 10: coalesced float load (CC 9.0: 4 sectors/request, 100 %);
    /// #2 line 11: column walk, 4-byte floats 128 bytes apart (CC 9.0: 32 sectors/request,
    ///    4/32 = 12.5 %);
    /// #3 line 11: shared float store at stride 2 words (2-way conflict: 2 wavefronts).
    fn analysis() -> Analysis {
        let archs = arch::parse_list("2.0,9.0").unwrap();
        let mut agg = Aggregator::new(archs, Config::default());
        for w in 0..10u64 {
            let base = (1u64 << 30) + 4096 * w;
            agg.add(0, &access(Space::Global, Op::Load, base, 4, 4));
            agg.add(1, &access(Space::Global, Op::Store, base, 128, 4));
            agg.add(2, &access(Space::Shared, Op::Store, 0, 8, 4));
        }
        let site = |line, column, text: &str, op| SiteInfo {
            line,
            column,
            text: text.into(),
            op,
            read_only: false,
            file: None,
            ptx: None,
            ptx_line: None,
        };
        let sites = [
            site(10, 5, "a[i]", Op::Load),
            site(11, 5, "b[i * 32]", Op::Store),
            site(11, 20, "s[2 * t]", Op::Store),
        ];
        agg.finish(
            Header {
                kernel: "k".into(),
                source: "k.cu".into(),
                grid: [10, 1, 1],
                block: [32, 1, 1],
                ..Header::default()
            },
            &sites,
        )
    }

    fn budget(scope: Scope) -> Budget {
        Budget::new(scope)
    }

    /// The fixture's figures are the model's (checked here so the budgets below test
    /// what they say).
    #[test]
    fn fixture_figures_are_the_models() {
        let a = analysis();
        let cc90 = a.architectures.iter().find(|x| x.cc == "9.0").unwrap();
        let c = |i: usize| cc90.sites[i].counters;
        assert_eq!((c(0).requests, c(0).sectors), (10, 40));
        assert_eq!((c(1).requests, c(1).sectors), (10, 320));
        assert_eq!((c(2).requests, c(2).wavefronts), (10, 20));
        let arch90 = arch::parse_list("9.0").unwrap()[0];
        let one = cost(
            arch90,
            &Config::default(),
            &access(Space::Global, Op::Store, 1 << 30, 128, 4),
        );
        assert_eq!(one.sectors, 32);
    }

    #[test]
    fn launch_budget_names_each_site_over_it() {
        let a = analysis();
        let b = Budget {
            ccs: Some(vec!["9.0".into()]),
            max_sectors_per_request: Some(4.0),
            ..budget(Scope::Launch)
        };
        let r = evaluate(&a, &b).unwrap();
        assert_eq!(r.len(), 1);
        // Two global sites compared on one CC; the column walk breaks it with 32 > 4.
        assert_eq!(r[0].compared, 2);
        assert_eq!(r[0].violations.len(), 1);
        let v = &r[0].violations[0];
        assert_eq!(v.figure, 32.0);
        assert_eq!(v.budget, 4.0);
        assert_eq!(v.cc, "9.0");
        let s = v.site.as_ref().unwrap();
        assert_eq!((s.rows.as_slice(), s.line, s.column), (&[1][..], 11, 5));
        let m = v.message("k.cu");
        assert!(m.contains("k.cu:11:5 `b[i * 32]`"), "{m}");
        assert!(m.contains("32 sectors per request > budget 4"), "{m}");
    }

    #[test]
    fn efficiency_is_in_percent_and_a_lower_bound() {
        let a = analysis();
        let b = Budget {
            ccs: Some(vec!["9.0".into()]),
            min_efficiency: Some(50.0),
            ..budget(Scope::Launch)
        };
        let r = evaluate(&a, &b).unwrap();
        // The column walk's 12.5 % (global) and the 2-way conflict's 50 % (shared: requests
        // / wavefronts, as the table's eff) are compared; only the first is under 50.
        assert_eq!(r[0].compared, 3);
        assert_eq!(r[0].violations.len(), 1);
        assert_eq!(r[0].violations[0].figure, 12.5);
        let ok = Budget {
            min_efficiency: Some(12.5),
            ..b
        };
        assert!(evaluate(&a, &ok).unwrap()[0].violations.is_empty());
    }

    #[test]
    fn line_budget_selects_the_lines_accesses() {
        let a = analysis();
        // Line 11 has a global store (32 sectors/request) and a shared store (2 wavefronts
        // per request); both CCs: on 2.0 the 2-way conflict of 4-byte words is 2 as well.
        let b = Budget {
            max_wavefronts_per_request: Some(1.0),
            max_sectors_per_request: Some(32.0),
            ..budget(Scope::Line {
                line: 11,
                column: None,
            })
        };
        let r = evaluate(&a, &b).unwrap();
        let sec = r
            .iter()
            .find(|c| c.limit == Limit::MaxSectorsPerRequest)
            .unwrap();
        assert!(sec.violations.is_empty());
        assert_eq!(sec.compared, 2);
        let wf = r
            .iter()
            .find(|c| c.limit == Limit::MaxWavefrontsPerRequest)
            .unwrap();
        assert_eq!(wf.compared, 2);
        let figs: Vec<(String, f64)> = wf
            .violations
            .iter()
            .map(|v| (v.cc.clone(), v.figure))
            .collect();
        assert_eq!(figs, [("2.0".to_string(), 2.0), ("9.0".to_string(), 2.0)]);
    }

    #[test]
    fn total_sectors_of_the_launch_and_of_a_row() {
        let a = analysis();
        let b = Budget {
            ccs: Some(vec!["9.0".into()]),
            max_total_sectors: Some(359),
            ..budget(Scope::Launch)
        };
        // 40 + 320 = 360 sectors on CC 9.0.
        let v = &evaluate(&a, &b).unwrap()[0].violations;
        assert_eq!(v.len(), 1);
        assert_eq!((v[0].figure, v[0].site.is_none()), (360.0, true));
        let row = Budget {
            max_total_sectors: Some(40),
            ..Budget {
                ccs: Some(vec!["9.0".into()]),
                ..budget(Scope::Row(0))
            }
        };
        assert!(evaluate(&a, &row).unwrap()[0].violations.is_empty());
    }

    #[test]
    fn budgets_that_check_nothing_are_errors() {
        let a = analysis();
        let e = |b: Budget| format!("{:#}", evaluate(&a, &b).unwrap_err());
        let m = e(Budget {
            max_sectors_per_request: Some(4.0),
            ..budget(Scope::Line {
                line: 12,
                column: None,
            })
        });
        assert!(m.contains("line 12") && m.contains("lines 10, 11"), "{m}");
        let m = e(Budget {
            max_sectors_per_request: Some(4.0),
            ..budget(Scope::Row(3))
        });
        assert!(m.contains("3 accesses (rows #0 to #2)"), "{m}");
        let m = e(Budget {
            max_wavefronts_per_request: Some(1.0),
            ..budget(Scope::Row(1))
        });
        assert!(m.contains("no shared-memory access"), "{m}");
        let m = e(Budget {
            ccs: Some(vec!["8.0".into()]),
            max_sectors_per_request: Some(4.0),
            ..budget(Scope::Launch)
        });
        assert!(m.contains("CC 2.0, 9.0 only"), "{m}");
        let m = e(budget(Scope::Launch));
        assert!(m.contains("at least one of"), "{m}");
        let m = e(Budget {
            min_efficiency: Some(101.0),
            ..budget(Scope::Launch)
        });
        assert!(m.contains("percent"), "{m}");
    }

    /// Two shared accesses on CC 9.0, 10 warps each: #0 line 20, a conflict-free float4
    /// store (4 wavefronts per request, its ideal); #1 line 21, a float column of a
    /// [32][32] tile (32 wavefronts per request, ideal 1: 31 excess per request).
    fn shared_analysis() -> Analysis {
        let archs = arch::parse_list("9.0").unwrap();
        let mut agg = Aggregator::new(archs, Config::default());
        for _ in 0..10 {
            agg.add(0, &access(Space::Shared, Op::Store, 0, 16, 16));
            agg.add(1, &access(Space::Shared, Op::Load, 0, 128, 4));
        }
        let site = |line, text: &str, op| SiteInfo {
            line,
            column: 5,
            text: text.into(),
            op,
            read_only: false,
            file: None,
            ptx: None,
            ptx_line: None,
        };
        agg.finish(
            Header {
                kernel: "k".into(),
                source: "k.cu".into(),
                grid: [10, 1, 1],
                block: [32, 1, 1],
                ..Header::default()
            },
            &[
                site(20, "tile[t]", Op::Store),
                site(21, "t[x][y]", Op::Load),
            ],
        )
    }

    /// `max_excess_wavefronts` and `max_conflict_ways` see the float4 as conflict free
    /// and the column walk as 32-way, where wavefronts per request cannot tell a float4
    /// from a 4-way conflict.
    #[test]
    fn bank_conflict_budgets_measure_against_the_ideal() {
        let a = shared_analysis();
        let c = |i: usize| a.architectures[0].sites[i].counters;
        assert_eq!(
            (
                c(0).wavefronts,
                c(0).ideal_wavefronts,
                c(0).excess_wavefronts
            ),
            (40, 40, 0)
        );
        assert_eq!(
            (
                c(1).wavefronts,
                c(1).ideal_wavefronts,
                c(1).excess_wavefronts
            ),
            (320, 10, 310)
        );
        let b = Budget {
            max_excess_wavefronts: Some(0),
            max_conflict_ways: Some(1.0),
            ..budget(Scope::Launch)
        };
        let r = evaluate(&a, &b).unwrap();
        let by = |l: Limit| r.iter().find(|c| c.limit == l).unwrap();
        let excess = by(Limit::MaxExcessWavefronts);
        assert_eq!(excess.compared, 2);
        assert_eq!(excess.violations.len(), 1);
        assert_eq!(excess.violations[0].figure, 310.0);
        let m = excess.violations[0].message("k.cu");
        assert!(
            m.contains("k.cu:21:5 `t[x][y]`") && m.contains("310 excess wavefronts > budget 0"),
            "{m}"
        );
        let ways = by(Limit::MaxConflictWays);
        assert_eq!(ways.violations.len(), 1);
        assert_eq!(ways.violations[0].figure, 32.0);
        // Wavefronts per request keep their meaning: the float4 takes 4.
        let per = Budget {
            max_wavefronts_per_request: Some(4.0),
            ..budget(Scope::Row(0))
        };
        assert!(evaluate(&a, &per).unwrap()[0].violations.is_empty());
        // The shared efficiency is ideal / actual: 100 % for the float4, 1/32 for the walk.
        let eff = Budget {
            min_efficiency: Some(100.0),
            ..budget(Scope::Launch)
        };
        let v = &evaluate(&a, &eff).unwrap()[0].violations;
        assert_eq!(v.len(), 1);
        assert_eq!(v[0].figure, 100.0 / 32.0);
        // Neither new limit applies to a line without a shared access.
        let a2 = analysis();
        let e = evaluate(
            &a2,
            &Budget {
                max_conflict_ways: Some(1.0),
                ..budget(Scope::Line {
                    line: 10,
                    column: None,
                })
            },
        )
        .unwrap_err();
        assert!(format!("{e}").contains("no shared-memory access"), "{e}");
        assert!(Limit::ALL
            .iter()
            .any(|l| l.key() == "max_excess_wavefronts"));
        assert!(!Limit::MaxWavefrontsPerRequest
            .description()
            .contains("conflict free"));
    }

    #[test]
    fn figures_print_without_trailing_zeros() {
        assert_eq!(fmt_figure(4.0), "4");
        assert_eq!(fmt_figure(5.25), "5.25");
        assert_eq!(fmt_figure(12.5), "12.5");
        assert_eq!(fmt_figure(1.0 / 3.0), "0.33");
    }
}
