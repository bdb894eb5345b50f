//! The SIMT executor: every warp of every block, in lockstep under an active mask, with a
//! reconvergence stack; blocks' warps run in turn up to each barrier.

use warpscope_model::{Op, Space, WarpAccess, WARP_SIZE};

use crate::alu;
use crate::decode::{window, Program, EXTERN_SHARED};
use crate::error::{At, Error, Result};
use crate::instr::*;
use crate::memory::{self, Alloc, Global, Placement};
use crate::special::idx;

/// Which warp issued an access: its block's coordinates and its index within the block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WarpOrigin {
    pub block: [u32; 3],
    pub warp: u32,
}

/// A launch of a decoded kernel.
#[derive(Clone, Debug)]
pub struct Launch {
    /// Blocks per grid and threads per block (x, y, z).
    pub grid: [u32; 3],
    pub block: [u32; 3],
    /// The bytes of each kernel parameter, in order (pointer parameters hold an
    /// allocation's base address).
    pub args: Vec<Vec<u8>>,
    /// Global allocations of the pointer parameters, and their initial bytes.
    pub allocs: Vec<(Alloc, Vec<u8>)>,
    /// Bytes of dynamic (`extern .shared`) shared memory per block.
    pub dynamic_shared_bytes: u64,
    /// Warp instructions one block may execute before the run is called runaway.
    pub max_steps: u64,
}

/// Default for [`Launch::max_steps`].
pub const DEFAULT_MAX_STEPS: u64 = 200_000_000;

#[derive(Clone, Copy, Debug)]
struct Entry {
    pc: u32,
    rpc: u32,
    mask: u32,
}

struct Frame {
    /// Stack depth below the callee's first entry.
    base: usize,
    /// The `call` instruction (for its return moves).
    call: u32,
    returned: u32,
}

enum Yield {
    Barrier,
    Done,
}

struct Warp {
    /// Registers: `r·32 + lane`.
    regs: Vec<u64>,
    uni: Vec<bool>,
    stack: Vec<Entry>,
    frames: Vec<Frame>,
    exited: u32,
    /// Lanes that exist (a partial last warp has fewer).
    live: u32,
    /// Linear index of lane 0's thread in the block.
    first_thread: u32,
    index: u32,
}

/// Where the executing lanes of one memory instruction land: space and image offset.
struct Located {
    space: [Space; WARP_SIZE],
    image: [u64; WARP_SIZE],
}

impl Default for Located {
    fn default() -> Self {
        Located {
            space: [Space::Global; WARP_SIZE],
            image: [0; WARP_SIZE],
        }
    }
}

struct BlockCtx<'a> {
    prog: &'a Program,
    launch: &'a Launch,
    allocs: &'a [Alloc],
    block: [u32; 3],
    block_linear: u64,
    threads: u32,
    shared: Vec<u8>,
    local: Vec<u8>,
    steps: u64,
}

impl Program {
    /// Runs the launch: every block in order, calling `sink(site, access, origin)` for each
    /// warp-level memory access (site indices into [`Program::sites`]).
    ///
    /// Errors: a lane reading or writing outside every allocation or misaligned (naming the
    /// thread, block, PTX line and source line), a block that runs past
    /// [`Launch::max_steps`], a launch whose arguments do not match the parameters.
    pub fn run(
        &self,
        launch: &Launch,
        sink: &mut dyn FnMut(u32, &WarpAccess, WarpOrigin),
    ) -> Result<()> {
        if launch.args.len() != self.params.len() {
            return Err(Error::Launch(format!(
                "{} takes {} parameters; the launch gives {}",
                self.name,
                self.params.len(),
                launch.args.len()
            )));
        }
        let threads = launch.block.iter().map(|&x| x as u64).product::<u64>();
        if threads == 0 || threads > 1024 {
            return Err(Error::Launch(format!(
                "a block of {threads} threads: CUDA allows 1 to 1024"
            )));
        }
        let threads = threads as u32;
        let mut global = Global::default();
        let mut allocs: Vec<Alloc> = Vec::new();
        for (a, init) in &launch.allocs {
            if self.needs_memory {
                global.fill(a.base, init);
            }
            allocs.push(a.clone());
        }
        for g in &self.globals {
            if self.needs_memory {
                global.fill(g.base, &g.init);
            }
            allocs.push(Alloc {
                name: g.name.clone(),
                base: g.base,
                size: Some(g.bytes),
            });
        }
        let blocks = launch.grid.iter().map(|&x| x as u64).product::<u64>();
        let run = |first: u64,
                   end: u64,
                   global: &mut Global,
                   sink: &mut dyn FnMut(u32, &WarpAccess, WarpOrigin)| {
            self.run_blocks(launch, &allocs, threads, first..end, global, sink)
        };
        // Blocks see each other only through global memory; without a global image (no
        // loaded value matters) they are independent and run on every core, in chunks whose
        // accesses reach the sink in block order while the next chunks run.
        let workers = rayon::current_num_threads() as u64;
        if self.needs_memory || workers < 2 || blocks < 2 * workers {
            return run(0, blocks, &mut global, sink);
        }
        type Accesses = Vec<(u32, WarpAccess, WarpOrigin)>;
        // One round: a chunk of `chunk` blocks per worker from block `first`.
        let round = |first: u64, chunk: u64, per_block: u64| -> Vec<Result<Accesses>> {
            use rayon::prelude::*;
            (0..workers)
                .into_par_iter()
                .map(|w| {
                    let start = (first + w * chunk).min(blocks);
                    let end = (start + chunk).min(blocks);
                    // Sized from the last round: no regrowth copies.
                    let mut out = Vec::with_capacity(((end - start) * per_block) as usize + 64);
                    run(start, end, &mut Global::default(), &mut |s, a, o| {
                        out.push((s, *a, o))
                    })?;
                    Ok(out)
                })
                .collect()
        };
        let mut chunk = 1;
        let mut first = 0;
        let mut per_block = 0;
        let mut pending = Some(round(first, chunk, per_block));
        while let Some(done) = pending.take() {
            // Chunks sized to hold about CHUNK_ACCESSES accesses, from what the last held.
            let held: usize = done.iter().map(|r| r.as_ref().map_or(0, |v| v.len())).sum();
            first += workers * chunk;
            per_block = (held as u64).div_ceil(workers * chunk).max(1);
            chunk = (CHUNK_ACCESSES / per_block).clamp(1, 256);
            // The next round runs while this one's accesses go to the sink.
            let next = std::thread::scope(|sc| {
                let h = (first < blocks).then(|| sc.spawn(|| round(first, chunk, per_block)));
                for part in done {
                    for (site, a, o) in &part? {
                        sink(*site, a, *o);
                    }
                }
                Ok::<_, Error>(h.map(|h| h.join()))
            })?;
            pending = match next {
                Some(Ok(v)) => Some(v),
                Some(Err(_)) => {
                    return Err(Error::Launch(
                        "an executor thread stopped unexpectedly".into(),
                    ))
                }
                None => None,
            };
        }
        Ok(())
    }

    /// Runs the blocks of linear indices `range` in order (x fastest).
    fn run_blocks(
        &self,
        launch: &Launch,
        allocs: &[Alloc],
        threads: u32,
        range: std::ops::Range<u64>,
        global: &mut Global,
        sink: &mut dyn FnMut(u32, &WarpAccess, WarpOrigin),
    ) -> Result<()> {
        let shared_bytes = self.dynamic_shared_base() + launch.dynamic_shared_bytes;
        let [gx, gy, _] = launch.grid.map(|x| x as u64);
        for linear in range {
            let block = [
                (linear % gx) as u32,
                ((linear / gx) % gy) as u32,
                (linear / (gx * gy)) as u32,
            ];
            let mut ctx = BlockCtx {
                prog: self,
                launch,
                allocs,
                block,
                block_linear: linear,
                threads,
                shared: vec![0u8; shared_bytes as usize],
                local: vec![0u8; (self.local_bytes * threads as u64) as usize],
                steps: 0,
            };
            ctx.run_block(global, sink)?;
        }
        Ok(())
    }
}

/// Warp accesses one worker's chunk of blocks holds, about (~280 bytes each).
const CHUNK_ACCESSES: u64 = 16_384;

impl<'a> BlockCtx<'a> {
    fn run_block(
        &mut self,
        global: &mut Global,
        sink: &mut dyn FnMut(u32, &WarpAccess, WarpOrigin),
    ) -> Result<()> {
        let nwarps = self.threads.div_ceil(WARP_SIZE as u32);
        let mut warps: Vec<Warp> = (0..nwarps).map(|w| self.new_warp(w)).collect();
        let mut done = vec![false; nwarps as usize];
        loop {
            let mut any = false;
            for (w, warp) in warps.iter_mut().enumerate() {
                if done[w] {
                    continue;
                }
                any = true;
                match self.run_warp(warp, global, sink)? {
                    Yield::Done => done[w] = true,
                    Yield::Barrier => {}
                }
            }
            if !any {
                return Ok(());
            }
        }
    }

    fn new_warp(&self, w: u32) -> Warp {
        let n = self.prog.nregs as usize;
        let mut warp = Warp {
            regs: vec![0u64; n * WARP_SIZE],
            uni: vec![true; n],
            stack: Vec::with_capacity(16),
            frames: Vec::new(),
            exited: 0,
            live: 0,
            first_thread: w * WARP_SIZE as u32,
            index: w,
        };
        let [bx, by, _] = self.launch.block;
        let lanes = (self.threads - warp.first_thread).min(WARP_SIZE as u32);
        warp.live = if lanes == 32 {
            u32::MAX
        } else {
            (1u32 << lanes) - 1
        };
        for lane in 0..WARP_SIZE {
            let t = warp.first_thread + lane as u32;
            let set =
                |warp: &mut Warp, r: Reg, v: u64| warp.regs[r as usize * WARP_SIZE + lane] = v;
            set(&mut warp, idx::TID, (t % bx) as u64);
            set(&mut warp, idx::TID + 1, ((t / bx) % by) as u64);
            set(&mut warp, idx::TID + 2, (t / (bx * by)) as u64);
            set(&mut warp, idx::LANEID, lane as u64);
            set(&mut warp, idx::LANEMASK_EQ, 1u64 << lane);
            set(
                &mut warp,
                idx::LANEMASK_EQ + 1,
                (((1u64 << lane) << 1) - 1) & 0xFFFF_FFFF,
            );
            set(&mut warp, idx::LANEMASK_EQ + 2, (1u64 << lane) - 1);
            set(
                &mut warp,
                idx::LANEMASK_EQ + 3,
                (!((1u64 << lane) - 1)) & 0xFFFF_FFFF,
            );
            set(
                &mut warp,
                idx::LANEMASK_EQ + 4,
                (!(((1u64 << lane) << 1) - 1)) & 0xFFFF_FFFF,
            );
        }
        for r in [idx::TID, idx::TID + 1, idx::TID + 2, idx::LANEID] {
            warp.uni[r as usize] = false;
        }
        for k in 0..5 {
            warp.uni[(idx::LANEMASK_EQ + k) as usize] = false;
        }
        let uniform: [(Reg, u64); 14] = [
            (idx::NTID, self.launch.block[0] as u64),
            (idx::NTID + 1, self.launch.block[1] as u64),
            (idx::NTID + 2, self.launch.block[2] as u64),
            (idx::CTAID, self.block[0] as u64),
            (idx::CTAID + 1, self.block[1] as u64),
            (idx::CTAID + 2, self.block[2] as u64),
            (idx::NCTAID, self.launch.grid[0] as u64),
            (idx::NCTAID + 1, self.launch.grid[1] as u64),
            (idx::NCTAID + 2, self.launch.grid[2] as u64),
            (idx::WARPID, w as u64),
            (idx::NWARPID, 64),
            (idx::NSMID, 132),
            (idx::DYN_SMEM, self.launch.dynamic_shared_bytes),
            (idx::TOTAL_SMEM, self.shared.len() as u64),
        ];
        for (r, v) in uniform {
            splat(&mut warp, r, v);
        }
        splat(&mut warp, idx::SMID, self.block_linear % 132);
        splat(&mut warp, idx::NCLUSTERID_X, self.launch.grid[0] as u64);
        splat(&mut warp, idx::CLUSTER_NCTARANK, 1);
        for (p, bytes) in self.prog.params.iter().zip(&self.launch.args) {
            for &(off, n, r) in &p.regs {
                splat(&mut warp, r, memory::read_flat(bytes, off, n as u32));
            }
        }
        warp.stack.push(Entry {
            pc: 0,
            rpc: u32::MAX,
            mask: warp.live,
        });
        warp
    }

    fn at(&self, pc: u32) -> At {
        let i = &self.prog.insts[pc as usize];
        At {
            ptx_line: i.ptx_line,
            ptx_col: i.ptx_col,
            source: i.loc.map(|(f, l, c)| {
                let file = self
                    .prog
                    .files
                    .iter()
                    .find(|(k, _)| *k == f)
                    .map(|(_, p)| p.as_str())
                    .unwrap_or("?");
                format!("{file}:{l}:{c}")
            }),
        }
    }

    fn thread(&self, warp: &Warp, lane: usize) -> [u32; 3] {
        let t = warp.first_thread + lane as u32;
        let [bx, by, _] = self.launch.block;
        [t % bx, (t / bx) % by, t / (bx * by)]
    }

    /// Pops the top entry; completes a call whose frame empties.
    fn pop(&self, warp: &mut Warp) {
        warp.stack.pop();
        while let Some(f) = warp.frames.last() {
            if warp.stack.len() > f.base {
                break;
            }
            let f = warp.frames.pop().unwrap_or(Frame {
                base: 0,
                call: 0,
                returned: 0,
            });
            if let Instr::Call { rets, .. } = &self.prog.insts[f.call as usize].instr {
                for &(d, s) in rets {
                    for lane in lanes(f.returned) {
                        let v = warp.regs[s as usize * WARP_SIZE + lane];
                        warp.regs[d as usize * WARP_SIZE + lane] = v;
                    }
                    warp.uni[d as usize] = false;
                }
            }
        }
    }

    fn run_warp(
        &mut self,
        warp: &mut Warp,
        global: &mut Global,
        sink: &mut dyn FnMut(u32, &WarpAccess, WarpOrigin),
    ) -> Result<Yield> {
        let insts = &self.prog.insts;
        let n = insts.len() as u32;
        loop {
            let Some(top) = warp.stack.last().copied() else {
                return Ok(Yield::Done);
            };
            let mask = top.mask & !warp.exited;
            if top.pc == top.rpc || top.pc >= n || mask == 0 {
                self.pop(warp);
                continue;
            }
            self.steps += 1;
            if self.steps > self.launch.max_steps {
                return Err(Error::Runaway {
                    at: self.at(top.pc),
                    steps: self.steps - 1,
                    block: self.block,
                });
            }
            let pc = top.pc;
            let inst = &insts[pc as usize];
            let exec = match inst.guard {
                None => mask,
                Some((p, neg)) => {
                    let base = p as usize * WARP_SIZE;
                    let mut m = 0u32;
                    for lane in lanes(mask) {
                        if (warp.regs[base + lane] != 0) != neg {
                            m |= 1 << lane;
                        }
                    }
                    m
                }
            };
            let full = exec == (warp.live & !warp.exited);
            let next = pc + 1;
            let set_pc = |warp: &mut Warp, pc: u32| {
                if let Some(t) = warp.stack.last_mut() {
                    t.pc = pc;
                }
            };
            match &inst.instr {
                Instr::Bra { target } => {
                    if inst.guard.is_none() || exec == mask {
                        set_pc(warp, *target);
                    } else if exec == 0 {
                        set_pc(warp, next);
                    } else {
                        let rpc = self.prog.reconv[pc as usize];
                        set_pc(warp, rpc);
                        warp.stack.push(Entry {
                            pc: next,
                            rpc,
                            mask: mask & !exec,
                        });
                        warp.stack.push(Entry {
                            pc: *target,
                            rpc,
                            mask: exec,
                        });
                    }
                    continue;
                }
                Instr::Exit => {
                    warp.exited |= exec;
                    set_pc(warp, next);
                    continue;
                }
                Instr::Ret => {
                    let base = warp.frames.last().map(|f| f.base).unwrap_or(0);
                    if let Some(f) = warp.frames.last_mut() {
                        f.returned |= exec;
                    } else {
                        warp.exited |= exec;
                    }
                    for e in warp.stack.iter_mut().skip(base) {
                        e.mask &= !exec;
                    }
                    set_pc(warp, next);
                    continue;
                }
                Instr::Bar => {
                    set_pc(warp, next);
                    if exec != 0 {
                        return Ok(Yield::Barrier);
                    }
                    continue;
                }
                Instr::Call { target, args, .. } => {
                    set_pc(warp, next);
                    if exec == 0 {
                        continue;
                    }
                    for &(d, s) in args {
                        write(warp, d, s, exec, full, |v| v);
                    }
                    warp.frames.push(Frame {
                        base: warp.stack.len(),
                        call: pc,
                        returned: 0,
                    });
                    warp.stack.push(Entry {
                        pc: *target,
                        rpc: u32::MAX,
                        mask: exec,
                    });
                    continue;
                }
                _ => {}
            }
            set_pc(warp, next);
            if exec == 0 {
                continue;
            }
            self.step(warp, pc, exec, full, global, sink)?;
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn step(
        &mut self,
        warp: &mut Warp,
        pc: u32,
        exec: u32,
        full: bool,
        global: &mut Global,
        sink: &mut dyn FnMut(u32, &WarpAccess, WarpOrigin),
    ) -> Result<()> {
        let inst = &self.prog.insts[pc as usize];
        let values = self.prog.needs_memory;
        if !values && self.prog.dead[pc as usize] {
            return Ok(());
        }
        match &inst.instr {
            // Without a memory image, memory instructions only report their accesses: no
            // value they move can matter.
            Instr::Ld {
                space,
                ty,
                ds,
                addr,
                site,
            } if !values => {
                let addrs = self.addresses(warp, *addr, exec);
                let width = ty.bytes as u32 * ds.len() as u32;
                self.emit(
                    warp,
                    pc,
                    *site,
                    *space,
                    Op::Load,
                    width,
                    exec,
                    &addrs,
                    sink,
                    None,
                )?;
            }
            Instr::St {
                space,
                ty,
                srcs,
                addr,
                site,
            } if !values => {
                let addrs = self.addresses(warp, *addr, exec);
                let width = ty.bytes as u32 * srcs.len() as u32;
                self.emit(
                    warp,
                    pc,
                    *site,
                    *space,
                    Op::Store,
                    width,
                    exec,
                    &addrs,
                    sink,
                    None,
                )?;
            }
            Instr::Alu {
                op,
                ty,
                dty,
                d,
                a,
                b,
                c,
                e,
                sat,
            } => {
                let (op, ty, dty, sat) = (*op, *ty, *dty, *sat);
                let (a, b, c, e) = (*a, *b, *c, *e);
                let uni = full
                    && is_uni(warp, a)
                    && is_uni(warp, b)
                    && is_uni(warp, c)
                    && is_uni(warp, e);
                if uni {
                    let v = alu::alu(
                        op,
                        ty,
                        dty,
                        get(warp, a, 0),
                        get(warp, b, 0),
                        get(warp, c, 0),
                        get(warp, e, 0),
                        sat,
                    );
                    splat(warp, *d, v);
                } else {
                    let base = *d as usize * WARP_SIZE;
                    for lane in lanes(exec) {
                        let v = alu::alu(
                            op,
                            ty,
                            dty,
                            get(warp, a, lane),
                            get(warp, b, lane),
                            get(warp, c, lane),
                            get(warp, e, lane),
                            sat,
                        );
                        warp.regs[base + lane] = v;
                    }
                    warp.uni[*d as usize] = false;
                }
            }
            Instr::Mov { d, a, bytes } => {
                let bits = *bytes as u32 * 8;
                write(warp, *d, *a, exec, full, |v| alu::trunc(v, bits));
            }
            Instr::Setp {
                cmp,
                ty,
                bop,
                p,
                q,
                a,
                b,
            } => {
                for lane in lanes(exec) {
                    let x = alu::compare(*cmp, *ty, get(warp, *a, lane), get(warp, *b, lane));
                    let (rp, rq) = match bop {
                        Some((op, c, neg)) => {
                            let pc = (get(warp, *c, lane) != 0) != *neg;
                            (alu::combine(*op, x, pc), alu::combine(*op, !x, pc))
                        }
                        None => (x, !x),
                    };
                    warp.regs[*p as usize * WARP_SIZE + lane] = rp as u64;
                    if let Some(q) = q {
                        warp.regs[*q as usize * WARP_SIZE + lane] = rq as u64;
                    }
                }
                warp.uni[*p as usize] = false;
                if let Some(q) = q {
                    warp.uni[*q as usize] = false;
                }
            }
            Instr::Set {
                cmp,
                ty,
                dty,
                d,
                a,
                b,
            } => {
                for lane in lanes(exec) {
                    let x = alu::compare(*cmp, *ty, get(warp, *a, lane), get(warp, *b, lane));
                    let v = match dty.kind {
                        Kind::Float => {
                            if x {
                                alu::from_f(1.0, *dty)
                            } else {
                                0
                            }
                        }
                        _ => {
                            if x {
                                alu::trunc(u64::MAX, dty.bits())
                            } else {
                                0
                            }
                        }
                    };
                    warp.regs[*d as usize * WARP_SIZE + lane] = v;
                }
                warp.uni[*d as usize] = false;
            }
            Instr::Selp { d, a, b, p } => {
                let uni = full && is_uni(warp, *a) && is_uni(warp, *b) && is_uni(warp, *p);
                if uni {
                    let v = if get(warp, *p, 0) != 0 {
                        get(warp, *a, 0)
                    } else {
                        get(warp, *b, 0)
                    };
                    splat(warp, *d, v);
                } else {
                    for lane in lanes(exec) {
                        let v = if get(warp, *p, lane) != 0 {
                            get(warp, *a, lane)
                        } else {
                            get(warp, *b, lane)
                        };
                        warp.regs[*d as usize * WARP_SIZE + lane] = v;
                    }
                    warp.uni[*d as usize] = false;
                }
            }
            Instr::Slct { d, a, b, c, cty } => {
                for lane in lanes(exec) {
                    let cv = get(warp, *c, lane);
                    let ge = if cty.kind == Kind::Float {
                        alu::to_f(cv, *cty) >= 0.0
                    } else {
                        alu::sext(cv, 32) >= 0
                    };
                    let v = if ge {
                        get(warp, *a, lane)
                    } else {
                        get(warp, *b, lane)
                    };
                    warp.regs[*d as usize * WARP_SIZE + lane] = v;
                }
                warp.uni[*d as usize] = false;
            }
            Instr::Cvt {
                d,
                a,
                dty,
                sty,
                round,
                int_round,
                sat,
            } => {
                let (dty, sty, round, ir, sat) = (*dty, *sty, *round, *int_round, *sat);
                write(warp, *d, *a, exec, full, |v| {
                    alu::convert(v, dty, sty, round, ir, sat)
                });
            }
            Instr::Cvta { d, a, space, to } => {
                let win = match space {
                    MemSpace::Shared => window::SHARED,
                    MemSpace::Local => window::LOCAL,
                    MemSpace::Const => window::CONST,
                    _ => 0,
                };
                let to = *to;
                let ext = self.prog.dynamic_shared_base();
                write(warp, *d, *a, exec, full, |v| {
                    if to {
                        v.wrapping_sub(win) & if win == 0 { u64::MAX } else { 0xFFFF_FFFF }
                    } else {
                        let v = if *space == MemSpace::Shared {
                            resolve_extern(v, ext)
                        } else {
                            v
                        };
                        v.wrapping_add(win)
                    }
                });
            }
            Instr::Pack {
                d,
                parts,
                part_bytes,
            } => {
                let bits = *part_bytes as u32 * 8;
                for lane in lanes(exec) {
                    let mut v = 0u64;
                    for (k, p) in parts.iter().enumerate() {
                        v |= alu::trunc(get(warp, *p, lane), bits) << (bits * k as u32);
                    }
                    warp.regs[*d as usize * WARP_SIZE + lane] = v;
                }
                warp.uni[*d as usize] = false;
            }
            Instr::Unpack { ds, a, part_bytes } => {
                let bits = *part_bytes as u32 * 8;
                for (k, d) in ds.iter().enumerate() {
                    let Some(d) = d else { continue };
                    let sh = bits * k as u32;
                    write(warp, *d, *a, exec, full, |v| {
                        alu::trunc(v >> sh.min(63), bits)
                    });
                }
            }
            Instr::Ld {
                space,
                ty,
                ds,
                addr,
                site,
            } => {
                let w = ty.bytes as u32;
                let addrs = self.addresses(warp, *addr, exec);
                let width = w * ds.len() as u32;
                let mut at = Located::default();
                self.emit(
                    warp,
                    pc,
                    *site,
                    *space,
                    Op::Load,
                    width,
                    exec,
                    &addrs,
                    sink,
                    Some(&mut at),
                )?;
                for (k, d) in ds.iter().enumerate() {
                    let Some(d) = d else { continue };
                    for lane in lanes(exec) {
                        let off = at.image[lane] + k as u64 * w as u64;
                        warp.regs[*d as usize * WARP_SIZE + lane] =
                            self.load(global, at.space[lane], off, w);
                    }
                    warp.uni[*d as usize] = false;
                }
            }
            Instr::St {
                space,
                ty,
                srcs,
                addr,
                site,
            } => {
                let w = ty.bytes as u32;
                let addrs = self.addresses(warp, *addr, exec);
                let width = w * srcs.len() as u32;
                let mut at = Located::default();
                self.emit(
                    warp,
                    pc,
                    *site,
                    *space,
                    Op::Store,
                    width,
                    exec,
                    &addrs,
                    sink,
                    Some(&mut at),
                )?;
                for (k, s) in srcs.iter().enumerate() {
                    for lane in lanes(exec) {
                        let off = at.image[lane] + k as u64 * w as u64;
                        self.store(global, at.space[lane], off, w, get(warp, *s, lane));
                    }
                }
            }
            Instr::Atom {
                space,
                op,
                ty,
                d,
                addr,
                b,
                c,
                site,
            } => {
                let w = ty.bytes as u32;
                let addrs = self.addresses(warp, *addr, exec);
                let mut at = Located::default();
                self.emit(
                    warp,
                    pc,
                    *site,
                    *space,
                    Op::Atomic,
                    w,
                    exec,
                    &addrs,
                    sink,
                    Some(&mut at),
                )?;
                for lane in lanes(exec) {
                    let (s, off) = (at.space[lane], at.image[lane]);
                    let old = self.load(global, s, off, w);
                    let new = atom_value(*op, *ty, old, get(warp, *b, lane), get(warp, *c, lane));
                    self.store(global, s, off, w, new);
                    if let Some(d) = d {
                        warp.regs[*d as usize * WARP_SIZE + lane] = old;
                    }
                }
                if let Some(d) = d {
                    warp.uni[*d as usize] = false;
                }
            }
            Instr::CpAsync {
                dst,
                src,
                bytes,
                src_bytes,
                load_site,
                store_site,
            } => {
                let w = *bytes as u32;
                let from = self.addresses(warp, *src, exec);
                let to = self.addresses(warp, *dst, exec);
                let (g, sh) = (MemSpace::Global, MemSpace::Shared);
                let (mut src_at, mut dst_at) = (Located::default(), Located::default());
                self.emit(
                    warp,
                    pc,
                    *load_site,
                    g,
                    Op::Load,
                    w,
                    exec,
                    &from,
                    sink,
                    Some(&mut src_at),
                )?;
                self.emit(
                    warp,
                    pc,
                    *store_site,
                    sh,
                    Op::Store,
                    w,
                    exec,
                    &to,
                    sink,
                    Some(&mut dst_at),
                )?;
                for lane in lanes(exec) {
                    // Bytes past `src-size` are zero-filled [PTX ISA §9.7.9.25].
                    let n = src_bytes
                        .map(|s| get(warp, s, lane) as u32)
                        .unwrap_or(w)
                        .min(w);
                    for k in 0..w as u64 {
                        let v = if k < n as u64 {
                            self.load(global, src_at.space[lane], src_at.image[lane] + k, 1)
                        } else {
                            0
                        };
                        self.store(global, dst_at.space[lane], dst_at.image[lane] + k, 1, v);
                    }
                }
            }
            Instr::Shfl {
                mode,
                d,
                p,
                a,
                b,
                c,
            } => {
                let src: Vec<u64> = (0..WARP_SIZE).map(|l| get(warp, *a, l)).collect();
                for lane in lanes(exec) {
                    let bval = (get(warp, *b, lane) & 31) as i64;
                    let cv = get(warp, *c, lane);
                    let cval = (cv & 31) as i64;
                    let segmask = ((cv >> 8) & 31) as i64;
                    let l = lane as i64;
                    let max_lane = (l & segmask) | (cval & !segmask);
                    let min_lane = l & segmask;
                    let (j, ok) = match mode {
                        ShflMode::Up => (l - bval, l - bval >= max_lane),
                        ShflMode::Down => (l + bval, l + bval <= max_lane),
                        ShflMode::Bfly => (l ^ bval, (l ^ bval) <= max_lane),
                        ShflMode::Idx => {
                            let j = min_lane | (bval & !segmask);
                            (j, j <= max_lane)
                        }
                    };
                    let j = if ok && (0..32).contains(&j) && exec >> j & 1 == 1 {
                        j
                    } else {
                        l
                    };
                    warp.regs[*d as usize * WARP_SIZE + lane] = src[j as usize];
                    if let Some(p) = p {
                        warp.regs[*p as usize * WARP_SIZE + lane] = ok as u64;
                    }
                }
                warp.uni[*d as usize] = false;
                if let Some(p) = p {
                    warp.uni[*p as usize] = false;
                }
            }
            Instr::Vote { mode, d, a, negate } => {
                let mut ballot = 0u32;
                for lane in lanes(exec) {
                    if (get(warp, *a, lane) != 0) != *negate {
                        ballot |= 1 << lane;
                    }
                }
                let v = match mode {
                    VoteMode::Ballot => ballot as u64,
                    VoteMode::All => (ballot == exec) as u64,
                    VoteMode::Any => (ballot != 0) as u64,
                    VoteMode::Uni => (ballot == exec || ballot == 0) as u64,
                };
                write_value(warp, *d, v, exec, full);
            }
            Instr::Match {
                all,
                d,
                p,
                a,
                bytes,
            } => {
                let bits = *bytes as u32 * 8;
                let vals: Vec<u64> = (0..WARP_SIZE)
                    .map(|l| alu::trunc(get(warp, *a, l), bits))
                    .collect();
                let first = lanes(exec).next().map(|l| vals[l]).unwrap_or(0);
                let all_same = lanes(exec).all(|l| vals[l] == first);
                for lane in lanes(exec) {
                    let v = if *all {
                        if all_same {
                            exec as u64
                        } else {
                            0
                        }
                    } else {
                        lanes(exec)
                            .filter(|&k| vals[k] == vals[lane])
                            .fold(0u64, |m, k| m | 1 << k)
                    };
                    warp.regs[*d as usize * WARP_SIZE + lane] = v;
                    if let Some(p) = p {
                        warp.regs[*p as usize * WARP_SIZE + lane] = all_same as u64;
                    }
                }
                warp.uni[*d as usize] = false;
                if let Some(p) = p {
                    warp.uni[*p as usize] = false;
                }
            }
            Instr::Redux { op, signed, d, a } => {
                let vals = lanes(exec).map(|l| alu::trunc(get(warp, *a, l), 32));
                let v = match op {
                    ReduxOp::Add => vals.fold(0u64, |s, x| s.wrapping_add(x)) & 0xFFFF_FFFF,
                    ReduxOp::And => vals.fold(0xFFFF_FFFF, |s, x| s & x),
                    ReduxOp::Or => vals.fold(0, |s, x| s | x),
                    ReduxOp::Xor => vals.fold(0, |s, x| s ^ x),
                    ReduxOp::Min if *signed => {
                        alu::trunc(vals.map(|x| alu::sext(x, 32)).min().unwrap_or(0) as u64, 32)
                    }
                    ReduxOp::Max if *signed => {
                        alu::trunc(vals.map(|x| alu::sext(x, 32)).max().unwrap_or(0) as u64, 32)
                    }
                    ReduxOp::Min => vals.min().unwrap_or(0),
                    ReduxOp::Max => vals.max().unwrap_or(0),
                };
                write_value(warp, *d, v, exec, full);
            }
            Instr::ActiveMask { d } => write_value(warp, *d, exec as u64, exec, full),
            Instr::Matrix {
                store,
                trans,
                regs,
                addr,
                site,
            } => {
                // Lanes 0 … 8N-1 give the rows' addresses; every lane moves one register
                // per matrix.
                let n = regs.len();
                let rows = if n >= 4 {
                    u32::MAX
                } else {
                    (1u32 << (8 * n)) - 1
                };
                let addrs = self.addresses(warp, *addr, exec);
                let op = if *store { Op::Store } else { Op::Load };
                let mut at = Located::default();
                let located = values.then_some(&mut at);
                self.emit(
                    warp,
                    pc,
                    *site,
                    MemSpace::Shared,
                    op,
                    16,
                    exec & rows,
                    &addrs,
                    sink,
                    located,
                )?;
                if !values {
                    return Ok(());
                }
                for (i, r) in regs.iter().enumerate() {
                    for t in lanes(exec) {
                        // The two b16 this lane holds: (row lane, byte offset in the row).
                        let parts = if *trans {
                            let r0 = i * 8 + 2 * (t % 4);
                            [(r0, 2 * (t / 4)), (r0 + 1, 2 * (t / 4))]
                        } else {
                            let row = i * 8 + t / 4;
                            [(row, 4 * (t % 4)), (row, 4 * (t % 4) + 2)]
                        };
                        if *store {
                            let v = get(warp, *r, t);
                            for (k, (row, off)) in parts.iter().enumerate() {
                                let o = at.image[*row] + *off as u64;
                                self.store(global, at.space[*row], o, 2, (v >> (16 * k)) & 0xFFFF);
                            }
                        } else if let Src::Reg(d) = r {
                            let mut v = 0;
                            for (k, (row, off)) in parts.iter().enumerate() {
                                let o = at.image[*row] + *off as u64;
                                v |= self.load(global, at.space[*row], o, 2) << (16 * k);
                            }
                            warp.regs[*d as usize * WARP_SIZE + t] = v;
                        }
                    }
                    if let (false, Src::Reg(d)) = (*store, r) {
                        warp.uni[*d as usize] = false;
                    }
                }
            }
            Instr::Nop
            | Instr::Bra { .. }
            | Instr::Exit
            | Instr::Ret
            | Instr::Bar
            | Instr::Call { .. } => {}
        }
        Ok(())
    }

    fn addresses(&self, warp: &Warp, a: Addr, exec: u32) -> [u64; WARP_SIZE] {
        let mut out = [0u64; WARP_SIZE];
        match a.base {
            None => out.iter_mut().for_each(|x| *x = a.offset as u64),
            Some(r) => {
                let base = r as usize * WARP_SIZE;
                for lane in lanes(exec) {
                    out[lane] = warp.regs[base + lane].wrapping_add(a.offset as u64);
                }
            }
        }
        out
    }

    /// Where a lane's address goes: its space, the address the model sees, and the offset in
    /// that space's image (global: the address; local: the lane's own frame).
    fn locate(&self, space: MemSpace, a: u64, warp: &Warp, lane: usize) -> (Space, u64, u64) {
        let ext = self.prog.dynamic_shared_base();
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
            Space::Shared => {
                let off = resolve_extern(a, ext) & 0xFFFF_FFFF;
                (space, off, off)
            }
            Space::Local => {
                let thread = warp.first_thread as u64 + lane as u64;
                let image = thread * self.prog.local_bytes + a;
                (space, self.local_model(a, warp, lane), image)
            }
            _ => (space, a, a),
        }
    }

    /// Local memory is interleaved: 4-byte word *w* of thread *t* of the block at
    /// `4·(w·threads + t)` (wider accesses interleave at their width), blocks one after
    /// another [PG "Local Memory"]; the same layout as the source front end.
    fn local_model(&self, off: u64, warp: &Warp, lane: usize) -> u64 {
        let g = 4u64;
        let t = self.threads as u64;
        let per_block = (self.prog.local_bytes.div_ceil(g) * g * t).div_ceil(256) * 256;
        let thread = (warp.first_thread as usize + lane) as u64;
        self.block_linear * per_block + (off / g) * g * t + thread * g + off % g
    }

    /// Reads `n` ≤ 8 bytes at offset `off` of `space`'s image (see [`BlockCtx::locate`]).
    fn load(&self, global: &Global, space: Space, off: u64, n: u32) -> u64 {
        match space {
            Space::Global if !self.prog.needs_memory => 0,
            Space::Global => global.read(off, n),
            Space::Shared => memory::read_flat(&self.shared, off, n),
            Space::Constant => memory::read_flat(&self.prog.const_image, off, n),
            Space::Local => memory::read_flat(&self.local, off, n),
        }
    }

    /// Writes `n` ≤ 8 bytes of `v` at offset `off` of `space`'s image.
    fn store(&mut self, global: &mut Global, space: Space, off: u64, n: u32, v: u64) {
        match space {
            Space::Global if !self.prog.needs_memory => {}
            Space::Global => global.write(off, n, v),
            Space::Shared => memory::write_flat(&mut self.shared, off, n, v),
            Space::Constant => {}
            Space::Local => memory::write_flat(&mut self.local, off, n, v),
        }
    }

    /// Checks every active lane's address and hands one access per space to the sink;
    /// returns where each lane's bytes are, for the instruction's data movement.
    #[allow(clippy::too_many_arguments)]
    fn emit(
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
        };
        // A named global, shared or constant space: one access, whose model addresses are
        // also the image offsets.
        let single = match space {
            MemSpace::Global => Some(Space::Global),
            MemSpace::Shared => Some(Space::Shared),
            MemSpace::Const => Some(Space::Constant),
            _ => None,
        };
        if let Some(s) = single {
            let mut a = access(s);
            a.mask = exec;
            if s == Space::Shared {
                let ext = self.prog.dynamic_shared_base();
                for lane in lanes(exec) {
                    a.addrs[lane] = resolve_extern(addrs[lane], ext) & 0xFFFF_FFFF;
                }
            } else {
                for lane in lanes(exec) {
                    a.addrs[lane] = addrs[lane];
                }
            }
            if let Some(at) = located {
                at.space = [s; WARP_SIZE];
                at.image = a.addrs;
            }
            return self.deliver(warp, pc, site, &a, addrs, sink);
        }
        let mut acc: [Option<WarpAccess>; 4] = [None; 4];
        let mut at = located;
        for lane in lanes(exec) {
            let (s, m, image) = self.locate(space, addrs[lane], warp, lane);
            if let Some(at) = at.as_deref_mut() {
                at.space[lane] = s;
                at.image[lane] = image;
            }
            let a = acc[s as usize].get_or_insert_with(|| access(s));
            a.mask |= 1 << lane;
            a.addrs[lane] = m;
        }
        for a in acc.iter().flatten() {
            self.deliver(warp, pc, site, a, addrs, sink)?;
        }
        Ok(())
    }

    /// Checks one access of an instruction and hands it to the sink.
    fn deliver(
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
        let origin = WarpOrigin {
            block: self.block,
            warp: warp.index,
        };
        if a.width > 16 {
            // 256-bit accesses (sm_100 `.v8`): two 16-byte halves.
            for h in 0..a.width / 16 {
                let mut part = *a;
                part.width = 16;
                for lane in lanes(a.mask) {
                    part.addrs[lane] = a.addrs[lane] + 16 * h as u64;
                }
                sink(site, &part, origin);
            }
        } else {
            sink(site, a, origin);
        }
        Ok(())
    }

    /// Whether every lane of `a` is aligned and inside memory (a quick test; `false` means
    /// look lane by lane).
    fn access_ok(&self, a: &WarpAccess) -> bool {
        if a.space == Space::Local {
            return true;
        }
        let align = a.width.min(16) as u64;
        let (mut lo, mut hi, mut bits) = (u64::MAX, 0u64, 0u64);
        for lane in lanes(a.mask) {
            let x = a.addrs[lane];
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
                    && matches!(memory::place(self.allocs, lo), Placement::Inside)
                    && matches!(memory::place(self.allocs, end - 1), Placement::Inside)
            }
            Space::Shared => end <= self.shared.len() as u64,
            Space::Constant => end <= self.prog.const_image.len() as u64,
            Space::Local => true,
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn check(
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
        };
        let fault = |msg: String| Error::Fault {
            at: self.at(pc),
            msg,
            thread: self.thread(warp, lane),
            block: self.block,
        };
        let align = width.min(16) as u64;
        if s != Space::Local && m % align != 0 {
            return Err(fault(format!(
                "misaligned {width}-byte {what} at {raw:#x}: a {width}-byte access must be {align}-byte aligned"
            )));
        }
        match s {
            Space::Global => match memory::place(self.allocs, m) {
                Placement::Inside => Ok(()),
                Placement::After { alloc, bytes } => Err(fault(format!(
                    "{what} {bytes} bytes past the end of '{}' ({} bytes): size it with --alloc or fix the index",
                    alloc.name,
                    alloc.size.unwrap_or(0)
                ))),
                Placement::Before { alloc, bytes } => Err(fault(format!(
                    "{what} {bytes} bytes before the start of '{}'",
                    alloc.name
                ))),
                Placement::Nowhere => Err(fault(format!(
                    "{what} at {raw:#x}, outside every allocation (a null or uninitialized pointer?)"
                ))),
            },
            Space::Shared => {
                if m + width as u64 > self.shared.len() as u64 {
                    Err(fault(format!(
                        "shared {what} at byte {m}, past the block's {} bytes of shared memory (set the dynamic size with --dynamic-smem)",
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
            Space::Local => Ok(()),
        }
    }
}

fn resolve_extern(a: u64, base: u64) -> u64 {
    // Extern shared arrays carry a marker; 32-bit copies of it carry its low half.
    const LOW: u64 = EXTERN_SHARED & 0xFFFF_FFFF;
    if a >= EXTERN_SHARED {
        a - EXTERN_SHARED + base
    } else if (LOW..LOW + 0x1_0000).contains(&(a & 0xFFFF_FFFF)) && a >> 32 == 0 {
        a - LOW + base
    } else {
        a
    }
}

fn atom_value(op: AtomOp, ty: Ty, old: u64, b: u64, c: u64) -> u64 {
    let bits = ty.bits();
    match op {
        AtomOp::Add => match ty.kind {
            Kind::Float | Kind::BFloat => alu::from_f(alu::to_f(old, ty) + alu::to_f(b, ty), ty),
            _ => alu::trunc(old.wrapping_add(b), bits),
        },
        AtomOp::Min | AtomOp::Max => {
            let a = if op == AtomOp::Min {
                Alu::Min
            } else {
                Alu::Max
            };
            alu::alu(a, ty, ty, old, b, 0, 0, false)
        }
        AtomOp::Inc => {
            if alu::trunc(old, bits) >= alu::trunc(b, bits) {
                0
            } else {
                old + 1
            }
        }
        AtomOp::Dec => {
            if old == 0 || alu::trunc(old, bits) > alu::trunc(b, bits) {
                b
            } else {
                old - 1
            }
        }
        AtomOp::And => old & b,
        AtomOp::Or => old | b,
        AtomOp::Xor => old ^ b,
        AtomOp::Exch => b,
        AtomOp::Cas => {
            if alu::trunc(old, bits) == alu::trunc(b, bits) {
                c
            } else {
                old
            }
        }
    }
}

/// The lanes set in a mask, lowest first.
#[inline]
fn lanes(mut m: u32) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        if m == 0 {
            None
        } else {
            let l = m.trailing_zeros() as usize;
            m &= m - 1;
            Some(l)
        }
    })
}

#[inline]
fn get(warp: &Warp, s: Src, lane: usize) -> u64 {
    match s {
        Src::Reg(r) => warp.regs[r as usize * WARP_SIZE + lane],
        Src::Imm(x) => x,
    }
}

#[inline]
fn is_uni(warp: &Warp, s: Src) -> bool {
    match s {
        Src::Reg(r) => warp.uni[r as usize],
        Src::Imm(_) => true,
    }
}

#[inline]
fn splat(warp: &mut Warp, d: Reg, v: u64) {
    let base = d as usize * WARP_SIZE;
    warp.regs[base..base + WARP_SIZE].fill(v);
    warp.uni[d as usize] = true;
}

/// `d = f(a)` for the executing lanes, once when `a` is warp-uniform and every live lane
/// executes.
#[inline]
fn write(warp: &mut Warp, d: Reg, a: Src, exec: u32, full: bool, f: impl Fn(u64) -> u64) {
    if full && is_uni(warp, a) {
        let v = f(get(warp, a, 0));
        splat(warp, d, v);
    } else {
        let base = d as usize * WARP_SIZE;
        for lane in lanes(exec) {
            warp.regs[base + lane] = f(get(warp, a, lane));
        }
        warp.uni[d as usize] = false;
    }
}

#[inline]
fn write_value(warp: &mut Warp, d: Reg, v: u64, exec: u32, full: bool) {
    write(warp, d, Src::Imm(v), exec, full, |x| x)
}
