//! warpscope's CC 9.0 predictions against every row of the counters measured on an H100
//! (tests/data/ground-truth/h100/, a copy of shared/ground-truth/h100/).

use warpscope::report::Analysis;
use warpscope::AnalyzeRequest;

const KERNELS: &str = include_str!("kernels/h100_ground_truth.cu");
const GLOBAL_CSV: &str = include_str!("data/ground-truth/h100/global-f32-loads-stores.csv");
const SHARED_CSV: &str = include_str!("data/ground-truth/h100/shared-f32-stride.csv");
const SHARED_REMEASURED: &str = include_str!("data/h100/shared-noise-experiment.csv");

/// The reference's stride-32 row says 262145 wavefronts, one more than 32 per instruction.
/// Re-measured on an H100 with the same kernel (scripts/h100/shared_noise.sh, variant `fill`),
/// stride 32 gave exactly 262144 in every launch: the +1 is counter noise, not a rule. This
/// returns that re-measured figure, after checking that all its launches agree.
fn remeasured_stride32() -> u64 {
    let v: Vec<u64> = rows(SHARED_REMEASURED)
        .into_iter()
        .filter(|r| r[0] == "fill" && r[1] == "32")
        .map(|r| r[6].parse().unwrap())
        .collect();
    assert!(
        v.len() >= 7 && v.iter().all(|x| *x == v[0]),
        "re-measured stride-32 launches disagree: {v:?}"
    );
    v[0]
}

fn rows(csv: &str) -> Vec<Vec<String>> {
    csv.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .skip(1)
        .map(|l| l.split(',').map(|s| s.trim().to_string()).collect())
        .collect()
}

fn analyze(kernel: &str, grid: u32, block: u32, args: &[(&str, i64)]) -> Analysis {
    let mut req = AnalyzeRequest::new(
        "tests/kernels/h100_ground_truth.cu",
        KERNELS,
        kernel,
        [grid, 1, 1],
        [block, 1, 1],
    )
    .ccs("9.0")
    .unwrap();
    for (n, v) in args {
        req = req.arg(n, v);
    }
    warpscope::analyze(&req).unwrap()
}

fn check_global(op: &str) {
    let mut checked = 0;
    for r in rows(GLOBAL_CSV).into_iter().filter(|r| r[0] == op) {
        let (offset, stride): (i64, i64) = (r[1].parse().unwrap(), r[2].parse().unwrap());
        let (requests, sectors): (u64, u64) = (r[3].parse().unwrap(), r[4].parse().unwrap());
        let a = if op == "load" {
            analyze(
                "global_load",
                16384,
                256,
                &[("stride", stride), ("offset", offset)],
            )
        } else {
            analyze(
                "global_store",
                16384,
                256,
                &[("stride", stride), ("offset", offset)],
            )
        };
        let t = &a.architectures[0].totals;
        let c = if op == "load" {
            t.global_load
        } else {
            t.global_store
        };
        assert_eq!(
            (c.requests, c.sectors),
            (requests, sectors),
            "{op} offset {offset} stride {stride}"
        );
        checked += 1;
    }
    assert!(checked >= 17, "{op}: only {checked} rows");
}

#[test]
fn global_loads_match_h100() {
    check_global("load");
}

#[test]
fn global_stores_match_h100() {
    check_global("store");
}

#[test]
fn shared_stride_wavefronts_match_h100() {
    for r in rows(SHARED_CSV) {
        let stride: i64 = r[0].parse().unwrap();
        let (instructions, mut wavefronts): (u64, u64) =
            (r[1].parse().unwrap(), r[2].parse().unwrap());
        if stride == 32 && wavefronts == 262145 {
            wavefronts = remeasured_stride32();
        }
        let a = analyze("shared_stride", 1024, 256, &[("stride", stride)]);
        let c = a.architectures[0].totals.shared_load;
        assert_eq!(c.executions, instructions, "stride {stride}: instructions");
        assert_eq!(c.wavefronts, wavefronts, "stride {stride}: wavefronts");
    }
}
