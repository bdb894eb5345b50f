//! synccheck: a block barrier (`bar.sync`/`barrier.sync` without a thread count, CUDA's
//! `__syncthreads()`) that a warp reaches with only some of its non-exited lanes. The PTX
//! ISA requires every non-exited thread of the block to execute such a barrier
//! [PTX ISA §9.7.13.1 "bar, barrier": "all threads in the CTA participate"]; CUDA calls
//! `__syncthreads()` in code that not all threads of the block reach undefined behaviour
//! [CUDA C++ Programming Guide "Synchronization Functions"]; compute-sanitizer's synccheck
//! reports it as "Barrier error detected. Divergent thread(s) in warp". Exited lanes do not
//! count, nor lanes that skipped the barrier on their way out (an early `return`).
//!
//! Whole warps that exit while the others wait at a barrier are no finding: `bar.sync`
//! makes a thread "wait for non-exited threads of all other warps participating in the
//! barrier to arrive" [PTX ISA §9.7.13.1], and on hardware
//! `__syncthreads()` waits for every warp "to either call `__syncthreads()` or terminate"
//! (Wong et al., *Demystifying GPU Microarchitecture through Microbenchmarking*, ISPASS
//! 2010), so `if (threadIdx.x >= n) return;` before a barrier is correct. The executor does
//! the same: a block's
//! barrier holds a warp until every unfinished warp has run up to a barrier or ended
//! (`exec/cluster.rs`).

use super::{BlockCtx, Warp};
use crate::error::At;
use crate::instr::Instr;

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

/// A barrier a warp reached with lanes missing: judged by what the missing lanes do next.
#[derive(Clone, Copy, Debug)]
pub(super) struct Pending {
    pc: u32,
    arrived: u32,
    /// Missing lanes not yet exited.
    missing: u32,
}

impl BlockCtx<'_> {
    /// A warp arrives at the barrier `pc` with lanes `exec`: when some non-exited lane of the
    /// warp is not among them, the barrier waits to be judged by what those lanes do next
    /// ([`BlockCtx::sync_step`]). Off the hot path: barriers only.
    pub(super) fn check_barrier(&mut self, warp: &mut Warp, pc: u32, exec: u32) {
        if self.launch.findings.is_none() {
            return;
        }
        if let Some(c) = &self.checks {
            c.borrow_mut().barrier(warp.index, self.steps);
        }
        let missing = warp.live & !warp.exited & !exec;
        if missing == 0 || self.prog.counted_bars.binary_search(&pc).is_ok() {
            return;
        }
        warp.sync_pending.push(Pending {
            pc,
            arrived: exec,
            missing,
        });
    }

    /// Judges the warp's pending barriers by the instruction its lanes `exec` run now. Lanes
    /// that skipped a barrier and then exit having done nothing but branch and compare
    /// predicates left early (an early `return`, which nvcc compiles as a branch to the
    /// kernel's `ret`): exited threads do not take part in a barrier. A missing lane that
    /// does anything else (a memory access, another barrier) makes the barrier a finding.
    pub(super) fn sync_step(&mut self, warp: &mut Warp, instr: &Instr, exec: u32) {
        let leaves = match instr {
            Instr::Exit => true,
            Instr::Ret => warp.frames.is_empty(),
            Instr::Bra { .. }
            | Instr::Nop
            | Instr::Setp { .. }
            | Instr::Set { .. }
            | Instr::Selp { .. }
            | Instr::Mov { .. } => return,
            _ => false,
        };
        let mut i = 0;
        while i < warp.sync_pending.len() {
            let p = &mut warp.sync_pending[i];
            if p.missing & exec == 0 {
                i += 1;
            } else if leaves {
                p.missing &= !exec;
                if p.missing == 0 {
                    warp.sync_pending.swap_remove(i);
                } else {
                    i += 1;
                }
            } else {
                let p = warp.sync_pending.swap_remove(i);
                self.record_barrier(warp.index, p);
            }
        }
    }

    /// Records a divergent barrier of warp `index`.
    fn record_barrier(&mut self, index: u32, p: Pending) {
        let Some(findings) = &self.launch.findings else {
            return;
        };
        let (pc, exec, missing) = (p.pc, p.arrived, p.missing);
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
                    warp: index,
                    arrived: exec,
                    missing,
                    warps: 0,
                    blocks: 0,
                },
            )
        });
        if self.slot < *slot || (self.slot == *slot && index < f.warp) {
            *slot = self.slot;
            (f.block, f.warp, f.arrived, f.missing) = (self.block, index, exec, missing);
        }
        f.warps += 1;
        f.blocks += new_in_block as u64;
    }
}
