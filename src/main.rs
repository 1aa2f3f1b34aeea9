//! The `jostle` command line: see `jostle --help`.

mod cli;

fn main() -> std::process::ExitCode {
    // Exit quietly when the reader of our output goes away (`jostle info … | head`)
    // instead of panicking on a broken pipe.
    #[cfg(unix)]
    // SAFETY: restoring the default disposition of SIGPIPE before any thread starts.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    cli::run()
}
