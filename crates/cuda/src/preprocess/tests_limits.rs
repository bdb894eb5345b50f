//! The preprocessor's bounds (issue 21): include depth, headers read, include-once per file
//! (`#pragma once` and include guards), macro expansion per run and per file, and the output's
//! size. Each bad case ends in an error at file:line:col that names the limit.

use super::{preprocess, MAX_INCLUDES, MAX_TOKENS, MAX_TOTAL_TOKENS};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// A fresh folder under the system's temporary folder.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("warpscope-ppl-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Preprocesses `src` as `dir/k.cu`; the error's text, or the output's words.
fn outcome(dir: &Path, src: &str) -> Result<String, String> {
    let file = dir.join("k.cu");
    preprocess(file.to_str().unwrap(), src, &[], &[])
        .map(|o| o.text.split_whitespace().collect::<Vec<_>>().join(" "))
        .map_err(|e| e.to_string())
}

/// A header without a guard included 10,000 times (the fan-out) stops at the
/// 4,097th read, at that `#include`'s line.
#[test]
fn a_header_included_10000_times_without_a_guard_stops_at_the_include_limit() {
    let dir = scratch("fanout");
    std::fs::write(dir.join("h.cuh"), "int x;\n").unwrap();
    let src = "#include \"h.cuh\"\n".repeat(10_000);
    let t = Instant::now();
    let e = outcome(&dir, &src).unwrap_err();
    assert!(t.elapsed() < Duration::from_secs(20), "{:?}", t.elapsed());
    let want = format!(
        "k.cu:{}:1: more than 4096 headers read (the limit of one file; {} is read again here): a header included many times without a guard? Guard it with #pragma once or #ifndef",
        MAX_INCLUDES + 1,
        dir.join("h.cuh").display()
    );
    assert!(e.ends_with(&want), "{e}");
}

/// A tree of headers each including the next twice (2^20 reads of the last) stops at the
/// same limit, inside the headers.
#[test]
fn a_doubling_include_tree_stops_at_the_include_limit() {
    let dir = scratch("tree");
    for k in 0..20 {
        std::fs::write(
            dir.join(format!("h{k}.cuh")),
            format!("#include \"h{0}.cuh\"\n#include \"h{0}.cuh\"\n", k + 1),
        )
        .unwrap();
    }
    std::fs::write(dir.join("h20.cuh"), "int x;\n").unwrap();
    let e = outcome(&dir, "#include \"h0.cuh\"\n").unwrap_err();
    assert!(e.contains("more than 4096 headers read"), "{e}");
    assert!(
        e.contains(".cuh:"),
        "the error is at a header's #include: {e}"
    );
}

/// Guarded headers (`#ifndef`/`#define`/`#endif`, `#if !defined(…)`, `#pragma once`) are read
/// once however often they are included, so 10,000 includes of each pass, and give the
/// header's text once.
#[test]
fn guarded_headers_are_read_once_and_do_not_count() {
    let dir = scratch("guards");
    std::fs::write(
        dir.join("a.cuh"),
        "// a comment before the guard\n#ifndef A_CUH\n#define A_CUH\n#if 1\nint a;\n#endif\n#endif // A_CUH\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("b.cuh"),
        "#if !defined(B_CUH)\n#define B_CUH\nint b;\n#endif\n",
    )
    .unwrap();
    std::fs::write(dir.join("c.cuh"), "#pragma once\nint c;\n").unwrap();
    let src = "#include \"a.cuh\"\n#include \"b.cuh\"\n#include \"c.cuh\"\n".repeat(10_000);
    let t = Instant::now();
    let out = outcome(&dir, &src).unwrap();
    assert!(t.elapsed() < Duration::from_secs(20), "{:?}", t.elapsed());
    assert_eq!(out, "int a; int b; int c;");
}

/// A header whose text goes on after its `#endif`, or that has an `#else`, is no guarded
/// header: it is read each time (its second reading gives `int y;` again).
#[test]
fn a_header_with_text_after_its_endif_is_read_again() {
    let dir = scratch("notguard");
    std::fs::write(
        dir.join("h.cuh"),
        "#ifndef H\n#define H\nint x;\n#endif\nint y;\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("e.cuh"),
        "#ifndef E\n#define E\nint e;\n#else\nint again;\n#endif\n",
    )
    .unwrap();
    let out = outcome(
        &dir,
        "#include \"h.cuh\"\n#include \"h.cuh\"\n#include \"e.cuh\"\n#include \"e.cuh\"\n",
    )
    .unwrap();
    assert_eq!(out, "int x; int y; int y; int e; int again;");
}

/// `#define A B B`, `#define B C C`, …: 40 doublings stop at [`MAX_TOKENS`] at the use.
#[test]
fn an_exponential_macro_stops_at_the_expansion_limit() {
    let dir = scratch("expo");
    let mut src = String::from("#define M0 x x\n");
    for k in 1..40 {
        src.push_str(&format!("#define M{k} M{} M{}\n", k - 1, k - 1));
    }
    src.push_str("int a;\n  M39\n");
    let t = Instant::now();
    let e = outcome(&dir, &src).unwrap_err();
    assert!(t.elapsed() < Duration::from_secs(20), "{:?}", t.elapsed());
    assert_eq!(MAX_TOKENS, 262_144);
    // The innermost macro passing the limit, at the use on line 42, column 3.
    assert!(e.contains("k.cu:42:3: macro M"), "{e}");
    assert!(
        e.ends_with("expands to more than 262144 tokens (the limit of one expansion: a macro that doubles at each level?)"),
        "{e}"
    );
}

/// A long argument substituted many times is refused before its copies are built: a macro
/// that repeats its argument 1,000 times, given an argument of 100,000 tokens (10^8 tokens).
#[test]
fn a_long_argument_substituted_many_times_stops_at_the_expansion_limit() {
    let dir = scratch("arg");
    let src = format!(
        "#define R(x) {}\nR({})\n",
        "x ".repeat(1000),
        "1 ".repeat(100_000)
    );
    let t = Instant::now();
    let e = outcome(&dir, &src).unwrap_err();
    assert!(t.elapsed() < Duration::from_secs(20), "{:?}", t.elapsed());
    assert!(
        e.contains("k.cu:2:1: macro R expands to more than 262144 tokens"),
        "{e}"
    );
}

/// A macro of 196,606 tokens used on 100 lines, each run of text between two directives
/// under the one-run limit, stops at the file's limit of [`MAX_TOTAL_TOKENS`] (2^22) tokens,
/// at the use that passes it.
#[test]
fn a_large_macro_used_many_times_stops_at_the_file_limit() {
    let dir = scratch("total");
    let mut src = String::from("#define M0 x\n");
    for k in 1..=16 {
        src.push_str(&format!("#define M{k} M{} M{}\n", k - 1, k - 1));
    }
    // One use of M16 produces 2 + 4 + … + 2^16 replacement tokens for M16 … M1 and 2^16
    // for M0: 3 · 2^16 − 2 = 196,606, under the one-run limit of 2^18.
    src.push_str(&"M16\n#line 1\n".repeat(100));
    let e = outcome(&dir, &src).unwrap_err();
    assert_eq!(MAX_TOTAL_TOKENS, 4_194_304);
    assert!(
        e.contains("macros expand to more than 4194304 tokens in all in this file and its headers (the limit of one file), reached at this use of M"),
        "{e}"
    );
    // 21 uses make 4,128,726 tokens; the 22nd passes 2^22. Uses start on line 18, every
    // second line: the 22nd is on line 18 + 2 · 21 = 60.
    assert!(e.contains("k.cu:60:1:"), "{e}");
}
