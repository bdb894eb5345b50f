// gather.cu -- kernels whose addresses come from the data they read (analyze with --init).
//
//   gather    : out[i] = in[idx[i]]. idx = iota: a warp reads 32 consecutive floats (CC 9.0:
//               4 sectors per request); idx = zero: every lane reads in[0] (1 sector); idx a
//               permutation i -> (i % 32) * 32 + i / 32 (stride 32): 32 sectors per request.
//   histogram : atomicAdd(&bins[data[i] % nbins], 1): where the atomics land depends on data.

__global__ void gather(float* out, const float* in, const int* idx, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = in[idx[i]];
}

__global__ void histogram(const int* data, unsigned int* bins, int n, int nbins)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        atomicAdd(&bins[data[i] % nbins], 1u);
}

// stride_from_memory : out[i] = in[i * stride[0]]: the stride is data (stride = const:2 -> a
//                      warp covers 256 bytes: 8 sectors per request on CC 9.0).
__global__ void stride_from_memory(float* out, const float* in, const int* stride, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = in[i * stride[0]];
}
