//! The merge gate: git hooks that let a task's work into the main branch only
//! when an approval covers it.
//!
//! `install` writes the hook scripts into the folder git runs hooks from and
//! takes them out again; `owners` says which branch belongs to which task or
//! defect; `gate` decides whether what a merge or a push brings in is covered;
//! `run` is what a hook script calls: the user's own hook first, the bypass,
//! the incoming commits of a merge or a push. Nothing here prints (`app`
//! does) and nothing here calls a model.

pub mod gate;
pub mod install;
pub mod owners;
pub mod policy;
pub mod run;

pub use policy::{
    AllowOrBlock, DEFAULT_LOCAL_TIMEOUT_SECS, DEFAULT_REVIEW_TIMEOUT_SECS, DEFAULT_TIMEOUT_SECS,
    Policy,
};

use std::path::PathBuf;

/// The hooks speed installs, in the order it installs them. pre-commit
/// guards only a merge concluded by `git commit`, which git does not pass
/// through pre-merge-commit.
pub const HOOKS: [&str; 3] = ["pre-merge-commit", "pre-push", "pre-commit"];

/// A hook the gate is whole without: pre-push still catches a merge that
/// pre-commit would have caught. Many repositories already have their own
/// pre-commit hook (the pre-commit framework writes one), so a foreign one
/// there is left alone instead of refusing the whole install.
pub fn optional(name: &str) -> bool {
    name == "pre-commit"
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
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "{} is not speed's hook: move it away, or run `speed hook install --force` to keep it as {} (speed then runs it first)",
        path.display(), local.display()
    )]
    Foreign { path: PathBuf, local: PathBuf },
    #[error(
        "{} is not speed's hook and {} is taken too: merge them into one by hand, then run `speed hook install --force`",
        path.display(), local.display()
    )]
    LocalTaken { path: PathBuf, local: PathBuf },
    #[error("unknown hook {name:?}: speed runs pre-merge-commit, pre-commit and pre-push")]
    UnknownHook { name: String },
    #[error("{hook}: {message}")]
    Input { hook: String, message: String },
}
