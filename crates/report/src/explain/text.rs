//! The terminal picture: Unicode blocks and box drawing, optional ANSI colours.

use warpscope_model::detail::{Breakdown, ConstantGroup, Phase};

use super::common::{
    arch_title, bank_cell, cause_name, counters_line, counters_short, execution_line, group_label,
    hex, lanes_phrase, op_name, per_lane, plural, sass_line, space_name, tx_label, wrap, MemModel,
};
use super::{ExplainedArch, Explanation};

/// Lines of 128 bytes drawn at most; the rest are counted.
const MAX_LINES: usize = 16;
/// Wavefront rows drawn per shared-memory phase at most.
const MAX_PASSES: usize = 16;
/// Width of the left margin (addresses, request and row labels).
const LABEL: usize = 15;
/// Paragraph wrap width.
const WRAP: usize = 100;

struct Style {
    color: bool,
}

/// ANSI colours cycled per request (cyan, magenta, yellow, green, blue, red).
const REQ_COLORS: [&str; 6] = ["36", "35", "33", "32", "34", "31"];

impl Style {
    fn paint(&self, code: &str, s: &str) -> String {
        if self.color && !s.is_empty() {
            format!("\x1b[{code}m{s}\x1b[0m")
        } else {
            s.to_string()
        }
    }
    fn req(&self, r: usize, s: &str) -> String {
        self.paint(REQ_COLORS[r % REQ_COLORS.len()], s)
    }
    fn bold(&self, s: &str) -> String {
        self.paint("1", s)
    }
    fn dim(&self, s: &str) -> String {
        self.paint("2", s)
    }
}

/// Renders `e` for the terminal, one section per compute capability.
///
/// The header names the kernel, the site (`file:line:col` and its text), the operation,
/// space and width, and which warp-level execution is explained (block and warp). Each
/// section gives the rule, the counters of this one warp, a picture, the paragraph
/// ([`ExplainedArch::paragraph`]) and the advice with before → after counters.
///
/// Pictures, 3 characters per cell:
/// - global/local: one row per touched 128-byte line (its address on the left), 32 cells of
///   4 bytes split by `│` into four 32-byte sectors; a cell shows the lane whose bytes it
///   holds (`12+` when several lanes share it, `───` where a wide word continues), `░░░` for
///   bytes a transaction fetched but no lane asked for, ` · ` for bytes not fetched. Under
///   each line, one row per request with its transactions as `└── 64 B ──┘` brackets.
///   Untouched lines between are one `⋮` row; past 16 lines the rest are counted.
/// - shared: banks as columns, one row per wavefront (pass) of each phase; a cell shows the
///   lane served by that bank in that pass (`4+`: several lanes on the bank in that pass —
///   a multicast word, or on 3.x two words sharing a 64-bit delivery).
/// - constant: per request group a strip of the 32 lanes lettered by the address they read,
///   then one line per distinct address (one request each).
/// - texture/surface of a 2-D/3-D texture: the warp's texels on the texture's grid, all its
///   requests (see [`super::TexelGrid::text`]): cells show the lane reading the texel,
///   `░░░` texels of fetched sectors no lane reads, ` · ` texels not fetched.
///
/// `color` adds ANSI colours (one per request; conflicts red; waste dim).
pub fn render_text(e: &Explanation, color: bool) -> String {
    let st = Style { color };
    let mut out = String::new();
    out.push_str(&st.bold(&format!(
        "{} — {}:{}:{} — {}",
        e.kernel, e.source, e.line, e.column, e.text
    )));
    out.push('\n');
    out.push_str(&format!(
        "{} · {}{} · {} · grid ({},{},{}) block ({},{},{})\n",
        op_name(e.op),
        space_name(e.space),
        if e.read_only { " (read-only)" } else { "" },
        per_lane(e),
        e.grid[0],
        e.grid[1],
        e.grid[2],
        e.block[0],
        e.block[1],
        e.block[2]
    ));
    out.push_str(&execution_line(e));
    out.push('\n');
    if let Some(s) = sass_line(e) {
        out.push_str(&s);
        out.push('\n');
    }
    for a in &e.architectures {
        out.push('\n');
        out.push_str(&section(e, a, &st));
    }
    out
}

fn section(e: &Explanation, a: &ExplainedArch, st: &Style) -> String {
    let mut out = String::new();
    let title = format!("━━ {} · {} ", arch_title(a), a.rule);
    let pad = 100usize.saturating_sub(title.chars().count());
    out.push_str(&st.bold(&format!("{title}{}", "━".repeat(pad))));
    out.push('\n');
    out.push_str(&counters_line(e.space, &a.cost));
    out.push_str("\n\n");
    let pic = match &a.breakdown {
        Breakdown::Memory { .. } if e.texels.is_some() => e
            .texels
            .as_ref()
            .map(|g| g.text(&|r, s| st.req(r, s)))
            .unwrap_or_default(),
        Breakdown::Memory { requests, .. } => memory(e, &MemModel::new(e, requests), st),
        Breakdown::Shared {
            banks,
            bank_bytes,
            phases,
            ..
        } => shared(*banks, *bank_bytes, phases, st),
        Breakdown::Constant { groups } => constant(groups, st),
    };
    out.push_str(&pic);
    out.push('\n');
    for l in wrap(&a.paragraph, WRAP) {
        out.push_str(&l);
        out.push('\n');
    }
    if !a.advice.is_empty() {
        out.push('\n');
        out.push_str(&st.bold("advice"));
        out.push('\n');
        for adv in &a.advice {
            let head = format!("• {}: {}", cause_name(&adv.cause), adv.why);
            for (i, l) in wrap(&head, WRAP - 2).iter().enumerate() {
                out.push_str(if i == 0 { "" } else { "  " });
                out.push_str(l);
                out.push('\n');
            }
            for (i, l) in wrap(&format!("→ fix: {}", adv.fix), WRAP - 2)
                .iter()
                .enumerate()
            {
                out.push_str("  ");
                out.push_str(if i == 0 { "" } else { "  " });
                out.push_str(&st.paint("32", l));
                out.push('\n');
            }
            for o in &adv.outcomes {
                let after = match &o.after {
                    Some(c) => counters_short(e.space, c),
                    None => "not modelled".into(),
                };
                out.push_str(&format!(
                    "  {}: {} → {}\n",
                    o.cc,
                    counters_short(e.space, &o.before),
                    after
                ));
            }
        }
    }
    out
}

/// Column (within the picture body, the leading `│` at 0) where 4-byte cell `c` of a line
/// starts.
fn col(c: usize) -> usize {
    1 + (c / 8) * 25 + (c % 8) * 3
}

/// A bracket `└── label ──┘` of exactly `n` characters.
fn bracket(n: usize, label: &str) -> String {
    if n < 2 {
        return "┘".repeat(n);
    }
    let inner = n - 2;
    let lab = format!(" {label} ");
    let ll = lab.chars().count();
    if ll + 2 > inner {
        // Too narrow for the label: the size alone, or a plain bracket.
        let short = label.split(' ').next().unwrap_or("");
        if short.chars().count() <= inner {
            let left = (inner - short.len()) / 2;
            return format!(
                "└{}{short}{}┘",
                "─".repeat(left),
                "─".repeat(inner - left - short.len())
            );
        }
        return format!("└{}┘", "─".repeat(inner));
    }
    let left = (inner - ll) / 2;
    format!(
        "└{}{lab}{}┘",
        "─".repeat(left),
        "─".repeat(inner - left - ll)
    )
}

fn label(s: &str) -> String {
    format!("{s:>LABEL$} ")
}

fn memory(e: &Explanation, m: &MemModel, st: &Style) -> String {
    let mut out = String::new();
    if m.lines.is_empty() {
        return "(no bytes touched)\n".into();
    }
    // Sector offsets above the first line.
    let mut head = " ".repeat(LABEL + 1);
    for s in 0..4 {
        head.push_str(&format!("{:<25}", format!(" +{}", 32 * s)));
    }
    out.push_str(&st.dim(head.trim_end()));
    out.push('\n');
    let shown = m.lines.len().min(MAX_LINES);
    for (i, &line) in m.lines[..shown].iter().enumerate() {
        if i > 0 {
            let gap = line - m.lines[i - 1] - 1;
            if gap > 0 {
                out.push_str(&st.dim(&format!(
                    "{}⋮ {} skipped",
                    label(""),
                    plural(gap, "line", "lines")
                )));
                out.push('\n');
            }
        }
        out.push_str(&label(&hex(line << 7)));
        out.push_str(&line_cells(e, m, line, st));
        out.push('\n');
        for r in 0..m.requests.len() {
            let tx = m.transactions_in(r, line);
            if tx.is_empty() {
                continue;
            }
            let mut row = String::new();
            let mut at = 0;
            for (addr, bytes, count, _) in tx {
                let c0 = ((addr & 127) / 4) as usize;
                let c1 = (((addr & 127) + bytes.clamp(1, 128) - 1) / 4).min(31) as usize;
                let start = col(c0);
                let end = col(c1) + 3;
                if start < at {
                    continue;
                }
                row.push_str(&" ".repeat(start - at));
                row.push_str(&st.req(r, &bracket(end - start, &tx_label(bytes, count))));
                at = end;
            }
            out.push_str(&st.req(r, &label(&group_label(m.requests[r].group))));
            out.push_str(&row);
            out.push('\n');
        }
    }
    if m.lines.len() > shown {
        let rest = &m.lines[shown..];
        let lo = rest[0] << 7;
        let hi = (rest[rest.len() - 1] + 1) << 7;
        let lanes_there = m.lanes_in(lo, hi);
        out.push_str(&st.dim(&format!(
            "{}… {} more not shown ({} to {}{})",
            label(""),
            plural(rest.len() as u64, "line", "lines"),
            hex(lo),
            hex(hi - 1),
            if lanes_there != 0 {
                format!(", {}", lanes_phrase(lanes_there))
            } else {
                String::new()
            }
        )));
        out.push('\n');
    }
    out.push_str(&st.dim(&format!(
        "{}lane numbers: bytes a lane asks for · ░░░ fetched, not used · └ n B ┘ one transaction",
        label("")
    )));
    out.push('\n');
    out
}

/// One 128-byte line as 32 cells of 4 bytes in 4 sectors.
fn line_cells(_e: &Explanation, m: &MemModel, line: u64, st: &Style) -> String {
    let mut s = String::from("│");
    let base = line << 7;
    let mut prev_lane: Option<usize> = None;
    for c in 0..32u64 {
        let lo = base + 4 * c;
        let ls = m.lanes_in(lo, lo + 4);
        let cell = if ls != 0 {
            let first = ls.trailing_zeros() as usize;
            let r = m.request_at(first, lo).unwrap_or(0);
            // A wide word that began in an earlier cell continues.
            if ls.count_ones() == 1 && prev_lane == Some(first) && m.start_of(first, lo) < lo {
                st.req(r, "───")
            } else {
                let more = if ls.count_ones() > 1 { "+" } else { " " };
                st.req(r, &format!("{first:>2}{more}"))
            }
        } else if m.fetched_by(lo, lo + 4) != 0 {
            st.dim("░░░")
        } else {
            st.dim(" · ")
        };
        prev_lane = (ls != 0).then(|| (31 - ls.leading_zeros()) as usize);
        s.push_str(&cell);
        if c % 8 == 7 {
            s.push('│');
        }
    }
    s
}

fn shared(banks: u32, bank_bytes: u32, phases: &[Phase], st: &Style) -> String {
    let mut out = String::new();
    let nb = banks.clamp(1, 64) as usize;
    let mut head = label(&format!("bank ({bank_bytes} B)"));
    head.push(' ');
    for b in 0..nb {
        head.push_str(&format!("{b:>2} "));
        if b % 8 == 7 && b + 1 < nb {
            head.push('│');
        }
    }
    out.push_str(&st.dim(head.trim_end()));
    out.push('\n');
    if phases.is_empty() {
        out.push_str("(no active lane)\n");
    }
    let (mut multicast, mut paired) = (false, false);
    for (pi, p) in phases.iter().enumerate() {
        let passes = p
            .slots
            .iter()
            .map(|s| s.pass as usize + 1)
            .max()
            .unwrap_or(0);
        out.push_str(&st.bold(&format!(
            "phase {pi} · {} ({}) · {}{}",
            group_label(p.group),
            lanes_phrase(p.lanes),
            plural(p.wavefronts, "wavefront", "wavefronts"),
            if passes as u64 != p.wavefronts {
                format!(" ({} drawn)", passes)
            } else {
                String::new()
            }
        )));
        out.push('\n');
        let shown = if passes > MAX_PASSES {
            MAX_PASSES - 1
        } else {
            passes
        };
        for pass in 0..shown {
            let mut row = label(&format!("wavefront {pass}"));
            row.push(' ');
            for b in 0..nb {
                let (ls, words) = bank_cell(p, pass, b, nb);
                let cell = if ls == 0 {
                    st.dim(" · ")
                } else {
                    // `+`: several lanes on one word (multicast); `&`: several words in one
                    // pass of one bank (the 3.x 64-bit delivery of words i and i+32).
                    let more = if words.len() > 1 {
                        paired = true;
                        "&"
                    } else if ls.count_ones() > 1 {
                        multicast = true;
                        "+"
                    } else {
                        " "
                    };
                    let txt = format!("{:>2}{more}", ls.trailing_zeros());
                    if pass > 0 {
                        st.paint("31", &txt)
                    } else if ls.count_ones() > 1 {
                        st.paint("33", &txt)
                    } else {
                        st.paint("32", &txt)
                    }
                };
                row.push_str(&cell);
                if b % 8 == 7 && b + 1 < nb {
                    row.push('│');
                }
            }
            out.push_str(row.trim_end());
            out.push('\n');
        }
        if shown < passes {
            let rest: Vec<_> = p
                .slots
                .iter()
                .filter(|s| s.pass as usize >= shown)
                .collect();
            let ls = rest.iter().fold(0u32, |m, s| {
                m | 1u32.checked_shl(u32::from(s.lane)).unwrap_or(0)
            });
            let mut bs: Vec<u8> = rest.iter().map(|s| s.bank).collect();
            bs.sort_unstable();
            bs.dedup();
            let bs: Vec<String> = bs.iter().map(|b| b.to_string()).collect();
            out.push_str(&st.paint(
                "31",
                &format!(
                    "{}⋮ {} more {}: {} on bank{} {}",
                    label(""),
                    passes - shown,
                    if passes - shown == 1 {
                        "wavefront"
                    } else {
                        "wavefronts"
                    },
                    lanes_phrase(ls),
                    if bs.len() == 1 { "" } else { "s" },
                    bs.join(", ")
                ),
            ));
            out.push('\n');
        }
    }
    let mut key = String::from("a cell: the lowest lane a bank serves in that wavefront");
    if multicast {
        key.push_str(" · n+: several lanes on one word (multicast)");
    }
    if paired {
        key.push_str(" · n&: two words in one 64-bit bank access");
    }
    key.push_str(" · wavefronts after the first: conflicts");
    out.push_str(&st.dim(&format!("{}{key}", label(""))));
    out.push('\n');
    out
}

fn letter(i: usize) -> char {
    const L: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    L[i % L.len()] as char
}

fn constant(groups: &[ConstantGroup], st: &Style) -> String {
    let mut out = String::new();
    let mut head = label("lane");
    for l in (0..32).step_by(8) {
        head.push_str(&format!("{l:<8}"));
    }
    out.push_str(&st.dim(head.trim_end()));
    out.push('\n');
    if groups.is_empty() {
        out.push_str("(no active lane)\n");
    }
    let mut k = 0;
    for ConstantGroup { group, reads } in groups {
        let mut strip = String::new();
        for l in 0..32u32 {
            let i = reads.iter().position(|r| r.lanes & (1 << l) != 0);
            strip.push_str(&match i {
                Some(i) => st.req(i, &letter(i).to_string()),
                None if group & (1 << l) != 0 => st.dim("·"),
                None => " ".into(),
            });
        }
        out.push_str(&label(&group_label(*group)));
        out.push_str(strip.trim_end());
        out.push('\n');
        for (i, r) in reads.iter().enumerate() {
            out.push_str(&st.req(
                i,
                &format!(
                    "{}{}  request {k}: {}  ({})",
                    label(""),
                    letter(i),
                    hex(r.addr),
                    lanes_phrase(r.lanes)
                ),
            ));
            out.push('\n');
            k += 1;
        }
    }
    out.push_str(&st.dim(&format!(
        "{}a letter per distinct address: each is one request, served one after another",
        label("")
    )));
    out.push('\n');
    out
}
