//! Texture and surface memory through the compiled path: every input form (`tex.1d/2d/3d/a2d`
//! with float and integer coordinates, `tld4`, `suld`, `sust`) from hand-written PTX with the
//! numbers worked out from the rules of `crates/model/src/texture.rs`, and the texture
//! examples (`examples/texture.cu`, needs nvcc) against their H100 measurements
//! (`tests/data/h100/texture/texture-probes.csv`).

mod common;
use common::{json, temp, warpscope};
use std::collections::HashMap;

/// (requests, sectors) of a totals key (`texture_load`, `surface_load`, `global_load`, ...).
fn totals(v: &serde_json::Value, key: &str) -> (u64, u64) {
    let t = &v["architectures"][0]["totals"][key];
    (
        t["requests"].as_u64().unwrap_or(0),
        t["sectors"].as_u64().unwrap_or(0),
    )
}

/// A kernel `k(u64 t)` of one warp: `%r1` = tid.x, `%f1` = tid.x as float, `%rd1` = the
/// texture/surface object; `body` then fetches.
fn ptx(body: &str) -> String {
    format!(
        ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k(\n.param .u64 t)\n{{\n\
         .reg .b64 %rd<4>;\n.reg .f32 %f<16>;\n.reg .b32 %r<16>;\n\
         ld.param.u64 %rd1, [t];\nmov.u32 %r1, %tid.x;\ncvt.rn.f32.u32 %f1, %r1;\n{body}\nret;\n}}\n"
    )
}

/// Analyzes `body` on one warp at CC 9.0 with `--texture t=SPEC`.
fn run(body: &str, spec: &str) -> serde_json::Value {
    let f = temp("k.ptx", &ptx(body));
    let tex = format!("t={spec}");
    json(&[
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
        &tex,
    ])
}

const FETCH2D: &str = "tex.2d.v4.f32.f32 {%f4, %f5, %f6, %f7}, [%rd1, {%f2, %f3}];";

#[test]
fn tex1dfetch_integer_coordinates() {
    // 32 consecutive floats from linear memory: 4 requests of 8 lanes, 32 bytes each.
    let v = run(
        "tex.1d.v4.f32.s32 {%f4, %f5, %f6, %f7}, [%rd1, {%r1}];",
        "linear:4096:float",
    );
    assert_eq!(totals(&v, "texture_load"), (4, 4));
    // Stride 8: every lane its own sector.
    let v = run(
        "shl.b32 %r2, %r1, 3;\ntex.1d.v4.f32.s32 {%f4, %f5, %f6, %f7}, [%rd1, {%r2}];",
        "linear:4096:float",
    );
    assert_eq!(totals(&v, "texture_load"), (4, 32));
    // Past the end: no request at all.
    let v = run(
        "add.s32 %r2, %r1, 5000;\ntex.1d.v4.f32.s32 {%f4, %f5, %f6, %f7}, [%rd1, {%r2}];",
        "linear:4096:float",
    );
    assert_eq!(totals(&v, "texture_load"), (0, 0));
}

#[test]
fn tex2d_point_row_column_and_layouts() {
    let row = "add.f32 %f2, %f1, 0f3F000000;\nmov.f32 %f3, 0f3F000000;\n";
    let col = "mov.f32 %f2, 0f3F000000;\nadd.f32 %f3, %f1, 0f3F000000;\n";
    // CUDA array (block-linear, 16 B × 2-row sectors): a row is 8 quads of one sector each;
    // a column 8 quads of 4 rows = 2 sectors each.
    let v = run(&format!("{row}{FETCH2D}"), "array:256x256:float");
    assert_eq!(totals(&v, "texture_load"), (8, 8));
    let v = run(&format!("{col}{FETCH2D}"), "array:256x256:float");
    assert_eq!(totals(&v, "texture_load"), (8, 16));
    // Pitch-linear (row-major): the column costs a sector per texel.
    let v = run(&format!("{col}{FETCH2D}"), "pitch2d:256x256:float");
    assert_eq!(totals(&v, "texture_load"), (8, 32));
    // float4 texels: a quad of a row spans 4 sectors (1 texel wide each).
    let v = run(&format!("{row}{FETCH2D}"), "array:64x64:float4");
    assert_eq!(totals(&v, "texture_load"), (8, 32));
    let t = &v["architectures"][0]["sites"][0];
    assert_eq!(
        (t["space"].as_str(), t["width"].as_u64()),
        (Some("texture"), Some(16))
    );
    assert_eq!(t["executions"].as_u64(), Some(1));
}

#[test]
fn tex2d_addressing_modes() {
    // Texels 240 + lane of a 256-wide row (normalized x = (240 + lane + 0.5) / 256).
    let edge =
        "add.f32 %f2, %f1, 0f43708000;\nmul.f32 %f2, %f2, 0f3B800000;\nmov.f32 %f3, 0f3B000000;\n";
    // clamp: lanes 16–31 all read texel 255: 4 + 4 quads of one sector.
    let v = run(
        &format!("{edge}{FETCH2D}"),
        "array:256x256:float,normalized",
    );
    assert_eq!(totals(&v, "texture_load"), (8, 8));
    // wrap: lanes 16–31 read 0–15; still one sector a quad.
    let v = run(
        &format!("{edge}{FETCH2D}"),
        "array:256x256:float,addr=wrap,normalized",
    );
    assert_eq!(totals(&v, "texture_load"), (8, 8));
    // mirror and border cost as clamp here (measured: border still looks up a sector).
    for mode in ["mirror", "border"] {
        let v = run(
            &format!("{edge}{FETCH2D}"),
            &format!("array:256x256:float,addr={mode},normalized"),
        );
        assert_eq!(totals(&v, "texture_load"), (8, 8), "{mode}");
    }
    // x = (2·lane + 0.5) / 16 in a 16-wide wrapped texture: texel 2·lane mod 16, so lanes
    // 8–15 repeat 0–14; each quad (x 0, 2, 4, 6 or 8 … 14) spans 2 sectors: 16.
    let step = "mul.f32 %f2, %f1, 0f40000000;\nadd.f32 %f2, %f2, 0f3F000000;\nmul.f32 %f2, %f2, 0f3D800000;\nmov.f32 %f3, 0f3D000000;\n";
    let v = run(
        &format!("{step}{FETCH2D}"),
        "array:16x16:float,addr=wrap,normalized",
    );
    assert_eq!(totals(&v, "texture_load"), (8, 16));
}

#[test]
fn tex2d_linear_filtering_and_tld4() {
    // x = lane + 1.0, y = 1.0: the 2×2 neighbourhood (x lane..lane+1, rows 0–1): a quad
    // spans 5 texels = 2 sectors; the last quad's x = 32 stays in the 256-wide row.
    let mid = "add.f32 %f2, %f1, 0f3F800000;\nmov.f32 %f3, 0f3F800000;\n";
    let v = run(
        &format!("{mid}{FETCH2D}"),
        "array:256x256:float,filter=linear",
    );
    assert_eq!(totals(&v, "texture_load"), (8, 16));
    // At texel centres the weights are 0 and 1: one texel a lane, as point sampling.
    let centre = "add.f32 %f2, %f1, 0f3F000000;\nmov.f32 %f3, 0f3F000000;\n";
    let v = run(
        &format!("{centre}{FETCH2D}"),
        "array:256x256:float,filter=linear",
    );
    assert_eq!(totals(&v, "texture_load"), (8, 8));
    // tld4 reads all four texels even at centres.
    let v = run(
        &format!("{centre}tld4.r.2d.v4.f32.f32 {{%f4, %f5, %f6, %f7}}, [%rd1, {{%f2, %f3}}];"),
        "array:256x256:float",
    );
    assert_eq!(totals(&v, "texture_load"), (8, 16));
    // filter=linear on an integer format needs read=normalized-float.
    let f = temp("k.ptx", &ptx(FETCH2D));
    let (ok, _, err) = warpscope(&[
        "analyze",
        &f,
        "--kernel",
        "k",
        "--grid",
        "1",
        "--block",
        "32",
        "--texture",
        "t=array:64x64:uchar,filter=linear",
    ]);
    assert!(!ok);
    assert!(
        err.contains("--texture t=array:64x64:uchar,filter=linear"),
        "{err}"
    );
    assert!(err.contains("read=normalized-float"), "{err}");
}

#[test]
fn tex3d_layered_and_1d_array() {
    // 3-D linear, x = lane + 1, y = z = 1: 2×2×2 per lane; a trilinear quad is looked up
    // as two lane pairs: pairs alternate 1 and 2 sector columns, × 2 slices, the last
    // pair clamped at x = 31: 8·6 − 2 = 46 (the H100 probe a3d_f32_linear_row_mid).
    let v = run(
        "add.f32 %f2, %f1, 0f3F800000;\nmov.f32 %f3, 0f3F800000;\n\
         tex.3d.v4.f32.f32 {%f4, %f5, %f6, %f7}, [%rd1, {%f2, %f3, %f3, %f3}];",
        "array:32x32x32:float,filter=linear",
    );
    assert_eq!(totals(&v, "texture_load"), (8, 46));
    // Layered: layer = lane % 8 at texel (0, 0): 4 layers a quad, 4 sectors each quad.
    let v = run(
        "and.b32 %r2, %r1, 7;\nmov.f32 %f2, 0f3F000000;\n\
         tex.a2d.v4.f32.f32 {%f4, %f5, %f6, %f7}, [%rd1, {%r2, %f2, %f2, %f2}];",
        "array:64x64x8:float",
    );
    assert_eq!(totals(&v, "texture_load"), (8, 32));
    // A 1-D CUDA array is block-linear of height 1: 16 useful bytes a sector.
    let v = run(
        "add.f32 %f2, %f1, 0f3F000000;\ntex.1d.v4.f32.f32 {%f4, %f5, %f6, %f7}, [%rd1, {%f2}];",
        "array:4096:float",
    );
    assert_eq!(totals(&v, "texture_load"), (8, 8));
}

#[test]
fn surfaces_load_and_store() {
    // suld x in bytes: lane · 4 → one row; 4 requests of 8 lanes, 32 bytes = 2 sectors each.
    let v = run(
        "shl.b32 %r2, %r1, 2;\nmov.u32 %r3, 0;\nsuld.b.2d.b32.trap {%r4}, [%rd1, {%r2, %r3}];",
        "array:256x256:float",
    );
    assert_eq!(totals(&v, "surface_load"), (4, 8));
    // sust down a column: 8 rows a request = 4 sectors.
    let v = run(
        "mov.u32 %r2, 0;\nsust.b.2d.b32.trap [%rd1, {%r2, %r1}], {%r2};",
        "array:256x256:float",
    );
    assert_eq!(totals(&v, "surface_store"), (4, 16));
    assert_eq!(totals(&v, "texture_load"), (0, 0));
    // .trap outside the surface is a fault naming the surface and the coordinates.
    let f = temp(
        "k.ptx",
        &ptx("add.s32 %r2, %r1, 300;\nmov.u32 %r3, 0;\nsuld.b.2d.b32.trap {%r4}, [%rd1, {%r2, %r3}];"),
    );
    let (ok, _, err) = warpscope(&[
        "analyze",
        &f,
        "--kernel",
        "k",
        "--grid",
        "1",
        "--block",
        "32",
        "--texture",
        "t=array:64x64:float",
    ]);
    assert!(!ok);
    assert!(err.contains("outside 't' (64x64x1 texels; .trap)"), "{err}");
    // .zero reads nothing out there.
    let v = run(
        "add.s32 %r2, %r1, 300;\nmov.u32 %r3, 0;\nsuld.b.2d.b32.zero {%r4}, [%rd1, {%r2, %r3}];",
        "array:64x64:float",
    );
    assert_eq!(totals(&v, "surface_load"), (0, 0));
}

#[test]
fn texture_errors_name_the_flag() {
    let f = temp("k.ptx", &ptx(FETCH2D));
    // No --texture: the handle is a plain pointer's, and the fetch says what to pass.
    let (ok, _, err) = warpscope(&[
        "analyze", &f, "--kernel", "k", "--grid", "1", "--block", "32",
    ]);
    assert!(!ok);
    assert!(
        err.contains("pass --texture PARAM=KIND:WxH:FORMAT"),
        "{err}"
    );
    assert!(err.contains("PTX line"), "{err}");
    // A bad description names the flag and what to write.
    let (ok, _, err) = warpscope(&[
        "analyze",
        &f,
        "--kernel",
        "k",
        "--grid",
        "1",
        "--block",
        "32",
        "--texture",
        "t=array:64:double",
    ]);
    assert!(!ok);
    assert!(
        err.contains("--texture t=array:64:double: unknown format 'double'"),
        "{err}"
    );
    // A name that is no parameter lists the parameters.
    let (ok, _, err) = warpscope(&[
        "analyze",
        &f,
        "--kernel",
        "k",
        "--grid",
        "1",
        "--block",
        "32",
        "--texture",
        "img=array:64:float",
    ]);
    assert!(!ok);
    assert!(
        err.contains("--texture img: k has no parameter 'img'"),
        "{err}"
    );
}

/// The H100 measurements of the example launches (the rows of texture-probes.csv whose grid
/// is not 1).
fn h100() -> HashMap<String, HashMap<String, u64>> {
    let text = std::fs::read_to_string("tests/data/h100/texture/texture-probes.csv").unwrap();
    let mut lines = text.lines();
    let head: Vec<&str> = lines.next().unwrap().split(',').collect();
    lines
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            let m = head
                .iter()
                .zip(&f)
                .filter_map(|(h, v)| v.parse::<u64>().ok().map(|x| (h.to_string(), x)))
                .collect();
            (f[0].to_string(), m)
        })
        .collect()
}

fn compiler() -> bool {
    let found = warpscope_toolkit::find(None).is_ok();
    if !found {
        eprintln!("skipped: no CUDA compiler (scripts/test.sh installs one from PyPI)");
    }
    found
}

/// examples/texture.cu at CC 9.0 equals the H100 (ncu, 1024×1024 image, 5×5 filter; 65,536
/// gathers): texture requests and sectors (`l1tex__t_{requests,sectors}_pipe_tex_mem_texture`)
/// and global loads (`l1tex__t_{requests,sectors}_pipe_lsu_mem_global_op_ld`), exactly.
#[test]
fn examples_equal_h100() {
    if !compiler() {
        return;
    }
    let m = h100();
    let tex = |row: &str| {
        (
            m[row]["l1tex__t_requests_pipe_tex_mem_texture"],
            m[row]["l1tex__t_sectors_pipe_tex_mem_texture"],
        )
    };
    let gld = |row: &str| {
        (
            m[row]["l1tex__t_requests_pipe_lsu_mem_global_op_ld"],
            m[row]["l1tex__t_sectors_pipe_lsu_mem_global_op_ld"],
        )
    };
    let conv = |kernel: &str, grid: &str, block: &str, extra: &[&str]| {
        let mut a = vec![
            "analyze",
            "examples/texture.cu",
            "--kernel",
            kernel,
            "--grid",
            grid,
            "--block",
            block,
            "--arg",
            "w=1024",
            "--arg",
            "h=1024",
            "--cc",
            "9.0",
        ];
        a.extend(extra);
        json(&a)
    };
    let img = ["--texture", "img=array:1024x1024:float"];
    let v = conv("conv_texture", "32,128", "32,8", &img);
    assert_eq!(totals(&v, "texture_load"), tex("conv_texture"));
    assert_eq!(totals(&v, "texture_load"), (6_553_600, 11_776_000));
    let v = conv("conv_texture", "64,64", "16,16", &img);
    assert_eq!(totals(&v, "texture_load"), tex("conv_texture_16x16"));
    let v = conv("conv_global", "32,128", "32,8", &[]);
    assert_eq!(totals(&v, "global_load"), gld("conv_global"));
    assert_eq!(totals(&v, "global_load"), (819_200, 3_911_680));
    let v = conv("conv_global", "64,64", "16,16", &[]);
    assert_eq!(totals(&v, "global_load"), gld("conv_global_16x16"));

    let gather = |kernel: &str, init: &str, extra: &[&str]| {
        let mut a = vec![
            "analyze",
            "examples/texture.cu",
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
            init,
            "--cc",
            "9.0",
        ];
        a.extend(extra);
        json(&a)
    };
    let data = ["--texture", "data=linear:65536:float"];
    let v = gather("gather_texture", "idx=random:7", &data);
    assert_eq!(totals(&v, "texture_load"), tex("gather_texture"));
    assert_eq!(totals(&v, "texture_load"), (8192, 65_507));
    assert_eq!(totals(&v, "global_load"), gld("gather_texture"));
    let v = gather("gather_texture", "idx=iota", &data);
    assert_eq!(totals(&v, "texture_load"), tex("gather_texture_iota"));
    let v = gather("gather_global", "idx=random:7", &[]);
    assert_eq!(totals(&v, "global_load"), gld("gather_global"));
    assert_eq!(totals(&v, "global_load"), (4096, 73_603));
}

/// A `cudaTextureObject_t` parameter without `--texture` is refused before the run, with the
/// flag to pass (the compiled path knows the parameter's C type from the source).
#[test]
fn texture_parameter_without_description() {
    if !compiler() {
        return;
    }
    let (ok, _, err) = warpscope(&[
        "analyze",
        "examples/texture.cu",
        "--kernel",
        "conv_texture",
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
        err.contains("is a texture or surface object: describe it with --texture img="),
        "{err}"
    );
}

/// `explain` of conv_texture's first tex2D (dx = dy = −2) draws warp 0 of block (0,0) on the
/// image's grid: x = −2 … 29 clamps to 0 for lanes 0–2, so texel 0 holds three lanes
/// ("0+"), lane 3 reads x 1, lane 31 x 29; the window is the first 8 sector columns of rows
/// 0–1 (4 texels × 2 rows a sector); the quads take 1, 2, 2, … sectors (lanes 0–3 read x 0–1,
/// the others straddle two sectors): 15 sectors, 8 distinct. `--warp 0`: the costliest
/// execution is another warp's (16 sectors), the executions being counted per warp, not per
/// request.
#[test]
fn explain_draws_the_texels_on_the_grid() {
    if !compiler() {
        return;
    }
    let v = json(&[
        "explain",
        "examples/texture.cu",
        "--kernel",
        "conv_texture",
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
        "--site",
        "25",
        "--warp",
        "0",
    ]);
    let g = &v["texels"];
    assert_eq!(g["texture"], "img");
    assert_eq!(g["window"], serde_json::json!([0, 0, 32, 2]));
    assert_eq!(g["sector"], serde_json::json!([4, 2]));
    assert_eq!(
        g["sectors_per_request"],
        serde_json::json!([1, 2, 2, 2, 2, 2, 2, 2])
    );
    assert_eq!(g["distinct_sectors"], 8);
    let texels = g["texels"].as_array().unwrap();
    let lane_at = |lane: u64| {
        texels
            .iter()
            .find(|t| t["lane"] == lane)
            .map(|t| (t["x"].as_u64().unwrap(), t["y"].as_u64().unwrap()))
    };
    assert_eq!(lane_at(0), Some((0, 0)));
    assert_eq!(lane_at(2), Some((0, 0)));
    assert_eq!(lane_at(3), Some((1, 0)));
    assert_eq!(lane_at(31), Some((29, 0)));
    let (ok, text, err) = warpscope(&[
        "explain",
        "examples/texture.cu",
        "--kernel",
        "conv_texture",
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
        "--site",
        "25",
        "--warp",
        "0",
    ]);
    assert!(ok, "{err}");
    assert!(
        text.contains("y 0    │ 0+  3  4  5│  6  7  8  9│"),
        "{text}"
    );
}

/// The traffic model's texture lookups over whole launches against the H100 (ncu
/// `l1tex__t_sectors_pipe_tex_mem_texture_lookup_hit`/`_miss`): the tex1Dfetch of an iota
/// index is exact (8,192 misses, no hit); conv_texture is 30 sectors off in 11.8 million
/// (model 11,532,412 hits / 243,588 misses, H100 11,532,442 / 243,558) and the random
/// gather 6 (1,928 / 63,579 against 1,934 / 63,573): which blocks share an SM's L1 is the
/// hardware scheduler's choice; the model runs block b on SM b mod 132, one after another.
#[test]
fn texture_lookups_over_the_launch_near_h100() {
    if !compiler() {
        return;
    }
    let m = h100();
    let lookups = |args: &[&str]| {
        let mut a = vec!["analyze", "examples/texture.cu", "--gpu", "h100"];
        a.extend(args);
        let v = json(&a);
        let t = &v["traffic"][0]["launch"]["texture"];
        (t["hits"].as_u64().unwrap(), t["misses"].as_u64().unwrap())
    };
    let measured = |row: &str| {
        (
            m[row]["l1tex__t_sectors_pipe_tex_mem_texture_lookup_hit"],
            m[row]["l1tex__t_sectors_pipe_tex_mem_texture_lookup_miss"],
        )
    };
    let conv = lookups(&[
        "--kernel",
        "conv_texture",
        "--grid",
        "32,128",
        "--block",
        "32,8",
        "--arg",
        "w=1024",
        "--arg",
        "h=1024",
        "--texture",
        "img=array:1024x1024:float",
    ]);
    assert_eq!(conv, (11_532_412, 243_588));
    assert_eq!(measured("conv_texture"), (11_532_442, 243_558));
    let gather = |init: &str| {
        lookups(&[
            "--kernel",
            "gather_texture",
            "--grid",
            "256",
            "--block",
            "256",
            "--arg",
            "n=65536",
            "--alloc",
            "idx=65536",
            "--init",
            init,
            "--texture",
            "data=linear:65536:float",
        ])
    };
    assert_eq!(gather("idx=iota"), measured("gather_texture_iota"));
    assert_eq!(gather("idx=iota"), (0, 8192));
    assert_eq!(gather("idx=random:7"), (1_928, 63_579));
    assert_eq!(measured("gather_texture"), (1_934, 63_573));
}
