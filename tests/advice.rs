//! Advice through the binary (`analyze --format json`): the cause found from what each
//! warp's lanes cover, and the fix's figures re-modelled per CC. No advice for an access at
//! its minimum (16×16 blocks reading half-rows), padding for `float3` and for shared column
//! walks, never the read-only path for a store. The per-pattern sweep is the advice crate's
//! unit test (`sweep_no_advice_at_the_minimum_and_no_ldg_for_stores`).

use serde_json::Value;
mod common;
use common::compiler;

fn json(args: &[&str]) -> Value {
    let mut a = vec!["analyze"];
    a.extend_from_slice(args);
    a.extend(["--format", "json"]);
    let (ok, out, err) = common::warpscope(&a);
    assert!(ok, "{args:?} failed: {err}");
    serde_json::from_str(&out).unwrap()
}

/// Every advice of the analysis: (site text, advice).
fn advice(v: &Value) -> Vec<(String, Value)> {
    v["advice"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|s| {
            let text = s["text"].as_str().unwrap().to_string();
            s["advice"]
                .as_array()
                .unwrap()
                .iter()
                .map(move |a| (text.clone(), a.clone()))
        })
        .collect()
}

/// The outcome of `adv` on `cc`: (before, after) counters.
fn outcome<'a>(adv: &'a Value, cc: &str) -> (&'a Value, &'a Value) {
    let o = adv["outcomes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["cc"] == cc)
        .unwrap_or_else(|| panic!("no outcome on {cc} in {adv}"));
    (&o["before"], &o["after"])
}

fn site<'a>(v: &'a Value, cc: &str, row: usize) -> &'a Value {
    &v["architectures"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["cc"] == cc)
        .unwrap()["sites"][row]
}

const ROWS_16: &str = "float a[]; a[(blockIdx.y*16+threadIdx.y)*1024 + blockIdx.x*16+threadIdx.x]";
const BLOCK_16: &[&str] = &["--grid", "4,4", "--block", "16,16"];

#[test]
fn half_rows_of_16x16_blocks_at_100_percent_get_no_advice() {
    for pattern in [ROWS_16.to_string(), format!("{ROWS_16} = 1")] {
        let mut args = vec!["-e", pattern.as_str(), "--cc", "1.0,1.3,3.5,5.0,7.0,9.0"];
        args.extend_from_slice(BLOCK_16);
        let v = json(&args);
        // 16 blocks × 8 warps, each 2 half-rows of 64 bytes = 4 sectors, 100 %.
        for cc in ["7.0", "9.0"] {
            let s = site(&v, cc, 0);
            assert_eq!(
                (s["requests"].as_u64(), s["sectors"].as_u64()),
                (Some(128), Some(512))
            );
            assert_eq!(s["efficiency"].as_f64(), Some(1.0));
        }
        assert_eq!(advice(&v), [], "{pattern}");
    }
    // 2.0: loads through L1 take a 128-byte line per half-row (50 %): the block's width is
    // the cause, and a 32-wide block the fix (1 line). Its stores (32-byte L2 segments) are
    // at 100 %: nothing.
    let mut args = vec!["-e", ROWS_16, "--cc", "2.0"];
    args.extend_from_slice(BLOCK_16);
    let a = advice(&json(&args));
    assert_eq!(a.len(), 1);
    let adv = &a[0].1;
    assert_eq!(adv["cause"]["kind"], "narrow_rows");
    assert_eq!(
        (
            adv["cause"]["rows"].as_u64(),
            adv["cause"]["row_lanes"].as_u64()
        ),
        (Some(2), Some(16))
    );
    let (before, after) = outcome(adv, "2.0");
    assert_eq!(
        (
            before["transactions"].as_u64(),
            after["transactions"].as_u64()
        ),
        (Some(2), Some(1))
    );
    let store = format!("{ROWS_16} = 1");
    let mut args = vec!["-e", store.as_str(), "--cc", "2.0"];
    args.extend_from_slice(BLOCK_16);
    assert_eq!(advice(&json(&args)), []);
}

#[test]
fn column_walk_of_16x16_blocks_swaps_the_indices() {
    let e = "float a[]; a[(blockIdx.x*16+threadIdx.x)*1024 + blockIdx.y*16+threadIdx.y]";
    let mut args = vec!["-e", e, "--cc", "2.0,9.0"];
    args.extend_from_slice(BLOCK_16);
    let a = advice(&json(&args));
    assert_eq!(a.len(), 3, "{a:?}");
    let adv = &a[0].1;
    assert_eq!(adv["cause"]["kind"], "column_walk");
    assert_eq!(adv["cause"]["row_bytes"], 4096);
    assert!(adv["why"]
        .as_str()
        .unwrap()
        .contains("2 neighbouring columns of 16 threads"));
    // 9.0: each lane pair (l, l + 16) shares a sector: 16 sectors, 25 %; swapped: 2
    // half-rows, 4 sectors. 2.0: 16 lines → 2 (a line per half-row) …
    let (before, after) = outcome(adv, "9.0");
    assert_eq!(
        (before["sectors"].as_u64(), after["sectors"].as_u64()),
        (Some(16), Some(4))
    );
    assert_eq!(before["efficiency"].as_f64(), Some(0.25));
    let (before, after) = outcome(adv, "2.0");
    assert_eq!(
        (
            before["transactions"].as_u64(),
            after["transactions"].as_u64()
        ),
        (Some(16), Some(2))
    );
    // … so on 2.0 alone the block's width follows: a 32-wide block reads 1 line.
    let narrow = &a[1].1;
    assert_eq!(narrow["cause"]["kind"], "narrow_rows");
    assert_eq!(narrow["outcomes"].as_array().unwrap().len(), 1);
    let (before, after) = outcome(narrow, "2.0");
    assert_eq!(
        (
            before["transactions"].as_u64(),
            after["transactions"].as_u64()
        ),
        (Some(16), Some(1))
    );
    // The read as a 2-D texture (CC 2.0, where the global load costs most): 64 sectors in 1
    // request against 16 sectors in 8 (one per quad of lanes).
    let tex = &a[2].1;
    assert_eq!(tex["cause"]["kind"], "texture_path");
    assert_eq!(tex["cause"]["global_sectors"], 64);
    assert_eq!(tex["cause"]["texture_sectors"], 16);
    assert_eq!(tex["cause"]["texture_requests"], 8);
}

#[test]
fn float3_particles_get_structure_of_arrays_and_float4_padding() {
    let v = json(&[
        "tests/kernels/advice/float3_aos.cu",
        "--kernel",
        "move",
        "--frontend",
        "source",
        "--grid",
        "4",
        "--block",
        "128",
        "--arg",
        "n=512",
        "--arg",
        "dt=1",
        "--cc",
        "9.0",
    ]);
    // Each of pos[i] (load), vel[i], pos[i] (store) moves 3 fields of 4 bytes, 12 bytes
    // apart: 16 warps × 3 = 48 requests of 12 sectors (384 bytes for 128 used).
    for row in 0..3 {
        let s = site(&v, "9.0", row);
        assert_eq!(
            (s["requests"].as_u64(), s["sectors"].as_u64()),
            (Some(48), Some(576))
        );
    }
    let a = advice(&v);
    assert_eq!(a.len(), 6, "{a:?}");
    for pair in a.chunks(2) {
        let (soa, pad) = (&pair[0].1, &pair[1].1);
        assert_eq!(soa["cause"]["kind"], "array_of_structures");
        assert_eq!(soa["cause"]["struct_bytes"], 12);
        let (before, after) = outcome(soa, "9.0");
        assert_eq!(
            (before["sectors"].as_u64(), after["sectors"].as_u64()),
            (Some(12), Some(4))
        );
        assert_eq!(pad["cause"]["kind"], "pad_structure");
        assert_eq!(pad["cause"]["padded_bytes"], 16);
        // One float4 per lane: 512 bytes = 16 sectors, replacing 3 × 12 = 36.
        let (_, after) = outcome(pad, "9.0");
        assert_eq!(
            (after["sectors"].as_u64(), after["bytes_requested"].as_u64()),
            (Some(16), Some(512))
        );
        assert!(pad["fix"].as_str().unwrap().contains("float4"));
        for x in pair {
            assert!(!x.1["fix"].as_str().unwrap().contains("__ldg"));
        }
    }
    // The store's padding stores each element with one access.
    assert!(a[5].1["fix"]
        .as_str()
        .unwrap()
        .contains("store each element"));
}

#[test]
fn shared_column_walks_get_padding_first() {
    // t[16][16] under 16×16 blocks: 1.3 16-way per half-warp (32) → [16][17], 1 per
    // half-warp; 9.0 8 wavefronts → [16][18], 1 ([16][17] leaves 2).
    let v = json(&[
        "-e",
        "__shared__ float t[16][16]; t[threadIdx.x][threadIdx.y]",
        "--block",
        "16,16",
        "--cc",
        "1.3,9.0",
    ]);
    // One advice for the cause, each CC with its own bank count and padding.
    let a = advice(&v);
    assert_eq!(a.len(), 1, "{a:?}");
    let adv = &a[0].1;
    assert_eq!(adv["cause"]["kind"], "bank_stride");
    let words = |key: &str, i: usize| {
        let g = &adv[key][i];
        (g["ccs"].clone(), g["text"].as_str().unwrap().to_string())
    };
    let (ccs, why) = words("why_by_cc", 0);
    assert_eq!(ccs, serde_json::json!(["1.3"]));
    assert!(why.contains("with the 16 banks"), "{why}");
    let (ccs, why) = words("why_by_cc", 1);
    assert_eq!(ccs, serde_json::json!(["9.0"]));
    assert!(why.contains("with the 32 banks"), "{why}");
    for (i, cc, pad, before, after) in [(0, "1.3", "[N][17]", 32, 2), (1, "9.0", "[N][18]", 8, 1)] {
        let (ccs, fix) = words("fix_by_cc", i);
        assert_eq!(ccs, serde_json::json!([cc]));
        assert!(
            fix.starts_with("pad each row") && fix.contains(pad),
            "{fix}"
        );
        assert!(fix.find(pad) < fix.find("XOR"), "{fix}");
        let (b, f) = outcome(adv, cc);
        assert_eq!(
            (b["wavefronts"].as_u64(), f["wavefronts"].as_u64()),
            (Some(before), Some(after))
        );
    }
    // t[32][32] under 32×32 blocks: 32-way → [32][33], 1 wavefront.
    let v = json(&[
        "-e",
        "__shared__ float t[32][32]; t[threadIdx.x][threadIdx.y]",
        "--block",
        "32,32",
        "--cc",
        "9.0",
    ]);
    let a = advice(&v);
    assert_eq!(a.len(), 1);
    assert!(a[0].1["fix"]
        .as_str()
        .unwrap()
        .contains("declare [N][33] instead of [N][32]"));
    let (b, f) = outcome(&a[0].1, "9.0");
    assert_eq!(
        (b["wavefronts"].as_u64(), f["wavefronts"].as_u64()),
        (Some(32), Some(1))
    );
}

#[test]
fn scattered_stores_never_get_ldg() {
    let load = "float a[]; a[(threadIdx.x * 37) % 32 * 1024 + threadIdx.x % 3]";
    let store = format!("{load} = 1");
    // 3.5 with loads cached in L1: the read-only cache's 32-byte lines help the load
    // (32 lines of 128 bytes → 32 of 32), never the store.
    let a = advice(&json(&["-e", load, "--cc", "3.5,9.0", "--l1", "ca"]));
    let ldg: Vec<_> = a
        .iter()
        .filter(|x| x.1["fix"].as_str().unwrap().contains("__ldg"))
        .collect();
    assert_eq!(ldg.len(), 1, "{a:?}");
    let (b, f) = outcome(&ldg[0].1, "3.5");
    assert_eq!(
        (
            b["transaction_bytes"].as_u64(),
            f["transaction_bytes"].as_u64()
        ),
        (Some(4096), Some(1024))
    );
    let a = advice(&json(&["-e", &store, "--cc", "all", "--l1", "ca"]));
    assert!(!a.is_empty());
    for (_, adv) in &a {
        assert_eq!(adv["cause"]["kind"], "scattered");
        let fix = adv["fix"].as_str().unwrap();
        assert!(
            !fix.contains("__ldg") && !fix.contains("read-only"),
            "{fix}"
        );
    }
}

// ---- Issue 19 §3: the fix a CUDA engineer would pick, one advice per line and cause.

/// The rows an advice covers.
fn rows(adv: &Value) -> Vec<u64> {
    adv["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r.as_u64().unwrap())
        .collect()
}

/// (before, after) of `key` in `adv`'s outcome on `cc`.
fn figures(adv: &Value, cc: &str, key: &str) -> (u64, u64) {
    let (b, f) = outcome(adv, cc);
    (b[key].as_u64().unwrap(), f[key].as_u64().unwrap())
}

const REDUCTION: &[&str] = &[
    "examples/reduction.cu",
    "--kernel",
    "reduce_strided",
    "--grid",
    "64",
    "--block",
    "256",
    "--dynamic-smem",
    "1024",
    "--arg",
    "n=16384",
    "--cc",
    "1.3,3.5,9.0",
];

#[test]
fn interleaved_reduction_gets_sequential_addressing() {
    // Harris's reduction 2: sdata[index] += sdata[index + s] with index = 2*s*tid; two
    // loads and a store on line 53, each with the doubling stride. One advice, ×3,
    // sequential addressing (not padding) with its cost: the costliest warp (lanes 8
    // floats apart) 8 wavefronts → 1 on 9.0, 16 → 2 on 1.3 (half-warps of 16 banks).
    let mut frontends = vec!["source"];
    if compiler() {
        frontends.push("auto");
    }
    for frontend in frontends {
        let mut args = REDUCTION.to_vec();
        args.extend(["--frontend", frontend]);
        let a = advice(&json(&args));
        assert_eq!(a.len(), 1, "{frontend}: {a:?}");
        let adv = &a[0].1;
        assert_eq!(adv["cause"]["kind"], "interleaved_reduction");
        assert_eq!(rows(adv).len(), 3, "{frontend}");
        let fix = adv["fix"].as_str().unwrap();
        assert!(
            fix.starts_with("use sequential addressing")
                && fix.contains("for (unsigned s = blockDim.x / 2; s > 0; s >>= 1)")
                && fix.contains("if (tid < s) sdata[tid] += sdata[tid + s];"),
            "{fix}"
        );
        assert!(!fix.contains("pad each row"), "{fix}");
        assert_eq!(figures(adv, "9.0", "wavefronts"), (8, 1));
        assert_eq!(figures(adv, "1.3", "wavefronts"), (16, 2));
        assert_eq!(figures(adv, "3.5", "wavefronts"), (4, 1));
    }
    // The sequential kernel of the same file gets no advice at all.
    let mut args = REDUCTION.to_vec();
    args[2] = "reduce_sequential";
    args.extend(["--frontend", "source"]);
    assert_eq!(advice(&json(&args)), []);
}

const DOUBLE_TILE: &[&str] = &[
    "tests/kernels/advice/double_tile.cu",
    "--grid",
    "4",
    "--block",
    "32,8",
    "--cc",
    "1.3,3.5,9.0",
    "--frontend",
    "source",
    "--kernel",
];

#[test]
fn double_tile_on_3x_gets_the_8_byte_bank_mode_first() {
    // tile[32][33] of doubles read down a column: 2-way on 3.5 in 4-byte mode, 1 in
    // 8-byte mode; 9.0 takes the 2 wavefronts any double access takes, 1.3 is
    // conflict-free per half-warp (4 passes for two half-warps of two 32-bit halves).
    let mut args = DOUBLE_TILE.to_vec();
    args.push("column_padded");
    let a = advice(&json(&args));
    let read: Vec<_> = a
        .iter()
        .filter(|x| x.0 == "tile[threadIdx.x][threadIdx.y + j]")
        .collect();
    assert_eq!(read.len(), 1, "{a:?}");
    let adv = &read[0].1;
    assert_eq!(adv["cause"]["kind"], "eight_byte_banks");
    assert!(adv["fix"]
        .as_str()
        .unwrap()
        .starts_with("set 8-byte banks before the launch: cudaDeviceSetSharedMemConfig(cudaSharedMemBankSizeEightByte)"));
    assert_eq!(figures(adv, "3.5", "wavefronts"), (2, 1));
    assert_eq!(adv["outcomes"].as_array().unwrap().len(), 1);
    // In 8-byte mode (--smem-bank-size 8) the same read is at its minimum.
    args.extend(["--smem-bank-size", "8"]);
    let a = advice(&json(&args));
    assert!(
        a.iter()
            .all(|x| x.0 != "tile[threadIdx.x][threadIdx.y + j]"),
        "{a:?}"
    );
    // Unpadded, tile[32][32]: the mode alone does not help (32 wavefronts either way):
    // padding first, each CC with its own bank count, then the mode on top of it on 3.5.
    let mut args = DOUBLE_TILE.to_vec();
    args.push("column_unpadded");
    let a = advice(&json(&args));
    let read: Vec<_> = a
        .iter()
        .filter(|x| x.0 == "tile[threadIdx.x][threadIdx.y + j]")
        .map(|x| &x.1)
        .collect();
    assert_eq!(read.len(), 2, "{a:?}");
    assert_eq!(read[0]["cause"]["kind"], "bank_stride");
    assert!(read[0]["fix"]
        .as_str()
        .unwrap()
        .contains("declare [N][33] instead of [N][32]"));
    let why = &read[0]["why_by_cc"];
    assert_eq!(why[0]["ccs"], serde_json::json!(["1.3"]));
    assert!(why[0]["text"].as_str().unwrap().contains("the 16 banks"));
    assert_eq!(why[1]["ccs"], serde_json::json!(["3.5", "9.0"]));
    assert!(why[1]["text"].as_str().unwrap().contains("the 32 banks"));
    assert_eq!(figures(read[0], "3.5", "wavefronts"), (32, 2));
    assert_eq!(figures(read[0], "9.0", "wavefronts"), (32, 2));
    assert_eq!(read[1]["cause"]["kind"], "eight_byte_banks");
    assert!(read[1]["fix"]
        .as_str()
        .unwrap()
        .contains("on top of the fix above"));
    assert_eq!(figures(read[1], "3.5", "wavefronts"), (32, 1));
}

const STRIDED: &str = "tests/kernels/advice/strided.cu";

#[test]
fn a_1d_strided_read_is_strided_access_not_a_column_walk() {
    // out[i] = in[i * stride], stride 32: lanes 128 bytes apart, like a column of a
    // 32-float matrix; but every warp starts at the same offset within the stride.
    let v = json(&[
        STRIDED,
        "--kernel",
        "gather_stride",
        "--grid",
        "8",
        "--block",
        "256",
        "--arg",
        "stride=32",
        "--cc",
        "2.0,9.0",
    ]);
    let a = advice(&v);
    assert_eq!(a.len(), 1, "{a:?}");
    let adv = &a[0].1;
    assert_eq!(adv["cause"]["kind"], "stride");
    assert_eq!(adv["cause"]["bytes"], 128);
    let fix = adv["fix"].as_str().unwrap();
    assert!(
        fix.starts_with("restructure so that consecutive threads read consecutive elements")
            && fix.contains("stage the data through shared memory"),
        "{fix}"
    );
    assert!(!adv["why"].as_str().unwrap().contains("column"));
    assert_eq!(figures(adv, "9.0", "sectors"), (32, 4));
    assert_eq!(figures(adv, "2.0", "transactions"), (32, 1));
    // One thread per row, a loop over the columns: a column walk (its warps start at
    // every column), with the texture alternative.
    let v = json(&[
        STRIDED, "--kernel", "row_sums", "--grid", "2", "--block", "256", "--arg", "n=64", "--cc",
        "9.0",
    ]);
    let a = advice(&v);
    assert_eq!(a[0].1["cause"]["kind"], "column_walk", "{a:?}");
    assert_eq!(a[0].1["cause"]["row_bytes"], 256);
    assert_eq!(figures(&a[0].1, "9.0", "sectors"), (32, 4));
}

#[test]
fn an_unrolled_loop_is_one_advice_with_its_instruction_count() {
    if !compiler() {
        return;
    }
    // nvcc unrolls the 4 loads of gather_stride4's line: 4 PTX loads, one advice ×4.
    let args = [
        STRIDED,
        "--kernel",
        "gather_stride4",
        "--grid",
        "8",
        "--block",
        "256",
        "--arg",
        "stride=32",
        "--cc",
        "9.0",
    ];
    let a = advice(&json(&args));
    assert_eq!(a.len(), 1, "{a:?}");
    assert_eq!(a[0].1["cause"]["kind"], "stride");
    assert_eq!(rows(&a[0].1), [0, 1, 2, 3]);
    let (ok, out, err) = common::warpscope(&[
        "analyze", args[0], args[1], args[2], args[3], args[4], args[5], args[6], args[7], args[8],
        args[9], args[10],
    ]);
    assert!(ok, "{err}");
    assert!(
        out.contains("advice #0 #1 #2 #3 tests/kernels/advice/strided.cu:33:5")
            && out.contains("(4 B global, ×4) — stride between lanes"),
        "{out}"
    );
}

#[test]
fn two_fields_read_on_one_line_are_one_advice_per_cause() {
    let mut frontends = vec!["source"];
    if compiler() {
        frontends.push("auto");
    }
    for frontend in frontends {
        let v = json(&[
            "tests/kernels/advice/aos_line.cu",
            "--kernel",
            "sum_xy",
            "--grid",
            "4",
            "--block",
            "128",
            "--arg",
            "n=512",
            "--cc",
            "2.0,9.0",
            "--frontend",
            frontend,
        ]);
        let a = advice(&v);
        let kinds: Vec<&Value> = a.iter().map(|x| &x.1["cause"]["kind"]).collect();
        assert_eq!(kinds, ["array_of_structures", "vector_width"], "{frontend}");
        for (_, adv) in &a {
            assert_eq!(rows(adv).len(), 2, "{frontend}: {adv}");
        }
        assert_eq!(figures(&a[0].1, "9.0", "sectors"), (16, 4));
        assert_eq!(figures(&a[0].1, "2.0", "transactions"), (4, 1));
    }
}

#[test]
fn advice_figures_are_formatted_as_the_table() {
    // Harris's stride kernel, s = 8: 12.5 % in the table and in the advice, never "12%".
    let (ok, out, err) = common::warpscope(&[
        "analyze",
        "examples/harris.cu",
        "--kernel",
        "stride<float>",
        "--grid",
        "64",
        "--block",
        "256",
        "--arg",
        "s=8",
        "--frontend",
        "source",
    ]);
    assert!(ok, "{err}");
    let advice: Vec<&str> = out
        .lines()
        .skip_while(|l| !l.starts_with("advice"))
        .collect();
    assert!(!advice.is_empty(), "{out}");
    let text = advice.join("\n");
    assert!(text.contains("32 tx (12.5%) → 4 tx (100.0%)"), "{text}");
    assert!(out
        .lines()
        .any(|l| l.contains("12.5%") && l.contains("a[i]")));
    for word in text.split_whitespace() {
        let digits = word
            .trim_start_matches('(')
            .trim_end_matches([')', ',', ';']);
        if let Some(n) = digits.strip_suffix('%') {
            assert!(
                n.contains('.'),
                "a percentage not formatted as the table's: {word} in {text}"
            );
        }
    }
}
