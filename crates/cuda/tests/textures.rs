//! Texture and surface functions on the source front end, through the library: the PTX
//! emitted for objects and references (as nvcc's), the requests each fetch makes once
//! `--texture` descriptions are bound, and the binding's errors.

use warpscope_cuda::{Error, Source, DEFAULT_MAX_STEPS};
use warpscope_model::texture::TextureDesc;
use warpscope_model::{Op, Space};

const SRC: &str = r#"
texture<float, 2> img;
surface<void, 2> surf;

__global__ void objects(cudaTextureObject_t t, cudaSurfaceObject_t s, float* out)
{
    int x = threadIdx.x;
    float v = tex2D<float>(t, x + 0.5f, 0.5f);
    float4 g = tex2Dgather<float4>(t, x + 0.5f, 0.5f, 3);
    int4 q = tex3D<int4>(t, x + 0.5f, 0.5f, 0.5f);
    surf2Dwrite(v + g.w + q.x, s, x * 4, 1, cudaBoundaryModeZero);
    out[x] = surf2Dread<float>(s, x * 4, 0);
}

__global__ void references(float* out)
{
    int x = threadIdx.x;
    float v;
    surf2Dread(&v, surf, x * 4, 0);
    out[x] = tex2D(img, x + 0.5f, 0.5f) + v;
}
"#;

fn desc(spec: &str) -> TextureDesc {
    spec.parse().unwrap()
}

/// (space, op, requests) of one texture or surface instruction of a warp.
type Fetch = (Space, Op, u32);

/// The kernel's PTX and each texture or surface instruction one warp runs, in order.
fn run(kernel: &str, textures: &[&str]) -> Result<(String, Vec<Fetch>), Error> {
    let s = Source::parse("t.cu", SRC, &[])?;
    let k = s.kernel(kernel)?;
    let mut cfg = k.configure(&[], &[], [1, 1, 1], [32, 1, 1], 0, DEFAULT_MAX_STEPS)?;
    let descs: Vec<TextureDesc> = textures.iter().map(|t| desc(t)).collect();
    k.set_textures(&mut cfg, &descs)?;
    let mut out: Vec<Fetch> = Vec::new();
    k.run(&cfg, &mut |_, a| {
        if !matches!(a.space, Space::Texture | Space::Surface) {
            return;
        }
        // A further request of the same instruction is flagged read_only.
        match out.last_mut() {
            Some(last) if a.read_only => last.2 += 1,
            _ => out.push((a.space, a.op, 1)),
        }
    })?;
    Ok((k.ptx().to_string(), out))
}

#[test]
fn objects_emit_nvccs_instructions_and_fetch() {
    let (ptx, acc) = run("objects", &["t=array:64x64x4:float", "s=array:64x64:float"]).unwrap();
    for want in [
        "tex.2d.v4.f32.f32 {",
        "tld4.a.2d.v4.f32.f32 {",
        "tex.3d.v4.s32.f32 {",
        "sust.b.2d.b32.zero [",
        "suld.b.2d.b32.trap {",
    ] {
        assert!(ptx.contains(want), "{want} missing:\n{ptx}");
    }
    // tex2D/tld4/tex3D: one request per quad (8); surfaces one per 8 lanes (4).
    assert_eq!(
        acc,
        vec![
            (Space::Texture, Op::Load, 8),
            (Space::Texture, Op::Load, 8),
            (Space::Texture, Op::Load, 8),
            (Space::Surface, Op::Store, 4),
            (Space::Surface, Op::Load, 4),
        ]
    );
}

#[test]
fn references_are_declared_and_bound_by_name() {
    let (ptx, acc) = run(
        "references",
        &["img=array:64x64:float", "surf=array:64x64:float"],
    )
    .unwrap();
    assert!(ptx.contains(".global .texref img;"), "{ptx}");
    assert!(ptx.contains(".global .surfref surf;"), "{ptx}");
    assert!(ptx.contains("[img, {"), "{ptx}");
    assert_eq!(
        acc,
        vec![(Space::Surface, Op::Load, 4), (Space::Texture, Op::Load, 8)]
    );
}

#[test]
fn binding_errors() {
    let e = run("references", &["im=array:64x64:float"]).unwrap_err();
    assert!(
        e.to_string().contains("--texture im: references has no texture or surface parameter or reference 'im'; its textures and surfaces are: img (texture reference, line 2), surf (surface reference, line 3)"),
        "{e}"
    );
    let e = run("objects", &["t=array:64x64:float"]).unwrap_err();
    assert!(
        e.to_string().contains(
            "kernel parameter 's' is a cudaSurfaceObject_t: describe it with --texture s="
        ),
        "{e}"
    );
    let e = run("references", &["img=array:64x64:float"]).unwrap_err();
    assert!(
        e.to_string()
            .contains("t.cu:19:5: surface reference 'surf' has no --texture"),
        "{e}"
    );
}
