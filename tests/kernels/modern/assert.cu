// assert() in device code: nvcc calls __assertfail when the condition fails.
#include <cassert>

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
