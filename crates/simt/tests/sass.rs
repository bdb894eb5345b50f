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
    }
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
