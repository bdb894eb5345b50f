//! `warpscope explain`: the chosen access and warp, the per-CC working, and bad input.

mod common;
use common::warpscope;

const HARRIS: &[&str] = &[
    "explain",
    "examples/harris.cu",
    "--kernel",
    "offset<float>",
    "--grid",
    "4",
    "--block",
    "256",
    "--arg",
    "s=1",
    "--cc",
    "1.0,1.3,2.0,9.0",
    // The source interpreter's columns (26:12 is the load); the compiled path is tested in
    // tests/compiled.rs.
    "--frontend",
    "source",
];

fn json(extra: &[&str]) -> serde_json::Value {
    let mut args = HARRIS.to_vec();
    args.extend_from_slice(extra);
    args.extend_from_slice(&["--format", "json"]);
    let (ok, out, err) = warpscope(&args);
    assert!(ok, "{err}");
    serde_json::from_str(&out).unwrap()
}

fn transactions(v: &serde_json::Value) -> Vec<(String, u64)> {
    v["architectures"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            (
                a["cc"].as_str().unwrap().to_string(),
                a["cost"]["transactions"].as_u64().unwrap(),
            )
        })
        .collect()
}

#[test]
fn harris_offset_one_load_per_cc() {
    // The load a[i] of `a[i] = a[i] + 1` (line 26, column 12), offset 1 float.
    let v = json(&["--line", "26:12"]);
    assert_eq!(v["text"], "a[i]");
    assert_eq!(v["op"], "load");
    // 1.0: not coalesced, 16 per half-warp; 1.3: 128 B + (64 B + 32 B); 2.0: two 128-byte
    // L1 lines; 9.0: 5 sectors.
    let want = [("1.0", 32), ("1.3", 3), ("2.0", 2), ("9.0", 5)];
    let got = transactions(&v);
    for (cc, n) in want {
        assert!(got.contains(&(cc.to_string(), n)), "{cc}: {got:?}");
    }
    let b13 = &v["architectures"][1]["breakdown"];
    let sizes: Vec<Vec<u64>> = b13["requests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            r["transactions"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| t["bytes"].as_u64().unwrap())
                .collect()
        })
        .collect();
    assert_eq!(sizes, vec![vec![128], vec![64, 32]]);
    // 4 blocks × 8 warps execute it; every warp straddles alike, the first is the costliest.
    assert_eq!(v["executions"], 32);
    assert_eq!(v["execution"], 0);
    // The advice names the misaligned start and models the fix.
    let adv = &v["architectures"][3]["advice"][0];
    assert_eq!(adv["cause"]["kind"], "misaligned_start");
    assert_eq!(adv["outcomes"][0]["after"]["sectors"], 4);
}

#[test]
fn site_number_and_warp_index_select_the_execution() {
    // Row #1 (0-based) of the analyze table is the load at 26:12 (rows go by line, column).
    let by_site = json(&["--site", "1", "--warp", "9"]);
    let by_line = json(&["--line", "26:12", "--warp", "9"]);
    assert_eq!(by_site["column"], 12);
    assert_eq!(by_site["execution"], 9);
    // Warp 9 in launch order: block 1, warp 1.
    assert_eq!(by_site["block_of_warp"], serde_json::json!([1, 0, 0]));
    assert_eq!(by_site["warp"], 1);
    assert_eq!(by_site["addrs"], by_line["addrs"]);
}

fn fails(extra: &[&str], needles: &[&str]) {
    let mut args = HARRIS.to_vec();
    args.extend_from_slice(extra);
    let (ok, _, err) = warpscope(&args);
    assert!(!ok, "expected failure for {extra:?}");
    for n in needles {
        assert!(err.contains(n), "message lacks '{n}':\n{err}");
    }
}

#[test]
fn a_line_without_an_access_lists_the_accesses() {
    fails(
        &["--line", "3"],
        &["no memory access", "harris.cu:3", "#1 26:12 a[i]"],
    );
}

#[test]
fn a_line_with_two_accesses_needs_a_column() {
    fails(&["--line", "26"], &["has 2 accesses", "--line 26:COLUMN"]);
}

#[test]
fn warp_index_out_of_range_says_how_many_there_are() {
    fails(
        &["--line", "26:12", "--warp", "32"],
        &["--warp 32", "32 warp-level executions", "--warp 0 to 31"],
    );
}

#[test]
fn site_number_out_of_range() {
    fails(&["--site", "7"], &["--site 7", "numbered 0 to 1"]);
    fails(
        &["--site", "2"],
        &["--site 2", "has 2 accesses, numbered 0 to 1"],
    );
}

#[test]
fn unwritable_output_is_an_error() {
    fails(
        &[
            "--line",
            "26:12",
            "--format",
            "svg",
            "-o",
            "/nonexistent-dir/x.svg",
        ],
        &["cannot write /nonexistent-dir/x.svg"],
    );
}

#[test]
fn html_page_has_every_cc_and_the_table() {
    let dir = std::env::temp_dir().join(format!("warpscope-explain-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("offset.html");
    let mut args = HARRIS.to_vec();
    args.extend_from_slice(&[
        "--line",
        "26:12",
        "--format",
        "html",
        "-o",
        out.to_str().unwrap(),
    ]);
    let (ok, _, err) = warpscope(&args);
    assert!(ok, "{err}");
    let html = std::fs::read_to_string(&out).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>") || html.starts_with("<!doctype html>"));
    assert_eq!(html.matches("<svg").count(), 4, "one figure per CC");
    for cc in ["1.0", "1.3", "2.0", "9.0"] {
        assert!(html.contains(cc));
    }
    assert!(html.contains("<table"));
}

#[test]
fn svg_is_standalone() {
    let mut args = HARRIS.to_vec();
    args.extend_from_slice(&["--line", "26:12", "--format", "svg"]);
    let (ok, out, err) = warpscope(&args);
    assert!(ok, "{err}");
    assert!(out.trim_start().starts_with("<svg") || out.trim_start().starts_with("<?xml"));
    assert!(out.contains("xmlns=\"http://www.w3.org/2000/svg\""));
    assert!(!out.contains("<script"));
}

/// What ptxas made of the explained instruction, from the SASS check: the tiled matmul's
/// `As` row read is one LDS.128 merged from 4 PTX loads; spill.cu's spills are STL the PTX
/// does not have. The JSON names the PTX instruction and line.
#[test]
fn explain_says_what_ptxas_made_of_the_instruction() {
    let args = [
        "explain",
        "tests/data/h100/compiled/nvcc_matmul_tiled.ptx",
        "--kernel",
        "matmul_rows",
        "--grid",
        "32,32",
        "--block",
        "16,16",
        "--arg",
        "m=512",
        "--arg",
        "n=512",
        "--arg",
        "k=512",
        "--cc",
        "9.0",
        // Rows by line and column: the stores and loads of lines 26 and 27, then As's reads.
        "--site",
        "4",
    ];
    let (ok, text, err) = warpscope(&args);
    assert!(ok, "{err}");
    if !text.contains("SASS checked") {
        eprintln!("skipped: no ptxas/nvdisasm (scripts/test.sh installs them)");
        return;
    }
    assert!(
        text.contains("ptxas merged 4 PTX loads (from PTX line 93) into this 16-byte one"),
        "{text}"
    );
    assert!(text.contains("load · shared · 16 bytes per lane"), "{text}");
    let (ok, out, err) = warpscope(&[&args[..], &["--format", "json"]].concat());
    assert!(ok, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["ptx"], "ld.shared.f32 ×4");
    assert_eq!(v["ptx_line"], 93);
}
