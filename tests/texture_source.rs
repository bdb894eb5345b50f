//! Textures on every input form: texture and surface references (`texture<T, dim, mode>`
//! globals; PTX `.global .texref`/`.surfref` and the deprecated `.tex .u32`) on the compiled
//! path, from PTX that nvcc 11.8 made (`tests/data/ptx/texref.ptx`, from
//! `tests/kernels/texref.cu`: CUDA 12 removed texture references, so CI's nvcc cannot);
//! texture and surface objects and references on the source front end, whose totals must
//! equal the compiled path's for the same launch.

mod common;
use common::{json, temp, warpscope};

/// (requests, sectors) of a totals key (`texture_load`, `surface_store`, `global_load`, ...).
fn totals(v: &serde_json::Value, key: &str) -> (u64, u64) {
    let t = &v["architectures"][0]["totals"][key];
    (
        t["requests"].as_u64().unwrap_or(0),
        t["sectors"].as_u64().unwrap_or(0),
    )
}

const TEXREF_PTX: &str = "tests/data/ptx/texref.ptx";

/// The launch of examples/texture.cu's conv_texture (1024×1024 image, blocks 32×8) on
/// `file`'s `kernel`, at CC 9.0, with `extra` flags.
fn conv(file: &str, kernel: &str, extra: &[&str]) -> serde_json::Value {
    let mut a = vec![
        "analyze",
        file,
        "--kernel",
        kernel,
        "--grid",
        "32,128",
        "--block",
        "32,8",
        "--arg",
        "w=1024",
        "--arg",
        "h=1024",
        "--cc",
        "9.0",
        "--texture",
        "img=array:1024x1024:float",
    ];
    a.extend(extra);
    json(&a)
}

/// examples/texture.cu's gather launch (65,536 random indices) on `file`'s `kernel`.
fn gather(file: &str, kernel: &str, extra: &[&str]) -> serde_json::Value {
    let mut a = vec![
        "analyze",
        file,
        "--kernel",
        kernel,
        "--grid",
        "256",
        "--block",
        "256",
        "--arg",
        "n=65536",
        "--alloc",
        "idx=65536",
        "--init",
        "idx=random:7",
        "--cc",
        "9.0",
        "--texture",
        "data=linear:65536:float",
    ];
    a.extend(extra);
    json(&a)
}

/// nvcc 11.8's PTX of conv_texref and gather_texref (`tex.2d … [img, …]`, `tex.1d … [data,
/// …]` on `.global .texref`s) costs exactly what examples/texture.cu's texture-object
/// kernels measured on the H100 (book chapter "Texture and surface memory", tests/texture.rs):
/// the reference changes how the texture is named, not how it is fetched.
#[test]
fn texref_ptx_from_nvcc_11_8_equals_the_objects() {
    let v = conv(TEXREF_PTX, "conv_texref", &[]);
    assert_eq!(totals(&v, "texture_load"), (6_553_600, 11_776_000));
    assert_eq!(totals(&v, "global_store"), (32_768, 131_072));
    let v = gather(TEXREF_PTX, "gather_texref", &[]);
    assert_eq!(totals(&v, "texture_load"), (8_192, 65_507));
    // The sites are the user's lines, not the header's tex1Dfetch.
    let s = &v["architectures"][0]["sites"];
    let tex = s
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["space"] == "texture")
        .unwrap();
    assert_eq!(tex["line"].as_u64(), Some(43));
}

/// A texture reference the kernel fetches from without a `--texture` stops at the fetch,
/// named by the user's line (not the header's) with the flag to pass; a `--texture` name
/// that is neither a parameter nor a reference lists both.
#[test]
fn texref_errors_name_the_reference() {
    let (ok, _, err) = warpscope(&[
        "analyze",
        TEXREF_PTX,
        "--kernel",
        "conv_texref",
        "--grid",
        "1",
        "--block",
        "32",
        "--arg",
        "w=32",
        "--arg",
        "h=1",
    ]);
    assert!(!ok);
    assert!(
        err.contains("texture reference 'img' has no --texture: describe it with --texture img=KIND:W[xH[xD]]:FORMAT"),
        "{err}"
    );
    assert!(err.contains("tests/kernels/texref.cu:34:22"), "{err}");
    let (ok, _, err) = warpscope(&[
        "analyze",
        TEXREF_PTX,
        "--kernel",
        "gather_texref",
        "--grid",
        "1",
        "--block",
        "32",
        "--arg",
        "n=32",
        "--texture",
        "dat=linear:64:float",
    ]);
    assert!(!ok);
    assert!(
        err.contains("--texture dat: gather_texref has no parameter 'dat' and the module no texture reference of that name"),
        "{err}"
    );
    assert!(
        err.contains("its texture and surface references: img, data, row, vol, layers1, layers, rgba, ints, src, dst, dst4"),
        "{err}"
    );
}

/// The deprecated `.tex .u32 NAME` (PTX ISA §5.1.8: the same as `.global .texref NAME`) and
/// a `.global .surfref`, hand-written: one warp reads 32 consecutive floats of a linear
/// texture (4 requests of 8 lanes, 1 sector each) and writes a row of a 256-wide CUDA array
/// through the surface (4 requests of 8 lanes; 32 bytes of a row = 2 block-linear sectors of
/// 16 bytes × 2 rows each).
#[test]
fn deprecated_tex_space_and_surfref() {
    let ptx = ".version 8.0\n.target sm_90\n.address_size 64\n\
        .tex .u32 lin, other;\n.global .surfref out;\n\
        .visible .entry k()\n{\n.reg .b32 %r<8>;\n.reg .f32 %f<8>;\n\
        mov.u32 %r1, %tid.x;\n\
        tex.1d.v4.f32.s32 {%f1, %f2, %f3, %f4}, [lin, {%r1}];\n\
        shl.b32 %r2, %r1, 2;\nmov.u32 %r3, 0;\nmov.b32 %r4, %f1;\n\
        sust.b.2d.b32.trap [out, {%r2, %r3}], {%r4};\nret;\n}\n";
    let f = temp("k.ptx", ptx);
    let v = json(&[
        "analyze",
        &f,
        "--kernel",
        "k",
        "--grid",
        "1",
        "--block",
        "32",
        "--cc",
        "9.0",
        "--texture",
        "lin=linear:4096:float",
        "--texture",
        "out=array:256x256:float",
    ]);
    assert_eq!(totals(&v, "texture_load"), (4, 4));
    assert_eq!(totals(&v, "surface_store"), (4, 8));
    // A reference used as memory is refused at its line.
    let bad = ptx.replace("ret;", ".reg .b64 %rd<2>;\nld.global.u32 %r5, [lin];\nret;");
    let f = temp("k.ptx", &bad);
    let (ok, _, err) = warpscope(&[
        "analyze", &f, "--kernel", "k", "--grid", "1", "--block", "32",
    ]);
    assert!(!ok);
    assert!(
        err.contains("'lin' is a texture or surface reference, not memory"),
        "{err}"
    );
    assert!(err.contains("PTX line 17"), "{err}");
}

/// (requests, sectors) of every texture, surface and global total: what must agree between
/// two front ends on one launch.
fn memory_totals(v: &serde_json::Value) -> Vec<(&'static str, (u64, u64))> {
    [
        "texture_load",
        "surface_load",
        "surface_store",
        "global_load",
        "global_store",
    ]
    .into_iter()
    .map(|k| (k, totals(v, k)))
    .collect()
}

/// Each source line's (line, space, op, requests, sectors), in line order: the sites of one
/// line summed (nvcc unrolls a loop into a site per iteration, the source front end keeps
/// one).
fn site_rows(v: &serde_json::Value) -> Vec<(u64, String, String, u64, u64)> {
    let mut rows: std::collections::BTreeMap<(u64, String, String), (u64, u64)> =
        Default::default();
    for s in v["architectures"][0]["sites"].as_array().unwrap() {
        if s["space"] == "constant" {
            continue;
        }
        let r = rows
            .entry((
                s["line"].as_u64().unwrap_or(0),
                s["space"].as_str().unwrap_or("").to_string(),
                s["op"].as_str().unwrap_or("").to_string(),
            ))
            .or_default();
        r.0 += s["requests"].as_u64().unwrap_or(0);
        r.1 += s["sectors"].as_u64().unwrap_or(0);
    }
    rows.into_iter()
        .map(|((l, sp, op), (req, sec))| (l, sp, op, req, sec))
        .collect()
}

fn compiler() -> bool {
    let found = warpscope_toolkit::find(None).is_ok();
    if !found {
        eprintln!("skipped: no CUDA compiler (scripts/test.sh installs one from PyPI)");
    }
    found
}

/// examples/texture.cu's texture-object kernels on the source front end: the figures of the
/// compiled path and of the H100 (book chapter "Texture and surface memory": conv_texture
/// 6,553,600 requests / 11,776,000 sectors, gather_texture 8,192 / 65,507), and with a
/// compiler every texture and global total equal to the compiled path's.
#[test]
fn source_texture_objects_equal_compiled() {
    let src = ["--frontend", "source"];
    let v = conv("examples/texture.cu", "conv_texture", &src);
    assert_eq!(totals(&v, "texture_load"), (6_553_600, 11_776_000));
    assert_eq!(totals(&v, "global_store"), (32_768, 131_072));
    let g = gather("examples/texture.cu", "gather_texture", &src);
    assert_eq!(totals(&g, "texture_load"), (8_192, 65_507));
    assert_eq!(totals(&g, "global_load"), (2_048, 8_192));
    // The traffic model's texture lookups over the launch: the compiled path's figures
    // (tests/texture.rs), the accesses being the same in the same order.
    let t = conv(
        "examples/texture.cu",
        "conv_texture",
        &["--frontend", "source", "--gpu", "h100"],
    );
    let l = &t["traffic"][0]["launch"]["texture"];
    assert_eq!(
        (l["hits"].as_u64(), l["misses"].as_u64()),
        (Some(11_532_412), Some(243_588))
    );
    if !compiler() {
        return;
    }
    let c = conv(
        "examples/texture.cu",
        "conv_texture",
        &["--frontend", "ptx"],
    );
    assert_eq!(memory_totals(&v), memory_totals(&c));
    let c = gather(
        "examples/texture.cu",
        "gather_texture",
        &["--frontend", "ptx"],
    );
    assert_eq!(memory_totals(&g), memory_totals(&c));
}

const FORMS: &str = "tests/kernels/texture_forms.cu";

/// fetch_forms's launch (8×16 warps, one per 32 x of row blockIdx.y) with its textures.
fn fetch_forms(file: &str, kernel: &str, extra: &[&str]) -> serde_json::Value {
    let mut a = vec![
        "analyze",
        file,
        "--kernel",
        kernel,
        "--grid",
        "8,16",
        "--block",
        "32",
        "--arg",
        "w=256",
        "--cc",
        "9.0",
        "--texture",
        "row=array:1024:float",
        "--texture",
        "vol=array:64x64x64:float",
        "--texture",
        "layers1=array:256x8:float",
        "--texture",
        "layers=array:64x64x8:float",
        "--texture",
        "rgba=array:256x256:uchar4,read=normalized-float",
        "--texture",
        "ints=array:256x256:int",
        "--texture",
        "img=array:256x256:float",
    ];
    a.extend(extra);
    json(&a)
}

/// copy_surface's launch: a 256×256 float surface read twice and written, and a float4 one
/// written transposed, blocks 32×8.
fn copy_surface(file: &str, kernel: &str, extra: &[&str]) -> serde_json::Value {
    let mut a = vec![
        "analyze",
        file,
        "--kernel",
        kernel,
        "--grid",
        "8,32",
        "--block",
        "32,8",
        "--arg",
        "w=256",
        "--arg",
        "h=256",
        "--cc",
        "9.0",
        "--texture",
        "src=array:256x256:float",
        "--texture",
        "dst=array:256x256:float",
        "--texture",
        "dst4=array:256x256:float4",
    ];
    a.extend(extra);
    json(&a)
}

/// Every texture function on texture objects, and surface reads and writes on surface
/// objects, on the source front end. Per warp (128 warps): tex1D of 32 consecutive x of a
/// 1-D CUDA array, 8 quads of one 16-byte sector each (8 requests, 8 sectors); tex2D of a
/// column of ints (x = lane, read as (y, x)): 2 sectors a quad (16); tex2Dgather, 2×2 texels
/// a lane: 3,048 over the launch, the last quad of a row clamped. copy_surface, per warp of
/// one row (2,048 warps): a float surface read or write is 4 requests of 8 lanes, each 32
/// bytes of a row = 2 block-linear sectors (8, 16 sectors); the transposed float4 write is 8
/// requests of 4 lanes, each 4 rows of one 16-byte column = 2 sectors (16 sectors). With a
/// compiler, each site equals the compiled path's.
#[test]
fn source_texture_forms_equal_compiled() {
    let src = ["--frontend", "source"];
    let v = fetch_forms(FORMS, "fetch_forms", &src);
    assert_eq!(totals(&v, "texture_load"), (7 * 1_024, 16_360));
    let rows = site_rows(&v);
    let tex: Vec<(u64, u64)> = rows
        .iter()
        .filter(|r| r.1 == "texture")
        .map(|r| (r.3, r.4))
        .collect();
    assert_eq!(
        tex,
        vec![
            (1_024, 1_024),
            (1_024, 4_096),
            (1_024, 1_024),
            (1_024, 4_096),
            (1_024, 1_024),
            (1_024, 2_048),
            (1_024, 3_048)
        ]
    );
    let s = copy_surface(FORMS, "copy_surface", &src);
    assert_eq!(totals(&s, "surface_load"), (16_384, 32_768));
    assert_eq!(
        totals(&s, "surface_store"),
        (8_192 + 16_384, 16_384 + 32_768)
    );
    if !compiler() {
        return;
    }
    let ptx = ["--frontend", "ptx"];
    assert_eq!(rows, site_rows(&fetch_forms(FORMS, "fetch_forms", &ptx)));
    assert_eq!(
        site_rows(&s),
        site_rows(&copy_surface(FORMS, "copy_surface", &ptx))
    );
}

/// Texture and surface references on the source front end equal nvcc 11.8's PTX of the same
/// file (tests/data/ptx/texref.ptx) site by site, for each kernel, and the texture-object
/// kernels' figures: the reference only names the texture.
#[test]
fn source_texture_references_equal_nvcc_11_8() {
    let cu = "tests/kernels/texref.cu";
    let src = ["--frontend", "source"];
    let s = conv(cu, "conv_texref", &src);
    assert_eq!(totals(&s, "texture_load"), (6_553_600, 11_776_000));
    assert_eq!(
        site_rows(&s),
        site_rows(&conv(TEXREF_PTX, "conv_texref", &[]))
    );
    let s = gather(cu, "gather_texref", &src);
    assert_eq!(totals(&s, "texture_load"), (8_192, 65_507));
    assert_eq!(
        site_rows(&s),
        site_rows(&gather(TEXREF_PTX, "gather_texref", &[]))
    );
    let s = fetch_forms(cu, "fetch_forms_texref", &src);
    assert_eq!(totals(&s, "texture_load"), (7 * 1_024, 16_360));
    assert_eq!(
        site_rows(&s),
        site_rows(&fetch_forms(TEXREF_PTX, "fetch_forms_texref", &[]))
    );
    let s = copy_surface(cu, "copy_surfref", &src);
    assert_eq!(totals(&s, "surface_load"), (16_384, 32_768));
    assert_eq!(totals(&s, "surface_store"), (24_576, 49_152));
    assert_eq!(
        site_rows(&s),
        site_rows(&copy_surface(TEXREF_PTX, "copy_surfref", &[]))
    );
}

/// Mistakes on the source front end, each named at its file:line:col.
#[test]
fn source_texture_errors() {
    let f = temp(
        "bad.cu",
        "texture<float, 2> img;\n\
         texture<float, 1> lin;\n\
         surface<void, 2> surf;\n\
         __global__ void k_ptr(const float* p, float* out) { out[0] = tex2D<float>(p, 1.0f, 2.0f); }\n\
         __global__ void k_notype(cudaTextureObject_t t, float* out) { out[0] = tex2D(t, 1.0f, 2.0f); }\n\
         __global__ void k_dims(float* out) { out[0] = tex2D(lin, 1.0f, 2.0f); }\n\
         __global__ void k_value(float* out) { out[0] = img; }\n\
         __global__ void k_surf(float* out) { float v; surf2Dread(&v, img, 0, 0); out[0] = v; }\n\
         __global__ void k_args(float* out) { out[0] = tex2D(img, 1.0f); }\n\
         __global__ void k_lod(cudaTextureObject_t t, float* out) { out[0] = tex2DLod<float>(t, 1.0f, 1.0f, 0.0f); }\n\
         __global__ void k_ref(float* out) { out[threadIdx.x] = tex2D(img, threadIdx.x, 0.5f); }\n",
    );
    let run = |kernel: &str, extra: &[&str]| {
        let mut a = vec![
            "analyze",
            f.as_str(),
            "--frontend",
            "source",
            "--kernel",
            kernel,
            "--grid",
            "1",
            "--block",
            "32",
        ];
        a.extend(extra);
        let (ok, _, err) = warpscope(&a);
        assert!(!ok, "{kernel} ran");
        err
    };
    let cases = [
        ("k_ptr", "4:75: tex2D reads a texture object (cudaTextureObject_t) or a texture reference; 'p' has type float*"),
        ("k_notype", "5:72: tex2D on a texture object needs the type it reads: tex2D<float>(tex, x, y)"),
        ("k_dims", "6:53: tex2D reads a 2-D texture; 'lin' is 1-D (texture<float, 1> lin)"),
        ("k_value", "7:48: 'img' is a texture reference: read it with tex1Dfetch"),
        ("k_surf", "8:62: surf2Dread needs a surface; 'img' is a texture reference (texture<float, 2> img)"),
        ("k_args", "9:47: tex2D takes the texture then x, y; 1 given after it"),
        ("k_lod", "10:69: unsupported construct: tex2DLod: mipmapped fetches"),
        // A reference without --texture stops at its fetch.
        ("k_ref", "11:56: texture reference 'img' has no --texture: describe it with --texture img=KIND:W[xH[xD]]:FORMAT"),
    ];
    for (kernel, want) in cases {
        let err = run(kernel, &[]);
        assert!(err.contains(&format!("{f}:{want}")), "{kernel}: {err}");
    }
    // A --texture that names neither a texture parameter nor a reference; an object
    // parameter without --texture; a --texture on a parameter that is no object.
    let err = run("k_ref", &["--texture", "im=array:64x64:float"]);
    assert!(
        err.contains("--texture im: k_ref has no texture or surface parameter or reference 'im'; its textures and surfaces are: img (texture reference, line 1), lin (texture reference, line 2), surf (surface reference, line 3)"),
        "{err}"
    );
    let obj = temp(
        "obj.cu",
        "__global__ void k(cudaTextureObject_t t, float* out, int n) { out[0] = tex1Dfetch<float>(t, n); }\n",
    );
    let (ok, _, err) = warpscope(&[
        "analyze",
        &obj,
        "--frontend",
        "source",
        "--kernel",
        "k",
        "--grid",
        "1",
        "--block",
        "32",
        "--arg",
        "n=1",
    ]);
    assert!(!ok);
    assert!(
        err.contains("kernel parameter 't' is a cudaTextureObject_t: describe it with --texture t=KIND:W[xH[xD]]:FORMAT"),
        "{err}"
    );
    let (ok, _, err) = warpscope(&[
        "analyze",
        &obj,
        "--frontend",
        "source",
        "--kernel",
        "k",
        "--grid",
        "1",
        "--block",
        "32",
        "--arg",
        "n=1",
        "--texture",
        "n=linear:64:float",
    ]);
    assert!(!ok);
    assert!(
        err.contains("--texture n: 'n' (int) is not a texture or surface object"),
        "{err}"
    );
}

/// With CUDA 12 or later, nvcc refuses texture references ("texture is not a template");
/// `analyze` then reads the file with the source interpreter and says why, with the same
/// figures as nvcc 11.8's PTX (the H100's for the object version). `--frontend ptx` keeps
/// the error, with the way out.
#[test]
fn nvcc_refusing_texture_references_falls_back_to_the_source() {
    if !compiler() {
        return;
    }
    let cu = "tests/kernels/texref.cu";
    let v = conv(cu, "conv_texref", &[]);
    assert_eq!(totals(&v, "texture_load"), (6_553_600, 11_776_000));
    let notes = v["notes"].to_string();
    assert!(
        notes
            .contains("texture references (texture<…>/surface<…> globals) were removed in CUDA 12"),
        "{notes}"
    );
    assert!(
        notes.contains("texref.cu(11): error: texture is not a template"),
        "{notes}"
    );
    assert!(
        notes.contains("the source interpreter reads them"),
        "{notes}"
    );
    let (ok, _, err) = warpscope(&[
        "analyze",
        cu,
        "--frontend",
        "ptx",
        "--kernel",
        "gather_texref",
        "--grid",
        "1",
        "--block",
        "32",
        "--arg",
        "n=32",
        "--texture",
        "data=linear:64:float",
    ]);
    assert!(!ok);
    assert!(err.contains("error: texture is not a template"), "{err}");
    assert!(
        err.contains("without --frontend ptx the source interpreter reads them"),
        "{err}"
    );
    // Other compile errors stay errors.
    let f = temp(
        "broken.cu",
        "__global__ void k(float* out) { out[0] = undeclared; }\n",
    );
    let (ok, _, err) = warpscope(&[
        "analyze", &f, "--kernel", "k", "--grid", "1", "--block", "32",
    ]);
    assert!(!ok);
    assert!(err.contains("compile failed"), "{err}");
}
