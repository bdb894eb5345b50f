//! The terminal rendering of an [`Annotation`]: the source with a margin of figures.

use std::fmt::Write;

use super::{
    kind, line_rows, sass_lines, severity, shown_lines, AnnotateOptions, Annotation, Column,
    LineRow, COLUMNS,
};
use crate::SiteReport;

/// Spaces per tab when the source is shown (carets count the same).
const TAB: usize = 4;

struct Style {
    dim: &'static str,
    cyan: &'static str,
    green: &'static str,
    yellow: &'static str,
    red: &'static str,
    reset: &'static str,
}

impl Style {
    fn new(color: bool) -> Self {
        if color {
            Style {
                dim: "\x1b[2m",
                cyan: "\x1b[36m",
                green: "\x1b[32m",
                yellow: "\x1b[33m",
                red: "\x1b[31m",
                reset: "\x1b[0m",
            }
        } else {
            Style {
                dim: "",
                cyan: "",
                green: "",
                yellow: "",
                red: "",
                reset: "",
            }
        }
    }
}

/// `line` with tabs expanded to [`TAB`] columns.
fn expand(line: &str) -> String {
    let mut out = String::new();
    for ch in line.chars() {
        if ch == '\t' {
            let n = TAB - out.chars().count() % TAB;
            out.extend(std::iter::repeat_n(' ', n));
        } else {
            out.push(ch);
        }
    }
    out
}

/// The display column (0-based) of 1-based byte column `column` of `line`, tabs expanded.
fn display_column(line: &str, column: u32) -> usize {
    let byte = (column.saturating_sub(1) as usize).min(line.len());
    let mut upto = byte;
    while !line.is_char_boundary(upto) {
        upto -= 1;
    }
    expand(&line[..upto]).chars().count()
}

/// Renders `a` for a terminal: a heading, then per file the kernel's definition and each line
/// with accesses (two lines of context; `⋮` where lines are skipped), every access of a line
/// on a row of its own under it — a caret at its column, its operation, space and width, `×N`
/// for N instructions — with its figures per compute capability in the margin ([`COLUMNS`]);
/// with `o.show_ptx`/`o.show_sass` its instructions below it, each PTX one with its own
/// figures. Accesses the compiler gave no source line are listed at the end.
pub fn render_text(a: &Annotation, o: &AnnotateOptions) -> String {
    let st = Style::new(o.color);
    let an = &a.analysis;
    let rows = line_rows(an);
    // Cell widths per (arch, column), from the headings and every row and instruction.
    let narch = an.architectures.len();
    let mut widths = vec![[0usize; COLUMNS.len()]; narch];
    let mut measure = |s: &SiteReport, k: usize| {
        for (j, c) in COLUMNS.iter().enumerate() {
            widths[k][j] = widths[k][j].max(c.cell(&s.counters, s.space).chars().count());
        }
    };
    for (_, v) in &rows {
        for r in v {
            for (k, s) in r.per_arch.iter().enumerate() {
                measure(s, k);
            }
            for &i in &r.sites {
                for k in 0..narch {
                    measure(&an.architectures[k].sites[i], k);
                }
            }
        }
    }
    for w in &mut widths {
        for (j, c) in COLUMNS.iter().enumerate() {
            w[j] = w[j].max(c.heading().chars().count());
        }
    }
    let group_width = |k: usize| widths[k].iter().sum::<usize>() + COLUMNS.len() - 1;
    let max_line = rows.iter().map(|((_, l), _)| *l).max().unwrap_or(0).max(
        a.files
            .iter()
            .filter_map(|f| f.lines.as_ref().map(|l| l.len() as u32))
            .max()
            .unwrap_or(0),
    );
    let lw = max_line.to_string().len().max(4);
    let blank_margin: String = (0..narch)
        .map(|k| " ".repeat(group_width(k)))
        .collect::<Vec<_>>()
        .join(" │ ");
    let margin = |per_arch: &[&SiteReport]| -> String {
        per_arch
            .iter()
            .enumerate()
            .map(|(k, s)| {
                COLUMNS
                    .iter()
                    .enumerate()
                    .map(|(j, c)| {
                        let text = c.cell(&s.counters, s.space);
                        let pad = " ".repeat(widths[k][j].saturating_sub(text.chars().count()));
                        let colour = match c {
                            Column::Efficiency => match severity(&s.counters, s.space) {
                                0 => st.green,
                                1 => st.yellow,
                                _ => st.red,
                            },
                            Column::Excess | Column::Work
                                if s.counters.excess_in(s.space).is_some_and(|x| x > 0) =>
                            {
                                st.red
                            }
                            _ => "",
                        };
                        if colour.is_empty() {
                            format!("{pad}{text}")
                        } else {
                            format!("{pad}{colour}{text}{}", st.reset)
                        }
                    })
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect::<Vec<_>>()
            .join(" │ ")
    };
    let mut out = format!(
        "{} — grid ({},{},{}) block ({},{},{}) — {}\n",
        an.kernel,
        an.grid[0],
        an.grid[1],
        an.grid[2],
        an.block[0],
        an.block[1],
        an.block[2],
        an.source
    );
    // Headings: the CCs, then the columns.
    let ccs: Vec<String> = an
        .architectures
        .iter()
        .enumerate()
        .map(|(k, x)| {
            let t = format!("CC {} ({})", x.cc, x.name);
            let t: String = t.chars().take(group_width(k)).collect();
            format!("{t:<w$}", w = group_width(k))
        })
        .collect();
    let _ = writeln!(out, "{} │ {} │", " ".repeat(lw), ccs.join(" │ "));
    let heads: Vec<String> = (0..narch)
        .map(|k| {
            COLUMNS
                .iter()
                .enumerate()
                .map(|(j, c)| format!("{:>w$}", c.heading(), w = widths[k][j]))
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect();
    let _ = writeln!(out, "{:>lw$} │ {} │ source", "line", heads.join(" │ "));
    let instr_of =
        |ptx_line: Option<u32>| a.instructions.iter().find(|i| Some(i.ptx_line) == ptx_line);
    // An access's rows: its caret line, then its instructions.
    let access = |out: &mut String, src: &str, r: &LineRow, others: &[LineRow]| {
        let s0 = &r.per_arch[0];
        let at = if s0.line == 0 {
            0
        } else {
            display_column(src, s0.column)
        };
        let collide = others
            .iter()
            .filter(|x| x.per_arch[0].column == s0.column)
            .count()
            > 1
            || s0.line == 0;
        let count = if r.sites.len() > 1 {
            format!(" ×{}", r.sites.len())
        } else {
            String::new()
        };
        let text = if collide {
            format!(" {}", s0.text)
        } else {
            String::new()
        };
        let refs: Vec<&SiteReport> = r.per_arch.iter().collect();
        let _ = writeln!(
            out,
            "{} │ {} │ {}{}^ {}{count}{text}{}",
            " ".repeat(lw),
            margin(&refs),
            " ".repeat(at),
            st.cyan,
            kind(s0),
            st.reset
        );
        let indent = " ".repeat(at + 2);
        if o.show_ptx {
            // Its instructions, in PTX order, with those ptxas merged or removed.
            for (l, site) in super::row_instructions(a, r, false) {
                let ins = instr_of(Some(l));
                let m = match site {
                    Some(i) => {
                        let per: Vec<&SiteReport> =
                            (0..narch).map(|k| &an.architectures[k].sites[i]).collect();
                        margin(&per)
                    }
                    None => blank_margin.clone(),
                };
                let text = ins.map_or(String::new(), |x| x.ptx.clone());
                let fate = ins
                    .and_then(|x| x.fate.as_deref())
                    .map_or(String::new(), |f| format!("  {}({f}){}", st.dim, st.reset));
                let _ = writeln!(
                    out,
                    "{} │ {m} │ {indent}{}ptx {l}{} {text}{fate}",
                    " ".repeat(lw),
                    st.dim,
                    st.reset
                );
                if o.show_sass {
                    for s in sass_lines(ins.map(|x| x.sass.as_slice()).unwrap_or_default()) {
                        let _ = writeln!(
                            out,
                            "{} │ {blank_margin} │ {indent}  {}sass{} {s}",
                            " ".repeat(lw),
                            st.dim,
                            st.reset
                        );
                    }
                }
            }
        } else if o.show_sass {
            for &i in &r.sites {
                let ins = instr_of(an.architectures[0].sites[i].ptx_line);
                for s in sass_lines(ins.map(|x| x.sass.as_slice()).unwrap_or_default()) {
                    let _ = writeln!(
                        out,
                        "{} │ {blank_margin} │ {indent}{}sass{} {s}",
                        " ".repeat(lw),
                        st.dim,
                        st.reset
                    );
                }
            }
        }
    };
    for (fi, f) in a.files.iter().enumerate() {
        let access_lines: Vec<u32> = rows
            .iter()
            .filter(|((file, l), _)| *file == f.file && *l > 0)
            .map(|((_, l), _)| *l)
            .collect();
        let shown = shown_lines(f, &access_lines, o, fi == 0);
        if shown.is_empty() {
            continue;
        }
        if a.files.len() > 1 || f.file.is_some() {
            let _ = writeln!(out, "{}── {} ──{}", st.dim, f.shown, st.reset);
        }
        let mut prev: Option<u32> = None;
        for l in shown {
            if prev.is_some_and(|p| l > p + 1) {
                let _ = writeln!(out, "{:>lw$} │ {blank_margin} │", "⋮");
            }
            prev = Some(l);
            let src = f
                .lines
                .as_ref()
                .and_then(|ls| ls.get(l as usize - 1))
                .map(String::as_str);
            let shown_src = match src {
                Some(s) => expand(s),
                None => format!(
                    "{}(line {l} is not in {} as read){}",
                    st.dim, f.shown, st.reset
                ),
            };
            let _ = writeln!(
                out,
                "{}{l:>lw$}{} │ {blank_margin} │ {shown_src}",
                st.dim, st.reset
            );
            if let Some((_, v)) = rows
                .iter()
                .find(|((file, x), _)| *file == f.file && *x == l)
            {
                for r in v {
                    access(&mut out, src.unwrap_or(""), r, v);
                }
            }
        }
    }
    // Accesses without a source line (PTX without `.loc`), and lines of files not shown.
    let orphans: Vec<&LineRow> = rows
        .iter()
        .filter(|((file, l), _)| *l == 0 || !a.files.iter().any(|f| f.file == *file))
        .flat_map(|(_, v)| v)
        .collect();
    if !orphans.is_empty() {
        let _ = writeln!(out, "{}── without a source line ──{}", st.dim, st.reset);
        for r in orphans {
            access(&mut out, "", r, std::slice::from_ref(r));
        }
    }
    out.push_str("req: requests; sectors/wf: 32-byte sectors, or shared-memory wavefronts (wf); excess: sectors or wavefronts above the ideal; eff: bytes requested / bytes moved (shared: ideal / actual wavefronts)\n");
    out
}
