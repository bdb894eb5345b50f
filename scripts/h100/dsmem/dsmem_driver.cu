// Host driver for tests/kernels/modern/dsmem_probe.cu on an H100 (scripts/h100/dsmem/run.sh):
// launches every probe on a grid of 2 blocks of 128 threads (one cluster of 2) and checks
// each launch's status. Prints "ok: NAME" per kernel.
#include <cstdio>
#include "../../../tests/kernels/modern/dsmem_probe.cu"

int main() {
    int* out;
    if (cudaMalloc(&out, 256 * sizeof(int)) != cudaSuccess) return 1;
    cudaError_t e;
#define RUN(k) k<<<2, 128>>>(out); e = cudaDeviceSynchronize(); \
    if (e != cudaSuccess) { printf("%s: %s\n", #k, cudaGetErrorString(e)); return 1; } \
    printf("ok: %s\n", #k);
    RUN(ld4_consec)
    RUN(ld4_reverse)
    RUN(ld4_stride2)
    RUN(ld4_stride4)
    RUN(ld4_stride8)
    RUN(ld4_stride16)
    RUN(ld4_stride32)
    RUN(ld4_stride33)
    RUN(ld4_stride64)
    RUN(ld4_bcast)
    RUN(ld4_quad)
    RUN(ld4_pairs8)
    RUN(ld4_offset1)
    RUN(ld4_half)
    RUN(ld1_consec)
    RUN(ld2_consec)
    RUN(ld8_consec)
    RUN(ld8_stride2)
    RUN(ld8_stride4)
    RUN(ld8_stride16)
    RUN(ld16_consec)
    RUN(ld16_stride2)
    RUN(ld16_stride8)
    RUN(st4_consec)
    RUN(st4_stride2)
    RUN(st4_stride8)
    RUN(st4_stride32)
    RUN(st4_bcast)
    RUN(st8_consec)
    RUN(st16_consec)
    RUN(st16_stride2)
    RUN(atom4_consec)
    RUN(atom4_stride8)
    RUN(atom4_same)
    return 0;
}
