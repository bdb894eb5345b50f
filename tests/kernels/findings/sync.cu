// Kernels for tests/findings.rs: barriers that only part of a block reaches (synccheck), and
// correct ones that must give no finding.

// Lanes 16-31 of every warp skip the barrier: compute-sanitizer synccheck reports
// "Barrier error detected. Divergent thread(s) in warp".
__global__ void half_warp(float *out)
{
    __shared__ float s[32];
    s[threadIdx.x] = threadIdx.x;
    if (threadIdx.x < 16)
        __syncthreads();
    out[threadIdx.x] = s[31 - threadIdx.x];
}

// With 64 threads, warp 0 reaches the barrier whole and warp 1 with lanes 0-15 only.
__global__ void second_warp(float *out)
{
    __shared__ float s[64];
    s[threadIdx.x] = threadIdx.x;
    if (threadIdx.x < 48) {
        __syncthreads();
    }
    out[threadIdx.x] = s[63 - threadIdx.x];
}

// Threads past n leave before the barrier: exited threads do not take part, so it is correct.
__global__ void early_return(float *out, int n)
{
    __shared__ float s[64];
    if (threadIdx.x >= n)
        return;
    s[threadIdx.x] = threadIdx.x;
    __syncthreads();
    out[threadIdx.x] = s[n - 1 - threadIdx.x];
}

// A tree reduction: every barrier in a loop whose trip count is uniform across the block.
__global__ void reduce(const float *in, float *out)
{
    __shared__ float s[256];
    unsigned t = threadIdx.x;
    s[t] = in[blockIdx.x * 256 + t];
    __syncthreads();
    for (unsigned k = 128; k > 0; k /= 2) {
        if (t < k)
            s[t] += s[t + k];
        __syncthreads();
    }
    if (t == 0)
        out[blockIdx.x] = s[0];
}
