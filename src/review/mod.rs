//! The review pipeline: named stages over one context built once from the
//! settings, data flowing one way.
//!
//! - `context`: what every review of a run shares (`Context`, `Config`).
//! - `plan`: which subjects a command reviews, and which batch mode skips.
//! - the stages of one review, in order (`run` walks them; `prepare` walks
//!   the ones before the model, which a dry run (`dry`) stops after):
//!   1. the lock (`ledger::locks`), taken first, and the task file read
//!      again under it (`run::locked`): two reviews of a task run one
//!      after the other, the second reading what the first recorded;
//!   2. `redact` the subject, then resolve its branch and diff (`work`);
//!      an empty diff is a value, decided without a model;
//!   3. `sources`: the specs, their ranked sections, concerns, vision;
//!   4. `facts`: the blast radius, speed's checks, a defect fix's facts;
//!   5. `compose`: the prompts, in parts when the diff needs them;
//!   6. `ask`: the model, and after an approval the guardian;
//!   7. `decide`: the one place an approval is overruled;
//!   8. `record`: the report, the log, the task file, the verdict cache.
//! - `submit` and `collect`: the provider's batch API (`--batch-api`,
//!   `--collect`): prepared reviews submitted as one batch, and finished
//!   through `run` once it has answered; `waiting`: what batch mode leaves
//!   to a batch; `shard`: `--shard K/N`.
//! - `batch`: many reviews at once; `net`: the secrets safety net at the
//!   stages' edges; `head`: the files at the head commit for citations;
//!   `recheck`: the checks alone at another commit (`speed fix run`).
//!
//! Nothing here prints: progress goes through `Events`, results come back
//! as `ledger::Report`s for `render`.

pub mod ask;
pub mod batch;
pub mod collect;
pub mod compose;
pub mod context;
pub mod decide;
pub mod dry;
pub mod facts;
pub mod head;
pub mod net;
pub mod plan;
pub mod prepare;
pub mod previous;
pub mod recheck;
pub mod record;
pub mod redact;
pub mod run;
pub mod shard;
pub mod sources;
pub mod submit;
pub mod waiting;

use std::path::PathBuf;

use crate::exit::Outcome;

pub use ask::{Models, Pacer};
pub use context::{Config, Context, GuardianConfig, Human, ProviderBatch, Target};
pub use plan::{Plan, Skipped};

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
    /// Another review of the same subject holds its lock (`holder` says
    /// which process, since when): this one waits for it to end.
    Queued {
        label: String,
        holder: String,
    },
    /// Something a person should know of one review at once (the report
    /// says it too): the missing product vision.
    Notice {
        label: String,
        text: String,
    },
    /// An answer contradicted itself: the model is asked once more.
    Reconciling {
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
    #[error(transparent)]
    Work(#[from] crate::work::Error),
    #[error(transparent)]
    Ledger(#[from] crate::ledger::Error),
    #[error(transparent)]
    Defects(#[from] crate::defects::Error),
    #[error("defect {name}: {source}")]
    Defect {
        name: String,
        #[source]
        source: crate::defects::Error,
    },
    #[error(transparent)]
    Prompt(#[from] crate::prompt::Error),
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
    #[error("cannot read criteria file {}: {source}", path.display())]
    CriteriaFile {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(transparent)]
    Fs(#[from] crate::fsx::Error),
}

impl Error {
    pub fn outcome(&self) -> Outcome {
        Outcome::Error
    }
}
