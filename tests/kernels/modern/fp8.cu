// fp8 (e4m3, e5m2) conversions as quantized kernels use them (sm_89+ hardware, emulated below).
#include <cuda_fp8.h>
#include <cuda_fp16.h>

__global__ void quantize_e4m3(const float *in, __nv_fp8_e4m3 *out, float scale, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = __nv_fp8_e4m3(in[i] * scale);
}

__global__ void dequantize_e5m2x2(const __nv_fp8x2_e5m2 *in, __half2 *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = static_cast<__half2>(in[i]);
}
