// spill.cu -- a kernel whose __launch_bounds__ (1024 threads, 2 blocks per SM: 32 registers)
// make ptxas spill: 40 values live at once. The spill stores and refill loads (LDL/STL) are
// not in the PTX; warpscope's SASS check ties them to their PTX lines and runs them as local
// accesses (tests/data/h100/verify/sass.out measures them on the H100).
//
// Launch: spill<<<4, 1024>>>(in, out, 4096); in = 40 * 4096 floats, out = 4096 floats.
__global__ void __launch_bounds__(1024, 2) spill(const float* in, float* out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v[40];
#pragma unroll
    for (int k = 0; k < 40; k++) v[k] = in[i + k * n];
    float s = 0.0f;
#pragma unroll
    for (int k = 0; k < 40; k++) s += v[k] * v[(k * 7) % 40] + v[(k * 13) % 40];
    out[i] = s;
}
