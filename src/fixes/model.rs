//! A fix: one finding of a review turned into a piece of work, with its
//! priority, its status and what happened to it. Plain data, as written
//! in `.speed/fixes/`; `fingerprint` is what makes the same finding in a
//! later review the same fix.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::checks::Category;
use crate::severity::Severity;

/// Where a fix comes from, in the contract's words.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// speed's own checks and the command checks.
    Check,
    /// The model's critical and major issues, and spec requirements it
    /// found unsatisfied or missing.
    Model,
    /// An acceptance criterion the review found unmet.
    Criterion,
    /// A nit of an approval (what `speed nits` prints).
    Nit,
    /// A person's reason for rejecting an approval (`speed reject`).
    Person,
    /// A review's rejection of the task's plan: the planner's to act on,
    /// never a coding fix (`speed fix list` shows it apart; `fix run` and
    /// `fix prompt` refuse it).
    Plan,
}

impl Source {
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Check => "check",
            Source::Model => "model",
            Source::Criterion => "criterion",
            Source::Nit => "nit",
            Source::Person => "person",
            Source::Plan => "plan",
        }
    }

    /// A fix a coding agent can be handed.
    pub fn coding(self) -> bool {
        self != Source::Plan
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Pending,
    InProgress,
    /// Done by a person (`speed fix done`) or by `speed fix run`, whose
    /// check no longer found it.
    Completed,
    /// A person decided not to fix it (`speed fix skip --reason`), or
    /// accepted its task as it is (`speed override`).
    Skipped,
    /// A later review of the task no longer found it.
    Resolved,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Pending => "pending",
            Status::InProgress => "in_progress",
            Status::Completed => "completed",
            Status::Skipped => "skipped",
            Status::Resolved => "resolved",
        }
    }

    /// Still to be done: what `speed fix list` shows without `--all`.
    pub fn open(self) -> bool {
        matches!(self, Status::Pending | Status::InProgress)
    }
}

/// The finding a fix is about, as the review reported it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Found {
    /// `check/<name>` (speed's check or a command's name), `review/<severity>`,
    /// `review/missing-from-spec`, `review/unsatisfied-requirement`,
    /// `criterion/<id>`, `nit/review`, `nit/guardian`.
    pub kind: String,
    /// A check's name (built-in or configured command).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub check: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub category: Option<Category>,
    pub severity: Severity,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub column: Option<u64>,
    /// The tool's rule, or the criterion's id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suggestion: Option<String>,
    /// The command that finds it, for a command check (argv).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<Vec<String>>,
}

impl Found {
    /// `file:line:column`, `file:line`, `file`, or None.
    pub fn place(&self) -> Option<String> {
        match (&self.file, self.line, self.column) {
            (Some(f), Some(l), Some(c)) => Some(format!("{f}:{l}:{c}")),
            (Some(f), Some(l), None) => Some(format!("{f}:{l}")),
            (Some(f), None, _) => Some(f.clone()),
            _ => None,
        }
    }

    /// The first line of the message.
    pub fn headline(&self) -> &str {
        self.message.lines().next().unwrap_or("").trim()
    }
}

/// One change of a fix's status, kept in order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Event {
    pub at: String,
    pub status: Status,
    pub by: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub note: String,
}

/// A fix, as `.speed/fixes/` and `speed fix list --format json` hold it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Fix {
    pub id: String,
    /// The task it belongs to (None for a defect's fix).
    pub task: Option<String>,
    pub feature: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub defect: Option<String>,
    /// The branch the finding was found on.
    pub branch: String,
    /// 1 is first.
    pub priority: u32,
    pub source: Source,
    pub finding: Found,
    pub description: String,
    pub status: Status,
    pub created_at: String,
    pub completed_at: Option<String>,
    /// What matches the same finding in a later review.
    pub fingerprint: String,
    /// The head commit of the last review that found it, and when.
    pub last_seen_commit: String,
    pub last_seen_at: String,
    /// The report of the review that last found it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub report: Option<String>,
    /// Why a person skipped it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Skipped because a person accepted the task with `speed override` at
    /// this head commit: a review of another head that finds it again
    /// opens it again, since the override covered that commit only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub overridden_at: Option<String>,
    /// The commit `speed fix run` made for it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    #[serde(default)]
    pub history: Vec<Event>,
}

impl Fix {
    /// "task 3 (feature catalog)", "defect login-crash".
    pub fn owner(&self) -> String {
        match (&self.task, &self.feature, &self.defect) {
            (Some(task), Some(feature), _) => format!("task {task} (feature {feature})"),
            (Some(task), None, _) => format!("task {task}"),
            (None, _, Some(defect)) => format!("defect {defect}"),
            _ => format!("branch {}", self.branch),
        }
    }

    /// "catalog/3", "3", "defect login-crash": short, for tables.
    pub fn short_owner(&self) -> String {
        match (&self.task, &self.feature, &self.defect) {
            (Some(task), Some(feature), _) => format!("{feature}/{task}"),
            (Some(task), None, _) => format!("task {task}"),
            (None, _, Some(defect)) => format!("defect {defect}"),
            _ => self.branch.clone(),
        }
    }
}

/// The seed's priority offsets: a warning waits behind every error.
pub fn priority(base: u32, severity: Severity) -> u32 {
    let offset = match severity {
        Severity::Critical | Severity::Major => 0,
        Severity::Minor => 10,
        Severity::Nit => 20,
    };
    base.saturating_add(offset)
}

/// The category a built-in check's findings fall in (its fixes' order).
pub fn builtin_category(check: &str) -> Option<Category> {
    Some(match check {
        "breaking_change" => Category::Typecheck,
        "test_weakened" | "untested_criterion" => Category::Test,
        "secret" => Category::Security,
        "scope" | "placeholder" | "debug_leftover" | "large_diff" | "empty_diff"
        | "coordination" | "error_discarded" => Category::Quality,
        _ => return None,
    })
}

/// A message's words, stable across runs: lowercase, numbers and commit
/// hashes reduced to `#`, spacing collapsed, only its first line (a
/// command's output tail varies from run to run).
pub fn words(text: &str) -> String {
    let first = text.lines().next().unwrap_or("");
    let mut out = String::with_capacity(first.len().min(300));
    let mut token = String::new();
    let flush = |token: &mut String, out: &mut String| {
        if token.is_empty() {
            return;
        }
        let hexish = token.len() >= 7
            && token.chars().all(|c| c.is_ascii_hexdigit())
            && token.chars().any(|c| c.is_ascii_digit());
        if hexish {
            out.push('#');
        } else {
            let mut digits = false;
            for c in token.chars() {
                if c.is_ascii_digit() {
                    if !digits {
                        out.push('#');
                    }
                    digits = true;
                } else {
                    digits = false;
                    out.extend(c.to_lowercase());
                }
            }
        }
        token.clear();
    };
    for c in first.chars() {
        if c.is_alphanumeric() || c == '_' {
            token.push(c);
        } else {
            flush(&mut token, &mut out);
            if c.is_whitespace() {
                if !out.ends_with(' ') && !out.is_empty() {
                    out.push(' ');
                }
            } else {
                out.push(c);
            }
        }
        if out.len() > 400 {
            break;
        }
    }
    flush(&mut token, &mut out);
    out.trim().to_string()
}

/// The set of words, for matching a model's rephrased finding.
pub fn word_set(text: &str) -> std::collections::BTreeSet<String> {
    words(text)
        .split(|c: char| !c.is_alphanumeric() && c != '#' && c != '_')
        .filter(|w| w.len() > 2)
        .map(str::to_string)
        .collect()
}

/// A fix's id: the first `ID_LEN` hex digits of the hash of its owner and
/// fingerprint; on a clash (`salt` > 0) of the hash with the salt added,
/// so every id has the same length and none is a prefix of another.
pub fn id(owner: &str, fingerprint: &str, salt: usize) -> String {
    let text = match salt {
        0 => format!("{owner}\0{fingerprint}"),
        n => format!("{owner}\0{fingerprint}\0{n}"),
    };
    let digest = Sha256::digest(text.as_bytes());
    digest
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect::<String>()
        .chars()
        .take(ID_LEN)
        .collect()
}

/// Hex digits in an id.
pub const ID_LEN: usize = 10;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_keep_meaning_and_drop_what_moves() {
        assert_eq!(
            words("`cargo test` exited with status 101 (in a checkout of 3fa9c01d2e)."),
            words(
                "`cargo test` exited with status 101 (in a checkout of 77b01aa9ce).\nLast lines:"
            )
        );
        assert_eq!(
            words("Unused  variable `x` at line 12"),
            "unused variable `x` at line #"
        );
        assert_ne!(words("unused `x`"), words("unused `y`"));
        // A word that merely looks hex-like is kept.
        assert_eq!(words("deadbeef"), "deadbeef");
    }

    #[test]
    fn ids_are_stable_short_and_distinct() {
        let a = id("task 3", "check\0clippy", 0);
        assert_eq!(a.len(), ID_LEN);
        assert_eq!(a, id("task 3", "check\0clippy", 0));
        assert_ne!(a, id("task 4", "check\0clippy", 0));
        let other = id("task 3", "check\0clippy", 2);
        assert_eq!(
            other.len(),
            ID_LEN,
            "a clash gives another id of the same length"
        );
        assert!(!other.starts_with(&a) && other != a);
    }

    #[test]
    fn priorities_put_warnings_after_errors() {
        assert_eq!(priority(2, Severity::Major), 2);
        assert_eq!(priority(2, Severity::Minor), 12);
        assert_eq!(priority(5, Severity::Nit), 25);
        assert_eq!(builtin_category("secret"), Some(Category::Security));
    }
}
