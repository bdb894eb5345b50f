//! Fuzz target: the launch file reader of `--launches` and `warpscope check`
//! (crates/warpscope/src/launch_file.rs): TOML, its checks, budgets, the launches' flags.
//! An error is fine; a panic, an abort, a time-out or running out of memory is a bug.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = warpscope::fuzzing::launch_file_bytes(data);
});
