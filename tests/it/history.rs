//! Looking back, end to end on the real binary: `speed show` (a saved
//! report in every format, the N-th last, a subject never reviewed, a
//! report that no longer parses, a spec review's session), `speed history`
//! (newest first, filters, a log with torn lines, binary junk, a huge line,
//! overrides and bypasses) and `speed stats` (a log of thousands of
//! reviews with known figures, lines of older speeds, prices).

use std::io::Write;

use crate::support::model_server::{ModelServer, Reply};
use crate::support::repo::{self, TempRepo};
use crate::support::speed::{Run, speed};
use crate::support::verdicts::{self, text};
use serde_json::{Value, json};

/// Task 2 is sent back, every other task approved.
fn serve() -> ModelServer {
    ModelServer::start(|req| {
        if req.body.contains("id: 2") {
            Reply::openai(&text(&verdicts::request_changes_task_2()))
        } else {
            Reply::openai(&text(&verdicts::approve_task_1()))
        }
    })
}

pub(crate) fn configure(repo: &TempRepo, server: &ModelServer, extra: &str) {
    repo.config(&format!(
        "[llm]\nprovider = \"openai\"\nbase_url = \"{}\"\nmodel = \"test-model\"\ntimeout_secs = 5\nmax_retries = 0\nretry_base_ms = 10\n{extra}\n[guardian]\nenabled = false\n",
        server.url()
    ));
}

fn json_of(run: &Run) -> Value {
    serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{e}: {}", run.transcript()))
}

/// The example with task 1 approved, then task 2 sent back: (repo, the
/// server, what each `--json` printed, by task id).
fn reviewed() -> (TempRepo, ModelServer, Value) {
    let repo = repo::example();
    let server = serve();
    configure(&repo, &server, "");
    let mut printed = json!({});
    for (id, code) in [("1", 0), ("2", 50)] {
        let run = speed(repo.path(), &["review", "--task-id", id, "--json"], &[]);
        assert_eq!(run.code, code, "{}", run.transcript());
        printed[id] = json_of(&run)["reviews"][0].clone();
    }
    (repo, server, printed)
}

fn review_of<'a>(printed: &'a Value, id: &str) -> &'a Value {
    &printed[id]
}

#[test]
fn show_prints_the_saved_report_as_the_review_printed_it() {
    let (repo, _server, printed) = reviewed();
    for id in ["1", "2"] {
        let run = speed(
            repo.path(),
            &["show", "--task-id", id, "--format", "json"],
            &[],
        );
        assert_eq!(run.code, 0, "{}", run.transcript());
        assert_eq!(&json_of(&run), review_of(&printed, id), "task {id}");
    }

    let run = speed(repo.path(), &["show", "--task-id", "2"], &[]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    for expected in [
        "the last review of library-catalog/2",
        "changes requested",
        "MAX_RENEWALS is 3",
        "A loan may be renewed at most twice.",
        "tokens 1,234 in",
        ".speed/reviews/",
    ] {
        assert!(run.stdout.contains(expected), "{expected}: {}", run.stdout);
    }

    let run = speed(
        repo.path(),
        &[
            "show",
            "--task-id",
            "2",
            "--feature",
            "library-catalog",
            "--format",
            "markdown",
        ],
        &[],
    );
    assert_eq!(run.code, 0, "{}", run.transcript());
    assert!(
        run.stdout
            .starts_with("# speed review: library\\-catalog/2"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("### Errors (blocking)"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains("Borrowing \\> Loans | A loan may be renewed"),
        "{}",
        run.stdout
    );
}

#[test]
fn show_nth_counts_back_and_says_when_there_are_not_that_many() {
    let repo = repo::example();
    let answers = vec![
        Reply::openai(&text(&verdicts::request_changes_task_2())),
        Reply::openai(&text(&verdicts::approve_with_critical_issue())),
    ];
    let server = ModelServer::scripted(answers);
    configure(&repo, &server, "");
    for _ in 0..2 {
        let run = speed(repo.path(), &["review", "--task-id", "2"], &[]);
        assert_eq!(run.code, 50, "{}", run.transcript());
    }
    let model = |nth: &str| {
        let run = speed(
            repo.path(),
            &["show", "--task-id", "2", "--nth", nth, "--format", "json"],
            &[],
        );
        assert_eq!(run.code, 0, "{}", run.transcript());
        json_of(&run)["model_verdict"].clone()
    };
    assert_eq!(model("1"), "approve", "the last: the overruled approval");
    assert_eq!(model("2"), "request_changes");
    let run = speed(repo.path(), &["show", "--task-id", "2", "--nth", "3"], &[]);
    assert_eq!(run.code, 1, "{}", run.transcript());
    assert!(
        run.stderr.contains("task 2 has 2 reviews") && run.stderr.contains("--nth 3"),
        "{}",
        run.stderr
    );
}

#[test]
fn a_subject_never_reviewed_and_a_report_that_no_longer_parses_are_errors_naming_them() {
    let (repo, _server, _) = reviewed();
    for (args, expected) in [
        (
            &["show", "--task-id", "3"][..],
            "task 3 has never been reviewed",
        ),
        (
            &["show", "--defect", "login-crash"],
            "defect login-crash has never been reviewed",
        ),
        (
            &["show", "--branch", "nowhere"],
            "branch nowhere has never been reviewed",
        ),
        (
            &["show", "--task-id", "1", "--feature", "other"],
            "task 1 of feature other has never been reviewed",
        ),
    ] {
        let run = speed(repo.path(), args, &[]);
        assert_eq!(run.code, 1, "{args:?}: {}", run.transcript());
        assert!(run.stderr.contains(expected), "{args:?}: {}", run.stderr);
        assert!(run.stdout.is_empty(), "{args:?}");
    }
    // The machine-readable form promised on stdout holds the error.
    let run = speed(
        repo.path(),
        &["show", "--task-id", "3", "--format", "json"],
        &[],
    );
    assert_eq!(run.code, 1);
    assert!(json_of(&run)["error"].as_str().unwrap().contains("task 3"));

    let name = repo
        .reviews()
        .into_iter()
        .find(|n| n.ends_with("-task-2.json"))
        .unwrap();
    let path = format!(".speed/reviews/{name}");
    for broken in [
        "{\"task_id\": \"2\", \"verdict\": 7",
        "{\"task_id\": \"2\", \"checks\": \"none\"}",
    ] {
        repo.write(&path, broken);
        let run = speed(repo.path(), &["show", "--task-id", "2"], &[]);
        assert_eq!(run.code, 1, "{}", run.transcript());
        assert!(
            run.stderr.contains(&name) && run.stderr.contains("no longer parses"),
            "{}",
            run.stderr
        );
    }
    // A page is promised: the error comes as one.
    let run = speed(
        repo.path(),
        &["show", "--task-id", "2", "--format", "html"],
        &[],
    );
    assert_eq!(run.code, 1);
    assert!(run.stdout.contains("<!DOCTYPE html>") && run.stdout.contains("no longer parses"));
}

#[test]
fn a_spec_review_session_is_shown_when_there_is_one() {
    let repo = repo::example();
    let run = speed(repo.path(), &["show", "--spec", "library-catalog"], &[]);
    assert_eq!(run.code, 1, "{}", run.transcript());
    assert!(
        run.stderr
            .contains(".speed/spec-reviews/library-catalog.json"),
        "{}",
        run.stderr
    );
    let run = speed(repo.path(), &["show", "--spec", "../../etc/passwd"], &[]);
    assert_eq!(run.code, 1, "{}", run.transcript());
    assert!(run.stderr.contains("not a feature name"), "{}", run.stderr);

    let session = json!({
        "feature": "library-catalog", "prd_path": ".speed/features/library-catalog/prd.md",
        "specs_path": "specs/product/library-catalog.md", "config": {},
        "iterations": [
            {"iteration": 1, "spec_hash": "sha256:aa", "timestamp": "2026-03-01T10:00:00Z",
             "result": {"verdict": "needs_revision", "scores": {"completeness": 60, "testability": 80},
                        "feedback": [{"section": "Borrowing", "issue": "<script>x</script> fines are not specified", "suggestion": "Say what a late day costs"}]}},
            {"iteration": 2, "spec_hash": "sha256:bb", "timestamp": "2026-03-01T11:00:00Z",
             "result": {"verdict": "pass", "scores": {"completeness": 90, "testability": 85}, "feedback": []}}
        ],
        "final_verdict": "pass", "block_reason": "", "recovery_actions": []
    });
    repo.write(
        ".speed/spec-reviews/library-catalog.json",
        &session.to_string(),
    );
    let run = speed(repo.path(), &["show", "--spec", "library-catalog"], &[]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    for expected in [
        "final verdict: pass",
        "iteration 1 (2026-03-01T10:00:00Z): needs_revision; completeness 60, testability 80",
        "[Borrowing] <script>x</script> fines are not specified → Say what a late day costs",
        "iteration 2",
    ] {
        assert!(run.stdout.contains(expected), "{expected}: {}", run.stdout);
    }
    let run = speed(
        repo.path(),
        &["show", "--spec", "library-catalog", "--format", "json"],
        &[],
    );
    assert_eq!(json_of(&run), session);
    let run = speed(
        repo.path(),
        &["show", "--spec", "library-catalog", "--format", "html"],
        &[],
    );
    assert_eq!(run.code, 0, "{}", run.transcript());
    let doc = crate::pages::parse(&run.stdout);
    crate::pages::assert_inert(&doc, &run.stdout);
    assert!(run.stdout.contains("&lt;script&gt;x&lt;/script&gt; fines"));

    repo.write(".speed/spec-reviews/library-catalog.json", "[1, 2");
    let run = speed(repo.path(), &["show", "--spec", "library-catalog"], &[]);
    assert_eq!(run.code, 1);
    assert!(run.stderr.contains("library-catalog.json") && run.stderr.contains("no longer parses"));
}

fn append(repo: &TempRepo, bytes: &[u8]) {
    let mut log = std::fs::OpenOptions::new()
        .append(true)
        .open(repo.path().join(".speed/reviews/log.jsonl"))
        .unwrap();
    log.write_all(bytes).unwrap();
}

#[test]
fn history_lists_newest_first_and_skips_what_is_not_speeds() {
    let (repo, _server, _) = reviewed();
    let run = speed(
        repo.path(),
        &[
            "override",
            "--task-id",
            "2",
            "--reason",
            "the renewal limit is agreed",
        ],
        &[],
    );
    assert_eq!(run.code, 0, "{}", run.transcript());
    // What a log meets: a torn line, bytes that are not text, a line of
    // megabytes, a line from someone else, a bypass naming only commits.
    append(
        &repo,
        b"{\"at\":\"2026-03-02T10:00:00Z\",\"task\":\"9\",\"decis",
    );
    append(&repo, b"\n\xff\xfe\x00binary\x1b[2J\n");
    let mut huge =
        b"{\"at\":\"2026-03-02T10:00:00Z\",\"decision\":\"approve\",\"error\":\"".to_vec();
    huge.extend(std::iter::repeat_n(b'x', 3 << 20));
    huge.extend_from_slice(b"\"}\n");
    append(&repo, &huge);
    append(&repo, b"{\"hello\": \"world\"}\n");
    append(
        &repo,
        br#"{"at":"2030-01-01T00:00:00Z","commits":["0123456789abcdef"],"decision":"override","by":"ci","reason":"hotfix","via":"SPEED_SKIP_HOOK"}"#,
    );
    append(&repo, b"\n");

    let run = speed(repo.path(), &["history", "--format", "json"], &[]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    let out = json_of(&run);
    assert_eq!(out["skipped_lines"], 4, "{out}");
    let lines = out["reviews"].as_array().unwrap();
    let decisions: Vec<&str> = lines
        .iter()
        .map(|l| l["decision"].as_str().unwrap())
        .collect();
    assert_eq!(
        decisions,
        ["override", "override", "request_changes", "approve"]
    );
    assert_eq!(lines[0]["via"], "SPEED_SKIP_HOOK");
    assert_eq!(lines[1]["task"], "2");
    let reasons: Vec<(&str, &str)> = lines[2]["blocking"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["kind"].as_str().unwrap(), r["name"].as_str().unwrap()))
        .collect();
    // The model asked for changes itself (nothing to overrule) over a
    // major issue that names no dimension.
    assert_eq!(reasons, [("dimension", "unnamed")], "{}", lines[2]);
    assert_eq!(lines[2]["task_status"], "pending");
    assert_eq!(lines[2]["revision_count"], 1);
    assert_eq!(lines[3]["task_status"], "done");

    let run = speed(repo.path(), &["history"], &[]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    let shown: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(shown.len(), 4, "{}", run.stdout);
    assert!(shown[1].contains("library-catalog/2") && shown[1].contains("override"));
    assert!(
        shown[2].contains("library-catalog/2")
            && shown[2].contains("#1")
            && shown[2].contains("request_changes")
            && shown[2].contains("1,234 in")
            && shown[2].contains("openai/test-model")
            && shown[2].contains("task pending"),
        "{}",
        shown[2]
    );
    assert!(run.stderr.contains("4 lines skipped"), "{}", run.stderr);
    assert!(
        !run.stdout.contains('\u{1b}'),
        "log text cannot reach the terminal raw"
    );

    let run = speed(
        repo.path(),
        &["history", "--task-id", "2", "--format", "json"],
        &[],
    );
    let tasks: Vec<Value> = json_of(&run)["reviews"].as_array().unwrap().clone();
    assert_eq!(tasks.len(), 2);
    assert!(tasks.iter().all(|l| l["task"] == "2"));
    let run = speed(
        repo.path(),
        &["history", "--limit", "1", "--format", "json"],
        &[],
    );
    assert_eq!(json_of(&run)["reviews"][0]["via"], "SPEED_SKIP_HOOK");
    let run = speed(
        repo.path(),
        &["history", "--since", "2029-12-31", "--format", "json"],
        &[],
    );
    assert_eq!(json_of(&run)["reviews"].as_array().unwrap().len(), 1);

    let run = speed(repo.path(), &["history", "--task-id", "3"], &[]);
    assert_eq!(run.code, 1, "{}", run.transcript());
    assert!(
        run.stderr.contains("task 3 has no line in the review log"),
        "{}",
        run.stderr
    );
    let run = speed(repo.path(), &["history", "--since", "someday"], &[]);
    assert_eq!(run.code, 2, "{}", run.transcript());
    assert!(run.stderr.contains("is not a date"), "{}", run.stderr);
}

#[test]
fn no_review_yet_is_an_error_saying_so() {
    let repo = repo::example();
    for command in ["history", "stats"] {
        let run = speed(repo.path(), &[command], &[]);
        assert_eq!(run.code, 1, "{command}: {}", run.transcript());
        assert!(
            run.stderr.contains("No reviews yet"),
            "{command}: {}",
            run.stderr
        );
    }
    let run = speed(repo.path(), &["history", "--format", "json"], &[]);
    assert_eq!(run.code, 1);
    assert_eq!(json_of(&run), json!({"reviews": [], "skipped_lines": 0}));
}

/// A log of `subjects` tasks over three features and twelve weeks: task i
/// is approved at once (i % 3 == 0), approved at its second review
/// (i % 3 == 1), or sent back twice and failed at max_revisions
/// (i % 3 == 2). Every fourth subject's lines are of an older speed, with
/// no `blocking`; a person's override and torn lines are mixed in.
pub(crate) fn many_reviews(subjects: usize) -> String {
    let mut out = String::new();
    for i in 0..subjects {
        let feature = ["catalog", "loans", "search"][i % 3];
        let week = i % 12;
        let day = 2 + (week * 7) as u32; // from 2026-03-02, a Monday
        let at = |hour: u32| {
            let (month, day) = if day > 31 { (4, day - 31) } else { (3, day) };
            let (month, day) = if month == 4 && day > 30 {
                (5, day - 30)
            } else {
                (month, day)
            };
            format!("2026-{month:02}-{day:02}T{hour:02}:00:00Z")
        };
        let old = i % 4 == 0;
        let line = |hour: u32, decision: &str, status: &str, revisions: u32| {
            let mut v = json!({
                "at": at(hour), "task": i.to_string(), "feature": feature,
                "branch": format!("speed/task-{i}"), "head_commit": format!("{i:040x}"),
                "decision": decision, "model_verdict": decision,
                "model": {"provider": "openai", "name": "m"},
                "tokens": {"prompt": 1000 + i as u64, "completion": 100},
                "guardian": "not_run", "overrules": if decision == "request_changes" { json!(["check_failed"]) } else { json!([]) },
                "duration_ms": 1000 * (1 + i as u64 % 10),
            });
            if !old {
                v["blocking"] = if decision == "request_changes" {
                    json!([{"kind": "check", "name": "scope"}, {"kind": "overrule", "name": "check_failed"}])
                } else {
                    json!([])
                };
                v["task_status"] = json!(status);
                v["revision_count"] = json!(revisions);
            }
            v.to_string() + "\n"
        };
        match i % 3 {
            0 => out.push_str(&line(9, "approve", "done", 0)),
            1 => {
                out.push_str(&line(9, "request_changes", "pending", 1));
                out.push_str(&line(10, "approve", "done", 1));
            }
            _ => {
                out.push_str(&line(9, "request_changes", "pending", 1));
                out.push_str(&line(10, "request_changes", "failed", 2));
            }
        }
        if i % 50 == 0 {
            out.push_str(&format!(
                "{{\"at\":\"{}\",\"task\":\"{i}\",\"feature\":\"{feature}\",\"decision\":\"override\",\"by\":\"ann\",\"reason\":\"ok\"}}\n{{\"at\":\"2026-03-0\n",
                at(11)
            ));
        }
    }
    out
}

#[test]
fn stats_of_many_reviews_give_the_figures_the_log_holds() {
    let repo = repo::example();
    let subjects = 3_000;
    repo.write(".speed/reviews/log.jsonl", &many_reviews(subjects));
    repo.config("[llm]\nprice_input_per_mtok = 3.0\nprice_output_per_mtok = 15.0\n");
    let run = speed(repo.path(), &["stats", "--format", "json"], &[]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    let s = json_of(&run);
    let (approved_now, approved_later, failed) = (1_000.0, 1_000.0, 1_000);
    let reviews = 1_000 + 2_000 + 2_000;
    assert_eq!(s["reviews"], reviews);
    assert_eq!(s["subjects"], subjects);
    assert_eq!(s["skipped_lines"], 60, "the torn lines");
    assert_eq!(s["decisions"]["override"], 60);
    assert_eq!(s["approval_rate"]["first_review"], 0.3333);
    assert_eq!(s["approval_rate"]["eventual"], 0.6667);
    assert_eq!(
        s["mean_reviews_to_approval"],
        (approved_now + 2.0 * approved_later) / (approved_now + approved_later)
    );
    // Only lines that say so count: old lines (every fourth subject) do not.
    assert_eq!(s["failed_at_max_revisions"], failed - failed / 4);
    let reasons = s["blocking_reasons"].as_array().unwrap();
    // Every request_changes line names its overrule, old ones included;
    // only lines that record `blocking` name the check.
    assert_eq!(
        reasons[0],
        json!({"kind": "overrule", "name": "check_failed", "count": 3_000})
    );
    assert_eq!(
        reasons[1],
        json!({"kind": "check", "name": "scope", "count": 2_250})
    );
    let input: u64 = (0..subjects as u64)
        .map(|i| (1000 + i) * if i % 3 == 0 { 1 } else { 2 })
        .sum();
    assert_eq!(s["tokens"]["input"], input);
    assert_eq!(s["tokens"]["output"], 100 * reviews);
    let cost = input as f64 * 3.0 / 1e6 + (100 * reviews) as f64 * 15.0 / 1e6;
    assert!(
        (s["cost"]["total"].as_f64().unwrap() - cost).abs() < 1e-6,
        "{}",
        s["cost"]
    );
    assert_eq!(s["cost"]["prices"]["input_per_mtok"], 3.0);
    let mut durations: Vec<u64> = (0..subjects as u64)
        .flat_map(|i| {
            let lines = if i % 3 == 0 { 1 } else { 2 };
            std::iter::repeat_n(1000 * (1 + i % 10), lines)
        })
        .collect();
    durations.sort_unstable();
    let rank = |p: usize| durations[(p * durations.len()).div_ceil(100) - 1];
    assert_eq!(s["duration_ms"]["p50"], rank(50));
    assert_eq!(s["duration_ms"]["p90"], rank(90));
    let features = s["by_feature"].as_object().unwrap();
    assert_eq!(features.len(), 3);
    assert_eq!(features["catalog"]["subjects"], 1_000);
    assert_eq!(features["catalog"]["approval_rate"]["first_review"], 1.0);
    assert_eq!(features["search"]["failed_at_max_revisions"], 750);
    let weeks = s["by_week"].as_array().unwrap();
    assert_eq!(weeks.len(), 12);
    assert_eq!(weeks[0]["week"], "2026-W10");
    assert_eq!(weeks[0]["starts"], "2026-03-02");
    assert_eq!(weeks[0]["subjects"], 250);

    let run = speed(
        repo.path(),
        &[
            "stats",
            "--feature",
            "loans",
            "--since",
            "2026-04-01",
            "--format",
            "json",
        ],
        &[],
    );
    assert_eq!(run.code, 0, "{}", run.transcript());
    let loans = json_of(&run);
    assert_eq!(loans["by_feature"].as_object().unwrap().len(), 1);
    assert!(
        loans["by_week"]
            .as_array()
            .unwrap()
            .iter()
            .all(|w| w["starts"].as_str().unwrap() >= "2026-03-30")
    );

    let run = speed(repo.path(), &["stats"], &[]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    for expected in [
        "Approved at first review  33%",
        "Failed at max_revisions   750",
        "overrule: check_failed",
        "By feature",
        "2026-W10",
        "per review (at 3 and 15 per million tokens in and out)",
    ] {
        assert!(run.stdout.contains(expected), "{expected}: {}", run.stdout);
    }

    let run = speed(repo.path(), &["stats", "--feature", "nothing"], &[]);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr.contains("feature nothing has no review"),
        "{}",
        run.stderr
    );
    let run = speed(
        repo.path(),
        &["history", "--feature", "loans", "--limit", "3"],
        &[],
    );
    assert_eq!(run.stdout.lines().count(), 3, "{}", run.transcript());
    assert!(run.stdout.lines().all(|l| l.contains("loans/")));
}

#[test]
fn a_price_that_is_not_one_is_a_configuration_error() {
    let repo = repo::example();
    repo.write(".speed/reviews/log.jsonl", &many_reviews(3));
    repo.config("[llm]\nprice_input_per_mtok = \"three\"\n");
    let run = speed(repo.path(), &["stats"], &[]);
    assert_eq!(run.code, 1, "{}", run.transcript());
    assert!(
        run.stderr
            .contains("llm.price_input_per_mtok: expected a price per million tokens"),
        "{}",
        run.stderr
    );
    repo.config("[llm]\nprice_input_per_mtok = 3\n");
    let run = speed(repo.path(), &["stats", "--format", "json"], &[]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    assert_eq!(json_of(&run)["cost"], Value::Null);
    assert!(
        run.stderr.contains("only one of llm.price_input_per_mtok"),
        "{}",
        run.stderr
    );
}

#[test]
fn a_review_prints_markdown_for_a_pull_request_comment() {
    let repo = repo::example();
    let server = serve();
    configure(&repo, &server, "");
    let run = speed(
        repo.path(),
        &["review", "--task-id", "1", "--format", "markdown"],
        &[],
    );
    assert_eq!(run.code, 0, "{}", run.transcript());
    assert!(
        run.stdout
            .starts_with("# speed review: library\\-catalog/1"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("- **Decision:** approved"),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("### Warnings"), "{}", run.stdout);
}

#[test]
fn show_without_a_subject_prints_the_last_review_of_any_subject() {
    let (repo, _server, printed) = reviewed();
    let run = speed(repo.path(), &["show", "--format", "json"], &[]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    assert_eq!(&json_of(&run), review_of(&printed, "2"), "the last review");
    let run = speed(
        repo.path(),
        &["show", "--nth", "2", "--format", "json"],
        &[],
    );
    assert_eq!(run.code, 0, "{}", run.transcript());
    assert_eq!(&json_of(&run), review_of(&printed, "1"), "the one before");
    let run = speed(repo.path(), &["show"], &[]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    assert!(run.stdout.contains("library-catalog/2"), "{}", run.stdout);
    let run = speed(repo.path(), &["show", "--nth", "3"], &[]);
    assert_eq!(run.code, 1, "{}", run.transcript());
    assert!(run.stderr.contains("2 reviews"), "{}", run.stderr);

    let fresh = repo::example();
    let run = speed(fresh.path(), &["show"], &[]);
    assert_eq!(run.code, 1, "{}", run.transcript());
    assert!(run.stderr.contains("no review"), "{}", run.stderr);
}

/// The keys of a JSON object, in the order they stand.
fn keys(value: &Value) -> Vec<String> {
    value
        .as_object()
        .map(|m| m.keys().cloned().collect())
        .unwrap_or_default()
}

#[test]
fn a_saved_report_keeps_its_keys_in_order_and_show_lists_the_dimensions_so() {
    let (repo, _server, printed) = reviewed();
    let printed_order = keys(&review_of(&printed, "1")["scores"]["dimensions"]);
    assert_eq!(
        printed_order[0], "requirement_adherence",
        "{printed_order:?}"
    );
    let saved = repo
        .report_files()
        .into_iter()
        .find(|r| r["task_id"] == "1")
        .unwrap();
    assert_eq!(keys(&saved["scores"]["dimensions"]), printed_order);
    assert_eq!(
        keys(&saved["scores"]["dimensions"]["code_quality"]),
        ["score", "weight", "min_score", "passed", "reason"]
    );
    let run = speed(repo.path(), &["show", "--task-id", "1"], &[]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    let at = |name: &str| run.stdout.find(name).unwrap_or(usize::MAX);
    assert!(
        at("requirement_adherence") < at("code_quality")
            && at("code_quality") < at("test_quality")
            && at("test_quality") < at("security_performance"),
        "{}",
        run.stdout
    );
}

#[test]
fn reviews_through_a_command_that_reports_no_usage_are_counted_by_speed_everywhere() {
    let repo = repo::example();
    let answer = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(answer.path(), text(&verdicts::approve_task_1())).unwrap();
    repo.config(&format!(
        "[llm]\nprovider = \"command\"\ncommand = [\"sh\", \"-c\", 'cat >/dev/null; cat \"{}\"']\ntimeout_secs = 10\nprice_input_per_mtok = 3.0\nprice_output_per_mtok = 15.0\n[guardian]\nenabled = false\n",
        answer.path().display()
    ));
    let run = speed(repo.path(), &["review", "--task-id", "1", "--json"], &[]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    let report = &json_of(&run)["reviews"][0];
    let tokens = &report["tokens"];
    let counted = tokens["prompt_counted"].as_u64().unwrap();
    assert!(counted > 1_000, "{counted}");
    // What was sent is the prompt speed assembled, counted the same way;
    // the answer is counted too, and the report says whose figures these are.
    let prompt = tokens["prompt"].as_u64().unwrap();
    assert!(prompt.abs_diff(counted) <= counted / 100, "{tokens}");
    let completion = tokens["completion"].as_u64().unwrap();
    assert!(completion > 100, "{tokens}");
    assert_eq!(tokens["counted_by"], "speed");
    // The cost follows the figures.
    let cost = report["cost"]["total"].as_f64().unwrap();
    let expected = (prompt as f64 * 3.0 + completion as f64 * 15.0) / 1e6;
    assert!((cost - expected).abs() < 1e-4, "{cost} vs {expected}");
    let line = &repo.log()[0];
    assert_eq!(line["tokens"]["prompt"], prompt);
    assert_eq!(line["tokens"]["counted_by"], "speed");
    assert!(line["cost"]["total"].as_f64().unwrap() > 0.0, "{line}");

    let run = speed(repo.path(), &["stats", "--format", "json"], &[]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    let stats = json_of(&run);
    assert_eq!(stats["tokens"]["input"], prompt, "{stats}");
    assert_eq!(stats["tokens"]["output"], completion);
    assert_eq!(stats["tokens"]["estimated_reviews"], 1);
    assert!(stats["cost"]["total"].as_f64().unwrap() > 0.0, "{stats}");
    let human = speed(repo.path(), &["stats"], &[]);
    assert!(
        human.stdout.contains("1 review counted by speed"),
        "{}",
        human.stdout
    );
    assert!(
        human
            .stdout
            .contains(&format!("per review {} in", thousands(prompt))),
        "figures per review as speed prints figures: {}",
        human.stdout
    );
    // Every format shows the same figures, marked as speed's count.
    let figures = format!(
        "{} in, {} out (counted by speed",
        thousands(prompt),
        thousands(completion)
    );
    for args in [
        &["show", "--task-id", "1"][..],
        &["show", "--task-id", "1", "--format", "markdown"],
        &["show", "--task-id", "1", "--format", "html"],
    ] {
        let run = speed(repo.path(), args, &[]);
        assert_eq!(run.code, 0, "{}", run.transcript());
        assert!(run.stdout.contains(&figures), "{args:?}: {}", run.stdout);
    }
    let run = speed(repo.path(), &["history"], &[]);
    assert!(
        run.stdout.contains(&format!(
            "{} in {} out (counted)",
            thousands(prompt),
            thousands(completion)
        )),
        "{}",
        run.stdout
    );
    // The review's own report, and the batch summary.
    let run = speed(repo.path(), &["review", "--force"], &[]);
    assert!(
        run.stdout
            .contains("out (counted by speed: the provider reported no usage)"),
        "{}",
        run.stdout
    );
    let summary = &run.stdout[run.stdout.find("Summary").unwrap()..];
    assert!(summary.contains(" (counted)"), "{summary}");
}

/// 12345 → "12,345", as speed prints figures.
fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}
