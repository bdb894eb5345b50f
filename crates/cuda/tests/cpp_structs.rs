//! C++ structs, references, lambdas and bit casts through the source front end: member
//! functions, struct templates with conversion operators (cuda-samples' `SharedMemory<T>`),
//! static members. Values are read back through the addresses of `p[VALUE] = 0` stores to a
//! `char* p` parameter; memory figures are CC 9.0 requests and shared wavefronts.

use warpscope_cuda::{Error, Source, DEFAULT_MAX_STEPS};
use warpscope_model::{Op, Space, WarpAccess};

type Run = (warpscope_cuda::Kernel, Vec<(usize, WarpAccess)>);

fn run(src: &str, kernel: &str, grid: u32, block: u32) -> Result<Run, Error> {
    let s = Source::parse("test.cu", src, &[])?;
    let k = s.kernel(kernel)?;
    let cfg = k.configure(
        &[],
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
    let (_, acc) = run(src, "k", 1, block).unwrap();
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
fn member_functions_this_and_static_members() {
    let src = r#"
struct Acc {
  float s; int n;
  __device__ void add(float v) { s += v; n++; this->n += 10; }
  __device__ float mean() const { return s / (n - 10 * count()); }
  __device__ int count() const { return n / 11; }
  static __device__ int twice(int x) { return 2 * x; }
};
__global__ void k(char* p) {
  Acc a;
  a.s = 0.0f; a.n = 0;
  a.add(4.0f);
  a.add(8.0f);
  p[a.n] = 0;                    // 22
  p[(int)a.mean()] = 0;          // 12 / (22 - 20) = 6
  p[Acc::twice(21)] = 0;         // 42
  Acc* q = &a;
  q->add(1.0f);
  p[q->n + (int)q->s] = 0;       // 33 + 13 = 46
}"#;
    assert_eq!(probe(src), vec![22, 6, 42, 46]);
}

/// cuda-samples' `SharedMemory<T>`: a struct template whose conversion operators give
/// `extern __shared__` memory the element type, with an explicit specialization for
/// double. One block of 64 threads: each warp makes one 4-byte-wide shared store (the
/// floats) and one 8-byte-wide one (the doubles), both from the dynamic shared base, and
/// the values read back follow the types.
#[test]
fn shared_memory_template_with_conversion_operators() {
    let src = r#"
template <class T>
struct SharedMemory {
  __device__ inline operator T *() {
    extern __shared__ int __smem[];
    return (T *)__smem;
  }
  __device__ inline operator const T *() const {
    extern __shared__ int __smem[];
    return (T *)__smem;
  }
};
template <>
struct SharedMemory<double> {
  __device__ inline operator double *() {
    extern __shared__ double __smem_d[];
    return (double *)__smem_d;
  }
};
template <class T>
__global__ void k(char* p) {
  T *sdata = SharedMemory<T>();
  SharedMemory<double> smd;
  double *dd = smd;
  sdata[threadIdx.x] = (T)threadIdx.x * 1.5f;
  dd[threadIdx.x] = 2.5;
  __syncthreads();
  p[(int)(sdata[threadIdx.x ^ 1] * 2) + (int)(dd[0] * 100)] = 0;
}"#;
    let s = Source::parse("test.cu", src, &[]).unwrap();
    let k = s.kernel("k<float>").unwrap();
    let cfg = k
        .configure(&[], &[], [1, 1, 1], [64, 1, 1], 1024, DEFAULT_MAX_STEPS)
        .unwrap();
    let mut acc = Vec::new();
    k.run(&cfg, &mut |s, a| acc.push((s, *a))).unwrap();
    let stores: Vec<&WarpAccess> = acc
        .iter()
        .map(|(_, a)| a)
        .filter(|a| a.space == Space::Shared && a.op == Op::Store)
        .collect();
    // Per warp a float store (4 bytes wide) and a double store (8 bytes wide).
    assert_eq!(stores.len(), 4);
    assert_eq!(stores.iter().filter(|a| a.width == 4).count(), 2);
    assert_eq!(stores.iter().filter(|a| a.width == 8).count(), 2);
    // Each warp runs to the barrier in turn, so the doubles (2.5 everywhere) overwrite
    // every float; lane 0 reads float 1 (the high half of dd[0]), lane 1 float 0.
    let probes: Vec<i64> = acc
        .iter()
        .filter(|(_, a)| a.space == Space::Global && a.op == Op::Store && a.width == 1)
        .flat_map(|(_, a)| {
            a.active()
                .map(|(_, x)| ((x - (1 << 40)) % (1 << 36)) as i64)
        })
        .collect();
    assert_eq!(probes.len(), 64);
    let bits = 2.5f64.to_bits();
    let lo = f32::from_bits(bits as u32);
    let hi = f32::from_bits((bits >> 32) as u32);
    assert_eq!(probes[0], (hi * 2.0) as i64 + 250);
    assert_eq!(probes[1], (lo * 2.0) as i64 + 250);
}

/// `((x)>=(lo) && (x)<=(hi))`, as Rodinia writes its bounds checks: the parser reads
/// `(lo) && (x)` as a cast of `&&(x)` to a type `lo`; the front end reads it again as the
/// comparison it is. Lanes 3..=9 pass; `(n) & 1` and `(n) * 2` are arithmetic too.
#[test]
fn parenthesized_variables_are_not_casts() {
    let src = r#"
#define IN_RANGE(x, min, max) ((x)>=(min) && (x)<=(max))
typedef int T;
__global__ void k(char* p) {
  int x = threadIdx.x, lo = 3, hi = 9, n = 5;
  if (IN_RANGE(x, lo, hi)) p[x] = 0;
  p[100 + (n) & 7] = 0;       // (100 + 5) & 7 = 1
  p[(n) * 2] = 0;             // 10
  p[(n) - 1] = 0;             // 4
  p[(T)n * 4] = 0;            // a real cast: 20
}"#;
    let probes = probe_lanes(src, 32);
    assert_eq!(probes[0], (3..=9).collect::<Vec<i64>>());
    assert_eq!(probes[1][0], 1);
    assert_eq!(probes[2][0], 10);
    assert_eq!(probes[3][0], 4);
    assert_eq!(probes[4][0], 20);
}

/// `T&` parameters write through to the caller's variable (a register variable passed by
/// reference is given an address), `const T&` reads a value, local `T&` and `auto&` name a
/// variable or an array element. The one global store through a reference is counted.
#[test]
fn references_alias_what_they_bind() {
    let src = r#"
__device__ void bump(int& x, const int& by) { x += by; }
__device__ void swap2(float& a, float& b) { float t = a; a = b; b = t; }
struct Pair { int lo, hi; __device__ void grow(int& by) { hi += by; by = 0; } };
__global__ void k(char* p, int* g) {
  int v = 5;
  bump(v, 3);
  p[v] = 0;                        // 8
  float a = 1.0f, b = 20.0f;
  swap2(a, b);
  p[(int)a + (int)b] = 0;          // 21
  int& r = v;
  r = 30;
  p[v] = 0;                        // 30
  int arr[4] = {1, 2, 3, 4};
  auto& e = arr[2];
  e *= 10;
  p[arr[2]] = 0;                   // 30 again: arr[2] is 30
  const int& c = v + 1;
  p[c] = 0;                        // 31
  Pair q; q.lo = 0; q.hi = 40;
  int by = 2;
  q.grow(by);
  p[q.hi + by] = 0;                // 42
  bump(g[threadIdx.x], 7);         // a load and a store of g, through the reference
}"#;
    assert_eq!(probe(src), vec![8, 21, 30, 30, 31, 42]);
    let (_, acc) = run(src, "k", 1, 32).unwrap();
    let on_g: Vec<Op> = acc
        .iter()
        .filter(|(_, a)| a.space == Space::Global && a.width == 4)
        .map(|(_, a)| a.op)
        .collect();
    assert_eq!(on_g, vec![Op::Load, Op::Store]);
}

/// Bit casts read a value's bits as another type: 1.0f is 0x3F800000, 2.0 is
/// 0x4000000000000000.
#[test]
fn bit_casts_keep_the_bits() {
    let src = r#"
__global__ void k(char* p) {
  p[__float_as_int(1.0f) >> 20] = 0;                     // 0x3F8 = 1016
  p[__float_as_uint(-0.0f) >> 28] = 0;                   // 8
  p[(int)(__int_as_float(0x40400000) * 10)] = 0;         // 3.0f: 30
  p[(int)(__uint_as_float(0x3F000000u) * 100)] = 0;      // 0.5f: 50
  p[(int)(__double_as_longlong(2.0) >> 52)] = 0;         // 0x400 = 1024
  p[(int)__longlong_as_double(0x4014000000000000ll)] = 0; // 5.0
}"#;
    assert_eq!(probe(src), vec![1016, 8, 30, 50, 1024, 5]);
}
