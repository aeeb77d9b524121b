//! `speed fix …`: the fix queue's commands. Lists and pages go to stdout
//! (`render::fixes`); what happened goes to stderr. `run` looks for the
//! finding again with the review's own stages (`review::recheck`), so the
//! agent's commit is judged by the checks a review would run.

use std::path::Path;

use anyhow::Context as _;

use crate::exit::Outcome;
use crate::fixes::{self, Change, Fix, Status, Store, run};
use crate::git::{Repository, short};
use crate::render;
use crate::review::{self, Context, Target};
use crate::settings::{FixSettings, ReviewSettings};

use super::{Colors, note, out};

pub fn fix_command(dir: &Path, settings: &FixSettings, colors: Colors) -> anyhow::Result<Outcome> {
    let repo = Repository::discover(dir)?;
    let root = repo.state_root().to_path_buf();
    drop(repo);
    let store = Store::open(&root);
    match settings {
        FixSettings::List {
            task_id,
            feature,
            all,
            json,
        } => list(
            &store,
            task_id.as_deref(),
            feature.as_deref(),
            *all,
            *json,
            colors,
        ),
        FixSettings::Show { id, json } => {
            let (_, fix) = store.find(id)?;
            if *json {
                print!("{}", render::fixes::json_one(&fix));
            } else {
                print!("{}", render::fixes::show(&fix, &colors.stdout));
            }
            Ok(Outcome::Approved)
        }
        FixSettings::Prompt { id } => {
            let (_, fix) = store.find(id)?;
            refuse_plan(&fix, "a prompt for a coding agent")?;
            print!("{}", fixes::prompt::text(&fix));
            Ok(Outcome::Approved)
        }
        FixSettings::Done { id } => {
            let fix = fixes::queue::change(&store, id, Change::Done, &who(&root))?;
            eprintln!("fix {} is completed: {}", fix.id, fix.description);
            Ok(Outcome::Approved)
        }
        FixSettings::Skip { id, reason } => {
            let reason = crate::secrets::redact(reason, crate::secrets::Context::PROSE).text;
            let fix = fixes::queue::change(&store, id, Change::Skip { reason }, &who(&root))?;
            eprintln!("fix {} is skipped: {}", fix.id, fix.description);
            Ok(Outcome::Approved)
        }
        FixSettings::Run {
            id,
            agent,
            update_branch,
            timeout,
            review,
        } => run_fix(dir, &root, id, agent, *update_branch, *timeout, review),
    }
}

fn list(
    store: &Store,
    task_id: Option<&str>,
    feature: Option<&str>,
    all: bool,
    json: bool,
    colors: Colors,
) -> anyhow::Result<Outcome> {
    let (found, problems) = store.all();
    for problem in &problems {
        eprintln!("error: {problem}");
    }
    let mut shown: Vec<Fix> = found
        .into_iter()
        .map(|(_, fix)| fix)
        .filter(|f| task_id.is_none_or(|id| f.task.as_deref() == Some(id)))
        .filter(|f| feature.is_none_or(|feat| f.feature.as_deref() == Some(feat)))
        .collect();
    let hidden = if all {
        0
    } else {
        let before = shown.len();
        shown.retain(|f| f.status.open());
        before - shown.len()
    };
    shown.sort_by(|a, b| {
        a.priority
            .cmp(&b.priority)
            .then_with(|| a.created_at.cmp(&b.created_at))
            .then_with(|| a.id.cmp(&b.id))
    });
    if json {
        print!("{}", render::fixes::json(&shown));
    } else if shown.is_empty() {
        eprintln!(
            "No {}fixes{}.{}",
            if all { "" } else { "open " },
            task_id
                .map(|id| format!(" for task {id}"))
                .unwrap_or_default(),
            if hidden > 0 {
                format!(" {hidden} completed, skipped or resolved: --all shows them.")
            } else {
                String::new()
            }
        );
    } else {
        print!("{}", render::fixes::list(&shown, &colors.stdout));
        if hidden > 0 {
            eprintln!("{hidden} more completed, skipped or resolved: --all shows them.");
        }
    }
    Ok(if problems.is_empty() {
        Outcome::Approved
    } else {
        Outcome::Error
    })
}

/// A plan rejection is the planner's: no coding agent is handed it.
fn refuse_plan(fix: &Fix, what: &str) -> anyhow::Result<()> {
    if fix.source.coding() {
        return Ok(());
    }
    anyhow::bail!(
        "fix {} is a rejection of {}'s plan, not {what}: the planner re-plans the task ({}); `speed fix done {}` once it is re-planned",
        fix.id,
        fix.owner(),
        fix.finding.headline(),
        fix.id
    )
}

/// Who acts, for a fix's history: the git user, else the login name.
fn who(root: &Path) -> String {
    Repository::open(root)
        .ok()
        .and_then(|repo| repo.user_identity())
        .or_else(|| {
            ["USER", "USERNAME", "LOGNAME"]
                .iter()
                .find_map(|k| std::env::var(k).ok().filter(|v| !v.trim().is_empty()))
        })
        .unwrap_or_else(|| "unknown".to_string())
}

/// The review's stages, for the checks at an agent's commit.
struct Recheck<'a> {
    dir: &'a Path,
    review: &'a ReviewSettings,
}

impl run::Verify for Recheck<'_> {
    fn findings_at(&self, fix: &Fix, commit: &str) -> Result<Vec<crate::checks::Finding>, String> {
        let mut config = self.review.review.clone();
        config.target = match (&fix.task, &fix.defect) {
            (Some(task), _) => Target::Tasks {
                ids: vec![task.clone()],
                feature: fix.feature.clone(),
            },
            (None, Some(name)) => Target::Defect {
                name: name.clone(),
                update_state: false,
            },
            (None, None) => return Err("the fix names no task or defect".to_string()),
        };
        let ctx = Context::open(self.dir, config).map_err(|e| e.to_string())?;
        let plan = review::plan::plan(&ctx).map_err(|e| e.to_string())?;
        let Some(subject) = plan.subjects.into_iter().next() else {
            let why = plan
                .unreadable
                .iter()
                .find_map(|r| r.error.clone())
                .unwrap_or_else(|| format!("{} cannot be found", fix.owner()));
            return Err(why);
        };
        review::recheck::checks_at(&ctx, subject, commit).map_err(|e| e.to_string())
    }
}

fn run_fix(
    dir: &Path,
    root: &Path,
    id: &str,
    agent: &[String],
    update_branch: bool,
    timeout: std::time::Duration,
    review: &ReviewSettings,
) -> anyhow::Result<Outcome> {
    let request = run::Request {
        id: id.to_string(),
        agent: agent.to_vec(),
        update_branch,
        timeout,
        by: who(root),
    };
    let (_, fix) = Store::open(root).find(id)?;
    refuse_plan(&fix, "a run by a coding agent")?;
    eprintln!(
        "Running `{}` on fix {} ({}) in a temporary worktree of {} (time limit {})…",
        agent.join(" "),
        fix.id,
        fix.description,
        fix.branch,
        humantime::format_duration(timeout)
    );
    let verify = Recheck { dir, review };
    let ran = run::run(root, &request, &review.review.checks, &verify)
        .with_context(|| format!("fix {}", fix.id))?;
    let tail: Vec<&str> = ran.agent_output.lines().rev().take(20).collect();
    if !tail.is_empty() && ran.outcome != run::Outcome::Completed {
        eprintln!("The end of the agent's output:");
        for line in tail.iter().rev() {
            eprintln!("  {line}");
        }
    }
    for note in &ran.notes {
        eprintln!("note: {note}");
    }
    let said = match &ran.outcome {
        run::Outcome::Completed => "completed: its check no longer finds it at the agent's commit".to_string(),
        run::Outcome::Unverified => "in progress: the agent committed; no check can look for this finding, the next review decides".to_string(),
        run::Outcome::StillFound => "still pending: its check still finds it at the agent's commit".to_string(),
        run::Outcome::Unchecked(why) => format!("still pending: {why}"),
        run::Outcome::NoCommit(why) | run::Outcome::AgentFailed(why) => format!("still pending: {why}"),
    };
    eprintln!("fix {} is {said}", ran.fix.id);
    if let (Some(commit), Some(kept)) = (&ran.commit, &ran.kept_as) {
        eprintln!("the agent's commit {} is kept as {kept}", short(commit));
        print!("{commit}\n");
    }
    let mut outcome = match ran.fix.status {
        Status::Completed | Status::InProgress => Outcome::Approved,
        _ => Outcome::ChangesRequested,
    };
    match &ran.branch {
        Some(Ok(moved)) => eprintln!("{moved}"),
        Some(Err(why)) => {
            eprintln!("error: {why}");
            if ran.outcome == run::Outcome::Completed || ran.outcome == run::Outcome::Unverified {
                outcome = Outcome::Error;
            }
        }
        None => {}
    }
    Ok(outcome)
}
