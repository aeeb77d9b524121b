//! Hostile branches, answers and servers, crashes, signals and concurrent
//! reviews (issue 15): the real binary against real repositories, loopback
//! servers and shell scripts standing in for model commands. Longer probes
//! (kill -9 loops, concurrency rounds) are in `benches/hardening.sh`.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use crate::support::model_server::{ModelServer, Reply};
use crate::support::repo::{self, TempRepo};
use crate::support::speed::{self, Run, speed};
use crate::support::verdicts::{self, text};
use serde_json::{Value, json};

/// Points the example at the server; `extra` adds `[llm]` keys (a
/// `timeout_secs` there replaces the default 5 s).
fn configure(repo: &TempRepo, server: &ModelServer, extra: &str) {
    let timeout = if extra.contains("timeout_secs") {
        ""
    } else {
        "timeout_secs = 5\n"
    };
    repo.config(&format!(
        "[llm]\nprovider = \"openai\"\nbase_url = \"{}\"\nmodel = \"test-model\"\n{timeout}max_retries = 0\nretry_base_ms = 10\n{extra}\n[guardian]\nenabled = false\n",
        server.url()
    ));
}

fn review(repo: &TempRepo, id: &str) -> Run {
    speed(repo.path(), &["review", "--task-id", id], &[])
}

/// Every file under `.speed/`, as (relative path, bytes).
fn speed_files(repo: &TempRepo) -> Vec<(String, Vec<u8>)> {
    let mut files = Vec::new();
    let mut stack = vec![repo.path().join(".speed")];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let meta = std::fs::symlink_metadata(&path).unwrap();
            if meta.is_dir() {
                stack.push(path);
            } else if meta.is_file() {
                let relative = path.strip_prefix(repo.path()).unwrap();
                files.push((
                    relative.display().to_string(),
                    std::fs::read(&path).unwrap(),
                ));
            }
        }
    }
    files
}

fn contains(haystack: &[u8], needle: &str) -> bool {
    haystack
        .windows(needle.len())
        .any(|window| window == needle.as_bytes())
}

// ---- 3. Nothing is written through a symlink to outside ----

#[test]
fn a_log_linked_outside_the_repository_is_refused_before_the_model_is_asked() {
    let repo = repo::example();
    let server = ModelServer::start(|_| panic!("the model must not be asked"));
    configure(&repo, &server, "");
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("profile.sh");
    std::fs::write(&target, "# the user's shell profile\n").unwrap();
    std::fs::create_dir_all(repo.path().join(".speed/reviews")).unwrap();
    std::os::unix::fs::symlink(&target, repo.path().join(".speed/reviews/log.jsonl")).unwrap();
    let task = repo.read(&repo.task_path("1"));

    let run = review(&repo, "1");
    assert_eq!(run.code, 1, "{}", run.transcript());
    assert!(run.stderr.contains("log.jsonl"), "{}", run.stderr);
    assert!(run.stderr.contains("symbolic link"), "{}", run.stderr);
    assert_eq!(
        std::fs::read_to_string(&target).unwrap(),
        "# the user's shell profile\n"
    );
    assert_eq!(repo.read(&repo.task_path("1")), task);
    assert!(server.requests().is_empty());
}

#[test]
fn a_task_file_linked_outside_is_read_but_never_written_through() {
    let repo = repo::example();
    let server = ModelServer::start(|_| panic!("the model must not be asked"));
    configure(&repo, &server, "");
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("1.json");
    let original = repo.read(&repo.task_path("1"));
    std::fs::write(&target, &original).unwrap();
    let link = repo.path().join(repo.task_path("1"));
    std::fs::remove_file(&link).unwrap();
    std::os::unix::fs::symlink(&target, &link).unwrap();

    let run = review(&repo, "1");
    assert_eq!(run.code, 1, "{}", run.transcript());
    assert!(run.stderr.contains("symbolic link"), "{}", run.stderr);
    assert_eq!(std::fs::read_to_string(&target).unwrap(), original);
    assert!(server.requests().is_empty());
}

#[test]
fn a_cache_linked_outside_is_not_written_and_the_review_goes_on() {
    let repo = repo::example();
    let server = ModelServer::scripted(vec![Reply::openai(&text(&verdicts::approve_task_1()))]);
    configure(&repo, &server, "");
    let outside = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(repo.path().join(".speed")).unwrap();
    std::os::unix::fs::symlink(outside.path(), repo.path().join(".speed/cache")).unwrap();

    let run = review(&repo, "1");
    assert_eq!(run.code, 0, "{}", run.transcript());
    assert!(run.stderr.contains("cache not written"), "{}", run.stderr);
    assert!(run.stderr.contains("symbolic link"), "{}", run.stderr);
    assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 0);
}

// ---- 4. No input makes speed hang ----

#[test]
fn an_answer_past_max_answer_bytes_is_invalid_output_without_reading_it_all() {
    let repo = repo::example();
    // A valid approval, padded past the limit.
    let mut answer = verdicts::approve_task_1();
    answer["strengths"] = json!(["x".repeat(300_000)]);
    let answer = text(&answer);
    let server = ModelServer::start(move |_| Reply::openai(&answer));
    configure(&repo, &server, "max_answer_bytes = 100000");
    let run = review(&repo, "1");
    assert_eq!(run.code, 53, "{}", run.transcript());
    assert!(
        run.stderr
            .contains("longer than 100000 bytes, the limit set by llm.max_answer_bytes"),
        "{}",
        run.stderr
    );
    // One corrective retry, then no more.
    assert_eq!(server.requests().len(), 2);
}

#[test]
fn an_endless_answer_is_cut_at_the_cap_long_before_the_timeout() {
    let repo = repo::example();
    let server = ModelServer::start(|_| Reply::status(200, "{\"choices\": [").endless());
    configure(
        &repo,
        &server,
        "max_answer_bytes = 100000\ntimeout_secs = 60",
    );
    let started = Instant::now();
    let run = review(&repo, "1");
    assert_eq!(run.code, 53, "{}", run.transcript());
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn an_endless_error_body_is_read_in_part_and_reported_with_its_status() {
    let repo = repo::example();
    let server = ModelServer::start(|_| Reply::status(400, "bad request ").endless());
    configure(&repo, &server, "timeout_secs = 30");
    let started = Instant::now();
    let run = review(&repo, "1");
    assert_eq!(run.code, 1, "{}", run.transcript());
    assert!(run.stderr.contains("HTTP 400"), "{}", run.stderr);
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn a_server_trickling_its_answer_is_held_to_the_whole_request_timeout() {
    // Guards the capped reading of bodies: reqwest's per-read timeout alone
    // would let this answer take minutes.
    let repo = repo::example();
    // Every byte comes well within a per-read timeout of 1 s; the whole
    // answer would take minutes.
    let server = ModelServer::start(|_| {
        Reply::openai(&text(&verdicts::approve_task_1())).trickle(Duration::from_millis(50))
    });
    configure(&repo, &server, "timeout_secs = 1");
    let started = Instant::now();
    let run = review(&repo, "1");
    assert_eq!(run.code, 52, "{}", run.transcript());
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn a_command_printing_without_end_is_stopped_at_the_cap() {
    let repo = repo::example();
    repo.config(
        "[llm]\nprovider = \"command\"\ncommand = [\"sh\", \"-c\", \"cat >/dev/null; yes\"]\ntimeout_secs = 120\nmax_answer_bytes = 1000000\n[guardian]\nenabled = false\n",
    );
    let started = Instant::now();
    let run = review(&repo, "1");
    assert_eq!(run.code, 53, "{}", run.transcript());
    assert!(
        run.stderr.contains("llm.max_answer_bytes"),
        "{}",
        run.stderr
    );
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "{:?}",
        started.elapsed()
    );
}

// ---- 5. Interrupting speed stops what it started ----

/// A model command that writes its pid (its process group's id) to
/// `pid_file`, starts a grandchild and waits: a `claude -p` that would keep
/// spending.
fn sleeping_command(repo: &TempRepo, pid_file: &Path) {
    let script = format!(
        "echo $$ > '{}.tmp' && mv '{0}.tmp' '{0}'; sleep 300 & wait",
        pid_file.display()
    );
    repo.config(&format!(
        "[llm]\nprovider = \"command\"\ncommand = [\"sh\", \"-c\", {}]\ntimeout_secs = 600\n[guardian]\nenabled = false\n",
        toml_string(&script)
    ));
}

fn toml_string(text: &str) -> String {
    serde_json::to_string(text).unwrap()
}

/// Starts a review of task 1 and returns it with the model command's
/// process group, once the command runs.
fn review_until_the_command_runs(repo: &TempRepo) -> (Child, i32) {
    let pid_file = repo.path().join("..").join("command.pid");
    sleeping_command(repo, &pid_file);
    let mut child = speed::command(repo.path(), &["review", "--task-id", "1"], &[])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pgid = read_pid(&pid_file, &mut child);
    (child, pgid)
}

/// The pid the command writes once it runs; kills `child` if it never does.
fn read_pid(pid_file: &Path, child: &mut Child) -> i32 {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let pid = std::fs::read_to_string(pid_file)
            .ok()
            .and_then(|text| text.trim().parse().ok());
        if let Some(pid) = pid {
            return pid;
        }
        if Instant::now() >= deadline {
            child.kill().ok();
            child.wait().ok();
            panic!("the model command never started: {}", stderr_of(child));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn wait_for(child: &mut Child, limit: Duration) -> ExitStatus {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if Instant::now() >= deadline {
            child.kill().ok();
            panic!("speed did not end within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The live (not zombie) processes of a process group, from /proc: an
/// orphaned zombie may wait for a reaper that never comes in a container.
fn live_members(pgid: i32) -> Vec<String> {
    let mut live = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // pid (comm) state ppid pgrp ...; comm may hold spaces.
        let Some(after) = stat.rfind(')').map(|i| &stat[i + 2..]) else {
            continue;
        };
        let fields: Vec<&str> = after.split_whitespace().collect();
        if fields.len() > 2 && fields[2] == pgid.to_string() && fields[0] != "Z" {
            live.push(stat.split(')').next().unwrap_or_default().to_string());
        }
    }
    live
}

fn assert_group_ends(pgid: i32) {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let live = live_members(pgid);
        if live.is_empty() {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "the model command's process group {pgid} outlived speed: {live:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn stderr_of(child: &mut Child) -> String {
    let mut text = String::new();
    if let Some(mut stderr) = child.stderr.take() {
        stderr.read_to_string(&mut text).ok();
    }
    text
}

#[cfg(target_os = "linux")]
#[test]
fn ctrl_c_stops_the_model_command_and_ends_like_sigint() {
    use std::os::unix::process::ExitStatusExt;
    let repo = repo::example();
    let task = repo.read(&repo.task_path("1"));
    let (mut child, pgid) = review_until_the_command_runs(&repo);
    assert!(!live_members(pgid).is_empty());
    // SAFETY: signals the speed process this test started.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let status = wait_for(&mut child, Duration::from_secs(15));
    let stderr = stderr_of(&mut child);
    // Dying by the signal is what makes a shell report 130 and stop a loop.
    assert_eq!(status.signal(), Some(libc::SIGINT), "{status:?}\n{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_group_ends(pgid);
    // An interrupted review changes nothing.
    assert_eq!(repo.read(&repo.task_path("1")), task);
    assert!(repo.log().is_empty());
}

#[cfg(target_os = "linux")]
#[test]
fn sigterm_stops_the_model_command_and_ends_like_sigterm() {
    use std::os::unix::process::ExitStatusExt;
    let repo = repo::example();
    let (mut child, pgid) = review_until_the_command_runs(&repo);
    // SAFETY: signals the speed process this test started.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let status = wait_for(&mut child, Duration::from_secs(15));
    assert_eq!(status.signal(), Some(libc::SIGTERM), "{status:?}");
    assert_group_ends(pgid);
}

#[cfg(target_os = "linux")]
#[test]
fn ctrl_c_during_a_command_check_stops_it_and_removes_its_checkout() {
    use std::os::unix::process::ExitStatusExt;
    let repo = repo::example();
    let pid_file = repo.path().join("..").join("check.pid");
    let cwd_file = repo.path().join("..").join("check.cwd");
    let script = format!(
        "pwd > '{cwd}'; echo $$ > '{pid}.tmp' && mv '{pid}.tmp' '{pid}'; sleep 300 & wait",
        cwd = cwd_file.display(),
        pid = pid_file.display()
    );
    repo.config(&format!(
        "[[checks.command]]\nname = \"tests\"\nrun = [\"sh\", \"-c\", {}]\ntimeout_secs = 600\n",
        toml_string(&script)
    ));
    let mut child = speed::command(repo.path(), &["review", "--task-id", "1", "--offline"], &[])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pgid = read_pid(&pid_file, &mut child);
    let checkout = PathBuf::from(std::fs::read_to_string(&cwd_file).unwrap().trim());
    assert!(checkout.is_dir(), "{}", checkout.display());
    // SAFETY: signals the speed process this test started.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let status = wait_for(&mut child, Duration::from_secs(15));
    assert_eq!(status.signal(), Some(libc::SIGINT), "{status:?}");
    assert_group_ends(pgid);
    assert!(!checkout.exists(), "{} was left behind", checkout.display());
}

#[cfg(target_os = "linux")]
#[test]
fn the_death_of_speed_ends_the_model_command_and_what_it_started() {
    let repo = repo::example();
    let (mut child, pgid) = review_until_the_command_runs(&repo);
    child.kill().unwrap(); // SIGKILL: no handler runs.
    child.wait().unwrap();
    assert_group_ends(pgid);
}

// ---- 6. Keys never leak ----

const KEY: &str = "sk-ant-api03-very-secret-key-0123456789";

fn anthropic(repo: &TempRepo, server: &ModelServer) {
    repo.config(&format!(
        "[llm]\nprovider = \"anthropic\"\nbase_url = \"{}\"\nmodel = \"claude-test\"\ntimeout_secs = 5\nmax_retries = 0\n[guardian]\nenabled = false\n",
        server.root()
    ));
}

#[test]
fn a_key_echoed_by_the_server_is_masked_everywhere_speed_writes_or_prints() {
    let repo = repo::example();
    let mut answer = verdicts::approve_task_1();
    answer["strengths"] = json!([format!("Reviewed with key {KEY}")]);
    let server = ModelServer::scripted(vec![
        Reply::anthropic(&text(&answer)),
        Reply::status(
            401,
            &format!("{{\"error\": {{\"message\": \"invalid x-api-key {KEY}\"}}}}"),
        ),
    ]);
    anthropic(&repo, &server);
    let env = [("ANTHROPIC_API_KEY", KEY)];
    let approved = speed(repo.path(), &["review", "--task-id", "1"], &env);
    assert_eq!(approved.code, 0, "{}", approved.transcript());
    let refused = speed(repo.path(), &["review", "--task-id", "3", "--json"], &env);
    assert_eq!(refused.code, 1, "{}", refused.transcript());

    for run in [&approved, &refused] {
        assert!(!run.stdout.contains(KEY), "{}", run.transcript());
        assert!(!run.stderr.contains(KEY), "{}", run.transcript());
    }
    assert!(
        refused.stderr.contains("[REDACTED:api-key]"),
        "{}",
        refused.stderr
    );
    let files = speed_files(&repo);
    assert!(!files.is_empty());
    for (path, bytes) in &files {
        assert!(!contains(bytes, KEY), "{path} holds the key");
    }
    assert!(
        files
            .iter()
            .any(|(_, bytes)| contains(bytes, "[REDACTED:api-key]"))
    );
    // The key was sent, where it belongs.
    assert_eq!(server.requests()[0].header("x-api-key"), Some(KEY));
}

#[test]
fn credentials_never_follow_a_redirect_to_another_origin() {
    let repo = repo::example();
    let elsewhere = ModelServer::start(|_| Reply::anthropic("{}"));
    let target = format!("{}/v1/messages", elsewhere.root());
    let server = ModelServer::start(move |_| Reply::status(307, "").header("Location", &target));
    anthropic(&repo, &server);
    let run = speed(
        repo.path(),
        &["review", "--task-id", "1"],
        &[("ANTHROPIC_API_KEY", KEY)],
    );
    assert_eq!(run.code, 1, "{}", run.transcript());
    assert!(run.stderr.contains("redirect"), "{}", run.stderr);
    assert!(run.stderr.contains(&elsewhere.root()), "{}", run.stderr);
    assert_eq!(server.requests().len(), 1);
    assert!(
        elsewhere.requests().is_empty(),
        "the other origin got {:?}",
        elsewhere.requests()[0].headers
    );
}

#[test]
fn a_redirect_within_the_origin_is_followed_with_the_key() {
    // The other side of the policy: refusing other origins must not break a
    // server that moves its own endpoint.
    let repo = repo::example();
    let answer = text(&verdicts::approve_task_1());
    let server = ModelServer::start(move |request| {
        if request.path == "/v1/messages" {
            Reply::status(308, "").header("Location", "/v2/messages")
        } else {
            Reply::anthropic(&answer)
        }
    });
    anthropic(&repo, &server);
    let run = speed(
        repo.path(),
        &["review", "--task-id", "1"],
        &[("ANTHROPIC_API_KEY", KEY)],
    );
    assert_eq!(run.code, 0, "{}", run.transcript());
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[1].path, "/v2/messages");
    assert_eq!(requests[1].header("x-api-key"), Some(KEY));
}

// ---- 7. Concurrent reviews of one task lose nothing ----

#[test]
fn two_reviews_of_one_task_at_once_take_turns_and_both_are_recorded() {
    let repo = repo::example();
    let answer = text(&verdicts::request_changes_task_2());
    let server =
        ModelServer::start(move |_| Reply::openai(&answer).delay(Duration::from_millis(800)));
    configure(&repo, &server, "");
    let children: Vec<Child> = (0..2)
        .map(|_| {
            speed::command(repo.path(), &["review", "--task-id", "2"], &[])
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for mut child in children {
        let status = wait_for(&mut child, Duration::from_secs(60));
        assert_eq!(status.code(), Some(50), "{}", stderr_of(&mut child));
    }
    // The lock made the second wait for the first: never two at the model.
    assert_eq!(server.max_in_flight(), 1);
    let task = repo.task("2");
    // Both recorded, one after the other; the second judged the head the
    // first had rejected: a new verdict, not a new revision.
    assert_eq!(task["revision_count"], 1);
    assert_eq!(task["review_history"][1]["same_head"], true);
    assert_eq!(task["review_history"][1]["attempt"], 2);
    assert_eq!(repo.log().len(), 2);
    let reports: Vec<String> = repo
        .reviews()
        .into_iter()
        .filter(|name| name.contains("-task-2") && name.ends_with(".json"))
        .collect();
    assert_eq!(reports.len(), 2, "{reports:?}");
}

#[test]
fn a_task_locked_by_another_review_is_said_to_be_under_review() {
    let repo = repo::example();
    let server = ModelServer::scripted(vec![Reply::openai(&text(&verdicts::approve_task_1()))]);
    configure(&repo, &server, "");
    let first = review(&repo, "1");
    assert_eq!(first.code, 0, "{}", first.transcript());
    let locks = repo.path().join(".speed/reviews/locks");
    let lock: PathBuf = std::fs::read_dir(&locks)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("task-1-")
        })
        .expect("a lock file for task 1");

    // Another speed, as far as this one can tell.
    let held = std::fs::OpenOptions::new().write(true).open(&lock).unwrap();
    std::fs::write(&lock, "pid 4242, since 2030-01-01T00:00:00Z").unwrap();
    // SAFETY: flock on a file this test opened.
    assert_eq!(
        unsafe { libc::flock(std::os::fd::AsRawFd::as_raw_fd(&held), libc::LOCK_EX) },
        0
    );
    let task = repo.read(&repo.task_path("1"));
    // --no-wait: said at once (exit 52, as for a model that cannot be asked
    // now) instead of waiting for that review to end.
    let second = speed(repo.path(), &["review", "--task-id", "1", "--no-wait"], &[]);
    assert_eq!(second.code, 52, "{}", second.transcript());
    assert!(
        second
            .stderr
            .contains("being reviewed by another speed process (pid 4242"),
        "{}",
        second.stderr
    );
    assert_eq!(repo.read(&repo.task_path("1")), task);
    assert_eq!(server.requests().len(), 1);
    drop(held);
}

// ---- 8. Crash debris and gaps ----

#[test]
fn temporary_files_left_by_a_dead_run_are_removed_by_the_next() {
    let repo = repo::example();
    let server = ModelServer::scripted(vec![Reply::openai(&text(&verdicts::approve_task_1()))]);
    configure(&repo, &server, "");
    // 4194305 is above the largest pid Linux hands out.
    let debris = [
        ".speed/reviews/.speed-tmp-4194305-a1b2c3.tmp",
        ".speed/features/library-catalog/tasks/.speed-tmp-4194305-d4e5f6.tmp",
    ];
    for path in debris {
        repo.write(path, "half a file");
    }
    let run = review(&repo, "1");
    assert_eq!(run.code, 0, "{}", run.transcript());
    for path in debris {
        assert!(!repo.path().join(path).exists(), "{path} is still there");
    }
}

#[test]
fn a_torn_last_log_line_does_not_swallow_the_next_record() {
    let repo = repo::example();
    let server = ModelServer::scripted(vec![Reply::openai(&text(&verdicts::approve_task_1()))]);
    configure(&repo, &server, "");
    repo.write(
        ".speed/reviews/log.jsonl",
        "{\"at\": \"2030-01-01\", \"task\": \"9\"}\n{\"at\": \"2030-01-02\", \"ta",
    );
    let run = review(&repo, "1");
    assert_eq!(run.code, 0, "{}", run.transcript());
    let log = repo.read(".speed/reviews/log.jsonl");
    let lines: Vec<&str> = log.lines().collect();
    assert_eq!(lines.len(), 3, "{log}");
    assert!(lines[1].ends_with("\"ta"), "{log}");
    let record: Value = serde_json::from_str(lines[2]).unwrap();
    assert_eq!(record["task"], "1");
}

// ---- 9. Small ones ----

/// Runs speed with a stdout whose reader has already gone.
fn with_closed_stdout(dir: &Path, args: &[&str]) -> (ExitStatus, String) {
    let mut child = speed::command(dir, args, &[])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let status = wait_for(&mut child, Duration::from_secs(60));
    (status, stderr_of(&mut child))
}

#[test]
fn a_closed_stdout_ends_a_review_quietly() {
    let repo = repo::example();
    let server = ModelServer::scripted(vec![Reply::openai(&text(&verdicts::approve_task_1()))]);
    configure(&repo, &server, "");
    let (status, stderr) = with_closed_stdout(repo.path(), &["review", "--task-id", "1"]);
    assert_eq!(status.code(), Some(0), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    // The review itself was done and recorded.
    assert_eq!(repo.task("1")["review_verdict"], "approve");

    let (status, stderr) = with_closed_stdout(repo.path(), &["nits"]);
    assert_eq!(status.code(), Some(0), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");

    let (status, stderr) =
        with_closed_stdout(repo.path(), &["review", "--task-id", "2", "--dry-run"]);
    assert_eq!(status.code(), Some(0), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

fn git(dir: &Path, args: &[&str]) {
    let out = std::process::Command::new("git")
        .current_dir(dir)
        .args(["-c", "user.name=Test", "-c", "user.email=test@example.com"])
        .args([
            "-c",
            "init.defaultBranch=main",
            "-c",
            "protocol.file.allow=always",
        ])
        .args(args)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn a_shallow_clone_without_the_common_ancestor_says_to_unshallow() {
    let tmp = tempfile::tempdir().unwrap();
    let origin = tmp.path().join("origin");
    std::fs::create_dir_all(origin.join("specs/product")).unwrap();
    git(&origin, &["init", "-q"]);
    std::fs::write(
        origin.join("specs/product/shop.md"),
        "# Shop\n\n## Cart\n\nAt most 10 items.\n",
    )
    .unwrap();
    std::fs::write(origin.join("cart.rs"), "pub fn cap() -> u32 { 10 }\n").unwrap();
    git(&origin, &["add", "."]);
    git(&origin, &["commit", "-qm", "start"]);
    git(&origin, &["checkout", "-qb", "speed/task-1"]);
    std::fs::write(origin.join("cart.rs"), "pub fn cap() -> u32 { 50 }\n").unwrap();
    git(&origin, &["commit", "-qam", "raise the cap"]);
    git(&origin, &["checkout", "-q", "main"]);
    std::fs::write(origin.join("README.md"), "shop\n").unwrap();
    git(&origin, &["add", "."]);
    git(&origin, &["commit", "-qm", "readme"]);
    let url = format!("file://{}", origin.display());
    git(
        tmp.path(),
        &[
            "clone",
            "-q",
            "--depth",
            "1",
            "--no-single-branch",
            &url,
            "clone",
        ],
    );

    let run = speed(
        &tmp.path().join("clone"),
        &[
            "review",
            "--branch",
            "speed/task-1",
            "--spec",
            "specs/product/shop.md",
            "--dry-run",
        ],
        &[],
    );
    assert_eq!(run.code, 1, "{}", run.transcript());
    assert!(
        run.stderr.contains("git fetch --unshallow"),
        "{}",
        run.stderr
    );
}
