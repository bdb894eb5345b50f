// Host driver for tests/kernels/modern/cluster.cu on an H100: launches neighbour_sum on a grid
// of 4 blocks of 256 threads (clusters of 2 from the kernel's __cluster_dims__), with
// in[i] = i, and checks out[i] = in[i] + in[i ^ 256] (the neighbour block's word of the same
// thread index). Prints "ok" or the first wrong element.
#include <cstdio>
#include "../../../tests/kernels/modern/cluster.cu"

int main() {
    const int blocks = 4, threads = 256, n = blocks * threads;
    int *in, *out;
    cudaMallocManaged(&in, n * sizeof(int));
    cudaMallocManaged(&out, n * sizeof(int));
    for (int i = 0; i < n; i++) in[i] = i;
    neighbour_sum<<<blocks, threads>>>(in, out);
    cudaError_t e = cudaDeviceSynchronize();
    if (e != cudaSuccess) {
        printf("launch failed: %s\n", cudaGetErrorString(e));
        return 1;
    }
    for (int i = 0; i < n; i++) {
        int want = in[i] + in[i ^ threads];
        if (out[i] != want) {
            printf("out[%d] = %d, want %d\n", i, out[i], want);
            return 1;
        }
    }
    printf("ok: neighbour_sum grid %d block %d, cluster 2x1x1\n", blocks, threads);
    return 0;
}
