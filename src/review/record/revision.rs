//! What a request for changes hands the builder's next attempt besides its
//! feedback (seed 001's RevisionContext): what blocks the approval, one
//! object each with its dimension, place and required action, and whether
//! the model rejected the plan rather than the work.

use crate::ledger::Report;
use crate::ledger::report::Evidence;
use crate::verdict::{CriterionStatus, Rule};

/// What stands in the way of an approval, one object each, for the
/// builder's revision context: blocking issues (the model's and speed's,
/// with their dimension, place and required action), unmet criteria, what
/// is missing from the spec, speed's blocking findings, dimensions under
/// their minimum, and speed's other reasons to overrule.
pub fn blocking_issues(report: &Report, evidence: &Evidence) -> Vec<serde_json::Value> {
    use serde_json::{Value, json};
    let mut out: Vec<Value> = Vec::new();
    let mut push = |message: String, extra: &[(&str, Option<String>)]| {
        let mut item = json!({ "message": message });
        for (key, value) in extra {
            if let (Some(value), Value::Object(map)) = (value, &mut item) {
                map.insert((*key).to_string(), Value::String(value.clone()));
            }
        }
        if !out.contains(&item) {
            out.push(item);
        }
    };
    let added = evidence.decision.iter().flat_map(|d| &d.added_issues);
    let adherence = Some("requirement_adherence".to_string());
    if let Some(review) = &report.review {
        for issue in review.issues.iter().chain(added) {
            if !issue.severity.is_blocking() {
                continue;
            }
            let at = match (&issue.file, issue.line) {
                (Some(file), Some(line)) => Some(format!("{file}:{line}")),
                (Some(file), None) => Some(file.clone()),
                _ => None,
            };
            let action = Some(issue.suggestion.clone()).filter(|s| !s.trim().is_empty());
            push(
                issue.message.clone(),
                &[
                    ("severity", Some(issue.severity.as_str().to_string())),
                    ("dimension", issue.dimension.clone()),
                    ("location", at),
                    ("required_action", action),
                ],
            );
        }
        for c in review
            .criteria
            .iter()
            .filter(|c| c.status == CriterionStatus::Unmet)
        {
            push(
                format!("{} is unmet: {}", c.id, c.evidence),
                &[("dimension", adherence.clone())],
            );
        }
        for m in &review.missing_from_spec {
            let what = if m.description.trim().is_empty() {
                &m.spec_quote
            } else {
                &m.description
            };
            push(
                format!("Missing from the spec: {what}"),
                &[("dimension", adherence.clone())],
            );
        }
    }
    for f in report.checks.iter().filter(|f| f.blocking()) {
        let first = f.message.lines().next().unwrap_or_default().to_string();
        push(
            first,
            &[("check", Some(f.check.clone())), ("location", f.location())],
        );
    }
    if let Some(scores) = &report.scores {
        for r in scores.failing() {
            push(
                format!(
                    "{} scored {}, under its minimum of {}",
                    r.name,
                    r.score,
                    r.min_score.unwrap_or_default()
                ),
                &[("dimension", Some(r.name.clone()))],
            );
        }
    }
    let listed = [
        Rule::BlockingIssue,
        Rule::CheckFailed,
        Rule::UnmetCriterion,
        Rule::MissingRequirement,
        Rule::DimensionBelowMinimum,
    ];
    for o in report
        .overrules
        .iter()
        .filter(|o| !listed.contains(&o.rule))
    {
        push(
            o.reason.clone(),
            &[("rule", Some(o.rule.as_str().to_string()))],
        );
    }
    if out.is_empty() {
        let first = report
            .feedback
            .as_deref()
            .and_then(|f| f.lines().map(str::trim).find(|l| !l.is_empty()));
        out.extend(first.map(|line| json!({ "message": line })));
    }
    out
}
