//! Task files: the typed model of a task, read from the working tree (task
//! files are state, not code, so they are not read from git), the store that
//! finds, lists and atomically saves them in the orchestrator's layouts, the
//! acceptance-criteria dialects, the coordination requirements of a task and
//! its feature, the state changes a review makes and those a person's answer
//! to an approval makes (`human`), the counting rules every decider shares
//! (`counting`: attempts, revisions, failure at the limit), and the event a review leaves in the
//! multi-player layout.
//!
//! It must keep every field it does not know, in order, when it writes a file
//! back, write a review only to the file it read, and touch nothing under
//! `.speed/` but task files and event files.

pub mod coordination;
pub mod counting;
mod criteria;
pub mod document;
pub mod events;
pub mod human;
mod model;
pub mod state;
mod store;

use std::path::PathBuf;

pub use coordination::Coordination;
pub use criteria::Criterion;
pub use events::Actor;
pub use model::{GateCheck, Layout, Scope, SpecReference, Status, Task};
pub use state::{ReviewOutcome, Revision, record_review};
pub use store::{Feature, Store};

/// Everything that can go wrong reading or writing task files; each variant
/// names the file or task id concerned.
#[derive(Debug, thiserror::Error)]
pub enum Error {
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
    #[error("{}:{line}:{column}: invalid JSON: {message}", path.display())]
    Malformed {
        path: PathBuf,
        line: usize,
        column: usize,
        message: String,
    },
    #[error("{}: field `{field}` should be {expected}", path.display())]
    InvalidField {
        path: PathBuf,
        field: String,
        expected: String,
    },
    #[error(
        "{}: its id {id:?} does not match its file name {}; a task's id is its file name without .json, so that its review is written back to this file",
        path.display(),
        path.file_name().map(|n| n.to_string_lossy()).unwrap_or_default()
    )]
    IdMismatch { path: PathBuf, id: String },
    #[error("task {id} not found (looked in {})", list(searched))]
    NotFound { id: String, searched: Vec<PathBuf> },
    #[error(
        "task {id} exists in more than one place: {}; pick one with --feature{}",
        list(places),
        active_hint(active)
    )]
    Ambiguous {
        id: String,
        places: Vec<PathBuf>,
        /// What the `active_feature` files said, if they named anything.
        active: Vec<String>,
    },
}

fn active_hint(active: &[String]) -> String {
    match active {
        [] => " (or name one of them in .speed/active_feature)".to_string(),
        names => format!(
            " (the active feature, {}, is not one of them)",
            names.join(" / ")
        ),
    }
}

fn list(paths: &[PathBuf]) -> String {
    paths
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}
