use super::*;

fn launches(src: &str, defines: &[&str]) -> Vec<HostLaunch> {
    let d: Vec<String> = defines.iter().map(|s| s.to_string()).collect();
    host_launches("t.cu", src, &d).unwrap()
}

const HOST: &str = r#"
#ifndef N
#define N (1 << 20)
#endif
#define CEIL_DIV(a, b) (((a) + (b) - 1) / (b))
constexpr int BLOCK = 256;
const int TILE = 32;

__global__ void saxpy(int n, float a, const float* x, float* y) {}
template <typename T> __global__ void fill(T* p, T v, int n) {}

int main(int argc, char** argv)
{
    float *x, *y;
    const int blocks = (N + BLOCK - 1) / BLOCK;
    saxpy<<<blocks, BLOCK>>>(N, 2.0f, x, y);
    dim3 grid(N / TILE / TILE, 2);
    dim3 block(TILE, 8);
    dim3 b2{16, 16};
    fill<float><<<grid, block, 4 * sizeof(float), 0>>>(x, 1.5f, N);
    int n = atoi(argv[1]);
    saxpy<<<(n + 255) / 256, dim3(BLOCK)>>>(n, 0.5f, x, y);
    int m = 1000;
    saxpy<<<CEIL_DIV(m, 128), b2.x * b2.y>>>(m, 1, x, y);
    m = 2000;
    saxpy<<<m / 256, 256>>>(m, 1, x, y);
    int k = 64;
    for (int r = 0; r < 4; r++) {
        int j = 8;
        saxpy<<<k, j>>>(k, 1, x, y);
        k *= 2;
    }
    return 0;
}
"#;

#[test]
fn launches_are_listed_with_their_constants() {
    let l = launches(HOST, &[]);
    assert_eq!(l.len(), 6);
    assert_eq!(
        l.iter().map(|x| x.index).collect::<Vec<_>>(),
        vec![0, 1, 2, 3, 4, 5]
    );
    // Launch 0: a ceil-div of a #define and a constexpr, through a const variable.
    let a = &l[0];
    assert_eq!((a.line, a.column, a.kernel.as_str()), (16, 5, "saxpy"));
    assert_eq!(a.grid.text, "blocks");
    assert_eq!(a.grid.value, Some(Value::Int(4096)));
    assert_eq!(a.block.value, Some(Value::Int(256)));
    assert_eq!(a.shared_bytes, None);
    let args: Vec<(Option<&str>, Option<bool>, Option<Value>)> = a
        .args
        .iter()
        .map(|x| (x.param.as_deref(), x.pointer, x.expr.value))
        .collect();
    assert_eq!(
        args[..2],
        [
            (Some("n"), Some(false), Some(Value::Int(1 << 20))),
            (Some("a"), Some(false), Some(Value::Float(2.0))),
        ]
    );
    assert_eq!(args[2].0, Some("x"));
    assert_eq!(args[2].1, Some(true));
    // Launch 1: dim3 variables (one of them the vexing-parse form), a template kernel,
    // sizeof in the shared bytes, a stream.
    let b = &l[1];
    assert_eq!(b.kernel, "fill<float>");
    assert_eq!(b.grid.value, Some(Value::Dim3([1024, 2, 1])));
    assert_eq!(b.block.value, Some(Value::Dim3([32, 8, 1])));
    assert_eq!(
        b.shared_bytes.as_ref().map(|s| (s.text.as_str(), s.value)),
        Some(("4 * sizeof(float)", Some(Value::Int(16))))
    );
    assert_eq!(b.stream.as_deref(), Some("0"));
    assert_eq!(b.args[1].param.as_deref(), Some("v"));
    assert_eq!(b.args[1].expr.value, Some(Value::Float(1.5)));
    // Launch 2: a value read at run time, and why.
    let c = &l[2];
    assert_eq!(c.grid.text, "(n + 255) / 256");
    assert_eq!(c.grid.value, None);
    let why = c.grid.why.as_deref().unwrap();
    assert!(why.starts_with("`n` is set at run time"), "{why}");
    assert_eq!(c.block.value, Some(Value::Dim3([256, 1, 1])));
    // Launch 3: a function-like macro, a plain variable not yet changed, dim3 fields.
    let d = &l[3];
    assert_eq!(d.grid.value, Some(Value::Int(8)));
    assert_eq!(d.block.value, Some(Value::Int(256)));
    // Launch 4: after `m = 2000` the variable is no longer a constant.
    let e = &l[4];
    assert_eq!(e.grid.value, None);
    assert_eq!(
        e.grid.why.as_deref(),
        Some("`m` is changed before the launch")
    );
    // Launch 5: k changes in the loop; j is declared anew in every iteration.
    let f = &l[5];
    assert_eq!(
        f.grid.why.as_deref(),
        Some("`k` changes in an enclosing loop")
    );
    assert_eq!(f.block.value, Some(Value::Int(8)));
}

#[test]
fn defines_choose_ifdef_branches_and_values() {
    let l = launches(HOST, &["N=4096"]);
    assert_eq!(l[0].grid.value, Some(Value::Int(16)));
    assert_eq!(l[1].grid.value, Some(Value::Dim3([4, 2, 1])));
    let src = "#if USE_BIG\n#define B 512\n#else\n#define B 128\n#endif\n__global__ void k() {}\nvoid f() { k<<<B, B>>>(); }\n";
    assert_eq!(launches(src, &[])[0].block.value, Some(Value::Int(128)));
    assert_eq!(
        launches(src, &["USE_BIG"])[0].block.value,
        Some(Value::Int(512))
    );
    // A launch in a branch not taken is not a launch.
    let src = "__global__ void k() {}\nvoid f() {\n#ifdef DEBUG\n k<<<1, 1>>>();\n#endif\n k<<<2, 2>>>();\n}\n";
    let l = launches(src, &[]);
    assert_eq!((l.len(), l[0].grid.value), (1, Some(Value::Int(2))));
    assert_eq!(launches(src, &["DEBUG"]).len(), 2);
}

#[test]
fn parameters_calls_and_unknown_names_are_not_constants() {
    let src = "__global__ void k(int n) {}\nvoid run(int n, dim3 g) { k<<<g, n>>>(n); k<<<blocks(), 32>>>(n); k<<<Q, 32>>>(7); }\n";
    let l = launches(src, &[]);
    assert_eq!(
        l[0].grid.why.as_deref(),
        Some("`g` is a parameter of the enclosing function")
    );
    assert!(l[1].grid.why.as_deref().unwrap().contains("is a call"));
    assert_eq!(
        l[2].grid.why.as_deref(),
        Some("`Q` is not declared in this file")
    );
    assert_eq!(l[2].args[0].expr.value, Some(Value::Int(7)));
    // Integer arithmetic is C's: division truncates, overflow and division by zero are not
    // constants.
    let src =
        "__global__ void k() {}\nvoid f() { k<<<7 / 2, -7 / 2 + 5>>>(); k<<<1 / 0, 1>>>(); }\n";
    let l = launches(src, &[]);
    assert_eq!(l[0].grid.value, Some(Value::Int(3)));
    assert_eq!(
        l[0].block.value,
        Some(Value::Int(2)),
        "{:?}",
        l[0].block.why
    );
    assert!(l[1]
        .grid
        .why
        .as_deref()
        .unwrap()
        .contains("divides by zero"));
}

#[test]
fn values_as_dimensions() {
    assert_eq!(Value::Int(4096).dims(), Some([4096, 1, 1]));
    assert_eq!(Value::Dim3([32, 8, 1]).dims(), Some([32, 8, 1]));
    assert_eq!(Value::Int(0).dims(), None);
    assert_eq!(Value::Int(-1).dims(), None);
    assert_eq!(Value::Float(2.0).dims(), None);
    assert_eq!(Value::Dim3([32, 8, 1]).to_string(), "(32,8,1)");
}

/// Self-referential macros, overflow, division of the most negative number by -1, huge
/// floats and a truncated launch end in reasons, never a panic.
#[test]
fn hostile_expressions_are_not_constants() {
    let src = "#define A A\n#define BIG (3 << 62)\n__global__ void k(int n) {}\nint main() {\n k<<<A, (-9223372036854775807 - 1) / -1>>>(BIG);\n k<<<dim3(1,2,3,4), 1 << 70>>>(1e400);\n k<<<\n}\n";
    let l = launches(src, &[]);
    assert_eq!(l.len(), 2);
    let why = |e: &LaunchExpr| e.why.clone().unwrap_or_default();
    assert_eq!(why(&l[0].grid), "the macro `A` expands too deeply");
    assert!(why(&l[0].block).ends_with("overflows"));
    assert_eq!(why(&l[0].args[0].expr), "3 << 62 overflows");
    assert_eq!(why(&l[1].grid), "a dim3 of 4 values");
    assert_eq!(why(&l[1].block), "1 << 70 overflows");
    assert_eq!(why(&l[1].args[0].expr), "`1e400` is not a finite number");
}

/// PolyBench's spelling: `# ifndef` with a space after '#', and comments after a define's
/// body (neither is part of the macro).
#[test]
fn spaced_directives_and_comments_after_define_bodies() {
    let src = "# ifndef N\n# define N 4096 // elements\n# endif\n#define B /* threads */ 256\n__global__ void k(float* a) {}\nint main() { float* a; k<<<N / B, B>>>(a); }\n";
    let l = launches(src, &[]);
    assert_eq!(l[0].grid.value, Some(Value::Int(16)));
    assert_eq!(l[0].block.value, Some(Value::Int(256)));
    assert_eq!(launches(src, &["N=512"])[0].grid.value, Some(Value::Int(2)));
    // A quote in the body keeps what follows it.
    assert_eq!(without_comments("\"a//b\" // c"), "\"a//b\" ");
}

/// Host code nested deeper than the walk's limit ends in an error at the place it goes past
/// it (9,000 parentheses, 12,000 `if` blocks, 20,000 `#if`s, 5,000 `+` terms: each aborted
/// on a stack overflow before); code just under it is walked, on a 2 MiB thread stack (a
/// test thread's, Rust's default for spawned threads).
#[test]
fn deep_nesting_is_an_error_not_a_stack_overflow() {
    const K: &str = "__global__ void k(float* a) {}\n";
    let cases = [
        (
            format!(
                "int main() {{ float* a; int n = {}1{};\n k<<<n, 32>>>(a); }}\n",
                "(".repeat(9000),
                ")".repeat(9000)
            ),
            2,
        ),
        (
            format!(
                "int main() {{ float* a;\n{}k<<<1, 32>>>(a);{} }}\n",
                "if (1) {".repeat(12000),
                "}".repeat(12000)
            ),
            3,
        ),
        (
            format!(
                "{}int main() {{ float* a; k<<<1, 32>>>(a); }}\n{}",
                "#if 1\n".repeat(20000),
                "#endif\n".repeat(20000)
            ),
            2001,
        ),
        (
            format!(
                "int main() {{ float* a; int n = 1{};\n k<<<n, 32>>>(a); }}\n",
                "+1".repeat(5000)
            ),
            2,
        ),
    ];
    for (body, line) in cases {
        let src = format!("{K}{body}");
        let e = std::thread::Builder::new()
            .stack_size(2 << 20)
            .spawn(move || host_launches("deep.cu", &src, &[]).unwrap_err().to_string())
            .unwrap()
            .join()
            .unwrap();
        assert!(e.starts_with(&format!("deep.cu:{line}:")), "{e}");
        assert!(e.contains("nested more than 2000 levels deep"), "{e}");
    }
    let under = [
        format!(
            "int main() {{ float* a; int n = {}1{};\n k<<<n, 32>>>(a); }}\n",
            "(".repeat(990),
            ")".repeat(990)
        ),
        format!(
            "int main() {{ float* a;\n{}k<<<1, 32>>>(a);{} }}\n",
            "if (1) {".repeat(990),
            "}".repeat(990)
        ),
        format!(
            "{}int main() {{ float* a; k<<<1, 32>>>(a); }}\n{}",
            "#if 1\n".repeat(1990),
            "#endif\n".repeat(1990)
        ),
        format!(
            "int main() {{ float* a; int n = 1{};\n k<<<n, 32>>>(a); }}\n",
            "+1".repeat(1990)
        ),
    ];
    for body in under {
        let src = format!("{K}{body}");
        let found = std::thread::Builder::new()
            .stack_size(2 << 20)
            .spawn(move || host_launches("deep.cu", &src, &[]).map(|l| l.len()))
            .unwrap()
            .join()
            .unwrap();
        assert_eq!(found.unwrap(), 1);
    }
}

/// A `#define` chain that doubles at each level (`M1` is `(M0 + M0)`, …, `M29`: 2^29 uses of
/// `M0`) hung `warpscope launches` for minutes, each use a parse; it stops at
/// [`MAX_MACRO_USES`] with the outermost macro named, and the launch is still listed.
#[test]
fn doubling_macro_chain_stops_at_the_use_limit() {
    let mut src = String::from("#define M0 1\n");
    for k in 1..30 {
        src.push_str(&format!("#define M{k} (M{} + M{})\n", k - 1, k - 1));
    }
    src.push_str("__global__ void k(int n) {}\nint main() { k<<<M29, M3>>>(1); }\n");
    let t = std::time::Instant::now();
    let l = launches(&src, &[]);
    assert!(
        t.elapsed() < std::time::Duration::from_secs(10),
        "{:?}",
        t.elapsed()
    );
    assert_eq!(l.len(), 1);
    assert_eq!(
        l[0].grid.why.as_deref(),
        Some("the macro `M29` expands to more than 4096 macro uses (a #define chain that doubles at each level?)")
    );
    // A chain under the limit still folds: M3 is 2^3 ones.
    assert_eq!(l[0].block.value, Some(Value::Int(8)));
}
