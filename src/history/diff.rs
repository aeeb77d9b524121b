//! The diff a report was about, to show its findings at their lines: taken
//! again from git objects at the report's base and head commits (a report
//! keeps the diff only inside its prompt, cut to the budget), checked
//! against the diff hash the review recorded, and redacted as the review
//! redacted it, so no secret the review replaced comes back on a page.

use crate::git::{Diff, Repository, short};
use crate::ledger::Report;

/// The diff of a report, or why there is none to show.
#[derive(Debug, Clone)]
pub struct Reviewed {
    pub diff: Option<Diff>,
    /// What a reader should know: why the diff is missing, or that it is
    /// not byte for byte the one reviewed.
    pub note: Option<String>,
}

/// The diff between the report's base and head commits.
pub fn reviewed(repo: &Repository, report: &Report) -> Reviewed {
    if report.base_commit.is_empty() || report.head_commit.is_empty() {
        return Reviewed {
            diff: None,
            note: Some("The review recorded no commits, so there is no diff to show.".to_string()),
        };
    }
    let mut diff = match repo.diff(&report.base_commit, &report.head_commit) {
        Ok(diff) => diff,
        Err(err) => {
            return Reviewed {
                diff: None,
                note: Some(format!(
                    "The diff {}..{} cannot be shown: {err}",
                    short(&report.base_commit),
                    short(&report.head_commit)
                )),
            };
        }
    };
    let note = (!report.hashes.diff.is_empty() && report.hashes.diff != diff.sha256).then(|| {
        format!(
            "This diff of {}..{} is not the one the review hashed ({}); its findings may sit at other lines.",
            short(&report.base_commit),
            short(&report.head_commit),
            report.hashes.diff
        )
    });
    crate::secrets::redact_diff(&mut diff);
    Reviewed {
        diff: Some(diff),
        note,
    }
}
