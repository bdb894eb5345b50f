#define T 32
__global__ void k(float* out, const float* in, int n) {
  __shared__ float tile[T][T + 1];
  int x = blockIdx.x * T + threadIdx.x;
  tile[threadIdx.x % T][threadIdx.x / T] = in[x % n];
  __syncthreads();
  out[x % n] = tile[threadIdx.x / T][threadIdx.x % T];
}
