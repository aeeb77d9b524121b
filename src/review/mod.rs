//! The review pipeline for one task or one branch, and for a batch.
//!
//! `prepare` gathers everything up to the model call (diff, specs, impact,
//! prompt); `split` spreads a diff too large for one prompt over several;
//! `model` asks for a verdict with one corrective retry; `head` reads the
//! files the verdict cites; `guardian` runs the second gate after an
//! approval; `record` writes what a review changes. Nothing here prints: progress goes through `Events`, results come
//! back as `Report`s for `render`.

pub mod batch;
pub mod defect;
pub mod dry;
pub mod guard;
pub mod guardian;
pub mod head;
pub mod model;
pub mod nits;
pub mod overrides;
pub mod prepare;
pub mod record;
pub mod report;
pub mod single;
pub mod split;
pub mod verdicts;

use std::path::PathBuf;

use crate::exit::Outcome;

pub use prepare::{Prepared, Shared, Subject};
pub use report::Report;
pub use single::{Models, NoModel};

/// Progress a long review reports to whoever is watching (the app draws a
/// spinner from these; tests ignore them).
pub trait Events: Sync {
    fn event(&self, event: Event);
}

#[derive(Debug, Clone)]
pub enum Event {
    ModelStarted {
        label: String,
        what: &'static str,
    },
    ModelFinished {
        label: String,
        what: &'static str,
    },
    Waiting {
        label: String,
        seconds: f64,
        why: String,
    },
    Retrying {
        label: String,
        what: &'static str,
        reason: String,
    },
}

/// Events nobody watches.
pub struct Silent;

impl Events for Silent {
    fn event(&self, _: Event) {}
}

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Git(#[from] crate::git::Error),
    #[error(transparent)]
    Tasks(#[from] crate::tasks::Error),
    #[error("defect {name}: {source}")]
    Defect {
        name: String,
        #[source]
        source: crate::defects::Error,
    },
    #[error(transparent)]
    Prompt(#[from] crate::prompt::Error),
    #[error("{subject}: branch {branch:?} not found ({source})")]
    BranchMissing {
        subject: String,
        branch: String,
        source: Box<crate::git::Error>,
    },
    /// Not a failure of the review: single review turns it into a
    /// request_changes decided without a model.
    #[error(
        "{subject}: the diff between {base} and {} is empty: nothing was implemented",
        found.branch
    )]
    EmptyDiff {
        subject: String,
        /// The base commit, short.
        base: String,
        found: Box<prepare::Empty>,
    },
    /// `at` names the main branch and its commit, e.g. "main (6f4bc06c71)".
    #[error("{subject}: spec {path} not found on {at}{hint}")]
    SpecMissing {
        subject: String,
        path: String,
        at: String,
        hint: String,
    },
    #[error("{subject}: --spec: {source}")]
    SpecSection {
        subject: String,
        source: crate::specs::Error,
    },
    #[error(
        "{subject}: no spec: the task has no spec_references, its feature no spec_path, and no --spec was given"
    )]
    NoSpec { subject: String },
    #[error(
        "{subject}: no spec: its triage.json has no related_spec and its report.md names no Related Feature with a spec; give the spec with --spec{}",
        if why.is_empty() { String::new() } else { format!(" ({why})") }
    )]
    NoDefectSpec { subject: String, why: String },
    #[error("{path}: {message}")]
    Input { path: PathBuf, message: String },
    #[error("cannot write {path}: {source}")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{0}")]
    Model(String),
    #[error(transparent)]
    Fs(#[from] crate::fsx::Error),
    #[error(
        "{subject} is being reviewed by another speed process ({holder}): nothing was changed; review it again once that review has ended"
    )]
    BeingReviewed { subject: String, holder: String },
    #[error("speed was interrupted before this review was recorded: nothing was changed")]
    Interrupted,
}

impl Error {
    pub fn outcome(&self) -> Outcome {
        Outcome::Error
    }
}
