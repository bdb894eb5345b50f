//! JSON details (issue 19 §6): every advice names its file as the sites do; a site's source
//! text is whole in JSON and CSV (only the table shortens it); a PTX input's advice names the
//! `.cu` its `.loc` points at, as the table's rows do, never the `.ptx` with the `.cu`'s line.

mod common;
use common::{compiler, json, warpscope};

/// transpose_naive as nvcc 13 compiled it, `.loc`s naming /work/main/examples/transpose.cu.
const PTX: [&str; 13] = [
    "analyze",
    "crates/ptx/tests/data/transpose.ptx",
    "--kernel",
    "transpose_naive",
    "--grid",
    "32,32",
    "--block",
    "32,8",
    "--arg",
    "param_2=1024",
    "--arg",
    "param_3=1024",
    "-q",
];

/// examples/transpose.cu:42, 57 characters: longer than the table's 48.
const LINE_42: &str = "odata[x * height + (y + j)] = idata[(y + j) * width + x];";

#[test]
fn a_ptx_inputs_advice_names_the_cu_file_and_the_text_is_whole() {
    if !compiler() {
        return;
    }
    let v = json(&PTX);
    let source = std::fs::read_to_string("examples/transpose.cu").unwrap();
    assert_eq!(source.lines().nth(41).unwrap().trim(), LINE_42);
    for s in v["architectures"][0]["sites"].as_array().unwrap() {
        assert_eq!(
            (s["file"].as_str(), s["line"].as_u64()),
            (Some("examples/transpose.cu"), Some(42))
        );
        assert_eq!(s["text"], LINE_42);
    }
    // The strided store (rows #1 #3 #5 #7): its advice in the .cu, at the table's line.
    let advice = v["advice"].as_array().unwrap();
    assert_eq!(advice.len(), 1, "{advice:?}");
    assert_eq!(advice[0]["file"], "examples/transpose.cu");
    assert_eq!(
        (advice[0]["line"].as_u64(), advice[0]["column"].as_u64()),
        (Some(42), Some(9))
    );
    assert_eq!(advice[0]["text"], LINE_42);

    // CSV: whole too.
    let mut a = PTX.to_vec();
    a.extend(["--format", "csv"]);
    let (ok, csv, err) = warpscope(&a);
    assert!(ok, "{err}");
    assert_eq!(csv.matches(LINE_42).count(), 8, "{csv}");

    // The table shortens it, in the rows and the advice, and names the .cu.
    let (ok, table, err) = warpscope(&PTX);
    assert!(ok, "{err}");
    assert!(!table.contains(LINE_42));
    let short = "odata[x * height + (y + j)] = idata[(y + j) * w…";
    assert_eq!(table.matches(short).count(), 9, "{table}");
    assert!(
        table.contains(&format!(
            "advice #1 #3 #5 #7 examples/transpose.cu:42:9 {short} (4 B global, ×4)"
        )),
        "{table}"
    );
    assert!(!table.contains("transpose.ptx:42"));
}

#[test]
fn advice_of_a_cu_names_the_analyzed_file() {
    // The source interpreter: the column walk of transpose_naive, in the file analyzed.
    let v = json(&[
        "analyze",
        "examples/transpose.cu",
        "--frontend",
        "source",
        "--kernel",
        "transpose_naive",
        "--grid",
        "32,32",
        "--block",
        "32,8",
        "--arg",
        "width=1024",
        "--arg",
        "height=1024",
    ]);
    let advice = v["advice"].as_array().unwrap();
    assert!(!advice.is_empty());
    for a in advice {
        assert_eq!(a["file"], "examples/transpose.cu", "{a}");
    }
    for s in v["architectures"][0]["sites"].as_array().unwrap() {
        assert_eq!(s["file"], "examples/transpose.cu");
    }
}
