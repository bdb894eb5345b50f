//! The `resources` of an analysis: what `ptxas -v` reported for the analyzed kernel (read
//! from the SASS check's cached listing) and the launch's theoretical occupancy per CC.

use warpscope_ptx::ast::Module;
use warpscope_report::resources::{KernelResources, PtxasFigures};
use warpscope_toolkit::Toolkit;

use crate::load::{Loaded, Prepared};
use crate::AnalyzeRequest;

/// ptxas's registers, spills, stack frame and static shared memory for the entry `entry`
/// (mangled name) of `ptx`, assembled for `sm` with `options` as the SASS check does (same
/// tagged PTX, so its cached listing is reused; an `a`/`f` target the PTX names wins).
/// `None` when ptxas or nvdisasm is missing or refuses the PTX: the check's note says so.
pub(crate) fn ptxas_figures(
    ptx: &str,
    module: &Module,
    tk: &Toolkit,
    sm: &str,
    options: &[String],
    entry: &str,
) -> Option<PtxasFigures> {
    let tools = tk.sass_tools().ok()?;
    let mut lines = Vec::new();
    for f in &module.functions {
        if let Some(body) = &f.body {
            crate::sass::instruction_lines(body, &mut lines);
        }
    }
    let own = module
        .target
        .iter()
        .find(|t| t.starts_with("sm_"))
        .filter(|t| t.ends_with('a') || t.ends_with('f'));
    let sm = own.map_or(sm, String::as_str);
    let listing = tools.memory(ptx, &lines, sm, options).ok()?;
    let r = listing.resources.iter().find(|r| r.function == entry)?;
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
