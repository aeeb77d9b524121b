//! Whether a branch's work is already on another branch (the main branch):
//! the facts git can tell, each bounded so a long history cannot stall a
//! review or a hook. `work::standing` decides from them what a task's state
//! is; nothing here knows tasks.
//!
//! - a merge commit in the target's history that brought a head in;
//! - the target's content: the newest commit of its first-parent history
//!   whose tree holds every file a branch changes as the branch has it
//!   (what a squash or a rebase merge leaves, where no commit of the
//!   branch is in the target's history).

use std::path::PathBuf;

use super::{Error, Repository};

/// Where a branch's content was found in the target's history.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Landed {
    /// The newest commit of the target's first-parent history holding the
    /// branch's content.
    pub commit: String,
    /// How many files the branch changes (all of them hold its content).
    pub files: usize,
}

/// One change of a branch: a path and what the branch leaves there (a blob
/// id and its mode; None for a path it deletes).
struct Change {
    path: PathBuf,
    leaves: Option<(git2::Oid, i32)>,
}

impl Repository {
    /// The merge commit of `target`'s history that brought `head` in (`head`
    /// is one of its parents other than the first); None when `head` is not
    /// in `target`'s history, came in another way (a fast-forward), or more
    /// than `limit` commits lie between them.
    pub fn merge_of(
        &self,
        head: &str,
        target: &str,
        limit: usize,
    ) -> Result<Option<String>, Error> {
        let head_id = self.commit(head)?.id().to_string();
        if !self.is_ancestor(&head_id, target)? {
            return Ok(None);
        }
        let commits = match self.commits_between(
            &[target.to_string()],
            std::slice::from_ref(&head_id),
            limit,
        ) {
            Ok(commits) => commits,
            Err(Error::TooManyCommits { .. }) => return Ok(None),
            Err(err) => return Err(err),
        };
        Ok(commits
            .into_iter()
            .find(|c| c.parents.iter().skip(1).any(|p| *p == head_id))
            .map(|c| c.id))
    }

    /// The newest commit of `target`'s first-parent history (at most `limit`
    /// commits back, and no further back than where `base` joins it) whose
    /// tree holds every change of `base..head` as `head` has it: each added
    /// or modified file with the same content and mode, each deleted one
    /// absent. None when none does, or when `base..head` changes nothing (a
    /// branch without work has not landed anywhere).
    pub fn content_landed(
        &self,
        base: &str,
        head: &str,
        target: &str,
        limit: usize,
    ) -> Result<Option<Landed>, Error> {
        let changes = self.changes(base, head)?;
        if changes.is_empty() {
            return Ok(None);
        }
        let stop = self.merge_base(base, target).ok();
        let mut commit = self.commit(target)?;
        for _ in 0..limit {
            let id = commit.id().to_string();
            if stop.as_deref() == Some(id.as_str()) {
                break;
            }
            if self.holds(&commit, &changes)? {
                return Ok(Some(Landed {
                    commit: id,
                    files: changes.len(),
                }));
            }
            match commit.parent(0) {
                Ok(parent) => commit = parent,
                Err(_) => break,
            }
        }
        Ok(None)
    }

    /// What `base..head` changes, by path (no rename detection: a rename
    /// is its old path deleted and its new one added).
    fn changes(&self, base: &str, head: &str) -> Result<Vec<Change>, Error> {
        let wrap = |source: git2::Error| Error::Diff {
            base: base.to_string(),
            head: head.to_string(),
            source,
        };
        let base_tree = self.commit(base)?.tree().map_err(wrap)?;
        let head_tree = self.commit(head)?.tree().map_err(wrap)?;
        let raw = self
            .repo
            .diff_tree_to_tree(Some(&base_tree), Some(&head_tree), None)
            .map_err(wrap)?;
        let mut changes = Vec::new();
        for delta in raw.deltas() {
            let new = delta.new_file();
            let old = delta.old_file();
            let (file, leaves) = if delta.status() == git2::Delta::Deleted {
                (old, None)
            } else {
                let leaves = Some((new.id(), i32::from(new.mode())));
                (new, leaves)
            };
            // git2 gives every path it diffed; one it could not is not
            // known to have landed anywhere.
            let Some(path) = file.path() else {
                return Ok(Vec::new());
            };
            changes.push(Change {
                path: path.to_path_buf(),
                leaves,
            });
        }
        Ok(changes)
    }

    /// Whether `commit`'s tree holds every change as the branch left it.
    fn holds(&self, commit: &git2::Commit<'_>, changes: &[Change]) -> Result<bool, Error> {
        let tree = commit.tree().map_err(|source| Error::Read {
            commit: commit.id().to_string(),
            path: String::new(),
            source,
        })?;
        for change in changes {
            let found = match tree.get_path(&change.path) {
                Ok(entry) => Some((entry.id(), entry.filemode())),
                Err(e) if e.code() == git2::ErrorCode::NotFound => None,
                Err(source) => {
                    return Err(Error::Read {
                        commit: commit.id().to_string(),
                        path: change.path.to_string_lossy().into_owned(),
                        source,
                    });
                }
            };
            if found != change.leaves {
                return Ok(false);
            }
        }
        Ok(true)
    }
}
