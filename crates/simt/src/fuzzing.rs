//! Entry point of the PTX fuzz target (`fuzz/`, cargo-fuzz) and of its corpus replay
//! (`tests/fuzz_corpus.rs`): a PTX file's raw bytes are parsed (`warpscope-ptx`), the first
//! `.entry` decoded ([`Program::decode`]) and one small launch of it run ([`Program::run`])
//! under small step and memory caps, so that a runaway loop or a huge allocation ends in
//! [`Error::Runaway`] or a memory-cap error quickly; then the SASS side's rules on it
//! ([`Program::sass_could_merge`], [`Program::apply_sass`]). Bad input is an `Err`; a panic, an abort
//! or a hang is a bug (issue 21).

use crate::decode::window;
use crate::sass::SassInst;
use crate::{Alloc, Launch, Program};
use warpscope_init::Contents;

/// The launch [`run_ptx_bytes`] runs: blocks per grid (x).
pub const FUZZ_GRID: u32 = 2;
/// Threads per block (x): two warps, so that barriers and shared memory see more than one.
pub const FUZZ_BLOCK: u32 = 64;
/// Warp instructions one block may execute ([`Launch::max_steps`]).
pub const FUZZ_MAX_STEPS: u64 = 20_000;
/// Bytes the memory images may hold ([`Launch::max_memory`]): 64 MiB.
pub const FUZZ_MAX_MEMORY: u64 = 64 << 20;
/// Bytes of each pointer parameter's allocation (out-of-bounds accesses are errors).
pub const FUZZ_ALLOC_BYTES: u64 = 1 << 16;

/// Parses `bytes` as PTX, decodes its first `.entry` and runs one launch of [`FUZZ_GRID`]
/// blocks of [`FUZZ_BLOCK`] threads on one thread: every 8-byte parameter points to an
/// allocation of [`FUZZ_ALLOC_BYTES`] zero bytes, every other parameter is zero bytes;
/// [`FUZZ_MAX_STEPS`] and [`FUZZ_MAX_MEMORY`] bound the run. Returns the warp-level memory
/// accesses executed.
///
/// Errors (as text): bytes that are not UTF-8, a module that does not parse or holds no
/// `.entry`, and every error of [`Program::decode`] and [`Program::run`].
pub fn run_ptx_bytes(bytes: &[u8]) -> Result<u64, String> {
    let text = std::str::from_utf8(bytes).map_err(|e| format!("not UTF-8: {e}"))?;
    let module = warpscope_ptx::parse(text).map_err(|e| e.to_string())?;
    let entry = module
        .functions
        .iter()
        .find(|f| f.is_entry)
        .ok_or("no .entry in the module")?;
    let prog = Program::decode(&module, entry).map_err(|e| e.to_string())?;
    let mut launch = Launch {
        grid: [FUZZ_GRID, 1, 1],
        block: [FUZZ_BLOCK, 1, 1],
        max_steps: FUZZ_MAX_STEPS,
        max_memory: FUZZ_MAX_MEMORY,
        threads: 1,
        explicit_cluster: prog.explicit_cluster,
        findings: Some(Default::default()),
        ..Default::default()
    };
    if let Some(d) = prog.cluster_dims {
        launch.cluster = d.map(|x| x as u32);
    }
    for (k, p) in prog.params.iter().enumerate() {
        if p.bytes == 8 {
            let base = window::ALLOC_BASE + k as u64 * window::ALLOC_SPACING;
            launch.allocs.push((
                Alloc {
                    name: p.name.clone(),
                    base,
                    size: Some(FUZZ_ALLOC_BYTES),
                },
                Contents::Zero,
            ));
            launch.args.push(base.to_le_bytes().to_vec());
        } else {
            let n = usize::try_from(p.bytes.min(1 << 16)).unwrap_or(0);
            launch.args.push(vec![0; n]);
        }
    }
    let mut accesses = 0u64;
    prog.run(&launch, &mut |_, _, _| accesses += 1)
        .map_err(|e| e.to_string())?;
    // The SASS side on the same PTX: the rule that decides whether nvdisasm runs, and the
    // merges a listing of one 16-byte instruction at every load's and store's line allows,
    // run when they change anything.
    let _ = prog.sass_could_merge();
    let listing: Vec<SassInst> = prog
        .sites
        .iter()
        .map(|s| SassInst {
            ptx_line: s.ptx_line,
            width: 16,
            store: s.ptx.starts_with("st"),
            local_offset: None,
            spill_marked: false,
        })
        .collect();
    let mut merged = prog.clone();
    let r = merged.apply_sass(&listing);
    if !r.groups.is_empty() || !r.reused.is_empty() {
        merged
            .run(&launch, &mut |_, _, _| accesses += 1)
            .map_err(|e| e.to_string())?;
    }
    Ok(accesses)
}
