// The TMA's global reads of one 64 x 64 fp16 box (128-byte rows) on the H100, for box rows
// that are not 32-byte aligned, straddle 128-byte lines, or reach past the tensor: for each
// case below (W x H elements, row pitch P bytes, the tensor's first byte `off` bytes past a
// 1-KiB aligned buffer, the box at (x, y)), tensor_load_at then tensor_prefetch_at, one
// block each, in this order (ncu's launch IDs 2k and 2k + 1). Checks the loaded element.
#include <cstdio>
#include <cstdlib>
#include <vector>
#include "../../../tests/kernels/modern/prefetch.cu"

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("CUDA error %s at %d\n", cudaGetErrorString(e), __LINE__); exit(1); } } while (0)

struct Case { const char *name; int w, h, pitch, off, x, y; };
static const Case CASES[] = {
    {"aligned", 64, 64, 128, 0, 0, 0},
    {"pitch144", 64, 64, 144, 0, 0, 0},
    {"off16", 64, 64, 128, 16, 0, 0},
    {"off32", 64, 64, 128, 32, 0, 0},
    {"off64", 64, 64, 128, 64, 0, 0},
    {"inner56", 56, 64, 128, 0, 0, 0},
    {"inner56_off16", 56, 64, 128, 16, 0, 0},
    {"inner8", 8, 64, 128, 0, 0, 0},
    {"outer8", 64, 8, 128, 0, 0, 0},
    {"outer8_pitch144", 64, 8, 144, 0, 0, 0},
    {"t120x200_box00", 120, 200, 240, 0, 0, 0},
    {"t120x200_box10", 120, 200, 240, 0, 64, 0},
    {"t120x200_box03", 120, 200, 240, 0, 0, 192},
    {"t120x200_box13", 120, 200, 240, 0, 64, 192},
    {"x_neg16", 64, 64, 128, 0, -16, 0},
    {"y_neg8", 64, 64, 128, 0, 0, -8},
};

int main() {
    const size_t bytes = 1 << 20;
    std::vector<unsigned short> host(bytes / 2);
    for (size_t i = 0; i < host.size(); ++i) host[i] = (unsigned short)(i * 2654435761u >> 9);
    char *buf;
    CK(cudaMalloc(&buf, bytes));
    CK(cudaMemcpy(buf, host.data(), bytes, cudaMemcpyHostToDevice));
    unsigned short *out;
    CK(cudaMalloc(&out, 2));
    int bad = 0;
    for (const Case &c : CASES) {
        CUtensorMap map;
        cuuint64_t dims[2] = {(cuuint64_t)c.w, (cuuint64_t)c.h};
        cuuint64_t strides[1] = {(cuuint64_t)c.pitch};
        cuuint32_t box[2] = {BOX, BOX};
        cuuint32_t estr[2] = {1, 1};
        CUresult r = cuTensorMapEncodeTiled(&map, CU_TENSOR_MAP_DATA_TYPE_UINT16, 2, buf + c.off, dims, strides, box, estr,
            CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_NONE,
            CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
        if (r != CUDA_SUCCESS) { printf("%s: cuTensorMapEncodeTiled failed: %d\n", c.name, (int)r); return 1; }
        CK(cudaMemset(out, 0xff, 2));
        tensor_load_at<<<1, 32>>>(map, c.x, c.y, out);
        CK(cudaGetLastError());
        tensor_prefetch_at<<<1, 32>>>(map, c.x, c.y);
        CK(cudaGetLastError());
        CK(cudaDeviceSynchronize());
        unsigned short got;
        CK(cudaMemcpy(&got, out, 2, cudaMemcpyDeviceToHost));
        int ex = c.x + 1, ey = c.y + 1;
        bool inside = ex >= 0 && ex < c.w && ey >= 0 && ey < c.h;
        unsigned short want = inside ? host[(c.off + (size_t)ey * c.pitch) / 2 + ex] : 0;
        bool ok = got == want;
        bad += !ok;
        printf("%s W=%d H=%d pitch=%d off=%d box=(%d,%d): %s\n", c.name, c.w, c.h, c.pitch, c.off, c.x, c.y, ok ? "ok" : "WRONG");
    }
    printf(bad ? "WRONG\n" : "ok: tma_probe\n");
    return bad != 0;
}
