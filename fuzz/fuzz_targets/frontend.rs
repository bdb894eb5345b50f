//! Fuzz target: the C++ front end: parse, then lower up to 3 kernels to its own PTX.
//! An error is fine; a panic, an abort, a time-out or running out of memory is a bug.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = warpscope_cuda::fuzzing::lower_source(data);
});
