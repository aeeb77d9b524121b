//! speed's verdicts as git notes (`refs/notes/speed`): written by every
//! decided review on its head commit, carried from a CI runner's throwaway
//! checkout to the remote (`speed notes push`) and into another clone
//! (`speed notes fetch`), where batch mode and the merge hook honour an
//! approval made elsewhere, but only for the very diff and spec it names:
//! a forged or stale note covers nothing.

use serde_json::Value;

use crate::ci::{approval, head, loopback, project};
use crate::support::model_server::{ModelServer, Reply};
use crate::support::runner::{Checkout, git, git_command, speed_on};
use crate::support::speed::{Run, speed};

/// The loopback model approves each task of `project` by the limit its
/// diff raises.
fn approving() -> ModelServer {
    ModelServer::start(|req| {
        let task = (1..=9)
            .find(|i| req.body.contains(&format!("limit_{i}()")))
            .unwrap_or(1);
        Reply::openai(&approval(task))
    })
}

const KEY: [(&str, &str); 1] = [("LOOPBACK_KEY", "k")];

/// The note on `commit` (a JSON object per line), parsed.
fn note(dir: &std::path::Path, commit: &str) -> Vec<Value> {
    git(dir, &["notes", "--ref=speed", "show", commit])
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn git_run(dir: &std::path::Path, args: &[&str]) -> Run {
    let out = git_command(dir, args).output().unwrap();
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// A developer's clone of `origin` with a git user and speed's hooks.
fn developer(origin: &std::path::Path) -> (tempfile::TempDir, std::path::PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let dev = tmp.path().join("dev");
    let url = format!("file://{}", origin.display());
    git(tmp.path(), &["clone", "-q", &url, "dev"]);
    git(&dev, &["config", "user.name", "Dev"]);
    git(&dev, &["config", "user.email", "dev@example.com"]);
    let run = speed(&dev, &["hook", "install"], &[]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    (tmp, dev)
}

#[test]
fn an_approval_made_in_ci_is_honoured_by_a_fresh_clones_hook() {
    let server = approving();
    let origin = project(3, &loopback(&server));
    let main = head(&origin, "main");

    // The CI job: reviews, then keeps its verdicts on the remote.
    let ci = Checkout::of(origin.path(), &main, 0);
    let run = speed_on(&ci, &["review"], &KEY);
    assert_eq!(run.code, 0, "{}", run.transcript());
    let task_1 = head(&origin, "speed/task-1");
    let written = note(ci.path(), &task_1);
    assert_eq!(written.len(), 1, "{written:?}");
    let entry = &written[0];
    assert_eq!(entry["format"], "speed-note/1");
    assert_eq!(entry["subject"], "task 1");
    assert_eq!(entry["decision"], "approve");
    assert_eq!(entry["head_commit"], task_1);
    assert!(entry["diff"].as_str().unwrap().starts_with("sha256:"));
    assert_eq!(entry["specs"][0]["path"], "specs/product/counter.md");
    assert!(entry["summary"].as_str().unwrap().starts_with("approve"));
    // The runner has no git identity: speed signs the notes commit itself.
    let run = speed_on(&ci, &["notes", "push"], &[]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    assert!(
        run.stderr.contains("pushed refs/notes/speed to origin"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("3 commits with a note"),
        "{}",
        run.stderr
    );
    let asked = server.requests().len();

    // A developer's fresh clone: no cache, no log, only git.
    let (_tmp, dev) = developer(origin.path());
    let blocked = git_run(&dev, &["merge", "--no-ff", "-q", "origin/speed/task-1"]);
    assert_ne!(
        blocked.code,
        0,
        "merged without any approval here: {}",
        blocked.transcript()
    );
    assert!(
        blocked.stderr.contains("speed notes fetch"),
        "{}",
        blocked.stderr
    );
    git(&dev, &["merge", "--abort"]);
    let run = speed(&dev, &["notes", "fetch"], &[]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    assert!(
        run.stderr.contains("fetched refs/notes/speed from origin"),
        "{}",
        run.stderr
    );
    let merged = git_run(&dev, &["merge", "--no-ff", "-q", "origin/speed/task-1"]);
    assert_eq!(
        merged.code,
        0,
        "the CI's approval was not honoured: {}",
        merged.transcript()
    );
    assert_eq!(server.requests().len(), asked, "the hook asked the model");

    // Another CI run: batch mode knows the approvals once it has the notes.
    let again = Checkout::of(origin.path(), &main, 0);
    let run = speed_on(&again, &["notes", "fetch"], &[]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    let run = speed_on(&again, &["review"], &KEY);
    assert_eq!(run.code, 0, "{}", run.transcript());
    assert!(run.stderr.contains("Nothing to review"), "{}", run.stderr);
    assert!(
        run.stderr.contains("3 approved and still covered"),
        "{}",
        run.stderr
    );
    assert_eq!(
        server.requests().len(),
        asked,
        "approved work was reviewed again"
    );
    // --task-id reviews as asked, and says the note's approval stood,
    // though this checkout's task file never held it.
    let run = speed_on(&again, &["review", "--task-id", "2"], &KEY);
    assert_eq!(run.code, 0, "{}", run.transcript());
    assert!(
        run.stderr.contains("its approval covers it already") && run.stderr.contains("git note"),
        "{}",
        run.transcript()
    );
}

/// Anyone who can push the notes ref writes notes: one that names another
/// diff, a spec that is not main's now, or no spec at all covers nothing,
/// and the hook says why it set it aside.
#[test]
fn a_forged_or_stale_note_covers_nothing() {
    let server = approving();
    let origin = project(2, &loopback(&server));
    let main = head(&origin, "main");
    let ci = Checkout::of(origin.path(), &main, 0);
    let run = speed_on(&ci, &["review", "--task-id", "2"], &KEY);
    assert_eq!(run.code, 0, "{}", run.transcript());
    let task_2 = head(&origin, "speed/task-2");
    let real = note(ci.path(), &task_2).remove(0);

    let (_tmp, dev) = developer(origin.path());
    let forge = |entry: &Value| {
        git(
            &dev,
            &[
                "notes",
                "--ref=speed",
                "add",
                "-f",
                "-m",
                &entry.to_string(),
                &task_2,
            ],
        );
    };
    let try_merge = || {
        let run = git_run(&dev, &["merge", "--no-ff", "-q", "origin/speed/task-2"]);
        if run.code != 0 {
            git(&dev, &["merge", "--abort"]);
        }
        run
    };

    let mut other_diff = real.clone();
    other_diff["diff"] = Value::from(format!("sha256:{}", "0".repeat(64)));
    forge(&other_diff);
    let run = try_merge();
    assert_ne!(run.code, 0, "{}", run.transcript());
    assert!(run.stderr.contains("for another diff"), "{}", run.stderr);

    let mut other_spec = real.clone();
    other_spec["specs"][0]["sha256"] = Value::from(format!("sha256:{}", "1".repeat(64)));
    forge(&other_spec);
    let run = try_merge();
    assert_ne!(run.code, 0, "{}", run.transcript());
    assert!(
        run.stderr.contains("has changed on the main branch"),
        "{}",
        run.stderr
    );

    let mut no_spec = real.clone();
    no_spec["specs"] = Value::Array(Vec::new());
    forge(&no_spec);
    let run = try_merge();
    assert_ne!(run.code, 0, "{}", run.transcript());
    assert!(run.stderr.contains("names no spec"), "{}", run.stderr);

    // A note on task 2's head about task 1 is not about task 2.
    let mut other_task = real.clone();
    other_task["task"] = Value::from("1");
    forge(&other_task);
    let run = try_merge();
    assert_ne!(run.code, 0, "{}", run.transcript());

    forge(&real);
    let run = try_merge();
    assert_eq!(run.code, 0, "the real note: {}", run.transcript());
}

/// Two jobs that each reviewed and pushed: the second push joins the
/// first's notes rather than losing them, and a note's lines from both
/// sides are kept.
#[test]
fn notes_pushed_from_two_jobs_are_joined_not_lost() {
    let server = approving();
    let origin = project(2, &loopback(&server));
    let main = head(&origin, "main");
    let one = Checkout::of(origin.path(), &main, 0);
    let two = Checkout::of(origin.path(), &main, 0);
    let run = speed_on(&one, &["review", "--task-id", "1"], &KEY);
    assert_eq!(run.code, 0, "{}", run.transcript());
    let run = speed_on(&two, &["review", "--task-id", "2"], &KEY);
    assert_eq!(run.code, 0, "{}", run.transcript());
    let run = speed_on(&one, &["notes", "push"], &[]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    let run = speed_on(&two, &["notes", "push"], &[]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    assert!(run.stderr.contains("after joining"), "{}", run.stderr);
    let listed = git(origin.path(), &["notes", "--ref=speed", "list"]);
    assert_eq!(listed.lines().count(), 2, "{listed}");

    let run = speed_on(&one, &["notes", "push"], &[]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    let run = speed_on(&one, &["notes", "fetch"], &[]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    assert!(
        run.stderr.contains("the same here and on origin"),
        "{}",
        run.stderr
    );

    // Nothing there yet, nothing here yet: said, not an error.
    let fresh = project(1, &loopback(&server));
    let job = Checkout::of(fresh.path(), &head(&fresh, "main"), 0);
    let run = speed_on(&job, &["notes", "fetch"], &[]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    assert!(
        run.stderr.contains("holds no refs/notes/speed yet"),
        "{}",
        run.stderr
    );
    let run = speed_on(&job, &["notes", "push"], &[]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    assert!(run.stderr.contains("nothing to push"), "{}", run.stderr);
    let run = speed_on(&job, &["notes", "push", "--remote", "--upload-pack=x"], &[]);
    assert_eq!(run.code, 2, "{}", run.transcript());
}
