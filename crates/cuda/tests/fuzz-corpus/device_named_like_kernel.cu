__device__ float k(const float* a) { return a[0]; }
__global__ void k(float* a) { a[threadIdx.x] = 1.0f; }
