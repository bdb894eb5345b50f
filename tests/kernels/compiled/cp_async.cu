// cp_async.cu -- double-buffered copy global -> shared -> global with cp.async (LDGSTS),
// 16-byte chunks, through <cuda_pipeline.h>.
//
// Launch (n = 1 << 22 floats; a tile = 256 threads * 4 floats = 1024 floats = 4 KiB;
// 4096 tiles, block b copies tiles b, b + 512, ..., 8 tiles per block):
//   cp_async_copy<<<512, 256>>>(in, out, 4194304)
// Buffers (cudaMalloc): in and out = n floats. Data: in[x] = x, out zeroed.
// Static shared memory: 2 * 1024 floats = 8 KiB (buf[2][1024], 16-byte aligned).
//
// Per tile: thread t issues __pipeline_memcpy_async of the 16 bytes in[tile*1024 + 4t ..] into
// buf[stage][4t] for the NEXT tile, commits, waits for the previous group, then reads its own 16
// bytes from buf[stage] (float4) and stores them to out (float4).

#include <cuda_pipeline.h>

#define CPA_TILE 1024

__global__ void cp_async_copy(const float* __restrict__ in, float* __restrict__ out, int n)
{
    __shared__ __align__(16) float buf[2][CPA_TILE];
    const int ntiles = n / CPA_TILE;
    const int t4 = threadIdx.x * 4;
    int tile = blockIdx.x;
    int stage = 0;
    if (tile < ntiles)
        __pipeline_memcpy_async(&buf[0][t4], &in[(size_t)tile * CPA_TILE + t4], 16);
    __pipeline_commit();
    for (; tile < ntiles; tile += gridDim.x) {
        int next = tile + gridDim.x;
        if (next < ntiles)
            __pipeline_memcpy_async(&buf[stage ^ 1][t4], &in[(size_t)next * CPA_TILE + t4], 16);
        __pipeline_commit();
        __pipeline_wait_prior(1);
        __syncthreads();
        float4 v = *reinterpret_cast<const float4*>(&buf[stage][t4]);
        *reinterpret_cast<float4*>(&out[(size_t)tile * CPA_TILE + t4]) = v;
        __syncthreads();
        stage ^= 1;
    }
}
