//! Memory images: sparse global memory in 4 KiB pages, allocations with their bounds, and
//! helpers for typed little-endian access.

use std::collections::HashMap;

use crate::decode::window;
use warpscope_init::Contents;

const PAGE_BITS: u32 = 12;
const PAGE: u64 = 1 << PAGE_BITS;

/// A global allocation: a pointer parameter's buffer or a `.global` variable.
#[derive(Clone, Debug)]
pub struct Alloc {
    /// What it is called in messages (the parameter's or variable's name).
    pub name: String,
    /// First byte's address (256-byte aligned).
    pub base: u64,
    /// Bytes, when known; accesses beyond are faults. `None`: unbounded (up to the 64 GiB
    /// spacing between allocations).
    pub size: Option<u64>,
}

/// Global memory: only pages written are stored; an unwritten byte reads as its
/// allocation's initial contents (`--init`), zero elsewhere.
pub struct Global {
    pages: HashMap<u64, Box<[u8; PAGE as usize]>>,
    /// Allocations whose initial contents are not zero: (base address, contents), each
    /// covering its [`window::ALLOC_SPACING`] bytes.
    backing: Vec<(u64, Contents)>,
    /// Bytes the pages may hold ([`Global::resident_bytes`]); a write needing a page past it
    /// fails with [`ImageFull`].
    limit: u64,
}

impl Default for Global {
    /// Unlimited.
    fn default() -> Self {
        Global::with_limit(u64::MAX)
    }
}

/// A write that needs a new page of a [`Global`] image already holding `held` bytes of its
/// `limit` (or one the host could not allocate).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ImageFull {
    /// The address written.
    pub addr: u64,
    /// Bytes the image holds.
    pub held: u64,
    /// Its limit in bytes.
    pub limit: u64,
}

impl Global {
    /// An empty image whose pages may hold at most `limit` bytes (rounded down to 4 KiB
    /// pages).
    pub fn with_limit(limit: u64) -> Global {
        Global {
            pages: HashMap::new(),
            backing: Vec::new(),
            limit,
        }
    }

    /// Gives the allocation at `base` its initial contents, read where nothing was written.
    pub fn back(&mut self, base: u64, contents: &Contents) {
        if !contents.is_zero() {
            self.backing.push((base, contents.clone()));
        }
    }

    /// The initial bytes at `addr ..` into `out` (zero outside every backed allocation).
    fn initial(&self, addr: u64, out: &mut [u8]) {
        match self
            .backing
            .iter()
            .find(|(b, _)| addr >= *b && addr - b < window::ALLOC_SPACING)
        {
            Some((b, c)) => c.read(addr - b, out),
            None => out.fill(0),
        }
    }

    /// A page, made on first write from the initial contents. Errors: the image is full.
    fn page(&mut self, page: u64) -> Result<&mut [u8; PAGE as usize], ImageFull> {
        let full = ImageFull {
            addr: page << PAGE_BITS,
            held: self.resident_bytes(),
            limit: self.limit,
        };
        if !self.pages.contains_key(&page) {
            if self.resident_bytes() + PAGE > self.limit || self.pages.try_reserve(1).is_err() {
                return Err(full);
            }
            let mut p = Box::new([0u8; PAGE as usize]);
            if !self.backing.is_empty() {
                self.initial(page << PAGE_BITS, &mut p[..]);
            }
            self.pages.insert(page, p);
        }
        self.pages.get_mut(&page).map(|p| &mut **p).ok_or(full)
    }

    /// Reads `n` ≤ 8 bytes at `addr`, little-endian.
    pub fn read(&self, addr: u64, n: u32) -> u64 {
        let off = (addr & (PAGE - 1)) as usize;
        if off + n as usize <= PAGE as usize {
            // Within one page: one lookup.
            return match self.pages.get(&(addr >> PAGE_BITS)) {
                Some(p) => read_flat(&p[..], off as u64, n),
                None if self.backing.is_empty() => 0,
                None => {
                    let mut b = [0u8; 8];
                    self.initial(addr, &mut b[..n as usize]);
                    u64::from_le_bytes(b)
                }
            };
        }
        let mut v = 0u64;
        for k in 0..n as u64 {
            let a = addr.wrapping_add(k);
            let b = match self.pages.get(&(a >> PAGE_BITS)) {
                Some(p) => p[(a & (PAGE - 1)) as usize],
                None => {
                    let mut b = [0u8; 1];
                    self.initial(a, &mut b);
                    b[0]
                }
            };
            v |= (b as u64) << (8 * k);
        }
        v
    }

    /// Writes the low `n` ≤ 8 bytes of `v` at `addr`. Errors: a new page would pass the
    /// image's limit.
    pub fn write(&mut self, addr: u64, n: u32, v: u64) -> Result<(), ImageFull> {
        let off = (addr & (PAGE - 1)) as usize;
        if off + n as usize <= PAGE as usize {
            let p = self.page(addr >> PAGE_BITS)?;
            write_flat(&mut p[..], off as u64, n, v);
            return Ok(());
        }
        for k in 0..n as u64 {
            let a = addr.wrapping_add(k);
            let p = self.page(a >> PAGE_BITS)?;
            p[(a & (PAGE - 1)) as usize] = (v >> (8 * k)) as u8;
        }
        Ok(())
    }

    /// Copies `bytes` to `addr` (zero bytes are not stored). Errors: as [`Global::write`].
    pub fn fill(&mut self, addr: u64, bytes: &[u8]) -> Result<(), ImageFull> {
        for (k, b) in bytes.iter().enumerate() {
            if *b != 0 {
                self.write(addr + k as u64, 1, *b as u64)?;
            }
        }
        Ok(())
    }

    /// Bytes held (pages written × 4 KiB).
    pub fn resident_bytes(&self) -> u64 {
        self.pages.len() as u64 * PAGE
    }
}

/// A zeroed buffer of `bytes` for a memory image, or why not: over `limit`, or refused by
/// the host's allocator (no abort). The error text names `what` and `--max-memory`.
pub fn zeroed(bytes: u64, limit: u64, what: &dyn Fn() -> String) -> Result<Vec<u8>, String> {
    let over = || {
        format!(
            "{} needs {bytes} bytes: more than the memory cap of {limit} bytes (--max-memory); give a larger --max-memory, or launch fewer threads per block",
            what()
        )
    };
    if bytes > limit {
        return Err(over());
    }
    let n = usize::try_from(bytes).map_err(|_| over())?;
    let mut v = Vec::new();
    v.try_reserve_exact(n).map_err(|_| {
        format!(
            "{} needs {bytes} bytes, which this machine could not allocate; give a smaller --max-memory (now {limit} bytes) to be told sooner, or launch fewer threads per block",
            what()
        )
    })?;
    v.resize(n, 0);
    Ok(v)
}

/// Reads `n` ≤ 8 bytes at `off` of a flat buffer (zero past its end).
#[inline]
pub fn read_flat(buf: &[u8], off: u64, n: u32) -> u64 {
    let mut v = 0u64;
    for k in 0..n as usize {
        if let Some(b) = buf.get(off as usize + k) {
            v |= (*b as u64) << (8 * k);
        }
    }
    v
}

/// Writes the low `n` ≤ 8 bytes of `v` at `off` of a flat buffer (ignored past its end).
#[inline]
pub fn write_flat(buf: &mut [u8], off: u64, n: u32, v: u64) {
    for k in 0..n as usize {
        if let Some(b) = buf.get_mut(off as usize + k) {
            *b = (v >> (8 * k)) as u8;
        }
    }
}

/// Where a global address falls: the allocation and the offset in it, or how far outside
/// the nearest allocation it is.
pub enum Placement<'a> {
    Inside,
    /// `bytes` past the end of `alloc`.
    After {
        alloc: &'a Alloc,
        bytes: u64,
    },
    /// `bytes` before the start of `alloc`.
    Before {
        alloc: &'a Alloc,
        bytes: u64,
    },
    /// Not near any allocation.
    Nowhere,
}

/// Places `addr` among `allocs` (indexed by their slot in the address layout).
pub fn place(allocs: &[Alloc], addr: u64) -> Placement<'_> {
    let slot = addr.wrapping_sub(window::ALLOC_BASE) / window::ALLOC_SPACING;
    let inside = |a: &Alloc| addr >= a.base && a.size.is_none_or(|s| addr < a.base + s);
    if let Some(a) = allocs
        .iter()
        .find(|a| (a.base - window::ALLOC_BASE) / window::ALLOC_SPACING == slot)
    {
        if inside(a) {
            return Placement::Inside;
        }
        // Past the end, unless nearer the next allocation's start (a negative index
        // into that one).
        let has_next = allocs.iter().any(|b| b.base > a.base);
        if addr >= a.base && (addr - a.base <= window::ALLOC_SPACING / 2 || !has_next) {
            return Placement::After {
                alloc: a,
                bytes: addr - a.base - a.size.unwrap_or(0),
            };
        }
    }
    // Before an allocation: the slot above, within its spacing.
    if let Some(a) = allocs
        .iter()
        .filter(|a| a.base > addr && a.base - addr <= window::ALLOC_SPACING)
        .min_by_key(|a| a.base)
    {
        return Placement::Before {
            alloc: a,
            bytes: a.base - addr,
        };
    }
    Placement::Nowhere
}
