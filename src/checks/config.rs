//! `[checks]` as the checks read it: every built-in check with its severity
//! (or off), the `large_diff` limits, and the `[[checks.command]]` entries.
//! This part owns the type and the contract's defaults; `settings` fills it
//! from flags and the config file.

use std::time::Duration;

use serde::Serialize;

use crate::severity::Severity;

/// speed's built-in checks, in the contract's order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
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
    Coordination,
    ErrorDiscarded,
}

impl Check {
    pub const ALL: [Check; 11] = [
        Check::EmptyDiff,
        Check::Scope,
        Check::BreakingChange,
        Check::Secret,
        Check::Placeholder,
        Check::DebugLeftover,
        Check::TestWeakened,
        Check::UntestedCriterion,
        Check::LargeDiff,
        Check::Coordination,
        Check::ErrorDiscarded,
    ];

    /// The key in `[checks]` and the `check` of a finding.
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
            Check::Coordination => "coordination",
            Check::ErrorDiscarded => "error_discarded",
        }
    }

    /// The contract's default severity.
    pub fn default_severity(self) -> Severity {
        match self {
            Check::EmptyDiff | Check::Secret => Severity::Critical,
            Check::Scope
            | Check::BreakingChange
            | Check::Placeholder
            | Check::TestWeakened
            | Check::Coordination => Severity::Major,
            Check::DebugLeftover
            | Check::UntestedCriterion
            | Check::LargeDiff
            | Check::ErrorDiscarded => Severity::Minor,
        }
    }
}

pub const DEFAULT_LARGE_DIFF_LINES: usize = 400;
pub const DEFAULT_LARGE_DIFF_FILES: usize = 20;
pub const DEFAULT_COMMAND_SEVERITY: Severity = Severity::Major;
pub const DEFAULT_COMMAND_TIMEOUT_SECS: u64 = 600;

/// `[checks]`: what speed checks itself before the model is asked.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// Every built-in check with its severity, None when turned off; in
    /// `Check::ALL` order.
    pub levels: Vec<(Check, Option<Severity>)>,
    /// `large_diff` finds more changed lines or files than these.
    pub large_diff_lines: usize,
    pub large_diff_files: usize,
    /// `[[checks.command]]`, in file order; they run only when configured.
    pub commands: Vec<CommandCheck>,
}

impl Config {
    /// The severity of a built-in check's findings; None when it is off.
    pub fn severity(&self, check: Check) -> Option<Severity> {
        self.levels
            .iter()
            .find(|(c, _)| *c == check)
            .and_then(|(_, level)| *level)
    }
}

impl Default for Config {
    fn default() -> Config {
        Config {
            levels: Check::ALL
                .iter()
                .map(|c| (*c, Some(c.default_severity())))
                .collect(),
            large_diff_lines: DEFAULT_LARGE_DIFF_LINES,
            large_diff_files: DEFAULT_LARGE_DIFF_FILES,
            commands: Vec::new(),
        }
    }
}

/// One `[[checks.command]]`: run in a temporary checkout of the head commit;
/// a non-zero exit is a finding of `severity`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CommandCheck {
    pub name: String,
    /// argv, run without a shell.
    pub run: Vec<String>,
    pub severity: Severity,
    #[serde(rename = "timeout_secs", serialize_with = "seconds")]
    pub timeout: Duration,
    /// How its output is read (parser, report, category, blocking).
    #[serde(flatten)]
    pub tool: super::Tool,
}

fn seconds<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(d.as_secs_f64())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_follow_the_contract() {
        let checks = Config::default();
        assert_eq!(checks.levels.len(), 11);
        assert_eq!(checks.severity(Check::Coordination), Some(Severity::Major));
        assert_eq!(checks.severity(Check::EmptyDiff), Some(Severity::Critical));
        assert_eq!(checks.severity(Check::Scope), Some(Severity::Major));
        assert_eq!(checks.severity(Check::DebugLeftover), Some(Severity::Minor));
        assert_eq!(checks.severity(Check::LargeDiff), Some(Severity::Minor));
        assert_eq!(
            checks.severity(Check::ErrorDiscarded),
            Some(Severity::Minor)
        );
        assert_eq!(
            (checks.large_diff_lines, checks.large_diff_files),
            (400, 20)
        );
    }
}
