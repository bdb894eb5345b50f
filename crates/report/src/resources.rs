//! What ptxas gave the kernel (registers, spills, static shared memory) and the theoretical
//! occupancy of the launch per compute capability: the `resources` field of the analysis
//! and the table's second header line.

use schemars::JsonSchema;
use serde::Serialize;
use warpscope_model::occupancy::{self, KernelUse, Occupancy};
use warpscope_model::Arch;

/// `ptxas -v`'s report on the analyzed kernel and the occupancy it gives the launch.
///
/// Only on the compiled path with the SASS check (not with `--no-sass`, nor for the
/// source interpreter). The registers are those ptxas gave the code for `sass_target`; the
/// occupancy of the other CCs assumes the same counts (their own target's ptxas may use a
/// few more or fewer).
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct KernelResources {
    /// The SASS target ptxas compiled for, e.g. "sm_90".
    pub sass_target: String,
    /// Registers per thread (`Used N registers`).
    pub registers_per_thread: u32,
    /// Bytes per thread ptxas stores to local memory for register spills.
    pub spill_store_bytes: u32,
    /// Bytes per thread ptxas loads back from those spills.
    pub spill_load_bytes: u32,
    /// Bytes of the per-thread stack frame (local memory).
    pub stack_frame_bytes: u32,
    /// Static shared memory per block, bytes (`N bytes smem`).
    pub static_shared_bytes: u32,
    /// Dynamic shared memory per block of the launch, bytes.
    pub dynamic_shared_bytes: u64,
    /// Threads per block of the launch.
    pub threads_per_block: u32,
    /// One entry per CC of the analysis, in its order.
    pub occupancy: Vec<CcOccupancy>,
}

/// The theoretical occupancy of the launch on one CC (CUDA Occupancy Calculator rules,
/// largest shared-memory carveout; `warpscope_model::occupancy`).
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct CcOccupancy {
    /// The compute capability, "9.0".
    pub cc: String,
    /// The figures; absent when no SM of this CC can run the launch (`error` says why).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub theoretical: Option<Occupancy>,
    /// Why no SM of this CC can run the launch (too many registers or shared memory).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// ptxas's figures for one kernel, as [`KernelResources::new`] takes them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PtxasFigures {
    /// The SASS target ("sm_90").
    pub sass_target: String,
    /// Registers per thread.
    pub registers: u32,
    /// Spill stores, bytes per thread.
    pub spill_store_bytes: u32,
    /// Spill loads, bytes per thread.
    pub spill_load_bytes: u32,
    /// Stack frame, bytes per thread.
    pub stack_bytes: u32,
    /// Static shared memory, bytes per block.
    pub shared_bytes: u32,
}

impl KernelResources {
    /// The resources of `p` for a launch of `block` threads and `dynamic_shared_bytes`,
    /// with the occupancy on each of `archs`.
    pub fn new(
        p: &PtxasFigures,
        block: [u32; 3],
        dynamic_shared_bytes: u64,
        archs: &[&Arch],
    ) -> KernelResources {
        let threads = block.iter().fold(1u32, |a, &b| a.saturating_mul(b));
        let k = KernelUse {
            threads_per_block: threads,
            registers_per_thread: p.registers,
            static_shared_bytes: p.shared_bytes,
            dynamic_shared_bytes: u32::try_from(dynamic_shared_bytes).unwrap_or(u32::MAX),
        };
        let occupancy = archs
            .iter()
            .map(|a| match occupancy::occupancy(a.cc, k) {
                Ok(o) => CcOccupancy {
                    cc: a.cc.to_string(),
                    theoretical: Some(o),
                    error: None,
                },
                Err(e) => CcOccupancy {
                    cc: a.cc.to_string(),
                    theoretical: None,
                    error: Some(e.to_string()),
                },
            })
            .collect();
        KernelResources {
            sass_target: p.sass_target.clone(),
            registers_per_thread: p.registers,
            spill_store_bytes: p.spill_store_bytes,
            spill_load_bytes: p.spill_load_bytes,
            stack_frame_bytes: p.stack_bytes,
            static_shared_bytes: p.shared_bytes,
            dynamic_shared_bytes,
            threads_per_block: threads,
            occupancy,
        }
    }
}

/// The table's header lines for `r`, e.g.
///
/// ```text
/// ptxas sm_90: 24 registers/thread, 248 B spill stores, 328 B spill loads (208 B stack), 0 B static shared
/// theoretical occupancy (1024 threads/block): CC 9.0 100 % (2 blocks, 64/64 warps; limited by warps)
/// ```
pub fn render_header(r: &KernelResources) -> String {
    let spills = if r.spill_store_bytes + r.spill_load_bytes == 0 {
        "no spills".to_string()
    } else {
        format!(
            "{} B spill stores, {} B spill loads",
            r.spill_store_bytes, r.spill_load_bytes
        )
    };
    let stack = if r.stack_frame_bytes > 0 {
        format!(" ({} B stack)", r.stack_frame_bytes)
    } else {
        String::new()
    };
    let mut out = format!(
        "ptxas {}: {} registers/thread, {spills}{stack}, {} B static shared\n",
        r.sass_target, r.registers_per_thread, r.static_shared_bytes
    );
    let per_cc: Vec<String> = r
        .occupancy
        .iter()
        .map(|c| match (&c.theoretical, &c.error) {
            (Some(o), _) => format!(
                "CC {} {} % ({} block{}, {}/{} warps; limited by {})",
                c.cc,
                percent(o.occupancy),
                o.blocks_per_sm,
                if o.blocks_per_sm == 1 { "" } else { "s" },
                o.warps_per_sm,
                o.max_warps_per_sm,
                o.limited_by
                    .iter()
                    .map(|l| l.name())
                    .collect::<Vec<_>>()
                    .join(" and ")
            ),
            (None, e) => format!("CC {} cannot run: {}", c.cc, e.as_deref().unwrap_or("?")),
        })
        .collect();
    let dynamic = if r.dynamic_shared_bytes > 0 {
        format!(", {} B dynamic shared", r.dynamic_shared_bytes)
    } else {
        String::new()
    };
    out.push_str(&format!(
        "theoretical occupancy ({} threads/block{dynamic}): {}\n",
        r.threads_per_block,
        per_cc.join(" · ")
    ));
    out
}

/// 0.75 → "75", 0.625 → "62.5", 2/3 → "66.7".
fn percent(x: f64) -> String {
    let p = format!("{:.1}", x * 100.0);
    p.strip_suffix(".0").map(str::to_string).unwrap_or(p)
}

#[cfg(test)]
mod tests {
    use super::*;
    use warpscope_model::arch::lookup;
    use warpscope_model::ComputeCapability as Cc;

    #[test]
    fn header_names_registers_spills_and_each_ccs_occupancy() {
        let p = PtxasFigures {
            sass_target: "sm_90".into(),
            registers: 64,
            spill_store_bytes: 8,
            spill_load_bytes: 4,
            stack_bytes: 16,
            shared_bytes: 0,
        };
        let archs = [
            lookup(Cc::new(9, 0)).unwrap(),
            lookup(Cc::new(8, 6)).unwrap(),
        ];
        let r = KernelResources::new(&p, [256, 1, 1], 0, &archs);
        // 9.0: 64 registers → 2048 per warp → 32 warps → 4 blocks of 8 = 50 %.
        // 8.6: the same 32 warps of 48 = 66.7 %.
        assert_eq!(
            render_header(&r),
            "ptxas sm_90: 64 registers/thread, 8 B spill stores, 4 B spill loads (16 B stack), 0 B static shared\n\
             theoretical occupancy (256 threads/block): CC 9.0 50 % (4 blocks, 32/64 warps; limited by registers) · CC 8.6 66.7 % (4 blocks, 32/48 warps; limited by registers)\n"
        );
        // No spills and no stack: said in two words.
        let quiet = PtxasFigures {
            spill_store_bytes: 0,
            spill_load_bytes: 0,
            stack_bytes: 0,
            ..p.clone()
        };
        let r = KernelResources::new(&quiet, [256, 1, 1], 0, &archs[..1]);
        assert!(render_header(&r)
            .starts_with("ptxas sm_90: 64 registers/thread, no spills, 0 B static shared\n"));
        // 1024 threads × 64 registers fit 9.0 exactly; 72 do not.
        let p = PtxasFigures { registers: 72, ..p };
        let r = KernelResources::new(&p, [1024, 1, 1], 0, &archs[..1]);
        assert!(r.occupancy[0].theoretical.is_none());
        assert!(render_header(&r).contains("CC 9.0 cannot run: the block needs 73728 registers"));
    }
}
