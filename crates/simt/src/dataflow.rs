//! Whether loaded values matter: when no value read from memory can reach an address, a
//! predicate or a lane index, the accesses of a launch do not depend on memory contents and
//! the executor keeps no global memory image (loads read zero, stores are dropped), so a
//! launch of any size runs in flat memory.

use crate::instr::{Inst, Instr, Reg, Src, Tc5Op};

/// Registers an instruction writes, and the registers it reads as values.
pub(crate) fn defs_uses(i: &Instr) -> (Vec<Reg>, Vec<Src>) {
    use Instr::*;
    match i {
        Alu { d, a, b, c, e, .. } => (vec![*d], vec![*a, *b, *c, *e]),
        Mov { d, a, .. } | Cvt { d, a, .. } | Cvta { d, a, .. } => (vec![*d], vec![*a]),
        Mapa { d, a, rank, .. } => (vec![*d], vec![*a, *rank]),
        GetCtaRank { d, a, .. } => (vec![*d], vec![*a]),
        Setp {
            p, q, a, b, bop, ..
        } => {
            let mut u = vec![*a, *b];
            if let Some((_, c, _)) = bop {
                u.push(*c);
            }
            (std::iter::once(*p).chain(*q).collect(), u)
        }
        Set { d, a, b, .. } => (vec![*d], vec![*a, *b]),
        CvtFloat { d, a, b, .. } => (vec![*d], std::iter::once(*a).chain(*b).collect()),
        AluHalf { d, a, b, c, .. } => (vec![*d], vec![*a, *b, *c]),
        SetpHalf { p, q, a, b, .. } => (std::iter::once(*p).chain(*q).collect(), vec![*a, *b]),
        Selp { d, a, b, p } => (vec![*d], vec![*a, *b, *p]),
        Slct { d, a, b, c, .. } => (vec![*d], vec![*a, *b, *c]),
        Pack { d, parts, .. } => (vec![*d], parts.clone()),
        Unpack { ds, a, .. } => (ds.iter().flatten().copied().collect(), vec![*a]),
        Shfl { d, p, a, b, c, .. } => (std::iter::once(*d).chain(*p).collect(), vec![*a, *b, *c]),
        Vote { d, a, .. } | Redux { d, a, .. } => (vec![*d], vec![*a]),
        ActiveMask { d } | Clock { d, .. } => (vec![*d], Vec::new()),
        Elect { d, p, mask } => (d.iter().chain(p.iter()).copied().collect(), vec![*mask]),
        IsSpace { p, a, .. } => (vec![*p], vec![*a]),
        Mbarrier { d, addr, count, .. } => (
            d.iter().copied().collect(),
            addr.base.map(Src::Reg).into_iter().chain(*count).collect(),
        ),
        MbarrierWait { d, addr, token, .. } => (
            d.iter().copied().collect(),
            addr.base
                .map(Src::Reg)
                .into_iter()
                .chain([*token])
                .collect(),
        ),
        Match { d, p, a, .. } => (std::iter::once(*d).chain(*p).collect(), vec![*a]),
        // A call moves its arguments in and, on return, its results out.
        Call { args, rets, .. } => (
            args.iter()
                .map(|(d, _)| *d)
                .chain(rets.iter().map(|(d, _)| *d))
                .collect(),
            args.iter()
                .map(|(_, s)| *s)
                .chain(rets.iter().map(|(_, s)| Src::Reg(*s)))
                .collect(),
        ),
        Matrix {
            store: false, regs, ..
        } => (
            regs.iter()
                .filter_map(|s| match s {
                    Src::Reg(r) => Some(*r),
                    Src::Imm(_) => None,
                })
                .collect(),
            Vec::new(),
        ),
        Matrix { regs, .. } => (Vec::new(), regs.clone()),
        Tensor(t) => {
            let extra: Vec<Src> = match &t.op {
                crate::instr::TensorOp::MmaSp { e, .. } => vec![*e],
                crate::instr::TensorOp::MmaScaled { scale: s, .. } => vec![
                    s.sfa,
                    s.sfa_byte,
                    s.sfa_thread,
                    s.sfb,
                    s.sfb_byte,
                    s.sfb_thread,
                ],
                _ => Vec::new(),
            };
            (
                t.d.clone(),
                t.a.iter()
                    .chain(&t.b)
                    .chain(&t.c)
                    .chain(&extra)
                    .copied()
                    .collect(),
            )
        }
        Wmma(w) if !w.store => (
            w.regs
                .iter()
                .filter_map(|s| match s {
                    Src::Reg(r) => Some(*r),
                    Src::Imm(_) => None,
                })
                .collect(),
            Vec::new(),
        ),
        Wmma(w) => (Vec::new(), w.regs.clone()),
        // D is read (the accumulator) and written; the descriptors are addresses.
        Wgmma(w) => (
            w.dregs.clone(),
            w.a_regs
                .iter()
                .copied()
                .chain(w.a_desc)
                .chain([w.b_desc, w.scale_d])
                .chain(w.dregs.iter().map(|r| Src::Reg(*r)))
                .collect(),
        ),
        Texture(t) => (t.ds.iter().flatten().copied().collect(), Vec::new()),
        Tcgen05(t) => tc5_defs_uses(t),
        TensormapReplace(t) => (
            Vec::new(),
            t.addr
                .base
                .map(Src::Reg)
                .into_iter()
                .chain([t.val])
                .collect(),
        ),
        _ => (Vec::new(), Vec::new()),
    }
}

/// A `tcgen05` operation's registers: `tcgen05.ld` writes its registers (values from tensor
/// memory); the others write none.
fn tc5_defs_uses(t: &Tc5Op) -> (Vec<Reg>, Vec<Src>) {
    let (defs, mut uses) = (Vec::new(), tc5_addresses(t));
    match t {
        Tc5Op::Move {
            store: false, regs, ..
        } => {
            let defs = regs
                .iter()
                .filter_map(|s| match s {
                    Src::Reg(r) => Some(*r),
                    Src::Imm(_) => None,
                })
                .collect();
            return (defs, uses);
        }
        Tc5Op::Move { regs, .. } => uses.extend(regs.iter().copied()),
        Tc5Op::Mma(m) => uses.push(m.enable_d),
        _ => {}
    }
    (defs, uses)
}

/// The operands of a `tcgen05` operation that place something: tensor memory addresses,
/// column counts, descriptors (shared-memory reads), the allocation's shared address.
fn tc5_addresses(t: &Tc5Op) -> Vec<Src> {
    let reg = |a: &crate::instr::Addr| a.base.map(Src::Reg);
    match t {
        Tc5Op::Alloc { dst, ncols, .. } => reg(dst).into_iter().chain([*ncols]).collect(),
        Tc5Op::Dealloc { taddr, ncols, .. } => vec![*taddr, *ncols],
        Tc5Op::Relinquish { .. } => Vec::new(),
        Tc5Op::Move { taddr, .. } | Tc5Op::Shift { taddr, .. } => reg(taddr).into_iter().collect(),
        Tc5Op::Cp(c) => reg(&c.taddr).into_iter().chain([c.desc]).collect(),
        Tc5Op::CommitMulticast { mbar, mask } => reg(mbar).into_iter().chain([*mask]).collect(),
        Tc5Op::Mma(m) => reg(&m.d)
            .into_iter()
            .chain(m.a_tmem.as_ref().and_then(reg))
            .chain(m.a_desc)
            .chain([m.b_desc, m.idesc])
            .chain(
                m.scale
                    .iter()
                    .flat_map(|s| reg(&s.a).into_iter().chain(reg(&s.b))),
            )
            .collect(),
    }
}

/// The operands of a texture/surface instruction that act as its address: the handle, the
/// coordinates and the layer.
fn texture_operands(t: &crate::instr::TexInstr) -> impl Iterator<Item = Src> + '_ {
    std::iter::once(t.handle)
        .chain(t.coords.iter().copied())
        .chain(t.layer)
}

/// The program registers a reused warp must set back to 0 (`BlockCtx::new_warp`), as
/// `[first, end)` ranges: all of them but those every thread writes before anything reads
/// them. Those are found in the kernel's straight-line start (from instruction 0 up to the
/// first branch target or the first instruction other than arithmetic, moves, conversions,
/// compares, loads and stores): a register written there by an unguarded arithmetic, move,
/// conversion or compare (instructions that always write their result) before any
/// instruction reads it. Every live lane runs that start in order before anything else, so
/// the value a previous block left is never seen. Registers a cross-lane instruction reads
/// (shuffles, matrix instructions: they may read lanes that do not run) are always zeroed.
pub fn zeroed_on_reuse(insts: &[Inst], nregs: u32, first_program_reg: u32) -> Vec<(u32, u32)> {
    let n = nregs as usize;
    // (A call ends the start, and a callee's body lies past the kernel's `ret`.)
    let targets = crate::cfg::branch_targets(insts);
    let mut written_first = vec![false; n];
    let mut read = vec![false; n];
    for (pc, i) in insts.iter().enumerate() {
        if pc > 0 && targets[pc] {
            break;
        }
        use Instr::*;
        let writes_always = matches!(
            i.instr,
            Alu { .. }
                | Mov { .. }
                | Cvt { .. }
                | Cvta { .. }
                | Setp { .. }
                | Set { .. }
                | Selp { .. }
                | Slct { .. }
                | CvtFloat { .. }
        );
        if !writes_always && !matches!(i.instr, Ld { .. } | St { .. }) {
            break;
        }
        let (defs, mut uses) = defs_uses(&i.instr);
        if let Ld { addr, .. } | St { addr, .. } = &i.instr {
            uses.extend(addr.base.map(Src::Reg));
        }
        if let Some((g, _)) = i.guard {
            uses.push(Src::Reg(g));
        }
        for u in uses {
            if let Src::Reg(r) = u {
                if let Some(x) = read.get_mut(r as usize) {
                    *x = true;
                }
            }
        }
        if writes_always && i.guard.is_none() {
            for d in defs {
                if let Some(w) = written_first.get_mut(d as usize) {
                    *w |= !read[d as usize];
                }
            }
        }
    }
    for i in insts {
        let cross_lane = matches!(
            i.instr,
            Instr::Shfl { .. }
                | Instr::Matrix { .. }
                | Instr::Wmma(_)
                | Instr::Tensor(_)
                | Instr::Wgmma(_)
                | Instr::Tcgen05(_)
        );
        if cross_lane {
            for u in defs_uses(&i.instr).1 {
                if let Src::Reg(r) = u {
                    if let Some(w) = written_first.get_mut(r as usize) {
                        *w = false;
                    }
                }
            }
        }
    }
    let mut ranges: Vec<(u32, u32)> = Vec::new();
    for r in first_program_reg..nregs {
        if written_first[r as usize] {
            continue;
        }
        match ranges.last_mut() {
            Some((_, end)) if *end == r => *end = r + 1,
            _ => ranges.push((r, r + 1)),
        }
    }
    ranges
}

/// Whether any value loaded from memory (or returned by an atomic) can flow into an
/// address, a guard predicate, a shuffle's lane operands or a `cp.async` source size.
pub fn loaded_values_matter(insts: &[Inst], nregs: u32) -> bool {
    // A tensor map the kernel writes (`tensormap.replace`) reaches the TMA's addresses
    // through memory.
    if insts
        .iter()
        .any(|i| matches!(i.instr, Instr::TensormapReplace(_)))
    {
        return true;
    }
    let mut tainted = vec![false; nregs as usize];
    for i in insts {
        match &i.instr {
            // Parameters and constant memory are known without a memory image: their loads
            // yield values either way (`exec/step.rs`).
            Instr::Ld { space, .. } if space.is_known_without_image() => {}
            Instr::Ld { ds, .. } => ds
                .iter()
                .flatten()
                .for_each(|d| tainted[*d as usize] = true),
            Instr::Atom { d: Some(d), .. } => tainted[*d as usize] = true,
            Instr::Texture(t) => {
                t.ds.iter()
                    .flatten()
                    .for_each(|d| tainted[*d as usize] = true)
            }
            Instr::Matrix {
                store: false, regs, ..
            } => regs.iter().for_each(|s| {
                if let Src::Reg(r) = s {
                    tainted[*r as usize] = true
                }
            }),
            Instr::Wmma(w) if !w.store => w.regs.iter().for_each(|s| {
                if let Src::Reg(r) = s {
                    tainted[*r as usize] = true
                }
            }),
            Instr::Wgmma(w) => w.dregs.iter().for_each(|r| tainted[*r as usize] = true),
            Instr::Tcgen05(t) => tc5_defs_uses(t)
                .0
                .iter()
                .for_each(|r| tainted[*r as usize] = true),
            _ => {}
        }
    }
    let is = |t: &[bool], s: &Src| matches!(s, Src::Reg(r) if t[*r as usize]);
    // Call results come back through the call's return moves.
    let mut changed = true;
    while changed {
        changed = false;
        for i in insts {
            let (defs, uses) = defs_uses(&i.instr);
            if uses.iter().any(|s| is(&tainted, s)) {
                for d in defs {
                    if !tainted[d as usize] {
                        tainted[d as usize] = true;
                        changed = true;
                    }
                }
            }
        }
    }
    let reg = |r: Option<Reg>| r.is_some_and(|r| tainted[r as usize]);
    insts.iter().any(|i| {
        reg(i.guard.map(|g| g.0))
            || match &i.instr {
                Instr::Ld { addr, .. }
                | Instr::St { addr, .. }
                | Instr::Atom { addr, .. }
                | Instr::Matrix { addr, .. } => reg(addr.base),
                Instr::Wmma(w) => reg(w.addr.base) || w.stride.is_some_and(|s| is(&tainted, &s)),
                Instr::Wgmma(w) => {
                    w.a_desc.is_some_and(|s| is(&tainted, &s)) || is(&tainted, &w.b_desc)
                }
                Instr::CpAsync {
                    dst,
                    src,
                    src_bytes,
                    ..
                } => reg(dst.base) || reg(src.base) || src_bytes.is_some_and(|s| is(&tainted, &s)),
                Instr::CpBulk {
                    dst,
                    src,
                    size,
                    mbar,
                    multicast,
                    ..
                } => {
                    reg(dst.base)
                        || reg(src.base)
                        || is(&tainted, size)
                        || mbar.is_some_and(|m| reg(m.base))
                        || multicast.is_some_and(|m| is(&tainted, &m))
                }
                Instr::AsyncStore(a) => reg(a.addr.base) || reg(a.mbar.base),
                Instr::BulkPrefetch { addr, size, .. } => reg(addr.base) || is(&tainted, size),
                Instr::TensormapCopy { dst, src, .. } => reg(dst.base) || reg(src.base),
                Instr::TensorCopy(t) => {
                    reg(t.smem.base)
                        || t.multicast.is_some_and(|m| is(&tainted, &m))
                        || is(&tainted, &t.map)
                        || t.coords.iter().any(|c| is(&tainted, c))
                        || t.mbar.is_some_and(|m| reg(m.base))
                }
                Instr::Mbarrier { addr, count, .. } => {
                    reg(addr.base) || count.is_some_and(|c| is(&tainted, &c))
                }
                Instr::MbarrierWait { addr, token, .. } => reg(addr.base) || is(&tainted, token),
                Instr::Shfl { b, c, .. } => is(&tainted, b) || is(&tainted, c),
                Instr::Texture(t) => texture_operands(t).any(|s| is(&tainted, &s)),
                Instr::Tcgen05(t) => tc5_addresses(t).iter().any(|s| is(&tainted, s)),
                _ => false,
            }
    })
}

/// Instructions whose results reach no address, guard predicate or call: with no memory
/// image (see [`loaded_values_matter`]) the executor skips them, since nothing they compute
/// can change which accesses happen or where. A backward slice from addresses and guards.
pub fn dead_values(insts: &[Inst], nregs: u32) -> Vec<bool> {
    let mut live = vec![false; nregs as usize];
    let mark = |live: &mut Vec<bool>, s: &Src| {
        if let Src::Reg(r) = s {
            live[*r as usize] = true;
        }
    };
    for i in insts {
        if let Some((g, _)) = i.guard {
            live[g as usize] = true;
        }
        match &i.instr {
            Instr::Ld { addr, .. }
            | Instr::St { addr, .. }
            | Instr::Atom { addr, .. }
            | Instr::Matrix { addr, .. } => {
                addr.base.into_iter().for_each(|r| live[r as usize] = true)
            }
            // `src-size` decides which lanes read global memory.
            Instr::CpAsync {
                dst,
                src,
                src_bytes,
                ..
            } => {
                dst.base
                    .into_iter()
                    .chain(src.base)
                    .for_each(|r| live[r as usize] = true);
                if let Some(s) = src_bytes {
                    mark(&mut live, s);
                }
            }
            Instr::TensorCopy(t) => {
                t.smem
                    .base
                    .into_iter()
                    .chain(t.mbar.and_then(|m| m.base))
                    .for_each(|r| live[r as usize] = true);
                mark(&mut live, &t.map);
                t.coords.iter().for_each(|c| mark(&mut live, c));
                t.multicast.iter().for_each(|c| mark(&mut live, c));
            }
            Instr::CpBulk {
                dst,
                src,
                size,
                mbar,
                multicast,
                ..
            } => {
                dst.base
                    .into_iter()
                    .chain(src.base)
                    .chain(mbar.and_then(|m| m.base))
                    .for_each(|r| live[r as usize] = true);
                mark(&mut live, size);
                multicast.iter().for_each(|c| mark(&mut live, c));
            }
            Instr::AsyncStore(a) => {
                a.addr
                    .base
                    .into_iter()
                    .chain(a.mbar.base)
                    .for_each(|r| live[r as usize] = true);
            }
            Instr::Texture(t) => texture_operands(t).for_each(|s| mark(&mut live, &s)),
            Instr::Wmma(w) => {
                w.addr
                    .base
                    .into_iter()
                    .for_each(|r| live[r as usize] = true);
                w.stride.iter().for_each(|s| mark(&mut live, s));
            }
            // The descriptors place the shared-memory reads.
            Instr::Wgmma(w) => w
                .a_desc
                .iter()
                .chain([&w.b_desc])
                .for_each(|s| mark(&mut live, s)),
            Instr::Tcgen05(t) => tc5_addresses(t).iter().for_each(|s| mark(&mut live, s)),
            // A tensor map's fields place the TMA's accesses.
            Instr::TensormapReplace(_) => defs_uses(&i.instr)
                .1
                .iter()
                .for_each(|s| mark(&mut live, s)),
            Instr::BulkPrefetch { addr, size, .. } => {
                addr.base.into_iter().for_each(|r| live[r as usize] = true);
                mark(&mut live, size);
            }
            Instr::TensormapCopy { dst, src, .. } => dst
                .base
                .into_iter()
                .chain(src.base)
                .for_each(|r| live[r as usize] = true),
            Instr::AssertFail {
                message,
                file,
                line,
            } => [message, file, line]
                .into_iter()
                .for_each(|s| mark(&mut live, s)),
            // Barrier addresses, counts and tokens decide when warps run on.
            Instr::Mbarrier { .. } | Instr::MbarrierWait { .. } => defs_uses(&i.instr)
                .1
                .iter()
                .for_each(|s| mark(&mut live, s)),
            _ => {}
        }
    }
    let mut changed = true;
    while changed {
        changed = false;
        for i in insts.iter().rev() {
            let (defs, uses) = defs_uses(&i.instr);
            if defs.iter().any(|d| live[*d as usize]) {
                for u in &uses {
                    if let Src::Reg(r) = u {
                        if !live[*r as usize] {
                            mark(&mut live, u);
                            changed = true;
                        }
                    }
                }
            }
        }
    }
    insts
        .iter()
        .map(|i| {
            let (defs, _) = defs_uses(&i.instr);
            let pure = !matches!(
                i.instr,
                Instr::Ld { .. }
                    | Instr::St { .. }
                    | Instr::Atom { .. }
                    | Instr::CpAsync { .. }
                    | Instr::CpBulk { .. }
                    | Instr::AsyncStore(_)
                    | Instr::TensorCopy(_)
                    | Instr::TensormapReplace(_)
                    | Instr::TensormapCopy { .. }
                    | Instr::BulkPrefetch { .. }
                    | Instr::Matrix { .. }
                    | Instr::Wmma(_)
                    | Instr::Wgmma(_)
                    | Instr::Tcgen05(_)
                    | Instr::Texture(_)
                    | Instr::Call { .. }
                    | Instr::Bra { .. }
                    | Instr::Bar
                    | Instr::ClusterArrive
                    | Instr::ClusterWait
                    | Instr::Exit
                    | Instr::Trap
                    | Instr::AssertFail { .. }
                    | Instr::Mbarrier { .. }
                    | Instr::MbarrierWait { .. }
                    | Instr::Sleep
                    | Instr::Ret
            );
            pure && defs.iter().all(|d| !live[*d as usize])
        })
        .collect()
}
