//! synccheck: a block barrier (`bar.sync`/`barrier.sync` without a thread count, CUDA's
//! `__syncthreads()`) that a warp reaches with only some of its non-exited lanes. The PTX
//! ISA requires every non-exited thread of the block to execute such a barrier
//! [PTX ISA §9.7.13.1 "bar, barrier": "all threads in the CTA participate"]; CUDA calls
//! `__syncthreads()` in code that not all threads of the block reach undefined behaviour
//! [CUDA C++ Programming Guide §10.6 "Synchronization Functions"]; compute-sanitizer's
//! synccheck reports it as "Barrier error detected. Divergent thread(s) in warp". Exited
//! lanes do not count (an early `return` before the barrier is allowed).

use std::collections::BTreeMap;
use std::sync::Mutex;

use super::{BlockCtx, Warp};
use crate::error::At;

/// One barrier site that some warp reached with part of its lanes, summed over the run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SyncFinding {
    /// The barrier instruction (its PTX line and, with `.loc`, its source position).
    pub at: At,
    /// The first block (in run order) where it happened (x, y, z).
    pub block: [u32; 3],
    /// The warp of that block (threads `32·warp … 32·warp + 31`).
    pub warp: u32,
    /// That warp's lanes that arrived (bit i: lane i).
    pub arrived: u32,
    /// That warp's non-exited lanes that did not arrive (bit i: lane i).
    pub missing: u32,
    /// Warp executions of the barrier with lanes missing, over the run.
    pub warps: u64,
    /// Blocks in which it happened at least once.
    pub blocks: u64,
}

/// The synccheck findings of a run, filled by the threads that run blocks; one entry per
/// barrier instruction. Give one in [`super::Launch::findings`] and read it after the run.
#[derive(Debug, Default)]
pub struct Findings {
    /// Instruction index → (run-order slot of the first block, finding).
    sync: Mutex<BTreeMap<u32, (u64, SyncFinding)>>,
}

impl Findings {
    /// The divergent-barrier findings, by instruction order (deterministic: the first
    /// block is the lowest in run order whatever thread ran it).
    pub fn sync(&self) -> Vec<SyncFinding> {
        let m = self.sync.lock().unwrap_or_else(|e| e.into_inner());
        m.values().map(|(_, f)| f.clone()).collect()
    }
}

impl BlockCtx<'_> {
    /// Checks a warp arriving at the barrier `pc` with lanes `exec`: records a finding when
    /// some non-exited lane of the warp is not among them (off the hot path: barriers only).
    pub(super) fn check_barrier(&mut self, warp: &Warp, pc: u32, exec: u32) {
        let Some(findings) = &self.launch.findings else {
            return;
        };
        let missing = warp.live & !warp.exited & !exec;
        if missing == 0 || self.prog.counted_bars.binary_search(&pc).is_ok() {
            return;
        }
        let new_in_block = !self.divergent_bars.contains(&pc);
        if new_in_block {
            self.divergent_bars.push(pc);
        }
        let at = self.at(pc);
        let mut m = findings.sync.lock().unwrap_or_else(|e| e.into_inner());
        let (slot, f) = m.entry(pc).or_insert_with(|| {
            (
                self.slot,
                SyncFinding {
                    at,
                    block: self.block,
                    warp: warp.index,
                    arrived: exec,
                    missing,
                    warps: 0,
                    blocks: 0,
                },
            )
        });
        if self.slot < *slot || (self.slot == *slot && warp.index < f.warp) {
            *slot = self.slot;
            (f.block, f.warp, f.arrived, f.missing) = (self.block, warp.index, exec, missing);
        }
        f.warps += 1;
        f.blocks += new_in_block as u64;
    }
}
