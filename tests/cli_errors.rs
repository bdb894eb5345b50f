//! Bad input ends in a clear message naming the place and a non-zero exit, never a panic.

use std::process::Command;

fn run(src: impl AsRef<[u8]>, args: &[&str]) -> (bool, String) {
    // One folder per call: tests run in parallel and may pass the same arguments.
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("warpscope-cli-{}-{n}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("k.cu");
    std::fs::write(&file, src).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_warpscope"))
        .arg("analyze")
        .arg(&file)
        .args(args)
        // These are the source interpreter's errors; the compiled path has its own tests.
        .args(["--frontend", "source"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(!stderr.contains("panicked"), "panic: {stderr}");
    (out.status.success(), stderr)
}

const K: &str = "__global__ void copy(const float* a, float* b, int n) {\n  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < n) b[i] = a[i];\n}\n";

fn fails_with(src: &str, args: &[&str], needles: &[&str]) {
    let (ok, err) = run(src, args);
    assert!(!ok, "expected failure for {args:?}");
    for n in needles {
        assert!(err.contains(n), "message lacks '{n}':\n{err}");
    }
}

#[test]
fn syntax_error_names_line_and_column() {
    fails_with(
        "__global__ void k(float* a) {\n  a[0] = (1 + ;\n}\n",
        &["--kernel", "k", "--grid", "1", "--block", "32"],
        &["k.cu:2:", "syntax error"],
    );
}

#[test]
fn unknown_kernel_lists_the_kernels() {
    fails_with(
        K,
        &[
            "--kernel", "cpy", "--grid", "1", "--block", "32", "--arg", "n=1",
        ],
        &["no kernel named 'cpy'", "copy"],
    );
}

#[test]
fn unsupported_construct_is_named() {
    // sqrtf is supported; the label after it is not.
    let src = "__global__ void k(float* a) {\n  a[0] = sqrtf(a[1]);\n  label: a[2] = 1.0f;\n}\n";
    fails_with(
        src,
        &["--kernel", "k", "--grid", "1", "--block", "32"],
        &["k.cu:3:3", "unsupported construct", "goto and labels"],
    );
    let src = "__global__ void k(float* a) {\n  goto end;\n}\n";
    fails_with(
        src,
        &["--kernel", "k", "--grid", "1", "--block", "32"],
        &["k.cu:2:3", "goto"],
    );
}

#[test]
fn missing_and_ill_typed_arguments() {
    fails_with(
        K,
        &["--kernel", "copy", "--grid", "1", "--block", "32"],
        &["'n' (int) has no value", "--arg n=VALUE"],
    );
    fails_with(
        K,
        &[
            "--kernel", "copy", "--grid", "1", "--block", "32", "--arg", "n=abc",
        ],
        &["--arg n=abc", "int"],
    );
    fails_with(
        K,
        &[
            "--kernel", "copy", "--grid", "1", "--block", "32", "--arg", "n=1", "--arg", "m=2",
        ],
        &["no parameter 'm'", "n (int)"],
    );
    fails_with(
        K,
        &[
            "--kernel", "copy", "--grid", "1", "--block", "32", "--arg", "n=1", "--arg", "a=3",
        ],
        &["'a' is a pointer", "--alloc"],
    );
}

#[test]
fn launch_over_the_limits() {
    fails_with(
        K,
        &[
            "--kernel", "copy", "--grid", "1", "--block", "2048", "--arg", "n=1", "--cc", "9.0",
        ],
        &["2048", "1024", "9.0"],
    );
    fails_with(
        K,
        &[
            "--kernel", "copy", "--grid", "1", "--block", "1024", "--arg", "n=1", "--cc", "1.3",
        ],
        &["512", "1.3"],
    );
    fails_with(
        K,
        &[
            "--kernel", "copy", "--grid", "70000", "--block", "32", "--arg", "n=1", "--cc", "2.0",
        ],
        &["65535", "2.0"],
    );
    fails_with(
        K,
        &[
            "--kernel", "copy", "--grid", "1,1,2", "--block", "1,1,128", "--arg", "n=1", "--cc",
            "9.0",
        ],
        &["64"],
    );
    // A named set (here the old default, `guide`) leaves out what cannot run the launch
    // (tests/output_formats.rs checks the notes that say so).
    let (ok, _) = run(
        K,
        &[
            "--kernel", "copy", "--grid", "1", "--block", "1024", "--arg", "n=1", "--cc", "guide",
        ],
    );
    assert!(ok);
}

#[test]
fn out_of_bounds_names_thread_and_block() {
    fails_with(
        K,
        &[
            "--kernel", "copy", "--grid", "2", "--block", "64", "--arg", "n=128", "--alloc",
            "a=100", "--cc", "9.0",
        ],
        &[
            "k.cu:3:",
            "outside allocation 'a'",
            "400 bytes",
            "thread (36,0,0) of block (1,0,0)",
            "--alloc",
        ],
    );
}

#[test]
fn misaligned_access_is_a_fault_with_lanes() {
    let src = "__global__ void k(char* a) {\n  double* d = (double*)(a + 4);\n  d[threadIdx.x] = 1.0;\n}\n";
    fails_with(
        src,
        &[
            "--kernel", "k", "--grid", "1", "--block", "32", "--cc", "9.0",
        ],
        &[
            "k.cu:3:3",
            "misaligned 8-byte store",
            "lane 0",
            "cudaErrorMisalignedAddress",
        ],
    );
}

#[test]
fn division_by_zero_names_the_thread() {
    let src = "__global__ void k(int* a, int d) {\n  a[threadIdx.x] = 10 / (d - threadIdx.x);\n}\n";
    fails_with(
        src,
        &[
            "--kernel", "k", "--grid", "1", "--block", "32", "--arg", "d=5",
        ],
        &[
            "k.cu:2:",
            "division by zero",
            "thread (5,0,0) of block (0,0,0)",
        ],
    );
}

#[test]
fn runaway_loop_hits_the_step_limit() {
    let src = "__global__ void k(int* a) {\n  int i = 0;\n  while (a[0] == 0) { i++; }\n}\n";
    fails_with(
        src,
        &[
            "--kernel",
            "k",
            "--grid",
            "1",
            "--block",
            "32",
            "--max-steps",
            "1000",
        ],
        &["k.cu:3:3", "more than 1000 steps", "--max-steps"],
    );
}

#[test]
fn template_kernel_needs_its_arguments() {
    let src = "template <typename T>\n__global__ void k(T* a) { a[threadIdx.x] = 0; }\n";
    fails_with(
        src,
        &["--kernel", "k", "--grid", "1", "--block", "32"],
        &["template argument", "k<float>"],
    );
    let (ok, _) = run(
        src,
        &["--kernel", "k<float>", "--grid", "1", "--block", "32"],
    );
    assert!(ok);
}

#[test]
fn bad_flags() {
    fails_with(
        K,
        &[
            "--kernel", "copy", "--grid", "0", "--block", "32", "--arg", "n=1",
        ],
        &["--grid 0"],
    );
    fails_with(
        K,
        &[
            "--kernel", "copy", "--grid", "1", "--block", "32", "--arg", "n=1", "--cc", "4.0",
        ],
        &["--cc 4.0"],
    );
    let (ok, err) = run(
        K,
        &[
            "--kernel", "copy", "--grid", "1", "--block", "32", "--arg", "n=1", "-D", "1BAD",
        ],
    );
    assert!(!ok && err.contains("-D 1BAD"), "{err}");
}

#[test]
fn latin1_byte_in_a_comment_is_accepted() {
    // One Latin-1 byte (0xE9, "é") in a comment: the file runs; 32 threads copying floats
    // on CC 9.0 = 1 request and 4 sectors per access.
    let mut src = b"// r\xe9sum\xe9: a copy\n".to_vec();
    src.extend_from_slice(K.as_bytes());
    let (ok, err) = run(
        &src,
        &[
            "--kernel", "copy", "--grid", "1", "--block", "32", "--arg", "n=32", "--cc", "9.0",
        ],
    );
    assert!(ok, "{err}");
    // In code, the byte is named with its line and column.
    let mut src = K.as_bytes().to_vec();
    src.extend_from_slice(b"int x\xe9;\n");
    let (ok, err) = run(
        &src,
        &[
            "--kernel", "copy", "--grid", "1", "--block", "32", "--arg", "n=32",
        ],
    );
    assert!(!ok);
    assert!(
        err.contains("k.cu:5:6: syntax error: byte 0xe9 is not UTF-8"),
        "{err}"
    );
}

#[test]
fn deep_nesting_is_an_error_not_a_crash() {
    for depth in [5_000, 100_000] {
        let src = format!(
            "__global__ void k(float* a) {{\n  a[threadIdx.x] = {}1{};\n}}\n",
            "(".repeat(depth),
            ")".repeat(depth)
        );
        fails_with(
            &src,
            &["--kernel", "k", "--grid", "1", "--block", "32"],
            &["k.cu:2:", "nested more than 512"],
        );
    }
}

#[test]
fn dynamic_shared_memory_of_2_pow_64_minus_1_does_not_wrap() {
    // 16 bytes of static shared memory + (2^64 - 1) dynamic bytes once wrapped to a 15-byte
    // block; it is over every CC's limit (CC 9.0: 232448 bytes).
    let src = "__global__ void k(float* b) {\n  __shared__ float t[4];\n  extern __shared__ float s[];\n  t[threadIdx.x % 4] = 1.0f;\n  b[threadIdx.x] = t[0] + s[0];\n}\n";
    fails_with(
        src,
        &[
            "--kernel",
            "k",
            "--grid",
            "1",
            "--block",
            "32",
            "--cc",
            "9.0",
            "--dynamic-smem",
            "18446744073709551615",
        ],
        &[
            "18446744073709551615 bytes of shared memory",
            "at most 232448 bytes",
        ],
    );
}

#[test]
fn launches_beyond_the_grid_and_block_limits_are_refused_naming_the_limit() {
    let base = ["--kernel", "copy", "--arg", "n=1", "--cc", "9.0"];
    for (grid, block, needle) in [
        ("2147483648", "32", "CC 9.0 allows at most 2147483647 in x"),
        ("1,65536", "32", "CC 9.0 allows at most 65535 in y"),
        ("1,1,65536", "32", "CC 9.0 allows at most 65535 in z"),
        (
            "1",
            "1025",
            "1025 threads; CC 9.0 allows at most 1024 threads per block",
        ),
        ("1", "1,1,65", "CC 9.0 allows at most 64 in z"),
    ] {
        let mut args = base.to_vec();
        args.extend(["--grid", grid, "--block", block]);
        fails_with(K, &args, &[needle]);
    }
}
