//! ptxas's merges applied to the executor's accesses (`Program::apply_sass`): four scalar
//! shared loads of consecutive words become one 16-byte access when the SASS says so, and
//! stay as written whenever the group cannot be proven from the PTX.

use warpscope_model::Space;
use warpscope_simt::sass::{SassFate, SassInst};
use warpscope_simt::{Launch, Program};

const LOADS: [&str; 4] = [
    "ld.shared.f32 %f1, [%r4];",
    "ld.shared.f32 %f2, [%r4+4];",
    "ld.shared.f32 %f3, [%r4+8];",
    "ld.shared.f32 %f4, [%r4+12];",
];

/// Lane `t` reads the four words at `16·t` of a shared tile; `between` goes after the second
/// load.
fn program(between: &str) -> Program {
    let body = format!(
        ".reg .b32 %r<8>;\n.reg .f32 %f<8>;\nmov.u32 %r1, %tid.x;\nshl.b32 %r2, %r1, 4;\n\
         mov.u32 %r3, tile;\nadd.s32 %r4, %r3, %r2;\n{}\n{}\n{between}\n{}\n{}\nret;",
        LOADS[0], LOADS[1], LOADS[2], LOADS[3]
    );
    decode(&body)
}

/// The entry `k()` with `body`, beside a 1,024-byte shared `tile`, decoded.
fn decode(body: &str) -> Program {
    let text = format!(
        ".version 8.0\n.target sm_90\n.address_size 64\n.shared .align 16 .b8 tile[1024];\n\
         .visible .entry k()\n{{\n{body}\n}}\n"
    );
    let m = warpscope_ptx::parse(&text).unwrap();
    let e = warpscope_ptx::find_entry(&m, "k").unwrap();
    Program::decode(&m, e).unwrap()
}

fn line(p: &Program, k: usize) -> u32 {
    p.sites[k].ptx_line
}

/// (site, width, lane 1's address) of every access of one warp.
fn accesses(p: &Program) -> Vec<(u32, u32, u64)> {
    let l = Launch {
        grid: [1, 1, 1],
        block: [32, 1, 1],
        max_steps: 1 << 20,
        ..Default::default()
    };
    let mut v = Vec::new();
    p.run(&l, &mut |s, a, _| {
        assert_eq!(a.space, Space::Shared);
        v.push((s, a.width, a.addrs[1]))
    })
    .unwrap();
    v
}

fn ld(ptx_line: u32, width: u32) -> SassInst {
    SassInst {
        ptx_line,
        width,
        store: false,
        local_offset: None,
        spill_marked: false,
    }
}

/// ptxas's spills tied to the PTX line they came from: each runs as a local access of its
/// width at its frame offset, interleaved across the block's threads like any local word
/// (a warp's 4-byte spill: 1 request of 4 sectors at CC 9.0), at a site of its own.
#[test]
fn spills_run_as_local_accesses_at_their_line() {
    let mut p = program("");
    // Unmarked: the PTX has no local access, so every LDL/STL is ptxas's.
    let spill = |k: usize, store: bool, width: u32, off: i64| SassInst {
        ptx_line: line(&p, k),
        width,
        store,
        local_offset: Some(off),
        spill_marked: false,
    };
    let sass = [
        spill(0, true, 4, 0x30),
        spill(0, true, 8, 0),
        spill(3, false, 4, 0x30),
    ];
    let sites = p.sites.len() as u32;
    let r = p.apply_sass(&sass);
    assert_eq!(r.spills, 3);
    assert_eq!(p.sites.len(), 6, "a spill site and a refill site");
    assert_eq!(p.sites[4].ptx, "STL (spill)");
    assert_eq!(p.local_bytes, 0x34);
    let l = Launch {
        grid: [1, 1, 1],
        block: [64, 1, 1],
        max_steps: 1 << 20,
        ..Default::default()
    };
    let mut local = Vec::new();
    p.run(&l, &mut |s, a, _| {
        if a.space == Space::Local {
            local.push((s, a.op, a.width, a.addrs[0], a.addrs[1]));
        }
    })
    .unwrap();
    // Per warp: the 4-byte spill, the 8-byte one as two words, the refill.
    assert_eq!(local.len(), 2 * 4);
    let threads = 64u64;
    let (s, op, w, a0, a1) = local[0];
    assert_eq!((s, op, w), (sites, warpscope_model::Op::Store, 4));
    // Word 12 (offset 0x30) of thread 0, then thread 1 four bytes on.
    assert_eq!((a0, a1 - a0), (4 * 12 * threads, 4));
    assert_eq!(local[3].0, sites + 1);
}

#[test]
fn four_words_tied_to_the_lowest_become_one_16_byte_load() {
    let mut p = program("");
    let base = accesses(&p)[0].2;
    let r = p.apply_sass(&[ld(line(&p, 0), 16)]);
    assert_eq!(r.groups.len(), 1);
    assert_eq!(
        r.groups[0].ptx_lines,
        (0..4).map(|k| line(&p, k)).collect::<Vec<_>>()
    );
    assert_eq!((r.groups[0].ptx_width, r.groups[0].sass_width), (4, 16));
    assert!(r.unexplained.is_empty());
    assert_eq!(accesses(&p), [(0, 16, base)]);
}

/// The SASS instruction tied to the member at +4: the group still starts at +0.
#[test]
fn a_group_tied_to_a_later_member_starts_at_its_lowest_address() {
    let mut p = program("");
    let base = accesses(&p)[0].2;
    let r = p.apply_sass(&[ld(line(&p, 1), 8), ld(line(&p, 2), 8)]);
    // +4 is tied to an 8-byte load: its group is {+0, +4}; +8 with +12 likewise.
    assert_eq!(r.groups.len(), 2);
    assert_eq!(
        p.sites[1].sass,
        SassFate::Widened {
            width: 8,
            delta: -4,
            members: 2
        }
    );
    assert_eq!(accesses(&p), [(1, 8, base), (2, 8, base + 8)]);
}

/// A base register written between the members, or a member with a SASS load of its own:
/// no group, the PTX as written, and the member without SASS is named.
#[test]
fn unprovable_groups_stay_as_written() {
    let mut p = program("add.s32 %r4, %r4, 0;");
    let r = p.apply_sass(&[ld(line(&p, 0), 16)]);
    assert!(r.groups.is_empty());
    assert_eq!(accesses(&p).len(), 4);
    assert_eq!(r.unexplained, [1, 2, 3].map(|k| line(&p, k)));

    let mut p = program("");
    let r = p.apply_sass(&[ld(line(&p, 0), 16), ld(line(&p, 2), 4)]);
    assert!(r.groups.is_empty());
    assert!(p.sites.iter().all(|s| s.sass == SassFate::AsWritten));
}

/// A loop in the form nvcc leaves it after unrolling: lane `t`'s row of 8 words at `32·t` of a
/// shared tile, `loads` each trip from `%r4`, which advances `stride` bytes a trip; the counter
/// `%r5` runs from 0 while `%r5 != end` (after its increment); `%r6` is 4 (the block's 32
/// threads / 8), a trip count the PTX does not make constant.
fn looped(loads: &[&str], stride: i64, end: &str) -> Program {
    let body = format!(
        ".reg .b32 %r<8>;\n.reg .f32 %f<8>;\n.reg .pred %p<2>;\nmov.u32 %r1, %tid.x;\n\
         shl.b32 %r2, %r1, 5;\nmov.u32 %r3, tile;\nadd.s32 %r4, %r3, %r2;\nmov.u32 %r5, 0;\n\
         mov.u32 %r6, %ntid.x;\nshr.u32 %r6, %r6, 3;\n\
         $L_trip:\n{}\nadd.s32 %r4, %r4, {stride};\nadd.s32 %r5, %r5, 1;\n\
         setp.ne.s32 %p1, %r5, {end};\n@%p1 bra $L_trip;\nret;",
        loads.join("\n")
    );
    decode(&body)
}

/// The 1-D block-tiled SGEMM's case: a load and the one 4 bytes on, the base advancing 8
/// bytes a trip, 4 trips; ptxas unrolled the loop and made each 2 trips one LDS.128 tied to
/// the first load. The wide access runs on trips 0 and 2, nothing on trips 1 and 3.
#[test]
fn consecutive_trips_of_an_unrolled_loop_become_one_16_byte_load() {
    let two = ["ld.shared.f32 %f1, [%r4];", "ld.shared.f32 %f2, [%r4+4];"];
    let mut p = looped(&two, 8, "4");
    let plain = accesses(&p);
    assert_eq!(plain.len(), 8);
    let base = plain[0].2;
    let first = line(&p, 0);
    let r = p.apply_sass(&[ld(first, 16), ld(first, 16)]);
    assert_eq!(r.groups.len(), 1, "{r:?}");
    let g = &r.groups[0];
    assert_eq!(g.ptx_lines, [line(&p, 0), line(&p, 1)]);
    assert_eq!((g.ptx_width, g.sass_width, g.trips), (4, 16, 2));
    assert!(r.unexplained.is_empty() && r.unproven.is_empty());
    assert_eq!(p.sites[1].sass, SassFate::Merged);
    assert!(matches!(
        p.sites[0].sass,
        SassFate::WidenedAcrossTrips {
            width: 16,
            delta: 0,
            members: 4,
            every: 2,
            ..
        }
    ));
    assert_eq!(accesses(&p), [(0, 16, base), (0, 16, base + 16)]);
}

/// One load a trip, its address advancing by its own width: 4 trips make one LDS.128.
#[test]
fn a_load_advancing_by_its_width_merges_four_trips() {
    let mut p = looped(&["ld.shared.f32 %f1, [%r4];"], 4, "8");
    let base = accesses(&p)[0].2;
    let r = p.apply_sass(&[ld(line(&p, 0), 16)]);
    assert_eq!(r.groups.len(), 1, "{r:?}");
    assert_eq!((r.groups[0].ptx_lines.len(), r.groups[0].trips), (1, 4));
    assert_eq!(accesses(&p), [(0, 16, base), (0, 16, base + 16)]);
}

/// Where the PTX does not prove the merge across trips, the loads stay as written and the
/// report says why: a trip count that is not a constant, one that is no multiple of the
/// trips merged, a narrower SASS load at the same line, a base that does not advance.
#[test]
fn unprovable_merges_across_trips_stay_as_written() {
    let two = ["ld.shared.f32 %f1, [%r4];", "ld.shared.f32 %f2, [%r4+4];"];
    for (p, sass_narrow, why) in [
        (
            looped(&two, 8, "%r6"),
            false,
            "trip count is not a constant",
        ),
        (looped(&two, 8, "3"), false, "not a multiple"),
        (looped(&two, 8, "4"), true, "does not cover every trip"),
        (looped(&two, 0, "4"), false, "does not advance"),
    ] {
        let mut p = p;
        let before = accesses(&p);
        let first = line(&p, 0);
        let sass = if sass_narrow {
            vec![ld(first, 16), ld(first, 4)]
        } else {
            vec![ld(first, 16)]
        };
        let r = p.apply_sass(&sass);
        assert!(r.groups.is_empty(), "{why}: {r:?}");
        assert_eq!(r.unproven.len(), 1, "{why}: {r:?}");
        assert_eq!(
            (r.unproven[0].ptx_line, r.unproven[0].sass_width),
            (first, 16)
        );
        assert!(r.unproven[0].why.contains(why), "{why}: {r:?}");
        assert!(p.sites.iter().all(|s| s.sass == SassFate::AsWritten));
        assert_eq!(accesses(&p), before, "{why}");
    }
}

/// A kernel of shared loads `loads` from registers set up as in [`program`] (`%r4` lane
/// `t`'s 16·t, `%r5` = `%r4` + 4), with `between` after the first.
fn custom(loads: &[&str]) -> Program {
    let body = format!(
        ".reg .b32 %r<8>;\n.reg .f32 %f<8>;\nmov.u32 %r1, %tid.x;\nshl.b32 %r2, %r1, 4;\n\
         mov.u32 %r3, tile;\nadd.s32 %r4, %r3, %r2;\nadd.s32 %r5, %r4, 4;\n{}\nret;",
        loads.join("\n")
    );
    decode(&body)
}

/// Every listing of up to one SASS load per PTX load's line (none, as wide, or 2, 4 times as
/// wide up to 16 bytes): whether one of them makes `apply_sass` merge or drop a load.
fn some_listing_changes(p: &Program) -> bool {
    let lines: Vec<(u32, u32)> = p
        .sites
        .iter()
        .filter(|s| s.ptx.starts_with("ld."))
        .map(|s| (s.ptx_line, 4))
        .collect();
    let choices = 4usize.pow(lines.len() as u32);
    (0..choices).any(|mut c| {
        let mut sass = Vec::new();
        for &(l, w) in &lines {
            match c % 4 {
                0 => {}
                k => sass.push(ld(l, w << (k - 1))),
            }
            c /= 4;
        }
        let mut q = p.clone();
        let r = q.apply_sass(&sass);
        !r.groups.is_empty() || !r.reused.is_empty() || r.spills > 0
    })
}

/// `sass_could_merge` says where no listing can change what runs, so nvdisasm need not run:
/// adjacent words from one base register, a reload, a load in a counted loop may merge; words
/// 32 bytes apart, loads from different registers, or in different basic blocks cannot. Each
/// case is checked against every listing of [`some_listing_changes`].
#[test]
fn could_merge_is_false_only_where_no_listing_changes_anything() {
    let cases = [
        (program(""), true),
        (
            custom(&["ld.shared.f32 %f1, [%r4];", "ld.shared.f32 %f2, [%r4];"]),
            true,
        ),
        (
            custom(&["ld.shared.f32 %f1, [%r4+4];", "ld.shared.f32 %f2, [%r4];"]),
            true,
        ),
        (
            custom(&["ld.shared.f32 %f1, [%r4];", "ld.shared.f32 %f2, [%r4+32];"]),
            false,
        ),
        (
            custom(&["ld.shared.f32 %f1, [%r4];", "ld.shared.f32 %f2, [%r5];"]),
            false,
        ),
        (
            custom(&[
                "ld.shared.f32 %f1, [%r4];",
                "ld.shared.v2.f32 {%f2, %f3}, [%r4+8];",
            ]),
            false,
        ),
        (
            custom(&[
                "ld.shared.f32 %f1, [%r4];",
                "bra.uni $L_next;",
                "$L_next:",
                "ld.shared.f32 %f2, [%r4+4];",
            ]),
            false,
        ),
        (looped(&["ld.shared.f32 %f1, [%r4];"], 4, "8"), true),
        (looped(&["ld.shared.f32 %f1, [%r4];"], 4, "%r6"), false),
    ];
    for (k, (p, could)) in cases.into_iter().enumerate() {
        assert_eq!(p.sass_could_merge(), could, "case {k}");
        if !could {
            assert!(!some_listing_changes(&p), "case {k}");
        }
    }
    // The cases that could merge do, under some listing (so the check above can fail).
    assert!(some_listing_changes(&program("")));
    assert!(some_listing_changes(&custom(&[
        "ld.shared.f32 %f1, [%r4];",
        "ld.shared.f32 %f2, [%r4];"
    ])));
}
