//! `analyze --watch`: the analysis again after the file changes, and an error shown without
//! ending the watch.

mod common;
use common::temp;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::time::Duration;

const KERNEL: &str = "__global__ void k(float* a) { a[threadIdx.x * STRIDE] = 1.0f; }\n";

/// The next stdout line containing `needle`, waiting up to a minute (a loaded machine).
fn wait_for(lines: &Receiver<String>, needle: &str) -> String {
    loop {
        match lines.recv_timeout(Duration::from_secs(60)) {
            Ok(l) if l.contains(needle) => return l,
            Ok(_) => {}
            Err(e) => panic!("no line with '{needle}': {e}"),
        }
    }
}

#[test]
fn watch_analyzes_again_after_a_change() {
    let file = temp("k.cu", &KERNEL.replace("STRIDE", "1"));
    let mut child = Command::new(env!("CARGO_BIN_EXE_warpscope"))
        .args([
            "analyze",
            &file,
            "--kernel",
            "k",
            "--grid",
            "1",
            "--block",
            "32",
            "--cc",
            "9.0",
            "--frontend",
            "source",
            "--watch",
            "-q",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let (tx, rx) = channel();
    let out = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        for l in BufReader::new(out).lines().map_while(Result::ok) {
            if tx.send(l).is_err() {
                break;
            }
        }
    });
    // Stride 1: one request, 4 sectors.
    let first = wait_for(&rx, "store");
    assert!(
        first.contains("a[threadIdx.x * 1]") && first.contains("┆         4 ┆"),
        "{first}"
    );
    // Let the watcher settle, then write stride 8: one request, 32 sectors.
    std::thread::sleep(Duration::from_millis(500));
    std::fs::write(&file, KERNEL.replace("STRIDE", "8")).unwrap();
    wait_for(&rx, "changed: analyzing again");
    let second = wait_for(&rx, "store");
    child.kill().unwrap();
    let _ = child.wait();
    assert!(
        second.contains("a[threadIdx.x * 8]")
            && second.contains("┆        32 ┆")
            && second.contains("12.5%"),
        "{second}"
    );
}
