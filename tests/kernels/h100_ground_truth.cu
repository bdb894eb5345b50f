// The kernels of shared/ground-truth/h100/, as their CSV headers describe them.

// global-f32-loads-stores.csv: v = a[i*stride + offset] or a[i*stride + offset] = v,
// i = blockIdx.x*blockDim.x + threadIdx.x; grid 16384 x block 256.
__global__ void global_load(const float* a, float* out, int stride, int offset)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = a[i * stride + offset];
    if (v == 12345.0f) out[i] = v;   // keeps the load alive; never taken (memory is zero)
}

__global__ void global_store(float* a, int stride, int offset)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    a[i * stride + offset] = 1.0f;
}

// shared-f32-stride.csv: one 4-byte shared load per thread, v = s[(threadIdx.x*stride) % 4096];
// grid 1024 x block 256.
__global__ void shared_stride(float* out, int stride)
{
    __shared__ float s[4096];
    float v = s[(threadIdx.x * stride) % 4096];
    if (v == 12345.0f) out[threadIdx.x] = v;
}
