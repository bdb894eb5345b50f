//! `mbarrier` objects [PTX ISA §9.7.13.15]: an 8-byte object in shared memory with a phase,
//! a pending arrival count, an expected arrival count and a transaction count. A phase
//! completes when its pending arrivals and its transaction count both reach zero; the next
//! phase then expects the expected count again.
//!
//! The hardware's encoding of the 8 bytes is opaque; warpscope keeps the state in them in its
//! own: bits 0–19 pending arrivals, 20–39 expected arrivals, 40–61 the transaction count
//! (signed: `complete_tx` may come before `expect_tx`), bit 63 the phase parity. The state
//! token `arrive` returns is the parity of the phase it arrived on.

use crate::error::{Error, Result};
use crate::instr::{MbarOp, MemSpace, Src};

use super::{get, lanes, BlockCtx, Warp};
use crate::decode::window;
use warpscope_model::WARP_SIZE;

const COUNT_MASK: u64 = (1 << 20) - 1;
const TX_BITS: u32 = 22;

/// One barrier's state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct State {
    pub pending: u64,
    pub expected: u64,
    pub tx: i64,
    pub parity: u64,
}

impl State {
    fn decode(v: u64) -> State {
        let tx = (v >> 40) & ((1 << TX_BITS) - 1);
        State {
            pending: v & COUNT_MASK,
            expected: (v >> 20) & COUNT_MASK,
            tx: ((tx << (64 - TX_BITS)) as i64) >> (64 - TX_BITS),
            parity: v >> 63,
        }
    }

    fn encode(self) -> u64 {
        (self.pending & COUNT_MASK)
            | (self.expected & COUNT_MASK) << 20
            | ((self.tx as u64) & ((1 << TX_BITS) - 1)) << 40
            | (self.parity & 1) << 63
    }

    /// Completes the phase when nothing is pending.
    fn settle(&mut self) {
        if self.pending == 0 && self.tx == 0 {
            self.parity ^= 1;
            self.pending = self.expected;
        }
    }
}

/// A barrier: the cluster rank of its block (`None`: the executing block) and its
/// shared-memory offset there.
type Mbar = (Option<u32>, u64);

/// What a wait instruction found.
pub(super) enum Wait {
    /// Every executing lane's phase is complete.
    Done,
    /// Some lane's phase is still open: (shared offset, state) of the first such barrier.
    Open(u64, State),
}

impl BlockCtx<'_> {
    /// The block (cluster rank, `None`: the executing block) and shared-memory offset of a
    /// barrier address (a shared-window, `shared::cluster` or generic address): an
    /// `mbarrier.arrive.shared::cluster` may name a barrier in another block of the cluster
    /// (`exec/cluster.rs`).
    fn mbar_offset(
        &self,
        space: MemSpace,
        a: u64,
        pc: u32,
        warp: &Warp,
        lane: usize,
    ) -> Result<Mbar> {
        let raw = match space {
            MemSpace::Generic if a >> 60 == 1 => a - window::SHARED,
            MemSpace::Generic => u64::MAX,
            _ => a & 0xFFFF_FFFF,
        };
        let (rank, off) = match self.target(raw) {
            _ if raw == u64::MAX => (None, raw),
            super::cluster::Target::Own(o) => (None, o),
            super::cluster::Target::Remote(r, o) if r < self.cluster_blocks() => (Some(r), o),
            super::cluster::Target::Remote(..) => (None, u64::MAX),
        };
        if off
            .checked_add(8)
            .is_none_or(|end| end > self.shared.len() as u64)
            || off % 8 != 0
        {
            return Err(Error::Fault {
                at: self.at(pc),
                msg: format!(
                    "mbarrier at address {a:#x} is not an 8-byte-aligned object in the block's {} bytes of shared memory",
                    self.shared.len()
                ),
                thread: self.thread(warp, lane),
                block: self.block,
            });
        }
        Ok((rank, off))
    }

    fn mbar_state(&self, (rank, off): Mbar) -> State {
        State::decode(crate::memory::read_flat(self.image(rank), off, 8))
    }

    fn set_mbar_state(&mut self, (rank, off): Mbar, s: State) {
        if rank.is_none() {
            self.check_raw_write(off, 8);
        }
        crate::memory::write_flat(self.image_mut(rank), off, 8, s.encode());
    }

    /// Runs an `mbarrier` operation that does not wait, lane by lane in lane order.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn mbarrier(
        &mut self,
        warp: &mut Warp,
        pc: u32,
        exec: u32,
        op: MbarOp,
        space: MemSpace,
        d: Option<u32>,
        addr: (Option<u32>, i64),
        count: Option<Src>,
    ) -> Result<()> {
        for lane in lanes(exec) {
            let base = addr
                .0
                .map_or(0, |r| warp.regs[r as usize * WARP_SIZE + lane]);
            let a = base.wrapping_add(addr.1 as u64);
            let bar = self.mbar_offset(space, a, pc, warp, lane)?;
            let off = bar.1;
            let n = count.map(|c| get(warp, c, lane)).unwrap_or(1);
            let mut s = self.mbar_state(bar);
            let mut out = None;
            match op {
                MbarOp::Init => {
                    s = State {
                        pending: n & COUNT_MASK,
                        expected: n & COUNT_MASK,
                        tx: 0,
                        parity: 0,
                    }
                }
                MbarOp::Inval => s = State::decode(0),
                MbarOp::ExpectTx => s.tx += n as i64,
                MbarOp::CompleteTx => {
                    s.tx -= n as i64;
                    s.settle();
                }
                MbarOp::Arrive {
                    drop,
                    expect_tx,
                    no_complete: _,
                } => {
                    out = Some(s.parity);
                    let arrivals = if expect_tx { 1 } else { n };
                    if expect_tx {
                        s.tx += n as i64;
                    }
                    if s.pending < arrivals {
                        return Err(Error::Fault {
                            at: self.at(pc),
                            msg: format!(
                                "mbarrier at shared offset {off}: {arrivals} arrival(s) on a phase with {} pending (more threads arrive than the barrier was initialized for)",
                                s.pending
                            ),
                            thread: self.thread(warp, lane),
                            block: self.block,
                        });
                    }
                    s.pending -= arrivals;
                    if drop {
                        s.expected = s.expected.saturating_sub(arrivals);
                    }
                    s.settle();
                }
            }
            self.set_mbar_state(bar, s);
            if let (Some(d), Some(v)) = (d, out) {
                warp.regs[d as usize * WARP_SIZE + lane] = v;
            }
        }
        if let Some(d) = d {
            warp.uni[d as usize] = false;
        }
        Ok(())
    }

    /// `test_wait`/`try_wait`: whether each executing lane's phase (the token's, or the one
    /// of the given parity) has completed; writes the predicate `d`.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn mbarrier_wait(
        &mut self,
        warp: &mut Warp,
        pc: u32,
        exec: u32,
        space: MemSpace,
        d: Option<u32>,
        addr: (Option<u32>, i64),
        token: Src,
    ) -> Result<Wait> {
        let mut open = None;
        for lane in lanes(exec) {
            let base = addr
                .0
                .map_or(0, |r| warp.regs[r as usize * WARP_SIZE + lane]);
            let a = base.wrapping_add(addr.1 as u64);
            let bar = self.mbar_offset(space, a, pc, warp, lane)?;
            let (off, s) = (bar.1, self.mbar_state(bar));
            // A phase of parity p is complete once the barrier's current parity differs.
            let done = s.parity != get(warp, token, lane) & 1;
            if let Some(d) = d {
                warp.regs[d as usize * WARP_SIZE + lane] = done as u64;
            }
            if !done && open.is_none() {
                open = Some((off, s));
            }
        }
        if let Some(d) = d {
            warp.uni[d as usize] = false;
        }
        Ok(match open {
            None => Wait::Done,
            Some((off, s)) => Wait::Open(off, s),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::State;

    #[test]
    fn state_round_trips_with_a_negative_transaction_count() {
        let s = State {
            pending: 127,
            expected: 128,
            tx: -4096,
            parity: 1,
        };
        assert_eq!(State::decode(s.encode()), s);
    }
}
