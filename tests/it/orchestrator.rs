//! speed on repositories laid out by the real `speed` orchestrator, from
//! task files shaped like its own (`fixtures/tasks/`): the multi-player
//! layout (`.speed/shared/features/`) and the single-player one
//! (`.speed/features/`), every acceptance-criteria dialect, notes the
//! reviewer must see, stacked branches, empty branches, what a review writes
//! back and the events it leaves; and the flat layout's hostile cases: an id
//! that is not its file name, a byte order mark, unreadable task files.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::support::model_server::{ModelServer, Recorded, Reply};
use crate::support::repo::{self, RepoBuilder, TempRepo};
use crate::support::speed::speed;

const FEATURE_DIR: &str = ".speed/shared/features/audit-history";
const TASK_1: &str = "speed/audit-history/task-1-create-issue-key";
const TASK_2: &str = "speed/audit-history/task-2-create-compute-comparison";
const TASK_9: &str = "speed/audit-history/task-9-integrate-audit-history";
const TASK_10A: &str = "speed/audit-history/task-10a-keyboard-navigation";
const TASK_14: &str = "speed/audit-history/task-14-show-persistent-count";

const KEYS: &str =
    "def issue_key(issue):\n    return f\"{issue['rule']}:{issue.get('file', '')}\"\n";

const COMPARE: &str = "from app.keys import issue_key


def compute_comparison(older, newer):
    old = {issue_key(i): i for i in older[\"issues\"]}
    new = {issue_key(i): i for i in newer[\"issues\"]}
    removed = [i for k, i in old.items() if k not in new]
    unchanged = [i for k, i in new.items() if k in old]
    added = [i for k, i in new.items() if k not in old]
    return removed, unchanged, added


def persistent_issues(latest, previous):
    if previous is None:
        return set()
    return {issue_key(i) for i in latest[\"issues\"]} & {issue_key(i) for i in previous[\"issues\"]}
";

const PANEL: &str = "def render(audits):
    dots = [audit[\"status\"] for audit in audits]
    if len(audits) < 2:
        return dots, 0
    keys = lambda audit: {(i[\"rule\"], i.get(\"file\")) for i in audit[\"issues\"]}
    return dots, len(keys(audits[0]) & keys(audits[1]))
";

const PANEL_TEST: &str = "from app.panel import render


def test_one_dot_per_run():
    assert render([{\"status\": \"pass\", \"issues\": []}]) == ([\"pass\"], 0)
";

fn fixture(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/tasks")
        .join(path)
}

/// Every file under `dir`, as (path relative to `dir`, text), sorted.
fn files_of(dir: &Path) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(next) = stack.pop() {
        for entry in std::fs::read_dir(&next).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let rel = path
                    .strip_prefix(dir)
                    .unwrap()
                    .to_string_lossy()
                    .replace('\\', "/");
                out.push((rel, std::fs::read_to_string(&path).unwrap()));
            }
        }
    }
    out.sort();
    out
}

fn as_refs(files: &[(String, String)]) -> Vec<(&str, &str)> {
    files
        .iter()
        .map(|(p, c)| (p.as_str(), c.as_str()))
        .collect()
}

/// Copies a scenario's `state/` (its `.speed/` folder) into the working tree.
fn copy_state(repo: &TempRepo, scenario: &str) {
    for (path, text) in files_of(&fixture(&format!("{scenario}/state"))) {
        repo.write(&path, &text);
    }
}

struct MultiPlayer {
    repo: TempRepo,
    task_1_head: String,
    task_9_head: String,
}

/// The multi-player scenario: main holds the specs and the panel; task 1's
/// branch adds `app/keys.py` and is not merged; task 2's branch is built on
/// it; task 9's holds no work; task 14's changes the panel and adds a test
/// it did not declare. The git user is "Sanjay K".
fn multi_player() -> MultiPlayer {
    let (tmp, root) = repo::empty();
    let mut b = RepoBuilder::init(&root).unwrap();
    let main_files = files_of(&fixture("multi-player/main"));
    let main = b
        .commit("main", None, &as_refs(&main_files), &[], "main")
        .unwrap();
    let task_1_head = b
        .commit(
            TASK_1,
            Some("main"),
            &[("app/keys.py", KEYS)],
            &[],
            "task 1",
        )
        .unwrap();
    b.commit(
        TASK_2,
        Some(TASK_1),
        &[("app/compare.py", COMPARE)],
        &[],
        "task 2",
    )
    .unwrap();
    let task_9_head = b.commit(TASK_9, Some("main"), &[], &[], "task 9").unwrap();
    b.commit(
        TASK_14,
        Some("main"),
        &[("app/panel.py", PANEL), ("app/panel_test.py", PANEL_TEST)],
        &[],
        "task 14",
    )
    .unwrap();
    b.commit(
        TASK_10A,
        Some("main"),
        &[("app/nav.py", "STEP = 1\n")],
        &[],
        "10a",
    )
    .unwrap();
    let mut config = b.repo().config().unwrap();
    config.set_str("user.name", "Sanjay K").unwrap();
    config.set_str("user.email", "sanjay@example.com").unwrap();
    b.checkout("main").unwrap();
    let repo = repo::adopt(tmp, root);
    copy_state(&repo, "multi-player");
    let task_2 = format!("{FEATURE_DIR}/tasks/2.json");
    repo.write(&task_2, &repo.read(&task_2).replace("BASE_COMMIT", &main));
    MultiPlayer {
        repo,
        task_1_head,
        task_9_head,
    }
}

fn configure(repo: &TempRepo, server: &ModelServer) {
    repo.config(&format!(
        "[llm]\nprovider = \"openai\"\nbase_url = \"{}\"\nmodel = \"m\"\ntimeout_secs = 5\nmax_retries = 0\nretry_base_ms = 10\n[guardian]\nenabled = false\n",
        server.url()
    ));
}

/// The task id a review prompt is about ("id: 14" in its task block).
fn task_of(req: &Recorded) -> Option<String> {
    let prompt = prompt_of(req);
    let start = prompt.find("\nid: ")? + 5;
    let end = prompt[start..].find('\n')? + start;
    Some(prompt[start..end].to_string())
}

fn prompt_of(req: &Recorded) -> String {
    req.json()["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["content"].as_str().unwrap_or_default().to_string())
        .collect::<Vec<_>>()
        .join("\n")
}

fn approve(criteria: &[(&str, &str)], quote: &str, section: &str, evidence: &str) -> String {
    let criteria: Vec<Value> = criteria
        .iter()
        .map(|(id, at)| json!({"id": id, "status": "met", "evidence": at}))
        .collect();
    json!({
        "dimensions": crate::support::verdicts::dimensions(),
        "verdict": "approve",
        "expectations": "What the spec section says.",
        "criteria": criteria,
        "spec_verification": [{"spec_quote": quote, "spec_section": section,
                               "satisfied": true, "evidence": evidence, "notes": ""}],
        "missing_from_spec": [], "out_of_scope": [], "issues": [], "strengths": []
    })
    .to_string()
}

fn approve_task_2() -> String {
    approve(
        &[
            ("AC-1", "app/compare.py:8"),
            ("AC-2", "app/compare.py:15"),
            ("AC-3", "app/compare.py:16"),
        ],
        "persistent_issues returns the keys present in both audits, and an empty set when there is no previous audit.",
        "Comparison",
        "app/compare.py:16",
    )
}

fn approve_task_14() -> String {
    approve(
        &[("AC-1", "app/panel.py:2"), ("AC-2", "app/panel.py:6")],
        "Issues found in both of the last two runs are marked persistent.",
        "User Stories",
        "app/panel.py:6",
    )
}

fn json_file(repo: &TempRepo, path: &str) -> Value {
    serde_json::from_str(&repo.read(path)).unwrap()
}

/// Every key the fixture had keeps its value (unless speed owns it) and
/// its order; speed's new keys come after them.
fn assert_kept(before: &Value, after: &Value) {
    const OWNED: &[&str] = &[
        "status",
        "review_verdict",
        "review_feedback",
        "reviewed_at",
        "reviewed_diff",
        "reviewed_by",
        "revision_count",
        "review_history",
        "error",
    ];
    let before = before.as_object().unwrap();
    let after = after.as_object().unwrap();
    let old_keys: Vec<&String> = before.keys().collect();
    let kept: Vec<&String> = after.keys().take(old_keys.len()).collect();
    assert_eq!(kept, old_keys, "existing keys keep their place");
    for (key, value) in before {
        if !OWNED.contains(&key.as_str()) {
            assert_eq!(
                &after[key], value,
                "{key} is not speed's and must not change"
            );
        }
    }
}

fn event_files(repo: &TempRepo) -> Vec<(String, Value)> {
    let dir = repo.path().join(".speed/shared/events");
    let mut out: Vec<(String, Value)> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .map(|e| {
                    let e = e.unwrap();
                    let text = std::fs::read_to_string(e.path()).unwrap();
                    assert_eq!(text.lines().count(), 1, "one event per file: {text}");
                    let name = e.file_name().to_string_lossy().into_owned();
                    (name, serde_json::from_str(&text).unwrap())
                })
                .collect()
        })
        .unwrap_or_default();
    out.sort_by(|a, b| {
        a.1["data"]["task_id"]
            .as_str()
            .cmp(&b.1["data"]["task_id"].as_str())
    });
    out
}

fn git_status(repo: &TempRepo) -> Vec<String> {
    let git = git2::Repository::open(repo.path()).unwrap();
    let mut opts = git2::StatusOptions::new();
    opts.include_untracked(true).recurse_untracked_dirs(true);
    git.statuses(Some(&mut opts))
        .unwrap()
        .iter()
        .map(|s| s.path().unwrap_or("?").to_string())
        .collect()
}

#[test]
fn a_multi_player_batch_reviews_what_the_orchestrator_left() {
    let MultiPlayer {
        repo,
        task_1_head,
        task_9_head,
    } = multi_player();
    let task_path = |id: &str| format!("{FEATURE_DIR}/tasks/{id}.json");
    let before: Vec<Value> = ["2", "9", "14"]
        .iter()
        .map(|id| json_file(&repo, &task_path(id)))
        .collect();
    let server = ModelServer::start(|req| match task_of(req).as_deref() {
        Some("2") => Reply::openai(&approve_task_2()),
        Some("14") => Reply::openai(&approve_task_14()),
        other => Reply::status(400, &format!("no review expected for {other:?}")),
    });
    configure(&repo, &server);

    let run = speed(repo.path(), &["review", "--json"], &[]);
    assert_eq!(run.code, 50, "task 9 holds no work: {}", run.transcript());
    let out: Value = serde_json::from_str(&run.stdout).unwrap();
    let report = |id: &str| -> Value {
        out["reviews"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["task_id"] == id)
            .unwrap_or_else(|| panic!("no report for task {id}: {}", run.stdout))
            .clone()
    };

    // Only tasks 2 and 14 reached the model: task 1 was approved by the
    // orchestrator before its head commit, task 9 needs no model, 10a is
    // pending.
    let mut asked: Vec<String> = server.requests().iter().filter_map(task_of).collect();
    asked.sort();
    assert_eq!(asked, ["14", "2"]);
    let skipped = &out["skipped"];
    assert_eq!(skipped[0]["task_id"], "1", "{}", run.stdout);
    assert!(
        skipped[0]["reason"]
            .as_str()
            .unwrap()
            .contains("approved at 2026-03-26T02:53:06Z"),
        "{skipped}"
    );

    // Task 2 is stacked on task 1's unmerged branch: its diff starts there.
    let two = report("2");
    assert_eq!(two["verdict"], "approve", "{two}");
    assert_eq!(two["base_commit"], task_1_head.as_str());
    let how = two["base_resolved_by"].as_str().unwrap();
    assert!(
        how.starts_with(&format!("head of task 1's branch {TASK_1}"))
            && how.contains("base_commit"),
        "{how}"
    );
    assert!(
        two["notices"].to_string().contains(&format!(
            "The diff starts at the head of task 1's branch {TASK_1}"
        )),
        "{two}"
    );
    let prompt_2 = server
        .requests()
        .iter()
        .find(|r| task_of(r).as_deref() == Some("2"))
        .map(prompt_of)
        .unwrap();
    assert!(prompt_2.contains("+def persistent_issues(latest, previous):"));
    assert!(
        !prompt_2.contains("def issue_key"),
        "task 1's work is not task 2's"
    );
    for note in [
        "Decision: compute_comparison builds two dicts keyed by issue_key",
        "Concern: Test coverage deferred to task 4 per the original plan.",
        &format!(
            "Depends on task 1 (branch {TASK_1}, head {}): not merged into main; this branch contains it",
            &task_1_head[..10]
        ),
        "First attempt at this task: no earlier review.",
        "gate_evidence: warn",
        "| AC-3 | persistent_issues returns the keys present in both audits | test |",
    ] {
        assert!(prompt_2.contains(note), "missing {note:?} in:\n{prompt_2}");
    }

    // Task 14 names its specs by kind and carries gate details.
    let prompt_14 = server
        .requests()
        .iter()
        .find(|r| task_of(r).as_deref() == Some("14"))
        .map(prompt_of)
        .unwrap();
    for part in [
        "SOURCE OF TRUTH: specs/product/audit-history.md § Audit history > User Stories",
        "specs/tech/audit-history.md § Audit history: design > Component Architecture",
        "scope: warn — undeclared_files: app/panel_test.py",
        "Concern: app/panel_test.py is flagged as undeclared",
        "| AC-2 | render returns the persistent issue count of the latest run | test |",
    ] {
        assert!(
            prompt_14.contains(part),
            "missing {part:?} in:\n{prompt_14}"
        );
    }
    assert_eq!(report("14")["verdict"], "approve");

    // Task 9: nothing was implemented, decided without a model.
    let nine = report("9");
    assert_eq!(nine["verdict"], "request_changes");
    assert_eq!(nine["model_verdict"], Value::Null);
    assert_eq!(nine["head_commit"], task_9_head.as_str());
    assert_eq!(nine["error"], Value::Null);
    assert!(
        nine["feedback"]
            .as_str()
            .unwrap()
            .starts_with("Nothing was implemented")
    );

    // What the task files say now.
    let after: Vec<Value> = ["2", "9", "14"]
        .iter()
        .map(|id| json_file(&repo, &task_path(id)))
        .collect();
    for (b, a) in before.iter().zip(&after) {
        assert_kept(b, a);
    }
    let (two, nine, fourteen) = (&after[0], &after[1], &after[2]);
    assert_eq!(two["review_verdict"], "approve");
    assert_eq!(two["reviewed_by"], "Sanjay K");
    assert_eq!(two["reviewed_diff"], report("2")["hashes"]["diff"]);
    assert_eq!(two["review_feedback"], Value::Null);
    assert_eq!(
        two["review_history"],
        json!([{"attempt": 1, "verdict": "approve", "reviewed_at": two["reviewed_at"],
                "head_commit": report("2")["head_commit"], "blocking": [], "feedback": null,
                "overall_score": 95}])
    );
    assert_eq!(nine["status"], "pending");
    assert_eq!(nine["revision_count"], 1);
    assert_eq!(
        nine["retry_count"], 1,
        "the orchestrator's count is not speed's"
    );
    assert!(
        nine["review_feedback"]
            .as_str()
            .unwrap()
            .starts_with("Nothing was implemented")
    );
    let entry = &nine["review_history"][0];
    assert_eq!(
        entry["attempt"], 1,
        "speed's first decision: the orchestrator's retry_count is its own"
    );
    assert_eq!(entry["verdict"], "request_changes");
    assert_eq!(entry["head_commit"], task_9_head.as_str());
    assert!(
        entry["blocking"][0]
            .as_str()
            .unwrap()
            .starts_with("Nothing was implemented")
    );
    assert_eq!(fourteen["reviewed_by"], "Sanjay K");

    // One event per review, as the orchestrator writes its own.
    let events = event_files(&repo);
    assert_eq!(events.len(), 3, "{events:?}");
    for ((name, event), (id, verdict)) in events.iter().zip([
        ("14", "approve"),
        ("2", "approve"),
        ("9", "request_changes"),
    ]) {
        let (stamp, rest) = name.split_once('_').unwrap();
        assert!(
            stamp.len() == 19 && stamp.ends_with('Z') && stamp.as_bytes()[8] == b'T',
            "{name}"
        );
        assert_eq!(rest, "sanjay-k_review-completed_audit-history.jsonl");
        assert_eq!(event["type"], "review.completed");
        assert_eq!(event["feature"], "audit-history");
        assert_eq!(event["actor"], "Sanjay K");
        assert_eq!(event["actor_email"], "sanjay@example.com");
        assert_eq!(event["data"], json!({"task_id": id, "verdict": verdict}));
        let keys: Vec<&String> = event.as_object().unwrap().keys().collect();
        assert_eq!(
            keys,
            [
                "timestamp",
                "type",
                "feature",
                "actor",
                "actor_email",
                "data"
            ]
        );
    }

    // The reports hold diffs: they ignore themselves in git.
    assert!(repo.path().join(".speed/reviews/.gitignore").is_file());
    let status = git_status(&repo);
    assert!(
        status.iter().all(|p| !p.starts_with(".speed/reviews")),
        "{status:?}"
    );

    // The same batch again: everything done is approved at its diff, task 9
    // is pending until the orchestrator runs it again.
    let again = ModelServer::start(|_| Reply::status(400, "nothing should be asked"));
    configure(&repo, &again);
    let run = speed(repo.path(), &["review"], &[]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    assert!(again.requests().is_empty());
    // Every task file read is accounted for: those sent back or not yet
    // run wait for the orchestrator, the others are covered.
    assert!(
        run.stderr.contains(
            "5 task files read, nothing needs a review; 3 approved and still covered by that approval; 2 pending (only done tasks are reviewed)."
        ),
        "{}",
        run.stderr
    );
}

#[test]
fn ids_like_10a_and_their_criteria_as_speed_reads_them() {
    let MultiPlayer { repo, .. } = multi_player();
    let run = speed(
        repo.path(),
        &["review", "--task-id", "10a", "--dry-run", "--json"],
        &[],
    );
    assert_eq!(run.code, 0, "{}", run.transcript());
    let out: Value = serde_json::from_str(&run.stdout).unwrap();
    let review = &out["reviews"][0];
    assert_eq!(review["task_id"], "10a");
    assert_eq!(review["branch"], TASK_10A);
    assert_eq!(
        review["criteria"],
        json!([
            {"id": "AC-1", "criterion": "Arrow Right moves to the next dot", "verify_by": "test"},
            {"id": "AC-2", "criterion": "Arrow Left wraps at the first dot", "verify_by": "test"}
        ])
    );
    // Task 9's branch is empty: a dry run says what the review would do.
    let run = speed(repo.path(), &["review", "--task-id", "9", "--dry-run"], &[]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    assert!(
        run.stderr.contains("nothing was implemented"),
        "{}",
        run.stderr
    );
    let run = speed(
        repo.path(),
        &["review", "--task-id", "14", "--dry-run", "--json"],
        &[],
    );
    let out: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(
        out["reviews"][0]["criteria"][1],
        json!({"id": "AC-2", "criterion": "render returns the persistent issue count of the latest run", "verify_by": "test"})
    );
}

/// The single-player scenario: payments and refunds each have a task 9.
fn single_player() -> TempRepo {
    let (tmp, root) = repo::empty();
    let mut b = RepoBuilder::init(&root).unwrap();
    let main_files = files_of(&fixture("single-player/main"));
    b.commit("main", None, &as_refs(&main_files), &[], "main")
        .unwrap();
    b.commit(
        "speed/payments/task-9-idempotent-authorisation",
        Some("main"),
        &[
            (
                "src/payments.py",
                "def authorise(store, key, amount):\n    found = store.by_key(key)\n    if found is not None:\n        return found\n    return store.create(amount, key)\n\n\ndef capture(payment, fee):\n    return {\"fee\": fee, \"net\": payment[\"amount\"] - fee}\n",
            ),
            (
                "tests/test_payments.py",
                "def test_repeat_returns_original(store):\n    assert authorise(store, \"k\", 5) == authorise(store, \"k\", 5)\n",
            ),
        ],
        &[],
        "task 9",
    )
    .unwrap();
    b.checkout("main").unwrap();
    let repo = repo::adopt(tmp, root);
    copy_state(&repo, "single-player");
    repo
}

#[test]
fn a_single_player_task_keeps_its_own_criterion_ids() {
    let repo = single_player();
    std::fs::remove_file(repo.path().join(".speed/active_feature")).unwrap();
    let run = speed(repo.path(), &["review", "--task-id", "9", "--dry-run"], &[]);
    assert_eq!(run.code, 1, "{}", run.transcript());
    for place in [
        ".speed/features/payments/tasks/9.json",
        ".speed/features/refunds/tasks/9.json",
    ] {
        assert!(run.stderr.contains(place), "{}", run.stderr);
    }

    // The orchestrator's active feature decides.
    repo.write(".speed/active_feature", "payments\n");
    let run = speed(
        repo.path(),
        &["review", "--task-id", "9", "--dry-run", "--json"],
        &[],
    );
    assert_eq!(run.code, 0, "{}", run.transcript());
    let out: Value = serde_json::from_str(&run.stdout).unwrap();
    let dry = &out["reviews"][0];
    assert_eq!(dry["feature"], "payments");
    assert_eq!(
        dry["criteria"],
        json!([
            {"id": "AC-03", "criterion": "Repeated authorisation returns the original payment", "verify_by": "test"},
            {"id": "AC-04", "criterion": "Capture posts fee and net", "verify_by": "test"}
        ])
    );
    let prompt = dry["prompt"].as_str().unwrap();
    assert!(
        prompt.contains("| AC-03 | Repeated authorisation returns the original payment | test |")
    );
    assert!(prompt.contains("Money: Amounts are integers in minor units, never floats."));

    // The verdict's criteria are matched by those ids.
    let server = ModelServer::start(|_| {
        Reply::openai(&approve(
            &[
                ("AC-03", "src/payments.py:4"),
                ("AC-04", "src/payments.py:9"),
            ],
            "Authorising a payment twice with the same idempotency key returns the original payment.",
            "Authorisation",
            "src/payments.py:4",
        ))
    });
    configure(&repo, &server);
    let run = speed(repo.path(), &["review", "--task-id", "9", "--json"], &[]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    let task = json_file(&repo, ".speed/features/payments/tasks/9.json");
    assert_eq!(task["review_verdict"], "approve");
    assert_eq!(
        task["reviewed_by"], "speed",
        "no review.actor, no git user, no login"
    );
    let refunds = repo.read(".speed/features/refunds/tasks/9.json");
    assert_eq!(
        refunds,
        std::fs::read_to_string(fixture(
            "single-player/state/.speed/features/refunds/tasks/9.json"
        ))
        .unwrap()
    );
    // Single-player: the orchestrator keeps no event log, neither does speed.
    assert!(!repo.path().join(".speed/shared").exists());

    // An answer that rates AC-1 instead of AC-03 left AC-03 unchecked.
    let server = ModelServer::start(|_| {
        Reply::openai(&approve(
            &[
                ("AC-1", "src/payments.py:4"),
                ("AC-04", "src/payments.py:9"),
            ],
            "Authorising a payment twice with the same idempotency key returns the original payment.",
            "Authorisation",
            "src/payments.py:4",
        ))
    });
    configure(&repo, &server);
    repo.config(&format!(
        "{}\n[review]\nactor = \"ci-bot\"\n",
        repo.read(".speed/config.toml")
    ));
    let run = speed(
        repo.path(),
        &["review", "--task-id", "9", "--json", "--force"],
        &[],
    );
    assert_eq!(run.code, 50, "{}", run.transcript());
    assert!(
        run.stdout.contains("AC-03 is not reported on"),
        "{}",
        run.stdout
    );
    let task = json_file(&repo, ".speed/features/payments/tasks/9.json");
    assert_eq!(task["reviewed_by"], "ci-bot");
    assert_eq!(task["review_history"].as_array().unwrap().len(), 2);
}

#[test]
fn spec_overrides_the_tasks_references() {
    let repo = single_player();
    let run = speed(
        repo.path(),
        &[
            "review",
            "--task-id",
            "9",
            "--dry-run",
            "--json",
            "--spec",
            "specs/product/refunds.md#Limits",
        ],
        &[],
    );
    assert_eq!(run.code, 0, "{}", run.transcript());
    let out: Value = serde_json::from_str(&run.stdout).unwrap();
    let prompt = out["reviews"][0]["prompt"].as_str().unwrap();
    assert!(prompt.contains("SOURCE OF TRUTH: specs/product/refunds.md § Refunds > Limits"));
    assert!(!prompt.contains("specs/product/payments.md"), "{prompt}");
}

const CART_SPEC: &str = "# Cart\n\n## Total\n\nThe total is the sum of the line prices.\n";
const CART_FIXED: &str = "def total(lines):\n    return sum(l.price * l.quantity for l in lines)\n";
const CART_SUM: &str = "def total(lines):\n    return sum(l.price for l in lines)\n";

/// A flat-layout repository: main, and `speed/task-<id>` branches, each
/// with the given version of `src/cart.py`, built on the branch before it
/// when `stacked`.
fn flat(branches: &[(&str, &str)], stacked: bool) -> TempRepo {
    let (tmp, root) = repo::empty();
    let mut b = RepoBuilder::init(&root).unwrap();
    b.commit(
        "main",
        None,
        &[
            ("specs/product/cart.md", CART_SPEC),
            ("src/cart.py", "def total(lines):\n    return 0\n"),
        ],
        &[],
        "main",
    )
    .unwrap();
    let mut parent = "main".to_string();
    for (id, cart) in branches {
        let branch = format!("speed/task-{id}");
        b.commit(
            &branch,
            Some(&parent),
            &[("src/cart.py", cart)],
            &[],
            "total",
        )
        .unwrap();
        if stacked {
            parent = branch;
        }
    }
    b.checkout("main").unwrap();
    repo::adopt(tmp, root)
}

fn task_json(id: Value, status: &str) -> String {
    serde_json::to_string_pretty(&json!({
        "id": id, "title": "Cart total", "status": status,
        "acceptance_criteria": "- total sums the line prices [verify: test]",
        "spec_references": [{"spec": "specs/product/cart.md", "section": "Total"}]
    }))
    .unwrap()
}

fn approve_cart() -> String {
    approve(
        &[("AC-1", "src/cart.py:2")],
        "The total is the sum of the line prices.",
        "Total",
        "src/cart.py:2",
    )
}

#[test]
fn a_review_is_never_written_to_a_task_other_than_the_file_it_read() {
    let repo = flat(&[("1", CART_SUM), ("2", CART_SUM)], false);
    repo.write(".speed/tasks/1.json", &task_json(json!(2), "done"));
    repo.write(".speed/tasks/2.json", &task_json(json!(2), "running"));
    let running = repo.read(".speed/tasks/2.json");
    let server = ModelServer::start(|_| Reply::openai(&approve_cart()));
    configure(&repo, &server);

    let run = speed(repo.path(), &["review", "--task-id", "1"], &[]);
    assert_eq!(run.code, 1, "{}", run.transcript());
    assert!(
        run.stderr
            .contains("tasks/1.json: its id \"2\" does not match its file name 1.json"),
        "{}",
        run.stderr
    );
    let run = speed(repo.path(), &["review"], &[]);
    assert_eq!(run.code, 1, "{}", run.transcript());
    assert!(run.stderr.contains("tasks/1.json"), "{}", run.stderr);
    assert!(
        server.requests().is_empty(),
        "refused before any model call"
    );
    assert_eq!(repo.read(".speed/tasks/2.json"), running);

    for id in [json!(1.0), json!("../../x"), json!({"id": 1})] {
        repo.write(".speed/tasks/1.json", &task_json(id.clone(), "done"));
        let run = speed(repo.path(), &["review", "--task-id", "1"], &[]);
        assert_eq!(run.code, 1, "{id}: {}", run.transcript());
        assert!(run.stderr.contains("tasks/1.json"), "{id}: {}", run.stderr);
    }
    assert!(server.requests().is_empty());
}

#[test]
fn a_re_review_sees_the_last_feedback_and_an_approval_clears_it() {
    let repo = flat(&[("5", CART_SUM), ("5-v2", CART_FIXED)], true);
    // Written by a Windows editor: a byte order mark first.
    repo.write(
        ".speed/tasks/5.json",
        &format!("\u{feff}{}", task_json(json!("5"), "done")),
    );
    let changes = json!({
        "dimensions": crate::support::verdicts::dimensions(),
        "verdict": "request_changes", "expectations": "Sum of line prices.",
        "criteria": [{"id": "AC-1", "status": "unmet", "evidence": "src/cart.py:2 ignores quantities"}],
        "spec_verification": [], "missing_from_spec": [], "out_of_scope": [],
        "issues": [{"severity": "major", "file": "src/cart.py", "line": 2,
                    "message": "quantities are ignored", "suggestion": "multiply by quantity"}],
        "strengths": []
    })
    .to_string();
    // The re-review rates the last review's blocking findings: its major
    // issue (PF-1) and its unmet criterion (PF-2).
    let mut again: Value = serde_json::from_str(&approve_cart()).unwrap();
    again["previous_findings"] = json!([
        {"id": "PF-1", "status": "resolved", "evidence": "src/cart.py:2 multiplies by quantity"},
        {"id": "PF-2", "status": "resolved", "evidence": "src/cart.py:2"}
    ]);
    let server = ModelServer::scripted(vec![
        Reply::openai(&changes),
        Reply::openai(&again.to_string()),
    ]);
    configure(&repo, &server);

    let run = speed(repo.path(), &["review", "--task-id", "5"], &[]);
    assert_eq!(run.code, 50, "{}", run.transcript());
    let text = repo.read(".speed/tasks/5.json");
    assert!(text.starts_with('\u{feff}'), "the byte order mark is kept");
    let task: Value = serde_json::from_str(text.trim_start_matches('\u{feff}')).unwrap();
    assert_eq!(task["status"], "pending");
    let feedback = task["review_feedback"].as_str().unwrap().to_string();
    assert!(feedback.contains("quantities are ignored"), "{feedback}");
    let first_entry = task["review_history"][0].clone();
    assert_eq!(
        first_entry["blocking"][0],
        "major src/cart.py:2: quantities are ignored"
    );

    // The developer works again (on a new branch here) and the orchestrator
    // marks the task done.
    let mut task = task;
    task["status"] = "done".into();
    task["branch"] = "speed/task-5-v2".into();
    repo.write(
        ".speed/tasks/5.json",
        &format!("\u{feff}{}", serde_json::to_string_pretty(&task).unwrap()),
    );
    let run = speed(repo.path(), &["review", "--task-id", "5"], &[]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    let prompt = prompt_of(&server.requests()[1]);
    for part in [
        "This is attempt 2 at this task (retry_count 0, revision_count 1).",
        "Feedback of the last review, which this attempt had to address:",
        "quantities are ignored",
        "Earlier review: attempt 1: request_changes at",
    ] {
        assert!(prompt.contains(part), "missing {part:?} in:\n{prompt}");
    }
    let text = repo.read(".speed/tasks/5.json");
    let task: Value = serde_json::from_str(text.trim_start_matches('\u{feff}')).unwrap();
    assert_eq!(task["review_verdict"], "approve");
    assert_eq!(
        task["review_feedback"],
        Value::Null,
        "stale feedback cleared"
    );
    let history = task["review_history"].as_array().unwrap();
    assert_eq!(history.len(), 2);
    assert_eq!(
        history[0], first_entry,
        "earlier entries are never rewritten"
    );
    assert_eq!(history[1]["attempt"], 2);
    assert_eq!(history[1]["feedback"], Value::Null);
}

#[test]
fn unreadable_task_files_are_an_error_and_no_task_files_are_nothing_to_review() {
    let repo = flat(&[], false);
    let run = speed(repo.path(), &["review"], &[]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    assert!(
        run.stderr.contains(
            "Nothing to review: no task files and no fixed defects found (looked in .speed/features/*/tasks, .speed/shared/features/*/tasks, .speed/tasks, .speed/defects, .speed/shared/defects)"
        ),
        "{}",
        run.stderr
    );

    repo.write(".speed/shared/features/f/tasks/1.json", "{\"id\": 1,}");
    repo.write(".speed/shared/features/f/tasks/2.json", "{\"id\": 3}");
    let run = speed(repo.path(), &["review"], &[]);
    assert_eq!(run.code, 1, "{}", run.transcript());
    assert!(run.stderr.contains("f/tasks/1.json:1:10"), "{}", run.stderr);
    assert!(
        run.stderr.contains("f/tasks/2.json: its id \"3\""),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("none could be read"), "{}", run.stderr);
    assert!(!run.stderr.contains("Nothing to review"), "{}", run.stderr);
    let run = speed(repo.path(), &["review", "--json"], &[]);
    assert_eq!(run.code, 1);
    let out: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(out["reviews"].as_array().unwrap().len(), 2);
}

#[test]
fn dependencies_are_described_and_only_an_unmerged_one_moves_the_base() {
    let repo = flat(&[("1", CART_SUM), ("2", CART_FIXED)], true);
    // Task 1's branch was merged into main (a fast-forward).
    let git = git2::Repository::open(repo.path()).unwrap();
    let one = git.refname_to_id("refs/heads/speed/task-1").unwrap();
    git.reference("refs/heads/main", one, true, "merge task 1")
        .unwrap();
    drop(git);
    repo.write(".speed/tasks/1.json", &task_json(json!("1"), "done"));
    let mut two: Value = serde_json::from_str(&task_json(json!("2"), "done")).unwrap();
    two["depends_on"] = json!(["1", "7"]);
    repo.write(".speed/tasks/2.json", &two.to_string());
    let run = speed(
        repo.path(),
        &["review", "--task-id", "2", "--dry-run", "--json"],
        &[],
    );
    assert_eq!(run.code, 0, "{}", run.transcript());
    let out: Value = serde_json::from_str(&run.stdout).unwrap();
    let prompt = out["reviews"][0]["prompt"].as_str().unwrap();
    assert!(
        prompt.contains("Depends on task 1 (branch speed/task-1): merged into main"),
        "{prompt}"
    );
    assert!(prompt.contains("Depends on task 7: no task file beside this one"));
    assert!(!prompt.contains("The diff starts at"), "{prompt}");
    assert_eq!(out["reviews"][0]["base_commit"], one.to_string());
}

/// What the orchestrator writes into `review_feedback` when it retries a
/// task: its own failure and a person's guidance.
const ORCHESTRATOR_FEEDBACK: &str = "--- Attempt 2 ---\nFailed with: Quality gates failed: gate `pytest` exited 4 (file not found: tests/panel)\nHuman guidance: The gate command path was wrong; the tests live in app/panel_test.py. Keep render's return shape.";

fn request_changes_task_14() -> String {
    json!({
        "dimensions": crate::support::verdicts::dimensions(),
        "verdict": "request_changes", "expectations": "One dot per run and the persistent count.",
        "criteria": [{"id": "AC-1", "status": "met", "evidence": "app/panel.py:2"},
                     {"id": "AC-2", "status": "unmet", "evidence": "app/panel.py:6 counts (rule, file) pairs, not issue keys"}],
        "spec_verification": [], "missing_from_spec": [], "out_of_scope": [],
        "issues": [{"severity": "major", "file": "app/panel.py", "line": 6,
                    "message": "the count does not use issue_key", "suggestion": "use app.keys.issue_key"}],
        "strengths": []
    })
    .to_string()
}

#[test]
fn feedback_speed_did_not_write_is_kept_when_a_review_replaces_it() {
    let MultiPlayer { repo, .. } = multi_player();
    let path = format!("{FEATURE_DIR}/tasks/14.json");
    let mut task = json_file(&repo, &path);
    task["review_feedback"] = ORCHESTRATOR_FEEDBACK.into();
    task["retry_count"] = 1.into();
    repo.write(&path, &serde_json::to_string_pretty(&task).unwrap());
    let before = json_file(&repo, &path);
    let server = ModelServer::scripted(vec![
        Reply::openai(&request_changes_task_14()),
        Reply::openai(&request_changes_task_14()),
        Reply::openai(&approve_task_14()),
    ]);
    configure(&repo, &server);

    // The review replaces the orchestrator's text and keeps it.
    let run = speed(repo.path(), &["review", "--task-id", "14"], &[]);
    assert_eq!(run.code, 50, "{}", run.transcript());
    assert!(
        prompt_of(&server.requests()[0])
            .contains("Human guidance: The gate command path was wrong"),
        "the reviewer saw it"
    );
    let after = json_file(&repo, &path);
    assert_kept(&before, &after);
    let speeds = after["review_feedback"].as_str().unwrap().to_string();
    assert!(
        speeds.contains("the count does not use issue_key"),
        "{speeds}"
    );
    let first = &after["review_history"][0];
    assert_eq!(first["previous_feedback"], ORCHESTRATOR_FEEDBACK);
    assert_eq!(first["feedback"], speeds.as_str());

    // speed's own feedback, replaced by speed, is in the history already.
    let mut task = after.clone();
    task["status"] = "done".into();
    repo.write(&path, &serde_json::to_string_pretty(&task).unwrap());
    let run = speed(repo.path(), &["review", "--task-id", "14", "--force"], &[]);
    assert_eq!(run.code, 50, "{}", run.transcript());
    let after = json_file(&repo, &path);
    assert_eq!(after["review_history"][0], *first, "never rewritten");
    assert!(
        after["review_history"][1]
            .get("previous_feedback")
            .is_none(),
        "{}",
        after["review_history"][1]
    );

    // The orchestrator retries with a person's guidance under speed's text;
    // a person accepts the work: the override keeps the text (in its
    // history entry and in what it overruled) and, as an approval does,
    // clears the feedback: no attempt follows an accepted task.
    let guided = format!(
        "{}\n\n--- Attempt 3 ---\nFailed with: Agent timed out after 600s\nHuman guidance: Only the count is left; do not touch the dots.",
        after["review_feedback"].as_str().unwrap()
    );
    let mut task = after.clone();
    task["status"] = "done".into();
    task["review_feedback"] = guided.clone().into();
    repo.write(&path, &serde_json::to_string_pretty(&task).unwrap());
    let run = speed(
        repo.path(),
        &[
            "override",
            "--task-id",
            "14",
            "--reason",
            "count checked by hand",
        ],
        &[],
    );
    assert_eq!(run.code, 0, "{}", run.transcript());
    let overridden = json_file(&repo, &path);
    assert_eq!(overridden["review_feedback"], Value::Null);
    assert_eq!(
        overridden["override"]["overruled"]["review_feedback"],
        guided.as_str()
    );
    assert_eq!(
        overridden["review_history"][2]["previous_feedback"],
        guided.as_str()
    );

    // A later approval of the same head: the override still stands there.
    let run = speed(repo.path(), &["review", "--task-id", "14", "--force"], &[]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    let after = json_file(&repo, &path);
    assert_eq!(after["review_verdict"], "approve");
    assert_eq!(after["review_feedback"], Value::Null);
    let history = after["review_history"].as_array().unwrap();
    // The review, the override (a decision too), and this review.
    assert_eq!(history.len(), 4);
    assert_eq!(history[2]["verdict"], "override");
    assert_eq!(history[2]["previous_feedback"], guided.as_str());
    assert!(history[3].get("previous_feedback").is_none());
    assert_eq!(history[3]["feedback"], Value::Null);
    let attempts: Vec<&Value> = history.iter().map(|e| &e["attempt"]).collect();
    assert_eq!(attempts, [&json!(1), &json!(2), &json!(3), &json!(4)]);
    assert_eq!(after["override"], overridden["override"]);
}
