//! The typed settings of the config sections that later parts of speed
//! consume (`[checks]`, `[defect]`, `[hook]`), the words their keys take,
//! and the contract's defaults. Plain data: nothing here reads a file.

use std::time::Duration;

use serde::Serialize;

use crate::llm::ProviderKind;
use crate::verdict::Severity;

/// `llm.provider` / `--provider`: a model provider, or `none` for a review
/// by speed's own checks alone (offline).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Provider {
    Model(ProviderKind),
    Offline,
}

impl Provider {
    pub const WORDS: &'static [&'static str] = &["openai", "anthropic", "command", "none"];

    pub fn parse(word: &str) -> Option<Provider> {
        match word {
            "none" => Some(Provider::Offline),
            other => other.parse().ok().map(Provider::Model),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Provider::Model(kind) => kind.as_str(),
            Provider::Offline => "none",
        }
    }
}

impl Serialize for Provider {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// `allow` or `block`, for `hook.unknown` and `hook.on_error`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Policy {
    Allow,
    Block,
}

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
        }
    }

    /// The contract's default severity.
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

pub const DEFAULT_LARGE_DIFF_LINES: usize = 400;
pub const DEFAULT_LARGE_DIFF_FILES: usize = 20;
pub const DEFAULT_COMMAND_SEVERITY: Severity = Severity::Major;
pub const DEFAULT_COMMAND_TIMEOUT_SECS: u64 = 600;

/// `[checks]`: what speed checks itself before the model is asked.
#[derive(Debug, Clone, PartialEq)]
pub struct ChecksSettings {
    /// Every built-in check with its severity, None when turned off; in
    /// `Check::ALL` order.
    pub levels: Vec<(Check, Option<Severity>)>,
    /// `large_diff` finds more changed lines or files than these.
    pub large_diff_lines: usize,
    pub large_diff_files: usize,
    /// `[[checks.command]]`, in file order; they run only when configured.
    pub commands: Vec<CommandCheck>,
}

impl ChecksSettings {
    /// The severity of a built-in check's findings; None when it is off.
    pub fn severity(&self, check: Check) -> Option<Severity> {
        self.levels
            .iter()
            .find(|(c, _)| *c == check)
            .and_then(|(_, level)| *level)
    }
}

impl Default for ChecksSettings {
    fn default() -> ChecksSettings {
        ChecksSettings {
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
}

fn seconds<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(d.as_secs_f64())
}

pub const DEFAULT_DEFECT_MAX_LINES: usize = 100;
pub const DEFAULT_DEFECT_MAX_FILES: usize = 3;
/// The contract's example; `.speed/` is always exempt besides these.
pub const DEFAULT_DEFECT_EXEMPT: &[&str] = &[
    "tests/**",
    "**/test_*.py",
    "*.lock",
    "package.json",
    "requirements.txt",
];

/// `[defect]`: what a defect fix may touch before speed calls it large or
/// out of scope.
#[derive(Debug, Clone, PartialEq)]
pub struct DefectSettings {
    pub max_lines: usize,
    pub max_files: usize,
    /// Globs (checked to compile with `globset`) of paths never counted as
    /// scope violations.
    pub exempt: Vec<String>,
}

impl Default for DefectSettings {
    fn default() -> DefectSettings {
        DefectSettings {
            max_lines: DEFAULT_DEFECT_MAX_LINES,
            max_files: DEFAULT_DEFECT_MAX_FILES,
            exempt: DEFAULT_DEFECT_EXEMPT
                .iter()
                .map(|g| g.to_string())
                .collect(),
        }
    }
}

/// `[hook]`: how the git hooks decide.
#[derive(Debug, Clone, PartialEq)]
pub struct HookSettings {
    /// On a head no approval covers, review it (a model call) instead of
    /// blocking at once.
    pub review_on_miss: bool,
    /// Commits that belong to no task.
    pub unknown: Policy,
    /// When the hook itself fails (no repository state, unreadable task).
    pub on_error: Policy,
    /// The most the hook's own check may take (a review on a miss too).
    pub timeout: Duration,
    /// The most the user's own hook (`<name>.local`) may take.
    pub local_timeout: Duration,
}

impl Default for HookSettings {
    fn default() -> HookSettings {
        HookSettings {
            review_on_miss: false,
            unknown: Policy::Allow,
            on_error: Policy::Block,
            timeout: Duration::from_secs_f64(super::DEFAULT_HOOK_TIMEOUT_SECS),
            local_timeout: Duration::from_secs_f64(super::DEFAULT_HOOK_LOCAL_TIMEOUT_SECS),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_follow_the_contract() {
        let checks = ChecksSettings::default();
        assert_eq!(checks.levels.len(), 9);
        assert_eq!(checks.severity(Check::EmptyDiff), Some(Severity::Critical));
        assert_eq!(checks.severity(Check::Scope), Some(Severity::Major));
        assert_eq!(checks.severity(Check::DebugLeftover), Some(Severity::Minor));
        assert_eq!(checks.severity(Check::LargeDiff), Some(Severity::Minor));
        assert_eq!(
            (checks.large_diff_lines, checks.large_diff_files),
            (400, 20)
        );
        let defect = DefectSettings::default();
        assert_eq!((defect.max_lines, defect.max_files), (100, 3));
        let hook = HookSettings::default();
        assert!(!hook.review_on_miss);
        assert_eq!(
            (hook.unknown, hook.on_error),
            (Policy::Allow, Policy::Block)
        );
    }

    #[test]
    fn default_exempt_globs_compile() {
        for glob in DEFAULT_DEFECT_EXEMPT {
            globset::Glob::new(glob).unwrap();
        }
    }

    #[test]
    fn provider_words_round_trip() {
        for word in Provider::WORDS {
            assert_eq!(Provider::parse(word).unwrap().as_str(), *word);
        }
        assert_eq!(Provider::parse("gpt"), None);
    }
}
