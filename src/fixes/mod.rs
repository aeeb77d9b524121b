//! The fix queue: every review that requests changes turns its blocking
//! findings (speed's checks, the command checks, the model's critical and
//! major issues, unmet criteria, unsatisfied or missing spec requirements)
//! into fixes, and an approval its nits into low-priority ones; the same
//! finding in a later review is the same fix, and a fix a later review no
//! longer finds is resolved (`queue`). Fixes are kept per task in
//! `.speed/fixes/` (`store`), ordered by seed 002's priorities (`model`,
//! `found`), handed to a coding agent as a prompt (`prompt`) and, on
//! request, run by one in a temporary worktree and checked again
//! (`run`, `worktree`).
//!
//! Above `ledger` (it reads reports) and below `review`, whose record stage
//! calls `record` once per decided review. Nothing here prints.

pub mod found;
pub mod model;
pub mod prompt;
pub mod queue;
pub mod run;
pub mod store;
pub mod worktree;

use std::path::{Path, PathBuf};

use crate::checks;
use crate::ledger::Report;

pub use model::{Fix, Found, Source, Status};
pub use queue::{Absorbed, Change};
pub use store::{Owner, Store};

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Fs(#[from] crate::fsx::Error),
    #[error("cannot read {}: {source}", path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{}: {message}", path.display())]
    Input { path: PathBuf, message: String },
    #[error("no fix {id} in .speed/fixes/ (`speed fix list --all` lists them)")]
    NoSuchFix { id: String },
    #[error("{id} names several fixes ({}); give more of the id", ids.join(", "))]
    Ambiguous { id: String, ids: Vec<String> },
    #[error("fix {id} is {status}: nothing to {what}")]
    State {
        id: String,
        status: &'static str,
        what: String,
    },
    #[error("the branch {branch} does not exist")]
    NoBranch { branch: String },
    #[error("{what}: {message}")]
    Git { what: String, message: String },
    #[error("cannot make {what}: {source}")]
    Io {
        what: String,
        source: std::io::Error,
    },
    #[error("{0}")]
    Agent(String),
    #[error("speed was interrupted: the fix run was stopped and its worktree removed")]
    Interrupted,
}

/// A decided review into its task's fixes: the one call the review's
/// record stage makes. The review stands whatever happens here; a queue
/// that could not be updated is said in the report's notices.
pub fn record(root: &Path, config: &checks::Config, by: &str, report: &mut Report) {
    if let Err(e) = queue::absorb(&Store::open(root), report, config, by) {
        report
            .notices
            .push(format!("The fix queue could not be updated: {e}"));
    }
}
