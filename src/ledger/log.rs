//! The review log, `.speed/reviews/log.jsonl`: one line per review,
//! override or bypass, appended in one write, through the secrets safety
//! net. It is the fullest record of what was decided; the verdict cache and
//! `speed history`/`speed stats` are read from it (`ledger::history`): a
//! review's line carries what stood in its way (`blocking`, by kind and
//! name) and what it left the task at (`task_status`, `revision_count`,
//! and the `attempt` its `review_history` entry is numbered; a person's
//! decision and an override carry theirs too).

use std::path::Path;

use serde_json::{Value, json};

use crate::fsx;

use super::report::Report;
use super::{Error, LOG_FILE, area};

/// The line of a review: what it decided about which head, with what
/// model, tokens and hashes.
pub fn append_review(root: &Path, report: &Report, now: &str) -> Result<(), Error> {
    let mut line = json!({
        "at": now,
        "task": report.task_id,
        // A defect's reviews count under the feature its report names.
        "feature": report.feature.clone().or_else(|| report.defect.as_ref().and_then(|d| d.feature.clone())),
        "branch": report.branch,
        "head_commit": (!report.head_commit.is_empty()).then_some(&report.head_commit),
        "decision": report.verdict,
        "model_verdict": report.model_verdict,
        "outcome": report.outcome.code(),
        "model": {"provider": report.model.provider, "name": report.model.name},
        "tokens": tokens(report),
        "hashes": report.hashes,
        "guardian": report.guardian.status,
        "overrules": rules(report),
        "overall_score": report.scores.as_ref().map(|s| s.overall),
        "blocking": super::blocking::reasons(report),
        "task_status": report.task_update.as_ref().map(|u| &u.status),
        "revision_count": report.task_update.as_ref().map(|u| u.revision_count),
        "duration_ms": report.duration_ms,
        "report": report.report_path,
        "error": report.error,
    });
    if let (Some(rejected), Value::Object(map)) = (report.judge_rejection(), &mut line) {
        // What the request for changes asks for: `plan` is the planner's.
        map.insert("rejection".to_string(), json!(rejected.kind));
    }
    if let (Some(attempt), Value::Object(map)) = (
        report.task_update.as_ref().and_then(|u| u.attempt),
        &mut line,
    ) {
        // The number the task file's `review_history` gives this review.
        map.insert("attempt".to_string(), json!(attempt));
    }
    if let (Some(human), Value::Object(map)) = (&report.human_review, &mut line) {
        map.insert("human_review".to_string(), json!(human.status));
    }
    if let (Some(defect), Value::Object(map)) = (&report.defect, &mut line) {
        map.insert("defect".to_string(), json!(defect.name));
        if let Some(found) = &defect.speed {
            map.insert(
                "defect_check".to_string(),
                json!({
                    "scope_violations": found.scope_violations.len(),
                    "lines": found.size.lines,
                    "files": found.size.files,
                    "large_diff": found.size.large,
                    "test_changes": found.test_changes.len(),
                }),
            );
        }
    }
    if let Value::Object(map) = &mut line {
        map.insert("cost".to_string(), json!(report.cost));
    }
    append_log_line(root, &line)
}

/// The rules speed overruled the model by, each once (a rule that refused
/// six citations is one reason the approval fell).
fn rules(report: &Report) -> Vec<crate::verdict::Rule> {
    let mut out = Vec::new();
    for o in &report.overrules {
        if !out.contains(&o.rule) {
            out.push(o.rule);
        }
    }
    out
}

/// The tokens of a review's line, as the providers counted them (the
/// cached parts are parts of `prompt`), and speed's own count of the
/// prompt it assembled; `counted_by: "speed"` when a provider reported no
/// usage (a command such as `claude -p`) and the figures are speed's count
/// of what was sent and answered.
fn tokens(report: &Report) -> Value {
    let t = &report.tokens;
    json!({"prompt": t.prompt, "completion": t.completion,
           "cache_read": t.cache_read, "cache_write": t.cache_write,
           "counted": t.prompt_counted, "counted_by": t.counted_by})
}

/// Append one line to the review log: a review's, or an override's.
pub fn append_log_line(root: &Path, line: &Value) -> Result<(), Error> {
    // The safety net: no log line holds a secret, whoever wrote it.
    let mut line = line.clone();
    crate::secrets::net::json(&mut line, "the review log");
    let text = serde_json::to_string(&line).unwrap_or_default();
    Ok(fsx::append_line(&area(root), &root.join(LOG_FILE), &text)?)
}
