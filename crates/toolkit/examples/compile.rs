//! `cargo run -p warpscope-toolkit --example compile -- FILE.cu [MAJOR.MINOR] [--nvcc PATH]`:
//! finds nvcc, compiles FILE.cu to PTX (through the cache) and prints the timings.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use warpscope_toolkit::{find, CompileOptions};

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let mut file = None;
    let mut cc = (9, 0);
    let mut nvcc = None;
    while let Some(a) = args.next() {
        if a == "--nvcc" {
            nvcc = args.next().map(PathBuf::from);
        } else if let Some((maj, min)) = a.split_once('.') {
            match (maj.parse(), min.parse()) {
                (Ok(maj), Ok(min)) => cc = (maj, min),
                _ => file = Some(PathBuf::from(a)),
            }
        } else {
            file = Some(PathBuf::from(a));
        }
    }
    let Some(file) = file else {
        eprintln!("usage: compile FILE.cu [MAJOR.MINOR] [--nvcc PATH]");
        return ExitCode::FAILURE;
    };
    let start = Instant::now();
    let tk = match find(nvcc.as_deref()) {
        Ok(tk) => tk,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    eprintln!("{tk} in {:.3} s", start.elapsed().as_secs_f64());
    let target = tk.target_for_cc(cc.0, cc.1);
    if let Some(note) = &target.note {
        eprintln!("note: {note}");
    }
    match tk.compile_ptx(&file, &target, &CompileOptions::default()) {
        Ok(c) => {
            eprintln!(
                "{} PTX bytes, {} in {:.4} s: {}",
                c.ptx.len(),
                if c.cached {
                    "from the cache"
                } else {
                    "compiled"
                },
                c.seconds,
                c.command
            );
            if let Some(e) = c.cache_error {
                eprintln!("warning: {e}");
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
