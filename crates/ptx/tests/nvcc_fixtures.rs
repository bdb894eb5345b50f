//! PTX that nvcc 13 emitted (`-arch=sm_90 -ptx -lineinfo`, and `-G`): see tests/data/README.md.

mod common;

use common::{count, function, instructions, module};
use warpscope_ptx::ast::{Operand, StateSpace, Statement};

#[test]
fn every_nvcc_fixture_parses() {
    for (name, entries) in [
        ("aos_soa.ptx", 3),
        ("h100_ground_truth.ptx", 3),
        ("harris.ptx", 6),
        ("pitch2d.ptx", 2),
        ("reduction.ptx", 3),
        ("shared_banks.ptx", 7),
        ("transpose.ptx", 4),
        ("vector_types.ptx", 5),
        ("features.ptx", 3),
        ("features_G.ptx", 3),
        ("transpose_G.ptx", 4),
    ] {
        let m = module(name);
        assert_eq!(
            m.functions.iter().filter(|f| f.is_entry).count(),
            entries,
            "{name}"
        );
        assert_eq!(m.version, Some((9, 5)), "{name}");
        assert_eq!(m.address_size, Some(64), "{name}");
        assert_eq!(m.target[0], "sm_90", "{name}");
    }
}

#[test]
fn transpose_module_header_and_entries() {
    let m = module("transpose.ptx");
    let names: Vec<&str> = m.functions.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "_Z10copy_tilesPfPKfii",
            "_Z15transpose_naivePfPKfii",
            "_Z19transpose_coalescedPfPKfii",
            "_Z27transpose_no_bank_conflictsPfPKfii"
        ]
    );
    assert_eq!(m.target, ["sm_90"]);
    assert_eq!(m.files.len(), 1);
    assert!(
        m.files[0].1.ends_with("examples/transpose.cu"),
        "{:?}",
        m.files
    );
    let naive = &m.functions[1];
    assert!(naive.is_entry);
    assert_eq!(naive.linkage, ["visible"]);
    assert_eq!(naive.params.len(), 4);
    assert_eq!(naive.params[0].name, "_Z15transpose_naivePfPKfii_param_0");
    assert_eq!(
        (naive.params[0].space, naive.params[0].ty.as_str()),
        (StateSpace::Param, "u64")
    );
    assert_eq!(naive.params[3].ty, "u32");
}

#[test]
fn global_and_shared_accesses_per_entry() {
    let m = module("transpose.ptx");
    let naive = function(&m, "_Z15transpose_naivePfPKfii");
    assert_eq!(
        (count(naive, "ld", "global"), count(naive, "st", "global")),
        (4, 4)
    );
    assert_eq!(
        (count(naive, "ld", "shared"), count(naive, "st", "shared")),
        (0, 0)
    );
    let coalesced = function(&m, "_Z19transpose_coalescedPfPKfii");
    assert_eq!(
        (
            count(coalesced, "ld", "global"),
            count(coalesced, "st", "global")
        ),
        (4, 4)
    );
    assert_eq!(
        (
            count(coalesced, "ld", "shared"),
            count(coalesced, "st", "shared")
        ),
        (4, 4)
    );
    // The tile is a function-scope `.shared` array: 32×32 floats.
    let tile = coalesced
        .body
        .iter()
        .flatten()
        .find_map(|s| match s {
            Statement::Variable(v) if v.space == StateSpace::Shared => Some(v),
            _ => None,
        })
        .unwrap();
    assert_eq!(tile.name, "_ZZ19transpose_coalescedPfPKfiiE4tile");
    assert_eq!(
        (tile.ty.as_str(), tile.align, tile.dims.clone()),
        ("b8", Some(4), vec![Some(4096)])
    );
    // `st.shared.f32 [%r16+1024], %f2;`
    let stores: Vec<_> = instructions(coalesced)
        .into_iter()
        .filter(|(i, _)| i.opcode == "st" && i.mods == ["shared", "f32"])
        .map(|(i, _)| i.operands[0].clone())
        .collect();
    let r16 = Some(Box::new(Operand::Reg("%r16".into())));
    assert_eq!(
        stores[1],
        Operand::Address {
            base: r16.clone(),
            offset: 1024
        }
    );
    assert_eq!(
        stores[3],
        Operand::Address {
            base: r16,
            offset: 3072
        }
    );
}

#[test]
fn loc_before_the_first_global_load() {
    let m = module("transpose.ptx");
    let naive = function(&m, "_Z15transpose_naivePfPKfii");
    let all = instructions(naive);
    let (ld, loc) = all
        .iter()
        .find(|(i, _)| i.opcode == "ld" && i.mods[0] == "global")
        .unwrap();
    let loc = loc.unwrap();
    // transpose.cu line 42: `odata[x * height + (y + j)] = idata[(y + j) * width + x];`
    assert_eq!(
        (loc.file, loc.line, loc.col, loc.inlined_at),
        (1, 42, 9, None)
    );
    assert_eq!(ld.operands[0], Operand::Reg("%f1".into()));
    assert_eq!(
        ld.operands[1],
        Operand::Address {
            base: Some(Box::new(Operand::Reg("%rd6".into()))),
            offset: 0
        }
    );
    assert_eq!(ld.pos.line, 104);
    // `mov.u32 %r7, %ctaid.y;`: special registers keep their component.
    let ctaid_y = all
        .iter()
        .find(|(i, _)| i.operands.get(1) == Some(&Operand::Reg("%ctaid.y".into())));
    assert!(ctaid_y.is_some());
}

#[test]
fn vector_loads_keep_their_modifiers() {
    let m = module("vector_types.ptx");
    let scale = function(&m, "_Z10scale_vec4PK6float4PS_if");
    let all = instructions(scale);
    let (ld, _) = all
        .iter()
        .find(|(i, _)| i.opcode == "ld" && i.mods.contains(&"v4".to_string()))
        .unwrap();
    assert_eq!(ld.mods, ["global", "nc", "v4", "f32"]);
    let regs: Vec<Operand> = ["%f2", "%f3", "%f4", "%f5"]
        .iter()
        .map(|r| Operand::Reg(r.to_string()))
        .collect();
    assert_eq!(ld.operands[0], Operand::Vector(regs));
    let shifted = function(&m, "_Z17copy_vec4_shiftedPKfPfi");
    let (ld, loc) = instructions(shifted)
        .into_iter()
        .find(|(i, _)| i.opcode == "ld" && i.mods[0] == "global")
        .unwrap();
    assert_eq!(ld.mods, ["global", "nc", "v4", "u32"]);
    assert_eq!(
        ld.operands[1],
        Operand::Address {
            base: Some(Box::new(Operand::Reg("%rd7".into()))),
            offset: 16
        }
    );
    assert!(loc.is_some());
}

#[test]
fn features_kernel_calls_shuffles_atomics_and_cp_async() {
    let m = module("features.ptx");
    // vprintf's declaration, the device function and three kernels.
    assert_eq!(m.functions.len(), 5);
    let vprintf = &m.functions[0];
    assert_eq!(
        (vprintf.name.as_str(), vprintf.body.is_none()),
        ("vprintf", true)
    );
    assert_eq!(vprintf.linkage, ["extern"]);
    assert_eq!(vprintf.returns.len(), 1);
    assert_eq!(vprintf.returns[0].name, "func_retval0");
    assert_eq!(vprintf.params.len(), 2);
    let scale = &m.functions[1];
    assert!(!scale.is_entry && scale.body.is_some());
    assert_eq!(scale.returns[0].ty, "b32");
    // The printf format string is a module-scope initialized array.
    let s = &m.globals[0];
    assert_eq!(
        (s.name.as_str(), s.space, s.dims.clone()),
        ("$str", StateSpace::Global, vec![Some(11)])
    );
    assert_eq!(s.init.len(), 10);
    assert_eq!(s.init[0], Operand::Int(110));

    let f = function(&m, "_Z8featuresPKfPfPii");
    let all = instructions(f);
    let find = |op: &str| {
        all.iter()
            .filter(|(i, _)| i.opcode == op)
            .collect::<Vec<_>>()
    };
    // `shfl.sync.down.b32 %r16|%p2, %r12, %r14, %r13, %r15;`: `|` gives two operands.
    let shfl = find("shfl");
    assert_eq!(shfl.len(), 5);
    assert_eq!(shfl[0].0.mods, ["sync", "down", "b32"]);
    assert_eq!(shfl[0].0.operands.len(), 6);
    assert_eq!(shfl[0].0.operands[1], Operand::Reg("%p2".into()));
    // The shuffle was inlined from sm_30_intrinsics.hpp (file 3) at features.cu:19:9.
    let loc = shfl[0].1.unwrap();
    assert_eq!(
        (loc.file, loc.line, loc.inlined_at),
        (3, 439, Some((1, 19, 9)))
    );
    let atom = find("atom");
    assert_eq!(atom[0].0.mods, ["global", "add", "u32"]);
    let cp = find("cp");
    assert_eq!(cp.len(), 3);
    assert_eq!(cp[0].0.mods, ["async", "ca", "shared", "global"]);
    assert_eq!(cp[0].0.operands[2], Operand::Int(4));
    assert_eq!(cp[2].0.mods, ["async", "wait_group"]);
    // `call.uni (retval0), _Z5scaleff, (param0);` inside a `{ }` call sequence.
    let call = find("call");
    assert_eq!(call.len(), 2);
    assert_eq!(
        call[0].0.operands,
        [
            Operand::List(vec![Operand::Symbol("retval0".into())]),
            Operand::Symbol("_Z5scaleff".into()),
            Operand::List(vec![Operand::Symbol("param0".into())]),
        ]
    );
    assert_eq!(
        call[1].0.operands[2],
        Operand::List(vec![
            Operand::Symbol("param0".into()),
            Operand::Symbol("param1".into())
        ])
    );
    let blocks = f
        .body
        .iter()
        .flatten()
        .filter(|s| matches!(s, Statement::Block(..)))
        .count();
    assert_eq!(blocks, 2);
    // Guarded branch.
    let bra = find("bra");
    let g = bra[0].0.guard.as_ref().unwrap();
    assert_eq!((g.negated, g.reg.as_str()), (false, "%p7"));
    assert_eq!(bra[0].0.operands, [Operand::Symbol("$L__BB1_2".into())]);
    let labels: Vec<&str> = f
        .body
        .iter()
        .flatten()
        .filter_map(|s| match s {
            Statement::Label(l, _) => Some(l.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(labels, ["$L__BB1_2", "$L__BB1_4"]);
    // `mov.u64 %rd5, 4607182418800017408;` (1.0 as f64 bits) in pick(double*).
    let pick = function(&m, "_Z4pickPd");
    let mov = instructions(pick)
        .into_iter()
        .find(|(i, _)| i.opcode == "mov" && i.mods == ["u64"])
        .unwrap();
    assert_eq!(mov.0.operands[1], Operand::Int(1.0f64.to_bits() as i64));
    // `fma.rn.f32 %f2, %f1, 0f40000000, 0f3F800000;`
    let fma = instructions(scale)
        .into_iter()
        .find(|(i, _)| i.opcode == "fma")
        .unwrap();
    assert_eq!(
        fma.0.operands[2..],
        [
            Operand::F32(2.0f32.to_bits()),
            Operand::F32(1.0f32.to_bits())
        ]
    );
}

#[test]
fn debug_build_with_sections_parses() {
    let m = module("features_G.ptx");
    assert_eq!(m.target, ["sm_90", "debug"]);
    assert_eq!(m.files.len(), 5);
    let f = function(&m, "_Z8featuresPKfPfPii");
    // -G keeps the intrinsics as calls.
    let callees: Vec<String> = instructions(f)
        .iter()
        .filter(|(i, _)| i.opcode == "call")
        .map(|(i, _)| match &i.operands[1] {
            Operand::Symbol(s) => warpscope_ptx::demangle(s),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(
        callees,
        [
            "_INTERNAL_c6a3b33f_11_features_cu_deec83c1::__cvta_generic_to_shared(void const*)",
            "scale(float, float)",
            "_INTERNAL_c6a3b33f_11_features_cu_deec83c1::__shfl_down_sync(unsigned int, float, unsigned int, int)",
            "_INTERNAL_c6a3b33f_11_features_cu_deec83c1::atomicAdd(int*, int)",
            "vprintf"
        ]
    );
    // `{ .reg .b64 %tmp; cvta.to.shared.u64 %tmp, %rd2; … }`: inline asm's own scope.
    let cvta = function(
        &m,
        "_ZN42_INTERNAL_c6a3b33f_11_features_cu_deec83c124__cvta_generic_to_sharedEPKv",
    );
    let block = cvta
        .body
        .iter()
        .flatten()
        .find_map(|s| match s {
            Statement::Block(b, _) => Some(b),
            _ => None,
        })
        .unwrap();
    assert!(matches!(&block[0], Statement::Variable(v) if v.name == "%tmp" && v.ty == "b64"));
    assert!(
        matches!(&block[1], Statement::Instruction(i) if i.opcode == "cvta" && i.mods == ["to", "shared", "u64"])
    );
    let t = module("transpose_G.ptx");
    let naive = function(&t, "_Z15transpose_naivePfPKfii");
    // Unoptimized code reaches global memory through generic `ld.f32`/`st.f32`.
    let generic: Vec<String> = instructions(naive)
        .iter()
        .filter(|(i, _)| (i.opcode == "ld" || i.opcode == "st") && i.mods == ["f32"])
        .map(|(i, _)| i.opcode.clone())
        .collect();
    assert_eq!(generic, ["ld", "st"]);
    assert_eq!(count(naive, "ld", "param"), 4);
}
