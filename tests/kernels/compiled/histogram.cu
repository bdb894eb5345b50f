// histogram.cu -- 256-bin byte histogram: a shared atomicAdd per element into a per-block
// histogram, then one global atomicAdd per bin per block.
//
// Launch (n = 1 << 22, grid-stride loop: 16 elements per thread):
//   histogram256<<<1024, 256>>>(data, 4194304, hist)
// Buffers (cudaMalloc): data = n bytes, hist = 256 unsigned ints (zeroed before the launch).
// Data: data[x] = (unsigned char)((x * 7) % 256), so the 32 lanes of a warp hit 32 different bins
//   (7 is odd: x*7 mod 32 differs for 32 consecutive x -> 32 different banks too).
// Neither atomic's return value is used (the global one may compile to RED).

__global__ void histogram256(const unsigned char* data, int n, unsigned int* hist)
{
    __shared__ unsigned int sh[256];
    for (int b = threadIdx.x; b < 256; b += blockDim.x)
        sh[b] = 0;
    __syncthreads();
    for (int x = blockIdx.x * blockDim.x + threadIdx.x; x < n; x += gridDim.x * blockDim.x)
        atomicAdd(&sh[data[x]], 1u);
    __syncthreads();
    for (int b = threadIdx.x; b < 256; b += blockDim.x)
        atomicAdd(&hist[b], sh[b]);
}
