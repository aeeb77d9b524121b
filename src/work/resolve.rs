//! From a subject to its diff: the head of its branch, the diff base and
//! the diff between them, from git objects.
//!
//! The base is the first rule of the contract that resolves
//! (`git::Repository::diff_base`), moved forward when something newer in
//! the branch's history is not the task's own work: the main branch merged
//! into the branch since (the merge-base then is newer), or, for a task
//! stacked on another (`depends_on`), where the branch forked from its
//! parent's history. That fork point is found as git would find it, from
//! every head the parent is known to have had (its branch now, its
//! reflogs, the heads its reviews judged) and where this branch meets
//! them, from copies of the parent's commits (a rebased parent), and from
//! the first commits of this branch whose content the main branch already
//! holds (a squash-merged parent whose branch is gone). When the parent's
//! work cannot be told apart, the notices say so and name the commits the
//! diff holds.

use crate::git::{self, CommitInfo, Diff, MainBranch, Repository, short};
use crate::tasks::{self, Task};

use super::{Error, Subject};

/// A subject's branch, base and diff, and what its dependencies are.
pub struct Resolved {
    pub branch: String,
    pub base: git::Base,
    pub diff: Diff,
    /// One line per `depends_on` entry: merged, stacked on, or why not.
    pub dependencies: Vec<String>,
    /// What the reviewer and the user must know about the base: where it
    /// was moved to and why, and what could not be told apart (another
    /// task's work that may show in the diff, with its commits named).
    pub notices: Vec<String>,
}

/// Resolve the head and base commits of a subject and diff them.
pub fn resolve(repo: &Repository, main: &MainBranch, subject: &Subject) -> Result<Resolved, Error> {
    let branch = subject.branch().to_string();
    let task = subject.task();
    let head = repo
        .branch_head(&branch)
        .map_err(|source| Error::BranchMissing {
            subject: subject.label(),
            branch: branch.clone(),
            source: Box::new(source),
        })?;
    let mut found = Found::default();
    found
        .notices
        .extend(head.note.map(|note| format!("Branch: {note}.")));
    let head = head.commit;
    let rule = repo.diff_base(&git::BaseRequest {
        main,
        head: &head,
        execution_base_commit: task.and_then(|t| t.execution_base_commit.as_deref()),
        base_commit: task.and_then(|t| t.base_commit.as_deref()),
        task_base_branch: task.and_then(|t| t.base_branch.as_deref()),
    })?;
    let fork = repo.merge_base(&main.commit, &head).ok();
    if let (Some(task), Some(fork)) = (task.filter(|t| !t.depends_on.is_empty()), &fork) {
        stack(repo, main, task, &head, fork, &mut found);
    }
    if let Some(fork) = &fork {
        if *fork != rule.commit {
            found.candidates.push(Candidate {
                commit: fork.clone(),
                how: format!(
                    "merge-base of {} and the task branch ({}), newer than the {}: what came between is {}'s (merged into the branch since), not this task's",
                    main.name,
                    short(fork),
                    rule.how,
                    main.name
                ),
                stacked_on: None,
            });
        }
    }
    let base = choose(repo, &rule, &found.candidates, &mut found.notices);
    let diff = repo.diff(&base.commit, &head)?;
    found.notices.extend(not_utf8(&diff));
    if !found.doubts.is_empty() {
        found
            .notices
            .push(doubt(repo, &found.doubts, &base.commit, &head));
    }
    Ok(Resolved {
        branch,
        base,
        diff,
        dependencies: found.lines,
        notices: found.notices,
    })
}

/// One notice naming every changed file whose diff lines are not UTF-8: the diff,
/// the prompt and the citations show U+FFFD where those bytes are, so the
/// reader is told which files they are rather than shown mangled text.
fn not_utf8(diff: &Diff) -> Option<String> {
    let paths: Vec<&str> = diff
        .files
        .iter()
        .filter(|f| f.not_utf8)
        .map(|f| f.path.as_str())
        .collect();
    let (first, rest) = paths.split_first()?;
    let (files, are) = if rest.is_empty() {
        (format!("{first} is"), "its lines are")
    } else {
        (format!("{} are", paths.join(", ")), "their lines are")
    };
    Some(format!(
        "{files} not UTF-8: {are} shown with U+FFFD in place of the bytes that are not, so the review does not see those bytes as they are."
    ))
}

/// A commit the diff could start at instead of the rule's base, and why.
struct Candidate {
    commit: String,
    /// Completes "The diff starts at the …".
    how: String,
    /// The dependency it comes from (its id), if any.
    stacked_on: Option<String>,
}

/// What looking at the dependencies found.
#[derive(Default)]
struct Found {
    candidates: Vec<Candidate>,
    /// One line per `depends_on` entry, for the prompt.
    lines: Vec<String>,
    notices: Vec<String>,
    /// Dependencies whose work may show in the diff, each with why.
    doubts: Vec<String>,
}

/// Each dependency must build a list of the heads its branch is known to
/// have had; more than this many are not looked at.
const MAX_KNOWN_HEADS: usize = 64;
/// Each dependency costs graph walks, and choosing among them compares
/// every pair: a task file listing thousands must not stall the review.
const MAX_DEPENDENCIES: usize = 32;
/// The commits of this branch a stacked review compares with its
/// parents', and names when in doubt.
const MAX_OWN: usize = 200;

/// Looks at each dependency for where this branch's own work starts, and
/// describes each for the prompt.
fn stack(
    repo: &Repository,
    main: &MainBranch,
    task: &Task,
    head: &str,
    fork: &str,
    found: &mut Found,
) {
    let store = tasks::Store::open(repo.state_root());
    let own = repo
        .branch_history(fork, head, MAX_OWN)
        .map(|h| h.commits)
        .unwrap_or_default();
    let examined = task.depends_on.len().min(MAX_DEPENDENCIES);
    for id in &task.depends_on[..examined] {
        if id == &task.id {
            found
                .lines
                .push(format!("task {id}: this task itself (ignored)"));
            continue;
        }
        let dependency = match store.dependency(task, id) {
            Ok(Some(dependency)) => dependency,
            Ok(None) => {
                found
                    .lines
                    .push(format!("task {id}: no task file beside this one"));
                continue;
            }
            Err(err) => {
                found
                    .lines
                    .push(format!("task {id}: its task file cannot be read ({err})"));
                continue;
            }
        };
        if dependency.branch == task.branch {
            // Its head is this task's head: stacking on it would hide the
            // work under review, so the base stays where it was.
            found.lines.push(format!(
                "task {id} (branch {}): shares this task's branch",
                dependency.branch
            ));
            continue;
        }
        parent(repo, main, &dependency, head, fork, &own, found);
    }
    if examined < task.depends_on.len() {
        found.lines.push(format!(
            "{} more tasks, not examined: only the first {MAX_DEPENDENCIES} dependencies are",
            task.depends_on.len() - examined
        ));
    }
    // A parent squash-merged into main: the first commits of this branch
    // hold what a commit of main holds.
    if let Ok(Some(landed)) = repo.landed_prefix(fork, &own, &main.commit) {
        found.candidates.push(Candidate {
            commit: landed.through.clone(),
            how: format!(
                "last of this branch's first {} commit{} ({}), whose content {} already holds as {} \"{}\" (the work it builds on, merged by a squash or a rebase), so the diff shows only this task's own commits",
                landed.commits,
                if landed.commits == 1 { "" } else { "s" },
                short(&landed.through),
                main.name,
                short(&landed.on_main),
                landed.on_main_summary
            ),
            stacked_on: None,
        });
        // What was in doubt about a parent whose branch is gone is settled
        // by this: its work is on main.
        found.doubts.clear();
    }
}

/// One dependency: its branch now, every head it is known to have had, and
/// where this branch meets its history.
fn parent(
    repo: &Repository,
    main: &MainBranch,
    dependency: &Task,
    head: &str,
    fork: &str,
    own: &[CommitInfo],
    found: &mut Found,
) {
    let id = &dependency.id;
    let branch = &dependency.branch;
    let tip = repo.newest_tip(branch);
    let mut known: Vec<(String, String)> = Vec::new();
    let mut add = |commit: &str, source: &str| {
        if let Ok(commit) = repo.resolve_commit(commit) {
            if !known.iter().any(|(c, _)| *c == commit) {
                known.push((commit, source.to_string()));
            }
        }
    };
    if let Some(tip) = &tip {
        add(tip, "its branch's head");
    }
    for entry in dependency.review_history.iter().rev() {
        if let Some(commit) = entry.get("head_commit").and_then(|v| v.as_str()) {
            add(commit, "a head its review judged");
        }
    }
    for key in ["human_review", "override", "replan"] {
        if let Some(commit) = dependency
            .raw
            .get(key)
            .and_then(|v| v.get("head_commit"))
            .and_then(|v| v.as_str())
        {
            add(commit, "a head its task file names");
        }
    }
    for commit in repo.known_heads(branch, MAX_KNOWN_HEADS) {
        add(&commit, "a head its branch had (reflog)");
    }
    known.truncate(MAX_KNOWN_HEADS);

    let merged = tip
        .as_deref()
        .is_some_and(|tip| repo.is_ancestor(tip, &main.commit).unwrap_or(false));
    if merged {
        found.lines.push(format!(
            "task {id} (branch {branch}): merged into {}",
            main.name
        ));
        return;
    }
    let before = found.candidates.len();
    // Every known head in this branch's history is a point its own work
    // starts after; a head it does not contain meets it at their merge-base
    // (the parent moved on since), unless that is no newer than the fork
    // from main.
    for (commit, source) in &known {
        if repo.is_ancestor(commit, head).unwrap_or(false) {
            let how = if Some(commit) == tip.as_ref() {
                format!(
                    "head of task {id}'s branch {branch} ({}): this task depends on it and it is not merged into {}, so the diff starts there and shows only this task's work",
                    short(commit),
                    main.name
                )
            } else {
                format!(
                    "commit {} of task {id}'s branch {branch} ({source}): this task was built on it, so the diff starts there and shows only this task's work",
                    short(commit)
                )
            };
            found.candidates.push(Candidate {
                commit: commit.clone(),
                how,
                stacked_on: Some(id.clone()),
            });
            continue;
        }
        let Ok(meet) = repo.merge_base(commit, head) else {
            continue;
        };
        if meet != fork && repo.is_ancestor(fork, &meet).unwrap_or(false) {
            found.candidates.push(Candidate {
                commit: meet.clone(),
                how: format!(
                    "commit {} where this branch forked from task {id}'s branch {branch}, which has moved on to {} since ({source}): the diff starts there and shows only this task's work",
                    short(&meet),
                    short(commit)
                ),
                stacked_on: Some(id.clone()),
            });
        }
    }
    // A parent rebased since: this branch shares no commit of its own with
    // it, and starts with copies of its commits (new ids, same patches).
    let apart = tip
        .as_deref()
        .is_some_and(|tip| repo.merge_base(tip, head).is_ok_and(|meet| meet == fork));
    if let (Some(tip), true) = (&tip, apart) {
        let theirs_base = repo
            .merge_base(&main.commit, tip)
            .unwrap_or_else(|_| fork.to_string());
        if let Ok(copied) = repo.copied_prefix(own, &theirs_base, tip) {
            if copied > 0 {
                let through = &own[copied - 1];
                found.candidates.push(Candidate {
                    commit: through.id.clone(),
                    how: format!(
                        "last of this branch's first {copied} commit{} ({}), the same changes as commits of task {id}'s branch {branch} (rebased since to {}), so the diff shows only this task's own commits",
                        if copied == 1 { "" } else { "s" },
                        short(&through.id),
                        short(tip)
                    ),
                    stacked_on: Some(id.clone()),
                });
            }
        }
    }
    let related = found.candidates.len() > before;
    let contained = tip
        .as_deref()
        .is_some_and(|tip| repo.is_ancestor(tip, head).unwrap_or(false));
    let line = match (&tip, related) {
        (Some(tip), true) if contained => format!(
            "task {id} (branch {branch}, head {}): not merged into {}; this branch contains it",
            short(tip),
            main.name
        ),
        (Some(tip), true) => format!(
            "task {id} (branch {branch}, head {}): not merged into {}; this branch was built on an earlier state of it",
            short(tip),
            main.name
        ),
        (Some(_), false) => format!(
            "task {id} (branch {branch}): not merged into {} and not part of this branch",
            main.name
        ),
        (None, true) => format!(
            "task {id} (branch {branch}): branch not found; this branch builds on a head it had"
        ),
        (None, false) => format!("task {id} (branch {branch}): branch not found"),
    };
    found.lines.push(line);
    if tip.is_none() && !related {
        let why = if known.is_empty() {
            format!(
                "task {id}'s branch {branch} is gone and no head it had is known here (no review of it recorded one, no reflog holds one)"
            )
        } else {
            format!(
                "task {id}'s branch {branch} is gone and none of the {} head{} it is known to have had is in this branch's history",
                known.len(),
                if known.len() == 1 { "" } else { "s" }
            )
        };
        found.doubts.push(why);
    }
}

/// The newest candidate in the branch's history that is newer than the
/// rule's base; the rule's base when none is. Of candidates that do not
/// contain one another, the one that contains the most others, and the
/// notices say whose work still shows.
fn choose(
    repo: &Repository,
    rule: &git::Base,
    candidates: &[Candidate],
    notices: &mut Vec<String>,
) -> git::Base {
    let newer: Vec<&Candidate> = candidates
        .iter()
        .filter(|c| {
            c.commit != rule.commit && repo.is_ancestor(&rule.commit, &c.commit).unwrap_or(false)
        })
        .collect();
    let contains =
        |a: &Candidate, b: &Candidate| repo.is_ancestor(&b.commit, &a.commit).unwrap_or(false);
    // The first of the candidates that contain the most others: the order
    // they were found in says which explanation of a commit comes first.
    let mut chosen: Option<(&Candidate, usize)> = None;
    for c in &newer {
        let count = newer.iter().filter(|o| contains(c, o)).count();
        if chosen.is_none_or(|(_, best)| count > best) {
            chosen = Some((c, count));
        }
    }
    let Some((chosen, _)) = chosen else {
        return rule.clone();
    };
    let mut how = format!("{} (without it: {})", chosen.how, rule.how);
    let mut left: Vec<&str> = newer
        .iter()
        .filter(|o| !contains(chosen, o))
        .filter_map(|o| o.stacked_on.as_deref())
        .filter(|id| Some(*id) != chosen.stacked_on.as_deref())
        .collect();
    left.sort_unstable();
    left.dedup();
    if !left.is_empty() {
        how.push_str(&format!(
            "; the work of task {} is not in that commit and still shows in the diff",
            left.join(", task ")
        ));
    }
    notices.push(format!("The diff starts at the {how}"));
    git::Base {
        commit: chosen.commit.clone(),
        how,
    }
}

/// What cannot be told apart, with the commits the diff holds named.
fn doubt(repo: &Repository, doubts: &[String], base: &str, head: &str) -> String {
    let commits = repo
        .branch_history(base, head, MAX_OWN)
        .map(|h| h.commits)
        .unwrap_or_default();
    let shown: Vec<String> = commits
        .iter()
        .rev()
        .take(10)
        .map(|c| format!("{} \"{}\"", short(&c.id), c.summary))
        .collect();
    let more = commits.len().saturating_sub(shown.len());
    format!(
        "Where this task's own work starts is not certain: {}. If this branch was built on that work, it shows in the diff as this task's: the diff holds {} commit{} ({}{}). Review the base (base_commit in the task file) before relying on an approval.",
        doubts.join("; "),
        commits.len(),
        if commits.len() == 1 { "" } else { "s" },
        shown.join(", "),
        if more > 0 {
            format!(" and {more} older")
        } else {
            String::new()
        }
    )
}
