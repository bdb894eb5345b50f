__global__ void k(float* a) {
  double t[1000000000];
  a[0] = t[threadIdx.x];
}
