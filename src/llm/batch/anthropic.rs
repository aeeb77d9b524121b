//! Anthropic Message Batches: `POST /v1/messages/batches` with
//! `{requests: [{custom_id, params}]}` (each `params` the body of a
//! `/v1/messages` request), `GET /v1/messages/batches/{id}` until its
//! `processing_status` is `ended`, then its `results_url`: one JSON line
//! per request, `{custom_id, result: {type: succeeded | errored | canceled
//! | expired, message | error}}`.

use serde_json::{Value, json};

use super::super::anthropic::{Anthropic, read_answer};
use super::super::http::{self, Method, Outgoing, Payload};
use super::super::{Config, Error, ProviderKind};
use super::{Answer, Api, Ended, Item, Progress, Results, Submitted};

/// Anthropic's limit on one batch's body.
const MAX_BATCH_BYTES: usize = 256 * 1024 * 1024;

pub(super) struct Batches {
    inner: Anthropic,
    /// `{base}/v1/messages/batches`.
    url: String,
    max_answer_bytes: usize,
}

impl Batches {
    pub(super) fn new(inner: Anthropic, config: &Config) -> Batches {
        let url = format!("{}/batches", inner.url);
        Batches {
            inner,
            url,
            max_answer_bytes: config.max_answer_bytes,
        }
    }

    fn batch_url(&self, id: &str) -> String {
        format!("{}/{id}", self.url)
    }
}

impl Api for Batches {
    fn provider(&self) -> ProviderKind {
        ProviderKind::Anthropic
    }

    fn model(&self) -> &str {
        &self.inner.model
    }

    fn submit(&self, items: &[Item]) -> Result<Submitted, Error> {
        let requests: Vec<Value> = items
            .iter()
            .map(|item| json!({"custom_id": item.custom_id, "params": self.inner.body(&item.request)}))
            .collect();
        let body = json!({ "requests": requests });
        let size = body.to_string().len();
        if size > MAX_BATCH_BYTES {
            return Err(Error::Batch {
                what: format!(
                    "the batch of {} requests is {size} bytes, more than the {MAX_BATCH_BYTES} Anthropic accepts in one batch: review fewer tasks at once (--shard K/N, --feature)",
                    items.len()
                ),
            });
        }
        // Sent once: a retried creation could be a second, paid batch.
        let answer = self.inner.transport.json(&Outgoing {
            method: Method::Post,
            url: &self.url,
            headers: &self.inner.headers,
            payload: Payload::Json(&body),
            limit: self.max_answer_bytes,
            idempotent: false,
        })?;
        Ok(Submitted {
            id: super::checked_id(&answer.json, "/id", &self.url)?,
            input_file: None,
            status: status_of(&answer.json),
        })
    }

    fn poll(&self, id: &str) -> Result<Progress, Error> {
        let url = self.batch_url(id);
        let answer = self.inner.transport.get(&url, &self.inner.headers)?;
        let status = status_of(&answer.json);
        if status != "ended" {
            let counts = answer
                .json
                .get("request_counts")
                .map(|c| super::shown(&c.to_string()))
                .unwrap_or_default();
            return Ok(Progress::Running { status, counts });
        }
        let results_url = match answer.json.get("results_url").and_then(Value::as_str) {
            Some(results) => results.to_string(),
            None => {
                return Err(Error::BadResponse {
                    url,
                    reason: "the batch has ended but names no results_url".to_string(),
                    body: http::body_start(&answer.json.to_string()),
                    attempts: answer.attempts,
                });
            }
        };
        // The key goes with the request: only to the configured origin.
        if !http::same_origin(&self.url, &results_url) {
            return Err(Error::Batch {
                what: format!(
                    "{url} names results at {}, off the configured origin: speed sends the API key only to base_url's origin",
                    super::shown(&results_url)
                ),
            });
        }
        Ok(Progress::Ended(Ended {
            status,
            files: vec![results_url],
            failure: None,
        }))
    }

    fn results(&self, id: &str, ended: &Ended, expected: usize) -> Result<Results, Error> {
        let mut results = Results::default();
        let limit = super::results_limit(self.max_answer_bytes, expected);
        for url in &ended.files {
            let (text, _) = self.inner.transport.text(&Outgoing {
                method: Method::Get,
                url,
                headers: &self.inner.headers,
                payload: Payload::Empty,
                limit,
                idempotent: true,
            })?;
            let read = |line: &Value| read_line(line, url, id, self.inner.max_output_tokens);
            super::read_lines(&text, url, &mut results, &read);
        }
        Ok(results)
    }
}

/// `processing_status`, or "unknown" when there is none.
fn status_of(json: &Value) -> String {
    super::status_word(json.get("processing_status").and_then(Value::as_str))
}

/// One line of the results: its custom_id and what became of it.
fn read_line(
    line: &Value,
    url: &str,
    batch: &str,
    max_output_tokens: u32,
) -> Option<(String, Answer)> {
    let custom_id = line.get("custom_id")?.as_str()?.to_string();
    let result = line.get("result")?;
    let answer = match result.get("type")?.as_str()? {
        "succeeded" => {
            let message = result.get("message")?;
            // No structured-output tool is named: the forced tool is the
            // only one offered, and `read_answer` takes its first use.
            let tool = message
                .get("content")
                .and_then(Value::as_array)
                .and_then(|blocks| {
                    blocks
                        .iter()
                        .any(|b| b.get("type").and_then(Value::as_str) == Some("tool_use"))
                        .then_some("answer")
                });
            super::answered(read_answer(message, url, tool, max_output_tokens, 1), batch)
        }
        "errored" => {
            let error = result
                .pointer("/error/error")
                .or_else(|| result.get("error"));
            let why = error
                .map(|e| {
                    let kind = e.get("type").and_then(Value::as_str).unwrap_or("error");
                    let message = e.get("message").and_then(Value::as_str).unwrap_or("");
                    // An error type is a word: nothing else is printed.
                    let kind: String = kind
                        .chars()
                        .filter(|c| c.is_ascii_alphanumeric() || *c == '_')
                        .take(40)
                        .collect();
                    format!("errored ({kind}: {})", super::shown(message))
                })
                .unwrap_or_else(|| "errored".to_string());
            Answer::Unanswered(why)
        }
        "expired" => Answer::Unanswered("expired".to_string()),
        "canceled" => Answer::Unanswered("canceled".to_string()),
        _ => return None,
    };
    Some((custom_id, answer))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(result: Value) -> Value {
        json!({"custom_id": "f_1_abc_p1_review", "result": result})
    }

    #[test]
    fn a_succeeded_result_reads_as_a_synchronous_answer() {
        let message = json!({"content": [{"type": "text", "text": "{\"verdict\":\"approve\"}"}],
                             "stop_reason": "end_turn",
                             "usage": {"input_tokens": 10, "output_tokens": 3, "cache_read_input_tokens": 90}});
        let (id, answer) = read_line(
            &line(json!({"type": "succeeded", "message": message})),
            "u",
            "b1",
            100,
        )
        .unwrap();
        assert_eq!(id, "f_1_abc_p1_review");
        let Answer::Answered(Ok(completion)) = answer else {
            panic!("{answer:?}")
        };
        assert_eq!(completion.text, "{\"verdict\":\"approve\"}");
        assert_eq!(completion.prompt_tokens, Some(100));
        assert_eq!(completion.cache_read_tokens, Some(90));
        assert_eq!(completion.batch.as_deref(), Some("b1"));
    }

    #[test]
    fn a_tool_answer_and_a_cut_off_one() {
        let message = json!({"content": [{"type": "tool_use", "name": "verdict", "input": {"verdict": "approve"}}],
                             "stop_reason": "tool_use", "usage": {"input_tokens": 1, "output_tokens": 1}});
        let (_, answer) = read_line(
            &line(json!({"type": "succeeded", "message": message})),
            "u",
            "b",
            100,
        )
        .unwrap();
        assert!(matches!(answer, Answer::Answered(Ok(c)) if c.text == "{\"verdict\":\"approve\"}"));
        let cut = json!({"content": [{"type": "text", "text": "{"}], "stop_reason": "max_tokens"});
        let (_, answer) = read_line(
            &line(json!({"type": "succeeded", "message": cut})),
            "u",
            "b",
            100,
        )
        .unwrap();
        assert!(matches!(
            answer,
            Answer::Answered(Err(Error::Truncated { .. }))
        ));
    }

    #[test]
    fn errored_expired_and_canceled_are_unanswered_and_others_unreadable() {
        let errored = json!({"type": "errored", "error": {"type": "error", "error": {"type": "invalid_request_error\u{1b}[2J", "message": "too long"}}});
        let (_, answer) = read_line(&line(errored), "u", "b", 1).unwrap();
        assert!(
            matches!(&answer, Answer::Unanswered(why) if why.contains("(invalid_request_error2J: \"too long\")")),
            "{answer:?}"
        );
        for kind in ["expired", "canceled"] {
            let (_, answer) = read_line(&line(json!({"type": kind})), "u", "b", 1).unwrap();
            assert!(matches!(&answer, Answer::Unanswered(why) if why == kind));
        }
        assert!(read_line(&line(json!({"type": "mystery"})), "u", "b", 1).is_none());
        assert!(read_line(&json!({"result": {"type": "expired"}}), "u", "b", 1).is_none());
    }
}
