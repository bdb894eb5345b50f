// efficiency.cu -- the kernels of issue 19 §2: efficiency measured against the ideal of
// the access's width, and totals per memory space.
//
// stage_float4:   a float4 copy staged through shared memory. Every access is conflict
//                 free and coalesced: on CC 9.0 each shared float4 instruction takes 4
//                 wavefronts (quarter-warp phases), which is its ideal: 100 %, excess 0.
// tile_double:    a 32 x 32 tile of doubles written by rows and read back by columns, the
//                 rows padded by one element: conflict free on CC 3.x with 8-byte banks.
// transpose_smem: a transpose through an unpadded float tile: coalesced global loads and
//                 stores, a 32-way bank conflict on the shared read. Its global total is
//                 100 % efficient; the shared one is not, and the two are never mixed.
//
// warpscope analyze tests/kernels/efficiency/efficiency.cu --kernel stage_float4 --grid 32 --block 32 --cc 3.5,9.0
// warpscope analyze tests/kernels/efficiency/efficiency.cu --kernel tile_double --grid 1 --block 32,32 --cc 3.5 --smem-bank-size 8
// warpscope analyze tests/kernels/efficiency/efficiency.cu --kernel transpose_smem --grid 1 --block 32,32 --cc 9.0

__global__ void stage_float4(const float4* in, float4* out)
{
    __shared__ float4 tile[32];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    tile[threadIdx.x] = in[i];
    __syncthreads();
    out[i] = tile[threadIdx.x];
}

__global__ void tile_double(const double* in, double* out)
{
    __shared__ double t[32][33];
    t[threadIdx.y][threadIdx.x] = in[threadIdx.y * 32 + threadIdx.x];
    __syncthreads();
    out[threadIdx.y * 32 + threadIdx.x] = t[threadIdx.x][threadIdx.y];
}

__global__ void transpose_smem(const float* in, float* out)
{
    __shared__ float t[32][32];
    t[threadIdx.y][threadIdx.x] = in[threadIdx.y * 32 + threadIdx.x];
    __syncthreads();
    out[threadIdx.y * 32 + threadIdx.x] = t[threadIdx.x][threadIdx.y];
}
