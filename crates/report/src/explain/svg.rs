//! The figure as standalone SVG, drawn after the CUDA Programming Guide's coalescing and
//! bank-conflict figures: the warp's lanes as a row of boxes on top, lines from each active
//! lane down to what it touches (its bytes in the 128-byte lines, its bank, its constant
//! address), transactions as coloured outlines labelled with their size.

use std::fmt::Write;

use warpscope_model::detail::{Breakdown, ConstantGroup, ConstantRead, Phase};

use super::common::{
    arch_title, bank_cell, counters_line, esc, group_label, hex, lanes, lanes_phrase, num, plural,
    tx_label, wrap, MemModel,
};
use super::{ExplainedArch, Explanation};

/// Figure width, px.
const W: f64 = 960.0;
/// Left margin (row labels).
pub(super) const LM: f64 = 112.0;
/// Width of the lane row and of the address rows: 32 lanes of 26 px.
pub(super) const CW: f64 = 832.0;
const LANE: f64 = CW / 32.0;
/// Height of the band between the lanes and what they touch, where the lines run.
const ARROWS: f64 = 70.0;
/// Address rows drawn at most (each holds one or two 128-byte lines).
const MAX_ROWS: usize = 8;
/// Wavefront rows drawn per phase at most.
const MAX_PASSES: usize = 16;
/// Characters per paragraph line (12 px monospace ≈ 7.2 px a character).
const WRAP: usize = 128;
const FONT: &str = "font-family=\"monospace\"";

/// Fill (light) and stroke (dark) per request, cycled.
const COLORS: [(&str, &str); 6] = [
    ("#dbe8fb", "#1f5fbf"),
    ("#ffe2c4", "#b85400"),
    ("#d8f0d8", "#2e7d32"),
    ("#eadcf8", "#6a3fa0"),
    ("#fbdbe6", "#b0245a"),
    ("#d6f1f1", "#00796b"),
];
const CONFLICT: (&str, &str) = ("#fbd5d2", "#c62828");
const MULTICAST: (&str, &str) = ("#fff2b3", "#9a7400");
const PAIRED: (&str, &str) = ("#d6f1f1", "#00796b");

pub(super) fn color(i: usize) -> (&'static str, &'static str) {
    COLORS[i % COLORS.len()]
}

/// An SVG fragment in local coordinates (origin top left, `h` px tall so far).
pub(super) struct Fig {
    pub(super) s: String,
    pub(super) h: f64,
    /// Suffix for ids (patterns, markers), unique per figure in one document.
    pub(super) id: String,
}

impl Fig {
    pub(super) fn rect(&mut self, x: f64, y: f64, w: f64, h: f64, attrs: &str) {
        let _ = writeln!(
            self.s,
            "<rect x=\"{x:.1}\" y=\"{y:.1}\" width=\"{:.1}\" height=\"{:.1}\" {attrs}/>",
            w.max(0.0),
            h.max(0.0)
        );
    }
    /// A rect with a hover title.
    pub(super) fn rect_t(&mut self, x: f64, y: f64, w: f64, h: f64, attrs: &str, title: &str) {
        let _ = writeln!(
            self.s,
            "<rect x=\"{x:.1}\" y=\"{y:.1}\" width=\"{:.1}\" height=\"{:.1}\" {attrs}><title>{}</title></rect>",
            w.max(0.0),
            h.max(0.0),
            esc(title)
        );
    }
    pub(super) fn text(&mut self, x: f64, y: f64, size: f64, attrs: &str, content: &str) {
        let _ = writeln!(
            self.s,
            "<text x=\"{x:.1}\" y=\"{y:.1}\" {FONT} font-size=\"{size}\" {attrs}>{}</text>",
            esc(content)
        );
    }
    pub(super) fn line(&mut self, x1: f64, y1: f64, x2: f64, y2: f64, attrs: &str) {
        let _ = writeln!(
            self.s,
            "<line x1=\"{x1:.1}\" y1=\"{y1:.1}\" x2=\"{x2:.1}\" y2=\"{y2:.1}\" {attrs}/>"
        );
    }
    pub(super) fn open(&mut self, class: &str, extra: &str) {
        let _ = writeln!(self.s, "<g class=\"{class}\"{extra}>");
    }
    pub(super) fn close(&mut self) {
        self.s.push_str("</g>\n");
    }
}

/// Renders the figure of `e.architectures[arch]` as a standalone SVG document (`viewBox`
/// in px, 960 wide; height as needed): a title and the counters of this warp, the picture,
/// a legend, and the paragraph wrapped into lines under it.
///
/// - Global/local: the 32 lanes as boxes on top (inactive ones dashed); a line from each
///   active lane to its bytes; below, the touched 128-byte lines as address rows (one or
///   two lines per row, the scale shared by all rows) with 32-byte sector boundaries and the
///   line addresses marked; bytes a lane asks for filled in its request's colour with the
///   lane number, bytes fetched but unused hatched grey; under each row one band per request
///   with its transactions as coloured outlines labelled "128 B", "64 B", "32 B" (`<g
///   class="request">` per request, `<rect class="tx">` per transaction). Untouched lines in
///   between are one "⋮ n lines skipped" row; past 8 rows the rest are counted.
/// - Shared: lanes on top, lines to the bank each lane hits; a banks × wavefronts grid, one
///   `<g class="phase">` per phase, a cell per bank and pass holding its lane ("4+": several
///   lanes, multicast); passes after the first are conflicts, in red.
/// - Constant: lanes on top, lines to a box per distinct address (one request each).
/// - Texture/surface of a 2-D/3-D texture: the texture's grid around the warp's texels
///   (`<g class="texels">`), a cell per texel: read ones in their request's colour with the
///   lane, unread texels of fetched sectors hatched grey, 32-byte sectors outlined
///   (`<rect class="sector">` per fetched sector).
///
/// An index out of range gives an SVG that says so.
pub fn render_svg(e: &Explanation, arch: usize) -> String {
    let mut f = Fig {
        s: String::new(),
        h: 0.0,
        id: format!("a{arch}"),
    };
    match e.architectures.get(arch) {
        Some(a) => {
            figure(&mut f, e, a, true, true);
            paragraph_lines(&mut f, &a.paragraph);
        }
        None => {
            f.text(
                16.0,
                28.0,
                14.0,
                "",
                &format!("no compute capability #{arch} in this explanation"),
            );
            f.h = 44.0;
        }
    }
    document(&f.s, f.h, &svg_title(e, e.architectures.get(arch)))
}

/// All compute capabilities' figures (with their paragraphs) stacked in one SVG document,
/// under a header naming the kernel and the site.
pub fn render_svg_all(e: &Explanation) -> String {
    let mut body = String::new();
    let mut y = 0.0;
    let mut head = Fig {
        s: String::new(),
        h: 0.0,
        id: "h".into(),
    };
    header_lines(&mut head, e);
    body.push_str(&head.s);
    y += head.h;
    for (i, a) in e.architectures.iter().enumerate() {
        let mut f = Fig {
            s: String::new(),
            h: 0.0,
            id: format!("a{i}"),
        };
        figure(&mut f, e, a, false, true);
        paragraph_lines(&mut f, &a.paragraph);
        let _ = writeln!(
            body,
            "<g class=\"arch\" transform=\"translate(0,{y:.1})\">\n<line x1=\"16\" y1=\"2\" x2=\"{:.1}\" y2=\"2\" stroke=\"#999\" stroke-width=\"1\"/>\n{}</g>",
            W - 16.0,
            f.s
        );
        y += f.h + 12.0;
    }
    document(&body, y, &svg_title(e, None))
}

/// The figure of one compute capability without its paragraph (the HTML page prints the
/// paragraph as text); ids are suffixed with `id` so that several figures can share a page.
pub(crate) fn figure_svg(e: &Explanation, a: &ExplainedArch, id: &str) -> String {
    let mut f = Fig {
        s: String::new(),
        h: 0.0,
        id: id.to_string(),
    };
    figure(&mut f, e, a, false, false);
    document(&f.s, f.h, &svg_title(e, Some(a)))
}

fn svg_title(e: &Explanation, a: Option<&ExplainedArch>) -> String {
    let site = format!("{}:{}:{} {}", e.source, e.line, e.column, e.text);
    match a {
        Some(a) => format!("{} — {} — {}", e.kernel, site, arch_title(a)),
        None => format!("{} — {}", e.kernel, site),
    }
}

fn document(body: &str, h: f64, title: &str) -> String {
    let h = h.ceil().max(1.0);
    format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {W} {h}\" width=\"{W}\" height=\"{h}\" role=\"img\">\n<title>{}</title>\n<rect x=\"0\" y=\"0\" width=\"{W}\" height=\"{h}\" fill=\"#ffffff\"/>\n{body}</svg>\n",
        esc(title)
    )
}

fn header_lines(f: &mut Fig, e: &Explanation) {
    f.text(
        16.0,
        26.0,
        18.0,
        "font-weight=\"bold\"",
        &format!(
            "{} — {}:{}:{}  {}",
            e.kernel, e.source, e.line, e.column, e.text
        ),
    );
    f.text(
        16.0,
        46.0,
        12.0,
        "fill=\"#444\"",
        &super::common::execution_line(e),
    );
    f.h = 60.0;
}

fn paragraph_lines(f: &mut Fig, p: &str) {
    let lines = wrap(p, WRAP);
    if lines.is_empty() {
        return;
    }
    let y0 = f.h + 6.0;
    let mut s = format!(
        "<text class=\"paragraph\" x=\"16\" y=\"{:.1}\" {FONT} font-size=\"12\" fill=\"#222\">",
        y0 + 12.0
    );
    for (i, l) in lines.iter().enumerate() {
        let _ = write!(
            s,
            "<tspan x=\"16\" dy=\"{}\">{}</tspan>",
            if i == 0 { 0 } else { 16 },
            esc(l)
        );
    }
    s.push_str("</text>\n");
    f.s.push_str(&s);
    f.h = y0 + 16.0 * lines.len() as f64 + 10.0;
}

/// Title, counters, and the picture for one compute capability; leaves `f.h` at its bottom.
fn figure(f: &mut Fig, e: &Explanation, a: &ExplainedArch, site: bool, titles: bool) {
    let _ = writeln!(
        f.s,
        "<defs><pattern id=\"waste-{id}\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" patternTransform=\"rotate(45)\"><rect width=\"6\" height=\"6\" fill=\"#e4e4e4\"/><line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"6\" stroke=\"#a8a8a8\" stroke-width=\"2\"/></pattern><marker id=\"arrow-{id}\" viewBox=\"0 0 8 8\" refX=\"7\" refY=\"4\" markerWidth=\"6\" markerHeight=\"6\" orient=\"auto-start-reverse\"><path d=\"M0,0 L8,4 L0,8 z\" fill=\"#555\"/></marker></defs>",
        id = f.id
    );
    if !titles {
        // The page around the figure names the compute capability and gives the counters.
        f.h = 0.0;
        draw_picture(f, e, a);
        return;
    }
    f.text(
        16.0,
        28.0,
        17.0,
        "font-weight=\"bold\"",
        &format!("{} — {}", arch_title(a), a.rule),
    );
    let mut y = 48.0;
    if site {
        f.text(
            16.0,
            y,
            12.0,
            "fill=\"#222\"",
            &format!(
                "{} — {}:{}:{}  {}  ({} {}, {} B per lane; block ({},{},{}) warp {})",
                e.kernel,
                e.source,
                e.line,
                e.column,
                e.text,
                super::common::space_name(e.space),
                super::common::op_name(e.op),
                e.width,
                e.block_of_warp[0],
                e.block_of_warp[1],
                e.block_of_warp[2],
                e.warp
            ),
        );
        y += 18.0;
    }
    f.text(
        16.0,
        y,
        12.0,
        "fill=\"#444\"",
        &counters_line(e.space, &a.cost),
    );
    f.h = y + 14.0;
    draw_picture(f, e, a);
}

fn draw_picture(f: &mut Fig, e: &Explanation, a: &ExplainedArch) {
    match &a.breakdown {
        Breakdown::Memory { .. } if e.texels.is_some() => {
            if let Some(g) = &e.texels {
                g.svg(f);
            }
        }
        Breakdown::Memory { requests, .. } => memory(f, e, &MemModel::new(e, requests)),
        Breakdown::Shared {
            banks,
            bank_bytes,
            phases,
            ..
        } => shared(f, e, *banks, *bank_bytes, phases),
        Breakdown::Constant { groups } => constant(f, e, groups),
    }
}

/// The row of 32 lane boxes at `y`, coloured by `fill_of(lane)` (`None`: inactive).
fn lane_row(f: &mut Fig, e: &Explanation, y: f64, fill_of: &dyn Fn(usize) -> Option<usize>) {
    f.text(
        LM - 10.0,
        y + 15.0,
        11.0,
        "text-anchor=\"end\" fill=\"#333\"",
        "lanes",
    );
    f.open("lanes", "");
    for l in 0..32 {
        let x = LM + LANE * l as f64;
        let active = e.mask & (1 << l) != 0;
        let (fill, stroke, dash, tc) = match (active, fill_of(l)) {
            (true, Some(i)) => (color(i).0, color(i).1, "", "#111"),
            (true, None) => ("#eeeeee", "#555", "", "#111"),
            (false, _) => ("#f7f7f7", "#bbbbbb", " stroke-dasharray=\"3 2\"", "#aaa"),
        };
        f.rect_t(
            x + 1.0,
            y,
            LANE - 2.0,
            22.0,
            &format!("fill=\"{fill}\" stroke=\"{stroke}\"{dash}"),
            &if active {
                format!("lane {l}: address {}", hex(super::common::addr_of(e, l)))
            } else {
                format!("lane {l}: inactive")
            },
        );
        f.text(
            x + LANE / 2.0,
            y + 15.0,
            11.0,
            &format!("text-anchor=\"middle\" fill=\"{tc}\""),
            &l.to_string(),
        );
    }
    f.close();
}

pub(super) fn legend(f: &mut Fig, items: &[(&str, &str)]) {
    let y = f.h + 8.0;
    let mut x = LM;
    f.open("legend", "");
    for (attrs, label) in items {
        f.rect(x, y, 18.0, 12.0, attrs);
        f.text(x + 24.0, y + 10.5, 11.0, "fill=\"#333\"", label);
        x += 24.0 + 7.0 * label.chars().count() as f64 + 22.0;
    }
    f.close();
    f.h = y + 20.0;
}

/// Gap between two non-adjacent lines drawn in one row, px.
const GUTTER: f64 = 18.0;

fn memory(f: &mut Fig, e: &Explanation, m: &MemModel) {
    let id = f.id.clone();
    let lanes_y = f.h + 6.0;
    lane_row(f, e, lanes_y, &|l| m.request_of(l));
    f.h = lanes_y + 22.0 + ARROWS;
    if m.lines.is_empty() {
        f.h = lanes_y + 22.0 + 30.0;
        let what = if m.mask == 0 {
            "no active lane: nothing is fetched"
        } else {
            "no transaction"
        };
        f.text(LM, f.h, 12.0, "fill=\"#555\"", what);
        f.h += 12.0;
        return;
    }
    // Two lines per row (one when the access touches a single line: then a 4-byte word is
    // as wide as a lane box above it); one scale for all rows.
    let per_row = if m.lines.len() == 1 { 1 } else { 2 };
    let ppb = if per_row == 1 {
        CW / 128.0
    } else {
        (CW - GUTTER) / 256.0
    };
    let rows: Vec<&[u64]> = m.lines.chunks(per_row).collect();
    let mut body = Fig {
        s: String::new(),
        h: f.h,
        id: id.clone(),
    };
    // Where each line is drawn: line → (row index, row top y, x of its byte 0).
    let mut placed: Vec<(u64, usize, f64, f64)> = Vec::new();
    let mut hidden_from: Option<u64> = None;
    for (ri, row) in rows.iter().enumerate() {
        if ri > 0 {
            let gap = row[0] - rows[ri - 1][rows[ri - 1].len() - 1] - 1;
            if ri >= MAX_ROWS {
                hidden_from = Some(row[0]);
                break;
            }
            if gap > 0 {
                body.text(
                    LM + CW / 2.0,
                    body.h + 12.0,
                    12.0,
                    "text-anchor=\"middle\" fill=\"#777\"",
                    &format!("⋮  {} skipped", plural(gap, "line", "lines")),
                );
                body.h += 18.0;
            }
        }
        address_row(&mut body, m, ri, row, ppb, &mut placed);
    }
    // Lines from each lane to its first byte, for lanes whose bytes are in the first row
    // (lines to later rows would cross the rows above; those rows name their lanes).
    let top = lanes_y + 22.0;
    f.open("lane-lines", "");
    for l in lanes(m.mask) {
        let a = m.words[0][l];
        let Some(&(_, 0, ry, x0)) = placed.iter().find(|p| p.0 == a >> 7) else {
            continue;
        };
        let xl = LM + LANE * (l as f64 + 0.5);
        let off = (a & 127) as f64 + (m.width.min(128 - (a & 127))) as f64 / 2.0;
        let xt = x0 + off * ppb;
        let stroke = color(m.request_of(l).unwrap_or(0)).1;
        f.line(
            xl,
            top,
            xt,
            ry - 1.0,
            &format!(
                "stroke=\"{stroke}\" stroke-width=\"1\" stroke-opacity=\"0.75\" marker-end=\"url(#arrow-{id})\""
            ),
        );
    }
    f.close();
    f.s.push_str(&body.s);
    f.h = body.h;
    if let Some(first) = hidden_from {
        let rest = m.lines.iter().filter(|&&l| l >= first).count();
        let lo = first << 7;
        let ls = m.lanes_in(lo, u64::MAX);
        f.text(
            LM,
            f.h + 12.0,
            12.0,
            "fill=\"#777\"",
            &format!(
                "… {} more not shown (from {}{})",
                plural(rest as u64, "line", "lines"),
                hex(lo),
                if ls != 0 {
                    format!(", {}", lanes_phrase(ls))
                } else {
                    String::new()
                }
            ),
        );
        f.h += 20.0;
    }
    let (rf, rs) = color(0);
    legend(
        f,
        &[
            (
                &format!("fill=\"{rf}\" stroke=\"{rs}\""),
                "bytes a lane asks for",
            ),
            (
                &format!("fill=\"url(#waste-{id})\" stroke=\"#888\""),
                "fetched, not used",
            ),
            (
                &format!("fill=\"{rf}\" fill-opacity=\"0.45\" stroke=\"{rs}\" stroke-width=\"2\""),
                "one transaction (its size)",
            ),
        ],
    );
}

/// Draws address row `ri` (the lines `row`, side by side; a gutter between two that are
/// not adjacent in memory) at `f.h`; records where each line went in `placed`.
fn address_row(
    f: &mut Fig,
    m: &MemModel,
    ri: usize,
    row: &[u64],
    ppb: f64,
    placed: &mut Vec<(u64, usize, f64, f64)>,
) {
    let id = f.id.clone();
    // Rows after the first name their lanes above each line (no lines from the lanes reach
    // them).
    let y = f.h + if ri == 0 { 0.0 } else { 16.0 };
    let ch = 24.0;
    let lw = 128.0 * ppb;
    f.open("row", "");
    let mut x0 = LM;
    for (k, &line) in row.iter().enumerate() {
        if k > 0 {
            let prev = row[k - 1];
            x0 += lw;
            if line != prev + 1 {
                // Untouched lines between the two: a grey gutter with an ellipsis.
                f.rect_t(
                    x0 + 3.0,
                    y,
                    GUTTER - 6.0,
                    ch,
                    "fill=\"#eeeeee\" stroke=\"none\"",
                    &format!("{} skipped", plural(line - prev - 1, "line", "lines")),
                );
                f.text(
                    x0 + GUTTER / 2.0,
                    y + ch / 2.0 + 4.0,
                    12.0,
                    "text-anchor=\"middle\" fill=\"#555\"",
                    "⋯",
                );
                x0 += GUTTER;
            }
        }
        placed.push((line, ri, y, x0));
        let base = line << 7;
        let (lo, hi) = (base, base + 128);
        if ri > 0 {
            let ls = m.lanes_in(lo, hi);
            if ls != 0 {
                f.text(x0 + 2.0, y - 4.0, 10.0, "fill=\"#333\"", &lanes_phrase(ls));
            }
        }
        // The line, white; fetched bytes hatched; the lanes' bytes over them.
        f.rect(x0, y, lw, ch, "fill=\"#ffffff\" stroke=\"none\"");
        for r in m.requests {
            for t in &r.transactions {
                let a = t.addr.max(lo);
                let b = t.addr.saturating_add(t.bytes).min(hi);
                if a < b {
                    f.rect(
                        x0 + (a - lo) as f64 * ppb,
                        y,
                        (b - a) as f64 * ppb,
                        ch,
                        &format!("fill=\"url(#waste-{id})\" stroke=\"none\""),
                    );
                }
            }
        }
        for (l, start) in m.ranges() {
            let a = start.max(lo);
            let b = start.saturating_add(m.width).min(hi);
            if a >= b {
                continue;
            }
            let (fill, stroke) = color(m.request_at(l, a).unwrap_or(0));
            let x = x0 + (a - lo) as f64 * ppb;
            let w = (b - a) as f64 * ppb;
            f.rect_t(
                x,
                y,
                w,
                ch,
                &format!("fill=\"{fill}\" stroke=\"{stroke}\" stroke-width=\"0.8\""),
                &format!(
                    "lane {l}: bytes {}–{}",
                    hex(start),
                    hex(start.saturating_add(m.width - 1))
                ),
            );
            let digits = if l >= 10 { 2.0 } else { 1.0 };
            let size = if w >= 20.0 {
                11.0
            } else if w >= 14.0 {
                9.0
            } else {
                8.0
            };
            if w >= digits * size * 0.6 + 1.0 {
                f.text(
                    x + w / 2.0,
                    y + ch / 2.0 + size * 0.35,
                    size,
                    "text-anchor=\"middle\" fill=\"#111\"",
                    &l.to_string(),
                );
            }
        }
        // Sector boundaries with their offsets under the line, the line's address at its
        // start, then the line's outline.
        f.text(
            x0,
            y + ch + 12.0,
            10.0,
            "fill=\"#222\" font-weight=\"bold\"",
            &hex(base),
        );
        for s in 1..4 {
            let x = x0 + 32.0 * s as f64 * ppb;
            f.line(
                x,
                y,
                x,
                y + ch + 4.0,
                "stroke=\"#444\" stroke-width=\"1.2\"",
            );
            f.text(
                x + 2.0,
                y + ch + 12.0,
                10.0,
                "fill=\"#777\"",
                &format!("+{}", 32 * s),
            );
        }
        f.rect(
            x0,
            y,
            lw,
            ch,
            "fill=\"none\" stroke=\"#111\" stroke-width=\"2\"",
        );
    }
    f.text(
        LM - 10.0,
        y + 16.0,
        11.0,
        "text-anchor=\"end\" fill=\"#333\"",
        "memory",
    );
    let mut yb = y + ch + 18.0;
    // Per request, a band with its transactions in these lines.
    for (r, req) in m.requests.iter().enumerate() {
        let mut any = false;
        for &(line, pri, _, x0) in placed.iter() {
            if pri != ri {
                continue;
            }
            let tx = m.transactions_in(r, line);
            if tx.is_empty() {
                continue;
            }
            if !any {
                f.open("request", &format!(" data-request=\"{r}\""));
                any = true;
            }
            let (fill, stroke) = color(r);
            for (addr, bytes, count, tl) in tx {
                let x = x0 + (addr & 127) as f64 * ppb;
                let w = bytes.min(128) as f64 * ppb;
                let label = tx_label(bytes, count);
                f.rect_t(
                    x + 1.5,
                    yb,
                    w - 3.0,
                    18.0,
                    &format!(
                        "class=\"tx\" fill=\"{fill}\" fill-opacity=\"0.45\" stroke=\"{stroke}\" stroke-width=\"2\" rx=\"3\""
                    ),
                    &format!(
                        "{}: {} at {} for {}",
                        group_label(req.group),
                        label,
                        hex(addr),
                        lanes_phrase(tl)
                    ),
                );
                let size = if w >= 60.0 { 11.0 } else { 9.0 };
                let shown = if (label.chars().count() as f64) * size * 0.6 + 4.0 <= w {
                    label
                } else {
                    format!("{bytes}")
                };
                f.text(
                    x + w / 2.0,
                    yb + 13.0,
                    size,
                    &format!("class=\"tx-label\" text-anchor=\"middle\" font-weight=\"bold\" fill=\"{stroke}\""),
                    &shown,
                );
            }
        }
        if any {
            let stroke = color(r).1;
            f.text(
                LM - 10.0,
                yb + 13.0,
                11.0,
                &format!("text-anchor=\"end\" fill=\"{stroke}\""),
                &group_label(req.group),
            );
            f.close();
            yb += 22.0;
        }
    }
    f.close();
    f.h = yb + 6.0;
}

fn shared(f: &mut Fig, e: &Explanation, banks: u32, bank_bytes: u32, phases: &[Phase]) {
    let id = f.id.clone();
    let nb = banks.clamp(1, 64) as usize;
    let bw = CW / nb as f64;
    // Colour lanes by the pass that serves them: conflicts stand out.
    let pass_of = |l: usize| -> Option<u32> {
        phases
            .iter()
            .flat_map(|p| &p.slots)
            .filter(|s| s.lane as usize == l)
            .map(|s| s.pass)
            .max()
    };
    let lanes_y = f.h + 6.0;
    let pal = |p: Option<u32>| match p {
        Some(0) => Some(0usize),
        Some(_) => Some(4usize),
        None => None,
    };
    lane_row(f, e, lanes_y, &|l| pal(pass_of(l)));
    let top = lanes_y + 22.0;
    let hy = top + ARROWS;
    // Lines from lanes to their bank.
    f.open("lane-lines", "");
    for l in lanes(e.mask) {
        let Some(s) = phases
            .iter()
            .flat_map(|p| &p.slots)
            .find(|s| s.lane as usize == l)
        else {
            continue;
        };
        let xb = LM + bw * ((s.bank as usize % nb) as f64 + 0.5);
        let xl = LM + LANE * (l as f64 + 0.5);
        let stroke = if pass_of(l).unwrap_or(0) > 0 {
            CONFLICT.1
        } else {
            color(0).1
        };
        f.line(
            xl,
            top,
            xb,
            hy - 1.0,
            &format!(
                "stroke=\"{stroke}\" stroke-width=\"1\" stroke-opacity=\"0.7\" marker-end=\"url(#arrow-{id})\""
            ),
        );
    }
    f.close();
    // Bank header.
    f.text(
        LM - 10.0,
        hy + 15.0,
        11.0,
        "text-anchor=\"end\" fill=\"#333\"",
        &format!("bank ({bank_bytes} B)"),
    );
    for b in 0..nb {
        let x = LM + bw * b as f64;
        f.rect(
            x + 1.0,
            hy,
            bw - 2.0,
            22.0,
            "fill=\"#e9e9e9\" stroke=\"#999\"",
        );
        f.text(
            x + bw / 2.0,
            hy + 15.0,
            11.0,
            "text-anchor=\"middle\" fill=\"#222\" font-weight=\"bold\"",
            &b.to_string(),
        );
    }
    let mut y = hy + 30.0;
    // Which kinds of cell appear (conflict, multicast, paired words), for the legend.
    let mut used = (false, false, false);
    if phases.is_empty() {
        f.text(LM, y + 14.0, 12.0, "", "no active lane");
        y += 22.0;
    }
    for (pi, p) in phases.iter().enumerate() {
        let passes = p
            .slots
            .iter()
            .map(|s| s.pass as usize + 1)
            .max()
            .unwrap_or(0);
        f.open("phase", &format!(" data-phase=\"{pi}\""));
        f.text(
            LM,
            y + 14.0,
            12.0,
            "font-weight=\"bold\" fill=\"#222\"",
            &format!(
                "phase {pi}: {} ({}), {}{}",
                group_label(p.group),
                lanes_phrase(p.lanes),
                plural(p.wavefronts, "wavefront", "wavefronts"),
                if passes as u64 != p.wavefronts {
                    format!(" ({passes} drawn)")
                } else {
                    String::new()
                }
            ),
        );
        y += 20.0;
        let shown = if passes > MAX_PASSES {
            MAX_PASSES - 1
        } else {
            passes
        };
        for pass in 0..shown {
            f.text(
                LM - 10.0,
                y + 14.0,
                11.0,
                &format!(
                    "text-anchor=\"end\" fill=\"{}\"",
                    if pass > 0 { CONFLICT.1 } else { "#333" }
                ),
                &format!("wavefront {pass}"),
            );
            for b in 0..nb {
                let x = LM + bw * b as f64;
                let (ls, words) = bank_cell(p, pass, b, nb);
                if ls == 0 {
                    f.rect(
                        x + 1.0,
                        y,
                        bw - 2.0,
                        20.0,
                        "fill=\"#fafafa\" stroke=\"#dddddd\"",
                    );
                    continue;
                }
                // One word for several lanes: multicast. Several words in one pass of one
                // bank: the 3.x 64-bit delivery of words i and i+32.
                let paired = words.len() > 1;
                let (fill, stroke) = if paired {
                    used.2 = true;
                    PAIRED
                } else if ls.count_ones() > 1 {
                    used.1 = true;
                    MULTICAST
                } else if pass > 0 {
                    used.0 = true;
                    CONFLICT
                } else {
                    color(0)
                };
                if ls.count_ones() > 1 && pass > 0 {
                    used.0 = true;
                }
                let words_s: Vec<String> = words.iter().map(|w| num(*w)).collect();
                f.rect_t(
                    x + 1.0,
                    y,
                    bw - 2.0,
                    20.0,
                    &format!("class=\"slot\" fill=\"{fill}\" stroke=\"{stroke}\""),
                    &format!(
                        "bank {b}, wavefront {pass}: {} on word{} {}",
                        lanes_phrase(ls),
                        if words.len() == 1 { "" } else { "s" },
                        words_s.join(", ")
                    ),
                );
                if paired {
                    // The first lane of each of the first two words, one above the other.
                    let first_on = |w: u64| {
                        p.slots
                            .iter()
                            .filter(|s| {
                                s.pass as usize == pass && s.bank as usize % nb == b && s.word == w
                            })
                            .map(|s| s.lane)
                            .min()
                            .unwrap_or(0)
                    };
                    let more = if ls.count_ones() > 2 || words.len() > 2 {
                        "+"
                    } else {
                        ""
                    };
                    for (k, w) in words.iter().take(2).enumerate() {
                        f.text(
                            x + bw / 2.0,
                            y + 9.0 + 9.0 * k as f64,
                            9.0,
                            "text-anchor=\"middle\" fill=\"#111\"",
                            &format!("{}{}", first_on(*w), if k == 1 { more } else { "" }),
                        );
                    }
                } else {
                    let label = if ls.count_ones() > 1 {
                        format!("{}+", ls.trailing_zeros())
                    } else {
                        ls.trailing_zeros().to_string()
                    };
                    f.text(
                        x + bw / 2.0,
                        y + 14.0,
                        11.0,
                        "text-anchor=\"middle\" fill=\"#111\"",
                        &label,
                    );
                }
            }
            y += 22.0;
        }
        if shown < passes {
            let rest = p.slots.iter().filter(|s| s.pass as usize >= shown);
            let ls = rest.clone().fold(0u32, |m, s| {
                m | 1u32.checked_shl(u32::from(s.lane)).unwrap_or(0)
            });
            let mut bs: Vec<u8> = rest.map(|s| s.bank).collect();
            bs.sort_unstable();
            bs.dedup();
            let bs: Vec<String> = bs.iter().map(|b| b.to_string()).collect();
            f.text(
                LM,
                y + 14.0,
                12.0,
                &format!("fill=\"{}\"", CONFLICT.1),
                &format!(
                    "⋮  {} more {}: {} on bank{} {}",
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
            );
            y += 22.0;
        }
        f.close();
        y += 6.0;
    }
    f.h = y;
    let (bf, bs) = color(0);
    let mut items: Vec<(String, &str)> = vec![(
        format!("fill=\"{bf}\" stroke=\"{bs}\""),
        "lane served in the first wavefront",
    )];
    if used.0 {
        items.push((
            format!("fill=\"{}\" stroke=\"{}\"", CONFLICT.0, CONFLICT.1),
            "later wavefront: bank conflict",
        ));
    }
    if used.1 {
        items.push((
            format!("fill=\"{}\" stroke=\"{}\"", MULTICAST.0, MULTICAST.1),
            "n+: several lanes on one word",
        ));
    }
    if used.2 {
        items.push((
            format!("fill=\"{}\" stroke=\"{}\"", PAIRED.0, PAIRED.1),
            "two words in one 64-bit bank access",
        ));
    }
    let items: Vec<(&str, &str)> = items.iter().map(|(a, b)| (a.as_str(), *b)).collect();
    legend(f, &items);
}

fn constant(f: &mut Fig, e: &Explanation, groups: &[ConstantGroup]) {
    let id = f.id.clone();
    // Boxes: one per (group, distinct address), in order.
    let boxes: Vec<(usize, &ConstantRead)> = groups
        .iter()
        .enumerate()
        .flat_map(|(g, x)| x.reads.iter().map(move |r| (g, r)))
        .collect();
    let box_of = |l: usize| boxes.iter().position(|(_, r)| r.lanes & (1 << l) != 0);
    let lanes_y = f.h + 6.0;
    lane_row(f, e, lanes_y, &|l| box_of(l));
    let top = lanes_y + 22.0;
    let by = top + ARROWS + 16.0;
    let n = boxes.len().max(1);
    let gap = 8.0;
    let bw = ((CW - gap * (n as f64 - 1.0)) / n as f64).min(150.0);
    let bh = 40.0;
    f.open("lane-lines", "");
    for l in lanes(e.mask) {
        let Some(b) = box_of(l) else { continue };
        let xb = LM + b as f64 * (bw + gap) + bw / 2.0;
        let xl = LM + LANE * (l as f64 + 0.5);
        f.line(
            xl,
            top,
            xb,
            by - 1.0,
            &format!(
                "stroke=\"{}\" stroke-width=\"1\" stroke-opacity=\"0.7\" marker-end=\"url(#arrow-{id})\"",
                color(b).1
            ),
        );
    }
    f.close();
    f.text(
        LM - 10.0,
        by + 24.0,
        11.0,
        "text-anchor=\"end\" fill=\"#333\"",
        "addresses",
    );
    let mut prev_group = usize::MAX;
    for (i, (g, r)) in boxes.iter().enumerate() {
        let x = LM + i as f64 * (bw + gap);
        let (fill, stroke) = color(i);
        if *g != prev_group && groups.len() > 1 {
            f.text(
                x,
                by + bh + 13.0,
                10.0,
                "fill=\"#333\"",
                &group_label(groups[*g].group),
            );
        }
        prev_group = *g;
        f.open("request", &format!(" data-request=\"{i}\""));
        f.rect_t(
            x,
            by,
            bw,
            bh,
            &format!(
                "class=\"read\" fill=\"{fill}\" stroke=\"{stroke}\" stroke-width=\"2\" rx=\"3\""
            ),
            &format!("request {i}: {} for {}", hex(r.addr), lanes_phrase(r.lanes)),
        );
        let addr = hex(r.addr);
        let a_fits = addr.len() as f64 * 6.6 + 6.0 <= bw;
        f.text(
            x + bw / 2.0,
            by + 16.0,
            11.0,
            "text-anchor=\"middle\" fill=\"#111\" font-weight=\"bold\"",
            &if a_fits { addr } else { format!("#{i}") },
        );
        let lab = format!("req {i}");
        if lab.len() as f64 * 6.0 + 4.0 <= bw {
            f.text(
                x + bw / 2.0,
                by + 32.0,
                10.0,
                &format!("text-anchor=\"middle\" fill=\"{stroke}\""),
                &lab,
            );
        }
        f.close();
    }
    let mut y = by + bh + if groups.len() > 1 { 20.0 } else { 8.0 };
    // The addresses in words when the boxes are too narrow to hold them.
    if boxes
        .iter()
        .any(|(_, r)| hex(r.addr).len() as f64 * 6.6 + 6.0 > bw)
    {
        for (i, (_, r)) in boxes.iter().enumerate().take(16) {
            f.text(
                LM,
                y + 13.0,
                11.0,
                "fill=\"#333\"",
                &format!("#{i}: {} ({})", hex(r.addr), lanes_phrase(r.lanes)),
            );
            y += 15.0;
        }
        if boxes.len() > 16 {
            f.text(
                LM,
                y + 13.0,
                11.0,
                "fill=\"#777\"",
                &format!("… {} more", boxes.len() - 16),
            );
            y += 15.0;
        }
    }
    f.h = y;
    let (cf, cs) = color(0);
    legend(
        f,
        &[(
            &format!("fill=\"{cf}\" stroke=\"{cs}\" stroke-width=\"2\""),
            "one distinct address = one request, served one after another",
        )],
    );
}
