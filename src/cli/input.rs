//! The user's files: every input the command reads is a regular file within
//! `--max-input-bytes` (a FIFO or device is refused before it is opened), and no `-o` file
//! is one of the inputs.

use anyhow::{anyhow, bail, Result};
use std::path::Path;

/// The bytes of the input `path`, named to the user as `what` (`"launch file"`).
///
/// Errors: not a regular file (FIFO, device, folder), over `--max-input-bytes`, unreadable;
/// each naming `what`, the path and the limit.
pub fn read_bytes(path: impl AsRef<Path>, what: &str) -> Result<Vec<u8>> {
    warpscope_toolkit::read_input(path.as_ref(), what).map_err(|e| anyhow!("{e}"))
}

/// [`read_bytes`] as UTF-8 text.
pub fn read_text(path: impl AsRef<Path>, what: &str) -> Result<String> {
    let path = path.as_ref();
    String::from_utf8(read_bytes(path, what)?).map_err(|e| {
        anyhow!(
            "{what} {} is not UTF-8 text (invalid byte at offset {})",
            path.display(),
            e.utf8_error().valid_up_to()
        )
    })
}

/// Checks that `path` is a regular file within the limit, without reading it (a file a
/// library reads later: `--init` data).
pub fn check(path: impl AsRef<Path>, what: &str) -> Result<()> {
    warpscope_toolkit::check_input(path.as_ref(), what)
        .map(|_| ())
        .map_err(|e| anyhow!("{e}"))
}

/// Refuses an output `output` (the `flag` that named it) that is one of `inputs`, compared
/// as canonical paths (through links and `..`), so that a command never writes over what
/// it reads.
pub fn output_not_input<'a>(
    flag: &str,
    output: Option<&str>,
    inputs: impl IntoIterator<Item = &'a Path>,
) -> Result<()> {
    let Some(out) = output else {
        return Ok(());
    };
    // An output that does not exist yet is no input.
    let Ok(o) = std::fs::canonicalize(out) else {
        return Ok(());
    };
    for i in inputs {
        if std::fs::canonicalize(i).is_ok_and(|c| c == o) {
            bail!(
                "{flag} {out} is the input {}: it would be overwritten; write the output to another file",
                i.display()
            );
        }
    }
    Ok(())
}
