//! The fix queue end to end: reviews of a task turn their blocking
//! findings into fixes (`.speed/fixes/`), the same finding in a later
//! review is the same fix, a fix no longer found is resolved, a skipped
//! one stays skipped; `speed fix list|show|done|skip|prompt`; and `speed
//! fix run` with scripted agents: a temporary worktree (never the user's
//! checkout), the finding's check run again on the agent's commit, the
//! branch moved only with --update-branch, only as a fast-forward, never
//! when it moved meanwhile, and nothing left behind on a timeout or Ctrl-C.

use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};

use crate::support::repo::{self, RepoBuilder, TempRepo};
use crate::support::speed::{Run, speed};

const SPEC: &str = "# Fines\n\n## Fines\n\nA late book costs 10 cents a day.\n";

const CODE: &str = "def fine(days):\n    return days * 10\n";

/// The task's work: three markers a linter (a command check with the regex
/// parser, reading the checkout) reports.
const MARKED: &str = "def fine(days):\n    grace = 2  # XXX grace is never used\n    debug = True  # XXX debug flag left on\n    print(days)  # XXX print left in\n    return days * 10\n";

const LINTER: &str = r##"[llm]
provider = "none"

[[checks.command]]
name = "markers"
run = ["sh", "-c", 'grep -rn "# XXX" fines; test $? -eq 1']
parser = "regex"
pattern = '^(?P<file>[^:]+):(?P<line>\d+):.*# XXX (?P<message>.+)$'
category = "lint"
"##;

fn marked_repo() -> TempRepo {
    let (tmp, root) = repo::empty();
    let mut b = RepoBuilder::init(&root).unwrap();
    b.commit(
        "main",
        None,
        &[("specs/product/fines.md", SPEC), ("fines/calc.py", CODE)],
        &[],
        "main",
    )
    .unwrap();
    b.commit(
        "speed/task-1",
        Some("main"),
        &[("fines/calc.py", MARKED)],
        &[],
        "work",
    )
    .unwrap();
    b.checkout("main").unwrap();
    let repo = repo::adopt(tmp, root);
    repo.write(
        ".speed/tasks/1.json",
        &json!({"id": 1, "title": "Fines", "status": "done", "files_touched": ["fines/calc.py"],
                "spec_references": [{"spec": "specs/product/fines.md", "section": "Fines"}]})
        .to_string(),
    );
    repo.config(LINTER);
    git(repo.path(), &["config", "user.name", "Agent"]);
    git(repo.path(), &["config", "user.email", "agent@example.com"]);
    repo
}

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

fn review(repo: &TempRepo) -> Run {
    let run = speed(repo.path(), &["review", "--task-id", "1", "--offline"], &[]);
    assert!(run.code == 50 || run.code == 0, "{}", run.transcript());
    run
}

fn fixes(repo: &TempRepo, all: bool) -> Vec<Value> {
    let mut args = vec!["fix", "list", "--format", "json"];
    if all {
        args.push("--all");
    }
    let run = speed(repo.path(), &args, &[]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    let out: Value = serde_json::from_str(&run.stdout).unwrap();
    out["fixes"].as_array().unwrap().clone()
}

/// The fix whose message says `words`.
fn fix_saying<'a>(fixes: &'a [Value], words: &str) -> &'a Value {
    fixes
        .iter()
        .find(|f| f["finding"]["message"].as_str().unwrap().contains(words))
        .unwrap_or_else(|| panic!("no fix says {words:?} in {fixes:?}"))
}

fn id_of(fixes: &[Value], words: &str) -> String {
    fix_saying(fixes, words)["id"].as_str().unwrap().to_string()
}

#[test]
fn the_queue_follows_a_task_through_two_reviews() {
    let repo = marked_repo();
    review(&repo);
    let first = fixes(&repo, false);
    assert_eq!(first.len(), 3, "{first:?}");
    let fix = fix_saying(&first, "grace is never used");
    for key in [
        "id",
        "task",
        "feature",
        "priority",
        "source",
        "finding",
        "description",
        "status",
        "created_at",
        "completed_at",
    ] {
        assert!(fix.get(key).is_some(), "{key} missing from {fix}");
    }
    assert_eq!(fix["task"], "1");
    assert_eq!(fix["source"], "check");
    assert_eq!(fix["status"], "pending");
    assert_eq!(fix["priority"], 2, "lint comes second: {fix}");
    assert_eq!(fix["finding"]["file"], "fines/calc.py");
    assert_eq!(fix["finding"]["line"], 2);
    assert_eq!(fix["finding"]["category"], "lint");
    // Reviewing the same work again makes no new fix.
    review(&repo);
    assert_eq!(fixes(&repo, true).len(), 3);

    let debug = id_of(&first, "debug flag left on");
    let run = speed(
        repo.path(),
        &[
            "fix",
            "skip",
            &debug[..6],
            "--reason",
            "the flag is read by the test harness",
        ],
        &[],
    );
    assert_eq!(run.code, 0, "{}", run.transcript());

    // The developer removes the unused variable (the lines below move up).
    let mut b = RepoBuilder::open(repo.path()).unwrap();
    b.commit(
        "speed/task-1",
        None,
        &[(
            "fines/calc.py",
            "def fine(days):\n    debug = True  # XXX debug flag left on\n    print(days)  # XXX print left in\n    return days * 10\n",
        )],
        &[],
        "drop grace",
    )
    .unwrap();
    review(&repo);
    let all = fixes(&repo, true);
    assert_eq!(all.len(), 3, "{all:?}");
    assert_eq!(
        fix_saying(&all, "grace is never used")["status"],
        "resolved"
    );
    assert!(fix_saying(&all, "grace is never used")["completed_at"].is_string());
    let skipped = fix_saying(&all, "debug flag left on");
    assert_eq!(skipped["status"], "skipped");
    assert_eq!(skipped["reason"], "the flag is read by the test harness");
    let print = fix_saying(&all, "print left in");
    assert_eq!(print["status"], "pending");
    // Found again one line higher: the same fix, at its new place.
    assert_eq!(print["finding"]["line"], 3);
    let open = fixes(&repo, false);
    assert_eq!(open.len(), 1);
    assert_eq!(open[0]["id"], print["id"]);

    let id = print["id"].as_str().unwrap();
    let show = speed(repo.path(), &["fix", "show", id], &[]);
    assert_eq!(show.code, 0, "{}", show.transcript());
    for part in [
        "pending, priority 2",
        "task 1, branch speed/task-1",
        "at: fines/calc.py:3",
        "checked by: sh -c grep -rn",
        "found by the review of",
    ] {
        assert!(show.stdout.contains(part), "{part:?} in\n{}", show.stdout);
    }
    let list = speed(repo.path(), &["fix", "list", "--task-id", "1"], &[]);
    assert!(
        list.stdout.contains(id) && list.stdout.contains("fines/calc.py:3"),
        "{}",
        list.transcript()
    );
    assert!(
        list.stderr
            .contains("2 more completed, skipped or resolved"),
        "{}",
        list.stderr
    );
    let done = speed(repo.path(), &["fix", "done", id], &[]);
    assert_eq!(done.code, 0, "{}", done.transcript());
    assert!(fixes(&repo, false).is_empty());
    let again = speed(repo.path(), &["fix", "done", id], &[]);
    assert_eq!(again.code, 1);
    assert!(
        again
            .stderr
            .contains("is completed: nothing to mark it done"),
        "{}",
        again.stderr
    );
    let unknown = speed(repo.path(), &["fix", "show", "0123456789"], &[]);
    assert_eq!(unknown.code, 1);
    assert!(
        unknown.stderr.contains("no fix 0123456789"),
        "{}",
        unknown.stderr
    );
    let blank = speed(repo.path(), &["fix", "skip", id, "--reason", "  "], &[]);
    assert_eq!(blank.code, 1, "{}", blank.transcript());
}

#[test]
fn the_prompt_is_what_an_agent_needs() {
    let repo = marked_repo();
    review(&repo);
    let id = id_of(&fixes(&repo, false), "print left in");
    let run = speed(repo.path(), &["fix", "prompt", &id], &[]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    for part in [
        &format!("# Fix task {id}") as &str,
        "- File: fines/calc.py",
        "- Line: 4",
        "print left in",
        "grep -rn",
        "Change only what the fix needs",
        "fix(lint): print left in",
    ] {
        assert!(run.stdout.contains(part), "{part:?} in\n{}", run.stdout);
    }
}

/// `speed fix run ID [--update-branch] --agent sh -c SCRIPT`.
fn fix_run(repo: &TempRepo, id: &str, update: bool, script: &str, extra: &[&str]) -> Run {
    let mut args = vec!["fix", "run", id];
    if update {
        args.push("--update-branch");
    }
    args.extend_from_slice(extra);
    args.extend(["--agent", "sh", "-c", script]);
    speed(repo.path(), &args, &[])
}

fn status(repo: &TempRepo, id: &str) -> String {
    fixes(repo, true).iter().find(|f| f["id"] == id).unwrap()["status"]
        .as_str()
        .unwrap()
        .to_string()
}

/// Only the user's own worktree, on main, with nothing changed outside
/// `.speed/`.
fn untouched_checkout(repo: &TempRepo) {
    let list = git(repo.path(), &["worktree", "list", "--porcelain"]);
    assert_eq!(list.matches("worktree ").count(), 1, "{list}");
    assert_eq!(
        git(repo.path(), &["symbolic-ref", "HEAD"]),
        "refs/heads/main"
    );
    let changed = git(
        repo.path(),
        &["status", "--porcelain", "--untracked-files=all"],
    );
    assert!(changed.lines().all(|l| l.contains(".speed/")), "{changed}");
}

#[test]
fn fix_run_with_a_scripted_agent() {
    let repo = marked_repo();
    review(&repo);
    let open = fixes(&repo, false);
    let (grace, debug, print) = (
        id_of(&open, "grace is never used"),
        id_of(&open, "debug flag left on"),
        id_of(&open, "print left in"),
    );
    let start = git(repo.path(), &["rev-parse", "speed/task-1"]);
    let seen = tempfile::tempdir().unwrap();
    let prompt_file = seen.path().join("prompt.txt");

    // Fixed and checked, the branch left where it was.
    let script = format!(
        "cat > '{}'; sed -i '/grace is never used/d' fines/calc.py && git commit -qam 'fix(lint): grace'",
        prompt_file.display()
    );
    let run = fix_run(&repo, &grace, false, &script, &[]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    assert!(
        run.stderr
            .contains("is completed: its check no longer finds it"),
        "{}",
        run.stderr
    );
    let commit = run.stdout.trim().to_string();
    assert_eq!(commit.len(), 40, "{}", run.transcript());
    assert!(
        std::fs::read_to_string(&prompt_file)
            .unwrap()
            .contains(&format!("# Fix task {grace}"))
    );
    assert_eq!(git(repo.path(), &["rev-parse", "speed/task-1"]), start);
    assert_eq!(
        git(
            repo.path(),
            &["rev-parse", &format!("refs/speed/fixes/{grace}")]
        ),
        commit
    );
    assert!(
        run.stderr
            .contains("was not moved (--update-branch moves it)"),
        "{}",
        run.stderr
    );
    assert_eq!(status(&repo, &grace), "completed");
    untouched_checkout(&repo);

    // No commit: still pending, and said so (exit 50).
    let run = fix_run(&repo, &debug, false, "cat > /dev/null; echo thinking", &[]);
    assert_eq!(run.code, 50, "{}", run.transcript());
    assert!(
        run.stderr.contains("the agent made no commit"),
        "{}",
        run.stderr
    );
    assert_eq!(status(&repo, &debug), "pending");

    // A commit that does not fix it: the check still finds it.
    let run = fix_run(
        &repo,
        &debug,
        true,
        "echo note > NOTES.txt; git add NOTES.txt; git commit -qm notes",
        &[],
    );
    assert_eq!(run.code, 50, "{}", run.transcript());
    assert!(run.stderr.contains("still finds it"), "{}", run.stderr);
    assert_eq!(git(repo.path(), &["rev-parse", "speed/task-1"]), start);
    assert_eq!(status(&repo, &debug), "pending");

    // Fixed with --update-branch: a fast-forward.
    let run = fix_run(
        &repo,
        &print,
        true,
        "sed -i '/print left in/d' fines/calc.py && git commit -qam 'fix(lint): print'",
        &[],
    );
    assert_eq!(run.code, 0, "{}", run.transcript());
    let moved = git(repo.path(), &["rev-parse", "speed/task-1"]);
    assert_eq!(moved, run.stdout.trim());
    assert_eq!(git(repo.path(), &["rev-parse", "speed/task-1~1"]), start);
    assert!(run.stderr.contains("(fast-forward)"), "{}", run.stderr);
    untouched_checkout(&repo);

    // Someone moves the branch while the agent works: the fix is done,
    // the branch is not moved over their commit.
    let script = "S=$(git rev-parse HEAD); echo x > other.txt; git add other.txt; git commit -qm other; \
                  git update-ref refs/heads/speed/task-1 HEAD; git checkout -q --detach $S; \
                  sed -i '/debug flag left on/d' fines/calc.py && git commit -qam 'fix(lint): debug'";
    let run = fix_run(&repo, &debug, true, script, &[]);
    assert_eq!(run.code, 1, "{}", run.transcript());
    assert!(
        run.stderr
            .contains("while the agent worked; it was not moved"),
        "{}",
        run.stderr
    );
    assert_eq!(status(&repo, &debug), "completed");
    let now = git(repo.path(), &["rev-parse", "speed/task-1"]);
    assert_ne!(now, run.stdout.trim());
    assert_eq!(
        git(repo.path(), &["log", "-1", "--format=%s", &now]),
        "other"
    );
    untouched_checkout(&repo);

    // A done fix is not run again.
    let run = fix_run(&repo, &grace, false, "true", &[]);
    assert_eq!(run.code, 1, "{}", run.transcript());
    assert!(
        run.stderr.contains("is completed: nothing to run it"),
        "{}",
        run.stderr
    );
}

#[test]
fn an_agent_past_its_time_limit_is_stopped_and_leaves_nothing() {
    let repo = marked_repo();
    review(&repo);
    let id = id_of(&fixes(&repo, false), "print left in");
    let tmp = tempfile::tempdir().unwrap();
    let started = std::time::Instant::now();
    let mut args = vec![
        "fix",
        "run",
        &id,
        "--timeout",
        "1",
        "--agent",
        "sh",
        "-c",
        "sleep 30",
    ];
    let run = speed(
        repo.path(),
        &std::mem::take(&mut args),
        &[("TMPDIR", tmp.path().to_str().unwrap())],
    );
    assert!(started.elapsed() < std::time::Duration::from_secs(20));
    assert_eq!(run.code, 50, "{}", run.transcript());
    assert!(
        run.stderr.contains("did not finish within 1s"),
        "{}",
        run.stderr
    );
    assert_eq!(status(&repo, &id), "pending");
    assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 0);
    untouched_checkout(&repo);
}

/// Ctrl-C while the agent works: the agent is stopped, the worktree and
/// its administrative files are removed, speed ends like SIGINT.
#[cfg(target_os = "linux")]
#[test]
fn ctrl_c_during_a_fix_run_removes_its_worktree() {
    use std::os::unix::process::ExitStatusExt;
    use std::time::{Duration, Instant};
    let repo = marked_repo();
    review(&repo);
    let id = id_of(&fixes(&repo, false), "print left in");
    let tmp = tempfile::tempdir().unwrap();
    let marks = tempfile::tempdir().unwrap();
    let mark = marks.path().join("where");
    let script = format!("pwd > '{}'; sleep 30", mark.display());
    let mut child = crate::support::speed::command(
        repo.path(),
        &["fix", "run", &id, "--agent", "sh", "-c", &script],
        &[("TMPDIR", tmp.path().to_str().unwrap())],
    )
    .stdout(std::process::Stdio::null())
    .stderr(std::process::Stdio::null())
    .spawn()
    .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    let worktree = loop {
        let written = std::fs::read_to_string(&mark).unwrap_or_default();
        if written.ends_with('\n') {
            break std::path::PathBuf::from(written.trim());
        }
        assert!(Instant::now() < deadline, "the agent never started");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(worktree.join("fines/calc.py").is_file());
    // SAFETY: signals the speed process this test started.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let deadline = Instant::now() + Duration::from_secs(15);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() >= deadline {
            child.kill().ok();
            panic!("speed did not end after Ctrl-C");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(status.signal(), Some(libc::SIGINT), "{status:?}");
    assert!(!worktree.exists(), "{} is left", worktree.display());
    assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 0);
    untouched_checkout(&repo);
}

/// The model's issue as a fix: no check can look for it again, so a fix
/// run leaves it in progress (and may move the branch); the next review,
/// which no longer finds it, resolves it, and its approval's nit is a
/// low-priority fix.
#[test]
fn a_model_finding_is_resolved_by_the_next_review() {
    use crate::support::model_server::{ModelServer, Reply};
    use crate::support::verdicts::{dimensions, text};
    let repo = marked_repo();
    let request_changes = json!({
        "verdict": "request_changes",
        "expectations": "A late book costs 10 cents a day.",
        "criteria": [],
        "spec_verification": [{"spec_quote": "A late book costs 10 cents a day.", "spec_section": "Fines",
                                "satisfied": true, "evidence": "fines/calc.py:5", "notes": ""}],
        "missing_from_spec": [],
        "out_of_scope": [],
        "issues": [{"severity": "major", "file": "fines/calc.py", "line": 2,
                    "message": "The grace variable is assigned and never used", "suggestion": "Remove it"}],
        "strengths": [],
        "dimensions": dimensions()
    });
    let approve = json!({
        "verdict": "approve",
        "expectations": "A late book costs 10 cents a day.",
        "criteria": [],
        "spec_verification": [{"spec_quote": "A late book costs 10 cents a day.", "spec_section": "Fines",
                                "satisfied": true, "evidence": "fines/calc.py:1", "notes": ""}],
        "missing_from_spec": [],
        "out_of_scope": [],
        "issues": [{"severity": "nit", "file": "fines/calc.py", "line": 4,
                    "message": "10 could be a named constant", "suggestion": ""}],
        "strengths": ["Small change"],
        "dimensions": dimensions(),
        // A re-review rates the last review's blocking finding.
        "previous_findings": [{"id": "PF-1", "status": "resolved", "evidence": "fines/calc.py:2 removed"}]
    });
    let server = ModelServer::scripted(vec![
        Reply::openai(&text(&request_changes)),
        Reply::openai(&text(&approve)),
    ]);
    repo.config(&format!(
        "[llm]\nprovider = \"openai\"\nbase_url = \"{}\"\nmodel = \"m\"\nmax_retries = 0\n[guardian]\nenabled = false\n",
        server.url()
    ));
    let run = speed(repo.path(), &["review", "--task-id", "1"], &[]);
    assert_eq!(run.code, 50, "{}", run.transcript());
    let open = fixes(&repo, false);
    assert_eq!(open.len(), 1, "{open:?}");
    let fix = &open[0];
    assert_eq!(fix["source"], "model");
    assert_eq!(fix["priority"], 2);
    assert_eq!(fix["finding"]["suggestion"], "Remove it");
    let id = fix["id"].as_str().unwrap().to_string();
    let start = git(repo.path(), &["rev-parse", "speed/task-1"]);
    let run = fix_run(
        &repo,
        &id,
        true,
        "sed -i -e '/grace/d' -e 's/  # XXX.*//' fines/calc.py && git commit -qam 'fix(model): grace'",
        &[],
    );
    assert_eq!(run.code, 0, "{}", run.transcript());
    assert!(
        run.stderr.contains("the next review decides"),
        "{}",
        run.stderr
    );
    assert_eq!(status(&repo, &id), "in_progress");
    assert_eq!(git(repo.path(), &["rev-parse", "speed/task-1~1"]), start);

    let run = speed(repo.path(), &["review", "--task-id", "1"], &[]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    let all = fixes(&repo, true);
    assert_eq!(fix_saying(&all, "grace variable")["status"], "resolved");
    let nit = fix_saying(&all, "named constant");
    assert_eq!(
        (nit["source"].as_str(), nit["priority"].as_u64()),
        (Some("nit"), Some(25))
    );
    assert_eq!(nit["status"], "pending");
}

#[test]
fn a_failed_fix_command_still_prints_the_json_it_promised() {
    let repo = marked_repo();
    for args in [
        &["fix", "list", "--format", "json", "--bogus"][..],
        &["fix", "show", "0000000000", "--format", "json"],
    ] {
        let run = speed(repo.path(), args, &[]);
        assert_ne!(run.code, 0, "{}", run.transcript());
        let out: Value = serde_json::from_str(&run.stdout)
            .unwrap_or_else(|e| panic!("{e}: {}", run.transcript()));
        assert_eq!(out["fixes"], json!([]), "{args:?}");
        assert!(out["error"].is_string(), "{args:?}");
    }
}
