//! The `jostle` command line: see `jostle --help`.

mod cli;

fn main() -> std::process::ExitCode {
    cli::run()
}
