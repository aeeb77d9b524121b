//! The ledger of what was decided: review reports (each with a Markdown
//! summary beside it) and their log, a person's review of an approval, the
//! verdict cache per head commit, the nits of approvals, and a person's
//! overrides, all under `.speed/` and written through `fsx` (atomic,
//! confined, through the secrets safety net). Below both `review` (which
//! records here) and `hook` (which reads here whether a head is covered);
//! it decides nothing and calls no model.

pub mod batches;
pub mod human;
pub mod locks;
pub mod log;
pub mod nits;
pub mod overrides;
pub mod report;
pub mod reports;
pub mod summary;
pub mod verdicts;

use std::path::{Path, PathBuf};

pub use report::Report;

pub const REVIEWS_DIR: &str = ".speed/reviews";
pub const LOG_FILE: &str = ".speed/reviews/log.jsonl";
/// One lock file per task under review, and one for the nits file.
pub const LOCKS_DIR: &str = ".speed/reviews/locks";

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Git(#[from] crate::git::Error),
    #[error(transparent)]
    Tasks(#[from] crate::tasks::Error),
    #[error(transparent)]
    Work(#[from] crate::work::Error),
    #[error(transparent)]
    Fs(#[from] crate::fsx::Error),
    #[error("{path}: {message}")]
    Input { path: PathBuf, message: String },
    #[error("cannot write {path}: {source}")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "{subject} is being reviewed by another speed process ({holder}): nothing was changed; review it again once that review has ended"
    )]
    BeingReviewed { subject: String, holder: String },
    #[error("speed was interrupted before this review was recorded: nothing was changed")]
    Interrupted,
    /// A person's decision that cannot be taken as asked, and why.
    #[error("{0}")]
    Refused(String),
}

/// The folder every write of speed's is confined to.
pub fn area(root: &Path) -> PathBuf {
    root.join(".speed")
}

pub fn now_rfc3339() -> String {
    humantime::format_rfc3339_millis(std::time::SystemTime::now()).to_string()
}

fn relative(root: &Path, path: &Path) -> String {
    path.strip_prefix(root)
        .unwrap_or(path)
        .to_string_lossy()
        .into_owned()
}

/// Letters, digits and dashes only: safe in any file name.
fn slug(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}
