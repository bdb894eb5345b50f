// L2 prefetches of Hopper's bulk-copy engine [PTX ISA §9.7.9.25.4.3 cp.async.bulk.prefetch,
// §9.7.9.25.5.3 cp.async.bulk.prefetch.tensor]: thread 0 of each block prefetches one byte
// range (bulk_prefetch) or one 64 x 64 box of a 2-D fp16 tensor map (tensor_prefetch) into
// L2; tensor_load loads the same boxes into shared memory, for comparison. The tensor map is
// a __grid_constant__ parameter (--tensor-map map=u16:W x H:PITCH:64x64).
#include <cuda.h>
#include <cstdint>

constexpr int BOX = 64;

__global__ void bulk_prefetch(const char *p, unsigned size) {
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
    if (threadIdx.x == 0) {
        const char *q = p + (size_t)blockIdx.x * size;
        asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(q), "r"(size) : "memory");
    }
#endif
}

__global__ void tensor_prefetch(const __grid_constant__ CUtensorMap map) {
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
    if (threadIdx.x == 0) {
        int x = blockIdx.x * BOX, y = blockIdx.y * BOX;
        asm volatile("cp.async.bulk.prefetch.tensor.2d.L2.global.tile [%0, {%1, %2}];" ::"l"(&map), "r"(x), "r"(y)
                     : "memory");
    }
#endif
}

__global__ void tensor_load(const __grid_constant__ CUtensorMap map, unsigned short *out) {
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
    __shared__ alignas(128) unsigned short tile[BOX][BOX];
    __shared__ alignas(8) uint64_t bar;
    uint32_t t = (uint32_t)__cvta_generic_to_shared(&tile[0][0]);
    uint32_t b = (uint32_t)__cvta_generic_to_shared(&bar);
    int x = blockIdx.x * BOX, y = blockIdx.y * BOX;
    if (threadIdx.x == 0) {
        asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(b) : "memory");
        asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(b), "r"(BOX * BOX * 2) : "memory");
        asm volatile(
            "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];" ::"r"(t),
            "l"(&map), "r"(x), "r"(y), "r"(b)
            : "memory");
    }
    uint32_t done = 0;
    while (!done)
        asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], 0; selp.u32 %0, 1, 0, p; }"
                     : "=r"(done)
                     : "r"(b)
                     : "memory");
    if (threadIdx.x == 0) out[blockIdx.y * gridDim.x + blockIdx.x] = tile[1][1];
#endif
}

// One box at (x, y), for scripts/h100/prefetch/tma_probe.cu: the prefetch, and the load
// (element (1, 1) of the box to out[0]).
__global__ void tensor_prefetch_at(const __grid_constant__ CUtensorMap map, int x, int y) {
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
    if (threadIdx.x == 0)
        asm volatile("cp.async.bulk.prefetch.tensor.2d.L2.global.tile [%0, {%1, %2}];" ::"l"(&map), "r"(x), "r"(y)
                     : "memory");
#endif
}

__global__ void tensor_load_at(const __grid_constant__ CUtensorMap map, int x, int y, unsigned short *out) {
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
    __shared__ alignas(128) unsigned short tile[BOX][BOX];
    __shared__ alignas(8) uint64_t bar;
    uint32_t t = (uint32_t)__cvta_generic_to_shared(&tile[0][0]);
    uint32_t b = (uint32_t)__cvta_generic_to_shared(&bar);
    if (threadIdx.x == 0) {
        asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(b) : "memory");
        asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(b), "r"(BOX * BOX * 2) : "memory");
        asm volatile(
            "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];" ::"r"(t),
            "l"(&map), "r"(x), "r"(y), "r"(b)
            : "memory");
    }
    uint32_t done = 0;
    while (!done)
        asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], 0; selp.u32 %0, 1, 0, p; }"
                     : "=r"(done)
                     : "r"(b)
                     : "memory");
    if (threadIdx.x == 0) out[0] = tile[1][1];
#endif
}
