//! What ptxas made of the PTX memory instructions: merged groups applied to a [`Program`]'s
//! sites, so that the executor emits the accesses the hardware runs.
//!
//! ptxas merges PTX loads (and stores) of consecutive addresses from one base register into
//! one wider SASS instruction when it can prove the alignment: on the H100 the 16 scalar
//! `ld.shared.f32` of a row of a 16-wide tile become 4 `LDS.128` (measured:
//! `tests/data/h100/compiled/sass-vs-ptx.txt`, matmul_rows executes 20 shared loads per tile
//! where the PTX has 32). The SASS instruction carries the PTX line of the group's member at
//! its lowest address; the other members have no SASS instruction of their own.

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

/// A group of PTX instructions that ptxas merged into one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MergedGroup {
    /// PTX lines of the members, lowest address first.
    pub ptx_lines: Vec<u32>,
    /// Bytes per lane of each PTX member.
    pub ptx_width: u32,
    /// Bytes per lane of the SASS instruction (members × `ptx_width`).
    pub sass_width: u32,
    /// Stores, else loads.
    pub store: bool,
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
    /// of the others has a SASS instruction of its own; anything else stays as written.
    pub fn apply_sass(&mut self, sass: &[SassInst]) -> SassReport {
        use std::collections::{HashMap, HashSet};
        let spill = self.spill_rule();
        let mut at_line: HashMap<u32, Vec<SassInst>> = HashMap::new();
        for s in sass.iter().filter(|s| spill(s).is_none()) {
            at_line.entry(s.ptx_line).or_default().push(*s);
        }
        let targets: HashSet<u32> = self
            .insts
            .iter()
            .filter_map(|i| match i.instr {
                Instr::Bra { target } => Some(target),
                _ => None,
            })
            .collect();
        let mems: Vec<Mem> = self
            .insts
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
            .collect();
        let has_sass = |line: u32, store: bool| {
            at_line
                .get(&line)
                .is_some_and(|v| v.iter().any(|s| s.store == store))
        };
        let mut taken = vec![false; mems.len()];
        let mut report = SassReport::default();
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
            report.groups.push(MergedGroup {
                ptx_lines: members.iter().map(|&b| mems[b].line).collect(),
                ptx_width: m.width,
                sass_width: wide.width,
                store: m.store,
            });
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

    /// Whether the instructions `members` of `mems` lie in one basic block (no branch
    /// target after the first, no terminator before the last) with their base register
    /// unwritten between the first and the last.
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
