"""A sweep of a Triton matmul's tile sizes and warps over CCs with warpscope.analyze_many,
picking the configuration with the fewest global sectors per FLOP (python/README.md shows
the same). Skipped, saying so, when Triton is not installed."""

import pytest

import warpscope

triton = pytest.importorskip("triton", reason="triton not installed (pip install triton): the sweep is not run")
tl = pytest.importorskip("triton.language")
np = pytest.importorskip("numpy", reason="numpy not installed")
import warpscope.triton as wt  # noqa: E402


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        acc += tl.dot(tl.load(a_ptrs), tl.load(b_ptrs))
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    tl.store(c_ptrs, acc.to(tl.float16))


def test_matmul_sweep_fewest_sectors_per_flop():
    """C = A B, 256 x 256 x 256 fp16. A (BM, BN) tile's block reads its BM x K strip of A
    and K x BN strip of B (2 bytes an element), and writes BM x BN: over the (M/BM)(N/BN)
    blocks, 2 M N K (1/BN + 1/BM) bytes read, 2 M N written, all in full 32-byte sectors
    (rows of 16-byte aligned vectors). 32 x 32: 33,554,432 / 16 = 2,097,152 B = 65,536
    sectors; 64 x 64: 1,048,576 B = 32,768; 128 x 64: 786,432 B = 24,576; stores 131,072 B =
    4,096 sectors. BLOCK_K and the warps change neither. Over 2 M N K = 33,554,432 FLOP the
    fewest sectors per FLOP is 128 x 64's (28,672 / 33,554,432), on every CC. Triton's
    pipelined loop (num_stages=3) prefetches past the last tile with cp.async of source size
    0, which reads nothing: the figures are those of one read per element."""
    m = n = k = 256
    a = np.zeros((m, k), np.float16)
    b = np.zeros((k, n), np.float16)
    c = np.zeros((m, n), np.float16)
    configs = [(bm, bn, bk, nw, cc)
               for bm, bn, bk, nw in ((32, 32, 32, 4), (64, 64, 32, 4), (128, 64, 64, 8))
               for cc in ("8.0", "9.0")]
    launches = [
        (wt.analyze, (matmul_kernel, (m // bm, n // bn), a, b, c, m, n, k, k, 1, n, 1, n, 1),
         dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, num_warps=nw, num_stages=3, cc=cc))
        for bm, bn, bk, nw, cc in configs
    ]
    results = warpscope.analyze_many(launches)
    flop = 2 * m * n * k
    per_flop = {}
    for (bm, bn, bk, nw, cc), r in zip(configs, results):
        t = r.totals[cc]
        read = 2 * m * n * k * (bm + bn) // (bm * bn)
        assert t["global_load"]["sectors"] == read // 32, (bm, bn, cc)
        assert t["global_store"]["sectors"] == 2 * m * n // 32
        assert t["global_load"]["efficiency"] == 1.0
        assert r.block == (32 * nw, 1, 1)
        per_flop[(bm, bn, bk, nw, cc)] = (t["global_load"]["sectors"] + t["global_store"]["sectors"]) / flop
    best = min(per_flop, key=per_flop.get)
    assert best[:4] == (128, 64, 64, 8)
    assert per_flop[best] == (24576 + 4096) / flop
