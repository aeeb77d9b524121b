//! What stood in a review's way, by kind and name, as its log line carries
//! it for `speed stats`: speed's checks that block (by check name), speed's
//! overrules (by rule), the model's critical and major issues (by the
//! dimension they name, `unnamed` when none) and dimensions scored under
//! their minimum, and the guardian's rejection and flags. Each reason once
//! per review: stats count the reviews a reason stood in the way of.
//!
//! Issues' dimensions and the scores are read from the report's JSON form,
//! the contract's shape (`review.issues[].dimension`, `scores.dimensions`),
//! so the reasons follow whichever of these the report carries.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::report::Report;

/// One reason of one review.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Reason {
    /// `check`, `overrule`, `dimension` or `guardian`.
    pub kind: String,
    pub name: String,
}

impl Reason {
    fn new(kind: &str, name: &str) -> Reason {
        Reason {
            kind: kind.to_string(),
            name: name.to_string(),
        }
    }
}

/// The name of a blocking issue that names no dimension.
pub const UNNAMED_DIMENSION: &str = "unnamed";

/// Every reason of `report`, each once, in the order above.
pub fn reasons(report: &Report) -> Vec<Reason> {
    let mut out: Vec<Reason> = Vec::new();
    let mut add = |reason: Reason| {
        if !out.contains(&reason) {
            out.push(reason);
        }
    };
    for finding in report.checks.iter().filter(|f| f.blocking()) {
        add(Reason::new("check", &finding.check));
    }
    for overrule in &report.overrules {
        add(Reason::new("overrule", overrule.rule.as_str()));
    }
    let json = serde_json::to_value(report).unwrap_or(Value::Null);
    for issue in json["review"]["issues"].as_array().into_iter().flatten() {
        if matches!(issue["severity"].as_str(), Some("critical" | "major")) {
            let dimension = issue["dimension"]
                .as_str()
                .map(str::trim)
                .filter(|d| !d.is_empty())
                .unwrap_or(UNNAMED_DIMENSION);
            add(Reason::new("dimension", dimension));
        }
    }
    if let Some(dimensions) = json["scores"]["dimensions"].as_object() {
        for (name, score) in dimensions {
            if score["passed"] == Value::Bool(false) {
                add(Reason::new("dimension", name));
            }
        }
    }
    if let status @ ("rejected" | "flagged") = report.guardian.status.as_str() {
        add(Reason::new("guardian", status));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::Finding;
    use crate::severity::Severity;
    use crate::verdict::{Overrule, Rule};

    fn finding(check: &str, severity: Severity) -> Finding {
        Finding {
            check: check.to_string(),
            severity,
            file: None,
            line: None,
            message: "m".to_string(),
            ..Finding::default()
        }
    }

    #[test]
    fn each_reason_once_by_kind_and_name() {
        let mut report = Report {
            checks: vec![
                finding("scope", Severity::Major),
                finding("scope", Severity::Major),
                finding("debug_leftover", Severity::Minor),
                finding("secret", Severity::Critical),
            ],
            overrules: vec![Overrule {
                rule: Rule::CheckFailed,
                reason: "r".to_string(),
            }],
            ..Report::default()
        };
        report.guardian.status = "rejected".to_string();
        let got: Vec<(String, String)> = reasons(&report)
            .into_iter()
            .map(|r| (r.kind, r.name))
            .collect();
        let want = [
            ("check", "scope"),
            ("check", "secret"),
            ("overrule", "check_failed"),
            ("guardian", "rejected"),
        ];
        assert_eq!(
            got,
            want.map(|(k, n)| (k.to_string(), n.to_string())).to_vec()
        );
    }

    #[test]
    fn blocking_issues_count_by_dimension_and_unnamed_without_one() {
        let answer = serde_json::json!({
            "verdict": "request_changes", "expectations": "", "criteria": [],
            "spec_verification": [],
            "issues": [
                {"severity": "major", "file": "a.rs", "line": 1, "message": "x", "suggestion": ""},
                {"severity": "minor", "file": "a.rs", "line": 2, "message": "y", "suggestion": ""}
            ]
        });
        let report = Report {
            review: Some(serde_json::from_value(answer).unwrap()),
            ..Report::default()
        };
        let got = reasons(&report);
        assert_eq!(got, vec![Reason::new("dimension", UNNAMED_DIMENSION)]);
    }
}
