// Host driver for scripts/h100/compiled/measure.sh: launches the kernels of tests/kernels/compiled/*.cu,
// each once per repetition, in a fixed order, and writes a manifest (one line per launch) that
// scripts/h100/compiled/util.py joins with Nsight Compute's per-launch results. Checks nothing.
//
// Build:  nvcc -O3 -arch=sm_90 -lineinfo -Xptxas -v -o driver scripts/h100/compiled/driver.cu
// Run:    ./driver MANIFEST.csv REPS [KERNEL...]     (normally under ncu; no KERNEL = all of them)
//
// Kernel order per repetition: gemm, gemm_alias, stencil5, matmul_rows, matmul_cols, reduce_cg,
// histogram256, cp_async_copy. Data are filled from the host with cudaMemcpy/cudaMemset (no fill
// kernels); inputs and zeroed outputs are re-written before every launch.

#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>
#include <cuda_runtime.h>

#include "../../../tests/kernels/compiled/gemm.cu"
#include "../../../tests/kernels/compiled/stencil.cu"
#include "../../../tests/kernels/compiled/matmul_tiled.cu"
#include "../../../tests/kernels/compiled/reduce_cg.cu"
#include "../../../tests/kernels/compiled/histogram.cu"
#include "../../../tests/kernels/compiled/cp_async.cu"

#define CK(call)                                                                             \
    do {                                                                                     \
        cudaError_t e_ = (call);                                                             \
        if (e_ != cudaSuccess) {                                                             \
            fprintf(stderr, "CUDA error '%s' (%d) at %s:%d: %s\n", cudaGetErrorString(e_),    \
                    (int)e_, __FILE__, __LINE__, #call);                                     \
            exit(1);                                                                         \
        }                                                                                    \
    } while (0)

static FILE* g_manifest = nullptr;
static int g_launches = 0;
static int g_rep = 0;
static int g_argc = 0;
static char** g_argv = nullptr;

static bool want(const char* kernel)
{
    if (g_argc <= 3) return true;
    for (int i = 3; i < g_argc; i++)
        if (strcmp(g_argv[i], kernel) == 0) return true;
    return false;
}

static void note(const std::string& line)
{
    fprintf(g_manifest, "# %s\n", line.c_str());
    fflush(g_manifest);
}

static void record(const char* file, const char* kernel, dim3 g, dim3 b, const std::string& args, size_t shm)
{
    fprintf(g_manifest, "%d,%d,%s,%s,%u;%u;%u,%u;%u;%u,%s,%zu\n", g_launches, g_rep, file, kernel, g.x, g.y, g.z,
            b.x, b.y, b.z, args.c_str(), shm);
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

#define LAUNCH(FILE_, NAME_, GRID, BLOCK, SHM, ARGS, ...)        \
    do {                                                         \
        record(FILE_, #NAME_, GRID, BLOCK, ARGS, SHM);           \
        NAME_<<<GRID, BLOCK, SHM>>>(__VA_ARGS__);                \
        check_launch(#NAME_);                                    \
    } while (0)

template <typename T> static T* dalloc(size_t count, const char* what)
{
    void* p = nullptr;
    CK(cudaMalloc(&p, count * sizeof(T)));
    CK(cudaMemset(p, 0, count * sizeof(T)));
    fprintf(stderr, "alloc %-22s %10zu bytes at %p (addr %% 256 = %zu)\n", what, count * sizeof(T), p,
            (size_t)((uintptr_t)p % 256));
    return (T*)p;
}

template <typename T> static void upload(T* d, const std::vector<T>& h)
{
    CK(cudaMemcpy(d, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice));
}

template <typename T> static void zero(T* d, size_t count) { CK(cudaMemset(d, 0, count * sizeof(T))); }

static std::string S(long long v) { return std::to_string(v); }

int main(int argc, char** argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s MANIFEST.csv REPS [KERNEL...]\n", argv[0]);
        return 2;
    }
    g_argc = argc;
    g_argv = argv;
    g_manifest = fopen(argv[1], "w");
    if (!g_manifest) {
        perror(argv[1]);
        return 1;
    }
    const int reps = atoi(argv[2]);
    CK(cudaSetDevice(0));

    // ---- allocations and host data
    const int GN = 256;  // gemm NI = NJ = NK
    float* ga = dalloc<float>((size_t)GN * GN, "gemm a");
    float* gb = dalloc<float>((size_t)GN * GN, "gemm b");
    float* gc = dalloc<float>((size_t)GN * GN, "gemm c");
    std::vector<float> h_ga((size_t)GN * GN), h_gb((size_t)GN * GN), h_gc((size_t)GN * GN, 1.0f);
    for (size_t x = 0; x < h_ga.size(); x++) {
        h_ga[x] = (float)(x % 17) / 16.0f;
        h_gb[x] = (float)(x % 13) / 16.0f;
    }

    const int SN = 1024;  // stencil N
    float* sin_ = dalloc<float>((size_t)SN * SN, "stencil in");
    float* sout = dalloc<float>((size_t)SN * SN, "stencil out");
    std::vector<float> h_sin((size_t)SN * SN);
    for (size_t x = 0; x < h_sin.size(); x++) h_sin[x] = (float)(x % 101) / 100.0f;

    const int MN = 512;  // matmul M = N = K
    float* mA = dalloc<float>((size_t)MN * MN, "matmul A");
    float* mB = dalloc<float>((size_t)MN * MN, "matmul B");
    float* mC = dalloc<float>((size_t)MN * MN, "matmul C");
    std::vector<float> h_mA((size_t)MN * MN), h_mB((size_t)MN * MN);
    for (size_t x = 0; x < h_mA.size(); x++) {
        h_mA[x] = (float)(x % 17) / 16.0f;
        h_mB[x] = (float)(x % 13) / 16.0f;
    }

    const int RN = 1 << 20;  // reduce n
    const int RG = RN / 256;
    float* rin = dalloc<float>(RN, "reduce in");
    float* rout = dalloc<float>(RG, "reduce out");
    std::vector<float> h_rin(RN, 1.0f);

    const int HN = 1 << 22;  // histogram n
    unsigned char* hdata = dalloc<unsigned char>(HN, "histogram data");
    unsigned int* hist = dalloc<unsigned int>(256, "histogram hist");
    std::vector<unsigned char> h_hdata(HN);
    for (size_t x = 0; x < (size_t)HN; x++) h_hdata[x] = (unsigned char)((x * 7) % 256);

    const int CN = 1 << 22;  // cp_async n
    float* cin = dalloc<float>(CN, "cp_async in");
    float* cout_ = dalloc<float>(CN, "cp_async out");
    std::vector<float> h_cin(CN);
    for (size_t x = 0; x < (size_t)CN; x++) h_cin[x] = (float)x;

    note("tests/kernels/compiled/gemm.cu: a, b, c = 256*256 floats each (cudaMalloc); a[x] = (x % 17)/16, "
         "b[x] = (x % 13)/16, c[x] = 1 (re-uploaded before each launch)");
    note("tests/kernels/compiled/stencil.cu: in, out = 1024*1024 floats; in[x] = (x % 101)/100, out zeroed");
    note("tests/kernels/compiled/matmul_tiled.cu: A, B, C = 512*512 floats; A[x] = (x % 17)/16, "
         "B[x] = (x % 13)/16, C zeroed");
    note("tests/kernels/compiled/reduce_cg.cu: in = 1048576 floats (all 1.0), out = 4096 floats zeroed");
    note("tests/kernels/compiled/histogram.cu: data = 4194304 bytes, data[x] = (x * 7) % 256; "
         "hist = 256 unsigned ints zeroed before each launch");
    note("tests/kernels/compiled/cp_async.cu: in, out = 4194304 floats; in[x] = x, out zeroed");
    note("every cudaMalloc'd buffer is at least 256-byte aligned; all shared memory is static "
         "(dynamic shared bytes = 0 in every C++ launch)");
    fprintf(g_manifest, "launch,rep,file,kernel,grid,block,args,dynamic_shared_bytes\n");

    for (g_rep = 0; g_rep < reps; g_rep++) {
        if (want("gemm")) {
            upload(ga, h_ga); upload(gb, h_gb); upload(gc, h_gc);
            LAUNCH("tests/kernels/compiled/gemm.cu", gemm, dim3(8, 32), dim3(32, 8), 0,
                   "ni=256;nj=256;nk=256;alpha=1.5;beta=1.2", GN, GN, GN, 1.5f, 1.2f, ga, gb, gc);
        }
        if (want("gemm_alias")) {
            upload(ga, h_ga); upload(gb, h_gb); upload(gc, h_gc);
            LAUNCH("tests/kernels/compiled/gemm.cu", gemm_alias, dim3(8, 32), dim3(32, 8), 0,
                   "ni=256;nj=256;nk=256;alpha=1.5;beta=1.2", GN, GN, GN, 1.5f, 1.2f, ga, gb, gc);
        }
        if (want("stencil5")) {
            upload(sin_, h_sin); zero(sout, (size_t)SN * SN);
            LAUNCH("tests/kernels/compiled/stencil.cu", stencil5, dim3(SN / 32, SN / 8), dim3(32, 8), 0,
                   "n=" + S(SN), SN, sin_, sout);
        }
        if (want("matmul_rows")) {
            upload(mA, h_mA); upload(mB, h_mB); zero(mC, (size_t)MN * MN);
            LAUNCH("tests/kernels/compiled/matmul_tiled.cu", matmul_rows, dim3(MN / 16, MN / 16), dim3(16, 16), 0,
                   "m=512;n=512;k=512", MN, MN, MN, mA, mB, mC);
        }
        if (want("matmul_cols")) {
            upload(mA, h_mA); upload(mB, h_mB); zero(mC, (size_t)MN * MN);
            LAUNCH("tests/kernels/compiled/matmul_tiled.cu", matmul_cols, dim3(MN / 16, MN / 16), dim3(16, 16), 0,
                   "m=512;n=512;k=512", MN, MN, MN, mA, mB, mC);
        }
        if (want("reduce_cg")) {
            upload(rin, h_rin); zero(rout, RG);
            LAUNCH("tests/kernels/compiled/reduce_cg.cu", reduce_cg, dim3(RG), dim3(256), 0, "n=" + S(RN),
                   rin, rout, RN);
        }
        if (want("histogram256")) {
            upload(hdata, h_hdata); zero(hist, 256);
            LAUNCH("tests/kernels/compiled/histogram.cu", histogram256, dim3(1024), dim3(256), 0, "n=" + S(HN),
                   hdata, HN, hist);
        }
        if (want("cp_async_copy")) {
            upload(cin, h_cin); zero(cout_, CN);
            LAUNCH("tests/kernels/compiled/cp_async.cu", cp_async_copy, dim3(512), dim3(256), 0, "n=" + S(CN),
                   cin, cout_, CN);
        }
    }

    // Results are not checked; print two values so a reader can see the kernels ran.
    float r0 = 0;
    unsigned int h0 = 0;
    CK(cudaMemcpy(&r0, rout, sizeof(float), cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(&h0, hist, sizeof(unsigned int), cudaMemcpyDeviceToHost));
    fprintf(stderr, "driver done: %d launches; reduce out[0] = %g (expect 256 if reduce_cg ran); hist[0] = %u\n",
            g_launches, r0, h0);
    fclose(g_manifest);
    return 0;
}
