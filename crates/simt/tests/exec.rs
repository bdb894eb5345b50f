//! The executor on small PTX kernels: reconvergence, the memory image decision, the skipped
//! dead values, and the parallel run delivering exactly the sequential run's accesses.

use warpscope_model::{Op, Space, WarpAccess};
use warpscope_simt::decode::window;
use warpscope_simt::{Alloc, Launch, Program, WarpOrigin};

fn program(body: &str, params: &str) -> Program {
    let text = format!(".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k({params})\n{{\n{body}\n}}\n");
    let m = warpscope_ptx::parse(&text).unwrap();
    let e = warpscope_ptx::find_entry(&m, "k").unwrap();
    Program::decode(&m, e).unwrap()
}

fn launch(prog: &Program, grid: u32, block: u32, n: usize) -> Launch {
    let mut allocs = Vec::new();
    let mut args = Vec::new();
    for k in 0..n {
        let base = window::ALLOC_BASE + k as u64 * window::ALLOC_SPACING;
        allocs.push((
            Alloc {
                name: format!("p{k}"),
                base,
                size: None,
            },
            warpscope_init::Contents::Zero,
        ));
        args.push(base.to_le_bytes().to_vec());
    }
    assert_eq!(args.len(), prog.params.len());
    Launch {
        grid: [grid, 1, 1],
        block: [block, 1, 1],
        args,
        allocs,
        dynamic_shared_bytes: 0,
        max_steps: 1 << 30,
        ..Default::default()
    }
}

fn accesses(prog: &Program, l: &Launch) -> Vec<(u32, WarpAccess, WarpOrigin)> {
    let mut v = Vec::new();
    prog.run(l, &mut |s, a, o| v.push((s, *a, o))).unwrap();
    v
}

/// out[i] = in[i] with i = ctaid.x * ntid.x + tid.x: nothing loaded reaches an address.
const COPY: &str = ".reg .b32 %r<5>;\n.reg .b64 %rd<8>;\n.reg .f32 %f<3>;\n\
ld.param.u64 %rd1, [p0];\nld.param.u64 %rd2, [p1];\n\
mov.u32 %r1, %ctaid.x;\nmov.u32 %r2, %ntid.x;\nmov.u32 %r3, %tid.x;\nmad.lo.s32 %r4, %r1, %r2, %r3;\n\
mul.wide.s32 %rd3, %r4, 4;\nadd.s64 %rd4, %rd2, %rd3;\nld.global.f32 %f1, [%rd4];\nadd.f32 %f2, %f1, 0f3F800000;\n\
add.s64 %rd5, %rd1, %rd3;\nst.global.f32 [%rd5], %f2;\nret;";

#[test]
fn copy_needs_no_memory_image_and_skips_its_arithmetic() {
    let p = program(COPY, ".param .u64 p0, .param .u64 p1");
    assert!(!p.needs_memory);
    let v = accesses(&p, &launch(&p, 2, 64, 2));
    // 2 blocks × 2 warps × (load, store), lanes consecutive 4-byte words.
    assert_eq!(v.len(), 8);
    let (_, a, o) = v[2];
    assert_eq!(
        (a.op, a.space, a.width, a.mask),
        (Op::Load, Space::Global, 4, u32::MAX)
    );
    assert_eq!(o.warp, 1);
    assert_eq!(a.addrs[1] - a.addrs[0], 4);
    assert_eq!(
        a.addrs[0],
        window::ALLOC_BASE + window::ALLOC_SPACING + 32 * 4
    );
}

/// An index read from constant memory (`ld.const`, a `__constant__` table) reaches the
/// store's address: the constant bank is known without a memory image, so none is kept, and
/// the loaded value (5) is used: lane i stores at word 5 + i.
#[test]
fn a_constant_memory_index_needs_no_memory_image() {
    let text = ".version 8.0\n.target sm_90\n.address_size 64\n.const .align 4 .u32 tbl[1] = {5};\n\
.visible .entry k(.param .u64 p0)\n{\n.reg .b32 %r<4>;\n.reg .b64 %rd<6>;\n\
ld.param.u64 %rd1, [p0];\nmov.u64 %rd2, tbl;\nld.const.u32 %r1, [%rd2];\nmov.u32 %r2, %tid.x;\n\
add.s32 %r3, %r1, %r2;\nmul.wide.u32 %rd3, %r3, 4;\nadd.s64 %rd4, %rd1, %rd3;\nst.global.u32 [%rd4], 1;\nret;\n}\n";
    let m = warpscope_ptx::parse(text).unwrap();
    let p = Program::decode(&m, warpscope_ptx::find_entry(&m, "k").unwrap()).unwrap();
    assert!(!p.needs_memory);
    let v = accesses(&p, &launch(&p, 1, 32, 1));
    let st = v.iter().find(|(_, a, _)| a.op == Op::Store).unwrap().1;
    assert_eq!(st.addrs[0], window::ALLOC_BASE + 5 * 4);
    assert_eq!(st.addrs[31], window::ALLOC_BASE + 36 * 4);
}

/// out[idx[i]] = 1: a loaded index reaches an address, so memory is kept and the index's
/// value (written by the launch's initial bytes) decides the store's address.
#[test]
fn gather_keeps_memory_and_uses_loaded_values() {
    let body = ".reg .b32 %r<3>;\n.reg .b64 %rd<8>;\n\
ld.param.u64 %rd1, [p0];\nld.param.u64 %rd2, [p1];\nmov.u32 %r1, %tid.x;\nmul.wide.u32 %rd3, %r1, 4;\n\
add.s64 %rd4, %rd2, %rd3;\nld.global.u32 %r2, [%rd4];\nmul.wide.u32 %rd5, %r2, 4;\nadd.s64 %rd6, %rd1, %rd5;\n\
st.global.u32 [%rd6], 1;\nret;";
    let p = program(body, ".param .u64 p0, .param .u64 p1");
    assert!(p.needs_memory);
    let mut l = launch(&p, 1, 32, 2);
    // idx[i] = 31 - i: the store's lanes are reversed.
    l.allocs[1].1 =
        warpscope_init::Contents::Bytes((0..32u32).rev().flat_map(|x| x.to_le_bytes()).collect());
    let v = accesses(&p, &l);
    let st = v.iter().find(|(_, a, _)| a.op == Op::Store).unwrap().1;
    assert_eq!(st.addrs[0], window::ALLOC_BASE + 31 * 4);
    assert_eq!(st.addrs[31], window::ALLOC_BASE);
}

/// if (tid < 8) store a; else store b; store c: the paths diverge and reconverge before c,
/// which one access of the whole warp carries.
#[test]
fn divergent_paths_reconverge_at_the_post_dominator() {
    let body = ".reg .pred %p1;\n.reg .b32 %r<2>;\n.reg .b64 %rd<4>;\n\
ld.param.u64 %rd1, [p0];\nmov.u32 %r1, %tid.x;\nmul.wide.u32 %rd2, %r1, 4;\nadd.s64 %rd3, %rd1, %rd2;\n\
setp.lt.u32 %p1, %r1, 8;\n@%p1 bra $A;\nst.global.u32 [%rd3], 2;\nbra $J;\n$A:\nst.global.u32 [%rd3], 1;\n\
$J:\nst.global.u32 [%rd3+128], 3;\nret;";
    let p = program(body, ".param .u64 p0");
    let v = accesses(&p, &launch(&p, 1, 32, 1));
    let masks: Vec<u32> = v.iter().map(|(_, a, _)| a.mask).collect();
    assert_eq!(masks.len(), 3);
    assert!(masks.contains(&0xFF) && masks.contains(&0xFFFF_FF00));
    assert_eq!(masks[2], u32::MAX);
}

/// Blocks run on every core when no memory image is kept; the sink still sees the
/// sequential run's accesses, in the same order.
#[test]
fn parallel_run_equals_sequential_run() {
    let p = program(COPY, ".param .u64 p0, .param .u64 p1");
    let mut l = launch(&p, 300, 96, 2);
    l.threads = 1;
    let a = accesses(&p, &l);
    l.threads = 4;
    let b = accesses(&p, &l);
    assert_eq!(a.len(), 300 * 3 * 2);
    assert!(a == b);
}

/// An allocation's initial contents read where nothing was written, and stay around a write
/// to their page; other allocations read zero.
#[test]
fn initial_contents_survive_a_write_to_their_page() {
    use warpscope_simt::memory::Global;
    let base = window::ALLOC_BASE;
    let mut g = Global::default();
    g.back(
        base,
        &warpscope_init::Contents::Bytes(vec![1, 2, 3, 4, 5, 6, 7, 8].into()),
    );
    assert_eq!(g.read(base + 2, 2), 0x0403);
    g.write(base, 1, 9).unwrap();
    assert_eq!(g.read(base, 4), 0x0403_0209);
    assert_eq!(g.read(base + 4, 4), 0x0807_0605);
    assert_eq!(g.read(base + 8, 1), 0);
    assert_eq!(g.read(base + window::ALLOC_SPACING, 4), 0);
}

/// A register written only by block 0 (`%r2 = 64` when `%ctaid.x == 0`) and then used in an
/// address by every block: later blocks reuse block 0's warp storage, yet read 0 there, as
/// a fresh warp does (a block never sees another block's registers), and the parameters
/// and `%ctaid` are those of their own block.
#[test]
fn a_reused_warp_starts_with_its_own_blocks_registers() {
    let body = ".reg .pred %p<2>;\n.reg .b32 %r<6>;\n.reg .b64 %rd<6>;\n\
ld.param.u64 %rd1, [p0];\nmov.u32 %r1, %ctaid.x;\nsetp.ne.u32 %p1, %r1, 0;\n\
@%p1 bra SKIP;\nmov.u32 %r2, 64;\nSKIP:\nmov.u32 %r3, %tid.x;\nadd.u32 %r4, %r3, %r2;\n\
shl.b32 %r5, %r1, 10;\nadd.u32 %r4, %r4, %r5;\nmul.wide.u32 %rd2, %r4, 4;\nadd.s64 %rd3, %rd1, %rd2;\n\
st.global.u32 [%rd3], %r1;\nret;";
    let p = program(body, ".param .u64 p0");
    let mut l = launch(&p, 3, 32, 1);
    l.threads = 1;
    let v = accesses(&p, &l);
    assert_eq!(v.len(), 3);
    let base = window::ALLOC_BASE;
    // Block 0: lanes at element 64 + lane; blocks 1 and 2: element 1024·b + lane.
    assert_eq!(v[0].1.addrs[0], base + 4 * 64);
    assert_eq!(v[1].1.addrs[0], base + 4 * 1024);
    assert_eq!(v[2].1.addrs[5], base + 4 * (2048 + 5));
    assert_eq!(v[2].2.block, [2, 0, 0]);
}

/// A reused warp keeps unzeroed only the registers every thread writes before reading
/// (`dataflow::zeroed_on_reuse`). Here `%r2` is read (into the address) before block 0 writes
/// it (`mov %r2, 5` after the store), and `%r3` is written first in the straight-line start:
/// later blocks must still read `%r2` as 0 (addresses at element 0, not 5), while `%r3`, set
/// again by each block, gives each its own `%ctaid.x` row.
#[test]
fn a_register_read_before_written_is_zeroed_on_reuse() {
    let body = ".reg .b32 %r<6>;\n.reg .b64 %rd<6>;\n\
ld.param.u64 %rd1, [p0];\nmov.u32 %r1, %ctaid.x;\nshl.b32 %r3, %r1, 8;\nadd.u32 %r4, %r3, %r2;\n\
mul.wide.u32 %rd2, %r4, 4;\nadd.s64 %rd3, %rd1, %rd2;\nst.global.u32 [%rd3], %r1;\nmov.u32 %r2, 5;\nret;";
    let p = program(body, ".param .u64 p0");
    let mut l = launch(&p, 3, 32, 1);
    l.threads = 1;
    let v = accesses(&p, &l);
    assert_eq!(v.len(), 3);
    let base = window::ALLOC_BASE;
    for (b, (_, a, _)) in v.iter().enumerate() {
        assert_eq!(a.addrs[0], base + 4 * 256 * b as u64, "block {b}");
    }
}

/// Per-lane shifts and widening multiplies (the executor's fast paths for address
/// arithmetic) give what PTX defines [PTX ISA §9.7.1.6 mul.wide, §9.7.8.8 shl]: lane *l*
/// stores at `p0 + 1024 + (l − 16)·8` (a signed 32-bit product widened to 64 bits: negative
/// for lanes below 16) `+ (1 << (l + 26))` as a 32-bit shift (0 once the shift reaches 32)
/// zero-extended by `mul.wide.u32`, and `%tid.y`, shared by the warp's lanes, is uniform.
#[test]
fn lane_shifts_and_widening_multiplies_follow_ptx() {
    let body = ".reg .b32 %r<8>;\n.reg .b64 %rd<8>;\n\
ld.param.u64 %rd1, [p0];\nmov.u32 %r1, %tid.x;\nsub.s32 %r2, %r1, 16;\nmul.wide.s32 %rd2, %r2, 8;\n\
add.u32 %r5, %r1, 26;\nmov.u32 %r4, 1;\nshl.b32 %r3, %r4, %r5;\nmul.wide.u32 %rd3, %r3, 1;\n\
mov.u32 %r6, %tid.y;\nmul.wide.u32 %rd4, %r6, 4096;\n\
add.s64 %rd5, %rd1, 1024;\nadd.s64 %rd5, %rd5, %rd2;\nadd.s64 %rd5, %rd5, %rd3;\nadd.s64 %rd5, %rd5, %rd4;\n\
st.global.u32 [%rd5], %r1;\nret;";
    let p = program(body, ".param .u64 p0");
    let mut l = launch(&p, 1, 32, 1);
    l.block = [32, 2, 1];
    let v = accesses(&p, &l);
    assert_eq!(v.len(), 2);
    for (w, (_, a, _)) in v.iter().enumerate() {
        for lane in 0..32u64 {
            let shifted = if lane + 26 < 32 {
                1u64 << (lane + 26)
            } else {
                0
            };
            let expected = (window::ALLOC_BASE as i64 + 1024 + (lane as i64 - 16) * 8) as u64
                + shifted
                + 4096 * w as u64;
            assert_eq!(a.addrs[lane as usize], expected, "warp {w} lane {lane}");
        }
    }
}

/// The checks' per-worker states go back to the run's findings after their blocks, for the
/// next chunk: they must not hold the findings themselves then, or the two keep each other
/// alive and every launch with checks leaks both (found by the PTX fuzz target under
/// LeakSanitizer). After two runs on several threads, the caller's handle is the last one.
#[test]
fn the_checks_states_do_not_keep_the_findings_alive() {
    let prog = program(
        ".shared .align 4 .b8 tile[256];\n.reg .b32 %r<4>;\nmov.u32 %r1, %tid.x;\n\
         shl.b32 %r2, %r1, 2;\nmov.u32 %r3, tile;\nadd.s32 %r3, %r3, %r2;\n\
         st.shared.u32 [%r3], %r1;\nbar.sync 0;\nld.shared.u32 %r1, [%r3];\nret;",
        "",
    );
    let findings = std::sync::Arc::new(warpscope_simt::Findings::default());
    let mut l = launch(&prog, 64, 64, 0);
    l.findings = Some(findings.clone());
    l.threads = 2;
    for _ in 0..2 {
        let mut n = 0;
        prog.run(&l, &mut |_, _, _| n += 1).unwrap();
        // 64 blocks × 2 warps × a store and a load.
        assert_eq!(n, 256);
    }
    drop(l);
    assert_eq!(std::sync::Arc::strong_count(&findings), 1);
}
