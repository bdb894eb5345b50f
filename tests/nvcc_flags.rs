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

/// The header's ptxas line and theoretical occupancy, in the table and in JSON.
/// sm_90, 1024 threads per block (32 warps):
/// - ptxas's own choice, 48 registers: 48 × 32 = 1536 per warp; 65536 / 4 sub-partitions
///   = 16384 → 10 warps each → 40 warps → 1 block = 32 of 64 warps, 50 %, registers.
///   8.6: 1 block, 32 of 48 warps, 66.7 %, limited by warps (48 / 32 = 1) and registers.
/// - -maxrregcount=24: 768 per warp → 21 warps per sub-partition → 84 → 2 blocks; warps
///   64 / 32 = 2 as well: 64 of 64, 100 %, limited by warps and registers; ptxas spills
///   248 bytes per thread and loads back 328 (nvcc 13.0).
#[test]
fn header_shows_registers_spills_and_occupancy() {
    if !compiler() {
        return;
    }
    let free = json(&[
        "analyze", HEAVY, "--kernel", "spill", "--grid", "4", "--block", "1024", "--arg", "n=4096",
        "--cc", "9.0,8.6",
    ]);
    let r = &free["resources"];
    assert_eq!(r["sass_target"], "sm_90");
    assert_eq!(r["registers_per_thread"], 48);
    assert_eq!(r["spill_store_bytes"], 0);
    assert_eq!(r["threads_per_block"], 1024);
    let o = &r["occupancy"][0]["theoretical"];
    assert_eq!(
        (o["cc"].as_str(), o["blocks_per_sm"].as_u64()),
        (Some("9.0"), Some(1))
    );
    assert_eq!(
        (o["warps_per_sm"].as_u64(), o["occupancy"].as_f64()),
        (Some(32), Some(0.5))
    );
    assert_eq!(o["limited_by"], serde_json::json!(["registers"]));
    let o = &r["occupancy"][1]["theoretical"];
    assert_eq!(
        (o["cc"].as_str(), o["warps_per_sm"].as_u64()),
        (Some("8.6"), Some(32))
    );
    assert_eq!(o["max_warps_per_sm"], 48);

    let tight = heavy(&["--nvcc-flag=-maxrregcount=24"]);
    let r = &tight["resources"];
    assert_eq!(r["registers_per_thread"], 24);
    assert_eq!(r["spill_store_bytes"], 248);
    assert_eq!(r["spill_load_bytes"], 328);
    let o = &r["occupancy"][0]["theoretical"];
    assert_eq!(
        (o["blocks_per_sm"].as_u64(), o["occupancy"].as_f64()),
        (Some(2), Some(1.0))
    );
    assert_eq!(o["limited_by"], serde_json::json!(["warps", "registers"]));

    let (ok, out, _) = warpscope(&[
        "analyze",
        HEAVY,
        "--kernel",
        "spill",
        "--grid",
        "4",
        "--block",
        "1024",
        "--arg",
        "n=4096",
        "--cc",
        "9.0",
        "--nvcc-flag=-maxrregcount=24",
    ]);
    assert!(ok);
    let header: Vec<&str> = out.lines().take(3).collect();
    assert_eq!(
        header[1],
        "ptxas sm_90: 24 registers/thread, 248 B spill stores, 328 B spill loads (208 B stack), 0 B static shared"
    );
    assert_eq!(
        header[2],
        "theoretical occupancy (1024 threads/block): CC 9.0 100 % (2 blocks, 64/64 warps; limited by warps and registers)"
    );
    // --no-sass runs no ptxas: no figures.
    assert!(heavy(&["--no-sass"]).get("resources").is_none());
}
