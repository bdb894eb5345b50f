//! Entry points of the fuzz targets (`fuzz/`, cargo-fuzz) and of their corpus replay
//! (`tests/fuzz_corpus.rs`): each takes a file's raw bytes, as a user would hand them over,
//! and runs one reader of this crate on them. Bad input is an `Err`; a panic, an abort or a
//! hang is a bug of the reader (issue 21: every input surface ends in a clean error).
//!
//! The file is named [`FUZZ_FILE`], in a folder that does not exist, so that a quoted
//! `#include "x.cuh"` finds nothing beside it and the run does not depend on the working
//! folder.

use crate::{decode_source, host_launches, preprocess, Result, Source};

/// The name the fuzzed bytes are given (a folder that does not exist: no neighbour header).
pub const FUZZ_FILE: &str = "/nonexistent-warpscope-fuzz/fuzz.cu";

/// Kernels lowered per input by [`lower_source`]: enough to reach templates and overloads,
/// few enough that one input stays fast.
pub const MAX_KERNELS_LOWERED: usize = 3;

/// Preprocesses `bytes` ([`decode_source`], then [`preprocess::preprocess`] with `-D
/// FUZZ=1` and no `-I` folder). Returns the preprocessed text's length in bytes.
///
/// Errors: those of [`decode_source`] and [`preprocess::preprocess`].
pub fn preprocess_bytes(bytes: &[u8]) -> Result<usize> {
    let text = decode_source(FUZZ_FILE, bytes)?;
    let out = preprocess::preprocess(FUZZ_FILE, &text, &["FUZZ=1".to_string()], &[])?;
    Ok(out.text.len())
}

/// Parses `bytes` as a `.cu` file ([`Source::parse`]) and lowers its first
/// [`MAX_KERNELS_LOWERED`] kernels ([`Source::kernel`]) to the front end's own PTX. Returns the
/// bytes of PTX produced, summed over the kernels that lowered.
///
/// Errors: those of [`decode_source`], [`Source::parse`] and [`Source::kernels`]; a kernel
/// that does not lower is skipped (the next may).
pub fn lower_source(bytes: &[u8]) -> Result<usize> {
    let text = decode_source(FUZZ_FILE, bytes)?;
    let src = Source::parse(FUZZ_FILE, &text, &[])?;
    let mut ptx_bytes = 0;
    for name in src.kernels()?.iter().take(MAX_KERNELS_LOWERED) {
        if let Ok(k) = src.kernel(name) {
            ptx_bytes += k.ptx().len();
        }
    }
    Ok(ptx_bytes)
}

/// Finds the host code's kernel launches in `bytes` ([`host_launches`], `-D FUZZ=1`).
/// Returns how many were found.
///
/// Errors: those of [`decode_source`] and [`host_launches`].
pub fn host_launches_bytes(bytes: &[u8]) -> Result<usize> {
    let text = decode_source(FUZZ_FILE, bytes)?;
    Ok(host_launches(FUZZ_FILE, &text, &["FUZZ=1".to_string()])?.len())
}
