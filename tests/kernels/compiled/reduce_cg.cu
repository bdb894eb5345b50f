// reduce_cg.cu -- block sum with cooperative groups: warp shuffles, then one shared word per warp.
//
// Launch (n = 1 << 20):
//   reduce_cg<<<4096, 256>>>(in, out, 1048576)
// Buffers (cudaMalloc): in = n floats, out = 4096 floats (one partial sum per block).
// Data: in[x] = 1, out zeroed.
//
// Each thread loads one element, the warp reduces it with __shfl_down_sync (offsets 16..1), lane 0
// of each warp writes warp_sums[warp], block.sync(), then warp 0 reads the 8 warp sums
// (lanes >= 8 read nothing), reduces them again and lane 0 writes out[blockIdx.x].

#include <cooperative_groups.h>
namespace cg = cooperative_groups;

__global__ void reduce_cg(const float* in, float* out, int n)
{
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
    __shared__ float warp_sums[32];

    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = (i < (unsigned int)n) ? in[i] : 0.0f;
    for (int off = 16; off > 0; off >>= 1)
        v += __shfl_down_sync(0xffffffffu, v, off);
    if (warp.thread_rank() == 0)
        warp_sums[warp.meta_group_rank()] = v;
    block.sync();

    if (warp.meta_group_rank() == 0) {
        v = (warp.thread_rank() < warp.meta_group_size()) ? warp_sums[warp.thread_rank()] : 0.0f;
        for (int off = 16; off > 0; off >>= 1)
            v += __shfl_down_sync(0xffffffffu, v, off);
        if (warp.thread_rank() == 0)
            out[blockIdx.x] = v;
    }
}
