//! Fuzzing of the source front end: the corpus (`tests/fuzz-corpus/*.cu`, the crashers of
//! issue 9 among them) and the kernels of `examples/*.cu` are replayed as they are, then
//! mutated — byte ranges deleted or duplicated, tokens inserted, deep nestings spliced in —
//! and each case is parsed, lowered and launched (1 block of 32 threads, a small loop
//! limit). Any panic fails the test; a stack overflow aborts the test binary, which fails
//! it too; each case must finish within [`CASE_SECONDS`].
//!
//! `WARPSCOPE_FUZZ_CASES` sets the number of fresh mutated cases (default 2,000).

use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;
use std::time::{Duration, Instant};
use warpscope_cuda::{decode_source, Source};

/// Seconds one case may take (parse + lower + launch of one block).
const CASE_SECONDS: u64 = 10;

/// The corpus and example files: (name, bytes).
fn seeds() -> Vec<(String, Vec<u8>)> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut out = Vec::new();
    for dir in [root.join("tests/fuzz-corpus"), root.join("../../examples")] {
        let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "cu"))
            .collect();
        files.sort();
        for p in files {
            out.push((p.display().to_string(), std::fs::read(&p).unwrap()));
        }
    }
    out
}

/// Runs one case through the front end: parse, every kernel (at most 3) lowered and
/// launched with each scalar parameter 3 and each pointer parameter sized 256 elements.
/// Errors are expected; panics are not.
fn exercise(bytes: &[u8]) {
    let Ok(text) = decode_source("fuzz.cu", bytes) else {
        return;
    };
    let Ok(src) = Source::parse("fuzz.cu", &text, &[]) else {
        return;
    };
    let Ok(kernels) = src.kernels() else {
        return;
    };
    for name in kernels.iter().take(3) {
        let name = name.split('<').next().unwrap_or(name);
        let Ok(k) = src.kernel(name) else {
            continue;
        };
        let params = k.params();
        let args: Vec<(String, String)> = params
            .iter()
            .filter(|p| !p.is_pointer)
            .map(|p| (p.name.clone(), "3".to_string()))
            .collect();
        let allocs: Vec<(String, u64)> = params
            .iter()
            .filter(|p| p.is_pointer)
            .map(|p| (p.name.clone(), 256))
            .collect();
        let Ok(cfg) = k.configure(&args, &allocs, [1, 1, 1], [32, 1, 1], 0, 200) else {
            continue;
        };
        let mut n = 0u64;
        let _ = k.run(&cfg, &mut |_, _| n += 1);
    }
}

/// Runs `exercise` on `bytes`, turning a panic or a time-out into a failure message.
fn check(label: &str, bytes: &[u8]) -> Result<(), String> {
    let t = Instant::now();
    let r = catch_unwind(AssertUnwindSafe(|| exercise(bytes)));
    let took = t.elapsed();
    if r.is_err() {
        return Err(format!(
            "{label}: panic on input:\n{}",
            String::from_utf8_lossy(&bytes[..bytes.len().min(2000)])
        ));
    }
    if took > Duration::from_secs(CASE_SECONDS) {
        return Err(format!("{label}: took {took:?}"));
    }
    Ok(())
}

#[derive(Clone, Debug)]
enum Mutation {
    /// Delete `len` bytes at `at` (a fraction of the length, in 1/1000).
    Delete { at: u16, len: u16 },
    /// Duplicate `len` bytes at `at`.
    Duplicate { at: u16, len: u16 },
    /// Insert a token at `at`.
    Insert { at: u16, token: usize },
    /// Replace the byte at `at`.
    Replace { at: u16, byte: u8 },
    /// Wrap the text at `at` in `depth` nested openers of kind `kind`.
    Nest { at: u16, kind: usize, depth: u16 },
}

const TOKENS: &[&str] = &[
    "(",
    ")",
    "{",
    "}",
    "[",
    "]",
    ";",
    ",",
    "-",
    "+",
    "*",
    "&",
    "?",
    ":",
    "<",
    ">",
    "=",
    "++",
    "--",
    "<<",
    "0",
    "1",
    "-1",
    "4294967295",
    "9223372036854775807",
    "1e308",
    "0.5f",
    "i",
    "threadIdx.x",
    "blockIdx.x",
    "blockDim.x",
    "__shared__",
    "__constant__",
    "__device__",
    "__global__",
    "extern",
    "float",
    "double",
    "int",
    "char",
    "void",
    "unsigned",
    "long",
    "const",
    "struct",
    "template",
    "typename",
    "return",
    "if",
    "else",
    "for",
    "while",
    "do",
    "break",
    "continue",
    "switch",
    "case",
    "default:",
    "goto",
    "sizeof",
    "#define X ",
    "#if 1\n",
    "#endif\n",
    "\n",
    "/*",
    "*/",
    "//",
    "\"",
    "'",
    "ß",
    "\u{e9}",
    "__syncthreads();",
];

const NESTS: &[(&str, &str)] = &[
    ("(", ")"),
    ("- ", ""),
    ("{", "}"),
    ("if (1) {", "}"),
    ("(float)", ""),
    ("1 ? ", " : 0"),
    ("0 + ", ""),
    ("for (int q = 0; q < 1; q++) {", "}"),
    ("[", "]"),
];

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (0u16..1000, 1u16..64).prop_map(|(at, len)| Mutation::Delete { at, len }),
        (0u16..1000, 1u16..128).prop_map(|(at, len)| Mutation::Duplicate { at, len }),
        (0u16..1000, 0..TOKENS.len()).prop_map(|(at, token)| Mutation::Insert { at, token }),
        (0u16..1000, any::<u8>()).prop_map(|(at, byte)| Mutation::Replace { at, byte }),
        (
            0u16..1000,
            0..NESTS.len(),
            prop_oneof![1u16..40, 400u16..3000]
        )
            .prop_map(|(at, kind, depth)| Mutation::Nest { at, kind, depth }),
    ]
}

fn apply(mut b: Vec<u8>, muts: &[Mutation]) -> Vec<u8> {
    let pos = |at: u16, len: usize| (at as usize * len) / 1000;
    for m in muts {
        let n = b.len();
        match *m {
            Mutation::Delete { at, len } => {
                let s = pos(at, n);
                let e = (s + len as usize).min(n);
                b.drain(s..e);
            }
            Mutation::Duplicate { at, len } => {
                let s = pos(at, n);
                let e = (s + len as usize).min(n);
                let piece = b[s..e].to_vec();
                b.splice(e..e, piece);
            }
            Mutation::Insert { at, token } => {
                let s = pos(at, n);
                let t = format!(" {} ", TOKENS[token]);
                b.splice(s..s, t.bytes());
            }
            Mutation::Replace { at, byte } => {
                if n > 0 {
                    let s = pos(at, n).min(n - 1);
                    b[s] = byte;
                }
            }
            Mutation::Nest { at, kind, depth } => {
                // Around the next token-ish run: openers before `s`, closers after it.
                let s = pos(at, n);
                let e = (s + 8).min(n);
                let (open, close) = NESTS[kind];
                b.splice(e..e, close.repeat(depth as usize).into_bytes());
                b.splice(s..s, open.repeat(depth as usize).into_bytes());
            }
        }
    }
    b
}

#[test]
fn corpus_and_examples_replay_without_panics() {
    for (name, bytes) in seeds() {
        if let Err(m) = check(&name, &bytes) {
            panic!("{m}");
        }
    }
}

#[test]
fn mutated_kernels_never_panic() {
    let seeds = seeds();
    assert!(seeds.len() >= 20, "{} seeds", seeds.len());
    let cases = std::env::var("WARPSCOPE_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2000);
    let mut runner = TestRunner::new(Config {
        cases,
        failure_persistence: None,
        // Shrinking re-runs cases; a failure's first input is printed in full anyway.
        max_shrink_iters: 0,
        ..Config::default()
    });
    let strategy = (0..seeds.len(), prop::collection::vec(mutation(), 1..6));
    let result = runner.run(&strategy, |(seed, muts)| {
        let (name, bytes) = &seeds[seed];
        let input = apply(bytes.clone(), &muts);
        check(&format!("{name} with {muts:?}"), &input).map_err(TestCaseError::fail)
    });
    if let Err(e) = result {
        panic!("{e}");
    }
}

/// Found by this harness: 2,651 nested `if (1) {` spliced into the 2,880 ternaries of
/// `deep_ternary.cu` kept the parser's error recovery busy for 6–8 s. Deep brackets are now
/// refused before parsing.
#[test]
fn deep_brackets_in_broken_code_are_refused_quickly() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let bytes = std::fs::read(root.join("tests/fuzz-corpus/deep_ternary.cu")).unwrap();
    for kind in [2, 3] {
        let input = apply(
            bytes.clone(),
            &[Mutation::Nest {
                at: 972,
                kind,
                depth: 2651,
            }],
        );
        let text = decode_source("t.cu", &input).unwrap();
        let t = Instant::now();
        let m = Source::parse("t.cu", &text, &[])
            .err()
            .map(|e| e.to_string());
        assert!(t.elapsed() < Duration::from_secs(2), "{:?}", t.elapsed());
        let m = m.unwrap_or_default();
        assert!(
            m.contains("syntax error: brackets nested more than 512 deep"),
            "{m}"
        );
        assert!(m.starts_with("t.cu:3:"), "{m}");
    }
}
