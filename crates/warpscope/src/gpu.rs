//! The analysis side of `warpscope run` and `verify` (feature `cuda`): a launch as
//! `warpscope-gpu` describes it ([`LaunchSpec`]) → warpscope's analysis for the device's
//! compute capability ([`analyze`]) and the real launch's plan ([`plan_of`]: parameter
//! bytes, allocation sizes and contents, from the source front end or, where it cannot read
//! the kernel, from the compiled path's executor), many launches at a time ([`plan_all`]).

use anyhow::{anyhow, Context, Result};
use warpscope_gpu::plan::{self, LaunchSpec, Plan};
use warpscope_gpu::DeviceInfo;
use warpscope_report::Analysis;

use crate::AnalyzeRequest;

fn gpu_err(e: warpscope_gpu::Error) -> anyhow::Error {
    anyhow!("{e}")
}

/// The analysis request of `s` for compute capability `cc` ("9.0").
///
/// Errors: a bad `cc`, a `--texture` that does not parse.
pub fn request(s: &LaunchSpec, cc: &str) -> Result<AnalyzeRequest> {
    let mut req = AnalyzeRequest::new(&s.file, &s.source, &s.kernel, s.grid, s.block).ccs(cc)?;
    req.args = s.args.clone();
    req.allocs = s.allocs.clone();
    req.init = s.init.clone();
    req.defines = s.defines.clone();
    req.dynamic_shared_bytes = s.dynamic_shared_bytes;
    req.max_steps = s.max_steps;
    req.textures = plan::textures(s).map_err(gpu_err)?;
    Ok(req)
}

/// warpscope's analysis of `s` for compute capability `cc` ("9.0").
pub fn analyze(s: &LaunchSpec, cc: &str) -> Result<Analysis> {
    crate::analyze(&request(s, cc)?)
}

/// The real launch of `s`: planned by the source front end, or where it cannot read the
/// kernel (cooperative groups, atomics, inline PTX), by the compiled path, whose executor's
/// touched bytes size the buffers the same way.
pub fn plan_of(s: &LaunchSpec) -> Result<Plan> {
    // Texture objects are bound on the compiled path.
    if !s.textures.is_empty() {
        return compiled_plan(s);
    }
    match plan::plan(s) {
        Ok(p) => Ok(p),
        Err(source) => compiled_plan(s).map_err(|e| {
            anyhow!(
                "{}\n(the compiled path could not plan it either: {e})",
                gpu_err(source)
            )
        }),
    }
}

fn compiled_plan(s: &LaunchSpec) -> Result<Plan> {
    let req = request(s, "9.0")?;
    let k = crate::load_compiled(&req)?;
    let touched = k.touched_ranges()?;
    let mut params = Vec::new();
    for d in &k.params {
        if let Some(t) = req.textures.iter().rev().find(|t| t.name == d.name) {
            let (surface, layered) = plan::texture_usage(&s.source, &s.kernel, &d.name);
            params.push(plan::ParamPlan::Texture {
                name: d.name.clone(),
                desc: t.clone(),
                surface,
                layered,
            });
            continue;
        }
        let Some(i) = d.alloc else {
            params.push(plan::ParamPlan::Scalar {
                name: d.name.clone(),
                ty: d.ty.clone(),
                bytes: d.bytes.clone(),
            });
            continue;
        };
        let range = touched.get(i).copied().flatten();
        let given = s
            .allocs
            .iter()
            .rev()
            .find(|(n, _)| n == &d.name)
            .map(|(_, e)| *e);
        let (alloc, contents) = &k.launch.allocs[i];
        // Without --alloc a bounded allocation was sized by its --init file.
        let (bytes, sizing) = match (given, alloc.size, range) {
            (Some(e), _, _) => (e.saturating_mul(d.elem_size.max(1)), plan::Sizing::Alloc),
            (None, Some(b), _) => (b, plan::Sizing::File),
            (None, None, Some((_, end))) => (end, plan::Sizing::Touched),
            (None, None, None) => (plan::MIN_ALLOC_BYTES, plan::Sizing::Untouched),
        };
        params.push(plan::ParamPlan::Pointer {
            name: d.name.clone(),
            ty: d.ty.clone(),
            elem_size: d.elem_size,
            bytes: bytes.max(1).div_ceil(256) * 256,
            sizing,
            touched: range,
            init: s.init_of(&d.name),
            elem: plan::ElemType::of_pointer(&d.ty, d.elem_size),
            contents: contents.clone(),
        });
    }
    Ok(Plan {
        params,
        interpreted: true,
    })
}

/// Whether warpscope models the device's compute capability.
pub fn modeled(info: &DeviceInfo) -> bool {
    warpscope_model::arch::parse_list(&info.cc_string()).is_ok()
}

/// Plans and analyzes every launch, several at a time (each is one interpreter run or two).
pub fn plan_all(
    specs: &[LaunchSpec],
    cc: Option<&str>,
) -> Vec<(Result<Plan>, Option<Result<Analysis>>)> {
    let threads = std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .min(16);
    let mut results: Vec<Option<(Result<Plan>, Option<Result<Analysis>>)>> =
        (0..specs.len()).map(|_| None).collect();
    let next = std::sync::atomic::AtomicUsize::new(0);
    let slots = std::sync::Mutex::new(&mut results);
    std::thread::scope(|sc| {
        for _ in 0..threads.min(specs.len()).max(1) {
            sc.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                if i >= specs.len() {
                    break;
                }
                let s = &specs[i];
                let p = plan_of(s).with_context(|| format!("{} {}", s.file, s.label()));
                let a = cc
                    .map(|cc| analyze(s, cc).with_context(|| format!("{} {}", s.file, s.label())));
                // Poisoned only if another worker panicked, which is already a bug report.
                slots.lock().unwrap()[i] = Some((p, a));
            });
        }
    });
    results
        .into_iter()
        .map(|r| r.expect("every launch planned"))
        .collect()
}
