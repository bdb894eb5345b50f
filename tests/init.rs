//! `--init`: kernels whose addresses come from the data they read, analyzed on that data, by
//! both front ends (the source interpreter always; the compiled path where a CUDA compiler is
//! found: `scripts/test.sh` installs one). Figures are CC 9.0's: one request per warp-level
//! access, one 32-byte sector per sector touched.

mod common;
use common::{frontends, warpscope};

const GATHER: &str = "examples/gather.cu";

/// 1024 threads in 4 blocks of 256: 32 warps.
const LAUNCH: &[&str] = &[
    "--grid", "4", "--block", "256", "--arg", "n=1024", "--cc", "9.0",
];

fn temp(name: &str) -> String {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("warpscope-init-{}-{n}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name).to_string_lossy().to_string()
}

/// The stride-32 permutation of 0..1024: i → (i % 32)·32 + i / 32. Warp w reads in[l·32 + w]
/// for lanes l: 32 elements 128 bytes apart, 32 sectors.
fn stride32() -> Vec<i32> {
    (0..1024).map(|i| (i % 32) * 32 + i / 32).collect()
}

fn analyze(kernel: &str, frontend: &str, extra: &[&str]) -> serde_json::Value {
    let mut a = vec!["analyze", GATHER, "--kernel", kernel];
    a.extend(LAUNCH);
    a.extend(["--frontend", frontend, "--format", "json"]);
    a.extend(extra);
    let (ok, out, err) = warpscope(&a);
    assert!(ok, "{a:?}: {err}");
    serde_json::from_str(&out).unwrap()
}

fn fails(kernel: &str, frontend: &str, extra: &[&str]) -> String {
    let mut a = vec!["analyze", GATHER, "--kernel", kernel];
    a.extend(LAUNCH);
    a.extend(["--frontend", frontend]);
    a.extend(extra);
    let (ok, _, err) = warpscope(&a);
    assert!(!ok, "{a:?} should fail");
    err
}

/// (requests, sectors) of the launch's global loads.
fn loads(v: &serde_json::Value) -> (u64, u64) {
    let t = &v["architectures"][0]["totals"]["global_load"];
    (
        t["requests"].as_u64().unwrap(),
        t["sectors"].as_u64().unwrap(),
    )
}

/// The gather's loads: idx[i] (32 requests, 4 sectors each: 128) and in[idx[i]], whose
/// sectors per request follow idx: iota 4, zero 1 (every lane reads in[0]), the stride-32
/// permutation 32 — from a .npy and from raw little-endian bytes alike.
#[test]
fn gather_follows_the_index_data_on_both_front_ends() {
    let npy = temp("perm.npy");
    npyz::to_file_1d(&npy, stride32()).unwrap();
    let raw = temp("perm.bin");
    let bytes: Vec<u8> = stride32().iter().flat_map(|x| x.to_le_bytes()).collect();
    std::fs::write(&raw, bytes).unwrap();
    let cases: Vec<(String, u64)> = vec![
        ("idx=iota".into(), 4),
        ("idx=zero".into(), 1),
        (format!("idx=file:{npy}"), 32),
        (format!("idx=file:{raw}"), 32),
        // Every pointer iota, then idx back to zero: the later rule wins.
        ("iota --init idx=zero".into(), 1),
    ];
    let mut seen = Vec::new();
    for fe in frontends() {
        for (rule, per_request) in &cases {
            let mut extra = vec!["--init"];
            extra.extend(rule.split(' '));
            let v = analyze("gather", fe, &extra);
            assert_eq!(
                loads(&v),
                (64, 128 + 32 * per_request),
                "{fe} --init {rule}"
            );
            seen.push((fe, rule.clone(), loads(&v)));
        }
    }
    // Without --init: zeros, as before.
    assert_eq!(loads(&analyze("gather", "source", &[])), (64, 128 + 32));
    // The front ends agree case by case.
    for (fe, rule, l) in &seen {
        for (fe2, rule2, l2) in &seen {
            if rule == rule2 {
                assert_eq!(l, l2, "{fe} and {fe2} differ on --init {rule}");
            }
        }
    }
}

/// A stride read from memory: out[i] = in[i * stride[0]]. const:1 covers 128 contiguous
/// bytes per warp (4 sectors), const:2 256 bytes (8), const:32 one float per 128 bytes (32);
/// the stride[0] load itself is 1 sector per request.
#[test]
fn const_gives_a_computed_stride() {
    for fe in frontends() {
        for (v, sectors) in [("1", 4), ("2", 8), ("32", 32)] {
            let rule = format!("stride=const:{v}");
            let r = analyze("stride_from_memory", fe, &["--init", &rule]);
            assert_eq!(loads(&r), (64, 32 + 32 * sectors), "{fe} --init {rule}");
        }
    }
}

/// `--alloc` and a file must agree, and the message names both sizes; without `--alloc` the
/// file sizes the allocation, so a kernel reading past the file's end faults.
#[test]
fn file_sizes_are_checked_and_size_the_allocation() {
    let npy = temp("perm.npy");
    npyz::to_file_1d(&npy, stride32()).unwrap();
    let half = temp("half.npy");
    npyz::to_file_1d(&half, 0..512i32).unwrap();
    let rule = format!("idx=file:{npy}");
    let half_rule = format!("idx=file:{half}");
    for fe in frontends() {
        let e = fails("gather", fe, &["--init", &rule, "--alloc", "idx=1000"]);
        assert!(
            e.contains(&format!("--init {rule}: {npy} holds 1024 elements of int, but --alloc idx=1000 asks for 1000")),
            "{fe}: {e}"
        );
        // Agreeing sizes are fine.
        let v = analyze("gather", fe, &["--init", &rule, "--alloc", "idx=1024"]);
        assert_eq!(loads(&v), (64, 128 + 32 * 32));
        // 512 elements: threads 512.. read idx past its 2048 bytes.
        let e = fails("gather", fe, &["--init", &half_rule]);
        assert!(e.contains("idx") && e.contains("2048"), "{fe}: {e}");
    }
}

#[test]
fn dtype_and_name_mismatches_are_errors() {
    let floats = temp("f.npy");
    npyz::to_file_1d(&floats, (0..1024).map(|x| x as f32)).unwrap();
    let wide = temp("w.npy");
    npyz::to_file_1d(&wide, 0..1024i64).unwrap();
    for fe in frontends() {
        let e = fails("gather", fe, &["--init", &format!("idx=file:{floats}")]);
        assert!(
            e.contains("the .npy dtype is '<f4' (4-byte float), but the parameter's elements are int (4-byte signed integer)")
                && e.contains(".astype(numpy.int32)"),
            "{fe}: {e}"
        );
        let e = fails("gather", fe, &["--init", &format!("idx=file:{wide}")]);
        assert!(e.contains("'<i8' (8-byte signed integer)"), "{fe}: {e}");
        let e = fails("gather", fe, &["--init", "q=iota"]);
        assert!(
            e.contains(
                "--init q=iota: gather has no parameter 'q'; its pointer parameters: out, in, idx"
            ),
            "{fe}: {e}"
        );
        let e = fails("gather", fe, &["--init", "n=iota"]);
        assert!(e.contains("'n' is a scalar parameter"), "{fe}: {e}");
        let e = fails("gather", fe, &["--init", "idx=const:1.5"]);
        assert!(
            e.contains("1.5 is not a value of 'idx''s element type"),
            "{fe}: {e}"
        );
    }
    let e = fails("gather", "source", &["--init", "idx=ones"]);
    assert!(
        e.contains("'ones' is not a mode (zero, iota, random[:SEED], const:V or file:PATH)"),
        "{e}"
    );
}

/// `explain` reads the same data: with the stride-32 permutation the costliest warp of the
/// in[idx[i]] load touches 32 sectors; with iota 4.
#[test]
fn explain_reads_the_data() {
    let npy = temp("perm.npy");
    npyz::to_file_1d(&npy, stride32()).unwrap();
    for (rule, sectors) in [(format!("idx=file:{npy}"), 32), ("idx=iota".to_string(), 4)] {
        let mut a = vec!["explain", GATHER, "--kernel", "gather"];
        a.extend(LAUNCH);
        a.extend([
            "--frontend",
            "source",
            "--line",
            "12:18",
            "--format",
            "json",
        ]);
        a.extend(["--init", &rule]);
        let (ok, out, err) = warpscope(&a);
        assert!(ok, "{err}");
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        let c = &v["architectures"][0]["cost"];
        assert_eq!(c["sectors"].as_u64(), Some(sectors), "--init {rule}");
    }
}

/// `--sweep` keeps the data for every value: n = 32 and 64 are 1 and 2 warps of the gather,
/// each in[idx[i]] request 4 sectors under iota.
#[test]
fn sweep_keeps_the_data() {
    let (ok, out, err) = warpscope(&[
        "analyze",
        GATHER,
        "--kernel",
        "gather",
        "--grid",
        "1",
        "--block",
        "64",
        "--cc",
        "9.0",
        "--frontend",
        "source",
        "--init",
        "idx=iota",
        "--sweep",
        "n=32..64:32",
        "--format",
        "json",
    ]);
    assert!(ok, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let got: Vec<(u64, u64)> = v["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| loads(&p["analysis"]))
        .collect();
    assert_eq!(got, vec![(2, 8), (4, 16)]);
}

/// A histogram: atomicAdd(&bins[data[i] % 64], 1) with data = random:7 (the compiled path:
/// the interpreter has no atomics). Each warp's atomic touches one sector per distinct
/// (data % 64) / 8 among its lanes (8 four-byte bins per 32-byte sector), computed here from
/// the same generator; with zeros every lane hits bin 0: 1 sector.
#[test]
fn histogram_atomics_follow_random_data() {
    if !frontends().contains(&"ptx") {
        return;
    }
    let launch = ["--arg", "nbins=64"];
    let atomics = |v: &serde_json::Value| {
        let t = &v["architectures"][0]["totals"]["global_atomic"];
        (
            t["requests"].as_u64().unwrap(),
            t["sectors"].as_u64().unwrap(),
        )
    };
    let mut a = launch.to_vec();
    a.extend(["--init", "data=random:7"]);
    let v = analyze("histogram", "ptx", &a[..]);
    let elem = warpscope::init::ElemType::of_pointer("const int*", 4);
    let (data, _) = warpscope::init::contents(
        &warpscope::init::Mode::Random { seed: Some(7) },
        "data",
        &elem,
        0,
        None,
    )
    .unwrap();
    let values: Vec<i32> = data
        .to_vec(4 * 1024)
        .chunks(4)
        .map(|c| i32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    assert!(values.iter().all(|x| (0..32768).contains(x)));
    let expected: u64 = values
        .chunks(32)
        .map(|w| {
            let s: std::collections::BTreeSet<i32> = w.iter().map(|x| (x % 64) / 8).collect();
            s.len() as u64
        })
        .sum();
    assert!(
        expected > 32 * 6,
        "random bins spread over most of the 8 sectors"
    );
    assert_eq!(atomics(&v), (32, expected));
    let v = analyze("histogram", "ptx", &launch);
    assert_eq!(atomics(&v), (32, 32));
}
