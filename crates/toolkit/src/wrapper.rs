//! Generated source files for nvcc (the wrapper that instantiates a template kernel): kept
//! under the user's private cache folder at a path fixed by their text, so that the PTX
//! cache keyed by the path finds them again; in a private temporary folder (removed when
//! dropped) when there is no usable cache folder. Never under a predictable name in a
//! shared folder such as `/tmp`.

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

/// A generated file, and the temporary folder holding it when it is not in the cache
/// (removed when this is dropped).
#[derive(Debug)]
pub struct WrapperFile {
    path: PathBuf,
    _temp: Option<tempfile::TempDir>,
    /// Why the cache folder was not used, when it was not (a `note:` for the user).
    pub note: Option<String>,
}

impl WrapperFile {
    /// The file's path, for nvcc.
    pub fn as_path(&self) -> &Path {
        &self.path
    }
}

/// Writes `text` as `NAME` (e.g. `scale-instantiate.cu`) in
/// `CACHE/wrap/SHA256-OF-TEXT/` ([`crate::default_cache_dir`]'s sibling `wrap`, created
/// private: 0700, not a link, this user's), written aside and renamed into place so a
/// compile reading it in parallel never sees half of it. Falls back to a fresh private
/// temporary folder, with [`WrapperFile::note`] saying why.
///
/// Errors: the file cannot be written in either place (the operating system's message).
pub fn wrapper_file(name: &str, text: &str) -> Result<WrapperFile, String> {
    wrapper_file_in(
        crate::default_cache_dir()
            .and_then(|d| Some(d.parent()?.join("wrap")))
            .as_deref(),
        name,
        text,
    )
}

pub(crate) fn wrapper_file_in(
    cache: Option<&Path>,
    name: &str,
    text: &str,
) -> Result<WrapperFile, String> {
    let mut note = None;
    if let Some(root) = cache {
        let hash: String = Sha256::digest(text.as_bytes())[..8]
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        let dir = root.join(hash);
        let made = root
            .parent()
            .map_or(Ok(()), crate::store::private_dir)
            .and_then(|()| crate::store::private_dir(root))
            .and_then(|()| crate::store::private_dir(&dir));
        match made.and_then(|()| crate::store::write_plain(&dir, name, text)) {
            Ok(path) => {
                return Ok(WrapperFile {
                    path,
                    _temp: None,
                    note: None,
                })
            }
            Err(e) => {
                note = Some(format!(
                    "the generated {name} was written to a private temporary folder instead of the cache: {e}"
                ))
            }
        }
    }
    let temp = tempfile::Builder::new()
        .prefix("warpscope-")
        .tempdir()
        .map_err(|e| format!("cannot create a temporary folder: {e}"))?;
    let path = crate::store::write_plain(temp.path(), name, text)?;
    Ok(WrapperFile {
        path,
        _temp: Some(temp),
        note,
    })
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn a_planted_link_in_the_cache_is_not_written_through() {
        let t = tempfile::tempdir().unwrap();
        let victim = t.path().join("victim");
        std::fs::create_dir(&victim).unwrap();
        let cache = t.path().join("cache");
        std::fs::create_dir(&cache).unwrap();
        std::os::unix::fs::symlink(&victim, cache.join("wrap")).unwrap();
        let w = wrapper_file_in(Some(&cache.join("wrap")), "k-instantiate.cu", "// x\n").unwrap();
        assert_eq!(std::fs::read_dir(&victim).unwrap().count(), 0);
        assert!(
            !w.as_path().starts_with(&cache),
            "{}",
            w.as_path().display()
        );
        assert!(w
            .note
            .as_deref()
            .unwrap()
            .contains("is a symbolic link, not followed"));
        let p = w.as_path().to_path_buf();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "// x\n");
        drop(w);
        assert!(!p.exists(), "the temporary folder is removed when dropped");
        // A usable cache: the same path for the same text, so the PTX cache hits.
        std::fs::remove_file(cache.join("wrap")).unwrap();
        let a = wrapper_file_in(Some(&cache.join("wrap")), "k-instantiate.cu", "// x\n").unwrap();
        let b = wrapper_file_in(Some(&cache.join("wrap")), "k-instantiate.cu", "// x\n").unwrap();
        assert_eq!(a.as_path(), b.as_path());
        assert!(a.as_path().starts_with(cache.join("wrap")));
        assert_eq!(a.note, None);
    }
}
