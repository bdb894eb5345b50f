//! The HTML rendering of an [`Annotation`]: one self-contained page (inline CSS and SVG, no
//! scripts, no external resources); a line with accesses opens, on a click, its instructions
//! and the `explain` picture of each access's costliest warp (`<details>`).

use std::fmt::Write;

use super::{
    kind, line_rows, sass_lines, severity, shown_lines, AnnotateOptions, Annotation, LineRow,
    COLUMNS,
};
use crate::explain::{esc, figure_svg};
use crate::SiteReport;

const CSS: &str = r#"
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 24px; color: #1b1b1b; background: #fafafa; }
h1 { font-size: 20px; margin: 0 0 6px; }
.launch, .legend, .notes { color: #444; margin: 2px 0; font-size: 14px; }
.src { font-family: ui-monospace, Menlo, Consolas, monospace; font-size: 13px; background: #fff; border: 1px solid #d6d6d6; border-radius: 6px; padding: 6px 0; overflow-x: auto; margin-top: 14px; }
.row { display: flex; white-space: pre; line-height: 1.45; }
.no { display: inline-block; min-width: 5ch; text-align: right; color: #888; padding-right: 1ch; }
.m { display: inline-block; border-left: 1px solid #ddd; border-right: 1px solid #ddd; padding: 0 1ch; color: #222; }
.m .cc { display: inline-block; }
.m .cc + .cc { border-left: 1px dotted #ccc; padding-left: 1ch; margin-left: 1ch; }
.m .c { display: inline-block; text-align: right; }
.code { padding-left: 1ch; }
.hdr { color: #555; font-weight: 600; border-bottom: 1px solid #e3e3e3; }
.acc .code { color: #0b5394; }
.file { color: #555; padding: 6px 1ch 2px; font-weight: 600; }
.gap .no { color: #bbb; }
details.line > summary { list-style: none; cursor: pointer; display: block; }
details.line > summary::-webkit-details-marker { display: none; }
details.line > summary:hover { outline: 1px solid #9ab; }
.s1 > summary { background: #fff6d6; }
.s2 > summary { background: #fde4e1; }
.s0 > summary { background: #eef8ee; }
.more { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; background: #f4f6f9; border-top: 1px solid #dde; border-bottom: 1px solid #dde; padding: 8px 16px 12px 7ch; white-space: normal; }
.more h3 { font-size: 14px; margin: 10px 0 4px; }
.more h3 code { background: #e6ebf2; padding: 1px 4px; border-radius: 3px; }
table.ins { border-collapse: collapse; font-size: 12px; background: #fff; margin: 4px 0; }
table.ins th, table.ins td { border: 1px solid #d0d0d0; padding: 2px 6px; white-space: nowrap; text-align: left; }
table.ins th { background: #eef1f5; }
table.ins td.n { text-align: right; font-family: ui-monospace, Menlo, Consolas, monospace; }
table.ins td.sass { color: #5b3e00; font-family: ui-monospace, Menlo, Consolas, monospace; }
td.fate { color: #777; }
.figures { display: flex; flex-wrap: wrap; gap: 12px; margin: 6px 0; }
.arch { flex: 1 1 760px; max-width: 980px; background: #fff; border: 1px solid #d6d6d6; border-radius: 6px; padding: 8px 10px; box-sizing: border-box; }
.arch h4 { margin: 0 0 4px; font-size: 14px; }
.arch figure { margin: 0; }
.arch figure svg { width: 100%; height: auto; display: block; }
.arch p { font-size: 13px; line-height: 1.4; margin: 4px 0 0; }
.bad { color: #b3261e; } .ok { color: #8a6200; } .good { color: #1d6b2a; }
"#;

/// Renders `a` as one self-contained HTML page: a heading and legend, then the source as the
/// text rendering lays it out (the margin of figures per compute capability, one row per
/// access under its line), every line with accesses coloured by its worst access (green:
/// full efficiency and no excess; yellow: some excess or efficiency under 99.9 %; red:
/// efficiency under 50 %) and opening on a click to a table of its instructions (PTX with
/// their own figures, and the SASS with the SASS check) and, for each access explained in
/// `a.explanations`, its costliest warp's picture and paragraph per compute capability.
pub fn render_html(a: &Annotation, o: &AnnotateOptions) -> String {
    let an = &a.analysis;
    let rows = line_rows(an);
    let narch = an.architectures.len();
    let mut widths = vec![[0usize; COLUMNS.len()]; narch];
    for (_, v) in &rows {
        for r in v {
            for (k, s) in r.per_arch.iter().enumerate() {
                for (j, c) in COLUMNS.iter().enumerate() {
                    widths[k][j] = widths[k][j]
                        .max(c.cell(&s.counters, s.space).chars().count())
                        .max(c.heading().len());
                }
            }
        }
    }
    for w in &mut widths {
        for (j, c) in COLUMNS.iter().enumerate() {
            w[j] = w[j].max(c.heading().len());
        }
    }
    let margin = |per_arch: Option<&[SiteReport]>| -> String {
        let mut m = String::from("<span class=\"m\">");
        for k in 0..narch {
            m.push_str("<span class=\"cc\">");
            for (j, c) in COLUMNS.iter().enumerate() {
                let (text, class) = match per_arch {
                    Some(p) => {
                        let s = &p[k];
                        let t = c.cell(&s.counters, s.space);
                        let class = match (c, severity(&s.counters, s.space)) {
                            (super::Column::Efficiency, 0) => " good",
                            (super::Column::Efficiency, 1) => " ok",
                            (super::Column::Efficiency, _) => " bad",
                            (super::Column::Excess, _)
                                if s.counters.excess_in(s.space).is_some_and(|x| x > 0) =>
                            {
                                " bad"
                            }
                            _ => "",
                        };
                        (t, class)
                    }
                    None => (String::new(), ""),
                };
                let sep = if j > 0 { " " } else { "" };
                let _ = write!(
                    m,
                    "{sep}<span class=\"c{class}\" style=\"width:{}ch\">{}</span>",
                    widths[k][j],
                    esc(&text)
                );
            }
            m.push_str("</span>");
        }
        m.push_str("</span>");
        m
    };
    let mut h = String::new();
    let title = format!("warpscope annotate — {} — {}", an.kernel, an.source);
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>{}</title>\n<style>{CSS}</style>\n</head>\n<body>\n",
        esc(&title)
    );
    let _ = writeln!(
        h,
        "<header>\n<h1>{} — {}</h1>\n<p class=\"launch\">grid ({},{},{}) · block ({},{},{}) · {}</p>\n<p class=\"legend\">Per compute capability: req: requests; sectors/wf: 32-byte sectors, or shared-memory wavefronts (wf); excess: sectors or wavefronts above the ideal; eff: bytes requested / bytes moved (shared: ideal / actual wavefronts). Click a coloured line for its instructions{} and the costliest warp of each access.</p>\n</header>",
        esc(&an.kernel),
        esc(&an.source),
        an.grid[0],
        an.grid[1],
        an.grid[2],
        an.block[0],
        an.block[1],
        an.block[2],
        an.architectures
            .iter()
            .map(|x| format!("CC {} ({})", x.cc, x.name))
            .collect::<Vec<_>>()
            .join(", "),
        if a.sass_checked { " (PTX and SASS)" } else { "" }
    );
    h.push_str("<div class=\"src\">\n");
    // Headings.
    {
        let mut m = String::from("<span class=\"m\">");
        for (k, x) in an.architectures.iter().enumerate() {
            let w: usize = widths[k].iter().sum::<usize>() + COLUMNS.len() - 1;
            let _ = write!(
                m,
                "<span class=\"cc\"><span class=\"c\" style=\"width:{w}ch;text-align:left\">{}</span></span>",
                esc(&format!("CC {}", x.cc))
            );
        }
        m.push_str("</span>");
        let _ = writeln!(
            h,
            "<div class=\"row hdr\"><span class=\"no\"></span>{m}<span class=\"code\"></span></div>"
        );
        let mut m = String::from("<span class=\"m\">");
        for w in &widths {
            m.push_str("<span class=\"cc\">");
            for (j, c) in COLUMNS.iter().enumerate() {
                let sep = if j > 0 { " " } else { "" };
                let _ = write!(
                    m,
                    "{sep}<span class=\"c\" style=\"width:{}ch\">{}</span>",
                    w[j],
                    c.heading()
                );
            }
            m.push_str("</span>");
        }
        m.push_str("</span>");
        let _ = writeln!(
            h,
            "<div class=\"row hdr\"><span class=\"no\">line</span>{m}<span class=\"code\">source</span></div>"
        );
    }
    let blank = margin(None);
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
            let _ = writeln!(h, "<div class=\"file\">{}</div>", esc(&f.shown));
        }
        let mut prev: Option<u32> = None;
        for l in shown {
            if prev.is_some_and(|p| l > p + 1) {
                let _ = writeln!(
                    h,
                    "<div class=\"row gap\"><span class=\"no\">⋮</span>{blank}<span class=\"code\"></span></div>"
                );
            }
            prev = Some(l);
            let src = f
                .lines
                .as_ref()
                .and_then(|ls| ls.get(l as usize - 1))
                .map(String::as_str);
            let code = match src {
                Some(s) => esc(&s.replace('\t', "    ")),
                None => format!("(line {l} is not in {} as read)", esc(&f.shown)),
            };
            let line_div = format!(
                "<div class=\"row\"><span class=\"no\">{l}</span>{blank}<span class=\"code\">{code}</span></div>"
            );
            match rows
                .iter()
                .find(|((file, x), _)| *file == f.file && *x == l)
            {
                None => {
                    h.push_str(&line_div);
                    h.push('\n');
                }
                Some((_, v)) => {
                    let worst = v
                        .iter()
                        .flat_map(|r| &r.per_arch)
                        .map(|s| severity(&s.counters, s.space))
                        .max()
                        .unwrap_or(0);
                    let _ = write!(
                        h,
                        "<details class=\"line s{worst}\" id=\"L{}{l}\"><summary>{line_div}\n",
                        if fi == 0 {
                            String::new()
                        } else {
                            format!("f{fi}-")
                        }
                    );
                    for r in v {
                        let s0 = &r.per_arch[0];
                        let src = src.unwrap_or("");
                        let at = src
                            .get(..(s0.column.saturating_sub(1) as usize).min(src.len()))
                            .map_or(0, |p| p.replace('\t', "    ").chars().count());
                        let count = if r.sites.len() > 1 {
                            format!(" ×{}", r.sites.len())
                        } else {
                            String::new()
                        };
                        let _ = writeln!(
                            h,
                            "<div class=\"row acc\"><span class=\"no\"></span>{}<span class=\"code\">{}^ {}{count}</span></div>",
                            margin(Some(&r.per_arch)),
                            " ".repeat(at),
                            esc(&kind(s0))
                        );
                    }
                    h.push_str("</summary>\n<div class=\"more\">\n");
                    for r in v {
                        more(&mut h, a, r);
                    }
                    h.push_str("</div>\n</details>\n");
                }
            }
        }
    }
    h.push_str("</div>\n");
    let orphans: Vec<&LineRow> = rows
        .iter()
        .filter(|((file, l), _)| *l == 0 || !a.files.iter().any(|f| f.file == *file))
        .flat_map(|(_, v)| v)
        .collect();
    if !orphans.is_empty() {
        h.push_str("<section class=\"more\">\n<h2>Accesses without a source line</h2>\n");
        for r in orphans {
            more(&mut h, a, r);
        }
        h.push_str("</section>\n");
    }
    if !an.notes.is_empty() {
        h.push_str("<ul class=\"notes\">\n");
        for n in &an.notes {
            let _ = writeln!(h, "<li>note: {}</li>", esc(n));
        }
        h.push_str("</ul>\n");
    }
    h.push_str("</body>\n</html>\n");
    h
}

/// The expansion of one access: its instructions and its costliest warp.
fn more(h: &mut String, a: &Annotation, r: &LineRow) {
    let an = &a.analysis;
    let s0 = &r.per_arch[0];
    let count = if r.sites.len() > 1 {
        format!(" ×{}", r.sites.len())
    } else {
        String::new()
    };
    let _ = writeln!(
        h,
        "<h3><code>{}</code> — {}{count} — sites #{}</h3>",
        esc(&s0.text),
        esc(&kind(s0)),
        r.sites
            .iter()
            .map(usize::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    );
    // The instructions: PTX (with their own figures) and SASS.
    let with_ptx = !a.instructions.is_empty();
    h.push_str("<table class=\"ins\">\n<thead><tr><th>#</th>");
    if with_ptx {
        h.push_str("<th>PTX line</th><th>PTX</th>");
        if a.sass_checked {
            h.push_str("<th>SASS</th>");
        }
    }
    for x in &an.architectures {
        for c in COLUMNS {
            let _ = write!(h, "<th>{} {}</th>", esc(&x.cc), c.heading());
        }
    }
    h.push_str("</tr></thead>\n<tbody>\n");
    for (l, site) in super::row_instructions(a, r, true) {
        let ins = a.instructions.iter().find(|i| i.ptx_line == l);
        let _ = write!(
            h,
            "<tr><td class=\"n\">{}</td>",
            site.map_or(String::new(), |i| i.to_string())
        );
        if with_ptx {
            let fate = ins
                .and_then(|i| i.fate.as_deref())
                .map_or(String::new(), |f| {
                    format!(" <span class=\"fate\">({})</span>", esc(f))
                });
            let _ = write!(
                h,
                "<td class=\"n\">{l}</td><td><code>{}</code>{fate}</td>",
                esc(ins.map_or("", |i| i.ptx.as_str()))
            );
            if a.sass_checked {
                let _ = write!(
                    h,
                    "<td class=\"sass\">{}</td>",
                    ins.map_or(String::new(), |i| sass_lines(&i.sass)
                        .iter()
                        .map(|s| esc(s))
                        .collect::<Vec<_>>()
                        .join("<br>"))
                );
            }
        }
        for x in &an.architectures {
            for c in COLUMNS {
                let t = site.map_or(String::new(), |i| {
                    let s = &x.sites[i];
                    c.cell(&s.counters, s.space)
                });
                let _ = write!(h, "<td class=\"n\">{}</td>", esc(&t));
            }
        }
        h.push_str("</tr>\n");
    }
    h.push_str("</tbody>\n</table>\n");
    // The costliest warp of the access, as `explain` draws it.
    if let Some((row, e)) = a.explanations.iter().find(|(row, _)| r.sites.contains(row)) {
        let _ = writeln!(
            h,
            "<p class=\"notes\">Its costliest warp (site #{row}, {}): block ({},{},{}) warp {}, execution {} of {}.</p>\n<div class=\"figures\">",
            esc(&e.ptx.clone().unwrap_or_else(|| e.text.clone())),
            e.block_of_warp[0],
            e.block_of_warp[1],
            e.block_of_warp[2],
            e.warp,
            crate::table::num(e.execution),
            crate::table::num(e.executions)
        );
        for (k, x) in e.architectures.iter().enumerate() {
            let svg = figure_svg(e, x, &format!("r{row}a{k}"))
                .replace(" xmlns=\"http://www.w3.org/2000/svg\"", "");
            let _ = writeln!(
                h,
                "<article class=\"arch\"><h4>CC {} ({}) · {}</h4><figure>{svg}</figure><p>{}</p></article>",
                esc(&x.cc),
                esc(&x.name),
                esc(&x.rule),
                esc(&x.paragraph)
            );
        }
        h.push_str("</div>\n");
    }
}
