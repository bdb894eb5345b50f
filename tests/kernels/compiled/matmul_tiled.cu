// matmul_tiled.cu -- shared-memory tiled matrix product C = A * B, 16 x 16 tiles (row-major floats).
//
// Launch (M = N = K = 512):
//   matmul_rows<<<dim3(32, 32, 1), dim3(16, 16, 1)>>>(512, 512, 512, A, B, C)
//   matmul_cols<<<dim3(32, 32, 1), dim3(16, 16, 1)>>>(512, 512, 512, A, B, C)
// Buffers (cudaMalloc): A = M*K, B = K*N, C = M*N floats.
// Data: A[x] = (x % 17) / 16, B[x] = (x % 13) / 16, C zeroed. Sizes are multiples of 16 (no bounds checks).
//
// matmul_rows: the usual layout, threadIdx.x indexes the column:
//   row = blockIdx.y*16 + threadIdx.y, col = blockIdx.x*16 + threadIdx.x
// matmul_cols: threadIdx.x walks rows:
//   row = blockIdx.y*16 + threadIdx.x, col = blockIdx.x*16 + threadIdx.y
//   (global loads of A and stores of C are strided by K / N floats across a warp; As[threadIdx.x][kk]
//   is read with a 16-word stride across the warp: bank conflicts).

#define MT_TILE 16

__global__ void matmul_rows(int m, int n, int k, const float* A, const float* B, float* C)
{
    __shared__ float As[MT_TILE][MT_TILE];
    __shared__ float Bs[MT_TILE][MT_TILE];
    int row = blockIdx.y * MT_TILE + threadIdx.y;
    int col = blockIdx.x * MT_TILE + threadIdx.x;
    float acc = 0.0f;
    for (int t = 0; t < k; t += MT_TILE) {
        As[threadIdx.y][threadIdx.x] = A[row * k + t + threadIdx.x];
        Bs[threadIdx.y][threadIdx.x] = B[(t + threadIdx.y) * n + col];
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < MT_TILE; ++kk)
            acc += As[threadIdx.y][kk] * Bs[kk][threadIdx.x];
        __syncthreads();
    }
    C[row * n + col] = acc;
}

__global__ void matmul_cols(int m, int n, int k, const float* A, const float* B, float* C)
{
    __shared__ float As[MT_TILE][MT_TILE];
    __shared__ float Bs[MT_TILE][MT_TILE];
    int row = blockIdx.y * MT_TILE + threadIdx.x;
    int col = blockIdx.x * MT_TILE + threadIdx.y;
    float acc = 0.0f;
    for (int t = 0; t < k; t += MT_TILE) {
        As[threadIdx.x][threadIdx.y] = A[row * k + t + threadIdx.y];
        Bs[threadIdx.x][threadIdx.y] = B[(t + threadIdx.x) * n + col];
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < MT_TILE; ++kk)
            acc += As[threadIdx.x][kk] * Bs[kk][threadIdx.y];
        __syncthreads();
    }
    C[row * n + col] = acc;
}
