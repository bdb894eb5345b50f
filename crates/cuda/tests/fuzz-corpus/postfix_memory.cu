__global__ void k(int* a, int* b) { int i = threadIdx.x; b[i] = a[i]++; }
