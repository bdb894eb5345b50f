//! The model's working, not just its sums: for one warp access on one compute capability,
//! which lanes formed each request, which transactions (address, size) each request took and
//! which lanes each served, and for shared memory which bank and word every lane hit and in
//! which pass. `explain` draws and narrates this; [`breakdown`] follows the same rules as
//! [`crate::cost::cost`] (the tests check that the two agree on every counter).
//!
//! Unlike [`crate::cost::cost`], this allocates: it runs once per explained access, not once
//! per warp of a launch.

use schemars::JsonSchema;
use serde::Serialize;

use crate::access::{Op, Space, WarpAccess, WARP_SIZE};
use crate::arch::{Arch, Family, GlobalPath};
use crate::cost::{Config, SmemBankMode};
use crate::global::{halve, lanes, last_byte, strictly_coalesced};
use crate::shared::{identity, kepler_four_byte_key, sector_phase, tesla_half_warp, ways};

/// One memory transaction (global/local) of a request: `bytes` bytes from `addr` (aligned to
/// `bytes`), serving the lanes set in `lanes`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Transaction {
    /// First byte (aligned to `bytes`).
    pub addr: u64,
    /// Size in bytes: 32, 64 or 128.
    pub bytes: u64,
    /// Lanes with at least one byte in it.
    #[serde(with = "crate::mask")]
    #[schemars(with = "crate::mask::LaneMask")]
    pub lanes: u32,
}

/// One request (global/local): the lanes served together and the transactions they took.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Request {
    /// Lanes the request covers: a half-warp on 1.x, a half- or quarter-warp for 8/16-byte
    /// words on 2.x/3.x, the whole warp otherwise (inactive lanes included).
    #[serde(with = "crate::mask")]
    #[schemars(with = "crate::mask::LaneMask")]
    pub group: u32,
    /// Active lanes of the group.
    #[serde(with = "crate::mask")]
    #[schemars(with = "crate::mask::LaneMask")]
    pub lanes: u32,
    /// Whether the 1.0/1.1 coalescing conditions held (always `false` on other families).
    pub strictly_coalesced: bool,
    /// The transactions it took, ascending by address.
    pub transactions: Vec<Transaction>,
}

/// Where one lane's word fell in shared memory: its bank, the word index
/// (`addr / bank_bytes`) and the pass (wavefront, 0-based) of its phase that serves it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct BankSlot {
    /// The lane, 0–31.
    pub lane: u8,
    /// The bank, 0-based (0–15 on 1.x, 0–31 from 2.0).
    pub bank: u8,
    /// Word index: byte address / bank width.
    pub word: u64,
    /// 0-based pass within the phase. Lanes on one word share a pass (broadcast/multicast).
    pub pass: u32,
}

/// One phase of a shared access: the lanes served together, the wavefronts they took, and
/// where each word fell.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Phase {
    /// Lanes of the phase (whole warp, half-warp or quarter-warp), inactive included.
    #[serde(with = "crate::mask")]
    #[schemars(with = "crate::mask::LaneMask")]
    pub group: u32,
    /// Active lanes.
    #[serde(with = "crate::mask")]
    #[schemars(with = "crate::mask::LaneMask")]
    pub lanes: u32,
    /// Wavefronts (conflict-free passes) the model charges for this phase.
    pub wavefronts: u64,
    /// One entry per (lane, bank word) touched; a lane wider than a bank word has several.
    pub slots: Vec<BankSlot>,
}

/// One constant-memory address read by a warp, and the lanes that read it. Each is one
/// request: constant reads serialize per distinct address [PG 5.3.2.4].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct ConstantRead {
    /// Byte offset in the constant bank.
    pub addr: u64,
    /// The lanes that read it.
    #[serde(with = "crate::mask")]
    #[schemars(with = "crate::mask::LaneMask")]
    pub lanes: u32,
}

/// The constant reads of one group of lanes served together: a half-warp on 1.x, the warp
/// from 2.0.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct ConstantGroup {
    /// The group's lanes, inactive included.
    #[serde(with = "crate::mask")]
    #[schemars(with = "crate::mask::LaneMask")]
    pub group: u32,
    /// One per distinct address, in lane order of first reader.
    pub reads: Vec<ConstantRead>,
}

/// The working of one access, by memory space.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Breakdown {
    /// Global or local memory.
    Memory {
        /// How the accesses are turned into transactions on this compute capability.
        path: GlobalPath,
        /// The requests, in issue order (request 0 first).
        requests: Vec<Request>,
    },
    /// Shared memory.
    Shared {
        /// Requests: one per active half-warp on 1.x, one per instruction from 2.0.
        requests: u64,
        /// Banks: 16 on 1.x, 32 from 2.0.
        banks: u32,
        /// Bytes per bank word: 4, or 8 in the 3.x 8-byte mode.
        bank_bytes: u32,
        /// The phases (lanes served together), phase 0 first.
        phases: Vec<Phase>,
    },
    /// Constant memory: the distinct addresses per group (half-warps on 1.x, the warp from
    /// 2.0).
    Constant {
        /// One per group with an active lane.
        groups: Vec<ConstantGroup>,
    },
}

impl Breakdown {
    /// (requests, transactions, transaction bytes, wavefronts), the counters
    /// [`crate::cost::cost`] gives for the same access.
    pub fn totals(&self) -> (u64, u64, u64, u64) {
        match self {
            Breakdown::Memory { requests, .. } => {
                let t = requests.iter().flat_map(|r| &r.transactions);
                (
                    requests.len() as u64,
                    t.clone().count() as u64,
                    t.map(|t| t.bytes).sum(),
                    0,
                )
            }
            Breakdown::Shared {
                requests, phases, ..
            } => (*requests, 0, 0, phases.iter().map(|p| p.wavefronts).sum()),
            Breakdown::Constant { groups } => {
                (groups.iter().map(|g| g.reads.len() as u64).sum(), 0, 0, 0)
            }
        }
    }
}

/// The masks of consecutive groups of `size` lanes (32, 16, 8) and their active lanes.
fn groups(mask: u32, size: u32) -> impl Iterator<Item = (u32, u32)> {
    let m = if size >= 32 {
        u32::MAX
    } else {
        (1u32 << size) - 1
    };
    (0..32 / size.min(32)).map(move |g| {
        let group = m << (g * size);
        (group, mask & group)
    })
}

/// The working of `a` on `arch` under `config` (see the module doc). An access with no
/// active lane has no requests or phases.
pub fn breakdown(arch: &Arch, config: &Config, a: &WarpAccess) -> Breakdown {
    match a.space {
        Space::Global | Space::Local => memory(arch, config, a),
        Space::Shared | Space::DistributedShared => shared(arch, config, a),
        // One request of a texture/surface fetch: its texels' 32-byte sectors
        // (crate::texture), drawn as a sectored request.
        Space::Texture | Space::Surface => Breakdown::Memory {
            path: GlobalPath::Sectors,
            requests: if a.mask == 0 {
                Vec::new()
            } else {
                vec![Request {
                    group: a.mask,
                    lanes: a.mask,
                    strictly_coalesced: false,
                    transactions: blocks(a, a.mask, u64::from(a.width.clamp(1, 16)), 5),
                }]
            },
        },
        Space::Constant => {
            let size = match arch.family {
                Family::Cc1Strict | Family::Cc1Segment => 16,
                _ => 32,
            };
            let groups = groups(a.mask, size)
                .filter(|&(_, sub)| sub != 0)
                .map(|(group, sub)| {
                    let mut reads: Vec<ConstantRead> = Vec::new();
                    for l in lanes(sub) {
                        match reads.iter_mut().find(|r| r.addr == a.addrs[l]) {
                            Some(r) => r.lanes |= 1 << l,
                            None => reads.push(ConstantRead {
                                addr: a.addrs[l],
                                lanes: 1 << l,
                            }),
                        }
                    }
                    ConstantGroup { group, reads }
                })
                .collect();
            Breakdown::Constant { groups }
        }
    }
}

/// One transaction per distinct `2^shift`-byte block touched by the lanes of `sub`,
/// ascending by address.
fn blocks(a: &WarpAccess, sub: u32, w: u64, shift: u32) -> Vec<Transaction> {
    let mut out: Vec<Transaction> = Vec::new();
    for l in lanes(sub) {
        for b in (a.addrs[l] >> shift)..=(last_byte(a.addrs[l], w) >> shift) {
            let addr = b << shift;
            match out.iter_mut().find(|t| t.addr == addr) {
                Some(t) => t.lanes |= 1 << l,
                None => out.push(Transaction {
                    addr,
                    bytes: 1 << shift,
                    lanes: 1 << l,
                }),
            }
        }
    }
    out.sort_by_key(|t| t.addr);
    out
}

fn memory(arch: &Arch, config: &Config, a: &WarpAccess) -> Breakdown {
    let w = u64::from(a.width.clamp(1, 16));
    let path = arch.global_path(config, a.op, a.read_only, a.space == Space::Local);
    let mut requests = Vec::new();
    match arch.family {
        Family::Cc1Strict => {
            for (h, (group, sub)) in groups(a.mask, 16).enumerate() {
                if sub == 0 {
                    continue;
                }
                let coalesced = strictly_coalesced(a, sub, h, w);
                let transactions = if coalesced {
                    // The half-warp's words start at the segment holding its first lane.
                    let first = lanes(sub).next().unwrap_or(16 * h);
                    let base = a.addrs[first] - (first - 16 * h) as u64 * w;
                    let sizes: &[u64] = match w {
                        4 => &[64],
                        8 => &[128],
                        _ => &[128, 128],
                    };
                    sizes
                        .iter()
                        .enumerate()
                        .map(|(i, &bytes)| {
                            let addr = base + i as u64 * 128;
                            let lanes_in = lanes(sub)
                                .filter(|&l| a.addrs[l] < addr + bytes && a.addrs[l] + w > addr)
                                .fold(0, |m, l| m | 1 << l);
                            Transaction {
                                addr,
                                bytes,
                                lanes: lanes_in,
                            }
                        })
                        .collect()
                } else {
                    // One 32-byte transaction per lane and block, even when lanes share one.
                    let mut v = Vec::new();
                    for l in lanes(sub) {
                        for b in (a.addrs[l] >> 5)..=(last_byte(a.addrs[l], w) >> 5) {
                            v.push(Transaction {
                                addr: b << 5,
                                bytes: 32,
                                lanes: 1 << l,
                            });
                        }
                    }
                    v
                };
                requests.push(Request {
                    group,
                    lanes: sub,
                    strictly_coalesced: coalesced,
                    transactions,
                });
            }
        }
        Family::Cc1Segment => {
            for (group, sub) in groups(a.mask, 16) {
                if sub != 0 {
                    requests.push(Request {
                        group,
                        lanes: sub,
                        strictly_coalesced: false,
                        transactions: segments(a, sub, w),
                    });
                }
            }
        }
        Family::Fermi | Family::Kepler => {
            let shift = if path == GlobalPath::L1Lines { 7 } else { 5 };
            let size = match w {
                8 => 16,
                16 => 8,
                _ => 32,
            };
            for (group, sub) in groups(a.mask, size) {
                if sub != 0 {
                    requests.push(Request {
                        group,
                        lanes: sub,
                        strictly_coalesced: false,
                        transactions: blocks(a, sub, w, shift),
                    });
                }
            }
        }
        Family::Sector => {
            if a.mask != 0 {
                requests.push(Request {
                    group: u32::MAX,
                    lanes: a.mask,
                    strictly_coalesced: false,
                    transactions: blocks(a, a.mask, w, 5),
                });
            }
        }
    }
    Breakdown::Memory { path, requests }
}

/// The 1.2/1.3 segment protocol with its transactions (see `global::segment_protocol`): per
/// distinct segment (32 B for 1-byte words, 64 B for 2-byte, 128 B otherwise) holding
/// requested bytes, one transaction halved while only one half holds requested bytes.
fn segments(a: &WarpAccess, sub: u32, w: u64) -> Vec<Transaction> {
    let shift = match w {
        1 => 5,
        2 => 6,
        _ => 7,
    };
    let seg = 1u64 << shift;
    // segment index → (lowest requested byte, end of requested bytes, lanes), offsets within
    // the segment.
    let mut per: Vec<(u64, u64, u64, u32)> = Vec::new();
    for l in lanes(sub) {
        let mut s = a.addrs[l];
        let e = s.saturating_add(w);
        while s < e {
            let idx = s >> shift;
            let base = idx << shift;
            let pe = e.min((s | (seg - 1)).saturating_add(1));
            match per.iter_mut().find(|p| p.0 == idx) {
                Some(p) => {
                    p.1 = p.1.min(s - base);
                    p.2 = p.2.max(pe - base);
                    p.3 |= 1 << l;
                }
                None => per.push((idx, s - base, pe - base, 1 << l)),
            }
            s = pe;
        }
    }
    per.sort_by_key(|p| p.0);
    per.into_iter()
        .map(|(idx, lo, hi, lanes)| {
            let (base, size) = halve(lo, hi, seg);
            Transaction {
                addr: (idx << shift) + base,
                bytes: size,
                lanes,
            }
        })
        .collect()
}

/// Bank slots of the lanes of `sub`: word = `addr >> unit_shift`, key = `key(word)`, bank =
/// key mod `banks`; passes numbered by the rank of the key among the distinct keys of its
/// bank (lanes on one key share a pass).
fn slots(
    a: &WarpAccess,
    sub: u32,
    w: u64,
    unit_shift: u32,
    banks: u64,
    key: impl Fn(u64) -> u64,
) -> Vec<BankSlot> {
    let mut raw: Vec<(u8, u64, u64)> = Vec::new();
    for l in lanes(sub) {
        for u in (a.addrs[l] >> unit_shift)..=(last_byte(a.addrs[l], w) >> unit_shift) {
            raw.push((l as u8, u, key(u)));
        }
    }
    raw.iter()
        .map(|&(lane, word, k)| {
            let bank = k % banks;
            let mut below: Vec<u64> = raw
                .iter()
                .filter(|r| r.2 % banks == bank && r.2 < k)
                .map(|r| r.2)
                .collect();
            below.sort_unstable();
            below.dedup();
            BankSlot {
                lane,
                bank: bank as u8,
                word,
                pass: below.len() as u32,
            }
        })
        .collect()
}

fn shared(arch: &Arch, config: &Config, a: &WarpAccess) -> Breakdown {
    let w = u64::from(a.width.clamp(1, 16));
    let mut phases = Vec::new();
    let mut bank_bytes = 4;
    let mut push = |group: u32, sub: u32, wavefronts: u64, slots: Vec<BankSlot>| {
        if sub != 0 {
            phases.push(Phase {
                group,
                lanes: sub,
                wavefronts,
                slots,
            });
        }
    };
    match arch.family {
        Family::Cc1Strict | Family::Cc1Segment => {
            for (group, sub) in groups(a.mask, 16) {
                push(
                    group,
                    sub,
                    tesla_half_warp(a, sub, w),
                    slots(a, sub, w, 2, 16, identity),
                );
            }
        }
        Family::Fermi => {
            let size = match w {
                8 | 16 => 16,
                _ => 32,
            };
            for (group, sub) in groups(a.mask, size) {
                let wf = if w == 16 {
                    let worst = groups(sub, 8)
                        .map(|(_, q)| ways(a, q, w, 2, 32, identity))
                        .max()
                        .unwrap_or(0);
                    if worst == 0 {
                        0
                    } else {
                        1 + worst
                    }
                } else {
                    ways(a, sub, w, 2, 32, identity)
                };
                // 16-byte words are served by quarter-warps: number passes within each.
                let slots = if w == 16 {
                    groups(sub, 8)
                        .flat_map(|(_, q)| slots(a, q, w, 2, 32, identity))
                        .collect()
                } else {
                    slots(a, sub, w, 2, 32, identity)
                };
                push(group, sub, wf, slots);
            }
        }
        Family::Kepler => {
            let (shift, key): (u32, fn(u64) -> u64) = match config.smem_bank_mode {
                SmemBankMode::FourByte => (2, kepler_four_byte_key),
                SmemBankMode::EightByte => {
                    bank_bytes = 8;
                    (3, identity)
                }
            };
            push(
                u32::MAX,
                a.mask,
                ways(a, a.mask, w, shift, 32, key),
                slots(a, a.mask, w, shift, 32, key),
            );
        }
        Family::Sector => {
            for (group, sub) in groups(a.mask, sector_phase(arch, a, w)) {
                push(
                    group,
                    sub,
                    ways(a, sub, w, 2, 32, identity),
                    slots(a, sub, w, 2, 32, identity),
                );
            }
        }
    }
    let requests = match arch.family {
        Family::Cc1Strict | Family::Cc1Segment => phases.len() as u64,
        _ => u64::from(a.mask != 0),
    };
    Breakdown::Shared {
        requests,
        banks: arch.shared_banks,
        bank_bytes,
        phases,
    }
}

/// Whether any lane of the access is a store (the renderers say "written" for stores).
pub fn verb(op: Op) -> &'static str {
    match op {
        Op::Load => "read",
        Op::Store => "written",
        Op::Atomic => "updated atomically",
        Op::Prefetch => "prefetched into L2",
    }
}

/// Lanes in `mask` as compact ranges: `0–15, 17, 20–31`.
pub fn lane_ranges(mask: u32) -> String {
    let mut out = Vec::new();
    let mut l = 0;
    while l < WARP_SIZE {
        if mask & (1 << l) != 0 {
            let start = l;
            while l + 1 < WARP_SIZE && mask & (1 << (l + 1)) != 0 {
                l += 1;
            }
            out.push(if start == l {
                format!("{start}")
            } else {
                format!("{start}–{l}")
            });
        }
        l += 1;
    }
    if out.is_empty() {
        "none".to_string()
    } else {
        out.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arch::all;
    use crate::cost::{cost, L1Mode};
    use crate::lanes::LaneForm;
    use proptest::prelude::*;

    fn check(arch: &Arch, config: &Config, a: &WarpAccess) {
        let c = cost(arch, config, a);
        let b = breakdown(arch, config, a);
        let (req, tx, bytes, wf) = b.totals();
        match a.space {
            Space::Shared => assert_eq!((req, wf), (c.requests, c.wavefronts), "{} {a:?}", arch.cc),
            _ => {
                assert_eq!(
                    (req, tx, bytes),
                    (c.requests, c.transactions, c.transaction_bytes),
                    "{} {a:?}",
                    arch.cc
                );
            }
        }
        if let Breakdown::Shared { phases, .. } = &b {
            // Passes drawn never exceed the wavefronts charged, except where the charge adds a
            // fixed pass (2.x 16-byte words) or 1.x broadcast rules apply.
            for p in phases {
                let passes = p.slots.iter().map(|s| s.pass + 1).max().unwrap_or(0) as u64;
                if !matches!(arch.family, Family::Cc1Strict | Family::Cc1Segment) {
                    assert!(passes <= p.wavefronts.max(1) + 1, "{} {p:?}", arch.cc);
                }
            }
        }
    }

    fn access(space: Space, op: Op, width: u32, mask: u32, addrs: [u64; 32]) -> WarpAccess {
        WarpAccess {
            space,
            op,
            width,
            mask,
            addrs,
            read_only: false,
            lanes: LaneForm::Unknown,
        }
    }

    #[test]
    fn harris_offset_one_on_1_3_takes_128_then_64_plus_32_bytes() {
        // The Best Practices Guide's misaligned example: floats from word 1, 1.2/1.3.
        let a = access(
            Space::Global,
            Op::Load,
            4,
            u32::MAX,
            std::array::from_fn(|l| 4 * (l as u64 + 1)),
        );
        let arch = crate::arch::lookup("1.3".parse().unwrap()).unwrap();
        let Breakdown::Memory { requests, .. } = breakdown(arch, &Config::default(), &a) else {
            panic!("not memory")
        };
        let sizes: Vec<Vec<(u64, u64)>> = requests
            .iter()
            .map(|r| r.transactions.iter().map(|t| (t.addr, t.bytes)).collect())
            .collect();
        // Half-warp 0 holds bytes 4–67 of segment 0 (both halves: 128 B); half-warp 1 holds
        // bytes 68–127 (upper half: 64 B) and 128–131 of the next segment (32 B).
        assert_eq!(sizes, vec![vec![(0, 128)], vec![(64, 64), (128, 32)]]);
        assert_eq!(requests[1].transactions[1].lanes, 1 << 31);
    }

    #[test]
    fn stride_32_floats_in_shared_all_hit_bank_0_in_32_passes() {
        let a = access(
            Space::Shared,
            Op::Load,
            4,
            u32::MAX,
            std::array::from_fn(|l| 128 * l as u64),
        );
        let arch = crate::arch::lookup("9.0".parse().unwrap()).unwrap();
        let Breakdown::Shared { phases, .. } = breakdown(arch, &Config::default(), &a) else {
            panic!("not shared")
        };
        assert_eq!(phases.len(), 1);
        assert_eq!(phases[0].wavefronts, 32);
        assert!(phases[0].slots.iter().all(|s| s.bank == 0));
        let passes: Vec<u32> = phases[0].slots.iter().map(|s| s.pass).collect();
        assert_eq!(passes, (0..32).collect::<Vec<u32>>());
    }

    #[test]
    fn lane_ranges_compacts() {
        assert_eq!(lane_ranges(0xFFFF), "0–15");
        assert_eq!(lane_ranges(0b1011), "0–1, 3");
        assert_eq!(lane_ranges(0), "none");
    }

    fn any_access() -> impl Strategy<Value = WarpAccess> {
        (
            prop_oneof![
                Just(Space::Global),
                Just(Space::Local),
                Just(Space::Shared),
                Just(Space::Constant)
            ],
            prop_oneof![Just(Op::Load), Just(Op::Store)],
            prop_oneof![Just(1u32), Just(2), Just(4), Just(8), Just(16)],
            any::<u32>(),
            0u64..4096,
            prop_oneof![
                Just(0u64),
                Just(1),
                Just(4),
                Just(8),
                Just(16),
                Just(33),
                Just(128)
            ],
            proptest::collection::vec(0u64..512, 32),
            any::<bool>(),
            any::<bool>(),
        )
            .prop_map(
                |(space, op, width, mask, base, stride, noise, random, ro)| {
                    let addrs = std::array::from_fn(|l| {
                        let x = if random {
                            base + noise[l] * width as u64
                        } else {
                            base + stride * l as u64
                        };
                        x - x % width as u64
                    });
                    WarpAccess {
                        read_only: ro,
                        ..access(space, op, width, mask, addrs)
                    }
                },
            )
    }

    proptest! {
        #[test]
        fn breakdown_agrees_with_cost(a in any_access()) {
            for arch in all() {
                for l1 in [L1Mode::Default, L1Mode::Ca, L1Mode::Cg] {
                    for smem_bank_mode in [SmemBankMode::FourByte, SmemBankMode::EightByte] {
                        check(arch, &Config { l1, smem_bank_mode }, &a);
                    }
                }
            }
        }
    }
}
