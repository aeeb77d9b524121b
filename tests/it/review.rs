//! `speed review --task-id N` end to end: the real binary, the example
//! repository, and a loopback server playing the model. Covers what a review
//! changes, how answers are parsed and corrected, provider failures and exit
//! codes, speed's own overrules, and the human and JSON reports.

use std::time::{Duration, Instant};

use crate::support::model_server::{ModelServer, Recorded, Reply};
use crate::support::repo::{self, TempRepo};
use crate::support::speed::{Run, speed};
use crate::support::verdicts::{self, text};
use serde_json::{Value, json};

/// Points the example at the server; the guardian is off unless a test
/// turns it on (tests/guardian.rs covers it).
fn configure(repo: &TempRepo, server: &ModelServer, extra: &str) {
    repo.config(&format!(
        "[llm]\nprovider = \"openai\"\nbase_url = \"{}\"\nmodel = \"test-model\"\ntimeout_secs = 2\nmax_retries = 2\nretry_base_ms = 10\n{extra}\n[guardian]\nenabled = false\n",
        server.url()
    ));
}

fn review(repo: &TempRepo, id: &str, args: &[&str]) -> Run {
    let mut all = vec!["review", "--task-id", id];
    all.extend_from_slice(args);
    speed(repo.path(), &all, &[])
}

/// The user message of a recorded OpenAI-style request.
fn last_user_message(req: &Recorded) -> String {
    let messages = req.json()["messages"].as_array().unwrap();
    messages.iter().rev().find(|m| m["role"] == "user").unwrap()["content"]
        .as_str()
        .unwrap()
        .to_string()
}

#[test]
fn approve_records_the_verdict_report_and_log() {
    let repo = repo::example();
    let server = ModelServer::scripted(vec![Reply::openai(&text(&verdicts::approve_task_1()))]);
    configure(&repo, &server, "");
    let before = repo.task("1");
    let run = review(&repo, "1", &[]);
    assert_eq!(run.code, 0, "{}", run.transcript());

    let task = repo.task("1");
    assert_eq!(task["review_verdict"], "approve");
    assert_eq!(task["status"], "done");
    assert!(task["reviewed_at"].is_string());
    // Every field the orchestrator wrote is still there, in order.
    let keys = |v: &Value| v.as_object().unwrap().keys().cloned().collect::<Vec<_>>();
    let before_keys = keys(&before);
    assert_eq!(&keys(&task)[..before_keys.len()], &before_keys[..]);
    assert_eq!(task["agent"], before["agent"]);

    let log = repo.log();
    assert_eq!(log.len(), 1);
    assert_eq!(log[0]["task"], "1");
    assert_eq!(log[0]["decision"], "approve");
    assert_eq!(log[0]["model"]["name"], "test-model");
    assert_eq!(log[0]["tokens"]["prompt"], 1234);
    assert!(
        log[0]["hashes"]["diff"]
            .as_str()
            .unwrap()
            .starts_with("sha256:")
    );
    let reports = repo.report_files();
    assert_eq!(reports.len(), 1);
    let report = &reports[0];
    assert!(
        report["prompt"]
            .as_str()
            .unwrap()
            .contains("SOURCE OF TRUTH")
    );
    assert_eq!(report["calls"].as_array().unwrap().len(), 1);
    assert!(
        report["hashes"]["prompt"]
            .as_str()
            .unwrap()
            .starts_with("sha256:")
    );

    // The request: temperature 0, a seed, the prompt as the user message.
    let reqs = server.requests();
    assert_eq!(reqs.len(), 1);
    assert_eq!(reqs[0].json()["temperature"], 0.0);
    assert!(reqs[0].json()["seed"].is_u64());
    assert!(reqs[0].json().get("response_format").is_none());
    assert!(last_user_message(&reqs[0]).contains("Search returns at most 20 results."));

    // Nits of the approval come last.
    let nits = run
        .stdout
        .rfind("library-catalog/1: [nit] catalog/src/search.rs:28")
        .unwrap();
    let verdict = run.stdout.find("Task 1: approved").unwrap();
    assert!(verdict < nits, "{}", run.stdout);
}

#[test]
fn request_changes_writes_actionable_feedback() {
    let repo = repo::example();
    let server = ModelServer::scripted(vec![Reply::openai(&text(
        &verdicts::request_changes_task_2(),
    ))]);
    configure(&repo, &server, "");
    let run = review(&repo, "2", &[]);
    assert_eq!(run.code, 50, "{}", run.transcript());
    let task = repo.task("2");
    assert_eq!(task["status"], "pending");
    assert_eq!(task["review_verdict"], "request_changes");
    assert_eq!(task["revision_count"], 1);
    let feedback = task["review_feedback"].as_str().unwrap();
    let blocking = feedback.find("catalog/src/loans.rs:8").unwrap();
    let missing = feedback.find("overdue").unwrap();
    let unmet = feedback.find("AC-2").unwrap();
    assert!(blocking < missing && missing < unmet, "{feedback}");
    assert!(feedback.contains("Set MAX_RENEWALS to 2"));
}

#[test]
fn past_max_revisions_the_task_fails() {
    let repo = repo::example();
    let mut task = repo.task("2");
    task["revision_count"] = json!(2);
    repo.write(
        &repo.task_path("2"),
        &serde_json::to_string_pretty(&task).unwrap(),
    );
    let server = ModelServer::scripted(vec![Reply::openai(&text(
        &verdicts::request_changes_task_2(),
    ))]);
    configure(&repo, &server, "");
    let run = review(&repo, "2", &[]);
    assert_eq!(run.code, 50, "{}", run.transcript());
    let task = repo.task("2");
    assert_eq!(task["revision_count"], 3);
    assert_eq!(task["status"], "failed");
}

#[test]
fn fenced_and_prose_wrapped_answers_are_found() {
    let answer = text(&verdicts::approve_task_1());
    let wrapped = [
        format!(
            "Here is my review.\n\n```json\n{answer}\n```\n\nLet me know if anything is unclear."
        ),
        format!(
            "<think>The diff {{\"verdict\": \"request_changes\"}} maybe?</think>\nLooking at the diff:\n```diff\n-fn a() {{\n+fn b() {{\n```\nVerdict:\n```json\n{answer}\n```"
        ),
    ];
    for body in wrapped {
        let repo = repo::example();
        let server = ModelServer::scripted(vec![Reply::openai(&body)]);
        configure(&repo, &server, "");
        let run = review(&repo, "1", &[]);
        assert_eq!(run.code, 0, "{}", run.transcript());
        assert_eq!(server.requests().len(), 1);
    }
}

#[test]
fn invalid_then_corrected() {
    let repo = repo::example();
    let server = ModelServer::scripted(vec![
        Reply::openai(r#"{"verdict": "maybe", "issues": []}"#),
        Reply::openai(&text(&verdicts::approve_task_1())),
    ]);
    configure(&repo, &server, "");
    let run = review(&repo, "1", &[]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    let reqs = server.requests();
    assert_eq!(reqs.len(), 2);
    let correction = last_user_message(&reqs[1]);
    assert!(correction.contains("verdict"), "{correction}");
    assert!(
        correction.contains("expectations"),
        "names the missing field: {correction}"
    );
    let messages = reqs[1].json()["messages"].as_array().unwrap();
    assert!(
        messages
            .iter()
            .any(|m| m["role"] == "assistant" && m["content"].as_str().unwrap().contains("maybe"))
    );
}

#[test]
fn invalid_twice_exits_53_keeps_both_answers_and_leaves_the_task() {
    let repo = repo::example();
    let before = repo.read(&repo.task_path("1"));
    let server = ModelServer::scripted(vec![
        Reply::openai("I think it looks fine!"),
        Reply::openai(r#"{"verdict": "approve"}"#),
    ]);
    configure(&repo, &server, "");
    let run = review(&repo, "1", &[]);
    assert_eq!(run.code, 53, "{}", run.transcript());
    assert_eq!(repo.read(&repo.task_path("1")), before);
    let reports = repo.report_files();
    assert_eq!(reports.len(), 1);
    let answers: Vec<&str> = reports[0]["calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["answer"].as_str().unwrap())
        .collect();
    assert_eq!(
        answers,
        ["I think it looks fine!", r#"{"verdict": "approve"}"#]
    );
    assert!(reports[0]["error"].is_string());
}

#[test]
fn an_answer_cut_off_by_the_length_limit_is_never_parsed() {
    let repo = repo::example();
    let before = repo.read(&repo.task_path("1"));
    // A complete-looking object, but the server says it was cut off.
    let whole = text(&verdicts::approve_task_1());
    let server = ModelServer::scripted(vec![
        Reply::openai_truncated(&whole),
        Reply::openai_truncated(&whole),
    ]);
    configure(&repo, &server, "");
    let run = review(&repo, "1", &[]);
    assert_eq!(run.code, 53, "{}", run.transcript());
    assert!(
        run.stderr.contains("cut off")
            || run.stdout.contains("cut off")
            || run.stdout.contains("output limit"),
        "{}",
        run.transcript()
    );
    assert_eq!(repo.read(&repo.task_path("1")), before);
}

#[test]
fn rate_limited_then_success_honours_retry_after() {
    let repo = repo::example();
    let server = ModelServer::scripted(vec![
        Reply::status(429, "slow down").header("Retry-After", "1"),
        Reply::openai(&text(&verdicts::approve_task_1())),
    ]);
    configure(&repo, &server, "");
    let started = Instant::now();
    let run = review(&repo, "1", &[]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    assert!(started.elapsed() >= Duration::from_secs(1));
    assert_eq!(server.requests().len(), 2);
}

#[test]
fn server_errors_until_retries_run_out_exit_52() {
    let repo = repo::example();
    let before = repo.read(&repo.task_path("1"));
    let server = ModelServer::start(|_| Reply::status(503, "overloaded"));
    configure(&repo, &server, "");
    let run = review(&repo, "1", &[]);
    assert_eq!(run.code, 52, "{}", run.transcript());
    assert_eq!(
        server.requests().len(),
        3,
        "one try and max_retries = 2 retries"
    );
    assert!(
        run.stdout.contains("503") || run.stderr.contains("503"),
        "{}",
        run.transcript()
    );
    assert_eq!(repo.read(&repo.task_path("1")), before);
}

#[test]
fn a_server_that_never_answers_times_out_with_52() {
    let repo = repo::example();
    let server = ModelServer::start(|_| Reply::hang());
    repo.config(&format!(
        "[llm]\nprovider = \"openai\"\nbase_url = \"{}\"\nmodel = \"m\"\ntimeout_secs = 0.5\nmax_retries = 1\nretry_base_ms = 10\n[guardian]\nenabled = false\n",
        server.url()
    ));
    let started = Instant::now();
    let run = review(&repo, "1", &[]);
    assert_eq!(run.code, 52, "{}", run.transcript());
    assert!(started.elapsed() < Duration::from_secs(15));
}

#[test]
fn a_client_error_is_not_retried_and_shows_the_body() {
    let repo = repo::example();
    let server = ModelServer::start(|_| Reply::status(404, "model 'test-model' not found"));
    configure(&repo, &server, "");
    let run = review(&repo, "1", &[]);
    assert_eq!(run.code, 1, "{}", run.transcript());
    assert_eq!(server.requests().len(), 1);
    assert!(run.transcript().contains("model 'test-model' not found"));
}

#[test]
fn a_fabricated_quote_turns_an_approval_into_request_changes() {
    let repo = repo::example();
    let server = ModelServer::scripted(vec![Reply::openai(&text(
        &verdicts::approve_with_fabricated_quote(),
    ))]);
    configure(&repo, &server, "");
    let run = review(&repo, "2", &["--json"]);
    assert_eq!(run.code, 50, "{}", run.transcript());
    let out: Value = serde_json::from_str(&run.stdout).unwrap();
    let r = &out["reviews"][0];
    assert_eq!(r["model_verdict"], "approve");
    assert_eq!(r["verdict"], "request_changes");
    assert_eq!(r["quotes"][0]["found"], false);
    assert!(r["overrules"].as_array().unwrap().iter().any(|o| {
        o["rule"] == "fabricated_quote"
            && o["reason"]
                .as_str()
                .unwrap()
                .contains("renewed at most three times")
    }));
    assert!(
        repo.task("2")["review_feedback"]
            .as_str()
            .unwrap()
            .contains("renewed at most three times")
    );
}

#[test]
fn an_approval_with_a_critical_issue_is_not_an_approval() {
    let repo = repo::example();
    let server = ModelServer::scripted(vec![Reply::openai(&text(
        &verdicts::approve_with_critical_issue(),
    ))]);
    configure(&repo, &server, "");
    let run = review(&repo, "2", &[]);
    assert_eq!(run.code, 50, "{}", run.transcript());
    assert!(run.stdout.contains("blocking_issue"), "{}", run.stdout);
    assert_eq!(repo.task("2")["review_verdict"], "request_changes");
}

#[test]
fn structured_output_is_sent_when_configured() {
    let repo = repo::example();
    let server = ModelServer::scripted(vec![Reply::openai(&text(&verdicts::approve_task_1()))]);
    configure(&repo, &server, "structured_output = true");
    let run = review(&repo, "1", &[]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    let body = server.requests()[0].json().clone();
    assert_eq!(body["response_format"]["type"], "json_schema");
    let schema = &body["response_format"]["json_schema"]["schema"];
    assert!(schema["properties"]["verdict"].is_object(), "{schema}");
}

#[test]
fn anthropic_provider_end_to_end() {
    let repo = repo::example();
    let server = ModelServer::scripted(vec![Reply::anthropic(&text(&verdicts::approve_task_1()))]);
    repo.config(&format!(
        "[llm]\nprovider = \"anthropic\"\nbase_url = \"{}\"\nmodel = \"claude-test\"\napi_key_env = \"TEST_ANTHROPIC_KEY\"\n[guardian]\nenabled = false\n",
        server.root()
    ));
    let run = speed(
        repo.path(),
        &["review", "--task-id", "1"],
        &[("TEST_ANTHROPIC_KEY", "k-123")],
    );
    assert_eq!(run.code, 0, "{}", run.transcript());
    let req = &server.requests()[0];
    assert_eq!(req.header("x-api-key"), Some("k-123"));
    assert!(req.header("anthropic-version").is_some());
    assert!(
        !run.transcript().contains("k-123"),
        "the key is never printed"
    );
}

/// Configure a command provider: a shell script that runs `first` (with
/// the prompt on its stdin), then approves task 1.
fn approving_command(repo: &TempRepo, first: &str) {
    let answer = repo.path().join("answer.json");
    std::fs::write(&answer, text(&verdicts::approve_task_1())).unwrap();
    let script = repo.path().join("model.sh");
    std::fs::write(
        &script,
        format!("#!/bin/sh\n{first}\ncat \"{}\"\n", answer.display()),
    )
    .unwrap();
    repo.config(&format!(
        "[llm]\nprovider = \"command\"\ncommand = [\"sh\", \"{}\"]\n[guardian]\nenabled = false\n",
        script.display()
    ));
}

#[test]
fn command_provider_reads_stdin_and_answers_on_stdout() {
    let repo = repo::example();
    approving_command(
        &repo,
        &format!("cat > \"{}/stdin.txt\"", repo.path().display()),
    );
    let run = review(&repo, "1", &[]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    assert!(repo.read("stdin.txt").contains("SOURCE OF TRUTH"));
}

/// speed turns transparent huge pages off for itself (see `memory`); the
/// model command it starts keeps the user's setting.
#[cfg(target_os = "linux")]
#[test]
fn the_model_command_keeps_the_users_huge_page_setting() {
    let thp = |status: &str| {
        status
            .lines()
            .find(|l| l.starts_with("THP_enabled:"))
            .map(|l| l.split_whitespace().last().unwrap_or("").to_string())
    };
    let ours = std::fs::read_to_string("/proc/self/status").unwrap();
    let Some(users) = thp(&ours) else {
        eprintln!("skipped: this kernel does not show THP_enabled in /proc/self/status");
        return;
    };
    let repo = repo::example();
    approving_command(
        &repo,
        &format!(
            "cat > /dev/null\ncp /proc/self/status \"{dir}/child.txt\"\ncp /proc/$PPID/status \"{dir}/speed.txt\"",
            dir = repo.path().display()
        ),
    );
    let run = review(&repo, "1", &[]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    assert_eq!(thp(&repo.read("speed.txt")).as_deref(), Some("0"));
    assert_eq!(thp(&repo.read("child.txt")), Some(users));
}

#[test]
fn a_failing_command_is_unreachable_with_its_stderr() {
    let repo = repo::example();
    repo.config(
        "[llm]\nprovider = \"command\"\ncommand = [\"sh\", \"-c\", \"echo quota exhausted >&2; exit 3\"]\n[guardian]\nenabled = false\n",
    );
    let run = review(&repo, "1", &[]);
    assert_eq!(run.code, 52, "{}", run.transcript());
    assert!(run.transcript().contains("quota exhausted"));
}

#[test]
fn no_provider_configured_reviews_offline_and_says_how_to_configure_one() {
    let repo = repo::example();
    let run = review(&repo, "1", &[]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    assert!(run.stderr.contains("[llm]"), "{}", run.stderr);
    assert!(run.stderr.contains("offline"), "{}", run.stderr);
    assert_eq!(repo.log()[0]["decision"], "checks_passed");
}

/// Masks what differs between runs: paths, times, durations and hashes.
fn scrub(text: &str) -> String {
    let mut out = String::new();
    for line in text.lines() {
        let mut line = line.to_string();
        for key in ["\"duration_ms\": ", "\"reviewed_at\": "] {
            if let Some(at) = line.find(key) {
                let end = line[at..].find(',').map(|e| at + e).unwrap_or(line.len());
                line.replace_range(at + key.len()..end, "[X]");
            }
        }
        // Each report file, and the summary beside it.
        let mut from = 0;
        while let Some(at) = line[from..].find(".speed/reviews/").map(|a| from + a) {
            let rest = &line[at..];
            let end = [".json", ".md"]
                .iter()
                .filter_map(|ext| rest.find(ext).map(|e| (e, *ext)))
                .min();
            let Some((end, ext)) = end else { break };
            let masked = format!(".speed/reviews/[REPORT]{ext}");
            line.replace_range(at..at + end + ext.len(), &masked);
            from = at + masked.len();
        }
        out.push_str(&line);
        out.push('\n');
    }
    out.replace('\r', "")
}

#[test]
fn human_and_json_report_snapshots() {
    let repo = repo::example();
    let server = ModelServer::scripted(vec![Reply::openai(&text(
        &verdicts::approve_with_fabricated_quote(),
    ))]);
    configure(&repo, &server, "");
    let run = review(&repo, "2", &[]);
    assert_eq!(run.code, 50);
    insta::assert_snapshot!("report_human_overruled", scrub(&run.stdout));

    let repo = repo::example();
    let server = ModelServer::scripted(vec![Reply::openai(&text(&verdicts::approve_task_1()))]);
    configure(&repo, &server, "");
    let run = review(&repo, "1", &["--json"]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    let mut json: Value = serde_json::from_str(&run.stdout).unwrap();
    let r = &mut json["reviews"][0];
    r["duration_ms"] = json!("[X]");
    r["report_path"] = json!("[REPORT]");
    r["summary_path"] = json!("[REPORT].md");
    r["impact"] = json!("[IMPACT: see tests/impact]");
    insta::assert_json_snapshot!("report_json_approved", json);
}

#[test]
fn an_input_error_writes_nothing_and_reports_on_stderr() {
    let repo = repo::example();
    let server = ModelServer::start(|_| panic!("the model must not be asked"));
    configure(&repo, &server, "");
    let mut task = repo.task("1");
    task["branch"] = "speed/gone".into();
    let text = serde_json::to_string_pretty(&task).unwrap();
    repo.write(&repo.task_path("1"), &text);
    let run = review(&repo, "1", &[]);
    assert_eq!(run.code, 1, "{}", run.transcript());
    assert!(run.stderr.contains("speed/gone"), "{}", run.stderr);
    assert_eq!(repo.read(&repo.task_path("1")), text);
    assert!(!repo.path().join(".speed/reviews").exists());
    assert!(server.requests().is_empty());
}

fn shop_approval() -> String {
    text(&json!({
        "dimensions": crate::support::verdicts::dimensions(),
        "verdict": "approve",
        "expectations": "The cart cap.",
        "criteria": [],
        "spec_verification": [{"spec_quote": "The cart holds at most 10 items.", "spec_section": "Cart",
                               "satisfied": true, "evidence": "src/cart.rs:2", "notes": ""}],
        "issues": [],
        "strengths": []
    }))
}

#[test]
fn a_task_cannot_rewrite_its_own_source_of_truth() {
    let repo = repo::shop_editing_its_spec(&["src/cart.rs"]);
    let server = ModelServer::scripted(vec![Reply::openai(&shop_approval())]);
    configure(&repo, &server, "");
    let run = speed(repo.path(), &["review", "--task-id", "1", "--json"], &[]);
    assert_eq!(run.code, 50, "{}", run.transcript());
    let out: Value = serde_json::from_str(&run.stdout).unwrap();
    let r = &out["reviews"][0];
    assert_eq!(r["model_verdict"], "approve");
    assert_eq!(r["verdict"], "request_changes");
    assert!(
        r["overrules"]
            .as_array()
            .unwrap()
            .iter()
            .any(|o| o["rule"] == "spec_edited")
    );
    let read: Value = serde_json::from_str(&repo.read(".speed/tasks/1.json")).unwrap();
    assert!(
        read["review_feedback"]
            .as_str()
            .unwrap()
            .contains("specs/product/shop.md")
    );

    // Declared in the task's scope, the same edit is the model's call.
    let repo = repo::shop_editing_its_spec(&["src/cart.rs", "specs/product/shop.md"]);
    let server = ModelServer::scripted(vec![Reply::openai(&shop_approval())]);
    configure(&repo, &server, "");
    let run = speed(repo.path(), &["review", "--task-id", "1"], &[]);
    assert_eq!(run.code, 0, "{}", run.transcript());
}
