//! The `explain` pipeline: pick one access site and one warp-level execution of it, and lay
//! out what each compute capability's model did with it.

use anyhow::{bail, Result};
use warpscope_advice::{weight, LaneStrides, SiteFacts};
use warpscope_model::arch::{Family, GlobalPath};
use warpscope_model::detail::{breakdown, Breakdown};
use warpscope_model::{cost, Arch, Config, Cost, SmemBankMode, Space, WarpAccess};
use warpscope_report::explain::{paragraph, ExplainedArch, Explanation, TexelGrid};
use warpscope_report::{advise, Analysis, SiteReport};

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
/// Errors: everything [`crate::analyze`] reports; no access at the given line (the message
/// lists the kernel's accesses), several accesses on the line and no column, a site number
/// out of range, a warp index past the site's executions.
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
    let row = match req.site {
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
            n
        }
        SiteSelector::Line { line, column } => {
            let hits: Vec<usize> = (0..rows.len())
                .filter(|&i| rows[i].line == line && column.is_none_or(|c| rows[i].column == c))
                .collect();
            let at = match column {
                Some(c) => format!("{file}:{line}:{c}"),
                None => format!("{file}:{line}"),
            };
            match hits.as_slice() {
                [] => bail!(
                    "no memory access of {} at {at} was executed by this launch; its accesses are:\n{}",
                    req.analyze.kernel,
                    listing()
                ),
                [one] => *one,
                many => bail!(
                    "{at} has {} accesses; choose one with --line {line}:COLUMN or --site N:\n{}",
                    many.len(),
                    many.iter()
                        .map(|&i| format!("  #{i} {}", describe(&rows[i])))
                        .collect::<Vec<_>>()
                        .join("\n")
                ),
            }
        }
    };
    let target = &rows[row];
    let Some(site_id) = p.kernel.sites().iter().position(|s| {
        s.line == target.line
            && s.column == target.column
            && s.op == target.op
            && s.text == target.text
            && s.ptx_line == target.ptx_line
    }) else {
        bail!("internal: the report's row #{row} has no front-end site");
    };
    // Second run: find the execution. A texture fetch or surface access reaches the sink as
    // one access per request, a wide local access as one per 4-byte word; an instruction's
    // further parts have `read_only` set (`WarpAccess::read_only`). The parts of one warp
    // execution are gathered and weighed together.
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
                    .map(|arch| weight(&cost(arch, &req.analyze.config, a), a.space))
                    .sum::<u64>()
            })
            .sum()
    };
    let mut count = 0u64;
    let mut chosen: Option<(u64, u64, Execution)> = None;
    let mut current: Option<Execution> = None;
    let finish = |e: Execution, i: u64, chosen: &mut Option<(u64, u64, Execution)>| match req.warp {
        Some(n) if n == i => *chosen = Some((0, i, e)),
        Some(_) => {}
        None => {
            let w = weigh(&e.parts);
            if chosen.as_ref().is_none_or(|c| w > c.0) {
                *chosen = Some((w, i, e));
            }
        }
    };
    // What the site's warps show over the launch (a 1-D stride or a column walk, a
    // reduction's doubling stride), as the analysis's advice sees it.
    let mut strides = LaneStrides::default();
    p.kernel.run(&mut |s, a, origin| {
        if s != site_id || a.space != target.space || a.width != target.width {
            return;
        }
        strides.record(a);
        let further = a.read_only && a.space != Space::Global;
        match current.as_mut() {
            Some(e) if further => e.parts.push(*a),
            _ => {
                if let Some(e) = current.take() {
                    finish(e, count - 1, &mut chosen);
                }
                count += 1;
                current = Some(Execution {
                    parts: vec![*a],
                    origin,
                });
            }
        }
    })?;
    if let Some(e) = current.take() {
        finish(e, count - 1, &mut chosen);
    }
    let Some((_, execution, Execution { parts, origin })) = chosen else {
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
    let access = parts[0];
    let facts = SiteFacts {
        text: &target.text,
        start_offsets: 0,
        strides,
    };
    let config = &req.analyze.config;
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
        kernel: req.analyze.kernel.clone(),
        source: target.file.clone().unwrap_or_else(|| file.clone()),
        grid: req.analyze.grid,
        block: req.analyze.block,
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
        executions: count,
        chosen: match req.warp {
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
        texels: texel_grid(&req.analyze, &access, &parts),
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
    Ok(e)
}
