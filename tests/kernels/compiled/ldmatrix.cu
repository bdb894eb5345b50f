// ldmatrix / stmatrix (PTX ISA §9.7.14.5.15-16) on shared tiles of 32 rows of 8 halves, the
// rows `pitch` halves apart: pitch 8 packs the rows (512 contiguous bytes), pitch 64 puts every
// row on the same 4 banks. One warp per block, grid 1024; each kernel launched with pitch 8
// and 64. Measured by scripts/h100/compiled/ldmatrix.sh; tested in tests/h100_compiled.rs.
//   nvcc -O3 -arch=sm_90 -lineinfo ldmatrix.cu -o ldmatrix && ./ldmatrix
#include <cstdio>

#define TILE (32 * 64)

__device__ unsigned row_address(const unsigned short* tile, int pitch)
{
    return (unsigned)__cvta_generic_to_shared(tile + (threadIdx.x % 32) * pitch);
}

__global__ void ldsm_x1(const unsigned short* in, unsigned* out, int pitch)
{
    __shared__ __align__(16) unsigned short tile[TILE];
    for (int k = threadIdx.x; k < TILE; k += blockDim.x) tile[k] = in[k];
    __syncthreads();
    unsigned r0;
    asm volatile("ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%0}, [%1];" : "=r"(r0) : "r"(row_address(tile, pitch)));
    out[blockIdx.x * blockDim.x + threadIdx.x] = r0;
}

__global__ void ldsm_x2(const unsigned short* in, unsigned* out, int pitch)
{
    __shared__ __align__(16) unsigned short tile[TILE];
    for (int k = threadIdx.x; k < TILE; k += blockDim.x) tile[k] = in[k];
    __syncthreads();
    unsigned r0, r1;
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0, %1}, [%2];" : "=r"(r0), "=r"(r1) : "r"(row_address(tile, pitch)));
    out[blockIdx.x * blockDim.x + threadIdx.x] = r0 ^ r1;
}

__global__ void ldsm_x4(const unsigned short* in, unsigned* out, int pitch)
{
    __shared__ __align__(16) unsigned short tile[TILE];
    for (int k = threadIdx.x; k < TILE; k += blockDim.x) tile[k] = in[k];
    __syncthreads();
    unsigned r0, r1, r2, r3;
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
                 : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3) : "r"(row_address(tile, pitch)));
    out[blockIdx.x * blockDim.x + threadIdx.x] = r0 ^ r1 ^ r2 ^ r3;
}

__global__ void ldsm_x4_trans(const unsigned short* in, unsigned* out, int pitch)
{
    __shared__ __align__(16) unsigned short tile[TILE];
    for (int k = threadIdx.x; k < TILE; k += blockDim.x) tile[k] = in[k];
    __syncthreads();
    unsigned r0, r1, r2, r3;
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];"
                 : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3) : "r"(row_address(tile, pitch)));
    out[blockIdx.x * blockDim.x + threadIdx.x] = r0 ^ r1 ^ r2 ^ r3;
}

__global__ void stsm_x4(const unsigned* in, unsigned short* out, int pitch)
{
    __shared__ __align__(16) unsigned short tile[TILE];
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned r0 = in[i], r1 = r0 + 1, r2 = r0 + 2, r3 = r0 + 3;
    asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};"
                 :: "r"(row_address(tile, pitch)), "r"(r0), "r"(r1), "r"(r2), "r"(r3) : "memory");
    __syncthreads();
    for (int k = threadIdx.x; k < TILE; k += blockDim.x) out[k] = tile[k];
}

int main()
{
    const int grid = 1024, block = 32;
    unsigned short* h;
    unsigned* u;
    cudaMalloc(&h, TILE * sizeof(unsigned short));
    cudaMalloc(&u, grid * block * sizeof(unsigned));
    cudaMemset(h, 0, TILE * sizeof(unsigned short));
    cudaMemset(u, 0, grid * block * sizeof(unsigned));
    for (int pitch : {8, 64}) {
        ldsm_x1<<<grid, block>>>(h, u, pitch);
        ldsm_x2<<<grid, block>>>(h, u, pitch);
        ldsm_x4<<<grid, block>>>(h, u, pitch);
        ldsm_x4_trans<<<grid, block>>>(h, u, pitch);
        stsm_x4<<<grid, block>>>(u, h, pitch);
    }
    cudaError_t e = cudaDeviceSynchronize();
    printf("%s\n", cudaGetErrorString(e));
    return e != cudaSuccess;
}
