//! Command checks (`[[checks.command]]`): a typecheck, a linter or the tests,
//! run in a temporary checkout of the head commit, exported from git
//! objects into a folder outside the repository and removed afterwards
//! (`checkout`, `running`).
//!
//! A command is an argument list run without a shell (write `sh -c` to
//! have one), in its own process group, with no input, bounded by its
//! timeout, after which the whole group is killed. Without a `parser`, a
//! non-zero exit, a timeout, or a command that cannot start is a finding
//! carrying the tail of its output, with secrets redacted. With one, its
//! output (or its `report` file) is read into located findings
//! (`reading`), and those a line rule would waive are checked against the
//! base commit (`baseline`).

use std::path::Path;

use super::checkout::run_in;
use super::messages::{Changed, MAX_FINDINGS};
use super::{CommandCheck, Error, Finding};
use crate::git::Diff;

pub use super::reading::Ran;

/// Export `head` into a temporary folder and run every command there, in
/// order. The folder is removed when this returns. (No diff: every
/// located finding counts as the change's.)
pub fn run_commands(
    root: &Path,
    head: &str,
    commands: &[CommandCheck],
) -> Result<Vec<Finding>, Error> {
    let changed = Changed::everything();
    Ok(run_in(root, head, commands, &changed, MAX_FINDINGS)?.findings)
}

/// Run every command on the head commit of `diff`: findings on lines the
/// diff did not touch are preexisting, and those that would block without
/// that are looked for at the base commit (found there, they stay
/// preexisting; not found, this change caused them).
pub fn run(root: &Path, diff: &Diff, commands: &[CommandCheck]) -> Result<Ran, Error> {
    let changed = Changed::of(diff);
    let mut ran = run_in(root, &diff.head_commit, commands, &changed, MAX_FINDINGS)?;
    super::baseline::confirm(root, &diff.base_commit, commands, &mut ran)?;
    Ok(ran)
}
