//! Host code in real `.cu` files (Rodinia, cuda-samples): file-scope host declarations and
//! host functions the kernel never uses must not stop its analysis, while device code that
//! does use them still gets an error naming file:line:col and what to do.

use warpscope_cuda::{Error, Source, DEFAULT_MAX_STEPS};
use warpscope_model::{arch, cost, Config, Cost, Op, Space};

/// The kernel every case shares: each lane stores one float, 32 consecutive floats.
const KERNEL: &str = "__global__ void k(float *a) { a[threadIdx.x] = 1.0f; }\n";

/// The summed CC 9.0 cost of the global stores of kernel `k` in `src`, grid 1, block 32.
fn store_cost(src: &str) -> Result<Cost, Error> {
    let s = Source::parse("t.cu", src, &[])?;
    let k = s.kernel("k")?;
    let cfg = k.configure(&[], &[], [1, 1, 1], [32, 1, 1], 0, DEFAULT_MAX_STEPS)?;
    let cc90 = arch::parse_list("9.0").unwrap()[0];
    let mut total = Cost::default();
    k.run(&cfg, &mut |_, a| {
        if a.space == Space::Global && a.op == Op::Store {
            let c = cost(cc90, &Config::default(), a);
            total.requests += c.requests;
            total.sectors += c.sectors;
        }
    })?;
    Ok(total)
}

/// The error message for kernel `k` in `src` (parse or lowering).
fn error_text(src: &str) -> String {
    match store_cost(src) {
        Ok(c) => panic!("expected an error, got {c:?}"),
        Err(e) => e.to_string(),
    }
}

/// `src` gives the kernel alone's figures: 1 request of 4 sectors.
fn assert_like_the_kernel_alone(src: &str) {
    let alone = store_cost(KERNEL).unwrap();
    assert_eq!((alone.requests, alone.sectors), (1, 4));
    let c = store_cost(src).unwrap_or_else(|e| panic!("{e}\n{src}"));
    assert_eq!((c.requests, c.sectors), (1, 4), "{src}");
}

/// Rodinia bfs, gaussian: a `FILE *` global (`<stdio.h>` is read as empty).
#[test]
fn host_global_of_an_unknown_type_is_ignored() {
    assert_like_the_kernel_alone(&format!("#include <stdio.h>\nFILE *fp;\n{KERNEL}"));
}

/// Rodinia backprop, kmeans: a prototype returning a pointer is a prototype, not a
/// function pointer.
#[test]
fn prototype_returning_a_pointer_is_a_prototype() {
    assert_like_the_kernel_alone(&format!("float *make_buffer(int n);\n{KERNEL}"));
    assert_like_the_kernel_alone(&format!(
        "FILE **open_all(const char *names);\nint &pick(int i);\n__device__ float *dev(int);\n{KERNEL}"
    ));
}

/// cuda-samples transpose, simpleTexture: a string literal initializing a host global.
#[test]
fn host_global_with_a_string_literal_is_ignored() {
    assert_like_the_kernel_alone(&format!("const char *name = \"k\";\n{KERNEL}"));
}

/// Rodinia pathfinder: `new int *[n]` in a host function, which the parser cannot read.
#[test]
fn syntax_error_in_a_host_function_is_ignored() {
    assert_like_the_kernel_alone(&format!(
        "int **wall;\nvoid h(int n) {{ wall = new int *[n]; }}\n{KERNEL}"
    ));
}

/// Host types (structs, typedefs, enums) the kernel does not use are set aside too.
#[test]
fn host_types_the_kernel_does_not_use_are_ignored() {
    assert_like_the_kernel_alone(&format!(
        "struct Ctx {{ FILE *f; int n; }};\ntypedef struct {{ FILE *f; }} Log;\nenum Mode {{ A, B }};\n{KERNEL}"
    ));
}

#[test]
fn kernel_using_a_host_global_of_an_unknown_type_names_the_declaration() {
    let e = error_text(
        "#include <stdio.h>\nFILE *fp;\n__global__ void k(float *a) { a[threadIdx.x] = fp ? 1.0f : 0.0f; }\n",
    );
    assert!(e.starts_with("t.cu:2:1: unknown type 'FILE'"), "{e}");
    assert!(e.contains("--frontend ptx"), "{e}");
}

#[test]
fn kernel_using_a_host_string_global_names_the_literal() {
    let e = error_text(
        "const char *name = \"k\";\n__global__ void k(float *a) { a[threadIdx.x] = name[0]; }\n",
    );
    assert!(
        e.starts_with("t.cu:1:20: unsupported construct: string literals"),
        "{e}"
    );
}

#[test]
fn kernel_using_a_host_variable_is_told_to_pass_it() {
    let e =
        error_text("int **wall;\n__global__ void k(float *a) { a[threadIdx.x] = wall[0][0]; }\n");
    assert!(e.starts_with("t.cu:2:48: 'wall' is a host variable"), "{e}");
    assert!(e.contains("declare it __device__"), "{e}");
}

#[test]
fn kernel_calling_a_host_function_with_a_syntax_error_gets_it() {
    let e = error_text(
        "int h(int n) { return new int *[n] != 0; }\n__global__ void k(float *a) { a[threadIdx.x] = h(1); }\n",
    );
    assert!(
        e.starts_with("t.cu:1:31: syntax error: unexpected '*[n]'"),
        "{e}"
    );
}

#[test]
fn kernel_using_a_host_struct_with_an_unknown_member_type_names_the_member() {
    let e = error_text(
        "struct Ctx { FILE *f; int n; };\n__global__ void k(float *a, Ctx c) { a[threadIdx.x] = c.n; }\n",
    );
    assert!(e.starts_with("t.cu:1:14: unknown type 'FILE'"), "{e}");
}

#[test]
fn unknown_type_in_the_kernel_says_what_to_do() {
    let e = error_text("__global__ void k(float *a) { FILE *f = 0; a[threadIdx.x] = 1.0f; }\n");
    assert!(e.starts_with("t.cu:1:31: unknown type 'FILE'"), "{e}");
    assert!(e.contains("define the type"), "{e}");
}

/// Device code is read as before: errors in it stop the analysis even when unused.
#[test]
fn errors_in_device_code_are_still_raised() {
    let e = error_text(&format!("__device__ FILE *fp;\n{KERNEL}"));
    assert!(e.starts_with("t.cu:1:12: unknown type 'FILE'"), "{e}");
    let e = error_text(&format!(
        "__device__ int g(int n) {{ return new int *[n] != 0; }}\n{KERNEL}"
    ));
    assert!(e.starts_with("t.cu:1:42: syntax error"), "{e}");
    let e = error_text("__global__ void k(float *a) { a[threadIdx.x] = (1 + ; }\nvoid h() {}\n");
    assert!(e.starts_with("t.cu:1:46: syntax error"), "{e}");
}

/// A missing `}` in a host function swallows the kernel: the syntax error is reported, not
/// merely "no kernel named 'k'".
#[test]
fn kernel_hidden_by_a_host_syntax_error_reports_the_error() {
    let e = error_text("void h(int n) {\n  if (n) {\n    int x = 1;\n}\n__global__ void k(float *a) { a[threadIdx.x] = 1.0f; }\n");
    assert!(e.starts_with("t.cu:5:55: syntax error: missing '}'"), "{e}");
    assert!(e.contains("no kernel named 'k'"), "{e}");
}
