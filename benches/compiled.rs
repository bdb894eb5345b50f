//! The compiled path end to end, compile time excluded (the PTX is given): the 4096² naive
//! transpose of the CUDA samples (32×8 blocks, grid 128×128, four elements per thread) for
//! CC 9.0 and every CC, the 512³ shared-tile matmul (16×16 tiles) for CC 9.0, and the 16384²
//! transpose for CC 9.0, all from the PTX nvcc emitted for sm_90.

use criterion::{criterion_group, criterion_main, Criterion};
use warpscope::AnalyzeRequest;

fn transpose(ccs: &str) -> AnalyzeRequest {
    transpose_of(4096, ccs)
}

/// The naive transpose of an `n`×`n` matrix (`n` a multiple of 32).
fn transpose_of(n: u32, ccs: &str) -> AnalyzeRequest {
    let ptx = include_str!("../crates/ptx/tests/data/transpose.ptx");
    AnalyzeRequest::new(
        "transpose.ptx",
        ptx,
        "transpose_naive",
        [n / 32, n / 32, 1],
        [32, 8, 1],
    )
    .arg("param_2", n)
    .arg("param_3", n)
    .ccs(ccs)
    .expect("known compute capabilities")
}

fn matmul() -> AnalyzeRequest {
    let ptx = include_str!("../tests/data/h100/compiled/nvcc_matmul_tiled.ptx");
    AnalyzeRequest::new(
        "matmul_tiled.ptx",
        ptx,
        "matmul_rows",
        [32, 32, 1],
        [16, 16, 1],
    )
    .arg("param_0", 512)
    .arg("param_1", 512)
    .arg("param_2", 512)
    .ccs("9.0")
    .expect("known compute capability")
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("compiled");
    g.sample_size(10);
    for ccs in ["9.0", "all"] {
        let req = transpose(ccs);
        g.bench_function(format!("transpose_naive_4096/cc={ccs}"), |b| {
            b.iter(|| warpscope::analyze(&req).expect("analysis runs"))
        });
    }
    let req = matmul();
    g.bench_function("matmul_tiled_512/cc=9.0", |b| {
        b.iter(|| warpscope::analyze(&req).expect("analysis runs"))
    });
    // The big launch of issue 20's table: 262,144 blocks on every core.
    let req = transpose_of(16384, "9.0");
    g.bench_function("transpose_naive_16384/cc=9.0", |b| {
        b.iter(|| warpscope::analyze(&req).expect("analysis runs"))
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
