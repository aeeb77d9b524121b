//! One review from start to finish, as its stages: take its lock and read
//! the task again under it, read its inputs (resolve, sources), prepare
//! (facts, compose), ask the model, ask the guardian after an approval,
//! decide once, record.
//! Always returns a `Report`; a review that could not be completed carries
//! its error and the outcome that explains it, and has changed no task
//! file.

use std::time::Instant;

use crate::exit::Outcome;
use crate::ledger::report::{Coverage, Evidence, GuardianOutcome, ModelInfo};
use crate::ledger::{self, Report};
use crate::work::{Resolved, Subject};

use super::Events;
use super::ask::{self, Models, Pacer};
use super::context::Context;
use super::decide::{self, Guardian};
use super::prepare::{self, Prepared, Read};
use super::record;

pub fn review(
    ctx: &Context,
    models: &Models,
    pacer: &Pacer,
    events: &dyn Events,
    subject: Subject,
) -> Report {
    let started = Instant::now();
    let failed_early = |subject: &Subject, err: &dyn std::fmt::Display| {
        let mut report = Report::new(subject);
        report.error = Some(err.to_string());
        report.outcome = Outcome::Error;
        report.duration_ms = started.elapsed().as_millis() as u64;
        report
    };
    // Held until the review is recorded, from before anything of the
    // subject is read: a second review of it waits and then reads what
    // this one left, or says it is being reviewed.
    let (_lock, subject) = match locked(ctx, events, subject) {
        Ok(locked) => locked,
        Err(failure) => {
            let (subject, err, outcome) = *failure;
            let mut report = failed_early(&subject, &err);
            report.outcome = outcome;
            return report;
        }
    };
    let inputs = match prepare::read(ctx, subject.clone()) {
        Ok(Read::Inputs(inputs)) => inputs,
        Ok(Read::NothingImplemented(empty)) => {
            let prepare::Empty { subject, resolved } = *empty;
            return nothing_implemented(ctx, models, subject, &resolved, started);
        }
        Err(err) => return failed_early(&subject, &err),
    };
    let prepared = match prepare::prepare(ctx, *inputs) {
        Ok(prepared) => prepared,
        Err(err) => return failed_early(&subject, &err),
    };
    let mut report = record::report_for(ctx, models, &prepared);
    if let Some(text) = record::no_vision(ctx, &prepared) {
        events.event(super::Event::Notice {
            label: prepared.subject.label(),
            text,
        });
    }
    let mut evidence = Evidence {
        prompt: prepared.composed.text(),
        sections: prepared.composed.sections(),
        spec_sources: prepared
            .sources
            .specs
            .iter()
            .map(|s| format!("{} ({})", s.document.path, s.origin))
            .collect(),
        leaks: prepared.composed.leaks.clone(),
        changes: record::changes(&prepared.resolved.diff),
        asked: record::asked(&prepared.subject),
        ..Evidence::default()
    };
    if ctx.offline() {
        return offline(ctx, &prepared, report, evidence, started);
    }

    let answers = ask::review(ctx, models, pacer, events, &prepared, &mut evidence);
    let asked_for_a_reason = answers.asked_for_a_reason();
    report.parts = answers.parts;
    report.reconcile = answers.reconcile;
    let answer = match answers.merged {
        Ok(answer) => answer,
        Err(failure) => return failed(ctx, report, evidence, failure, started),
    };
    let checked = match decide::check_answer(ctx, &prepared, answer) {
        Ok(mut checked) => {
            checked.asked_for_a_reason = asked_for_a_reason;
            checked
        }
        Err(err) => {
            let failure = ask::Failure {
                outcome: Outcome::Error,
                message: err.to_string(),
            };
            return failed(ctx, report, evidence, failure, started);
        }
    };
    // speed's own checks decide before the guardian: a blocking finding
    // turns the approval down whatever the model said, and the guardian is
    // not asked.
    record::absorb_leaks(ctx, &mut report, &mut evidence);
    let before = decide::rule(&checked, &report.checks, Guardian::NotAsked);
    let asked = match guardian_of(
        ctx,
        models,
        pacer,
        events,
        &prepared,
        &before,
        &mut evidence,
    ) {
        Ok(asked) => asked,
        Err(unavailable) => {
            let (outcome, failure) = *unavailable;
            report.guardian = outcome;
            record::checked(&mut report, &mut evidence, checked);
            report.verdict = None;
            return failed(ctx, report, evidence, failure, started);
        }
    };
    record::fill_tokens(&mut report, &evidence);
    report.duration_ms = started.elapsed().as_millis() as u64;
    record::seal(ctx, &mut report, &mut evidence);
    let said = match &asked {
        Word::Rejected(outcome, feedback) => Guardian::Rejected {
            summary: &outcome.summary,
            feedback,
        },
        Word::Confirmed(_) => Guardian::Confirmed,
        Word::NotAsked(_) => Guardian::NotAsked,
    };
    let ruling = decide::rule(&checked, &report.checks, said);
    report.guardian = asked.outcome();
    record::checked(&mut report, &mut evidence, checked);
    record::rule(&mut report, ruling);
    record::decided(ctx, &prepared.subject, report, &evidence)
}

/// A subject that could not be locked or read again: with the error and
/// the outcome it means.
type NotLocked = Box<(Subject, String, Outcome)>;

/// The subject's lock (none for a branch reviewed without a task), and the
/// subject read again under it: a task's file as the last review (or
/// anyone) left it, so this review's prompt and the state it records
/// follow from it. Another review holding the lock is waited for (an event
/// says so), or with `--no-wait` is the outcome 52 (it could not be asked
/// now, like a model that cannot be reached).
pub(super) fn locked(
    ctx: &Context,
    events: &dyn Events,
    subject: Subject,
) -> Result<(Option<crate::fsx::Lock>, Subject), NotLocked> {
    let label = subject.label();
    // A branch that does not exist is an input error found before anything
    // is written, the lock file included.
    if let Err(err) = branch_exists(ctx, &subject) {
        return Err(Box::new((subject, err.to_string(), Outcome::Error)));
    }
    let queued = |holder: &str| {
        events.event(super::Event::Queued {
            label: label.clone(),
            holder: holder.to_string(),
        })
    };
    let lock = match ledger::locks::begin(&ctx.root, &subject, ctx.config.queue, &queued) {
        Ok(lock) => lock,
        Err(err @ ledger::Error::BeingReviewed { .. }) => {
            return Err(Box::new((
                subject,
                err.to_string(),
                Outcome::ModelUnreachable,
            )));
        }
        Err(err) => return Err(Box::new((subject, err.to_string(), Outcome::Error))),
    };
    let subject = match subject {
        Subject::Task(task) => match crate::tasks::Store::open(&ctx.root).reload(&task) {
            Ok(fresh) => Subject::Task(Box::new(fresh)),
            Err(err) => {
                return Err(Box::new((
                    Subject::Task(task),
                    err.to_string(),
                    Outcome::Error,
                )));
            }
        },
        other => other,
    };
    Ok((lock, subject))
}

fn branch_exists(ctx: &Context, subject: &Subject) -> Result<(), super::Error> {
    let repo = crate::git::Repository::open(&ctx.root)?;
    repo.branch_head(subject.branch())
        .map_err(|source| crate::work::Error::BranchMissing {
            subject: subject.label(),
            branch: subject.branch().to_string(),
            source: Box::new(source),
        })?;
    Ok(())
}

/// What became of the guardian.
enum Word {
    NotAsked(GuardianOutcome),
    Confirmed(GuardianOutcome),
    Rejected(GuardianOutcome, String),
}

impl Word {
    fn outcome(self) -> GuardianOutcome {
        match self {
            Word::NotAsked(o) | Word::Confirmed(o) | Word::Rejected(o, _) => o,
        }
    }
}

/// The guardian, asked only after an approval (a defect fix only when
/// speed counts it large); a guardian that could not answer fails the
/// review with its outcome.
fn guardian_of(
    ctx: &Context,
    models: &Models,
    pacer: &Pacer,
    events: &dyn Events,
    prepared: &Prepared,
    before: &decide::Ruling,
    evidence: &mut Evidence,
) -> Result<Word, Box<(GuardianOutcome, ask::Failure)>> {
    if !before.approves() {
        return Ok(Word::NotAsked(GuardianOutcome::not_run(
            "the review requested changes",
        )));
    }
    if let Some(found) = prepared.facts.defect.as_ref().filter(|f| !f.size.large) {
        return Ok(Word::NotAsked(GuardianOutcome::not_run(&format!(
            "a defect fix goes to the guardian when it is large; this one is not ({})",
            found.size.describe()
        ))));
    }
    match ask::guardian(ctx, models, pacer, events, prepared, evidence) {
        ask::Guardian::Confirmed(outcome) => Ok(Word::Confirmed(outcome)),
        ask::Guardian::Rejected(outcome, feedback) => Ok(Word::Rejected(outcome, feedback)),
        ask::Guardian::Unavailable(outcome, failure) => {
            let message = format!(
                "the guardian could not confirm the approval: {}",
                failure.message
            );
            Err(Box::new((
                outcome,
                ask::Failure {
                    outcome: failure.outcome,
                    message,
                },
            )))
        }
    }
}

/// A review whose model step failed: recorded with its error, the task
/// file untouched.
fn failed(
    ctx: &Context,
    mut report: Report,
    evidence: Evidence,
    failure: ask::Failure,
    started: Instant,
) -> Report {
    report.error = Some(failure.message);
    report.outcome = failure.outcome;
    report.duration_ms = started.elapsed().as_millis() as u64;
    record::failed(ctx, report, evidence)
}

/// An offline review: speed's checks alone decide, and the task file
/// changes only when they request changes.
fn offline(
    ctx: &Context,
    prepared: &Prepared,
    mut report: Report,
    mut evidence: Evidence,
    started: Instant,
) -> Report {
    report.model = ModelInfo {
        provider: "none".to_string(),
        name: String::new(),
    };
    report.guardian = GuardianOutcome::skipped("offline review: no model was asked");
    // No model saw any of the diff.
    report.coverage = Coverage {
        diff: crate::prompt::Coverage {
            files_total: report.coverage.diff.files_total,
            lines_total: report.coverage.diff.lines_total,
            ..crate::prompt::Coverage::default()
        },
        parts: 0,
        max_parts: report.coverage.max_parts,
        incremental: false,
    };
    report.notices.push(
        "Offline review: speed's own checks decided; no model compared the work with the spec."
            .to_string(),
    );
    report.duration_ms = started.elapsed().as_millis() as u64;
    record::seal(ctx, &mut report, &mut evidence);
    let ruling = decide::offline(&report.checks, prepared.facts.defect.as_ref());
    record::rule(&mut report, ruling);
    record::decided(ctx, &prepared.subject, report, &evidence)
}

/// A branch with no changes: changes are requested without asking a
/// model, and recorded like any other review.
fn nothing_implemented(
    ctx: &Context,
    models: &Models,
    subject: Subject,
    resolved: &Resolved,
    started: Instant,
) -> Report {
    let mut report = Report::new(&subject);
    report.branch = resolved.branch.clone();
    report.base_commit = resolved.base.commit.clone();
    report.head_commit = resolved.diff.head_commit.clone();
    report.hashes.diff = resolved.diff.sha256.clone();
    report.model = ModelInfo {
        provider: models.review.name().to_string(),
        name: models.review.model().to_string(),
    };
    report.tokens.budget = ctx.config.budget;
    report.guardian = GuardianOutcome::not_run("nothing was implemented");
    let (finding, ruling) = decide::nothing_implemented(ctx, &subject, resolved);
    report.checks.extend(finding);
    report.rejection = Some(crate::ledger::report::Rejected {
        kind: crate::ledger::report::RejectedKind::NothingImplemented,
        reason: format!(
            "branch {} does not differ from its base {}",
            resolved.branch,
            crate::git::short(&resolved.base.commit)
        ),
    });
    report
        .notices
        .push("The diff is empty: speed found nothing implemented and asked no model.".to_string());
    report.base_resolved_by = resolved.base.how.clone();
    record::rule(&mut report, ruling);
    let mut evidence = Evidence {
        asked: record::asked(&subject),
        ..Evidence::default()
    };
    report.duration_ms = started.elapsed().as_millis() as u64;
    record::seal(ctx, &mut report, &mut evidence);
    record::decided(ctx, &subject, report, &evidence)
}
