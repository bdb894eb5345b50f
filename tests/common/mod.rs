//! What the command-line tests share: running the built binary.

use std::process::Command;

/// Runs `warpscope ARGS` from the repository root: (success, stdout, stderr). Fails the test
/// when the binary panicked: bad input must end in a message, never a panic.
pub fn warpscope(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_warpscope"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(!stderr.contains("panicked"), "panic for {args:?}: {stderr}");
    (out.status.success(), stdout, stderr)
}
