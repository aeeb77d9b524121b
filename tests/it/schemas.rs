//! `speed schema KIND`: each a JSON Schema (2020-12) a validator compiles,
//! and each accepting what speed really reads and writes: the reports of
//! real reviews (approved through the loopback model, offline, failed),
//! the answers the test models give, and refusing what speed refuses.

use serde_json::{Value, json};

use crate::support::model_server::{ModelServer, Reply};
use crate::support::repo;
use crate::support::speed::speed;
use crate::support::verdicts::{self, text};

/// `speed schema KIND`, compiled.
pub(crate) fn schema(kind: &str) -> (boon::Schemas, boon::SchemaIndex) {
    let tmp = tempfile::tempdir().unwrap();
    let run = speed(tmp.path(), &["schema", kind], &[]);
    assert_eq!(run.code, 0, "{kind}: {}", run.transcript());
    assert!(run.stderr.is_empty(), "{}", run.transcript());
    let document: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(
        document["$schema"], "https://json-schema.org/draft/2020-12/schema",
        "{kind}"
    );
    assert!(
        document["title"]
            .as_str()
            .is_some_and(|t| t.starts_with("speed: "))
    );
    let mut schemas = boon::Schemas::new();
    let mut compiler = boon::Compiler::new();
    compiler
        .add_resource("speed.json", document)
        .unwrap_or_else(|e| panic!("{kind}: {e:#}"));
    let index = compiler
        .compile("speed.json", &mut schemas)
        .unwrap_or_else(|e| panic!("{kind}: {e:#}"));
    (schemas, index)
}

pub(crate) fn assert_valid(
    kind: &str,
    checker: &(boon::Schemas, boon::SchemaIndex),
    value: &Value,
) {
    if let Err(err) = checker.0.validate(value, checker.1) {
        panic!(
            "not a valid {kind}: {err:#}\n{}",
            serde_json::to_string_pretty(value).unwrap()
        );
    }
}

#[test]
fn an_unknown_kind_is_a_usage_error() {
    let tmp = tempfile::tempdir().unwrap();
    let run = speed(tmp.path(), &["schema", "verdicts"], &[]);
    assert_eq!(run.code, 2, "{}", run.transcript());
    assert!(run.stderr.contains("spec-review"), "{}", run.transcript());
}

#[test]
fn the_answers_of_a_review_validate_and_a_broken_one_does_not() {
    let checker = schema("verdict");
    for answer in [
        verdicts::approve_task_1(),
        verdicts::request_changes_task_2(),
        verdicts::approve_with_critical_issue(),
    ] {
        assert_valid("verdict", &checker, &answer);
    }
    let mut broken = verdicts::approve_task_1();
    broken["criteria"][0]["status"] = json!("done");
    assert!(checker.0.validate(&broken, checker.1).is_err());

    let guardian = schema("guardian");
    assert_valid(
        "guardian answer",
        &guardian,
        &verdicts::guardian(
            "flagged",
            "Mostly aligned",
            json!([{"severity": "minor", "description": "…", "spec_reference": null}]),
        ),
    );
    assert!(
        guardian
            .0
            .validate(&json!({"status": "fine"}), guardian.1)
            .is_err()
    );
}

#[test]
fn a_spec_reviews_answer_validates_and_needs_feedback_when_it_asks_for_revision() {
    let checker = schema("spec-review");
    let scores =
        json!({"completeness": 85, "consistency": 90, "testability": 70, "architecture": 80});
    assert_valid(
        "spec review answer",
        &checker,
        &json!({"verdict": "pass", "scores": scores, "feedback": []}),
    );
    assert_valid(
        "spec review answer",
        &checker,
        &json!({"verdict": "needs_revision", "scores": scores, "feedback": [
            {"section": "Late Fines > Cap", "issue": "No cap is stated", "suggestion": "State it"}
        ]}),
    );
    for bad in [
        json!({"verdict": "needs_revision", "scores": scores, "feedback": []}),
        json!({"verdict": "pass", "scores": {"completeness": 85}}),
        json!({"verdict": "pass", "scores": {"completeness": 85.5, "consistency": 90, "testability": 70, "architecture": 80}}),
    ] {
        assert!(checker.0.validate(&bad, checker.1).is_err(), "{bad}");
    }
}

#[test]
fn the_reports_of_real_reviews_validate() {
    let checker = schema("report");
    let repo = repo::example();
    let server = ModelServer::start(|req| {
        if req.body.contains("Product guardian check") {
            Reply::openai(&text(&verdicts::guardian("aligned", "Fits", json!([]))))
        } else {
            Reply::openai(&text(&verdicts::approve_task_1()))
        }
    });
    repo.config(&format!(
        "[llm]\nprovider = \"openai\"\nbase_url = \"{}\"\nmodel = \"m\"\ntimeout_secs = 5\nmax_retries = 0\n",
        server.url()
    ));
    let mut reports = Vec::new();
    for args in [
        vec!["review", "--task-id", "1", "--json"],
        vec!["review", "--task-id", "2", "--json", "--offline"],
    ] {
        let run = speed(repo.path(), &args, &[]);
        let out: Value = serde_json::from_str(&run.stdout)
            .unwrap_or_else(|e| panic!("{e}: {}", run.transcript()));
        reports.extend(out["reviews"].as_array().unwrap().iter().cloned());
    }
    // A review that fails: the model unreachable.
    drop(server);
    let run = speed(repo.path(), &["review", "--task-id", "3", "--json"], &[]);
    assert_eq!(run.code, 52, "{}", run.transcript());
    let out: Value = serde_json::from_str(&run.stdout).unwrap();
    reports.extend(out["reviews"].as_array().unwrap().iter().cloned());

    let verdicts: Vec<&str> = reports
        .iter()
        .map(|r| r["verdict"].as_str().unwrap_or("null"))
        .collect();
    assert_eq!(
        verdicts,
        ["approve", "checks_passed", "null"],
        "{reports:#?}"
    );
    for report in &reports {
        assert_valid("report", &checker, report);
    }
    // The report files and `speed show --format json` are the same object.
    for file in repo.report_files() {
        assert_valid("report file", &checker, &file);
    }
    let shown = speed(
        repo.path(),
        &["show", "--task-id", "1", "--format", "json"],
        &[],
    );
    assert_valid(
        "shown report",
        &checker,
        &serde_json::from_str(&shown.stdout).unwrap(),
    );
}
