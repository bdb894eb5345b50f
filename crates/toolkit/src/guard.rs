//! External tools under control: every run of nvcc, ptxas, nvdisasm (and the Python that
//! names its site-packages) goes through [`run_tool`], which bounds its time
//! ([`set_tool_timeout`], a hang guard only) and the bytes it prints
//! ([`set_max_output_bytes`]), and runs it in its own process group so that the group is
//! killed whole (nvcc's cicc and ptxas too) on a timeout, on too much output, and when
//! warpscope itself is stopped ([`stop_all`], which the command calls on SIGINT/SIGTERM).

use std::io::Read as _;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use wait_timeout::ChildExt as _;

use crate::ToolkitError;

/// The default of [`tool_timeout`]: 600 s, far above the seconds a kernel of the test corpus
/// takes to compile, so it only stops a tool that hangs (results never depend on it).
pub const DEFAULT_TOOL_TIMEOUT: Duration = Duration::from_secs(600);

/// The default of [`max_output_bytes`]: 256 MiB, what one tool may print on standard output
/// and standard error together (the largest SASS listing in this machine's cache, of the
/// test corpus, is 166 KB; `tests/data/h100/compiled/*.sass` are at most 45 KB).
pub const DEFAULT_MAX_OUTPUT_BYTES: u64 = 256 << 20;

static TIMEOUT_MS: AtomicU64 = AtomicU64::new(600_000);
static MAX_OUTPUT: AtomicU64 = AtomicU64::new(DEFAULT_MAX_OUTPUT_BYTES);

/// Sets how long one run of an external tool may take before its process group is killed
/// and [`ToolkitError::Timeout`] returned (`--tool-timeout SECONDS`). Process-wide.
pub fn set_tool_timeout(limit: Duration) {
    TIMEOUT_MS.store(limit.as_millis().max(1) as u64, Ordering::Relaxed);
}

/// How long one run of an external tool may take ([`DEFAULT_TOOL_TIMEOUT`] unless set).
pub fn tool_timeout() -> Duration {
    Duration::from_millis(TIMEOUT_MS.load(Ordering::Relaxed))
}

/// Sets how many bytes one tool may print (standard output and error together) before its
/// process group is killed and [`ToolkitError::OutputTooLarge`] returned. Process-wide.
pub fn set_max_output_bytes(limit: u64) {
    MAX_OUTPUT.store(limit.max(1), Ordering::Relaxed);
}

/// The bound on one tool's output ([`DEFAULT_MAX_OUTPUT_BYTES`] unless set).
pub fn max_output_bytes() -> u64 {
    MAX_OUTPUT.load(Ordering::Relaxed)
}

/// Process groups of the tools running now, and scratch paths to remove if warpscope is
/// stopped before their owners drop them.
static RUNNING: Mutex<Vec<u32>> = Mutex::new(Vec::new());
static SCRATCH: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());
/// Set by [`stop_all`]: the process is about to exit.
static STOPPING: AtomicBool = AtomicBool::new(false);

/// After [`stop_all`], a tool it killed must not be reported as a failed compile before
/// the handler exits: the thread that ran it waits here for the exit.
fn wait_if_stopping() {
    while STOPPING.load(Ordering::SeqCst) {
        std::thread::park();
    }
}

/// Kills the process group of every tool running now and removes the registered scratch
/// files and folders (a half-written PTX among them); returns how many tools were running.
/// For a SIGINT/SIGTERM handler: the caller exits afterwards.
pub fn stop_all() -> usize {
    STOPPING.store(true, Ordering::SeqCst);
    let groups: Vec<u32> = RUNNING.lock().map(|g| g.clone()).unwrap_or_default();
    for &g in &groups {
        kill_group(g);
    }
    let paths: Vec<PathBuf> = SCRATCH.lock().map(|p| p.clone()).unwrap_or_default();
    for p in paths {
        if p.is_dir() {
            let _ = std::fs::remove_dir_all(&p);
        } else {
            let _ = std::fs::remove_file(&p);
        }
    }
    groups.len()
}

/// Keeps `path` on the list [`stop_all`] removes while the guard lives.
pub(crate) struct ScratchGuard(PathBuf);

impl ScratchGuard {
    pub(crate) fn new(path: PathBuf) -> ScratchGuard {
        if let Ok(mut v) = SCRATCH.lock() {
            v.push(path.clone());
        }
        ScratchGuard(path)
    }
}

impl Drop for ScratchGuard {
    fn drop(&mut self) {
        if let Ok(mut v) = SCRATCH.lock() {
            if let Some(i) = v.iter().position(|p| *p == self.0) {
                v.swap_remove(i);
            }
        }
    }
}

/// A running tool's process group on [`RUNNING`]; killed (stragglers included) and taken
/// off when dropped.
struct Group(u32);

impl Group {
    fn new(pid: u32) -> Group {
        if let Ok(mut v) = RUNNING.lock() {
            v.push(pid);
        }
        Group(pid)
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        // Children the tool left behind (or all of it, on an early return) go with it.
        kill_group(self.0);
        if let Ok(mut v) = RUNNING.lock() {
            if let Some(i) = v.iter().position(|&p| p == self.0) {
                v.swap_remove(i);
            }
        }
    }
}

#[cfg(unix)]
fn kill_group(pgid: u32) {
    // SAFETY: killpg only sends a signal; a group that is gone answers ESRCH.
    unsafe {
        libc::killpg(pgid as libc::pid_t, libc::SIGKILL);
    }
}

#[cfg(not(unix))]
fn kill_group(_pgid: u32) {}

/// Runs `cmd` (the tool `tool`, shell-quoted as `command` for messages) with no standard
/// input, in its own process group, and collects its output. Every external program
/// warpscope runs goes through it: nvcc, ptxas, nvdisasm here, Nsight Compute's `ncu` in
/// `warpscope verify` and `calibrate` (warpscope-gpu).
///
/// Errors: [`ToolkitError::Spawn`] if it does not start; [`ToolkitError::Timeout`] after
/// [`tool_timeout`]; [`ToolkitError::OutputTooLarge`] past [`max_output_bytes`]. In the
/// last two cases the whole process group is killed first. A tool that exits with a failure
/// is not an error here: the caller reads the status.
pub fn run_tool(cmd: &mut Command, tool: &str, command: &str) -> Result<Output, ToolkitError> {
    run_tool_within(cmd, tool, command, tool_timeout())
}

/// [`run_tool`] with the time limit `limit`.
pub(crate) fn run_tool_within(
    cmd: &mut Command,
    tool: &str,
    command: &str,
    limit: Duration,
) -> Result<Output, ToolkitError> {
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(cmd, 0);
    let mut child = cmd.spawn().map_err(|source| ToolkitError::Spawn {
        command: command.to_string(),
        source,
    })?;
    let group = Group::new(child.id());
    let max = max_output_bytes();
    let total = Arc::new(AtomicU64::new(0));
    let over = Arc::new(AtomicBool::new(false));
    let pgid = child.id();
    let reader = |pipe: Option<Box<dyn std::io::Read + Send>>| {
        let (total, over) = (total.clone(), over.clone());
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            let Some(mut p) = pipe else { return buf };
            let mut chunk = [0u8; 64 * 1024];
            loop {
                match p.read(&mut chunk) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => {
                        if total.fetch_add(n as u64, Ordering::Relaxed) + n as u64 > max {
                            over.store(true, Ordering::Relaxed);
                            kill_group(pgid);
                            break;
                        }
                        buf.extend_from_slice(&chunk[..n]);
                    }
                }
            }
            buf
        })
    };
    let out = reader(child.stdout.take().map(|p| Box::new(p) as _));
    let err = reader(child.stderr.take().map(|p| Box::new(p) as _));
    let status = match child.wait_timeout(limit) {
        Ok(Some(s)) => {
            wait_if_stopping();
            s
        }
        Ok(None) => {
            drop(group);
            let _ = child.wait();
            let _ = (out.join(), err.join());
            return Err(ToolkitError::Timeout {
                tool: tool.to_string(),
                command: command.to_string(),
                seconds: limit.as_secs_f64(),
            });
        }
        Err(source) => {
            drop(group);
            let _ = child.wait();
            return Err(ToolkitError::Spawn {
                command: command.to_string(),
                source,
            });
        }
    };
    // A grandchild still holding the pipes open would keep the readers waiting.
    drop(group);
    let stdout = out.join().unwrap_or_default();
    let stderr = err.join().unwrap_or_default();
    if over.load(Ordering::Relaxed) {
        return Err(ToolkitError::OutputTooLarge {
            tool: tool.to_string(),
            command: command.to_string(),
            limit: max,
        });
    }
    Ok(Output {
        status,
        stdout,
        stderr,
    })
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn a_tool_that_hangs_is_killed_with_its_children() {
        let dir = tempfile::tempdir().unwrap();
        let pidfile = dir.path().join("pid");
        let mut cmd = Command::new("sh");
        cmd.arg("-c")
            .arg(format!("sleep 300 & echo $! > {}; wait", pidfile.display()));
        let start = std::time::Instant::now();
        let e =
            run_tool_within(&mut cmd, "fake", "sh -c …", Duration::from_millis(500)).unwrap_err();
        assert!(start.elapsed() < Duration::from_secs(30));
        assert_eq!(
            e.to_string(),
            "fake did not finish within 0.5 s (--tool-timeout); it was stopped: sh -c …"
        );
        let pid: i32 = std::fs::read_to_string(&pidfile)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        assert!(gone(pid), "sleep {pid} still runs");
    }

    #[test]
    fn output_past_the_bound_stops_the_tool() {
        set_max_output_bytes(1 << 20);
        let mut cmd = Command::new("sh");
        cmd.arg("-c").arg("yes warpscope");
        let e = run_tool_within(&mut cmd, "chatty", "yes", Duration::from_secs(60)).unwrap_err();
        set_max_output_bytes(DEFAULT_MAX_OUTPUT_BYTES);
        assert!(
            matches!(e, ToolkitError::OutputTooLarge { limit: 1048576, .. }),
            "{e}"
        );
    }

    /// Dead or a zombie waiting for its reaper.
    pub(crate) fn gone(pid: i32) -> bool {
        for _ in 0..100 {
            match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
                Err(_) => return true,
                Ok(s)
                    if s.rsplit(')')
                        .next()
                        .is_some_and(|r| r.trim_start().starts_with('Z')) =>
                {
                    return true
                }
                Ok(_) => std::thread::sleep(Duration::from_millis(20)),
            }
        }
        false
    }
}
