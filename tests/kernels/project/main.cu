// A host program whose kernels live in kernels.cuh (tests/headers.rs).
#include "kernels.cuh"
#include <cuda_runtime.h>
int main()
{
    const int N = 1 << 22;
    float *a, *b;
    cudaMalloc(&a, N * sizeof(float));
    cudaMalloc(&b, 2 * N * sizeof(float));
    scale<float><<<N / 256, 256>>>(a, b, N, 2.0f);
    copy<<<N / 256, 256>>>(a, b, N);
    cudaDeviceSynchronize();
    return 0;
}
