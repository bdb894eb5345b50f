// A double-buffered copy through cuda::pipeline and cuda::memcpy_async (cp.async on sm_80+),
// and a block-wide cuda::barrier.
#include <cuda/pipeline>
#include <cuda/barrier>
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
#pragma nv_diag_suppress static_var_with_dynamic_init

constexpr int TILE = 256;

__global__ void pipelined_sum(const float *in, float *out, int tiles) {
    __shared__ float buf[2][TILE];
    auto block = cg::this_thread_block();
    cuda::pipeline<cuda::thread_scope_thread> pipe = cuda::make_pipeline();
    float acc = 0.0f;
    int t = threadIdx.x;
    pipe.producer_acquire();
    cuda::memcpy_async(&buf[0][t], &in[t], sizeof(float), pipe);
    pipe.producer_commit();
    for (int k = 0; k < tiles; ++k) {
        if (k + 1 < tiles) {
            pipe.producer_acquire();
            cuda::memcpy_async(&buf[(k + 1) & 1][t], &in[(k + 1) * TILE + t], sizeof(float), pipe);
            pipe.producer_commit();
        }
        cuda::pipeline_consumer_wait_prior<1>(pipe);
        __syncthreads();
        acc += buf[k & 1][(t + 1) % TILE];
        __syncthreads();
        pipe.consumer_release();
    }
    out[blockIdx.x * TILE + t] = acc;
}

__global__ void barrier_copy(const float4 *in, float4 *out) {
    __shared__ float4 tile[TILE];
    __shared__ cuda::barrier<cuda::thread_scope_block> bar;
    auto block = cg::this_thread_block();
    if (block.thread_rank() == 0) {
        init(&bar, block.size());
    }
    block.sync();
    cuda::memcpy_async(block, tile, in + blockIdx.x * TILE, sizeof(float4) * TILE, bar);
    bar.arrive_and_wait();
    out[blockIdx.x * TILE + threadIdx.x] = tile[TILE - 1 - threadIdx.x];
}
