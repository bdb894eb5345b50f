//! initcheck for shared memory: a read of a shared byte that no instruction of the block has
//! written. A block's shared memory holds no defined value when the block starts (CUDA C++
//! Programming Guide, "Variable Memory Space Specifiers", `__shared__`: a shared variable
//! "cannot have an initialization as part of its declaration"; its contents are whatever
//! the memory held). compute-sanitizer's initcheck checks global memory only ("reports cases
//! where the GPU performs uninitialized accesses to global memory"); this is the same check
//! on the memory that a block must fill itself.
//!
//! How: one bit per byte of the block's shared memory, cleared when a block starts (the
//! executor's zeroed image would otherwise hide the read), set by every instruction that
//! writes shared memory: stores, atomics (which also read), `cp.async` (its zero fill too),
//! `cp.async.bulk`/TMA into shared (the whole box, fill included), `stmatrix`, `tcgen05.alloc`
//! (the TMEM address), `mbarrier.init` and the other mbarrier operations (the barrier
//! object). A load, `ldmatrix`, an atomic, or a matrix instruction reading shared operands
//! (`wgmma`, `tcgen05.mma`/`.cp` descriptors, `mma` from shared) that touches a byte whose
//! bit is clear is a finding.

use super::checks::each_lane;
use super::lanes;
use warpscope_model::{Op, WARP_SIZE};

/// Where a read of unwritten shared memory was first found.
#[derive(Clone, Copy, Debug)]
pub(super) struct InitSeen {
    /// Lanes of the warp's access that read an unwritten byte.
    pub lanes: u32,
    /// Byte offset of the first unwritten byte in the block's shared memory.
    pub offset: u64,
}

/// Which bytes of the running block's shared memory have been written.
pub(super) struct Shadow {
    written: Vec<u64>,
    bytes: usize,
    /// Bytes of the shadow not written yet: at 0 (a kernel that has filled its tiles) no
    /// access can read an unwritten byte, and accesses are passed over at once.
    unwritten: usize,
}

impl Shadow {
    /// A shadow of `bytes` bytes of shared memory.
    pub fn new(bytes: usize) -> Shadow {
        let mut s = Shadow {
            written: vec![0; bytes.div_ceil(64)],
            bytes,
            unwritten: bytes,
        };
        s.begin_block();
        s
    }

    /// Bytes of shared memory the shadow covers.
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// A block starts: nothing written.
    pub fn begin_block(&mut self) {
        self.written.fill(0);
        // The bits past the last byte stand for no byte: written from the start.
        if !self.bytes.is_multiple_of(64) {
            if let Some(last) = self.written.last_mut() {
                *last = !0u64 << (self.bytes % 64);
            }
        }
        self.unwritten = self.bytes;
    }

    /// Sets the bits `m` of bitmap word `word`, counting the bytes newly written.
    #[inline(always)]
    fn set(&mut self, word: usize, m: u64) {
        if let Some(bits) = self.written.get_mut(word) {
            let new = m & !*bits;
            *bits |= m;
            self.unwritten -= new.count_ones() as usize;
        }
    }

    /// Marks `n` bytes from `off` written (a write that is no warp access: an mbarrier
    /// object, the TMEM address of `tcgen05.alloc`).
    pub fn mark(&mut self, off: u64, n: u64) {
        for b in off..off.saturating_add(n) {
            if (b / 64) as usize >= self.written.len() {
                break;
            }
            self.set((b / 64) as usize, 1 << (b % 64));
        }
    }

    /// Whether byte `b` was written (bytes past the shadow count as written: the access was
    /// checked against the block's shared memory before).
    fn is_written(&self, b: u64) -> bool {
        self.written
            .get((b / 64) as usize)
            .is_none_or(|w| w >> (b % 64) & 1 == 1)
    }

    /// A shared access (`op`, `width` bytes at each lane of `mask`'s offset in `addrs`):
    /// marks what it writes; returns where it read unwritten bytes, if it did.
    pub fn access(
        &mut self,
        op: Op,
        width: u32,
        mask: u32,
        addrs: &[u64; WARP_SIZE],
    ) -> Option<InitSeen> {
        let (reads, writes) = match op {
            Op::Load => (true, false),
            Op::Store => (false, true),
            Op::Atomic => (true, true),
            Op::Prefetch => return None,
        };
        if self.unwritten == 0 {
            return None;
        }
        let mut seen: Option<InitSeen> = None;
        let n = width as u64;
        // An access of 1, 2, 4, 8 or 16 bytes (aligned to its width, as the executor checked):
        // its bits lie in one word of the bitmap, one test or one bit-or per lane.
        if width.is_power_of_two() && width <= 16 && op != Op::Atomic {
            let m = (1u64 << n) - 1;
            if writes {
                each_lane(mask, |lane| {
                    let a = addrs[lane];
                    self.set((a / 64) as usize, m << (a % 64));
                });
                return None;
            }
            let mut missing = 0u32;
            each_lane(mask, |lane| {
                let a = addrs[lane];
                let bits = self
                    .written
                    .get((a / 64) as usize)
                    .copied()
                    .unwrap_or(u64::MAX);
                let lm = m << (a % 64);
                missing |= ((bits & lm != lm) as u32) << lane;
            });
            if missing == 0 {
                return None;
            }
            let lane = missing.trailing_zeros() as usize;
            let a = addrs[lane];
            let first = (a..a + n).find(|&b| !self.is_written(b)).unwrap_or(a);
            return Some(InitSeen {
                lanes: missing,
                offset: first,
            });
        }
        for lane in lanes(mask) {
            let a = addrs[lane];
            let (word, bit) = ((a / 64) as usize, a % 64);
            match self.written.get(word).copied() {
                // The bytes lie in one word of the bitmap (every aligned access of up to
                // 16 bytes): one test and one set.
                Some(bits) if bit + n <= 64 && n < 64 => {
                    let m = ((1u64 << n) - 1) << bit;
                    if reads && bits & m != m {
                        let first = (!bits & m).trailing_zeros() as u64;
                        let s = seen.get_or_insert(InitSeen {
                            lanes: 0,
                            offset: word as u64 * 64 + first,
                        });
                        s.lanes |= 1 << lane;
                    }
                    if writes {
                        self.set(word, m);
                    }
                }
                _ => {
                    if reads {
                        if let Some(b) = (a..a.saturating_add(n)).find(|&b| !self.is_written(b)) {
                            let s = seen.get_or_insert(InitSeen {
                                lanes: 0,
                                offset: b,
                            });
                            s.lanes |= 1 << lane;
                        }
                    }
                    if writes {
                        self.mark(a, n);
                    }
                }
            }
        }
        seen
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_read_of_a_byte_never_written_is_found_byte_by_byte() {
        let mut s = Shadow::new(256);
        s.begin_block();
        let mut addrs = [0u64; WARP_SIZE];
        for (l, a) in addrs.iter_mut().enumerate() {
            *a = 4 * l as u64;
        }
        // Lanes 0-15 store words 0-15.
        assert!(s.access(Op::Store, 4, 0xffff, &addrs).is_none());
        // The whole warp reads words 0-31: lanes 16-31 read unwritten bytes, the first at 64.
        let r = s.access(Op::Load, 4, u32::MAX, &addrs).unwrap();
        assert_eq!((r.lanes, r.offset), (0xffff_0000, 64));
        // A 2-byte store into word 16 leaves its upper half unwritten.
        let mut one = [0u64; WARP_SIZE];
        one[0] = 64;
        assert!(s.access(Op::Store, 2, 1, &one).is_none());
        let r = s.access(Op::Load, 4, 1, &one).unwrap();
        assert_eq!(r.offset, 66);
        // An atomic on an unwritten word reads it, then it is written.
        one[0] = 128;
        assert!(s.access(Op::Atomic, 4, 1, &one).is_some());
        assert!(s.access(Op::Load, 4, 1, &one).is_none());
        // A new block starts with nothing written.
        s.begin_block();
        assert!(s.access(Op::Load, 4, 1, &addrs).is_some());
    }

    /// The count of unwritten bytes reaches 0 exactly when every byte was written (a size
    /// that is no multiple of 64 included), and a new block counts from the size again.
    #[test]
    fn every_byte_written_is_counted_once() {
        let mut s = Shadow::new(100);
        assert_eq!(s.unwritten, 100);
        let mut addrs = [0u64; WARP_SIZE];
        for (l, a) in addrs.iter_mut().enumerate() {
            *a = 4 * l as u64;
        }
        // Words 0-24 (bytes 0-99), lanes 25-31 past the shadow; word 3 twice.
        addrs[25] = 12;
        s.access(Op::Store, 4, (1 << 26) - 1, &addrs);
        assert_eq!(s.unwritten, 0);
        assert!(s.access(Op::Load, 4, (1 << 25) - 1, &addrs).is_none());
        s.begin_block();
        assert_eq!(s.unwritten, 100);
        s.mark(96, 4);
        assert_eq!(s.unwritten, 96);
        let r = s.access(Op::Load, 4, 1 << 24, &addrs).is_none();
        assert!(r, "bytes 96-99 were marked");
        assert!(s.access(Op::Load, 4, 1 << 23, &addrs).is_some());
    }
}
