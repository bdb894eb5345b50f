//! Entry points of the fuzz targets (`fuzz/`, cargo-fuzz) and of their corpus replay
//! (`tests/fuzz_corpus.rs`): each takes a file's raw bytes, as a user would hand them over,
//! and runs one reader of this crate on them. Bad input is an `Err`; a panic, an abort or a
//! hang is a bug of the reader (issue 21: every input surface ends in a clean error).
//!
//! The file is named [`FUZZ_FILE`], in a folder that does not exist, so that a quoted
//! `#include "x.cuh"` finds nothing beside it and the run does not depend on the working
//! folder. [`preprocess_files`] instead splits its input into several files written into a
//! private temporary folder, so that `#include` chains, guards, cycles and fan-outs among
//! them reach the preprocessor's include limits.

use crate::{decode_source, host_launches, preprocess, Error, Result, Source};
use std::path::Path;

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

/// The byte that separates the files of [`preprocess_files`]'s input.
pub const FILE_SEPARATOR: u8 = 0;

/// The name of the first file of [`preprocess_files`]'s input, the one preprocessed.
pub const MAIN_FILE: &str = "main.cu";

/// The folder, inside the temporary folder, given as `-I` to [`preprocess_files`].
pub const INCLUDE_FOLDER: &str = "inc";

/// Files one input of [`preprocess_files`] may hold, the main file included.
pub const MAX_VIRTUAL_FILES: usize = 64;

/// Bytes of one path component of [`preprocess_files`]'s headers, and components of a path.
const MAX_NAME_BYTES: usize = 32;
const MAX_PATH_COMPONENTS: usize = 3;

/// Splits `bytes` into files at each [`FILE_SEPARATOR`] (a NUL byte, which no source holds)
/// and preprocesses the first as [`preprocess_bytes`] does, its headers resolved among the
/// others. The first part is the main file's text ([`MAIN_FILE`]); each later part is a
/// header: its first line a path relative to the folder (`a.h`, `inc/b.h`, `sub/c.cuh`: at
/// most 3 components of at most 32 bytes of `A-Z a-z 0-9 _ . -`, none `.` or `..`), the rest
/// its bytes. Every file is written into a private temporary folder (the `tempfile` crate:
/// unpredictable name, owner-only, removed on return), the main file included (so that it can
/// include itself), and `<folder>/inc` is the one `-I` folder. So quoted and angled
/// `#include`s, `#pragma once`, include guards, cycles and fan-outs run through the
/// preprocessor's own file reading and its limits ([`preprocess::MAX_INCLUDE_DEPTH`],
/// [`preprocess::MAX_INCLUDES`], [`preprocess::MAX_OUTPUT_BYTES`]). Returns the preprocessed
/// text's length in bytes.
///
/// Errors ([`Error::Argument`] for the input's own format): more than [`MAX_VIRTUAL_FILES`]
/// files; a header with no newline after its path, a path outside the rules above, or one
/// given twice (or naming [`MAIN_FILE`]); a folder or file that cannot be written; then
/// those of [`decode_source`] and [`preprocess::preprocess`].
pub fn preprocess_files(bytes: &[u8]) -> Result<usize> {
    Ok(preprocessed_files(bytes)?.len())
}

/// [`preprocess_files`]'s preprocessed text.
fn preprocessed_files(bytes: &[u8]) -> Result<String> {
    let mut parts = bytes.split(|&b| b == FILE_SEPARATOR);
    let main = parts.next().unwrap_or_default();
    let headers: Vec<&[u8]> = parts.collect();
    if headers.len() + 1 > MAX_VIRTUAL_FILES {
        return Err(Error::Argument(format!(
            "{} files in one input; at most {MAX_VIRTUAL_FILES}",
            headers.len() + 1
        )));
    }
    let dir = tempfile::TempDir::new()
        .map_err(|e| Error::Argument(format!("cannot create a temporary folder: {e}")))?;
    let write = |rel: &Path, bytes: &[u8]| -> Result<()> {
        let path = dir.path().join(rel);
        let cannot =
            |e: std::io::Error| Error::Argument(format!("cannot write {}: {e}", rel.display()));
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(cannot)?;
        }
        std::fs::write(&path, bytes).map_err(cannot)
    };
    std::fs::create_dir_all(dir.path().join(INCLUDE_FOLDER))
        .map_err(|e| Error::Argument(format!("cannot create {INCLUDE_FOLDER}/: {e}")))?;
    write(Path::new(MAIN_FILE), main)?;
    let mut names = std::collections::HashSet::from([MAIN_FILE.to_string()]);
    for (i, part) in headers.iter().enumerate() {
        let Some(newline) = part.iter().position(|&b| b == b'\n') else {
            return Err(Error::Argument(format!(
                "file {}: expected its path on its first line",
                i + 2
            )));
        };
        let name = std::str::from_utf8(&part[..newline])
            .ok()
            .filter(|n| header_path_ok(n))
            .ok_or_else(|| {
                Error::Argument(format!(
                    "file {}: '{}' is not a header path (at most {MAX_PATH_COMPONENTS} components of A-Z a-z 0-9 _ . -, none . or ..)",
                    i + 2,
                    String::from_utf8_lossy(&part[..newline])
                ))
            })?;
        if !names.insert(name.to_string()) {
            return Err(Error::Argument(format!(
                "file {}: {name} given twice",
                i + 2
            )));
        }
        write(Path::new(name), &part[newline + 1..])?;
    }
    let main_path = dir.path().join(MAIN_FILE);
    let main_name = main_path.to_string_lossy();
    let text = decode_source(&main_name, main)?;
    let out = preprocess::preprocess(
        &main_name,
        &text,
        &["FUZZ=1".to_string()],
        &[dir.path().join(INCLUDE_FOLDER)],
    )?;
    Ok(out.text)
}

/// Whether `name` is a header path [`preprocess_files`] writes: relative, at most
/// [`MAX_PATH_COMPONENTS`] normal components of at most [`MAX_NAME_BYTES`] safe bytes each.
fn header_path_ok(name: &str) -> bool {
    let safe = |c: char| c.is_ascii_alphanumeric() || "_.-".contains(c);
    name.split('/').count() <= MAX_PATH_COMPONENTS
        && name.split('/').all(|c| {
            !c.is_empty()
                && c != "."
                && c != ".."
                && c.len() <= MAX_NAME_BYTES
                && c.chars().all(safe)
        })
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

#[cfg(test)]
mod tests {
    use super::*;

    /// An input of [`preprocess_files`]: the main file, then each header as `path\ntext`.
    fn files(main: &str, headers: &[(&str, String)]) -> Vec<u8> {
        let mut b = main.as_bytes().to_vec();
        for (name, text) in headers {
            b.push(FILE_SEPARATOR);
            b.extend_from_slice(format!("{name}\n{text}").as_bytes());
        }
        b
    }

    fn error(bytes: &[u8]) -> String {
        preprocess_files(bytes).unwrap_err().to_string()
    }

    /// Each header doubles the reads of the next: `h0.h` … `h12.h` include the next twice,
    /// 1 + 2 + 4 + … + 2^13 = 16,383 reads without guards, over [`preprocess::MAX_INCLUDES`];
    /// with guards `h0.h` … `h12.h` are read once each.
    #[test]
    fn a_doubling_include_tree_passes_the_limit_unless_guarded() {
        let tree = |guarded: bool| {
            let mut h: Vec<(String, String)> = (0..13)
                .map(|i| {
                    let body = format!("#include \"h{0}.h\"\n#include \"h{0}.h\"\n", i + 1);
                    let text = if guarded {
                        format!("#ifndef H{i}\n#define H{i}\n{body}#endif\n")
                    } else {
                        body
                    };
                    (format!("h{i}.h"), text)
                })
                .collect();
            h.push(("h13.h".into(), "int leaf;\n".into()));
            let h: Vec<(&str, String)> = h.iter().map(|(n, t)| (n.as_str(), t.clone())).collect();
            files("#include \"h0.h\"\n", &h)
        };
        let m = error(&tree(false));
        assert!(
            m.contains(&format!(
                "more than {} headers read",
                preprocess::MAX_INCLUDES
            )),
            "{m}"
        );
        // Guarded: `h13.h` (unguarded) is read twice, by the one read of `h12.h`.
        let text = preprocessed_files(&tree(true)).unwrap();
        assert_eq!(text.matches("int leaf;").count(), 2, "{text}");
    }

    /// Two headers that include each other with no guard stop at the depth limit, named at
    /// the `#include` in a header's own file.
    #[test]
    fn an_unguarded_cycle_stops_at_the_depth_limit() {
        let m = error(&files(
            "#include \"a.h\"\n",
            &[
                ("a.h", "#include \"b.h\"\n".into()),
                ("b.h", "#include \"a.h\"\n".into()),
            ],
        ));
        assert!(
            m.contains(&format!(
                "#include nested more than {} deep",
                preprocess::MAX_INCLUDE_DEPTH
            )),
            "{m}"
        );
        assert!(m.contains(".h:1:1:"), "{m}");
    }

    /// Quoted includes resolve beside the including header (`sub/a.h` finds `sub/b.h`), angled
    /// ones in `inc/`; the chain's macros reach the main file: `A` becomes `(1 + (2 * 3))`.
    #[test]
    fn headers_resolve_beside_each_other_and_in_the_include_folder() {
        let bytes = files(
            "#include \"sub/a.h\"\nint v = A;\n",
            &[
                (
                    "sub/a.h",
                    "#include \"b.h\"\n#include <c.h>\n#define A (1 + B)\n".into(),
                ),
                ("sub/b.h", "#define B (2 * C)\n".into()),
                ("inc/c.h", "#define C 3\n".into()),
            ],
        );
        let text = preprocessed_files(&bytes).unwrap();
        assert!(text.contains("int v = (1 + (2 * 3));"), "{text}");
    }

    #[test]
    fn header_paths_stay_inside_the_folder() {
        for bad in [
            "../x.h",
            "/etc/x.h",
            "a//b.h",
            "./x.h",
            "a/b/c/d.h",
            "x y.h",
            "",
        ] {
            let m = error(&files("", &[(bad, String::new())]));
            assert!(m.contains("is not a header path"), "{bad}: {m}");
        }
        assert!(error(&files(
            "",
            &[("a.h", String::new()), ("a.h", String::new())]
        ))
        .contains("a.h given twice"));
        assert!(error(&files("", &[(MAIN_FILE, String::new())])).contains("given twice"));
        let mut no_path = b"int x;\n".to_vec();
        no_path.extend_from_slice(b"\0a.h");
        assert!(error(&no_path).contains("expected its path on its first line"));
        let many: Vec<(&str, String)> = (0..MAX_VIRTUAL_FILES)
            .map(|_| ("a.h", String::new()))
            .collect();
        assert!(error(&files("", &many)).contains(&format!("at most {MAX_VIRTUAL_FILES}")));
        assert!(header_path_ok("a/b/c.h") && header_path_ok("inc/x-1_y.cuh"));
    }
}
