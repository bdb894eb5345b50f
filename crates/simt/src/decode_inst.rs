//! One PTX instruction → the executor's [`Instr`]: opcode and modifiers given their PTX ISA
//! meaning (§9.7), operands resolved through the decoder's scope.

use warpscope_model::{Op, Space};
use warpscope_ptx::ast::{self, Operand};

use crate::decode::SiteKind;
use crate::error::{At, Error, Result};
use crate::instr::*;
use crate::minifloat::Format;

pub(crate) mod bulk;
mod mma;
mod mma_sp;
mod tcgen05;
mod tensormap;
mod tex;
mod wgmma;

type Resolve<'a> = &'a dyn Fn(&Operand, Option<Ty>) -> Result<Src>;
type Dest<'a> = &'a dyn Fn(&Operand) -> Result<Option<Reg>>;
type AddrFn<'a> = &'a dyn Fn(&Operand) -> Result<Addr>;
type ParamFn<'a> = &'a dyn Fn(&Operand) -> Result<Vec<(u64, u8, Reg)>>;

pub(crate) struct InstDecoder<'a> {
    pub i: &'a ast::Instruction,
    pub at: At,
    pub resolve: Resolve<'a>,
    pub dest: Dest<'a>,
    pub addr: AddrFn<'a>,
    pub param: ParamFn<'a>,
}

pub(crate) enum Decoded {
    Plain(Instr),
    Branch(String),
    Memory(Instr, Vec<SiteKind>),
    Call {
        func: String,
        args: Vec<Operand>,
        rets: Vec<Operand>,
    },
    Ret,
    Many(Vec<Instr>),
}

const SUPPORTED: &str = "supported: integer, float, half (f16/bf16, packed x2) arithmetic, logic and shifts, setp/set/selp/slct, cvt (with f16x2/bf16x2/tf32/fp8/fp6/fp4 formats), cvta, mov, ld/st/ldu (global, shared, local, const, param, generic; scalar and .v2/.v4), atom/red, cp.async and cp.async.bulk[.tensor], tensormap.replace/cp_fenceproxy, mbarrier, tex/tld4/suld/sust, bra, bar/barrier, exit/ret, call, shfl/vote/match/redux/activemask/elect, mma/wmma/ldmatrix/stmatrix/movmatrix, membar/fence/prefetch (ordering only)";

impl<'a> InstDecoder<'a> {
    fn has(&self, m: &str) -> bool {
        self.i.mods.iter().any(|x| x == m)
    }

    /// The value of the first table entry whose name is among the modifiers.
    fn pick<T: Copy>(&self, table: &[(&str, T)]) -> Option<T> {
        table.iter().find(|(n, _)| self.has(n)).map(|(_, v)| *v)
    }

    /// The last modifier that is a scalar type (the instruction's type).
    fn ty(&self) -> Result<Ty> {
        self.types()
            .last()
            .copied()
            .ok_or_else(|| self.invalid("the instruction has no type modifier"))
    }

    fn types(&self) -> Vec<Ty> {
        self.i.mods.iter().filter_map(|m| Ty::parse(m)).collect()
    }

    fn invalid(&self, msg: &str) -> Error {
        Error::Invalid {
            at: self.at.clone(),
            msg: format!("{}: {msg}", self.name()),
        }
    }

    fn name(&self) -> String {
        std::iter::once(self.i.opcode.as_str())
            .chain(self.i.mods.iter().map(|s| s.as_str()))
            .collect::<Vec<_>>()
            .join(".")
    }

    fn unsupported(&self, why: &str) -> Error {
        Error::Unsupported {
            at: self.at.clone(),
            instr: self.name(),
            why: why.to_string(),
        }
    }

    fn op(&self, k: usize) -> Result<&'a Operand> {
        self.i
            .operands
            .get(k)
            .ok_or_else(|| self.invalid(&format!("expected at least {} operands", k + 1)))
    }

    fn s(&self, k: usize, ty: Ty) -> Result<Src> {
        (self.resolve)(self.op(k)?, Some(ty))
    }

    fn d(&self, k: usize) -> Result<Reg> {
        (self.dest)(self.op(k)?)?
            .ok_or_else(|| self.invalid("a sink '_' cannot be the destination here"))
    }

    fn d_opt(&self, k: usize) -> Result<Option<Reg>> {
        (self.dest)(self.op(k)?)
    }

    pub fn decode(&mut self) -> Result<Decoded> {
        self.check_vector_mods()?;
        let op = self.i.opcode.as_str();
        Ok(match op {
            "add" | "sub" | "mul" | "div" | "rem" | "min" | "max" | "and" | "or" | "xor"
            | "shl" | "shr" | "mad" | "fma" | "mul24" | "mad24" | "abs" | "neg" | "not"
            | "cnot" | "popc" | "clz" | "brev" | "bfind" | "rcp" | "sqrt" | "rsqrt" | "sin"
            | "cos" | "lg2" | "ex2" | "tanh" | "copysign" | "bfe" | "bfi" | "prmt" | "lop3"
            | "shf" | "sad" | "testp" | "dp4a" | "fns" | "bmsk" | "szext" | "dp2a" => {
                Decoded::Plain(self.alu()?)
            }
            "mov"
                if matches!(
                    self.i.operands.get(1),
                    Some(Operand::Reg(r)) if matches!(r.as_str(), "%clock" | "%clock64" | "%globaltimer" | "%globaltimer_lo")
                ) =>
            {
                Decoded::Plain(Instr::Clock {
                    d: self.d(0)?,
                    bytes: self.ty()?.bytes,
                })
            }
            "mov" => self.mov()?,
            "setp" => Decoded::Plain(self.setp()?),
            "set" => {
                let ts = self.types();
                if ts.len() < 2 {
                    return Err(self.invalid("set needs a destination and a source type"));
                }
                let (dty, ty) = (ts[0], ts[1]);
                Decoded::Plain(Instr::Set {
                    cmp: self.cmp()?,
                    ty,
                    dty,
                    d: self.d(0)?,
                    a: self.s(1, ty)?,
                    b: self.s(2, ty)?,
                })
            }
            "selp" => {
                let ty = self.ty()?;
                Decoded::Plain(Instr::Selp {
                    d: self.d(0)?,
                    a: self.s(1, ty)?,
                    b: self.s(2, ty)?,
                    p: self.s(3, Ty::PRED)?,
                })
            }
            "slct" => {
                let ts = self.types();
                let (ty, cty) = (ts[0], *ts.last().unwrap_or(&ts[0]));
                Decoded::Plain(Instr::Slct {
                    d: self.d(0)?,
                    a: self.s(1, ty)?,
                    b: self.s(2, ty)?,
                    c: self.s(3, cty)?,
                    cty,
                })
            }
            "cvt" => Decoded::Plain(self.cvt()?),
            "cvta" => {
                let space = self.space().unwrap_or(MemSpace::Generic);
                Decoded::Plain(Instr::Cvta {
                    d: self.d(0)?,
                    a: self.s(1, Ty::U64)?,
                    space,
                    to: self.has("to"),
                })
            }
            "ld" | "ldu" => self.load()?,
            "st" | "red" if self.has("async") => self.async_store()?,
            "st" => self.store()?,
            "atom" | "red" => self.atom()?,
            "cp" => self.cp()?,
            "bra" | "brx" => {
                if op == "brx" {
                    return Err(self.unsupported("indirect branches (brx.idx) are not supported"));
                }
                match self.op(0)? {
                    Operand::Symbol(l) => Decoded::Branch(l.clone()),
                    _ => return Err(self.invalid("expected a label")),
                }
            }
            "bar" | "barrier" => {
                if self.has("cluster") {
                    // barrier.cluster.arrive{.release,.relaxed}{.aligned} /
                    // barrier.cluster.wait{.acquire}{.aligned} [PTX ISA §9.7.13.4].
                    if self.has("arrive") {
                        Decoded::Plain(Instr::ClusterArrive)
                    } else if self.has("wait") {
                        Decoded::Plain(Instr::ClusterWait)
                    } else {
                        return Err(self.invalid("barrier.cluster takes .arrive or .wait"));
                    }
                } else if self.has("warp") {
                    Decoded::Plain(Instr::Nop)
                } else if self.has("red") {
                    return Err(self.unsupported("bar.red is not supported"));
                } else {
                    self.check_bar_operands()?;
                    Decoded::Plain(Instr::Bar)
                }
            }
            "exit" => Decoded::Plain(Instr::Exit),
            "trap" => Decoded::Plain(Instr::Trap),
            "ret" => Decoded::Ret,
            "call" => self.call()?,
            "shfl" => {
                let mode = if self.has("up") {
                    ShflMode::Up
                } else if self.has("down") {
                    ShflMode::Down
                } else if self.has("bfly") {
                    ShflMode::Bfly
                } else {
                    ShflMode::Idx
                };
                // d[|p], a, b, c[, membermask]: the parser gives `|p` as a separate operand.
                let (d, p, k) = match self.i.operands.len() {
                    n if n >= 6 => (self.d(0)?, self.d_opt(1)?, 2),
                    _ => (self.d(0)?, None, 1),
                };
                Decoded::Plain(Instr::Shfl {
                    mode,
                    d,
                    p,
                    a: self.s(k, Ty::U32)?,
                    b: self.s(k + 1, Ty::U32)?,
                    c: self.s(k + 2, Ty::U32)?,
                })
            }
            "vote" => {
                let mode = if self.has("all") {
                    VoteMode::All
                } else if self.has("any") {
                    VoteMode::Any
                } else if self.has("uni") {
                    VoteMode::Uni
                } else {
                    VoteMode::Ballot
                };
                let negate = matches!(self.op(1)?, Operand::Not(_));
                Decoded::Plain(Instr::Vote {
                    mode,
                    d: self.d(0)?,
                    a: self.s(1, Ty::PRED)?,
                    negate,
                })
            }
            "match" => {
                let ty = self.ty()?;
                let (d, p, k) = if self.has("all") && self.i.operands.len() >= 4 {
                    (self.d(0)?, self.d_opt(1)?, 2)
                } else {
                    (self.d(0)?, None, 1)
                };
                Decoded::Plain(Instr::Match {
                    all: self.has("all"),
                    d,
                    p,
                    a: self.s(k, ty)?,
                    bytes: ty.bytes,
                })
            }
            "redux" => {
                let rop = self
                    .pick(&[
                        ("add", ReduxOp::Add),
                        ("min", ReduxOp::Min),
                        ("max", ReduxOp::Max),
                        ("and", ReduxOp::And),
                        ("or", ReduxOp::Or),
                        ("xor", ReduxOp::Xor),
                    ])
                    .ok_or_else(|| self.unsupported("redux.sync on floats is not supported"))?;
                Decoded::Plain(Instr::Redux {
                    op: rop,
                    signed: self.has("s32"),
                    d: self.d(0)?,
                    a: self.s(1, Ty::U32)?,
                })
            }
            "activemask" => Decoded::Plain(Instr::ActiveMask { d: self.d(0)? }),
            "isspacep" => Decoded::Plain(Instr::IsSpace {
                p: self.d(0)?,
                a: self.s(1, Ty::U64)?,
                space: self
                    .space()
                    .ok_or_else(|| self.invalid("isspacep needs a state space"))?,
            }),
            // mapa{.shared::cluster}.u32|u64 d, a, rank; getctarank{.shared::cluster}.u32 d, a
            // [PTX ISA §9.7.9.22–23]: without a state space the addresses are generic.
            "mapa" => Decoded::Plain(Instr::Mapa {
                d: self.d(0)?,
                a: self.s(1, self.ty()?)?,
                rank: self.s(2, Ty::U32)?,
                generic: self.space().is_none(),
            }),
            "getctarank" => Decoded::Plain(Instr::GetCtaRank {
                d: self.d(0)?,
                a: self.s(
                    1,
                    if self.space().is_none() {
                        Ty::U64
                    } else {
                        Ty::U32
                    },
                )?,
                generic: self.space().is_none(),
            }),
            "multimem" => return Err(self.unsupported(
                "multimem (NVLink multicast memory) is not modelled: analyze the kernel without it",
            )),
            "mbarrier" => self.mbarrier()?,
            "nanosleep" => Decoded::Plain(Instr::Sleep),
            "membar" | "fence" | "prefetch" | "prefetchu" | "pmevent" | "griddepcontrol"
            | "discard" | "applypriority" | "createpolicy" | "elect" | "setmaxnreg" => {
                if op == "elect" {
                    // elect.sync d|p, membermask: the parser gives `|p` as its own operand.
                    let n = self.i.operands.len();
                    return Ok(Decoded::Plain(Instr::Elect {
                        d: self.d_opt(0)?,
                        p: if n >= 3 { self.d_opt(1)? } else { None },
                        mask: self.s(n - 1, Ty::U32)?,
                    }));
                }
                if op == "createpolicy" {
                    // Values we do not model: a policy handle / an elected lane would need
                    // lanes; give 0.
                    let d = self.d_opt(0)?;
                    return Ok(Decoded::Plain(match d {
                        Some(d) => Instr::Mov {
                            d,
                            a: Src::Imm(0),
                            bytes: 8,
                        },
                        None => Instr::Nop,
                    }));
                }
                Decoded::Plain(Instr::Nop)
            }
            "tex" | "tld4" | "txq" | "suld" | "sust" | "sured" | "suq" | "istypep" => {
                self.texture()?
            }
            "ldmatrix" | "stmatrix" => self.matrix()?,
            "mma" | "wmma" | "movmatrix" => self.tensor()?,
            "wgmma" => self.wgmma()?,
            "tcgen05" => self.tcgen05()?,
            "tensormap" => self.tensormap()?,
            _ => return Err(self.unsupported(SUPPORTED)),
        })
    }

    fn alu(&self) -> Result<Instr> {
        let op = self.i.opcode.as_str();
        let half2 = self.i.mods.iter().find_map(|m| match m.as_str() {
            "f16x2" => Some(Ty {
                kind: Kind::Float,
                bytes: 2,
            }),
            "bf16x2" => Some(Ty {
                kind: Kind::BFloat,
                bytes: 2,
            }),
            _ => None,
        });
        let ts = self.types();
        let ty = match half2 {
            Some(t) => t,
            None => *ts.last().ok_or_else(|| self.invalid("no type"))?,
        };
        let (alu, nsrc) = match op {
            "add" => (Alu::Add, 2),
            "sub" => (Alu::Sub, 2),
            "mul" if self.has("hi") => (Alu::MulHi, 2),
            "mul" if self.has("wide") => (Alu::MulWide, 2),
            "mul" => (Alu::Mul, 2),
            "mul24" if self.has("hi") => (Alu::Mul24Hi, 2),
            "mul24" => (Alu::Mul24Lo, 2),
            "mad24" => (Alu::Mad24Lo, 3),
            "div" => (Alu::Div, 2),
            "rem" => (Alu::Rem, 2),
            "min" => (Alu::Min, 2),
            "max" => (Alu::Max, 2),
            "and" => (Alu::And, 2),
            "or" => (Alu::Or, 2),
            "xor" => (Alu::Xor, 2),
            "shl" => (Alu::Shl, 2),
            "shr" => (Alu::Shr, 2),
            "mad" if self.has("hi") => (Alu::MadHi, 3),
            "mad" if self.has("wide") => (Alu::MadWide, 3),
            "mad" | "fma" => (Alu::Mad, 3),
            "abs" => (Alu::Abs, 1),
            "neg" => (Alu::Neg, 1),
            "not" => (Alu::Not, 1),
            "cnot" => (Alu::CNot, 1),
            "popc" => (Alu::Popc, 1),
            "clz" => (Alu::Clz, 1),
            "brev" => (Alu::Brev, 1),
            "bfind" => (Alu::Bfind, 1),
            "rcp" => (Alu::Rcp, 1),
            "sqrt" => (Alu::Sqrt, 1),
            "rsqrt" => (Alu::Rsqrt, 1),
            "sin" => (Alu::Sin, 1),
            "cos" => (Alu::Cos, 1),
            "lg2" => (Alu::Lg2, 1),
            "ex2" => (Alu::Ex2, 1),
            "tanh" => (Alu::Tanh, 1),
            "copysign" => (Alu::Copysign, 2),
            "bfe" => (Alu::Bfe, 3),
            "bfi" => (Alu::Bfi, 4),
            "prmt" => match self.pick(&[
                ("f4e", PrmtMode::F4e),
                ("b4e", PrmtMode::B4e),
                ("rc8", PrmtMode::Rc8),
                ("ecl", PrmtMode::Ecl),
                ("ecr", PrmtMode::Ecr),
                ("rc16", PrmtMode::Rc16),
            ]) {
                Some(m) => (Alu::PrmtMode(m), 3),
                None => (Alu::Prmt, 3),
            },
            "bmsk" => (
                Alu::Bmsk {
                    clamp: self.has("clamp"),
                },
                2,
            ),
            "szext" => (
                Alu::Szext {
                    clamp: self.has("clamp"),
                },
                2,
            ),
            "dp2a" => (
                Alu::Dp2a {
                    a_signed: ts.first().map(|t| t.kind == Kind::Signed).unwrap_or(false),
                    b_signed: ts.get(1).map(|t| t.kind == Kind::Signed).unwrap_or(false),
                    hi: self.has("hi"),
                },
                3,
            ),
            "lop3" => (Alu::Lop3, 4),
            "shf" => {
                let clamp = self.has("clamp");
                if self.has("l") {
                    (Alu::ShfL { clamp }, 3)
                } else {
                    (Alu::ShfR { clamp }, 3)
                }
            }
            "sad" => (Alu::Sad, 3),
            "dp4a" => (
                Alu::Dp4a {
                    a_signed: ts.first().map(|t| t.kind == Kind::Signed).unwrap_or(false),
                    b_signed: ts.get(1).map(|t| t.kind == Kind::Signed).unwrap_or(false),
                },
                3,
            ),
            "fns" => (Alu::Fns, 3),
            "testp" => {
                let k = self
                    .pick(&[
                        ("finite", TestpKind::Finite),
                        ("infinite", TestpKind::Infinite),
                        ("number", TestpKind::Number),
                        ("notanumber", TestpKind::NotANumber),
                        ("normal", TestpKind::Normal),
                        ("subnormal", TestpKind::Subnormal),
                    ])
                    .ok_or_else(|| self.invalid("unknown testp property"))?;
                (Alu::Testp(k), 1)
            }
            _ => return Err(self.unsupported(SUPPORTED)),
        };
        let relu = self.has("relu");
        if half2.is_some() || relu && ty.bytes == 2 {
            if !matches!(
                alu,
                Alu::Add
                    | Alu::Sub
                    | Alu::Mul
                    | Alu::Mad
                    | Alu::Min
                    | Alu::Max
                    | Alu::Neg
                    | Alu::Abs
                    | Alu::Ex2
                    | Alu::Tanh
                    | Alu::Rcp
                    | Alu::Sqrt
                    | Alu::Rsqrt
                    | Alu::Lg2
                    | Alu::Sin
                    | Alu::Cos
            ) {
                return Err(self.invalid("not an operation on packed halves"));
            }
            // Bit-level forms (`and.b32` of a half2) take the integer path; here each source
            // is one 32-bit register holding two halves (or one half with `.relu`).
            let src_ty = Ty {
                kind: Kind::Unsigned,
                bytes: if half2.is_some() { 4 } else { 2 },
            };
            let mut srcs = [Src::Imm(0); 3];
            for (k, s) in srcs.iter_mut().enumerate().take(nsrc) {
                *s = self.s(k + 1, src_ty)?;
            }
            return Ok(Instr::AluHalf {
                op: alu,
                ty,
                lanes: if half2.is_some() { 2 } else { 1 },
                d: self.d(0)?,
                a: srcs[0],
                b: srcs[1],
                c: srcs[2],
                sat: self.has("sat"),
                relu,
            });
        }
        // Source types: shifts take a u32 amount; bfe/bfi take u32 position/length; dp4a
        // and prmt are 32-bit.
        let src_ty = |k: usize| -> Ty {
            match (alu, k) {
                (Alu::Shl | Alu::Shr, 1) => Ty::U32,
                (Alu::Bfe, 1 | 2) | (Alu::Bfi, 2 | 3) => Ty::U32,
                (Alu::Mad | Alu::MadHi | Alu::MadWide, 2) if matches!(alu, Alu::MadWide) => Ty {
                    kind: ty.kind,
                    bytes: ty.bytes * 2,
                },
                _ => ty,
            }
        };
        let dty = match alu {
            Alu::MulWide | Alu::MadWide => Ty {
                kind: ty.kind,
                bytes: ty.bytes * 2,
            },
            Alu::Testp(_) => Ty::PRED,
            Alu::Popc | Alu::Clz | Alu::Bfind => Ty::U32,
            _ => ty,
        };
        let mut srcs = [Src::Imm(0); 4];
        for (k, s) in srcs.iter_mut().enumerate().take(nsrc) {
            *s = self.s(k + 1, src_ty(k))?;
        }
        Ok(Instr::Alu {
            op: alu,
            ty,
            dty,
            d: self.d(0)?,
            a: srcs[0],
            b: srcs[1],
            c: srcs[2],
            e: srcs[3],
            sat: self.has("sat"),
        })
    }

    fn mov(&self) -> Result<Decoded> {
        let ty = self.ty()?;
        match (self.op(0)?, self.op(1)?) {
            (Operand::Vector(ds), src) => {
                let part = ty.bytes / ds.len().max(1) as u8;
                let ds = ds
                    .iter()
                    .map(|o| (self.dest)(o))
                    .collect::<Result<Vec<_>>>()?;
                Ok(Decoded::Plain(Instr::Unpack {
                    ds,
                    a: (self.resolve)(src, Some(ty))?,
                    part_bytes: part,
                }))
            }
            (_, Operand::Vector(ss)) => {
                let part = ty.bytes / ss.len().max(1) as u8;
                let parts = ss
                    .iter()
                    .map(|o| (self.resolve)(o, None))
                    .collect::<Result<Vec<_>>>()?;
                Ok(Decoded::Plain(Instr::Pack {
                    d: self.d(0)?,
                    parts,
                    part_bytes: part,
                }))
            }
            (_, src) => Ok(Decoded::Plain(Instr::Mov {
                d: self.d(0)?,
                a: (self.resolve)(src, Some(ty))?,
                bytes: ty.bytes,
            })),
        }
    }

    fn cmp(&self) -> Result<Cmp> {
        use Cmp::*;
        let table = [
            ("eq", Eq),
            ("ne", Ne),
            ("lt", Lt),
            ("le", Le),
            ("gt", Gt),
            ("ge", Ge),
            ("lo", Lo),
            ("ls", Ls),
            ("hi", Hi),
            ("hs", Hs),
            ("equ", Equ),
            ("neu", Neu),
            ("ltu", Ltu),
            ("leu", Leu),
            ("gtu", Gtu),
            ("geu", Geu),
            ("num", Num),
            ("nan", Nan),
        ];
        self.i
            .mods
            .iter()
            .find_map(|m| table.iter().find(|(n, _)| n == m).map(|(_, c)| *c))
            .ok_or_else(|| self.invalid("no comparison operator"))
    }

    fn setp(&self) -> Result<Instr> {
        let half2 = [("f16x2", Kind::Float), ("bf16x2", Kind::BFloat)]
            .into_iter()
            .find(|(m, _)| self.has(m));
        if let Some((_, kind)) = half2 {
            if self.i.operands.len() != 4 {
                return Err(self.invalid(
                    "expected p|q, a, b (a .and/.or/.xor form is not supported on halves)",
                ));
            }
            return Ok(Instr::SetpHalf {
                cmp: self.cmp()?,
                ty: Ty { kind, bytes: 2 },
                p: self.d(0)?,
                q: self.d_opt(1)?,
                a: self.s(2, Ty::U32)?,
                b: self.s(3, Ty::U32)?,
            });
        }
        let ty = self.ty()?;
        let cmp = self.cmp()?;
        let bop = self.pick(&[
            ("and", BoolOp::And),
            ("or", BoolOp::Or),
            ("xor", BoolOp::Xor),
        ]);
        // setp.cmp.ty p[|q], a, b[, [!]c]: the parser gives `|q` as its own operand when
        // present, so count operands.
        let n = self.i.operands.len();
        let has_q = (bop.is_some() && n == 5) || (bop.is_none() && n == 4);
        let (p, q, k) = if has_q {
            (self.d(0)?, self.d_opt(1)?, 2)
        } else {
            (self.d(0)?, None, 1)
        };
        let bop = match bop {
            Some(b) => {
                let o = self.op(k + 2)?;
                let neg = matches!(o, Operand::Not(_));
                Some((b, (self.resolve)(o, Some(Ty::PRED))?, neg))
            }
            None => None,
        };
        Ok(Instr::Setp {
            cmp,
            ty,
            bop,
            p,
            q,
            a: self.s(k, ty)?,
            b: self.s(k + 1, ty)?,
        })
    }

    /// `cvt` between float formats the scalar path does not hold (packed `x2`, tf32, fp8,
    /// fp6, fp4, ue8m0), or with `.relu`/`.satfinite`: the formats in the order written
    /// (destination first), or `None` when the scalar path applies.
    fn cvt_float(&self) -> Result<Option<Instr>> {
        let fmts: Vec<(Format, bool)> = self
            .i
            .mods
            .iter()
            .filter_map(|m| {
                let (base, packed) = match m.strip_suffix("x2") {
                    Some(b) => (b, true),
                    None => (m.as_str(), false),
                };
                Format::parse(base).map(|f| (f, packed))
            })
            .collect();
        let narrow = fmts
            .iter()
            .any(|&(f, packed)| packed || !matches!(f, Format::F32 | Format::F16 | Format::BF16));
        if !narrow && !self.has("relu") && !self.has("satfinite") {
            return Ok(None);
        }
        if self.has("rs") {
            return Err(self.unsupported("stochastic rounding (cvt.rs) is not supported"));
        }
        let [(dfmt, dpacked), (sfmt, spacked)] = fmts[..] else {
            return Err(self.invalid("cvt needs a destination and a source float type"));
        };
        // Two scalar sources make a packed destination (`cvt.rn.f16x2.f32 d, a, b`).
        let b = if dpacked && !spacked {
            Some(self.s(2, Ty::U32)?)
        } else {
            None
        };
        if dpacked != spacked && b.is_none() || !dpacked && spacked {
            return Err(self.invalid("a packed source needs a packed destination"));
        }
        let round = self.i.mods.iter().find_map(|m| match m.as_str() {
            "rn" | "rna" => Some(Round::Nearest),
            "rz" => Some(Round::Zero),
            "rm" => Some(Round::Down),
            "rp" => Some(Round::Up),
            _ => None,
        });
        Ok(Some(Instr::CvtFloat {
            d: self.d(0)?,
            a: self.s(1, Ty::U32)?,
            b,
            dfmt,
            sfmt,
            src_n: if spacked { 2 } else { 1 },
            round,
            away: self.has("rna"),
            relu: self.has("relu"),
            satfinite: self.has("satfinite"),
        }))
    }

    fn cvt(&self) -> Result<Instr> {
        if let Some(x) = self.cvt_float()? {
            return Ok(x);
        }
        let ts = self.types();
        if ts.len() < 2 {
            return Err(self.invalid("cvt needs a destination and a source type"));
        }
        let (dty, sty) = (ts[0], ts[1]);
        let r = |m: &str| match m.trim_end_matches('i') {
            "rn" => Some(Round::Nearest),
            "rz" => Some(Round::Zero),
            "rm" => Some(Round::Down),
            "rp" => Some(Round::Up),
            _ => None,
        };
        let round = self.i.mods.iter().find_map(|m| r(m));
        let int_round = self
            .i
            .mods
            .iter()
            .any(|m| ["rni", "rzi", "rmi", "rpi"].contains(&m.as_str()));
        Ok(Instr::Cvt {
            d: self.d(0)?,
            a: self.s(1, sty)?,
            dty,
            sty,
            round,
            int_round,
            sat: self.has("sat"),
        })
    }

    /// The first state space the modifiers name.
    fn space(&self) -> Option<MemSpace> {
        self.spaces().next()
    }

    /// The state spaces the modifiers name, in order (a copy's destination, then its source).
    fn spaces(&self) -> impl Iterator<Item = MemSpace> + '_ {
        self.i.mods.iter().filter_map(|m| {
            Some(match m.as_str() {
                "global" => MemSpace::Global,
                "shared" | "shared::cta" | "shared::cluster" => MemSpace::Shared,
                "local" => MemSpace::Local,
                "const" => MemSpace::Const,
                "param" => MemSpace::Param,
                _ => return None,
            })
        })
    }

    /// Vector modifiers are `.v2`, `.v4` and `.v8` only [PTX ISA §5.2.2 Vectors, §9.7.9.8
    /// ld: `.vec = { .v2, .v4, .v8 }`]; `.v1024` or `.v3` is invalid PTX.
    fn check_vector_mods(&self) -> Result<()> {
        for m in &self.i.mods {
            let Some(n) = m.strip_prefix('v') else {
                continue;
            };
            if n.is_empty() || !n.bytes().all(|b| b.is_ascii_digit()) {
                continue;
            }
            if !matches!(n, "2" | "4" | "8") {
                return Err(self.invalid(&format!(
                    "'.{m}' is not a PTX vector width: vectors have 2, 4 or 8 elements \
                 (.v2, .v4, .v8) [PTX ISA §5.2.2]"
                )));
            }
        }
        Ok(())
    }

    /// ld/st/ldu vectors: `.v8` only for elements of 32 bits or fewer (`.v8.b32`, 256 bits;
    /// 64-bit elements go up to `.v4.b64`) [PTX ISA §9.7.9.8 ld, §9.7.9.10 st]; a brace list
    /// holds exactly as many registers as the width says, and needs a vector modifier (one
    /// register in braces, `{%r1}`, is a scalar: Triton emits it, ptxas accepts it).
    fn check_vector_operand(&self, k: usize, ty: Ty) -> Result<()> {
        let n = self.vec_len();
        if n == 8 && ty.bytes > 4 {
            return Err(self.invalid(&format!(
                ".v8 takes elements of 32 bits or fewer (.v8.b32 is 256 bits); {}-bit elements \
                 go up to .v4 [PTX ISA §9.7.9.8]",
                ty.bytes * 8
            )));
        }
        if let Operand::Vector(v) = self.op(k)? {
            // `ld.global.b32 {%r1}, [...]`: one register in braces, as Triton emits it and
            // ptxas accepts, is a scalar.
            if n == 1 && v.len() == 1 {
                return Ok(());
            }
            if n == 1 {
                return Err(self.invalid(&format!(
                    "a brace list of {} operands needs a vector modifier (.v2, .v4 or .v8) \
                 [PTX ISA §9.7.9.8]",
                    v.len()
                )));
            }
            if v.len() != n {
                return Err(self.invalid(&format!(
                    "the vector operand holds {} operands; .v{n} takes exactly {n} \
                 [PTX ISA §9.7.9.8]",
                    v.len()
                )));
            }
        }
        Ok(())
    }

    /// `bar{.cta}.sync/arrive/red a{, b}` and `barrier{.cta}…`: the barrier number and the
    /// thread count are registers or immediates, never addresses or vectors [PTX ISA
    /// §9.7.13.1 bar, barrier].
    fn check_bar_operands(&self) -> Result<()> {
        if self.i.operands.len() > 2 {
            return Err(self.invalid(&format!(
                "takes at most 2 operands (barrier number, thread count), found {} \
                 [PTX ISA §9.7.13.1]",
                self.i.operands.len()
            )));
        }
        for (k, o) in self.i.operands.iter().enumerate() {
            let what = match o {
                Operand::Reg(_) | Operand::Int(_) => continue,
                Operand::Address { .. } => "a memory operand",
                Operand::Vector(_) => "a vector",
                Operand::F32(_) | Operand::F64(_) => "a float literal",
                Operand::Symbol(_) => "a symbol",
                _ => "this operand",
            };
            return Err(self.invalid(&format!(
                "operand {} is {what}; the barrier number and thread count are 32-bit \
                 registers or integers [PTX ISA §9.7.13.1]",
                k + 1
            )));
        }
        Ok(())
    }

    fn vec_len(&self) -> usize {
        if self.has("v4") {
            4
        } else if self.has("v2") {
            2
        } else if self.has("v8") {
            8
        } else {
            1
        }
    }

    fn model_space(s: MemSpace) -> Option<Space> {
        match s {
            MemSpace::Global => Some(Space::Global),
            MemSpace::Shared => Some(Space::Shared),
            MemSpace::Local => Some(Space::Local),
            MemSpace::Const => Some(Space::Constant),
            _ => None,
        }
    }

    fn load(&self) -> Result<Decoded> {
        let space = self.space().unwrap_or(MemSpace::Generic);
        let ty = self.ty()?;
        if self.i.mods.iter().any(|m| m == "b128") {
            return Err(self.unsupported("128-bit scalar loads are not supported"));
        }
        self.check_vector_operand(0, ty)?;
        let ds: Vec<Option<Reg>> = match self.op(0)? {
            Operand::Vector(v) => v.iter().map(|o| (self.dest)(o)).collect::<Result<_>>()?,
            o => vec![(self.dest)(o)?],
        };
        if space == MemSpace::Param {
            return self.param_move(&ds, ty, true);
        }
        let addr = (self.addr)(self.op(1)?)?;
        let read_only = self.has("nc") || self.i.opcode == "ldu";
        Ok(Decoded::Memory(
            Instr::Ld {
                space,
                ty,
                ds,
                addr,
                site: 0,
            },
            vec![SiteKind {
                op: Op::Load,
                space: Self::model_space(space),
                read_only,
                atomic: false,
            }],
        ))
    }

    fn store(&self) -> Result<Decoded> {
        let space = self.space().unwrap_or(MemSpace::Generic);
        let ty = self.ty()?;
        self.check_vector_operand(1, ty)?;
        let srcs: Vec<Src> = match self.op(1)? {
            Operand::Vector(v) => v
                .iter()
                .map(|o| match o {
                    Operand::Sink => Ok(Src::Imm(0)),
                    o => (self.resolve)(o, Some(ty)),
                })
                .collect::<Result<_>>()?,
            o => vec![(self.resolve)(o, Some(ty))?],
        };
        if space == MemSpace::Param {
            return self.param_store(&srcs, ty);
        }
        let addr = (self.addr)(self.op(0)?)?;
        let _ = self.vec_len();
        Ok(Decoded::Memory(
            Instr::St {
                space,
                ty,
                srcs,
                addr,
                site: 0,
            },
            vec![SiteKind {
                op: Op::Store,
                space: Self::model_space(space),
                read_only: false,
                atomic: false,
            }],
        ))
    }

    /// `ld.param` of a parameter held in registers: moves (or packs bytes).
    fn param_move(&self, ds: &[Option<Reg>], ty: Ty, _load: bool) -> Result<Decoded> {
        let regs = (self.param)(self.op(1)?)?;
        let mut out = Vec::new();
        let mut k = 0;
        for d in ds {
            let Some(first) = regs.get(k) else {
                return Err(self.invalid("reads past the end of the parameter"));
            };
            if first.1 >= ty.bytes || first.1 == 8 {
                if let Some(d) = d {
                    out.push(Instr::Mov {
                        d: *d,
                        a: Src::Reg(first.2),
                        bytes: ty.bytes,
                    });
                }
                k += 1;
            } else {
                let n = (ty.bytes / first.1.max(1)) as usize;
                let parts: Vec<Src> = regs.iter().skip(k).take(n).map(|r| Src::Reg(r.2)).collect();
                if let Some(d) = d {
                    out.push(Instr::Pack {
                        d: *d,
                        parts,
                        part_bytes: first.1,
                    });
                }
                k += n;
            }
        }
        Ok(Decoded::Many(out))
    }

    fn param_store(&self, srcs: &[Src], ty: Ty) -> Result<Decoded> {
        let regs = (self.param)(self.op(0)?)?;
        let mut out = Vec::new();
        let mut k = 0;
        for s in srcs {
            let Some(first) = regs.get(k) else {
                return Err(self.invalid("writes past the end of the parameter"));
            };
            if first.1 >= ty.bytes || first.1 == 8 {
                out.push(Instr::Mov {
                    d: first.2,
                    a: *s,
                    bytes: ty.bytes,
                });
                k += 1;
            } else {
                let n = (ty.bytes / first.1.max(1)) as usize;
                let ds: Vec<Option<Reg>> = regs.iter().skip(k).take(n).map(|r| Some(r.2)).collect();
                out.push(Instr::Unpack {
                    ds,
                    a: *s,
                    part_bytes: first.1,
                });
                k += n;
            }
        }
        Ok(Decoded::Many(out))
    }

    fn atom(&self) -> Result<Decoded> {
        let space = self.space().unwrap_or(MemSpace::Generic);
        let ty = self.ty()?;
        if self.vec_len() > 1 || self.i.mods.iter().any(|m| m.ends_with("x2")) {
            return Err(self.unsupported("vector and packed atomics are not supported"));
        }
        let aop = self
            .pick(&[
                ("add", AtomOp::Add),
                ("min", AtomOp::Min),
                ("max", AtomOp::Max),
                ("inc", AtomOp::Inc),
                ("dec", AtomOp::Dec),
                ("and", AtomOp::And),
                ("or", AtomOp::Or),
                ("xor", AtomOp::Xor),
                ("exch", AtomOp::Exch),
                ("cas", AtomOp::Cas),
            ])
            .ok_or_else(|| self.invalid("unknown atomic operation"))?;
        let red = self.i.opcode == "red";
        let (d, k) = if red { (None, 0) } else { (self.d_opt(0)?, 1) };
        let addr = (self.addr)(self.op(k)?)?;
        let b = self.s(k + 1, ty)?;
        let c = if aop == AtomOp::Cas {
            self.s(k + 2, ty)?
        } else {
            Src::Imm(0)
        };
        Ok(Decoded::Memory(
            Instr::Atom {
                space,
                op: aop,
                ty,
                d,
                addr,
                b,
                c,
                site: 0,
            },
            vec![SiteKind {
                op: Op::Atomic,
                space: Self::model_space(space),
                read_only: false,
                atomic: true,
            }],
        ))
    }

    fn cp(&self) -> Result<Decoded> {
        // cp.async.ca|cg.shared.global [dst], [src], cp-size[, src-size]
        if !self.has("async") {
            return Err(self.unsupported(SUPPORTED));
        }
        if self.has("bulk") || self.has("tensor") {
            return self.cp_bulk();
        }
        if self.has("mbarrier") {
            // cp.async.mbarrier.arrive[.noinc] [mbar]: an arrive once this thread's earlier
            // cp.async are done (they complete at once here). Without .noinc the pending
            // count is raised first, so the net effect is none [PTX ISA §9.7.9.25.3.1].
            if !self.has("noinc") {
                return Ok(Decoded::Plain(Instr::Nop));
            }
            return Ok(Decoded::Plain(Instr::Mbarrier {
                op: MbarOp::Arrive {
                    drop: false,
                    expect_tx: false,
                    no_complete: false,
                },
                space: self.space().unwrap_or(MemSpace::Generic),
                d: None,
                addr: (self.addr)(self.op(0)?)?,
                count: None,
            }));
        }
        if self.has("commit_group") || self.has("wait_group") || self.has("wait_all") {
            return Ok(Decoded::Plain(Instr::Nop));
        }
        let dst = (self.addr)(self.op(0)?)?;
        let src = (self.addr)(self.op(1)?)?;
        let bytes = match self.s(2, Ty::U32)? {
            Src::Imm(b @ (4 | 8 | 16)) => b as u8,
            _ => return Err(self.invalid("cp-size must be 4, 8 or 16")),
        };
        let src_bytes = match self.i.operands.get(3) {
            Some(o) => Some((self.resolve)(o, Some(Ty::U32))?),
            None => None,
        };
        Ok(Decoded::Memory(
            Instr::CpAsync {
                dst,
                src,
                bytes,
                src_bytes,
                load_site: 0,
                store_site: 0,
            },
            vec![
                SiteKind {
                    op: Op::Load,
                    space: Some(Space::Global),
                    read_only: false,
                    atomic: false,
                },
                SiteKind {
                    op: Op::Store,
                    space: Some(Space::Shared),
                    read_only: false,
                    atomic: false,
                },
            ],
        ))
    }

    /// `mbarrier.*` [PTX ISA §9.7.13.15].
    fn mbarrier(&self) -> Result<Decoded> {
        let space = self.space().unwrap_or(MemSpace::Generic);
        let addr_at = |k: usize| (self.addr)(self.op(k)?);
        let count_at = |k: usize| match self.i.operands.get(k) {
            Some(o) => (self.resolve)(o, Some(Ty::U32)).map(Some),
            None => Ok(None),
        };
        let plain = |op, d, addr, count| {
            Ok(Decoded::Plain(Instr::Mbarrier {
                op,
                space,
                d,
                addr,
                count,
            }))
        };
        let arrive = |drop| MbarOp::Arrive {
            drop,
            expect_tx: self.has("expect_tx"),
            no_complete: self.has("noComplete"),
        };
        if self.has("init") {
            plain(MbarOp::Init, None, addr_at(0)?, count_at(1)?)
        } else if self.has("inval") {
            plain(MbarOp::Inval, None, addr_at(0)?, None)
        } else if self.has("arrive") || self.has("arrive_drop") {
            let op = arrive(self.has("arrive_drop"));
            plain(op, self.d_opt(0)?, addr_at(1)?, count_at(2)?)
        } else if self.has("expect_tx") {
            plain(MbarOp::ExpectTx, None, addr_at(0)?, count_at(1)?)
        } else if self.has("complete_tx") {
            plain(MbarOp::CompleteTx, None, addr_at(0)?, count_at(1)?)
        } else if self.has("test_wait") || self.has("try_wait") {
            Ok(Decoded::Plain(Instr::MbarrierWait {
                d: self.d_opt(0)?,
                space,
                addr: addr_at(1)?,
                token: self.s(2, Ty::U64)?,
                blocking: self.has("try_wait"),
            }))
        } else {
            Err(self.unsupported(
                "mbarrier operations: init, inval, arrive, arrive_drop, expect_tx, complete_tx, test_wait, try_wait",
            ))
        }
    }

    fn matrix(&self) -> Result<Decoded> {
        let store = self.i.opcode == "stmatrix";
        if !self.has("m8n8") || !(self.has("b16") || self.has("b8")) || self.has("b8") {
            return Err(self.unsupported(
                "only the .m8n8 shape with .b16 elements of ldmatrix/stmatrix is supported",
            ));
        }
        let n = if self.has("x4") {
            4
        } else if self.has("x2") {
            2
        } else {
            1
        };
        let (addr_op, regs_op) = if store { (0, 1) } else { (1, 0) };
        let regs: Vec<Src> = match self.op(regs_op)? {
            Operand::Vector(v) => v
                .iter()
                .map(|o| match (store, o) {
                    (false, o) => (self.dest)(o)?
                        .map(Src::Reg)
                        .ok_or_else(|| self.invalid("a sink cannot receive a matrix")),
                    (true, o) => (self.resolve)(o, Some(Ty::U32)),
                })
                .collect::<Result<_>>()?,
            o if store => vec![(self.resolve)(o, Some(Ty::U32))?],
            o => vec![(self.dest)(o)?
                .map(Src::Reg)
                .ok_or_else(|| self.invalid("a sink cannot receive a matrix"))?],
        };
        if regs.len() != n {
            return Err(self.invalid(&format!(".x{n} takes {n} registers, {} given", regs.len())));
        }
        Ok(Decoded::Memory(
            Instr::Matrix {
                store,
                trans: self.has("trans"),
                regs,
                addr: (self.addr)(self.op(addr_op)?)?,
                site: 0,
            },
            vec![SiteKind {
                op: if store { Op::Store } else { Op::Load },
                space: Some(Space::Shared),
                read_only: false,
                atomic: false,
            }],
        ))
    }

    fn call(&self) -> Result<Decoded> {
        // call[.uni] [(ret,…),] func[, (arg,…)][, proto];
        let mut rets = Vec::new();
        let mut args = Vec::new();
        let mut func = None;
        for o in &self.i.operands {
            match o {
                Operand::List(l) if func.is_none() => rets = l.clone(),
                Operand::Symbol(s) if func.is_none() => func = Some(s.clone()),
                Operand::List(l) => args = l.clone(),
                Operand::Reg(_) if func.is_none() => {
                    return Err(
                        self.unsupported("indirect calls through a register are not supported")
                    )
                }
                _ => {}
            }
        }
        let func = func.ok_or_else(|| self.invalid("call without a function name"))?;
        Ok(Decoded::Call { func, args, rets })
    }
}
