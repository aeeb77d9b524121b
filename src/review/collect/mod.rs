//! `speed review --collect [ID]`: the reviews of a submitted batch,
//! finished. The batch is polled (backing off) until it ends or the wait
//! runs out; its state is kept then, for the next call. An ended batch's
//! results are matched to its requests by `custom_id`, in any order, and
//! each review is run again by `run::review` with a model that answers its
//! first questions from the batch (`answering`): prepared from git objects
//! as at submission, checked, decided and recorded as a synchronous review
//! is, with one path to every decision.
//!
//! Corrective retries and the guardian of a collected review are asked
//! directly (synchronously): the decision needs them now, and a follow-up
//! batch could add a day per step. A request that errored or expired, or
//! has no result (a partial results file), is asked directly too. A review
//! whose branch moved since submission is not written: it is skipped with
//! why, and the next review takes the new head. A result for a `custom_id`
//! the batch did not send is ignored with a notice.

mod answering;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::defects;
use crate::git::{Repository, short};
use crate::ledger::batches::{self, Batch, Pending};
use crate::ledger::{self, Report};
use crate::llm::batch::{self as provider, Answer, Api, Ended, Progress, Results};
use crate::tasks;
use crate::work::{self, DefectReview, Subject};

use super::Events;
use super::ask::{Models, Pacer};
use super::context::{Context, ProviderBatch};
use super::plan::Skipped;

pub use answering::Answering;

/// Results for custom_ids a batch did not send, named one by one; the
/// rest are counted.
const MAX_UNKNOWN_NOTICES: usize = 10;

/// Polls back off from the configured retry step to this.
const MAX_POLL_INTERVAL: Duration = Duration::from_secs(30);

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("batch {id}: {source}")]
    Provider {
        id: String,
        source: crate::llm::Error,
    },
    #[error(
        "no batch to collect: {} holds no batch state in this checkout. In CI each job starts from a fresh checkout: carry .speed/cache/batches/ from the job that submitted (upload it as an artifact there, download it here) and collect again",
        dir.display()
    )]
    NoBatchState { dir: std::path::PathBuf },
    #[error(transparent)]
    Ledger(#[from] ledger::Error),
    #[error(transparent)]
    Review(#[from] super::Error),
    #[error(
        "batch {id} was submitted to {provider} model {model}; the configuration now names {now}: collect it with the provider and model it was submitted to"
    )]
    Mismatch {
        id: String,
        provider: String,
        model: String,
        now: String,
    },
    #[error(
        "batch {id} was prepared from main branch {main:?}; this run reads {now:?}: collect it with --base {main}"
    )]
    OtherMain {
        id: String,
        main: String,
        now: String,
    },
}

impl Error {
    pub fn outcome(&self) -> crate::exit::Outcome {
        match self {
            Error::Provider { source, .. }
                if source.kind() == crate::llm::ErrorKind::Unreachable =>
            {
                crate::exit::Outcome::ModelUnreachable
            }
            _ => crate::exit::Outcome::Error,
        }
    }
}

/// What collecting did.
#[derive(Default)]
pub struct Collected {
    /// The reviews finished, as recorded.
    pub reports: Vec<Report>,
    /// Reviews not written, and why (a branch that moved).
    pub skipped: Vec<Skipped>,
    /// What the user should know: results ignored, requests asked directly.
    pub notices: Vec<String>,
    /// Batches that could not be collected (a state file speed cannot
    /// read, a batch of another provider or model): left as they are, and
    /// an error, for their reviews are not finished.
    pub problems: Vec<String>,
    /// Batches still at work when the wait ran out: kept for the next call.
    pub waiting: Vec<Waiting>,
    /// The batches whose every review is finished (their state is gone).
    pub finished: Vec<String>,
}

/// A batch still at work.
#[derive(Debug, Clone)]
pub struct Waiting {
    pub id: String,
    pub provider: String,
    pub status: String,
    pub counts: String,
    pub reviews: usize,
}

/// Collect the batch `--collect` names, or every waiting batch.
pub fn collect(
    ctx: &Context,
    models: &Models,
    pacer: &Pacer,
    events: &dyn Events,
    api: &dyn Api,
    on_report: &mut dyn FnMut(&Report),
) -> Result<Collected, Error> {
    let (id, wait, ci) = match &ctx.config.provider_batch {
        ProviderBatch::Collect { id, wait, ci } => (id.clone(), *wait, *ci),
        _ => (None, Duration::ZERO, false),
    };
    let mut collected = Collected::default();
    let mut batches = match &id {
        Some(id) => {
            let batch = batches::load(&ctx.root, id)?;
            same_model(&batch, api)?;
            same_main(&batch, ctx)?;
            vec![batch]
        }
        None => {
            let (all, broken) = batches::list(&ctx.root)?;
            if ci && all.is_empty() && broken.is_empty() {
                return Err(Error::NoBatchState {
                    dir: ctx.root.join(batches::DIR),
                });
            }
            collected
                .problems
                .extend(broken.iter().map(|e| format!("not collected: {e}")));
            let mut usable = Vec::new();
            for batch in all {
                match same_model(&batch, api).and_then(|()| same_main(&batch, ctx)) {
                    Ok(()) => usable.push(batch),
                    Err(err) => collected.problems.push(format!("not collected: {err}")),
                }
            }
            usable
        }
    };
    let ended = poll(api, &mut batches, wait, ctx.config.llm.retry_base);
    for (mut batch, polled) in batches.into_iter().zip(ended) {
        let ended = match polled {
            Polled::Ended(ended) => ended,
            Polled::Failed(err) if id.is_none() => {
                // One batch the provider cannot answer for does not keep
                // the others from being collected; its state stays.
                collected.problems.push(unanswered(&batch, &err));
                continue;
            }
            Polled::Failed(err) => return Err(err),
            Polled::Running(counts) => {
                batch.polled_at = Some(ledger::now_rfc3339());
                batches::save(&ctx.root, &batch)?;
                collected.waiting.push(Waiting {
                    id: batch.id.clone(),
                    provider: batch.provider.clone(),
                    status: batch.status.clone(),
                    counts,
                    reviews: batch.reviews.len(),
                });
                continue;
            }
        };
        let results = match &ended.failure {
            // A failed batch answered nothing: every request is asked directly.
            Some(_) => Results::default(),
            None => match api.results(
                &batch.id,
                &ended,
                batch.reviews.iter().map(|r| r.requests.len()).sum(),
            ) {
                Ok(results) => results,
                Err(source) => {
                    let err = Error::Provider {
                        id: batch.id.clone(),
                        source,
                    };
                    if id.is_some() {
                        return Err(err);
                    }
                    collected.problems.push(unanswered(&batch, &err));
                    continue;
                }
            },
        };
        finish(
            ctx,
            models,
            pacer,
            events,
            batch,
            &ended,
            results,
            on_report,
            &mut collected,
        )?;
    }
    Ok(collected)
}

/// Why a batch was not collected, and what to do when the provider no
/// longer knows it.
fn unanswered(batch: &Batch, err: &Error) -> String {
    let gone = matches!(err, Error::Provider { source, .. }
        if source.kind() == crate::llm::ErrorKind::Config);
    let hint = if gone {
        format!(
            "; if the provider no longer has it, remove {} (its reviews were never finished)",
            std::path::Path::new(batches::DIR)
                .join(format!("{}.json", batch.id))
                .display()
        )
    } else {
        String::new()
    };
    format!("not collected: {err}{hint}")
}

/// A batch is collected with the provider and model it was submitted to.
fn same_model(batch: &Batch, api: &dyn Api) -> Result<(), Error> {
    if batch.provider == api.provider().as_str() && batch.model == api.model() {
        return Ok(());
    }
    Err(Error::Mismatch {
        id: batch.id.clone(),
        provider: batch.provider.clone(),
        model: batch.model.clone(),
        now: format!("{} model {}", api.provider().as_str(), api.model()),
    })
}

/// A batch is collected from the main branch it was prepared from.
fn same_main(batch: &Batch, ctx: &Context) -> Result<(), Error> {
    match &batch.main {
        Some(main) if *main != ctx.main().name => Err(Error::OtherMain {
            id: batch.id.clone(),
            main: main.clone(),
            now: ctx.main().name.clone(),
        }),
        _ => Ok(()),
    }
}

/// Where a batch stood at the end of the polling.
enum Polled {
    Ended(Ended),
    /// Still at work, with the provider's counts.
    Running(String),
    /// The provider did not answer for it; not polled again.
    Failed(Error),
}

/// Polls every batch until each has ended (or failed to answer) or `wait`
/// has passed, backing off from `step`; a running batch's status is
/// updated in place.
fn poll(api: &dyn Api, batches: &mut [Batch], wait: Duration, step: Duration) -> Vec<Polled> {
    let deadline = Instant::now() + wait;
    let mut interval = step.max(Duration::from_millis(10));
    let mut polled: Vec<Polled> = batches
        .iter()
        .map(|_| Polled::Running(String::new()))
        .collect();
    loop {
        for (n, batch) in batches.iter_mut().enumerate() {
            if !matches!(polled[n], Polled::Running(_)) {
                continue;
            }
            polled[n] = match api.poll(&batch.id) {
                Ok(Progress::Running { status, counts }) => {
                    batch.status = status;
                    Polled::Running(counts)
                }
                Ok(Progress::Ended(end)) => {
                    batch.status = end.status.clone();
                    Polled::Ended(end)
                }
                Err(source) => Polled::Failed(Error::Provider {
                    id: batch.id.clone(),
                    source,
                }),
            };
        }
        let now = Instant::now();
        let settled = !polled.iter().any(|p| matches!(p, Polled::Running(_)));
        if settled || now >= deadline || crate::interrupt::requested() {
            return polled;
        }
        sleep((deadline - now).min(interval));
        interval = (interval * 2).min(MAX_POLL_INTERVAL);
    }
}

/// A sleep that ends early when speed is asked to stop.
fn sleep(total: Duration) {
    let until = Instant::now() + total;
    while !crate::interrupt::requested() {
        let now = Instant::now();
        if now >= until {
            break;
        }
        std::thread::sleep((until - now).min(Duration::from_millis(100)));
    }
}

/// The reviews of an ended batch, finished: each one whose branch is where
/// it was is run with the batch's answers; the state keeps only what is
/// left (nothing, unless speed was stopped).
#[allow(clippy::too_many_arguments)]
fn finish(
    ctx: &Context,
    models: &Models,
    pacer: &Pacer,
    events: &dyn Events,
    batch: Batch,
    ended: &Ended,
    results: Results,
    on_report: &mut dyn FnMut(&Report),
    collected: &mut Collected,
) -> Result<(), Error> {
    let label = format!("{} batch {}", batch.provider, batch.id);
    collected
        .notices
        .extend(results.notices.iter().map(|n| format!("{label}: {n}")));
    if let Some(failure) = &ended.failure {
        collected.notices.push(format!(
            "{label}: {failure}; its requests are asked directly"
        ));
    }
    let sent: HashMap<&str, ()> = batch
        .reviews
        .iter()
        .flat_map(|r| r.requests.iter().map(|s| (s.custom_id.as_str(), ())))
        .collect();
    let mut unknown: Vec<&String> = results
        .answers
        .keys()
        .filter(|id| !sent.contains_key(id.as_str()))
        .collect();
    unknown.sort();
    for id in unknown.iter().take(MAX_UNKNOWN_NOTICES) {
        collected.notices.push(format!(
            "{label}: a result for custom_id {} that this batch did not send was ignored",
            provider::shown(id)
        ));
    }
    if unknown.len() > MAX_UNKNOWN_NOTICES {
        collected.notices.push(format!(
            "{label}: {} more results for custom_ids this batch did not send were ignored",
            unknown.len() - MAX_UNKNOWN_NOTICES
        ));
    }

    let repo = Repository::open(&ctx.root).map_err(super::Error::from)?;
    let mut answers = HashMap::new();
    let mut subjects = Vec::new();
    let mut running = Vec::new();
    for review in &batch.reviews {
        let subject = match current(ctx, &repo, &batch, review) {
            Ok(subject) => subject,
            Err(skipped) => {
                collected.skipped.push(*skipped);
                continue;
            }
        };
        for sent in &review.requests {
            let answer = match results.answers.get(&sent.custom_id) {
                Some(answer) => answer.clone(),
                None if ended.failure.is_some() => {
                    Answer::Unanswered("the batch failed".to_string())
                }
                None => Answer::Unanswered("no result in the batch's results".to_string()),
            };
            if let Answer::Unanswered(why) = &answer {
                collected.notices.push(format!(
                    "{}{}: the batch's request {} ({why}): asked directly",
                    review.label(),
                    part_label(sent.part, sent.parts),
                    sent.custom_id
                ));
            }
            answers.insert(sent.prompt.clone(), answer);
        }
        subjects.push(subject);
        running.push(review.clone());
    }

    let done = if subjects.is_empty() {
        Vec::new()
    } else {
        // As submitted: the same inputs give the same prompts, and a
        // guardian turned off for the batch stays off.
        let mut config = ctx.config.clone();
        config.incremental = batch.incremental;
        config.budget = batch.budget.unwrap_or(config.budget);
        config.spec_args = batch.specs.clone();
        if let Some(reason) = &batch.guardian_off {
            config.guardian.enabled = false;
            config.guardian.skip_reason = Some(reason.clone());
        }
        config.report_notices.push(format!(
            "The model's answers came from {label}, submitted at {}; a corrective retry, the guardian and any request the batch did not answer were asked directly.",
            batch.submitted_at
        ));
        let batch_ctx = Context::open(&ctx.root, config)?;
        let models = Models {
            review: Arc::new(Answering::new(models.review.clone(), &batch.id, answers)),
            guardian: models.guardian.clone(),
        };
        let mut done = Vec::new();
        let mut seen = |report: &Report| {
            done.push(work_key_of_report(report));
            on_report(report);
        };
        let reports = super::batch::run(
            &batch_ctx,
            &models,
            pacer,
            events,
            subjects,
            ctx.config.concurrency,
            &mut seen,
        );
        collected.reports.extend(reports);
        done
    };
    // What a stop left unfinished waits for the next call.
    let left: Vec<Pending> = running
        .into_iter()
        .filter(|review| !done.contains(&work_key(review)))
        .collect();
    if left.is_empty() {
        batches::remove(&ctx.root, &batch.id)?;
        collected.finished.push(batch.id);
    } else {
        let mut kept = batch;
        kept.reviews = left;
        batches::save(&ctx.root, &kept)?;
    }
    Ok(())
}

/// The subject of a waiting review as it is now; skipped (not written)
/// when it is gone or its branch moved since the batch was submitted.
fn current(
    ctx: &Context,
    repo: &Repository,
    batch: &Batch,
    review: &Pending,
) -> Result<Subject, Box<Skipped>> {
    let skipped = |reason: String| {
        Box::new(Skipped {
            task_id: review.task.clone(),
            defect: review.defect.clone(),
            feature: review.feature.clone(),
            reason,
            awaiting_human: false,
            merged: false,
            branch_missing: None,
        })
    };
    let subject = match (&review.task, &review.defect) {
        (Some(id), _) => tasks::Store::open(&ctx.root)
            .find(id, review.feature.as_deref())
            .map(|task| Subject::Task(Box::new(task)))
            .map_err(|e| e.to_string()),
        (None, Some(name)) => defects::Store::open(&ctx.root)
            .find(name)
            .map(|d| Subject::Defect(Box::new(DefectReview::new(d, review.update_state))))
            .map_err(|e| e.to_string()),
        (None, None) => Err("it names no task or defect".to_string()),
    };
    let subject = subject.map_err(|why| {
        skipped(format!(
            "batch {}'s answer was not written: {why}",
            batch.id
        ))
    })?;
    let head = work::resolve(repo, ctx.main(), &subject)
        .map(|resolved| resolved.diff.head_commit)
        .map_err(|why| {
            skipped(format!(
                "batch {}'s answer was not written: {why}",
                batch.id
            ))
        })?;
    if head != review.head_commit {
        return Err(skipped(format!(
            "its branch moved since batch {} was submitted ({} → {}): the batch's answer was not written; `speed review` reviews the new head",
            batch.id,
            short(&review.head_commit),
            short(&head)
        )));
    }
    Ok(subject)
}

fn part_label(part: usize, parts: usize) -> String {
    match parts {
        0 | 1 => String::new(),
        _ => format!(" part {part} of {parts}"),
    }
}

/// Reviews and reports are matched by what they are about.
fn work_key(review: &Pending) -> (Option<String>, Option<String>, Option<String>) {
    (
        review.task.clone(),
        review.task.as_ref().and(review.feature.clone()),
        review.defect.clone(),
    )
}

fn work_key_of_report(report: &Report) -> (Option<String>, Option<String>, Option<String>) {
    (
        report.task_id.clone(),
        report.task_id.as_ref().and(report.feature.clone()),
        report.defect.as_ref().map(|d| d.name.clone()),
    )
}
