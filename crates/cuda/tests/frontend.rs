//! Front-end tests: parse real kernels, run launches and check the warp accesses they yield.

use warpscope_cuda::{Error, Source, DEFAULT_MAX_STEPS};
use warpscope_model::{Op, Space, WarpAccess};

/// (site, access) pairs of a launch.
fn run(src: &str, kernel: &str, args: &[(&str, &str)], grid: [u32; 3], block: [u32; 3]) -> Result<(warpscope_cuda::Kernel, Vec<(usize, WarpAccess)>), Error> {
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
    let args: Vec<(String, String)> = args.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect();
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
    let (k, acc) = run(HARRIS, "offset<float>", &[("s", "1")], [2, 1, 1], [64, 1, 1]).unwrap();
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
    // The block runs in lockstep: both warps load, then both store.
    assert_eq!(sites[acc[1].0].op, Op::Load);
    assert_eq!(sites[acc[2].0].op, Op::Store);
    assert_eq!((sites[acc[2].0].loc.line, sites[acc[2].0].loc.col), (6, 3));
}

#[test]
fn harris_stride_double() {
    let (_, acc) = run(HARRIS, "stride<double>", &[("s", "3")], [1, 1, 1], [32, 1, 1]).unwrap();
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
    assert_eq!(second.1.mask, 0x5555_5555 & !((1u32 << 10) - 1), "even lanes from 10 on");
    // The loop: lanes still alive (i < 10 or odd) with threadIdx.x % 4 > j; j = 0 and j = 1.
    let loop_acc: Vec<_> = acc.iter().filter(|(s, _)| sites[*s].loc.line == 8).collect();
    assert_eq!(loop_acc.len(), 2);
    let alive: u32 = ((1u32 << 10) - 1) | 0xAAAA_AAAA;
    let m0: u32 = (0..32).filter(|t| t % 4 > 0).fold(0, |m, t| m | 1 << t) & alive;
    let m1: u32 = (0..32).filter(|t| t % 4 > 1).fold(0, |m, t| m | 1 << t) & alive;
    assert_eq!(loop_acc[0].1.mask, m0);
    assert_eq!(loop_acc[1].1.mask, m1);
}
