//! One command check's process: its argv run without a shell in a
//! folder, in its own process group, with no input, bounded by its timeout
//! (after which the whole group is killed); the tail of both streams kept
//! for a failure's finding, and the head of each for a parser.

use std::collections::VecDeque;
use std::io::Read;
use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use super::{CommandCheck, Finding};
use crate::process;

/// Output kept per command: the tail is what explains a failure.
const KEPT_BYTES: usize = 64 * 1024;

/// Output kept per stream for a parser: the head, since a JSON document
/// or the first messages are what can be read.
pub const PARSED_BYTES: usize = 32 << 20;

/// What a finding shows of the output.
const SHOWN_LINES: usize = 40;
const SHOWN_BYTES: usize = 4000;

/// How often a running command's deadline is checked.
const POLL: Duration = Duration::from_millis(20);

/// How long to wait for output after the command exited (a grandchild
/// holding the pipes open is killed with the group first).
const DRAIN: Duration = Duration::from_secs(2);

/// The finding of a command that failed as a whole: its problem and the
/// tail of its output.
pub(super) fn failure(
    command: &CommandCheck,
    problem: &str,
    short: &str,
    skipped: &[String],
    output: &[u8],
) -> Finding {
    let mut message = format!(
        "`{}` {problem} (in a checkout of {short}).",
        command.run.join(" ")
    );
    if !skipped.is_empty() {
        message.push_str(&format!(" Not in the checkout: {}.", skipped.join(", ")));
    }
    let tail = tail(output);
    if !tail.is_empty() {
        message.push_str("\nLast lines of its output:\n");
        message.push_str(&tail);
    }
    Finding {
        check: command.name.clone(),
        category: command.tool.category,
        severity: command.severity,
        message,
        advisory: command.tool.blocking == super::Blocking::Never,
        ..Finding::default()
    }
}

/// How a command ended, and what it wrote.
#[derive(Debug)]
pub(super) struct Outcome {
    pub(super) ended: Ended,
    /// The tail of both streams, interleaved as they came.
    pub(super) output: Vec<u8>,
    /// The head of each stream, for a parser (empty without one).
    pub(super) stdout: Captured,
    pub(super) stderr: Captured,
}

#[derive(Debug)]
pub(super) enum Ended {
    Exited(ExitStatus),
    TimedOut(Duration),
    NotStarted(String),
    Failed(String),
}

impl Outcome {
    pub(super) fn problem(&self) -> Option<String> {
        match &self.ended {
            Ended::Exited(status) if status.success() => None,
            Ended::Exited(status) => Some(match status.code() {
                Some(code) => format!("exited with status {code}"),
                None => format!("was stopped ({status})"),
            }),
            Ended::TimedOut(after) => Some(format!(
                "did not finish within {} and was killed",
                humantime::format_duration(*after)
            )),
            Ended::NotStarted(why) => Some(format!("could not be started: {why}")),
            Ended::Failed(why) => Some(format!("could not be run to the end: {why}")),
        }
    }
}

/// The first bytes of one stream, up to a cap, and how many more came.
#[derive(Debug, Default)]
pub(super) struct Captured {
    pub(super) bytes: Vec<u8>,
    pub(super) over: u64,
    cap: usize,
}

impl Captured {
    fn with_cap(cap: usize) -> Captured {
        Captured {
            cap,
            ..Captured::default()
        }
    }

    fn push(&mut self, chunk: &[u8]) {
        let room = self.cap.saturating_sub(self.bytes.len()).min(chunk.len());
        self.bytes.extend_from_slice(&chunk[..room]);
        self.over += (chunk.len() - room) as u64;
    }
}

/// What the reader threads fill.
#[derive(Default)]
struct Streams {
    tail: Tail,
    heads: [Captured; 2],
}

/// The last bytes written to stdout and stderr, interleaved as they came.
#[derive(Default)]
struct Tail {
    bytes: VecDeque<u8>,
}

impl Tail {
    fn push(&mut self, chunk: &[u8]) {
        self.bytes.extend(chunk);
        let over = self.bytes.len().saturating_sub(KEPT_BYTES);
        self.bytes.drain(..over);
    }
}

pub(super) fn run_one(check: &CommandCheck, dir: &Path) -> Outcome {
    let not_started = |why: String| Outcome {
        ended: Ended::NotStarted(why),
        output: Vec::new(),
        stdout: Captured::default(),
        stderr: Captured::default(),
    };
    let Some((program, args)) = check.run.split_first() else {
        return not_started("its `run` is empty".to_string());
    };
    let mut command = Command::new(program);
    command
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // Its own process group, killed on Ctrl-C and when speed dies too.
    let mut group = match process::Group::spawn(command) {
        Ok(group) => group,
        Err(e) => return not_started(e.to_string()),
    };
    let child = group.child();
    // Only a parser needs the output whole.
    let cap = if check.tool.parser.is_some() {
        PARSED_BYTES
    } else {
        0
    };
    let streams = Arc::new(Mutex::new(Streams {
        tail: Tail::default(),
        heads: [Captured::with_cap(cap), Captured::with_cap(cap)],
    }));
    let mut readers = Vec::new();
    let pipes: [Option<Box<dyn Read + Send>>; 2] = [
        child
            .stdout
            .take()
            .map(|s| Box::new(s) as Box<dyn Read + Send>),
        child
            .stderr
            .take()
            .map(|s| Box::new(s) as Box<dyn Read + Send>),
    ];
    for (which, stream) in pipes.into_iter().enumerate() {
        let Some(mut stream) = stream else {
            continue;
        };
        let streams = Arc::clone(&streams);
        readers.push(thread::spawn(move || {
            let mut buf = [0u8; 8192];
            loop {
                match stream.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => {
                        if let Ok(mut s) = streams.lock() {
                            s.tail.push(&buf[..n]);
                            s.heads[which].push(&buf[..n]);
                        }
                    }
                }
            }
        }));
    }
    let ended = wait(&mut group, check.timeout);
    // Whatever the command left running in its group goes too: a stray
    // server would keep the checkout busy and the pipes open.
    let ended = match (ended, group.finish()) {
        (Some(ended), _) => ended,
        (None, Ok(status)) => Ended::Exited(status),
        (None, Err(e)) => Ended::Failed(e.to_string()),
    };
    let deadline = Instant::now() + DRAIN;
    for reader in readers {
        while !reader.is_finished() && Instant::now() < deadline {
            thread::sleep(POLL);
        }
        if reader.is_finished() {
            reader.join().ok();
        }
    }
    let (output, [stdout, stderr]) = match streams.lock() {
        Ok(mut s) => (
            s.tail.bytes.iter().copied().collect(),
            std::mem::take(&mut s.heads),
        ),
        Err(_) => (Vec::new(), Default::default()),
    };
    Outcome {
        ended,
        output,
        stdout,
        stderr,
    }
}

/// Waits for the leader to exit (`None`; its status comes with reaping)
/// or for the timeout.
fn wait(group: &mut process::Group, timeout: Duration) -> Option<Ended> {
    let deadline = Instant::now() + timeout;
    loop {
        match group.exited() {
            Ok(true) => return None,
            Ok(false) => {}
            Err(e) => return Some(Ended::Failed(e.to_string())),
        }
        let now = Instant::now();
        if now >= deadline {
            return Some(Ended::TimedOut(timeout));
        }
        thread::sleep(POLL.min(deadline - now));
    }
}

/// The last lines of the output, at most `SHOWN_LINES` and `SHOWN_BYTES`,
/// with secrets redacted (a test run may print its environment).
pub(super) fn tail(output: &[u8]) -> String {
    let text = String::from_utf8_lossy(output);
    let text = text.trim_end();
    let lines: Vec<&str> = text.lines().collect();
    let from = lines.len().saturating_sub(SHOWN_LINES);
    let mut shown = lines[from..].join("\n");
    if shown.len() > SHOWN_BYTES {
        let mut cut = shown.len() - SHOWN_BYTES;
        while !shown.is_char_boundary(cut) {
            cut += 1;
        }
        shown = format!("…{}", &shown[cut..]);
    }
    let context = crate::secrets::Context {
        kind: crate::secrets::Kind::Config,
        test: false,
    };
    crate::secrets::redact(&shown, context).text
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use crate::severity::Severity;

    fn check(run: &[&str], timeout_ms: u64) -> CommandCheck {
        CommandCheck {
            name: "probe".to_string(),
            run: run.iter().map(|s| s.to_string()).collect(),
            severity: Severity::Major,
            timeout: Duration::from_millis(timeout_ms),
            tool: crate::checks::Tool::default(),
        }
    }

    #[test]
    fn success_is_no_problem() {
        let dir = tempfile::tempdir().unwrap();
        let out = run_one(&check(&["true"], 5000), dir.path());
        assert!(out.problem().is_none(), "{out:?}");
    }

    #[test]
    fn a_failure_keeps_the_tail_of_both_streams() {
        let dir = tempfile::tempdir().unwrap();
        let out = run_one(
            &check(&["sh", "-c", "echo out; echo err >&2; pwd; exit 3"], 5000),
            dir.path(),
        );
        assert_eq!(out.problem().as_deref(), Some("exited with status 3"));
        let text = String::from_utf8_lossy(&out.output);
        assert!(text.contains("out") && text.contains("err"), "{text}");
        // It ran in the folder it was given.
        let canonical = dir.path().canonicalize().unwrap();
        assert!(text.contains(canonical.to_str().unwrap()), "{text}");
    }

    #[test]
    fn no_shell_unless_asked() {
        let dir = tempfile::tempdir().unwrap();
        let out = run_one(&check(&["echo", "$HOME", ";", "false"], 5000), dir.path());
        assert!(out.problem().is_none());
        assert_eq!(String::from_utf8_lossy(&out.output), "$HOME ; false\n");
    }

    #[test]
    fn a_timeout_kills_the_whole_group() {
        let dir = tempfile::tempdir().unwrap();
        let marker = dir.path().join("survivor");
        let script = format!("(sleep 2; touch {}) & sleep 30", marker.display());
        let started = Instant::now();
        let out = run_one(&check(&["sh", "-c", &script], 300), dir.path());
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{:?}",
            started.elapsed()
        );
        assert_eq!(
            out.problem().as_deref(),
            Some("did not finish within 300ms and was killed")
        );
        thread::sleep(Duration::from_millis(2500));
        assert!(
            !marker.exists(),
            "the background child survived the timeout"
        );
    }

    #[test]
    fn a_missing_program_is_a_problem_not_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let out = run_one(&check(&["speed-no-such-program"], 5000), dir.path());
        assert!(
            out.problem().unwrap().starts_with("could not be started"),
            "{out:?}"
        );
    }

    #[test]
    fn the_tail_is_short_and_redacted() {
        let mut output = String::new();
        for i in 0..100 {
            output.push_str(&format!("line {i}\n"));
        }
        output.push_str("AWS_SECRET_ACCESS_KEY=sW7pLq2vXk9RmT4nB8cYd1ZfHj3Ga6Ue5Io0Kp/+\n");
        let shown = tail(output.as_bytes());
        assert_eq!(shown.lines().count(), SHOWN_LINES);
        assert!(shown.starts_with("line 61"), "{shown}");
        assert!(!shown.contains("sW7pLq2v"), "{shown}");
        assert!(shown.contains("[REDACTED:"), "{shown}");
    }
}
