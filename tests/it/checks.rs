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

/// Every byte under `.speed/` (reports, log, nits, verdict cache, task
/// files), as text.
fn written(repo: &TempRepo) -> String {
    let mut out = String::new();
    let mut dirs = vec![repo.path().join(".speed")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else {
                out.push_str(&String::from_utf8_lossy(&std::fs::read(&path).unwrap()));
            }
        }
    }
    assert!(out.contains("\"head_commit\""), "no report under .speed/");
    out
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
    // The key the branch adds is its finding; the spec's own secret is
    // not (no diff added it): one notice says to fix the spec.
    assert_eq!(secrets.len(), 1, "{secrets:?}");
    assert_eq!(secrets[0]["severity"], "critical");
    assert_eq!(secrets[0]["file"], "catalog/src/keys.rs");
    let notices: Vec<&str> = report["notices"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .filter(|n| n.contains("secret-looking"))
        .collect();
    assert_eq!(notices.len(), 1, "{notices:?}");
    assert!(
        notices[0].starts_with("specs/product/library-catalog.md holds 1 secret-looking value (secret-assignment) at line "),
        "{}",
        notices[0]
    );
    let redacted: Vec<&str> = report["redactions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["file"].as_str().unwrap())
        .collect();
    assert_eq!(
        redacted,
        ["catalog/src/keys.rs", "specs/product/library-catalog.md"]
    );
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
    let tmp = tempfile::tempdir().unwrap();
    let run = speed(
        repo.path(),
        &["review", "--task-id", "1", "--offline", "--json"],
        &[("TMPDIR", tmp.path().to_str().unwrap())],
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
    // The checkout was made in the temporary folder and is gone.
    assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 0);
    let status = std::process::Command::new("git")
        .args(["status", "--porcelain", "--untracked-files=all"])
        .current_dir(repo.path())
        .output()
        .unwrap();
    let untracked = String::from_utf8_lossy(&status.stdout);
    assert!(
        untracked.lines().all(|l| l.contains(".speed/")),
        "{untracked}"
    );
}

#[test]
fn a_command_check_that_hangs_is_stopped_at_its_timeout() {
    let repo = repo::example();
    repo.config(
        "[[checks.command]]\nname = \"tests\"\nrun = [\"sh\", \"-c\", \"echo compiling; sleep 30\"]\nseverity = \"critical\"\ntimeout_secs = 1\n",
    );
    let started = std::time::Instant::now();
    let run = speed(
        repo.path(),
        &["review", "--task-id", "1", "--offline", "--json"],
        &[],
    );
    assert!(started.elapsed() < std::time::Duration::from_secs(20));
    assert_eq!(run.code, 50, "{}", run.transcript());
    let check = &json(&run.stdout)["reviews"][0]["checks"][0];
    assert_eq!(check["check"], "tests");
    assert_eq!(check["severity"], "critical");
    let message = check["message"].as_str().unwrap();
    assert!(message.contains("did not finish within 1s"), "{message}");
    assert!(message.contains("compiling"), "{message}");
}

/// Ctrl-C while a command check runs: the command's process group is
/// stopped, its temporary checkout removed, and speed ends like SIGINT
/// with nothing recorded.
#[cfg(target_os = "linux")]
#[test]
fn ctrl_c_during_a_command_check_stops_it_and_removes_its_checkout() {
    use std::os::unix::process::ExitStatusExt;
    use std::time::{Duration, Instant};
    let repo = repo::example();
    let tmp = tempfile::tempdir().unwrap();
    let marks = tempfile::tempdir().unwrap();
    let mark = marks.path().join("running");
    repo.config(&format!(
        "[[checks.command]]\nname = \"tests\"\nrun = [\"sh\", \"-c\", \"echo $$ > {0}.pid; pwd > {0}; sleep 30\"]\ntimeout_secs = 60\n",
        mark.display()
    ));
    let task = repo.read(&repo.task_path("1"));
    let mut child = crate::support::speed::command(
        repo.path(),
        &["review", "--task-id", "1", "--offline"],
        &[("TMPDIR", tmp.path().to_str().unwrap())],
    )
    .stdout(std::process::Stdio::null())
    .stderr(std::process::Stdio::null())
    .spawn()
    .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    let checkout = loop {
        let written = std::fs::read_to_string(&mark).unwrap_or_default();
        if written.ends_with('\n') {
            break std::path::PathBuf::from(written.trim());
        }
        assert!(Instant::now() < deadline, "the command check never started");
        std::thread::sleep(Duration::from_millis(20));
    };
    let pid: i32 = std::fs::read_to_string(marks.path().join("running.pid"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(
        checkout.starts_with(tmp.path().canonicalize().unwrap()),
        "{}",
        checkout.display()
    );
    assert!(checkout.join("catalog").is_dir(), "{}", checkout.display());
    // SAFETY: signals the speed process this test started.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let deadline = Instant::now() + Duration::from_secs(15);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() >= deadline {
            child.kill().ok();
            panic!("speed did not end after Ctrl-C");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(status.signal(), Some(libc::SIGINT), "{status:?}");
    assert!(!checkout.exists(), "{} is left", checkout.display());
    assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 0);
    // The command (a process group leader) is gone, not orphaned.
    let deadline = Instant::now() + Duration::from_secs(5);
    while let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        let state = stat
            .rsplit(')')
            .next()
            .unwrap_or("")
            .split_whitespace()
            .next();
        if state == Some("Z") {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the command outlived speed: {stat}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(repo.read(&repo.task_path("1")), task);
    assert!(repo.log().is_empty());
}

/// The README's demo (`cargo run --release --features demo --bin
/// speed-demo`) does this: an offline review that finds a placeholder, a
/// debug leftover and a secret on a branch of the example, then a dry run,
/// with no model server.
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
