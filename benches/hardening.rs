//! Probes too long for the test suite (issue 15): concurrent reviews of one
//! task, and `kill -9` at random moments of a review. Each prints what was
//! lost or left behind.
//!
//! `cargo bench --bench hardening`. The speed binary is this package's, or
//! `SPEED_BIN=<path>` (e.g. an older build, to compare). `HARDEN_ROUNDS`
//! (default 30) sets the rounds of each concurrency, `HARDEN_KILLS`
//! (default 200) the kills.
//!
//! - Concurrency: N processes review the same task at once (N = 2, 4), the
//!   model asking for changes after 200 ms; each round counts the revisions
//!   lost (N minus the task's `revision_count` gain), the reports missing
//!   (overwritten), the log lines missing, and the reviews that gave up
//!   because the task was being reviewed.
//! - Kills: a review is killed with SIGKILL after a random delay within its
//!   usual duration, again and again on one repository; after each kill the
//!   task file must parse, every log line but a torn last one must parse,
//!   a task whose `reviewed_at` changed must have its log line, and the
//!   temporary files left behind are counted. A final complete review shows
//!   whether the debris is swept and a torn line is survived.

#[path = "../specs-example/materialize.rs"]
mod materialize;
#[path = "../tests/it/support/model_server.rs"]
mod model_server;
#[path = "../tests/it/support/verdicts.rs"]
#[allow(dead_code)]
mod verdicts;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use model_server::{ModelServer, Reply};
use serde_json::{Value, json};

fn main() {
    let bin =
        std::env::var("SPEED_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_speed").to_string());
    let rounds: usize = env_number("HARDEN_ROUNDS", 30);
    let kills: usize = env_number("HARDEN_KILLS", 200);
    eprintln!("binary: {bin}");
    for n in [2, 4] {
        concurrency(&bin, n, rounds);
    }
    kill_loop(&bin, kills);
}

fn env_number(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn answer(verdict: &str) -> String {
    let issues = if verdict == "approve" {
        json!([])
    } else {
        json!([{"severity": "major", "file": "src/c.rs", "line": 1,
                "message": "the limit is wrong", "suggestion": "use 100"}])
    };
    serde_json::to_string(&json!({
        "verdict": verdict,
        "expectations": "Counters stop at 100.",
        "criteria": [{"id": "AC-1", "status": "met", "evidence": "src/c.rs:1"}],
        "spec_verification": [{"spec_quote": "Every counter stops at 100.", "spec_section": "Limits",
                               "satisfied": verdict == "approve", "evidence": "src/c.rs:1", "notes": ""}],
        "missing_from_spec": [], "out_of_scope": [],
        "dimensions": verdicts::dimensions(),
        "issues": issues,
        "strengths": []
    }))
    .expect("static JSON")
}

/// A repository with one done task on its branch, pointed at `url`.
fn build(root: &Path, url: &str) {
    let mut b = materialize::RepoBuilder::init(root).expect("init");
    let spec = "# Counter\n\n## Limits\n\nEvery counter stops at 100.\n";
    b.commit(
        "main",
        None,
        &[
            ("specs/product/counter.md", spec),
            ("src/c.rs", "pub fn limit() -> u32 { 10 }\n"),
        ],
        &[],
        "main",
    )
    .expect("main");
    b.commit(
        "speed/task-1",
        Some("main"),
        &[("src/c.rs", "pub fn limit() -> u32 { 100 }\n")],
        &[],
        "raise",
    )
    .expect("branch");
    b.checkout("main").expect("checkout");
    b.write_worktree(
        ".speed/tasks/1.json",
        &json!({"id": "1", "title": "Raise the limit", "status": "done",
                "acceptance_criteria": "limit is 100",
                "spec_references": [{"spec": "specs/product/counter.md", "section": "Limits"}]})
        .to_string(),
    )
    .expect("task file");
    b.write_worktree(
        ".speed/config.toml",
        &format!(
            "[llm]\nprovider = \"openai\"\nbase_url = \"{url}\"\nmodel = \"probe\"\ntimeout_secs = 30\nmax_retries = 0\n[review]\nmax_revisions = 100\n[guardian]\nenabled = false\n"
        ),
    )
    .expect("config");
}

fn speed(bin: &str, root: &Path) -> Command {
    let mut command = Command::new(bin);
    command
        .args(["-C", root.to_str().expect("utf-8 temp path")])
        .args(["review", "--task-id", "1"])
        .env_remove("MAIN_BRANCH")
        .env_remove("SKIP_GUARDIAN")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    command
}

fn task(root: &Path) -> Value {
    let text = std::fs::read_to_string(root.join(".speed/tasks/1.json")).expect("task file");
    serde_json::from_str(&text).expect("the task file parses")
}

fn reports(root: &Path) -> usize {
    std::fs::read_dir(root.join(".speed/reviews"))
        .map(|entries| {
            entries
                .flatten()
                .filter(|e| {
                    let name = e.file_name().to_string_lossy().into_owned();
                    name.ends_with(".json") && name != "nits.json"
                })
                .count()
        })
        .unwrap_or(0)
}

fn log_lines(root: &Path) -> Vec<String> {
    std::fs::read_to_string(root.join(".speed/reviews/log.jsonl"))
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect()
}

fn concurrency(bin: &str, n: usize, rounds: usize) {
    let answer = answer("request_changes");
    let server =
        ModelServer::start(move |_| Reply::openai(&answer).delay(Duration::from_millis(200)));
    let (mut lost, mut missing_reports, mut missing_lines, mut busy, mut other) = (0, 0, 0, 0, 0);
    let started = Instant::now();
    for _ in 0..rounds {
        let dir = tempfile::tempdir().expect("temp dir");
        let root = dir.path().join("repo");
        build(&root, &server.url());
        let children: Vec<_> = (0..n)
            .map(|_| speed(bin, &root).spawn().expect("speed runs"))
            .collect();
        let mut completed: usize = 0;
        for child in children {
            let out = child.wait_with_output().expect("speed ends");
            let stderr = String::from_utf8_lossy(&out.stderr);
            match out.status.code() {
                Some(50) => completed += 1,
                _ if stderr.contains("being reviewed") => busy += 1,
                _ => {
                    other += 1;
                    eprintln!("  unexpected: {:?}: {stderr}", out.status);
                }
            }
        }
        let revisions = task(&root)["revision_count"].as_u64().unwrap_or(0) as usize;
        lost += completed.saturating_sub(revisions);
        missing_reports += completed.saturating_sub(reports(&root));
        missing_lines += completed.saturating_sub(log_lines(&root).len());
    }
    eprintln!(
        "{n} reviews of one task at once x {rounds} rounds ({:.0} s): {lost} revisions lost, \
         {missing_reports} reports overwritten, {missing_lines} log lines missing, \
         {busy} gave up (being reviewed), {other} other failures",
        started.elapsed().as_secs_f64()
    );
}

fn kill_loop(bin: &str, kills: usize) {
    let answer = answer("approve");
    let server = ModelServer::start(move |_| Reply::openai(&answer));
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path().join("repo");
    build(&root, &server.url());

    // How long a review takes here, to kill within it.
    let started = Instant::now();
    let out = speed(bin, &root).output().expect("speed runs");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let duration = started.elapsed();

    let (mut torn, mut gaps, mut debris_seen, mut corrupt) = (0, 0, 0, 0);
    let mut recorded = 0;
    for _ in 0..kills {
        let before = task(&root)["reviewed_at"].clone();
        let mut child = speed(bin, &root).spawn().expect("speed runs");
        std::thread::sleep(duration.mul_f64(fastrand::f64() * 1.1));
        child.kill().ok();
        child.wait().ok();

        let text = std::fs::read_to_string(root.join(".speed/tasks/1.json")).unwrap_or_default();
        let Ok(now) = serde_json::from_str::<Value>(&text) else {
            corrupt += 1;
            continue;
        };
        let lines = log_lines(&root);
        let parsed: Vec<Option<Value>> =
            lines.iter().map(|l| serde_json::from_str(l).ok()).collect();
        if parsed.iter().rev().skip(1).any(Option::is_none) {
            corrupt += 1;
        }
        if parsed.last().is_some_and(Option::is_none) {
            torn += 1;
        }
        if now["reviewed_at"] != before {
            recorded += 1;
            let has_line = parsed
                .iter()
                .flatten()
                .any(|line| line["at"] == now["reviewed_at"]);
            if !has_line {
                gaps += 1;
            }
        }
        debris_seen += debris(&root).len();
    }
    let left = debris(&root);
    let out = speed(bin, &root).output().expect("speed runs");
    let last_ok = out.status.code() == Some(0);
    let after = debris(&root);
    let final_line_parses = log_lines(&root)
        .last()
        .is_some_and(|l| serde_json::from_str::<Value>(l).is_ok());
    eprintln!(
        "kill -9 x {kills} within a {:.0} ms review: {recorded} verdicts recorded before the kill, \
         {gaps} without their log line, {corrupt} corrupt task files or log lines, {torn} torn last \
         log lines, temporary files seen after kills: {debris_seen} in total, {} at the end, \
         {} after one more complete review ({}), its log line {}",
        duration.as_secs_f64() * 1000.0,
        left.len(),
        after.len(),
        if last_ok { "approved" } else { "failed" },
        if final_line_parses {
            "intact"
        } else {
            "unreadable"
        },
    );
    if !after.is_empty() {
        eprintln!("  left: {after:?}");
    }
}

/// Temporary files under `.speed/`: speed's own names, and tempfile's
/// default ones that older builds used.
fn debris(root: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![root.join(".speed")];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            if path.is_dir() {
                stack.push(path);
            } else if name.starts_with(".speed-tmp-")
                || name.starts_with(".tmp")
                || name.ends_with(".tmp")
            {
                found.push(path);
            }
        }
    }
    found
}
