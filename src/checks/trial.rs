//! One command check tried on its own, for `speed doctor`: the commit
//! exported into a temporary folder outside the repository (never the
//! working tree), the command run there once with its timeout, and what
//! came of it: passed, failed, timed out or could not start, in how long,
//! the tail of its output, what its parser read of it (the findings a
//! review would carry, and what could not be read), and the files of the
//! checkout it changed or removed (a check that edits what it checks, as
//! ruff with `fix = true` does, changes the code under review). Files it
//! adds are its output (build folders, caches, reports), not edits.

use std::collections::BTreeMap;
use std::hash::{Hash, Hasher};
use std::path::Path;
use std::time::{Duration, Instant};

use super::messages::{Changed, MAX_FINDINGS};
use super::reading::{self, Ran};
use super::running::{Ended, run_one, tail};
use super::{CommandCheck, Error, Finding};
use crate::git::Repository;
use crate::interrupt;

/// How a trial ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum End {
    Passed,
    /// Non-zero exit or stopped by a signal: what happened.
    Failed(String),
    TimedOut(Duration),
    /// It could not start (not found, not executable): why.
    NotStarted(String),
}

/// What trying a command check showed.
#[derive(Debug, Clone)]
pub struct Trial {
    pub ended: End,
    pub duration: Duration,
    /// The last lines of its output (secrets redacted), for a failure.
    pub tail: String,
    /// Files of the checkout it changed or removed, relative to it,
    /// sorted; at most `MAX_NAMED`, with the rest counted.
    pub modified: Vec<String>,
    pub modified_more: usize,
    /// What a review would make of its output, read as at a review (its
    /// parser, its `report` file): the findings, every line counting as
    /// changed, at most `MAX_FINDINGS`. Without a parser, or when its
    /// output cannot be read, the one finding of a failed command.
    pub findings: Vec<Finding>,
    /// What could not be read of it (the parser's complaint, a missing
    /// report).
    pub notices: Vec<String>,
}

/// The most changed files named.
const MAX_NAMED: usize = 20;

/// Export `commit` and run `check` there once.
pub fn trial(root: &Path, commit: &str, check: &CommandCheck) -> Result<Trial, Error> {
    let checkout_err = |source| Error::Checkout {
        commit: commit.to_string(),
        source,
    };
    let dir = tempfile::Builder::new()
        .prefix("speed-doctor-")
        .tempdir()
        .map_err(checkout_err)?;
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
    let report = reading::prepare_report(check, dir.path());
    let before = snapshot(dir.path());
    let started = Instant::now();
    let outcome = run_one(check, dir.path());
    let duration = started.elapsed();
    let after = snapshot(dir.path());
    let mut ran = Ran::default();
    let short = &commit[..commit.len().min(10)];
    reading::Read {
        command: check,
        dir: dir.path(),
        changed: &Changed::everything(),
        cap: MAX_FINDINGS,
        short,
        skipped: &exported.skipped,
        report,
    }
    .outcome(&outcome, &mut ran);
    let mut modified: Vec<String> = before
        .iter()
        .filter(|(path, hash)| after.get(*path) != Some(hash))
        .map(|(path, _)| path.clone())
        .collect();
    modified.sort();
    let modified_more = modified.len().saturating_sub(MAX_NAMED);
    modified.truncate(MAX_NAMED);
    let ended = match &outcome.ended {
        Ended::Exited(status) if status.success() => End::Passed,
        Ended::Exited(_) | Ended::Failed(_) => {
            End::Failed(outcome.problem().unwrap_or_else(|| "failed".to_string()))
        }
        Ended::TimedOut(after) => End::TimedOut(*after),
        Ended::NotStarted(why) => End::NotStarted(why.clone()),
    };
    let tail = tail(&outcome.output);
    dir.close().map_err(checkout_err)?;
    Ok(Trial {
        ended,
        duration,
        tail,
        modified,
        modified_more,
        findings: ran.findings,
        notices: ran.notices,
    })
}

/// Every regular file and link under `dir` with a hash of its content (a
/// link: of its target), by path relative to `dir`.
fn snapshot(dir: &Path) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(folder) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&folder) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            let hash = if kind.is_dir() {
                stack.push(path);
                continue;
            } else if kind.is_symlink() {
                std::fs::read_link(&path)
                    .map(|t| digest(t.as_os_str().as_encoded_bytes()))
                    .unwrap_or(0)
            } else {
                std::fs::read(&path).map(|b| digest(&b)).unwrap_or(0)
            };
            let rel = path
                .strip_prefix(dir)
                .unwrap_or(&path)
                .to_string_lossy()
                .into_owned();
            out.insert(rel, hash);
        }
    }
    out
}

fn digest(bytes: &[u8]) -> u64 {
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    bytes.hash(&mut hasher);
    hasher.finish()
}
