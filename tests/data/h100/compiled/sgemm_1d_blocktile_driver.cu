// Host driver for tests/kernels/compiled/sgemm_1d_blocktile.cu, run under Nsight Compute by
// tests/data/h100/compiled/sgemm_1d_blocktile.sh (the pattern of scripts/h100/compiled/driver.cu):
// M = N = K = 1024, grid (N/64, M/64), block 512, launched REPS times (default 2); A[x] = (x % 17)/16,
// B[x] = (x % 13)/16, C zeroed before every launch; every CUDA call and launch is checked, and 64
// entries of C are compared with a double-precision product on the host.
//
// Build:  nvcc -O3 -arch=sm_90 -lineinfo -D NDEBUG -o sgemm tests/data/h100/compiled/sgemm_1d_blocktile_driver.cu
// Run:    ./sgemm [REPS]

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cuda_runtime.h>

#include "../../../kernels/compiled/sgemm_1d_blocktile.cu"

#define CK(call)                                                                             \
    do {                                                                                     \
        cudaError_t e_ = (call);                                                             \
        if (e_ != cudaSuccess) {                                                             \
            fprintf(stderr, "CUDA error '%s' (%d) at %s:%d: %s\n", cudaGetErrorString(e_),    \
                    (int)e_, __FILE__, __LINE__, #call);                                     \
            exit(1);                                                                         \
        }                                                                                    \
    } while (0)

int main(int argc, char** argv)
{
    const int reps = argc > 1 ? atoi(argv[1]) : 2;
    const int M = 1024, N = 1024, K = 1024;
    std::vector<float> hA((size_t)M * K), hB((size_t)K * N), hC((size_t)M * N);
    for (size_t x = 0; x < hA.size(); x++) hA[x] = (float)(x % 17) / 16.0f;
    for (size_t x = 0; x < hB.size(); x++) hB[x] = (float)(x % 13) / 16.0f;
    float *A, *B, *C;
    CK(cudaMalloc(&A, hA.size() * sizeof(float)));
    CK(cudaMalloc(&B, hB.size() * sizeof(float)));
    CK(cudaMalloc(&C, hC.size() * sizeof(float)));
    CK(cudaMemcpy(A, hA.data(), hA.size() * sizeof(float), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(B, hB.data(), hB.size() * sizeof(float), cudaMemcpyHostToDevice));
    for (int r = 0; r < reps; r++) {
        CK(cudaMemset(C, 0, hC.size() * sizeof(float)));
        sgemm_1d_blocktile<<<dim3(N / SG_BN, M / SG_BM, 1), dim3(SG_BM * SG_BK, 1, 1)>>>(M, N, K, 1.0f, A, B,
                                                                                        0.0f, C);
        CK(cudaGetLastError());
        CK(cudaDeviceSynchronize());
    }
    CK(cudaMemcpy(hC.data(), C, hC.size() * sizeof(float), cudaMemcpyDeviceToHost));
    double worst = 0;
    for (int s = 0; s < 64; s++) {
        int i = (s * 97) % M, j = (s * 389 + 13) % N;
        double ref = 0;
        for (int k = 0; k < K; k++) ref += (double)hA[(size_t)i * K + k] * hB[(size_t)k * N + j];
        worst = fmax(worst, fabs(hC[(size_t)i * N + j] - ref) / fabs(ref));
    }
    printf("sgemm_1d_blocktile M=N=K=%d, %d launches: worst relative error of 64 entries %.3g\n", M, reps,
           worst);
    return worst < 1e-4 ? 0 : 1;
}
