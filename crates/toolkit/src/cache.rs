//! The PTX cache: `KEY.ptx` files in a folder, KEY a SHA-256 of everything that decides
//! the PTX.

use std::collections::HashSet;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::find::Env;
use crate::store::{private_dir, read_entry, write_entry, Entry};

/// Bumped when the key's recipe or the stored format changes, so old entries are ignored.
const FORMAT: &str = "warpscope-ptx-cache-3";

/// Deepest chain of quoted includes followed (a guard against pathological trees; cycles
/// are caught separately).
const MAX_INCLUDE_DEPTH: usize = 64;

/// The folder [`crate::Toolkit::compile_ptx`] keeps compiled PTX in:
/// `$WARPSCOPE_CACHE_DIR/ptx` when that variable is set, else the user's cache folder's
/// `warpscope/ptx` (`~/.cache/warpscope/ptx` on Linux, `~/Library/Caches/warpscope/ptx` on
/// macOS, `%LOCALAPPDATA%\warpscope\ptx` on Windows). `None` when neither is known; the
/// folder is not created here.
pub fn default_cache_dir() -> Option<PathBuf> {
    cache_dir_in(&Env::process())
}

pub(crate) fn cache_dir_in(env: &Env) -> Option<PathBuf> {
    match env.get("WARPSCOPE_CACHE_DIR") {
        Some(dir) => Some(PathBuf::from(dir).join("ptx")),
        None => dirs::cache_dir().map(|d| d.join("warpscope").join("ptx")),
    }
}

/// Builds a cache key from framed fields, so no two field lists hash alike.
pub(crate) struct KeyBuilder(Sha256);

impl KeyBuilder {
    pub(crate) fn new() -> KeyBuilder {
        let mut k = KeyBuilder(Sha256::new());
        k.field("format", FORMAT.as_bytes());
        k
    }

    pub(crate) fn field(&mut self, tag: &str, bytes: &[u8]) {
        for part in [tag.as_bytes(), bytes] {
            self.0.update((part.len() as u64).to_le_bytes());
            self.0.update(part);
        }
    }

    pub(crate) fn finish(self) -> String {
        self.0
            .finalize()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    }
}

/// Hashes the text of every file `source` (the text of `file`) includes with
/// `#include "…"`, recursively, each looked up first in the including file's folder and
/// then in `include_dirs`, as nvcc does. A quoted name found nowhere (a toolkit header
/// written with quotes, or a file not there yet) is hashed as missing, so that its
/// appearing later changes the key. `#include <…>` is not followed: those are the
/// toolkit's and the system's headers, covered by the toolkit's version in the key.
pub(crate) fn hash_includes(
    key: &mut KeyBuilder,
    file: &Path,
    source: &str,
    include_dirs: &[PathBuf],
) {
    let mut seen = HashSet::new();
    seen.insert(canonical(file));
    walk(key, file, source, include_dirs, &mut seen, 0);
}

fn walk(
    key: &mut KeyBuilder,
    file: &Path,
    source: &str,
    include_dirs: &[PathBuf],
    seen: &mut HashSet<PathBuf>,
    depth: usize,
) {
    if depth >= MAX_INCLUDE_DEPTH {
        return;
    }
    let here = file.parent().unwrap_or(Path::new("."));
    for name in quoted_includes(source) {
        let found = std::iter::once(here)
            .chain(include_dirs.iter().map(PathBuf::as_path))
            .map(|dir| dir.join(name))
            .find(|p| p.is_file());
        let Some(path) = found else {
            key.field(
                "missing include",
                format!("{}|{name}", here.display()).as_bytes(),
            );
            continue;
        };
        if !seen.insert(canonical(&path)) {
            // Already hashed (included twice, or a cycle); record only the edge.
            key.field("include again", path.as_os_str().as_encoded_bytes());
            continue;
        }
        match std::fs::read(&path) {
            Ok(bytes) => {
                key.field("include", path.as_os_str().as_encoded_bytes());
                key.field("text", &bytes);
                let text = String::from_utf8_lossy(&bytes);
                walk(key, &path, &text, include_dirs, seen, depth + 1);
            }
            Err(e) => key.field(
                "unreadable include",
                format!("{}: {e}", path.display()).as_bytes(),
            ),
        }
    }
}

fn canonical(p: &Path) -> PathBuf {
    p.canonicalize().unwrap_or_else(|_| p.to_path_buf())
}

/// The names of the `#include "NAME"` lines of `source` (`#` and `include` may be spaced).
/// Commented-out includes are followed too, which at worst recompiles when they change.
pub(crate) fn quoted_includes(source: &str) -> Vec<&str> {
    source
        .lines()
        .filter_map(|line| {
            let rest = line.trim_start().strip_prefix('#')?.trim_start();
            let rest = rest.strip_prefix("include")?.trim_start();
            let rest = rest.strip_prefix('"')?;
            let end = rest.find('"')?;
            Some(&rest[..end]).filter(|n| !n.is_empty())
        })
        .collect()
}

/// `DIR/KEY.ptx`.
pub(crate) fn entry(dir: &Path, key: &str) -> PathBuf {
    dir.join(format!("{key}.ptx"))
}

/// The cached PTX for `key`: verified against its SHA-256 ([`crate::store::read_entry`]),
/// and plausible PTX.
pub(crate) fn load(dir: &Path, key: &str) -> Entry {
    let path = entry(dir, key);
    match read_entry(&path) {
        Entry::Good(text) if !text.contains(".target") => Entry::Corrupt(format!(
            "cache entry {} was corrupt (no .target: not PTX): rebuilt",
            path.display()
        )),
        e => e,
    }
}

/// A fresh private folder (random name, 0700, removed when dropped) for nvcc to write its
/// PTX in: inside `dir` (the cache, so the entry is then written on the same file system),
/// else in the system's temporary folder.
pub(crate) fn scratch(dir: Option<&Path>) -> std::io::Result<tempfile::TempDir> {
    let b = {
        let mut b = tempfile::Builder::new();
        b.prefix(".nvcc-");
        b
    };
    match dir {
        Some(d) => b.tempdir_in(d),
        None => b.tempdir(),
    }
}

/// Creates the cache folder `dir` and its parent as private ones
/// ([`crate::store::private_dir`]); the error says why one cannot be used.
pub(crate) fn prepare(dir: &Path) -> Result<(), String> {
    // The parent too: `$WARPSCOPE_CACHE_DIR` or `~/.cache/warpscope`, which `sass/` shares.
    dir.parent()
        .map_or(Ok(()), private_dir)
        .and_then(|()| private_dir(dir))
}

/// Stores `ptx` as the sealed entry `KEY.ptx` (written aside and renamed into place, so
/// readers never see half a file).
pub(crate) fn store(dir: &Path, key: &str, ptx: &str) -> Result<(), String> {
    write_entry(dir, &format!("{key}.ptx"), ptx).map(|_| ())
}

/// The folders that `-I DIR`, `-IDIR` and `--include-path[=]DIR` in `extra` add.
pub(crate) fn include_flags_of(extra: &[String]) -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    let mut it = extra.iter().peekable();
    while let Some(arg) = it.next() {
        let value = if arg == "-I" || arg == "--include-path" {
            it.next().cloned()
        } else if let Some(v) = arg.strip_prefix("--include-path=") {
            Some(v.to_string())
        } else {
            arg.strip_prefix("-I").map(str::to_string)
        };
        if let Some(v) = value.filter(|v| !v.is_empty()) {
            dirs.push(PathBuf::from(v));
        }
    }
    dirs
}

/// Lossless bytes of an argument for the key.
pub(crate) fn os_bytes(s: &OsStr) -> &[u8] {
    s.as_encoded_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsStr;

    #[test]
    fn finds_quoted_includes_only() {
        let src = "#include <cstdio>\n  #  include \"a.h\"\n#include\"b/c.cuh\" // x\n#define X\n#include \"\"\n";
        assert_eq!(quoted_includes(src), vec!["a.h", "b/c.cuh"]);
    }

    #[test]
    fn include_flags() {
        let extra: Vec<String> = ["-Ia", "-I", "b", "--include-path=c", "-O2"]
            .map(String::from)
            .to_vec();
        assert_eq!(
            include_flags_of(&extra),
            vec![PathBuf::from("a"), "b".into(), "c".into()]
        );
    }

    #[test]
    fn cache_dir_honours_the_variable() {
        let env = Env::of(&[("WARPSCOPE_CACHE_DIR", OsStr::new("/tmp/wsc"))]);
        assert_eq!(cache_dir_in(&env), Some(PathBuf::from("/tmp/wsc/ptx")));
        if let Some(d) = cache_dir_in(&Env::of(&[])) {
            assert!(d.ends_with("warpscope/ptx"), "{}", d.display());
        }
    }

    fn key_of(file: &Path, dirs: &[PathBuf]) -> String {
        let src = std::fs::read_to_string(file).unwrap();
        let mut k = KeyBuilder::new();
        hash_includes(&mut k, file, &src, dirs);
        k.finish()
    }

    #[test]
    fn includes_are_followed_recursively_through_include_dirs_and_cycles() {
        let tmp = tempfile::tempdir().unwrap();
        let t = tmp.path();
        std::fs::create_dir_all(t.join("inc")).unwrap();
        std::fs::write(t.join("k.cu"), "#include \"a.h\"\n#include <cstdio>\n").unwrap();
        std::fs::write(t.join("a.h"), "#include \"b.h\"\n#include \"a.h\"\n").unwrap();
        std::fs::write(t.join("inc/b.h"), "#define B 1\n").unwrap();
        let dirs = vec![t.join("inc")];
        let k1 = key_of(&t.join("k.cu"), &dirs);
        assert_eq!(k1, key_of(&t.join("k.cu"), &dirs));
        std::fs::write(t.join("inc/b.h"), "#define B 2\n").unwrap();
        let k2 = key_of(&t.join("k.cu"), &dirs);
        assert_ne!(k1, k2);
        // b.h in the file's own folder shadows the -I one, as in nvcc.
        std::fs::write(t.join("b.h"), "#define B 3\n").unwrap();
        assert_ne!(k2, key_of(&t.join("k.cu"), &dirs));
    }
}
