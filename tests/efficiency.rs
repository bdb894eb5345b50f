//! Issue 19 §2, through the binary: efficiency against the ideal of the access's width,
//! `excess` (sectors or wavefronts above the ideal), a broadcast shown capped and named,
//! totals per memory space in the table, JSON and CSV, and `--sweep` per access or total.
//! Kernels: `tests/kernels/efficiency/efficiency.cu`, interpreted from source so that the
//! rows do not depend on the compiler at hand.

mod common;
use common::{json, warpscope};
use serde_json::Value;

const KERNELS: &str = "tests/kernels/efficiency/efficiency.cu";

fn analyze<'a>(kernel: &'a str, block: &'a str, cc: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut a = vec![
        "analyze",
        KERNELS,
        "--kernel",
        kernel,
        "--block",
        block,
        "--cc",
        cc,
        "--frontend",
        "source",
        "-q",
    ];
    if !extra.contains(&"--grid") {
        a.extend(["--grid", "1"]);
    }
    a.extend_from_slice(extra);
    a
}

fn u(v: &Value, key: &str) -> u64 {
    v[key].as_u64().unwrap_or_else(|| panic!("no {key} in {v}"))
}

/// The architecture `cc` of an analysis.
fn arch<'a>(v: &'a Value, cc: &str) -> &'a Value {
    v["architectures"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["cc"] == cc)
        .unwrap_or_else(|| panic!("no CC {cc}"))
}

/// The site of `arch` with this op and space (exactly one).
fn site<'a>(arch: &'a Value, op: &str, space: &str) -> &'a Value {
    let found: Vec<&Value> = arch["sites"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["op"] == op && s["space"] == space)
        .collect();
    assert_eq!(found.len(), 1, "{op} {space}: {found:?}");
    found[0]
}

/// (requests, wavefronts, ideal, excess) of a shared site or total.
fn wf(v: &Value) -> (u64, u64, u64, u64) {
    (
        u(v, "requests"),
        u(v, "wavefronts"),
        u(v, "ideal_wavefronts"),
        u(v, "excess_wavefronts"),
    )
}

/// The cells of the table row whose `#` (or first cell) and space are these.
fn row(table: &str, first: &str, space: &str) -> Vec<String> {
    table
        .lines()
        .map(|l| {
            l.split(['│', '┆'])
                .map(|c| c.trim().to_string())
                .collect::<Vec<_>>()
        })
        .find(|c| c.len() > 5 && (c[1] == first || c[2] == first) && c.iter().any(|x| x == space))
        .unwrap_or_else(|| panic!("no row {first} {space}:\n{table}"))
}

/// A float4 staged through shared memory is conflict free: on 9.0 each shared
/// instruction takes 4 wavefronts (128 for 32 warps), which is its ideal: excess 0, 100 %
/// (the table said 25 % when the ideal was one wavefront per request); on 3.5 (64-bit
/// banks) 2 per instruction, also its ideal (it said 50 %).
#[test]
fn float4_staging_is_conflict_free_at_its_ideal() {
    let v = json(&analyze("stage_float4", "32", "3.5,9.0", &["--grid", "32"]));
    for (cc, per) in [("9.0", 4), ("3.5", 2)] {
        let a = arch(&v, cc);
        for op in ["store", "load"] {
            let s = site(a, op, "shared");
            assert_eq!(wf(s), (32, 32 * per, 32 * per, 0), "{cc} {op}");
            assert_eq!(s["wavefront_efficiency"], 1.0, "{cc} {op}");
        }
        let t = &a["totals"]["shared"];
        assert_eq!(wf(t), (64, 64 * per, 64 * per, 0), "{cc}");
        assert_eq!(t["wavefront_efficiency"], 1.0);
        // The float4 global accesses: 16 sectors per request on 9.0, their ideal.
        let g = site(a, "load", "global");
        assert_eq!(
            (
                u(g, "sectors"),
                u(g, "ideal_sectors"),
                u(g, "excess_sectors")
            ),
            (512, 512, 0)
        );
    }
    let (ok, table, err) = warpscope(&analyze("stage_float4", "32", "3.5,9.0", &["--grid", "32"]));
    assert!(ok, "{err}");
    // # site access op space B | 3.5 req tx/wf excess eff | 9.0 req tx/wf excess eff
    let r = row(&table, "0", "shared");
    assert_eq!(
        r[7..15],
        ["32", "64 wf", "0", "100.0%", "32", "128 wf", "0", "100.0%"]
    );
    let total = row(&table, "total", "shared");
    assert_eq!(
        total[7..15],
        ["64", "128 wf", "0", "100.0%", "64", "256 wf", "0", "100.0%"]
    );
    let total = row(&table, "total", "global");
    assert_eq!(
        total[7..15],
        ["256", "1,024", "0", "100.0%", "64", "1,024", "0", "100.0%"]
    );
    assert!(table.contains(" 9.0 excess "), "{table}");
}

/// A tile of doubles padded to 33 columns on 3.5: with 8-byte banks the row writes and
/// column reads are conflict free (1 wavefront per request, the ideal); with the default
/// 4-byte banks a row of 256 bytes that does not start on a 64-word block conflicts.
#[test]
fn double_tile_on_kepler_in_both_bank_modes() {
    let eight = json(&analyze(
        "tile_double",
        "32,32",
        "3.5",
        &["--smem-bank-size", "8"],
    ));
    let a = arch(&eight, "3.5");
    assert_eq!(wf(site(a, "store", "shared")), (32, 32, 32, 0));
    assert_eq!(wf(site(a, "load", "shared")), (32, 32, 32, 0));
    assert_eq!(a["totals"]["shared"]["wavefront_efficiency"], 1.0);
    let four = json(&analyze("tile_double", "32,32", "3.5", &[]));
    let a = arch(&four, "3.5");
    assert_eq!(wf(site(a, "store", "shared")), (32, 63, 32, 31));
    assert_eq!(wf(site(a, "load", "shared")), (32, 64, 32, 32));
    let t = &a["totals"]["shared"];
    assert_eq!(wf(t), (64, 127, 64, 63));
    let e = t["wavefront_efficiency"].as_f64().unwrap();
    assert!((e - 64.0 / 127.0).abs() < 1e-12, "{e}");
}

/// A transpose through an unpadded tile: coalesced global accesses (100 %) and a 32-way
/// bank conflict on the shared read (32 wavefronts per request, ideal 1, excess 31 per
/// request). The totals are per space: global 100 %, shared (32 + 32) / (32 + 1024) —
/// the one mixed total row said 100 %.
#[test]
fn a_32_way_conflict_is_not_hidden_by_the_total() {
    let v = json(&analyze("transpose_smem", "32,32", "9.0", &[]));
    let a = arch(&v, "9.0");
    assert_eq!(wf(site(a, "load", "shared")), (32, 1024, 32, 992));
    assert_eq!(wf(site(a, "store", "shared")), (32, 32, 32, 0));
    let t = &a["totals"];
    assert_eq!(t["global"]["efficiency"], 1.0);
    assert_eq!(u(&t["global"], "requests"), 64);
    assert_eq!(wf(&t["shared"]), (64, 1056, 64, 992));
    let e = t["shared"]["wavefront_efficiency"].as_f64().unwrap();
    assert!((e - 64.0 / 1056.0).abs() < 1e-12, "{e}");
    // Per direction as before, and every space present.
    assert_eq!(u(&t["shared_load"], "wavefronts"), 1024);
    for k in ["global", "local", "shared", "constant"] {
        assert!(t[k].is_object(), "no totals.{k}");
    }
    assert!(t.get("texture").is_none());
    let (ok, table, err) = warpscope(&analyze("transpose_smem", "32,32", "9.0", &[]));
    assert!(ok, "{err}");
    assert_eq!(
        row(&table, "total", "shared")[7..11],
        ["64", "1,056 wf", "992", "6.1%"]
    );
    assert_eq!(
        row(&table, "total", "global")[7..11],
        ["64", "256", "0", "100.0%"]
    );
    // The one access alone (`-e`): its total is its own 1/32.
    let (ok, table, err) = warpscope(&[
        "analyze",
        "-e",
        "__shared__ float t[32][32]; t[threadIdx.x][threadIdx.y]",
        "--block",
        "32,32",
        "--cc",
        "9.0",
    ]);
    assert!(ok, "{err}");
    assert_eq!(
        row(&table, "0", "shared")[7..11],
        ["32", "1,024 wf", "992", "3.1%"]
    );
    assert_eq!(
        row(&table, "total", "shared")[7..11],
        ["32", "1,024 wf", "992", "3.1%"]
    );
}

/// CSV: the new columns on every row, and one `total` row per CC and space after the sites.
#[test]
fn csv_has_ideal_excess_and_per_space_total_rows() {
    let (ok, out, err) = warpscope(&analyze(
        "transpose_smem",
        "32,32",
        "2.0,9.0",
        &["--format", "csv"],
    ));
    assert!(ok, "{err}");
    let mut r = csv::Reader::from_reader(out.as_bytes());
    let header: Vec<String> = r.headers().unwrap().iter().map(String::from).collect();
    let rows: Vec<std::collections::HashMap<String, String>> = r
        .records()
        .map(|rec| {
            header
                .iter()
                .cloned()
                .zip(rec.unwrap().iter().map(String::from))
                .collect()
        })
        .collect();
    let totals: Vec<(&str, &str)> = rows
        .iter()
        .filter(|r| r["site"] == "total")
        .map(|r| (r["cc"].as_str(), r["space"].as_str()))
        .collect();
    assert_eq!(
        totals,
        [
            ("2.0", "global"),
            ("2.0", "shared"),
            ("9.0", "global"),
            ("9.0", "shared")
        ]
    );
    let shared9 = rows
        .iter()
        .find(|r| r["site"] == "total" && r["cc"] == "9.0" && r["space"] == "shared")
        .unwrap();
    assert_eq!(shared9["wavefronts"], "1056");
    assert_eq!(shared9["ideal_wavefronts"], "64");
    assert_eq!(shared9["excess_wavefronts"], "992");
    assert_eq!(shared9["wavefront_efficiency_percent"], "6.06");
    assert_eq!(shared9["efficiency_percent"], "");
    // No Nsight Compute metric on a total row: summing a metric column sums the sites.
    let metric = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum";
    assert_eq!(shared9[metric], "");
    let sum: u64 = rows
        .iter()
        .filter_map(|r| r[metric].parse::<u64>().ok())
        .sum();
    assert_eq!(sum, 1024);
}

/// A broadcast moves fewer sectors than the bytes requested need: the table shows 100 %
/// marked `*` with the legend naming it; JSON keeps the raw ratio (128 bytes from one
/// sector: 4) and an excess of 0.
#[test]
fn a_broadcast_is_capped_and_named() {
    let args = ["analyze", "-e", "float a[]; a[0]", "--cc", "9.0"];
    let (ok, table, err) = warpscope(&args);
    assert!(ok, "{err}");
    assert_eq!(
        row(&table, "0", "global")[7..11],
        ["1", "1", "0", "100.0%*"]
    );
    assert!(
        table.contains("\n*: broadcast: lanes share words"),
        "{table}"
    );
    let v = json(&args);
    let s = &arch(&v, "9.0")["sites"][0];
    assert_eq!(s["efficiency"], 4.0);
    assert_eq!((u(s, "ideal_sectors"), u(s, "excess_sectors")), (4, 0));
    // A shared broadcast of float4 (packed into 2 wavefronts, ideal 4) likewise.
    let (ok, table, err) = warpscope(&[
        "analyze",
        "-e",
        "__shared__ float4 t[8]; t[0]",
        "--cc",
        "9.0",
    ]);
    assert!(ok, "{err}");
    assert_eq!(
        row(&table, "0", "shared")[7..11],
        ["1", "2 wf", "0", "100.0%*"]
    );
    // No mark and no legend line without a broadcast.
    let (_, table, _) = warpscope(&["analyze", "-e", "float a[]; a[threadIdx.x]", "--cc", "9.0"]);
    assert!(!table.contains('*'), "{table}");
}

/// `--sweep` draws one curve (a table) per access by default, the kernel's totals per
/// memory space with `--sweep-total`; the header line says which.
#[test]
fn sweep_per_access_or_total() {
    let base = [
        "analyze",
        "-e",
        "__shared__ float t[1024]; float a[]; t[threadIdx.x * s] = a[threadIdx.x * s]",
        "--sweep",
        "s=1..2",
        "--cc",
        "9.0",
    ];
    let (ok, out, err) = warpscope(&base);
    assert!(ok, "{err}");
    assert!(
        out.lines().next().unwrap().ends_with(
            "s = 1..2 (2 values) — one curve per access (--sweep-total: per memory space)"
        ),
        "{out}"
    );
    let titles: Vec<&str> = out.lines().filter(|l| l.starts_with("access ")).collect();
    assert_eq!(titles.len(), 2, "{out}");
    assert!(
        titles.iter().any(|t| t.ends_with("load global, 4 B")),
        "{out}"
    );
    assert!(
        titles.iter().any(|t| t.ends_with("store shared, 4 B")),
        "{out}"
    );
    // The shared store at stride 2: 2 wavefronts, 1 above the ideal, 50 %.
    let cells: Vec<Vec<String>> = out
        .lines()
        .map(|l| l.split(['│', '┆']).map(|c| c.trim().to_string()).collect())
        .collect();
    assert!(
        cells.iter().any(|c| c[1..].starts_with(&[
            "2".to_string(),
            "1".into(),
            "2".into(),
            "2.00".into(),
            "1".into(),
            "50.0%".into()
        ])),
        "{out}"
    );
    let mut total = base.to_vec();
    total.push("--sweep-total");
    let (ok, out, err) = warpscope(&total);
    assert!(ok, "{err}");
    assert!(
        out.lines()
            .next()
            .unwrap()
            .ends_with("— totals, one curve per memory space"),
        "{out}"
    );
    let titles: Vec<&str> = out.lines().filter(|l| l.starts_with("total ")).collect();
    assert_eq!(titles, ["total global", "total shared"], "{out}");
    let (ok, _, err) = warpscope(&[
        "analyze",
        "-e",
        "float a[]; a[threadIdx.x]",
        "--sweep-total",
    ]);
    assert!(!ok && err.contains("--sweep"), "{err}");
}
