//! Sets `cfg(gpu_present)` when this machine has an NVIDIA GPU and driver, so the tests that
//! need one are marked ignored (not passed) where there is none. `WARPSCOPE_GPU_TESTS=1` (or
//! `0`) overrides the detection; `cargo test -- --include-ignored` runs them anyway.

use std::path::Path;

fn main() {
    println!("cargo::rustc-check-cfg=cfg(gpu_present)");
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-env-changed=WARPSCOPE_GPU_TESTS");
    let present = match std::env::var("WARPSCOPE_GPU_TESTS").as_deref() {
        Ok("1") => true,
        Ok("0") => false,
        // The driver lists each GPU it manages under /proc; /dev/nvidia0 is its first device.
        _ => {
            Path::new("/dev/nvidia0").exists()
                || std::fs::read_dir("/proc/driver/nvidia/gpus")
                    .map(|mut d| d.next().is_some())
                    .unwrap_or(false)
        }
    };
    if present {
        println!("cargo::rustc-cfg=gpu_present");
    }
}
