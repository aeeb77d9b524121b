//! Commands: one function per command, and the only place that prints.
//!
//! `entry` is the whole program as a function (the binary and the demo call
//! it): parse flags, resolve settings, run the command, turn the outcome into
//! an exit code. Errors are reported here, once, with their context chain.

use std::ffi::OsString;
use std::io::Write;

use anyhow::Context;
use clap::Parser;

use crate::cli::Cli;
use crate::exit::Outcome;
use crate::settings::{CommandSettings, Settings};

/// Run speed with these arguments (the first is the program name) and return
/// the exit code the process should end with.
pub fn entry<I, T>(args: I) -> u8
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(err) => {
            // clap formats help, version and usage errors itself.
            let _ = err.print();
            return if err.use_stderr() {
                Outcome::Usage.code()
            } else {
                Outcome::Approved.code()
            };
        }
    };
    init_logging(cli.verbose);
    match run(cli) {
        Ok(outcome) => outcome.code(),
        Err(err) => {
            let _ = writeln!(std::io::stderr(), "error: {err:#}");
            Outcome::Error.code()
        }
    }
}

fn init_logging(verbose: u8) {
    let level = match verbose {
        0 => "warn",
        1 => "info",
        _ => "debug",
    };
    let filter = tracing_subscriber::EnvFilter::try_from_env("SPEED_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(level));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .without_time()
        .try_init();
}

fn run(cli: Cli) -> anyhow::Result<Outcome> {
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    let settings = Settings::resolve(cli, &cwd, &|key| std::env::var(key).ok())?;
    for warning in &settings.warnings {
        eprintln!("warning: {warning}");
    }
    match &settings.command {
        CommandSettings::Review(_) => anyhow::bail!("review is not wired yet"),
        CommandSettings::Nits { .. } => anyhow::bail!("nits is not wired yet"),
    }
}
