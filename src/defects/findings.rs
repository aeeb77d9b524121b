//! What speed establishes about a defect fix without the model: the changed
//! paths outside the triage's affected files, the size of the fix against
//! `[defect]`'s limits, and whether a test that an earlier commit of the
//! branch wrote to reproduce the defect was changed by a later one.

use serde::{Deserialize, Serialize};

use crate::checks::measure::{self, Size};
use crate::git::{Diff, Repository};

use super::{Defect, Error, Exempt, Limits, Violation, repro};

/// What speed established about one fix, without the model.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Findings {
    /// Changed paths outside the triage's `affected_files`.
    pub scope_violations: Vec<Violation>,
    pub size: Size,
    /// Commits of the branch read for the reproducing test.
    pub commits: usize,
    /// Older commits were not read.
    pub history_truncated: bool,
    /// Why the branch's commits could not be read, when they could not.
    pub history_error: Option<String>,
    /// The tests earlier commits of the branch wrote.
    pub reproducing_tests: Vec<repro::Reproducing>,
    /// Changes later commits made to them.
    pub test_changes: Vec<repro::TestChange>,
}

impl Findings {
    /// What the prompt says speed established, one line each.
    pub fn lines(&self, defect: &Defect) -> Vec<String> {
        let mut out = Vec::new();
        let affected = defect.triage.affected_files.len();
        match self.scope_violations.len() {
            0 => out.push(format!(
                "Scope: every changed path is among the triage's {affected} affected file{} or exempt from the scope (defect.exempt, .speed/).",
                if affected == 1 { "" } else { "s" }
            )),
            n => {
                out.push(format!(
                    "Scope: {n} changed path{} outside the triage's affected files.",
                    if n == 1 { " is" } else { "s are" }
                ));
                out.extend(
                    self.scope_violations
                        .iter()
                        .map(|v| format!("Out of scope: {}.", v.description)),
                );
            }
        }
        out.push(format!(
            "Size: {}: {}.",
            self.size.describe(),
            if self.size.large {
                "large for a defect fix"
            } else {
                "within the limits of a defect fix"
            }
        ));
        if let Some(err) = &self.history_error {
            out.push(format!(
                "Reproducing test: the branch's commits could not be read ({err}); whether the test was changed is not known."
            ));
            return out;
        }
        if self.commits <= 1 {
            out.push(
                "Reproducing test: the branch has one commit, so a reproducing test cannot be told apart from the fix."
                    .to_string(),
            );
        } else if self.reproducing_tests.is_empty() {
            out.push(format!(
                "Reproducing test: none of the branch's {} commits before the last writes test code.",
                self.commits - 1
            ));
        } else {
            for t in &self.reproducing_tests {
                out.push(format!(
                    "Reproducing test: {} (written by commit {}).",
                    t.path,
                    t.commit.describe()
                ));
            }
        }
        if self.test_changes.is_empty() && !self.reproducing_tests.is_empty() {
            out.push(
                "The reproducing test is unchanged since the commit that wrote it.".to_string(),
            );
        }
        out.extend(
            self.test_changes
                .iter()
                .map(|c| format!("CHANGED: {}", c.description)),
        );
        if self.history_truncated {
            out.push(format!(
                "Only the newest {} commits of the branch were read.",
                repro::MAX_COMMITS
            ));
        }
        out
    }
}

/// Computes the findings of a fix: from the diff, and from the branch's
/// commits between `base` and the diff's head.
pub fn establish(
    repo: &Repository,
    limits: &Limits,
    defect: &Defect,
    diff: &Diff,
    base: &str,
) -> Result<Findings, Error> {
    let exempt = Exempt::new(&limits.exempt)?;
    let scope_violations = super::scope::violations(diff, &defect.triage.affected_files, &exempt);
    let size = measure::size(diff, limits.max_lines, limits.max_files);
    let mut findings = Findings {
        scope_violations,
        size,
        commits: 0,
        history_truncated: false,
        history_error: None,
        reproducing_tests: Vec::new(),
        test_changes: Vec::new(),
    };
    match repro::walk(repo, base, &diff.head_commit, &crate::paths::is_test) {
        Ok(walk) => {
            findings.commits = walk.commits;
            findings.history_truncated = walk.truncated;
            findings.reproducing_tests = walk.reproducing;
            findings.test_changes = walk.changes;
        }
        Err(err) => findings.history_error = Some(err.to_string()),
    }
    Ok(findings)
}
