//! Entry point of the JSON fuzz target (`fuzz/`, cargo-fuzz) and of its corpus replay
//! (`tests/fuzz_corpus.rs`): the raw bytes of a result file as `warpscope diff` reads it
//! ([`diff::read_runs`]), then compared with itself and, when it holds two analyses or more,
//! its first with its second ([`diff::diff`], [`diff::regressions`]). Bad input is an `Err`;
//! a panic, an abort or a silent zero for a missing field is a bug (issue 21).

use crate::diff::{self, Measure};
use anyhow::{anyhow, Result};

/// The name the fuzzed bytes are given in messages.
pub const FUZZ_FILE: &str = "fuzz.json";

/// Reads `bytes` as `warpscope diff` reads OLD and NEW, then diffs them as described in the
/// module's documentation. Returns the regression lines found (every measure watched).
///
/// Errors: bytes that are not UTF-8, and those of [`diff::read_runs`] and [`diff::diff`].
pub fn diff_json_bytes(bytes: &[u8]) -> Result<usize> {
    let text = std::str::from_utf8(bytes).map_err(|e| anyhow!("{FUZZ_FILE}: not UTF-8: {e}"))?;
    let runs = diff::read_runs(text, FUZZ_FILE)?;
    let same = diff::diff(&runs, &runs)?;
    let mut lines = diff::regressions(&same, &Measure::ALL).len();
    if runs.len() >= 2 {
        let changed = diff::diff(&runs[..1], &runs[1..2])?;
        lines += diff::regressions(&changed, &Measure::ALL).len();
    }
    Ok(lines)
}
