// tcgen05 instructions nvcc passes through from inline PTX (compiled by the pip nvcc:
// nvcc -arch=sm_100a -ptx tcgen05_ops.cu -o tcgen05_ops.ptx; no Blackwell GPU needed):
// tcgen05.cp of every shape, multicast and decompression, tcgen05.shift, .cta_group::2
// allocation, copy, MMA and multicast commit, tcgen05.mma.ws with B collectors, and the block-scaled kinds.
// crates/simt/tests/tcgen05.rs decodes the PTX nvcc writes (ptxas -arch=sm_100a accepts it too).
#include <cstdint>

__global__ void __cluster_dims__(2, 1, 1) tcgen05_ops(uint64_t desc, uint32_t idesc, int* out) {
    __shared__ uint32_t slot;
    uint32_t s = (uint32_t)__cvta_generic_to_shared(&slot);
    if (threadIdx.x < 32) {
        asm volatile("tcgen05.alloc.cta_group::2.sync.aligned.shared::cta.b32 [%0], 256;" ::"r"(s));
    }
    __syncthreads();
    uint32_t t = slot;
    if (threadIdx.x == 0) {
        asm volatile(
            "tcgen05.cp.cta_group::2.128x256b [%0], %1;\n\t"
            "tcgen05.cp.cta_group::2.4x256b [%0], %1;\n\t"
            "tcgen05.cp.cta_group::2.128x128b.b8x16.b6x16_p32 [%0], %1;\n\t"
            "tcgen05.cp.cta_group::2.128x256b.b8x16.b4x16_p64 [%0], %1;\n\t"
            "tcgen05.cp.cta_group::2.64x128b.warpx2::02_13 [%0], %1;\n\t"
            "tcgen05.cp.cta_group::2.64x128b.warpx2::01_23 [%0], %1;\n\t"
            "tcgen05.cp.cta_group::2.32x128b.warpx4 [%0], %1;\n\t"
            "tcgen05.shift.cta_group::2.down [%0];\n\t"
            "{\n\t.reg .pred p;\n\tsetp.ne.b32 p, %2, 0;\n\t"
            "tcgen05.mma.cta_group::2.kind::f16 [%0], %1, %1, %2, p;\n\t"
            "tcgen05.mma.cta_group::2.kind::mxf8f6f4.block_scale.scale_vec::1X [%0], %1, %1, %2, [%0], [%0], p;\n\t"
            "tcgen05.mma.cta_group::2.kind::mxf4.block_scale.block32 [%0], %1, %1, %2, [%0], [%0], p;\n\t"
            "tcgen05.mma.cta_group::2.kind::mxf4nvf4.block_scale.scale_vec::4X [%0], [%0], %1, %2, [%0], [%0], p;\n\t"
            "tcgen05.commit.cta_group::2.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64 [%3], %4;\n\t"
            "}\n\t" ::"r"(t),
            "l"(desc), "r"(idesc), "r"(s + 8), "h"((unsigned short)3));
    }
    asm volatile("tcgen05.fence::before_thread_sync;");
    __syncthreads();
    if (threadIdx.x < 32) {
        asm volatile("tcgen05.dealloc.cta_group::2.sync.aligned.b32 %0, 256;" ::"r"(t));
    }
    out[threadIdx.x] = (int)t;
}

__global__ void tcgen05_ws(uint64_t desc, uint32_t idesc, int* out) {
    __shared__ uint32_t slot;
    uint32_t s = (uint32_t)__cvta_generic_to_shared(&slot);
    if (threadIdx.x < 32) {
        asm volatile("tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%0], 256;" ::"r"(s));
    }
    __syncthreads();
    uint32_t t = slot;
    if (threadIdx.x == 0) {
        asm volatile(
            "{\n\t.reg .pred p;\n\tsetp.ne.b32 p, %2, 0;\n\t"
            "tcgen05.mma.ws.cta_group::1.kind::f16.collector::b0::fill [%0], %1, %1, %2, p;\n\t"
            "tcgen05.mma.ws.cta_group::1.kind::tf32.collector::b0::use [%0], %1, %1, %2, p;\n\t"
            "tcgen05.mma.ws.cta_group::1.kind::i8.collector::b0::lastuse [%0], [%0], %1, %2, p;\n\t"
            "tcgen05.mma.ws.cta_group::1.kind::f8f6f4 [%0], %1, %1, %2, p;\n\t"
            "tcgen05.cp.cta_group::1.128x256b [%0], %1;\n\t"
            "tcgen05.shift.cta_group::1.down [%0];\n\t"
            "}\n\t" ::"r"(t),
            "l"(desc), "r"(idesc));
    }
    __syncthreads();
    if (threadIdx.x < 32) {
        asm volatile("tcgen05.dealloc.cta_group::1.sync.aligned.b32 %0, 256;" ::"r"(t));
    }
    out[threadIdx.x] = (int)t;
}
