//! Triton's 4096³ fp16 matmul for Hopper (TMA loads and stores, wgmma, 128×128×64 tiles,
//! 4 warps, 3 stages), from the PTX Triton 3.6 emitted for sm_90a
//! (`tests/data/h100/triton2/matmul_tma_kernel.ptx`): every block of the 32×32 grid, and
//! `--sample-blocks auto` (a pilot, then about 24·10⁶ work units of blocks, its error stated).
//! The rows of issue 20's speed table that need wgmma and TMA (`scripts/bench.sh` prints the
//! same launch's CPU seconds).

use criterion::{criterion_group, criterion_main, Criterion};
use warpscope::AnalyzeRequest;

fn matmul_tma(auto: bool) -> AnalyzeRequest {
    let ptx = include_str!("../tests/data/h100/triton2/matmul_tma_kernel.ptx");
    let mut req = AnalyzeRequest::new(
        "matmul_tma_kernel.ptx",
        ptx,
        "matmul_tma_kernel",
        [32, 32, 1],
        [128, 1, 1],
    )
    .ccs("9.0")
    .expect("known compute capability");
    // A (M×K), B (K×N) and C (M×N), row-major fp16, as Triton's TensorDescriptors give them.
    for (k, box_) in [(0, "64x128"), (5, "64x64"), (10, "64x128")] {
        let map =
            warpscope_simt::TensorMap::parse(&format!("u16:4096x4096:8192:{box_}:swizzle=128"))
                .expect("a valid tensor map");
        req.tensor_maps.push((format!("param_{k}"), map));
    }
    // Each descriptor's shape (rows, columns) and strides (row, element), then K.
    for (k, v) in [1, 2, 3, 4, 6, 7, 8, 9, 11, 12, 13, 14, 15]
        .into_iter()
        .zip([
            4096, 4096, 4096, 1, 4096, 4096, 4096, 1, 4096, 4096, 4096, 1, 4096,
        ])
    {
        req = req.arg(&format!("param_{k}"), v);
    }
    req.dynamic_shared_bytes = 98_328;
    req.sample_auto = auto;
    req
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("triton");
    g.sample_size(10);
    let auto = matmul_tma(true);
    g.bench_function("matmul_tma_4096/sample=auto", |b| {
        b.iter(|| warpscope::analyze(&auto).expect("analysis runs"))
    });
    let full = matmul_tma(false);
    g.bench_function("matmul_tma_4096/every_block", |b| {
        b.iter(|| warpscope::analyze(&full).expect("analysis runs"))
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
