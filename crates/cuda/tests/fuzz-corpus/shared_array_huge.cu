__global__ void k(float* a) {
  __shared__ float s[4611686018427387904];
  a[0] = s[threadIdx.x];
}
