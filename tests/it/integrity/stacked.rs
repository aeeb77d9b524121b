//! Stacked tasks: task 2 branches from task 1 (`depends_on`), and task 1
//! moves on, is rebased, or is squash-merged and its branch deleted. Task
//! 2's diff is its own work in each case; when that cannot be established
//! the report and the terminal say so, naming the commits.

use crate::support::model_server::{ModelServer, Reply};
use crate::support::speed::speed;

use super::*;

const SIZES_V1: &str = "MIN = 1\nMAX = 10\n";
const SIZES_V2: &str = "MIN = 1\nMAX = 10\nDEFAULT = 5\n";

/// main; task 1 adds `src/sizes.py` (two commits); task 2, built on task
/// 1's head, refuses bad sizes in `src/widgets.py`. HEAD is left on main.
/// Returns (task 1's head, task 2's head).
fn stacked(repo: &TempRepo) -> (String, String) {
    let root = repo.path();
    git(root, &["checkout", "-q", "-b", "speed/task-1"]);
    commit(root, &[("src/sizes.py", SIZES_V1)], "task 1: sizes");
    let one = commit(
        root,
        &[("src/sizes.py", SIZES_V2)],
        "task 1: a default size",
    );
    git(root, &["checkout", "-q", "-b", "speed/task-2"]);
    let two = commit(
        root,
        &[("src/widgets.py", WIDGETS_V1)],
        "task 2: refuse bad sizes",
    );
    git(root, &["checkout", "-q", "main"]);
    task(
        repo,
        1,
        json!({"files_to_modify": ["src/sizes.py"], "description": "Sizes as constants."}),
    );
    task(repo, 2, json!({"depends_on": ["1"]}));
    (one, two)
}

/// Reflogs gone, as in a fresh clone or a CI checkout.
fn forget_reflogs(repo: &TempRepo) {
    git(repo.path(), &["reflog", "expire", "--expire=now", "--all"]);
}

fn dry_run(repo: &TempRepo) -> Value {
    let run = speed(
        repo.path(),
        &["review", "--task-id", "2", "--dry-run", "--json"],
        &[],
    );
    assert_eq!(run.code, 0, "{}", run.transcript());
    let out: Value = serde_json::from_str(&run.stdout).unwrap();
    out["reviews"][0].clone()
}

fn assert_own_work_only(review: &Value) {
    let prompt = review["prompt"].as_str().unwrap();
    assert!(
        prompt.contains("+        raise ValueError(\"size out of range\")"),
        "{prompt}"
    );
    assert!(!prompt.contains("+DEFAULT = 5"), "task 1's work: {prompt}");
    assert!(!prompt.contains("+MAX = 10"), "task 1's work: {prompt}");
}

#[test]
fn a_parent_that_moved_on_after_the_child_branched_is_not_in_the_child_diff() {
    let repo = widgets();
    let (fork, _) = stacked(&repo);
    let root = repo.path();
    // Task 1 gets a review fix after task 2 branched from it.
    git(root, &["checkout", "-q", "speed/task-1"]);
    commit(
        root,
        &[("src/sizes.py", "MIN = 1\nMAX = 10\nDEFAULT = 4\n")],
        "task 1: review fix",
    );
    git(root, &["checkout", "-q", "main"]);

    let review = dry_run(&repo);
    assert_eq!(review["base_commit"], fork.as_str());
    assert_own_work_only(&review);
    let prompt = review["prompt"].as_str().unwrap();
    assert!(
        prompt.contains("The diff starts at the commit")
            && prompt.contains("task 1's branch speed/task-1"),
        "{prompt}"
    );

    // Without reflogs (a fresh clone), where the branches meet says the same.
    forget_reflogs(&repo);
    let review = dry_run(&repo);
    assert_eq!(review["base_commit"], fork.as_str());
    assert_own_work_only(&review);
    assert!(
        review["prompt"].as_str().unwrap().contains(
            "where this branch forked from task 1's branch speed/task-1, which has moved on to"
        ),
        "{}",
        review["prompt"]
    );
}

#[test]
fn a_parent_rebased_after_the_child_branched_is_not_in_the_child_diff() {
    let repo = widgets();
    let (fork, _) = stacked(&repo);
    let root = repo.path();
    commit(root, &[("README.md", "# widgets\n")], "a readme");
    git(root, &["rebase", "-q", "main", "speed/task-1"]);
    git(root, &["checkout", "-q", "main"]);
    forget_reflogs(&repo);

    let review = dry_run(&repo);
    assert_eq!(review["base_commit"], fork.as_str());
    assert_own_work_only(&review);
    let prompt = review["prompt"].as_str().unwrap();
    assert!(
        prompt.contains(
            "the same changes as commits of task 1's branch speed/task-1 (rebased since to"
        ),
        "{prompt}"
    );
    assert!(!prompt.contains("+# widgets"), "main's readme: {prompt}");
}

#[test]
fn a_parent_squash_merged_and_deleted_leaves_the_child_its_own_commits() {
    let repo = widgets();
    let (fork, two) = stacked(&repo);
    let root = repo.path();
    // GitHub's default: squash, then delete the branch.
    git(root, &["merge", "-q", "--squash", "speed/task-1"]);
    let squash = {
        git(root, &["commit", "-q", "-m", "Sizes as constants (#12)"]);
        rev(root, "HEAD")
    };
    git(root, &["branch", "-q", "-D", "speed/task-1"]);
    forget_reflogs(&repo);

    let server = ModelServer::scripted(vec![Reply::openai(&approve("src/widgets.py:2"))]);
    configure(&repo, &server);
    let run = speed(root, &["review", "--task-id", "2"], &[]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    let prompt = prompt_of(&server.requests()[0]);
    assert!(!prompt.contains("+DEFAULT = 5"), "task 1's work: {prompt}");
    assert!(prompt.contains("raise ValueError"), "{prompt}");
    // The terminal says where the diff starts and why.
    assert!(
        run.stdout.contains(&format!(
            "whose content main already holds as {} \"Sizes as constants (#12)\"",
            &squash[..10]
        )),
        "{}",
        run.stdout
    );
    let task = task_file(&repo, 2);
    assert_eq!(task["review_verdict"], "approve");
    assert_eq!(task["review_history"][0]["head_commit"], two.as_str());
    let log = repo.log();
    assert_eq!(log.len(), 1);
    let report: Value =
        serde_json::from_str(&repo.read(log[0]["report"].as_str().unwrap())).unwrap();
    assert_eq!(report["base_commit"], fork.as_str());
}

#[test]
fn a_parent_whose_work_cannot_be_told_apart_is_named_with_the_commits() {
    let repo = widgets();
    stacked(&repo);
    let root = repo.path();
    // Task 1 is deleted unmerged, and nothing here remembers its heads.
    git(root, &["branch", "-q", "-D", "speed/task-1"]);
    forget_reflogs(&repo);

    let server = ModelServer::scripted(vec![Reply::openai(&approve("src/widgets.py:2"))]);
    configure(&repo, &server);
    let run = speed(root, &["review", "--task-id", "2"], &[]);
    // Task 1's file shows in the diff and is out of task 2's scope: no
    // approval of another task's code.
    assert_eq!(run.code, 50, "{}", run.transcript());
    for said in [
        "Where this task's own work starts is not certain: task 1's branch speed/task-1 is gone and no head it had is known here",
        "the diff holds 3 commits (",
        "\"task 1: sizes\"",
        "\"task 2: refuse bad sizes\"",
    ] {
        assert!(run.stdout.contains(said), "{said}: {}", run.stdout);
    }
    let prompt = prompt_of(&server.requests()[0]);
    assert!(
        prompt.contains("Where this task's own work starts is not certain"),
        "{prompt}"
    );
    let task = task_file(&repo, 2);
    assert_eq!(task["review_verdict"], "request_changes");
    assert_eq!(task["status"], "pending");
}
