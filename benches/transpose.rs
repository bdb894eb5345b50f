//! The source path end to end (CUDA source → IR → PTX → the SIMT executor → the model): a
//! 4096×4096 naive transpose (block 32×8, grid 128×128, four elements per thread, 1 M warp
//! accesses), costed for CC 9.0 alone and for every compute capability warpscope knows, and
//! the 512³ shared-tile matmul (16×16 tiles) for CC 9.0. `benches/compiled.rs` runs the same
//! launches from nvcc's PTX.

use criterion::{criterion_group, criterion_main, Criterion};
use warpscope::AnalyzeRequest;

fn request(ccs: &str) -> AnalyzeRequest {
    let src = include_str!("../examples/transpose.cu");
    let mut req = AnalyzeRequest::new(
        "examples/transpose.cu",
        src,
        "transpose_naive",
        [128, 128, 1],
        [32, 8, 1],
    )
    .arg("width", 4096)
    .arg("height", 4096)
    .ccs(ccs)
    .expect("known compute capabilities");
    req.compile.frontend = warpscope::Frontend::Source;
    req
}

fn matmul() -> AnalyzeRequest {
    let src = include_str!("../tests/kernels/compiled/matmul_tiled.cu");
    let mut req = AnalyzeRequest::new(
        "tests/kernels/compiled/matmul_tiled.cu",
        src,
        "matmul_rows",
        [32, 32, 1],
        [16, 16, 1],
    )
    .arg("m", 512)
    .arg("n", 512)
    .arg("k", 512)
    .ccs("9.0")
    .expect("known compute capability");
    req.compile.frontend = warpscope::Frontend::Source;
    req
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("transpose_naive_4096_source");
    g.sample_size(10);
    for ccs in ["9.0", "all"] {
        let req = request(ccs);
        g.bench_function(format!("cc={ccs}"), |b| {
            b.iter(|| warpscope::analyze(&req).expect("analysis runs"))
        });
    }
    g.finish();
    let mut g = c.benchmark_group("matmul_tiled_512_source");
    g.sample_size(10);
    let req = matmul();
    g.bench_function("cc=9.0", |b| {
        b.iter(|| warpscope::analyze(&req).expect("analysis runs"))
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
