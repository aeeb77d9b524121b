//! A person's review of a model's approval (`review.human`): `require`
//! holds the approval until `speed approve` (refused once the branch moved)
//! or `speed reject`; batch mode lists it as waiting and asks no model;
//! `prompt` asks on a terminal (driven here through a pseudo-terminal) and
//! acts as `require` off one. The merge gate's side is in `hooks`.

use std::io::{Read, Write};
use std::os::fd::{FromRawFd, OwnedFd};
use std::process::Stdio;

use serde_json::{Value, json};

use crate::support::git::ok;
use crate::support::model_server::{ModelServer, Reply};
use crate::support::repo::{self, TempRepo};
use crate::support::speed::{Run, command, speed};
use crate::support::verdicts::{self, text};

fn configure(repo: &TempRepo, server: &ModelServer, human: &str) {
    repo.config(&format!(
        "[llm]\nprovider = \"openai\"\nbase_url = \"{}\"\nmodel = \"test-model\"\ntimeout_secs = 5\nmax_retries = 0\n[guardian]\nenabled = false\n[review]\nhuman = \"{human}\"\n",
        server.url()
    ));
}

fn approving_server() -> ModelServer {
    ModelServer::start(|_| Reply::openai(&text(&verdicts::approve_task_1())))
}

fn decisions(repo: &TempRepo) -> Vec<String> {
    repo.log()
        .iter()
        .map(|l| l["decision"].as_str().unwrap_or_default().to_string())
        .collect()
}

#[test]
fn require_holds_an_approval_until_a_person_approves_it() {
    let repo = repo::example();
    let server = approving_server();
    configure(&repo, &server, "require");
    let run = speed(repo.path(), &["review", "--task-id", "1", "--json"], &[]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    let out: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(out["reviews"][0]["verdict"], "approve");
    assert_eq!(out["reviews"][0]["human_review"]["status"], "pending");
    let task = repo.task("1");
    let head = repo.log()[0]["head_commit"].as_str().unwrap().to_string();
    assert_eq!(task["review_verdict"], "approve");
    assert_eq!(task["human_review"]["status"], "pending");
    assert_eq!(task["human_review"]["head_commit"], head.as_str());
    assert_eq!(repo.log()[0]["human_review"], "pending");
    let summary = repo.read(task["review_summary"].as_str().unwrap());
    assert!(summary.contains("a person's review: pending"), "{summary}");

    // Batch mode: not covered, but the same diff is not put to the model
    // again (the other tasks are left out of the batch).
    for id in ["2", "3"] {
        let mut other = repo.task(id);
        other["status"] = json!("running");
        repo.write(&repo.task_path(id), &other.to_string());
    }
    let run = speed(repo.path(), &["review", "--json"], &[]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    assert_eq!(server.requests().len(), 1, "no second model call");
    let out: Value = serde_json::from_str(&run.stdout).unwrap();
    let skipped = out["skipped"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["task_id"] == "1")
        .unwrap()
        .clone();
    assert_eq!(skipped["awaiting_human"], true);
    assert!(
        skipped["reason"]
            .as_str()
            .unwrap()
            .contains("waiting for a person's review"),
        "{skipped}"
    );
    let run = speed(repo.path(), &["review"], &[]);
    assert!(
        run.stderr.contains(
            "approved by the model and waiting for a person (speed approve or speed reject)"
        ),
        "{}",
        run.stderr
    );

    // Nobody named: refused as a usage of the command.
    let run = speed(
        repo.path(),
        &["approve", "--task-id", "1", "--by", "  "],
        &[],
    );
    assert_eq!(run.code, 1, "{}", run.transcript());
    assert!(run.stderr.contains("--by"), "{}", run.stderr);

    let run = speed(
        repo.path(),
        &[
            "approve",
            "--task-id",
            "1",
            "--by",
            "Ana",
            "--note",
            "read it twice",
        ],
        &[],
    );
    assert_eq!(run.code, 0, "{}", run.transcript());
    assert!(
        run.stderr.contains("task 1 approved by Ana"),
        "{}",
        run.stderr
    );
    let task = repo.task("1");
    assert_eq!(
        task["human_review"],
        json!({"status": "approved", "by": "Ana", "at": task["human_review"]["at"],
               "note": "read it twice", "head_commit": head,
               "requested_at": task["human_review"]["requested_at"], "via": "speed approve"})
    );
    let entry = task["review_history"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(entry["verdict"], "human_approve");
    assert_eq!(entry["by"], "Ana");
    let line = repo.log().pop().unwrap();
    assert_eq!(line["decision"], "human_approve");
    assert_eq!(line["head_commit"], head.as_str());
    assert_eq!(line["note"], "read it twice");

    // Approved once: there is nothing more to approve or reject.
    let run = speed(
        repo.path(),
        &["approve", "--task-id", "1", "--by", "Bo"],
        &[],
    );
    assert_eq!(run.code, 1, "{}", run.transcript());
    assert!(
        run.stderr.contains("a person already approved it"),
        "{}",
        run.stderr
    );
    // And batch mode now counts it covered.
    let run = speed(repo.path(), &["review", "--json"], &[]);
    let out: Value = serde_json::from_str(&run.stdout).unwrap();
    let skipped = out["skipped"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["task_id"] == "1")
        .unwrap()
        .clone();
    assert!(skipped.get("awaiting_human").is_none(), "{skipped}");

    // The saved report said the approval waited for a person; every format
    // of `speed show` says that and what holds now: the person's approval.
    for format in ["human", "markdown", "html"] {
        let mut run = speed(
            repo.path(),
            &["show", "--task-id", "1", "--format", format],
            &[],
        );
        assert_eq!(run.code, 0, "{}", run.transcript());
        // Markdown escapes its punctuation and marks its labels.
        run.stdout = run.stdout.replace('\\', "").replace("**", "");
        assert!(
            run.stdout.contains("Waiting for a person (review.human)"),
            "{format}: {}",
            run.stdout
        );
        assert!(
            run.stdout
                .contains("Now: task 1 (feature library-catalog) at ")
                && run.stdout.contains("is covered: approved at ")
                && run.stdout.contains("confirmed by Ana"),
            "{format}: {}",
            run.stdout
        );
    }

    // Merged and its branch deleted: what holds now is that the work is on
    // main, as batch mode says, not that the branch cannot be diffed.
    ok(
        repo.path(),
        &[
            "-c",
            "user.name=Ana",
            "-c",
            "user.email=ana@example.com",
            "merge",
            "--no-ff",
            "-q",
            "-m",
            "Merge task 1",
            "speed/task-1",
        ],
    );
    ok(repo.path(), &["branch", "-q", "-D", "speed/task-1"]);
    for format in ["human", "markdown", "html"] {
        let mut run = speed(
            repo.path(),
            &["show", "--task-id", "1", "--format", format],
            &[],
        );
        assert_eq!(run.code, 0, "{}", run.transcript());
        // The page escapes its apostrophes.
        run.stdout = run
            .stdout
            .replace('\\', "")
            .replace("**", "")
            .replace("&#39;", "'");
        assert!(
            run.stdout.contains(&format!(
                "Now: task 1 (feature library-catalog) is merged into main: its branch speed/task-1 is deleted, and the last head reviewed, {}, is in main's history",
                &head[..10]
            )),
            "{format}: {}",
            run.stdout
        );
        assert!(
            !run.stdout.contains("cannot be diffed"),
            "{format}: {}",
            run.stdout
        );
    }
}

#[test]
fn reject_sends_the_task_back_and_approve_is_refused_once_the_branch_moved() {
    let repo = repo::example();
    let server = approving_server();
    configure(&repo, &server, "require");
    let run = speed(repo.path(), &["review", "--task-id", "1"], &[]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    assert!(
        run.stdout
            .contains("Waiting for a person (review.human): speed approve --task-id 1"),
        "{}",
        run.stdout
    );

    // Only what the model reviewed can be approved.
    let reviewed = repo.log()[0]["head_commit"].as_str().unwrap().to_string();
    let git = |args: &[&str]| {
        let out = std::process::Command::new("git")
            .current_dir(repo.path())
            .args(args)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_AUTHOR_NAME", "T")
            .env("GIT_AUTHOR_EMAIL", "t@example.com")
            .env("GIT_COMMITTER_NAME", "T")
            .env("GIT_COMMITTER_EMAIL", "t@example.com")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    };
    let wt = repo.path().parent().unwrap().join("wt-task-1");
    git(&[
        "worktree",
        "add",
        "-q",
        wt.to_str().unwrap(),
        "speed/task-1",
    ]);
    std::fs::write(wt.join("catalog/src/extra.rs"), "pub fn extra() {}\n").unwrap();
    let in_wt = |args: &[&str]| {
        let mut all = vec!["-C", wt.to_str().unwrap()];
        all.extend_from_slice(args);
        git(&all)
    };
    in_wt(&["add", "catalog/src/extra.rs"]);
    in_wt(&["commit", "-q", "-m", "more"]);
    let run = speed(
        repo.path(),
        &["approve", "--task-id", "1", "--by", "Ana"],
        &[],
    );
    assert_eq!(run.code, 1, "{}", run.transcript());
    assert!(
        run.stderr.contains(&format!(
            "branch speed/task-1 moved since the model's review (it approved {}",
            &reviewed[..10]
        )),
        "{}",
        run.stderr
    );
    assert_eq!(repo.task("1")["human_review"]["status"], "pending");

    // A rejection needs a reason, and sends the task back.
    let run = speed(
        repo.path(),
        &["reject", "--task-id", "1", "--by", "Ana", "--reason", " "],
        &[],
    );
    assert_eq!(run.code, 1, "{}", run.transcript());
    let before = repo.task("1")["revision_count"].as_u64().unwrap_or(0);
    let run = speed(
        repo.path(),
        &[
            "reject",
            "--task-id",
            "1",
            "--by",
            "Ana",
            "--reason",
            "Authors with accents are not found: fold diacritics.",
        ],
        &[],
    );
    assert_eq!(run.code, 0, "{}", run.transcript());
    let task = repo.task("1");
    assert_eq!(task["status"], "pending");
    assert_eq!(task["review_verdict"], "request_changes");
    assert_eq!(
        task["review_feedback"],
        "Authors with accents are not found: fold diacritics."
    );
    assert_eq!(task["revision_count"], before + 1);
    assert_eq!(task["human_review"]["status"], "rejected");
    assert_eq!(task["human_review"]["head_commit"], reviewed.as_str());
    assert_eq!(
        task["revision_context"]["revision_notes"],
        "Authors with accents are not found: fold diacritics."
    );
    assert_eq!(decisions(&repo), ["approve", "human_reject"]);
    // A request for changes is never turned into an approval here.
    let run = speed(
        repo.path(),
        &["approve", "--task-id", "1", "--by", "Ana"],
        &[],
    );
    assert_eq!(run.code, 1, "{}", run.transcript());
    assert!(run.stderr.contains("speed override"), "{}", run.stderr);
    let run = speed(
        repo.path(),
        &["reject", "--task-id", "1", "--by", "Ana", "--reason", "x"],
        &[],
    );
    assert_eq!(run.code, 1, "{}", run.transcript());
}

#[test]
fn prompt_off_a_terminal_acts_as_require_and_auto_asks_nobody() {
    let repo = repo::example();
    let server = approving_server();
    configure(&repo, &server, "prompt");
    let run = speed(repo.path(), &["review", "--task-id", "1"], &[]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    assert!(!run.stderr.contains("[a]pprove"), "{}", run.stderr);
    assert_eq!(repo.task("1")["human_review"]["status"], "pending");

    // Back to auto: the next approval waits for nobody, and withdraws the
    // request the earlier one made.
    configure(&repo, &server, "auto");
    let run = speed(repo.path(), &["review", "--task-id", "1"], &[]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    assert_eq!(repo.task("1")["human_review"], Value::Null);
    assert!(repo.log()[1].get("human_review").is_none());
}

/// `speed review` with stdin and stderr on a pseudo-terminal (as a person
/// at a terminal runs it), `answers` typed in, stdout piped.
fn review_at_a_terminal(repo: &TempRepo, answers: &str) -> (Run, String) {
    let (mut master, slave) = pty();
    let mut cmd = command(repo.path(), &["review", "--task-id", "1"], &[]);
    cmd.stdin(Stdio::from(slave.try_clone().unwrap()))
        .stderr(Stdio::from(slave))
        .stdout(Stdio::piped());
    let mut child = cmd.spawn().expect("speed starts");
    // Dropped with `cmd`: the child holds the only copies of the slave now.
    drop(cmd);
    master.write_all(answers.as_bytes()).unwrap();
    let reader = std::thread::spawn(move || {
        let mut seen = Vec::new();
        let mut buf = [0u8; 4096];
        // EIO once the child has gone and the slave is closed.
        while let Ok(n) = master.read(&mut buf) {
            if n == 0 {
                break;
            }
            seen.extend_from_slice(&buf[..n]);
        }
        String::from_utf8_lossy(&seen).into_owned()
    });
    let mut stdout = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut stdout)
        .unwrap();
    let status = child.wait().unwrap();
    let terminal = reader.join().unwrap();
    let run = Run {
        code: status.code().unwrap_or(-1),
        stdout,
        stderr: terminal.clone(),
    };
    (run, terminal)
}

/// A pseudo-terminal: (master, slave).
fn pty() -> (std::fs::File, OwnedFd) {
    let (mut master, mut slave) = (-1, -1);
    // SAFETY: openpty writes two descriptors it opened into the pointers
    // given; no name, termios or window size are asked for.
    let rc = unsafe {
        libc::openpty(
            &mut master,
            &mut slave,
            std::ptr::null_mut(),
            std::ptr::null(),
            std::ptr::null(),
        )
    };
    assert_eq!(rc, 0, "openpty: {}", std::io::Error::last_os_error());
    // SAFETY: both descriptors were just opened by openpty and are owned
    // by nothing else.
    unsafe {
        (
            std::fs::File::from_raw_fd(master),
            OwnedFd::from_raw_fd(slave),
        )
    }
}

#[test]
fn prompt_on_a_terminal_shows_the_summary_and_records_the_answer() {
    let repo = repo::example();
    let server = approving_server();
    configure(&repo, &server, "prompt");
    let (run, terminal) = review_at_a_terminal(&repo, "r\nThe hint is missing.\n");
    assert_eq!(run.code, 50, "{}", run.transcript());
    for needle in [
        "Human review: task 1",
        "# Review of task 1: Search books by title and author",
        "## Scores",
        "[a]pprove, [r]eject or [s]kip?",
        "task 1 rejected by",
    ] {
        assert!(terminal.contains(needle), "{needle:?}\n{terminal}");
    }
    let task = repo.task("1");
    assert_eq!(task["status"], "pending");
    assert_eq!(task["review_feedback"], "The hint is missing.");
    assert_eq!(task["human_review"]["via"], "the prompt after speed review");
    assert_eq!(decisions(&repo), ["approve", "human_reject"]);

    // Approve at the prompt: covered, exit 0; a skip approves nothing.
    let repo = repo::example();
    configure(&repo, &server, "prompt");
    let (run, _) = review_at_a_terminal(&repo, "s\nlunch first\n");
    assert_eq!(run.code, 0, "{}", run.transcript());
    let task = repo.task("1");
    assert_eq!(task["human_review"]["status"], "pending");
    let skip = task["review_history"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(skip["verdict"], "skipped");
    assert_eq!(skip["reason"], "lunch first");
    let (run, _) = review_at_a_terminal(&repo, "a\n\n");
    assert_eq!(run.code, 0, "{}", run.transcript());
    assert_eq!(repo.task("1")["human_review"]["status"], "approved");
    assert_eq!(
        decisions(&repo),
        ["approve", "skipped", "approve", "human_approve"]
    );
}

#[test]
fn a_hand_written_pending_review_is_not_an_approval_to_confirm() {
    let repo = repo::example();
    let server = approving_server();
    configure(&repo, &server, "auto");
    let run = speed(repo.path(), &["review", "--task-id", "1"], &[]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    let head = repo.log()[0]["head_commit"].clone();
    let mut task = repo.task("1");
    task["human_review"] = json!({"status": "pending", "requested_at": "2025-01-01T00:00:00Z",
                                  "head_commit": head});
    repo.write(&repo.task_path("1"), &task.to_string());
    let run = speed(
        repo.path(),
        &["approve", "--task-id", "1", "--by", "Mallory"],
        &[],
    );
    assert_eq!(run.code, 1, "{}", run.transcript());
    assert!(
        run.stderr
            .contains("no model approval waiting for a person is recorded at"),
        "{}",
        run.stderr
    );
    assert_eq!(decisions(&repo), ["approve"], "nothing was recorded");
}

/// The model's approval of task 1 rating the previous findings listed.
fn approval_rating(ids: &[&str]) -> Value {
    let mut answer = verdicts::approve_task_1();
    answer["previous_findings"] = ids
        .iter()
        .map(|id| json!({"id": id, "status": "resolved", "evidence": "catalog/src/search.rs:20"}))
        .collect();
    answer
}

#[test]
fn a_persons_reason_is_a_finding_the_next_review_of_that_head_cannot_approve_past() {
    let repo = repo::example();
    let answers = std::sync::Mutex::new(vec![
        text(&verdicts::approve_task_1()),
        text(&approval_rating(&["PF-1"])),
    ]);
    let server = ModelServer::start(move |_| {
        let mut answers = answers.lock().unwrap();
        let next = if answers.len() > 1 {
            answers.remove(0)
        } else {
            answers[0].clone()
        };
        Reply::openai(&next)
    });
    configure(&repo, &server, "require");
    let run = speed(repo.path(), &["review", "--task-id", "1"], &[]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    let reason = "Authors with accents are not found: fold diacritics.";
    let run = speed(
        repo.path(),
        &[
            "reject",
            "--task-id",
            "1",
            "--by",
            "Ana",
            "--reason",
            reason,
        ],
        &[],
    );
    assert_eq!(run.code, 0, "{}", run.transcript());
    // The reason is a fix in the queue, a coding agent's to act on.
    let run = speed(repo.path(), &["fix", "list", "--format", "json"], &[]);
    let fixes: Value = serde_json::from_str(&run.stdout).unwrap();
    let fix = &fixes["fixes"][0];
    assert_eq!(fix["source"], "person", "{fixes}");
    assert_eq!(fix["finding"]["message"], reason);
    assert_eq!(fixes["replans"], json!([]));

    // The same head again: the model is shown the reason and claims it
    // resolved; nothing changed since, so the approval does not stand.
    let run = speed(repo.path(), &["review", "--task-id", "1", "--json"], &[]);
    assert_eq!(run.code, 50, "{}", run.transcript());
    let prompt = server.requests()[1].json()["messages"][0]["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        prompt.contains(&format!(
            "PF-1 (Ana's rejection): {reason} (nothing changed since this commit was rejected)"
        )),
        "{prompt}"
    );
    let out: Value = serde_json::from_str(&run.stdout).unwrap();
    let review = &out["reviews"][0];
    assert_eq!(review["verdict"], "request_changes");
    assert_eq!(
        review["overrules"][0]["rule"],
        "previous_finding_unresolved"
    );
    let pf = &review["previous_findings"][0];
    assert_eq!(
        (
            pf["source"].as_str(),
            pf["by"].as_str(),
            pf["status"].as_str()
        ),
        (Some("person"), Some("Ana"), Some("unresolved"))
    );
    let task = repo.task("1");
    assert_eq!(task["status"], "pending");
    assert_eq!(
        task["revision_count"], 1,
        "the head Ana rejected: no new revision"
    );
    let attempts: Vec<&Value> = task["review_history"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| &e["attempt"])
        .collect();
    assert_eq!(attempts, [&json!(1), &json!(2), &json!(3)]);
    // Still a fix, still open.
    let run = speed(repo.path(), &["fix", "list", "--format", "json"], &[]);
    let fixes: Value = serde_json::from_str(&run.stdout).unwrap();
    // (beside the nits of the model's first approval)
    let theirs: Vec<&Value> = fixes["fixes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["source"] == "person")
        .collect();
    assert_eq!(theirs.len(), 1, "{fixes:#}");
    assert_eq!(theirs[0]["status"], "pending");
}
