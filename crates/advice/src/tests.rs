use super::*;
use warpscope_model::arch::lookup;

fn arch(s: &str) -> &'static Arch {
    lookup(s.parse().unwrap()).unwrap()
}

fn access(space: Space, width: u32, f: impl Fn(u64) -> u64) -> WarpAccess {
    WarpAccess {
        space,
        op: Op::Load,
        width,
        mask: u32::MAX,
        addrs: std::array::from_fn(|l| f(l as u64)),
        read_only: false,
    }
}

fn after(cc: &str, f: &Finding) -> Cost {
    cost(arch(cc), &Config::default(), f.fixed.as_ref().unwrap())
}

#[test]
fn coalesced_access_needs_no_advice() {
    let a = access(Space::Global, 4, |l| 4096 + 4 * l);
    for cc in ["1.0", "1.3", "2.0", "3.5", "9.0"] {
        assert!(diagnose(&SiteFacts::default(), arch(cc), &Config::default(), &a).is_empty());
    }
}
