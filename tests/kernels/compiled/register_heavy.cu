// register_heavy.cu -- spill.cu without __launch_bounds__: 40 values live at once fit in
// ptxas's default registers, and spill under --nvcc-flag=-maxrregcount=24 (tests/nvcc_flags.rs).
//
// Launch: spill<<<4, 1024>>>(in, out, 4096); in = 40 * 4096 floats, out = 4096 floats.
__global__ void spill(const float* in, float* out, int n)
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
