use super::*;

fn temp(name: &str) -> PathBuf {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("warpscope-init-{}-{n}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

fn elem(ty: &str, bytes: u64) -> ElemType {
    ElemType::of_pointer(ty, bytes)
}

fn words<T: Copy>(c: &Contents, n: usize, size: usize, f: impl Fn(&[u8]) -> T) -> Vec<T> {
    c.to_vec((n * size) as u64).chunks(size).map(f).collect()
}

fn f32s(c: &Contents, n: usize) -> Vec<f32> {
    words(c, n, 4, |b| f32::from_le_bytes(b.try_into().unwrap()))
}

fn i32s(c: &Contents, n: usize) -> Vec<i32> {
    words(c, n, 4, |b| i32::from_le_bytes(b.try_into().unwrap()))
}

#[test]
fn rules_parse_and_print_back() {
    let r = Rule::parse("idx=iota").unwrap();
    assert_eq!((r.param.as_deref(), &r.mode), (Some("idx"), &Mode::Iota));
    let r = Rule::parse("random").unwrap();
    assert_eq!((r.param, r.mode), (None, Mode::Random { seed: None }));
    let r = Rule::parse("data=random:42").unwrap();
    assert_eq!(r.mode, Mode::Random { seed: Some(42) });
    let r = Rule::parse("x=const:-2.5").unwrap();
    assert_eq!(r.mode, Mode::Const("-2.5".into()));
    // A path holding '=' as the whole rule: every parameter.
    let r = Rule::parse("file:a=b.npy").unwrap();
    assert_eq!(
        (r.param, r.mode),
        (None, Mode::File(PathBuf::from("a=b.npy")))
    );
    for t in [
        "idx=iota",
        "random:7",
        "x=const:3",
        "p=file:data/x.npy",
        "zero",
    ] {
        assert_eq!(Rule::parse(t).unwrap().to_string(), t);
    }
}

#[test]
fn bad_rules_name_the_flag_and_the_forms() {
    let e = Rule::parse("a=ones").unwrap_err().0;
    assert!(e.starts_with("--init a=ones: 'ones' is not a mode"), "{e}");
    assert!(
        e.contains("zero, iota, random[:SEED], const:V or file:PATH"),
        "{e}"
    );
    let e = Rule::parse("a=random:x").unwrap_err().0;
    assert!(e.contains("SEED"), "{e}");
    let e = Rule::parse("a=const:abc").unwrap_err().0;
    assert!(e.contains("must be a number"), "{e}");
    assert!(Rule::parse("=iota")
        .unwrap_err()
        .0
        .contains("not a parameter name"));
    assert!(Rule::parse("a=file:").is_err());
}

#[test]
fn later_rules_win() {
    let rules: Vec<Rule> = ["random", "b=iota"]
        .iter()
        .map(|s| s.parse().unwrap())
        .collect();
    assert_eq!(mode_for(&rules, "a"), Mode::Random { seed: None });
    assert_eq!(mode_for(&rules, "b"), Mode::Iota);
    assert_eq!(mode_for(&[], "b"), Mode::Zero);
}

#[test]
fn iota_counts_components_in_their_type() {
    let (c, _) = contents(&Mode::Iota, "a", &elem("float*", 4), 0, None).unwrap();
    assert_eq!(f32s(&c, 4), vec![0.0, 1.0, 2.0, 3.0]);
    let (c, _) = contents(&Mode::Iota, "i", &elem("int*", 4), 0, None).unwrap();
    assert_eq!(i32s(&c, 3), vec![0, 1, 2]);
    // Read at an offset inside an element: bytes 6..10 of [0,1,2,...] as ints.
    let mut b = [0u8; 4];
    c.read(1_000_000 * 4 + 2, &mut b);
    let v = 1_000_000u32.to_le_bytes();
    let w = 1_000_001u32.to_le_bytes();
    assert_eq!(b, [v[2], v[3], w[0], w[1]]);
    // float4: element 1 holds components 4..8.
    let (c, _) = contents(&Mode::Iota, "p", &elem("float4*", 16), 0, None).unwrap();
    assert_eq!(f32s(&c, 8)[4..], [4.0, 5.0, 6.0, 7.0]);
    let (c, _) = contents(&Mode::Iota, "h", &elem("__half*", 2), 0, None).unwrap();
    let h: Vec<f64> = words(&c, 3, 2, |b| {
        half::f16::from_bits(u16::from_le_bytes(b.try_into().unwrap())).to_f64()
    });
    assert_eq!(h, vec![0.0, 1.0, 2.0]);
    let e = contents(&Mode::Iota, "s", &elem("struct S*", 12), 0, None).unwrap_err();
    assert!(
        e.0.contains("arithmetic element type") && e.0.contains("12 bytes"),
        "{e}"
    );
}

#[test]
fn random_is_reproducible_and_in_range() {
    let m = Mode::Random { seed: Some(5) };
    let (a, _) = contents(&m, "x", &elem("float*", 4), 0, None).unwrap();
    let (b, _) = contents(&m, "x", &elem("float*", 4), 3, None).unwrap();
    let v = f32s(&a, 10_000);
    assert_eq!(v, f32s(&b, 10_000), "an explicit seed ignores the position");
    assert!(v.iter().all(|x| (0.0..1.0).contains(x)));
    let mean = v.iter().map(|x| *x as f64).sum::<f64>() / v.len() as f64;
    assert!((mean - 0.5).abs() < 0.02, "mean {mean}");
    // Default seeds differ per position.
    let d = Mode::Random { seed: None };
    let (p0, _) = contents(&d, "x", &elem("float*", 4), 0, None).unwrap();
    let (p1, _) = contents(&d, "y", &elem("float*", 4), 1, None).unwrap();
    assert_ne!(f32s(&p0, 8), f32s(&p1, 8));
    // Integers: uniform in [0, --alloc elements), every value reached.
    let (c, _) = contents(&m, "idx", &elem("int*", 4), 0, Some(64)).unwrap();
    let v = i32s(&c, 64 * 64);
    assert!(v.iter().all(|x| (0..64).contains(x)));
    assert_eq!(
        v.iter().collect::<std::collections::BTreeSet<_>>().len(),
        64
    );
    // Without --alloc: [0, 32768); 1-byte types within their positive range.
    let (c, _) = contents(&m, "idx", &elem("int*", 4), 0, None).unwrap();
    let v = i32s(&c, 100_000);
    assert!(v.iter().all(|x| (0..32768).contains(x)));
    assert!(*v.iter().max().unwrap() > 30_000);
    let (c, _) = contents(&m, "c", &elem("char*", 1), 0, Some(1 << 20)).unwrap();
    assert!(c.to_vec(10_000).iter().all(|b| *b < 128));
    let (c, _) = contents(&m, "c", &elem("unsigned char*", 1), 0, Some(1 << 20)).unwrap();
    assert!(c.to_vec(10_000).iter().any(|b| *b >= 128));
}

#[test]
fn const_is_typed_and_checked() {
    let c = |v: &str, ty: &str, b| contents(&Mode::Const(v.into()), "x", &elem(ty, b), 0, None);
    assert_eq!(f32s(&c("2.5", "float*", 4).unwrap().0, 2), vec![2.5, 2.5]);
    assert_eq!(i32s(&c("-7", "int*", 4).unwrap().0, 2), vec![-7, -7]);
    assert_eq!(i32s(&c("0x10", "int*", 4).unwrap().0, 1), vec![16]);
    assert_eq!(
        c("255", "unsigned char*", 1).unwrap().0.to_vec(2),
        vec![255, 255]
    );
    let e = c("256", "unsigned char*", 1).unwrap_err().0;
    assert!(e.contains("1-byte unsigned integer"), "{e}");
    assert!(c("1.5", "int*", 4).is_err());
    assert!(c("-1", "unsigned int*", 4).is_err());
}

#[test]
fn npy_files_are_checked_against_the_type_and_size() {
    let p = temp("idx.npy");
    npyz::to_file_1d(&p, (0..8i32).rev()).unwrap();
    let (c, n) = contents(&Mode::File(p.clone()), "idx", &elem("int*", 4), 0, None).unwrap();
    assert_eq!(n, Some(8));
    assert_eq!(c.file_bytes(), Some(32));
    assert_eq!(i32s(&c, 9), vec![7, 6, 5, 4, 3, 2, 1, 0, 0]);
    // Same width, other signedness: the same bytes.
    assert!(contents(
        &Mode::File(p.clone()),
        "idx",
        &elem("unsigned*", 4),
        0,
        None
    )
    .is_ok());
    let e = contents(&Mode::File(p.clone()), "idx", &elem("int*", 4), 0, Some(10))
        .unwrap_err()
        .0;
    assert!(
        e.contains("holds 8 elements of int") && e.contains("--alloc idx=10 asks for 10"),
        "{e}"
    );
    let e = contents(&Mode::File(p.clone()), "x", &elem("float*", 4), 0, None)
        .unwrap_err()
        .0;
    assert!(
        e.contains("'<i4' (4-byte signed integer)")
            && e.contains("float (4-byte float)")
            && e.contains(".astype(numpy.float32)"),
        "{e}"
    );
    let q = temp("wide.npy");
    npyz::to_file_1d(&q, [1i64, 2, 3]).unwrap();
    let e = contents(&Mode::File(q), "idx", &elem("int*", 4), 0, None)
        .unwrap_err()
        .0;
    assert!(e.contains("'<i8'") && e.contains("numpy.int32"), "{e}");
    // float4 from 8 floats: 2 elements.
    let f = temp("v.npy");
    npyz::to_file_1d(&f, (0..8).map(|x| x as f32)).unwrap();
    let (c, n) = contents(&Mode::File(f), "v", &elem("float4*", 16), 0, None).unwrap();
    assert_eq!((n, f32s(&c, 8)[5]), (Some(2), 5.0));
}

#[test]
fn raw_files_are_whole_elements() {
    let p = temp("raw.bin");
    let bytes: Vec<u8> = [3.0f32, 4.0].iter().flat_map(|x| x.to_le_bytes()).collect();
    std::fs::write(&p, &bytes).unwrap();
    let (c, n) = contents(&Mode::File(p.clone()), "x", &elem("float*", 4), 0, None).unwrap();
    assert_eq!((n, f32s(&c, 2)), (Some(2), vec![3.0, 4.0]));
    // Raw bytes are taken as the parameter's type: 8 bytes are one double.
    let (_, n) = contents(&Mode::File(p.clone()), "d", &elem("double*", 8), 0, None).unwrap();
    assert_eq!(n, Some(1));
    let e = contents(&Mode::File(p), "x", &elem("float*", 4), 0, Some(3))
        .unwrap_err()
        .0;
    assert!(
        e.contains("holds 2 elements of float, but --alloc x=3 asks for 3"),
        "{e}"
    );
    let q = temp("odd.bin");
    std::fs::write(&q, [1u8, 2, 3]).unwrap();
    let e = contents(&Mode::File(q), "x", &elem("float*", 4), 0, None)
        .unwrap_err()
        .0;
    assert!(
        e.contains("the file has 3 bytes, not a whole number of 4-byte elements"),
        "{e}"
    );
    let e = contents(
        &Mode::File(temp("missing.npy")),
        "x",
        &elem("float*", 4),
        0,
        None,
    )
    .unwrap_err()
    .0;
    assert!(e.contains("cannot read"), "{e}");
}

#[test]
fn resolve_checks_names_and_sizes_allocations_from_files() {
    let params = [
        Param {
            name: "out",
            c_type: "float*",
            pointer: true,
            elem_bytes: 4,
        },
        Param {
            name: "idx",
            c_type: "const int*",
            pointer: true,
            elem_bytes: 4,
        },
        Param {
            name: "n",
            c_type: "int",
            pointer: false,
            elem_bytes: 0,
        },
    ];
    let p = temp("perm.npy");
    npyz::to_file_1d(&p, 0..100i32).unwrap();
    let rules = vec![
        Rule::parse("iota").unwrap(),
        Rule::parse(&format!("idx=file:{}", p.display())).unwrap(),
    ];
    let r = resolve(&rules, "gather", &params, &[]).unwrap();
    assert_eq!(r.len(), 3);
    assert!(r[2].is_none());
    let out = r[0].as_ref().unwrap();
    assert_eq!((&out.mode, out.file_elements), (&Mode::Iota, None));
    let idx = r[1].as_ref().unwrap();
    assert_eq!(idx.file_elements, Some(100));
    // With --alloc the file must agree; the allocation is then --alloc's.
    let r = resolve(&rules, "gather", &params, &[("idx".into(), 100)]).unwrap();
    assert_eq!(r[1].as_ref().unwrap().file_elements, None);
    let e = resolve(&rules, "gather", &params, &[("idx".into(), 50)])
        .unwrap_err()
        .0;
    assert!(
        e.starts_with("--init idx=file:") && e.contains("100 elements"),
        "{e}"
    );
    let e = resolve(&[Rule::parse("n=iota").unwrap()], "gather", &params, &[])
        .unwrap_err()
        .0;
    assert!(
        e.contains("'n' is a scalar parameter of gather") && e.contains("out, idx"),
        "{e}"
    );
    let e = resolve(&[Rule::parse("q=iota").unwrap()], "gather", &params, &[])
        .unwrap_err()
        .0;
    assert!(e.contains("gather has no parameter 'q'"), "{e}");
}

/// An `.npy` file by hand: magic, version, header length field, header text, data.
fn npy_bytes(major: u8, header: &str, len_field: Option<u32>, data: &[u8]) -> Vec<u8> {
    let mut h = header.to_string();
    let pre = if major == 1 { 10 } else { 12 };
    while (pre + h.len() + 1) % 64 != 0 {
        h.push(' ');
    }
    h.push('\n');
    let mut b = b"\x93NUMPY".to_vec();
    b.extend([major, 0]);
    let len = len_field.unwrap_or(h.len() as u32);
    if major == 1 {
        b.extend((len as u16).to_le_bytes());
    } else {
        b.extend(len.to_le_bytes());
    }
    b.extend(h.as_bytes());
    b.extend(data);
    b
}

fn load_err(name: &str, bytes: &[u8]) -> String {
    let p = temp(name);
    std::fs::write(&p, bytes).unwrap();
    let e = contents(&Mode::File(p.clone()), "x", &elem("float*", 4), 0, None)
        .unwrap_err()
        .0;
    assert!(e.contains(&p.display().to_string()), "{e}");
    e
}

#[test]
fn npy_headers_and_shapes_are_bounded_before_allocating() {
    let f4 = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }";
    let data: Vec<u8> = [1.0f32, 2.0].iter().flat_map(|x| x.to_le_bytes()).collect();
    // The hand-made file is a good one when its fields are right.
    let p = temp("good.npy");
    std::fs::write(&p, npy_bytes(2, f4, None, &data)).unwrap();
    let (c, n) = contents(&Mode::File(p), "x", &elem("float*", 4), 0, None).unwrap();
    assert_eq!((n, f32s(&c, 2)), (Some(2), vec![1.0, 2.0]));
    // A v2 length field of 4 GB - 1: refused against the 1 MiB limit, nothing allocated.
    let e = load_err("huge.npy", &npy_bytes(2, f4, Some(u32::MAX), &data));
    assert!(
        e.contains("the .npy header claims 4294967295 bytes, over the limit of 1048576 bytes"),
        "{e}"
    );
    // v3 under the limit but past the end of the file.
    let e = load_err("short.npy", &npy_bytes(3, f4, Some(1000), &data));
    assert!(
        e.contains("the .npy header claims 1000 bytes but only 124 follow its preamble"),
        "{e}"
    );
    // (2^62 + 25) × 4 values wraps to 100 in u64: an error, not 100 elements.
    let wrap = "{'descr': '<f4', 'fortran_order': False, 'shape': (4611686018427387929, 4), }";
    let e = load_err("wrap.npy", &npy_bytes(1, wrap, None, &[0u8; 400]));
    assert!(
        e.contains("the .npy shape [4611686018427387929, 4] holds more than 2^64 values"),
        "{e}"
    );
    // 2^62 values of 4 bytes: 2^64 bytes.
    let big = "{'descr': '<f4', 'fortran_order': False, 'shape': (4611686018427387904,), }";
    let e = load_err("big.npy", &npy_bytes(1, big, None, &[0u8; 400]));
    assert!(
        e.contains("of 4-byte values holds more than 2^64 bytes"),
        "{e}"
    );
    // A shape larger than the file's data.
    let more = "{'descr': '<f4', 'fortran_order': False, 'shape': (1000,), }";
    let e = load_err("more.npy", &npy_bytes(1, more, None, &data));
    assert!(
        e.contains("the .npy header says 1000 values of 4 bytes (4000 bytes) but the file holds 8 bytes of data"),
        "{e}"
    );
    let e = load_err("v9.npy", &npy_bytes(9, f4, None, &data));
    assert!(e.contains("the .npy format version 9 is unknown"), "{e}");
}

/// Found by the `npy` fuzz target (fuzz/regressions/npy/): npyz parses the header's Python
/// literal with backtracking that triples with each nested bracket, so a shape of `({{{{{{{{{{{{3,)`
/// took 26 s and 20 levels would take hours. Headers nesting brackets deeper than 4 (a plain
/// array's header nests 2) are refused before npyz reads them, at once.
#[test]
fn deeply_nested_npy_header_is_refused_at_once() {
    let h = format!(
        "{{'descr': '|b1', 'fortran_order': False, 'shape': ({}3,)unsigned   rtran_order': False,    ,   # @   ",
        "{".repeat(20)
    );
    let t = std::time::Instant::now();
    let e = read_data(
        npy_bytes(1, &h, None, &[0u8; 4]),
        &ElemType::of_pointer("bool*", 1),
    )
    .unwrap_err()
    .0;
    assert!(
        t.elapsed() < std::time::Duration::from_secs(2),
        "{:?}",
        t.elapsed()
    );
    // The dict's `{` is byte 0, the shape's `(` byte 50; bytes 51, 52, 53 are `{`: the third
    // of them is the fifth level.
    assert_eq!(
        e,
        "the .npy header nests brackets more than 4 deep (at byte 53 of the header); a NumPy header nests 2 (a structured dtype more): the file is damaged or not written by NumPy"
    );
    // The fuzzer's own input, as it found it.
    let found = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../fuzz/regressions/npy/timeout-nested-braces-in-shape.npy"
    ))
    .unwrap();
    let e = read_data(found, &ElemType::of_pointer("bool*", 1))
        .unwrap_err()
        .0;
    assert!(
        e.starts_with("the .npy header nests brackets more than 4 deep"),
        "{e}"
    );
    // Nesting 4 deep still reaches the structured-dtype message.
    let structured =
        "{'descr': [('x', '<f4'), ('y', [('a', '<i4')])], 'fortran_order': False, 'shape': (2,), }";
    let e = read_data(
        npy_bytes(1, structured, None, &[0u8; 16]),
        &ElemType::of_pointer("float*", 4),
    )
    .unwrap_err()
    .0;
    assert!(e.contains("structured dtype"), "{e}");
}
