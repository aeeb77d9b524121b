//! The commit graph as the merge gate sees it: the commits a merge or a push
//! brings in (reachable from the incoming tips and from nothing the target
//! already has), the heads of a merge in progress, and what a remote was last
//! seen to have. Read-only, like the rest of `git`.

use super::{Error, Repository};

/// One commit and its parents (hex ids).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommitNode {
    pub id: String,
    pub parents: Vec<String>,
}

impl Repository {
    /// HEAD's commit (hex); None on an unborn branch.
    pub fn head_commit(&self) -> Option<String> {
        let commit = self.repo.head().ok()?.peel_to_commit().ok()?;
        Some(commit.id().to_string())
    }

    /// The commits a merge in progress brings in, in `MERGE_HEAD` order
    /// (several for an octopus merge); empty when no merge is in progress.
    pub fn merge_heads(&self) -> Result<Vec<String>, Error> {
        let path = self.repo.path().join("MERGE_HEAD");
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => {
                return Err(Error::State {
                    what: "MERGE_HEAD".to_string(),
                    source: git2::Error::from_str(&e.to_string()),
                    path,
                });
            }
        };
        text.lines()
            .map(str::trim)
            .filter(|line| !line.is_empty())
            .map(|line| match git2::Oid::from_str(line) {
                Ok(oid) => Ok(oid.to_string()),
                Err(source) => Err(Error::State {
                    what: format!("MERGE_HEAD line {line:?}"),
                    path: path.clone(),
                    source,
                }),
            })
            .collect()
    }

    /// The commit a branch points at: the local branch, else `origin/<name>`;
    /// None when neither exists. Unlike `resolve_branch` it reads no object
    /// (the merge gate asks this of every task's branch) and never takes the
    /// name as any other revision.
    pub fn branch_tip(&self, name: &str) -> Option<String> {
        [
            format!("refs/heads/{name}"),
            format!("refs/remotes/origin/{name}"),
        ]
        .iter()
        .find_map(|full| {
            let reference = self.repo.find_reference(full).ok()?.resolve().ok()?;
            reference.target().map(|oid| oid.to_string())
        })
    }

    /// Whether `id` (hex) names a commit this repository has.
    pub fn has_commit(&self, id: &str) -> bool {
        git2::Oid::from_str(id).is_ok_and(|oid| self.repo.find_commit(oid).is_ok())
    }

    /// The commits reachable from `tips` and from none of `hide`, each with
    /// its parents, newest first. More than `limit` is an error rather than a
    /// walk that never ends.
    pub fn commits_between(
        &self,
        tips: &[String],
        hide: &[String],
        limit: usize,
    ) -> Result<Vec<CommitNode>, Error> {
        let named = tips.join(", ");
        let wrap = |source: git2::Error| Error::Walk {
            tips: named.clone(),
            source,
        };
        let mut walk = self.repo.revwalk().map_err(wrap)?;
        for tip in tips {
            walk.push(self.commit(tip)?.id()).map_err(wrap)?;
        }
        for id in hide {
            walk.hide(self.commit(id)?.id()).map_err(wrap)?;
        }
        let mut out = Vec::new();
        for oid in walk {
            let oid = oid.map_err(wrap)?;
            if out.len() == limit {
                return Err(Error::TooManyCommits {
                    tips: named.clone(),
                    limit,
                });
            }
            let commit = self.repo.find_commit(oid).map_err(wrap)?;
            out.push(CommitNode {
                id: oid.to_string(),
                parents: commit.parent_ids().map(|p| p.to_string()).collect(),
            });
        }
        Ok(out)
    }

    /// Whether `commit`'s tree holds anything at `path`, or something other
    /// than a folder at one of its parent folders (a link or a file there
    /// would redirect a read of `path` in a checkout of that commit).
    pub fn tracks(&self, commit: &str, path: &str) -> Result<bool, Error> {
        let wrap = |source: git2::Error| Error::Read {
            commit: commit.to_string(),
            path: path.to_string(),
            source,
        };
        let tree = self.commit(commit)?.tree().map_err(wrap)?;
        let mut prefix = std::path::PathBuf::new();
        let parts: Vec<&str> = path.split('/').filter(|p| !p.is_empty()).collect();
        for (i, part) in parts.iter().enumerate() {
            prefix.push(part);
            match tree.get_path(&prefix) {
                Ok(entry) if i + 1 == parts.len() => return Ok(entry.kind().is_some()),
                Ok(entry) if entry.kind() != Some(git2::ObjectType::Tree) => return Ok(true),
                Ok(_) => {}
                Err(e) if e.code() == git2::ErrorCode::NotFound => return Ok(false),
                Err(source) => return Err(wrap(source)),
            }
        }
        Ok(false)
    }

    /// The commits the remote-tracking branches of `remote` point at
    /// (`refs/remotes/<remote>/*`): what that remote was last seen to have.
    pub fn remote_tips(&self, remote: &str) -> Result<Vec<String>, Error> {
        let pattern = format!("refs/remotes/{remote}/*");
        let wrap = |source: git2::Error| Error::State {
            what: pattern.clone(),
            path: self.repo.path().to_path_buf(),
            source,
        };
        let mut tips = Vec::new();
        for reference in self.repo.references_glob(&pattern).map_err(wrap)? {
            // `origin/HEAD` and a ref to a tag or a tree name no commit of
            // their own worth hiding; the branches they point at are listed.
            if let Ok(commit) = reference.map_err(wrap)?.peel_to_commit() {
                tips.push(commit.id().to_string());
            }
        }
        tips.sort();
        tips.dedup();
        Ok(tips)
    }
}
