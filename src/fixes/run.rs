//! `speed fix run`: a coding agent works on one fix in a temporary
//! worktree of the task branch's head (never the user's checkout), with
//! the fix's prompt on its stdin and a time limit, run through `process`
//! (no shell; its whole process tree ended). When it committed, the
//! finding's check runs again on its commit: the fix is `completed` only
//! when the check no longer finds it. A finding no check can look for (the
//! model's, a criterion, a nit) waits for the next review. The commit is
//! kept as `refs/speed/fixes/<id>`; the branch moves to it only when asked,
//! only as a fast-forward, and not if it moved while the agent worked.

use std::path::Path;
use std::time::Duration;

use crate::checks;
use crate::process;

use super::Error;
use super::model::{Fix, Source, Status};
use super::queue::{self, Change};
use super::store::Store;
use super::worktree::{self, Worktree};

/// What the agent's output keeps for the user.
const AGENT_TAIL: usize = 16 << 10;

/// What `speed fix run` was asked.
#[derive(Debug, Clone)]
pub struct Request {
    pub id: String,
    /// The agent's argv.
    pub agent: Vec<String>,
    pub update_branch: bool,
    pub timeout: Duration,
    /// Who runs it, for the fix's history.
    pub by: String,
}

/// Speed's checks at a commit of the fix's branch (the review's facts
/// without a model), for the finding to be looked for again.
pub trait Verify {
    fn findings_at(&self, fix: &Fix, commit: &str) -> Result<Vec<checks::Finding>, String>;
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// The agent committed and the check no longer finds it.
    Completed,
    /// The agent committed; no check can say (a review will).
    Unverified,
    /// The agent committed, and the check still finds it.
    StillFound,
    /// The check could not run to its end on the agent's commit.
    Unchecked(String),
    /// The agent made no usable commit.
    NoCommit(String),
    /// The agent failed, or ran out of time.
    AgentFailed(String),
}

/// What the user is told.
#[derive(Debug, Clone)]
pub struct Ran {
    pub fix: Fix,
    pub outcome: Outcome,
    /// The agent's commit, when it made one.
    pub commit: Option<String>,
    /// Where the commit is kept.
    pub kept_as: Option<String>,
    /// What happened to the branch (moved, not moved and why).
    pub branch: Option<Result<String, String>>,
    /// The end of what the agent printed.
    pub agent_output: String,
    /// Lines worth saying (uncommitted changes left, …).
    pub notes: Vec<String>,
}

/// Run the agent on fix `request.id`.
pub fn run(
    root: &Path,
    request: &Request,
    config: &checks::Config,
    verify: &dyn Verify,
) -> Result<Ran, Error> {
    let store = Store::open(root);
    let (_, fix) = store.find(&request.id)?;
    if !fix.status.open() {
        return Err(Error::State {
            id: fix.id.clone(),
            status: fix.status.as_str(),
            what: "run it".to_string(),
        });
    }
    // A name git would take for an option is no branch of a task.
    if fix.branch.is_empty() || fix.branch.starts_with('-') {
        return Err(Error::NoBranch {
            branch: fix.branch.clone(),
        });
    }
    let local = worktree::local_branch(root, &fix.branch);
    let start = match &local {
        Some(head) => head.clone(),
        None => worktree::git(
            root,
            &[
                "rev-parse",
                "--verify",
                "--quiet",
                &format!("{}^{{commit}}", fix.branch),
            ],
        )
        .map_err(|_| Error::NoBranch {
            branch: fix.branch.clone(),
        })?,
    };
    let prompt = super::prompt::text(&fix);
    let fix = queue::change(
        &store,
        &fix.id,
        Change::Start {
            note: format!(
                "fix run from {} with `{}`",
                crate::git::short(&start),
                request.agent.join(" ")
            ),
        },
        &request.by,
    )?;
    let worked = work(root, request, &fix, &start, &prompt);
    let (outcome, commit, agent_output, mut notes) = match worked {
        Ok(worked) => worked,
        Err(err) => {
            finish(
                &store,
                &fix,
                Status::Pending,
                None,
                &format!("the run failed: {err}"),
                &request.by,
            )?;
            return Err(err);
        }
    };
    let outcome = match (&outcome, &commit) {
        (None, Some(commit)) => judge(&fix, commit, config, verify),
        (Some(outcome), _) => outcome.clone(),
        (None, None) => Outcome::NoCommit("the agent made no commit".to_string()),
    };
    let kept_as = match &commit {
        Some(commit) => Some(worktree::keep(root, &fix.id, commit)?),
        None => None,
    };
    let (status, note) = match &outcome {
        Outcome::Completed => (
            Status::Completed,
            "the check no longer finds it at the agent's commit".to_string(),
        ),
        Outcome::Unverified => (
            Status::InProgress,
            "the agent committed; no check can look for it: the next review decides".to_string(),
        ),
        Outcome::StillFound => (
            Status::Pending,
            "the check still finds it at the agent's commit".to_string(),
        ),
        Outcome::Unchecked(why) => (
            Status::Pending,
            format!("the check could not run at the agent's commit: {why}"),
        ),
        Outcome::NoCommit(why) | Outcome::AgentFailed(why) => (Status::Pending, why.clone()),
    };
    let fix = finish(&store, &fix, status, commit.clone(), &note, &request.by)?;
    let branch = match (&commit, request.update_branch) {
        (Some(commit), true) if matches!(outcome, Outcome::Completed | Outcome::Unverified) => {
            Some(move_branch(root, &fix, &start, local.as_deref(), commit))
        }
        (Some(_), true) => Some(Err(
            "the branch was not moved: the fix is not done".to_string()
        )),
        _ => None,
    };
    if commit.is_some() && !request.update_branch {
        notes.push(format!(
            "the branch {} was not moved (--update-branch moves it)",
            fix.branch
        ));
    }
    Ok(Ran {
        fix,
        outcome,
        commit,
        kept_as,
        branch,
        agent_output,
        notes,
    })
}

type Worked = (Option<Outcome>, Option<String>, String, Vec<String>);

/// The agent in a worktree at `start`: its outcome when it failed, its
/// commit when it made one, its output's tail, notes.
fn work(
    root: &Path,
    request: &Request,
    fix: &Fix,
    start: &str,
    prompt: &str,
) -> Result<Worked, Error> {
    let tree = Worktree::add(root, start)?;
    let Some((program, args)) = request.agent.split_first() else {
        return Err(Error::Agent("--agent needs a command".to_string()));
    };
    let mut command = std::process::Command::new(program);
    command.args(args).current_dir(tree.path());
    for var in worktree::GIT_ENV {
        command.env_remove(var);
    }
    command.env("SPEED_FIX_ID", &fix.id);
    let limits = process::Limits {
        timeout: request.timeout,
        stdout: process::Capture::Tail(AGENT_TAIL),
        stderr: process::Capture::Tail(AGENT_TAIL),
    };
    let ran = process::run(command, prompt.as_bytes().to_vec(), &limits);
    let mut notes = Vec::new();
    let (failed, output) = match ran {
        Ok(output) => {
            let mut text = String::from_utf8_lossy(&output.stdout).into_owned();
            text.push_str(&String::from_utf8_lossy(&output.stderr));
            let failed = (!output.status.success())
                .then(|| Outcome::AgentFailed(format!("the agent {}", exit_words(output.status))));
            (failed, text)
        }
        Err(process::Error::Spawn(e)) => {
            return Err(Error::Agent(format!(
                "`{program}` could not be started: {e}"
            )));
        }
        Err(process::Error::Interrupted) => return Err(Error::Interrupted),
        Err(e) => (
            Some(Outcome::AgentFailed(format!("the agent: {e}"))),
            String::new(),
        ),
    };
    let head = tree.head()?;
    if tree.dirty() {
        notes.push("the agent left uncommitted changes; they were not used".to_string());
    }
    let commit = if head == start {
        None
    } else if !descends(root, start, &head) {
        return Ok((
            Some(Outcome::NoCommit(format!(
                "the agent's commit {} does not build on the branch's head {}; it was not used",
                crate::git::short(&head),
                crate::git::short(start)
            ))),
            None,
            output,
            notes,
        ));
    } else {
        Some(head)
    };
    Ok((failed, commit, output, notes))
}

fn exit_words(status: std::process::ExitStatus) -> String {
    match status.code() {
        Some(code) => format!("exited with status {code}"),
        None => format!("was stopped ({status})"),
    }
}

fn descends(root: &Path, ancestor: &str, commit: &str) -> bool {
    worktree::git(root, &["merge-base", "--is-ancestor", ancestor, commit]).is_ok()
}

/// Whether the finding is gone at `commit`.
fn judge(fix: &Fix, commit: &str, config: &checks::Config, verify: &dyn Verify) -> Outcome {
    if fix.source != Source::Check {
        return Outcome::Unverified;
    }
    let findings = match verify.findings_at(fix, commit) {
        Ok(findings) => findings,
        Err(why) => return Outcome::Unchecked(why),
    };
    let check = fix.finding.check.as_deref().unwrap_or("");
    let parsed = config
        .commands
        .iter()
        .any(|c| c.name == check && c.tool.parser.is_some());
    let whole_failure = findings
        .iter()
        .any(|f| f.check == check && f.file.is_none() && f.rule.is_none());
    if findings
        .iter()
        .any(|f| super::found::fingerprint(f) == fix.fingerprint)
    {
        return Outcome::StillFound;
    }
    if parsed && whole_failure {
        return Outcome::Unchecked(format!("`{check}` did not run to its end"));
    }
    Outcome::Completed
}

fn finish(
    store: &Store,
    fix: &Fix,
    status: Status,
    commit: Option<String>,
    note: &str,
    by: &str,
) -> Result<Fix, Error> {
    queue::change(
        store,
        &fix.id,
        Change::Finish {
            status,
            commit,
            note: note.to_string(),
        },
        by,
    )
}

/// Moves the fix's branch to `commit` when that is a fast-forward from
/// where the run started and nobody works on the branch in a checkout.
fn move_branch(
    root: &Path,
    fix: &Fix,
    start: &str,
    local: Option<&str>,
    commit: &str,
) -> Result<String, String> {
    let branch = &fix.branch;
    if local.is_none() {
        return Err(format!("{branch} is not a local branch; it was not moved"));
    }
    match worktree::checked_out(root, branch) {
        Ok(Some(path)) => {
            return Err(format!(
                "{branch} is checked out in {path}; speed does not move a branch under a checkout"
            ));
        }
        Ok(None) => {}
        Err(e) => return Err(e.to_string()),
    }
    match worktree::local_branch(root, branch) {
        Some(now) if now == start => {}
        Some(now) => {
            return Err(format!(
                "{branch} moved from {} to {} while the agent worked; it was not moved",
                crate::git::short(start),
                crate::git::short(&now)
            ));
        }
        None => return Err(format!("{branch} is gone; it was not moved")),
    }
    let why = format!(
        "speed fix run {}: fast-forward to the agent's commit",
        fix.id
    );
    worktree::fast_forward(root, branch, commit, start, &why)
        .map(|()| {
            format!(
                "{branch} moved from {} to {} (fast-forward)",
                crate::git::short(start),
                crate::git::short(commit)
            )
        })
        .map_err(|e| format!("{branch} was not moved: {e}"))
}
