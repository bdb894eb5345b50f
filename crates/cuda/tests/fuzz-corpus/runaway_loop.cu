__global__ void k(float* a, int n) {
  for (int j = 0; j >= 0; j += 0) a[threadIdx.x] += 1.0f;
}
