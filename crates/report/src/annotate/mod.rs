//! `warpscope annotate`: the kernel's source with each access's figures in the margin, like
//! Nsight Compute's Source page, and each line's PTX and SASS instructions, like Compiler
//! Explorer. [`Annotation`] is built by the pipeline (the `warpscope` crate's `annotate`);
//! this module renders it as terminal text ([`render_text`]) or one self-contained HTML page
//! ([`render_html`]).
//!
//! Each source line with accesses gets one margin row per access of the line (the
//! [`crate::rows`] grouping: an unrolled loop's copies of one load are one row, `×N`), with,
//! per compute capability, the columns of [`COLUMNS`]: requests, sectors or wavefronts,
//! excess over the ideal and efficiency.

use serde::Serialize;
use warpscope_model::{Op, Space};

use crate::explain::Explanation;
use crate::{Analysis, Counters, SiteReport};

mod html;
mod text;

pub use html::render_html;
pub use text::render_text;

/// A kernel's analysis with what `annotate` shows beside it.
#[derive(Clone, Debug, Serialize)]
pub struct Annotation {
    /// The analysis (per instruction, as `analyze --format json` has it).
    pub analysis: Analysis,
    /// The source files the sites are in: the analyzed file first (when it has sites or is
    /// CUDA source), then the headers or `.cu`/`.py` files its sites name.
    pub files: Vec<SourceText>,
    /// The compiled path's memory instructions, each with its PTX and SASS; empty for the
    /// source front end.
    pub instructions: Vec<Instruction>,
    /// Whether the SASS was checked (ptxas and nvdisasm ran): the instructions carry theirs.
    pub sass_checked: bool,
    /// The costliest warp of rows of the analysis explained, by row number (`--site N`): one
    /// per access of the source (the costliest of an unrolled loop's copies). Empty unless
    /// asked for (the HTML page shows them).
    pub explanations: Vec<(usize, Explanation)>,
}

/// One source file as shown.
#[derive(Clone, Debug, Serialize)]
pub struct SourceText {
    /// The file as the sites name it: `None` for the analyzed file, else its shown path
    /// ([`SiteReport::file`]).
    pub file: Option<String>,
    /// The path to show in headings.
    pub shown: String,
    /// Its lines, without line ends; `None` when it could not be read.
    pub lines: Option<Vec<String>>,
    /// The kernel's definition in this file, first and last line (1-based), when found:
    /// shown whole, accesses or not.
    pub kernel_lines: Option<(u32, u32)>,
}

/// One memory instruction of the compiled path: where the source has it, its PTX and the
/// SASS ptxas made of it.
#[derive(Clone, Debug, Serialize)]
pub struct Instruction {
    /// The source file as the sites name it (`None`: the analyzed file).
    pub file: Option<String>,
    /// 1-based source line (0: none), as its site has it.
    pub line: u32,
    /// 1-based source column (bytes), as its site has it.
    pub column: u32,
    /// The access's source text (as its site has it).
    pub access: String,
    /// Load, store or atomic.
    pub op: Op,
    /// 1-based line of the instruction in the PTX.
    pub ptx_line: u32,
    /// The PTX instruction with its operands, as written (`ld.shared.f32 %f2, [%r7];`).
    pub ptx: String,
    /// What ptxas did with it, in words, when not assembled as written ("merged into a wider
    /// instruction: no access of its own"); `None` otherwise or without the SASS check.
    pub fate: Option<String>,
    /// The SASS instructions tied to its PTX line (`LDS.128 R8, [R3]`); empty without the
    /// SASS check.
    pub sass: Vec<String>,
}

/// How to render an [`Annotation`].
#[derive(Clone, Debug, Default)]
pub struct AnnotateOptions {
    /// Under each access, its PTX instructions with their own figures.
    pub show_ptx: bool,
    /// Under each PTX instruction (or access, without `show_ptx`), the SASS instructions
    /// ptxas made of it.
    pub show_sass: bool,
    /// ANSI colours (text) — efficiency green/yellow/red, excess red.
    pub color: bool,
    /// Show only these source lines of the analyzed file (first, last; 1-based, both
    /// included), every one of them, instead of the kernel's definition and the lines with
    /// accesses.
    pub lines: Option<(u32, u32)>,
}

/// One margin column of a compute capability: its heading and its cell for a row's counters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Column {
    /// Requests.
    Requests,
    /// 32-byte sectors (global, local, texture, surface) or wavefronts (shared, `wf`).
    Work,
    /// Sectors or wavefronts above the ideal ([`Counters::excess_in`]).
    Excess,
    /// Efficiency, percent ([`Counters::efficiency_in`]; capped at 100 % and marked `*` for a broadcast).
    Efficiency,
}

/// The margin's columns per compute capability, in order.
pub const COLUMNS: [Column; 4] = [
    Column::Requests,
    Column::Work,
    Column::Excess,
    Column::Efficiency,
];

impl Column {
    /// Its heading.
    pub fn heading(self) -> &'static str {
        match self {
            Column::Requests => "req",
            Column::Work => "sectors/wf",
            Column::Excess => "excess",
            Column::Efficiency => "eff",
        }
    }

    /// Its cell for counters `c` of a row of `space` ("-" where it does not apply).
    pub fn cell(self, c: &Counters, space: Space) -> String {
        use crate::table::num;
        match self {
            Column::Requests => num(c.requests),
            Column::Work => match space {
                Space::Shared | Space::DistributedShared => format!("{} wf", num(c.wavefronts)),
                Space::Constant => "-".into(),
                _ => num(c.sectors),
            },
            Column::Excess => c.excess_in(space).map_or("-".into(), num),
            Column::Efficiency => crate::table::eff_text(c.efficiency_in(space)),
        }
    }
}

/// How bad a row is, for its colour: 0 fine (efficiency at least 99.9 % and no excess), 1
/// middling (at least 50 %), 2 bad.
pub(crate) fn severity(c: &Counters, space: Space) -> u8 {
    let e = c.efficiency_in(space);
    let x = c.excess_in(space).unwrap_or(0);
    match e {
        Some(e) if e < 0.5 => 2,
        Some(e) if e < 0.999 || x > 0 => 1,
        _ if x > 0 => 1,
        _ => 0,
    }
}

/// One access of a source line as the margin shows it: its sites summed.
pub(crate) struct LineRow {
    /// The analysis's sites it sums (row numbers).
    pub(crate) sites: Vec<usize>,
    /// Per compute capability, the summed site.
    pub(crate) per_arch: Vec<SiteReport>,
}

/// The PTX lines of row `r`'s instructions in PTX order, each with its site (row number), and
/// those of the same access that ptxas merged or removed (no site). A site without a PTX
/// line is kept at line 0 when `keep_unlined`, else left out.
pub(crate) fn row_instructions(
    a: &Annotation,
    r: &LineRow,
    keep_unlined: bool,
) -> Vec<(u32, Option<usize>)> {
    let s0 = &r.per_arch[0];
    let mut lines: Vec<(u32, Option<usize>)> = r
        .sites
        .iter()
        .filter_map(|&i| {
            let l = a.analysis.architectures[0].sites[i].ptx_line;
            l.or(keep_unlined.then_some(0)).map(|l| (l, Some(i)))
        })
        .collect();
    for ins in &a.instructions {
        if ins.fate.is_some()
            && ins.file == s0.file
            && ins.line == s0.line
            && ins.column == s0.column
            && ins.access == s0.text
            && ins.op == s0.op
            && !lines.iter().any(|(l, _)| *l == ins.ptx_line)
        {
            lines.push((ins.ptx_line, None));
        }
    }
    lines.sort_unstable();
    lines
}

/// The rows of the accesses of each (file, line), in the analysis's order: the
/// [`crate::rows::By::Line`] grouping.
pub(crate) fn line_rows(a: &Analysis) -> Vec<((Option<String>, u32), Vec<LineRow>)> {
    let rows = crate::rows::rows(a, &crate::rows::RowView::default());
    let mut out: Vec<((Option<String>, u32), Vec<LineRow>)> = Vec::new();
    for r in rows {
        let per_arch: Vec<SiteReport> = (0..a.architectures.len())
            .map(|k| {
                let mut s = crate::rows::summed(a, k, &r);
                // The text is shown apart, with the count.
                s.text = a.architectures[k].sites[r.sites[0]].text.clone();
                s
            })
            .collect();
        let key = (per_arch[0].file.clone(), per_arch[0].line);
        let row = LineRow {
            sites: r.sites,
            per_arch,
        };
        match out.iter_mut().find(|(k, _)| *k == key) {
            Some((_, v)) => v.push(row),
            None => out.push((key, vec![row])),
        }
    }
    out
}

/// The source lines to show of file `f` (1-based, ascending): the kernel's definition and
/// each line with accesses with two lines around it; with `o.lines`, those lines of the
/// first file (`first`) and none of the others.
pub(crate) fn shown_lines(
    f: &SourceText,
    access_lines: &[u32],
    o: &AnnotateOptions,
    first: bool,
) -> Vec<u32> {
    let n = f.lines.as_ref().map_or(0, |l| l.len() as u32);
    if let Some((a, b)) = o.lines {
        return if first {
            (a..=b.min(n)).collect()
        } else {
            Vec::new()
        };
    }
    let mut v: Vec<u32> = Vec::new();
    if let Some((a, b)) = f.kernel_lines {
        v.extend(a..=b.min(n.max(a)));
    }
    for &l in access_lines {
        let lo = l.saturating_sub(2).max(1);
        v.extend(lo..=l + 2);
    }
    v.retain(|&l| l >= 1 && (l <= n || access_lines.contains(&l)));
    v.sort_unstable();
    v.dedup();
    v
}

/// The SASS instructions of `sass` in first-seen order, copies of one instruction (the same
/// opcode and memory operand, whatever the registers: ptxas copies code when it unrolls or
/// splits a loop) once, with their count: `TEXT` or `TEXT  ×N` (the first copy's text).
pub(crate) fn sass_lines(sass: &[String]) -> Vec<String> {
    let key = |s: &str| -> String {
        let opcode = s
            .split_whitespace()
            .find(|w| !w.starts_with('@'))
            .unwrap_or("");
        let mem = s
            .find('[')
            .map(|i| &s[i..s[i..].find(']').map_or(s.len(), |j| i + j + 1)])
            .unwrap_or("");
        format!("{opcode} {mem}")
    };
    let mut out: Vec<(&str, String, usize)> = Vec::new();
    for s in sass {
        let k = key(s);
        match out.iter_mut().find(|(_, x, _)| *x == k) {
            Some((_, _, n)) => *n += 1,
            None => out.push((s, k, 1)),
        }
    }
    out.into_iter()
        .map(|(t, _, n)| {
            if n > 1 {
                format!("{t}  ×{n}")
            } else {
                t.to_string()
            }
        })
        .collect()
}

/// `op space, B B` of a row, e.g. `load global, 4 B`.
pub(crate) fn kind(s: &SiteReport) -> String {
    let space = match s.space {
        Space::Global if s.read_only => "global (ro)".to_string(),
        Space::DistributedShared => "dsmem".to_string(),
        other => format!("{other:?}").to_lowercase(),
    };
    format!(
        "{} {space}, {} B",
        format!("{:?}", s.op).to_lowercase(),
        s.width
    )
}
