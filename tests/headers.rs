//! A project's layout: kernels in a header (`.cuh`) that a `main.cu` includes and launches
//! (tests/kernels/project). `launches` names the header's parameters, `--launch N` takes the
//! constants of main.cu's launch, and the compiled path compiles the header itself (`-x cu`).

mod common;
use common::{compiler, json, warpscope};

const MAIN: &str = "tests/kernels/project/main.cu";
const HEADER: &str = "tests/kernels/project/kernels.cuh";

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

/// `--kernel all`: every launch of main.cu's host code, each with its own constants.
#[test]
fn kernel_all_analyzes_every_launch_of_the_host_code() {
    if !compiler() {
        return;
    }
    let (ok, out, err) = warpscope(&[
        "analyze", MAIN, "--kernel", "all", "--cc", "9.0", "--format", "json",
    ]);
    assert!(ok, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let kernels = v["kernels"].as_array().unwrap();
    let names: Vec<&str> = kernels
        .iter()
        .map(|k| k["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "scale<float> (launch 0, tests/kernels/project/main.cu:10:5)",
            "copy (launch 1, tests/kernels/project/main.cu:11:5)"
        ]
    );
    // copy: 4,194,304 floats in and out, 131,072 requests and 524,288 sectors each way (the
    // store's column comes first on the line).
    assert_eq!(
        sites(&kernels[1]["analysis"]),
        vec![
            (12, "store".into(), 131_072, 524_288),
            (12, "load".into(), 131_072, 524_288)
        ]
    );
    // A glob picks by name; templates match by their name alone.
    let (ok, out, err) = warpscope(&["analyze", MAIN, "--kernel", "sc*", "--cc", "9.0", "-q"]);
    assert!(ok, "{err}");
    assert!(out.contains("== kernel scale<float> (launch 0"), "{out}");
    assert!(!out.contains("== kernel copy"), "{out}");
}

/// With --grid and --block, a glob analyzes every kernel of the file it matches, launch or
/// not; no match lists the kernels there are.
#[test]
fn kernel_glob_with_a_full_launch_takes_every_matching_kernel() {
    let args = [
        "analyze",
        "examples/transpose.cu",
        "--kernel",
        "transpose_*",
        "--grid",
        "32,32",
        "--block",
        "32,8",
        "--arg",
        "width=1024",
        "--arg",
        "height=1024",
        "--cc",
        "9.0",
        "-q",
    ];
    let (ok, out, err) = warpscope(&args);
    assert!(ok, "{err}");
    let headings: Vec<&str> = out.lines().filter(|l| l.starts_with("== kernel")).collect();
    assert_eq!(
        headings,
        [
            "== kernel transpose_coalesced ==",
            "== kernel transpose_naive ==",
            "== kernel transpose_no_bank_conflicts =="
        ]
    );
    let mut none = args.to_vec();
    none[3] = "nothing*";
    let (ok, _, err) = warpscope(&none);
    assert!(!ok);
    assert!(
        err.contains("no kernel of examples/transpose.cu matches (there are: copy_tiles, transpose_coalesced, transpose_naive, transpose_no_bank_conflicts)"),
        "{err}"
    );
}
