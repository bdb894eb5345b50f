//! A PolyBench-ACC-style kernel (tests/kernels/polybench/2mm.cu, written in their layout:
//! `# ifndef DATA_TYPE`, comments after `#define` bodies, the dataset chosen with `-D`, a
//! local header and the host code's system headers) through the source path, with the
//! figures worked out by hand from the coalescing rules.

use serde_json::Value;
mod common;

const FILE: &str = "tests/kernels/polybench/2mm.cu";

/// `analyze --frontend source` of `kernel` on the MINI dataset (32 x 32 matrices) with
/// PolyBench's 32 x 8 blocks: grid (1, 4), so 4 blocks of 8 warps.
fn analyze(kernel: &str, extra: &[&str]) -> (bool, String, String) {
    analyze_on("source", kernel, extra)
}

/// [`analyze`] with `--frontend FRONTEND`.
fn analyze_on(frontend: &str, kernel: &str, extra: &[&str]) -> (bool, String, String) {
    let mut args = vec![
        "analyze",
        FILE,
        "--frontend",
        frontend,
        "-D",
        "MINI_DATASET",
        "--kernel",
        kernel,
        "--grid",
        "1,4",
        "--block",
        "32,8",
        "--arg",
        "ni=32",
        "--arg",
        "nj=32",
        "--arg",
        "nk=32",
        "--arg",
        "nl=32",
        "--arg",
        "alpha=1.5",
        "--arg",
        "beta=1.2",
        "--cc",
        "9.0",
    ];
    args.extend_from_slice(extra);
    common::warpscope(&args)
}

/// (line, column, text, op, requests, sectors) of every site at CC 9.0.
fn figures(kernel: &str) -> Vec<(u64, u64, String, String, u64, u64)> {
    let (ok, out, err) = analyze(kernel, &["--format", "json"]);
    assert!(ok, "{kernel}: {err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    v["architectures"][0]["sites"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["line"].as_u64().unwrap(),
                s["column"].as_u64().unwrap(),
                s["text"].as_str().unwrap().to_string(),
                s["op"].as_str().unwrap().to_string(),
                s["requests"].as_u64().unwrap(),
                s["sectors"].as_u64().unwrap(),
            )
        })
        .collect()
}

fn row(
    line: u64,
    col: u64,
    text: &str,
    op: &str,
    req: u64,
    sectors: u64,
) -> (u64, u64, String, String, u64, u64) {
    (line, col, text.into(), op.into(), req, sectors)
}

#[test]
fn polybench_2mm_runs_on_the_source_path_with_hand_figures() {
    // 32 warps; each warp is one row i and 32 consecutive columns j. A row of 32 floats is
    // 128 aligned bytes: 1 request, 4 sectors. The loop runs NK = 32 times per warp, so a
    // site in it executes 32 x 32 = 1,024 times. A[i * NK + k] is one address for the whole
    // warp: 1 sector per request.
    assert_eq!(
        figures("mm2_kernel1"),
        vec![
            row(34, 3, "tmp[i * NJ + j]", "store", 32, 128),
            row(38, 4, "tmp[i * NJ + j]", "load", 1024, 4096),
            row(38, 4, "tmp[i * NJ + j]", "store", 1024, 4096),
            row(38, 31, "A[i * NK + k]", "load", 1024, 1024),
            row(38, 47, "B[k * NJ + j]", "load", 1024, 4096),
        ]
    );
    // D *= beta before the loop: one load and one store per warp.
    assert_eq!(
        figures("mm2_kernel2"),
        vec![
            row(51, 3, "D[i * NL + j]", "load", 32, 128),
            row(51, 3, "D[i * NL + j]", "store", 32, 128),
            row(55, 4, "D[i * NL + j]", "load", 1024, 4096),
            row(55, 4, "D[i * NL + j]", "store", 1024, 4096),
            row(55, 21, "tmp[i * NJ + k]", "load", 1024, 1024),
            row(55, 39, "C[k * NL + j]", "load", 1024, 4096),
        ]
    );
}

#[test]
fn the_dataset_macro_changes_the_sizes() {
    // SMALL_DATASET: NK = 128 iterations; the guard i < 128, j < 128 keeps all 32 warps.
    let (ok, out, err) = common::warpscope(&[
        "analyze",
        FILE,
        "--frontend",
        "source",
        "-D",
        "SMALL_DATASET",
        "--kernel",
        "mm2_kernel1",
        "--grid",
        "1,4",
        "--block",
        "32,8",
        "--arg",
        "ni=128",
        "--arg",
        "nj=128",
        "--arg",
        "nk=128",
        "--arg",
        "nl=128",
        "--arg",
        "alpha=1",
        "--arg",
        "beta=1",
        "--alloc",
        "tmp=16384",
        "--alloc",
        "A=16384",
        "--alloc",
        "B=16384",
        "--cc",
        "9.0",
        "--format",
        "json",
    ]);
    assert!(ok, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    let b = &v["architectures"][0]["sites"][4];
    assert_eq!(b["text"], "B[k * NJ + j]");
    assert_eq!(
        (b["requests"].as_u64(), b["sectors"].as_u64()),
        (Some(32 * 128), Some(4 * 32 * 128))
    );
}

#[test]
fn an_out_of_bounds_read_names_the_kernels_line() {
    // B holds 16 floats; lane 16 of the first warp reads B[16] at k = 0.
    let (ok, _, err) = analyze("mm2_kernel1", &["--alloc", "B=16"]);
    assert!(!ok);
    assert!(
        err.contains("2mm.cu:38:47: global load of 4 bytes"),
        "{err}"
    );
    assert!(err.contains("outside allocation 'B' (64 bytes)"), "{err}");
}

#[test]
fn a_missing_user_header_is_named_with_the_folders_searched() {
    let dir = std::env::temp_dir().join(format!("warpscope-pb-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("k.cu");
    std::fs::write(
        &file,
        "#include <stdio.h>\n#include \"../../common/polybenchUtilFuncts.h\"\n__global__ void k(float* a) { a[threadIdx.x] = 0; }\n",
    )
    .unwrap();
    let (ok, _, err) = common::warpscope(&[
        "analyze",
        file.to_str().unwrap(),
        "--frontend",
        "source",
        "--kernel",
        "k",
        "--grid",
        "1",
        "--block",
        "32",
        "-I",
        "tests/kernels",
        "--cc",
        "9.0",
    ]);
    assert!(!ok);
    assert!(
        err.contains(
            "k.cu:2:1: cannot find header \"../../common/polybenchUtilFuncts.h\" (searched: "
        ),
        "{err}"
    );
    assert!(
        err.contains(", tests/kernels); add the folder that holds it with -I DIR"),
        "{err}"
    );
}

/// (requests, sectors) summed over the sites of `line` with operation `op`.
fn sum_at(v: &Value, line: u64, op: &str) -> (u64, u64) {
    v["architectures"][0]["sites"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["line"] == line && s["op"] == op)
        .fold((0, 0), |(r, t), s| {
            (
                r + s["requests"].as_u64().unwrap(),
                t + s["sectors"].as_u64().unwrap(),
            )
        })
}

#[test]
fn the_compiled_path_agrees_except_where_the_compiler_keeps_tmp_in_a_register() {
    if warpscope_toolkit::find(None).is_err() {
        eprintln!("skipped: no CUDA compiler (scripts/test.sh installs one from PyPI)");
        return;
    }
    let run = |kernel: &str, frontend: &str| -> Value {
        let (ok, out, err) = analyze_on(frontend, kernel, &["--format", "json"]);
        assert!(ok, "{kernel} {frontend}: {err}");
        serde_json::from_str(&out).unwrap()
    };
    let (src, ptx) = (run("mm2_kernel1", "source"), run("mm2_kernel1", "ptx"));
    // Before the loop: the same store.
    assert_eq!(sum_at(&src, 34, "store"), sum_at(&ptx, 34, "store"));
    assert_eq!(sum_at(&ptx, 34, "store"), (32, 128));
    // In the loop: the same stores, and the same A and B loads; nvcc forwards each stored
    // tmp[i * NJ + j] to the next iteration instead of reloading it (1,024 requests,
    // 4,096 sectors fewer).
    assert_eq!(sum_at(&src, 38, "store"), sum_at(&ptx, 38, "store"));
    let (req, sec) = sum_at(&src, 38, "load");
    assert_eq!((req, sec), (3 * 1024, 4096 + 1024 + 4096));
    assert_eq!(sum_at(&ptx, 38, "load"), (req - 1024, sec - 4096));
    let (src, ptx) = (run("mm2_kernel2", "source"), run("mm2_kernel2", "ptx"));
    for op in ["load", "store"] {
        assert_eq!(sum_at(&src, 51, op), sum_at(&ptx, 51, op), "{op}");
    }
}
