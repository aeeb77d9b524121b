//! The ledger of what was decided: review reports (each with a Markdown
//! summary beside it) and their log, a person's review of an approval, the
//! verdict cache per head commit, the nits of approvals, and a person's
//! overrides, all under `.speed/` and written through `fsx` (atomic,
//! confined, through the secrets safety net). Below both `review` (which
//! records here) and `hook` (which reads here whether a head is covered);
//! it decides nothing and calls no model. Reading it back is here too: the
//! log's lines as typed entries (`history`), a subject's report files
//! (`saved`).

pub mod batches;
pub mod blocking;
pub mod covers;
pub mod document;
pub mod history;
pub mod human;
pub mod locks;
pub mod log;
pub mod nits;
pub mod notes;
pub mod overrides;
pub mod report;
pub mod reports;
pub mod saved;
pub mod summary;
pub mod verdicts;

use std::path::{Path, PathBuf};

use crate::fsx;

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
    /// No report of a subject (or not as many as asked for).
    #[error("{0}")]
    NotReviewed(String),
}

/// Opens one of speed's own files under `.speed/` for reading; None when
/// it does not exist. A path that leads out of `.speed/` through a link,
/// or anything there but a regular file (a pipe would block the read for
/// ever), is an error naming it.
pub fn open_own(root: &Path, path: &Path) -> Result<Option<std::fs::File>, Error> {
    let refused = |message: &str| Error::Input {
        path: path.to_path_buf(),
        message: message.to_string(),
    };
    let real = fsx::confine(&area(root), path)
        .map_err(|_| refused("it leads out of .speed/ through a symbolic link: not read"))?;
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    // Opening a pipe for reading waits for a writer; without blocking it
    // opens at once, and is refused below.
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(&mut options, libc::O_NONBLOCK);
    let file = match options.open(&real) {
        Ok(file) => file,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(err) => return Err(refused(&format!("cannot read it: {err}"))),
    };
    match file.metadata() {
        Ok(meta) if meta.is_file() => Ok(Some(file)),
        Ok(_) => Err(refused("not a regular file: not read")),
        Err(err) => Err(refused(&format!("cannot read it: {err}"))),
    }
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
