//! The record a feature leaves, driven as the orchestrator drives speed:
//! a feature of five tasks (one stacked on another, one never worked on),
//! `review.human = "require"`, agents' fix commits, a person's approvals
//! and rejections, a plan rejection, a defect fix, the fix queue, `show`,
//! `history` and `stats`. A script plays the orchestrator (it writes
//! `status`, its own `review_feedback`, `retry_count` and `gate_results`
//! between reviews) and the person (`speed approve`, `speed reject`); the
//! loopback server plays the model. After every step every task file, the
//! fix queue, `history --format json` and `stats --format json` are
//! checked against each other and against what the step must have done.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use crate::support::model_server::{ModelServer, Recorded, Reply};
use crate::support::repo::{self, RepoBuilder, TempRepo};
use crate::support::speed::{Run, speed};
use crate::support::verdicts::dimensions;

const FEATURE: &str = "shop";
const MAX_REVISIONS: u64 = 2;

const SPEC: &str = "# Shop

## Cart

The cart holds at most 10 items.
Adding an item to a full cart is refused with \"cart full\".

## Prices

Every price is shown with two decimals.

## Receipts

A receipt lists every item with its price.

## Totals

A receipt ends with the total of its prices.
";

const CART: &str = "MAX_ITEMS = 10


def add(cart, item):
    if len(cart) >= MAX_ITEMS:
        raise ValueError(\"cart full\")
    cart.append(item)
    return cart
";

const PRICES: &str = "def show(price):\n    return f\"{price:.1f}\"\n";
const PRICES_FIXED: &str = "def show(price):\n    return f\"{price:.2f}\"\n";

const RECEIPT: &str = "def receipt(items):
    lines = []
    for name, price in items:
        lines.append(f\"{name} {price}\")
    return lines
";
const RECEIPT_FIXED: &str = "from src.prices import show


def receipt(items):
    lines = []
    for name, price in items:
        lines.append(f\"{name} {show(price)}\")
    return lines
";

const TOTAL: &str = "def total(items):\n    return sum(price for _, price in items)\n";
const TOTAL_2: &str = "def total(items):\n    return round(sum(price for _, price in items), 2)\n";
const TOTAL_3: &str = "def total(items):\n    amount = sum(price for _, price in items)\n    return round(amount, 2)\n";

const TOTAL_4: &str = "def total(items):\n    return round(sum(p for _, p in items), 2)\n";

const CART_FIXED: &str = "MAX_ITEMS = 10


def add(cart, item):
    if len(cart) >= MAX_ITEMS:
        raise ValueError(\"cart full\")
    return cart + [item]
";

const ORCH_FEEDBACK: &str =
    "ORCH: integration smoke test failed (receipt.py: 3 != 3.00); see gate_results";

/// What each task is: its file, its spec section and a line of its spec.
struct Plan {
    id: &'static str,
    title: &'static str,
    file: &'static str,
    section: &'static str,
    quote: &'static str,
}

const TASKS: [Plan; 5] = [
    Plan {
        id: "1",
        title: "Cap the cart (tk-one)",
        file: "src/cart.py",
        section: "Cart",
        quote: "The cart holds at most 10 items.",
    },
    Plan {
        id: "2",
        title: "Show prices (tk-two)",
        file: "src/prices.py",
        section: "Prices",
        quote: "Every price is shown with two decimals.",
    },
    Plan {
        id: "3",
        title: "Print receipts (tk-three)",
        file: "src/receipt.py",
        section: "Receipts",
        quote: "A receipt lists every item with its price.",
    },
    Plan {
        id: "4",
        title: "Total the receipt (tk-four)",
        file: "src/total.py",
        section: "Totals",
        quote: "A receipt ends with the total of its prices.",
    },
    Plan {
        id: "5",
        title: "Discount codes (tk-five)",
        file: "src/discount.py",
        section: "Prices",
        quote: "Every price is shown with two decimals.",
    },
];

const DEFECT: &str = "cart-mutates";

fn plan(id: &str) -> &'static Plan {
    TASKS.iter().find(|p| p.id == id).unwrap()
}

/// The model: answers by the marker of the subject in the prompt, as set
/// by the step; the guardian always finds the change aligned.
struct Model {
    server: ModelServer,
    answers: Arc<Mutex<HashMap<String, Value>>>,
}

impl Model {
    fn start() -> Model {
        let answers: Arc<Mutex<HashMap<String, Value>>> = Arc::default();
        let shared = answers.clone();
        let server = ModelServer::start(move |req: &Recorded| {
            if req.body.contains("Product guardian check") {
                return Reply::openai(
                    &json!({"status": "aligned", "summary": "fits the shop's vision", "flags": []})
                        .to_string(),
                );
            }
            let answers = shared.lock().unwrap();
            let prompt = first_message(req);
            let key = answers
                .keys()
                .find(|k| prompt.contains(k.as_str()))
                .cloned()
                .unwrap_or_else(|| panic!("no answer set for this prompt:\n{prompt}"));
            let mut answer = answers[&key].clone();
            if let Some(evidence) = answer["previous_findings"]["all_resolved_at"].as_str() {
                // Every previous finding the prompt lists, resolved.
                let evidence = evidence.to_string();
                answer["previous_findings"] = listed_findings(&prompt)
                    .into_iter()
                    .map(|id| json!({"id": id, "status": "resolved", "evidence": evidence}))
                    .collect();
            }
            Reply::openai(&answer.to_string())
        });
        Model { server, answers }
    }

    /// The next answer for the subject `marker` names.
    fn answer(&self, marker: &str, answer: Value) {
        self.answers
            .lock()
            .unwrap()
            .insert(marker.to_string(), answer);
    }

    /// The prompt of the last review (not guardian) call.
    fn last_prompt(&self) -> String {
        let requests = self.server.requests();
        let last = requests
            .iter()
            .rev()
            .find(|r| !r.body.contains("Product guardian check"))
            .unwrap();
        first_message(last)
    }
}

/// The previous findings a prompt lists (`- PF-n …` lines), in order.
fn listed_findings(prompt: &str) -> Vec<String> {
    let mut ids: Vec<String> = Vec::new();
    for line in prompt.lines() {
        let Some(rest) = line.trim_start().strip_prefix("- PF-") else {
            continue;
        };
        let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
        let id = format!("PF-{digits}");
        if !digits.is_empty() && !ids.contains(&id) {
            ids.push(id);
        }
    }
    ids
}

fn first_message(req: &Recorded) -> String {
    req.json()["messages"][0]["content"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

fn marker(id: &str) -> String {
    let title = plan(id).title;
    title[title.find('(').unwrap() + 1..title.len() - 1].to_string()
}

/// An approval of task `id` citing `line` of its file, rating the
/// previous findings `pf` as resolved.
fn approval(id: &str, line: u32, pf: &[&str]) -> Value {
    let p = plan(id);
    let at = format!("{}:{line}", p.file);
    json!({
        "dimensions": dimensions(),
        "verdict": "approve",
        "expectations": format!("{}", p.quote),
        "criteria": [{"id": "AC-1", "status": "met", "evidence": at}],
        "spec_verification": [{"spec_quote": p.quote, "spec_section": format!("Shop > {}", p.section),
                               "satisfied": true, "evidence": at, "notes": ""}],
        "missing_from_spec": [],
        "out_of_scope": [],
        "issues": [],
        "strengths": ["small and to the point"],
        "previous_findings": pf.iter()
            .map(|id| json!({"id": id, "status": "resolved", "evidence": at}))
            .collect::<Vec<_>>(),
    })
}

/// A request for changes of task `id`: a major issue at `line`, the
/// criterion unmet, and the same spec line named as unsatisfied and as
/// missing (one finding, one fix).
fn rejection(id: &str, line: u32, issue: &str, pf: &[(&str, &str)]) -> Value {
    let p = plan(id);
    let at = format!("{}:{line}", p.file);
    json!({
        "dimensions": dimensions(),
        "verdict": "request_changes",
        "expectations": p.quote,
        "criteria": [{"id": "AC-1", "status": "unmet", "evidence": at}],
        "spec_verification": [{"spec_quote": p.quote, "spec_section": format!("Shop > {}", p.section),
                               "satisfied": false, "evidence": at, "notes": issue}],
        "missing_from_spec": [{"spec_quote": p.quote, "description": issue}],
        "out_of_scope": [],
        "issues": [{"severity": "major", "file": p.file, "line": line, "message": issue,
                    "suggestion": "follow the spec line"}],
        "strengths": [],
        "rejection": {"kind": "implementation", "reason": issue},
        "previous_findings": pf.iter()
            .map(|(id, status)| json!({"id": id, "status": status, "evidence": at}))
            .collect::<Vec<_>>(),
    })
}

/// A rejection of task `id`'s plan.
fn plan_rejection(id: &str, reason: &str) -> Value {
    let mut answer = rejection(id, 2, "Task plan is wrong", &[]);
    answer["rejection"] = json!({"kind": "plan", "reason": reason});
    answer["missing_from_spec"] = json!([]);
    answer["spec_verification"][0]["satisfied"] = json!(true);
    answer["criteria"][0]["status"] = json!("met");
    answer
}

/// The shop, its five task branches (task 4 stacked on task 1, task 5
/// with no commit of its own), the tasks as the orchestrator wrote them
/// (done, with their gate results) and a defect fixed on its branch.
fn shop() -> (TempRepo, RepoBuilder) {
    let (tmp, root) = repo::empty();
    let mut b = RepoBuilder::init(&root).unwrap();
    b.commit(
        "main",
        None,
        &[
            ("specs/product/shop.md", SPEC),
            (
                "specs/product/overview.md",
                "# Vision\n\nA small shop anyone can run.\n",
            ),
            ("src/__init__.py", ""),
        ],
        &[],
        "shop",
    )
    .unwrap();
    for (branch, from, file, text) in [
        ("speed/task-1", "main", "src/cart.py", CART),
        ("speed/task-2", "main", "src/prices.py", PRICES),
        ("speed/task-3", "main", "src/receipt.py", RECEIPT),
        ("speed/task-4", "speed/task-1", "src/total.py", TOTAL),
    ] {
        b.commit(branch, Some(from), &[(file, text)], &[], "work")
            .unwrap();
    }
    git(&root, &["branch", "speed/task-5", "main"]);
    b.commit(
        "speed/defect-cart-mutates",
        Some("speed/task-1"),
        &[("src/cart.py", CART_FIXED)],
        &[],
        "fix: resolve cart-mutates defect",
    )
    .unwrap();
    let repo = repo::adopt(tmp, root);
    for p in &TASKS {
        let mut task = json!({
            "id": p.id,
            "title": p.title,
            "description": format!("Implement \"{}\"", p.quote),
            "status": "done",
            "branch": format!("speed/task-{}", p.id),
            "acceptance_criteria": [{"criterion": p.quote, "verify_by": "review"}],
            "files_to_create": [p.file],
            "spec_references": [{"spec": "specs/product/shop.md", "section": p.section}],
            "retry_count": 0,
            "gate_results": {"checks": [{"name": "pytest", "status": "passed", "note": "4 passed"}]},
            "x-orchestrator": {"worker": format!("w{}", p.id)},
        });
        if p.id == "4" {
            task["depends_on"] = json!(["1"]);
        }
        repo.write(&task_path(p.id), &pretty(&task));
    }
    repo.write(
        &format!(".speed/defects/{DEFECT}/report.md"),
        "# Defect: adding to the cart changes the caller's list\n\nSeverity: P2\nRelated Feature: shop\n\n## Observed Behavior\n\nadd() appends to the list it is given.\n\n## Expected Behavior\n\nThe cart holds at most 10 items.\n\n## Reproduction Steps\n\n1. Call add() twice with one list.\n",
    );
    repo.write(
        &format!(".speed/defects/{DEFECT}/triage.json"),
        &pretty(&json!({"is_defect": true, "complexity": "simple",
            "root_cause_hypothesis": "add() appends in place", "affected_files": ["src/cart.py"],
            "related_spec": "specs/product/shop.md", "suggested_approach": "return a new list",
            "regression_risks": []})),
    );
    repo.write(
        &format!(".speed/defects/{DEFECT}/state.json"),
        &pretty(&json!({"status": "in_progress", "branch": "speed/defect-cart-mutates"})),
    );
    let builder = RepoBuilder::open(repo.path()).unwrap();
    (repo, builder)
}

fn git(root: &std::path::Path, args: &[&str]) -> String {
    let out = std::process::Command::new("git")
        .current_dir(root)
        .args(args)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {:?}", out);
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

fn pretty(v: &Value) -> String {
    serde_json::to_string_pretty(v).unwrap()
}

fn task_path(id: &str) -> String {
    format!(".speed/features/{FEATURE}/tasks/{id}.json")
}

fn task(repo: &TempRepo, id: &str) -> Value {
    serde_json::from_str(&repo.read(&task_path(id))).unwrap()
}

/// The orchestrator edits a task file between reviews.
fn orchestrate(repo: &TempRepo, id: &str, edit: impl FnOnce(&mut Value)) {
    let mut t = task(repo, id);
    edit(&mut t);
    repo.write(&task_path(id), &pretty(&t));
}

fn json_of(run: &Run) -> Value {
    serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{e}: {}", run.transcript()))
}

fn fixes(repo: &TempRepo) -> Value {
    let run = speed(
        repo.path(),
        &["fix", "list", "--all", "--format", "json"],
        &[],
    );
    assert_eq!(run.code, 0, "{}", run.transcript());
    json_of(&run)
}

fn history(repo: &TempRepo) -> Vec<Value> {
    let run = speed(repo.path(), &["history", "--format", "json"], &[]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    let mut lines = json_of(&run)["reviews"].as_array().unwrap().clone();
    // Oldest first, as the task files' histories read.
    lines.reverse();
    lines
}

fn stats(repo: &TempRepo) -> Value {
    let run = speed(repo.path(), &["stats", "--format", "json"], &[]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    json_of(&run)
}

/// What every step must leave true: each task file agrees with itself and
/// with the log, the fix queue is well formed, and the statistics say what
/// the task files say.
fn check_record(repo: &TempRepo, step: &str) {
    let log = history(repo);
    let mut approved_now = 0usize;
    let mut decided = 0usize;
    let mut failed = 0usize;
    for p in &TASKS {
        let t = task(repo, p.id);
        let at = format!("{step}: task {}", p.id);
        // Nothing the orchestrator wrote is lost.
        assert_eq!(t["x-orchestrator"]["worker"], format!("w{}", p.id), "{at}");
        let history = t["review_history"].as_array().cloned().unwrap_or_default();
        // Attempt numbers: unique, in order, whoever decided; a skip has none.
        let attempts: Vec<u64> = history
            .iter()
            .filter_map(|e| e.get("attempt").and_then(Value::as_u64))
            .collect();
        let expected: Vec<u64> = (1..=attempts.len() as u64).collect();
        assert_eq!(attempts, expected, "{at}: {}", pretty(&t));
        // Revisions: one per rejection of a head no rejection judged before.
        let mut revisions = 0;
        let mut last_rejected: Option<&str> = None;
        for e in &history {
            if matches!(
                e["verdict"].as_str(),
                Some("request_changes" | "human_reject")
            ) {
                let head = e["head_commit"].as_str();
                if head != last_rejected {
                    revisions += 1;
                }
                assert_eq!(e.get("same_head").is_some(), head == last_rejected, "{at}");
                last_rejected = head;
            }
        }
        assert_eq!(
            t["revision_count"].as_u64().unwrap_or(0),
            revisions,
            "{at}: {}",
            pretty(&t)
        );
        // The status and the verdict agree.
        match (t["review_verdict"].as_str(), t["status"].as_str()) {
            (None, Some("done")) => {}
            (Some("approve"), Some("done")) => {}
            (Some("request_changes"), Some("pending")) => {
                assert!(revisions <= MAX_REVISIONS, "{at}");
                assert!(t["error"].is_null(), "{at}: {}", t["error"]);
            }
            (Some("request_changes"), Some("failed")) => {
                assert!(revisions > MAX_REVISIONS, "{at}");
                let error = t["error"].as_str().unwrap();
                assert!(
                    error.starts_with(&format!(
                        "rejected {revisions} times, more than review.max_revisions (2) allows; the last"
                    )) && !error.trim_end().ends_with(':'),
                    "{at}: {error}"
                );
            }
            other => panic!("{at}: status and verdict disagree: {other:?}"),
        }
        // The guardian's word stands beside the review it judged only,
        // while no person has turned that review's approval down.
        if t.get("guardian_verdict").is_some_and(|g| !g.is_null()) {
            let last_review = history
                .iter()
                .rposition(|e| matches!(e["verdict"].as_str(), Some("approve" | "request_changes")))
                .unwrap();
            assert_eq!(
                history[last_review].get("guardian"),
                Some(&t["guardian_verdict"]),
                "{at}: a guardian verdict the last review did not have: {}",
                pretty(&t)
            );
            assert!(
                history[last_review..]
                    .iter()
                    .all(|e| !matches!(e["verdict"].as_str(), Some("human_reject" | "override"))),
                "{at}: the guardian's word outlived the approval it judged: {}",
                pretty(&t)
            );
        }
        // The log holds the same decisions, in the same order.
        let mine: Vec<&str> = log
            .iter()
            .filter(|l| l["task"] == p.id)
            .filter_map(|l| l["decision"].as_str())
            .filter(|d| *d != "skipped")
            .collect();
        let recorded: Vec<&str> = history
            .iter()
            .filter(|e| e.get("attempt").is_some())
            .map(|e| e["verdict"].as_str().unwrap())
            .collect();
        assert_eq!(mine, recorded, "{at}");
        // And the same numbers: each decision's line carries the attempt
        // its history entry has.
        let logged: Vec<(u64, &str)> = log
            .iter()
            .filter(|l| l["task"] == p.id)
            .filter_map(|l| Some((l.get("attempt")?.as_u64()?, l["decision"].as_str()?)))
            .collect();
        let numbered: Vec<(u64, &str)> = history
            .iter()
            .filter_map(|e| Some((e.get("attempt")?.as_u64()?, e["verdict"].as_str()?)))
            .collect();
        assert_eq!(logged, numbered, "{at}");
        if !history.is_empty() {
            decided += 1;
            let waiting = t["human_review"]["status"] == "pending";
            if t["review_verdict"] == "approve" && !waiting && t["override"].is_null() {
                approved_now += 1;
            }
        }
        // Failed at the limit as the last judgement left it (an override
        // accepts the work afterwards; the failure happened).
        let last_judgement = history.iter().rev().find(|e| {
            matches!(
                e["verdict"].as_str(),
                Some("approve" | "request_changes" | "human_approve" | "human_reject")
            )
        });
        if last_judgement.is_some_and(|e| e.get("error").is_some()) {
            failed += 1;
        }
    }
    // The defect, from the log.
    let defect: Vec<&Value> = log.iter().filter(|l| l["defect"] == DEFECT).collect();
    if let Some(last) = defect.last() {
        decided += 1;
        if last["decision"] == "approve" {
            approved_now += 1;
        }
        assert_eq!(last["feature"], FEATURE, "{step}: the defect's feature");
    }
    // One overrule rule named once per line.
    for line in &log {
        let rules: Vec<&Value> = line["overrules"].as_array().into_iter().flatten().collect();
        let mut unique = rules.clone();
        unique.dedup();
        assert_eq!(rules, unique, "{step}: {line}");
    }
    // The fix queue: one length of id, none a prefix of another; plan
    // rejections apart.
    let queue = fixes(repo);
    let all: Vec<&Value> = queue["fixes"]
        .as_array()
        .unwrap()
        .iter()
        .chain(queue["replans"].as_array().unwrap())
        .collect();
    for (i, a) in all.iter().enumerate() {
        let id = a["id"].as_str().unwrap();
        assert_eq!(id.len(), 10, "{step}: {a}");
        for b in &all[i + 1..] {
            let other = b["id"].as_str().unwrap();
            assert!(
                !other.starts_with(id) && !id.starts_with(other),
                "{step}: {id} {other}"
            );
        }
    }
    assert!(
        queue["fixes"]
            .as_array()
            .unwrap()
            .iter()
            .all(|f| f["source"] != "plan"),
        "{step}: {queue}"
    );
    assert!(
        queue["replans"]
            .as_array()
            .unwrap()
            .iter()
            .all(|f| f["source"] == "plan"),
        "{step}: {queue}"
    );
    // The statistics say what the files say.
    let s = stats(repo);
    assert_eq!(s["subjects"], decided, "{step}: {s}");
    let eventual = approved_now as f64 / decided as f64;
    let rate = s["approval_rate"]["eventual"].as_f64().unwrap_or(0.0);
    assert!(
        (rate - eventual).abs() < 1e-3,
        "{step}: eventual {rate} but {approved_now} of {decided} are approved now"
    );
    assert_eq!(s["failed_at_max_revisions"], failed, "{step}: {s}");
    assert_eq!(
        s["by_feature"][FEATURE]["subjects"], decided,
        "{step}: every subject is the shop's: {}",
        s["by_feature"]
    );
}

/// `speed <args>` must end with `code`.
fn run(repo: &TempRepo, args: &[&str], code: i32) -> Run {
    let run = speed(repo.path(), args, &[]);
    assert_eq!(run.code, code, "{args:?}: {}", run.transcript());
    run
}

fn open_fixes_of(repo: &TempRepo, id: &str) -> Vec<Value> {
    let queue = fixes(repo);
    queue["fixes"]
        .as_array()
        .unwrap()
        .iter()
        .chain(queue["replans"].as_array().unwrap())
        .filter(|f| {
            f["task"] == id && matches!(f["status"].as_str(), Some("pending" | "in_progress"))
        })
        .cloned()
        .collect()
}

fn head_of(repo: &TempRepo, branch: &str) -> String {
    git(repo.path(), &["rev-parse", branch])
}

#[test]
fn the_record_of_a_feature_agrees_with_itself_after_every_step() {
    let (repo, mut builder) = shop();
    let model = Model::start();
    repo.config(&format!(
        "[llm]\nprovider = \"openai\"\nbase_url = \"{}\"\nmodel = \"test-model\"\ntimeout_secs = 5\nmax_retries = 0\n[review]\nhuman = \"require\"\nmax_revisions = {MAX_REVISIONS}\n",
        model.server.url()
    ));

    // 1. The orchestrator has marked every task done: a batch review.
    model.answer(&marker("1"), approval("1", 5, &[]));
    model.answer(
        &marker("2"),
        rejection(
            "2",
            2,
            "Prices show one decimal, the spec asks for two",
            &[],
        ),
    );
    model.answer(&marker("3"), approval("3", 4, &[]));
    model.answer(
        &marker("4"),
        plan_rejection(
            "4",
            "The total belongs to the receipt task: AC-1 cannot be met alone",
        ),
    );
    let batch = run(&repo, &["review"], 50);
    let summary = &batch.stdout[batch.stdout.find("Summary").unwrap()..];
    assert!(summary.contains("the plan is wrong: re-plan"), "{summary}");
    assert!(
        summary.contains("speed found nothing implemented"),
        "{summary}"
    );
    assert!(
        batch
            .stdout
            .contains("✗ Task 5: speed found nothing implemented"),
        "{}",
        batch.stdout
    );
    assert!(
        batch.stdout.contains(
            "→ shop/4: the plan is wrong: re-plan; the task is back to pending (revision 1)"
        ),
        "{}",
        batch.stdout
    );
    for id in ["1", "3"] {
        let t = task(&repo, id);
        assert_eq!(t["human_review"]["status"], "pending", "task {id}");
        assert_eq!(t["guardian_verdict"], "aligned");
        assert_eq!(t["review_history"][0]["attempt"], 1);
    }
    let two = task(&repo, "2");
    assert_eq!(
        (two["status"].as_str(), two["revision_count"].as_u64()),
        (Some("pending"), Some(1))
    );
    // The same spec line named unsatisfied and missing is one fix.
    let twos = open_fixes_of(&repo, "2");
    let spec_fixes = twos
        .iter()
        .filter(|f| {
            f["finding"]["kind"]
                .as_str()
                .unwrap()
                .contains("requirement")
                || f["finding"]["kind"].as_str().unwrap().contains("missing")
        })
        .count();
    assert_eq!(spec_fixes, 1, "{twos:#?}");
    let four = task(&repo, "4");
    assert_eq!(
        four["replan"]["reason"],
        "The total belongs to the receipt task: AC-1 cannot be met alone"
    );
    assert_eq!(four["review_history"][0]["rejection"], "plan");
    let fours = open_fixes_of(&repo, "4");
    assert_eq!(
        fours.len(),
        1,
        "a plan rejection is one fix, the planner's: {fours:#?}"
    );
    assert_eq!(fours[0]["source"], "plan");
    let five = task(&repo, "5");
    assert_eq!(five["review_history"][0]["attempt"], 1);
    let fives = open_fixes_of(&repo, "5");
    assert_eq!(
        fives
            .iter()
            .map(|f| f["description"].as_str().unwrap())
            .collect::<Vec<_>>(),
        [
            "Implement the task: speed found nothing implemented (the branch does not differ from its base)"
        ],
        "speed's word, not a reviewer's: {fives:#?}"
    );
    let log = history(&repo);
    assert_eq!(
        log.iter().find(|l| l["task"] == "4").unwrap()["rejection"],
        "plan"
    );
    assert_eq!(
        log.iter().find(|l| l["task"] == "5").unwrap()["rejection"],
        "nothing_implemented"
    );
    let human = run(&repo, &["history", "--task-id", "4"], 0);
    assert!(
        human
            .stdout
            .contains("request_changes (the plan is wrong: re-plan)"),
        "{}",
        human.stdout
    );
    let show = run(&repo, &["show", "--task-id", "4"], 0);
    assert!(
        show.stdout.contains("✗ Task 4: the plan is wrong: re-plan"),
        "{}",
        show.stdout
    );
    let markdown = run(
        &repo,
        &["show", "--task-id", "4", "--format", "markdown"],
        0,
    );
    // (Markdown escapes its punctuation: the words are what matter.)
    assert!(
        markdown.stdout.contains("**Decision:** the plan is wrong"),
        "{}",
        markdown.stdout
    );
    let summary_md = repo.read(four["review_summary"].as_str().unwrap());
    assert!(
        summary_md.contains("the plan is wrong: re-plan"),
        "{summary_md}"
    );
    let fixes_human = run(&repo, &["fix", "list"], 0);
    assert!(
        fixes_human
            .stdout
            .contains("For the planner: the plan is wrong, re-plan (not a coding fix)"),
        "{}",
        fixes_human.stdout
    );
    let refused = run(
        &repo,
        &["fix", "prompt", fours[0]["id"].as_str().unwrap()],
        1,
    );
    assert!(
        refused.stderr.contains("the planner re-plans"),
        "{}",
        refused.stderr
    );
    check_record(&repo, "1. batch");

    // 2. The person confirms task 1. The orchestrator's integration test
    // fails on task 3 and it says so in the feedback; the person rejects
    // task 3's approval.
    run(&repo, &["approve", "--task-id", "1", "--by", "Ana"], 0);
    let one = task(&repo, "1");
    assert_eq!(one["review_history"][1]["verdict"], "human_approve");
    assert_eq!(one["review_history"][1]["attempt"], 2, "its own number");
    orchestrate(&repo, "3", |t| {
        t["review_feedback"] = json!(ORCH_FEEDBACK);
        t["gate_results"]["checks"][0] =
            json!({"name": "integration", "status": "failed", "note": "3 != 3.00"});
    });
    let reason = "Receipt prices are not shown with two decimals: use show()";
    let rejected = run(
        &repo,
        &[
            "reject",
            "--task-id",
            "3",
            "--by",
            "Ana",
            "--reason",
            reason,
        ],
        0,
    );
    assert!(
        rejected
            .stderr
            .contains("task 3 rejected by Ana: back to pending"),
        "{}",
        rejected.stderr
    );
    let three = task(&repo, "3");
    let three_head = head_of(&repo, "speed/task-3");
    assert_eq!(three["status"], "pending");
    assert_eq!(three["revision_count"], 1);
    assert_eq!(three["review_feedback"], reason);
    assert_eq!(
        three["guardian_verdict"],
        Value::Null,
        "it judged the approval Ana rejected"
    );
    let entry = &three["review_history"][1];
    assert_eq!(
        (
            entry["verdict"].as_str(),
            entry["attempt"].as_u64(),
            entry["previous_feedback"].as_str()
        ),
        (Some("human_reject"), Some(2), Some(ORCH_FEEDBACK))
    );
    let threes = open_fixes_of(&repo, "3");
    assert_eq!(threes.len(), 1, "{threes:#?}");
    assert_eq!(
        (
            threes[0]["source"].as_str(),
            threes[0]["finding"]["message"].as_str()
        ),
        (Some("person"), Some(reason))
    );
    check_record(&repo, "2. a person's word");

    // 3. The agent fixes task 2 (the orchestrator's second attempt): the
    // review approves it, and speed's count is its own.
    builder
        .commit(
            "speed/task-2",
            None,
            &[("src/prices.py", PRICES_FIXED)],
            &[],
            "fix: two decimals",
        )
        .unwrap();
    orchestrate(&repo, "2", |t| {
        t["status"] = json!("done");
        t["retry_count"] = json!(1);
        t["gate_results"]["checks"][0]["note"] = json!("5 passed");
    });
    model.answer(&marker("2"), approval("2", 2, &["PF-1", "PF-2", "PF-3"]));
    let approved = run(&repo, &["review", "--task-id", "2"], 0);
    assert!(
        approved.stdout.contains("→ shop/2: the model's approval waits for a person; its status is now done (was pending)")
            || approved.stdout.contains("→ shop/2: the model's approval waits for a person; its status stays done"),
        "{}",
        approved.stdout
    );
    assert!(
        !approved.stdout.contains("back to pending"),
        "{}",
        approved.stdout
    );
    let two = task(&repo, "2");
    assert_eq!(
        two["review_history"][1]["attempt"], 2,
        "retry_count is not added in"
    );
    assert_eq!(two["revision_count"], 1);
    assert_eq!(two["human_review"]["status"], "pending");
    assert!(
        open_fixes_of(&repo, "2").is_empty(),
        "resolved by the approval"
    );
    check_record(&repo, "3. task 2 fixed");

    // 4. The orchestrator sends task 3 back to review unchanged: the head
    // Ana rejected. Her reason is a previous finding the model must
    // answer; claiming it resolved with nothing changed is overruled, and
    // the count stays (the same head).
    orchestrate(&repo, "3", |t| t["status"] = json!("done"));
    model.answer(&marker("3"), approval("3", 4, &["PF-1"]));
    run(&repo, &["review", "--task-id", "3"], 50);
    let prompt = model.last_prompt();
    assert!(
        prompt.contains(&format!(
            "PF-1 (Ana's rejection): {reason} (nothing changed since this commit was rejected)"
        )),
        "{prompt}"
    );
    let three = task(&repo, "3");
    assert_eq!(three["status"], "pending");
    assert_eq!(
        three["revision_count"], 1,
        "the head the last rejection judged"
    );
    let last = three["review_history"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(
        (last["attempt"].as_u64(), last["same_head"].as_bool()),
        (Some(3), Some(true))
    );
    assert_eq!(last["head_commit"], three_head.as_str());
    let report = json_of(&run(
        &repo,
        &["show", "--task-id", "3", "--format", "json"],
        0,
    ));
    assert_eq!(
        report["overrules"][0]["rule"],
        "previous_finding_unresolved"
    );
    assert_eq!(report["previous_findings"][0]["source"], "person");
    assert_eq!(open_fixes_of(&repo, "3").len(), 1, "still Ana's fix");
    check_record(&repo, "4. the head a person rejected");

    // 5. The agent fixes task 3; the review sees Ana's reason against the
    // change and approves; Ana confirms.
    builder
        .commit(
            "speed/task-3",
            None,
            &[("src/receipt.py", RECEIPT_FIXED)],
            &[],
            "fix: show()",
        )
        .unwrap();
    orchestrate(&repo, "3", |t| {
        t["status"] = json!("done");
        t["retry_count"] = json!(1);
    });
    model.answer(&marker("3"), approval("3", 7, &["PF-1"]));
    run(&repo, &["review", "--task-id", "3"], 0);
    let prompt = model.last_prompt();
    assert!(
        prompt.contains(&format!("PF-1 (Ana's rejection): {reason}")),
        "{prompt}"
    );
    run(&repo, &["approve", "--task-id", "3", "--by", "Ana"], 0);
    let three = task(&repo, "3");
    assert_eq!(three["status"], "done");
    assert_eq!(three["revision_count"], 1, "approvals count no revision");
    assert!(
        open_fixes_of(&repo, "3").is_empty(),
        "Ana's reason resolved"
    );
    check_record(&repo, "5. task 3 fixed");

    // 6. Task 4 is re-planned and reworked twice; the second rework is
    // approved by the model and rejected by a person: past
    // review.max_revisions, it fails, with her reason.
    builder
        .commit(
            "speed/task-4",
            None,
            &[("src/total.py", TOTAL_2)],
            &[],
            "rework",
        )
        .unwrap();
    orchestrate(&repo, "4", |t| t["status"] = json!("done"));
    model.answer(
        &marker("4"),
        rejection(
            "4",
            2,
            "The total is not printed on the receipt",
            &[("PF-1", "unresolved")],
        ),
    );
    run(&repo, &["review", "--task-id", "4"], 50);
    let four = task(&repo, "4");
    assert_eq!(four["revision_count"], 2);
    assert_eq!(
        four["replan"]["reason"], "The total belongs to the receipt task: AC-1 cannot be met alone",
        "the plan rejection stands, marked with its head, until an approval"
    );
    builder
        .commit(
            "speed/task-4",
            None,
            &[("src/total.py", TOTAL_3)],
            &[],
            "rework 2",
        )
        .unwrap();
    orchestrate(&repo, "4", |t| t["status"] = json!("done"));
    let pf: Vec<String> = (1..=4).map(|n| format!("PF-{n}")).collect();
    let pf: Vec<&str> = pf.iter().map(String::as_str).collect();
    model.answer(&marker("4"), approval("4", 3, &pf));
    let approved = run(&repo, &["review", "--task-id", "4"], 0);
    assert!(
        approved
            .stdout
            .contains("→ shop/4: the model's approval waits for a person; its status stays done"),
        "{}",
        approved.stdout
    );
    let four = task(&repo, "4");
    assert_eq!(four["replan"], Value::Null);
    assert_eq!(four["guardian_verdict"], "aligned");
    let rejected = run(
        &repo,
        &[
            "reject",
            "--task-id",
            "4",
            "--by",
            "Bo",
            "--reason",
            "Round at the end only, not per line",
        ],
        0,
    );
    assert!(
        rejected
            .stderr
            .contains("the task failed (rejected 3 times"),
        "{}",
        rejected.stderr
    );
    let four = task(&repo, "4");
    assert_eq!(four["status"], "failed");
    assert_eq!(four["revision_count"], 3);
    assert_eq!(
        four["error"],
        "rejected 3 times, more than review.max_revisions (2) allows; the last, Bo's rejection (speed reject): Round at the end only, not per line"
    );
    assert_eq!(four["guardian_verdict"], Value::Null);
    check_record(&repo, "6. past max_revisions by a person");

    // 7. The defect's fix, reviewed and approved: counted under the shop.
    model.answer(
        "adding to the cart changes",
        {
            let mut a = approval("1", 7, &[]);
            a["criteria"] = json!((1..=5).map(|n| json!({"id": format!("DF-{n}"), "status": "met", "evidence": "src/cart.py:7"})).collect::<Vec<_>>());
            a["spec_verification"][0]["evidence"] = json!("src/cart.py:7");
            a["defect_scope_check"] = json!({"scope_ok": true, "large_diff": false});
            a["scope_violations"] = json!([]);
            a
        },
    );
    repo.write(
        &format!(".speed/defects/{DEFECT}/state.json"),
        &pretty(&json!({"status": "fixed", "branch": "speed/defect-cart-mutates"})),
    );
    run(&repo, &["review", "--defect", DEFECT], 0);
    check_record(&repo, "7. the defect");

    // 8. An override of the failed task: a decision with its own number;
    // speed's failure no longer stands on a task accepted as done.
    run(
        &repo,
        &[
            "override",
            "--task-id",
            "4",
            "--reason",
            "rounding agreed with Bo",
        ],
        0,
    );
    let four = task(&repo, "4");
    assert_eq!(
        (four["status"].as_str(), four["error"].as_str()),
        (Some("done"), None)
    );
    let last = four["review_history"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(
        (last["verdict"].as_str(), last["attempt"].as_u64()),
        (Some("override"), Some(5))
    );
    assert_eq!(
        four["review_feedback"],
        Value::Null,
        "the overruled rejection's feedback is in its entry and the override"
    );
    assert_eq!(
        four["override"]["overruled"]["review_feedback"],
        "Round at the end only, not per line"
    );
    let human = run(&repo, &["history", "--task-id", "4"], 0);
    let newest = human.stdout.lines().next().unwrap_or_default();
    assert!(
        newest.contains("#5") && newest.contains("override"),
        "the override's number is its entry's: {}",
        human.stdout
    );
    // The fixes its reviews asked for are the person's decision now: none
    // is left open for an agent, each says why.
    let queue = fixes(&repo);
    let fours: Vec<&Value> = queue["fixes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["task"] == "4")
        .collect();
    assert!(!fours.is_empty(), "{queue}");
    for fix in &fours {
        assert!(
            matches!(
                fix["status"].as_str(),
                Some("skipped" | "resolved" | "completed")
            ),
            "{fix}"
        );
    }
    assert!(
        fours.iter().any(|f| f["status"] == "skipped"
            && f["reason"].as_str().is_some_and(
                |r| r.contains("speed override") && r.ends_with("rounding agreed with Bo")
            )),
        "{queue}"
    );
    check_record(&repo, "8. an override");
    let s = stats(&repo);
    assert_eq!(
        s["failed_at_max_revisions"], 1,
        "it failed, then a person accepted it: {s}"
    );

    // 9. The agent commits on task 4 after the override (the orchestrator
    // notes why in the feedback); its review judges a head no override
    // was given at: the override no longer stands in the task's fields
    // (its entry keeps it), and the orchestrator's note is kept.
    builder
        .commit(
            "speed/task-4",
            None,
            &[("src/total.py", TOTAL_4)],
            &[],
            "rework 3",
        )
        .unwrap();
    orchestrate(&repo, "4", |t| {
        t["review_feedback"] = json!("ORCH: rounding moved to the receipt");
    });
    let mut answer = approval("4", 2, &[]);
    answer["previous_findings"] = json!({"all_resolved_at": "src/total.py:2"});
    model.answer(&marker("4"), answer);
    run(&repo, &["review", "--task-id", "4"], 0);
    let four = task(&repo, "4");
    assert_eq!(four["override"], Value::Null, "{}", pretty(&four));
    assert_eq!(four["human_review"]["status"], "pending");
    let last = four["review_history"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(
        (last["attempt"].as_u64(), last["previous_feedback"].as_str()),
        (Some(6), Some("ORCH: rounding moved to the receipt"))
    );
    let overridden = &four["review_history"][4];
    assert_eq!(
        (
            overridden["verdict"].as_str(),
            overridden["reason"].as_str()
        ),
        (Some("override"), Some("rounding agreed with Bo"))
    );
    check_record(&repo, "9. a commit after the override");
}
