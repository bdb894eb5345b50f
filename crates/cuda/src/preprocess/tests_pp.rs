//! The preprocessor against the C standard's examples and the cases real kernels hit.

use super::{preprocess, Output};
use crate::ir::Loc;
use crate::Error;
use std::path::PathBuf;

fn run(src: &str, defines: &[&str]) -> Output {
    let defines: Vec<String> = defines.iter().map(|d| d.to_string()).collect();
    preprocess("k.cu", src, &defines, &[]).unwrap()
}

/// The output's tokens, white space collapsed.
fn words(src: &str, defines: &[&str]) -> String {
    run(src, defines)
        .text
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

fn error(src: &str, include_dirs: &[PathBuf]) -> String {
    match preprocess("dir/k.cu", src, &[], include_dirs) {
        Err(e) => e.to_string(),
        Ok(o) => panic!("expected an error, got {:?}", o.text),
    }
}

#[test]
fn directives_with_spaces_after_the_hash() {
    let src = "# ifndef DATA_TYPE\n#  define DATA_TYPE float\n  #\tendif\nDATA_TYPE x;";
    assert_eq!(words(src, &[]), "float x;");
    assert_eq!(words(src, &["DATA_TYPE=double"]), "double x;");
}

#[test]
fn comments_after_a_define_body_are_not_part_of_it() {
    let src = "#define N 1024 // size\n#define M (N / 2) /* half */\n#define K 3 /* a\n b */\nint a[N + M + K];";
    assert_eq!(words(src, &[]), "int a[1024 + (1024 / 2) + 3];");
    // The file's lines are kept: `int` is on line 5 (the comment spans lines 3-4).
    let out = run(src, &[]);
    assert_eq!(out.text.lines().position(|l| l.contains("int")), Some(4));
}

#[test]
fn function_like_macros_nested_stringized_and_pasted() {
    let src = "#define SQ(x) ((x) * (x))\n#define IDX(r, c) ((r) * W + (c))\n#define W SQ(4)\n\
               #define STR(x) #x\n#define CAT(a, b) a ## b\n#define VAR(...) f(__VA_ARGS__)\n\
               IDX(SQ(i), j + 1) STR(a  \"b\"  + 1) CAT(tile, 32) CAT(, y) VAR(1, 2) VAR() SQ";
    assert_eq!(
        words(src, &[]),
        "((((i) * (i))) * ((4) * (4)) + (j + 1)) \"a \\\"b\\\" + 1\" tile32 y f(1, 2) f() SQ"
    );
    // -D takes function-like macros too.
    assert_eq!(words("TWICE(3)", &["TWICE(v)=(2*(v))"]), "(2*(3))");
}

#[test]
fn a_macro_is_not_replaced_inside_its_own_expansion() {
    // C17 §6.10.3.4: rescanning never re-expands the macro being replaced.
    let src = "#define foo foo + 1\n#define a b\n#define b a\n#define f(x) f(x) * 2\nfoo a f(f(1))";
    assert_eq!(words(src, &[]), "foo + 1 a f(f(1) * 2) * 2");
}

#[test]
fn line_and_file_name_the_use() {
    let src = "#define HERE __LINE__
int a = __LINE__;
\n  int b = HERE; const char* f = __FILE__;
#if __LINE__ == 5
five
#endif";
    assert_eq!(
        words(src, &[]),
        "int a = 2; int b = 4; const char* f = \"k.cu\"; five"
    );
}

#[test]
fn if_expressions_with_defined_and_elif_chains() {
    let src = "#define LEVEL 3\n#define ON\n\
               #if defined(ON) && LEVEL * 2 + 1 == 7 && !defined OFF && (1 << 4) % 5 == 1\nyes\n#else\nno\n#endif\n\
               #if LEVEL < 2\none\n#elif LEVEL == 3 ? UNDEFINED_IS_ZERO : 1\ntwo\n#elif -LEVEL / 2 == -1 && 0x10 == 020\nthree\n#else\nfour\n#endif\n\
               #if 0\n#error not seen\n#if 1\nnested\n#endif\n#elif 1\nfive\n#endif";
    assert_eq!(words(src, &[]), "yes three five");
    assert!(error("#if 1 / 0\n#endif", &[]).contains("division by zero"));
    assert!(error("#if 1\nx", &[]).contains("dir/k.cu:1:1: #if without #endif"));
    assert!(error("#else\n", &[]).contains("#else without #if"));
    assert!(error("# error stop here\n", &[]).contains("dir/k.cu:1:1: #error stop here"));
}

#[test]
fn expanded_tokens_map_to_the_macro_use_and_others_to_themselves() {
    let src = "#define IDX(r, c) ((r) * 8 + (c))\n  a[IDX(i,\n  j)] = b[k];";
    let out = run(src, &[]);
    let line = out.text.lines().nth(1).unwrap();
    let col = |s: &str| Loc {
        line: 2,
        col: line.find(s).unwrap() as u32 + 1,
    };
    let origin = |s: &str| out.map.origin(col(s)).unwrap();
    assert_eq!(origin("a[").loc, Loc { line: 2, col: 3 });
    let eight = origin("8");
    assert_eq!(
        (eight.loc, eight.from_macro),
        (Loc { line: 2, col: 5 }, true)
    );
    assert_eq!(&src[eight.start..eight.end], "IDX(i,\n  j)");
    assert_eq!(origin("b[").loc, Loc { line: 3, col: 9 });
    assert_eq!(
        out.map
            .written_text(col("a["), "a[((i) * 8 + (j))]", &out.text),
        Some("a[IDX(i, j)]".to_string())
    );
}

/// A fresh folder under the system's temporary folder.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("warpscope-pp-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn includes_search_the_files_folder_then_dash_i() {
    let dir = scratch("inc");
    std::fs::create_dir_all(dir.join("inc")).unwrap();
    std::fs::write(dir.join("local.cuh"), "#pragma once\n#define TILE 16\n").unwrap();
    std::fs::write(
        dir.join("inc/other.h"),
        "#include \"local.cuh\"\nint o = TILE;\n",
    )
    .unwrap();
    let file = dir.join("k.cu");
    let src = "#include \"local.cuh\"\n#include <other.h>\n#include <cstdio>\n#include \"cuda_runtime.h\"\n#include <sys/time.h>\nint k = TILE;";
    // Without -I, <other.h> is taken for a system header and skipped.
    let out = preprocess(file.to_str().unwrap(), src, &[], &[]).unwrap();
    assert_eq!(
        out.text.split_whitespace().collect::<Vec<_>>(),
        ["int", "k", "=", "16;"]
    );
    // other.h's "local.cuh" is not beside it: -I DIR finds it, and `#pragma once` keeps
    // the second reading out (TILE stays defined).
    let dirs = [dir.join("inc"), dir.clone()];
    let out = preprocess(file.to_str().unwrap(), src, &[], &dirs).unwrap();
    let words: Vec<&str> = out.text.split_whitespace().collect();
    assert_eq!(words.join(" "), "int o = 16; int k = 16;");
    let e = preprocess(file.to_str().unwrap(), src, &[], &[dir.join("inc")]).unwrap_err();
    assert!(
        e.to_string()
            .contains("other.h:1:1: cannot find header \"local.cuh\""),
        "{e}"
    );
    let o = out.text.find("o =").unwrap();
    let origin = out.map.origin_at(o).unwrap();
    assert!(origin.file.ends_with("inc/other.h"), "{}", origin.file);
    assert_eq!(origin.loc, Loc { line: 2, col: 5 });
}

#[test]
fn missing_user_header_and_include_cycle_are_errors() {
    let e = error(
        "int a;\n  #include \"nowhere.cuh\"\n",
        &[PathBuf::from("extra")],
    );
    assert_eq!(
        e,
        "dir/k.cu:2:3: cannot find header \"nowhere.cuh\" (searched: dir, extra); add the folder that holds it with -I DIR"
    );
    let dir = scratch("cycle");
    std::fs::write(dir.join("a.cuh"), "#include \"b.cuh\"\n").unwrap();
    std::fs::write(dir.join("b.cuh"), "int b;\n#include \"a.cuh\"\n").unwrap();
    let file = dir.join("k.cu");
    let e = preprocess(file.to_str().unwrap(), "#include \"a.cuh\"\n", &[], &[]).unwrap_err();
    let Error::Semantic { file, loc, msg } = e else {
        panic!("{e}")
    };
    assert!(file.ends_with("b.cuh") || file.ends_with("a.cuh"), "{file}");
    assert_eq!(loc.col, 1);
    assert!(
        msg.starts_with("#include nested more than 200 deep"),
        "{msg}"
    );
}

#[test]
fn bad_defines_and_macro_uses_are_errors_not_panics() {
    let defines = vec!["1X=2".to_string()];
    assert!(matches!(
        preprocess("k.cu", "", &defines, &[]),
        Err(Error::Argument(_))
    ));
    assert!(error("#define F(a, b) a\nF(1)", &[])
        .contains("dir/k.cu:2:1: macro F takes 2 arguments, 1 given"));
    assert!(error("#define F(a) a\nF(1", &[]).contains("no closing ')'"));
    assert!(error("#define P(a, b) a ## b\nP(+, /)", &[]).contains("pasting '+' and '/'"));
    assert!(error("#bogus\n", &[]).contains("unknown preprocessor directive '#bogus'"));
    // Exponential macros stop with an error.
    let mut src = String::from("#define M0 x x\n");
    for k in 1..40 {
        src.push_str(&format!("#define M{k} M{} M{}\n", k - 1, k - 1));
    }
    src.push_str("M39");
    assert!(error(&src, &[]).contains("expands to more than"));
    // Deeply nested uses stop with an error, not a stack overflow.
    let deep = format!("#define F(x) x\n{}1{}", "F(".repeat(5000), ")".repeat(5000));
    assert!(error(&deep, &[]).contains("nested more than 200 deep"));
    let deep_if = format!("#if {}1{}\n#endif", "(".repeat(5000), ")".repeat(5000));
    assert!(error(&deep_if, &[]).contains("nested more than 256 deep"));
}

#[test]
fn mutated_sources_give_output_or_an_error_never_a_panic() {
    // Byte-level mutations (deletion, duplication, insertion of preprocessor punctuation) of
    // a source using every feature, from a fixed linear congruential sequence.
    let base = "# ifndef T\n# define T float // c\n#endif\n#define F(a, ...) #a a ## 1 f(__VA_ARGS__)\n\
                #if defined(T) && (1 << 3) > 7 ? 1 : 0\nT x = F(y, 1, 2) /* z */;\n#elif 1\n#else\n#endif\n\
                #define G(x) G(x) + F(v, x)\nG(G(\"s\\\"\" 'c'))\\\n__LINE__ __FILE__\n#undef T\n";
    let pieces = [
        "#", "##", "(", ")", ",", "\\\n", "/*", "\"", "'", "\n#if ", "defined", "é", "F(", "...",
    ];
    let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = |n: usize| {
        seed = seed
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        ((seed >> 33) as usize) % n.max(1)
    };
    let mut outputs = 0;
    for _ in 0..3000 {
        let mut s: Vec<char> = base.chars().collect();
        for _ in 0..1 + next(4) {
            let at = next(s.len() + 1);
            match next(3) {
                0 if at < s.len() => {
                    s.remove(at);
                }
                1 if at < s.len() => s.insert(at, s[at]),
                _ => {
                    for (k, c) in pieces[next(pieces.len())].chars().enumerate() {
                        s.insert(at + k, c);
                    }
                }
            }
        }
        let text: String = s.into_iter().collect();
        let r = preprocess("k.cu", &text, &[], &[]);
        if r.is_ok() {
            outputs += 1;
        }
    }
    // About a third still preprocess (904 of 3,000); the rest end in an error, none in a panic.
    assert!(outputs > 500 && outputs < 3000, "{outputs}");
}
