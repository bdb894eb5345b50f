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

/// The two accesses of examples/transpose.cu:42 (`odata[…] = idata[…];`).
const STORE: &str = "odata[x * height + (y + j)]";
const LOAD: &str = "idata[(y + j) * width + x]";

#[test]
fn a_ptx_inputs_advice_names_the_cu_file() {
    if !compiler() {
        return;
    }
    let v = json(&PTX);
    let source = std::fs::read_to_string("examples/transpose.cu").unwrap();
    let line = source.lines().nth(41).unwrap();
    assert!(line.contains(STORE) && line.contains(LOAD), "{line}");
    let sites: Vec<_> = v["architectures"][0]["sites"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["file"].as_str().unwrap().to_string(),
                s["line"].as_u64().unwrap(),
                s["column"].as_u64().unwrap(),
                s["text"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let at = |c: u64, t: &str| ("examples/transpose.cu".to_string(), 42, c, t.to_string());
    assert_eq!(sites[..4], vec![at(9, STORE); 4]);
    assert_eq!(sites[4..], vec![at(39, LOAD); 4]);
    // The strided store (rows #0–#3): its advice in the .cu, at the table's line.
    let advice = v["advice"].as_array().unwrap();
    assert_eq!(advice.len(), 1, "{advice:?}");
    assert_eq!(advice[0]["file"], "examples/transpose.cu");
    assert_eq!(
        (advice[0]["line"].as_u64(), advice[0]["column"].as_u64()),
        (Some(42), Some(9))
    );
    assert_eq!(advice[0]["text"], STORE);
    let (ok, table, err) = warpscope(&PTX);
    assert!(ok, "{err}");
    assert!(
        table.contains(&format!(
            "advice #0 #1 #2 #3 examples/transpose.cu:42:9 {STORE} (4 B global, ×4)"
        )),
        "{table}"
    );
    assert!(!table.contains("transpose.ptx:42"));
}

/// An access of 87 characters is whole in JSON and CSV; the table shortens it.
#[test]
fn a_long_access_is_whole_in_json_and_csv() {
    if !compiler() {
        return;
    }
    const TEXT: &str =
        "values_of_the_input_array[blockIdx.x * blockDim.x + threadIdx.x + offset_into_the_array]";
    let args = [
        "analyze",
        "tests/kernels/compiled/long_access.cu",
        "--kernel",
        "long_access",
        "--grid",
        "4",
        "--block",
        "32",
        "--arg",
        "offset_into_the_array=0",
        "--cc",
        "9.0",
        "-q",
    ];
    let v = json(&args);
    let texts: Vec<&str> = v["architectures"][0]["sites"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["text"].as_str().unwrap())
        .collect();
    assert!(texts.contains(&TEXT), "{texts:?}");
    let mut a = args.to_vec();
    a.extend(["--format", "csv"]);
    let (ok, csv, err) = warpscope(&a);
    assert!(ok, "{err}");
    assert_eq!(csv.matches(TEXT).count(), 1, "{csv}");
    let (ok, table, err) = warpscope(&args);
    assert!(ok, "{err}");
    assert!(!table.contains(TEXT));
    assert!(
        table.contains("values_of_the_input_array[blockIdx.x * blockDim…"),
        "{table}"
    );
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
