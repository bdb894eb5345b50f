//! The run: a prepared kernel's launch executed once, every warp access costed for every
//! chosen compute capability (the report's [`Aggregator`]) and, with `--gpu`, fed in order
//! to the traffic model of each GPU; the result is the [`Analysis`] (the JSON schema's
//! `analyze` document).

use anyhow::Result;
use warpscope_model::Space;
use warpscope_report::{Aggregator, Analysis, Header, SiteInfo, SiteTraffic, TrafficReport};
use warpscope_traffic::{AccessTraffic, TrafficModel};

use crate::load::Prepared;
use crate::AnalyzeRequest;

/// Runs `p`, the kernel of `req`, and sums its accesses into the analysis.
///
/// Errors: what the run reports (faults, runaway loops, memory limits).
pub(crate) fn analyze_prepared(req: &AnalyzeRequest, p: &Prepared) -> Result<Analysis> {
    let kernel = &p.kernel;
    let mut agg = Aggregator::new(p.archs.clone(), req.config);
    // One traffic model per GPU, all fed by the one interpretation, each with its
    // immediate traffic per (site, space, width).
    type PerRow = std::collections::HashMap<(usize, Space, u32), AccessTraffic>;
    let mut traffic: Vec<(TrafficModel, PerRow)> = req
        .gpus
        .iter()
        .map(|g| {
            let arch = g.gpu.arch();
            (
                TrafficModel::new(g.gpu, arch, &req.config, &g.profile),
                PerRow::new(),
            )
        })
        .collect();
    group_findings(req, p);
    let grid = req.grid.map(u64::from);
    // No cache model to feed in order: the accesses are summed on the threads that run the
    // blocks, and the parts merged in block order.
    if traffic.is_empty() {
        agg = aggregate(p, req.config)?;
    } else {
        kernel.run(&mut |site, a, origin| {
            agg.add(site, a);
            if !matches!(
                a.space,
                Space::Global | Space::Local | Space::Texture | Space::Surface
            ) {
                return;
            }
            let b = origin.block.map(u64::from);
            let block_linear = b[0] + grid[0] * (b[1] + grid[1] * b[2]);
            for (t, per_row) in &mut traffic {
                let x = t.add(block_linear, origin.warp, a);
                let r = per_row.entry((site, a.space, a.width)).or_default();
                r.l1_bytes += x.l1_bytes;
                r.l2_bytes += x.l2_bytes;
                r.dram_bytes += x.dram_bytes;
            }
        })?;
    }
    let sites = &analysis_sites(req, p);
    let mut analysis = analysis_of(req, p, agg, sites, kernel.sampled_blocks())?;
    for ((t, per_row), g) in traffic.into_iter().zip(&req.gpus) {
        let launch = t.finish();
        let mut rows: Vec<SiteTraffic> = per_row
            .into_iter()
            .map(|((site, space, _), x)| {
                let s = &sites[site];
                SiteTraffic {
                    line: s.line,
                    column: s.column,
                    text: s.text.clone(),
                    space,
                    op: s.op,
                    l1_bytes: x.l1_bytes,
                    l2_bytes: x.l2_bytes,
                    dram_bytes: x.dram_bytes,
                }
            })
            .collect();
        rows.sort_by_key(|r| (r.line, r.column, r.op));
        analysis.traffic.push(TrafficReport {
            profile: g.profile.origin.clone(),
            copy_gbps: g.profile.copy_gbps,
            effective_gbps: launch.effective_gbps(launch.bytes_requested),
            launch,
            sites: rows,
        });
    }
    Ok(analysis)
}

/// Tells the checks (racecheck, initcheck) which line of the user's source each executor
/// site reports as, so that findings are grouped as the report's sites are; before a run.
pub(crate) fn group_findings(req: &AnalyzeRequest, p: &Prepared) {
    if let Some(f) = p.kernel.findings() {
        let (report_sites, executor_sites) = (p.kernel.sites(), p.kernel.executor_sites());
        f.group_sites(crate::findings::lines(req, &report_sites, &executor_sites));
    }
}

/// Runs `p` with its accesses summed on the threads that run the blocks (no cache model).
///
/// Errors: what the run reports.
pub(crate) fn aggregate(p: &Prepared, config: warpscope_model::Config) -> Result<Aggregator> {
    let mut agg = Aggregator::new(p.archs.clone(), config);
    let archs = p.archs.clone();
    p.kernel.run_parts(
        &|| Aggregator::new(archs.clone(), config),
        &|part, site, a, _| part.add(site, a),
        &mut |part| agg.merge(part),
    )?;
    Ok(agg)
}

/// The sites of `p`, each naming its file (the analyzed one included).
pub(crate) fn analysis_sites(req: &AnalyzeRequest, p: &Prepared) -> Vec<SiteInfo> {
    p.kernel
        .sites()
        .into_iter()
        .map(|mut s| {
            s.file.get_or_insert_with(|| req.file.clone());
            s
        })
        .collect()
}

/// The analysis of the sums `agg` of a run of `p` (its `sites`, from [`analysis_sites`]):
/// extrapolated to the grid when `sample` blocks ran, with the header, resources, findings
/// and the sample's note.
///
/// Errors: extrapolated totals over 2^64.
pub(crate) fn analysis_of(
    req: &AnalyzeRequest,
    p: &Prepared,
    mut agg: Aggregator,
    sites: &[SiteInfo],
    sample: Option<u64>,
) -> Result<Analysis> {
    let kernel = &p.kernel;
    let total_blocks: u64 = req.grid.iter().map(|&x| x as u64).product();
    if let Some(n) = sample {
        if !agg.scale(total_blocks, n) {
            anyhow::bail!(
                "{}: extrapolating the {n} sampled blocks to the grid's {total_blocks} blocks gives totals over 2^64 (18,446,744,073,709,551,615), the limit of the 64-bit counters; analyze a smaller grid",
                req.file
            );
        }
    }
    let local_arrays = kernel.local_arrays();
    let header = Header {
        kernel: req.kernel.clone(),
        source: req.file.clone(),
        grid: req.grid,
        block: req.block,
        local_arrays,
        notes: p.notes.clone(),
    };
    let mut analysis = agg.finish(header, sites);
    analysis.resources = crate::resources::of(req, p);
    if let Some(f) = kernel.findings() {
        let (report_sites, executor_sites) = (kernel.sites(), kernel.executor_sites());
        let (found, notes) = crate::findings::report(req, f, &report_sites, &executor_sites);
        analysis.findings = found;
        analysis.notes.extend(notes);
    }
    if let Some(n) = sample {
        analysis.notes.push(format!(
            "sampled {} of {} blocks ({:.2} %): the totals are extrapolated to the whole grid (×{:.1}); per-access figures (sectors per request, efficiency) are those of the sampled blocks",
            warpscope_report::thousands(n), warpscope_report::thousands(total_blocks), 100.0 * n as f64 / total_blocks as f64, total_blocks as f64 / n as f64
        ));
    }
    Ok(analysis)
}
