//! One `speed spec review`: find the spec, and then either report speed's
//! own checks (`--offline`, or no model), show the prompt (`--dry-run`), or
//! run the session: open it (new, continued, or resumed with a fresh
//! budget; a blocked one refuses to run without `--resume`), review, and
//! on `needs_revision` revise and review again while the budget lasts
//! (`step`). The session is saved after every step, so an interrupted run
//! loses at most the review under way.

use std::path::Path;

use serde_json::json;

use super::checks::{self, Facts};
use super::events::Events;
use super::session::{self, Session, Store};
use super::source::{self, Located, Place};
use super::step::{Loop, command_line};
use super::{Error, Job};
use crate::exit::Outcome;
use crate::git::Repository;
use crate::prompt::{Counter, Templates};
use crate::tasks::Actor;

/// What a run did, for `app` to print.
#[derive(Debug, Clone)]
pub struct Summary {
    pub outcome: Outcome,
    pub feature: String,
    pub spec_path: String,
    pub prd_path: Option<String>,
    /// One line saying how it ended.
    pub headline: String,
    /// speed's checks of the last spec read.
    pub facts: Facts,
    /// The session as saved (or as found, when it refused to run); None
    /// offline and in a dry run.
    pub session: Option<Session>,
    /// `.speed/spec-reviews/<feature>.json`, when a session was shown.
    pub session_path: Option<String>,
    /// The prompt, in a dry run.
    pub dry: Option<Dry>,
    /// Only speed's own checks ran (`--offline`, or no model).
    pub offline: bool,
    /// Remarks for stderr.
    pub notes: Vec<String>,
}

/// The prompt a dry run shows, and its accounting.
#[derive(Debug, Clone)]
pub struct Dry {
    pub prompt: String,
    pub tokens: usize,
    pub budget: usize,
    /// The number the review would have in its session.
    pub iteration: u32,
}

impl Summary {
    fn new(located: &Located) -> Summary {
        Summary {
            outcome: Outcome::Approved,
            feature: located.feature.clone(),
            spec_path: located.spec_path.clone(),
            prd_path: located.prd_path.clone(),
            headline: String::new(),
            facts: Facts::default(),
            session: None,
            session_path: None,
            dry: None,
            offline: false,
            notes: Vec::new(),
        }
    }
}

/// Runs `job` in the repository containing `dir`. `env` reads the API
/// key's variable; `progress` hears each step as it happens, for stderr.
pub fn run(
    dir: &Path,
    job: &Job,
    env: &dyn Fn(&str) -> Option<String>,
    progress: &dyn Fn(&str),
) -> Result<Summary, Error> {
    let repo = Repository::discover(dir)?;
    let root = repo.root().to_path_buf();
    let place = match &job.target.rev {
        Some(rev) => Place::Commit {
            repo: &repo,
            commit: repo.resolve_commit(rev)?,
            rev: rev.clone(),
        },
        None => Place::WorkingTree(&root),
    };
    let located = source::locate(&root, &job.target, &place)?;
    let mut summary = Summary::new(&located);
    if job.offline() {
        summary.offline = true;
        let read = source::read(&located, &place)?;
        summary.facts = checks::run(
            &read.spec,
            read.prd.as_ref(),
            &read.redactions,
            &located.spec_path,
        );
        (summary.outcome, summary.headline) = if summary.facts.blocking() {
            (
                Outcome::ChangesRequested,
                "speed's own checks found what needs revision (no model was asked)".to_string(),
            )
        } else {
            (
                Outcome::Approved,
                "speed's own checks found nothing blocking; no model was asked, so the spec is not passed"
                    .to_string(),
            )
        };
        return Ok(summary);
    }
    let templates = Templates::from_overrides(&job.prompts)?;
    let counter = Counter::new(&job.tokenizer)?;
    let store = Store::open(&root);
    if job.dry_run {
        return dry_run(job, &located, &place, &store, &templates, &counter, summary);
    }
    let provider = crate::llm::provider(&job.llm, env)?;
    let _lock = store.lock(&located.feature)?;
    let config = serde_json::to_value(&job.config).unwrap_or_default();
    let (mut session, started) = match open(&store, &located, job, config, &mut summary)? {
        Some(opened) => opened,
        None => return Ok(summary),
    };
    let events = Events::new(&root, located.layout, actor(&repo, job), &located.feature);
    summary.notes.push(format!(
        "session: {}; events: {}/",
        Store::relative_path(&located.feature),
        events.folder()
    ));
    if started {
        let data = json!({
            "feature": located.feature,
            "prd_path": located.prd_path.clone().unwrap_or_default(),
            "specs_path": located.spec_path,
            "resumed": session.budget_starts_at > 1,
        });
        if let Err(err) = events.emit("spec.review.started", data) {
            summary.notes.push(format!("warning: {err}"));
        }
    }
    let mut run = Loop {
        job,
        located: &located,
        place: &place,
        root: &root,
        store: &store,
        events: &events,
        templates: &templates,
        counter: &counter,
        provider: provider.as_ref(),
        progress,
        notes: Vec::new(),
        facts: Facts::default(),
    };
    let stop = run.until_stop(&mut session);
    summary.notes.extend(std::mem::take(&mut run.notes));
    summary.facts = std::mem::take(&mut run.facts);
    let stop = stop?;
    summary.outcome = stop.outcome;
    summary.headline = stop.headline;
    summary.session_path = Some(Store::relative_path(&located.feature));
    summary.session = Some(session);
    Ok(summary)
}

/// The session this run continues, and whether it starts (new, or
/// resumed) rather than goes on. None when it must not run: a blocked
/// session without `--resume` (the summary says so).
fn open(
    store: &Store,
    located: &Located,
    job: &Job,
    config: serde_json::Value,
    summary: &mut Summary,
) -> Result<Option<(Session, bool)>, Error> {
    let feature = &located.feature;
    let prd = located.prd_path.clone().unwrap_or_default();
    let fresh = || Session::new(feature, &prd, &located.spec_path, config.clone());
    let command = command_line(job, located);
    let (mut session, started) = match (store.load(feature)?, job.resume) {
        (None, true) => {
            return Err(Error::Input(format!(
                "there is no spec review session of {feature} to resume: run `{command}`"
            )));
        }
        (None, false) => (fresh(), true),
        (Some(mut s), true) if s.blocked() => {
            summary.notes.push(format!(
                "resuming the session of {feature} with a fresh budget of {} reviews; it was blocked: {}",
                job.config.max_iterations, s.block_reason
            ));
            if s.last_spec_hash() == source_hash(store, located).as_deref() {
                summary.notes.push(
                    "warning: the spec is unchanged since the review that blocked the session"
                        .to_string(),
                );
            }
            s.resume();
            (s, true)
        }
        (Some(s), true) => {
            let state = if s.final_verdict == session::PASS {
                "it passed"
            } else {
                "it is still open"
            };
            return Err(Error::Input(format!(
                "the spec review session of {feature} is not blocked ({state}): run `{command}` without --resume"
            )));
        }
        (Some(s), false) if s.blocked() => {
            summary.outcome = Outcome::Blocked;
            summary.headline = format!(
                "the spec review session of {feature} is blocked: {}; a person must act (then `{command} --resume`)",
                s.block_reason
            );
            summary
                .notes
                .extend(s.recovery_actions.iter().map(|a| format!("to do: {a}")));
            summary.session_path = Some(Store::relative_path(feature));
            summary.session = Some(s);
            return Ok(None);
        }
        (Some(s), false) if s.open() && s.specs_path == located.spec_path && s.prd_path == prd => {
            (s, false)
        }
        (Some(s), false) => {
            summary.notes.push(format!(
                "a new session replaces the previous one of {feature} ({})",
                if s.final_verdict == session::PASS {
                    "it passed"
                } else {
                    "it named another spec or PRD"
                }
            ));
            (fresh(), true)
        }
    };
    session.prd_path = prd;
    session.specs_path = located.spec_path.clone();
    session.config = config;
    Ok(Some((session, started)))
}

/// The hash of the spec in the working tree now, when it can be read.
fn source_hash(store: &Store, located: &Located) -> Option<String> {
    let bytes = std::fs::read(store.root().join(&located.spec_path)).ok()?;
    Some(crate::digest::sha256(&bytes))
}

/// Builds the prompt the next review would send, without writing anything.
fn dry_run(
    job: &Job,
    located: &Located,
    place: &Place<'_>,
    store: &Store,
    templates: &Templates,
    counter: &Counter,
    mut summary: Summary,
) -> Result<Summary, Error> {
    let session = store.load(&located.feature)?;
    let (iteration, in_budget, previous) = match &session {
        Some(s) if s.open() => (
            s.last_iteration() + 1,
            s.reviews_in_budget() + 1,
            s.previous_feedback(),
        ),
        Some(s) if s.blocked() && job.resume => (s.last_iteration() + 1, 1, s.previous_feedback()),
        _ => (1, 1, Vec::new()),
    };
    let read = source::read(located, place)?;
    summary.facts = checks::run(
        &read.spec,
        read.prd.as_ref(),
        &read.redactions,
        &located.spec_path,
    );
    let prompt = super::step::prompt(
        job,
        located,
        templates,
        &read,
        &summary.facts,
        (in_budget, job.config.max_iterations),
        &previous,
    );
    let tokens = counter.count(&prompt);
    super::step::within_budget(tokens, job.budget)?;
    summary.headline = format!(
        "dry run: review {iteration} of the session would send this prompt; nothing was asked or written"
    );
    summary.dry = Some(Dry {
        prompt,
        tokens,
        budget: job.budget,
        iteration,
    });
    Ok(summary)
}

/// How the events and the session name who ran the review.
fn actor(repo: &Repository, job: &Job) -> Actor {
    let (git_name, git_email) = repo.user();
    let login = || {
        ["USER", "USERNAME"]
            .iter()
            .find_map(|key| std::env::var(key).ok().filter(|v| !v.trim().is_empty()))
    };
    let name = job
        .actor
        .clone()
        .or(git_name)
        .or_else(login)
        .unwrap_or_default();
    Actor::new(&name, git_email.as_deref())
}
