//! From a subject to its diff: the head of its branch, the diff base (the
//! first rule that resolves, or the head of an unmerged dependency the
//! branch builds on) and the diff between them, from git objects.

use crate::git::{self, Diff, MainBranch, Repository, short};
use crate::tasks::{self, Task};

use super::{Error, Subject};

/// A subject's branch, base and diff, and what its dependencies are.
pub struct Resolved {
    pub branch: String,
    pub base: git::Base,
    pub diff: Diff,
    /// One line per `depends_on` entry: merged, stacked on, or why not.
    pub dependencies: Vec<String>,
}

/// Resolve the head and base commits of a subject and diff them.
pub fn resolve(repo: &Repository, main: &MainBranch, subject: &Subject) -> Result<Resolved, Error> {
    let branch = subject.branch().to_string();
    let task = subject.task();
    let head = repo
        .resolve_branch(&branch)
        .map_err(|source| Error::BranchMissing {
            subject: subject.label(),
            branch: branch.clone(),
            source: Box::new(source),
        })?;
    let base = repo.diff_base(&git::BaseRequest {
        main,
        head: &head,
        execution_base_commit: task.and_then(|t| t.execution_base_commit.as_deref()),
        base_commit: task.and_then(|t| t.base_commit.as_deref()),
        task_base_branch: task.and_then(|t| t.base_branch.as_deref()),
    })?;
    let (base, dependencies) = match task {
        Some(task) if !task.depends_on.is_empty() => stack(repo, main, task, &head, base),
        _ => (base, Vec::new()),
    };
    let diff = repo.diff(&base.commit, &head)?;
    Ok(Resolved {
        branch,
        base,
        diff,
        dependencies,
    })
}

/// A dependency's branch that is not merged into main but that the task's
/// branch contains.
struct Unmerged {
    id: String,
    branch: String,
    head: String,
}

/// Moves the base of a task that builds on unmerged dependencies to the
/// head of the one it was built on, so the diff shows this task's own work,
/// and describes each dependency for the prompt. An `execution_base_commit`
/// is where the orchestrator says the work started, so it is kept.
fn stack(
    repo: &Repository,
    main: &MainBranch,
    task: &Task,
    head: &str,
    base: git::Base,
) -> (git::Base, Vec<String>) {
    let store = tasks::Store::open(repo.state_root());
    let mut lines = Vec::new();
    let mut unmerged: Vec<Unmerged> = Vec::new();
    // Each dependency costs graph walks, and choosing among them compares
    // every pair: a task file listing thousands must not stall the review.
    const MAX_DEPENDENCIES: usize = 32;
    let examined = task.depends_on.len().min(MAX_DEPENDENCIES);
    for id in &task.depends_on[..examined] {
        if id == &task.id {
            lines.push(format!("task {id}: this task itself (ignored)"));
            continue;
        }
        let dependency = match store.dependency(task, id) {
            Ok(Some(dependency)) => dependency,
            Ok(None) => {
                lines.push(format!("task {id}: no task file beside this one"));
                continue;
            }
            Err(err) => {
                lines.push(format!("task {id}: its task file cannot be read ({err})"));
                continue;
            }
        };
        let branch = dependency.branch;
        if branch == task.branch {
            // Its head is this task's head: stacking on it would hide the
            // work under review, so the base stays where it was.
            lines.push(format!(
                "task {id} (branch {branch}): shares this task's branch"
            ));
            continue;
        }
        let Ok(dep_head) = repo.resolve_branch(&branch) else {
            lines.push(format!("task {id} (branch {branch}): branch not found"));
            continue;
        };
        let merged = repo.is_ancestor(&dep_head, &main.commit).unwrap_or(false);
        let contained = repo.is_ancestor(&dep_head, head).unwrap_or(false);
        let line = match (merged, contained) {
            (true, _) => format!("task {id} (branch {branch}): merged into {}", main.name),
            (false, true) => {
                unmerged.push(Unmerged {
                    id: id.clone(),
                    branch: branch.clone(),
                    head: dep_head.clone(),
                });
                format!(
                    "task {id} (branch {branch}, head {}): not merged into {}; this branch contains it",
                    short(&dep_head),
                    main.name
                )
            }
            (false, false) => format!(
                "task {id} (branch {branch}): not merged into {} and not part of this branch",
                main.name
            ),
        };
        lines.push(line);
    }
    if examined < task.depends_on.len() {
        lines.push(format!(
            "{} more tasks, not examined: only the first {MAX_DEPENDENCIES} dependencies are",
            task.depends_on.len() - examined
        ));
    }
    if base.how == "execution_base_commit" {
        return (base, lines);
    }
    // Only a dependency newer than the base moves it; of several, the one
    // that contains the others (the last one built on).
    let newer: Vec<&Unmerged> = unmerged
        .iter()
        .filter(|d| {
            d.head != base.commit && repo.is_ancestor(&base.commit, &d.head).unwrap_or(false)
        })
        .collect();
    let Some(chosen) = newer
        .iter()
        .find(|d| {
            newer
                .iter()
                .all(|other| repo.is_ancestor(&other.head, &d.head).unwrap_or(false))
        })
        .or(newer.first())
    else {
        return (base, lines);
    };
    let mut how = format!(
        "head of task {}'s branch {} ({}): this task depends on it and it is not merged into {}, so the diff starts there and shows only this task's work (without it: {})",
        chosen.id,
        chosen.branch,
        short(&chosen.head),
        main.name,
        base.how
    );
    let others: Vec<&str> = newer
        .iter()
        .filter(|d| d.id != chosen.id && !repo.is_ancestor(&d.head, &chosen.head).unwrap_or(false))
        .map(|d| d.id.as_str())
        .collect();
    if !others.is_empty() {
        how.push_str(&format!(
            "; the work of task {} is not in that head and still shows in the diff",
            others.join(", task ")
        ));
    }
    let base = git::Base {
        commit: chosen.head.clone(),
        how,
    };
    (base, lines)
}
