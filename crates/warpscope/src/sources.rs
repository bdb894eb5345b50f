//! Which source files a PTX's `.file` lines may show. A `.file` path is text in the PTX, so
//! a PTX file can name any file on disk (a secrets file, `/dev/zero`): its text is read only
//! when it lies under a folder the user gave — the analyzed file's own folder, the working
//! folder (a PTX made on another machine names its sources by paths that end in the
//! project's), an `-I` folder, or a `--source-root` — and is a regular file within
//! `--max-input-bytes`.
//! Otherwise the path is shown without its lines.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::AnalyzeRequest;

static ROOTS: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// Sets the extra folders (`--source-root DIR`, repeatable) whose files `.file` lines may
/// show. Process-wide; empty by default.
pub fn set_source_roots(roots: Vec<PathBuf>) {
    if let Ok(mut r) = ROOTS.lock() {
        *r = roots;
    }
}

/// The folders `.file` paths of `req`'s PTX may be read from: the analyzed file's folder,
/// the working folder, the `-I` folders and the `--source-root` folders, canonical.
fn roots(req: &AnalyzeRequest) -> Vec<PathBuf> {
    let own = Path::new(&req.file).parent().map(|p| {
        if p.as_os_str().is_empty() {
            Path::new(".")
        } else {
            p
        }
    });
    let extra = ROOTS.lock().map(|r| r.clone()).unwrap_or_default();
    own.into_iter()
        .map(Path::to_path_buf)
        .chain(std::env::current_dir().ok())
        .chain(req.compile.include_dirs.iter().cloned())
        .chain(extra)
        .filter_map(|p| std::fs::canonicalize(p).ok())
        .collect()
}

/// The text of `path` (a `.file` of `req`'s PTX, as found on this machine) when the policy
/// above allows reading it, else of the first trailing part of it that names a file in an
/// allowed folder relative to the working folder (the same source in this checkout);
/// `None` otherwise or when it cannot be read.
pub(crate) fn read_source(req: &AnalyzeRequest, path: &Path) -> Option<String> {
    let roots = roots(req);
    let parts: Vec<_> = path.components().collect();
    let allowed = (0..parts.len().max(1))
        .map(|k| parts[k..].iter().collect::<PathBuf>())
        .filter(|q| q == path || q.is_relative())
        .filter_map(|q| std::fs::canonicalize(q).ok())
        .find(|c| roots.iter().any(|r| c.starts_with(r)))?;
    let bytes = warpscope_toolkit::read_input(&allowed, "PTX .file").ok()?;
    String::from_utf8(bytes).ok()
}
