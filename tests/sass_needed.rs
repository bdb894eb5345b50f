//! nvdisasm runs only where its listing can change the figures
//! (`warpscope::sass::listing_needed`: `Program::sass_could_merge`, or a stack frame in
//! ptxas's report). Checked here against ptxas and nvdisasm on every kernel of the
//! repository at sm_75, sm_90 and sm_120: wherever the PTX proves that no merge is possible,
//! the real listing merges, drops and spills nothing. Needs a CUDA compiler (the
//! `VIRTUAL_ENV`'s wheels); without one it says so and passes.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use warpscope::sass::{instruction_lines, listing_needed, sass_insts};
use warpscope_simt::Program;
use warpscope_toolkit::{CompileOptions, SassTools, Target, Toolkit};

fn kernel_files() -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![PathBuf::from("tests/kernels"), PathBuf::from("examples")];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "cu") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// What one (file, target) gave: per entry, (name, could merge or has a stack frame,
/// the listing changed something, it made a wider instruction the PTX proves no group for,
/// the report).
type Entries = Vec<(String, bool, bool, bool, String)>;

fn check(tk: &Toolkit, tools: &SassTools, file: &Path, sm: &str) -> Entries {
    let target = Target {
        sm: sm.into(),
        note: None,
    };
    // Files this compiler refuses (texture references, host-only code) have nothing to check.
    let Ok(c) = tk.compile_ptx(file, &target, &CompileOptions::default()) else {
        return Vec::new();
    };
    let module = warpscope_ptx::parse(&c.ptx).expect("the compiler's PTX parses");
    let mut lines = Vec::new();
    for f in &module.functions {
        if let Some(body) = &f.body {
            instruction_lines(body, &mut lines);
        }
    }
    let Ok(listing) = tools.memory(&c.ptx, &lines, sm, &[]) else {
        return Vec::new();
    };
    assert!(listing.disassembled);
    let sass = sass_insts(&listing.memory);
    let mut out = Vec::new();
    for entry in module.functions.iter().filter(|f| f.is_entry) {
        // Entries the executor refuses are not analyzed at all.
        let Ok(mut prog) = Program::decode(&module, entry) else {
            continue;
        };
        let needed = listing_needed(&prog, &listing.resources);
        let r = prog.apply_sass(&sass);
        let changed = !r.groups.is_empty() || !r.reused.is_empty() || r.spills > 0;
        let unproven = !r.unproven.is_empty();
        out.push((
            entry.name.clone(),
            needed,
            changed,
            unproven,
            format!("{r:?}"),
        ));
    }
    out
}

#[test]
fn where_no_merge_is_possible_the_listing_changes_nothing() {
    let Ok(tk) = warpscope_toolkit::find(None) else {
        let _ = writeln!(
            std::io::stderr(),
            "where_no_merge_is_possible_the_listing_changes_nothing: skipped: no CUDA compiler"
        );
        return;
    };
    let tools = tk.sass_tools().expect("ptxas and nvdisasm beside nvcc");
    let jobs: Vec<(PathBuf, &str)> = kernel_files()
        .into_iter()
        .flat_map(|f| ["sm_75", "sm_90", "sm_120"].map(|sm| (f.clone(), sm)))
        .collect();
    let results: Vec<(PathBuf, &str, Entries)> = std::thread::scope(|s| {
        let halves: Vec<_> = jobs
            .chunks(jobs.len().div_ceil(2))
            .map(|part| {
                let (tk, tools) = (&tk, &tools);
                s.spawn(move || {
                    part.iter()
                        .map(|(f, sm)| (f.clone(), *sm, check(tk, tools, f, sm)))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        halves
            .into_iter()
            .flat_map(|h| h.join().expect("no panic"))
            .collect()
    });
    let (mut skipped, mut needed, mut changed) = (0, 0, 0);
    for (file, sm, entries) in &results {
        for (name, need, change, unproven, report) in entries {
            assert!(
                *need || !change,
                "{} {sm} {name}: no merge was possible, yet the listing changed: {report}",
                file.display()
            );
            // Not a figure (such an instruction runs as written either way), but the note
            // on it would be missing: none in this corpus.
            assert!(
                *need || !unproven,
                "{} {sm} {name}: the note on an unproven wider instruction would be lost: {report}",
                file.display()
            );
            if *need {
                needed += 1;
            } else {
                skipped += 1;
            }
            changed += usize::from(*change);
        }
    }
    eprintln!(
        "entries × targets: {skipped} without nvdisasm, {needed} with ({changed} changed by it)"
    );
    // The corpus has both kinds (measured: 429 without, 81 with, 27 changed).
    assert!(
        skipped > 300 && changed > 20,
        "{skipped} {needed} {changed}"
    );
    let naive = results
        .iter()
        .find(|(f, sm, _)| f.ends_with("examples/transpose.cu") && *sm == "sm_90")
        .and_then(|(_, _, e)| e.iter().find(|e| e.0.contains("transpose_naive")))
        .expect("examples/transpose.cu compiles");
    assert!(!naive.1, "the benchmark's transpose needs no listing");
    let tiled = results
        .iter()
        .find(|(f, sm, _)| f.ends_with("compiled/matmul_tiled.cu") && *sm == "sm_90")
        .and_then(|(_, _, e)| e.iter().find(|e| e.0.contains("matmul_rows")))
        .expect("matmul_tiled.cu compiles");
    assert!(
        tiled.1 && tiled.2,
        "ptxas merges the tile's loads: {}",
        tiled.3
    );
}

/// `warpscope` with its caches in `cache`: (success, standard output, standard error).
fn warpscope(args: &[&str], cache: &Path) -> (bool, String, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_warpscope"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("WARPSCOPE_CACHE_DIR", cache)
        .output()
        .expect("warpscope runs");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The SASS check's cached entries of `cache`: how many keep ptxas's report alone, how many
/// the listing.
fn sass_entries(cache: &Path) -> (usize, usize) {
    let dir = cache.join("sass");
    let texts: Vec<String> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| std::fs::read_to_string(e.path()).ok())
        .collect();
    let alone = texts
        .iter()
        .filter(|t| t.contains("not disassembled"))
        .count();
    (alone, texts.len() - alone)
}

/// End to end on the benchmark's transpose, cold: analyze keeps ptxas's report alone (no
/// merge is possible); annotate, which shows the SASS, disassembles; analyze then reads the
/// listing and gives the same JSON as without it.
#[test]
fn analyze_skips_the_listing_that_annotate_shows() {
    if warpscope_toolkit::find(None).is_err() {
        let _ = writeln!(
            std::io::stderr(),
            "analyze_skips_the_listing_that_annotate_shows: skipped: no CUDA compiler"
        );
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let cache = tmp.path();
    let launch = [
        "examples/transpose.cu",
        "--kernel",
        "transpose_naive",
        "--grid",
        "8,8",
        "--block",
        "32,8",
        "--arg",
        "width=256",
        "--arg",
        "height=256",
        "--cc",
        "9.0",
    ];
    let analyze = [&["analyze"][..], &launch, &["--format", "json"]].concat();
    let (ok, cold, err) = warpscope(&analyze, cache);
    assert!(ok, "{err}");
    assert!(err.contains("SASS checked"), "{err}");
    assert_eq!(sass_entries(cache), (1, 0));
    let (ok, text, err) = warpscope(
        &[&["annotate"][..], &launch, &["--show", "sass"]].concat(),
        cache,
    );
    assert!(ok, "{err}");
    assert!(text.contains("LDG.E"), "{text}");
    assert_eq!(sass_entries(cache), (0, 1));
    let (ok, warm, err) = warpscope(&analyze, cache);
    assert!(ok, "{err}");
    assert_eq!(cold, warm);
    let v: serde_json::Value = serde_json::from_str(&warm).unwrap();
    assert_eq!(
        v["resources"]["registers_per_thread"], 20,
        "ptxas's report: {}",
        v["resources"]
    );
}
