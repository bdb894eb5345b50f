//! The syntax tree of a PTX module [PTX ISA §4–§11]: what the text says, with positions, and
//! no meaning attached yet. Opcodes keep their modifiers as written (`ld.global.v4.f32` is
//! opcode `ld` with modifiers `["global", "v4", "f32"]`); the executor's decoder gives them
//! their semantics.

/// A 1-based line and column in the PTX text (columns count bytes).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Pos {
    pub line: u32,
    pub col: u32,
}

/// A whole `.ptx` file.
#[derive(Clone, Debug, Default)]
pub struct Module {
    /// `.version MAJOR.MINOR`.
    pub version: Option<(u32, u32)>,
    /// `.target` items (`sm_90`, `texmode_independent`, …).
    pub target: Vec<String>,
    /// `.address_size` in bits (64 when absent? PTX says 32; nvcc always writes 64).
    pub address_size: Option<u32>,
    /// `.file N "path"` entries: (N, path).
    pub files: Vec<(u32, String)>,
    /// Module-scope variables (`.global`, `.shared`, `.const`, `.local`).
    pub globals: Vec<Variable>,
    /// `.entry` and `.func` definitions and declarations, in file order.
    pub functions: Vec<Function>,
}

/// A state space [PTX ISA §5.1].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StateSpace {
    Reg,
    Sreg,
    Const,
    Global,
    Local,
    Param,
    Shared,
    Tex,
}

/// A variable declaration: `.global .align 4 .b8 data[16] = {…};`,
/// `.extern .shared .align 16 .b8 smem[];`, `.reg .b32 %r<12>;`, `.local .align 8 .b8
/// __local_depot0[32];`.
#[derive(Clone, Debug)]
pub struct Variable {
    pub space: StateSpace,
    /// Element type as written, without the dot (`b8`, `f32`, `u64`, `pred`, `v4.f32` is
    /// given as `ty = "f32"`, `vector = 4`).
    pub ty: String,
    /// 2 or 4 for `.v2`/`.v4` variables, else 1.
    pub vector: u32,
    pub name: String,
    /// `%r<12>` declares `%r0` … `%r11`: `Some(12)`.
    pub range: Option<u32>,
    /// `.align N` in bytes.
    pub align: Option<u32>,
    /// Array dimensions; `None` for `[]` (an unsized `.extern` array).
    pub dims: Vec<Option<u64>>,
    /// Initializer values, flattened, as written (integers, or float bit patterns from
    /// `0f…`/`0d…` literals; symbol names for address initializers).
    pub init: Vec<Operand>,
    /// Linking directives written before it (`.extern`, `.visible`, `.weak`, `.common`).
    pub linkage: Vec<String>,
    /// `.ptr.global` etc. on a `.param` declaration: the pointee's state space.
    pub ptr_space: Option<StateSpace>,
    pub pos: Pos,
}

/// An `.entry` (kernel) or `.func` (device function).
#[derive(Clone, Debug)]
pub struct Function {
    pub name: String,
    pub is_entry: bool,
    /// `.func (.param .b32 retval) name(…)`: the return parameters.
    pub returns: Vec<Variable>,
    pub params: Vec<Variable>,
    /// Performance directives (`.maxntid 128, 1, 1`, `.reqntid`, `.minnctapersm`, …) as
    /// (name without dot, numbers).
    pub directives: Vec<(String, Vec<u64>)>,
    /// `None` for a declaration without a body (`.extern .func`).
    pub body: Option<Vec<Statement>>,
    pub linkage: Vec<String>,
    pub pos: Pos,
}

/// One statement of a function body, in order.
#[derive(Clone, Debug)]
pub enum Statement {
    /// `NAME:`
    Label(String, Pos),
    /// `.reg`, `.local`, `.shared`, `.param` declarations inside a body.
    Variable(Variable),
    Instruction(Instruction),
    /// `.loc FILE LINE COL [, function_name …, inlined_at FILE LINE COL]`.
    Loc(Loc),
    /// `{ … }`: a nested scope; names declared inside are visible only there.
    Block(Vec<Statement>, Pos),
    /// `.pragma "…";` and any other directive kept for completeness.
    Directive(String, Pos),
}

/// A `.loc` directive: the source position of the instructions that follow it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Loc {
    pub file: u32,
    pub line: u32,
    pub col: u32,
    /// `inlined_at FILE LINE COL`: where the function this code came from was called.
    pub inlined_at: Option<(u32, u32, u32)>,
    pub pos: Pos,
}

/// `@%p` or `@!%p` before an instruction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Guard {
    pub negated: bool,
    pub reg: String,
}

/// One instruction: `@!%p1 ld.global.nc.v4.f32 {%f1, %f2, %f3, %f4}, [%rd4+16];`
#[derive(Clone, Debug)]
pub struct Instruction {
    pub guard: Option<Guard>,
    /// `ld`, `st`, `mad`, `setp`, `bar`, …
    pub opcode: String,
    /// Dot-separated modifiers as written, in order, without dots (`["global", "nc",
    /// "v4", "f32"]`; `["sync", "aligned"]`; `["lo", "s32"]`).
    pub mods: Vec<String>,
    pub operands: Vec<Operand>,
    pub pos: Pos,
}

/// An instruction operand.
#[derive(Clone, Debug, PartialEq)]
pub enum Operand {
    /// A register or special register, with a vector component folded into the name:
    /// `%r1`, `%tid.x`, `%ctaid.y`, `%laneid`.
    Reg(String),
    /// An integer literal (decimal, hex `0x…`, octal `0…`, binary `0b…`), its bits; a
    /// negative literal is stored two's-complement.
    Int(i64),
    /// A `0f…` single-precision literal (its bits).
    F32(u32),
    /// A `0d…` double-precision literal or a decimal float literal (its bits).
    F64(u64),
    /// A variable, function or label name used as a value (`mov.u64 %rd1, smem;`,
    /// `bra $L__BB0_2;`).
    Symbol(String),
    /// `[base+offset]`: `base` is a register or a symbol (or `None` for `[imm]`).
    Address {
        base: Option<Box<Operand>>,
        offset: i64,
    },
    /// `{%f1, %f2, _, %f4}`: a vector of operands.
    Vector(Vec<Operand>),
    /// `( a, b )`: a parenthesized list, as in `call (retval), f, (p0, p1);`.
    List(Vec<Operand>),
    /// `_`: the sink operand.
    Sink,
    /// `!%p`: a negated predicate source (in `and.pred`, `selp`, …).
    Not(Box<Operand>),
}
