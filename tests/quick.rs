//! `analyze -e` (quick patterns) and `analyze --sweep`, through the binary: the figures are
//! the model's, checked against what the coalescing and bank rules give by hand.

use serde_json::Value;
mod common;

/// Runs `warpscope analyze ARGS`; (success, stdout, stderr). Never a panic.
fn run(args: &[&str]) -> (bool, String, String) {
    let mut a = vec!["analyze"];
    a.extend_from_slice(args);
    common::warpscope(&a)
}

fn json(args: &[&str]) -> Value {
    let mut a = args.to_vec();
    a.extend(["--format", "json"]);
    let (ok, out, err) = run(&a);
    assert!(ok, "{args:?} failed: {err}");
    serde_json::from_str(&out).unwrap()
}

fn fails_with(args: &[&str], needles: &[&str]) {
    let (ok, _, err) = run(args);
    assert!(!ok, "expected failure for {args:?}");
    for n in needles {
        assert!(err.contains(n), "message for {args:?} lacks '{n}':\n{err}");
    }
}

/// The sites of the architecture `cc`.
fn sites<'a>(a: &'a Value, cc: &str) -> &'a Vec<Value> {
    a["architectures"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["cc"] == cc)
        .unwrap_or_else(|| panic!("no CC {cc}"))["sites"]
        .as_array()
        .unwrap()
}

fn u(v: &Value, k: &str) -> u64 {
    v[k].as_u64().unwrap_or_else(|| panic!("{k} in {v}"))
}

const COALESCED: &str = "float a[]; a[blockIdx.x*blockDim.x + threadIdx.x]";
const STRIDE2: &str = "float a[]; a[(blockIdx.x*blockDim.x + threadIdx.x) * 2]";
const OFFSET: &str = "float a[]; a[blockIdx.x*blockDim.x + threadIdx.x + s]";

#[test]
fn coalesced_warp_of_floats_is_one_request_of_four_sectors() {
    let a = json(&[
        "-e", COALESCED, "--grid", "1", "--block", "32", "--cc", "9.0",
    ]);
    assert_eq!(a["source"], "-e");
    assert_eq!(a["kernel"], COALESCED);
    // A plain load is exactly one site: nothing else of the wrapper touches memory.
    let s = sites(&a, "9.0");
    assert_eq!(s.len(), 1, "{s:?}");
    let s = &s[0];
    assert_eq!(s["op"], "load");
    assert_eq!(s["space"], "global");
    assert_eq!((u(s, "line"), u(s, "column")), (1, 12));
    assert_eq!(s["text"], "a[blockIdx.x*blockDim.x + threadIdx.x]");
    // 32 lanes × 4 bytes = 128 contiguous, 256-aligned bytes: 4 sectors, nothing wasted.
    assert_eq!(u(s, "requests"), 1);
    assert_eq!(u(s, "sectors"), 4);
    assert_eq!(u(s, "bytes_requested"), 128);
    assert_eq!(s["efficiency"], 1.0);
}

#[test]
fn stride_two_moves_twice_the_bytes() {
    // --grid and --block default to one warp with -e.
    let a = json(&["-e", STRIDE2, "--cc", "1.0,9.0"]);
    assert_eq!(a["grid"], serde_json::json!([1, 1, 1]));
    assert_eq!(a["block"], serde_json::json!([32, 1, 1]));
    // 9.0: lanes at 8-byte steps span 256 bytes = 8 sectors for 128 bytes used.
    let s = &sites(&a, "9.0")[0];
    assert_eq!(u(s, "requests"), 1);
    assert_eq!(u(s, "sectors"), 8);
    assert_eq!(u(s, "transaction_bytes"), 256);
    assert_eq!(s["efficiency"], 0.5);
    // 1.0: a half-warp not reading consecutive words is not coalesced: one 32-byte
    // transaction per lane, 2 half-warps × 16 = 32, 128 of 1024 bytes used.
    let s = &sites(&a, "1.0")[0];
    assert_eq!(u(s, "requests"), 2);
    assert_eq!(u(s, "transactions"), 32);
    assert_eq!(s["efficiency"], 0.125);
}

#[test]
fn table_names_the_pattern_and_its_column() {
    let (ok, out, err) = run(&["-e", STRIDE2, "--cc", "9.0"]);
    assert!(ok, "{err}");
    assert!(
        out.starts_with(&format!("{STRIDE2} — grid (1,1,1) block (32,1,1) — -e\n")),
        "{out}"
    );
    assert!(out.contains("┆ -e:1:12 "), "{out}");
    // Advice, where given, names the same place.
    assert!(!out.contains("-e:4:"), "{out}");
    assert!(out.contains("50.0%"), "{out}");
}

#[test]
fn padding_removes_the_transpose_bank_conflict() {
    // Lanes of a warp share threadIdx.y and step threadIdx.x: a column of t. With 33 floats
    // a row, lane i hits bank (33 i) mod 32 = i: no conflict, one wavefront per request.
    let a = json(&[
        "-e",
        "__shared__ float t[32][33]; t[threadIdx.x][threadIdx.y]",
        "--block",
        "32,32",
        "--cc",
        "9.0",
    ]);
    let s = sites(&a, "9.0");
    assert_eq!(s.len(), 1);
    assert_eq!(s[0]["space"], "shared");
    assert_eq!((u(&s[0], "requests"), u(&s[0], "wavefronts")), (32, 32));
    // With 32 floats a row every lane hits the same bank: 32 wavefronts per request.
    let a = json(&[
        "-e",
        "__shared__ float t[32][32]; t[threadIdx.x][threadIdx.y]",
        "--block",
        "32,32",
        "--cc",
        "9.0",
    ]);
    let s = &sites(&a, "9.0")[0];
    assert_eq!((u(s, "requests"), u(s, "wavefronts")), (32, 1024));
}

#[test]
fn assignment_is_a_store_and_its_right_side_a_load() {
    let a = json(&[
        "-e",
        "float a[]; double b[]; a[threadIdx.x] = b[threadIdx.x * 2]",
        "--cc",
        "9.0",
    ]);
    let s = sites(&a, "9.0");
    assert_eq!(s.len(), 2, "{s:?}");
    let store = s.iter().find(|x| x["op"] == "store").unwrap();
    let load = s.iter().find(|x| x["op"] == "load").unwrap();
    assert_eq!((u(store, "column"), u(store, "sectors")), (24, 4));
    // 32 doubles at a 16-byte step: 512 bytes, 16 sectors, 256 bytes used.
    assert_eq!(
        (u(load, "column"), u(load, "width"), u(load, "sectors")),
        (41, 8, 16)
    );
}

#[test]
fn free_names_are_int_parameters() {
    let a = json(&["-e", OFFSET, "--arg", "s=1", "--cc", "9.0"]);
    assert_eq!(u(&sites(&a, "9.0")[0], "sectors"), 5);
    fails_with(
        &["-e", OFFSET, "--cc", "9.0"],
        &["'s' (int) has no value", "--arg s=VALUE"],
    );
    fails_with(
        &["-e", OFFSET, "--arg", "s=1", "--arg", "t=2", "--cc", "9.0"],
        &[
            "--arg t",
            "'t' is not a parameter of the -e pattern",
            "parameters: s",
        ],
    );
    // -D names are macros, not parameters.
    let a = json(&["-e", OFFSET, "-D", "s=8", "--cc", "9.0"]);
    assert_eq!(u(&sites(&a, "9.0")[0], "sectors"), 4);
}

#[test]
fn sized_global_array_is_bounds_checked() {
    // a[64] is 256 bytes; thread 16 reads at byte 256.
    fails_with(
        &["-e", "float a[64]; a[threadIdx.x * 4]", "--cc", "9.0"],
        &[
            "-e:1:14:",
            "outside allocation 'a' (256 bytes)",
            "thread (16,0,0)",
        ],
    );
    let a = json(&["-e", "float a[128]; a[threadIdx.x * 4]", "--cc", "9.0"]);
    // 16-byte step: 512 bytes, 16 sectors.
    assert_eq!(u(&sites(&a, "9.0")[0], "sectors"), 16);
}

#[test]
fn harris_offset_sweep() {
    let v = json(&[
        "-e", OFFSET, "--sweep", "s=0..32", "--grid", "1", "--block", "32", "--cc", "9.0",
    ]);
    assert_eq!(v["parameter"], "s");
    let points = v["points"].as_array().unwrap();
    assert_eq!(points.len(), 33);
    for (i, p) in points.iter().enumerate() {
        assert_eq!(p["value"], i as i64);
        let s = &sites(&p["analysis"], "9.0")[0];
        assert_eq!(u(s, "requests"), 1);
        // 128 bytes starting s floats into a 256-aligned allocation: 4 sectors when the
        // start falls on a 32-byte sector boundary (s a multiple of 8 floats), else 5.
        let want = if i % 8 == 0 { 4 } else { 5 };
        assert_eq!(u(s, "sectors"), want, "s={i}");
    }
}

#[test]
fn sweep_table_has_one_row_per_value() {
    let (ok, out, err) = run(&["-e", OFFSET, "--sweep", "s=-8..8:4", "--cc", "9.0"]);
    assert!(ok, "{err}");
    assert!(
        out.contains(" — -e — s = -8..8 (5 values) — one curve per access"),
        "{out}"
    );
    assert!(out.contains("9.0 tx/req"), "{out}");
    // v, requests, sectors, sectors per request, excess over the ideal 4, efficiency.
    for (v, tx, per, excess, eff) in [
        (-8, 4, "4.00", "0", "100.0%"),
        (-4, 5, "5.00", "1", "80.0%"),
        (0, 4, "4.00", "0", "100.0%"),
        (4, 5, "5.00", "1", "80.0%"),
        (8, 4, "4.00", "0", "100.0%"),
    ] {
        let row = out
            .lines()
            .find(|l| l.split(['│', '┆']).nth(1).map(str::trim) == Some(&v.to_string()))
            .unwrap_or_else(|| panic!("no row {v}:\n{out}"));
        let cells: Vec<&str> = row.split(['│', '┆']).map(str::trim).collect();
        assert_eq!(
            cells[1..7],
            [
                v.to_string().as_str(),
                "1",
                &tx.to_string(),
                per,
                excess,
                eff
            ]
        );
    }
}

#[test]
fn shared_sweep_shows_wavefronts_per_request() {
    let (ok, out, err) = run(&[
        "-e",
        "__shared__ float t[1024]; t[threadIdx.x * s]",
        "--sweep",
        "s=1..4",
        "--cc",
        "9.0",
    ]);
    assert!(ok, "{err}");
    assert!(out.contains("9.0 wf/req"), "{out}");
    // Stride s over 32 banks: gcd(s, 32)-way conflicts: 1, 2, 1, 4.
    let per: Vec<String> = out
        .lines()
        .map(|l| l.split(['│', '┆']).map(str::trim).collect::<Vec<_>>())
        .filter(|c| c.len() > 4 && c[1].parse::<i64>().is_ok())
        .map(|c| c[4].to_string())
        .collect();
    assert_eq!(per, ["1.00", "2.00", "1.00", "4.00"]);
}

#[test]
fn sweep_of_a_file_parameter() {
    // Harris's offset kernel: a[i] = a[i] + 1, a load and a store of one warp per value.
    let v = json(&[
        "examples/harris.cu",
        "--kernel",
        "offset<float>",
        "--grid",
        "1",
        "--block",
        "32",
        "--sweep",
        "s=0..2",
        "--cc",
        "9.0",
    ]);
    let tx: Vec<u64> = v["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            let t = &p["analysis"]["architectures"][0]["totals"];
            assert_eq!(
                u(&t["global_load"], "requests") + u(&t["global_store"], "requests"),
                2
            );
            u(&t["global_load"], "sectors") + u(&t["global_store"], "sectors")
        })
        .collect();
    assert_eq!(tx, [8, 10, 10]);
}

#[test]
fn bad_patterns_name_the_problem() {
    fails_with(&["-e", "", "--cc", "9.0"], &["-e:", "empty"]);
    fails_with(
        &["-e", "float a[]; a[", "--cc", "9.0"],
        &["-e:1:13:", "unbalanced '['"],
    );
    fails_with(
        &["-e", "flot a[]; a[threadIdx.x]", "--cc", "9.0"],
        &["-e:1:1:", "unknown type 'flot'"],
    );
    fails_with(
        &["-e", "float a[]; a[threadIdx.x] +", "--cc", "9.0"],
        &["-e:1:28:", "syntax error"],
    );
    fails_with(
        &["-e", "float a[]", "--cc", "9.0"],
        &["-e:1:1:", "no access"],
    );
    fails_with(
        &["-e", "float a[]; b[threadIdx.x]", "--cc", "9.0"],
        &["-e:1:12:", "'b' is not declared"],
    );
    fails_with(
        &["-e", "float a[]; a[threadIdx.x * q(2)]", "--cc", "9.0"],
        &["-e:1:28:", "unknown function 'q'"],
    );
}

#[test]
fn bad_sweeps_and_flag_combinations() {
    fails_with(
        &["-e", OFFSET, "--sweep", "s=5..1", "--cc", "9.0"],
        &["--sweep s=5..1", "range is empty"],
    );
    fails_with(
        &["-e", OFFSET, "--sweep", "q=0..3", "--cc", "9.0"],
        &[
            "--sweep q=0..3",
            "'q' is not a parameter of the -e pattern",
            "parameters: s",
        ],
    );
    fails_with(
        &["-e", OFFSET, "--sweep", "a=0..3", "--cc", "9.0"],
        &["'a' is a pointer parameter"],
    );
    fails_with(
        &[
            "-e", OFFSET, "--sweep", "s=0..3", "--arg", "s=1", "--cc", "9.0",
        ],
        &["both set 's'"],
    );
    fails_with(
        &["-e", OFFSET, "--sweep", "s=0..5000", "--cc", "9.0"],
        &["5001 values", "at most 4096"],
    );
    fails_with(
        &[
            "examples/harris.cu",
            "--kernel",
            "offset<float>",
            "--grid",
            "1",
            "--block",
            "32",
            "--sweep",
            "n=0..3",
        ],
        &[
            "offset<float> has no scalar parameter 'n'",
            "scalar parameters: s",
        ],
    );
    // A failing value is named.
    fails_with(
        &[
            "-e",
            "float a[64]; a[threadIdx.x + s]",
            "--sweep",
            "s=0..40:8",
            "--cc",
            "9.0",
        ],
        &["--sweep s=40: -e:1:14:", "outside allocation 'a'"],
    );
    fails_with(
        &["examples/harris.cu", "-e", COALESCED],
        &["cannot be used with"],
    );
    fails_with(
        &["examples/harris.cu", "--grid", "1", "--block", "32"],
        &["--kernel"],
    );
    fails_with(
        &["-e", COALESCED, "--kernel", "k"],
        &["cannot be used with"],
    );
}
