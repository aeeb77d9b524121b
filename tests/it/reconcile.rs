//! The reconcile turn (issue 43) against the loopback model: an answer that
//! contradicts itself is asked about once more, in the same conversation,
//! and the second answer decides under every rule. A corrected score, a
//! kept score, a turn to request changes, a rejection asked for its reason
//! (named, or still none), a consistent answer costing one call, the turn
//! off, a second answer that cannot be used; for the OpenAI-compatible, the
//! Anthropic and the command providers.

use serde_json::{Value, json};

use crate::support::model_server::{
    COMPLETION_TOKENS, ModelServer, PROMPT_TOKENS, Recorded, Reply,
};
use crate::support::repo::{self, TempRepo};
use crate::support::speed::{Run, speed};
use crate::support::verdicts::{self, text};

fn configure(repo: &TempRepo, server: &ModelServer, extra: &str) {
    repo.config(&format!(
        "[llm]\nprovider = \"openai\"\nbase_url = \"{}\"\nmodel = \"test-model\"\ntimeout_secs = 5\nmax_retries = 0\nretry_base_ms = 10\nprice_input_per_mtok = 1.0\nprice_output_per_mtok = 2.0\n[guardian]\nenabled = false\n{extra}",
        server.url()
    ));
}

fn review(repo: &TempRepo, id: &str) -> (Run, Value) {
    let run = speed(repo.path(), &["review", "--task-id", id, "--json"], &[]);
    let out: Value =
        serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{e}: {}", run.transcript()));
    (run, out["reviews"][0].clone())
}

/// The messages of a request, as sent.
fn messages(req: &Recorded) -> Vec<Value> {
    req.json()["messages"].as_array().unwrap().clone()
}

/// The first question is one message; the reconcile turn goes on from the
/// first answer: `first` answers the one, `second` the other.
fn two_answers(first: Value, second: Value) -> ModelServer {
    let (first, second) = (text(&first), text(&second));
    ModelServer::start(move |req| match messages(req).len() {
        1 => Reply::openai(&first),
        _ => Reply::openai(&second),
    })
}

/// Task 1's approval with these scores (the others at 95).
fn approval_scored(scores: &[(&str, u32)]) -> Value {
    let mut answer = verdicts::approve_task_1();
    for (name, score) in scores {
        answer["dimensions"][name] = json!({"score": score, "reason": format!("{name} as rated")});
    }
    answer
}

/// Task 1's answer requesting changes with nothing blocking: a minor
/// issue, every criterion met or unverifiable, every score at 95.
fn request_without_reason() -> Value {
    let mut answer = verdicts::approve_task_1();
    answer["verdict"] = json!("request_changes");
    answer
}

fn stages(report: &Value) -> Vec<String> {
    report["calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["stage"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn a_score_the_model_did_not_mean_is_corrected_and_the_approval_stands() {
    let repo = repo::example();
    let server = two_answers(
        approval_scored(&[("test_quality", 68)]),
        approval_scored(&[("test_quality", 74)]),
    );
    configure(&repo, &server, "");
    let (run, r) = review(&repo, "1");
    assert_eq!(run.code, 0, "{}", run.transcript());
    assert_eq!(r["verdict"], "approve");
    assert!(r["overrules"].as_array().unwrap().is_empty());
    assert_eq!(r["scores"]["dimensions"]["test_quality"]["score"], 74);
    // The turn went on from the first answer, naming the score and its minimum.
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let second = messages(&requests[1]);
    assert_eq!(second.len(), 3);
    assert_eq!(
        second[0],
        messages(&requests[0])[0],
        "the same conversation"
    );
    assert_eq!(second[1]["role"], "assistant");
    assert!(
        second[1]["content"]
            .as_str()
            .unwrap()
            .contains("\"score\": 68")
    );
    let turn = second[2]["content"].as_str().unwrap();
    assert!(turn.contains("- test_quality: 68 (minimum 70)"), "{turn}");
    assert!(!turn.contains("code_quality"), "only what is under: {turn}");
    // Recorded: why, the first scores, the turn, what the second said.
    let rec = &r["reconcile"];
    assert_eq!(rec["reason"], "approval_under_minimum");
    assert_eq!(rec["first_verdict"], "approve");
    assert_eq!(rec["first_scores"]["test_quality"], 68);
    assert_eq!(rec["first_scores"]["requirement_adherence"], 95);
    assert_eq!(rec["turn"], turn);
    assert_eq!(rec["verdict"], "approve");
    // Counted in tokens and cost: two calls.
    assert_eq!(r["tokens"]["prompt"], 2 * PROMPT_TOKENS);
    assert_eq!(r["tokens"]["completion"], 2 * COMPLETION_TOKENS);
    let cost = r["cost"]["total"].as_f64().unwrap();
    let expected = 2.0 * (PROMPT_TOKENS as f64 * 1.0 + COMPLETION_TOKENS as f64 * 2.0) / 1e6;
    assert!(
        (cost - expected).abs() < 1e-6,
        "{} vs {expected}",
        r["cost"]
    );
    let report = &repo.report_files()[0];
    assert_eq!(stages(report), ["review", "review (reconcile)"]);
    assert_eq!(report["reconcile"], *rec);
    let checker = crate::schemas::schema("report");
    crate::schemas::assert_valid("report", &checker, &r);
    crate::schemas::assert_valid("report", &checker, report);
    // The log line counts both calls; the people's outputs say it.
    let log = repo.read(".speed/reviews/log.jsonl");
    let line: Value = serde_json::from_str(log.lines().last().unwrap()).unwrap();
    assert_eq!(line["tokens"]["prompt"], 2 * PROMPT_TOKENS);
    let summary = repo.read(r["summary_path"].as_str().unwrap());
    assert!(
        summary.contains(
            "The first answer approved with test_quality: 68 (minimum 70); asked once more, it approved (scores changed: test_quality 68 → 74)."
        ),
        "{summary}"
    );
    let shown = speed(repo.path(), &["show", "--task-id", "1"], &[]);
    assert!(
        shown.stdout.contains("Asked again:"),
        "{}",
        shown.transcript()
    );
    assert_eq!(repo.task("1")["review_verdict"], "approve");
}

#[test]
fn a_score_the_model_keeps_under_its_minimum_still_overrules_the_approval() {
    let repo = repo::example();
    let low = approval_scored(&[("test_quality", 68)]);
    let server = two_answers(low.clone(), low);
    configure(&repo, &server, "");
    let (run, r) = review(&repo, "1");
    assert_eq!(run.code, 50, "{}", run.transcript());
    assert_eq!(server.requests().len(), 2);
    assert_eq!(r["model_verdict"], "approve");
    assert_eq!(r["verdict"], "request_changes");
    assert_eq!(r["overrules"][0]["rule"], "dimension_below_minimum");
    assert_eq!(r["reconcile"]["verdict"], "approve");
    assert!(
        r["feedback"]
            .as_str()
            .unwrap()
            .contains("- test_quality: 68 (minimum 70)")
    );
    assert_eq!(repo.task("1")["status"], "pending");
}

#[test]
fn asked_once_more_the_model_requests_changes_and_names_the_blocking_issue() {
    let repo = repo::example();
    let mut second = approval_scored(&[("test_quality", 68)]);
    second["verdict"] = json!("request_changes");
    second["issues"] = json!([{"severity": "major", "file": "catalog/tests/search.rs", "line": 5,
        "message": "No test covers a query of one character", "suggestion": "Add one"}]);
    let server = two_answers(approval_scored(&[("test_quality", 68)]), second);
    configure(&repo, &server, "");
    let (run, r) = review(&repo, "1");
    assert_eq!(run.code, 50, "{}", run.transcript());
    assert_eq!(r["model_verdict"], "request_changes");
    assert!(
        r["overrules"].as_array().unwrap().is_empty(),
        "{}",
        r["overrules"]
    );
    assert_eq!(r["reconcile"]["first_verdict"], "approve");
    assert_eq!(r["reconcile"]["verdict"], "request_changes");
    let feedback = r["feedback"].as_str().unwrap();
    assert!(
        feedback.contains("No test covers a query of one character"),
        "{feedback}"
    );
}

#[test]
fn a_rejection_without_a_reason_is_asked_what_must_change() {
    let repo = repo::example();
    let mut second = request_without_reason();
    second["issues"] = json!([{"severity": "major", "file": "catalog/src/search.rs", "line": 27,
        "message": "A query of two spaces counts as two characters", "suggestion": "Trim first"}]);
    let server = two_answers(request_without_reason(), second);
    configure(&repo, &server, "");
    let (run, r) = review(&repo, "1");
    assert_eq!(run.code, 50, "{}", run.transcript());
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let turn = messages(&requests[1])[2]["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        turn.contains("names nothing that blocks approval"),
        "{turn}"
    );
    assert!(turn.contains("What must change?"), "{turn}");
    assert_eq!(r["reconcile"]["reason"], "nothing_blocking");
    assert_eq!(r["reconcile"]["first_verdict"], "request_changes");
    let feedback = r["feedback"].as_str().unwrap();
    assert!(
        feedback.contains("A query of two spaces counts as two characters"),
        "{feedback}"
    );
    assert!(!feedback.contains("gave no reason"), "{feedback}");
}

#[test]
fn a_rejection_still_without_a_reason_is_kept_and_says_the_reviewer_gave_none() {
    let repo = repo::example();
    let server = two_answers(request_without_reason(), request_without_reason());
    configure(&repo, &server, "");
    let (run, r) = review(&repo, "1");
    assert_eq!(run.code, 50, "{}", run.transcript());
    assert_eq!(server.requests().len(), 2);
    assert_eq!(r["verdict"], "request_changes");
    assert_eq!(r["reconcile"]["verdict"], "request_changes");
    let feedback = r["feedback"].as_str().unwrap();
    assert!(
        feedback
            .starts_with("The reviewer requested changes but gave no reason that blocks approval"),
        "{feedback}"
    );
    assert!(
        feedback.contains("even when asked what must change"),
        "{feedback}"
    );
    assert!(!feedback.contains("no specific issues"), "{feedback}");
    // The minor issue it did name is still listed.
    assert!(
        feedback.contains("test names repeat the module name"),
        "{feedback}"
    );
    assert_eq!(
        repo.task("1")["review_feedback"].as_str().unwrap(),
        feedback
    );
}

#[test]
fn a_consistent_answer_costs_one_call() {
    let repo = repo::example();
    let server = two_answers(verdicts::approve_task_1(), json!({}));
    configure(&repo, &server, "");
    let (run, r) = review(&repo, "1");
    assert_eq!(run.code, 0, "{}", run.transcript());
    assert_eq!(server.requests().len(), 1);
    assert!(r.get("reconcile").is_none(), "{r}");
    assert_eq!(r["tokens"]["prompt"], PROMPT_TOKENS);
    // A request for changes with its reasons: one call too.
    let repo = repo::example();
    let server = two_answers(verdicts::request_changes_task_2(), json!({}));
    configure(&repo, &server, "");
    let (run, r) = review(&repo, "2");
    assert_eq!(run.code, 50, "{}", run.transcript());
    assert_eq!(server.requests().len(), 1);
    assert!(r.get("reconcile").is_none(), "{r}");
}

#[test]
fn with_reconcile_off_the_first_answer_decides_as_before() {
    let repo = repo::example();
    let server = two_answers(
        approval_scored(&[("test_quality", 68)]),
        approval_scored(&[("test_quality", 95)]),
    );
    configure(&repo, &server, "[review]\nreconcile = false\n");
    let (run, r) = review(&repo, "1");
    assert_eq!(run.code, 50, "{}", run.transcript());
    assert_eq!(server.requests().len(), 1);
    assert_eq!(r["overrules"][0]["rule"], "dimension_below_minimum");
    assert!(r.get("reconcile").is_none());
    let config = speed(repo.path(), &["config", "--json"], &[]);
    assert!(
        config.stdout.contains("review.reconcile"),
        "{}",
        config.transcript()
    );
}

#[test]
fn a_second_answer_that_cannot_be_used_leaves_the_first_to_decide() {
    let repo = repo::example();
    let first = text(&approval_scored(&[("test_quality", 68)]));
    let server = ModelServer::start(move |req| match messages(req).len() {
        1 => Reply::openai(&first),
        _ => Reply::openai("I stand by my review."),
    });
    configure(&repo, &server, "");
    let (run, r) = review(&repo, "1");
    assert_eq!(run.code, 50, "{}", run.transcript());
    // One turn, no corrective retry after it.
    assert_eq!(server.requests().len(), 2);
    assert_eq!(r["overrules"][0]["rule"], "dimension_below_minimum");
    assert!(r["reconcile"]["verdict"].is_null());
    assert!(
        r["reconcile"]["error"]
            .as_str()
            .unwrap()
            .contains("the first answer decided"),
        "{}",
        r["reconcile"]
    );
    // The model unreachable on the turn: the first answer decides too.
    let repo = repo::example();
    let first = text(&approval_scored(&[("test_quality", 68)]));
    let server = ModelServer::start(move |req| match messages(req).len() {
        1 => Reply::openai(&first),
        _ => Reply::status(500, "{\"error\": {\"message\": \"overloaded\"}}"),
    });
    configure(&repo, &server, "");
    let (run, r) = review(&repo, "1");
    assert_eq!(run.code, 50, "{}", run.transcript());
    assert!(r["reconcile"]["error"].as_str().unwrap().contains("500"));
}

#[test]
fn the_anthropic_provider_goes_on_in_the_same_conversation() {
    let repo = repo::example();
    let (first, second) = (
        text(&approval_scored(&[("code_quality", 60)])),
        text(&approval_scored(&[("code_quality", 80)])),
    );
    let server = ModelServer::start(move |req| match messages(req).len() {
        1 => Reply::anthropic(&first),
        _ => Reply::anthropic(&second),
    });
    repo.config(&format!(
        "[llm]\nprovider = \"anthropic\"\nbase_url = \"{}\"\nmodel = \"claude-test\"\ntimeout_secs = 5\nmax_retries = 0\n[guardian]\nenabled = false\n",
        server.root()
    ));
    let run = speed(
        repo.path(),
        &["review", "--task-id", "1", "--json"],
        &[("ANTHROPIC_API_KEY", "sk-ant-loopback")],
    );
    assert_eq!(run.code, 0, "{}", run.transcript());
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let second = messages(&requests[1]);
    let roles: Vec<&str> = second.iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert_eq!(roles, ["user", "assistant", "user"]);
    let r: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(
        r["reviews"][0]["reconcile"]["first_scores"]["code_quality"],
        60
    );
}

#[test]
fn the_command_provider_gets_one_prompt_holding_the_first_answer_and_the_turn() {
    let repo = repo::example();
    let dir = tempfile::tempdir().unwrap();
    let first = dir.path().join("first.json");
    let second = dir.path().join("second.json");
    std::fs::write(&first, text(&approval_scored(&[("test_quality", 68)]))).unwrap();
    std::fs::write(&second, text(&approval_scored(&[("test_quality", 72)]))).unwrap();
    let log = dir.path().join("stdin");
    // Each call's stdin is kept; the second call holds the conversation.
    let script = format!(
        "n=$(ls '{d}' | grep -c '^stdin') ; cat > '{log}'.$n ; if grep -q '^=== ASSISTANT ===' '{log}'.$n ; then cat '{second}' ; else cat '{first}' ; fi",
        d = dir.path().display(),
        log = log.display(),
        first = first.display(),
        second = second.display(),
    );
    repo.config(&format!(
        "[llm]\nprovider = \"command\"\ncommand = [\"sh\", \"-c\", {}]\ntimeout_secs = 20\n[guardian]\nenabled = false\n",
        serde_json::to_string(&script).unwrap()
    ));
    let run = speed(repo.path(), &["review", "--task-id", "1", "--json"], &[]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    let conversation = std::fs::read_to_string(format!("{}.1", log.display())).unwrap();
    let user = conversation.find("=== USER ===").unwrap();
    let assistant = conversation.find("=== ASSISTANT ===").unwrap();
    let turn = conversation.rfind("=== USER ===").unwrap();
    assert!(user < assistant && assistant < turn, "{conversation}");
    assert!(conversation[assistant..turn].contains("\"score\": 68"));
    assert!(conversation[turn..].contains("- test_quality: 68 (minimum 70)"));
    let r: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(r["reviews"][0]["reconcile"]["verdict"], "approve");
}
