// vector_types.cu -- scalar versus vector (float2 / float4) global loads and stores.
//
// Demonstrates: seed 000 (Programming Guide, "Size and Alignment Requirement": global memory
// instructions read or write words of 1, 2, 4, 8 or 16 bytes; built-in vector types meet the
// alignment requirement automatically) and seed 004 (coalescing).  A warp moving float4s moves
// 512 bytes per instruction: 16 sectors per request on CC 9.0 instead of 4 for floats, with a
// quarter of the instructions.  `copy_vec4_shifted` reads through reinterpret_cast<const
// float4*>(a + 4): still 16-byte aligned (legal), but each warp's 512 bytes now straddle one
// more 32-byte sector (17 sectors per request).
//
// n is the number of elements of the kernel's own word type (floats, float2s or float4s).
//
// warpscope analyze examples/vector_types.cu --kernel copy_scalar --grid 16384 --block 256 --arg n=4194304
// warpscope analyze examples/vector_types.cu --kernel copy_vec2 --grid 8192 --block 256 --arg n=2097152
// warpscope analyze examples/vector_types.cu --kernel copy_vec4 --grid 4096 --block 256 --arg n=1048576
// warpscope analyze examples/vector_types.cu --kernel copy_vec4_shifted --grid 4096 --block 256 --arg n=1048576
// warpscope analyze examples/vector_types.cu --kernel scale_vec4 --grid 4096 --block 256 --arg n=1048576 --arg alpha=2
//
// Allocations used for tests/data/h100/examples.csv: a and b 4194304 + 64 floats each.

__global__ void copy_scalar(const float* __restrict__ a, float* b, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) b[i] = a[i];
}

__global__ void copy_vec2(const float* __restrict__ a, float* b, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) reinterpret_cast<float2*>(b)[i] = reinterpret_cast<const float2*>(a)[i];
}

__global__ void copy_vec4(const float* __restrict__ a, float* b, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) reinterpret_cast<float4*>(b)[i] = reinterpret_cast<const float4*>(a)[i];
}

// Reads start 4 floats (16 bytes) past the allocation: aligned for float4, not for a sector run.
__global__ void copy_vec4_shifted(const float* __restrict__ a, float* b, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) reinterpret_cast<float4*>(b)[i] = reinterpret_cast<const float4*>(a + 4)[i];
}

// Builds the stored value with make_float4.
__global__ void scale_vec4(const float4* __restrict__ a, float4* b, int n, float alpha)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float4 v = a[i];
        b[i] = make_float4(alpha * v.x, alpha * v.y, alpha * v.z, alpha * v.w);
    }
}
