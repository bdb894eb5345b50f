//! Fuzz target: the host-code launch finder (crates/cuda/src/launches.rs).
//! An error is fine; a panic, an abort, a time-out or running out of memory is a bug.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = warpscope_cuda::fuzzing::host_launches_bytes(data);
});
