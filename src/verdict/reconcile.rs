//! The reconcile turn: an answer that contradicts itself is asked about
//! once more, in the same conversation, before speed decides. Two
//! contradictions, both of the model's own words:
//!
//! - an approval with a dimension under its minimum, or a weighted overall
//!   under `review.pass_score` (speed would overrule it without a word to
//!   the model; the turn names each score and its minimum, and asks for
//!   the blocking issue, or for the score the model meant);
//! - a `request_changes` that names nothing blocking (no critical or major
//!   issue, no unmet criterion, no unsatisfied or missing requirement, no
//!   score under its minimum, no previous finding left open, no plan to
//!   redo, a defect fix's scope not faulted): a developer would be told
//!   "no specific issues"; the turn asks what must change.
//!
//! The second answer decides under every rule, as a first answer would:
//! a score still under its minimum overrules the approval, and a request
//! still naming nothing is kept with feedback saying the reviewer gave no
//! reason (`gave_no_reason`). No turn when it cannot change the decision:
//! speed's own checks already block, or the approval falls anyway for a
//! blocking issue, an unmet criterion or a requirement of its own.
//!
//! Pure: the answer and the thresholds in, the turn (or none) out.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::dimensions::{self, Dimension, Scores};
use super::schema::{CriterionStatus, Kind, PreviousStatus, RejectionKind, Verdict};

/// Why an answer contradicts itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Reason {
    /// An approval with a score under its minimum, or an overall under
    /// the pass score.
    ApprovalUnderMinimum,
    /// A request for changes that names nothing blocking.
    NothingBlocking,
}

impl Reason {
    pub fn as_str(self) -> &'static str {
        match self {
            Reason::ApprovalUnderMinimum => "approval_under_minimum",
            Reason::NothingBlocking => "nothing_blocking",
        }
    }
}

/// The turn to ask: why, what the first answer rated, and the message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Turn {
    pub reason: Reason,
    /// The first answer's score of each dimension asked, by name.
    pub first_scores: BTreeMap<String, u32>,
    /// Its weighted overall; None without dimensions.
    pub first_overall: Option<u32>,
    /// What the model is told.
    pub text: String,
    /// The contradiction on one line, for progress and reports ("it
    /// approves with test_quality 68, under its minimum of 70").
    pub summary: String,
}

/// The turn `answer` calls for, or None when it agrees with itself (or
/// when no turn could change speed's decision). `asked` are the
/// dimensions the review rates; `checks_block`: speed's own checks found a
/// critical or major problem, which decides without the model.
pub fn turn(
    answer: &Verdict,
    asked: &[&Dimension],
    pass_score: u32,
    checks_block: bool,
) -> Option<Turn> {
    if checks_block {
        return None;
    }
    let scores = dimensions::score(answer, asked, pass_score);
    let (reason, text, summary) = match answer.verdict {
        Kind::Approve => {
            let scores = scores.as_ref()?;
            let below = under_minimum(scores);
            if below.is_empty() || falls_anyway(answer) {
                return None;
            }
            let summary = format!(
                "it approves with {}",
                below
                    .iter()
                    .map(|line| line.trim_start_matches("- ").to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            );
            (Reason::ApprovalUnderMinimum, approval_text(&below), summary)
        }
        Kind::RequestChanges => {
            if names_a_reason(answer, scores.as_ref()) {
                return None;
            }
            (
                Reason::NothingBlocking,
                nothing_blocking_text(),
                "it requests changes but names nothing that blocks approval".to_string(),
            )
        }
        Kind::ChecksPassed => return None,
    };
    Some(Turn {
        reason,
        first_scores: answer
            .dimensions
            .iter()
            .filter(|(name, _)| asked.iter().any(|d| &d.name == *name))
            .map(|(name, rating)| (name.clone(), rating.score))
            .collect(),
        first_overall: scores.map(|s| s.overall),
        text,
        summary,
    })
}

/// Whether a request for changes says what blocks approval: something a
/// developer can act on, or a plan to redo.
pub fn names_a_reason(answer: &Verdict, scores: Option<&Scores>) -> bool {
    let blocking_issue = answer.issues.iter().any(|i| i.severity.is_blocking());
    let unmet = answer
        .criteria
        .iter()
        .any(|c| c.status == CriterionStatus::Unmet);
    let unsatisfied = answer.spec_verification.iter().any(|c| !c.satisfied);
    let missing = !answer.missing_from_spec.is_empty();
    let low = scores.is_some_and(|s| !under_minimum(s).is_empty());
    let open = answer
        .previous_findings
        .iter()
        .any(|c| c.status == PreviousStatus::Unresolved);
    let replan = answer
        .rejection
        .as_ref()
        .is_some_and(|r| r.kind == RejectionKind::Plan);
    let scope = answer.defect_scope_check.is_some_and(|c| !c.scope_ok)
        || !answer.scope_violations.is_empty();
    blocking_issue || unmet || unsatisfied || missing || low || open || replan || scope
}

/// A request for changes that names nothing blocking, as the feedback a
/// developer gets says it (after a turn, `asked` says the reviewer was
/// asked and still gave none).
pub fn gave_no_reason(asked: bool) -> String {
    format!(
        "The reviewer requested changes but gave no reason that blocks approval: no critical or major issue, no unmet criterion, no unsatisfied or missing requirement, no score under its minimum{}. Nothing below is required of this attempt; a person may review it (speed approve or speed reject).",
        if asked {
            ", even when asked what must change"
        } else {
            ""
        }
    )
}

/// An approval that falls whatever its scores: its own blocking issue,
/// unmet criterion, or unsatisfied or missing requirement.
fn falls_anyway(answer: &Verdict) -> bool {
    answer.issues.iter().any(|i| i.severity.is_blocking())
        || answer
            .criteria
            .iter()
            .any(|c| c.status == CriterionStatus::Unmet)
        || answer.spec_verification.iter().any(|c| !c.satisfied)
        || !answer.missing_from_spec.is_empty()
}

/// Each score under its threshold, as a line of the turn.
fn under_minimum(scores: &Scores) -> Vec<String> {
    let mut out: Vec<String> = scores
        .failing()
        .map(|r| {
            format!(
                "- {}: {} (minimum {})",
                r.name,
                r.score,
                r.min_score.unwrap_or_default()
            )
        })
        .collect();
    if !scores.pass_criteria_met.overall_score_above_threshold {
        out.push(format!(
            "- the weighted overall: {} (review.pass_score {})",
            scores.overall, scores.pass_score
        ));
    }
    out
}

fn approval_text(below: &[String]) -> String {
    format!(
        "Your answer approves, but speed holds the scores to their minimums and these are under them:\n{}\nAn approval with a score under its minimum is not an approval, so your answer contradicts itself. Answer again with the whole JSON object, in the same shape: if something must change, request changes and name the blocking problem as a `critical` or `major` issue; if the change is sound and a score is not what you meant, correct that score. Keep everything else as you meant it.",
        below.join("\n")
    )
}

fn nothing_blocking_text() -> String {
    "Your answer requests changes but names nothing that blocks approval: no `critical` or `major` issue, no unmet criterion, no unsatisfied or missing requirement, no score under its minimum. A developer cannot act on a rejection without its reason. What must change? Answer again with the whole JSON object, in the same shape: name each change that must be made as a `critical` or `major` issue (or mark the criterion unmet, or the requirement unsatisfied or missing); if nothing must change, approve.".to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verdict::schema::{DimensionScore, Issue, Severity};
    use serde_json::json;

    fn answer(verdict: &str, scores: &[(&str, u32)]) -> Verdict {
        let mut v: Verdict = serde_json::from_value(json!({
            "verdict": verdict, "expectations": "", "criteria": [],
            "spec_verification": [], "issues": []
        }))
        .unwrap();
        for (name, score) in scores {
            v.dimensions.insert(
                name.to_string(),
                DimensionScore {
                    score: *score,
                    reason: String::new(),
                },
            );
        }
        v
    }

    fn all(score: u32) -> Vec<(&'static str, u32)> {
        [
            "requirement_adherence",
            "code_quality",
            "pattern_consistency",
            "test_quality",
            "security_performance",
        ]
        .into_iter()
        .map(|n| (n, score))
        .collect()
    }

    fn issue(severity: Severity) -> Issue {
        Issue {
            severity,
            file: None,
            line: None,
            end_line: None,
            message: "m".into(),
            suggestion: String::new(),
            dimension: None,
        }
    }

    #[test]
    fn an_approval_under_a_minimum_names_each_score_and_its_minimum() {
        let scoring = dimensions::Scoring::default();
        let asked = scoring.asked(false);
        let mut scores = all(95);
        scores[3].1 = 68;
        let t = turn(&answer("approve", &scores), &asked, 75, false).unwrap();
        assert_eq!(t.reason, Reason::ApprovalUnderMinimum);
        assert!(
            t.text.contains("- test_quality: 68 (minimum 70)"),
            "{}",
            t.text
        );
        assert!(!t.text.contains("code_quality:"), "{}", t.text);
        assert_eq!(t.first_scores["test_quality"], 68);
        assert_eq!(t.summary, "it approves with test_quality: 68 (minimum 70)");
        assert_eq!(t.first_scores.len(), 5);
        // An overall under the pass score with every minimum met.
        let t = turn(&answer("approve", &all(72)), &asked, 75, false).unwrap();
        assert!(
            t.text
                .contains("- the weighted overall: 72 (review.pass_score 75)"),
            "{}",
            t.text
        );
        assert!(t.text.contains("- requirement_adherence: 72 (minimum 90)"));
        assert_eq!(t.first_overall, Some(72));
    }

    #[test]
    fn no_turn_when_the_answer_agrees_with_itself_or_nothing_could_change() {
        let scoring = dimensions::Scoring::default();
        let asked = scoring.asked(false);
        assert!(turn(&answer("approve", &all(95)), &asked, 75, false).is_none());
        // speed's checks block: the decision is made without the model.
        assert!(turn(&answer("approve", &all(50)), &asked, 75, true).is_none());
        assert!(turn(&answer("request_changes", &all(95)), &asked, 75, true).is_none());
        // The approval falls for its own major issue whatever its scores.
        let mut a = answer("approve", &all(50));
        a.issues.push(issue(Severity::Major));
        assert!(turn(&a, &asked, 75, false).is_none());
        // No dimensions asked: no scores to contradict.
        assert!(turn(&answer("approve", &[]), &[], 75, false).is_none());
    }

    #[test]
    fn a_request_for_changes_naming_nothing_blocking_is_asked_what_must_change() {
        let scoring = dimensions::Scoring::default();
        let asked = scoring.asked(false);
        let mut a = answer("request_changes", &all(95));
        a.issues.push(issue(Severity::Minor));
        let t = turn(&a, &asked, 75, false).unwrap();
        assert_eq!(t.reason, Reason::NothingBlocking);
        assert!(t.text.contains("What must change?"));
        // Each kind of reason is a reason.
        type Add = Box<dyn Fn(&mut Verdict)>;
        let reasons: Vec<Add> = vec![
            Box::new(|v| v.issues.push(issue(Severity::Critical))),
            Box::new(|v| {
                v.criteria
                    .push(serde_json::from_value(json!({"id": "AC-1", "status": "unmet"})).unwrap())
            }),
            Box::new(|v| {
                v.spec_verification.push(
                    serde_json::from_value(json!({"spec_quote": "q", "satisfied": false})).unwrap(),
                )
            }),
            Box::new(|v| {
                v.missing_from_spec
                    .push(serde_json::from_value(json!({"description": "d"})).unwrap())
            }),
            Box::new(|v| v.dimensions.get_mut("test_quality").unwrap().score = 40),
            Box::new(|v| {
                v.previous_findings.push(
                    serde_json::from_value(
                        json!({"id": "PF-1", "status": "unresolved", "evidence": ""}),
                    )
                    .unwrap(),
                )
            }),
            Box::new(|v| {
                v.rejection =
                    Some(serde_json::from_value(json!({"kind": "plan", "reason": "r"})).unwrap())
            }),
            Box::new(|v| {
                v.defect_scope_check = Some(crate::verdict::DefectScopeCheck {
                    scope_ok: false,
                    large_diff: false,
                })
            }),
        ];
        for (n, add) in reasons.iter().enumerate() {
            let mut v = answer("request_changes", &all(95));
            add(&mut v);
            assert!(turn(&v, &asked, 75, false).is_none(), "reason {n}");
        }
        // An implementation rejection's reason alone names nothing to fix.
        let mut v = answer("request_changes", &all(95));
        v.rejection = Some(
            serde_json::from_value(json!({"kind": "implementation", "reason": "meh"})).unwrap(),
        );
        assert!(turn(&v, &asked, 75, false).is_some());
    }

    #[test]
    fn the_feedback_says_the_reviewer_gave_no_reason() {
        assert!(gave_no_reason(true).contains("even when asked what must change"));
        assert!(!gave_no_reason(false).contains("even when asked"));
    }
}
