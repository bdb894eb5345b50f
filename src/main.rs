//! The `warpscope` command line: a thin layer over [`warpscope::analyze`].

mod cli;

fn main() -> std::process::ExitCode {
    cli::main()
}
