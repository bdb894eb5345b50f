//! Bad input: every error says where (LINE:COL) and what was expected; nothing panics.

mod common;

use common::{error, fixture};

const HEAD: &str = ".version 8.0\n.target sm_90\n.address_size 64\n";

#[test]
fn truncated_file() {
    let text = fixture("transpose.ptx");
    // Cut inside transpose_naive's `ld.global.f32 %f1, [%rd6];` (line 104) after `%rd6`.
    let naive = text.find(".entry _Z15transpose_naive").unwrap();
    let cut = naive + text[naive..].find("[%rd6]").unwrap() + "[%rd6".len();
    let e = error(&text[..cut]);
    assert_eq!(
        e,
        "104:27: expected ']' after the address, found end of input"
    );
    // Cut after a whole statement: the body's `{` (line 77) is never closed.
    let cut = naive + text[naive..].find("ld.global.f32").unwrap();
    assert_eq!(
        error(&text[..cut]),
        "104:2: expected '}' to close the block opened at 77:1, found end of input"
    );
    // Cut inside the entry's parameter list.
    let cut = text.find("_Z15transpose_naivePfPKfii_param_1").unwrap();
    assert_eq!(
        error(&text[..cut]),
        "73:14: expected the variable's name, found end of input"
    );
}

#[test]
fn bad_operands() {
    let body = |ins: &str| format!("{HEAD}.visible .entry e()\n{{\n\t{ins}\n}}\n");
    assert_eq!(
        error(&body("add.s32 %r1, %r2, ;")),
        "6:20: expected an operand, found ';'"
    );
    assert_eq!(
        error(&body("ld.global.f32 %f1, [%rd1+%r2];")),
        "6:27: expected an integer offset, found register '%r2'"
    );
    assert_eq!(
        error(&body("mov.u32 %r1 %r2;")),
        "6:14: expected ',' or ';' after an operand, found register '%r2'"
    );
    assert_eq!(
        error(&body("mov.u32 %r1, 99999999999999999999;")),
        "6:15: integer literal '99999999999999999999' does not fit in 64 bits"
    );
    assert_eq!(
        error(&body("mov.u32 %r1, -0x8000000000000001;")),
        "6:16: integer literal '-0x8000000000000001' does not fit in 64 bits"
    );
    assert_eq!(
        error(&body("mov.f32 %f1, 0f3F80;")),
        "6:15: malformed float literal '0f3F80': expected exactly 8 hex digits after '0f'"
    );
    assert_eq!(
        error(&body("mov.u32 %r1, 09;")),
        "6:15: malformed number '09'"
    );
    assert_eq!(
        error(&body("@ 5 bra L;")),
        "6:4: expected a predicate register after '@', found number '5'"
    );
    assert_eq!(
        error(&body(".reg .b32 %r<99999999999>;")),
        "6:15: the register count '99999999999' does not fit in 32 bits"
    );
    assert_eq!(
        error(&body(".loc 1 2\n\tret;")),
        "7:2: expected the .loc column, found identifier 'ret'"
    );
    assert_eq!(
        error(&body(".reg %r1;")),
        "6:7: expected a type after .reg (.b32, .f32, .u64, .pred, …), found register '%r1'"
    );
}

#[test]
fn unknown_tokens() {
    assert_eq!(
        error(&format!("{HEAD}#include <x>\n")),
        "4:1: unexpected character '#': expected a PTX token"
    );
    assert_eq!(
        error(".version 8.0\n.file 1 \"abc\n"),
        "2:9: unterminated string: expected '\"' before the end of the line"
    );
    assert_eq!(
        error(".version 8.0 /* open\n\n"),
        "1:14: unterminated comment: expected '*/'"
    );
    assert_eq!(
        error(&format!(
            "{HEAD}.visible .entry e()\n{{\n  mov.u32 %r1, `x`;\n}}"
        )),
        "6:16: unexpected character '`': expected a PTX token"
    );
    assert_eq!(error(&format!("{HEAD}ret;\n")), "4:1: expected a directive (.version, .target, .entry, .func, .global, …), found identifier 'ret'");
}

#[test]
fn unbalanced_braces() {
    assert_eq!(
        error(&format!("{HEAD}.visible .entry e()\n{{\n\tret;\n}}\n}}\n")),
        "8:1: expected a directive (.version, .target, .entry, .func, .global, …), found '}'"
    );
    assert_eq!(
        error(&format!(
            "{HEAD}.visible .entry e()\n{{\n\t{{\n\tret;\n}}\n"
        )),
        "9:1: expected '}' to close the block opened at 5:1, found end of input"
    );
    assert_eq!(
        error(&format!("{HEAD}.global .u32 a[2] = {{1, 2;\n")),
        "4:26: expected ',' or '}' in the initializer, found ';'"
    );
    assert_eq!(
        error(&format!("{HEAD}.section .debug_str {{ .b8 0\n")),
        "5:1: expected '}' to close the .section at 4:1, found end of input"
    );
    assert_eq!(
        error(&format!(
            "{HEAD}.visible .entry e()\n{{\n\tst.global.v2.f32 [%rd1], {{%f1, %f2;\n}}\n"
        )),
        "6:36: expected ',' or '}' in the operand list, found ';'"
    );
}

#[test]
fn deep_nesting_is_an_error_not_a_crash() {
    // The body is level 1; the 256th nested `{` would be level 257.
    let text = format!("{HEAD}.visible .entry e()\n{}", "{".repeat(100_000));
    assert_eq!(
        error(&text),
        "5:257: nesting deeper than 256 levels: expected fewer nested braces"
    );
    let text = format!("{HEAD}.global .u32 a = {}1", "{".repeat(100_000));
    assert_eq!(
        error(&text),
        "4:274: nesting deeper than 256 levels: expected fewer nested braces"
    );
    let text = format!(
        "{HEAD}.visible .entry e()\n{{\n and.pred %p1, {}%p2;\n}}",
        "!".repeat(100_000)
    );
    assert_eq!(
        error(&text),
        "6:271: nesting deeper than 256 levels: expected fewer nested braces"
    );
    let text = format!(
        "{HEAD}.visible .entry e()\n{{\n mov.b64 %rd1, {}",
        "{".repeat(100_000)
    );
    assert_eq!(
        error(&text),
        "6:271: nesting deeper than 256 levels: expected fewer nested braces"
    );
    // 255 nested blocks inside the body are fine.
    let ok = format!(
        "{HEAD}.visible .entry e()\n{{{}ret;{}}}",
        "{".repeat(255),
        "}".repeat(255)
    );
    assert!(warpscope_ptx::parse(&ok).is_ok());
}

#[test]
fn no_prefix_of_a_real_file_panics() {
    for name in ["features.ptx", "triton_add.ptx"] {
        let text = fixture(name);
        for cut in (0..text.len())
            .filter(|&i| text.is_char_boundary(i))
            .step_by(3)
        {
            let _ = warpscope_ptx::parse(&text[..cut]);
        }
    }
}

#[test]
fn garbage_spliced_into_a_real_file_gives_errors() {
    let text = fixture("features.ptx");
    let junk = [
        "}", "{", "[", "(", ",", ";", "@", "!", "-", "|", "<", ".b32", "0f", "0x", "\"", "%r1", "_",
    ];
    for (n, at) in (0..text.len()).step_by(97).enumerate() {
        if !text.is_char_boundary(at) {
            continue;
        }
        let spliced = format!("{}{}{}", &text[..at], junk[n % junk.len()], &text[at..]);
        if let Err(e) = warpscope_ptx::parse(&spliced) {
            assert!(e.line >= 1 && e.col >= 1 && !e.message.is_empty());
        }
    }
}
