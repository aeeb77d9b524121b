//! The merge gate end to end: `speed hook install`, then real `git merge`
//! and `git push` (to a bare repository on disk) run the installed hooks,
//! which find the built `speed` on PATH. Covers where hooks go, unreviewed,
//! approved and overridden heads, a commit after the approval, a
//! fast-forward caught at push, someone else's hook kept and run, the
//! bypass, time limits, and uninstall.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::support::model_server::{ModelServer, Reply};
use crate::support::repo::{self, TempRepo};
use crate::support::speed::{Run, speed};
use crate::support::verdicts::{self, text};

/// The folder holding the built `speed`, first on PATH, as a user's shell
/// would have it after `cargo install`.
fn path_with_speed() -> String {
    let bin = Path::new(env!("CARGO_BIN_EXE_speed"))
        .parent()
        .expect("the binary has a folder")
        .to_path_buf();
    let rest = std::env::var("PATH").unwrap_or_default();
    format!("{}:{rest}", bin.display())
}

/// `git <args>` in `dir` with a scrubbed environment (as `speed` runs in
/// the tests) and speed on PATH, so the hooks it runs find speed.
fn git_env(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Run {
    let mut cmd = Command::new("git");
    cmd.current_dir(dir)
        .args(args)
        .env_clear()
        .env("PATH", path_with_speed())
        .env("HOME", dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_EDITOR", "true")
        .stdin(Stdio::null());
    for (key, value) in env {
        cmd.env(key, value);
    }
    let out = cmd.output().expect("git runs");
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn git(dir: &Path, args: &[&str]) -> Run {
    git_env(dir, args, &[])
}

/// `git <args>` that must succeed; its stdout, trimmed.
fn ok(dir: &Path, args: &[&str]) -> String {
    let run = git(dir, args);
    assert_eq!(run.code, 0, "git {args:?}\n{}", run.transcript());
    run.stdout.trim().to_string()
}

fn rev(dir: &Path, name: &str) -> String {
    ok(dir, &["rev-parse", name])
}

/// The example repository with a git user, speed's hooks installed, and a
/// bare remote that already has main.
struct Setup {
    repo: TempRepo,
    remote: PathBuf,
}

impl Setup {
    fn new() -> Setup {
        let repo = repo::example();
        let root = repo.path();
        ok(root, &["config", "user.name", "Ann Example"]);
        ok(root, &["config", "user.email", "ann@example.com"]);
        let remote = root.parent().unwrap().join("remote.git");
        ok(root, &["init", "--bare", "-q", remote.to_str().unwrap()]);
        ok(root, &["remote", "add", "origin", remote.to_str().unwrap()]);
        let install = speed(root, &["hook", "install"], &[]);
        assert_eq!(install.code, 0, "{}", install.transcript());
        ok(root, &["push", "-q", "origin", "main"]);
        Setup { repo, remote }
    }

    fn root(&self) -> &Path {
        self.repo.path()
    }

    fn merge(&self, what: &str, env: &[(&str, &str)]) -> Run {
        git_env(self.root(), &["merge", "--no-ff", "--no-edit", what], env)
    }

    /// Abort a merge a hook blocked; main must be where it was.
    fn abort(&self, main_before: &str) {
        // A merge blocked by pre-merge-commit is left in progress.
        let _ = git(self.root(), &["merge", "--abort"]);
        assert_eq!(rev(self.root(), "main"), main_before);
    }

    fn remote_main(&self) -> String {
        ok(
            self.root(),
            &[
                "--git-dir",
                self.remote.to_str().unwrap(),
                "rev-parse",
                "main",
            ],
        )
    }

    /// A real review of task 1 that the loopback model approves.
    fn approve_task_1(&self) {
        let server = ModelServer::scripted(vec![Reply::openai(&text(&verdicts::approve_task_1()))]);
        self.repo.config(&format!(
            "[llm]\nprovider = \"openai\"\nbase_url = \"{}\"\nmodel = \"test-model\"\ntimeout_secs = 5\nmax_retries = 0\n[guardian]\nenabled = false\n",
            server.url()
        ));
        let run = speed(self.root(), &["review", "--task-id", "1"], &[]);
        assert_eq!(run.code, 0, "{}", run.transcript());
        assert_eq!(self.repo.task("1")["review_verdict"], "approve");
    }

    /// One more commit on `branch`, made without leaving main's checkout.
    fn commit_on(&self, branch: &str, file: &str, content: &str) -> String {
        let wt = self
            .root()
            .parent()
            .unwrap()
            .join(format!("wt-{}", branch.replace('/', "-")));
        if !wt.exists() {
            ok(
                self.root(),
                &["worktree", "add", "-q", wt.to_str().unwrap(), branch],
            );
        }
        std::fs::write(wt.join(file), content).unwrap();
        ok(&wt, &["add", file]);
        ok(
            &wt,
            &["commit", "-q", "-m", &format!("more work on {file}")],
        );
        rev(self.root(), branch)
    }

    fn log_lines(&self) -> Vec<serde_json::Value> {
        self.repo.log()
    }
}

#[test]
fn install_writes_hooks_where_git_runs_them() {
    let repo = repo::example();
    let root = repo.path();
    let git_hooks = |dir: &Path| {
        PathBuf::from(ok(
            dir,
            &["rev-parse", "--path-format=absolute", "--git-path", "hooks"],
        ))
    };
    let installed = |dir: &Path| {
        let run = speed(dir, &["hook", "install"], &[]);
        assert_eq!(run.code, 0, "{}", run.transcript());
        let hooks = git_hooks(dir);
        for name in ["pre-merge-commit", "pre-push", "pre-commit"] {
            let text = std::fs::read_to_string(hooks.join(name))
                .unwrap_or_else(|e| panic!("{name} in {}: {e}", hooks.display()));
            assert!(text.contains(&format!("hook run {name} \"$@\"")), "{text}");
        }
        hooks
    };

    assert_eq!(installed(root), root.join(".git/hooks"));

    // A linked worktree shares the main repository's hooks.
    let wt = root.parent().unwrap().join("linked");
    ok(
        root,
        &[
            "worktree",
            "add",
            "-q",
            wt.to_str().unwrap(),
            "speed/task-2",
        ],
    );
    assert_eq!(installed(&wt), root.join(".git/hooks"));

    // core.hooksPath: relative to the work tree's root, as git takes it.
    ok(root, &["config", "core.hooksPath", "githooks"]);
    assert_eq!(installed(root), root.join("githooks"));
    assert_eq!(installed(&wt), wt.join("githooks"));
    let elsewhere = root.parent().unwrap().join("shared-hooks");
    ok(
        root,
        &["config", "core.hooksPath", elsewhere.to_str().unwrap()],
    );
    assert_eq!(installed(root), elsewhere);

    // Installing again changes nothing and says so.
    let again = speed(root, &["hook", "install"], &[]);
    assert!(
        again.stderr.contains("is up to date"),
        "{}",
        again.transcript()
    );
}

#[test]
fn an_unreviewed_head_is_blocked_and_an_approved_one_passes() {
    let s = Setup::new();
    let main = rev(s.root(), "main");
    let head = rev(s.root(), "speed/task-1");

    let run = s.merge("speed/task-1", &[]);
    assert_ne!(run.code, 0, "{}", run.transcript());
    assert!(
        run.stderr.contains("the merge is blocked"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains(&format!(
            "task 1 (feature library-catalog), branch speed/task-1, commit {}",
            &head[..10]
        )),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr
            .contains("speed review --task-id 1 --feature library-catalog"),
        "{}",
        run.stderr
    );
    s.abort(&main);

    // Concluding the blocked merge with `git commit` is blocked too.
    let run = s.merge("speed/task-1", &[]);
    assert_ne!(run.code, 0);
    let commit = git(s.root(), &["commit", "--no-edit"]);
    assert_ne!(commit.code, 0, "{}", commit.transcript());
    assert!(
        commit.stderr.contains("speed pre-commit"),
        "{}",
        commit.stderr
    );
    s.abort(&main);

    s.approve_task_1();
    let run = s.merge("speed/task-1", &[]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    assert!(
        run.stderr.contains(&format!(
            "task 1 (feature library-catalog) approved at {}",
            &head[..10]
        )),
        "{}",
        run.stderr
    );
    // The log line of the review names the head it judged.
    assert_eq!(s.log_lines()[0]["head_commit"], head.as_str());
    let push = git(s.root(), &["push", "origin", "main"]);
    assert_eq!(push.code, 0, "{}", push.transcript());
    assert_eq!(s.remote_main(), rev(s.root(), "main"));
}

#[test]
fn an_approval_waiting_for_a_person_is_blocked_until_speed_approve() {
    let s = Setup::new();
    let main = rev(s.root(), "main");
    let head = rev(s.root(), "speed/task-1");
    let server = ModelServer::scripted(vec![Reply::openai(&text(&verdicts::approve_task_1()))]);
    s.repo.config(&format!(
        "[llm]\nprovider = \"openai\"\nbase_url = \"{}\"\nmodel = \"test-model\"\ntimeout_secs = 5\nmax_retries = 0\n[guardian]\nenabled = false\n[review]\nhuman = \"require\"\n",
        server.url()
    ));
    let run = speed(s.root(), &["review", "--task-id", "1"], &[]);
    assert_eq!(run.code, 0, "{}", run.transcript());

    let run = s.merge("speed/task-1", &[]);
    assert_ne!(run.code, 0, "{}", run.transcript());
    assert!(
        run.stderr
            .contains("and the approval waits for a person (review.human)"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr
            .contains("confirm it:    speed approve --task-id 1 --feature library-catalog"),
        "{}",
        run.stderr
    );
    s.abort(&main);

    let run = speed(s.root(), &["approve", "--task-id", "1", "--by", "Ann"], &[]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    let run = s.merge("speed/task-1", &[]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    assert!(
        run.stderr.contains(&format!(
            "task 1 (feature library-catalog) approved at {}, confirmed by Ann",
            &head[..10]
        )),
        "{}",
        run.stderr
    );
    // The cache is a cache: without it the log says the same.
    std::fs::remove_dir_all(s.root().join(".speed/cache")).unwrap();
    let main = rev(s.root(), "main");
    let push = git(s.root(), &["push", "origin", "main"]);
    assert_eq!(push.code, 0, "{}", push.transcript());
    assert_eq!(s.remote_main(), main);
}

#[test]
fn a_commit_after_the_approval_is_blocked() {
    let s = Setup::new();
    s.approve_task_1();
    let main = rev(s.root(), "main");
    let approved = rev(s.root(), "speed/task-1");
    let later = s.commit_on(
        "speed/task-1",
        "catalog/src/extra.rs",
        "pub fn extra() {}\n",
    );

    let run = s.merge("speed/task-1", &[]);
    assert_ne!(run.code, 0, "{}", run.transcript());
    assert!(
        run.stderr.contains(&format!("commit {}", &later[..10])),
        "{}",
        run.stderr
    );
    s.abort(&main);

    // Merging the approved commit itself is fine.
    let run = s.merge(&approved, &[]);
    assert_eq!(run.code, 0, "{}", run.transcript());
}

#[test]
fn merging_part_of_a_branch_needs_an_approval_of_that_part() {
    let s = Setup::new();
    let first = rev(s.root(), "speed/task-1");
    let second = s.commit_on(
        "speed/task-1",
        "catalog/src/extra.rs",
        "pub fn extra() {}\n",
    );
    let run = speed(
        s.root(),
        &["override", "--task-id", "1", "--reason", "the head is fine"],
        &[],
    );
    assert_eq!(run.code, 0, "{}", run.transcript());
    let main = rev(s.root(), "main");

    let run = s.merge("speed/task-1~1", &[]);
    assert_ne!(run.code, 0, "{}", run.transcript());
    assert!(
        run.stderr.contains(&format!(
            "{} is part of the branch, not its head ({})",
            &first[..10],
            &second[..10]
        )),
        "{}",
        run.stderr
    );
    s.abort(&main);
    assert_eq!(s.merge("speed/task-1", &[]).code, 0);
}

#[test]
fn a_fast_forward_merge_is_caught_at_push() {
    let s = Setup::new();
    let remote_before = s.remote_main();
    let head = rev(s.root(), "speed/task-1");
    // A fast-forward creates no merge commit: no pre-merge-commit runs.
    ok(s.root(), &["merge", "--ff-only", "-q", "speed/task-1"]);
    assert_eq!(rev(s.root(), "main"), head);

    let run = git(s.root(), &["push", "origin", "main", "--tags"]);
    assert_ne!(run.code, 0, "{}", run.transcript());
    assert!(
        run.stderr.contains("speed pre-push: the push is blocked"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains(&format!("commit {}", &head[..10])),
        "{}",
        run.stderr
    );
    assert_eq!(s.remote_main(), remote_before);

    // Other branches are not the gate's business: a new one, a deletion.
    let run = git(s.root(), &["push", "origin", "speed/task-2"]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    let run = git(s.root(), &["push", "origin", ":speed/task-2"]);
    assert_eq!(run.code, 0, "{}", run.transcript());

    // --no-verify skips pre-merge-commit, not pre-push.
    ok(s.root(), &["reset", "-q", "--hard", &remote_before]);
    let merged = git(
        s.root(),
        &[
            "merge",
            "--no-ff",
            "--no-edit",
            "--no-verify",
            "speed/task-2",
        ],
    );
    assert_eq!(merged.code, 0, "{}", merged.transcript());
    let run = git(s.root(), &["push", "origin", "main"]);
    assert_ne!(run.code, 0, "{}", run.transcript());
    assert!(
        run.stderr.contains("task 2 (feature library-catalog)"),
        "{}",
        run.stderr
    );
    assert_eq!(s.remote_main(), remote_before);
}

#[test]
fn a_push_that_creates_the_main_branch_checks_everything_it_brings() {
    let s = Setup::new();
    ok(s.root(), &["merge", "--ff-only", "-q", "speed/task-3"]);
    let fresh = s.root().parent().unwrap().join("fresh.git");
    ok(s.root(), &["init", "--bare", "-q", fresh.to_str().unwrap()]);
    let run = git(s.root(), &["push", fresh.to_str().unwrap(), "main"]);
    assert_ne!(run.code, 0, "{}", run.transcript());
    assert!(
        run.stderr.contains("task 3 (feature library-catalog)"),
        "{}",
        run.stderr
    );
}

#[test]
fn someone_elses_hook_is_kept_run_first_and_restored() {
    let s = Setup::new();
    let hooks = s.root().join(".git/hooks");
    let seen = s.root().parent().unwrap().join("seen.txt");
    let theirs = format!(
        "#!/bin/sh\necho \"args: $*\" >> '{0}'\ncat >> '{0}'\nexit ${{LOCAL_EXIT:-0}}\n",
        seen.display()
    );
    speed(s.root(), &["hook", "uninstall"], &[]);
    std::fs::write(hooks.join("pre-push"), &theirs).unwrap();
    set_executable(&hooks.join("pre-push"));

    let run = speed(s.root(), &["hook", "install"], &[]);
    assert_eq!(run.code, 1, "{}", run.transcript());
    assert!(
        run.stderr.contains("pre-push is not speed's hook"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("--force"), "{}", run.stderr);
    assert_eq!(
        std::fs::read_to_string(hooks.join("pre-push")).unwrap(),
        theirs
    );

    let run = speed(s.root(), &["hook", "install", "--force"], &[]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    assert_eq!(
        std::fs::read_to_string(hooks.join("pre-push.local")).unwrap(),
        theirs
    );

    let branch_head = rev(s.root(), "speed/task-2");
    let run = git(s.root(), &["push", "origin", "speed/task-2"]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    let log = std::fs::read_to_string(&seen).unwrap();
    assert!(log.contains("args: origin "), "{log}");
    assert!(
        log.contains(&format!(
            "refs/heads/speed/task-2 {branch_head} refs/heads/speed/task-2 {}",
            "0".repeat(40)
        )),
        "{log}"
    );

    // Their hook failing blocks the push.
    ok(s.root(), &["branch", "other", "speed/task-3"]);
    let run = git_env(
        s.root(),
        &["push", "origin", "other"],
        &[("LOCAL_EXIT", "3")],
    );
    assert_ne!(run.code, 0, "{}", run.transcript());
    assert!(
        run.stderr.contains("pre-push.local failed (exit 3)"),
        "{}",
        run.stderr
    );

    let run = speed(s.root(), &["hook", "uninstall"], &[]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    assert_eq!(
        std::fs::read_to_string(hooks.join("pre-push")).unwrap(),
        theirs
    );
    assert!(!hooks.join("pre-push.local").exists());
    assert!(!hooks.join("pre-merge-commit").exists());
    let again = speed(s.root(), &["hook", "uninstall"], &[]);
    assert_eq!(again.code, 0, "{}", again.transcript());
    assert_eq!(
        std::fs::read_to_string(hooks.join("pre-push")).unwrap(),
        theirs
    );

    // Without speed's hooks, an unreviewed merge goes through.
    let run = s.merge("speed/task-1", &[]);
    assert_eq!(run.code, 0, "{}", run.transcript());
}

#[test]
fn a_bypass_needs_a_reason_and_is_logged_as_an_override() {
    let s = Setup::new();
    let main = rev(s.root(), "main");
    let head = rev(s.root(), "speed/task-1");

    let run = s.merge("speed/task-1", &[("SPEED_SKIP_HOOK", "1")]);
    assert_ne!(run.code, 0, "{}", run.transcript());
    assert!(
        run.stderr.contains("SPEED_OVERRIDE_REASON=\""),
        "{}",
        run.stderr
    );
    s.abort(&main);
    assert!(s.log_lines().is_empty());

    let run = s.merge(
        "speed/task-1",
        &[
            ("SPEED_SKIP_HOOK", "1"),
            ("SPEED_OVERRIDE_REASON", "hotfix for the kiosk outage"),
        ],
    );
    assert_eq!(run.code, 0, "{}", run.transcript());
    assert!(
        run.stderr.contains("bypassed by SPEED_SKIP_HOOK=1"),
        "{}",
        run.stderr
    );
    let log = s.log_lines();
    assert_eq!(log.len(), 1, "{log:?}");
    assert_eq!(log[0]["decision"], "override");
    assert_eq!(log[0]["task"], "1");
    assert_eq!(log[0]["head_commit"], head.as_str());
    assert_eq!(log[0]["by"], "Ann Example <ann@example.com>");
    assert_eq!(log[0]["reason"], "hotfix for the kiosk outage");
    assert_eq!(log[0]["via"], "SPEED_SKIP_HOOK (pre-merge-commit)");
    assert!(log[0]["at"].is_string());
    // A bypass never writes the task file: a merge is in progress.
    assert!(s.repo.task("1").get("override").is_none());

    // The bypassed head is covered at push.
    let run = git(s.root(), &["push", "origin", "main"]);
    assert_eq!(run.code, 0, "{}", run.transcript());
}

#[test]
fn an_override_covers_its_head_and_no_other() {
    let s = Setup::new();
    let head = rev(s.root(), "speed/task-1");

    let run = speed(s.root(), &["override", "--task-id", "1"], &[]);
    assert_eq!(run.code, 2, "{}", run.transcript());
    assert!(run.stderr.contains("--reason"), "{}", run.stderr);
    let run = speed(
        s.root(),
        &["override", "--task-id", "1", "--reason", "  "],
        &[],
    );
    assert_eq!(run.code, 1, "{}", run.transcript());
    assert!(run.stderr.contains("needs a reason"), "{}", run.stderr);
    assert!(s.repo.task("1").get("override").is_none());

    let before = s.repo.task("1");
    let run = speed(
        s.root(),
        &[
            "override",
            "--task-id",
            "1",
            "--reason",
            "accepted for the demo",
        ],
        &[],
    );
    assert_eq!(run.code, 0, "{}", run.transcript());
    let task = s.repo.task("1");
    assert_eq!(task["review_verdict"], "approve");
    assert_eq!(task["status"], "done");
    let o = &task["override"];
    assert_eq!(o["by"], "Ann Example <ann@example.com>");
    assert_eq!(o["reason"], "accepted for the demo");
    assert_eq!(o["head_commit"], head.as_str());
    assert!(o["at"].is_string());
    assert!(o["overruled"].is_null(), "{o}");
    // Every field it had is still there, in order.
    let keys = |v: &serde_json::Value| v.as_object().unwrap().keys().cloned().collect::<Vec<_>>();
    assert_eq!(&keys(&task)[..keys(&before).len()], &keys(&before)[..]);
    let log = s.log_lines();
    assert_eq!(log.last().unwrap()["decision"], "override");
    assert_eq!(log.last().unwrap()["head_commit"], head.as_str());

    let main = rev(s.root(), "main");
    let run = s.merge("speed/task-1", &[]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    assert!(run.stderr.contains("accepted at"), "{}", run.stderr);

    ok(s.root(), &["reset", "-q", "--hard", &main]);
    let later = s.commit_on(
        "speed/task-1",
        "catalog/src/extra.rs",
        "pub fn extra() {}\n",
    );
    let run = s.merge("speed/task-1", &[]);
    assert_ne!(run.code, 0, "{}", run.transcript());
    assert!(
        run.stderr.contains(&format!("commit {}", &later[..10])),
        "{}",
        run.stderr
    );
    s.abort(&main);
}

#[test]
fn an_override_after_a_request_changes_says_what_it_overruled() {
    let s = Setup::new();
    let server = ModelServer::scripted(vec![Reply::openai(&text(
        &verdicts::request_changes_task_2(),
    ))]);
    s.repo.config(&format!(
        "[llm]\nprovider = \"openai\"\nbase_url = \"{}\"\nmodel = \"m\"\nmax_retries = 0\n[guardian]\nenabled = false\n",
        server.url()
    ));
    let run = speed(s.root(), &["review", "--task-id", "2"], &[]);
    assert_eq!(run.code, 50, "{}", run.transcript());
    let main = rev(s.root(), "main");
    let run = s.merge("speed/task-2", &[]);
    assert!(
        run.stderr.contains("its last review requested changes"),
        "{}",
        run.stderr
    );
    s.abort(&main);

    let run = speed(
        s.root(),
        &[
            "override",
            "--task-id",
            "2",
            "--reason",
            "known gap, tracked",
        ],
        &[],
    );
    assert_eq!(run.code, 0, "{}", run.transcript());
    let task = s.repo.task("2");
    assert_eq!(task["status"], "done");
    assert_eq!(
        task["override"]["overruled"]["review_verdict"],
        "request_changes"
    );
    assert!(task["override"]["overruled"]["review_feedback"].is_string());
    assert_eq!(s.merge("speed/task-2", &[]).code, 0);

    // A second override keeps the first one, whose reason a person wrote.
    let run = speed(
        s.root(),
        &["override", "--task-id", "2", "--reason", "still accepted"],
        &[],
    );
    assert_eq!(run.code, 0, "{}", run.transcript());
    let task = s.repo.task("2");
    assert_eq!(task["override"]["reason"], "still accepted");
    assert_eq!(
        task["override"]["overruled"]["override"]["reason"],
        "known gap, tracked"
    );
}

#[test]
fn the_same_diff_against_the_same_spec_is_covered() {
    let s = Setup::new();
    s.approve_task_1();
    // A new head with the same diff: the commit message changes, nothing else.
    let wt = s.root().parent().unwrap().join("wt-amend");
    ok(
        s.root(),
        &[
            "worktree",
            "add",
            "-q",
            wt.to_str().unwrap(),
            "speed/task-1",
        ],
    );
    ok(
        &wt,
        &[
            "commit",
            "-q",
            "--amend",
            "-m",
            "Search by title and author",
        ],
    );
    let amended = rev(s.root(), "speed/task-1");
    let main = rev(s.root(), "main");

    let run = s.merge("speed/task-1", &[]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    assert!(
        run.stderr.contains("the same diff was approved at"),
        "{}",
        run.stderr
    );
    ok(s.root(), &["reset", "-q", "--hard", &main]);

    // Once the spec changes on main, the old approval no longer covers it.
    let spec = s.root().join("specs/product/library-catalog.md");
    let mut text = std::fs::read_to_string(&spec).unwrap();
    text.push_str("\nSearch results are shown in pages of 10.\n");
    std::fs::write(&spec, text).unwrap();
    ok(
        s.root(),
        &[
            "commit",
            "-q",
            "-m",
            "spec: pages",
            "specs/product/library-catalog.md",
        ],
    );
    let main = rev(s.root(), "main");
    let run = s.merge("speed/task-1", &[]);
    assert_ne!(run.code, 0, "{}", run.transcript());
    assert!(
        run.stderr
            .contains("specs/product/library-catalog.md has changed on the main branch"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains(&amended[..10]), "{}", run.stderr);
    s.abort(&main);
}

#[test]
fn a_deleted_cache_is_rebuilt_from_the_log_unless_the_branch_carries_the_log() {
    let s = Setup::new();
    s.approve_task_1();
    std::fs::remove_dir_all(s.root().join(".speed/cache")).unwrap();
    let main = rev(s.root(), "main");
    let run = s.merge("speed/task-1", &[]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    assert!(s.root().join(".speed/cache/verdicts").is_dir());
    ok(s.root(), &["reset", "-q", "--hard", &main]);

    // A branch that commits a review log of its own: a merge puts it in
    // the working tree, and what it says about the branch's commits is not
    // evidence.
    let log = s.root().join(".speed/reviews/log.jsonl");
    std::fs::rename(&log, log.with_extension("jsonl.kept")).unwrap();
    let wt = s.root().parent().unwrap().join("wt-forge");
    ok(
        s.root(),
        &[
            "worktree",
            "add",
            "-q",
            wt.to_str().unwrap(),
            "speed/task-3",
        ],
    );
    std::fs::create_dir_all(wt.join(".speed/reviews")).unwrap();
    std::fs::write(wt.join(".speed/reviews/log.jsonl"), "").unwrap();
    ok(&wt, &["add", "-f", ".speed/reviews/log.jsonl"]);
    ok(&wt, &["commit", "-q", "-m", "keep the log"]);
    let forged = rev(s.root(), "speed/task-3");
    let run = s.merge("speed/task-3", &[]);
    assert_ne!(run.code, 0, "{}", run.transcript());
    // The merge is in progress with the branch's log checked out: forge an
    // approval of the branch's head in it, then conclude with `git commit`.
    let line = serde_json::json!({"task": "3", "feature": "library-catalog", "head_commit": forged,
        "decision": "approve", "at": "2025-01-01T00:00:00Z", "error": null});
    std::fs::write(&log, format!("{line}\n")).unwrap();
    let run = git(s.root(), &["commit", "--no-edit"]);
    assert_ne!(run.code, 0, "{}", run.transcript());
    assert!(
        run.stderr.contains("carries .speed/reviews/log.jsonl"),
        "{}",
        run.stderr
    );
    s.abort(&main);
}

#[test]
fn commits_of_no_task_pass_unless_unknown_blocks() {
    let s = Setup::new();
    ok(s.root(), &["branch", "chore", "main"]);
    s.commit_on("chore", "NOTES.md", "notes\n");
    let main = rev(s.root(), "main");
    let run = s.merge("chore", &[]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    ok(s.root(), &["reset", "-q", "--hard", &main]);

    s.repo.config("[hook]\nunknown = \"block\"\n");
    let run = s.merge("chore", &[]);
    assert_ne!(run.code, 0, "{}", run.transcript());
    assert!(
        run.stderr
            .contains("1 commit(s) belong to no task or defect"),
        "{}",
        run.stderr
    );
    s.abort(&main);
}

#[test]
fn a_defect_branch_is_gated_too() {
    let s = Setup::new();
    s.repo.write(
        ".speed/defects/slow-search/state.json",
        r#"{"status": "fixed", "branch": "fix/slow"}"#,
    );
    ok(s.root(), &["branch", "fix/slow", "main"]);
    let head = s.commit_on("fix/slow", "catalog/src/fix.rs", "pub fn fix() {}\n");
    let main = rev(s.root(), "main");
    let run = s.merge("fix/slow", &[]);
    assert_ne!(run.code, 0, "{}", run.transcript());
    assert!(
        run.stderr.contains(&format!(
            "defect slow-search, branch fix/slow, commit {}",
            &head[..10]
        )),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("speed review --defect slow-search"),
        "{}",
        run.stderr
    );
    s.abort(&main);
}

/// A defect's approval (`speed review --defect`) covers its branch's head,
/// as a task's does.
#[test]
fn a_defect_approval_covers_its_branch() {
    let s = Setup::new();
    let dir = ".speed/defects/slow-search";
    s.repo.write(
        &format!("{dir}/report.md"),
        "# Defect: Search is slow\n\nSeverity: P2\nRelated Feature: library-catalog\n\n## Observed Behavior\nSlow.\n\n## Expected Behavior\nFast.\n\n## Reproduction Steps\n1. Search.\n",
    );
    s.repo.write(
        &format!("{dir}/triage.json"),
        r#"{"complexity": "trivial", "affected_files": ["catalog/src/fix.rs"], "related_spec": "specs/product/library-catalog.md"}"#,
    );
    s.repo.write(
        &format!("{dir}/state.json"),
        r#"{"status": "fixed", "branch": "fix/slow"}"#,
    );
    ok(s.root(), &["branch", "fix/slow", "main"]);
    let head = s.commit_on("fix/slow", "catalog/src/fix.rs", "pub fn fix() {}\n");
    let criteria = ["DF-1", "DF-2", "DF-3", "DF-4", "DF-5"].map(
        |id| serde_json::json!({"id": id, "status": "met", "evidence": "catalog/src/fix.rs:1"}),
    );
    let answer = serde_json::json!({
        "dimensions": crate::support::verdicts::dimensions(),
        "verdict": "approve",
        "expectations": "Search stays within its limits.",
        "criteria": criteria,
        "spec_verification": [{"spec_quote": "Search returns at most 20 results.", "spec_section": "Search",
                               "satisfied": true, "evidence": "catalog/src/fix.rs:1", "notes": ""}],
        "issues": [],
        "defect_scope_check": {"scope_ok": true, "large_diff": false},
        "scope_violations": []
    });
    let server = ModelServer::scripted(vec![Reply::openai(&answer.to_string())]);
    s.repo.config(&format!(
        "[llm]\nprovider = \"openai\"\nbase_url = \"{}\"\nmodel = \"test-model\"\ntimeout_secs = 5\nmax_retries = 0\n",
        server.url()
    ));
    let run = speed(s.root(), &["review", "--defect", "slow-search"], &[]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    let run = s.merge("fix/slow", &[]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    assert!(
        run.stderr
            .contains(&format!("defect slow-search approved at {}", &head[..10])),
        "{}",
        run.stderr
    );
}

#[test]
fn every_path_has_a_time_limit_and_a_failure_blocks_unless_allowed() {
    let s = Setup::new();
    let main = rev(s.root(), "main");
    s.repo.config("[hook]\ntimeout_secs = 0.000001\n");
    let run = s.merge("speed/task-1", &[]);
    assert_ne!(run.code, 0, "{}", run.transcript());
    assert!(
        run.stderr.contains("did not finish within"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("the merge is blocked"),
        "{}",
        run.stderr
    );
    s.abort(&main);

    s.repo
        .config("[hook]\ntimeout_secs = 0.000001\non_error = \"allow\"\n");
    let run = s.merge("speed/task-1", &[]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    assert!(run.stderr.contains("goes ahead anyway"), "{}", run.stderr);
    ok(s.root(), &["reset", "-q", "--hard", &main]);

    // Someone else's hook that hangs is stopped.
    s.repo.config("[hook]\nlocal_timeout_secs = 1\n");
    let hooks = s.root().join(".git/hooks");
    std::fs::write(
        hooks.join("pre-merge-commit.local"),
        "#!/bin/sh\nsleep 60\n",
    )
    .unwrap();
    set_executable(&hooks.join("pre-merge-commit.local"));
    let started = Instant::now();
    let run = s.merge("speed/task-1", &[]);
    assert_ne!(run.code, 0, "{}", run.transcript());
    assert!(
        run.stderr.contains("did not finish within 1 s"),
        "{}",
        run.stderr
    );
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
    s.abort(&main);
}

#[test]
fn a_hook_without_speed_on_path_blocks_and_says_why() {
    let s = Setup::new();
    let main = rev(s.root(), "main");
    let run = git_env(
        s.root(),
        &["merge", "--no-ff", "--no-edit", "speed/task-1"],
        &[("PATH", "/usr/bin:/bin:/usr/local/bin")],
    );
    assert_ne!(run.code, 0, "{}", run.transcript());
    assert!(run.stderr.contains("cannot run 'speed'"), "{}", run.stderr);
    s.abort(&main);

    // SPEED_BIN names it.
    let run = git_env(
        s.root(),
        &["merge", "--no-ff", "--no-edit", "speed/task-1"],
        &[
            ("PATH", "/usr/bin:/bin:/usr/local/bin"),
            ("SPEED_BIN", env!("CARGO_BIN_EXE_speed")),
        ],
    );
    assert!(
        run.stderr.contains("the merge is blocked"),
        "{}",
        run.transcript()
    );
    s.abort(&main);
}

fn set_executable(path: &Path) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
}

#[test]
fn a_miss_is_reviewed_when_review_on_miss_is_set() {
    let s = Setup::new();
    let server = ModelServer::scripted(vec![Reply::openai(&text(&verdicts::approve_task_1()))]);
    s.repo.config(&format!(
        "[llm]\nprovider = \"openai\"\nbase_url = \"{}\"\nmodel = \"test-model\"\ntimeout_secs = 5\nmax_retries = 0\n[guardian]\nenabled = false\n[hook]\nreview_on_miss = true\n",
        server.url()
    ));
    let run = s.merge("speed/task-1", &[]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    assert!(
        run.stderr
            .contains("reviewing task 1 (feature library-catalog)"),
        "{}",
        run.stderr
    );
    assert_eq!(server.requests().len(), 1);
    assert_eq!(s.log_lines()[0]["decision"], "approve");

    // Without it, a miss calls no model.
    let main = rev(s.root(), "main");
    s.repo.config(&format!(
        "[llm]\nprovider = \"openai\"\nbase_url = \"{}\"\nmodel = \"test-model\"\n",
        server.url()
    ));
    let run = s.merge("speed/task-2", &[]);
    assert_ne!(run.code, 0, "{}", run.transcript());
    assert_eq!(server.requests().len(), 1);
    s.abort(&main);
}

#[test]
fn a_branch_cannot_configure_the_gate_that_judges_it() {
    let s = Setup::new();
    let main = rev(s.root(), "main");
    // The branch brings a configuration that would let any failure through
    // and fail at once.
    let wt = s.root().parent().unwrap().join("wt-config");
    ok(
        s.root(),
        &[
            "worktree",
            "add",
            "-q",
            wt.to_str().unwrap(),
            "speed/task-1",
        ],
    );
    std::fs::create_dir_all(wt.join(".speed")).unwrap();
    std::fs::write(
        wt.join(".speed/config.toml"),
        "[hook]\ntimeout_secs = 0.000001\non_error = \"allow\"\nunknown = \"allow\"\n",
    )
    .unwrap();
    ok(&wt, &["add", ".speed/config.toml"]);
    ok(&wt, &["commit", "-q", "-m", "relax the gate"]);

    let run = s.merge("speed/task-1", &[]);
    assert_ne!(run.code, 0, "{}", run.transcript());
    assert!(
        run.stderr.contains("the merge is blocked: 1 piece of work"),
        "{}",
        run.stderr
    );
    assert!(!run.stderr.contains("goes ahead anyway"), "{}", run.stderr);
    s.abort(&main);
}
