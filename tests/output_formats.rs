//! What `analyze`, `explain`, `archs` and `gpus` print: `--format csv` with Nsight Compute's
//! metric names, the `--cc` spellings, named sets and default, tables fitted to a width, and
//! one 0-based numbering of sites, executions and warps.

mod common;
use common::warpscope;
use serde_json::Value;
use std::collections::HashMap;
use std::process::Command;

/// The naive transpose of a 128 × 128 matrix: 4 × 4 blocks of 32 × 8 threads, 4 rows each.
const TRANSPOSE: &[&str] = &[
    "analyze",
    "examples/transpose.cu",
    "--kernel",
    "transpose_naive",
    "--grid",
    "4,4",
    "--block",
    "32,8",
    "--arg",
    "width=128",
    "--arg",
    "height=128",
];

fn with<'a>(base: &[&'a str], extra: &[&'a str]) -> Vec<&'a str> {
    let mut v = base.to_vec();
    v.extend_from_slice(extra);
    v
}

fn ok(args: &[&str]) -> String {
    let (ok, out, err) = warpscope(args);
    assert!(ok, "{args:?}: {err}");
    out
}

/// CSV rows as maps from column name to cell, and the header.
fn csv_rows(text: &str) -> (Vec<String>, Vec<HashMap<String, String>>) {
    let mut r = csv::Reader::from_reader(text.as_bytes());
    let header: Vec<String> = r.headers().unwrap().iter().map(String::from).collect();
    let rows = r
        .records()
        .map(|rec| {
            let rec = rec.unwrap();
            header
                .iter()
                .cloned()
                .zip(rec.iter().map(String::from))
                .collect()
        })
        .collect();
    (header, rows)
}

/// One row per site and CC; warpscope's columns, and ncu's metric columns filled on the
/// rows they count from CC 7.0 on.
#[test]
fn csv_has_a_row_per_site_and_cc_with_ncu_metric_columns() {
    let out = ok(&with(
        TRANSPOSE,
        &["--cc", "2.0,9.0", "--frontend", "source", "--format", "csv"],
    ));
    let (header, rows) = csv_rows(&out);
    assert_eq!(
        header[..13],
        [
            "kernel",
            "site",
            "file",
            "line",
            "column",
            "text",
            "ptx",
            "ptx_line",
            "op",
            "space",
            "width_bytes",
            "read_only",
            "cc"
        ]
    );
    for m in [
        "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
        "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
        "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
        "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
        "l1tex__t_requests_pipe_lsu_mem_global_op_red.sum",
        "smsp__inst_executed_op_global_ld.sum",
    ] {
        assert!(header.iter().any(|h| h == m), "no column {m}");
    }
    // 2 sites × 2 CCs, site by site; then a total row per CC for its one space, global.
    assert_eq!(rows.len(), 6);
    let totals: Vec<(&str, &str, &str)> = rows[4..]
        .iter()
        .map(|r| (r["site"].as_str(), r["space"].as_str(), r["cc"].as_str()))
        .collect();
    assert_eq!(
        totals,
        [("total", "global", "2.0"), ("total", "global", "9.0")]
    );
    let rows = &rows[..4];
    let sites: Vec<(&str, &str, &str)> = rows
        .iter()
        .map(|r| (r["site"].as_str(), r["op"].as_str(), r["cc"].as_str()))
        .collect();
    assert_eq!(
        sites,
        [
            ("0", "store", "2.0"),
            ("0", "store", "9.0"),
            ("1", "load", "2.0"),
            ("1", "load", "9.0")
        ]
    );
    // The store walks a column: 512 requests (16 blocks × 8 warps × 4 rows), one 32-byte
    // sector (9.0) or L2 segment (2.0) per lane: 16,384, 12.5 % efficient.
    let st9 = &rows[1];
    assert_eq!(st9["requests"], "512");
    assert_eq!(st9["sectors"], "16384");
    assert_eq!(st9["width_bytes"], "4");
    assert_eq!(st9["efficiency_percent"], "12.50");
    assert_eq!(
        st9["l1tex__t_requests_pipe_lsu_mem_global_op_st.sum"],
        "512"
    );
    assert_eq!(
        st9["l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"],
        "16384"
    );
    assert_eq!(st9["smsp__inst_executed_op_global_st.sum"], "512");
    assert_eq!(st9["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"], "");
    let st2 = &rows[0];
    assert_eq!(
        (
            st2["transactions"].as_str(),
            st2["transaction_bytes"].as_str()
        ),
        ("16384", "524288")
    );
    // Nsight Compute does not profile 2.0: no metric cell is filled.
    let metric_cells = |r: &HashMap<String, String>| {
        header[26..]
            .iter()
            .filter(|h| !r[h.as_str()].is_empty())
            .count()
    };
    assert_eq!(metric_cells(st2), 0);
    assert_eq!(metric_cells(st9), 3);
    // The load reads rows: 4 sectors per request, 100 %.
    let ld9 = &rows[3];
    assert_eq!(
        ld9["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"],
        "2048"
    );
    assert_eq!(ld9["efficiency_percent"], "100.00");
}

/// The histogram's PTX as measured on the H100 (`tests/data/h100/compiled/`): every ncu
/// metric column of the CSV, summed over the rows, equals Nsight Compute's measurement; the
/// global `atom.global.add` (RED or ATOM by whether its result is used) is left out of the
/// metric columns, its own figures being those ncu counted as `op_red`.
#[test]
fn csv_metric_columns_equal_ncu_on_the_h100_histogram() {
    let out = ok(&[
        "analyze",
        "tests/data/h100/compiled/nvcc_histogram.ptx",
        "--kernel",
        "histogram256",
        "--grid",
        "1024",
        "--block",
        "256",
        "--arg",
        "n=4194304",
        "--cc",
        "9.0",
        "--format",
        "csv",
    ]);
    let (header, rows) = csv_rows(&out);
    let sum = |col: &str| -> u64 { rows.iter().filter_map(|r| r[col].parse::<u64>().ok()).sum() };
    // ncu's figures for this launch (compiled.csv, histogram256).
    for (metric, measured) in [
        ("l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", 131072),
        ("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", 131072),
        ("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum", 8192),
        ("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum", 8192),
        (
            "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_atom.sum",
            131072,
        ),
        ("smsp__inst_executed_op_shared_atom.sum", 131072),
        ("smsp__inst_executed_op_shared_ld.sum", 8192),
        ("smsp__inst_executed_op_global_ld.sum", 131072),
    ] {
        assert_eq!(sum(metric), measured, "{metric}");
    }
    let global_atomic: Vec<&HashMap<String, String>> = rows
        .iter()
        .filter(|r| r["op"] == "atomic" && r["space"] == "global")
        .collect();
    assert_eq!(global_atomic.len(), 1);
    let g = global_atomic[0];
    assert!(g["ptx"].starts_with("atom.global.add"), "{g:?}");
    assert_eq!(
        (g["requests"].as_str(), g["sectors"].as_str()),
        ("8192", "32768")
    );
    assert!(
        header[26..].iter().all(|h| g[h.as_str()].is_empty()),
        "{g:?}"
    );
}

/// `analyze --sweep --format csv`: the parameter and value lead each row.
#[test]
fn sweep_csv_has_parameter_and_value_columns() {
    let out = ok(&[
        "analyze",
        "-e",
        "float a[]; a[(blockIdx.x*blockDim.x + threadIdx.x) * s]",
        "--sweep",
        "s=1..3",
        "--cc",
        "9.0",
        "--format",
        "csv",
    ]);
    let (header, rows) = csv_rows(&out);
    assert_eq!(header[..3], ["parameter", "value", "kernel"]);
    let got: Vec<(&str, &str, &str)> = rows
        .iter()
        .map(|r| {
            (
                r["value"].as_str(),
                r["site"].as_str(),
                r["sectors"].as_str(),
            )
        })
        .collect();
    // Each value: the access, then the total of its space.
    assert_eq!(
        got,
        [
            ("1", "0", "4"),
            ("1", "total", "4"),
            ("2", "0", "8"),
            ("2", "total", "8"),
            ("3", "0", "12"),
            ("3", "total", "12")
        ]
    );
    assert!(rows.iter().all(|r| r["parameter"] == "s"));
}

fn ccs(v: &Value) -> Vec<String> {
    v["architectures"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["cc"].as_str().unwrap().to_string())
        .collect()
}

fn pattern_json(extra: &[&str]) -> Value {
    let mut a = vec!["analyze", "-e", "float a[]; a[threadIdx.x]"];
    a.extend_from_slice(extra);
    a.extend(["--format", "json"]);
    serde_json::from_str(&ok(&a)).unwrap()
}

/// `--cc` spellings, architecture names (their first CC), lists, `guide` and the default.
#[test]
fn cc_spellings_names_sets_and_default() {
    for cc in ["9.0", "90", "sm_90", "compute_90", "hopper", "Hopper"] {
        assert_eq!(ccs(&pattern_json(&["--cc", cc])), ["9.0"], "--cc {cc}");
    }
    assert_eq!(
        ccs(&pattern_json(&["--cc", "ampere,volta,kepler,ada"])),
        ["8.0", "7.0", "3.0", "8.9"]
    );
    assert_eq!(
        ccs(&pattern_json(&["--cc", "guide"])),
        ["1.0", "1.3", "2.0", "3.5", "5.2", "7.0", "8.0", "9.0", "12.0"]
    );
    assert_eq!(ccs(&pattern_json(&["--cc", "all"])).len(), 29);
    // No --cc: 9.0, or the GPU at hand's CC (a build with the cuda feature, with a note).
    let v = pattern_json(&[]);
    let notes: Vec<&str> = v["notes"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|n| n.as_str())
        .collect();
    match notes.iter().find(|n| n.contains("the GPU at hand's")) {
        Some(n) => assert!(n.starts_with(&format!("CC {} ", ccs(&v)[0])), "{n}"),
        None => assert_eq!(ccs(&v), ["9.0"]),
    }
    // Four bytes a lane, 32 lanes: one request, 4 sectors at 9.0.
    let site = &pattern_json(&["--cc", "sm_90"])["architectures"][0]["sites"][0];
    assert_eq!(
        (site["requests"].as_u64(), site["sectors"].as_u64()),
        (Some(1), Some(4))
    );
    let (ok, _, err) = warpscope(&[
        "analyze",
        "-e",
        "float a[]; a[threadIdx.x]",
        "--cc",
        "hoper",
    ]);
    assert!(!ok);
    assert!(
        err.contains("'hoper' is not a compute capability") && err.contains("hopper 9.0"),
        "{err}"
    );
}

/// A named set leaves out, with a note, the CCs that cannot run the launch; an explicit CC
/// that cannot is an error.
#[test]
fn named_sets_leave_out_ccs_that_cannot_run_the_launch() {
    let v = pattern_json(&["--block", "1024", "--cc", "guide"]);
    assert_eq!(ccs(&v), ["2.0", "3.5", "5.2", "7.0", "8.0", "9.0", "12.0"]);
    let notes = v["notes"].to_string();
    assert!(
        notes.contains(
            "CC 1.0 left out: block 1024×1×1 has 1024 threads; CC 1.0 allows at most 512"
        ),
        "{notes}"
    );
    assert!(notes.contains("CC 1.3 left out"), "{notes}");
    let (ok, _, err) = warpscope(&[
        "analyze",
        "-e",
        "float a[]; a[threadIdx.x]",
        "--block",
        "1024",
        "--cc",
        "1.0,9.0",
    ]);
    assert!(!ok);
    assert!(
        err.contains("CC 1.0 allows at most 512 threads per block"),
        "{err}"
    );
}

/// Runs warpscope with COLUMNS set (or removed): stdout.
fn with_columns(args: &[&str], columns: Option<&str>) -> String {
    let mut c = Command::new(env!("CARGO_BIN_EXE_warpscope"));
    c.args(args).current_dir(env!("CARGO_MANIFEST_DIR"));
    match columns {
        Some(n) => c.env("COLUMNS", n),
        None => c.env_remove("COLUMNS"),
    };
    let out = c.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn widest_table_line(text: &str) -> usize {
    text.lines()
        .filter(|l| l.starts_with(['│', '┌', '╞', '└']))
        .map(|l| l.chars().count())
        .max()
        .unwrap_or(0)
}

/// A table wider than COLUMNS is stacked per CC, each fitted to the width; without COLUMNS
/// (a pipe) the full table comes out, every CC side by side.
#[test]
fn tables_fit_columns_stacked_per_cc() {
    let args = with(TRANSPOSE, &["--cc", "guide", "--frontend", "source"]);
    let full = with_columns(&args, None);
    assert!(widest_table_line(&full) > 250, "{full}");
    let header = full.lines().find(|l| l.contains("1.0 req")).unwrap();
    assert!(header.contains("12.0 eff"), "{header}");
    let fitted = with_columns(&args, Some("100"));
    assert!(widest_table_line(&fitted) <= 100, "{fitted}");
    for title in ["CC 1.0 (Tesla)", "CC 3.5 (Kepler)", "CC 12.0 (Blackwell)"] {
        assert!(fitted.lines().any(|l| l == title), "no {title}:\n{fitted}");
    }
    // Each CC's block keeps its figures: the 1.0 store, 16,384 transactions (one per lane).
    let cc10: String = fitted
        .lines()
        .skip_while(|l| *l != "CC 1.0 (Tesla)")
        .take_while(|l| *l != "CC 1.3 (Tesla)")
        .collect::<Vec<_>>()
        .join("\n");
    assert!(cc10.contains("16,384"), "{cc10}");
    // Wide enough: the full table.
    assert_eq!(with_columns(&args, Some("500")), full);
    // The sweep table too.
    let sweep = [
        "analyze",
        "-e",
        "float a[]; a[threadIdx.x + s]",
        "--sweep",
        "s=0..2",
        "--cc",
        "guide",
    ];
    let fitted = with_columns(&sweep, Some("80"));
    assert!(widest_table_line(&fitted) <= 80, "{fitted}");
    assert!(fitted.lines().any(|l| l == "CC 9.0 (Hopper)"), "{fitted}");
}

/// One numbering from 0: the table's `#`, advice rows, `explain --site`, `--warp` and the
/// execution explain shows.
#[test]
fn sites_warps_and_executions_are_numbered_from_zero() {
    let table = ok(&with(TRANSPOSE, &["--cc", "9.0", "--frontend", "source"]));
    let first = table
        .lines()
        .find(|l| l.contains("examples/transpose.cu:42:9"))
        .unwrap();
    assert!(first.starts_with("│ 0 ┆"), "{first}");
    assert!(
        table.contains("advice #0 examples/transpose.cu:42:9"),
        "{table}"
    );
    let explain = |extra: &[&str]| {
        let mut a = vec!["explain"];
        a.extend_from_slice(&TRANSPOSE[1..]);
        a.extend_from_slice(&["--cc", "9.0", "--frontend", "source"]);
        a.extend_from_slice(extra);
        ok(&a)
    };
    // Site 0 is the store at 42:9; warp 3 is its fourth execution in launch order.
    let text = explain(&["--site", "0", "--warp", "3"]);
    assert!(text.contains("execution 3 of 512 (--warp 3)"), "{text}");
    let v: Value = serde_json::from_str(&explain(&[
        "--site", "0", "--warp", "0", "--format", "json",
    ]))
    .unwrap();
    assert_eq!(
        (v["column"].as_u64(), v["execution"].as_u64()),
        (Some(9), Some(0))
    );
    assert_eq!(v["block_of_warp"], serde_json::json!([0, 0, 0]));
    let text = explain(&["--site", "1"]);
    assert!(text.contains("42:39"), "{text}");
    assert!(
        text.contains("execution 0 of 512 (the costliest)"),
        "{text}"
    );
}

/// `archs`: people's names, chips and products, the rules in words and each row's source.
#[test]
fn archs_show_names_products_rules_and_sources() {
    let out = ok(&["archs"]);
    let lines: Vec<&str> = out.lines().collect();
    let i = lines.iter().position(|l| l.starts_with("9.0 ")).unwrap();
    for part in ["Hopper", "GH100: H100, H200, GH200", "32-byte sectors"] {
        assert!(lines[i].contains(part), "{}", lines[i]);
    }
    assert!(
        lines[i + 1].trim_start().starts_with("source: ")
            && lines[i + 1].contains("measured on H100")
    );
    let j = lines.iter().position(|l| l.starts_with("1.0 ")).unwrap();
    assert!(lines[j].contains("Tesla") && lines[j].contains("half-warps, strict coalescing"));
    assert!(lines[j + 1].contains("PG5 F.3"), "{}", lines[j + 1]);
    assert_eq!(out.matches("source: ").count(), 29);
    assert!(
        out.contains("'guide' (1.0,1.3,2.0,3.5,5.2,7.0,8.0,9.0,12.0"),
        "{out}"
    );
    assert!(
        !out.contains("Cc1Strict") && !out.contains("Sector\n"),
        "{out}"
    );
}

/// `gpus`: one line per GPU with its CC and name, then the datasheet its figures come from.
#[test]
fn gpus_show_each_rows_source() {
    let out = ok(&["gpus"]);
    let lines: Vec<&str> = out.lines().collect();
    let i = lines
        .iter()
        .position(|l| l.starts_with("H100 SXM5 80GB"))
        .unwrap();
    for part in [
        "9.0 Hopper",
        "132",
        "51200",
        "3350.0",
        "5120-bit HBM3",
        "h100-sxm",
    ] {
        assert!(lines[i].contains(part), "{part}: {}", lines[i]);
    }
    assert!(
        lines[i + 1].contains("source: NVIDIA H100 Tensor Core GPU datasheet"),
        "{}",
        lines[i + 1]
    );
    assert_eq!(out.matches("    source: ").count(), 16);
}
