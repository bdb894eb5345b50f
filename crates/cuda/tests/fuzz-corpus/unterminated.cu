__global__ void k(float* a) { /* never closed
  a[threadIdx.x] = "x;
