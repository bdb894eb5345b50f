// Kernels for tests/racecheck.rs: shared-memory races (racecheck), reads of shared memory no
// thread wrote (initcheck), and their fixed versions, which must give no finding. Line
// numbers are asserted by the tests: add new kernels at the end.

// A tree reduction missing the __syncthreads() at the end of each trip: warp 0 reads at
// k = 64 and k = 32 what warps 1-3 write at k = 128 and k = 64 (RAW).
__global__ void reduce_race(const float *in, float *out)
{
    __shared__ float s[256];
    unsigned t = threadIdx.x;
    s[t] = in[blockIdx.x * 256 + t];
    __syncthreads();
    for (unsigned k = 128; k > 0; k /= 2) {
        if (t < k)
            s[t] += s[t + k];
    }
    if (t == 0)
        out[blockIdx.x] = s[0];
}

// The same with the barrier.
__global__ void reduce_fixed(const float *in, float *out)
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

// Each thread reads the other warp's element, then overwrites its own with no barrier
// between: the other warp may still be reading it (WAR).
__global__ void swap_war(float *out)
{
    __shared__ float s[64];
    unsigned t = threadIdx.x;
    s[t] = t;
    __syncthreads();
    float v = s[(t + 32) % 64];
    s[t] = 2.0f * v;
    __syncthreads();
    out[t] = s[t];
}

// The same with the barrier between the read and the write.
__global__ void swap_fixed(float *out)
{
    __shared__ float s[64];
    unsigned t = threadIdx.x;
    s[t] = t;
    __syncthreads();
    float v = s[(t + 32) % 64];
    __syncthreads();
    s[t] = 2.0f * v;
    __syncthreads();
    out[t] = s[t];
}

// Every thread writes its index into one shared word: which warp's value stays is
// undecided (WAW between the warps; lanes of one warp are one store).
__global__ void last_writer(int *out)
{
    __shared__ int winner;
    winner = threadIdx.x;
    __syncthreads();
    out[threadIdx.x] = winner;
}

// A tile loaded for only half its rows (threadIdx.y < 4 of 8), then read whole: rows 4-7
// were never written (initcheck).
__global__ void half_tile(const float *in, float *out)
{
    __shared__ float tile[8][32];
    if (threadIdx.y < 4)
        tile[threadIdx.y][threadIdx.x] = in[threadIdx.y * 32 + threadIdx.x];
    __syncthreads();
    out[threadIdx.y * 32 + threadIdx.x] = tile[7 - threadIdx.y][threadIdx.x];
}

// The tile loaded whole.
__global__ void full_tile(const float *in, float *out)
{
    __shared__ float tile[8][32];
    tile[threadIdx.y][threadIdx.x] = in[threadIdx.y * 32 + threadIdx.x];
    __syncthreads();
    out[threadIdx.y * 32 + threadIdx.x] = tile[7 - threadIdx.y][threadIdx.x];
}

// A shared counter nobody set to zero: the first atomic reads garbage (initcheck).
__global__ void count_uninit(int *out)
{
    __shared__ int count;
    atomicAdd(&count, 1);
    __syncthreads();
    if (threadIdx.x == 0)
        out[blockIdx.x] = count;
}

// The counter set first: atomics of different warps do not race with each other.
__global__ void count_fixed(int *out)
{
    __shared__ int count;
    if (threadIdx.x == 0)
        count = 0;
    __syncthreads();
    atomicAdd(&count, 1);
    __syncthreads();
    if (threadIdx.x == 0)
        out[blockIdx.x] = count;
}

// Warp 1 leaves before the barrier: exited threads do not take part in it (CC 7.0+), so
// warp 0 passes it alone; nothing is wrong.
__global__ void warp_leaves(float *out)
{
    __shared__ float s[32];
    if (threadIdx.x >= 32)
        return;
    s[threadIdx.x] = threadIdx.x;
    __syncthreads();
    out[threadIdx.x] = s[31 - threadIdx.x];
}

// Thread t stores byte t + 2: warp 0 bytes 2-33, warp 1 bytes 34-65, so the word of bytes
// 32-35 holds bytes of both warps, none of them the same: no race (byte-accurate).
__global__ void bytes_apart(char *out)
{
    __shared__ char c[128];
    c[threadIdx.x + 2] = (char)threadIdx.x;
    __syncthreads();
    out[threadIdx.x] = c[threadIdx.x + 2];
}
