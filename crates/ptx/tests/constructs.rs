//! Hand-written PTX covering the constructs the generators emit less often.

mod common;

use common::{function, instructions};
use warpscope_ptx::ast::{Operand, StateSpace, Statement};
use warpscope_ptx::parse;

const MODULE: &str = r#"
.version 7.8
.target sm_80, texmode_independent
.address_size 64
.file 1 "/src/k.cu", 1700000000, 2048
.file 2 "/src/\"q\".h"
.pragma "nounroll";
.alias k_alias, helper;

.global .align 4 .u32 table[2][3] = {{1, 2, 3}, {4, 5, 0x6}};
.global .align 8 .u64 ptrs[3] = {generic(table), table+4, generic(table)+8};
.const .f32 consts[4] = {0f3F800000, -0f3F800000, 1.5, -2.5e-1};
.global .v4 .f32 vec;
.global .u64 big = 18446744073709551615;
.global .s32 neg = -2147483648;
.weak .global .b32 octbin[3] = {017, 0b101, 7U};
.extern .global .attribute(.managed) .align 4 .b8 managed_buf[16];

.weak .func (.param .align 16 .b8 ret[16]) helper(
    .param .align 8 .b8 p_struct[16],
    .param .u64 .ptr.global.align 16 p_ptr
) .noreturn
{
    ret;
}

.visible .entry k(
    .param .u64 .ptr.shared .align 8 k_p0,
    .param .b32 k_p1
)
.maxntid 128, 1, 1
.minnctapersm 2
.maxnreg 64
.explicitcluster
.reqnctapercluster 2, 1, 1
{
    .reg .pred p, q;
    .reg .pred %p<4>;
    .reg .b32 %r<12>;
    .reg .f32 %f<5>;
    .reg .b64 %rd<3>;
    .local .align 8 .b8 depot[2][4];
    .shared .align 16 .b8 smem[512];
    .pragma "nounroll";
    .loc 1 10 3
$L__BB0_1:
    setp.lt.s32 %p1|%p2, %r1, -4;
    and.pred %p3, !%p1, %p2;
    @!%p3 bra.uni $L__BB0_1;
    ld.shared::cta.v4.f32 {%f1, _, %f3, %f4}, [smem+16];
    ld.global.L2::128B.nc.u32 %r2, [%rd1+-4];
    ld.global.u32 %r3, [%rd1 - 8];
    ld.const.u32 %r4, [0x10];
    st.local.u32 [depot+8], %r3;
    mov.b64 %rd2, {%r1, %r2};
    mov.f32 %f1, 0d3FF0000000000000;
    mov.u32 %r5, %tid.x;
    add.u32 %r6, %r5, 0x7fffffffU;
    tex.2d.v4.f32.f32 {%f1, %f2, %f3, %f4}, [%rd2, {%f1, %f2}];
    mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%f1, %f2, %f3, %f4}, {%r1, %r2, %r3, %r4}, {%r5, %r6}, {%f1, %f2, %f3, %f4};
    {
        .reg .b32 inner;
        {
            mov.u32 inner, 1;
        }
    }
prototype_0 : .callprototype (.param .b32 _) _ (.param .b32 _);
    call (%r7), %rd1, (%r1), prototype_0;
    bar.sync 0;
    exit;
}
"#;

#[test]
fn module_level_directives() {
    let m = parse(MODULE).unwrap();
    assert_eq!(m.version, Some((7, 8)));
    assert_eq!(m.target, ["sm_80", "texmode_independent"]);
    assert_eq!(
        m.files,
        [
            (1, "/src/k.cu".to_string()),
            (2, "/src/\"q\".h".to_string())
        ]
    );
}

#[test]
fn module_variables_and_initializers() {
    let m = parse(MODULE).unwrap();
    let g = |name: &str| m.globals.iter().find(|v| v.name == name).unwrap();
    let table = g("table");
    assert_eq!(table.dims, [Some(2), Some(3)]);
    assert_eq!(table.init, (1..=6).map(Operand::Int).collect::<Vec<_>>());
    let sym = || Some(Box::new(Operand::Symbol("table".into())));
    assert_eq!(
        g("ptrs").init,
        [
            Operand::Symbol("table".into()),
            Operand::Address {
                base: sym(),
                offset: 4
            },
            Operand::Address {
                base: sym(),
                offset: 8
            }
        ]
    );
    assert_eq!(
        g("consts").init,
        [
            Operand::F32(1.0f32.to_bits()),
            Operand::F32((-1.0f32).to_bits()),
            Operand::F64(1.5f64.to_bits()),
            Operand::F64((-0.25f64).to_bits())
        ]
    );
    assert_eq!(g("consts").space, StateSpace::Const);
    let vec = g("vec");
    assert_eq!((vec.vector, vec.ty.as_str()), (4, "f32"));
    assert_eq!(g("big").init, [Operand::Int(-1)]);
    assert_eq!(g("neg").init, [Operand::Int(-2147483648)]);
    assert_eq!(
        g("octbin").init,
        [Operand::Int(15), Operand::Int(5), Operand::Int(7)]
    );
    assert_eq!(g("octbin").linkage, ["weak"]);
    let managed = g("managed_buf");
    assert_eq!(
        (managed.linkage.clone(), managed.align, managed.dims.clone()),
        (vec!["extern".to_string()], Some(4), vec![Some(16)])
    );
}

#[test]
fn function_headers() {
    let m = parse(MODULE).unwrap();
    let helper = function(&m, "helper");
    assert_eq!(helper.linkage, ["weak"]);
    assert_eq!(
        (
            helper.returns[0].name.as_str(),
            helper.returns[0].align,
            helper.returns[0].dims.clone()
        ),
        ("ret", Some(16), vec![Some(16)])
    );
    assert_eq!(
        (helper.params[0].ty.as_str(), helper.params[0].align),
        ("b8", Some(8))
    );
    let p = &helper.params[1];
    assert_eq!(
        (p.ptr_space, p.align, p.ty.as_str()),
        (Some(StateSpace::Global), Some(16), "u64")
    );
    assert_eq!(helper.directives, [("noreturn".to_string(), vec![])]);
    let k = function(&m, "k");
    assert_eq!(k.params[0].ptr_space, Some(StateSpace::Shared));
    let d: Vec<(&str, &[u64])> = k
        .directives
        .iter()
        .map(|(n, v)| (n.as_str(), v.as_slice()))
        .collect();
    assert_eq!(
        d,
        [
            ("maxntid", &[128, 1, 1][..]),
            ("minnctapersm", &[2][..]),
            ("maxnreg", &[64][..]),
            ("explicitcluster", &[][..]),
            ("reqnctapercluster", &[2, 1, 1][..])
        ]
    );
    assert_eq!((k.pos.line, k.pos.col), (27, 1));
}

#[test]
fn body_declarations_and_directives() {
    let m = parse(MODULE).unwrap();
    let k = function(&m, "k");
    let body = k.body.as_ref().unwrap();
    let vars: Vec<_> = body
        .iter()
        .filter_map(|s| match s {
            Statement::Variable(v) => Some(v),
            _ => None,
        })
        .collect();
    // `.reg .pred p, q;` declares two variables.
    assert_eq!(vars[0].name, "p");
    assert_eq!(vars[1].name, "q");
    assert_eq!(
        (vars[2].name.as_str(), vars[2].range, vars[2].ty.as_str()),
        ("%p", Some(4), "pred")
    );
    assert_eq!(vars[3].range, Some(12));
    let depot = vars.iter().find(|v| v.name == "depot").unwrap();
    assert_eq!(
        (depot.space, depot.dims.clone()),
        (StateSpace::Local, vec![Some(2), Some(4)])
    );
    let dirs: Vec<&str> = body
        .iter()
        .filter_map(|s| match s {
            Statement::Directive(d, _) => Some(d.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(
        dirs,
        [
            ".pragma \"nounroll\"",
            ".callprototype (.param .b32 _) _ (.param .b32 _)"
        ]
    );
    assert!(body
        .iter()
        .any(|s| matches!(s, Statement::Label(l, _) if l == "prototype_0")));
    // Nested blocks: `{ .reg …; { mov…; } }`.
    let outer = body
        .iter()
        .find_map(|s| match s {
            Statement::Block(b, _) => Some(b),
            _ => None,
        })
        .unwrap();
    assert!(
        matches!(&outer[1], Statement::Block(inner, pos) if inner.len() == 1 && pos.line == 63)
    );
}

#[test]
fn operands() {
    let m = parse(MODULE).unwrap();
    let all = instructions(function(&m, "k"));
    let ins = |n: usize| all[n].0;
    let reg = |r: &str| Operand::Reg(r.to_string());
    let addr = |b: Operand, offset: i64| Operand::Address {
        base: Some(Box::new(b)),
        offset,
    };
    // setp %p1|%p2, %r1, -4;
    assert_eq!(
        ins(0).operands,
        [reg("%p1"), reg("%p2"), reg("%r1"), Operand::Int(-4)]
    );
    assert_eq!(all[0].1.map(|l| (l.file, l.line, l.col)), Some((1, 10, 3)));
    assert_eq!(ins(1).operands[1], Operand::Not(Box::new(reg("%p1"))));
    let g = ins(2).guard.clone().unwrap();
    assert_eq!(
        (g.negated, g.reg.as_str(), ins(2).mods.clone()),
        (true, "%p3", vec!["uni".to_string()])
    );
    assert_eq!(ins(3).mods, ["shared::cta", "v4", "f32"]);
    assert_eq!(
        ins(3).operands,
        [
            Operand::Vector(vec![reg("%f1"), Operand::Sink, reg("%f3"), reg("%f4")]),
            addr(Operand::Symbol("smem".into()), 16)
        ]
    );
    assert_eq!(ins(4).mods, ["global", "L2::128B", "nc", "u32"]);
    assert_eq!(ins(4).operands[1], addr(reg("%rd1"), -4));
    assert_eq!(ins(5).operands[1], addr(reg("%rd1"), -8));
    assert_eq!(
        ins(6).operands[1],
        Operand::Address {
            base: None,
            offset: 16
        }
    );
    assert_eq!(ins(7).operands[0], addr(Operand::Symbol("depot".into()), 8));
    assert_eq!(
        ins(8).operands[1],
        Operand::Vector(vec![reg("%r1"), reg("%r2")])
    );
    assert_eq!(ins(9).operands[1], Operand::F64(1.0f64.to_bits()));
    assert_eq!(ins(10).operands[1], reg("%tid.x"));
    assert_eq!(ins(11).operands[2], Operand::Int(0x7fff_ffff));
    // Texture operand: `[%rd2, {%f1, %f2}]`.
    assert_eq!(ins(12).opcode, "tex");
    assert_eq!(ins(12).mods, ["2d", "v4", "f32", "f32"]);
    assert_eq!(
        ins(12).operands[1],
        Operand::Address {
            base: Some(Box::new(Operand::List(vec![
                reg("%rd2"),
                Operand::Vector(vec![reg("%f1"), reg("%f2")])
            ]))),
            offset: 0
        }
    );
    assert_eq!(ins(13).opcode, "mma");
    assert_eq!(
        ins(13).mods,
        ["sync", "aligned", "m16n8k16", "row", "col", "f32", "f16", "f16", "f32"]
    );
    assert_eq!(ins(13).operands.len(), 4);
    assert_eq!(
        ins(14).operands,
        [Operand::Symbol("inner".into()), Operand::Int(1)]
    );
    assert_eq!(ins(15).operands[3], Operand::Symbol("prototype_0".into()));
    assert_eq!(
        (
            ins(16).opcode.as_str(),
            ins(16).mods.clone(),
            ins(16).operands.clone()
        ),
        ("bar", vec!["sync".to_string()], vec![Operand::Int(0)])
    );
    assert_eq!(
        (ins(17).opcode.as_str(), ins(17).operands.len()),
        ("exit", 0)
    );
    assert_eq!(all.len(), 18);
}

#[test]
fn comments_and_crlf() {
    let text = ".version 8.0 /* block\n comment */ .target sm_90 // line\r\n.address_size 64\r\n\
                .visible .entry e()\r\n{\r\n\tret; // done\r\n}\r\n";
    let m = parse(text).unwrap();
    assert_eq!(m.functions[0].name, "e");
    assert_eq!(m.functions[0].pos.line, 4);
    assert!(parse("").unwrap().functions.is_empty());
    // CUDA 10's -G debug lines.
    let old = ".version 6.4\n.target sm_70, debug\n.address_size 64\n\
               @@DWARF .section .debug_info, \"\", @progbits\n@@DWARF .byte 0x2b, 0x05\n";
    assert_eq!(parse(old).unwrap().target, ["sm_70", "debug"]);
}

/// Texture and surface references at module scope [PTX ISA §5.1.8, §5.3]: `.global .texref`,
/// `.global .surfref`, and the deprecated `.tex .u32` with several names; a texture
/// instruction names one as its texture.
#[test]
fn texture_references() {
    let m = parse(
        ".version 7.8\n.target sm_90\n.address_size 64\n\
         .global .texref img;\n.global .surfref out;\n.tex .u32 tex_a, tex_b;\n\
         .entry k() {\n.reg .f32 %f<6>;\n\
         tex.2d.v4.f32.f32 {%f1, %f2, %f3, %f4}, [img, {%f5, %f5}];\nret;\n}\n",
    )
    .unwrap();
    let g: Vec<(StateSpace, &str, &str)> = m
        .globals
        .iter()
        .map(|v| (v.space, v.ty.as_str(), v.name.as_str()))
        .collect();
    assert_eq!(
        g,
        vec![
            (StateSpace::Global, "texref", "img"),
            (StateSpace::Global, "surfref", "out"),
            (StateSpace::Tex, "u32", "tex_a"),
            (StateSpace::Tex, "u32", "tex_b"),
        ]
    );
    let (i, _) = instructions(function(&m, "k"))[0];
    match &i.operands[1] {
        Operand::Address { base: Some(b), .. } => match b.as_ref() {
            Operand::List(items) => assert_eq!(items[0], Operand::Symbol("img".into())),
            other => panic!("{other:?}"),
        },
        other => panic!("{other:?}"),
    }
}
