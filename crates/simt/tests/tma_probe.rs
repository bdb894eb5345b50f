//! The TMA's global reads of one 64 × 64 fp16 box against the H100
//! (`tests/data/h100/prefetch/probe-ncu.csv`, made by `scripts/h100/prefetch/probe.sh`): for
//! each of the 16 cases of `scripts/h100/prefetch/tma_probe.cu` (rows misaligned, straddling
//! 128-byte lines, partly or wholly outside the tensor, negative coordinates) the load's
//! global sectors equal the H100's `l1tex__m_xbar2l1tex_read_sectors_mem_global_op_tma_ld`
//! and the prefetch's equal its `lts__t_sectors_srcunit_tex` (the L2 sectors the SM asked
//! for; a prefetch has no counter of its own).

use warpscope_model::{arch, cost, ComputeCapability, Config, Op, Space};
use warpscope_simt::decode::window;
use warpscope_simt::{Alloc, Launch, Program, TensorMap, TensorMapBinding};

const BASE: u64 = window::ALLOC_BASE;

const PTX: &str = ".version 8.5\n.target sm_90a\n.address_size 64\n\
    .shared .align 128 .b8 tile[8192];\n.shared .align 8 .b64 bar;\n\
    .visible .entry k(.param .u64 p0, .param .align 64 .b8 tmap[128], .param .u32 px, .param .u32 py)\n{\n\
    .reg .b32 %r<30>;\n.reg .b64 %rd<10>;\n.reg .pred %p<8>;\n\
    mov.b64 %rd5, tmap;\nld.param.u32 %r20, [px];\nld.param.u32 %r21, [py];\n\
    mov.u32 %r3, tile;\nmov.u32 %r4, bar;\nmov.u32 %r1, %tid.x;\nsetp.ne.u32 %p6, %r1, 0;\n\
    @!%p6 mbarrier.init.shared::cta.b64 [%r4], 1;\nbar.sync 0;\n\
    @!%p6 mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r4], 8192;\n\
    @!%p6 cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%r3], [%rd5, {%r20, %r21}], [%r4];\n\
    W:\nmbarrier.try_wait.parity.shared::cta.b64 %p7, [%r4], 0;\n@!%p7 bra W;\n\
    @!%p6 cp.async.bulk.prefetch.tensor.2d.L2.global.tile [%rd5, {%r20, %r21}];\nret;\n}\n";

/// (name, W, H, pitch, offset of the tensor's first byte, x, y), as tma_probe.cu's CASES.
const CASES: [(&str, u64, u64, u64, u64, i32, i32); 16] = [
    ("aligned", 64, 64, 128, 0, 0, 0),
    ("pitch144", 64, 64, 144, 0, 0, 0),
    ("off16", 64, 64, 128, 16, 0, 0),
    ("off32", 64, 64, 128, 32, 0, 0),
    ("off64", 64, 64, 128, 64, 0, 0),
    ("inner56", 56, 64, 128, 0, 0, 0),
    ("inner56_off16", 56, 64, 128, 16, 0, 0),
    ("inner8", 8, 64, 128, 0, 0, 0),
    ("outer8", 64, 8, 128, 0, 0, 0),
    ("outer8_pitch144", 64, 8, 144, 0, 0, 0),
    ("t120x200_box00", 120, 200, 240, 0, 0, 0),
    ("t120x200_box10", 120, 200, 240, 0, 64, 0),
    ("t120x200_box03", 120, 200, 240, 0, 0, 192),
    ("t120x200_box13", 120, 200, 240, 0, 64, 192),
    ("x_neg16", 64, 64, 128, 0, -16, 0),
    ("y_neg8", 64, 64, 128, 0, 0, -8),
];

/// The CSV's values by launch ID: metric → value.
fn measured() -> Vec<std::collections::BTreeMap<String, u64>> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/data/h100/prefetch/probe-ncu.csv"
    );
    let text = std::fs::read_to_string(path).unwrap();
    let mut rows = text.lines();
    let head: Vec<String> = split(rows.next().unwrap());
    let col = |n: &str| head.iter().position(|h| h == n).unwrap();
    let (id, metric, value) = (col("ID"), col("Metric Name"), col("Metric Value"));
    let mut out: Vec<std::collections::BTreeMap<String, u64>> = Vec::new();
    for line in rows {
        let f = split(line);
        let k: usize = f[id].parse().unwrap();
        if out.len() <= k {
            out.resize(k + 1, Default::default());
        }
        out[k].insert(
            f[metric].clone(),
            f[value].replace(',', "").parse().unwrap(),
        );
    }
    out
}

/// A line of ncu's CSV: every field quoted, commas inside quotes kept.
fn split(line: &str) -> Vec<String> {
    line.trim_matches('"')
        .split("\",\"")
        .map(|s| s.to_string())
        .collect()
}

#[test]
fn tma_box_reads_equal_the_h100_case_by_case() {
    let m = warpscope_ptx::parse(PTX).unwrap();
    let p = Program::decode(&m, warpscope_ptx::find_entry(&m, "k").unwrap()).unwrap();
    let h100 = arch::lookup(ComputeCapability::new(9, 0)).unwrap();
    let ncu = measured();
    assert_eq!(ncu.len(), 2 * CASES.len());
    let mut table = Vec::new();
    for (k, &(name, w, h, pitch, off, x, y)) in CASES.iter().enumerate() {
        let launch = Launch {
            args: vec![
                BASE.to_le_bytes().to_vec(),
                vec![0; 128],
                x.to_le_bytes().to_vec(),
                y.to_le_bytes().to_vec(),
            ],
            allocs: vec![(
                Alloc {
                    name: "p0".into(),
                    base: BASE,
                    size: None,
                },
                warpscope_init::Contents::Zero,
            )],
            tensor_maps: vec![TensorMapBinding {
                param: 1,
                map: TensorMap::parse(&format!("u16:{w}x{h}:{pitch}:64x64")).unwrap(),
                base: BASE + off,
            }],
            threads: 1,
            ..Default::default()
        };
        let (mut load, mut prefetch) = (0, 0);
        p.run(&launch, &mut |_, a, _| {
            if a.space == Space::Global {
                let s = cost(h100, &Config::default(), a).sectors;
                match a.op {
                    Op::Load => load += s,
                    Op::Prefetch => prefetch += s,
                    _ => {}
                }
            }
        })
        .unwrap();
        let want = (
            ncu[2 * k]["l1tex__m_xbar2l1tex_read_sectors_mem_global_op_tma_ld.sum"],
            ncu[2 * k + 1]["lts__t_sectors_srcunit_tex.sum"],
        );
        table.push((name, (load, prefetch), want));
    }
    let wrong: Vec<_> = table
        .iter()
        .filter(|(_, ours, h100)| ours != h100)
        .collect();
    assert!(wrong.is_empty(), "(case, ours, H100): {wrong:?}");
    // The rules the cases show, by hand: a 16-byte misaligned row reads 5 sectors (off16:
    // 320); a row of 56 elements (112 bytes) reads its 4 sectors inside and 1 of its own
    // for the 16 bytes outside (inner56: 320); a row outside the tensor 4 (outer8: 8 × 4 +
    // 56 × 4 = 256; with a 144-byte pitch the 4 odd rows inside read 5: 260).
    let get = |n: &str| table.iter().find(|t| t.0 == n).unwrap().1 .0;
    assert_eq!(
        (
            get("off16"),
            get("inner56"),
            get("outer8"),
            get("outer8_pitch144")
        ),
        (320, 320, 256, 260)
    );
}

/// `cp.async.bulk.prefetch.L2` against the H100 (`prefetch-ncu.csv`, launches 0 and 1 of
/// `scripts/h100/prefetch/prefetch_driver.cu`): 8 blocks each prefetch 4,096 bytes, from a
/// 256-byte aligned buffer (1,024 sectors of `lts__t_sectors_srcunit_tex`) and from 16 bytes
/// past it (129 sectors each, the neighbours' shared sectors counted by both: 1,032).
#[test]
fn bulk_prefetch_sectors_equal_the_h100() {
    let ptx = ".version 8.5\n.target sm_90a\n.address_size 64\n\
        .visible .entry k(.param .u64 p0)\n{\n.reg .b32 %r<8>;\n.reg .b64 %rd<8>;\n.reg .pred %p<2>;\n\
        ld.param.u64 %rd1, [p0];\nmov.u32 %r1, %ctaid.x;\nmul.wide.u32 %rd2, %r1, 4096;\n\
        add.s64 %rd3, %rd1, %rd2;\nmov.u32 %r2, %tid.x;\nsetp.ne.u32 %p1, %r2, 0;\n\
        @!%p1 cp.async.bulk.prefetch.L2.global [%rd3], 4096;\nret;\n}\n";
    let m = warpscope_ptx::parse(ptx).unwrap();
    let p = Program::decode(&m, warpscope_ptx::find_entry(&m, "k").unwrap()).unwrap();
    let h100 = arch::lookup(ComputeCapability::new(9, 0)).unwrap();
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/data/h100/prefetch/prefetch-ncu.csv"
    );
    let text = std::fs::read_to_string(path).unwrap();
    let l2 = |id: &str| -> u64 {
        text.lines()
            .map(split)
            .find(|f| f[0] == id && f[12] == "lts__t_sectors_srcunit_tex.sum")
            .map(|f| f[14].replace(',', "").parse().unwrap())
            .unwrap()
    };
    for (off, id) in [(0u64, "0"), (16, "1")] {
        let launch = Launch {
            grid: [8, 1, 1],
            args: vec![(BASE + off).to_le_bytes().to_vec()],
            allocs: vec![(
                Alloc {
                    name: "p0".into(),
                    base: BASE,
                    size: Some(65536),
                },
                warpscope_init::Contents::Zero,
            )],
            threads: 1,
            ..Default::default()
        };
        let mut sectors = 0;
        p.run(&launch, &mut |_, a, _| {
            assert_eq!(a.op, Op::Prefetch);
            sectors += cost(h100, &Config::default(), a).sectors;
        })
        .unwrap();
        assert_eq!((off, sectors), (off, l2(id)));
    }
    assert_eq!((l2("0"), l2("1")), (1024, 1032));
}
