__global__ void k(float* a) { floatß x = 1; a[0] = x; }
