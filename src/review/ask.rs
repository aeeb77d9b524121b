//! Asking the models: the review's question (each part of a review in
//! parts, side by side), and after an approval the guardian's. Every call, its raw answer
//! and what the safety net replaced in it go into the evidence; a call that
//! fails says why and with which exit outcome. Nothing here decides: the
//! answers go to `decide`.

mod model;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use crate::exit::Outcome;
use crate::ledger::report::{Evidence, GuardianOutcome, PartOutcome, Reconcile};
use crate::llm::{self, Provider};
use crate::verdict::{self, GuardianVerdict, Verdict};

use super::context::Context;
use super::prepare::Prepared;
use super::{Event, Events};

pub use model::{Failure, Pacer, stable_prefix};

/// The providers a run uses: the review's and the guardian's (the same one
/// unless `guardian.model` names another model).
#[derive(Clone)]
pub struct Models {
    pub review: Arc<dyn Provider>,
    pub guardian: Arc<dyn Provider>,
}

impl Models {
    /// The providers `config` names; an offline configuration builds the
    /// provider that is never asked. `env` reads the API key's variable.
    pub fn build(
        config: &llm::Config,
        guardian_model: Option<&str>,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Models, llm::Error> {
        let review: Arc<dyn Provider> = Arc::from(llm::provider(config, env)?);
        let guardian = match guardian_model {
            Some(model) if !config.offline() && Some(model) != config.model.as_deref() => {
                let mut config = config.clone();
                config.model = Some(model.to_string());
                Arc::from(llm::provider(&config, env)?)
            }
            _ => review.clone(),
        };
        Ok(Models { review, guardian })
    }
}

/// What the parts of a review answered.
pub struct Answers {
    /// The parts' verdicts merged into one; or, when a part failed, its
    /// failure (the most severe of them) naming which part and why.
    pub merged: Result<Verdict, Failure>,
    /// Part by part, for a review in parts; empty for one prompt.
    pub parts: Vec<PartOutcome>,
    /// The reconcile turn of a review in one prompt (a review in parts
    /// keeps each part's in `parts`).
    pub reconcile: Option<Reconcile>,
}

impl Answers {
    /// Whether a reconcile turn asked a request for changes that named
    /// nothing what must change.
    pub fn asked_for_a_reason(&self) -> bool {
        self.reconcile
            .iter()
            .chain(self.parts.iter().filter_map(|p| p.reconcile.as_ref()))
            .any(|r| r.reason == verdict::reconcile::Reason::NothingBlocking)
    }
}

/// Ask for the review's verdict: one question per part, asked side by
/// side (at most `review.concurrency` at once, and every model call of the
/// run within the same number: `Context::calls`), the answers merged into
/// one. A part that fails does not stop the others: the review fails with
/// its outcome, and the answers of the parts that succeeded are kept.
pub fn review(
    ctx: &Context,
    models: &Models,
    pacer: &Pacer,
    events: &dyn Events,
    prepared: &Prepared,
    evidence: &mut Evidence,
) -> Answers {
    let label = prepared.subject.label();
    let asked = super::compose::dimensions(ctx, &prepared.sources);
    let schema = review_schema(ctx, prepared);
    let names = verdict::dimensions::names(&asked);
    let previous: Vec<&str> = prepared
        .previous
        .as_ref()
        .map(|r| r.ids())
        .unwrap_or_default();
    let expect = verdict::Expect {
        defect: prepared.subject.defect().is_some(),
        dimensions: &names,
        previous: &previous,
    };
    let parse = |raw: &str| -> Result<Verdict, model::Rejection> {
        verdict::parse_expecting(raw, &expect).map_err(|e| model::rejection(&e))
    };
    let prompts = &prepared.composed.prompts;
    let count = prompts.len();
    let mut shown = prepared.composed.shown.clone().into_iter();
    let ask = |n: usize| {
        let prompt = &prompts[n];
        // Parts run at once: each is its own line of progress.
        let label = match count {
            1 => label.clone(),
            _ => format!("{label} part {}/{count}", n + 1),
        };
        let question = model::Question {
            stage: "review",
            part: (count > 1).then_some((n + 1, count)),
            label: &label,
            prompt: &prompt.text,
            reserve_tokens: prompt.total_tokens as u64
                + u64::from(ctx.config.llm.max_output_tokens),
            schema: schema.clone(),
            parse: &parse,
            slots: &ctx.calls,
            cache_prefix: Some(prompt.stable_prefix).filter(|n| *n > 0),
            counter: ctx.counter.get().ok(),
        };
        let asked = model::ask(models.review.as_ref(), &question, pacer, events);
        reconcile(ctx, prepared, models, &question, asked, pacer, events)
    };
    let asked = side_by_side(count, ctx.config.concurrency, &ask);
    let mut verdicts = Vec::with_capacity(count);
    let mut failed: Vec<(usize, Failure)> = Vec::new();
    let mut parts = Vec::new();
    for (n, (asked, turn)) in asked.into_iter().enumerate() {
        // In part order, whatever order they finished in.
        evidence.calls.extend(asked.calls);
        evidence.leaks.extend(asked.leaks);
        let prompt = &prompts[n];
        let mut outcome = PartOutcome {
            index: n + 1,
            tokens: prompt.total_tokens,
            files: prompt.files_shown,
            status: "answered".to_string(),
            error: None,
            review: None,
            reconcile: turn,
            shown: shown.next().unwrap_or_default(),
        };
        match asked.result {
            Ok(verdict) => {
                outcome.review = Some(verdict.clone());
                verdicts.push(verdict);
            }
            Err(failure) => {
                outcome.status = "failed".to_string();
                outcome.error = Some(failure.message.clone());
                failed.push((n + 1, failure));
            }
        }
        parts.push(outcome);
    }
    let mut reconcile = None;
    if count == 1 {
        reconcile = parts.pop().and_then(|p| p.reconcile);
        parts.clear();
    }
    let merged = if failed.is_empty() {
        Ok(verdict::merge(verdicts))
    } else {
        Err(part_failure(count, &failed))
    };
    Answers {
        merged,
        parts,
        reconcile,
    }
}

/// The reconcile turn of one question, when its answer contradicts itself
/// (`verdict::reconcile`) and `review.reconcile` is on: the model is asked
/// once more in the same conversation, and its second answer replaces the
/// first. A second answer that cannot be used (invalid, or the call
/// failed) leaves the first one to decide; either way the turn is
/// recorded and its call counted with the others.
fn reconcile(
    ctx: &Context,
    prepared: &Prepared,
    models: &Models,
    question: &model::Question<'_, Verdict>,
    asked: model::Asked<Verdict>,
    pacer: &Pacer,
    events: &dyn Events,
) -> (model::Asked<Verdict>, Option<Reconcile>) {
    if !ctx.config.reconcile {
        return (asked, None);
    }
    let Ok(first) = &asked.result else {
        return (asked, None);
    };
    let dimensions = super::compose::dimensions(ctx, &prepared.sources);
    let checks_block = prepared.facts.checks.iter().any(|f| f.blocking());
    let Some(turn) = verdict::reconcile::turn(
        first,
        &dimensions,
        ctx.config.scoring.pass_score,
        checks_block,
    ) else {
        return (asked, None);
    };
    events.event(Event::Reconciling {
        label: question.label.to_string(),
        what: question.stage,
        reason: turn.summary.clone(),
    });
    let second = model::follow_up(
        models.review.as_ref(),
        question,
        &asked.conversation,
        &turn.text,
        "reconcile",
        pacer,
        events,
    );
    let mut record = Reconcile {
        reason: turn.reason,
        first_verdict: first.verdict,
        first_scores: turn.first_scores,
        first_overall: turn.first_overall,
        turn: turn.text,
        verdict: None,
        error: None,
    };
    let model::Asked {
        result: first,
        mut calls,
        mut leaks,
        conversation,
    } = asked;
    calls.extend(second.calls);
    leaks.extend(second.leaks);
    let (result, conversation) = match second.result {
        Ok(answer) => {
            record.verdict = Some(answer.verdict);
            (Ok(answer), second.conversation)
        }
        Err(failure) => {
            record.error = Some(format!("{}; the first answer decided", failure.message));
            (first, conversation)
        }
    };
    let asked = model::Asked {
        result,
        calls,
        leaks,
        conversation,
    };
    (asked, Some(record))
}

/// `ask(n)` for each of `count` parts, at most `workers` at once; the
/// results in part order.
fn side_by_side<T: Send>(
    count: usize,
    workers: usize,
    ask: &(dyn Fn(usize) -> T + Sync),
) -> Vec<T> {
    if count <= 1 || workers <= 1 {
        return (0..count).map(ask).collect();
    }
    let next = AtomicUsize::new(0);
    let done: Mutex<Vec<Option<T>>> = Mutex::new((0..count).map(|_| None).collect());
    std::thread::scope(|scope| {
        for _ in 0..workers.min(count) {
            scope.spawn(|| {
                loop {
                    let n = next.fetch_add(1, Ordering::SeqCst);
                    if n >= count {
                        break;
                    }
                    let result = ask(n);
                    done.lock().unwrap_or_else(PoisonError::into_inner)[n] = Some(result);
                }
            });
        }
    });
    done.into_inner()
        .unwrap_or_else(PoisonError::into_inner)
        .into_iter()
        .map(|r| r.expect("every part is asked: the workers take every index below count"))
        .collect()
}

/// The failure of a review whose parts did not all answer: the most severe
/// outcome, each failed part named with why, and where the others' answers
/// are.
fn part_failure(count: usize, failed: &[(usize, Failure)]) -> Failure {
    let outcome = failed
        .iter()
        .map(|(_, f)| f.outcome)
        .fold(Outcome::Approved, Outcome::worst);
    let mut message = failed
        .iter()
        .map(|(n, f)| match count {
            1 => f.message.clone(),
            _ => format!("part {n} of {count}: {}", f.message),
        })
        .collect::<Vec<_>>()
        .join("; ");
    let answered = count - failed.len();
    if count > 1 && answered > 0 {
        message.push_str(&format!(
            " ({answered} of {count} parts answered; their answers are kept in the report's parts)"
        ));
    }
    Failure { outcome, message }
}

/// The JSON schema a review's questions carry when structured output is
/// on; `submit` sends a batch the same.
pub fn review_schema(ctx: &Context, prepared: &Prepared) -> Option<(String, serde_json::Value)> {
    let asked = super::compose::dimensions(ctx, &prepared.sources);
    let kind = prepared.composed.parts.kind;
    ctx.config.llm.structured_output.then(|| {
        (
            "verdict".to_string(),
            super::compose::verdict_schema(kind, &asked),
        )
    })
}

/// What the guardian said of an approval.
pub enum Guardian {
    /// aligned, flagged, or skipped: the approval stands.
    Confirmed(GuardianOutcome),
    /// rejected: the approval becomes request_changes with this feedback.
    Rejected(GuardianOutcome, String),
    /// The guardian could not answer: the approval is not confirmed.
    Unavailable(GuardianOutcome, Failure),
}

/// The guardian gate: a second model call sees the product vision, the
/// spec sections the review used, the task and the diff, and may turn the
/// approval into request_changes. A guardian that cannot answer does not
/// confirm the approval.
pub fn guardian(
    ctx: &Context,
    models: &Models,
    pacer: &Pacer,
    events: &dyn Events,
    prepared: &Prepared,
    evidence: &mut Evidence,
) -> Guardian {
    if let Some(reason) = &ctx.config.guardian.skip_reason {
        return Guardian::Confirmed(GuardianOutcome::skipped(reason));
    }
    // Without the vision it judges against, the guardian is not asked (the
    // report's notice says so); a defect fix's scope check needs none.
    if let (Some(path), false) = (
        &prepared.sources.vision_missing,
        matches!(prepared.subject, crate::work::Subject::Defect(_)),
    ) {
        return Guardian::Confirmed(GuardianOutcome::skipped(&format!(
            "no product vision: {path} does not exist on {}",
            ctx.main().name
        )));
    }
    let provider = models.guardian.as_ref();
    let unavailable = |failure: Failure| {
        let mut outcome = GuardianOutcome::not_run(&failure.message);
        outcome.status = "unavailable".to_string();
        outcome.model = Some(provider.model().to_string());
        Guardian::Unavailable(outcome, failure)
    };
    let built = super::compose::guardian_prompt(
        ctx,
        &prepared.subject,
        &prepared.resolved.diff,
        &prepared.sources,
        &prepared.facts,
        &prepared.composed,
    );
    let mut prompt = match built {
        Ok(prompt) => prompt,
        Err(err) => {
            return unavailable(Failure {
                outcome: Outcome::Error,
                message: format!("the guardian prompt could not be built: {err}"),
            });
        }
    };
    evidence.leaks.extend(crate::secrets::net::redact_in_place(
        &mut prompt.text,
        "the guardian prompt",
    ));
    evidence.guardian_prompt = Some(prompt.text.clone());
    // What the guardian saw, reported like the review's coverage.
    let coverage = crate::prompt::coverage(&prepared.resolved.diff, prompt.rest.as_ref());
    let label = prepared.subject.label();
    let schema = ctx
        .config
        .llm
        .structured_output
        .then(|| ("guardian".to_string(), verdict::guardian_json_schema()));
    let parse = |raw: &str| -> Result<GuardianVerdict, model::Rejection> {
        verdict::parse_guardian(raw).map_err(|e| model::rejection(&e))
    };
    let asked = model::ask(
        provider,
        &model::Question {
            stage: "guardian",
            part: None,
            label: &label,
            prompt: &prompt.text,
            reserve_tokens: prompt.total_tokens as u64
                + u64::from(ctx.config.llm.max_output_tokens),
            schema,
            parse: &parse,
            slots: &ctx.calls,
            cache_prefix: None,
            counter: ctx.counter.get().ok(),
        },
        pacer,
        events,
    );
    evidence.calls.extend(asked.calls);
    evidence.leaks.extend(asked.leaks);
    match asked.result {
        Err(failure) => unavailable(failure),
        Ok(answer) => {
            let mut outcome = GuardianOutcome::from_verdict(&answer, provider.model());
            outcome.coverage = Some(coverage);
            if answer.status == verdict::GuardianStatus::Rejected {
                Guardian::Rejected(outcome, verdict::guardian_feedback(&answer))
            } else {
                Guardian::Confirmed(outcome)
            }
        }
    }
}
