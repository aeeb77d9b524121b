//! A model command whose script daemonizes a `sleep` (a double fork and
//! `setsid`: the sleep leaves the command's process group and session) does
//! not leave it running: not at the time limit, not after the command's
//! normal exit, not when speed gets SIGTERM or Ctrl-C; and one command's end
//! does not end what another command, still running, started. Linux only:
//! elsewhere speed cannot find what left the group (see docs/models.md).
#![cfg(target_os = "linux")]

use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use crate::support::repo::{self, TempRepo};
use crate::support::speed::{self, speed};
use crate::support::verdicts::{self, text};

/// A shell function daemonizing `sleep SECONDS` the classic way: a
/// subshell forks a child and exits; the child starts a new session and
/// forks the sleep, writes its pid to PIDFILE and exits. With `scrub`, the
/// sleep also clears its environment.
const DAEMON: &str = r#"daemon() {
  ( setsid sh -c '
      if [ "$3" = scrub ]; then env -i "$(command -v sleep)" "$1" & else sleep "$1" & fi
      echo $! > "$2.tmp" && mv "$2.tmp" "$2"' daemon "$1" "$2" "$3" & )
  while [ ! -s "$2" ]; do sleep 0.02; done
}
"#;

/// The folder beside the repository, for pid files and answers.
fn scratch(repo: &TempRepo) -> PathBuf {
    repo.path().join("..")
}

fn quoted(path: &Path) -> String {
    format!("'{}'", path.display())
}

/// The example with a `command` provider running `body` after `DAEMON`.
fn configure(repo: &TempRepo, body: &str, timeout_secs: u32) {
    let script = format!("{DAEMON}cat >/dev/null\n{body}");
    repo.config(&format!(
        "[llm]\nprovider = \"command\"\ncommand = [\"sh\", \"-c\", {}]\ntimeout_secs = {timeout_secs}\n[guardian]\nenabled = false\n",
        serde_json::to_string(&script).unwrap()
    ));
}

/// A `sleep SECONDS` started by a test; killed when the value is dropped if
/// speed left it running, so a failing test leaves nothing behind.
struct Sleep {
    pid: i32,
    seconds: u32,
}

impl Sleep {
    fn read(pid_file: &Path, seconds: u32) -> Sleep {
        let pid = std::fs::read_to_string(pid_file)
            .unwrap_or_else(|e| panic!("{}: {e}", pid_file.display()))
            .trim()
            .parse()
            .unwrap();
        Sleep { pid, seconds }
    }

    /// Whether the process is still this sleep, alive (not a zombie).
    fn alive(&self) -> bool {
        let cmdline = std::fs::read(format!("/proc/{}/cmdline", self.pid)).unwrap_or_default();
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", self.pid)).unwrap_or_default();
        let dead = stat
            .rfind(')')
            .is_none_or(|i| stat[i + 1..].trim_start().starts_with(['Z', 'X']));
        cmdline.ends_with(format!("sleep\0{}\0", self.seconds).as_bytes()) && !dead
    }

    /// Its group and session, from /proc/<pid>/stat.
    fn group_and_session(&self) -> (i32, i32) {
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", self.pid)).unwrap();
        let fields: Vec<&str> = stat[stat.rfind(')').unwrap() + 1..]
            .split_whitespace()
            .collect();
        (fields[2].parse().unwrap(), fields[3].parse().unwrap())
    }

    fn assert_gone(&self, when: &str) {
        let deadline = Instant::now() + Duration::from_secs(5);
        while self.alive() {
            assert!(
                Instant::now() < deadline,
                "sleep {} (pid {}) outlived {when}",
                self.seconds,
                self.pid
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Sleep {
    fn drop(&mut self) {
        if self.alive() {
            // SAFETY: kills the sleep this test's command started.
            unsafe { libc::kill(self.pid, libc::SIGKILL) };
        }
    }
}

/// Asserts the sleep left the command's process group and session: what
/// killing the group cannot reach.
fn assert_escaped(sleep: &Sleep, leader_file: &Path) {
    let leader: i32 = std::fs::read_to_string(leader_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let (group, session) = sleep.group_and_session();
    assert_ne!(group, leader, "the daemon left the command's group");
    assert_ne!(session, leader, "and its session");
}

fn wait_for_file(path: &Path, child: &mut Child) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !path.exists() {
        if Instant::now() >= deadline {
            child.kill().ok();
            panic!("{} never appeared", path.display());
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

#[test]
fn the_time_limit_ends_a_daemon_the_model_command_started() {
    let repo = repo::example();
    let dir = scratch(&repo);
    let (marked, scrubbed, leader) = (dir.join("d1"), dir.join("d2"), dir.join("leader"));
    configure(
        &repo,
        &format!(
            "daemon 3601 {} keep\ndaemon 3602 {} scrub\necho $$ > {l}.tmp && mv {l}.tmp {l}\nexec sleep 600\n",
            quoted(&marked),
            quoted(&scrubbed),
            l = quoted(&leader)
        ),
        5,
    );
    let mut child = speed::command(repo.path(), &["review", "--task-id", "1"], &[])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for_file(&leader, &mut child);
    let sleeps = [Sleep::read(&marked, 3601), Sleep::read(&scrubbed, 3602)];
    for sleep in &sleeps {
        assert!(sleep.alive());
        assert_escaped(sleep, &leader);
    }
    let status = wait_for(&mut child, Duration::from_secs(60));
    assert_eq!(status.code(), Some(52), "{status:?}");
    // The one that cleared its environment too: no other command ran.
    for sleep in &sleeps {
        sleep.assert_gone("the command's time limit");
    }
}

#[test]
fn a_daemon_left_behind_by_a_command_that_answered_is_ended() {
    let repo = repo::example();
    let dir = scratch(&repo);
    let (pid_file, answer) = (dir.join("d"), dir.join("answer.json"));
    std::fs::write(&answer, text(&verdicts::approve_task_1())).unwrap();
    // The daemon keeps the command's stdout open, as a careless one does:
    // speed does not wait for it until the time limit.
    configure(
        &repo,
        &format!(
            "daemon 3603 {} keep\ncat {}\n",
            quoted(&pid_file),
            quoted(&answer)
        ),
        60,
    );
    let started = Instant::now();
    let run = speed(repo.path(), &["review", "--task-id", "1"], &[]);
    let sleep = Sleep::read(&pid_file, 3603);
    assert_eq!(run.code, 0, "{}", run.transcript());
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(repo.task("1")["review_verdict"], "approve");
    sleep.assert_gone("the command's exit");
}

/// Starts a review whose command daemonizes `sleep SECONDS` and waits;
/// sends `signal` to speed once the daemon runs; checks speed ends by it
/// and the daemon with it.
fn signal_ends_the_daemon(signal: libc::c_int, seconds: u32) {
    let repo = repo::example();
    let task = repo.read(&repo.task_path("1"));
    let dir = scratch(&repo);
    let (pid_file, leader) = (dir.join("d"), dir.join("leader"));
    configure(
        &repo,
        &format!(
            "daemon {seconds} {} keep\necho $$ > {l}.tmp && mv {l}.tmp {l}\nsleep 300 & wait\n",
            quoted(&pid_file),
            l = quoted(&leader)
        ),
        600,
    );
    let mut child = speed::command(repo.path(), &["review", "--task-id", "1"], &[])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_for_file(&leader, &mut child);
    let sleep = Sleep::read(&pid_file, seconds);
    assert_escaped(&sleep, &leader);
    // SAFETY: signals the speed process this test started.
    unsafe { libc::kill(child.id() as i32, signal) };
    let status = wait_for(&mut child, Duration::from_secs(15));
    assert_eq!(status.signal(), Some(signal), "{status:?}");
    sleep.assert_gone("speed's end by a signal");
    assert_eq!(repo.read(&repo.task_path("1")), task);
}

#[test]
fn sigterm_ends_a_daemon_the_model_command_started() {
    signal_ends_the_daemon(libc::SIGTERM, 3604);
}

#[test]
fn ctrl_c_ends_a_daemon_the_model_command_started() {
    signal_ends_the_daemon(libc::SIGINT, 3605);
}

#[test]
fn one_commands_end_leaves_a_running_commands_daemon_alone() {
    let repo = repo::example();
    let dir = scratch(&repo);
    let (one, two) = (dir.join("d1"), dir.join("d2"));
    let (answer_1, answer_2) = (dir.join("a1.json"), dir.join("a2.json"));
    std::fs::write(&answer_1, text(&verdicts::approve_task_1())).unwrap();
    std::fs::write(&answer_2, text(&verdicts::request_changes_task_2())).unwrap();
    // Task 1's command daemonizes a sleep and answers at once. Task 2's
    // daemonizes its own, waits until task 1's is gone (ended when task 1's
    // command ended), and answers only if its own still runs: a test
    // runner still talking to the server it started.
    let body = format!(
        r#"prompt=$(cat)
case "$prompt" in
  *"Search books by title and author"*)
    daemon 3606 {one} keep
    cat {answer_1} ;;
  *)
    daemon 3607 {two} keep
    i=0
    until [ -s {one} ] && ! kill -0 "$(cat {one})" 2>/dev/null; do
      i=$((i+1)); [ $i -gt 1000 ] && {{ echo "task 1's daemon never ended" >&2; exit 3; }}
      sleep 0.02
    done
    kill -0 "$(cat {two})" || {{ echo "my daemon was ended while I ran" >&2; exit 4; }}
    cat {answer_2} ;;
esac
"#,
        one = quoted(&one),
        two = quoted(&two),
        answer_1 = quoted(&answer_1),
        answer_2 = quoted(&answer_2),
    );
    // The prompt is read by the body, not thrown away first.
    let script = format!("{DAEMON}{body}");
    repo.config(&format!(
        "[llm]\nprovider = \"command\"\ncommand = [\"sh\", \"-c\", {}]\ntimeout_secs = 60\n[guardian]\nenabled = false\n",
        serde_json::to_string(&script).unwrap()
    ));
    let run = speed(
        repo.path(),
        &[
            "review",
            "--task-id",
            "1",
            "--task-id",
            "2",
            "--concurrency",
            "2",
        ],
        &[],
    );
    let sleeps = [Sleep::read(&one, 3606), Sleep::read(&two, 3607)];
    assert_eq!(run.code, 50, "{}", run.transcript());
    assert_eq!(repo.task("1")["review_verdict"], "approve");
    assert_eq!(repo.task("2")["review_verdict"], "request_changes");
    for sleep in &sleeps {
        sleep.assert_gone("its command");
    }
}

#[test]
fn a_check_command_that_leaves_a_daemon_behind_leaves_nothing_running() {
    let repo = repo::example();
    let pid_file = scratch(&repo).join("d");
    let script = format!(
        "{DAEMON}daemon 3608 {} keep\necho checked\n",
        quoted(&pid_file)
    );
    repo.config(&format!(
        "[[checks.command]]\nname = \"tests\"\nrun = [\"sh\", \"-c\", {}]\ntimeout_secs = 60\n",
        serde_json::to_string(&script).unwrap()
    ));
    let started = Instant::now();
    let run = speed(
        repo.path(),
        &["review", "--task-id", "1", "--offline", "--json"],
        &[],
    );
    let sleep = Sleep::read(&pid_file, 3608);
    assert!(run.stdout.contains("\"verdict\""), "{}", run.transcript());
    assert!(
        !run.stdout.contains("did not finish"),
        "{}",
        run.transcript()
    );
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "{:?}",
        started.elapsed()
    );
    sleep.assert_gone("the check command");
}
