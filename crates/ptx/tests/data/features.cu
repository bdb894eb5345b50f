// Small kernel exercising PTX constructs the parser must accept:
// shuffles, atomics, a non-inlined device call, printf, and cp.async.
#include <cstdio>

__device__ __noinline__ float scale(float x, float a) { return x * a + 1.0f; }

__global__ void features(const float* __restrict__ in, float* out, int* counter, int n)
{
    __shared__ float tile[256];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    // cp.async (sm_80+) through inline asm: cuda_pipeline.h needs libcu++ headers.
    unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(&tile[threadIdx.x]));
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(dst), "l"(&in[i < n ? i : 0]));
    asm volatile("cp.async.commit_group;\n" ::);
    asm volatile("cp.async.wait_group 0;\n" ::);
    __syncthreads();
    float v = scale(tile[threadIdx.x], 2.0f);
    for (int off = 16; off > 0; off >>= 1)
        v += __shfl_down_sync(0xffffffffu, v, off);
    if ((threadIdx.x & 31) == 0) {
        atomicAdd(counter, 1);
        out[blockIdx.x] = v;
    }
    if (i == 0)
        printf("n=%d v=%f\n", n, v);
}

// Two overloads: both demangle to the name `pick`.
__global__ void pick(float* a) { a[threadIdx.x] = 1.0f; }
__global__ void pick(double* a) { a[threadIdx.x] = 1.0; }
