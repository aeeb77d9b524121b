//! `speed review --dry-run` end to end on real repositories: the prompt, its
//! accounting, that nothing changes, and every input error a user can make.

use crate::support::repo::{self, RepoBuilder, TempRepo};
use crate::support::speed::{Run, speed};

fn git_status(repo: &TempRepo) -> Vec<String> {
    let git = git2::Repository::open(repo.path()).unwrap();
    let mut opts = git2::StatusOptions::new();
    opts.include_untracked(true);
    git.statuses(Some(&mut opts))
        .unwrap()
        .iter()
        .map(|s| s.path().unwrap_or("?").to_string())
        .collect()
}

/// Masks what differs between machines: temp paths and timings.
fn scrub(text: &str, repo: &TempRepo) -> String {
    text.replace(&repo.path().display().to_string(), "[REPO]")
}

#[test]
fn dry_run_prints_the_prompt_and_accounting_and_changes_nothing() {
    let repo = repo::example();
    let before = repo.read(&repo.task_path("2"));
    let run = speed(repo.path(), &["review", "--task-id", "2", "--dry-run"], &[]);
    assert_eq!(run.code, 0, "{}", run.transcript());

    let prompt = &run.stdout;
    // The house order of sections: the spec before the task, the criteria
    // and the diff, so a model forms its expectations first (and the
    // reviews of a feature share the prompt up to the task).
    let order = [
        "SOURCE OF TRUTH",
        "A loan may be renewed at most twice.",
        "Loan renewals and the per-member loan limit",
        "AC-1",
        "catalog/src/loans.rs",
    ];
    let mut at = 0;
    for needle in order {
        let found = prompt[at..]
            .find(needle)
            .unwrap_or_else(|| panic!("{needle:?} missing or out of order in:\n{prompt}"));
        at += found;
    }
    assert!(
        prompt.contains("MAX_RENEWALS: u8 = 3"),
        "the diff is in the prompt"
    );
    assert!(
        run.stderr.contains("Token accounting for task 2"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("60,000"), "{}", run.stderr);

    assert_eq!(
        repo.read(&repo.task_path("2")),
        before,
        "task file untouched"
    );
    assert!(git_status(&repo).is_empty(), "{:?}", git_status(&repo));
    assert!(!repo.path().join(".speed/reviews").exists());
}

#[test]
fn dry_run_prompt_snapshot() {
    let repo = repo::example();
    let run = speed(repo.path(), &["review", "--task-id", "2", "--dry-run"], &[]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    insta::assert_snapshot!("dry_run_task_2_prompt", scrub(&run.stdout, &repo));
    insta::assert_snapshot!("dry_run_task_2_accounting", scrub(&run.stderr, &repo));
}

#[test]
fn dry_run_json_holds_prompt_tokens_and_sections() {
    let repo = repo::example();
    let run = speed(
        repo.path(),
        &[
            "review",
            "--task-id",
            "3",
            "--dry-run",
            "--json",
            "--budget",
            "4400",
        ],
        &[],
    );
    assert_eq!(run.code, 0, "{}", run.transcript());
    let json: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let review = &json["reviews"][0];
    assert_eq!(review["task_id"], "3");
    // Task 3's diff does not fit 4,400 tokens: it is reviewed in parts,
    // each within the budget, and the total says it sums them.
    let total = review["tokens"]["total"].as_u64().unwrap();
    assert_eq!(review["tokens"]["budget"], 4400);
    let parts = review["parts"].as_array().unwrap();
    assert_eq!(review["tokens"]["summed_over_parts"], parts.len());
    assert_eq!(review["coverage"]["parts"], parts.len());
    let sum: u64 = parts.iter().map(|p| p["tokens"].as_u64().unwrap()).sum();
    assert_eq!(total, sum);
    for (n, p) in parts.iter().enumerate() {
        assert_eq!(p["index"], n + 1);
        assert!(p["tokens"].as_u64().unwrap() <= 4400, "{p}");
        assert!(
            p["files"].as_u64().unwrap() > 0,
            "part {} shows no code",
            n + 1
        );
    }
    assert_eq!(
        review["tokens"]["largest_part"],
        parts
            .iter()
            .map(|p| p["tokens"].as_u64().unwrap())
            .max()
            .unwrap()
    );
    assert!(
        review["prompt"]
            .as_str()
            .unwrap()
            .contains("SOURCE OF TRUTH")
    );
    // The blast radius a review would carry, without asking a model.
    let impact = review["impact"].as_array().unwrap();
    assert!(
        impact
            .iter()
            .all(|s| s["symbol"].is_string() && s["change"].is_string() && s["sites"].is_array()),
        "{impact:?}"
    );
    assert!(!impact.is_empty(), "task 3 changes code");
    let sections = review["sections"].as_array().unwrap();
    assert!(
        sections
            .iter()
            .all(|s| s["name"].is_string() && s["tokens"].is_u64())
    );
    let summed: u64 = sections.iter().map(|s| s["tokens"].as_u64().unwrap()).sum();
    assert!(summed > 0 && summed <= total + 50, "{summed} vs {total}");
    // A 4,400-token budget cannot hold task 3's whole diff: what was left out
    // is listed, never dropped silently.
    let omitted: Vec<&serde_json::Value> = sections
        .iter()
        .flat_map(|s| s["omitted"].as_array().unwrap())
        .collect();
    assert!(!omitted.is_empty(), "{}", run.stdout);
    assert!(
        run.stderr.is_empty() || !run.stderr.contains("error"),
        "{}",
        run.stderr
    );
}

#[test]
fn protected_sections_that_do_not_fit_say_by_how_much() {
    let repo = repo::example();
    let run = speed(
        repo.path(),
        &["review", "--task-id", "2", "--dry-run", "--budget", "300"],
        &[],
    );
    assert_eq!(run.code, 1, "{}", run.transcript());
    assert!(run.stderr.contains("300"), "{}", run.stderr);
    assert!(
        run.stderr.contains("more than the budget"),
        "{}",
        run.stderr
    );
}

#[test]
fn the_task_branch_need_not_be_checked_out_and_a_dirty_tree_is_ignored() {
    let repo = repo::example();
    // Dirty the checkout of main, including the code the task changes.
    repo.write("catalog/src/loans.rs", "garbage that is not committed\n");
    let run = speed(repo.path(), &["review", "--task-id", "2", "--dry-run"], &[]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    assert!(!run.stdout.contains("garbage that is not committed"));
}

#[test]
fn spec_is_read_from_main_and_a_diff_that_edits_it_is_announced() {
    let repo = repo::shop_editing_its_spec(&["src/cart.rs"]);
    let run = speed(repo.path(), &["review", "--task-id", "1", "--dry-run"], &[]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    assert!(run.stdout.contains("The cart holds at most 10 items."));
    let notice = run
        .stdout
        .find("The diff edits specs/product/shop.md")
        .expect("the prompt says the diff edits its spec");
    // At the top of what is the task's own, after the stable part.
    let task = run.stdout.find("## 3. Task").unwrap();
    let constraints = run.stdout.find("## 2. Cross-cutting constraints").unwrap();
    assert!(
        constraints < notice && notice < task,
        "the notice opens the task's part"
    );
    assert!(run.stdout.contains("+The cart holds at most 50 items."));
}

fn expect_error(run: &Run, needles: &[&str]) {
    assert_eq!(run.code, 1, "{}", run.transcript());
    for needle in needles {
        assert!(
            run.stderr.contains(needle),
            "stderr should name {needle:?}:\n{}",
            run.stderr
        );
    }
    assert!(run.stdout.is_empty(), "{}", run.stdout);
}

#[test]
fn not_a_git_repository() {
    let dir = tempfile::tempdir().unwrap();
    let run = speed(dir.path(), &["review", "--task-id", "1", "--dry-run"], &[]);
    expect_error(&run, &["not inside a git repository"]);
}

#[test]
fn unknown_task_id() {
    let repo = repo::example();
    let run = speed(
        repo.path(),
        &["review", "--task-id", "42", "--dry-run"],
        &[],
    );
    expect_error(&run, &["42"]);
}

#[test]
fn ambiguous_task_id_names_both_features_unless_feature_picks_one() {
    let repo = repo::example();
    let task = repo.read(&repo.task_path("2"));
    repo.write(".speed/features/other/tasks/2.json", &task);
    let run = speed(repo.path(), &["review", "--task-id", "2", "--dry-run"], &[]);
    expect_error(&run, &["library-catalog", "other"]);
    let run = speed(
        repo.path(),
        &[
            "review",
            "--task-id",
            "2",
            "--feature",
            "library-catalog",
            "--dry-run",
        ],
        &[],
    );
    assert_eq!(run.code, 0, "{}", run.transcript());
}

#[test]
fn missing_branch_is_named() {
    let repo = repo::example();
    let mut task = repo.task("2");
    task["branch"] = "speed/task-99".into();
    repo.write(
        &repo.task_path("2"),
        &serde_json::to_string_pretty(&task).unwrap(),
    );
    let run = speed(repo.path(), &["review", "--task-id", "2", "--dry-run"], &[]);
    expect_error(&run, &["speed/task-99", "task 2"]);
}

#[test]
fn missing_base_is_named() {
    let repo = repo::example();
    let run = speed(
        repo.path(),
        &["review", "--task-id", "2", "--dry-run", "--base", "trunk"],
        &[],
    );
    expect_error(&run, &["trunk"]);
}

#[test]
fn missing_spec_is_named() {
    let repo = repo::example();
    let mut task = repo.task("2");
    task["spec_references"][0]["spec"] = "specs/product/nope.md".into();
    repo.write(
        &repo.task_path("2"),
        &serde_json::to_string_pretty(&task).unwrap(),
    );
    let run = speed(repo.path(), &["review", "--task-id", "2", "--dry-run"], &[]);
    expect_error(&run, &["specs/product/nope.md"]);
}

#[test]
fn malformed_task_json_gives_line_and_column() {
    let repo = repo::example();
    repo.write(
        &repo.task_path("2"),
        "{\n  \"id\": 2,\n  \"title\": oops\n}\n",
    );
    let run = speed(repo.path(), &["review", "--task-id", "2", "--dry-run"], &[]);
    expect_error(&run, &["tasks/2.json:3:12", "invalid JSON"]);
}

#[test]
fn an_empty_diff_would_request_changes_without_a_model() {
    let (tmp, root) = repo::empty();
    let mut b = RepoBuilder::init(&root).unwrap();
    b.commit(
        "main",
        None,
        &[("specs/product/x.md", "# X\n\nText.\n")],
        &[],
        "main",
    )
    .unwrap();
    b.commit("speed/task-1", Some("main"), &[], &[], "nothing")
        .unwrap();
    b.checkout("main").unwrap();
    let repo = repo::adopt(tmp, root);
    repo.write(
        ".speed/tasks/1.json",
        r#"{"id": "1", "title": "Nothing", "status": "done", "spec_references": [{"spec": "specs/product/x.md"}]}"#,
    );
    let run = speed(repo.path(), &["review", "--task-id", "1", "--dry-run"], &[]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    assert!(run.stdout.is_empty(), "no prompt: {}", run.stdout);
    for part in [
        "is empty: nothing was implemented",
        "speed/task-1",
        "would request changes without calling a model",
    ] {
        assert!(run.stderr.contains(part), "{part}: {}", run.stderr);
    }
    assert!(!run.stderr.contains("error"), "{}", run.stderr);
    let run = speed(
        repo.path(),
        &["review", "--task-id", "1", "--dry-run", "--json"],
        &[],
    );
    assert_eq!(run.code, 0, "{}", run.transcript());
    let out: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(out["reviews"][0]["verdict"], "request_changes");
    assert_eq!(out["reviews"][0]["error"], serde_json::Value::Null);
}

#[test]
fn branch_mode_reviews_any_branch_against_a_spec_section() {
    let repo = repo::example();
    let run = speed(
        repo.path(),
        &[
            "review",
            "--branch",
            "speed/task-1",
            "--spec",
            "specs/product/library-catalog.md#Catalog > Search",
            "--dry-run",
        ],
        &[],
    );
    assert_eq!(run.code, 0, "{}", run.transcript());
    assert!(run.stdout.contains("Search returns at most 20 results."));
}

#[test]
fn help_snapshot() {
    let dir = tempfile::tempdir().unwrap();
    let run = speed(dir.path(), &["--help"], &[]);
    assert_eq!(run.code, 0);
    insta::assert_snapshot!("help", run.stdout);
    let run = speed(dir.path(), &["review", "--help"], &[]);
    assert_eq!(run.code, 0);
    insta::assert_snapshot!("review_help", run.stdout);
}

#[test]
fn bad_usage_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    let run = speed(dir.path(), &["review", "--budget", "lots"], &[]);
    assert_eq!(run.code, 2, "{}", run.transcript());
}

#[test]
fn json_output_is_one_object_even_when_tasks_cannot_be_read() {
    let repo = repo::example();
    let run = speed(
        repo.path(),
        &[
            "review",
            "--task-id",
            "42",
            "--task-id",
            "2",
            "--dry-run",
            "--json",
        ],
        &[],
    );
    assert_eq!(run.code, 1, "{}", run.transcript());
    let json: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let reviews = json["reviews"].as_array().unwrap();
    assert_eq!(reviews.len(), 2, "the unknown id stops no other task");
    assert_eq!(reviews[0]["task_id"], "42");
    assert!(reviews[0]["error"].as_str().unwrap().contains("42"));
    assert!(
        reviews[1]["prompt"]
            .as_str()
            .unwrap()
            .contains("SOURCE OF TRUTH")
    );
    assert!(run.stderr.contains("42"));

    let dir = tempfile::tempdir().unwrap();
    let run = speed(dir.path(), &["review", "--json"], &[]);
    assert_eq!(run.code, 1);
    let json: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert!(json["error"].as_str().unwrap().contains("git repository"));
    assert_eq!(json["reviews"], serde_json::json!([]));
}

#[test]
fn a_malformed_task_file_does_not_hide_the_other_tasks_of_a_batch() {
    let repo = repo::example();
    repo.write(".speed/features/library-catalog/tasks/9.json", "{ not json");
    let run = speed(repo.path(), &["review", "--dry-run", "--json"], &[]);
    assert_eq!(run.code, 1, "{}", run.transcript());
    let json: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let reviews = json["reviews"].as_array().unwrap();
    assert_eq!(reviews.len(), 4, "{}", run.stdout);
    assert!(reviews[0]["error"].as_str().unwrap().contains("9.json"));
    assert_eq!(
        reviews.iter().filter(|r| r["prompt"].is_string()).count(),
        3
    );
}

#[test]
fn spec_flag_is_the_last_resort_for_a_task_without_one() {
    let (tmp, root) = repo::empty();
    let mut b = RepoBuilder::init(&root).unwrap();
    b.commit(
        "main",
        None,
        &[("docs/rules.md", "# Rules\n\n## Cart\n\nThe cart holds at most 10 items.\n\n## Other\n\nUnrelated text.\n")],
        &[],
        "main",
    )
    .unwrap();
    b.commit(
        "speed/task-1",
        Some("main"),
        &[("src/cart.rs", "pub fn cap() -> u32 { 10 }\n")],
        &[],
        "cap",
    )
    .unwrap();
    b.checkout("main").unwrap();
    let repo = repo::adopt(tmp, root);
    repo.write(
        ".speed/tasks/1.json",
        r#"{"id": 1, "title": "Cap the cart", "status": "done"}"#,
    );
    let run = speed(repo.path(), &["review", "--task-id", "1", "--dry-run"], &[]);
    assert_eq!(run.code, 1, "no spec anywhere: {}", run.transcript());
    assert!(run.stderr.contains("no spec"), "{}", run.stderr);
    let run = speed(
        repo.path(),
        &[
            "review",
            "--task-id",
            "1",
            "--dry-run",
            "--spec",
            "docs/rules.md#Cart",
        ],
        &[],
    );
    assert_eq!(run.code, 0, "{}", run.transcript());
    assert!(run.stdout.contains("The cart holds at most 10 items."));
}

#[test]
fn branch_mode_takes_criteria_from_a_file() {
    let repo = repo::example();
    repo.write(
        "criteria.txt",
        "- Search ignores case [verify: test]\n- Results are capped at 20\n",
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
        ],
        &[],
    );
    assert_eq!(run.code, 0, "{}", run.transcript());
    assert!(
        run.stdout.contains("| AC-1 | Search ignores case | test |"),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("| AC-2 | Results are capped at 20 |"));
}
