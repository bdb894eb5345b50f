//! The report's form of what the run's checks found (`warpscope_simt::Findings`): one
//! [`Finding`] per site, located on the source line (the PTX line when no `.loc` names one),
//! with a message that says what happened, where, and what to do.

use warpscope_report::{Finding, Lanes, OtherAccess, SiteInfo};
use warpscope_simt::{AccessKind, At, Findings, Hazard, InitFinding, RaceFinding, SyncFinding};

use crate::AnalyzeRequest;

/// The report's sites and the executor's: `sites` as [`crate::load::Loaded::sites`] gives
/// them, `map` per executor site its report site.
struct Sites<'a> {
    req: &'a AnalyzeRequest,
    sites: &'a [SiteInfo],
    map: &'a [Option<usize>],
}

impl Sites<'_> {
    /// (file, line, column) of executor site `s`, as the report names its site; `None` for
    /// data movement that is no access of the source.
    fn place(&self, s: u32) -> Option<(String, u32, u32)> {
        let i = (*self.map.get(s as usize)?)?;
        let site = self.sites.get(i)?;
        let file = site.file.clone().unwrap_or_else(|| self.req.file.clone());
        Some((file, site.line, site.column))
    }
}

/// Per executor site, its line as the report names it, for
/// [`warpscope_simt::Findings::group_sites`]: (file number, line); sites that are no access
/// of the source each their own.
pub(crate) fn lines(
    req: &AnalyzeRequest,
    sites: &[SiteInfo],
    map: &[Option<usize>],
) -> Vec<(u32, u32)> {
    let mut files: Vec<&str> = Vec::new();
    map.iter()
        .enumerate()
        .map(|(k, m)| match m.and_then(|i| sites.get(i)) {
            Some(s) => {
                let f = s.file.as_deref().unwrap_or(&req.file);
                let n = files.iter().position(|x| *x == f).unwrap_or_else(|| {
                    files.push(f);
                    files.len() - 1
                });
                (n as u32, s.line)
            }
            None => (u32::MAX, k as u32),
        })
        .collect()
}

/// The findings of a run (synccheck, then racecheck, then initcheck) and the checks' notes
/// (what they could not check). `sites` and `map` as for [`lines`].
pub(crate) fn report(
    req: &AnalyzeRequest,
    f: &Findings,
    sites: &[SiteInfo],
    map: &[Option<usize>],
) -> (Vec<Finding>, Vec<String>) {
    let s = Sites { req, sites, map };
    let mut out: Vec<Finding> = f.sync().into_iter().map(|x| sync(req, x)).collect();
    out.extend(f.races().into_iter().filter_map(|x| race(&s, x)));
    out.extend(f.uninitialized().into_iter().filter_map(|x| init(&s, x)));
    (out, f.notes())
}

/// (file, line, column) of an instruction: its `.loc`, or the PTX's own position.
fn place(req: &AnalyzeRequest, at: &At) -> (String, u32, u32) {
    match (&at.source, at.loc) {
        // `source` is `file:line:col`.
        (Some(s), Some((_, l, c))) => {
            let file = s.rsplitn(3, ':').nth(2).unwrap_or(s).to_string();
            (file, l, c)
        }
        _ => (req.file.clone(), at.ptx_line, at.ptx_col),
    }
}

/// A finding at `(file, line, column)` (PTX line `ptx_line`) with the fields every check
/// gives; the check-specific ones empty.
fn base(
    req: &AnalyzeRequest,
    kind: &str,
    (file, line, column): (String, u32, u32),
    ptx_line: u32,
    block: [u32; 3],
    warp: u32,
) -> Finding {
    Finding {
        kind: kind.into(),
        kernel: req.kernel.clone(),
        file,
        line,
        column,
        ptx_line,
        block,
        warp,
        lanes_arrived: None,
        lanes_missing: None,
        lanes: None,
        hazard: None,
        access: None,
        other: None,
        shared_offset: None,
        warps: 0,
        blocks: 0,
        message: String::new(),
    }
}

/// A synccheck finding: the barrier's position and a message naming the lanes.
fn sync(req: &AnalyzeRequest, f: SyncFinding) -> Finding {
    let message = format!(
        "barrier reached by only part of a warp (divergent __syncthreads()/bar.sync): in block ({}, {}, {}) warp {} lanes {} arrived and lanes {} did not ({} warp(s) in {} block(s)); every non-exited thread of the block must reach it, or the behaviour is undefined (compute-sanitizer synccheck: \"Divergent thread(s) in warp\"): make the condition around it uniform across the block, or move the barrier out of it",
        f.block[0], f.block[1], f.block[2], f.warp, lane_ranges(f.arrived), lane_ranges(f.missing), f.warps, f.blocks
    );
    Finding {
        lanes_arrived: Some(Lanes(f.arrived)),
        lanes_missing: Some(Lanes(f.missing)),
        warps: f.warps,
        blocks: f.blocks,
        message,
        ..base(
            req,
            "synccheck",
            place(req, &f.at),
            f.at.ptx_line,
            f.block,
            f.warp,
        )
    }
}

/// A racecheck finding, on the later access of the two, naming both; `None` when either is
/// no access of the source.
fn race(s: &Sites, f: RaceFinding) -> Option<Finding> {
    let at = s.place(f.site)?;
    let (file, line) = (at.0.clone(), at.1);
    let (ofile, oline, ocol) = s.place(f.other_site)?;
    // "line 12", or "other.cu:12" when the other access is in another file.
    let at_line = |fl: &str, l: u32| {
        if fl == file {
            format!("line {l}")
        } else {
            format!("{fl}:{l}")
        }
    };
    let (here, there) = (at_line(&file, line), at_line(&ofile, oline));
    let (a, b) = (f.access.name(), f.other_access.name());
    // "reads", "writes", "updates atomically".
    let verb = |k: AccessKind| match k {
        AccessKind::Read => "reads",
        AccessKind::Write => "writes",
        AccessKind::Atomic => "updates atomically",
    };
    let what = match f.hazard {
        Hazard::Raw => format!(
            "warp {} {} at {here} shared memory that warp {} {} at {there}: the read may run before the write and see the old value",
            f.warp, verb(f.access), f.other_warp, verb(f.other_access)
        ),
        Hazard::War => format!(
            "warp {} {} at {here} shared memory that warp {} {} at {there}: the write may land before the read, which then sees the new value",
            f.warp, verb(f.access), f.other_warp, verb(f.other_access)
        ),
        Hazard::Waw => format!(
            "warps {} and {} both write the same shared memory, at {there} and at {here}: which value stays depends on which warp runs first",
            f.other_warp, f.warp
        ),
    };
    let (first, second) = match f.hazard {
        Hazard::Raw => ("write", "read"),
        Hazard::War => ("read", "write"),
        Hazard::Waw => ("first write", "second"),
    };
    let message = format!(
        "shared-memory race ({}: {}): {what}, with no __syncthreads() between them (block ({}, {}, {}), shared byte {}; {} warp access(es) in {} block(s)). Put a __syncthreads() after the {first} at {there} and before the {second} at {here} (in a loop, one at the end of each trip), or give each warp its own bytes (compute-sanitizer racecheck: \"Race reported between {} access … and {} access …\")",
        f.hazard.name(),
        match f.hazard {
            Hazard::Raw => "read after write",
            Hazard::War => "write after read",
            Hazard::Waw => "write after write",
        },
        f.block[0],
        f.block[1],
        f.block[2],
        f.offset,
        f.warps,
        f.blocks,
        capital(b),
        capital(a),
    );
    Some(Finding {
        hazard: Some(f.hazard.name().into()),
        access: Some(a.into()),
        other: Some(OtherAccess {
            file: ofile,
            line: oline,
            column: ocol,
            ptx_line: f.other_ptx_line,
            warp: f.other_warp,
            access: b.into(),
        }),
        shared_offset: Some(f.offset),
        warps: f.warps,
        blocks: f.blocks,
        message,
        ..base(s.req, "racecheck", at, f.ptx_line, f.block, f.warp)
    })
}

/// An initcheck finding: the read, the lanes and the first unwritten byte; `None` when the
/// read is no access of the source.
fn init(s: &Sites, f: InitFinding) -> Option<Finding> {
    let at = s.place(f.site)?;
    let message = format!(
        "read of uninitialized shared memory: in block ({}, {}, {}) warp {} lanes {} {} shared byte {} (offset in the block's shared memory), which no thread of the block had written ({} warp access(es) in {} block(s)). Shared memory holds no defined value when a block starts: write every element the block reads before the __syncthreads() that precedes the read (check the loop or condition that fills it; a counter must be set before the first atomic)",
        f.block[0],
        f.block[1],
        f.block[2],
        f.warp,
        lane_ranges(f.lanes),
        match f.access {
            AccessKind::Atomic => "update atomically",
            _ => "read",
        },
        f.offset,
        f.warps,
        f.blocks,
    );
    Some(Finding {
        lanes: Some(Lanes(f.lanes)),
        access: Some(f.access.name().into()),
        shared_offset: Some(f.offset),
        warps: f.warps,
        blocks: f.blocks,
        message,
        ..base(s.req, "initcheck", at, f.ptx_line, f.block, f.warp)
    })
}

/// `Read`, `Write`, `Atomic`: compute-sanitizer's word for an access.
fn capital(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_uppercase().chain(c).collect())
        .unwrap_or_default()
}

/// The set bits of a lane mask as ranges: `0-15`, `0,2,4-7`.
fn lane_ranges(mask: u32) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < 32 {
        if mask >> i & 1 == 1 {
            let start = i;
            while i + 1 < 32 && mask >> (i + 1) & 1 == 1 {
                i += 1;
            }
            out.push(if start == i {
                format!("{i}")
            } else {
                format!("{start}-{i}")
            });
        }
        i += 1;
    }
    out.join(",")
}

#[cfg(test)]
mod tests {
    #[test]
    fn lane_ranges_name_runs_of_lanes() {
        assert_eq!(super::lane_ranges(0x0000_ffff), "0-15");
        assert_eq!(super::lane_ranges(0b1111_0101), "0,2,4-7");
        assert_eq!(super::lane_ranges(u32::MAX), "0-31");
    }

    #[test]
    fn access_words_are_capitalized_as_compute_sanitizer_writes_them() {
        assert_eq!(super::capital("write"), "Write");
        assert_eq!(super::capital("atomic"), "Atomic");
    }
}
