//! How much a finding weighs: the one scale shared by speed's own checks,
//! the model's issues and the guardian's flags. It sits at the bottom so
//! that every part that grades a finding (checks, verdict, render) reads
//! the same words without importing a part above it.

use serde::{Deserialize, Serialize};

/// Issue and guardian-flag severity, most severe first so that sorting by it
/// puts blocking issues at the top.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    Critical,
    Major,
    Minor,
    Nit,
}

impl Severity {
    pub const ALL: [Severity; 4] = [
        Severity::Critical,
        Severity::Major,
        Severity::Minor,
        Severity::Nit,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Critical => "critical",
            Severity::Major => "major",
            Severity::Minor => "minor",
            Severity::Nit => "nit",
        }
    }

    /// Critical and major issues block an approval.
    pub fn is_blocking(self) -> bool {
        matches!(self, Severity::Critical | Severity::Major)
    }
}
