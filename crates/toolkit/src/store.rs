//! Files warpscope writes and reads back, and files the user gives: private cache folders
//! (created 0700, never a symbolic link, never another user's), cache entries sealed with a
//! SHA-256 of their content and moved into place by a rename, and input files read only
//! when they are regular files within [`max_input_bytes`].

use std::io::{Read as _, Write as _};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use sha2::{Digest, Sha256};

/// The default of [`max_input_bytes`]: 256 MiB, three orders of magnitude above any kernel,
/// PTX or launch file of the test corpus (the largest PTX, `tests/data/h100/wgmma/
/// wgmma_smem.ptx`, is 216 KB); `.npy` data of a real launch may be larger: raise it.
pub const DEFAULT_MAX_INPUT_BYTES: u64 = 256 << 20;

static MAX_INPUT: AtomicU64 = AtomicU64::new(DEFAULT_MAX_INPUT_BYTES);

/// Sets the largest input file read (`--max-input-bytes`). Process-wide.
pub fn set_max_input_bytes(limit: u64) {
    MAX_INPUT.store(limit.max(1), Ordering::Relaxed);
}

/// The largest input file read ([`DEFAULT_MAX_INPUT_BYTES`] unless set).
pub fn max_input_bytes() -> u64 {
    MAX_INPUT.load(Ordering::Relaxed)
}

/// Checks that `path` (named to the user as `what`, e.g. `"--init file"`) is a regular file
/// of at most [`max_input_bytes`], by its metadata, before anything opens it: a FIFO would
/// block in `open`, a device (`/dev/zero`) never ends.
///
/// Errors: one line naming `what`, the path, and the kind of file or its size and the
/// limit, with what to do.
pub fn check_input(path: &Path, what: &str) -> Result<u64, String> {
    let meta = std::fs::metadata(path)
        .map_err(|e| format!("cannot read {what} {}: {e}", path.display()))?;
    let ft = meta.file_type();
    if !ft.is_file() {
        return Err(format!(
            "{what} {} is {}, not a regular file: give a file (warpscope reads inputs whole and never from a pipe or device)",
            path.display(),
            kind_of(&ft)
        ));
    }
    let max = max_input_bytes();
    if meta.len() > max {
        return Err(format!(
            "{what} {} is {} bytes, over the input limit of {max} bytes: raise it with --max-input-bytes",
            path.display(),
            meta.len()
        ));
    }
    Ok(meta.len())
}

fn kind_of(ft: &std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt as _;
        if ft.is_fifo() {
            return "a FIFO (named pipe)";
        }
        if ft.is_char_device() {
            return "a character device";
        }
        if ft.is_block_device() {
            return "a block device";
        }
        if ft.is_socket() {
            return "a socket";
        }
    }
    if ft.is_dir() {
        "a folder"
    } else {
        "not a regular file"
    }
}

/// Reads the input file `path` whole after [`check_input`]; opened non-blocking so that a
/// file swapped for a FIFO after the check still cannot block, and read at most to the
/// limit.
pub fn read_input(path: &Path, what: &str) -> Result<Vec<u8>, String> {
    check_input(path, what)?;
    let mut opts = std::fs::OpenOptions::new();
    opts.read(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(&mut opts, libc::O_NONBLOCK);
    let f = opts
        .open(path)
        .map_err(|e| format!("cannot read {what} {}: {e}", path.display()))?;
    let meta = f
        .metadata()
        .map_err(|e| format!("cannot read {what} {}: {e}", path.display()))?;
    if !meta.is_file() {
        return Err(format!(
            "{what} {} is {}, not a regular file",
            path.display(),
            kind_of(&meta.file_type())
        ));
    }
    let max = max_input_bytes();
    let mut bytes = Vec::new();
    f.take(max + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read {what} {}: {e}", path.display()))?;
    if bytes.len() as u64 > max {
        return Err(format!(
            "{what} {} grew past the input limit of {max} bytes while read: raise it with --max-input-bytes",
            path.display()
        ));
    }
    Ok(bytes)
}

/// Creates `dir` (and missing parents, all 0700) and makes sure it is private: a real
/// folder, not a symbolic link, owned by this user and writable by no one else (one of ours
/// that others may write to is set to 0700). Everything warpscope keeps lives in such a
/// folder, so a name planted by another user can never redirect a write.
///
/// Errors: why the folder is not used (a link, another user's, not creatable).
pub fn private_dir(dir: &Path) -> Result<(), String> {
    let mut b = std::fs::DirBuilder::new();
    b.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut b, 0o700);
    b.create(dir)
        .map_err(|e| format!("cannot create folder {}: {e}", dir.display()))?;
    let meta = std::fs::symlink_metadata(dir)
        .map_err(|e| format!("cannot read folder {}: {e}", dir.display()))?;
    if meta.file_type().is_symlink() {
        return Err(format!(
            "{} is a symbolic link, not followed (remove it, or set WARPSCOPE_CACHE_DIR to a folder of yours)",
            dir.display()
        ));
    }
    if !meta.is_dir() {
        return Err(format!("{} is not a folder", dir.display()));
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::{MetadataExt as _, PermissionsExt as _};
        // SAFETY: geteuid has no preconditions.
        let me = unsafe { libc::geteuid() };
        if meta.uid() != me {
            return Err(format!(
                "{} belongs to another user (uid {}; set WARPSCOPE_CACHE_DIR to a folder of yours)",
                dir.display(),
                meta.uid()
            ));
        }
        if meta.mode() & 0o077 != 0 {
            std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
                .map_err(|e| format!("cannot make {} private: {e}", dir.display()))?;
        }
    }
    Ok(())
}

/// The first line of a sealed entry: `FORMAT sha256=HEX bytes=N`.
const SEAL: &str = "warpscope-entry-1";

/// `payload` with a first line holding its SHA-256 and length, for [`unseal`].
pub(crate) fn seal(payload: &str) -> String {
    format!(
        "{SEAL} sha256={} bytes={}\n{payload}",
        hex(&Sha256::digest(payload.as_bytes())),
        payload.len()
    )
}

/// The payload of a sealed entry, or why it is not one (truncated, changed, no seal).
pub(crate) fn unseal(text: &str) -> Result<&str, String> {
    let (head, payload) = text
        .split_once('\n')
        .ok_or_else(|| "no header line".to_string())?;
    let mut words = head.split(' ');
    if words.next() != Some(SEAL) {
        return Err("no warpscope header".into());
    }
    let hash = words.next().and_then(|w| w.strip_prefix("sha256="));
    let len = words
        .next()
        .and_then(|w| w.strip_prefix("bytes="))
        .and_then(|n| n.parse::<usize>().ok());
    let (Some(hash), Some(len)) = (hash, len) else {
        return Err("a damaged header".into());
    };
    if payload.len() != len {
        return Err(format!("{} bytes where {len} were written", payload.len()));
    }
    if hex(&Sha256::digest(payload.as_bytes())) != hash {
        return Err("its content does not match its SHA-256".into());
    }
    Ok(payload)
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// What reading a cache entry found.
pub(crate) enum Entry {
    /// No entry (or one that cannot be opened): build it.
    Missing,
    /// A verified payload.
    Good(String),
    /// An entry that failed verification: the note to show; it is rebuilt.
    Corrupt(String),
}

/// Reads the sealed entry `path`: not through a symbolic link, at most [`max_input_bytes`].
pub(crate) fn read_entry(path: &Path) -> Entry {
    let mut opts = std::fs::OpenOptions::new();
    opts.read(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(&mut opts, libc::O_NOFOLLOW | libc::O_NONBLOCK);
    let Ok(f) = opts.open(path) else {
        return Entry::Missing;
    };
    if !f.metadata().is_ok_and(|m| m.is_file()) {
        return Entry::Corrupt(note(path, "not a regular file"));
    }
    let mut bytes = Vec::new();
    if f.take(max_input_bytes()).read_to_end(&mut bytes).is_err() {
        return Entry::Missing;
    }
    let Ok(text) = String::from_utf8(bytes) else {
        return Entry::Corrupt(note(path, "not UTF-8 text"));
    };
    match unseal(&text) {
        Ok(p) => Entry::Good(p.to_string()),
        Err(why) => Entry::Corrupt(note(path, &why)),
    }
}

fn note(path: &Path, why: &str) -> String {
    format!(
        "cache entry {} was corrupt ({why}): rebuilt",
        path.display()
    )
}

/// Writes `payload` sealed as `dir/name`: to a fresh, unpredictable name in `dir` (created
/// exclusively, 0600), then renamed into place, so a reader never sees half an entry and a
/// planted link at `name` is replaced, not followed. `dir` must be [`private_dir`].
pub(crate) fn write_entry(dir: &Path, name: &str, payload: &str) -> Result<PathBuf, String> {
    let dest = dir.join(name);
    let fail = |e: std::io::Error| format!("cannot write {}: {e}", dest.display());
    let mut tmp = tempfile::Builder::new()
        .prefix(".tmp-")
        .tempfile_in(dir)
        .map_err(fail)?;
    let _guard = crate::guard::ScratchGuard::new(tmp.path().to_path_buf());
    tmp.write_all(seal(payload).as_bytes()).map_err(fail)?;
    tmp.persist(&dest).map_err(|e| fail(e.error))?;
    Ok(dest)
}

/// Writes `text` (not sealed: a file for a tool to read) as `dir/name` the same way as
/// [`write_entry`].
pub(crate) fn write_plain(dir: &Path, name: &str, text: &str) -> Result<PathBuf, String> {
    let dest = dir.join(name);
    let fail = |e: std::io::Error| format!("cannot write {}: {e}", dest.display());
    let mut tmp = tempfile::Builder::new()
        .prefix(".tmp-")
        .tempfile_in(dir)
        .map_err(fail)?;
    tmp.write_all(text.as_bytes()).map_err(fail)?;
    tmp.persist(&dest).map_err(|e| fail(e.error))?;
    Ok(dest)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sealed_entries_detect_truncation_and_garbage() {
        let s = seal(".target sm_90\nld.global.f32 %f1, [%rd1];\n");
        assert_eq!(
            unseal(&s),
            Ok(".target sm_90\nld.global.f32 %f1, [%rd1];\n")
        );
        assert_eq!(
            unseal(&s[..s.len() - 10]),
            Err("31 bytes where 41 were written".to_string())
        );
        let flipped = s.replace("f32", "f64");
        assert_eq!(
            unseal(&flipped),
            Err("its content does not match its SHA-256".to_string())
        );
        assert_eq!(unseal("garbage"), Err("no header line".to_string()));
    }

    #[cfg(unix)]
    #[test]
    fn fifos_devices_and_large_files_are_refused_before_open() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("p");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid C string; mkfifo creates a node.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let e = read_input(&fifo, "launch file").unwrap_err();
        assert!(
            e.contains("is a FIFO (named pipe), not a regular file"),
            "{e}"
        );
        let e = read_input(Path::new("/dev/zero"), "PTX .file").unwrap_err();
        assert!(
            e.starts_with("PTX .file /dev/zero is a character device"),
            "{e}"
        );
        let big = dir.path().join("big");
        std::fs::write(&big, vec![b'x'; 2000]).unwrap();
        assert_eq!(read_input(&big, "x").unwrap().len(), 2000);
    }

    #[cfg(unix)]
    #[test]
    fn a_linked_or_open_folder_is_not_private() {
        use std::os::unix::fs::PermissionsExt as _;
        let t = tempfile::tempdir().unwrap();
        let victim = t.path().join("victim");
        std::fs::create_dir(&victim).unwrap();
        let link = t.path().join("link");
        std::os::unix::fs::symlink(&victim, &link).unwrap();
        let e = private_dir(&link).unwrap_err();
        assert!(e.ends_with("is a symbolic link, not followed (remove it, or set WARPSCOPE_CACHE_DIR to a folder of yours)"), "{e}");
        let open = t.path().join("open");
        std::fs::create_dir(&open).unwrap();
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
        private_dir(&open).unwrap();
        let mode = std::fs::metadata(&open).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700);
        // A link planted where an entry goes is replaced, never written through.
        let secret = victim.join("secret");
        std::fs::write(&secret, "keep").unwrap();
        std::os::unix::fs::symlink(&secret, open.join("k.ptx")).unwrap();
        assert!(matches!(read_entry(&open.join("k.ptx")), Entry::Missing));
        write_entry(&open, "k.ptx", "payload").unwrap();
        assert_eq!(std::fs::read_to_string(&secret).unwrap(), "keep");
        assert!(matches!(read_entry(&open.join("k.ptx")), Entry::Good(p) if p == "payload"));
    }
}
