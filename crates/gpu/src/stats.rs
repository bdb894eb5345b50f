//! Summaries of repeated timings.

use serde::Serialize;

/// Median, extremes and quartiles of a set of samples (same unit as the samples).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Stats {
    /// Number of samples.
    pub n: usize,
    pub median: f64,
    pub min: f64,
    pub max: f64,
    /// First and third quartiles (linear interpolation between order statistics).
    pub q1: f64,
    pub q3: f64,
}

impl Stats {
    /// q3 − q1.
    pub fn iqr(&self) -> f64 {
        self.q3 - self.q1
    }
}

/// The `q`-quantile (0 ≤ q ≤ 1) of sorted `v`, interpolating linearly.
fn quantile(v: &[f64], q: f64) -> f64 {
    let pos = q * (v.len() - 1) as f64;
    let lo = pos.floor() as usize;
    let hi = pos.ceil() as usize;
    v[lo] + (v[hi] - v[lo]) * (pos - lo as f64)
}

/// Summarizes `samples`; `None` when empty or when a sample is not finite.
pub fn stats(samples: &[f64]) -> Option<Stats> {
    if samples.is_empty() || samples.iter().any(|x| !x.is_finite()) {
        return None;
    }
    let mut v = samples.to_vec();
    v.sort_by(|a, b| a.total_cmp(b));
    Some(Stats {
        n: v.len(),
        median: quantile(&v, 0.5),
        min: v[0],
        max: v[v.len() - 1],
        q1: quantile(&v, 0.25),
        q3: quantile(&v, 0.75),
    })
}

/// The median of `samples` (NaN when empty).
pub fn median(samples: &[f64]) -> f64 {
    stats(samples).map_or(f64::NAN, |s| s.median)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quartiles() {
        let s = stats(&[5.0, 1.0, 3.0, 2.0, 4.0]).unwrap();
        assert_eq!(
            (s.median, s.min, s.max, s.q1, s.q3),
            (3.0, 1.0, 5.0, 2.0, 4.0)
        );
        let s = stats(&[1.0, 2.0, 3.0, 4.0]).unwrap();
        assert_eq!(s.median, 2.5);
        assert!((s.iqr() - 1.5).abs() < 1e-12);
        assert!(stats(&[]).is_none());
        assert!(stats(&[1.0, f64::NAN]).is_none());
    }
}
