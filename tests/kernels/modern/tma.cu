// A 2-D TMA tile round trip as the CUDA Programming Guide writes it: one thread loads a
// 64 x 32 tile of ints with cp.async.bulk.tensor (completion on a cuda::barrier), the block
// updates it in shared memory, and one thread stores it back. The tensor map is a
// __grid_constant__ parameter (--tensor-map tensor_map=… on the command line).
#include <cuda.h>
#include <cuda/barrier>
#include <cuda/ptx>
using barrier = cuda::barrier<cuda::thread_scope_block>;
namespace ptx = cuda::ptx;
#pragma nv_diag_suppress static_var_with_dynamic_init

constexpr int TILE_W = 32;
constexpr int TILE_H = 64;

__global__ void tma_tile(const __grid_constant__ CUtensorMap tensor_map) {
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900  // TMA is sm_90's
    __shared__ alignas(128) int tile[TILE_H][TILE_W];
    __shared__ barrier bar;
    int x = blockIdx.x * TILE_W, y = blockIdx.y * TILE_H;
    if (threadIdx.x == 0) {
        init(&bar, blockDim.x);
        ptx::fence_proxy_async(ptx::space_shared);
    }
    __syncthreads();
    barrier::arrival_token token;
    if (threadIdx.x == 0) {
        cuda::device::experimental::cp_async_bulk_tensor_2d_global_to_shared(&tile, &tensor_map, x, y, bar);
        token = cuda::device::barrier_arrive_tx(bar, 1, sizeof(tile));
    } else {
        token = bar.arrive();
    }
    bar.wait(std::move(token));
    for (int r = 0; r < TILE_H; ++r) tile[r][threadIdx.x] += 1;
    ptx::fence_proxy_async(ptx::space_shared);
    __syncthreads();
    if (threadIdx.x == 0) {
        cuda::device::experimental::cp_async_bulk_tensor_2d_shared_to_global(&tensor_map, x, y, &tile);
        ptx::cp_async_bulk_commit_group();
        ptx::cp_async_bulk_wait_group_read(ptx::n32_t<0>());
    }
#endif
}
