//! Which source access a compiled-path memory instruction is, so that the sites of one
//! source line are told apart: `.loc` gives a line and a column, but nvcc often gives every
//! instruction of a statement the statement's column (`c[i] += a[i] * b[i]`: three accesses at
//! one column). The PTX says which variable an address comes from — a pointer parameter
//! (`ld.param.u64 %rd1, [k_param_0]`, then `cvta`, `add`, `mad.wide` …) or a `__shared__`
//! or `__device__` variable (`mov.u32 %r3, _ZZ1kE4tile`) — and the source line says which of
//! its accesses use that variable (`tile[threadIdx.y][threadIdx.x]`): when exactly one does,
//! that is the instruction's source text, and its column where the statement's is shared.

use std::collections::{BTreeSet, HashMap};
use warpscope_model::Op;
use warpscope_ptx::ast::{Function, Module, Operand, Statement};

/// Where an address comes from: a pointer parameter of the entry (by position) or a
/// module variable (by its PTX name).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Root {
    Param(usize),
    Var(String),
}

/// For each PTX line of a memory instruction (an instruction with an address operand other
/// than `ld.param`) of `module`, the roots its address is derived from. `pointer(k)` says
/// whether parameter `k` of the entry `entry` holds a pointer: a scalar parameter (an index,
/// a size) adds to addresses but is no root. Flow-insensitive: a register's roots are those
/// of every instruction that writes it, to a fixed point (loops).
pub(crate) fn address_roots(
    module: &Module,
    entry: &Function,
    pointer: &dyn Fn(usize) -> bool,
) -> HashMap<u32, BTreeSet<Root>> {
    let vars: std::collections::HashSet<&str> =
        module.globals.iter().map(|v| v.name.as_str()).collect();
    let param_index = |name: &str| entry.params.iter().position(|p| p.name == name);
    let mut out = HashMap::new();
    for f in &module.functions {
        let Some(body) = &f.body else { continue };
        let mut insts = Vec::new();
        flatten(body, &mut insts, 0);
        // Function-scope shared variables are roots too.
        let mut local_vars: std::collections::HashSet<&str> = Default::default();
        declared(body, &mut local_vars, 0);
        let is_var = |s: &str| vars.contains(s) || local_vars.contains(s);
        let mut regs: HashMap<&str, BTreeSet<Root>> = HashMap::new();
        let roots_of = |o: &Operand, regs: &HashMap<&str, BTreeSet<Root>>| -> BTreeSet<Root> {
            match o {
                Operand::Reg(r) => regs.get(r.as_str()).cloned().unwrap_or_default(),
                Operand::Symbol(s) if is_var(s) => BTreeSet::from([Root::Var(s.clone())]),
                Operand::Address { base: Some(b), .. } => match b.as_ref() {
                    Operand::Reg(r) => regs.get(r.as_str()).cloned().unwrap_or_default(),
                    Operand::Symbol(s) if is_var(s) => BTreeSet::from([Root::Var(s.clone())]),
                    _ => BTreeSet::new(),
                },
                _ => BTreeSet::new(),
            }
        };
        // A fixed point: sets only grow, and they are bounded by the roots that exist.
        for _ in 0..64 {
            let mut changed = false;
            for i in &insts {
                let Some(Operand::Reg(d)) = i.operands.first() else {
                    continue;
                };
                let is_param_load = i.opcode == "ld" && i.mods.iter().any(|m| m == "param");
                let new: BTreeSet<Root> = if is_param_load {
                    // A pointer parameter of the entry: the address's root.
                    match i.operands.get(1) {
                        Some(Operand::Address { base: Some(b), .. }) => match b.as_ref() {
                            Operand::Symbol(s) if f.is_entry && f.name == entry.name => {
                                param_index(s)
                                    .filter(|&k| pointer(k))
                                    .map(|k| BTreeSet::from([Root::Param(k)]))
                                    .unwrap_or_default()
                            }
                            _ => BTreeSet::new(),
                        },
                        _ => BTreeSet::new(),
                    }
                } else if matches!(
                    i.opcode.as_str(),
                    "ld" | "ldu"
                        | "atom"
                        | "st"
                        | "red"
                        | "setp"
                        | "set"
                        | "bra"
                        | "call"
                        | "ret"
                        | "tex"
                        | "suld"
                        | "shfl"
                        | "vote"
                        | "ldmatrix"
                ) {
                    // A loaded value is no address of a known variable; the others write
                    // predicates or nothing.
                    BTreeSet::new()
                } else {
                    i.operands[1..]
                        .iter()
                        .flat_map(|o| roots_of(o, &regs))
                        .collect()
                };
                if new.is_empty() {
                    continue;
                }
                let e = regs.entry(d.as_str()).or_default();
                let before = e.len();
                e.extend(new);
                changed |= e.len() != before;
            }
            if !changed {
                break;
            }
        }
        for i in &insts {
            if i.opcode == "ld" && i.mods.iter().any(|m| m == "param") {
                continue;
            }
            let Some(addr) = i
                .operands
                .iter()
                .find(|o| matches!(o, Operand::Address { base: Some(_), .. }))
            else {
                continue;
            };
            out.insert(i.pos.line, roots_of(addr, &regs));
        }
    }
    out
}

fn flatten<'a>(body: &'a [Statement], out: &mut Vec<&'a warpscope_ptx::ast::Instruction>, d: u32) {
    for s in body {
        match s {
            Statement::Instruction(i) => out.push(i),
            Statement::Block(b, _) if d < 64 => flatten(b, out, d + 1),
            _ => {}
        }
    }
}

fn declared<'a>(body: &'a [Statement], out: &mut std::collections::HashSet<&'a str>, d: u32) {
    for s in body {
        match s {
            Statement::Variable(v)
                if matches!(
                    v.space,
                    warpscope_ptx::ast::StateSpace::Shared | warpscope_ptx::ast::StateSpace::Global
                ) =>
            {
                out.insert(v.name.as_str());
            }
            Statement::Block(b, _) if d < 64 => declared(b, out, d + 1),
            _ => {}
        }
    }
}

/// The source name of a root: the parameter's name in `names` (else `param_K`), or a
/// variable's name without its mangling and scopes (`_ZZ1kE4tile` → `tile`).
pub(crate) fn root_name(r: &Root, names: &[String]) -> String {
    match r {
        Root::Param(k) => names.get(*k).cloned().unwrap_or(format!("param_{k}")),
        Root::Var(v) => {
            let d = warpscope_ptx::demangle(v);
            d.rsplit("::").next().unwrap_or(&d).to_string()
        }
    }
}

/// One access written in a line of source: `tile[threadIdx.y + j][threadIdx.x]`,
/// `p[i].vx`, `s->next`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct SourceAccess {
    /// 1-based byte column of its first character.
    pub column: u32,
    /// Its text, spaces collapsed.
    pub text: String,
    /// The variable it indexes (`tile`, `p`, `s`).
    pub base: String,
    /// Whether it may be read (not the target of a plain `=`).
    pub load: bool,
    /// Whether it may be written (`=`, `+=`, `++`, or its address taken).
    pub store: bool,
}

/// The subscripted and member accesses of one line of C++ (`//` comments and string
/// literals skipped), nested ones included (`a[idx[i]]` gives both).
pub(crate) fn accesses_in(line: &str) -> Vec<SourceAccess> {
    let b = line.as_bytes();
    // Blank out string/char literals and a `//` comment, keeping byte positions.
    let mut s: Vec<u8> = b.to_vec();
    let mut i = 0;
    while i < s.len() {
        match s[i] {
            b'/' if s.get(i + 1) == Some(&b'/') => {
                for x in &mut s[i..] {
                    *x = b' ';
                }
                break;
            }
            q @ (b'"' | b'\'') => {
                let mut j = i + 1;
                while j < s.len() && s[j] != q {
                    if s[j] == b'\\' {
                        s[j] = b' ';
                        j += 1;
                    }
                    if j < s.len() {
                        s[j] = b' ';
                    }
                    j += 1;
                }
                i = j + 1;
            }
            _ => i += 1,
        }
    }
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let skip_ws = |mut j: usize| {
        while j < s.len() && s[j].is_ascii_whitespace() {
            j += 1;
        }
        j
    };
    let mut out = Vec::new();
    let mut i = 0;
    while i < s.len() {
        if !(s[i].is_ascii_alphabetic() || s[i] == b'_') || (i > 0 && ident(s[i - 1])) {
            i += 1;
            continue;
        }
        let start = i;
        let mut j = i;
        while j < s.len() && ident(s[j]) {
            j += 1;
        }
        let base = String::from_utf8_lossy(&s[start..j]).into_owned();
        // A member of something else (`x.y`, `p->y`) is not a base.
        let before = line[..start].trim_end();
        let member = before.ends_with('.') || before.ends_with("->") || before.ends_with("::");
        let mut end = j;
        let mut postfix = false;
        loop {
            let k = skip_ws(end);
            if k < s.len() && s[k] == b'[' {
                let mut depth = 0;
                let mut m = k;
                while m < s.len() {
                    match s[m] {
                        b'[' => depth += 1,
                        b']' => {
                            depth -= 1;
                            if depth == 0 {
                                break;
                            }
                        }
                        _ => {}
                    }
                    m += 1;
                }
                if m >= s.len() {
                    break;
                }
                end = m + 1;
                postfix = true;
            } else if k < s.len() && (s[k] == b'.' || s[k..].starts_with(b"->")) && postfix
                || (k + 1 < s.len() && s[k..].starts_with(b"->"))
            {
                let mut m = k + if s[k] == b'.' { 1 } else { 2 };
                m = skip_ws(m);
                let f = m;
                while m < s.len() && ident(s[m]) {
                    m += 1;
                }
                if m == f {
                    break;
                }
                end = m;
                postfix = true;
            } else {
                break;
            }
        }
        i = j;
        if member || !postfix {
            continue;
        }
        let text = line[start..end]
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        let after = line[end..].trim_start();
        let plain_assign = after.starts_with('=') && !after.starts_with("==");
        let compound = [
            "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>=", "++", "--",
        ]
        .iter()
        .any(|o| after.starts_with(o))
            || before.ends_with("++")
            || before.ends_with("--");
        let address_taken = before.ends_with('&') && !before.ends_with("&&");
        out.push(SourceAccess {
            column: start as u32 + 1,
            text,
            base,
            load: !plain_assign,
            store: plain_assign || compound || address_taken,
        });
    }
    out
}

/// The access of `line` that a memory instruction with operation `op`, whose address comes
/// from the variable `base` (when known), and whose `.loc` column is `column`, stands for:
/// its text and column, when one access of the line fits (or several that read the same, or,
/// for a known variable, one of several starts at `column`).
pub(crate) fn match_access(
    line: &str,
    op: Op,
    base: Option<&str>,
    column: u32,
) -> Option<(String, u32)> {
    let all = accesses_in(line);
    let of_base: Vec<&SourceAccess> = match base {
        Some(b) => all.iter().filter(|a| a.base == b).collect(),
        None => all.iter().collect(),
    };
    let fits = |a: &&SourceAccess| match op {
        Op::Load => a.load,
        Op::Store => a.store,
        _ => true,
    };
    let mut cands: Vec<&SourceAccess> = of_base.iter().copied().filter(fits).collect();
    if cands.is_empty() && base.is_some() {
        cands = of_base;
    }
    let first = cands.first()?;
    if cands.iter().all(|a| a.text == first.text) {
        return Some((first.text.clone(), first.column));
    }
    // Several of the variable: the one that starts at the `.loc` column, if any (with the
    // variable unknown the column may be the statement's, which starts with any access).
    base?;
    cands
        .iter()
        .find(|a| a.column == column)
        .map(|a| (a.text.clone(), a.column))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_subscripts_members_and_assignments() {
        let a = accesses_in(
            "        tile[threadIdx.y + j][threadIdx.x] = idata[(y + j) * width + x]; // a[b]",
        );
        let t: Vec<(&str, u32, bool, bool)> = a
            .iter()
            .map(|x| (x.text.as_str(), x.column, x.load, x.store))
            .collect();
        assert_eq!(
            t,
            [
                ("tile[threadIdx.y + j][threadIdx.x]", 9, false, true),
                ("idata[(y + j) * width + x]", 46, true, false)
            ]
        );
        let a = accesses_in(
            "c[i * nj + j] += alpha * p[i].vx * q->w + h[idx[i]]; atomicAdd(&hist[b], 1);",
        );
        let t: Vec<(&str, bool, bool)> = a
            .iter()
            .map(|x| (x.text.as_str(), x.load, x.store))
            .collect();
        assert_eq!(
            t,
            [
                ("c[i * nj + j]", true, true),
                ("p[i].vx", true, false),
                ("q->w", true, false),
                ("h[idx[i]]", true, false),
                ("idx[i]", true, false),
                ("hist[b]", true, true)
            ]
        );
    }

    #[test]
    fn matches_by_variable_then_operation_then_column() {
        let l = "    c[i * nj + j] += alpha * a[i * nk + k] * b[k * nj + j];";
        assert_eq!(
            match_access(l, Op::Load, Some("a"), 5),
            Some(("a[i * nk + k]".into(), 30))
        );
        assert_eq!(
            match_access(l, Op::Store, Some("c"), 5),
            Some(("c[i * nj + j]".into(), 5))
        );
        // Unknown variable: the only store of the line.
        assert_eq!(
            match_access(l, Op::Store, None, 5),
            Some(("c[i * nj + j]".into(), 5))
        );
        // Unknown variable, several loads: none.
        assert_eq!(match_access(l, Op::Load, None, 5), None);
        // A variable the line does not index: none.
        assert_eq!(match_access(l, Op::Load, Some("z"), 5), None);
    }
}
