//! Wide local-memory accesses against the H100 (`tests/data/h100/local/`): the PTX of
//! `tests/kernels/local_wide.cu` analyzed at CC 9.0 gives the local requests and sectors Nsight
//! Compute measured, for 4-, 8- and 16-byte accesses.

mod common;
use common::warpscope;
use std::collections::HashMap;

const DIR: &str = "tests/data/h100/local/";

/// ncu's metrics (name → value) of the kernel whose demangled name starts with `kernel(`.
fn measured(kernel: &str) -> HashMap<String, u64> {
    let text = std::fs::read_to_string(format!("{DIR}ncu-local-wide.csv")).unwrap();
    let mut m = HashMap::new();
    for l in text.lines().filter(|l| l.starts_with('"')) {
        let f: Vec<&str> = l.trim_matches('"').split("\",\"").collect();
        if f.len() == 15 && f[4].starts_with(&format!("{kernel}(")) {
            m.insert(f[12].to_string(), f[14].replace(',', "").parse().unwrap());
        }
    }
    m
}

/// warpscope's CC 9.0 totals: (local ld requests, sectors, local st requests, sectors).
fn predicted(kernel: &str) -> (u64, u64, u64, u64) {
    let (code, out, err) = warpscope(&[
        "analyze",
        &format!("{DIR}local_wide.ptx"),
        "--kernel",
        kernel,
        "--grid",
        "64",
        "--block",
        "256",
        "--arg",
        "param_1=3",
        "--cc",
        "9.0",
        "--format",
        "json",
    ]);
    assert!(code, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let t = &v["architectures"][0]["totals"];
    let g = |k: &str, f: &str| t[k][f].as_u64().unwrap();
    (
        g("local_load", "requests"),
        g("local_load", "sectors"),
        g("local_store", "requests"),
        g("local_store", "sectors"),
    )
}

#[test]
fn wide_local_accesses_are_one_request_per_word_as_measured() {
    for (kernel, want) in [
        ("local_f32", (512, 16_384, 16_384, 65_536)),
        ("local_f64", (1_024, 32_768, 16_384, 65_536)),
        ("local_f32x4", (2_048, 65_536, 16_384, 65_536)),
    ] {
        let m = measured(kernel);
        let hw = (
            m["l1tex__t_requests_pipe_lsu_mem_local_op_ld.sum"],
            m["l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum"],
            m["l1tex__t_requests_pipe_lsu_mem_local_op_st.sum"],
            m["l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum"],
        );
        assert_eq!(hw, want, "{kernel}: the stored measurement");
        assert_eq!(predicted(kernel), want, "{kernel}");
    }
}

/// `explain` shows a wide local access as the measured words: the 16-byte `ld.local.v4` of
/// `local_f32x4` (k = 3, warp 0) is 4 requests, one per 4-byte word, each lane's word j at
/// +4·j·256 bytes, 32 sectors a word; the picture labels each word's bytes with its lane.
#[test]
fn explain_draws_every_word_of_a_wide_local_access() {
    let args = [
        "explain",
        &format!("{DIR}local_wide.ptx"),
        "--kernel",
        "local_f32x4",
        "--grid",
        "64",
        "--block",
        "256",
        "--arg",
        "param_1=3",
        "--cc",
        "9.0",
        "--site",
        "8",
        "--warp",
        "0",
    ]
    .map(String::from);
    let a: Vec<&str> = args.iter().map(String::as_str).collect();
    let (ok, text, err) = warpscope(&a);
    assert!(ok, "{err}");
    assert!(
        text.contains("load · local · 16 bytes per lane, 4 words of 4 bytes"),
        "{text}"
    );
    assert!(text.contains("4 requests · 128 transactions"), "{text}");
    assert!(
        text.contains("Each lane's 16-byte load is 4 accesses of one 4-byte word"),
        "{text}"
    );
    // Lane 3 reads a[9 & 7] = a[1]: its words at 0x1000 + 4·3 + j·0x400, each drawn.
    for line in ["0x1000 │", "0x1400 │", "0x1800 │", "0x1c00 │"] {
        let row = text
            .lines()
            .find(|l| l.trim_start().starts_with(line))
            .unwrap_or_else(|| panic!("no line {line}: {text}"));
        assert!(row.contains(" 3 "), "{line}: {row}");
    }
    let mut j = a.clone();
    j.extend(["--format", "json"]);
    let (ok, out, err) = warpscope(&j);
    assert!(ok, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let words = v["further_words"].as_array().unwrap();
    assert_eq!(words.len(), 3);
    let addr = |w: &serde_json::Value, l: usize| w[l].as_u64().unwrap();
    for (j, w) in words.iter().enumerate() {
        for l in 0..32 {
            assert_eq!(addr(w, l), addr(&v["addrs"], l) + 4 * (j as u64 + 1) * 256);
        }
    }
}

/// PTX without `.loc` has no source line: the table names the file alone (the PTX column
/// gives the instruction's line), not `file:0:0`.
#[test]
fn sites_without_a_source_line_name_the_file_alone() {
    let (ok, out, err) = warpscope(&[
        "analyze",
        &format!("{DIR}local_wide.ptx"),
        "--kernel",
        "local_f32",
        "--grid",
        "64",
        "--block",
        "256",
        "--arg",
        "param_1=3",
        "--cc",
        "9.0",
    ]);
    assert!(ok, "{err}");
    assert!(!out.contains(":0:0"), "{out}");
    assert!(out.contains("local_wide.ptx ┆ st.local.f32"), "{out}");
}
