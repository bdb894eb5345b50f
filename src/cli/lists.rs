//! `warpscope archs` and `warpscope gpus`: the compute capabilities and GPUs warpscope knows.

use super::emit;
use anyhow::Result;
use warpscope::model::arch;

/// `warpscope gpus`.
pub fn gpus() -> Result<()> {
    let mut out = String::new();
    for g in warpscope::traffic::gpus::all() {
        out.push_str(&format!(
            "{:18} CC {:5} {:4} SMs  L2 {:>6} KiB  {:7.1} GB/s  {:5}-bit {}  [{}]\n",
            g.name,
            g.cc.to_string(),
            g.sms,
            g.l2_bytes / 1024,
            g.dram_gbps,
            g.bus_bits,
            g.memory,
            g.aliases.join(", ")
        ));
    }
    emit(None, &out)
}

/// `warpscope archs`.
pub fn archs() -> Result<()> {
    let mut out = String::new();
    for a in arch::all() {
        out.push_str(&format!(
            "{:5} {:10} {:?}\n",
            a.cc.to_string(),
            a.name,
            a.family
        ));
    }
    emit(None, &out)
}
