//! The executor's limits: runaway blocks (budget and clock, the lowest failing block
//! reported when blocks run in parallel), the memory cap on every image, the 64 KB of
//! constant memory, and the progress counters.

use std::sync::Arc;
use std::time::{Duration, Instant};
use warpscope_simt::decode::window;
use warpscope_simt::{Alloc, Error, Launch, Program, Progress, RunawayLimit, MIN_STEPS_FOR_TIME};

fn module(globals: &str, body: &str, params: &str) -> String {
    format!(".version 8.0\n.target sm_90\n.address_size 64\n.file 1 \"k.cu\"\n{globals}\n.visible .entry k({params})\n{{\n{body}\n}}\n")
}

fn decode(text: &str) -> Result<Program, Error> {
    let m = warpscope_ptx::parse(text).unwrap();
    let e = warpscope_ptx::find_entry(&m, "k").unwrap();
    Program::decode(&m, e)
}

fn program(body: &str, params: &str) -> Program {
    decode(&module("", body, params)).unwrap()
}

fn launch(prog: &Program, grid: u32, block: u32) -> Launch {
    let mut l = Launch {
        grid: [grid, 1, 1],
        block: [block, 1, 1],
        ..Default::default()
    };
    for k in 0..prog.params.len() {
        let base = window::ALLOC_BASE + k as u64 * window::ALLOC_SPACING;
        let alloc = Alloc {
            name: format!("p{k}"),
            base,
            size: None,
        };
        l.allocs.push((alloc, warpscope_init::Contents::Zero));
        l.args.push(base.to_le_bytes().to_vec());
    }
    l
}

fn run(prog: &Program, l: &Launch) -> Result<usize, Error> {
    let mut n = 0;
    prog.run(l, &mut |_, _, _| n += 1)?;
    Ok(n)
}

/// `while (1) { a[tid] = 1; }` at k.cu:5:9: PTX line 16 holds the store, line 17 the branch.
const SPIN: &str = ".reg .b32 %r<2>;\n.reg .b64 %rd<4>;\n\
ld.param.u64 %rd1, [p0];\nmov.u32 %r1, %tid.x;\nmul.wide.u32 %rd2, %r1, 4;\nadd.s64 %rd3, %rd1, %rd2;\n\
$L:\n.loc 1 5 9\nst.global.u32 [%rd3], 1;\nbra $L;";

#[test]
fn runaway_block_reports_its_budget_block_and_lines() {
    let p = program(SPIN, ".param .u64 p0");
    let mut l = launch(&p, 3, 64);
    l.max_steps = 1000;
    let e = run(&p, &l).unwrap_err();
    let Error::Runaway {
        steps,
        block,
        limit,
        ..
    } = &e
    else {
        panic!("{e}")
    };
    assert_eq!(
        (*steps, *block, *limit),
        (1000, [0, 0, 0], RunawayLimit::Steps)
    );
    let msg = e.to_string();
    // Warp 0 runs 4 setup instructions, then store/branch pairs: the 1001st instruction,
    // the one refused, is the store.
    for needle in [
        "PTX line 16:1 (k.cu:5:9)",
        "block (0,0,0) ran 1000 warp instructions, its budget (--max-steps), without finishing",
        "runaway loop",
        "raise --max-steps",
    ] {
        assert!(msg.contains(needle), "'{needle}' missing from: {msg}");
    }
}

#[test]
fn runaway_block_is_stopped_by_the_clock_once_past_the_floor() {
    let p = program(SPIN, ".param .u64 p0");
    let mut l = launch(&p, 1, 32);
    l.max_steps = u64::MAX;
    l.max_block_time = Some(Duration::from_millis(200));
    let t = Instant::now();
    let e = run(&p, &l).unwrap_err();
    let took = t.elapsed();
    let Error::Runaway { steps, limit, .. } = &e else {
        panic!("{e}")
    };
    let RunawayLimit::Time(ran) = *limit else {
        panic!("{e}")
    };
    // Both conditions hold when it stops: 200 ms and the floor of 2^20 instructions; the
    // clock is read every 2^16 instructions.
    assert!(ran >= Duration::from_millis(200), "{e}");
    assert!(*steps >= MIN_STEPS_FOR_TIME, "{e}");
    assert!(took < Duration::from_secs(30), "took {took:?}");
    let msg = e.to_string();
    assert!(
        msg.contains("PTX line 16:1 (k.cu:5:9)") || msg.contains("PTX line 17:1 (k.cu:5:9)"),
        "{msg}"
    );
    assert!(msg.contains("give --max-steps N"), "{msg}");
}

#[test]
fn a_small_block_is_not_called_runaway_by_the_clock() {
    // A zero time limit: only the floor of 2^20 instructions keeps this block (about 60
    // instructions) from being flagged.
    let p = program(SPIN.replace("bra $L;", "ret;").as_str(), ".param .u64 p0");
    let mut l = launch(&p, 4, 64);
    l.max_block_time = Some(Duration::ZERO);
    assert_eq!(run(&p, &l).unwrap(), 4 * 2);
}

/// Blocks 5 and 40 of 64 loop for ever, the others return at once: on four threads, the
/// error is block 5's, as in a sequential run, and blocks after it stop early.
#[test]
fn parallel_run_reports_the_lowest_runaway_block() {
    let body = ".reg .pred %p<3>;\n.reg .b32 %r<3>;\n.reg .b64 %rd<4>;\n\
ld.param.u64 %rd1, [p0];\nmov.u32 %r1, %tid.x;\nmov.u32 %r2, %ctaid.x;\nmul.wide.u32 %rd2, %r1, 4;\nadd.s64 %rd3, %rd1, %rd2;\n\
st.global.u32 [%rd3], 1;\nsetp.eq.u32 %p1, %r2, 5;\nsetp.eq.u32 %p2, %r2, 40;\nor.pred %p1, %p1, %p2;\n@!%p1 bra $END;\n\
$L:\nst.global.u32 [%rd3], 1;\nbra $L;\n$END:\nret;";
    let p = program(body, ".param .u64 p0");
    assert!(!p.needs_memory);
    let mut l = launch(&p, 64, 32);
    l.max_steps = 200_000;
    for threads in [1, 4] {
        l.threads = threads;
        match run(&p, &l).unwrap_err() {
            Error::Runaway { block, steps, .. } => {
                assert_eq!((block, steps), ([5, 0, 0], 200_000), "threads {threads}")
            }
            e => panic!("{e}"),
        }
    }
}

/// out[idx[0] + tid * 1024] = 1: a loaded value reaches the address, so the global image is
/// kept, and each of 64 threads writes its own 4 KiB page.
const SCATTER: &str = ".reg .b32 %r<4>;\n.reg .b64 %rd<6>;\n\
ld.param.u64 %rd1, [p0];\nld.param.u64 %rd2, [p1];\nld.global.u32 %r1, [%rd2];\nmov.u32 %r2, %tid.x;\n\
mad.lo.s32 %r3, %r2, 1024, %r1;\nmul.wide.u32 %rd3, %r3, 4;\nadd.s64 %rd4, %rd1, %rd3;\n\
.loc 1 7 3\nst.global.u32 [%rd4], 1;\nret;";

#[test]
fn global_image_stops_at_the_memory_cap_naming_the_allocation() {
    let p = program(SCATTER, ".param .u64 p0, .param .u64 p1");
    assert!(p.needs_memory);
    let mut l = launch(&p, 1, 64);
    // 64 pages (256 KiB) fit in 256 KiB.
    l.max_memory = 256 * 1024;
    assert_eq!(run(&p, &l).unwrap(), 2 * 2);
    // 16 pages do not: the 17th page's store fails.
    l.max_memory = 64 * 1024;
    let e = run(&p, &l).unwrap_err();
    assert!(matches!(e, Error::Memory(_)), "{e}");
    let msg = e.to_string();
    for needle in [
        "(k.cu:7:3)",
        "a store to 'p0' by block (0,0,0)",
        "holds 65536 bytes already",
        "memory cap of 65536 bytes (--max-memory)",
    ] {
        assert!(msg.contains(needle), "'{needle}' missing from: {msg}");
    }
}

#[test]
fn block_images_are_checked_against_the_cap_before_running() {
    // 100,000 bytes of local memory per thread × 1024 threads = 102,400,000 bytes.
    let body = ".local .align 4 .b8 buf[100000];\n.reg .b32 %r<2>;\n.reg .b64 %rd<3>;\n\
mov.u32 %r1, %tid.x;\nmul.wide.u32 %rd1, %r1, 4;\nmov.u64 %rd2, buf;\nadd.s64 %rd2, %rd2, %rd1;\n\
st.local.u32 [%rd2], 1;\nret;";
    let p = program(body, "");
    assert_eq!(p.local_bytes, 100_000);
    let mut l = launch(&p, 1, 1024);
    l.max_memory = 100_000_000;
    let msg = run(&p, &l).unwrap_err().to_string();
    assert!(
        msg.contains("0 bytes of shared memory, 102400000 bytes of local memory (100000 bytes per thread × 1024 threads) and "),
        "{msg}"
    );
    assert!(
        msg.contains(
            "PTX registers per thread: more than the memory cap of 100000000 bytes (--max-memory)"
        ),
        "{msg}"
    );
    l.block = [256, 1, 1];
    assert_eq!(run(&p, &l).unwrap(), 8);
    // Dynamic shared memory of 2^64-1 bytes: refused, not wrapped or allocated.
    l.dynamic_shared_bytes = u64::MAX;
    let msg = run(&p, &l).unwrap_err().to_string();
    assert!(
        msg.contains(&format!("needs {} bytes of shared memory", u64::MAX)),
        "{msg}"
    );
}

#[test]
fn constant_memory_holds_64_kb() {
    let body = "ret;";
    assert!(decode(&module(".const .align 4 .b8 c[65536];", body, "")).is_ok());
    let e = decode(&module(
        ".const .align 4 .b8 c[60000];\n.const .align 4 .b8 d[6000];",
        body,
        "",
    ))
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("constant variable d of 6000 bytes would end at byte 66000 of constant memory, which holds 65536 bytes (64 KB)"),
        "{e}"
    );
    // A size that overflows is refused the same way, not wrapped.
    let e = decode(&module(
        ".const .align 8 .b64 c[4611686018427387904];",
        body,
        "",
    ))
    .unwrap_err()
    .to_string();
    assert!(e.contains("holds 65536 bytes"), "{e}");
}

#[test]
fn a_large_uninitialized_global_variable_takes_no_memory() {
    // 4 GB declared, nothing written: decoding and running hold no image for it.
    let body = ".reg .b64 %rd<2>;\nmov.u64 %rd1, big;\nld.global.u32 %r1, [%rd1];\nret;";
    let text = module(
        ".global .align 4 .b8 big[4000000000];",
        &format!(".reg .b32 %r<2>;\n{body}"),
        "",
    );
    let p = decode(&text).unwrap();
    assert_eq!(p.globals[0].bytes, 4_000_000_000);
    assert!(p.globals[0].init.is_empty());
    let mut l = launch(&p, 1, 32);
    l.max_memory = 1 << 20;
    assert_eq!(run(&p, &l).unwrap(), 1);
}

#[test]
fn progress_counts_blocks_and_instructions() {
    let p = program(SPIN.replace("bra $L;", "ret;").as_str(), ".param .u64 p0");
    for threads in [1, 3] {
        let progress = Arc::new(Progress::default());
        let mut l = launch(&p, 100, 64);
        l.threads = threads;
        l.progress = Some(progress.clone());
        assert_eq!(run(&p, &l).unwrap(), 200);
        assert_eq!(progress.blocks(), (100, 100));
        // 2 warps × 6 instructions (4 setup, the store, ret) per block.
        assert_eq!(
            progress
                .steps_done
                .load(std::sync::atomic::Ordering::Relaxed),
            100 * 2 * 6
        );
        let total = progress.estimated_total_secs().unwrap();
        assert!((0.0..60.0).contains(&total), "{total}");
    }
}
