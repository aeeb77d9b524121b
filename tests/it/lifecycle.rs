//! A task's whole life with the real binary, real `git` and the loopback
//! model: review → reject → the same head reviewed again → fix → approve →
//! merged three ways (a merge commit, a fast-forward, a squash) → branches
//! deleted → batch review, as CI runs it after every merge → the hooks,
//! from the main worktree and from linked ones. Every task file is checked
//! after every step: a merged task is done, keeps its verdict, count and
//! history, and nothing speed runs afterwards changes it.

use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use crate::support::git::{commit, git, ok, rev};
use crate::support::model_server::{ModelServer, Reply};
use crate::support::speed::{Run, speed};
use crate::support::verdicts::{dimensions, text};

const SPEC: &str = "# Shop\n\n## Cart\n\nThe cart holds at most 50 items.\n\n## Coupons\n\nA coupon takes at most 30 percent off an order.\n\n## Search\n\nSearch returns at most 20 results.\n";

/// Each task: its title (how the model server tells the prompts apart), the
/// file it changes, the spec line it implements.
const TASKS: [(&str, &str, &str, &str); 3] = [
    (
        "1",
        "Raise the cart cap",
        "src/cart.rs",
        "The cart holds at most 50 items.",
    ),
    (
        "2",
        "Cap coupon discounts",
        "src/coupon.rs",
        "A coupon takes at most 30 percent off an order.",
    ),
    (
        "3",
        "Cap search results",
        "src/search.rs",
        "Search returns at most 20 results.",
    ),
];

/// An answer approving a task whose file's line 2 holds the work.
fn approval(id: &str) -> String {
    text(&approving(id))
}

/// An approval after a rejection: the previous finding is resolved.
fn approval_after_fix(id: &str) -> String {
    let (_, _, file, _) = TASKS.iter().find(|t| t.0 == id).unwrap();
    let mut answer = approving(id);
    answer["previous_findings"] =
        json!([{"id": "PF-1", "status": "resolved", "evidence": format!("{file}:2")}]);
    text(&answer)
}

fn approving(id: &str) -> Value {
    let (_, _, file, quote) = TASKS.iter().find(|t| t.0 == id).unwrap();
    json!({
        "verdict": "approve",
        "dimensions": dimensions(),
        "expectations": format!("The change does what the spec says: {quote}"),
        "criteria": [],
        "spec_verification": [{"spec_quote": quote, "spec_section": "Shop", "satisfied": true,
                               "evidence": format!("{file}:2"), "notes": ""}],
        "missing_from_spec": [], "out_of_scope": [],
        "issues": [{"severity": "nit", "file": file, "line": 2,
                    "message": format!("name the constant of task {id}"), "suggestion": ""}],
        "strengths": []
    })
}

/// An answer requesting changes to task 2's coupon limit.
fn rejection() -> String {
    text(&json!({
        "verdict": "request_changes",
        "dimensions": dimensions(),
        "expectations": "A coupon takes at most 30 percent off.",
        "criteria": [],
        "spec_verification": [{"spec_quote": "A coupon takes at most 30 percent off an order.",
                               "spec_section": "Coupons", "satisfied": false,
                               "evidence": "src/coupon.rs:2", "notes": "it allows 40"}],
        "missing_from_spec": [], "out_of_scope": [],
        "issues": [{"severity": "major", "file": "src/coupon.rs", "line": 2,
                    "message": "the limit is 40 percent; the spec says 30",
                    "suggestion": "return 30"}],
        "strengths": []
    }))
}

/// The model: the next answer queued for the task whose title the prompt
/// names (reviews of a batch run at once, in any order).
struct Model {
    server: ModelServer,
    queued: Arc<Mutex<HashMap<String, VecDeque<String>>>>,
}

impl Model {
    fn start() -> Model {
        let queued: Arc<Mutex<HashMap<String, VecDeque<String>>>> = Arc::default();
        let answers = Arc::clone(&queued);
        let server = ModelServer::start(move |request| {
            let Some((id, ..)) = TASKS.iter().find(|t| request.body.contains(t.1)) else {
                return Reply::status(500, "the prompt names no task of this test");
            };
            match answers
                .lock()
                .unwrap()
                .get_mut(*id)
                .and_then(|q| q.pop_front())
            {
                Some(answer) => Reply::openai(&answer),
                None => Reply::status(500, &format!("no answer queued for task {id}")),
            }
        });
        Model { server, queued }
    }

    fn queue(&self, id: &str, answer: String) {
        self.queued
            .lock()
            .unwrap()
            .entry(id.to_string())
            .or_default()
            .push_back(answer);
    }

    fn asked(&self) -> usize {
        self.server.requests().len()
    }
}

/// Where the steps run: the main worktree, or (`linked`) linked worktrees
/// while the main worktree is parked on another branch.
struct Shop {
    _tmp: tempfile::TempDir,
    /// The main worktree: it holds `.speed/`, the task files untracked.
    root: PathBuf,
    /// Where the main branch is checked out: merges are made here.
    merging: PathBuf,
    /// The agent's checkout of task 2's branch: its fix is committed here,
    /// and (`linked`) its reviews run here.
    agent: PathBuf,
    linked: bool,
    remote: PathBuf,
}

impl Shop {
    fn new(model: &Model, linked: bool) -> Shop {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("shop");
        std::fs::create_dir_all(&root).unwrap();
        ok(&root, &["init", "-q", "-b", "main"]);
        ok(&root, &["config", "user.name", "Ann Example"]);
        ok(&root, &["config", "user.email", "ann@example.com"]);
        let config = format!(
            "[llm]\nprovider = \"openai\"\nbase_url = \"{}\"\nmodel = \"test-model\"\ntimeout_secs = 5\nmax_retries = 0\n\n[guardian]\nenabled = false\n",
            model.server.url()
        );
        commit(
            &root,
            &[
                ("specs/product/shop.md", SPEC),
                ("src/cart.rs", "pub fn cap() -> u32 {\n    10\n}\n"),
                ("src/coupon.rs", "pub fn max_off() -> u32 {\n    0\n}\n"),
                ("src/search.rs", "pub fn limit() -> usize {\n    100\n}\n"),
                (".speed/config.toml", &config),
            ],
            "the shop",
        );
        for (id, title, file, _) in TASKS {
            let branch = format!("speed/task-{id}");
            ok(&root, &["branch", &branch, "main"]);
            std::fs::create_dir_all(root.join(".speed/tasks")).unwrap();
            std::fs::write(
                root.join(format!(".speed/tasks/{id}.json")),
                serde_json::to_string_pretty(&json!({
                    "id": id.parse::<u32>().unwrap(), "title": title, "status": "done",
                    "branch": branch, "files_to_modify": [file],
                    "spec_references": [{"spec": "specs/product/shop.md"}],
                }))
                .unwrap(),
            )
            .unwrap();
        }
        let remote = tmp.path().join("remote.git");
        ok(&root, &["init", "-q", "--bare", remote.to_str().unwrap()]);
        ok(
            &root,
            &["remote", "add", "origin", remote.to_str().unwrap()],
        );
        ok(&root, &["push", "-q", "origin", "main"]);
        let install = speed(&root, &["hook", "install"], &[]);
        assert_eq!(install.code, 0, "{}", install.transcript());

        // Each task's work, committed in a linked worktree of its branch as
        // a coding agent does; task 2 starts wrong (40, not 30).
        let work = [
            ("1", "pub fn cap() -> u32 {\n    50\n}\n"),
            ("2", "pub fn max_off() -> u32 {\n    40\n}\n"),
            ("3", "pub fn limit() -> usize {\n    20\n}\n"),
        ];
        let mut agent = PathBuf::new();
        for (id, content) in work {
            let wt = tmp.path().join(format!("agent-{id}"));
            let branch = format!("speed/task-{id}");
            ok(
                &root,
                &["worktree", "add", "-q", wt.to_str().unwrap(), &branch],
            );
            let file = TASKS.iter().find(|t| t.0 == id).unwrap().2;
            commit(&wt, &[(file, content)], &format!("task {id}"));
            if id == "2" {
                agent = wt;
            } else {
                ok(&root, &["worktree", "remove", wt.to_str().unwrap()]);
            }
        }
        let merging = if linked {
            ok(&root, &["checkout", "-q", "-b", "parked"]);
            let wt = tmp.path().join("release");
            ok(
                &root,
                &["worktree", "add", "-q", wt.to_str().unwrap(), "main"],
            );
            wt
        } else {
            root.clone()
        };
        Shop {
            _tmp: tmp,
            root,
            merging,
            agent,
            linked,
            remote,
        }
    }

    /// Where a step runs speed: a review of task 2 in its agent's checkout
    /// (linked), everything else where main is checked out.
    fn review_dir(&self) -> &Path {
        if self.linked { &self.agent } else { &self.root }
    }

    fn speed(&self, dir: &Path, args: &[&str]) -> Run {
        speed(dir, args, &[])
    }

    fn task(&self, id: &str) -> Value {
        let text = std::fs::read_to_string(self.root.join(format!(".speed/tasks/{id}.json")))
            .unwrap_or_else(|e| panic!("task {id}: {e}"));
        serde_json::from_str(&text).unwrap()
    }

    fn tasks(&self) -> Vec<String> {
        ["1", "2", "3"]
            .iter()
            .map(|id| {
                std::fs::read_to_string(self.root.join(format!(".speed/tasks/{id}.json"))).unwrap()
            })
            .collect()
    }

    /// The orchestrator's part after a fix: the task is done again.
    fn mark_done(&self, id: &str) {
        let path = self.root.join(format!(".speed/tasks/{id}.json"));
        let mut task: Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        task["status"] = json!("done");
        std::fs::write(&path, serde_json::to_string_pretty(&task).unwrap()).unwrap();
    }

    /// No worktree but the main one ever gets a `.speed/` of speed's.
    fn assert_state_in_main_worktree_only(&self) {
        if self.linked {
            for wt in [&self.agent, &self.merging] {
                if wt.exists() {
                    assert!(
                        !wt.join(".speed/reviews").exists() && !wt.join(".speed/tasks").exists(),
                        "speed wrote state into the linked worktree {}",
                        wt.display()
                    );
                }
            }
        }
    }
}

/// What a task file says, in the fields a person checks.
fn state(task: &Value) -> (String, String, u64, usize) {
    (
        task["status"].as_str().unwrap_or("").to_string(),
        task["review_verdict"].as_str().unwrap_or("").to_string(),
        task["revision_count"].as_u64().unwrap_or(0),
        task["review_history"].as_array().map_or(0, Vec::len),
    )
}

fn st(status: &str, verdict: &str, count: u64, history: usize) -> (String, String, u64, usize) {
    (status.to_string(), verdict.to_string(), count, history)
}

fn lifecycle(linked: bool) {
    let model = Model::start();
    let shop = Shop::new(&model, linked);
    let here = shop.review_dir().to_path_buf();
    let merging = shop.merging.clone();

    // 1. Task 2 is reviewed and sent back.
    model.queue("2", rejection());
    let run = shop.speed(&here, &["review", "--task-id", "2"]);
    assert_eq!(run.code, 50, "{}", run.transcript());
    let t2 = shop.task("2");
    assert_eq!(state(&t2), st("pending", "request_changes", 1, 1));
    assert!(
        t2["review_feedback"]
            .as_str()
            .unwrap()
            .contains("the limit is 40 percent")
    );
    let rejected_head = t2["review_history"][0]["head_commit"].clone();
    assert_eq!(rejected_head, json!(rev(&shop.root, "speed/task-2")));
    for id in ["1", "3"] {
        assert_eq!(state(&shop.task(id)), st("done", "", 0, 0), "task {id}");
    }
    // What speed wrote for itself is out of git's way; the task files are
    // the team's, not speed's to hide.
    assert!(shop.root.join(".speed/fixes/.gitignore").is_file());
    let status = ok(
        &shop.root,
        &["status", "--porcelain", "--untracked-files=all"],
    );
    assert!(status.contains(".speed/tasks/2.json"), "{status}");
    for hidden in [".speed/fixes", ".speed/reviews", ".speed/cache"] {
        assert!(
            !status.contains(hidden),
            "{hidden} shows in git status:\n{status}"
        );
    }

    // 2. The same head, reviewed again: the verdict and feedback are
    // replaced, one more entry in the history, the same head in it.
    model.queue("2", rejection());
    let run = shop.speed(&here, &["review", "--task-id", "2"]);
    assert_eq!(run.code, 50, "{}", run.transcript());
    let t2 = shop.task("2");
    let (status, verdict, count, history) = state(&t2);
    assert_eq!(
        (status.as_str(), verdict.as_str(), history),
        ("pending", "request_changes", 2)
    );
    // A rejection of a head the last rejection already judged does not
    // count as a revision (the contract; counting is issue 39's).
    assert!(count == 1 || count == 2, "revision_count {count}");
    assert_eq!(t2["review_history"][1]["head_commit"], rejected_head);

    // 3. The fix, committed in the agent's worktree; the orchestrator marks
    // the task done; the review approves it.
    let fixed = commit(
        &shop.agent,
        &[("src/coupon.rs", "pub fn max_off() -> u32 {\n    30\n}\n")],
        "coupons: at most 30 percent",
    );
    shop.mark_done("2");
    model.queue("2", approval_after_fix("2"));
    let run = shop.speed(&here, &["review", "--task-id", "2"]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    assert!(!run.stdout.contains("back to pending"), "{}", run.stdout);
    let t2 = shop.task("2");
    let (status, verdict, _, history) = state(&t2);
    assert_eq!(
        (status.as_str(), verdict.as_str(), history),
        ("done", "approve", 3)
    );
    assert_eq!(t2["review_history"][2]["head_commit"], json!(fixed));
    assert!(t2["review_feedback"].is_null());
    let count_2 = t2["revision_count"].clone();

    // 4. A batch approves tasks 1 and 3, each in its own review.
    model.queue("1", approval("1"));
    model.queue("3", approval("3"));
    let run = shop.speed(&merging, &["review"]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    for id in ["1", "3"] {
        assert_eq!(
            state(&shop.task(id)),
            st("done", "approve", 0, 1),
            "task {id}"
        );
    }
    assert_eq!(model.asked(), 5);
    let approved = shop.tasks();
    shop.assert_state_in_main_worktree_only();

    // 5. Merged three ways: task 1 fast-forwarded (only the push's hook
    // sees it), task 2 with a merge commit (pre-merge-commit lets its
    // approved head in), task 3 squashed. No task file changes.
    ok(&merging, &["merge", "-q", "--ff-only", "speed/task-1"]);
    assert_eq!(rev(&merging, "main"), rev(&merging, "speed/task-1"));
    let merge = git(&merging, &["merge", "--no-ff", "--no-edit", "speed/task-2"]);
    assert_eq!(merge.code, 0, "{}", merge.transcript());
    assert!(merge.stderr.contains("task 2 approved"), "{}", merge.stderr);
    ok(&merging, &["merge", "-q", "--squash", "speed/task-3"]);
    let squash = git(
        &merging,
        &["commit", "-q", "-m", "Cap search results (squashed)"],
    );
    assert_eq!(squash.code, 0, "{}", squash.transcript());
    assert_eq!(shop.tasks(), approved);

    // 6. CI reviews the batch after the merges: all merged, nothing asked.
    for dir in [&merging, &here] {
        let run = shop.speed(dir, &["review"]);
        assert_eq!(run.code, 0, "{}", run.transcript());
        assert!(
            run.stderr.contains("3 merged into main"),
            "{}",
            run.transcript()
        );
    }
    let run = shop.speed(&here, &["review", "--task-id", "3", "--force", "--json"]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    let json: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(json["reviews"], json!([]));
    assert_eq!(json["skipped"][0]["merged"], true);
    assert!(
        json["skipped"][0]["reason"]
            .as_str()
            .unwrap()
            .contains("squash or rebase merge"),
        "{json}"
    );
    assert_eq!(model.asked(), 5);
    assert_eq!(shop.tasks(), approved);
    assert_eq!(shop.task("2")["revision_count"], count_2);

    // 7. The host deletes the merged branches; CI reviews again.
    ok(
        &shop.root,
        &[
            "worktree",
            "remove",
            "--force",
            shop.agent.to_str().unwrap(),
        ],
    );
    for id in ["1", "2", "3"] {
        ok(
            &shop.root,
            &["branch", "-q", "-D", &format!("speed/task-{id}")],
        );
    }
    let run = shop.speed(&merging, &["review"]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    assert!(
        run.stderr.contains("3 merged into main"),
        "{}",
        run.transcript()
    );
    assert!(run.stderr.contains("is deleted"), "{}", run.transcript());
    assert_eq!(shop.tasks(), approved);
    assert_eq!(model.asked(), 5);

    // 8. The push to the remote's main: every task head it brings in is
    // covered (the deleted branches' heads found through their reviews).
    let push = git(&merging, &["push", "origin", "main"]);
    assert_eq!(push.code, 0, "{}", push.transcript());
    assert!(push.stderr.contains("task 1 approved"), "{}", push.stderr);
    assert!(push.stderr.contains("task 2 approved"), "{}", push.stderr);
    assert_eq!(
        ok(
            &merging,
            &[
                "--git-dir",
                shop.remote.to_str().unwrap(),
                "rev-parse",
                "main"
            ]
        ),
        rev(&merging, "main")
    );

    // 9. The gate still holds where main is checked out: an unreviewed
    // task's merge is blocked there, whichever worktree it is.
    std::fs::write(
        shop.root.join(".speed/tasks/4.json"),
        r#"{"id": 4, "title": "Unreviewed", "status": "done", "branch": "speed/task-4"}"#,
    )
    .unwrap();
    ok(&merging, &["branch", "speed/task-4", "main"]);
    let wt = shop.root.parent().unwrap().join("agent-4");
    ok(
        &shop.root,
        &[
            "worktree",
            "add",
            "-q",
            wt.to_str().unwrap(),
            "speed/task-4",
        ],
    );
    commit(&wt, &[("src/extra.rs", "pub fn extra() {}\n")], "task 4");
    let blocked = git(&merging, &["merge", "--no-ff", "--no-edit", "speed/task-4"]);
    assert_ne!(blocked.code, 0, "{}", blocked.transcript());
    assert!(blocked.stderr.contains("task 4"), "{}", blocked.stderr);
    let _ = git(&merging, &["merge", "--abort"]);
    assert_eq!(shop.tasks(), approved);
    shop.assert_state_in_main_worktree_only();
}

#[test]
fn a_task_lives_from_review_to_merge_in_the_main_worktree() {
    lifecycle(false);
}

#[test]
fn a_task_lives_from_review_to_merge_in_linked_worktrees() {
    lifecycle(true);
}
