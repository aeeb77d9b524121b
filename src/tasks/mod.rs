//! Task files: the typed model of a task, read from the working tree (task
//! files are state, not code, so they are not read from git), the store that
//! finds, lists and atomically saves them, and the state changes a review
//! makes.
//!
//! It must keep every field it does not know, in order, when it writes a file
//! back, and must not touch anything but the task file itself.

mod model;
pub mod state;
mod store;

use std::path::PathBuf;

pub use model::{Criterion, GateCheck, Scope, SpecReference, Status, Task};
pub use state::{ReviewOutcome, record_review};
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
    #[error("task {id} not found (looked in {})", list(searched))]
    NotFound { id: String, searched: Vec<PathBuf> },
    #[error(
        "task {id} exists in more than one place: {}; pick one with --feature",
        list(places)
    )]
    Ambiguous { id: String, places: Vec<PathBuf> },
}

fn list(paths: &[PathBuf]) -> String {
    paths
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}
