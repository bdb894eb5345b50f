//! Modern kernels through the compiled path: every kernel of a corpus compiled by the pip
//! nvcc for sm_75, sm_80, sm_90 and sm_120 decodes with no instruction left out (bf16, fp8,
//! `assert`, `cuda::pipeline`/`cuda::barrier`, CUB's block primitives, tensor cores), and
//! launches of them give the figures and errors a CUDA developer expects. Tests that need
//! the compiler skip where none is found (`scripts/test.sh` installs one from PyPI).
//! CUDA 13 compiles no target below sm_75, so sm_70 is not in the list.

mod common;
use common::{json, warpscope};
use rayon::prelude::*;
use std::path::{Path, PathBuf};
use warpscope_toolkit::{CompileOptions, Target, Toolkit};

fn toolkit() -> Option<Toolkit> {
    match warpscope_toolkit::find(None) {
        Ok(t) => Some(t),
        Err(_) => {
            eprintln!("skipped: no CUDA compiler (scripts/test.sh installs one from PyPI)");
            None
        }
    }
}

fn cu_files(dir: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join(dir))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "cu"))
        .collect();
    v.sort();
    v
}

/// Every `.entry` of every corpus file, for every target, decodes: the list of failures
/// (file, target, kernel, error) is empty.
#[test]
fn corpus_decodes_for_every_target_with_no_instruction_left_out() {
    let Some(tk) = toolkit() else { return };
    let mut files = cu_files("tests/kernels/modern");
    files.extend(cu_files("tests/kernels/compiled"));
    files.extend(cu_files("examples"));
    let jobs: Vec<(PathBuf, u32)> = files
        .iter()
        .flat_map(|f| [75, 80, 90, 120].map(|sm| (f.clone(), sm)))
        .collect();
    let opts = CompileOptions {
        std: Some("c++17".into()),
        ..Default::default()
    };
    let results: Vec<(String, usize, Vec<String>)> = jobs
        .par_iter()
        .map(|(f, sm)| {
            let target = Target {
                sm: format!("sm_{sm}"),
                note: None,
            };
            let name = format!("{} sm_{sm}", f.file_name().unwrap().to_string_lossy());
            let ptx = match tk.compile_ptx(f, &target, &opts) {
                Ok(c) => c.ptx,
                Err(e) => return (name, 0, vec![format!("nvcc: {e}")]),
            };
            let m = match warpscope_ptx::parse(&ptx) {
                Ok(m) => m,
                Err(e) => return (name, 0, vec![format!("parse: {e}")]),
            };
            let entries: Vec<_> = m
                .functions
                .iter()
                .filter(|f| f.is_entry && f.body.is_some())
                .collect();
            let failures = entries
                .iter()
                .filter_map(|e| {
                    warpscope_simt::Program::decode(&m, e)
                        .err()
                        .map(|err| format!("{}: {err}", warpscope_ptx::demangle(&e.name)))
                })
                .collect();
            (name, entries.len(), failures)
        })
        .collect();
    let kernels: usize = results.iter().map(|r| r.1).sum();
    let failures: Vec<String> = results
        .iter()
        .flat_map(|(n, _, f)| f.iter().map(move |e| format!("{n}: {e}")))
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // The corpus is what it says: 4 targets of at least 30 kernels each.
    assert!(kernels >= 4 * 30, "{kernels} kernels");
}

const PIPE: &str = "tests/kernels/modern/pipeline.cu";

/// `cuda::memcpy_async` with a block-wide `cuda::barrier` (cp.async + mbarrier on sm_80):
/// each block's 256 float4 arrive as one 16-byte cp.async per thread (8 requests, 128
/// sectors a block at CC 8.0), attributed to the user's memcpy_async line, not CCCL's.
#[test]
fn cuda_barrier_copy_runs_on_cp_async_and_mbarrier() {
    if toolkit().is_none() {
        return;
    }
    let v = json(&[
        "analyze",
        PIPE,
        "--kernel",
        "barrier_copy",
        "--grid",
        "2",
        "--block",
        "256",
        "--cc",
        "8.0",
        "-q",
    ]);
    let sites = v["architectures"][0]["sites"].as_array().unwrap();
    let cp = sites
        .iter()
        .find(|s| s["ptx"].as_str().unwrap_or("").starts_with("cp.async.cg") && s["op"] == "load")
        .unwrap_or_else(|| panic!("{sites:#?}"));
    assert_eq!(cp["line"], 43, "{cp}");
    assert_eq!(cp["requests"], 16);
    assert_eq!(cp["transactions"], 256);
}

/// The pipelined sum on sm_75, where cuda::barrier spins on an atomic with a back-off that
/// reads %globaltimer and sleeps: the warps take turns and the launch ends.
#[test]
fn cuda_pipeline_and_spinning_barrier_end() {
    if toolkit().is_none() {
        return;
    }
    let v = json(&[
        "analyze",
        PIPE,
        "--kernel",
        "pipelined_sum",
        "--grid",
        "2",
        "--block",
        "256",
        "--arg",
        "tiles=4",
        "--cc",
        "7.5,8.0",
        "-q",
    ]);
    // 4 tiles of 256 floats a block, one 4-byte cp.async per thread and tile: 2 blocks × 8
    // warps × 4 = 64 requests of 4 sectors each.
    let loads: u64 = v["architectures"][1]["sites"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["space"] == "global" && s["op"] == "load")
        .map(|s| s["requests"].as_u64().unwrap())
        .sum();
    assert_eq!(loads, 64);
}

/// A device assert() that fails stops the launch with its condition, file, line and thread;
/// one that holds costs nothing.
#[test]
fn device_assert_fires_with_its_condition_and_thread() {
    if toolkit().is_none() {
        return;
    }
    let k = "tests/kernels/modern/assert.cu";
    let (ok, _, err) = warpscope(&[
        "analyze",
        k,
        "--kernel",
        "checked_index",
        "--grid",
        "4",
        "--block",
        "128",
        "--arg",
        "bad=300",
        "--cc",
        "9.0",
        "-q",
    ]);
    assert!(!ok);
    assert!(
        err.contains("assertion `i != bad` failed at")
            && err.contains("assert.cu:13")
            && err.contains("thread (44,0,0) of block (2,0,0)"),
        "{err}"
    );
    let v = json(&[
        "analyze",
        k,
        "--kernel",
        "checked_index",
        "--grid",
        "4",
        "--block",
        "128",
        "--arg",
        "bad=-1",
        "--cc",
        "9.0",
        "-q",
    ]);
    // 512 ints read and written: 16 requests of 4 sectors each way.
    let t = &v["architectures"][0]["totals"];
    assert_eq!(t["global_load"]["requests"], 16);
    assert_eq!(t["global_load"]["transactions"], 64);
}

/// bf16x2 arithmetic (sm_80+) runs: 8-byte... 4-byte bf16x2 elements, three loads and one
/// store a thread, each warp's 128 bytes in 4 sectors.
#[test]
fn bf16x2_kernel_runs() {
    if toolkit().is_none() {
        return;
    }
    let v = json(&[
        "analyze",
        "tests/kernels/modern/bf16.cu",
        "--kernel",
        "bf16x2_fma",
        "--grid",
        "4",
        "--block",
        "256",
        "--arg",
        "n=1024",
        "--cc",
        "9.0",
        "-q",
    ]);
    let t = &v["architectures"][0]["totals"];
    // x read twice in the source, loaded once: x, w, y = 3 × 32 requests.
    assert_eq!(t["global_load"]["requests"], 96);
    assert_eq!(t["global_load"]["transactions"], 384);
    assert_eq!(t["global_store"]["requests"], 32);
}
