//! Invalid input refused with a clean error naming the input, its place and the limit
//! (issue 21): PTX checked against the PTX ISA (vector widths, vector operand lengths,
//! operand kinds), hostile `.npy` headers and shapes, launches whose block counts overflow,
//! and a launch file of 20,000 launches read in linear time.

mod common;
use common::{temp, warpscope};

/// A one-kernel PTX file whose line 15 is `body`.
fn ptx(body: &str) -> String {
    temp(
        "k.ptx",
        &format!(
            ".version 8.0\n.target sm_90\n.address_size 64\n\n\
             .visible .entry k(.param .u64 p)\n{{\n\
             .reg .b32 %r<40>;\n.reg .f32 %f<40>;\n.reg .b64 %rd<4>;\n\
             ld.param.u64 %rd1, [p];\ncvta.to.global.u64 %rd2, %rd1;\nmov.u32 %r1, %tid.x;\n\
             mul.wide.u32 %rd3, %r1, 16;\nadd.s64 %rd2, %rd2, %rd3;\n\
             {body}\nret;\n}}\n"
        ),
    )
}

fn analyze(body: &str) -> (bool, String, String) {
    let f = ptx(body);
    warpscope(&[
        "analyze", &f, "--kernel", "k", "--grid", "1", "--block", "32",
    ])
}

fn refused(body: &str, needles: &[&str]) {
    let (ok, _, err) = analyze(body);
    assert!(!ok, "{body} was accepted");
    for n in ["k.ptx: PTX line 15:1: "].iter().chain(needles) {
        assert!(err.contains(n), "'{n}' missing from:\n{err}");
    }
}

#[test]
fn vector_widths_other_than_2_4_8_are_invalid_ptx() {
    refused(
        "ld.global.v1024.f32 {%f1, %f2}, [%rd2];",
        &["ld.global.v1024.f32: '.v1024' is not a PTX vector width: vectors have 2, 4 or 8 elements"],
    );
    refused(
        "ld.global.v3.f32 {%f1, %f2, %f3}, [%rd2];",
        &["'.v3' is not a PTX vector width"],
    );
    refused(
        "st.global.v16.f32 [%rd2], {%f1, %f2};",
        &["'.v16' is not a PTX vector width"],
    );
}

#[test]
fn v8_takes_32_bit_elements_only() {
    let eight = "{%f1, %f2, %f3, %f4, %f5, %f6, %f7, %f8}";
    refused(
        &format!("ld.global.v8.f64 {eight}, [%rd2];"),
        &[".v8 takes elements of 32 bits or fewer (.v8.b32 is 256 bits); 64-bit elements go up to .v4"],
    );
}

#[test]
fn a_vector_operand_must_hold_as_many_registers_as_the_width() {
    let regs: Vec<String> = (0..33).map(|i| format!("%f{}", i % 39 + 1)).collect();
    refused(
        &format!("ld.global.v4.f32 {{{}}}, [%rd2];", regs.join(", ")),
        &["ld.global.v4.f32: the vector operand holds 33 operands; .v4 takes exactly 4"],
    );
    refused(
        "st.global.v2.f32 [%rd2], {%f1, %f2, %f3};",
        &["the vector operand holds 3 operands; .v2 takes exactly 2"],
    );
    refused(
        "ld.global.f32 {%f1, %f2}, [%rd2];",
        &["a brace list of 2 operands needs a vector modifier"],
    );
    // One register in braces is a scalar (Triton emits `ld.global.b32 { %r1 }, [...]`).
    let (ok, _, err) = analyze("ld.global.f32 {%f1}, [%rd2];");
    assert!(ok, "{err}");
    // The well-formed form still runs.
    let (ok, out, err) = analyze("ld.global.v4.f32 {%f1, %f2, %f3, %f4}, [%rd2];");
    assert!(ok, "{err}");
    assert!(out.contains("ld.global.v4.f32"), "{out}");
}

#[test]
fn bar_takes_registers_or_integers_not_memory() {
    refused(
        "bar.sync [%rd1];",
        &["bar.sync: operand 1 is a memory operand; the barrier number and thread count are 32-bit registers or integers"],
    );
    refused(
        "bar.sync 0, {%r1, %r2};",
        &["bar.sync: operand 2 is a vector"],
    );
    refused(
        "barrier.sync 0, 32, 5;",
        &["takes at most 2 operands (barrier number, thread count), found 3"],
    );
    let (ok, _, err) = analyze("bar.sync 0;");
    assert!(ok, "{err}");
}

#[test]
fn operands_of_the_wrong_kind_are_named_in_ptx_syntax() {
    refused(
        "add.f32 %f1, [%rd2], %f2;",
        &["expected a register or an immediate, found a memory operand [%rd2]"],
    );
    refused(
        "ld.global.f32 %f1, %rd2;",
        &["expected an address [..], found the register %rd2"],
    );
    refused(
        "st.global.f32 %f1, [%rd2+8];",
        &["expected a register or an immediate, found a memory operand [%rd2+8]"],
    );
    refused(
        "cvt.rn.f32.u32 [%rd2+4], %r1;",
        &["expected a destination register, found a memory operand [%rd2+4]"],
    );
}

#[test]
fn undeclared_registers_are_named() {
    refused(
        "ld.global.f32 %f1, [%rd9];",
        &["register '%rd9' is not declared"],
    );
    refused(
        "add.f32 %zz1, %f1, %f2;",
        &["register '%zz1' is not declared"],
    );
}

/// A launch file next to a copy of the PTX kernel of [`ptx`], its launches given as text.
fn launch_file(body: &str, launches: &str) -> String {
    let k = ptx(body);
    let dir = std::path::Path::new(&k).parent().unwrap();
    let f = dir.join("warpscope.toml");
    std::fs::write(&f, launches).unwrap();
    f.to_string_lossy().to_string()
}

/// The largest grid CUDA allows, (2^31−1) × 65535 × 65535 = 9,223,090,559,730,712,575 blocks.
const HUGE: &str = "2147483647,65535,65535";

#[test]
fn a_launch_of_more_than_2_64_threads_is_refused_before_it_runs() {
    let body = "ld.global.f32 %f1, [%rd2];";
    // 9.2·10^18 blocks × 32 threads = 2.95·10^20 threads: refused at once, not run for
    // 10^6 years (the note's estimate before) and not extrapolated into wrapped totals.
    let f = ptx(body);
    let (ok, _, err) = warpscope(&[
        "analyze", &f, "--kernel", "k", "--grid", HUGE, "--block", "32",
    ]);
    assert!(!ok);
    assert!(
        err.contains("the launch has 295138897911382802400 threads (9223090559730712575 blocks of 32 threads), over 2^64"),
        "{err}"
    );
    let (ok, _, err) = warpscope(&[
        "analyze",
        &f,
        "--kernel",
        "k",
        "--grid",
        HUGE,
        "--block",
        "32",
        "--sample-blocks",
        "10",
    ]);
    assert!(!ok && err.contains("over 2^64"), "{err}");
    // `check` on a launch file of that grid ends with exit 2 and the same message.
    let toml = launch_file(
        body,
        "[[launch]]\nname = \"huge\"\nfile = \"k.ptx\"\nkernel = \"k\"\ngrid = [2147483647, 65535, 65535]\nblock = [32]\n[[launch.budget]]\nmax_sectors_per_request = 4\n",
    );
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_warpscope"))
        .args(["check", "--launches", &toml])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("over 2^64"), "{err}");
}

#[test]
fn a_sampled_extrapolation_past_2_64_is_refused_not_wrapped() {
    // One thread a block: 9.2·10^18 threads fit, but three loads each extrapolate to
    // 2.77·10^19 requests, past u64 (they wrapped before).
    let body =
        "ld.global.f32 %f1, [%rd2];\nld.global.f32 %f2, [%rd2+4];\nld.global.f32 %f3, [%rd2+8];";
    let f = ptx(body);
    let (ok, _, err) = warpscope(&[
        "analyze",
        &f,
        "--kernel",
        "k",
        "--grid",
        HUGE,
        "--block",
        "1",
        "--sample-blocks",
        "10",
    ]);
    assert!(!ok);
    assert!(
        err.contains(
            "sampled blocks to the grid's 9223090559730712575 blocks gives totals over 2^64"
        ),
        "{err}"
    );
    // Even one 4-byte load a block is 3.7·10^19 bytes requested there; a grid of
    // (2^31−1) × 65535 blocks fits: 140,735,340,806,145 requests, one per block.
    let f = ptx("ld.global.f32 %f1, [%rd2];");
    let (ok, out, err) = warpscope(&[
        "analyze",
        &f,
        "--kernel",
        "k",
        "--grid",
        "2147483647,65535",
        "--block",
        "1",
        "--sample-blocks",
        "10",
        "--format",
        "json",
    ]);
    assert!(ok, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let site = &v["architectures"][0]["sites"][0];
    assert_eq!(site["requests"], 140735340806145u64, "{site}");
}

#[test]
fn a_launch_file_of_20000_launches_is_read_whole() {
    let mut text = String::new();
    for i in 0..20_000 {
        text += &format!(
            "[[launch]]\nname = \"l{i}\"\nfile = \"k.ptx\"\nkernel = \"k\"\ngrid = [1]\nblock = [32]\n\n"
        );
    }
    let toml = launch_file("ld.global.f32 %f1, [%rd2];", &text);
    // An unknown name lists every launch the file holds, without running any.
    let (ok, _, err) = warpscope(&["analyze", "--launches", &toml, "--only", "nope"]);
    assert!(!ok);
    let names = err
        .split("its launches: ")
        .nth(1)
        .unwrap_or_else(|| panic!("{err}"));
    let names: Vec<&str> = names.trim().split(", ").collect();
    assert_eq!(names.len(), 20_000);
    assert_eq!((names[0], names[19_999]), ("l0", "l19999"));
    // The last one runs; a duplicate at the end is named with both places.
    let (ok, out, err) = warpscope(&["analyze", "--launches", &toml, "--only", "l19999"]);
    assert!(
        ok && out.contains("== launch l19999 (") && out.contains(":139994:1)"),
        "{out}{err}"
    );
    text +=
        "[[launch]]\nname = \"l7\"\nfile = \"k.ptx\"\nkernel = \"k\"\ngrid = [1]\nblock = [32]\n";
    let toml = launch_file("ld.global.f32 %f1, [%rd2];", &text);
    let (ok, _, err) = warpscope(&["analyze", "--launches", &toml, "--only", "l0"]);
    assert!(!ok);
    assert!(
        err.contains(":140001:1: a second launch named 'l7' (the first is at ")
            && err.contains(":50:1)"),
        "{err}"
    );
}
