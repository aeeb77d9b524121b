//! Exporting a commit into a temporary folder outside the repository and
//! running command checks there, one after the other, each read into
//! findings (`reading`); the folder is removed when they are done, and on
//! Ctrl-C after the command in it is stopped.

use std::path::Path;

use super::messages::Changed;
use super::reading::{self, Ran};
use super::running::run_one;
use super::{CommandCheck, Error};
use crate::git::Repository;
use crate::interrupt;

/// Export `commit` and run `commands` in it, reading their findings
/// against `changed`, at most `cap` per command.
pub(super) fn run_in(
    root: &Path,
    commit: &str,
    commands: &[CommandCheck],
    changed: &Changed,
    cap: usize,
) -> Result<Ran, Error> {
    if commands.is_empty() {
        return Ok(Ran::default());
    }
    let checkout_err = |source| Error::Checkout {
        commit: commit.to_string(),
        source,
    };
    let dir = tempfile::Builder::new()
        .prefix("speed-check-")
        .tempdir()
        .map_err(checkout_err)?;
    // Removed on Ctrl-C or SIGTERM too, after the command running in it is
    // stopped (cleanups run newest first).
    let checkout = dir.path().to_path_buf();
    let _removed_on_interrupt = interrupt::on_interrupt(move || {
        std::fs::remove_dir_all(&checkout).ok();
    });
    let repo = Repository::open(root)?;
    let exported = repo.export(commit, dir.path()).map_err(|e| match e {
        crate::git::ExportError::Git(e) => Error::Git(e),
        crate::git::ExportError::Write { path, source } => Error::Checkout {
            commit: commit.to_string(),
            source: std::io::Error::new(source.kind(), format!("{path}: {source}")),
        },
    })?;
    let short = &commit[..commit.len().min(10)];
    let mut ran = Ran::default();
    for command in commands {
        let report = reading::prepare_report(command, dir.path());
        let outcome = run_one(command, dir.path());
        let read = reading::Read {
            command,
            dir: dir.path(),
            changed,
            cap,
            short,
            skipped: &exported.skipped,
            report,
        };
        read.outcome(&outcome, &mut ran);
    }
    // Removing it is part of the run: a folder left behind is reported.
    dir.close().map_err(checkout_err)?;
    Ok(ran)
}
