// Host driver for scripts/h100/measure.sh: launches every example kernel configuration once,
// in a fixed order, and writes a manifest (one line per launch, in launch order) that
// scripts/h100/collect.py joins with Nsight Compute's per-launch results.
//
// Build (measure.sh does this):  nvcc -O3 -arch=sm_90 -lineinfo -Xptxas -v -o driver scripts/h100/driver.cu
// Run:                           ./driver MANIFEST.csv [GROUP...]   (normally under ncu; default all groups)
//
// Every example is included inside its own namespace so that kernel names of different files
// cannot collide; the manifest records the name as warpscope takes it (no namespace).
// Every buffer is zeroed with cudaMemset before every launch (warpscope assumes memory
// starts zeroed), and every CUDA call and launch is checked.

#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <cstring>
#include <string>
#include <cuda_runtime.h>

namespace ex_harris {
#include "../../examples/harris.cu"
template __global__ void offset<float>(float*, int);
template __global__ void stride<float>(float*, int);
template __global__ void offset<double>(double*, int);
template __global__ void stride<double>(double*, int);
}
namespace ex_aos {
#include "../../examples/aos_soa.cu"
}
namespace ex_pitch {
#include "../../examples/pitch2d.cu"
}
namespace ex_banks {
#include "../../examples/shared_banks.cu"
}
namespace ex_transpose {
#include "../../examples/transpose.cu"
}
namespace ex_reduce {
#include "../../examples/reduction.cu"
}
namespace ex_vec {
#include "../../examples/vector_types.cu"
}

#define CK(call)                                                                        \
    do {                                                                                \
        cudaError_t e_ = (call);                                                        \
        if (e_ != cudaSuccess) {                                                        \
            fprintf(stderr, "CUDA error '%s' (%d) at %s:%d: %s\n", cudaGetErrorString(e_), \
                    (int)e_, __FILE__, __LINE__, #call);                                \
            exit(1);                                                                    \
        }                                                                               \
    } while (0)

static FILE* g_manifest = nullptr;
static int g_launches = 0;

static void note(const std::string& line)
{
    fprintf(g_manifest, "# %s\n", line.c_str());
    fflush(g_manifest);
    fprintf(stderr, "note: %s\n", line.c_str());
}

static void record(const char* file, const char* kernel, dim3 g, dim3 b, const std::string& args,
                   size_t dyn_shared)
{
    fprintf(g_manifest, "%d,%s,%s,%u;%u;%u,%u;%u;%u,%s,%zu\n", g_launches, file, kernel, g.x, g.y,
            g.z, b.x, b.y, b.z, args.c_str(), dyn_shared);
    fflush(g_manifest);
    g_launches++;
}

static void check_launch(const char* kernel)
{
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) {
        fprintf(stderr, "launch of %s failed: %s\n", kernel, cudaGetErrorString(e));
        exit(1);
    }
    e = cudaDeviceSynchronize();
    if (e != cudaSuccess) {
        fprintf(stderr, "kernel %s failed: %s\n", kernel, cudaGetErrorString(e));
        exit(1);
    }
}

// Records the launch, launches, checks.  KERNEL may be a template-id (no commas).
#define LAUNCH(FILE_, NAME_, KERNEL, GRID, BLOCK, SHM, ARGS, ...)      \
    do {                                                               \
        record(FILE_, NAME_, GRID, BLOCK, ARGS, SHM);                  \
        KERNEL<<<GRID, BLOCK, SHM>>>(__VA_ARGS__);                     \
        check_launch(NAME_);                                           \
    } while (0)

static void* dalloc(size_t bytes, const char* what)
{
    void* p = nullptr;
    CK(cudaMalloc(&p, bytes));
    CK(cudaMemset(p, 0, bytes));
    fprintf(stderr, "alloc %-28s %12zu bytes at %p (addr %% 4096 = %zu)\n", what, bytes, p,
            (size_t)((uintptr_t)p % 4096));
    return p;
}

static void zero(void* p, size_t bytes) { CK(cudaMemset(p, 0, bytes)); }

static std::string S(long long v) { return std::to_string(v); }

// ---------------------------------------------------------------------------------------
static void run_harris()
{
    const char* F = "examples/harris.cu";
    const int threads = 4096 * 256;
    const size_t elems = (size_t)33 * threads;  // NB: 33x for the stride case, as in the post
    const size_t bytes = elems * sizeof(double);
    void* a = dalloc(bytes, "harris a (33*2^20 doubles)");
    note("examples/harris.cu offset/stride: a = 33*4096*256 elements of T (cudaMalloc, 256-byte aligned)");
    dim3 g(4096), b(256);

    int offs[] = {0, 1, 16, 32};
    for (int s : offs) {
        zero(a, bytes);
        LAUNCH(F, "offset<float>", ex_harris::offset<float>, g, b, 0, "s=" + S(s), (float*)a, s);
    }
    int strides[] = {1, 2, 4, 8, 32};
    for (int s : strides) {
        zero(a, bytes);
        LAUNCH(F, "stride<float>", ex_harris::stride<float>, g, b, 0, "s=" + S(s), (float*)a, s);
    }
    int doffs[] = {0, 1};
    for (int s : doffs) {
        zero(a, bytes);
        LAUNCH(F, "offset<double>", ex_harris::offset<double>, g, b, 0, "s=" + S(s), (double*)a, s);
    }
    int dstrides[] = {1, 2};
    for (int s : dstrides) {
        zero(a, bytes);
        LAUNCH(F, "stride<double>", ex_harris::stride<double>, g, b, 0, "s=" + S(s), (double*)a, s);
    }
    CK(cudaFree(a));

    // copy-bandwidth.csv kernels, n = 2^22 floats.
    const int n = 4194304;
    const size_t cbytes = (size_t)(n + 32) * sizeof(float);
    float* ca = (float*)dalloc(cbytes, "harris copy a (n+32 floats)");
    float* cb = (float*)dalloc(cbytes, "harris copy b (n+32 floats)");
    note("examples/harris.cu offset_copy/stride_copy: a and b = n + 32 floats each, n = 4194304");
    int coffs[] = {0, 1, 8, 32};
    for (int o : coffs) {
        zero(ca, cbytes);
        zero(cb, cbytes);
        dim3 cg(n / 256);
        LAUNCH(F, "offset_copy", ex_harris::offset_copy, cg, b, 0, "n=" + S(n) + ";offset=" + S(o),
               ca, cb, n, o);
    }
    int cstrides[] = {1, 2, 4, 8, 32};
    for (int s : cstrides) {
        zero(ca, cbytes);
        zero(cb, cbytes);
        dim3 cg(n / (256 * s));
        LAUNCH(F, "stride_copy", ex_harris::stride_copy, cg, b, 0, "n=" + S(n) + ";stride=" + S(s),
               ca, cb, n, s);
    }
    CK(cudaFree(ca));
    CK(cudaFree(cb));
}

// ---------------------------------------------------------------------------------------
static void run_aos()
{
    const char* F = "examples/aos_soa.cu";
    const int n = 1048576;
    const size_t dbytes = (size_t)n * sizeof(ex_aos::data);
    void* my = dalloc(dbytes, "aos myData (n structs)");
    int* idx = (int*)dalloc((size_t)n * sizeof(int), "soa index (n ints)");
    double* val = (double*)dalloc((size_t)n * sizeof(double), "soa value (n doubles)");
    double* res = (double*)dalloc((size_t)n * sizeof(double), "result (n doubles)");
    note("examples/aos_soa.cu: n = 1048576; myData n structs of " + S(sizeof(ex_aos::data)) +
         " bytes; index n ints; value n doubles; result n doubles");
    dim3 g(n / 256), b(256);
    zero(my, dbytes);
    zero(res, (size_t)n * sizeof(double));
    LAUNCH(F, "aos", ex_aos::aos, g, b, 0, "n=" + S(n), (const ex_aos::data*)my, res, n);
    zero(idx, (size_t)n * sizeof(int));
    zero(val, (size_t)n * sizeof(double));
    zero(res, (size_t)n * sizeof(double));
    LAUNCH(F, "soa", ex_aos::soa, g, b, 0, "n=" + S(n), idx, val, res, n);
    zero(my, dbytes);
    LAUNCH(F, "aos_update", ex_aos::aos_update, g, b, 0, "n=" + S(n), (ex_aos::data*)my, n);
    CK(cudaFree(my));
    CK(cudaFree(idx));
    CK(cudaFree(val));
    CK(cudaFree(res));
}

// ---------------------------------------------------------------------------------------
static void run_pitch()
{
    const char* F = "examples/pitch2d.cu";
    const int H = 1000;
    const size_t bytes = (size_t)1024 * H * sizeof(float);
    float* base = (float*)dalloc(bytes, "inc_2d base (1024*1000 floats)");
    note("examples/pitch2d.cu: inc_2d base = 1024*1000 floats (cudaMalloc, used as width x 1000)");
    dim3 b(32, 8);
    dim3 g(32, (H + 7) / 8);
    int widths[] = {1000, 1001, 1024};
    for (int w : widths) {
        zero(base, bytes);
        LAUNCH(F, "inc_2d", ex_pitch::inc_2d, g, b, 0, "width=" + S(w) + ";height=" + S(H), base, w, H);
    }
    CK(cudaFree(base));

    int pwidths[] = {1000, 1001};
    for (int w : pwidths) {
        void* pb = nullptr;
        size_t pitch = 0;
        CK(cudaMallocPitch(&pb, &pitch, w * sizeof(float), H));
        CK(cudaMemset2D(pb, pitch, 0, w * sizeof(float), H));
        fprintf(stderr, "alloc inc_2d_pitched base width %d pitch %zu at %p (addr %% 4096 = %zu)\n", w,
                pitch, pb, (size_t)((uintptr_t)pb % 4096));
        note("examples/pitch2d.cu: inc_2d_pitched width " + S(w) + ": base = cudaMallocPitch(" +
             S(w * 4) + " bytes, 1000 rows) -> pitch " + S(pitch) + " bytes");
        CK(cudaMemset(pb, 0, pitch * H));
        LAUNCH(F, "inc_2d_pitched", ex_pitch::inc_2d_pitched, g, b, 0,
               "pitch=" + S(pitch) + ";width=" + S(w) + ";height=" + S(H), (float*)pb, pitch, w, H);
        CK(cudaFree(pb));
    }
}

// ---------------------------------------------------------------------------------------
static void run_banks(int pass)
{
    const char* F = "examples/shared_banks.cu";
    dim3 g(1024), b(256);
    const size_t bytes = (size_t)1024 * 256 * sizeof(float);
    float* out = (float*)dalloc(bytes, "banks out (grid*block floats)");
    if (pass == 0) note("examples/shared_banks.cu: out = 1024*256 floats; static shared arrays only");

    // Every configuration for (fill, store) = (1,0), (0,0), (1,1), (0,1), in that order.
    const int combos[4][2] = {{1, 0}, {0, 0}, {1, 1}, {0, 1}};
    for (int c = 0; c < 4; c++) {
        int fill = combos[c][0], store = combos[c][1];
        std::string fs = ";fill=" + S(fill) + ";store=" + S(store);
        int f32s[] = {1, 2, 3, 4, 8, 16, 32, 33};
        for (int s : f32s) {
            zero(out, bytes);
            LAUNCH(F, "smem_stride_f32", ex_banks::smem_stride_f32, g, b, 0, "stride=" + S(s) + fs, out, s, fill, store);
        }
        zero(out, bytes);
        LAUNCH(F, "smem_broadcast", ex_banks::smem_broadcast, g, b, 0, fs.substr(1), out, fill, store);
        zero(out, bytes);
        LAUNCH(F, "smem_warp_broadcast", ex_banks::smem_warp_broadcast, g, b, 0, fs.substr(1), out, fill, store);
        int f64s[] = {1, 2, 3, 4, 8, 16};
        for (int s : f64s) {
            zero(out, bytes);
            LAUNCH(F, "smem_stride_f64", ex_banks::smem_stride_f64, g, b, 0, "stride=" + S(s) + fs, out, s, fill, store);
        }
        int f4s[] = {1, 2, 3, 4, 8};
        for (int s : f4s) {
            zero(out, bytes);
            LAUNCH(F, "smem_stride_f4", ex_banks::smem_stride_f4, g, b, 0, "stride=" + S(s) + fs, out, s, fill, store);
        }
        zero(out, bytes);
        LAUNCH(F, "smem_pairs_f4", ex_banks::smem_pairs_f4, g, b, 0, fs.substr(1), out, fill, store);
    }

    // Re-measurement of shared/ground-truth/h100/shared-f32-stride.csv: strides 1..33, then
    // stride 32 twice more (3 measurements of stride 32 in all), for (fill, store) = (1,0)
    // and (0,0); strides 1, 2, 32 (+ 32 twice) for (1,1) and (0,1).
    for (int c = 0; c < 4; c++) {
        int fill = combos[c][0], store = combos[c][1];
        std::string fs = ";fill=" + S(fill) + ";store=" + S(store);
        for (int s = 1; s <= 33; s++) {
            if (store && s != 1 && s != 2 && s != 32) continue;
            zero(out, bytes);
            LAUNCH(F, "shared_f32_stride", ex_banks::shared_f32_stride, g, b, 0, "stride=" + S(s) + fs, out, s,
                   fill, store);
        }
        for (int rep = 0; rep < 2; rep++) {
            zero(out, bytes);
            LAUNCH(F, "shared_f32_stride", ex_banks::shared_f32_stride, g, b, 0, "stride=32" + fs, out, 32, fill,
                   store);
        }
    }
    CK(cudaFree(out));
}

// ---------------------------------------------------------------------------------------
static void run_transpose()
{
    const char* F = "examples/transpose.cu";
    const size_t bytes = (size_t)1024 * 1024 * sizeof(float);
    float* in = (float*)dalloc(bytes, "transpose idata (2^20 floats)");
    float* out = (float*)dalloc(bytes, "transpose odata (2^20 floats)");
    note("examples/transpose.cu: idata and odata = width*height floats (2^20) each");
    dim3 b(32, 8);
    int shapes[2][2] = {{1024, 1024}, {2048, 512}};
    for (int k = 0; k < 2; k++) {
        int w = shapes[k][0], h = shapes[k][1];
        dim3 g(w / 32, h / 32);
        std::string args = "width=" + S(w) + ";height=" + S(h);
        if (k == 0) {
            zero(in, bytes);
            zero(out, bytes);
            LAUNCH(F, "copy_tiles", ex_transpose::copy_tiles, g, b, 0, args, out, in, w, h);
        }
        zero(in, bytes);
        zero(out, bytes);
        LAUNCH(F, "transpose_naive", ex_transpose::transpose_naive, g, b, 0, args, out, in, w, h);
        zero(in, bytes);
        zero(out, bytes);
        LAUNCH(F, "transpose_coalesced", ex_transpose::transpose_coalesced, g, b, 0, args, out, in, w, h);
        zero(in, bytes);
        zero(out, bytes);
        LAUNCH(F, "transpose_no_bank_conflicts", ex_transpose::transpose_no_bank_conflicts, g, b, 0,
               args, out, in, w, h);
    }
    {   // repeat, to check that the counts repeat
        dim3 g(32, 32);
        zero(in, bytes);
        zero(out, bytes);
        LAUNCH(F, "transpose_coalesced", ex_transpose::transpose_coalesced, g, b, 0,
               "width=1024;height=1024", out, in, 1024, 1024);
    }
    CK(cudaFree(in));
    CK(cudaFree(out));
}

// ---------------------------------------------------------------------------------------
static void run_reduction()
{
    const char* F = "examples/reduction.cu";
    const int n = 1048576;
    float* in = (float*)dalloc((size_t)n * sizeof(float), "reduction in (2^20 floats)");
    float* out = (float*)dalloc(4096 * sizeof(float), "reduction out (4096 floats)");
    note("examples/reduction.cu: in = 1048576 floats, out = 4096 floats; dynamic shared = blockDim.x*4 = 1024 bytes");
    dim3 b(256);
    const size_t shm = 256 * sizeof(float);
    {
        dim3 g(n / 256);
        zero(in, (size_t)n * sizeof(float));
        zero(out, 4096 * sizeof(float));
        LAUNCH(F, "reduce_interleaved", ex_reduce::reduce_interleaved, g, b, shm, "n=" + S(n), in, out, n);
        zero(in, (size_t)n * sizeof(float));
        zero(out, 4096 * sizeof(float));
        LAUNCH(F, "reduce_strided", ex_reduce::reduce_strided, g, b, shm, "n=" + S(n), in, out, n);
        zero(in, (size_t)n * sizeof(float));
        zero(out, 4096 * sizeof(float));
        LAUNCH(F, "reduce_sequential", ex_reduce::reduce_sequential, g, b, shm, "n=" + S(n), in, out, n);
        for (int rep = 0; rep < 2; rep++) {  // repeats: the load wavefronts vary run to run
            zero(in, (size_t)n * sizeof(float));
            zero(out, 4096 * sizeof(float));
            LAUNCH(F, "reduce_sequential", ex_reduce::reduce_sequential, g, b, shm, "n=" + S(n), in, out, n);
        }
    }
    {
        const int n2 = 1000000;
        dim3 g((n2 + 255) / 256);
        zero(in, (size_t)n * sizeof(float));
        zero(out, 4096 * sizeof(float));
        LAUNCH(F, "reduce_sequential", ex_reduce::reduce_sequential, g, b, shm, "n=" + S(n2), in, out, n2);
    }
    CK(cudaFree(in));
    CK(cudaFree(out));
}

// ---------------------------------------------------------------------------------------
static void run_vector()
{
    const char* F = "examples/vector_types.cu";
    const int nf = 4194304;
    const size_t bytes = (size_t)(nf + 64) * sizeof(float);
    float* a = (float*)dalloc(bytes, "vector a (2^22+64 floats)");
    float* b_ = (float*)dalloc(bytes, "vector b (2^22+64 floats)");
    note("examples/vector_types.cu: a and b = 4194304 + 64 floats each");
    dim3 b(256);
    zero(a, bytes);
    zero(b_, bytes);
    LAUNCH(F, "copy_scalar", ex_vec::copy_scalar, dim3(nf / 256), b, 0, "n=" + S(nf), a, b_, nf);
    zero(a, bytes);
    zero(b_, bytes);
    LAUNCH(F, "copy_vec2", ex_vec::copy_vec2, dim3(nf / 2 / 256), b, 0, "n=" + S(nf / 2), a, b_, nf / 2);
    zero(a, bytes);
    zero(b_, bytes);
    LAUNCH(F, "copy_vec4", ex_vec::copy_vec4, dim3(nf / 4 / 256), b, 0, "n=" + S(nf / 4), a, b_, nf / 4);
    zero(a, bytes);
    zero(b_, bytes);
    LAUNCH(F, "copy_vec4_shifted", ex_vec::copy_vec4_shifted, dim3(nf / 4 / 256), b, 0, "n=" + S(nf / 4),
           a, b_, nf / 4);
    zero(a, bytes);
    zero(b_, bytes);
    LAUNCH(F, "scale_vec4", ex_vec::scale_vec4, dim3(nf / 4 / 256), b, 0, "n=" + S(nf / 4) + ";alpha=2",
           (const float4*)a, (float4*)b_, nf / 4, 2.0f);
    CK(cudaFree(a));
    CK(cudaFree(b_));
}

int main(int argc, char** argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s MANIFEST.csv [harris|aos|pitch|banks|transpose|reduce|vector ...]\n", argv[0]);
        return 2;
    }
    g_manifest = fopen(argv[1], "w");
    if (!g_manifest) {
        fprintf(stderr, "cannot open %s\n", argv[1]);
        return 2;
    }
    fprintf(g_manifest, "launch,file,kernel,grid,block,args,dynamic_shared_bytes\n");

    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    int rt = 0, drv = 0;
    CK(cudaRuntimeGetVersion(&rt));
    CK(cudaDriverGetVersion(&drv));
    fprintf(stderr, "device 0: %s, CC %d.%d, %d SMs, L2 %d bytes; runtime %d, driver API %d\n",
            prop.name, prop.major, prop.minor, prop.multiProcessorCount, prop.l2CacheSize, rt, drv);

    // Groups to run (default: all).  measure.sh runs each group in its own process.
    auto want = [&](const char* grp) {
        if (argc <= 2) return true;
        for (int i = 2; i < argc; i++)
            if (strcmp(argv[i], grp) == 0) return true;
        return false;
    };
    if (want("harris")) run_harris();
    if (want("aos")) run_aos();
    if (want("pitch")) run_pitch();
    if (want("banks")) {  // twice: the repeats show which counts are repeatable
        run_banks(0);
        run_banks(1);
    }
    if (want("transpose")) run_transpose();
    if (want("reduce")) run_reduction();
    if (want("vector")) run_vector();

    fclose(g_manifest);
    fprintf(stderr, "driver done: %d launches\n", g_launches);
    return 0;
}
