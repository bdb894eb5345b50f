// reduction.cu -- shared-memory tree reductions (Mark Harris, "Optimizing Parallel
// Reduction in CUDA", kernels 1-3).
//
// Demonstrates: seed 000 / 001 shared-memory banks.  Each block loads blockDim.x floats into
// extern __shared__ float sdata[] (dynamic shared memory: blockDim.x * 4 bytes), reduces
// them to one value and writes the block sum to out[blockIdx.x].
//   reduce_interleaved : if (tid % (2*s) == 0) sdata[tid] += sdata[tid + s]; s = 1, 2, 4, ...
//                        (divergent warps; each warp's lanes stay inside its own 32
//                        consecutive words, so no bank conflicts, but warps keep issuing
//                        with few active lanes)
//   reduce_strided     : index = 2*s*tid; if (index < blockDim.x) sdata[index] += sdata[index+s];
//                        (active lanes contiguous, but lane k touches word 2*s*k:
//                        2-way conflicts at s = 1, 4-way at s = 2, ...)
//   reduce_sequential  : for (s = blockDim.x/2; s > 0; s >>= 1) if (tid < s) sdata[tid] += sdata[tid + s];
//                        (contiguous active lanes, conflict free)
// Launch with dynamic shared memory = blockDim.x * sizeof(float) bytes; blockDim.x a power of 2.
//
// warpscope analyze examples/reduction.cu --kernel reduce_interleaved --grid 4096 --block 256 --dynamic-smem 1024 --arg n=1048576
// warpscope analyze examples/reduction.cu --kernel reduce_strided --grid 4096 --block 256 --dynamic-smem 1024 --arg n=1048576
// warpscope analyze examples/reduction.cu --kernel reduce_sequential --grid 4096 --block 256 --dynamic-smem 1024 --arg n=1048576
//
// Allocations used for tests/data/h100/examples.csv: in n floats, out gridDim.x floats;
// dynamic shared memory 1024 bytes per block.

__global__ void reduce_interleaved(const float* in, float* out, int n)
{
    extern __shared__ float sdata[];
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    sdata[tid] = (i < n) ? in[i] : 0.0f;
    __syncthreads();

    for (unsigned int s = 1; s < blockDim.x; s *= 2) {
        if (tid % (2 * s) == 0) {
            sdata[tid] += sdata[tid + s];
        }
        __syncthreads();
    }
    if (tid == 0) out[blockIdx.x] = sdata[0];
}

__global__ void reduce_strided(const float* in, float* out, int n)
{
    extern __shared__ float sdata[];
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    sdata[tid] = (i < n) ? in[i] : 0.0f;
    __syncthreads();

    for (unsigned int s = 1; s < blockDim.x; s *= 2) {
        int index = 2 * s * tid;
        if (index < blockDim.x) {
            sdata[index] += sdata[index + s];
        }
        __syncthreads();
    }
    if (tid == 0) out[blockIdx.x] = sdata[0];
}

__global__ void reduce_sequential(const float* in, float* out, int n)
{
    extern __shared__ float sdata[];
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    sdata[tid] = (i < n) ? in[i] : 0.0f;
    __syncthreads();

    for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) {
            sdata[tid] += sdata[tid + s];
        }
        __syncthreads();
    }
    if (tid == 0) out[blockIdx.x] = sdata[0];
}
