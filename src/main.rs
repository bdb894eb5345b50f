//! The `warpscope` command (package `warpscope-cli`): a thin command line over the
//! `warpscope` library crate; every subcommand is a module of `cli`.

mod cli;

fn main() -> std::process::ExitCode {
    cli::main()
}
