//! Device-side tensor maps on small hand-written PTX kernels: `tensormap.replace` builds a
//! map in shared memory, `tensormap.cp_fenceproxy` copies it to global memory, and
//! `cp.async.bulk.tensor` reads the map from there; and the errors of bad maps.
//!
//! Values are checked through the address of a global store that uses them as an offset:
//! `out(v)` stores at `p0 + 4096 + 4·v`. The global allocation `p0` holds the u32 words
//! `100 + i`; the map is copied to `p0 + 8192`.

use warpscope_model::{arch, cost, ComputeCapability, Config, Cost, Op, Space, WarpAccess};
use warpscope_simt::decode::window;
use warpscope_simt::{Alloc, Error, Launch, Program, WarpOrigin};

const BASE: u64 = window::ALLOC_BASE;
const OUT: u64 = 4096;

fn try_program(body: &str) -> Result<Program, Error> {
    let text = format!(
        ".version 8.5\n.target sm_90a\n.address_size 64\n\
         .shared .align 128 .b8 buf[2048];\n.shared .align 8 .b64 bar0;\n\
         .visible .entry k(.param .u64 p0)\n{{\n\
         .reg .b32 %r<40>;\n.reg .b64 %rd<20>;\n.reg .pred %p<8>;\n\
         ld.param.u64 %rd1, [p0];\nmov.u32 %r1, %tid.x;\nmov.u32 %r3, buf;\nmov.u32 %r4, bar0;\n\
         add.s64 %rd10, %rd1, 8192;\nsetp.ne.u32 %p6, %r1, 0;\n{body}\n}}\n"
    );
    let m = warpscope_ptx::parse(&text).unwrap();
    let e = warpscope_ptx::find_entry(&m, "k").unwrap();
    Program::decode(&m, e)
}

fn program(body: &str) -> Program {
    try_program(body).unwrap()
}

fn out(reg: &str) -> String {
    format!(
        "mul.wide.u32 %rd8, {reg}, 4;\nadd.s64 %rd9, %rd1, %rd8;\nst.global.u32 [%rd9+{OUT}], 0;\n"
    )
}

fn launch(threads: u32) -> Launch {
    let words: Vec<u8> = (0..1024u32).flat_map(|i| (100 + i).to_le_bytes()).collect();
    Launch {
        block: [threads, 1, 1],
        args: vec![BASE.to_le_bytes().to_vec()],
        allocs: vec![(
            Alloc {
                name: "p0".into(),
                base: BASE,
                size: Some(16384),
            },
            warpscope_init::Contents::Bytes(words.into()),
        )],
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

fn total(p: &Program, v: &Accesses, space: Space, op: Op, ptx: &str) -> Cost {
    let h100 = arch::lookup(ComputeCapability::new(9, 0)).unwrap();
    let mut c = Cost::default();
    for (s, a, _) in v {
        if a.space == space && a.op == op && p.sites[*s as usize].ptx.starts_with(ptx) {
            c.add(&cost(h100, &Config::default(), a));
        }
    }
    c
}

/// Thread 0 fills the map at `buf` with `fields` (lines of `tensormap.replace` after
/// `.tile.`, on `[%r3]`), the warp copies it to `p0 + 8192`, thread 0 loads the box at
/// coordinates `coords` through it into `buf + 1024` and every thread waits for it.
fn kernel(fields: &[&str], coords: &str, after: &str) -> String {
    let mut s = String::from("@!%p6 mbarrier.init.shared::cta.b64 [%r4], 1;\n");
    for f in fields {
        s += &format!("@!%p6 tensormap.replace.tile.{f};\n");
    }
    s += "bar.sync 0;\n\
          tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.gpu.sync.aligned [%rd10], [%r3], 128;\n\
          fence.proxy.tensormap::generic.acquire.gpu [%rd10], 128;\n\
          cvta.global.u64 %rd11, %rd10;\nadd.u32 %r5, %r3, 1024;\n\
          @!%p6 mbarrier.arrive.expect_tx.shared::cta.b64 %rd2, [%r4], 256;\n";
    s += &format!(
        "@!%p6 cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%r5], [%rd11, {{{coords}}}], [%r4];\n\
         WAIT:\nmbarrier.try_wait.parity.shared::cta.b64 %p7, [%r4], 0;\n@!%p7 bra WAIT;\n{after}ret;"
    );
    s
}

/// A map of the u32 words of p0 as 8 rows of 32 (128 bytes a row), a box of 16 × 4.
const FIELDS: [&str; 13] = [
    "global_address.shared::cta.b1024.b64 [%r3], %rd1",
    "rank.shared::cta.b1024.b32 [%r3], 1",
    "box_dim.shared::cta.b1024.b32 [%r3], 0, 16",
    "box_dim.shared::cta.b1024.b32 [%r3], 1, 4",
    "global_dim.shared::cta.b1024.b32 [%r3], 0, 32",
    "global_dim.shared::cta.b1024.b32 [%r3], 1, 8",
    "global_stride.shared::cta.b1024.b64 [%r3], 0, 128",
    "element_stride.shared::cta.b1024.b32 [%r3], 0, 1",
    "element_stride.shared::cta.b1024.b32 [%r3], 1, 1",
    "elemtype.shared::cta.b1024.b32 [%r3], 2",
    "interleave_layout.shared::cta.b1024.b32 [%r3], 0",
    "swizzle_mode.shared::cta.b1024.b32 [%r3], 0",
    "fill_mode.shared::cta.b1024.b32 [%r3], 0",
];

#[test]
fn a_map_built_on_the_device_places_the_tma_load() {
    // Box at (column 8, row 2): shared word [r][c] = 100 + 32·(2 + r) + 8 + c. Thread t
    // reads box word t (t < 32: rows 0–1): out(word).
    let after = format!(
        "shl.b32 %r6, %r1, 2;\nadd.u32 %r7, %r5, %r6;\nld.shared.u32 %r8, [%r7];\n{}",
        out("%r8")
    );
    let p = program(&kernel(&FIELDS, "%r10, %r11", &after).replace(
        "@!%p6 mbarrier.init",
        "mov.u32 %r10, 8;\nmov.u32 %r11, 2;\n@!%p6 mbarrier.init",
    ));
    let v = run(&p, &launch(32)).unwrap();
    let mut got: Vec<u64> = v
        .iter()
        .filter(|x| x.1.space == Space::Global && x.1.op == Op::Store)
        .flat_map(|x| {
            x.1.active()
                .map(|(_, a)| (a - BASE - OUT) / 4)
                .collect::<Vec<_>>()
        })
        .collect();
    got.sort();
    let want: Vec<u64> = (0..32u64)
        .map(|t| 100 + 32 * (2 + t / 16) + 8 + t % 16)
        .collect();
    assert_eq!(got, want);
    // The TMA's global side: 4 rows of 64 bytes at 128·(2 + r) + 32, each 2 sectors: one
    // request of 16 chunks, 8 sectors.
    let g = total(&p, &v, Space::Global, Op::Load, "cp.async.bulk.tensor");
    assert_eq!((g.requests, g.sectors), (1, 8));
    // The copy of the map: one warp-wide 4-byte access each side, 128 bytes: 1 shared
    // wavefront, 4 global sectors of an atomic (ATOMG.EXCH).
    let s = total(&p, &v, Space::Shared, Op::Load, "tensormap.cp_fenceproxy");
    assert_eq!((s.requests, s.wavefronts), (1, 1));
    let a = total(&p, &v, Space::Global, Op::Atomic, "tensormap.cp_fenceproxy");
    assert_eq!((a.requests, a.sectors), (1, 4));
    // tensormap.replace as ptxas compiles it: thread 0's 10 loads and 14 stores of 4 bytes
    // (the global address 8), one wavefront each.
    let l = total(&p, &v, Space::Shared, Op::Load, "tensormap.replace");
    let s = total(&p, &v, Space::Shared, Op::Store, "tensormap.replace");
    assert_eq!(
        (l.requests, l.wavefronts, s.requests, s.wavefronts),
        (10, 10, 14, 14)
    );
}

fn fault(fields: &[&str], coords: &str) -> String {
    let p = program(&kernel(fields, coords, ""));
    match run(&p, &launch(32)) {
        Err(e) => e.to_string(),
        Ok(_) => panic!("no error"),
    }
}

fn with(field: &str, line: &str) -> Vec<String> {
    FIELDS
        .iter()
        .map(|f| {
            if f.starts_with(field) {
                line.to_string()
            } else {
                f.to_string()
            }
        })
        .collect()
}

#[test]
fn bad_maps_are_clear_errors() {
    let refs = |v: &[String]| -> String {
        let r: Vec<&str> = v.iter().map(|s| s.as_str()).collect();
        fault(&r, "0, 0")
    };
    // A box wider than the hardware allows, a stride that does not fit, a rank too large
    // for the coordinates, a register value out of an enumeration's range.
    let e = refs(&with(
        "box_dim.shared::cta.b1024.b32 [%r3], 0",
        "box_dim.shared::cta.b1024.b32 [%r3], 0, 300",
    ));
    assert!(
        e.contains("tensor map at") && e.contains("tensormap.replace") && e.contains("1 to 256"),
        "{e}"
    );
    let e = refs(&with(
        "global_stride",
        "global_stride.shared::cta.b1024.b64 [%r3], 0, 64",
    ));
    assert!(e.contains("does not fit its tensor"), "{e}");
    let e = refs(&with(
        "global_dim.shared::cta.b1024.b32 [%r3], 1",
        "global_dim.shared::cta.b1024.b32 [%r3], 1, 0",
    ));
    assert!(e.contains("dimension 1 of 0 elements"), "{e}");
    let mut f = with("rank", "rank.shared::cta.b1024.b32 [%r3], 2");
    let e = refs(&f);
    assert!(e.contains("stride of dimension 2 (0 bytes)"), "{e}");
    f.push("global_stride.shared::cta.b1024.b64 [%r3], 1, 1024".into());
    let e = refs(&f);
    assert!(
        e.contains("a 2-d tensor copy through a 3-d tensor map"),
        "{e}"
    );
    let mut f = with("elemtype", "elemtype.shared::cta.b1024.b32 [%r3], %r30");
    f.insert(0, "global_dim.shared::cta.b1024.b32 [%r3], 0, 32".into());
    let body = kernel(
        &f.iter().map(|s| s.as_str()).collect::<Vec<_>>(),
        "0, 0",
        "",
    )
    .replace(
        "@!%p6 mbarrier.init",
        "mov.u32 %r30, 20;\n@!%p6 mbarrier.init",
    );
    let e = run(&program(&body), &launch(32)).unwrap_err().to_string();
    assert!(e.contains("20 is no .elemtype value (0 to 15)"), "{e}");
    // The map left in shared memory: the TMA reads maps from global, const or param memory.
    let body = kernel(&FIELDS, "0, 0", "")
        .replace("[%rd11, {", "[%rd12, {")
        .replace(
            "cvta.global.u64 %rd11, %rd10;",
            "cvt.u64.u32 %rd13, %r3;\ncvta.shared.u64 %rd12, %rd13;",
        );
    let e = run(&program(&body), &launch(32)).unwrap_err().to_string();
    assert!(
        e.contains("Shared memory") && e.contains("cp_fenceproxy"),
        "{e}"
    );
    // A copy of the map outside every allocation (p0 is 16,384 bytes).
    let body = kernel(&FIELDS, "0, 0", "").replace("[%rd10], [%r3], 128", "[%rd14], [%r3], 128");
    let body = body.replace("bar.sync 0;", "bar.sync 0;\nadd.s64 %rd14, %rd1, 16384;");
    let e = run(&program(&body), &launch(32)).unwrap_err().to_string();
    assert!(
        e.contains("not inside one of the launch's allocations"),
        "{e}"
    );
}

#[test]
fn bad_tensormap_instructions_are_clear_errors() {
    let err = |line: &str| match try_program(&format!("{line};\nret;")) {
        Err(e) => e.to_string(),
        Ok(_) => panic!("decoded: {line}"),
    };
    let e = err("tensormap.replace.tile.box_dim.shared::cta.b1024.b32 [%r3], 5, 16");
    assert!(e.contains("ord 5") && e.contains("0 to 4"), "{e}");
    let e = err("tensormap.replace.tile.global_stride.shared::cta.b1024.b64 [%r3], 4, %rd1");
    assert!(e.contains("ord 4") && e.contains("0 to 3"), "{e}");
    let e = err("tensormap.replace.tile.swizzle_mode.shared::cta.b1024.b32 [%r3], 7");
    assert!(e.contains("7 is no .swizzle_mode value (0 to 4)"), "{e}");
    let e = err("tensormap.replace.tile.global_address.shared::cta.b1024.b32 [%r3], %r1");
    assert!(e.contains("takes a .b64 value"), "{e}");
    let e = err("tensormap.replace.tile.rank.shared::cta.b1024.b32 [%r3], 5");
    assert!(e.contains("rank minus one"), "{e}");
    let e = err(
        "tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.gpu.sync.aligned [%rd10], [%r3], 64",
    );
    assert!(e.contains("128 bytes"), "{e}");
}
