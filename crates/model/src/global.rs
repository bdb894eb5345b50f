//! Global and local memory: how one warp instruction becomes requests and transactions on
//! each family of compute capabilities (reference, "Global memory: how one warp instruction
//! becomes transactions", and "Local memory").
//!
//! Conventions shared by every rule here:
//!
//! - A lane moves the bytes `[addr, addr + width)`. Widths are expected to be 1, 2, 4, 8 or
//!   16; 0 is costed as 1 and anything over 16 as 16 (front ends split wider accesses).
//! - A misaligned lane (address not a multiple of the width; a fault on real hardware, which
//!   [`crate::cost::cost`] counts in `misaligned_lanes`) is still costed by its byte range, so
//!   it may touch one more 32-byte block than an aligned one.
//! - `sectors` = `transaction_bytes / 32` on every family, the common denominator.
//! - No heap allocation: every rule works on fixed arrays of at most 64 entries.

use crate::access::{Space, WarpAccess, WARP_SIZE};
use crate::arch::{Arch, Family, GlobalPath};
use crate::cost::{Config, Cost};

/// Costs one global or local warp access on `arch`: fills `requests`, `transactions`,
/// `transaction_bytes` and `sectors` (= `transaction_bytes / 32`); the other counters are
/// left 0 for [`crate::cost::cost`] to fill. An access with no active lane costs nothing.
///
/// - 1.0/1.1 ([`Family::Cc1Strict`], PG5 F.3.2.1): per half-warp with an active lane, one
///   request. Coalesced when the width is 4, 8 or 16 and active lane *k* of the half-warp
///   addresses word *k* of a segment aligned to 16 × width bytes (64 B for 4-byte words, 128
///   B for 8-byte, 256 B for 16-byte: BPG's "segment aligned to 16 times the size of the
///   elements"; PG5's "first 8 words in one 128-byte segment, the last 8 in the following"
///   would also admit a 128-aligned start, which warpscope does not). Coalesced → one 64 B,
///   one 128 B, or two 128 B transactions: two also when only one 8-lane half of a 16-byte
///   half-warp is active (the guide's wording, literally; inactive lanes "do not matter").
///   Otherwise "16 separate 32-byte transactions": warpscope issues one 32-byte transaction
///   per active lane and per 32-byte block its bytes touch (*assumed* for partially active
///   half-warps; an aligned lane of width ≤ 16 touches one block).
/// - 1.2/1.3 ([`Family::Cc1Segment`], PG5 F.3.2.2, BPG): per half-warp with an active lane,
///   one request and the segment protocol: take the segment (32 B for 1-byte words, 64 B
///   for 2-byte, 128 B otherwise) holding the lowest unserved lane's address, serve every
///   lane whose address lies in it, halve the transaction (down to 32 B) while only its
///   lower or upper half holds requested bytes, repeat. That is one transaction per distinct
///   segment, sized by the bytes requested in it. A misaligned lane's range is cut at the
///   segment boundary and each piece served like a lane (the guide is silent there).
/// - 2.x/3.x ([`Family::Fermi`], [`Family::Kepler`], PG5 F.4.2/F.5.2, seed 003): 8-byte
///   words split the warp into 2 requests (half-warps), 16-byte words into 4
///   (quarter-warps), others 1; only groups with an active lane count. Each request costs one
///   transaction per distinct block its lanes touch: 128-byte lines when the access goes
///   through L1, 32-byte segments otherwise ([`Arch::global_path`] decides, from the op,
///   `config.l1`, `read_only` and the space).
/// - 5.x and later ([`Family::Sector`], PG 5.x appendix; measured on H100): one request; one
///   32-byte transaction (sector) per distinct 32-byte block touched by any active lane.
pub fn cost(arch: &Arch, config: &Config, a: &WarpAccess) -> Cost {
    let mut c = Cost::default();
    if a.mask == 0 {
        return c;
    }
    let w = u64::from(a.width.clamp(1, 16));
    match arch.family {
        Family::Cc1Strict => cc1_strict(a, w, &mut c),
        Family::Cc1Segment => {
            for h in 0..2 {
                let sub = a.mask & (0xFFFF << (16 * h));
                if sub != 0 {
                    c.requests += 1;
                    let (n, bytes) = segment_protocol(a, sub, w);
                    c.transactions += n;
                    c.transaction_bytes += bytes;
                }
            }
        }
        Family::Fermi | Family::Kepler => {
            let path = arch.global_path(config, a.op, a.read_only, a.space == Space::Local);
            let shift = if path == GlobalPath::L1Lines { 7 } else { 5 };
            let group: u32 = match w {
                8 => 16,
                16 => 8,
                _ => 32,
            };
            let group_mask = if group == 32 {
                u32::MAX
            } else {
                (1u32 << group) - 1
            };
            for g in 0..(32 / group) {
                let sub = a.mask & (group_mask << (g * group));
                if sub != 0 {
                    c.requests += 1;
                    let n = distinct_blocks(a, sub, w, shift);
                    c.transactions += n;
                    c.transaction_bytes += n << shift;
                }
            }
        }
        Family::Sector => {
            c.requests = 1;
            let n = distinct_blocks(a, a.mask, w, 5);
            c.transactions = n;
            c.transaction_bytes = 32 * n;
        }
    }
    c.sectors = c.transaction_bytes / 32;
    c
}

/// The lanes set in `sub`, lowest first (bit iteration: no test of inactive lanes).
pub(crate) fn lanes(sub: u32) -> impl Iterator<Item = usize> {
    let mut m = sub;
    std::iter::from_fn(move || {
        if m == 0 {
            return None;
        }
        let l = m.trailing_zeros() as usize;
        m &= m - 1;
        Some(l)
    })
}

/// Last byte of a lane's range (saturating at the top of the address space).
pub(crate) fn last_byte(addr: u64, w: u64) -> u64 {
    addr.saturating_add(w - 1)
}

/// Number of distinct `2^shift`-byte aligned blocks touched by the byte ranges
/// `[addr, addr + w)` of the lanes in `sub`. `w` ≤ 16 and `shift` ≥ 5, so a lane touches at
/// most 2 blocks and 64 entries suffice. Allocation-free; sorts only when the blocks do not
/// already come in ascending lane order (the common, coalesced case needs no sort).
pub(crate) fn distinct_blocks(a: &WarpAccess, sub: u32, w: u64, shift: u32) -> u64 {
    let mut buf = [0u64; 2 * WARP_SIZE];
    let mut n = 0;
    let mut sorted = true;
    for l in lanes(sub) {
        let first = a.addrs[l] >> shift;
        let last = last_byte(a.addrs[l], w) >> shift;
        for b in [first, last] {
            if n > 0 {
                if buf[n - 1] == b {
                    continue;
                }
                sorted &= buf[n - 1] < b;
            }
            buf[n] = b;
            n += 1;
        }
    }
    if sorted {
        // Strictly ascending: all distinct.
        return n as u64;
    }
    let v = &mut buf[..n];
    v.sort_unstable();
    let mut count = 0;
    for i in 0..n {
        if i == 0 || v[i] != v[i - 1] {
            count += 1;
        }
    }
    count
}

/// CC 1.0/1.1 rule (see [`cost`]).
fn cc1_strict(a: &WarpAccess, w: u64, c: &mut Cost) {
    for h in 0..2usize {
        let sub = a.mask & (0xFFFF << (16 * h));
        if sub == 0 {
            continue;
        }
        c.requests += 1;
        if strictly_coalesced(a, sub, h, w) {
            let (n, size) = match w {
                4 => (1, 64),
                8 => (1, 128),
                _ => (2, 128),
            };
            c.transactions += n;
            c.transaction_bytes += n * size;
        } else {
            for l in lanes(sub) {
                let blocks = (last_byte(a.addrs[l], w) >> 5) - (a.addrs[l] >> 5) + 1;
                c.transactions += blocks;
                c.transaction_bytes += 32 * blocks;
            }
        }
    }
}

/// Whether the active lanes `sub` of half-warp `h` meet the 1.0/1.1 coalescing conditions:
/// width 4, 8 or 16, and lane *k* (0–15 within the half-warp) at `base + k·w` for one `base`
/// aligned to `16·w` bytes.
pub(crate) fn strictly_coalesced(a: &WarpAccess, sub: u32, h: usize, w: u64) -> bool {
    if !matches!(w, 4 | 8 | 16) {
        return false;
    }
    let mut base = None;
    for l in lanes(sub) {
        let k = (l - 16 * h) as u64;
        let Some(b) = a.addrs[l].checked_sub(k * w) else {
            return false;
        };
        match base {
            None if b % (16 * w) != 0 => return false,
            None => base = Some(b),
            Some(b0) if b0 != b => return false,
            Some(_) => {}
        }
    }
    true
}

/// The 1.2/1.3 transaction for the requested bytes `[lo, hi)` of one `seg`-byte segment
/// (offsets within it): halved, down to 32 bytes, while only its lower or upper half holds
/// requested bytes [PG5 F.3.2.2]. Returns (offset of the transaction, its bytes).
pub(crate) fn halve(lo: u64, hi: u64, seg: u64) -> (u64, u64) {
    let (mut base, mut size) = (0, seg);
    while size > 32 {
        let half = size / 2;
        if hi <= base + half {
            size = half;
        } else if lo >= base + half {
            base += half;
            size = half;
        } else {
            break;
        }
    }
    (base, size)
}

/// The CC 1.2/1.3 protocol for the active lanes `sub` of one half-warp [PG5 F.3.2.2, BPG],
/// returning (transactions, bytes). Segment size: 32 B for 1-byte words, 64 B for 2-byte,
/// 128 B otherwise. Repeat until every lane is served: take the segment holding the address
/// of the lowest-numbered unserved lane; serve every unserved lane whose address lies in it;
/// while the transaction is over 32 bytes and only its lower or upper half holds requested
/// bytes, halve it (128 → 64 → 32); issue it.
///
/// The order of the protocol does not change its result: a transaction serves every
/// unserved lane of its segment, so there is exactly one transaction per distinct segment
/// holding an active lane's address, sized by the bytes requested in that segment. That is
/// what is computed here, segment by segment (sorting only when the lanes' segments do not
/// already ascend).
///
/// Byte ranges: a lane's range `[addr, addr + w)` is first cut at segment boundaries (only a
/// misaligned lane is ever cut), and each piece is served like a lane of its own: the literal
/// protocol says nothing of ranges crossing a segment, and this keeps every requested byte
/// inside a transaction. For 16-byte words a full half-warp spans 256 bytes and costs two
/// 128-byte transactions.
fn segment_protocol(a: &WarpAccess, sub: u32, w: u64) -> (u64, u64) {
    let shift = match w {
        1 => 5,
        2 => 6,
        _ => 7,
    };
    let seg = 1u64 << shift;
    // (segment index, first byte, end byte) of each piece, offsets within the segment. At
    // most 16 lanes × 2 pieces (w ≤ 16 < seg, so a range crosses at most one boundary).
    let mut pieces = [(0u64, 0u64, 0u64); 32];
    let mut n = 0;
    let mut ascending = true;
    for l in lanes(sub) {
        let mut s = a.addrs[l];
        let e = s.saturating_add(w);
        while s < e && n < pieces.len() {
            let idx = s >> shift;
            let base = idx << shift;
            let pe = e.min((s | (seg - 1)).saturating_add(1));
            if n > 0 {
                ascending &= pieces[n - 1].0 <= idx;
            }
            pieces[n] = (idx, s - base, pe - base);
            n += 1;
            s = pe;
        }
    }
    let pieces = &mut pieces[..n];
    if !ascending {
        pieces.sort_unstable_by_key(|p| p.0);
    }
    let (mut transactions, mut bytes) = (0, 0);
    let mut i = 0;
    while i < n {
        let idx = pieces[i].0;
        let (mut lo, mut hi) = (u64::MAX, 0);
        while i < n && pieces[i].0 == idx {
            lo = lo.min(pieces[i].1);
            hi = hi.max(pieces[i].2);
            i += 1;
        }
        let (_, size) = halve(lo, hi, seg);
        transactions += 1;
        bytes += size;
    }
    (transactions, bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::access::Op;
    use crate::arch::{lookup, ComputeCapability};
    use crate::cost::L1Mode;
    use crate::lanes::LaneForm;
    use proptest::prelude::*;

    fn arch(s: &str) -> &'static Arch {
        lookup(s.parse::<ComputeCapability>().unwrap()).unwrap()
    }

    fn access(op: Op, width: u32, mask: u32, f: impl Fn(u64) -> u64) -> WarpAccess {
        let mut addrs = [0u64; 32];
        for (l, a) in addrs.iter_mut().enumerate() {
            *a = f(l as u64);
        }
        WarpAccess {
            space: Space::Global,
            op,
            width,
            mask,
            addrs,
            read_only: false,
            lanes: LaneForm::Unknown,
        }
    }

    fn load(width: u32, f: impl Fn(u64) -> u64) -> WarpAccess {
        access(Op::Load, width, u32::MAX, f)
    }

    /// (requests, transactions, transaction_bytes) under the default config.
    fn rtb(cc: &str, a: &WarpAccess) -> (u64, u64, u64) {
        let c = cost(arch(cc), &Config::default(), a);
        assert_eq!(c.sectors * 32, c.transaction_bytes);
        (c.requests, c.transactions, c.transaction_bytes)
    }

    fn with(cc: &str, config: Config, a: &WarpAccess) -> (u64, u64, u64) {
        let c = cost(arch(cc), &config, a);
        (c.requests, c.transactions, c.transaction_bytes)
    }

    const BASE: u64 = 0x7f00_0000_0000; // cudaMalloc-like, 256-byte aligned

    // ---------------- 1.0 / 1.1 ----------------

    #[test]
    fn cc10_float_aligned_is_one_64b_per_half_warp() {
        let a = load(4, |l| BASE + 4 * l);
        assert_eq!(rtb("1.0", &a), (2, 2, 128));
        assert_eq!(rtb("1.1", &a), (2, 2, 128));
    }

    #[test]
    fn cc10_misaligned_or_permuted_is_16_x_32b() {
        // [HB]: "any misaligned access by a half warp ... results in 16 separate 32-byte
        // transactions".
        let a = load(4, |l| BASE + 4 * (l + 1));
        assert_eq!(rtb("1.0", &a), (2, 32, 1024));
        // In the segment but out of order.
        let a = load(4, |l| BASE + 4 * (l ^ 1));
        assert_eq!(rtb("1.0", &a), (2, 32, 1024));
        // Stride 2.
        let a = load(4, |l| BASE + 8 * l);
        assert_eq!(rtb("1.0", &a), (2, 32, 1024));
        // All lanes on one word: still not word k for lane k.
        let a = load(4, |_| BASE);
        assert_eq!(rtb("1.0", &a), (2, 32, 1024));
    }

    #[test]
    fn cc10_divergent_half_warp_still_coalesces() {
        // Inactive lanes allowed; lane k still reads word k.
        let a = access(Op::Load, 4, 0x0000_5555, |l| BASE + 4 * l);
        assert_eq!(rtb("1.0", &a), (1, 1, 64));
        // Second half only.
        let a = access(Op::Load, 4, 0xFFFF_0000, |l| BASE + 4 * l);
        assert_eq!(rtb("1.0", &a), (1, 1, 64));
        // Partially active and uncoalesced: one 32 B transaction per active lane (assumed).
        let a = access(Op::Load, 4, 0x0000_000F, |l| BASE + 4 * l + 4);
        assert_eq!(rtb("1.0", &a), (1, 4, 128));
    }

    #[test]
    fn cc10_wide_words() {
        let a = load(8, |l| BASE + 8 * l);
        assert_eq!(rtb("1.0", &a), (2, 2, 256));
        let a = load(16, |l| BASE + 16 * l);
        assert_eq!(rtb("1.0", &a), (2, 4, 512));
        // 16-byte words starting 128 bytes into a 256-byte segment: not coalesced (BPG's
        // alignment to 16 × 16 bytes).
        let a = load(16, |l| BASE + 128 + 16 * l);
        assert_eq!(rtb("1.0", &a), (2, 32, 1024));
        // Only the first 8 lanes of a 16-byte half-warp: still two 128-byte transactions.
        let a = access(Op::Load, 16, 0xFF, |l| BASE + 16 * l);
        assert_eq!(rtb("1.0", &a), (1, 2, 256));
        // 1- and 2-byte words never coalesce.
        let a = load(1, |l| BASE + l);
        assert_eq!(rtb("1.0", &a), (2, 32, 1024));
        let a = load(2, |l| BASE + 2 * l);
        assert_eq!(rtb("1.0", &a), (2, 32, 1024));
        // A misaligned 8-byte lane crossing a 32-byte boundary touches two blocks.
        let a = access(Op::Load, 8, 0x1, |_| BASE + 28);
        assert_eq!(rtb("1.0", &a), (1, 2, 64));
    }

    #[test]
    fn cc10_stores_and_local_follow_the_same_rule() {
        let a = access(Op::Store, 4, u32::MAX, |l| BASE + 4 * l);
        assert_eq!(rtb("1.0", &a), (2, 2, 128));
        let mut a = load(4, |l| BASE + 4 * l + 4);
        a.space = Space::Local;
        assert_eq!(rtb("1.1", &a), (2, 32, 1024));
    }

    // ---------------- 1.2 / 1.3 ----------------

    #[test]
    fn cc13_seed_examples() {
        // BPG: aligned half-warp of floats → one 64-byte transaction.
        let a = access(Op::Load, 4, 0xFFFF, |l| BASE + 4 * l);
        assert_eq!(rtb("1.3", &a), (1, 1, 64));
        // Misaligned within a 128-byte segment → one 128-byte transaction.
        let a = access(Op::Load, 4, 0xFFFF, |l| BASE + 4 + 4 * l);
        assert_eq!(rtb("1.3", &a), (1, 1, 128));
        // Crossing a 128-byte boundary: 64 + 32.
        let a = access(Op::Load, 4, 0xFFFF, |l| BASE + 88 + 4 * l);
        assert_eq!(rtb("1.2", &a), (1, 2, 96));
        // Crossing with doubles: 128 + 32.
        let a = access(Op::Load, 8, 0xFFFF, |l| BASE + 8 + 8 * l);
        assert_eq!(rtb("1.3", &a), (1, 2, 160));
        // 32 + 32 (upper quarter of one segment, lower of the next).
        let a = access(Op::Load, 4, 0xFFFF, |l| BASE + 96 + 4 * l);
        assert_eq!(rtb("1.3", &a), (1, 2, 64));
    }

    #[test]
    fn cc13_whole_warps_and_strides() {
        let a = load(4, |l| BASE + 4 * l);
        assert_eq!(rtb("1.3", &a), (2, 2, 128));
        // Offset by one float: first half [4,68) → 128 B; second half [68,132): the upper
        // half of the first segment (64 B) and the first 4 bytes of the next (32 B).
        let a = load(4, |l| BASE + 4 * (l + 1));
        assert_eq!(rtb("1.3", &a), (2, 3, 224));
        // Stride 2: each half spans 128 bytes → one 128-byte transaction each.
        let a = load(4, |l| BASE + 8 * l);
        assert_eq!(rtb("1.3", &a), (2, 2, 256));
        // Stride 32 floats: every lane its own segment, shrunk to 32 bytes.
        let a = load(4, |l| BASE + 128 * l);
        assert_eq!(rtb("1.3", &a), (2, 32, 1024));
        // All lanes on one word: one 32-byte transaction per half-warp.
        let a = load(4, |_| BASE + 40);
        assert_eq!(rtb("1.3", &a), (2, 2, 64));
        // Reversed order is fine on 1.2+.
        let a = load(4, |l| BASE + 4 * (31 - l));
        assert_eq!(rtb("1.3", &a), (2, 2, 128));
    }

    #[test]
    fn cc13_small_and_wide_words() {
        // 1-byte words: 32-byte segments; 16 bytes → one 32-byte transaction per half.
        let a = load(1, |l| BASE + l);
        assert_eq!(rtb("1.3", &a), (2, 2, 64));
        // 2-byte words: 64-byte segments; 32 bytes → 32 per half.
        let a = load(2, |l| BASE + 2 * l);
        assert_eq!(rtb("1.3", &a), (2, 2, 64));
        // 2-byte words crossing a 64-byte boundary: [50, 82) → 32 + 32.
        let a = access(Op::Load, 2, 0xFFFF, |l| BASE + 50 + 2 * l);
        assert_eq!(rtb("1.3", &a), (1, 2, 64));
        // 16-byte words: a half-warp spans 256 bytes → two 128-byte transactions.
        let a = access(Op::Load, 16, 0xFFFF, |l| BASE + 16 * l);
        assert_eq!(rtb("1.3", &a), (1, 2, 256));
        // A misaligned lane straddling a 128-byte boundary: two pieces, 32 + 32.
        let a = access(Op::Load, 8, 0x1, |_| BASE + 124);
        assert_eq!(rtb("1.3", &a), (1, 2, 64));
    }

    // ---------------- 2.x ----------------

    #[test]
    fn cc20_seed_examples() {
        // Unit-stride float warp: one 128-byte line.
        let a = load(4, |l| BASE + 4 * l);
        assert_eq!(rtb("2.0", &a), (1, 1, 128));
        // Misaligned: two lines.
        let a = load(4, |l| BASE + 4 * (l + 1));
        assert_eq!(rtb("2.0", &a), (1, 2, 256));
        // Doubles: two requests, one line each.
        let a = load(8, |l| BASE + 8 * l);
        assert_eq!(rtb("2.0", &a), (2, 2, 256));
        // float4: four requests, one line each.
        let a = load(16, |l| BASE + 16 * l);
        assert_eq!(rtb("2.1", &a), (4, 4, 512));
        // Stride 2 floats: 256 bytes → 2 lines; stride 32: 32 lines.
        assert_eq!(rtb("2.0", &load(4, |l| BASE + 8 * l)), (1, 2, 256));
        assert_eq!(rtb("2.0", &load(4, |l| BASE + 128 * l)), (1, 32, 4096));
    }

    #[test]
    fn cc20_cg_stores_and_local() {
        let cg = Config {
            l1: L1Mode::Cg,
            ..Config::default()
        };
        let a = load(4, |l| BASE + 4 * (l + 1));
        assert_eq!(with("2.0", cg, &a), (1, 5, 160));
        let a = load(4, |l| BASE + 128 * l);
        assert_eq!(with("2.0", cg, &a), (1, 32, 1024));
        // Stores never use L1: 32-byte segments.
        let s = access(Op::Store, 4, u32::MAX, |l| BASE + 4 * l);
        assert_eq!(rtb("2.0", &s), (1, 4, 128));
        let s = access(Op::Store, 8, u32::MAX, |l| BASE + 8 * l);
        assert_eq!(rtb("2.0", &s), (2, 8, 256));
        // Local memory is L1-cached whatever -dlcm says.
        let mut a = load(4, |l| BASE + 4 * l);
        a.space = Space::Local;
        assert_eq!(with("2.0", cg, &a), (1, 1, 128));
        // Only groups with an active lane make requests.
        let a = access(Op::Load, 16, 0x0000_FF00, |l| BASE + 16 * l);
        assert_eq!(rtb("2.0", &a), (1, 1, 128));
        let a = access(Op::Load, 8, 0x0001_0000, |l| BASE + 8 * l);
        assert_eq!(rtb("2.0", &a), (1, 1, 128));
    }

    // ---------------- 3.x ----------------

    #[test]
    fn cc3x_l2_only_by_default() {
        let a = load(4, |l| BASE + 4 * l);
        assert_eq!(rtb("3.5", &a), (1, 4, 128));
        let a = load(4, |l| BASE + 4 * (l + 1));
        assert_eq!(rtb("3.0", &a), (1, 5, 160));
        let a = load(8, |l| BASE + 8 * l);
        assert_eq!(rtb("3.7", &a), (2, 8, 256));
        let a = load(16, |l| BASE + 16 * l);
        assert_eq!(rtb("3.5", &a), (4, 16, 512));
        // -dlcm=ca: 128-byte lines.
        let ca = Config {
            l1: L1Mode::Ca,
            ..Config::default()
        };
        let a = load(4, |l| BASE + 4 * (l + 1));
        assert_eq!(with("3.5", ca, &a), (1, 2, 256));
        // __ldg on 3.5: read-only cache, 32-byte granularity even with -dlcm=ca.
        let mut r = a;
        r.read_only = true;
        assert_eq!(with("3.5", ca, &r), (1, 5, 160));
        // Local: L1 lines.
        let mut l = load(4, |l| BASE + 4 * l);
        l.space = Space::Local;
        assert_eq!(rtb("3.5", &l), (1, 1, 128));
        // Stores: 32-byte segments.
        let s = access(Op::Store, 4, u32::MAX, |l| BASE + 4 * l);
        assert_eq!(with("3.5", ca, &s), (1, 4, 128));
    }

    // ---------------- 5.x and later ----------------

    #[test]
    fn sector_figures_measured_on_h100() {
        for cc in ["5.0", "6.1", "7.0", "8.6", "9.0", "10.0", "12.0"] {
            // float unit stride 4, misaligned by one float 5, stride s → min(4s, 32).
            assert_eq!(rtb(cc, &load(4, |l| BASE + 4 * l)), (1, 4, 128));
            assert_eq!(rtb(cc, &load(4, |l| BASE + 4 * (l + 1))), (1, 5, 160));
            for s in 1..=40u64 {
                let c = cost(arch(cc), &Config::default(), &load(4, |l| BASE + 4 * s * l));
                assert_eq!(c.sectors, (4 * s).min(32), "stride {s} on {cc}");
            }
            // 1-byte 1, 2-byte 2, 8-byte 8 (misaligned by one element 9), 16-byte 16
            // (misaligned by 16 bytes 17), all lanes one word 1.
            assert_eq!(rtb(cc, &load(1, |l| BASE + l)).2, 32);
            assert_eq!(rtb(cc, &load(2, |l| BASE + 2 * l)).2, 64);
            assert_eq!(rtb(cc, &load(8, |l| BASE + 8 * l)), (1, 8, 256));
            assert_eq!(rtb(cc, &load(8, |l| BASE + 8 * (l + 1))), (1, 9, 288));
            assert_eq!(rtb(cc, &load(16, |l| BASE + 16 * l)), (1, 16, 512));
            assert_eq!(rtb(cc, &load(16, |l| BASE + 16 * (l + 1))), (1, 17, 544));
            assert_eq!(rtb(cc, &load(4, |_| BASE + 4)), (1, 1, 32));
            // Stores the same as loads.
            let s = access(Op::Store, 4, u32::MAX, |l| BASE + 4 * (l + 1));
            assert_eq!(rtb(cc, &s), (1, 5, 160));
        }
    }

    #[test]
    fn sector_misaligned_lane_ranges_are_counted() {
        // A 4-byte lane at 30 covers bytes 30..34: two sectors.
        let a = access(Op::Load, 4, 1, |_| BASE + 30);
        assert_eq!(rtb("9.0", &a), (1, 2, 64));
        // 16-byte lanes at 8 + 16l: 33 sectors' worth of bytes [8, 520) → 17 sectors.
        let a = load(16, |l| BASE + 8 + 16 * l);
        assert_eq!(rtb("9.0", &a), (1, 17, 544));
        // Local uses the same rule.
        let mut a = load(4, |l| BASE + 4 * l);
        a.space = Space::Local;
        assert_eq!(rtb("8.0", &a), (1, 4, 128));
    }

    #[test]
    fn no_active_lane_costs_nothing() {
        for a in crate::arch::all() {
            let c = cost(a, &Config::default(), &access(Op::Load, 4, 0, |l| l));
            assert_eq!(c, Cost::default());
        }
    }

    /// The H100 ground truth `shared/ground-truth/h100/global-f32-loads-stores.csv`
    /// (op, offset, stride, requests, sectors), per warp: `v = a[i*stride + offset]`,
    /// i = blockIdx.x·256 + threadIdx.x.
    const H100_GLOBAL_F32: &str = "\
load,0,1,131072,524288
load,1,1,131072,655360
load,2,1,131072,655360
load,3,1,131072,655360
load,4,1,131072,655360
load,5,1,131072,655360
load,6,1,131072,655360
load,7,1,131072,655360
load,8,1,131072,524288
load,9,1,131072,655360
load,10,1,131072,655360
load,11,1,131072,655360
load,12,1,131072,655360
load,13,1,131072,655360
load,14,1,131072,655360
load,15,1,131072,655360
load,16,1,131072,524288
load,17,1,131072,655360
load,18,1,131072,655360
load,19,1,131072,655360
load,20,1,131072,655360
load,21,1,131072,655360
load,22,1,131072,655360
load,23,1,131072,655360
load,24,1,131072,524288
load,25,1,131072,655360
load,26,1,131072,655360
load,27,1,131072,655360
load,28,1,131072,655360
load,29,1,131072,655360
load,30,1,131072,655360
load,31,1,131072,655360
load,32,1,131072,524288
load,0,2,131072,1048576
load,0,3,131072,1572864
load,0,4,131072,2097152
load,0,5,131072,2621440
load,0,6,131072,3145728
load,0,7,131072,3670016
load,0,8,131072,4194304
load,0,9,131072,4194304
load,0,10,131072,4194304
load,0,11,131072,4194304
load,0,12,131072,4194304
load,0,13,131072,4194304
load,0,14,131072,4194304
load,0,15,131072,4194304
load,0,16,131072,4194304
load,0,17,131072,4194304
load,0,18,131072,4194304
load,0,19,131072,4194304
load,0,20,131072,4194304
load,0,21,131072,4194304
load,0,22,131072,4194304
load,0,23,131072,4194304
load,0,24,131072,4194304
load,0,25,131072,4194304
load,0,26,131072,4194304
load,0,27,131072,4194304
load,0,28,131072,4194304
load,0,29,131072,4194304
load,0,30,131072,4194304
load,0,31,131072,4194304
load,0,32,131072,4194304
store,0,1,131072,524288
store,1,1,131072,655360
store,2,1,131072,655360
store,3,1,131072,655360
store,4,1,131072,655360
store,5,1,131072,655360
store,6,1,131072,655360
store,7,1,131072,655360
store,8,1,131072,524288
store,0,2,131072,1048576
store,0,3,131072,1572864
store,0,4,131072,2097152
store,0,5,131072,2621440
store,0,6,131072,3145728
store,0,7,131072,3670016
store,0,8,131072,4194304";

    #[test]
    fn h100_global_f32_ground_truth() {
        let h = arch("9.0");
        let mut rows = 0;
        for line in H100_GLOBAL_F32.lines() {
            let f: Vec<&str> = line.split(',').collect();
            let op = if f[0] == "load" { Op::Load } else { Op::Store };
            let offset: u64 = f[1].parse().unwrap();
            let stride: u64 = f[2].parse().unwrap();
            let requests: u64 = f[3].parse().unwrap();
            let sectors: u64 = f[4].parse().unwrap();
            assert_eq!(requests, 4_194_304 / 32, "one request per warp");
            assert_eq!(sectors % requests, 0);
            // Every warp of the launch, as far as the pattern can differ: first, second,
            // last of a block, and a few far ones.
            for warp in [0u64, 1, 7, 8, 12345, 131071] {
                let a = access(op, 4, u32::MAX, |l| {
                    BASE + 4 * ((warp * 32 + l) * stride + offset)
                });
                let c = cost(h, &Config::default(), &a);
                assert_eq!(c.requests, 1, "{line}");
                assert_eq!(c.sectors, sectors / requests, "{line} warp {warp}");
            }
            rows += 1;
        }
        assert_eq!(rows, 80);
    }

    /// PG5 F.3.2.2's protocol as literally written (lowest unserved lane first, quadratic),
    /// to check the per-segment computation of [`segment_protocol`] against.
    fn literal_protocol(a: &WarpAccess, sub: u32, w: u64) -> (u64, u64) {
        let seg: u64 = match w {
            1 => 32,
            2 => 64,
            _ => 128,
        };
        let mut pieces: Vec<(u64, u64)> = Vec::new();
        for l in lanes(sub) {
            let (mut s, e) = (a.addrs[l], a.addrs[l] + w);
            while s < e {
                let pe = e.min((s / seg + 1) * seg);
                pieces.push((s, pe));
                s = pe;
            }
        }
        let mut served = vec![false; pieces.len()];
        let (mut t, mut bytes) = (0, 0);
        while let Some(first) = served.iter().position(|&x| !x) {
            let base = pieces[first].0 / seg * seg;
            let (mut lo, mut hi) = (u64::MAX, 0);
            for (j, p) in pieces.iter().enumerate() {
                if !served[j] && p.0 >= base && p.0 < base + seg {
                    served[j] = true;
                    lo = lo.min(p.0);
                    hi = hi.max(p.1);
                }
            }
            let (mut b, mut size) = (base, seg);
            while size > 32 {
                if hi <= b + size / 2 {
                    size /= 2;
                } else if lo >= b + size / 2 {
                    b += size / 2;
                    size /= 2;
                } else {
                    break;
                }
            }
            t += 1;
            bytes += size;
        }
        (t, bytes)
    }

    // ---------------- properties ----------------

    fn any_arch() -> impl Strategy<Value = &'static Arch> {
        proptest::sample::select(crate::arch::all().iter().collect::<Vec<_>>())
    }

    fn any_config() -> impl Strategy<Value = Config> {
        (0..3u8).prop_map(|i| Config {
            l1: [L1Mode::Default, L1Mode::Ca, L1Mode::Cg][i as usize],
            ..Config::default()
        })
    }

    fn any_width() -> impl Strategy<Value = u32> {
        proptest::sample::select(vec![1u32, 2, 4, 8, 16])
    }

    /// Addresses near each other (so that coalescing happens) or scattered.
    fn any_addrs() -> impl Strategy<Value = [u64; 32]> {
        prop_oneof![
            proptest::array::uniform32(0u64..512),
            proptest::array::uniform32(0u64..(1 << 20)),
            (0u64..64, 1u64..40).prop_map(|(o, s)| {
                let mut a = [0u64; 32];
                for (l, x) in a.iter_mut().enumerate() {
                    *x = o + s * l as u64;
                }
                a
            }),
        ]
    }

    fn any_access() -> impl Strategy<Value = WarpAccess> {
        (
            any_width(),
            any::<u32>(),
            any_addrs(),
            any::<bool>(),
            any::<bool>(),
            any::<bool>(),
        )
            .prop_map(|(width, mask, addrs, store, local, ro)| WarpAccess {
                space: if local { Space::Local } else { Space::Global },
                op: if store { Op::Store } else { Op::Load },
                width,
                mask,
                addrs,
                read_only: ro,
                lanes: LaneForm::Unknown,
            })
    }

    /// The same access with every lane's address rounded down to a multiple of the width.
    fn aligned(mut a: WarpAccess) -> WarpAccess {
        for x in a.addrs.iter_mut() {
            *x -= *x % a.width as u64;
        }
        a
    }

    proptest! {
        #[test]
        fn inactive_lanes_never_matter(arch in any_arch(), config in any_config(),
                                       a in any_access(), junk in any_addrs()) {
            let mut b = a;
            for (l, &j) in junk.iter().enumerate() {
                if a.mask & (1 << l) == 0 {
                    b.addrs[l] = j;
                }
            }
            prop_assert_eq!(cost(arch, &config, &a), cost(arch, &config, &b));
        }

        #[test]
        fn counters_are_consistent(arch in any_arch(), config in any_config(), a in any_access()) {
            let c = cost(arch, &config, &a);
            prop_assert_eq!(c.sectors * 32, c.transaction_bytes);
            let lanes = a.mask.count_ones() as u64;
            if lanes == 0 {
                prop_assert_eq!(c, Cost::default());
            } else {
                prop_assert!(c.requests >= 1 && c.requests <= 4);
                prop_assert!(c.transactions >= c.requests);
                // Each lane touches at most two 32-byte blocks; 1.0 coalesced 16-byte
                // half-warps cost 256 bytes for as few as one lane.
                prop_assert!(c.transaction_bytes <= 128 * 2 * lanes + 256);
            }
        }

        #[test]
        fn sector_bounds(a in any_access()) {
            let a = aligned(a);
            let c = cost(arch("9.0"), &Config::default(), &a);
            let lanes = a.mask.count_ones() as u64;
            let mut distinct: Vec<u64> = a.active().map(|(_, x)| x).collect();
            distinct.sort_unstable();
            distinct.dedup();
            let useful = distinct.len() as u64 * a.width as u64;
            prop_assert!(c.sectors >= useful.div_ceil(32));
            prop_assert!(c.sectors <= lanes);
            prop_assert_eq!(c.requests, u64::from(lanes > 0));
        }

        #[test]
        fn efficiency_at_most_one_for_distinct_aligned_lanes(arch in any_arch(),
                config in any_config(), a in any_access()) {
            let mut a = aligned(a);
            // Keep the first lane of each address.
            let mut seen: Vec<u64> = Vec::new();
            for l in 0..32 {
                if a.mask & (1 << l) != 0 {
                    if seen.contains(&a.addrs[l]) {
                        a.mask &= !(1 << l);
                    } else {
                        seen.push(a.addrs[l]);
                    }
                }
            }
            let c = crate::cost::cost(arch, &config, &a);
            if let Some(e) = c.efficiency() {
                prop_assert!(e <= 1.0, "efficiency {} on {}", e, arch.cc);
            }
        }

        #[test]
        fn sector_count_ignores_lane_order(a in any_access(), perm in Just((0..32).collect::<Vec<usize>>()).prop_shuffle()) {
            let mut b = a;
            b.mask = 0;
            for (l, &p) in perm.iter().enumerate() {
                b.addrs[p] = a.addrs[l];
                if a.mask & (1 << l) != 0 {
                    b.mask |= 1 << p;
                }
            }
            for cc in ["5.2", "9.0", "12.0"] {
                prop_assert_eq!(cost(arch(cc), &Config::default(), &a),
                                cost(arch(cc), &Config::default(), &b));
            }
            // 2.x/3.x with whole-warp requests (width ≤ 4) do not care either.
            if a.width <= 4 {
                for cc in ["2.0", "3.5"] {
                    prop_assert_eq!(cost(arch(cc), &Config::default(), &a),
                                    cost(arch(cc), &Config::default(), &b));
                }
            }
        }

        #[test]
        fn segment_protocol_never_issues_more_transactions_than_cc10(a in any_access()) {
            // (Not bytes: two lanes 100 bytes apart cost 2 × 32 B on 1.0 but one 128 B
            // transaction on 1.2/1.3.)
            let a = aligned(a);
            let strict = cost(arch("1.0"), &Config::default(), &a);
            let seg = cost(arch("1.3"), &Config::default(), &a);
            prop_assert!(seg.transactions <= strict.transactions);
            prop_assert_eq!(seg.requests, strict.requests);
        }

        #[test]
        fn segment_protocol_is_the_literal_protocol(a in any_access()) {
            for h in 0..2 {
                let sub = a.mask & (0xFFFF << (16 * h));
                let w = a.width as u64;
                prop_assert_eq!(segment_protocol(&a, sub, w), literal_protocol(&a, sub, w));
            }
        }

        #[test]
        fn lines_versus_segments(a in any_access()) {
            let mut a = a;
            a.op = Op::Load;
            a.space = Space::Global;
            let ca = Config { l1: L1Mode::Ca, ..Config::default() };
            let cg = Config { l1: L1Mode::Cg, ..Config::default() };
            let lines = cost(arch("2.0"), &ca, &a);
            let segs = cost(arch("2.0"), &cg, &a);
            prop_assert!(lines.transactions <= segs.transactions);
            prop_assert!(lines.transaction_bytes >= segs.transaction_bytes);
            prop_assert_eq!(lines.requests, segs.requests);
            // 3.x with -dlcm=cg is 2.x with -dlcm=cg; 5.x sectors are 3.x segments when the
            // whole warp is one request.
            prop_assert_eq!(cost(arch("3.5"), &cg, &a), segs);
            if a.width <= 4 {
                let s = cost(arch("5.0"), &cg, &a);
                prop_assert_eq!(s.sectors, segs.sectors);
            }
        }
    }
}
