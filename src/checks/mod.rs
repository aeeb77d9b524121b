//! speed's own checks: facts about a diff that speed establishes itself,
//! before any model is asked (an empty diff, a file outside the declared
//! scope, a changed signature or default whose callers were not updated, a
//! struct gaining a field where a literal lists every field, a secret, a
//! `todo!()` left in, a test newly skipped, …), and the commands a project
//! configures (`[[checks.command]]`) run in a temporary checkout of the
//! head commit.
//!
//! Input is plain data: the diff (secrets already redacted), the task's
//! scope and criteria, the impact analysis, and a blob reader. Output is a
//! list of `Finding`s, each naming its check, severity, file, line and a
//! message. A check that cries wolf teaches people to ignore it: each one
//! stands down wherever its fact is uncertain. Nothing here prints.

pub mod builtin;
pub mod command;
pub mod measure;
pub mod members;
pub mod outline;
pub mod signature;

use serde::{Deserialize, Serialize};

pub use crate::settings::{Check, ChecksSettings as Config, CommandCheck};
pub use crate::verdict::Severity;
pub use command::run_commands;

/// One finding of a check.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Finding {
    /// A built-in check's name, or a command check's configured name.
    pub check: String,
    pub severity: Severity,
    pub file: Option<String>,
    pub line: Option<u32>,
    pub message: String,
}

impl Finding {
    pub fn blocking(&self) -> bool {
        self.severity.is_blocking()
    }

    /// `file:line`, `file`, or nothing, for messages.
    pub fn location(&self) -> Option<String> {
        match (&self.file, self.line) {
            (Some(f), Some(l)) => Some(format!("{f}:{l}")),
            (Some(f), None) => Some(f.clone()),
            _ => None,
        }
    }
}

/// Findings first by weight, then by place, so the worst is read first.
pub fn sort(findings: &mut [Finding]) {
    findings.sort_by(|a, b| {
        a.severity
            .cmp(&b.severity)
            .then_with(|| a.file.cmp(&b.file))
            .then_with(|| a.line.cmp(&b.line))
            .then_with(|| a.check.cmp(&b.check))
    });
}

/// Why a command check could not run (its findings carry failures of the
/// command itself; these are failures to set it up).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("cannot make a temporary checkout of {commit}: {source}")]
    Checkout {
        commit: String,
        source: std::io::Error,
    },
    #[error(transparent)]
    Git(#[from] crate::git::Error),
}
