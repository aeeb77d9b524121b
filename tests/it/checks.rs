//! speed's own checks, secret redaction and the offline review, end to end:
//! the real binary on the example repository with extra commits, and a
//! loopback server playing the model where one is asked.

use crate::support::model_server::{ModelServer, Reply};
use crate::support::repo::{self, RepoBuilder, TempRepo};
use crate::support::speed::speed;
use crate::support::verdicts::{self, text};
use serde_json::Value;

/// A password that must never leave speed: in the diff and in the spec.
const SECRET: &str = "w8Kq2ZxN4vLp9RtY";
const AWS_KEY: &str = "AKIAQYLPMN5HHHFPZAM2";

/// Adds a commit on `branch` (on top of its tip).
fn commit(repo: &TempRepo, branch: &str, files: &[(&str, &str)], deletes: &[&str]) {
    let mut builder = RepoBuilder::open(repo.path()).unwrap();
    builder
        .commit(branch, Some(branch), files, deletes, "more work")
        .unwrap();
}

/// Every byte speed wrote under `.speed/reviews/`.
fn written(repo: &TempRepo) -> String {
    repo.reviews()
        .iter()
        .map(|n| repo.read(&format!(".speed/reviews/{n}")))
        .collect()
}

fn json(stdout: &str) -> Value {
    serde_json::from_str(stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"))
}

#[test]
fn with_no_provider_configured_the_review_is_offline_and_writes_no_approval() {
    let repo = repo::example();
    let before = repo.read(&repo.task_path("1"));
    let run = speed(repo.path(), &["review", "--task-id", "1", "--json"], &[]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    assert!(
        run.stderr.contains("no model provider is configured"),
        "{}",
        run.stderr
    );
    let report = &json(&run.stdout)["reviews"][0];
    assert_eq!(report["verdict"], "checks_passed");
    assert_eq!(report["model_verdict"], Value::Null);
    assert_eq!(report["guardian"]["status"], "skipped");
    assert!(
        report["guardian"]["reason"]
            .as_str()
            .unwrap()
            .contains("offline")
    );
    assert_eq!(report["checks"], Value::Array(vec![]));
    // Nobody compared the work with the spec: the task file is untouched,
    // but the review is on record.
    assert_eq!(repo.read(&repo.task_path("1")), before);
    assert_eq!(repo.log().len(), 1);
    assert_eq!(repo.log()[0]["decision"], "checks_passed");
}

#[test]
fn an_offline_review_requests_changes_for_what_the_checks_find() {
    let repo = repo::example();
    commit(
        &repo,
        "speed/task-1",
        &[
            (
                "catalog/src/fines.rs",
                "pub fn fine_for(days: u32) -> u32 {\n    dbg!(days);\n    todo!()\n}\n",
            ),
            (
                "deploy/payments.toml",
                &format!("[payments]\nwebhook_secret = \"{SECRET}\"\naws = \"{AWS_KEY}\"\n"),
            ),
        ],
        &[],
    );
    let run = speed(repo.path(), &["review", "--task-id", "1", "--offline"], &[]);
    assert_eq!(run.code, 50, "{}", run.transcript());
    for (check, place) in [
        ("critical secret", "deploy/payments.toml:2"),
        ("critical secret", "deploy/payments.toml:3"),
        ("major placeholder", "catalog/src/fines.rs:3"),
        ("minor debug_leftover", "catalog/src/fines.rs:2"),
        ("major scope", "catalog/src/fines.rs"),
    ] {
        assert!(
            run.stdout.contains(&format!("{check} {place}")),
            "{check} {place}: {}",
            run.stdout
        );
    }
    assert!(
        run.stdout
            .contains("changes requested by speed's checks (offline)")
    );
    let task = repo.task("1");
    assert_eq!(task["review_verdict"], "request_changes");
    assert_eq!(task["status"], "pending");
    let feedback = task["review_feedback"].as_str().unwrap();
    assert!(feedback.contains("placeholder"), "{feedback}");
    // The secrets are nowhere: not on the terminal, not in the reports,
    // the log or the task file.
    let everything = format!(
        "{}{}{}{}",
        run.stdout,
        run.stderr,
        written(&repo),
        repo.read(&repo.task_path("1"))
    );
    assert!(!everything.contains(SECRET));
    assert!(!everything.contains(AWS_KEY));
    let report = repo.report_files().pop().unwrap();
    let rules: Vec<&str> = report["redactions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["rule"].as_str().unwrap())
        .collect();
    assert_eq!(rules, ["secret-assignment", "aws-access-key"]);
}

#[test]
fn secrets_in_the_diff_and_the_spec_never_reach_the_model() {
    let repo = repo::example();
    // On main, where specs are read; and on the branch under review.
    let mut builder = RepoBuilder::open(repo.path()).unwrap();
    let spec = repo.read("specs/product/library-catalog.md");
    builder
        .commit(
            "main",
            Some("main"),
            &[(
                "specs/product/library-catalog.md",
                &format!("{spec}\nStaging kiosks use `api_key = \"{SECRET}\"`.\n"),
            )],
            &[],
            "spec: staging note",
        )
        .unwrap();
    builder
        .commit(
            "speed/task-1",
            Some("speed/task-1"),
            &[(
                "catalog/src/keys.rs",
                &format!("pub const KEY: &str = \"{AWS_KEY}\";\n"),
            )],
            &[],
            "keys",
        )
        .unwrap();
    let server = ModelServer::scripted(vec![Reply::openai(&text(&verdicts::approve_task_1()))]);
    repo.config(&format!(
        "[llm]\nprovider = \"openai\"\nbase_url = \"{}\"\nmodel = \"test-model\"\ntimeout_secs = 5\nmax_retries = 0\n[guardian]\nenabled = false\n",
        server.url()
    ));
    let run = speed(repo.path(), &["review", "--task-id", "1", "--json"], &[]);
    assert_eq!(run.code, 50, "{}", run.transcript());
    let sent: String = server.requests().iter().map(|r| r.body.clone()).collect();
    assert!(!sent.is_empty());
    assert!(!sent.contains(SECRET) && !sent.contains(AWS_KEY));
    assert!(sent.contains("[REDACTED:aws-access-key]"), "{sent}");
    assert!(sent.contains("[REDACTED:secret-assignment]"));
    let report = &json(&run.stdout)["reviews"][0];
    // The model approved; a critical finding of speed's overrules it.
    assert_eq!(report["model_verdict"], "approve");
    assert_eq!(report["verdict"], "request_changes");
    assert!(
        report["overrules"]
            .as_array()
            .unwrap()
            .iter()
            .any(|o| o["rule"] == "check_failed")
    );
    let secrets: Vec<&Value> = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["check"] == "secret")
        .collect();
    assert_eq!(secrets.len(), 2, "{secrets:?}");
    assert!(secrets.iter().all(|c| c["severity"] == "critical"));
    let files: Vec<&str> = secrets
        .iter()
        .map(|c| c["file"].as_str().unwrap())
        .collect();
    assert!(files.contains(&"catalog/src/keys.rs"));
    assert!(files.contains(&"specs/product/library-catalog.md"));
    let stored = format!("{}{}", written(&repo), run.stdout);
    assert!(!stored.contains(SECRET) && !stored.contains(AWS_KEY));
}

#[test]
fn checks_are_in_the_dry_run_and_can_be_turned_off() {
    let repo = repo::example();
    commit(
        &repo,
        "speed/task-1",
        &[(
            "catalog/src/fines.rs",
            "pub fn fine() -> u32 {\n    todo!()\n}\n",
        )],
        &[],
    );
    let run = speed(
        repo.path(),
        &["review", "--task-id", "1", "--dry-run", "--json"],
        &[],
    );
    assert_eq!(run.code, 0, "{}", run.transcript());
    let dry = &json(&run.stdout)["reviews"][0];
    let checks: Vec<&str> = dry["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["check"].as_str().unwrap())
        .collect();
    assert_eq!(checks, ["scope", "placeholder"]);
    // The model sees them beside the task's gate results.
    let prompt = dry["prompt"].as_str().unwrap();
    assert!(prompt.contains("speed check: placeholder"), "{prompt}");

    repo.config("[checks]\nplaceholder = \"off\"\nscope = \"minor\"\n");
    let run = speed(
        repo.path(),
        &["review", "--task-id", "1", "--offline", "--json"],
        &[],
    );
    assert_eq!(run.code, 0, "{}", run.transcript());
    let report = &json(&run.stdout)["reviews"][0];
    assert_eq!(report["verdict"], "checks_passed");
    assert_eq!(report["checks"][0]["check"], "scope");
    assert_eq!(report["checks"][0]["severity"], "minor");
}

#[test]
fn a_failing_command_check_blocks_with_the_tail_of_its_output() {
    let repo = repo::example();
    repo.config(
        "[[checks.command]]\nname = \"lint\"\nrun = [\"sh\", \"-c\", \"ls catalog/src; echo lint failed >&2; exit 3\"]\nseverity = \"major\"\ntimeout_secs = 30\n",
    );
    let run = speed(
        repo.path(),
        &["review", "--task-id", "1", "--offline", "--json"],
        &[],
    );
    assert_eq!(run.code, 50, "{}", run.transcript());
    let report = &json(&run.stdout)["reviews"][0];
    let lint = &report["checks"][0];
    assert_eq!(lint["check"], "lint");
    let message = lint["message"].as_str().unwrap();
    assert!(message.contains("exited with status 3"), "{message}");
    assert!(message.contains("lint failed"), "{message}");
    // It ran in a checkout of the head commit: the branch's new file is there.
    assert!(message.contains("search.rs"), "{message}");
    // And nothing of the checkout is left in the repository.
    assert!(!repo.path().join("speed-check").exists());
}

/// The README's first command (`cargo run --example demo`) does this: an
/// offline review that finds a placeholder, a debug leftover and a secret
/// on a branch of the example, then a dry run, with no model server.
#[test]
fn the_demo_path_works_without_a_model_server() {
    let repo = repo::example();
    let mut builder = RepoBuilder::open(repo.path()).unwrap();
    builder
        .commit(
            "demo/late-fines",
            Some("speed/task-2"),
            &[
                (
                    "catalog/src/fines.rs",
                    "pub fn fine_for(days_late: u32) -> u32 {\n    dbg!(days_late);\n    todo!()\n}\n",
                ),
                (
                    "deploy/payments.toml",
                    &format!("[payments]\nwebhook_secret = \"{SECRET}\"\n"),
                ),
            ],
            &[],
            "Late fines (work in progress)",
        )
        .unwrap();
    let run = speed(
        repo.path(),
        &[
            "review",
            "--offline",
            "--branch",
            "demo/late-fines",
            "--spec",
            "specs/product/library-catalog.md",
        ],
        &[],
    );
    assert_eq!(run.code, 50, "{}", run.transcript());
    assert!(
        run.stdout
            .contains("critical secret deploy/payments.toml:2")
    );
    assert!(
        run.stdout
            .contains("major placeholder catalog/src/fines.rs:3")
    );
    assert!(!run.stdout.contains(SECRET));
    let run = speed(repo.path(), &["review", "--task-id", "2", "--dry-run"], &[]);
    assert_eq!(run.code, 0, "{}", run.transcript());
}

#[test]
fn an_offline_review_checks_a_change_too_large_for_the_prompt_budget() {
    // Nothing is sent offline, so a change whose file list alone is over
    // the budget is still checked (Django 5.0 → 5.1 was refused).
    let repo = repo::example();
    let names: Vec<String> = (0..60)
        .map(|i| format!("catalog/src/generated_module_number_{i}.rs"))
        .collect();
    let files: Vec<(&str, &str)> = names
        .iter()
        .map(|n| (n.as_str(), "pub fn f() -> u32 {\n    1\n}\n"))
        .collect();
    commit(&repo, "speed/task-1", &files, &[]);
    let args = ["review", "--task-id", "1", "--budget", "1200"];
    let run = speed(
        repo.path(),
        &[&args[..], &["--offline", "--json"]].concat(),
        &[],
    );
    assert_eq!(run.code, 50, "{}", run.transcript());
    let report = &json(&run.stdout)["reviews"][0];
    assert_eq!(report["error"], Value::Null, "{}", run.transcript());
    assert_eq!(report["verdict"], "request_changes");
    let checks: Vec<&str> = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["check"].as_str().unwrap())
        .collect();
    assert!(checks.contains(&"large_diff"), "{checks:?}");
    assert!(checks.contains(&"scope"), "{checks:?}");
    // A dry run still reports the budget it cannot meet.
    let run = speed(
        repo.path(),
        &[&args[..], &["--offline", "--dry-run"]].concat(),
        &[],
    );
    assert_eq!(run.code, 1, "{}", run.transcript());
    assert!(run.stderr.contains("raise the budget"), "{}", run.stderr);
}
