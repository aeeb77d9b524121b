//! Exporting a commit into a temporary folder outside the repository and
//! running command checks there, one after the other, each read into
//! findings (`reading`), each timed and its checkout compared before and
//! after (`snapshot`: a command that edits what it checks is a finding of
//! its own, `check_modified_checkout`); the folder is removed when they are
//! done, and on Ctrl-C after the command in it is stopped.

use std::path::Path;
use std::time::Instant;

use super::messages::Changed;
use super::reading::{self, CheckRun, Ran};
use super::running::run_one;
use super::snapshot::Snapshot;
use super::{CommandCheck, Error, Finding, MODIFIED_CHECKOUT};
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
    let mut snapshot = Snapshot::take(dir.path(), &exported.written);
    for command in commands {
        let report = reading::prepare_report(command, dir.path());
        let cleared = match &report {
            Some(Ok(path)) => Some(path.clone()),
            _ => None,
        };
        let started = Instant::now();
        let outcome = run_one(command, dir.path());
        if interrupt::requested() {
            // speed is ending and its cleanups are removing the checkout:
            // comparing it now would find files gone and put them back.
            return Ok(ran);
        }
        let duration = started.elapsed();
        let before = ran.findings.len();
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
        let edited = snapshot.changed(dir.path(), cleared.as_deref());
        if !edited.is_empty() {
            ran.findings
                .push(modified_checkout(command, short, &edited));
            let left = snapshot.restore(&repo, dir.path(), &edited);
            if !left.is_empty() {
                ran.notices.push(format!(
                    "`{}` changed files of its checkout that speed could not put back before the next check: {}",
                    command.name,
                    left.join(", ")
                ));
            }
        }
        let findings = ran.findings.len() - before;
        ran.runs
            .push(CheckRun::of(command, &outcome, duration, findings, edited));
    }
    // Removing it is part of the run: a folder left behind is reported.
    dir.close().map_err(checkout_err)?;
    Ok(ran)
}

/// Files a command changed in its checkout are shown up to this many.
const NAMED_FILES: usize = 10;

/// The finding of a command that changed files of its checkout: what it
/// would have found is unknown, so it stands in for the command's own.
fn modified_checkout(command: &CommandCheck, short: &str, edited: &[String]) -> Finding {
    let mut named = edited
        .iter()
        .take(NAMED_FILES)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    if edited.len() > NAMED_FILES {
        named.push_str(&format!(", and {} more", edited.len() - NAMED_FILES));
    }
    Finding {
        check: MODIFIED_CHECKOUT.to_string(),
        category: command.tool.category,
        severity: command.severity,
        file: (edited.len() == 1).then(|| edited[0].clone()),
        rule: Some(command.name.clone()),
        message: format!(
            "`{}` (check {}) changed {} of its checkout of {short}: {named}. A check that edits what it checks hides what it found (ruff with `fix = true` fixes what it finds and reports nothing), so its findings are unknown: run it so it does not edit (for ruff, `--no-fix`). speed put the files back before the next check; the repository's working tree was not touched.",
            command.run.join(" "),
            command.name,
            reading::files(edited.len())
        ),
        advisory: command.tool.blocking == super::Blocking::Never,
        ..Finding::default()
    }
}
