//! Harris's offset/stride experiments [HB, seed 002] run through the traffic model, as
//! synthetic warp streams of the copy kernels `b[i] = a[i]` (float, blocks of 256 threads):
//!
//! - offset *k*: `i = blockIdx.x*blockDim.x + threadIdx.x + k; if (i < n) b[i] = a[i];`
//!   with n threads;
//! - stride *s*: `i = (blockIdx.x*blockDim.x + threadIdx.x) * s; if (i < n) b[i] = a[i];`
//!   with n/s threads.
//!
//! Effective bandwidth counts 8 useful bytes (4 read + 4 written) per active thread, as
//! Harris and `ground-truth/h100/copy-bandwidth.csv` do.

use crate::gpus::{lookup, Gpu};
use crate::model::{Limit, Traffic, TrafficModel};
use crate::profile::Profile;
use warpscope_model::{Config, LaneForm, Op, Space, WarpAccess};

const A: u64 = 0x7f00_0000_0000;
const B: u64 = 0x7f80_0000_0000;

#[derive(Clone, Copy, Debug)]
enum Pattern {
    Offset(u64),
    Stride(u64),
}

/// Runs the copy kernel of `pattern` over `n` floats on `gpu` and returns the traffic.
fn copy(gpu: &Gpu, profile: &Profile, n: u64, pattern: Pattern) -> Traffic {
    let mut m = TrafficModel::new(gpu, gpu.arch(), &Config::default(), profile);
    let threads = match pattern {
        Pattern::Offset(_) => n,
        Pattern::Stride(s) => n / s,
    };
    let blocks = threads.div_ceil(256);
    let mut acc = WarpAccess {
        space: Space::Global,
        op: Op::Load,
        width: 4,
        mask: 0,
        addrs: [0; 32],
        read_only: false,
        lanes: LaneForm::Unknown,
    };
    for block in 0..blocks {
        // Warps in lockstep: every warp's load, then every warp's store.
        for (op, base) in [(Op::Load, A), (Op::Store, B)] {
            acc.op = op;
            for warp in 0..8u32 {
                acc.mask = 0;
                for lane in 0..32u64 {
                    let t = block * 256 + u64::from(warp) * 32 + lane;
                    let i = match pattern {
                        Pattern::Offset(k) => t + k,
                        Pattern::Stride(s) => t * s,
                    };
                    if t < threads && i < n {
                        acc.mask |= 1 << lane;
                        acc.addrs[lane as usize] = base + 4 * i;
                    }
                }
                m.add(block, warp, &acc);
            }
        }
    }
    m.finish()
}

/// Effective GB/s of `pattern` (8 useful bytes per active thread = the requested bytes).
fn gbps(gpu: &Gpu, profile: &Profile, n: u64, pattern: Pattern) -> f64 {
    let t = copy(gpu, profile, n, pattern);
    t.effective_gbps(t.bytes_requested)
}

const N: u64 = 1 << 20;

fn offsets(gpu: &str) -> Vec<f64> {
    let g = lookup(gpu).unwrap();
    let p = Profile::datasheet(g);
    (0..=32)
        .map(|k| gbps(g, &p, N, Pattern::Offset(k)))
        .collect()
}

fn strides(gpu: &str) -> Vec<f64> {
    let g = lookup(gpu).unwrap();
    let p = Profile::datasheet(g);
    (1..=32)
        .map(|s| gbps(g, &p, N, Pattern::Stride(s)))
        .collect()
}

#[test]
fn c870_any_misalignment_costs_seven_eighths() {
    // [HB]: "one would expect the effective bandwidth to be reduced by a factor of eight ...
    // for offsets that are not a multiple of 16 elements".
    let v = offsets("c870");
    println!("C870 offset GB/s: {v:.1?}");
    // Offset 0: DRAM-bound at 0.85 × 76.8 GB/s.
    assert!((v[0] - 65.28).abs() < 0.1, "{}", v[0]);
    for (k, &x) in v.iter().enumerate() {
        let r = x / v[0];
        if k % 16 == 0 {
            assert!(r > 0.99, "offset {k}: {r}");
        } else {
            assert!((r - 0.125).abs() < 0.002, "offset {k}: {r}");
        }
    }
}

#[test]
fn c1060_misalignment_costs_less() {
    // [HB]: on 1.2/1.3 "misaligned accesses ... are serviced in a few transactions that
    // 'cover' the requested data ... the penalty is far less than for the C870". The model:
    // an odd offset costs 128 + 64 + 32 = 224 bytes per warp instead of 128 (two half-warps
    // straddling a 128-byte segment), in the load and in the store: 128/224 = 0.571; an
    // offset of 8 floats (32 bytes) 192 bytes: 0.667; multiples of 16 floats are free.
    let v = offsets("c1060");
    println!("C1060 offset GB/s: {v:.1?}");
    let r = |k: usize| v[k] / v[0];
    assert!((v[0] - 0.85 * 102.4).abs() < 0.1);
    for k in (1..32).step_by(2) {
        assert!((r(k) - 4.0 / 7.0).abs() < 0.003, "offset {k}: {}", r(k));
    }
    assert!((r(8) - 2.0 / 3.0).abs() < 0.003, "{}", r(8));
    assert!((r(24) - 2.0 / 3.0).abs() < 0.003, "{}", r(24));
    assert!(r(16) > 0.99 && r(32) > 0.99);
    let c870 = offsets("c870");
    for k in (1..32).filter(|k| k % 16 != 0) {
        assert!(
            r(k) > 4.0 * c870[k] / c870[0],
            "far milder than 1.0 at offset {k}"
        );
    }
}

#[test]
fn c2050_unit_stride_misalignment_is_nearly_free() {
    // [HB]: "the L1 cache ... resulting in negligible effect of alignment on throughput for
    // sequential memory accesses". The model: the second L1 line of warp w is warp w+1's
    // first (an L1 hit on the same SM, an L2 hit across SMs), misaligned store sectors merge
    // in L2, so DRAM moves the same bytes; only L1/L2 traffic grows, and it is not the limit.
    let v = offsets("c2050");
    println!("C2050 offset GB/s: {v:.1?}");
    let g = lookup("c2050").unwrap();
    let t = copy(g, &Profile::datasheet(g), N, Pattern::Offset(1));
    println!("C2050 offset 1: {t:?}");
    assert_eq!(t.bounds.limit, Limit::Dram);
    for (k, &x) in v.iter().enumerate() {
        let r = x / v[0];
        assert!(r > 0.99 && r < 1.01, "offset {k}: {r}");
    }
}

#[test]
fn effective_bandwidth_falls_with_stride() {
    // [HB]: "For large strides, the effective bandwidth is poor regardless of architecture
    // version"; 1.0 drops to 1/8 at any stride but 1; 1.2+ "results in a smooth bandwidth
    // curve".
    for gpu in ["c870", "c1060", "c2050", "h100"] {
        let v = strides(gpu);
        println!("{gpu} stride GB/s: {v:.1?}");
        // 1.3 follows the segment protocol literally: up to stride 16 (64 bytes) two lanes
        // share each 128-byte segment and their transaction stays 128 bytes (1/16 at stride
        // 16); beyond, fewer lanes share a segment and transactions shrink to 32 bytes, so
        // the curve rises back to 1/8 at stride 32. Monotone up to 16 only.
        let upto = if gpu == "c1060" { 16 } else { v.len() };
        for s in 1..upto {
            assert!(
                v[s] <= v[s - 1] * 1.01,
                "{gpu}: stride {} ({}) above stride {} ({})",
                s + 1,
                v[s],
                s,
                v[s - 1]
            );
        }
        assert!(
            v[31] <= v[0] / 8.0 * 1.001,
            "{gpu}: stride 32 {} vs 1 {}",
            v[31],
            v[0]
        );
        if gpu == "c1060" {
            assert!(
                (v[15] / v[0] - 1.0 / 16.0).abs() < 0.002,
                "{}",
                v[15] / v[0]
            );
            assert!((v[31] / v[0] - 1.0 / 8.0).abs() < 0.002, "{}", v[31] / v[0]);
        }
        if gpu == "c870" {
            for (s, &x) in v.iter().enumerate().skip(1) {
                assert!((x / v[0] - 0.125).abs() < 0.002, "c870 stride {}", s + 1);
            }
        } else {
            // Smooth: no stride between 2 and 8 already at the floor of stride 32.
            assert!(v[1] > 2.0 * v[31] && v[3] > v[7] * 1.5, "{gpu}: {v:?}");
        }
    }
}

/// The measured H100 curves (copy-bandwidth.csv): (experiment, parameter, GB/s).
fn h100_csv() -> Vec<(String, u64, f64)> {
    include_str!("../data/h100-copy-bandwidth.csv")
        .lines()
        .filter(|l| !l.starts_with('#') && !l.starts_with("experiment"))
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (
                f[0].to_string(),
                f[1].parse().unwrap(),
                f[2].parse().unwrap(),
            )
        })
        .collect()
}

/// Runs every row of the csv with `profile`: (experiment, parameter, measured GB/s, traffic).
fn h100_runs(profile: &Profile) -> Vec<(String, u64, f64, Traffic)> {
    let g = lookup("h100").unwrap();
    h100_csv()
        .into_iter()
        .map(|(exp, k, measured)| {
            // 2^22 floats for the offsets (16 MiB arrays), 2^24 for the strides (64 MiB,
            // larger than the 50 MiB L2); the csv ran 2^28 — the model's bounds scale with n.
            let (n, pattern) = if exp == "offset" {
                (1 << 22, Pattern::Offset(k))
            } else {
                (1 << 24, Pattern::Stride(k))
            };
            let t = copy(g, profile, n, pattern);
            (exp, k, measured, t)
        })
        .collect()
}

/// (median, worst) absolute relative error of the predicted times `seconds` (one per row of
/// `runs`) against the csv, printing every row.
fn compare(label: &str, runs: &[(String, u64, f64, Traffic)], seconds: &[f64]) -> (f64, f64) {
    println!("H100, {label}");
    println!("experiment,parameter,measured_GBps,predicted_GBps,error,limit");
    let mut errs = Vec::new();
    for ((exp, k, measured, t), &s) in runs.iter().zip(seconds) {
        let predicted = t.bytes_requested as f64 / s / 1e9;
        let e = (predicted - measured) / measured;
        println!(
            "{exp},{k},{measured},{predicted:.1},{:+.1}%,{:?}",
            100.0 * e,
            t.bounds.limit
        );
        errs.push(e.abs());
    }
    assert_eq!(errs.len(), 65);
    errs.sort_by(f64::total_cmp);
    let median = errs[errs.len() / 2];
    let worst = errs[errs.len() - 1];
    println!(
        "{label}: median |error| {:.1}%, worst {:.1}%",
        100.0 * median,
        100.0 * worst
    );
    (median, worst)
}

#[test]
fn h100_offset_and_stride_curves_against_measurement() {
    let g = lookup("h100").unwrap();
    // (A) Only the copy bandwidth from the csv header (float4 grid-stride copy, 2854 GB/s);
    // everything else datasheet defaults (the default latency, 900 ns, is itself from H100).
    let mut p = Profile::datasheet(g);
    p.copy_gbps = 2854.0;
    p.origin = "datasheet + copy-bandwidth.csv header".into();
    let default_latency = p.latency_ns;
    // (B) Latency calibrated from the csv's offset-0 row (a one-float-per-thread copy).
    p.latency_ns = Profile::latency_from_scalar_copy(g, 2393.2, 256);
    let runs_b = h100_runs(&p);
    // (A) differs from (B) only in the latency bound, which scales with the latency: no
    // need to simulate again.
    let seconds_a: Vec<f64> = runs_b
        .iter()
        .map(|(_, _, _, t)| {
            let b = t.bounds;
            let latency_a = b.latency_s * default_latency / p.latency_ns;
            b.dram_s.max(b.l2_s).max(b.l1_s).max(latency_a)
        })
        .collect();
    let (median_a, worst_a) = compare("(A) copy_gbps only", &runs_b, &seconds_a);
    let seconds_b: Vec<f64> = runs_b.iter().map(|r| r.3.predicted_seconds).collect();
    let (median_b, worst_b) = compare("(B) + latency from offset 0", &runs_b, &seconds_b);
    // (C) Sparse-line cost calibrated from the csv's stride-32 row.
    p.dram_min_bytes_per_line = Profile::min_line_bytes_from_sparse_copy(p.copy_gbps, 132.0);
    println!("(C) profile: {}", p.to_json());
    let runs_c = h100_runs(&p);
    let seconds_c: Vec<f64> = runs_c.iter().map(|r| r.3.predicted_seconds).collect();
    let (median_c, worst_c) = compare("(C) + line minimum from stride 32", &runs_c, &seconds_c);

    // What (A) and (B) reach: the median within target, the worst not (strides 27–32 are
    // predicted 20–35 % too fast: their bytes alone do not explain the measured slowdown).
    assert!(median_a < 0.05 && worst_a < 0.36, "{median_a} {worst_a}");
    assert!(median_b < 0.05 && worst_b < 0.36, "{median_b} {worst_b}");
    // (C), with two of the 65 rows used for calibration: the target, 10 % median and 25 %
    // worst (reached: about 3 % and 7 %).
    assert!(median_c < 0.05, "median {median_c}");
    assert!(worst_c < 0.10, "worst {worst_c}");
}

/// Simulation speed: `cargo test --release -p warpscope-traffic -- --ignored --nocapture speed`.
#[test]
#[ignore]
fn speed_probe() {
    let g = lookup("h100").unwrap();
    let p = Profile::datasheet(g);
    for (n, pat) in [
        (1u64 << 22, Pattern::Offset(1)),
        (1 << 24, Pattern::Stride(2)),
        (1 << 24, Pattern::Stride(32)),
    ] {
        let t0 = std::time::Instant::now();
        let t = copy(g, &p, n, pat);
        let dt = t0.elapsed().as_secs_f64();
        println!(
            "{pat:?}: {} requests in {dt:.3} s = {:.0} ns/request",
            t.requests,
            dt * 1e9 / t.requests as f64
        );
    }
    let t0 = std::time::Instant::now();
    let m = TrafficModel::new(g, g.arch(), &Config::default(), &p);
    let t = m.finish();
    println!(
        "new+finish empty: {:.3} s {}",
        t0.elapsed().as_secs_f64(),
        t.requests
    );
}
