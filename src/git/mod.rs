//! Git access: a small wrapper around git2 that reads everything from git
//! objects at the commits under review, never from the checkout.

pub mod diff;

pub use diff::{Diff, FileDiff, FileStatus, Hunk, Line, LineKind};
