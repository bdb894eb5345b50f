//! The hot path end to end: interpret a 4096×4096 naive transpose (block 32×8, 16.8 M
//! threads, 1 M warp accesses) and cost every access, for CC 9.0 alone and for every
//! compute capability warpscope knows.

use criterion::{criterion_group, criterion_main, Criterion};
use warpscope::AnalyzeRequest;

fn request(ccs: &str) -> AnalyzeRequest {
    let src = include_str!("../examples/transpose.cu");
    AnalyzeRequest::new(
        "examples/transpose.cu",
        src,
        "transpose_naive",
        [128, 512, 1],
        [32, 8, 1],
    )
    .arg("width", 4096)
    .arg("height", 4096)
    .ccs(ccs)
    .expect("known compute capabilities")
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("transpose_naive_4096");
    g.sample_size(10);
    for ccs in ["9.0", "all"] {
        let req = request(ccs);
        g.bench_function(format!("cc={ccs}"), |b| {
            b.iter(|| warpscope::analyze(&req).expect("analysis runs"))
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
