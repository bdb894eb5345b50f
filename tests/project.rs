//! The launch file (`warpscope.toml`), `analyze --launches`, `check` (text, JUnit, SARIF)
//! and `diff`, through the binary.
//!
//! Figures of examples/transpose.cu, grid 32×32, block 32×8, width = height = 1024, CC 9.0,
//! by hand: each kernel runs 32·32 blocks × 8 warps × 4 iterations = 32,768 warp-level
//! executions per access.
//! - transpose_naive: the load reads 32 consecutive floats (4 sectors): 131,072 sectors;
//!   the store walks a column (rows 4096 bytes apart, a sector per lane): 32 × 32,768 =
//!   1,048,576 sectors; 65,536 requests; no shared memory. Total 1,179,648 sectors.
//! - transpose_coalesced: both global accesses read or write 32 consecutive floats: 131,072 +
//!   131,072 = 262,144 sectors; the tile store is conflict free (32,768 wavefronts), the
//!   tile read by column hits one bank 32 times (32 × 32,768 = 1,048,576 wavefronts): total
//!   1,081,344; 4 × 32,768 = 131,072 requests.
//! - transpose_no_bank_conflicts: the same sectors and requests; the [32][33] tile makes the
//!   column read conflict free: 65,536 wavefronts.
//!
//! So naive → coalesced: sectors −917,504, requests +65,536, wavefronts +1,081,344.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Runs `warpscope ARGS` in `dir`: (exit code, stdout, stderr); never a panic.
fn run_in(dir: &Path, args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_warpscope"))
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(!stderr.contains("panicked"), "panic for {args:?}: {stderr}");
    (out.status.code().unwrap_or(-1), stdout, stderr)
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A fresh folder with `warpscope.toml` = `text`; `TRANSPOSE` in it stands for the
/// absolute path of examples/transpose.cu.
fn project(text: &str) -> PathBuf {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("warpscope-project-it-{}-{n}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let transpose = root().join("examples/transpose.cu");
    let text = text.replace("TRANSPOSE", &transpose.display().to_string());
    std::fs::write(dir.join("warpscope.toml"), text).unwrap();
    dir
}

fn launch(name: &str, kernel: &str) -> String {
    format!(
        "[[launch]]\nname = \"{name}\"\nfile = \"TRANSPOSE\"\nkernel = \"{kernel}\"\ngrid = [32, 32]\nblock = [32, 8]\nargs = {{ width = 1024, height = 1024 }}\ncc = \"9.0\"\n"
    )
}

#[test]
fn launch_file_errors_name_the_key_or_field_with_line_and_column() {
    let dir = project(&launch("naive", "transpose_naive").replace("block =", "blocks ="));
    let (code, _, err) = run_in(&dir, &["check"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("warpscope.toml:6:1: unknown field `blocks`"),
        "{err}"
    );
    assert!(
        err.contains("expected one of `name`, `file`, `kernel`"),
        "{err}"
    );

    let dir =
        project(&launch("naive", "transpose_naive").replace("kernel = \"transpose_naive\"\n", ""));
    let (code, _, err) = run_in(&dir, &["analyze", "--launches", "warpscope.toml"]);
    assert_ne!(code, 0);
    assert!(
        err.contains("warpscope.toml:1:1: missing field `kernel`"),
        "{err}"
    );

    let text = format!(
        "{}\n[[launch.budget]]\nmax_sectors_per_request = \"four\"\n",
        launch("naive", "transpose_naive")
    );
    let (code, _, err) = run_in(&project(&text), &["check"]);
    assert_eq!(code, 2);
    assert!(err.contains("warpscope.toml:11:27:"), "{err}");

    let (code, _, err) = run_in(&root(), &["check", "--launches", "no/such/warpscope.toml"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("cannot read the launch file no/such/warpscope.toml"),
        "{err}"
    );
}

#[test]
fn analyze_launches_gives_one_analysis_per_launch() {
    let text = format!(
        "{}\n{}",
        launch("naive", "transpose_naive"),
        launch("tiled", "transpose_coalesced")
    );
    let dir = project(&text);
    let (code, out, err) = run_in(
        &dir,
        &[
            "analyze",
            "--launches",
            "warpscope.toml",
            "--format",
            "json",
        ],
    );
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let launches = v["launches"].as_array().unwrap();
    let names: Vec<&str> = launches
        .iter()
        .map(|l| l["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["naive", "tiled"]);
    let sectors = |i: usize| -> u64 {
        launches[i]["analysis"]["architectures"][0]["sites"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["sectors"].as_u64().unwrap())
            .sum()
    };
    assert_eq!(sectors(0), 1_179_648);
    assert_eq!(sectors(1), 262_144);
    assert_eq!(launches[1]["analysis"]["kernel"], "transpose_coalesced");

    let (code, out, err) = run_in(
        &dir,
        &["analyze", "--launches", "warpscope.toml", "--only", "tiled"],
    );
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("== launch tiled (warpscope.toml:10:1) =="),
        "{out}"
    );
    assert!(!out.contains("launch naive"), "{out}");
    // One total row per memory space (the tile read's 32-way conflict shows in its own).
    let total = |space: &str| {
        out.lines()
            .find(|l| l.contains(" total ") && l.contains(&format!(" {space} ")))
            .unwrap_or_else(|| panic!("no {space} total:\n{out}"))
            .to_string()
    };
    assert!(total("global").contains(" 262,144 "), "{out}");
    let shared = total("shared");
    assert!(
        shared.contains("1,081,344 wf") && shared.contains("1,015,808") && shared.contains("6.1%"),
        "{shared}"
    );

    let (code, _, err) = run_in(
        &dir,
        &["analyze", "--launches", "warpscope.toml", "--only", "tiles"],
    );
    assert_ne!(code, 0);
    assert!(
        err.contains("no launch named 'tiles'; its launches: naive, tiled"),
        "{err}"
    );
}

/// Budgets the naive transpose meets (32 sectors per request of its store, 1,179,648
/// sectors) and one it breaks (4 sectors per request).
const MET: &str = "\n[[launch.budget]]\nline = 42\nmax_sectors_per_request = 32\nmin_efficiency = 12.5\n\n[[launch.budget]]\nmax_total_sectors = 1179648\n";
const BROKEN: &str = "\n[[launch.budget]]\nmax_sectors_per_request = 4\n";

#[test]
fn check_passes_when_every_budget_is_met() {
    let dir = project(&format!("{}{MET}", launch("naive", "transpose_naive")));
    let (code, out, err) = run_in(&dir, &["check"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("check: all 3 budget limits of 1 launch met"),
        "{out}"
    );
    // One figure short of the total fails it.
    let dir = project(&format!(
        "{}{}",
        launch("naive", "transpose_naive"),
        MET.replace("1179648", "1179647")
    ));
    let (code, out, _) = run_in(&dir, &["check"]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("1179648 sectors > budget 1179647 (max_total_sectors)"),
        "{out}"
    );
}

#[test]
fn check_fails_naming_the_site_the_figure_and_the_budget() {
    let dir = project(&format!(
        "{}{MET}{BROKEN}",
        launch("naive", "transpose_naive")
    ));
    let (code, out, err) = run_in(&dir, &["check"]);
    assert_eq!(code, 1, "{out}{err}");
    let line = out
        .lines()
        .find(|l| l.contains("> budget 4"))
        .unwrap_or_else(|| panic!("{out}"));
    // The transpose's store on line 42, column 9, is over: 32 sectors per request.
    assert!(line.contains("naive: "), "{line}");
    assert!(
        line.contains("transpose.cu:42:9 `odata[x * height + (y + j)]"),
        "{line}"
    );
    assert!(
        line.contains(
            "global store) on CC 9.0: 32 sectors per request > budget 4 (max_sectors_per_request)"
        ),
        "{line}"
    );
    assert!(line.contains("[budget at warpscope.toml:18:1]"), "{line}");
    // The loads (4 sectors per request) are not.
    assert!(!out.contains("global load) on CC 9.0"), "{out}");
    assert!(
        out.contains("check: 1 of 4 budget limits violated (1 figure over budget) in 1 launch"),
        "{out}"
    );
}

/// Limits violated and figures over budget are counted apart: one limit broken on two CCs
/// by the store is one violated limit and two figures.
#[test]
fn check_summary_counts_violated_limits_and_figures_apart() {
    let two_ccs = launch("naive", "transpose_naive").replace("cc = \"9.0\"", "cc = \"8.0,9.0\"");
    let dir = project(&format!("{two_ccs}{BROKEN}"));
    let (code, out, err) = run_in(&dir, &["check"]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        out.contains("check: 1 of 1 budget limit violated (2 figures over budget) in 1 launch"),
        "{out}"
    );
}

#[test]
fn sarif_locates_each_violation_on_its_source_line() {
    let dir = project(&format!("{}{BROKEN}", launch("naive", "transpose_naive")));
    let (code, _, err) = run_in(&dir, &["check", "--format", "sarif", "-o", "out.sarif"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("check: 1 of 1 budget limit violated"), "{err}");
    let text = std::fs::read_to_string(dir.join("out.sarif")).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["version"], "2.1.0");
    let run = &v["runs"][0];
    assert_eq!(run["tool"]["driver"]["name"], "warpscope");
    let rules: Vec<&str> = run["tool"]["driver"]["rules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    assert_eq!(
        rules,
        [
            "max_sectors_per_request",
            "min_efficiency",
            "max_wavefronts_per_request",
            "max_total_sectors",
            "max_excess_wavefronts",
            "max_conflict_ways"
        ]
    );
    let results = run["results"].as_array().unwrap();
    assert_eq!(results.len(), 1, "{text}");
    let r = &results[0];
    assert_eq!(r["ruleId"], "max_sectors_per_request");
    assert_eq!(r["level"], "error");
    let loc = &r["locations"][0]["physicalLocation"];
    assert!(loc["artifactLocation"]["uri"]
        .as_str()
        .unwrap()
        .ends_with("examples/transpose.cu"));
    assert_eq!(loc["region"]["startLine"], 42);
    assert_eq!(loc["region"]["startColumn"], 9);
    assert!(r["message"]["text"]
        .as_str()
        .unwrap()
        .contains("32 sectors per request > budget 4"));
}

#[test]
fn sarif_puts_a_launch_total_on_the_budgets_line() {
    let text = format!(
        "{}\n[[launch.budget]]\nmax_total_sectors = 262144\n",
        launch("naive", "transpose_naive")
    );
    let (code, out, _) = run_in(&project(&text), &["check", "--format", "sarif"]);
    assert_eq!(code, 1);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let r = &v["runs"][0]["results"][0];
    assert_eq!(r["ruleId"], "max_total_sectors");
    let loc = &r["locations"][0]["physicalLocation"];
    assert_eq!(loc["artifactLocation"]["uri"], "warpscope.toml");
    assert_eq!(loc["region"]["startLine"], 10);
}

#[test]
fn junit_has_a_test_case_per_budget_limit_and_a_failure() {
    let dir = project(&format!(
        "{}{MET}{BROKEN}",
        launch("naive", "transpose_naive")
    ));
    let (code, out, err) = run_in(&dir, &["check", "--format", "junit"]);
    assert_eq!(code, 1, "{err}");
    assert!(out.contains("<failure"), "{out}");
    let report = quick_junit::Report::deserialize_from_str(&out).unwrap();
    assert_eq!(report.tests, 4);
    assert_eq!(report.failures, 1);
    let suite = &report.test_suites[0];
    assert_eq!(suite.name.as_str(), "naive");
    let failed: Vec<&str> = suite
        .test_cases
        .iter()
        .filter(|c| matches!(c.status, quick_junit::TestCaseStatus::NonSuccess { .. }))
        .map(|c| c.name.as_str())
        .collect();
    assert_eq!(failed, ["max_sectors_per_request ≤ 4 (launch)"]);
}

/// The bank-conflict budgets: the tiled transpose's tile read is 32-way (1,048,576
/// wavefronts for an ideal of 32,768: 1,015,808 excess), the padded one's is not.
#[test]
fn check_budgets_bank_conflicts_against_the_ideal() {
    let budget = "\n[[launch.budget]]\nmax_excess_wavefronts = 0\nmax_conflict_ways = 1\n";
    let dir = project(&format!(
        "{}{budget}",
        launch("tiled", "transpose_coalesced")
    ));
    let (code, out, err) = run_in(&dir, &["check"]);
    assert_eq!(code, 1, "{out}{err}");
    // The source interpreter has one row for the read; the compiled path one per copy of
    // the unrolled loop (4), each a quarter; a violation names the worst row.
    assert!(
        out.contains("1015808 excess wavefronts > budget 0 (max_excess_wavefronts)")
            || out.contains("253952 excess wavefronts > budget 0 (max_excess_wavefronts)"),
        "{out}"
    );
    assert!(
        out.contains("32 ways (wavefronts / ideal) > budget 1 (max_conflict_ways)"),
        "{out}"
    );
    let dir = project(&format!(
        "{}{budget}",
        launch("padded", "transpose_no_bank_conflicts")
    ));
    let (code, out, err) = run_in(&dir, &["check"]);
    assert_eq!(code, 0, "{out}{err}");
}

/// `analyze --format json` of one transpose kernel, written to `dir/NAME.json`.
fn transpose_json(dir: &Path, kernel: &str) -> String {
    let (code, out, err) = run_in(
        &root(),
        &[
            "analyze",
            "examples/transpose.cu",
            "--kernel",
            kernel,
            "--grid",
            "32,32",
            "--block",
            "32,8",
            "--arg",
            "width=1024",
            "--arg",
            "height=1024",
            "--cc",
            "9.0",
            "--format",
            "json",
        ],
    );
    assert_eq!(code, 0, "{err}");
    let p = dir.join(format!("{kernel}.json"));
    std::fs::write(&p, out).unwrap();
    p.display().to_string()
}

#[test]
fn diff_of_the_naive_and_the_tiled_transpose() {
    let dir = project(&launch("naive", "transpose_naive"));
    let naive = transpose_json(&dir, "transpose_naive");
    let tiled = transpose_json(&dir, "transpose_coalesced");
    let padded = transpose_json(&dir, "transpose_no_bank_conflicts");

    let (code, out, err) = run_in(&dir, &["diff", &naive, &tiled, "--format", "json"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let cc = &v["diff"]["launches"][0]["ccs"][0];
    assert_eq!(cc["cc"], "9.0");
    assert_eq!(cc["old_total"]["sectors"], 1_179_648);
    assert_eq!(cc["new_total"]["sectors"], 262_144);
    assert_eq!(cc["total_change"]["sectors"], -917_504);
    assert_eq!(cc["total_change"]["requests"], 65_536);
    assert_eq!(cc["total_change"]["wavefronts"], 1_081_344);
    // Different lines: the naive store (line 42) is removed, the tile's column read
    // (line 59) added. (The source interpreter names an access by its expression, and the
    // two kernels' loads `idata[(y + j) * width + x]` then match by text.)
    let has = |status: &str, line: u64, op: &str, space: &str| {
        cc["sites"].as_array().unwrap().iter().any(|x| {
            x["status"] == status && x["line"] == line && x["op"] == op && x["space"] == space
        })
    };
    assert!(has("removed", 42, "store", "global"), "{cc}");
    assert!(has("added", 59, "load", "shared"), "{cc}");
    assert!(has("added", 52, "store", "shared"), "{cc}");

    // Totals per memory space: global 22.2 % → 100 %; shared new, its 32-way tile read
    // making it 65,536 ideal ÷ 1,081,344 wavefronts. Over every space: no efficiency.
    assert_eq!(
        cc["old_total"]["efficiency_percent"],
        serde_json::Value::Null
    );
    let spaces = cc["spaces"].as_array().unwrap();
    let names: Vec<&str> = spaces
        .iter()
        .map(|t| t["space"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["global", "shared"]);
    assert_eq!(spaces[1]["new"]["ideal_wavefronts"], 65_536);
    assert_eq!(spaces[1]["change"]["excess_wavefronts"], 1_015_808);
    let e = spaces[1]["new"]["efficiency_percent"].as_f64().unwrap();
    assert!((e - 100.0 * 65_536.0 / 1_081_344.0).abs() < 1e-9, "{e}");
    assert_eq!(
        spaces[1]["old"]["efficiency_percent"],
        serde_json::Value::Null
    );
    assert_eq!(spaces[0]["new"]["efficiency_percent"], 100.0);

    let (_, table, _) = run_in(&dir, &["diff", &naive, &tiled]);
    assert!(table.contains("1,179,648 → 262,144 (−917,504)"), "{table}");
    assert!(table.contains("0 → 1,081,344 (+1,081,344)"), "{table}");
    let shared_total = table
        .lines()
        .find(|l| l.contains(" total ") && l.contains(" shared "))
        .unwrap_or_else(|| panic!("{table}"));
    assert!(shared_total.contains("– → 6.1%"), "{shared_total}");
    let global_total = table
        .lines()
        .find(|l| l.contains(" total ") && l.contains(" global "))
        .unwrap_or_else(|| panic!("{table}"));
    assert!(global_total.contains("22.2% → 100.0%"), "{global_total}");

    // The tiled kernel trades sectors for wavefronts and requests: watching sectors only,
    // naive → tiled passes and tiled → naive regresses.
    let sectors = ["--fail-on-regression", "--regression-on", "sectors"];
    let (code, _, _) = run_in(
        &dir,
        &[&["diff", naive.as_str(), tiled.as_str()][..], &sectors].concat(),
    );
    assert_eq!(code, 0);
    let (code, out, _) = run_in(
        &dir,
        &[&["diff", tiled.as_str(), naive.as_str()][..], &sectors].concat(),
    );
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("sectors 262144 → 1179648 (+917504)"), "{out}");
    // Watching every total, naive → tiled regresses too (wavefronts 0 → 1,081,344).
    let (code, out, _) = run_in(&dir, &["diff", &naive, &tiled, "--fail-on-regression"]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("wavefronts 0 → 1081344 (+1081344)"), "{out}");
    // Padding the tile only removes wavefronts (1,081,344 → 65,536): no total grows one way,
    // wavefronts grow the other.
    let (code, out, _) = run_in(&dir, &["diff", &tiled, &padded, "--fail-on-regression"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("1,081,344 → 65,536 (−1,015,808)"), "{out}");
    let (code, _, _) = run_in(&dir, &["diff", &padded, &tiled, "--fail-on-regression"]);
    assert_eq!(code, 1);
}

#[test]
fn diff_of_two_launches_of_a_launch_file() {
    let (code, out, err) = run_in(
        &root(),
        &[
            "diff",
            "--launches",
            "examples/warpscope.toml",
            "--old-launch",
            "transpose_coalesced",
            "--new-launch",
            "transpose_no_bank_conflicts",
            "--format",
            "json",
        ],
    );
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let cc = &v["diff"]["launches"][0]["ccs"][0];
    assert_eq!(cc["total_change"]["wavefronts"], -1_015_808);
    assert_eq!(cc["total_change"]["sectors"], 0);
    let (code, _, err) = run_in(&root(), &["diff", "only-one.json"]);
    assert_eq!(code, 2);
    assert!(err.contains("give two JSON results"), "{err}");
}

/// CI's check: the examples' launch file meets its budgets.
#[test]
fn the_examples_launch_file_meets_its_budgets() {
    let (code, out, err) = run_in(&root(), &["check", "--launches", "examples/warpscope.toml"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("budget limits of 18 launches met"), "{out}");
    assert!(!out.contains("FAIL"), "{out}");
}
