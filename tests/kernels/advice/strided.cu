// A 1-D strided read and a genuine column walk of a row-major 2-D array. Both read floats
// `stride` (or `n`) elements apart across the warp; only the second walks a 2-D array: its
// loop reads every column, so the warps start at every offset within a row, while the
// strided read only ever touches every stride-th element.
//
// warpscope analyze tests/kernels/advice/strided.cu --kernel gather_stride --grid 64 --block 256 --arg stride=32
// warpscope analyze tests/kernels/advice/strided.cu --kernel row_sums --grid 4 --block 256 --arg n=64

// out[i] = in[i * stride]: a 1-D strided read.
__global__ void gather_stride(const float* in, float* out, int stride)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = in[i * stride];
}

// One thread per row of an n-column row-major matrix: lane l reads row l, column k.
__global__ void row_sums(const float* a, float* sums, int n)
{
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    float s = 0.0f;
    for (int k = 0; k < n; ++k)
        s += a[row * n + k];
    sums[row] = s;
}

// The same strided read four times on one line, unrolled by the compiler: four loads of one
// source line with one cause.
__global__ void gather_stride4(const float* in, float* out, int stride)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float s = 0.0f;
#pragma unroll
    for (int k = 0; k < 4; ++k) s += in[(4 * i + k) * stride];
    out[i] = s;
}
