//! The repository as the configuration is located during a hook run: while
//! a merge into the main branch is being made, a working tree that the
//! incoming commits changed speed's configuration in is not main's.

use std::path::Path;

use crate::git::{MainBranch, Repository};
use crate::prompt::TEMPLATE_NAMES;

use super::{CONFIG_PATH, PROMPTS_DIR, Repo};

/// The repository as settings see it during a hook run. On the main branch
/// settings use the working tree's configuration (it is main's checkout),
/// but while a merge into it is being made, the working tree holds what the
/// incoming commits brought: when they change speed's configuration or a
/// prompt template, HEAD is not treated as the main branch, so the
/// configuration is read at main's commit and a branch cannot configure the
/// gate that judges it.
pub struct MergeView<'a> {
    repo: &'a Repository,
    head_branch: Option<String>,
}

impl<'a> MergeView<'a> {
    pub fn of(repo: &'a Repository) -> MergeView<'a> {
        // From a linked worktree the configuration's working copy is the
        // main worktree's, which this merge is not being made in.
        if repo.is_linked_worktree() {
            return MergeView {
                repo,
                head_branch: repo.state_branch(),
            };
        }
        let head_branch = repo.current_branch();
        let head = repo.head_commit();
        let mut incoming = repo.merge_heads().unwrap_or_default();
        incoming.extend(
            std::env::vars()
                .filter_map(|(key, _)| key.strip_prefix("GITHEAD_").map(str::to_string)),
        );
        let mut paths = vec![CONFIG_PATH.to_string()];
        paths.extend(TEMPLATE_NAMES.iter().map(|n| format!("{PROMPTS_DIR}/{n}")));
        let read = |commit: &str, path: &str| repo.read_file(commit, path).map_err(|_| ());
        let changes_config = head.as_deref().is_some_and(|head| {
            incoming.iter().any(|tip| {
                paths
                    .iter()
                    .any(|p| read(tip, p).is_err() || read(tip, p) != read(head, p))
            })
        });
        MergeView {
            repo,
            head_branch: if changes_config { None } else { head_branch },
        }
    }
}

impl Repo for MergeView<'_> {
    fn root(&self) -> &Path {
        self.repo.state_root()
    }
    fn head_branch(&self) -> Option<String> {
        self.head_branch.clone()
    }
    fn resolve_main(&self, explicit: Option<&str>) -> Result<MainBranch, crate::git::Error> {
        self.repo.resolve_main(explicit)
    }
    fn read_file(&self, commit: &str, path: &str) -> Result<Option<Vec<u8>>, crate::git::Error> {
        self.repo.read_file(commit, path)
    }
}
