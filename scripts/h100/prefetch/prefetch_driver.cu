// Host driver for tests/kernels/modern/prefetch.cu on the H100: the launches
// scripts/h100/prefetch/run.sh measures, in this order (one block = 32 threads):
//   1. bulk_prefetch   grid 8, 4,096 bytes a block from a 256-byte aligned buffer
//   2. bulk_prefetch   grid 8, 4,096 bytes a block from 16 bytes past it
//   3. tensor_prefetch fp16 256 x 256 (pitch 512), 64 x 64 boxes, grid (4,4): every box inside
//   4. tensor_prefetch fp16 120 x 200 (pitch 240), 64 x 64 boxes, grid (2,4): the right boxes
//      56 of 64 columns inside, the bottom ones 8 of 64 rows
//   5. tensor_load     as 4 (the boxes loaded into shared memory)
//   6. tensor_load     as 3
// and checks what tensor_load read (element (1,1) of each box).
#include <cstdio>
#include <cstdlib>
#include <vector>
#include "../../../tests/kernels/modern/prefetch.cu"

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("CUDA error %s at %d\n", cudaGetErrorString(e), __LINE__); exit(1); } } while (0)

static CUtensorMap encode(void *base, int w, int h, size_t pitch) {
    CUtensorMap map;
    cuuint64_t dims[2] = {(cuuint64_t)w, (cuuint64_t)h};
    cuuint64_t strides[1] = {pitch};
    cuuint32_t box[2] = {BOX, BOX};
    cuuint32_t estr[2] = {1, 1};
    CUresult r = cuTensorMapEncodeTiled(&map, CU_TENSOR_MAP_DATA_TYPE_UINT16, 2, base, dims, strides, box, estr,
        CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_NONE,
        CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS) { printf("cuTensorMapEncodeTiled failed: %d\n", (int)r); exit(1); }
    return map;
}

static int load_check(unsigned short *d, const std::vector<unsigned short> &host, int w, int h, size_t pitch) {
    CUtensorMap map = encode(d, w, h, pitch);
    dim3 grid((w + BOX - 1) / BOX, (h + BOX - 1) / BOX);
    unsigned short *out;
    CK(cudaMalloc(&out, grid.x * grid.y * 2));
    tensor_load<<<grid, 32>>>(map, out);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    std::vector<unsigned short> got(grid.x * grid.y);
    CK(cudaMemcpy(got.data(), out, got.size() * 2, cudaMemcpyDeviceToHost));
    int bad = 0;
    for (unsigned by = 0; by < grid.y; ++by)
        for (unsigned bx = 0; bx < grid.x; ++bx) {
            size_t i = (by * BOX + 1) * (pitch / 2) + bx * BOX + 1;
            if (got[by * grid.x + bx] != host[i]) ++bad;
        }
    printf("tensor_load %dx%d pitch %zu grid (%u,%u): %d wrong boxes\n", w, h, pitch, grid.x, grid.y, bad);
    CK(cudaFree(out));
    return bad;
}

int main() {
    char *buf;
    CK(cudaMalloc(&buf, 64 << 10));
    CK(cudaMemset(buf, 1, 64 << 10));
    bulk_prefetch<<<8, 32>>>(buf, 4096);
    CK(cudaGetLastError());
    bulk_prefetch<<<8, 32>>>(buf + 16, 4096);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    printf("bulk_prefetch: 2 launches ran\n");
    std::vector<unsigned short> host(256 * 256);
    for (size_t i = 0; i < host.size(); ++i) host[i] = (unsigned short)(i * 2654435761u >> 7);
    unsigned short *t;
    CK(cudaMalloc(&t, host.size() * 2));
    CK(cudaMemcpy(t, host.data(), host.size() * 2, cudaMemcpyHostToDevice));
    tensor_prefetch<<<dim3(4, 4), 32>>>(encode(t, 256, 256, 512));
    CK(cudaGetLastError());
    tensor_prefetch<<<dim3(2, 4), 32>>>(encode(t, 120, 200, 240));
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    printf("tensor_prefetch: 2 launches ran\n");
    int bad = load_check(t, host, 120, 200, 240) + load_check(t, host, 256, 256, 512);
    printf(bad ? "WRONG\n" : "ok: prefetch_driver\n");
    return bad != 0;
}
