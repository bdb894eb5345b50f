// A 32×32 tile of doubles in shared memory, written by rows and read down its columns (the
// transpose's pattern, blocks of 32×8 threads), with each row padded by one element as for
// floats ([32][33]) and unpadded ([32][32]). On 3.x in the default 4-byte bank mode the
// padded column read is still 2-way: lane l's 8 bytes are words 66·l and 66·l + 1, on banks
// 2·l and 2·l + 1 (mod 32), which lanes l and l + 16 share. In 8-byte mode
// (cudaDeviceSetSharedMemConfig(cudaSharedMemBankSizeEightByte)) lane l's 64-bit word is
// unit 33·l, on bank l: one pass. From 5.x on a double is served per half-warp, and the
// padded read takes the 2 wavefronts any double access takes.
//
// warpscope analyze tests/kernels/advice/double_tile.cu --kernel column_padded --grid 4 --block 32,8 --cc 3.5,9.0
// warpscope analyze tests/kernels/advice/double_tile.cu --kernel column_unpadded --grid 4 --block 32,8 --cc 3.5,9.0

__global__ void column_padded(const double* in, double* out)
{
    __shared__ double tile[32][33];
    int base = blockIdx.x * 1024 + threadIdx.x;
    for (int j = 0; j < 32; j += 8)
        tile[threadIdx.y + j][threadIdx.x] = in[base + (threadIdx.y + j) * 32];
    __syncthreads();
    for (int j = 0; j < 32; j += 8)
        out[base + (threadIdx.y + j) * 32] = tile[threadIdx.x][threadIdx.y + j];
}

__global__ void column_unpadded(const double* in, double* out)
{
    __shared__ double tile[32][32];
    int base = blockIdx.x * 1024 + threadIdx.x;
    for (int j = 0; j < 32; j += 8)
        tile[threadIdx.y + j][threadIdx.x] = in[base + (threadIdx.y + j) * 32];
    __syncthreads();
    for (int j = 0; j < 32; j += 8)
        out[base + (threadIdx.y + j) * 32] = tile[threadIdx.x][threadIdx.y + j];
}
