//! speed's own checks: facts about a diff that speed establishes itself,
//! before any model is asked (an empty diff, a file outside the declared
//! scope, a changed signature or default whose callers were not updated, a
//! struct gaining a field where a literal lists every field, a secret, a
//! `todo!()` left in, a test newly skipped, …), and the commands a project
//! configures (`[[checks.command]]`) run in a temporary checkout of the
//! head commit, their output read by `parsers` into findings placed at a
//! file, line and column (`messages`), preexisting ones confirmed against
//! the base commit (`baseline`).
//!
//! Input is plain data: the diff (secrets already redacted), the task's
//! scope and criteria, the impact analysis, and both sides' files through
//! the review's store of texts and trees (`files`), so that a file the
//! index parses is not parsed again; the changed files are outlined once,
//! on all cores, for every check (`sides`). Output is a
//! list of `Finding`s, each naming its check, severity, file, line and a
//! message. A check that cries wolf teaches people to ignore it: each one
//! stands down wherever its fact is uncertain. Nothing here prints.

pub mod assertions;
mod baseline;
pub mod builtin;
mod checkout;
pub mod command;
pub mod config;
pub mod coordination;
pub mod discarded;
pub mod files;
pub mod macros;
pub mod measure;
pub mod members;
pub mod messages;
pub mod outline;
pub mod parsers;
mod reading;
mod running;
pub mod sides;
pub mod signature;
pub mod skips;
mod snapshot;
pub mod test_fn;
pub mod tool;
pub mod trial;
pub mod weakened;

use serde::{Deserialize, Serialize};

pub use crate::severity::Severity;
pub use command::run_commands;
pub use reading::{CheckRun, RunOutcome};

/// The finding of a command check that changed files of its checkout.
pub const MODIFIED_CHECKOUT: &str = "check_modified_checkout";
pub use config::{
    Check, CommandCheck, Config, DEFAULT_COMMAND_SEVERITY, DEFAULT_COMMAND_TIMEOUT_SECS,
    DEFAULT_LARGE_DIFF_FILES, DEFAULT_LARGE_DIFF_LINES,
};
pub use files::{Files, Side};
pub use sides::Sides;
pub use tool::{Blocking, Category, Tool};

/// One finding of a check. `category`, `column`, `rule` and `preexisting`
/// come from a tool's parsed output (`[[checks.command]]` with a
/// `parser`); every finding carries them (null or false when unset), so
/// every finding has the one shape of the contract's "Tool output".
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Finding {
    /// A built-in check's name, or a command check's configured name.
    pub check: String,
    /// The command's `category` (typecheck, lint, test, …), when it has one.
    #[serde(default)]
    pub category: Option<Category>,
    pub severity: Severity,
    pub file: Option<String>,
    pub line: Option<u32>,
    #[serde(default)]
    pub column: Option<u32>,
    /// The tool's own rule or code (`clippy::needless_return`, `F401`,
    /// `TS2322`, a test's name).
    #[serde(default)]
    pub rule: Option<String>,
    pub message: String,
    /// On a line the diff did not touch (and, when speed could check, also
    /// found at the base commit): it does not block unless the command
    /// says `blocking = "all"`.
    #[serde(default)]
    pub preexisting: bool,
    /// Shown, never blocking: the command says `blocking = false`, or the
    /// finding is preexisting.
    #[serde(default, skip_serializing_if = "is_false")]
    pub advisory: bool,
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// The optional fields unset; `check`, `severity` and `message` are always
/// given (`Finding { check, severity, file, line, message, ..Default::default() }`).
impl Default for Finding {
    fn default() -> Finding {
        Finding {
            check: String::new(),
            category: None,
            severity: Severity::Nit,
            file: None,
            line: None,
            column: None,
            rule: None,
            message: String::new(),
            preexisting: false,
            advisory: false,
        }
    }
}

impl Finding {
    pub fn blocking(&self) -> bool {
        self.severity.is_blocking() && !self.advisory
    }

    /// `file:line:column`, `file:line`, `file`, or nothing, for messages.
    pub fn location(&self) -> Option<String> {
        match (&self.file, self.line, self.column) {
            (Some(f), Some(l), Some(c)) => Some(format!("{f}:{l}:{c}")),
            (Some(f), Some(l), None) => Some(format!("{f}:{l}")),
            (Some(f), None, _) => Some(f.clone()),
            _ => None,
        }
    }

    /// The message as people and the model read it: the tool's rule first,
    /// and why it does not block, when it does not.
    pub fn text(&self) -> String {
        let mut out = match &self.rule {
            Some(rule) => format!("[{rule}] "),
            None => String::new(),
        };
        let (first, rest) = match self.message.split_once('\n') {
            Some((first, rest)) => (first, Some(rest)),
            None => (self.message.as_str(), None),
        };
        out.push_str(first);
        if self.preexisting {
            out.push_str(" (preexisting: on a line this change does not touch; it does not block)");
        } else if self.advisory {
            out.push_str(" (advisory: this check does not block)");
        }
        if let Some(rest) = rest {
            out.push('\n');
            out.push_str(rest);
        }
        out
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
