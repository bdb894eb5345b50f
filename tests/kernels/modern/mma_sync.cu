// mma.sync m16n8k16 (fp16 in, fp32 accumulate) fed by ldmatrix, as Triton and CUTLASS emit
// on sm_80: one warp computes a 16x8 tile of C from shared-memory tiles of A and B.
#include <cuda_fp16.h>

__global__ void mma_tile(const half *a, const half *b, float *c, int k) {
    __shared__ __align__(16) half As[16][16];
    __shared__ __align__(16) half Bs[8][16];
    int lane = threadIdx.x;
    float d[4] = {0.f, 0.f, 0.f, 0.f};
    for (int kk = 0; kk < k; kk += 16) {
        for (int e = lane; e < 16 * 16; e += 32) As[e / 16][e % 16] = a[(e / 16) * k + kk + e % 16];
        for (int e = lane; e < 8 * 16; e += 32) Bs[e / 16][e % 16] = b[(e / 16) * k + kk + e % 16];
        __syncwarp();
        unsigned ra[4], rb[2];
        unsigned a_addr = (unsigned)__cvta_generic_to_shared(&As[lane % 16][(lane / 16) * 8]);
        unsigned b_addr = (unsigned)__cvta_generic_to_shared(&Bs[lane % 8][((lane / 8) % 2) * 8]);
        asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
                     : "=r"(ra[0]), "=r"(ra[1]), "=r"(ra[2]), "=r"(ra[3]) : "r"(a_addr));
        asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0,%1}, [%2];"
                     : "=r"(rb[0]), "=r"(rb[1]) : "r"(b_addr));
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
                     "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                     : "r"(ra[0]), "r"(ra[1]), "r"(ra[2]), "r"(ra[3]), "r"(rb[0]), "r"(rb[1]));
        __syncwarp();
    }
    int row = lane / 4, col = (lane % 4) * 2;
    c[row * 8 + col] = d[0];
    c[row * 8 + col + 1] = d[1];
    c[(row + 8) * 8 + col] = d[2];
    c[(row + 8) * 8 + col + 1] = d[3];
}
