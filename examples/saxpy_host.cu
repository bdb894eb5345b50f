// saxpy_host.cu -- a complete CUDA program: the kernel and the host code that launches it,
// for `warpscope launches` and `warpscope analyze --launch N`.
//
// warpscope launches examples/saxpy_host.cu
// warpscope analyze examples/saxpy_host.cu --launch 0
//
// The launches' grids, blocks and scalar arguments are compile-time constants (a #define, a
// constexpr block size, a ceil-div, a dim3), so --launch N needs no other flag; launch 2's
// grid depends on a value read at run time and must be given with --grid.

#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#ifndef N
#define N (1 << 20)
#endif

constexpr int BLOCK = 256;

// y = a*x + y over n floats, one element per thread.
__global__ void saxpy(int n, float a, const float* x, float* y)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = a * x[i] + y[i];
}

// Every `stride`-th float of x: stride 1 is coalesced, 32 costs 32 sectors per request.
__global__ void strided_copy(const float* x, float* y, int n, int stride)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i * stride < n)
        y[i] = x[i * stride];
}

int main(int argc, char** argv)
{
    float *x, *y;
    cudaMalloc(&x, N * sizeof(float));
    cudaMalloc(&y, N * sizeof(float));

    const int blocks = (N + BLOCK - 1) / BLOCK;
    saxpy<<<blocks, BLOCK>>>(N, 2.0f, x, y);

    dim3 grid(N / BLOCK / 32);
    dim3 block(BLOCK);
    strided_copy<<<grid, block, 0>>>(x, y, N, 32);

    int n = argc > 1 ? atoi(argv[1]) : N;
    saxpy<<<(n + 255) / 256, 256>>>(n, 0.5f, x, y);

    cudaDeviceSynchronize();
    printf("done\n");
    cudaFree(x);
    cudaFree(y);
    return 0;
}
