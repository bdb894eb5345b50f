//! How the active lanes of one warp cover memory: one row (a 1-D block, or a 2-D block 32 or
//! more threads wide) or several rows of the same width (a 2-D block narrower than a warp:
//! a 16×16 block gives each warp 2 rows of 16 threads), with a constant stride inside a row
//! and another between rows.
//!
//! Threads of a block are numbered x fastest and warps take 32 consecutive numbers [PG
//! "Thread Hierarchy", "SIMT Architecture"], so in a block `bx` threads wide lane *l* of a
//! warp is thread `(l + phase) % bx` of row `(l + phase) / bx`, where `phase` is the x index
//! of the warp's lane 0. A layout is found from the addresses alone, so it also describes
//! index expressions that are not literally 2-D.

use warpscope_model::{LaneForm, WarpAccess, WARP_SIZE};

/// The active lanes of one warp as rows of `row_lanes` lanes: lane *l* is element
/// `i = (l + phase) % row_lanes` of row `j = (l + phase) / row_lanes`, at byte address
/// `origin + i·inner + j·outer`.
///
/// One row: `row_lanes` = 32, `phase` = 0, `rows` = 1, `outer` = 32 · `inner`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    /// Lanes per row, 2 ... 32 (the block's width in threads when it is below 32).
    pub row_lanes: u32,
    /// Element index of lane 0 in its row, 0 ... `row_lanes` − 1.
    pub phase: u32,
    /// Rows holding at least one active lane.
    pub rows: u32,
    /// Byte address of element 0 of row 0 (may lie outside the lanes' range, hence signed).
    pub origin: i128,
    /// Bytes between neighbouring elements of a row.
    pub inner: i64,
    /// Bytes between the starts of neighbouring rows.
    pub outer: i64,
}

impl Layout {
    /// The layout of `a`'s active lanes: one row when their addresses are affine in the lane
    /// index, else the narrowest rows (2 ... 31 lanes, any phase) that fit every active lane;
    /// `None` when there is no active lane or no such rows (scattered, or 3-D blocks whose
    /// warps span several planes).
    pub fn of(a: &WarpAccess) -> Option<Layout> {
        if let Some((l0, a0, d)) = crate::affine(a) {
            return Some(Layout {
                row_lanes: WARP_SIZE as u32,
                phase: 0,
                rows: 1,
                origin: i128::from(a0) - l0 as i128 * i128::from(d),
                inner: d,
                outer: d.saturating_mul(WARP_SIZE as i64),
            });
        }
        let lanes: Vec<(usize, u64)> = a.active().collect();
        // Fast path: rows must change between the last lane on the line of the first two and
        // the next; only rows with a boundary there can fit. Else (the first two lanes
        // already straddle rows) try every width and phase.
        let (first, second) = (lanes[0], lanes[1]);
        let step = i128::from(second.1) - i128::from(first.1);
        let lanes_apart = (second.0 - first.0) as i128;
        if step % lanes_apart == 0 {
            let d = step / lanes_apart;
            let on_line = |&(l, x): &(usize, u64)| {
                i128::from(x) == i128::from(first.1) + (l - first.0) as i128 * d
            };
            if let Some(k) = lanes.iter().position(|x| !on_line(x)) {
                let (last, next) = (lanes[k - 1].0 as u32, lanes[k].0 as u32);
                let found = (2..WARP_SIZE as u32).find_map(|n| {
                    let phases: std::collections::BTreeSet<u32> = (last + 1..=next)
                        .map(|boundary| (n - boundary % n) % n)
                        .collect();
                    phases.into_iter().find_map(|p| fit(&lanes, n, p))
                });
                if found.is_some() {
                    return found;
                }
            }
        }
        (2..WARP_SIZE as u32)
            .flat_map(|n| (0..n).map(move |p| (n, p)))
            .find_map(|(n, p)| fit(&lanes, n, p))
    }

    /// (element, row) of lane `l`.
    pub fn coords(&self, l: usize) -> (u64, u64) {
        let t = l as u64 + u64::from(self.phase);
        let n = u64::from(self.row_lanes);
        (t % n, t / n)
    }

    /// Byte address of element 0 of row `j`.
    pub fn row_start(&self, j: u64) -> i128 {
        self.origin + i128::from(j) * i128::from(self.outer)
    }

    /// Bytes the active lanes of one full row span: `row_lanes` · `width`.
    pub fn row_bytes(&self, width: u32) -> u64 {
        u64::from(self.row_lanes) * u64::from(width)
    }

    /// `a` re-laid with the same rows: lane *l* at `base + i·inner + j·outer` with width
    /// `width`, where `base` is a 256-byte boundary at or above the lowest active address,
    /// lifted so that no lane's address is negative. Models a layout change (padding, a
    /// structure of arrays, swapped indices) with element 0 of row 0 aligned.
    pub fn relaid(&self, a: &WarpAccess, inner: i64, outer: i64, width: u32) -> WarpAccess {
        let offset = |l: usize| {
            let (i, j) = self.coords(l);
            i128::from(i) * i128::from(inner) + i128::from(j) * i128::from(outer)
        };
        let low = a.active().map(|(_, x)| x).min().unwrap_or(0) & !255;
        let lowest_offset = a.active().map(|(l, _)| offset(l)).min().unwrap_or(0);
        let lift = if lowest_offset < 0 {
            (-lowest_offset + 255) & !255
        } else {
            0
        };
        let base = i128::from(low) + lift;
        let mut b = *a;
        b.width = width;
        b.lanes = LaneForm::Unknown;
        for (l, x) in b.addrs.iter_mut().enumerate() {
            *x = u64::try_from(base + offset(l)).unwrap_or(0);
        }
        b
    }
}

/// The layout of rows of `n` lanes with phase `p` when every active lane of `lanes` (lane,
/// address; lowest lane first) fits it and the lanes span at least 2 rows, with a stride
/// known inside a row.
fn fit(lanes: &[(usize, u64)], n: u32, p: u32) -> Option<Layout> {
    let mut lay = Layout {
        row_lanes: n,
        phase: p,
        rows: 0,
        origin: 0,
        inner: 0,
        outer: 0,
    };
    // The stride inside a row: from the first two active lanes of one row.
    let inner = lanes.windows(2).find_map(|w| {
        let ((la, xa), (lb, xb)) = (w[0], w[1]);
        let ((ia, ja), (ib, jb)) = (lay.coords(la), lay.coords(lb));
        (ja == jb).then(|| (i128::from(xb) - i128::from(xa), ib as i128 - ia as i128))
    })?;
    if inner.0 % inner.1 != 0 {
        return None;
    }
    lay.inner = i64::try_from(inner.0 / inner.1).ok()?;
    let (l0, x0) = lanes[0];
    let (i0, j0) = lay.coords(l0);
    let (l1, x1) = *lanes.iter().find(|&&(l, _)| lay.coords(l).1 != j0)?;
    let (i1, j1) = lay.coords(l1);
    let rest = i128::from(x1) - i128::from(x0) - (i1 as i128 - i0 as i128) * i128::from(lay.inner);
    let dj = j1 as i128 - j0 as i128;
    if rest % dj != 0 {
        return None;
    }
    lay.outer = i64::try_from(rest / dj).ok()?;
    lay.origin =
        i128::from(x0) - i0 as i128 * i128::from(lay.inner) - j0 as i128 * i128::from(lay.outer);
    let mut rows = 0u64;
    for &(l, x) in lanes {
        let (i, j) = lay.coords(l);
        if lay.row_start(j) + i as i128 * i128::from(lay.inner) != i128::from(x) {
            return None;
        }
        rows |= 1 << j;
    }
    lay.rows = rows.count_ones();
    Some(lay)
}
