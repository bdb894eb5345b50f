//! `--sample-blocks auto`: a sample sized from the launch's own cost, with its error stated.
//!
//! A pilot runs [`PILOT_BLOCKS`] blocks spread over the grid and counts their work: warp
//! instructions, plus [`ACCESS_WORK`] for each warp access they made (an access costs far more
//! than an instruction: its lanes' addresses checked, its shape costed and tallied, and a TMA
//! copy or a wgmma is one instruction of tens of accesses). The sample then holds as many
//! blocks as [`AUTO_SAMPLE_WORK`] allows at that rate (every block when the launch fits). The
//! sample runs as two
//! interleaved halves (even and odd slots of [`warpscope_simt::sample_blocks`]): each half's
//! extrapolation of the moved units (sectors, wavefronts, constant requests) is compared with
//! the other's, and their relative half-difference is the stated error. A grid whose blocks
//! all access alike (a regular kernel) gives halves that agree exactly; a data-dependent one
//! shows its spread. The choice depends on counts only: the same launch picks the same sample
//! on any machine, idle or loaded.

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
/// there are two halves), at most `total`.
pub fn auto_sample_size(total: u64, work_per_block: u64) -> u64 {
    (AUTO_SAMPLE_WORK / work_per_block.max(1))
        .max(PILOT_BLOCKS)
        .max(2)
        .min(total)
}

/// The relative error bound the report states for two half-samples' extrapolated figures
/// `a` and `b` (per CC): the largest `|a − b| / (a + b)` (the half-difference over the mean),
/// 0 where both are 0.
pub fn half_sample_error(a: &[u64], b: &[u64]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(&x, &y)| {
            let (x, y) = (x as f64, y as f64);
            if x + y == 0.0 {
                0.0
            } else {
                (x - y).abs() / (x + y)
            }
        })
        .fold(0.0, f64::max)
}

/// Analyzes `req` (whose `sample_auto` is set) on the prepared `p`: pilot, sample size, two
/// half-samples merged into one analysis, and a note with the sample and its error.
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
    // The even and the odd slots of the sample: two interleaved halves.
    let halves: [Vec<u64>; 2] = [0, 1].map(|k| all.iter().skip(k).step_by(2).copied().collect());
    let mut run_half = |blocks: &[u64]| {
        p.kernel.set_sample(Some(Arc::new(blocks.to_vec())));
        aggregate(p, req.config)
    };
    let mut a = run_half(&halves[0])?;
    let mut b = run_half(&halves[1])?;
    let extrapolate = |units: Vec<u64>, blocks: usize| -> Vec<u64> {
        units
            .into_iter()
            .map(|u| (u as u128 * total as u128 / blocks.max(1) as u128) as u64)
            .collect()
    };
    let ua = extrapolate(a.moved_units(), halves[0].len());
    let ub = extrapolate(b.moved_units(), halves[1].len());
    let error = half_sample_error(&ua, &ub);
    a.merge(b);
    let sampled = all.len() as u64;
    let mut analysis = analysis_of(req, p, a, &analysis_sites(req, p), Some(sampled))?;
    analysis.notes.push(if error == 0.0 {
        format!(
            "--sample-blocks auto: {} of {} blocks ({pilot_note}); its two interleaved halves extrapolate to the same totals on every CC (estimated error 0; a grid whose blocks access alike is exact)",
            warpscope_report::thousands(sampled),
            warpscope_report::thousands(total),
        )
    } else {
        format!(
            "--sample-blocks auto: {} of {} blocks ({pilot_note}); its two interleaved halves' extrapolated sectors+wavefronts differ by up to {} of their mean on one CC: expect the totals within about ±{} (an estimate from the sample's own spread, not a guarantee; run without --sample-blocks for exact figures)",
            warpscope_report::thousands(sampled),
            warpscope_report::thousands(total),
            percent(2.0 * error),
            percent(error)
        )
    });
    Ok(analysis)
}

/// A ratio as a percentage with two decimals, or "< 0.01 %" when smaller.
fn percent(r: f64) -> String {
    if r < 1e-4 {
        "< 0.01 %".into()
    } else {
        format!("{:.2} %", 100.0 * r)
    }
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
    fn the_error_is_the_largest_half_difference_over_the_mean() {
        assert_eq!(half_sample_error(&[100, 0], &[100, 0]), 0.0);
        // |110 − 90| / 200 = 0.1 on the second CC.
        assert!((half_sample_error(&[50, 110], &[50, 90]) - 0.1).abs() < 1e-12);
    }
}
