//! Fuzz target: the preprocessor's `#include` (crates/cuda/src/preprocess/run.rs): the input
//! split at NUL bytes into a main file and headers written into a private temporary folder
//! (`warpscope_cuda::fuzzing::preprocess_files`), so that include chains, guards, cycles and
//! fan-outs reach the include depth, count and size limits.
//! An error is fine; a panic, an abort, a time-out or running out of memory is a bug.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = warpscope_cuda::fuzzing::preprocess_files(data);
});
