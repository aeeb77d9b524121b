//! SARIF 2.1.0 output (`--format sarif`), for GitHub code scanning and other
//! SARIF viewers: one run whose tool is speed, a rule declared for every rule
//! id used, one result per finding (see `findings`) with its place, level and
//! message, and fingerprints that stay the same across runs while the finding
//! does: made of what the finding is (its rule, its file, the content it
//! points at, the stable part of its message, the task it belongs to), never
//! of a commit, a branch name or a line number, so code scanning keeps one
//! alert (and its dismissal) across pushes.
//!
//! A log is written only when every review decided: code scanning reads a
//! category's log without results as "every alert fixed", so a review that
//! failed (exit 1, 52, 53) or waits in a provider batch (54) must not upload
//! one; `app` prints `WITHHELD` instead of a log then.
//!
//! Code scanning needs a location for every result: a finding with no file
//! (an overrule, a criterion, a guardian flag) points at the review's primary
//! spec, the document it was judged against.
//!
//! The command checks that ran (a report's `checks_run`) are not results:
//! what they found is already among the findings. Each is a notification
//! of the invocation (`toolExecutionNotifications`), the place SARIF keeps
//! what happened while the tool ran: its descriptor names the check
//! (`check/<name>`), its level says how it went (a note when it passed, a
//! warning when it failed, timed out or was skipped: the review then knows
//! less), and its properties hold the run as the JSON report has it. The
//! reviews' properties list them too. So is what the model and the
//! guardian saw of the diff: a note when they saw all of it, a warning when
//! code went unseen (the results then speak for part of the diff), and the
//! report's coverage in the review's properties. Results and fingerprints
//! do not change.

use std::collections::HashMap;

use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

use crate::ledger::Report;
use crate::review::Skipped;

use super::findings::{self, Finding};

/// The schema URI viewers and GitHub recognise for 2.1.0.
const SCHEMA: &str = "https://json.schemastore.org/sarif-2.1.0.json";

/// What speed prints on stderr instead of a log when not every review
/// decided.
pub const WITHHELD: &str = "note: no SARIF log was written: not every review decided (a review failed with exit 1, 52 or 53, or waits in a provider batch, 54), and a log without their results would tell code scanning that their alerts are fixed; upload speed's SARIF only when it exits 0 or 50";

/// The text of lines `first..=last` of a file at a review's head commit,
/// None when it cannot be read: what a finding points at.
pub type Content<'a> = &'a dyn Fn(&Report, &str, u64, u64) -> Option<String>;

/// At most this many lines of a range are what a finding points at.
const CONTENT_LINES: u64 = 20;

/// The SARIF log of a review command: every report's findings. Every
/// review must have decided (see the module doc).
pub fn log(reports: &[Report], skipped: &[Skipped], content: Content) -> String {
    let mut results = Results::default();
    for report in reports {
        let work = work(report);
        let properties = json!({
            "subject": super::report_subject(report),
            "task_id": report.task_id,
            "feature": report.feature,
            "branch": report.branch,
            "head_commit": report.head_commit,
        });
        for finding in findings::of(report) {
            let anchor = findings::anchor(report, &finding);
            let pointed = pointed(&finding, &|path, first, last| {
                content(report, path, first, last)
            });
            results.add(&finding, anchor, pointed.as_deref(), &work, &properties);
        }
    }
    let mut notifications = Vec::new();
    for report in reports {
        if let Some(err) = report.error_line() {
            notifications.push(notification("error", &err));
        }
        for notice in &report.notices {
            notifications.push(notification(
                "note",
                &format!("{}: {notice}", super::report_subject(report)),
            ));
        }
        for run in &report.checks_run {
            notifications.push(check_notification(report, run));
        }
        // What the model and the guardian saw: a warning when code went
        // unseen, since the results then speak for part of the diff.
        let seen = [
            super::coverage::review(report),
            super::coverage::guardian(report),
        ];
        for (sentence, whole) in seen.into_iter().flatten() {
            notifications.push(notification(
                if whole { "note" } else { "warning" },
                &format!("{}: {sentence}", super::report_subject(report)),
            ));
        }
    }
    let successful = reports.iter().all(Report::decided);
    let reviews: Vec<Value> = reports.iter().map(review_properties).collect();
    document(
        results,
        successful,
        notifications,
        json!({"reviews": reviews, "skipped": skipped}),
    )
}

/// The SARIF log of a spec review: speed's checks and the latest review's
/// feedback, at their place in the spec (or the PRD). Like a review's, it
/// is written only when the run decided (`spec_review::decided`).
pub fn spec_log(summary: &crate::spec_review::Summary) -> String {
    let mut results = Results::default();
    let work = format!("spec\0{}", summary.feature);
    let properties = json!({
        "subject": format!("spec {}", summary.feature),
        "feature": summary.feature,
        "spec": summary.spec_path,
    });
    for finding in super::spec_review::findings(summary) {
        let anchor = finding
            .file
            .as_deref()
            .map(|file| (file, finding.line))
            .or(Some((summary.spec_path.as_str(), Some(1))));
        results.add(&finding, anchor, None, &work, &properties);
    }
    let notifications = summary
        .notes
        .iter()
        .map(|n| notification("note", n))
        .collect();
    document(
        results,
        true,
        notifications,
        json!({"spec_review": {
            "feature": summary.feature,
            "spec": summary.spec_path,
            "prd": summary.prd_path,
            "verdict": super::spec_review::verdict(summary),
            "exit_code": summary.outcome.code(),
            "headline": summary.headline,
        }}),
    )
}

/// The content a finding of its own file and line points at; a finding
/// placed on the spec for want of a place points at nothing there.
fn pointed(finding: &Finding, read: &dyn Fn(&str, u64, u64) -> Option<String>) -> Option<String> {
    let (Some(file), Some(start)) = (&finding.file, finding.line) else {
        return None;
    };
    let end = finding
        .end_line
        .unwrap_or(start)
        .clamp(start, start + CONTENT_LINES - 1);
    read(file, start, end).map(|text| text.split_whitespace().collect::<Vec<_>>().join(" "))
}

/// The results of a log and the rules they use.
#[derive(Default)]
struct Results {
    rules: Rules,
    results: Vec<Value>,
    seen: HashMap<String, usize>,
}

impl Results {
    fn add(
        &mut self,
        finding: &Finding,
        anchor: Option<(&str, Option<u64>)>,
        pointed: Option<&str>,
        work: &str,
        properties: &Value,
    ) {
        let index = self.rules.index(finding);
        let key = fingerprint_key(work, finding, anchor.map(|(file, _)| file), pointed);
        let occurrence = self.seen.entry(key.clone()).or_default();
        *occurrence += 1;
        let fingerprint = fingerprint(&key, *occurrence);
        self.results.push(result(
            finding,
            index,
            anchor,
            fingerprint,
            properties.clone(),
        ));
    }
}

fn document(
    results: Results,
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
                "rules": results.rules.descriptors,
            }},
            "invocations": [invocation],
            "results": results.results,
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

/// A command check as it ran, as a notification of the invocation (see
/// the module doc): `feature/1: check lint passed after 0.4 s, 0 findings` with the run in its properties.
fn check_notification(report: &Report, run: &crate::checks::CheckRun) -> Value {
    use crate::checks::RunOutcome;
    let level = match run.outcome {
        RunOutcome::Passed => "note",
        RunOutcome::Failed | RunOutcome::TimedOut | RunOutcome::Skipped => "warning",
    };
    let subject = super::report_subject(report);
    let text = format!("{subject}: {}", super::check_run_sentence(run));
    json!({
        "descriptor": {"id": format!("check/{}", run.name)},
        "level": level,
        "message": {"text": text},
        "properties": {"subject": subject, "check": run},
    })
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
    finding: &Finding,
    rule_index: usize,
    anchor: Option<(&str, Option<u64>)>,
    fingerprint: String,
    properties: Value,
) -> Value {
    let mut text = finding.message.trim().to_string();
    if let Some(suggestion) = &finding.suggestion {
        text.push_str("\nSuggestion: ");
        text.push_str(suggestion);
    }
    if text.is_empty() {
        text = findings::describe(&finding.rule);
    }
    let mut out = Map::new();
    out.insert("ruleId".into(), json!(finding.rule));
    out.insert("ruleIndex".into(), json!(rule_index));
    out.insert("level".into(), json!(finding.level.as_str()));
    out.insert("message".into(), json!({"text": text}));
    if let Some((file, line)) = anchor {
        // A finding without a line is about the file: its first line.
        let start = line.unwrap_or(1);
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
    out.insert(
        "partialFingerprints".into(),
        json!({FINGERPRINT: fingerprint}),
    );
    out.insert("properties".into(), properties);
    Value::Object(out)
}

/// The key of `partialFingerprints`: v2 is made of what the finding is
/// (v1 held the review's subject, which held a commit when the subject
/// was one).
const FINGERPRINT: &str = "speedFinding/v2";

/// The work a finding belongs to: a task (feature and id) or a defect;
/// nothing for a branch review, whose name changes from push to push in
/// many workflows.
fn work(report: &Report) -> String {
    match (&report.task_id, &report.defect) {
        (Some(id), _) => format!("task\0{}\0{id}", report.feature.as_deref().unwrap_or("")),
        (None, Some(defect)) => format!("defect\0{}", defect.name),
        (None, None) => String::new(),
    }
}

/// What identifies a finding across runs: the work it belongs to, its
/// rule, its file, the content it points at and its message's stable part;
/// not its line (which moves when code above it changes), the commit or
/// the branch.
fn fingerprint_key(
    work: &str,
    finding: &Finding,
    file: Option<&str>,
    pointed: Option<&str>,
) -> String {
    let words = finding.words.stable(&finding.message, pointed.is_some());
    format!(
        "{work}\0{}\0{}\0{}\0{words}",
        finding.rule,
        file.unwrap_or(""),
        pointed.unwrap_or("")
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
        "checks_run": report.checks_run,
        "coverage": report.coverage,
        "guardian_coverage": report.guardian.coverage,
        "report": report.report_path,
        "summary": report.summary_path,
        "error": report.error,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::findings::{Level, Words};

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
        let finding = |line, message: &str, words| Finding {
            rule: "review/major".into(),
            level: Level::Error,
            file: Some("src/a.rs".into()),
            line: Some(line),
            end_line: None,
            column: None,
            message: message.into(),
            suggestion: None,
            words,
        };
        let key =
            |f: &Finding, work: &str, pointed| fingerprint_key(work, f, Some("src/a.rs"), pointed);
        let speed = Words::Speed;
        let a = key(
            &finding(3, "Off  by one at line 3", speed.clone()),
            "t1",
            None,
        );
        let b = key(
            &finding(9, "Off by one at line 9", speed.clone()),
            "t1",
            None,
        );
        assert_eq!(fingerprint(&a, 1), fingerprint(&b, 1));
        assert_ne!(fingerprint(&a, 1), fingerprint(&a, 2));
        let other_task = key(&finding(3, "Off by one", speed), "t2", None);
        assert_ne!(fingerprint(&a, 1), fingerprint(&other_task, 1));
        // A model's words change from run to run; the content it points at
        // does not.
        let one = key(
            &finding(3, "Off by one", Words::Model),
            "t1",
            Some("let x = y + 1;"),
        );
        let two = key(
            &finding(8, "An off-by-one error", Words::Model),
            "t1",
            Some("let x = y + 1;"),
        );
        assert_eq!(one, two);
        let elsewhere = key(
            &finding(8, "Off by one", Words::Model),
            "t1",
            Some("let z = 0;"),
        );
        assert_ne!(one, elsewhere);
    }
}
