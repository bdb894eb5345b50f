//! Entry points of this crate's fuzz targets (`fuzz/`, cargo-fuzz) and of their corpus
//! replay (`tests/fuzz_corpus.rs`): the raw bytes of a result file as `warpscope diff` reads
//! it ([`diff_json_bytes`]) and of a launch file as `--launches` and `warpscope check` read it
//! ([`launch_file_bytes`]). Bad input is an `Err`; a panic, an abort, a hang or a silent zero
//! for a missing field is a bug (issue 21).

use crate::diff::{self, Measure};
use crate::launch_file;
use anyhow::{anyhow, Result};
use std::path::Path;

/// The name the fuzzed bytes are given in messages.
pub const FUZZ_FILE: &str = "fuzz.json";

/// The name the fuzzed launch file is given in messages.
pub const FUZZ_LAUNCH_FILE: &str = "fuzz.toml";

/// The folder the fuzzed launch file's relative paths are resolved against: one that does
/// not exist, as nothing here reads them.
pub const FUZZ_LAUNCH_FOLDER: &str = "/nonexistent-warpscope-fuzz";

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

/// Reads `bytes` as the command reads a launch file: UTF-8, then [`launch_file::read`] with
/// the file's tools allowed (so that an `nvcc` key is read on, not refused) and, for each
/// launch's flags, what the library parses of them when the launch is built: every
/// `--init=NAME=MODE` through [`crate::init::Rule::parse`]. The command's own flag parser
/// (clap, in the CLI crate) replays this target's corpus in its unit tests
/// (`src/cli/project.rs`). Returns the launches and budgets read.
///
/// Errors: bytes that are not UTF-8 (the command's message), those of
/// [`launch_file::read`], and an `--init` value [`crate::init::Rule::parse`] refuses.
pub fn launch_file_bytes(bytes: &[u8]) -> Result<usize> {
    let text = std::str::from_utf8(bytes).map_err(|e| {
        anyhow!(
            "launch file {FUZZ_LAUNCH_FILE} is not UTF-8 text (invalid byte at offset {})",
            e.valid_up_to()
        )
    })?;
    let launches = launch_file::read(
        text,
        FUZZ_LAUNCH_FILE,
        Path::new(FUZZ_LAUNCH_FOLDER),
        true,
        |flags| {
            for rule in flags.iter().filter_map(|f| f.strip_prefix("--init=")) {
                crate::init::Rule::parse(rule).map_err(|e| e.to_string())?;
            }
            Ok(())
        },
    )?;
    Ok(launches.len() + launches.iter().map(|l| l.budgets.len()).sum::<usize>())
}
