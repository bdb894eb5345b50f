//! Fuzz target: the JSON reader of `warpscope diff` (crates/warpscope/src/diff.rs).
//! An error is fine; a panic, an abort, a time-out or running out of memory is a bug.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = warpscope::fuzzing::diff_json_bytes(data);
});
