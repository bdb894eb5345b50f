//! Constant memory: requests per distinct address (reference, "Constant memory"; PG5
//! 5.3.2.4; BPG).

use crate::access::WarpAccess;
use crate::arch::{Arch, Family};
use crate::cost::Cost;

/// Costs one constant-memory warp access on `arch`: fills `requests` only (constant accesses
/// have no transactions, sectors or wavefronts). "A request is split into as many separate
/// requests as there are different memory addresses in the initial request" \[PG\]: requests =
/// the number of distinct addresses among the active lanes, counted per half-warp and summed
/// on 1.x (which serves half-warps separately), over the whole warp from 2.0 on. Addresses
/// are compared as given (byte addresses): lanes reading different bytes of one word count
/// as different addresses, as the guide's wording says. No active lane → nothing.
pub fn cost(arch: &Arch, a: &WarpAccess) -> Cost {
    let mut c = Cost::default();
    let groups: &[u32] = match arch.family {
        Family::Cc1Strict | Family::Cc1Segment => &[0x0000_FFFF, 0xFFFF_0000],
        _ => &[u32::MAX],
    };
    for &g in groups {
        c.requests += distinct_addresses(a, a.mask & g);
    }
    c
}

/// Distinct addresses among the lanes of `sub` (no allocation: at most 32 compared pairwise).
fn distinct_addresses(a: &WarpAccess, sub: u32) -> u64 {
    let mut seen = [0u64; 32];
    let mut n = 0;
    for l in crate::global::lanes(sub) {
        let x = a.addrs[l];
        if !seen[..n].contains(&x) {
            seen[n] = x;
            n += 1;
        }
    }
    n as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::access::{Op, Space};
    use crate::arch::lookup;
    use crate::lanes::LaneForm;

    fn arch(s: &str) -> &'static Arch {
        lookup(s.parse().unwrap()).unwrap()
    }

    fn access(mask: u32, f: impl Fn(u64) -> u64) -> WarpAccess {
        let mut addrs = [0u64; 32];
        for (l, a) in addrs.iter_mut().enumerate() {
            *a = f(l as u64);
        }
        WarpAccess {
            space: Space::Constant,
            op: Op::Load,
            width: 4,
            mask,
            addrs,
            read_only: false,
            lanes: LaneForm::Unknown,
        }
    }

    #[test]
    fn uniform_address_is_one_request() {
        let a = access(u32::MAX, |_| 64);
        assert_eq!(cost(arch("9.0"), &a).requests, 1);
        assert_eq!(cost(arch("2.0"), &a).requests, 1);
        // 1.x: one per half-warp.
        assert_eq!(cost(arch("1.3"), &a).requests, 2);
        assert_eq!(cost(arch("1.0"), &access(0xFFFF, |_| 64)).requests, 1);
    }

    #[test]
    fn distinct_addresses_serialize() {
        let a = access(u32::MAX, |l| 4 * l);
        assert_eq!(cost(arch("9.0"), &a).requests, 32);
        assert_eq!(cost(arch("1.0"), &a).requests, 32);
        // Two values, alternating.
        let a = access(u32::MAX, |l| 4 * (l % 2));
        assert_eq!(cost(arch("8.0"), &a).requests, 2);
        assert_eq!(cost(arch("1.1"), &a).requests, 4);
        // Lanes 0-15 on one address, 16-31 on another.
        let a = access(u32::MAX, |l| 4 * (l / 16));
        assert_eq!(cost(arch("3.5"), &a).requests, 2);
        assert_eq!(cost(arch("1.2"), &a).requests, 2);
        // Different bytes of one word are different addresses.
        let a = access(0b11, |l| l);
        assert_eq!(cost(arch("9.0"), &a).requests, 2);
    }

    #[test]
    fn inactive_lanes_do_not_count() {
        let a = access(0x8000_0001, |l| 4 * l);
        assert_eq!(cost(arch("9.0"), &a).requests, 2);
        assert_eq!(cost(arch("1.0"), &a).requests, 2);
        assert_eq!(cost(arch("9.0"), &access(0, |l| l)), Cost::default());
        let c = cost(arch("7.5"), &access(u32::MAX, |l| 4 * l));
        assert_eq!((c.transactions, c.sectors, c.wavefronts), (0, 0, 0));
    }
}
