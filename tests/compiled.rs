//! The compiled path: PTX files as given, `.cu` files compiled by nvcc, and their bad input.
//! Tests that need a CUDA compiler say so and skip where none is found (`scripts/test.sh`
//! installs one from PyPI, so CI runs them).

mod common;
use common::{compiler, json, temp, warpscope};

fn totals(v: &serde_json::Value, key: &str) -> (u64, u64) {
    let t = &v["architectures"][0]["totals"][key];
    (
        t["requests"].as_u64().unwrap(),
        t["transactions"].as_u64().unwrap() + t["wavefronts"].as_u64().unwrap_or(0),
    )
}

const TRANSPOSE: &[&str] = &[
    "--grid",
    "32,32",
    "--block",
    "32,8",
    "--arg",
    "width=1024",
    "--arg",
    "height=1024",
    "--cc",
    "9.0",
];

/// A PTX file as given (nvcc 13.5, sm_90, committed) runs without any compiler, by its
/// demangled name, and gives the figures of the same kernel through the source interpreter
/// (the compiler keeps every access of the transposes).
#[test]
fn ptx_file_equals_source_path_on_transposes() {
    for k in [
        "transpose_naive",
        "transpose_coalesced",
        "transpose_no_bank_conflicts",
    ] {
        let mut a = vec![
            "analyze",
            "crates/ptx/tests/data/transpose.ptx",
            "--kernel",
            k,
        ];
        a.extend(TRANSPOSE);
        // PTX parameters answer to param_K; the source's names need the source.
        let a: Vec<&str> = a
            .iter()
            .map(|x| match *x {
                "width=1024" => "param_2=1024",
                "height=1024" => "param_3=1024",
                o => o,
            })
            .collect();
        let ptx = json(&a);
        let mut s = vec![
            "analyze",
            "examples/transpose.cu",
            "--kernel",
            k,
            "--frontend",
            "source",
        ];
        s.extend(TRANSPOSE);
        let src = json(&s);
        for key in ["global_load", "global_store", "shared_load", "shared_store"] {
            assert_eq!(totals(&ptx, key), totals(&src, key), "{k} {key}");
        }
    }
    // The naive transpose's store walks columns: 32 sectors per request at CC 9.0.
    let v = json(&[
        "analyze",
        "crates/ptx/tests/data/transpose.ptx",
        "--kernel",
        "transpose_naive(float*, float const*, int, int)",
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
    assert_eq!(totals(&v, "global_store"), (32768, 1048576));
    assert_eq!(totals(&v, "global_load"), (32768, 131072));
    // The load and the store of one statement are told apart by their own text and column
    // (nvcc gives both the statement's column, 9).
    let sites = v["architectures"][0]["sites"].as_array().unwrap();
    let site = sites.iter().find(|s| s["ptx"] == "ld.global.f32").unwrap();
    assert_eq!(site["text"], "idata[(y + j) * width + x]");
    assert_eq!(
        (site["line"].as_u64(), site["column"].as_u64()),
        (Some(42), Some(39))
    );
    let store = sites.iter().find(|s| s["ptx"] == "st.global.f32").unwrap();
    assert_eq!(store["text"], "odata[x * height + (y + j)]");
    assert_eq!(store["column"], 9);
    // The line is the .cu's that the PTX's `.file` names, found in this checkout.
    assert_eq!(site["file"], "examples/transpose.cu");
    assert!(site["ptx_line"].as_u64().unwrap() > 0);
}

/// The reductions' shared loads through the compiled path: the executor runs the PTX's
/// predicated instructions and barriers; figures as the source path's.
#[test]
fn ptx_reduction_matches_source_path() {
    for k in ["reduce_interleaved", "reduce_strided", "reduce_sequential"] {
        let common = [
            "--grid",
            "4096",
            "--block",
            "256",
            "--dynamic-smem",
            "1024",
            "--cc",
            "9.0",
        ];
        let mut p = vec![
            "analyze",
            "crates/ptx/tests/data/reduction.ptx",
            "--kernel",
            k,
            "--arg",
            "param_2=1048576",
        ];
        p.extend(common);
        let mut s = vec![
            "analyze",
            "examples/reduction.cu",
            "--kernel",
            k,
            "--frontend",
            "source",
            "--arg",
            "n=1048576",
        ];
        s.extend(common);
        let (ptx, src) = (json(&p), json(&s));
        for key in ["global_load", "global_store", "shared_load", "shared_store"] {
            assert_eq!(totals(&ptx, key), totals(&src, key), "{k} {key}");
        }
    }
}

/// A Triton-style PTX (hand-written fixture: `.ptr.global` parameters, `.reqntid`, vector
/// loads with spaces inside brackets, debug sections) runs: each program of 128 threads
/// handles 1024 elements, two 16-byte loads per thread and input and two 16-byte stores.
#[test]
fn triton_style_ptx_runs() {
    let v = json(&[
        "analyze",
        "crates/ptx/tests/data/triton_add.ptx",
        "--kernel",
        "add_kernel",
        "--grid",
        "8",
        "--block",
        "128",
        "--arg",
        "param_3=8192",
        "--cc",
        "9.0",
    ]);
    let (lr, ls) = totals(&v, "global_load");
    let (sr, ss) = totals(&v, "global_store");
    // 8 blocks × 4 warps × 2 instructions; every instruction moves 32 × 16 bytes = 16
    // sectors; two inputs.
    assert_eq!((lr, ls), (2 * 8 * 4 * 2, 2 * 8 * 4 * 2 * 16), "{v}");
    assert_eq!((sr, ss), (8 * 4 * 2, 8 * 4 * 2 * 16));
}

#[test]
fn malformed_ptx_names_line_and_column() {
    let f = temp("bad.ptx", ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k(\n.param .u64 p)\n{\n  ld.global.f32 %f1, [%rd1+;\n}\n");
    let (ok, _, err) = warpscope(&[
        "analyze", &f, "--kernel", "k", "--grid", "1", "--block", "32",
    ]);
    assert!(!ok);
    assert!(err.contains("bad.ptx:7:"), "{err}");
}

#[test]
fn unsupported_instruction_is_named_with_its_line() {
    let f = temp(
        "tex.ptx",
        ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k(\n.param .u64 t)\n{\n.reg .b64 %rd<2>;\n.reg .f32 %f<5>;\n.reg .b32 %r<2>;\nld.param.u64 %rd1, [t];\ntxq.width.b32 %r1, [%rd1];\nret;\n}\n",
    );
    let (ok, _, err) = warpscope(&[
        "analyze", &f, "--kernel", "k", "--grid", "1", "--block", "32",
    ]);
    assert!(!ok);
    assert!(err.contains("PTX line 11"), "{err}");
    assert!(err.contains("txq.width.b32"), "{err}");
    assert!(err.contains("tex, tld4, suld and sust are"), "{err}");
}

#[test]
fn missing_kernel_lists_the_entries() {
    let (ok, _, err) = warpscope(&[
        "analyze",
        "crates/ptx/tests/data/transpose.ptx",
        "--kernel",
        "transpose_fast",
        "--grid",
        "1",
        "--block",
        "32",
    ]);
    assert!(!ok);
    assert!(err.contains("transpose_naive"), "{err}");
    assert!(err.contains("transpose_coalesced"), "{err}");
}

#[test]
fn launch_that_does_not_match_the_parameters() {
    let base = [
        "analyze",
        "crates/ptx/tests/data/transpose.ptx",
        "--kernel",
        "transpose_naive",
        "--grid",
        "1",
        "--block",
        "32",
    ];
    let (ok, _, err) = warpscope(&base);
    assert!(!ok);
    // Named by the source the PTX's `.file` points to (examples/transpose.cu).
    assert!(
        err.contains("width (int)") && err.contains("--arg width="),
        "{err}"
    );
    let mut a = base.to_vec();
    a.extend([
        "--arg",
        "param_2=4",
        "--arg",
        "param_3=4",
        "--arg",
        "depth=3",
    ]);
    let (ok, _, err) = warpscope(&a);
    assert!(!ok);
    assert!(err.contains("no parameter 'depth'"), "{err}");
    let mut a = base.to_vec();
    a.extend([
        "--arg",
        "param_0=4",
        "--arg",
        "param_2=4",
        "--arg",
        "param_3=4",
    ]);
    let (ok, _, err) = warpscope(&a);
    assert!(!ok);
    assert!(err.contains("is a pointer"), "{err}");
}

/// Out of bounds: the thread, block, PTX line and source line of the faulting access.
#[test]
fn out_of_bounds_names_thread_block_and_lines() {
    let (ok, _, err) = warpscope(&[
        "analyze",
        "crates/ptx/tests/data/transpose.ptx",
        "--kernel",
        "transpose_naive",
        "--grid",
        "2",
        "--block",
        "32,8",
        "--arg",
        "param_2=64",
        "--arg",
        "param_3=64",
        "--alloc",
        "param_1=100",
    ]);
    assert!(!ok);
    assert!(
        err.contains("outside allocation 'idata' (400 bytes), 1648 bytes after its end"),
        "{err}"
    );
    assert!(err.contains("PTX line"), "{err}");
    assert!(err.contains("transpose.cu:"), "{err}");
    assert!(err.contains("of block ("), "{err}");
}

#[test]
fn misaligned_access_is_a_fault() {
    let f = temp(
        "mis.ptx",
        ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k(\n.param .u64 p)\n{\n.reg .b64 %rd<3>;\n.reg .f32 %f<2>;\nld.param.u64 %rd1, [p];\nld.global.f32 %f1, [%rd1+2];\nret;\n}\n",
    );
    let (ok, _, err) = warpscope(&[
        "analyze", &f, "--kernel", "k", "--grid", "1", "--block", "32",
    ]);
    assert!(!ok);
    assert!(err.contains("misaligned 4-byte load"), "{err}");
    assert!(err.contains("thread (0,0,0) of block (0,0,0)"), "{err}");
}

/// `.cu` through nvcc: the same figures as the source path where the compiler keeps every
/// access (Harris's offset kernel, a template instantiated for the compile).
#[test]
fn cu_compiled_path_equals_source_on_harris() {
    if !compiler() {
        return;
    }
    let common = [
        "--kernel",
        "offset<float>",
        "--grid",
        "4096",
        "--block",
        "256",
        "--arg",
        "s=1",
        "--cc",
        "1.0,1.3,2.0,3.5,9.0",
    ];
    let mut c = vec!["analyze", "examples/harris.cu", "--frontend", "ptx"];
    c.extend(common);
    let mut s = vec!["analyze", "examples/harris.cu", "--frontend", "source"];
    s.extend(common);
    let (cv, sv) = (json(&c), json(&s));
    for k in 0..5 {
        assert_eq!(
            cv["architectures"][k]["totals"], sv["architectures"][k]["totals"],
            "arch {k}"
        );
    }
    // CC 1.0 misaligned half-warps: 16 transactions each.
    assert_eq!(
        cv["architectures"][0]["totals"]["global_load"]["transactions"],
        1048576
    );
    assert!(cv["architectures"][0]["sites"][0]["ptx"]
        .as_str()
        .unwrap()
        .starts_with("ld.global"));
}

/// A compiler error shows the command that failed and nvcc's own message.
#[test]
fn compiler_error_is_shown_verbatim_with_the_command() {
    if !compiler() {
        return;
    }
    let f = temp(
        "broken.cu",
        "__global__ void k(float* a) {\n  a[0] = undeclared_name;\n}\n",
    );
    let (ok, _, err) = warpscope(&[
        "analyze",
        &f,
        "--kernel",
        "k",
        "--grid",
        "1",
        "--block",
        "32",
        "--frontend",
        "ptx",
    ]);
    assert!(!ok);
    assert!(err.contains("undeclared_name"), "{err}");
    assert!(err.contains("nvcc") && err.contains("-ptx"), "{err}");
}

/// With no compiler anywhere, `--frontend ptx` says how to get one; `auto` falls back to
/// the source interpreter with a note.
#[test]
fn no_compiler_says_how_to_install_one() {
    let run = |frontend: &str| {
        std::process::Command::new(env!("CARGO_BIN_EXE_warpscope"))
            .args([
                "analyze",
                "examples/harris.cu",
                "--kernel",
                "offset_copy",
                "--grid",
                "4",
                "--block",
                "32",
                "--arg",
                "n=128",
                "--arg",
                "offset=0",
                "--cc",
                "9.0",
                "--frontend",
                frontend,
            ])
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .env_remove("VIRTUAL_ENV")
            .env_remove("CUDA_HOME")
            .env_remove("CUDA_PATH")
            .env("PATH", "/nonexistent")
            .output()
            .unwrap()
    };
    let out = run("ptx");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(err.contains("pip install nvidia-cuda-nvcc"), "{err}");
    let out = run("auto");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let all = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    // (A build with feature `cuda` may still find NVRTC in a system toolkit.)
    assert!(
        all.contains("source interpreter used") || all.contains("compiled with NVRTC"),
        "{all}"
    );
}

/// A kernel with a `__noinline__` call, `__shfl_down_sync`, an atomic, `printf` (local-memory
/// argument buffer) and inline-asm `cp.async` runs: 4 blocks of 2 warps.
#[test]
fn calls_shuffles_atomics_printf_and_cp_async_run() {
    let v = json(&[
        "analyze",
        "crates/ptx/tests/data/features.ptx",
        "--kernel",
        "features",
        "--grid",
        "4",
        "--block",
        "64",
        "--arg",
        "param_3=256",
        "--cc",
        "9.0",
    ]);
    let sites = v["architectures"][0]["sites"].as_array().unwrap();
    let ptx: Vec<&str> = sites.iter().map(|s| s["ptx"].as_str().unwrap()).collect();
    assert!(ptx.contains(&"cp.async.ca.shared.global"), "{ptx:?}");
    assert!(ptx.contains(&"atom.global.add.u32"), "{ptx:?}");
    // The atomic inlined from the toolkit's header is attributed to the kernel's call.
    let atom = sites
        .iter()
        .find(|s| s["ptx"] == "atom.global.add.u32")
        .unwrap();
    assert_eq!(atom["text"], "atomicAdd(counter, 1);");
    assert_eq!(atom["op"], "atomic");
    // cp.async, shared load, atomic: once per warp (8 warps); printf's 8-byte local store is
    // two requests of one 4-byte word (measured on H100, tests/data/h100/local/).
    let reqs: u64 = sites.iter().map(|s| s["requests"].as_u64().unwrap()).sum();
    assert_eq!(reqs, 43);
}

/// Without nvcc, a build with feature `cuda` compiles through NVRTC (loaded at run time) and
/// gives the figures nvcc's PTX gives; templates are named by NVRTC name expressions.
#[cfg(feature = "cuda")]
#[test]
fn nvrtc_compiles_when_nvcc_is_missing() {
    let Ok(tk) = warpscope_toolkit::find(None) else {
        eprintln!("skipped: no CUDA toolkit to take NVRTC from (scripts/test.sh installs one)");
        return;
    };
    let lib = tk
        .nvcc
        .parent()
        .and_then(|b| b.parent())
        .map(|r| r.join("lib"))
        .unwrap();
    if !lib.join("libnvrtc.so.13").exists() && !lib.join("libnvrtc.so.12").exists() {
        eprintln!("skipped: no libnvrtc beside {}", tk.nvcc.display());
        return;
    }
    let args = [
        "analyze",
        "examples/reduction.cu",
        "--kernel",
        "reduce_sequential",
        "--grid",
        "64",
        "--block",
        "256",
        "--dynamic-smem",
        "1024",
        "--arg",
        "n=16384",
        "--cc",
        "9.0",
        "--format",
        "json",
    ];
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_warpscope"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env_remove("VIRTUAL_ENV")
        .env_remove("CUDA_HOME")
        .env_remove("CUDA_PATH")
        .env("PATH", "/usr/bin:/bin")
        .env("LD_LIBRARY_PATH", &lib)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let nvrtc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        nvrtc["notes"]
            .to_string()
            .contains("compiled with NVRTC for compute_90"),
        "{nvrtc}"
    );
    // The same launch through nvcc (json() adds --format json).
    let mut a = args[..args.len() - 2].to_vec();
    a.extend(["--frontend", "ptx"]);
    let nvcc = json(&a);
    for k in ["global_load", "global_store", "shared_load", "shared_store"] {
        assert_eq!(totals(&nvrtc, k), totals(&nvcc, k), "{k}");
    }
}

/// One compile serves every CC asked for; the other CCs' own targets are compiled too and
/// their memory instructions compared: the same for the transposes on sm_75 … sm_120 (no
/// note), different for cp.async on sm_75 (no cp.async there: a note says to analyze it
/// alone).
#[test]
fn other_targets_are_compared_and_named_when_they_differ() {
    if !compiler() {
        return;
    }
    let v = json(&[
        "analyze",
        "examples/transpose.cu",
        "--kernel",
        "transpose_coalesced",
        "--grid",
        "2,2",
        "--block",
        "32,8",
        "--arg",
        "width=64",
        "--arg",
        "height=64",
    ]);
    assert_eq!(v["notes"], serde_json::json!([]), "{}", v["notes"]);
    let v = json(&[
        "analyze",
        "tests/kernels/compiled/cp_async.cu",
        "--kernel",
        "cp_async_copy",
        "--grid",
        "4",
        "--block",
        "256",
        "--arg",
        "n=8192",
        "--cc",
        "7.5,9.0",
    ]);
    let notes = v["notes"].to_string();
    assert!(
        notes.contains("CC 7.5 costed on the code for sm_90") && notes.contains("--cc 7.5"),
        "{notes}"
    );
}

/// nvcc puts every kernel's `__shared__` arrays at module scope; a kernel gets only those it
/// uses (as ptxas allocates them). examples/shared_banks.cu has seven kernels whose arrays
/// add up to 121 KiB, over CC 2.0's 48 KB; smem_stride_f32's own `s` fits, and its stride-2
/// read is a 2-way conflict: 8,192 requests, 16,384 wavefronts on 2.0 and 9.0, 8,192 on 3.5.
#[test]
fn a_kernel_gets_only_its_own_shared_arrays() {
    if !compiler() {
        return;
    }
    let v = json(&[
        "analyze",
        "examples/shared_banks.cu",
        "--kernel",
        "smem_stride_f32",
        "--grid",
        "1024",
        "--block",
        "256",
        "--arg",
        "stride=2",
        "--arg",
        "fill=0",
        "--arg",
        "store=0",
        "--cc",
        "2.0,3.5,9.0",
        "--frontend",
        "ptx",
    ]);
    let wf: Vec<(u64, u64)> = (0..3)
        .map(|k| {
            let t = &v["architectures"][k]["totals"]["shared_load"];
            (
                t["requests"].as_u64().unwrap(),
                t["wavefronts"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(wf, vec![(8192, 16384), (8192, 8192), (8192, 16384)]);
}

/// What real kernels do that the compiled path must read as nvcc does (found running
/// Rodinia and cuda-samples kernels): a prototype's parameter names give way to the
/// definition's (gaussian's `Fan2`); `--alloc` of a pointer to a struct counts structs
/// (bfs's `Node*`); `warpSize` compiles to PTX's `WARP_SZ` (reduce7); host code includes
/// `cuda_profiler_api.h` (matrixMul; the test command installs its wheel).
#[test]
fn real_kernel_idioms_on_the_compiled_path() {
    if !compiler() {
        return;
    }
    let proto = temp(
        "proto.cu",
        "__global__ void k(float *m, int Size);\n\
         __global__ void k(float *m_cuda, int n) { if (threadIdx.x < n) m_cuda[threadIdx.x] = 1.0f; }\n",
    );
    let v = json(&[
        "analyze",
        &proto,
        "--kernel",
        "k",
        "--grid",
        "1",
        "--block",
        "64",
        "--arg",
        "n=40",
        "--alloc",
        "m_cuda=40",
        "--frontend",
        "ptx",
        "--cc",
        "9.0",
    ]);
    // 40 of 64 threads store: warp 0 whole (4 sectors), warp 1 lanes 0–7 (1 sector).
    assert_eq!(totals(&v, "global_store"), (2, 5));

    let nodes = temp(
        "nodes.cu",
        "struct Node { int starting; int no_of_edges; };\n\
         __global__ void k(Node *nodes, int *out) { out[threadIdx.x] = nodes[threadIdx.x].starting + nodes[threadIdx.x].no_of_edges; }\n",
    );
    let v = json(&[
        "analyze",
        &nodes,
        "--kernel",
        "k",
        "--grid",
        "1",
        "--block",
        "32",
        "--alloc",
        "nodes=32",
        "--alloc",
        "out=32",
        "--frontend",
        "ptx",
        "--cc",
        "9.0",
    ]);
    // 32 Nodes of 8 bytes (counted as bytes, the allocation was 32 bytes and thread 4
    // faulted): nvcc loads each field apart, 2 loads of 8 sectors (stride 8 bytes).
    assert_eq!(totals(&v, "global_load"), (2, 16));

    let warp = temp(
        "warp.cu",
        "#include <cuda_profiler_api.h>\n\
         __global__ void k(float *a) { if (threadIdx.x % warpSize == 0) a[threadIdx.x / warpSize] = 1.0f; }\n",
    );
    let v = json(&[
        "analyze",
        &warp,
        "--kernel",
        "k",
        "--grid",
        "1",
        "--block",
        "64",
        "--frontend",
        "ptx",
        "--cc",
        "9.0",
    ]);
    assert_eq!(totals(&v, "global_store"), (2, 2));
}

/// A struct passed by value (Rodinia lavaMD's `dim_str`) takes its scalars from
/// `--arg NAME.FIELD=V`, laid out as the source declares them, on both front ends; a whole
/// value, no field, an unknown field or a value the field cannot hold is an error listing
/// the fields.
#[test]
fn struct_by_value_takes_its_fields() {
    let f = temp(
        "dims.cu",
        "struct dims { int a, b, c; long n; };\n\
         __global__ void k(dims d, float *out) { if (threadIdx.x < d.n) out[threadIdx.x + d.b] = 1.0f; }\n",
    );
    fn with<'a>(base: &[&'a str], extra: &[&'a str]) -> Vec<&'a str> {
        let mut a = base.to_vec();
        a.extend_from_slice(extra);
        a
    }
    let frontends: &[&str] = if compiler() {
        &["source", "ptx"]
    } else {
        &["source"]
    };
    for fe in frontends {
        let base = [
            "analyze",
            &f,
            "--kernel",
            "k",
            "--grid",
            "1",
            "--block",
            "32",
            "--alloc",
            "out=64",
            "--frontend",
            fe,
            "--cc",
            "9.0",
        ];
        // d.n = 20 lanes store from out[8] on: bytes 32–111, 3 sectors; the struct itself
        // costs nothing (parameter space, no local copy reported).
        let v = json(&with(&base, &["--arg", "d.n=20", "--arg", "d.b=8"]));
        assert_eq!(totals(&v, "global_store"), (1, 3), "{fe}");
        assert_eq!(totals(&v, "local_load"), (0, 0), "{fe}");
        for (args, want) in [
            (vec!["--arg", "d=20"], "passed by value (24 bytes)"),
            (vec![], "d.n ("),
            (vec!["--arg", "d.q=1"], "has no field 'q'"),
            (vec!["--arg", "d.n=1.5"], "the field is a"),
        ] {
            let (ok, _, err) = warpscope(&with(&base, &args));
            assert!(!ok && err.contains(want), "{fe} {args:?}: {err}");
        }
    }
}

/// ptxas's register spills (tests/kernels/compiled/spill.cu: `__launch_bounds__(1024, 2)`
/// leaves 32 registers for 40 live values) run as local loads and stores: one request of 4
/// sectors per 4-byte word and warp, so the launch's local figures are the spill and refill
/// bytes `ptxas -v` reports (quoted in the note) over 4, times the 128 warps. Measured on the
/// H100 (tests/data/h100/verify/sass.out): 3,968 store and 5,504 load requests, exact. With
/// `--no-sass` there is no local traffic: the PTX keeps all 40 values in registers.
#[test]
fn register_spills_are_local_accesses() {
    if !compiler() {
        return;
    }
    let args = [
        "analyze",
        "tests/kernels/compiled/spill.cu",
        "--kernel",
        "spill",
        "--grid",
        "4",
        "--block",
        "1024",
        "--arg",
        "n=4096",
        "--alloc",
        "in=163840",
        "--alloc",
        "out=4096",
        "--frontend",
        "ptx",
        "--cc",
        "9.0",
    ];
    let v = json(&args);
    let notes = v["notes"].to_string();
    if !notes.contains("spills registers") {
        eprintln!("skipped: no ptxas/nvdisasm, or this ptxas does not spill here: {notes}");
        return;
    }
    let bytes = |what: &str| -> u64 {
        let at = notes.find(what).unwrap();
        notes[..at]
            .split_whitespace()
            .last()
            .unwrap()
            .parse()
            .unwrap()
    };
    let (st, ld) = (bytes(" bytes spill stores"), bytes(" bytes spill loads"));
    assert_eq!(totals(&v, "local_store"), (st / 4 * 128, st / 4 * 128 * 4));
    assert_eq!(totals(&v, "local_load"), (ld / 4 * 128, ld / 4 * 128 * 4));
    let mut plain = args.to_vec();
    plain.push("--no-sass");
    let v = json(&plain);
    assert!(v["architectures"][0]["totals"]["local_store"]["requests"]
        .as_u64()
        .is_none_or(|r| r == 0));
    // Another kernel of the same file: the spilling kernel's note is not its.
    let source = std::fs::read_to_string("tests/kernels/compiled/spill.cu").unwrap();
    let two = temp(
        "two_kernels.cu",
        &format!("{source}__global__ void plain(float* out) {{ out[threadIdx.x] = 1.0f; }}\n"),
    );
    let v = json(&[
        "analyze", &two, "--kernel", "plain", "--grid", "1", "--block", "32", "--cc", "9.0",
    ]);
    assert!(!v["notes"].to_string().contains("spill"), "{}", v["notes"]);
}

/// The 1-D block-tiled SGEMM (siboehm's "kernel 4", `-D NDEBUG`): nvcc unrolls the dotIdx
/// loop twice (4 PTX trips of 2 `Bs` and 16 `As` loads), ptxas unrolls it fully and makes
/// each `As` load and the one 4 bytes on, in 2 consecutive trips, one `LDS.128`, tied to the
/// first of them: a warp executes 8 `LDS` and 16 `LDS.128` per tile, not the PTX's 72
/// `ld.shared`. warpscope proves the merge across trips from the PTX (a constant trip count
/// of 4, the base register advancing 8 bytes a trip) and runs the wide load on the first of
/// each 2 trips: the executed shared loads and their wavefronts equal Nsight Compute's on the
/// H100 (tests/data/h100/compiled/sgemm_1d_blocktile.csv: 12,582,912 and 20,971,520, the
/// instrumented `smsp__sass_*` counters; the hardware `l1tex__data_pipe_lsu_wavefronts_*`
/// one read 20,973,200 and 20,973,140 in two launches, varying run to run as in
/// compiled.csv), and so do the shared stores and the global requests and sectors. With
/// `--no-sass`, the PTX as written: 37,748,736 shared loads.
#[test]
fn sgemm_1d_blocktile_merges_shared_loads_across_unrolled_trips() {
    if !compiler() {
        return;
    }
    let csv = std::fs::read_to_string("tests/data/h100/compiled/sgemm_1d_blocktile.csv").unwrap();
    // Launch 0's value of a metric: the last field of its row, without thousands separators.
    let h100 = |metric: &str| -> u64 {
        let row = csv
            .lines()
            .find(|l| l.starts_with("\"0\",") && l.contains(&format!("\"{metric}\"")))
            .unwrap_or_else(|| panic!("{metric} not in the CSV"));
        let v = row.rsplit("\",\"").next().unwrap();
        v.trim_matches('"').replace(',', "").parse().unwrap()
    };
    let args = [
        "analyze",
        "tests/kernels/compiled/sgemm_1d_blocktile.cu",
        "--kernel",
        "sgemm_1d_blocktile",
        "--grid",
        "16,16",
        "--block",
        "512",
        "--arg",
        "M=1024",
        "--arg",
        "N=1024",
        "--arg",
        "K=1024",
        "--arg",
        "alpha=1",
        "--arg",
        "beta=0",
        "-D",
        "NDEBUG",
        "--frontend",
        "ptx",
        "--cc",
        "9.0",
    ];
    let v = json(&args);
    let notes = v["notes"].to_string();
    if notes.contains("SASS not checked") {
        eprintln!("skipped: no ptxas/nvdisasm to check the SASS with: {notes}");
        return;
    }
    assert!(notes.contains("consecutive trips"), "{notes}");
    let t = &v["architectures"][0]["totals"];
    let got = |k: &str, f: &str| t[k][f].as_u64().unwrap_or(0);
    assert_eq!(
        got("shared_load", "requests"),
        h100("smsp__sass_inst_executed_op_shared_ld.sum")
    );
    assert_eq!(got("shared_load", "requests"), 12_582_912);
    assert_eq!(
        got("shared_load", "wavefronts"),
        h100("smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ld.sum")
    );
    assert_eq!(got("shared_load", "wavefronts"), 20_971_520);
    assert_eq!(
        (
            got("shared_store", "requests"),
            got("shared_store", "wavefronts")
        ),
        (
            h100("smsp__sass_inst_executed_op_shared_st.sum"),
            h100("smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_st.sum")
        )
    );
    assert_eq!(
        (
            got("global_load", "requests"),
            got("global_load", "sectors")
        ),
        (
            h100("l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"),
            h100("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum")
        )
    );
    assert_eq!(
        (
            got("global_store", "requests"),
            got("global_store", "sectors")
        ),
        (
            h100("l1tex__t_requests_pipe_lsu_mem_global_op_st.sum"),
            h100("l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum")
        )
    );
    let mut plain = args.to_vec();
    plain.push("--no-sass");
    let v = json(&plain);
    let t = &v["architectures"][0]["totals"];
    assert_eq!(t["shared_load"]["requests"].as_u64(), Some(37_748_736));
}

/// Where nvcc's `.loc` puts a load on a line that does not access its variable (here the
/// store's line: `moved_loc.ptx` is `moved_loc.cu`'s PTX with the load's `.loc` moved), the
/// figures stay on nvcc's line, as Nsight Compute's source view has them, and a note names
/// the instruction and the source line of its access. The PTX as nvcc made it has no note.
#[test]
fn a_load_on_another_line_than_its_access_is_noted() {
    fn args(ptx: &str) -> Vec<&str> {
        vec![
            "analyze",
            ptx,
            "--kernel",
            "moved",
            "--grid",
            "8",
            "--block",
            "128",
            "--arg",
            "n=1000",
            "--cc",
            "9.0",
            "--no-sass",
            "--format",
            "json",
        ]
    }
    let (ok, out, err) = warpscope(&args("tests/kernels/compiled/moved_loc.ptx"));
    assert!(ok, "{err}");
    assert!(
        err.contains("PTX line 46's load of `a` at line 8 (the source's line 6, `a[i]`)"),
        "{err}"
    );
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let load = &v["architectures"][0]["sites"][0];
    assert_eq!(
        (load["line"].as_u64(), load["op"].as_str()),
        (Some(8), Some("load"))
    );
    // 1,000 floats: 32 warp requests, 125 sectors each way.
    assert_eq!(load["sectors"].as_u64(), Some(125));
    // The same PTX with nvcc's own line information: no note.
    let ptx = std::fs::read_to_string("tests/kernels/compiled/moved_loc.ptx")
        .unwrap()
        .replacen(".loc\t1 8 9\n\tmul.wide", ".loc\t1 6 5\n\tmul.wide", 1);
    let fixed = temp("moved_loc_as_nvcc.ptx", &ptx);
    let (ok, _, err) = warpscope(&args(&fixed));
    assert!(ok, "{err}");
    assert!(!err.contains("line information"), "{err}");
}
