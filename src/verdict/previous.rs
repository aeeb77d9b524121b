//! A re-review's previous findings: the blocking findings of the last
//! review, listed in the prompt as `PF-1`, `PF-2`, …, and the answer's word
//! on each (`previous_findings: [{id, status, evidence}]`). The answer must
//! rate every one listed, each once, and no other; then speed checks each
//! claim against what changed since the last review (the caller says,
//! per finding, whether the interdiff touched it): a finding claimed
//! `resolved` or `obsolete` whose location the interdiff did not touch is
//! recorded as `unresolved`, and an unresolved blocking finding overrules
//! an approval (`previous_finding_unresolved`).
//!
//! Plain data in and out: what the interdiff touched is the caller's fact.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::decide::{Decision, Overrule, Rule};
use super::schema::{Issue, Kind, PreviousStatus, Severity, Verdict};
use super::validate::Problem;

/// A previous finding as speed knows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fact {
    /// `PF-1`, …
    pub id: String,
    /// It blocked the previous review's approval.
    pub blocking: bool,
    pub file: Option<String>,
    pub line: Option<u64>,
    /// What the previous review said.
    pub message: String,
    /// The changes since the previous review touch its location: its file
    /// and line, its file when it has no line, anything when it has no file.
    pub touched: bool,
    /// Who raised it when a person did (`speed reject`): their reason is a
    /// finding like a review's; None for a review's.
    pub person: Option<String>,
}

impl Fact {
    /// `src/a.rs:12`, `src/a.rs`, or `(no location)`.
    pub fn location(&self) -> String {
        match (&self.file, self.line) {
            (Some(file), Some(line)) => format!("{file}:{line}"),
            (Some(file), None) => file.clone(),
            (None, _) => "(no location)".to_string(),
        }
    }

    /// `PF-1 at src/a.rs:12`, or `PF-2 (Ana's rejection)` for a person's.
    pub fn label(&self) -> String {
        match &self.person {
            Some(by) => format!("{} ({by}'s rejection)", self.id),
            None => format!("{} at {}", self.id, self.location()),
        }
    }

    /// Where it comes from: `review` or `person`.
    pub fn source(&self) -> Source {
        match self.person {
            Some(_) => Source::Person,
            None => Source::Review,
        }
    }
}

/// Who raised a previous finding.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// A review's blocking finding.
    #[default]
    Review,
    /// A person's rejection (`speed reject`): its reason.
    Person,
}

/// What speed recorded of one previous finding.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Check {
    pub id: String,
    pub location: String,
    pub message: String,
    pub blocking: bool,
    /// What the model said; None when it did not rate it.
    pub claimed: Option<PreviousStatus>,
    /// What speed records.
    pub status: PreviousStatus,
    pub evidence: String,
    /// Why speed records another status than the model's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub overruled: Option<String>,
    /// A review's finding or a person's reason (older reports: a review's).
    #[serde(default)]
    pub source: Source,
    /// The person, for a person's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub by: Option<String>,
}

/// The previous-findings problems of an answer that was shown `ids`: each
/// must be rated once, no other may be; shown none, the answer rates none.
/// Types inside the entries are `validate`'s job.
pub fn missing(value: &Value, ids: &[&str]) -> Vec<Problem> {
    let given = match value.get("previous_findings") {
        Some(Value::Array(items)) => items.as_slice(),
        // A wrong type is validation's problem; here nothing was rated.
        Some(Value::Null) | None => &[],
        Some(_) => return Vec::new(),
    };
    let mut problems = Vec::new();
    if ids.is_empty() {
        if !given.is_empty() {
            problems.push(Problem {
                path: "previous_findings".to_string(),
                message:
                    "no previous findings were listed: give previous_findings as an empty array"
                        .to_string(),
            });
        }
        return problems;
    }
    let mut counts = vec![0usize; ids.len()];
    for (i, item) in given.iter().enumerate() {
        let Some(id) = item.get("id").and_then(Value::as_str) else {
            continue;
        };
        match ids
            .iter()
            .position(|want| want.eq_ignore_ascii_case(id.trim()))
        {
            Some(n) => counts[n] += 1,
            None => problems.push(Problem {
                path: format!("previous_findings[{i}].id"),
                message: format!(
                    "{:?} is not one of the previous findings listed ({})",
                    id.chars().take(40).collect::<String>(),
                    ids.join(", ")
                ),
            }),
        }
    }
    for (id, count) in ids.iter().zip(counts) {
        match count {
            0 => problems.push(Problem {
                path: format!("previous_findings.{id}"),
                message:
                    "is required: say whether it is resolved, unresolved or obsolete, with evidence"
                        .to_string(),
            }),
            1 => {}
            n => problems.push(Problem {
                path: format!("previous_findings.{id}"),
                message: format!("is rated {n} times: rate it once"),
            }),
        }
    }
    problems
}

/// `schema` with `previous_findings` required: the same for every review,
/// so the schema stays in the prompt's stable part; which ids must be rated
/// is the prompt's word and `missing`'s check.
pub fn with_previous(mut schema: Value) -> Value {
    let statuses: Vec<&str> = PreviousStatus::ALL.iter().map(|s| s.as_str()).collect();
    let property = json!({
        "type": "array",
        "description": "One entry per previous finding listed (PF-1, …); empty when none is",
        "items": {
            "type": "object",
            "properties": {
                "id": {"type": "string"},
                "status": {"type": "string", "enum": statuses},
                "evidence": {"type": "string"},
            },
            "required": ["id", "status", "evidence"],
            "additionalProperties": false,
        },
    });
    if let Some(Value::Object(props)) = schema.get_mut("properties") {
        props.insert("previous_findings".to_string(), property);
    }
    if let Some(Value::Array(required)) = schema.get_mut("required") {
        required.push(Value::from("previous_findings"));
    }
    schema
}

/// Checks each claim against `facts` and applies the rule to a decision
/// already made: an unresolved blocking finding (as claimed, as recorded
/// because the interdiff did not touch it, or not rated at all) overrules
/// an approval. Returns what speed records of each finding.
pub fn apply(decision: &mut Decision, verdict: &Verdict, facts: &[Fact]) -> Vec<Check> {
    let approved = verdict.verdict == Kind::Approve;
    let mut checks = Vec::with_capacity(facts.len());
    for fact in facts {
        let claim = verdict
            .previous_findings
            .iter()
            .find(|c| c.id.eq_ignore_ascii_case(&fact.id));
        let claimed = claim.map(|c| c.status);
        let (status, overruled) = match claimed {
            None => (
                PreviousStatus::Unresolved,
                Some("the review did not rate it".to_string()),
            ),
            Some(PreviousStatus::Resolved | PreviousStatus::Obsolete) if !fact.touched => (
                PreviousStatus::Unresolved,
                Some(match &fact.person {
                    // A person's reason has no place: only a change can
                    // answer it, and there is none since they rejected.
                    Some(_) => format!(
                        "claimed {}, but nothing changed since the rejection",
                        claimed.map_or("", PreviousStatus::as_str)
                    ),
                    None => format!(
                        "claimed {}, but the changes since the last review do not touch {}",
                        claimed.map_or("", PreviousStatus::as_str),
                        fact.location()
                    ),
                }),
            ),
            Some(status) => (status, None),
        };
        if status == PreviousStatus::Unresolved && fact.blocking {
            if approved {
                let why = overruled
                    .as_deref()
                    .map(|o| format!(" ({o})"))
                    .unwrap_or_default();
                decision.overrules.push(Overrule {
                    rule: Rule::PreviousFindingUnresolved,
                    reason: format!(
                        "previous finding {} is unresolved{why}: {}",
                        fact.label(),
                        fact.message
                    ),
                });
            }
            // The model's own "unresolved" is its issue already; speed's
            // reading is said in the feedback.
            if overruled.is_some() {
                decision.added_issues.push(Issue {
                    severity: Severity::Major,
                    file: fact.file.clone(),
                    line: fact.line,
                    end_line: None,
                    message: format!(
                        "Previous finding {} is still open: {}",
                        match fact.person {
                            Some(_) => fact.label(),
                            None => fact.id.clone(),
                        },
                        fact.message
                    ),
                    suggestion: "Fix it, or say with evidence why it no longer applies."
                        .to_string(),
                    dimension: None,
                });
            }
        }
        checks.push(Check {
            id: fact.id.clone(),
            location: fact.location(),
            message: fact.message.clone(),
            blocking: fact.blocking,
            claimed,
            status,
            evidence: claim.map(|c| c.evidence.clone()).unwrap_or_default(),
            overruled,
            source: fact.source(),
            by: fact.person.clone(),
        });
    }
    if !decision.overrules.is_empty() {
        decision.final_verdict = Kind::RequestChanges;
    }
    checks
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verdict::schema::PreviousClaim;

    fn fact(id: &str, touched: bool) -> Fact {
        Fact {
            id: id.to_string(),
            blocking: true,
            file: Some("src/a.rs".to_string()),
            line: Some(12),
            message: "the cap is not checked".to_string(),
            touched,
            person: None,
        }
    }

    fn decision(model: Kind) -> Decision {
        Decision {
            model,
            final_verdict: model,
            overrules: Vec::new(),
            quotes: Vec::new(),
            citations: Vec::new(),
            added_issues: Vec::new(),
        }
    }

    fn verdict(claims: &[(&str, PreviousStatus)]) -> Verdict {
        let mut v: Verdict = serde_json::from_value(json!({
            "verdict": "approve", "expectations": "", "criteria": [],
            "spec_verification": [], "issues": []
        }))
        .unwrap();
        v.previous_findings = claims
            .iter()
            .map(|(id, status)| PreviousClaim {
                id: id.to_string(),
                status: *status,
                evidence: "src/a.rs:12".to_string(),
            })
            .collect();
        v
    }

    #[test]
    fn a_touched_resolved_finding_lets_the_approval_stand() {
        let mut d = decision(Kind::Approve);
        let checks = apply(
            &mut d,
            &verdict(&[("PF-1", PreviousStatus::Resolved)]),
            &[fact("PF-1", true)],
        );
        assert_eq!(d.final_verdict, Kind::Approve);
        assert_eq!(checks[0].status, PreviousStatus::Resolved);
        assert_eq!(checks[0].overruled, None);
    }

    #[test]
    fn an_untouched_resolved_claim_is_recorded_unresolved_and_overrules() {
        let mut d = decision(Kind::Approve);
        let v = verdict(&[
            ("PF-1", PreviousStatus::Resolved),
            ("PF-2", PreviousStatus::Obsolete),
        ]);
        let checks = apply(&mut d, &v, &[fact("PF-1", false), fact("PF-2", false)]);
        assert_eq!(d.final_verdict, Kind::RequestChanges);
        assert_eq!(d.overrules.len(), 2);
        assert!(
            d.overrules[0].reason.contains("do not touch src/a.rs:12"),
            "{:?}",
            d.overrules
        );
        assert_eq!(checks[1].claimed, Some(PreviousStatus::Obsolete));
        assert_eq!(checks[1].status, PreviousStatus::Unresolved);
        assert_eq!(d.added_issues.len(), 2);
    }

    #[test]
    fn an_unresolved_or_unrated_blocking_finding_overrules_and_a_non_blocking_one_does_not() {
        let mut d = decision(Kind::Approve);
        apply(
            &mut d,
            &verdict(&[("PF-1", PreviousStatus::Unresolved)]),
            &[fact("PF-1", true)],
        );
        assert_eq!(d.overrules[0].rule, Rule::PreviousFindingUnresolved);
        let mut d = decision(Kind::Approve);
        apply(&mut d, &verdict(&[]), &[fact("PF-1", true)]);
        assert!(d.overrules[0].reason.contains("did not rate it"));
        let mut d = decision(Kind::Approve);
        let minor = Fact {
            blocking: false,
            ..fact("PF-1", false)
        };
        apply(
            &mut d,
            &verdict(&[("PF-1", PreviousStatus::Unresolved)]),
            &[minor],
        );
        assert_eq!(d.final_verdict, Kind::Approve);
        // A request for changes records, and overrules nothing.
        let mut d = decision(Kind::RequestChanges);
        let mut rejected = verdict(&[("PF-1", PreviousStatus::Resolved)]);
        rejected.verdict = Kind::RequestChanges;
        let checks = apply(&mut d, &rejected, &[fact("PF-1", false)]);
        assert!(d.overrules.is_empty());
        assert_eq!(checks[0].status, PreviousStatus::Unresolved);
    }

    #[test]
    fn every_listed_finding_is_rated_once_and_no_other() {
        let ids = ["PF-1", "PF-2"];
        let value = |items: Value| json!({"previous_findings": items});
        assert!(missing(&value(json!([{"id": "PF-1"}, {"id": "pf-2"}])), &ids).is_empty());
        let p = missing(
            &value(json!([{"id": "PF-1"}, {"id": "PF-1"}, {"id": "PF-9"}])),
            &ids,
        );
        let text: Vec<String> = p.iter().map(ToString::to_string).collect();
        assert_eq!(text.len(), 3, "{text:?}");
        assert!(text[0].contains("previous_findings[2].id") && text[0].contains("PF-9"));
        assert!(text[1].contains("PF-1: is rated 2 times"));
        assert!(text[2].contains("PF-2: is required"));
        assert_eq!(missing(&json!({}), &ids).len(), 2);
        // Shown none, rating some is a problem; an empty list is not.
        assert_eq!(missing(&value(json!([{"id": "PF-1"}])), &[]).len(), 1);
        assert!(missing(&value(json!([])), &[]).is_empty());
    }

    #[test]
    fn the_schema_asks_for_previous_findings_the_same_way_every_time() {
        let s = with_previous(crate::verdict::json_schema());
        let items = &s["properties"]["previous_findings"]["items"];
        assert_eq!(items["required"], json!(["id", "status", "evidence"]));
        assert_eq!(
            items["properties"]["status"]["enum"],
            json!(["resolved", "unresolved", "obsolete"])
        );
        assert!(
            s["required"]
                .as_array()
                .unwrap()
                .contains(&json!("previous_findings"))
        );
    }
}
