__global__ void k(float* a) { a[threadIdx.x] = 1.0f; }
__global__ void k(double* a) { a[threadIdx.x] = 1.0; }
