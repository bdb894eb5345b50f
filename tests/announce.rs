//! The first line on standard error: what `analyze` read (front end, compiler and version,
//! PTX target, CCs); `-q` drops it, and standard output stays the table, JSON or CSV alone.

mod common;
use common::{compiler, warpscope};

const HARRIS: [&str; 10] = [
    "analyze",
    "examples/harris.cu",
    "--kernel",
    "offset<float>",
    "--grid",
    "4",
    "--block",
    "256",
    "--arg",
    "s=1",
];

fn run(extra: &[&str]) -> (String, String) {
    let mut a = HARRIS.to_vec();
    a.extend(extra);
    let (ok, out, err) = warpscope(&a);
    assert!(ok, "{err}");
    (out, err)
}

#[test]
fn the_compiled_path_names_nvcc_its_target_and_the_ccs() {
    if !compiler() {
        return;
    }
    let version = warpscope_toolkit::find(None).unwrap().version;
    // NVRTC (feature `cuda`) instantiates the template in-process; else nvcc compiles.
    let compiler = if cfg!(feature = "cuda") {
        "NVRTC"
    } else {
        "nvcc"
    };
    let (out, err) = run(&["--cc", "1.0,8.6,9.0", "--format", "json"]);
    // 9.0 asked for: one compile for sm_90, costed for all three; 8.6's own sm_86 and 1.0's
    // sm_75 (the oldest target of CUDA 13) compiled only to compare their instructions.
    assert_eq!(
        err.lines().next().unwrap(),
        format!(
            "analyzing examples/harris.cu: {compiler} {version} → sm_90 PTX, SASS checked, costed for CC 1.0, 8.6, 9.0; own targets compared: sm_75 for 1.0 (CUDA {version} has none older), sm_86 for 8.6"
        )
    );
    // Standard output is the JSON alone.
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["kernel"], "offset<float>");
    // Without 9.0 the newest CC's target is the compile.
    let (_, err) = run(&["--cc", "7.5,8.0", "--format", "csv"]);
    assert!(
        err.starts_with(&format!(
            "analyzing examples/harris.cu: {compiler} {version} → sm_80 PTX, SASS checked, costed for CC 7.5, 8.0; own targets compared: sm_75 for 7.5\n"
        )),
        "{err}"
    );
    // -q: nothing on standard error, the same standard output.
    let (quiet_out, quiet_err) = run(&["--cc", "1.0,8.6,9.0", "--format", "json", "-q"]);
    assert_eq!(quiet_err, "");
    assert_eq!(quiet_out, out);
}

#[test]
fn the_source_interpreter_and_a_ptx_file_say_so() {
    let (ok, out, err) = warpscope(&[
        "analyze",
        "-e",
        "float a[]; a[threadIdx.x]",
        "--cc",
        "3.5,9.0",
        "--format",
        "csv",
    ]);
    assert!(ok, "{err}");
    assert_eq!(
        err.lines().next(),
        Some("analyzing -e: CUDA source interpreter, for CC 3.5, 9.0")
    );
    assert!(out.starts_with("kernel,"), "{out}");
    let (ok, _, err) = warpscope(&[
        "analyze",
        "tests/kernels/compiled/register_heavy.cu",
        "--frontend",
        "source",
        "--kernel",
        "spill",
        "--grid",
        "1",
        "--block",
        "32",
        "--arg",
        "n=32",
        "--cc",
        "7.0,7.2,7.5,8.0",
    ]);
    assert!(ok, "{err}");
    // Four CCs in a row of the table read as a span.
    assert!(
        err.starts_with("analyzing tests/kernels/compiled/register_heavy.cu: CUDA source interpreter, for CC 7.0–8.0\n"),
        "{err}"
    );
}

#[test]
fn a_ptx_file_names_its_target() {
    if !compiler() {
        return;
    }
    let (ok, _, err) = warpscope(&[
        "analyze",
        "crates/ptx/tests/data/transpose.ptx",
        "--kernel",
        "transpose_naive",
        "--grid",
        "32,32",
        "--block",
        "32,8",
        "--arg",
        "param_2=1024",
        "--arg",
        "param_3=1024",
        "--cc",
        "9.0",
    ]);
    assert!(ok, "{err}");
    assert_eq!(
        err.lines().next(),
        Some("analyzing crates/ptx/tests/data/transpose.ptx: PTX file (.target sm_90), SASS checked, for CC 9.0")
    );
}

/// A device-only `.cu` is compiled in-process by NVRTC (feature `cuda`) and says so; with
/// `WARPSCOPE_NVCC_ONLY` nvcc compiles it, and the figures are the same.
#[cfg(feature = "cuda")]
#[test]
fn nvrtc_compiles_a_device_only_file_and_says_so() {
    if !compiler() {
        return;
    }
    let version = warpscope_toolkit::find(None).unwrap().version;
    let args = [
        "analyze",
        "examples/transpose.cu",
        "--kernel",
        "transpose_naive",
        "--grid",
        "8,8",
        "--block",
        "32,8",
        "--arg",
        "width=256",
        "--arg",
        "height=256",
        "--cc",
        "7.5,9.0",
        "--format",
        "json",
    ];
    let (ok, out, err) = warpscope(&args);
    assert!(ok, "{err}");
    assert_eq!(
        err.lines().next().unwrap(),
        format!("analyzing examples/transpose.cu: NVRTC {version} → sm_90 PTX, SASS checked, costed for CC 7.5, 9.0; own targets compared: sm_75 for 7.5")
    );
    let out_nvcc = std::process::Command::new(env!("CARGO_BIN_EXE_warpscope"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("WARPSCOPE_NVCC_ONLY", "1")
        .output()
        .unwrap();
    let err_nvcc = String::from_utf8_lossy(&out_nvcc.stderr);
    assert!(
        err_nvcc.starts_with(&format!(
            "analyzing examples/transpose.cu: nvcc {version} → sm_90 PTX"
        )),
        "{err_nvcc}"
    );
    // Every figure and position the same; only the PTX lines may move.
    let strip = |s: &str| -> String {
        s.lines()
            .filter(|l| !l.contains("\"ptx_line\""))
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_eq!(
        strip(&out),
        strip(&String::from_utf8_lossy(&out_nvcc.stdout))
    );
}
