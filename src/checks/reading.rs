//! What a finished command check found: its output (or the `report` file it
//! wrote) read with its parser into located findings, or, when there is no
//! parser or nothing could be read, the one finding of a failed command
//! with the tail of its output, as before parsers.
//!
//! The report path comes from the configuration but the folders it passes
//! through come from the branch: a path through a symbolic link is neither
//! cleared before the run nor read after it, and a report larger than the
//! parser's cap is refused.

use std::io::Read as _;
use std::path::{Component, Path, PathBuf};

use super::messages::{self, Changed};
use super::parsers::{Input, Level};
use super::running::{Ended, Outcome, PARSED_BYTES, failure};
use serde::{Deserialize, Serialize};

use super::{CommandCheck, Finding};

/// Where a command's report is, checked before the command runs.
pub(super) type Report = Option<Result<PathBuf, String>>;

/// Before the run: the report's place in the checkout, with any file
/// already there (committed on the branch) removed, so what is read after
/// the run can only be this run's.
pub(super) fn prepare_report(command: &CommandCheck, dir: &Path) -> Report {
    let relative = command.tool.report.as_deref()?;
    let path = match inside(dir, relative) {
        Ok(path) => path,
        Err(why) => return Some(Err(why)),
    };
    if std::fs::symlink_metadata(&path).is_ok() {
        if let Err(e) = std::fs::remove_file(&path) {
            return Some(Err(format!(
                "{relative} is in the checkout and cannot be cleared before the run: {e}"
            )));
        }
    }
    Some(Ok(path))
}

/// `relative` under `dir`, when no part of it is a symbolic link, `..` or
/// absolute.
pub(super) fn inside(dir: &Path, relative: &str) -> Result<PathBuf, String> {
    let mut path = dir.to_path_buf();
    for component in Path::new(relative).components() {
        match component {
            Component::Normal(part) => {
                path.push(part);
                if std::fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_symlink()) {
                    return Err(format!(
                        "{relative} passes through a symbolic link in the checkout, which speed does not follow"
                    ));
                }
            }
            Component::CurDir => {}
            _ => return Err(format!("{relative} is not a path inside the checkout")),
        }
    }
    Ok(path)
}

/// After the run: the report's bytes, or why there are none.
fn read_report(path: &Path, relative: &str) -> Result<Vec<u8>, String> {
    // The tool may have made a link since: look again.
    let meta = std::fs::symlink_metadata(path)
        .map_err(|_| format!("the command wrote no report at {relative}"))?;
    if meta.file_type().is_symlink() || !meta.is_file() {
        return Err(format!("{relative} is not a regular file"));
    }
    if meta.len() > PARSED_BYTES as u64 {
        return Err(format!(
            "{relative} is larger than {} MiB",
            PARSED_BYTES >> 20
        ));
    }
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(PARSED_BYTES as u64).read_to_end(&mut bytes))
        .map_err(|e| format!("{relative} cannot be read: {e}"))?;
    Ok(bytes)
}

/// What the commands found, and what speed could not read of them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Ran {
    pub findings: Vec<Finding>,
    pub notices: Vec<String>,
    /// The commands whose output gave nothing to rely on (not run to the
    /// end, unreadable, a failure it does not explain).
    pub unread: Vec<String>,
    /// Each command as it ran, in order: what a report's `checks_run` lists.
    pub runs: Vec<CheckRun>,
}

/// One command check as it ran (or why it did not), as every report lists
/// it in `checks_run`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckRun {
    pub name: String,
    pub outcome: RunOutcome,
    pub duration_ms: u64,
    /// How many findings it gave (a changed checkout's included).
    pub findings: usize,
    /// Why it failed, timed out or was skipped; None when it passed.
    #[serde(default)]
    pub reason: Option<String>,
    /// The files of its checkout it changed (`check_modified_checkout`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub changed: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunOutcome {
    Passed,
    Failed,
    TimedOut,
    Skipped,
}

impl RunOutcome {
    pub fn as_str(self) -> &'static str {
        match self {
            RunOutcome::Passed => "passed",
            RunOutcome::Failed => "failed",
            RunOutcome::TimedOut => "timed out",
            RunOutcome::Skipped => "skipped",
        }
    }
}

impl CheckRun {
    /// Each of `commands`, not run, and why (the checkout could not be
    /// made).
    pub fn skipped(commands: &[CommandCheck], why: &str) -> Vec<CheckRun> {
        commands
            .iter()
            .map(|c| CheckRun {
                name: c.name.clone(),
                outcome: RunOutcome::Skipped,
                duration_ms: 0,
                findings: 0,
                reason: Some(why.to_string()),
                changed: Vec::new(),
            })
            .collect()
    }

    /// How a finished command did: by its end, and failed whenever it
    /// changed its checkout (what it found is then unknown).
    pub(super) fn of(
        command: &CommandCheck,
        outcome: &Outcome,
        duration: std::time::Duration,
        findings: usize,
        changed: Vec<String>,
    ) -> CheckRun {
        let (run, reason) = match (&outcome.ended, outcome.problem()) {
            (Ended::TimedOut(_), problem) => (RunOutcome::TimedOut, problem),
            (_, Some(problem)) => (RunOutcome::Failed, Some(problem)),
            (_, None) if !changed.is_empty() => (
                RunOutcome::Failed,
                Some(format!(
                    "it changed {} of its checkout: what it found is unknown",
                    files(changed.len())
                )),
            ),
            (_, None) => (RunOutcome::Passed, None),
        };
        CheckRun {
            name: command.name.clone(),
            outcome: run,
            duration_ms: duration.as_millis() as u64,
            findings,
            reason,
            changed,
        }
    }
}

/// "1 file", "3 files".
pub(super) fn files(n: usize) -> String {
    if n == 1 {
        "1 file".to_string()
    } else {
        format!("{n} files")
    }
}

/// One finished command and what reading it needs.
pub(super) struct Read<'a> {
    pub command: &'a CommandCheck,
    pub dir: &'a Path,
    pub changed: &'a Changed,
    /// Findings kept (the rest are counted).
    pub cap: usize,
    /// The commit, shortened, for messages.
    pub short: &'a str,
    /// What the export left out.
    pub skipped: &'a [String],
    pub report: Report,
}

impl Read<'_> {
    /// Its findings and notices, added to `ran`.
    pub(super) fn outcome(&self, outcome: &Outcome, ran: &mut Ran) {
        let command = self.command;
        let problem = outcome.problem();
        let fail =
            |problem: &str| failure(command, problem, self.short, self.skipped, &outcome.output);
        let unread = |ran: &mut Ran| {
            ran.unread.push(command.name.clone());
        };
        let Some(parser) = &command.tool.parser else {
            ran.findings.extend(problem.as_deref().map(fail));
            unread(ran);
            return;
        };
        // A command that did not run to its end wrote no complete output.
        let Ended::Exited(status) = &outcome.ended else {
            ran.findings.extend(problem.as_deref().map(fail));
            unread(ran);
            return;
        };
        let name = parser.name();
        let report = match &self.report {
            None => None,
            Some(Err(why)) => Some(Err(why.clone())),
            Some(Ok(path)) => Some(read_report(
                path,
                command.tool.report.as_deref().unwrap_or(""),
            )),
        };
        let parsed = match &report {
            Some(Err(why)) => Err(why.clone()),
            Some(Ok(bytes)) => parser
                .parse(&Input {
                    report: Some(bytes),
                    ..Input::default()
                })
                .map_err(|e| e.to_string()),
            None => parser
                .parse(&Input {
                    stdout: &outcome.stdout.bytes,
                    stderr: &outcome.stderr.bytes,
                    report: None,
                })
                .map_err(|e| e.to_string()),
        };
        if report.is_none() && outcome.stdout.over + outcome.stderr.over > 0 {
            ran.notices.push(format!(
                "`{}`: its output passed {} MiB; the {name} parser read the first {} MiB only",
                command.name,
                PARSED_BYTES >> 20,
                PARSED_BYTES >> 20
            ));
        }
        let parsed = match parsed {
            Ok(parsed) => parsed,
            Err(why) => {
                let what = if status.success() {
                    "the command passed"
                } else {
                    "its failure is reported with the tail of its output"
                };
                ran.notices.push(format!(
                    "`{}`: the {name} parser could not read its output ({why}); {what}",
                    command.name
                ));
                ran.findings.extend(problem.as_deref().map(|problem| {
                    fail(&format!(
                        "{problem}, and the {name} parser could not read its output ({why})"
                    ))
                }));
                unread(ran);
                return;
            }
        };
        let errors = parsed.messages.iter().any(|m| m.level == Level::Error);
        let reading = messages::Reading {
            check: command,
            dir: self.dir,
            changed: self.changed,
            cap: self.cap,
        };
        let found: Vec<Finding> = messages::findings(&reading, parsed);
        // A failure the output does not explain is still a failure.
        if let (Some(problem), false) = (&problem, errors) {
            ran.findings.push(fail(&format!(
                "{problem}, and the {name} parser found no error in what it wrote"
            )));
            unread(ran);
        }
        ran.findings.extend(found);
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn report_paths_stay_in_the_checkout() {
        let dir = tempfile::tempdir().unwrap();
        assert!(inside(dir.path(), "out/report.xml").is_ok());
        assert!(inside(dir.path(), "../report.xml").is_err());
        assert!(inside(dir.path(), "/tmp/report.xml").is_err());
        std::os::unix::fs::symlink("/tmp", dir.path().join("out")).unwrap();
        let err = inside(dir.path(), "out/report.xml").unwrap_err();
        assert!(err.contains("symbolic link"), "{err}");
    }

    #[test]
    fn a_report_that_is_a_link_or_too_large_is_not_read() {
        let dir = tempfile::tempdir().unwrap();
        let link = dir.path().join("r.xml");
        std::os::unix::fs::symlink("/etc/hostname", &link).unwrap();
        assert!(
            read_report(&link, "r.xml")
                .unwrap_err()
                .contains("regular file")
        );
        let missing = dir.path().join("none.xml");
        assert!(
            read_report(&missing, "none.xml")
                .unwrap_err()
                .contains("no report")
        );
        let big = dir.path().join("big.xml");
        let file = std::fs::File::create(&big).unwrap();
        file.set_len(PARSED_BYTES as u64 + 1).unwrap();
        assert!(read_report(&big, "big.xml").unwrap_err().contains("larger"));
    }
}
