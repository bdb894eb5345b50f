//! A project's layout: kernels in a header (`.cuh`) that a `main.cu` includes and launches
//! (tests/kernels/project). `launches` names the header's parameters, `--launch N` takes the
//! constants of main.cu's launch, and the compiled path compiles the header itself (`-x cu`).

mod common;
use common::{json, warpscope};

const MAIN: &str = "tests/kernels/project/main.cu";
const HEADER: &str = "tests/kernels/project/kernels.cuh";

fn compiler() -> bool {
    let found = warpscope_toolkit::find(None).is_ok();
    if !found {
        eprintln!("skipped: no CUDA compiler (scripts/test.sh installs one from PyPI)");
    }
    found
}

/// (line, op, requests, sectors) of each site on CC 9.0.
fn sites(v: &serde_json::Value) -> Vec<(u64, String, u64, u64)> {
    v["architectures"][0]["sites"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["line"].as_u64().unwrap(),
                s["op"].as_str().unwrap().to_string(),
                s["requests"].as_u64().unwrap(),
                s["sectors"].as_u64().unwrap(),
            )
        })
        .collect()
}

#[test]
fn launches_name_the_parameters_of_kernels_declared_in_an_included_header() {
    let (ok, out, err) = warpscope(&["launches", MAIN]);
    assert!(ok, "{err}");
    for want in [
        "out: a (pointer)",
        "in: b (pointer)",
        "n: N = 4194304",
        "alpha: 2.0f = 2.0",
    ] {
        assert!(out.contains(want), "'{want}' missing:\n{out}");
    }
}

#[test]
fn launch_of_a_header_kernel_gets_the_constants_of_main() {
    if !compiler() {
        return;
    }
    // scale<float>: 16,384 blocks of 256 threads, in[i * 2] (stride 2) and out[i].
    let v = json(&["analyze", MAIN, "--launch", "0", "--cc", "9.0"]);
    assert_eq!(v["grid"][0], 16384);
    assert_eq!(
        sites(&v),
        // By column: the store `out[i]` starts the line, the load `in[i * 2]` follows.
        vec![
            (7, "store".into(), 131_072, 524_288),
            (7, "load".into(), 131_072, 1_048_576)
        ]
    );
    assert!(v["source"].as_str().unwrap().ends_with("main.cu"));
    // The header's parameter names work as --arg on the compiled path.
    let v = json(&[
        "analyze", MAIN, "--kernel", "copy", "--grid", "4", "--block", "256", "--arg", "n=1000",
        "--cc", "9.0",
    ]);
    // 1,000 threads in bounds: 32 requests per access (the last warp partly), 125 sectors.
    assert_eq!(
        sites(&v),
        vec![(12, "store".into(), 32, 125), (12, "load".into(), 32, 125)]
    );
}

#[test]
fn a_header_is_compiled_as_cuda() {
    if !compiler() {
        return;
    }
    let (ok, out, err) = warpscope(&[
        "analyze", HEADER, "--kernel", "copy", "--grid", "4", "--block", "256", "--arg", "n=1024",
        "--cc", "9.0",
    ]);
    assert!(ok, "{err}");
    assert!(!err.contains("source interpreter"), "{err}");
    assert!(out.contains("ld.global.f32"), "{out}");
    assert!(out.contains("kernels.cuh:12:"), "{out}");
}
