//! `analyze --gpu`: traffic below the request and predicted time, and its bad input.

mod common;
use common::warpscope;

const COPY: &[&str] = &[
    "analyze",
    "examples/harris.cu",
    "--kernel",
    "offset_copy",
    "--grid",
    "4096",
    "--block",
    "256",
    "--arg",
    "n=1048576",
    "--arg",
    "offset=1",
];

#[test]
fn misaligned_copy_on_h100_moves_only_useful_bytes_in_dram() {
    let mut args = COPY.to_vec();
    args.extend_from_slice(&["--gpu", "h100", "--format", "json"]);
    let (ok, out, err) = warpscope(&args);
    assert!(ok, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["architectures"].as_array().unwrap().len(), 1);
    assert_eq!(v["architectures"][0]["cc"], "9.0");
    let t = &v["traffic"][0]["launch"];
    // 2^20 - 1 threads copy one float each: 4 bytes read + 4 written.
    let requested = t["bytes_requested"].as_u64().unwrap();
    assert_eq!(requested, 8 * ((1 << 20) - 1));
    // 5 sectors per request for 4 useful: transactions exceed the useful bytes by about 25 %,
    // but the neighbouring warp finds the extra sector in L2, so DRAM reads stay at the
    // 4 MiB of `a` (64-byte DRAM granularity, reference "Below the request").
    let tx = t["transaction_bytes"].as_u64().unwrap() as f64;
    assert!(tx > 1.2 * requested as f64, "{tx}");
    let dram_read = t["dram_read_bytes"].as_u64().unwrap();
    assert!(
        (4 << 20..(4 << 20) + 256).contains(&dram_read),
        "{dram_read}"
    );
    let gbps = v["traffic"][0]["effective_gbps"].as_f64().unwrap();
    assert!(gbps > 1000.0 && gbps < 3350.0, "{gbps}");
}

#[test]
fn c870_pays_for_every_transaction_in_dram() {
    let mut args = COPY.to_vec();
    args.extend_from_slice(&["--gpu", "c870", "--format", "json"]);
    let (ok, out, err) = warpscope(&args);
    assert!(ok, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let t = &v["traffic"][0]["launch"];
    // No cache on 1.0: DRAM moves every 32-byte transaction of the misaligned half-warps.
    let dram = t["dram_read_bytes"].as_u64().unwrap() + t["dram_write_bytes"].as_u64().unwrap();
    assert_eq!(dram, t["transaction_bytes"].as_u64().unwrap());
    // 16 transactions of 32 B for every 16 lanes × 4 B: 8 times the useful bytes.
    assert_eq!(dram, 8 * t["bytes_requested"].as_u64().unwrap());
}

#[test]
fn gpu_bad_input() {
    let mut a = COPY.to_vec();
    a.extend_from_slice(&["--gpu", "h100", "--cc", "8.0"]);
    let (ok, _, err) = warpscope(&a);
    assert!(
        !ok && err.contains("CC 9.0") && err.contains("drop --cc"),
        "{err}"
    );
    let mut a = COPY.to_vec();
    a.extend_from_slice(&["--gpu", "gtx-9999"]);
    let (ok, _, err) = warpscope(&a);
    assert!(
        !ok && err.contains("gtx-9999") && err.contains("H100"),
        "{err}"
    );
    let dir = std::env::temp_dir().join(format!("warpscope-profile-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("bad.json");
    std::fs::write(&p, "{ not json").unwrap();
    let mut a = COPY.to_vec();
    a.extend_from_slice(&["--gpu", "h100", "--profile", p.to_str().unwrap()]);
    let (ok, _, err) = warpscope(&a);
    assert!(!ok && err.contains("--profile"), "{err}");
    let mut a = COPY.to_vec();
    a.extend_from_slice(&["--gpu", "h100", "--profile", "/nonexistent/p.json"]);
    let (ok, _, err) = warpscope(&a);
    assert!(!ok && err.contains("cannot read --profile"), "{err}");
}
