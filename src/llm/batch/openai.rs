//! The OpenAI Batch API: the requests as a JSONL file (`{custom_id, method,
//! url, body}` a line, each body a chat-completions request) uploaded to
//! `POST /files` with `purpose=batch`, then `POST /batches` with
//! `completion_window: "24h"`; `GET /batches/{id}` until its status is
//! final (`completed`, `expired`, `cancelled`, `failed`), then the output
//! and error files from `GET /files/{id}/content`: one line per request,
//! `{custom_id, response: {status_code, body}, error}`.

use serde_json::{Value, json};

use super::super::http::{Method, Outgoing, Payload};
use super::super::openai::{OpenAi, read_answer};
use super::super::{Config, Error, ProviderKind};
use super::{Answer, Api, Ended, Item, Progress, Results, Submitted};

/// OpenAI's limit on one batch input file.
const MAX_FILE_BYTES: usize = 200 * 1024 * 1024;
const ENDPOINT: &str = "/v1/chat/completions";
const FINAL: &[&str] = &["completed", "expired", "cancelled", "failed"];

pub(super) struct Batches {
    inner: OpenAi,
    /// The configured base URL, e.g. `https://api.openai.com/v1`.
    base: String,
    max_answer_bytes: usize,
}

impl Batches {
    pub(super) fn new(inner: OpenAi, config: &Config) -> Batches {
        let base = inner
            .url
            .strip_suffix("/chat/completions")
            .unwrap_or(&inner.url)
            .to_string();
        Batches {
            inner,
            base,
            max_answer_bytes: config.max_answer_bytes,
        }
    }

    /// The requests as the JSONL file the Batch API reads.
    fn input_file(&self, items: &[Item]) -> String {
        let mut text = String::new();
        for item in items {
            let line = json!({
                "custom_id": item.custom_id,
                "method": "POST",
                "url": ENDPOINT,
                "body": self.inner.body(&item.request),
            });
            text.push_str(&line.to_string());
            text.push('\n');
        }
        text
    }

    /// `POST /files` as multipart/form-data: `purpose=batch` and the file.
    fn upload(&self, jsonl: &str) -> Result<String, Error> {
        let url = format!("{}/files", self.base);
        let (content_type, bytes) = multipart(jsonl);
        let answer = self.inner.transport.json(&Outgoing {
            method: Method::Post,
            url: &url,
            headers: &self.inner.headers,
            payload: Payload::Bytes {
                content_type,
                bytes,
            },
            limit: self.max_answer_bytes,
            // A second upload of the same file costs nothing.
            idempotent: true,
        })?;
        super::checked_id(&answer.json, "/id", &url)
    }
}

impl Api for Batches {
    fn provider(&self) -> ProviderKind {
        ProviderKind::OpenAi
    }

    fn model(&self) -> &str {
        &self.inner.model
    }

    fn submit(&self, items: &[Item]) -> Result<Submitted, Error> {
        let jsonl = self.input_file(items);
        if jsonl.len() > MAX_FILE_BYTES {
            return Err(Error::Batch {
                what: format!(
                    "the batch of {} requests is {} bytes, more than the {MAX_FILE_BYTES} OpenAI accepts in one batch file: review fewer tasks at once (--shard K/N, --feature)",
                    items.len(),
                    jsonl.len()
                ),
            });
        }
        let file = self.upload(&jsonl)?;
        let url = format!("{}/batches", self.base);
        let body = json!({
            "input_file_id": file,
            "endpoint": ENDPOINT,
            "completion_window": "24h",
            "metadata": {"created_by": "speed"},
        });
        // Sent once: a retried creation could be a second, paid batch.
        let answer = self.inner.transport.json(&Outgoing {
            method: Method::Post,
            url: &url,
            headers: &self.inner.headers,
            payload: Payload::Json(&body),
            limit: self.max_answer_bytes,
            idempotent: false,
        })?;
        Ok(Submitted {
            id: super::checked_id(&answer.json, "/id", &url)?,
            input_file: Some(file),
            status: status_of(&answer.json),
        })
    }

    fn poll(&self, id: &str) -> Result<Progress, Error> {
        let url = format!("{}/batches/{id}", self.base);
        let answer = self.inner.transport.get(&url, &self.inner.headers)?;
        let json = &answer.json;
        let status = status_of(json);
        if !FINAL.contains(&status.as_str()) {
            let counts = json
                .get("request_counts")
                .map(|c| super::shown(&c.to_string()))
                .unwrap_or_default();
            return Ok(Progress::Running { status, counts });
        }
        let mut files = Vec::new();
        for key in ["/output_file_id", "/error_file_id"] {
            if json.pointer(key).is_some_and(|v| !v.is_null()) {
                files.push(super::checked_id(json, key, &url)?);
            }
        }
        let failure = (status == "failed").then(|| {
            let first = json
                .pointer("/errors/data/0/message")
                .and_then(Value::as_str)
                .map(super::shown)
                .unwrap_or_else(|| "no reason given".to_string());
            format!("the batch failed: {first}")
        });
        Ok(Progress::Ended(Ended {
            status,
            files,
            failure,
        }))
    }

    fn results(&self, id: &str, ended: &Ended, expected: usize) -> Result<Results, Error> {
        let mut results = Results::default();
        let limit = super::results_limit(self.max_answer_bytes, expected);
        for file in &ended.files {
            let url = format!("{}/files/{file}/content", self.base);
            let (text, _) = self.inner.transport.text(&Outgoing {
                method: Method::Get,
                url: &url,
                headers: &self.inner.headers,
                payload: Payload::Empty,
                limit,
                idempotent: true,
            })?;
            let read = |line: &Value| read_line(line, &url, id, self.inner.max_output_tokens);
            super::read_lines(&text, &url, &mut results, &read);
        }
        Ok(results)
    }
}

fn status_of(json: &Value) -> String {
    super::status_word(json.get("status").and_then(Value::as_str))
}

/// One line of an output or error file.
fn read_line(
    line: &Value,
    url: &str,
    batch: &str,
    max_output_tokens: u32,
) -> Option<(String, Answer)> {
    let custom_id = line.get("custom_id")?.as_str()?.to_string();
    if let Some(error) = line.get("error").filter(|e| !e.is_null()) {
        let code = error.get("code").and_then(Value::as_str).unwrap_or("error");
        let message = error.get("message").and_then(Value::as_str).unwrap_or("");
        let why = match code {
            "batch_expired" => "expired".to_string(),
            code => format!(
                "errored ({}: {})",
                super::shown(code),
                super::shown(message)
            ),
        };
        return Some((custom_id, Answer::Unanswered(why)));
    }
    let response = line.get("response")?;
    let status = response.get("status_code")?.as_u64()?;
    let body = response.get("body")?;
    if status != 200 {
        let message = body
            .pointer("/error/message")
            .and_then(Value::as_str)
            .unwrap_or("");
        let why = format!("errored (HTTP {status}: {})", super::shown(message));
        return Some((custom_id, Answer::Unanswered(why)));
    }
    Some((
        custom_id,
        super::answered(read_answer(body, url, max_output_tokens, 1), batch),
    ))
}

/// A multipart/form-data body of `purpose=batch` and the file, with a
/// boundary the file does not contain.
fn multipart(jsonl: &str) -> (String, Vec<u8>) {
    let boundary = loop {
        let candidate = format!("speed-{:016x}{:016x}", fastrand::u64(..), fastrand::u64(..));
        if !jsonl.contains(&candidate) {
            break candidate;
        }
    };
    let mut body = String::with_capacity(jsonl.len() + 400);
    body.push_str(&format!(
        "--{boundary}\r\nContent-Disposition: form-data; name=\"purpose\"\r\n\r\nbatch\r\n"
    ));
    body.push_str(&format!(
        "--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"speed-batch.jsonl\"\r\nContent-Type: application/jsonl\r\n\r\n"
    ));
    body.push_str(jsonl);
    body.push_str(&format!("\r\n--{boundary}--\r\n"));
    (
        format!("multipart/form-data; boundary={boundary}"),
        body.into_bytes(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_output_line_reads_as_a_synchronous_answer() {
        let line = json!({"id": "r1", "custom_id": "c1", "error": null,
            "response": {"status_code": 200, "body": {"choices": [{"message": {"content": "{}"}, "finish_reason": "stop"}],
                                                        "usage": {"prompt_tokens": 7, "completion_tokens": 2}}}});
        let (id, answer) = read_line(&line, "u", "batch_1", 10).unwrap();
        assert_eq!(id, "c1");
        assert!(
            matches!(answer, Answer::Answered(Ok(c)) if c.prompt_tokens == Some(7) && c.batch.as_deref() == Some("batch_1"))
        );
    }

    #[test]
    fn error_lines_are_unanswered() {
        let expired = json!({"custom_id": "c2", "response": null, "error": {"code": "batch_expired", "message": "not done in time"}});
        assert!(
            matches!(read_line(&expired, "u", "b", 1).unwrap().1, Answer::Unanswered(w) if w == "expired")
        );
        let refused = json!({"custom_id": "c3", "error": null,
            "response": {"status_code": 400, "body": {"error": {"message": "context too long"}}}});
        assert!(
            matches!(read_line(&refused, "u", "b", 1).unwrap().1, Answer::Unanswered(w) if w.contains("HTTP 400") && w.contains("context too long"))
        );
        assert!(read_line(&json!({"custom_id": "c4"}), "u", "b", 1).is_none());
    }

    #[test]
    fn the_upload_is_multipart_with_a_fresh_boundary() {
        let (content_type, body) = multipart("{\"a\":1}\n");
        let boundary = content_type
            .strip_prefix("multipart/form-data; boundary=")
            .unwrap();
        let body = String::from_utf8(body).unwrap();
        assert!(body.starts_with(&format!("--{boundary}\r\n")));
        assert!(body.contains("name=\"purpose\"\r\n\r\nbatch\r\n"));
        assert!(body.contains("filename=\"speed-batch.jsonl\""));
        assert!(body.ends_with(&format!("{{\"a\":1}}\n\r\n--{boundary}--\r\n")));
    }
}
