//! The `command` provider: runs a configured program (no shell), writes the
//! conversation on its stdin as one text with role markers, and takes its
//! stdout as the answer. The run itself (process group, time limit, capped
//! output, no survivor on interrupt or when speed dies, not even a daemon
//! that left the group, on Linux) belongs to `crate::process`.

use std::time::{Duration, Instant};

use crate::process::{self, Capture, Limits};

use super::{Completion, Config, Error, Provider, Request, Role};

/// How much of stderr goes into an error: enough for a stack trace's end.
const STDERR_TAIL_BYTES: usize = 2048;

#[derive(Debug)]
pub(crate) struct Command {
    argv: Vec<String>,
    /// The argv as shown in errors.
    shown: String,
    model: String,
    timeout: Duration,
    max_answer_bytes: usize,
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
            max_answer_bytes: config.max_answer_bytes,
            structured_output: config.structured_output,
        }
    }

    fn origin(&self) -> String {
        format!("the model command `{}`", self.shown)
    }

    fn error(&self, err: process::Error) -> Error {
        match err {
            process::Error::Spawn(err) => Error::Spawn {
                command: self.shown.clone(),
                reason: err.to_string(),
            },
            process::Error::Timeout { after } => Error::Timeout {
                target: format!("`{}`", self.shown),
                after,
                attempts: 1,
            },
            process::Error::TooLarge { limit, .. } => Error::TooLarge {
                origin: self.origin(),
                limit,
                attempts: 1,
            },
            other => Error::CommandIo {
                command: self.shown.clone(),
                reason: other.to_string(),
            },
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
        command.args(args);
        let output = process::run(
            command,
            flatten(request, self.structured_output).into_bytes(),
            &Limits {
                timeout: self.timeout,
                stdout: Capture::Upto(self.max_answer_bytes),
                stderr: Capture::Tail(STDERR_TAIL_BYTES),
            },
        )
        .map_err(|err| self.error(err))?;

        if !output.status.success() {
            return Err(Error::Command {
                command: self.shown.clone(),
                status: output.status.to_string(),
                stderr_tail: String::from_utf8_lossy(&output.stderr).trim().to_string(),
            });
        }
        let text = String::from_utf8_lossy(&output.stdout).into_owned();
        if text.trim().is_empty() {
            return Err(Error::EmptyAnswer {
                origin: self.origin(),
                attempts: 1,
            });
        }
        Ok(Completion {
            text,
            prompt_tokens: None,
            completion_tokens: None,
            duration: started.elapsed(),
            attempts: 1,
            ..Completion::default()
        })
    }
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
        // Minified: the prompt shows the answer's shape already; this is
        // the exact schema for a program that enforces it.
        let schema = schema.to_string();
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
            cache_prefix: None,
        };
        assert_eq!(
            flatten(&request, false),
            "=== SYSTEM ===\nbe strict\n\n=== USER ===\nreview\n\n=== ASSISTANT ===\n{}\n\n=== USER ===\nfix it\n"
        );
        let structured = flatten(&request, true);
        assert!(structured.contains("=== RESPONSE FORMAT ===\nAnswer with one JSON object"));
        assert!(structured.contains("{\"type\":\"object\"}"));
    }
}
