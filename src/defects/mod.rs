//! Defects as the orchestrator lays them out, and what speed establishes
//! about a defect's fix on its own, before and independently of any model.
//!
//! A defect is a folder, `.speed/defects/<name>/` (single-player) or
//! `.speed/shared/defects/<name>/` (multi-player), holding `report.md` (what
//! a person saw), `triage.json` (the triage agent's diagnosis: root cause,
//! `affected_files`, regression risks, the related spec), `state.json` (the
//! pipeline's state: `status`, `branch`) and optionally `context.md`
//! (operator guidance). `store` finds and reads that folder (from the
//! working tree: it is state, not code) and writes back the only two things
//! a review may change there, on request: `state.json`'s status and a line
//! in `logs/review.log`.
//!
//! The determinations read the diff model and git history: `scope` (changed
//! paths outside `affected_files`) and `repro` (was the test that
//! reproduced the defect changed later on the branch); the fix's size is
//! measured as the `large_diff` check measures a diff
//! (`checks::measure`), against `defect.max_lines` and `defect.max_files`.
//! They never call a model and never print.

pub mod findings;
pub mod limits;
pub mod model;
pub mod report;
pub mod repro;
pub mod scope;
pub mod store;

use std::path::PathBuf;

pub use findings::{Findings, establish};
pub use limits::Limits;
pub use model::{Defect, Layout, State, Triage};
pub use report::Report;
pub use repro::TestChange;
pub use scope::{Exempt, Violation};
pub use store::Store;

/// Everything that can go wrong finding, reading or writing a defect. Paths
/// are relative to the repository root, as a user would type them.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("defect name {name:?} is not a folder name: {why}")]
    BadName { name: String, why: &'static str },
    #[error("defect {name} not found (looked in {})", list(searched))]
    NotFound {
        name: String,
        searched: Vec<PathBuf>,
    },
    #[error(
        "defect {name} exists in both layouts: {}; remove the stale one so speed reviews the right fix",
        list(places)
    )]
    Ambiguous { name: String, places: Vec<PathBuf> },
    #[error("{}: missing: {why}", path.display())]
    Missing { path: PathBuf, why: &'static str },
    #[error("cannot read {}: {source}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot write {}: {source}", path.display())]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{}:{line}:{column}: {message}", path.display())]
    Malformed {
        path: PathBuf,
        line: usize,
        column: usize,
        message: String,
    },
    #[error("{}: field `{field}` is missing: {why}", path.display())]
    MissingField {
        path: PathBuf,
        field: &'static str,
        why: &'static str,
    },
    #[error("defect.exempt: {glob:?} is not a valid glob: {message}")]
    BadGlob { glob: String, message: String },
}

/// What a defect fix is judged by, with stable ids the verdict must rate
/// (as a task's acceptance criteria are): the orchestrator's defect-fix
/// review criteria, one per line.
pub const CRITERIA: [(&str, &str); 5] = [
    (
        "DF-1",
        "Defect addressed: the change makes the behaviour match the report's Expected Behavior, at the root cause (the triage's hypothesis, or a cause the diff shows to be the real one), not by hiding the symptom.",
    ),
    (
        "DF-2",
        "The reproducing test passes for the right reason: the fix changes the code under test, not the test, and does not special-case the test's input or swallow the error.",
    ),
    (
        "DF-3",
        "Scope contained: every change is needed to correct the defect; nothing outside the affected files, no renames for style, reformatting, moved code or unrelated comments.",
    ),
    (
        "DF-4",
        "No new behaviour: no new endpoints or mutations, UI states, changed return types or interfaces, or new dependencies and imports beyond what correcting the defect needs.",
    ),
    (
        "DF-5",
        "Regression risk: the triage's regression risks and the dependents in the impact assessment still work; the changed paths are covered by tests and the happy path behaves as before.",
    ),
];

fn list(paths: &[PathBuf]) -> String {
    paths
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// A word of a fixed vocabulary, read back from a report file: the field
/// holds one of `words` (a `&'static str`) when speed writes it, and a
/// word outside them is an error naming the ones expected.
fn known_word<'de, D: serde::Deserializer<'de>>(
    d: D,
    words: &'static [&'static str],
) -> Result<&'static str, D::Error> {
    let word = <String as serde::Deserialize>::deserialize(d)?;
    words
        .iter()
        .copied()
        .find(|w| *w == word)
        .ok_or_else(|| serde::de::Error::unknown_variant(&word, words))
}
