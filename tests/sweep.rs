//! `warpscope sweep`: the seeds' offset and stride experiments, predicted without a GPU.

use warpscope::sweep::{compare, harris_sweep, read_measured, Curve, HarrisSweep, SweepKind};
use warpscope::GpuTarget;

fn curves(kind: SweepKind, values: Vec<u32>, gpus: &[&str], n: u64) -> Vec<Curve> {
    let s = HarrisSweep {
        kind,
        elem: "float",
        values,
        n,
        block: 256,
    };
    let g: Vec<GpuTarget> = gpus
        .iter()
        .map(|x| GpuTarget::new(x, None).unwrap())
        .collect();
    harris_sweep(&s, &g).unwrap()
}

fn at(c: &Curve, v: u32) -> f64 {
    c.points
        .iter()
        .find(|p| p.value == v)
        .unwrap()
        .effective_gbps
}

#[test]
fn offsets_on_the_seeds_tesla_cards() {
    let c = curves(
        SweepKind::Offset,
        vec![0, 1, 2, 8, 16],
        &["c870", "c1060", "c2050"],
        1 << 18,
    );
    // C870 (1.0): any misaligned half-warp takes 16 transactions of 32 B: 1/8 [seed 003].
    let (c870, c1060, c2050) = (&c[0], &c[1], &c[2]);
    for v in [1, 2, 8] {
        let r = at(c870, v) / at(c870, 0);
        assert!((r - 0.125).abs() < 0.005, "C870 offset {v}: {r}");
    }
    // Offset 16 floats = 64 bytes: half-warps aligned to 64 bytes again, full speed.
    assert!((at(c870, 16) / at(c870, 0) - 1.0).abs() < 0.01);
    // C1060 (1.3): 128 + 64 + 32 = 224 bytes where 128 would do: 4/7, the milder penalty.
    let r = at(c1060, 1) / at(c1060, 0);
    assert!((r - 4.0 / 7.0).abs() < 0.01, "C1060: {r}");
    // C2050 (2.0): L1 lines shared by neighbouring warps, DRAM-bound: almost free.
    let r = at(c2050, 1) / at(c2050, 0);
    assert!(r > 0.9, "C2050: {r}");
}

#[test]
fn bandwidth_falls_with_stride() {
    let c = curves(
        SweepKind::Stride,
        (1..=16).collect(),
        &["c2050", "h100"],
        1 << 18,
    );
    for g in &c {
        for w in g.points.windows(2) {
            assert!(
                w[1].effective_gbps <= w[0].effective_gbps * 1.001,
                "{}: {:?}",
                g.gpu,
                w
            );
        }
        // Stride 2 uses half of every sector or line: at most about half the bandwidth.
        assert!(at(g, 2) < 0.6 * at(g, 1), "{}", g.gpu);
    }
}

#[test]
fn h100_datasheet_prediction_against_the_ground_truth() {
    let csv = include_str!("data/ground-truth/h100/copy-bandwidth.csv");
    // The ground truth ran 2^28 floats; 2^22 keeps the test quick and the DRAM-bound regime.
    let off = curves(SweepKind::Offset, (0..=32).collect(), &["h100"], 1 << 22);
    let m = read_measured(csv, SweepKind::Offset).unwrap();
    assert_eq!(m.len(), 33);
    let (median, worst, _) = compare(&off[0], &m).unwrap();
    // Datasheet rates (no calibration): offsets within a few per cent.
    assert!(
        median < 0.05 && worst < 0.06,
        "offset: median {median}, worst {worst}"
    );
    let st = curves(SweepKind::Stride, (1..=32).collect(), &["h100"], 1 << 22);
    let m = read_measured(csv, SweepKind::Stride).unwrap();
    let (median, worst, _) = compare(&st[0], &m).unwrap();
    // Without calibration the large strides are predicted too fast (DRAM cost per line with
    // few useful bytes is what `calibrate` measures): record where the datasheet stands.
    assert!(median < 0.10, "stride median {median}");
    assert!(worst < 0.40, "stride worst {worst}");
}

#[test]
fn measured_csv_rows_are_checked() {
    assert!(read_measured("offset,1,abc\n", SweepKind::Offset).is_err());
    assert!(read_measured("offset,1\n", SweepKind::Offset).is_err());
    assert_eq!(
        read_measured(
            "# c\nexperiment,parameter,effective_GBps\nstride,2,10.5\noffset,1,3\n",
            SweepKind::Stride
        )
        .unwrap(),
        vec![(2, 10.5)]
    );
}
