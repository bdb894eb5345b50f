//! The form of a warp access's active lane addresses, found once where the addresses are made
//! so that what reads the access later (the executor's bounds check, the report's shape key)
//! need not go over its 32 lanes again.
//!
//! Most accesses are affine in the lane (`a[l] = a[l0] + (l − l0)·stride`, as
//! `ptr[base + threadIdx.x * k]` makes them); such an access is described by its first active
//! address, its mask and one stride, exactly: the lowest and highest addresses are those of
//! its end lanes, and whether every lane is aligned follows from the first address and the
//! stride.

use crate::access::{WarpAccess, WARP_SIZE};

/// How the active lanes' addresses of a [`WarpAccess`] lie.
///
/// Affine is exact integer arithmetic, not wrapping: every active lane *l* is at
/// `a[l0] + (l − l0)·stride` with no address passing 0 or 2⁶⁴, where *l0* is the lowest
/// active lane. A single active lane (or lanes all at one address) is affine with stride 0.
/// The form is a function of the mask and the active lanes' addresses alone
/// ([`LaneForm::of`]); inactive lanes' addresses do not matter.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum LaneForm {
    /// Not worked out since the addresses were last set: [`WarpAccess::lane_form`] works it
    /// out from the lanes.
    #[default]
    Unknown,
    /// Affine in the lane with this stride in bytes (negative: descending).
    Affine { stride: i64 },
    /// Not affine, or no active lane.
    Irregular,
}

/// Bit *d* set when *d* is a multiple of 2^*k* (index *k*, 0 ≤ *k* ≤ 5): lanes `l0 + d` whose
/// offset `d·stride` keeps a 2^*k*-aligned first address aligned whatever the stride.
const MULTIPLES_OF: [u32; 6] = [
    0xFFFF_FFFF,
    0x5555_5555,
    0x1111_1111,
    0x0101_0101,
    0x0001_0001,
    0x0000_0001,
];

impl LaneForm {
    /// The form of the lanes set in `mask` at `addrs` (one pass over the lanes): never
    /// [`LaneForm::Unknown`].
    pub fn of(mask: u32, addrs: &[u64; WARP_SIZE]) -> LaneForm {
        if mask == 0 {
            return LaneForm::Irregular;
        }
        let l0 = mask.trailing_zeros() as usize;
        let last = (31 - mask.leading_zeros()) as usize;
        if l0 == last {
            return LaneForm::Affine { stride: 0 };
        }
        let run = mask >> l0;
        let stride = if run & run.wrapping_add(1) == 0 {
            // Consecutive lanes (a whole warp, or the first n): every step is the first.
            let step = addrs[l0 + 1].wrapping_sub(addrs[l0]);
            // Most lanes that are not affine (two rows of a 2-D block, say) miss at the end.
            let reach = step.wrapping_mul((last - l0) as u64);
            if addrs[last] != addrs[l0].wrapping_add(reach) {
                return LaneForm::Irregular;
            }
            let steady = if mask == u32::MAX {
                // Fixed bounds: unrolled.
                Self::steady(addrs, step)
            } else {
                Self::steady(&addrs[l0..=last], step)
            };
            if !steady {
                return LaneForm::Irregular;
            }
            step as i64
        } else {
            let Some(stride) = Self::gapped(mask, l0, addrs) else {
                return LaneForm::Irregular;
            };
            stride
        };
        // The lanes are `a[l0] + (l − l0)·stride` modulo 2⁶⁴; exactly when the last lane's
        // exact address is an address (no wrap past 0 or 2⁶⁴): then so is every lane's
        // between.
        let end = addrs[l0] as i128 + (last - l0) as i128 * stride as i128;
        if (0..=u64::MAX as i128).contains(&end) {
            LaneForm::Affine { stride }
        } else {
            LaneForm::Irregular
        }
    }

    /// Whether `lanes` step by `step` (modulo 2⁶⁴) from the first to the last.
    #[inline(always)]
    fn steady(lanes: &[u64], step: u64) -> bool {
        let mut want = lanes[0];
        let mut differ = 0;
        for &x in lanes {
            differ |= x ^ want;
            want = want.wrapping_add(step);
        }
        differ == 0
    }

    /// The stride of active lanes with gaps between them when they are affine modulo 2⁶⁴:
    /// the step between the first two active lanes divided by their distance, checked on
    /// every active lane.
    fn gapped(mask: u32, l0: usize, addrs: &[u64; WARP_SIZE]) -> Option<i64> {
        let l1 = (mask & (mask - 1)).trailing_zeros() as usize;
        let (a0, a1) = (addrs[l0], addrs[l1]);
        let k = (l1 - l0) as u64;
        let (up, down) = (a1.wrapping_sub(a0), a0.wrapping_sub(a1));
        let stride = if a1 >= a0 {
            if !up.is_multiple_of(k) || up / k > i64::MAX as u64 {
                return None;
            }
            (up / k) as i64
        } else {
            if !down.is_multiple_of(k) || down / k > 1 << 63 {
                return None;
            }
            ((down / k) as i64).wrapping_neg()
        };
        let step = stride as u64;
        let mut want = a0.wrapping_sub((l0 as u64).wrapping_mul(step));
        let mut off = 0u32;
        for (l, &x) in addrs.iter().enumerate() {
            off |= ((x != want) as u32) << l;
            want = want.wrapping_add(step);
        }
        (off & mask == 0).then_some(stride)
    }
}

/// The lowest and highest active address of an access, and whether every active address is
/// a multiple of an alignment ([`WarpAccess::bounds`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bounds {
    /// Lowest active lane address (bytes).
    pub lo: u64,
    /// Highest active lane address (bytes; the access's bytes run to `hi + width`).
    pub hi: u64,
    /// Every active lane address is a multiple of the alignment asked for (a power of two;
    /// for another, their bitwise or is).
    pub aligned: bool,
}

impl WarpAccess {
    /// The lanes' form: the one carried in [`WarpAccess::lanes`], or worked out from the
    /// lanes when that is [`LaneForm::Unknown`]. Never `Unknown`.
    pub fn lane_form(&self) -> LaneForm {
        debug_assert!(
            self.lanes == LaneForm::Unknown || self.lanes == LaneForm::of(self.mask, &self.addrs),
            "stale lane form {:?} of {self:?}",
            self.lanes
        );
        match self.lanes {
            LaneForm::Unknown => LaneForm::of(self.mask, &self.addrs),
            f => f,
        }
    }

    /// Works out [`WarpAccess::lanes`] from the lanes (after setting the addresses).
    pub fn settle_lanes(&mut self) {
        self.lanes = LaneForm::of(self.mask, &self.addrs);
    }

    /// Adds `delta` bytes (wrapping) to every active lane's address, keeping
    /// [`WarpAccess::lanes`] true: moved without passing 0 or 2⁶⁴, the lanes keep their
    /// exact differences and so their form; when some lane wraps it is worked out again.
    pub fn shift_active(&mut self, delta: i64) {
        let mut wrapped = false;
        let mut shift = |x: &mut u64| {
            let (y, over) = x.overflowing_add_signed(delta);
            *x = y;
            wrapped |= over;
        };
        if self.mask == u32::MAX {
            self.addrs.iter_mut().for_each(shift);
        } else {
            let mut m = self.mask;
            while m != 0 {
                shift(&mut self.addrs[m.trailing_zeros() as usize]);
                m &= m - 1;
            }
        }
        if wrapped && self.lanes != LaneForm::Unknown {
            self.settle_lanes();
        }
    }

    /// The lowest and highest active address and whether every active address is a multiple
    /// of `align` (bytes, ≥ 1, a power of two; otherwise whether their bitwise or is, see
    /// [`WarpAccess::bounds_by_lane`]); `None` when no lane is active. Affine lanes
    /// ([`WarpAccess::lane_form`]) are answered from the end lanes and the stride, the rest
    /// lane by lane ([`WarpAccess::bounds_by_lane`]); both give the same answer.
    pub fn bounds(&self, align: u64) -> Option<Bounds> {
        let LaneForm::Affine { stride } = self.lane_form() else {
            return self.bounds_by_lane(align);
        };
        // (Not `is_power_of_two`: without a popcount instruction that is a longer sequence.)
        if align == 0 || align & (align - 1) != 0 {
            return self.bounds_by_lane(align);
        }
        let l0 = self.mask.trailing_zeros() as usize;
        let last = (31 - self.mask.leading_zeros()) as usize;
        let (first, end) = (self.addrs[l0], self.addrs[last]);
        // Lane l0 + d is aligned when `first` is and 2^k divides d, where
        // 2^k = align / gcd(align, stride): the other active lanes must all be such.
        let need = align.trailing_zeros();
        let has = if stride == 0 {
            64
        } else {
            stride.trailing_zeros()
        };
        let k = need.saturating_sub(has).min(5) as usize;
        let aligned = first & (align - 1) == 0 && (self.mask >> l0) & !MULTIPLES_OF[k] == 0;
        Some(Bounds {
            lo: first.min(end),
            hi: first.max(end),
            aligned,
        })
    }

    /// [`WarpAccess::bounds`] found lane by lane (the reference the affine shortcut must
    /// agree with): `aligned` when the bitwise or of the active addresses is a multiple of
    /// `align` (for a power of two: every address is).
    pub fn bounds_by_lane(&self, align: u64) -> Option<Bounds> {
        if self.mask == 0 {
            return None;
        }
        let (mut lo, mut hi, mut bits) = (u64::MAX, 0u64, 0u64);
        if self.mask == u32::MAX {
            // A whole warp: fixed bounds, no test per lane.
            for &x in &self.addrs {
                lo = lo.min(x);
                hi = hi.max(x);
                bits |= x;
            }
        } else {
            let mut m = self.mask;
            while m != 0 {
                let x = self.addrs[m.trailing_zeros() as usize];
                m &= m - 1;
                lo = lo.min(x);
                hi = hi.max(x);
                bits |= x;
            }
        }
        Some(Bounds {
            lo,
            hi,
            aligned: bits % align == 0,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::access::{Op, Space};
    use proptest::prelude::*;

    fn access(mask: u32, addrs: [u64; WARP_SIZE]) -> WarpAccess {
        WarpAccess {
            space: Space::Global,
            op: Op::Load,
            width: 4,
            mask,
            addrs,
            read_only: false,
            lanes: LaneForm::Unknown,
        }
    }

    /// The form by definition: every active lane exactly (in i128) at
    /// `a[l0] + (l − l0)·stride` for the one stride the first two active lanes allow.
    fn form_by_definition(mask: u32, addrs: &[u64; WARP_SIZE]) -> LaneForm {
        let lanes: Vec<(i128, i128)> = (0..WARP_SIZE)
            .filter(|l| mask >> l & 1 == 1)
            .map(|l| (l as i128, addrs[l] as i128))
            .collect();
        let Some(&(l0, a0)) = lanes.first() else {
            return LaneForm::Irregular;
        };
        let stride = match lanes.get(1) {
            None => 0,
            Some(&(l1, a1)) if (a1 - a0) % (l1 - l0) == 0 => (a1 - a0) / (l1 - l0),
            Some(_) => return LaneForm::Irregular,
        };
        let Ok(stride) = i64::try_from(stride) else {
            return LaneForm::Irregular;
        };
        if lanes
            .iter()
            .all(|&(l, a)| a == a0 + (l - l0) * stride as i128)
        {
            LaneForm::Affine { stride }
        } else {
            LaneForm::Irregular
        }
    }

    /// Lanes made affine (stride 1 to 2⁶³ either way, or 0), then maybe one lane moved,
    /// with random masks, first addresses near 0, mid-range and near 2⁶⁴.
    fn lanes() -> impl Strategy<Value = (u32, [u64; WARP_SIZE])> {
        let stride = prop_oneof![
            Just(0i64),
            -64i64..64,
            prop::sample::select(vec![4096i64, 16384, -16384, 1 << 32, 1 << 40, i64::MIN]),
            any::<i64>(),
        ];
        let first = prop_oneof![
            0u64..1 << 20,
            (1u64 << 40)..(1 << 40) + 4096,
            (u64::MAX - 4096)..=u64::MAX,
            any::<u64>(),
        ];
        let mask = prop_oneof![
            Just(u32::MAX),
            Just(0u32),
            any::<u32>(),
            (0u32..32).prop_map(|l| 1 << l),
            (0u32..32).prop_map(|n| u32::MAX >> n),
        ];
        let moved = prop::option::of((0usize..WARP_SIZE, any::<u64>()));
        (stride, first, mask, moved, any::<u64>()).prop_map(|(stride, first, mask, moved, junk)| {
            let mut addrs: [u64; WARP_SIZE] =
                std::array::from_fn(|l| first.wrapping_add((l as u64).wrapping_mul(stride as u64)));
            // Inactive lanes hold anything.
            for (l, a) in addrs.iter_mut().enumerate() {
                if mask >> l & 1 == 0 && junk >> (l % 64) & 1 == 1 {
                    *a = junk.rotate_left(l as u32);
                }
            }
            if let Some((l, x)) = moved {
                addrs[l] = x;
            }
            (mask, addrs)
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(20_000))]

        /// The one-pass form is the definition's, and the affine bounds and alignment are
        /// the lane-by-lane ones for every alignment 1 to 32.
        #[test]
        fn form_and_bounds_agree_with_the_lanes((mask, addrs) in lanes()) {
            let form = LaneForm::of(mask, &addrs);
            prop_assert_eq!(form, form_by_definition(mask, &addrs));
            let mut a = access(mask, addrs);
            a.settle_lanes();
            for align in [1, 2, 4, 8, 16, 32] {
                let b = a.bounds(align);
                prop_assert_eq!(b, a.bounds_by_lane(align), "align {}", align);
                let every = a.active().all(|(_, x)| x % align == 0);
                prop_assert_eq!(b.map(|b| b.aligned), (mask != 0).then_some(every));
            }
            // A shift keeps the form true.
            for delta in [16i64, -16, 1 << 20, i64::MIN, i64::MAX] {
                let mut b = a;
                b.shift_active(delta);
                prop_assert_eq!(b.lane_form(), LaneForm::of(b.mask, &b.addrs));
            }
        }
    }

    /// A stride of 2 bytes with only even lanes active keeps a 4-byte alignment; odd lanes
    /// break it.
    #[test]
    fn alignment_follows_the_active_lanes() {
        let addrs = std::array::from_fn(|l| 4096 + 2 * l as u64);
        let even = access(0x5555_5555, addrs);
        assert_eq!(even.lane_form(), LaneForm::Affine { stride: 2 });
        assert!(even.bounds(4).unwrap().aligned);
        assert!(!access(0b11, addrs).bounds(4).unwrap().aligned);
        let b = even.bounds(4).unwrap();
        assert_eq!((b.lo, b.hi), (4096, 4096 + 2 * 30));
    }
}
