//! The self-contained HTML page: inline CSS and SVG, no scripts, no external resources.

use std::fmt::Write;

use warpscope_model::Space;

use super::common::{
    arch_title, cause_name, counters_line, counters_short, esc, execution_line, num, op_name,
    space_name,
};
use super::svg::figure_svg;
use super::Explanation;
use crate::{Analysis, Counters};

const CSS: &str = r#"
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 24px; color: #1b1b1b; background: #fafafa; }
h1 { font-size: 22px; margin: 0 0 6px; }
h1 code, td code { font-size: 0.95em; background: #eef1f5; padding: 1px 5px; border-radius: 4px; }
.launch { color: #444; margin: 2px 0; font-size: 14px; }
.figures { display: flex; flex-wrap: wrap; gap: 18px; margin: 20px 0; }
.arch { flex: 1 1 860px; max-width: 1000px; background: #fff; border: 1px solid #d6d6d6; border-radius: 8px; padding: 14px 16px; box-sizing: border-box; }
.arch h2 { font-size: 18px; margin: 0 0 2px; }
.rule { color: #555; margin: 0 0 4px; font-size: 14px; }
.counters { font-family: ui-monospace, Menlo, Consolas, monospace; font-size: 13px; color: #333; margin: 0 0 8px; }
figure { margin: 0; }
figure svg { width: 100%; height: auto; display: block; }
.paragraph { line-height: 1.45; font-size: 15px; }
.advice h3 { font-size: 15px; margin: 10px 0 4px; }
.advice ul { margin: 0; padding-left: 20px; }
.advice li { margin-bottom: 8px; line-height: 1.4; }
.cause { font-weight: 600; }
.fix { color: #1d6b2a; }
.outcome { font-family: ui-monospace, Menlo, Consolas, monospace; font-size: 13px; color: #333; }
table.analysis { border-collapse: collapse; font-size: 13px; background: #fff; }
table.analysis th, table.analysis td { border: 1px solid #d0d0d0; padding: 3px 7px; white-space: nowrap; }
table.analysis th { background: #eef1f5; }
table.analysis td.n { text-align: right; font-family: ui-monospace, Menlo, Consolas, monospace; }
table.analysis tr.explained td { background: #fff6cc; font-weight: 600; }
table.analysis tr.total td { border-top: 2px solid #888; }
.good { color: #1d6b2a; } .ok { color: #8a6200; } .bad { color: #b3261e; }
.scroll { overflow-x: auto; }
.notes { color: #444; font-size: 14px; }
"#;

/// Renders `e` as one self-contained HTML page (inline CSS, the SVG figures inline, no
/// scripts or external resources): a title naming the kernel and the site, the launch and
/// the chosen execution, one card per compute capability side by side (wrapping), each with
/// its rule, counters, figure (see [`super::render_svg`]), paragraph and advice (cause, why,
/// fix, before → after counters), then the whole kernel's analysis table from `e.analysis`
/// with the explained row highlighted, and the analysis's local arrays and notes.
pub fn render_html(e: &Explanation) -> String {
    let mut h = String::new();
    let title = format!(
        "warpscope explain — {} — {}:{}:{} {}",
        e.kernel, e.source, e.line, e.column, e.text
    );
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>{}</title>\n<style>{CSS}</style>\n</head>\n<body>\n",
        esc(&title)
    );
    let _ = writeln!(
        h,
        "<header>\n<h1>{} — {}:{}:{} <code>{}</code></h1>",
        esc(&e.kernel),
        esc(&e.source),
        e.line,
        e.column,
        esc(&e.text)
    );
    let _ = writeln!(
        h,
        "<p class=\"launch\">grid ({},{},{}) · block ({},{},{}) · {} · {}{} · {}</p>",
        e.grid[0],
        e.grid[1],
        e.grid[2],
        e.block[0],
        e.block[1],
        e.block[2],
        op_name(e.op),
        space_name(e.space),
        if e.read_only { " (read-only)" } else { "" },
        super::common::per_lane(e)
    );
    let _ = writeln!(
        h,
        "<p class=\"launch\">{}</p>\n</header>",
        esc(&execution_line(e))
    );

    h.push_str("<section class=\"figures\">\n");
    for (i, a) in e.architectures.iter().enumerate() {
        let _ = writeln!(
            h,
            "<article class=\"arch\" id=\"cc-{}\">\n<h2>{}</h2>\n<p class=\"rule\">{}</p>\n<p class=\"counters\">{}</p>",
            esc(&a.cc),
            esc(&arch_title(a)),
            esc(&a.rule),
            esc(&counters_line(e.space, &a.cost))
        );
        let _ = writeln!(
            h,
            "<figure>\n{}</figure>",
            figure_svg(e, a, &format!("f{i}"))
        );
        let _ = writeln!(h, "<p class=\"paragraph\">{}</p>", esc(&a.paragraph));
        if !a.advice.is_empty() {
            h.push_str("<div class=\"advice\">\n<h3>Advice</h3>\n<ul>\n");
            for adv in &a.advice {
                let _ = write!(
                    h,
                    "<li><span class=\"cause\">{}</span>: {}<br><span class=\"fix\">Fix: {}</span>",
                    esc(&cause_name(&adv.cause)),
                    esc(&adv.why),
                    esc(&adv.fix)
                );
                for o in &adv.outcomes {
                    let after = match &o.after {
                        Some(c) => counters_short(e.space, c),
                        None => "not modelled".into(),
                    };
                    let _ = write!(
                        h,
                        "<br><span class=\"outcome\">{}: {} → {}</span>",
                        esc(&o.cc),
                        esc(&counters_short(e.space, &o.before)),
                        esc(&after)
                    );
                }
                h.push_str("</li>\n");
            }
            h.push_str("</ul>\n</div>\n");
        }
        h.push_str("</article>\n");
    }
    h.push_str("</section>\n");

    h.push_str("<section>\n<h2>The whole kernel</h2>\n");
    h.push_str(&analysis_table(&e.analysis, e));
    let an = &e.analysis;
    if !an.local_arrays.is_empty() || !an.notes.is_empty() {
        h.push_str("<ul class=\"notes\">\n");
        for la in &an.local_arrays {
            let _ = writeln!(
                h,
                "<li>local memory: <code>{}</code> ({}:{}) — {}</li>",
                esc(&la.name),
                la.line,
                la.column,
                esc(&la.reason)
            );
        }
        for n in &an.notes {
            let _ = writeln!(h, "<li>note: {}</li>", esc(n));
        }
        h.push_str("</ul>\n");
    }
    h.push_str("<p class=\"notes\">req: requests; tx: transactions (32-byte sectors from CC 5.0 on); wf: shared-memory wavefronts; eff: bytes requested / bytes moved (shared: requests / wavefronts)</p>\n</section>\n</body>\n</html>\n");
    h
}

fn eff_class(e: f64) -> &'static str {
    if e >= 0.999 {
        "good"
    } else if e >= 0.5 {
        "ok"
    } else {
        "bad"
    }
}

/// The four cells of one site (or one space's total) on one compute capability, as the
/// terminal table has them: requests, transactions or wavefronts, the excess over the
/// ideal, and the efficiency (capped at 100 % and marked `*` for a broadcast).
fn cells(c: &Counters, space: Space) -> [String; 4] {
    let td = |s: String, class: &str| {
        if class.is_empty() {
            format!("<td class=\"n\">{}</td>", esc(&s))
        } else {
            format!("<td class=\"n {class}\">{}</td>", esc(&s))
        }
    };
    let req = td(num(c.requests), "");
    if space == Space::Constant {
        let per = if c.executions > 0 {
            c.requests as f64 / c.executions as f64
        } else {
            0.0
        };
        return [
            req,
            td(format!("{per:.1}/instr"), ""),
            td("-".into(), ""),
            td("-".into(), ""),
        ];
    }
    let moved = if space == Space::Shared {
        format!("{} wf", num(c.wavefronts))
    } else {
        num(c.transactions)
    };
    let excess = c.excess_in(space).unwrap_or(0);
    let e = c.efficiency_in(space);
    [
        req,
        td(moved, ""),
        td(num(excess), if excess > 0 { "bad" } else { "" }),
        td(crate::table::eff_text(e), e.map(eff_class).unwrap_or("")),
    ]
}

fn analysis_table(a: &Analysis, e: &Explanation) -> String {
    let mut h = String::new();
    let _ = writeln!(
        h,
        "<p class=\"launch\">{} — grid ({},{},{}) block ({},{},{}) — {}</p>",
        esc(&a.kernel),
        a.grid[0],
        a.grid[1],
        a.grid[2],
        a.block[0],
        a.block[1],
        a.block[2],
        esc(&a.source)
    );
    h.push_str("<div class=\"scroll\">\n<table class=\"analysis\">\n<thead><tr><th>site</th><th>access</th><th>op</th><th>space</th><th>B</th>");
    for arch in &a.architectures {
        let cc = esc(&arch.cc);
        let _ = write!(
            h,
            "<th>{cc} req</th><th>{cc} tx/wf</th><th>{cc} excess</th><th>{cc} eff</th>"
        );
    }
    h.push_str("</tr></thead>\n<tbody>\n");
    let nsites = a.architectures.first().map(|x| x.sites.len()).unwrap_or(0);
    for i in 0..nsites {
        let s0 = &a.architectures[0].sites[i];
        let explained = s0.line == e.line
            && s0.column == e.column
            && s0.space == e.space
            && s0.width == e.width
            && s0.op == e.op;
        let space = if s0.space == Space::Global && s0.read_only {
            "global (ro)".to_string()
        } else {
            space_name(s0.space).to_string()
        };
        let _ = write!(
            h,
            "<tr{}><td>{}:{}:{}</td><td><code>{}</code></td><td>{}</td><td>{}</td><td class=\"n\">{}</td>",
            if explained { " class=\"explained\"" } else { "" },
            esc(&a.source),
            s0.line,
            s0.column,
            esc(&s0.text),
            op_name(s0.op),
            esc(&space),
            s0.width
        );
        for arch in &a.architectures {
            if let Some(s) = arch.sites.get(i) {
                for c in cells(&s.counters, s.space) {
                    h.push_str(&c);
                }
            } else {
                h.push_str("<td></td><td></td><td></td><td></td>");
            }
        }
        h.push_str("</tr>\n");
    }
    // Totals: one row per memory space, as the terminal table has them.
    for (k, space) in crate::SPACES.into_iter().enumerate() {
        if a.architectures
            .iter()
            .all(|x| x.totals.by_space()[k].1.is_empty())
        {
            continue;
        }
        let _ = write!(
            h,
            "<tr class=\"total\"><td>total</td><td></td><td></td><td>{}</td><td></td>",
            esc(&crate::table::space_label(space, false))
        );
        for arch in &a.architectures {
            for c in cells(arch.totals.by_space()[k].1, space) {
                h.push_str(&c);
            }
        }
        h.push_str("</tr>\n");
    }
    h.push_str("</tbody>\n</table>\n</div>\n");
    h
}
