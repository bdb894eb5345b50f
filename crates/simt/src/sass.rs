//! What ptxas made of the PTX memory instructions: merged groups applied to a [`Program`]'s
//! sites, so that the executor emits the accesses the hardware runs.
//!
//! ptxas merges PTX loads (and stores) of consecutive addresses from one base register into
//! one wider SASS instruction when it can prove the alignment: on the H100 the 16 scalar
//! `ld.shared.f32` of a row of a 16-wide tile become 4 `LDS.128` (measured:
//! `tests/data/h100/compiled/sass-vs-ptx.txt`, matmul_rows executes 20 shared loads per tile
//! where the PTX has 32). The SASS instruction carries the PTX line of the group's member at
//! its lowest address; the other members have no SASS instruction of their own.
//!
//! ptxas also unrolls loops further than nvcc did and merges loads of consecutive trips: in
//! the 1-D block-tiled SGEMM (`tests/kernels/compiled/sgemm_1d_blocktile.cu`) nvcc leaves a
//! loop of 4 trips, ptxas unrolls it fully and makes the load at `[%r53+-128]` and the one at
//! `[%r53+-124]`, in 2 consecutive trips (`%r53` advances 8 bytes a trip), one `LDS.128` tied to
//! the first load's line: one PTX line stands for 2 dynamic executions of each of 2 PTX
//! loads, so no group within one basic block explains it, and the PTX as written ran 3 times
//! the shared loads the H100 executes. Such a group is run where the PTX proves it (a constant
//! trip count, a multiple of the trips merged; the base advancing by a constant; the words
//! covered exactly): the wide access on the first trip of each group, nothing on the others
//! ([`SassFate::WidenedAcrossTrips`]).

use crate::decode::Program;
use crate::instr::{Instr, MemSpace};

/// What ptxas made of one PTX memory instruction (a [`crate::Site`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SassFate {
    /// Emitted as written (or not checked).
    #[default]
    AsWritten,
    /// The member a wider SASS instruction is tied to: `width` bytes per lane from this
    /// instruction's address + `delta` bytes, standing for `members` PTX instructions.
    Widened {
        width: u32,
        delta: i64,
        members: u32,
    },
    /// Part of a wider SASS instruction at another site: no access of its own.
    Merged,
    /// A load ptxas removed: an earlier load of the same address in the same basic block
    /// holds its value. No access of its own.
    Reused,
    /// The member a wider SASS instruction is tied to in a PTX loop that ptxas unrolled and
    /// whose consecutive trips it merged: on the first trip of each `every` (trip `t` with
    /// `t % every == 0`, counted from the loop's entry) the access is [`SassFate::Widened`]
    /// with `width`, `delta` and `members` (PTX executions it stands for); on the other
    /// trips it has no access of its own. The trip is read from the loop's counter register
    /// `counter` of the first executing lane: `counter − first` (in `bits` bits, signed) is
    /// a multiple of `period` (the counter's step × `every`) exactly on those first trips.
    WidenedAcrossTrips {
        width: u32,
        delta: i64,
        members: u32,
        every: u32,
        counter: crate::instr::Reg,
        first: u64,
        period: i64,
        bits: u32,
    },
}

impl SassFate {
    /// For [`SassFate::WidenedAcrossTrips`]: whether the counter value `v` is that of a
    /// group's first trip.
    pub fn first_trip(counter_value: u64, first: u64, period: i64, bits: u32) -> bool {
        let diff = crate::alu::sext(counter_value.wrapping_sub(first), bits);
        period != 0 && diff.rem_euclid(period) == 0
    }
}

/// One SASS load or store: the PTX line it came from, bytes per lane, whether it stores,
/// for a local one (`LDL`/`STL`) its offset in the thread's stack frame, and whether the
/// disassembler marked it a register spill or refill.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SassInst {
    /// 1-based line of the PTX instruction ptxas ties it to.
    pub ptx_line: u32,
    /// Bytes per lane: 1, 2, 4, 8 or 16.
    pub width: u32,
    /// A store (`STG`, `STS`, `STL`, `ST`), else a load.
    pub store: bool,
    /// `LDL`/`STL`: bytes from the start of the thread's stack frame.
    pub local_offset: Option<i64>,
    /// The disassembler's `SpillRefill` mark (nvdisasm 13.5 prints it, 13.0 does not).
    pub spill_marked: bool,
}

/// A spill or refill run with the instruction it is tied to: `width` bytes at `offset` of
/// each lane's local frame, reported at `site`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Spill {
    pub site: u32,
    pub store: bool,
    pub width: u32,
    pub offset: u64,
}

/// Bytes per lane of the widest SASS load or store (`.256` on CC 10.0 and later; the
/// listing's parser reads up to `.128`): members of one merged group lie closer than this.
pub const WIDEST_SASS_BYTES: u64 = 32;

/// A group of PTX instructions that ptxas merged into one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MergedGroup {
    /// PTX lines of the members, lowest address first.
    pub ptx_lines: Vec<u32>,
    /// Bytes per lane of each PTX member.
    pub ptx_width: u32,
    /// Bytes per lane of the SASS instruction (members × `trips` × `ptx_width`).
    pub sass_width: u32,
    /// Stores, else loads.
    pub store: bool,
    /// Consecutive trips of an unrolled PTX loop the SASS instruction spans (each member
    /// counted once per trip); 1 for a group within one basic block.
    pub trips: u32,
}

/// A wider SASS instruction tied to a PTX load or store whose group the PTX does not prove:
/// that PTX instruction is run as written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unproven {
    pub ptx_line: u32,
    pub ptx_width: u32,
    pub sass_width: u32,
    pub store: bool,
    /// Why the group was not accepted.
    pub why: &'static str,
}

/// What [`Program::apply_sass`] found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SassReport {
    /// The merged groups, in PTX order of the member each is tied to.
    pub groups: Vec<MergedGroup>,
    /// Spill stores and refill loads tied to a PTX instruction, run as local accesses.
    pub spills: usize,
    /// PTX loads/stores with no SASS instruction at their line that no group explains: left
    /// as written. Not a sign of removal: ptxas often ties a load to the line of an address
    /// computation it folded into it (examples/texture.cu's conv_global: 25 such loads, every
    /// one executed, exact on the H100).
    pub unexplained: Vec<u32>,
    /// PTX lines of loads ptxas removed as reloads of an address an earlier load of the same
    /// basic block read ([`SassFate::Reused`]).
    pub reused: Vec<u32>,
    /// Wider SASS instructions whose groups the PTX does not prove, in PTX order: run as
    /// written.
    pub unproven: Vec<Unproven>,
}

/// A loop with a constant trip count ([`Program::counted_loop`]).
struct CountedLoop {
    head: usize,
    back: usize,
    trips: u64,
    counter: crate::instr::Reg,
    /// The counter's value on entry, and what is added to it once per trip, at `bump`.
    init: u64,
    step: u64,
    bump: usize,
    ty: crate::instr::Ty,
}

/// A group over consecutive trips ([`Program::across_trips`]): its fate for the member the
/// SASS instruction is tied to, its members (lowest address first), the trips it spans.
struct AcrossTrips {
    fate: SassFate,
    members: Vec<usize>,
    trips: u32,
}

/// A PTX load or store as the grouping needs it.
struct Mem {
    inst: usize,
    line: u32,
    site: u32,
    space: MemSpace,
    store: bool,
    width: u32,
    base: Option<crate::instr::Reg>,
    offset: i64,
    guard: Option<(crate::instr::Reg, bool)>,
}

impl Program {
    /// Ties the SASS loads and stores of this entry (`sass`, in any order) to its PTX loads
    /// and stores by line, and marks each group that ptxas merged into one wider instruction
    /// ([`SassFate`]). A group is accepted only when its members are loads (or stores) of
    /// one space, width and guard, from one base register not written between them, in one
    /// basic block, at consecutive offsets covering the SASS instruction's bytes, and none
    /// of the others has a SASS instruction of its own. A wider instruction that no such
    /// group explains may merge consecutive trips of a PTX loop that ptxas unrolled: that
    /// group is accepted only as [`Program::across_trips`] proves it. Anything else stays as
    /// written (and is named in [`SassReport::unproven`]).
    pub fn apply_sass(&mut self, sass: &[SassInst]) -> SassReport {
        use std::collections::{HashMap, HashSet};
        let spill = self.spill_rule();
        let mut at_line: HashMap<u32, Vec<SassInst>> = HashMap::new();
        for s in sass.iter().filter(|s| spill(s).is_none()) {
            at_line.entry(s.ptx_line).or_default().push(*s);
        }
        let branches_to = self.branches_to();
        let targets: HashSet<u32> = branches_to.keys().copied().collect();
        let mems = self.mems();
        let has_sass = |line: u32, store: bool| {
            at_line
                .get(&line)
                .is_some_and(|v| v.iter().any(|s| s.store == store))
        };
        let mut taken = vec![false; mems.len()];
        let mut report = SassReport::default();
        // (instruction of the member each is tied to, group); the wide SASS instructions
        // that no group within one basic block explains.
        let mut groups: Vec<(usize, MergedGroup)> = Vec::new();
        let mut pending: Vec<(usize, SassInst)> = Vec::new();
        for (a, m) in mems.iter().enumerate() {
            let Some(wide) = at_line.get(&m.line).and_then(|v| {
                v.iter()
                    .find(|s| s.store == m.store && s.width > m.width && s.width % m.width == 0)
            }) else {
                continue;
            };
            if taken[a] || m.width == 0 {
                continue;
            }
            // Members other than `m`: same kind, no SASS of their own, not yet in a group.
            let partners: Vec<usize> = (0..mems.len())
                .filter(|&b| {
                    let n = &mems[b];
                    b != a
                        && !taken[b]
                        && n.space == m.space
                        && n.store == m.store
                        && n.width == m.width
                        && n.base == m.base
                        && n.guard == m.guard
                        && !has_sass(n.line, n.store)
                })
                .collect();
            let w = m.width as i64;
            let count = (wide.width / m.width) as i64;
            let group = (0..count).find_map(|k| {
                let lo = m.offset - k * w;
                let mut members = Vec::new();
                for j in 0..count {
                    let off = lo + j * w;
                    if off == m.offset {
                        members.push(a);
                    } else {
                        members.push(*partners.iter().find(|&&b| mems[b].offset == off)?);
                    }
                }
                self.one_block(&mems, &members, &targets)
                    .then_some((lo, members))
            });
            let Some((lo, members)) = group else {
                pending.push((a, *wide));
                continue;
            };
            for &b in &members {
                taken[b] = true;
                self.sites[mems[b].site as usize].sass = SassFate::Merged;
            }
            self.sites[m.site as usize].sass = SassFate::Widened {
                width: wide.width,
                delta: lo - m.offset,
                members: members.len() as u32,
            };
            groups.push((
                m.inst,
                MergedGroup {
                    ptx_lines: members.iter().map(|&b| mems[b].line).collect(),
                    ptx_width: m.width,
                    sass_width: wide.width,
                    store: m.store,
                    trips: 1,
                },
            ));
        }
        // Wider instructions no group of one basic block explains: merges of consecutive
        // trips of a loop ptxas unrolled, where the PTX proves them; else as written.
        for (a, wide) in pending {
            let m = &mems[a];
            let free = |b: usize| !taken[b] && !has_sass(mems[b].line, mems[b].store);
            let same_kind: Vec<SassInst> = at_line[&m.line]
                .iter()
                .filter(|s| s.store == m.store)
                .copied()
                .collect();
            match self.across_trips(&mems, a, wide, &same_kind, &free, &branches_to) {
                Ok(t) => {
                    for &b in &t.members {
                        taken[b] = true;
                        self.sites[mems[b].site as usize].sass = SassFate::Merged;
                    }
                    self.sites[m.site as usize].sass = t.fate;
                    groups.push((
                        m.inst,
                        MergedGroup {
                            ptx_lines: t.members.iter().map(|&b| mems[b].line).collect(),
                            ptx_width: m.width,
                            sass_width: wide.width,
                            store: m.store,
                            trips: t.trips,
                        },
                    ));
                }
                Err(why) => report.unproven.push(Unproven {
                    ptx_line: m.line,
                    ptx_width: m.width,
                    sass_width: wide.width,
                    store: m.store,
                    why,
                }),
            }
        }
        groups.sort_by_key(|g| g.0);
        report.groups = groups.into_iter().map(|g| g.1).collect();
        // Loads ptxas removed because an earlier load of the same address in the same basic
        // block, with nothing between that writes memory or orders it, already holds the
        // value (CUB's raking scan reloads three words: measured on H100, block_scan of
        // tests/kernels/modern/cub_block.cu, 6,144 shared-load wavefronts fewer).
        for b in 0..mems.len() {
            let n = &mems[b];
            if taken[b] || n.store || at_line.contains_key(&n.line) {
                continue;
            }
            let volatile = self.sites[n.site as usize].ptx.contains("volatile");
            let earlier = (0..b).rev().find(|&e| {
                let m = &mems[e];
                !m.store
                    && m.space == n.space
                    && m.width == n.width
                    && m.base == n.base
                    && m.offset == n.offset
                    && m.guard == n.guard
                    && self.one_block(&mems, &[e, b], &targets)
                    && (m.inst + 1..n.inst).all(|k| self.keeps_memory(k))
            });
            if let (false, Some(_)) = (volatile, earlier) {
                taken[b] = true;
                self.sites[n.site as usize].sass = SassFate::Reused;
                report.reused.push(n.line);
            }
        }
        for (b, n) in mems.iter().enumerate() {
            if !taken[b] && !at_line.contains_key(&n.line) {
                report.unexplained.push(n.line);
            }
        }
        let spills: Vec<(SassInst, u64)> =
            sass.iter().filter_map(|s| Some((*s, spill(s)?))).collect();
        report.spills = self.add_spills(&spills);
        report
    }

    /// Whether some SASS listing could make [`Program::apply_sass`] change what this
    /// program runs: a load or store with a partner of the same space, kind, width, base
    /// register (or none) and guard in its basic block less than [`WIDEST_SASS_BYTES`]
    /// away (a group ptxas may merge, or a reload it may drop), or an unpredicated one with a base register in a one-block loop
    /// of constant trip count (trips ptxas may merge). `false` proves that the listing can
    /// only leave every site as written; spills are not covered here (ptxas's `-v` report
    /// says whether there are any). What is left unproven (a wider instruction that no
    /// group explains) is not covered either: it is run as written in any case.
    pub fn sass_could_merge(&self) -> bool {
        let mems = self.mems();
        let branches_to = self.branches_to();
        let targets: std::collections::HashSet<u32> = branches_to.keys().copied().collect();
        let mut by_kind: std::collections::HashMap<_, Vec<usize>> = Default::default();
        for (a, m) in mems.iter().enumerate() {
            if m.width == 0 {
                continue;
            }
            if m.guard.is_none()
                && m.base.is_some()
                && self.counted_loop(m.inst, &branches_to).is_ok()
            {
                return true;
            }
            let same = by_kind
                .entry((m.space, m.store, m.width, m.base, m.guard))
                .or_default();
            if same.iter().any(|&e| {
                mems[e].offset.abs_diff(m.offset) < WIDEST_SASS_BYTES
                    && self.one_block(&mems, &[e, a], &targets)
            }) {
                return true;
            }
            same.push(a);
        }
        false
    }

    /// Which SASS instructions are ptxas's register spills and refills, with their frame
    /// offsets: those the disassembler marks, and every `LDL`/`STL` where the PTX has no
    /// local (or generic) load or store of its own, so that none can be the PTX's.
    fn spill_rule(&self) -> impl Fn(&SassInst) -> Option<u64> {
        let ptx_local = self
            .sites
            .iter()
            .any(|s| s.space.is_none_or(|sp| sp == warpscope_model::Space::Local));
        move |s: &SassInst| {
            let off = u64::try_from(s.local_offset?).ok()?;
            (s.spill_marked || !ptx_local).then_some(off)
        }
    }

    /// Ties each spill or refill (with its frame offset) to the first PTX instruction of its
    /// line, one site per line and direction (`STL (spill)`, `LDL (refill)`), and grows the
    /// local frame to hold them. Returns how many were tied.
    fn add_spills(&mut self, spills: &[(SassInst, u64)]) -> usize {
        let mut first_at: std::collections::HashMap<u32, usize> = Default::default();
        for (k, i) in self.insts.iter().enumerate() {
            first_at.entry(i.ptx_line).or_insert(k);
        }
        let mut site_of: std::collections::HashMap<(u32, bool), u32> = Default::default();
        let mut tied = 0;
        for &(s, offset) in spills {
            let Some(&pc) = first_at.get(&s.ptx_line) else {
                continue;
            };
            let site = *site_of.entry((s.ptx_line, s.store)).or_insert_with(|| {
                let loc = self.insts[pc].loc;
                self.sites.push(crate::Site {
                    ptx_line: s.ptx_line,
                    ptx: if s.store {
                        "STL (spill)"
                    } else {
                        "LDL (refill)"
                    }
                    .to_string(),
                    op: if s.store {
                        warpscope_model::Op::Store
                    } else {
                        warpscope_model::Op::Load
                    },
                    space: Some(warpscope_model::Space::Local),
                    read_only: false,
                    atomic: false,
                    loc,
                    inlined_at: None,
                    callers: Vec::new(),
                    sass: SassFate::AsWritten,
                });
                self.sites.len() as u32 - 1
            });
            if self.spill_at.is_empty() {
                self.spill_at = vec![u32::MAX; self.insts.len()];
            }
            let list = match self.spill_at[pc] {
                u32::MAX => {
                    self.spill_at[pc] = self.spills.len() as u32;
                    self.spills.push(Vec::new());
                    self.spills.len() - 1
                }
                k => k as usize,
            };
            self.spills[list].push(Spill {
                site,
                store: s.store,
                width: s.width,
                offset,
            });
            self.local_bytes = self.local_bytes.max(offset + u64::from(s.width));
            tied += 1;
        }
        tied
    }

    /// The group of a wider SASS instruction `wide`, tied to the PTX load or store
    /// `mems[a]` (`m`), whose members are executions of PTX instructions in consecutive
    /// trips of a loop that ptxas unrolled (nvcc unrolled the 1-D block-tiled SGEMM's dotIdx
    /// loop twice, ptxas fully, and tied each `LDS.128` of 4 words of `As` to one PTX
    /// load: that load and the one 4 bytes on, each in 2 consecutive trips). Accepted only
    /// when the PTX proves it:
    /// - `m` is unguarded, in a loop whose body is one basic block entered only by falling
    ///   into its head and left by a conditional back edge ([`Program::counted_loop`]),
    ///   whose trip count is a constant `N`;
    /// - `m`'s base register is advanced once per trip, by a constant `s`, and written
    ///   nowhere else in the body;
    /// - with the other members (unguarded loads or stores of the same space, width and base
    ///   register in the body, with no SASS instruction of their own, in no group yet),
    ///   their executions in `G ≥ 2` consecutive trips cover the SASS instruction's bytes
    ///   word by word, each once, and `N` is a multiple of `G`;
    /// - every SASS instruction of `m`'s kind at its line has the wide width, and their
    ///   number divides `N / G` (ptxas unrolled the loop fully, or by a multiple of `G`).
    ///
    /// Then the groups are the trips `0..G`, `G..2G`, … of each entry of the loop, and `m`
    /// carries the wide access on the first of each.
    fn across_trips(
        &self,
        mems: &[Mem],
        a: usize,
        wide: SassInst,
        at_line: &[SassInst],
        free: &dyn Fn(usize) -> bool,
        branches_to: &std::collections::HashMap<u32, usize>,
    ) -> Result<AcrossTrips, &'static str> {
        let m = &mems[a];
        if m.guard.is_some() {
            return Err("the PTX instruction is predicated");
        }
        let lp = self.counted_loop(m.inst, branches_to)?;
        let base = m.base.ok_or("no base register")?;
        let body = lp.head..=lp.back;
        let writes = |r: crate::instr::Reg| -> Vec<usize> {
            body.clone()
                .filter(|&k| {
                    crate::dataflow::defs_uses(&self.insts[k].instr)
                        .0
                        .contains(&r)
                })
                .collect()
        };
        let [bump] = writes(base)[..] else {
            return Err("its base register is not advanced once per trip of the loop");
        };
        let (_, stride) = self
            .add_constant(bump, base)
            .ok_or("its base register does not advance by a constant per trip")?;
        if stride == 0 {
            return Err("its base register does not advance by a constant per trip");
        }
        // Offsets from the base register's value at the start of a trip.
        let eff = |n: &Mem| n.offset + if bump < n.inst { stride } else { 0 };
        let candidates: Vec<usize> = (0..mems.len())
            .filter(|&b| {
                let n = &mems[b];
                b != a
                    && free(b)
                    && body.contains(&n.inst)
                    && n.space == m.space
                    && n.store == m.store
                    && n.width == m.width
                    && n.base == m.base
                    && n.guard.is_none()
            })
            .collect();
        let w = m.width as i64;
        let count = (wide.width / m.width) as i64;
        let found = (2..=count).filter(|g| count % g == 0).find_map(|g| {
            (0..count).find_map(|j| {
                let lo = eff(m) - j * w;
                let inside = |e: i64| {
                    (0..g).all(|k| {
                        let x = e + k * stride - lo;
                        x >= 0 && x < count * w && x % w == 0
                    })
                };
                let mut members = vec![a];
                for &b in &candidates {
                    let e = eff(&mems[b]);
                    if inside(e) && members.iter().all(|&c| eff(&mems[c]) != e) {
                        members.push(b);
                    }
                }
                if !inside(eff(m)) || members.len() as i64 * g != count {
                    return None;
                }
                let mut words: Vec<i64> = members
                    .iter()
                    .flat_map(|&b| (0..g).map(move |k| (b, k)))
                    .map(|(b, k)| eff(&mems[b]) + k * stride)
                    .collect();
                words.sort_unstable();
                let exact = words
                    .iter()
                    .enumerate()
                    .all(|(i, &x)| x == lo + i as i64 * w);
                exact.then_some((g, lo, members))
            })
        });
        let Some((g, lo, mut members)) = found else {
            return Err("no loads or stores of consecutive trips make its bytes");
        };
        if !lp.trips.is_multiple_of(g as u64) {
            return Err("the loop's trip count is not a multiple of the trips merged");
        }
        let wides = at_line.iter().filter(|s| s.width == wide.width).count() as u64;
        if wides != at_line.len() as u64 || !(lp.trips / g as u64).is_multiple_of(wides) {
            return Err("the SASS at its line does not cover every trip with the wide instruction");
        }
        members.sort_by_key(|&b| eff(&mems[b]));
        let bits = lp.ty.bits();
        let first = if lp.bump < m.inst {
            crate::alu::trunc(lp.init.wrapping_add(lp.step), bits)
        } else {
            lp.init
        };
        Ok(AcrossTrips {
            fate: SassFate::WidenedAcrossTrips {
                width: wide.width,
                delta: lo - eff(m),
                members: count as u32,
                every: g as u32,
                counter: lp.counter,
                first,
                period: crate::alu::sext(lp.step, bits) * g,
                bits,
            },
            members,
            trips: g as u32,
        })
    }

    /// The loop around instruction `at` when it runs a constant number of trips: its body
    /// (from a branch target `head` to the conditional branch `back` to it) is one basic
    /// block, entered only by falling into `head`; the back edge's guard is set once in the
    /// body by a comparison of a counter register with a constant; the counter is advanced
    /// once in the body by a constant and set to a constant by the last write before `head`
    /// in the block that falls into it. The trips are counted by running the counter as the
    /// executor would (at most 65,536, without wrapping around).
    fn counted_loop(
        &self,
        at: usize,
        branches_to: &std::collections::HashMap<u32, usize>,
    ) -> Result<CountedLoop, &'static str> {
        use crate::alu;
        use crate::instr::Src;
        const NOT_ONE_BLOCK: &str = "not in a loop of one basic block";
        const NO_COUNT: &str = "the loop's trip count is not a constant";
        let insts = &self.insts;
        let back = (at..insts.len())
            .find(|&k| insts[k].instr.is_terminator())
            .ok_or(NOT_ONE_BLOCK)?;
        let Instr::Bra { target } = insts[back].instr else {
            return Err(NOT_ONE_BLOCK);
        };
        let head = target as usize;
        let (pred, negated) = insts[back].guard.ok_or(NOT_ONE_BLOCK)?;
        if head > at
            || head == 0
            || branches_to.get(&target) != Some(&1)
            || (head..back).any(|k| insts[k].instr.is_terminator())
            || (head + 1..=back).any(|k| branches_to.contains_key(&(k as u32)))
            || (insts[head - 1].instr.is_terminator() && insts[head - 1].guard.is_none())
        {
            return Err(NOT_ONE_BLOCK);
        }
        let writes = |r: crate::instr::Reg| -> Vec<usize> {
            (head..=back)
                .filter(|&k| crate::dataflow::defs_uses(&insts[k].instr).0.contains(&r))
                .collect()
        };
        let [set] = writes(pred)[..] else {
            return Err(NO_COUNT);
        };
        let Instr::Setp {
            cmp,
            ty: cmp_ty,
            bop: None,
            p,
            q,
            a: x,
            b: y,
        } = insts[set].instr
        else {
            return Err(NO_COUNT);
        };
        if insts[set].guard.is_some() || p == q.unwrap_or(u32::MAX) {
            return Err(NO_COUNT);
        }
        // `setp p|q`: q is the comparison's complement.
        let negated = negated != (pred != p);
        let (counter, end, counter_left) = match (x, y) {
            (Src::Reg(c), Src::Imm(e)) => (c, e, true),
            (Src::Imm(e), Src::Reg(c)) => (c, e, false),
            _ => return Err(NO_COUNT),
        };
        let [bump] = writes(counter)[..] else {
            return Err(NO_COUNT);
        };
        let (ty, _) = self.add_constant(bump, counter).ok_or(NO_COUNT)?;
        let Instr::Alu {
            dty, a: sa, b: sb, ..
        } = insts[bump].instr
        else {
            return Err(NO_COUNT);
        };
        let step = match (sa, sb) {
            (_, Src::Imm(v)) | (Src::Imm(v), _) => v,
            _ => return Err(NO_COUNT),
        };
        // The counter's value on entry: the last write before the head, in its block.
        let mut init = None;
        for k in (0..head).rev() {
            let i = &insts[k];
            if i.instr.is_terminator() {
                break;
            }
            if crate::dataflow::defs_uses(&i.instr).0.contains(&counter) {
                if let (Instr::Mov { a: Src::Imm(v), .. }, None) = (&i.instr, i.guard) {
                    init = Some(*v);
                }
                break;
            }
            if branches_to.contains_key(&(k as u32)) {
                break;
            }
        }
        let bits = ty.bits();
        let init = alu::trunc(init.ok_or(NO_COUNT)?, bits);
        let (start, by) = (alu::sext(init, bits) as i128, alu::sext(step, bits) as i128);
        let mut v = init;
        for t in 0..65_536u64 {
            let next = alu::trunc(
                alu::alu(crate::instr::Alu::Add, ty, dty, v, step, 0, 0, false),
                bits,
            );
            if alu::sext(next, bits) as i128 != start + (t as i128 + 1) * by {
                return Err(NO_COUNT);
            }
            let c = if bump < set { next } else { v };
            let p = if counter_left {
                alu::compare(cmp, cmp_ty, c, end)
            } else {
                alu::compare(cmp, cmp_ty, end, c)
            };
            v = next;
            if p == negated {
                return Ok(CountedLoop {
                    head,
                    back,
                    trips: t + 1,
                    counter,
                    init,
                    step: alu::trunc(step, bits),
                    bump,
                    ty,
                });
            }
        }
        Err(NO_COUNT)
    }

    /// Instruction `k` as `r = r + constant` (unguarded, integer, no saturation): its type
    /// and the constant, sign-extended from the type's width.
    fn add_constant(&self, k: usize, r: crate::instr::Reg) -> Option<(crate::instr::Ty, i64)> {
        use crate::instr::{Alu, Kind, Src};
        let i = &self.insts[k];
        let Instr::Alu {
            op: Alu::Add,
            ty,
            dty,
            d,
            a,
            b,
            sat: false,
            ..
        } = i.instr
        else {
            return None;
        };
        let v = match (a, b) {
            (Src::Reg(x), Src::Imm(v)) | (Src::Imm(v), Src::Reg(x)) if x == r => v,
            _ => return None,
        };
        (i.guard.is_none()
            && d == r
            && ty == dty
            && matches!(ty.kind, Kind::Unsigned | Kind::Signed))
        .then(|| (ty, crate::alu::sext(v, ty.bits())))
    }

    /// Whether the instructions `members` of `mems` lie in one basic block (no branch
    /// target after the first, no terminator before the last) with their base register
    /// unwritten between the first and the last.
    /// Whether instruction `k` neither writes memory nor orders memory accesses (a fence,
    /// which decodes to a no-op, counts as ordering): a load before and after it reads the
    /// same value.
    fn keeps_memory(&self, k: usize) -> bool {
        matches!(
            self.insts[k].instr,
            Instr::Alu { .. }
                | Instr::AluHalf { .. }
                | Instr::Mov { .. }
                | Instr::Setp { .. }
                | Instr::SetpHalf { .. }
                | Instr::Set { .. }
                | Instr::Selp { .. }
                | Instr::Slct { .. }
                | Instr::Cvt { .. }
                | Instr::CvtFloat { .. }
                | Instr::Cvta { .. }
                | Instr::Pack { .. }
                | Instr::Unpack { .. }
                | Instr::Ld { .. }
                | Instr::Shfl { .. }
                | Instr::Vote { .. }
                | Instr::Match { .. }
                | Instr::Redux { .. }
                | Instr::ActiveMask { .. }
        )
    }

    /// How many branches go to each branch target (an instruction index).
    fn branches_to(&self) -> std::collections::HashMap<u32, usize> {
        let mut n: std::collections::HashMap<u32, usize> = Default::default();
        for i in &self.insts {
            if let Instr::Bra { target } = i.instr {
                *n.entry(target).or_default() += 1;
            }
        }
        n
    }

    /// The PTX loads and stores (parameter space aside) as the grouping needs them, in
    /// instruction order.
    fn mems(&self) -> Vec<Mem> {
        self.insts
            .iter()
            .enumerate()
            .filter_map(|(k, i)| {
                let (space, store, width, addr, site) = match &i.instr {
                    Instr::Ld {
                        space,
                        ty,
                        ds,
                        addr,
                        site,
                    } => (
                        *space,
                        false,
                        ty.bytes as u32 * ds.len() as u32,
                        addr,
                        *site,
                    ),
                    Instr::St {
                        space,
                        ty,
                        srcs,
                        addr,
                        site,
                    } => (
                        *space,
                        true,
                        ty.bytes as u32 * srcs.len() as u32,
                        addr,
                        *site,
                    ),
                    _ => return None,
                };
                (space != MemSpace::Param).then_some(Mem {
                    inst: k,
                    line: i.ptx_line,
                    site,
                    space,
                    store,
                    width,
                    base: addr.base,
                    offset: addr.offset,
                    guard: i.guard,
                })
            })
            .collect()
    }

    fn one_block(
        &self,
        mems: &[Mem],
        members: &[usize],
        targets: &std::collections::HashSet<u32>,
    ) -> bool {
        let first = members.iter().map(|&b| mems[b].inst).min().unwrap_or(0);
        let last = members.iter().map(|&b| mems[b].inst).max().unwrap_or(0);
        let base = mems[members[0]].base;
        (first..last).all(|k| {
            let i = &self.insts[k].instr;
            let writes_base = base.is_some_and(|r| crate::dataflow::defs_uses(i).0.contains(&r));
            !i.is_terminator() && !writes_base && (k == first || !targets.contains(&(k as u32)))
        }) && !targets.contains(&(last as u32))
            || first == last
    }
}
