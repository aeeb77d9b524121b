//! One review from start to finish: prepare, ask, decide, guardian, record.
//! Always returns a `Report`; a review that could not be completed carries its
//! error and the outcome that explains it, and has changed no task file.

use std::sync::Arc;
use std::time::Instant;

use crate::exit::Outcome;
use crate::llm::Provider;
use crate::specs::QuoteIndex;
use crate::verdict::{self, Verdict};

use super::Events;
use super::guardian;
use super::head::HeadFiles;
use super::model::{self, Pacer, Question};
use super::prepare::{self, LoadedSpec, Prepared, Shared, Subject};
use super::record;
use super::report::{Coverage, Evidence, GuardianOutcome, Hashes, ModelInfo, Report, Tokens};
use super::split::{self, Split};
use super::verdicts;

/// The providers a run uses: the review's and the guardian's (the same one
/// unless `guardian.model` names another model).
#[derive(Clone)]
pub struct Models {
    pub review: Arc<dyn Provider>,
    pub guardian: Arc<dyn Provider>,
}

/// The provider of an offline review: it is never asked (the review
/// returns before any model call), and says so if it were.
pub struct NoModel;

impl Provider for NoModel {
    fn name(&self) -> &str {
        "none"
    }

    fn model(&self) -> &str {
        ""
    }

    fn complete(
        &self,
        _request: &crate::llm::Request,
    ) -> Result<crate::llm::Completion, crate::llm::Error> {
        Err(crate::llm::Error::NotConfigured {
            hint: "an offline review asks no model".to_string(),
        })
    }
}

pub fn review(
    shared: &Shared,
    models: &Models,
    pacer: &Pacer,
    events: &dyn Events,
    subject: Subject,
) -> Report {
    let started = Instant::now();
    let failed_early = |subject: &Subject, err: &dyn std::fmt::Display| {
        let mut report = empty_report(subject);
        report.error = Some(err.to_string());
        report.outcome = Outcome::Error;
        report.duration_ms = started.elapsed().as_millis() as u64;
        report
    };
    let prepared = match prepare::prepare(shared, subject.clone()) {
        Ok(p) => p,
        Err(super::Error::EmptyDiff { found, .. }) => {
            // Recorded like any review: checked, and under the task's lock.
            let _lock = match record::begin(shared, &subject) {
                Ok(lock) => lock,
                Err(err) => return failed_early(&subject, &err),
            };
            return nothing_implemented(shared, models, subject, &found, started);
        }
        Err(err) => return failed_early(&subject, &err),
    };
    // Held until the review is recorded: a second review of the task waits
    // for it, or says the task is being reviewed.
    let _lock = match record::begin(shared, &prepared.subject) {
        Ok(lock) => lock,
        Err(err) => return failed_early(&subject, &err),
    };
    let mut split = match split::split(shared, &prepared) {
        Ok(s) => s,
        Err(err) => return failed_early(&subject, &err),
    };
    // The safety net, before anything is shown, sent or kept.
    let prompt_leaks = super::guard::net_prompts(&mut split.prompts);
    let mut report = report_for(&prepared, shared, models, &split);
    let mut evidence = Evidence {
        prompt: split.text(),
        sections: split.sections(),
        spec_sources: prepared
            .specs
            .iter()
            .map(|s| format!("{} ({})", s.document.path, s.origin))
            .collect(),
        leaks: prompt_leaks,
        ..Evidence::default()
    };

    if shared.settings.llm.offline() {
        return offline(shared, &prepared, report, evidence, started);
    }

    let label = prepared.subject.label();
    let schema = shared.settings.llm.structured_output.then(|| {
        (
            "verdict".to_string(),
            prepare::verdict_schema(prepared.parts.kind),
        )
    });
    let defect = prepared.subject.defect();
    let parse = |raw: &str| -> Result<Verdict, model::Rejection> {
        let parsed = match defect {
            Some(_) => verdict::parse_defect(raw),
            None => verdict::parse(raw),
        };
        parsed.map_err(|e| model::rejection(&e))
    };
    let count = split.prompts.len();
    let mut verdicts = Vec::with_capacity(count);
    for (n, prompt) in split.prompts.iter().enumerate() {
        let asked = model::ask(
            models.review.as_ref(),
            &Question {
                stage: "review",
                part: (count > 1).then_some((n + 1, count)),
                label: &label,
                prompt: &prompt.text,
                reserve_tokens: prompt.total_tokens as u64
                    + u64::from(shared.settings.llm.max_output_tokens),
                schema: schema.clone(),
                parse: &parse,
            },
            pacer,
            events,
        );
        evidence.calls.extend(asked.calls);
        evidence.leaks.extend(asked.leaks);
        match asked.result {
            Ok(v) => verdicts.push(v),
            Err(failure) => {
                report.error = Some(failure.message);
                report.outcome = failure.outcome;
                return finish_failed(shared, report, evidence, started);
            }
        }
    }
    let model_verdict = verdict::merge(verdicts);

    let sent = split.sent_sections(&prepared);
    let index = QuoteIndex::new(&sent);
    let find = |quote: &str| {
        index.find(quote).map(|hit| verdict::QuoteHit {
            doc_path: hit.doc_path,
            section: hit.section,
            line: hit.line,
        })
    };
    let head = match HeadFiles::open(&shared.root, &prepared.head_commit) {
        Ok(h) => h,
        Err(err) => {
            report.error = Some(err.to_string());
            report.outcome = Outcome::Error;
            return finish_failed(shared, report, evidence, started);
        }
    };
    let lines_at_head = |path: &str| head.lines(path);
    let sources = verdict::Sources {
        diff: &prepared.diff,
        lines_at_head: &lines_at_head,
        head_paths: head.paths(),
    };
    let criteria_ids: Vec<String> = match &prepared.subject {
        Subject::Branch { .. } => Vec::new(),
        subject => subject.criteria().iter().map(|c| c.id.clone()).collect(),
    };
    let mut decision = verdict::decide(
        &model_verdict,
        &verdict::DecisionInput {
            find_quote: &find,
            spec_sent: !sent.is_empty(),
            spec_edits: prepared.spec_edits.clone(),
            criteria_ids,
            sources: Some(&sources),
            unseen: split.coverage.unseen(),
        },
    );
    if let Some(found) = &prepared.defect {
        verdict::defect::apply(&mut decision, &model_verdict, &found.facts());
    }
    if let Some(block) = &mut report.defect {
        block.model = Some(super::defect::ModelScope::of(&model_verdict));
    }
    report.model_verdict = Some(decision.model);
    report.verdict = Some(decision.final_verdict);
    report.overrules = decision.overrules.clone();
    report.quotes = decision.quotes.clone();
    report.evidence = decision.citations.clone();
    let mut feedback = verdict::feedback(&model_verdict, &decision);
    report.review = Some(model_verdict);
    evidence.decision = Some(decision.clone());
    // speed's own checks decide before the guardian: a critical or major
    // finding blocks the approval whatever the model said.
    absorb_leaks(shared, &mut report, &mut evidence);
    overrule_on_checks(&mut report);

    // A defect fix goes to the guardian only when speed counts it large.
    let small_fix = prepared.defect.as_ref().filter(|found| !found.size.large);
    if report.verdict == Some(verdict::Kind::Approve) && small_fix.is_some() {
        let size = small_fix.map(|f| f.size.describe()).unwrap_or_default();
        report.guardian = GuardianOutcome::not_run(&format!(
            "a defect fix goes to the guardian when it is large; this one is not ({size})"
        ));
    } else if report.verdict == Some(verdict::Kind::Approve) {
        let gate = guardian::run(shared, models, pacer, events, &prepared, &mut evidence);
        match gate {
            guardian::Gate::Confirmed(outcome) => report.guardian = outcome,
            guardian::Gate::Rejected(outcome, guardian_feedback) => {
                report.overrules.push(verdict::Overrule {
                    rule: verdict::Rule::GuardianRejected,
                    reason: format!("the guardian rejected the approval: {}", outcome.summary),
                });
                report.verdict = Some(verdict::Kind::RequestChanges);
                feedback = guardian_feedback;
                report.guardian = outcome;
            }
            guardian::Gate::Unavailable(outcome, failure) => {
                report.guardian = outcome;
                report.error = Some(format!(
                    "the guardian could not confirm the approval: {}",
                    failure.message
                ));
                report.outcome = failure.outcome;
                return finish_failed(shared, report, evidence, started);
            }
        }
    } else {
        report.guardian = GuardianOutcome::not_run("the review requested changes");
    }

    fill_tokens(&mut report, &evidence);
    report.duration_ms = started.elapsed().as_millis() as u64;
    seal(shared, &mut report, &mut evidence);
    overrule_on_checks(&mut report);
    report.outcome = match report.verdict {
        Some(verdict::Kind::Approve) => Outcome::Approved,
        _ => Outcome::ChangesRequested,
    };
    if report.outcome == Outcome::ChangesRequested {
        let blocking: Vec<&crate::checks::Finding> =
            report.checks.iter().filter(|f| f.blocking()).collect();
        if !blocking.is_empty() {
            feedback.push_str(&check_feedback(&blocking));
        }
        report.feedback = Some(feedback);
    }
    finish(
        shared,
        &prepared.subject,
        &prepared.specs,
        report,
        &evidence,
    )
}

/// Records a decided review: the report file, the log line and the task
/// file; for a defect with `--update-state`, then its `state.json` and its
/// `logs/review.log`. A failure to record is the review's error.
fn finish(
    shared: &Shared,
    subject: &Subject,
    specs: &[LoadedSpec],
    mut report: Report,
    evidence: &Evidence,
) -> Report {
    let defect = subject.defect();
    if let Some(review) = defect {
        super::defect::plan_state(review, &mut report);
    }
    let recorded =
        record::record(shared, subject.task(), &mut report, evidence).and_then(|()| match defect {
            Some(review) => super::defect::write_state(shared, review, &mut report)
                .and_then(|()| super::defect::log_review(shared, review, &report)),
            None => Ok(()),
        });
    match recorded {
        // The merge gate's record of this head: tasks and defects alike.
        Ok(()) => verdicts::keep_review(&shared.root, subject.work(), &report, specs),
        Err(err) => {
            report.error = Some(err.to_string());
            report.outcome = Outcome::Error;
        }
    }
    report
}

/// The safety net's leaks so far as `secret` findings of the report.
fn absorb_leaks(shared: &Shared, report: &mut Report, evidence: &mut Evidence) {
    if evidence.leaks.is_empty() {
        return;
    }
    let leaks = std::mem::take(&mut evidence.leaks);
    report
        .checks
        .extend(super::guard::leak_findings(&shared.settings.checks, &leaks));
    crate::checks::sort(&mut report.checks);
}

/// The last look before a report is recorded: what the net finds in it
/// (a source that escaped redaction) is a finding too.
fn seal(shared: &Shared, report: &mut Report, evidence: &mut Evidence) {
    let found = super::guard::seal(report, evidence);
    evidence.leaks.extend(found);
    absorb_leaks(shared, report, evidence);
}

/// A critical or major finding of speed's checks turns an approval into
/// request_changes, with the rule in the report.
fn overrule_on_checks(report: &mut Report) {
    if report.verdict != Some(verdict::Kind::Approve) {
        return;
    }
    let blocking: Vec<&crate::checks::Finding> =
        report.checks.iter().filter(|f| f.blocking()).collect();
    if blocking.is_empty() {
        return;
    }
    report.overrules.push(verdict::Overrule {
        rule: verdict::Rule::CheckFailed,
        reason: format!(
            "speed's checks found {} blocking problem{}: {}",
            blocking.len(),
            if blocking.len() == 1 { "" } else { "s" },
            blocking
                .iter()
                .map(|f| describe(f))
                .collect::<Vec<_>>()
                .join("; ")
        ),
    });
    report.verdict = Some(verdict::Kind::RequestChanges);
}

/// `check (severity) file:line: message`, one finding on one line.
fn describe(f: &crate::checks::Finding) -> String {
    let first = f.message.lines().next().unwrap_or("");
    match f.location() {
        Some(at) => format!("{} ({}) {at}: {first}", f.check, f.severity.as_str()),
        None => format!("{} ({}): {first}", f.check, f.severity.as_str()),
    }
}

/// The blocking findings as feedback a developer can act on.
fn check_feedback(blocking: &[&crate::checks::Finding]) -> String {
    let mut out = String::from("\n\nspeed's own checks found problems that block approval:\n");
    for f in blocking {
        out.push_str(&format!("- {}\n", describe(f)));
        // A command's output tail follows its first line.
        for line in f.message.lines().skip(1) {
            out.push_str(&format!("    {line}\n"));
        }
    }
    out
}

/// An offline review: speed's checks alone decide. A blocking finding
/// requests changes; otherwise the checks passed, which is not an approval
/// (no one compared the work with the spec), so the task file is left as
/// it is.
fn offline(
    shared: &Shared,
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
    };
    report.notices.push(
        "Offline review: speed's own checks decided; no model compared the work with the spec."
            .to_string(),
    );
    report.duration_ms = started.elapsed().as_millis() as u64;
    seal(shared, &mut report, &mut evidence);
    let blocking: Vec<&crate::checks::Finding> =
        report.checks.iter().filter(|f| f.blocking()).collect();
    // A defect fix outside its scope, or passing by a changed test, is
    // known without a model.
    let defect = prepared
        .defect
        .as_ref()
        .map(super::defect::offline_feedback)
        .unwrap_or_default();
    if blocking.is_empty() && defect.is_empty() {
        report.verdict = Some(verdict::Kind::ChecksPassed);
        report.outcome = Outcome::Approved;
    } else {
        report.verdict = Some(verdict::Kind::RequestChanges);
        report.outcome = Outcome::ChangesRequested;
        let checks = if blocking.is_empty() {
            String::new()
        } else {
            check_feedback(&blocking)
        };
        report.feedback = Some(format!("{defect}{checks}").trim_start().to_string());
    }
    finish(
        shared,
        &prepared.subject,
        &prepared.specs,
        report,
        &evidence,
    )
}

/// A branch with no changes: nothing was implemented, so the review requests
/// changes without asking a model, and is recorded like any other review.
fn nothing_implemented(
    shared: &Shared,
    models: &Models,
    subject: Subject,
    empty: &prepare::Empty,
    started: Instant,
) -> Report {
    let mut report = empty_report(&subject);
    report.branch = empty.branch.clone();
    report.base_commit = empty.base_commit.clone();
    report.head_commit = empty.head_commit.clone();
    report.hashes.diff = empty.diff_hash.clone();
    report.model = ModelInfo {
        provider: models.review.name().to_string(),
        name: models.review.model().to_string(),
    };
    report.tokens.budget = shared.settings.budget;
    report.verdict = Some(verdict::Kind::RequestChanges);
    report.guardian = GuardianOutcome::not_run("nothing was implemented");
    if let Some(severity) = shared
        .settings
        .checks
        .severity(crate::checks::Check::EmptyDiff)
    {
        report.checks.push(crate::checks::Finding {
            check: crate::checks::Check::EmptyDiff.name().to_string(),
            severity,
            file: None,
            line: None,
            message: "Nothing was implemented: the branch does not differ from its base."
                .to_string(),
        });
    }
    let what = match subject {
        Subject::Defect(_) => "Commit the fix of the defect on this branch.",
        _ => "Implement the task on this branch and commit the work.",
    };
    report.feedback = Some(format!(
        "Nothing was implemented: branch {} has no changes against its base {} ({}). {what}",
        empty.branch,
        crate::git::short(&empty.base_commit),
        empty.base_how
    ));
    report
        .notices
        .push("The diff is empty: changes were requested without calling a model.".to_string());
    report.outcome = Outcome::ChangesRequested;
    report.base_resolved_by = empty.base_how.clone();
    let mut evidence = Evidence::default();
    report.duration_ms = started.elapsed().as_millis() as u64;
    seal(shared, &mut report, &mut evidence);
    finish(shared, &subject, &[], report, &evidence)
}

/// A review whose model step failed: the report and log keep the evidence
/// (raw answers included), the task file stays as it was.
fn finish_failed(
    shared: &Shared,
    mut report: Report,
    mut evidence: Evidence,
    started: Instant,
) -> Report {
    fill_tokens(&mut report, &evidence);
    report.verdict = None;
    report.duration_ms = started.elapsed().as_millis() as u64;
    seal(shared, &mut report, &mut evidence);
    if let Err(err) = record::record_failure(shared, &mut report, &evidence) {
        report.error = Some(format!(
            "{}; and the report could not be saved: {err}",
            report.error.as_deref().unwrap_or("review failed")
        ));
    }
    report
}

fn fill_tokens(report: &mut Report, evidence: &Evidence) {
    report.tokens.prompt = evidence.calls.iter().filter_map(|c| c.prompt_tokens).sum();
    report.tokens.completion = evidence
        .calls
        .iter()
        .filter_map(|c| c.completion_tokens)
        .sum();
}

/// The report of a task that could not even be read (unknown id, ambiguous
/// id, malformed file): its error, and nothing written anywhere.
pub fn unreadable(task_id: Option<String>, feature: Option<String>, message: String) -> Report {
    let subject = Subject::Branch {
        branch: String::new(),
        specs: Vec::new(),
        criteria: Vec::new(),
        criteria_file: None,
    };
    Report {
        task_id,
        feature,
        error: Some(message),
        outcome: Outcome::Error,
        ..empty_report(&subject)
    }
}

/// The report of a defect that could not be read (unknown name, missing
/// triage, malformed file): its error, and nothing written anywhere.
pub fn unreadable_defect(name: &str, message: String) -> Report {
    let mut report = unreadable(None, None, message);
    report.defect = Some(super::defect::Block::named(name));
    report
}

pub fn empty_report(subject: &Subject) -> Report {
    let task = subject.task();
    Report {
        task_id: task.map(|t| t.id.clone()),
        feature: task.and_then(|t| t.feature.clone()),
        branch: subject.branch().to_string(),
        title: match subject {
            Subject::Defect(review) => Some(review.defect.report.title.clone())
                .filter(|t| !t.is_empty())
                .or(Some(review.defect.name.clone())),
            _ => task.map(|t| t.title.clone()),
        },
        base_commit: String::new(),
        head_commit: String::new(),
        base_resolved_by: String::new(),
        verdict: None,
        model_verdict: None,
        overrules: Vec::new(),
        review: None,
        quotes: Vec::new(),
        evidence: Vec::new(),
        checks: Vec::new(),
        redactions: Vec::new(),
        guardian: GuardianOutcome::not_run("the review did not complete"),
        impact: serde_json::Value::Array(Vec::new()),
        coverage: Coverage::default(),
        hashes: Hashes::default(),
        model: ModelInfo::default(),
        tokens: Tokens::default(),
        duration_ms: 0,
        error: None,
        feedback: None,
        report_path: None,
        notices: Vec::new(),
        defect: subject
            .defect()
            .map(|review| super::defect::Block::new(&review.defect)),
        specs: Vec::new(),
        task_update: None,
        outcome: Outcome::Error,
    }
}

fn report_for(prepared: &Prepared, shared: &Shared, models: &Models, split: &Split) -> Report {
    let mut report = empty_report(&prepared.subject);
    report.branch = prepared.branch.clone();
    report.base_commit = prepared.base_commit.clone();
    report.head_commit = prepared.head_commit.clone();
    report.base_resolved_by = prepared.base_how.clone();
    report.impact = prepared
        .impact
        .as_ref()
        .map(|i| serde_json::to_value(i).unwrap_or(serde_json::Value::Null))
        .unwrap_or(serde_json::Value::Array(Vec::new()));
    report.coverage = Coverage {
        diff: split.coverage.clone(),
        parts: split.prompts.len(),
        max_parts: shared.settings.max_parts,
    };
    report.hashes = Hashes {
        diff: prepared.diff.sha256.clone(),
        spec: prepared.spec_hash.clone(),
        // Of what was sent: every part, after the safety net.
        prompt: prepare::sha256(&split.text()),
    };
    report.model = ModelInfo {
        provider: models.review.name().to_string(),
        name: models.review.model().to_string(),
    };
    report.specs = prepared
        .specs
        .iter()
        .map(|s| s.document.path.clone())
        .collect();
    report.tokens.budget = shared.settings.budget;
    report.tokens.prompt_counted = split.prompts.iter().map(|p| p.total_tokens).sum();
    if let Some(block) = &mut report.defect {
        block.speed = prepared.defect.clone();
    }
    report.checks = prepared.checks.clone();
    report.redactions = prepared.redactions.clone();
    // Where the configuration came from, when that needs saying, first.
    report.notices = shared.settings.report_notices.clone();
    report.notices.extend(prepared.notices.iter().cloned());
    report
}
