//! What the command-line tests share: running the built binary, its JSON output, scratch
//! files. (Each test binary uses a part of it.)
#![allow(dead_code)]

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
    no_false_findings(args, &stderr);
    (out.status.success(), stdout, stderr)
}

/// The checks that find bugs in a kernel (racecheck, initcheck) find none in the
/// repository's correct kernels: any there is a false positive. The kernels made to have
/// one live in tests/kernels/findings/. Measurement kernels that read shared memory they
/// never wrote, by design (initcheck is right there): examples/shared_banks.cu with
/// `fill=0` (a bank-conflict benchmark), and the H100 kernel `stsm_x4`
/// (tests/kernels/compiled/ldmatrix.cu), which copies out its whole tile of which
/// `stmatrix` wrote 512 bytes.
fn no_false_findings(args: &[&str], stderr: &str) {
    let made_to_find = args
        .iter()
        .any(|a| a.contains("kernels/findings/") || a.contains("findings/check.toml"));
    let has = |s: &str| args.iter().any(|a| a.contains(s));
    let reads_unwritten_by_design =
        (has("shared_banks.cu") && has("fill=0")) || (has("ldmatrix") && has("stsm_x4"));
    if made_to_find || reads_unwritten_by_design {
        return;
    }
    let found: Vec<&str> = stderr
        .lines()
        .filter(|l| {
            l.starts_with("warning: ")
                && (l.contains(": racecheck: ") || l.contains(": initcheck: "))
        })
        .collect();
    assert!(
        found.is_empty(),
        "a racecheck/initcheck finding in a kernel of the repository that is correct (a false positive?) for {args:?}:\n{}",
        found.join("\n")
    );
}

/// `warpscope ARGS --format json`, parsed; fails the test when the command fails.
pub fn json(args: &[&str]) -> serde_json::Value {
    let mut a = args.to_vec();
    a.extend(["--format", "json"]);
    let (ok, out, err) = warpscope(&a);
    assert!(ok, "{args:?} failed: {err}");
    serde_json::from_str(&out).unwrap()
}

/// Writes `text` to a fresh scratch folder as `name` and returns its path.
pub fn temp(name: &str, text: &str) -> String {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("warpscope-test-{}-{n}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join(name);
    std::fs::write(&f, text).unwrap();
    f.to_string_lossy().to_string()
}

/// Whether a CUDA compiler is at hand for the compiled path; says on standard error that the
/// calling test is skipped when not (CI installs one from PyPI through scripts/test.sh).
pub fn compiler() -> bool {
    let found = warpscope_toolkit::find(None).is_ok();
    if !found {
        eprintln!("skipped: no CUDA compiler (scripts/test.sh installs one from PyPI)");
    }
    found
}

/// The front ends to run a test on: the source front end always, the compiled path (`ptx`)
/// when a CUDA compiler is at hand (else [`compiler`] says the compiled part is skipped).
pub fn frontends() -> Vec<&'static str> {
    let mut f = vec!["source"];
    if compiler() {
        f.push("ptx");
    }
    f
}

/// The `findings` array of an `analyze --format json` result (empty when it has none).
pub fn findings(v: &serde_json::Value) -> Vec<serde_json::Value> {
    v.get("findings")
        .map(|f| f.as_array().cloned().unwrap_or_default())
        .unwrap_or_default()
}
