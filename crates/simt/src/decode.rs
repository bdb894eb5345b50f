//! Decoding: one PTX entry (and the `.func`s it calls) into the executor's instruction array,
//! with registers resolved to indices, symbols to addresses, labels to instruction indices
//! and every memory instruction to a [`Site`].

use std::collections::{HashMap, HashSet};

use warpscope_model::{Op, Space};
use warpscope_ptx::ast::{self, Operand, StateSpace, Statement};

use crate::error::{At, Error, Result};
use crate::instr::*;
use crate::special::{special_index, SPECIALS};

/// Where `.shared`, `.const` and `.local` symbols live, and generic-address windows.
pub mod window {
    /// Generic addresses of shared memory start here (state-space offset added).
    pub const SHARED: u64 = 1 << 60;
    /// Generic addresses of constant memory.
    pub const CONST: u64 = 2 << 60;
    /// Generic addresses of local memory (per-thread offset added).
    pub const LOCAL: u64 = 3 << 60;
    /// Global allocations are this far apart (64 GiB), each 256-byte aligned; the same
    /// layout as the source front end, so `run`/`verify` size allocations the same way.
    pub const ALLOC_SPACING: u64 = 1 << 36;
    /// The first global allocation's base address.
    pub const ALLOC_BASE: u64 = 1 << 40;
    /// Module-scope `.global` variables come after this many parameter allocations.
    pub const GLOBAL_VAR_SLOT: u64 = 1 << 12;
}

/// A kernel parameter as the `.entry` declares it.
#[derive(Clone, Debug)]
pub struct Param {
    /// The PTX name (`_Z6offsetIfEvPT_i_param_0`).
    pub name: String,
    /// Type word as written (`u64`, `b32`, `b8` for byte arrays).
    pub ty: String,
    /// Bytes the parameter takes.
    pub bytes: u64,
    /// Declared pointee state space (`.ptr.global`, Triton), if any.
    pub ptr_global: bool,
    /// Registers that hold its bytes: (byte offset, bytes, register).
    pub(crate) regs: Vec<(u64, u8, Reg)>,
}

/// A module-scope `.global` variable: its own allocation.
#[derive(Clone, Debug)]
pub struct GlobalVar {
    pub name: String,
    pub bytes: u64,
    pub init: Vec<u8>,
    /// Its base address.
    pub base: u64,
}

/// A module-scope texture or surface reference: `.global .texref NAME;`, `.global .surfref
/// NAME;`, or the deprecated `.tex .u32 NAME;` (the same as `.global .texref NAME;`) [PTX ISA
/// §5.1.8 "Texture State Space (deprecated)", §5.3 "Texture Sampler and Surface Types"]. A
/// `tex`/`tld4`/`suld`/`sust` naming it takes `handle` as its texture; the launch binds it by
/// `name` ([`crate::TextureBinding`] with that handle, `--texture NAME=…`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TextureRef {
    pub name: String,
    /// `.surfref` (a surface), else a texture.
    pub surface: bool,
    /// [`crate::texref_handle`] of its index in [`Program::texture_refs`].
    pub handle: u64,
    /// Whether the entry (or a function it calls) names it.
    pub used: bool,
}

/// A decoded kernel: ready to run any launch.
#[derive(Clone, Debug)]
pub struct Program {
    /// The entry's PTX name.
    pub name: String,
    pub(crate) insts: Vec<Inst>,
    /// Registers of one thread (specials first).
    pub(crate) nregs: u32,
    /// For each instruction index of a conditional branch, where its paths reconverge (its
    /// block's immediate post-dominator), `u32::MAX` for none (exit).
    pub(crate) reconv: Vec<u32>,
    /// Every memory instruction.
    pub sites: Vec<Site>,
    /// `.file` entries: (index, path).
    pub files: Vec<(u32, String)>,
    pub params: Vec<Param>,
    /// Bytes of static shared memory of one block.
    pub static_shared_bytes: u64,
    /// Bytes of per-thread local memory (`.local` frames of all functions).
    pub local_bytes: u64,
    pub(crate) const_image: Vec<u8>,
    pub globals: Vec<GlobalVar>,
    /// The module's texture and surface references, in file order.
    pub texture_refs: Vec<TextureRef>,
    /// `.reqntid`/`.maxntid` of the entry, when given.
    pub reqntid: Option<[u64; 3]>,
    /// `.reqnctapercluster X, Y, Z` of the entry (what nvcc emits for
    /// `__cluster_dims__(X, Y, Z)`): the blocks per cluster every launch must have [PTX ISA
    /// §11.5 "Cluster Dimension Directives"].
    pub cluster_dims: Option<[u64; 3]>,
    /// `.explicitcluster`: the kernel must be launched with a cluster shape.
    pub explicit_cluster: bool,
    pub maxntid: Option<[u64; 3]>,
    /// Whether loaded values can reach an address or a predicate (see `dataflow`); when not,
    /// no global memory image is kept.
    pub needs_memory: bool,
    /// Local-memory byte ranges of a thread's frame whose accesses are reported; `None`:
    /// all. A front end that keeps some variables in the frame but models them as
    /// registers (the source front end's scalars and temporaries) lists only its real
    /// local arrays: accesses elsewhere in the frame still move data but are not accesses.
    pub local_reported: Option<Vec<(u64, u64)>>,
    /// Per instruction: skipped when `needs_memory` is false (its result matters to no
    /// access; see `dataflow::dead_values`).
    pub(crate) dead: Vec<bool>,
    /// Per instruction, the index in `spills` of the register spills ptxas ties to it
    /// (`u32::MAX`: none); empty when there are none ([`Program::apply_sass`]).
    pub(crate) spill_at: Vec<u32>,
    pub(crate) spills: Vec<Vec<crate::sass::Spill>>,
    /// Instruction indices (ascending) of the barriers synccheck leaves alone: `bar.arrive`
    /// and `bar.sync a, b` with a thread count, which part of a block may reach by design
    /// [PTX ISA §9.7.13.1 "bar, barrier"].
    pub(crate) counted_bars: Vec<u32>,
    /// Whether an instruction writes a special register (`%tid`, `%ctaid`, …: PTX forbids
    /// it, ptxas refuses it): then a warp's registers are never reused from block to block.
    pub(crate) writes_specials: bool,
    /// The special registers some instruction reads (`%ctaid.x`, …): a reused warp sets only
    /// these again (`BlockCtx::new_warp`).
    pub(crate) read_specials: Vec<bool>,
    /// The program registers a reused warp sets back to 0, as `[first, end)` ranges
    /// ([`crate::dataflow::zeroed_on_reuse`]).
    pub(crate) zeroed_on_reuse: Vec<(u32, u32)>,
    /// PTX line of the first instruction that orders memory between threads otherwise than
    /// a block barrier: a fence (`membar`, `fence`), an `ld`/`st`/`atom`/`red` with
    /// `.acquire`, `.release` or `.acq_rel`, a `nanosleep` (a spin wait's back-off). Such a
    /// kernel may synchronize its warps through memory (a software barrier, flag or lock),
    /// which racecheck does not follow.
    pub(crate) memory_sync: Option<u32>,
}

struct FuncInfo {
    start: u32,
    params: Vec<Vec<(u64, u8, Reg)>>,
    rets: Vec<Vec<(u64, u8, Reg)>>,
}

struct Decoder<'m> {
    module: &'m ast::Module,
    insts: Vec<Inst>,
    nregs: u32,
    sites: Vec<Site>,
    /// `.loc F L C, inlined_at …`: each inlined location's call site, to follow a chain of
    /// inlining within one header (`tex2D` → `__nv_tex_surf_handler`) back to its caller.
    inline_parent: HashMap<(u32, u32, u32), (u32, u32, u32)>,
    /// Module-scope symbols: name → (state space, address).
    globals: HashMap<String, (StateSpace, u64)>,
    shared_top: u64,
    /// See [`Program::counted_bars`].
    counted_bars: Vec<u32>,
    /// See [`Program::memory_sync`].
    memory_sync: Option<u32>,
    /// Where extern (dynamic) shared arrays start: after every static one, 16-byte aligned.
    extern_shared_base: u64,
    /// Addresses of function-scope static shared variables: (function, name) → address.
    function_shared: HashMap<(String, String), u64>,
    local_top: u64,
    const_image: Vec<u8>,
    global_vars: Vec<GlobalVar>,
    texture_refs: Vec<TextureRef>,
    funcs: HashMap<String, FuncInfo>,
    /// Functions being decoded right now (a call to one of these is recursion).
    active: Vec<String>,
    /// The kernel's parameter names, in order.
    entry_params: Vec<String>,
}

/// A name scope: registers and params by name, labels, params as registers by offset.
#[derive(Default)]
struct Scope {
    regs: HashMap<String, Reg>,
    /// `%r<12>` declarations: prefix → (first register, count).
    ranges: HashMap<String, (Reg, u32)>,
    /// `.param` variables (and a function's parameters): name → [(offset, bytes, reg)].
    params: HashMap<String, Vec<(u64, u8, Reg)>>,
    /// Function-scope `.shared`/`.local` symbols.
    symbols: HashMap<String, (StateSpace, u64)>,
}

fn at(pos: ast::Pos, loc: Option<(u32, u32, u32)>) -> At {
    At {
        ptx_line: pos.line,
        ptx_col: pos.col,
        source: loc.map(|(f, l, c)| format!("file {f} line {l}:{c}")),
        loc,
    }
}

fn align_up(x: u64, a: u64) -> u64 {
    x.div_ceil(a.max(1)).saturating_mul(a.max(1))
}

fn type_bytes(ty: &str) -> u64 {
    match ty {
        "b8" | "u8" | "s8" | "pred" => 1,
        "b16" | "u16" | "s16" | "f16" | "bf16" => 2,
        "b32" | "u32" | "s32" | "f32" | "f16x2" | "bf16x2" => 4,
        "b64" | "u64" | "s64" | "f64" => 8,
        "b128" => 16,
        _ => 4,
    }
}

/// The names the entry and every function it calls, directly or not, refer to (variables,
/// functions, labels), with the functions' own names.
fn used_names<'m>(module: &'m ast::Module, entry: &'m ast::Function) -> HashSet<&'m str> {
    fn operand<'m>(o: &'m Operand, out: &mut Vec<&'m str>) {
        match o {
            Operand::Symbol(n) => out.push(n),
            Operand::Address { base: Some(b), .. } | Operand::Not(b) => operand(b, out),
            Operand::Vector(v) | Operand::List(v) => v.iter().for_each(|x| operand(x, out)),
            _ => {}
        }
    }
    fn body<'m>(stmts: &'m [Statement], out: &mut Vec<&'m str>, depth: u32) {
        for s in stmts {
            match s {
                Statement::Instruction(i) => i.operands.iter().for_each(|o| operand(o, out)),
                Statement::Block(b, _) if depth < 64 => body(b, out, depth + 1),
                _ => {}
            }
        }
    }
    let mut used: HashSet<&str> = HashSet::new();
    let mut queue = vec![entry];
    used.insert(&entry.name);
    while let Some(f) = queue.pop() {
        let mut names = Vec::new();
        if let Some(b) = &f.body {
            body(b, &mut names, 0);
        }
        for n in names {
            if used.insert(n) {
                if let Some(g) = module
                    .functions
                    .iter()
                    .find(|g| g.name == n && g.body.is_some())
                {
                    queue.push(g);
                }
            }
        }
    }
    used
}

fn var_bytes(v: &ast::Variable) -> Option<u64> {
    let mut n = type_bytes(&v.ty) * v.vector.max(1) as u64;
    for d in &v.dims {
        n = n.checked_mul((*d)?)?;
    }
    Some(n)
}

fn var_align(v: &ast::Variable) -> u64 {
    v.align
        .map(u64::from)
        .unwrap_or(type_bytes(&v.ty) * v.vector.max(1) as u64)
}

/// Bytes of constant memory a module may declare: 64 KB on every compute capability
/// [PG "Technical Specifications per Compute Capability", "Constant memory size"].
pub const CONSTANT_MEMORY_BYTES: u64 = 64 * 1024;

/// Initializer bytes of a variable (integers and float bit patterns, little-endian), as far
/// as its initializer goes (the rest is zero).
fn init_bytes(v: &ast::Variable, size: u64) -> Vec<u8> {
    let given = (v.init.len() as u64).saturating_mul(type_bytes(&v.ty));
    let mut out = vec![0u8; size.min(given) as usize];
    let el = type_bytes(&v.ty) as usize;
    for (i, op) in v.init.iter().enumerate() {
        let bits = match op {
            Operand::Int(x) => *x as u64,
            Operand::F32(b) => *b as u64,
            Operand::F64(b) => *b,
            _ => 0,
        };
        let o = i * el;
        if o + el <= out.len() {
            out[o..o + el].copy_from_slice(&bits.to_le_bytes()[..el]);
        }
    }
    out
}

impl Program {
    /// Decodes the entry `entry` of `module` and every `.func` it calls.
    ///
    /// Errors: [`Error::Unsupported`] naming the first instruction the executor cannot run
    /// (`tcgen05`, `multimem`, `mma` with `.kind::`, …) with its PTX line; [`Error::Invalid`]
    /// for an undeclared register, an unknown label or symbol, or a malformed operand.
    pub fn decode(module: &ast::Module, entry: &ast::Function) -> Result<Program> {
        let mut d = Decoder {
            module,
            insts: Vec::new(),
            nregs: SPECIALS.len() as u32,
            sites: Vec::new(),
            inline_parent: HashMap::new(),
            globals: HashMap::new(),
            shared_top: 0,
            extern_shared_base: 0,
            counted_bars: Vec::new(),
            memory_sync: None,
            function_shared: HashMap::new(),
            local_top: 0,
            const_image: Vec::new(),
            global_vars: Vec::new(),
            texture_refs: Vec::new(),
            funcs: HashMap::new(),
            active: Vec::new(),
            entry_params: entry.params.iter().map(|p| p.name.clone()).collect(),
        };
        d.module_vars(&used_names(module, entry))?;
        let mut top = Scope::default();
        let params = d.declare_params(&mut top, &entry.params);
        let body = entry.body.as_ref().ok_or_else(|| {
            Error::Launch(format!(
                "the entry {} is only declared here (no body); give the PTX file that defines it",
                entry.name
            ))
        })?;
        d.active.push(entry.name.clone());
        let mut scopes = vec![top];
        d.body(body, &mut scopes, false)?;
        // A body that falls off its end exits.
        d.push(Instr::Exit, None, entry.pos, None);
        d.active.pop();
        let dirs = |n: &str| {
            entry
                .directives
                .iter()
                .find(|(k, _)| k == n)
                .map(|(_, v)| [0, 1, 2].map(|i| v.get(i).copied().unwrap_or(1)))
        };
        let reconv = crate::cfg::reconvergence(&d.insts);
        let needs_memory = crate::dataflow::loaded_values_matter(&d.insts, d.nregs);
        let dead = crate::dataflow::dead_values(&d.insts, d.nregs);
        let writes_specials = d.insts.iter().any(|i| {
            crate::dataflow::defs_uses(&i.instr)
                .0
                .iter()
                .any(|&r| (r as usize) < SPECIALS.len())
        });
        let mut read_specials = vec![false; SPECIALS.len()];
        for i in &d.insts {
            for u in crate::dataflow::defs_uses(&i.instr).1 {
                if let crate::instr::Src::Reg(r) = u {
                    if let Some(x) = read_specials.get_mut(r as usize) {
                        *x = true;
                    }
                }
            }
            if let Some((p, _)) = i.guard {
                if let Some(x) = read_specials.get_mut(p as usize) {
                    *x = true;
                }
            }
        }
        let zeroed_on_reuse =
            crate::dataflow::zeroed_on_reuse(&d.insts, d.nregs, SPECIALS.len() as u32);
        Ok(Program {
            writes_specials,
            read_specials,
            zeroed_on_reuse,
            name: entry.name.clone(),
            nregs: d.nregs,
            reconv,
            sites: d.sites,
            files: module.files.clone(),
            params: entry
                .params
                .iter()
                .zip(params)
                .map(|(p, regs)| Param {
                    name: p.name.clone(),
                    ty: p.ty.clone(),
                    bytes: var_bytes(p).unwrap_or(8),
                    ptr_global: p.ptr_space == Some(StateSpace::Global),
                    regs,
                })
                .collect(),
            static_shared_bytes: d.shared_top,
            local_bytes: d.local_top,
            const_image: d.const_image,
            globals: d.global_vars,
            texture_refs: d.texture_refs,
            insts: d.insts,
            reqntid: dirs("reqntid"),
            cluster_dims: dirs("reqnctapercluster"),
            explicit_cluster: entry.directives.iter().any(|(n, _)| n == "explicitcluster"),
            maxntid: dirs("maxntid"),
            needs_memory,
            local_reported: None,
            dead,
            spill_at: Vec::new(),
            spills: Vec::new(),
            counted_bars: d.counted_bars,
            memory_sync: d.memory_sync,
        })
    }

    /// The address `extern .shared` arrays start at: after the static shared variables,
    /// 16-byte aligned (bytes into the block's shared window).
    pub fn dynamic_shared_base(&self) -> u64 {
        align_up(self.static_shared_bytes, 16)
    }

    /// Number of decoded instructions.
    pub fn instruction_count(&self) -> usize {
        self.insts.len()
    }
}

impl<'m> Decoder<'m> {
    /// Lays out the module's variables. Static `.shared` variables (and function-scope ones)
    /// get space only when `used` (the entry and its callees) names them, as ptxas allocates
    /// a kernel's shared memory: nvcc puts every kernel's `__shared__` arrays at module scope.
    fn module_vars(&mut self, used: &HashSet<&str>) -> Result<()> {
        let mut extern_shared = Vec::new();
        for v in &self.module.globals {
            let size = var_bytes(v);
            let reference = match (v.space, v.ty.as_str()) {
                (StateSpace::Tex, _) | (StateSpace::Global, "texref") => Some(false),
                (StateSpace::Global, "surfref") => Some(true),
                _ => None,
            };
            if let Some(surface) = reference {
                let handle = crate::texref_handle(self.texture_refs.len());
                self.texture_refs.push(TextureRef {
                    name: v.name.clone(),
                    surface,
                    handle,
                    used: used.contains(v.name.as_str()),
                });
                self.globals
                    .insert(v.name.clone(), (StateSpace::Tex, handle));
                continue;
            }
            // `.global .samplerref` (independent texture mode): the sampler operand is
            // skipped by the texture instructions, so it needs no place.
            if v.space == StateSpace::Global && v.ty == "samplerref" {
                continue;
            }
            match v.space {
                StateSpace::Shared => {
                    if size.is_none() || v.linkage.iter().any(|l| l == "extern") {
                        extern_shared.push(v.name.clone());
                        continue;
                    }
                    if !used.contains(v.name.as_str()) {
                        continue;
                    }
                    let a = align_up(self.shared_top, var_align(v));
                    self.globals.insert(v.name.clone(), (StateSpace::Shared, a));
                    self.shared_top = a.saturating_add(size.unwrap_or(0));
                }
                StateSpace::Const => {
                    // No size: an unsized `[]` (none), or one that overflows (too large).
                    let size = size.unwrap_or(if v.dims.iter().all(Option::is_some) {
                        u64::MAX
                    } else {
                        0
                    });
                    let a = align_up(self.const_image.len() as u64, var_align(v));
                    let end = a.saturating_add(size);
                    if end > CONSTANT_MEMORY_BYTES {
                        return Err(Error::Invalid {
                            at: at(v.pos, None),
                            msg: format!(
                                "constant variable {} of {size} bytes would end at byte {end} of constant memory, which holds {CONSTANT_MEMORY_BYTES} bytes (64 KB) on every compute capability [PG \"Technical Specifications\"]; make it smaller or put it in global memory",
                                v.name
                            ),
                        });
                    }
                    let init = init_bytes(v, size);
                    self.const_image.resize(a as usize, 0);
                    self.const_image.extend_from_slice(&init);
                    self.const_image.resize(end as usize, 0);
                    self.globals.insert(v.name.clone(), (StateSpace::Const, a));
                }
                StateSpace::Global => {
                    let size = size.unwrap_or(0);
                    let slot = window::GLOBAL_VAR_SLOT + self.global_vars.len() as u64;
                    let base = window::ALLOC_BASE + slot * window::ALLOC_SPACING;
                    self.global_vars.push(GlobalVar {
                        name: v.name.clone(),
                        bytes: size,
                        init: init_bytes(v, size),
                        base,
                    });
                    self.globals
                        .insert(v.name.clone(), (StateSpace::Global, base));
                }
                _ => {}
            }
        }
        // Function-scope static shared variables come next, in file order, so that the
        // dynamic base (where every extern array starts) is known before any instruction
        // is decoded.
        let module = self.module;
        for f in &module.functions {
            if let (Some(body), true) = (&f.body, used.contains(f.name.as_str())) {
                self.layout_function_shared(&f.name, body, 0);
            }
        }
        let base = align_up(self.shared_top, 16);
        self.extern_shared_base = base;
        for n in extern_shared {
            self.globals.insert(n, (StateSpace::Shared, base));
        }
        Ok(())
    }

    /// Places the sized `.shared` variables declared in a function's body.
    fn layout_function_shared(&mut self, func: &str, stmts: &[Statement], depth: u32) {
        for s in stmts {
            match s {
                Statement::Variable(v) if v.space == StateSpace::Shared => {
                    if let Some(size) = var_bytes(v) {
                        let a = align_up(self.shared_top, var_align(v));
                        self.shared_top = a.saturating_add(size);
                        self.function_shared
                            .insert((func.to_string(), v.name.clone()), a);
                    }
                }
                Statement::Block(b, _) if depth < 64 => {
                    self.layout_function_shared(func, b, depth + 1)
                }
                _ => {}
            }
        }
    }

    fn declare_params(
        &mut self,
        scope: &mut Scope,
        params: &[ast::Variable],
    ) -> Vec<Vec<(u64, u8, Reg)>> {
        params
            .iter()
            .map(|p| {
                let bytes = var_bytes(p).unwrap_or(8);
                let el = type_bytes(&p.ty).min(8);
                let regs = self.param_regs(bytes, el);
                scope.params.insert(p.name.clone(), regs.clone());
                regs
            })
            .collect()
    }

    /// Registers for a parameter of `bytes`, one per element of `el` bytes (byte arrays get
    /// one register per 4 bytes, split further on access).
    fn param_regs(&mut self, bytes: u64, el: u64) -> Vec<(u64, u8, Reg)> {
        let el = if el == 1 && bytes > 1 { 1 } else { el };
        let n = bytes.div_ceil(el).min(4096);
        (0..n)
            .map(|i| {
                let r = self.nregs;
                self.nregs += 1;
                (i * el, el as u8, r)
            })
            .collect()
    }

    fn function(&mut self, name: &str) -> Result<()> {
        let module = self.module;
        let Some(f) = module
            .functions
            .iter()
            .find(|f| f.name == name && f.body.is_some())
        else {
            return Err(Error::Launch(format!(
                "the kernel calls {name}, which this PTX declares but does not define (an external or library function); warpscope runs only functions whose PTX it has"
            )));
        };
        let mut top = Scope::default();
        let params = self.declare_params(&mut top, &f.params);
        let rets = self.declare_params(&mut top, &f.returns);
        let start = self.insts.len() as u32;
        self.funcs.insert(
            name.to_string(),
            FuncInfo {
                start,
                params,
                rets,
            },
        );
        self.active.push(name.to_string());
        let mut scopes = vec![top];
        if let Some(body) = &f.body {
            self.body(body, &mut scopes, true)?;
        }
        self.push(Instr::Ret, None, f.pos, None);
        self.active.pop();
        Ok(())
    }

    fn push(
        &mut self,
        instr: Instr,
        guard: Option<(Reg, bool)>,
        pos: ast::Pos,
        loc: Option<(u32, u32, u32)>,
    ) {
        self.insts.push(Inst {
            instr,
            guard,
            ptx_line: pos.line,
            ptx_col: pos.col,
            loc,
        });
    }

    fn body(&mut self, stmts: &[Statement], scopes: &mut Vec<Scope>, in_func: bool) -> Result<()> {
        // Labels are local to the function: collect them first (forward branches).
        let mut labels: HashMap<String, u32> = HashMap::new();
        let mut fixups: Vec<(usize, String, ast::Pos)> = Vec::new();
        let mut loc: Option<(u32, u32, u32)> = None;
        let mut inl: Option<(u32, u32, u32)> = None;
        self.stmts(
            stmts,
            scopes,
            in_func,
            &mut labels,
            &mut fixups,
            &mut loc,
            &mut inl,
            0,
        )?;
        for (i, l, pos) in fixups {
            let Some(&t) = labels.get(&l) else {
                return Err(Error::Invalid {
                    at: at(pos, None),
                    msg: format!("branch to an undefined label '{l}'"),
                });
            };
            if let Instr::Bra { target } = &mut self.insts[i].instr {
                *target = t;
            }
        }
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn stmts(
        &mut self,
        stmts: &[Statement],
        scopes: &mut Vec<Scope>,
        in_func: bool,
        labels: &mut HashMap<String, u32>,
        fixups: &mut Vec<(usize, String, ast::Pos)>,
        loc: &mut Option<(u32, u32, u32)>,
        inl: &mut Option<(u32, u32, u32)>,
        depth: u32,
    ) -> Result<()> {
        if depth > 64 {
            return Err(Error::Launch(
                "blocks nested more than 64 deep in the PTX".into(),
            ));
        }
        for s in stmts {
            match s {
                Statement::Label(l, _) => {
                    labels.insert(l.clone(), self.insts.len() as u32);
                }
                Statement::Loc(l) => {
                    *loc = Some((l.file, l.line, l.col));
                    *inl = l.inlined_at;
                    if let Some(at) = l.inlined_at {
                        self.inline_parent.insert((l.file, l.line, l.col), at);
                    }
                }
                Statement::Directive(..) => {}
                Statement::Block(b, _) => {
                    scopes.push(Scope::default());
                    self.stmts(b, scopes, in_func, labels, fixups, loc, inl, depth + 1)?;
                    scopes.pop();
                }
                Statement::Variable(v) => self.local_var(v, scopes)?,
                Statement::Instruction(i) => {
                    let ctx = Ctx {
                        loc: *loc,
                        inlined_at: *inl,
                        in_func,
                    };
                    let before = self.insts.len();
                    let label = self.instruction(i, scopes, &ctx)?;
                    if let Some(l) = label {
                        fixups.push((before, l, i.pos));
                    }
                }
            }
        }
        Ok(())
    }

    fn local_var(&mut self, v: &ast::Variable, scopes: &mut [Scope]) -> Result<()> {
        let Some(scope) = scopes.last_mut() else {
            return Ok(());
        };
        match v.space {
            StateSpace::Reg => {
                if let Some(n) = v.range {
                    scope.ranges.insert(v.name.clone(), (self.nregs, n));
                    self.nregs = self.nregs.checked_add(n).filter(|&x| x < 1 << 24).ok_or_else(|| {
                        Error::Invalid {
                            at: at(v.pos, None),
                            msg: format!("{} registers declared: too many", v.name),
                        }
                    })?;
                } else {
                    scope.regs.insert(v.name.clone(), self.nregs);
                    self.nregs += 1;
                }
            }
            StateSpace::Param => {
                let bytes = var_bytes(v).unwrap_or(8);
                let el = type_bytes(&v.ty).min(8);
                let regs = self.param_regs(bytes, el);
                scope.params.insert(v.name.clone(), regs);
            }
            StateSpace::Shared => {
                // Laid out before decoding (`layout_function_shared`).
                let func = self.active.last().cloned().unwrap_or_default();
                let a = match var_bytes(v) {
                    Some(_) => self
                        .function_shared
                        .get(&(func, v.name.clone()))
                        .copied()
                        .unwrap_or(self.extern_shared_base),
                    None => self.extern_shared_base,
                };
                scope.symbols.insert(v.name.clone(), (StateSpace::Shared, a));
            }
            StateSpace::Local => {
                let size = var_bytes(v).unwrap_or(0);
                let a = align_up(self.local_top, var_align(v));
                // Saturating: a size past any limit is refused per compute capability
                // (512 KiB a thread) before the launch runs.
                self.local_top = a.saturating_add(size);
                scope.symbols.insert(v.name.clone(), (StateSpace::Local, a));
            }
            _ => {
                return Err(Error::Unsupported {
                    at: at(v.pos, None),
                    instr: format!(".{:?} variable {}", v.space, v.name).to_lowercase(),
                    why: "only .reg, .param, .shared and .local variables are supported inside a function".into(),
                })
            }
        }
        Ok(())
    }

    fn reg(&self, name: &str, scopes: &[Scope], at: &At) -> Result<Reg> {
        if let Some(i) = special_index(name) {
            return Ok(i);
        }
        Self::scoped_reg(name, scopes).ok_or_else(|| Error::Invalid {
            at: at.clone(),
            msg: format!("register '{name}' is not declared"),
        })
    }

    /// The register `name` declares in the innermost scope that has it: by its own `.reg`,
    /// or as `%r12` of a `%r<N>` range (the trailing digits split off).
    fn scoped_reg(name: &str, scopes: &[Scope]) -> Option<Reg> {
        let digits = name.len() - name.trim_end_matches(|c: char| c.is_ascii_digit()).len();
        let (prefix, index) = name.split_at(name.len() - digits);
        scopes.iter().rev().find_map(|s| {
            s.regs.get(name).copied().or_else(|| {
                let (&(base, count), k) = (s.ranges.get(prefix)?, index.parse::<u32>().ok()?);
                (digits > 0 && k < count).then_some(base + k)
            })
        })
    }

    /// Whether an operand (or a part of it) is a symbol naming a register.
    fn names_scoped_reg(&self, o: &Operand, scopes: &[Scope]) -> bool {
        match o {
            Operand::Symbol(n) => Self::scoped_reg(n, scopes).is_some(),
            Operand::Vector(v) | Operand::List(v) => {
                v.iter().any(|x| self.names_scoped_reg(x, scopes))
            }
            Operand::Not(x) => self.names_scoped_reg(x, scopes),
            Operand::Address { base: Some(b), .. } => self.names_scoped_reg(b, scopes),
            _ => false,
        }
    }

    fn symbols_to_regs(&self, o: &mut Operand, scopes: &[Scope]) {
        match o {
            Operand::Symbol(n) if Self::scoped_reg(n, scopes).is_some() => {
                *o = Operand::Reg(n.clone())
            }
            Operand::Vector(v) | Operand::List(v) => {
                v.iter_mut().for_each(|x| self.symbols_to_regs(x, scopes))
            }
            Operand::Not(x) => self.symbols_to_regs(x, scopes),
            Operand::Address { base: Some(b), .. } => self.symbols_to_regs(b, scopes),
            _ => {}
        }
    }

    fn symbol(&self, name: &str, scopes: &[Scope]) -> Option<(StateSpace, u64)> {
        for s in scopes.iter().rev() {
            if let Some(&x) = s.symbols.get(name) {
                return Some(x);
            }
        }
        self.globals.get(name).copied()
    }

    fn param(&self, name: &str, scopes: &[Scope]) -> Option<Vec<(u64, u8, Reg)>> {
        for s in scopes.iter().rev() {
            if let Some(x) = s.params.get(name) {
                return Some(x.clone());
            }
        }
        None
    }
}

/// Per-instruction context.
pub(crate) struct Ctx {
    pub loc: Option<(u32, u32, u32)>,
    pub inlined_at: Option<(u32, u32, u32)>,
    pub in_func: bool,
}

// Instruction decoding proper lives in `decode_inst.rs` (split by concern).
impl<'m> Decoder<'m> {
    fn instruction(
        &mut self,
        i: &ast::Instruction,
        scopes: &[Scope],
        ctx: &Ctx,
    ) -> Result<Option<String>> {
        let a = at(i.pos, ctx.loc);
        // Inline asm declares registers without `%` (`{.reg .f16 low; mov.b32 {low,high}, %r6;}`):
        // the parser sees symbols; names of registers in scope are registers.
        let renamed;
        let i = if i.operands.iter().any(|o| self.names_scoped_reg(o, scopes)) {
            let mut copy = i.clone();
            for o in &mut copy.operands {
                self.symbols_to_regs(o, scopes);
            }
            renamed = copy;
            &renamed
        } else {
            i
        };
        let guard = match &i.guard {
            Some(g) => Some((self.reg(&g.reg, scopes, &a)?, g.negated)),
            None => None,
        };
        let mut dc = crate::decode_inst::InstDecoder {
            i,
            at: a.clone(),
            resolve: &|op: &Operand, ty: Option<Ty>| self.src(op, ty, scopes, &a),
            dest: &|op: &Operand| self.dest(op, scopes, &a),
            addr: &|op: &Operand| self.addr(op, scopes, &a),
            param: &|op: &Operand| self.param_slot(op, scopes, &a),
        };
        let out = dc.decode()?;
        use crate::decode_inst::Decoded;
        let mut label = None;
        let instr = match out {
            Decoded::Plain(x) => x,
            Decoded::Branch(l) => {
                label = Some(l);
                Instr::Bra { target: u32::MAX }
            }
            Decoded::Memory(mut x, kinds) => {
                let mut ids = Vec::new();
                for k in kinds {
                    ids.push(self.sites.len() as u32);
                    self.sites.push(Site {
                        ptx_line: i.pos.line,
                        ptx: std::iter::once(i.opcode.as_str())
                            .chain(i.mods.iter().map(|s| s.as_str()))
                            .collect::<Vec<_>>()
                            .join("."),
                        op: k.op,
                        space: k.space,
                        read_only: k.read_only,
                        atomic: k.atomic,
                        loc: ctx.loc,
                        inlined_at: self.outer_call(ctx.loc, ctx.inlined_at),
                        callers: self.callers(ctx.inlined_at),
                        sass: Default::default(),
                    });
                }
                match &mut x {
                    Instr::Ld { site, .. }
                    | Instr::St { site, .. }
                    | Instr::Atom { site, .. }
                    | Instr::Matrix { site, .. } => *site = ids[0],
                    Instr::Texture(t) => t.site = ids[0],
                    Instr::AsyncStore(a) => a.site = ids[0],
                    Instr::TensorCopy(t) => {
                        t.global_site = ids[0];
                        t.shared_site = ids.get(1).copied().unwrap_or(ids[0]);
                    }
                    Instr::BulkPrefetch { site, .. } => *site = ids[0],
                    Instr::TensormapReplace(t) => {
                        t.load_site = ids[0];
                        t.store_site = ids[ids.len() - 1];
                    }
                    Instr::Wmma(w) => w.site = ids[0],
                    Instr::Wgmma(w) => w.site = ids[0],
                    Instr::Tcgen05(t) => match &mut **t {
                        Tc5Op::Mma(m) => m.site = ids[0],
                        Tc5Op::Cp(c) => c.site = ids[0],
                        _ => {}
                    },
                    Instr::CpAsync {
                        load_site,
                        store_site,
                        ..
                    }
                    | Instr::CpBulk {
                        load_site,
                        store_site,
                        ..
                    }
                    | Instr::TensormapCopy {
                        load_site,
                        store_site,
                        ..
                    } => {
                        *load_site = ids[0];
                        *store_site = ids[1];
                    }
                    _ => {}
                }
                x
            }
            Decoded::Call { func, args, rets } => self.call(i, &func, args, rets, scopes, &a)?,
            Decoded::Ret => {
                if ctx.in_func {
                    Instr::Ret
                } else {
                    Instr::Exit
                }
            }
            Decoded::Many(list) => {
                for x in list {
                    self.push(x, guard, i.pos, ctx.loc);
                }
                return Ok(None);
            }
        };
        if matches!(instr, Instr::Bar)
            && (i.mods.iter().any(|m| m == "arrive") || i.operands.len() > 1)
        {
            self.counted_bars.push(self.insts.len() as u32);
        }
        let ordered = |m: &String| matches!(m.as_str(), "acquire" | "release" | "acq_rel");
        let memory_sync = match i.opcode.as_str() {
            "membar" | "fence" | "nanosleep" => true,
            "ld" | "st" | "atom" | "red" => i.mods.iter().any(ordered),
            _ => false,
        };
        if memory_sync && self.memory_sync.is_none() {
            self.memory_sync = Some(i.pos.line);
        }
        self.push(instr, guard, i.pos, ctx.loc);
        Ok(label)
    }

    /// The chain of call sites from `at` outwards.
    fn callers(&self, mut at: Option<(u32, u32, u32)>) -> Vec<(u32, u32, u32)> {
        let mut out = Vec::new();
        while let Some(a) = at {
            if out.len() == 16 {
                break;
            }
            out.push(a);
            at = self.inline_parent.get(&a).copied();
        }
        out
    }

    /// The call site of an inlined location, followed out of the location's own file: code
    /// inlined from a header through further functions of that header is attributed to the
    /// line outside it that called the first.
    fn outer_call(
        &self,
        loc: Option<(u32, u32, u32)>,
        mut at: Option<(u32, u32, u32)>,
    ) -> Option<(u32, u32, u32)> {
        let file = loc?.0;
        for _ in 0..16 {
            match at {
                Some(a) if a.0 == file => match self.inline_parent.get(&a) {
                    Some(&p) => at = Some(p),
                    None => break,
                },
                _ => break,
            }
        }
        at
    }

    fn call(
        &mut self,
        i: &ast::Instruction,
        func: &str,
        args: Vec<Operand>,
        rets: Vec<Operand>,
        scopes: &[Scope],
        a: &At,
    ) -> Result<Instr> {
        if self.active.iter().any(|f| f == func) {
            return Err(Error::Unsupported {
                at: a.clone(),
                instr: format!("call {func}"),
                why: "recursive calls are not supported".into(),
            });
        }
        if func == "vprintf" {
            // printf: its arguments were already stored to local memory; the call itself
            // moves nothing we count. The return value is 0.
            let mut list = Vec::new();
            for r in rets {
                for (_, _, reg) in self.param_slot(&r, scopes, a)? {
                    list.push((reg, Src::Imm(0)));
                }
            }
            let _ = i;
            return Ok(match list.first() {
                Some(&(d, s)) => Instr::Mov { d, a: s, bytes: 4 },
                None => Instr::Nop,
            });
        }
        if matches!(func, "__assertfail" | "__assert_fail") && !self.funcs.contains_key(func) {
            // assert(): nvcc calls __assertfail(message, file, line, function, charSize) when
            // the condition is false; the launch stops there, as on the GPU.
            let slot = |k: usize| -> Result<Src> {
                Ok(match args.get(k) {
                    Some(op) => self
                        .param_slot(op, scopes, a)?
                        .first()
                        .map_or(Src::Imm(0), |&(_, _, r)| Src::Reg(r)),
                    None => Src::Imm(0),
                })
            };
            return Ok(Instr::AssertFail {
                message: slot(0)?,
                file: slot(1)?,
                line: slot(2)?,
            });
        }
        // The callee is decoded the first time it is called, behind a branch over its body,
        // so that its parameter registers can be named here.
        if !self.funcs.contains_key(func) {
            let jump_at = self.insts.len();
            self.push(Instr::Bra { target: 0 }, None, i.pos, None);
            self.function(func)?;
            let after = self.insts.len() as u32;
            if let Instr::Bra { target } = &mut self.insts[jump_at].instr {
                *target = after;
            }
        }
        let Some(info) = self.funcs.get(func) else {
            return Err(Error::Invalid {
                at: a.clone(),
                msg: format!("call of an unknown function '{func}'"),
            });
        };
        let mut arg_moves = Vec::new();
        for (k, op) in args.iter().enumerate() {
            let Some(dst) = info.params.get(k) else { break };
            let dst = dst.clone();
            let src = self.param_slot(op, scopes, a)?;
            for ((_, _, d), (_, _, s)) in dst.iter().zip(src.iter()) {
                arg_moves.push((*d, Src::Reg(*s)));
            }
        }
        let info = &self.funcs[func];
        let mut ret_moves = Vec::new();
        for (k, op) in rets.iter().enumerate() {
            let Some(src) = info.rets.get(k) else { break };
            let src = src.clone();
            let dst = self.param_slot(op, scopes, a)?;
            for ((_, _, d), (_, _, s)) in dst.iter().zip(src.iter()) {
                ret_moves.push((*d, *s));
            }
        }
        let target = self.funcs[func].start;
        Ok(Instr::Call {
            target,
            args: arg_moves,
            rets: ret_moves,
        })
    }

    fn src(&self, op: &Operand, ty: Option<Ty>, scopes: &[Scope], a: &At) -> Result<Src> {
        Ok(match op {
            Operand::Reg(n) => Src::Reg(self.reg(n, scopes, a)?),
            Operand::Int(x) => Src::Imm(*x as u64),
            Operand::F32(b) => match ty {
                Some(Ty {
                    kind: Kind::Float,
                    bytes: 8,
                }) => Src::Imm((f32::from_bits(*b) as f64).to_bits()),
                _ => Src::Imm(*b as u64),
            },
            Operand::F64(b) => match ty {
                Some(Ty {
                    kind: Kind::Float,
                    bytes: 4,
                }) => Src::Imm((f64::from_bits(*b) as f32).to_bits() as u64),
                _ => Src::Imm(*b),
            },
            Operand::Symbol(s) => match self.symbol(s, scopes) {
                Some((_, addr)) => Src::Imm(addr),
                None => match self.param(s, scopes) {
                    Some(p) if p.len() == 1 => Src::Reg(p[0].2),
                    // The address of a kernel parameter passed by value over several
                    // registers (`mov.b64 %rd, tmap_param`): a handle naming it.
                    Some(_) if self.entry_params.iter().any(|n| n == s) => {
                        let k = self.entry_params.iter().take_while(|n| *n != s).count();
                        Src::Imm(
                            crate::PARAM_ADDRESS_BASE + k as u64 * crate::PARAM_ADDRESS_SPACING,
                        )
                    }
                    // The warp size, a predefined identifier [PTX ISA, "Identifiers"]; nvcc
                    // emits it for `warpSize`.
                    _ if s == "WARP_SZ" => Src::Imm(warpscope_model::WARP_SIZE as u64),
                    _ => {
                        return Err(Error::Invalid {
                            at: a.clone(),
                            msg: format!("unknown symbol '{s}'"),
                        })
                    }
                },
            },
            Operand::Not(inner) => {
                // Only predicates are negated; the decoder of the using instruction handles
                // it, here it is the register itself.
                return self.src(inner, ty, scopes, a);
            }
            other => {
                return Err(Error::Invalid {
                    at: a.clone(),
                    msg: format!(
                        "expected a register or an immediate, found {}",
                        operand_words(other)
                    ),
                })
            }
        })
    }

    fn dest(&self, op: &Operand, scopes: &[Scope], a: &At) -> Result<Option<Reg>> {
        match op {
            Operand::Reg(n) => Ok(Some(self.reg(n, scopes, a)?)),
            Operand::Sink => Ok(None),
            other => Err(Error::Invalid {
                at: a.clone(),
                msg: format!(
                    "expected a destination register, found {}",
                    operand_words(other)
                ),
            }),
        }
    }

    /// `[base+off]` → an address: a register base, or a symbol's address folded into the
    /// offset.
    fn addr(&self, op: &Operand, scopes: &[Scope], a: &At) -> Result<Addr> {
        let Operand::Address { base, offset } = op else {
            return Err(Error::Invalid {
                at: a.clone(),
                msg: format!("expected an address [..], found {}", operand_words(op)),
            });
        };
        match base.as_deref() {
            None => Ok(Addr {
                base: None,
                offset: *offset,
            }),
            Some(Operand::Reg(n)) => Ok(Addr {
                base: Some(self.reg(n, scopes, a)?),
                offset: *offset,
            }),
            Some(Operand::Symbol(s)) => match self.symbol(s, scopes) {
                Some((StateSpace::Tex, _)) => Err(Error::Invalid {
                    at: a.clone(),
                    msg: format!("'{s}' is a texture or surface reference, not memory: read it with tex, tld4 or suld, write it with sust"),
                }),
                Some((_, addr)) => Ok(Addr {
                    base: None,
                    offset: (addr as i64).wrapping_add(*offset),
                }),
                None => Err(Error::Invalid {
                    at: a.clone(),
                    msg: format!("unknown symbol '{s}' in an address"),
                }),
            },
            Some(other) => Err(Error::Invalid {
                at: a.clone(),
                msg: format!("unexpected address base {other:?}"),
            }),
        }
    }

    /// A `.param` operand (`[param0+4]` or `param0`): the registers holding the bytes it
    /// names, from that offset on.
    fn param_slot(&self, op: &Operand, scopes: &[Scope], a: &At) -> Result<Vec<(u64, u8, Reg)>> {
        let (name, off) = match op {
            Operand::Address {
                base: Some(b),
                offset,
            } => match b.as_ref() {
                Operand::Symbol(s) | Operand::Reg(s) => (s.as_str(), *offset),
                _ => ("", 0),
            },
            Operand::Symbol(s) => (s.as_str(), 0),
            _ => ("", 0),
        };
        let Some(regs) = self.param(name, scopes) else {
            return Err(Error::Invalid {
                at: a.clone(),
                msg: format!("'{name}' is not a .param variable of this scope"),
            });
        };
        Ok(regs
            .into_iter()
            .filter(|(o, _, _)| *o as i64 >= off)
            .collect())
    }
}

/// A memory site to create for a decoded memory instruction.
pub(crate) struct SiteKind {
    pub op: Op,
    pub space: Option<Space>,
    pub read_only: bool,
    pub atomic: bool,
}

/// An operand in words and PTX syntax for messages ("a memory operand [%rd2+4]"), instead
/// of the parser's debug form.
fn operand_words(op: &Operand) -> String {
    fn text(op: &Operand) -> String {
        match op {
            Operand::Reg(r) => r.clone(),
            Operand::Int(i) => i.to_string(),
            Operand::F32(b) => format!("0f{b:08X}"),
            Operand::F64(b) => format!("0d{b:016X}"),
            Operand::Symbol(s) => s.clone(),
            Operand::Address { base, offset } => match base.as_deref() {
                Some(b) if *offset != 0 => format!("[{}{:+}]", text(b), offset),
                Some(b) => format!("[{}]", text(b)),
                None => format!("[{offset}]"),
            },
            Operand::Vector(v) => {
                format!("{{{}}}", v.iter().map(text).collect::<Vec<_>>().join(", "))
            }
            Operand::List(v) => format!("({})", v.iter().map(text).collect::<Vec<_>>().join(", ")),
            Operand::Sink => "_".into(),
            Operand::Not(o) => format!("!{}", text(o)),
        }
    }
    let what = match op {
        Operand::Reg(_) => "the register",
        Operand::Int(_) | Operand::F32(_) | Operand::F64(_) => "the immediate",
        Operand::Symbol(_) => "the symbol",
        Operand::Address { .. } => "a memory operand",
        Operand::Vector(v) if v.len() > 8 => {
            return format!("a vector of {} operands", v.len());
        }
        Operand::Vector(_) => "the vector",
        Operand::List(_) => "the list",
        Operand::Sink => "the sink",
        Operand::Not(_) => "the negated predicate",
    };
    format!("{what} {}", text(op))
}
