//! A set-associative cache of 128-byte lines (four 32-byte sectors each) with LRU
//! replacement: the storage behind the per-SM L1s and the shared L2 of [`crate::model`].
//!
//! The set of a line is its index folded with higher bits, modulo the set count (real L2s
//! hash addresses over their slices; the fold keeps power-of-two strides from piling into a
//! few sets, and consecutive lines in consecutive sets, which keeps the simulation fast).
//! Allocation happens once, in [`LineCache::new`]; lookups do not allocate.

/// Bytes in one cache line (2.x … 12.x) [reference "Words"].
pub(crate) const LINE_BYTES: u64 = 128;

/// Result of [`LineCache::access`].
pub(crate) struct Access<P> {
    /// Slot of the line (valid until the next `access`).
    pub slot: usize,
    /// Whether the line was resident.
    pub hit: bool,
    /// The line evicted to make room: (line index, its payload).
    pub evicted: Option<(u64, P)>,
}

/// `ways`-way set-associative cache of lines, each with a payload `P` (sector state).
pub(crate) struct LineCache<P> {
    sets: usize,
    ways: usize,
    /// Line index + 1 per slot; 0 = empty.
    tags: Vec<u64>,
    /// Last use per slot (LRU).
    stamps: Vec<u64>,
    payload: Vec<P>,
    clock: u64,
}

impl<P: Copy + Default> LineCache<P> {
    /// A cache of `capacity_bytes` (rounded down to whole sets, at least one set) with `ways`
    /// lines per set.
    pub fn new(capacity_bytes: u64, ways: usize) -> Self {
        let lines = (capacity_bytes / LINE_BYTES).max(1) as usize;
        let ways = ways.clamp(1, lines);
        let sets = (lines / ways).max(1);
        let n = sets * ways;
        LineCache {
            sets,
            ways,
            tags: vec![0; n],
            stamps: vec![0; n],
            payload: vec![P::default(); n],
            clock: 0,
        }
    }

    fn set_of(&self, line: u64) -> usize {
        let h = line ^ (line >> 11) ^ (line >> 19) ^ (line >> 29);
        (h % self.sets as u64) as usize
    }

    /// The slot holding `line`, if resident (does not touch the LRU order).
    pub fn find(&self, line: u64) -> Option<usize> {
        let base = self.set_of(line) * self.ways;
        (base..base + self.ways).find(|&s| self.tags[s] == line + 1)
    }

    /// Looks `line` up and makes it the most recently used; on a miss allocates it (payload
    /// reset to default), evicting the least recently used line of its set if the set is
    /// full.
    pub fn access(&mut self, line: u64) -> Access<P> {
        self.clock += 1;
        let base = self.set_of(line) * self.ways;
        let set = base..base + self.ways;
        if let Some(i) = self.tags[set.clone()].iter().position(|&t| t == line + 1) {
            self.stamps[base + i] = self.clock;
            return Access {
                slot: base + i,
                hit: true,
                evicted: None,
            };
        }
        // Miss: an empty way if any, else the least recently used.
        let victim = match self.tags[set.clone()].iter().position(|&t| t == 0) {
            Some(i) => base + i,
            None => set.min_by_key(|&s| self.stamps[s]).expect("ways ≥ 1"),
        };
        let evicted =
            (self.tags[victim] != 0).then(|| (self.tags[victim] - 1, self.payload[victim]));
        self.tags[victim] = line + 1;
        self.stamps[victim] = self.clock;
        self.payload[victim] = P::default();
        Access {
            slot: victim,
            hit: false,
            evicted,
        }
    }

    /// The payload of `slot`.
    pub fn payload_mut(&mut self, slot: usize) -> &mut P {
        &mut self.payload[slot]
    }

    /// Empties the cache, handing every resident line and its payload to `f`.
    pub fn drain(&mut self, mut f: impl FnMut(u64, P)) {
        for s in 0..self.tags.len() {
            if self.tags[s] != 0 {
                f(self.tags[s] - 1, self.payload[s]);
                self.tags[s] = 0;
                self.payload[s] = P::default();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lru_within_a_set() {
        // One set of 2 ways.
        let mut c: LineCache<u8> = LineCache::new(256, 2);
        assert!(!c.access(1).hit);
        assert!(!c.access(2).hit);
        assert!(c.access(1).hit);
        let a = c.access(3); // evicts 2, the least recently used
        assert!(!a.hit);
        assert_eq!(a.evicted.map(|e| e.0), Some(2));
        assert!(c.find(1).is_some() && c.find(3).is_some() && c.find(2).is_none());
        let mut seen = Vec::new();
        c.drain(|l, _| seen.push(l));
        seen.sort();
        assert_eq!(seen, [1, 3]);
        assert!(c.find(1).is_none());
    }

    #[test]
    fn capacity_holds_a_streaming_working_set() {
        // 64 KiB = 512 lines, 16-way: a 256-line sweep fits and hits the second time.
        let mut c: LineCache<u8> = LineCache::new(64 * 1024, 16);
        for l in 0..256 {
            c.access(l);
        }
        let hits = (0..256).filter(|&l| c.access(l).hit).count();
        assert!(hits >= 250, "{hits}");
        *c.payload_mut(c.find(7).unwrap()) = 5;
        assert_eq!(*c.payload_mut(c.find(7).unwrap()), 5);
    }
}
