// A load nvcc may sink to its use: moved_loc.ptx is this kernel's PTX (nvcc 13, sm_90,
// -lineinfo) with the load's `.loc` set to the store's line, as nvcc sometimes attributes it.
__global__ void moved(const float* a, float* b, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = a[i];
    if (i < n)
        b[i] = 2.0f * v;
}
