//! `warpscope annotate` (the source with its figures, instructions and costliest warps),
//! `analyze --by/--sort/--top`, and the sites of one source line told apart (by their own
//! text and column) for `explain --line L:COL`.

mod common;
use common::{json, warpscope};

fn compiler() -> bool {
    let found = warpscope_toolkit::find(None).is_ok();
    if !found {
        eprintln!("skipped: no CUDA compiler (scripts/test.sh installs one from PyPI)");
    }
    found
}

const TRANSPOSE: &[&str] = &[
    "examples/transpose.cu",
    "--kernel",
    "transpose_coalesced",
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
    "--frontend",
    "ptx",
];

fn matmul(kernel: &'static str) -> Vec<&'static str> {
    vec![
        "tests/kernels/compiled/matmul_tiled.cu",
        "--kernel",
        kernel,
        "--grid",
        "32,32",
        "--block",
        "16,16",
        "--arg",
        "m=512",
        "--arg",
        "n=512",
        "--arg",
        "k=512",
        "--cc",
        "9.0",
        "--frontend",
        "ptx",
    ]
}

fn run(cmd: &str, launch: &[&str], extra: &[&str]) -> String {
    let mut a = vec![cmd];
    a.extend_from_slice(launch);
    a.extend_from_slice(extra);
    a.push("-q");
    let (ok, out, err) = warpscope(&a);
    assert!(ok, "{a:?}: {err}");
    out
}

/// The margin rows under source line `line` of annotate's text: per access, its margin's
/// words (`["32,768", "1,048,576", "wf", "1,015,808", "3.1%"]`) and what follows the
/// caret (`load shared, 4 B ×4`).
fn margin_rows(out: &str, line: u32) -> Vec<(Vec<String>, String)> {
    let mut rows = Vec::new();
    let mut inside = false;
    for l in out.lines() {
        let parts: Vec<&str> = l.split('│').collect();
        if parts.len() < 3 {
            continue;
        }
        let no = parts[0].trim();
        if !no.is_empty() {
            inside = no == line.to_string();
            continue;
        }
        let right = parts[parts.len() - 1];
        if inside && right.trim_start().starts_with('^') {
            rows.push((
                parts[1].split_whitespace().map(str::to_string).collect(),
                right.trim_start()[1..].trim().to_string(),
            ));
        }
    }
    rows
}

fn n(s: &str) -> u64 {
    s.replace(',', "").parse().unwrap()
}

/// The sums of `analyze --format json` over the sites of one line, column and op:
/// (requests, sectors, wavefronts, sites).
fn sums(v: &serde_json::Value, line: u64, column: u64, op: &str) -> (u64, u64, u64, usize) {
    let sites: Vec<&serde_json::Value> = v["architectures"][0]["sites"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["line"] == line && s["column"] == column && s["op"] == op)
        .collect();
    let f = |k: &str| sites.iter().map(|s| s[k].as_u64().unwrap()).sum::<u64>();
    (f("requests"), f("sectors"), f("wavefronts"), sites.len())
}

/// The margin of an annotated line has analyze's figures for its accesses, each told apart
/// by its own text and column although nvcc gives the whole statement one column.
#[test]
fn annotated_lines_have_analyzes_figures() {
    if !compiler() {
        return;
    }
    let out = run("annotate", TRANSPOSE, &["--color", "never"]);
    let mut a = vec!["analyze"];
    a.extend_from_slice(TRANSPOSE);
    let v = json(&a);
    // Line 59: `odata[(y + j) * height + x] = tile[threadIdx.x][threadIdx.y + j];`, four
    // copies of each access (the j loop unrolled).
    let rows = margin_rows(&out, 59);
    assert_eq!(rows.len(), 2, "{out}");
    let (store, load) = (&rows[0], &rows[1]);
    assert_eq!(store.1, "store global, 4 B ×4");
    assert_eq!(load.1, "load shared, 4 B ×4");
    // The global store: 32,768 requests of 4 sectors, no excess; as analyze sums its sites.
    let (req, sec, _, copies) = sums(&v, 59, 9, "store");
    assert_eq!((req, sec, copies), (32_768, 131_072, 4));
    assert_eq!(store.0, ["32,768", "131,072", "0", "100.0%"]);
    // The shared load of a column: a 32-way conflict, 32 wavefronts per request.
    let (req, _, wf, copies) = sums(&v, 59, 39, "load");
    assert_eq!((req, wf, copies), (32_768, 1_048_576, 4));
    assert_eq!(load.0, ["32,768", "1,048,576", "wf", "1,015,808", "3.1%"]);
    assert_eq!((n(&load.0[0]), n(&load.0[1])), (req, wf));
    // The caret is under each access's column in the source line.
    let at = |l: &str, pat: &str| l[..l.find(pat).unwrap()].chars().count();
    let src = out.lines().find(|l| l.contains("odata[(y + j)")).unwrap();
    let caret = out.lines().find(|l| l.contains("^ load shared")).unwrap();
    assert_eq!(at(src, "tile[threadIdx.x]"), at(caret, "^"));
    // The kernel's definition is shown whole, lines without accesses with a blank margin.
    assert!(out.contains("__global__ void transpose_coalesced("));
    assert!(out.contains("__syncthreads();"));
    assert!(!out.contains("transpose_naive"));
}

/// `analyze` groups an unrolled loop's copies of one access into one row (`×16`, figures
/// summed) by default; `--by instruction` keeps one row per PTX instruction, as the JSON.
#[test]
fn by_line_merges_an_unrolled_loops_copies() {
    if !compiler() {
        return;
    }
    let launch = matmul("matmul_rows");
    let table = run("analyze", &launch, &[]);
    let bs = table
        .lines()
        .find(|l| l.contains("Bs[kk][threadIdx.x] ×16"))
        .unwrap_or_else(|| panic!("{table}"));
    assert!(bs.contains("8–23"), "{bs}");
    assert!(bs.contains("ld.shared.f32 (92–137)"), "{bs}");
    assert!(bs.contains("4,194,304"), "{bs}");
    // ptxas's 4 LDS.128 of As: one row of the 4.
    let r#as = table
        .lines()
        .find(|l| l.contains("As[threadIdx.y][kk] ×4"))
        .unwrap();
    assert!(r#as.contains("4–7") && r#as.contains("1,048,576") && r#as.contains("2,097,152 wf"));
    // 7 accesses of the source, 25 instructions.
    let data_rows = |t: &str| {
        t.lines()
            .filter(|l| l.starts_with('│') && l.contains(".cu:"))
            .count()
    };
    assert_eq!(data_rows(&table), 7);
    let per_instruction = run("analyze", &launch, &["--by", "instruction"]);
    assert_eq!(data_rows(&per_instruction), 25);
    assert!(!per_instruction.contains("×16"));
    // JSON keeps every instruction; the summed row is their sum.
    let mut a = vec!["analyze"];
    a.extend_from_slice(&launch);
    let v = json(&a);
    let sites = v["architectures"][0]["sites"].as_array().unwrap();
    assert_eq!(sites.len(), 25);
    let (req, _, wf, copies) = sums(&v, 31, 42, "load");
    assert_eq!((req, wf, copies), (4_194_304, 4_194_304, 16));
    assert!(sites[8..24]
        .iter()
        .all(|s| s["text"] == "Bs[kk][threadIdx.x]"));
}

/// `--sort` orders the rows (most first on the first CC, ties in source order) and `--top N`
/// keeps N, saying so; the total row stays the kernel's.
#[test]
fn sort_and_top() {
    if !compiler() {
        return;
    }
    let launch = matmul("matmul_cols");
    let labels = |t: &str| -> Vec<String> {
        t.lines()
            .filter(|l| l.starts_with('│') && l.contains(".cu:"))
            .map(|l| {
                l.split('┆')
                    .next()
                    .unwrap()
                    .trim_matches(['│', ' '])
                    .to_string()
            })
            .collect()
    };
    let all = run("analyze", &launch, &[]);
    assert_eq!(labels(&all), ["0", "1", "2", "3", "4–7", "8–23", "24"]);
    // Excess: As's 16-byte column loads (12,582,912 wavefronts over the ideal), then the two
    // strided global loads (3,145,728 sectors each, in source order).
    let t = run("analyze", &launch, &["--sort", "excess", "--top", "3"]);
    assert_eq!(labels(&t), ["4–7", "1", "3"]);
    assert!(t.contains("rows: the 3 with the most excess (CC 9.0) of 7; the total is the kernel's"));
    let total = |t: &str| {
        let l = t.lines().find(|l| l.contains(" total ")).unwrap();
        l.split(['┆', '│'])
            .map(str::trim)
            .filter(|c| !c.is_empty())
            .collect::<Vec<_>>()
            .join("|")
    };
    assert_eq!(total(&t), total(&all));
    let t = run("analyze", &launch, &["--sort", "requests", "--top", "2"]);
    assert_eq!(labels(&t), ["8–23", "4–7"]);
    let t = run("analyze", &launch, &["--sort", "sectors"]);
    // 16,777,216 wavefronts, then three rows of 4,194,304 sectors or wavefronts.
    assert_eq!(labels(&t)[..4], ["4–7", "1", "3", "8–23"]);
    let (ok, _, err) = warpscope(&[&["analyze"], &launch[..], &["--top", "0"]].concat());
    assert!(!ok && err.contains("--top"), "{err}");
}

/// The HTML page is self-contained (no scripts or external resources), has every line of
/// the kernel, colours lines by their worst access and draws each access's costliest warp.
#[test]
fn html_is_self_contained() {
    if !compiler() {
        return;
    }
    let launch = matmul("matmul_cols");
    let html = run("annotate", &launch, &["--format", "html"]);
    assert!(html.starts_with("<!DOCTYPE html>"));
    let src = std::fs::read_to_string("tests/kernels/compiled/matmul_tiled.cu").unwrap();
    for (i, l) in src.lines().enumerate().skip(36).take(18) {
        let esc = l
            .replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;");
        assert!(html.contains(&esc), "line {}: {l}", i + 1);
    }
    for external in [
        "src=", "href=", "<script", "<link", "@import", "http://", "https://",
    ] {
        assert!(!html.contains(external), "{external}");
    }
    // The figures' markers refer to the page itself only.
    assert_eq!(html.matches("url(").count(), html.matches("url(#").count());
    // Lines 45, 46, 50 and 53 have accesses; 45 is red (a 12.5 % shared store), 50 too.
    assert_eq!(html.matches("<details class=\"line").count(), 4);
    assert!(html.contains("<details class=\"line s2\" id=\"L45\">"));
    assert!(html.contains("<details class=\"line s2\" id=\"L50\">"));
    // One costliest-warp picture per access (7) and the SASS ptxas made.
    assert_eq!(html.matches("Its costliest warp").count(), 7);
    assert!(html.contains("<svg"));
    assert!(html.contains("LDS.128"));
}

/// `--show ptx,sass`: under each access its PTX instructions with their own figures, those
/// ptxas merged, and the SASS.
#[test]
fn show_ptx_and_sass() {
    if !compiler() {
        return;
    }
    let launch = matmul("matmul_rows");
    let out = run(
        "annotate",
        &launch,
        &["--show", "ptx,sass", "--lines", "31"],
    );
    assert!(out.contains("ptx 93 ld.shared.f32 %f9, [%r7];"), "{out}");
    assert!(out.contains("sass LDS.128 R8, [R18]"), "{out}");
    assert!(out.contains("ptx 96 ld.shared.f32 %f12, [%r7+4];  (ptxas: merged into a wider one, no access of its own)"));
    // Each of the 4 LDS.128 rows has its own figures: a quarter of the access's.
    let ptx93 = out.lines().find(|l| l.contains("ptx 93 ")).unwrap();
    assert!(
        ptx93.contains("262,144") && ptx93.contains("524,288 wf"),
        "{ptx93}"
    );
    // Only line 31 is shown.
    assert!(!out.contains("A[row * k"));
    let out = run("annotate", &launch, &["--show", "sass", "--lines", "26"]);
    assert!(out.contains("sass LDG.E"), "{out}");
    assert!(!out.contains("ptx 82"));
}

/// Each access of a line is its own `explain --line L:COL`; an unrolled loop's copies are
/// one, whose costliest warp is explained.
#[test]
fn explain_each_access_of_a_line() {
    if !compiler() {
        return;
    }
    let explain = |at: &str| {
        let mut a = vec!["explain"];
        a.extend_from_slice(TRANSPOSE);
        a.extend(["--line", at]);
        json(&a)
    };
    let e = explain("52:9");
    assert_eq!(
        (e["text"].as_str(), e["op"].as_str()),
        (Some("tile[threadIdx.y + j][threadIdx.x]"), Some("store"))
    );
    let e = explain("52:46");
    assert_eq!(
        (e["text"].as_str(), e["space"].as_str()),
        (Some("idata[(y + j) * width + x]"), Some("global"))
    );
    let e = explain("59:39");
    assert_eq!(e["architectures"][0]["cost"]["wavefronts"], 32);
    // The line alone names two accesses: a list, grouped.
    let mut a = vec!["explain"];
    a.extend_from_slice(TRANSPOSE);
    a.extend(["--line", "59"]);
    let (ok, _, err) = warpscope(&a);
    assert!(!ok);
    assert!(err.contains("has 2 accesses (8 instructions)"), "{err}");
    assert!(
        err.contains(
            "59:39 tile[threadIdx.x][threadIdx.y + j] (shared load, 4 B) (4 instructions)"
        ),
        "{err}"
    );
}

/// Bad input ends in a message: lines past the file's end, an unknown --show, a pattern.
#[test]
fn bad_input() {
    let mut src = TRANSPOSE.to_vec();
    src.pop();
    src.pop();
    src.extend(["--frontend", "source"]);
    let (ok, _, err) = warpscope(&[&["annotate"], &src[..], &["--lines", "500"]].concat());
    assert!(!ok);
    assert!(
        err.contains("--lines 500-500: examples/transpose.cu has"),
        "{err}"
    );
    let (ok, _, err) = warpscope(&[&["annotate"], &src[..], &["--lines", "9-3"]].concat());
    assert!(!ok && err.contains("FIRST-LAST"), "{err}");
    let (ok, _, err) = warpscope(&[&["annotate"], &src[..], &["--show", "ptx,asm"]].concat());
    assert!(
        !ok && err.contains("asm") && err.contains("ptx, sass"),
        "{err}"
    );
    let (ok, _, err) = warpscope(&["annotate", "-e", "float a[]; a[threadIdx.x]"]);
    assert!(!ok && err.contains("not a pattern"), "{err}");
    // The source front end annotates too; it has no PTX to show, and says so.
    let (ok, out, err) = warpscope(&[&["annotate"], &src[..], &["--show", "ptx"]].concat());
    assert!(ok, "{err}");
    assert!(err.contains("no compiler's PTX"), "{err}");
    assert!(out.contains("^ load shared, 4 B"), "{out}");
}
