//! The branch speed reviews is the one the user means: a stale local
//! branch beside a newer `origin/…`, a configured main branch beside a
//! stale `master`, an `execution_base_commit` with main merged into the
//! task branch, and the errors of a branch fetched into `FETCH_HEAD` only
//! or of a shallow clone, which say what to fetch.

use crate::support::model_server::{ModelServer, Reply};
use crate::support::speed::speed;

use super::*;

/// A clone of `origin` (by file URL, so `--depth` works), with git's user.
fn clone(origin: &TempRepo, name: &str, args: &[&str]) -> PathBuf {
    let dest = beside(origin, name);
    let url = format!("file://{}", origin.path().display());
    let mut all = vec!["clone", "-q"];
    all.extend(args);
    all.push(&url);
    let dest_text = dest.to_str().unwrap().to_string();
    all.push(&dest_text);
    git(origin.path().parent().unwrap(), &all);
    git(&dest, &["config", "user.name", "Ann Example"]);
    git(&dest, &["config", "user.email", "ann@example.com"]);
    dest
}

fn write(dir: &Path, path: &str, text: &str) {
    let full = dir.join(path);
    std::fs::create_dir_all(full.parent().unwrap()).unwrap();
    std::fs::write(full, text).unwrap();
}

fn read_task(dir: &Path, id: u32) -> Value {
    serde_json::from_str(
        &std::fs::read_to_string(dir.join(format!(".speed/tasks/{id}.json"))).unwrap(),
    )
    .unwrap()
}

fn config_in(dir: &Path, server: &ModelServer) {
    write(
        dir,
        ".speed/config.toml",
        &format!(
            "[llm]\nprovider = \"openai\"\nbase_url = \"{}\"\nmodel = \"test-model\"\ntimeout_secs = 20\nmax_retries = 0\n[guardian]\nenabled = false\n",
            server.url()
        ),
    );
}

#[test]
fn a_stale_local_branch_gives_way_to_a_newer_origin_and_diverged_ones_are_refused() {
    let origin = widgets();
    let o = origin.path();
    git(o, &["checkout", "-q", "-b", "speed/task-1"]);
    commit(o, &[("src/widgets.py", WIDGETS_V1)], "refuse bad sizes");
    git(o, &["checkout", "-q", "main"]);
    let local = clone(&origin, "local", &[]);
    git(
        &local,
        &["branch", "-q", "speed/task-1", "origin/speed/task-1"],
    );
    let stale = rev(&local, "speed/task-1");
    // The task branch moves on at origin; the clone fetches it.
    git(o, &["checkout", "-q", "speed/task-1"]);
    let newer = commit(
        o,
        &[(
            "src/widgets.py",
            "def make(size):\n    if size < 1 or size > 10:\n        raise ValueError(\"size out of range: %d\" % size)\n    return {\"size\": size}\n",
        )],
        "say which size",
    );
    git(o, &["checkout", "-q", "main"]);
    git(&local, &["fetch", "-q"]);
    assert_eq!(rev(&local, "speed/task-1"), stale);

    let repo = crate::support::repo::adopt(tempfile::tempdir().unwrap(), local.clone());
    task(&repo, 1, json!({}));
    let server = ModelServer::scripted(vec![Reply::openai(&approve("src/widgets.py:2"))]);
    config_in(&local, &server);
    let run = speed(&local, &["review", "--task-id", "1"], &[]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    assert!(
        run.stdout.contains(&format!(
            "origin/speed/task-1 ({}) is newer than the local speed/task-1 ({}), which it contains: origin's head is reviewed",
            &newer[..10],
            &stale[..10]
        )),
        "{}",
        run.stdout
    );
    let task = read_task(&local, 1);
    assert_eq!(task["review_history"][0]["head_commit"], newer.as_str());
    assert!(
        prompt_of(&server.requests()[0]).contains("out of range: %d"),
        "origin's code was reviewed"
    );

    // A local commit on the stale branch: the two have diverged.
    git(&local, &["checkout", "-q", "speed/task-1"]);
    commit(&local, &[("src/extra.py", "X = 1\n")], "local work");
    git(&local, &["checkout", "-q", "main"]);
    let local_head = rev(&local, "speed/task-1");
    let before = std::fs::read_to_string(local.join(".speed/tasks/1.json")).unwrap();
    let run = speed(&local, &["review", "--task-id", "1"], &[]);
    assert_eq!(run.code, 1, "{}", run.transcript());
    assert!(
        run.stderr.contains(&format!(
            "the local branch speed/task-1 ({}) and origin/speed/task-1 ({}) have diverged",
            &local_head[..10],
            &newer[..10]
        )),
        "{}",
        run.stderr
    );
    assert_eq!(
        std::fs::read_to_string(local.join(".speed/tasks/1.json")).unwrap(),
        before
    );
    assert_eq!(server.requests().len(), 1);
}

#[test]
fn the_configured_main_branch_wins_over_a_stale_master() {
    let (tmp, root) = crate::support::repo::empty();
    std::fs::create_dir_all(&root).unwrap();
    git(&root, &["init", "-q", "-b", "master"]);
    git(&root, &["config", "user.name", "Ann Example"]);
    git(&root, &["config", "user.email", "ann@example.com"]);
    // master: the spec as it was before the team moved to trunk.
    commit(
        &root,
        &[
            (SPEC, "# Widgets\n\n## Sizes\n\nA widget has any size.\n"),
            ("src/widgets.py", WIDGETS_V0),
        ],
        "old",
    );
    git(&root, &["checkout", "-q", "-b", "trunk"]);
    commit(
        &root,
        &[
            (SPEC, SPEC_V1),
            (".speed/config.toml", "[git]\nmain_branch = \"trunk\"\n"),
        ],
        "the spec, and speed on trunk",
    );
    git(&root, &["checkout", "-q", "-b", "speed/task-1"]);
    commit(&root, &[("src/widgets.py", WIDGETS_V1)], "refuse bad sizes");
    git(&root, &["checkout", "-q", "trunk"]);
    let repo = crate::support::repo::adopt(tmp, root.clone());
    task(&repo, 1, json!({}));
    let server = ModelServer::scripted(vec![Reply::openai(&approve("src/widgets.py:2"))]);
    // HEAD is trunk: its working tree's config is the one used.
    repo.write(
        ".speed/config.toml",
        &format!(
            "[git]\nmain_branch = \"trunk\"\n[llm]\nprovider = \"openai\"\nbase_url = \"{}\"\nmodel = \"test-model\"\ntimeout_secs = 20\nmax_retries = 0\n[guardian]\nenabled = false\n",
            server.url()
        ),
    );
    let run = speed(&root, &["review", "--task-id", "1"], &[]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    let said = "The main branch is `trunk`, as git.main_branch in the working tree's .speed/config.toml says (HEAD is trunk); not `master`";
    assert!(run.stdout.contains(said), "{}", run.transcript());
    // The spec was read from trunk: the approval's quote is found there.
    let prompt = prompt_of(&server.requests()[0]);
    assert!(prompt.contains(QUOTE), "{prompt}");
    assert!(!prompt.contains("A widget has any size."), "{prompt}");
    assert_eq!(task_file(&repo, 1)["review_verdict"], "approve");

    // From the task branch's checkout, the guess stands and a notice says
    // how to name trunk.
    git(&root, &["checkout", "-q", "speed/task-1"]);
    let run = speed(&root, &["review", "--task-id", "1", "--dry-run"], &[]);
    assert!(
        run.stderr
            .contains("names `trunk` as the main branch, but the main branch is `master`")
            && run.stderr.contains("pass --base trunk"),
        "{}",
        run.transcript()
    );
}

#[test]
fn main_merged_into_a_task_branch_is_not_the_task_work() {
    let repo = widgets();
    let root = repo.path();
    let start = rev(root, "main");
    git(root, &["checkout", "-q", "-b", "speed/task-1"]);
    commit(root, &[("src/widgets.py", WIDGETS_V1)], "refuse bad sizes");
    git(root, &["checkout", "-q", "main"]);
    let main_work = commit(root, &[("src/colours.py", "RED = 1\n")], "colours on main");
    git(root, &["checkout", "-q", "speed/task-1"]);
    git(root, &["merge", "-q", "--no-edit", "main"]);
    let head = commit(
        root,
        &[(
            "src/widgets.py",
            format!("{WIDGETS_V1}# sizes checked\n").as_str(),
        )],
        "a comment",
    );
    git(root, &["checkout", "-q", "main"]);
    task(&repo, 1, json!({"execution_base_commit": start}));
    let server = ModelServer::scripted(vec![Reply::openai(&approve("src/widgets.py:2"))]);
    configure(&repo, &server);
    let run = speed(root, &["review", "--task-id", "1"], &[]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    let prompt = prompt_of(&server.requests()[0]);
    assert!(!prompt.contains("RED = 1"), "main's work: {prompt}");
    assert!(
        run.stdout.contains("newer than the execution_base_commit"),
        "{}",
        run.stdout
    );
    let task = task_file(&repo, 1);
    assert_eq!(task["review_verdict"], "approve");
    let report: Value =
        serde_json::from_str(&repo.read(repo.log()[0]["report"].as_str().unwrap())).unwrap();
    assert_eq!(report["base_commit"], main_work.as_str());
    assert_eq!(report["head_commit"], head.as_str());
    assert!(
        report["checks"]
            .as_array()
            .unwrap()
            .iter()
            .all(|c| c["check"] != "scope"),
        "{}",
        report["checks"]
    );
}

#[test]
fn a_branch_fetched_into_fetch_head_only_and_a_shallow_clone_say_what_to_fetch() {
    let origin = widgets();
    let o = origin.path();
    git(o, &["checkout", "-q", "-b", "speed/task-1"]);
    commit(o, &[("src/widgets.py", WIDGETS_V1)], "refuse bad sizes");
    git(o, &["checkout", "-q", "main"]);
    commit(o, &[("README.md", "# widgets\n")], "a readme");

    let ci = clone(
        &origin,
        "ci",
        &["--depth", "1", "--single-branch", "-b", "main"],
    );
    git(
        &ci,
        &["fetch", "-q", "--depth", "1", "origin", "speed/task-1"],
    );
    let repo = crate::support::repo::adopt(tempfile::tempdir().unwrap(), ci.clone());
    task(&repo, 1, json!({}));
    let run = speed(&ci, &["review", "--task-id", "1", "--offline"], &[]);
    assert_eq!(run.code, 1, "{}", run.transcript());
    for said in [
        "branch `speed/task-1` not found",
        "it was fetched into FETCH_HEAD only",
        "`git fetch origin speed/task-1:speed/task-1`",
        "`fetch-depth: 0` in actions/checkout",
    ] {
        assert!(run.stderr.contains(said), "{said}: {}", run.stderr);
    }
    // Fetched as a branch, but shallow: no merge base to diff from.
    git(
        &ci,
        &[
            "fetch",
            "-q",
            "--depth",
            "1",
            "origin",
            "speed/task-1:speed/task-1",
        ],
    );
    let run = speed(&ci, &["review", "--task-id", "1", "--offline"], &[]);
    assert_eq!(run.code, 1, "{}", run.transcript());
    assert!(
        run.stderr
            .contains("have no common ancestor in this shallow clone's history")
            && run.stderr.contains("`fetch-depth: 0` in actions/checkout"),
        "{}",
        run.stderr
    );
    // With the history: reviewed.
    git(&ci, &["fetch", "-q", "--unshallow", "origin"]);
    let run = speed(&ci, &["review", "--task-id", "1", "--offline"], &[]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    assert!(
        read_task(&ci, 1).get("review_verdict").is_none(),
        "offline approves nothing"
    );

    // A shallow checkout of the task branch alone: no main at all.
    let pr = clone(
        &origin,
        "pr",
        &["--depth", "1", "--single-branch", "-b", "speed/task-1"],
    );
    let run = speed(
        &pr,
        &[
            "review",
            "--branch",
            "speed/task-1",
            "--spec",
            SPEC,
            "--offline",
        ],
        &[],
    );
    assert_eq!(run.code, 1, "{}", run.transcript());
    assert!(
        run.stderr.contains("no main branch found") && run.stderr.contains("fetch-depth: 0"),
        "{}",
        run.stderr
    );
    let run = speed(
        &pr,
        &[
            "review",
            "--branch",
            "speed/task-1",
            "--spec",
            SPEC,
            "--offline",
            "--base",
            "main",
        ],
        &[],
    );
    assert_eq!(run.code, 1, "{}", run.transcript());
    assert!(
        run.stderr.contains("branch `main` not found") && run.stderr.contains("fetch-depth: 0"),
        "{}",
        run.stderr
    );
}
