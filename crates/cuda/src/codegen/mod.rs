//! Lowering of the typed IR to PTX, which the PTX front end parses and the SIMT executor
//! (`warpscope-simt`) runs: the source path and the compiled path share one executor.
//!
//! The generated PTX keeps the IR's memory model: every address is a generic address in the
//! layout of [`crate::ir::addr`] (the executor's windows are the same), so loads and stores
//! are generic `ld`/`st` resolved per lane. Each IR memory access becomes one instruction per
//! access part (a `float4` is one 16-byte access; an unaligned struct one per field), and the
//! PTX line of each is mapped back to its IR site. Scalars live in registers; aggregate values
//! (structs, vectors) in per-thread scratch space after the private area, which the executor
//! moves data through without reporting accesses ([`warpscope_simt::Program::local_reported`]).
//! Device functions are inlined at each call (the lowerer refuses recursion).

mod builtins;
mod expr;
mod stmt;
mod texture;

use std::collections::HashMap;

use crate::error::{Error, Result};
use crate::ir::{addr, Loc, SiteId, Slot};
use crate::lower::Lowered;
use crate::types::Ty;

/// Most PTX lines one kernel may become after inlining: a guard against call trees whose
/// inlined size explodes.
const MAX_LINES: usize = 4_000_000;

/// The PTX of one lowered kernel and how to read the executor's results back.
pub(crate) struct Generated {
    pub ptx: String,
    /// PTX line (1-based) of each memory instruction that is an IR access → its site.
    pub line_sites: HashMap<u32, SiteId>,
    /// PTX lines of the `trap`s that guard integer divisions.
    pub division_traps: Vec<u32>,
    /// PTX lines of the `trap`s of `assert`s (and `__trap()`).
    pub assert_traps: Vec<u32>,
    /// Each loop: its first and last PTX line and its source position (to name a runaway
    /// loop).
    pub loops: Vec<(u32, u32, Loc)>,
}

/// The register class a scalar lives in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Class {
    B32,
    B64,
    F32,
    F64,
    Pred,
}

impl Class {
    fn prefix(self) -> &'static str {
        match self {
            Class::B32 => "%r",
            Class::B64 => "%rd",
            Class::F32 => "%f",
            Class::F64 => "%fd",
            Class::Pred => "%p",
        }
    }
    fn decl(self) -> &'static str {
        match self {
            Class::B32 => ".b32",
            Class::B64 => ".b64",
            Class::F32 => ".f32",
            Class::F64 => ".f64",
            Class::Pred => ".pred",
        }
    }
    fn index(self) -> usize {
        self as usize
    }
    /// The untyped PTX type of the class, for `mov` and `selp`.
    pub fn bits_ty(self) -> &'static str {
        match self {
            Class::B32 => "b32",
            Class::B64 => "b64",
            Class::F32 => "f32",
            Class::F64 => "f64",
            Class::Pred => "pred",
        }
    }
}

/// An operand: a register or an immediate, as PTX text.
#[derive(Clone, Debug)]
pub(crate) struct Val {
    pub text: String,
    pub class: Class,
    pub imm: bool,
}

/// How a scalar IR type is held and stored.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Scalar {
    pub class: Class,
    /// Arithmetic type (`s32`, `u64`, `f32`).
    pub ptx: &'static str,
    /// Bytes in memory.
    pub bytes: u8,
    pub signed: bool,
    pub float: bool,
    /// `__half`: held as an `f32` rounded to half precision.
    pub half: bool,
    pub boolean: bool,
}

/// The register form of a scalar type; `None` for `void` and aggregates.
pub(crate) fn scalar(t: &Ty) -> Option<Scalar> {
    let s = |class, ptx, bytes, signed, float| Scalar {
        class,
        ptx,
        bytes,
        signed,
        float,
        half: false,
        boolean: false,
    };
    Some(match t {
        Ty::Bool => Scalar {
            boolean: true,
            ..s(Class::B32, "u32", 1, false, false)
        },
        Ty::Int { bytes: 8, signed } => s(
            Class::B64,
            if *signed { "s64" } else { "u64" },
            8,
            *signed,
            false,
        ),
        Ty::Int { bytes, signed } => s(
            Class::B32,
            if *signed { "s32" } else { "u32" },
            *bytes,
            *signed,
            false,
        ),
        Ty::Ptr(_) => s(Class::B64, "u64", 8, false, false),
        Ty::Float(2) => Scalar {
            half: true,
            ..s(Class::F32, "f32", 2, true, true)
        },
        Ty::Float(4) => s(Class::F32, "f32", 4, true, true),
        Ty::Float(_) => s(Class::F64, "f64", 8, true, true),
        _ => return None,
    })
}

/// The generator's state while emitting one kernel.
pub(crate) struct Gen<'p> {
    pub prog: &'p Lowered,
    file: &'p str,
    body: Vec<String>,
    counts: [u32; 5],
    slot_regs: HashMap<Slot, Val>,
    /// 0/1 registers made from a predicate (`selp 1, 0, p`) → that predicate.
    pub preds: HashMap<String, Val>,
    labels: u32,
    cur_loc: Loc,
    /// (body line index, site) of each reported memory instruction.
    sites: Vec<(usize, SiteId)>,
    traps: Vec<usize>,
    /// Body indices of the traps of `assert`s, with the assert's position.
    asserts: Vec<(usize, Loc)>,
    /// (first body line, last body line, position) of each loop.
    pub loops: Vec<(usize, usize, Loc)>,
    /// Next free scratch byte after the private area.
    scratch_top: u64,
    /// Enclosing loops' and switches' (break, continue) labels.
    pub brk: Vec<String>,
    pub cont: Vec<Option<String>>,
    /// The functions being emitted: (end label, result, the per-lane "returned" flag when
    /// a `return` can leave early), innermost last.
    pub rets: Vec<(String, Option<Val>, Option<Val>)>,
    /// Where a `return` goes: the end of the innermost block, loop body or `switch`.
    pub skips: Vec<String>,
    pub inlining: Vec<usize>,
    /// The register holding lane-invariant `LOCAL` window address of the frame.
    pub dyn_base: u64,
}

impl<'p> Gen<'p> {
    fn new(prog: &'p Lowered, file: &'p str) -> Gen<'p> {
        Gen {
            prog,
            file,
            body: Vec::new(),
            counts: [0; 5],
            slot_regs: HashMap::with_capacity(prog.slots),
            preds: HashMap::new(),
            labels: 0,
            cur_loc: Loc::default(),
            sites: Vec::new(),
            traps: Vec::new(),
            asserts: Vec::new(),
            loops: Vec::new(),
            scratch_top: prog.private_bytes.div_ceil(16) * 16,
            brk: Vec::new(),
            cont: Vec::new(),
            rets: Vec::new(),
            skips: Vec::new(),
            inlining: Vec::new(),
            dyn_base: crate::value::dynamic_shared_base(prog),
        }
    }

    /// A fresh register.
    pub fn reg(&mut self, class: Class) -> Val {
        let n = &mut self.counts[class.index()];
        let text = format!("{}{}", class.prefix(), *n);
        *n += 1;
        Val {
            text,
            class,
            imm: false,
        }
    }

    /// The register of an IR slot.
    pub fn slot(&mut self, s: Slot, t: &Ty) -> Val {
        if let Some(v) = self.slot_regs.get(&s) {
            return v.clone();
        }
        let class = scalar(t).map(|s| s.class).unwrap_or(Class::B64);
        let v = self.reg(class);
        self.slot_regs.insert(s, v.clone());
        v
    }

    pub fn label(&mut self) -> String {
        self.labels += 1;
        format!("$L{}", self.labels)
    }

    /// Emits one instruction (without its `;`).
    pub fn ins(&mut self, text: String) -> Result<()> {
        if self.body.len() >= MAX_LINES {
            return Err(Error::Unsupported {
                file: self.file.to_string(),
                loc: self.cur_loc,
                what: format!("a kernel of more than {MAX_LINES} PTX instructions once its __device__ functions are inlined; split the call tree or use the compiled path"),
            });
        }
        self.body.push(format!("\t{text};"));
        Ok(())
    }

    /// Index of the next body line.
    pub fn next_line(&self) -> usize {
        self.body.len()
    }

    pub fn place_label(&mut self, l: &str) {
        self.body.push(format!("{l}:"));
    }

    /// Sets the source position of the instructions that follow.
    pub fn at(&mut self, loc: Loc) {
        if loc.line != 0 && loc != self.cur_loc {
            self.cur_loc = loc;
            self.body.push(format!("\t.loc 1 {} {}", loc.line, loc.col));
        }
    }

    /// Emits a memory instruction that is the IR access `site`.
    pub fn mem(&mut self, text: String, site: Option<SiteId>) -> Result<()> {
        if let Some(s) = site {
            self.sites.push((self.body.len(), s));
        }
        self.ins(text)
    }

    /// Emits `@p trap` for a failed `assert` at `loc`.
    pub fn assert_trap(&mut self, p: &Val, loc: Loc) -> Result<()> {
        self.asserts.push((self.body.len(), loc));
        self.ins(format!("@{} trap", p.text))
    }

    /// Emits `@p trap` guarding an integer division.
    pub fn division_trap(&mut self, p: &Val) -> Result<()> {
        self.traps.push(self.body.len());
        self.ins(format!("@{} trap", p.text))
    }

    /// `size` bytes of scratch, 16-byte aligned: a generic address in a fresh register.
    pub fn scratch(&mut self, size: u64) -> Result<Val> {
        let off = self.scratch_top;
        self.scratch_top = off.saturating_add(size.div_ceil(16).max(1) * 16);
        if self.scratch_top > 1 << 24 {
            return Err(Error::Unsupported {
                file: self.file.to_string(),
                loc: self.cur_loc,
                what: "more than 16 MiB of aggregate temporaries per thread".into(),
            });
        }
        self.private_addr(off)
    }

    /// The generic address of byte `off` of the thread's frame.
    pub fn private_addr(&mut self, off: u64) -> Result<Val> {
        let d = self.reg(Class::B64);
        self.ins(format!("mov.u64 {}, {}", d.text, addr::PRIVATE + off))?;
        Ok(d)
    }

    /// Emits a function's body: its `return`s leave for `end` with `result`.
    pub fn function_body(
        &mut self,
        body: &crate::ir::Stmt,
        end: String,
        result: Option<Val>,
    ) -> Result<()> {
        let done = if stmt::has_return(body) {
            let d = self.reg(Class::B32);
            self.ins(format!("mov.u32 {}, 0", d.text))?;
            Some(d)
        } else {
            None
        };
        self.rets.push((end.clone(), result, done));
        self.skips.push(end);
        let r = self.stmt(body);
        self.skips.pop();
        self.rets.pop();
        r
    }

    pub fn unsupported(&self, loc: Loc, what: impl Into<String>) -> Error {
        Error::Unsupported {
            file: self.file.to_string(),
            loc,
            what: what.into(),
        }
    }
}

/// An immediate of scalar type `t` from the IR's encoding (floats as `f64` bits, integers
/// sign- or zero-extended to 64 bits).
pub(crate) fn imm(v: u64, t: &Ty) -> Val {
    let sc = scalar(t).unwrap_or(Scalar {
        class: Class::B64,
        ptx: "u64",
        bytes: 8,
        signed: false,
        float: false,
        half: false,
        boolean: false,
    });
    let text = match sc.class {
        Class::F32 => format!("0f{:08X}", (f64::from_bits(v) as f32).to_bits()),
        Class::F64 => format!("0d{:016X}", v),
        Class::B32 if sc.signed => format!("{}", v as i64 as i32),
        Class::B32 => format!("{}", v as u32),
        _ if sc.signed => format!("{}", v as i64),
        _ => format!("{v}"),
    };
    Val {
        text,
        class: sc.class,
        imm: true,
    }
}

/// The PTX type a scalar parameter is declared and loaded as.
fn param_type(sc: Scalar) -> &'static str {
    match (sc.class, sc.bytes) {
        (Class::B64, _) => "u64",
        (Class::F32, 2) => "b16",
        (Class::F32, _) => "f32",
        (Class::F64, _) => "f64",
        (_, 1) => "u8",
        (_, 2) => "u16",
        _ => "u32",
    }
}

impl Gen<'_> {
    /// Loads the scalar at byte `off` of kernel parameter `i` into a register, widened as
    /// the interpreter keeps values (a `__half` as f32, a narrow signed integer sign-extended).
    fn load_param(&mut self, i: usize, off: u64, sc: Scalar) -> Result<Val> {
        let pty = param_type(sc);
        let v = self.reg(sc.class);
        let at = if off == 0 {
            format!("param_{i}")
        } else {
            format!("param_{i}+{off}")
        };
        self.ins(format!("ld.param.{pty} {}, [{at}]", v.text))?;
        Ok(if sc.half {
            let f = self.reg(Class::F32);
            self.ins(format!("cvt.f32.f16 {}, {}", f.text, v.text))?;
            f
        } else if sc.bytes < 4 && sc.class == Class::B32 && sc.signed {
            let d = self.reg(Class::B32);
            self.ins(format!("cvt.s32.s{} {}, {}", sc.bytes * 8, d.text, v.text))?;
            d
        } else {
            v
        })
    }
}

/// Lowers `prog` (its kernel and, inlined, the functions it calls) to one PTX `.entry`.
///
/// Errors: [`Error::Unsupported`] for an IR form the executor cannot run, or a kernel too
/// large once inlined.
pub(crate) fn generate(prog: &Lowered, file: &str) -> Result<Generated> {
    let mut g = Gen::new(prog, file);
    let kernel = &prog.funcs[prog.kernel];
    // Parameters: read once into their slots (or the private area).
    let mut params = Vec::new();
    for (i, p) in kernel.params.iter().enumerate() {
        let Some(sc) = scalar(&p.ty) else {
            // A struct passed by value: a byte array in parameter space, as nvcc declares
            // it, copied field by field into the variable's home.
            let (Ty::Struct(_), crate::ir::Home::Private(home)) = (&p.ty, p.home) else {
                return Err(g.unsupported(
                    kernel.loc,
                    format!(
                        "kernel parameter '{}' passed by value as an aggregate that is not a struct",
                        p.name
                    ),
                ));
            };
            let (size, align) = (prog.structs.size(&p.ty), prog.structs.align(&p.ty));
            params.push(format!("\t.param .align {align} .b8 param_{i}[{size}]"));
            let a = g.private_addr(home)?;
            for (_, off, fty) in prog.structs.scalar_parts(&p.ty, usize::MAX) {
                if let Some(fsc) = scalar(&fty) {
                    let v = g.load_param(i, off, fsc)?;
                    g.store_scalar(&a, off, &fty, &v, None)?;
                }
            }
            continue;
        };
        params.push(format!("\t.param .{} param_{i}", param_type(sc)));
        let v = g.load_param(i, 0, sc)?;
        g.assign_home(p.home, &p.ty, v)?;
    }
    let end = g.label();
    g.function_body(&kernel.body, end.clone(), None)?;
    g.place_label(&end);
    g.ins("ret".into())?;

    let frame = g.scratch_top.max(16);
    let mut head = vec![
        ".version 8.0".to_string(),
        ".target sm_90".to_string(),
        ".address_size 64".to_string(),
        format!(".file 1 \"{}\"", file.replace('\\', "/").replace('"', "'")),
    ];
    if !prog.constant.is_empty() {
        let bytes: Vec<String> = prog.constant.iter().map(|b| b.to_string()).collect();
        head.push(format!(
            ".const .align 16 .b8 warpscope_constant[{}] = {{{}}};",
            prog.constant.len(),
            bytes.join(",")
        ));
    }
    // Texture and surface references, as nvcc declares them [PTX ISA §5.3].
    for r in &prog.texture_refs {
        head.push(format!(
            ".global .{} {};",
            if r.surface { "surfref" } else { "texref" },
            r.name
        ));
    }
    if prog.static_shared_bytes > 0 {
        head.push(format!(
            ".shared .align 16 .b8 warpscope_shared[{}];",
            prog.static_shared_bytes
        ));
    }
    head.push(format!(".visible .entry {}(", ptx_name(&kernel.name)));
    let n = params.len();
    for (i, p) in params.into_iter().enumerate() {
        head.push(if i + 1 < n { format!("{p},") } else { p });
    }
    head.push(")".into());
    head.push("{".into());
    head.push(format!("\t.local .align 16 .b8 warpscope_frame[{frame}];"));
    for c in [Class::B32, Class::B64, Class::F32, Class::F64, Class::Pred] {
        head.push(format!(
            "\t.reg {} {}<{}>;",
            c.decl(),
            c.prefix(),
            g.counts[c.index()].max(1)
        ));
    }
    // The executor sizes shared, constant and local memory by the variables the entry
    // uses: use each once.
    head.push("\t.reg .b64 %rd_frame;".into());
    head.push("\tmov.u64 %rd_frame, warpscope_frame;".into());
    if !prog.constant.is_empty() {
        head.push("\tmov.u64 %rd_frame, warpscope_constant;".into());
    }
    if prog.static_shared_bytes > 0 {
        head.push("\tmov.u64 %rd_frame, warpscope_shared;".into());
    }
    let first = head.len() as u32 + 1;
    let mut ptx = head.join("\n");
    ptx.push('\n');
    ptx.push_str(&g.body.join("\n"));
    ptx.push_str("\n}\n");
    Ok(Generated {
        ptx,
        line_sites: g
            .sites
            .iter()
            .map(|(i, s)| (first + *i as u32, *s))
            .collect(),
        division_traps: g.traps.iter().map(|i| first + *i as u32).collect(),
        assert_traps: g.asserts.iter().map(|(i, _)| first + *i as u32).collect(),
        loops: g
            .loops
            .iter()
            .map(|(a, b, loc)| (first + *a as u32, first + *b as u32, *loc))
            .collect(),
    })
}

/// A PTX identifier for a kernel name (`stride<float>` → `stride_float_`).
fn ptx_name(name: &str) -> String {
    let mut s: String = name
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    if s.is_empty() || s.starts_with(|c: char| c.is_ascii_digit()) {
        s.insert(0, '_');
    }
    s
}
