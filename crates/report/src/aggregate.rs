//! Summing a launch's warp accesses per row and per compute capability, each distinct access
//! shape costed once for every CC.
//!
//! A warp access is reduced to its [`Shape`] (the model's cost does not change under a
//! shift of all lanes by a multiple of 256 bytes); the aggregator counts how often each
//! (row, shape) occurs and costs each pair once per CC when the sums are needed
//! ([`Aggregator::settle`]): `count × cost`. Interpretation therefore pays for one CC or
//! twenty-nine alike. Accesses without a shape (lanes 4 GiB apart) or past [`TALLY_CAP`]
//! distinct pairs are costed as they come.
//!
//! An access whose lanes are affine ([`LaneForm`], found where the executor made the
//! addresses) is keyed by its [`AffineShape`] (mask, stride, lowest lane's offset) instead
//! of its 32 offsets: the one determines the other, so the tallies are those the shapes
//! give.

use rayon::prelude::*;
use rustc_hash::FxHashMap;
use warpscope_advice::{weight, LaneStrides, SiteFacts};
use warpscope_model::{
    cost, Arch, Bounds, Config, Cost, LaneForm, Op, Space, WarpAccess, WARP_SIZE,
};

use crate::explain::SiteAdvice;
use crate::{advise, Analysis, ArchReport, Header, SiteInfo, SiteReport, Totals};

/// One row of the report: a site, split by the memory space and width its instructions had
/// (a struct copy becomes several instructions of different widths).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
struct RowKey {
    site: usize,
    space: Space,
    width: u32,
}

/// Distinct (row, shape) pairs tallied at most; accesses of further pairs are costed as they
/// come (scattered accesses rarely repeat a shape, so a table of them would only grow).
const TALLY_CAP: usize = 1 << 16;

/// An access up to a shift of all lanes by a multiple of 256 bytes, which changes no rule of
/// the model (segments ≤ 128 B, L1 lines 128 B, sectors 32 B, 1.x alignment ≤ 256 B, banks
/// ≤ 32 × 8 B): space, op, width, read-only path, active mask and each active lane's offset
/// from the 256-byte-aligned base of the lowest address.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
struct Shape {
    space: Space,
    op: Op,
    width: u32,
    read_only: bool,
    mask: u32,
    offsets: [u32; WARP_SIZE],
}

impl Shape {
    /// The shape of `a`, or `None` when no lane is active or its lanes span 4 GiB or more.
    fn of(a: &WarpAccess) -> Option<Shape> {
        let Bounds { lo, hi, .. } = a.bounds_by_lane(1)?;
        let whole = a.mask == u32::MAX;
        let lo = lo & !255;
        if hi - lo > u32::MAX as u64 {
            return None;
        }
        let mut offsets = [0u32; WARP_SIZE];
        for (l, o) in offsets.iter_mut().enumerate() {
            if whole || a.mask >> l & 1 == 1 {
                *o = (a.addrs[l] - lo) as u32;
            }
        }
        Some(Shape {
            space: a.space,
            op: a.op,
            width: a.width,
            read_only: a.read_only,
            mask: a.mask,
            offsets,
        })
    }
}

/// A [`Shape`] whose active lanes are affine ([`LaneForm::Affine`]), in the compact form
/// that determines it: the pattern of its lanes (mask and stride) and the offset of its
/// lowest lane from the 256-byte-aligned base give every lane's offset. Two affine accesses
/// have the same `AffineShape` exactly when they have the same `Shape`.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
struct AffineShape {
    lanes: AffineLanes,
    /// The lowest active address's offset in its 256-byte block.
    low: u8,
}

/// What affine accesses of one pattern share, whatever their base: all of an
/// [`AffineShape`] but the lowest lane's offset.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
struct AffineLanes {
    space: Space,
    op: Op,
    read_only: bool,
    width: u32,
    mask: u32,
    /// Bytes from one lane to the next.
    stride: i64,
}

impl AffineShape {
    /// The shape of `a`, whose lanes are affine with `stride` ([`WarpAccess::lane_form`]),
    /// or `None` when they span 4 GiB or more (as [`Shape::of`]).
    fn of(a: &WarpAccess, stride: i64) -> Option<AffineShape> {
        let l0 = a.mask.trailing_zeros() as usize;
        let last = (31 - a.mask.leading_zeros()) as usize;
        let (first, end) = (a.addrs[l0], a.addrs[last]);
        // Affine lanes are monotonic: the end lanes are the lowest and the highest.
        let (lo, hi) = if stride < 0 {
            (end, first)
        } else {
            (first, end)
        };
        if hi - (lo & !255) > u32::MAX as u64 {
            return None;
        }
        Some(AffineShape {
            lanes: AffineLanes {
                space: a.space,
                op: a.op,
                read_only: a.read_only,
                width: a.width,
                mask: a.mask,
                stride,
            },
            low: (lo & 255) as u8,
        })
    }
}

/// One row's tallies of the affine shapes of one [`AffineLanes`] pattern, indexed by the
/// lowest lane's offset ([`AffineShape::low`]): a strided row whose warps start at many
/// offsets finds its tally without hashing.
struct AffineMemo {
    lanes: AffineLanes,
    /// Which pattern the row has had since the memo was made (1, 2, …): entries of earlier
    /// ones are stale, so a switch of pattern costs no clearing.
    pattern: u32,
    /// Per offset: the pattern it was looked up under, and its tally.
    by_low: Box<[(u32, u32); 256]>,
}

impl AffineMemo {
    fn new(lanes: AffineLanes) -> AffineMemo {
        AffineMemo {
            lanes,
            pattern: 1,
            by_low: Box::new([(0, 0); 256]),
        }
    }

    /// The tally of `key` when it was looked up under the current pattern.
    fn get(&self, key: &AffineShape) -> Option<usize> {
        let (pattern, i) = self.by_low[key.low as usize];
        (self.lanes == key.lanes && pattern == self.pattern).then_some(i as usize)
    }

    /// Makes `lanes` the current pattern (its entries all stale when it is another).
    fn switch(&mut self, lanes: AffineLanes) {
        if self.lanes != lanes {
            self.lanes = lanes;
            if self.pattern == u32::MAX {
                *self = AffineMemo::new(lanes);
            } else {
                self.pattern += 1;
            }
        }
    }
}

/// [`LaneStrides::stride_of`] of an access that has a shape (lanes less than 4 GiB apart):
/// from its lanes' form when they are affine (a positive stride and two or more lanes),
/// without going over the lanes again.
fn lane_stride(a: &WarpAccess) -> Option<u64> {
    match a.lane_form() {
        LaneForm::Affine { stride } => {
            (a.mask.count_ones() >= 2 && stride > 0).then_some(stride as u64)
        }
        _ => LaneStrides::stride_of(a),
    }
}

/// How often one row saw one shape, and the first such access (its sequence number among
/// the aggregator's accesses: the costliest access of a row is the first of the greatest
/// weight).
#[derive(Clone, Copy)]
struct Tally {
    row: u32,
    /// The shape's lane stride ([`LaneStrides::stride_of`]), found once.
    stride: Option<u64>,
    count: u64,
    first: u64,
    access: WarpAccess,
}

/// The costliest access of a row on one CC so far: its weight ([`weight`]), sequence number
/// and the access.
#[derive(Clone, Copy)]
struct Worst {
    weight: u64,
    seq: u64,
    access: WarpAccess,
}

impl Worst {
    /// Keeps `w` when it weighs more, or as much and came first.
    fn offer(slot: &mut Option<Worst>, w: Worst) {
        let better = match slot {
            None => true,
            Some(x) => w.weight > x.weight || (w.weight == x.weight && w.seq < x.seq),
        };
        if better {
            *slot = Some(w);
        }
    }
}

/// The tally of (`row`, `key`) in `map`, made by `new` and pushed on `tallies` when the
/// pair is new and there are fewer than [`TALLY_CAP`]; `None` when it is new and there are
/// that many.
fn find_or_push<K: Copy + Eq + std::hash::Hash>(
    map: &mut FxHashMap<(u32, K), u32>,
    tallies: &mut Vec<Tally>,
    row: usize,
    key: &K,
    new: impl FnOnce() -> Tally,
) -> Option<usize> {
    let next = tallies.len();
    if next >= TALLY_CAP {
        return map.get(&(row as u32, *key)).map(|&i| i as usize);
    }
    let i = *map.entry((row as u32, *key)).or_insert(next as u32) as usize;
    if i == next {
        tallies.push(new());
    }
    Some(i)
}

/// [`find_or_push`] behind `last[row]`, the row's last key and its tally.
fn tally_in<K: Copy + Eq + std::hash::Hash>(
    map: &mut FxHashMap<(u32, K), u32>,
    last: &mut Vec<Option<(K, u32)>>,
    tallies: &mut Vec<Tally>,
    row: usize,
    key: &K,
    new: impl FnOnce() -> Tally,
) -> Option<usize> {
    if let Some(Some((k, i))) = last.get(row) {
        if k == key {
            return Some(*i as usize);
        }
    }
    let i = find_or_push(map, tallies, row, key, new)?;
    if row >= last.len() {
        last.resize(row + 1, None);
    }
    last[row] = Some((*key, i as u32));
    Some(i)
}

/// Sums the cost of warp accesses per site and per compute capability.
pub struct Aggregator {
    archs: Vec<&'static Arch>,
    config: Config,
    rows: FxHashMap<RowKey, usize>,
    keys: Vec<RowKey>,
    /// Per site: the row of its last access (most sites keep one space and width).
    last_row: Vec<Option<(RowKey, usize)>>,
    /// `totals[arch][row]`: the settled sums.
    totals: Vec<Vec<Cost>>,
    /// `worst[arch][row]`: the costliest warp access of the row on that arch (by
    /// [`weight`]), the one advice is computed from.
    worst: Vec<Vec<Option<Worst>>>,
    /// Per row: bit set of (first active lane's address mod 128) over its warps.
    start_offsets: Vec<u128>,
    /// Per row: the lane strides its warps showed ([`SiteFacts::strides`]).
    strides: Vec<LaneStrides>,
    /// The tally of each (row, shape) pair not yet settled: affine shapes by their
    /// [`AffineShape`], the rest by their [`Shape`].
    affine_tally_of: FxHashMap<(u32, AffineShape), u32>,
    tally_of: FxHashMap<(u32, Shape), u32>,
    tallies: Vec<Tally>,
    /// Per row: the tallies of its last affine pattern by offset, and its last other
    /// shape with its tally (a regular kernel's warps repeat one pattern per row: found by
    /// one comparison and an index, without hashing).
    affine_memo: Vec<Option<AffineMemo>>,
    last_lanes: Vec<Option<(Shape, u32)>>,
    /// Accesses added so far (the next one's sequence number).
    seen: u64,
}

impl Aggregator {
    /// An empty aggregator that will cost accesses for `archs` under `config`.
    pub fn new(archs: Vec<&'static Arch>, config: Config) -> Self {
        let n = archs.len();
        Aggregator {
            archs,
            config,
            rows: FxHashMap::default(),
            keys: Vec::new(),
            last_row: Vec::new(),
            totals: vec![Vec::new(); n],
            worst: vec![Vec::new(); n],
            start_offsets: Vec::new(),
            strides: Vec::new(),
            affine_tally_of: FxHashMap::default(),
            tally_of: FxHashMap::default(),
            tallies: Vec::new(),
            affine_memo: Vec::new(),
            last_lanes: Vec::new(),
            seen: 0,
        }
    }

    /// The row of `key`, made when new.
    fn row(&mut self, key: RowKey) -> usize {
        if let Some(Some((k, row))) = self.last_row.get(key.site) {
            if *k == key {
                return *row;
            }
        }
        let row = self.find_or_make_row(key);
        if key.site >= self.last_row.len() {
            self.last_row.resize(key.site + 1, None);
        }
        self.last_row[key.site] = Some((key, row));
        row
    }

    fn find_or_make_row(&mut self, key: RowKey) -> usize {
        let next = self.keys.len();
        let row = *self.rows.entry(key).or_insert(next);
        if row == next {
            self.keys.push(key);
            self.start_offsets.push(0);
            self.strides.push(LaneStrides::default());
            for (t, w) in self.totals.iter_mut().zip(&mut self.worst) {
                t.push(Cost::default());
                w.push(None);
            }
        }
        row
    }

    /// Warp accesses added so far (merged parts' included).
    pub fn accesses(&self) -> u64 {
        self.seen
    }

    /// Adds one warp-level access of `site`.
    pub fn add(&mut self, site: usize, a: &WarpAccess) {
        let row = self.row(RowKey {
            site,
            space: a.space,
            width: a.width,
        });
        let first = (a.mask != 0).then(|| a.addrs[a.mask.trailing_zeros() as usize]);
        if let Some(first) = first {
            self.start_offsets[row] |= 1u128 << (first % 128);
        }
        let seq = self.seen;
        self.seen += 1;
        let new = || Tally {
            row: row as u32,
            stride: lane_stride(a),
            count: 0,
            first: seq,
            access: *a,
        };
        if let Some(i) = self.tally_index(row, a, new) {
            let t = &mut self.tallies[i];
            t.count += 1;
            if let (Some(stride), Some(first)) = (t.stride, first) {
                self.strides[row].record_stride(stride, first);
            }
            return;
        }
        self.strides[row].record(a);
        self.cost_into_totals(row, 1, seq, a);
    }

    /// The tally of (`row`, the shape of `a`), made by `new` when the pair is new and the
    /// table has room; `None` when `a` has no shape ([`Shape::of`]) or the pair is new and
    /// the table is full (the caller costs the access). Affine lanes are keyed by their
    /// [`AffineShape`], the rest by their [`Shape`]: one shape, one key.
    fn tally_index(
        &mut self,
        row: usize,
        a: &WarpAccess,
        new: impl FnOnce() -> Tally,
    ) -> Option<usize> {
        let tallies = &mut self.tallies;
        if let LaneForm::Affine { stride } = a.lane_form() {
            let key = AffineShape::of(a, stride)?;
            if row >= self.affine_memo.len() {
                self.affine_memo.resize_with(row + 1, || None);
            }
            let memo = self.affine_memo[row].get_or_insert_with(|| AffineMemo::new(key.lanes));
            if let Some(i) = memo.get(&key) {
                return Some(i);
            }
            memo.switch(key.lanes);
            let i = find_or_push(&mut self.affine_tally_of, tallies, row, &key, new)?;
            memo.by_low[key.low as usize] = (memo.pattern, i as u32);
            Some(i)
        } else {
            let key = Shape::of(a)?;
            tally_in(
                &mut self.tally_of,
                &mut self.last_lanes,
                tallies,
                row,
                &key,
                new,
            )
        }
    }

    /// Adds `count` accesses like `a` (the first numbered `seq`) to `row`'s sums on every CC.
    fn cost_into_totals(&mut self, row: usize, count: u64, seq: u64, a: &WarpAccess) {
        for ((arch, totals), worst) in self.archs.iter().zip(&mut self.totals).zip(&mut self.worst)
        {
            let c = cost(arch, &self.config, a);
            totals[row].add_times(&c, count);
            Worst::offer(
                &mut worst[row],
                Worst {
                    weight: weight(&c, a.space),
                    seq,
                    access: *a,
                },
            );
        }
    }

    /// Costs every tallied (row, shape) pair once per CC into the sums (the CCs in
    /// parallel) and empties the tally table.
    fn settle(&mut self) {
        if self.tallies.is_empty() {
            return;
        }
        let tallies = std::mem::take(&mut self.tallies);
        self.affine_tally_of.clear();
        self.tally_of.clear();
        self.affine_memo.clear();
        self.last_lanes.clear();
        let config = &self.config;
        self.archs
            .par_iter()
            .zip(self.totals.par_iter_mut())
            .zip(self.worst.par_iter_mut())
            .for_each(|((arch, totals), worst)| {
                for t in &tallies {
                    let c = cost(arch, config, &t.access);
                    totals[t.row as usize].add_times(&c, t.count);
                    Worst::offer(
                        &mut worst[t.row as usize],
                        Worst {
                            weight: weight(&c, t.access.space),
                            seq: t.first,
                            access: t.access,
                        },
                    );
                }
            });
    }

    /// Adds `later`: the sums of accesses that all came after this one's (another part of
    /// the same launch, summed on another thread), exactly as if they had been added here
    /// one by one: rows keep their first-seen order, the costliest access of a row stays the
    /// first of the greatest weight, and a shape both saw is costed once. Both must have
    /// been made with the same architectures and configuration.
    pub fn merge(&mut self, later: Aggregator) {
        let offset = self.seen;
        let map: Vec<usize> = later.keys.iter().map(|k| self.row(*k)).collect();
        for (from, &to) in map.iter().enumerate() {
            self.start_offsets[to] |= later.start_offsets[from];
            self.strides[to].merge(&later.strides[from]);
        }
        for (i, (totals, worst)) in self.totals.iter_mut().zip(&mut self.worst).enumerate() {
            for (from, &to) in map.iter().enumerate() {
                totals[to].add(&later.totals[i][from]);
                if let Some(w) = later.worst[i][from] {
                    Worst::offer(
                        &mut worst[to],
                        Worst {
                            seq: w.seq + offset,
                            ..w
                        },
                    );
                }
            }
        }
        for t in later.tallies {
            let row = map[t.row as usize];
            let first = t.first + offset;
            let i = self.tally_index(row, &t.access, || Tally {
                row: row as u32,
                count: 0,
                first,
                ..t
            });
            match i {
                Some(i) => self.tallies[i].count += t.count,
                None => self.cost_into_totals(row, t.count, first, &t.access),
            }
        }
        self.seen += later.seen;
    }

    /// Per CC (in the order given to [`Aggregator::new`]): the sectors (global, local,
    /// texture, surface, distributed shared) plus the shared-memory wavefronts plus the
    /// constant-memory requests of every access so far: the one figure two samples of a
    /// launch are compared by (`--sample-blocks auto`).
    pub fn moved_units(&mut self) -> Vec<u64> {
        self.settle();
        self.totals
            .iter()
            .map(|per_row| {
                per_row
                    .iter()
                    .zip(&self.keys)
                    .map(|(c, k)| match k.space {
                        Space::Shared => c.wavefronts,
                        Space::Constant => c.requests,
                        _ => c.sectors,
                    })
                    .fold(0u64, |a, b| a.saturating_add(b))
            })
            .collect()
    }

    /// Extrapolates the sums of a sample of `den` blocks to a grid of `num`
    /// ([`warpscope_model::Cost::scale`]); call after the last access and merge. Returns
    /// false when a total does not fit 64 bits (the caller refuses the launch).
    #[must_use]
    pub fn scale(&mut self, num: u64, den: u64) -> bool {
        self.settle();
        let mut fits = true;
        for per_arch in &mut self.totals {
            for c in per_arch.iter_mut() {
                fits &= c.scale(num, den);
            }
        }
        fits
    }

    /// The advice of the rows in table order (`order[i]` is the aggregator's row shown as
    /// `#i`): the rows of one source line, memory space and width diagnosed together, one
    /// advice per cause ([`advise::merge`]). A row without a source line (line 0) is its own
    /// group.
    fn advice(&self, order: &[usize], sites: &[SiteInfo]) -> Vec<SiteAdvice> {
        let mut groups: Vec<(usize, Vec<advise::Found>)> = Vec::new();
        let mut group_of: FxHashMap<(Option<&str>, u32, Space, u32), usize> = FxHashMap::default();
        for (i, &r) in order.iter().enumerate() {
            let k = self.keys[r];
            let s = &sites[k.site];
            // A copy engine's or tensor core's accesses (TMA, bulk copies, wmma) follow
            // no thread index: the thread-pattern advice does not apply to them.
            if s.ptx.as_deref().is_some_and(|p| {
                ["cp.async.bulk", "wmma.", "wgmma."]
                    .iter()
                    .any(|x| p.starts_with(x))
            }) {
                continue;
            }
            let facts = SiteFacts {
                text: &s.text,
                start_offsets: self.start_offsets[r],
                strides: self.strides[r].clone(),
            };
            let worst: Vec<(&'static Arch, WarpAccess)> = self
                .archs
                .iter()
                .zip(&self.worst)
                .filter_map(|(arch, w)| w.get(r).copied().flatten().map(|w| (*arch, w.access)))
                .collect();
            let found = advise::findings(i, &facts, &self.config, &worst);
            if found.is_empty() {
                continue;
            }
            let at = groups.len();
            let g = if s.line == 0 {
                at
            } else {
                *group_of
                    .entry((s.file.as_deref(), s.line, k.space, k.width))
                    .or_insert(at)
            };
            if g == at {
                groups.push((i, Vec::new()));
            }
            groups[g].1.extend(found);
        }
        groups
            .into_iter()
            .map(|(i, found)| {
                let k = self.keys[order[i]];
                let s = &sites[k.site];
                SiteAdvice {
                    row: i,
                    line: s.line,
                    column: s.column,
                    text: s.text.clone(),
                    file: s.file.clone(),
                    space: k.space,
                    width: k.width,
                    advice: advise::merge(found),
                }
            })
            .collect()
    }

    /// Finishes the sums and builds the report. `sites` are the front end's sites, indexed
    /// by the site ids passed to [`Aggregator::add`].
    pub fn finish(mut self, header: Header, sites: &[SiteInfo]) -> Analysis {
        self.settle();
        let mut order: Vec<usize> = (0..self.keys.len()).collect();
        order.sort_by_key(|&r| {
            let k = self.keys[r];
            let s = &sites[k.site];
            (s.line, s.column, s.ptx_line, s.op, k.space, k.width)
        });
        let architectures = self
            .archs
            .iter()
            .zip(&self.totals)
            .map(|(arch, totals)| {
                let mut rows = Vec::new();
                let mut t = Totals::default();
                for &r in &order {
                    let k = self.keys[r];
                    let c = totals[r];
                    t.add(k.space, sites[k.site].op, &c);
                    rows.push(SiteReport::new(&sites[k.site], k.space, k.width, c));
                }
                ArchReport {
                    cc: arch.cc.to_string(),
                    name: arch.name,
                    sites: rows,
                    totals: t.finish(),
                }
            })
            .collect();
        let advice = self.advice(&order, sites);
        Analysis {
            kernel: header.kernel,
            source: header.source,
            grid: header.grid,
            block: header.block,
            architectures,
            local_arrays: header.local_arrays,
            notes: header.notes,
            advice,
            traffic: Vec::new(),
            resources: None,
            findings: Vec::new(),
        }
    }
}

#[cfg(test)]
mod shape_tests {
    use super::*;
    use warpscope_model::WARP_SIZE;

    fn access(base: u64, stride: u64) -> WarpAccess {
        let mut addrs = [0u64; WARP_SIZE];
        for (l, a) in addrs.iter_mut().enumerate() {
            *a = base + stride * l as u64;
        }
        WarpAccess {
            space: Space::Global,
            op: Op::Load,
            width: 4,
            mask: u32::MAX,
            addrs,
            read_only: false,
            lanes: LaneForm::Unknown,
        }
    }

    /// A shift by 256 bytes keeps the shape (and every CC's cost); a shift by 32 does not.
    #[test]
    fn shapes_are_costed_once_per_256_byte_shift() {
        let a = access(1 << 40, 4);
        assert!(Shape::of(&a) == Shape::of(&access((1 << 40) + 256 * 7, 4)));
        assert!(Shape::of(&a) != Shape::of(&access((1 << 40) + 32, 4)));
        assert!(Shape::of(&access(0, 1 << 28)).is_none());
        for arch in warpscope_model::arch::all() {
            let c = Config::default();
            let shifted = access((1 << 40) + 256 * 3 + 4, 8);
            assert_eq!(
                cost(arch, &c, &access((1 << 40) + 4, 8)),
                cost(arch, &c, &shifted)
            );
        }
    }
}

#[cfg(test)]
mod merge_tests {
    use super::*;
    use warpscope_model::WARP_SIZE;

    fn access(base: u64, stride: u64, mask: u32) -> WarpAccess {
        let mut addrs = [0u64; WARP_SIZE];
        for (l, a) in addrs.iter_mut().enumerate() {
            if mask >> l & 1 == 1 {
                *a = base + stride * l as u64;
            }
        }
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

    /// Parts summed apart (costing as they come) and merged in order give the sequential
    /// sums: totals, row order, start offsets and the first costliest access of each row.
    #[test]
    fn parts_merged_in_order_equal_one_sequential_sum() {
        let archs = warpscope_model::arch::parse_list("1.0,2.0,9.0").unwrap();
        let config = Config::default();
        let stream: Vec<(usize, WarpAccess)> = (0..300u64)
            .map(|i| {
                let site = (i % 3) as usize;
                (
                    site,
                    access(
                        (1 << 40) + 4 * (i % 7) + 512 * i,
                        4 * (1 + i % 4),
                        u32::MAX >> (i % 5),
                    ),
                )
            })
            .collect();
        let mut one = Aggregator::new(archs.clone(), config);
        for (s, a) in &stream {
            one.add(*s, a);
        }
        let mut merged = Aggregator::new(archs.clone(), config);
        for chunk in stream.chunks(37) {
            let mut part = Aggregator::new(archs.clone(), config);
            for (s, a) in chunk {
                part.add(*s, a);
            }
            merged.merge(part);
        }
        let sites: Vec<SiteInfo> = (0..3)
            .map(|i| SiteInfo {
                line: i,
                column: 1,
                text: format!("s{i}"),
                op: Op::Load,
                read_only: false,
                file: None,
                ptx: None,
                ptx_line: None,
            })
            .collect();
        let header = || Header {
            kernel: "k".into(),
            source: "k.cu".into(),
            grid: [1, 1, 1],
            block: [32, 1, 1],
            local_arrays: Vec::new(),
            notes: Vec::new(),
        };
        let a = serde_json::to_string(&one.finish(header(), &sites)).unwrap();
        let b = serde_json::to_string(&merged.finish(header(), &sites)).unwrap();
        assert_eq!(a, b);
        assert!(a.contains("\"requests\""));
    }
}

#[cfg(test)]
mod tally_tests {
    use super::*;

    /// A stream of warp accesses from a small generator (xorshift): repeated affine shapes at
    /// shifting bases, partial masks, shared and global spaces, and scattered lanes.
    fn stream(n: usize, seed: u64) -> Vec<(usize, WarpAccess)> {
        let mut x = seed;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        (0..n)
            .map(|_| {
                let r = next();
                let site = (r % 4) as usize;
                let space = if r >> 8 & 1 == 1 {
                    Space::Shared
                } else {
                    Space::Global
                };
                let stride = [4u64, 8, 128, 4100][(r >> 9) as usize % 4];
                let base = (1 << 32) + 256 * (r >> 12 & 0xff) + 4 * (r >> 20 & 7);
                let scattered = r >> 24 & 7 == 0;
                let mut addrs = [0u64; WARP_SIZE];
                for (l, a) in addrs.iter_mut().enumerate() {
                    *a = if scattered {
                        (1 << 32) + 4 * (next() % 100_000)
                    } else {
                        base + stride * l as u64
                    };
                }
                let access = WarpAccess {
                    space,
                    op: if r >> 27 & 1 == 1 {
                        Op::Store
                    } else {
                        Op::Load
                    },
                    width: 4,
                    mask: u32::MAX >> (r >> 28 & 7),
                    addrs,
                    read_only: false,
                    lanes: LaneForm::Unknown,
                };
                (site, access)
            })
            .collect()
    }

    /// Tallying shapes and costing each once gives, on every CC, the sums and the first
    /// costliest access of costing every access one by one, and the same lane strides.
    #[test]
    fn tallied_sums_equal_costing_every_access() {
        let archs = warpscope_model::arch::parse_list("1.0,1.3,2.0,3.5,7.0,9.0").unwrap();
        let config = Config::default();
        let accesses = stream(20_000, 0x9e37_79b9_7f4a_7c15);
        let mut agg = Aggregator::new(archs.clone(), config);
        for (s, a) in &accesses {
            agg.add(*s, a);
        }
        assert!(agg.tallies.len() < accesses.len() / 2, "shapes repeat");
        // The lane strides, recorded once per access or from the shape's stride, agree.
        let mut strides = vec![LaneStrides::default(); agg.keys.len()];
        for (s, a) in &accesses {
            let row = agg.rows[&RowKey {
                site: *s,
                space: a.space,
                width: a.width,
            }];
            strides[row].record(a);
        }
        assert_eq!(agg.strides, strides);
        assert!(strides.iter().any(|s| s.powers_of_two != 0));
        agg.settle();
        for (i, arch) in archs.iter().enumerate() {
            let mut totals = vec![Cost::default(); agg.keys.len()];
            let mut worst: Vec<Option<(u64, usize)>> = vec![None; agg.keys.len()];
            for (seq, (s, a)) in accesses.iter().enumerate() {
                let row = agg.rows[&RowKey {
                    site: *s,
                    space: a.space,
                    width: a.width,
                }];
                let c = cost(arch, &config, a);
                totals[row].add(&c);
                let w = weight(&c, a.space);
                if worst[row].is_none_or(|(x, _)| w > x) {
                    worst[row] = Some((w, seq));
                }
            }
            assert_eq!(agg.totals[i], totals, "CC {}", arch.cc);
            for (row, w) in worst.iter().enumerate() {
                let got = agg.worst[i][row].map(|w| (w.weight, w.seq as usize));
                assert_eq!(got, *w, "CC {} row {row}", arch.cc);
                assert_eq!(agg.worst[i][row].unwrap().access, accesses[w.unwrap().1].1);
            }
        }
    }

    /// Past the tally table's cap, further distinct shapes are costed as they come; the sums
    /// stay those of costing every access.
    #[test]
    fn shapes_past_the_cap_are_costed_as_they_come() {
        let archs = warpscope_model::arch::parse_list("9.0").unwrap();
        let config = Config::default();
        let mut agg = Aggregator::new(archs.clone(), config);
        let mut expected = Cost::default();
        // Lane 1 at a distinct offset in each access: every access its own shape.
        for i in 0..(TALLY_CAP as u64 + 1000) {
            let mut addrs = [0u64; WARP_SIZE];
            addrs[1] = 4 * (i + 1);
            let a = WarpAccess {
                space: Space::Global,
                op: Op::Load,
                width: 4,
                mask: 0b11,
                addrs,
                read_only: false,
                lanes: LaneForm::Unknown,
            };
            expected.add(&cost(archs[0], &config, &a));
            agg.add(0, &a);
        }
        assert_eq!(agg.tallies.len(), TALLY_CAP);
        agg.settle();
        assert_eq!(agg.totals[0][0], expected);
        assert_eq!(expected.executions, TALLY_CAP as u64 + 1000);
    }
}

#[cfg(test)]
#[path = "aggregate_lanes_tests.rs"]
mod lanes_tests;
