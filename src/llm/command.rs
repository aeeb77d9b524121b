//! The `command` provider: runs a configured program (no shell), writes the
//! conversation on its stdin as one text with role markers, and takes its
//! stdout as the answer. It owns the child's lifetime: the run is bounded by
//! the timeout, after which the child and its process group are killed.

use std::io::{self, Read, Write};
use std::process::{Child, ExitStatus, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use super::{Completion, Config, Error, Provider, Request, Role};

/// How much of stderr goes into an error: enough for a stack trace's end.
const STDERR_TAIL_BYTES: usize = 2048;

/// How often the deadline is checked while the command runs.
const POLL: Duration = Duration::from_millis(10);

#[derive(Debug)]
pub(crate) struct Command {
    argv: Vec<String>,
    /// The argv as shown in errors.
    shown: String,
    model: String,
    timeout: Duration,
    structured_output: bool,
}

impl Command {
    /// `config.command` must not be empty; `llm::provider` checks it.
    pub(crate) fn new(config: &Config) -> Command {
        let shown = config.command.join(" ");
        let model = config
            .model
            .clone()
            .or_else(|| config.command.first().cloned())
            .unwrap_or_default();
        Command {
            argv: config.command.clone(),
            shown,
            model,
            timeout: config.timeout,
            structured_output: config.structured_output,
        }
    }

    fn io_error(&self, what: &str, err: &io::Error) -> Error {
        Error::CommandIo {
            command: self.shown.clone(),
            reason: format!("{what}: {err}"),
        }
    }
}

impl Provider for Command {
    fn name(&self) -> &str {
        "command"
    }

    fn model(&self) -> &str {
        &self.model
    }

    fn complete(&self, request: &Request) -> Result<Completion, Error> {
        let started = Instant::now();
        let (program, args) = self
            .argv
            .split_first()
            .ok_or_else(|| Error::NotConfigured {
                hint: "provider \"command\" has an empty command".to_string(),
            })?;
        let mut command = std::process::Command::new(program);
        command
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        // Its own process group, so that a timeout can kill what the command
        // started too (a wrapper script's model process would otherwise keep
        // running and keep our pipes open).
        #[cfg(unix)]
        std::os::unix::process::CommandExt::process_group(&mut command, 0);
        crate::memory::restore_for_child(&mut command);
        let mut child = command.spawn().map_err(|err| Error::Spawn {
            command: self.shown.clone(),
            reason: err.to_string(),
        })?;

        let outcome = self.run(
            &mut child,
            flatten(request, self.structured_output),
            started,
        );
        if outcome.is_err() {
            kill(&mut child);
        }
        let (status, stdout, stderr) = outcome?;

        if !status.success() {
            return Err(Error::Command {
                command: self.shown.clone(),
                status: status.to_string(),
                stderr_tail: tail(&stderr),
            });
        }
        let text = String::from_utf8_lossy(&stdout).into_owned();
        if text.trim().is_empty() {
            return Err(Error::EmptyAnswer {
                origin: format!("the model command `{}`", self.shown),
                attempts: 1,
            });
        }
        Ok(Completion {
            text,
            prompt_tokens: None,
            completion_tokens: None,
            duration: started.elapsed(),
            attempts: 1,
        })
    }
}

/// What the helper threads report.
enum Event {
    Written(io::Result<()>),
    Stdout(io::Result<Vec<u8>>),
    Stderr(io::Result<Vec<u8>>),
}

impl Command {
    /// Feeds stdin and drains stdout and stderr on their own threads (a
    /// command writing more than a pipe buffer while we write its input would
    /// otherwise deadlock), until the child has exited and both streams are
    /// closed, or the deadline passes.
    fn run(
        &self,
        child: &mut Child,
        prompt: String,
        started: Instant,
    ) -> Result<(ExitStatus, Vec<u8>, Vec<u8>), Error> {
        let missing = |name: &str| Error::CommandIo {
            command: self.shown.clone(),
            reason: format!("{name} was not captured"),
        };
        let mut stdin = child.stdin.take().ok_or_else(|| missing("stdin"))?;
        let mut stdout = child.stdout.take().ok_or_else(|| missing("stdout"))?;
        let mut stderr = child.stderr.take().ok_or_else(|| missing("stderr"))?;

        let (events, received) = mpsc::channel();
        let sender = events.clone();
        // The channel may be gone if we already gave up on the command; the
        // result no longer matters then, so a failed send is not an error.
        thread::spawn(move || {
            let written = stdin.write_all(prompt.as_bytes());
            drop(stdin);
            sender.send(Event::Written(written)).ok();
        });
        let sender = events.clone();
        thread::spawn(move || {
            let mut buffer = Vec::new();
            let read = stdout.read_to_end(&mut buffer).map(|_| buffer);
            sender.send(Event::Stdout(read)).ok();
        });
        thread::spawn(move || {
            let mut buffer = Vec::new();
            let read = stderr.read_to_end(&mut buffer).map(|_| buffer);
            events.send(Event::Stderr(read)).ok();
        });

        let deadline = started + self.timeout;
        let mut written = None;
        let mut out = None;
        let mut err = None;
        let mut status = None;
        while written.is_none() || out.is_none() || err.is_none() || status.is_none() {
            if status.is_none() {
                status = child
                    .try_wait()
                    .map_err(|e| self.io_error("waiting for the command", &e))?;
            }
            let now = Instant::now();
            if now >= deadline {
                return Err(Error::Timeout {
                    target: format!("`{}`", self.shown),
                    after: self.timeout,
                    attempts: 1,
                });
            }
            match received.recv_timeout(POLL.min(deadline - now)) {
                Ok(Event::Written(result)) => written = Some(result),
                Ok(Event::Stdout(result)) => out = Some(result),
                Ok(Event::Stderr(result)) => err = Some(result),
                // Disconnected cannot happen before all three events arrive,
                // since each thread sends exactly once; a timeout re-polls.
                Err(_) => {}
            }
        }
        let status = status.ok_or_else(|| missing("exit status"))?;
        let stderr = err
            .ok_or_else(|| missing("stderr"))?
            .map_err(|e| self.io_error("reading stderr", &e))?;
        let stdout = out
            .ok_or_else(|| missing("stdout"))?
            .map_err(|e| self.io_error("reading stdout", &e))?;
        match written.ok_or_else(|| missing("stdin"))? {
            // A command may answer without reading all of its input (or fail
            // before reading it); its exit status and output say what happened.
            Err(e) if e.kind() == io::ErrorKind::BrokenPipe => {}
            Err(e) if status.success() => return Err(self.io_error("writing the prompt", &e)),
            _ => {}
        }
        Ok((status, stdout, stderr))
    }
}

/// Kills the child and everything in its process group, then reaps it.
fn kill(child: &mut Child) {
    #[cfg(unix)]
    if let Ok(pid) = i32::try_from(child.id()) {
        // SAFETY: kill(2) with a negative pid signals the process group we
        // created for this child at spawn; it touches no memory.
        unsafe {
            libc::kill(-pid, libc::SIGKILL);
        }
    }
    // Already-exited children make both calls fail; there is nothing left to
    // stop then, and the caller reports the timeout or I/O error it has.
    child.kill().ok();
    child.wait().ok();
}

/// The conversation as one text. The markers are unlikely in a spec or a diff,
/// unlike markdown headings, so the model can tell the roles apart.
fn flatten(request: &Request, structured_output: bool) -> String {
    let mut text = String::new();
    let mut section = |marker: &str, body: &str| {
        if !text.is_empty() {
            text.push_str("\n\n");
        }
        text.push_str("=== ");
        text.push_str(marker);
        text.push_str(" ===\n");
        text.push_str(body.trim_end());
    };
    if let Some(system) = &request.system {
        section("SYSTEM", system);
    }
    for message in &request.messages {
        let marker = match message.role {
            Role::User => "USER",
            Role::Assistant => "ASSISTANT",
        };
        section(marker, &message.content);
    }
    if let (true, Some((name, schema))) = (structured_output, &request.json_schema) {
        let schema = serde_json::to_string_pretty(schema).unwrap_or_else(|_| schema.to_string());
        section(
            "RESPONSE FORMAT",
            &format!(
                "Answer with one JSON object, and nothing else, that follows this JSON Schema (\"{name}\"):\n{schema}"
            ),
        );
    }
    text.push('\n');
    text
}

/// The last `STDERR_TAIL_BYTES` of stderr, trimmed.
fn tail(stderr: &[u8]) -> String {
    let start = stderr.len().saturating_sub(STDERR_TAIL_BYTES);
    String::from_utf8_lossy(&stderr[start..]).trim().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::Message;
    use serde_json::json;

    #[test]
    fn the_conversation_is_flattened_with_role_markers_in_order() {
        let request = Request {
            system: Some("be strict\n".into()),
            messages: vec![
                Message::user("review"),
                Message::assistant("{}"),
                Message::user("fix it"),
            ],
            json_schema: Some(("verdict".into(), json!({"type": "object"}))),
        };
        assert_eq!(
            flatten(&request, false),
            "=== SYSTEM ===\nbe strict\n\n=== USER ===\nreview\n\n=== ASSISTANT ===\n{}\n\n=== USER ===\nfix it\n"
        );
        let structured = flatten(&request, true);
        assert!(structured.contains("=== RESPONSE FORMAT ===\nAnswer with one JSON object"));
        assert!(structured.contains("\"type\": \"object\""));
    }

    #[test]
    fn the_stderr_tail_keeps_the_end() {
        let mut stderr = vec![b'a'; 5000];
        stderr.extend_from_slice(b"the real error\n");
        let kept = tail(&stderr);
        assert_eq!(kept.len(), STDERR_TAIL_BYTES - 1);
        assert!(kept.ends_with("the real error"));
    }
}
