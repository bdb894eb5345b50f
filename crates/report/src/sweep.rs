//! The table of a sweep: one launch per value of one scalar parameter, one row per value,
//! the kernel's totals per compute capability.

use crate::table::num;
use crate::{Analysis, Counters, SiteReport};
use comfy_table::{
    presets::UTF8_FULL_CONDENSED, Cell, CellAlignment, Color, ContentArrangement, Table,
};
use schemars::JsonSchema;
use serde::Serialize;
use warpscope_model::{Op, Space};

/// One value of a sweep and the analysis of the launch with it.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct SweepPoint {
    /// The parameter's value for this launch.
    pub value: i64,
    /// The analysis of the launch with it.
    pub analysis: Analysis,
}

/// The result of `warpscope analyze --sweep NAME=A..B[:STEP]`: one launch per value of one
/// scalar parameter.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct SweepOutput {
    /// The swept scalar parameter.
    pub parameter: String,
    /// One point per value, in the order swept.
    pub points: Vec<SweepPoint>,
}

/// What a sweep's table shows: one curve (a table, a row per value) per access, or per
/// memory space of the kernel's totals.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SweepCurves {
    /// One table per access (a row of `analyze`'s table), the default.
    #[default]
    PerAccess,
    /// One table per memory space, of the kernel's totals (`--sweep-total`).
    Total,
}

fn ratio(a: u64, b: u64) -> String {
    if b == 0 {
        "-".into()
    } else {
        format!("{:.2}", a as f64 / b as f64)
    }
}

fn right(s: impl ToString) -> Cell {
    Cell::new(s.to_string()).set_alignment(CellAlignment::Right)
}

/// An access of a sweep, matched across values by where it is and what it does (its row
/// number can change with the value: a branch taken at some values only).
#[derive(Clone, PartialEq)]
struct AccessKey {
    file: Option<String>,
    line: u32,
    column: u32,
    ptx_line: Option<u32>,
    op: Op,
    space: Space,
    width: u32,
    read_only: bool,
}

impl AccessKey {
    fn of(s: &SiteReport) -> AccessKey {
        AccessKey {
            file: s.file.clone(),
            line: s.line,
            column: s.column,
            ptx_line: s.ptx_line,
            op: s.op,
            space: s.space,
            width: s.width,
            read_only: s.read_only,
        }
    }
}

/// One curve: its title, its memory space, and per point and compute capability the
/// counters (`None` where the access did not run at that value).
struct Curve {
    title: String,
    space: Space,
    counters: Vec<Vec<Option<Counters>>>,
}

fn access_curves(points: &[SweepPoint], source: &str) -> Vec<Curve> {
    let mut keys: Vec<(AccessKey, &SiteReport)> = Vec::new();
    for p in points {
        if let Some(arch) = p.analysis.architectures.first() {
            for s in &arch.sites {
                let k = AccessKey::of(s);
                if !keys.iter().any(|(x, _)| *x == k) {
                    keys.push((k, s));
                }
            }
        }
    }
    keys.iter()
        .enumerate()
        .map(|(i, (k, s))| {
            let at = crate::table::position(s.file.as_deref().unwrap_or(source), s.line, s.column);
            let ptx = match (&s.ptx, s.ptx_line) {
                (Some(p), Some(l)) => format!(", {p} ({l})"),
                _ => String::new(),
            };
            Curve {
                title: format!(
                    "access {i}: {at} {} — {} {}, {} B{ptx}",
                    s.text,
                    format!("{:?}", s.op).to_lowercase(),
                    crate::table::space_label(s.space, s.read_only),
                    s.width
                ),
                space: k.space,
                counters: points
                    .iter()
                    .map(|p| {
                        p.analysis
                            .architectures
                            .iter()
                            .map(|a| {
                                a.sites
                                    .iter()
                                    .filter(|x| AccessKey::of(x) == *k)
                                    .map(|x| x.counters)
                                    .reduce(|mut a, b| {
                                        a.add(&b);
                                        a
                                    })
                            })
                            .collect()
                    })
                    .collect(),
            }
        })
        .collect()
}

fn total_curves(points: &[SweepPoint]) -> Vec<Curve> {
    crate::SPACES
        .iter()
        .enumerate()
        .filter(|&(k, _)| {
            points.iter().any(|p| {
                p.analysis
                    .architectures
                    .iter()
                    .any(|a| !a.totals.by_space()[k].1.is_empty())
            })
        })
        .map(|(k, &space)| Curve {
            title: format!("total {}", crate::table::space_label(space, false)),
            space,
            counters: points
                .iter()
                .map(|p| {
                    p.analysis
                        .architectures
                        .iter()
                        .map(|a| Some(*a.totals.by_space()[k].1))
                        .collect()
                })
                .collect(),
        })
        .collect()
}

/// The column names of a curve of `space`, per compute capability.
fn columns(space: Space) -> &'static [&'static str] {
    match space {
        Space::Shared => &["req", "wf", "wf/req", "excess", "eff"],
        Space::Constant => &["req", "req/instr"],
        _ => &["req", "tx", "tx/req", "excess", "eff"],
    }
}

/// The cells of [`columns`] for one point and compute capability.
fn curve_cells(c: Option<&Counters>, space: Space, color: bool) -> Vec<Cell> {
    let n = columns(space).len();
    let Some(c) = c else {
        return (0..n).map(|_| right("-")).collect();
    };
    if space == Space::Constant {
        return vec![
            right(num(c.requests)),
            right(ratio(c.requests, c.executions)),
        ];
    }
    let (moved, per) = if space == Space::Shared {
        (c.wavefronts, ratio(c.wavefronts, c.requests))
    } else {
        (c.transactions, ratio(c.transactions, c.requests))
    };
    let excess = c.excess_in(space).unwrap_or(0);
    let e = c.efficiency_in(space);
    let mut excess_cell = right(num(excess));
    let mut eff = right(crate::table::eff_text(e));
    if color {
        if excess > 0 {
            excess_cell = excess_cell.fg(Color::Red);
        }
        if let Some(e) = e {
            eff = eff.fg(crate::table::eff_color(e));
        }
    }
    vec![
        right(num(c.requests)),
        right(num(moved)),
        right(per),
        excess_cell,
        eff,
    ]
}

/// Renders a sweep with every compute capability side by side, whatever its width, one
/// curve per access; see [`render_sweep_fit`].
pub fn render_sweep(name: &str, points: &[SweepPoint], color: bool) -> String {
    render_sweep_fit(name, points, SweepCurves::PerAccess, color, None)
}

/// Renders a sweep of the scalar parameter `name`: one table per curve, one row per point
/// in the given order. `curves` picks the curves: one per access (a row of `analyze`'s
/// table, matched across values by file, line, column, PTX line, op, space and width; `-`
/// where it did not run at a value), or one per memory space of the kernel's totals
/// (efficiency is never summed across spaces). The header line says which.
///
/// Per compute capability, for global, local, texture and surface memory: `req`
/// (requests), `tx` (transactions — 32-byte sectors from CC 5.0 on), `tx/req`, `excess`
/// (sectors above ⌈bytes requested ÷ 32⌉) and `eff` (bytes requested ÷ bytes moved); for
/// shared memory `req`, `wf` (wavefronts), `wf/req`, `excess` (wavefronts above a
/// conflict-free access's) and `eff` (ideal ÷ actual wavefronts); for constant memory `req`
/// and `req/instr` (serialized requests per warp instruction). An `eff` above 100 % (a
/// broadcast) shows as 100 % marked `*`. The title is that of the first point; the notes of
/// all points follow the tables, each once. `color` adds ANSI colours. With `width`
/// (characters), a table wider than that is split into one per compute capability,
/// stacked. An empty `points` gives an empty string.
pub fn render_sweep_fit(
    name: &str,
    points: &[SweepPoint],
    curves: SweepCurves,
    color: bool,
    width: Option<usize>,
) -> String {
    let Some(first) = points.first() else {
        return String::new();
    };
    let a = &first.analysis;
    let archs: Vec<&str> = a.architectures.iter().map(|a| a.cc.as_str()).collect();
    let list = match curves {
        SweepCurves::PerAccess => access_curves(points, &a.source),
        SweepCurves::Total => total_curves(points),
    };
    let (lo, hi) = (
        points.iter().map(|p| p.value).min().unwrap_or(0),
        points.iter().map(|p| p.value).max().unwrap_or(0),
    );
    let mut out = format!(
        "{} — grid ({},{},{}) block ({},{},{}) — {} — {name} = {lo}..{hi} ({} values) — {}\n",
        a.kernel,
        a.grid[0],
        a.grid[1],
        a.grid[2],
        a.block[0],
        a.block[1],
        a.block[2],
        a.source,
        points.len(),
        match curves {
            SweepCurves::PerAccess => "one curve per access (--sweep-total: per memory space)",
            SweepCurves::Total => "totals, one curve per memory space",
        }
    );
    let mut broadcast = false;
    for curve in &list {
        let make = |chosen: &[usize], color: bool| {
            let mut t = Table::new();
            t.load_preset(UTF8_FULL_CONDENSED)
                .set_content_arrangement(ContentArrangement::Disabled);
            if color {
                t.enforce_styling();
            } else {
                t.force_no_tty();
            }
            let mut header = vec![Cell::new(name)];
            for cc in chosen.iter().filter_map(|&i| archs.get(i)) {
                for h in columns(curve.space) {
                    header.push(Cell::new(format!("{cc} {h}")));
                }
            }
            t.set_header(header);
            for (p, per_arch) in points.iter().zip(&curve.counters) {
                let mut row = vec![right(p.value)];
                for &i in chosen {
                    let c = per_arch.get(i).copied().flatten();
                    row.extend(curve_cells(c.as_ref(), curve.space, color));
                }
                t.add_row(row);
            }
            t
        };
        let title = |i: usize| {
            let x = &a.architectures[i];
            format!("CC {} ({})", x.cc, x.name)
        };
        broadcast |= curve
            .counters
            .iter()
            .flatten()
            .flatten()
            .any(|c| c.efficiency_in(curve.space).is_some_and(|e| e > 1.0 + 1e-9));
        out.push_str(&curve.title);
        out.push('\n');
        out.push_str(&crate::table::fit(archs.len(), width, &make, &title, color));
        out.push('\n');
    }
    let spaces: Vec<Space> = list.iter().map(|c| c.space).collect();
    let memory = spaces
        .iter()
        .any(|&s| s != Space::Shared && s != Space::Constant);
    let mut legend = Vec::new();
    match (memory, spaces.contains(&Space::Shared)) {
        (true, true) => legend.push(crate::table::LEGEND),
        (true, false) => legend.push("req: requests; tx: transactions (32-byte sectors from CC 5.0 on); excess: sectors above the ideal for the bytes requested; eff: bytes requested / bytes moved"),
        (false, true) => legend.push("req: requests; wf: shared-memory wavefronts; excess: wavefronts above a conflict-free access's; eff: ideal / actual wavefronts"),
        (false, false) => {}
    }
    if spaces.contains(&Space::Constant) {
        legend.push(
            "req/instr: constant-memory requests per warp instruction (1.00: one address per warp)",
        );
    }
    out.push_str(&legend.join("; "));
    out.push('\n');
    if broadcast {
        out.push_str(crate::table::BROADCAST_LEGEND);
        out.push('\n');
    }
    let mut seen: Vec<&str> = Vec::new();
    for p in points {
        for la in &p.analysis.local_arrays {
            let n = la.name.as_str();
            if !seen.contains(&n) {
                seen.push(n);
                out.push_str(&format!(
                    "local memory: '{}' ({}:{}) — {}\n",
                    la.name, la.line, la.column, la.reason
                ));
            }
        }
    }
    out
}
