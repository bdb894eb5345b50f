// Experiment (scripts/h100/shared_noise.sh): why do shared-load wavefront counts of short
// kernels vary from run to run?  Three versions of the shared-f32-stride kernel
// (grid 1024 x block 256, one 4-byte shared load per thread, v = s[(threadIdx.x*stride) % 4096]):
//   nobar : no fill, no __syncthreads, store only if v == -1 (never)
//   bar   : no fill, __syncthreads, store only if v == -1          (= shared_f32_stride fill=0 store=0)
//   fill  : fill s[] first, __syncthreads, store only if v == -1   (= shared_f32_stride fill=1 store=0)
// Each for strides 1, 2, 32, 32, 32, in that order; the driver prints "variant stride" per launch.
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

__global__ void nobar(float* out, int stride)
{
    __shared__ float s[4096];
    if (stride < 0) s[threadIdx.x] = 0.0f;  // never runs; keeps s from looking never-written
    float v = s[(threadIdx.x * stride) % 4096];
    if (v == -1.0f) out[blockIdx.x * blockDim.x + threadIdx.x] = v;
}

__global__ void bar(float* out, int stride)
{
    __shared__ float s[4096];
    if (stride < 0) s[threadIdx.x] = 0.0f;  // never runs; keeps s from looking never-written
    __syncthreads();
    float v = s[(threadIdx.x * stride) % 4096];
    if (v == -1.0f) out[blockIdx.x * blockDim.x + threadIdx.x] = v;
}

__global__ void fill(float* out, int stride)
{
    __shared__ float s[4096];
    for (int k = threadIdx.x; k < 4096; k += blockDim.x) s[k] = (float)k;
    __syncthreads();
    float v = s[(threadIdx.x * stride) % 4096];
    if (v == -1.0f) out[blockIdx.x * blockDim.x + threadIdx.x] = v;
}

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
    fprintf(stderr, "CUDA error %s at line %d\n", cudaGetErrorString(e_), __LINE__); exit(1); } } while (0)

int main()
{
    float* out = nullptr;
    const size_t bytes = (size_t)1024 * 256 * sizeof(float);
    CK(cudaMalloc(&out, bytes));
    int strides[] = {1, 2, 32, 32, 32};
    const char* names[] = {"nobar", "bar", "fill"};
    for (int v = 0; v < 3; v++) {
        for (int s : strides) {
            CK(cudaMemset(out, 0, bytes));
            if (v == 0) nobar<<<1024, 256>>>(out, s);
            if (v == 1) bar<<<1024, 256>>>(out, s);
            if (v == 2) fill<<<1024, 256>>>(out, s);
            CK(cudaGetLastError());
            CK(cudaDeviceSynchronize());
            printf("LAUNCH %s %d\n", names[v], s);
        }
    }
    CK(cudaFree(out));
    return 0;
}
