//! The preprocessor through [`Source`]: a kernel using a local header's macro and
//! `__device__` function, with every position (errors at parse, lowering and run time, and
//! sites) naming the header's own file:line:col, and the kernel's own lines unchanged.

use std::path::{Path, PathBuf};
use warpscope_cuda::{Error, Kernel, Source, DEFAULT_MAX_STEPS};

/// A folder holding `files`, fresh for this test.
fn folder(name: &str, files: &[(&str, &str)]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("warpscope-src-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    for (f, text) in files {
        std::fs::write(dir.join(f), text).unwrap();
    }
    dir
}

const HEADER: &str = "#pragma once\n\
#define STRIDE(n) ((n) * 2) // doubled\n\
__device__ float fetch(const float* p, int i) {\n\
  return p[STRIDE(i)];\n\
}\n";

const KERNEL: &str = "#include <cuda_runtime.h>\n\
#include \"header.cuh\"\n\
# ifndef OUT_T\n\
#  define OUT_T float\n\
# endif\n\
__global__ void k(const float* in, OUT_T* out) {\n\
  int i = threadIdx.x;\n\
  out[i] = fetch(in, i);\n\
}\n";

fn kernel(dir: &Path, src: &str) -> Result<Kernel, Error> {
    let file = dir.join("k.cu");
    Source::parse(file.to_str().unwrap(), src, &[])?.kernel("k")
}

fn launch(k: &Kernel, in_elems: u64) -> Result<Vec<(usize, u64)>, Error> {
    let cfg = k.configure(
        &[],
        &[("in".to_string(), in_elems), ("out".to_string(), 32)],
        [1, 1, 1],
        [32, 1, 1],
        0,
        DEFAULT_MAX_STEPS,
    )?;
    let mut out = Vec::new();
    k.run(&cfg, &mut |s, a| out.push((s, a.addrs[1] - a.addrs[0])))?;
    Ok(out)
}

#[test]
fn sites_in_a_header_name_the_header() {
    let dir = folder("sites", &[("header.cuh", HEADER)]);
    let k = kernel(&dir, KERNEL).unwrap();
    let sites = k.sites();
    assert_eq!(sites.len(), 2);
    // fetch's load: header.cuh line 4, column 8 (a `\` line end in a Rust string drops
    // the indent), spelled as written (the macro use).
    assert_eq!((sites[0].loc.line, sites[0].loc.col), (4, 8));
    assert_eq!(sites[0].text, "p[STRIDE(i)]");
    assert!(k.site_file(0).unwrap().ends_with("header.cuh"));
    // The kernel's store keeps its own line 8, column 1.
    assert_eq!((sites[1].loc.line, sites[1].loc.col), (8, 1));
    assert_eq!(k.site_file(1), None);
    // Lanes 8 bytes apart (STRIDE doubles the index) on the load, 4 on the store.
    assert_eq!(launch(&k, 64).unwrap(), vec![(0, 8), (1, 4)]);
}

#[test]
fn errors_inside_a_header_name_the_header() {
    let dir = folder("errors", &[("header.cuh", HEADER)]);
    let k = kernel(&dir, KERNEL).unwrap();
    // `in` holds 32 floats: lane 16 reads in[32].
    let e = launch(&k, 32).unwrap_err().to_string();
    assert!(e.contains("header.cuh:4:8: global load of 4 bytes"), "{e}");
    // A syntax error in the header.
    let dir = folder(
        "syntax",
        &[("header.cuh", "__device__ int f() {\n  return (1 + ;\n}\n")],
    );
    let e = kernel(&dir, KERNEL).err().unwrap().to_string();
    assert!(e.contains("header.cuh:2:"), "{e}");
    // A missing header names where it was looked for.
    let e = kernel(&dir, "#include \"nothere.cuh\"\n")
        .err()
        .unwrap()
        .to_string();
    assert!(
        e.contains("k.cu:1:1: cannot find header \"nothere.cuh\""),
        "{e}"
    );
}

#[test]
fn function_like_defines_from_the_command_line() {
    let src = "__global__ void k(float* a) { a[AT(threadIdx.x)] = 0; }";
    let s = Source::parse("k.cu", src, &["AT(i)=((i) * 4)".to_string()]).unwrap();
    let k = s.kernel("k").unwrap();
    assert_eq!(k.sites()[0].text, "a[AT(threadIdx.x)]");
    assert_eq!((k.sites()[0].loc.line, k.sites()[0].loc.col), (1, 31));
    let cfg = k
        .configure(
            &[],
            &[("a".to_string(), 128)],
            [1, 1, 1],
            [32, 1, 1],
            0,
            100,
        )
        .unwrap();
    let mut strides = Vec::new();
    k.run(&cfg, &mut |_, a| strides.push(a.addrs[1] - a.addrs[0]))
        .unwrap();
    assert_eq!(strides, vec![16]);
}
