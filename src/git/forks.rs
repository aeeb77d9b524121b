//! Where a branch's own work starts when it was built on another branch
//! that has moved since, found as git would find it: the heads the other
//! branch is known to have had (its reflog, its remote-tracking branch's,
//! and HEAD's while it was checked out), the commits of this branch that
//! are copies of the other's (a rebase gives them new ids, not new patch
//! ids), and the first commits of this branch whose content the main
//! branch already holds (a squash merge). Read-only, like the rest of
//! `git`.

use std::collections::HashSet;

use super::{CommitInfo, Error, Repository};

/// At most this many commits of a branch are compared, one by one, with
/// another's or with the main branch's: a stacked branch is a few dozen.
const MAX_OWN: usize = 200;
/// At most this many commits of the main branch since the fork are looked
/// at for a squash merge of a prefix.
const MAX_MAIN: usize = 400;

/// The first commits of a branch whose content a commit of the main branch
/// holds: merged there (squashed, or rebased) under other ids.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LandedPrefix {
    /// The last commit of the prefix (hex).
    pub through: String,
    /// How many commits of the branch the prefix holds.
    pub commits: usize,
    /// The main branch's commit that holds their content.
    pub on_main: String,
    /// Its message's first line.
    pub on_main_summary: String,
}

impl Repository {
    /// The commits `branch` is known to have pointed at, newest first, at
    /// most `limit`: from its reflog, its `origin/` reflog, and HEAD's
    /// reflog while it was checked out (which outlives a deleted branch).
    /// Commits this repository no longer has are left out.
    pub fn known_heads(&self, branch: &str, limit: usize) -> Vec<String> {
        let mut seen = HashSet::new();
        let mut heads = Vec::new();
        let mut keep = |id: git2::Oid| {
            if !id.is_zero() && seen.insert(id) && self.repo.find_commit(id).is_ok() {
                heads.push(id.to_string());
            }
        };
        for name in [
            format!("refs/heads/{branch}"),
            format!("refs/remotes/origin/{branch}"),
        ] {
            if let Ok(log) = self.repo.reflog(&name) {
                for entry in log.iter() {
                    keep(entry.id_new());
                }
            }
        }
        if let Ok(log) = self.repo.reflog("HEAD") {
            let entries: Vec<git2::ReflogEntry<'_>> = log.iter().collect();
            let mut on: Option<String> = None;
            let mut found = Vec::new();
            // Oldest first, following which branch HEAD is on.
            for entry in entries.iter().rev() {
                let message = entry.message().ok().flatten().unwrap_or_default();
                if let Some(rest) = message.strip_prefix("checkout: moving from ") {
                    if let Some((from, to)) = rest.rsplit_once(" to ") {
                        if from == branch {
                            found.push(entry.id_old());
                        }
                        on = Some(to.to_string());
                    }
                } else if let Some(rest) = message.strip_prefix("rebase (finish): returning to ") {
                    on = rest.strip_prefix("refs/heads/").map(str::to_string);
                }
                if on.as_deref() == Some(branch) {
                    found.push(entry.id_new());
                }
            }
            for id in found.into_iter().rev() {
                keep(id);
            }
        }
        heads.truncate(limit);
        heads
    }

    /// What a rebase keeps of a commit: its author, the time it was
    /// authored, and its message.
    fn authorship(&self, commit: &str) -> Option<(Vec<u8>, i64, Vec<u8>)> {
        let commit = self.commit(commit).ok()?;
        let author = commit.author();
        Some((
            author.email_bytes().to_vec(),
            author.when().seconds(),
            commit.message_bytes().to_vec(),
        ))
    }

    /// The commit's patch id (git's `patch-id`: the change, whatever its
    /// parent and message); None for a merge or a root commit.
    fn patch_id(&self, commit: &str) -> Option<git2::Oid> {
        let commit = self.commit(commit).ok()?;
        if commit.parent_count() != 1 {
            return None;
        }
        let parent = commit.parent(0).ok()?.tree().ok()?;
        let tree = commit.tree().ok()?;
        let diff = self
            .repo
            .diff_tree_to_tree(Some(&parent), Some(&tree), None)
            .ok()?;
        diff.patchid(None).ok()
    }

    /// How many of `own` (a branch's commits, oldest first) are, from the
    /// first on, copies of commits of the other branch between
    /// `theirs_base` and `theirs_head`: the same patch (git's patch id), or
    /// the same author, authoring time and message (what a rebase keeps
    /// when it had to change the patch). That is the part of the branch a
    /// rebase of the other one left behind. Zero when the first commit is
    /// already the branch's own.
    pub fn copied_prefix(
        &self,
        own: &[CommitInfo],
        theirs_base: &str,
        theirs_head: &str,
    ) -> Result<usize, Error> {
        let theirs = self.branch_history(theirs_base, theirs_head, MAX_OWN)?;
        let ids: HashSet<git2::Oid> = theirs
            .commits
            .iter()
            .filter_map(|c| self.patch_id(&c.id))
            .collect();
        let authored: HashSet<(Vec<u8>, i64, Vec<u8>)> = theirs
            .commits
            .iter()
            .filter_map(|c| self.authorship(&c.id))
            .collect();
        if theirs.commits.is_empty() {
            return Ok(0);
        }
        let copy = |c: &CommitInfo| {
            self.patch_id(&c.id).is_some_and(|id| ids.contains(&id))
                || self
                    .authorship(&c.id)
                    .is_some_and(|a| authored.contains(&a))
        };
        Ok(own.iter().take(MAX_OWN).take_while(|c| copy(c)).count())
    }

    /// The longest prefix of `own` (the commits of a branch since `fork`,
    /// oldest first; never all of them) whose content one commit of the main
    /// branch since `fork` holds: every path the prefix changed reads there
    /// as it does at the prefix's last commit. That is what a squash merge
    /// of the branch the prefix came from leaves.
    pub fn landed_prefix(
        &self,
        fork: &str,
        own: &[CommitInfo],
        main: &str,
    ) -> Result<Option<LandedPrefix>, Error> {
        if own.len() < 2 || own.len() > MAX_OWN {
            return Ok(None);
        }
        let mains = self.branch_history(fork, main, MAX_MAIN)?;
        if mains.commits.is_empty() {
            return Ok(None);
        }
        let fork_tree = self.tree_of(fork)?;
        let main_trees: Vec<(&CommitInfo, git2::Tree<'_>)> = mains
            .commits
            .iter()
            .rev()
            .filter_map(|c| Some((c, self.tree_of(&c.id).ok()?)))
            .collect();
        for k in (0..own.len() - 1).rev() {
            let through = &own[k];
            let tree = self.tree_of(&through.id)?;
            let paths =
                changed_paths(&self.repo, &fork_tree, &tree).map_err(|source| Error::Diff {
                    base: fork.to_string(),
                    head: through.id.clone(),
                    source,
                })?;
            if paths.is_empty() {
                continue;
            }
            let wanted: Vec<Option<git2::Oid>> = paths.iter().map(|p| entry_id(&tree, p)).collect();
            let holds = |main_tree: &git2::Tree<'_>| {
                paths
                    .iter()
                    .zip(&wanted)
                    .all(|(p, want)| entry_id(main_tree, p) == *want)
            };
            if let Some((commit, _)) = main_trees.iter().find(|(_, t)| holds(t)) {
                return Ok(Some(LandedPrefix {
                    through: through.id.clone(),
                    commits: k + 1,
                    on_main: commit.id.clone(),
                    on_main_summary: commit.summary.clone(),
                }));
            }
        }
        Ok(None)
    }

    fn tree_of(&self, rev: &str) -> Result<git2::Tree<'_>, Error> {
        self.commit(rev)?.tree().map_err(|source| Error::Read {
            commit: rev.to_string(),
            path: String::new(),
            source,
        })
    }
}

/// Every path that differs between two trees (both sides of a rename).
fn changed_paths(
    repo: &git2::Repository,
    old: &git2::Tree<'_>,
    new: &git2::Tree<'_>,
) -> Result<Vec<std::path::PathBuf>, git2::Error> {
    let diff = repo.diff_tree_to_tree(Some(old), Some(new), None)?;
    let mut paths = Vec::new();
    for delta in diff.deltas() {
        for file in [delta.old_file(), delta.new_file()] {
            if let Some(path) = file.path() {
                if !paths.iter().any(|p: &std::path::PathBuf| p == path) {
                    paths.push(path.to_path_buf());
                }
            }
        }
    }
    Ok(paths)
}

/// The object at `path` in `tree`; None when there is none.
fn entry_id(tree: &git2::Tree<'_>, path: &std::path::Path) -> Option<git2::Oid> {
    tree.get_path(path).ok().map(|e| e.id())
}
