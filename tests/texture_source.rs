//! Textures on every input form: texture and surface references (`texture<T, dim, mode>`
//! globals; PTX `.global .texref`/`.surfref` and the deprecated `.tex .u32`) on the compiled
//! path, from PTX that nvcc 11.8 made (`tests/data/ptx/texref.ptx`, from
//! `tests/kernels/texref.cu`: CUDA 12 removed texture references, so CI's nvcc cannot);
//! texture and surface objects and references on the source front end, whose totals must
//! equal the compiled path's for the same launch.

mod common;
use common::warpscope;

fn json(args: &[&str]) -> serde_json::Value {
    let mut a = args.to_vec();
    a.extend(["--format", "json"]);
    let (ok, out, err) = warpscope(&a);
    assert!(ok, "{args:?} failed: {err}");
    serde_json::from_str(&out).unwrap()
}

/// (requests, sectors) of a totals key (`texture_load`, `surface_store`, `global_load`, ...).
fn totals(v: &serde_json::Value, key: &str) -> (u64, u64) {
    let t = &v["architectures"][0]["totals"][key];
    (
        t["requests"].as_u64().unwrap_or(0),
        t["sectors"].as_u64().unwrap_or(0),
    )
}

fn temp(name: &str, text: &str) -> String {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("warpscope-texsrc-{}-{n}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join(name);
    std::fs::write(&f, text).unwrap();
    f.to_string_lossy().to_string()
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
/// kernels measured on the H100 (README "Texture and surface memory", tests/texture.rs):
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
