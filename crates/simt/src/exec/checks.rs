//! The checks that find bugs in the user's kernel while it runs, as compute-sanitizer would
//! report them: synccheck (`exec/sync.rs`), racecheck (`exec/racecheck.rs`) and initcheck
//! (`exec/initcheck.rs`). [`Findings`] collects what every worker thread finds; [`Checks`]
//! is one worker's racecheck and initcheck state, moved into each block it runs.
//!
//! The executor calls in at four places, each one test of an `Option` when no findings are
//! asked for ([`super::Launch::findings`] `None`): a shared access handed to the sink
//! (`access.rs` `deliver`), a block barrier (`sync.rs` `check_barrier`), a warp's turn
//! (`cluster.rs`), and the writes to shared memory that are no warp access (`mbarrier.rs`,
//! `tcgen05.rs`).

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::sync::Mutex;

use super::initcheck::{self, InitSeen};
use super::racecheck::{self, AccessKind, Hazard, RaceKey, RaceSeen};
use super::sync::SyncFinding;
use super::{BlockCtx, Launch};
use crate::decode::Program;
use warpscope_model::{Space, WarpAccess};

/// What the checks of a run found, filled by the threads that run blocks: one entry per
/// instruction site (racecheck: per pair of sites and hazard). Give one in
/// [`super::Launch::findings`] and read it after the run.
#[derive(Debug, Default)]
pub struct Findings {
    /// synccheck: instruction index → (run-order slot of the first block, finding).
    pub(super) sync: Mutex<BTreeMap<u32, (u64, SyncFinding)>>,
    race: Mutex<BTreeMap<LineRace, (u64, RaceFinding)>>,
    init: Mutex<BTreeMap<Line, (u64, InitFinding)>>,
    notes: Mutex<Vec<String>>,
    /// Workers' states put back after their blocks, reused by the next chunk of blocks
    /// (a shadow is allocated once per worker, not per chunk). Boxed as a block holds them
    /// (`BlockCtx::checks`): they move between here and the blocks without a copy.
    #[allow(clippy::vec_box)]
    spare: Mutex<Vec<Box<RefCell<Checks>>>>,
    /// The line of each site, as the caller reports it ([`Findings::group_sites`]).
    site_lines: std::sync::OnceLock<Vec<Line>>,
}

/// A line: any pair of numbers that is equal for the sites of one reported line; by
/// default (`.file` index, line) of the site's `.loc`, or (`u32::MAX`, PTX line).
type Line = (u32, u32);

/// A race as reported: per pair of lines, their access kinds and the hazard.
type LineRace = (Hazard, Line, AccessKind, Line, AccessKind);

/// The line of `site`: the caller's grouping, else its `.loc` line, else its PTX line.
fn line_of(prog: &Program, lines: Option<&Vec<Line>>, site: u32) -> Line {
    if let Some(l) = lines.and_then(|v| v.get(site as usize)) {
        return *l;
    }
    match prog.sites.get(site as usize) {
        Some(s) => s.loc.map_or((u32::MAX, s.ptx_line), |(f, l, _)| (f, l)),
        None => (u32::MAX, u32::MAX),
    }
}

/// A shared-memory race (racecheck) summed over the run: two lines (see
/// [`Findings::group_sites`]) whose accesses to one shared byte by two warps of a block had
/// no block barrier between them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RaceFinding {
    /// RAW, WAR or WAW: the order the two warps would meet the accesses in lockstep
    /// (`exec/racecheck.rs`).
    pub hazard: Hazard,
    /// The later access of the two (the read of a RAW, the write of a WAR): its site (an
    /// index into [`crate::Program::sites`], the first seen of its line) and what it did.
    pub site: u32,
    pub access: AccessKind,
    /// Its instruction's 1-based line in the PTX.
    pub ptx_line: u32,
    /// The earlier access.
    pub other_site: u32,
    pub other_access: AccessKind,
    pub other_ptx_line: u32,
    /// The first block (in run order) where it happened (x, y, z).
    pub block: [u32; 3],
    /// That block's warps that made the later and the earlier access.
    pub warp: u32,
    pub other_warp: u32,
    /// The first shared byte found (offset in the block's shared memory).
    pub offset: u64,
    /// Warp accesses that closed such a race (the later of the two, in run order), over the
    /// run (the sampled blocks' with a sample).
    pub warps: u64,
    /// Blocks in which it happened at least once.
    pub blocks: u64,
}

/// A read of shared memory that no instruction of the block had written (initcheck),
/// summed over the run: one per line (see [`Findings::group_sites`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InitFinding {
    /// The reading access's site (an index into [`crate::Program::sites`], the first seen
    /// of its line), and its instruction's 1-based line in the PTX.
    pub site: u32,
    pub ptx_line: u32,
    /// A plain read, or an atomic (which reads before it writes).
    pub access: AccessKind,
    /// The first block (in run order) where it happened (x, y, z), and the warp.
    pub block: [u32; 3],
    pub warp: u32,
    /// That warp's lanes that read an unwritten byte (bit i: lane i).
    pub lanes: u32,
    /// The first unwritten byte those lanes read (offset in the block's shared memory).
    pub offset: u64,
    /// Warp accesses that read an unwritten byte, over the run.
    pub warps: u64,
    /// Blocks in which it happened at least once.
    pub blocks: u64,
}

impl Findings {
    /// The divergent-barrier findings, by instruction order (deterministic: the first
    /// block is the lowest in run order whatever thread ran it).
    pub fn sync(&self) -> Vec<SyncFinding> {
        let m = self.sync.lock().unwrap_or_else(|e| e.into_inner());
        m.values().map(|(_, f)| f.clone()).collect()
    }

    /// The races, by hazard and then by their lines.
    pub fn races(&self) -> Vec<RaceFinding> {
        let m = self.race.lock().unwrap_or_else(|e| e.into_inner());
        m.values().map(|(_, f)| f.clone()).collect()
    }

    /// The reads of unwritten shared memory, by line.
    pub fn uninitialized(&self) -> Vec<InitFinding> {
        let m = self.init.lock().unwrap_or_else(|e| e.into_inner());
        m.values().map(|(_, f)| f.clone()).collect()
    }

    /// What the checks could not check (a kernel racecheck leaves out, and why), each once.
    pub fn notes(&self) -> Vec<String> {
        self.notes.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Reports the sites whose entries of `lines` (one per site, [`crate::Program::sites`]
    /// order) are equal as one line: the user's source line a front end attributes each
    /// site to (code inlined from a header counts for the line that called it). Without
    /// it, a site's line is its `.loc` line, or its PTX line. Takes effect once, before
    /// the run; later calls are ignored.
    pub fn group_sites(&self, lines: Vec<(u32, u32)>) {
        let _ = self.site_lines.set(lines);
    }

    fn note(&self, text: String) {
        let mut n = self.notes.lock().unwrap_or_else(|e| e.into_inner());
        if !n.contains(&text) {
            n.push(text);
        }
    }
}

/// Counts of one key over a worker's blocks: where it was first seen and how often.
struct Seen<S> {
    slot: u64,
    block: [u32; 3],
    first: S,
    warps: u64,
    blocks: u64,
}

/// One worker's findings of one kind, keyed, with the keys already hit in the running
/// block (to count blocks once).
struct Tally<K, S> {
    map: BTreeMap<K, Seen<S>>,
    in_block: Vec<K>,
}

impl<K: Ord + Copy, S> Tally<K, S> {
    fn new() -> Self {
        Tally {
            map: BTreeMap::new(),
            in_block: Vec::new(),
        }
    }

    /// One warp access hit `key` in the block of `slot`; `first` describes it when it is
    /// the worker's first (blocks run in ascending slots, so the first is the lowest).
    fn hit(&mut self, key: K, slot: u64, block: [u32; 3], first: S) {
        let new_in_block = !self.in_block.contains(&key);
        if new_in_block {
            self.in_block.push(key);
        }
        let e = self.map.entry(key).or_insert(Seen {
            slot,
            block,
            first,
            warps: 0,
            blocks: 0,
        });
        e.warps += 1;
        e.blocks += new_in_block as u64;
    }
}

/// A worker's racecheck and initcheck state (see the module's notes).
pub(super) struct Checks {
    init: initcheck::Shadow,
    /// `None`: the kernel is not race-checked (`racecheck::racecheck_skip_reason`).
    race: Option<racecheck::Shadow>,
    /// Keyed by source lines; the first sight keeps the instructions.
    races: Tally<LineRace, (RaceKey, RaceSeen)>,
    uninit: Tally<Line, (u32, u32, AccessKind, InitSeen)>,
    /// The run's findings while the state runs blocks; `None` once it is put back in their
    /// spares, which would otherwise hold the findings from within and never be freed.
    findings: Option<std::sync::Arc<Findings>>,
    /// The running block: its run-order slot and coordinates.
    slot: u64,
    block: [u32; 3],
}

impl std::fmt::Debug for Checks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Checks({} bytes)", self.init.bytes())
    }
}

impl Checks {
    /// The state for a worker that runs `prog`'s blocks of `shared_bytes` bytes of shared
    /// memory under `launch`; `None` when no findings are asked for, or (with a note in the
    /// findings) when the launch has clusters of more than one block, whose blocks write
    /// each other's shared memory.
    pub fn new(prog: &Program, launch: &Launch, shared_bytes: u64) -> Option<Box<RefCell<Checks>>> {
        let findings = launch.findings.as_ref()?;
        let cluster: u32 = launch.cluster.iter().product();
        if cluster > 1 {
            findings.note(format!(
                "racecheck and initcheck did not run: the launch has clusters of {cluster} blocks, whose blocks read and write each other's shared memory, which the checks do not follow"
            ));
            return None;
        }
        let bytes = usize::try_from(shared_bytes).ok()?;
        let checked = racecheck::racecheck_skip_reason(prog).is_none();
        let mut spare = findings.spare.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(i) = spare.iter().position(|c| c.borrow().fits(bytes, checked)) {
            let mut c = spare.swap_remove(i);
            c.get_mut().findings = Some(findings.clone());
            return Some(c);
        }
        drop(spare);
        let race = match racecheck::racecheck_skip_reason(prog) {
            Some(why) => {
                findings.note(format!(
                    "racecheck did not run: {why}, an order racecheck does not follow (it orders shared accesses by block barriers only); initcheck did run"
                ));
                None
            }
            None => Some(racecheck::Shadow::new(bytes)),
        };
        Some(Box::new(RefCell::new(Checks {
            init: initcheck::Shadow::new(bytes),
            race,
            races: Tally::new(),
            uninit: Tally::new(),
            findings: Some(findings.clone()),
            slot: 0,
            block: [0; 3],
        })))
    }

    /// Whether this state serves blocks of `bytes` bytes of shared memory, race-checked or
    /// not.
    fn fits(&self, bytes: usize, checked: bool) -> bool {
        self.init.bytes() == bytes
            && self.race.as_ref().map(|r| r.bytes()) == checked.then_some(bytes)
    }

    /// A block of `warps` warps starts (run-order `slot`, coordinates `block`).
    pub fn begin_block(&mut self, slot: u64, block: [u32; 3], warps: usize) {
        self.slot = slot;
        self.block = block;
        self.init.begin_block();
        if let Some(r) = &mut self.race {
            r.begin_block(warps);
        }
        self.races.in_block.clear();
        self.uninit.in_block.clear();
    }

    /// Warp `w` starts a turn at the block's step count `steps`.
    pub fn turn(&mut self, w: u32, steps: u64) {
        if let Some(r) = &mut self.race {
            r.turn(w, steps);
        }
    }

    /// Warp `w` passes a block barrier at step `steps`.
    pub fn barrier(&mut self, w: u32, steps: u64) {
        if let Some(r) = &mut self.race {
            r.barrier(w, steps);
        }
    }

    /// `n` bytes from `off` of the block's shared memory written by no warp access.
    pub fn mark_written(&mut self, off: u64, n: u64) {
        self.init.mark(off, n);
    }

    /// A warp access to the block's own shared memory (offsets in `a.addrs`) by warp `w`,
    /// site `site` of `prog`, at step `steps`.
    pub fn shared(&mut self, prog: &Program, w: u32, site: u32, a: &WarpAccess, steps: u64) {
        let (slot, block) = (self.slot, self.block);
        let lines = self.findings.as_deref().and_then(|f| f.site_lines.get());
        if let Some(seen) = self.init.access(a.op, a.width, a.mask, &a.addrs) {
            let line = line_of(prog, lines, site);
            let kind = match a.op {
                warpscope_model::Op::Atomic => AccessKind::Atomic,
                _ => AccessKind::Read,
            };
            self.uninit.hit(line, slot, block, (site, w, kind, seen));
        }
        if let Some(r) = &mut self.race {
            let races = &mut self.races;
            r.access(
                w,
                site,
                a.op,
                a.width,
                a.mask,
                &a.addrs,
                steps,
                &mut |k, s| {
                    let line = (
                        k.hazard,
                        line_of(prog, lines, k.first.site),
                        k.first.kind,
                        line_of(prog, lines, k.second.site),
                        k.second.kind,
                    );
                    races.hit(line, slot, block, (k, s))
                },
            );
        }
    }

    /// Hands this worker's findings to the run's, keeping the lowest slot's first sight,
    /// and puts the state back for the next chunk of blocks.
    pub fn flush(mut state: Box<RefCell<Checks>>, prog: &Program) {
        let ptx_line = |site: u32| prog.sites.get(site as usize).map_or(0, |s| s.ptx_line);
        let this = state.get_mut();
        let races = std::mem::take(&mut this.races.map);
        let uninit = std::mem::take(&mut this.uninit.map);
        let Some(findings) = this.findings.take() else {
            return;
        };
        {
            let mut m = findings.race.lock().unwrap_or_else(|e| e.into_inner());
            for (line, s) in races {
                let (k, seen) = s.first;
                let f = RaceFinding {
                    hazard: k.hazard,
                    site: k.second.site,
                    access: k.second.kind,
                    ptx_line: ptx_line(k.second.site),
                    other_site: k.first.site,
                    other_access: k.first.kind,
                    other_ptx_line: ptx_line(k.first.site),
                    block: s.block,
                    warp: seen.second_warp,
                    other_warp: seen.first_warp,
                    offset: seen.offset,
                    warps: s.warps,
                    blocks: s.blocks,
                };
                merge(&mut m, line, s.slot, f, |a, b| {
                    a.warps += b.warps;
                    a.blocks += b.blocks;
                });
            }
        }
        {
            let mut m = findings.init.lock().unwrap_or_else(|e| e.into_inner());
            for (line, s) in uninit {
                let (site, warp, access, seen) = s.first;
                let f = InitFinding {
                    site,
                    ptx_line: ptx_line(site),
                    access,
                    block: s.block,
                    warp,
                    lanes: seen.lanes,
                    offset: seen.offset,
                    warps: s.warps,
                    blocks: s.blocks,
                };
                merge(&mut m, line, s.slot, f, |a, b| {
                    a.warps += b.warps;
                    a.blocks += b.blocks;
                });
            }
        }
        findings
            .spare
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(state);
    }
}

/// Calls `f` with each lane of `mask`, lowest first; a whole warp without the bit scan
/// (the checks' inner loops, where [`super::lanes`]'s scan costs as much as the work).
#[inline(always)]
pub(super) fn each_lane(mask: u32, f: impl FnMut(usize)) {
    if mask == u32::MAX {
        (0..warpscope_model::WARP_SIZE).for_each(f);
    } else {
        super::lanes(mask).for_each(f);
    }
}

/// Adds a worker's finding `f` (first seen in `slot`) to the run's: counts summed by `add`,
/// the first sight the lowest slot's.
fn merge<K: Ord, F>(
    m: &mut BTreeMap<K, (u64, F)>,
    key: K,
    slot: u64,
    mut f: F,
    add: impl Fn(&mut F, &F),
) {
    use std::collections::btree_map::Entry;
    match m.entry(key) {
        Entry::Vacant(v) => {
            v.insert((slot, f));
        }
        Entry::Occupied(mut o) => {
            let (s, old) = o.get_mut();
            if slot < *s {
                add(&mut f, old);
                *old = f;
                *s = slot;
            } else {
                add(old, &f);
            }
        }
    }
}

impl BlockCtx<'_> {
    /// The checks' hook for a warp access handed to the sink: a shared one is checked.
    #[inline]
    pub(super) fn check_access(&self, w: u32, site: u32, a: &WarpAccess) {
        if let Some(c) = &self.checks {
            if a.space == Space::Shared {
                c.borrow_mut().shared(self.prog, w, site, a, self.steps);
            }
        }
    }

    /// The checks' hook for `n` bytes at `off` of the block's own shared memory written by
    /// something other than a warp access.
    pub(super) fn check_raw_write(&self, off: u64, n: u64) {
        if let Some(c) = &self.checks {
            c.borrow_mut().mark_written(off, n);
        }
    }
}
