//! Findings: bugs the run finds in the kernel, as compute-sanitizer would report them
//! (synccheck: a block barrier reached by only part of a warp). Each is a `warning:` line on
//! standard error, an entry of the JSON's `findings`, and exit status 1 under `--strict`;
//! correct kernels give none.

mod common;
use common::{findings, frontends, warpscope};
use serde_json::Value;

const SYNC: &str = "tests/kernels/findings/sync.cu";

/// `analyze ARGS --format json`: (exit success, JSON, stderr).
fn analyze(args: &[&str]) -> (bool, Value, String) {
    let mut a = vec!["analyze"];
    a.extend(args);
    a.extend(["--format", "json"]);
    let (ok, out, err) = warpscope(&a);
    let v = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{args:?}: {e}: {err}"));
    (ok, v, err)
}

#[test]
fn a_barrier_half_a_warp_skips_is_one_synccheck_finding_per_site() {
    for fe in frontends() {
        let args = [
            SYNC,
            "--kernel",
            "half_warp",
            "--grid",
            "2",
            "--block",
            "32",
            "--frontend",
            fe,
        ];
        let (ok, v, err) = analyze(&args);
        assert!(ok, "{fe}: {err}");
        let f = findings(&v);
        // One finding for the one barrier, though both blocks' warps diverge there.
        assert_eq!(f.len(), 1, "{fe}: {f:?}");
        let f = &f[0];
        assert_eq!(f["kind"], "synccheck");
        assert_eq!(f["kernel"], "half_warp");
        assert!(
            f["file"].as_str().unwrap().ends_with("sync.cu"),
            "{fe}: {f}"
        );
        // `__syncthreads();` is at 11:9.
        assert_eq!(
            (f["line"].as_u64(), f["column"].as_u64()),
            (Some(11), Some(9)),
            "{fe}"
        );
        assert_eq!(f["block"], serde_json::json!([0, 0, 0]));
        assert_eq!(f["warp"], 0);
        assert_eq!(f["lanes_arrived"], "0x0000ffff");
        assert_eq!(f["lanes_missing"], "0xffff0000");
        assert_eq!(
            (f["warps"].as_u64(), f["blocks"].as_u64()),
            (Some(2), Some(2))
        );
        let line = err
            .lines()
            .find(|l| l.starts_with("warning: "))
            .unwrap_or_else(|| panic!("{fe}: no warning line: {err}"));
        assert!(line.contains("sync.cu:11:9: synccheck: "), "{line}");
        assert!(
            line.contains("lanes 0-15 arrived and lanes 16-31 did not"),
            "{line}"
        );
        // --strict turns it into exit status 1, after the output.
        let mut strict = args.to_vec();
        strict.push("--strict");
        let (ok, v, err) = analyze(&strict);
        assert!(!ok && err.contains("--strict: 1 finding(s)"), "{fe}: {err}");
        assert_eq!(findings(&v).len(), 1);
    }
}

#[test]
fn a_warp_that_reaches_the_barrier_whole_is_not_flagged() {
    // 64 threads, `threadIdx.x < 48`: warp 0 is whole, warp 1 has lanes 0-15; 3 blocks.
    let (ok, v, err) = analyze(&[
        SYNC,
        "--kernel",
        "second_warp",
        "--grid",
        "3",
        "--block",
        "64",
        "--frontend",
        "source",
    ]);
    assert!(ok, "{err}");
    let f = findings(&v);
    assert_eq!(f.len(), 1, "{f:?}");
    assert_eq!(f[0]["line"], 21);
    assert_eq!(f[0]["warp"], 1);
    assert_eq!(f[0]["lanes_arrived"], "0x0000ffff");
    assert_eq!(
        (f[0]["warps"].as_u64(), f[0]["blocks"].as_u64()),
        (Some(3), Some(3))
    );
}

#[test]
fn correct_kernels_give_no_finding() {
    for fe in frontends() {
        let runs: [&[&str]; 3] = [
            // Threads that returned before the barrier do not take part in it.
            &[
                SYNC,
                "--kernel",
                "early_return",
                "--grid",
                "2",
                "--block",
                "64",
                "--arg",
                "n=40",
            ],
            &[SYNC, "--kernel", "reduce", "--grid", "4", "--block", "256"],
            &[
                "examples/transpose.cu",
                "--kernel",
                "transpose_coalesced",
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
        for r in runs {
            let mut a = r.to_vec();
            a.extend(["--frontend", fe, "--strict"]);
            let (ok, v, err) = analyze(&a);
            assert!(ok, "{fe} {r:?}: {err}");
            assert!(v.get("findings").is_none(), "{fe} {r:?}: {v}");
            assert!(!err.contains("warning:"), "{fe} {r:?}: {err}");
        }
    }
}

#[test]
fn a_ptx_barrier_is_flagged_at_its_ptx_line_and_one_with_a_thread_count_is_not_checked() {
    let ptx = "tests/kernels/findings/barriers.ptx";
    // `@%p1 bar.sync 0;` with lanes 0-15: flagged at its PTX line (no .loc).
    let (ok, v, err) = analyze(&[ptx, "--kernel", "plain", "--grid", "1", "--block", "32"]);
    assert!(ok, "{err}");
    let f = findings(&v);
    assert_eq!(f.len(), 1, "{f:?}");
    assert_eq!(
        (f[0]["line"].as_u64(), f[0]["ptx_line"].as_u64()),
        (Some(13), Some(13))
    );
    assert_eq!(f[0]["lanes_missing"], "0xffff0000");
    // `@%p1 bar.sync 1, 32;`: a barrier with a thread count is made for part of a block
    // [PTX ISA §9.7.13.1]; synccheck does not check such barriers (nor `bar.arrive`).
    let (ok, v, err) = analyze(&[ptx, "--kernel", "counted", "--grid", "1", "--block", "32"]);
    assert!(ok, "{err}");
    assert!(findings(&v).is_empty(), "{v}");
}

#[test]
fn check_reports_findings_in_sarif_as_warnings_and_keeps_its_exit_status() {
    let (ok, out, err) = warpscope(&[
        "check",
        "--launches",
        "tests/kernels/findings/check.toml",
        "--format",
        "sarif",
    ]);
    // The budget is met: a finding is a warning, not a violation.
    assert!(ok, "{err}");
    assert!(
        err.contains("warning: tests/kernels/findings/sync.cu:11:9: synccheck: "),
        "{err}"
    );
    let v: Value = serde_json::from_str(&out).unwrap();
    let run = &v["runs"][0];
    let rules = run["tool"]["driver"]["rules"].as_array().unwrap();
    let results = run["results"].as_array().unwrap();
    assert_eq!(results.len(), 1, "{results:?}");
    let r = &results[0];
    assert_eq!(r["ruleId"], "synccheck");
    assert_eq!(r["level"], "warning");
    assert_eq!(
        rules[r["ruleIndex"].as_u64().unwrap() as usize]["id"],
        "synccheck"
    );
    let region = &r["locations"][0]["physicalLocation"]["region"];
    assert_eq!(
        (region["startLine"].as_u64(), region["startColumn"].as_u64()),
        (Some(11), Some(9))
    );
    assert!(r["message"]["text"]
        .as_str()
        .unwrap()
        .starts_with("launch half_warp: "));
}
