// gemm.cu -- PolyBench/GPU-style GEMM, C = alpha * A * B + beta * C (row-major floats).
//
// Launch (both kernels, NI = NJ = NK = 256):
//   gemm<<<dim3(8, 32, 1), dim3(32, 8, 1)>>>(256, 256, 256, 1.5f, 1.2f, a, b, c)
//   gemm_alias<<<dim3(8, 32, 1), dim3(32, 8, 1)>>>(256, 256, 256, 1.5f, 1.2f, a, b, c)
// j = blockIdx.x*32 + threadIdx.x indexes the column, i = blockIdx.y*8 + threadIdx.y the row.
// Buffers (cudaMalloc, 256-byte aligned): a = NI*NK, b = NK*NJ, c = NI*NJ floats.
// Data (scripts/h100/compiled/driver.cu): a[x] = (x % 17) / 16, b[x] = (x % 13) / 16,
//   c[x] = 1 (c re-uploaded before every launch).
//
// gemm:       __restrict__ pointers, so the compiler keeps c[i*NJ+j] in a register across the
//             k loop (one load and one store of c per thread; a and b are read-only -> ld.global.nc).
// gemm_alias: the same body with PolyBench's plain pointers: the store to c may alias a and b, so
//             it stays inside the k loop (one store per k) and a/b are plain ld.global.

__global__ void gemm(int ni, int nj, int nk, float alpha, float beta, const float* __restrict__ a,
                     const float* __restrict__ b, float* __restrict__ c)
{
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    int i = blockIdx.y * blockDim.y + threadIdx.y;
    if (i < ni && j < nj) {
        c[i * nj + j] *= beta;
        for (int k = 0; k < nk; k++)
            c[i * nj + j] += alpha * a[i * nk + k] * b[k * nj + j];
    }
}

__global__ void gemm_alias(int ni, int nj, int nk, float alpha, float beta, const float* a, const float* b,
                           float* c)
{
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    int i = blockIdx.y * blockDim.y + threadIdx.y;
    if (i < ni && j < nj) {
        c[i * nj + j] *= beta;
        for (int k = 0; k < nk; k++)
            c[i * nj + j] += alpha * a[i * nk + k] * b[k * nj + j];
    }
}
