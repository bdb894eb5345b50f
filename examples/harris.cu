// harris.cu -- misaligned (offset) and strided global accesses.
//
// Demonstrates: seed 002 (Mark Harris, "How to Access Global Memory Efficiently in
// CUDA C/C++ Kernels") -- the `offset` and `stride` increment kernels exactly as in the
// post -- plus the copy variants whose bandwidth is recorded in
// shared/ground-truth/h100/copy-bandwidth.csv (`offset_copy`, `stride_copy`).
// Seeds 000 / 004 (Programming Guide / Best Practices Guide) give the rule being shown:
// one request per warp instruction, one 32-byte sector per distinct block touched.
//
// Expected on CC 9.0 (4-byte T): offset 0 -> 4 sectors/request, any offset not a multiple
// of 8 floats -> 5; stride s -> min(4*s, 32) sectors/request.
//
// warpscope analyze examples/harris.cu --kernel 'offset<float>' --grid 4096 --block 256 --arg s=1
// warpscope analyze examples/harris.cu --kernel 'stride<float>' --grid 4096 --block 256 --arg s=8
// warpscope analyze examples/harris.cu --kernel 'offset<double>' --grid 4096 --block 256 --arg s=1
// warpscope analyze examples/harris.cu --kernel offset_copy --grid 16384 --block 256 --arg n=4194304 --arg offset=1
// warpscope analyze examples/harris.cu --kernel stride_copy --grid 8192 --block 256 --arg n=4194304 --arg stride=2
//
// Allocations used for tests/data/h100/examples.csv: `a` of offset/stride holds
// 33 * 4096 * 256 elements of T; `a` and `b` of the copy kernels hold n floats (+ 32 spare).

template <typename T>
__global__ void offset(T* a, int s)
{
    int i = blockDim.x * blockIdx.x + threadIdx.x + s;
    a[i] = a[i] + 1;
}

template <typename T>
__global__ void stride(T* a, int s)
{
    int i = (blockDim.x * blockIdx.x + threadIdx.x) * s;
    a[i] = a[i] + 1;
}

// copy-bandwidth.csv: i = blockIdx.x*blockDim.x + threadIdx.x + offset; if (i < n) b[i] = a[i];
__global__ void offset_copy(const float* a, float* b, int n, int offset)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x + offset;
    if (i < n) b[i] = a[i];
}

// copy-bandwidth.csv: i = (blockIdx.x*blockDim.x + threadIdx.x) * stride; if (i < n) b[i] = a[i];
__global__ void stride_copy(const float* a, float* b, int n, int stride)
{
    int i = (blockIdx.x * blockDim.x + threadIdx.x) * stride;
    if (i < n) b[i] = a[i];
}
