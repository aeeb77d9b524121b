//! Which worktree holds speed's state. Coding agents work in linked
//! worktrees (`git worktree add`), one per task, and speed's state (task
//! files, reviews, the verdict cache, fixes, locks, the working copy of the
//! configuration) is the repository's, not a worktree's: from any worktree
//! it is the main worktree's `.speed/`, found through git's common
//! directory, so reviews, batch mode and the hooks see the same tasks and
//! verdicts everywhere. Read-only, like the rest of `git`.

use std::path::{Path, PathBuf};

use super::Repository;

/// The main worktree's root when `repo` is a linked worktree of a
/// repository that has one; None for the main worktree itself, and for the
/// worktrees of a bare repository (no worktree is the main one there, so
/// each keeps its own `.speed/`).
pub(super) fn main_worktree(repo: &git2::Repository) -> Option<PathBuf> {
    if !repo.is_worktree() {
        return None;
    }
    let common = git2::Repository::open(repo.commondir()).ok()?;
    if common.is_bare() {
        return None;
    }
    // git2 reports work dirs with a trailing slash; callers join paths onto it.
    Some(common.workdir()?.components().collect())
}

impl Repository {
    /// Where speed's state lives (the folder holding `.speed/`): the main
    /// worktree's root, from whichever worktree speed runs in.
    pub fn state_root(&self) -> &Path {
        self.main_worktree.as_deref().unwrap_or(&self.root)
    }

    /// Whether this is a linked worktree whose state is another worktree's.
    pub fn is_linked_worktree(&self) -> bool {
        self.main_worktree.is_some()
    }

    /// The branch the worktree holding speed's state has checked out (for
    /// the main worktree, `current_branch`).
    pub fn state_branch(&self) -> Option<String> {
        match &self.main_worktree {
            None => self.current_branch(),
            Some(root) => Repository::open(root).ok()?.current_branch(),
        }
    }
}
