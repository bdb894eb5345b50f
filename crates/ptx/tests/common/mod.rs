//! Helpers shared by the parser's tests.
#![allow(dead_code)]

use warpscope_ptx::ast::{Function, Instruction, Loc, Module, Statement};

/// The text of `tests/data/NAME`.
pub fn fixture(name: &str) -> String {
    let path = format!("{}/tests/data/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// `tests/data/NAME` parsed.
pub fn module(name: &str) -> Module {
    warpscope_ptx::parse(&fixture(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// The function named exactly `name`.
pub fn function<'m>(m: &'m Module, name: &str) -> &'m Function {
    m.functions
        .iter()
        .find(|f| f.name == name && f.body.is_some())
        .unwrap_or_else(|| panic!("no function {name}"))
}

/// Every instruction of `f` in order, nested blocks included, each with the `.loc` in
/// force before it.
pub fn instructions(f: &Function) -> Vec<(&Instruction, Option<&Loc>)> {
    fn walk<'a>(
        stmts: &'a [Statement],
        loc: &mut Option<&'a Loc>,
        out: &mut Vec<(&'a Instruction, Option<&'a Loc>)>,
    ) {
        for s in stmts {
            match s {
                Statement::Instruction(i) => out.push((i, *loc)),
                Statement::Loc(l) => *loc = Some(l),
                Statement::Block(b, _) => walk(b, loc, out),
                _ => {}
            }
        }
    }
    let mut out = Vec::new();
    walk(f.body.as_deref().unwrap_or(&[]), &mut None, &mut out);
    out
}

/// How many `opcode` instructions of `f` carry the modifier `space`.
pub fn count(f: &Function, opcode: &str, space: &str) -> usize {
    instructions(f)
        .iter()
        .filter(|(i, _)| i.opcode == opcode && i.mods.iter().any(|m| m == space))
        .count()
}

/// Parses `text`, which must fail, and returns the error's `LINE:COL: message`.
pub fn error(text: &str) -> String {
    match warpscope_ptx::parse(text) {
        Ok(_) => panic!("parsed:\n{text}"),
        Err(e) => e.to_string(),
    }
}
