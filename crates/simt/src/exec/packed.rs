//! Warp accesses buffered between the threads that run blocks and the one that hands them to
//! the sink, in a compact form: most warp accesses are affine in the lane (`base + lane ·
//! stride`), which two numbers describe; the rest keep their 32 addresses in a side table.
//! A buffered access is 48 bytes instead of 300, so the buffering costs little.

use warpscope_model::{LaneForm, Op, Space, WarpAccess, WARP_SIZE};

use super::WarpOrigin;

/// One buffered access.
pub(super) struct Packed {
    site: u32,
    origin: WarpOrigin,
    space: Space,
    op: Op,
    read_only: bool,
    width: u32,
    mask: u32,
    /// The access's [`WarpAccess::lanes`], handed back with the same addresses.
    lanes: LaneForm,
    addrs: Addrs,
}

enum Addrs {
    /// Lane `l`'s address is `base + l · stride` (wrapping).
    Affine { base: u64, stride: u64 },
    /// The 32 addresses start at this index of the side table.
    Table(usize),
}

/// A chunk's buffered accesses.
#[derive(Default)]
pub(super) struct Buffer {
    items: Vec<Packed>,
    table: Vec<u64>,
}

impl Buffer {
    pub(super) fn with_capacity(n: usize) -> Buffer {
        Buffer {
            items: Vec::with_capacity(n),
            table: Vec::new(),
        }
    }

    pub(super) fn push(&mut self, site: u32, a: &WarpAccess, origin: WarpOrigin) {
        let addrs = match affine(a) {
            Some((base, stride)) => Addrs::Affine { base, stride },
            None => {
                self.table.extend_from_slice(&a.addrs);
                Addrs::Table(self.table.len() - WARP_SIZE)
            }
        };
        self.items.push(Packed {
            site,
            origin,
            space: a.space,
            op: a.op,
            read_only: a.read_only,
            width: a.width,
            mask: a.mask,
            lanes: a.lanes,
            addrs,
        });
    }

    /// Hands every access to `sink`, in order, exactly as it was pushed (inactive lanes'
    /// addresses as pushed: the executor leaves them zero, and so does the affine form
    /// unless every lane was active).
    pub(super) fn deliver(&self, sink: &mut dyn FnMut(u32, &WarpAccess, WarpOrigin)) {
        let mut a = WarpAccess {
            space: Space::Global,
            op: Op::Load,
            width: 0,
            mask: 0,
            addrs: [0; WARP_SIZE],
            read_only: false,
            lanes: LaneForm::Unknown,
        };
        for p in &self.items {
            a.space = p.space;
            a.op = p.op;
            a.read_only = p.read_only;
            a.width = p.width;
            a.mask = p.mask;
            a.lanes = p.lanes;
            match p.addrs {
                Addrs::Affine { base, stride } => {
                    for (l, x) in a.addrs.iter_mut().enumerate() {
                        *x = if p.mask >> l & 1 == 1 {
                            base.wrapping_add(stride.wrapping_mul(l as u64))
                        } else {
                            0
                        };
                    }
                }
                Addrs::Table(i) => a.addrs.copy_from_slice(&self.table[i..i + WARP_SIZE]),
            }
            sink(p.site, &a, p.origin);
        }
    }
}

/// `(base, stride)` when every active lane's address is `base + lane · stride` and every
/// inactive lane's is zero (so that unpacking gives back the same access).
fn affine(a: &WarpAccess) -> Option<(u64, u64)> {
    if a.mask == 0 {
        return None;
    }
    let l0 = a.mask.trailing_zeros() as usize;
    let rest = a.mask & !(1 << l0);
    let stride = if rest == 0 {
        0
    } else {
        let l1 = rest.trailing_zeros() as usize;
        let d = a.addrs[l1].wrapping_sub(a.addrs[l0]);
        let k = (l1 - l0) as u64;
        // The step per lane must be exact (wrapping arithmetic, so any divisor check is
        // replaced by the verification below).
        if k == 1 {
            d
        } else if d.is_multiple_of(k) {
            d / k
        } else {
            return None;
        }
    };
    let base = a.addrs[l0].wrapping_sub(stride.wrapping_mul(l0 as u64));
    for (l, &x) in a.addrs.iter().enumerate() {
        let want = if a.mask >> l & 1 == 1 {
            base.wrapping_add(stride.wrapping_mul(l as u64))
        } else {
            0
        };
        if x != want {
            return None;
        }
    }
    Some((base, stride))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn access(mask: u32, f: impl Fn(usize) -> u64) -> WarpAccess {
        let mut addrs = [0u64; WARP_SIZE];
        for (l, x) in addrs.iter_mut().enumerate() {
            if mask >> l & 1 == 1 {
                *x = f(l);
            }
        }
        WarpAccess {
            space: Space::Shared,
            op: Op::Load,
            width: 4,
            mask,
            addrs,
            read_only: false,
            lanes: LaneForm::Unknown,
        }
    }

    /// Affine, broadcast, descending, partial and scattered accesses come back unchanged.
    #[test]
    fn round_trip() {
        let cases = [
            access(u32::MAX, |l| 4096 + 4 * l as u64),
            access(u32::MAX, |_| 128),
            access(u32::MAX, |l| 1000 - 8 * l as u64),
            access(0x0F0F_00F0, |l| 64 + 132 * l as u64),
            access(u32::MAX, |l| (l as u64 * 7919) % 1024 * 4),
            access(1 << 9, |_| 40),
        ];
        let mut b = Buffer::default();
        for (i, a) in cases.iter().enumerate() {
            b.push(
                i as u32,
                a,
                WarpOrigin {
                    block: [i as u32, 0, 0],
                    warp: 1,
                },
            );
        }
        assert!(matches!(b.items[4].addrs, Addrs::Table(_)));
        assert!(matches!(b.items[2].addrs, Addrs::Affine { .. }));
        let mut back = Vec::new();
        b.deliver(&mut |s, a, o| back.push((s, *a, o)));
        assert_eq!(back.len(), cases.len());
        for (i, (s, a, o)) in back.iter().enumerate() {
            assert_eq!((*s, o.block[0]), (i as u32, i as u32));
            assert_eq!(a, &cases[i]);
        }
    }
}
