//! The SIMT interpreter. It runs one block at a time with all of the block's threads in
//! lockstep, one value per thread, under an active-thread mask that `if`/`else`, loops,
//! `break`, `continue` and `return` narrow as the hardware's divergence does. Running the
//! whole block in lockstep is a legal schedule of a race-free kernel: every statement
//! finishes for all warps before the next starts, so `__syncthreads()` holds trivially and
//! shared memory written before a barrier is seen after it. Each memory instruction is
//! emitted once per warp that has an active lane, with the addresses of that warp's active
//! lanes — exactly the warp-level access the hardware sees.

use crate::error::{Error, Result, ThreadCoord};
use crate::ir::{addr, AtomicOp, BinOp, Builtin, Expr, ExprKind, Home, Loc, SiteId, Stmt, UnOp};
use crate::lanes::{atomic_scalar, intrinsic_scalar, warp_op};
use crate::lower::Lowered;
use crate::types::Ty;
use warpscope_init::Contents;
use warpscope_model::{Op, Space, WarpAccess, WARP_SIZE};

/// Canonical form of an integer of `bytes` bytes: wrapped to its width, then sign- or
/// zero-extended to 64 bits.
pub fn canon(v: u64, bytes: u8, signed: bool) -> u64 {
    if bytes >= 8 {
        return v;
    }
    let bits = bytes as u32 * 8;
    let m = (1u64 << bits) - 1;
    let x = v & m;
    if signed && (x >> (bits - 1)) & 1 == 1 {
        x | !m
    } else {
        x
    }
}

fn f(v: u64) -> f64 {
    f64::from_bits(v)
}

fn round_float(x: f64, bytes: u8) -> u64 {
    match bytes {
        2 => (half::f16::from_f64(x).to_f64()).to_bits(),
        4 => (x as f32 as f64).to_bits(),
        _ => x.to_bits(),
    }
}

/// The value `v` of type `t` as a signed 64-bit integer (for indexes and messages).
pub fn as_i64(v: u64, t: &Ty) -> i64 {
    match t {
        Ty::Float(_) => f(v) as i64,
        _ => v as i64,
    }
}

/// Converts a scalar from type `from` to type `to` (C conversions; float → int truncates and
/// saturates as PTX's `cvt.rzi` does).
pub fn cast_scalar(v: u64, from: &Ty, to: &Ty) -> u64 {
    match (from, to) {
        (_, Ty::Bool) => match from {
            Ty::Float(_) => (f(v) != 0.0) as u64,
            _ => (v != 0) as u64,
        },
        (Ty::Float(_), Ty::Float(b)) => round_float(f(v), *b),
        (Ty::Float(_), Ty::Int { bytes, signed }) => {
            let x = f(v);
            if *signed {
                canon(x as i64 as u64, *bytes, true)
            } else {
                canon(x as u64, *bytes, false)
            }
        }
        (Ty::Int { signed, .. }, Ty::Float(b)) => {
            let x = if *signed { v as i64 as f64 } else { v as f64 };
            round_float(x, *b)
        }
        (Ty::Bool, Ty::Float(b)) => round_float(v as f64, *b),
        (_, Ty::Int { bytes, signed }) => canon(v, *bytes, *signed),
        _ => v,
    }
}

pub fn unop_scalar(op: UnOp, v: u64, t: &Ty) -> u64 {
    match (op, t) {
        (UnOp::LogicalNot, _) => (v == 0) as u64,
        (UnOp::Neg, Ty::Float(b)) => round_float(-f(v), *b),
        (UnOp::Abs, Ty::Float(b)) => round_float(f(v).abs(), *b),
        (UnOp::Neg, Ty::Int { bytes, signed }) => canon(v.wrapping_neg(), *bytes, *signed),
        (UnOp::BitNot, Ty::Int { bytes, signed }) => canon(!v, *bytes, *signed),
        (UnOp::Abs, Ty::Int { bytes, signed }) => {
            if *signed && (v as i64) < 0 {
                canon(v.wrapping_neg(), *bytes, true)
            } else {
                v
            }
        }
        _ => v,
    }
}

/// Applies a binary operator to operands of type `t` (already converted). Comparisons give
/// 0/1. `Err(())` for an integer division by zero.
pub fn binop_scalar(op: BinOp, a: u64, b: u64, t: &Ty) -> std::result::Result<u64, ()> {
    Ok(match t {
        Ty::Float(bytes) => {
            let (x, y) = (f(a), f(b));
            let r = match op {
                BinOp::Add => x + y,
                BinOp::Sub => x - y,
                BinOp::Mul => x * y,
                BinOp::Div => x / y,
                BinOp::Min => x.min(y),
                BinOp::Max => x.max(y),
                BinOp::Lt => return Ok((x < y) as u64),
                BinOp::Le => return Ok((x <= y) as u64),
                BinOp::Gt => return Ok((x > y) as u64),
                BinOp::Ge => return Ok((x >= y) as u64),
                BinOp::Eq => return Ok((x == y) as u64),
                BinOp::Ne => return Ok((x != y) as u64),
                _ => x,
            };
            round_float(r, *bytes)
        }
        _ => {
            let (bytes, signed) = match t {
                Ty::Int { bytes, signed } => (*bytes, *signed),
                Ty::Bool => (4, true),
                _ => (8, false),
            };
            let bits = bytes as u32 * 8;
            let (sa, sb) = (a as i64, b as i64);
            let r = match op {
                BinOp::Add => a.wrapping_add(b),
                BinOp::Sub => a.wrapping_sub(b),
                BinOp::Mul => a.wrapping_mul(b),
                BinOp::Div | BinOp::Rem => {
                    if canon(b, bytes, signed) == 0 {
                        return Err(());
                    }
                    match (op, signed) {
                        (BinOp::Div, true) => sa.wrapping_div(sb) as u64,
                        (BinOp::Div, false) => canon(a, bytes, false) / canon(b, bytes, false),
                        (_, true) => sa.wrapping_rem(sb) as u64,
                        (_, false) => canon(a, bytes, false) % canon(b, bytes, false),
                    }
                }
                // Shift counts of the width or more give 0 (or the sign), as PTX's shl/shr do.
                BinOp::Shl => {
                    if b >= bits as u64 {
                        0
                    } else {
                        a << b
                    }
                }
                BinOp::Shr => {
                    let n = b.min(bits as u64 - 1 + (!signed) as u64) as u32;
                    if signed {
                        (sa >> n.min(63)) as u64
                    } else if n >= bits {
                        0
                    } else {
                        canon(a, bytes, false) >> n
                    }
                }
                BinOp::BitAnd => a & b,
                BinOp::BitOr => a | b,
                BinOp::BitXor => a ^ b,
                BinOp::Min
                | BinOp::Max
                | BinOp::Lt
                | BinOp::Le
                | BinOp::Gt
                | BinOp::Ge
                | BinOp::Eq
                | BinOp::Ne => {
                    let ord = if signed { sa.cmp(&sb) } else { a.cmp(&b) };
                    use std::cmp::Ordering::*;
                    return Ok(match op {
                        BinOp::Min => {
                            if ord == Greater {
                                b
                            } else {
                                a
                            }
                        }
                        BinOp::Max => {
                            if ord == Less {
                                b
                            } else {
                                a
                            }
                        }
                        BinOp::Lt => (ord == Less) as u64,
                        BinOp::Le => (ord != Greater) as u64,
                        BinOp::Gt => (ord == Greater) as u64,
                        BinOp::Ge => (ord != Less) as u64,
                        BinOp::Eq => (ord == Equal) as u64,
                        _ => (ord != Equal) as u64,
                    });
                }
            };
            canon(r, bytes, signed)
        }
    })
}

/// Integer add/sub/mul/bitwise ops and comparisons over whole vectors, with the type
/// dispatch hoisted out of the loop (the interpreter's hot path). Returns false when the
/// operation needs the general per-lane path.
fn binop_fast(op: BinOp, a: &mut [u64], b: &[u64], t: &Ty) -> bool {
    let (bytes, signed) = match t {
        Ty::Int { bytes, signed } => (*bytes, *signed),
        _ => return false,
    };
    macro_rules! arith {
        ($f:expr) => {{
            for (x, y) in a.iter_mut().zip(b) {
                *x = canon($f(*x, *y), bytes, signed);
            }
            true
        }};
    }
    macro_rules! cmp {
        ($f:expr) => {{
            if signed {
                for (x, y) in a.iter_mut().zip(b) {
                    *x = $f(*x as i64, *y as i64) as u64;
                }
            } else {
                for (x, y) in a.iter_mut().zip(b) {
                    *x = $f(*x, *y) as u64;
                }
            }
            true
        }};
    }
    match op {
        BinOp::Add => arith!(|x: u64, y: u64| x.wrapping_add(y)),
        BinOp::Sub => arith!(|x: u64, y: u64| x.wrapping_sub(y)),
        BinOp::Mul => arith!(|x: u64, y: u64| x.wrapping_mul(y)),
        BinOp::BitAnd => arith!(|x: u64, y: u64| x & y),
        BinOp::BitOr => arith!(|x: u64, y: u64| x | y),
        BinOp::BitXor => arith!(|x: u64, y: u64| x ^ y),
        BinOp::Lt => cmp!(|x, y| x < y),
        BinOp::Le => cmp!(|x, y| x <= y),
        BinOp::Gt => cmp!(|x, y| x > y),
        BinOp::Ge => cmp!(|x, y| x >= y),
        BinOp::Eq => cmp!(|x, y| x == y),
        BinOp::Ne => cmp!(|x, y| x != y),
        _ => false,
    }
}

/// The in-memory bytes (little-endian) of scalar `v` of type `t`; 8 bytes, of which the
/// first `size(t)` are meaningful.
pub fn to_bytes(v: u64, t: &Ty) -> [u8; 8] {
    match t {
        Ty::Float(2) => (half::f16::from_f64(f(v)).to_bits() as u64).to_le_bytes(),
        Ty::Float(4) => ((f(v) as f32).to_bits() as u64).to_le_bytes(),
        _ => v.to_le_bytes(),
    }
}

fn from_bytes(b: &[u8], t: &Ty) -> u64 {
    let mut buf = [0u8; 8];
    buf[..b.len()].copy_from_slice(b);
    let raw = u64::from_le_bytes(buf);
    match t {
        Ty::Float(2) => half::f16::from_bits(raw as u16).to_f64().to_bits(),
        Ty::Float(4) => (f32::from_bits(raw as u32) as f64).to_bits(),
        Ty::Int { bytes, signed } => canon(raw, *bytes, *signed),
        Ty::Bool => (raw & 0xff != 0) as u64,
        _ => raw,
    }
}

/// One value per thread of the block: scalars as encoded `u64`s, aggregates as bytes
/// (thread-major, `size` bytes each).
#[derive(Clone, Debug)]
enum V {
    S(Vec<u64>),
    B(Vec<u8>),
}

impl V {
    fn s(self) -> Vec<u64> {
        match self {
            V::S(v) => v,
            // Aggregates never reach scalar contexts: lowering types them as structs.
            V::B(_) => Vec::new(),
        }
    }
}

type Mask = Vec<bool>;

fn any(m: &[bool]) -> bool {
    m.iter().any(|&b| b)
}

const PAGE_BITS: u32 = 16;
const PAGE: usize = 1 << PAGE_BITS;

/// Global memory of one allocation: its initial contents (`--init`; zero by default) until
/// written, written bytes stored in 64 KiB pages.
#[derive(Default)]
struct Paged {
    pages: Vec<Option<Box<[u8]>>>,
    initial: Contents,
}

impl Paged {
    fn read(&self, off: u64, out: &mut [u8]) {
        let (p, o) = ((off >> PAGE_BITS) as usize, (off as usize) & (PAGE - 1));
        if o + out.len() <= PAGE {
            match self.pages.get(p) {
                Some(Some(pg)) => out.copy_from_slice(&pg[o..o + out.len()]),
                _ => self.initial.read(off, out),
            }
            return;
        }
        for (i, b) in out.iter_mut().enumerate() {
            let o = off + i as u64;
            let p = (o >> PAGE_BITS) as usize;
            *b = match self.pages.get(p) {
                Some(Some(pg)) => pg[(o as usize) & (PAGE - 1)],
                _ => {
                    let mut x = [0u8; 1];
                    self.initial.read(o, &mut x);
                    x[0]
                }
            };
        }
    }

    /// Page `p`, made on first write from the initial contents.
    fn page(&mut self, p: usize) -> &mut [u8] {
        if p >= self.pages.len() {
            self.pages.resize_with(p + 1, || None);
        }
        let initial = &self.initial;
        self.pages[p].get_or_insert_with(|| {
            let mut pg = vec![0u8; PAGE].into_boxed_slice();
            initial.read((p as u64) << PAGE_BITS, &mut pg);
            pg
        })
    }

    fn write(&mut self, off: u64, data: &[u8]) {
        let (p, o) = ((off >> PAGE_BITS) as usize, (off as usize) & (PAGE - 1));
        if o + data.len() <= PAGE {
            self.page(p)[o..o + data.len()].copy_from_slice(data);
            return;
        }
        for (i, b) in data.iter().enumerate() {
            let o = off + i as u64;
            let p = (o >> PAGE_BITS) as usize;
            self.page(p)[(o as usize) & (PAGE - 1)] = *b;
        }
    }
}

/// A launch: grid and block shape, kernel arguments, sizes.
#[derive(Clone, Debug)]
pub struct LaunchConfig {
    pub grid: [u32; 3],
    pub block: [u32; 3],
    /// One encoded value per kernel parameter (ignored for pointer parameters).
    pub args: Vec<u64>,
    /// Bytes of each global allocation when bounded (indexed like `Lowered::allocs`).
    pub alloc_sizes: Vec<Option<u64>>,
    /// Initial contents of each global allocation (indexed like `alloc_sizes`; missing
    /// entries are zero). A `__device__` variable's initializer is written over it.
    pub alloc_contents: Vec<Contents>,
    /// Bytes of `extern __shared__` memory.
    pub dynamic_shared_bytes: u64,
    /// Iterations one loop may run in one block before it is called runaway.
    pub max_steps: u64,
}

/// Where `extern __shared__` memory starts: after the static shared variables, 16-byte
/// aligned.
pub fn dynamic_shared_base(prog: &Lowered) -> u64 {
    prog.static_shared_bytes.div_ceil(16).saturating_mul(16)
}

/// Runs the launch and calls `sink` with every warp-level access. Errors stop the run.
pub fn run(
    prog: &Lowered,
    file: &str,
    cfg: &LaunchConfig,
    sink: &mut dyn FnMut(SiteId, &WarpAccess, WarpOrigin),
) -> Result<()> {
    let t = (cfg.block[0] * cfg.block[1] * cfg.block[2]) as usize;
    let mut tid = [vec![0u32; t], vec![0u32; t], vec![0u32; t]];
    for l in 0..t {
        let l32 = l as u32;
        tid[0][l] = l32 % cfg.block[0];
        tid[1][l] = (l32 / cfg.block[0]) % cfg.block[1];
        tid[2][l] = l32 / (cfg.block[0] * cfg.block[1]);
    }
    let globals: Vec<Paged> = prog
        .allocs
        .iter()
        .enumerate()
        .map(|(i, a)| {
            let mut p = Paged {
                pages: Vec::new(),
                initial: cfg.alloc_contents.get(i).cloned().unwrap_or_default(),
            };
            if !a.init.is_empty() {
                p.write(0, &a.init);
            }
            p
        })
        .collect();
    let dyn_base = dynamic_shared_base(prog);
    let mut m = Machine {
        prog,
        file,
        cfg,
        t,
        tid,
        block: [0; 3],
        regs: vec![vec![0u64; t]; prog.slots],
        private: vec![0u8; t * prog.private_bytes as usize],
        shared: vec![0u8; dyn_base.saturating_add(cfg.dynamic_shared_bytes) as usize],
        globals,
        dyn_base,
        brk: Vec::new(),
        cont: Vec::new(),
        ret: vec![false; t],
        ret_val: None,
        sink,
        block_linear: 0,
    };
    let kernel = &prog.funcs[prog.kernel];
    for bz in 0..cfg.grid[2] {
        for by in 0..cfg.grid[1] {
            for bx in 0..cfg.grid[0] {
                m.block = [bx, by, bz];
                m.block_linear =
                    bx as u64 + cfg.grid[0] as u64 * (by as u64 + cfg.grid[1] as u64 * bz as u64);
                for (p, v) in kernel.params.iter().zip(&cfg.args) {
                    if let Home::Reg(s) = p.home {
                        m.regs[s].iter_mut().for_each(|x| *x = *v);
                    }
                }
                for (i, p) in kernel.params.iter().enumerate() {
                    if let (Home::Reg(s), Some(Some(a))) = (p.home, prog.param_allocs.get(i)) {
                        let base = addr::ALLOC_BASE + *a as u64 * addr::ALLOC_SPACING;
                        m.regs[s].iter_mut().for_each(|x| *x = base);
                    }
                }
                m.ret.iter_mut().for_each(|r| *r = false);
                let mut mask = vec![true; t];
                m.exec(&kernel.body, &mut mask)?;
            }
        }
    }
    Ok(())
}

struct Machine<'a> {
    prog: &'a Lowered,
    file: &'a str,
    cfg: &'a LaunchConfig,
    t: usize,
    tid: [Vec<u32>; 3],
    block: [u32; 3],
    block_linear: u64,
    regs: Vec<Vec<u64>>,
    private: Vec<u8>,
    shared: Vec<u8>,
    globals: Vec<Paged>,
    dyn_base: u64,
    brk: Vec<Mask>,
    cont: Vec<Mask>,
    ret: Mask,
    ret_val: Option<V>,
    sink: &'a mut dyn FnMut(SiteId, &WarpAccess, WarpOrigin),
}

/// Which warp issued an access: its block's coordinates and its index within the block
/// (threads `32·warp … 32·warp + 31` in linear thread order).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WarpOrigin {
    pub block: [u32; 3],
    pub warp: u32,
}

fn op_name(op: Op) -> &'static str {
    match op {
        Op::Load => "load",
        Op::Store => "store",
        Op::Atomic => "atomic",
    }
}

/// Where an address points.
#[derive(Clone, Copy)]
enum Target {
    Global(usize, u64),
    Shared(u64),
    Constant(u64),
    Private(usize, u64),
}

impl<'a> Machine<'a> {
    fn coord(&self, lane: usize) -> ThreadCoord {
        ThreadCoord {
            thread: [self.tid[0][lane], self.tid[1][lane], self.tid[2][lane]],
            block: self.block,
        }
    }

    fn exec(&mut self, s: &Stmt, m: &mut Mask) -> Result<()> {
        crate::lower::with_stack(|| self.exec_inner(s, m))
    }

    fn exec_inner(&mut self, s: &Stmt, m: &mut Mask) -> Result<()> {
        if !any(m) {
            return Ok(());
        }
        match s {
            Stmt::Expr(x) => {
                self.eval(x, m)?;
            }
            Stmt::Block(v) => {
                for st in v {
                    self.exec(st, m)?;
                    if !any(m) {
                        break;
                    }
                }
            }
            Stmt::If { cond, then, els } => {
                let c = self.eval(cond, m)?.s();
                let mut mt: Mask = m.iter().zip(&c).map(|(a, b)| *a && *b != 0).collect();
                let mut me: Mask = m.iter().zip(&c).map(|(a, b)| *a && *b == 0).collect();
                self.exec(then, &mut mt)?;
                if let Some(e) = els {
                    self.exec(e, &mut me)?;
                }
                for (i, x) in m.iter_mut().enumerate() {
                    *x = mt[i] || me[i];
                }
            }
            Stmt::Loop {
                cond,
                body,
                step,
                test_first,
                loc,
            } => {
                let entry = m.clone();
                let mut lm = m.clone();
                self.brk.push(vec![false; self.t]);
                self.cont.push(vec![false; self.t]);
                let mut first = true;
                let mut iters = 0u64;
                let r = (|| -> Result<()> {
                    loop {
                        if *test_first || !first {
                            if let Some(c) = cond {
                                let cv = self.eval(c, &lm)?.s();
                                for (x, c) in lm.iter_mut().zip(&cv) {
                                    *x = *x && *c != 0;
                                }
                            }
                        }
                        first = false;
                        if !any(&lm) {
                            return Ok(());
                        }
                        iters += 1;
                        if iters > self.cfg.max_steps {
                            return Err(Error::StepLimit {
                                file: self.file.to_string(),
                                loc: *loc,
                                limit: self.cfg.max_steps,
                                block: self.block,
                            });
                        }
                        if let Some(c) = self.cont.last_mut() {
                            c.iter_mut().for_each(|x| *x = false);
                        }
                        self.exec(body, &mut lm)?;
                        if let Some(c) = self.cont.last() {
                            for (x, c) in lm.iter_mut().zip(c) {
                                *x = *x || *c;
                            }
                        }
                        if let Some(st) = step {
                            if any(&lm) {
                                self.eval(st, &lm)?;
                            }
                        }
                    }
                })();
                self.brk.pop();
                self.cont.pop();
                r?;
                for (i, x) in m.iter_mut().enumerate() {
                    *x = entry[i] && !self.ret[i];
                }
            }
            Stmt::Break => {
                if let Some(b) = self.brk.last_mut() {
                    for (x, y) in b.iter_mut().zip(m.iter()) {
                        *x = *x || *y;
                    }
                }
                m.iter_mut().for_each(|x| *x = false);
            }
            Stmt::Continue => {
                if let Some(c) = self.cont.last_mut() {
                    for (x, y) in c.iter_mut().zip(m.iter()) {
                        *x = *x || *y;
                    }
                }
                m.iter_mut().for_each(|x| *x = false);
            }
            Stmt::Return(v) => {
                if let Some(x) = v {
                    let val = self.eval(x, m)?;
                    let size = self.prog.structs.size(&x.ty) as usize;
                    match (&mut self.ret_val, val) {
                        (Some(V::S(dst)), V::S(src)) => {
                            for l in 0..self.t {
                                if m[l] {
                                    dst[l] = src[l];
                                }
                            }
                        }
                        (Some(V::B(dst)), V::B(src)) => {
                            for l in 0..self.t {
                                if m[l] {
                                    dst[l * size..(l + 1) * size]
                                        .copy_from_slice(&src[l * size..(l + 1) * size]);
                                }
                            }
                        }
                        _ => {}
                    }
                }
                for l in 0..self.t {
                    if m[l] {
                        self.ret[l] = true;
                    }
                }
                m.iter_mut().for_each(|x| *x = false);
            }
            Stmt::Switch {
                value,
                cases,
                default,
                body,
            } => {
                let v = self.eval(value, m)?.s();
                let mut entry = vec![usize::MAX; self.t];
                let mut skip = vec![false; self.t];
                for l in 0..self.t {
                    if !m[l] {
                        continue;
                    }
                    match cases
                        .iter()
                        .find(|(k, _)| *k == v[l])
                        .map(|c| c.1)
                        .or(*default)
                    {
                        Some(p) => entry[l] = p,
                        None => skip[l] = true,
                    }
                }
                self.brk.push(vec![false; self.t]);
                let mut cur = vec![false; self.t];
                let mut r = Ok(());
                for (i, st) in body.iter().enumerate() {
                    for l in 0..self.t {
                        if entry[l] == i {
                            cur[l] = true;
                        }
                    }
                    r = self.exec(st, &mut cur);
                    if r.is_err() {
                        break;
                    }
                }
                let b = self.brk.pop().unwrap_or_default();
                r?;
                for l in 0..self.t {
                    m[l] = cur[l] || b.get(l).copied().unwrap_or(false) || skip[l];
                }
            }
            Stmt::Sync => {}
        }
        Ok(())
    }

    fn eval(&mut self, x: &Expr, m: &[bool]) -> Result<V> {
        crate::lower::with_stack(|| self.eval_inner(x, m))
    }

    fn eval_inner(&mut self, x: &Expr, m: &[bool]) -> Result<V> {
        let t = self.t;
        Ok(match &x.kind {
            ExprKind::Const(v) => V::S(vec![*v; t]),
            ExprKind::Reg(s) => V::S(self.regs[*s].clone()),
            ExprKind::Builtin(b) => V::S(match b {
                Builtin::ThreadIdx(a) => self.tid[*a as usize].iter().map(|v| *v as u64).collect(),
                Builtin::BlockIdx(a) => vec![self.block[*a as usize] as u64; t],
                Builtin::BlockDim(a) => vec![self.cfg.block[*a as usize] as u64; t],
                Builtin::GridDim(a) => vec![self.cfg.grid[*a as usize] as u64; t],
                Builtin::WarpSize => vec![WARP_SIZE as u64; t],
            }),
            ExprKind::Load { addr, site } => {
                let a = self.eval(addr, m)?.s();
                self.load(&a, m, &x.ty, *site, x.loc)?
            }
            ExprKind::Store { addr, value, site } => {
                let a = self.eval(addr, m)?.s();
                let v = self.eval(value, m)?;
                self.store(&a, m, &x.ty, &v, *site, x.loc)?;
                v
            }
            ExprKind::SetReg { slot, value } => {
                let v = self.eval(value, m)?.s();
                let r = &mut self.regs[*slot];
                for l in 0..t {
                    if m[l] {
                        r[l] = v[l];
                    }
                }
                V::S(v)
            }
            ExprKind::Unary(op, a) => {
                let mut v = self.eval(a, m)?.s();
                v.iter_mut().for_each(|e| *e = unop_scalar(*op, *e, &x.ty));
                V::S(v)
            }
            ExprKind::Binary(op, a, b) => {
                let mut av = self.eval(a, m)?.s();
                let bv = self.eval(b, m)?.s();
                let ty = &a.ty;
                if binop_fast(*op, &mut av, &bv, ty) {
                    return Ok(V::S(av));
                }
                for l in 0..t {
                    match binop_scalar(*op, av[l], bv[l], ty) {
                        Ok(r) => av[l] = r,
                        Err(()) => {
                            if m[l] {
                                return Err(Error::DivisionByZero {
                                    file: self.file.to_string(),
                                    loc: x.loc,
                                    thread: self.coord(l),
                                });
                            }
                            av[l] = 0;
                        }
                    }
                }
                V::S(av)
            }
            ExprKind::Cast(a) => {
                let v = self.eval(a, m)?;
                match v {
                    V::S(mut s) => {
                        match (&a.ty, &x.ty) {
                            (f, t) if f == t => {}
                            (Ty::Int { .. } | Ty::Ptr(_), Ty::Ptr(_))
                            | (Ty::Ptr(_), Ty::Int { bytes: 8, .. }) => {}
                            // Widening that keeps the value: the canonical form is unchanged.
                            (
                                Ty::Int {
                                    bytes: fb,
                                    signed: fs,
                                },
                                Ty::Int { bytes, signed },
                            ) if fb < bytes && (*fs == *signed || !*fs) => {}
                            (Ty::Int { .. }, Ty::Int { bytes, signed }) => {
                                s.iter_mut().for_each(|e| *e = canon(*e, *bytes, *signed))
                            }
                            _ => s
                                .iter_mut()
                                .for_each(|e| *e = cast_scalar(*e, &a.ty, &x.ty)),
                        }
                        V::S(s)
                    }
                    b => b,
                }
            }
            ExprKind::PtrAdd { ptr, index, scale } => {
                let mut p = self.eval(ptr, m)?.s();
                let i = self.eval(index, m)?.s();
                for l in 0..t {
                    p[l] = p[l].wrapping_add(i[l].wrapping_mul(*scale));
                }
                V::S(p)
            }
            ExprKind::PtrDiff { a, b, scale } => {
                let mut av = self.eval(a, m)?.s();
                let bv = self.eval(b, m)?.s();
                for l in 0..t {
                    av[l] = ((av[l].wrapping_sub(bv[l]) as i64) / *scale as i64) as u64;
                }
                V::S(av)
            }
            ExprKind::Cond(c, a, b) => {
                let cv = self.eval(c, m)?.s();
                let ma: Mask = (0..t).map(|l| m[l] && cv[l] != 0).collect();
                let mb: Mask = (0..t).map(|l| m[l] && cv[l] == 0).collect();
                let va = if any(&ma) {
                    Some(self.eval(a, &ma)?)
                } else {
                    None
                };
                let vb = if any(&mb) {
                    Some(self.eval(b, &mb)?)
                } else {
                    None
                };
                let size = self.prog.structs.size(&x.ty) as usize;
                match (va, vb) {
                    (Some(V::S(mut a)), Some(V::S(b))) => {
                        for l in 0..t {
                            if cv[l] == 0 {
                                a[l] = b[l];
                            }
                        }
                        V::S(a)
                    }
                    (Some(V::B(mut a)), Some(V::B(b))) => {
                        for l in 0..t {
                            if cv[l] == 0 {
                                a[l * size..(l + 1) * size]
                                    .copy_from_slice(&b[l * size..(l + 1) * size]);
                            }
                        }
                        V::B(a)
                    }
                    (Some(v), None) | (None, Some(v)) => v,
                    _ => self.zero(&x.ty),
                }
            }
            ExprKind::LogicalAnd(a, b) | ExprKind::LogicalOr(a, b) => {
                let is_and = matches!(x.kind, ExprKind::LogicalAnd(..));
                let mut av = self.eval(a, m)?.s();
                let mb: Mask = (0..t).map(|l| m[l] && ((av[l] != 0) == is_and)).collect();
                if any(&mb) {
                    let bv = self.eval(b, &mb)?.s();
                    for l in 0..t {
                        if mb[l] {
                            av[l] = (bv[l] != 0) as u64;
                        }
                    }
                }
                V::S(av.into_iter().map(|v| (v != 0) as u64).collect())
            }
            ExprKind::Call { func, args } => {
                let mut vals = Vec::new();
                for a in args {
                    vals.push(self.eval(a, m)?);
                }
                self.call(*func, vals, m)?
            }
            ExprKind::Member { base, offset } => {
                let b = self.eval(base, m)?;
                let bsize = self.prog.structs.size(&base.ty) as usize;
                let fsize = self.prog.structs.size(&x.ty) as usize;
                let V::B(bytes) = b else {
                    return Ok(self.zero(&x.ty));
                };
                let o = *offset as usize;
                if x.ty.is_scalar() {
                    V::S(
                        (0..t)
                            .map(|l| {
                                from_bytes(&bytes[l * bsize + o..l * bsize + o + fsize], &x.ty)
                            })
                            .collect(),
                    )
                } else {
                    let mut out = vec![0u8; t * fsize];
                    for l in 0..t {
                        out[l * fsize..(l + 1) * fsize]
                            .copy_from_slice(&bytes[l * bsize + o..l * bsize + o + fsize]);
                    }
                    V::B(out)
                }
            }
            ExprKind::Seq(a, b) => {
                self.eval(a, m)?;
                self.eval(b, m)?
            }
            ExprKind::MakeAgg(items) => {
                let size = self.prog.structs.size(&x.ty) as usize;
                let mut out = vec![0u8; t * size];
                for (off, it) in items {
                    let v = self.eval(it, m)?.s();
                    let w = self.prog.structs.size(&it.ty) as usize;
                    for l in 0..t {
                        let b = to_bytes(v[l], &it.ty);
                        let o = l * size + *off as usize;
                        out[o..o + w].copy_from_slice(&b[..w]);
                    }
                }
                V::B(out)
            }
            ExprKind::PrivateAddr(off) => V::S(
                (0..t)
                    .map(|l| addr::PRIVATE | ((l as u64) << addr::PRIVATE_LANE_SHIFT) | off)
                    .collect(),
            ),
            ExprKind::DynSharedBase => V::S(vec![addr::SHARED + self.dyn_base; t]),
            ExprKind::Intrinsic(f, args) => {
                let mut vals = Vec::new();
                for a in args {
                    vals.push(self.eval(a, m)?.s());
                }
                let at = args.first().map_or(&x.ty, |a| &a.ty);
                let mut ops = vec![0u64; vals.len()];
                V::S(
                    (0..t)
                        .map(|l| {
                            ops.iter_mut().zip(&vals).for_each(|(o, v)| *o = v[l]);
                            intrinsic_scalar(*f, &ops, at, &x.ty)
                        })
                        .collect(),
                )
            }
            ExprKind::Atomic {
                op,
                addr,
                value,
                compare,
                site,
            } => {
                let a = self.eval(addr, m)?.s();
                let v = self.eval(value, m)?.s();
                let c = match compare {
                    Some(c) => Some(self.eval(c, m)?.s()),
                    None => None,
                };
                self.atomic(*op, &a, &v, c.as_deref(), m, &x.ty, *site, x.loc)?
            }
            ExprKind::Warp(op, args) => {
                let mut vals = Vec::new();
                for a in args {
                    vals.push(self.eval(a, m)?.s());
                }
                V::S(warp_op(*op, &vals, m))
            }
        })
    }

    fn zero(&self, ty: &Ty) -> V {
        if ty.is_scalar() || *ty == Ty::Void {
            V::S(vec![0; self.t])
        } else {
            V::B(vec![0; self.t * self.prog.structs.size(ty) as usize])
        }
    }

    fn call(&mut self, id: usize, args: Vec<V>, m: &[bool]) -> Result<V> {
        let f = &self.prog.funcs[id];
        let t = self.t;
        for (p, v) in f.params.iter().zip(args) {
            match (p.home, v) {
                (Home::Reg(s), V::S(v)) => {
                    for l in 0..t {
                        if m[l] {
                            self.regs[s][l] = v[l];
                        }
                    }
                }
                (Home::Private(o), v) => {
                    let size = self.prog.structs.size(&p.ty) as usize;
                    let pb = self.prog.private_bytes as usize;
                    for l in 0..t {
                        if !m[l] {
                            continue;
                        }
                        let dst = l * pb + o as usize;
                        match &v {
                            V::S(s) => {
                                let b = to_bytes(s[l], &p.ty);
                                self.private[dst..dst + size].copy_from_slice(&b[..size]);
                            }
                            V::B(b) => self.private[dst..dst + size]
                                .copy_from_slice(&b[l * size..(l + 1) * size]),
                        }
                    }
                }
                _ => {}
            }
        }
        let saved_ret = std::mem::replace(&mut self.ret, vec![false; t]);
        let saved_val = self.ret_val.replace(self.zero(&f.ret));
        let mut mm = m.to_vec();
        let r = self.exec(&f.body, &mut mm);
        self.ret = saved_ret;
        let v = std::mem::replace(&mut self.ret_val, saved_val);
        r?;
        Ok(v.unwrap_or_else(|| self.zero(&f.ret)))
    }

    /// Resolves an address to its memory, checking bounds for `width` bytes.
    fn target(&self, a: u64, width: u64, lane: usize, op: Op, loc: Loc) -> Result<Target> {
        let space = a >> addr::SPACE_SHIFT << addr::SPACE_SHIFT;
        let bad = |why: String| Error::BadAddress {
            file: self.file.to_string(),
            loc,
            addr: a,
            thread: self.coord(lane),
            why,
        };
        let oob =
            |space: &'static str, alloc: String, size: u64, relation: String| Error::OutOfBounds {
                file: self.file.to_string(),
                loc,
                space,
                op: op_name(op),
                width: width as u32,
                addr: a,
                alloc,
                size,
                relation,
                thread: self.coord(lane),
            };
        let past_end = |off: u64, size: u64| {
            if off >= size {
                format!("{} bytes after its end", off - size)
            } else {
                format!("its last {} bytes past its end", off + width - size)
            }
        };
        match space {
            addr::GLOBAL => {
                let size_of = |j: usize| {
                    self.cfg.alloc_sizes.get(j).copied().flatten().or(self
                        .prog
                        .allocs
                        .get(j)
                        .and_then(|i| i.size))
                };
                // An address just below an allocation belongs to it (a negative index), not
                // to the one before: the nearer of the two is blamed.
                let before = |j: usize, dist: u64, also: String| {
                    let name = self.prog.allocs[j].name.clone();
                    let rel = format!("{dist} bytes before its start{also}");
                    match size_of(j) {
                        Some(sz) => oob("global", name, sz, rel),
                        None => bad(format!("{rel} (allocation '{name}')")),
                    }
                };
                if a < addr::ALLOC_BASE {
                    let dist = addr::ALLOC_BASE - a;
                    if dist <= addr::ALLOC_SPACING / 2 && !self.prog.allocs.is_empty() {
                        return Err(before(0, dist, String::new()));
                    }
                    return Err(bad(if a < 4096 {
                        "null pointer".into()
                    } else {
                        "not inside any allocation".into()
                    }));
                }
                let idx = ((a - addr::ALLOC_BASE) / addr::ALLOC_SPACING) as usize;
                let off = (a - addr::ALLOC_BASE) % addr::ALLOC_SPACING;
                let Some(info) = self.prog.allocs.get(idx) else {
                    return Err(bad("not inside any allocation".into()));
                };
                let size = size_of(idx);
                let inside = match size {
                    Some(sz) => off + width <= sz,
                    None => off <= addr::ALLOC_SPACING / 2,
                };
                if !inside {
                    let has_next = idx + 1 < self.prog.allocs.len();
                    if has_next && off > addr::ALLOC_SPACING / 2 {
                        let dist = addr::ALLOC_SPACING - off;
                        // Far from both: an index of gigabytes may belong to either.
                        let also = match size {
                            Some(sz) if dist > 1 << 30 => {
                                format!(
                                    " (or {} of '{}')",
                                    past_end(off, sz).replace("its", "the"),
                                    info.name
                                )
                            }
                            _ => String::new(),
                        };
                        return Err(before(idx + 1, dist, also));
                    }
                    if let Some(sz) = size {
                        return Err(oob("global", info.name.clone(), sz, past_end(off, sz)));
                    }
                }
                Ok(Target::Global(idx, off))
            }
            addr::SHARED => {
                let off = a - addr::SHARED;
                if off + width > self.shared.len() as u64 {
                    let hint = if off >= self.dyn_base {
                        " (extern __shared__: set its size with --dynamic-smem BYTES)"
                    } else {
                        ""
                    };
                    return Err(oob(
                        "shared",
                        format!("__shared__ memory of the block{hint}"),
                        self.shared.len() as u64,
                        past_end(off, self.shared.len() as u64),
                    ));
                }
                Ok(Target::Shared(off))
            }
            addr::CONSTANT => {
                let off = a - addr::CONSTANT;
                if off + width > self.prog.constant.len() as u64 {
                    return Err(oob(
                        "constant",
                        "__constant__ memory".into(),
                        self.prog.constant.len() as u64,
                        past_end(off, self.prog.constant.len() as u64),
                    ));
                }
                Ok(Target::Constant(off))
            }
            _ => {
                let rest = a - addr::PRIVATE;
                let l = (rest >> addr::PRIVATE_LANE_SHIFT) as usize;
                let off = rest & ((1 << addr::PRIVATE_LANE_SHIFT) - 1);
                if l != lane || off + width > self.prog.private_bytes {
                    return Err(oob(
                        "local",
                        "the thread's local variables".into(),
                        self.prog.private_bytes,
                        if l != lane {
                            "in another thread's local memory".into()
                        } else {
                            past_end(off, self.prog.private_bytes)
                        },
                    ));
                }
                Ok(Target::Private(l, off))
            }
        }
    }

    fn local_model_addr(&self, off: u64, width: u64, lane: usize) -> Option<u64> {
        self.prog
            .local_arrays
            .iter()
            .find(|la| la.start <= off && off < la.end)?;
        let g = width.max(4);
        let t = self.t as u64;
        let per_block = (self.prog.private_bytes.div_ceil(g) * g * t).div_ceil(256) * 256;
        Some(self.block_linear * per_block + (off / g) * g * t + lane as u64 * g + off % g)
    }

    /// Records one instruction (one part of a possibly split access) for every warp with an
    /// active lane, after checking alignment.
    fn record(
        &mut self,
        op: Op,
        width: u32,
        site: SiteId,
        m: &[bool],
        addrs: &[u64],
        part_off: u64,
        loc: Loc,
    ) -> Result<()> {
        let read_only = self.prog.sites[site].read_only && op == Op::Load;
        let nwarps = self.t.div_ceil(WARP_SIZE);
        // One buffer per space, reused across warps: only the mask is reset, since the
        // model never reads the addresses of inactive lanes.
        let mut acc = [WarpAccess {
            space: Space::Global,
            op,
            width,
            mask: 0,
            addrs: [0; WARP_SIZE],
            read_only,
        }; 4];
        for w in 0..nwarps {
            let lo = w * WARP_SIZE;
            let hi = (lo + WARP_SIZE).min(self.t);
            acc.iter_mut().for_each(|a| a.mask = 0);
            let mut misaligned = Vec::new();
            for l in lo..hi {
                if !m[l] {
                    continue;
                }
                let a = addrs[l].wrapping_add(part_off);
                let (space, ma) = match a >> addr::SPACE_SHIFT << addr::SPACE_SHIFT {
                    addr::GLOBAL => (Space::Global, a),
                    addr::SHARED => (Space::Shared, a - addr::SHARED),
                    addr::CONSTANT => (Space::Constant, a - addr::CONSTANT),
                    _ => {
                        let off = (a - addr::PRIVATE) & ((1 << addr::PRIVATE_LANE_SHIFT) - 1);
                        match self.local_model_addr(off, width as u64, l) {
                            Some(la) => (Space::Local, la),
                            None => continue, // registers: no memory instruction
                        }
                    }
                };
                if ma % width as u64 != 0 && space != Space::Local {
                    misaligned.push((l, a));
                }
                let k = space as usize;
                acc[k].space = space;
                acc[k].mask |= 1 << (l - lo);
                acc[k].addrs[l - lo] = ma;
            }
            if !misaligned.is_empty() {
                let lanes: Vec<String> = misaligned
                    .iter()
                    .take(4)
                    .map(|(l, a)| format!("lane {} ({}) at {a:#x}", l % WARP_SIZE, self.coord(*l)))
                    .collect();
                let more = if misaligned.len() > 4 {
                    format!(" and {} more lanes", misaligned.len() - 4)
                } else {
                    String::new()
                };
                return Err(Error::Misaligned {
                    file: self.file.to_string(),
                    loc,
                    op: op_name(op),
                    width,
                    lanes: format!("{}{more}", lanes.join(", ")),
                });
            }
            let origin = WarpOrigin {
                block: self.block,
                warp: w as u32,
            };
            for a in &acc {
                if a.mask != 0 {
                    (self.sink)(site, a, origin);
                }
            }
        }
        Ok(())
    }

    /// An atomic read-modify-write by every active lane, in lane order; the old values.
    #[allow(clippy::too_many_arguments)]
    fn atomic(
        &mut self,
        op: AtomicOp,
        addrs: &[u64],
        v: &[u64],
        compare: Option<&[u64]>,
        m: &[bool],
        ty: &Ty,
        site: SiteId,
        loc: Loc,
    ) -> Result<V> {
        let size = self.prog.structs.size(ty);
        self.record(Op::Atomic, size as u32, site, m, addrs, 0, loc)?;
        let sz = size as usize;
        let mut out = vec![0u64; self.t];
        let mut buf = [0u8; 8];
        for l in 0..self.t {
            if !m[l] {
                continue;
            }
            let tg = self.target(addrs[l], size, l, Op::Atomic, loc)?;
            self.read(tg, &mut buf[..sz]);
            let old = from_bytes(&buf[..sz], ty);
            let new = atomic_scalar(op, old, v[l], compare.map(|c| c[l]), ty);
            let bytes = to_bytes(new, ty);
            match tg {
                Target::Global(i, off) => self.globals[i].write(off, &bytes[..sz]),
                Target::Shared(off) => {
                    self.shared[off as usize..off as usize + sz].copy_from_slice(&bytes[..sz])
                }
                Target::Private(pl, off) => {
                    let s = pl * self.prog.private_bytes as usize + off as usize;
                    self.private[s..s + sz].copy_from_slice(&bytes[..sz]);
                }
                Target::Constant(_) => {
                    return Err(Error::BadAddress {
                        file: self.file.to_string(),
                        loc,
                        addr: addrs[l],
                        thread: self.coord(l),
                        why: "__constant__ memory is read-only in a kernel".into(),
                    })
                }
            }
            out[l] = old;
        }
        Ok(V::S(out))
    }

    fn parts(&self, ty: &Ty) -> Vec<(u64, u32)> {
        if ty.is_scalar() {
            return vec![(0, self.prog.structs.size(ty) as u32)];
        }
        self.prog.structs.access_parts(ty)
    }

    fn load(&mut self, addrs: &[u64], m: &[bool], ty: &Ty, site: SiteId, loc: Loc) -> Result<V> {
        let size = self.prog.structs.size(ty);
        for (o, w) in self.parts(ty) {
            self.record(Op::Load, w, site, m, addrs, o, loc)?;
        }
        let sz = size as usize;
        if ty.is_scalar() {
            // Scalars: read each active lane straight into its value.
            let mut out = vec![0u64; self.t];
            let mut buf = [0u8; 8];
            for l in 0..self.t {
                if m[l] {
                    let tg = self.target(addrs[l], size, l, Op::Load, loc)?;
                    self.read(tg, &mut buf[..sz]);
                    out[l] = from_bytes(&buf[..sz], ty);
                }
            }
            return Ok(V::S(out));
        }
        let mut bytes = vec![0u8; self.t * sz];
        for l in 0..self.t {
            if m[l] {
                let tg = self.target(addrs[l], size, l, Op::Load, loc)?;
                self.read(tg, &mut bytes[l * sz..(l + 1) * sz]);
            }
        }
        Ok(V::B(bytes))
    }

    /// Copies `dst.len()` bytes from the memory `tg` points at.
    fn read(&self, tg: Target, dst: &mut [u8]) {
        let n = dst.len();
        match tg {
            Target::Global(i, off) => self.globals[i].read(off, dst),
            Target::Shared(off) => {
                dst.copy_from_slice(&self.shared[off as usize..off as usize + n])
            }
            Target::Constant(off) => {
                dst.copy_from_slice(&self.prog.constant[off as usize..off as usize + n])
            }
            Target::Private(pl, off) => {
                let s = pl * self.prog.private_bytes as usize + off as usize;
                dst.copy_from_slice(&self.private[s..s + n]);
            }
        }
    }

    fn store(
        &mut self,
        addrs: &[u64],
        m: &[bool],
        ty: &Ty,
        v: &V,
        site: SiteId,
        loc: Loc,
    ) -> Result<()> {
        let size = self.prog.structs.size(ty);
        for (o, w) in self.parts(ty) {
            self.record(Op::Store, w, site, m, addrs, o, loc)?;
        }
        for l in 0..self.t {
            if !m[l] {
                continue;
            }
            let tg = self.target(addrs[l], size, l, Op::Store, loc)?;
            let sb;
            let src: &[u8] = match v {
                V::S(s) => {
                    sb = to_bytes(s[l], ty);
                    &sb[..size as usize]
                }
                V::B(b) => &b[l * size as usize..(l + 1) * size as usize],
            };
            match tg {
                Target::Global(i, off) => self.globals[i].write(off, src),
                Target::Shared(off) => {
                    self.shared[off as usize..(off + size) as usize].copy_from_slice(src)
                }
                Target::Constant(_) => {
                    return Err(Error::BadAddress {
                        file: self.file.to_string(),
                        loc,
                        addr: addrs[l],
                        thread: self.coord(l),
                        why: "__constant__ memory is read-only in a kernel".into(),
                    })
                }
                Target::Private(pl, off) => {
                    let s = pl * self.prog.private_bytes as usize + off as usize;
                    self.private[s..s + size as usize].copy_from_slice(src);
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Initial contents read where nothing was written, also across pages and around a write.
    #[test]
    fn paged_memory_reads_its_initial_contents() {
        let bytes: Vec<u8> = (0..2 * PAGE).map(|i| (i % 251) as u8).collect();
        let mut p = Paged {
            pages: Vec::new(),
            initial: Contents::Bytes(bytes.clone().into()),
        };
        let mut out = [0u8; 4];
        p.read(PAGE as u64 - 2, &mut out);
        assert_eq!(out[..], bytes[PAGE - 2..PAGE + 2]);
        p.write(10, &[0xAA]);
        p.read(8, &mut out);
        assert_eq!(out, [bytes[8], bytes[9], 0xAA, bytes[11]]);
        p.read(2 * PAGE as u64, &mut out);
        assert_eq!(out, [0; 4]);
    }
}
