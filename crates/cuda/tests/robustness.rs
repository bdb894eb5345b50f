//! Bad and extreme inputs end in a clear error, never a panic or a stack overflow (issue 9).
//! These run on the test harness's own threads (2 MiB of stack): the front end must protect
//! itself, not rely on the CLI's thread.

use warpscope_cuda::{Error, Source, DEFAULT_MAX_STEPS};
use warpscope_model::{Op, Space, WarpAccess};

/// Parses, lowers `kernel` and runs one block of `threads` threads with `n`-element
/// allocations and the scalar `args`.
fn launch(
    src: &str,
    kernel: &str,
    args: &[(&str, &str)],
    threads: u32,
) -> Result<Vec<(usize, WarpAccess)>, Error> {
    let s = Source::parse("t.cu", src, &[])?;
    let k = s.kernel(kernel)?;
    let args: Vec<(String, String)> = args
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
    let allocs: Vec<(String, u64)> = k
        .params()
        .iter()
        .filter(|p| p.is_pointer)
        .map(|p| (p.name.clone(), 1024))
        .collect();
    let cfg = k.configure(
        &args,
        &allocs,
        [1, 1, 1],
        [threads, 1, 1],
        0,
        DEFAULT_MAX_STEPS,
    )?;
    let mut out = Vec::new();
    k.run(&cfg, &mut |s, a| out.push((s, *a)))?;
    Ok(out)
}

fn err_text(src: &str, kernel: &str) -> String {
    match launch(src, kernel, &[], 32) {
        Ok(_) => panic!("expected an error for:\n{}", &src[..src.len().min(300)]),
        Err(e) => e.to_string(),
    }
}

#[test]
fn unknown_type_ending_in_a_multibyte_character_is_an_error() {
    let m = err_text(
        "__global__ void k(float* a) { floatß x = 1; a[0] = x; }",
        "k",
    );
    assert!(m.starts_with("t.cu:1:"), "{m}");
    assert!(m.contains("floatß"), "{m}");
}

#[test]
fn constant_array_with_a_wrapping_size_is_refused() {
    let m = err_text(
        "__constant__ float c[64 - 10000000000000000000];\n__global__ void k(float* a) { a[0] = c[0]; }",
        "k",
    );
    // 64 - 10^19 wraps to 8446744073709551680 elements; either refused as not a
    // non-negative size or as larger than constant memory, at the declarator.
    assert!(m.starts_with("t.cu:1:"), "{m}");
    assert!(m.contains("65536") || m.contains("non-negative"), "{m}");
}

#[test]
fn constant_array_over_64_kb_is_refused_naming_it_and_the_limit() {
    let m = err_text(
        "__constant__ float c[1000000000];\n__global__ void k(float* a) { a[0] = c[0]; }",
        "k",
    );
    assert!(m.starts_with("t.cu:1:20:"), "{m}");
    assert!(m.contains("'c'"), "{m}");
    assert!(m.contains("4000000000 bytes"), "{m}");
    assert!(m.contains("65536 bytes"), "{m}");
    // Exactly 64 KB (16384 floats) fits; one more float does not.
    let fits = "__constant__ float c[16384];\n__global__ void k(float* a) { a[0] = c[16383]; }";
    let acc = launch(fits, "k", &[], 32).unwrap();
    assert_eq!(
        acc.iter()
            .filter(|(_, a)| a.space == Space::Constant)
            .count(),
        1
    );
    let over = "__constant__ float c[16384];\n__constant__ float d[1];\n__global__ void k(float* a) { a[0] = d[0]; }";
    let m = err_text(over, "k");
    assert!(m.starts_with("t.cu:2:") && m.contains("'d'"), "{m}");
}

#[test]
fn postfix_increment_on_memory_is_one_load_and_one_store() {
    let src = "__global__ void k(int* a, int* b) { int i = threadIdx.x; b[i] = a[i]++; }";
    let acc = launch(src, "k", &[], 32).unwrap();
    let ops: Vec<(Op, u64)> = acc.iter().map(|(_, a)| (a.op, a.addrs[0])).collect();
    // a[i]++: load a, store a; then store b. 3 warp accesses, not 4.
    assert_eq!(acc.len(), 3, "{ops:?}");
    assert_eq!(acc[0].1.op, Op::Load);
    assert_eq!(acc[1].1.op, Op::Store);
    assert_eq!(acc[2].1.op, Op::Store);
    // The load and the store are to the same addresses (a[i]).
    assert_eq!(acc[0].1.addrs, acc[1].1.addrs);
    // Prefix and compound forms stay one load + one store too.
    for body in ["b[i] = ++a[i];", "a[i] += 2;", "a[i]--;"] {
        let src = format!("__global__ void k(int* a, int* b) {{ int i = threadIdx.x; {body} }}");
        let acc = launch(&src, "k", &[], 32).unwrap();
        let loads = acc.iter().filter(|(_, a)| a.op == Op::Load).count();
        assert_eq!(loads, 1, "{body}");
    }
}

/// `depth`-deep nestings of several kinds, each wrapped in a kernel.
fn nested_kernels(depth: usize) -> Vec<(&'static str, String)> {
    let wrap = |body: String| {
        format!("__global__ void k(float* a) {{\n  int i = threadIdx.x;\n  {body}\n}}\n")
    };
    vec![
        (
            "unary minus",
            wrap(format!("a[i] = {}1.0f;", "- ".repeat(depth))),
        ),
        ("sum", wrap(format!("a[i] = 0{};", "+ a[i]".repeat(depth)))),
        (
            "parentheses",
            wrap(format!(
                "a[i] = {}1{};",
                "(".repeat(depth),
                ")".repeat(depth)
            )),
        ),
        (
            "ternaries",
            wrap(format!("a[i] = {}1.0f;", "i ? 2.0f : ".repeat(depth))),
        ),
        (
            "casts",
            wrap(format!("a[i] = {}1;", "(float)".repeat(depth))),
        ),
        (
            "if",
            wrap(format!(
                "{}a[i] = 1;{}",
                "if (i < 5) {".repeat(depth),
                "}".repeat(depth)
            )),
        ),
        (
            "blocks",
            wrap(format!(
                "{}a[i] = 1;{}",
                "{".repeat(depth),
                "}".repeat(depth)
            )),
        ),
        (
            "for",
            wrap(format!(
                "{}a[i] = 1;",
                "for (int j = 0; j < 1; j++) ".repeat(depth)
            )),
        ),
    ]
}

#[test]
fn deep_nesting_ends_in_an_error_naming_the_limit() {
    for depth in [1_440, 2_176, 2_880, 5_000] {
        for (what, src) in nested_kernels(depth) {
            let m = err_text(&src, "k");
            assert!(m.starts_with("t.cu:"), "{what} x{depth}: {m}");
            assert!(
                m.contains("512 levels") || m.contains("syntax error"),
                "{what} x{depth}: {m}"
            );
        }
    }
}

#[test]
fn very_deep_nesting_ends_in_an_error() {
    for (what, src) in nested_kernels(100_000) {
        let m = err_text(&src, "k");
        assert!(m.starts_with("t.cu:"), "{what}: {}", &m[..m.len().min(200)]);
    }
}

#[test]
fn moderate_nesting_still_runs() {
    // 100 levels of each kind is well inside the limit and computes normally.
    for (what, src) in nested_kernels(100) {
        let acc = launch(&src, "k", &[], 32).unwrap_or_else(|e| panic!("{what}: {e}"));
        assert!(!acc.is_empty(), "{what}");
    }
}

#[test]
fn deep_device_call_chain_is_refused_naming_the_limit() {
    let n = 568;
    let mut src = String::from("__device__ float f0(float x) { return x + 1.0f; }\n");
    for k in 1..n {
        src += &format!(
            "__device__ float f{k}(float x) {{ return f{}(x) + 1.0f; }}\n",
            k - 1
        );
    }
    src += &format!(
        "__global__ void k(float* a) {{ a[threadIdx.x] = f{}(a[threadIdx.x]); }}\n",
        n - 1
    );
    let m = err_text(&src, "k");
    assert!(m.contains("nested more than 128 deep"), "{m}");
    assert!(m.starts_with("t.cu:"), "{m}");
    // A chain of 100 is fine: 1 load and 1 store.
    let mut src = String::from("__device__ float f0(float x) { return x + 1.0f; }\n");
    for k in 1..100 {
        src += &format!(
            "__device__ float f{k}(float x) {{ return f{}(x) + 1.0f; }}\n",
            k - 1
        );
    }
    src += "__global__ void k(float* a) { a[threadIdx.x] = f99(a[threadIdx.x]); }\n";
    assert_eq!(launch(&src, "k", &[], 32).unwrap().len(), 2);
}

#[test]
fn latin1_bytes_in_comments_and_strings_are_accepted_with_positions_kept() {
    use warpscope_cuda::decode_source;
    // "é" in Latin-1 is the single byte 0xE9.
    let bytes = b"// Auteur: Ren\xe9\n/* \xb0C */ __global__ void k(float* a) { const char* s = \"caf\xe9\"; a[threadIdx.x] = 1.0f; }\n";
    let text = decode_source("t.cu", bytes).unwrap();
    assert_eq!(text.len(), bytes.len());
    assert!(text.starts_with("// Auteur: Ren?\n/* ?C */"), "{text}");
    // Valid UTF-8 is kept as it is.
    assert_eq!(
        decode_source("t.cu", "// é\n".as_bytes()).unwrap(),
        "// é\n"
    );
    // Outside comments and literals, the byte is reported where it is.
    let m = decode_source("t.cu", b"__global__ void k(float* a)\n{ a[0] = 1\xe9; }\n")
        .unwrap_err()
        .to_string();
    assert!(
        m.starts_with("t.cu:2:11: syntax error: byte 0xe9 is not UTF-8"),
        "{m}"
    );
}

fn run_sized(src: &str, kernel: &str, allocs: &[(&str, u64)]) -> Result<(), Error> {
    let s = Source::parse("t.cu", src, &[])?;
    let k = s.kernel(kernel)?;
    let allocs: Vec<(String, u64)> = allocs.iter().map(|(a, b)| (a.to_string(), *b)).collect();
    let cfg = k.configure(&[], &allocs, [1, 1, 1], [32, 1, 1], 0, DEFAULT_MAX_STEPS)?;
    k.run(&cfg, &mut |_, _| {})
}

#[test]
fn a_read_just_before_an_array_blames_that_array() {
    // in[i - 1] at i = 0: 4 bytes before `in`, which lies right after `out`'s slot.
    let src = "__global__ void k(float* out, const float* in) {\n  int i = threadIdx.x;\n  out[i] = in[i - 1];\n}\n";
    let m = run_sized(src, "k", &[("out", 32), ("in", 32)])
        .unwrap_err()
        .to_string();
    assert!(m.starts_with("t.cu:3:"), "{m}");
    assert!(
        m.contains("outside allocation 'in' (128 bytes), 4 bytes before its start"),
        "{m}"
    );
    // The first parameter's allocation too (below the first slot).
    let src = "__global__ void k(float* out, const float* in) {\n  int i = threadIdx.x;\n  out[i - 1] = in[i];\n}\n";
    let m = run_sized(src, "k", &[("out", 32), ("in", 32)])
        .unwrap_err()
        .to_string();
    assert!(
        m.contains("outside allocation 'out' (128 bytes), 4 bytes before its start"),
        "{m}"
    );
    // One past the end of `out` is after its end.
    let src = "__global__ void k(float* out, const float* in) {\n  int i = threadIdx.x;\n  out[i + 1] = in[i];\n}\n";
    let m = run_sized(src, "k", &[("out", 32), ("in", 32)])
        .unwrap_err()
        .to_string();
    assert!(
        m.contains("outside allocation 'out' (128 bytes), 0 bytes after its end"),
        "{m}"
    );
}

#[test]
fn an_index_gigabytes_into_the_last_array_is_after_its_end() {
    // 40 GiB into `a` (index 10·2^30 floats), with no allocation after it.
    let src = "__global__ void k(float* a) {\n  long i = 10737418240L + threadIdx.x;\n  a[i] = 1.0f;\n}\n";
    let m = run_sized(src, "k", &[("a", 32)]).unwrap_err().to_string();
    assert!(
        m.contains("outside allocation 'a' (128 bytes), 42949672832 bytes after its end"),
        "{m}"
    );
    assert!(!m.contains("before"), "{m}");
    // With an allocation after it, both readings are named.
    let src = "__global__ void k(float* a, float* b) {\n  long i = 10737418240L + threadIdx.x;\n  a[i] = b[0];\n}\n";
    let m = run_sized(src, "k", &[("a", 32), ("b", 32)])
        .unwrap_err()
        .to_string();
    // 64 GiB - 40 GiB = 24 GiB = 25769803776 bytes before b.
    assert!(m.contains("'b' (128 bytes), 25769803776 bytes before its start (or 42949672832 bytes after the end of 'a')"), "{m}");
}

#[test]
fn kernel_selection_takes_only_global_functions() {
    // A __device__ k declared before the __global__ k: the kernel is the __global__ one
    // (it stores; the device function would load).
    let src = "__device__ float k(const float* a) { return a[0]; }\n__global__ void k(float* a) { a[threadIdx.x] = 1.0f; }\n";
    let acc = launch(src, "k", &[], 32).unwrap();
    assert_eq!(acc.len(), 1);
    assert_eq!(acc[0].1.op, Op::Store);
    // Only a __device__ function of that name: no kernel, and the kernels are listed.
    let src =
        "__device__ void f(float* a) { a[0] = 1.0f; }\n__global__ void g(float* a) { f(a); }\n";
    let m = err_text(src, "f");
    assert!(
        m.contains("no kernel named 'f'") && m.contains("kernels found: g"),
        "{m}"
    );
}

#[test]
fn two_kernels_of_one_name_are_an_error_listing_both() {
    let src = "__global__ void k(float* a) { a[threadIdx.x] = 1.0f; }\n__global__ void k(double* a) { a[threadIdx.x] = 1.0; }\n";
    let m = err_text(src, "k");
    assert!(
        m.starts_with("2 __global__ functions are named 'k': "),
        "{m}"
    );
    assert!(m.contains("k(float*) at t.cu:1:1"), "{m}");
    assert!(m.contains("k(double*) at t.cu:2:1"), "{m}");
    assert!(m.contains("--kernel 'k(float*)'"), "{m}");
    // Named by its parameter types, each overload runs: 8-byte stores for the double one.
    let acc = launch(src, "k(double*)", &[], 32).unwrap();
    assert_eq!(acc[0].1.width, 8);
    let acc = launch(src, "k( float * )", &[], 32).unwrap();
    assert_eq!(acc[0].1.width, 4);
    let m = err_text(src, "k(int*)");
    assert!(m.contains("none takes (int*)"), "{m}");
}

#[test]
fn per_thread_arrays_over_512_kib_are_refused() {
    // 131072 floats = 512 KiB exactly: accepted (one thread's local memory is full).
    let fits = "__global__ void k(float* a) {\n  float t[131072];\n  t[threadIdx.x] = 1.0f;\n  a[threadIdx.x] = t[threadIdx.x + 1];\n}\n";
    launch(fits, "k", &[], 1).unwrap();
    let over = "__global__ void k(float* a) {\n  float t[131072];\n  int u[1];\n  t[threadIdx.x] = 1.0f;\n  a[threadIdx.x] = t[threadIdx.x] + u[0];\n}\n";
    let m = err_text(over, "k");
    assert!(
        m.starts_with("t.cu:3:7: 'u' needs 4 bytes per thread"),
        "{m}"
    );
    assert!(m.contains("524288 bytes (512 KiB)"), "{m}");
    let huge =
        "__global__ void k(float* a) {\n  double t[1000000000];\n  a[0] = t[threadIdx.x];\n}\n";
    let m = err_text(huge, "k");
    assert!(
        m.starts_with("t.cu:2:10: 't' needs 8000000000 bytes per thread"),
        "{m}"
    );
}

#[test]
fn huge_shared_arrays_are_left_to_the_launch_check_without_wrapping() {
    // 2^62 floats of shared memory: the size saturates (no overflow panic) and the launch is
    // refused before any memory is taken.
    let src = "__global__ void k(float* a) {\n  __shared__ float s[4611686018427387904];\n  __shared__ float t[4];\n  a[0] = s[0] + t[0];\n}\n";
    let s = Source::parse("t.cu", src, &[]).unwrap();
    let k = s.kernel("k").unwrap();
    assert_eq!(k.static_shared_bytes(), u64::MAX);
    assert_eq!(k.shared_bytes(1 << 20), u64::MAX);
    let m = launch(src, "k", &[], 32).unwrap_err().to_string();
    assert!(m.contains("shared memory larger than 4 GiB"), "{m}");
}
