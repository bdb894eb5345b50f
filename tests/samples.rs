//! cuda-samples and Rodinia kernels as published (tests/kernels/samples/), through the
//! source path, with figures counted by hand at CC 9.0.

mod common;
use common::warpscope;

fn totals(args: &[&str]) -> serde_json::Value {
    totals_via(args, "source").expect("the source path runs")
}

/// The CC 9.0 totals through `frontend`; `None` when it is `ptx` and no CUDA compiler is
/// found (the test says so).
fn totals_via(args: &[&str], frontend: &str) -> Option<serde_json::Value> {
    let mut a = args.to_vec();
    a.extend(["--frontend", frontend, "--cc", "9.0", "--format", "json"]);
    let (ok, out, err) = warpscope(&a);
    if !ok && frontend == "ptx" && err.contains("needs a CUDA compiler") {
        eprintln!("skipped: no CUDA compiler for the compiled path ({err})");
        return None;
    }
    assert!(ok, "{args:?} failed: {err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    Some(v["architectures"][0]["totals"].clone())
}

/// cuda-samples' reduce3<float, 256> (SharedMemory<T>, cg::sync), 64 blocks of 256 over
/// 32,768 floats: two coalesced loads per warp (2 × 512 requests, 4 sectors each); one
/// shared store per warp, then per block 4 + 2 + 1 + 5 warps in the halving loop
/// (s = 128, 64, 32, 16 … 1) each load and store: 12 × 64 = 768 loads, 512 + 768 stores,
/// one wavefront each; one global store per block (1 sector).
#[test]
fn cuda_samples_reduce3_with_shared_memory_template() {
    let args = [
        "analyze",
        "tests/kernels/samples/reduction.cu",
        "--kernel",
        "reduce3<float, 256>",
        "--grid",
        "64",
        "--block",
        "256",
        "--dynamic-smem",
        "1024",
        "--arg",
        "n=32768",
    ];
    let t = totals(&args);
    // nvcc keeps these accesses: the compiled path, found by the name as written
    // (`reduce3<float, (unsigned int)256>` in the PTX), gives the same totals.
    if let Some(c) = totals_via(&args, "ptx") {
        assert_eq!(c, t);
    }
    assert_eq!(t["global_load"]["requests"], 1024);
    assert_eq!(t["global_load"]["sectors"], 4096);
    assert_eq!(t["shared_load"]["requests"], 768);
    assert_eq!(t["shared_load"]["wavefronts"], 768);
    assert_eq!(t["shared_store"]["requests"], 1280);
    assert_eq!(t["global_store"]["requests"], 64);
    assert_eq!(t["global_store"]["sectors"], 64);
}

/// Rodinia's pathfinder with `IN_RANGE(x, min, max) ((x)>=(min) && (x)<=(max))` (read as
/// comparisons, not casts), 4 blocks of 256, cols = 1000, one iteration, border 1: each
/// block covers columns 254·b − 1 … 254·b + 254; every warp has a column in range, so 32
/// warp loads of gpuSrc, and the 32 warps' loads of gpuWall and stores of gpuResults (the
/// lanes with 1 ≤ tx ≤ 254 in range). gpuSrc and gpuWall (row 0) are read at the same
/// columns, 156 sectors each: the compiled path's figure for the gpuSrc load (32
/// requests, 156 sectors), whose warps start 31 elements into a 128-byte line.
#[test]
fn rodinia_pathfinder_in_range_macro() {
    let args = [
        "analyze",
        "tests/kernels/samples/pathfinder.cu",
        "--kernel",
        "dynproc_kernel",
        "--grid",
        "4",
        "--block",
        "256",
        "--arg",
        "iteration=1",
        "--arg",
        "cols=1000",
        "--arg",
        "rows=2",
        "--arg",
        "startStep=0",
        "--arg",
        "border=1",
    ];
    let t = totals(&args);
    // gpuSrc then gpuWall: 32 warps each.
    assert_eq!(t["global_load"]["requests"], 64);
    assert_eq!(t["global_store"]["requests"], 32);
    assert_eq!(t["global_load"]["sectors"], 312);
    // Per warp: prev[W], prev[tx], prev[E] in the loop and result[tx] at the end; stores
    // prev[tx] and result[tx].
    assert_eq!(t["shared_load"]["requests"], 128);
    assert_eq!(t["shared_store"]["requests"], 64);
    // nvcc leaves these accesses as written: the compiled path gives the same totals (it
    // ran no loop body while `not.pred` gave 0xFE, a true predicate, for 1).
    if let Some(c) = totals_via(&args, "ptx") {
        assert_eq!(c, t);
    }
}
