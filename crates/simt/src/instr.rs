//! The executor's instruction form: PTX decoded once into a flat array of instructions with
//! resolved register indices, immediates and branch targets (a register machine in the
//! style of wasmi's bytecode), so that running a warp never looks at names or strings.

use warpscope_model::{Op, Space};

/// A register index into a warp's register file.
pub type Reg = u32;

/// A scalar type as PTX spells it [PTX ISA §5.2.2]: its class and its size in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Ty {
    pub kind: Kind,
    /// Bytes: 1, 2, 4 or 8 (a predicate is 1).
    pub bytes: u8,
}

/// The class of a PTX type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    /// `.u*`, and `.b*` bit types (treated as unsigned).
    Unsigned,
    /// `.s*`.
    Signed,
    /// `.f16`, `.f32`, `.f64` (IEEE binary16/32/64).
    Float,
    /// `.bf16` (bfloat16).
    BFloat,
    /// `.pred`.
    Pred,
}

impl Ty {
    pub const U32: Ty = Ty {
        kind: Kind::Unsigned,
        bytes: 4,
    };
    pub const U64: Ty = Ty {
        kind: Kind::Unsigned,
        bytes: 8,
    };
    pub const PRED: Ty = Ty {
        kind: Kind::Pred,
        bytes: 1,
    };

    /// Parses a PTX type word without its dot (`u32`, `f16x2` is not a scalar: `None`).
    pub fn parse(s: &str) -> Option<Ty> {
        if s == "bf16" {
            return Some(Ty {
                kind: Kind::BFloat,
                bytes: 2,
            });
        }
        let (kind, bits) = match s.as_bytes().first()? {
            b'u' | b'b' => (Kind::Unsigned, &s[1..]),
            b's' => (Kind::Signed, &s[1..]),
            b'f' => (Kind::Float, &s[1..]),
            _ if s == "pred" => return Some(Ty::PRED),
            _ => return None,
        };
        let bytes = match bits {
            "8" => 1,
            "16" => 2,
            "32" => 4,
            "64" => 8,
            _ => return None,
        };
        if kind == Kind::Float && bytes == 1 {
            return None;
        }
        Some(Ty { kind, bytes })
    }

    /// Bits of the type.
    pub fn bits(self) -> u32 {
        self.bytes as u32 * 8
    }
}

/// A source operand: a register or an immediate (already encoded as the instruction's type
/// expects: floats as their bits).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Src {
    Reg(Reg),
    Imm(u64),
}

/// Integer/float arithmetic with two or three sources [PTX ISA §9.7.1–§9.7.4].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Alu {
    Add,
    Sub,
    /// Low half of the product (`mul.lo`, or the float product).
    Mul,
    MulHi,
    /// `mul.wide`: the full product of two n-bit sources, 2n bits.
    MulWide,
    Mul24Lo,
    Mul24Hi,
    Div,
    Rem,
    Min,
    Max,
    And,
    Or,
    Xor,
    Shl,
    Shr,
    /// `mad.lo`/`fma`/float `mad`: a·b + c.
    Mad,
    MadHi,
    MadWide,
    Mad24Lo,
    Abs,
    Neg,
    Not,
    CNot,
    Popc,
    Clz,
    Brev,
    Bfind,
    /// Float unary functions.
    Rcp,
    Sqrt,
    Rsqrt,
    Sin,
    Cos,
    Lg2,
    Ex2,
    Tanh,
    Copysign,
    /// `bfe`: bit-field extract (a, pos, len).
    Bfe,
    /// `bfi`: bit-field insert (f, b, pos, len).
    Bfi,
    /// `prmt.b32` default mode (a, b, selector).
    Prmt,
    /// `lop3.b32` (a, b, c, immLut).
    Lop3,
    /// `shf.l/r` funnel shift (a, b, shift), clamp or wrap in the flag.
    ShfL {
        clamp: bool,
    },
    ShfR {
        clamp: bool,
    },
    /// `sad`: |a - b| + c.
    Sad,
    /// `testp.finite` etc. are decoded to `Testp`.
    Testp(TestpKind),
    /// `dp4a.u32.u32` and signed variants (a, b, c).
    Dp4a {
        a_signed: bool,
        b_signed: bool,
    },
    /// `fns`: find the n-th set bit (mask, base, offset).
    Fns,
    /// `prmt.b32.mode` with a mode (`f4e`, `b4e`, `rc8`, `ecl`, `ecr`, `rc16`): the byte
    /// selection of that mode's table [PTX ISA §9.7.8.7], indexed by selector bits 1:0.
    PrmtMode(PrmtMode),
    /// `bmsk.clamp|wrap.b32 d, pos, len`: `len` ones from bit `pos` [PTX ISA §9.7.1.25].
    Bmsk {
        clamp: bool,
    },
    /// `szext.clamp|wrap.s32|u32 d, a, width`: sign or zero extension of `a`'s low `width`
    /// bits [PTX ISA §9.7.1.26].
    Szext {
        clamp: bool,
    },
    /// `dp2a.lo|hi`: two 16×8-bit products of `a`'s halves and `b`'s low (`lo`) or high bytes,
    /// plus `c` [PTX ISA §9.7.1.24].
    Dp2a {
        a_signed: bool,
        b_signed: bool,
        hi: bool,
    },
}

/// The byte-permute modes of `prmt` other than the default.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PrmtMode {
    F4e,
    B4e,
    Rc8,
    Ecl,
    Ecr,
    Rc16,
}

/// `testp` properties.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TestpKind {
    Finite,
    Infinite,
    Number,
    NotANumber,
    Normal,
    Subnormal,
}

/// A `setp`/`set` comparison [PTX ISA §9.7.6].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cmp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    /// Unsigned forms of integer comparisons (`lo`, `ls`, `hi`, `hs`).
    Lo,
    Ls,
    Hi,
    Hs,
    /// Float: ordered/unordered variants.
    Equ,
    Neu,
    Ltu,
    Leu,
    Gtu,
    Geu,
    Num,
    Nan,
}

/// `.and`/`.or`/`.xor` combination of a comparison with a predicate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BoolOp {
    And,
    Or,
    Xor,
}

/// Float rounding of `cvt` and arithmetic (`.rn`, `.rz`, `.rm`, `.rp`; `.rni` … for
/// float-to-integer rounding).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Round {
    Nearest,
    Zero,
    Down,
    Up,
}

/// `shfl.sync` modes [PTX ISA §9.7.9.6].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShflMode {
    Up,
    Down,
    Bfly,
    Idx,
}

/// `vote.sync` modes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VoteMode {
    All,
    Any,
    Uni,
    Ballot,
}

/// `redux.sync` operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReduxOp {
    Add,
    Min,
    Max,
    And,
    Or,
    Xor,
}

/// Atomic operations [PTX ISA §9.7.13.5].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AtomOp {
    Add,
    Min,
    Max,
    Inc,
    Dec,
    And,
    Or,
    Xor,
    Exch,
    Cas,
}

/// An `mbarrier` operation that does not wait [PTX ISA §9.7.13.15].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MbarOp {
    /// `init [a], count`: a fresh barrier expecting `count` arrivals a phase.
    Init,
    /// `inval [a]`.
    Inval,
    /// `expect_tx [a], bytes`: the current phase waits for `bytes` more.
    ExpectTx,
    /// `complete_tx [a], bytes`: `bytes` of the phase's transactions are done.
    CompleteTx,
    /// `arrive` (`count` arrivals, 1 by default); `drop` also lowers the expected count
    /// (`arrive_drop`); `expect_tx` adds `count` bytes to the transaction count and arrives
    /// once; `no_complete` arrives without completing (`.noComplete`, `cp.async.mbarrier.arrive.noinc`).
    Arrive {
        drop: bool,
        expect_tx: bool,
        no_complete: bool,
    },
}

/// A memory instruction's site: the PTX instruction and where its source is.
#[derive(Clone, Debug)]
pub struct Site {
    /// 1-based line of the instruction in the PTX text.
    pub ptx_line: u32,
    /// The instruction as written, without operands (`ld.global.v4.f32`).
    pub ptx: String,
    pub op: Op,
    /// The state space after resolving (generic accesses are resolved per lane at run time;
    /// this is the space written on the instruction, `None` for generic).
    pub space: Option<Space>,
    /// Loads through the non-coherent read-only path (`ld.global.nc`, `ldu`).
    pub read_only: bool,
    /// An atomic or reduction (`atom`, `red`): its own operation in reports.
    pub atomic: bool,
    /// Source position from the nearest `.loc` before it: (file index, line, column).
    pub loc: Option<(u32, u32, u32)>,
    /// `inlined_at` of that `.loc`: where the inlined function was called.
    pub inlined_at: Option<(u32, u32, u32)>,
    /// The whole chain of call sites the code at `loc` was inlined through, innermost
    /// first (at most 16): a library's function inlined through several of its headers is
    /// attributed to the first of them in the user's code.
    pub callers: Vec<(u32, u32, u32)>,
    /// What ptxas made of it, once [`crate::Program::apply_sass`] has run.
    pub sass: crate::sass::SassFate,
}

/// How an address operand is formed: `[reg + off]` or `[imm]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Addr {
    pub base: Option<Reg>,
    pub offset: i64,
}

/// State space named on a memory instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MemSpace {
    Global,
    Shared,
    Local,
    Const,
    Param,
    Generic,
}

impl MemSpace {
    /// Whether a load from this space reads what the launch set (kernel parameters, the
    /// constant bank), so that its values are known even when no memory image is kept.
    pub fn is_known_without_image(self) -> bool {
        matches!(self, MemSpace::Param | MemSpace::Const)
    }
}

/// What a texture/surface instruction does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TexOp {
    /// `tex`: a filtered (or point) fetch.
    Fetch,
    /// `tld4`: the 2×2 bilinear footprint, one component of each texel.
    Gather,
    /// `suld.b`: a surface load.
    SurfLoad,
    /// `sust.b`/`sust.p`: a surface store.
    SurfStore,
}

/// How a surface access treats coordinates outside the surface (`.trap`, `.clamp`, `.zero`
/// [PTX ISA §9.7.10.7]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Boundary {
    Trap,
    Clamp,
    Zero,
}

/// A texture fetch or surface access [PTX ISA §9.7.10]: `handle` is the texture/surface
/// object (a `.u64` register holding the handle the launch gave the parameter); `coords` are
/// x, y, z as the geometry needs (1–3), `layer` the array index of `.a1d`/`.a2d`;
/// `float_coords` says whether they are `.f32` (else `.s32`; a surface's x is in bytes).
#[derive(Clone, Debug)]
pub struct TexInstr {
    pub op: TexOp,
    pub handle: Src,
    pub coords: Vec<Src>,
    pub layer: Option<Src>,
    pub float_coords: bool,
    /// Results (a fetch or surface load); written as 0: texture contents are not modelled.
    pub ds: Vec<Option<Reg>>,
    /// Values a surface store writes (unused: only its addresses matter).
    pub srcs: Vec<Src>,
    pub boundary: Boundary,
    pub site: u32,
}

/// One decoded instruction. `guard` (on [`Inst`]) decides which lanes execute it.
#[derive(Clone, Debug)]
pub enum Instr {
    /// `d = op(a, b, c)` in type `ty`; `dty` is the destination type (differs for
    /// `mul.wide`); `sat` saturates float results to [0, 1] (`.sat`) or integers to the type's
    /// range.
    Alu {
        op: Alu,
        ty: Ty,
        dty: Ty,
        d: Reg,
        a: Src,
        b: Src,
        c: Src,
        e: Src,
        sat: bool,
    },
    /// `d = a` (also `mov` of an address).
    Mov { d: Reg, a: Src, bytes: u8 },
    /// `setp.cmp[.bop].ty p[|q], a, b[, c]`.
    Setp {
        cmp: Cmp,
        ty: Ty,
        bop: Option<(BoolOp, Src, bool)>,
        p: Reg,
        q: Option<Reg>,
        a: Src,
        b: Src,
    },
    /// `set.cmp.dty.ty d, a, b`: all ones (or 1.0f) when true.
    Set {
        cmp: Cmp,
        ty: Ty,
        dty: Ty,
        d: Reg,
        a: Src,
        b: Src,
    },
    /// `selp.ty d, a, b, p`.
    Selp { d: Reg, a: Src, b: Src, p: Src },
    /// `slct.dty.s32 d, a, b, c`: a when c ≥ 0 (c float or s32).
    Slct {
        d: Reg,
        a: Src,
        b: Src,
        c: Src,
        cty: Ty,
    },
    /// `cvt[.rnd][.sat].dty.sty d, a`.
    Cvt {
        d: Reg,
        a: Src,
        dty: Ty,
        sty: Ty,
        round: Option<Round>,
        int_round: bool,
        sat: bool,
    },
    /// `cvt` to or from a narrow or packed float format [PTX ISA §9.7.9.21]: `b` given, the
    /// two sources `a` (high element) and `b` (low element) packed into `d`; else `a`'s
    /// `src_n` elements (1, or 2 for an `x2` source) converted to `d`'s. `away` is `.rna`
    /// (ties away from zero); `relu` clamps negatives to 0; `satfinite` clamps to the
    /// format's largest finite value.
    CvtFloat {
        d: Reg,
        a: Src,
        b: Option<Src>,
        dfmt: crate::minifloat::Format,
        sfmt: crate::minifloat::Format,
        src_n: u8,
        round: Option<Round>,
        away: bool,
        relu: bool,
        satfinite: bool,
    },
    /// Half-precision arithmetic with `.relu`, or on both halves of an `.f16x2`/`.bf16x2`
    /// register (`lanes` = 2) [PTX ISA §9.7.4 "Half Precision Floating-Point Instructions"]:
    /// each 16-bit element is computed as [`Instr::Alu`] would in `ty`.
    AluHalf {
        op: Alu,
        ty: Ty,
        lanes: u8,
        d: Reg,
        a: Src,
        b: Src,
        c: Src,
        sat: bool,
        relu: bool,
    },
    /// `setp.cmp.f16x2`/`.bf16x2 p|q, a, b`: `p` from the low halves, `q` from the high.
    SetpHalf {
        cmp: Cmp,
        ty: Ty,
        p: Reg,
        q: Option<Reg>,
        a: Src,
        b: Src,
    },
    /// `cvta[.to].space`: adds (or with `to`, subtracts) the space's generic window.
    Cvta {
        d: Reg,
        a: Src,
        space: MemSpace,
        to: bool,
    },
    /// `mov.b64 d, {lo, hi}` / `mov.b32 d, {a, b}` (pack) and the reverse (unpack).
    Pack {
        d: Reg,
        parts: Vec<Src>,
        part_bytes: u8,
    },
    Unpack {
        ds: Vec<Option<Reg>>,
        a: Src,
        part_bytes: u8,
    },
    /// `ld`/`ldu`: `ds` are the vector's destinations (one for a scalar load).
    Ld {
        space: MemSpace,
        ty: Ty,
        ds: Vec<Option<Reg>>,
        addr: Addr,
        site: u32,
    },
    /// `ldmatrix`/`stmatrix` `.m8n8.xN[.trans].shared.b16` [PTX ISA §9.7.14.5.15–16]: lanes
    /// `0 … 8N-1` each give the address of one 16-byte row (8 × b16) of the N 8×8 matrices;
    /// every lane holds (loads into / stores from) one 32-bit register per matrix: two
    /// consecutive b16 of row `lane/4` (with `.trans`, of column `lane/4`).
    Matrix {
        store: bool,
        trans: bool,
        regs: Vec<Src>,
        addr: Addr,
        site: u32,
    },
    /// `st`.
    St {
        space: MemSpace,
        ty: Ty,
        srcs: Vec<Src>,
        addr: Addr,
        site: u32,
    },
    /// `atom`/`red` (red has no destination).
    Atom {
        space: MemSpace,
        op: AtomOp,
        ty: Ty,
        d: Option<Reg>,
        addr: Addr,
        b: Src,
        c: Src,
        site: u32,
    },
    /// `cp.async.*.shared.global [dst], [src], bytes[, src_bytes]`: a global load and a
    /// shared store of `bytes` per lane.
    CpAsync {
        dst: Addr,
        src: Addr,
        bytes: u8,
        src_bytes: Option<Src>,
        load_site: u32,
        store_site: u32,
    },
    /// `cp.async.bulk.dst.src[.mbarrier::complete_tx::bytes][.multicast::cluster] [dst],
    /// [src], size[, [mbar][, ctaMask]]` [PTX ISA §9.7.9.25.4.1] and
    /// `cp.reduce.async.bulk.dst.src.completion.redOp.type [dst], [src], size[, [mbar]]`
    /// [PTX ISA §9.7.9.25.4.2]: a bulk copy (or reduction) of `size` bytes (a multiple of
    /// 16) by the executing thread, global → shared (completing `size` transaction bytes on
    /// `mbar`), shared → global, shared::cta → shared::cluster (another block's shared
    /// memory and mbarrier), or with `multicast` (a 16-bit mask of cluster ranks) global →
    /// the same shared offset and mbarrier of every block of the mask. Executed and
    /// reported by `exec/bulk.rs`.
    CpBulk {
        dst: Addr,
        src: Addr,
        dst_space: MemSpace,
        src_space: MemSpace,
        size: Src,
        mbar: Option<Addr>,
        /// `ctaMask` of `.multicast::cluster` (bit r: cluster rank r).
        multicast: Option<Src>,
        /// `cp.reduce.async.bulk`'s operation and element type: each destination element
        /// becomes `op(destination, source)`.
        reduce: Option<(AtomOp, Ty)>,
        load_site: u32,
        store_site: u32,
    },
    /// `st.async[.weak].shared::cluster.mbarrier::complete_tx::bytes{.v2,.v4}.type [a], b,
    /// [mbar]` and `red.async.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes
    /// .op.type [a], b, [mbar]` [PTX ISA §9.7.9.12, §9.7.13.6]: see [`AsyncStore`].
    AsyncStore(Box<AsyncStore>),
    /// `cp.async.bulk.tensor` in tile mode: see [`TensorCopy`].
    TensorCopy(Box<TensorCopy>),
    /// `cp.async.bulk.prefetch.L2.global [src], size` [PTX ISA §9.7.9.25.4.3]: `size` bytes
    /// (a multiple of 16, from a 16-byte aligned address) read into L2 by the executing
    /// thread, reported as an access of its own (`Op::Prefetch`, 16-byte lanes, one access
    /// per 512-byte aligned piece: its sectors are the ones the bytes cover, measured on H100 in
    /// `lts__t_sectors_srcunit_tex`, tests/data/h100/prefetch/).
    BulkPrefetch { addr: Addr, size: Src, site: u32 },
    /// `tensormap.replace.tile.field{.global,.shared::cta}.b1024.{b32,b64} [addr], {ord,}
    /// new_val` [PTX ISA, "Data Movement and Conversion Instructions: tensormap.replace"]:
    /// see [`TensormapReplace`].
    TensormapReplace(Box<TensormapReplace>),
    /// `tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.scope.sync
    /// .aligned [dst], [src], 128` [PTX ISA, "Parallel Synchronization and Communication
    /// Instructions: tensormap.cp_fenceproxy"]: the warp copies the 128-byte tensor-map object
    /// at shared `src` to global `dst` (and fences it for the tensor-map proxy, which needs no
    /// modelling). Reported as ptxas compiles it: each of 32 lanes reads 4 bytes of shared
    /// memory (`load_site`) and writes them with an atomic exchange to global memory
    /// (`store_site`, `ATOMG.E.EXCH.STRONG.GPU` on sm_90a and sm_100a).
    TensormapCopy {
        dst: Addr,
        src: Addr,
        load_site: u32,
        store_site: u32,
    },
    /// `bra` to instruction index `target`; `uni` says the branch is not divergent.
    Bra { target: u32 },
    /// `bar.sync`/`barrier.sync`/`bar.arrive` (ids and counts ignored: all warps of the
    /// block take part).
    Bar,
    /// `exit` or a kernel's `ret`.
    Exit,
    /// `trap`: a fault when any lane executes it (the kernel aborts).
    Trap,
    /// `mbarrier.op [addr]{, count}` and `arrive`'s state token in `d`.
    Mbarrier {
        op: MbarOp,
        space: MemSpace,
        d: Option<Reg>,
        addr: Addr,
        count: Option<Src>,
    },
    /// `mbarrier.test_wait`/`try_wait[.parity] d, [addr], token`: `d` is whether the phase
    /// of the token (or of the parity) has completed. A `try_wait` (`blocking`) whose phase is
    /// open suspends the warp until it completes (the hardware's time-out and retry loop,
    /// run once); a `test_wait` lets the other warps run before the next test.
    MbarrierWait {
        d: Option<Reg>,
        space: MemSpace,
        addr: Addr,
        token: Src,
        blocking: bool,
    },
    /// `mov d, %clock|%clock64|%globaltimer`: the block's warp instructions so far, one
    /// cycle (or nanosecond) each, so that time-outs and back-off loops advance
    /// deterministically; `bytes` is the destination's width.
    Clock { d: Reg, bytes: u8 },
    /// `nanosleep`: the warp lets the block's other warps run (a spin-wait's back-off).
    Sleep,
    /// A call of `__assertfail` (a device `assert()` whose condition is false): the launch
    /// stops with the assertion's text, file and line, read from the arguments.
    AssertFail { message: Src, file: Src, line: Src },
    /// `ret` from a called function.
    Ret,
    /// `call` of a `.func`: copies `args` into the callee's parameter registers, runs it
    /// (each lane's own return address is the next instruction), copies results back.
    Call {
        target: u32,
        args: Vec<(Reg, Src)>,
        rets: Vec<(Reg, Reg)>,
    },
    /// `shfl.sync.mode.b32 d[|p], a, b, c, membermask`.
    Shfl {
        mode: ShflMode,
        d: Reg,
        p: Option<Reg>,
        a: Src,
        b: Src,
        c: Src,
    },
    /// `vote.sync.mode`.
    Vote {
        mode: VoteMode,
        d: Reg,
        a: Src,
        negate: bool,
    },
    /// `match.any.sync`/`match.all.sync`.
    Match {
        all: bool,
        d: Reg,
        p: Option<Reg>,
        a: Src,
        bytes: u8,
    },
    /// `redux.sync.op`.
    Redux {
        op: ReduxOp,
        signed: bool,
        d: Reg,
        a: Src,
    },
    /// `activemask.b32 d`.
    ActiveMask { d: Reg },
    /// `elect.sync d|p, membermask` [PTX ISA §9.7.13.11]: the lowest executing lane of the
    /// mask is the leader; `d` gets its lane index in every lane, `p` is true in it alone.
    Elect {
        d: Option<Reg>,
        p: Option<Reg>,
        mask: Src,
    },
    /// `isspacep.space p, a`: whether generic address `a` lies in the space's window
    /// [PTX ISA §9.7.9.16].
    IsSpace { p: Reg, a: Src, space: MemSpace },
    /// `tex`, `tld4`, `suld`, `sust`.
    Texture(Box<TexInstr>),
    /// `mma.sync`, `wmma.mma`, `movmatrix` [PTX ISA §9.7.14.5.14, §9.7.14.4.5,
    /// §9.7.14.5.17]: warp-wide arithmetic on fragment registers; no memory moves.
    Tensor(Box<TensorInstr>),
    /// `wmma.load.{a,b,c}` / `wmma.store.d` [PTX ISA §9.7.14.4.3–4]: a fragment from or to
    /// memory, as the accesses ptxas emits for it.
    Wmma(Box<WmmaInstr>),
    /// `wgmma.mma_async` [PTX ISA §9.7.15.5.2]: this warp's quarter of a warpgroup's
    /// `D = A·B (+ D)`, its shared-memory operand reads reported at `site` (see
    /// `exec/wgmma.rs`).
    Wgmma(Box<WgmmaInstr>),
    /// `tcgen05.{alloc,dealloc,relinquish_alloc_permit,ld,st,mma}` [PTX ISA §9.7.16]: the
    /// block's tensor memory and the MMAs on it (`exec/tcgen05.rs`).
    Tcgen05(Box<Tc5Op>),
    /// `mapa[.shared::cluster].u32|u64 d, a, rank` [PTX ISA §9.7.9.22]: the address of the
    /// same shared-memory location as `a` in the block of cluster rank `rank`: a
    /// `shared::cluster` window address (`generic` false) or a generic one (`generic`
    /// true). See `exec/cluster.rs` for how such an address names its block.
    Mapa {
        d: Reg,
        a: Src,
        rank: Src,
        generic: bool,
    },
    /// `getctarank[.shared::cluster].u32 d, a` [PTX ISA §9.7.9.23]: the cluster rank of the
    /// block whose shared memory address `a` lies in.
    GetCtaRank { d: Reg, a: Src, generic: bool },
    /// `barrier.cluster.arrive[.release|.relaxed][.aligned]` [PTX ISA §9.7.13.4]: the
    /// executing threads arrive on the cluster-wide barrier's current phase.
    ClusterArrive,
    /// `barrier.cluster.wait[.acquire][.aligned]`: the warp waits until every non-exited
    /// thread of the cluster has arrived on the phase it arrived on.
    ClusterWait,
    /// Instructions with no effect on memory accesses or values we track (`membar`,
    /// `fence`, `prefetch`, `cp.async.commit_group`, `cp.async.wait_*`, `bar.warp.sync`,
    /// `nanosleep`, `pmevent`, …).
    Nop,
}

/// An instruction with its guard predicate and its PTX line (for errors).
#[derive(Clone, Debug)]
pub struct Inst {
    pub instr: Instr,
    /// `@p` / `@!p`: (register, negated).
    pub guard: Option<(Reg, bool)>,
    pub ptx_line: u32,
    pub ptx_col: u32,
    /// The source position in force (file index, line, column), for errors.
    pub loc: Option<(u32, u32, u32)>,
}

impl Instr {
    /// Whether this instruction ends a basic block.
    pub fn is_terminator(&self) -> bool {
        matches!(self, Instr::Bra { .. } | Instr::Exit | Instr::Ret)
    }
}

/// The element type of a tensor-core operand [PTX ISA §9.7.14.5.1, §9.7.14.4.1]: how many
/// bits it has and how a value is read (elements are packed into 32-bit registers from the
/// low bits up; `.f64` takes a 64-bit register per element).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MmaElem {
    F16,
    BF16,
    /// `.tf32`: an f32 register of which the hardware reads the top 19 bits.
    TF32,
    F32,
    F64,
    /// `.e4m3`/`.e5m2`: 8-bit floats [PTX ISA §5.2.5].
    E4M3,
    E5M2,
    /// `.e3m2`/`.e2m3`: 6-bit floats in 8-bit containers, as `mma .kind::f8f6f4` and
    /// `.kind::mxf8f6f4` read them [PTX ISA §9.7.14.5.14]: the value in bits 7–2 (its
    /// mantissa's low bit at bit 2, as e2m1's below; unmeasured here: no sm_120 GPU).
    E3M2,
    E2M3,
    /// `.e2m1` of `.kind::f8f6f4`/`.kind::mxf8f6f4` (m16n8k32): a 4-bit float in an 8-bit
    /// container, the value in bits 5–2 (measured on an sm_120 GPU by others: bits 3–0 give
    /// wrong products).
    E2M1Byte,
    /// `.e2m1` of `.kind::mxf4`/`.kind::mxf4nvf4` (m16n8k64): 4-bit floats packed eight to
    /// a register [PTX ISA §9.7.14.5.x "Matrix fragments for mma.m16n8k64"].
    E2M1,
    S8,
    U8,
    S4,
    U4,
    /// `.b1`: single bits, combined by `.xor.popc` or `.and.popc`.
    B1,
    S32,
}

impl MmaElem {
    /// Parses a PTX type word without its dot.
    pub fn parse(s: &str) -> Option<MmaElem> {
        use MmaElem::*;
        Some(match s {
            "f16" => F16,
            "bf16" => BF16,
            "tf32" => TF32,
            "f32" => F32,
            "f64" => F64,
            "e4m3" => E4M3,
            "e5m2" => E5M2,
            "e3m2" => E3M2,
            "e2m3" => E2M3,
            "e2m1" => E2M1,
            "s8" => S8,
            "u8" => U8,
            "s4" => S4,
            "u4" => U4,
            "b1" => B1,
            "s32" => S32,
            _ => return None,
        })
    }

    /// Bits of one element.
    pub fn bits(self) -> u32 {
        use MmaElem::*;
        match self {
            F64 => 64,
            TF32 | F32 | S32 => 32,
            F16 | BF16 => 16,
            E4M3 | E5M2 | E3M2 | E2M3 | E2M1Byte | S8 | U8 => 8,
            S4 | U4 | E2M1 => 4,
            B1 => 1,
        }
    }

    /// Elements one register holds (a 64-bit register holds one `.f64`).
    pub fn per_reg(self) -> u32 {
        (32 / self.bits()).max(1)
    }
}

/// Whose fragment layouts apply to a tensor-core instruction's registers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MmaApi {
    /// `mma.sync`: the layouts of the PTX ISA's figures [§9.7.14.5.x "Matrix fragments for
    /// mma.mMnNkK"].
    Sync,
    /// `wmma`: the ISA leaves the layouts unspecified; ptxas builds them from the `mma`
    /// m16n8kK fragments (see `exec/mma.rs`).
    Wmma,
}

/// `D = A·B + C` of an `mma.sync` or `wmma.mma` [PTX ISA §9.7.14.5.14, §9.7.14.4.5]: A is
/// `m`×`k`, B `k`×`n`, C and D `m`×`n`, each spread over the warp's registers as `api`'s
/// fragment layout says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MmaShape {
    pub api: MmaApi,
    pub m: u32,
    pub n: u32,
    pub k: u32,
    pub a: MmaElem,
    pub b: MmaElem,
    pub c: MmaElem,
    pub d: MmaElem,
    /// `.row` A and `.row` B: they change the fragments of `mma.sync.m8n8k4` on `.f16`
    /// only (every other `mma` shape is `.row.col`; `wmma.mma`'s fragments do not depend on
    /// them).
    pub a_row: bool,
    pub b_row: bool,
    /// `.satfinite` (integer D clamped to the s32 range instead of wrapping).
    pub satfinite: bool,
    /// `.b1` products: `.and.popc` (else `.xor.popc`).
    pub bit_and: bool,
}

/// The scale factors of a block-scaled `mma.sync` [PTX ISA §9.7.14.3]: each row of A is
/// split along K into `vec` chunks (`.scale_vec::1X`, `2X`, `4X`), each multiplied by its
/// own factor of scale_A (M × vec), each column of B likewise by scale_B (vec × N). The
/// factors are bytes of the 32-bit `sfa`/`sfb` registers: byte `byte + j` for chunk `j`;
/// row m's from lane `4·(m mod 8) + 2·thread + ⌊m/8⌋` of `sfa`, column n's from lane
/// `4·n + thread` of `sfb` (the selector `{byte-id, thread-id}`; the lanes as measured on
/// an sm_120 GPU by others, unmeasured here).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockScale {
    /// Chunks per row of A / column of B: 1, 2 or 4.
    pub vec: u8,
    /// `.ue4m3` factors (`.kind::mxf4nvf4`'s NVFP4), else `.ue8m0`.
    pub ue4m3: bool,
    pub sfa: Src,
    pub sfa_byte: Src,
    pub sfa_thread: Src,
    pub sfb: Src,
    pub sfb_byte: Src,
    pub sfb_thread: Src,
}

/// What a warp-wide tensor-core register instruction computes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TensorOp {
    /// `mma.sync.aligned` or `wmma.mma.sync.aligned`.
    Mma(MmaShape),
    /// `mma.sp{::ordered_metadata}.sync.aligned` [PTX ISA §9.7.14.6]: `shape.k` is the
    /// dense K; the A fragment holds the m×k/2 non-zeros, `e` is the metadata register
    /// (each non-zero's index inside its chunk) and `sel` the sparsity selector (which
    /// threads of each group of four supply it).
    MmaSp {
        shape: MmaShape,
        e: Src,
        sel: u8,
        /// `::ordered_metadata`: each chunk's indices must ascend.
        ordered: bool,
    },
    /// `mma.sync.aligned.kind::{mxf8f6f4,mxf4,mxf4nvf4}.block_scale.scale_vec::NX.shape.row
    /// .col.f32.atype.btype.f32.stype d, a, b, c, scale-a, {byte-id-a, thread-id-a},
    /// scale-b, {byte-id-b, thread-id-b}` [PTX ISA §9.7.14.3 "Block Scaling for mma.sync",
    /// §9.7.14.5.14]: `D = (A·scale_A)(B·scale_B) + C`, see [`BlockScale`].
    MmaScaled { shape: MmaShape, scale: BlockScale },
    /// `movmatrix.sync.aligned.m8n8.trans.b16` [PTX ISA §9.7.14.5.17]: the 8×8 b16 matrix
    /// held one 32-bit register per lane (row `lane/4`, columns `2·(lane%4)` + 0, 1)
    /// transposed.
    MovTrans,
}

/// A tensor-core instruction that moves no memory: `d` are the destination registers, `a`,
/// `b`, `c` the source fragments (movmatrix: `a` only).
#[derive(Clone, Debug)]
pub struct TensorInstr {
    pub op: TensorOp,
    pub d: Vec<Reg>,
    pub a: Vec<Src>,
    pub b: Vec<Src>,
    pub c: Vec<Src>,
}

/// Which fragment a `wmma.load`/`wmma.store` moves: A (`m`×`k`), B (`k`×`n`), or the
/// accumulator C/D (`m`×`n`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WmmaFrag {
    A,
    B,
    C,
}

/// `wmma.load.{a,b,c}` / `wmma.store.d` [PTX ISA §9.7.14.4.3–4]: a matrix of `elem` stored
/// `.row`- or `.col`-major at `addr` with `stride` elements between rows (`.row`) or columns
/// (`.col`; `None`: packed, the matrix's own width), to or from the fragment registers
/// `regs`. The accesses are those ptxas emits (see `exec/mma.rs`).
#[derive(Clone, Debug)]
pub struct WmmaInstr {
    pub store: bool,
    pub frag: WmmaFrag,
    pub m: u32,
    pub n: u32,
    pub k: u32,
    pub elem: MmaElem,
    pub row: bool,
    pub space: MemSpace,
    pub regs: Vec<Src>,
    pub addr: Addr,
    pub stride: Option<Src>,
    pub site: u32,
}

/// `wgmma.mma_async.sync.aligned.m64nNkK.dtype.atype.btype d, a-desc|a, b-desc, scale-d
/// [, imm-scale-a, imm-scale-b[, imm-trans-a], imm-trans-b]` [PTX ISA §9.7.15.5.2]: A is
/// 64×`k` (from the shared-memory matrix descriptor `a_desc`, or the warps' fragment
/// registers `a_regs`), B `k`×`n` (descriptor `b_desc`), D 64×`n` in `d` (each warp its 16
/// rows). Executed warp by warp (`exec/wgmma.rs`).
#[derive(Clone, Debug)]
pub struct WgmmaInstr {
    pub n: u32,
    pub k: u32,
    pub a: MmaElem,
    pub b: MmaElem,
    pub d: MmaElem,
    /// The accumulator and destination registers (read when `scale_d` is true).
    pub dregs: Vec<Reg>,
    /// A's fragment registers (4), when A is not a descriptor.
    pub a_regs: Vec<Src>,
    pub a_desc: Option<Src>,
    pub b_desc: Src,
    /// `scale-d`: a predicate; false computes `D = A·B`.
    pub scale_d: Src,
    /// `imm-scale-a`/`imm-scale-b` of -1 (negated operands).
    pub neg_a: bool,
    pub neg_b: bool,
    /// `imm-trans-a`/`imm-trans-b` of 1: M-major A, N-major B (16-bit types only).
    pub trans_a: bool,
    pub trans_b: bool,
    /// `.satfinite` (s32 D clamped instead of wrapped).
    pub satfinite: bool,
    pub site: u32,
}

/// An asynchronous store or reduction into a block's shared memory of the cluster (usually
/// another block's, a `mapa` address), completing its bytes (`ty.bytes × srcs.len()` a
/// lane) as transaction bytes on `mbar`, an mbarrier of the same block. Executed by
/// `exec/bulk.rs`; reported as one access of `srcs.len() × ty.bytes` bytes a lane: a
/// distributed-shared store (`st.async`) or atomic (`red.async`) row for another block's
/// shared memory, a shared one for the own block's.
#[derive(Clone, Debug)]
pub struct AsyncStore {
    pub ty: Ty,
    /// The value (`red.async`, `st.async`) or the vector's values (`.v2`, `.v4`).
    pub srcs: Vec<Src>,
    /// `red.async`'s operation; `None`: `st.async`.
    pub red: Option<AtomOp>,
    pub addr: Addr,
    pub mbar: Addr,
    pub site: u32,
}

/// `cp.async.bulk.tensor.Nd.shared::cluster.global.tile.mbarrier::complete_tx::bytes [smem],
/// [map, {coords}], [mbar]` (a load, `load`) or `cp.async.bulk.tensor.Nd.global.shared::cta
/// .tile.bulk_group [map, {coords}], [smem]` (a store) [PTX ISA §9.7.9.25.5.1]: `map` holds the
/// address of the `CUtensorMap` parameter, `coords` the box's first element (s32, innermost
/// first). Executed by `crate::exec` against the launch's tensor maps.
#[derive(Clone, Debug)]
pub struct TensorCopy {
    pub load: bool,
    /// `cp.async.bulk.prefetch.tensor.Nd.L2.global[.tile|.im2col] [map, {coords}]`
    /// [PTX ISA §9.7.9.25.5.3]: the box read into L2 only (`load` is set; no shared side,
    /// no data, no mbarrier).
    pub prefetch: bool,
    pub smem: Addr,
    pub map: Src,
    pub coords: Vec<Src>,
    pub mbar: Option<Addr>,
    /// `ctaMask` of `.multicast::cluster` (a load): the box lands at the same shared offset
    /// of every block of the mask, and completes on each one's mbarrier at `mbar`'s offset.
    pub multicast: Option<Src>,
    /// `cp.reduce.async.bulk.tensor`'s operation (a store): each tensor element becomes
    /// `op(element, box element)`, in the tensor map's element type.
    pub reduce: Option<AtomOp>,
    /// `.im2col`'s offsets (a load through an im2col map): one 16-bit offset per spatial
    /// dimension, innermost first, added to every pixel of the column.
    pub im2col: Option<Vec<Src>>,
    /// The site of the global side and of the shared side.
    pub global_site: u32,
    pub shared_site: u32,
}

/// A field of a tensor-map object that `tensormap.replace` writes [PTX ISA, "Data Movement
/// and Conversion Instructions: tensormap.replace"; the fields of `cuTensorMapEncodeTiled`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TensormapField {
    /// `.global_address` (b64): the tensor's first byte.
    GlobalAddress,
    /// `.rank` (b32): the number of dimensions minus one.
    Rank,
    /// `.box_dim` (b32, `ord` 0–4): the box's elements in dimension `ord`.
    BoxDim,
    /// `.global_dim` (b32, `ord` 0–4): the tensor's elements in dimension `ord`.
    GlobalDim,
    /// `.global_stride` (b64, `ord` 0–3): the byte stride of dimension `ord + 1`.
    GlobalStride,
    /// `.element_stride` (b32, `ord` 0–4): the traversal stride in dimension `ord`.
    ElementStride,
    /// `.elemtype` (b32): 0 `.u8`, 1 `.u16`, 2 `.u32`, 3 `.s32`, 4 `.u64`, 5 `.s64`, 6 `.f16`,
    /// 7 `.f32`, 8 `.f32.ftz`, 9 `.f64`, 10 `.bf16`, 11 `.tf32`, 12 `.tf32.ftz`, 13 `.b4x16`,
    /// 14 `.b4x16_p64`, 15 `.b6x16_p32`.
    ElemType,
    /// `.interleave_layout` (b32): 0 none, 1 16 bytes, 2 32 bytes.
    InterleaveLayout,
    /// `.swizzle_mode` (b32): 0 none, 1 32 bytes, 2 64 bytes, 3 128 bytes, 4 96 bytes.
    SwizzleMode,
    /// `.swizzle_atomicity` (b32): 0 16 bytes, 1 32 bytes, 2 32 bytes with an 8-byte flip,
    /// 3 64 bytes.
    SwizzleAtomicity,
    /// `.fill_mode` (b32): 0 zero, 1 NaN (`CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA`).
    FillMode,
}

impl TensormapField {
    /// Every field with its PTX modifier.
    pub const ALL: [(&'static str, TensormapField); 11] = [
        ("global_address", TensormapField::GlobalAddress),
        ("rank", TensormapField::Rank),
        ("box_dim", TensormapField::BoxDim),
        ("global_dim", TensormapField::GlobalDim),
        ("global_stride", TensormapField::GlobalStride),
        ("element_stride", TensormapField::ElementStride),
        ("elemtype", TensormapField::ElemType),
        ("interleave_layout", TensormapField::InterleaveLayout),
        ("swizzle_mode", TensormapField::SwizzleMode),
        ("swizzle_atomicity", TensormapField::SwizzleAtomicity),
        ("fill_mode", TensormapField::FillMode),
    ];

    /// The field's PTX modifier (`box_dim`).
    pub fn name(self) -> &'static str {
        Self::ALL
            .iter()
            .find(|(_, f)| *f == self)
            .map_or("?", |(n, _)| n)
    }

    /// Whether the field is one of a dimension (`[addr], ord, new_val`).
    pub fn has_ord(self) -> bool {
        matches!(
            self,
            TensormapField::BoxDim
                | TensormapField::GlobalDim
                | TensormapField::GlobalStride
                | TensormapField::ElementStride
        )
    }

    /// Whether the field's value is 64 bits wide (`.b64`).
    pub fn wide(self) -> bool {
        matches!(
            self,
            TensormapField::GlobalAddress | TensormapField::GlobalStride
        )
    }

    /// The loads and stores ptxas 13 makes of a replacement of this field (sm_90a, sm_100a):
    /// (whether a store, byte offset from the field's word, bytes), loads first.
    pub fn accesses(self) -> &'static [(bool, u64, u32)] {
        match self {
            TensormapField::GlobalAddress => &[(true, 0, 8)],
            TensormapField::GlobalDim => &[(true, 0, 4)],
            TensormapField::GlobalStride => &[(false, 4, 4), (true, 0, 4), (true, 4, 4)],
            _ => &[(false, 0, 4), (true, 0, 4)],
        }
    }

    /// The largest value an enumerated field takes (`None`: not an enumeration).
    pub fn max_value(self) -> Option<u64> {
        match self {
            TensormapField::ElemType => Some(15),
            TensormapField::InterleaveLayout => Some(2),
            TensormapField::SwizzleMode => Some(4),
            TensormapField::SwizzleAtomicity => Some(3),
            TensormapField::FillMode => Some(1),
            _ => None,
        }
    }
}

/// `tensormap.replace.tile.field{.ss}.b1024.type [addr], {ord,} new_val` [PTX ISA, "Data
/// Movement and Conversion Instructions: tensormap.replace"]: writes one field of the
/// 128-byte tensor-map object at `addr` (global, shared::cta or generic memory), for
/// device-side tensor maps (Triton's `tl.make_tensor_descriptor`). The object's layout is
/// opaque in the ISA; warpscope keeps the fields where `exec/tensormap.rs` says, and a
/// `cp.async.bulk.tensor` through the object's global address reads them back. Reported as
/// ptxas 13 compiles it for sm_90a and sm_100a, each executing lane's own: a
/// read-modify-write of the packed word (a 4-byte load and store) for most fields, a store
/// alone for `.global_address` (8 bytes) and `.global_dim`, a store and a read-modify-write
/// for `.global_stride` ([`TensormapField::accesses`]; measured on H100: a Triton 2-d
/// descriptor is 10 `LDS` and 14 `STS`, tests/data/h100/device_desc/).
#[derive(Clone, Debug)]
pub struct TensormapReplace {
    pub space: MemSpace,
    pub addr: Addr,
    pub field: TensormapField,
    /// The dimension of a `box_dim`, `global_dim`, `global_stride` or `element_stride`.
    pub ord: u8,
    pub val: Src,
    /// The sites of its loads (none for `.global_address` and `.global_dim`) and stores.
    pub load_site: u32,
    pub store_site: u32,
}

/// The data-movement shape of `tcgen05.ld`/`tcgen05.st` [PTX ISA §9.7.16.2.3]: TMEM lanes ×
/// bits per lane of one repetition (`.num` repeats it along the columns).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tc5Shape {
    S32x32b,
    S16x64b,
    S16x128b,
    S16x256b,
    S16x32bx2,
}

/// The `.kind` of a `tcgen05.mma` [PTX ISA §9.7.16.10.6]: which multiplicand types the
/// instruction descriptor may name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tc5Kind {
    F16,
    Tf32,
    F8f6f4,
    I8,
    /// The block-scaled kinds [PTX ISA §9.7.16.10.7]: `.kind::mxf8f6f4`, `::mxf4`,
    /// `::mxf4nvf4`.
    MxF8f6f4,
    MxF4,
    MxF4Nvf4,
}

/// The shape of a `tcgen05.cp` with its multicast [PTX ISA §9.7.16.9.2]: rows × bits a row.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tc5CpShape {
    S128x256b,
    S4x256b,
    S128x128b,
    /// `.64x128b.warpx2::02_13`.
    S64x128bWarpx2_02_13,
    /// `.64x128b.warpx2::01_23`.
    S64x128bWarpx2_01_23,
    /// `.32x128b.warpx4`.
    S32x128bWarpx4,
}

/// `tcgen05.cp`'s optional decompression [PTX ISA §9.7.16.9.1]: 16 elements of 4 or 6 bits
/// and their padding (16 bytes) into 16 bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tc5Decompress {
    /// `.b8x16.b6x16_p32`.
    B6,
    /// `.b8x16.b4x16_p64`.
    B4,
}

/// A `tcgen05.cp.cta_group.shape{.multicast}{.dst_fmt.src_fmt} [taddr], s-desc`.
#[derive(Clone, Debug)]
pub struct Tc5Cp {
    pub shape: Tc5CpShape,
    pub decompress: Option<Tc5Decompress>,
    /// `.cta_group::2`: the peer block's tensor memory too.
    pub pair: bool,
    pub taddr: Addr,
    pub desc: Src,
    /// The site of its shared-memory reads.
    pub site: u32,
}

/// The B collector buffer of a `tcgen05.mma.ws` [PTX ISA §9.7.16.10.9.3]:
/// `.collector::bN::{fill,use,lastuse,discard}`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tc5Collector {
    pub buffer: u8,
    /// `::use`/`::lastuse`: B is the buffer's, not read from shared memory.
    pub reuse: bool,
    /// `::fill`/`::use`: the buffer keeps B for a later `::use`.
    pub keep: bool,
}

/// The scale factors of a block-scaled `tcgen05.mma` [PTX ISA §9.7.16.10.7]: their tensor
/// memory addresses and `.scale_vec::NX` (N scale factors a row of A / column of B).
#[derive(Clone, Debug)]
pub struct Tc5Scale {
    pub a: Addr,
    pub b: Addr,
    pub vec: u32,
}

/// One `tcgen05` operation (see `exec/tcgen05.rs`). TMEM addresses are 32-bit: lane in bits
/// 31–16, column in bits 15–0 [PTX ISA §9.7.16.2.1].
#[derive(Clone, Debug)]
pub enum Tc5Op {
    /// `tcgen05.alloc.cta_group::N.sync.aligned.shared::cta.b32 [dst], ncols` (`pair`:
    /// `::2`, the peer block's warp issues its own).
    Alloc { dst: Addr, ncols: Src, pair: bool },
    /// `tcgen05.dealloc.cta_group::N.sync.aligned.b32 taddr, ncols`.
    Dealloc { taddr: Src, ncols: Src, pair: bool },
    /// `tcgen05.relinquish_alloc_permit.cta_group::N.sync.aligned`.
    Relinquish { pair: bool },
    /// `tcgen05.cp` (shared memory → tensor memory).
    Cp(Tc5Cp),
    /// `tcgen05.shift.cta_group::N.down [taddr]`: rows 0 … 30 of a 32-lane partition's 8
    /// columns down by one.
    Shift { taddr: Addr, pair: bool },
    /// `tcgen05.commit.cta_group::N.mbarrier::arrive::one.shared::cluster.multicast::cluster
    /// .b64 [mbar], ctaMask`: one arrival on the mbarrier at the same offset in each block
    /// of the 16-bit mask.
    CommitMulticast { mbar: Addr, mask: Src },
    /// `tcgen05.ld.sync.aligned.shape.num.b32 regs, [taddr]{, split}` (`store` false) or
    /// `tcgen05.st.sync.aligned.shape.num.b32 [taddr]{, split}, regs`: `num` repetitions,
    /// `split` the column offset of the second half of `.16x32bx2`.
    Move {
        store: bool,
        shape: Tc5Shape,
        num: u32,
        regs: Vec<Src>,
        taddr: Addr,
        split: u32,
    },
    /// `tcgen05.mma{.ws}.cta_group::N.kind{.block_scale} [d], a-desc|[a], b-desc, idesc,
    /// {[scale-A], [scale-B],} enable-input-d`.
    Mma(Tc5Mma),
}

/// The operands of a `tcgen05.mma` (M, N and the types are in the instruction descriptor,
/// read when it executes).
#[derive(Clone, Debug)]
pub struct Tc5Mma {
    pub kind: Tc5Kind,
    /// `.cta_group::2`: M = 256 over the CTA pair (A's and B's halves in each block's shared
    /// memory, D's rows 0 … 127 in the even block's tensor memory, 128 … 255 in the odd's).
    pub pair: bool,
    /// `.ws` (weight stationary) with its B collector buffer.
    pub ws: Option<Tc5Collector>,
    /// `.block_scale`: the scale factors.
    pub scale: Option<Tc5Scale>,
    pub d: Addr,
    /// A in tensor memory, or `a_desc`: A in shared memory.
    pub a_tmem: Option<Addr>,
    pub a_desc: Option<Src>,
    pub b_desc: Src,
    pub idesc: Src,
    pub enable_d: Src,
    /// The site of its shared-memory operand reads.
    pub site: u32,
}
