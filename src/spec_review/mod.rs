//! The spec review loop, `speed spec review`: a draft spec is checked by
//! speed (its PRD's requirements traced to its sections, empty sections,
//! duplicated headings, unfinished markers, untestable requirement lists,
//! credentials), then reviewed by a model that scores it on configurable
//! criteria; speed applies the minimums. A `needs_revision` can be handed
//! to a reviser command whose revised spec replaces the draft in the
//! working tree (never committed) and is reviewed again, up to a limit,
//! after which the session is blocked until a person acts (`--resume`).
//! Each session is kept in `.speed/spec-reviews/<feature>.json` and every
//! step is an event.
//!
//! Parts: `config` (`[spec_review]`), `source` (which spec and PRD, read
//! and redacted), `requirements` (a PRD's requirements), `checks` (speed's
//! findings), `answer` (the model's answer: schema, validation, speed's
//! decision), `ask` (one exchange and a corrective retry), `revise` (the
//! reviser and what it may return), `session` (the session file, its lock,
//! the texts a revision replaced), `events`, `run` (one command: offline,
//! dry run, or the session) and `step` (the loop's steps). This
//! part never prints and never exits: `app` does.

mod answer;
mod ask;
mod checks;
mod config;
mod events;
mod requirements;
mod revise;
mod run;
mod session;
mod source;
mod step;

pub use answer::{Feedback, Overrule, Verdict, document as answer_document, json_schema};
pub use checks::{Facts, Finding, Trace};
pub use config::{
    Config, Criterion, DEFAULT_MAX_ITERATIONS, DEFAULT_MIN_SCORE, DEFAULT_REVISER_TIMEOUT_SECS,
    default_criteria, valid_criterion_name,
};
pub use run::{Dry, Summary, run};
pub use session::{DIR as SESSIONS_DIR, Session};
pub use source::valid_feature;

/// What to review: the feature, the spec and the PRD as given (paths
/// relative to the repository root), and a commit to read them at.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Target {
    pub feature: Option<String>,
    pub spec: Option<String>,
    pub prd: Option<String>,
    /// `--rev REF`: read the spec and the PRD at this commit; nothing is
    /// revised then.
    pub rev: Option<String>,
}

/// One `speed spec review`, resolved by `settings`.
#[derive(Debug, Clone)]
pub struct Job {
    pub config: Config,
    pub llm: crate::llm::Config,
    pub target: Target,
    /// `--resume`: continue a blocked session with a fresh budget.
    pub resume: bool,
    /// `--dry-run`: everything up to the model call; nothing written.
    pub dry_run: bool,
    /// The prompt's token budget (`review.token_budget`) and tokenizer.
    pub budget: usize,
    pub tokenizer: String,
    /// `review.actor`, the events' author when set.
    pub actor: Option<String>,
    /// Prompt template overrides, read at the main branch's commit.
    pub prompts: Vec<crate::prompt::Override>,
}

impl Job {
    /// Only speed's own checks: `--offline`, or no model configured.
    pub fn offline(&self) -> bool {
        self.llm.offline()
    }
}

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Bad input: the message names what and where.
    #[error("{0}")]
    Input(String),
    #[error(transparent)]
    Git(#[from] crate::git::Error),
    #[error(transparent)]
    Write(#[from] crate::fsx::Error),
    #[error(transparent)]
    Prompt(#[from] crate::prompt::Error),
    #[error(transparent)]
    Model(#[from] crate::llm::Error),
}
