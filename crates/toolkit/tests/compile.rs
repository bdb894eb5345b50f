//! Compiles with a real nvcc: the one `WARPSCOPE_TEST_NVCC` names, else the pip wheel of
//! the development venv `/work/cuda-venv`, else the one of the active `VIRTUAL_ENV` (which
//! `scripts/test.sh` sets). Without any (or with `WARPSCOPE_TEST_NVCC` set to the empty
//! string), each test prints "skipped: no CUDA compiler" and passes.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use warpscope_toolkit::{find, CompileOptions, Source, Toolkit, ToolkitError};

const VENV_NVCC: &[&str] = &[
    "/work/cuda-venv/lib/python3.11/site-packages/nvidia/cu13/bin/nvcc",
    "/work/cuda-venv/lib/python3.11/site-packages/nvidia/cuda_nvcc/bin/nvcc",
];

fn toolkit(test: &str) -> Option<Toolkit> {
    let path = match std::env::var_os("WARPSCOPE_TEST_NVCC") {
        Some(p) if p.is_empty() => None,
        Some(p) => Some(PathBuf::from(p)),
        None => VENV_NVCC
            .iter()
            .map(PathBuf::from)
            .find(|p| p.is_file())
            .or_else(virtual_env_nvcc),
    };
    let Some(path) = path else {
        // Straight to the stream, past the test harness's capture, so that it shows.
        let _ = writeln!(
            std::io::stderr(),
            "{test}: skipped: no CUDA compiler (set WARPSCOPE_TEST_NVCC)"
        );
        return None;
    };
    match find(Some(&path)) {
        Ok(tk) => Some(tk),
        Err(e) => panic!("WARPSCOPE_TEST_NVCC / venv nvcc does not work: {e}"),
    }
}

/// `$VIRTUAL_ENV/lib/python3.*/site-packages/nvidia/cu*/bin/nvcc`, if there is one.
fn virtual_env_nvcc() -> Option<PathBuf> {
    let lib = PathBuf::from(std::env::var_os("VIRTUAL_ENV")?).join("lib");
    let subdirs = |d: &Path| -> Vec<PathBuf> {
        let mut v: Vec<PathBuf> = std::fs::read_dir(d)
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path())
            .collect();
        v.sort();
        v
    };
    subdirs(&lib)
        .iter()
        .flat_map(|py| subdirs(&py.join("site-packages/nvidia")))
        .map(|cu| cu.join("bin/nvcc"))
        .find(|p| p.is_file())
}

const KERNEL: &str = r#"#include <cstdio>
#include "scale.h"

__global__ void scale(float* a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) a[i] = SCALE * a[i];
}

#if defined(WITH_EXTRA)
__global__ void extra_kernel(float* a) { a[threadIdx.x] += 1.0f; }
#endif

int main() {
    float* d;
    cudaMalloc(&d, 1024 * sizeof(float));
    scale<<<4, 256>>>(d, 1024);
    cudaDeviceSynchronize();
    printf("done\n");
    return 0;
}
"#;

fn write_kernel(dir: &Path) -> PathBuf {
    std::fs::create_dir_all(dir.join("inc")).unwrap();
    std::fs::write(
        dir.join("inc/scale.h"),
        "#include \"factor.h\"\n#define SCALE FACTOR\n",
    )
    .unwrap();
    std::fs::write(dir.join("inc/factor.h"), "#define FACTOR 2.0f\n").unwrap();
    let file = dir.join("kernel.cu");
    std::fs::write(&file, KERNEL).unwrap();
    file
}

#[test]
fn found_toolkit_is_described() {
    let Some(tk) = toolkit("found_toolkit_is_described") else {
        return;
    };
    assert_eq!(tk.found_via, Source::Flag);
    assert!(
        tk.version.split('.').all(|p| p.parse::<u32>().is_ok()),
        "{}",
        tk.version
    );
    assert!(tk.supported_archs.contains(&90), "{:?}", tk.supported_archs);
    let t = tk.target_for_cc(9, 0);
    assert_eq!((t.sm.as_str(), t.note.is_none()), ("sm_90", true));
    eprintln!(
        "{tk}; archs {:?}; includes {:?}",
        tk.supported_archs, tk.include_dirs
    );
}

#[test]
fn compiles_caches_and_follows_headers() {
    let Some(tk) = toolkit("compiles_caches_and_follows_headers") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let file = write_kernel(&tmp.path().join("src"));
    let cache = tmp.path().join("cache");
    let opts = CompileOptions {
        include_dirs: vec![tmp.path().join("src/inc")],
        ..Default::default()
    };
    let target = tk.target_for_cc(8, 6);

    let first = tk
        .compile_ptx_with_cache(&file, &target, &opts, Some(&cache))
        .unwrap();
    assert!(!first.cached);
    assert_eq!(first.cache_error, None);
    assert!(first.ptx.contains(".entry"), "{}", first.ptx);
    assert!(first.ptx.contains(".loc"), "no line info:\n{}", first.ptx);
    assert!(first.ptx.contains(".target sm_86"));
    assert!(first.ptx.contains("_Z5scalePfi"));
    assert!(
        first.command.contains("-ptx -lineinfo -arch=sm_86"),
        "{}",
        first.command
    );

    let second = tk
        .compile_ptx_with_cache(&file, &target, &opts, Some(&cache))
        .unwrap();
    assert!(second.cached);
    assert_eq!(second.ptx, first.ptx);
    eprintln!(
        "compile {:.3} s, cached {:.6} s",
        first.seconds, second.seconds
    );

    // A header two levels down, found through -I, changes: recompile.
    std::fs::write(tmp.path().join("src/inc/factor.h"), "#define FACTOR 3.0f\n").unwrap();
    let third = tk
        .compile_ptx_with_cache(&file, &target, &opts, Some(&cache))
        .unwrap();
    assert!(!third.cached);
    assert_ne!(third.ptx, first.ptx, "3.0f should appear in the PTX");

    // Another target is another entry.
    let sm90 = tk.compile_ptx_with_cache(&file, &tk.target_for_cc(9, 0), &opts, Some(&cache));
    let sm90 = sm90.unwrap();
    assert!(!sm90.cached && sm90.ptx.contains(".target sm_90"));

    // No cache at all still compiles.
    let none = tk
        .compile_ptx_with_cache(&file, &target, &opts, None)
        .unwrap();
    assert!(!none.cached);
}

#[test]
fn defines_reach_the_compiler() {
    let Some(tk) = toolkit("defines_reach_the_compiler") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let file = write_kernel(tmp.path());
    let cache = tmp.path().join("cache");
    let target = tk.target_for_cc(9, 0);
    let mut opts = CompileOptions {
        include_dirs: vec![tmp.path().join("inc")],
        std: Some("c++17".into()),
        opt_level: Some("3".into()),
        ..Default::default()
    };
    let plain = tk
        .compile_ptx_with_cache(&file, &target, &opts, Some(&cache))
        .unwrap();
    assert!(!plain.ptx.contains("extra_kernel"));
    opts.defines.push("WITH_EXTRA".into());
    let with = tk
        .compile_ptx_with_cache(&file, &target, &opts, Some(&cache))
        .unwrap();
    assert!(!with.cached, "a define must change the key");
    assert!(with.ptx.contains("extra_kernel"), "{}", with.ptx);
    assert!(with.command.contains("-DWITH_EXTRA"));
}

#[test]
fn an_unwritable_cache_does_not_fail_the_compile() {
    let Some(tk) = toolkit("an_unwritable_cache_does_not_fail_the_compile") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let file = write_kernel(tmp.path());
    // A file where the cache folder should be.
    let blocker = tmp.path().join("blocker");
    std::fs::write(&blocker, "").unwrap();
    let opts = CompileOptions {
        include_dirs: vec![tmp.path().join("inc")],
        ..Default::default()
    };
    let got = tk
        .compile_ptx_with_cache(
            &file,
            &tk.target_for_cc(8, 0),
            &opts,
            Some(&blocker.join("ptx")),
        )
        .unwrap();
    assert!(!got.cached && got.ptx.contains(".entry"));
    assert!(got.cache_error.is_some());
}

#[test]
fn a_syntax_error_shows_command_and_compiler_output() {
    let Some(tk) = toolkit("a_syntax_error_shows_command_and_compiler_output") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("broken.cu");
    std::fs::write(&file, "__global__ void k(float* a) { a[0] = 1.0f }\n").unwrap();
    let err = tk
        .compile_ptx_with_cache(
            &file,
            &tk.target_for_cc(9, 0),
            &CompileOptions::default(),
            None,
        )
        .unwrap_err();
    let ToolkitError::Compile { command, stderr } = &err else {
        panic!("expected a compile error, got {err}");
    };
    assert!(stderr.contains("error"), "{stderr}");
    let text = err.to_string();
    assert!(text.contains(command.as_str()), "{text}");
    assert!(text.contains("broken.cu"), "{text}");
    assert!(
        text.lines()
            .any(|l| l.contains("error") && l.contains("broken.cu")),
        "{text}"
    );
    eprintln!("{text}");
}

#[test]
fn a_missing_source_is_a_read_error() {
    let Some(tk) = toolkit("a_missing_source_is_a_read_error") else {
        return;
    };
    let err = tk
        .compile_ptx_with_cache(
            Path::new("/no/such/kernel.cu"),
            &tk.target_for_cc(9, 0),
            &CompileOptions::default(),
            None,
        )
        .unwrap_err();
    assert!(matches!(err, ToolkitError::Read { .. }), "{err}");
}

#[test]
fn a_bogus_explicit_compiler_is_a_clear_error() {
    let err = find(Some(Path::new("/no/such/dir/nvcc"))).unwrap_err();
    assert!(matches!(err, ToolkitError::ExplicitMissing { .. }));
    assert_eq!(err.to_string(), "--nvcc /no/such/dir/nvcc: no such file");
    // A file that exists but is not a program.
    let tmp = tempfile::tempdir().unwrap();
    let not_nvcc = tmp.path().join("nvcc");
    std::fs::write(&not_nvcc, "just text").unwrap();
    let err = find(Some(&not_nvcc)).unwrap_err();
    assert!(matches!(err, ToolkitError::NotRunnable { .. }), "{err}");
    assert!(
        err.to_string().contains("does not run as a CUDA compiler"),
        "{err}"
    );
}

/// The entries of a cache folder, by extension.
fn entries(cache: &Path, ext: &str) -> Vec<PathBuf> {
    std::fs::read_dir(cache)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == ext))
        .collect()
}

/// A truncated entry and a garbage one are rebuilt with a note, never read as PTX; nothing
/// of nvcc's scratch is left in the cache folder.
#[test]
fn a_corrupt_entry_is_rebuilt_with_a_note() {
    let Some(tk) = toolkit("a_corrupt_entry_is_rebuilt_with_a_note") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let file = write_kernel(&tmp.path().join("src"));
    let cache = tmp.path().join("cache");
    let opts = CompileOptions {
        include_dirs: vec![tmp.path().join("src/inc")],
        ..Default::default()
    };
    let target = tk.target_for_cc(9, 0);
    let first = tk
        .compile_ptx_with_cache(&file, &target, &opts, Some(&cache))
        .unwrap();
    let found = entries(&cache, "ptx");
    assert_eq!(found.len(), 1, "one entry expected: {found:?}");
    let entry = found[0].clone();
    assert_eq!(
        std::fs::read_dir(&cache).unwrap().count(),
        1,
        "scratch left"
    );
    let sealed = std::fs::read_to_string(&entry).unwrap();
    // Truncated in the middle of the PTX.
    std::fs::write(&entry, &sealed[..sealed.len() / 2]).unwrap();
    let again = tk
        .compile_ptx_with_cache(&file, &target, &opts, Some(&cache))
        .unwrap();
    assert!(!again.cached);
    assert_eq!(again.ptx, first.ptx);
    let note = again.cache_note.unwrap();
    assert!(note.contains("was corrupt ("), "{note}");
    assert!(
        note.contains(" bytes where ") && note.ends_with("): rebuilt"),
        "{note}"
    );
    // Rebuilt in place: the next call reads it.
    let cached = tk
        .compile_ptx_with_cache(&file, &target, &opts, Some(&cache))
        .unwrap();
    assert!(cached.cached && cached.cache_note.is_none());
    // Garbage (bytes that are not even text).
    std::fs::write(&entry, [0xffu8, 0xfe, 0x00, 0x12]).unwrap();
    let g = tk
        .compile_ptx_with_cache(&file, &target, &opts, Some(&cache))
        .unwrap();
    assert_eq!(g.ptx, first.ptx);
    assert!(g
        .cache_note
        .unwrap()
        .contains("was corrupt (not UTF-8 text): rebuilt"));
}

/// [`toolkit`], when NVRTC loads too; else the test prints that it is skipped.
#[cfg(feature = "nvrtc")]
fn toolkit_with_nvrtc(test: &str) -> Option<Toolkit> {
    let tk = toolkit(test)?;
    if warpscope_toolkit::nvrtc::version().is_err() {
        let _ = writeln!(std::io::stderr(), "{test}: skipped: no NVRTC");
        return None;
    }
    Some(tk)
}

/// The opcodes of the PTX's memory instructions, in order (what warpscope's figures come
/// from; registers and `.loc` positions aside).
#[cfg(feature = "nvrtc")]
fn memory_opcodes(ptx: &str) -> Vec<String> {
    let code = ptx.split("\t.section\t.debug").next().unwrap_or(ptx);
    code.lines()
        // The opcode: the first word after an optional `@%p` guard.
        .filter_map(|l| l.split_whitespace().find(|w| !w.starts_with('@')))
        .filter(|op| {
            [
                "ld.", "st.", "atom.", "red.", "cp.", "tex.", "ldmatrix", "stmatrix",
            ]
            .iter()
            .any(|p| op.starts_with(p))
        })
        .map(String::from)
        .collect()
}

/// NVRTC compiles device-only code in-process with nvcc's memory instructions (the
/// arithmetic may differ: `cuda_bf16.hpp` rounds without branches under NVRTC on sm_75), and
/// a file with host code (which NVRTC refuses) still compiles, through nvcc.
#[cfg(feature = "nvrtc")]
#[test]
fn nvrtc_compiles_device_code_as_nvcc_does() {
    let Some(tk) = toolkit_with_nvrtc("nvrtc_compiles_device_code_as_nvcc_does") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    for (name, defines) in [
        ("examples/transpose.cu", vec![]),
        ("tests/kernels/compiled/matmul_tiled.cu", vec![]),
        ("tests/kernels/compiled/spill.cu", vec![]),
        ("tests/kernels/modern/bf16.cu", vec![]),
        (
            "tests/kernels/h100_ground_truth.cu",
            vec!["N=4".to_string()],
        ),
    ] {
        let file = root.join(name);
        for sm in [(7, 5), (9, 0), (12, 0)] {
            let target = tk.target_for_cc(sm.0, sm.1);
            let mut opts = CompileOptions {
                defines: defines.clone(),
                ..Default::default()
            };
            let fast = tk
                .compile_ptx_with_cache(&file, &target, &opts, Some(&tmp.path().join("a")))
                .unwrap();
            assert!(
                fast.command.starts_with("NVRTC ") && fast.by_nvrtc && !fast.cached,
                "{name}: {}",
                fast.command
            );
            // The cached entry still says NVRTC made it.
            let again = tk
                .compile_ptx_with_cache(&file, &target, &opts, Some(&tmp.path().join("a")))
                .unwrap();
            assert!(again.cached && again.by_nvrtc, "{}", again.command);
            assert!(
                again.command.starts_with("NVRTC (cached: "),
                "{}",
                again.command
            );
            assert_eq!(again.ptx, fast.ptx);
            opts.nvcc_only = true;
            let slow = tk
                .compile_ptx_with_cache(&file, &target, &opts, Some(&tmp.path().join("a")))
                .unwrap();
            assert!(!slow.cached, "nvcc_only must have its own cache entry");
            assert!(
                !slow.by_nvrtc && !slow.command.starts_with("NVRTC"),
                "{}",
                slow.command
            );
            let (a, b) = (memory_opcodes(&fast.ptx), memory_opcodes(&slow.ptx));
            assert!(a.len() >= 2, "{name}: {a:?}");
            assert_eq!(a, b, "{name} {}: NVRTC and nvcc differ", target.sm);
        }
    }
    // Host code: NVRTC refuses `main` and <cstdio>, nvcc compiles it.
    let file = write_kernel(tmp.path());
    let opts = CompileOptions {
        include_dirs: vec![tmp.path().join("inc")],
        ..Default::default()
    };
    let c = tk
        .compile_ptx_with_cache(&file, &tk.target_for_cc(9, 0), &opts, None)
        .unwrap();
    assert!(!c.command.starts_with("NVRTC"), "{}", c.command);
    assert!(c.ptx.contains(".entry _Z5scalePfi"), "{}", c.ptx);
}

/// NVRTC instantiates a template kernel by name (`offset<float>`), where nvcc would need a
/// file that takes its address; without NVRTC (nvcc_only) there is no result.
#[cfg(feature = "nvrtc")]
#[test]
fn nvrtc_instantiates_a_template_by_name() {
    let Some(tk) = toolkit_with_nvrtc("nvrtc_instantiates_a_template_by_name") else {
        return;
    };
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/harris.cu");
    let target = tk.target_for_cc(9, 0);
    let instances = ["offset<float>".to_string()];
    let c = tk
        .compile_ptx_instantiating(&file, &target, &CompileOptions::default(), &instances)
        .unwrap()
        .expect("NVRTC takes harris.cu");
    assert!(c.by_nvrtc);
    assert!(c.ptx.contains(".entry _Z6offsetIfEvPT_i("), "{}", c.ptx);
    // Only the instance asked for: offset<double> is not emitted.
    assert!(!c.ptx.contains("_Z6offsetIdEvPT_i"));
    let nvcc_only = CompileOptions {
        nvcc_only: true,
        ..Default::default()
    };
    assert!(tk
        .compile_ptx_instantiating(&file, &target, &nvcc_only, &instances)
        .unwrap()
        .is_none());
}

/// `SassTools::memory_if`: nvdisasm runs only where the caller asks given ptxas's report; the
/// report alone is cached as such, a later call that needs the listing disassembles, and a
/// cached listing serves every later call.
#[test]
fn the_listing_is_made_only_where_it_is_asked_for() {
    let Some(tk) = toolkit("the_listing_is_made_only_where_it_is_asked_for") else {
        return;
    };
    let tools = tk.sass_tools().expect("ptxas and nvdisasm beside nvcc");
    // A comment unique to this run: a key no earlier run cached.
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    let ptx = format!(
        "// run {stamp} {}\n.version 8.0\n.target sm_90\n.address_size 64\n\
         .visible .entry copy(.param .u64 p)\n{{\n.reg .b32 %r<2>;\n.reg .b64 %rd<3>;\n\
         ld.param.u64 %rd1, [p];\ncvta.to.global.u64 %rd2, %rd1;\nld.global.u32 %r1, [%rd2];\n\
         st.global.u32 [%rd2+4], %r1;\nret;\n}}\n",
        std::process::id()
    );
    let lines = [9, 10, 11, 12, 13];
    let asked = std::cell::Cell::new(0);
    let never = |r: &[warpscope_toolkit::FunctionResources]| {
        asked.set(asked.get() + 1);
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(r[0].function, "copy");
        false
    };
    let report = tools.memory_if(&ptx, &lines, "sm_90", &[], &never).unwrap();
    assert!(!report.disassembled);
    assert!(report.memory.is_empty() && report.instructions.is_empty());
    assert!(report.resources[0].registers > 0, "{:?}", report.resources);
    assert_eq!(asked.get(), 1);
    // Cached without the listing: asked again, not assembled again.
    let again = tools.memory_if(&ptx, &lines, "sm_90", &[], &never).unwrap();
    assert!(!again.disassembled);
    assert_eq!(again.resources, report.resources);
    assert_eq!(asked.get(), 2);
    // Needed now: disassembled, the load at line 11 and the store at line 12.
    let full = tools.memory(&ptx, &lines, "sm_90", &[]).unwrap();
    assert!(full.disassembled);
    let mem: Vec<(u32, u32, bool)> = full
        .memory
        .iter()
        .map(|m| (m.ptx_line, m.width, m.store))
        .collect();
    assert_eq!(mem, [(11, 4, false), (12, 4, true)]);
    assert_eq!(full.resources, report.resources);
    // The cached listing serves a call that does not need it, without asking.
    let cached = tools.memory_if(&ptx, &lines, "sm_90", &[], &never).unwrap();
    assert!(cached.disassembled);
    assert_eq!(cached.memory.len(), 2);
    assert_eq!(asked.get(), 2);
}
