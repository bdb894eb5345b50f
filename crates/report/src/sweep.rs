//! The table of a sweep: one launch per value of one scalar parameter, one row per value,
//! the kernel's totals per compute capability.

use crate::table::num;
use crate::{Analysis, Counters, TotalsReport};
use comfy_table::{
    presets::UTF8_FULL_CONDENSED, Cell, CellAlignment, Color, ContentArrangement, Table,
};
use schemars::JsonSchema;
use serde::Serialize;

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

/// Global and local traffic of one compute capability, summed over loads and stores.
fn memory(t: &TotalsReport) -> Counters {
    let mut s = Counters::default();
    for c in [t.global_load, t.global_store, t.local_load, t.local_store] {
        s.requests += c.requests;
        s.transactions += c.transactions;
        s.transaction_bytes += c.transaction_bytes;
        s.bytes_requested += c.bytes_requested;
    }
    s
}

fn shared(t: &TotalsReport) -> Counters {
    let mut s = Counters::default();
    for c in [t.shared_load, t.shared_store] {
        s.requests += c.requests;
        s.wavefronts += c.wavefronts;
    }
    s
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

/// Renders a sweep with every compute capability side by side, whatever its width; see
/// [`render_sweep_fit`].
pub fn render_sweep(name: &str, points: &[SweepPoint], color: bool) -> String {
    render_sweep_fit(name, points, color, None)
}

/// Renders a sweep of the scalar parameter `name`: one row per point, in the given order.
///
/// Per compute capability, for the kernel's totals (with `-e`, the one access): where the
/// kernel has global or local accesses, `req` (requests), `tx` (transactions — 32-byte
/// sectors from CC 5.0 on), `tx/req` and `eff` (bytes requested ÷ bytes moved); where it has
/// shared accesses, `req` (`sh req` next to global columns), `wf` (wavefronts) and `wf/req`
/// (1.00 is conflict-free); where it reads constant memory, `const/instr` (serialized
/// requests per warp instruction). The title is that of the first point; the notes of all
/// points follow the table, each once. `color` adds ANSI colours. With `width` (characters),
/// a table wider than that is split into one per compute capability, stacked. An empty
/// `points` gives an empty string.
pub fn render_sweep_fit(
    name: &str,
    points: &[SweepPoint],
    color: bool,
    width: Option<usize>,
) -> String {
    let Some(first) = points.first() else {
        return String::new();
    };
    let archs: Vec<&str> = first
        .analysis
        .architectures
        .iter()
        .map(|a| a.cc.as_str())
        .collect();
    let all = || points.iter().flat_map(|p| p.analysis.architectures.iter());
    let has_shared = all().any(|a| shared(&a.totals).requests > 0);
    let has_const = all().any(|a| a.totals.constant_load.requests > 0);
    let has_mem = all().any(|a| memory(&a.totals).requests > 0) || !(has_shared || has_const);

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
            if has_mem {
                for h in ["req", "tx", "tx/req", "eff"] {
                    header.push(Cell::new(format!("{cc} {h}")));
                }
            }
            if has_shared {
                let req = if has_mem { "sh req" } else { "req" };
                for h in [req, "wf", "wf/req"] {
                    header.push(Cell::new(format!("{cc} {h}")));
                }
            }
            if has_const {
                header.push(Cell::new(format!("{cc} const/instr")));
            }
        }
        t.set_header(header);
        for p in points {
            let mut row = vec![right(p.value)];
            let chosen_archs = chosen
                .iter()
                .filter_map(|&i| p.analysis.architectures.get(i));
            for arch in chosen_archs {
                let tt = &arch.totals;
                if has_mem {
                    let m = memory(tt);
                    row.push(right(num(m.requests)));
                    row.push(right(num(m.transactions)));
                    row.push(right(ratio(m.transactions, m.requests)));
                    let mut eff = right(if m.transaction_bytes > 0 {
                        format!(
                            "{:.1}%",
                            100.0 * m.bytes_requested as f64 / m.transaction_bytes as f64
                        )
                    } else {
                        "-".into()
                    });
                    if color && m.transaction_bytes > 0 {
                        let e = m.bytes_requested as f64 / m.transaction_bytes as f64;
                        eff = eff.fg(if e >= 0.999 {
                            Color::Green
                        } else if e >= 0.5 {
                            Color::Yellow
                        } else {
                            Color::Red
                        });
                    }
                    row.push(eff);
                }
                if has_shared {
                    let s = shared(tt);
                    row.push(right(num(s.requests)));
                    let mut wf = right(num(s.wavefronts));
                    let mut per = right(ratio(s.wavefronts, s.requests));
                    // More than one wavefront per request: bank conflicts.
                    if color && s.wavefronts > s.requests {
                        wf = wf.fg(Color::Red);
                        per = per.fg(Color::Red);
                    }
                    row.push(wf);
                    row.push(per);
                }
                if has_const {
                    let c = tt.constant_load;
                    row.push(right(ratio(c.requests, c.executions)));
                }
            }
            t.add_row(row);
        }
        t
    };
    let title = |i: usize| {
        let x = &first.analysis.architectures[i];
        format!("CC {} ({})", x.cc, x.name)
    };
    let table = crate::table::fit(archs.len(), width, &make, &title, color);
    let a = &first.analysis;
    let (lo, hi) = (
        points.iter().map(|p| p.value).min().unwrap_or(0),
        points.iter().map(|p| p.value).max().unwrap_or(0),
    );
    let mut out = format!(
        "{} — grid ({},{},{}) block ({},{},{}) — {} — {name} = {lo}..{hi} ({} values)\n",
        a.kernel,
        a.grid[0],
        a.grid[1],
        a.grid[2],
        a.block[0],
        a.block[1],
        a.block[2],
        a.source,
        points.len()
    );
    out.push_str(&table);
    out.push('\n');
    let mut legend = Vec::new();
    if has_mem {
        legend.push("req: requests; tx: global and local transactions (32-byte sectors from CC 5.0 on); eff: bytes requested / bytes moved");
    }
    if has_shared {
        legend.push("wf: shared-memory wavefronts (wf/req 1.00: no bank conflict)");
    }
    if has_const {
        legend.push("const/instr: constant-memory requests per warp instruction (1.00: one address per warp)");
    }
    out.push_str(&legend.join("; "));
    out.push('\n');
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
