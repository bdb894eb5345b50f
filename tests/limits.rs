//! Launch limits on the compiled path, through the command line: runaway loops (a step
//! budget, never a clock), the hardware's grid, block and local-memory limits per compute
//! capability, the memory cap, and the note before a launch too large to finish.

mod common;
use common::{temp, warpscope};
use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn ptx(globals: &str, body: &str) -> String {
    temp(
        "k.ptx",
        &format!(".version 8.0\n.target sm_90\n.address_size 64\n.file 1 \"k.cu\"\n{globals}\n.visible .entry k(.param .u64 out, .param .u64 idx)\n{{\n{body}\n}}\n"),
    )
}

/// `while (1) out[tid] = 1;` with the store at k.cu:5:9 (PTX line 16).
const SPIN: &str = ".reg .b32 %r<2>;\n.reg .b64 %rd<4>;\n\
ld.param.u64 %rd1, [out];\nmov.u32 %r1, %tid.x;\nmul.wide.u32 %rd2, %r1, 4;\nadd.s64 %rd3, %rd1, %rd2;\n\
$L:\n.loc 1 5 9\nst.global.u32 [%rd3], 1;\nbra $L;";

fn fails(args: &[&str], needles: &[&str]) -> String {
    let (ok, _, err) = warpscope(args);
    assert!(!ok, "expected failure for {args:?}");
    for n in needles {
        assert!(err.contains(n), "'{n}' missing from:\n{err}");
    }
    err
}

#[test]
fn runaway_loop_stops_at_the_budget_naming_block_and_lines() {
    let f = ptx("", SPIN);
    // --max-steps 1000: 32,000 warp instructions; the 32,001st is warp 0's store.
    fails(
        &["analyze", &f, "--kernel", "k", "--grid", "2", "--block", "64", "--max-steps", "1000"],
        &[
            "PTX line 16:1 (k.cu:5:9): block (0,0,0) ran 32000 warp instructions, its budget (--max-steps), without finishing: a runaway loop? Fix the loop's exit condition, or raise --max-steps",
        ],
    );
}

#[test]
fn runaway_loop_stops_at_the_default_budget_a_count_not_a_time() {
    let f = ptx("", SPIN);
    // One warp: the default budget, 4,000,000 steps of 32 warp instructions, is reached on
    // the same instruction however busy the machine is (no clock decides).
    fails(
        &[
            "analyze", &f, "--kernel", "k", "--grid", "1", "--block", "32",
        ],
        &["(k.cu:5:9): block (0,0,0) ran 128000000 warp instructions, its budget (--max-steps)"],
    );
}

/// One compiled `while (1)` loop, when a CUDA compiler is at hand.
#[test]
fn runaway_cu_loop_names_its_source_line() {
    if warpscope_toolkit::find(None).is_err() {
        eprintln!("skipped: no CUDA compiler (scripts/test.sh installs one from PyPI)");
        return;
    }
    let f = temp(
        "spin.cu",
        "__global__ void spin(float *a, int n)\n{\n    int i = threadIdx.x;\n    while (1) {\n        a[i] += 1.0f;\n        i = (i + n) % 1024;\n    }\n}\n",
    );
    let args = [
        "analyze",
        &f,
        "--kernel",
        "spin",
        "--grid",
        "4",
        "--block",
        "256",
        "--arg",
        "n=32",
        "--max-steps",
        "100000",
    ];
    let err = fails(
        &args,
        &[
            "ran 3200000 warp instructions, its budget (--max-steps)",
            "runaway loop",
        ],
    );
    // The budget stops the block on one of the loop's two lines.
    assert!(
        err.contains("spin.cu:5:") || err.contains("spin.cu:6:"),
        "{err}"
    );
}

/// A legitimate long loop (100,000 iterations per thread, 1,024 threads) finishes under the
/// default budget while every core is busy with other work, with the same figures as alone:
/// no wall-clock limit decides a result.
#[test]
fn long_loop_finishes_with_the_same_figures_on_a_loaded_machine() {
    let f = ptx(
        "",
        ".reg .b32 %r<4>;\n.reg .b64 %rd<4>;\n.reg .pred %p<2>;\n\
ld.param.u64 %rd1, [out];\nmov.u32 %r1, %tid.x;\nmul.wide.u32 %rd2, %r1, 4;\nadd.s64 %rd3, %rd1, %rd2;\n\
mov.u32 %r2, 0;\n$L:\nadd.s32 %r2, %r2, 1;\nsetp.lt.u32 %p1, %r2, 100000;\n@%p1 bra $L;\n\
.loc 1 7 5\nst.global.u32 [%rd3], %r2;\nret;",
    );
    let args = [
        "analyze", &f, "--kernel", "k", "--grid", "1", "--block", "1024", "--cc", "9.0",
        "--format", "csv",
    ];
    let (ok, alone, err) = warpscope(&args);
    assert!(ok, "{err}");
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let load: Vec<_> = (0..std::thread::available_parallelism().map_or(2, |n| n.get()) * 2)
        .map(|_| {
            let stop = stop.clone();
            std::thread::spawn(move || {
                let mut x = 0u64;
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
                }
            })
        })
        .collect();
    let (ok, loaded, err) = warpscope(&args);
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    load.into_iter().for_each(|h| h.join().unwrap());
    assert!(ok, "{err}");
    assert_eq!(alone, loaded);
    // The store: 32 warps, 32 requests, 4 sectors each.
    assert!(alone.contains(",32,128,"), "{alone}");
}

#[test]
fn grid_and_block_limits_are_named_per_compute_capability() {
    let f = ptx("", "ret;");
    let run = |grid: &str, block: &str, cc: &str| -> Vec<String> {
        vec![
            "analyze".into(),
            f.clone(),
            "--kernel".into(),
            "k".into(),
            "--grid".into(),
            grid.into(),
            "--block".into(),
            block.into(),
            "--cc".into(),
            cc.into(),
        ]
    };
    let check = |a: Vec<String>, needle: &str| {
        let a: Vec<&str> = a.iter().map(String::as_str).collect();
        fails(&a, &[needle]);
    };
    check(
        run("2147483648", "32", "9.0"),
        "grid 2147483648×1×1 has gridDim.x = 2147483648; CC 9.0 allows at most 2147483647 in x",
    );
    check(
        run("65536", "32", "2.0"),
        "grid 65536×1×1 has gridDim.x = 65536; CC 2.0 allows at most 65535 in x",
    );
    check(
        run("1,65536", "32", "9.0"),
        "gridDim.y = 65536; CC 9.0 allows at most 65535 in y",
    );
    check(
        run("1,1,2", "32", "1.3"),
        "gridDim.z = 2; CC 1.3 allows at most 1 in z",
    );
    check(
        run("1", "1024", "1.3"),
        "block 1024×1×1 has 1024 threads; CC 1.3 allows at most 512 threads per block",
    );
    check(
        run("1", "1,1,65", "9.0"),
        "blockDim.z = 65; CC 9.0 allows at most 64 in z",
    );
    check(
        run("1", "2048", "9.0"),
        "2048 threads; CC 9.0 allows at most 1024 threads per block",
    );
    // 65535 blocks in x is within 2.0's limit.
    let a = run("65535", "32", "2.0");
    let a: Vec<&str> = a.iter().map(String::as_str).collect();
    let (ok, _, err) = warpscope(&a);
    assert!(ok, "{err}");
}

#[test]
fn local_memory_is_checked_per_compute_capability() {
    let body = |bytes: u32| {
        format!(".local .align 4 .b8 buf[{bytes}];\n.reg .b32 %r<2>;\n.reg .b64 %rd<3>;\nmov.u32 %r1, %tid.x;\nmul.wide.u32 %rd1, %r1, 4;\nmov.u64 %rd2, buf;\nadd.s64 %rd2, %rd2, %rd1;\nst.local.u32 [%rd2], 1;\nret;")
    };
    let args = |f: &str, cc: &str| -> Vec<String> {
        [
            "analyze", f, "--kernel", "k", "--grid", "1", "--block", "32", "--cc", cc,
        ]
        .map(String::from)
        .to_vec()
    };
    fn strs(v: &[String]) -> Vec<&str> {
        v.iter().map(String::as_str).collect()
    }
    let big = ptx("", &body(600_000));
    fails(
        &strs(&args(&big, "9.0")),
        &["a thread uses 600000 bytes of local memory; CC 9.0 allows at most 524288 bytes (512 KiB) per thread"],
    );
    // 20,000 bytes: over 1.x's 16 KiB, within 2.0's 512 KiB.
    let mid = ptx("", &body(20_000));
    fails(
        &strs(&args(&mid, "1.3")),
        &["CC 1.3 allows at most 16384 bytes (16 KiB) per thread"],
    );
    let (ok, out, err) = warpscope(&strs(&args(&mid, "1.3,2.0,9.0"))[..]);
    assert!(!ok, "{out}");
    assert!(err.contains("CC 1.3 allows at most 16384"), "{err}");
    let (ok, out, err) = warpscope(&strs(&args(&mid, "guide")));
    assert!(ok, "{err}");
    // The note goes to standard error, the table to standard output.
    assert!(
        err.contains("note: CC 1.0 left out: a thread uses 20000 bytes of local memory"),
        "{err}"
    );
    assert!(!out.contains("left out"), "{out}");
}

/// out[idx[0] + tid * 1024] = 1: a loaded value reaches the address, so the global image is
/// kept; 64 threads write 64 pages of 4 KiB.
const SCATTER: &str = ".reg .b32 %r<4>;\n.reg .b64 %rd<6>;\n\
ld.param.u64 %rd1, [out];\nld.param.u64 %rd2, [idx];\nld.global.u32 %r1, [%rd2];\nmov.u32 %r2, %tid.x;\n\
mad.lo.s32 %r3, %r2, 1024, %r1;\nmul.wide.u32 %rd3, %r3, 4;\nadd.s64 %rd4, %rd1, %rd3;\n\
.loc 1 7 3\nst.global.u32 [%rd4], 1;\nret;";

#[test]
fn memory_cap_names_the_allocation_and_the_flag() {
    let f = ptx("", SCATTER);
    let base = [
        "analyze",
        f.as_str(),
        "--kernel",
        "k",
        "--grid",
        "1",
        "--block",
        "64",
    ];
    let with = |cap: &str| {
        let mut a = base.to_vec();
        a.extend(["--max-memory", cap]);
        warpscope(&a)
    };
    let (ok, _, err) = with("256K");
    assert!(ok, "{err}");
    let (ok, _, err) = with("64K");
    assert!(!ok);
    assert!(
        // A .ptx without its .cu names parameters by position.
        err.contains("(k.cu:7:3): a store to 'param_0' by block (0,0,0) needs another 4 KiB page of the global memory image, which holds 65536 bytes already: over the memory cap of 65536 bytes (--max-memory)"),
        "{err}"
    );
    let (ok, _, err) = with("1.5G");
    assert!(ok, "{err}");
    let (ok, _, err) = with("lots");
    assert!(!ok);
    assert!(err.contains("'lots' is not a size"), "{err}");
    assert!(err.contains("e.g. 512M or 4G"), "{err}");
    let (ok, _, err) = with("0");
    assert!(!ok && err.contains("at least 1 byte"), "{err}");
}

/// Runs `args` for at most `wait`, then stops it; returns its standard error so far.
fn stderr_within(args: &[&str], wait: Duration) -> String {
    let mut child = Command::new(env!("CARGO_BIN_EXE_warpscope"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let t = Instant::now();
    while t.elapsed() < wait {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = child.kill();
    let _ = child.wait();
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    assert!(!err.contains("panicked"), "{err}");
    err
}

#[test]
fn largest_grid_is_announced_before_it_runs_for_ages() {
    let f = ptx("", SPIN.replace("bra $L;", "ret;").as_str());
    // Blocks of one thread: of 32 threads the launch passes 2^64 threads and is refused
    // before it runs (tests/validate.rs).
    let args = [
        "analyze",
        f.as_str(),
        "--kernel",
        "k",
        "--grid",
        "2147483647,65535,65535",
        "--block",
        "1",
    ];
    let err = stderr_within(&args, Duration::from_secs(5));
    assert!(
        err.contains("note: this launch has 9,223,090,559,730,712,575 blocks; its first "),
        "{err}"
    );
    assert!(err.contains("ran 6 warp instructions each"), "{err}");
    assert!(
        err.contains(" years. Run a sample of the blocks with --sample-blocks"),
        "{err}"
    );
    // Standard error is not a terminal here: no bar.
    assert!(!err.contains("blocks, "), "{err}");
    // --quiet: nothing at all.
    let mut quiet = args.to_vec();
    quiet.push("--quiet");
    let err = stderr_within(&quiet, Duration::from_secs(2));
    assert_eq!(err, "");
}

/// A `__device__` array of 4 GB with a two-element initializer holds only what is
/// initialized: run with 2 GB of address space (`ulimit -v`), where the 4 GB image the
/// initializer made before fails to allocate. `big[1]` is 2.0, so the warp's store starts 2
/// floats into a 128-byte line and touches 5 sectors where `big[1] = 0` would give 4.
#[test]
fn a_huge_device_array_initializer_is_not_materialized() {
    let src = temp(
        "big_init.cu",
        "__device__ float big[1073741824] = {1.0f, 2.0f};\n\
         __global__ void k(float* a) { a[(int)big[1] + threadIdx.x] = 1.0f; }\n",
    );
    let out = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "ulimit -v 2000000 && exec '{}' analyze '{src}' --kernel k --grid 1 --block 32 --cc 9.0 --frontend source --format csv -q",
            env!("CARGO_BIN_EXE_warpscope")
        ))
        .output()
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(out.status.success(), "{stderr}");
    let store = stdout
        .lines()
        .find(|l| l.contains(",store,global,"))
        .unwrap_or_else(|| panic!("{stdout}"));
    // cc, executions, requests, transactions, transaction_bytes, sectors
    assert!(store.contains(",9.0,1,1,5,160,5,"), "{store}");
}

/// Static `__shared__` arrays over 48 KB per block (16 KB on 1.x) are refused as ptxas
/// refuses them, with the way out (dynamic shared memory); 48 KB runs.
#[test]
fn static_shared_memory_over_48_kb_is_refused() {
    let kernel = |floats: u32| {
        temp(
            &format!("smem{floats}.cu"),
            &format!("__global__ void k(float* a) {{ __shared__ float s[{floats}]; s[threadIdx.x] = 1; __syncthreads(); a[threadIdx.x] = s[31 - threadIdx.x]; }}\n"),
        )
    };
    let big = kernel(16384);
    let args = |f: &str, cc: &'static str| {
        vec![
            "analyze".to_string(),
            f.to_string(),
            "--kernel".into(),
            "k".into(),
            "--grid".into(),
            "1".into(),
            "--block".into(),
            "32".into(),
            "--cc".into(),
            cc.into(),
            "--frontend".into(),
            "source".into(),
            "-q".into(),
        ]
    };
    let a = args(&big, "9.0");
    let a: Vec<&str> = a.iter().map(String::as_str).collect();
    fails(
        &a,
        &[
            "65536 bytes of static shared memory",
            "CC 9.0 allows at most 49152 bytes (48 KB)",
            "extern __shared__",
        ],
    );
    let ok48 = kernel(12288);
    let a = args(&ok48, "9.0");
    let a: Vec<&str> = a.iter().map(String::as_str).collect();
    let (ok, _, err) = warpscope(&a);
    assert!(ok, "{err}");
    let a = args(&ok48, "1.3");
    let a: Vec<&str> = a.iter().map(String::as_str).collect();
    fails(&a, &["CC 1.3 allows at most 16384 bytes (16 KB)"]);
}

/// A PTX kernel declaring a million registers, launched with 1,024 threads, would need 8 GB
/// of register images (8 bytes × 32 lanes × 32 warps per register): refused against the
/// memory cap before any warp is made (it aborted on the allocation before). The cap is
/// given (4 GiB, the old default): the default depends on the machine.
#[test]
fn a_million_registers_per_thread_are_refused_against_the_cap() {
    let f = ptx(
        "",
        ".reg .b32 %r<1000000>;\n.reg .b64 %rd<4>;\nld.param.u64 %rd1, [out];\nmov.u32 %r1, %tid.x;\nmul.wide.u32 %rd2, %r1, 4;\nadd.s64 %rd3, %rd1, %rd2;\nst.global.u32 [%rd3], %r999999;\nret;",
    );
    let err = fails(
        &[
            "analyze",
            &f,
            "--kernel",
            "k",
            "--grid",
            "1",
            "--block",
            "1024",
            "--max-memory",
            "4G",
        ],
        &["PTX registers per thread", "--max-memory"],
    );
    // 1,000,050 registers (the declared ones and the specials) × 8 bytes × 1,024 threads.
    assert!(
        err.contains("8192409600 bytes for its 1000050 PTX registers per thread: more than the memory cap of 4294967296 bytes"),
        "{err}"
    );
    // 32 threads of it: 256 MB, within the cap of 4 GiB.
    let (ok, _, err) = warpscope(&[
        "analyze",
        &f,
        "--kernel",
        "k",
        "--grid",
        "1",
        "--block",
        "32",
        "-q",
        "--max-memory",
        "4G",
    ]);
    assert!(ok, "{err}");
}

/// `--max-memory`'s default is half the memory available when warpscope starts, at least
/// 256 MiB (sysinfo; Linux's MemAvailable here): a block of 16,000,000 registers per thread
/// (131 GB of register images) is refused against it, and the cap it names is within a
/// factor of 1.5 of half of what /proc/meminfo said just before (other processes come and
/// go). An explicit --max-memory wins, however large the default.
#[test]
fn the_default_memory_cap_is_half_the_available_memory_and_a_given_one_wins() {
    let f = ptx(
        "",
        ".reg .b32 %r<16000000>;\n.reg .b64 %rd<4>;\nld.param.u64 %rd1, [out];\nmov.u32 %r1, %tid.x;\nmul.wide.u32 %rd2, %r1, 4;\nadd.s64 %rd3, %rd1, %rd2;\nst.global.u32 [%rd3], %r15999999;\nret;",
    );
    let base = [
        "analyze", &f, "--kernel", "k", "--grid", "1", "--block", "1024", "-q",
    ];
    let needed: u64 = 131_072_409_600; // 16,000,050 registers × 8 bytes × 1,024 threads
    let cap_named = |err: &str| -> u64 {
        let at = err.find("memory cap of ").expect(err) + "memory cap of ".len();
        err[at..].split(' ').next().unwrap().parse().expect(err)
    };
    let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
    let available = meminfo
        .lines()
        .find_map(|l| l.strip_prefix("MemAvailable:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map(|kb| kb * 1024);
    match available {
        Some(a) if a / 2 < needed / 2 => {
            let err = fails(&base, &[&format!("and {needed} bytes for its 16000050 PTX registers per thread: more than the memory cap of ")]);
            let cap = cap_named(&err);
            let half = (a / 2).max(256 << 20);
            assert!(
                cap as f64 >= half as f64 / 1.5 && cap as f64 <= half as f64 * 1.5,
                "default cap {cap}, half the available memory {half}"
            );
        }
        _ => eprintln!(
            "SKIPPED the default cap's check: no /proc/meminfo, or more than 131 GB available (the launch would fit)"
        ),
    }
    let mut given = base.to_vec();
    given.extend(["--max-memory", "1G"]);
    let err = fails(
        &given,
        &["more than the memory cap of 1073741824 bytes (--max-memory)"],
    );
    assert_eq!(cap_named(&err), 1 << 30);
}
