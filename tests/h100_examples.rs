//! warpscope's CC 9.0 predictions for the kernels of examples/ against counters measured
//! with Nsight Compute on an H100 (tests/data/h100/examples.csv, made by
//! scripts/h100/measure.sh). Every row there repeated exactly between runs; each is checked.

use warpscope::AnalyzeRequest;

const CSV: &str = include_str!("data/h100/examples.csv");

#[test]
fn examples_match_h100_counters() {
    let mut lines = CSV
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty());
    let header: Vec<&str> = lines.next().expect("header").split(',').collect();
    let col = |name: &str| {
        header
            .iter()
            .position(|h| *h == name)
            .unwrap_or_else(|| panic!("column {name}"))
    };
    let mut checked = 0;
    let mut failures = Vec::new();
    for line in lines {
        let f: Vec<&str> = line.split(',').collect();
        let file = f[col("file")];
        let dims = |s: &str| -> [u32; 3] {
            let v: Vec<u32> = s.split(';').map(|x| x.parse().unwrap()).collect();
            [v[0], v[1], v[2]]
        };
        let source = std::fs::read_to_string(file).unwrap();
        let mut req = AnalyzeRequest::new(
            file,
            &source,
            f[col("kernel")],
            dims(f[col("grid")]),
            dims(f[col("block")]),
        )
        .ccs("9.0")
        .unwrap();
        for a in f[col("args")].split(';').filter(|s| !s.is_empty()) {
            let (n, v) = a.split_once('=').unwrap();
            req = req.arg(n, v);
        }
        let a = warpscope::analyze(&req).unwrap_or_else(|e| panic!("{line}: {e:#}"));
        let t = &a.architectures[0].totals;
        let got = [
            t.global_load.requests,
            t.global_load.sectors,
            t.global_store.requests,
            t.global_store.sectors,
            t.shared_load.wavefronts,
            t.shared_store.wavefronts,
        ];
        let names = [
            "global_ld_requests",
            "global_ld_sectors",
            "global_st_requests",
            "global_st_sectors",
            "shared_ld_wavefronts",
            "shared_st_wavefronts",
        ];
        let want: Vec<u64> = names.iter().map(|n| f[col(n)].parse().unwrap()).collect();
        if got.as_slice() != want.as_slice() {
            failures.push(format!(
                "{} {} {}: predicted {:?}, measured {:?} ({})",
                file,
                f[col("kernel")],
                f[col("args")],
                got,
                want,
                names.join(",")
            ));
        }
        checked += 1;
    }
    assert!(checked >= 40, "only {checked} rows");
    assert!(
        failures.is_empty(),
        "{} of {checked} rows disagree:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
