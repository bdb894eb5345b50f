//! Hopper's bulk and asynchronous memory paths on small hand-written PTX kernels:
//! `cp.async.bulk` multicast and shared::cta → shared::cluster, `cp.reduce.async.bulk` into
//! global and into another block's shared memory, `st.async` / `red.async`, the tensor
//! multicast and tensor reduction, the L2 prefetches (their own global rows), and the errors.
//!
//! Values are checked through the address of a global store that uses them as an offset:
//! `out(v)` stores at `p0 + 4096 + 4·v` (which also makes the executor keep memory values).
//! The global allocation `p0` holds the u32 words `100 + i`.

use warpscope_model::{arch, cost, ComputeCapability, Config, Cost, Op, Space, WarpAccess};
use warpscope_simt::decode::window;
use warpscope_simt::{Alloc, Error, Launch, Program, TensorMap, TensorMapBinding, WarpOrigin};

const BASE: u64 = window::ALLOC_BASE;
const OUT: u64 = 4096;

const SHARED: &str = ".shared .align 128 .b8 buf[1024];\n.shared .align 8 .b64 bar0;";

fn try_program(body: &str) -> Result<Program, Error> {
    let text = format!(
        ".version 8.5\n.target sm_90\n.address_size 64\n{SHARED}\n\
         .visible .entry k(.param .u64 p0, .param .align 64 .b8 tmap[128])\n{{\n\
         .reg .b16 %rs<8>;\n.reg .b32 %r<40>;\n.reg .b64 %rd<20>;\n.reg .pred %p<8>;\n\
         ld.param.u64 %rd1, [p0];\nmov.b64 %rd5, tmap;\nmov.u32 %r1, %tid.x;\n\
         mov.u32 %r2, %cluster_ctarank;\nmov.u32 %r3, buf;\nmov.u32 %r4, bar0;\n{body}\n}}\n"
    );
    let m = warpscope_ptx::parse(&text).unwrap();
    let e = warpscope_ptx::find_entry(&m, "k").unwrap();
    Program::decode(&m, e)
}

fn program(body: &str) -> Program {
    try_program(body).unwrap()
}

/// `out(reg)`: a global store at `p0 + 4096 + 4·reg`.
fn out(reg: &str) -> String {
    format!(
        "mul.wide.u32 %rd8, {reg}, 4;\nadd.s64 %rd9, %rd1, %rd8;\nst.global.u32 [%rd9+{OUT}], 0;\n"
    )
}

/// Waits for phase 0 of the block's own mbarrier `bar0`.
const WAIT: &str =
    "WAIT:\nmbarrier.try_wait.parity.shared::cta.b64 %p7, [%r4], 0;\n@!%p7 bra WAIT;\n";

/// Thread 0 initializes `bar0` for one arrival; then the whole cluster synchronizes, so
/// that no block's copy reaches a barrier before it is initialized.
const INIT: &str = "setp.ne.u32 %p6, %r1, 0;\n@!%p6 mbarrier.init.shared::cta.b64 [%r4], 1;\n\
    barrier.cluster.arrive.aligned;\nbarrier.cluster.wait.aligned;\n";

fn launch(grid: u32, block: u32, cluster: u32, map: Option<&str>) -> Launch {
    let words: Vec<u8> = (0..1024u32).flat_map(|i| (100 + i).to_le_bytes()).collect();
    Launch {
        grid: [grid, 1, 1],
        block: [block, 1, 1],
        cluster: [cluster, 1, 1],
        explicit_cluster: cluster != 1,
        args: vec![BASE.to_le_bytes().to_vec(), vec![0; 128]],
        allocs: vec![(
            Alloc {
                name: "p0".into(),
                base: BASE,
                size: None,
            },
            warpscope_init::Contents::Bytes(words.into()),
        )],
        tensor_maps: map
            .map(|m| TensorMapBinding {
                param: 1,
                map: TensorMap::parse(m).unwrap(),
                base: BASE,
            })
            .into_iter()
            .collect(),
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

/// The values `out` stored, by block (x), sorted.
fn outs(v: &Accesses) -> Vec<(u32, Vec<u64>)> {
    let mut m = std::collections::BTreeMap::<u32, Vec<u64>>::new();
    for (_, a, o) in v {
        if a.space == Space::Global && a.op == Op::Store {
            for (_, addr) in a.active() {
                if addr - BASE >= OUT {
                    m.entry(o.block[0])
                        .or_default()
                        .push((addr - BASE - OUT) / 4);
                }
            }
        }
    }
    m.into_iter()
        .map(|(b, mut x)| {
            x.sort();
            (b, x)
        })
        .collect()
}

fn h100() -> &'static warpscope_model::Arch {
    arch::lookup(ComputeCapability::new(9, 0)).unwrap()
}

/// The summed cost of the accesses of `space` and `op`.
fn total(v: &Accesses, space: Space, op: Op) -> Cost {
    let mut c = Cost::default();
    for (_, a, _) in v.iter().filter(|x| x.1.space == space && x.1.op == op) {
        c.add(&cost(h100(), &Config::default(), a));
    }
    c
}

#[test]
fn multicast_bulk_copy_lands_in_every_block_of_the_mask() {
    // Clusters of 4, one thread a block. Rank 0 multicasts p0's first 64 bytes into `buf` of
    // ranks 0, 1 and 3 (ctaMask 0b1011); ranks 0, 1, 3 expect 64 bytes on their bar0 and
    // wait; rank 2 waits for nothing. Every block then reads word 5 of its buf: 105 where
    // the copy landed, 0 in rank 2: out(4·word + rank).
    let body = format!(
        "{INIT}setp.eq.u32 %p1, %r2, 2;\n@%p1 bra READ;\n\
         mbarrier.arrive.expect_tx.shared::cta.b64 %rd2, [%r4], 64;\n\
         setp.ne.u32 %p2, %r2, 0;\n@%p2 bra WAIT;\nmov.u16 %rs1, 11;\n\
         cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [%r3], [%rd1], 64, [%r4], %rs1;\n\
         {WAIT}READ:\nld.shared.u32 %r5, [%r3+20];\nmad.lo.u32 %r6, %r5, 4, %r2;\n{}ret;",
        out("%r6")
    );
    let p = program(&body);
    let v = run(&p, &launch(4, 1, 4, None)).unwrap();
    assert_eq!(
        outs(&v),
        vec![(0, vec![420]), (1, vec![421]), (2, vec![2]), (3, vec![423])]
    );
    // Reported by rank 0's warp, per destination block (as an H100 counts a multicast: the
    // TMA load sectors once per destination SM, no DSMEM traffic; tests/data/h100/bulk/):
    // the global side (4 lanes of 16 bytes: 64 bytes, 2 sectors) and a shared store of the
    // same 4 lanes at offset 0 of that block (lane l at 16·l), for ranks 0, 1 and 3.
    let g = total(&v, Space::Global, Op::Load);
    assert_eq!((g.executions, g.requests, g.sectors), (3, 3, 6));
    assert!(v.iter().all(|x| x.1.space != Space::DistributedShared));
    let st: Vec<_> = v
        .iter()
        .filter(|x| x.1.space == Space::Shared && x.1.op == Op::Store)
        .collect();
    assert_eq!(st.len(), 3);
    assert!(st
        .iter()
        .all(|x| x.1.mask == 0xF && x.1.width == 16 && x.1.addrs[3] == 48 && x.2.block[0] == 0));
    // 64 contiguous bytes a row: 1 request, 1 wavefront (of 128 bytes), three times.
    let c = total(&v, Space::Shared, Op::Store);
    assert_eq!((c.requests, c.wavefronts), (3, 3));
}

#[test]
fn bulk_copy_from_own_shared_memory_into_the_neighbours() {
    // Clusters of 2, 16 threads. Rank 0's thread t writes 7t + 1 at buf[4t]; rank 0's thread
    // 0 copies those 64 bytes into rank 1's buf + 128 (mapa), completing on rank 1's bar0,
    // which rank 1 expects 64 bytes on. Rank 1's thread t reads buf[128 + 4t] = 7t + 1:
    // out(2·(7t + 1) + 1) = 14t + 3.
    let body = format!(
        "mad.lo.u32 %r5, %r1, 7, 1;\nshl.b32 %r6, %r1, 2;\nadd.u32 %r7, %r3, %r6;\n\
         st.shared.u32 [%r7], %r5;\n{INIT}\
         setp.eq.u32 %p1, %r2, 1;\n@%p1 bra RECV;\n@%p6 bra END;\n\
         add.u32 %r8, %r3, 128;\nmapa.shared::cluster.u32 %r9, %r8, 1;\nmapa.shared::cluster.u32 %r10, %r4, 1;\n\
         cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes [%r9], [%r3], 64, [%r10];\n\
         bra END;\n\
         RECV:\n@!%p6 mbarrier.arrive.expect_tx.shared::cta.b64 %rd2, [%r4], 64;\n{WAIT}\
         ld.shared.u32 %r11, [%r7+128];\nmad.lo.u32 %r12, %r11, 2, 1;\n{}END:\nret;",
        out("%r12")
    );
    let p = program(&body);
    let v = run(&p, &launch(2, 16, 2, None)).unwrap();
    assert_eq!(outs(&v), vec![(1, (0..16).map(|t| 14 * t + 3).collect())]);
    // The source: rank 0's own shared memory (4 lanes of 16 bytes); the destination: rank
    // 1's, at 128 + 16·l.
    let d: Vec<_> = v
        .iter()
        .filter(|x| x.1.space == Space::DistributedShared)
        .collect();
    assert_eq!(d.len(), 1);
    assert_eq!(
        (d[0].1.op, d[0].1.mask, d[0].1.addrs[1]),
        (Op::Store, 0xF, 144)
    );
    assert_eq!(d[0].2.block[0], 0);
    let s = v
        .iter()
        .filter(|x| x.1.space == Space::Shared && x.1.width == 16)
        .count();
    assert_eq!(s, 1);
}

#[test]
fn bulk_reductions_compute_into_global_and_into_the_neighbour() {
    // Clusters of 2, 8 threads. Thread t of rank r writes 10t + r at buf[4t]. Rank 0's thread
    // 0 adds its 32 bytes into p0's first 8 words (100 + t → 100 + 11t) and, with .add.u32,
    // into rank 1's buf (10t + 1 → 20t + 1), completing 32 bytes on rank 1's bar0.
    // Rank 0's thread t then reads p0[t]: out(2·(100 + 11t)) = 200 + 22t; rank 1's reads its
    // buf[4t]: out(2·(20t + 1) + 1) = 40t + 3.
    let body = format!(
        "mad.lo.u32 %r5, %r1, 10, %r2;\nshl.b32 %r6, %r1, 2;\nadd.u32 %r7, %r3, %r6;\n\
         st.shared.u32 [%r7], %r5;\n{INIT}\
         setp.eq.u32 %p1, %r2, 1;\n@%p1 bra RECV;\n@%p6 bra READ;\n\
         cp.reduce.async.bulk.global.shared::cta.bulk_group.add.u32 [%rd1], [%r3], 32;\n\
         mapa.shared::cluster.u32 %r9, %r3, 1;\nmapa.shared::cluster.u32 %r10, %r4, 1;\n\
         cp.reduce.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes.add.u32 [%r9], [%r3], 32, [%r10];\n\
         cp.async.bulk.commit_group;\ncp.async.bulk.wait_group 0;\n\
         READ:\nbar.sync 0;\nmul.wide.u32 %rd10, %r1, 4;\nadd.s64 %rd11, %rd1, %rd10;\n\
         ld.global.u32 %r11, [%rd11];\nshl.b32 %r12, %r11, 1;\n{}bra END;\n\
         RECV:\n@!%p6 mbarrier.arrive.expect_tx.shared::cta.b64 %rd2, [%r4], 32;\n{WAIT}\
         ld.shared.u32 %r13, [%r7];\nmad.lo.u32 %r14, %r13, 2, 1;\n{}END:\nret;",
        out("%r12"),
        out("%r14")
    );
    let p = program(&body);
    let v = run(&p, &launch(2, 8, 2, None)).unwrap();
    assert_eq!(
        outs(&v),
        vec![
            (0, (0..8).map(|t| 200 + 22 * t).collect()),
            (1, (0..8).map(|t| 40 * t + 3).collect())
        ]
    );
    // The global reduction: 2 lanes of 16 bytes, one 32-byte sector, an atomic row; the
    // DSMEM one likewise; each reads 32 bytes of rank 0's shared memory.
    let g = total(&v, Space::Global, Op::Atomic);
    assert_eq!((g.executions, g.requests, g.sectors), (1, 1, 1));
    let d = total(&v, Space::DistributedShared, Op::Atomic);
    assert_eq!((d.executions, d.requests, d.sectors), (1, 1, 1));
    let reads = v
        .iter()
        .filter(|x| x.1.space == Space::Shared && x.1.op == Op::Load && x.1.width == 16)
        .count();
    assert_eq!(reads, 2);
}

#[test]
fn st_async_and_red_async_write_the_neighbour_and_complete_its_barrier() {
    // Clusters of 2, 32 threads. Thread t of each rank stores {t, 1000 + t} (st.async.v2.b32)
    // at buf[8t] of the neighbour and adds t + 1 (red.async.add.u32) to the neighbour's
    // buf[512], completing 8 + 4 bytes a thread on the neighbour's bar0, which expects
    // 32 × 12 = 384 bytes. After the wait, thread t reads buf[8t + 4] = 1000 + t and
    // buf[512] = 1 + 2 + … + 32 = 528: out(2·(1528 + t) + rank).
    let body = format!(
        "{INIT}xor.b32 %r7, %r2, 1;\nmapa.shared::cluster.u32 %r8, %r3, %r7;\n\
         mapa.shared::cluster.u32 %r9, %r4, %r7;\n\
         @!%p6 mbarrier.arrive.expect_tx.shared::cta.b64 %rd2, [%r4], 384;\n\
         shl.b32 %r10, %r1, 3;\nadd.u32 %r11, %r8, %r10;\nadd.u32 %r12, %r1, 1000;\n\
         st.async.shared::cluster.mbarrier::complete_tx::bytes.v2.b32 [%r11], {{%r1, %r12}}, [%r9];\n\
         add.u32 %r13, %r1, 1;\n\
         red.async.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes.add.u32 [%r8+512], %r13, [%r9];\n\
         {WAIT}add.u32 %r14, %r3, %r10;\nld.shared.u32 %r15, [%r14+4];\nld.shared.u32 %r16, [%r3+512];\n\
         add.u32 %r17, %r15, %r16;\nmad.lo.u32 %r18, %r17, 2, %r2;\n{}\
         barrier.cluster.arrive.aligned;\nbarrier.cluster.wait.aligned;\nret;",
        out("%r18")
    );
    let p = program(&body);
    let v = run(&p, &launch(2, 32, 2, None)).unwrap();
    assert_eq!(
        outs(&v),
        vec![
            (0, (0..32).map(|t| 2 * (1528 + t)).collect()),
            (1, (0..32).map(|t| 2 * (1528 + t) + 1).collect())
        ]
    );
    // st.async: one DSMEM store row a block, 32 lanes × 8 contiguous bytes = 256 bytes:
    // 1 request, 8 sectors, 1 wavefront (2 lines of 128 bytes; 4 lines a wavefront, as
    // measured on H100, tests/data/h100/dsmem/).
    let s = total(&v, Space::DistributedShared, Op::Store);
    assert_eq!(
        (s.executions, s.requests, s.sectors, s.wavefronts),
        (2, 2, 16, 2)
    );
    // red.async: one DSMEM atomic row a block, every lane at the same word: 1 request,
    // 32 sectors and 32 wavefronts (one a lane: measured on H100, tests/data/h100/bulk/).
    let r = total(&v, Space::DistributedShared, Op::Atomic);
    assert_eq!(
        (r.executions, r.requests, r.sectors, r.wavefronts),
        (2, 2, 64, 64)
    );
}

#[test]
fn tensor_multicast_lands_the_box_in_both_blocks() {
    // A 1-d u32 tensor of 64 elements (p0's words 100 + i), boxes of 16. Rank 0 multicasts
    // the box at x = 8 (words 108…123, 64 bytes) into both blocks' buf (ctaMask 0b11); each
    // expects 64 bytes on its bar0. buf[8] (element 2) = 110 in both: out(2·110 + rank).
    let body = format!(
        "{INIT}mbarrier.arrive.expect_tx.shared::cta.b64 %rd2, [%r4], 64;\n\
         setp.ne.u32 %p2, %r2, 0;\n@%p2 bra WAIT;\nmov.u16 %rs1, 3;\nmov.u32 %r20, 8;\n\
         cp.async.bulk.tensor.1d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster [%r3], [%rd5, {{%r20}}], [%r4], %rs1;\n\
         {WAIT}ld.shared.u32 %r5, [%r3+8];\nmad.lo.u32 %r6, %r5, 2, %r2;\n{}ret;",
        out("%r6")
    );
    let p = program(&body);
    let v = run(&p, &launch(2, 1, 2, Some("u32:64:-:16"))).unwrap();
    assert_eq!(outs(&v), vec![(0, vec![220]), (1, vec![221])]);
    // Per destination block (as the bulk multicast): the global side, 4 lanes of 16 bytes
    // from element 8 (byte 32), and a shared store of bytes 0…63 of that block's buf.
    let g: Vec<_> = v
        .iter()
        .filter(|x| x.1.space == Space::Global && x.1.op == Op::Load)
        .collect();
    assert_eq!(g.len(), 2);
    assert!(g
        .iter()
        .all(|x| (x.1.mask, x.1.addrs[0] - BASE) == (0xF, 32)));
    assert!(v.iter().all(|x| x.1.space != Space::DistributedShared));
    let s = total(&v, Space::Shared, Op::Store);
    assert_eq!((s.executions, s.wavefronts), (2, 2));
}

#[test]
fn tensor_reduction_adds_the_box_into_the_tensor() {
    // One block of 16 threads: tile[t] = 1000t; thread 0 adds the box into x = 8…23 of the
    // tensor (108 + t → 108 + 1001t); thread t then reads element 8 + t: out(108 + 1001t).
    let body = format!(
        "mul.lo.u32 %r5, %r1, 1000;\nshl.b32 %r6, %r1, 2;\nadd.u32 %r7, %r3, %r6;\n\
         st.shared.u32 [%r7], %r5;\nbar.sync 0;\nsetp.ne.u32 %p1, %r1, 0;\n@%p1 bra READ;\n\
         mov.u32 %r20, 8;\n\
         cp.reduce.async.bulk.tensor.1d.global.shared::cta.add.tile.bulk_group [%rd5, {{%r20}}], [%r3];\n\
         cp.async.bulk.commit_group;\ncp.async.bulk.wait_group 0;\n\
         READ:\nbar.sync 0;\nmul.wide.u32 %rd10, %r1, 4;\nadd.s64 %rd11, %rd1, %rd10;\n\
         ld.global.u32 %r11, [%rd11+32];\n{}ret;",
        out("%r11")
    );
    let p = program(&body);
    let v = run(&p, &launch(1, 16, 1, Some("u32:64:-:16"))).unwrap();
    assert_eq!(
        outs(&v),
        vec![(0, (0..16).map(|t| 108 + 1001 * t).collect())]
    );
    // The global reduction: 64 bytes from element 8 (bytes 32…95: sectors 1 and 2), one
    // atomic row of 4 lanes of 16 bytes.
    let g = total(&v, Space::Global, Op::Atomic);
    assert_eq!((g.executions, g.requests, g.sectors), (1, 1, 2));
    // An operation the ISA does not define for the map's type is an error at run time.
    let bad = body.replace(".add.tile", ".inc.tile");
    let e = run(&program(&bad), &launch(1, 16, 1, Some("f32:64:-:16")))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("cp.reduce.async.bulk.tensor .inc on a tensor map of f32"),
        "{e}"
    );
}

#[test]
fn l2_prefetches_are_global_rows_of_their_own() {
    // Thread 0 prefetches 256 bytes of p0 (8 sectors, 16 lanes of 16 bytes), a 16-element
    // box of u32 at element 8 (64 bytes from byte 32: 2 sectors), and one at element 56,
    // half past the 64-element tensor: its 32 bytes inside (1 sector) and its 32 bytes
    // outside (1 sector of its own, as the H100 counts a tensor prefetch's or load's
    // out-of-bounds part: tests/data/h100/prefetch/). Nothing reaches shared memory.
    let body = "setp.ne.u32 %p1, %r1, 0;\n@%p1 bra END;\nmov.u32 %r20, 8;\nmov.u32 %r21, 56;\n\
        cp.async.bulk.prefetch.L2.global [%rd1], 256;\n\
        cp.async.bulk.prefetch.tensor.1d.L2.global.tile [%rd5, {%r20}];\n\
        cp.async.bulk.prefetch.tensor.1d.L2.global.tile [%rd5, {%r21}];\nEND:\nret;";
    let p = program(body);
    let v = run(&p, &launch(1, 32, 1, Some("u32:64:-:16"))).unwrap();
    assert!(v
        .iter()
        .all(|x| x.1.space == Space::Global && x.1.op == Op::Prefetch && x.1.width == 16));
    let per_site: Vec<(u32, u32, Cost)> = [0u32, 1, 2]
        .iter()
        .map(|&k| {
            let s = v
                .iter()
                .map(|x| x.0)
                .collect::<std::collections::BTreeSet<_>>();
            let site = *s.iter().nth(k as usize).unwrap();
            let mut c = Cost::default();
            let mut lanes = 0;
            for (_, a, _) in v.iter().filter(|x| x.0 == site) {
                c.add(&cost(h100(), &Config::default(), a));
                lanes += a.mask.count_ones();
            }
            (site, lanes, c)
        })
        .collect();
    assert_eq!(
        per_site
            .iter()
            .map(|(_, l, c)| (*l, c.requests, c.sectors))
            .collect::<Vec<_>>(),
        vec![(16, 1, 8), (4, 1, 2), (4, 1, 2)]
    );
    // The box's outside half is no address of the tensor (the fill window).
    let last = v.iter().find(|x| x.0 == per_site[2].0).unwrap();
    assert_eq!(last.1.addrs[0], BASE + 224);
    assert!(warpscope_model::is_tma_fill(last.1.addrs[2]));
    // A size that is no multiple of 16.
    let e = run(
        &program(&body.replace("[%rd1], 256", "[%rd1], 250")),
        &launch(1, 32, 1, Some("u32:64:-:16")),
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("multiples of 16"), "{e}");
}

#[test]
fn bad_bulk_input_is_a_clear_error() {
    // A ctaMask naming rank 2 of a cluster of 2.
    let multicast = |mask: u32, size: u32| {
        format!(
            "setp.ne.u32 %p1, %r1, 0;\n@%p1 bra END;\nmov.u16 %rs1, {mask};\n\
             cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [%r3], [%rd1], {size}, [%r4], %rs1;\nEND:\nret;"
        )
    };
    let e = run(&program(&multicast(5, 64)), &launch(2, 1, 2, None))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains(
            "ctaMask 0x0005, whose bit 2 names cluster rank 2, but the cluster has 2 block(s)"
        ),
        "{e}"
    );
    // Multicast without a cluster.
    let e = run(&program(&multicast(1, 64)), &launch(1, 1, 1, None))
        .unwrap_err()
        .to_string();
    assert!(e.contains("the launch has no thread-block cluster"), "{e}");
    // A size that is not a multiple of 16.
    let e = run(&program(&multicast(3, 24)), &launch(2, 1, 2, None))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("cp.async.bulk of 24 bytes") && e.contains("multiples of 16"),
        "{e}"
    );
    // Reductions the ISA does not define: decode errors naming the instruction.
    for (instr, want) in [
        (
            "cp.reduce.async.bulk.global.shared::cta.bulk_group.and.f32 [%rd1], [%r3], 32;",
            ".and.f32 is not a reduction the PTX ISA defines for cp.reduce.async.bulk (into global memory)",
        ),
        (
            "cp.reduce.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes.add.f32 [%r3], [%r3], 32, [%r4];",
            ".add.f32 is not a reduction the PTX ISA defines for cp.reduce.async.bulk (into shared::cluster memory)",
        ),
        (
            "red.async.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes.max.u64 [%r3], %rd1, [%r4];",
            ".max.u64 is not a reduction the PTX ISA defines for red.async",
        ),
    ] {
        let e = try_program(&format!("{instr}\nret;")).unwrap_err().to_string();
        assert!(e.contains(want), "{e}");
    }
    // st.async's barrier in another block than its store.
    let body = "mapa.shared::cluster.u32 %r8, %r3, 1;\n\
        st.async.shared::cluster.mbarrier::complete_tx::bytes.b32 [%r8], %r1, [%r4];\nret;";
    let e = run(&program(body), &launch(2, 1, 2, None))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("the mbarrier must be in the block the store writes"),
        "{e}"
    );
}
