//! One review of a task at a time, from reading its state to writing it:
//! a second review waits and reviews what the first one left (its result
//! in the prompt), or with `--no-wait` says the task is being reviewed and
//! exits 52; the task file never ends with a status and a verdict that
//! disagree.

use std::io::Read;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use crate::support::model_server::{ModelServer, Reply};
use crate::support::speed::{self, speed};

use super::*;

fn task_branch(repo: &TempRepo) {
    let root = repo.path();
    git(root, &["checkout", "-q", "-b", "speed/task-1"]);
    commit(root, &[("src/widgets.py", WIDGETS_V1)], "refuse bad sizes");
    git(root, &["checkout", "-q", "main"]);
    task(repo, 1, json!({}));
}

fn spawn_review(repo: &TempRepo, extra: &[&str]) -> Child {
    let mut args = vec!["review", "--task-id", "1"];
    args.extend(extra);
    speed::command(repo.path(), &args, &[])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn finish(mut child: Child) -> (i32, String) {
    let deadline = Instant::now() + Duration::from_secs(90);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() >= deadline {
            child.kill().ok();
            panic!("speed did not end in time");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .ok();
    (status.code().unwrap_or(-1), stderr)
}

/// Waits until the model has been asked `n` times.
fn until_asked(server: &ModelServer, n: usize) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while server.requests().len() < n {
        assert!(Instant::now() < deadline, "the model was never asked");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn two_reviews_at_once_take_turns_and_the_second_reads_the_first() {
    let repo = widgets();
    task_branch(&repo);
    // Whichever review holds the lock first is answered first: an
    // approval, slowly; the one that waited gets a request for changes.
    let server = ModelServer::scripted(vec![
        Reply::openai(&approve("src/widgets.py:2")).delay(Duration::from_millis(1500)),
        Reply::openai(&request_changes("sizes of 0 are not refused")),
    ]);
    configure(&repo, &server);
    let first = spawn_review(&repo, &[]);
    until_asked(&server, 1);
    let second = spawn_review(&repo, &[]);
    let (first_code, first_err) = finish(first);
    let (second_code, second_err) = finish(second);
    assert_eq!(first_code, 0, "{first_err}");
    assert_eq!(second_code, 50, "{second_err}");
    // The second waited, and said so; never two at the model.
    assert_eq!(server.max_in_flight(), 1);
    assert!(
        second_err.contains("task 1 is being reviewed by another speed process (pid ")
            && second_err.contains("waiting for it to end"),
        "{second_err}"
    );
    // Its prompt was built after the first wrote: the approval is in it.
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let prompt = prompt_of(&requests[1]);
    assert!(
        prompt.contains("Earlier review:") && prompt.contains("approve"),
        "{prompt}"
    );
    assert!(
        !prompt_of(&requests[0]).contains("Earlier review:"),
        "the first was the first"
    );
    // Status and verdict agree, and both reviews are in the history.
    let task = task_file(&repo, 1);
    assert_eq!(task["status"], "pending");
    assert_eq!(task["review_verdict"], "request_changes");
    assert_eq!(task["revision_count"], 1);
    let history = task["review_history"].as_array().unwrap();
    let verdicts: Vec<&str> = history
        .iter()
        .map(|e| e["verdict"].as_str().unwrap())
        .collect();
    assert_eq!(verdicts, ["approve", "request_changes"]);
    assert!(
        task["review_feedback"]
            .as_str()
            .unwrap()
            .contains("sizes of 0 are not refused")
    );
    // The gate decides from the last recorded review: the request.
    let install = speed(repo.path(), &["hook", "install"], &[]);
    assert_eq!(install.code, 0, "{}", install.transcript());
    let merge = git_run(
        repo.path(),
        &["merge", "--no-ff", "--no-edit", "speed/task-1"],
    );
    assert_ne!(merge.code, 0, "{}", merge.transcript());
    assert!(
        merge.stderr.contains("its last review requested changes"),
        "{}",
        merge.stderr
    );
}

#[test]
fn no_wait_says_the_task_is_being_reviewed_and_exits_52() {
    let repo = widgets();
    task_branch(&repo);
    let server = ModelServer::scripted(vec![
        Reply::openai(&approve("src/widgets.py:2")).delay(Duration::from_millis(1500)),
    ]);
    configure(&repo, &server);
    let before = repo.read(".speed/tasks/1.json");
    let first = spawn_review(&repo, &[]);
    until_asked(&server, 1);
    let run = speed(repo.path(), &["review", "--task-id", "1", "--no-wait"], &[]);
    assert_eq!(run.code, 52, "{}", run.transcript());
    assert!(
        run.stderr
            .contains("task 1 is being reviewed by another speed process (pid "),
        "{}",
        run.stderr
    );
    // Nothing of the task changed under the running review.
    assert_eq!(repo.read(".speed/tasks/1.json"), before);
    let (code, err) = finish(first);
    assert_eq!(code, 0, "{err}");
    assert_eq!(server.requests().len(), 1);
    assert_eq!(task_file(&repo, 1)["review_verdict"], "approve");
}
