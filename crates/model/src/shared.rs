//! Shared memory: banks, conflicts and wavefronts (reference, "Shared memory: banks and
//! wavefronts"; PG5 F.3.3, F.4.3, F.5.3; measured on H100).
//!
//! A *wavefront* is one conflict-free pass through the banks; for 1.x/2.x/3.x the same
//! counter holds the serialized passes the guides call "n-way". Conventions:
//!
//! - A lane touches the bytes `[addr, addr + width)`; widths 0 and > 16 are costed as 1 and
//!   16. A misaligned lane (a fault on hardware) is costed by the words its bytes cover.
//! - Lanes on the same word are served together (multicast on reads; on writes one lane
//!   wins), except on 1.x, see [`cost`].
//! - No heap allocation: every rule works on fixed arrays of at most 160 entries.

use crate::access::{Op, WarpAccess, WARP_SIZE};
use crate::arch::{Arch, Family};
use crate::cost::{Config, Cost, SmemBankMode};
use crate::global::lanes;
use crate::lanes::LaneForm;

/// Costs one shared-memory warp access on `arch`: fills `requests` and `wavefronts` (the
/// other counters are left 0 for [`crate::cost::cost`]). No active lane → nothing.
///
/// - **1.x** (PG5 F.3.3): 16 banks of 4 bytes; each half-warp with an active lane is one
///   request, served separately. Accesses wider than 4 bytes are split into 32-bit accesses
///   (word *j* of every lane, *j* = 0 … width/4 − 1), each served on its own, so a `double`
///   at unit stride costs 2 passes for each of its 2 halves (the guide's "2-way"). Within one
///   32-bit access:
///   - reads, per pass: one *broadcast word* serves every address inside it; every other
///     bank serves one address. Addresses are byte addresses, so 8- and 16-bit reads of
///     neighbouring elements in one word conflict unless that word is the broadcast word,
///     as PG5 says ("8-Bit and 16-Bit Access"); lanes on the same byte address count once.
///     Which word is broadcast is unspecified; warpscope picks, each pass, the word with
///     the most addresses in the bank with the most remaining addresses (lowest word on
///     ties), and lets every other bank serve an address of its least-used word (lowest
///     on ties). When every word has a single address the broadcast saves nothing and the
///     passes are the most addresses in one bank.
///   - writes: passes = the most distinct byte addresses in one bank (no broadcast; lanes
///     writing the same address count once, one of them wins).
/// - **2.x** (PG5 F.4.3): 32 banks of 4 bytes, one request. Up to 4-byte words: the whole
///   warp at once; passes = the most distinct 32-bit words in one bank (any number of lanes
///   on one word are multicast on reads; on writes one lane wins). 8-byte words: "a bank
///   conflict only occurs if two or more threads in either of the half-warps access
///   different addresses belonging to the same bank": the two half-warps are served one
///   after the other, so wavefronts = Σ over half-warps with an active lane of that half's
///   most distinct words in one bank (a conflict-free `double` warp = 2, as on 5.x+).
///   16-byte words: "add 1 to the maximum number of threads in a quarter-warp that access
///   different addresses belonging to the same bank": per half-warp with an active lane,
///   1 + the most distinct words in one bank within any of its active quarter-warps;
///   wavefronts = the sum over half-warps (a conflict-free `float4` warp = 2 + 2 = 4, the
///   guide's "majority of 128-bit accesses will cause 2-way bank conflicts" per half).
/// - **3.x** (PG5 F.5.3): 32 banks delivering 64 bits per clock; the whole warp at once, one
///   request, every width. 4-byte mode (default): bank = word mod 32, and words *i* and
///   *i* + 32 of one 64-word-aligned block share the bank's 64-bit delivery (no conflict);
///   8-byte mode ([`SmemBankMode::EightByte`]): bank = (addr / 8) mod 32, lanes within one
///   64-bit word never conflict. Passes = the most distinct 64-bit units in one bank.
/// - **5.x and later** (reference; measured on H100): 32 banks of 4 bytes, one request.
///   Phases: the whole warp for widths ≤ 4, half-warps for 8-byte, quarter-warps for
///   16-byte; wavefronts = Σ over phases with an active lane of the most distinct 4-byte
///   words one bank must deliver in that phase (a lane contributes every word its bytes
///   cover). Exception, loads only, 7.0 and later: when all active lanes pair up on one
///   address — lanes *n* and *n*^1 have the same address wherever both are active, or lanes
///   *n* and *n*^2 do — the return data packs two lanes per slot and the phases double:
///   8-byte loads take the whole warp, 16-byte loads half-warps (so a float4 load with lane
///   pairs sharing addresses takes 2 wavefronts, not 4). Source: NVIDIA developer forum,
///   "Unexpected shared memory bank conflict" (thread 77228, for 7.0–7.5), and measured on
///   H100 with `probes/smem_wavefronts.cu` (results in `probes/h100-smem-wavefronts.csv`,
///   reproduced by this module's tests): the condition is over the whole warp (half-warps
///   pairing differently do not qualify), lanes sharing an address across quarters
///   (`n`^8, `n`^16) do not qualify, and stores never pack. Not applied before 7.0
///   (unknown there).
pub fn cost(arch: &Arch, config: &Config, a: &WarpAccess) -> Cost {
    let mut c = Cost::default();
    if a.mask == 0 {
        return c;
    }
    let w = u64::from(a.width.clamp(1, 16));
    match arch.family {
        Family::Cc1Strict | Family::Cc1Segment => {
            for h in 0..2 {
                let sub = a.mask & (0xFFFF << (16 * h));
                if sub != 0 {
                    c.requests += 1;
                    c.wavefronts += tesla_half_warp(a, sub, w);
                }
            }
        }
        Family::Fermi => {
            c.requests = 1;
            c.wavefronts = fermi(a, w);
        }
        Family::Kepler => {
            c.requests = 1;
            c.wavefronts = match config.smem_bank_mode {
                SmemBankMode::FourByte => ways(a, a.mask, w, 2, 32, kepler_four_byte_key),
                SmemBankMode::EightByte => ways(a, a.mask, w, 3, 32, identity),
            };
        }
        Family::Sector => {
            c.requests = 1;
            c.wavefronts = phased(a, w, sector_phase(arch, a, w));
        }
    }
    c
}

/// The wavefronts a conflict-free access of `a`'s width by `a`'s active lanes needs on
/// `arch`: [`cost`] under the same rules, op and bank mode, with the *k*-th active lane
/// moved to byte `k × max(width, 4)` (consecutive aligned elements from 0 for the active
/// lanes; narrower elements one per 4-byte word, since on 1.x bytes of neighbouring lanes
/// in one word conflict, PG5 F.3.3). Which lanes are active still decides the phases (5.x+
/// quarter-warps for 16-byte words, 1.x half-warps).
/// The report's efficiency is this ÷ the actual wavefronts and its excess the difference
/// (Nsight Compute's "bank conflicts"). Examples: a whole warp's 4-byte access = 1 from 2.x
/// on, 2 on 1.x (two half-warps); `double` 2 and `float4` 4 on 5.x+ (half- and quarter-warp
/// phases) and on 2.x; `double` 1 and `float4` 2 on 3.x (64-bit banks, either mode); `double`
/// 8 and `float4` 32 on 1.x, whose 32-bit split makes any 8/16-byte access 2/4-way per
/// half-warp. Lanes that share words (broadcast, multicast, 7.0+ pair packing) can take
/// fewer, and so can misaligned lanes (a fault on hardware) on 1.x. No active lane → 0.
pub fn ideal_wavefronts(arch: &Arch, config: &Config, a: &WarpAccess) -> u64 {
    if a.mask == 0 {
        return 0;
    }
    let step = u64::from(a.width.clamp(4, 16));
    let mut addrs = [0u64; WARP_SIZE];
    let mut next = 0;
    for (l, x) in addrs.iter_mut().enumerate() {
        if a.mask >> l & 1 == 1 {
            *x = next;
            next += step;
        }
    }
    cost(
        arch,
        config,
        &WarpAccess {
            addrs,
            lanes: LaneForm::Unknown,
            ..*a
        },
    )
    .wavefronts
}

/// 5.x+: lanes served together in one phase (32, 16 or 8), with the 7.0+ pair-packing
/// exception for loads (see [`cost`]).
pub(crate) fn sector_phase(arch: &Arch, a: &WarpAccess, w: u64) -> u32 {
    let phase: u32 = match w {
        8 => 16,
        16 => 8,
        _ => 32,
    };
    if phase < 32
        && a.op == Op::Load
        && arch.cc.at_least(7, 0)
        && (pairs_share_address(a, 1) || pairs_share_address(a, 2))
    {
        phase * 2
    } else {
        phase
    }
}

/// Σ over groups of `phase` consecutive lanes (32, 16 or 8) with an active lane of the most
/// distinct 4-byte words in one of 32 banks.
fn phased(a: &WarpAccess, w: u64, phase: u32) -> u64 {
    let group_mask = if phase >= 32 {
        u32::MAX
    } else {
        (1u32 << phase) - 1
    };
    let mut total = 0;
    for g in 0..(32 / phase) {
        let sub = a.mask & (group_mask << (g * phase));
        if sub != 0 {
            total += ways(a, sub, w, 2, 32, identity);
        }
    }
    total
}

/// Whether lanes `n` and `n ^ xor` have the same address wherever both are active.
fn pairs_share_address(a: &WarpAccess, xor: usize) -> bool {
    (0..WARP_SIZE).all(|l| {
        let m = l ^ xor;
        let both = a.mask & (1 << l) != 0 && a.mask & (1 << m) != 0;
        !both || a.addrs[l] == a.addrs[m]
    })
}

/// The unit itself as the key (4-byte words on 2.x and 5.x+, 64-bit words in 3.x 8-byte
/// mode).
pub(crate) fn identity(u: u64) -> u64 {
    u
}

/// 3.x 4-byte mode: the key of word `u` identifies what its bank must deliver: words *i*
/// and *i* + 32 of one 64-word-aligned block share a key (bank = key mod 32 still).
pub(crate) fn kepler_four_byte_key(u: u64) -> u64 {
    ((u >> 6) << 5) | (u & 31)
}

/// The most distinct keys in one bank, over the units covered by the lanes of `sub`:
/// unit = `addr >> unit_shift`, key = `key(unit)`, bank = key mod `banks` (a power of two
/// ≤ 32). 1 at least when `sub` is non-empty, 0 when it is empty.
///
/// Allocation-free and, in the usual case where each bank's keys arrive in ascending lane
/// order (unit strides, strided and broadcast patterns), a single pass with no buffer;
/// otherwise [`ways_sorted`].
pub(crate) fn ways(
    a: &WarpAccess,
    sub: u32,
    w: u64,
    unit_shift: u32,
    banks: u64,
    key: impl Fn(u64) -> u64 + Copy,
) -> u64 {
    let mut last = [u64::MAX; 32];
    let mut count = [0u8; 32];
    let mut best = 0u8;
    for l in lanes(sub) {
        let first = a.addrs[l] >> unit_shift;
        let end = a.addrs[l].saturating_add(w - 1) >> unit_shift;
        // (`first..end + 1` rather than `first..=end`: faster, and `end` < 2^62.)
        for u in first..end + 1 {
            let k = key(u);
            // `banks` ≤ 32, so the index is in range.
            let b = (k & (banks - 1)) as usize % 32;
            if last[b] == u64::MAX || k > last[b] {
                last[b] = k;
                // At most 5 units a lane × 32 lanes = 160 keys: fits in a u8.
                count[b] = count[b].saturating_add(1);
                best = best.max(count[b]);
            } else if k < last[b] {
                return ways_sorted(a, sub, w, unit_shift, banks, key);
            }
        }
    }
    u64::from(best)
}

/// [`ways`] for any order: collects the keys (at most 5 units a lane: 16 bytes, misaligned,
/// in 4-byte units), sorts them, and counts per bank.
fn ways_sorted(
    a: &WarpAccess,
    sub: u32,
    w: u64,
    unit_shift: u32,
    banks: u64,
    key: impl Fn(u64) -> u64 + Copy,
) -> u64 {
    let mut buf = [0u64; 5 * WARP_SIZE];
    let mut n = 0;
    for l in lanes(sub) {
        let first = a.addrs[l] >> unit_shift;
        let end = a.addrs[l].saturating_add(w - 1) >> unit_shift;
        for u in first..end + 1 {
            if n < buf.len() {
                buf[n] = key(u);
                n += 1;
            }
        }
    }
    let keys = &mut buf[..n];
    keys.sort_unstable();
    max_per_bank(keys, banks)
}

/// The most distinct keys sharing one bank (key mod `banks`), for `keys` in ascending order.
fn max_per_bank(keys: &[u64], banks: u64) -> u64 {
    let mut per_bank = [0u8; 32];
    let mut best = 0;
    for i in 0..keys.len() {
        if i > 0 && keys[i] == keys[i - 1] {
            continue;
        }
        // `banks` ≤ 32, so the index is in range.
        let b = (keys[i] & (banks - 1)) as usize % 32;
        // At most 160 keys, so a bank's count fits in a u8.
        per_bank[b] = per_bank[b].saturating_add(1);
        best = best.max(per_bank[b]);
    }
    u64::from(best)
}

/// 2.x (see [`cost`]).
fn fermi(a: &WarpAccess, w: u64) -> u64 {
    match w {
        8 => (0..2)
            .map(|h| ways(a, a.mask & (0xFFFF << (16 * h)), w, 2, 32, identity))
            .sum(),
        16 => (0..2)
            .map(|h| {
                let worst = (0..2)
                    .map(|q| ways(a, a.mask & (0xFF << (16 * h + 8 * q)), w, 2, 32, identity))
                    .max()
                    .unwrap_or(0);
                if worst == 0 {
                    0
                } else {
                    1 + worst
                }
            })
            .sum(),
        _ => ways(a, a.mask, w, 2, 32, identity),
    }
}

/// 1.x: passes for the active lanes `sub` of one half-warp (see [`cost`]).
pub(crate) fn tesla_half_warp(a: &WarpAccess, sub: u32, w: u64) -> u64 {
    let parts = w.div_ceil(4);
    let part_width = w.min(4);
    let mut total = 0;
    for j in 0..parts {
        // Byte addresses of this 32-bit access: a lane's start address, plus the first byte
        // of the next word when a misaligned lane straddles two words (≤ 16 lanes × 2).
        let mut addrs = [0u64; 32];
        let mut n = 0;
        let mut ascending = true;
        for l in lanes(sub) {
            let start = a.addrs[l].saturating_add(4 * j);
            let end = start.saturating_add(part_width - 1);
            let second = (end >> 2 != start >> 2).then_some(end & !3);
            for x in std::iter::once(start).chain(second) {
                if n < addrs.len() {
                    ascending &= n == 0 || addrs[n - 1] <= x;
                    addrs[n] = x;
                    n += 1;
                }
            }
        }
        let addrs = &mut addrs[..n];
        if !ascending {
            addrs.sort_unstable();
        }
        // Distinct addresses, in place.
        let mut d = 0;
        for i in 0..n {
            if d == 0 || addrs[i] != addrs[d - 1] {
                addrs[d] = addrs[i];
                d += 1;
            }
        }
        total += match a.op {
            Op::Load | Op::Prefetch => broadcast_passes(&addrs[..d]),
            Op::Store | Op::Atomic => {
                // No broadcast: the most distinct addresses in one of the 16 banks.
                let mut per_bank = [0u64; 16];
                for x in &addrs[..d] {
                    per_bank[((x >> 2) % 16) as usize] += 1;
                }
                per_bank.iter().copied().max().unwrap_or(0)
            }
        };
    }
    total
}

/// 1.x reads: passes to serve the distinct byte `addrs` (ascending) of one half-warp's
/// 32-bit access with PG5 F.3.3's procedure (one broadcast word per pass, one address per
/// other bank), choosing as documented on [`cost`].
fn broadcast_passes(addrs: &[u64]) -> u64 {
    // Group the addresses by word: (word, remaining addresses in it); `addrs` ascends, so
    // the addresses of one word are consecutive.
    let mut words = [(0u64, 0u32); 32];
    let mut n = 0;
    for &x in addrs {
        let wd = x >> 2;
        if n > 0 && words[n - 1].0 == wd {
            words[n - 1].1 += 1;
        } else if n < words.len() {
            words[n] = (wd, 1);
            n += 1;
        }
    }
    let words = &mut words[..n];
    let bank = |wd: u64| (wd % 16) as usize;
    if words.iter().all(|e| e.1 == 1) {
        // One address a word (the usual 32-bit case): the broadcast saves nothing, every
        // bank serves one address a pass.
        let mut per_bank = [0u64; 16];
        for e in words.iter() {
            per_bank[bank(e.0)] += 1;
        }
        return per_bank.iter().copied().max().unwrap_or(0);
    }
    let mut passes = 0;
    loop {
        let mut remaining = [0u32; 16];
        for e in words.iter() {
            remaining[bank(e.0)] += e.1;
        }
        let Some(busiest) = (0..16)
            .filter(|&b| remaining[b] > 0)
            .max_by_key(|&b| (remaining[b], std::cmp::Reverse(b)))
        else {
            return passes;
        };
        passes += 1;
        // Broadcast: the busiest bank's fullest word (lowest word on ties).
        let mut bcast: Option<usize> = None;
        for (i, e) in words.iter().enumerate() {
            if e.1 > 0 && bank(e.0) == busiest {
                bcast = match bcast {
                    Some(k)
                        if (words[k].1, std::cmp::Reverse(words[k].0))
                            >= (e.1, std::cmp::Reverse(e.0)) =>
                    {
                        Some(k)
                    }
                    _ => Some(i),
                };
            }
        }
        if let Some(k) = bcast {
            words[k].1 = 0;
        }
        // Every other bank serves one address of its least-used word (lowest on ties).
        for b in (0..16).filter(|&b| b != busiest && remaining[b] > 0) {
            let mut pick: Option<usize> = None;
            for (i, e) in words.iter().enumerate() {
                if e.1 > 0 && bank(e.0) == b {
                    pick = match pick {
                        Some(k) if (words[k].1, words[k].0) <= (e.1, e.0) => Some(k),
                        _ => Some(i),
                    };
                }
            }
            if let Some(k) = pick {
                words[k].1 -= 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::access::Space;
    use crate::arch::{all, lookup};
    use proptest::prelude::*;

    fn arch(s: &str) -> &'static Arch {
        lookup(s.parse().unwrap()).unwrap()
    }

    fn access(op: Op, width: u32, mask: u32, f: impl Fn(u64) -> u64) -> WarpAccess {
        let mut addrs = [0u64; 32];
        for (l, a) in addrs.iter_mut().enumerate() {
            *a = f(l as u64);
        }
        WarpAccess {
            space: Space::Shared,
            op,
            width,
            mask,
            addrs,
            read_only: false,
            lanes: LaneForm::Unknown,
        }
    }

    fn ld(width: u32, f: impl Fn(u64) -> u64) -> WarpAccess {
        access(Op::Load, width, u32::MAX, f)
    }

    fn st(width: u32, f: impl Fn(u64) -> u64) -> WarpAccess {
        access(Op::Store, width, u32::MAX, f)
    }

    /// (requests, wavefronts) with the default config.
    fn rw(cc: &str, a: &WarpAccess) -> (u64, u64) {
        let c = cost(arch(cc), &Config::default(), a);
        (c.requests, c.wavefronts)
    }

    fn wf(cc: &str, a: &WarpAccess) -> u64 {
        rw(cc, a).1
    }

    fn wf8(cc: &str, a: &WarpAccess) -> u64 {
        let c = Config {
            smem_bank_mode: SmemBankMode::EightByte,
            ..Config::default()
        };
        cost(arch(cc), &c, a).wavefronts
    }

    // ---------------- 1.x ----------------

    #[test]
    fn cc1x_words() {
        for cc in ["1.0", "1.1", "1.2", "1.3"] {
            // Unit stride: 16 banks, one pass per half-warp.
            assert_eq!(rw(cc, &ld(4, |l| 4 * l)), (2, 2));
            // Stride 2: 2-way per half; stride 16: 16-way.
            assert_eq!(rw(cc, &ld(4, |l| 8 * l)), (2, 4));
            assert_eq!(rw(cc, &ld(4, |l| 64 * l)), (2, 32));
            // Odd strides are conflict-free.
            assert_eq!(rw(cc, &ld(4, |l| 12 * l)), (2, 2));
            // Broadcast: all lanes on one word.
            assert_eq!(rw(cc, &ld(4, |_| 8)), (2, 2));
            // Stride 16 words is the same bank for the two half-warps: still separate.
            assert_eq!(rw(cc, &ld(4, |l| 4 * (l % 16))), (2, 2));
            // One half-warp active: one request.
            assert_eq!(rw(cc, &access(Op::Load, 4, 0xFFFF_0000, |l| 4 * l)), (1, 1));
            // Writes of one address: one lane wins, one pass.
            assert_eq!(rw(cc, &st(4, |_| 8)), (2, 2));
            assert_eq!(rw(cc, &st(4, |l| 8 * l)), (2, 4));
        }
    }

    #[test]
    fn cc1x_double_is_two_32bit_accesses_with_stride_two() {
        // PG5: "2-way bank conflicts for arrays of doubles ... compiled into two separate
        // 32-bit requests with a stride of two": 2 passes × 2 accesses × 2 half-warps.
        assert_eq!(rw("1.3", &ld(8, |l| 8 * l)), (2, 8));
        // float4 at unit stride: 4 accesses with stride 4, 4-way each.
        assert_eq!(rw("1.0", &ld(16, |l| 16 * l)), (2, 32));
        // Split into lo/hi arrays (the guide's fix): conflict-free, 1 pass each.
        assert_eq!(rw("1.3", &ld(4, |l| 4 * l)), (2, 2));
    }

    #[test]
    fn cc1x_bytes_and_shorts_conflict() {
        // char at unit stride: 16 bytes in 4 words of 4 banks, 4 addresses each. Broadcast
        // clears one word per pass, others serve one address: 4 passes per half-warp.
        assert_eq!(rw("1.2", &ld(1, |l| l)), (2, 8));
        // char at stride 4 (the guide's conflict-free fix).
        assert_eq!(rw("1.2", &ld(1, |l| 4 * l)), (2, 2));
        // short at unit stride: 8 words, 2 addresses each: broadcast one, then the rest.
        assert_eq!(rw("1.0", &ld(2, |l| 2 * l)), (2, 4));
        // All lanes on one byte: one address, one pass.
        assert_eq!(rw("1.0", &ld(1, |_| 5)), (2, 2));
        // Lanes 0-3 read the four bytes of word 0, the others distinct banks: the broadcast
        // word serves lanes 0-3 in the same pass.
        let a = access(Op::Load, 1, 0xFFFF, |l| if l < 4 { l } else { 4 * l });
        assert_eq!(rw("1.0", &a), (1, 1));
        // As a write: four addresses in bank 0 → 4 passes.
        let a = access(Op::Store, 1, 0xFFFF, |l| if l < 4 { l } else { 4 * l });
        assert_eq!(rw("1.0", &a), (1, 4));
        // char writes at unit stride: 4 addresses per bank.
        assert_eq!(rw("1.3", &st(1, |l| l)), (2, 8));
    }

    #[test]
    fn cc1x_broadcast_passes_by_hand() {
        // Bank 0: word 0 read by 3 lanes (3 addresses: bytes 0,1,2) and words 16, 32
        // (bank 0 too); bank 1: word 1 (one address). Pass 1: broadcast word 0 (bank 0 is
        // busiest, word 0 its fullest), bank 1 serves word 1. Passes 2, 3: words 16, 32.
        assert_eq!(broadcast_passes(&[0, 1, 2, 4, 64, 128]), 3);
        assert_eq!(broadcast_passes(&[]), 0);
        assert_eq!(broadcast_passes(&[0]), 1);
        // 16 distinct words in one bank: 16 passes.
        let v: Vec<u64> = (0..16).map(|k| 64 * k).collect();
        assert_eq!(broadcast_passes(&v), 16);
    }

    // ---------------- 2.x ----------------

    #[test]
    fn cc2x() {
        for cc in ["2.0", "2.1"] {
            assert_eq!(rw(cc, &ld(4, |l| 4 * l)), (1, 1));
            assert_eq!(rw(cc, &ld(4, |l| 8 * l)), (1, 2));
            assert_eq!(rw(cc, &ld(4, |l| 12 * l)), (1, 1));
            assert_eq!(rw(cc, &ld(4, |l| 128 * l)), (1, 32));
            assert_eq!(rw(cc, &ld(4, |_| 0)), (1, 1));
            // Multicast: lanes on the same word anywhere in the warp.
            assert_eq!(rw(cc, &ld(4, |l| 4 * (l / 4))), (1, 1));
            // No conflicts for char arrays at unit stride (PG5 F.4.3.1).
            assert_eq!(rw(cc, &ld(1, |l| l)), (1, 1));
            assert_eq!(rw(cc, &ld(1, |l| 128 * l)), (1, 32));
            // Writes: same word once.
            assert_eq!(rw(cc, &st(4, |_| 0)), (1, 1));
            assert_eq!(rw(cc, &st(4, |l| 8 * l)), (1, 2));
            // 64-bit: half-warps one after the other; unit stride has no conflict.
            assert_eq!(rw(cc, &ld(8, |l| 8 * l)), (1, 2));
            assert_eq!(rw(cc, &ld(8, |l| 16 * l)), (1, 4));
            assert_eq!(rw(cc, &access(Op::Load, 8, 0xFFFF, |l| 8 * l)), (1, 1));
            // Conflicts only within a half-warp: lanes l and l+16 on different words of
            // one bank do not conflict.
            assert_eq!(rw(cc, &ld(8, |l| 8 * (l % 16) + 128 * (l / 16))), (1, 2));
            // 128-bit: 1 + the most distinct addresses of a quarter-warp in one bank, per
            // half-warp: unit stride 2 + 2; stride 2 (32 bytes) 3 + 3.
            assert_eq!(rw(cc, &ld(16, |l| 16 * l)), (1, 4));
            assert_eq!(rw(cc, &ld(16, |l| 32 * l)), (1, 6));
            assert_eq!(rw(cc, &access(Op::Load, 16, 0xFF, |l| 16 * l)), (1, 2));
            assert_eq!(rw(cc, &ld(16, |_| 0)), (1, 4));
        }
    }

    // ---------------- 3.x ----------------

    #[test]
    fn cc3x_four_byte_mode() {
        for cc in ["3.0", "3.5", "3.7"] {
            assert_eq!(rw(cc, &ld(4, |l| 4 * l)), (1, 1));
            // Words i and i+32 of a 64-word block do not conflict: stride 2 is free.
            assert_eq!(rw(cc, &ld(4, |l| 8 * l)), (1, 1));
            // Stride 4: words 0, 32 (block 0) and 64, 96 (block 1) in bank 0 → 2.
            assert_eq!(rw(cc, &ld(4, |l| 16 * l)), (1, 2));
            // Stride 32: 32 words in bank 0, pairs per block → 16.
            assert_eq!(rw(cc, &ld(4, |l| 128 * l)), (1, 16));
            // Stride 64: every word in its own block → 32.
            assert_eq!(rw(cc, &ld(4, |l| 256 * l)), (1, 32));
            // Doubles at unit stride: 256 bytes, one pass; float4: two.
            assert_eq!(rw(cc, &ld(8, |l| 8 * l)), (1, 1));
            assert_eq!(rw(cc, &ld(16, |l| 16 * l)), (1, 2));
            assert_eq!(rw(cc, &ld(1, |l| l)), (1, 1));
            assert_eq!(rw(cc, &st(4, |_| 0)), (1, 1));
        }
    }

    #[test]
    fn cc3x_eight_byte_mode() {
        assert_eq!(wf8("3.5", &ld(4, |l| 4 * l)), 1);
        assert_eq!(wf8("3.5", &ld(4, |l| 8 * l)), 1);
        // Stride 4 floats: 64-bit words 2k → banks 0,2,…; k and k+16 collide.
        assert_eq!(wf8("3.5", &ld(4, |l| 16 * l)), 2);
        assert_eq!(wf8("3.5", &ld(4, |l| 128 * l)), 16);
        assert_eq!(wf8("3.0", &ld(8, |l| 8 * l)), 1);
        assert_eq!(wf8("3.0", &ld(8, |l| 16 * l)), 2);
        assert_eq!(wf8("3.0", &ld(16, |l| 16 * l)), 2);
        // Two lanes in one 64-bit word never conflict.
        assert_eq!(wf8("3.5", &ld(4, |l| 4 * (l % 2) + 256 * (l / 2))), 16);
        // The mode is ignored elsewhere.
        assert_eq!(wf8("9.0", &ld(4, |l| 8 * l)), 2);
        assert_eq!(wf8("2.0", &ld(4, |l| 8 * l)), 2);
    }

    // ---------------- 5.x and later ----------------

    #[test]
    fn sector_family_reference_figures() {
        for cc in [
            "5.0", "6.1", "7.0", "7.5", "8.0", "8.9", "9.0", "10.0", "12.1",
        ] {
            for s in 1..=64u64 {
                let g = (1..=32u64)
                    .rev()
                    .find(|d| s % d == 0 && 32 % d == 0)
                    .unwrap();
                assert_eq!(
                    rw(cc, &ld(4, |l| 4 * s * l)),
                    (1, g),
                    "4-byte stride {s} on {cc}"
                );
                assert_eq!(wf(cc, &st(4, |l| 4 * s * l)), g);
            }
            for s in 1..=4 {
                assert_eq!(wf(cc, &ld(1, |l| s * l)), 1);
            }
            for s in 5..=8 {
                assert_eq!(wf(cc, &ld(1, |l| s * l)), 2);
            }
            for (s, w) in [(1, 2), (2, 4), (4, 8), (8, 16), (16, 32), (3, 2)] {
                assert_eq!(wf(cc, &ld(8, |l| 8 * s * l)), w, "8-byte stride {s}");
            }
            for (s, w) in [(1, 4), (2, 8), (4, 16), (8, 32)] {
                assert_eq!(wf(cc, &ld(16, |l| 16 * s * l)), w, "16-byte stride {s}");
            }
            // A 32×32 float tile read down a column.
            assert_eq!(wf(cc, &ld(4, |l| 4 * 32 * l + 4 * 7)), 32);
            // All lanes on one word: multicast.
            assert_eq!(wf(cc, &ld(4, |_| 12)), 1);
        }
    }

    #[test]
    fn pair_packing_from_volta_on() {
        let pair = ld(16, |l| 16 * (l / 2));
        assert_eq!(wf("7.0", &pair), 2);
        assert_eq!(wf("9.0", &pair), 2);
        assert_eq!(wf("12.0", &pair), 2);
        // Not before 7.0; never for stores.
        assert_eq!(wf("6.1", &pair), 4);
        assert_eq!(wf("9.0", &st(16, |l| 16 * (l / 2))), 4);
        // 8-byte loads: the whole warp in one phase.
        assert_eq!(wf("8.0", &ld(8, |l| 8 * (l / 2))), 1);
        assert_eq!(wf("5.2", &ld(8, |l| 8 * (l / 2))), 2);
    }

    #[test]
    fn h100_shared_f32_stride_ground_truth() {
        // shared/ground-truth/h100/shared-f32-stride.csv: v = s[(threadIdx.x*stride) % 4096],
        // block 256; (stride, wavefronts per instruction). Stride 32 measured 262145
        // wavefronts for 8192 instructions (32 each plus one stray); the model says 32.
        let rows: [(u64, u64); 33] = [
            (1, 1),
            (2, 2),
            (3, 1),
            (4, 4),
            (5, 1),
            (6, 2),
            (7, 1),
            (8, 8),
            (9, 1),
            (10, 2),
            (11, 1),
            (12, 4),
            (13, 1),
            (14, 2),
            (15, 1),
            (16, 16),
            (17, 1),
            (18, 2),
            (19, 1),
            (20, 4),
            (21, 1),
            (22, 2),
            (23, 1),
            (24, 8),
            (25, 1),
            (26, 2),
            (27, 1),
            (28, 4),
            (29, 1),
            (30, 2),
            (31, 1),
            (32, 32),
            (33, 1),
        ];
        for (stride, per_instruction) in rows {
            for warp in 0..8u64 {
                let a = ld(4, |l| 4 * (((warp * 32 + l) * stride) % 4096));
                assert_eq!(
                    wf("9.0", &a),
                    per_instruction,
                    "stride {stride} warp {warp}"
                );
            }
        }
    }

    /// Lane offsets of the patterns in `probes/smem_wavefronts.cu`.
    fn probe_offsets(name: &str) -> Option<[u64; 32]> {
        let f: fn(u64) -> u64 = match name {
            "w16_s1" => |l| 16 * l,
            "w16_pair" | "w16_pair_lane1_off" | "w16_pair_half0" => |l| 16 * (l / 2),
            "w16_same" | "w16_same_lane0" | "w8_same" | "w8_same_lane0" | "w4_same" | "w1_same" => {
                |_| 0
            }
            "w16_xor2" => |l| 16 * ((l >> 2) * 2 + (l & 1)),
            "w16_forum_tid4" => |l| (l % 4) * 16,
            "w16_qmerge" => |l| {
                let (q, k) = (l / 8, l % 8);
                (if q >= 2 { 256 } else { 0 })
                    + (if q & 1 == 1 { 64 } else { 0 })
                    + (k % 4) * 16
                    + (k / 4) * 128
            },
            "w16_pair_s4" => |l| 64 * (l / 2),
            "w16_dup8" => |l| 16 * (l % 8),
            "w16_dup16" => |l| 16 * (l % 16),
            "w16_s1_q0only" | "w16_s1_lanes0_8" => |l| 16 * l,
            "w16_s2" => |l| 32 * l,
            "w16_pair_then_s1" => |l| if l < 16 { 16 * (l / 2) } else { 16 * l },
            "w8_s1" | "w8_s1_half0" => |l| 8 * l,
            "w8_pair" => |l| 8 * (l / 2),
            "w8_dup16" => |l| 8 * (l % 16),
            "w8_hsplit" => |l| {
                let (h, k) = (l / 16, l % 16);
                h * 64 + (k % 8) * 8 + (k / 8) * 128
            },
            "w8_s3" => |l| 24 * l,
            "w8_s2" => |l| 16 * l,
            "w8_xor2" => |l| 8 * ((l >> 2) * 2 + (l & 1)),
            "w4_s1" => |l| 4 * l,
            "w4_s2" => |l| 8 * l,
            "w4_s32" => |l| 128 * l,
            "w4_pair" => |l| 4 * (l / 2),
            "w4_s32_pair" => |l| 128 * (l / 2),
            "w4_hconf" => |l| 4 * (l % 16) + (l / 16) * 128,
            "w2_s1" => |l| 2 * l,
            "w2_s2" => |l| 4 * l,
            "w2_s4" => |l| 8 * l,
            "w1_s1" => |l| l,
            "w1_s4" => |l| 4 * l,
            "w1_s5" => |l| 5 * l,
            "w1_s8" => |l| 8 * l,
            "w1_s128" => |l| 128 * l,
            "w16_pair_conf" => |l| {
                let p = l / 2;
                let (h, k) = (p / 8, p % 8);
                let (q, j) = (k / 4, k % 4);
                h * 1024 + q * 256 + (j % 2) * 16 + (j / 2) * 128
            },
            "w8_pair_conf" => |l| {
                let p = l / 2;
                8 * (p % 4) + 128 * ((p / 4) % 2) + 32 * (p / 8)
            },
            "w16_mixpair" => |l| {
                if l < 16 {
                    16 * (l / 2)
                } else {
                    128 + 16 * (((l - 16) >> 2) * 2 + (l & 1))
                }
            },
            "w8_mixpair" => |l| {
                if l < 16 {
                    8 * (l / 2)
                } else {
                    64 + 8 * (((l - 16) >> 2) * 2 + (l & 1))
                }
            },
            "w16_pair_rev" => |l| 16 * (15 - l / 2),
            "w16_quad" => |l| 16 * (l / 4),
            "w8_quad" => |l| 8 * (l / 4),
            _ => return None,
        };
        let mut a = [0u64; 32];
        for (l, x) in a.iter_mut().enumerate() {
            *x = f(l as u64);
        }
        Some(a)
    }

    #[test]
    fn h100_probe_measurements() {
        let csv = include_str!("../probes/h100-smem-wavefronts.csv");
        let mut rows = 0;
        for line in csv
            .lines()
            .filter(|l| !l.starts_with('#') && !l.starts_with("name"))
        {
            let f: Vec<&str> = line.split(',').collect();
            let (name, width, op, mask, wavefronts, inst) = (f[0], f[1], f[2], f[3], f[4], f[5]);
            assert_eq!(inst, "1", "{line}");
            let addrs = probe_offsets(name).unwrap_or_else(|| panic!("unknown pattern {name}"));
            let a = WarpAccess {
                space: Space::Shared,
                op: if op == "ld" { Op::Load } else { Op::Store },
                width: width.parse().unwrap(),
                mask: u32::from_str_radix(mask.trim_start_matches("0x"), 16).unwrap(),
                addrs,
                read_only: false,
                lanes: LaneForm::Unknown,
            };
            let want: u64 = wavefronts.parse().unwrap();
            assert_eq!(rw("9.0", &a), (1, want), "{line}");
            rows += 1;
        }
        assert_eq!(rows, 98);
    }

    // ---------------- the ideal ----------------

    /// The ideal of each CC for a whole warp of each width, and with 8-byte banks on 3.x.
    #[test]
    fn ideal_wavefronts_per_cc_and_width() {
        let ideal = |cc: &str, c: &Config, width: u32, mask: u32| {
            ideal_wavefronts(arch(cc), c, &access(Op::Load, width, mask, |_| 0))
        };
        let four = Config::default();
        let eight = Config {
            smem_bank_mode: SmemBankMode::EightByte,
            ..Config::default()
        };
        // (cc, [1, 2, 4, 8, 16 bytes]) for the whole warp.
        for (cc, want) in [
            ("1.0", [2, 2, 2, 8, 32]),
            ("1.3", [2, 2, 2, 8, 32]),
            ("2.0", [1, 1, 1, 2, 4]),
            ("3.5", [1, 1, 1, 1, 2]),
            ("5.0", [1, 1, 1, 2, 4]),
            ("7.0", [1, 1, 1, 2, 4]),
            ("9.0", [1, 1, 1, 2, 4]),
            ("12.0", [1, 1, 1, 2, 4]),
        ] {
            for (w, want) in [1u32, 2, 4, 8, 16].into_iter().zip(want) {
                assert_eq!(ideal(cc, &four, w, u32::MAX), want, "{cc} width {w}");
            }
        }
        assert_eq!(ideal("3.5", &eight, 8, u32::MAX), 1);
        assert_eq!(ideal("3.0", &eight, 16, u32::MAX), 2);
        assert_eq!(ideal("3.0", &eight, 4, u32::MAX), 1);
        // Active lanes decide the phases: one quarter-warp of float4 is one wavefront on
        // 9.0; a store by lanes 0 and 8 is two quarters (a load of theirs packs, as lanes
        // 1 and 9 are inactive); on 2.x one quarter still takes 1 + 1 passes.
        assert_eq!(ideal("9.0", &four, 16, 0xFF), 1);
        assert_eq!(ideal("9.0", &four, 16, 0x101), 1);
        let store = access(Op::Store, 16, 0x101, |_| 0);
        assert_eq!(ideal_wavefronts(arch("9.0"), &four, &store), 2);
        assert_eq!(ideal("2.0", &four, 16, 0xFF), 2);
        assert_eq!(ideal("1.0", &four, 4, 0xFFFF), 1);
        assert_eq!(ideal("9.0", &four, 4, 0), 0);
    }

    /// The cost's ideal and excess: a conflict-free float4 staging store and load on 9.0
    /// (4 wavefronts, ideal 4, excess 0), a 32-way conflict (excess 31), a broadcast (fewer
    /// wavefronts than the ideal, no excess), a double tile row on 3.5 (1, either bank mode).
    #[test]
    fn cost_carries_the_ideal_and_the_excess() {
        let c = |cc: &str, a: &WarpAccess| {
            let c = crate::cost::cost(arch(cc), &Config::default(), a);
            (c.wavefronts, c.ideal_wavefronts, c.excess_wavefronts)
        };
        assert_eq!(c("9.0", &st(16, |l| 16 * l)), (4, 4, 0));
        assert_eq!(c("9.0", &ld(16, |l| 16 * l)), (4, 4, 0));
        assert_eq!(c("9.0", &ld(4, |l| 128 * l)), (32, 1, 31));
        assert_eq!(c("9.0", &ld(16, |_| 0)), (2, 4, 0));
        assert_eq!(c("3.5", &ld(8, |l| 8 * l)), (1, 1, 0));
        // A double column of a [32][32] tile on 3.5: 32-way in either bank mode.
        let column = ld(8, |l| 8 * 32 * l);
        assert_eq!(c("3.5", &column), (32, 1, 31));
        let e = crate::cost::cost(
            arch("3.5"),
            &Config {
                smem_bank_mode: SmemBankMode::EightByte,
                ..Config::default()
            },
            &column,
        );
        assert_eq!(
            (e.wavefronts, e.ideal_wavefronts, e.excess_wavefronts),
            (32, 1, 31)
        );
        let e = e.wavefront_efficiency().unwrap();
        assert!((e - 1.0 / 32.0).abs() < 1e-12, "{e}");
    }

    // ---------------- properties ----------------

    fn any_arch() -> impl Strategy<Value = &'static Arch> {
        proptest::sample::select(all().iter().collect::<Vec<_>>())
    }

    fn any_config() -> impl Strategy<Value = Config> {
        any::<bool>().prop_map(|e| Config {
            smem_bank_mode: if e {
                SmemBankMode::EightByte
            } else {
                SmemBankMode::FourByte
            },
            ..Config::default()
        })
    }

    fn any_access() -> impl Strategy<Value = WarpAccess> {
        let addrs = prop_oneof![
            proptest::array::uniform32(0u64..256),
            proptest::array::uniform32(0u64..16384),
            (0u64..64, 0u64..40).prop_map(|(o, s)| {
                let mut a = [0u64; 32];
                for (l, x) in a.iter_mut().enumerate() {
                    *x = o + s * l as u64;
                }
                a
            }),
        ];
        (
            proptest::sample::select(vec![1u32, 2, 4, 8, 16]),
            any::<u32>(),
            addrs,
            any::<bool>(),
        )
            .prop_map(|(width, mask, addrs, store)| WarpAccess {
                space: Space::Shared,
                op: if store { Op::Store } else { Op::Load },
                width,
                mask,
                addrs,
                read_only: false,
                lanes: LaneForm::Unknown,
            })
    }

    proptest! {
        #[test]
        fn inactive_lanes_never_matter(arch in any_arch(), config in any_config(),
                                       a in any_access(), junk in proptest::array::uniform32(0u64..4096)) {
            let mut b = a;
            for (l, &j) in junk.iter().enumerate() {
                if a.mask & (1 << l) == 0 {
                    b.addrs[l] = j;
                }
            }
            prop_assert_eq!(cost(arch, &config, &a), cost(arch, &config, &b));
        }

        #[test]
        fn wavefront_bounds(arch in any_arch(), config in any_config(), a in any_access()) {
            let c = cost(arch, &config, &a);
            let lanes = a.mask.count_ones() as u64;
            if lanes == 0 {
                prop_assert_eq!(c, Cost::default());
            } else {
                prop_assert!(c.wavefronts >= 1);
                prop_assert!(c.requests >= 1 && c.requests <= 2);
                // Every lane's bytes cover at most 5 words, each served in a pass of its own
                // at worst; 2.x adds one pass per half-warp for 16-byte words.
                prop_assert!(c.wavefronts <= 5 * lanes + 2, "{:?}", c);
                // At least the bytes of distinct words, 128 bytes (32 banks × 4) a pass
                // (64 bytes on 1.x).
                let mut words: Vec<u64> = a.active()
                    .flat_map(|(_, x)| (x / 4)..=((x + a.width as u64 - 1) / 4))
                    .collect();
                words.sort_unstable();
                words.dedup();
                let per_pass = if arch.cc.major == 1 { 16 } else if arch.family == Family::Kepler { 64 } else { 32 };
                prop_assert!(c.wavefronts * per_pass >= words.len() as u64, "{:?} {}", c, words.len());
            }
        }

        #[test]
        fn whole_warp_phases_ignore_lane_order(a in any_access(),
                perm in Just((0..32).collect::<Vec<usize>>()).prop_shuffle()) {
            let mut b = a;
            b.mask = 0;
            for (l, &p) in perm.iter().enumerate() {
                b.addrs[p] = a.addrs[l];
                if a.mask & (1 << l) != 0 {
                    b.mask |= 1 << p;
                }
            }
            let mut cases = vec!["3.5"];
            if a.width <= 4 {
                cases.extend(["2.0", "5.0", "9.0"]);
            }
            for cc in cases {
                prop_assert_eq!(cost(arch(cc), &Config::default(), &a),
                                cost(arch(cc), &Config::default(), &b));
            }
        }

        #[test]
        fn the_ideal_is_a_floor_without_shared_words(arch in any_arch(), config in any_config(),
                                                     a in any_access()) {
            // Keep the aligned lanes whose 4-byte words no earlier lane touched: nothing
            // is multicast, so no access of that width by those lanes does better than the
            // ideal. (Misaligned lanes, a fault on hardware, can on 1.x: its 32-bit split
            // spreads them over more banks.)
            let mut a = a;
            let mut seen: Vec<u64> = Vec::new();
            let w = u64::from(a.width.clamp(1, 16));
            for l in 0..32 {
                if a.mask & (1 << l) == 0 {
                    continue;
                }
                let x = a.addrs[l];
                let words: Vec<u64> = ((x / 4)..=((x + w - 1) / 4)).collect();
                if x % w != 0 || words.iter().any(|u| seen.contains(u)) {
                    a.mask &= !(1 << l);
                } else {
                    seen.extend(words);
                }
            }
            let c = crate::cost::cost(arch, &config, &a);
            prop_assert!(c.ideal_wavefronts <= c.wavefronts, "{:?} on {}", c, arch.cc);
            prop_assert_eq!(c.excess_wavefronts, c.wavefronts - c.ideal_wavefronts);
        }

        #[test]
        fn pair_packing_never_costs_more(a in any_access()) {
            // 7.0+ loads are never slower than the same access on 6.x (no packing).
            let mut a = a;
            a.op = Op::Load;
            prop_assert!(wf("9.0", &a) <= wf("6.1", &a));
        }
    }
}
