//! Fuzz target: the .npy and raw data reader of `--init NAME=file:PATH` (crates/init).
//! An error is fine; a panic, an abort, a time-out or running out of memory is a bug.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = warpscope_init::fuzzing::read_data_bytes(data);
});
