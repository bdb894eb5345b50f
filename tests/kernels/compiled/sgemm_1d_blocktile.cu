// sgemm_1d_blocktile.cu -- 1-D block-tiled SGEMM in the style of siboehm's "kernel 4"
// (C = alpha * A * B + beta * C, row-major floats): BM = BN = 64, BK = 8, TM = 8; each of the
// 512 threads of a block computes 8 results of one column of the block's 64 x 64 tile of C.
//
// Launch (M = N = K = 1024):
//   sgemm_1d_blocktile<<<dim3(N / 64, M / 64, 1), dim3(512, 1, 1)>>>(1024, 1024, 1024, 1.0f, A, B, 0.0f, C)
// Buffers (cudaMalloc, 256-byte aligned): A = M*K, B = K*N, C = M*N floats.
// Data (tests/data/h100/compiled/sgemm_1d_blocktile_driver.cu): A[x] = (x % 17) / 16,
//   B[x] = (x % 13) / 16, C zeroed. Sizes are multiples of 64 (no bounds checks).
// Compile with -D NDEBUG (the asserts are siboehm's and are not part of what is measured).
//
// What the compilers make of it (nvcc 13.0 and 13.5, sm_90): nvcc unrolls the dotIdx loop twice
// (4 PTX trips, each with 2 loads of Bs and 16 of As) and the resIdx loop fully; ptxas unrolls
// the dotIdx loop fully and makes each 4 words of a row of As (the PTX loads at +0 and +4 in 2
// consecutive trips) one LDS.128, tied to the first: per tile a warp runs 8 LDS and 16 LDS.128.
// Measured on the H100: tests/data/h100/compiled/sgemm_1d_blocktile.csv; tested in tests/compiled.rs.

#include <cassert>

#define SG_BM 64
#define SG_BN 64
#define SG_BK 8
#define SG_TM 8

__global__ void sgemm_1d_blocktile(int M, int N, int K, float alpha, const float* A, const float* B,
                                   float beta, float* C)
{
    const unsigned cRow = blockIdx.y;
    const unsigned cCol = blockIdx.x;
    const int threadCol = threadIdx.x % SG_BN;
    const int threadRow = threadIdx.x / SG_BN;

    __shared__ float As[SG_BM * SG_BK];
    __shared__ float Bs[SG_BK * SG_BN];

    A += cRow * SG_BM * K;
    B += cCol * SG_BN;
    C += cRow * SG_BM * N + cCol * SG_BN;

    assert(SG_BM * SG_BK == blockDim.x);
    assert(SG_BN * SG_BK == blockDim.x);
    const unsigned innerColA = threadIdx.x % SG_BK;
    const unsigned innerRowA = threadIdx.x / SG_BK;
    const unsigned innerColB = threadIdx.x % SG_BN;
    const unsigned innerRowB = threadIdx.x / SG_BN;

    float threadResults[SG_TM] = {0.0f};

    for (unsigned bkIdx = 0; bkIdx < K; bkIdx += SG_BK) {
        As[innerRowA * SG_BK + innerColA] = A[innerRowA * K + innerColA];
        Bs[innerRowB * SG_BN + innerColB] = B[innerRowB * N + innerColB];
        __syncthreads();
        A += SG_BK;
        B += SG_BK * N;
        for (unsigned dotIdx = 0; dotIdx < SG_BK; ++dotIdx) {
            float tmpB = Bs[dotIdx * SG_BN + threadCol];
            for (unsigned resIdx = 0; resIdx < SG_TM; ++resIdx)
                threadResults[resIdx] += As[(threadRow * SG_TM + resIdx) * SG_BK + dotIdx] * tmpB;
        }
        __syncthreads();
    }
    for (unsigned resIdx = 0; resIdx < SG_TM; ++resIdx)
        C[(threadRow * SG_TM + resIdx) * N + threadCol] =
            alpha * threadResults[resIdx] + beta * C[(threadRow * SG_TM + resIdx) * N + threadCol];
}
