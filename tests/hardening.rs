//! Hostile and careless inputs end in a clean error or a note, never a hang, a write through
//! a planted link, or a silent wrong answer (issue 21): external tools under a timeout and
//! killed with their process group, FIFOs and devices refused, outputs never over inputs,
//! a launch file's program only with --allow-launch-file-tools, a PTX `.file` outside the
//! user's folders shown without its text, corrupt cache entries rebuilt, JSON results with
//! a missing field refused.
#![cfg(unix)]

mod common;
use common::compiler;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A fresh private folder for one test.
fn scratch() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

/// `warpscope ARGS` from the repository root with the cache in `cache`, killed (and the
/// test failed) if it runs past `limit`: (exit code, stdout, stderr).
fn run(args: &[&str], cache: &Path, limit: Duration) -> (i32, String, String) {
    let child = spawn(args, cache);
    finish(child, limit, args)
}

fn spawn(args: &[&str], cache: &Path) -> Child {
    command(args, cache).spawn().unwrap()
}

fn command(args: &[&str], cache: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_warpscope"));
    c.args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("WARPSCOPE_CACHE_DIR", cache)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    c
}

fn finish(mut child: Child, limit: Duration, args: &[&str]) -> (i32, String, String) {
    let start = Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            panic!("warpscope {args:?} still ran after {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(!stderr.contains("panicked"), "panic for {args:?}: {stderr}");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).to_string(),
        stderr,
    )
}

/// Dead, or a zombie waiting for its reaper.
fn gone(pid: i32) -> bool {
    for _ in 0..200 {
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

const KERNEL: &str = "__global__ void k(float* a) { a[threadIdx.x] = 1.0f; }\n";

/// An `nvcc` that answers the probe like nvcc 13.0 but never finishes a compile: it starts
/// `sleep 300` (pid written to `pid`) and waits for it.
fn hanging_nvcc(dir: &Path) -> (PathBuf, PathBuf) {
    let pid = dir.join("pid");
    let nvcc = dir.join("nvcc");
    std::fs::write(
        &nvcc,
        format!(
            "#!/bin/sh\ncase \"$1\" in\n--version) echo 'Cuda compilation tools, release 13.0, V13.0.88'; exit 0;;\n--list-gpu-arch) echo compute_90; exit 0;;\nesac\nsleep 300 &\necho $! > {}\nwait\n",
            pid.display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(&nvcc, std::fs::Permissions::from_mode(0o755)).unwrap();
    (nvcc, pid)
}

#[test]
fn a_compiler_that_hangs_is_stopped_at_the_tool_timeout_with_its_children() {
    let t = scratch();
    let (nvcc, pidfile) = hanging_nvcc(t.path());
    let cu = t.path().join("k.cu");
    std::fs::write(&cu, KERNEL).unwrap();
    let start = Instant::now();
    let (code, _, err) = run(
        &[
            "analyze",
            cu.to_str().unwrap(),
            "--kernel",
            "k",
            "--grid",
            "1",
            "--block",
            "32",
            "--frontend",
            "ptx",
            "--nvcc",
            nvcc.to_str().unwrap(),
            "--tool-timeout",
            "2",
        ],
        &t.path().join("cache"),
        Duration::from_secs(60),
    );
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("error: nvcc did not finish within 2 s (--tool-timeout); it was stopped: "),
        "{err}"
    );
    assert!(start.elapsed() >= Duration::from_secs(2));
    let pid: i32 = std::fs::read_to_string(&pidfile)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(gone(pid), "nvcc's child {pid} was left running");
    // nvcc's private scratch folder went with it.
    let left: Vec<_> = std::fs::read_dir(t.path().join("cache/ptx"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn sigterm_stops_the_compiler_and_leaves_no_scratch() {
    let t = scratch();
    let (nvcc, pidfile) = hanging_nvcc(t.path());
    let cu = t.path().join("k.cu");
    std::fs::write(&cu, KERNEL).unwrap();
    let args = [
        "analyze",
        cu.to_str().unwrap(),
        "--kernel",
        "k",
        "--grid",
        "1",
        "--block",
        "32",
        "--frontend",
        "ptx",
        "--nvcc",
        nvcc.to_str().unwrap(),
    ];
    let cache = t.path().join("cache");
    let child = spawn(&args, &cache);
    let start = Instant::now();
    while !pidfile.exists() {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "nvcc never started"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let sleeper: i32 = loop {
        if let Ok(p) = std::fs::read_to_string(&pidfile).unwrap().trim().parse() {
            break p;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let status = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let (code, _, err) = finish(child, Duration::from_secs(30), &args);
    assert_eq!(code, 130, "{err}");
    assert!(
        err.contains("interrupted; the running compiler tools were stopped"),
        "{err}"
    );
    assert!(gone(sleeper), "nvcc's child {sleeper} was left running");
    let left: Vec<_> = std::fs::read_dir(cache.join("ptx"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(left.is_empty(), "partial files left in the cache: {left:?}");
}

fn mkfifo(p: &Path) {
    assert!(Command::new("mkfifo").arg(p).status().unwrap().success());
}

/// A FIFO given as the kernel's file, a launch file, an `--init` data file or a JSON result
/// ends at once in an error naming it; nothing blocks in `open`.
#[test]
fn fifos_are_refused_without_blocking() {
    let t = scratch();
    let fifo = t.path().join("pipe");
    mkfifo(&fifo);
    let f = fifo.to_str().unwrap();
    let cache = t.path().join("cache");
    let limit = Duration::from_secs(60);
    let fifo_error = |what: &str| format!("{what} {f} is a FIFO (named pipe), not a regular file");
    let (code, _, err) = run(
        &[
            "analyze", f, "--kernel", "k", "--grid", "1", "--block", "32",
        ],
        &cache,
        limit,
    );
    assert_eq!(code, 1);
    assert!(err.contains(&fifo_error("file")), "{err}");
    let (code, _, err) = run(&["check", "--launches", f], &cache, limit);
    assert_eq!(code, 2);
    assert!(err.contains(&fifo_error("launch file")), "{err}");
    let (code, _, err) = run(&["launches", f], &cache, limit);
    assert_eq!(code, 1);
    assert!(err.contains(&fifo_error("file")), "{err}");
    let (code, _, err) = run(&["diff", f, "examples/warpscope.toml"], &cache, limit);
    assert_eq!(code, 2);
    assert!(err.contains(&fifo_error("JSON result")), "{err}");
    let cu = t.path().join("k.cu");
    std::fs::write(&cu, KERNEL).unwrap();
    let init = format!("a=file:{f}");
    let (code, _, err) = run(
        &[
            "analyze",
            cu.to_str().unwrap(),
            "--kernel",
            "k",
            "--grid",
            "1",
            "--block",
            "32",
            "--frontend",
            "source",
            "--init",
            &init,
        ],
        &cache,
        limit,
    );
    assert_eq!(code, 1);
    assert!(err.contains(&fifo_error("--init file")), "{err}");
    // A device is refused the same way.
    let (code, _, err) = run(
        &[
            "analyze",
            "/dev/zero",
            "--kernel",
            "k",
            "--grid",
            "1",
            "--block",
            "32",
        ],
        &cache,
        limit,
    );
    assert_eq!(code, 1);
    assert!(
        err.contains("file /dev/zero is a character device, not a regular file"),
        "{err}"
    );
}

#[test]
fn an_input_over_max_input_bytes_names_the_limit() {
    let t = scratch();
    let cu = t.path().join("k.cu");
    std::fs::write(&cu, KERNEL).unwrap();
    let (code, _, err) = run(
        &[
            "analyze",
            cu.to_str().unwrap(),
            "--kernel",
            "k",
            "--grid",
            "1",
            "--block",
            "32",
            "--max-input-bytes",
            "40",
        ],
        &t.path().join("cache"),
        Duration::from_secs(60),
    );
    assert_eq!(code, 1);
    assert!(
        err.contains(&format!(
            "file {} is 55 bytes, over the input limit of 40 bytes: raise it with --max-input-bytes",
            cu.display()
        )),
        "{err}"
    );
}

/// `-o` naming an input (here through another path to it) is refused and the input kept.
#[test]
fn an_output_over_an_input_is_refused() {
    let t = scratch();
    let cache = t.path().join("cache");
    let limit = Duration::from_secs(120);
    let cu = t.path().join("k.cu");
    std::fs::write(&cu, KERNEL).unwrap();
    let other = format!(
        "{}/../{}/k.cu",
        t.path().display(),
        t.path().file_name().unwrap().to_str().unwrap()
    );
    let (code, _, err) = run(
        &[
            "explain",
            cu.to_str().unwrap(),
            "--kernel",
            "k",
            "--grid",
            "1",
            "--block",
            "32",
            "--frontend",
            "source",
            "--line",
            "1",
            "-o",
            &other,
        ],
        &cache,
        limit,
    );
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains(&format!(
            "-o {other} is the input {}: it would be overwritten",
            cu.display()
        )),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(&cu).unwrap(), KERNEL);

    let json = t.path().join("a.json");
    std::fs::write(&json, "{}").unwrap();
    let j = json.to_str().unwrap();
    let (code, _, err) = run(&["diff", j, j, "-o", j], &cache, limit);
    assert_eq!(code, 2);
    assert!(err.contains("is the input"), "{err}");
    assert_eq!(std::fs::read_to_string(&json).unwrap(), "{}");

    let toml = t.path().join("w.toml");
    let launches = "[[launch]]\nname = \"a\"\nfile = \"k.cu\"\nkernel = \"k\"\ngrid = 1\nblock = 32\nfrontend = \"source\"\n[[launch.budget]]\nmax_sectors_per_request = 4\n";
    std::fs::write(&toml, launches).unwrap();
    let (code, _, err) = run(
        &[
            "check",
            "--launches",
            toml.to_str().unwrap(),
            "-o",
            cu.to_str().unwrap(),
        ],
        &cache,
        limit,
    );
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("is the input"), "{err}");
    assert_eq!(std::fs::read_to_string(&cu).unwrap(), KERNEL);
    // The same launch file checks fine with another output.
    let report = t.path().join("report.txt");
    let (code, _, err) = run(
        &[
            "check",
            "--launches",
            toml.to_str().unwrap(),
            "-o",
            report.to_str().unwrap(),
        ],
        &cache,
        limit,
    );
    assert_eq!(code, 0, "{err}");
}

#[test]
fn a_launch_files_nvcc_needs_allow_launch_file_tools() {
    let t = scratch();
    let toml = t.path().join("w.toml");
    std::fs::write(
        &toml,
        "[[launch]]\nname = \"a\"\nfile = \"k.cu\"\nkernel = \"k\"\ngrid = 1\nblock = 32\nnvcc = \"./evil.sh\"\n",
    )
    .unwrap();
    std::fs::write(t.path().join("k.cu"), KERNEL).unwrap();
    let marker = t.path().join("ran");
    std::fs::write(
        t.path().join("evil.sh"),
        format!("#!/bin/sh\ntouch {}\n", marker.display()),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(
        t.path().join("evil.sh"),
        std::fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    let (code, _, err) = run(
        &["analyze", "--launches", toml.to_str().unwrap()],
        &t.path().join("cache"),
        Duration::from_secs(60),
    );
    assert_eq!(code, 1);
    assert!(
        err.contains(":1:1: launch 'a': nvcc = \"./evil.sh\" names a program for warpscope to run; a launch file's tools run only with --allow-launch-file-tools"),
        "{err}"
    );
    assert!(!marker.exists(), "the launch file's program ran");
    // Allowed: it runs (and, not being nvcc, is refused as a compiler).
    let (code, _, err) = run(
        &[
            "analyze",
            "--launches",
            toml.to_str().unwrap(),
            "--allow-launch-file-tools",
        ],
        &t.path().join("cache"),
        Duration::from_secs(60),
    );
    assert_eq!(code, 1);
    assert!(err.contains("does not run as a CUDA compiler"), "{err}");
    assert!(marker.exists());
}

/// A PTX whose `.file 1` names `source` and whose store is on its line 1, column 5.
fn ptx_naming(dir: &Path, source: &str) -> PathBuf {
    let p = dir.join("k.ptx");
    std::fs::write(
        &p,
        format!(
            ".version 8.0\n.target sm_90\n.address_size 64\n.file 1 \"{source}\"\n\
             .visible .entry k(.param .u64 out)\n{{\n.reg .b32 %r<2>;\n.reg .b64 %rd<4>;\n\
             ld.param.u64 %rd1, [out];\nmov.u32 %r1, %tid.x;\nmul.wide.u32 %rd2, %r1, 4;\n\
             add.s64 %rd3, %rd1, %rd2;\n.loc 1 1 5\nst.global.u32 [%rd3], 1;\nret;\n}}\n"
        ),
    )
    .unwrap();
    p
}

/// A `.file` naming a file outside the PTX's folder is shown as a path, its text unread;
/// `--source-root` lets it be read; `/dev/zero` and a FIFO as `.file` neither block nor
/// read forever.
#[test]
fn ptx_file_paths_outside_the_users_folders_are_not_read() {
    let t = scratch();
    let secret_dir = t.path().join("secrets");
    std::fs::create_dir(&secret_dir).unwrap();
    let secret = secret_dir.join("key.cu");
    std::fs::write(&secret, "TOPSECRET_TOKEN = 42;\n").unwrap();
    let ptx_dir = t.path().join("ptx");
    std::fs::create_dir(&ptx_dir).unwrap();
    let ptx = ptx_naming(&ptx_dir, secret.to_str().unwrap());
    let cache = t.path().join("cache");
    let base = [
        "analyze",
        ptx.to_str().unwrap(),
        "--kernel",
        "k",
        "--grid",
        "1",
        "--block",
        "32",
        "--no-sass",
        "--cc",
        "9.0",
        "--format",
        "json",
    ];
    let (code, out, err) = run(&base, &cache, Duration::from_secs(60));
    assert_eq!(code, 0, "{err}");
    assert!(!out.contains("TOPSECRET"), "{out}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let site = &v["architectures"][0]["sites"][0];
    assert_eq!(site["requests"], 1);
    // The PTX instruction stands in for the unread line.
    assert_eq!(site["text"], "st.global.u32");
    let mut with_root = base.to_vec();
    let root = secret_dir.to_str().unwrap();
    with_root.extend(["--source-root", root]);
    let (code, out, err) = run(&with_root, &cache, Duration::from_secs(60));
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        v["architectures"][0]["sites"][0]["text"],
        "TOPSECRET_TOKEN = 42;"
    );
    // The same file beside the PTX is the user's: read.
    std::fs::copy(&secret, ptx_dir.join("key.cu")).unwrap();
    let ptx = ptx_naming(&ptx_dir, ptx_dir.join("key.cu").to_str().unwrap());
    let mut beside = base.to_vec();
    beside[1] = ptx.to_str().unwrap();
    let (_, out, _) = run(&beside, &cache, Duration::from_secs(60));
    assert!(out.contains("TOPSECRET_TOKEN = 42;"));
    // Devices and FIFOs, even under a source root, end at once with no text.
    let fifo = ptx_dir.join("pipe.cu");
    mkfifo(&fifo);
    for src in ["/dev/zero", fifo.to_str().unwrap()] {
        ptx_naming(&ptx_dir, src);
        let mut a = beside.clone();
        a.extend(["--source-root", "/dev"]);
        let (code, out, err) = run(&a, &cache, Duration::from_secs(60));
        assert_eq!(code, 0, "{src}: {err}");
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        let site = &v["architectures"][0]["sites"][0];
        assert_eq!(site["text"], "st.global.u32", "{src}");
    }
}

/// A result without a field that diff compares is an error naming it (it read as 0 and
/// passed --fail-on-regression).
#[test]
fn diff_names_a_missing_field() {
    let t = scratch();
    let cache = t.path().join("cache");
    let cu = t.path().join("k.cu");
    std::fs::write(&cu, KERNEL).unwrap();
    let (code, out, err) = run(
        &[
            "analyze",
            cu.to_str().unwrap(),
            "--kernel",
            "k",
            "--grid",
            "1",
            "--block",
            "32",
            "--frontend",
            "source",
            "--cc",
            "9.0",
            "--format",
            "json",
        ],
        &cache,
        Duration::from_secs(60),
    );
    assert_eq!(code, 0, "{err}");
    let old = t.path().join("old.json");
    std::fs::write(&old, &out).unwrap();
    let mut v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["architectures"][0]["sites"][0]["sectors"], 4);
    v["architectures"][0]["sites"][0]
        .as_object_mut()
        .unwrap()
        .remove("sectors");
    let new = t.path().join("new.json");
    std::fs::write(&new, v.to_string()).unwrap();
    let (code, _, err) = run(
        &[
            "diff",
            old.to_str().unwrap(),
            new.to_str().unwrap(),
            "--fail-on-regression",
        ],
        &cache,
        Duration::from_secs(60),
    );
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains(&format!(
            "{}: CC 9.0 site 0 (line 1) has no \"sectors\" (a whole number): not a complete result",
            new.display()
        )),
        "{err}"
    );
}

/// The template wrapper of the compiled path: never under the old predictable
/// `/tmp/warpscope-<hash>` (a link planted there is not written through), never through a
/// link planted in the cache, never into another user's folder.
#[test]
fn template_wrappers_are_never_written_through_planted_links() {
    if !compiler() {
        return;
    }
    use std::hash::{Hash as _, Hasher as _};
    let t = scratch();
    let victim = t.path().join("victim");
    std::fs::create_dir(&victim).unwrap();
    // The folder the old code wrote to, as it named it.
    let abs = std::fs::canonicalize("examples/harris.cu").unwrap();
    let kernel = "offset<float>";
    let text = format!(
        "// generated by warpscope: instantiates {kernel} for the compiled path\n#include \"{}\"\nstatic void* const warpscope_instantiate_kernel = (void*)&{kernel};\n",
        abs.display()
    );
    let mut h = std::collections::hash_map::DefaultHasher::new();
    text.hash(&mut h);
    let old = std::env::temp_dir().join(format!("warpscope-{:016x}", h.finish()));
    let _ = std::fs::remove_dir_all(&old);
    let _ = std::fs::remove_file(&old);
    std::os::unix::fs::symlink(&victim, &old).unwrap();
    // In the cache: `wrap` a link to the victim, `ptx` a folder open to everyone (and
    // another user's when the test runs as root).
    let cache = t.path().join("cache");
    std::fs::create_dir_all(cache.join("ptx")).unwrap();
    std::os::unix::fs::symlink(&victim, cache.join("wrap")).unwrap();
    use std::os::unix::fs::PermissionsExt as _;
    let foreign = cache.join("ptx");
    std::fs::set_permissions(&foreign, std::fs::Permissions::from_mode(0o777)).unwrap();
    let is_root = std::os::unix::fs::chown(&foreign, Some(65534), Some(65534)).is_ok();
    // nvcc compiles the wrapper (NVRTC, which instantiates by name, writes none).
    let child = command(
        &[
            "analyze",
            "examples/harris.cu",
            "--kernel",
            kernel,
            "--grid",
            "64",
            "--block",
            "256",
            "--arg",
            "s=1",
            "--frontend",
            "ptx",
            "--no-sass",
            "--cc",
            "9.0",
            "--format",
            "json",
        ],
        &cache,
    )
    .env("WARPSCOPE_NVCC_ONLY", "1")
    .spawn()
    .unwrap();
    let (code, out, err) = finish(child, Duration::from_secs(300), &["analyze", kernel]);
    let _ = std::fs::remove_file(&old);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    // 64 blocks × 8 warps, one load request each (Harris's offset kernel, s=1).
    assert_eq!(
        v["architectures"][0]["totals"]["global_load"]["requests"],
        512
    );
    let notes = v["notes"].to_string();
    assert!(
        notes.contains("was written to a private temporary folder instead of the cache: ")
            && notes.contains("wrap is a symbolic link, not followed"),
        "{notes}"
    );
    let in_victim: Vec<_> = std::fs::read_dir(&victim).unwrap().collect();
    assert!(
        in_victim.is_empty(),
        "written through a planted link: {in_victim:?}"
    );
    if is_root {
        let in_foreign: Vec<_> = std::fs::read_dir(&foreign).unwrap().collect();
        assert!(in_foreign.is_empty(), "written into another user's folder");
        assert!(
            notes.contains("compile cache not used: ")
                && notes.contains("belongs to another user (uid 65534"),
            "{notes}"
        );
    } else {
        // Ours but open to everyone: made private (0700) before use.
        let mode = std::fs::metadata(&foreign).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700);
    }
}

/// A truncated SASS cache entry: a note, and ptxas's merges still applied (the tiled
/// matmul's 16 LDS + 4 LDS.128 per tile, as measured on the H100, not the PTX's 32 loads).
#[test]
fn a_truncated_sass_entry_is_rebuilt_with_a_note() {
    if !compiler() {
        return;
    }
    let t = scratch();
    let cache = t.path().join("cache");
    let args = [
        "analyze",
        "tests/data/h100/compiled/nvcc_matmul_tiled.ptx",
        "--kernel",
        "matmul_rows",
        "--grid",
        "32,32",
        "--block",
        "16,16",
        "--arg",
        "m=512",
        "--arg",
        "n=512",
        "--arg",
        "k=512",
        "--cc",
        "9.0",
        "--format",
        "json",
    ];
    let shared = |out: &str| -> (u64, String) {
        let v: serde_json::Value = serde_json::from_str(out).unwrap();
        (
            v["architectures"][0]["totals"]["shared_load"]["requests"]
                .as_u64()
                .unwrap(),
            v["notes"].to_string(),
        )
    };
    let (code, out, err) = run(&args, &cache, Duration::from_secs(300));
    assert_eq!(code, 0, "{err}");
    let (first, notes) = shared(&out);
    if notes.contains("SASS not checked") {
        eprintln!("skipped: no ptxas/nvdisasm: {notes}");
        return;
    }
    // 32×32 blocks × 8 warps × 32 tiles × 20 shared loads (H100: 5,242,880).
    assert_eq!(first, 32 * 32 * 8 * 32 * 20);
    let entries: Vec<PathBuf> = std::fs::read_dir(cache.join("sass"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(entries.len(), 1, "{entries:?}");
    let text = std::fs::read_to_string(&entries[0]).unwrap();
    std::fs::write(&entries[0], &text[..text.len() * 2 / 3]).unwrap();
    let (code, out, err) = run(&args, &cache, Duration::from_secs(300));
    assert_eq!(code, 0, "{err}");
    let (again, notes) = shared(&out);
    assert_eq!(again, first, "{notes}");
    assert!(notes.contains("was corrupt ("), "{notes}");
    assert!(notes.contains("): rebuilt"), "{notes}");
    // Rebuilt: the third run reads it with no note.
    let (_, out, _) = run(&args, &cache, Duration::from_secs(300));
    let (third, notes) = shared(&out);
    assert_eq!(third, first);
    assert!(!notes.contains("corrupt"), "{notes}");
}
