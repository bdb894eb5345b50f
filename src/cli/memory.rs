//! The default of `--max-memory`: half the memory available when warpscope starts, so that a
//! launch too large for the machine is refused with a message instead of being killed by
//! the system (a constant 4 GiB let a 4 GB machine run out of memory, issue 21). The cap only
//! decides whether a launch is refused, never a figure of one that runs.

use std::sync::OnceLock;

/// The smallest default cap, 256 MiB, on a machine with less than 512 MiB available: the
/// corpus's kernels need a few MiB, the largest tests' launches about 100 MiB.
pub const MIN_DEFAULT_MAX_MEMORY: u64 = 256 << 20;

/// The cap for `available` bytes of available memory: half of it, at least
/// [`MIN_DEFAULT_MAX_MEMORY`]; [`warpscope::DEFAULT_MAX_MEMORY`] (4 GiB) when the memory
/// available is not known.
pub fn cap_for(available: Option<u64>) -> u64 {
    match available {
        Some(bytes) => (bytes / 2).max(MIN_DEFAULT_MAX_MEMORY),
        None => warpscope::DEFAULT_MAX_MEMORY,
    }
}

/// Bytes of memory available now (sysinfo: `MemAvailable` of /proc/meminfo on Linux, the
/// OS's equivalent elsewhere), or, in a control group with a memory limit below the
/// machine's (a container's), that limit less the group's anonymous memory when lower (the
/// group's page cache, reclaimable, does not count); `None` when the OS does not say.
pub fn available_memory() -> Option<u64> {
    if !sysinfo::IS_SUPPORTED_SYSTEM {
        return None;
    }
    let mut sys = sysinfo::System::new();
    sys.refresh_memory();
    let machine = Some(sys.available_memory()).filter(|&b| b > 0);
    let group = sys
        .cgroup_limits()
        .filter(|c| c.total_memory < sys.total_memory())
        .map(|c| c.total_memory.saturating_sub(c.rss));
    match (machine, group) {
        (Some(m), Some(g)) => Some(m.min(g)),
        (m, g) => m.or(g),
    }
}

/// `--max-memory`'s default: [`cap_for`] the memory available, read once per process.
pub fn default_max_memory() -> u64 {
    static CAP: OnceLock<u64> = OnceLock::new();
    *CAP.get_or_init(|| cap_for(available_memory()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn half_the_available_memory_with_a_floor() {
        assert_eq!(cap_for(Some(24 << 30)), 12 << 30);
        assert_eq!(cap_for(Some(4_000_000_000)), 2_000_000_000);
        // Under 512 MiB available, the floor.
        assert_eq!(cap_for(Some(300 << 20)), 256 << 20);
        assert_eq!(cap_for(Some(0)), 256 << 20);
        assert_eq!(cap_for(None), 4 << 30);
    }

    #[test]
    fn this_machine_reports_its_memory() {
        // Every OS sysinfo supports says how much memory is available: no more than it has.
        if sysinfo::IS_SUPPORTED_SYSTEM {
            let mut sys = sysinfo::System::new();
            sys.refresh_memory();
            let total = sys.total_memory();
            let available = available_memory().expect("available memory");
            assert!(
                available > 0 && available <= total,
                "{available} of {total}"
            );
            let cap = default_max_memory();
            assert!(cap >= MIN_DEFAULT_MAX_MEMORY, "{cap}");
            assert!(
                cap <= (total / 2).max(MIN_DEFAULT_MAX_MEMORY),
                "{cap} of {total}"
            );
        }
    }
}
