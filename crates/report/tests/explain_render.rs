//! The explain renderers on hand-built explanations: the paragraphs carry the model's real
//! numbers, the SVG is well-formed XML with one outline per transaction, the HTML holds
//! every compute capability's figure and the analysis table, and nothing panics on odd data.

use warpscope_advice::{diagnose, SiteFacts};
use warpscope_model::arch::lookup;
use warpscope_model::detail::{breakdown, Breakdown};
use warpscope_model::{cost, Arch, Config, LaneForm, Op, SmemBankMode, Space, WarpAccess};
use warpscope_report::explain::{
    paragraph, render_html, render_svg, render_svg_all, render_text, Advice, ExplainedArch,
    Explanation, FixOutcome,
};
use warpscope_report::{Aggregator, Header, SiteInfo};

fn arch(cc: &str) -> &'static Arch {
    lookup(cc.parse().unwrap()).unwrap()
}

fn rule(a: &Arch, b: &Breakdown) -> String {
    match b {
        Breakdown::Memory { .. } => match a.cc.major {
            1 if a.cc.minor < 2 => "1.0/1.1 coalescing: 64/128-byte or 32 bytes per lane".into(),
            1 => "1.2/1.3 segments of 32/64/128 bytes".into(),
            2 => "128-byte L1 lines".into(),
            3 | 4 => "32-byte segments".into(),
            _ => "32-byte sectors".into(),
        },
        Breakdown::Shared {
            banks, bank_bytes, ..
        } => format!("{banks} banks of {bank_bytes} bytes"),
        Breakdown::Constant { .. } => "one request per distinct address".into(),
    }
}

/// An explanation of one warp access `a` of the site `text` on the compute capabilities
/// `ccs`, built as the pipeline does: cost, breakdown, advice, paragraph.
fn explain(a: WarpAccess, text: &str, ccs: &[&str], config: Config) -> Explanation {
    let archs: Vec<&'static Arch> = ccs.iter().map(|c| arch(c)).collect();
    let mut agg = Aggregator::new(archs.clone(), config);
    agg.add(0, &a);
    let analysis = agg.finish(
        Header {
            kernel: "k".into(),
            source: "k.cu".into(),
            grid: [1, 1, 1],
            block: [32, 1, 1],
            local_arrays: Vec::new(),
            notes: vec!["a note with <angle> & ampersand".into()],
        },
        &[SiteInfo {
            line: 7,
            column: 12,
            text: text.into(),
            op: a.op,
            read_only: a.read_only,
            ptx: None,
            ptx_line: None,
            file: None,
        }],
    );
    let architectures = archs
        .iter()
        .map(|arch| {
            let c = cost(arch, &config, &a);
            let b = breakdown(arch, &config, &a);
            let facts = SiteFacts {
                text,
                ..Default::default()
            };
            let advice = diagnose(&facts, arch, &config, &a)
                .into_iter()
                .map(|f| Advice {
                    cause: f.cause,
                    why: f.why,
                    why_by_cc: Vec::new(),
                    fix: f.fix,
                    fix_by_cc: Vec::new(),
                    outcomes: vec![FixOutcome {
                        cc: arch.cc.to_string(),
                        before: c.into(),
                        after: f
                            .fixed
                            .map(|x| cost(arch, &f.fixed_config.unwrap_or(config), &x).into()),
                    }],
                    rows: Vec::new(),
                })
                .collect();
            ExplainedArch {
                cc: arch.cc.to_string(),
                name: arch.name.into(),
                rule: rule(arch, &b),
                cost: c.into(),
                breakdown: b,
                paragraph: String::new(),
                advice,
            }
        })
        .collect();
    let mut e = Explanation {
        kernel: "k".into(),
        source: "k.cu".into(),
        grid: [1, 1, 1],
        block: [32, 1, 1],
        line: 7,
        column: 12,
        text: text.into(),
        space: a.space,
        op: a.op,
        width: a.width,
        read_only: a.read_only,
        ptx: None,
        ptx_line: None,
        execution: 0,
        executions: 1,
        chosen: "the costliest".into(),
        block_of_warp: [0, 0, 0],
        warp: 0,
        mask: a.mask,
        addrs: a.addrs.to_vec(),
        further_words: Vec::new(),
        texels: None,
        architectures,
        analysis,
    };
    for i in 0..e.architectures.len() {
        let p = paragraph(&e, &e.architectures[i]);
        e.architectures[i].paragraph = p;
    }
    e
}

fn access(space: Space, width: u32, mask: u32, addr: impl Fn(u64) -> u64) -> WarpAccess {
    WarpAccess {
        space,
        op: Op::Load,
        width,
        mask,
        addrs: std::array::from_fn(|l| addr(l as u64)),
        read_only: false,
        lanes: LaneForm::Unknown,
    }
}

const BASE: u64 = 1 << 40;

/// Harris's offset kernel with s = 1: 32 lanes reading floats from word 1.
fn offset_one(ccs: &[&str]) -> Explanation {
    explain(
        access(Space::Global, 4, u32::MAX, |l| BASE + 4 * (l + 1)),
        "a[i]",
        ccs,
        Config::default(),
    )
}

fn stride_32_shared() -> Explanation {
    explain(
        access(Space::Shared, 4, u32::MAX, |l| 128 * l),
        "s[threadIdx.x * 32]",
        &["9.0"],
        Config::default(),
    )
}

fn constant_four() -> Explanation {
    explain(
        access(Space::Constant, 4, u32::MAX, |l| 64 + 4 * (l / 8)),
        "c[threadIdx.x / 8]",
        &["1.3", "9.0"],
        Config::default(),
    )
}

/// Parses `svg` as XML and returns (rects of class tx, texts of class tx-label).
fn check_svg(svg: &str) -> (usize, usize) {
    let doc = roxmltree::Document::parse(svg).unwrap_or_else(|err| panic!("{err}\n{svg}"));
    let root = doc.root_element();
    assert_eq!(root.tag_name().name(), "svg");
    assert_eq!(
        root.tag_name().namespace(),
        Some("http://www.w3.org/2000/svg")
    );
    assert!(root.attribute("viewBox").is_some());
    for n in doc.descendants() {
        assert_ne!(n.tag_name().name(), "script");
        assert_ne!(n.tag_name().name(), "image");
        if n.tag_name().name() == "text" {
            assert_eq!(n.attribute("font-family"), Some("monospace"));
        }
    }
    let tx = doc
        .descendants()
        .filter(|n| n.tag_name().name() == "rect" && n.attribute("class") == Some("tx"))
        .count();
    let labels = doc
        .descendants()
        .filter(|n| n.tag_name().name() == "text" && n.attribute("class") == Some("tx-label"))
        .count();
    (tx, labels)
}

#[test]
fn offset_one_on_1_3_names_the_128_and_64_plus_32_byte_transactions() {
    let e = offset_one(&["1.3"]);
    let p = paragraph(&e, &e.architectures[0]);
    assert!(
        p.contains("Half-warp 0 (lanes 0–15) falls in one 128-byte segment"),
        "{p}"
    );
    assert!(p.contains("one 128-byte transaction"), "{p}");
    assert!(p.contains("uses bytes 4–67 of it"), "{p}");
    assert!(
        p.contains("Half-warp 1 (lanes 16–31) touches 2 segments"),
        "{p}"
    );
    assert!(p.contains("lanes 16–30 in 64 B at +64"), "{p}");
    assert!(p.contains("lane 31 in 32 B at +128"), "{p}");
    assert!(p.contains("64 + 32 bytes"), "{p}");
    assert!(p.contains("4 bytes past a 128-byte boundary"), "{p}");
    assert!(
        p.contains("224 bytes move for 128 requested: 57.1% efficiency"),
        "{p}"
    );
    let sentences = p.matches(". ").count() + 1;
    assert!((2..=5).contains(&sentences), "{sentences} sentences: {p}");
}

#[test]
fn offset_one_on_9_0_takes_5_sectors() {
    let e = offset_one(&["9.0"]);
    let p = paragraph(&e, &e.architectures[0]);
    assert!(p.contains("The warp (lanes 0–31) touches 5 sectors"), "{p}");
    assert!(p.contains("lanes 0–6 in 32 B at +0"), "{p}");
    assert!(p.contains("lane 31 in 32 B at +128"), "{p}");
    assert!(p.contains("5 × 32 = 160 bytes"), "{p}");
    assert!(
        p.contains("160 bytes move for 128 requested: 80.0% efficiency"),
        "{p}"
    );
}

#[test]
fn offset_one_on_2_0_takes_two_lines() {
    let e = offset_one(&["2.0"]);
    let p = &e.architectures[0].paragraph;
    assert!(p.contains("through L1"), "{p}");
    assert!(p.contains("touches 2 lines"), "{p}");
    assert!(p.contains("128 + 128 bytes"), "{p}");
}

#[test]
fn offset_one_on_1_0_serializes_per_lane() {
    let e = offset_one(&["1.0"]);
    let p = &e.architectures[0].paragraph;
    assert!(
        p.contains("Each of the 2 half-warps breaks those conditions"),
        "{p}"
    );
    assert!(p.contains("16 separate 32-byte transactions"), "{p}");
    assert!(p.contains("12.5% efficiency"), "{p}");
    // 1.0 issues one 32-byte transaction per lane: in the SVG they are merged per address.
    let (tx, labels) = check_svg(&render_svg(&e, 0));
    assert_eq!(tx, labels);
    assert!(render_svg(&e, 0).contains("32 B ×"));
}

#[test]
fn stride_32_shared_is_a_32_way_conflict_on_bank_0() {
    let e = stride_32_shared();
    let p = paragraph(&e, &e.architectures[0]);
    assert!(p.contains("a stride of 32 4-byte words"), "{p}");
    assert!(
        p.contains("Every lane lands in bank 0 — a 32-way bank conflict"),
        "{p}"
    );
    assert!(p.contains("32 wavefronts instead of 1"), "{p}");
}

#[test]
fn constant_with_four_addresses_takes_four_requests() {
    let e = constant_four();
    let p = &e.architectures[1].paragraph;
    assert!(p.contains("reads 4 distinct addresses"), "{p}");
    assert!(
        p.contains(
            "0x40 (lanes 0–7), 0x44 (lanes 8–15), 0x48 (lanes 16–23) and 0x4c (lanes 24–31)"
        ),
        "{p}"
    );
    assert!(p.contains("4 requests instead of 1"), "{p}");
    // 1.x serves half-warps: 2 + 2.
    let p = &e.architectures[0].paragraph;
    assert!(
        p.contains("Half-warp 0 (lanes 0–15) reads 2 distinct addresses"),
        "{p}"
    );
    assert!(p.contains("4 requests instead of 2"), "{p}");
}

#[test]
fn broadcast_shared_and_constant_say_so() {
    let e = explain(
        access(Space::Shared, 4, u32::MAX, |_| 16),
        "s[0]",
        &["9.0"],
        Config::default(),
    );
    let p = &e.architectures[0].paragraph;
    assert!(
        p.contains("All 32 active lanes read the same 4-byte word"),
        "{p}"
    );
    assert!(p.contains("multicast"), "{p}");
    assert!(p.contains("no bank conflict"), "{p}");
    assert!(p.contains("takes 1 wavefront"), "{p}");
    let e = explain(
        access(Space::Constant, 4, u32::MAX, |_| 16),
        "c[0]",
        &["9.0"],
        Config::default(),
    );
    assert!(e.architectures[0]
        .paragraph
        .contains("a broadcast, one request"));
}

#[test]
fn svg_is_well_formed_with_one_outline_per_transaction() {
    let e = offset_one(&["1.3", "2.0", "3.5", "9.0"]);
    for (i, a) in e.architectures.iter().enumerate() {
        let svg = render_svg(&e, i);
        let (tx, labels) = check_svg(&svg);
        let Breakdown::Memory { requests, .. } = &a.breakdown else {
            panic!()
        };
        let n: usize = requests.iter().map(|r| r.transactions.len()).sum();
        assert_eq!(tx, n, "{}", a.cc);
        assert_eq!(labels, n, "{}", a.cc);
        assert!(svg.contains(&format!("CC {}", a.cc)));
        // The paragraph is under the figure, in tspans.
        assert!(svg.contains("<tspan"));
        assert!(svg.contains("efficiency"));
    }
    // 1.3: labels 128 B, 64 B, 32 B; 9.0: five 32 B sectors.
    let svg = render_svg(&e, 0);
    for l in ["128 B", "64 B", "32 B"] {
        assert!(svg.contains(&format!(">{l}</text>")), "{l}");
    }
    let svg = render_svg(&e, 3);
    assert_eq!(svg.matches(">32 B</text>").count(), 5);
}

#[test]
fn svg_of_shared_has_a_cell_per_lane_and_pass() {
    let e = stride_32_shared();
    let svg = render_svg(&e, 0);
    check_svg(&svg);
    let doc = roxmltree::Document::parse(&svg).unwrap();
    let phases = doc
        .descendants()
        .filter(|n| n.attribute("class") == Some("phase"))
        .count();
    assert_eq!(phases, 1);
    // 16 wavefront rows drawn at most: 15 cells, then "16 more".
    let slots = doc
        .descendants()
        .filter(|n| n.attribute("class") == Some("slot"))
        .count();
    assert_eq!(slots, 15);
    assert!(
        svg.contains("17 more wavefronts: lanes 15–31 on bank 0"),
        "{svg}"
    );
}

#[test]
fn svg_all_stacks_every_cc() {
    let e = offset_one(&["1.0", "1.3", "2.0", "9.0"]);
    let svg = render_svg_all(&e);
    check_svg(&svg);
    let doc = roxmltree::Document::parse(&svg).unwrap();
    let groups = doc
        .descendants()
        .filter(|n| n.attribute("class") == Some("arch"))
        .count();
    assert_eq!(groups, 4);
    for cc in ["1.0", "1.3", "2.0", "9.0"] {
        assert!(svg.contains(&format!("CC {cc}")));
    }
}

#[test]
fn svg_escapes_text() {
    let mut e = offset_one(&["9.0"]);
    e.text = "a[i<n && j>0 ? i : 0]".into();
    e.kernel = "k<float>".into();
    let svg = render_svg(&e, 0);
    check_svg(&svg);
    assert!(svg.contains("a[i&lt;n &amp;&amp; j&gt;0 ? i : 0]"));
    check_svg(&render_svg_all(&e));
    // An index out of range is a figure saying so, not a panic.
    check_svg(&render_svg(&e, 7));
}

#[test]
fn html_holds_every_figure_and_the_table() {
    let mut e = offset_one(&["1.0", "1.3", "2.0", "9.0"]);
    e.text = "a[i] /* <b> */".into();
    let h = render_html(&e);
    assert!(h.starts_with("<!DOCTYPE html>"));
    assert_eq!(h.matches("<svg ").count(), 4);
    for cc in ["1.0", "1.3", "2.0", "9.0"] {
        assert!(h.contains(&format!("id=\"cc-{cc}\"")), "{cc}");
        assert!(h.contains(&format!("<th>{cc} req</th>")), "{cc}");
    }
    assert!(h.contains("<table class=\"analysis\">"));
    assert_eq!(h.matches("class=\"explained\"").count(), 1);
    assert!(h.contains("a[i] /* &lt;b&gt; */"));
    assert!(!h.contains("<b> */"));
    assert!(h.contains("a note with &lt;angle&gt; &amp; ampersand"));
    assert!(h.contains("misaligned start"));
    assert!(!h.contains("<script"));
    assert!(
        !h.contains("http://")
            || h.matches("http://").count()
                == h.matches("xmlns=\"http://www.w3.org/2000/svg\"").count()
    );
    // Ids of patterns and markers are unique in the page.
    for i in 0..4 {
        assert_eq!(h.matches(&format!("id=\"waste-f{i}\"")).count(), 1);
    }
    // Each figure inside the page is well-formed XML on its own.
    for part in h.split("<svg ").skip(1) {
        let end = part.find("</svg>").unwrap() + "</svg>".len();
        check_svg(&format!("<svg {}", &part[..end]));
    }
}

/// `e` with its advice replaced by one fixed, hand-written finding (the snapshots should
/// not change when the advice crate rewords its findings).
fn fixed_advice(mut e: Explanation) -> Explanation {
    for a in &mut e.architectures {
        let before = a.cost;
        a.advice = vec![Advice {
            cause: warpscope_advice::Cause::MisalignedStart { offset_bytes: 4 },
            why: "the warp starts 4 bytes into a 128-byte line".into(),
            why_by_cc: Vec::new(),
            fix: "start each warp on a multiple of 32 elements".into(),
            fix_by_cc: Vec::new(),
            outcomes: vec![FixOutcome {
                cc: a.cc.clone(),
                before,
                after: None,
            }],
            rows: Vec::new(),
        }];
    }
    e
}

#[test]
fn text_pictures() {
    let e = fixed_advice(offset_one(&["1.3", "9.0"]));
    let plain = render_text(&e, false);
    assert!(!plain.contains('\x1b'));
    assert!(render_text(&e, true).contains("\x1b["));
    insta::assert_snapshot!("offset_one_1_3_9_0", plain);
    insta::assert_snapshot!(
        "stride_32_shared_9_0",
        render_text(&fixed_advice(stride_32_shared()), false)
    );
    insta::assert_snapshot!(
        "constant_four_1_3_9_0",
        render_text(&fixed_advice(constant_four()), false)
    );
}

/// Every renderer on `e`: no panic, well-formed SVG.
fn render_all(e: &Explanation) {
    let _ = render_text(e, true);
    let _ = render_text(e, false);
    for i in 0..e.architectures.len() {
        check_svg(&render_svg(e, i));
        let _ = paragraph(e, &e.architectures[i]);
    }
    check_svg(&render_svg_all(e));
    let _ = render_html(e);
}

#[test]
fn odd_data_does_not_panic() {
    let all = ["1.0", "1.3", "2.0", "3.5", "5.2", "7.0", "9.0", "12.0"];
    // No active lane.
    for space in [Space::Global, Space::Shared, Space::Constant, Space::Local] {
        let e = explain(access(space, 4, 0, |l| 4 * l), "x", &all, Config::default());
        render_all(&e);
        assert!(e.architectures[0].paragraph.contains("no lane"));
    }
    // One lane; lanes straddling lines with 16-byte words (misaligned); scattered lanes.
    render_all(&explain(
        access(Space::Global, 4, 1 << 9, |l| 4 * l),
        "x",
        &all,
        Config::default(),
    ));
    render_all(&explain(
        access(Space::Global, 16, u32::MAX, |l| 120 + 136 * l),
        "x",
        &all,
        Config::default(),
    ));
    render_all(&explain(
        access(Space::Global, 4, 0xF0F0_F0F1, |l| (l * 7919 % 61) * 4096),
        "x",
        &all,
        Config::default(),
    ));
    render_all(&explain(
        access(Space::Local, 8, u32::MAX, |l| 8 * l),
        "x",
        &all,
        Config::default(),
    ));
    render_all(&explain(
        access(Space::Global, 1, u32::MAX, |l| 3 + l),
        "x",
        &all,
        Config::default(),
    ));
    // Shared: 16 banks on 1.x, 8-byte banks on 3.5, 16-byte words, narrow words, a high lane
    // count on one bank.
    let eight = Config {
        smem_bank_mode: SmemBankMode::EightByte,
        ..Config::default()
    };
    for w in [1, 2, 4, 8, 16] {
        render_all(&explain(
            access(Space::Shared, w, u32::MAX, |l| l * u64::from(w) * 2),
            "s",
            &all,
            Config::default(),
        ));
        render_all(&explain(
            access(Space::Shared, w, 0x0000_FFFF, |l| l * 256),
            "s",
            &all,
            eight,
        ));
    }
    let e = explain(
        access(Space::Shared, 8, u32::MAX, |l| 8 * l),
        "s",
        &["3.5"],
        eight,
    );
    let p = &e.architectures[0].paragraph;
    assert!(p.contains("32 banks of 8 bytes"), "{p}");
    // A breakdown with zero requests under a non-empty mask.
    let mut e = offset_one(&["9.0"]);
    e.architectures[0].breakdown = Breakdown::Memory {
        path: warpscope_model::arch::GlobalPath::Sectors,
        requests: Vec::new(),
    };
    render_all(&e);
    e.architectures[0].breakdown = Breakdown::Shared {
        requests: 0,
        banks: 0,
        bank_bytes: 0,
        phases: Vec::new(),
    };
    render_all(&e);
    e.architectures[0].breakdown = Breakdown::Constant { groups: Vec::new() };
    render_all(&e);
    // Fewer than 32 addresses.
    e.addrs.truncate(3);
    render_all(&e);
    e.architectures.clear();
    render_all(&e);
}

/// With `WARPSCOPE_RENDER_DIR` set, writes the renderings of a few explanations there (to
/// look at them, e.g. with scripts/screenshot.sh); otherwise does nothing.
#[test]
fn dump_for_screenshots() {
    let Ok(dir) = std::env::var("WARPSCOPE_RENDER_DIR") else {
        return;
    };
    let dir = std::path::Path::new(&dir);
    std::fs::create_dir_all(dir).unwrap();
    let all = ["1.0", "1.3", "2.0", "3.5", "9.0"];
    let cases = [
        ("offset", offset_one(&all)),
        ("stride32_shared", stride_32_shared()),
        ("constant", constant_four()),
        (
            "stride2",
            explain(
                access(Space::Global, 4, u32::MAX, |l| BASE + 8 * l),
                "a[2*i]",
                &all,
                Config::default(),
            ),
        ),
        (
            "float4",
            explain(
                access(Space::Global, 16, u32::MAX, |l| BASE + 16 * l + 16),
                "v[i+1]",
                &all,
                Config::default(),
            ),
        ),
        (
            "column",
            explain(
                access(Space::Global, 4, u32::MAX, |l| BASE + 4096 * l),
                "a[i*1024]",
                &["2.0", "9.0"],
                Config::default(),
            ),
        ),
        (
            "shared_pad",
            explain(
                access(Space::Shared, 4, u32::MAX, |l| 132 * l),
                "t[x][y]",
                &["1.3", "3.5", "9.0"],
                Config::default(),
            ),
        ),
        (
            "shared_double",
            explain(
                access(Space::Shared, 8, u32::MAX, |l| 16 * l),
                "d[2*x]",
                &["1.3", "2.0", "3.5", "9.0"],
                Config::default(),
            ),
        ),
        (
            "chars_shared",
            explain(
                access(Space::Shared, 1, u32::MAX, |l| l),
                "c[x]",
                &["1.3", "9.0"],
                Config::default(),
            ),
        ),
        (
            "bytes_global",
            explain(
                access(Space::Global, 1, 0x00FF_FF00, |l| BASE + 3 + l),
                "b[i+3]",
                &["1.3", "9.0"],
                Config::default(),
            ),
        ),
        (
            "inactive",
            explain(
                access(Space::Global, 4, 0, |l| BASE + 4 * l),
                "a[i]",
                &["9.0"],
                Config::default(),
            ),
        ),
        (
            "scattered",
            explain(
                access(Space::Global, 4, 0xF0F0_F0F1, |l| {
                    BASE + (l * 7919 % 61) * 4096
                }),
                "a[idx[i]]",
                &["1.3", "9.0"],
                Config::default(),
            ),
        ),
    ];
    for (name, e) in &cases {
        std::fs::write(dir.join(format!("{name}.txt")), render_text(e, false)).unwrap();
        std::fs::write(dir.join(format!("{name}.ansi")), render_text(e, true)).unwrap();
        std::fs::write(dir.join(format!("{name}.html")), render_html(e)).unwrap();
        std::fs::write(dir.join(format!("{name}.all.svg")), render_svg_all(e)).unwrap();
        for i in 0..e.architectures.len() {
            std::fs::write(
                dir.join(format!("{name}.{}.svg", e.architectures[i].cc)),
                render_svg(e, i),
            )
            .unwrap();
        }
    }
}
