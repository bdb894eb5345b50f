//! `warpscope run`, `verify` and `calibrate` (cargo feature `cuda`).
//!
//! Pure tests run anywhere: batch-line and argument parsing, NVRTC-log line mapping, Nsight
//! Compute CSV parsing on a stored sample, the agreement rule, allocation sizing from the
//! interpreter. NVRTC tests need only libnvrtc (no GPU) and skip without it. GPU tests are
//! marked ignored where the build script found no GPU and driver (CI has none; `cfg(gpu_present)`,
//! see build.rs); `scripts/gpu-check.sh` runs them on a GPU with `--include-ignored`. Set `WARPSCOPE_BIN` to the warpscope binary when this test binary runs away
//! from the build tree.
#![cfg(feature = "cuda")]

use std::collections::BTreeMap;
use std::process::Command;
use warpscope::init::{Contents, Scalar};
use warpscope_gpu::ncu::{self, Verdict};
use warpscope_gpu::plan::{self, Init, LaunchSpec, ParamPlan, Sizing};
use warpscope_gpu::{Device, Error};
use warpscope_toolkit::nvrtc;

fn bin() -> String {
    std::env::var("WARPSCOPE_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_warpscope").to_string())
}

fn warpscope(args: &[&str]) -> (i32, String, String) {
    let o = Command::new(bin())
        .args(args)
        .output()
        .expect("run warpscope");
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

fn spec(file: &str, kernel: &str, grid: u32, block: u32, args: &[(&str, &str)]) -> LaunchSpec {
    LaunchSpec {
        file: file.into(),
        source: std::fs::read_to_string(file).unwrap(),
        kernel: kernel.into(),
        grid: [grid, 1, 1],
        block: [block, 1, 1],
        args: args
            .iter()
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .collect(),
        allocs: Vec::new(),
        defines: Vec::new(),
        dynamic_shared_bytes: 0,
        max_steps: warpscope::cuda::DEFAULT_MAX_STEPS,
        init: Vec::new(),
        textures: Vec::new(),
    }
}

/// The GPU, or None after printing why the test is skipped.
fn gpu(test: &str) -> Option<Device> {
    match Device::open(0) {
        Ok(d) => Some(d),
        Err(e) => {
            println!("skipping {test}: {e}");
            None
        }
    }
}

fn scratch(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("warpscope-gpu-test-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

// ---- pure ----

#[test]
fn batch_lines_round_trip() {
    let mut s = spec(
        "examples/harris.cu",
        "offset<float>",
        4096,
        256,
        &[("s", "1")],
    );
    s.allocs = vec![("a".into(), 1 << 20)];
    s.init = vec![plan::parse_init("a=random").unwrap()];
    s.defines = vec!["TILE=32".into()];
    s.textures = vec!["img=array:64x64:float,addr=wrap,normalized".into()];
    let line = s.to_line();
    assert!(line.contains("'offset<float>'"), "{line}");
    assert!(
        line.ends_with("--texture img=array:64x64:float,addr=wrap,normalized"),
        "{line}"
    );
    let w = plan::split_words(&line).unwrap();
    assert_eq!(w, s.to_words());
    assert_eq!(
        plan::split_words("k.cu --kernel \"a b\" --arg x=1 # comment").unwrap(),
        ["k.cu", "--kernel", "a b", "--arg", "x=1"]
    );
    assert_eq!(
        plan::split_words("  # only a comment").unwrap(),
        Vec::<String>::new()
    );
    assert!(plan::split_words("k.cu --kernel 'open").is_err());
}

/// A texture parameter's object follows its declaration and use: a surface for a
/// `cudaSurfaceObject_t`, a layered array for `tex2DLayered`; sizes from the description.
#[test]
fn texture_parameters_are_planned_as_objects() {
    let src = std::fs::read_to_string("tests/kernels/texture/forms.cu").unwrap();
    assert_eq!(plan::texture_usage(&src, "surf_copy", "src"), (true, false));
    assert_eq!(
        plan::texture_usage(&src, "surf_transpose", "dst"),
        (true, false)
    );
    assert_eq!(
        plan::texture_usage(&src, "fetch_layered", "t"),
        (false, true)
    );
    // Another kernel's layered fetch of its own 't' does not count.
    assert_eq!(plan::texture_usage(&src, "fetch1d", "t"), (false, false));
    assert_eq!(
        plan::texture_usage(&src, "fetch2d<float4>", "t"),
        (false, false)
    );
    let conv = std::fs::read_to_string("examples/texture.cu").unwrap();
    assert_eq!(
        plan::texture_usage(&conv, "conv_texture", "img"),
        (false, false)
    );
    let mut s = spec("examples/texture.cu", "conv_texture", 32, 32, &[]);
    s.textures = vec![
        "img=array:1024x1024:float".into(),
        "x=pitch2d:10x3:float".into(),
    ];
    let t = plan::textures(&s).unwrap();
    assert_eq!(plan::texture_bytes(&t[0]), 4 << 20);
    // 10 floats a row, pitched to 512 bytes: 3 rows.
    assert_eq!(plan::texture_bytes(&t[1]), 1536);
    s.textures = vec!["img=array:1024x1024:double".into()];
    let e = plan::textures(&s).unwrap_err().to_string();
    assert!(
        e.contains("--texture img=array:1024x1024:double") && e.contains("unknown format 'double'"),
        "{e}"
    );
}

#[test]
fn launch_argument_parsing() {
    assert_eq!(plan::parse_dims("32,8", "block").unwrap(), [32, 8, 1]);
    assert_eq!(plan::parse_dims("4x2x3", "grid").unwrap(), [4, 2, 3]);
    let e = plan::parse_dims("0", "grid").unwrap_err().to_string();
    assert!(e.contains("at least 1"), "{e}");
    assert!(plan::parse_dims("1,2,3,4", "grid").is_err());
    let r = plan::parse_init("random").unwrap();
    assert_eq!((r.param, r.mode), (None, Init::Random { seed: None }));
    let r = plan::parse_init("idx=iota").unwrap();
    assert_eq!((r.param.as_deref(), r.mode), (Some("idx"), Init::Iota));
    let r = plan::parse_init("x=const:1.5").unwrap();
    assert_eq!(r.mode, Init::Const("1.5".into()));
    let r = plan::parse_init("x=file:d.npy").unwrap();
    assert_eq!(r.mode, Init::File("d.npy".into()));
    let e = plan::parse_init("a=ones").unwrap_err().to_string();
    assert!(
        e.contains("zero, iota, random[:SEED], const:V or file:PATH"),
        "{e}"
    );
    assert!(plan::parse_pairs(&["=3".into()], "arg").is_err());
    // Later rules win; a rule for all applies where no later one names the parameter.
    let mut s = spec("examples/harris.cu", "offset<float>", 1, 32, &[("s", "0")]);
    s.init = vec![
        plan::parse_init("random").unwrap(),
        plan::parse_init("b=iota").unwrap(),
    ];
    assert_eq!(
        (s.init_of("a"), s.init_of("b")),
        (Init::Random { seed: None }, Init::Iota)
    );
}

#[test]
fn cli_rejects_bad_arguments() {
    let (rc, _, err) = warpscope(&["run", "examples/harris.cu", "--grid", "4", "--block", "256"]);
    assert_eq!(rc, 2, "{err}");
    assert!(err.contains("--kernel"), "{err}");
    let (rc, _, err) = warpscope(&[
        "run",
        "examples/harris.cu",
        "--kernel",
        "offset<float>",
        "--grid",
        "4",
        "--block",
        "256",
        "--arg",
        "s=1",
        "--init",
        "a=ones",
    ]);
    assert_eq!(rc, 1);
    assert!(err.contains("--init a=ones: 'ones' is not a mode"), "{err}");
    let (rc, _, err) = warpscope(&["verify", "--batch", "/nonexistent/launches.txt"]);
    assert_eq!(rc, 1);
    assert!(err.contains("cannot read --batch"), "{err}");
    let d = scratch("badbatch");
    let b = d.join("b.txt");
    std::fs::write(&b, "# two launches\nexamples/harris.cu --kernel 'offset<float>' --grid 4 --block 256 --arg s=1\nexamples/harris.cu --kernel x --grid 0 --block 1\n").unwrap();
    let (rc, _, err) = warpscope(&["run", "--batch", b.to_str().unwrap()]);
    assert_eq!(rc, 1);
    assert!(
        err.contains("b.txt:3") && err.contains("at least 1"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(d);
}

#[test]
#[cfg_attr(
    gpu_present,
    ignore = "checks the message given without a GPU; this machine has one"
)]
fn without_a_gpu_the_message_is_clear() {
    if Device::open(0).is_ok() {
        println!("skipping without_a_gpu_the_message_is_clear: a GPU is present");
        return;
    }
    let e = Device::open(0).err().unwrap();
    let (rc, _, err) = warpscope(&[
        "run",
        "examples/harris.cu",
        "--kernel",
        "offset<float>",
        "--grid",
        "4",
        "--block",
        "256",
        "--arg",
        "s=1",
    ]);
    assert_eq!(rc, 1);
    assert!(err.contains(&e.to_string()), "{err}");
    if matches!(e, Error::NoDriver(_)) {
        assert!(err.contains("no CUDA driver found (libcuda.so)"), "{err}");
    }
}

#[test]
fn nvrtc_log_positions_become_file_line() {
    let log = "examples/bad.cu(12): error: identifier \"x\" is undefined\n      y = x + 1;\n          ^\n\n1 error detected in the compilation of \"examples/bad.cu\".\ninc/h (a)(3): warning #177-D: variable \"z\" was declared but never referenced\n";
    let m = nvrtc::map_log(log);
    assert!(
        m.starts_with("examples/bad.cu:12: error: identifier \"x\" is undefined\n"),
        "{m}"
    );
    assert!(m.contains("\n      y = x + 1;\n"), "{m}");
    assert!(m.contains("compilation of \"examples/bad.cu\".\n"), "{m}");
    assert!(m.contains("inc/h (a):3: warning #177-D"), "{m}");
}

#[test]
fn ncu_csv_sample_parses() {
    let text = std::fs::read_to_string("tests/data/h100/ncu-sample.csv").unwrap();
    let r = ncu::parse_csv(&text).unwrap();
    assert!(r.len() >= 2, "{r:?}");
    let first = &r[0];
    assert!(
        ncu::name_matches("offset<float>", &first.name),
        "{}",
        first.name
    );
    assert!(!ncu::name_matches("offset_copy", &first.name));
    assert!(
        ncu::name_matches("offset_copy", &r[1].name),
        "{}",
        r[1].name
    );
    assert!(!ncu::name_matches("offset", &r[1].name));
    // The sample was recorded before verify read the local, texture, surface, TMA, wgmma and
    // DSMEM counters.
    for c in ncu::COUNTERS.iter().filter(|c| {
        ![
            "texture_",
            "surface_",
            "local_",
            "global_tma_",
            "shared_gmma_",
            "dsmem_",
        ]
        .iter()
        .any(|p| c.column.starts_with(p))
    }) {
        assert!(first.metrics.contains_key(c.metric), "{} missing", c.metric);
    }
    let g = |m: &str| first.metrics[m];
    assert_eq!(
        g("l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"),
        32768.0
    );
    assert_eq!(
        g("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"),
        163840.0
    );
    assert!(g("dram__bytes_read.sum") > 1e6);
    assert!(ncu::parse_csv("no csv here\n").is_err());
    // The prediction for the same launch agrees exactly.
    let s = spec(
        "examples/harris.cu",
        "offset<float>",
        4096,
        256,
        &[("s", "1")],
    );
    let req = warpscope::AnalyzeRequest::new(&s.file, &s.source, &s.kernel, s.grid, s.block)
        .ccs("9.0")
        .unwrap()
        .arg("s", 1);
    let an = warpscope::analyze(&req).unwrap();
    let t = &an.architectures[0].totals;
    let mut p = ncu::Predicted::new();
    p.insert("global_ld_requests", t.global_load.requests);
    p.insert("global_ld_sectors", t.global_load.sectors);
    p.insert("global_st_requests", t.global_store.requests);
    p.insert("global_st_sectors", t.global_store.sectors);
    p.insert("shared_ld_wavefronts", t.shared_load.wavefronts);
    p.insert("shared_st_wavefronts", t.shared_store.wavefronts);
    assert_eq!(
        ncu::compare(&p, &first.metrics, None).verdict,
        Verdict::Exact
    );
}

#[test]
fn ncu_permission_and_errors_are_reported() {
    let e = ncu::check_output("==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU Performance Counters on the target device 0.\n").unwrap_err();
    assert!(matches!(e, Error::NcuPermission(_)));
    assert!(e.to_string().contains("ERR_NVGPUCTRPERM"));
    let e = ncu::check_output("==PROF== x\n==ERROR== Failed to prepare kernel for profiling\n")
        .unwrap_err();
    assert!(matches!(e, Error::Ncu(_)), "{e:?}");
    assert!(ncu::check_output("==PROF== Disconnected\n").is_ok());
    let e = ncu::find(Some("/nonexistent/ncu")).unwrap_err().to_string();
    assert!(e.contains("--ncu /nonexistent/ncu"), "{e}");
}

#[test]
fn agreement_rule() {
    let metric = |col: &str| {
        ncu::COUNTERS
            .iter()
            .find(|c| c.column == col)
            .unwrap()
            .metric
            .to_string()
    };
    let col = |c: &str| ncu::COUNTERS.iter().find(|x| x.column == c).unwrap().column;
    let mut p = ncu::Predicted::new();
    let mut m = BTreeMap::new();
    for (c, v) in [
        ("global_ld_requests", 100u64),
        ("global_ld_sectors", 400),
        ("global_st_requests", 0),
        ("global_st_sectors", 0),
        ("shared_ld_wavefronts", 1000),
        ("shared_st_wavefronts", 50),
    ] {
        p.insert(col(c), v);
        m.insert(metric(c), v as f64);
    }
    let instrumented = |wf: f64| ncu::SourceCounts {
        kernel: "k".into(),
        totals: [(col("shared_ld_wavefronts"), wf)].into_iter().collect(),
        lines: BTreeMap::new(),
    };
    // Texture counters this ncu did not report agree with nothing predicted, not with a
    // prediction; a texture-sector difference fails.
    assert_eq!(ncu::compare(&p, &m, None).verdict, Verdict::Exact);
    let mut pt = p.clone();
    pt.insert(col("texture_ld_sectors"), 64);
    assert_eq!(ncu::compare(&pt, &m, None).verdict, Verdict::Differs);
    let mut mt = m.clone();
    mt.insert(metric("texture_ld_sectors"), 65.0);
    assert_eq!(ncu::compare(&pt, &mt, None).verdict, Verdict::Differs);
    mt.insert(metric("texture_ld_sectors"), 64.0);
    assert_eq!(ncu::compare(&pt, &mt, None).verdict, Verdict::Exact);
    // Hardware shared-load wavefronts above the model: undecided without the instrumented
    // count, noise when it equals the prediction, a disagreement when it does not.
    m.insert(metric("shared_ld_wavefronts"), 1140.0);
    let c = ncu::compare(&p, &m, None);
    assert_eq!(c.verdict, Verdict::Differs);
    assert!(Verdict::needs_instrumented(&c));
    let c = ncu::compare(&p, &m, Some(&instrumented(1000.0)));
    assert_eq!(c.verdict, Verdict::KnownNoise);
    assert!(
        c.notes[0].contains("+14.00 %") && c.notes[0].contains("1000 equals it"),
        "{:?}",
        c.notes
    );
    assert_eq!(
        ncu::compare(&p, &m, Some(&instrumented(1001.0))).verdict,
        Verdict::Differs
    );
    // Shared-store wavefronts above the model too (the tiled matmul's stores, H100): noise
    // only when both instrumented counts equal the prediction.
    m.insert(metric("shared_st_wavefronts"), 57.0);
    let c = ncu::compare(&p, &m, None);
    assert!(Verdict::needs_instrumented(&c));
    let both = |ld: f64, st: f64| ncu::SourceCounts {
        kernel: "k".into(),
        totals: [
            (col("shared_ld_wavefronts"), ld),
            (col("shared_st_wavefronts"), st),
        ]
        .into_iter()
        .collect(),
        lines: BTreeMap::new(),
    };
    let c = ncu::compare(&p, &m, Some(&both(1000.0, 50.0)));
    assert_eq!(c.verdict, Verdict::KnownNoise);
    assert!(
        c.notes[1].contains("shared stores at block start"),
        "{:?}",
        c.notes
    );
    assert_eq!(
        ncu::compare(&p, &m, Some(&both(1000.0, 51.0))).verdict,
        Verdict::Differs
    );
    m.insert(metric("shared_st_wavefronts"), 50.0);
    // Below the model is never noise.
    m.insert(metric("shared_ld_wavefronts"), 999.0);
    let c = ncu::compare(&p, &m, Some(&instrumented(1000.0)));
    assert_eq!(c.verdict, Verdict::Differs);
    assert!(!Verdict::needs_instrumented(&c));
    // Any sector difference fails, whatever the shared counters do.
    m.insert(metric("shared_ld_wavefronts"), 1040.0);
    m.insert(metric("global_ld_sectors"), 401.0);
    let c = ncu::compare(&p, &m, Some(&instrumented(1000.0)));
    assert_eq!(c.verdict, Verdict::Differs);
    assert!(
        c.notes
            .iter()
            .any(|n| n.contains("global_ld_sectors: predicted 400, measured 401")),
        "{:?}",
        c.notes
    );
    // DRAM bytes are shown, never compared.
    m.insert(metric("shared_ld_wavefronts"), 1000.0);
    m.insert(metric("global_ld_sectors"), 400.0);
    m.insert(metric("dram_read_bytes"), 12345.0);
    assert_eq!(ncu::compare(&p, &m, None).verdict, Verdict::Exact);
}

#[test]
fn ncu_source_pages_parse() {
    // SASS page of two launches of the no-fill shared_stride kernel (printed twice each):
    // the instrumented wavefronts are the model's exactly, where the hardware counter read
    // +11 % (tests/data/h100/verify/shared-f32-stride.txt).
    let text = std::fs::read_to_string("tests/data/h100/ncu-source-sass.csv").unwrap();
    let v = ncu::parse_sass_page(&text, 2).unwrap();
    assert_eq!(v.len(), 2);
    assert!(v[0].kernel.starts_with("shared_stride"), "{}", v[0].kernel);
    assert_eq!(v[0].totals.get("shared_ld_wavefronts"), Some(&8192.0));
    assert_eq!(v[1].totals.get("shared_ld_wavefronts"), Some(&16384.0));
    assert!(ncu::parse_sass_page(&text, 3).is_err());
    // Pages printed twice for some kernels and once for others (H100: matmul_rows and
    // matmul_cols twice, reduce_cg once): each launch is its distinct block.
    let block = |k: &str, wf: u32| {
        format!(
            "\"Kernel Name\",\"{k}\"\n\"Address\",\"Source\",\"Address Space\",\"Access Operation\",\"L1 Wavefronts Shared\"\n\"0x10\",\"LDS R1, [R2]\",\"Shared\",\"Load\",\"{wf}\"\n"
        )
    };
    let page = [
        block("matmul_rows", 6291456),
        block("matmul_rows", 6291456),
        block("matmul_cols", 20971520),
        block("matmul_cols", 20971520),
        block("reduce_cg", 4096),
    ]
    .concat();
    let v = ncu::parse_sass_page(&page, 3).unwrap();
    let got: Vec<_> = v
        .iter()
        .map(|b| (b.kernel.as_str(), b.totals["shared_ld_wavefronts"]))
        .collect();
    assert_eq!(
        got,
        [
            ("matmul_rows", 6291456.0),
            ("matmul_cols", 20971520.0),
            ("reduce_cg", 4096.0)
        ]
    );
    // CUDA + SASS page of transpose_coalesced: per line.
    let text = std::fs::read_to_string("tests/data/h100/ncu-source-cuda-sass.csv").unwrap();
    let sc = ncu::parse_cuda_sass_page(&text, "examples/transpose.cu").unwrap();
    let t = |k: &str| sc.totals.get(k).copied().unwrap_or(0.0);
    assert_eq!(
        (
            t("global_ld_sectors"),
            t("global_st_sectors"),
            t("shared_ld_wavefronts"),
            t("shared_st_wavefronts")
        ),
        (131072.0, 131072.0, 1048576.0, 32768.0)
    );
    let l = |n: u32, k: &str| sc.lines.get(&n).and_then(|m| m.get(k)).copied();
    assert_eq!(l(52, "global_ld_sectors"), Some(131072.0));
    assert_eq!(l(52, "shared_st_wavefronts"), Some(32768.0));
    assert_eq!(l(59, "shared_ld_wavefronts"), Some(1048576.0));
    assert_eq!(l(59, "global_st_sectors"), Some(131072.0));
    assert_eq!(l(59, "global_st_requests"), Some(32768.0));
    // The same as warpscope's sites, line by line.
    let s = spec(
        "examples/transpose.cu",
        "transpose_coalesced",
        32,
        256,
        &[("width", "1024"), ("height", "1024")],
    );
    let req =
        warpscope::AnalyzeRequest::new(&s.file, &s.source, &s.kernel, [32, 32, 1], [32, 8, 1])
            .ccs("9.0")
            .unwrap()
            .arg("width", 1024)
            .arg("height", 1024);
    let an = warpscope::analyze(&req).unwrap();
    // Summed per source line: the compiled path has one site per PTX instruction (the
    // unrolled loop's four loads on line 52), ncu's page one row per line.
    let mut per_line: std::collections::BTreeMap<(u32, &str), f64> = Default::default();
    for site in &an.architectures[0].sites {
        let (k, v) = match (site.space, site.op) {
            (warpscope::model::Space::Global, warpscope::model::Op::Load) => {
                ("global_ld_sectors", site.counters.sectors)
            }
            (warpscope::model::Space::Global, warpscope::model::Op::Store) => {
                ("global_st_sectors", site.counters.sectors)
            }
            (warpscope::model::Space::Shared, warpscope::model::Op::Load) => {
                ("shared_ld_wavefronts", site.counters.wavefronts)
            }
            (warpscope::model::Space::Shared, warpscope::model::Op::Store) => {
                ("shared_st_wavefronts", site.counters.wavefronts)
            }
            _ => continue,
        };
        *per_line.entry((site.line, k)).or_default() += v as f64;
    }
    assert!(!per_line.is_empty());
    for ((line, k), v) in per_line {
        assert_eq!(l(line, k), Some(v), "line {line} {k}");
    }
    assert!(ncu::parse_cuda_sass_page("\"Line No\",\"Source\"\n", "x.cu").is_err());
}

#[test]
fn allocations_sized_from_the_interpreter() {
    // offset<float> with s=1 touches a[1 .. 4*256 + 1): 4100 bytes, rounded to 256.
    let s = spec("examples/harris.cu", "offset<float>", 4, 256, &[("s", "1")]);
    let p = plan::plan(&s).unwrap();
    assert!(p.interpreted);
    match &p.params[..] {
        [ParamPlan::Pointer {
            name,
            bytes,
            sizing,
            touched,
            elem,
            init,
            ..
        }, ParamPlan::Scalar {
            name: sn,
            bytes: sb,
            ..
        }] => {
            assert_eq!(name, "a");
            assert_eq!(*touched, Some((4, 4100)));
            assert_eq!(*bytes, 4352);
            assert_eq!(*sizing, Sizing::Touched);
            assert_eq!(elem.scalar, Some(Scalar::F32));
            assert_eq!(*init, Init::Zero);
            assert_eq!((sn.as_str(), sb.as_slice()), ("s", &[1u8, 0, 0, 0][..]));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(p.alloc_elements(), vec![("a".to_string(), 1088)]);
    // --alloc wins and skips the interpreter; a copy's two arrays are sized separately.
    let mut s = spec(
        "examples/harris.cu",
        "offset_copy",
        16,
        256,
        &[("n", "4000"), ("offset", "8")],
    );
    let p = plan::plan(&s).unwrap();
    let sizes: Vec<(String, u64)> = p.alloc_elements();
    assert_eq!(
        sizes,
        vec![("a".to_string(), 4032), ("b".to_string(), 4032)]
    );
    s.allocs = vec![("a".into(), 4096), ("b".into(), 4096)];
    let p = plan::plan(&s).unwrap();
    assert!(!p.interpreted);
    assert!(p
        .params
        .iter()
        .all(|x| !matches!(x, ParamPlan::Pointer { sizing, .. } if *sizing != Sizing::Alloc)));
    // Scalar bytes in the parameter's own type.
    let d = scratch("types");
    let f = d.join("t.cu");
    std::fs::write(&f, "__global__ void k(float* o, double x, float y, char c, long long l, unsigned short u) { o[threadIdx.x] = x + y + c + l + u; }\n").unwrap();
    let mut s = spec(
        f.to_str().unwrap(),
        "k",
        1,
        32,
        &[
            ("x", "0.5"),
            ("y", "2.5"),
            ("c", "-2"),
            ("l", "-3"),
            ("u", "65535"),
        ],
    );
    s.init = vec![plan::parse_init("o=iota").unwrap()];
    let p = plan::plan(&s).unwrap();
    let b: Vec<Vec<u8>> = p
        .params
        .iter()
        .filter_map(|x| match x {
            ParamPlan::Scalar { bytes, .. } => Some(bytes.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(b[0], 0.5f64.to_le_bytes());
    assert_eq!(b[1], 2.5f32.to_le_bytes());
    assert_eq!(b[2], [0xfe]);
    assert_eq!(b[3], (-3i64).to_le_bytes());
    assert_eq!(b[4], [0xff, 0xff]);
    assert!(matches!(
        &p.params[0],
        ParamPlan::Pointer {
            bytes: 256,
            init: Init::Iota,
            ..
        }
    ));
    s.init = vec![plan::parse_init("x=iota").unwrap()];
    let e = plan::plan(&s).unwrap_err().to_string();
    assert!(
        e.contains("'x' is a scalar parameter of k") && e.contains("pointer parameters: o"),
        "{e}"
    );
    let _ = std::fs::remove_dir_all(d);
}

/// The buffers `run`/`verify` fill hold what `analyze` reads: the planned contents of each
/// `--init` mode, and a file sizing its allocation.
#[test]
fn fills() {
    let d = scratch("fills");
    let f = d.join("g.cu");
    std::fs::write(
        &f,
        "__global__ void g(float* out, const int* idx, double* r) { int i = threadIdx.x; out[i] = r[idx[i]]; }\n",
    )
    .unwrap();
    let npy = d.join("idx.npy");
    npyz::to_file_1d(&npy, (0..32i32).rev()).unwrap();
    let mut s = spec(f.to_str().unwrap(), "g", 1, 32, &[]);
    s.init = vec![
        plan::parse_init("out=iota").unwrap(),
        plan::parse_init(&format!("idx=file:{}", npy.display())).unwrap(),
        plan::parse_init("r=random:3").unwrap(),
    ];
    let p = plan::plan(&s).unwrap();
    let bufs: Vec<(Sizing, u64, Vec<u8>)> = p
        .params
        .iter()
        .filter_map(|x| match x {
            ParamPlan::Pointer {
                sizing,
                bytes,
                contents,
                ..
            } => Some((*sizing, *bytes, contents.to_vec(*bytes))),
            _ => None,
        })
        .collect();
    let f32s: Vec<f32> = bufs[0].2[..16]
        .chunks(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    assert_eq!(f32s, [0.0, 1.0, 2.0, 3.0]);
    // The file's 32 ints size idx (128 bytes, rounded up to 256) and fill it.
    assert_eq!((bufs[1].0, bufs[1].1), (Sizing::File, 256));
    assert_eq!(&bufs[1].2[..8], &[31, 0, 0, 0, 30, 0, 0, 0]);
    assert!(bufs[1].2[128..].iter().all(|b| *b == 0));
    // r is read at idx 31..0 (the file's data): 32 doubles touched, in [0, 1).
    assert_eq!(bufs[2].0, Sizing::Touched);
    assert!(bufs[2].2[..256]
        .chunks(8)
        .all(|c| (0.0..1.0).contains(&f64::from_le_bytes(c.try_into().unwrap()))));
    assert!(matches!(
        &p.params[2],
        ParamPlan::Pointer {
            contents: Contents::Pattern(_),
            ..
        }
    ));
    let _ = std::fs::remove_dir_all(d);
}

// ---- NVRTC (no GPU needed) ----

fn nvrtc_or_skip(test: &str) -> bool {
    match nvrtc::version() {
        Ok(_) => true,
        Err(e) => {
            println!("skipping {test}: {e}");
            false
        }
    }
}

#[test]
fn nvrtc_instantiates_templates_by_name() {
    if !nvrtc_or_skip("nvrtc_instantiates_templates_by_name") {
        return;
    }
    let src = std::fs::read_to_string("examples/harris.cu").unwrap();
    let c = nvrtc::compile(&nvrtc::Program {
        file: "examples/harris.cu",
        source: &src,
        kernels: vec![
            "offset<float>".into(),
            "stride<double>".into(),
            "offset_copy".into(),
        ],
        cc: (9, 0),
        defines: vec![],
        include_dirs: vec!["examples".into()],
        lineinfo: true,
        std: None,
    })
    .unwrap();
    assert_eq!(c.symbol("offset<float>"), Some("_Z6offsetIfEvPT_i"));
    assert_eq!(c.symbol("stride<double>"), Some("_Z6strideIdEvPT_i"));
    assert_eq!(c.symbol("offset_copy"), Some("_Z11offset_copyPKfPfii"));
    assert!(c.image.starts_with(b"\x7fELF"));
    assert!(c.options.contains(&"--gpu-architecture=sm_90".to_string()));
}

#[test]
fn nvrtc_errors_point_at_the_users_file() {
    if !nvrtc_or_skip("nvrtc_errors_point_at_the_users_file") {
        return;
    }
    let src = "__global__ void k(float* a)\n{\n    a[threadIdx.x] = undefined_name;\n}\n";
    let e = nvrtc::compile(&nvrtc::Program {
        file: "dir/bad.cu",
        source: src,
        kernels: vec!["k".into()],
        cc: (9, 0),
        defines: vec![],
        include_dirs: vec![],
        lineinfo: false,
        std: None,
    })
    .unwrap_err();
    let m = e.to_string();
    assert!(matches!(e, nvrtc::Error::Compile { .. }), "{m}");
    assert!(
        m.contains("dir/bad.cu:3: error: identifier \"undefined_name\" is undefined"),
        "{m}"
    );
}

// ---- GPU ----

#[test]
#[cfg_attr(
    not(gpu_present),
    ignore = "needs an NVIDIA GPU and driver (none here); scripts/gpu-check.sh runs it on one"
)]
fn gpu_runs_a_kernel_with_planned_buffers() {
    let Some(dev) = gpu("gpu_runs_a_kernel_with_planned_buffers") else {
        return;
    };
    let d = scratch("run");
    let f = d.join("k.cu");
    std::fs::write(
        &f,
        "template <typename T>\n__global__ void twice(T* out, const T* in, int n, T add)\n{\n    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    if (i < n) out[i] = 2 * in[i] + add;\n}\n",
    )
    .unwrap();
    let mut s = spec(
        f.to_str().unwrap(),
        "twice<float>",
        4,
        256,
        &[("n", "1000"), ("add", "0.5")],
    );
    s.init = vec![plan::parse_init("in=iota").unwrap()];
    let p = plan::plan(&s).unwrap();
    let mut r = warpscope_gpu::run::Runner::new(&dev);
    let ready = r.prepare(&s, &p).unwrap();
    r.once(&ready, std::time::Duration::from_secs(10)).unwrap();
    let out = ready.buffers[0].read().unwrap();
    for i in [0usize, 1, 999] {
        let v = f32::from_le_bytes(out[4 * i..4 * i + 4].try_into().unwrap());
        assert_eq!(v, 2.0 * i as f32 + 0.5, "out[{i}]");
    }
    let t = r
        .time(&ready, 2, 5, std::time::Duration::from_secs(10))
        .unwrap();
    assert_eq!(t.seconds.len(), 5);
    assert!(
        t.seconds.iter().all(|s| *s > 0.0 && *s < 0.1),
        "{:?}",
        t.seconds
    );
    let _ = std::fs::remove_dir_all(d);
}

#[test]
#[cfg_attr(
    not(gpu_present),
    ignore = "needs an NVIDIA GPU and driver (none here); scripts/gpu-check.sh runs it on one"
)]
fn gpu_copy_sweep_and_bandwidth() {
    let Some(dev) = gpu("gpu_copy_sweep_and_bandwidth") else {
        return;
    };
    let b = warpscope_gpu::bench::Bench::new(&dev).unwrap();
    let v = warpscope_gpu::bench::copy_sweep(
        &b,
        warpscope_gpu::CopyKind::Offset,
        &[0, 1],
        warpscope_gpu::Elem::Float,
        1 << 24,
        256,
    )
    .unwrap();
    assert_eq!(v.len(), 2);
    assert!(v.iter().all(|g| *g > 10.0 && *g < 100_000.0), "{v:?}");
    let v = warpscope_gpu::bench::copy_sweep(
        &b,
        warpscope_gpu::CopyKind::Stride,
        &[1, 32],
        warpscope_gpu::Elem::Double,
        1 << 24,
        256,
    )
    .unwrap();
    assert!(v[0] > 4.0 * v[1], "stride 32 should be far slower: {v:?}");
    assert!(warpscope_gpu::bench::copy_sweep(
        &b,
        warpscope_gpu::CopyKind::Stride,
        &[0],
        warpscope_gpu::Elem::Float,
        1024,
        256
    )
    .is_err());
}

#[test]
#[cfg_attr(
    not(gpu_present),
    ignore = "needs an NVIDIA GPU and driver (none here); scripts/gpu-check.sh runs it on one"
)]
fn gpu_fault_names_the_cuda_error_and_kernel() {
    if gpu("gpu_fault_names_the_cuda_error_and_kernel").is_none() {
        return;
    }
    // The planner's clock reads 0, so it sizes b to one element; on the GPU clock64() counts
    // cycles and the scatter lands up to 64 GB away. (A fault the planner can see, such as an
    // index from --init, stops before the launch: the planner names the thread instead.)
    let d = scratch("fault");
    let f = d.join("fault.cu");
    std::fs::write(&f, "__global__ void scatter(float* b)\n{\n    long long t = clock64();\n    b[(t & 0xffffff) * 1000LL] = 1.0f;\n}\n").unwrap();
    let (rc, _, err) = warpscope(&[
        "run",
        f.to_str().unwrap(),
        "--kernel",
        "scatter",
        "--grid",
        "4",
        "--block",
        "256",
        "--warmup",
        "0",
        "--repeat",
        "1",
    ]);
    assert_eq!(rc, 1, "{err}");
    // ILLEGAL_ADDRESS or INVALID_ADDRESS_SPACE (seen on an H100), by where the address lands.
    assert!(err.contains("kernel scatter faulted: CUDA_ERROR_"), "{err}");
    let _ = std::fs::remove_dir_all(d);
}

#[test]
#[cfg_attr(
    not(gpu_present),
    ignore = "needs an NVIDIA GPU and driver (none here); scripts/gpu-check.sh runs it on one"
)]
fn gpu_compile_errors_show_nvrtc_log() {
    if gpu("gpu_compile_errors_show_nvrtc_log").is_none() {
        return;
    }
    let d = scratch("cerr");
    let f = d.join("cerr.cu");
    // Parses as C (the interpreter would lower it), but `float4 + int` has no operator.
    std::fs::write(&f, "__global__ void k(float4* a)\n{\n    float4 v = a[threadIdx.x];\n    a[threadIdx.x] = v + 1;\n}\n").unwrap();
    let path = f.to_str().unwrap().to_string();
    let (rc, _, err) = warpscope(&[
        "run", &path, "--kernel", "k", "--grid", "1", "--block", "32",
    ]);
    assert_eq!(rc, 1, "{err}");
    assert!(
        err.contains("NVRTC could not compile") && err.contains(&format!("{path}:4: error")),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(d);
}

#[test]
#[cfg_attr(
    not(gpu_present),
    ignore = "needs an NVIDIA GPU and driver (none here); scripts/gpu-check.sh runs it on one"
)]
fn gpu_verify_one_launch() {
    if gpu("gpu_verify_one_launch").is_none() {
        return;
    }
    if let Err(e) = ncu::find(None) {
        println!("skipping gpu_verify_one_launch: {e}");
        return;
    }
    let (rc, out, err) = warpscope(&[
        "verify",
        "examples/harris.cu",
        "--kernel",
        "offset<float>",
        "--grid",
        "4096",
        "--block",
        "256",
        "--arg",
        "s=1",
    ]);
    assert_eq!(rc, 0, "{out}\n{err}");
    assert!(out.contains("1 of 1 launches exact"), "{out}");
}

/// Every texture and surface launch of tests/data/h100/verify/texture.txt: warpscope's texture
/// requests and sectors equal Nsight Compute's on the GPU at hand.
#[test]
#[cfg_attr(
    not(gpu_present),
    ignore = "needs an NVIDIA GPU and driver (none here); scripts/gpu-check.sh runs it on one"
)]
fn gpu_verify_textures() {
    if gpu("gpu_verify_textures").is_none() {
        return;
    }
    if let Err(e) = ncu::find(None) {
        println!("skipping gpu_verify_textures: {e}");
        return;
    }
    let (rc, out, err) = warpscope(&["verify", "--batch", "tests/data/h100/verify/texture.txt"]);
    assert_eq!(rc, 0, "{out}\n{err}");
    assert!(out.contains("21 of 21 launches exact"), "{out}");
}

// ---- what the H100 gave (scripts/gpu-check.sh device; files in tests/data/h100/) ----

#[test]
fn stored_h100_profile_loads() {
    let text = std::fs::read_to_string("tests/data/h100/profile-h100.json").unwrap();
    let p = warpscope::traffic::Profile::from_json(&text).unwrap();
    assert_eq!(p.gpu, "H100 SXM5 80GB");
    assert!(
        p.origin.starts_with("warpscope calibrate on NVIDIA H100"),
        "{}",
        p.origin
    );
    assert!((2700.0..3350.0).contains(&p.copy_gbps), "{}", p.copy_gbps);
    assert_eq!(
        (p.dram_read_granularity_bytes, p.partial_write_read_bytes),
        (64, 32)
    );
    assert!(
        (80..110).contains(&p.dram_min_bytes_per_line),
        "{}",
        p.dram_min_bytes_per_line
    );
    assert!((850.0..960.0).contains(&p.latency_ns), "{}", p.latency_ns);
}

fn sweep_csv(path: &str) -> BTreeMap<(String, u32), f64> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with('#') && !l.starts_with("experiment") && !l.trim().is_empty())
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (
                (f[0].to_string(), f[1].parse().unwrap()),
                f[2].parse().unwrap(),
            )
        })
        .collect()
}

#[test]
fn stored_copy_sweep_matches_the_ground_truth() {
    let now = sweep_csv("tests/data/h100/copy-sweep-measured.csv");
    let then = sweep_csv("tests/data/ground-truth/h100/copy-bandwidth.csv");
    assert_eq!(now.len(), 65);
    for (k, g) in &then {
        let m = now[k];
        assert!(
            (m - g).abs() / g < 0.05,
            "{k:?}: measured {m}, copy-bandwidth.csv {g}"
        );
    }
}

#[test]
fn stored_verify_results_agree() {
    for (name, launches, all_exact) in [
        ("global-f32-loads-stores", 82, true),
        ("examples", 42, true),
        ("shared-f32-stride", 33, false),
        ("examples-noisy", 164, false),
        ("texture", 21, true),
    ] {
        let out = std::fs::read_to_string(format!("tests/data/h100/verify/{name}.out")).unwrap();
        let summary = out.lines().find(|l| l.contains("launches exact")).unwrap();
        assert!(
            summary.contains(&format!("of {launches} launches exact")),
            "{name}: {summary}"
        );
        if all_exact {
            assert!(
                summary.starts_with(&format!("{launches} of")),
                "{name}: {summary}"
            );
        }
        assert!(!out.contains("DIFFERS"), "{name}: a launch disagrees");
        // Every noisy launch's instrumented count equals the prediction.
        let noisy = out
            .lines()
            .filter(|l| l.trim_end().ends_with("noisy"))
            .count();
        let confirmed = out
            .lines()
            .filter(|l| l.contains("equals it: the known overcount"))
            .count();
        assert_eq!(noisy, confirmed, "{name}");
    }
}

/// `verify` of the kernels where ptxas merges PTX loads into wider SASS ones, with the SASS
/// checked (stored H100 output, tests/data/h100/verify/sass.out, from
/// tests/data/h100/verify/sass.txt): Parboil sgemm exact; the tiled matmul's global figures
/// and its 5,242,880 executed shared loads (20 per warp and tile: 16 LDS + 4 LDS.128, where
/// the PTX has 32) as predicted, its shared wavefronts above the prediction only by the
/// hardware counters' known overcount (ncu's instrumented counts in
/// tests/data/h100/compiled/compiled.csv equal the prediction: tests/h100_compiled.rs); the
/// register spills of tests/kernels/compiled/spill.cu, LDL/STL the PTX does not have, exact;
/// a launch whose file NVRTC refuses FAILED alone.
#[test]
fn stored_verify_of_ptxas_merges() {
    let out = std::fs::read_to_string("tests/data/h100/verify/sass.out").unwrap();
    // Cells by column: the header's names are joined by single spaces ("ld req").
    let header = out.lines().find(|l| l.starts_with("#  launch")).unwrap();
    let names: Vec<String> = header
        .split("  ")
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .skip(2)
        .map(String::from)
        .collect();
    let cell = |k: &str, col: &str| -> String {
        let row: Vec<&str> = out
            .lines()
            .find(|l| l.contains(k))
            .unwrap_or_else(|| panic!("{k}: {out}"))
            .split_whitespace()
            .skip(4)
            .collect();
        let at = names
            .iter()
            .position(|n| n == col)
            .unwrap_or_else(|| panic!("{col}: {names:?}"));
        row[at].to_string()
    };
    let verdict = |k: &str| {
        out.lines()
            .find(|l| l.contains(k))
            .unwrap()
            .split_whitespace()
            .last()
            .unwrap()
            .to_string()
    };
    assert_eq!(verdict("mysgemmNT"), "exact");
    for (col, v) in [
        ("ld req", "10,240"),
        ("ld sect", "40,960"),
        ("st req", "1,024"),
        ("sh ld wf", "65,536"),
        ("sh ld inst", "32,768"),
    ] {
        assert_eq!(cell("mysgemmNT", col), v, "sgemm {col}");
    }
    for (k, wf, sect) in [
        ("matmul_rows", "6,291,456≠", "2,097,152"),
        ("matmul_cols", "20,971,520≠", "8,388,608"),
    ] {
        assert_eq!(cell(k, "ld req"), "524,288", "{k}");
        assert_eq!(cell(k, "ld sect"), sect, "{k}");
        assert!(cell(k, "sh ld wf").starts_with(wf), "{k}");
        assert_eq!(
            cell(k, "sh ld inst"),
            "5,242,880",
            "{k}: shared-load instructions"
        );
    }
    // A file NVRTC cannot compile (host globals) fails alone; the launches before it were
    // measured in the same batch.
    assert_eq!(verdict("transposeNaive"), "FAILED");
    assert!(out.contains("#5: NVRTC could not compile tests/kernels/real/cudasamples_transpose.cu"));
    // ptxas's spills: 31 spill stores and 43 refill loads of 4 bytes per thread, 128 warps.
    assert_eq!(verdict("spill.cu"), "exact");
    for (col, v) in [
        ("loc st req", "3,968"),
        ("loc st sect", "15,872"),
        ("loc ld req", "5,504"),
        ("loc ld sect", "22,016"),
    ] {
        assert_eq!(cell("spill.cu", col), v, "spill {col}");
    }
}

/// `verify` of a batch in which one launch fails planning and one fails in the profiled run
/// (a 1-D CUDA array over the H100's 131,072-texel limit): both are reported FAILED with
/// their reasons and the others are measured, the last one after the failed run (stored
/// H100 output, tests/data/h100/verify/failures.out; scripts/h100/verify/failures.sh). The
/// struct passed by value (`--arg p.FIELD=V`) is exact, and the model still predicts it.
#[test]
fn stored_verify_batch_with_failures() {
    let out = std::fs::read_to_string("tests/data/h100/verify/failures.out").unwrap();
    let row = |n: usize| {
        out.lines()
            .find(|l| l.starts_with(&format!("{n}  ")))
            .unwrap_or_else(|| panic!("no row {n}: {out}"))
    };
    assert!(row(1).contains("2,048   16,384   2,048    8,192") && row(1).ends_with("exact"));
    assert!(
        row(2).ends_with("FAILED") && row(3).ends_with("FAILED"),
        "{out}"
    );
    assert!(row(4).ends_with("exact"), "{out}");
    assert!(out
        .contains("#2: examples/texture.cu gather_texture: kernel parameter n (int) has no value"));
    assert!(out.contains("#3: --texture t: width 4000000 is over this GPU's limit of 131072"));
    assert!(out.contains("2 of 4 launches exact, 0 noisy, 0 differ, 2 failed"));
    let v: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string("tests/data/h100/verify/failures.json").unwrap(),
    )
    .unwrap();
    let verdicts: Vec<&str> = v["launches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["comparison"]["verdict"].as_str().unwrap())
        .collect();
    assert_eq!(verdicts, ["exact", "failed", "failed", "exact"]);
    let (code, json, err) = warpscope(&[
        "analyze",
        "tests/kernels/struct_arg.cu",
        "--kernel",
        "scaled_copy",
        "--grid",
        "256",
        "--block",
        "256",
        "--arg",
        "p.n=65536",
        "--arg",
        "p.stride=2",
        "--arg",
        "p.scale=2",
        "--arg",
        "p.offset=1",
        "--alloc",
        "in=131080",
        "--alloc",
        "out=65536",
        "--cc",
        "9.0",
        "--format",
        "json",
    ]);
    assert_eq!(code, 0, "{err}");
    let a: serde_json::Value = serde_json::from_str(&json).unwrap();
    let t = &a["architectures"][0]["totals"];
    let f = |k: &str, m: &str| t[k][m].as_u64().unwrap();
    assert_eq!(
        (
            f("global_load", "requests"),
            f("global_load", "sectors"),
            f("global_store", "requests"),
            f("global_store", "sectors")
        ),
        (2_048, 16_384, 2_048, 8_192)
    );
}
