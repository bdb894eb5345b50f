// Which pixels an im2col TMA load reads (H100, sm_90a): a 4-D NHWC u32 tensor (C=8, W=4, H=4,
// N=2), element (n,h,w,c) = n*1000 + h*100 + w*10 + c; a map with pixel box corners
// lower = (-1,-1), upper = (-1,-1) (padding 1 for a 3x3 filter), 20 pixels per column,
// 8 channels per pixel. For several (coords, offsets) the kernel loads one column and the
// host prints the first channel of each of the 20 shared rows (-1 for a zero-filled row,
// since the data has no zero but element (0,0,0,0) = 0: c=0 of pixel 0 prints 0 either way,
// so channel 1 is printed: n*1000+h*100+w*10+1, or 0 when filled).
#include <cuda.h>
#include <cstdio>
#include <cstdint>

__global__ void probe(const __grid_constant__ CUtensorMap map, unsigned* out, int w0, int h0, int n0,
                      unsigned short ow, unsigned short oh) {
    __shared__ alignas(128) unsigned smem[20 * 8];
    __shared__ alignas(8) unsigned long long bar;
    unsigned sbar = (unsigned)__cvta_generic_to_shared(&bar);
    unsigned sdst = (unsigned)__cvta_generic_to_shared(smem);
    if (threadIdx.x == 0) {
        asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(sbar));
        asm volatile("fence.proxy.async.shared::cta;");
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(sbar), "r"(20 * 8 * 4));
        asm volatile(
            "cp.async.bulk.tensor.4d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes"
            " [%0], [%1, {%2, %3, %4, %5}], [%6], {%7, %8};"
            ::"r"(sdst), "l"(&map), "r"(0), "r"(w0), "r"(h0), "r"(n0), "r"(sbar), "h"(ow), "h"(oh)
            : "memory");
        asm volatile(
            "{ .reg .pred p; W: mbarrier.try_wait.parity.shared::cta.b64 p, [%0], 0; @!p bra W; }" ::"r"(sbar));
        for (int i = 0; i < 20; i++) out[i] = smem[i * 8 + 1];
    }
}

int main() {
    const int C = 8, W = 4, H = 4, N = 2;
    unsigned host[N * H * W * C];
    for (int n = 0; n < N; n++)
        for (int h = 0; h < H; h++)
            for (int w = 0; w < W; w++)
                for (int c = 0; c < C; c++) host[((n * H + h) * W + w) * C + c] = n * 1000 + h * 100 + w * 10 + c;
    unsigned *dev, *out;
    cudaMalloc(&dev, sizeof host);
    cudaMalloc(&out, 20 * sizeof(unsigned));
    cudaMemcpy(dev, host, sizeof host, cudaMemcpyHostToDevice);
    CUtensorMap map;
    cuuint64_t dims[4] = {C, W, H, N};
    cuuint64_t strides[3] = {C * 4, W * C * 4, H * W * C * 4};
    int lower[2] = {-1, -1}, upper[2] = {-1, -1};
    cuuint32_t estr[4] = {1, 1, 1, 1};
    CUresult r = cuTensorMapEncodeIm2col(&map, CU_TENSOR_MAP_DATA_TYPE_UINT32, 4, dev, dims, strides, lower, upper,
                                         C, 20, estr, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE,
                                         CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS) { printf("encode failed %d\n", (int)r); return 1; }
    int cases[][5] = {{0, 0, 0, 0, 0}, {0, 0, 0, 1, 1}, {-1, -1, 0, 0, 0}, {-1, -1, 0, 1, 1}, {1, 0, 0, 0, 0}, {0, 1, 0, 2, 2}};
    for (auto& k : cases) {
        probe<<<1, 32>>>(map, out, k[0], k[1], k[2], (unsigned short)k[3], (unsigned short)k[4]);
        cudaError_t e = cudaDeviceSynchronize();
        unsigned got[20];
        cudaMemcpy(got, out, sizeof got, cudaMemcpyDeviceToHost);
        printf("coords w=%d h=%d n=%d offsets w=%d h=%d (%s):", k[0], k[1], k[2], k[3], k[4], cudaGetErrorString(e));
        for (int i = 0; i < 20; i++) printf(" %u", got[i]);
        printf("\n");
        if (e != cudaSuccess) return 1;
    }
    return 0;
}
