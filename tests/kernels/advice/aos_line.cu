// Two fields of one structure read on one line: two loads with one cause (an array of
// structures), which the advice names once, ×2.
//
// warpscope analyze tests/kernels/advice/aos_line.cu --kernel sum_xy --grid 4 --block 128 --arg n=512

struct Particle {
    float x, y, z, w;
};

__global__ void sum_xy(const Particle* p, float* out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = p[i].x + p[i].y;
}
