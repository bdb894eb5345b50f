//! Front-end tests: parse real kernels, run launches and check the warp accesses they yield.

use warpscope_cuda::{Error, Source, DEFAULT_MAX_STEPS};
use warpscope_model::{Op, Space, WarpAccess};

/// (site, access) pairs of a launch.
fn run(
    src: &str,
    kernel: &str,
    args: &[(&str, &str)],
    grid: [u32; 3],
    block: [u32; 3],
) -> Result<(warpscope_cuda::Kernel, Vec<(usize, WarpAccess)>), Error> {
    run_with(src, kernel, args, &[], grid, block, 0, &[])
}

#[allow(clippy::too_many_arguments)]
fn run_with(
    src: &str,
    kernel: &str,
    args: &[(&str, &str)],
    allocs: &[(&str, u64)],
    grid: [u32; 3],
    block: [u32; 3],
    dyn_smem: u64,
    defines: &[&str],
) -> Result<(warpscope_cuda::Kernel, Vec<(usize, WarpAccess)>), Error> {
    let defs: Vec<String> = defines.iter().map(|s| s.to_string()).collect();
    let s = Source::parse("test.cu", src, &defs)?;
    let k = s.kernel(kernel)?;
    let args: Vec<(String, String)> = args
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
    let allocs: Vec<(String, u64)> = allocs.iter().map(|(a, b)| (a.to_string(), *b)).collect();
    let cfg = k.configure(&args, &allocs, grid, block, dyn_smem, DEFAULT_MAX_STEPS)?;
    let mut out = Vec::new();
    k.run(&cfg, &mut |s, a| out.push((s, *a)))?;
    Ok((k, out))
}

fn lanes(a: &WarpAccess) -> Vec<u64> {
    a.active().map(|(_, x)| x).collect()
}

const HARRIS: &str = r#"
template <typename T>
__global__ void offset(T* a, int s)
{
  int i = blockDim.x * blockIdx.x + threadIdx.x + s;
  a[i] = a[i] + 1;
}

template <typename T>
__global__ void stride(T* a, int s)
{
  int i = (blockDim.x * blockIdx.x + threadIdx.x) * s;
  a[i] = a[i] + 1;
}
"#;

#[test]
fn harris_offset_gives_one_load_and_one_store_per_warp() {
    let (k, acc) = run(
        HARRIS,
        "offset<float>",
        &[("s", "1")],
        [2, 1, 1],
        [64, 1, 1],
    )
    .unwrap();
    assert_eq!(acc.len(), 2 * 2 * 2); // 2 blocks × 2 warps × (load + store)
    let sites = k.sites();
    let (s0, a0) = &acc[0];
    assert_eq!(sites[*s0].op, Op::Load);
    assert_eq!(sites[*s0].text, "a[i]");
    assert_eq!((sites[*s0].loc.line, sites[*s0].loc.col), (6, 10));
    assert_eq!(a0.width, 4);
    assert_eq!(a0.space, Space::Global);
    assert_eq!(a0.mask, u32::MAX);
    let l = lanes(a0);
    assert_eq!(l[0] % 256, 4, "offset 1 float from a 256-byte aligned base");
    assert!(l.windows(2).all(|w| w[1] == w[0] + 4));
    // Each warp runs to its end (there is no barrier): warp 0 loads then stores, then
    // warp 1.
    assert_eq!(sites[acc[1].0].op, Op::Store);
    assert_eq!((sites[acc[1].0].loc.line, sites[acc[1].0].loc.col), (6, 3));
    assert_eq!(sites[acc[2].0].op, Op::Load);
}

#[test]
fn harris_stride_double() {
    let (_, acc) = run(
        HARRIS,
        "stride<double>",
        &[("s", "3")],
        [1, 1, 1],
        [32, 1, 1],
    )
    .unwrap();
    let l = lanes(&acc[0].1);
    assert_eq!(acc[0].1.width, 8);
    assert_eq!(l[1] - l[0], 24);
}

#[test]
fn divergence_narrows_the_mask() {
    let src = r#"
__global__ void k(float* a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] = 1.0f;
  else if (i % 2 == 0) { a[i] = 2.0f; return; }
  for (int j = 0; j < threadIdx.x % 4; ++j) {
    if (j == 2) break;
    a[i + 64 * j] = 3.0f;
  }
}"#;
    let (k, acc) = run(src, "k", &[("n", "10")], [1, 1, 1], [32, 1, 1]).unwrap();
    let sites = k.sites();
    let first = acc.iter().find(|(s, _)| sites[*s].loc.line == 4).unwrap();
    assert_eq!(first.1.mask, (1 << 10) - 1);
    let second = acc.iter().find(|(s, _)| sites[*s].loc.line == 5).unwrap();
    assert_eq!(
        second.1.mask,
        0x5555_5555 & !((1u32 << 10) - 1),
        "even lanes from 10 on"
    );
    // The loop: lanes still alive (i < 10 or odd) with threadIdx.x % 4 > j; j = 0 and j = 1.
    let loop_acc: Vec<_> = acc
        .iter()
        .filter(|(s, _)| sites[*s].loc.line == 8)
        .collect();
    assert_eq!(loop_acc.len(), 2);
    let alive: u32 = ((1u32 << 10) - 1) | 0xAAAA_AAAA;
    let m0: u32 = (0..32).filter(|t| t % 4 > 0).fold(0, |m, t| m | 1 << t) & alive;
    let m1: u32 = (0..32).filter(|t| t % 4 > 1).fold(0, |m, t| m | 1 << t) & alive;
    assert_eq!(loop_acc[0].1.mask, m0);
    assert_eq!(loop_acc[1].1.mask, m1);
}

/// Values a kernel computes, read back through the addresses of `p[VALUE] = 0` stores to a
/// `char* p` parameter: for each store executed by warp 0 of block 0, lane 0's value.
fn probe(src: &str, kernel: &str, args: &[(&str, &str)], block: [u32; 3]) -> Vec<i64> {
    probe_lanes(src, kernel, args, block)
        .into_iter()
        .map(|v| v[0])
        .collect()
}

fn probe_lanes(src: &str, kernel: &str, args: &[(&str, &str)], block: [u32; 3]) -> Vec<Vec<i64>> {
    let (_, acc) = run_with(
        src,
        kernel,
        args,
        &[],
        [1, 1, 1],
        block,
        64,
        &["PROBE_OFF=0"],
    )
    .unwrap();
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

#[test]
fn c_integer_semantics() {
    let src = r#"
__global__ void k(char* p, int n) {
  unsigned int u = 0u;
  u = u - 1u;                       // wraps to 4294967295
  p[u >> 28] = 0;                   // 15
  int neg = -7;
  p[100 + neg / 2] = 0;             // 97: division truncates toward zero
  p[100 + neg % 3] = 0;             // 99
  p[(unsigned)neg % 10u] = 0;       // 4294967289 % 10 = 9
  short s = 32767; s++;             // wraps to -32768
  p[s + 32768] = 0;                 // 0
  char c = 200;                     // -56
  p[c + 100] = 0;                   // 44
  unsigned char uc = 200;
  p[uc + 1] = 0;                    // 201
  long long big = 1LL << 40;
  p[big >> 38] = 0;                 // 4
  size_t z = sizeof(double) * 3;
  p[z] = 0;                         // 24
  p[n * 2 + (n > 3 ? 1 : 0)] = 0;   // 11
  p[1 << 3 | 5 ^ 1] = 0;            // 8 | 4 = 12
  p[-neg & 6] = 0;                  // 7 & 6 = 6
  p[~0u - 4294967200u] = 0;         // 95
}"#;
    assert_eq!(
        probe(src, "k", &[("n", "5")], [32, 1, 1]),
        vec![15, 97, 99, 9, 0, 44, 201, 4, 24, 11, 12, 6, 95]
    );
}

#[test]
fn floats_casts_and_builtins() {
    let src = r#"
__global__ void k(char* p) {
  float x = 2.5f;
  double d = x * 3;                 // 7.5
  p[(int)d] = 0;                    // 7
  p[(int)(x / 2)] = 0;              // 1
  p[(int)(-x)+10] = 0;              // 8 (truncation)
  p[min(3, 9) + max(2u, 1u)] = 0;   // 5
  p[abs(-12)] = 0;                  // 12
  p[(int)fabsf(-3.9f)] = 0;         // 3
  p[warpSize] = 0;                  // 32
  p[blockDim.x + blockDim.y * 100] = 0;  // 8 + 400
  p[threadIdx.y * 10 + threadIdx.x] = 0; // lane 0: 0
  __half h = __float2half(1.5f);
  p[(int)(__half2float(h) * 2)] = 0;     // 3
}"#;
    assert_eq!(
        probe(src, "k", &[], [8, 4, 1]),
        vec![7, 1, 8, 5, 12, 3, 32, 408, 0, 3]
    );
}

#[test]
fn control_flow_loops_switch_and_short_circuit() {
    let src = r#"
__device__ int twice(int v) { return v * 2; }
__device__ int pick(int v) {
  if (v > 10) return 1;
  return twice(v);
}
__global__ void k(char* p, int* q) {
  int sum = 0;
  for (int i = 0; i < 10; i++) { if (i == 3) continue; if (i == 6) break; sum += i; }
  p[sum] = 0;                       // 0+1+2+4+5 = 12
  int w = 0;
  while (w < 40) w += 7;
  p[w] = 0;                         // 42
  int d = 0;
  do { d += 5; } while (d < 3);
  p[d] = 0;                         // 5
  int sw = 0;
  switch (threadIdx.x % 4) {
    case 0: sw = 10;                // falls through
    case 1: sw += 1; break;
    case 2: sw = 30; break;
    default: sw = 40;
  }
  p[sw] = 0;                        // lane 0: 11, lane 1: 1, lane 2: 30, lane 3: 40
  int z = 0;
  if (z != 0 && q[1000000] > 0) z = 1;   // short-circuit: q is never read
  if (z == 0 || q[1000000] > 0) z = 2;
  p[z] = 0;                         // 2
  p[pick(3) + pick(20)] = 0;        // 6 + 1 = 7
  int t = 5; t *= 3; t -= 1; t <<= 1; t %= 9; t |= 16;
  p[t] = 0;                         // ((15-1)*2)%9 = 1 | 16 = 17
  int e = 3; int f = e++ + ++e;     // 3 + 5
  p[f] = 0;                         // 8
}"#;
    let lanes = probe_lanes(src, "k", &[], [4, 1, 1]);
    let lane0: Vec<i64> = lanes.iter().map(|v| v[0]).collect();
    assert_eq!(lane0, vec![12, 42, 5, 11, 2, 7, 17, 8]);
    assert_eq!(lanes[3], vec![11, 1, 30, 40], "switch per lane");
    // The short-circuited q[1000000] loads never executed.
    let (_, acc) = run_with(src, "k", &[], &[("q", 10)], [1, 1, 1], [4, 1, 1], 0, &[]).unwrap();
    assert!(acc.iter().all(|(_, a)| a.op == Op::Store));
}

#[test]
fn templates_macros_and_constants() {
    let src = r#"
#define TILE 16
#define IDX(r, c) ((r) * TILE + (c))
#ifndef EXTRA
#define EXTRA 3
#endif
template <typename T, int N>
__device__ T scale(T v) { return v * N; }
template <int B>
__global__ void k(char* p) {
  const int local = 4;
  p[IDX(2, 1)] = 0;                 // 33
  p[scale<int, 5>(2)] = 0;          // 10
  p[B + EXTRA + local] = 0;         // B + 3 + 4
  float f[TILE];
  p[sizeof(f)] = 0;                 // 64
}"#;
    let vals = probe(src, "k<7>", &[], [32, 1, 1]);
    assert_eq!(vals, vec![33, 10, 14, 64]);
    let (_, acc) = run_with(
        src,
        "k<1>",
        &[],
        &[],
        [1, 1, 1],
        [32, 1, 1],
        0,
        &["EXTRA=100"],
    )
    .unwrap();
    let third = acc
        .iter()
        .filter(|(_, a)| a.op == Op::Store)
        .nth(2)
        .unwrap();
    assert_eq!(
        (third.1.addrs[0] - (1 << 40)) % (1 << 36),
        105,
        "-D EXTRA=100 wins over the #ifndef default"
    );
}

#[test]
fn struct_layout_alignment_and_vector_types() {
    let src = r#"
struct data { int index; double value; };
struct __align__(16) F3 { float x, y, z; };
struct P3 { float x, y, z; };
typedef struct { char c; short s; int i; } packed_t;
__global__ void k(char* p, data* d, F3* f, float* a, P3* h) {
  p[sizeof(data)] = 0;              // 16: int, 4 padding, double
  p[sizeof(struct F3)] = 0;         // 16 with __align__(16)
  p[sizeof(packed_t)] = 0;          // 8
  p[sizeof(float4) + sizeof(double2) + sizeof(char3)] = 0; // 16 + 16 + 3 = 35
  int i = threadIdx.x;
  int idx = d[i].index;             // 4-byte load, stride 16
  d[i].value = 1.0;                 // 8-byte store at offset 8
  data* q = &d[i];
  q->index = 2;
  float4 v = reinterpret_cast<float4*>(a)[i];   // one 16-byte load
  float4 m = make_float4(1.0f, 2.0f, 3.0f, 4.0f);
  p[(int)(m.w + v.x)] = 0;          // 4
  F3 g = f[i];                      // __align__(16): one 16-byte load
  P3 j = h[i];                      // 12 bytes, 4-byte aligned: three 4-byte loads
}"#;
    let (k, acc) = run_with(src, "k", &[], &[], [1, 1, 1], [32, 1, 1], 0, &[]).unwrap();
    let sites = k.sites();
    let probe: Vec<u64> = acc
        .iter()
        .filter(|(_, a)| a.width == 1)
        .map(|(_, a)| (a.addrs[0] - (1 << 40)) % (1 << 36))
        .collect();
    assert_eq!(probe, vec![16, 16, 8, 35, 4]);
    let find = |text: &str, op: Op| {
        acc.iter()
            .filter(|(s, _)| sites[*s].text == text && sites[*s].op == op)
            .map(|(_, a)| *a)
            .collect::<Vec<_>>()
    };
    let idx = find("d[i].index", Op::Load);
    assert_eq!(idx[0].width, 4);
    assert_eq!(idx[0].addrs[1] - idx[0].addrs[0], 16);
    let val = find("d[i].value", Op::Store);
    assert_eq!((val[0].width, val[0].addrs[0] % 16), (8, 8));
    assert_eq!(find("q->index", Op::Store)[0].addrs[0], idx[0].addrs[0]);
    let v4 = find("reinterpret_cast<float4*>(a)[i]", Op::Load);
    assert_eq!(
        (v4.len(), v4[0].width, v4[0].addrs[1] - v4[0].addrs[0]),
        (1, 16, 16)
    );
    let g = find("f[i]", Op::Load);
    assert_eq!(g.iter().map(|a| a.width).collect::<Vec<_>>(), vec![16]);
    let j = find("h[i]", Op::Load);
    assert_eq!(j.iter().map(|a| a.width).collect::<Vec<_>>(), vec![4, 4, 4]);
    assert_eq!(j[1].addrs[0] - j[0].addrs[0], 4);
}

#[test]
fn shared_constant_device_and_local_memory() {
    let src = r#"
__constant__ float coeff[4] = {1.0f, 2.0f, 3.0f, 4.0f};
__device__ int table[64];
__global__ void k(char* p, float* out) {
  __shared__ float tile[4][33];
  extern __shared__ float dyn[];
  int t = threadIdx.x;
  tile[t % 4][t] = 1.0f;
  dyn[t] = 2.0f;
  __syncthreads();
  float c = coeff[t % 4];
  p[(int)coeff[3]] = 0;             // 4: initializer of __constant__ seen
  table[t] = t;
  p[table[5] + 100] = 0;            // 105: a store then a load of __device__ memory
  float reg[4];
  reg[0] = 1.0f; reg[3] = 2.0f;     // constant indexes: registers
  float loc[8];
  loc[t % 8] = 1.0f;                // run-time index: local memory
  out[t] = reg[0] + reg[3] + loc[t % 8] + c + tile[0][t] + dyn[t];
}"#;
    let (k, acc) = run_with(src, "k", &[], &[], [1, 1, 1], [32, 1, 1], 64 * 4, &[]).unwrap();
    let sites = k.sites();
    let by = |text: &str, op: Op| {
        acc.iter()
            .filter(|(s, _)| sites[*s].text == text && sites[*s].op == op)
            .map(|(_, a)| *a)
            .collect::<Vec<_>>()
    };
    let tile = by("tile[t % 4][t]", Op::Store);
    assert_eq!(tile[0].space, Space::Shared);
    assert_eq!(
        tile[0].addrs[1] - tile[0].addrs[0],
        33 * 4 + 4,
        "row stride 33 floats"
    );
    let dyn_ = by("dyn[t]", Op::Store);
    assert_eq!(
        dyn_[0].addrs[0],
        (4 * 33 * 4_u64).div_ceil(16) * 16,
        "extern __shared__ after the static arrays"
    );
    assert_eq!(by("coeff[t % 4]", Op::Load)[0].space, Space::Constant);
    let probe: Vec<u64> = acc
        .iter()
        .filter(|(_, a)| a.width == 1)
        .map(|(_, a)| (a.addrs[0] - (1 << 40)) % (1 << 36))
        .collect();
    assert_eq!(probe, vec![4, 105]);
    assert!(
        by("reg[0]", Op::Store).is_empty(),
        "constant-indexed arrays stay in registers"
    );
    let loc = by("loc[t % 8]", Op::Store);
    assert_eq!(loc[0].space, Space::Local);
    assert_eq!(k.local_arrays().len(), 1);
    assert_eq!(k.local_arrays()[0].name, "loc");
    // Interleaved: lanes 0..7 use words 0..7 of their own columns: 4·(w·32 + t).
    assert_eq!(loc[0].addrs[1] - loc[0].addrs[0], 4 * 32 + 4);
    assert_eq!(by("__ldg", Op::Load).len(), 0);
}

#[test]
fn ldg_and_restrict_use_the_read_only_path() {
    let src = r#"
__global__ void k(const float* __restrict__ a, const float* b, float* out) {
  int i = threadIdx.x;
  out[i] = a[i] + __ldg(&b[i]) + b[i];
}"#;
    let (k, acc) = run(src, "k", &[], [1, 1, 1], [32, 1, 1]).unwrap();
    let ro: Vec<(String, bool)> = k
        .sites()
        .iter()
        .filter(|s| s.op == Op::Load)
        .map(|s| (s.text.clone(), s.read_only))
        .collect();
    assert_eq!(
        ro,
        vec![
            ("a[i]".into(), true),
            ("__ldg(&b[i])".into(), true),
            ("b[i]".into(), false)
        ]
    );
    assert!(acc
        .iter()
        .filter(|(s, _)| k.sites()[*s].read_only)
        .all(|(_, a)| a.read_only));
}

#[test]
fn per_thread_struct_larger_than_the_registers_goes_to_local_memory() {
    // 300 floats = 1200 bytes > 255 registers × 4 bytes; a 16-float struct stays in registers.
    let src = r#"
struct Big { float v[300]; };
struct Small { float v[16]; };
__global__ void k(float* out) {
    Big b;
    Small s;
    for (int j = 0; j < 300; j++) b.v[j] = j;
    for (int j = 0; j < 16; j++) s.v[j] = j;
    out[threadIdx.x] = b.v[7] + s.v[3];
}
"#;
    let (k, acc) = run(src, "k", &[], [1, 1, 1], [64, 1, 1]).unwrap();
    assert_eq!(k.local_arrays().len(), 1);
    assert_eq!(k.local_arrays()[0].name, "b");
    assert!(k.local_arrays()[0].reason.contains("1200 bytes"));
    // Word 7 of thread t (64 threads a block) is at 4·(7·64 + t): interleaved, so warp 0's
    // load is 128 contiguous bytes.
    let load = acc
        .iter()
        .find(|(_, a)| a.space == Space::Local && a.op == Op::Load)
        .unwrap();
    assert_eq!(lanes(&load.1)[..2], [4 * 7 * 64, 4 * 7 * 64 + 4]);
    assert_eq!(
        acc.iter().filter(|(_, a)| a.space == Space::Local).count(),
        2 * 301
    );
}
