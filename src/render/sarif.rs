//! SARIF 2.1.0 output (`--format sarif`), for GitHub code scanning and other
//! SARIF viewers: one run whose tool is speed, a rule declared for every rule
//! id used, one result per finding (see `findings`) with its place, level and
//! message, and fingerprints that stay the same across runs while the finding
//! does. Reviews that failed are tool execution notifications, not results,
//! and the run says it did not execute successfully.
//!
//! Code scanning needs a location for every result: a finding with no file
//! (an overrule, a criterion, a guardian flag) points at the review's primary
//! spec, the document it was judged against.

use std::collections::HashMap;

use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

use crate::exit::Outcome;
use crate::ledger::Report;
use crate::review::Skipped;

use super::findings::{self, Finding};

/// The schema URI viewers and GitHub recognise for 2.1.0.
const SCHEMA: &str = "https://json.schemastore.org/sarif-2.1.0.json";

/// The SARIF log of a review command: every report's findings, the failed
/// reviews as notifications.
pub fn log(reports: &[Report], skipped: &[Skipped]) -> String {
    let mut rules = Rules::default();
    let mut results = Vec::new();
    let mut seen: HashMap<String, usize> = HashMap::new();
    for report in reports {
        for finding in findings::of(report) {
            let index = rules.index(&finding);
            results.push(result(report, &finding, index, &mut seen));
        }
    }
    let mut notifications = Vec::new();
    for report in reports {
        if let Some(err) = &report.error {
            notifications.push(notification(
                "error",
                &format!("{}: {err}", super::report_subject(report)),
            ));
        }
        for notice in &report.notices {
            notifications.push(notification(
                "note",
                &format!("{}: {notice}", super::report_subject(report)),
            ));
        }
    }
    let successful = reports.iter().all(|r| {
        matches!(r.outcome, Outcome::Approved | Outcome::ChangesRequested) && r.error.is_none()
    });
    let reviews: Vec<Value> = reports.iter().map(review_properties).collect();
    document(
        rules.descriptors,
        results,
        successful,
        notifications,
        json!({"reviews": reviews, "skipped": skipped}),
    )
}

/// The log printed when no review could start (bad configuration, no
/// repository, ...): no results, the error as a notification.
pub fn failure(error: &str) -> String {
    document(
        Vec::new(),
        Vec::new(),
        false,
        vec![notification("error", error)],
        json!({"reviews": [], "skipped": []}),
    )
}

fn document(
    rules: Vec<Value>,
    results: Vec<Value>,
    successful: bool,
    notifications: Vec<Value>,
    properties: Value,
) -> String {
    let mut invocation = json!({"executionSuccessful": successful});
    if !notifications.is_empty() {
        invocation["toolExecutionNotifications"] = Value::Array(notifications);
    }
    let log = json!({
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "speed",
                "version": env!("CARGO_PKG_VERSION"),
                "semanticVersion": env!("CARGO_PKG_VERSION"),
                "rules": rules,
            }},
            "invocations": [invocation],
            "results": results,
            "properties": {"speed": properties},
        }],
    });
    let mut text = serde_json::to_string_pretty(&log).unwrap_or_else(|_| "{}".to_string());
    text.push('\n');
    text
}

fn notification(level: &str, text: &str) -> Value {
    json!({"level": level, "message": {"text": text}})
}

/// The rules used so far, each declared once, in order of first use.
#[derive(Default)]
struct Rules {
    descriptors: Vec<Value>,
    index: HashMap<String, usize>,
}

impl Rules {
    fn index(&mut self, finding: &Finding) -> usize {
        if let Some(&i) = self.index.get(&finding.rule) {
            return i;
        }
        let i = self.descriptors.len();
        let source = finding.rule.split('/').next().unwrap_or("review");
        self.descriptors.push(json!({
            "id": finding.rule,
            "name": rule_name(&finding.rule),
            "shortDescription": {"text": findings::describe(&finding.rule)},
            "defaultConfiguration": {"level": finding.level.as_str()},
            "properties": {"tags": ["speed", source]},
        }));
        self.index.insert(finding.rule.clone(), i);
        i
    }
}

/// `overrule/fabricated_quote` → `OverruleFabricatedQuote` (SARIF rule names
/// are identifiers).
fn rule_name(rule: &str) -> String {
    rule.split(['/', '_', '-'])
        .filter(|w| !w.is_empty())
        .map(|w| {
            let mut chars = w.chars();
            chars.next().map_or(String::new(), |c| {
                c.to_uppercase().collect::<String>() + chars.as_str()
            })
        })
        .collect()
}

fn result(
    report: &Report,
    finding: &Finding,
    rule_index: usize,
    seen: &mut HashMap<String, usize>,
) -> Value {
    let mut text = finding.message.trim().to_string();
    if let Some(suggestion) = &finding.suggestion {
        text.push_str("\nSuggestion: ");
        text.push_str(suggestion);
    }
    if text.is_empty() {
        text = findings::describe(&finding.rule);
    }
    let subject = super::report_subject(report);
    let anchor = finding
        .file
        .clone()
        .or_else(|| report.specs.first().cloned());
    let mut out = Map::new();
    out.insert("ruleId".into(), json!(finding.rule));
    out.insert("ruleIndex".into(), json!(rule_index));
    out.insert("level".into(), json!(finding.level.as_str()));
    out.insert("message".into(), json!({"text": text}));
    if let Some(file) = &anchor {
        // A finding without a line is about the file: its first line.
        let start = if finding.file.is_some() {
            finding.line.unwrap_or(1)
        } else {
            1
        };
        let mut region = json!({"startLine": start});
        if let Some(end) = finding.end_line.filter(|e| *e > start) {
            region["endLine"] = json!(end);
        }
        if let Some(column) = finding.column.filter(|_| finding.line.is_some()) {
            region["startColumn"] = json!(column);
        }
        out.insert(
            "locations".into(),
            json!([{"physicalLocation": {
                "artifactLocation": {"uri": uri(file)},
                "region": region,
            }}]),
        );
    }
    let key = fingerprint_key(&subject, finding);
    let occurrence = seen.entry(key.clone()).or_default();
    *occurrence += 1;
    out.insert(
        "partialFingerprints".into(),
        json!({"speedFinding/v1": fingerprint(&key, *occurrence)}),
    );
    out.insert(
        "properties".into(),
        json!({
            "subject": subject,
            "task_id": report.task_id,
            "feature": report.feature,
            "branch": report.branch,
            "head_commit": report.head_commit,
        }),
    );
    Value::Object(out)
}

/// What identifies a finding across runs: its subject, rule, file and words,
/// not its line (which moves when code above it changes).
fn fingerprint_key(subject: &str, finding: &Finding) -> String {
    let words = finding
        .message
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    format!(
        "{subject}\0{}\0{}\0{words}",
        finding.rule,
        finding.file.as_deref().unwrap_or("")
    )
}

/// The same finding twice in one run gets two fingerprints (1st, 2nd, ...).
fn fingerprint(key: &str, occurrence: usize) -> String {
    let digest = Sha256::digest(format!("{key}\0{occurrence}").as_bytes());
    digest.iter().take(16).map(|b| format!("{b:02x}")).collect()
}

/// A repository-relative path as a relative URI reference: every byte but
/// unreserved ones and `/` percent-encoded, so spaces, `#`, `?`, `%` and a
/// `:` that would read as a scheme stay part of the path.
fn uri(path: &str) -> String {
    let path = path.trim().trim_start_matches("./");
    let mut out = String::with_capacity(path.len());
    for byte in path.bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' | b'/' => {
                out.push(byte as char)
            }
            _ => out.push_str(&format!("%{byte:02X}")),
        }
    }
    out
}

fn review_properties(report: &Report) -> Value {
    json!({
        "subject": super::report_subject(report),
        "task_id": report.task_id,
        "feature": report.feature,
        "branch": report.branch,
        "base_commit": report.base_commit,
        "head_commit": report.head_commit,
        "verdict": report.verdict,
        "model_verdict": report.model_verdict,
        "exit_code": report.outcome.code(),
        "task_update": report.task_update,
        "scores": report.scores,
        "human_review": report.human_review,
        "report": report.report_path,
        "summary": report.summary_path,
        "error": report.error,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::findings::Level;

    #[test]
    fn uris_keep_paths_and_encode_the_rest() {
        assert_eq!(uri("src/a_b-c.rs"), "src/a_b-c.rs");
        assert_eq!(uri("./docs/my file#1.md"), "docs/my%20file%231.md");
        assert_eq!(uri("c:odd?.rs"), "c%3Aodd%3F.rs");
        assert_eq!(uri("données.md"), "donn%C3%A9es.md");
    }

    #[test]
    fn rule_names_are_identifiers() {
        assert_eq!(
            rule_name("overrule/fabricated_quote"),
            "OverruleFabricatedQuote"
        );
        assert_eq!(rule_name("review/out-of-scope"), "ReviewOutOfScope");
    }

    #[test]
    fn fingerprints_ignore_lines_and_spacing_but_count_repeats() {
        let finding = |line, message: &str| Finding {
            rule: "review/major".into(),
            level: Level::Error,
            file: Some("src/a.rs".into()),
            line: Some(line),
            end_line: None,
            column: None,
            message: message.into(),
            suggestion: None,
        };
        let a = fingerprint_key("f/1", &finding(3, "Off  by one"));
        let b = fingerprint_key("f/1", &finding(9, "Off by one"));
        assert_eq!(fingerprint(&a, 1), fingerprint(&b, 1));
        assert_ne!(fingerprint(&a, 1), fingerprint(&a, 2));
        let other_task = fingerprint_key("f/2", &finding(3, "Off by one"));
        assert_ne!(fingerprint(&a, 1), fingerprint(&other_task, 1));
    }
}
