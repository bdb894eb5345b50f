// What an H100 counts for wgmma's shared-memory operand reads (see README.md beside this).
//
// One block of one warpgroup (128 threads) fills A (64x16 f16) and B (16x64 f16) into shared
// memory in a layout, then runs REPS back-to-back
//   wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16
// with hand-built matrix descriptors [PTX ISA 9.7.15.5.1.2], and stores D (f32) to global
// memory, which the host checks exactly against REPS * A*B (small integers: exact sums).
// Each layout is compiled twice, REPS = 1 and REPS = 9: the difference of any counter over 8
// is what one wgmma adds.
//
// Layouts (same for A and B; "K-major" unless said; offsets before the swizzle, which XORs
// address bits [4, 4+b) with bits [7, 7+b) of the absolute shared address, b = 3/2/1 for
// 128B/64B/32B):
//   none     no swizzle, core matrices (8 rows x 16 B) packed: LBO 128, SBO 256
//   sw32     32B swizzle, rows 32 B apart, SBO 256
//   sw64     64B swizzle, rows 64 B apart, SBO 512
//   sw128    128B swizzle, rows 128 B apart, SBO 1024 (the CUTLASS/TMA layout)
//   samebank no swizzle, every core matrix on a 1024-byte boundary (LBO 1024, SBO 2048):
//            all of them start at bank 0 - the deliberately conflicting candidate (conflicts
//            if the tensor core read more than one core matrix per pass)
//   mn128    M-/N-major (imm-trans-a = imm-trans-b = 1), 128B swizzle, SBO 1024
//   rs       A from registers (its m16 fragment per warp), B as in "none"
//
// Build: nvcc -O3 -gencode=arch=compute_90a,code=sm_90a -o wg wgmma_smem.cu
#include <cuda_fp16.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK(x)                                                                          \
  do {                                                                                    \
    cudaError_t e_ = (x);                                                                 \
    if (e_ != cudaSuccess) {                                                              \
      printf("CUDA error %s at %s:%d\n", cudaGetErrorString(e_), __FILE__, __LINE__);     \
      exit(1);                                                                            \
    }                                                                                     \
  } while (0)

constexpr int M = 64, N = 64, K = 16;
constexpr int REGION = 16384;  // bytes of shared memory for A, then for B

enum { NONE, SW32, SW64, SW128, SAMEBANK, MN128, RS };

struct Geo {
  uint32_t mode;   // descriptor bits 62-63: 0 none, 1 128B, 2 64B, 3 32B
  uint32_t lbo;    // bytes
  uint32_t sbo;    // bytes
  uint32_t pitch;  // bytes between the rows of a core matrix (K-major), 0: MN-major
};

__host__ __device__ inline Geo geo(int l) {
  switch (l) {
    case SW32: return {3, 16, 256, 32};
    case SW64: return {2, 16, 512, 64};
    case SW128: return {1, 16, 1024, 128};
    case SAMEBANK: return {0, 1024, 2048, 16};
    case MN128: return {1, 8192, 1024, 0};
    default: return {0, 128, 256, 16};  // NONE, and B of RS
  }
}

// Byte offset (before the swizzle) of element (row, k) of a 64-row operand (A: row = m;
// B: row = n), 2-byte elements.
__host__ __device__ inline uint32_t offset(int l, int row, int k) {
  Geo g = geo(l);
  if (g.pitch == 0) {
    // MN-major 128B: ((T,8,m),(8,k)):((1,T,LBO),(8T,SBO)), T = 8 elements.
    return (row % 64) * 2 + (k % 8) * 128 + (k / 8) * g.sbo + (row / 64) * g.lbo;
  }
  if (g.mode == 0) {
    // ((8,m),(T,2k)):((1T,SBO),(1,LBO))
    return (row / 8) * g.sbo + (k / 8) * g.lbo + (row % 8) * 16 + (k % 8) * 2;
  }
  // ((8,m),(T,2k)):((pitch/16 T,SBO),(1,T))
  return (row / 8) * g.sbo + (row % 8) * g.pitch + k * 2;
}

__device__ inline uint32_t swizzle(uint32_t mode, uint32_t a) {
  uint32_t bits = mode == 1 ? 3 : mode == 2 ? 2 : mode == 3 ? 1 : 0;
  uint32_t mask = (1u << bits) - 1;
  return a ^ (((a >> 7) & mask) << 4);
}

__device__ inline uint64_t desc(uint32_t start, Geo g) {
  return (uint64_t)((start >> 4) & 0x3FFF) | ((uint64_t)((g.lbo >> 4) & 0x3FFF) << 16) |
         ((uint64_t)((g.sbo >> 4) & 0x3FFF) << 32) | ((uint64_t)g.mode << 62);
}

#define D32                                                                                  \
  "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, " \
  "%19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}"
#define DOUT(d)                                                                           \
  "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),     \
      "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]),          \
      "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]),       \
      "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]),       \
      "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]),       \
      "+f"(d[31])

template <int L, int REPS>
__device__ __forceinline__ void body(const __half* A, const __half* B, float* D) {
  __shared__ __align__(1024) uint8_t smem[2 * REGION];
  const int t = threadIdx.x;
  const uint32_t base = (uint32_t)__cvta_generic_to_shared(smem);
  const int la = L == RS ? NONE : L;
  const Geo ga = geo(la), gb = geo(L == RS ? NONE : L);
  // Fill: element e of A is (m = e / 16, k = e % 16); B is stored [n][k] (K-major).
  for (int e = t; e < M * K; e += 128) {
    int row = e / K, k = e % K;
    uint32_t a = swizzle(ga.mode, base + offset(la, row, k));
    uint32_t b = swizzle(gb.mode, base + REGION + offset(L == RS ? NONE : L, row, k));
    *(__half*)(smem + (a - base)) = A[e];
    *(__half*)(smem + (b - base)) = B[e];
  }
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
  __syncthreads();
  const uint64_t da = desc(base, ga), db = desc(base + REGION, gb);
  const int w = t / 32, lane = t % 32, g = lane / 4, q = lane % 4;
  uint32_t ar[4];
  if (L == RS) {
    // m64nNk16 A fragment: warp w holds rows 16w..16w+15 as mma.m16n8k16's A.
    for (int j = 0; j < 4; ++j) {
      int row = 16 * w + g + 8 * (j % 2), k = 2 * q + 8 * (j / 2);
      __half2 h = __halves2half2(A[row * K + k], A[row * K + k + 1]);
      ar[j] = *(uint32_t*)&h;
    }
  }
  float d[32];
  for (int i = 0; i < 32; ++i) d[i] = 0.f;
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
  for (int r = 0; r < REPS; ++r) {
    if (L == RS) {
      asm volatile("wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 " D32
                   ", {%32, %33, %34, %35}, %36, 1, 1, 1, 0;\n"
                   : DOUT(d)
                   : "r"(ar[0]), "r"(ar[1]), "r"(ar[2]), "r"(ar[3]), "l"(db)
                   : "memory");
    } else if (L == MN128) {
      asm volatile("wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 " D32
                   ", %32, %33, 1, 1, 1, 1, 1;\n"
                   : DOUT(d)
                   : "l"(da), "l"(db)
                   : "memory");
    } else {
      asm volatile("wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 " D32
                   ", %32, %33, 1, 1, 1, 0, 0;\n"
                   : DOUT(d)
                   : "l"(da), "l"(db)
                   : "memory");
    }
  }
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
  asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
  // D fragment of m64nNk16 (f32): register i is row 16w + g + 8((i/2)%2), column
  // 8(i/4) + 2q + i%2.
  for (int i = 0; i < 32; ++i) {
    int row = 16 * w + g + 8 * ((i / 2) % 2), col = 8 * (i / 4) + 2 * q + i % 2;
    D[row * N + col] = d[i];
  }
}

#define KERNELS(L, name)                                                                   \
  extern "C" __global__ void __launch_bounds__(128, 1)                                     \
      wg_##name##_r1(const __half* A, const __half* B, float* D) {                         \
    body<L, 1>(A, B, D);                                                                   \
  }                                                                                        \
  extern "C" __global__ void __launch_bounds__(128, 1)                                     \
      wg_##name##_r9(const __half* A, const __half* B, float* D) {                         \
    body<L, 9>(A, B, D);                                                                   \
  }

KERNELS(NONE, none)
KERNELS(SW32, sw32)
KERNELS(SW64, sw64)
KERNELS(SW128, sw128)
KERNELS(SAMEBANK, samebank)
KERNELS(MN128, mn128)
KERNELS(RS, rs)

typedef void (*Kernel)(const __half*, const __half*, float*);

int main() {
  // A[m][k] and B[k][n] small integers, B stored [n][k].
  std::vector<__half> ha(M * K), hb(N * K);
  std::vector<float> fa(M * K), fb(N * K);
  for (int m = 0; m < M; ++m)
    for (int k = 0; k < K; ++k) {
      float v = (float)((m * 37 + k * 11 + 5) % 9 - 4);
      fa[m * K + k] = v;
      ha[m * K + k] = __float2half(v);
    }
  for (int n = 0; n < N; ++n)
    for (int k = 0; k < K; ++k) {
      float v = (float)((n * 13 + k * 29 + 3) % 7 - 3);
      fb[n * K + k] = v;
      hb[n * K + k] = __float2half(v);
    }
  __half *da, *db;
  float* dd;
  CHECK(cudaMalloc(&da, M * K * sizeof(__half)));
  CHECK(cudaMalloc(&db, N * K * sizeof(__half)));
  CHECK(cudaMalloc(&dd, M * N * sizeof(float)));
  CHECK(cudaMemcpy(da, ha.data(), M * K * sizeof(__half), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(db, hb.data(), N * K * sizeof(__half), cudaMemcpyHostToDevice));
  struct {
    const char* name;
    Kernel k;
    int reps;
  } ks[] = {
      {"wg_none_r1", wg_none_r1, 1},         {"wg_none_r9", wg_none_r9, 9},
      {"wg_sw32_r1", wg_sw32_r1, 1},         {"wg_sw32_r9", wg_sw32_r9, 9},
      {"wg_sw64_r1", wg_sw64_r1, 1},         {"wg_sw64_r9", wg_sw64_r9, 9},
      {"wg_sw128_r1", wg_sw128_r1, 1},       {"wg_sw128_r9", wg_sw128_r9, 9},
      {"wg_samebank_r1", wg_samebank_r1, 1}, {"wg_samebank_r9", wg_samebank_r9, 9},
      {"wg_mn128_r1", wg_mn128_r1, 1},       {"wg_mn128_r9", wg_mn128_r9, 9},
      {"wg_rs_r1", wg_rs_r1, 1},             {"wg_rs_r9", wg_rs_r9, 9},
  };
  std::vector<float> hd(M * N);
  int bad_kernels = 0;
  for (auto& k : ks) {
    CHECK(cudaMemset(dd, 0xFF, M * N * sizeof(float)));  // poison: NaN
    k.k<<<1, 128>>>(da, db, dd);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaMemcpy(hd.data(), dd, M * N * sizeof(float), cudaMemcpyDeviceToHost));
    int bad = 0;
    for (int m = 0; m < M; ++m)
      for (int n = 0; n < N; ++n) {
        float ref = 0;
        for (int kk = 0; kk < K; ++kk) ref += fa[m * K + kk] * fb[n * K + kk];
        ref *= k.reps;
        if (hd[m * N + n] != ref) {
          if (bad < 3)
            printf("  %s: D[%d][%d] = %g, want %g\n", k.name, m, n, hd[m * N + n], ref);
          ++bad;
        }
      }
    printf("%-16s D %s (%d of %d elements wrong)\n", k.name, bad ? "WRONG" : "exact", bad, M * N);
    bad_kernels += bad != 0;
  }
  printf("D[0][0..3] of the last kernel: %g %g %g %g\n", hd[0], hd[1], hd[2], hd[3]);
  printf("%d kernels with a wrong D\n", bad_kernels);
  return 0;
}
