//! The secrets safety net and the sources it taught us to redact: the
//! bytes sent to the loopback model, the bytes under `.speed/` (file names
//! included) and on stdout and stderr never hold a secret, whichever way
//! it came in; what escaped redaction at its source is a critical `secret`
//! finding; a test fixture judged where it was read is left alone.

use std::path::Path;

use crate::support::model_server::{ModelServer, Reply};
use crate::support::repo::{self, RepoBuilder, TempRepo};
use crate::support::speed::{Run, speed};
use crate::support::verdicts::{self, text};
use serde_json::{Value, json};

const AWS_KEY: &str = "AKIAQYLPMN5HHHFPZAM2";
const GITHUB_TOKEN: &str = "ghp_R8fNq2Lx7TbV4mKc9WzPd3HsYe6Ju1Ao5GiQ";
const ANTHROPIC_KEY: &str = "sk-ant-api03-Zq8Xv2Lm4Np6Rt8Vw0Yb2Dc4Fg6Hj8Kl0Mn2Pq4St6Uv8Wx0Yz";
const PASSWORD: &str = "w8Kq2ZxN4vLp9RtY";

/// Every file under `dir`, names and bytes, as one text.
fn everything_under(dir: &Path) -> String {
    let mut out = String::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        out.push_str(&path.to_string_lossy());
        out.push('\n');
        if path.is_dir() {
            out.push_str(&everything_under(&path));
        } else if let Ok(bytes) = std::fs::read(&path) {
            out.push_str(&String::from_utf8_lossy(&bytes));
        }
    }
    out
}

/// Asserts `secret` is nowhere speed wrote or printed.
fn nowhere(repo: &TempRepo, run: &Run, secret: &str) {
    let written = everything_under(&repo.path().join(".speed"));
    assert!(
        !written.contains(secret),
        "written under .speed/: {written}"
    );
    assert!(!run.stdout.contains(secret), "{}", run.transcript());
    assert!(!run.stderr.contains(secret), "{}", run.transcript());
}

fn sent(server: &ModelServer) -> String {
    server.requests().iter().map(|r| r.body.clone()).collect()
}

fn with_model(repo: &TempRepo, server: &ModelServer, guardian: bool) {
    repo.config(&format!(
        "[llm]\nprovider = \"openai\"\nbase_url = \"{}\"\nmodel = \"test-model\"\ntimeout_secs = 5\nmax_retries = 0\n[guardian]\nenabled = {guardian}\n",
        server.url()
    ));
}

fn json_out(run: &Run) -> Value {
    serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{e}: {}", run.transcript()))
}

/// The `secret` findings of a report, as (file, message).
fn secret_findings(report: &Value) -> Vec<(Option<String>, String)> {
    report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["check"] == "secret")
        .map(|c| {
            assert_eq!(c["severity"], "critical", "{c}");
            (
                c["file"].as_str().map(str::to_string),
                c["message"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// A branch whose very name holds a key: no source redacts a branch name
/// (git needs it as it is), so the net catches it in the prompt, the report,
/// the log, the report's file name and the terminal, and overrules the
/// model's approval.
#[test]
fn a_key_in_a_branch_name_is_caught_by_the_net_wherever_it_would_go() {
    let repo = repo::example();
    let branch = format!("leak/{AWS_KEY}");
    let mut builder = RepoBuilder::open(repo.path()).unwrap();
    builder
        .commit(
            &branch,
            Some("speed/task-1"),
            &[("catalog/src/notes.rs", "pub fn note() -> u8 {\n    1\n}\n")],
            &[],
            "notes",
        )
        .unwrap();
    let server = ModelServer::scripted(vec![Reply::openai(&text(&verdicts::approve_task_1()))]);
    with_model(&repo, &server, false);
    let spec = "specs/product/library-catalog.md";
    let run = speed(
        repo.path(),
        &["review", "--branch", &branch, "--spec", spec, "--json"],
        &[],
    );
    assert_eq!(run.code, 50, "{}", run.transcript());
    let body = sent(&server);
    assert!(!body.is_empty());
    assert!(!body.contains(AWS_KEY), "{body}");
    assert!(body.contains("[REDACTED:aws-access-key]"));
    nowhere(&repo, &run, AWS_KEY);

    let report = &json_out(&run)["reviews"][0];
    let found = secret_findings(report);
    assert!(
        found.iter().any(|(file, m)| file.is_none()
            && m.contains("safety net")
            && m.contains("the review prompt")),
        "{found:?}"
    );
    assert_eq!(report["verdict"], "request_changes");
    assert!(
        report["overrules"]
            .as_array()
            .unwrap()
            .iter()
            .any(|o| o["rule"] == "check_failed")
    );
    // The log and the report file say which branch, redacted.
    assert_eq!(
        repo.log()[0]["branch"],
        "leak/[REDACTED:aws-access-key]",
        "{:?}",
        repo.log()
    );

    // The dry run lists the same finding and prints no key.
    let run = speed(
        repo.path(),
        &[
            "review",
            "--branch",
            &branch,
            "--spec",
            spec,
            "--dry-run",
            "--json",
        ],
        &[],
    );
    assert_eq!(run.code, 0, "{}", run.transcript());
    let dry = &json_out(&run)["reviews"][0];
    assert!(!secret_findings(dry).is_empty(), "{dry}");
    assert!(!run.stdout.contains(AWS_KEY) && !run.stderr.contains(AWS_KEY));
    let run = speed(
        repo.path(),
        &["review", "--branch", &branch, "--spec", spec, "--dry-run"],
        &[],
    );
    assert_eq!(run.code, 0, "{}", run.transcript());
    assert!(run.stdout.contains("leak/[REDACTED:aws-access-key]"));
    assert!(!run.stdout.contains(AWS_KEY) && !run.stderr.contains(AWS_KEY));
}

/// A model that answers with a token: the answer is netted as it arrives,
/// so neither the corrective retry (which echoes it) nor the report holds
/// it.
#[test]
fn a_token_in_the_models_answer_is_not_echoed_back_nor_kept() {
    let repo = repo::example();
    let server = ModelServer::scripted(vec![
        Reply::openai(&format!(
            "I cannot decide. Use {GITHUB_TOKEN} to fetch more."
        )),
        Reply::openai(&text(&verdicts::approve_task_1())),
    ]);
    with_model(&repo, &server, false);
    let run = speed(repo.path(), &["review", "--task-id", "1", "--json"], &[]);
    assert_eq!(run.code, 50, "{}", run.transcript());
    let requests = server.requests();
    assert_eq!(requests.len(), 2, "one corrective retry");
    let retry = &requests[1].body;
    assert!(retry.contains("[REDACTED:github-token]"), "{retry}");
    assert!(!sent(&server).contains(GITHUB_TOKEN));
    nowhere(&repo, &run, GITHUB_TOKEN);
    let report = &json_out(&run)["reviews"][0];
    let found = secret_findings(report);
    assert!(
        found
            .iter()
            .any(|(_, m)| m.contains("the model's review answer")),
        "{found:?}"
    );
    assert_eq!(report["verdict"], "request_changes");
    // The task file is written, and holds no token either.
    assert_eq!(repo.task("1")["review_verdict"], "request_changes");
}

/// A password in test code is a fixture where it is read; the net must not
/// contradict that when the model quotes it, or every test with a login
/// would block approval.
#[test]
fn a_test_fixture_quoted_by_the_model_is_not_a_finding() {
    let repo = repo::example();
    let fixture = "Zk3Xq9Lm2Vb7";
    let mut builder = RepoBuilder::open(repo.path()).unwrap();
    builder
        .commit(
            "speed/task-1",
            Some("speed/task-1"),
            &[(
                "catalog/tests/login.rs",
                &format!("#[test]\nfn login() {{\n    let password = \"{fixture}\";\n    assert_eq!(password.len(), 12);\n}}\n"),
            )],
            &[],
            "a login test",
        )
        .unwrap();
    let mut answer = verdicts::approve_task_1();
    answer["issues"].as_array_mut().unwrap().push(json!({
        "severity": "nit", "file": "catalog/tests/login.rs", "line": 3,
        "message": format!("password = \"{fixture}\" could be a constant"), "suggestion": ""
    }));
    let server = ModelServer::scripted(vec![Reply::openai(&text(&answer))]);
    with_model(&repo, &server, false);
    let run = speed(repo.path(), &["review", "--task-id", "1", "--json"], &[]);
    let report = &json_out(&run)["reviews"][0];
    assert!(secret_findings(report).is_empty(), "{}", run.transcript());
    assert!(sent(&server).contains(fixture));
    assert_eq!(report["verdict"], "approve", "{}", run.transcript());
    assert_eq!(run.code, 0);
}

/// Sources found while building the net, redacted where they are read: the
/// feature's cross-cutting concerns, the criteria of `--criteria`, a task's
/// earlier reviews. Each is a finding located in its file, not a leak.
#[test]
fn cross_cutting_concerns_criteria_files_and_review_history_are_redacted_where_read() {
    let repo = repo::example();
    repo.write(
        ".speed/features/library-catalog/cross_cutting_concerns.json",
        &json!({"concerns": [format!("Kiosks call the payment API with api_key = \"{PASSWORD}\"")]})
            .to_string(),
    );
    let mut task = repo.task("1");
    task["review_history"] = json!([{
        "attempt": 1, "verdict": "request_changes", "reviewed_at": "2024-03-01T00:00:00Z",
        "head_commit": "0000000", "blocking": [format!("the deploy key {AWS_KEY} is in the diff")],
        "feedback": "remove it"
    }]);
    repo.write(
        &repo.task_path("1"),
        &serde_json::to_string_pretty(&task).unwrap(),
    );
    let run = speed(
        repo.path(),
        &["review", "--task-id", "1", "--dry-run", "--json"],
        &[],
    );
    assert_eq!(run.code, 0, "{}", run.transcript());
    let dry = &json_out(&run)["reviews"][0];
    let prompt = dry["prompt"].as_str().unwrap();
    assert!(prompt.contains("[REDACTED:secret-assignment]"), "{prompt}");
    assert!(prompt.contains("[REDACTED:aws-access-key]"), "{prompt}");
    assert!(!run.stdout.contains(PASSWORD) && !run.stdout.contains(AWS_KEY));
    // The task's own fields are the task's: a finding. The feature's
    // concerns are not this change: one notice says to fix them.
    let found = secret_findings(dry);
    let files: Vec<&str> = found.iter().filter_map(|f| f.0.as_deref()).collect();
    assert_eq!(files, [repo.task_path("1").as_str()], "{found:?}");
    let concerns = ".speed/features/library-catalog/cross_cutting_concerns.json";
    assert!(
        dry["notices"].as_array().unwrap().iter().any(|n| n
            .as_str()
            .unwrap()
            .starts_with(&format!("{concerns} holds 1 secret-looking value"))),
        "{}",
        dry["notices"]
    );
    assert!(
        dry["redactions"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["file"] == concerns),
        "{}",
        dry["redactions"]
    );
    assert!(
        found.iter().all(|(_, m)| !m.contains("safety net")),
        "sources, not leaks: {found:?}"
    );

    repo.write(
        "criteria.txt",
        &format!(
            "- Search works [verify: test]\n- The kiosk logs in with password = \"{PASSWORD}\"\n"
        ),
    );
    let run = speed(
        repo.path(),
        &[
            "review",
            "--branch",
            "speed/task-1",
            "--spec",
            "specs/product/library-catalog.md",
            "--criteria",
            "criteria.txt",
            "--dry-run",
            "--json",
        ],
        &[],
    );
    assert_eq!(run.code, 0, "{}", run.transcript());
    let dry = &json_out(&run)["reviews"][0];
    assert!(!run.stdout.contains(PASSWORD), "{}", run.stdout);
    let criteria = dry["criteria"].to_string();
    assert!(
        criteria.contains("[REDACTED:secret-assignment]"),
        "{criteria}"
    );
    let redactions = dry["redactions"].as_array().unwrap();
    assert!(
        redactions
            .iter()
            .any(|r| r["file"] == "criteria.txt" && r["line"] == 2),
        "{redactions:?}"
    );
}

/// The product vision is redacted where it is read, like the spec: its
/// secret never reaches a model, the report or the log. Like a spec's, it
/// is the vision's, not the change's: one notice says to fix the file, and
/// the approval stands.
#[test]
fn a_secret_in_the_vision_is_a_notice_and_never_sent() {
    let repo = repo::example();
    let vision = repo.read("specs/product/overview.md");
    let mut builder = RepoBuilder::open(repo.path()).unwrap();
    builder
        .commit(
            "main",
            Some("main"),
            &[(
                "specs/product/overview.md",
                &format!("{vision}\nThe kiosk fleet token is {GITHUB_TOKEN}.\n"),
            )],
            &[],
            "vision: fleet note",
        )
        .unwrap();
    let server = ModelServer::scripted(vec![
        Reply::openai(&text(&verdicts::approve_task_1())),
        Reply::openai(&json!({"status": "aligned", "summary": "fine", "flags": []}).to_string()),
    ]);
    with_model(&repo, &server, true);
    let run = speed(repo.path(), &["review", "--task-id", "1", "--json"], &[]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    let body = sent(&server);
    assert!(!body.contains(GITHUB_TOKEN));
    assert!(body.contains("[REDACTED:github-token]"), "{body}");
    nowhere(&repo, &run, GITHUB_TOKEN);
    let report = &json_out(&run)["reviews"][0];
    assert!(secret_findings(report).is_empty(), "{report}");
    let notices: Vec<&str> = report["notices"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .filter(|n| {
            n.starts_with("specs/product/overview.md holds 1 secret-looking value (github-token)")
        })
        .collect();
    assert_eq!(notices.len(), 1, "{}", report["notices"]);
    assert_eq!(report["guardian"]["status"], "aligned");
    assert_eq!(report["verdict"], "approve");
}

/// A person's reason for an override is kept in the task file, the log and
/// the verdict cache: a token pasted into it is replaced.
#[test]
fn a_token_in_an_override_reason_is_never_written() {
    let repo = repo::example();
    let reason = format!("reviewed by hand; CI token {GITHUB_TOKEN}");
    let run = speed(
        repo.path(),
        &["override", "--task-id", "1", "--reason", &reason],
        &[],
    );
    assert_eq!(run.code, 0, "{}", run.transcript());
    nowhere(&repo, &run, GITHUB_TOKEN);
    let task = repo.task("1");
    assert_eq!(
        task["override"]["reason"],
        "reviewed by hand; CI token [REDACTED:github-token]"
    );
}

/// `speed config` prints the effective settings: a key pasted into the
/// model command (or into a line of the file it cannot parse) never shows.
#[test]
fn speed_config_and_its_errors_never_print_a_key() {
    let repo = repo::example();
    repo.config(&format!(
        "[llm]\nprovider = \"command\"\ncommand = [\"model-cli\", \"--api-key\", \"{ANTHROPIC_KEY}\"]\n"
    ));
    for args in [&["config"][..], &["config", "--json"][..]] {
        let run = speed(repo.path(), args, &[]);
        assert_eq!(run.code, 0, "{}", run.transcript());
        assert!(
            run.stdout.contains("[REDACTED:anthropic-api-key]"),
            "{}",
            run.stdout
        );
        assert!(!run.stdout.contains(ANTHROPIC_KEY) && !run.stderr.contains(ANTHROPIC_KEY));
    }
    // A line the parser quotes in its error.
    repo.config(&format!("[llm]\nmodel = \"m\" \"{ANTHROPIC_KEY}\"\n"));
    for args in [
        &["config"][..],
        &["config", "--json"][..],
        &["review", "--task-id", "1"][..],
    ] {
        let run = speed(repo.path(), args, &[]);
        assert_eq!(run.code, 1, "{}", run.transcript());
        assert!(
            !run.stdout.contains(ANTHROPIC_KEY) && !run.stderr.contains(ANTHROPIC_KEY),
            "{}",
            run.transcript()
        );
    }
    // A usage error quotes what was typed.
    let run = speed(
        repo.path(),
        &["review", "--no-such-flag", ANTHROPIC_KEY],
        &[],
    );
    assert_eq!(run.code, 2, "{}", run.transcript());
    assert!(!run.stderr.contains(ANTHROPIC_KEY), "{}", run.stderr);
}
