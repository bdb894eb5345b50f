// local_wide.cu -- per-thread arrays that stay in local memory (indexed by a runtime value),
// read and written 4, 8 and 16 bytes at a time: how the hardware interleaves wide local
// accesses (scripts/h100/local/measure.sh, tests/data/h100/local/).
__global__ void local_f32(float* out, int k)
{
    float a[32];
    for (int i = 0; i < 32; i++)
        a[(i * k) & 31] = i + threadIdx.x;
    out[blockIdx.x * blockDim.x + threadIdx.x] = a[(threadIdx.x * k) & 31];
}

__global__ void local_f64(double* out, int k)
{
    double a[16];
    for (int i = 0; i < 16; i++)
        a[(i * k) & 15] = i + threadIdx.x;
    out[blockIdx.x * blockDim.x + threadIdx.x] = a[(threadIdx.x * k) & 15];
}

__global__ void local_f32x4(float4* out, int k)
{
    float4 a[8];
    for (int i = 0; i < 8; i++)
        a[(i * k) & 7] = make_float4(i, i + 1, i + 2, threadIdx.x);
    out[blockIdx.x * blockDim.x + threadIdx.x] = a[(threadIdx.x * k) & 7];
}
