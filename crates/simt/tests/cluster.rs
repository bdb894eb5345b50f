//! Thread-block clusters on small hand-written PTX kernels: the cluster special registers of
//! every block, distributed shared memory (`mapa` + `ld/st.shared::cluster` land in the
//! neighbour's shared memory, reported as `Space::DistributedShared` with counts derived by
//! hand from the shared-memory rules), `barrier.cluster`, remote mbarrier arrivals, and the
//! launch errors. A computed value is checked through the address of a global store that
//! uses it as an offset (which also makes the executor keep memory values).

use warpscope_model::{arch, cost, ComputeCapability, Config, Cost, Op, Space, WarpAccess};
use warpscope_simt::decode::window;
use warpscope_simt::{Alloc, Error, Launch, Program, WarpOrigin};

const BASE: u64 = window::ALLOC_BASE;

fn program(body: &str, extra: &str, directives: &str) -> Program {
    let text = format!(
        ".version 8.5\n.target sm_90\n.address_size 64\n{extra}\n.visible .entry k(.param .u64 p0)\n{directives}\n{{\n.reg .b32 %r<40>;\n.reg .b64 %rd<20>;\n.reg .pred %p<4>;\nld.param.u64 %rd1, [p0];\n{body}\n}}\n"
    );
    let m = warpscope_ptx::parse(&text).unwrap();
    let e = warpscope_ptx::find_entry(&m, "k").unwrap();
    Program::decode(&m, e).unwrap()
}

fn launch(grid: [u32; 3], block: u32, cluster: [u32; 3]) -> Launch {
    Launch {
        grid,
        block: [block, 1, 1],
        cluster,
        explicit_cluster: cluster != [1, 1, 1],
        args: vec![BASE.to_le_bytes().to_vec()],
        allocs: vec![(
            Alloc {
                name: "p0".into(),
                base: BASE,
                size: None,
            },
            warpscope_init::Contents::Zero,
        )],
        max_steps: 1 << 22,
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

/// `st.global.u8 [p0 + reg]`: the register's value as a store offset.
fn store_reg(reg: &str) -> String {
    format!("cvt.u64.u32 %rd2, {reg};\nadd.s64 %rd3, %rd1, %rd2;\nst.global.u8 [%rd3], 0;\n")
}

#[test]
fn cluster_special_registers_of_every_block() {
    let regs = [
        "%clusterid.x",
        "%clusterid.y",
        "%nclusterid.x",
        "%nclusterid.y",
        "%cluster_ctaid.x",
        "%cluster_ctaid.y",
        "%cluster_nctaid.x",
        "%cluster_nctaid.y",
        "%cluster_ctarank",
        "%cluster_nctarank",
        "%is_explicit_cluster",
    ];
    let mut body = String::from("mov.u32 %r1, %tid.x;\nsetp.ne.u32 %p1, %r1, 0;\n@%p1 bra DONE;\n");
    for r in regs {
        body.push_str(&format!("mov.u32 %r2, {r};\n"));
        body.push_str(&store_reg("%r2"));
    }
    body.push_str("DONE:\nret;");
    let p = program(&body, "", "");
    // A 6×2 grid of 3×1 clusters... here 2×2 clusters: grid 4×2 in clusters of 2×1.
    let (grid, cl) = ([4, 2, 1], [2, 1, 1]);
    let v = run(&p, &launch(grid, 32, cl)).unwrap();
    assert_eq!(v.len(), 8 * regs.len());
    for b in v.chunks(regs.len()) {
        let [bx, by, _] = b[0].2.block;
        let got: Vec<u64> = b.iter().map(|(_, a, _)| a.addrs[0] - BASE).collect();
        // The PTX ISA's definitions (§10.14–10.20), from the block's coordinates.
        let want = [
            bx / cl[0],
            by / cl[1],
            grid[0] / cl[0],
            grid[1] / cl[1],
            bx % cl[0],
            by % cl[1],
            cl[0],
            cl[1],
            bx % cl[0] + cl[0] * (by % cl[1]),
            cl[0] * cl[1] * cl[2],
            1,
        ]
        .map(u64::from);
        assert_eq!(got, want, "block ({bx},{by})");
    }
    // The blocks of a cluster run together, by rank: (0,0), (1,0), then the next cluster.
    let order: Vec<[u32; 3]> = v.chunks(regs.len()).map(|b| b[0].2.block).collect();
    assert_eq!(&order[..3], &[[0, 0, 0], [1, 0, 0], [2, 0, 0]]);
    // Without a cluster every block is an implicit cluster of one.
    let v = run(&p, &launch([2, 1, 1], 32, [1, 1, 1])).unwrap();
    let got: Vec<u64> = v[regs.len()..]
        .iter()
        .map(|(_, a, _)| a.addrs[0] - BASE)
        .collect();
    assert_eq!(got, [1, 0, 2, 1, 0, 0, 1, 1, 0, 1, 0]);
}

/// Every thread writes `tid + 1000·rank` into word `tid` of its block's `buf`, the cluster
/// synchronizes, and every thread reads word `tid·stride` of the neighbour's (rank ^ 1)
/// `buf` through `mapa` and stores at `p0 + 4·value`.
fn neighbour_kernel(stride: u32, sync: bool) -> String {
    let sync = if sync {
        "barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;\n"
    } else {
        ""
    };
    format!(
        "mov.u32 %r1, %tid.x;\nmov.u32 %r2, %cluster_ctarank;\nmov.u32 %r3, buf;\n\
         mad.lo.u32 %r4, %r2, 1000, %r1;\nshl.b32 %r5, %r1, 2;\nadd.u32 %r6, %r3, %r5;\n\
         st.shared.u32 [%r6], %r4;\n{sync}\
         xor.b32 %r7, %r2, 1;\nmul.lo.u32 %r8, %r1, {stride};\nand.b32 %r8, %r8, 255;\nshl.b32 %r8, %r8, 2;\n\
         add.u32 %r9, %r3, %r8;\nmapa.shared::cluster.u32 %r10, %r9, %r7;\n\
         ld.shared::cluster.u32 %r11, [%r10];\n\
         mul.wide.u32 %rd2, %r11, 4;\nadd.s64 %rd3, %rd1, %rd2;\nst.global.u32 [%rd3], %r1;\nret;"
    )
}

const BUF: &str = ".shared .align 16 .b8 buf[1024];";

fn h100() -> &'static warpscope_model::Arch {
    arch::lookup(ComputeCapability::new(9, 0)).unwrap()
}

fn total(v: &Accesses, space: Space) -> Cost {
    let mut c = Cost::default();
    for (_, a, _) in v.iter().filter(|x| x.1.space == space) {
        c.add(&cost(h100(), &Config::default(), a));
    }
    c
}

#[test]
fn dsmem_loads_read_the_neighbours_shared_memory() {
    let p = program(&neighbour_kernel(1, true), BUF, "");
    let v = run(&p, &launch([2, 1, 1], 64, [2, 1, 1])).unwrap();
    // The global stores: thread t of rank r stored at 4·(t + 1000·(r ^ 1)).
    for (_, a, o) in v.iter().filter(|x| x.1.space == Space::Global) {
        let rank = o.block[0] % 2;
        for (lane, addr) in a.active() {
            let t = 32 * o.warp as u64 + lane as u64;
            assert_eq!(addr - BASE, 4 * (t + 1000 * (rank ^ 1) as u64));
        }
    }
    // The loads are distributed shared memory; the own block's stores stay shared.
    let dsmem: Vec<&WarpAccess> = v
        .iter()
        .filter(|x| x.1.space == Space::DistributedShared)
        .map(|x| &x.1)
        .collect();
    assert_eq!(dsmem.len(), 4); // 2 warps × 2 blocks
    assert!(dsmem.iter().all(|a| a.op == Op::Load && a.width == 4));
    // Offsets in the neighbour's window: buf (0) + 4·tid.
    assert_eq!(dsmem[0].addrs[5], 20);
    let c = total(&v, Space::DistributedShared);
    // By hand, per warp on CC 9.0: 32 lanes × 4 B at consecutive words = one request, one
    // wavefront (32 distinct banks), 128 aligned bytes = 4 sectors of 32 B. × 4 warps.
    assert_eq!((c.requests, c.wavefronts, c.sectors), (4, 4, 16));
    let s = total(&v, Space::Shared);
    assert_eq!((s.executions, s.wavefronts), (4, 4));
}

#[test]
fn dsmem_wavefronts_follow_the_lines_not_the_target_banks() {
    // Lane l reads word 8·l: 4-byte words 32 bytes apart (bytes 0, 32, …, 992): an 8-way
    // bank conflict in the target block, but the requesting SM outputs one wavefront per 4
    // distinct 128-byte lines (8 lines: 2, as measured on H100, tests/data/h100/dsmem/);
    // every lane in its own 32-byte sector = 32 sectors.
    let p = program(&neighbour_kernel(8, true), BUF, "");
    let v = run(&p, &launch([2, 1, 1], 32, [2, 1, 1])).unwrap();
    let c = total(&v, Space::DistributedShared);
    assert_eq!(c.executions, 2);
    assert_eq!(c.requests, 2);
    assert_eq!(c.wavefronts, 2 * 2);
    assert_eq!(c.sectors, 2 * 32);
}

#[test]
fn without_the_cluster_barrier_rank_0_reads_before_rank_1_writes() {
    // The blocks run in rank order between barriers: rank 0 reads rank 1's buf before rank 1
    // has written it (zeros: every lane stores at p0), rank 1 reads rank 0's values (lane l
    // at 4·l).
    let p = program(&neighbour_kernel(1, false), BUF, "");
    let v = run(&p, &launch([2, 1, 1], 32, [2, 1, 1])).unwrap();
    for (_, a, o) in v.iter().filter(|x| x.1.space == Space::Global) {
        for (lane, addr) in a.active() {
            let want = if o.block[0] == 0 { 0 } else { 4 * lane as u64 };
            assert_eq!(addr - BASE, want, "block {:?}", o.block);
        }
    }
}

#[test]
fn mapa_to_the_own_rank_is_an_ordinary_shared_access_and_getctarank_names_the_block() {
    let body = "mov.u32 %r1, %tid.x;\nmov.u32 %r2, %cluster_ctarank;\nmov.u32 %r3, buf;\n\
        shl.b32 %r5, %r1, 2;\nadd.u32 %r6, %r3, %r5;\nmapa.shared::cluster.u32 %r10, %r6, %r2;\n\
        ld.shared::cluster.u32 %r11, [%r10];\nxor.b32 %r7, %r2, 1;\n\
        mapa.shared::cluster.u32 %r12, %r6, %r7;\ngetctarank.shared::cluster.u32 %r13, %r12;\n\
        add.u32 %r14, %r13, %r11;\n"
        .to_string()
        + &store_reg("%r14")
        + "ret;";
    let p = program(&body, BUF, "");
    let v = run(&p, &launch([2, 1, 1], 32, [2, 1, 1])).unwrap();
    assert!(v.iter().all(|x| x.1.space != Space::DistributedShared));
    assert_eq!(v.iter().filter(|x| x.1.space == Space::Shared).count(), 2);
    for (_, a, o) in v.iter().filter(|x| x.1.space == Space::Global) {
        // The neighbour's rank (the loaded word is 0).
        assert_eq!(a.addrs[0] - BASE, (o.block[0] % 2 ^ 1) as u64);
    }
}

#[test]
fn a_cluster_barrier_that_cannot_complete_is_a_deadlock_naming_it() {
    // Only rank 0 arrives; every thread waits.
    let body = "mov.u32 %r2, %cluster_ctarank;\nsetp.ne.u32 %p1, %r2, 0;\n\
        @%p1 bra SKIP;\nbarrier.cluster.arrive;\nSKIP:\nbarrier.cluster.wait;\nret;";
    let p = program(body, "", "");
    let e = run(&p, &launch([2, 1, 1], 64, [2, 1, 1]))
        .unwrap_err()
        .to_string();
    assert!(e.contains("deadlock"), "{e}");
    assert!(e.contains("barrier.cluster.wait"), "{e}");
    // Rank 0's 64 threads arrived, of 128.
    assert!(
        e.contains("64 of the 128 non-exited threads of the cluster's 2 block(s)"),
        "{e}"
    );
    // Exited threads need not arrive: rank 1 exits instead.
    let body = "mov.u32 %r2, %cluster_ctarank;\nsetp.ne.u32 %p1, %r2, 0;\n\
        @%p1 bra SKIP;\nbarrier.cluster.arrive;\nbarrier.cluster.wait;\nSKIP:\nret;";
    let p = program(body, "", "");
    run(&p, &launch([2, 1, 1], 64, [2, 1, 1])).unwrap();
}

#[test]
fn a_remote_mbarrier_arrival_completes_the_neighbours_phase() {
    // Each block's thread 0 initializes its mbarrier for one arrival; after a cluster sync,
    // rank 1 arrives on rank 0's barrier and rank 0 waits on its own.
    let body = |arrive: bool| {
        format!(
            "mov.u32 %r1, %tid.x;\nmov.u32 %r2, %cluster_ctarank;\nmov.u32 %r3, bar0;\n\
             mbarrier.init.shared::cta.b64 [%r3], 1;\n\
             barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;\n\
             setp.eq.u32 %p1, %r2, 0;\n@%p1 bra WAIT;\n\
             mapa.shared::cluster.u32 %r4, %r3, 0;\n\
             {}\nret;\n\
             WAIT:\nmbarrier.try_wait.parity.shared::cta.b64 %p2, [%r3], 0;\n@!%p2 bra WAIT;\n{}ret;",
            if arrive {
                "mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%r4];"
            } else {
                ""
            },
            store_reg("%r2")
        )
    };
    let extra = ".shared .align 8 .b64 bar0;";
    let p = program(&body(true), extra, "");
    let v = run(&p, &launch([2, 1, 1], 1, [2, 1, 1])).unwrap();
    assert_eq!(v.iter().filter(|x| x.1.space == Space::Global).count(), 1);
    let p = program(&body(false), extra, "");
    let e = run(&p, &launch([2, 1, 1], 1, [2, 1, 1]))
        .unwrap_err()
        .to_string();
    assert!(e.contains("deadlock") && e.contains("mbarrier"), "{e}");
}

#[test]
fn launch_errors_name_the_rule() {
    let p = program("ret;", "", "");
    // A grid the cluster does not divide.
    let e = run(&p, &launch([3, 1, 1], 32, [2, 1, 1]))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("gridDim.x = 3 is not a multiple of the cluster's x dimension 2"),
        "{e}"
    );
    // More blocks than any capability allows in a cluster.
    let e = run(&p, &launch([32, 1, 1], 32, [32, 1, 1]))
        .unwrap_err()
        .to_string();
    assert!(e.contains("a cluster holds 1 to 16 blocks"), "{e}");
    // The kernel's declared shape against the launch's.
    let p = program("ret;", "", ".explicitcluster\n.reqnctapercluster 2, 1, 1");
    assert_eq!(p.cluster_dims, Some([2, 1, 1]));
    assert!(p.explicit_cluster);
    let e = run(&p, &launch([4, 1, 1], 32, [4, 1, 1]))
        .unwrap_err()
        .to_string();
    assert!(e.contains("declares clusters of 2×1×1 blocks"), "{e}");
    run(&p, &launch([4, 1, 1], 32, [2, 1, 1])).unwrap();
    // mapa to a rank outside the cluster.
    let p = program(
        "mov.u32 %r3, buf;\nmapa.shared::cluster.u32 %r4, %r3, 2;\nld.shared::cluster.u32 %r5, [%r4];\nret;",
        BUF,
        "",
    );
    let e = run(&p, &launch([2, 1, 1], 32, [2, 1, 1]))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("mapa to cluster rank 2, but the cluster has 2 block(s)"),
        "{e}"
    );
}
