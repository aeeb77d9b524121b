//! Issue 29 end to end: quality dimensions scored by the model and held to
//! speed's thresholds in every output format, answers whose scores are not
//! scores, dimensions and the pass score from the configuration (five other
//! dimensions as docs/verdict.md configures them), coordination requirements checked
//! at the head commit and shown to the model, the Markdown summary beside
//! every report, and re-planning with the revision context the next review
//! shows.

use serde_json::{Value, json};

use crate::support::model_server::{ModelServer, Recorded, Reply};
use crate::support::repo::{self, RepoBuilder, TempRepo};
use crate::support::speed::{Run, speed};
use crate::support::verdicts::{self, rated, text};

fn configure(repo: &TempRepo, server: &ModelServer, extra: &str) {
    repo.config(&format!(
        "[llm]\nprovider = \"openai\"\nbase_url = \"{}\"\nmodel = \"test-model\"\ntimeout_secs = 5\nmax_retries = 0\nretry_base_ms = 10\n[guardian]\nenabled = false\n{extra}",
        server.url()
    ));
}

fn review_json(repo: &TempRepo, id: &str, extra: &[&str]) -> (Run, Value) {
    let mut args = vec!["review", "--task-id", id, "--json"];
    args.extend_from_slice(extra);
    let run = speed(repo.path(), &args, &[]);
    let out: Value =
        serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{e}: {}", run.transcript()));
    (run, out)
}

/// The last user message a request sent: the prompt, or a correction.
fn last_user_message(req: &Recorded) -> String {
    let messages = req.json()["messages"].as_array().unwrap();
    messages.iter().rev().find(|m| m["role"] == "user").unwrap()["content"]
        .as_str()
        .unwrap()
        .to_string()
}

/// Task 1's approval with these dimension scores (the others at 95).
fn approval_scored(scores: &[(&str, u32)]) -> Value {
    let mut answer = verdicts::approve_task_1();
    for (name, score) in scores {
        answer["dimensions"][name] =
            json!({"score": score, "reason": format!("{name} judged low")});
    }
    answer
}

#[test]
fn a_critical_dimension_under_its_minimum_overrules_the_approval_in_every_format() {
    let repo = repo::example();
    let answer = text(&approval_scored(&[("requirement_adherence", 40)]));
    let server = ModelServer::start(move |_| Reply::openai(&answer));
    configure(&repo, &server, "");
    let (run, out) = review_json(&repo, "1", &[]);
    assert_eq!(run.code, 50, "{}", run.transcript());
    let r = &out["reviews"][0];
    assert_eq!(r["model_verdict"], "approve");
    assert_eq!(r["verdict"], "request_changes");
    let rules: Vec<&str> = r["overrules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["rule"].as_str().unwrap())
        .collect();
    assert_eq!(rules, ["dimension_below_minimum"], "{}", r["overrules"]);
    assert_eq!(
        r["scores"]["dimensions"]["requirement_adherence"],
        json!({"score": 40, "weight": 3, "min_score": 90, "passed": false,
               "reason": "requirement_adherence judged low"})
    );
    // (40×3 + 95×7) / 10 = 78.5: the overall passes, the minimum does not.
    assert_eq!(r["scores"]["overall"], 78);
    assert_eq!(
        r["scores"]["pass_criteria_met"],
        json!({"all_critical_dimensions_pass": false, "no_blocking_issues": true,
               "overall_score_above_threshold": true})
    );
    let line = repo.log().pop().unwrap();
    assert_eq!(line["overall_score"], 78);
    assert_eq!(line["overrules"], json!(["dimension_below_minimum"]));
    let task = repo.task("1");
    assert_eq!(task["review_history"][0]["overall_score"], 78);
    assert!(
        task["review_feedback"]
            .as_str()
            .unwrap()
            .contains("- requirement_adherence: 40 (minimum 90): requirement_adherence judged low"),
        "{}",
        task["review_feedback"]
    );
    let context = &task["revision_context"];
    assert_eq!(context["scores"]["overall"], 78);
    assert!(
        context["blocking_issues"]
            .as_array()
            .unwrap()
            .iter()
            .any(|b| b["dimension"] == "requirement_adherence"),
        "{context}"
    );

    // Every output format shows the scores.
    let run = speed(repo.path(), &["review", "--task-id", "1"], &[]);
    assert_eq!(run.code, 50);
    assert!(
        run.stdout
            .contains("Scores: overall 78 (pass score 75, at or above it)"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains("✗ requirement_adherence 40 (minimum 90, weight 3)")
    );
    let run = speed(
        repo.path(),
        &["review", "--task-id", "1", "--format", "sarif"],
        &[],
    );
    let sarif: Value = serde_json::from_str(&run.stdout).unwrap();
    let speed_props = &sarif["runs"][0]["properties"]["speed"]["reviews"][0];
    assert_eq!(speed_props["scores"]["overall"], 78);
    assert!(
        sarif["runs"][0]["results"]
            .as_array()
            .unwrap()
            .iter()
            .any(|res| res["ruleId"] == "overrule/dimension_below_minimum"),
        "{}",
        run.stdout
    );
    let run = speed(
        repo.path(),
        &["review", "--task-id", "1", "--format", "junit"],
        &[],
    );
    assert!(
        run.stdout.contains(
            "<property name=\"library-catalog/1.score.requirement_adherence\" value=\"40\"/>"
        ),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains("<property name=\"library-catalog/1.overall_score\" value=\"78\"/>")
    );
    let run = speed(
        repo.path(),
        &["review", "--task-id", "1", "--format", "github"],
        &[],
    );
    assert!(
        run.stdout.contains("overall score 78 (pass score 75)"),
        "{}",
        run.stdout
    );
}

#[test]
fn a_score_that_is_not_an_integer_from_0_to_100_gets_one_correction_then_53() {
    let repo = repo::example();
    let mut as_string = verdicts::approve_task_1();
    as_string["dimensions"]["requirement_adherence"]["score"] = json!("95");
    let mut too_high = verdicts::approve_task_1();
    too_high["dimensions"]["requirement_adherence"]["score"] = json!(101);
    let server = ModelServer::scripted(vec![
        Reply::openai(&text(&as_string)),
        Reply::openai(&text(&too_high)),
    ]);
    configure(&repo, &server, "");
    let before = repo.task("1");
    let run = speed(repo.path(), &["review", "--task-id", "1"], &[]);
    assert_eq!(run.code, 53, "{}", run.transcript());
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let correction = last_user_message(&requests[1]);
    assert!(
        correction.contains(
            "dimensions.requirement_adherence.score: expected an integer from 0 to 100, got a string \"95\""
        ),
        "{correction}"
    );
    assert!(
        run.stderr
            .contains("expected an integer from 0 to 100, got 101"),
        "{}",
        run.stderr
    );
    assert_eq!(repo.task("1"), before, "an invalid answer changes no task");

    // A dimension left out is corrected like any missing field.
    let repo = repo::example();
    let mut missing = verdicts::approve_task_1();
    missing["dimensions"]
        .as_object_mut()
        .unwrap()
        .remove("test_quality");
    let server = ModelServer::scripted(vec![
        Reply::openai(&text(&missing)),
        Reply::openai(&text(&verdicts::approve_task_1())),
    ]);
    configure(&repo, &server, "");
    let run = speed(repo.path(), &["review", "--task-id", "1"], &[]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    let correction = last_user_message(&server.requests()[1]);
    assert!(
        correction.contains("dimensions.test_quality: is required"),
        "{correction}"
    );
}

/// The `toml` block of docs/verdict.md that replaces the dimensions by five
/// others.
fn docs_five_dimensions_config() -> String {
    let page =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/verdict.md")).unwrap();
    let from = page
        .find("### Replacing the dimensions: an example")
        .expect("docs/verdict.md shows five other dimensions");
    let block = &page[from..];
    let start = block.find("```toml\n").unwrap() + "```toml\n".len();
    let end = block[start..].find("```").unwrap();
    block[start..start + end].to_string()
}

#[test]
fn five_other_dimensions_are_the_docs_configuration_away() {
    let repo = repo::example();
    let seed = docs_five_dimensions_config();
    let answer = verdicts::approve_task_1();
    let server = ModelServer::start(move |req| {
        let mut answer = answer.clone();
        let prompt = req.body.clone();
        // Rate exactly what the prompt asks for, at 85.
        answer["dimensions"] = rated(
            &[
                "intent_alignment",
                "code_quality",
                "completeness",
                "consistency",
                "safety",
            ]
            .into_iter()
            .filter(|d| prompt.contains(d))
            .map(|d| (d, 85))
            .collect::<Vec<_>>(),
        );
        Reply::openai(&text(&answer))
    });
    configure(&repo, &server, &seed);
    let (run, out) = review_json(&repo, "1", &[]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    let prompt = last_user_message(&server.requests()[0]);
    for name in ["intent_alignment", "completeness", "consistency", "safety"] {
        let line = prompt
            .lines()
            .find(|l| l.starts_with(&format!("   - {name} (weight")))
            .unwrap_or_else(|| panic!("{name} is stated with its weight:\n{prompt}"));
        assert!(line.contains("): "), "{name} is described: {line}");
    }
    for gone in [
        "requirement_adherence",
        "pattern_consistency",
        "test_quality",
    ] {
        assert!(!prompt.contains(gone), "{gone} is disabled");
    }
    let names: Vec<&String> = out["reviews"][0]["scores"]["dimensions"]
        .as_object()
        .unwrap()
        .keys()
        .collect();
    assert_eq!(
        names,
        [
            "code_quality",
            "intent_alignment",
            "completeness",
            "consistency",
            "safety"
        ]
    );
    assert_eq!(out["reviews"][0]["scores"]["pass_score"], 80);

    // The same ratings under a stricter configuration: the thresholds are
    // speed's, from the file.
    let stricter = seed.replace("pass_score = 80", "pass_score = 90");
    configure(&repo, &server, &stricter);
    let (run, out) = review_json(&repo, "1", &["--force"]);
    assert_eq!(run.code, 50, "{}", run.transcript());
    assert_eq!(
        out["reviews"][0]["overrules"][0]["rule"],
        "overall_below_threshold"
    );

    // A custom dimension without a description is refused, naming it.
    configure(&repo, &server, "[dimensions.vibes]\nweight = 2\n");
    let run = speed(repo.path(), &["review", "--task-id", "1"], &[]);
    assert_eq!(run.code, 1, "{}", run.transcript());
    assert!(
        run.stderr
            .contains("dimensions.vibes: a custom dimension needs a description"),
        "{}",
        run.stderr
    );
}

/// A repository whose task 1 changes a profiled function's arity, renames
/// a shared interface and creates a file outside the allowed folders; the
/// task declares the profile, its feature (in the multi-player layout)
/// the rest.
fn coordinated() -> TempRepo {
    let (tmp, root) = repo::empty();
    let mut b = RepoBuilder::init(&root).unwrap();
    let spec = "# App\n\n## Review\n\nA review context holds the ticket, the epic and the state.\n";
    let before = "class ReviewReport:\n    pass\n\n\ndef build_review_context(ticket, epic, state):\n    return (ticket, epic, state)\n";
    let after = "class Report:\n    pass\n\n\ndef build_review_context(ticket, epic, state, extra=None):\n    return (ticket, epic, state)\n";
    b.commit(
        "main",
        None,
        &[("specs/product/app.md", spec), ("src/review.py", before)],
        &[],
        "main",
    )
    .unwrap();
    b.commit(
        "speed/task-1",
        Some("main"),
        &[
            ("src/review.py", after),
            ("scripts/tool.py", "print('x')\n"),
        ],
        &[],
        "review context",
    )
    .unwrap();
    b.checkout("main").unwrap();
    let repo = repo::adopt(tmp, root);
    repo.write(".speed/features/app/spec_path", "specs/product/app.md\n");
    repo.write(
        ".speed/features/app/tasks/1.json",
        &json!({"id": 1, "title": "Review context", "status": "done",
                "files_to_modify": ["src/review.py", "scripts/tool.py"],
                "spec_references": [{"spec": "product", "section": "Review"}],
                "coordination": {"function_profiles": [
                    {"name": "build_review_context", "arity": 3, "file": "src/review.py",
                     "intent": "assemble what a review needs"}]}})
        .to_string(),
    );
    repo.write(
        ".speed/shared/features/app/coordination.json",
        &json!({"shared_interfaces": [{"name": "ReviewReport", "file": "src/review.py"}],
                "directory_structure": ["src/**", "tests/**"],
                "prohibited_changes": ["Must not change the ticket state machine"]})
        .to_string(),
    );
    repo
}

#[test]
fn coordination_requirements_are_checked_at_the_head_and_shown_to_the_model() {
    let repo = coordinated();
    let run = speed(
        repo.path(),
        &["review", "--task-id", "1", "--offline", "--json"],
        &[],
    );
    assert_eq!(run.code, 50, "{}", run.transcript());
    let out: Value = serde_json::from_str(&run.stdout).unwrap();
    let mut found: Vec<(String, String)> = out["reviews"][0]["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["check"] == "coordination")
        .map(|f| {
            assert_eq!(f["severity"], "major");
            (
                f["file"].as_str().unwrap().to_string(),
                f["message"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    found.sort();
    assert_eq!(found.len(), 3, "{found:?}");
    assert_eq!(found[0].0, "scripts/tool.py");
    assert!(
        found[0].1.contains("outside the directory structure"),
        "{found:?}"
    );
    assert!(
        found.iter().any(|(_, m)| m
            == "Function build_review_context takes 4 parameters but the coordination requirements profile it with 3 (assemble what a review needs)."),
        "{found:?}"
    );
    assert!(
        found
            .iter()
            .any(|(_, m)| m.starts_with("Shared interface ReviewReport is removed or renamed")),
        "{found:?}"
    );

    // The model sees all four lists, and rates coordination compliance.
    let run = speed(
        repo.path(),
        &["review", "--task-id", "1", "--dry-run", "--json"],
        &[],
    );
    assert_eq!(run.code, 0, "{}", run.transcript());
    let prompt = serde_json::from_str::<Value>(&run.stdout).unwrap()["reviews"][0]["prompt"]
        .as_str()
        .unwrap()
        .to_string();
    for needle in [
        "Coordination: function build_review_context takes 3 parameters, in src/review.py: assemble what a review needs",
        "Coordination: shared interface ReviewReport (src/review.py) must not be removed or renamed",
        "Coordination: new files only under src/**, tests/**",
        "Coordination, prohibited change (rate it under coordination_compliance): Must not change the ticket state machine",
        "- coordination_compliance (weight 3, minimum 90): The coordination requirements hold",
    ] {
        assert!(prompt.contains(needle), "{needle}\n{prompt}");
    }

    // Turned off in [checks], the check finds nothing; the model still
    // rates the requirements.
    repo.config("[checks]\ncoordination = \"off\"\n");
    let run = speed(
        repo.path(),
        &["review", "--task-id", "1", "--offline", "--json"],
        &[],
    );
    let out: Value = serde_json::from_str(&run.stdout).unwrap();
    assert!(
        !out["reviews"][0]["checks"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["check"] == "coordination"),
        "{}",
        run.stdout
    );

    // A coordination file that is not what it should be is an error naming it.
    repo.write(
        ".speed/shared/features/app/coordination.json",
        r#"{"function_profiles": [{"name": "f", "arity": "three"}]}"#,
    );
    let run = speed(repo.path(), &["review", "--task-id", "1", "--offline"], &[]);
    assert_eq!(run.code, 1, "{}", run.transcript());
    assert!(
        run.stderr.contains("coordination.json")
            && run.stderr.contains("function_profiles[0].arity"),
        "{}",
        run.stderr
    );
}

#[test]
fn with_coordination_requirements_the_answer_must_rate_coordination_compliance() {
    let repo = coordinated();
    let base = json!({
        "verdict": "approve",
        "expectations": "A review context of three parts.",
        "criteria": [],
        "spec_verification": [{"spec_quote": "A review context holds the ticket, the epic and the state.",
            "spec_section": "Review", "satisfied": true, "evidence": "src/review.py:5", "notes": ""}],
        "issues": [], "strengths": [],
        "dimensions": verdicts::dimensions(),
    });
    let mut complete = base.clone();
    complete["dimensions"]["coordination_compliance"] =
        json!({"score": 50, "reason": "the arity changed and ReviewReport is gone"});
    let server = ModelServer::scripted(vec![
        Reply::openai(&text(&base)),
        Reply::openai(&text(&complete)),
    ]);
    configure(&repo, &server, "");
    let (run, out) = review_json(&repo, "1", &[]);
    assert_eq!(run.code, 50, "{}", run.transcript());
    let correction = last_user_message(&server.requests()[1]);
    assert!(
        correction.contains("dimensions.coordination_compliance: is required"),
        "{correction}"
    );
    let r = &out["reviews"][0];
    assert_eq!(
        r["scores"]["dimensions"]["coordination_compliance"]["passed"],
        false
    );
    assert_eq!(r["overrules"][0]["rule"], "dimension_below_minimum");
    assert!(
        r["overrules"][0]["reason"]
            .as_str()
            .unwrap()
            .starts_with("coordination_compliance scored 50, under its minimum of 90"),
        "{}",
        r["overrules"]
    );
    // speed's own findings stand beside the model's rating.
    let coordination = r["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["check"] == "coordination")
        .count();
    assert_eq!(coordination, 3, "{}", r["checks"]);
    assert_eq!(
        r["scores"]["pass_criteria_met"]["no_blocking_issues"],
        false
    );
}

#[test]
fn every_review_writes_its_summary_beside_its_report_without_secrets() {
    const AWS_KEY: &str = "AKIAQYLPMN5HHHFPZAM2";
    let repo = repo::example();
    let mut task = repo.task("1");
    task["description"] = json!(format!("Search as the spec says. Deploy with {AWS_KEY}."));
    repo.write(&repo.task_path("1"), &task.to_string());
    let server = ModelServer::scripted(vec![Reply::openai(&text(&verdicts::approve_task_1()))]);
    configure(&repo, &server, "");
    let (run, out) = review_json(&repo, "1", &[]);
    // The key in the task is a finding of its own: changes requested.
    assert_eq!(run.code, 50, "{}", run.transcript());
    let r = &out["reviews"][0];
    let report = r["report_path"].as_str().unwrap();
    let summary = r["summary_path"].as_str().unwrap();
    assert_eq!(summary, report.replace(".json", ".md"));
    assert_eq!(repo.task("1")["review_summary"], summary);
    let saved: Value = serde_json::from_str(&repo.read(report)).unwrap();
    assert_eq!(saved["summary_path"], summary);
    let md = repo.read(summary);
    for needle in [
        "# Review of task 1: Search books by title and author, best matches first",
        "- Decision: **request_changes** (the model said approve)",
        "## What was asked",
        "AC-1: search() matches the query against title and author",
        "## What changed",
        "| catalog/src/search.rs | modified |",
        "## Decision and reasons",
        "check_failed: speed's checks found",
        "## Scores",
        "| requirement_adherence | 95 | 90 | 3 | yes |",
        "Overall 95 (pass score 75)",
        "## Findings",
        "### critical",
        "speed's secret check",
        "### nit",
        "rank() could be a method on Book",
        "## Strengths",
        "## Guardian",
        "[REDACTED:aws-access-key]",
    ] {
        assert!(
            md.contains(needle),
            "{needle:?} is not in the summary:\n{md}"
        );
    }
    assert!(!md.contains(AWS_KEY), "{md}");
    // The log names the report, whose summary lies beside it.
    assert_eq!(repo.log()[0]["report"], report);
}

#[test]
fn a_plan_rejection_asks_for_a_new_plan_and_the_next_review_sees_what_blocked() {
    let repo = repo::example();
    let mut rejection = verdicts::request_changes_task_2();
    rejection["rejection"] = json!({"kind": "plan",
        "reason": "AC-2 asks for three renewals, the spec for two: the task contradicts its spec"});
    rejection["dimensions"]["requirement_adherence"] =
        json!({"score": 30, "reason": "renewals wrong"});
    let server = ModelServer::scripted(vec![
        Reply::openai(&text(&rejection)),
        Reply::openai(&text(&verdicts::request_changes_task_2())),
    ]);
    configure(&repo, &server, "");
    let run = speed(repo.path(), &["review", "--task-id", "2"], &[]);
    assert_eq!(run.code, 50, "{}", run.transcript());
    let task = repo.task("2");
    let head = repo.log()[0]["head_commit"].clone();
    assert_eq!(
        task["replan"]["reason"],
        "AC-2 asks for three renewals, the spec for two: the task contradicts its spec"
    );
    assert_eq!(task["replan"]["head_commit"], head);
    let feedback = task["review_feedback"].as_str().unwrap();
    assert!(
        feedback.starts_with("Re-plan: the review rejects the task's plan"),
        "{feedback}"
    );
    let context = &task["revision_context"];
    assert_eq!(context["revision_notes"], feedback);
    assert!(
        context["blocking_issues"]
            .as_array()
            .unwrap()
            .iter()
            .any(
                |b| b["message"] == "MAX_RENEWALS is 3 but the spec allows at most two renewals"
                    && b["location"] == "catalog/src/loans.rs:8"
                    && b["required_action"] == "Set MAX_RENEWALS to 2"
            ),
        "{context}"
    );
    // (30×3 + 95×7) / 10 = 75.5
    assert_eq!(
        context["attempts"],
        json!([{"attempt": task["review_history"][0]["attempt"], "verdict": "request_changes",
                "overall_score": 75, "reviewed_at": task["reviewed_at"]}])
    );

    // The next review is shown the revision context as the previous review.
    let run = speed(repo.path(), &["review", "--task-id", "2"], &[]);
    assert_eq!(run.code, 50, "{}", run.transcript());
    let prompt = last_user_message(&server.requests()[1]);
    for needle in [
        "Revision context of the last review (what this attempt had to fix):",
        "- MAX_RENEWALS is 3 but the spec allows at most two renewals (catalog/src/loans.rs:8); required: Set MAX_RENEWALS to 2",
        "requirement_adherence 30 (minimum 90, under it)",
        "request_changes (overall 75)",
    ] {
        assert!(prompt.contains(needle), "{needle:?}\n{prompt}");
    }
    // An implementation rejection asks for no re-plan, and leaves the
    // earlier one standing for whoever plans.
    assert_eq!(repo.task("2")["replan"]["head_commit"], head);
}
