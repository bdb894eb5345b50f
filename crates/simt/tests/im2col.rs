//! The im2col mode of `cp.async.bulk.tensor` [PTX ISA §9.7.9.25.5.1, §5.5.4] on small
//! hand-written PTX kernels: a column of pixels of an NHWC tensor, walked through the
//! bounding box of a 3×3, padding-1 convolution, with two of its filter taps as
//! im2colOffsets; and the errors.
//!
//! Values are checked through the address of a global store that uses them as an offset:
//! `out(v)` stores at `p0 + 4096 + 4·v`. The global allocation `p0` holds the u32 words
//! `100 + i`, and the tensor map's tensor starts there.

use warpscope_model::{arch, cost, ComputeCapability, Config, Cost, Op, Space, WarpAccess};
use warpscope_simt::decode::window;
use warpscope_simt::{Alloc, Error, Launch, Program, TensorMap, TensorMapBinding, WarpOrigin};

const BASE: u64 = window::ALLOC_BASE;
const OUT: u64 = 4096;

/// A u32 NHWC tensor of C = 8 channels (32 bytes, one sector, a pixel), W = H = 4, N = 2,
/// packed: element (c, w, h, n) is word c + 8w + 32h + 128n. The bounding box of a 3×3
/// filter with padding 1 (lower corner −1, upper corner 1 − (3 − 1) = −1) runs from −1 to
/// 4 − 1 − 1 = 2 in W and H: 16 pixels an image. A column is 20 pixels of 8 channels.
const MAP: &str = "u32:8x4x4x2:-:im2col:channels=8,pixels=20,lower=-1x-1,upper=-1x-1";

fn try_program(body: &str) -> Result<Program, Error> {
    let text = format!(
        ".version 8.5\n.target sm_90\n.address_size 64\n\
         .shared .align 128 .b8 buf[1024];\n.shared .align 8 .b64 bar0;\n\
         .visible .entry k(.param .u64 p0, .param .align 64 .b8 tmap[128])\n{{\n\
         .reg .b16 %rs<8>;\n.reg .b32 %r<40>;\n.reg .b64 %rd<20>;\n.reg .pred %p<8>;\n\
         ld.param.u64 %rd1, [p0];\nmov.b64 %rd5, tmap;\nmov.u32 %r1, %tid.x;\n\
         mov.u32 %r3, buf;\nmov.u32 %r4, bar0;\n{body}\n}}\n"
    );
    let m = warpscope_ptx::parse(&text).unwrap();
    let e = warpscope_ptx::find_entry(&m, "k").unwrap();
    Program::decode(&m, e)
}

fn launch(map: &str) -> Launch {
    let words: Vec<u8> = (0..1024u32).flat_map(|i| (100 + i).to_le_bytes()).collect();
    Launch {
        block: [32, 1, 1],
        args: vec![BASE.to_le_bytes().to_vec(), vec![0; 128]],
        allocs: vec![(
            Alloc {
                name: "p0".into(),
                base: BASE,
                size: None,
            },
            warpscope_init::Contents::Bytes(words.into()),
        )],
        tensor_maps: vec![TensorMapBinding {
            param: 1,
            map: TensorMap::parse(map).unwrap(),
            base: BASE,
        }],
        max_steps: 1 << 20,
        threads: 1,
        ..Default::default()
    }
}

type Accesses = Vec<(u32, WarpAccess, WarpOrigin)>;

fn run(p: &Program, l: &Launch) -> Result<Accesses, Error> {
    let mut v = Vec::new();
    p.run(l, &mut |s, a, o| v.push((s, *a, o)))?;
    Ok(v)
}

/// The values `out` stored, sorted.
fn outs(v: &Accesses) -> Vec<u64> {
    let mut x: Vec<u64> = v
        .iter()
        .filter(|(_, a, _)| a.space == Space::Global && a.op == Op::Store)
        .flat_map(|(_, a, _)| a.active().map(|(_, addr)| addr).collect::<Vec<_>>())
        .filter(|&addr| addr - BASE >= OUT)
        .map(|addr| (addr - BASE - OUT) / 4)
        .collect();
    x.sort();
    x
}

fn total(v: &Accesses, space: Space, op: Op) -> Cost {
    let h100 = arch::lookup(ComputeCapability::new(9, 0)).unwrap();
    let mut c = Cost::default();
    for (_, a, _) in v.iter().filter(|x| x.1.space == space && x.1.op == op) {
        c.add(&cost(h100, &Config::default(), a));
    }
    c
}

/// Thread 0 loads the column from (c, w, h, n) = (0, −1, −1, 0) with im2colOffsets
/// (`ow`, `oh`) into `buf` (20 rows of 32 bytes, 640 bytes on bar0); every thread t < 20
/// then reads channel 1 of row t (`buf` word 8t + 1): out(value).
fn column(mode: &str, ow: i32, oh: i32) -> String {
    let tensor = if mode == "im2col" {
        "[%rd5, {%r20, %r21, %r22, %r23}, {%rs1, %rs2}]".to_string()
    } else {
        "[%rd5, {%r20, %r21, %r22, %r23}]".to_string()
    };
    format!(
        "setp.ne.u32 %p6, %r1, 0;\n@!%p6 mbarrier.init.shared::cta.b64 [%r4], 1;\nbar.sync 0;\n\
         @%p6 bra WAIT;\nmbarrier.arrive.expect_tx.shared::cta.b64 %rd2, [%r4], 640;\n\
         mov.u32 %r20, 0;\nmov.u32 %r21, -1;\nmov.u32 %r22, -1;\nmov.u32 %r23, 0;\n\
         mov.u16 %rs1, {ow};\nmov.u16 %rs2, {oh};\n\
         cp.async.bulk.tensor.4d.shared::cluster.global.{mode}.mbarrier::complete_tx::bytes [%r3], {tensor}, [%r4];\n\
         WAIT:\nmbarrier.try_wait.parity.shared::cta.b64 %p7, [%r4], 0;\n@!%p7 bra WAIT;\n\
         setp.ge.u32 %p3, %r1, 20;\n@%p3 bra END;\nshl.b32 %r5, %r1, 5;\nadd.u32 %r6, %r3, %r5;\n\
         ld.shared.u32 %r7, [%r6+4];\nmul.wide.u32 %rd8, %r7, 4;\nadd.s64 %rd9, %rd1, %rd8;\n\
         st.global.u32 [%rd9+{OUT}], 0;\nEND:\nret;"
    )
}

/// Channel 1 of pixel (w, h, n) of the tensor, or 0 (the fill) outside it.
fn value(w: i64, h: i64, n: i64) -> u64 {
    if (0..4).contains(&w) && (0..4).contains(&h) && (0..2).contains(&n) {
        (100 + 1 + 8 * w + 32 * h + 128 * n) as u64
    } else {
        0
    }
}

/// The walk: pixel p of the column is (−1 + p mod 4, −1 + p div 4) of image 0 for p < 16,
/// then it wraps into image 1 at the box's first row: (−1 + p − 16, −1) for p = 16…19.
fn walked(p: i64) -> (i64, i64, i64) {
    if p < 16 {
        (-1 + p % 4, -1 + p / 4, 0)
    } else {
        (-1 + p - 16, -1, 1)
    }
}

#[test]
fn the_centre_tap_reads_the_whole_image_and_wraps_into_the_next() {
    // Offsets (1, 1), the filter's centre: pixel p reads (w + 1, h + 1), all inside the
    // tensor — image 0's 16 pixels (bytes 0…511) and image 1's first row (bytes 512…639).
    let v = run(&program(&column("im2col", 1, 1)), &launch(MAP)).unwrap();
    let mut want: Vec<u64> = (0..20)
        .map(|p| {
            let (w, h, n) = walked(p);
            value(w + 1, h + 1, n)
        })
        .collect();
    want.sort();
    assert_eq!(want[..4], [101, 109, 117, 125]);
    assert_eq!(outs(&v), want);
    // Global: 20 pixels × 32 bytes, each one aligned sector (pixel (w, h, n) at byte
    // 32w + 128h + 512n): sectors 0…19. 40 lanes of 16 bytes: two accesses (32 + 8 lanes).
    let g = total(&v, Space::Global, Op::Load);
    assert_eq!((g.executions, g.sectors), (2, 20));
    // Shared: the 640-byte column, 40 chunks, two accesses.
    let s = total(&v, Space::Shared, Op::Store);
    assert_eq!(s.executions, 2);
}

#[test]
fn the_corner_tap_fills_the_padding_and_reads_only_pixels_inside() {
    // Offsets (0, 0), the filter's top-left tap: pixel p reads its walked pixel itself.
    // Inside the tensor: w, h ∈ {0, 1, 2} of image 0 (p = 5, 6, 7, 9, 10, 11, 13, 14, 15);
    // the other 11 (row h = −1, column w = −1, and image 1's row h = −1) are zero-filled.
    let v = run(&program(&column("im2col", 0, 0)), &launch(MAP)).unwrap();
    let mut want: Vec<u64> = (0..20)
        .map(|p| {
            let (w, h, n) = walked(p);
            value(w, h, n)
        })
        .collect();
    want.sort();
    assert_eq!(want.iter().filter(|&&x| x == 0).count(), 11);
    assert_eq!(outs(&v), want);
    // Global, derived by hand: the 9 pixels (w, h) ∈ {0,1,2}² at bytes 32w + 128h are
    // sectors 0, 1, 2, 4, 5, 6, 8, 9, 10 — 9 sectors, 18 lanes of 16 bytes, one access;
    // the filled pixels are not read. Shared: still the whole 640-byte column.
    let g = total(&v, Space::Global, Op::Load);
    assert_eq!((g.executions, g.sectors), (1, 9));
    let lanes: Vec<u64> = v
        .iter()
        .filter(|x| x.1.space == Space::Global && x.1.op == Op::Load)
        .flat_map(|x| x.1.active().map(|(_, a)| a - BASE).collect::<Vec<_>>())
        .collect();
    let mut sectors: Vec<u64> = lanes.iter().map(|a| a / 32).collect();
    sectors.dedup();
    assert_eq!(sectors, [0, 1, 2, 4, 5, 6, 8, 9, 10]);
    assert_eq!(total(&v, Space::Shared, Op::Store).executions, 2);
}

fn program(body: &str) -> Program {
    try_program(body).unwrap()
}

#[test]
fn bad_im2col_maps_and_mismatched_modes_are_clear_errors() {
    let err = |s: &str| TensorMap::parse(s).unwrap_err();
    // 12 f16 channels are 24 bytes.
    let e = err("f16:64x8x8x2:-:im2col:channels=12,pixels=64,lower=-1x-1,upper=-1x-1");
    assert!(e.contains("multiple of 16"), "{e}");
    let e = err("f16:64x8x8x2:-:im2col:channels=64,pixels=2048,lower=-1x-1,upper=-1x-1");
    assert!(e.contains("1 to 1024"), "{e}");
    let e = err("f16:64x8:-:im2col:channels=64,pixels=64");
    assert!(e.contains("3 to 5 dimensions"), "{e}");
    let e = err("f16:64x8x8x2:-:im2col:channels=64,pixels=64,lower=-1");
    assert!(e.contains("2 corners each"), "{e}");
    let e = err("f16:64x8x8x2:-:64x8x8x1:pixels=64");
    assert!(e.contains("im2col map"), "{e}");
    // An im2col instruction through a tiled map, and a tile one through an im2col map.
    let tiled = "u32:8x4x4x2:-:8x4x4x1";
    let e = run(&program(&column("im2col", 1, 1)), &launch(tiled))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains(".im2col cp.async.bulk.tensor through the tiled tensor map"),
        "{e}"
    );
    let e = run(&program(&column("tile", 1, 1)), &launch(MAP))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("tile-mode cp.async.bulk.tensor through the im2col tensor map"),
        "{e}"
    );
    // Offsets that do not match the spatial dimensions.
    let one = column("im2col", 1, 1).replace("{%rs1, %rs2}", "{%rs1}");
    let e = try_program(&one).unwrap_err().to_string();
    assert!(e.contains("one offset per spatial dimension"), "{e}");
}

#[test]
fn a_3d_column_walks_w_then_the_next_image() {
    // NWC: C = 8 u32 channels, W = 6, N = 2 (element (c, w, n) is word c + 8w + 48n). A
    // 3-tap filter with padding 1: box W from −1 to 6 − 1 − 1 = 4 (6 pixels an image). From
    // (0, −1, 0), 8 pixels: w = −1…4 of image 0, then w = −1, 0 of image 1. Offset 2 (the
    // right tap) reads w + 2: 1…5 and 6 (outside: filled) of image 0, 1 and 2 of image 1.
    let body = "setp.ne.u32 %p6, %r1, 0;\n@!%p6 mbarrier.init.shared::cta.b64 [%r4], 1;\nbar.sync 0;\n\
         @%p6 bra WAIT;\nmbarrier.arrive.expect_tx.shared::cta.b64 %rd2, [%r4], 256;\n\
         mov.u32 %r20, 0;\nmov.u32 %r21, -1;\nmov.u32 %r23, 0;\nmov.u16 %rs1, 2;\n\
         cp.async.bulk.tensor.3d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes [%r3], [%rd5, {%r20, %r21, %r23}, {%rs1}], [%r4];\n\
         WAIT:\nmbarrier.try_wait.parity.shared::cta.b64 %p7, [%r4], 0;\n@!%p7 bra WAIT;\n\
         setp.ge.u32 %p3, %r1, 8;\n@%p3 bra END;\nshl.b32 %r5, %r1, 5;\nadd.u32 %r6, %r3, %r5;\n\
         ld.shared.u32 %r7, [%r6+4];\nmul.wide.u32 %rd8, %r7, 4;\nadd.s64 %rd9, %rd1, %rd8;\n\
         st.global.u32 [%rd9+4096], 0;\nEND:\nret;";
    let map = "u32:8x6x2:-:im2col:channels=8,pixels=8,lower=-1,upper=-1";
    let v = run(&program(body), &launch(map)).unwrap();
    let mut want: Vec<u64> = [1, 2, 3, 4, 5]
        .iter()
        .map(|w| 101 + 8 * w)
        .chain([0, 101 + 8 + 48, 101 + 16 + 48])
        .collect();
    want.sort();
    assert_eq!(outs(&v), want);
    // Sectors by hand: image 0's w = 1…5 are sectors 1…5; image 1 starts at byte 192
    // (sector 6), its w = 1, 2 are sectors 7, 8. 7 sectors, 14 lanes, one access.
    let g = total(&v, Space::Global, Op::Load);
    assert_eq!((g.executions, g.sectors), (1, 7));
    let mut sectors: Vec<u64> = v
        .iter()
        .filter(|x| x.1.space == Space::Global && x.1.op == Op::Load)
        .flat_map(|x| {
            x.1.active()
                .map(|(_, a)| (a - BASE) / 32)
                .collect::<Vec<_>>()
        })
        .collect();
    sectors.dedup();
    assert_eq!(sectors, [1, 2, 3, 4, 5, 7, 8]);
}

/// The H100's answer (tests/data/h100/im2col/im2col-probe.txt, scripts/h100/im2col/): the
/// same tensor and map, loaded from six (coords, offsets) pairs; the probe printed channel 1
/// of each of the 20 shared rows in order, as n·1000 + h·100 + w·10 + 1 (0 for a filled row).
/// The coordinates name the first walked pixel in the bounding box, the offsets are added to
/// every pixel read: warpscope's rows equal the H100's, row by row.
#[test]
fn columns_equal_the_h100_row_by_row() {
    let text = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../tests/data/h100/im2col/im2col-probe.txt"),
    )
    .unwrap();
    let mut cases = 0;
    for line in text.lines().filter(|l| l.starts_with("coords")) {
        let num = |key: &str| -> i32 {
            let at = line.find(key).unwrap() + key.len();
            line[at..]
                .split([' ', '('])
                .next()
                .unwrap()
                .parse()
                .unwrap()
        };
        let (w0, h0, n0) = (num("coords w="), num(" h="), num(" n="));
        let rest = &line[line.find("offsets").unwrap()..];
        let off = |key: &str| -> i32 {
            let at = rest.find(key).unwrap() + key.len();
            rest[at..]
                .split([' ', '('])
                .next()
                .unwrap()
                .parse()
                .unwrap()
        };
        let (ow, oh) = (off("w="), off("h="));
        let measured: Vec<u64> = line[line.find("):").unwrap() + 2..]
            .split_whitespace()
            .map(|v| {
                let v: u64 = v.parse().unwrap();
                if v == 0 {
                    0
                } else {
                    let (n, h, w) = (v / 1000, v / 100 % 10, v / 10 % 10);
                    101 + 8 * w + 32 * h + 128 * n
                }
            })
            .collect();
        assert_eq!(measured.len(), 20);
        // Thread t stores at OUT + 4·(2048·t + value): the row order survives the sort.
        let body = column("im2col", ow, oh)
            .replace("mov.u32 %r21, -1;", &format!("mov.u32 %r21, {w0};"))
            .replace("mov.u32 %r22, -1;", &format!("mov.u32 %r22, {h0};"))
            .replace("mov.u32 %r23, 0;", &format!("mov.u32 %r23, {n0};"))
            .replace(
                "mul.wide.u32 %rd8, %r7, 4;",
                "shl.b32 %r8, %r1, 11;\nadd.u32 %r7, %r7, %r8;\nmul.wide.u32 %rd8, %r7, 4;",
            );
        let p = try_program(&body).unwrap();
        let v = run(&p, &launch(MAP)).unwrap();
        let mut ours = vec![u64::MAX; 20];
        for x in outs(&v) {
            ours[(x / 2048) as usize] = x % 2048;
        }
        assert_eq!(ours, measured, "{line}");
        cases += 1;
    }
    assert_eq!(cases, 6);
}
