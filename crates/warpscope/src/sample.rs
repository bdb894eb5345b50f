//! `--sample-blocks auto`: a sample sized from the launch's own cost, with its error stated.
//!
//! A pilot runs [`PILOT_BLOCKS`] blocks spread over the grid and counts their work: warp
//! instructions, plus [`ACCESS_WORK`] for each warp access they made (an access costs far more
//! than an instruction: its lanes' addresses checked, its shape costed and tallied, and a TMA
//! copy or a wgmma is one instruction of tens of accesses). The sample then holds as many
//! blocks as [`AUTO_SAMPLE_WORK`] allows at that rate (every block when the launch fits). The
//! sample runs as [`SAMPLE_GROUPS`] interleaved groups (slots `g`, `g + 16`, … of
//! [`warpscope_simt::sample_blocks`]): each group's extrapolation of the moved units (sectors,
//! wavefronts, constant requests) is one estimate of the totals, and their spread gives the
//! standard error of the whole sample's; three of them are the stated error. A grid whose
//! blocks all access alike (a regular kernel) gives groups that agree exactly; a
//! data-dependent one shows its spread. The choice depends on counts only: the same launch
//! picks the same sample on any machine, idle or loaded.

use std::sync::Arc;

use anyhow::{bail, Result};
use warpscope_report::Analysis;

use crate::load::Prepared;
use crate::run::{aggregate, analysis_of, analysis_sites, group_findings};
use crate::AnalyzeRequest;

/// Blocks of the pilot run that measures warp instructions per block.
pub const PILOT_BLOCKS: u64 = 8;

/// Work units a warp access counts for, against 1 for a warp instruction: measured with
/// callgrind on this repository's benchmarks (the 4096² naive transpose, 272 warp
/// instructions and 64 accesses a block, and Triton's TMA + wgmma matmul, 21,248 and 14,528),
/// whose instruction counts per block fit `instructions + 12 × accesses` to within a few per
/// cent; 16 leans towards the accesses, which cost more in real time than in instructions
/// (cache misses).
pub const ACCESS_WORK: u64 = 16;

/// Work units ([`ACCESS_WORK`]) the whole sample may hold: about one CPU second on a 2-core
/// x86-64 machine of 2026 (the transpose benchmark of `scripts/bench.sh` runs ≈ 40·10⁶ units
/// a second per core, Triton's TMA matmul ≈ 25·10⁶). A count, not a time, so that the sample
/// does not depend on the machine's load.
pub const AUTO_SAMPLE_WORK: u64 = 24_000_000;

/// The blocks the sample holds for a launch of `total` blocks of `work_per_block` work units
/// each: [`AUTO_SAMPLE_WORK`] ÷ `work_per_block`, at least [`PILOT_BLOCKS`] (and 2, so that
/// there are two groups to compare), at most `total`.
pub fn auto_sample_size(total: u64, work_per_block: u64) -> u64 {
    (AUTO_SAMPLE_WORK / work_per_block.max(1))
        .max(PILOT_BLOCKS)
        .max(2)
        .min(total)
}

/// Interleaved groups the auto sample runs as (fewer when it holds fewer blocks): 16 give
/// the spread 15 degrees of freedom, where two halves gave it one (and understated the
/// histogram's error by 3×: `docs/src/speed.md`).
pub const SAMPLE_GROUPS: usize = 16;

/// Standard errors the stated error spans: about 99.7 % of a normal estimate's errors.
pub const ERROR_SPAN: f64 = 3.0;

/// The relative error the report states for a sample of `sampled` of `total` blocks run as
/// groups whose extrapolated figures (per CC, in the same order in each group) are `groups`:
/// per CC, [`ERROR_SPAN`] standard errors of the groups' mean (their sample standard
/// deviation over √groups, times the finite-population factor √(1 − sampled/total)) over
/// that mean; the largest over the CCs. 0 where every group gives the same figures (or all
/// are 0), and where there are fewer than 2 groups.
pub fn sample_error(groups: &[Vec<u64>], sampled: u64, total: u64) -> f64 {
    let k = groups.len();
    if k < 2 {
        return 0.0;
    }
    let finite = (1.0 - sampled as f64 / total.max(1) as f64).max(0.0).sqrt();
    let ccs = groups.iter().map(Vec::len).min().unwrap_or(0);
    (0..ccs)
        .map(|c| {
            let xs = groups.iter().map(|g| g[c] as f64);
            let mean = xs.clone().sum::<f64>() / k as f64;
            if mean == 0.0 {
                return 0.0;
            }
            let var = xs.map(|x| (x - mean) * (x - mean)).sum::<f64>() / (k - 1) as f64;
            ERROR_SPAN * (var / k as f64).sqrt() * finite / mean
        })
        .fold(0.0, f64::max)
}

/// Analyzes `req` (whose `sample_auto` is set) on the prepared `p`: pilot, sample size, the
/// sample's [`SAMPLE_GROUPS`] groups summed in one run, and a note with the sample and its
/// error.
///
/// Errors: `--gpu` (the cache model needs every block in order), a thread-block cluster,
/// and what the runs report.
pub(crate) fn analyze_auto(req: &AnalyzeRequest, p: &mut Prepared) -> Result<Analysis> {
    if !req.gpus.is_empty() {
        bail!("--sample-blocks auto with --gpu: the cache model needs every block in order; drop one of them");
    }
    if p.kernel.cluster().iter().product::<u32>() > 1 {
        bail!("--sample-blocks auto with a thread-block cluster is not supported yet (a sample must hold whole clusters): drop --sample-blocks");
    }
    let total: u64 = req.grid.iter().map(|&x| x as u64).product();
    group_findings(req, p);
    // The pilot: its blocks' warp instructions, counted by a progress of its own.
    let pilot = Arc::new(warpscope_simt::Progress::default());
    p.kernel.set_progress(Some(pilot.clone()));
    let pilot_blocks = warpscope_simt::sample_blocks(req.grid, PILOT_BLOCKS);
    let ran = pilot_blocks.len() as u64;
    p.kernel.set_sample(Some(Arc::new(pilot_blocks)));
    let pilot_result = aggregate(p, req.config);
    p.kernel.set_progress(req.progress.clone());
    let pilot_agg = pilot_result?;
    let pilot_accesses = pilot_agg.accesses();
    if ran >= total {
        // The pilot was the whole grid.
        p.kernel.set_sample(None);
        let mut a = analysis_of(req, p, pilot_agg, &analysis_sites(req, p), None)?;
        a.notes.push(format!(
            "--sample-blocks auto: every block ran (the grid has {total}): exact"
        ));
        return Ok(a);
    }
    let steps = pilot.steps_done.load(std::sync::atomic::Ordering::Relaxed);
    let per_block = steps.div_ceil(ran.max(1));
    let accesses_per_block = pilot_accesses.div_ceil(ran.max(1));
    let work = steps.saturating_add(pilot_accesses.saturating_mul(ACCESS_WORK));
    let work_per_block = work.div_ceil(ran.max(1));
    let n = auto_sample_size(total, work_per_block);
    let pilot_note = format!(
        "pilot: {} warp instructions and {} warp accesses a block, {} work units with an access counted {ACCESS_WORK}; budget {}",
        warpscope_report::thousands(per_block),
        warpscope_report::thousands(accesses_per_block),
        warpscope_report::thousands(work_per_block),
        warpscope_report::thousands(AUTO_SAMPLE_WORK)
    );
    if n >= total {
        p.kernel.set_sample(None);
        let agg = aggregate(p, req.config)?;
        let mut a = analysis_of(req, p, agg, &analysis_sites(req, p), None)?;
        a.notes.push(format!(
            "--sample-blocks auto: every block ran ({} blocks fit the budget; {pilot_note}): exact",
            warpscope_report::thousands(total),
        ));
        return Ok(a);
    }
    let all = warpscope_simt::sample_blocks(req.grid, n);
    let (merged, k, error) = run_groups(req, p, &all)?;
    let sampled = all.len() as u64;
    let mut analysis = analysis_of(req, p, merged, &analysis_sites(req, p), Some(sampled))?;
    analysis.notes.push(format!(
        "--sample-blocks auto: {} of {} blocks ({pilot_note}); {}",
        warpscope_report::thousands(sampled),
        warpscope_report::thousands(total),
        error_note(k, error)
    ));
    Ok(analysis)
}

/// Analyzes `req` with `--sample-blocks N|FRACTION` on the prepared `p`, whose sample is
/// `all`: its groups summed in one run ([`run_groups`]) and a note with their error.
///
/// Errors: what the run reports.
pub(crate) fn analyze_fixed(
    req: &AnalyzeRequest,
    p: &mut Prepared,
    all: &[u64],
) -> Result<Analysis> {
    group_findings(req, p);
    let (merged, k, error) = run_groups(req, p, all)?;
    let mut analysis = analysis_of(
        req,
        p,
        merged,
        &analysis_sites(req, p),
        Some(all.len() as u64),
    )?;
    analysis
        .notes
        .push(format!("--sample-blocks: {}", error_note(k, error)));
    Ok(analysis)
}

/// Runs the sample `all` (linear block indices, as [`warpscope_simt::sample_blocks`] gives
/// them) of `p`'s grid as [`SAMPLE_GROUPS`] interleaved groups (slot `i` in group `i mod
/// k`), summed apart in one run on every core: the merged sums, the number of groups `k`
/// and the error [`sample_error`] states for their extrapolations.
///
/// Errors: what the run reports.
pub(crate) fn run_groups(
    req: &AnalyzeRequest,
    p: &mut Prepared,
    all: &[u64],
) -> Result<(warpscope_report::Aggregator, usize, f64)> {
    let total: u64 = req.grid.iter().map(|&x| x as u64).product();
    let k = SAMPLE_GROUPS.min(all.len());
    let group_of: std::collections::HashMap<u64, usize> =
        all.iter().enumerate().map(|(i, &b)| (b, i % k)).collect();
    let size: Vec<u64> = (0..k).map(|g| (all.len() - g).div_ceil(k) as u64).collect();
    let [gx, gy, _] = req.grid.map(u64::from);
    p.kernel.set_sample(Some(Arc::new(all.to_vec())));
    let archs = p.archs.clone();
    let config = req.config;
    let mut groups: Vec<Option<warpscope_report::Aggregator>> = (0..k).map(|_| None).collect();
    p.kernel.run_parts(
        &|| GroupParts::new(k),
        &|part, site, a, [x, y, z]| {
            let g = part.group(x as u64 + gx * (y as u64 + gy * z as u64), &group_of);
            part.sums[g]
                .get_or_insert_with(|| warpscope_report::Aggregator::new(archs.clone(), config))
                .add(site, a)
        },
        &mut |part| {
            for (sum, into) in part.sums.into_iter().zip(&mut groups) {
                match (sum, into) {
                    (Some(s), Some(m)) => m.merge(s),
                    (Some(s), slot) => *slot = Some(s),
                    (None, _) => {}
                }
            }
        },
    )?;
    let mut merged = warpscope_report::Aggregator::new(p.archs.clone(), config);
    let mut estimates = Vec::with_capacity(k);
    for (g, sum) in groups.into_iter().enumerate() {
        let mut sum =
            sum.unwrap_or_else(|| warpscope_report::Aggregator::new(p.archs.clone(), config));
        estimates.push(
            sum.moved_units()
                .into_iter()
                .map(|u| (u as u128 * total as u128 / size[g].max(1) as u128) as u64)
                .collect::<Vec<u64>>(),
        );
        merged.merge(sum);
    }
    Ok((merged, k, sample_error(&estimates, all.len() as u64, total)))
}

/// The note on a sample's error from its `k` groups: "expect the totals within ±0.031 %
/// on every CC (…)", or that the groups agree.
pub(crate) fn error_note(k: usize, error: f64) -> String {
    if error == 0.0 {
        format!("its {k} interleaved groups extrapolate to the same totals on every CC (estimated error 0; a grid whose blocks access alike is exact)")
    } else {
        format!(
            "from the spread of its {k} interleaved groups' extrapolated sectors+wavefronts, expect the totals within ±{} on every CC ({ERROR_SPAN} standard errors; an estimate from the sample itself, not a guarantee; run without --sample-blocks for exact figures)",
            percent(error)
        )
    }
}

/// One thread's sums of a sample's groups, and the group of the block it last saw
/// (a thread runs its blocks one after another).
struct GroupParts {
    sums: Vec<Option<warpscope_report::Aggregator>>,
    last: Option<(u64, usize)>,
}

impl GroupParts {
    fn new(groups: usize) -> GroupParts {
        GroupParts {
            sums: (0..groups).map(|_| None).collect(),
            last: None,
        }
    }

    /// The group of the block of linear index `block` (one of the sample's).
    fn group(&mut self, block: u64, group_of: &std::collections::HashMap<u64, usize>) -> usize {
        match self.last {
            Some((b, g)) if b == block => g,
            _ => {
                let g = group_of.get(&block).copied().unwrap_or(0);
                self.last = Some((block, g));
                g
            }
        }
    }
}

/// A ratio as a percentage with two significant digits ("0.026 %", "1.3 %"), or
/// "< 0.0000001 %" when smaller.
fn percent(r: f64) -> String {
    if r < 1e-9 {
        return "< 0.0000001 %".into();
    }
    let pct = 100.0 * r;
    // Decimals for two significant digits, at least one.
    let decimals = (1 - pct.log10().floor() as i32).max(1) as usize;
    format!("{pct:.decimals$} %")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sample_fits_the_budget_and_the_grid() {
        // 16,384 blocks of 1,200 work units: 24·10⁶ / 1,200 = 20,000 > the grid.
        assert_eq!(auto_sample_size(16_384, 1_200), 16_384);
        // 262,144 blocks of 1,200: 20,000 blocks.
        assert_eq!(auto_sample_size(262_144, 1_200), 20_000);
        // A block of 10⁹ work units: the pilot's 8 at least.
        assert_eq!(auto_sample_size(1 << 20, 1_000_000_000), 8);
    }

    #[test]
    fn the_error_is_three_standard_errors_of_the_groups_mean() {
        // Groups that agree: 0, whatever the sample.
        assert_eq!(sample_error(&[vec![100, 0], vec![100, 0]], 2, 10), 0.0);
        // Four groups of 90, 110, 90, 110 on the second CC: mean 100, sample variance
        // 4·10²/3, standard error √(400/3/4) = 5.774, finite factor √(1 − 40/160) = 0.866:
        // 3 × 5.774 × 0.866 / 100 = 0.15.
        let g = [vec![7, 90], vec![7, 110], vec![7, 90], vec![7, 110]];
        assert!((sample_error(&g, 40, 160) - 0.15).abs() < 1e-12);
        // The whole grid sampled: no error.
        assert_eq!(sample_error(&g, 160, 160), 0.0);
        // One group: no spread to measure.
        assert_eq!(sample_error(&[vec![5]], 1, 10), 0.0);
    }

    #[test]
    fn percentages_keep_two_significant_digits() {
        assert_eq!(percent(0.00026), "0.026 %");
        assert_eq!(percent(0.013), "1.3 %");
        assert_eq!(percent(0.15), "15.0 %");
        assert_eq!(percent(0.0000031), "0.00031 %");
        assert_eq!(percent(1e-10), "< 0.0000001 %");
    }
}
