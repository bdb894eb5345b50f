//! The sweep: over many regular access patterns of 2-D blocks, on every compute capability,
//! advice is never given to an access at its minimum (for global memory: never at 100 %
//! efficiency), never names the read-only path for a store, never calls a regular pattern
//! scattered, and every modelled fix costs less than the access it replaces.

use super::*;
use warpscope_model::arch::all;
use warpscope_model::LaneForm;

/// Which index a warp's threadIdx.x runs along.
#[derive(Clone, Copy, Debug)]
enum Walk {
    /// `a[(ty·pitch + tx)·stride + offset]`.
    Row,
    /// `a[(tx·pitch + ty)·stride + offset]`.
    Column,
}

const BLOCKS: [(u64, u64); 4] = [(8, 4), (16, 16), (32, 8), (32, 32)];

/// The warps of a block worth sweeping: the first two and the last.
fn warps(block: (u64, u64)) -> Vec<u64> {
    let n = block.0 * block.1 / 32;
    let mut w = vec![0, 1.min(n - 1), n - 1];
    w.dedup();
    w
}

/// Lane *l* of warp `warp`: thread t = 32·warp + l = (t % bx, t / bx).
fn warp_access(
    space: Space,
    op: Op,
    width: u32,
    block: (u64, u64),
    warp: u64,
    element: impl Fn(u64, u64) -> u64,
) -> WarpAccess {
    let base = if space == Space::Shared { 0 } else { 1 << 20 };
    let mut a = WarpAccess {
        space,
        op,
        width,
        mask: 0,
        addrs: [0; 32],
        read_only: false,
        lanes: LaneForm::Unknown,
    };
    for l in 0..32u64 {
        let t = 32 * warp + l;
        if t < block.0 * block.1 {
            a.mask |= 1 << l;
            a.addrs[l as usize] = base + element(t % block.0, t / block.0) * u64::from(width);
        }
    }
    a
}

/// Offsets in elements: every one from 0 to 32 for global memory; for shared memory (where
/// an offset only shifts every lane's bank alike, and each conflicting case costs a padding
/// search) every third, and 32.
fn offsets(space: Space) -> Vec<u64> {
    match space {
        Space::Shared => (0..=30).step_by(3).chain([32]).collect(),
        _ => (0..=32).collect(),
    }
}

/// Checks every rule of the sweep for `a` on `arch`; returns whether advice was given.
fn check(arch: &Arch, facts: &SiteFacts, a: &WarpAccess, what: &dyn Fn() -> String) -> bool {
    let config = Config::default();
    let before = cost(arch, &config, a);
    let found = diagnose(facts, arch, &config, a);
    let cc = arch.cc;
    match a.space {
        Space::Global | Space::Local => {
            if before.bytes_requested >= before.transaction_bytes {
                assert!(found.is_empty(), "{cc} {}: 100 % but {found:?}", what());
            }
        }
        _ => {
            // On 3.x, 8-byte words have the 8-byte bank mode too, a host call away: the
            // minimum is the lesser of the two modes' [PG5 F.5.3].
            let eight = Config {
                smem_bank_mode: warpscope_model::SmemBankMode::EightByte,
                ..config
            };
            let least = [config, eight]
                .iter()
                .filter(|c| {
                    c.smem_bank_mode == config.smem_bank_mode
                        || arch.family == Family::Kepler && a.width >= 8
                })
                .map(|c| cost(arch, c, &contiguous(a)).wavefronts)
                .min()
                .unwrap_or(0);
            if before.wavefronts <= least || before.wavefronts == before.requests {
                assert!(
                    found.is_empty(),
                    "{cc} {}: conflict-free but {found:?}",
                    what()
                );
            }
        }
    }
    for f in &found {
        assert_ne!(f.cause, Cause::Scattered, "{cc} {}: {f:?}", what());
        if a.op != Op::Load {
            assert!(
                !f.fix.contains("__ldg") && !f.fix.contains("read-only"),
                "{cc} {}: store told {}",
                what(),
                f.fix
            );
        }
        if let Some(fixed) = &f.fixed {
            // A vector or padded access replaces one access per field.
            let replaces = match f.cause {
                Cause::PadStructure { struct_bytes, .. } => struct_bytes / u64::from(a.width),
                Cause::VectorWidth { elements, .. } => elements,
                _ => 1,
            };
            let fixed_config = f.fixed_config.unwrap_or(config);
            let after = weight(&cost(arch, &fixed_config, fixed), fixed.space);
            assert!(
                after < replaces * weight(&before, a.space),
                "{cc} {}: the fix {} does not help ({after} after, {before:?})",
                what(),
                f.fix
            );
        }
    }
    !found.is_empty()
}

/// One compute capability of each set of rules: 1.x strict and segment, Fermi, Kepler
/// (with and without the read-only cache), Maxwell, Volta's shared-memory pairing, Hopper.
fn archs() -> Vec<&'static Arch> {
    let wanted = ["1.0", "1.3", "2.0", "3.0", "3.5", "5.0", "7.0", "9.0"];
    all()
        .iter()
        .filter(|a| wanted.contains(&a.cc.to_string().as_str()))
        .collect()
}

/// Sweeps every pattern on `arch`: (accesses advised, accesses left alone).
fn sweep(arch: &Arch) -> (u64, u64) {
    let (mut advised, mut quiet) = (0u64, 0u64);
    for space in [Space::Global, Space::Shared] {
        for walk in [Walk::Row, Walk::Column] {
            // Shared tiles: 32 or 33 elements a row; global rows: 1024.
            let pitches: &[u64] = match space {
                Space::Shared => &[32, 33],
                _ => &[1024],
            };
            let text = match (space, walk) {
                (Space::Shared, Walk::Row) => "t[threadIdx.y][threadIdx.x * s + o]",
                (Space::Shared, Walk::Column) => "t[threadIdx.x][threadIdx.y * s + o]",
                (_, Walk::Row) => "a[(y * width + x) * s + o]",
                (_, Walk::Column) => "a[(x * width + y) * s + o]",
            };
            let facts = SiteFacts {
                text,
                start_offsets: 1,
                ..Default::default()
            };
            for &pitch in pitches {
                for block in BLOCKS {
                    for warp in warps(block) {
                        for width in [4u32, 8, 16] {
                            for stride in 1..=33u64 {
                                for offset in offsets(space) {
                                    let element = |x: u64, y: u64| match walk {
                                        Walk::Row => (y * pitch + x) * stride + offset,
                                        Walk::Column => (x * pitch + y) * stride + offset,
                                    };
                                    for op in [Op::Load, Op::Store] {
                                        let a = warp_access(space, op, width, block, warp, element);
                                        let what = || {
                                            format!(
                                                "{space:?} {op:?} {walk:?} pitch {pitch} block \
                                                 {block:?} warp {warp} width {width} stride \
                                                 {stride} offset {offset}"
                                            )
                                        };
                                        if check(arch, &facts, &a, &what) {
                                            advised += 1;
                                        } else {
                                            quiet += 1;
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
    (advised, quiet)
}

#[test]
fn sweep_no_advice_at_the_minimum_and_no_ldg_for_stores() {
    let archs = archs();
    assert_eq!(archs.len(), 8);
    let counts: Vec<(u64, u64)> = std::thread::scope(|s| {
        let runs: Vec<_> = archs.iter().map(|arch| s.spawn(|| sweep(arch))).collect();
        runs.into_iter()
            .map(|r| r.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
            .collect()
    });
    // Every CC both advises and stays quiet plentifully (a sweep that never advises proves
    // nothing). On 3.x the 8-byte bank mode helps many 8- and 16-byte shared accesses that
    // are at their 4-byte-mode minimum, so fewer stay quiet there.
    for (arch, (advised, quiet)) in archs.iter().zip(counts) {
        assert!(
            advised > 100_000 && quiet > 5_000,
            "{}: {advised} {quiet}",
            arch.cc
        );
    }
}
