//! What a site's warps showed about their lane stride over a whole launch: the one warp
//! [`crate::diagnose`] looks at cannot tell a 1-D strided read (`a[i * stride]`: only every
//! stride-th element is ever read) from a column walk of a row-major 2-D array
//! (`a[row * n + k]` in a loop over `k`: the other columns are read too), nor see that a
//! shared-memory stride doubles from pass to pass (an interleaved tree reduction).

use warpscope_model::WarpAccess;

/// How many of the largest strides [`LaneStrides`] keeps the start offsets of.
const KEPT: usize = 8;

/// The lane strides of a site's warps, gathered one warp access at a time
/// ([`LaneStrides::record`]) and merged across parts of a launch ([`LaneStrides::merge`]);
/// the result does not depend on the order of either.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LaneStrides {
    /// Bit *k*: some warp's active lanes (two or more) were `2^k` bytes apart, lane after
    /// lane.
    pub powers_of_two: u64,
    /// The [`KEPT`] largest positive strides seen, largest first.
    starts: Vec<StrideStarts>,
}

/// Where the warps with one stride started, within one stride.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct StrideStarts {
    /// Bytes between consecutive lanes.
    stride: u64,
    /// The least and the greatest (first active lane's address mod `stride`) over the warps.
    least: u64,
    greatest: u64,
}

impl LaneStrides {
    /// Adds one warp access: nothing unless its active lanes (two or more) are affine in the
    /// lane index with a positive stride.
    pub fn record(&mut self, a: &WarpAccess) {
        if let Some(stride) = Self::stride_of(a) {
            let first = a.active().next().map_or(0, |(_, x)| x);
            self.record_stride(stride, first);
        }
    }

    /// The positive lane stride (bytes) [`LaneStrides::record`] would record for `a`: `None`
    /// for fewer than two active lanes, lanes not affine in the lane index, or a stride ≤ 0.
    /// The same for every access of one shape (lanes shifted alike), so a caller that
    /// groups accesses by shape computes it once and calls [`LaneStrides::record_stride`].
    pub fn stride_of(a: &WarpAccess) -> Option<u64> {
        if a.mask.count_ones() < 2 {
            return None;
        }
        let (_, _, stride) = crate::affine(a)?;
        u64::try_from(stride).ok().filter(|&s| s > 0)
    }

    /// Records one warp access of lane stride `stride` bytes (> 0) whose first active lane
    /// is at byte address `first`: what [`LaneStrides::record`] does after finding them.
    pub fn record_stride(&mut self, stride: u64, first: u64) {
        // A power of two (the common stride) without a division.
        let offset = if stride & (stride - 1) == 0 {
            self.powers_of_two |= 1 << stride.trailing_zeros();
            first & (stride - 1)
        } else {
            first % stride
        };
        self.add(StrideStarts {
            stride,
            least: offset,
            greatest: offset,
        });
    }

    /// Adds what `other` saw (another part of the same launch).
    pub fn merge(&mut self, other: &LaneStrides) {
        self.powers_of_two |= other.powers_of_two;
        for s in &other.starts {
            self.add(*s);
        }
    }

    fn add(&mut self, s: StrideStarts) {
        match self.starts.binary_search_by(|x| s.stride.cmp(&x.stride)) {
            Ok(i) => {
                let x = &mut self.starts[i];
                x.least = x.least.min(s.least);
                x.greatest = x.greatest.max(s.greatest);
            }
            // A stride smaller than the kept ones stays out: the kept ones are never
            // evicted by smaller ones, so the result is the same in any order.
            Err(i) if i < KEPT => {
                self.starts.insert(i, s);
                self.starts.truncate(KEPT);
            }
            Err(_) => {}
        }
    }

    /// Whether the warps whose lanes were `stride` bytes apart started at more than one
    /// offset within one stride (they read different "columns"); `None` when that stride
    /// was not recorded (or not among the largest kept).
    pub fn starts_vary(&self, stride: u64) -> Option<bool> {
        self.starts
            .iter()
            .find(|s| s.stride == stride)
            .map(|s| s.least != s.greatest)
    }

    /// The power-of-two strides seen, in bytes, that are at least `at_least` bytes.
    pub fn powers_at_least(&self, at_least: u64) -> Vec<u64> {
        (0..64)
            .filter(|k| self.powers_of_two & (1 << k) != 0)
            .map(|k| 1u64 << k)
            .filter(|&d| d >= at_least)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use warpscope_model::{LaneForm, Op, Space};

    fn warp(first: u64, stride: u64) -> WarpAccess {
        WarpAccess {
            space: Space::Global,
            op: Op::Load,
            width: 4,
            mask: u32::MAX,
            addrs: std::array::from_fn(|l| first + stride * l as u64),
            read_only: false,
            lanes: LaneForm::Unknown,
        }
    }

    #[test]
    fn a_column_walk_starts_at_several_columns_a_1d_stride_at_one() {
        let mut walk = LaneStrides::default();
        for k in 0..4 {
            walk.record(&warp((1 << 20) | (4 * k), 256));
        }
        assert_eq!(walk.starts_vary(256), Some(true));
        let mut strided = LaneStrides::default();
        for w in 0..4 {
            strided.record(&warp((1 << 20) + w * 32 * 256, 256));
        }
        assert_eq!(strided.starts_vary(256), Some(false));
        assert_eq!(strided.starts_vary(128), None);
    }

    #[test]
    fn the_result_does_not_depend_on_the_order() {
        let warps: Vec<WarpAccess> = (1..=12).map(|k| warp(4 * k, 16 * k)).collect();
        let mut forward = LaneStrides::default();
        warps.iter().for_each(|w| forward.record(w));
        let mut halves = LaneStrides::default();
        let mut back = LaneStrides::default();
        warps[6..].iter().rev().for_each(|w| back.record(w));
        warps[..6].iter().for_each(|w| halves.record(w));
        back.merge(&halves);
        assert_eq!(forward, back);
        assert_eq!(forward.starts.len(), KEPT);
        assert_eq!(forward.powers_at_least(32), [32, 64, 128]);
    }
}
