//! The table for people: one row per access site, one column group per compute capability.

use crate::rows::{Row, RowView, SortBy};
use crate::{Analysis, Counters};
use comfy_table::{
    presets::UTF8_FULL_CONDENSED, Cell, CellAlignment, Color, ContentArrangement, Table,
};
use warpscope_model::Space;

pub(crate) fn eff_color(e: f64) -> Color {
    if e >= 0.999 {
        Color::Green
    } else if e >= 0.5 {
        Color::Yellow
    } else {
        Color::Red
    }
}

/// 1234567 → "1,234,567".
pub fn num(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, ch) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

/// The width tables are fitted to, in characters: the terminal's when standard output is
/// one; otherwise `COLUMNS` when it is set to a number; otherwise `None` (full tables, as a
/// pipe or a file gets them).
pub fn table_width() -> Option<usize> {
    use std::io::IsTerminal;
    let columns = || {
        std::env::var("COLUMNS")
            .ok()
            .and_then(|c| c.trim().parse::<usize>().ok())
            .filter(|&c| c > 0)
    };
    if std::io::stdout().is_terminal() {
        Table::new().width().map(usize::from).or_else(columns)
    } else {
        columns()
    }
}

/// Characters in the widest line of `text` (ANSI colour codes must not be in it).
fn text_width(text: &str) -> usize {
    text.lines().map(|l| l.chars().count()).max().unwrap_or(0)
}

/// Renders tables made by `make(columns)` (`columns`: the indexes of the compute
/// capabilities to show) so that they fit `width`: the one table of every capability when
/// it fits (or `width` is `None`); else one table per capability, stacked, each titled by
/// `title(i)` and wrapped to the width by comfy-table's dynamic arrangement where even that
/// is too wide.
pub(crate) fn fit(
    n: usize,
    width: Option<usize>,
    make: &dyn Fn(&[usize], bool) -> Table,
    title: &dyn Fn(usize) -> String,
    color: bool,
) -> String {
    let all: Vec<usize> = (0..n).collect();
    let Some(w) = width else {
        return make(&all, color).to_string();
    };
    if text_width(&make(&all, false).to_string()) <= w {
        return make(&all, color).to_string();
    }
    let wrap = |mut t: Table| {
        t.set_content_arrangement(ContentArrangement::Dynamic)
            .set_width(u16::try_from(w).unwrap_or(u16::MAX));
        t.to_string()
    };
    if n <= 1 {
        return wrap(make(&all, color));
    }
    (0..n)
        .map(|i| format!("{}\n{}", title(i), wrap(make(&[i], color))))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Renders `a` as a table with every compute capability side by side, whatever its width;
/// see [`render_table_fit`].
pub fn render_table(a: &Analysis, color: bool) -> String {
    render_table_fit(a, color, None)
}

/// The legend under an analysis table.
pub(crate) const LEGEND: &str = "req: requests; tx: transactions (32-byte sectors from CC 5.0 on); wf: shared-memory wavefronts; excess: sectors (wavefronts for shared) above the ideal for the bytes requested; eff: bytes requested / bytes moved (shared: ideal / actual wavefronts)";

/// Renders `a` as a table, one row per source access ([`RowView::default`]); see
/// [`render_table_view`].
pub fn render_table_fit(a: &Analysis, color: bool, width: Option<usize>) -> String {
    render_table_view(a, color, width, &RowView::default())
}

/// Renders `a` as a table, its rows as `view` groups, sorts and cuts them ([`crate::rows`]).
/// `#` numbers the sites from 0 (`explain --site N` takes that number; a row of several
/// sites shows the first and last, `8–23`, and `×N` after its access).
/// Per compute capability: `req` (requests), `tx/wf` (transactions
/// for global and local accesses — 32-byte sectors from 5.x on —, wavefronts for shared
/// ones, serialized requests for constant ones), `excess` (sectors above ⌈bytes requested ÷
/// 32⌉, or wavefronts above a conflict-free access's: Nsight Compute's excessive sectors and
/// bank conflicts) and `eff` (bytes requested ÷ bytes moved; for shared memory ideal ÷
/// actual wavefronts; capped at 100 % and marked `*` for a broadcast). The last rows are the
/// totals, one per memory space the launch accesses (efficiency is never summed across
/// spaces). `color` adds ANSI colours (efficiency green/yellow/red, excess red). With `width`
/// (characters, see [`table_width`]), a table wider than that is split into one table per
/// compute capability, stacked, and wrapped if still too wide.
pub fn render_table_view(
    a: &Analysis,
    color: bool,
    width: Option<usize>,
    view: &RowView,
) -> String {
    let rows = crate::rows::rows(a, view);
    let make = |archs: &[usize], color: bool| site_table(a, &rows, archs, color);
    let title = |i: usize| {
        let x = &a.architectures[i];
        format!("CC {} ({})", x.cc, x.name)
    };
    let mut out = format!(
        "{} — grid ({},{},{}) block ({},{},{}) — {}\n",
        a.kernel, a.grid[0], a.grid[1], a.grid[2], a.block[0], a.block[1], a.block[2], a.source
    );
    if let Some(r) = &a.resources {
        out.push_str(&crate::resources::render_header(r));
    }
    out.push_str(&fit(a.architectures.len(), width, &make, &title, color));
    out.push('\n');
    let all = crate::rows::rows(a, &RowView { top: None, ..*view }).len();
    if rows.len() < all {
        let by = match view.sort {
            SortBy::Site => "first by source position",
            SortBy::Requests => "with the most requests",
            SortBy::Sectors => "with the most sectors or wavefronts",
            SortBy::Excess => "with the most excess",
        };
        out.push_str(&format!(
            "rows: the {} {by} (CC {}) of {all}; the total is the kernel's\n",
            rows.len(),
            a.architectures.first().map_or("", |x| x.cc.as_str())
        ));
    }
    out.push_str(LEGEND);
    out.push('\n');
    if any_broadcast(a) {
        out.push_str(BROADCAST_LEGEND);
        out.push('\n');
    }
    for la in &a.local_arrays {
        out.push_str(&format!(
            "local memory: '{}' ({}:{}) — {}\n",
            la.name, la.line, la.column, la.reason
        ));
    }
    for t in &a.traffic {
        out.push_str(&render_traffic(t));
    }
    out.push_str(&render_advice(a, color));
    out
}

/// `note: …` lines of `notes`, one each, for standard error: the table and the other
/// formats on standard output stay free of them (`-q` leaves them out).
pub fn render_notes<S: AsRef<str>>(notes: &[S]) -> String {
    notes
        .iter()
        .map(|n| format!("note: {}\n", n.as_ref()))
        .collect()
}

/// The table of `rows` of `a` with the columns of the compute capabilities `archs`
/// (indexes into `a.architectures`).
fn site_table(a: &Analysis, rows: &[Row], archs: &[usize], color: bool) -> Table {
    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Disabled);
    if color {
        t.enforce_styling();
    } else {
        t.force_no_tty();
    }
    let chosen = || archs.iter().copied().filter(|&i| i < a.architectures.len());
    // The compiled path adds the PTX instruction of each site and its PTX line.
    let with_ptx = a
        .architectures
        .first()
        .is_some_and(|x| x.sites.iter().any(|s| s.ptx.is_some()));
    let mut header = vec![
        Cell::new("#"),
        Cell::new("site"),
        Cell::new("access"),
        Cell::new("op"),
        Cell::new("space"),
        Cell::new("B"),
    ];
    if with_ptx {
        header.insert(3, Cell::new("ptx (line)"));
    }
    for arch in chosen().map(|i| &a.architectures[i]) {
        header.push(Cell::new(format!("{} req", arch.cc)));
        header.push(Cell::new(format!("{} tx/wf", arch.cc)));
        header.push(Cell::new(format!("{} excess", arch.cc)));
        header.push(Cell::new(format!("{} eff", arch.cc)));
    }
    t.set_header(header);
    for row in rows {
        let s0 = &crate::rows::summed(a, 0, row);
        let space = space_label(s0.space, s0.read_only);
        let mut cells_of_row = vec![
            Cell::new(row.label()).set_alignment(CellAlignment::Right),
            Cell::new(position(
                s0.file.as_deref().unwrap_or(&a.source),
                s0.line,
                s0.column,
            )),
            Cell::new(crate::short_text(&s0.text)),
            Cell::new(format!("{:?}", s0.op).to_lowercase()),
            Cell::new(space),
            Cell::new(s0.width).set_alignment(CellAlignment::Right),
        ];
        if with_ptx {
            let last = row
                .sites
                .last()
                .and_then(|&i| a.architectures[0].sites[i].ptx_line);
            let p = match (&s0.ptx, s0.ptx_line, last) {
                (Some(p), Some(l), Some(m)) if m != l => format!("{p} ({l}–{m})"),
                (Some(p), Some(l), _) => format!("{p} ({l})"),
                _ => String::new(),
            };
            cells_of_row.insert(3, Cell::new(p));
        }
        for k in chosen() {
            let s = crate::rows::summed(a, k, row);
            cells_of_row.extend(cells(&s.counters, s.space, color));
        }
        t.add_row(cells_of_row);
    }
    // Totals: one row per memory space, never one efficiency across spaces.
    for (k, space) in crate::SPACES.into_iter().enumerate() {
        let present = a
            .architectures
            .iter()
            .any(|x| !x.totals.by_space()[k].1.is_empty());
        if !present {
            continue;
        }
        let mut row = vec![
            Cell::new(""),
            Cell::new("total"),
            Cell::new(""),
            Cell::new(""),
            Cell::new(space_label(space, false)),
            Cell::new(""),
        ];
        if with_ptx {
            row.push(Cell::new(""));
        }
        for arch in chosen().map(|i| &a.architectures[i]) {
            row.extend(cells(arch.totals.by_space()[k].1, space, color));
        }
        t.add_row(row);
    }
    t
}

/// The `space` column's word for a row: `global (ro)` for the read-only path, `dsmem` for
/// distributed shared memory.
pub(crate) fn space_label(space: Space, read_only: bool) -> String {
    match space {
        Space::Global if read_only => "global (ro)".to_string(),
        Space::DistributedShared => "dsmem".to_string(),
        other => format!("{other:?}").to_lowercase(),
    }
}

/// Bytes in B, kB, MB or GB (powers of 1000), three significant digits.
fn bytes(n: u64) -> String {
    let x = n as f64;
    let (v, u) = if x >= 1e9 {
        (x / 1e9, "GB")
    } else if x >= 1e6 {
        (x / 1e6, "MB")
    } else if x >= 1e3 {
        (x / 1e3, "kB")
    } else {
        return format!("{n} B");
    };
    format!("{v:.3} {u}")
}

/// The `--gpu` section: per-site bytes asked of L1, L2 and DRAM, launch totals, the time
/// bounds and the predicted time and effective bandwidth (GB/s = 1e9 B/s).
pub fn render_traffic(t: &crate::TrafficReport) -> String {
    let l = &t.launch;
    let mut tb = Table::new();
    tb.load_preset(UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Disabled)
        .force_no_tty();
    tb.set_header(vec!["site", "access", "op", "L1/tex", "L2", "DRAM (reads)"]);
    for s in &t.sites {
        tb.add_row(vec![
            Cell::new(format!("{}:{}", s.line, s.column)),
            Cell::new(&s.text),
            Cell::new(format!("{:?}", s.op).to_lowercase()),
            Cell::new(bytes(s.l1_bytes)).set_alignment(CellAlignment::Right),
            Cell::new(bytes(s.l2_bytes)).set_alignment(CellAlignment::Right),
            Cell::new(bytes(s.dram_bytes)).set_alignment(CellAlignment::Right),
        ]);
    }
    let hit = |h: u64, m: u64| {
        if h + m > 0 {
            format!(
                " ({:.1}% of sectors hit)",
                100.0 * h as f64 / (h + m) as f64
            )
        } else {
            String::new()
        }
    };
    // From 5.x on the texture cache is the L1; before, a cache of its own.
    let texture = if l.texture.hits + l.texture.misses > 0 {
        format!(
            "; texture cache{} {}{}",
            if l.cc.major >= 5 { " (in L1)" } else { "" },
            bytes(l.texture.bytes),
            hit(l.texture.hits, l.texture.misses)
        )
    } else {
        String::new()
    };
    let b = &l.bounds;
    format!(
        "\ntraffic below the request on {} (CC {}), {} profile, {:.0} GB/s achievable DRAM:\n{tb}\n\
         launch: requested {}, transactions {}; L1 {}{}{texture}; L2 {}{}; DRAM read {} (of which \
         read-modify-write {}), written {}\n\
         time bounds: DRAM {:.2} µs, L2 {:.2} µs, L1 {:.2} µs, latency {:.2} µs → predicted {:.2} µs \
         ({}-bound), effective bandwidth {:.1} GB/s (bytes requested ÷ time)\n",
        l.gpu,
        l.cc,
        t.profile,
        t.copy_gbps,
        bytes(l.bytes_requested),
        bytes(l.transaction_bytes),
        bytes(l.l1.bytes),
        hit(l.l1.hits, l.l1.misses),
        bytes(l.l2.bytes),
        hit(l.l2.hits, l.l2.misses),
        bytes(l.dram_read_bytes),
        bytes(l.dram_rmw_read_bytes),
        bytes(l.dram_write_bytes),
        b.dram_s * 1e6,
        b.l2_s * 1e6,
        b.l1_s * 1e6,
        b.latency_s * 1e6,
        l.predicted_seconds * 1e6,
        format!("{:?}", b.limit).to_lowercase(),
        t.effective_gbps
    )
}

/// One warp's cost in the units of its space: transactions (sectors from 5.x), wavefronts,
/// or constant requests.
fn per_warp(c: &Counters, space: Space) -> String {
    match space {
        Space::Shared => format!("{} wf", c.wavefronts),
        Space::Constant => format!("{} req", c.requests),
        _ => {
            let eff = c
                .efficiency
                .map(|e| format!(" ({:.1}%)", 100.0 * e))
                .unwrap_or_default();
            format!("{} tx{eff}", c.transactions)
        }
    }
}

/// The computed advice of `a`, one block per source line and cause: the rows it covers
/// (`×N` when several accesses of the line share the cause), the cause, why, the fix, and
/// the predicted cost of the costliest warp before → after the fix on each compute
/// capability where the cause was found (transactions with efficiency, wavefronts, or
/// requests), compute capabilities with the same figures named together.
pub fn render_advice(a: &Analysis, color: bool) -> String {
    let mut out = String::new();
    let (bold, dim, reset) = if color {
        ("\x1b[1m", "\x1b[2m", "\x1b[0m")
    } else {
        ("", "", "")
    };
    let site = |r: usize| a.architectures.first().and_then(|x| x.sites.get(r));
    for s in &a.advice {
        for adv in &s.advice {
            let rows = if adv.rows.is_empty() {
                vec![s.row]
            } else {
                adv.rows.clone()
            };
            // The rows' distinct texts; on the compiled path they share the line's.
            let mut texts: Vec<String> = Vec::new();
            for t in rows
                .iter()
                .filter_map(|&r| site(r))
                .map(|x| crate::short_text(&x.text))
            {
                if !texts.contains(&t) {
                    texts.push(t);
                }
            }
            if texts.is_empty() {
                texts.push(crate::short_text(&s.text));
            }
            let first = site(rows[0]);
            // Words that differ by compute capability get a line per group.
            let why = if adv.why_by_cc.is_empty() {
                format!(": {}", adv.why)
            } else {
                adv.why_by_cc
                    .iter()
                    .map(|g| format!("\n  on {}: {}", crate::cc_list(&g.ccs), g.text))
                    .collect()
            };
            out.push_str(&format!(
                "{bold}advice{reset} {} {} {} ({} B {}{}) — {}{}\n",
                rows.iter()
                    .map(|r| format!("#{r}"))
                    .collect::<Vec<_>>()
                    .join(" "),
                // The file the table names for the row (a header, Triton's or Numba's `.py`).
                position(
                    first.and_then(|x| x.file.as_deref()).unwrap_or(&a.source),
                    first.map_or(s.line, |x| x.line),
                    first.map_or(s.column, |x| x.column)
                ),
                texts.join(", "),
                s.width,
                crate::explain::space_name(s.space),
                if rows.len() > 1 {
                    format!(", ×{}", rows.len())
                } else {
                    String::new()
                },
                cause_name(&adv.cause),
                why
            ));
            if adv.fix_by_cc.is_empty() {
                out.push_str(&format!("  fix: {}\n", adv.fix));
            }
            for g in &adv.fix_by_cc {
                out.push_str(&format!(
                    "  fix on {}: {}\n",
                    crate::cc_list(&g.ccs),
                    g.text
                ));
            }
            // Compute capabilities with the same figures are named together.
            let mut modelled: Vec<(String, Vec<&str>)> = Vec::new();
            for o in &adv.outcomes {
                let Some(after) = o.after.as_ref() else {
                    continue;
                };
                let after_space = if s.space == Space::Constant {
                    Space::Global
                } else {
                    s.space
                };
                let figures = format!(
                    "{} → {}",
                    per_warp(&o.before, s.space),
                    per_warp(after, after_space)
                );
                match modelled.iter_mut().find(|m| m.0 == figures) {
                    Some(m) => m.1.push(&o.cc),
                    None => modelled.push((figures, vec![&o.cc])),
                }
            }
            if !modelled.is_empty() {
                out.push_str(&format!(
                    "  {dim}costliest warp, before → after the fix:{reset} {}\n",
                    modelled
                        .iter()
                        .map(|(figures, ccs)| format!("{} {figures}", crate::cc_list(ccs)))
                        .collect::<Vec<_>>()
                        .join(" · ")
                ));
            }
        }
    }
    out
}

/// The cause's name in the guides' terms ([`warpscope_advice::Cause::name`]).
pub fn cause_name(c: &warpscope_advice::Cause) -> &'static str {
    c.name()
}

/// `eff` as the table prints it: a percentage with one decimal, capped at 100 % and marked
/// [`BROADCAST_MARK`] where the ratio is above 1 (lanes share words, so fewer bytes or
/// wavefronts moved than a conflict-free access of those bytes needs), `-` without one.
pub(crate) fn eff_text(e: Option<f64>) -> String {
    match e {
        Some(e) if e > 1.0 + 1e-9 => format!("100.0%{BROADCAST_MARK}"),
        Some(e) => format!("{:.1}%", 100.0 * e),
        None => "-".into(),
    }
}

/// Marks an efficiency above 100 % shown as 100 % (a broadcast); the legend explains it.
pub(crate) const BROADCAST_MARK: &str = "*";

/// The legend line of [`BROADCAST_MARK`].
pub(crate) const BROADCAST_LEGEND: &str = "*: broadcast: lanes share words, so fewer sectors or wavefronts than the bytes requested need (ratio capped at 100 %; JSON has the raw figures)";

/// Whether any row or total of `a` shows [`BROADCAST_MARK`].
fn any_broadcast(a: &Analysis) -> bool {
    a.architectures.iter().any(|x| {
        x.sites
            .iter()
            .map(|s| (s.space, &s.counters))
            .chain(x.totals.by_space())
            .any(|(space, c)| c.efficiency_in(space).is_some_and(|e| e > 1.0 + 1e-9))
    })
}

/// The `req`, `tx/wf`, `excess` and `eff` cells of a row or a space's total: transactions
/// (sectors from 5.x) and sectors above the ideal for global, local, texture and surface
/// memory; wavefronts and wavefronts above the ideal for shared memory; requests per warp
/// instruction for constant memory.
fn cells(c: &Counters, space: Space, color: bool) -> [Cell; 4] {
    let right = |s: String| Cell::new(s).set_alignment(CellAlignment::Right);
    let req = right(num(c.requests));
    if space == Space::Constant {
        let per = if c.executions > 0 {
            c.requests as f64 / c.executions as f64
        } else {
            0.0
        };
        return [
            req,
            right(format!("{per:.1}/instr")),
            right("-".into()),
            right("-".into()),
        ];
    }
    let e = c.efficiency_in(space);
    let moved = if space == Space::Shared {
        right(format!("{} wf", num(c.wavefronts)))
    } else {
        right(num(c.transactions))
    };
    let excess = c.excess_in(space).unwrap_or(0);
    let mut excess_cell = right(num(excess));
    let mut eff = right(eff_text(e));
    if color {
        if excess > 0 {
            excess_cell = excess_cell.fg(Color::Red);
        }
        if let Some(e) = e {
            eff = eff.fg(eff_color(e));
        }
    }
    [req, moved, excess_cell, eff]
}

/// `file:line:col`, or `file` alone for an instruction the compiler gave no source line
/// (PTX without `.loc`, or nvcc's line 0): the PTX column then says where it is.
pub(crate) fn position(file: &str, line: u32, column: u32) -> String {
    if line == 0 {
        file.to_string()
    } else {
        format!("{file}:{line}:{column}")
    }
}
