//! The guardian gate after an approval: aligned, flagged, rejected,
//! unreachable and invalid twice; never after request_changes; skipped by
//! `--no-guardian`, `SKIP_GUARDIAN` and config, with the skip recorded.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::support::model_server::{ModelServer, Recorded, Reply};
use crate::support::repo::{self, TempRepo};
use crate::support::speed::{Run, speed};
use crate::support::verdicts::{self, text};
use serde_json::{Value, json};

fn is_guardian(req: &Recorded) -> bool {
    req.body.contains("Product guardian check")
}

/// Review answers approve task 1; guardian answers come from `guardian`.
fn server(guardian: impl Fn(usize) -> Reply + Send + Sync + 'static) -> ModelServer {
    let calls = Arc::new(AtomicUsize::new(0));
    ModelServer::start(move |req| {
        if is_guardian(req) {
            guardian(calls.fetch_add(1, Ordering::SeqCst))
        } else if req.body.contains("id: 2") {
            Reply::openai(&text(&verdicts::request_changes_task_2()))
        } else {
            Reply::openai(&text(&verdicts::approve_task_1()))
        }
    })
}

fn configure(repo: &TempRepo, server: &ModelServer, guardian: &str) {
    repo.config(&format!(
        "[llm]\nprovider = \"openai\"\nbase_url = \"{}\"\nmodel = \"review-model\"\ntimeout_secs = 2\nmax_retries = 1\nretry_base_ms = 10\n[guardian]\n{guardian}\n",
        server.url()
    ));
}

fn run(repo: &TempRepo, id: &str, args: &[&str], env: &[(&str, &str)]) -> Run {
    let mut all = vec!["review", "--task-id", id];
    all.extend_from_slice(args);
    speed(repo.path(), &all, env)
}

fn json_of(run: &Run) -> Value {
    serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{e}: {}", run.transcript()))
}

#[test]
fn aligned_keeps_the_approval_and_is_recorded() {
    let repo = repo::example();
    let server = server(|_| {
        Reply::openai(&text(&verdicts::guardian(
            "aligned",
            "Serves the catalog's mission",
            json!([]),
        )))
    });
    configure(&repo, &server, "");
    let run = run(&repo, "1", &[], &[]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    assert!(
        run.stdout
            .contains("Guardian: ALIGNED — Serves the catalog's mission"),
        "{}",
        run.stdout
    );
    let task = repo.task("1");
    assert_eq!(task["review_verdict"], "approve");
    assert_eq!(task["guardian_verdict"], "aligned");
    assert_eq!(task["guardian_summary"], "Serves the catalog's mission");
    assert_eq!(repo.log()[0]["guardian"], "aligned");
    // The guardian saw the vision and the spec, not only the vision.
    let guardian = server.requests().into_iter().find(is_guardian).unwrap();
    assert!(guardian.body.contains("Riverside"), "vision text is sent");
    assert!(guardian.body.contains("Search returns at most 20 results."));
}

#[test]
fn flagged_keeps_the_approval_and_shows_each_flag() {
    let repo = repo::example();
    let server = server(|_| {
        Reply::openai(&text(&verdicts::guardian(
            "flagged",
            "Fine, with a concern",
            json!([{"severity": "minor", "description": "Ranking favours titles over authors", "spec_reference": "Catalog > Search"}]),
        )))
    });
    configure(&repo, &server, "");
    let run = run(&repo, "1", &["--json"], &[]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    let out = json_of(&run);
    assert_eq!(out["reviews"][0]["guardian"]["status"], "flagged");
    assert_eq!(
        out["reviews"][0]["guardian"]["flags"][0]["description"],
        "Ranking favours titles over authors"
    );
    assert!(out["nits"].as_array().unwrap().iter().any(|n| {
        n["message"]
            .as_str()
            .unwrap()
            .contains("Ranking favours titles over authors")
    }));
    assert_eq!(repo.task("1")["review_verdict"], "approve");
}

#[test]
fn rejected_turns_the_approval_into_request_changes() {
    let repo = repo::example();
    let server = server(|_| {
        Reply::openai(&text(&verdicts::guardian(
            "rejected",
            "Search leaks members' loan history",
            json!([{"severity": "critical", "description": "Results include borrower names", "spec_reference": "Non-functional requirements"}]),
        )))
    });
    configure(&repo, &server, "");
    let run = run(&repo, "1", &["--json"], &[]);
    assert_eq!(run.code, 50, "{}", run.transcript());
    let out = json_of(&run);
    let r = &out["reviews"][0];
    assert_eq!(r["model_verdict"], "approve");
    assert_eq!(r["verdict"], "request_changes");
    assert_eq!(r["guardian"]["status"], "rejected");
    let task = repo.task("1");
    assert_eq!(task["status"], "pending");
    assert_eq!(task["review_verdict"], "request_changes");
    assert_eq!(task["guardian_verdict"], "rejected");
    let feedback = task["review_feedback"].as_str().unwrap();
    assert!(
        feedback.contains("Search leaks members' loan history"),
        "{feedback}"
    );
    assert!(
        feedback.contains("Results include borrower names"),
        "{feedback}"
    );
}

#[test]
fn an_unreachable_guardian_does_not_confirm_the_approval() {
    let repo = repo::example();
    let before = repo.read(&repo.task_path("1"));
    let server = server(|_| Reply::status(503, "guardian down"));
    configure(&repo, &server, "");
    let run = run(&repo, "1", &[], &[]);
    assert_eq!(run.code, 52, "{}", run.transcript());
    assert_eq!(
        repo.read(&repo.task_path("1")),
        before,
        "task file as before the review"
    );
    assert_eq!(repo.log()[0]["guardian"], "unavailable");
}

#[test]
fn a_guardian_invalid_twice_exits_53_and_changes_no_task() {
    let repo = repo::example();
    let before = repo.read(&repo.task_path("1"));
    let server = server(|n| {
        if n == 0 {
            Reply::openai("ALIGNED, looks great")
        } else {
            Reply::openai(r#"{"status": "fine"}"#)
        }
    });
    configure(&repo, &server, "");
    let run = run(&repo, "1", &[], &[]);
    assert_eq!(run.code, 53, "{}", run.transcript());
    assert_eq!(repo.read(&repo.task_path("1")), before);
    assert_eq!(
        server.requests().iter().filter(|r| is_guardian(r)).count(),
        2
    );
}

#[test]
fn the_guardian_is_never_called_after_request_changes() {
    let repo = repo::example();
    let server = server(|_| panic!("the guardian must not be asked"));
    configure(&repo, &server, "");
    let run = run(&repo, "2", &[], &[]);
    assert_eq!(run.code, 50, "{}", run.transcript());
    assert!(!server.requests().iter().any(is_guardian));
}

#[test]
fn skips_are_recorded_with_their_reason() {
    for (args, env, config, reason) in [
        (vec!["--no-guardian"], vec![], "", "--no-guardian"),
        (
            vec![],
            vec![("SKIP_GUARDIAN", "true")],
            "",
            "SKIP_GUARDIAN=true",
        ),
        (
            vec![],
            vec![],
            "enabled = false",
            "guardian.enabled = false",
        ),
    ] {
        let repo = repo::example();
        let server = server(|_| panic!("the guardian must not be asked"));
        configure(&repo, &server, config);
        let mut all = args.clone();
        all.push("--json");
        let run = run(&repo, "1", &all, &env);
        assert_eq!(run.code, 0, "{}", run.transcript());
        assert!(!server.requests().iter().any(is_guardian));
        let out = json_of(&run);
        assert_eq!(out["reviews"][0]["guardian"]["status"], "skipped");
        assert_eq!(out["reviews"][0]["guardian"]["reason"], reason);
        assert_eq!(repo.log()[0]["guardian"], "skipped");
        assert_eq!(repo.task("1")["guardian_verdict"], "skipped");
    }
}

#[test]
fn guardian_model_may_differ_from_the_review_model() {
    let repo = repo::example();
    let server = server(|_| Reply::openai(&text(&verdicts::guardian("aligned", "ok", json!([])))));
    configure(&repo, &server, "model = \"guardian-model\"");
    let run = run(&repo, "1", &[], &[]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    let reqs = server.requests();
    let guardian = reqs.iter().find(|r| is_guardian(r)).unwrap();
    let review = reqs.iter().find(|r| !is_guardian(r)).unwrap();
    assert_eq!(guardian.json()["model"], "guardian-model");
    assert_eq!(review.json()["model"], "review-model");
}

#[test]
fn human_report_of_an_approval_with_the_guardian_snapshot() {
    let repo = repo::example();
    let server = server(|_| {
        Reply::openai(&text(&verdicts::guardian(
            "aligned",
            "Implementation serves core mission",
            json!([]),
        )))
    });
    configure(&repo, &server, "");
    let run = run(&repo, "1", &[], &[]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    let stdout: String = run
        .stdout
        .lines()
        .filter(|l| !l.contains("report: .speed/reviews/"))
        .collect::<Vec<_>>()
        .join("\n");
    insta::assert_snapshot!("human_approved_with_guardian", stdout);
}

#[test]
fn no_product_vision_is_said_once_and_the_guardian_is_not_asked() {
    let repo = repo::example();
    let server = server(|_| panic!("the guardian is not asked without a vision"));
    configure(&repo, &server, "vision_file = \"specs/product/vision.md\"");
    let run = run(&repo, "1", &["--json"], &[]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    let out = json_of(&run);
    let report = &out["reviews"][0];
    assert_eq!(
        report["guardian"]["status"], "skipped",
        "{}",
        report["guardian"]
    );
    assert_eq!(
        report["guardian"]["reason"],
        "no product vision: specs/product/vision.md does not exist on main"
    );
    let said: Vec<&Value> = report["notices"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|n| n.as_str().unwrap().starts_with("No product vision"))
        .collect();
    assert_eq!(said.len(), 1, "{}", report["notices"]);
    assert!(
        said[0]
            .as_str()
            .unwrap()
            .contains("specs/product/vision.md does not exist on main"),
        "{}",
        said[0]
    );
    assert_eq!(
        run.stderr.matches("No product vision").count(),
        1,
        "{}",
        run.stderr
    );
    assert!(
        run.stderr
            .contains("note: task 1: No product vision: specs/product/vision.md"),
        "{}",
        run.stderr
    );
    assert!(!server.requests().iter().any(is_guardian));
    let task = repo.task("1");
    assert_eq!(task["review_verdict"], "approve");

    // The human report says it once too.
    let human = run_again(&repo);
    assert_eq!(
        human.stdout.matches("No product vision").count(),
        1,
        "{}",
        human.stdout
    );
}

fn run_again(repo: &TempRepo) -> Run {
    run(repo, "1", &["--force"], &[])
}
