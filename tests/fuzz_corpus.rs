//! Replays the fuzz targets' corpora (`fuzz/corpus/TARGET/`, minimized by `cargo fuzz cmin`)
//! and the crash and time-out inputs the fuzzers found (`fuzz/regressions/TARGET/`) through
//! the targets' own entry functions, on stable Rust without libFuzzer: every file must end
//! in a value or an error, never a panic (an abort or a stack overflow fails the whole test
//! binary). Alongside `crates/cuda/tests/fuzz.rs`, which mutates the front end's inputs 2,000
//! times a run, this keeps what `scripts/fuzz.sh` found (issue 21) from coming back.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// A target's entry function: a file's bytes in; Ok or Err, both fine.
type Entry = fn(&[u8]) -> bool;

/// The fuzz targets (fuzz/fuzz_targets/*.rs), each with the function it calls and the least
/// number of corpus files it must have (so that an emptied corpus fails the test).
const TARGETS: &[(&str, Entry, usize)] = &[
    (
        "preprocess",
        |b| warpscope::cuda::fuzzing::preprocess_bytes(b).is_ok(),
        20,
    ),
    (
        "preprocess_includes",
        |b| warpscope::cuda::fuzzing::preprocess_files(b).is_ok(),
        15,
    ),
    (
        "frontend",
        |b| warpscope::cuda::fuzzing::lower_source(b).is_ok(),
        20,
    ),
    (
        "launches",
        |b| warpscope::cuda::fuzzing::host_launches_bytes(b).is_ok(),
        10,
    ),
    (
        "ptx",
        |b| warpscope_simt::fuzzing::run_ptx_bytes(b).is_ok(),
        20,
    ),
    (
        "npy",
        |b| warpscope::init::fuzzing::read_data_bytes(b).is_ok(),
        10,
    ),
    (
        "diff_json",
        |b| warpscope::fuzzing::diff_json_bytes(b).is_ok(),
        3,
    ),
    (
        "launch_file",
        |b| warpscope::fuzzing::launch_file_bytes(b).is_ok(),
        15,
    ),
];

/// Seconds one input may take: a guard against a hang coming back (inputs take
/// milliseconds; the `.npy` header that timed out took 50 s here without its fix;
/// libFuzzer's own limit in scripts/fuzz.sh is 20 s under AddressSanitizer).
const CASE_SECONDS: u64 = 10;

/// The stack of libFuzzer's and the command's main thread (8 MiB), for the replay thread.
const STACK_BYTES: usize = 8 << 20;

fn files(dir: &Path) -> Vec<PathBuf> {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut v: Vec<PathBuf> = rd
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_file())
        .collect();
    v.sort();
    v
}

/// Replays `target`'s corpus and regression inputs; returns (files, accepted) or the first
/// failure.
fn replay(target: &str, entry: Entry) -> Result<(usize, usize), String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz");
    let mut all = files(&root.join("corpus").join(target));
    all.extend(files(&root.join("regressions").join(target)));
    let mut accepted = 0;
    for f in &all {
        let bytes = std::fs::read(f).map_err(|e| format!("{}: {e}", f.display()))?;
        let start = Instant::now();
        let r = catch_unwind(AssertUnwindSafe(|| entry(&bytes)));
        let took = start.elapsed();
        match r {
            Ok(ok) => accepted += ok as usize,
            Err(_) => return Err(format!("{target}: panic on {}", f.display())),
        }
        if took > Duration::from_secs(CASE_SECONDS) {
            return Err(format!("{target}: {} took {took:?}", f.display()));
        }
    }
    Ok((all.len(), accepted))
}

/// One test per target, each on a thread with the main thread's stack.
fn run(target: &'static str) {
    let (_, entry, least) = *TARGETS.iter().find(|t| t.0 == target).unwrap();
    let r = std::thread::Builder::new()
        .stack_size(STACK_BYTES)
        .spawn(move || replay(target, entry))
        .unwrap()
        .join()
        .expect("replay thread");
    let (n, accepted) = r.unwrap_or_else(|m| panic!("{m}"));
    assert!(
        n >= least,
        "{target}: {n} corpus files, expected at least {least} (fuzz/corpus/{target})"
    );
    println!(
        "{target}: {n} inputs replayed, {accepted} accepted, the others refused with an error"
    );
}

#[test]
fn preprocess_corpus_replays_without_panics() {
    run("preprocess");
}

#[test]
fn preprocess_includes_corpus_replays_without_panics() {
    run("preprocess_includes");
}

#[test]
fn frontend_corpus_replays_without_panics() {
    run("frontend");
}

#[test]
fn launches_corpus_replays_without_panics() {
    run("launches");
}

#[test]
fn ptx_corpus_replays_without_panics() {
    run("ptx");
}

#[test]
fn npy_corpus_replays_without_panics() {
    run("npy");
}

#[test]
fn diff_json_corpus_replays_without_panics() {
    run("diff_json");
}

#[test]
fn launch_file_corpus_replays_without_panics() {
    run("launch_file");
}

/// Every fuzz target has its replay here, and every replay its target.
#[test]
fn every_fuzz_target_is_replayed() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/fuzz_targets");
    let mut on_disk: Vec<String> = files(&dir)
        .iter()
        .filter_map(|p| p.file_stem().map(|s| s.to_string_lossy().into_owned()))
        .collect();
    on_disk.sort();
    let mut here: Vec<String> = TARGETS.iter().map(|t| t.0.to_string()).collect();
    here.sort();
    assert_eq!(on_disk, here);
}
