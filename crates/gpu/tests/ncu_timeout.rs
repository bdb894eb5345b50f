//! Nsight Compute runs under the tool timeout (issue 21): a `ncu` that never returns (a fake
//! script on PATH, with a child of its own standing in for the profiled program) is stopped
//! after `--tool-timeout` with its whole process group, and the error names the limit. No GPU
//! is needed: the fake ncu never starts one. One test in this file: it sets PATH.

#![cfg(unix)]

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::{Duration, Instant};
use warpscope_gpu::ncu;

/// Dead, or a zombie waiting for its reaper.
fn gone(pid: i32) -> bool {
    for _ in 0..250 {
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

#[test]
fn a_hanging_ncu_on_path_is_stopped_at_the_tool_timeout_with_its_children() {
    let dir = std::env::temp_dir().join(format!("warpscope-fake-ncu-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let pidfile = dir.join("child.pid");
    let script = dir.join("ncu");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\nsleep 300 &\necho $! > '{}'\nwait\n",
            pidfile.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = std::env::var_os("PATH").unwrap_or_default();
    let mut dirs = vec![dir.clone()];
    dirs.extend(std::env::split_paths(&path));
    std::env::set_var("PATH", std::env::join_paths(dirs).unwrap());

    let found = ncu::find(None).unwrap();
    assert_eq!(found, script, "the fake ncu is the one on PATH");
    warpscope_toolkit::set_tool_timeout(Duration::from_millis(1500));
    let start = Instant::now();
    let e = ncu::run(
        &found,
        &["--csv".to_string()],
        Path::new("/bin/true"),
        &["x".to_string()],
    )
    .unwrap_err();
    let took = start.elapsed();
    warpscope_toolkit::set_tool_timeout(warpscope_toolkit::DEFAULT_TOOL_TIMEOUT);
    assert!(took < Duration::from_secs(60), "{took:?}");
    assert!(took >= Duration::from_millis(1500), "{took:?}");
    assert_eq!(
        e.to_string(),
        format!(
            "Nsight Compute: ncu did not finish within 1.5 s (--tool-timeout); it was stopped: {} --csv /bin/true x",
            script.display()
        )
    );
    let pid: i32 = std::fs::read_to_string(&pidfile)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(gone(pid), "the fake ncu's child {pid} still runs");
    let _ = std::fs::remove_dir_all(&dir);
}
