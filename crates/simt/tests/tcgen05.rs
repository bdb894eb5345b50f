//! `tcgen05` (Blackwell's fifth-generation tensor core, PTX ISA §9.7.16) on hand-written
//! PTX: tensor memory allocation and `tcgen05.st`/`tcgen05.ld` round trips, a
//! `tcgen05.mma` m128n16k16 f16 → f32 from shared-memory descriptors whose D is read back
//! through `tcgen05.ld` and probe stores, its shared-memory operand reads and their cost on
//! CC 10.0, and the errors. No Blackwell GPU here: the values follow the ISA, the wavefront
//! rule is wgmma's as measured on the H100 (unmeasured for tcgen05).
//!
//! Probes: `st.global.u8 [p0 + bits]` stores at an address that is the register's bits, so
//! the access's lane addresses are the values.

use warpscope_model::{arch, ComputeCapability, Config, Cost, Op, Space, WarpAccess};
use warpscope_simt::decode::window;
use warpscope_simt::{Alloc, Error, Launch, Program, WarpOrigin};

const SMEM: usize = 32768;
const B_REGION: u64 = 16384;
/// Where `tcgen05.alloc` writes the TMEM address.
const SLOT: u64 = 20480;

fn alloc(k: u64, bytes: Vec<u8>) -> (Alloc, warpscope_init::Contents) {
    let contents = if bytes.is_empty() {
        warpscope_init::Contents::Zero
    } else {
        warpscope_init::Contents::Bytes(bytes.into())
    };
    let base = window::ALLOC_BASE + k * window::ALLOC_SPACING;
    (
        Alloc {
            name: format!("p{k}"),
            base,
            size: None,
        },
        contents,
    )
}

/// Runs kernel `k` of `body` (params p0, p1: pointers) with 128 threads and shared memory
/// `smem`, p1 holding `image`.
fn run(body: &str, image: Vec<u8>) -> Result<(Program, Vec<(u32, WarpAccess, WarpOrigin)>), Error> {
    run_in(body, image, 1)
}

/// [`run`] on a grid of `blocks` blocks in one cluster of `blocks` (1: no cluster).
fn run_in(
    body: &str,
    image: Vec<u8>,
    blocks: u32,
) -> Result<(Program, Vec<(u32, WarpAccess, WarpOrigin)>), Error> {
    let text = format!(
        ".version 8.7\n.target sm_100a\n.address_size 64\n.shared .align 1024 .b8 smem[{SMEM}];\n\
.visible .entry k(.param .u64 p0, .param .u64 p1)\n{{\n\
.reg .pred %p<8>;\n.reg .b32 %r<300>;\n.reg .b64 %rd<40>;\n\
ld.param.u64 %rd30, [p0];\nld.param.u64 %rd1, [p1];\nmov.u32 %r1, %tid.x;\nshr.u32 %r2, %r1, 5;\n\
mov.u32 %r9, smem;\nsetp.lt.u32 %p1, %r1, 32;\n{body}ret;\n}}\n"
    );
    let m = warpscope_ptx::parse(&text).unwrap();
    let e = warpscope_ptx::find_entry(&m, "k").unwrap();
    let p = Program::decode(&m, e)?;
    let allocs = vec![alloc(0, vec![]), alloc(1, image)];
    let args = allocs
        .iter()
        .map(|(a, _)| a.base.to_le_bytes().to_vec())
        .collect();
    let l = Launch {
        block: [128, 1, 1],
        grid: [blocks, 1, 1],
        cluster: [blocks, 1, 1],
        args,
        allocs,
        max_steps: 1 << 24,
        ..Default::default()
    };
    let mut v = Vec::new();
    p.run(&l, &mut |s, a, o| v.push((s, *a, o)))?;
    Ok((p, v))
}

/// Allocates `ncols` columns (warp 0) and loads the address into %r10 in every thread.
fn alloc_ptx(ncols: u32) -> String {
    format!(
        "@%p1 tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [smem+{SLOT}], {ncols};\n\
bar.sync 0;\nld.shared.b32 %r10, [smem+{SLOT}];\n\
@%p1 tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;\n"
    )
}

/// Probes registers `%r{first} …` (count `n`) of every thread.
fn probes(first: u32, n: u32) -> String {
    (first..first + n)
        .map(|r| format!("cvt.u64.u32 %rd31, %r{r};\nadd.s64 %rd32, %rd30, %rd31;\nst.global.u8 [%rd32], 0;\n"))
        .collect()
}

/// The probed values: per warp, per register, per lane.
fn probed(v: &[(u32, WarpAccess, WarpOrigin)], n: usize) -> Vec<Vec<Vec<u64>>> {
    let mut out = vec![vec![Vec::new(); n]; 4];
    let mut seen = [0usize; 4];
    for (_, a, o) in v
        .iter()
        .filter(|(_, a, _)| a.op == Op::Store && a.width == 1 && a.space == Space::Global)
    {
        let w = o.warp as usize;
        out[w][seen[w]] = a.addrs.iter().map(|x| x - window::ALLOC_BASE).collect();
        seen[w] += 1;
    }
    out
}

/// `.32x32b.x8` stored, then loaded back as `.32x32b.x8` and `.16x256b.x1` (4 registers):
/// thread t of warp w stores 1000·w + 10·t + r from register r at its quarter's lanes
/// (address lane 32w), columns 0 … 7; the 32x32b load returns exactly that (cell (32w + t, r)). Reading the same
/// cells through `.16x256b` at lane 32w, column 0: register r of thread l is the cell (row
/// l/4 + 8·((r/2)%2), column r%2 + 2·(l%4)); for l = 5, r = 3: row 1 + 8 = 9, column 1 + 2
/// = 3, which thread 9 stored as its register 3: 1000w + 93.
#[test]
fn store_and_load_round_trip() {
    let mut body = alloc_ptx(64);
    body += "shl.b32 %r11, %r2, 21;\nadd.s32 %r12, %r10, %r11;\nand.b32 %r13, %r1, 31;\nmul.lo.u32 %r14, %r2, 1000;\nmad.lo.u32 %r15, %r13, 10, %r14;\n";
    for r in 0..8 {
        body += &format!("add.u32 %r{}, %r15, {r};\n", 20 + r);
    }
    body += "tcgen05.st.sync.aligned.32x32b.x8.b32 [%r12], {%r20, %r21, %r22, %r23, %r24, %r25, %r26, %r27};\ntcgen05.wait::st.sync.aligned;\n\
tcgen05.ld.sync.aligned.32x32b.x8.b32 {%r30, %r31, %r32, %r33, %r34, %r35, %r36, %r37}, [%r12];\n\
tcgen05.ld.sync.aligned.16x256b.x1.b32 {%r40, %r41, %r42, %r43}, [%r12+0];\ntcgen05.wait::ld.sync.aligned;\n";
    body += &probes(30, 8);
    body += &probes(40, 4);
    body += "bar.sync 0;\n@%p1 tcgen05.dealloc.cta_group::1.sync.aligned.b32 %r10, 64;\n";
    let (_, v) = run(&body, vec![]).unwrap();
    let got = probed(&v, 12);
    for w in 0..4u64 {
        for l in 0..32u64 {
            for r in 0..8u64 {
                assert_eq!(
                    got[w as usize][r as usize][l as usize],
                    1000 * w + 10 * l + r,
                    "32x32b w{w} l{l} r{r}"
                );
            }
            for r in 0..4u64 {
                let (row, col) = (l / 4 + 8 * ((r / 2) % 2), r % 2 + 2 * (l % 4));
                assert_eq!(
                    got[w as usize][8 + r as usize][l as usize],
                    1000 * w + 10 * row + col,
                    "16x256b w{w} l{l} r{r}"
                );
            }
        }
        assert_eq!(got[w as usize][11][5], 1000 * w + 93);
    }
}

fn a_at(m: u64, k: u64) -> i64 {
    ((m * 37 + k * 11 + 5) % 7) as i64 - 3
}
fn b_at(k: u64, n: u64) -> i64 {
    ((n * 13 + k * 29 + 3) % 7) as i64 - 3
}

/// No-swizzle K-major canonical layout, LBO 128, SBO 256: element (mn, k) at
/// (mn/8)·256 + (mn%8)·16 + (k/8)·128 + (k%8)·2.
fn kmajor(mn: u64, k: u64) -> u64 {
    (mn / 8) * 256 + (mn % 8) * 16 + (k / 8) * 128 + (k % 8) * 2
}

/// An sm_100 descriptor: start, LBO 128, SBO 256, version 1 (bit 46), no swizzle.
fn desc(start: u64) -> u64 {
    (start >> 4) | (128 >> 4) << 16 | (256 >> 4) << 32 | 1 << 46
}

/// The MMA kernel: copy the image to shared memory, allocate 32 columns, thread 0 issues
/// `tcgen05.mma` m128n16k16 with `idesc`, commits to an mbarrier every thread waits on;
/// each warp loads its 32 lanes × 16 columns (`.32x32b.x16`) and probes them.
fn mma_body(idesc: u32, a_desc: u64, b_desc: u64) -> String {
    let mut body = format!(
        "mov.u32 %r3, 0;\n$copy:\nmad.lo.u32 %r4, %r3, 128, %r1;\nmul.wide.u32 %rd2, %r4, 16;\nadd.s64 %rd3, %rd1, %rd2;\n\
ld.global.v4.u32 {{%r5, %r6, %r7, %r8}}, [%rd3];\ncvt.u32.u64 %r16, %rd2;\nadd.u32 %r17, %r9, %r16;\n\
st.shared.v4.u32 [%r17], {{%r5, %r6, %r7, %r8}};\nadd.u32 %r3, %r3, 1;\nsetp.lt.u32 %p2, %r3, {};\n@%p2 bra $copy;\n\
setp.eq.u32 %p3, %r1, 0;\n@%p3 mbarrier.init.shared::cta.b64 [smem+{}], 1;\nbar.sync 0;\n",
        SLOT / 16 / 128,
        SLOT + 64
    );
    body += &alloc_ptx(32);
    body += &format!(
        "mov.b64 %rd10, {a_desc:#x};\nmov.b64 %rd11, {b_desc:#x};\nmov.b32 %r18, {idesc:#x};\nsetp.ne.u32 %p4, %r1, %r1;\n\
tcgen05.fence::after_thread_sync;\n\
@%p3 tcgen05.mma.cta_group::1.kind::f16 [%r10+0], %rd10, %rd11, %r18, %p4;\n\
add.u32 %r19, %r9, {};\ncvt.u64.u32 %rd12, %r19;\n\
@%p3 tcgen05.commit.cta_group::1.mbarrier::arrive::one.b64 [%rd12];\n\
mov.u32 %r24, 0;\n$wait:\nmbarrier.try_wait.parity.shared.b64 %p5, [%r19], %r24;\n@!%p5 bra $wait;\n\
shl.b32 %r11, %r2, 21;\nadd.s32 %r12, %r10, %r11;\n\
tcgen05.ld.sync.aligned.32x32b.x16.b32 {{{}}}, [%r12];\ntcgen05.wait::ld.sync.aligned;\n",
        SLOT + 64,
        (100..116).map(|r| format!("%r{r}")).collect::<Vec<_>>().join(", ")
    );
    body += &probes(100, 16);
    body += "bar.sync 0;\n@%p1 tcgen05.dealloc.cta_group::1.sync.aligned.b32 %r10, 32;\n";
    body
}

fn mma_image() -> Vec<u8> {
    let mut img = vec![0u8; SLOT as usize];
    let mut put = |addr: u64, v: i64| {
        let h = half::f16::from_f64(v as f64).to_bits();
        img[addr as usize..addr as usize + 2].copy_from_slice(&h.to_le_bytes());
    };
    for k in 0..16 {
        for m in 0..128 {
            put(kmajor(m, k), a_at(m, k));
        }
        for n in 0..16 {
            put(B_REGION + kmajor(n, k), b_at(k, n));
        }
    }
    img
}

/// idesc M 128, N 16, f16 × f16 → f32, both K-major: D format 1 (bit 4), N/8 = 2 at bits
/// 17–22, M/16 = 8 at bits 24–28: 0x10 | 2 << 17 | 8 << 24 = 0x0804_0010.
const IDESC: u32 = 0x0804_0010;

/// m128n16k16: D[m][n] = Σₖ A[m][k]·B[k][n] with A[m][k] = (37m + 11k + 5) mod 7 − 3,
/// B[k][n] = (13n + 29k + 3) mod 7 − 3; D[0][0] by hand: A[0][·] = 2 −1 3 0 −3 1 −2 2 −1 3 0
/// −3 1 −2 2 −1, B[·][0] = 0 1 2 3 −3 −2 −1 0 1 2 3 −3 −2 −1 0 1, products 0 −1 6 0 9 −2 2 0
/// −1 6 0 9 −2 2 0 −1 = 27. D row r is TMEM lane r, so warp w's thread t reads row 32w + t,
/// its register j column j. The shared reads: A is 128 rows × 32 bytes = 32 core matrices
/// (8 accesses of 4), B 16 × 32 bytes = 4 core matrices (1 access): 9 accesses, one issue,
/// 36 wavefronts and 4096 + 512 bytes on CC 10.0 (one wavefront per core matrix).
#[test]
fn m128n16k16_f16_product_and_reads() {
    let (p, v) = run(&mma_body(IDESC, desc(0), desc(B_REGION)), mma_image()).unwrap();
    let got = probed(&v, 16);
    let d = |m: u64, n: u64| (0..16).map(|k| a_at(m, k) * b_at(k, n)).sum::<i64>();
    assert_eq!(d(0, 0), 27);
    for w in 0..4u64 {
        for l in 0..32u64 {
            for j in 0..16u64 {
                let want = (d(32 * w + l, j) as f32).to_bits() as u64;
                assert_eq!(
                    got[w as usize][j as usize][l as usize], want,
                    "w{w} l{l} col{j}"
                );
            }
        }
    }
    assert_eq!(got[0][0][0], 27f32.to_bits() as u64);
    let reads: Vec<_> = v
        .iter()
        .filter(|(s, _, _)| p.sites[*s as usize].ptx.starts_with("tcgen05.mma"))
        .collect();
    assert_eq!(reads.len(), 9);
    assert!(reads.iter().all(|(_, a, o)| a.space == Space::Shared
        && a.op == Op::Load
        && a.width == 16
        && o.warp == 0));
    // The first access: A's rows 0–7 at k 0–7 (lanes 0–7, 16 bytes apart), then k 8–15
    // (LBO 128 on), rows 8–15 (SBO 256 on), …
    assert_eq!(reads[0].1.addrs[1], 16);
    assert_eq!(reads[0].1.addrs[8], 128);
    assert_eq!(reads[0].1.addrs[16], 256);
    assert_eq!(reads[8].1.addrs[0], B_REGION);
    let cc = arch::lookup(ComputeCapability::new(10, 0)).unwrap();
    let mut total = Cost::default();
    for (_, a, _) in &reads {
        total.add(&warpscope_model::cost(cc, &Config::default(), a));
    }
    assert_eq!(total.wavefronts, 36);
    assert_eq!(total.bytes_requested, 4096 + 512);
}

/// Errors: an ncols that is no power of two, more columns than 512, a warp reaching
/// another quarter's lanes, an unallocated column, a wgmma descriptor given to tcgen05.mma,
/// M 128 with N 8, and cta_group::2 when decoding.
#[test]
fn bad_tcgen05_is_an_error() {
    let fault = |body: &str| match run(body, vec![0; SLOT as usize]) {
        Err(Error::Fault { msg, block, .. }) => {
            assert_eq!(block, [0, 0, 0]);
            msg
        }
        other => panic!("expected a fault, got {:?}", other.map(|_| ())),
    };
    assert!(fault(&alloc_ptx(48)).contains("power of two from 32 to 512"));
    let twice = "@%p1 tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [smem+0], 512;\n\
@%p1 tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [smem+0], 32;\n";
    assert!(fault(twice).contains("deadlock"));
    let mut wrong = alloc_ptx(32);
    wrong += "tcgen05.ld.sync.aligned.32x32b.x1.b32 {%r30}, [%r10];\n";
    let m = fault(&wrong);
    assert!(m.contains("warp 1") && m.contains("lanes 32 … 63"), "{m}");
    let mut cols = alloc_ptx(32);
    cols += "shl.b32 %r11, %r2, 21;\nadd.s32 %r12, %r10, %r11;\ntcgen05.ld.sync.aligned.32x32b.x64.b32 {";
    cols += &(200..264)
        .map(|r| format!("%r{r}"))
        .collect::<Vec<_>>()
        .join(", ");
    cols += "}, [%r12];\n";
    assert!(fault(&cols).contains("columns 0 … 63"));
    let wgmma_desc = desc(0) & !(1 << 46);
    assert!(fault(&mma_body(IDESC, wgmma_desc, desc(B_REGION))).contains("version 0b001"));
    let n8 = (IDESC & !(63 << 17)) | 1 << 17;
    assert!(fault(&mma_body(n8, desc(0), desc(B_REGION))).contains("M = 128, N = 8"));
    // .cta_group::2 without a CTA pair (no cluster).
    let m = fault("tcgen05.alloc.cta_group::2.sync.aligned.shared::cta.b32 [smem+0], 32;\n");
    assert!(m.contains("CTA pair") && m.contains("no peer"), "{m}");
}

// ---- tcgen05.cp, tcgen05.shift, .ws, block scaling and .cta_group::2 ----

/// A kernel over `blocks` blocks (one cluster): each block copies its `SLOT` bytes of the
/// image (block rank r's at `r·SLOT`) to shared memory, warp 0 allocates `ncols` columns
/// (`.cta_group::2` when `blocks` is 2), thread 0 runs `issue` (`%r10` the TMEM address,
/// `%rd10`/`%rd11` the descriptors `a`/`b`, `%r18` the idesc, `%p4` false, `%p7` true),
/// the blocks synchronize, and each warp loads `.32x32b.xN` at its quarter's lane and each
/// `(column, N)` of `loads` into `%r100 …` and probes them.
fn tc_body(
    blocks: u32,
    ncols: u32,
    issue: &str,
    a: u64,
    b: u64,
    idesc: u32,
    loads: &[(u32, u32)],
) -> String {
    let cg = if blocks == 2 { 2 } else { 1 };
    let sync = if blocks == 2 {
        "tcgen05.fence::before_thread_sync;\nbarrier.cluster.arrive.aligned;\nbarrier.cluster.wait.aligned;\ntcgen05.fence::after_thread_sync;\n"
    } else {
        "tcgen05.fence::before_thread_sync;\nbar.sync 0;\ntcgen05.fence::after_thread_sync;\n"
    };
    let mut body = format!(
        "mov.u32 %r50, %cluster_ctarank;\nmul.wide.u32 %rd5, %r50, {SLOT};\nadd.s64 %rd1, %rd1, %rd5;\n\
mov.u32 %r3, 0;\n$copy:\nmad.lo.u32 %r4, %r3, 128, %r1;\nmul.wide.u32 %rd2, %r4, 16;\nadd.s64 %rd3, %rd1, %rd2;\n\
ld.global.v4.u32 {{%r5, %r6, %r7, %r8}}, [%rd3];\ncvt.u32.u64 %r16, %rd2;\nadd.u32 %r17, %r9, %r16;\n\
st.shared.v4.u32 [%r17], {{%r5, %r6, %r7, %r8}};\nadd.u32 %r3, %r3, 1;\nsetp.lt.u32 %p2, %r3, {};\n@%p2 bra $copy;\n\
setp.eq.u32 %p3, %r1, 0;\nbar.sync 0;\n\
@%p1 tcgen05.alloc.cta_group::{cg}.sync.aligned.shared::cta.b32 [smem+{SLOT}], {ncols};\n\
bar.sync 0;\nld.shared.b32 %r10, [smem+{SLOT}];\n\
mov.b64 %rd10, {a:#x};\nmov.b64 %rd11, {b:#x};\nmov.b32 %r18, {idesc:#x};\nsetp.ne.u32 %p4, %r1, %r1;\nsetp.eq.u32 %p7, %r1, %r1;\n\
setp.eq.u32 %p6, %r50, 0;\nand.pred %p3, %p3, %p6;\n",
        SLOT / 16 / 128
    );
    body += &issue
        .replace('\n', "\n")
        .lines()
        .map(|l| format!("@%p3 {l}\n"))
        .collect::<String>();
    body += sync;
    body += "shl.b32 %r11, %r2, 21;\nadd.s32 %r12, %r10, %r11;\n";
    let mut reg = 100;
    for &(col, n) in loads {
        let regs: Vec<String> = (reg..reg + n).map(|r| format!("%r{r}")).collect();
        body += &format!(
            "tcgen05.ld.sync.aligned.32x32b.x{n}.b32 {{{}}}, [%r12+{col}];\n",
            regs.join(", ")
        );
        reg += n;
    }
    body += "tcgen05.wait::ld.sync.aligned;\n";
    body += &probes(100, reg - 100);
    body +=
        &format!("{sync}@%p1 tcgen05.dealloc.cta_group::{cg}.sync.aligned.b32 %r10, {ncols};\n");
    if blocks == 2 {
        body += "barrier.cluster.arrive.aligned;\nbarrier.cluster.wait.aligned;\n";
    }
    body
}

/// [`probed`] for the block of cluster rank `block`.
fn probed_in(v: &[(u32, WarpAccess, WarpOrigin)], n: usize, block: u32) -> Vec<Vec<Vec<u64>>> {
    let v: Vec<_> = v
        .iter()
        .filter(|(_, _, o)| o.block[0] == block)
        .cloned()
        .collect();
    probed(&v, n)
}

/// An image whose every 32-bit word holds its own word index (byte offset / 4).
fn word_image() -> Vec<u8> {
    (0..SLOT / 4)
        .flat_map(|w| (w as u32).to_le_bytes())
        .collect()
}

/// The reads a site whose PTX starts with `op` reported, and their cost on CC 10.0.
fn reads(p: &Program, v: &[(u32, WarpAccess, WarpOrigin)], op: &str) -> (usize, Cost) {
    let cc = arch::lookup(ComputeCapability::new(10, 0)).unwrap();
    let mut total = Cost::default();
    let mut n = 0;
    for (_, a, _) in v
        .iter()
        .filter(|(s, _, _)| p.sites[*s as usize].ptx.starts_with(op))
    {
        assert!(a.space == Space::Shared && a.op == Op::Load && a.width == 16);
        total.add(&warpscope_model::cost(cc, &Config::default(), a));
        n += 1;
    }
    (n, total)
}

/// `tcgen05.cp.128x256b` and `.4x256b` [PTX ISA §9.7.16.9.2] from a no-swizzle descriptor
/// (LBO 128, SBO 256): row r's 16-byte chunk h is at (r/8)·256 + (r%8)·16 + h·128, its
/// four words into columns 4h … 4h+3 of lane r (128x256b) or lane 32r (4x256b). With every
/// word holding its index, lane 9's column 5 is word (256 + 16 + 128 + 4)/4 = 101. The
/// reads: 128 rows × 2 chunks = 256 pieces of 16 bytes (8 accesses; one wavefront a core
/// matrix of 8 rows: 32) and 4 rows × 2 chunks (1 access of 8 pieces: bytes 0–63 and
/// 128–191, the same 16 banks twice: 2 wavefronts).
#[test]
fn cp_copies_rows_from_the_descriptor_into_lanes() {
    let issue = "tcgen05.cp.cta_group::1.128x256b [%r10], %rd10;\ntcgen05.cp.cta_group::1.4x256b [%r10+8], %rd10;";
    let body = tc_body(1, 32, issue, desc(0), 0, 0, &[(0, 8), (8, 8)]);
    let (p, v) = run(&body, word_image()).unwrap();
    let got = probed(&v, 16);
    let word = |r: u64, j: u64| ((r / 8) * 256 + (r % 8) * 16 + (j / 4) * 128 + 4 * (j % 4)) / 4;
    assert_eq!(word(9, 5), 101);
    for w in 0..4u64 {
        for l in 0..32u64 {
            for j in 0..8u64 {
                assert_eq!(
                    got[w as usize][j as usize][l as usize],
                    word(32 * w + l, j),
                    "w{w} l{l} j{j}"
                );
            }
        }
        // 4x256b: row w at lane 32w (thread 0 of warp w).
        for j in 0..8u64 {
            assert_eq!(
                got[w as usize][8 + j as usize][0],
                word(w, j),
                "4x256b w{w} j{j}"
            );
        }
    }
    assert_eq!(got[0][5][9], 101);
    let (n, c) = reads(&p, &v, "tcgen05.cp");
    assert_eq!(
        (n, c.bytes_requested, c.wavefronts),
        (9, 4096 + 128, 32 + 2)
    );
}

/// The multicasts and the decompression [PTX ISA §9.7.16.9.1–2]: `.32x128b.warpx4` puts
/// row r in lanes r + 32q of every warp q; `.64x128b.warpx2::02_13` row r in lanes r and
/// r + 64 (warps 0 and 2 hold rows 0–31, 1 and 3 rows 32–63); `::01_23` in lanes
/// 64·(r/32) + r%32 and that + 32 (warps 0 and 1 rows 0–31, 2 and 3 rows 32–63).
/// `.b8x16.b4x16_p64`: the low 8 bytes' 16 nibbles into 16 bytes, each at bits 2–5; row 0's
/// chunk is words 0, 1, 2, 3: nibble 8 is 1 (word 1), so byte 8 is 4: columns (0, 0, 4, 0).
/// `.b6x16_p32`: 16 6-bit fields of the low 12 bytes; row 1's chunk is words 4 … 7: field 0
/// is 4 (byte 0 = 16), field 5 (bits 30–35) is 5 << 2 = 20 (byte 5 = 80).
#[test]
fn cp_multicasts_and_decompresses() {
    let issue = "tcgen05.cp.cta_group::1.32x128b.warpx4 [%r10], %rd10;\n\
tcgen05.cp.cta_group::1.64x128b.warpx2::02_13 [%r10+4], %rd10;\n\
tcgen05.cp.cta_group::1.64x128b.warpx2::01_23 [%r10+8], %rd10;\n\
tcgen05.cp.cta_group::1.128x128b.b8x16.b4x16_p64 [%r10+12], %rd10;\n\
tcgen05.cp.cta_group::1.128x128b.b8x16.b6x16_p32 [%r10+16], %rd10;";
    let body = tc_body(1, 32, issue, desc(0), 0, 0, &[(0, 16), (16, 4)]);
    let (p, v) = run(&body, word_image()).unwrap();
    let got = probed(&v, 20);
    let word = |r: u64, j: u64| ((r / 8) * 256 + (r % 8) * 16 + 4 * j) / 4;
    for w in 0..4u64 {
        for l in 0..32u64 {
            let g = |c: usize| got[w as usize][c][l as usize];
            let (r02, r01) = (32 * (w % 2) + l, 32 * (w / 2) + l);
            for j in 0..4 {
                assert_eq!(g(j as usize), word(l, j), "warpx4 w{w} l{l}");
                assert_eq!(g(4 + j as usize), word(r02, j), "02_13 w{w} l{l}");
                assert_eq!(g(8 + j as usize), word(r01, j), "01_23 w{w} l{l}");
            }
            // Decompression, by its definition: source bits of row 32w + l, chunk 0.
            let r = 32 * w + l;
            let src: u128 = (0..4).map(|j| (word(r, j) as u128) << (32 * j)).sum();
            for (base, bits) in [(12usize, 4u32), (16, 6)] {
                let out: u128 = (0..16)
                    .map(|i| (((src >> (bits * i)) & ((1 << bits) - 1)) << 2) << (8 * i))
                    .sum();
                for j in 0..4 {
                    assert_eq!(
                        g(base + j) as u128,
                        (out >> (32 * j)) & 0xFFFF_FFFF,
                        "b{bits} r{r}"
                    );
                }
            }
        }
    }
    assert_eq!(
        (got[0][12][0], got[0][13][0], got[0][14][0], got[0][15][0]),
        (0, 0, 4, 0)
    );
    assert_eq!(got[0][16][1] & 0xFF, 16);
    assert_eq!((got[0][17][1] >> 8) & 0xFF, 80);
    // Reads: 32 + 64 + 64 + 128 + 128 rows of 16 bytes.
    let (_, c) = reads(&p, &v, "tcgen05.cp");
    assert_eq!(c.bytes_requested, 16 * (32 + 64 + 64 + 128 + 128));
}

/// `tcgen05.shift.down` [PTX ISA §9.7.16.9.3]: warp 0 stores 1000 + 8t + r in lane t, column
/// r (8 columns); after the shift lane t (t ≥ 1) holds lane t−1's row, lane 0 keeps its own.
#[test]
fn shift_moves_rows_down_one_lane() {
    let mut body = alloc_ptx(32);
    body += "shl.b32 %r11, %r2, 21;\nadd.s32 %r12, %r10, %r11;\nand.b32 %r13, %r1, 31;\nmad.lo.u32 %r15, %r13, 8, 1000;\n";
    for r in 0..8 {
        body += &format!("add.u32 %r{}, %r15, {r};\n", 20 + r);
    }
    body += "tcgen05.st.sync.aligned.32x32b.x8.b32 [%r12], {%r20, %r21, %r22, %r23, %r24, %r25, %r26, %r27};\n\
tcgen05.wait::st.sync.aligned;\nbar.sync 0;\nsetp.eq.u32 %p3, %r1, 0;\n@%p3 tcgen05.shift.cta_group::1.down [%r10];\nbar.sync 0;\n\
tcgen05.ld.sync.aligned.32x32b.x8.b32 {%r30, %r31, %r32, %r33, %r34, %r35, %r36, %r37}, [%r12];\ntcgen05.wait::ld.sync.aligned;\n";
    body += &probes(30, 8);
    let (_, v) = run(&body, vec![]).unwrap();
    let got = probed(&v, 8);
    for l in 0..32u64 {
        for r in 0..8u64 {
            let from = l.saturating_sub(1);
            assert_eq!(
                got[0][r as usize][l as usize],
                1000 + 8 * from + r,
                "l{l} r{r}"
            );
            // Warp 1's partition (lanes 32–63) was not shifted.
            assert_eq!(got[1][r as usize][l as usize], 1000 + 8 * l + r);
        }
    }
}

/// idesc M 128, N 64, f16 × f16 → f32 (N/8 = 8 at bits 17–22).
const IDESC_N64: u32 = 0x10 | 8 << 17 | 8 << 24;

/// An m128nNk16 f16 image: A (a_at) at 0, B (b_at) for N columns at `B_REGION`, K-major.
fn f16_image(n: u64, a_row0: u64, b_col0: u64) -> Vec<u8> {
    let mut img = vec![0u8; SLOT as usize];
    let mut put = |addr: u64, v: i64| {
        let h = half::f16::from_f64(v as f64).to_bits();
        img[addr as usize..addr as usize + 2].copy_from_slice(&h.to_le_bytes());
    };
    for k in 0..16 {
        for m in 0..128 {
            put(kmajor(m, k), a_at(m + a_row0, k));
        }
        for j in 0..n {
            put(B_REGION + kmajor(j, k), b_at(k, j + b_col0));
        }
    }
    img
}

/// `tcgen05.mma.ws` with B collector buffer b0 [PTX ISA §9.7.16.10.9.3]: the first MMA
/// (`::fill`) reads A and B from shared memory, D = A·B; the second (`::lastuse`, D
/// accumulated) reuses B from the buffer although its descriptor points at zeros: D = 2·A·B.
/// Reads: the first A (32 core matrices) and B (64 × 32 bytes: 16), the second A only: 32 +
/// 16 + 32 wavefronts on CC 10.0. A third `::use` finds the buffer empty: an error.
#[test]
fn ws_mma_reuses_b_from_its_collector() {
    let zeros = desc(SLOT - 4096);
    let issue = format!(
        "tcgen05.mma.ws.cta_group::1.kind::f16.collector::b0::fill [%r10], %rd10, %rd11, %r18, %p4;\n\
mov.b64 %rd11, {zeros:#x};\ntcgen05.mma.ws.cta_group::1.kind::f16.collector::b0::lastuse [%r10], %rd10, %rd11, %r18, %p7;"
    );
    let body = tc_body(
        1,
        64,
        &issue,
        desc(0),
        desc(B_REGION),
        IDESC_N64,
        &[(0, 64)],
    );
    let (p, v) = run(&body, f16_image(64, 0, 0)).unwrap();
    let got = probed(&v, 64);
    let d = |m: u64, n: u64| (0..16).map(|k| a_at(m, k) * b_at(k, n)).sum::<i64>();
    for w in 0..4u64 {
        for l in 0..32u64 {
            for j in 0..64u64 {
                let want = ((2 * d(32 * w + l, j)) as f32).to_bits() as u64;
                assert_eq!(
                    got[w as usize][j as usize][l as usize], want,
                    "w{w} l{l} j{j}"
                );
            }
        }
    }
    let (n, c) = reads(&p, &v, "tcgen05.mma");
    assert_eq!(
        (n, c.wavefronts, c.bytes_requested),
        (8 + 4 + 8, 32 + 16 + 32, 4096 + 2048 + 4096)
    );
    let again =
        "tcgen05.mma.ws.cta_group::1.kind::f16.collector::b1::use [%r10], %rd10, %rd11, %r18, %p7;";
    let body = tc_body(1, 64, again, desc(0), desc(B_REGION), IDESC_N64, &[]);
    match run(&body, f16_image(64, 0, 0)) {
        Err(Error::Fault { msg, .. }) => assert!(
            msg.contains("collector buffer b1") && msg.contains("::fill first"),
            "{msg}"
        ),
        other => panic!("{:?}", other.map(|_| ())),
    }
}

/// E4M3 bits of the integers −3 … 3 (bias 7: 1 = 0x38, 2 = 0x40, 3 = 0x44, sign bit 7).
fn e4m3(v: i64) -> u8 {
    let m = [0x00, 0x38, 0x40, 0x44][v.unsigned_abs() as usize];
    if v < 0 {
        m | 0x80
    } else {
        m
    }
}

/// Block-scaled `.kind::mxf8f6f4` `.scale_vec::1X` [PTX ISA §9.7.16.10.7], M 128, N 16,
/// K 32, E4M3 × E4M3 with UE8M0 scales: A's row r scaled by 2^(r%3) (byte 127 + r%3 in
/// lane r of the scale-A column 16), B's columns by 2^1 (byte 128 in column 17). idesc:
/// N/8 = 2 at bits 17–22, UE8M0 (bit 23), M/128 = 1 at bits 27–28, IDs 0. D[r][n] =
/// 2^(r%3)·2·Σₖ A·B (exact in f32): D[1][0] = 2·2·Σₖ a_at(1, k)·b_at(k, 0) = 4·3 = 12.
#[test]
fn block_scaled_mxf8f6f4_multiplies_by_the_scale_factors() {
    let mut img = vec![0u8; SLOT as usize];
    // 1-byte elements, K-major, LBO 128, SBO 256: (mn/8)·256 + (mn%8)·16 + (k/16)·128 + k%16.
    let at = |mn: u64, k: u64| ((mn / 8) * 256 + (mn % 8) * 16 + (k / 16) * 128 + k % 16) as usize;
    for k in 0..32 {
        for m in 0..128 {
            img[at(m, k)] = e4m3(a_at(m, k));
        }
        for n in 0..16 {
            img[B_REGION as usize + at(n, k)] = e4m3(b_at(k, n));
        }
    }
    let idesc: u32 = 2 << 17 | 1 << 23 | 1 << 27;
    // The scale factors: every warp stores its 32 lanes' bytes into columns 16 and 17.
    let issue = "tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale.scale_vec::1X [%r10], %rd10, %rd11, %r18, [%r10+16], [%r10+17], %p4;";
    let mut body = tc_body(1, 32, issue, desc(0), desc(B_REGION), idesc, &[(0, 16)]);
    let scales = "shl.b32 %r41, %r2, 21;\nadd.s32 %r42, %r10, %r41;\nrem.u32 %r43, %r1, 3;\nadd.u32 %r44, %r43, 127;\nmov.u32 %r45, 128;\n\
tcgen05.st.sync.aligned.32x32b.x2.b32 [%r42+16], {%r44, %r45};\ntcgen05.wait::st.sync.aligned;\nbar.sync 0;\n";
    let cut = body.find("mov.b64 %rd10").unwrap();
    body.insert_str(cut, scales);
    let (p, v) = run(&body, img).unwrap();
    let got = probed(&v, 16);
    let d = |m: u64, n: u64| (0..32).map(|k| a_at(m, k) * b_at(k, n)).sum::<i64>();
    for w in 0..4u64 {
        for l in 0..32u64 {
            let r = 32 * w + l;
            for j in 0..16u64 {
                let want = ((d(r, j) << (r % 3)) * 2) as f32;
                assert_eq!(
                    got[w as usize][j as usize][l as usize],
                    want.to_bits() as u64,
                    "r{r} n{j}"
                );
            }
        }
    }
    assert_eq!(got[0][0][1], 12f32.to_bits() as u64);
    // Reads: A 128 × 32 bytes (32 core matrices), B 16 × 32 (4).
    let (_, c) = reads(&p, &v, "tcgen05.mma");
    assert_eq!((c.wavefronts, c.bytes_requested), (36, 4096 + 512));
}

/// `.cta_group::2`, M 256, N 32 [PTX ISA §9.7.16.5, §9.7.16.10.5 Layout A]: thread 0 of
/// the even block issues it; A's rows 0–127 come from the even block's shared memory,
/// 128–255 from the odd's, B's columns 0–15 from the even's and 16–31 from the odd's (both
/// at the same descriptor addresses), D's rows 0–127 go to the even block's tensor memory,
/// 128–255 to the odd's (lane = row % 128). The images make it one product: the odd block's
/// A rows are a_at(128 + m, ·) and its B columns b_at(·, 16 + n), so D[R][j] =
/// Σₖ a_at(R, k)·b_at(k, j) for R < 256, j < 32. Reads: each block's A (32 core matrices)
/// and B half (16 columns: 4).
#[test]
fn cta_pair_mma_spans_both_blocks() {
    let idesc: u32 = 0x10 | 4 << 17 | 16 << 24;
    let issue = "tcgen05.mma.cta_group::2.kind::f16 [%r10], %rd10, %rd11, %r18, %p4;";
    let body = tc_body(2, 32, issue, desc(0), desc(B_REGION), idesc, &[(0, 32)]);
    let mut image = f16_image(16, 0, 0);
    image.extend(f16_image(16, 128, 16));
    let (p, v) = run_in(&body, image, 2).unwrap();
    let d = |m: u64, n: u64| (0..16).map(|k| a_at(m, k) * b_at(k, n)).sum::<i64>();
    for block in 0..2u32 {
        let got = probed_in(&v, 32, block);
        for w in 0..4u64 {
            for l in 0..32u64 {
                let row = 128 * block as u64 + 32 * w + l;
                for j in 0..32u64 {
                    let want = (d(row, j) as f32).to_bits() as u64;
                    assert_eq!(
                        got[w as usize][j as usize][l as usize], want,
                        "b{block} R{row} j{j}"
                    );
                }
            }
        }
    }
    let (n, c) = reads(&p, &v, "tcgen05.mma");
    assert_eq!((n, c.wavefronts), (2 * (8 + 1), 2 * (32 + 4)));
    // A copy with .cta_group::2 fills the peer's tensor memory too (from its own shared
    // memory): the odd block's lane 0 holds its image's words.
    let issue = "tcgen05.cp.cta_group::2.128x128b [%r10], %rd10;";
    let body = tc_body(2, 32, issue, desc(0), 0, 0, &[(0, 4)]);
    let mut image = word_image();
    image.extend((0..SLOT / 4).flat_map(|w| (w as u32 + 7).to_le_bytes()));
    let (_, v) = run_in(&body, image, 2).unwrap();
    assert_eq!(probed_in(&v, 4, 0)[0][1][0], 1);
    assert_eq!(probed_in(&v, 4, 1)[0][1][0], 8);
}

/// Decoding errors of the new forms, and the stored nvcc output for sm_100a
/// (tests/data/tcgen05/, every cp shape, shift, .cta_group::2, .ws and block-scaled MMAs):
/// both of its kernels decode.
#[test]
fn new_tcgen05_forms_decode_or_name_the_rule() {
    let invalid = |line: &str| match run(&format!("{line}\n"), vec![]) {
        Err(Error::Invalid { msg, .. }) => msg,
        other => panic!("{line}: {:?}", other.map(|_| ())),
    };
    assert!(invalid("tcgen05.cp.cta_group::1.64x128b [%r10], %rd10;")
        .contains("requires .warpx2::02_13 or .warpx2::01_23"));
    assert!(
        invalid("tcgen05.cp.cta_group::1.128x256b.warpx4 [%r10], %rd10;")
            .contains("takes no multicast")
    );
    assert!(
        invalid("tcgen05.cp.cta_group::1.128x256b.b8x16 [%r10], %rd10;")
            .contains("one source format")
    );
    assert!(invalid("tcgen05.cp.cta_group::1.96x128b [%r10], %rd10;").contains("one of .128x256b"));
    assert!(invalid("tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale.scale_vec::2X [%r10], %rd10, %rd11, %r18, [%r10], [%r10], %p4;").contains("mxf8f6f4 1X"));
    assert!(
        invalid("tcgen05.mma.cta_group::1.kind::mxf4 [%r10], %rd10, %rd11, %r18, %p4;")
            .contains("block-scaled")
    );
    assert!(
        invalid("tcgen05.mma.ws.cta_group::2.kind::f16 [%r10], %rd10, %rd11, %r18, %p4;")
            .contains(".ws is .cta_group::1")
    );
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/data/tcgen05/tcgen05_ops.ptx"
    ))
    .unwrap();
    let m = warpscope_ptx::parse(&text).unwrap();
    for k in ["_Z11tcgen05_opsmjPi", "_Z10tcgen05_wsmjPi"] {
        let e = warpscope_ptx::find_entry(&m, k).unwrap();
        Program::decode(&m, e).unwrap_or_else(|e| panic!("{k}: {e}"));
    }
}

/// E2M1 codes (sign bit 3, 2 exponent bits, 1 mantissa bit) and their values: 0, 0.5, 1,
/// 1.5, 2, 3, 4, 6 [PTX ISA §5.2.5.2].
const E2M1: [f64; 8] = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0];

fn e2m1_code(m: u64, k: u64, salt: u64) -> u8 {
    ((m * 3 + k * 5 + salt) % 8) as u8 | if (m + k + salt) % 3 == 0 { 8 } else { 0 }
}

fn e2m1_value(c: u8) -> f64 {
    let v = E2M1[(c & 7) as usize];
    if c & 8 != 0 {
        -v
    } else {
        v
    }
}

/// `.kind::f8f6f4` with E2M1 (4-bit) A and B [PTX ISA §9.7.16.10.4]: A (128 × 32) is
/// copied to tensor memory by `tcgen05.cp.128x256b.b8x16.b4x16_p64` from the padded shared
/// form (16 nibbles, then 8 bytes of padding, each 16-byte chunk), which puts one element
/// a byte into TMEM; B (32 × 16) is read by the MMA in the padded form. D[r][n] =
/// Σₖ A·B, exact (multiples of 1/4). Reads: the copy's 128 rows × 32 bytes (32 core
/// matrices), the MMA's B only (4).
#[test]
fn f8f6f4_e2m1_through_a_decompressing_copy() {
    let mut img = vec![0u8; SLOT as usize];
    // Row mn's element k: chunk k/16 at (mn/8)·256 + (mn%8)·16 + (k/16)·128, nibble k%16.
    let mut put = |base: usize, mn: u64, k: u64, c: u8| {
        let at = base + ((mn / 8) * 256 + (mn % 8) * 16 + (k / 16) * 128 + (k % 16) / 2) as usize;
        img[at] |= c << (4 * (k % 2));
    };
    for k in 0..32 {
        for m in 0..128 {
            put(0, m, k, e2m1_code(m, k, 0));
        }
        for n in 0..16 {
            put(B_REGION as usize, n, k, e2m1_code(n, k, 1));
        }
    }
    let idesc: u32 = 1 << 4 | 5 << 7 | 5 << 10 | 2 << 17 | 8 << 24;
    let issue = "tcgen05.cp.cta_group::1.128x256b.b8x16.b4x16_p64 [%r10+32], %rd10;\n\
tcgen05.mma.cta_group::1.kind::f8f6f4 [%r10], [%r10+32], %rd11, %r18, %p4;";
    let body = tc_body(1, 64, issue, desc(0), desc(B_REGION), idesc, &[(0, 16)]);
    let (p, v) = run(&body, img).unwrap();
    let got = probed(&v, 16);
    let d = |m: u64, n: u64| -> f64 {
        (0..32)
            .map(|k| e2m1_value(e2m1_code(m, k, 0)) * e2m1_value(e2m1_code(n, k, 1)))
            .sum()
    };
    for w in 0..4u64 {
        for l in 0..32u64 {
            for j in 0..16u64 {
                let want = (d(32 * w + l, j) as f32).to_bits() as u64;
                assert_eq!(
                    got[w as usize][j as usize][l as usize],
                    want,
                    "r{} n{j}",
                    32 * w + l
                );
            }
        }
    }
    assert_eq!(reads(&p, &v, "tcgen05.cp").1.wavefronts, 32);
    assert_eq!(reads(&p, &v, "tcgen05.mma").1.wavefronts, 4);
}

/// `.kind::mxf4nvf4` `.scale_vec::4X` with UE4M3 factors [PTX ISA §9.7.16.10.7]: A
/// (128 × 64) and B (64 × 16) E2M1 packed two a byte, low nibble first, K in 4 chunks of 16;
/// A's factors (1, 2, 0.5, 1) as E4M3 bytes 0x38, 0x40, 0x30, 0x38 in every lane of column
/// 16, B's (2, 1, 1, 2) in column 17; idesc bit 23 = 0 (UE4M3), M/128 at bits 27–28.
/// D[r][n] = Σₖ fa(k/16)·fb(k/16)·A·B. Reads: A 128 × 32 bytes, B 16 × 32: 32 + 4 core
/// matrices.
#[test]
fn mxf4nvf4_4x_ue4m3_scales_each_chunk_of_k() {
    let mut img = vec![0u8; SLOT as usize];
    let mut put = |base: usize, mn: u64, k: u64, c: u8| {
        let byte = k / 2;
        let at = base + ((mn / 8) * 256 + (mn % 8) * 16 + (byte / 16) * 128 + byte % 16) as usize;
        img[at] |= c << (4 * (k % 2));
    };
    for k in 0..64 {
        for m in 0..128 {
            put(0, m, k, e2m1_code(m, k, 2));
        }
        for n in 0..16 {
            put(B_REGION as usize, n, k, e2m1_code(n, k, 3));
        }
    }
    let idesc: u32 = 1 << 7 | 1 << 10 | 2 << 17 | 1 << 27;
    let issue = "tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale.scale_vec::4X [%r10], %rd10, %rd11, %r18, [%r10+16], [%r10+17], %p4;";
    let mut body = tc_body(1, 32, issue, desc(0), desc(B_REGION), idesc, &[(0, 16)]);
    let scales = "shl.b32 %r41, %r2, 21;\nadd.s32 %r42, %r10, %r41;\nmov.u32 %r44, 0x38304038;\nmov.u32 %r45, 0x40383840;\n\
tcgen05.st.sync.aligned.32x32b.x2.b32 [%r42+16], {%r44, %r45};\ntcgen05.wait::st.sync.aligned;\nbar.sync 0;\n";
    let cut = body.find("mov.b64 %rd10").unwrap();
    body.insert_str(cut, scales);
    let (p, v) = run(&body, img).unwrap();
    let got = probed(&v, 16);
    let (fa, fb) = ([1.0, 2.0, 0.5, 1.0], [2.0, 1.0, 1.0, 2.0]);
    let d = |m: u64, n: u64| -> f64 {
        (0..64u64)
            .map(|k| {
                let j = (k / 16) as usize;
                fa[j] * fb[j] * e2m1_value(e2m1_code(m, k, 2)) * e2m1_value(e2m1_code(n, k, 3))
            })
            .sum()
    };
    for w in 0..4u64 {
        for l in 0..32u64 {
            for j in 0..16u64 {
                let want = (d(32 * w + l, j) as f32).to_bits() as u64;
                assert_eq!(
                    got[w as usize][j as usize][l as usize],
                    want,
                    "r{} n{j}",
                    32 * w + l
                );
            }
        }
    }
    assert_eq!(reads(&p, &v, "tcgen05.mma").1.wavefronts, 36);
}

/// `tcgen05.commit.cta_group::2 … .multicast::cluster [mbar], 0b11` [PTX ISA §9.7.16.12.1]:
/// one arrival on the mbarrier at the same offset in both blocks of the pair, so that the
/// odd block, which issued nothing, sees its phase 0 complete (without the arrival its wait
/// never ends: a deadlock error), then reads its half of D (rows 128–255, as in
/// `cta_pair_mma_spans_both_blocks`). A mask naming rank 2 of a 2-block cluster is an error.
#[test]
fn pair_commit_arrives_in_every_block_of_the_mask() {
    let idesc: u32 = 0x10 | 4 << 17 | 16 << 24;
    let bar = SLOT + 64;
    let issue = format!(
        "tcgen05.mma.cta_group::2.kind::f16 [%r10], %rd10, %rd11, %r18, %p4;\nadd.u32 %r19, %r9, {bar};\n\
tcgen05.commit.cta_group::2.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64 [%r19], 3;"
    );
    let mut body = tc_body(2, 32, &issue, desc(0), desc(B_REGION), idesc, &[(0, 32)]);
    let init = format!(
        "setp.eq.u32 %p5, %r1, 0;\n@%p5 mbarrier.init.shared::cta.b64 [smem+{bar}], 1;\n\
barrier.cluster.arrive.aligned;\nbarrier.cluster.wait.aligned;\n"
    );
    let cut = body.find("mov.b64 %rd10").unwrap();
    body.insert_str(cut, &init);
    let wait = format!(
        "add.u32 %r20, %r9, {bar};\nmov.u32 %r24, 0;\n$wait:\nmbarrier.try_wait.parity.shared.b64 %p5, [%r20], %r24;\n@!%p5 bra $wait;\n"
    );
    let cut = body.find("shl.b32 %r11, %r2, 21;\nadd.s32 %r12").unwrap();
    body.insert_str(cut, &wait);
    let mut image = f16_image(16, 0, 0);
    image.extend(f16_image(16, 128, 16));
    let (_, v) = run_in(&body, image.clone(), 2).unwrap();
    let d = |m: u64, n: u64| (0..16).map(|k| a_at(m, k) * b_at(k, n)).sum::<i64>();
    let got = probed_in(&v, 32, 1);
    assert_eq!(got[2][5][7], (d(128 + 64 + 7, 5) as f32).to_bits() as u64);
    let mask2 = body.replace(
        "multicast::cluster.b64 [%r19], 3;",
        "multicast::cluster.b64 [%r19], 5;",
    );
    match run_in(&mask2, image.clone(), 2) {
        Err(Error::Fault { msg, .. }) => assert!(msg.contains("names cluster rank 2"), "{msg}"),
        other => panic!("{:?}", other.map(|_| ())),
    }
    // Without .multicast::cluster only the issuing block's barrier completes.
    let own = body.replace(
        ".shared::cluster.multicast::cluster.b64 [%r19], 3;",
        ".b64 [%r19];",
    );
    match run_in(&own, image, 2) {
        Err(Error::Fault { msg, .. }) => assert!(msg.contains("deadlock"), "{msg}"),
        other => panic!("{:?}", other.map(|_| ())),
    }
}
