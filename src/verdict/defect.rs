//! Defect-fix reviews: the two fields their verdict must carry, and the
//! rules speed applies on top of the ordinary decision. speed establishes
//! the fix's scope and whether the reproducing test was changed itself
//! (`crate::defects`); the caller passes those facts in as plain text, so
//! this part still knows nothing of git or files.
//!
//! An approval falls when speed found a changed path outside the triage's
//! `affected_files`, when the review's own `defect_scope_check` says
//! `scope_ok: false` or it lists scope violations of its own, or when a
//! later commit changed the test that reproduced the defect. speed's
//! findings are issues of the feedback whatever the model said.

use serde_json::{Value, json};

use super::decide::{Decision, Overrule, Rule};
use super::schema::{Issue, Kind, Severity, Verdict};
use super::validate::Problem;

/// What speed established about a fix without the model.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Facts {
    /// Changed paths outside the triage's `affected_files`: (path, why).
    pub scope_violations: Vec<(String, String)>,
    /// Changes a later commit made to the reproducing test: (path, what).
    pub test_changes: Vec<(String, String)>,
}

/// The defect fields the answer lacks: `defect_scope_check` must be an
/// object and `scope_violations` an array (an empty one when there is
/// none). Types inside them are `validate`'s job.
pub fn missing_fields(value: &Value) -> Vec<Problem> {
    let mut problems = Vec::new();
    let Some(obj) = value.as_object() else {
        return problems;
    };
    match obj.get("defect_scope_check") {
        Some(Value::Object(_)) => {}
        _ => problems.push(Problem {
            path: "defect_scope_check".to_string(),
            message: "required in a defect-fix review: {\"scope_ok\": true or false, \"large_diff\": true or false}".to_string(),
        }),
    }
    match obj.get("scope_violations") {
        Some(Value::Array(_)) => {}
        _ => problems.push(Problem {
            path: "scope_violations".to_string(),
            message: "required in a defect-fix review: an array of {file, description}, empty when the fix stays in scope".to_string(),
        }),
    }
    problems
}

/// The verdict schema of a defect-fix review: the reviewer's, with
/// `defect_scope_check` and `scope_violations` required (never null).
pub fn json_schema() -> Value {
    let mut schema = super::json_schema();
    if let Some(properties) = schema.get_mut("properties").and_then(Value::as_object_mut) {
        properties.insert(
            "defect_scope_check".to_string(),
            json!({
                "type": "object",
                "properties": {
                    "scope_ok": {"type": "boolean", "description": "The fix changes only what correcting the defect needs"},
                    "large_diff": {"type": "boolean", "description": "More changed lines or files than a defect fix should need"},
                },
                "required": ["scope_ok", "large_diff"],
                "additionalProperties": false,
            }),
        );
        properties.insert(
            "scope_violations".to_string(),
            json!({
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "file": {"type": "string"},
                        "description": {"type": "string", "description": "Why this change is outside the defect's scope"},
                    },
                    "required": ["file", "description"],
                    "additionalProperties": false,
                },
                "description": "Every change beyond correcting the defect; empty when the fix stays in scope",
            }),
        );
    }
    if let Some(required) = schema.get_mut("required").and_then(Value::as_array_mut) {
        for key in ["defect_scope_check", "scope_violations"] {
            if !required.iter().any(|r| r == key) {
                required.push(Value::from(key));
            }
        }
    }
    schema
}

/// Applies the defect rules to a decision already made by `decide`.
pub fn apply(decision: &mut Decision, verdict: &Verdict, facts: &Facts) {
    let approved = verdict.verdict == Kind::Approve;
    let mut overrule = |rule: Rule, reason: String| {
        if approved {
            decision.overrules.push(Overrule { rule, reason });
        }
    };
    for (path, why) in &facts.scope_violations {
        overrule(
            Rule::OutsideAffectedFiles,
            format!("speed found a change outside the triage's affected_files: {why}"),
        );
        decision.added_issues.push(Issue {
            severity: Severity::Major,
            file: Some(path.clone()),
            line: None,
            end_line: None,
            message: format!("Out of the defect's scope: {why}."),
            suggestion: "Revert this change: a defect fix changes only the files its triage names. If the fix truly needs it, the triage's affected_files must be corrected first.".to_string(),
            dimension: None,
        });
    }
    if let Some(check) = &verdict.defect_scope_check {
        if !check.scope_ok {
            overrule(
                Rule::ScopeNotOk,
                "the review's own defect_scope_check says scope_ok: false".to_string(),
            );
        }
    }
    let listed = verdict.scope_violations.len();
    if listed > 0 && verdict.defect_scope_check.is_some_and(|c| c.scope_ok) {
        overrule(
            Rule::ScopeNotOk,
            format!(
                "the review lists {listed} scope violation{} of its own",
                if listed == 1 { "" } else { "s" }
            ),
        );
    }
    for (path, what) in &facts.test_changes {
        overrule(Rule::ReproducingTestChanged, what.clone());
        decision.added_issues.push(Issue {
            severity: Severity::Major,
            file: Some(path.clone()),
            line: None,
            end_line: None,
            message: format!("The test that reproduced the defect was changed: {what}."),
            suggestion: "Restore the reproducing test as its commit wrote it and make the fix pass it unchanged.".to_string(),
            dimension: None,
        });
    }
    if !decision.overrules.is_empty() {
        decision.final_verdict = Kind::RequestChanges;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verdict::schema::{DefectScopeCheck, ScopeViolation};
    use serde_json::json;

    fn approval() -> Verdict {
        Verdict {
            verdict: Kind::Approve,
            expectations: "loaned books show as unavailable".into(),
            criteria: vec![],
            spec_verification: vec![],
            missing_from_spec: vec![],
            out_of_scope: vec![],
            issues: vec![],
            strengths: vec![],
            defect_scope_check: Some(DefectScopeCheck {
                scope_ok: true,
                large_diff: false,
            }),
            scope_violations: vec![],
            dimensions: Default::default(),
            rejection: None,
            previous_findings: Vec::new(),
        }
    }

    /// The ordinary decision, which has nothing against these verdicts.
    fn decided(v: &Verdict) -> Decision {
        crate::verdict::decide(
            v,
            &crate::verdict::DecisionInput {
                find_quote: &|_| Err(crate::verdict::QuoteMiss::NotInSpec),
                spec_sent: false,
                spec_edits: vec![],
                criteria_ids: vec![],
                sources: None,
                unseen: None,
            },
        )
    }

    fn rules(d: &Decision) -> Vec<&'static str> {
        d.overrules.iter().map(|o| o.rule.as_str()).collect()
    }

    #[test]
    fn the_schema_requires_both_fields() {
        let schema = json_schema();
        assert_eq!(schema["properties"]["defect_scope_check"]["type"], "object");
        let required = schema["required"].as_array().unwrap();
        assert!(required.contains(&json!("defect_scope_check")));
        assert!(required.contains(&json!("scope_violations")));
    }

    #[test]
    fn parse_defect_asks_for_what_is_missing() {
        let answer = r#"{"verdict": "approve", "expectations": "x", "criteria": [], "spec_verification": [], "issues": []}"#;
        let err = crate::verdict::parse_defect(answer).unwrap_err();
        let text = err.to_string();
        assert!(
            text.contains("defect_scope_check: required in a defect-fix review"),
            "{text}"
        );
        assert!(text.contains("scope_violations: required"), "{text}");
        let ok = r#"{"verdict": "approve", "expectations": "x", "criteria": [], "spec_verification": [], "issues": [],
                     "defect_scope_check": {"scope_ok": true, "large_diff": false}, "scope_violations": []}"#;
        let v = crate::verdict::parse_defect(ok).unwrap();
        assert!(v.defect_scope_check.is_some_and(|c| c.scope_ok));
        // Both kinds of problem in one correction.
        let both = r#"{"verdict": "maybe", "expectations": "x", "criteria": [], "spec_verification": [], "issues": []}"#;
        let text = crate::verdict::parse_defect(both).unwrap_err().to_string();
        assert!(
            text.contains("verdict:") && text.contains("defect_scope_check:"),
            "{text}"
        );
    }

    #[test]
    fn required_fields() {
        assert!(missing_fields(&json!({"defect_scope_check": {"scope_ok": true, "large_diff": false}, "scope_violations": []})).is_empty());
        let problems = missing_fields(&json!({"defect_scope_check": null}));
        let paths: Vec<&str> = problems.iter().map(|p| p.path.as_str()).collect();
        assert_eq!(paths, ["defect_scope_check", "scope_violations"]);
    }

    #[test]
    fn a_clean_approval_stands() {
        let v = approval();
        let mut d = decided(&v);
        apply(&mut d, &v, &Facts::default());
        assert_eq!(d.final_verdict, Kind::Approve);
        assert!(d.overrules.is_empty() && d.added_issues.is_empty());
    }

    #[test]
    fn speeds_own_violations_overrule_and_are_issues() {
        let v = approval();
        let mut d = decided(&v);
        let facts = Facts {
            scope_violations: vec![(
                "catalog/src/util.rs".into(),
                "catalog/src/util.rs is changed, but the triage's affected_files does not list it"
                    .into(),
            )],
            test_changes: vec![(
                "tests/search.rs".into(),
                "tests/search.rs: test code written by commit abc was changed by def".into(),
            )],
        };
        apply(&mut d, &v, &facts);
        assert_eq!(d.final_verdict, Kind::RequestChanges);
        assert_eq!(
            rules(&d),
            ["outside_affected_files", "reproducing_test_changed"]
        );
        assert_eq!(d.added_issues.len(), 2);
        assert_eq!(
            d.added_issues[0].file.as_deref(),
            Some("catalog/src/util.rs")
        );
        assert_eq!(d.added_issues[0].severity, Severity::Major);

        // A request for changes keeps speed's findings as issues.
        let mut v = approval();
        v.verdict = Kind::RequestChanges;
        let mut d = decided(&v);
        apply(&mut d, &v, &facts);
        assert!(d.overrules.is_empty());
        assert_eq!(d.added_issues.len(), 2);
        assert_eq!(d.final_verdict, Kind::RequestChanges);
    }

    #[test]
    fn the_models_own_scope_findings_overrule_its_approval() {
        let mut v = approval();
        v.defect_scope_check = Some(DefectScopeCheck {
            scope_ok: false,
            large_diff: false,
        });
        let mut d = decided(&v);
        apply(&mut d, &v, &Facts::default());
        assert_eq!(rules(&d), ["scope_not_ok"]);

        let mut v = approval();
        v.scope_violations = vec![ScopeViolation {
            file: "a.rs".into(),
            description: "renames a variable".into(),
        }];
        let mut d = decided(&v);
        apply(&mut d, &v, &Facts::default());
        assert_eq!(rules(&d), ["scope_not_ok"]);
        assert_eq!(
            d.overrules[0].reason,
            "the review lists 1 scope violation of its own"
        );
        assert_eq!(d.final_verdict, Kind::RequestChanges);
    }
}
