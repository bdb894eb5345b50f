__constant__ float c[1000000000];
__global__ void k(float* a) { a[threadIdx.x] = c[threadIdx.x]; }
