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
    Sync,
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
}

#[derive(Clone, Copy, Debug)]
pub enum Home {
    Reg(Slot),
    Private(u64),
}
