//! `warpscope launches` and `analyze --launch N` on examples/saxpy_host.cu, a complete program
//! whose host code launches three kernels: N is `#define N (1 << 20)` (under `#ifndef`),
//! `constexpr int BLOCK = 256`, and
//!   0: saxpy<<<blocks, BLOCK>>>(N, 2.0f, x, y)        blocks = (N + BLOCK - 1) / BLOCK = 4096
//!   1: strided_copy<<<grid, block, 0>>>(x, y, N, 32)  dim3 grid(N / BLOCK / 32) = 128, block(BLOCK)
//!   2: saxpy<<<(n + 255) / 256, 256>>>(n, 0.5f, x, y) n = atoi(argv[1]): not constant
//! Figures are CC 9.0's (one request per warp access, 32-byte sectors).

mod common;
use common::{frontends, json, warpscope};

const HOST: &str = "examples/saxpy_host.cu";

fn fails(args: &[&str]) -> String {
    let (ok, _, err) = warpscope(args);
    assert!(!ok, "{args:?} should fail");
    err
}

#[test]
fn launches_lists_expressions_and_values() {
    let v = json(&["launches", HOST]);
    assert_eq!(v["file"], HOST);
    let l = v["launches"].as_array().unwrap();
    assert_eq!(l.len(), 3);
    let at = |i: usize| {
        (
            l[i]["line"].as_u64().unwrap(),
            l[i]["column"].as_u64().unwrap(),
        )
    };
    assert_eq!((at(0), at(1), at(2)), ((44, 5), (48, 5), (51, 5)));
    assert_eq!(l[0]["index"], 0);
    assert_eq!(l[0]["kernel"], "saxpy");
    assert_eq!(
        l[0]["grid"],
        serde_json::json!({"text": "blocks", "value": 4096})
    );
    assert_eq!(
        l[0]["block"],
        serde_json::json!({"text": "BLOCK", "value": 256})
    );
    assert_eq!(l[0]["shared_bytes"], serde_json::Value::Null);
    let args = l[0]["args"].as_array().unwrap();
    assert_eq!(
        args[0],
        serde_json::json!({"text": "N", "value": 1048576, "param": "n", "pointer": false})
    );
    assert_eq!(
        args[1],
        serde_json::json!({"text": "2.0f", "value": 2.0, "param": "a", "pointer": false})
    );
    assert_eq!(
        args[2],
        serde_json::json!({"text": "x", "value": null, "param": "x", "pointer": true})
    );
    assert_eq!(l[1]["kernel"], "strided_copy");
    assert_eq!(
        l[1]["grid"],
        serde_json::json!({"text": "grid", "value": [128, 1, 1]})
    );
    assert_eq!(
        l[1]["block"],
        serde_json::json!({"text": "block", "value": [256, 1, 1]})
    );
    assert_eq!(
        l[1]["shared_bytes"],
        serde_json::json!({"text": "0", "value": 0})
    );
    assert_eq!(l[1]["args"][3]["param"], "stride");
    assert_eq!(l[1]["args"][3]["value"], 32);
    assert_eq!(l[2]["grid"]["text"], "(n + 255) / 256");
    assert_eq!(l[2]["grid"]["value"], serde_json::Value::Null);
    assert_eq!(
        l[2]["grid"]["why"],
        "`n` is set at run time: `argc` is a parameter of the enclosing function"
    );
    assert_eq!(l[2]["block"]["value"], 256);
    // -D N=65536 (the file's #ifndef keeps it): 256 blocks.
    let v = json(&["launches", HOST, "-D", "N=65536"]);
    assert_eq!(v["launches"][0]["grid"]["value"], 256);
    // The table shows each expression with its value.
    let (ok, out, err) = warpscope(&["launches", HOST]);
    assert!(ok, "{err}");
    for s in [
        "examples/saxpy_host.cu:44:5",
        "blocks = 4096",
        "BLOCK = 256",
        "n: N = 1048576",
        "grid = (128,1,1)",
        "stride: 32",
        "(n + 255) / 256 (not constant)",
        "x: x (pointer)",
    ] {
        assert!(out.contains(s), "missing {s:?} in\n{out}");
    }
}

/// `--launch N` gives exactly the analysis of the flags it stands for, on both front ends.
#[test]
fn analyze_launch_equals_the_explicit_flags() {
    let cases: [(&str, &[&str]); 2] = [
        (
            "0",
            &[
                "--kernel",
                "saxpy",
                "--grid",
                "4096",
                "--block",
                "256",
                "--arg",
                "n=1048576",
                "--arg",
                "a=2",
            ],
        ),
        (
            "1",
            &[
                "--kernel",
                "strided_copy",
                "--grid",
                "128",
                "--block",
                "256",
                "--arg",
                "n=1048576",
                "--arg",
                "stride=32",
            ],
        ),
    ];
    for fe in frontends() {
        for (n, flags) in cases {
            let from_host = json(&[
                "analyze",
                HOST,
                "--launch",
                n,
                "--cc",
                "9.0",
                "--frontend",
                fe,
            ]);
            let mut a = vec!["analyze", HOST, "--cc", "9.0", "--frontend", fe];
            a.extend(flags);
            assert_eq!(from_host, json(&a), "{fe} --launch {n}");
            let t = &from_host["architectures"][0]["totals"];
            let got = (
                t["global_load"]["requests"].as_u64().unwrap(),
                t["global_load"]["sectors"].as_u64().unwrap(),
                t["global_store"]["sectors"].as_u64().unwrap(),
            );
            // saxpy: 32768 warps, two loads and a store of 4 sectors each; strided_copy: 1024
            // warps whose loads are 128 bytes apart (32 sectors) and stores contiguous (4).
            let want = if n == "0" {
                (65536, 262144, 131072)
            } else {
                (1024, 32768, 4096)
            };
            assert_eq!(got, want, "{fe} --launch {n}");
        }
    }
}

/// Flags given override the launch's; what is not constant must be given, and the message
/// says which flag.
#[test]
fn flags_override_and_missing_parts_are_named() {
    let v = json(&[
        "analyze",
        HOST,
        "--launch",
        "1",
        "--cc",
        "9.0",
        "--frontend",
        "source",
        "--arg",
        "stride=1",
    ]);
    let t = &v["architectures"][0]["totals"]["global_load"];
    assert_eq!(
        (t["requests"].as_u64(), t["sectors"].as_u64()),
        (Some(1024), Some(4096))
    );
    assert_eq!(v["grid"], serde_json::json!([128, 1, 1]));
    let v = json(&[
        "analyze",
        HOST,
        "--launch",
        "0",
        "--cc",
        "9.0",
        "--frontend",
        "source",
        "-D",
        "N=65536",
        "--block",
        "128",
    ]);
    assert_eq!(
        (v["grid"].clone(), v["block"].clone()),
        (
            serde_json::json!([256, 1, 1]),
            serde_json::json!([128, 1, 1])
        )
    );
    let e = fails(&["analyze", HOST, "--launch", "2", "--cc", "9.0"]);
    assert!(
        e.contains("launch 2 (examples/saxpy_host.cu:51:5): the grid `(n + 255) / 256` is not a compile-time constant (`n` is set at run time: `argc` is a parameter of the enclosing function); give --grid; the argument `n` of parameter 'n' is not a compile-time constant"),
        "{e}"
    );
    assert!(e.contains("give --arg n=VALUE"), "{e}");
    let e = fails(&[
        "analyze", HOST, "--launch", "2", "--cc", "9.0", "--grid", "4096",
    ]);
    assert!(
        !e.contains("--grid") && e.contains("give --arg n=VALUE"),
        "{e}"
    );
    let v = json(&[
        "analyze",
        HOST,
        "--launch",
        "2",
        "--cc",
        "9.0",
        "--frontend",
        "source",
        "--grid",
        "4096",
        "--arg",
        "n=1048576",
    ]);
    let t = &v["architectures"][0]["totals"]["global_load"];
    assert_eq!(
        (t["requests"].as_u64(), t["sectors"].as_u64()),
        (Some(65536), Some(262144))
    );
    let e = fails(&["analyze", HOST, "--launch", "3"]);
    assert!(
        e.contains("--launch 3: examples/saxpy_host.cu has 3 launches (<<<…>>>), numbered 0 to 2; `warpscope launches examples/saxpy_host.cu` lists them"),
        "{e}"
    );
    let e = fails(&["analyze", "examples/transpose.cu", "--launch", "0"]);
    assert!(e.contains("has no <<<…>>> launch in its host code"), "{e}");
}

#[test]
fn explain_takes_the_launch_too() {
    let v = json(&[
        "explain",
        HOST,
        "--launch",
        "1",
        "--cc",
        "9.0",
        "--frontend",
        "source",
        "--line",
        "34:16",
    ]);
    assert_eq!(v["kernel"], "strided_copy");
    let c = &v["architectures"][0]["cost"];
    assert_eq!(
        (c["requests"].as_u64(), c["sectors"].as_u64()),
        (Some(1), Some(32))
    );
}

/// `--sweep` over a parameter the launch fixes: the sweep's values win. strided_copy's loads
/// are 1024 requests of 4 sectors at stride 1 and 8 at stride 2.
#[test]
fn sweep_over_a_launch_parameter() {
    let v = json(&[
        "analyze",
        HOST,
        "--launch",
        "1",
        "--cc",
        "9.0",
        "--frontend",
        "source",
        "--sweep",
        "stride=1..2",
    ]);
    let got: Vec<(u64, u64)> = v["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            let t = &p["analysis"]["architectures"][0]["totals"]["global_load"];
            (
                t["requests"].as_u64().unwrap(),
                t["sectors"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(got, vec![(1024, 4096), (1024, 8192)]);
}
