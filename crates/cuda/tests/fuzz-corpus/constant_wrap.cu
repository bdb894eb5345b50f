__constant__ float c[64 - 10000000000000000000];
__global__ void k(float* a) { a[0] = c[0]; }
