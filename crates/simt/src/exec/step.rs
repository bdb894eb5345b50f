//! One warp instruction's semantics: arithmetic, conversions, warp-level exchange and the
//! data movement of memory instructions (their accesses go through `access`).

use warpscope_model::{Op, WARP_SIZE};

use super::*;
use crate::alu;
use crate::instr::*;

impl<'a> BlockCtx<'a> {
    #[allow(clippy::too_many_arguments)]
    pub(super) fn step(
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
        // ptxas's register spills tied to this instruction: local accesses the PTX lacks.
        if !self.prog.spill_at.is_empty() && self.prog.spill_at[pc as usize] != u32::MAX {
            self.spill(warp, pc, exec, sink)?;
        }
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
            } if !values && !space.is_known_without_image() => {
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
                } else if int_fast(op, ty, sat) {
                    // Integer add/sub/mul/mad/and/or/xor: the operation chosen once, not per
                    // lane (the hot path of address arithmetic).
                    let mask = if dty.bits() >= 64 {
                        u64::MAX
                    } else {
                        (1u64 << dty.bits()) - 1
                    };
                    let d = *d;
                    match op {
                        Alu::Add => {
                            map_lanes(warp, exec, d, a, b, c, mask, |x, y, _| x.wrapping_add(y))
                        }
                        Alu::Sub => {
                            map_lanes(warp, exec, d, a, b, c, mask, |x, y, _| x.wrapping_sub(y))
                        }
                        Alu::Mul => {
                            map_lanes(warp, exec, d, a, b, c, mask, |x, y, _| x.wrapping_mul(y))
                        }
                        Alu::Mad => map_lanes(warp, exec, d, a, b, c, mask, |x, y, z| {
                            x.wrapping_mul(y).wrapping_add(z)
                        }),
                        Alu::And => map_lanes(warp, exec, d, a, b, c, mask, |x, y, _| x & y),
                        Alu::Or => map_lanes(warp, exec, d, a, b, c, mask, |x, y, _| x | y),
                        _ => map_lanes(warp, exec, d, a, b, c, mask, |x, y, _| x ^ y),
                    }
                } else if !sat
                    && matches!(ty.kind, Kind::Unsigned | Kind::Signed)
                    && matches!(op, Alu::Shl | Alu::MulWide)
                {
                    // Shifts and widening multiplies of addresses (`shl.b32`, `mul.wide.s32`):
                    // the operation chosen once, as `alu::alu` computes it per lane.
                    let bits = ty.bits();
                    let mask = if dty.bits() >= 64 {
                        u64::MAX
                    } else {
                        (1u64 << dty.bits()) - 1
                    };
                    let d = *d;
                    match (op, ty.kind) {
                        (Alu::Shl, _) => map_lanes(warp, exec, d, a, b, c, mask, move |x, y, _| {
                            let s = y & 0xFFFF_FFFF;
                            if s >= bits as u64 {
                                0
                            } else {
                                x << s
                            }
                        }),
                        (_, Kind::Signed) => {
                            map_lanes(warp, exec, d, a, b, c, mask, move |x, y, _| {
                                (alu::sext(x, bits) as i128 * alu::sext(y, bits) as i128) as u64
                            })
                        }
                        _ => map_lanes(warp, exec, d, a, b, c, mask, move |x, y, _| {
                            alu::trunc(x, bits).wrapping_mul(alu::trunc(y, bits))
                        }),
                    }
                } else {
                    let base = *d as usize * WARP_SIZE;
                    if exec == u32::MAX {
                        let (x, y) = (all_lanes(warp, a), all_lanes(warp, b));
                        let (z, w) = (all_lanes(warp, c), all_lanes(warp, e));
                        for lane in 0..WARP_SIZE {
                            warp.regs[base + lane] =
                                alu::alu(op, ty, dty, x[lane], y[lane], z[lane], w[lane], sat);
                        }
                    } else {
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
                // Uniform operands: one comparison for the warp (a loop counter's test).
                let uni = full
                    && is_uni(warp, *a)
                    && is_uni(warp, *b)
                    && bop.is_none_or(|(_, c, _)| is_uni(warp, c));
                if uni {
                    let x = alu::compare(*cmp, *ty, get(warp, *a, 0), get(warp, *b, 0));
                    let (rp, rq) = match bop {
                        Some((op, c, neg)) => {
                            let pc = (get(warp, *c, 0) != 0) != *neg;
                            (alu::combine(*op, x, pc), alu::combine(*op, !x, pc))
                        }
                        None => (x, !x),
                    };
                    splat(warp, *p, rp as u64);
                    if let Some(q) = q {
                        splat(warp, *q, rq as u64);
                    }
                    return Ok(());
                }
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
                let int = |t: Ty| matches!(t.kind, Kind::Unsigned | Kind::Signed);
                if int(dty) && int(sty) && !sat {
                    // Integer widening/narrowing, inline: extend from the source's width by
                    // its sign, keep the destination's width.
                    let (sbits, dbits) = (sty.bits(), dty.bits());
                    if sty.kind == Kind::Signed {
                        write(warp, *d, *a, exec, full, |v| {
                            alu::trunc(alu::sext(v, sbits) as u64, dbits)
                        });
                    } else {
                        write(warp, *d, *a, exec, full, |v| {
                            alu::trunc(alu::trunc(v, sbits), dbits)
                        });
                    }
                } else {
                    write(warp, *d, *a, exec, full, |v| {
                        alu::convert(v, dty, sty, round, ir, sat)
                    });
                }
            }
            Instr::CvtFloat {
                d,
                a,
                b,
                dfmt,
                sfmt,
                src_n,
                round,
                away,
                relu,
                satfinite,
            } => {
                let (dfmt, sfmt, round, away, relu, sat) =
                    (*dfmt, *sfmt, *round, *away, *relu, *satfinite);
                let (sbits, dbits) = (sfmt.bits(), dfmt.bits());
                let convert = |x: f64| {
                    let x = if relu && x < 0.0 { 0.0 } else { x };
                    dfmt.encode(x, round, away, sat)
                };
                for lane in lanes(exec) {
                    let va = get(warp, *a, lane);
                    let v = match b {
                        // Two scalar sources: `a` is the high element.
                        Some(b) => {
                            let lo = convert(sfmt.decode(get(warp, *b, lane)));
                            let hi = convert(sfmt.decode(va));
                            alu::trunc(lo, dbits) | alu::trunc(hi, dbits) << dbits
                        }
                        None => {
                            let mut v = 0;
                            for k in 0..*src_n as u32 {
                                let x = sfmt.decode(alu::trunc(va >> (k * sbits), sbits));
                                v |= alu::trunc(convert(x), dbits) << (k * dbits);
                            }
                            v
                        }
                    };
                    warp.regs[*d as usize * WARP_SIZE + lane] = v;
                }
                warp.uni[*d as usize] = false;
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
                        self.store(global, pc, at.space[lane], off, w, get(warp, *s, lane))?;
                    }
                }
            }
            // The rest: kept out of this function so that its stack frame, paid on every
            // instruction, stays small.
            _ => self.step_more(warp, pc, exec, full, global, sink)?,
        }
        Ok(())
    }

    /// The instructions `step` hands on: half-precision arithmetic, packing, atomics,
    /// asynchronous copies, warp-level exchange, matrix and barrier instructions.
    #[inline(never)]
    #[allow(clippy::too_many_arguments)]
    fn step_more(
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
        match &inst.instr {
            Instr::AluHalf {
                op,
                ty,
                lanes: n,
                d,
                a,
                b,
                c,
                sat,
                relu,
            } => {
                let (op, ty, n, sat, relu) = (*op, *ty, *n as u32, *sat, *relu);
                for lane in lanes(exec) {
                    let (va, vb, vc) = (
                        get(warp, *a, lane),
                        get(warp, *b, lane),
                        get(warp, *c, lane),
                    );
                    let mut v = 0;
                    for k in 0..n {
                        let part = |x: u64| (x >> (16 * k)) & 0xFFFF;
                        let mut r = alu::alu(op, ty, ty, part(va), part(vb), part(vc), 0, sat);
                        // `.relu`: negative results become +0 (NaN stays NaN).
                        if relu && r & 0x8000 != 0 && !alu::to_f(r, ty).is_nan() {
                            r = 0;
                        }
                        v |= (r & 0xFFFF) << (16 * k);
                    }
                    warp.regs[*d as usize * WARP_SIZE + lane] = v;
                }
                warp.uni[*d as usize] = false;
            }
            Instr::SetpHalf {
                cmp,
                ty,
                p,
                q,
                a,
                b,
            } => {
                for lane in lanes(exec) {
                    let (va, vb) = (get(warp, *a, lane), get(warp, *b, lane));
                    let lo = alu::compare(*cmp, *ty, va & 0xFFFF, vb & 0xFFFF);
                    let hi = alu::compare(*cmp, *ty, va >> 16 & 0xFFFF, vb >> 16 & 0xFFFF);
                    warp.regs[*p as usize * WARP_SIZE + lane] = lo as u64;
                    if let Some(q) = q {
                        warp.regs[*q as usize * WARP_SIZE + lane] = hi as u64;
                    }
                }
                warp.uni[*p as usize] = false;
                if let Some(q) = q {
                    warp.uni[*q as usize] = false;
                }
            }
            Instr::Cvta { d, a, space, to } => {
                let win = match space {
                    MemSpace::Shared => window::SHARED,
                    MemSpace::Local => window::LOCAL,
                    MemSpace::Const => window::CONST,
                    _ => 0,
                };
                let to = *to;
                write(warp, *d, *a, exec, full, |v| {
                    if to {
                        v.wrapping_sub(win) & if win == 0 { u64::MAX } else { 0xFFFF_FFFF }
                    } else {
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
                    self.store(global, pc, s, off, w, new)?;
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
                // A lane whose `src-size` is 0 reads no global memory: it only zero-fills
                // its shared bytes (Triton masks its pipelined loads this way).
                let reads = match src_bytes {
                    Some(s) => lanes(exec)
                        .filter(|&lane| get(warp, *s, lane) != 0)
                        .fold(0u32, |m, lane| m | 1 << lane),
                    None => exec,
                };
                let from = self.addresses(warp, *src, reads);
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
                    reads,
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
                        self.store(global, pc, dst_at.space[lane], dst_at.image[lane] + k, 1, v)?;
                    }
                }
            }
            Instr::TensorCopy(t) => {
                for lane in lanes(exec) {
                    self.tensor_copy(warp, pc, lane, t, global, sink)?;
                }
            }
            i @ Instr::CpBulk { .. } => self.cp_bulk(warp, pc, exec, i, global, sink)?,
            Instr::TensormapReplace(t) => {
                self.tensormap_replace(warp, pc, exec, t, global, sink)?
            }
            Instr::BulkPrefetch { addr, size, site } => {
                self.bulk_prefetch(warp, pc, exec, (*addr, *size), *site, sink)?
            }
            Instr::TensormapCopy {
                dst,
                src,
                load_site,
                store_site,
            } => self.tensormap_copy(
                warp,
                pc,
                exec,
                (*dst, *src),
                (*load_site, *store_site),
                global,
                sink,
            )?,
            Instr::AsyncStore(a) => self.async_store(warp, pc, exec, a, global, sink)?,
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
            Instr::Elect { d, p, mask } => {
                let members = exec & get(warp, *mask, exec.trailing_zeros() as usize) as u32;
                let leader = members.trailing_zeros() as u64;
                if let Some(d) = d {
                    write_value(warp, *d, leader, exec, full);
                }
                if let Some(p) = p {
                    for lane in lanes(exec) {
                        warp.regs[*p as usize * WARP_SIZE + lane] = (lane as u64 == leader) as u64;
                    }
                    warp.uni[*p as usize] = false;
                }
            }
            Instr::IsSpace { p, a, space } => {
                let window = |v: u64| match v >> 60 {
                    1 => MemSpace::Shared,
                    2 => MemSpace::Const,
                    3 => MemSpace::Local,
                    _ => MemSpace::Global,
                };
                let space = *space;
                write(warp, *p, *a, exec, full, |v| (window(v) == space) as u64);
            }
            Instr::Texture(t) => self.texture(warp, pc, exec, full, t, sink)?,
            Instr::Tensor(_) | Instr::Wmma(_) => {
                self.tensor(warp, pc, exec, global, &inst.instr, sink)?
            }
            Instr::Wgmma(w) => self.wgmma(warp, pc, exec, global, w, sink)?,
            Instr::Tcgen05(t) => self.tcgen05(warp, pc, exec, global, t, sink)?,
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
                                self.store(
                                    global,
                                    pc,
                                    at.space[*row],
                                    o,
                                    2,
                                    (v >> (16 * k)) & 0xFFFF,
                                )?;
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
            Instr::Clock { d, bytes } => {
                let v = alu::trunc(self.steps, *bytes as u32 * 8);
                write_value(warp, *d, v, exec, full);
            }
            Instr::Mbarrier {
                op,
                space,
                d,
                addr,
                count,
            } => {
                let addr = (addr.base, addr.offset);
                self.mbarrier(warp, pc, exec, *op, *space, *d, addr, *count)?;
            }
            Instr::Nop
            | Instr::MbarrierWait { .. }
            | Instr::Sleep
            | Instr::Bra { .. }
            | Instr::Exit
            | Instr::Trap
            | Instr::AssertFail { .. }
            | Instr::Ret
            | Instr::Bar
            | Instr::ClusterArrive
            | Instr::ClusterWait
            | Instr::Call { .. } => {}
            Instr::Mapa {
                d,
                a,
                rank,
                generic,
            } => {
                let base = *d as usize * WARP_SIZE;
                for lane in lanes(exec) {
                    let v = self
                        .mapa(get(warp, *a, lane), get(warp, *rank, lane), *generic)
                        .map_err(|msg| Error::Fault {
                            at: self.at(pc),
                            msg,
                            thread: self.thread(warp, lane),
                            block: self.block,
                        })?;
                    warp.regs[base + lane] = if *generic { v } else { v & 0xFFFF_FFFF };
                }
                warp.uni[*d as usize] = false;
            }
            Instr::GetCtaRank { d, a, generic } => {
                let base = *d as usize * WARP_SIZE;
                for lane in lanes(exec) {
                    warp.regs[base + lane] = self.getctarank(get(warp, *a, lane), *generic);
                }
                warp.uni[*d as usize] = false;
            }
            _ => {}
        }
        Ok(())
    }
}

/// Whether `op` on `ty` is an integer operation whose result is just the wrapped value
/// (add, sub, mul.lo, mad.lo, and, or, xor), for [`Instr::Alu`]'s fast path.
fn int_fast(op: Alu, ty: Ty, sat: bool) -> bool {
    !sat && matches!(ty.kind, Kind::Unsigned | Kind::Signed)
        && matches!(
            op,
            Alu::Add | Alu::Sub | Alu::Mul | Alu::Mad | Alu::And | Alu::Or | Alu::Xor
        )
}

/// `d = f(a, b, c) & mask` on the executing lanes; `f` is inlined into the lane loop.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn map_lanes(
    warp: &mut Warp,
    exec: u32,
    d: Reg,
    a: Src,
    b: Src,
    c: Src,
    mask: u64,
    f: impl Fn(u64, u64, u64) -> u64,
) {
    let base = d as usize * WARP_SIZE;
    if exec == u32::MAX {
        // A whole warp: the operands' lanes gathered once, a loop the compiler vectorizes.
        let (x, y, z) = (all_lanes(warp, a), all_lanes(warp, b), all_lanes(warp, c));
        let out: &mut [u64; WARP_SIZE] = (&mut warp.regs[base..base + WARP_SIZE])
            .try_into()
            .expect("a register holds WARP_SIZE lanes");
        for i in 0..WARP_SIZE {
            out[i] = f(x[i], y[i], z[i]) & mask;
        }
    } else {
        for lane in lanes(exec) {
            let v = f(get(warp, a, lane), get(warp, b, lane), get(warp, c, lane));
            warp.regs[base + lane] = v & mask;
        }
    }
    warp.uni[d as usize] = false;
}

pub(super) fn atom_value(op: AtomOp, ty: Ty, old: u64, b: u64, c: u64) -> u64 {
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
