//! The source path on the C++ that real kernels use (atomics, cooperative groups, warp
//! shuffles): the same figures as the compiled path, where nvcc keeps every access.

mod common;
use common::json;

fn compiler() -> bool {
    let found = warpscope_toolkit::find(None).is_ok();
    if !found {
        eprintln!("skipped the compiled half: no CUDA compiler (scripts/test.sh installs one)");
    }
    found
}

/// Runs `file` through the source path and, with a compiler, the compiled path; the source
/// totals are returned after checking they equal the compiled ones.
fn both(file: &str, launch: &[&str]) -> serde_json::Value {
    let mut s = vec!["analyze", file, "--frontend", "source"];
    s.extend(launch);
    let sv = json(&s);
    if compiler() {
        let mut c = vec!["analyze", file, "--frontend", "ptx"];
        c.extend(launch);
        let cv = json(&c);
        assert_eq!(
            cv["architectures"][0]["totals"], sv["architectures"][0]["totals"],
            "{file}: compiled vs source"
        );
    }
    sv["architectures"][0]["totals"].clone()
}

/// A 256-bin histogram (shared atomic per element, global atomic per bin), CC 9.0, 16 blocks
/// of 256 threads over 65,536 zero bytes: 2,048 warp-level byte loads (1 request, 1 sector
/// each), 2,048 shared atomics all on bin 0, 128 global atomics (one per bin per warp: 4
/// sectors each, 32 consecutive words).
#[test]
fn histogram_with_shared_and_global_atomics() {
    let t = both(
        "tests/kernels/compiled/histogram.cu",
        &[
            "--kernel",
            "histogram256",
            "--grid",
            "16",
            "--block",
            "256",
            "--arg",
            "n=65536",
            "--cc",
            "9.0",
        ],
    );
    assert_eq!(t["global_load"]["requests"], 2048);
    assert_eq!(t["global_load"]["transactions"], 2048);
    assert_eq!(t["shared_atomic"]["requests"], 2048);
    assert_eq!(t["global_atomic"]["requests"], 128);
    assert_eq!(t["global_atomic"]["transactions"], 128 * 4);
}

/// cuda-samples-style block sum with cooperative groups and warp shuffles, CC 9.0, 64
/// blocks of 256: one coalesced float load per warp (4 sectors), one shared store per warp,
/// the 8 warp sums read by warp 0, one global store per block.
#[test]
fn cooperative_groups_reduction_matches() {
    let t = both(
        "tests/kernels/compiled/reduce_cg.cu",
        &[
            "--kernel",
            "reduce_cg",
            "--grid",
            "64",
            "--block",
            "256",
            "--arg",
            "n=16384",
            "--cc",
            "9.0",
        ],
    );
    assert_eq!(t["global_load"]["requests"], 512);
    assert_eq!(t["global_load"]["transactions"], 2048);
    assert_eq!(t["shared_store"]["requests"], 512);
    assert_eq!(t["shared_load"]["requests"], 64);
    assert_eq!(t["global_store"]["requests"], 64);
}
