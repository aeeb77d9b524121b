//! The `speed` binary: parse flags, resolve settings, run, exit. Nothing else.

fn main() -> std::process::ExitCode {
    std::process::ExitCode::from(speed::app::entry(std::env::args_os()))
}
