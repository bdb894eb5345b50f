use super::*;
use crate::access::{Op, Space};

fn desc(s: &str) -> TextureDesc {
    s.parse().unwrap_or_else(|e| panic!("{s}: {e}"))
}

#[test]
fn parses_specs_with_cuda_defaults() {
    let t = desc("img=array:1024x768:float");
    assert_eq!(t.name, "img");
    assert_eq!(t.kind, Kind::Array);
    assert_eq!((t.size, t.dims, t.texel_bytes), ([1024, 768, 1], 2, 4));
    assert_eq!(t.address, AddressMode::Clamp);
    assert_eq!(t.filter, Filter::Point);
    assert!(!t.normalized);
    assert_eq!(t.read, ReadMode::Element);
    let t = desc("v=array:32x32x32:float4,addr=wrap,filter=linear,normalized");
    assert_eq!((t.size, t.dims, t.texel_bytes), ([32, 32, 32], 3, 16));
    assert_eq!(
        (t.address, t.filter, t.normalized),
        (AddressMode::Wrap, Filter::Linear, true)
    );
    let t = desc("p=pitch2d:256x256:float");
    assert_eq!(t.pitch, 1024);
    assert_eq!(desc("p=pitch2d:100x4:uchar4").pitch, 512);
    assert_eq!(desc("p=pitch2d:100x4:uchar4,pitch=416").pitch, 416);
    let t = desc("d=linear:65536:uchar4");
    assert_eq!((t.kind, t.size[0], t.texel_bytes), (Kind::Linear, 65536, 4));
    let t = desc("u=array:64x64:uchar,filter=linear,read=normalized-float");
    assert_eq!(t.read, ReadMode::NormalizedFloat);
    assert_eq!(desc("h=array:8:unsigned char").texel_bytes, 1);
    assert_eq!(desc("h=array:8:short2").texel_bytes, 4);
}

#[test]
fn bad_specs_say_what_to_write() {
    let err = |s: &str| s.parse::<TextureDesc>().unwrap_err();
    assert!(err("img").contains("NAME=KIND"));
    assert!(err("img=array:10").contains("KIND:SIZE:FORMAT"));
    assert!(err("img=cube:10:float").contains("linear (tex1Dfetch), pitch2d or array"));
    assert!(err("img=array:10x0:float").contains("'0' is not a whole number"));
    assert!(err("img=array:1x2x3x4:float").contains("W, WxH or WxHxD"));
    assert!(err("img=array:10:double").contains("unknown format 'double'"));
    assert!(err("img=linear:10x10:float").contains("one dimension"));
    assert!(err("img=pitch2d:10:float").contains("WxH"));
    assert!(err("img=array:10:float,addr=wrap").contains("normalized"));
    assert!(err("img=array:10:float,addr=repeat").contains("clamp, wrap, mirror or border"));
    assert!(err("img=array:10:uchar,filter=linear").contains("read=normalized-float"));
    assert!(err("img=linear:10:float,filter=linear").contains("drop those options"));
    assert!(err("img=array:10:float,read=normalized-float").contains("8- and 16-bit"));
    assert!(err("img=array:10:float,fast").contains("unknown option 'fast'"));
    assert!(err("img=pitch2d:10x10:float,pitch=8").contains("at least width"));
    assert!(err("=array:10:float").contains("not a parameter name"));
}

#[test]
fn addressing_modes_on_integer_indices() {
    // An axis of 8 texels [PG "Texture Fetching"].
    let n = 8;
    let got = |m| [-2i64, -1, 0, 7, 8, 9, 17].map(|i| address(m, i, n));
    assert_eq!(got(AddressMode::Clamp), [0, 0, 0, 7, 7, 7, 7]);
    assert_eq!(got(AddressMode::Border), [0, 0, 0, 7, 7, 7, 7]);
    assert_eq!(got(AddressMode::Wrap), [6, 7, 0, 7, 0, 1, 1]);
    assert_eq!(got(AddressMode::Mirror), [1, 0, 0, 7, 7, 6, 1]);
}

#[test]
fn point_and_linear_footprints() {
    let t = desc("t=array:16x16:float");
    let f = footprint(&t, Coords::Float([3.7, 2.2, 0.0]), 2, None, Sampling::Tex);
    assert_eq!(f.iter().collect::<Vec<_>>(), vec![[3, 2, 0]]);
    let t = desc("t=array:16x16:float,filter=linear");
    // x = 4.0: xB = 3.5, texels 3 and 4; y = 2.5: yB = 2.0 exactly, one row.
    let f = footprint(&t, Coords::Float([4.0, 2.5, 0.0]), 2, None, Sampling::Tex);
    assert_eq!(f.iter().collect::<Vec<_>>(), vec![[3, 2, 0], [4, 2, 0]]);
    // Both off centre: the 2×2 neighbourhood.
    let f = footprint(&t, Coords::Float([4.0, 3.0, 0.0]), 2, None, Sampling::Tex);
    assert_eq!(f.len, 4);
    // At the right edge, clamp folds the pair into one texel.
    let f = footprint(&t, Coords::Float([16.0, 0.5, 0.0]), 2, None, Sampling::Tex);
    assert_eq!(f.iter().collect::<Vec<_>>(), vec![[15, 0, 0]]);
    // tld4 reads all four even at a texel centre.
    let t = desc("t=array:16x16:float");
    let f = footprint(
        &t,
        Coords::Float([4.5, 2.5, 0.0]),
        2,
        None,
        Sampling::Gather,
    );
    assert_eq!(f.len, 4);
    // Normalized wrap: x = 1.03 of 16 texels is texel 0 (16.48 mod 16).
    let t = desc("t=array:16x16:float,addr=wrap,normalized");
    let f = footprint(&t, Coords::Float([1.03, 0.0, 0.0]), 2, None, Sampling::Tex);
    assert_eq!(f.iter().collect::<Vec<_>>(), vec![[0, 0, 0]]);
    // 3-D linear: 2×2×2.
    let t = desc("t=array:8x8x8:float,filter=linear");
    let f = footprint(&t, Coords::Float([2.0, 2.0, 2.0]), 3, None, Sampling::Tex);
    assert_eq!(f.len, 8);
    // Layered: the layer is an integer, clamped.
    let t = desc("t=array:8x8x4:float");
    let f = footprint(
        &t,
        Coords::Float([1.5, 1.5, 0.0]),
        2,
        Some(9),
        Sampling::Tex,
    );
    assert_eq!(f.iter().collect::<Vec<_>>(), vec![[1, 1, 3]]);
    // tex1Dfetch out of range reads nothing.
    let t = desc("t=linear:100:float");
    assert_eq!(
        footprint(&t, Coords::Int([100, 0, 0]), 1, None, Sampling::Tex).len,
        0
    );
    assert_eq!(
        footprint(&t, Coords::Int([-1, 0, 0]), 1, None, Sampling::Tex).len,
        0
    );
    assert_eq!(
        footprint(&t, Coords::Int([99, 0, 0]), 1, None, Sampling::Tex).len,
        1
    );
}

#[test]
fn block_linear_sectors_are_16_bytes_by_2_rows() {
    let t = desc("t=array:256x256:float");
    let sector = |x, y| texel_offset(&t, [x, y, 0]) / 32;
    // Texels (0..4, 0..2) share a sector; (4, 0) and (0, 2) do not.
    for (x, y) in [(1, 0), (3, 1), (0, 1)] {
        assert_eq!(sector(x, y), sector(0, 0));
    }
    assert_ne!(sector(4, 0), sector(0, 0));
    assert_ne!(sector(0, 2), sector(0, 0));
    // A GOB is 512 bytes: (16, 0) is in the next GOB along x.
    assert_eq!(texel_offset(&t, [16, 0, 0]), 512 * 16);
    assert_eq!(texel_offset(&t, [1, 1, 0]), 20);
    assert_eq!(texel_offset(&t, [4, 0, 0]), 32);
    assert_eq!(texel_offset(&t, [8, 0, 0]), 256);
    assert_eq!(texel_offset(&t, [0, 2, 0]), 64);
    // Pitch-linear is row-major.
    let p = desc("t=pitch2d:256x256:float");
    assert_eq!(texel_offset(&p, [3, 2, 0]), 2 * 1024 + 12);
    // Every texel of an array has its own bytes.
    let t = desc("t=array:20x12x3:float2");
    let mut seen = std::collections::HashSet::new();
    for z in 0..3 {
        for y in 0..12 {
            for x in 0..20 {
                let o = texel_offset(&t, [x, y, z]);
                assert!(o + 8 <= footprint_bytes(&t));
                assert!(seen.insert(o), "texel ({x},{y},{z}) overlaps");
            }
        }
    }
}

/// The coordinates of lane `l` in probe `name` of `scripts/h100/texture/probes.cu` (x, y, z,
/// layer), as the probe program computes them.
fn probe_coords(name: &str, l: i64) -> [f32; 4] {
    let f = |x: f64, y: f64| [x as f32, y as f32, 0.0, 0.0];
    let pattern = |p: &str| -> Option<(i64, i64)> {
        Some(match p {
            "row" => (l, 0),
            "row_y1" => (l, 1),
            "row_x2" => (2 + l, 0),
            "row_x16_y5" => (16 + l, 5),
            "col" => (0, l),
            "col_x5" => (5, l),
            "col_y3" => (0, 3 + l),
            "t8x4" => (l % 8, l / 8),
            "t4x8" => (l % 4, l / 4),
            "t16x2" => (l % 16, l / 16),
            "t2x16" => (l % 2, l / 2),
            "t8x4_off" => (3 + l % 8, 1 + l / 8),
            "bcast" => (7, 9),
            "sx2" => (2 * l, 0),
            "sy2" => (0, 2 * l),
            "sy8" => (0, 8 * l),
            "diag" => (l, l),
            "scatter" => ((l * 37) % 256, (l * 101 + 13) % 256),
            "half_row" => (l, 0),
            _ => return None,
        })
    };
    let lf = l as f64;
    for prefix in [
        "a2d_f32_point_",
        "a2d_tall_point_",
        "a2d_f4_point_",
        "a2d_u8_point_",
        "a2d_u84_point_",
        "pitch_f32_point_",
    ] {
        if let Some((x, y)) = name.strip_prefix(prefix).and_then(pattern) {
            return f(x as f64 + 0.5, y as f64 + 0.5);
        }
    }
    for prefix in ["surf_f32_ld_", "surf_f32_st_", "surf_u84_ld_"] {
        if let Some((x, y)) = name.strip_prefix(prefix).and_then(pattern) {
            return f(4.0 * x as f64, y as f64);
        }
    }
    let n = 256.0;
    match name {
        "a2d_f32_linear_row_mid" | "a2d_u8_linear_nf_row_mid" | "a2d_f32_tld4_row_mid" => {
            f(lf + 1.0, 1.0)
        }
        "pitch_f32_linear_row_mid" => f(lf + 1.0, 1.0),
        "a2d_f32_linear_row_mid_y2" => f(lf + 1.0, 2.0),
        "a2d_f32_linear_row_centre" | "a2d_f32_tld4_row_centre" => f(lf + 0.5, 0.5),
        "a2d_f32_linear_row_centre_y1" => f(lf + 0.5, 1.5),
        "a2d_f32_linear_col_mid" => f(1.0, lf + 1.0),
        "a2d_f32_linear_t8x4_mid" | "a2d_f32_tld4_t8x4_mid" | "pitch_f32_linear_t8x4_mid" => {
            f((l % 8) as f64 + 1.0, (l / 8) as f64 + 1.0)
        }
        "a2d_f32_linear_bcast_mid" => f(4.0, 4.0),
        "a2d_f32_linear_edge" => f(240.0 + lf + 1.0, 1.0),
        "a2d_f32_clamp_edge" | "a2d_f32_border_edge" => f(240.0 + lf + 0.5, 0.5),
        "a2d_f32_border_out" => f(300.0 + lf + 0.5, 0.5),
        "a2d_f32_border_neg" => f(lf - 16.0 + 0.5, 0.5),
        "a2d_f32_clampn_edge" | "a2d_f32_wrapn_edge" | "a2d_f32_mirrorn_edge" => {
            f((240.0 + lf + 0.5) / n, 0.5 / n)
        }
        "a2d_f32_wrapn_far" => f((256.0 * lf + 3.5) / n, 0.5 / n),
        "a2d_f32_wrapn_row" => f((lf + 0.5) / n, 0.5 / n),
        "a2d_f32_mirrorn_neg" => f((lf - 16.0 + 0.5) / n, 0.5 / n),
        "a2d_f32_linwrapn_edge" => f((240.0 + lf + 1.0) / n, 1.0 / n),
        "a3d_f32_point_row" => [lf as f32 + 0.5, 0.5, 0.5, 0.0],
        "a3d_f32_point_col" => [0.5, lf as f32 + 0.5, 0.5, 0.0],
        "a3d_f32_point_depth" => [0.5, 0.5, lf as f32 + 0.5, 0.0],
        "a3d_f32_point_t8x4" => [(l % 8) as f32 + 0.5, (l / 8) as f32 + 0.5, 0.5, 0.0],
        "a3d_f32_point_t8x4z" => [(l % 8) as f32 + 0.5, 0.5, (l / 8) as f32 + 0.5, 0.0],
        "a3d_f32_point_t4x4x2" => [
            (l % 4) as f32 + 0.5,
            ((l / 4) % 4) as f32 + 0.5,
            (l / 16) as f32 + 0.5,
            0.0,
        ],
        "a3d_f32_linear_row_mid" => [lf as f32 + 1.0, 1.0, 1.0, 0.0],
        "a3d_f32_linear_t8x4_mid" => [(l % 8) as f32 + 1.0, (l / 8) as f32 + 1.0, 1.0, 0.0],
        "a2dl_f32_point_row_l3" => [lf as f32 + 0.5, 0.5, 0.0, 3.0],
        "a2dl_f32_point_layers" => [0.5, 0.5, 0.0, (l % 8) as f32],
        "a2dl_f32_point_t8x4_l5" => [(l % 8) as f32 + 0.5, (l / 8) as f32 + 0.5, 0.0, 5.0],
        "lin_f32_row" | "lin_f32_half" | "lin_f4_row" => f(lf, 0.0),
        "lin_f32_row_off1" => f(lf + 1.0, 0.0),
        "lin_f32_row_off8" => f(lf + 8.0, 0.0),
        "lin_f32_stride2" | "lin_f4_stride2" => f(2.0 * lf, 0.0),
        "lin_f32_stride8" => f(8.0 * lf, 0.0),
        "lin_f32_stride32" => f(32.0 * lf, 0.0),
        "lin_f32_bcast" => f(100.0, 0.0),
        "lin_f32_scatter" => f(((l * 997) % 65536) as f64, 0.0),
        "lin_f32_out" => f(65536.0 + lf, 0.0),
        "a1d_f32_point_row" => f(lf + 0.5, 0.0),
        "a1d_f32_point_stride8" => f(8.0 * lf + 0.5, 0.0),
        "a1d_f32_linear_row_mid" => f(lf + 1.0, 0.0),
        _ => panic!("probe {name} has no coordinates here: add it"),
    }
}

/// The texture each probe's `texture` column names, as `--texture` describes it.
fn probe_texture(name: &str) -> TextureDesc {
    desc(match name {
        "a_f32" | "s_f32" => "t=array:256x256:float",
        "a_f32_lin" => "t=array:256x256:float,filter=linear",
        "a_f32_border" => "t=array:256x256:float,addr=border",
        "a_f32_wrapn" => "t=array:256x256:float,addr=wrap,normalized",
        "a_f32_mirrorn" => "t=array:256x256:float,addr=mirror,normalized",
        "a_f32_clampn" => "t=array:256x256:float,normalized",
        "a_f32_linwrapn" => "t=array:256x256:float,addr=wrap,filter=linear,normalized",
        "a_tall" => "t=array:64x4096:float",
        "a_f4" => "t=array:64x64:float4",
        "a_u8" => "t=array:256x256:uchar",
        "a_u84" | "s_u84" => "t=array:128x128:uchar4",
        "a_u8_nf" => "t=array:256x256:uchar,filter=linear,read=normalized-float",
        "a3" => "t=array:32x32x32:float",
        "a3_lin" => "t=array:32x32x32:float,filter=linear",
        "al" => "t=array:64x64x8:float",
        "a1" => "t=array:4096:float",
        "a1_lin" => "t=array:4096:float,filter=linear",
        "lin_f32" => "t=linear:65536:float",
        "lin_f4" => "t=linear:16384:float4",
        "pitch_f32" => "t=pitch2d:256x256:float,pitch=1024",
        "pitch_f32_lin" => "t=pitch2d:256x256:float,filter=linear,pitch=1024",
        other => panic!("texture {other} of the probes is not described here"),
    })
}

/// (requests, sectors) warpscope's model gives for one probe's warp.
fn model_probe(probe: &str, kernel: &str, texture: &str, lanes: usize) -> (u64, u64) {
    let t = probe_texture(texture);
    let surface = kernel.starts_with("su");
    let op = if kernel.starts_with("sust") {
        Op::Store
    } else {
        Op::Load
    };
    let mut per_lane = Vec::new();
    let (axes, sampling) = match kernel {
        k if k.starts_with("tex3d") => (3, Sampling::Tex),
        k if k.starts_with("tex1d") => (1, Sampling::Tex),
        "tld4" => (2, Sampling::Gather),
        _ => (2, Sampling::Tex),
    };
    for l in 0..lanes {
        let c = probe_coords(probe, l as i64);
        let fp = if surface {
            let x = c[0] as i64 / t.texel_bytes as i64;
            footprint(&t, Coords::Int([x, c[1] as i64, 0]), 2, None, Sampling::Tex)
        } else if kernel.starts_with("tex1dfetch") {
            footprint(&t, Coords::Int([c[0] as i64, 0, 0]), 1, None, Sampling::Tex)
        } else {
            let (axes, layer, sampling) = match kernel {
                k if k.starts_with("tex1d") => (1, None, Sampling::Tex),
                k if k.starts_with("tex3d") => (3, None, Sampling::Tex),
                k if k.starts_with("texa2d") => (2, Some(c[3] as i64), Sampling::Tex),
                "tld4" => (2, None, Sampling::Gather),
                _ => (2, None, Sampling::Tex),
            };
            footprint(&t, Coords::Float([c[0], c[1], c[2]]), axes, layer, sampling)
        };
        per_lane.push((l, fp));
    }
    let slots = if surface {
        1
    } else {
        slots_per_lane(&t, axes, sampling)
    };
    let reqs = warp_requests(&t, 1 << 40, &per_lane, slots, surface, op);
    let space = if surface {
        Space::Surface
    } else {
        Space::Texture
    };
    assert!(reqs
        .iter()
        .all(|a| a.space == space && a.width == t.texel_bytes));
    assert!(reqs.iter().skip(1).all(|a| a.read_only));
    let arch = crate::arch::lookup("9.0".parse().unwrap()).unwrap();
    let mut total = Cost::default();
    for a in &reqs {
        total.add(&crate::cost::cost(arch, &Default::default(), a));
    }
    assert_eq!(total.executions, u64::from(!reqs.is_empty()));
    (total.requests, total.sectors)
}

/// Every probe of `tests/data/h100/texture-probes.csv` (one warp each, measured on an H100
/// with ncu): the model's requests and sectors equal the measured
/// `l1tex__t_{requests,sectors}_pipe_tex_mem_texture` (surface loads/stores: `..._mem_surface_op_ld/st`).
#[test]
fn model_equals_h100_probes() {
    let text = include_str!("../../../../tests/data/h100/texture/texture-probes.csv");
    let mut lines = text.lines();
    let head: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |n: &str| head.iter().position(|h| *h == n).unwrap();
    let (c_probe, c_kernel, c_tex, c_lanes) =
        (col("probe"), col("kernel"), col("texture"), col("lanes"));
    let mut checked = 0;
    let mut wrong = Vec::new();
    for line in lines {
        let r: Vec<&str> = line.split(',').collect();
        let (probe, kernel) = (r[c_probe], r[c_kernel]);
        if r[col("grid")] != "1" {
            continue; // the example launches: tests/texture.rs
        }
        let (req_col, sec_col) = match kernel {
            k if k.starts_with("suld") => (
                "l1tex__t_requests_pipe_tex_mem_surface_op_ld",
                "l1tex__t_sectors_pipe_tex_mem_surface_op_ld",
            ),
            k if k.starts_with("sust") => (
                "l1tex__t_requests_pipe_tex_mem_surface_op_st",
                "l1tex__t_sectors_pipe_tex_mem_surface_op_st",
            ),
            _ => (
                "l1tex__t_requests_pipe_tex_mem_texture",
                "l1tex__t_sectors_pipe_tex_mem_texture",
            ),
        };
        let measured: (u64, u64) = (
            r[col(req_col)].parse().unwrap(),
            r[col(sec_col)].parse().unwrap(),
        );
        let lanes: usize = r[c_lanes].parse().unwrap();
        let model = model_probe(probe, kernel, r[c_tex], lanes);
        if model != measured {
            wrong.push(format!("{probe}: model {model:?}, H100 {measured:?}"));
        }
        checked += 1;
    }
    assert_eq!(checked, 142, "probe rows");
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn hand_computed_requests() {
    // A warp reading a row of 32 floats of a 2-D array: 8 quads, each 4 texels of one
    // 16 B × 2 sector: 8 requests, 8 sectors. The same row from tex1Dfetch: 4 requests of
    // 8 lanes, 32 contiguous bytes each: 4 sectors.
    assert_eq!(
        model_probe("a2d_f32_point_row", "tex2d_f32", "a_f32", 32),
        (8, 8)
    );
    assert_eq!(
        model_probe("lin_f32_row", "tex1dfetch_f32", "lin_f32", 32),
        (4, 4)
    );
    // A column: 4 rows a quad = 2 sectors: 16.
    assert_eq!(
        model_probe("a2d_f32_point_col", "tex2d_f32", "a_f32", 32),
        (8, 16)
    );
    // Pitch-linear column (pitch 1024 B): a sector per texel, 32.
    assert_eq!(
        model_probe("pitch_f32_point_col", "tex2d_f32", "pitch_f32", 32),
        (8, 32)
    );
}

#[test]
fn texel_at_inverts_texel_offset() {
    // Hand-worked: float (5, 3) in a 1024×1024 array: xb = 20, in its GOB
    // ((3 % 8) / 2) · 64 + ((20 % 32) / 16) · 32 + (3 % 2) · 16 + 20 % 16 = 64 + 32 + 16 + 4.
    let a = desc("t=array:1024x1024:float");
    assert_eq!(texel_offset(&a, [5, 3, 0]), 116);
    assert_eq!(texel_at(&a, 116), Some([5, 3, 0]));
    // Pitch 4096 bytes: (7, 2) at 2 · 4096 + 28.
    let p = desc("t=pitch2d:1000x64:float");
    assert_eq!(texel_at(&p, 2 * 4096 + 28), Some([7, 2, 0]));
    // Past the last row's texels (in the pitch padding) is no texel.
    assert_eq!(texel_at(&p, 4000), None);
    for spec in [
        "t=array:1024x1024:float",
        "t=array:100x37:uchar4",
        "t=array:64x64x20:float4",
        "t=array:300:float",
        "t=linear:4096:float",
        "t=pitch2d:100x50:float2",
    ] {
        let t = desc(spec);
        for x in (0..t.size[0]).step_by(7) {
            for y in (0..t.size[1]).step_by(3) {
                for z in (0..t.size[2]).step_by(5) {
                    let o = texel_offset(&t, [x, y, z]);
                    assert_eq!(texel_at(&t, o), Some([x, y, z]), "{spec} ({x},{y},{z})");
                }
            }
        }
    }
    assert_eq!(sector_texels(&a), (4, 2));
    assert_eq!(sector_texels(&desc("t=array:64x64:float4")), (1, 2));
    assert_eq!(sector_texels(&desc("t=array:300:float")), (4, 1));
    assert_eq!(sector_texels(&p), (8, 1));
}
