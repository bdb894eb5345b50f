//! Hand-written PTX in the styles of Triton 3.x and Numba (see tests/data/README.md).

mod common;

use common::{count, function, instructions, module};
use warpscope_ptx::ast::{Operand, StateSpace};

#[test]
fn triton_vector_add() {
    let m = module("triton_add.ptx");
    assert_eq!(m.version, Some((8, 4)));
    assert_eq!(m.target, ["sm_90a"]);
    assert_eq!(
        m.files,
        [
            (1, "/home/user/triton/tutorials/add.py".to_string()),
            (
                2,
                "/home/user/.local/lib/python3.11/site-packages/triton/language/standard.py"
                    .to_string()
            )
        ]
    );
    let smem = &m.globals[0];
    assert_eq!(
        (smem.name.as_str(), smem.space, smem.align),
        ("global_smem", StateSpace::Shared, Some(16))
    );
    assert_eq!(
        (smem.linkage.clone(), smem.dims.clone()),
        (vec!["extern".to_string()], vec![None])
    );

    let add = function(&m, "add_kernel");
    assert_eq!(add.directives, [("reqntid".to_string(), vec![128, 1, 1])]);
    assert_eq!(add.params.len(), 4);
    let p0 = &add.params[0];
    assert_eq!(
        (p0.ty.as_str(), p0.ptr_space, p0.align),
        ("u64", Some(StateSpace::Global), Some(1))
    );
    assert_eq!(
        (add.params[3].ty.as_str(), add.params[3].ptr_space),
        ("u32", None)
    );
    assert_eq!(
        (count(add, "ld", "global"), count(add, "st", "global")),
        (4, 2)
    );

    let all = instructions(add);
    // `@%p1 ld.global.v4.b32 { %r2, %r3, %r4, %r5 }, [ %rd1 + 0 ];` under `.loc 1 48 16`.
    let (ld, loc) = all
        .iter()
        .find(|(i, _)| i.opcode == "ld" && i.mods[0] == "global")
        .unwrap();
    assert_eq!(ld.mods, ["global", "v4", "b32"]);
    let g = ld.guard.as_ref().unwrap();
    assert_eq!((g.negated, g.reg.as_str()), (false, "%p1"));
    assert_eq!(
        ld.operands[0],
        Operand::Vector(
            ["%r2", "%r3", "%r4", "%r5"]
                .iter()
                .map(|r| Operand::Reg(r.to_string()))
                .collect()
        )
    );
    assert_eq!(
        ld.operands[1],
        Operand::Address {
            base: Some(Box::new(Operand::Reg("%rd1".into()))),
            offset: 0
        }
    );
    let loc = loc.unwrap();
    assert_eq!((loc.file, loc.line, loc.col), (1, 48, 16));
    let ctaid = all.iter().find(|(i, _)| i.opcode == "mov").unwrap();
    assert_eq!(
        ctaid.0.operands,
        [Operand::Reg("%r1".into()), Operand::Reg("%ctaid.x".into())]
    );
    assert_eq!(
        all.iter()
            .filter(|(i, _)| i.operands.get(1) == Some(&Operand::Int(0)))
            .count(),
        16
    );

    let sum = function(&m, "sum_kernel");
    assert_eq!(
        (count(sum, "ld", "shared"), count(sum, "st", "shared")),
        (1, 1)
    );
    let all = instructions(sum);
    let (shfl, loc) = all.iter().find(|(i, _)| i.opcode == "shfl").unwrap();
    assert_eq!(shfl.mods, ["sync", "bfly", "b32"]);
    assert_eq!(shfl.operands[4], Operand::Int(-1));
    assert_eq!(loc.unwrap().inlined_at, Some((1, 63, 18)));
    // `mov.pred %p1, -1;` and `[global_smem]`.
    assert!(all
        .iter()
        .any(|(i, _)| i.mods == ["pred"] && i.operands[1] == Operand::Int(-1)));
    let (lds, _) = all
        .iter()
        .find(|(i, _)| i.opcode == "ld" && i.mods[0] == "shared")
        .unwrap();
    assert_eq!(
        lds.operands[1],
        Operand::Address {
            base: Some(Box::new(Operand::Symbol("global_smem".into()))),
            offset: 0
        }
    );
}

#[test]
fn numba_axpy() {
    let m = module("numba_axpy.ptx");
    assert_eq!(
        (m.version, m.target.clone()),
        (Some((8, 4)), vec!["sm_75".to_string()])
    );
    let env = &m.globals[0];
    assert_eq!(
        (env.linkage.clone(), env.space, env.ty.as_str()),
        (vec!["common".to_string()], StateSpace::Global, "u64")
    );
    assert!(env.name.starts_with("_ZN08NumbaEnv8__main__4axpy"));
    assert_eq!(m.functions.len(), 1);
    let k = &m.functions[0];
    assert!(k.is_entry && k.name.starts_with("_ZN6cudapy8__main__4axpyB2v1B94cw51c"));
    // Three arrays of 7 fields each, and the float scalar.
    assert_eq!(k.params.len(), 22);
    assert_eq!(k.params[7].ty, "f32");
    assert!(k.params[21].name.ends_with("_param_21"));
    assert_eq!(
        (
            count(k, "ld", "global"),
            count(k, "st", "global"),
            count(k, "ld", "param")
        ),
        (2, 1, 8)
    );
    let d = warpscope_ptx::demangle(&k.name);
    assert!(
        d.starts_with("cudapy::__main__::axpy[abi:v1][abi:cw51c"),
        "{d}"
    );
    assert!(d.ends_with("(Array<float, 1, C, mutable, aligned>, float, Array<float, 1, C, mutable, aligned>, Array<float, 1, C, mutable, aligned>)"), "{d}");
    // Numba's kernels are found by their Python name.
    assert_eq!(
        warpscope_ptx::find_entry(&m, "axpy").map(|f| f.name.as_str()),
        Ok(k.name.as_str())
    );
    assert_eq!(
        warpscope_ptx::find_entry(&m, "__main__::axpy").map(|f| f.name.as_str()),
        Ok(k.name.as_str())
    );
}
