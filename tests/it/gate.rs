//! The verdict gate end to end: the real binary, real repositories and a
//! loopback model. A diff too large for one prompt is reviewed in parts;
//! beyond `review.max_parts` it cannot be approved. Ambiguous answers are
//! invalid and the exit-53 message says why; valid answers that once were
//! thrown away are read; approvals on evidence pointing nowhere or without a
//! basis in the spec are overruled, and the overrules are counted.

use crate::support::model_server::{ModelServer, Recorded, Reply};
use crate::support::repo::{self, RepoBuilder, TempRepo};
use crate::support::speed::{Run, speed};
use crate::support::verdicts::{self, text};
use serde_json::{Value, json};

const SPEC: &str = "# Shop\n\n## Cart\n\nThe cart holds at most 10 items.\nAn empty cart shows a hint to browse the catalog.\n";

/// Task 1 adds 40 lines to each of `files` source files: more than a prompt
/// of 5,000 tokens holds.
fn large_change(files: usize) -> TempRepo {
    let (tmp, root) = repo::empty();
    let mut b = RepoBuilder::init(&root).unwrap();
    b.commit(
        "main",
        None,
        &[("specs/product/shop.md", SPEC), ("README.md", "# Shop\n")],
        &[],
        "main",
    )
    .unwrap();
    let bodies: Vec<(String, String)> = (1..=files)
        .map(|i| {
            let body: String = (1..=40)
                .map(|n| {
                    format!("pub fn cart_rule_{i}_{n}(items: u32) -> bool {{ items <= {n} }}\n")
                })
                .collect();
            (format!("src/rules_{i}.rs"), body)
        })
        .collect();
    let refs: Vec<(&str, &str)> = bodies
        .iter()
        .map(|(p, c)| (p.as_str(), c.as_str()))
        .collect();
    b.commit("speed/task-1", Some("main"), &refs, &[], "rules")
        .unwrap();
    b.checkout("main").unwrap();
    let repo = repo::adopt(tmp, root);
    repo.write(
        ".speed/tasks/1.json",
        &serde_json::to_string_pretty(&json!({
            "id": "1",
            "title": "Cart rules",
            "status": "done",
            "acceptance_criteria": "the cart is capped at 10 items",
            "spec_references": [{"spec": "specs/product/shop.md", "section": "Cart"}]
        }))
        .unwrap(),
    );
    repo
}

fn configure(repo: &TempRepo, server: &ModelServer, review: &str) {
    repo.config(&format!(
        "[llm]\nprovider = \"openai\"\nbase_url = \"{}\"\nmodel = \"m\"\ntimeout_secs = 5\nmax_retries = 0\nretry_base_ms = 10\n[review]\n{review}\n[guardian]\nenabled = false\n",
        server.url()
    ));
}

fn prompt_of(req: &Recorded) -> String {
    let messages = req.json()["messages"].as_array().unwrap();
    messages.iter().rev().find(|m| m["role"] == "user").unwrap()["content"]
        .as_str()
        .unwrap()
        .to_string()
}

/// An approval of whatever the prompt shows: it cites line 1 of the first
/// file whose diff it holds, and leaves a nit naming its part.
fn approve_what_is_shown(req: &Recorded) -> Reply {
    let prompt = prompt_of(req);
    let file = prompt
        .lines()
        .find_map(|l| l.strip_prefix("diff --git a/"))
        .and_then(|l| l.split(' ').next())
        .unwrap_or("README.md")
        .to_string();
    let part = prompt
        .split("this is part ")
        .nth(1)
        .and_then(|rest| rest.split('.').next())
        .unwrap_or("1")
        .to_string();
    Reply::openai(&text(&json!({
        "dimensions": crate::support::verdicts::dimensions(),
        "verdict": "approve",
        "expectations": "The cart is capped at 10 items.",
        "criteria": [{"id": "AC-1", "status": "met", "evidence": format!("{file}:1")}],
        "spec_verification": [{"spec_quote": "The cart holds at most 10 items.", "spec_section": "Cart",
                               "satisfied": true, "evidence": format!("{file}:1"), "notes": ""}],
        "issues": [{"severity": "nit", "file": file, "line": 1, "message": format!("nit in part {part}"), "suggestion": ""}],
        "strengths": []
    })))
}

fn review_json(repo: &TempRepo, args: &[&str]) -> (Run, Value) {
    let mut all = vec!["review", "--task-id", "1", "--json"];
    all.extend_from_slice(args);
    let run = speed(repo.path(), &all, &[]);
    let out: Value =
        serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{e}: {}", run.transcript()));
    (run, out)
}

#[test]
fn a_diff_too_large_for_one_prompt_is_reviewed_in_parts_and_merged() {
    let repo = large_change(6);
    let server = ModelServer::start(approve_what_is_shown);
    // 5,000 before the answer's schema asked for quality dimensions, 5,800
    // before it held previous findings: the same room for the diff.
    configure(&repo, &server, "token_budget = 6200");
    let (run, out) = review_json(&repo, &[]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    let r = &out["reviews"][0];
    let parts = r["coverage"]["parts"].as_u64().unwrap();
    let requests = server.requests();
    assert!(parts > 1, "{}", r["coverage"]);
    assert_eq!(requests.len() as u64, parts, "one call per part");
    // The parts are asked side by side: each once, in any order.
    let mut named: Vec<u64> = requests
        .iter()
        .map(|req| {
            let prompt = prompt_of(req);
            (1..=parts)
                .find(|n| prompt.contains(&format!("this is part {n}.")))
                .expect("each prompt names its part")
        })
        .collect();
    named.sort();
    assert_eq!(named, (1..=parts).collect::<Vec<_>>());
    for req in &requests {
        let prompt = prompt_of(req);
        // Every part has the spec, the criteria and the instructions.
        assert!(prompt.contains("The cart holds at most 10 items."));
        assert!(prompt.contains("| AC-1 |"));
        assert!(prompt.contains("## Instructions"));
        // And names every changed file.
        for i in 1..=6 {
            assert!(prompt.contains(&format!("src/rules_{i}.rs")), "{i}");
        }
    }
    assert_eq!(r["coverage"]["files_unseen"], 0);
    assert_eq!(r["coverage"]["lines_shown"], r["coverage"]["lines_total"]);
    // Every part's findings are kept.
    let nits: Vec<&str> = r["review"]["issues"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["message"].as_str().unwrap())
        .collect();
    for n in 1..=parts {
        assert!(
            nits.contains(&format!("nit in part {n}").as_str()),
            "{nits:?}"
        );
    }
    let report = &repo.report_files()[0];
    let stages: Vec<&str> = report["calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["stage"].as_str().unwrap())
        .collect();
    assert_eq!(stages[0], format!("review (part 1 of {parts})"));

    // The terminal says it too.
    let repo = large_change(6);
    let server = ModelServer::start(approve_what_is_shown);
    // 5,000 before the answer's schema asked for quality dimensions, 5,800
    // before it held previous findings: the same room for the diff.
    configure(&repo, &server, "token_budget = 6200");
    let run = speed(repo.path(), &["review", "--task-id", "1"], &[]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    assert!(
        run.stdout.contains(&format!(
            "The model saw the whole diff in {parts} parts: 6 changed files, 240 changed lines"
        )),
        "{}",
        run.stdout
    );
}

#[test]
fn beyond_max_parts_the_review_cannot_approve_and_says_how_much_was_unseen() {
    let repo = large_change(6);
    let server = ModelServer::start(approve_what_is_shown);
    configure(&repo, &server, "token_budget = 5000\nmax_parts = 1");
    let (run, out) = review_json(&repo, &[]);
    assert_eq!(run.code, 50, "{}", run.transcript());
    assert_eq!(server.requests().len(), 1);
    let r = &out["reviews"][0];
    assert_eq!(r["model_verdict"], "approve");
    assert_eq!(r["verdict"], "request_changes");
    let unseen = r["coverage"]["files_unseen"].as_u64().unwrap();
    assert!(unseen > 0);
    // A file shown in part is in files_shown and files_unseen both: the
    // files left out whole are the rest, and the counts add up to 6.
    let shown = r["coverage"]["files_shown"].as_u64().unwrap();
    let partly = shown + unseen - 6;
    let left_out = unseen - partly;
    assert!(left_out > 0, "{}", r["coverage"]);
    let overrule = r["overrules"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["rule"] == "unseen_code")
        .expect("unseen_code");
    assert!(
        overrule["reason"]
            .as_str()
            .unwrap()
            .contains(&format!("{left_out} of 6 changed files")),
        "{overrule}"
    );
    assert_eq!(repo.log()[0]["overrules"], json!(["unseen_code"]));

    let repo = large_change(6);
    let server = ModelServer::start(approve_what_is_shown);
    configure(&repo, &server, "token_budget = 5000\nmax_parts = 1");
    let run = speed(repo.path(), &["review", "--task-id", "1"], &[]);
    assert_eq!(run.code, 50);
    assert!(
        run.stdout.contains("! The model saw ")
            && run
                .stdout
                .contains(&format!("{} of 6 changed files whole", shown - partly))
            && run
                .stdout
                .contains(&format!("{left_out} left out for budget")),
        "{}",
        run.stdout
    );
}

fn example_configured(server: &ModelServer) -> TempRepo {
    let repo = repo::example();
    configure(&repo, server, "");
    repo
}

#[test]
fn two_verdicts_that_disagree_are_invalid_and_exit_53_says_why() {
    let approve = text(&verdicts::approve_task_1());
    let mut rc = verdicts::approve_task_1();
    rc["verdict"] = json!("request_changes");
    let both = format!("Draft:\n{}\nFinal:\n{approve}", text(&rc));
    let server = ModelServer::scripted(vec![Reply::openai(&both), Reply::openai(&both)]);
    let repo = example_configured(&server);
    let before = repo.read(&repo.task_path("1"));
    let run = speed(repo.path(), &["review", "--task-id", "1"], &[]);
    assert_eq!(run.code, 53, "{}", run.transcript());
    assert_eq!(repo.read(&repo.task_path("1")), before);
    assert!(
        run.transcript()
            .contains("2 objects with a \"verdict\" key that differ"),
        "{}",
        run.transcript()
    );
    // The retry told the model what was wrong.
    let correction = prompt_of(&server.requests()[1]);
    assert!(correction.contains("differ"), "{correction}");
}

#[test]
fn a_duplicated_verdict_key_is_invalid() {
    let answer = text(&verdicts::approve_task_1());
    let duplicated = format!(
        "{},\n  \"verdict\": \"request_changes\"\n}}",
        answer.trim_end().trim_end_matches('}').trim_end()
    );
    let server = ModelServer::scripted(vec![Reply::openai(&duplicated), Reply::openai(&answer)]);
    let repo = example_configured(&server);
    let run = speed(repo.path(), &["review", "--task-id", "1"], &[]);
    assert_eq!(
        run.code,
        0,
        "the corrected answer is used: {}",
        run.transcript()
    );
    let correction = prompt_of(&server.requests()[1]);
    assert!(
        correction.contains("holds a key twice with different values: verdict"),
        "{correction}"
    );
}

#[test]
fn exit_53_lists_the_validation_errors() {
    let server = ModelServer::scripted(vec![
        Reply::openai(r#"{"verdict": "approve", "issues": []}"#),
        Reply::openai(r#"{"verdict": "maybe", "issues": []}"#),
    ]);
    let repo = example_configured(&server);
    let run = speed(repo.path(), &["review", "--task-id", "1"], &[]);
    assert_eq!(run.code, 53, "{}", run.transcript());
    let said = run.transcript();
    for problem in [
        "verdict: expected one of approve, request_changes, got \\\"maybe\\\"",
        "expectations: is required",
        "criteria: is required",
    ] {
        assert!(
            said.contains(problem) || said.contains(&problem.replace("\\\"", "\"")),
            "{problem} in {said}"
        );
    }
}

#[test]
fn valid_answers_are_not_thrown_away() {
    let mut v = verdicts::approve_task_1();
    v["issues"][0]["line"] = json!("26-30");
    v["spec_verification"][0]["notes"] = json!("the model once printed <think> here");
    let server = ModelServer::scripted(vec![Reply::openai(&format!(
        "<think>\nfirst {{\"verdict\": \"request_changes\"}}\n</think>\n{}",
        text(&v)
    ))]);
    let repo = example_configured(&server);
    let (run, out) = review_json(&repo, &[]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    assert_eq!(server.requests().len(), 1, "no corrective retry");
    let issue = &out["reviews"][0]["review"]["issues"][0];
    assert_eq!(
        (issue["line"].clone(), issue["end_line"].clone()),
        (json!(26), json!(30))
    );
}

#[test]
fn an_approval_resting_on_evidence_pointing_nowhere_is_overruled() {
    let mut v = verdicts::approve_task_1();
    v["spec_verification"][1]["evidence"] = json!("catalog/src/search.rs:999");
    v["issues"][1]["file"] = json!("catalog/tests/gone.rs");
    let server = ModelServer::scripted(vec![Reply::openai(&text(&v))]);
    let repo = example_configured(&server);
    let (run, out) = review_json(&repo, &[]);
    assert_eq!(run.code, 50, "{}", run.transcript());
    let r = &out["reviews"][0];
    let rules: Vec<&str> = r["overrules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["rule"].as_str().unwrap())
        .collect();
    assert_eq!(rules, ["evidence_not_found"]);
    let nowhere: Vec<(&str, bool)> = r["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["found"] == false)
        .map(|e| (e["ref"].as_str().unwrap(), e["in_diff"].as_bool().unwrap()))
        .collect();
    assert_eq!(
        nowhere,
        [
            ("catalog/src/search.rs:999", false),
            ("catalog/tests/gone.rs:5", false)
        ]
    );
    assert!(
        r["overrules"][0]["reason"]
            .as_str()
            .unwrap()
            .contains("line 999 is past the end of catalog/src/search.rs")
    );
    assert_eq!(repo.log()[0]["overrules"], json!(["evidence_not_found"]));
}

#[test]
fn approvals_without_a_basis_are_overruled_and_counted_in_the_batch_summary() {
    // Task 1: no quote at all. Task 2: its own requirement not satisfied.
    let mut no_quote = verdicts::approve_task_1();
    no_quote["spec_verification"] = json!([]);
    let mut unsatisfied = verdicts::request_changes_task_2();
    unsatisfied["verdict"] = json!("approve");
    unsatisfied["missing_from_spec"] = json!([]);
    unsatisfied["issues"] = json!([]);
    unsatisfied["criteria"][1]["status"] = json!("met");
    unsatisfied["spec_verification"]
        .as_array_mut()
        .unwrap()
        .push(
            json!({"spec_quote": "A member may have at most 5 books on loan at the same time.",
                     "spec_section": "Borrowing > Limits", "satisfied": true,
                     "evidence": "catalog/src/loans.rs:40", "notes": ""}),
        );
    let answers = [text(&no_quote), text(&unsatisfied)];
    let server = ModelServer::start(move |req| {
        let prompt = prompt_of(req);
        let i = usize::from(!prompt.contains("id: 1\n"));
        Reply::openai(&answers[i])
    });
    let repo = example_configured(&server);
    let run = speed(
        repo.path(),
        &["review", "--task-id", "1", "--task-id", "2"],
        &[],
    );
    assert_eq!(run.code, 50, "{}", run.transcript());
    assert!(run.stdout.contains("(no_spec_basis)"), "{}", run.stdout);
    assert!(
        run.stdout.contains("(unsatisfied_requirement)"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains("overruled: no_spec_basis 1, unsatisfied_requirement 1"),
        "{}",
        run.stdout
    );
    let logged: Vec<Value> = repo.log().iter().map(|l| l["overrules"].clone()).collect();
    assert!(logged.contains(&json!(["no_spec_basis"])), "{logged:?}");
    assert!(
        logged.contains(&json!(["unsatisfied_requirement"])),
        "{logged:?}"
    );
}

#[test]
fn a_dry_run_shows_every_part() {
    let repo = large_change(6);
    let server = ModelServer::start(|_| panic!("a dry run calls no model"));
    // 5,000 before the answer's schema asked for quality dimensions, 5,800
    // before it held previous findings: the same room for the diff.
    configure(&repo, &server, "token_budget = 6200");
    let run = speed(repo.path(), &["review", "--task-id", "1", "--dry-run"], &[]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    assert!(run.stdout.starts_with("===== part 1 of "), "{}", run.stdout);
    assert!(run.stdout.contains("===== part 2 of "));
    assert!(run.stderr.contains("diff (part 2)"), "{}", run.stderr);
    assert!(
        run.stderr.contains("changed lines shown: 240 of 240"),
        "{}",
        run.stderr
    );
    assert!(server.requests().is_empty());
}
