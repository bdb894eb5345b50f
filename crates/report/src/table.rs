//! The table for people: one row per access site, one column group per compute capability.

use crate::rows::{Row, RowView, SortBy};
use crate::{Analysis, Counters};
use comfy_table::{
    presets::UTF8_FULL_CONDENSED, Cell, CellAlignment, Color, ContentArrangement, Table,
};
use warpscope_model::Space;

fn eff_color(e: f64) -> Color {
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
/// ones, serialized requests for constant ones) and `eff` (bytes requested ÷ bytes moved).
/// `color` adds ANSI colours (efficiency green/yellow/red, conflicts red). With `width`
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
    out.push_str("req: requests; tx: transactions (32-byte sectors from CC 5.0 on); wf: shared-memory wavefronts; eff: bytes requested / bytes moved\n");
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
        header.push(Cell::new(format!("{} eff", arch.cc)));
    }
    t.set_header(header);
    for row in rows {
        let s0 = &crate::rows::summed(a, 0, row);
        let space = match s0.space {
            Space::Global if s0.read_only => "global (ro)".to_string(),
            Space::DistributedShared => "dsmem".to_string(),
            other => format!("{other:?}").to_lowercase(),
        };
        let mut cells_of_row = vec![
            Cell::new(row.label()).set_alignment(CellAlignment::Right),
            Cell::new(position(
                s0.file.as_deref().unwrap_or(&a.source),
                s0.line,
                s0.column,
            )),
            Cell::new(&s0.text),
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
    // Totals: global + local traffic, and shared wavefronts.
    let mut row = vec![
        Cell::new(""),
        Cell::new("total"),
        Cell::new(""),
        Cell::new(""),
        Cell::new(""),
        Cell::new(""),
    ];
    if with_ptx {
        row.push(Cell::new(""));
    }
    for arch in chosen().map(|i| &a.architectures[i]) {
        let tt = &arch.totals;
        let mem = [
            tt.global_load,
            tt.global_store,
            tt.global_atomic,
            tt.local_load,
            tt.local_store,
            tt.texture_load,
            tt.surface_load,
            tt.surface_store,
        ];
        let req: u64 = mem.iter().map(|c| c.requests).sum::<u64>()
            + tt.shared_load.requests
            + tt.shared_store.requests
            + tt.shared_atomic.requests
            + tt.constant_load.requests;
        let tx: u64 = mem.iter().map(|c| c.transactions).sum();
        let tb: u64 = mem.iter().map(|c| c.transaction_bytes).sum();
        let br: u64 = mem.iter().map(|c| c.bytes_requested).sum();
        let wf =
            tt.shared_load.wavefronts + tt.shared_store.wavefronts + tt.shared_atomic.wavefronts;
        let txt = if wf > 0 {
            format!("{} tx + {} wf", num(tx), num(wf))
        } else {
            num(tx)
        };
        row.push(Cell::new(num(req)).set_alignment(CellAlignment::Right));
        row.push(Cell::new(txt).set_alignment(CellAlignment::Right));
        let mut eff = Cell::new(if tb > 0 {
            format!("{:.1}%", 100.0 * br as f64 / tb as f64)
        } else {
            "-".into()
        })
        .set_alignment(CellAlignment::Right);
        if color && tb > 0 {
            eff = eff.fg(eff_color(br as f64 / tb as f64));
        }
        row.push(eff);
    }
    t.add_row(row);
    t
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

/// The computed advice of `a`, one block per site and cause: the cause, why, the fix, and the
/// predicted cost of the costliest warp before → after the fix on each compute capability
/// where the cause was found (transactions with efficiency, wavefronts, or requests).
pub fn render_advice(a: &Analysis, color: bool) -> String {
    let mut out = String::new();
    let (bold, dim, reset) = if color {
        ("\x1b[1m", "\x1b[2m", "\x1b[0m")
    } else {
        ("", "", "")
    };
    for s in &a.advice {
        for adv in &s.advice {
            out.push_str(&format!(
                "{bold}advice{reset} #{} {} {} ({} B {}) — {}: {}\n",
                s.row,
                // The file the table names for the row (a header, Triton's or Numba's `.py`).
                position(
                    a.architectures
                        .first()
                        .and_then(|x| x.sites.get(s.row))
                        .and_then(|site| site.file.as_deref())
                        .unwrap_or(&a.source),
                    s.line,
                    s.column
                ),
                s.text,
                s.width,
                crate::explain::space_name(s.space),
                cause_name(&adv.cause),
                adv.why
            ));
            out.push_str(&format!("  fix: {}\n", adv.fix));
            let modelled: Vec<String> = adv
                .outcomes
                .iter()
                .filter_map(|o| {
                    let after = o.after.as_ref()?;
                    let after_space = if s.space == Space::Constant {
                        Space::Global
                    } else {
                        s.space
                    };
                    Some(format!(
                        "{} {} → {}",
                        o.cc,
                        per_warp(&o.before, s.space),
                        per_warp(after, after_space)
                    ))
                })
                .collect();
            if !modelled.is_empty() {
                out.push_str(&format!(
                    "  {dim}costliest warp, before → after the fix:{reset} {}\n",
                    modelled.join(" · ")
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

fn cells(c: &Counters, space: Space, color: bool) -> [Cell; 3] {
    let req = Cell::new(num(c.requests)).set_alignment(CellAlignment::Right);
    match space {
        Space::Shared => {
            // Ideal: one wavefront per request; more means bank conflicts.
            let mut wf =
                Cell::new(format!("{} wf", num(c.wavefronts))).set_alignment(CellAlignment::Right);
            let mut eff = Cell::new(if c.wavefronts > 0 {
                format!("{:.1}%", 100.0 * c.requests as f64 / c.wavefronts as f64)
            } else {
                "-".into()
            })
            .set_alignment(CellAlignment::Right);
            if color && c.wavefronts > c.requests {
                wf = wf.fg(Color::Red);
                eff = eff.fg(Color::Red);
            }
            [req, wf, eff]
        }
        Space::Constant => {
            let per = if c.executions > 0 {
                c.requests as f64 / c.executions as f64
            } else {
                0.0
            };
            [
                req,
                Cell::new(format!("{per:.1}/instr")).set_alignment(CellAlignment::Right),
                Cell::new("-").set_alignment(CellAlignment::Right),
            ]
        }
        _ => {
            let tx = Cell::new(num(c.transactions)).set_alignment(CellAlignment::Right);
            let mut eff = Cell::new(match c.efficiency {
                Some(e) => format!("{:.1}%", 100.0 * e),
                None => "-".into(),
            })
            .set_alignment(CellAlignment::Right);
            if let (true, Some(e)) = (color, c.efficiency) {
                eff = eff.fg(eff_color(e));
            }
            [req, tx, eff]
        }
    }
}

/// `file:line:col`, or `file` alone for an instruction the compiler gave no source line
/// (PTX without `.loc`, or nvcc's line 0): the PTX column then says where it is.
fn position(file: &str, line: u32, column: u32) -> String {
    if line == 0 {
        file.to_string()
    } else {
        format!("{file}:{line}:{column}")
    }
}
