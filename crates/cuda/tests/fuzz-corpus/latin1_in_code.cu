__global__ void k(float* a, const float* b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  a[ié] = b[i];
}
