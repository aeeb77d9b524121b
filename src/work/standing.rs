//! Where a subject's work stands against the main branch, the one answer
//! batch mode, `--task-id`, `--defect` and the merge gate share:
//!
//! - merged: its head is in the main branch's history (a merge commit or a
//!   fast-forward), or every file the branch changes already holds on main
//!   the content it has on the branch (a squash or a rebase merge); with
//!   its branch deleted, the same of the last head a review saw;
//! - gone: its branch is deleted and nothing says its work reached main;
//! - open: anything else, to be reviewed (an empty diff there is a branch
//!   that never had work, which the empty-diff rule answers).
//!
//! A head in main's history is also where a branch that never had work
//! starts, so it counts as merged only with a sign that the branch had work
//! of its own: a declared base before it, a review of its work (not of an
//! empty diff) at it or before it, or a merge commit on main that brought
//! it in.

use crate::git::{self, MainBranch, Repository, short};
use crate::tasks::Task;

use super::{Error, Subject};

/// The feedback of a review that found no change: its history entry is no
/// sign of work on the branch.
pub const NOTHING_IMPLEMENTED: &str = "Nothing was implemented";

/// How far back main's history is searched for the merge commit of a head
/// or for the branch's content: a merge older than this is not recognised
/// (the task is then reviewed, or, content aside, found empty).
const MERGE_WALK: usize = 10_000;
const CONTENT_WALK: usize = 2_000;

/// Where the work stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Standing {
    /// The branch holds work main does not have (or none at all): review it.
    Open,
    Merged(Merged),
    /// The branch is gone and nothing says its work reached main.
    Gone {
        branch: String,
        /// What was looked at, for people.
        why: String,
    },
}

/// A subject whose work is on the main branch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Merged {
    /// The head whose work is on main: the branch's, or (its branch
    /// deleted) the last one a review saw.
    pub head: String,
    pub branch_deleted: bool,
    /// How it is known, for people: "its head 1a2b3c4d5e is in main's
    /// history (merge commit 9f8e7d6c5b)".
    pub how: String,
}

/// Where `subject`'s work stands against `main`. `reviewed` is the head of
/// its last review that saw work (for a task, `reviewed_head` of its file).
pub fn standing(
    repo: &Repository,
    main: &MainBranch,
    subject: &Subject,
    reviewed: Option<&str>,
) -> Result<Standing, Error> {
    let branch = subject.branch();
    let task = subject.task();
    // The head a review takes (the newer of the local branch and origin's);
    // diverged ones are the user's to settle, not a branch gone.
    let head = match repo.branch_head(branch) {
        Ok(found) => Ok(found.commit),
        Err(err @ crate::git::Error::BranchDiverged { .. }) => return Err(err.into()),
        Err(_) => Err(()),
    };
    let Ok(head) = head else {
        return match reviewed {
            Some(given) => match repo.resolve_commit(given) {
                Ok(head) => gone(repo, main, branch, task, &head),
                Err(_) => Ok(Standing::Gone {
                    branch: branch.to_string(),
                    why: format!(
                        "the last head reviewed, {}, is not in this repository",
                        short(given)
                    ),
                }),
            },
            None => Ok(Standing::Gone {
                branch: branch.to_string(),
                why: "no review saw its work".to_string(),
            }),
        };
    };
    let reviewed = reviewed.and_then(|r| repo.resolve_commit(r).ok());
    if repo.is_ancestor(&head, &main.commit)? {
        return Ok(
            match worked(repo, main, task, &head, reviewed.as_deref())? {
                Some(sign) => Standing::Merged(Merged {
                    how: format!(
                        "its head {} is in {}'s history ({sign})",
                        short(&head),
                        main.name
                    ),
                    head,
                    branch_deleted: false,
                }),
                None => Standing::Open,
            },
        );
    }
    let base = base_of(repo, main, task, &head)?;
    Ok(
        match repo.content_landed(&base, &head, &main.commit, CONTENT_WALK)? {
            Some(landed) => Standing::Merged(Merged {
                how: content_how(&landed, main),
                head,
                branch_deleted: false,
            }),
            None => Standing::Open,
        },
    )
}

/// The head of a task's last review that saw work on its branch (an entry
/// of its `review_history` that is not a review of an empty diff), else
/// the head its override was given at.
pub fn reviewed_head(task: &Task) -> Option<String> {
    let is_commit =
        |text: &&str| (7..=64).contains(&text.len()) && text.bytes().all(|b| b.is_ascii_hexdigit());
    let from_history = task.review_history.iter().rev().find_map(|entry| {
        let head = entry.get("head_commit")?.as_str().filter(is_commit)?;
        let empty = entry
            .get("feedback")
            .and_then(|f| f.as_str())
            .is_some_and(|f| f.starts_with(NOTHING_IMPLEMENTED));
        (!empty).then(|| head.to_string())
    });
    from_history.or_else(|| {
        task.raw
            .get("override")?
            .get("head_commit")?
            .as_str()
            .filter(is_commit)
            .map(str::to_string)
    })
}

/// A branch that is gone: merged when the last head a review saw is in
/// main's history or its content is on main.
fn gone(
    repo: &Repository,
    main: &MainBranch,
    branch: &str,
    task: Option<&Task>,
    head: &str,
) -> Result<Standing, Error> {
    if repo.is_ancestor(head, &main.commit)? {
        return Ok(Standing::Merged(Merged {
            how: format!(
                "its branch {branch} is deleted, and the last head reviewed, {}, is in {}'s history",
                short(head),
                main.name
            ),
            head: head.to_string(),
            branch_deleted: true,
        }));
    }
    let base = base_of(repo, main, task, head)?;
    if let Some(landed) = repo.content_landed(&base, head, &main.commit, CONTENT_WALK)? {
        return Ok(Standing::Merged(Merged {
            how: format!(
                "its branch {branch} is deleted, and of the last head reviewed, {}: {}",
                short(head),
                content_how(&landed, main)
            ),
            head: head.to_string(),
            branch_deleted: true,
        }));
    }
    Ok(Standing::Gone {
        branch: branch.to_string(),
        why: format!(
            "the last head reviewed, {}, is not in {}'s history and its content is not on {}",
            short(head),
            main.name,
            main.name
        ),
    })
}

/// Why a head in main's history had work of its own, if anything says so.
fn worked(
    repo: &Repository,
    main: &MainBranch,
    task: Option<&Task>,
    head: &str,
    reviewed: Option<&str>,
) -> Result<Option<String>, Error> {
    if let Some(merge) = repo.merge_of(head, &main.commit, MERGE_WALK)? {
        return Ok(Some(format!("merge commit {}", short(&merge))));
    }
    let declared = task.and_then(|t| {
        [&t.execution_base_commit, &t.base_commit]
            .into_iter()
            .flatten()
            .find_map(|c| repo.resolve_commit(c).ok())
    });
    if let Some(base) = declared {
        if base != head && repo.is_ancestor(&base, head)? {
            return Ok(Some(format!("the task's work starts at {}", short(&base))));
        }
    }
    if let Some(reviewed) = reviewed {
        if repo.is_ancestor(reviewed, head)? {
            return Ok(Some(format!(
                "a review saw its work at {}",
                short(reviewed)
            )));
        }
    }
    Ok(None)
}

/// Whether every file `head` changes (from its base, as `standing`
/// measures it) already holds, at `target` itself, the content `head` gives
/// it: merging `head` there brings none of its work. Only `target` counts:
/// content that landed earlier and changed since would change again.
pub fn holds_already(
    repo: &Repository,
    main: &MainBranch,
    task: Option<&Task>,
    head: &str,
    target: &str,
) -> Result<bool, Error> {
    let base = base_of(repo, main, task, head)?;
    Ok(repo.content_landed(&base, head, target, 1)?.is_some())
}

/// The base the branch's own changes are measured from: the task's, as a
/// review takes it (without stacking on dependencies).
fn base_of(
    repo: &Repository,
    main: &MainBranch,
    task: Option<&Task>,
    head: &str,
) -> Result<String, Error> {
    Ok(repo
        .diff_base(&git::BaseRequest {
            main,
            head,
            execution_base_commit: task.and_then(|t| t.execution_base_commit.as_deref()),
            base_commit: task.and_then(|t| t.base_commit.as_deref()),
            task_base_branch: task.and_then(|t| t.base_branch.as_deref()),
        })?
        .commit)
}

fn content_how(landed: &git::Landed, main: &MainBranch) -> String {
    let (files, them) = match landed.files {
        1 => ("the one file it changes holds".to_string(), "it"),
        n => (format!("all {n} files it changes hold"), "them"),
    };
    let at = if landed.commit == main.commit {
        String::new()
    } else {
        format!(" since {}", short(&landed.commit))
    };
    format!(
        "{files} on {}{at} the content the branch gives {them} (a squash or rebase merge)",
        main.name
    )
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    fn task(text: &str) -> Task {
        Task::parse(Path::new(".speed/tasks/1.json"), None, text).unwrap()
    }

    #[test]
    fn the_last_review_that_saw_work_names_the_head() {
        let a = "a".repeat(40);
        let b = "b".repeat(40);
        let t = task(&format!(
            r#"{{"review_history": [
                {{"verdict": "request_changes", "head_commit": "{a}", "feedback": "fix it"}},
                {{"verdict": "request_changes", "head_commit": "{b}",
                  "feedback": "{NOTHING_IMPLEMENTED}: branch x has no changes"}}
            ]}}"#
        ));
        assert_eq!(reviewed_head(&t), Some(a.clone()));
        // An override's head, when no review saw work; nothing that is not
        // a commit id.
        let t = task(&format!(
            r#"{{"review_history": [{{"head_commit": "main"}}], "override": {{"head_commit": "{b}"}}}}"#
        ));
        assert_eq!(reviewed_head(&t), Some(b));
        assert_eq!(reviewed_head(&task("{}")), None);
    }
}
