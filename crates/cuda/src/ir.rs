//! The typed intermediate form a kernel is lowered to before execution: every implicit C
//! conversion is an explicit [`ExprKind::Cast`], every lvalue a register slot or an address,
//! every memory access a [`ExprKind::Load`]/[`ExprKind::Store`] tied to a source site.

use crate::types::Ty;

/// A 1-based source position.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Loc {
    pub line: u32,
    pub col: u32,
}

/// Index of a scalar register variable (one value per thread).
pub type Slot = usize;
/// Index into [`crate::Program::sites`].
pub type SiteId = usize;
/// Index of a lowered function instance.
pub type FuncId = usize;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Builtin {
    ThreadIdx(u8),
    BlockIdx(u8),
    BlockDim(u8),
    GridDim(u8),
    WarpSize,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    Shl,
    Shr,
    BitAnd,
    BitOr,
    BitXor,
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
    Min,
    Max,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnOp {
    Neg,
    LogicalNot,
    BitNot,
    Abs,
}

/// Base addresses of the address spaces in warpscope's generic address space. The top four
/// bits of an address name its space, as CUDA's generic addressing does.
pub mod addr {
    pub const SPACE_SHIFT: u32 = 60;
    pub const GLOBAL: u64 = 0;
    pub const SHARED: u64 = 1 << SPACE_SHIFT;
    pub const CONSTANT: u64 = 2 << SPACE_SHIFT;
    pub const PRIVATE: u64 = 3 << SPACE_SHIFT;
    /// Allocations of global memory are this far apart (64 GiB), each 256-byte aligned.
    pub const ALLOC_SPACING: u64 = 1 << 36;
    /// The first allocation's base address.
    pub const ALLOC_BASE: u64 = 1 << 40;
    /// A private (per-thread) address carries the thread's index in the block here.
    pub const PRIVATE_LANE_SHIFT: u32 = 32;
}

#[derive(Clone, Debug)]
pub struct Expr {
    pub kind: ExprKind,
    pub ty: Ty,
    pub loc: Loc,
}

#[derive(Clone, Debug)]
pub enum ExprKind {
    /// A constant, encoded as values are (see `value`).
    Const(u64),
    Reg(Slot),
    Builtin(Builtin),
    /// Loads a value of the expression's type from the address `addr` evaluates to.
    Load {
        addr: Box<Expr>,
        site: SiteId,
    },
    /// Stores `value` at `addr`; evaluates to the stored value.
    Store {
        addr: Box<Expr>,
        value: Box<Expr>,
        site: SiteId,
    },
    SetReg {
        slot: Slot,
        value: Box<Expr>,
    },
    Unary(UnOp, Box<Expr>),
    /// Operands already converted to the operation's type; comparisons yield `int`.
    Binary(BinOp, Box<Expr>, Box<Expr>),
    /// Converts the operand to the expression's type.
    Cast(Box<Expr>),
    /// `ptr + index * scale` (bytes); index is a 64-bit signed integer.
    PtrAdd {
        ptr: Box<Expr>,
        index: Box<Expr>,
        scale: u64,
    },
    /// `(a - b) / scale`.
    PtrDiff {
        a: Box<Expr>,
        b: Box<Expr>,
        scale: u64,
    },
    Cond(Box<Expr>, Box<Expr>, Box<Expr>),
    LogicalAnd(Box<Expr>, Box<Expr>),
    LogicalOr(Box<Expr>, Box<Expr>),
    Call {
        func: FuncId,
        args: Vec<Expr>,
    },
    /// A member of an aggregate rvalue at byte `offset`.
    Member {
        base: Box<Expr>,
        offset: u64,
    },
    /// Evaluates both, yields the second.
    Seq(Box<Expr>, Box<Expr>),
    /// An aggregate built from members at byte offsets (make_float4, initializer lists).
    MakeAgg(Vec<(u64, Expr)>),
    /// Address of a per-thread variable at this byte offset of the thread's private area.
    PrivateAddr(u64),
    /// Address of the first `extern __shared__` array: after the static shared variables,
    /// 16-byte aligned.
    DynSharedBase,
    /// A pure function of its operands, lane by lane ([`Intrinsic`] gives each one's operand
    /// and result types and its value); no memory access.
    Intrinsic(Intrinsic, Vec<Expr>),
    /// An atomic read-modify-write of the value of the expression's type at `addr` (global or
    /// shared memory): `new = op(old, value[, compare])` is stored and the expression
    /// evaluates to `old`. One memory instruction per warp with an active lane, reported as
    /// [`warpscope_model::Op::Atomic`] at `site` (as PTX `atom`). Within a warp the active
    /// lanes apply their updates one after another in lane order, warps in warp order, so
    /// each lane sees the lanes before it (any order is legal on the hardware; this one makes
    /// results reproducible).
    Atomic {
        op: AtomicOp,
        addr: Box<Expr>,
        value: Box<Expr>,
        /// `atomicCAS`'s compare operand: `new = old == compare ? value : old`.
        compare: Option<Box<Expr>>,
        site: SiteId,
    },
    /// A texture fetch or surface access ([`TexAccess`]): one PTX `tex`, `tld4`, `suld` or
    /// `sust`, which the executor costs as texture/surface requests
    /// (`warpscope_model::texture`). The value is the fetched texel(s) of the expression's
    /// type (0: texture contents are not modelled), `void` for a surface write.
    Texture(Box<TexAccess>),
    /// A warp-level exchange or vote among the lanes of each warp (PTX `shfl.sync`,
    /// `vote.sync`, `activemask`); see [`WarpOp`] for operands and value. The member-mask
    /// operand is evaluated and not otherwise used (every active lane is taken to take
    /// part). No memory access.
    Warp(WarpOp, Vec<Expr>),
}

/// Pure per-lane functions. Floating-point ones take and give the expression's type
/// (`float` or `double`; `__half` operands are converted by the lowering) and are computed
/// with the host's libm in that precision (`f32` functions for `float`), which may differ
/// from CUDA's in the last ulp: only addresses and control flow matter to warpscope.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Intrinsic {
    /// sqrt(a) (`sqrtf`, `sqrt`, `__fsqrt_rn`).
    Sqrt,
    /// 1 / sqrt(a) (`rsqrtf`, `rsqrt`).
    Rsqrt,
    /// e^a (`expf`, `__expf`, `exp`).
    Exp,
    /// 2^a (`exp2f`, `exp2`).
    Exp2,
    /// 10^a (`exp10f`, `__exp10f`).
    Exp10,
    /// ln a (`logf`, `__logf`, `log`).
    Log,
    /// log2 a (`log2f`, `__log2f`, `log2`).
    Log2,
    /// log10 a (`log10f`, `__log10f`, `log10`).
    Log10,
    /// a^b (`powf`, `__powf`, `pow`): two operands.
    Pow,
    Sin,
    Cos,
    Tan,
    /// tanh a (`tanhf`, `tanh`).
    Tanh,
    Floor,
    Ceil,
    /// Rounds toward zero (`truncf`).
    Trunc,
    /// Rounds half away from zero (`roundf`).
    Round,
    /// a·b + c with one rounding (`fmaf`, `fma`, `__fmaf_rn`): three operands.
    Fma,
    /// Clamps to [0, 1], NaN to 0 (`__saturatef`).
    Saturate,
    /// Number of set bits of the operand (`unsigned int` or `unsigned long long`); gives `int`
    /// (`__popc`, `__popcll`).
    Popc,
    /// Leading zero bits of the operand (32 or 64 bits wide); gives `int` (`__clz`,
    /// `__clzll`).
    Clz,
    /// 1-based position of the least significant set bit, 0 for 0; gives `int` (`__ffs`,
    /// `__ffsll`).
    Ffs,
    /// The operand's bits reversed, same type (`__brev`, `__brevll`).
    Brev,
    /// High 32 bits of the 64-bit product of two 32-bit integers, signed or unsigned as the
    /// operands' type (`__mulhi`, `__umulhi`).
    MulHi,
    /// Product of the low 24 bits of two 32-bit integers (sign-extended from bit 23 for
    /// `int`, zero-extended for `unsigned`), low 32 bits kept (`__mul24`, `__umul24`).
    Mul24,
    /// The operand's bits read as the expression's type, of the same width
    /// (`__int_as_float`, `__float_as_int`, `__uint_as_float`, `__float_as_uint`,
    /// `__double_as_longlong`, `__longlong_as_double`).
    BitCast,
    /// `assert(a)` (and `__trap()`, as `assert(0)`): the launch stops where `a`, a `bool`, is
    /// false, as a device assertion stops the kernel [PG "Assertion"]. Void.
    Assert,
}

/// The update of an [`ExprKind::Atomic`], on the old value `old` and operand `v` of the
/// expression's type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AtomicOp {
    /// old + v (`atomicAdd`; `atomicSub(p, v)` is lowered as `atomicAdd(p, -v)`).
    Add,
    /// min(old, v), signed or unsigned as the type (`atomicMin`).
    Min,
    /// max(old, v) (`atomicMax`).
    Max,
    /// v (`atomicExch`).
    Exch,
    /// old == compare ? v : old (`atomicCAS`).
    Cas,
    /// old & v, old | v, old ^ v (`atomicAnd`, `atomicOr`, `atomicXor`).
    And,
    Or,
    Xor,
    /// old >= v ? 0 : old + 1, unsigned (`atomicInc`).
    Inc,
    /// (old == 0 || old > v) ? v : old - 1, unsigned (`atomicDec`).
    Dec,
}

/// A warp-level operation of [`ExprKind::Warp`]. Lanes are numbered 0–31 within their warp
/// (thread `32·w + lane` of the block in linear order); a warp's last lanes may not exist
/// when the block is not a multiple of 32.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WarpOp {
    /// `__shfl_sync(mask, v, src, width)`: operands (mask, v, src, width); the lane reads
    /// `v` of lane `base + src % width` of its `width`-lane segment (`base` = lane rounded
    /// down to a multiple of `width`, a power of two ≤ 32). Type of `v`.
    ShflIdx,
    /// `__shfl_up_sync(mask, v, d, width)`: `v` of lane `lane - d`, or the lane's own `v`
    /// when that lies before its segment.
    ShflUp,
    /// `__shfl_down_sync(mask, v, d, width)`: `v` of lane `lane + d`, or the lane's own `v`
    /// when that lies past its segment (or past the block's last thread).
    ShflDown,
    /// `__shfl_xor_sync(mask, v, m, width)`: `v` of lane `lane ^ m`, or the lane's own `v`
    /// when that lies outside its segment (or past the block's last thread).
    ShflXor,
    /// `__ballot_sync(mask, p)`: operands (mask, p); bit `i` set where lane `i` is active and
    /// `p != 0`; `unsigned int`.
    Ballot,
    /// `__all_sync(mask, p)`: 1 where `p != 0` on every active lane of the warp, else 0; `int`.
    All,
    /// `__any_sync(mask, p)`: 1 where `p != 0` on some active lane of the warp, else 0; `int`.
    Any,
    /// `__activemask()`: no operands; bit `i` set where lane `i` is active; `unsigned int`.
    ActiveMask,
}

/// What a [`TexAccess`] does [PTX ISA §9.7.10 "Texture Instructions", §9.7.11 "Surface
/// Instructions"].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TexOp {
    /// `tex`: a filtered fetch (`tex1Dfetch`, `tex1D`, `tex2D`, `tex3D`, the layered ones).
    Fetch,
    /// `tld4.{r,g,b,a}`: the four texels of component 0–3 (`tex2Dgather`).
    Gather(u8),
    /// `suld.b`: `surf*read`; x in bytes.
    SurfRead,
    /// `sust.b`: `surf*write`; x in bytes.
    SurfWrite,
}

/// The texture's shape as the instruction names it (`.1d`, `.2d`, `.3d`, `.a1d`, `.a2d`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TexGeom {
    D1,
    D2,
    D3,
    /// 1-D layered: a layer index, then x.
    A1,
    /// 2-D layered: a layer index, then x, y.
    A2,
}

impl TexGeom {
    /// Coordinates besides the layer.
    pub fn axes(self) -> usize {
        match self {
            TexGeom::D1 | TexGeom::A1 => 1,
            TexGeom::D2 | TexGeom::A2 => 2,
            TexGeom::D3 => 3,
        }
    }
    pub fn layered(self) -> bool {
        matches!(self, TexGeom::A1 | TexGeom::A2)
    }
    /// The PTX geometry modifier.
    pub fn ptx(self) -> &'static str {
        match self {
            TexGeom::D1 => "1d",
            TexGeom::D2 => "2d",
            TexGeom::D3 => "3d",
            TexGeom::A1 => "a1d",
            TexGeom::A2 => "a2d",
        }
    }
}

/// What a surface access does outside the surface: `cudaBoundaryModeTrap` (the default,
/// a fault), `Clamp` or `Zero` (PTX `.trap`, `.clamp`, `.zero`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SurfBoundary {
    Trap,
    Clamp,
    Zero,
}

/// Which texture a [`TexAccess`] reads: an object (a `cudaTextureObject_t` or
/// `cudaSurfaceObject_t` value, a 64-bit handle) or a module reference by name (a
/// `texture<…>`/`surface<…>` global, [`crate::lower::TextureRefDecl`]).
#[derive(Clone, Debug)]
pub enum TexSource {
    Object(Expr),
    Ref(String),
}

/// A texture fetch or surface access ([`ExprKind::Texture`]).
#[derive(Clone, Debug)]
pub struct TexAccess {
    pub op: TexOp,
    pub geom: TexGeom,
    pub source: TexSource,
    /// x (y, z): `float` for float-coordinate fetches, `int` for `tex1Dfetch` and surfaces
    /// (whose x is in bytes).
    pub coords: Vec<Expr>,
    /// The layer (`int`) of a layered geometry.
    pub layer: Option<Expr>,
    /// The value a surface write stores, of type [`TexAccess::texel`].
    pub value: Option<Expr>,
    /// The type of one texel as the access moves it: a fetch's result type (`float`,
    /// `float4`, `int`, `uchar4`; a gather's four-component vector), a surface's element
    /// (its bytes are the `suld`/`sust` width).
    pub texel: Ty,
    pub boundary: SurfBoundary,
    pub site: SiteId,
}

#[derive(Clone, Debug)]
pub enum Stmt {
    Expr(Expr),
    If {
        cond: Expr,
        then: Box<Stmt>,
        els: Option<Box<Stmt>>,
    },
    /// `for`/`while` (test_first) and `do … while`.
    Loop {
        cond: Option<Expr>,
        body: Box<Stmt>,
        step: Option<Expr>,
        test_first: bool,
        loc: Loc,
    },
    Block(Vec<Stmt>),
    Break,
    Continue,
    Return(Option<Expr>),
    /// `switch`: each lane enters `body` at the statement index of its matching case (or the
    /// default); `break` leaves the switch.
    Switch {
        value: Expr,
        cases: Vec<(u64, usize)>,
        default: Option<usize>,
        body: Vec<Stmt>,
    },
    /// `__syncthreads()` (or a block group's `sync()`) at this position.
    Sync(Loc),
}

/// A lowered function instance (templates are instantiated per argument list).
#[derive(Clone, Debug)]
pub struct Func {
    pub name: String,
    pub params: Vec<Param>,
    pub ret: Ty,
    pub body: Stmt,
    pub loc: Loc,
}

/// Where a parameter lives: a register slot (scalars) or the private area (aggregates).
#[derive(Clone, Debug)]
pub struct Param {
    pub name: String,
    pub ty: Ty,
    pub home: Home,
    /// `const T* __restrict__`: loads through it use the read-only path on 3.5+.
    pub read_only: bool,
    /// A C++ reference `T&`: `ty` is `T*`, and the caller passes the referenced object's
    /// address.
    pub by_ref: bool,
}

#[derive(Clone, Copy, Debug)]
pub enum Home {
    Reg(Slot),
    Private(u64),
}
