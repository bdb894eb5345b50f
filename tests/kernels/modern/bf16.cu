// bf16 and f16 arithmetic as llm.c-style kernels write it: scalar and packed (x2) forms,
// conversions to and from float. Packed bf16 arithmetic needs sm_80.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

__global__ void bf16_axpy(const __nv_bfloat16 *x, __nv_bfloat16 *y, float a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = __bfloat162float(x[i]) * a + __bfloat162float(y[i]);
        y[i] = __float2bfloat16(v);
    }
}

__global__ void bf16x2_fma(const __nv_bfloat162 *x, const __nv_bfloat162 *w, __nv_bfloat162 *y, int n) {
#if __CUDA_ARCH__ >= 800
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        __nv_bfloat162 acc = __hfma2(x[i], w[i], y[i]);
        acc = __hmax2(acc, __float2bfloat162_rn(0.0f));
        y[i] = __hadd2(acc, __hmul2(acc, x[i]));
    }
#endif
}

__global__ void half2_gelu(const __half2 *x, __half2 *y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        __half2 v = x[i];
        float2 f = __half22float2(v);
        f.x = 0.5f * f.x * (1.0f + tanhf(0.79788456f * (f.x + 0.044715f * f.x * f.x * f.x)));
        f.y = 0.5f * f.y * (1.0f + tanhf(0.79788456f * (f.y + 0.044715f * f.y * f.y * f.y)));
        y[i] = __hsub2(__floats2half2_rn(f.x, f.y), __hneg2(__habs2(v)));
    }
}

// Mixed conversions: bf16 <-> half <-> float <-> int, packed conversions.
__global__ void convert_mix(const float *in, __half *h, __nv_bfloat16 *b, int *q, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = in[i];
        h[i] = __float2half_rz(v);
        b[i] = __float2bfloat16_rz(v);
        __nv_bfloat162 p = __floats2bfloat162_rn(v, v * 2.0f);
        q[i] = __bfloat162int_rn(__high2bfloat16(p)) + __half2int_rn(__float2half(v));
    }
}
