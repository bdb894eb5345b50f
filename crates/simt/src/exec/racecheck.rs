//! racecheck: shared-memory data races between the warps of a block, as compute-sanitizer's
//! racecheck reports them ("Race reported between Write access at … and Read access at …"):
//! two accesses to one shared byte by threads of two different warps, at least one of them a
//! write, with no block barrier between them. CUDA orders shared-memory accesses of
//! different threads only through a barrier (`__syncthreads()`: "all global and shared
//! memory accesses made by these threads prior to __syncthreads() are visible to all threads
//! in the block", CUDA C++ Programming Guide "Synchronization Functions"); the PTX memory
//! model calls two conflicting accesses that no synchronization orders a data race, whose
//! values are undefined [PTX ISA §8.2 "Memory consistency model", "Data race"].
//!
//! How: every 4-byte word of shared memory holds its last write and up to two reads by
//! different warps, each with the bytes it touched (overlap is decided byte by byte) and its
//! *interval*: the number of block barriers (`bar.sync`/`barrier.sync` without a thread
//! count) the accessing warp had passed. All threads of the block take part in such a
//! barrier, so two accesses are ordered exactly when their warps had passed a different
//! number of barriers: the k-th barrier each warp passes is one and the same. Two accesses
//! in one interval by different warps race.
//!
//! - Atomics (`atom`/`red` on shared) do not race with each other (compute-sanitizer does not
//!   report them); an atomic and a plain access do.
//! - Accesses of one warp never race with each other here: the lanes of one instruction run
//!   together, and later instructions of the warp see its earlier ones (within a warp the
//!   executor runs in lockstep; `__syncwarp()` code is the user's care). So one `st.shared`
//!   whose lanes write one byte with different values (one lane wins [PTX ISA §8.2]) is not
//!   reported: its values are not known when no memory image is kept.
//! - The kind: the executor runs a block's warps one after another up to each barrier, so
//!   which access came first is an artefact of that order. The hazard is named by the order
//!   the warps would meet the two accesses if they ran in lockstep: each warp's instructions
//!   since its last barrier (its *time*). The earlier one first: a write then a read is RAW
//!   (read after write: the read may see the old value), a read then a write WAR (the write
//!   may change the value before it is read), two writes WAW; equal times keep the run order.
//!
//! Kernels that synchronize otherwise (mbarriers, `cp.async.bulk`/TMA completion, barriers
//! with a thread count, `bar.arrive`, the cluster barrier, or memory itself: fences,
//! acquire/release operations and `nanosleep` back-offs, as software barriers, flags and
//! locks use them, `cuda::barrier` before CC 8.0 among them) are not checked: their order
//! is not the barrier count, and a race reported there could be none
//! ([`racecheck_skip_reason`]).

use super::checks::each_lane;
use super::lanes;
use crate::decode::Program;
use crate::instr::Instr;
use warpscope_model::{Op, WARP_SIZE};

/// The hazard of a race, by which access the warps would meet first in lockstep.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Hazard {
    /// Read after write: a write, then a read of its bytes by another warp.
    Raw,
    /// Write after read: a read, then a write of its bytes by another warp.
    War,
    /// Write after write: two writes of one byte by two warps.
    Waw,
}

impl Hazard {
    /// `RAW`, `WAR` or `WAW`, as compute-sanitizer's hazard reports name them.
    pub fn name(self) -> &'static str {
        match self {
            Hazard::Raw => "RAW",
            Hazard::War => "WAR",
            Hazard::Waw => "WAW",
        }
    }
}

/// What an access did to shared memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum AccessKind {
    Read,
    Write,
    /// An atomic read-modify-write (`atom`/`red`, a bulk copy's reduction).
    Atomic,
}

impl AccessKind {
    /// `read`, `write` or `atomic`.
    pub fn name(self) -> &'static str {
        match self {
            AccessKind::Read => "read",
            AccessKind::Write => "write",
            AccessKind::Atomic => "atomic",
        }
    }
}

/// One side of a race: the access's site ([`crate::Program::sites`]) and what it did.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(super) struct Side {
    pub site: u32,
    pub kind: AccessKind,
}

/// A race as found: the earlier access (in lockstep order), the later one, the hazard.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(super) struct RaceKey {
    pub hazard: Hazard,
    pub first: Side,
    pub second: Side,
}

/// Where a race was first found: the warps of the two sides and the shared byte.
#[derive(Clone, Copy, Debug)]
pub(super) struct RaceSeen {
    pub first_warp: u32,
    pub second_warp: u32,
    /// Byte offset in the block's shared memory.
    pub offset: u64,
}

/// One access as a shared word remembers it. `epoch` 0: none.
#[derive(Clone, Copy, Default)]
struct Acc {
    /// The block's first interval is [`Shadow::base`]; each barrier a warp passes adds one.
    epoch: u32,
    /// The access's site ([`crate::Program::sites`]).
    site: u32,
    /// The warp's instructions since its last barrier (saturated).
    time: u32,
    warp: u16,
    atomic: bool,
    /// The bytes of the word it touched (bit i: byte i).
    bytes: u8,
}

/// A 4-byte word of shared memory: its last write and up to two reads of the last write's
/// interval or later, by different warps (two are enough to know whether a warp other than
/// a writer read it), each with the bytes it touched, so overlap is decided byte by byte.
/// Accesses of one warp in one interval merge into one record; when two warps touch
/// disjoint bytes of one word in one interval, the word keeps the later (a race with the
/// earlier can then be missed, never made up).
#[derive(Clone, Copy, Default)]
struct Cell {
    write: Acc,
    read: Acc,
    read2: Acc,
}

/// The racecheck state of a worker's running block, reused from block to block: stale
/// cells are those of an older block, told apart by their interval numbers.
pub(super) struct Shadow {
    /// One per 4-byte word.
    cells: Vec<Cell>,
    bytes: usize,
    /// The absolute interval number of the running block's first interval.
    base: u32,
    /// Per warp of the block: barriers passed.
    passed: Vec<u32>,
    /// Per warp: its time is `since[w] + (steps − turn_start)` while it runs (wrapping).
    since: Vec<u64>,
    /// The warp running now and the block's step count when its turn began.
    turn: Option<(u32, u64)>,
}

impl Shadow {
    /// A shadow of `bytes` bytes of shared memory.
    pub fn new(bytes: usize) -> Shadow {
        Shadow {
            cells: vec![Cell::default(); bytes.div_ceil(4)],
            bytes,
            base: 0,
            passed: Vec::new(),
            since: Vec::new(),
            turn: None,
        }
    }

    /// Bytes of shared memory the shadow covers.
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// Starts a block of `warps` warps: its intervals are numbered after every earlier
    /// block's, so the cells need no clearing (but when the numbers run out).
    pub fn begin_block(&mut self, warps: usize) {
        let used = self.passed.iter().copied().max().unwrap_or(0);
        let next = self.base as u64 + used as u64 + 1;
        if next >= (u32::MAX / 2) as u64 {
            self.cells.fill(Cell::default());
            self.base = 1;
        } else {
            self.base = next as u32;
        }
        self.passed.clear();
        self.passed.resize(warps, 0);
        self.since.clear();
        self.since.resize(warps, 0);
        self.turn = None;
    }

    /// Warp `w` starts a turn at the block's step count `steps`.
    pub fn turn(&mut self, w: u32, steps: u64) {
        if let Some((prev, start)) = self.turn {
            if let Some(s) = self.since.get_mut(prev as usize) {
                *s = s.wrapping_add(steps.wrapping_sub(start));
            }
        }
        self.turn = Some((w, steps));
    }

    /// Warp `w` passes a block barrier at step `steps`: a new interval, its time from 0.
    pub fn barrier(&mut self, w: u32, steps: u64) {
        let start = self.turn.map_or(steps, |(_, s)| s);
        if let (Some(p), Some(s)) = (
            self.passed.get_mut(w as usize),
            self.since.get_mut(w as usize),
        ) {
            *p = p.saturating_add(1);
            *s = 0u64.wrapping_sub(steps.wrapping_sub(start));
        }
    }

    /// The shared access of warp `w` (site `site`, `op`, `width` bytes at each lane of
    /// `mask`'s offset in `addrs`) at step `steps`: the races it closes, each once (the first
    /// byte found), handed to `found`. Bytes outside the shadow are left alone (the access
    /// was checked against the block's shared memory before).
    #[allow(clippy::too_many_arguments)]
    pub fn access(
        &mut self,
        w: u32,
        site: u32,
        op: Op,
        width: u32,
        mask: u32,
        addrs: &[u64; WARP_SIZE],
        steps: u64,
        found: &mut dyn FnMut(RaceKey, RaceSeen),
    ) {
        let kind = match op {
            Op::Load => AccessKind::Read,
            Op::Store => AccessKind::Write,
            Op::Atomic => AccessKind::Atomic,
            Op::Prefetch => return,
        };
        let (Some(&passed), Some(&since)) =
            (self.passed.get(w as usize), self.since.get(w as usize))
        else {
            return;
        };
        let start = self.turn.map_or(steps, |(_, s)| s);
        let time = since.wrapping_add(steps.wrapping_sub(start));
        let me = Acc {
            epoch: self.base.saturating_add(passed),
            site,
            time: time.min(u32::MAX as u64) as u32,
            warp: w as u16,
            atomic: kind == AccessKind::Atomic,
            bytes: 0,
        };
        // The races of this access, by key, each reported once.
        let mut seen: [Option<RaceKey>; 4] = [None; 4];
        let mut report = |key: RaceKey, me_first: bool, other: &Acc, offset: u64| {
            if seen.contains(&Some(key)) {
                return;
            }
            if let Some(slot) = seen.iter_mut().find(|s| s.is_none()) {
                *slot = Some(key);
            }
            let (first_warp, second_warp) = if me_first {
                (w, other.warp as u32)
            } else {
                (other.warp as u32, w)
            };
            found(
                key,
                RaceSeen {
                    first_warp,
                    second_warp,
                    offset,
                },
            );
        };
        // Whole words when every lane is word-aligned and inside (the common case).
        let (mut bits, mut top) = (width as u64, 0u64);
        each_lane(mask, |lane| {
            bits |= addrs[lane];
            top = top.max(addrs[lane]);
        });
        let words = (width / 4) as usize;
        if bits % 4 == 0 && (top as usize / 4).saturating_add(words) <= self.cells.len() {
            let whole = Acc { bytes: 0xF, ..me };
            let mut left = mask;
            // The addresses earlier lanes of this access visited, by their low bits (a
            // collision only forgets one): a lane at an address already visited (a broadcast
            // read, two half-warps reading one row) finds and leaves what that lane did,
            // the same races, reported once.
            let mut visited = [u64::MAX; 64];
            while left != 0 {
                let lane = left.trailing_zeros() as usize;
                left &= left - 1;
                let a = addrs[lane];
                let slot = &mut visited[((a / 4) % 64) as usize];
                if *slot == a {
                    continue;
                }
                *slot = a;
                let first = (a / 4) as usize;
                for (k, cell) in self.cells[first..first + words].iter_mut().enumerate() {
                    if !remember_if_quiet(cell, whole, kind) {
                        hazards(cell, &whole, kind, a + 4 * k as u64, &mut report);
                        remember(cell, whole, kind);
                    }
                }
            }
            return;
        }
        // Word by word, with the bytes each lane touches.
        for lane in lanes(mask) {
            let (a, end) = (addrs[lane], addrs[lane].saturating_add(width as u64));
            let mut word = a / 4;
            while word * 4 < end {
                let lo = (word * 4).max(a) - word * 4;
                let hi = (word * 4 + 4).min(end) - word * 4;
                let m = ((1u8 << hi) - 1) & !((1u8 << lo) - 1);
                let Some(cell) = self.cells.get_mut(word as usize) else {
                    break;
                };
                visit(cell, Acc { bytes: m, ..me }, kind, word * 4, &mut report);
                word += 1;
            }
        }
    }
}

/// Access `me` (`kind`, its bytes of the word in `me.bytes`) of the word at byte `at`:
/// checked against what the word remembers, then remembered.
#[inline(always)]
fn visit(
    cell: &mut Cell,
    me: Acc,
    kind: AccessKind,
    at: u64,
    report: &mut dyn FnMut(RaceKey, bool, &Acc, u64),
) {
    if !remember_if_quiet(cell, me, kind) {
        hazards(cell, &me, kind, at, report);
        remember(cell, me, kind);
    }
}

/// The common case: the word holds nothing of another warp in this interval that `me`
/// could race with; then `me` is remembered and the answer is `true`.
#[inline(always)]
fn remember_if_quiet(cell: &mut Cell, me: Acc, kind: AccessKind) -> bool {
    let quiet = |o: &Acc| o.epoch != me.epoch || o.warp == me.warp || o.bytes & me.bytes == 0;
    let q = if kind == AccessKind::Read {
        quiet(&cell.write)
    } else {
        quiet(&cell.write) && quiet(&cell.read) && quiet(&cell.read2)
    };
    if q {
        remember(cell, me, kind);
    }
    q
}

/// Remembers access `me` (`kind`) in its word.
#[inline(always)]
fn remember(cell: &mut Cell, me: Acc, kind: AccessKind) {
    if kind == AccessKind::Read {
        if cell.read.epoch != me.epoch {
            cell.read = me;
            cell.read2.epoch = 0;
        } else if cell.read.warp == me.warp {
            merge_into(&mut cell.read, &me);
        } else if cell.read2.epoch != me.epoch {
            cell.read2 = me;
        } else if cell.read2.warp == me.warp {
            merge_into(&mut cell.read2, &me);
        }
    } else if cell.write.epoch == me.epoch
        && cell.write.warp == me.warp
        && cell.write.atomic == me.atomic
    {
        merge_into(&mut cell.write, &me);
    } else {
        cell.write = me;
    }
}

/// Folds a later access of the same warp, interval and kind into `acc`: the bytes of both,
/// the later's instruction and time.
fn merge_into(acc: &mut Acc, later: &Acc) {
    let bytes = acc.bytes | later.bytes;
    *acc = Acc { bytes, ..*later };
}

/// The races between access `me` (`kind`, its bytes of the word at byte `word`) and what
/// `cell` remembers of the other warps, handed to `report(key, me first, other access,
/// byte)`.
#[cold]
#[inline(never)]
fn hazards(
    cell: &Cell,
    me: &Acc,
    kind: AccessKind,
    word: u64,
    report: &mut dyn FnMut(RaceKey, bool, &Acc, u64),
) {
    let conflicts = |o: &Acc| {
        o.epoch == me.epoch
            && o.warp != me.warp
            && !(o.atomic && me.atomic)
            && o.bytes & me.bytes != 0
    };
    let byte = |o: &Acc| word + (o.bytes & me.bytes).trailing_zeros() as u64;
    let w = &cell.write;
    if conflicts(w) {
        let other_kind = if w.atomic {
            AccessKind::Atomic
        } else {
            AccessKind::Write
        };
        let (key, me_first) = ordered(me, kind, w, other_kind);
        report(key, me_first, w, byte(w));
    }
    if kind != AccessKind::Read {
        for r in [&cell.read, &cell.read2] {
            if conflicts(r) {
                let (key, me_first) = ordered(me, kind, r, AccessKind::Read);
                report(key, me_first, r, byte(r));
            }
        }
    }
}

/// The race between this access (`me`, `kind`) and an earlier one of another warp (`o`,
/// `okind`) in one interval: ordered by time, the run order (`o` first) breaking ties; and
/// whether `me` is the first.
fn ordered(me: &Acc, kind: AccessKind, o: &Acc, okind: AccessKind) -> (RaceKey, bool) {
    let mine = Side {
        site: me.site,
        kind,
    };
    let other = Side {
        site: o.site,
        kind: okind,
    };
    let me_first = me.time < o.time;
    let (first, second) = if me_first {
        (mine, other)
    } else {
        (other, mine)
    };
    let hazard = match (first.kind, second.kind) {
        (AccessKind::Read, _) => Hazard::War,
        (_, AccessKind::Read) => Hazard::Raw,
        _ => Hazard::Waw,
    };
    (
        RaceKey {
            hazard,
            first,
            second,
        },
        me_first,
    )
}

/// Why racecheck cannot check `prog`, or `None` when it can: the kernel orders shared
/// accesses by other means than block barriers (see the module's notes).
pub(super) fn racecheck_skip_reason(prog: &Program) -> Option<String> {
    if !prog.counted_bars.is_empty() {
        return Some("it uses barriers with a thread count or bar.arrive (named barriers for part of the block)".into());
    }
    let found = prog.insts.iter().find_map(|i| match &i.instr {
        Instr::Mbarrier { .. } | Instr::MbarrierWait { .. } => {
            Some("it synchronizes through mbarriers (cuda::barrier, TMA or cp.async.bulk completion)")
        }
        Instr::TensorCopy(_) | Instr::CpBulk { .. } | Instr::AsyncStore(_) => {
            Some("it uses bulk asynchronous copies (TMA, cp.async.bulk, st.async) that complete on mbarriers")
        }
        Instr::ClusterArrive | Instr::ClusterWait => {
            Some("it synchronizes through the cluster barrier")
        }
        _ => None,
    });
    if let Some(why) = found {
        return Some(why.into());
    }
    prog.memory_sync.map(|line| {
        format!("it may synchronize its warps through memory (PTX line {line} has a fence, an acquire/release operation or a nanosleep: a software barrier, flag or lock, as cuda::barrier is before CC 8.0)")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(shadow: &mut Shadow, w: u32, site: u32, op: Op, off: u64, steps: u64) -> Vec<RaceKey> {
        let mut addrs = [0u64; WARP_SIZE];
        addrs[0] = off;
        let mut out = Vec::new();
        shadow.turn(w, steps);
        shadow.access(w, site, op, 4, 1, &addrs, steps, &mut |k, _| out.push(k));
        out
    }

    #[test]
    fn two_warps_in_one_interval_race_and_a_barrier_orders_them() {
        let mut s = Shadow::new(64);
        s.begin_block(2);
        // Warp 0 writes byte 0..4 at its time 0, warp 1 reads it at its time 0: RAW.
        assert!(run(&mut s, 0, 10, Op::Store, 0, 0).is_empty());
        let r = run(&mut s, 1, 20, Op::Load, 0, 1);
        assert_eq!(r.len(), 1);
        assert_eq!(r[0].hazard, Hazard::Raw);
        assert_eq!((r[0].first.site, r[0].second.site), (10, 20));
        // After both pass a barrier, warp 1 writes it: ordered after warp 1's read, and
        // warp 0's write was in the interval before.
        s.barrier(1, 1);
        s.turn(0, 2);
        s.barrier(0, 2);
        assert!(run(&mut s, 1, 30, Op::Store, 0, 3).is_empty());
        // Warp 0 reads byte 2 (one of the four) in the same interval: RAW again.
        let r = run(&mut s, 0, 40, Op::Load, 2, 4);
        assert_eq!(r.len(), 1);
        assert_eq!((r[0].first.site, r[0].second.site), (30, 40));
        // Byte-accurate: byte 4 was never written, nothing races.
        assert!(run(&mut s, 0, 40, Op::Load, 4, 5).is_empty());
    }

    #[test]
    fn atomics_do_not_race_with_each_other_and_same_warp_never_races() {
        let mut s = Shadow::new(16);
        s.begin_block(2);
        assert!(run(&mut s, 0, 1, Op::Atomic, 0, 0).is_empty());
        assert!(run(&mut s, 1, 1, Op::Atomic, 0, 1).is_empty());
        // A plain read of an atomically updated word in the same interval races.
        let r = run(&mut s, 0, 2, Op::Load, 0, 2);
        assert_eq!(r.len(), 1);
        assert_eq!(r[0].first.kind, AccessKind::Atomic);
        // Warp 0 writes what it read: same warp, and warp 1's atomic races as WAW.
        let r = run(&mut s, 0, 3, Op::Store, 0, 3);
        assert_eq!(r.len(), 1);
        assert_eq!(r[0].hazard, Hazard::Waw);
    }

    #[test]
    fn the_hazard_follows_lockstep_time_not_run_order() {
        let mut s = Shadow::new(16);
        s.begin_block(2);
        // Warp 0 reads at its time 5; warp 1, run later, writes at its time 2: in lockstep
        // the write comes first, so the read may miss it: RAW, the write first.
        s.turn(0, 0);
        let mut addrs = [0u64; WARP_SIZE];
        let mut out = Vec::new();
        s.access(0, 7, Op::Load, 4, 1, &addrs, 5, &mut |k, _| out.push(k));
        s.turn(1, 10);
        addrs[0] = 0;
        s.access(1, 9, Op::Store, 4, 1, &addrs, 12, &mut |k, _| out.push(k));
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].hazard, Hazard::Raw);
        assert_eq!((out[0].first.site, out[0].second.site), (9, 7));
    }

    #[test]
    fn neighbouring_bytes_of_two_warps_do_not_race() {
        let mut s = Shadow::new(16);
        s.begin_block(2);
        let mut addrs = [0u64; WARP_SIZE];
        let mut out = Vec::new();
        // Warp 0 writes byte 1, warp 1 bytes 2-3 of the same word: no byte in common.
        addrs[0] = 1;
        s.turn(0, 0);
        s.access(0, 1, Op::Store, 1, 1, &addrs, 0, &mut |k, _| out.push(k));
        addrs[0] = 2;
        s.turn(1, 1);
        s.access(1, 2, Op::Store, 2, 1, &addrs, 1, &mut |k, _| out.push(k));
        assert!(out.is_empty());
        // Warp 0 reads byte 3: warp 1 wrote it.
        addrs[0] = 3;
        s.turn(0, 2);
        s.access(0, 3, Op::Load, 1, 1, &addrs, 2, &mut |k, s| {
            out.push((k, s).0)
        });
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].first.site, 2);
    }

    #[test]
    fn a_new_block_starts_clean() {
        let mut s = Shadow::new(16);
        s.begin_block(2);
        run(&mut s, 0, 1, Op::Store, 0, 0);
        s.begin_block(2);
        assert!(run(&mut s, 1, 2, Op::Load, 0, 0).is_empty());
    }
}
