// assert() in device code: nvcc calls __assertfail when the condition fails. NVRTC (which
// `warpscope run`/`verify` compile with) has no <cassert>: the same macro, written out.
#ifdef __CUDACC_RTC__
extern "C" __device__ void __assertfail(const char *, const char *, unsigned, const char *, decltype(sizeof(0)));
#define assert(e) ((e) ? (void)0 : __assertfail(#e, __FILE__, __LINE__, __func__, 1))
#else
#include <cassert>
#endif

__global__ void checked_copy(const float *in, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    assert(i < n);
    out[i] = in[i];
}

// Fires for the thread whose index equals `bad`.
__global__ void checked_index(const int *in, int *out, int bad) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    assert(i != bad);
    out[i] = in[i] + 1;
}
