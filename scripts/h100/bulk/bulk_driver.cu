// Host driver for tests/kernels/modern/bulk_cluster.cu on an H100: launches bulk_multicast,
// bulk_exchange and async_stores once each on a grid of 4 blocks of 256 threads (clusters of
// 2 from the kernels' __cluster_dims__), with in[i] = 3·i + 1, and checks every result the
// kernels' comment promises. Prints "ok: KERNEL" for each, or the first wrong element.
#include <cstdio>
#include "../../../tests/kernels/modern/bulk_cluster.cu"

static int check(const char* what, unsigned got, unsigned want, int i) {
    if (got != want) {
        printf("%s[%d] = %u, want %u\n", what, i, got, want);
        return 1;
    }
    return 0;
}

static int sync(const char* kernel) {
    cudaError_t e = cudaDeviceSynchronize();
    if (e != cudaSuccess) {
        printf("%s: launch failed: %s\n", kernel, cudaGetErrorString(e));
        return 1;
    }
    return 0;
}

int main() {
    const int blocks = 4, n = blocks * N;
    unsigned *in, *out, *sums, *totals;
    cudaMallocManaged(&in, n * sizeof(unsigned));
    cudaMallocManaged(&out, n * sizeof(unsigned));
    cudaMallocManaged(&sums, N * sizeof(unsigned));
    cudaMallocManaged(&totals, blocks * sizeof(unsigned));
    for (int i = 0; i < n; i++) in[i] = 3 * i + 1;

    // bulk_multicast: both blocks of cluster c hold in[c·N ..]; out = buf[t] + buf[(t+1)%N].
    bulk_multicast<<<blocks, N>>>(in, out);
    if (sync("bulk_multicast")) return 1;
    for (int i = 0; i < n; i++) {
        int c = i / N / 2, t = i % N;
        if (check("bulk_multicast out", out[i], in[c * N + t] + in[c * N + (t + 1) % N], i)) return 1;
    }
    printf("ok: bulk_multicast\n");

    // bulk_exchange: out[i] = the neighbour's in; sums[t] = Σ_b in[b·N + t].
    cudaMemset(sums, 0, N * sizeof(unsigned));
    bulk_exchange<<<blocks, N>>>(in, out, sums);
    if (sync("bulk_exchange")) return 1;
    for (int i = 0; i < n; i++) {
        int b = i / N, t = i % N;
        if (check("bulk_exchange out", out[i], in[(b ^ 1) * N + t], i)) return 1;
    }
    for (int t = 0; t < N; t++) {
        unsigned want = 0;
        for (int b = 0; b < blocks; b++) want += in[b * N + t];
        if (check("bulk_exchange sums", sums[t], want, t)) return 1;
    }
    printf("ok: bulk_exchange\n");

    // async_stores: out[i] = 2·in[neighbour's i] + t; totals[b] = Σ the neighbour's in.
    async_stores<<<blocks, N>>>(in, out, totals);
    if (sync("async_stores")) return 1;
    for (int i = 0; i < n; i++) {
        int b = i / N, t = i % N;
        if (check("async_stores out", out[i], 2 * in[(b ^ 1) * N + t] + t, i)) return 1;
    }
    for (int b = 0; b < blocks; b++) {
        unsigned want = 0;
        for (int t = 0; t < N; t++) want += in[(b ^ 1) * N + t];
        if (check("async_stores totals", totals[b], want, b)) return 1;
    }
    printf("ok: async_stores\n");
    return 0;
}
