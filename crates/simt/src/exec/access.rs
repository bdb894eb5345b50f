//! Memory instructions' addresses: per-lane address formation, the space and image offset
//! each lane lands in, the accesses handed to the sink, and the checks that name a fault.

use warpscope_model::{Bounds, LaneForm, Op, Space, WarpAccess, WARP_SIZE};

use super::*;
use crate::decode::window;
use crate::error::{Error, Result};
use crate::instr::*;
use crate::memory::{self, Global, Placement};
use crate::sass::SassFate;

impl<'a> BlockCtx<'a> {
    pub(super) fn addresses(&self, warp: &Warp, a: Addr, exec: u32) -> [u64; WARP_SIZE] {
        let offset = a.offset as u64;
        match a.base {
            None => [offset; WARP_SIZE],
            Some(r) => {
                let base = r as usize * WARP_SIZE;
                let regs: &[u64; WARP_SIZE] = warp.regs[base..base + WARP_SIZE]
                    .try_into()
                    .expect("a register is WARP_SIZE lanes");
                if exec == u32::MAX {
                    // Whole warps (the common case): made in place, vectorized.
                    std::array::from_fn(|l| regs[l].wrapping_add(offset))
                } else {
                    let mut out = [0u64; WARP_SIZE];
                    for lane in lanes(exec) {
                        out[lane] = regs[lane].wrapping_add(offset);
                    }
                    out
                }
            }
        }
    }

    /// Where a lane's address goes: its space, the address the model sees, and the offset in
    /// that space's image (global: the address; local: the lane's own frame).
    pub(super) fn locate(
        &self,
        space: MemSpace,
        a: u64,
        warp: &Warp,
        lane: usize,
    ) -> (Space, u64, u64) {
        let (space, a) = match space {
            MemSpace::Global => (Space::Global, a),
            MemSpace::Shared => (Space::Shared, a),
            MemSpace::Const => (Space::Constant, a),
            MemSpace::Local => (Space::Local, a),
            MemSpace::Param | MemSpace::Generic => match a >> 60 {
                1 => (Space::Shared, a - window::SHARED),
                2 => (Space::Constant, a - window::CONST),
                3 => (Space::Local, a - window::LOCAL),
                _ => (Space::Global, a),
            },
        };
        match space {
            // Another block's shared memory (a shared::cluster address): the model sees the
            // offset in that block; the image offset keeps the rank ([`BlockCtx::load`]).
            Space::Shared => match self.target(a) {
                super::cluster::Target::Own(off) => (space, off, off),
                super::cluster::Target::Remote(_, off) => {
                    (Space::DistributedShared, off, a & 0xFFFF_FFFF)
                }
            },
            Space::Local => {
                let thread = warp.first_thread as u64 + lane as u64;
                let image = thread * self.prog.local_bytes + a;
                (space, self.local_model(a, warp, lane), image)
            }
            _ => (space, a, a),
        }
    }

    /// Whether a local access at `a` (as `space` addresses it) is reported: see
    /// [`Program::local_reported`].
    fn local_reported(&self, space: MemSpace, a: u64) -> bool {
        let Some(ranges) = &self.prog.local_reported else {
            return true;
        };
        let off = match space {
            MemSpace::Local => a,
            _ => a.wrapping_sub(window::LOCAL),
        };
        ranges.iter().any(|&(lo, hi)| lo <= off && off < hi)
    }

    /// Local memory is interleaved: 4-byte word *w* of thread *t* of the block at
    /// `4·(w·threads + t)`, blocks one after another [PG "Local Memory"]; a wider access is
    /// split into its words when delivered ([`BlockCtx::deliver`]).
    pub(super) fn local_model(&self, off: u64, warp: &Warp, lane: usize) -> u64 {
        let g = 4u64;
        let t = self.threads as u64;
        let per_block = (self.prog.local_bytes.div_ceil(g) * g * t).div_ceil(256) * 256;
        let thread = (warp.first_thread as usize + lane) as u64;
        self.block_linear * per_block + (off / g) * g * t + thread * g + off % g
    }

    /// Reads `n` ≤ 8 bytes at offset `off` of `space`'s image (see [`BlockCtx::locate`]).
    pub(super) fn load(&self, global: &Global, space: Space, off: u64, n: u32) -> u64 {
        match space {
            Space::Global if !self.prog.needs_memory => 0,
            Space::Global => global.read(off, n),
            Space::Shared => memory::read_flat(&self.shared, off, n),
            Space::DistributedShared => match self.target(off) {
                super::cluster::Target::Remote(r, o) => {
                    memory::read_flat(self.image(Some(r)), o, n)
                }
                super::cluster::Target::Own(o) => memory::read_flat(&self.shared, o, n),
            },
            Space::Constant => memory::read_flat(&self.prog.const_image, off, n),
            Space::Local => memory::read_flat(&self.local, off, n),
            Space::Texture | Space::Surface => 0,
        }
    }

    /// Writes `n` ≤ 8 bytes of `v` at offset `off` of `space`'s image, for the instruction
    /// at `pc`. Errors: the global image would pass the memory cap ([`Launch::max_memory`]).
    pub(super) fn store(
        &mut self,
        global: &mut Global,
        pc: u32,
        space: Space,
        off: u64,
        n: u32,
        v: u64,
    ) -> Result<()> {
        match space {
            Space::Global if !self.prog.needs_memory => {}
            Space::Global => global.write(off, n, v).map_err(|f| {
                let name = self
                    .allocs
                    .iter()
                    .find(|a| off >= a.base && off - a.base < window::ALLOC_SPACING)
                    .map_or("global memory".to_string(), |a| format!("'{}'", a.name));
                Error::Memory(format!(
                    "{}: a store to {name} by block ({},{},{}) needs another 4 KiB page of the global memory image, which holds {} bytes already: over the memory cap of {} bytes (--max-memory). The image keeps every byte written because loaded values reach addresses or branches; give a larger --max-memory, or a smaller grid or --alloc",
                    self.at(pc),
                    self.block[0],
                    self.block[1],
                    self.block[2],
                    f.held,
                    f.limit
                ))
            })?,
            Space::Shared => memory::write_flat(&mut self.shared, off, n, v),
            Space::DistributedShared => {
                let (r, o) = match self.target(off) {
                    super::cluster::Target::Remote(r, o) => (Some(r), o),
                    super::cluster::Target::Own(o) => (None, o),
                };
                memory::write_flat(self.image_mut(r), o, n, v)
            }
            Space::Constant => {}
            Space::Local => memory::write_flat(&mut self.local, off, n, v),
            Space::Texture | Space::Surface => {}
        }
        Ok(())
    }

    /// Checks every active lane's address and hands one access per space to the sink;
    /// returns where each lane's bytes are, for the instruction's data movement.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn emit(
        &self,
        warp: &Warp,
        pc: u32,
        site: u32,
        space: MemSpace,
        op: Op,
        width: u32,
        exec: u32,
        addrs: &[u64; WARP_SIZE],
        sink: &mut dyn FnMut(u32, &WarpAccess, WarpOrigin),
        located: Option<&mut Located>,
    ) -> Result<()> {
        let read_only = self.prog.sites[site as usize].read_only;
        let access = |space: Space| WarpAccess {
            space,
            op,
            width,
            mask: 0,
            addrs: [0; WARP_SIZE],
            read_only: read_only && space == Space::Global,
            lanes: LaneForm::Unknown,
        };
        // A named global, shared or constant space: one access, whose model addresses are
        // also the image offsets.
        let mut single = match space {
            MemSpace::Global => Some(Space::Global),
            MemSpace::Shared if !self.any_cluster_rank(addrs, exec) => Some(Space::Shared),
            MemSpace::Const => Some(Space::Constant),
            _ => None,
        };
        // A generic access whose lanes all fall in one global, shared or constant window
        // (the common case) takes the same path, without locating lane by lane.
        let window_addrs: [u64; WARP_SIZE];
        let mut addrs = addrs;
        if space == MemSpace::Generic && exec != 0 {
            let (mut any, mut all) = (0u64, u64::MAX);
            for lane in lanes(exec) {
                any |= addrs[lane] >> 60;
                all &= addrs[lane] >> 60;
            }
            if any == all && !(any == 1 && self.any_cluster_rank(addrs, exec)) {
                single = match any {
                    0 => Some(Space::Global),
                    1 | 2 => {
                        // Every executing lane is in the window (at or above `base`).
                        let base = any << 60;
                        window_addrs = addrs.map(|x| x.wrapping_sub(base));
                        addrs = &window_addrs;
                        Some(if any == 1 {
                            Space::Shared
                        } else {
                            Space::Constant
                        })
                    }
                    _ => None,
                };
            }
        }
        if let Some(s) = single {
            let mut a = access(s);
            a.mask = exec;
            if s == Space::Shared {
                for lane in lanes(exec) {
                    a.addrs[lane] = addrs[lane] & 0xFFFF_FFFF;
                }
            } else if exec == u32::MAX {
                a.addrs = *addrs;
            } else {
                for lane in lanes(exec) {
                    a.addrs[lane] = addrs[lane];
                }
            }
            // The lanes' form, found once per access where its addresses are made.
            a.settle_lanes();
            if let Some(at) = located {
                at.space = [s; WARP_SIZE];
                at.image = a.addrs;
            }
            return self.deliver(warp, pc, site, &a, addrs, sink);
        }
        let mut acc: [Option<WarpAccess>; 7] = [None; 7];
        let mut at = located;
        for lane in lanes(exec) {
            let (s, m, image) = self.locate(space, addrs[lane], warp, lane);
            if s == Space::DistributedShared {
                self.check_rank(warp, pc, image, addrs[lane], lane)?;
            }
            if let Some(at) = at.as_deref_mut() {
                at.space[lane] = s;
                at.image[lane] = image;
            }
            if s == Space::Local && !self.local_reported(space, addrs[lane]) {
                continue;
            }
            let a = acc[s as usize].get_or_insert_with(|| access(s));
            a.mask |= 1 << lane;
            a.addrs[lane] = m;
        }
        for a in acc.iter_mut().flatten() {
            // The lanes' form, found once per access where its addresses are made.
            a.settle_lanes();
            self.deliver(warp, pc, site, a, addrs, sink)?;
        }
        Ok(())
    }

    /// Whether some executing lane's shared address names a cluster rank (bits 24–31 of its
    /// shared-window offset; see `exec/cluster.rs`).
    fn any_cluster_rank(&self, addrs: &[u64; WARP_SIZE], exec: u32) -> bool {
        let mut bits = 0u64;
        for lane in lanes(exec) {
            bits |= addrs[lane];
        }
        bits & (0xFF << super::cluster::RANK_SHIFT) != 0
    }

    /// Checks that a shared::cluster address (its 32-bit window offset `image`) names a
    /// block of the cluster.
    fn check_rank(&self, warp: &Warp, pc: u32, image: u64, raw: u64, lane: usize) -> Result<()> {
        let n = self.cluster_blocks();
        if let super::cluster::Target::Remote(r, _) = self.target(image) {
            if r >= n {
                return Err(Error::Fault {
                    at: self.at(pc),
                    msg: format!(
                        "shared::cluster access at {raw:#x} names the block of cluster rank {r}, but the cluster has {n} block(s): the address did not come from mapa / map_shared_rank of this launch"
                    ),
                    thread: self.thread(warp, lane),
                    block: self.block,
                });
            }
        }
        Ok(())
    }

    /// Checks one access of an instruction and hands it to the sink.
    pub(super) fn deliver(
        &self,
        warp: &Warp,
        pc: u32,
        site: u32,
        a: &WarpAccess,
        addrs: &[u64; WARP_SIZE],
        sink: &mut dyn FnMut(u32, &WarpAccess, WarpOrigin),
    ) -> Result<()> {
        // Checked once per access: alignment of all lanes at once, and the lowest and
        // highest byte against the allocations; lane by lane only to name a fault.
        if !self.access_ok(a) {
            for lane in lanes(a.mask) {
                self.check(
                    warp,
                    pc,
                    a.space,
                    a.addrs[lane],
                    addrs[lane],
                    a.width,
                    lane,
                    a.op,
                )?;
            }
        }
        self.check_access(warp.index, site, a);
        let origin = WarpOrigin {
            block: self.block,
            warp: warp.index,
        };
        // What ptxas made of the instruction (the lanes were checked at the PTX width).
        let widened;
        let a = match self.prog.sites[site as usize].sass {
            SassFate::AsWritten => a,
            SassFate::Merged | SassFate::Reused => return Ok(()),
            SassFate::WidenedAcrossTrips {
                width,
                delta,
                counter,
                first,
                period,
                bits,
                ..
            } => {
                // Only the first trip of each group of the unrolled loop has the access.
                let lane = (a.mask.trailing_zeros() as usize).min(WARP_SIZE - 1);
                let v = warp.regs[counter as usize * WARP_SIZE + lane];
                if !SassFate::first_trip(v, first, period, bits) {
                    return Ok(());
                }
                let mut w = *a;
                w.width = width;
                w.shift_active(delta);
                widened = w;
                &widened
            }
            SassFate::Widened { width, delta, .. } => {
                let mut w = *a;
                w.width = width;
                w.shift_active(delta);
                widened = w;
                &widened
            }
        };
        if a.space == Space::Local && a.width > 4 {
            // Local memory interleaves 4-byte words across the block's threads, so a wide
            // access is width/4 requests of one word per lane, word j at +4·j·threads
            // (measured on H100: STL.64/STL.128 are 2/4 requests of 4 sectors when every lane
            // uses the same relative address; tests/data/h100/local/).
            for j in 0..a.width / 4 {
                let mut part = *a;
                part.width = 4;
                part.read_only = j > 0;
                part.shift_active((4 * j as u64 * self.threads as u64) as i64);
                sink(site, &part, origin);
            }
        } else if a.width > 16 {
            // 256-bit accesses (sm_100 `.v8`): two 16-byte halves.
            for h in 0..a.width / 16 {
                let mut part = *a;
                part.width = 16;
                part.shift_active(16 * h as i64);
                sink(site, &part, origin);
            }
        } else {
            sink(site, a, origin);
        }
        Ok(())
    }

    /// The spills and refills tied to the instruction at `pc`
    /// ([`crate::Program::apply_sass`]): each a local access of its width at its frame
    /// offset for every lane of `exec`.
    pub(super) fn spill(
        &self,
        warp: &Warp,
        pc: u32,
        exec: u32,
        sink: &mut dyn FnMut(u32, &WarpAccess, WarpOrigin),
    ) -> Result<()> {
        let list = &self.prog.spills[self.prog.spill_at[pc as usize] as usize];
        for s in list {
            let addrs = [s.offset; WARP_SIZE];
            let op = if s.store { Op::Store } else { Op::Load };
            self.emit(
                warp,
                pc,
                s.site,
                MemSpace::Local,
                op,
                s.width,
                exec,
                &addrs,
                sink,
                None,
            )?;
        }
        Ok(())
    }

    /// Whether every lane of `a` is aligned and inside memory (a quick test; `false` means
    /// look lane by lane): [`access_fits`] in this block's memory.
    pub(super) fn access_ok(&self, a: &WarpAccess) -> bool {
        access_fits(
            a,
            self.allocs,
            self.shared.len() as u64,
            self.prog.const_image.len() as u64,
        )
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn check(
        &self,
        warp: &Warp,
        pc: u32,
        s: Space,
        m: u64,
        raw: u64,
        width: u32,
        lane: usize,
        op: Op,
    ) -> Result<()> {
        let what = match op {
            Op::Load => "load",
            Op::Store => "store",
            Op::Atomic => "atomic",
            Op::Prefetch => "prefetch",
        };
        let fault = |msg: String| Error::Fault {
            at: self.at(pc),
            msg,
            thread: self.thread(warp, lane),
            block: self.block,
        };
        let align = width.min(16) as u64;
        if s != Space::Local && !m.is_multiple_of(align) {
            return Err(fault(format!(
                "misaligned {width}-byte {what} by lane {lane} at {raw:#x}: a {width}-byte access must be {align}-byte aligned. On the GPU this stops the kernel with cudaErrorMisalignedAddress (compute capability 1.x silently reads wrong words)"
            )));
        }
        match s {
            Space::Global => {
                let size = |a: &memory::Alloc| match a.size {
                    Some(s) => format!("{s} bytes"),
                    None => "size unknown".into(),
                };
                let outside = |a: &memory::Alloc, relation: String| {
                    fault(format!(
                        "global {what} of {width} bytes at address {raw:#x} is outside allocation '{}' ({}), {relation}. Check the index, or the size given with --alloc",
                        a.name,
                        size(a)
                    ))
                };
                let last = m.saturating_add(width as u64 - 1);
                match (
                    memory::place(self.allocs, m),
                    memory::place(self.allocs, last),
                ) {
                    (Placement::Inside, Placement::Inside) => Ok(()),
                    (Placement::Inside, _) => {
                        let a = self
                            .allocs
                            .iter()
                            .find(|a| m >= a.base && a.size.is_none_or(|s| m < a.base + s));
                        match a {
                            Some(a) => {
                                let end = a.base + a.size.unwrap_or(0);
                                Err(outside(
                                    a,
                                    format!(
                                        "its last {} bytes past its end",
                                        m + width as u64 - end
                                    ),
                                ))
                            }
                            None => Ok(()),
                        }
                    }
                    (Placement::After { alloc, bytes }, _) => {
                        Err(outside(alloc, format!("{bytes} bytes after its end")))
                    }
                    (Placement::Before { alloc, bytes }, _) => {
                        // Far from both: an index of gigabytes may belong to the one below.
                        let below = self
                            .allocs
                            .iter()
                            .filter(|a| a.base < m)
                            .max_by_key(|a| a.base)
                            .filter(|_| bytes > 1 << 30);
                        let also = match below {
                            Some(b) => format!(
                                " (or {} bytes after the end of '{}')",
                                m - b.base - b.size.unwrap_or(0),
                                b.name
                            ),
                            None => String::new(),
                        };
                        Err(outside(
                            alloc,
                            format!("{bytes} bytes before its start{also}"),
                        ))
                    }
                    (Placement::Nowhere, _) => Err(fault(format!(
                        "global {what} of {width} bytes at {raw:#x}, outside every allocation ({})",
                        if raw < 4096 {
                            "a null pointer"
                        } else {
                            "an uninitialized or stale pointer?"
                        }
                    ))),
                }
            }
            Space::Shared | Space::DistributedShared => {
                if m + width as u64 > self.shared.len() as u64 {
                    Err(fault(format!(
                        "{}shared {what} at byte {m}, past the block's {} bytes of shared memory (set the dynamic size with --dynamic-smem)",
                        if s == Space::DistributedShared { "distributed " } else { "" },
                        self.shared.len()
                    )))
                } else {
                    Ok(())
                }
            }
            Space::Constant => {
                if m + width as u64 > self.prog.const_image.len() as u64 {
                    Err(fault(format!(
                        "constant {what} at byte {m}, past the {} bytes of constant variables",
                        self.prog.const_image.len()
                    )))
                } else {
                    Ok(())
                }
            }
            Space::Local | Space::Texture | Space::Surface => Ok(()),
        }
    }
}

/// Whether every active lane of `a` is aligned to its width (at most 16 bytes) and its bytes
/// lie inside memory: for global memory one allocation of `allocs` holds the lowest and the
/// highest byte, shared (and distributed shared) and constant accesses end within
/// `shared_bytes` and `constant_bytes`; local, texture and surface accesses always pass.
/// Decided from the lowest and highest active address and the lanes' alignment
/// ([`WarpAccess::bounds`]: from the end lanes and the stride when the lanes are affine),
/// not lane by lane; `false` means look lane by lane to name the fault.
pub(super) fn access_fits(
    a: &WarpAccess,
    allocs: &[memory::Alloc],
    shared_bytes: u64,
    constant_bytes: u64,
) -> bool {
    if a.space == Space::Local {
        return true;
    }
    let align = a.width.min(16) as u64;
    // No active lane: as the lane loop leaves it (lowest u64::MAX, highest 0).
    let Bounds { lo, hi, aligned } = a.bounds(align).unwrap_or(Bounds {
        lo: u64::MAX,
        hi: 0,
        aligned: true,
    });
    if !aligned {
        return false;
    }
    let end = hi.saturating_add(a.width as u64);
    match a.space {
        Space::Global => {
            // Both ends in one slot, inside the allocation of that slot: what
            // [`memory::place`] calls `Inside`, with one look-up.
            let slot = |x: u64| x.wrapping_sub(window::ALLOC_BASE) / window::ALLOC_SPACING;
            let last = end - 1;
            let inside =
                |a: &memory::Alloc, x: u64| x >= a.base && a.size.is_none_or(|s| x < a.base + s);
            slot(lo) == slot(last)
                && allocs
                    .iter()
                    .find(|a| slot(a.base) == slot(lo))
                    .is_some_and(|a| inside(a, lo) && inside(a, last))
        }
        Space::Shared | Space::DistributedShared => end <= shared_bytes,
        Space::Constant => end <= constant_bytes,
        Space::Local | Space::Texture | Space::Surface => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::Alloc;
    use proptest::prelude::*;

    /// `access_fits` as it was before lane forms: lowest, highest and alignment found by
    /// going over every active lane.
    fn fits_lane_by_lane(a: &WarpAccess, allocs: &[Alloc], shared: u64, constant: u64) -> bool {
        if a.space == Space::Local {
            return true;
        }
        let align = a.width.min(16) as u64;
        let (mut lo, mut hi, mut bits) = (u64::MAX, 0u64, 0u64);
        for (_, x) in a.active() {
            lo = lo.min(x);
            hi = hi.max(x);
            bits |= x;
        }
        if bits % align != 0 {
            return false;
        }
        let end = hi.saturating_add(a.width as u64);
        match a.space {
            Space::Global => {
                let slot = |x: u64| x.wrapping_sub(window::ALLOC_BASE) / window::ALLOC_SPACING;
                slot(lo) == slot(end - 1)
                    && matches!(memory::place(allocs, lo), Placement::Inside)
                    && matches!(memory::place(allocs, end - 1), Placement::Inside)
            }
            Space::Shared | Space::DistributedShared => end <= shared,
            Space::Constant => end <= constant,
            Space::Local | Space::Texture | Space::Surface => true,
        }
    }

    /// Two allocations (the second of unknown size, or not), a shared and a constant size.
    fn memory() -> impl Strategy<Value = (Vec<Alloc>, u64, u64)> {
        (
            1u64..1 << 20,
            prop::option::of(1u64..1 << 20),
            0u64..70_000,
            0u64..70_000,
        )
            .prop_map(|(first, second, shared, constant)| {
                let allocs = vec![
                    Alloc {
                        name: "a".into(),
                        base: window::ALLOC_BASE,
                        size: Some(first),
                    },
                    Alloc {
                        name: "b".into(),
                        base: window::ALLOC_BASE + window::ALLOC_SPACING,
                        size: second,
                    },
                ];
                (allocs, shared, constant)
            })
    }

    /// An access near an allocation's start or end, near the end of shared or constant
    /// memory, or anywhere; lanes affine (strides negative, 0, small, huge), maybe with one
    /// lane moved; random masks; widths 1 to 32; misaligned starts.
    fn access() -> impl Strategy<Value = WarpAccess> {
        let space = prop::sample::select(vec![
            Space::Global,
            Space::Global,
            Space::Shared,
            Space::DistributedShared,
            Space::Constant,
            Space::Local,
        ]);
        let first = prop_oneof![
            (0u64..1 << 21).prop_map(|x| window::ALLOC_BASE + x - (1 << 10)),
            (0u64..1 << 21).prop_map(|x| window::ALLOC_BASE + window::ALLOC_SPACING + x - 1024),
            0u64..80_000,
            any::<u64>(),
        ];
        let stride = prop_oneof![
            Just(0i64),
            -40i64..40,
            prop::sample::select(vec![128i64, -128, 4096, 16384, -16384, 1 << 36, i64::MIN]),
            any::<i64>(),
        ];
        let mask = prop_oneof![
            Just(u32::MAX),
            any::<u32>(),
            (0u32..32).prop_map(|l| 1 << l),
            (0u32..32).prop_map(|n| u32::MAX >> n),
            Just(0u32),
        ];
        let width = prop::sample::select(vec![1u32, 2, 4, 8, 16, 32]);
        let moved = prop::option::of((0usize..WARP_SIZE, -64i64..64));
        (space, first, stride, mask, width, moved, any::<bool>()).prop_map(
            |(space, first, stride, mask, width, moved, settled)| {
                let mut addrs: [u64; WARP_SIZE] = std::array::from_fn(|l| {
                    first.wrapping_add((l as u64).wrapping_mul(stride as u64))
                });
                if let Some((l, d)) = moved {
                    addrs[l] = addrs[l].wrapping_add_signed(d);
                }
                let mut a = WarpAccess {
                    space,
                    op: Op::Load,
                    width,
                    mask,
                    addrs,
                    read_only: false,
                    lanes: LaneForm::Unknown,
                };
                if settled {
                    a.settle_lanes();
                }
                a
            },
        )
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(20_000))]

        /// The bounds check from the end lanes and the stride answers as the lane-by-lane
        /// one, whether or not the lanes' form was worked out beforehand.
        #[test]
        fn access_fits_as_lane_by_lane((allocs, shared, constant) in memory(), a in access()) {
            prop_assert_eq!(
                access_fits(&a, &allocs, shared, constant),
                fits_lane_by_lane(&a, &allocs, shared, constant),
                "{:?}", a.lane_form()
            );
        }
    }

    /// A stride of 16 KiB from an allocation's last element down: affine, in bounds; one
    /// more lane is past the start; a 2-byte shift misaligns a 4-byte access.
    #[test]
    fn descending_rows_are_checked_at_their_ends() {
        let allocs = [Alloc {
            name: "a".into(),
            base: window::ALLOC_BASE,
            size: Some(32 * 16384),
        }];
        let top = window::ALLOC_BASE + 32 * 16384 - 4;
        let mut a = WarpAccess {
            space: Space::Global,
            op: Op::Store,
            width: 4,
            mask: u32::MAX,
            addrs: std::array::from_fn(|l| top - 16384 * l as u64),
            read_only: false,
            lanes: LaneForm::Unknown,
        };
        a.settle_lanes();
        assert_eq!(a.lanes, LaneForm::Affine { stride: -16384 });
        assert!(access_fits(&a, &allocs, 0, 0));
        let mut below = a;
        below.shift_active(-16384);
        assert!(!access_fits(&below, &allocs, 0, 0));
        let mut odd = a;
        odd.shift_active(-2);
        assert!(!access_fits(&odd, &allocs, 0, 0));
        assert!(fits_lane_by_lane(&a, &allocs, 0, 0));
    }
}
