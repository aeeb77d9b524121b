//! Onboarding: from a repository to a first review. `init` writes what a
//! first review needs (never replacing a file), `doctor` says whether a
//! review would work here and what to do where it would not, both from
//! what `detect` finds on this machine and in the repository. Above
//! `settings` (doctor judges what settings resolved, including why they
//! did not); plain data out: `app` prints.

pub mod detect;
pub mod doctor;
pub mod init;
pub mod python;
pub mod templates;

use std::path::PathBuf;

/// Why init or doctor could not run at all (everything else is a finding
/// of their report).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{} is not in a git repository ({reason}): run `git init` first, or -C DIR", path.display())]
    NotARepository { path: PathBuf, reason: String },
    #[error("{} is a bare repository: speed init writes into a working tree", path.display())]
    Bare { path: PathBuf },
    #[error("cannot read {path}: {source}")]
    Read {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot write {path}: {source}")]
    Write {
        path: String,
        #[source]
        source: crate::fsx::Error,
    },
}
