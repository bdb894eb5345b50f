use super::*;

/// The launch file `text` as `warpscope.toml` in the folder `proj`, no tools allowed, every
/// flag list accepted.
fn read_text(text: &str) -> Result<Vec<FileLaunch<()>>> {
    read(text, "warpscope.toml", Path::new("proj"), false, |_| Ok(()))
}

fn error_of(text: &str) -> String {
    format!("{:#}", read_text(text).err().expect("an error"))
}

const ONE: &str = "[[launch]]\nname = \"t\"\nfile = \"k.cu\"\nkernel = \"k\"\ngrid = [32, 32]\nblock = \"32,8\"\nargs = { width = 1024, alpha = 1.5 }\nallocs = { a = 4096 }\ndefines = { N = 4, FAST = true }\ninclude_dirs = [\"inc\"]\nopt_level = 2\ncc = [\"9.0\", \"8.0\"]\ndynamic_smem = 1024\n";

#[test]
fn keys_become_the_flags_of_analyze_with_paths_from_the_files_folder() {
    let launches = read_text(ONE).unwrap();
    let l = &launches[0];
    let dir = Path::new("proj");
    let f = &l.flags;
    assert_eq!(f[0], "--kernel=k");
    assert_eq!(f[1], "--grid=32,32");
    assert_eq!(f[2], "--block=32,8");
    assert!(f.contains(&"--arg=width=1024".to_string()), "{f:?}");
    assert!(f.contains(&"--arg=alpha=1.5".to_string()), "{f:?}");
    assert!(f.contains(&"--alloc=a=4096".to_string()), "{f:?}");
    assert!(f.contains(&"-DN=4".to_string()) && f.contains(&"-DFAST".to_string()));
    assert!(f.contains(&format!("-I{}", dir.join("inc").display())));
    assert!(f.contains(&"-O2".to_string()) && f.contains(&"--cc=9.0,8.0".to_string()));
    assert!(f.contains(&"--dynamic-smem=1024".to_string()));
    assert_eq!(f[f.len() - 2], "--");
    assert_eq!(f.last().unwrap(), &dir.join("k.cu").display().to_string());
    assert_eq!((l.at.line, l.at.column), (1, 1));
}

/// `init` becomes `--init NAME=MODE` (the flag of analyze that fills a pointer
/// parameter), a `file:` path relative to the launch file's folder.
#[test]
fn init_becomes_init_flags_with_data_files_from_the_files_folder() {
    let text = format!(
        "{}init = {{ idx = \"iota\", x = \"random:7\", w = \"file:data/w.npy\", y = \"file:/abs/y.bin\" }}\n",
        ONE.replace("[[launch]]\n", "")
    );
    let l: LaunchToml = toml::from_str(&text).unwrap();
    let f = flags_of(&l, Path::new("proj"), None);
    let init: Vec<&str> = f
        .iter()
        .filter(|x| x.starts_with("--init="))
        .map(String::as_str)
        .collect();
    let data = Path::new("proj").join("data/w.npy");
    assert_eq!(
        init,
        [
            "--init=idx=iota".to_string(),
            format!("--init=w=file:{}", data.display()),
            "--init=x=random:7".to_string(),
            "--init=y=file:/abs/y.bin".to_string(),
        ]
    );
    // The launch's own cc wins over the file's.
    assert!(f.contains(&"--cc=9.0,8.0".to_string()), "{f:?}");
    let mut no_cc: LaunchToml = toml::from_str(&text).unwrap();
    no_cc.cc = None;
    let f = flags_of(&no_cc, Path::new("proj"), Some("7.0"));
    assert!(f.contains(&"--cc=7.0".to_string()), "{f:?}");
}

#[test]
fn unknown_key_is_named_with_its_line_and_column() {
    let m = error_of(&ONE.replace("block = ", "blok = "));
    assert!(m.starts_with("warpscope.toml:6:1:"), "{m}");
    assert!(m.contains("unknown field `blok`"), "{m}");
    assert!(m.contains("did you mean `block`?"), "{m}");
    // A budget key one letter off, and a name close to none.
    let m = error_of(&format!(
        "{ONE}[[launch.budget]]\nmax_sector_per_request = 4\n"
    ));
    assert!(m.contains("did you mean `max_sectors_per_request`?"), "{m}");
    let m = error_of(&ONE.replace("block = ", "threads_per_cta = "));
    assert!(!m.contains("did you mean"), "{m}");
}

#[test]
fn missing_kernel_names_the_launch_table() {
    let m = error_of(&ONE.replace("kernel = \"k\"\n", ""));
    assert!(m.starts_with("warpscope.toml:1:1:"), "{m}");
    assert!(m.contains("missing field `kernel`"), "{m}");
}

/// The flag parser's message follows the launch's place and name; launches before it were
/// parsed, none after.
#[test]
fn a_value_the_flag_parser_rejects_names_the_launch() {
    let text = format!("{ONE}{}", ONE.replace("\"t\"", "\"u\""));
    let mut seen = 0;
    let e = read(&text, "warpscope.toml", Path::new("proj"), false, |f| {
        seen += 1;
        if seen == 2 {
            Err(format!("rejected {}", f[0]))
        } else {
            Ok(seen)
        }
    })
    .err()
    .unwrap();
    assert_eq!(
        format!("{e:#}"),
        "warpscope.toml:14:1: launch 'u': rejected --kernel=k"
    );
    assert_eq!(seen, 2);
}

/// An `nvcc` key names a program to run: refused unless tools are allowed, then a flag with
/// its path from the file's folder.
#[test]
fn nvcc_needs_tools_allowed() {
    let text = format!("{ONE}nvcc = \"bin/nvcc\"\n");
    let m = error_of(&text);
    assert!(
        m.starts_with("warpscope.toml:1:1: launch 't': nvcc = \"bin/nvcc\" names a program")
            && m.contains("--allow-launch-file-tools"),
        "{m}"
    );
    let l = read(&text, "warpscope.toml", Path::new("proj"), true, |_| Ok(())).unwrap();
    let nvcc = format!("--nvcc={}", Path::new("proj").join("bin/nvcc").display());
    assert!(l[0].flags.contains(&nvcc), "{:?}", l[0].flags);
}

#[test]
fn budgets_are_read_with_their_place() {
    let text = format!(
        "cc = \"9.0\"\n{ONE}\n[[launch.budget]]\nmax_sectors_per_request = 4\n\n[[launch.budget]]\nline = 42\ncc = \"9.0\"\nmin_efficiency = 50\n"
    );
    let launches = read_text(&text).unwrap();
    let b = &launches[0].budgets;
    assert_eq!((b[0].at.line, b[1].at.line), (16, 19));
    assert_eq!(b[0].budget.scope, Scope::Launch);
    assert_eq!(b[0].budget.max_sectors_per_request, Some(4.0));
    assert_eq!(
        b[1].budget.scope,
        Scope::Line {
            line: 42,
            column: None
        }
    );
    assert_eq!(b[1].budget.ccs, Some(vec!["9.0".to_string()]));
    assert_eq!(b[1].budget.min_efficiency, Some(50.0));
    let m = error_of(&text.replace("cc = \"9.0\"\nmin", "cc = \"4.2\"\nmin"));
    assert!(
        m.starts_with("warpscope.toml:19:1: budget of launch 't': cc = 4.2"),
        "{m}"
    );
    let both = format!("{ONE}[[launch.budget]]\nline = 3\nsite = 2\nmax_total_sectors = 9\n");
    let m = error_of(&both);
    assert!(
        m.starts_with("warpscope.toml:14:1") && m.contains("not both"),
        "{m}"
    );
    let m = error_of(&format!("{ONE}[[launch.budget]]\ncolumn = 3\nsite = 2\n"));
    assert!(m.contains("column needs a line"), "{m}");
    let m = error_of(&format!("{ONE}[[launch.budget]]\nline = 3\n"));
    assert!(m.contains("at least one of"), "{m}");
    // The file's own cc is checked too, at its place.
    let m = error_of(&format!("\ncc = \"4.2\"\n{ONE}"));
    assert!(m.starts_with("warpscope.toml:2:6: cc = 4.2:"), "{m}");
}

#[test]
fn duplicate_names_and_an_empty_file_are_errors() {
    let m = error_of(&format!("{ONE}{ONE}"));
    assert!(
        m.starts_with(
            "warpscope.toml:14:1: a second launch named 't' (the first is at warpscope.toml:1:1)"
        ),
        "{m}"
    );
    let m = error_of("cc = \"9.0\"\n");
    assert!(m.starts_with("warpscope.toml: no launch"), "{m}");
    let m = error_of("[[launch]\n");
    assert!(m.starts_with("warpscope.toml:1:"), "{m}");
}

/// Columns count characters: a key after a 3-byte character on its line is at column 3.
#[test]
fn columns_count_characters_not_bytes() {
    let lines = Lines::new("a\n€ x\n");
    assert_eq!(lines.line_col(0), (1, 1));
    assert_eq!(lines.line_col(2), (2, 1));
    // "€" is bytes 2..5, the space 5, "x" 6.
    assert_eq!(lines.line_col(6), (2, 3));
    // Past the end: the end.
    assert_eq!(lines.line_col(99), (3, 1));
}
