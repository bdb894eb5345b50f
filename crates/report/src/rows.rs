//! The rows people read: an [`Analysis`] has one site per instruction (the JSON keeps
//! them), but an unrolled loop's 16 copies of one load are one access of the source. A
//! [`RowView`] groups the sites by source access ([`By::Line`]) or keeps them
//! ([`By::Instruction`]), sorts the rows ([`SortBy`]) and keeps the first `top`; the table
//! and `annotate` render such rows, each summing its sites' counters ([`summed`]).

use crate::{Analysis, SiteReport};

/// What one row of the table is.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum By {
    /// One row per access of the source: the sites of one line, column, text, operation,
    /// space, width and PTX instruction (an unrolled loop's copies) summed, shown `×N`.
    #[default]
    Line,
    /// One row per site (per PTX instruction on the compiled path), as the JSON has them.
    Instruction,
}

/// The order of the rows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SortBy {
    /// By source position (file order of lines, then column), as the analysis has them.
    #[default]
    Site,
    /// Most requests first (on the first compute capability).
    Requests,
    /// Most sectors (32-byte, global/local/texture/surface) or wavefronts (shared) first,
    /// on the first compute capability.
    Sectors,
    /// Most excess first ([`Counters::excess_in`], on the first compute capability): sectors or
    /// wavefronts above the ideal.
    Excess,
}

/// How the sites of an analysis become rows: grouping, order and how many are shown.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RowView {
    /// What one row is.
    pub by: By,
    /// Their order.
    pub sort: SortBy,
    /// Show only the first this many rows after sorting (`None`: all).
    pub top: Option<usize>,
}

/// One row: the sites it sums, as indexes into each architecture's `sites` (the analysis's
/// row numbers, `explain --site N`), in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Row {
    /// Site indexes (0-based row numbers of the analysis), ascending.
    pub sites: Vec<usize>,
}

impl Row {
    /// The row's `#`: its site's number; the first and last of consecutive sites (`8–23`);
    /// else up to 4 of them, or the first two and the last (`0,2,4`, `0,2,…,10`).
    pub fn label(&self) -> String {
        let s = &self.sites;
        match s.as_slice() {
            [one] => one.to_string(),
            [first, .., last] if s.windows(2).all(|w| w[1] == w[0] + 1) => {
                format!("{first}–{last}")
            }
            _ if s.len() <= 4 => s.iter().map(usize::to_string).collect::<Vec<_>>().join(","),
            [a, b, .., last] => format!("{a},{b},…,{last}"),
            _ => String::new(),
        }
    }

    /// How many instructions (sites) it sums.
    pub fn count(&self) -> usize {
        self.sites.len()
    }
}

/// The PTX instruction of a site without ptxas's merge count (`ld.shared.f32 ×4` →
/// `ld.shared.f32`).
fn ptx_base(s: &SiteReport) -> Option<&str> {
    s.ptx.as_deref().map(|p| p.split(" ×").next().unwrap_or(p))
}

/// Whether sites `x` and `y` are copies of one access: the same file, line, column, text,
/// operation, space, width, path and PTX instruction.
pub fn same_access(x: &SiteReport, y: &SiteReport) -> bool {
    (
        &x.file,
        x.line,
        x.column,
        &x.text,
        x.op,
        x.space,
        x.width,
        x.read_only,
    ) == (
        &y.file,
        y.line,
        y.column,
        &y.text,
        y.op,
        y.space,
        y.width,
        y.read_only,
    ) && ptx_base(x) == ptx_base(y)
}

/// The rows of `a` under `view`: grouped, sorted (stable: ties keep the source order) and
/// cut to `view.top`.
pub fn rows(a: &Analysis, view: &RowView) -> Vec<Row> {
    let Some(first) = a.architectures.first() else {
        return Vec::new();
    };
    let sites = &first.sites;
    let mut out: Vec<Row> = Vec::new();
    for i in 0..sites.len() {
        let group = match view.by {
            By::Line => out
                .iter_mut()
                .find(|r| same_access(&sites[r.sites[0]], &sites[i])),
            By::Instruction => None,
        };
        match group {
            Some(r) => r.sites.push(i),
            None => out.push(Row { sites: vec![i] }),
        }
    }
    let key = |r: &Row| -> u64 {
        let c = summed(a, 0, r);
        match view.sort {
            SortBy::Site => 0,
            SortBy::Requests => c.counters.requests,
            SortBy::Sectors => c.counters.sectors + c.counters.wavefronts,
            SortBy::Excess => c.counters.excess_in(c.space).unwrap_or(0),
        }
    };
    if view.sort != SortBy::Site {
        out.sort_by_key(|r| std::cmp::Reverse(key(r)));
    }
    if let Some(n) = view.top {
        out.truncate(n);
    }
    out
}

/// The site of `row` on architecture `arch` (an index into `a.architectures`) with the
/// counters of all its sites summed (efficiency recomputed from the summed bytes), and
/// `×N` after the text when it sums N > 1 instructions.
pub fn summed(a: &Analysis, arch: usize, row: &Row) -> SiteReport {
    let sites = &a.architectures[arch].sites;
    let mut s = sites[row.sites[0]].clone();
    for &i in &row.sites[1..] {
        s.counters.add(&sites[i].counters);
    }
    if row.count() > 1 {
        s.text = format!("{} ×{}", s.text, row.count());
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels() {
        assert_eq!(Row { sites: vec![3] }.label(), "3");
        assert_eq!(
            Row {
                sites: vec![8, 9, 10]
            }
            .label(),
            "8–10"
        );
        assert_eq!(Row { sites: vec![2, 5] }.label(), "2,5");
        assert_eq!(
            Row {
                sites: vec![0, 2, 4, 6, 8]
            }
            .label(),
            "0,2,…,8"
        );
    }
}
