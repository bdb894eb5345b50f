//! Loading vendor shared libraries (libnvrtc, libcuda) at run time, for the crates that
//! reach them through cudarc's dynamic loading: [`preload`] one by its full path so that a
//! later `dlopen` of its soname returns it, [`missing_symbols`] to tell a library too old
//! for warpscope from a usable one, [`candidates_in`] to list a folder's versions.

use std::path::{Path, PathBuf};

/// Library files in `dir` whose names start with `prefix` followed by `.so` (with any
/// version suffix), highest version first; `exclude` drops names containing it.
pub fn candidates_in(dir: &Path, prefix: &str, exclude: &str) -> Vec<PathBuf> {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut v: Vec<PathBuf> = rd
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name().and_then(|n| n.to_str()).is_some_and(|n| {
                n.starts_with(&format!("{prefix}.so"))
                    && (exclude.is_empty() || !n.contains(exclude))
            })
        })
        .collect();
    v.sort();
    v.reverse();
    v
}

/// Loads `path` for the rest of the process (never unloaded), so that a later `dlopen` of
/// its soname returns it.
pub fn preload(path: &Path) -> std::result::Result<(), String> {
    // SAFETY: loading a vendor library runs its initialisers; that is what using it means.
    match unsafe { libloading::Library::new(path) } {
        Ok(lib) => {
            std::mem::forget(lib);
            Ok(())
        }
        Err(e) => Err(e.to_string()),
    }
}

/// The names of `names` that `lib` does not export.
pub fn missing_symbols(lib: &libloading::Library, names: &[&str]) -> Vec<String> {
    names
        .iter()
        // SAFETY: only the symbol's presence is checked; it is never called through this.
        .filter(|n| unsafe { lib.get::<*const ()>(n.as_bytes()) }.is_err())
        .map(|n| n.to_string())
        .collect()
}
