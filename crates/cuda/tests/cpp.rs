//! The C++ that real kernels use, through the source front end: math functions, integer
//! intrinsics, atomics, warp shuffles and votes, cooperative groups, functional casts,
//! `auto`, namespaces, `printf`, `__half`. Values are read back through the addresses of
//! `p[VALUE] = 0` stores to a `char* p` parameter.

use warpscope_cuda::{Error, Source, DEFAULT_MAX_STEPS};
use warpscope_model::{Op, Space, WarpAccess};

type Run = (warpscope_cuda::Kernel, Vec<(usize, WarpAccess)>);

fn run(
    src: &str,
    kernel: &str,
    args: &[(&str, &str)],
    grid: u32,
    block: u32,
) -> Result<Run, Error> {
    let s = Source::parse("test.cu", src, &[])?;
    let k = s.kernel(kernel)?;
    let args: Vec<(String, String)> = args
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
    let cfg = k.configure(
        &args,
        &[],
        [grid, 1, 1],
        [block, 1, 1],
        1024,
        DEFAULT_MAX_STEPS,
    )?;
    let mut out = Vec::new();
    k.run(&cfg, &mut |s, a| out.push((s, *a)))?;
    Ok((k, out))
}

/// For each 1-byte global store, the value each active lane stored at (its index into `p`).
fn probe_lanes(src: &str, block: u32) -> Vec<Vec<i64>> {
    let (_, acc) = run(src, "k", &[], 1, block).unwrap();
    let spacing = 1u64 << 36;
    acc.iter()
        .filter(|(_, a)| a.space == Space::Global && a.op == Op::Store && a.width == 1)
        .map(|(_, a)| {
            a.active()
                .map(|(_, x)| ((x - (1 << 40)) % spacing) as i64)
                .collect()
        })
        .collect()
}

/// Lane 0's value of each probe.
fn probe(src: &str) -> Vec<i64> {
    probe_lanes(src, 32).into_iter().map(|v| v[0]).collect()
}

#[test]
fn math_functions_take_the_host_libm_values() {
    let src = r#"
__global__ void k(char* p) {
  p[(int)sqrtf(144.0f)] = 0;                 // 12
  p[(int)(sqrt(2.0) * 1000)] = 0;            // 1414
  p[(int)(expf(1.0f) * 100)] = 0;            // 271
  p[(int)(logf(100.0f) * 100)] = 0;          // 460
  p[(int)powf(2.0f, 10.0f)] = 0;             // 1024
  p[(int)(rsqrtf(4.0f) * 10)] = 0;           // 5
  p[(int)fabsf(-7.5f)] = 0;                  // 7
  p[(int)fminf(3.0f, 9.0f) + (int)fmaxf(3.0f, 9.0f)] = 0;  // 12
  p[(int)floorf(-2.5f) + 10] = 0;            // 7
  p[(int)ceilf(2.1f)] = 0;                   // 3
  p[(int)(sinf(1.0f) * 1000)] = 0;           // 841
  p[(int)(cosf(0.0f) * 10)] = 0;             // 10
  p[(int)__log2f(1024.0f)] = 0;              // 10
  p[(int)__powf(3.0f, 3.0f)] = 0;            // 27
  p[(int)(__expf(2.0f) * 10)] = 0;           // 73
  p[(int)__fdividef(10.0f, 4.0f)] = 0;       // 2
  p[(int)(__saturatef(1.7f) * 10) + (int)(__saturatef(-3.0f) * 10)] = 0;  // 10
  p[(int)exp(0.0)] = 0;                      // 1
}"#;
    assert_eq!(
        probe(src),
        vec![12, 1414, 271, 460, 1024, 5, 7, 12, 7, 3, 841, 10, 10, 27, 73, 2, 10, 1]
    );
}

#[test]
fn integer_intrinsics() {
    let src = r#"
__global__ void k(char* p) {
  p[__popc(0xF0F0u)] = 0;                    // 8
  p[__popcll(0xFFFFFFFFFFull)] = 0;          // 40
  p[__clz(1)] = 0;                           // 31
  p[__clz(0)] = 0;                           // 32
  p[__ffs(0x40)] = 0;                        // 7
  p[__ffs(0)] = 0;                           // 0
  p[__brev(1u) >> 24] = 0;                   // 128
  p[__mul24(1000, 3)] = 0;                   // 3000
  p[__umul24(0x1000001u, 5u)] = 0;           // 5: bit 24 is dropped
  p[__mulhi(0x40000000, 16)] = 0;            // 4
  p[__umulhi(0xFFFFFFFFu, 2u)] = 0;          // 1
}"#;
    assert_eq!(probe(src), vec![8, 40, 31, 32, 7, 0, 128, 3000, 5, 4, 1]);
}

#[test]
fn functional_casts_auto_namespaces_printf_and_half() {
    let src = r#"
namespace geo {
  __device__ int twice(int x) { return 2 * x; }
  namespace inner { __device__ int thrice(int x) { return 3 * x; } }
}
using namespace geo;
__global__ void k(char* p) {
  float f = float(7) / 2;                    // 3.5
  p[int(f * 10)] = 0;                        // 35
  auto a = threadIdx.x + 5u;                 // unsigned
  p[a] = 0;                                  // 5 on lane 0
  auto g = 2.5f;
  p[int(g * 2)] = 0;                         // 5
  p[geo::twice(4)] = 0;                      // 8
  p[geo::inner::thrice(4) + twice(1)] = 0;   // 14
  printf("thread %d value %f\n", threadIdx.x, f);
  __half h = __float2half(1.5f);
  __half h2 = __hmul(__hadd(h, h), __float2half(2.0f));   // 6
  p[(int)__half2float(h2)] = 0;              // 6
  __nv_bfloat16 b = __float2bfloat16(4.0f);
  p[(int)__bfloat162float(b)] = 0;           // 4
  unsigned u = unsigned(-1) >> 28;
  p[u] = 0;                                  // 15
}"#;
    assert_eq!(probe(src), vec![35, 5, 5, 8, 14, 6, 4, 15]);
}

#[test]
fn warp_shuffles_and_votes() {
    let src = r#"
__global__ void k(char* p) {
  int lane = threadIdx.x % 32;
  p[__shfl_sync(0xffffffff, lane * 2, 3)] = 0;          // 6 on every lane
  p[__shfl_down_sync(0xffffffff, lane, 4)] = 0;          // lane+4; lanes 28-31 keep their own
  p[__shfl_up_sync(0xffffffff, lane, 1)] = 0;            // lane-1; lane 0 keeps 0
  p[__shfl_xor_sync(0xffffffff, lane, 1)] = 0;           // lane^1
  p[__shfl_down_sync(0xffffffff, lane, 2, 8)] = 0;       // within 8-lane segments
  p[__popc(__ballot_sync(0xffffffff, lane < 10))] = 0;   // 10
  if (lane < 16) {
    p[__popc(__activemask())] = 0;                       // 16
    p[__all_sync(__activemask(), lane < 16) * 10 + __any_sync(__activemask(), lane == 3)] = 0;  // 11
  }
  __syncwarp();
  float v = lane;
  for (int off = 16; off > 0; off >>= 1) v += __shfl_xor_sync(0xffffffff, v, off);
  p[(int)v] = 0;                                         // 496 on every lane
}"#;
    let v = probe_lanes(src, 32);
    assert_eq!(v[0], vec![6; 32]);
    let down: Vec<i64> = (0..32).map(|l| if l < 28 { l + 4 } else { l }).collect();
    assert_eq!(v[1], down);
    let up: Vec<i64> = (0..32).map(|l| if l == 0 { 0 } else { l - 1 }).collect();
    assert_eq!(v[2], up);
    assert_eq!(v[3], (0..32).map(|l| l ^ 1).collect::<Vec<i64>>());
    let seg: Vec<i64> = (0..32).map(|l| if l % 8 < 6 { l + 2 } else { l }).collect();
    assert_eq!(v[4], seg);
    assert_eq!(v[5], vec![10; 32]);
    assert_eq!(v[6], vec![16; 16]);
    assert_eq!(v[7], vec![11; 16]);
    assert_eq!(v[8], vec![496; 32]);
}

/// Atomics: one `atomic` access per warp, counted as their own operation, and the values of
/// lanes applied in order (each lane gets the old value).
#[test]
fn atomics_on_global_and_shared_memory() {
    let src = r#"
__global__ void k(char* p, unsigned int* count, int* m) {
  __shared__ int s[4];
  if (threadIdx.x < 4) s[threadIdx.x] = 0;
  __syncthreads();
  unsigned int old = atomicAdd(count, 1u);     // lanes get 0..31 in order
  p[old] = 0;
  atomicAdd(&s[threadIdx.x % 4], 2);
  __syncthreads();
  p[s[1]] = 0;                                 // 8 lanes × 2 = 16
  atomicMax(&m[0], (int)threadIdx.x);
  atomicMin(&m[1], -(int)threadIdx.x);
  p[atomicExch(&m[2], 7)] = 0;                 // lane 0 reads 0, the rest 7
  p[atomicCAS(&m[3], 0, 5) + atomicSub(&m[4], 1) + 100] = 0;  // lane 0: 0 + 0 + 100
  p[atomicMax(&m[0], 0)] = 0;                  // 31
  p[atomicMin(&m[1], 0) + 100] = 0;            // -31 + 100 = 69
  p[atomicInc((unsigned int*)&m[5], 3u)] = 0;  // 0,1,2,3,0,1,…
  p[atomicOr(&m[6], 1 << (threadIdx.x % 8)) + atomicAnd(&m[7], 0) + atomicXor(&m[7], 1)] = 0;
}"#;
    let (k, acc) = run(src, "k", &[], 1, 32).unwrap();
    let sites = k.sites();
    let atomics: Vec<_> = acc.iter().filter(|(_, a)| a.op == Op::Atomic).collect();
    // 13 atomic calls, each one access by the one warp; the shared one in shared memory.
    assert_eq!(atomics.len(), 13);
    assert_eq!(
        atomics
            .iter()
            .filter(|(_, a)| a.space == Space::Shared)
            .count(),
        1
    );
    assert!(atomics
        .iter()
        .all(|(_, a)| a.mask == u32::MAX && a.width == 4));
    let s = &sites[atomics[0].0];
    assert_eq!(s.op, Op::Atomic);
    assert_eq!(s.text, "atomicAdd(count, 1u)");
    let spacing = 1u64 << 36;
    let probes: Vec<Vec<i64>> = acc
        .iter()
        .filter(|(_, a)| a.space == Space::Global && a.op == Op::Store && a.width == 1)
        .map(|(_, a)| {
            a.active()
                .map(|(_, x)| ((x - (1 << 40)) % spacing) as i64)
                .collect()
        })
        .collect();
    assert_eq!(probes[0], (0..32).collect::<Vec<i64>>());
    assert_eq!(probes[1], vec![16; 32]);
    let exch: Vec<i64> = (0..32).map(|l| if l == 0 { 0 } else { 7 }).collect();
    assert_eq!(probes[2], exch);
    assert_eq!(probes[3][0], 100);
    // Lane 1: CAS sees 5 (no swap), atomicSub sees -1.
    assert_eq!(probes[3][1], 5 - 1 + 100);
    assert_eq!(probes[4], vec![31; 32]);
    assert_eq!(probes[5], vec![69; 32]);
    assert_eq!(probes[6], (0..32).map(|l| l % 4).collect::<Vec<i64>>());
}

/// A 256-bin histogram with shared atomics (CC 9.0): 32 lanes hitting 32 different bins of
/// consecutive words are one request and one wavefront; the global flush one atomic per bin.
#[test]
fn shared_histogram_counts_atomics() {
    let src = r#"
__global__ void hist(const unsigned char* data, int n, unsigned int* out) {
  __shared__ unsigned int bins[256];
  for (int b = threadIdx.x; b < 256; b += blockDim.x) bins[b] = 0;
  __syncthreads();
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    atomicAdd(&bins[data[i]], 1u);
  __syncthreads();
  for (int b = threadIdx.x; b < 256; b += blockDim.x) atomicAdd(&out[b], bins[b]);
}"#;
    let (k, acc) = run(src, "hist", &[("n", "4096")], 4, 256).unwrap();
    let sites = k.sites();
    let count = |line: u32, space: Space| {
        acc.iter()
            .filter(|(s, a)| sites[*s].loc.line == line && a.op == Op::Atomic && a.space == space)
            .count()
    };
    // 4096 elements / 32 lanes = 128 warp-level shared atomics; 4 blocks × 8 warps global.
    assert_eq!(count(7, Space::Shared), 128);
    assert_eq!(count(9, Space::Global), 32);
}

/// cuda-samples style reduction: cooperative groups, a tile's shfl_down and cg::reduce.
#[test]
fn cooperative_groups_reduction() {
    let src = r#"
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;
__global__ void k(char* p, const float* in, float* out) {
  cg::thread_block cta = cg::this_thread_block();
  cg::thread_block_tile<32> tile = cg::tiled_partition<32>(cta);
  __shared__ float warp_sums[8];
  float v = in[cta.thread_rank()] + 1.0f;                 // 1 per thread
  for (int off = tile.size() / 2; off > 0; off /= 2) v += tile.shfl_down(v, off);
  if (tile.thread_rank() == 0) warp_sums[tile.meta_group_rank()] = v;
  cg::sync(cta);
  p[(int)v] = 0;                                          // lane 0: 32
  cta.sync();
  int r = cg::reduce(tile, (int)tile.thread_rank(), cg::plus<int>());
  p[r] = 0;                                               // 496 on every lane
  auto t4 = cg::tiled_partition<4>(cta);
  p[t4.thread_rank() + 10 * t4.meta_group_rank()] = 0;
  p[cg::reduce(t4, (int)t4.thread_rank(), cg::greater<int>())] = 0;   // 3
  p[cta.size() + tile.meta_group_size()] = 0;             // 64 + 2
  if (cta.thread_rank() == 0) out[0] = warp_sums[0];
}"#;
    let (_, acc) = run(src, "k", &[], 1, 64).unwrap();
    let spacing = 1u64 << 36;
    let probes: Vec<Vec<i64>> = acc
        .iter()
        .filter(|(_, a)| a.space == Space::Global && a.op == Op::Store && a.width == 1)
        .map(|(_, a)| {
            a.active()
                .map(|(_, x)| ((x - (1 << 40)) % spacing) as i64)
                .collect()
        })
        .collect();
    // Two warps, each running to the next barrier: the probe between the barriers comes
    // from warp 0 then warp 1; after the last barrier warp 0 makes its four, then warp 1.
    assert_eq!(probes[0][0], 32);
    assert_eq!(probes[2], vec![496; 32]);
    let t4: Vec<i64> = (0..32).map(|l| l % 4 + 10 * (l / 4)).collect();
    assert_eq!(probes[3], t4);
    assert_eq!(probes[4], vec![3; 32]);
    assert_eq!(probes[5], vec![66; 32]);
    assert_eq!(probes[6], vec![496; 32]);
    // The float loads of `in`: one per warp, 4 sectors each (32 consecutive floats).
    let loads: Vec<_> = acc
        .iter()
        .filter(|(_, a)| a.space == Space::Global && a.op == Op::Load)
        .collect();
    assert_eq!(loads.len(), 2);
    assert_eq!(loads[1].1.addrs[0] - loads[0].1.addrs[0], 128);
}

/// Overloads are chosen by C++'s ranking: `idx(1.0f)` runs `idx(float)` (exact) rather than
/// `idx(int)`, `idx('a')` promotes to `idx(int)`; with `f(int, float)` and `f(float, int)`
/// the call `f(1, 1)` is ambiguous and the error lists both.
#[test]
fn overloads_follow_cpp_ranking() {
    let src = r#"
__device__ int idx(int i) { return i * 2; }
__device__ int idx(float x) { return (int)x + 100; }
__device__ int idx(double x) { return (int)x + 200; }
__global__ void k(char* p) {
  p[idx(1.0f)] = 0;     // 101
  p[idx(3)] = 0;        // 6
  p[idx((char)2)] = 0;  // 4: char promotes to int
  p[idx(1.0)] = 0;      // 201
  p[idx(7u)] = 0;       // unsigned → int, float, double are all conversions: ambiguous? no:
}"#;
    // 7u converts to int, float and double alike: ambiguous, as nvcc says.
    let e = run(src, "k", &[], 1, 32)
        .err()
        .expect("ambiguous")
        .to_string();
    assert!(e.contains("test.cu:10:5"), "{e}");
    assert!(
        e.contains("the call of idx(unsigned int) is ambiguous"),
        "{e}"
    );
    assert!(e.contains("idx(int) at test.cu:2:1"), "{e}");
    assert!(e.contains("idx(double) at test.cu:4:1"), "{e}");
    let ok = src.replace("  p[idx(7u)] = 0;", "");
    assert_eq!(probe(&ok), vec![101, 6, 4, 201]);
}

/// A float index through the chosen overload: 4 sectors per request, not the 5 a wrong
/// `idx(int)` pick gave before (CC 9.0: 32 consecutive floats from an aligned base).
#[test]
fn overload_choice_changes_the_access() {
    let src = r#"
__device__ int idx(int i) { return i * 9; }
__device__ int idx(float x) { return (int)x; }
__global__ void k(float* a) { a[idx((float)threadIdx.x)] = 1.0f; }"#;
    let (_, acc) = run(src, "k", &[], 1, 32).unwrap();
    let a = acc[0].1;
    let lanes: Vec<u64> = a.active().map(|(_, x)| x).collect();
    assert!(lanes.windows(2).all(|w| w[1] == w[0] + 4));
    let sectors: std::collections::BTreeSet<u64> = lanes.iter().map(|x| x / 32).collect();
    assert_eq!(sectors.len(), 4);
}
