//! Triton 3.6.0's fp16 matmuls compiled here for sm_100 (CC 10.0, no GPU:
//! `warpscope.triton.compile_ptx(kernel, …, cc="10.0")` with scripts/h100/triton/kernels.py's
//! `matmul_kernel` and `matmul_tma_kernel`, 128×128×64 tiles, 4 warps, 3 stages; the PTX in
//! tests/data/triton_sm100/) analyzed end to end on CC 10.0: `tcgen05.alloc`, `tcgen05.st/ld`
//! (32x32b.x128), `tcgen05.mma.kind::f16` from 128B-swizzled descriptors and
//! `tcgen05.commit` run without error, and the global figures are the hand-derived ones.
//! M, N, K = 512, 384, 256; grid 4×3. Every A and B byte crosses once per tile that needs it:
//! A (512×256 fp16, 256 KiB) for 3 column tiles, B (256×384, 192 KiB) for 4 row tiles:
//! 3·256 KiB + 4·192 KiB = 1.5 MiB = 49,152 sectors; C (512×384 fp16, 384 KiB) written once:
//! 12,288 sectors. The MMAs: 12 blocks × 4 k steps × 4 MMAs of m128n128k16, each reading A
//! (128 rows × 32 bytes = 32 core matrices) and B (128 × 32 bytes, 32) from shared memory:
//! 64 wavefronts an MMA, 12,288 in all (wgmma's measured rule, unmeasured for tcgen05).

mod common;
use common::warpscope;

const D: &str = "tests/data/triton_sm100/";

/// (global load sectors, global store sectors, tcgen05.mma wavefronts, tcgen05.mma requests).
fn figures(args: &[&str]) -> [u64; 4] {
    let (ok, out, err) = warpscope(args);
    assert!(ok, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let mut f = [0u64; 4];
    let arch = &v["architectures"][0];
    assert_eq!(arch["cc"], "10.0");
    for s in arch["sites"].as_array().unwrap() {
        let n = |k: &str| s[k].as_u64().unwrap_or(0);
        match (s["space"].as_str().unwrap(), s["op"].as_str().unwrap()) {
            ("global", "load") => f[0] += n("sectors"),
            ("global", "store") => f[1] += n("sectors"),
            ("shared", "load") if s["ptx"].as_str().unwrap().starts_with("tcgen05.mma") => {
                f[2] += n("wavefronts");
                f[3] += n("requests");
            }
            _ => {}
        }
    }
    f
}

#[test]
fn triton_matmul_on_sm100() {
    let ptx = format!("{D}matmul_kernel.ptx");
    let mut args = vec![
        "analyze",
        &ptx,
        "--kernel",
        "matmul_kernel",
        "--grid",
        "4,3",
        "--block",
        "128",
        "--cc",
        "10.0",
        "--dynamic-smem",
        "98320",
        "--format",
        "json",
    ];
    for a in [
        "param_3=512",
        "param_4=384",
        "param_5=256",
        "param_6=256",
        "param_7=384",
        "param_8=384",
    ] {
        args.extend(["--arg", a]);
    }
    // 16 accesses an MMA (A's 32 and B's 32 core matrices, four an access).
    assert_eq!(figures(&args), [49_152, 12_288, 12_288, 12 * 16 * 16]);
}

#[test]
fn triton_tma_matmul_on_sm100() {
    let ptx = format!("{D}matmul_tma_kernel.ptx");
    let mut args = vec![
        "analyze",
        &ptx,
        "--kernel",
        "matmul_tma_kernel",
        "--grid",
        "4,3",
        "--block",
        "128",
        "--cc",
        "10.0",
        "--dynamic-smem",
        "98352",
        "--format",
        "json",
        "--tensor-map",
        "param_0=u16:256x512:512:64x128:swizzle=128",
        "--tensor-map",
        "param_5=u16:384x256:768:64x64:swizzle=128",
        "--tensor-map",
        "param_10=u16:384x512:768:64x128:swizzle=128",
    ];
    for a in [
        "param_1=512",
        "param_2=256",
        "param_3=256",
        "param_4=1",
        "param_6=256",
        "param_7=384",
        "param_8=384",
        "param_9=1",
        "param_11=512",
        "param_12=384",
        "param_13=384",
        "param_14=1",
        "param_15=256",
    ] {
        args.extend(["--arg", a]);
    }
    assert_eq!(figures(&args), [49_152, 12_288, 12_288, 12 * 16 * 16]);
}
