//! The `resources` of an analysis: what `ptxas -v` reported for the analyzed kernel (read
//! by the SASS check) and the launch's theoretical occupancy per CC.

use warpscope_report::resources::{KernelResources, PtxasFigures};
use warpscope_toolkit::FunctionResources;

use crate::load::{Loaded, Prepared};
use crate::AnalyzeRequest;

/// ptxas's registers, spills, stack frame and static shared memory for the entry `entry`
/// (mangled name), from the SASS check's `resources` (what `ptxas -v` reported for `sm`).
/// `None` when ptxas did not run or did not report the entry: the check's note says why.
pub(crate) fn ptxas_figures(
    resources: &[FunctionResources],
    sm: &str,
    entry: &str,
) -> Option<PtxasFigures> {
    let r = resources.iter().find(|r| r.function == entry)?;
    Some(PtxasFigures {
        sass_target: sm.to_string(),
        registers: r.registers,
        spill_store_bytes: r.spill_store_bytes,
        spill_load_bytes: r.spill_load_bytes,
        stack_bytes: r.stack_bytes,
        shared_bytes: r.shared_bytes,
    })
}

/// The analysis's `resources` for the prepared kernel `p` of `req`: `None` unless it came
/// through the compiled path with the SASS check.
pub(crate) fn of(req: &AnalyzeRequest, p: &Prepared) -> Option<KernelResources> {
    let Loaded::Compiled(k) = &p.kernel else {
        return None;
    };
    let f = k.ptxas.as_ref()?;
    Some(KernelResources::new(
        f,
        req.block,
        req.dynamic_shared_bytes,
        &p.archs,
    ))
}
