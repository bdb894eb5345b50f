//! Real third-party kernels as published (tests/kernels/real/, each naming its source on
//! line 1) through both front ends, from a survey of 40 Rodinia, PolyBench-ACC, cuda-samples
//! and Parboil launches: each failed on one front end before this test's fixes. CC 9.0
//! totals; the compiled path runs where a CUDA compiler is found (CI installs one).

mod common;
use common::{json, warpscope};

const DIR: &str = "tests/kernels/real/";

fn compiler() -> bool {
    let found = warpscope_toolkit::find(None).is_ok();
    if !found {
        eprintln!("skipped the compiled path: no CUDA compiler (scripts/test.sh installs one)");
    }
    found
}

/// (requests, sectors + wavefronts) over all spaces, through `frontend`.
fn totals(args: &[&str], frontend: &str) -> (u64, u64) {
    let mut a = args.to_vec();
    a.extend(["--frontend", frontend, "--cc", "9.0"]);
    let v = json(&a);
    let t = &v["architectures"][0]["totals"];
    // The per-space totals (the per-direction ones sum the same accesses again).
    [
        "global",
        "local",
        "shared",
        "distributed_shared",
        "constant",
        "texture",
        "surface",
    ]
    .iter()
    .map(|k| &t[*k])
    .filter(|x| x.is_object())
    .fold((0, 0), |(r, s), x| {
        (
            r + x["requests"].as_u64().unwrap_or(0),
            s + x["sectors"].as_u64().unwrap_or(0) + x["wavefronts"].as_u64().unwrap_or(0),
        )
    })
}

/// The same figures from both front ends where nvcc keeps every access the source shows:
/// Rodinia gaussian's Fan2 (a prototype with other parameter names), cuda-samples'
/// transposeNaive (a host `const char *` global), Parboil sgemm (`float c[16]` indexed by
/// unrolled loops stays in registers).
#[test]
fn both_front_ends_agree_on_real_kernels() {
    let gaussian = format!("{DIR}rodinia_gaussian.cu");
    let transpose = format!("{DIR}cudasamples_transpose.cu");
    let sgemm = format!("{DIR}parboil_sgemm.cu");
    let cases: [(Vec<&str>, (u64, u64)); 3] = [
        (
            vec![
                "analyze",
                &gaussian,
                "--kernel",
                "Fan2",
                "--grid",
                "16,16",
                "--block",
                "4,4",
                "--arg",
                "Size=64",
                "--arg",
                "j1=64",
                "--arg",
                "t=0",
                "--alloc",
                "m_cuda=4096",
                "--alloc",
                "a_cuda=4096",
                "--alloc",
                "b_cuda=64",
            ],
            (1_088, 3_405),
        ),
        (
            vec![
                "analyze",
                &transpose,
                "--kernel",
                "transposeNaive",
                "--grid",
                "16,16",
                "--block",
                "32,16",
                "--arg",
                "width=512",
                "--arg",
                "height=512",
                "--alloc",
                "odata=262144",
                "--alloc",
                "idata=262144",
            ],
            (16_384, 294_912),
        ),
        (
            vec![
                "analyze",
                &sgemm,
                "--kernel",
                "mysgemmNT",
                "--grid",
                "2,8",
                "--block",
                "16,8",
                "--arg",
                "lda=256",
                "--arg",
                "ldb=128",
                "--arg",
                "ldc=256",
                "--arg",
                "k=128",
                "--arg",
                "alpha=1.0",
                "--arg",
                "beta=0.0",
                "--alloc",
                "A=32768",
                "--alloc",
                "B=16384",
                "--alloc",
                "C=32768",
            ],
            (143_360, 45_056 + 132_096),
        ),
    ];
    let ptx = compiler();
    for (args, want) in &cases {
        assert_eq!(totals(args, "source"), *want, "source: {args:?}");
        if ptx {
            // The PTX as written; ptxas's merges are the next test's.
            let mut a = args.clone();
            a.push("--no-sass");
            assert_eq!(totals(&a, "ptx"), *want, "ptx: {args:?}");
        }
    }
    // Parboil sgemm as the H100 runs it: ptxas merges the 16 `b_s` reads of each `i` step
    // into 4 LDS.128, so the compiled path (SASS checked) differs from the source here;
    // measured on the H100 (tests/data/h100/verify/sass.out, exact): global 10,240 load
    // requests of 40,960 sectors and 1,024 stores of 4,096, shared 32,768 loads of 65,536
    // wavefronts and 1,024 stores of 1,024.
    if ptx {
        let v = json(&[&cases[2].0[..], &["--frontend", "ptx", "--cc", "9.0"]].concat());
        if v["notes"].to_string().contains("SASS checked") {
            let sgemm = totals(&cases[2].0, "ptx");
            assert_eq!(
                sgemm,
                (
                    10_240 + 1_024 + 32_768 + 1_024,
                    40_960 + 4_096 + 65_536 + 1_024
                )
            );
        } else {
            eprintln!(
                "skipped sgemm's SASS figures: no ptxas/nvdisasm (scripts/test.sh installs them)"
            );
        }
    }
}

/// Rodinia lavaMD passes two structs by value (`par_str`, `dim_str`): both front ends take
/// their fields from `--arg NAME.FIELD=V`, and `number_boxes` decides whether a block works.
#[test]
fn lavamd_takes_its_struct_parameters_on_both_front_ends() {
    let f = format!("{DIR}rodinia_lavaMD.cu");
    let frontends: &[&str] = if compiler() {
        &["source", "ptx"]
    } else {
        &["source"]
    };
    for fe in frontends {
        let run = |boxes: &str| {
            let nb = format!("d_dim_gpu.number_boxes={boxes}");
            totals(
                &[
                    "analyze",
                    &f,
                    "--kernel",
                    "kernel_gpu_cuda",
                    "--grid",
                    "8",
                    "--block",
                    "128",
                    "--arg",
                    "d_par_gpu.alpha=0.5",
                    "--arg",
                    &nb,
                    "--alloc",
                    "d_box_gpu=8",
                    "--alloc",
                    "d_rv_gpu=800",
                    "--alloc",
                    "d_qv_gpu=800",
                    "--alloc",
                    "d_fv_gpu=800",
                ],
                fe,
            )
        };
        assert_eq!(run("0"), (0, 0), "{fe}: no box, no work");
        let (req, _) = run("8");
        assert!(req > 0, "{fe}: 8 boxes do work");
        let (ok, _, err) = warpscope(&[
            "analyze",
            &f,
            "--kernel",
            "kernel_gpu_cuda",
            "--grid",
            "8",
            "--block",
            "128",
            "--arg",
            "d_par_gpu=1",
            "--frontend",
            fe,
        ]);
        assert!(!ok && err.contains("passed by value"), "{fe}: {err}");
    }
}
