//! Instructions of modern kernels on small PTX kernels: narrow and packed floats, inline-asm
//! registers, `elect.sync`, `mbarrier` phases and their deadlock, `assert`, the clock.
//! A computed value is checked through the address of a store that uses it as an offset.

use warpscope_model::WarpAccess;
use warpscope_simt::decode::window;
use warpscope_simt::{Alloc, Error, Launch, Program, WarpOrigin};

const BASE: u64 = window::ALLOC_BASE;

fn program(body: &str, extra: &str) -> Program {
    let text = format!(
        ".version 8.5\n.target sm_90\n.address_size 64\n{extra}\n.visible .entry k(.param .u64 p0)\n{{\n{body}\n}}\n"
    );
    let m = warpscope_ptx::parse(&text).unwrap();
    let e = warpscope_ptx::find_entry(&m, "k").unwrap();
    Program::decode(&m, e).unwrap()
}

fn launch(block: u32) -> Launch {
    Launch {
        grid: [1, 1, 1],
        block: [block, 1, 1],
        args: vec![BASE.to_le_bytes().to_vec()],
        allocs: vec![(
            Alloc {
                name: "p0".into(),
                base: BASE,
                size: None,
            },
            warpscope_init::Contents::Zero,
        )],
        max_steps: 1 << 24,
        ..Default::default()
    }
}

fn run(p: &Program, block: u32) -> Result<Vec<(u32, WarpAccess, WarpOrigin)>, Error> {
    let mut v = Vec::new();
    p.run(&launch(block), &mut |s, a, o| v.push((s, *a, o)))?;
    Ok(v)
}

/// The offset from `p0` that lane 0 of the first access stored at: the value under test.
fn stored_offset(body: &str) -> u64 {
    let p = program(body, "");
    let v = run(&p, 32).unwrap();
    v[0].1.addrs[0] - BASE
}

/// `%r9` (32 bits) as the offset of a byte store.
const STORE_R9: &str = "ld.param.u64 %rd1, [p0];\ncvt.u64.u32 %rd2, %r9;\nadd.s64 %rd3, %rd1, %rd2;\nst.global.u8 [%rd3], 0;\nret;";

fn with_regs(code: &str) -> String {
    format!(
        ".reg .b32 %r<10>;\n.reg .b16 %rs<4>;\n.reg .b64 %rd<4>;\n.reg .f32 %f<4>;\n.reg .pred %p<3>;\n{code}\n{STORE_R9}"
    )
}

#[test]
fn bf16_and_half2_values() {
    // cvt.rn.bf16x2.f32 d, a, b: a (3.0 = 0x4040) high, b (1.0 = 0x3F80) low.
    let v = stored_offset(&with_regs("cvt.rn.bf16x2.f32 %r9, 0f40400000, 0f3F800000;"));
    assert_eq!(v, 0x4040_3F80);
    // fma.rn.bf16x2: (3,1)·(2,2) + (1,1) = (7, 3): 0x40E0, 0x4040.
    let v = stored_offset(&with_regs(
        "cvt.rn.bf16x2.f32 %r1, 0f40400000, 0f3F800000;\ncvt.rn.bf16x2.f32 %r2, 0f40000000, 0f40000000;\n\
         cvt.rn.bf16x2.f32 %r3, 0f3F800000, 0f3F800000;\nfma.rn.bf16x2 %r9, %r1, %r2, %r3;",
    ));
    assert_eq!(v, 0x40E0_4040);
    // Scalar bf16 → f32 → u32: cvt.f32.bf16 of 0x4140 (12.0).
    let v = stored_offset(&with_regs(
        "mov.b16 %rs1, 0x4140;\ncvt.f32.bf16 %f1, %rs1;\ncvt.rzi.u32.f32 %r9, %f1;",
    ));
    assert_eq!(v, 12);
    // f16x2: max.f16x2 with relu-free halves, and sub: (2.5, -1) − (0.5, 1) = (2, -2).
    let v = stored_offset(&with_regs(
        "cvt.rn.f16x2.f32 %r1, 0f40200000, 0fBF800000;\ncvt.rn.f16x2.f32 %r2, 0f3F000000, 0f3F800000;\nsub.rn.f16x2 %r9, %r1, %r2;",
    ));
    assert_eq!(v, 0x4000_C000);
    // .relu zeroes the negative half: max.relu... via fma.rn.relu.f16x2 (x·1 + 0).
    let v = stored_offset(&with_regs(
        "cvt.rn.f16x2.f32 %r1, 0f40200000, 0fBF800000;\ncvt.rn.f16x2.f32 %r2, 0f3F800000, 0f3F800000;\nfma.rn.relu.f16x2 %r9, %r1, %r2, 0;",
    ));
    assert_eq!(v, 0x4100_0000);
}

#[test]
fn fp8_and_tf32_conversions() {
    // cvt.rn.satfinite.e4m3x2.f32 d, a, b: 448 saturates (a = 1000 → 0x7E high), 1.5 → 0x3C.
    let v = stored_offset(&with_regs(
        "cvt.rn.satfinite.e4m3x2.f32 %rs1, 0f447A0000, 0f3FC00000;\ncvt.u32.u16 %r9, %rs1;",
    ));
    assert_eq!(v, 0x7E3C);
    // And back: cvt.rn.f16x2.e4m3x2: 448 → 0x5F00, 1.5 → 0x3E00.
    let v = stored_offset(&with_regs(
        "cvt.rn.satfinite.e4m3x2.f32 %rs1, 0f43E00000, 0f3FC00000;\ncvt.rn.f16x2.e4m3x2 %r9, %rs1;",
    ));
    assert_eq!(v, 0x5F00_3E00);
    // tf32 keeps 10 mantissa bits: 1 + 2^-11 (0x3F800100) rounds to 1.0.
    let v = stored_offset(&with_regs("cvt.rna.tf32.f32 %r9, 0f3F800100;"));
    assert_eq!(v, 0x3F80_0000);
}

#[test]
fn inline_asm_registers_without_percent() {
    // CUDA's __half headers: `{.reg .f16 low,high; mov.b32 {low,high}, %r1; …}`.
    let v = stored_offset(&with_regs(
        "mov.b32 %r1, 0x00050007;\n{ .reg .b16 low, high;\nmov.b32 {low, high}, %r1;\ncvt.u32.u16 %r9, high; }",
    ));
    assert_eq!(v, 5);
    // A predicate and an f32 named without %, as CUB's warp shuffles write them.
    let v = stored_offset(&with_regs(
        "{ .reg .f32 r0; .reg .pred p;\nmov.f32 r0, 0f41000000;\nsetp.gt.f32 p, r0, 0f00000000;\n@p cvt.rzi.u32.f32 %r9, r0; }",
    ));
    assert_eq!(v, 8);
}

#[test]
fn elect_sync_picks_one_lane() {
    // Lanes 3..31 run elect.sync: lane 3 is the leader; only it stores, at offset 4·leader.
    let body = ".reg .b32 %r<10>;\n.reg .b64 %rd<6>;\n.reg .pred %p<3>;\n\
        mov.u32 %r1, %laneid;\nsetp.lt.u32 %p1, %r1, 3;\n@%p1 bra DONE;\n\
        elect.sync %r2|%p2, -1;\n@!%p2 bra DONE;\n\
        ld.param.u64 %rd1, [p0];\nmul.wide.u32 %rd2, %r2, 4;\nadd.s64 %rd3, %rd1, %rd2;\nst.global.u32 [%rd3], %r1;\n\
        DONE:\nret;";
    let p = program(body, "");
    let v = run(&p, 32).unwrap();
    assert_eq!(v.len(), 1);
    assert_eq!(v[0].1.mask, 1 << 3);
    assert_eq!(v[0].1.addrs[3] - BASE, 12);
}

/// Thread 0 initializes an mbarrier for `count` arrivals; every thread arrives and waits
/// on phase 0 with try_wait.parity, then stores.
fn mbarrier_kernel(count: u32) -> String {
    format!(
        ".reg .b32 %r<10>;\n.reg .b64 %rd<8>;\n.reg .pred %p<4>;\n\
        mov.u32 %r1, %tid.x;\nmov.u32 %r2, bar0;\nsetp.ne.u32 %p1, %r1, 0;\n\
        @!%p1 mbarrier.init.shared::cta.b64 [%r2], {count};\nbar.sync 0;\n\
        mbarrier.arrive.shared::cta.b64 %rd1, [%r2];\n\
        WAIT:\nmbarrier.try_wait.parity.shared::cta.b64 %p2, [%r2], 0;\n@!%p2 bra WAIT;\n\
        ld.param.u64 %rd2, [p0];\nmul.wide.u32 %rd3, %r1, 4;\nadd.s64 %rd4, %rd2, %rd3;\nst.global.u32 [%rd4], %r1;\nret;"
    )
}

#[test]
fn mbarrier_phase_completes_when_every_thread_arrives() {
    let p = program(&mbarrier_kernel(128), ".shared .align 8 .b64 bar0;");
    let v = run(&p, 128).unwrap();
    // Each of the 4 warps stores once, after the phase completed.
    assert_eq!(v.len(), 4);
}

#[test]
fn mbarrier_that_can_never_complete_is_a_deadlock_naming_the_barrier() {
    // 129 arrivals expected, 128 threads: every warp waits forever.
    let p = program(&mbarrier_kernel(129), ".shared .align 8 .b64 bar0;");
    let e = run(&p, 128).unwrap_err().to_string();
    assert!(e.contains("deadlock"), "{e}");
    assert!(e.contains("warp(s) 0, 1, 2, 3"), "{e}");
    assert!(e.contains("1 of 129 arrivals"), "{e}");
}

#[test]
fn mbarrier_waits_for_transaction_bytes() {
    // expect_tx of 64 bytes with one arrival; the phase completes only after complete_tx.
    let body = ".reg .b32 %r<10>;\n.reg .b64 %rd<8>;\n.reg .pred %p<4>;\n\
        mov.u32 %r2, bar0;\nmbarrier.init.shared::cta.b64 [%r2], 1;\n\
        mbarrier.arrive.expect_tx.shared::cta.b64 %rd1, [%r2], 64;\n\
        mbarrier.test_wait.parity.shared::cta.b64 %p1, [%r2], 0;\n\
        mbarrier.complete_tx.shared::cta.b64 [%r2], 64;\n\
        mbarrier.test_wait.parity.shared::cta.b64 %p2, [%r2], 0;\n\
        selp.u32 %r3, 1, 0, %p1;\nselp.u32 %r4, 2, 0, %p2;\nor.b32 %r9, %r3, %r4;\n\
        ld.param.u64 %rd2, [p0];\ncvt.u64.u32 %rd3, %r9;\nadd.s64 %rd4, %rd2, %rd3;\nst.global.u8 [%rd4], 0;\nret;";
    let p = program(body, ".shared .align 8 .b64 bar0;");
    // One thread: open before complete_tx (bit 0 clear), complete after (bit 1 set).
    let v = run(&p, 1).unwrap();
    assert_eq!(v[0].1.addrs[0] - BASE, 2);
}

#[test]
fn assert_that_fails_names_its_text_file_and_line() {
    let extra = ".extern .func __assertfail(.param .b64 a, .param .b64 b, .param .b32 c, .param .b64 d, .param .b64 e);\n\
        .global .align 1 .b8 $str[6] = {105, 32, 60, 32, 110};\n\
        .global .align 1 .b8 $str$1[5] = {107, 46, 99, 117};";
    let body = ".reg .b32 %r<4>;\n.reg .b64 %rd<6>;\n.reg .pred %p<2>;\n\
        mov.u32 %r1, %tid.x;\nsetp.lt.u32 %p1, %r1, 40;\n@%p1 bra OK;\n\
        mov.u64 %rd1, $str;\ncvta.global.u64 %rd2, %rd1;\nmov.u64 %rd3, $str$1;\ncvta.global.u64 %rd4, %rd3;\n\
        { .param .b64 param0; st.param.b64 [param0+0], %rd2;\n.param .b64 param1; st.param.b64 [param1+0], %rd4;\n\
        .param .b32 param2; st.param.b32 [param2+0], 17;\n.param .b64 param3; st.param.b64 [param3+0], 0;\n\
        .param .b64 param4; st.param.b64 [param4+0], 1;\n\
        call.uni __assertfail, (param0, param1, param2, param3, param4); }\n\
        OK:\nret;";
    let p = program(body, extra);
    // 32 threads: every i < 40, the assertion holds and nothing stops.
    assert!(run(&p, 32).is_ok());
    let e = run(&p, 64).unwrap_err().to_string();
    assert!(
        e.contains("assertion `i < n` failed at k.cu:17") && e.contains("thread (40,0,0)"),
        "{e}"
    );
}

#[test]
fn clock_advances_so_back_off_loops_end() {
    // Spin until %globaltimer has moved 1000 ns on, as CCCL's back-off does.
    let body = ".reg .b32 %r<10>;\n.reg .b64 %rd<8>;\n.reg .pred %p<3>;\n\
        mov.u64 %rd1, %globaltimer;\nSPIN:\nmov.u64 %rd2, %globaltimer;\nsub.s64 %rd3, %rd2, %rd1;\n\
        setp.lt.s64 %p1, %rd3, 1000;\n@%p1 bra SPIN;\nmov.u32 %r9, 4;\n"
        .to_string()
        + STORE_R9;
    let p = program(&body, "");
    assert_eq!(run(&p, 32).unwrap().len(), 1);
}

/// A 2-D TMA tile load of a 32 × 8 box of 4-byte elements (128-byte rows) with a 128-byte
/// swizzle: the global side reads the box's 8 rows (one 1-KiB access pair of 16-byte lanes,
/// 32 sectors), the shared side writes each row's 16-byte chunks XOR-permuted by the row,
/// and the mbarrier's phase completes with the box's 1,024 bytes.
#[test]
fn tma_tile_load_reads_the_box_and_swizzles_shared_rows() {
    use warpscope_simt::{TensorMap, TensorMapBinding};
    let text = ".version 8.5\n.target sm_90\n.address_size 64\n\
        .shared .align 1024 .b8 tile[1024];\n.shared .align 8 .b64 bar0;\n\
        .visible .entry k(.param .align 64 .b8 tmap[128])\n{\n\
        .reg .b32 %r<8>;\n.reg .b64 %rd<4>;\n.reg .pred %p<3>;\n\
        mov.u32 %r1, tile;\nmov.u32 %r2, bar0;\nmov.b64 %rd1, tmap;\n\
        mbarrier.init.shared::cta.b64 [%r2], 1;\n\
        mov.u32 %r3, 32;\nmov.u32 %r4, 8;\n\
        cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%r1], [%rd1, {%r3, %r4}], [%r2];\n\
        mbarrier.arrive.expect_tx.shared::cta.b64 %rd2, [%r2], 1024;\n\
        W:\nmbarrier.try_wait.parity.shared::cta.b64 %p1, [%r2], 0;\n@!%p1 bra W;\nret;\n}\n";
    let m = warpscope_ptx::parse(text).unwrap();
    let e = warpscope_ptx::find_entry(&m, "k").unwrap();
    let p = Program::decode(&m, e).unwrap();
    let map = TensorMap::parse("f32:256x64:1024:32x8:swizzle=128").unwrap();
    let l = Launch {
        args: vec![vec![0; 128]],
        allocs: vec![(
            Alloc {
                name: "tmap".into(),
                base: BASE,
                size: Some(map.reach()),
            },
            warpscope_init::Contents::Zero,
        )],
        tensor_maps: vec![TensorMapBinding {
            param: 0,
            map,
            base: BASE,
        }],
        block: [1, 1, 1],
        ..Default::default()
    };
    let mut v = Vec::new();
    p.run(&l, &mut |s, a, o| v.push((s, *a, o))).unwrap();
    let global: Vec<_> = v
        .iter()
        .filter(|x| x.1.space == warpscope_model::Space::Global)
        .collect();
    let shared: Vec<_> = v
        .iter()
        .filter(|x| x.1.space == warpscope_model::Space::Shared)
        .collect();
    assert_eq!((global.len(), shared.len()), (2, 2));
    // Row y = 8 starts at byte 8·1024 + 32·4 of the tensor; lane 8 is row 9's first chunk.
    assert_eq!(global[0].1.addrs[0] - BASE, 8 * 1024 + 128);
    assert_eq!(global[0].1.addrs[8] - BASE, 9 * 1024 + 128);
    // Shared row 1, chunk 0 lands on chunk 1; row 7's chunk 0 on chunk 7.
    let tile = shared[0].1.addrs[0];
    assert_eq!(shared[0].1.addrs[8] - tile, 128 + 16);
    assert_eq!(shared[1].1.addrs[24] - tile, 7 * 128 + 7 * 16);
}

/// `cp.async … 16, src_size` (Triton masks its pipelined loads this way): a lane whose
/// src-size is 0 reads no global memory, only zero-fills its 16 shared bytes [PTX ISA
/// §9.7.9.25.3.3]. Lanes 0..20 of 32 read 16 bytes each: 320 contiguous bytes from the
/// allocation's start, 10 sectors, and all 32 lanes write shared memory. Measured on H100
/// (tests/data/h100/triton2): LDGSTS executions count the zero-fill ones, global sectors not.
#[test]
fn cp_async_with_src_size_zero_reads_nothing() {
    let body = ".reg .b32 %r<8>;\n.reg .b64 %rd<4>;\n.reg .pred %p<2>;\n\
        ld.param.u64 %rd1, [p0];\nmov.u32 %r2, %tid.x;\nmul.wide.u32 %rd2, %r2, 16;\n\
        add.s64 %rd3, %rd1, %rd2;\nsetp.lt.u32 %p1, %r2, 20;\nselp.b32 %r3, 16, 0, %p1;\n\
        shl.b32 %r4, %r2, 4;\nmov.u32 %r5, smem;\nadd.s32 %r6, %r5, %r4;\n\
        cp.async.cg.shared.global [%r6], [%rd3], 16, %r3;\ncp.async.wait_all;\nret;";
    let p = program(body, ".shared .align 16 .b8 smem[512];");
    let v = run(&p, 32).unwrap();
    let global: Vec<_> = v
        .iter()
        .filter(|(_, a, _)| a.space == warpscope_model::Space::Global)
        .collect();
    let shared: Vec<_> = v
        .iter()
        .filter(|(_, a, _)| a.space == warpscope_model::Space::Shared)
        .collect();
    assert_eq!(global.len(), 1);
    assert_eq!(global[0].1.mask, (1 << 20) - 1);
    assert_eq!(global[0].1.addrs[19] - BASE, 19 * 16);
    assert_eq!(shared.len(), 1);
    assert_eq!(shared[0].1.mask, u32::MAX);
}
