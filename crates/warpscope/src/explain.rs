//! The `explain` pipeline: pick one access site and one warp-level execution of it, and lay
//! out what each compute capability's model did with it.

use anyhow::{bail, Result};
use warpscope_advice::{weight, LaneStrides, SiteFacts};
use warpscope_model::arch::{Family, GlobalPath};
use warpscope_model::detail::{breakdown, Breakdown};
use warpscope_model::{cost, Arch, Config, Cost, SmemBankMode, Space, WarpAccess};
use warpscope_report::explain::{paragraph, ExplainedArch, Explanation, TexelGrid};
use warpscope_report::{advise, Analysis, SiteReport};

use crate::load::Prepared;
use crate::{analyze_prepared, prepare, AnalyzeRequest};

/// Which access to explain.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SiteSelector {
    /// The access at this line (and column, 1-based) of the source.
    Line { line: u32, column: Option<u32> },
    /// Row `n` (0-based: the `#` of `analyze`'s table), in its order (by line, column, op).
    Number(usize),
}

/// What to explain: a launch (as for `analyze`), an access and optionally which of its
/// warp-level executions (0-based, in launch order: blocks in x, y, z order, warps within a
/// block in order); `None` picks the costliest, summed over the requested architectures.
#[derive(Clone, Debug)]
pub struct ExplainRequest {
    pub analyze: AnalyzeRequest,
    pub site: SiteSelector,
    pub warp: Option<u64>,
}

fn describe(s: &SiteReport) -> String {
    format!(
        "{}:{} {} ({} {}, {} B)",
        s.line,
        s.column,
        s.text,
        format!("{:?}", s.space).to_lowercase(),
        format!("{:?}", s.op).to_lowercase(),
        s.width
    )
}

/// One line per access of `hits` (rows of one source line): its position, text, space,
/// operation and width, and its rows (`#8–#23 (16 instructions)` for an unrolled loop's
/// copies).
fn grouped(rows: &[SiteReport], hits: &[usize]) -> String {
    let mut groups: Vec<(String, Vec<usize>)> = Vec::new();
    for &i in hits {
        let d = describe(&rows[i]);
        match groups.iter_mut().find(|(x, _)| *x == d) {
            Some((_, v)) => v.push(i),
            None => groups.push((d, vec![i])),
        }
    }
    groups
        .iter()
        .map(|(d, v)| match v.as_slice() {
            [one] => format!("  #{one} {d}"),
            _ if v.windows(2).all(|w| w[1] == w[0] + 1) => format!(
                "  #{}–#{} {d} ({} instructions)",
                v[0],
                v[v.len() - 1],
                v.len()
            ),
            _ => format!(
                "  {} {d} ({} instructions)",
                v.iter()
                    .map(|i| format!("#{i}"))
                    .collect::<Vec<_>>()
                    .join(" "),
                v.len()
            ),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The rule the model applied, in words.
fn rule(arch: &Arch, config: &Config, b: &Breakdown) -> String {
    match b {
        Breakdown::Memory { path, .. } => match (path, arch.family) {
            (GlobalPath::Uncached, Family::Cc1Strict) => {
                "half-warps; coalesced: one 64/128 B transaction, else 32 B a lane".into()
            }
            (GlobalPath::Uncached, _) => {
                "half-warps; one 32/64/128 B transaction per segment touched".into()
            }
            (GlobalPath::L1Lines, _) => "cached in L1: one 128 B line per line touched".into(),
            (GlobalPath::L2Segments, _) => "L2 only: one 32 B segment per segment touched".into(),
            (GlobalPath::ReadOnly, _) => "read-only (texture) cache: 32-byte segments".into(),
            (GlobalPath::Sectors, _) => "one request; one 32 B sector per sector touched".into(),
        },
        Breakdown::Shared {
            banks, bank_bytes, ..
        } => {
            let phase = match arch.family {
                Family::Cc1Strict | Family::Cc1Segment => "per half-warp",
                _ => "per warp (8/16 B words: half/quarter-warp phases)",
            };
            let mode = if arch.family == Family::Kepler
                && config.smem_bank_mode == SmemBankMode::EightByte
            {
                " (8-byte mode)"
            } else {
                ""
            };
            format!("{banks} banks of {bank_bytes} bytes{mode}, {phase}")
        }
        Breakdown::Constant { .. } => match arch.family {
            Family::Cc1Strict | Family::Cc1Segment => {
                "one request per distinct address, per half-warp".into()
            }
            _ => "one request per distinct address in the warp".into(),
        },
    }
}

/// The texel picture of a texture/surface execution: the texture whose address window
/// (`warpscope_simt::TEXTURE_BASE` + k · `TEXTURE_SPACING`, k its `--texture` index) holds
/// the chosen request's first address, and the requests of its execution.
/// The breakdown of one warp execution made of several parts (texture requests, the words of
/// a wide local access): their requests one after another.
fn breakdown_of(arch: &Arch, config: &Config, parts: &[WarpAccess]) -> Breakdown {
    let mut b = breakdown(arch, config, &parts[0]);
    if let Breakdown::Memory { requests, .. } = &mut b {
        for a in &parts[1..] {
            if let Breakdown::Memory { requests: more, .. } = breakdown(arch, config, a) {
                requests.extend(more);
            }
        }
    }
    b
}

fn texel_grid(
    req: &AnalyzeRequest,
    access: &WarpAccess,
    execution: &[WarpAccess],
) -> Option<TexelGrid> {
    let first = (0..32).find(|&l| access.mask & (1 << l) != 0)?;
    let k = access.addrs[first].checked_sub(warpscope_simt::TEXTURE_BASE)?
        / warpscope_simt::TEXTURE_SPACING;
    let t = req.textures.get(k as usize)?;
    let base = warpscope_simt::TEXTURE_BASE + k * warpscope_simt::TEXTURE_SPACING;
    TexelGrid::new(t, base, execution, access.space == Space::Surface)
}

/// Interprets the launch, analyzes it (for the report's table), then re-runs it to pick the
/// requested warp-level execution of the chosen site and explains it per architecture.
///
/// A line (or line and column) whose accesses are all copies of one access (an unrolled
/// loop's, the same text, operation, space and width) selects them all, and the costliest
/// warp of any of them is explained.
///
/// Errors: everything [`crate::analyze`] reports; no access at the given line (the message
/// lists the kernel's accesses), several different accesses on the line and no column (or
/// `--warp` with several copies), a site number out of range, a warp index past the site's
/// executions.
pub fn explain(req: &ExplainRequest) -> Result<Explanation> {
    let p = prepare(&req.analyze)?;
    let analysis: Analysis = analyze_prepared(&req.analyze, &p)?;
    let rows = &analysis.architectures[0].sites;
    let file = &req.analyze.file;
    let listing = || {
        rows.iter()
            .enumerate()
            .map(|(i, s)| format!("  #{i} {}", describe(s)))
            .collect::<Vec<_>>()
            .join("\n")
    };
    let chosen: Vec<usize> = match req.site {
        SiteSelector::Number(n) => {
            if n >= rows.len() {
                bail!(
                    "--site {n}: {} has {} accesses, numbered 0 to {}:\n{}",
                    req.analyze.kernel,
                    rows.len(),
                    rows.len().saturating_sub(1),
                    listing()
                );
            }
            vec![n]
        }
        SiteSelector::Line { line, column } => {
            let hits: Vec<usize> = (0..rows.len())
                .filter(|&i| rows[i].line == line && column.is_none_or(|c| rows[i].column == c))
                .collect();
            let at = match column {
                Some(c) => format!("{file}:{line}:{c}"),
                None => format!("{file}:{line}"),
            };
            let copies = |h: &[usize]| {
                let f = &rows[h[0]];
                h.iter().all(|&i| {
                    let s = &rows[i];
                    (&s.text, s.op, s.space, s.width, &s.file, s.column)
                        == (&f.text, f.op, f.space, f.width, &f.file, f.column)
                })
            };
            match hits.as_slice() {
                [] => bail!(
                    "no memory access of {} at {at} was executed by this launch; its accesses are:\n{}",
                    req.analyze.kernel,
                    listing()
                ),
                [_] => hits,
                many if copies(many) && req.warp.is_none() => hits,
                many => bail!(
                    "{at} has {}; choose one with {} or --site N:\n{}",
                    {
                        let mut d: Vec<String> = many.iter().map(|&i| describe(&rows[i])).collect();
                        d.sort();
                        d.dedup();
                        match d.len() {
                            1 => format!("{} instructions of one access", many.len()),
                            n if n == many.len() => format!("{n} accesses"),
                            n => format!("{n} accesses ({} instructions)", many.len()),
                        }
                    },
                    if copies(many) {
                        "--site N (--warp counts the executions of one instruction)".to_string()
                    } else {
                        format!("--line {line}:COLUMN")
                    },
                    grouped(rows, many)
                ),
            }
        }
    };
    let picked = pick(&req.analyze, &p, &analysis, &chosen, req.warp)?;
    // The costliest of the copies (the first of the greatest weight).
    let mut best: Option<(usize, &Picked)> = None;
    for (&row, pk) in chosen.iter().zip(&picked) {
        if pk.chosen.is_some() && best.is_none_or(|(_, b)| pk.weight > b.weight) {
            best = Some((row, pk));
        }
    }
    let Some((row, pk)) = best else {
        let target = &rows[chosen[0]];
        let count = picked[0].count;
        match req.warp {
            Some(n) => bail!(
                "--warp {n}: {}:{}:{} {} has {count} warp-level executions in this launch; \
                 choose --warp 0 to {}",
                file,
                target.line,
                target.column,
                target.text,
                count.saturating_sub(1)
            ),
            None => bail!(
                "{}:{}:{} was not executed",
                file,
                target.line,
                target.column
            ),
        }
    };
    let row_pk = (row, pk);
    Ok(build(
        &req.analyze,
        &p,
        analysis,
        row_pk.0,
        row_pk.1,
        req.warp,
    ))
}

/// The warp-level execution of one row chosen by [`pick`].
pub(crate) struct Picked {
    /// The row's warp-level executions in the launch.
    pub(crate) count: u64,
    /// Its weight ([`weight`] summed over the architectures and the execution's parts).
    pub(crate) weight: u64,
    /// The execution: its 0-based index in launch order, its parts (texture requests, the
    /// words of a wide local access: one access each) and the warp it came from.
    pub(crate) chosen: Option<(u64, Vec<WarpAccess>, warpscope_cuda::WarpOrigin)>,
    /// What the row's warps show over the launch (a 1-D stride or a column walk, a
    /// reduction's doubling stride), as the analysis's advice sees it.
    pub(crate) strides: LaneStrides,
}

/// Runs the launch of `p` once more and picks, for each of `rows` (row numbers of
/// `analysis`), its execution `warp` (0-based, in launch order) or, when `None`, its
/// costliest (the first of the greatest weight, summed over the architectures).
///
/// Errors: what the run reports; a row with no front-end site (an internal error).
pub(crate) fn pick(
    req: &AnalyzeRequest,
    p: &Prepared,
    analysis: &Analysis,
    rows: &[usize],
    warp: Option<u64>,
) -> Result<Vec<Picked>> {
    let reports = &analysis.architectures[0].sites;
    let sites = p.kernel.sites();
    // Per front-end site, the (space, width, slot) of the rows asked for.
    let mut wanted: std::collections::HashMap<usize, Vec<(Space, u32, usize)>> = Default::default();
    for (slot, &row) in rows.iter().enumerate() {
        let target = &reports[row];
        let Some(site_id) = sites.iter().position(|s| {
            s.line == target.line
                && s.column == target.column
                && s.op == target.op
                && s.text == target.text
                && s.ptx_line == target.ptx_line
        }) else {
            bail!("internal: the report's row #{row} has no front-end site");
        };
        wanted
            .entry(site_id)
            .or_default()
            .push((target.space, target.width, slot));
    }
    // A texture fetch or surface access reaches the sink as one access per request, a wide
    // local access as one per 4-byte word; an instruction's further parts have `read_only`
    // set (`WarpAccess::read_only`). The parts of one warp execution are gathered and
    // weighed together.
    struct Execution {
        parts: Vec<WarpAccess>,
        origin: warpscope_cuda::WarpOrigin,
    }
    let weigh = |parts: &[WarpAccess]| -> u64 {
        parts
            .iter()
            .map(|a| {
                p.archs
                    .iter()
                    .map(|arch| weight(&cost(arch, &req.config, a), a.space))
                    .sum::<u64>()
            })
            .sum()
    };
    let mut out: Vec<Picked> = rows
        .iter()
        .map(|_| Picked {
            count: 0,
            weight: 0,
            chosen: None,
            strides: LaneStrides::default(),
        })
        .collect();
    let mut current: Vec<Option<Execution>> = rows.iter().map(|_| None).collect();
    let finish = |e: Execution, pk: &mut Picked| {
        let i = pk.count - 1;
        match warp {
            Some(n) if n == i => pk.chosen = Some((i, e.parts, e.origin)),
            Some(_) => {}
            None => {
                let w = weigh(&e.parts);
                if pk.chosen.is_none() || w > pk.weight {
                    pk.weight = w;
                    pk.chosen = Some((i, e.parts, e.origin));
                }
            }
        }
    };
    p.kernel.run(&mut |s, a, origin| {
        let Some(targets) = wanted.get(&s) else {
            return;
        };
        let Some(&(_, _, slot)) = targets
            .iter()
            .find(|(space, width, _)| a.space == *space && a.width == *width)
        else {
            return;
        };
        out[slot].strides.record(a);
        let further = a.read_only && a.space != Space::Global;
        match current[slot].as_mut() {
            Some(e) if further => e.parts.push(*a),
            _ => {
                if let Some(e) = current[slot].take() {
                    finish(e, &mut out[slot]);
                }
                out[slot].count += 1;
                current[slot] = Some(Execution {
                    parts: vec![*a],
                    origin,
                });
            }
        }
    })?;
    for (slot, c) in current.into_iter().enumerate() {
        if let Some(e) = c {
            finish(e, &mut out[slot]);
        }
    }
    Ok(out)
}

/// The explanation of row `row` of `analysis` at the execution `pk` picked (which must have
/// one): the model's breakdown on each architecture, its paragraph and advice.
pub(crate) fn build(
    req: &AnalyzeRequest,
    p: &Prepared,
    analysis: Analysis,
    row: usize,
    pk: &Picked,
    warp: Option<u64>,
) -> Explanation {
    let target = analysis.architectures[0].sites[row].clone();
    // Both callers (explain, annotate) pass only picks whose `chosen` is set.
    let (execution, parts, origin) = pk.chosen.clone().expect("an execution was picked");
    let file = &req.file;
    let access = parts[0];
    let facts = SiteFacts {
        text: &target.text,
        start_offsets: 0,
        strides: pk.strides.clone(),
    };
    let config = &req.config;
    let architectures = p
        .archs
        .iter()
        .map(|arch| {
            let b = breakdown_of(arch, config, &parts);
            let mut c = Cost::default();
            for a in &parts {
                c.add(&cost(arch, config, a));
            }
            ExplainedArch {
                cc: arch.cc.to_string(),
                name: arch.name.to_string(),
                rule: rule(arch, config, &b),
                cost: c.into(),
                breakdown: b,
                paragraph: String::new(),
                advice: advise(&facts, config, &[(*arch, access)]),
            }
        })
        .collect();
    let mut e = Explanation {
        kernel: req.kernel.clone(),
        source: target.file.clone().unwrap_or_else(|| file.clone()),
        grid: req.grid,
        block: req.block,
        line: target.line,
        column: target.column,
        text: target.text.clone(),
        space: target.space,
        op: target.op,
        width: target.width,
        read_only: target.read_only,
        ptx: target.ptx.clone(),
        ptx_line: target.ptx_line,
        execution,
        executions: pk.count,
        chosen: match warp {
            Some(n) => format!("--warp {n}"),
            None => "the costliest".into(),
        },
        block_of_warp: origin.block,
        warp: origin.warp,
        mask: access.mask,
        addrs: access.addrs.to_vec(),
        further_words: if target.space == Space::Local {
            parts[1..].iter().map(|a| a.addrs.to_vec()).collect()
        } else {
            Vec::new()
        },
        texels: texel_grid(req, &access, &parts),
        architectures,
        analysis,
    };
    // Pitch diagnosis needs the site's start offsets over the launch: take them from the
    // analysis's advice, which saw every warp.
    let site_advice = e
        .analysis
        .advice
        .iter()
        .find(|s| {
            s.line == e.line
                && s.space == e.space
                && s.width == e.width
                && s.advice.iter().any(|a| a.rows.contains(&row))
        })
        .cloned();
    for i in 0..e.architectures.len() {
        if let Some(sa) = &site_advice {
            let cc = e.architectures[i].cc.clone();
            for adv in sa.advice.iter().filter(|a| a.rows.contains(&row)) {
                let is_pitch = matches!(adv.cause, warpscope_advice::Cause::RowPitch);
                let covers = adv.outcomes.iter().any(|o| o.cc == cc);
                if is_pitch && covers {
                    // The launch-wide view knows the rows start at varying alignments.
                    let mut a = adv.clone();
                    a.outcomes.retain(|o| o.cc == cc);
                    a.rows.clear();
                    e.architectures[i].advice.retain(|x| {
                        !matches!(x.cause, warpscope_advice::Cause::MisalignedStart { .. })
                    });
                    e.architectures[i].advice.insert(0, a);
                }
            }
        }
        let para = paragraph(&e, &e.architectures[i]);
        e.architectures[i].paragraph = para;
    }
    e
}
