//! Texture and surface references (`.global .texref`/`.surfref`, the deprecated `.tex .u32`):
//! decoded as module references whose name is the fetch's handle, bound by a launch's
//! texture binding of that handle.

use warpscope_model::texture::TextureDesc;
use warpscope_model::Space;
use warpscope_simt::{texref_handle, Error, Launch, Program, TextureBinding, TEXTURE_BASE};

const MODULE: &str = ".version 8.0\n.target sm_90\n.address_size 64\n\
.global .texref img;\n.tex .u32 old_a, old_b;\n.global .surfref out;\n\
.visible .entry k()\n{\n.reg .b32 %r<8>;\n.reg .f32 %f<8>;\n\
mov.u32 %r1, %tid.x;\ncvt.rn.f32.u32 %f1, %r1;\nadd.f32 %f1, %f1, 0f3F000000;\nmov.f32 %f2, 0f3F000000;\n\
tex.2d.v4.f32.f32 {%f3, %f4, %f5, %f6}, [img, {%f1, %f2}];\n\
tex.1d.v4.f32.s32 {%f3, %f4, %f5, %f6}, [old_b, {%r1}];\n\
shl.b32 %r2, %r1, 2;\nmov.u32 %r3, 0;\nmov.b32 %r4, %f3;\n\
sust.b.2d.b32.trap [out, {%r2, %r3}], {%r4};\nret;\n}\n";

fn program() -> Program {
    let m = warpscope_ptx::parse(MODULE).unwrap();
    let e = warpscope_ptx::find_entry(&m, "k").unwrap();
    Program::decode(&m, e).unwrap()
}

fn bind(prog: &Program, k: usize, spec: &str) -> TextureBinding {
    let desc: TextureDesc = spec.parse().unwrap();
    let r = prog
        .texture_refs
        .iter()
        .find(|r| r.name == desc.name)
        .unwrap();
    TextureBinding {
        handle: r.handle,
        desc,
        base: TEXTURE_BASE + k as u64 * warpscope_simt::TEXTURE_SPACING,
    }
}

#[test]
fn references_are_listed_with_their_handles() {
    let p = program();
    let refs: Vec<(&str, bool, u64, bool)> = p
        .texture_refs
        .iter()
        .map(|r| (r.name.as_str(), r.surface, r.handle, r.used))
        .collect();
    assert_eq!(
        refs,
        vec![
            ("img", false, texref_handle(0), true),
            ("old_a", false, texref_handle(1), false),
            ("old_b", false, texref_handle(2), true),
            ("out", true, texref_handle(3), true),
        ]
    );
    // No global allocation for them.
    assert!(p.globals.is_empty());
}

/// One warp: a row of a 2-D CUDA array (8 requests, one a quad of lanes), 32 consecutive
/// floats of a linear texture (4 requests of 8 lanes), a row of a surface (4 requests of 8
/// lanes) [H100 probes, `crates/model/src/texture.rs`].
#[test]
fn bound_references_fetch() {
    let p = program();
    let launch = Launch {
        textures: vec![
            bind(&p, 0, "img=array:64x64:float"),
            bind(&p, 1, "old_b=linear:1024:float"),
            bind(&p, 2, "out=array:64x64:float"),
        ],
        ..Default::default()
    };
    // Requests (one access each) per space, and the lanes of the first texture request.
    let mut requests = std::collections::HashMap::<Space, u32>::new();
    let mut first = None;
    p.run(&launch, &mut |_, a, _| {
        *requests.entry(a.space).or_default() += 1;
        if a.space == Space::Texture && first.is_none() {
            first = Some(a.active_lanes());
        }
    })
    .unwrap();
    assert_eq!(requests[&Space::Texture], 8 + 4);
    assert_eq!(requests[&Space::Surface], 4);
    assert_eq!(first, Some(4));
}

#[test]
fn an_unbound_reference_names_itself() {
    let p = program();
    let launch = Launch {
        textures: vec![bind(&p, 0, "img=array:64x64:float")],
        ..Default::default()
    };
    let e = p.run(&launch, &mut |_, _, _| {}).unwrap_err();
    match e {
        Error::Fault { msg, at, .. } => {
            assert!(
                msg.starts_with("texture reference 'old_b' has no --texture: describe it with --texture old_b=KIND:W[xH[xD]]:FORMAT"),
                "{msg}"
            );
            assert_eq!(at.ptx_line, 16);
        }
        other => panic!("{other}"),
    }
}
