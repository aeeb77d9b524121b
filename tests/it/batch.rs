//! Batch reviews: `speed review` with no `--task-id` over eight tasks, with a
//! model server that adds latency, so concurrency can be read from the
//! server's own records. Also nits after the batch and `speed nits`.

use std::time::Duration;

use crate::support::model_server::{ModelServer, Recorded, Reply};
use crate::support::repo::{self, RepoBuilder, TempRepo};
use crate::support::speed::speed;
use serde_json::{Value, json};

const SPEC: &str =
    "# Counter\n\n## Limits\n\nEvery counter stops at 100.\nA counter never goes below zero.\n";

/// Eight tasks, each on its own branch changing its own file.
fn eight_tasks() -> TempRepo {
    let (tmp, root) = repo::empty();
    let mut b = RepoBuilder::init(&root).unwrap();
    let mut files = vec![("specs/product/counter.md".to_string(), SPEC.to_string())];
    for i in 1..=8 {
        files.push((
            format!("src/c{i}.rs"),
            format!("pub fn limit_{i}() -> u32 {{ 10 }}\n"),
        ));
    }
    let refs: Vec<(&str, &str)> = files
        .iter()
        .map(|(p, c)| (p.as_str(), c.as_str()))
        .collect();
    b.commit("main", None, &refs, &[], "main").unwrap();
    for i in 1..=8 {
        let path = format!("src/c{i}.rs");
        let body = format!("pub fn limit_{i}() -> u32 {{ 100 }}\n");
        b.commit(
            &format!("speed/task-{i}"),
            Some("main"),
            &[(&path, &body)],
            &[],
            "raise",
        )
        .unwrap();
    }
    b.checkout("main").unwrap();
    let repo = repo::adopt(tmp, root);
    for i in 1..=8 {
        repo.write(
            &format!(".speed/tasks/{i}.json"),
            &serde_json::to_string_pretty(&json!({
                "id": i.to_string(),
                "title": format!("Raise limit {i}"),
                "status": "done",
                "acceptance_criteria": "limit is 100",
                "spec_references": [{"spec": "specs/product/counter.md", "section": "Limits"}],
                "priority": i
            }))
            .unwrap(),
        );
    }
    repo
}

fn task_id_of(req: &Recorded) -> Option<u32> {
    (1..=8).find(|i| req.body.contains(&format!("id: {i}\\n")))
}

fn approval(nit: &str) -> String {
    serde_json::to_string(&json!({
        "dimensions": crate::support::verdicts::dimensions(),
        "verdict": "approve",
        "expectations": "Counters stop at 100.",
        "criteria": [{"id": "AC-1", "status": "met", "evidence": "src/c1.rs:1"}],
        "spec_verification": [{"spec_quote": "Every counter stops at 100.", "spec_section": "Limits",
                               "satisfied": true, "evidence": "src/c1.rs:1", "notes": ""}],
        "issues": [{"severity": "nit", "file": "src/c1.rs", "line": 1, "message": nit, "suggestion": ""}],
        "strengths": []
    }))
    .unwrap()
}

fn configure(repo: &TempRepo, server: &ModelServer) {
    repo.config(&format!(
        "[llm]\nprovider = \"openai\"\nbase_url = \"{}\"\nmodel = \"m\"\ntimeout_secs = 5\nmax_retries = 0\nretry_base_ms = 10\n[guardian]\nenabled = false\n",
        server.url()
    ));
}

fn task_file(repo: &TempRepo, i: u32) -> Value {
    serde_json::from_str(&repo.read(&format!(".speed/tasks/{i}.json"))).unwrap()
}

#[test]
fn batch_runs_four_at_once_survives_a_failure_and_skips_approved_work() {
    let repo = eight_tasks();
    // Task 8 was approved at its current diff by an earlier review.
    let first = ModelServer::start(|_| Reply::openai(&approval("first")));
    configure(&repo, &first);
    let run = speed(repo.path(), &["review", "--task-id", "8"], &[]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    drop(first);

    let server = ModelServer::start(|req| {
        let id = task_id_of(req);
        let reply = match id {
            Some(5) => Reply::status(400, "task 5 is poison"),
            Some(i) => Reply::openai(&approval(&format!("style nit in task {i}"))),
            None => Reply::status(400, "no task id in prompt"),
        };
        // Long enough that all four workers have a request in flight before the
        // first answer returns, even when a loaded machine builds prompts slowly.
        reply.delay(Duration::from_millis(1500))
    });
    configure(&repo, &server);
    let run = speed(repo.path(), &["review"], &[]);
    assert_eq!(
        run.code,
        1,
        "the most severe outcome wins: {}",
        run.transcript()
    );

    let reqs = server.requests();
    let ids: Vec<Option<u32>> = reqs.iter().map(task_id_of).collect();
    assert_eq!(
        reqs.len(),
        7,
        "tasks 1-7 once each, task 8 not again: {ids:?}"
    );
    assert!(!ids.contains(&Some(8)));
    assert_eq!(server.max_in_flight(), 4, "default concurrency is 4");

    for i in [1, 2, 3, 4, 6, 7] {
        assert_eq!(task_file(&repo, i)["review_verdict"], "approve", "task {i}");
    }
    assert!(task_file(&repo, 5).get("review_verdict").is_none());
    let summary = run.stdout.rfind("Summary").unwrap();
    for i in [1, 2, 3, 4, 6, 7] {
        let nit = run.stdout.rfind(&format!(
            "task {i}: [nit] src/c1.rs:1 — style nit in task {i}"
        ));
        assert!(nit.is_some_and(|n| n > summary), "{}", run.stdout);
    }
    assert!(
        run.stdout.contains("task 8: skipped, approved at "),
        "{}",
        run.stdout
    );

    // --force reviews the approved one too.
    let forced = ModelServer::start(|_| Reply::openai(&approval("again")));
    configure(&repo, &forced);
    let run = speed(
        repo.path(),
        &["review", "--force", "--concurrency", "2"],
        &[],
    );
    assert_eq!(run.code, 0, "{}", run.transcript());
    assert_eq!(forced.requests().len(), 8);
    assert!(forced.max_in_flight() <= 2);
}

#[test]
fn concurrency_flag_limits_requests_in_flight() {
    let repo = eight_tasks();
    let server =
        ModelServer::start(|_| Reply::openai(&approval("n")).delay(Duration::from_millis(300)));
    configure(&repo, &server);
    let run = speed(
        repo.path(),
        &["review", "--concurrency", "3", "--json"],
        &[],
    );
    assert_eq!(run.code, 0, "{}", run.transcript());
    assert_eq!(server.max_in_flight(), 3);
    let out: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(out["reviews"].as_array().unwrap().len(), 8);
    assert_eq!(out["nits"].as_array().unwrap().len(), 8);
}

#[test]
fn nothing_to_review_exits_0() {
    let repo = eight_tasks();
    for i in 1..=8 {
        let mut t = task_file(&repo, i);
        t["status"] = "pending".into();
        repo.write(&format!(".speed/tasks/{i}.json"), &t.to_string());
    }
    let run = speed(repo.path(), &["review"], &[]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    assert!(run.stderr.contains("Nothing to review"), "{}", run.stderr);
}

fn scrub(text: &str) -> String {
    text.lines()
        .map(|line| {
            // Durations vary from run to run.
            line.split("  ")
                .map(|cell| {
                    let trimmed = cell.trim();
                    if trimmed.ends_with('s')
                        && trimmed.trim_end_matches('s').parse::<f64>().is_ok()
                    {
                        cell.replace(trimmed, "[T]")
                    } else {
                        cell.to_string()
                    }
                })
                .collect::<Vec<_>>()
                .join("  ")
        })
        .filter(|line| !line.contains("report: .speed/reviews/"))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn batch_summary_and_nits_snapshots_and_speed_nits_prints_them_again() {
    let repo = eight_tasks();
    let server = ModelServer::start(|req| {
        match task_id_of(req) {
        Some(3) => Reply::openai(
            &serde_json::to_string(&json!({
                "dimensions": crate::support::verdicts::dimensions(),
                "verdict": "request_changes",
                "expectations": "Counters stop at 100.",
                "criteria": [{"id": "AC-1", "status": "unmet", "evidence": "limit is 10"}],
                "spec_verification": [{"spec_quote": "Every counter stops at 100.", "spec_section": "Limits",
                                       "satisfied": false, "evidence": "src/c3.rs:1", "notes": ""}],
                "issues": [{"severity": "major", "file": "src/c3.rs", "line": 1, "message": "limit unchanged", "suggestion": "return 100"}],
                "strengths": []
            }))
            .unwrap(),
        ),
        Some(i) => Reply::openai(&approval(&format!("rename limit_{i}"))),
        None => Reply::status(400, "?"),
    }
    });
    configure(&repo, &server);
    let run = speed(repo.path(), &["review", "--concurrency", "1"], &[]);
    assert_eq!(run.code, 50, "{}", run.transcript());
    let summary = &run.stdout[run.stdout.rfind("Summary").unwrap()..];
    insta::assert_snapshot!("batch_summary_and_nits", scrub(summary));

    let nits = speed(repo.path(), &["nits"], &[]);
    assert_eq!(nits.code, 0);
    let tail = &run.stdout[run.stdout.rfind("Nits").unwrap()..];
    assert_eq!(nits.stdout.trim(), tail.trim());
    let json = speed(repo.path(), &["nits", "--json"], &[]);
    let parsed: Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(parsed["nits"].as_array().unwrap().len(), 7);
    let saved: Value = serde_json::from_str(&repo.read(".speed/reviews/nits.json")).unwrap();
    assert_eq!(saved.as_array().unwrap().len(), 7);
}

#[test]
fn prompts_larger_than_the_token_limit_go_alone_instead_of_waiting_forever() {
    let repo = eight_tasks();
    let server =
        ModelServer::start(|_| Reply::openai(&approval("n")).delay(Duration::from_millis(150)));
    repo.config(&format!(
        "[llm]\nprovider = \"openai\"\nbase_url = \"{}\"\nmodel = \"m\"\ntpm = 500\nmax_output_tokens = 1000\n[guardian]\nenabled = false\n",
        server.url()
    ));
    let started = std::time::Instant::now();
    let run = speed(repo.path(), &["review", "--concurrency", "4"], &[]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    assert_eq!(server.requests().len(), 8);
    assert_eq!(
        server.max_in_flight(),
        1,
        "each oversized prompt is sent alone"
    );
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "no minute-long waits"
    );
}

/// `speed nits` lists the nits of every current approval, whatever batch
/// found them: a task's go when it is merged (the next batch finds it so)
/// or when its approval is no longer current (a person rejected it).
#[test]
fn speed_nits_lists_every_current_approval_and_drops_merged_and_rejected_tasks() {
    let repo = eight_tasks();
    let server = ModelServer::start(|req| match task_id_of(req) {
        Some(i) => Reply::openai(&approval(&format!("rename limit_{i}"))),
        None => Reply::status(400, "?"),
    });
    configure(&repo, &server);
    // Two batches: the second reviews only task 8 again (a new head);
    // the first batch's nits of the other tasks stay listed.
    let first = speed(repo.path(), &["review", "--concurrency", "1"], &[]);
    assert_eq!(first.code, 0, "{}", first.transcript());
    crate::support::git::ok(repo.path(), &["config", "user.name", "Dev"]);
    crate::support::git::ok(repo.path(), &["config", "user.email", "dev@example.com"]);
    crate::support::git::ok(repo.path(), &["checkout", "-q", "speed/task-8"]);
    crate::support::git::commit(
        repo.path(),
        &[("src/c8.rs", "pub fn limit_8() -> u32 { 100 } // raised\n")],
        "again",
    );
    crate::support::git::ok(repo.path(), &["checkout", "-q", "main"]);
    let second = speed(repo.path(), &["review", "--json"], &[]);
    assert_eq!(second.code, 0, "{}", second.transcript());
    let out: Value = serde_json::from_str(&second.stdout).unwrap();
    assert_eq!(
        out["reviews"].as_array().unwrap().len(),
        1,
        "{}",
        second.stdout
    );
    let listed = |repo: &TempRepo| -> Vec<String> {
        let run = speed(repo.path(), &["nits", "--json"], &[]);
        assert_eq!(run.code, 0, "{}", run.transcript());
        let v: Value = serde_json::from_str(&run.stdout).unwrap();
        let mut ids: Vec<String> = v["nits"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n["task_id"].as_str().unwrap().to_string())
            .collect();
        ids.sort();
        ids
    };
    assert_eq!(listed(&repo), ["1", "2", "3", "4", "5", "6", "7", "8"]);

    // Task 1 merged: the next batch lists it as merged and its nit goes.
    crate::support::git::ok(
        repo.path(),
        &[
            "merge",
            "-q",
            "--no-ff",
            "--no-verify",
            "-m",
            "merge task 1",
            "speed/task-1",
        ],
    );
    let third = speed(repo.path(), &["review"], &[]);
    assert_eq!(third.code, 0, "{}", third.transcript());
    assert_eq!(listed(&repo), ["2", "3", "4", "5", "6", "7", "8"]);

    // A person turned task 2 down: its nit is not a current approval's.
    let mut two: Value = serde_json::from_str(&repo.read(".speed/tasks/2.json")).unwrap();
    two["review_verdict"] = "request_changes".into();
    two["status"] = "pending".into();
    repo.write(".speed/tasks/2.json", &two.to_string());
    assert_eq!(listed(&repo), ["3", "4", "5", "6", "7", "8"]);
}
