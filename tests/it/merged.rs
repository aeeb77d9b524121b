//! What makes a task merged, and what does not: the signs of work a head in
//! main's history needs, a branch gone without a review, a squash-merged
//! branch merged again through the gate. `lifecycle.rs` walks the usual
//! path; these are the edges. Every review here is offline or refused
//! before a model, so no model server is needed.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::support::git::{commit, git, ok, rev};
use crate::support::speed::{Run, speed};

/// A repository with a spec and one file on main, speed's hooks installed,
/// and the given task files (id → extra fields).
struct Repo {
    _tmp: tempfile::TempDir,
    root: PathBuf,
}

impl Repo {
    fn new() -> Repo {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("repo");
        std::fs::create_dir_all(&root).unwrap();
        ok(&root, &["init", "-q", "-b", "main"]);
        ok(&root, &["config", "user.name", "Ann Example"]);
        ok(&root, &["config", "user.email", "ann@example.com"]);
        commit(
            &root,
            &[
                (
                    "specs/product/shop.md",
                    "# Shop\n\n## Cart\n\nThe cart holds at most 50 items.\n",
                ),
                ("src/cart.rs", "pub fn cap() -> u32 {\n    10\n}\n"),
            ],
            "the shop",
        );
        Repo { _tmp: tmp, root }
    }

    fn task(&self, id: &str, fields: Value) {
        let mut task = json!({"id": id, "title": format!("Task {id}"), "status": "done",
                              "spec_references": [{"spec": "specs/product/shop.md"}]});
        for (k, v) in fields.as_object().unwrap() {
            task[k] = v.clone();
        }
        let path = self.root.join(format!(".speed/tasks/{id}.json"));
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, serde_json::to_string_pretty(&task).unwrap()).unwrap();
    }

    fn read(&self, id: &str) -> String {
        std::fs::read_to_string(self.root.join(format!(".speed/tasks/{id}.json"))).unwrap()
    }

    /// A branch from main with one commit of `file`, made in a linked
    /// worktree; main's checkout is left alone.
    fn branch(&self, name: &str, file: &str, content: &str) -> String {
        ok(&self.root, &["branch", name, "main"]);
        let wt = self.root.parent().unwrap().join(name.replace('/', "-"));
        ok(
            &self.root,
            &["worktree", "add", "-q", wt.to_str().unwrap(), name],
        );
        let head = commit(&wt, &[(file, content)], &format!("work on {name}"));
        ok(
            &self.root,
            &["worktree", "remove", "--force", wt.to_str().unwrap()],
        );
        head
    }

    fn speed(&self, args: &[&str]) -> Run {
        speed(&self.root, args, &[])
    }

    fn path(&self) -> &Path {
        &self.root
    }
}

#[test]
fn a_head_in_mains_history_is_merged_only_with_a_sign_of_work() {
    let repo = Repo::new();
    // Task 1: a branch made from main that never had work.
    ok(repo.path(), &["branch", "speed/task-1", "main"]);
    repo.task("1", json!({"branch": "speed/task-1"}));
    // Task 2: work fast-forwarded into main, never reviewed, no base named:
    // nothing tells it from task 1, so it is reviewed (and found empty).
    let base = rev(repo.path(), "main");
    repo.branch("speed/task-2", "src/two.rs", "pub fn two() {}\n");
    ok(repo.path(), &["merge", "-q", "--ff-only", "speed/task-2"]);
    repo.task("2", json!({"branch": "speed/task-2"}));
    // Task 3: the same, but the orchestrator named where its work started.
    repo.branch("speed/task-3", "src/three.rs", "pub fn three() {}\n");
    ok(repo.path(), &["merge", "-q", "--ff-only", "speed/task-3"]);
    repo.task(
        "3",
        json!({"branch": "speed/task-3", "execution_base_commit": rev(repo.path(), "main~1")}),
    );
    // Task 4: merged with a merge commit, never reviewed.
    repo.branch("speed/task-4", "src/four.rs", "pub fn four() {}\n");
    ok(
        repo.path(),
        &["merge", "-q", "--no-ff", "--no-edit", "speed/task-4"],
    );
    repo.task("4", json!({"branch": "speed/task-4", "base_commit": base}));

    let run = repo.speed(&["review", "--offline", "--json"]);
    assert_eq!(run.code, 50, "{}", run.transcript());
    let out: Value = serde_json::from_str(&run.stdout).unwrap();
    let mut reviewed: Vec<&str> = out["reviews"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["task_id"].as_str().unwrap())
        .collect();
    reviewed.sort_unstable();
    assert_eq!(reviewed, ["1", "2"], "{}", run.stdout);
    for r in out["reviews"].as_array().unwrap() {
        assert_eq!(r["checks"][0]["check"], "empty_diff", "{r}");
    }
    let merged: Vec<(&str, &str)> = out["skipped"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["merged"] == true)
        .map(|s| {
            (
                s["task_id"].as_str().unwrap(),
                s["reason"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(merged.len(), 2, "{merged:?}");
    assert!(
        merged[0].1.contains("the task's work starts at"),
        "{merged:?}"
    );
    assert!(merged[1].1.contains("merge commit"), "{merged:?}");
    assert_eq!(json!(["3", "4"]), json!([merged[0].0, merged[1].0]));
}

#[test]
fn a_branch_gone_without_a_review_is_listed_and_a_named_one_is_an_error() {
    let repo = Repo::new();
    repo.task("1", json!({"branch": "speed/task-1"}));
    // Task 2 was reviewed at a head that never reached main, then its
    // branch was deleted.
    let head = repo.branch("speed/task-2", "src/two.rs", "pub fn two() {}\n");
    repo.task(
        "2",
        json!({"branch": "speed/task-2", "review_verdict": "request_changes",
               "review_history": [{"attempt": 1, "verdict": "request_changes", "head_commit": head,
                                   "feedback": "not yet"}]}),
    );
    ok(repo.path(), &["branch", "-q", "-D", "speed/task-2"]);
    let before = (repo.read("1"), repo.read("2"));

    let run = repo.speed(&["review", "--offline"]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    assert!(
        run.stderr.contains("2 whose branches are gone"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr
            .contains("task 1: its branch speed/task-1 is not found, and no review saw its work"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains(&format!(
            "the last head reviewed, {}, is not in main's history",
            &head[..10]
        )),
        "{}",
        run.stderr
    );
    let json = repo.speed(&["review", "--offline", "--json"]);
    assert_eq!(json.code, 0, "{}", json.transcript());
    let out: Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(out["skipped"][0]["branch_missing"], "speed/task-1");

    // Named, it stays an error naming the branch.
    let named = repo.speed(&["review", "--offline", "--task-id", "1"]);
    assert_eq!(named.code, 1, "{}", named.transcript());
    assert!(named.stderr.contains("speed/task-1"), "{}", named.stderr);
    assert_eq!((repo.read("1"), repo.read("2")), before);
}

#[test]
fn a_merged_task_named_is_said_to_be_merged_and_left_alone_even_with_force() {
    let repo = Repo::new();
    let head = repo.branch(
        "speed/task-1",
        "src/cart.rs",
        "pub fn cap() -> u32 {\n    50\n}\n",
    );
    repo.task(
        "1",
        json!({"branch": "speed/task-1", "review_verdict": "approve", "revision_count": 1,
               "review_history": [{"attempt": 2, "verdict": "approve", "head_commit": head}]}),
    );
    ok(repo.path(), &["merge", "-q", "--squash", "speed/task-1"]);
    ok(repo.path(), &["commit", "-q", "-m", "squashed"]);
    let before = repo.read("1");
    for args in [
        &["review", "--task-id", "1"][..],
        &["review", "--task-id", "1", "--force"],
        &["review", "--force"],
    ] {
        let run = repo.speed(args);
        assert_eq!(run.code, 0, "{args:?}: {}", run.transcript());
        assert!(
            run.stderr.contains("merged into main")
                && run.stderr.contains("squash or rebase merge"),
            "{args:?}: {}",
            run.stderr
        );
        assert!(
            !run.stdout.contains("Nothing was implemented"),
            "{}",
            run.stdout
        );
        assert_eq!(repo.read("1"), before, "{args:?}");
    }
    // Another change to its file on main since does not make it unmerged:
    // its content landed with the squash commit.
    let squashed = rev(repo.path(), "main");
    commit(
        repo.path(),
        &[("src/cart.rs", "pub fn cap() -> u32 {\n    60\n}\n")],
        "sixty",
    );
    let run = repo.speed(&["review", "--task-id", "1", "--offline"]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    assert!(
        run.stderr.contains(&format!("since {}", &squashed[..10])),
        "{}",
        run.transcript()
    );
    assert_eq!(repo.read("1"), before);
}

#[test]
fn a_squash_merged_branch_merged_again_passes_the_gate_as_merged() {
    let repo = Repo::new();
    let install = repo.speed(&["hook", "install"]);
    assert_eq!(install.code, 0, "{}", install.transcript());
    repo.branch("speed/task-1", "src/one.rs", "pub fn one() {}\n");
    repo.task("1", json!({"branch": "speed/task-1"}));
    ok(repo.path(), &["merge", "-q", "--squash", "speed/task-1"]);
    ok(repo.path(), &["commit", "-q", "-m", "squashed"]);
    // Merging the branch itself now brings none of its work.
    let again = git(
        repo.path(),
        &["merge", "--no-ff", "--no-edit", "speed/task-1"],
    );
    assert_eq!(again.code, 0, "{}", again.transcript());
    assert!(
        again.stderr.contains("task 1 at") && again.stderr.contains("merged already"),
        "{}",
        again.stderr
    );
    // Another unreviewed branch is still blocked.
    repo.branch("speed/task-2", "src/two.rs", "pub fn two() {}\n");
    repo.task("2", json!({"branch": "speed/task-2"}));
    let blocked = git(
        repo.path(),
        &["merge", "--no-ff", "--no-edit", "speed/task-2"],
    );
    assert_ne!(blocked.code, 0, "{}", blocked.transcript());
    assert!(
        blocked.stderr.contains("no review approved this commit"),
        "{}",
        blocked.stderr
    );
}
