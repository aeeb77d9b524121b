//! speed's own checks: facts about a diff that speed establishes itself,
//! before any model is asked (an empty diff, a file outside the declared
//! scope, a changed signature whose callers were not updated, a secret, a
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
pub mod outline;

use serde::{Deserialize, Serialize};

pub use command::{CommandCheck, run_commands};

/// How much a finding weighs. Critical and major findings block approval.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    Critical,
    Major,
    Minor,
    Nit,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Critical => "critical",
            Severity::Major => "major",
            Severity::Minor => "minor",
            Severity::Nit => "nit",
        }
    }

    pub fn parse(text: &str) -> Option<Severity> {
        match text {
            "critical" => Some(Severity::Critical),
            "major" => Some(Severity::Major),
            "minor" => Some(Severity::Minor),
            "nit" => Some(Severity::Nit),
            _ => None,
        }
    }

    pub fn blocking(self) -> bool {
        matches!(self, Severity::Critical | Severity::Major)
    }
}

impl std::fmt::Display for Severity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The built-in checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Check {
    EmptyDiff,
    Scope,
    BreakingChange,
    Secret,
    Placeholder,
    DebugLeftover,
    TestWeakened,
    UntestedCriterion,
    LargeDiff,
}

impl Check {
    pub const ALL: [Check; 9] = [
        Check::EmptyDiff,
        Check::Scope,
        Check::BreakingChange,
        Check::Secret,
        Check::Placeholder,
        Check::DebugLeftover,
        Check::TestWeakened,
        Check::UntestedCriterion,
        Check::LargeDiff,
    ];

    /// The name in `[checks]` and in findings.
    pub fn name(self) -> &'static str {
        match self {
            Check::EmptyDiff => "empty_diff",
            Check::Scope => "scope",
            Check::BreakingChange => "breaking_change",
            Check::Secret => "secret",
            Check::Placeholder => "placeholder",
            Check::DebugLeftover => "debug_leftover",
            Check::TestWeakened => "test_weakened",
            Check::UntestedCriterion => "untested_criterion",
            Check::LargeDiff => "large_diff",
        }
    }

    pub fn parse(name: &str) -> Option<Check> {
        Check::ALL.into_iter().find(|c| c.name() == name)
    }

    pub fn default_severity(self) -> Severity {
        match self {
            Check::EmptyDiff | Check::Secret => Severity::Critical,
            Check::Scope | Check::BreakingChange | Check::Placeholder | Check::TestWeakened => {
                Severity::Major
            }
            Check::DebugLeftover | Check::UntestedCriterion | Check::LargeDiff => Severity::Minor,
        }
    }
}

/// Default limits of `large_diff`.
pub const LARGE_DIFF_LINES: usize = 400;
pub const LARGE_DIFF_FILES: usize = 20;

/// What `[checks]` configures: each built-in check's severity (None: off),
/// the limits of `large_diff`, and the commands to run.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    levels: [Option<Severity>; 9],
    pub large_diff_lines: usize,
    pub large_diff_files: usize,
    pub commands: Vec<CommandCheck>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            levels: Check::ALL.map(|c| Some(c.default_severity())),
            large_diff_lines: LARGE_DIFF_LINES,
            large_diff_files: LARGE_DIFF_FILES,
            commands: Vec::new(),
        }
    }
}

impl Config {
    /// The check's severity, None when it is off.
    pub fn severity(&self, check: Check) -> Option<Severity> {
        self.levels[check as usize]
    }

    /// Turn a check off (None) or give it a severity.
    pub fn set(&mut self, check: Check, level: Option<Severity>) {
        self.levels[check as usize] = level;
    }
}

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
        self.severity.blocking()
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
