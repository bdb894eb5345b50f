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
    match run(
        "tcgen05.alloc.cta_group::2.sync.aligned.shared::cta.b32 [smem+0], 32;\n",
        vec![],
    ) {
        Err(Error::Unsupported { why, .. }) => assert!(why.contains("cta_group::2")),
        other => panic!("{:?}", other.map(|_| ())),
    }
}
