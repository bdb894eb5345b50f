// Host driver for tests/kernels/modern/tma.cu on the H100: encodes the tensor map with
// cuTensorMapEncodeTiled and launches tma_tile over an int tensor of W x H, the grid covering
// it with 32 x 64 boxes (W not a multiple of 32: the last column of boxes is partly out of
// bounds). Checks every element was incremented once. Usage: tma_driver W H
#include <cstdio>
#include <cstdlib>
#include <vector>
#include "../../../tests/kernels/modern/tma.cu"

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("CUDA error %s at %d\n", cudaGetErrorString(e), __LINE__); return 1; } } while (0)

int main(int argc, char **argv) {
    int W = argc > 1 ? atoi(argv[1]) : 128, H = argc > 2 ? atoi(argv[2]) : 256;
    size_t pitch = ((size_t)W * 4 + 31) / 32 * 32;  // row stride: a multiple of 16 (32 here)
    std::vector<int> host(pitch / 4 * H);
    for (size_t i = 0; i < host.size(); ++i) host[i] = (int)(i * 2654435761u % 1000);
    int *d;
    CK(cudaMalloc(&d, host.size() * 4));
    CK(cudaMemcpy(d, host.data(), host.size() * 4, cudaMemcpyHostToDevice));
    CUtensorMap map;
    cuuint64_t dims[2] = {(cuuint64_t)W, (cuuint64_t)H};
    cuuint64_t strides[1] = {pitch};
    cuuint32_t box[2] = {TILE_W, TILE_H};
    cuuint32_t estr[2] = {1, 1};
    CUresult r = cuTensorMapEncodeTiled(&map, CU_TENSOR_MAP_DATA_TYPE_INT32, 2, d, dims, strides, box, estr,
        CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_NONE,
        CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS) { printf("cuTensorMapEncodeTiled failed: %d\n", (int)r); return 1; }
    dim3 grid((W + TILE_W - 1) / TILE_W, (H + TILE_H - 1) / TILE_H);
    tma_tile<<<grid, TILE_W>>>(map);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    std::vector<int> out(host.size());
    CK(cudaMemcpy(out.data(), d, out.size() * 4, cudaMemcpyDeviceToHost));
    size_t bad = 0;
    for (int y = 0; y < H; ++y)
        for (int x = 0; x < W; ++x) {
            size_t i = y * (pitch / 4) + x;
            if (out[i] != host[i] + 1) ++bad;
        }
    printf("tma_tile W=%d H=%d pitch=%zu grid=(%u,%u): %zu wrong elements\n", W, H, pitch, grid.x, grid.y, bad);
    return bad != 0;
}
