//! racecheck and initcheck on shared memory (tests/kernels/findings/races.cu): a race between
//! two warps of a block with no barrier between them is one finding per pair of lines and
//! hazard, a read of shared memory no thread of the block wrote one per line, each with the
//! counts worked out below from the kernels; the fixed kernels give none. Both front ends
//! give the same lines and counts.

mod common;
use common::{findings, frontends, warpscope};
use serde_json::Value;

const RACES: &str = "tests/kernels/findings/races.cu";

/// `analyze RACES --kernel K --grid G --block B --frontend FE --format json` and extra
/// arguments: (exit success, JSON, stderr).
fn analyze(
    kernel: &str,
    grid: &str,
    block: &str,
    fe: &str,
    extra: &[&str],
) -> (bool, Value, String) {
    let mut a = vec![
        "analyze",
        RACES,
        "--kernel",
        kernel,
        "--grid",
        grid,
        "--block",
        block,
        "--frontend",
        fe,
        "--format",
        "json",
    ];
    a.extend(extra);
    let (ok, out, err) = warpscope(&a);
    let v = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{kernel} {fe}: {e}: {err}"));
    (ok, v, err)
}

/// The one finding of a run of `kernel`, checked to be the only one.
fn only(kernel: &str, grid: &str, block: &str, fe: &str) -> (Value, String) {
    let (ok, v, err) = analyze(kernel, grid, block, fe, &[]);
    assert!(ok, "{kernel} {fe}: {err}");
    let f = findings(&v);
    assert_eq!(f.len(), 1, "{kernel} {fe}: {f:#?}");
    (f[0].clone(), err)
}

/// reduce_race, 4 blocks of 256 threads (8 warps), the loop `for k = 128, 64, …, 1:
/// if (t < k) s[t] += s[t + k]` with no barrier inside. After the barrier before the loop,
/// warp 0 runs every trip first (warps run up to their next barrier one after another):
/// at k = 64 it reads s[64..95] (warp 2's) and at k = 32 s[32..63] (warp 1's). Then warp 1
/// writes s[32..63] at k = 128 and again at k = 64, warp 2 writes s[64..95] and warp 3
/// s[96..127] at k = 128, each onto bytes warp 0 (or, for warp 3's, warp 1 at k = 64) read
/// in the same interval: 4 warp accesses close a race per block, 16 in 4 blocks. In
/// lockstep each write comes a trip before the read that wanted it: RAW, the read the site.
/// The first seen: block 0, warp 1's write at k = 128 onto warp 0's read at k = 32, whose
/// first byte is s[32]: byte 128.
#[test]
fn a_reduction_missing_its_barrier_is_a_raw_race_on_its_line() {
    for fe in frontends() {
        let (f, err) = only("reduce_race", "4", "256", fe);
        assert_eq!(f["kind"], "racecheck");
        assert_eq!(f["hazard"], "RAW");
        assert_eq!(f["line"], 15, "{fe}");
        assert_eq!(f["access"], "read");
        assert_eq!(f["other"]["line"], 15);
        assert_eq!(f["other"]["access"], "write");
        assert_eq!(
            (f["warp"].as_u64(), f["other"]["warp"].as_u64()),
            (Some(0), Some(1))
        );
        assert_eq!(f["block"], serde_json::json!([0, 0, 0]));
        assert_eq!(f["shared_offset"], 128);
        assert_eq!(
            (f["warps"].as_u64(), f["blocks"].as_u64()),
            (Some(16), Some(4)),
            "{fe}"
        );
        let line = err
            .lines()
            .find(|l| l.starts_with("warning: "))
            .unwrap_or_else(|| panic!("{fe}: {err}"));
        assert!(line.contains("races.cu:15:"), "{line}");
        assert!(line.contains(": racecheck: shared-memory race (RAW: read after write): warp 0 reads at line 15 shared memory that warp 1 writes at line 15"), "{line}");
        assert!(
            line.contains(
                "Put a __syncthreads() after the write at line 15 and before the read at line 15"
            ),
            "{line}"
        );
        // --strict: an error after the output.
        let (ok, v, err) = analyze("reduce_race", "4", "256", fe, &["--strict"]);
        assert!(!ok && err.contains("--strict: 1 finding(s)"), "{fe}: {err}");
        assert_eq!(findings(&v).len(), 1);
    }
}

/// swap_war, 3 blocks of 64 threads: `v = s[(t + 32) % 64]; s[t] = 2 * v;` with no barrier
/// between the read and the write. Warp 0 reads s[32..63] then writes s[0..31]; warp 1,
/// run after it, reads s[0..31], which warp 0 wrote in the same interval, then writes
/// s[32..63], which warp 0 read. In lockstep both reads come before both writes: WAR twice
/// per block (warp 1's read and warp 1's write close them), 6 in 3 blocks, the write (line
/// 46) the site and the read (line 45) the other; first seen at warp 1's read of s[0]:
/// warp 0's write, byte 0.
#[test]
fn a_write_after_another_warps_read_is_a_war_race() {
    for fe in frontends() {
        let (f, _) = only("swap_war", "3", "64", fe);
        assert_eq!(f["hazard"], "WAR");
        assert_eq!(
            (f["line"].as_u64(), f["access"].as_str()),
            (Some(46), Some("write"))
        );
        assert_eq!(
            (f["other"]["line"].as_u64(), f["other"]["access"].as_str()),
            (Some(45), Some("read"))
        );
        assert_eq!(
            (f["warp"].as_u64(), f["other"]["warp"].as_u64()),
            (Some(0), Some(1))
        );
        assert_eq!(f["shared_offset"], 0);
        assert_eq!(
            (f["warps"].as_u64(), f["blocks"].as_u64()),
            (Some(6), Some(3)),
            "{fe}"
        );
        assert!(f["message"].as_str().unwrap().contains(
            "Put a __syncthreads() after the read at line 45 and before the write at line 46"
        ));
    }
}

/// last_writer, 2 blocks of 64: every thread stores its index into one shared int. The
/// lanes of one warp are one store (not a race here); warp 1's store lands on warp 0's in
/// the same interval at the same time: one WAW per block, the later (warp 1) the site.
#[test]
fn two_warps_storing_one_word_are_a_waw_race() {
    for fe in frontends() {
        let (f, _) = only("last_writer", "2", "64", fe);
        assert_eq!(f["hazard"], "WAW");
        assert_eq!(
            (f["line"].as_u64(), f["other"]["line"].as_u64()),
            (Some(70), Some(70))
        );
        assert_eq!(
            (f["warp"].as_u64(), f["other"]["warp"].as_u64()),
            (Some(1), Some(0))
        );
        assert_eq!(
            (f["warps"].as_u64(), f["blocks"].as_u64()),
            (Some(2), Some(2)),
            "{fe}"
        );
    }
}

/// half_tile, 2 blocks of 32 × 8 threads (warp w is row w): rows 0-3 of the 8 × 32 tile
/// are loaded, then thread (x, y) reads row 7 - y. Warps 0-3 read rows 7-4, never written:
/// 4 warp reads per block, 8 in 2 blocks, every lane; warp 0's first byte is row 7's:
/// 7 × 32 × 4 = 896.
#[test]
fn a_tile_loaded_for_half_its_rows_is_an_initcheck_finding() {
    for fe in frontends() {
        let (f, err) = only("half_tile", "2", "32,8", fe);
        assert_eq!(f["kind"], "initcheck");
        assert_eq!(f["line"], 83, "{fe}");
        assert_eq!(f["access"], "read");
        assert_eq!(f["warp"], 0);
        assert_eq!(f["lanes"], "0xffffffff");
        assert_eq!(f["shared_offset"], 896);
        assert_eq!(
            (f["warps"].as_u64(), f["blocks"].as_u64()),
            (Some(8), Some(2)),
            "{fe}"
        );
        assert!(f.get("hazard").is_none() && f.get("lanes_arrived").is_none());
        assert!(
            err.contains(": initcheck: read of uninitialized shared memory: in block (0, 0, 0) warp 0 lanes 0-31 read shared byte 896"),
            "{err}"
        );
    }
}

/// count_uninit, 2 blocks of 64: `atomicAdd(&count, 1)` on a shared int nobody set. Warp
/// 0's atomic reads the unset word (lane 0 first; the lanes' atomics follow one another,
/// so the others read what lane 0 wrote); warp 1's finds it written. Atomics of two warps
/// do not race: one initcheck finding, 2 warp accesses in 2 blocks, no racecheck one.
#[test]
fn an_atomic_on_a_counter_never_set_is_an_initcheck_finding_and_no_race() {
    for fe in frontends() {
        let (f, _) = only("count_uninit", "2", "64", fe);
        assert_eq!(f["kind"], "initcheck");
        assert_eq!(f["line"], 99, "{fe}");
        assert_eq!(f["access"], "atomic");
        assert_eq!(f["lanes"], "0x00000001");
        assert_eq!(
            (f["warps"].as_u64(), f["blocks"].as_u64()),
            (Some(2), Some(2)),
            "{fe}"
        );
    }
}

/// The fixed kernels, two warps storing neighbouring bytes of one word, and a warp that
/// leaves before a barrier the other passes alone (exited threads do not take part in a
/// barrier on CC 7.0+: PTX ISA §9.7.13.1: no finding) run clean under
/// --strict.
#[test]
fn the_fixed_kernels_give_no_finding() {
    let runs = [
        ("reduce_fixed", "4", "256"),
        ("swap_fixed", "3", "64"),
        ("full_tile", "2", "32,8"),
        ("count_fixed", "2", "64"),
        ("bytes_apart", "2", "64"),
        ("warp_leaves", "2", "64"),
    ];
    for fe in frontends() {
        for (k, g, b) in runs {
            let (ok, v, err) = analyze(k, g, b, fe, &["--strict"]);
            assert!(ok, "{k} {fe}: {err}");
            assert!(v.get("findings").is_none(), "{k} {fe}: {v}");
            assert!(!err.contains("warning:"), "{k} {fe}: {err}");
        }
    }
}

/// The examples the brief names run clean on both front ends.
#[test]
fn the_examples_give_no_finding() {
    let runs: [&[&str]; 3] = [
        &[
            "examples/reduction.cu",
            "--kernel",
            "reduce_sequential",
            "--grid",
            "64",
            "--block",
            "256",
            "--dynamic-smem",
            "1024",
            "--arg",
            "n=16384",
        ],
        &[
            "examples/shared_banks.cu",
            "--kernel",
            "smem_stride_f32",
            "--grid",
            "8",
            "--block",
            "256",
            "--arg",
            "stride=3",
            "--arg",
            "fill=1",
            "--arg",
            "store=1",
        ],
        &[
            "examples/transpose.cu",
            "--kernel",
            "transpose_no_bank_conflicts",
            "--grid",
            "4,4",
            "--block",
            "32,8",
            "--arg",
            "width=128",
            "--arg",
            "height=128",
        ],
    ];
    for fe in frontends() {
        for r in runs {
            let mut a = vec!["analyze"];
            a.extend(r);
            a.extend(["--frontend", fe, "--strict", "--format", "json"]);
            let (ok, out, err) = warpscope(&a);
            assert!(ok, "{fe} {r:?}: {err}");
            let v: Value = serde_json::from_str(&out).unwrap();
            assert!(v.get("findings").is_none(), "{fe} {r:?}: {v}");
        }
    }
}

/// A kernel with a barrier for part of the block (`bar.sync 1, 32`) is not race-checked,
/// and the JSON's notes say why; initcheck still runs.
#[test]
fn a_kernel_with_a_counted_barrier_is_not_race_checked_and_a_note_says_so() {
    let (ok, out, err) = warpscope(&[
        "analyze",
        "tests/kernels/findings/barriers.ptx",
        "--kernel",
        "counted",
        "--grid",
        "1",
        "--block",
        "32",
        "--format",
        "json",
    ]);
    assert!(ok, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    let notes: Vec<&str> = v["notes"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|n| n.as_str())
        .collect();
    assert!(
        notes.iter().any(|n| n.starts_with(
            "racecheck did not run: it uses barriers with a thread count or bar.arrive"
        ) && n.ends_with("initcheck did run")),
        "{notes:?}"
    );
}

/// `check --format sarif`: each finding a warning result under its own rule (racecheck,
/// initcheck), located on its line; the budgets are met, so the exit status is 0.
#[test]
fn check_reports_races_and_unwritten_reads_in_sarif_under_their_rules() {
    let (ok, out, err) = warpscope(&[
        "check",
        "--launches",
        "tests/kernels/findings/races.toml",
        "--format",
        "sarif",
    ]);
    assert!(ok, "{err}");
    assert!(err.contains("races.cu:46:5: racecheck: "), "{err}");
    assert!(err.contains("races.cu:83:"), "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    let run = &v["runs"][0];
    let rules = run["tool"]["driver"]["rules"].as_array().unwrap();
    let results = run["results"].as_array().unwrap();
    let found: Vec<(String, u64, String)> = results
        .iter()
        .map(|r| {
            let rule = &rules[r["ruleIndex"].as_u64().unwrap() as usize]["id"];
            assert_eq!(rule, &r["ruleId"], "{r}");
            assert_eq!(r["level"], "warning");
            (
                r["ruleId"].as_str().unwrap().to_string(),
                r["locations"][0]["physicalLocation"]["region"]["startLine"]
                    .as_u64()
                    .unwrap(),
                r["message"]["text"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(found.len(), 2, "{found:?}");
    assert_eq!((found[0].0.as_str(), found[0].1), ("racecheck", 46));
    assert!(
        found[0]
            .2
            .starts_with("launch swap_war: shared-memory race (WAR"),
        "{found:?}"
    );
    assert_eq!((found[1].0.as_str(), found[1].1), ("initcheck", 83));
}

/// `--no-checks` skips the checks: the racing reduction gives no finding, and the same
/// figures as with them.
#[test]
fn no_checks_skips_the_findings_and_keeps_the_figures() {
    for fe in frontends() {
        let (ok, with, _) = analyze("reduce_race", "4", "256", fe, &[]);
        assert!(ok);
        assert_eq!(findings(&with).len(), 1, "{fe}");
        let (ok, without, err) = analyze("reduce_race", "4", "256", fe, &["--no-checks"]);
        assert!(ok, "{err}");
        assert!(findings(&without).is_empty(), "{fe}");
        assert!(!err.contains("racecheck"), "{err}");
        assert_eq!(with["architectures"], without["architectures"], "{fe}");
    }
}
