//! Which commit a task's branch means when the repository holds it twice
//! (the local branch and `origin/<name>` after a fetch), and what to say
//! when it holds it nowhere: fetched into `FETCH_HEAD` only, or missing
//! from a shallow clone. Read-only, like the rest of `git`.

use super::{Error, Repository, short};

/// The head of a branch as a review takes it, and why, when there was a
/// choice to make.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BranchHead {
    pub commit: String,
    /// Both the local branch and `origin/<name>` exist and differ: which
    /// one is reviewed and why.
    pub note: Option<String>,
}

impl Repository {
    /// The head of a task's branch: the local branch or `origin/<name>`,
    /// whichever is newer when one contains the other (and a note says
    /// which); both differing with neither containing the other is an
    /// error naming both. A name that is neither is taken as any revision
    /// git understands; nothing at all is an error that says what to fetch.
    pub fn branch_head(&self, name: &str) -> Result<BranchHead, Error> {
        let peeled = |full: String| {
            self.repo
                .find_reference(&full)
                .and_then(|r| r.peel_to_commit())
                .ok()
                .map(|c| c.id().to_string())
        };
        let local = peeled(format!("refs/heads/{name}"));
        let remote = peeled(format!("refs/remotes/origin/{name}"));
        let head = |commit: String, note: Option<String>| Ok(BranchHead { commit, note });
        match (local, remote) {
            (Some(local), Some(remote)) if local == remote => head(local, None),
            (Some(local), Some(remote)) => {
                if self.is_ancestor(&local, &remote)? {
                    head(
                        remote.clone(),
                        Some(format!(
                            "origin/{name} ({}) is newer than the local {name} ({}), which it contains: origin's head is reviewed (git pull brings the local branch up to date)",
                            short(&remote),
                            short(&local)
                        )),
                    )
                } else if self.is_ancestor(&remote, &local)? {
                    head(
                        local.clone(),
                        Some(format!(
                            "the local {name} ({}) is ahead of origin/{name} ({}): the local head is reviewed (push it, so that others review the same)",
                            short(&local),
                            short(&remote)
                        )),
                    )
                } else {
                    Err(Error::BranchDiverged {
                        branch: name.to_string(),
                        local,
                        remote,
                    })
                }
            }
            (Some(local), None) => head(local, None),
            (None, Some(remote)) => head(remote, None),
            (None, None) => match self.resolve_commit(name) {
                Ok(commit) => head(commit, None),
                Err(_) => Err(self.branch_not_found(name)),
            },
        }
    }

    /// The commit a branch points at, for the merge gate: as `branch_head`
    /// takes it (the newer of the local branch and `origin/<name>`), the
    /// local one when they have diverged, None when neither exists. Never
    /// takes the name as any other revision.
    pub fn newest_tip(&self, name: &str) -> Option<String> {
        let local = self.branch_tip_of(&format!("refs/heads/{name}"));
        let remote = self.branch_tip_of(&format!("refs/remotes/origin/{name}"));
        match (local, remote) {
            (Some(local), Some(remote))
                if local != remote && self.is_ancestor(&local, &remote).unwrap_or(false) =>
            {
                Some(remote)
            }
            (Some(local), _) => Some(local),
            (None, remote) => remote,
        }
    }

    fn branch_tip_of(&self, full: &str) -> Option<String> {
        let reference = self.repo.find_reference(full).ok()?.resolve().ok()?;
        reference.target().map(|oid| oid.to_string())
    }

    /// `BranchNotFound` for `name`, saying what to fetch when the
    /// repository shows why it is missing.
    pub(super) fn branch_not_found(&self, name: &str) -> Error {
        let mut hint = String::new();
        if self.in_fetch_head(name) {
            hint.push_str(&format!(
                "; it was fetched into FETCH_HEAD only, which keeps no branch: fetch it as one with `git fetch origin {name}:{name}`"
            ));
        }
        if self.repo.is_shallow() {
            hint.push_str(&format!(
                "; this clone is shallow (a CI checkout fetches one commit unless told otherwise): fetch the branches with their history, `fetch-depth: 0` in actions/checkout, or `git fetch --unshallow origin` then `git fetch origin {name}:{name}`"
            ));
        }
        Error::BranchNotFound {
            branch: name.to_string(),
            hint,
        }
    }

    /// Whether `.git/FETCH_HEAD` holds `name` (`… branch 'name' of URL`).
    fn in_fetch_head(&self, name: &str) -> bool {
        let Ok(text) = std::fs::read_to_string(self.repo.path().join("FETCH_HEAD")) else {
            return false;
        };
        let wanted = format!("branch '{name}' of ");
        text.lines().any(|line| line.contains(&wanted))
    }
}
