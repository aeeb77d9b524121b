//! Re-reviews: a task reviewed before, its branch moved on by a fix. The
//! prompt lists the last review's blocking findings (PF-1, …) and what
//! changed since (the interdiff, numbered like the diff); the answer rates
//! each finding; a `resolved` claim the interdiff did not touch is recorded
//! unresolved and overrules an approval; `--incremental` (or a change too
//! large for the budget) shows the interdiff and the previous verdict only.

use serde_json::{Value, json};

use crate::support::model_server::{ModelServer, Recorded, Reply};
use crate::support::repo::{self, RepoBuilder, TempRepo};
use crate::support::speed::{Run, speed};

const SPEC: &str =
    "# Counter\n\n## Limits\n\nEvery counter stops at 100.\nA counter never goes below zero.\n";

/// Task 1 raises the limit on its branch, leaving the check out; the rest
/// of the change is a long, untouched helper.
fn repo_with_task() -> TempRepo {
    let (tmp, root) = repo::empty();
    let mut b = RepoBuilder::init(&root).unwrap();
    b.commit(
        "main",
        None,
        &[
            ("specs/product/counter.md", SPEC),
            ("src/counter.rs", "pub fn limit() -> u32 {\n    10\n}\n"),
        ],
        &[],
        "main",
    )
    .unwrap();
    let helper: String = (1..=200)
        .map(|n| format!("pub fn step_{n}(x: u32) -> u32 {{ x + {n} }}\n"))
        .collect();
    b.commit(
        "speed/task-1",
        Some("main"),
        &[
            ("src/counter.rs", "pub fn limit() -> u32 {\n    100\n}\n\npub fn add(x: u32) -> u32 {\n    x + 1\n}\n"),
            ("src/steps.rs", &helper),
        ],
        &[],
        "raise the limit",
    )
    .unwrap();
    b.checkout("main").unwrap();
    let repo = repo::adopt(tmp, root);
    repo.write(
        ".speed/tasks/1.json",
        &json!({"id": "1", "title": "Counters stop at 100", "status": "done",
                "acceptance_criteria": "a counter stops at 100",
                "spec_references": [{"spec": "specs/product/counter.md", "section": "Limits"}]})
        .to_string(),
    );
    repo
}

/// A fix commit on the task branch changing `path`.
fn fix(repo: &TempRepo, path: &str, content: &str) {
    let mut b = RepoBuilder::open(repo.path()).unwrap();
    b.commit("speed/task-1", None, &[(path, content)], &[], "fix")
        .unwrap();
}

const FIXED: &str =
    "pub fn limit() -> u32 {\n    100\n}\n\npub fn add(x: u32) -> u32 {\n    (x + 1).min(100)\n}\n";

fn verdict(word: &str, issues: Value, previous: Value) -> String {
    json!({
        "verdict": word,
        "expectations": "Counters stop at 100.",
        "criteria": [{"id": "AC-1", "status": if word == "approve" { "met" } else { "unmet" }, "evidence": "src/counter.rs:6"}],
        "spec_verification": [{"spec_quote": "Every counter stops at 100.", "spec_section": "Limits",
                               "satisfied": word == "approve", "evidence": "src/counter.rs:6", "notes": ""}],
        "issues": issues,
        "strengths": [],
        "dimensions": crate::support::verdicts::dimensions(),
        "previous_findings": previous,
    })
    .to_string()
}

fn first_review() -> String {
    verdict(
        "request_changes",
        json!([{"severity": "major", "file": "src/counter.rs", "line": 6,
                "message": "add does not stop at 100", "suggestion": "cap it"}]),
        json!([]),
    )
}

fn prompt_of(req: &Recorded) -> String {
    req.json()["messages"][0]["content"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// The model: the first review requests changes; a re-review (its prompt
/// lists PF-1) answers `second`.
fn server(second: String) -> ModelServer {
    ModelServer::start(move |req| {
        if prompt_of(req).contains("PF-1 at") {
            Reply::openai(&second)
        } else {
            Reply::openai(&first_review())
        }
    })
}

fn configure(repo: &TempRepo, server: &ModelServer, extra: &str) {
    repo.config(&format!(
        "[llm]\nprovider = \"openai\"\nbase_url = \"{}\"\nmodel = \"m\"\ntimeout_secs = 5\nmax_retries = 0\nretry_base_ms = 10\n[guardian]\nenabled = false\n{extra}",
        server.url()
    ));
}

fn review(repo: &TempRepo, args: &[&str]) -> (Run, Value) {
    let mut all = vec!["review", "--task-id", "1", "--json"];
    all.extend_from_slice(args);
    let run = speed(repo.path(), &all, &[]);
    let out = serde_json::from_str(&run.stdout).unwrap_or(Value::Null);
    (run, out)
}

/// The first review's findings: its major issue (PF-1) and its unmet
/// criterion (PF-2), both resolved as the answer says.
fn resolved_pf1() -> Value {
    json!([{"id": "PF-1", "status": "resolved", "evidence": "src/counter.rs:6 caps at 100"},
           {"id": "PF-2", "status": "resolved", "evidence": "src/counter.rs:6"}])
}

#[test]
fn a_fix_that_touches_the_finding_resolves_it_and_the_approval_stands() {
    let repo = repo_with_task();
    let server = server(verdict("approve", json!([]), resolved_pf1()));
    configure(&repo, &server, "");
    let (run, _) = review(&repo, &[]);
    assert_eq!(run.code, 50, "{}", run.transcript());
    fix(&repo, "src/counter.rs", FIXED);

    let (run, out) = review(&repo, &[]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    let requests = server.requests();
    let prompt = prompt_of(requests.last().unwrap());
    // The whole change and what changed since, numbered like the diff,
    // and the finding to rate.
    assert!(
        prompt.contains("PF-1 at src/counter.rs:6: (major) add does not stop at 100"),
        "{prompt}"
    );
    assert!(prompt.contains("PF-2 at (no location): AC-1 unmet: src/counter.rs:6"));
    let since = prompt.find("## 8. Changes since the last review").unwrap();
    let diff = prompt.find("## 9. Git diff").unwrap();
    assert!(
        prompt[since..diff].contains("6+    (x + 1).min(100)"),
        "{}",
        &prompt[since..diff]
    );
    assert!(
        !prompt[since..diff].contains("step_1"),
        "only what changed since"
    );
    assert!(
        prompt[diff..].contains("step_200"),
        "the whole change still shown"
    );
    let r = &out["reviews"][0];
    assert_eq!(r["verdict"], "approve");
    assert_eq!(r["previous_findings"][0]["id"], "PF-1");
    assert_eq!(r["previous_findings"][0]["status"], "resolved");
    assert_eq!(r["previous_findings"][1]["status"], "resolved");
    assert_eq!(r["coverage"]["incremental"], false);
}

#[test]
fn a_resolved_claim_the_fix_never_touched_is_unresolved_and_overrules() {
    let repo = repo_with_task();
    let server = server(verdict("approve", json!([]), resolved_pf1()));
    configure(&repo, &server, "");
    assert_eq!(review(&repo, &[]).0.code, 50);
    // The "fix" changes another file.
    fix(
        &repo,
        "src/steps.rs",
        "pub fn step_1(x: u32) -> u32 { x }\n",
    );

    let (run, out) = review(&repo, &[]);
    assert_eq!(run.code, 50, "{}", run.transcript());
    let r = &out["reviews"][0];
    assert_eq!(r["model_verdict"], "approve");
    assert_eq!(r["verdict"], "request_changes");
    assert_eq!(r["overrules"][0]["rule"], "previous_finding_unresolved");
    let pf = &r["previous_findings"][0];
    assert_eq!(pf["claimed"], "resolved");
    assert_eq!(pf["status"], "unresolved");
    assert!(
        pf["overruled"]
            .as_str()
            .unwrap()
            .contains("do not touch src/counter.rs:6")
    );
    let task: Value = serde_json::from_str(&repo.read(".speed/tasks/1.json")).unwrap();
    assert!(
        task["review_feedback"]
            .as_str()
            .unwrap()
            .contains("Previous finding PF-1 is still open"),
        "{task}"
    );
}

#[test]
fn an_answer_that_skips_a_previous_finding_is_corrected_then_decided() {
    let repo = repo_with_task();
    let answers = std::sync::Mutex::new(vec![
        verdict("approve", json!([]), resolved_pf1()),
        verdict("approve", json!([]), json!([])),
    ]);
    let server = ModelServer::start(move |req| {
        if prompt_of(req).contains("PF-1 at") {
            Reply::openai(&answers.lock().unwrap().pop().unwrap())
        } else {
            Reply::openai(&first_review())
        }
    });
    configure(&repo, &server, "");
    assert_eq!(review(&repo, &[]).0.code, 50);
    fix(&repo, "src/counter.rs", FIXED);
    let (run, out) = review(&repo, &[]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    let retry = server.requests().last().unwrap().json()["messages"].clone();
    assert_eq!(retry.as_array().unwrap().len(), 3);
    assert!(
        retry[2]["content"]
            .as_str()
            .unwrap()
            .contains("previous_findings.PF-1: is required"),
        "{retry}"
    );
    assert_eq!(
        out["reviews"][0]["previous_findings"][0]["status"],
        "resolved"
    );
}

#[test]
fn incremental_shows_the_interdiff_and_the_previous_verdict_only() {
    let repo = repo_with_task();
    let server = server(verdict("approve", json!([]), resolved_pf1()));
    configure(&repo, &server, "");
    assert_eq!(review(&repo, &[]).0.code, 50);
    fix(&repo, "src/counter.rs", FIXED);

    let (full, _) = review(&repo, &["--dry-run"]);
    let (inc, _) = review(&repo, &["--dry-run", "--incremental"]);
    let tokens = |run: &Run| {
        let v: Value = serde_json::from_str(&run.stdout).unwrap();
        v["reviews"][0]["tokens"]["total"].as_u64().unwrap()
    };
    assert!(
        tokens(&inc) < tokens(&full),
        "{} vs {}",
        tokens(&inc),
        tokens(&full)
    );

    let (run, out) = review(&repo, &["--incremental"]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    let prompt = prompt_of(server.requests().last().unwrap());
    let diff = prompt.find("## 9. Git diff").unwrap();
    assert!(prompt[diff..].contains("6+    (x + 1).min(100)"));
    assert!(
        !prompt.contains("step_200"),
        "the earlier change is not shown"
    );
    assert!(prompt.contains("This review is incremental"), "{prompt}");
    assert!(prompt.contains("The last review rated the criteria: AC-1 unmet"));
    let r = &out["reviews"][0];
    assert_eq!(r["coverage"]["incremental"], true);
    assert_eq!(r["verdict"], "approve");
    assert!(
        r["notices"]
            .to_string()
            .contains("Incremental review (--incremental)"),
        "{}",
        r["notices"]
    );
    // The terminal says what the model saw once, and never "the whole diff".
    let run = speed(repo.path(), &["show", "--task-id", "1"], &[]);
    assert!(!run.stdout.contains("whole diff"), "{}", run.stdout);
    assert!(
        run.stdout
            .contains("The model saw the changes since the last review, not the whole change"),
        "{}",
        run.stdout
    );
}

#[test]
fn a_change_too_large_for_the_budget_is_reviewed_incrementally() {
    let repo = repo_with_task();
    let server = server(verdict("approve", json!([]), resolved_pf1()));
    configure(&repo, &server, "");
    assert_eq!(review(&repo, &[]).0.code, 50);
    fix(&repo, "src/counter.rs", FIXED);
    // A budget the whole change needs parts for, and the interdiff does not.
    let (run, out) = review(&repo, &["--budget", "6000"]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    let r = &out["reviews"][0];
    assert_eq!(r["coverage"]["incremental"], true, "{}", r["coverage"]);
    assert_eq!(r["coverage"]["parts"], 1);
    assert!(r["notices"].to_string().contains("does not fit one prompt"));
}

#[test]
fn a_rebased_branch_gets_a_full_review_that_still_rates_the_findings() {
    let repo = repo_with_task();
    let server = server(verdict("approve", json!([]), resolved_pf1()));
    configure(&repo, &server, "");
    assert_eq!(review(&repo, &[]).0.code, 50);
    // The branch starts over from main with the fix, as a rebase leaves it:
    // the reviewed head is no ancestor of the new one.
    let mut b = RepoBuilder::open(repo.path()).unwrap();
    b.commit(
        "rewritten",
        Some("main"),
        &[("src/counter.rs", FIXED)],
        &[],
        "again",
    )
    .unwrap();
    let task: Value = serde_json::from_str(&repo.read(".speed/tasks/1.json")).unwrap();
    let mut task = task;
    task["branch"] = json!("rewritten");
    task["status"] = json!("done");
    repo.write(".speed/tasks/1.json", &task.to_string());

    // Asked for an incremental review, it is a full one all the same: the
    // difference between two trees does not stand for the whole change.
    let (run, out) = review(&repo, &["--incremental"]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    let r = &out["reviews"][0];
    assert!(
        r["notices"]
            .to_string()
            .contains("rewritten since the last review"),
        "{r}"
    );
    assert_eq!(r["coverage"]["incremental"], false, "{r}");
    // The finding raised before the rebase is still the model's to rate,
    // and the changes since show the fix.
    let prompt = prompt_of(server.requests().last().unwrap());
    assert!(
        prompt.contains("PF-1 at src/counter.rs:6: (major) add does not stop at 100"),
        "{prompt}"
    );
    let since = prompt.find("## 8. Changes since the last review").unwrap();
    let diff = prompt.find("## 9. Git diff").unwrap();
    assert!(
        prompt[since..diff].contains("(x + 1).min(100)"),
        "{}",
        &prompt[since..diff]
    );
    assert_eq!(r["verdict"], "approve", "{r}");
    assert_eq!(r["previous_findings"][0]["id"], "PF-1", "{r}");
    assert_eq!(r["previous_findings"][0]["status"], "resolved", "{r}");
}

#[test]
fn a_report_whose_head_is_no_commit_id_gives_no_interdiff() {
    let repo = repo_with_task();
    let server = server(verdict("approve", json!([]), resolved_pf1()));
    configure(&repo, &server, "");
    assert_eq!(review(&repo, &[]).0.code, 50);
    fix(
        &repo,
        "src/steps.rs",
        "pub fn step_1(x: u32) -> u32 { x }\n",
    );
    // A hand-edited report naming `main` as its head would make the
    // "changes since" the whole change, touching every finding.
    for name in repo.reviews() {
        let path = format!(".speed/reviews/{name}");
        if !name.ends_with("-task-1.json") {
            continue;
        }
        let mut report: Value = serde_json::from_str(&repo.read(&path)).unwrap();
        report["head_commit"] = json!("main");
        repo.write(&path, &report.to_string());
    }
    let (run, out) = review(&repo, &["--dry-run"]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    let r = &out["reviews"][0];
    assert!(
        r["notices"]
            .to_string()
            .contains("names no commit id as its head"),
        "{}",
        r["notices"]
    );
    let prompt = r["prompt"].as_str().unwrap();
    assert!(!prompt.contains("PF-1 at"), "no findings on a bad basis");
    assert!(
        prompt.contains(". Changes since the last review\n(none declared)"),
        "{prompt}"
    );
}
