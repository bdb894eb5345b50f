//! `--nvcc-flag`: nvcc arguments passed through, and those meant for ptxas also given to the
//! SASS check's ptxas (tests/kernels/compiled/register_heavy.cu).

mod common;
use common::{compiler, json, warpscope};

const HEAVY: &str = "tests/kernels/compiled/register_heavy.cu";

fn heavy(extra: &[&str]) -> serde_json::Value {
    let mut args = vec![
        "analyze", HEAVY, "--kernel", "spill", "--grid", "4", "--block", "1024", "--arg", "n=4096",
        "--cc", "9.0",
    ];
    args.extend(extra);
    json(&args)
}

/// Local stores in the figures: the spills ptxas added.
fn local_store_requests(v: &serde_json::Value) -> u64 {
    v["architectures"][0]["sites"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["space"] == "local" && s["op"] == "store")
        .map(|s| s["requests"].as_u64().unwrap())
        .sum()
}

#[test]
fn maxrregcount_reaches_ptxas_and_its_spills_are_costed() {
    if !compiler() {
        return;
    }
    let free = heavy(&[]);
    assert_eq!(local_store_requests(&free), 0);
    let tight = heavy(&["--nvcc-flag=-maxrregcount=24"]);
    // 128 warps; ptxas stores 248 bytes per thread in 4-byte spills at 24 registers.
    assert!(local_store_requests(&tight) > 0, "{tight}");
    let notes = tight["notes"].to_string();
    assert!(notes.contains("24 registers"), "{notes}");
    assert!(notes.contains("248 bytes spill stores"), "{notes}");
    // The same through -Xptxas, as nvcc takes it.
    let x = heavy(&["--nvcc-flag=-Xptxas=--maxrregcount=24"]);
    assert_eq!(local_store_requests(&x), local_store_requests(&tight));
}

#[test]
fn a_flag_nvcc_rejects_is_its_error() {
    if !compiler() {
        return;
    }
    let (ok, _, err) = warpscope(&[
        "analyze",
        HEAVY,
        "--kernel",
        "spill",
        "--grid",
        "1",
        "--block",
        "32",
        "--arg",
        "n=32",
        "--nvcc-flag=--no-such-flag",
    ]);
    assert!(!ok);
    assert!(err.contains("--no-such-flag"), "{err}");
}
