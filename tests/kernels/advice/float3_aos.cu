// A particle update on an array of float3: each thread reads and writes its own element.
__global__ void move(float3 *pos, const float3 *vel, float dt, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float3 p = pos[i];
        float3 v = vel[i];
        p.x += v.x * dt;
        p.y += v.y * dt;
        p.z += v.z * dt;
        pos[i] = p;
    }
}
