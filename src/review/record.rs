//! What a review changes, and nothing else: its report is assembled from
//! what the stages produced and sealed by the safety net, then recorded
//! through the ledger: a report file under `.speed/reviews/`, one line of
//! the review log, the task file it read (by its path, atomically, unknown
//! fields kept), in the multi-player layout one event file, for a defect
//! with `--update-state` its `state.json` and `logs/review.log`, and the
//! verdict cache the merge gate reads. A review that failed writes its
//! report and log line (so the raw answers are kept) but never the task
//! file.
//!
//! The log line is written before the task file, so a recorded verdict
//! always has its log line whatever stops speed; recording is a `hold`, so
//! Ctrl-C waits for it to finish.

use serde_json::json;

use crate::defects;
use crate::exit::Outcome;
use crate::interrupt;
use crate::ledger::report::{Coverage, Evidence, Hashes, HumanReview, ModelInfo, TaskUpdate};
use crate::ledger::{self, Report, verdicts};
use crate::llm::cost::{self, Cost};
use crate::tasks::{self, Revision, Task, state::ReviewOutcome};
use crate::verdict::{self, CriterionStatus};
use crate::work::{DefectReview, Subject};

use super::Error;
use super::ask::Models;
use super::context::Context;
use super::decide::Ruling;
use super::net;
use super::prepare::Prepared;

mod revision;

/// The report of a prepared review before the model is asked: the commits,
/// the impact, the coverage and hashes of what is sent, speed's findings.
pub fn report_for(ctx: &Context, models: &Models, prepared: &Prepared) -> Report {
    let composed = &prepared.composed;
    let mut report = Report::new(&prepared.subject);
    report.branch = prepared.resolved.branch.clone();
    report.base_commit = prepared.resolved.base.commit.clone();
    report.head_commit = prepared.resolved.diff.head_commit.clone();
    report.base_resolved_by = prepared.resolved.base.how.clone();
    report.impact = prepared
        .facts
        .impact
        .as_ref()
        .map(|i| serde_json::to_value(i).unwrap_or(serde_json::Value::Null))
        .unwrap_or(serde_json::Value::Array(Vec::new()));
    report.coverage = Coverage {
        diff: composed.coverage.clone(),
        parts: composed.prompts.len(),
        max_parts: ctx.config.max_parts,
        incremental: prepared.previous.as_ref().is_some_and(|r| r.incremental),
    };
    report.hashes = Hashes {
        diff: prepared.resolved.diff.sha256.clone(),
        spec: composed.spec_hash.clone(),
        // Of what was sent: every part, after the safety net.
        prompt: crate::digest::sha256_text(&composed.text()),
        spec_files: prepared.sources.files(),
    };
    report.model = ModelInfo {
        provider: models.review.name().to_string(),
        name: models.review.model().to_string(),
    };
    report.specs = prepared
        .sources
        .specs
        .iter()
        .map(|s| s.document.path.clone())
        .collect();
    report.tokens.budget = ctx.config.budget;
    report.tokens.prompt_counted = composed.tokens();
    if let Some(block) = &mut report.defect {
        block.speed = prepared.facts.defect.clone();
    }
    report.checks = prepared.facts.checks.clone();
    report.checks_run = prepared.facts.checks_run.clone();
    report.redactions = prepared.facts.redactions.clone();
    // Where the configuration came from, when that needs saying, first.
    report.notices = ctx.config.report_notices.clone();
    report.notices.extend(prepared.notices.iter().cloned());
    report.notices.extend(no_vision(ctx, prepared));
    report
}

/// What a review says once when the product vision does not exist on
/// main: the file expected, and what goes without it (the guardian, which
/// judges an approval against it, is not asked; a defect fix's scope check
/// still is, from the spec sections).
pub fn no_vision(ctx: &Context, prepared: &Prepared) -> Option<String> {
    let path = prepared.sources.vision_missing.as_deref()?;
    let main = &ctx.main().name;
    let guardian = match (&ctx.config.guardian.skip_reason, &prepared.subject) {
        (Some(_), _) => "",
        (None, Subject::Defect(_)) => {
            "; a large fix's scope check asks the guardian from the spec sections alone"
        }
        (None, _) => "; the guardian, which checks an approval against it, is not asked",
    };
    Some(format!(
        "No product vision: {path} does not exist on {main}, so the reviewer saw none{guardian}. Commit the product's vision there, or point guardian.vision_file at it."
    ))
}

/// The files a diff touches, for the review's summary.
pub fn changes(diff: &crate::git::Diff) -> Vec<ledger::report::Change> {
    diff.files
        .iter()
        .map(|f| ledger::report::Change {
            path: match &f.old_path {
                Some(old) if *old != f.path => format!("{old} → {}", f.path),
                _ => f.path.clone(),
            },
            status: serde_json::to_value(f.status)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default(),
            additions: f.additions,
            deletions: f.deletions,
        })
        .collect()
}

/// What the subject asks, one line each, for the review's summary: the
/// task's description (or the defect's title) and its criteria.
pub fn asked(subject: &Subject) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(task) = subject.task() {
        let description = task.description.trim();
        if !description.is_empty() {
            out.push(description.to_string());
        }
    }
    out.extend(
        subject
            .criteria()
            .iter()
            .map(|c| format!("{}: {}", c.id, c.text)),
    );
    out
}

/// What the model's answer and speed's ruling put in the report.
pub fn checked(report: &mut Report, evidence: &mut Evidence, checked: super::decide::Checked) {
    let decision = checked.decision;
    if let Some(block) = &mut report.defect {
        block.model = Some(ledger::report::ModelScope::of(&checked.answer));
    }
    report.model_verdict = Some(decision.model);
    report.previous_findings = checked.previous;
    report.quotes = decision.quotes.clone();
    report.evidence = decision.citations.clone();
    report.review = Some(checked.answer);
    evidence.decision = Some(decision);
}

/// speed's ruling into the report: the verdict, the overrules, the
/// feedback, and the outcome the exit code follows.
pub fn rule(report: &mut Report, ruling: Ruling) {
    report.verdict = Some(ruling.verdict);
    report.overrules = ruling.overrules;
    report.feedback = ruling.feedback;
    report.scores = ruling.scores;
    report.outcome = match ruling.verdict {
        verdict::Kind::Approve | verdict::Kind::ChecksPassed => Outcome::Approved,
        verdict::Kind::RequestChanges => Outcome::ChangesRequested,
    };
}

/// The safety net's leaks so far as `secret` findings of the report.
pub fn absorb_leaks(ctx: &Context, report: &mut Report, evidence: &mut Evidence) {
    if evidence.leaks.is_empty() {
        return;
    }
    let leaks = std::mem::take(&mut evidence.leaks);
    report
        .checks
        .extend(net::leak_findings(&ctx.config.checks, &leaks));
    crate::checks::sort(&mut report.checks);
}

/// The last look before a report is decided and recorded: what the net
/// finds in it (a source that escaped redaction) is a finding too.
pub fn seal(ctx: &Context, report: &mut Report, evidence: &mut Evidence) {
    let found = net::seal(report, evidence);
    evidence.leaks.extend(found);
    absorb_leaks(ctx, report, evidence);
}

/// The tokens the providers reported, summed over every call; where a
/// provider reported none, speed's count (and the report says so).
pub fn fill_tokens(report: &mut Report, evidence: &Evidence) {
    report.tokens.counted_by = if evidence.calls.iter().any(|c| c.counted) {
        "speed".to_string()
    } else {
        "provider".to_string()
    };
    report.tokens.prompt = evidence.calls.iter().filter_map(|c| c.prompt_tokens).sum();
    report.tokens.completion = evidence
        .calls
        .iter()
        .filter_map(|c| c.completion_tokens)
        .sum();
    report.tokens.cache_read = evidence
        .calls
        .iter()
        .filter_map(|c| c.cache_read_tokens)
        .sum();
    report.tokens.cache_write = evidence
        .calls
        .iter()
        .filter_map(|c| c.cache_write_tokens)
        .sum();
}

/// What the review's calls cost at the configured prices, each call with
/// its own discounts (a batch's answer, cached input).
fn price(ctx: &Context, report: &mut Report, evidence: &Evidence) {
    let Some(prices) = crate::llm::cost::Prices::of(&ctx.config.llm) else {
        return;
    };
    let total = evidence.calls.iter().fold(Cost::default(), |sum, call| {
        let usage = cost::Usage {
            input: call.prompt_tokens.unwrap_or(0),
            output: call.completion_tokens.unwrap_or(0),
            cache_read: call.cache_read_tokens.unwrap_or(0),
            cache_write: call.cache_write_tokens.unwrap_or(0),
            batch: call.batch.is_some(),
        };
        sum.plus(cost::cost(&usage, &prices))
    });
    report.cost = Some(total.rounded());
}

/// Records a decided review: the report file, the log line and the task
/// file; for a defect with `--update-state`, then its `state.json` and its
/// `logs/review.log`; then the verdict cache. A failure to record is the
/// review's error.
pub fn decided(
    ctx: &Context,
    subject: &Subject,
    mut report: Report,
    evidence: &Evidence,
) -> Report {
    report.rejection = report.judge_rejection();
    let defect = subject.defect();
    if let Some(review) = defect {
        plan_state(review, &mut report);
    }
    price(ctx, &mut report, evidence);
    // The report, the log line, the task file and the verdict cache are
    // written under the record lock: the merge gate, which takes it before
    // reading them, never sees a decision half written.
    let _record = match subject
        .work()
        .map(|w| ledger::locks::recording(&ctx.root, &w))
    {
        Some(Err(err)) => {
            report.error = Some(err.to_string());
            report.outcome = Outcome::Error;
            return report;
        }
        Some(Ok(lock)) => Some(lock),
        None => None,
    };
    let recorded = write(ctx, subject.task(), &mut report, evidence).and_then(|()| match defect {
        Some(review) => {
            write_state(ctx, review, &mut report).and_then(|()| log_review(ctx, review, &report))
        }
        None => Ok(()),
    });
    match recorded {
        // The merge gate's record of this head: tasks and defects alike.
        Ok(()) => {
            verdicts::keep_review(&ctx.root, subject.work(), &report);
            crate::ledger::notes::keep_review(&ctx.root, subject.work(), &report);
            crate::fixes::record(&ctx.root, &ctx.config.checks, &ctx.actor.name, &mut report);
        }
        Err(err) => {
            report.error = Some(err.to_string());
            report.outcome = Outcome::Error;
        }
    }
    report
}

/// A review whose model step failed: the report and log keep the evidence
/// (raw answers included), the task file stays as it was.
pub fn failed(ctx: &Context, mut report: Report, mut evidence: Evidence) -> Report {
    fill_tokens(&mut report, &evidence);
    price(ctx, &mut report, &evidence);
    report.verdict = None;
    seal(ctx, &mut report, &mut evidence);
    if let Err(err) = write_failure(ctx, &mut report, &evidence) {
        report.error = Some(format!(
            "{}; and the report could not be saved: {err}",
            report.error.as_deref().unwrap_or("review failed")
        ));
    }
    report
}

fn write(
    ctx: &Context,
    task: Option<&Task>,
    report: &mut Report,
    evidence: &Evidence,
) -> Result<(), Error> {
    let _hold = interrupt::hold().ok_or(ledger::Error::Interrupted)?;
    let at = std::time::SystemTime::now();
    let now = humantime::format_rfc3339_millis(at).to_string();
    // An offline review whose checks passed approves nothing: the task
    // file keeps its state.
    let task = task.filter(|_| report.verdict != Some(verdict::Kind::ChecksPassed));
    // `review.human`: a task's approval waits for a person, and its report
    // (and summary) say so.
    if task.is_some() && ctx.config.human.waits() && report.verdict == Some(verdict::Kind::Approve)
    {
        report.human_review = Some(HumanReview::pending(&now));
    }
    if let Some(task) = task {
        // Re-read the very file the review read: an orchestrator may have
        // written it meanwhile, and only the review's own fields change.
        let store = tasks::Store::open(&ctx.root);
        let mut fresh = store.reload(task)?;
        let mut outcome = task_outcome(ctx, report, evidence, &now);
        // What the review does to the task is known before the report is
        // saved (the report holds it); where the report and its summary
        // lie is known once it is, and the task file names the summary.
        let mut after = fresh.clone();
        tasks::state::record_review(&mut after, &outcome);
        report.task_update = Some(TaskUpdate {
            status: after.status.to_string(),
            revision_count: after.revision_count,
            was: fresh.status.to_string(),
            new_revision: after.revision_count != fresh.revision_count,
            error: tasks::counting::error_now(&after).and_then(|e| e.as_str().map(str::to_string)),
            attempt: Some(tasks::counting::next_attempt(&fresh)),
        });
        // The report and the log line first: a task file that says
        // "reviewed" always has its line in the log, whatever stops speed
        // between the two.
        ledger::reports::save(&ctx.root, report, evidence, &now)?;
        outcome.summary = report.summary_path.clone();
        tasks::state::record_review(&mut fresh, &outcome);
        ledger::log::append_review(&ctx.root, report, &now)?;
        if let Err(err) = store.save(&fresh) {
            report.task_update = None;
            return Err(err.into());
        }
        let verdict = if outcome.approved {
            "approve"
        } else {
            "request_changes"
        };
        if let Some(event) = tasks::events::review_completed(&fresh, verdict, &ctx.actor, at) {
            tasks::events::write(&event)?;
        }
        return Ok(());
    }
    ledger::reports::save(&ctx.root, report, evidence, &now)?;
    Ok(ledger::log::append_review(&ctx.root, report, &now)?)
}

/// What the task file records of a decided review.
fn task_outcome(ctx: &Context, report: &Report, evidence: &Evidence, now: &str) -> ReviewOutcome {
    let approved = report.verdict == Some(verdict::Kind::Approve);
    let guardian = match report.guardian.status.as_str() {
        "not_run" => None,
        status => Some((status.to_string(), guardian_summary(report))),
    };
    // The safety net over what the task file receives (the review sealed
    // the report these come from; this guards the bytes).
    let net = |text: &str| crate::secrets::net::text(text).text;
    let guardian = guardian.map(|(status, summary)| (status, net(&summary)));
    ReviewOutcome {
        approved,
        feedback: report.feedback.as_deref().map(net),
        reviewed_at: now.to_string(),
        reviewed_by: ctx.actor.name.clone(),
        diff_hash: report.hashes.diff.clone(),
        head_commit: report.head_commit.clone(),
        blocking: if approved {
            Vec::new()
        } else {
            blocking(report, evidence).iter().map(|b| net(b)).collect()
        },
        max_revisions: ctx.config.max_revisions,
        guardian,
        overall_score: report.scores.as_ref().map(|s| s.overall),
        revision: (!approved).then(|| {
            let mut blocking_issues =
                serde_json::Value::Array(revision::blocking_issues(report, evidence));
            crate::secrets::net::json(&mut blocking_issues, "the task file");
            Revision {
                blocking_issues: match blocking_issues {
                    serde_json::Value::Array(items) => items,
                    _ => Vec::new(),
                },
                scores: serde_json::to_value(&report.scores).unwrap_or_default(),
            }
        }),
        replan: report.replan().map(|reason| net(&reason)),
        human_pending: report.human_review.as_ref().is_some_and(|h| h.is_pending()),
        summary: report.summary_path.clone(),
    }
}

/// What stood in the way of an approval, one line each, for the task's
/// `review_history`: blocking issues (the model's and speed's), unmet
/// criteria, what the spec asks that is missing, and speed's overrules.
fn blocking(report: &Report, evidence: &Evidence) -> Vec<String> {
    let mut out = Vec::new();
    let added = evidence.decision.iter().flat_map(|d| &d.added_issues);
    if let Some(review) = &report.review {
        for issue in review.issues.iter().chain(added) {
            if !issue.severity.is_blocking() {
                continue;
            }
            let at = match (&issue.file, issue.line) {
                (Some(file), Some(line)) => format!(" {file}:{line}"),
                (Some(file), None) => format!(" {file}"),
                _ => String::new(),
            };
            out.push(format!(
                "{}{at}: {}",
                issue.severity.as_str(),
                issue.message
            ));
        }
        for c in &review.criteria {
            if c.status == CriterionStatus::Unmet {
                out.push(format!("{} unmet: {}", c.id, c.evidence));
            }
        }
        for m in &review.missing_from_spec {
            let what = if m.description.trim().is_empty() {
                &m.spec_quote
            } else {
                &m.description
            };
            out.push(format!("missing: {what}"));
        }
    }
    for o in &report.overrules {
        out.push(o.reason.clone());
    }
    if out.is_empty() {
        let first = report
            .feedback
            .as_deref()
            .and_then(|f| f.lines().map(str::trim).find(|l| !l.is_empty()));
        out.extend(first.map(str::to_string));
    }
    out.dedup();
    out
}

fn guardian_summary(report: &Report) -> String {
    match (&report.guardian.reason, report.guardian.summary.is_empty()) {
        (Some(reason), true) => reason.clone(),
        _ => report.guardian.summary.clone(),
    }
}

fn write_failure(ctx: &Context, report: &mut Report, evidence: &Evidence) -> Result<(), Error> {
    let _hold = interrupt::hold().ok_or(ledger::Error::Interrupted)?;
    let now = ledger::now_rfc3339();
    ledger::reports::save(&ctx.root, report, evidence, &now)?;
    Ok(ledger::log::append_review(&ctx.root, report, &now)?)
}

/// With `--update-state`, before the report is saved: what the review
/// does to `state.json`. An approval moves `fixed` to `reviewed`; anything
/// else leaves the state as it is.
fn plan_state(review: &DefectReview, report: &mut Report) {
    if !review.update_state || report.verdict.is_none() {
        return;
    }
    let status = review.defect.status().unwrap_or_default();
    let next = match report.verdict {
        Some(verdict::Kind::Approve) if status == "fixed" => "reviewed",
        _ => status,
    };
    if let Some(block) = &mut report.defect {
        block.state = Some(next.to_string());
    }
}

/// After the report and its log line are written (a state that says
/// `reviewed` always has its review in the log): writes what `plan_state`
/// planned. The file is read again first and changed only if it still says
/// `fixed`; the report then says what it holds.
fn write_state(ctx: &Context, review: &DefectReview, report: &mut Report) -> Result<(), Error> {
    let Some(block) = &mut report.defect else {
        return Ok(());
    };
    if block.state.as_deref() != Some("reviewed") || block.status.as_deref() != Some("fixed") {
        return Ok(());
    }
    let now = defects::Store::open(&ctx.root)
        .mark_reviewed(
            &review.defect,
            &ctx.actor.name,
            std::time::SystemTime::now(),
        )
        .map_err(|e| defect_error(review, e))?;
    block.state = Some(now);
    Ok(())
}

/// With `--update-state`, after the report is saved (so the line names
/// it): the decided review, appended to the defect's `logs/review.log`.
fn log_review(ctx: &Context, review: &DefectReview, report: &Report) -> Result<(), Error> {
    if !review.update_state || report.verdict.is_none() {
        return Ok(());
    }
    let entry = json!({
        "at": ledger::now_rfc3339(),
        "reviewer": "speed",
        "by": ctx.actor.name,
        "verdict": report.verdict,
        "model_verdict": report.model_verdict,
        "branch": report.branch,
        "base_commit": report.base_commit,
        "head_commit": report.head_commit,
        "state": report.defect.as_ref().and_then(|b| b.state.clone()),
        "overrules": report.overrules,
        "guardian": report.guardian.status,
        "feedback": report.feedback,
        "report": report.report_path,
        "defect": report.defect,
        "review": report.review,
    });
    defects::Store::open(&ctx.root)
        .append_review_log(&review.defect, &entry)
        .map_err(|e| defect_error(review, e))
}

fn defect_error(review: &DefectReview, err: defects::Error) -> Error {
    Error::Defect {
        name: review.defect.name.clone(),
        source: err,
    }
}
