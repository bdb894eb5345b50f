// Kernels in a header, launched from main.cu (tests/headers.rs).
#pragma once
template <typename T>
__global__ void scale(T* out, const T* in, int n, T alpha)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = alpha * in[i * 2];
}
__global__ void copy(float* out, const float* in, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[i];
}
