//! Fuzz target: the PTX parser, decoder and executor: one small launch under step and memory caps.
//! An error is fine; a panic, an abort, a time-out or running out of memory is a bug.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = warpscope_simt::fuzzing::run_ptx_bytes(data);
});
