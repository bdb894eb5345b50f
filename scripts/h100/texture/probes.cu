// Texture and surface probes for warpscope's texture model (crates/model/src/texture.rs).
// Each probe is one warp (one block of 32 threads) doing one fetch per lane at coordinates
// the host chose, so that ncu's per-launch texture-pipe counters are the cost of one warp's
// fetch. Then the examples/texture.cu launches, whole.
//
// Build and run: scripts/h100/texture/run.sh (nvcc -O3 -arch=sm_90; ncu --clock-control none).
// Writes a manifest line per launch (in launch order): name,kernel,texture,lanes,grid,block.

#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <vector>
#include <cuda_runtime.h>

namespace ex {
#include "../../../examples/texture.cu"
}

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
    fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); exit(1); } } while (0)

__device__ float fold(float v) { return v; }
__device__ float fold(float4 v) { return v.x + v.y + v.z + v.w; }
__device__ float fold(uchar4 v) { return v.x + v.y + v.z + v.w; }
__device__ float fold(unsigned char v) { return v; }

template <class T> __global__ void p_tex1dfetch(cudaTextureObject_t t, const float4* c, float* out, int n)
{ int l = threadIdx.x; if (l >= n) return; out[l] = fold(tex1Dfetch<T>(t, (int)c[l].x)); }
template <class T> __global__ void p_tex1d(cudaTextureObject_t t, const float4* c, float* out, int n)
{ int l = threadIdx.x; if (l >= n) return; out[l] = fold(tex1D<T>(t, c[l].x)); }
template <class T> __global__ void p_tex2d(cudaTextureObject_t t, const float4* c, float* out, int n)
{ int l = threadIdx.x; if (l >= n) return; float4 q = c[l]; out[l] = fold(tex2D<T>(t, q.x, q.y)); }
template <class T> __global__ void p_tex3d(cudaTextureObject_t t, const float4* c, float* out, int n)
{ int l = threadIdx.x; if (l >= n) return; float4 q = c[l]; out[l] = fold(tex3D<T>(t, q.x, q.y, q.z)); }
template <class T> __global__ void p_texa2d(cudaTextureObject_t t, const float4* c, float* out, int n)
{ int l = threadIdx.x; if (l >= n) return; float4 q = c[l]; out[l] = fold(tex2DLayered<T>(t, q.x, q.y, (int)q.w)); }
__global__ void p_tld4(cudaTextureObject_t t, const float4* c, float* out, int n)
{ int l = threadIdx.x; if (l >= n) return; float4 q = c[l]; out[l] = fold(tex2Dgather<float4>(t, q.x, q.y, 0)); }
template <class T> __global__ void p_suld(cudaSurfaceObject_t s, const float4* c, float* out, int n)
{ int l = threadIdx.x; if (l >= n) return; float4 q = c[l]; T v; surf2Dread(&v, s, (int)q.x, (int)q.y); out[l] = fold(v); }
template <class T> __global__ void p_sust(cudaSurfaceObject_t s, const float4* c, float* out, int n)
{ int l = threadIdx.x; if (l >= n) return; float4 q = c[l]; T v{}; surf2Dwrite(v, s, (int)q.x, (int)q.y); }

typedef void (*Kern)(unsigned long long, const float4*, float*, int);

struct Tex { std::string name; unsigned long long obj; };

static cudaTextureObject_t tex_array(cudaArray_t a, cudaTextureAddressMode m, cudaTextureFilterMode f, int norm,
                                     cudaTextureReadMode r = cudaReadModeElementType)
{
    cudaResourceDesc res{}; res.resType = cudaResourceTypeArray; res.res.array.array = a;
    cudaTextureDesc td{}; td.addressMode[0] = td.addressMode[1] = td.addressMode[2] = m;
    td.filterMode = f; td.readMode = r; td.normalizedCoords = norm;
    cudaTextureObject_t t; CK(cudaCreateTextureObject(&t, &res, &td, nullptr)); return t;
}

static FILE* manifest;
static float4* dcoords;
static float* dout;

static void probe(const char* name, const char* kname, Kern k, const char* tname, unsigned long long obj,
                  std::function<float4(int)> at, int lanes = 32)
{
    float4 c[32];
    for (int l = 0; l < 32; l++) c[l] = at(l);
    CK(cudaMemcpy(dcoords, c, sizeof c, cudaMemcpyHostToDevice));
    k<<<1, 32>>>(obj, dcoords, dout, lanes);
    CK(cudaGetLastError()); CK(cudaDeviceSynchronize());
    fprintf(manifest, "%s,%s,%s,%d,1,32\n", name, kname, tname, lanes);
}

static uint64_t mix(uint64_t seed, uint64_t j)  // crates/init's `random` (SplitMix64 finalizer)
{
    uint64_t z = seed * 0x9E3779B97F4A7C15ull + j * 0xD1B54A32D192ED03ull + 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

int main(int argc, char** argv)
{
    manifest = fopen(argc > 1 ? argv[1] : "manifest.csv", "w");
    fprintf(manifest, "probe,kernel,texture,lanes,grid,block\n");
    CK(cudaMalloc(&dcoords, 32 * sizeof(float4)));
    CK(cudaMalloc(&dout, 1 << 24));

    auto ch_f = cudaCreateChannelDesc<float>();
    auto ch_f4 = cudaCreateChannelDesc<float4>();
    auto ch_u8 = cudaCreateChannelDesc<unsigned char>();
    auto ch_u84 = cudaCreateChannelDesc<uchar4>();
    cudaArray_t a_f32, a_tall, a_f4, a_u8, a_u84, a3, al, a1, as_f32, as_u84;
    CK(cudaMallocArray(&a_f32, &ch_f, 256, 256));
    CK(cudaMallocArray(&a_tall, &ch_f, 64, 4096));
    CK(cudaMallocArray(&a_f4, &ch_f4, 64, 64));
    CK(cudaMallocArray(&a_u8, &ch_u8, 256, 256));
    CK(cudaMallocArray(&a_u84, &ch_u84, 128, 128));
    CK(cudaMalloc3DArray(&a3, &ch_f, make_cudaExtent(32, 32, 32)));
    CK(cudaMalloc3DArray(&al, &ch_f, make_cudaExtent(64, 64, 8), cudaArrayLayered));
    CK(cudaMallocArray(&a1, &ch_f, 4096, 0));
    CK(cudaMallocArray(&as_f32, &ch_f, 256, 256, cudaArraySurfaceLoadStore));
    CK(cudaMallocArray(&as_u84, &ch_u84, 128, 128, cudaArraySurfaceLoadStore));
    {   // defined contents (zeros) for the 2-D float array
        std::vector<float> z(256 * 256, 0.f);
        CK(cudaMemcpy2DToArray(a_f32, 0, 0, z.data(), 1024, 1024, 256, cudaMemcpyHostToDevice));
    }
    const auto C = cudaAddressModeClamp, W = cudaAddressModeWrap, M = cudaAddressModeMirror, B = cudaAddressModeBorder;
    const auto P = cudaFilterModePoint, L = cudaFilterModeLinear;
    auto t_f32 = tex_array(a_f32, C, P, 0), t_f32_lin = tex_array(a_f32, C, L, 0);
    auto t_f32_bord = tex_array(a_f32, B, P, 0), t_f32_wrapn = tex_array(a_f32, W, P, 1);
    auto t_f32_mirn = tex_array(a_f32, M, P, 1), t_f32_clampn = tex_array(a_f32, C, P, 1);
    auto t_f32_linwrapn = tex_array(a_f32, W, L, 1);
    auto t_tall = tex_array(a_tall, C, P, 0), t_f4 = tex_array(a_f4, C, P, 0);
    auto t_u8 = tex_array(a_u8, C, P, 0), t_u84 = tex_array(a_u84, C, P, 0);
    auto t_u8_nf = tex_array(a_u8, C, L, 0, cudaReadModeNormalizedFloat);
    auto t3 = tex_array(a3, C, P, 0), t3_lin = tex_array(a3, C, L, 0);
    auto tl = tex_array(al, C, P, 0), t1 = tex_array(a1, C, P, 0), t1_lin = tex_array(a1, C, L, 0);

    float *lin; CK(cudaMalloc(&lin, 65536 * 16));
    auto tex_linear = [&](cudaChannelFormatDesc d, size_t bytes) {
        cudaResourceDesc res{}; res.resType = cudaResourceTypeLinear; res.res.linear.devPtr = lin;
        res.res.linear.desc = d; res.res.linear.sizeInBytes = bytes;
        cudaTextureDesc td{}; td.readMode = cudaReadModeElementType;
        cudaTextureObject_t t; CK(cudaCreateTextureObject(&t, &res, &td, nullptr)); return t;
    };
    auto tlin_f32 = tex_linear(ch_f, 65536 * 4), tlin_f4 = tex_linear(ch_f4, 16384 * 16);
    float* pit; size_t pitch; CK(cudaMallocPitch(&pit, &pitch, 256 * 4, 256));
    fprintf(stderr, "pitch of a 256-float row: %zu bytes\n", pitch);
    auto tex_pitch = [&](cudaTextureFilterMode f) {
        cudaResourceDesc res{}; res.resType = cudaResourceTypePitch2D; res.res.pitch2D.devPtr = pit;
        res.res.pitch2D.desc = ch_f; res.res.pitch2D.width = 256; res.res.pitch2D.height = 256;
        res.res.pitch2D.pitchInBytes = pitch;
        cudaTextureDesc td{}; td.addressMode[0] = td.addressMode[1] = C; td.filterMode = f;
        td.readMode = cudaReadModeElementType;
        cudaTextureObject_t t; CK(cudaCreateTextureObject(&t, &res, &td, nullptr)); return t;
    };
    auto tp = tex_pitch(P), tp_lin = tex_pitch(L);
    auto surf = [&](cudaArray_t a) {
        cudaResourceDesc res{}; res.resType = cudaResourceTypeArray; res.res.array.array = a;
        cudaSurfaceObject_t s; CK(cudaCreateSurfaceObject(&s, &res)); return s;
    };
    auto s_f32 = surf(as_f32), s_u84 = surf(as_u84);

    auto F = [](float x, float y, float z = 0, float w = 0) { return make_float4(x, y, z, w); };
    // 2-D point patterns at texel centres: (name, lane -> texel x, y)
    struct Pat { const char* name; std::function<float4(int)> at; int lanes; };
    std::vector<Pat> pats2 = {
        {"row", [&](int l) { return F(l, 0); }, 32},
        {"row_y1", [&](int l) { return F(l, 1); }, 32},
        {"row_x2", [&](int l) { return F(2 + l, 0); }, 32},
        {"row_x16_y5", [&](int l) { return F(16 + l, 5); }, 32},
        {"col", [&](int l) { return F(0, l); }, 32},
        {"col_x5", [&](int l) { return F(5, l); }, 32},
        {"col_y3", [&](int l) { return F(0, 3 + l); }, 32},
        {"t8x4", [&](int l) { return F(l % 8, l / 8); }, 32},
        {"t4x8", [&](int l) { return F(l % 4, l / 4); }, 32},
        {"t16x2", [&](int l) { return F(l % 16, l / 16); }, 32},
        {"t2x16", [&](int l) { return F(l % 2, l / 2); }, 32},
        {"t8x4_off", [&](int l) { return F(3 + l % 8, 1 + l / 8); }, 32},
        {"bcast", [&](int l) { return F(7, 9); }, 32},
        {"sx2", [&](int l) { return F(2 * l, 0); }, 32},
        {"sy2", [&](int l) { return F(0, 2 * l); }, 32},
        {"sy8", [&](int l) { return F(0, 8 * l); }, 32},
        {"diag", [&](int l) { return F(l, l); }, 32},
        {"scatter", [&](int l) { return F((l * 37) % 256, (l * 101 + 13) % 256); }, 32},
        {"half_row", [&](int l) { return F(l, 0); }, 16},
    };
    auto centre = [](std::function<float4(int)> f) {
        return [f](int l) { float4 q = f(l); return make_float4(q.x + 0.5f, q.y + 0.5f, q.z + 0.5f, q.w); };
    };
    char nm[128];
    // 2-D float array, point, clamp: every pattern.
    for (auto& p : pats2) {
        snprintf(nm, sizeof nm, "a2d_f32_point_%s", p.name);
        probe(strdup(nm), "tex2d_f32", (Kern)p_tex2d<float>, "a_f32", t_f32, centre(p.at), p.lanes);
    }
    // Other texel sizes and a tall array (block height).
    const char* some[] = {"row", "row_y1", "col", "t8x4", "t4x8", "t16x2", "t2x16", "bcast", "sx2"};
    for (auto& p : pats2) for (auto s : some) if (!strcmp(p.name, s)) {
        snprintf(nm, sizeof nm, "a2d_tall_point_%s", p.name);
        probe(strdup(nm), "tex2d_f32", (Kern)p_tex2d<float>, "a_tall", t_tall, centre(p.at), p.lanes);
        snprintf(nm, sizeof nm, "a2d_f4_point_%s", p.name);
        probe(strdup(nm), "tex2d_f4", (Kern)p_tex2d<float4>, "a_f4", t_f4, centre(p.at), p.lanes);
        snprintf(nm, sizeof nm, "a2d_u8_point_%s", p.name);
        probe(strdup(nm), "tex2d_u8", (Kern)p_tex2d<unsigned char>, "a_u8", t_u8, centre(p.at), p.lanes);
        snprintf(nm, sizeof nm, "a2d_u84_point_%s", p.name);
        probe(strdup(nm), "tex2d_u84", (Kern)p_tex2d<uchar4>, "a_u84", t_u84, centre(p.at), p.lanes);
    }
    // Linear filtering: x = i + 1.0 straddles texels i and i+1 (weights 1/2); x = i + 0.5 is a centre.
    probe("a2d_f32_linear_row_mid", "tex2d_f32", (Kern)p_tex2d<float>, "a_f32_lin", t_f32_lin, [&](int l) { return F(l + 1.0f, 1.0f); });
    probe("a2d_f32_linear_row_mid_y2", "tex2d_f32", (Kern)p_tex2d<float>, "a_f32_lin", t_f32_lin, [&](int l) { return F(l + 1.0f, 2.0f); });
    probe("a2d_f32_linear_row_centre", "tex2d_f32", (Kern)p_tex2d<float>, "a_f32_lin", t_f32_lin, [&](int l) { return F(l + 0.5f, 0.5f); });
    probe("a2d_f32_linear_row_centre_y1", "tex2d_f32", (Kern)p_tex2d<float>, "a_f32_lin", t_f32_lin, [&](int l) { return F(l + 0.5f, 1.5f); });
    probe("a2d_f32_linear_col_mid", "tex2d_f32", (Kern)p_tex2d<float>, "a_f32_lin", t_f32_lin, [&](int l) { return F(1.0f, l + 1.0f); });
    probe("a2d_f32_linear_t8x4_mid", "tex2d_f32", (Kern)p_tex2d<float>, "a_f32_lin", t_f32_lin, [&](int l) { return F(l % 8 + 1.0f, l / 8 + 1.0f); });
    probe("a2d_f32_linear_bcast_mid", "tex2d_f32", (Kern)p_tex2d<float>, "a_f32_lin", t_f32_lin, [&](int l) { return F(4.0f, 4.0f); });
    probe("a2d_f32_linear_edge", "tex2d_f32", (Kern)p_tex2d<float>, "a_f32_lin", t_f32_lin, [&](int l) { return F(240 + l + 1.0f, 1.0f); });
    probe("a2d_u8_linear_nf_row_mid", "tex2d_nf", (Kern)p_tex2d<float>, "a_u8_nf", t_u8_nf, [&](int l) { return F(l + 1.0f, 1.0f); });
    // Addressing at the right edge: texels 240 + lane (16 lanes past the edge).
    probe("a2d_f32_clamp_edge", "tex2d_f32", (Kern)p_tex2d<float>, "a_f32", t_f32, [&](int l) { return F(240 + l + 0.5f, 0.5f); });
    probe("a2d_f32_border_edge", "tex2d_f32", (Kern)p_tex2d<float>, "a_f32_border", t_f32_bord, [&](int l) { return F(240 + l + 0.5f, 0.5f); });
    probe("a2d_f32_border_out", "tex2d_f32", (Kern)p_tex2d<float>, "a_f32_border", t_f32_bord, [&](int l) { return F(300 + l + 0.5f, 0.5f); });
    probe("a2d_f32_border_neg", "tex2d_f32", (Kern)p_tex2d<float>, "a_f32_border", t_f32_bord, [&](int l) { return F(l - 16 + 0.5f, 0.5f); });
    probe("a2d_f32_clampn_edge", "tex2d_f32", (Kern)p_tex2d<float>, "a_f32_clampn", t_f32_clampn, [&](int l) { return F((240 + l + 0.5f) / 256, 0.5f / 256); });
    probe("a2d_f32_wrapn_edge", "tex2d_f32", (Kern)p_tex2d<float>, "a_f32_wrapn", t_f32_wrapn, [&](int l) { return F((240 + l + 0.5f) / 256, 0.5f / 256); });
    probe("a2d_f32_mirrorn_edge", "tex2d_f32", (Kern)p_tex2d<float>, "a_f32_mirrorn", t_f32_mirn, [&](int l) { return F((240 + l + 0.5f) / 256, 0.5f / 256); });
    probe("a2d_f32_wrapn_far", "tex2d_f32", (Kern)p_tex2d<float>, "a_f32_wrapn", t_f32_wrapn, [&](int l) { return F((256 * l + 3.5f) / 256, 0.5f / 256); });
    probe("a2d_f32_wrapn_row", "tex2d_f32", (Kern)p_tex2d<float>, "a_f32_wrapn", t_f32_wrapn, [&](int l) { return F((l + 0.5f) / 256, 0.5f / 256); });
    probe("a2d_f32_mirrorn_neg", "tex2d_f32", (Kern)p_tex2d<float>, "a_f32_mirrorn", t_f32_mirn, [&](int l) { return F((l - 16 + 0.5f) / 256, 0.5f / 256); });
    probe("a2d_f32_linwrapn_edge", "tex2d_f32", (Kern)p_tex2d<float>, "a_f32_linwrapn", t_f32_linwrapn, [&](int l) { return F((240 + l + 1.0f) / 256, 1.0f / 256); });
    // tld4 (tex2Dgather): the 2x2 footprint of bilinear filtering, component 0.
    probe("a2d_f32_tld4_row_mid", "tld4", (Kern)p_tld4, "a_f32", t_f32, [&](int l) { return F(l + 1.0f, 1.0f); });
    probe("a2d_f32_tld4_t8x4_mid", "tld4", (Kern)p_tld4, "a_f32", t_f32, [&](int l) { return F(l % 8 + 1.0f, l / 8 + 1.0f); });
    probe("a2d_f32_tld4_row_centre", "tld4", (Kern)p_tld4, "a_f32", t_f32, [&](int l) { return F(l + 0.5f, 0.5f); });
    // 3-D array 32^3 float.
    probe("a3d_f32_point_row", "tex3d_f32", (Kern)p_tex3d<float>, "a3", t3, [&](int l) { return F(l + 0.5f, 0.5f, 0.5f); });
    probe("a3d_f32_point_col", "tex3d_f32", (Kern)p_tex3d<float>, "a3", t3, [&](int l) { return F(0.5f, l + 0.5f, 0.5f); });
    probe("a3d_f32_point_depth", "tex3d_f32", (Kern)p_tex3d<float>, "a3", t3, [&](int l) { return F(0.5f, 0.5f, l + 0.5f); });
    probe("a3d_f32_point_t8x4", "tex3d_f32", (Kern)p_tex3d<float>, "a3", t3, [&](int l) { return F(l % 8 + 0.5f, l / 8 + 0.5f, 0.5f); });
    probe("a3d_f32_point_t8x4z", "tex3d_f32", (Kern)p_tex3d<float>, "a3", t3, [&](int l) { return F(l % 8 + 0.5f, 0.5f, l / 8 + 0.5f); });
    probe("a3d_f32_point_t4x4x2", "tex3d_f32", (Kern)p_tex3d<float>, "a3", t3, [&](int l) { return F(l % 4 + 0.5f, (l / 4) % 4 + 0.5f, l / 16 + 0.5f); });
    probe("a3d_f32_linear_row_mid", "tex3d_f32", (Kern)p_tex3d<float>, "a3_lin", t3_lin, [&](int l) { return F(l + 1.0f, 1.0f, 1.0f); });
    probe("a3d_f32_linear_t8x4_mid", "tex3d_f32", (Kern)p_tex3d<float>, "a3_lin", t3_lin, [&](int l) { return F(l % 8 + 1.0f, l / 8 + 1.0f, 1.0f); });
    // Layered 2-D 64x64x8 float.
    probe("a2dl_f32_point_row_l3", "texa2d_f32", (Kern)p_texa2d<float>, "al", tl, [&](int l) { return F(l + 0.5f, 0.5f, 0, 3); });
    probe("a2dl_f32_point_layers", "texa2d_f32", (Kern)p_texa2d<float>, "al", tl, [&](int l) { return F(0.5f, 0.5f, 0, l % 8); });
    probe("a2dl_f32_point_t8x4_l5", "texa2d_f32", (Kern)p_texa2d<float>, "al", tl, [&](int l) { return F(l % 8 + 0.5f, l / 8 + 0.5f, 0, 5); });
    // tex1Dfetch on linear memory (integer coordinates).
    probe("lin_f32_row", "tex1dfetch_f32", (Kern)p_tex1dfetch<float>, "lin_f32", tlin_f32, [&](int l) { return F(l, 0); });
    probe("lin_f32_row_off1", "tex1dfetch_f32", (Kern)p_tex1dfetch<float>, "lin_f32", tlin_f32, [&](int l) { return F(l + 1, 0); });
    probe("lin_f32_row_off8", "tex1dfetch_f32", (Kern)p_tex1dfetch<float>, "lin_f32", tlin_f32, [&](int l) { return F(l + 8, 0); });
    probe("lin_f32_stride2", "tex1dfetch_f32", (Kern)p_tex1dfetch<float>, "lin_f32", tlin_f32, [&](int l) { return F(2 * l, 0); });
    probe("lin_f32_stride8", "tex1dfetch_f32", (Kern)p_tex1dfetch<float>, "lin_f32", tlin_f32, [&](int l) { return F(8 * l, 0); });
    probe("lin_f32_stride32", "tex1dfetch_f32", (Kern)p_tex1dfetch<float>, "lin_f32", tlin_f32, [&](int l) { return F(32 * l, 0); });
    probe("lin_f32_bcast", "tex1dfetch_f32", (Kern)p_tex1dfetch<float>, "lin_f32", tlin_f32, [&](int l) { return F(100, 0); });
    probe("lin_f32_scatter", "tex1dfetch_f32", (Kern)p_tex1dfetch<float>, "lin_f32", tlin_f32, [&](int l) { return F((l * 997) % 65536, 0); });
    probe("lin_f32_half", "tex1dfetch_f32", (Kern)p_tex1dfetch<float>, "lin_f32", tlin_f32, [&](int l) { return F(l, 0); }, 16);
    probe("lin_f32_out", "tex1dfetch_f32", (Kern)p_tex1dfetch<float>, "lin_f32", tlin_f32, [&](int l) { return F(65536 + l, 0); });
    probe("lin_f4_row", "tex1dfetch_f4", (Kern)p_tex1dfetch<float4>, "lin_f4", tlin_f4, [&](int l) { return F(l, 0); });
    probe("lin_f4_stride2", "tex1dfetch_f4", (Kern)p_tex1dfetch<float4>, "lin_f4", tlin_f4, [&](int l) { return F(2 * l, 0); });
    // tex1D on a 1-D CUDA array.
    probe("a1d_f32_point_row", "tex1d_f32", (Kern)p_tex1d<float>, "a1", t1, [&](int l) { return F(l + 0.5f, 0); });
    probe("a1d_f32_point_stride8", "tex1d_f32", (Kern)p_tex1d<float>, "a1", t1, [&](int l) { return F(8 * l + 0.5f, 0); });
    probe("a1d_f32_linear_row_mid", "tex1d_f32", (Kern)p_tex1d<float>, "a1_lin", t1_lin, [&](int l) { return F(l + 1.0f, 0); });
    // Pitch-linear 2-D (cudaMallocPitch) float.
    for (auto& p : pats2) for (auto s : some) if (!strcmp(p.name, s)) {
        snprintf(nm, sizeof nm, "pitch_f32_point_%s", p.name);
        probe(strdup(nm), "tex2d_f32", (Kern)p_tex2d<float>, "pitch_f32", tp, centre(p.at), p.lanes);
    }
    probe("pitch_f32_linear_row_mid", "tex2d_f32", (Kern)p_tex2d<float>, "pitch_f32_lin", tp_lin, [&](int l) { return F(l + 1.0f, 1.0f); });
    probe("pitch_f32_linear_t8x4_mid", "tex2d_f32", (Kern)p_tex2d<float>, "pitch_f32_lin", tp_lin, [&](int l) { return F(l % 8 + 1.0f, l / 8 + 1.0f); });
    // Surfaces (x in bytes).
    for (auto& p : pats2) for (auto s : some) if (!strcmp(p.name, s)) {
        auto bytes4 = [f = p.at](int l) { float4 q = f(l); return make_float4(4 * q.x, q.y, 0, 0); };
        snprintf(nm, sizeof nm, "surf_f32_ld_%s", p.name);
        probe(strdup(nm), "suld_f32", (Kern)p_suld<float>, "s_f32", s_f32, bytes4, p.lanes);
        snprintf(nm, sizeof nm, "surf_f32_st_%s", p.name);
        probe(strdup(nm), "sust_f32", (Kern)p_sust<float>, "s_f32", s_f32, bytes4, p.lanes);
        snprintf(nm, sizeof nm, "surf_u84_ld_%s", p.name);
        probe(strdup(nm), "suld_u84", (Kern)p_suld<uchar4>, "s_u84", s_u84, bytes4, p.lanes);
    }

    // examples/texture.cu, whole launches.
    {
        const int w = 1024, h = 1024;
        float *img, *out; CK(cudaMalloc(&img, w * h * 4)); CK(cudaMalloc(&out, w * h * 4));
        CK(cudaMemset(img, 0, w * h * 4));
        cudaArray_t ai; CK(cudaMallocArray(&ai, &ch_f, w, h));
        std::vector<float> z(w * h, 0.f);
        CK(cudaMemcpy2DToArray(ai, 0, 0, z.data(), w * 4, w * 4, h, cudaMemcpyHostToDevice));
        auto ti = tex_array(ai, C, P, 0);
        dim3 blk(32, 8), grd(w / 32, h / 8);
        ex::conv_global<<<grd, blk>>>(img, out, w, h); CK(cudaDeviceSynchronize());
        fprintf(manifest, "conv_global,conv_global,img_global,32,32x128,32x8\n");
        ex::conv_texture<<<grd, blk>>>(ti, out, w, h); CK(cudaDeviceSynchronize());
        fprintf(manifest, "conv_texture,conv_texture,img_array,32,32x128,32x8\n");
        dim3 blk2(16, 16), grd2(w / 16, h / 16);
        ex::conv_texture<<<grd2, blk2>>>(ti, out, w, h); CK(cudaDeviceSynchronize());
        fprintf(manifest, "conv_texture_16x16,conv_texture,img_array,32,64x64,16x16\n");
        ex::conv_global<<<grd2, blk2>>>(img, out, w, h); CK(cudaDeviceSynchronize());
        fprintf(manifest, "conv_global_16x16,conv_global,img_global,32,64x64,16x16\n");
    }
    {
        const int n = 65536;
        float *data, *out; int* idx;
        CK(cudaMalloc(&data, n * 4)); CK(cudaMalloc(&out, n * 4)); CK(cudaMalloc(&idx, n * 4));
        std::vector<int> hi(n);
        for (int j = 0; j < n; j++) hi[j] = (int)(mix(7, j) % n);
        CK(cudaMemcpy(idx, hi.data(), n * 4, cudaMemcpyHostToDevice));
        cudaResourceDesc res{}; res.resType = cudaResourceTypeLinear; res.res.linear.devPtr = data;
        res.res.linear.desc = ch_f; res.res.linear.sizeInBytes = n * 4;
        cudaTextureDesc td{}; td.readMode = cudaReadModeElementType;
        cudaTextureObject_t t; CK(cudaCreateTextureObject(&t, &res, &td, nullptr));
        ex::gather_global<<<n / 256, 256>>>(data, idx, out, n); CK(cudaDeviceSynchronize());
        fprintf(manifest, "gather_global,gather_global,data_global,32,256,256\n");
        ex::gather_texture<<<n / 256, 256>>>(t, idx, out, n); CK(cudaDeviceSynchronize());
        fprintf(manifest, "gather_texture,gather_texture,data_linear,32,256,256\n");
        for (int j = 0; j < n; j++) hi[j] = j;  // iota: coalesced
        CK(cudaMemcpy(idx, hi.data(), n * 4, cudaMemcpyHostToDevice));
        ex::gather_texture<<<n / 256, 256>>>(t, idx, out, n); CK(cudaDeviceSynchronize());
        fprintf(manifest, "gather_texture_iota,gather_texture,data_linear,32,256,256\n");
    }
    fclose(manifest);
    printf("done\n");
    return 0;
}
