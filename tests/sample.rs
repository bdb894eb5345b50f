//! `--sample-blocks`: a sample of a grid's blocks, totals extrapolated, the fraction stated.

mod common;
use common::warpscope;

/// The 4096² naive transpose from nvcc's PTX (32×8 blocks, 128×128 grid, four elements per
/// thread): every block accesses memory alike, so the extrapolated totals of a sample equal
/// the full run's.
fn transpose(extra: &[&str]) -> serde_json::Value {
    let mut args = vec![
        "analyze",
        "crates/ptx/tests/data/transpose.ptx",
        "--kernel",
        "transpose_naive",
        "--grid",
        "128,128",
        "--block",
        "32,8",
        "--arg",
        "param_2=4096",
        "--arg",
        "param_3=4096",
        "--cc",
        "9.0",
        "--format",
        "json",
    ];
    args.extend_from_slice(extra);
    let (ok, out, err) = warpscope(&args);
    assert!(ok, "{err}");
    serde_json::from_str(&out).expect("JSON")
}

/// (requests, transactions) at CC 9.0, loads and stores together.
fn totals(v: &serde_json::Value) -> (u64, u64) {
    let t = &v["architectures"][0]["totals"];
    let sum = |k: &str| {
        ["global_load", "global_store"]
            .iter()
            .map(|op| t[op][k].as_u64().expect(k))
            .sum()
    };
    (sum("requests"), sum("transactions"))
}

#[test]
fn a_sample_of_a_regular_grid_extrapolates_to_the_full_totals() {
    let full = transpose(&[]);
    // 4 × 4096 loads and stores per block row … 32,768 warps × 32 memory instructions.
    assert_eq!(totals(&full), (1_048_576, 18_874_368));
    let sampled = transpose(&["--sample-blocks", "64"]);
    assert_eq!(totals(&sampled), totals(&full));
    let notes = sampled["notes"].to_string();
    // 64 spread evenly plus the corner blocks (x last of row 0, y last of column 0).
    assert!(
        notes.contains("sampled 66 of 16,384 blocks (0.40 %)"),
        "{notes}"
    );
    // A fraction of the grid.
    let frac = transpose(&["--sample-blocks", "0.01"]);
    assert_eq!(totals(&frac), totals(&full));
    assert!(frac["notes"].to_string().contains("of 16,384 blocks"));
    assert!(!full["notes"].to_string().contains("sampled"));
}

#[test]
fn bad_sample_sizes_are_refused() {
    for bad in [
        "--sample-blocks=0",
        "--sample-blocks=-3",
        "--sample-blocks=1.5",
        "--sample-blocks=lots",
    ] {
        let (ok, _, err) = warpscope(&[
            "analyze",
            "crates/ptx/tests/data/transpose.ptx",
            "--kernel",
            "transpose_naive",
            "--grid",
            "4",
            "--block",
            "32,8",
            "--arg",
            "param_2=64",
            "--arg",
            "param_3=64",
            bad,
        ]);
        assert!(!ok);
        assert!(err.contains("--sample-blocks"), "{bad}: {err}");
    }
}
