//! The providers' batch APIs played on the loopback model server: Anthropic
//! Message Batches (`/v1/messages/batches`, `/v1/messages/batches/{id}`,
//! its `results_url`) and OpenAI Batch (`/v1/files` multipart upload,
//! `/v1/batches`, `/v1/batches/{id}`, `/v1/files/{id}/content`), with their
//! synchronous endpoints (`/v1/messages`, `/v1/chat/completions`) for what
//! speed asks directly.
//!
//! ```ignore
//! let api = BatchApi::anthropic(Script::answering(|_, _| Fate::Answer(approval)));
//! // base_url = api.server.root() (anthropic) or api.server.url() (openai)
//! ```
//!
//! A script says what becomes of each request (by its custom_id and body),
//! how many polls a batch stays in progress, whether the results come out
//! of order, cut off (a partial file), or with extra lines (an unknown
//! custom_id, garbage).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use super::model_server::{COMPLETION_TOKENS, ModelServer, PROMPT_TOKENS, Recorded, Reply};

/// What becomes of one request of a batch.
#[derive(Debug, Clone)]
pub enum Fate {
    /// Succeeded with this text as the answer.
    Answer(String),
    /// Succeeded, with this usage block instead of the plain one.
    AnswerWithUsage(String, Value),
    Errored,
    Expired,
    /// No line in the results at all.
    Missing,
}

type Decide = dyn Fn(&str, &Value) -> Fate + Send + Sync;
type Direct = dyn Fn(&Recorded) -> Reply + Send + Sync;

pub struct Script {
    pub fate: Box<Decide>,
    /// Polls answered "in progress" before the batch ends; `usize::MAX`:
    /// it never ends.
    pub polls_before_end: Arc<AtomicUsize>,
    /// Results in the reverse order of the requests.
    pub reverse: bool,
    /// The last result line cut in half.
    pub torn: bool,
    /// Lines added to the results.
    pub extra_lines: Vec<String>,
    /// The synchronous endpoint's answers.
    pub direct: Box<Direct>,
}

impl Script {
    pub fn answering(fate: impl Fn(&str, &Value) -> Fate + Send + Sync + 'static) -> Script {
        Script {
            fate: Box::new(fate),
            polls_before_end: Arc::new(AtomicUsize::new(0)),
            reverse: false,
            torn: false,
            extra_lines: Vec::new(),
            direct: Box::new(|_| Reply::status(500, "no direct answer scripted")),
        }
    }

    pub fn direct(mut self, direct: impl Fn(&Recorded) -> Reply + Send + Sync + 'static) -> Self {
        self.direct = Box::new(direct);
        self
    }
}

#[derive(Default)]
struct State {
    /// Every batch submitted: its requests as (custom_id, body).
    batches: Vec<Vec<(String, Value)>>,
    /// OpenAI: uploaded files by id.
    files: Vec<String>,
    polls: usize,
}

pub struct BatchApi {
    pub server: ModelServer,
    state: Arc<Mutex<State>>,
}

#[derive(Clone, Copy, PartialEq)]
enum Flavour {
    Anthropic,
    OpenAi,
}

impl BatchApi {
    pub fn anthropic(script: Script) -> BatchApi {
        BatchApi::start(Flavour::Anthropic, script)
    }

    pub fn openai(script: Script) -> BatchApi {
        BatchApi::start(Flavour::OpenAi, script)
    }

    /// The requests of the `n`-th batch submitted (from 0): custom_id and
    /// the body speed sent for it (`params` or the JSONL line's `body`).
    pub fn submitted(&self, n: usize) -> Vec<(String, Value)> {
        self.state.lock().unwrap().batches[n].clone()
    }

    pub fn batches(&self) -> usize {
        self.state.lock().unwrap().batches.len()
    }

    /// Requests to the synchronous endpoint.
    pub fn direct_requests(&self) -> Vec<Recorded> {
        self.server
            .requests()
            .into_iter()
            .filter(|r| r.path.ends_with("/v1/messages") || r.path.ends_with("/chat/completions"))
            .collect()
    }

    fn start(flavour: Flavour, script: Script) -> BatchApi {
        let state = Arc::new(Mutex::new(State::default()));
        let shared = Arc::clone(&state);
        let root: Arc<Mutex<String>> = Arc::new(Mutex::new(String::new()));
        let base = Arc::clone(&root);
        let server = ModelServer::start(move |req| {
            let base = base.lock().unwrap().clone();
            route(flavour, &script, &shared, &base, req)
        });
        *root.lock().unwrap() = server.root();
        BatchApi { server, state }
    }
}

fn route(
    flavour: Flavour,
    script: &Script,
    state: &Mutex<State>,
    root: &str,
    req: &Recorded,
) -> Reply {
    let path = req.path.as_str();
    match (flavour, req.method.as_str(), path) {
        (_, "POST", "/v1/messages" | "/v1/chat/completions") => (script.direct)(req),
        (Flavour::Anthropic, "POST", "/v1/messages/batches") => {
            let requests: Vec<(String, Value)> = req.json()["requests"]
                .as_array()
                .expect("requests")
                .iter()
                .map(|r| {
                    (
                        r["custom_id"].as_str().unwrap().to_string(),
                        r["params"].clone(),
                    )
                })
                .collect();
            let mut state = state.lock().unwrap();
            state.batches.push(requests);
            let id = format!("msgbatch_{}", state.batches.len());
            Reply::json(
                200,
                json!({"id": id, "type": "message_batch", "processing_status": "in_progress"}),
            )
        }
        (Flavour::Anthropic, "GET", _) if path.starts_with("/v1/messages/batches/") => {
            let rest = &path["/v1/messages/batches/".len()..];
            let (id, results) = match rest.strip_suffix("/results") {
                Some(id) => (id, true),
                None => (rest, false),
            };
            let Some(n) = batch_number(id, "msgbatch_") else {
                return Reply::status(404, "no such batch");
            };
            if results {
                return Reply::status(200, &results_file(flavour, script, state, n, None));
            }
            if still_running(script, state) {
                return Reply::json(
                    200,
                    json!({"id": id, "processing_status": "in_progress",
                    "request_counts": {"processing": 1, "succeeded": 0}}),
                );
            }
            Reply::json(
                200,
                json!({"id": id, "processing_status": "ended",
                "results_url": format!("{root}/v1/messages/batches/{id}/results")}),
            )
        }
        (Flavour::OpenAi, "POST", "/v1/files") => {
            let jsonl = file_part(&req.body);
            let mut state = state.lock().unwrap();
            state.files.push(jsonl);
            let id = format!("file-in{}", state.files.len());
            Reply::json(200, json!({"id": id, "object": "file", "purpose": "batch"}))
        }
        (Flavour::OpenAi, "POST", "/v1/batches") => {
            let body = req.json();
            assert_eq!(body["endpoint"], "/v1/chat/completions");
            assert_eq!(body["completion_window"], "24h");
            let file: usize = body["input_file_id"].as_str().unwrap()["file-in".len()..]
                .parse()
                .unwrap();
            let mut state = state.lock().unwrap();
            let requests: Vec<(String, Value)> = state.files[file - 1]
                .lines()
                .map(|line| {
                    let v: Value = serde_json::from_str(line).unwrap();
                    assert_eq!(v["method"], "POST");
                    assert_eq!(v["url"], "/v1/chat/completions");
                    (
                        v["custom_id"].as_str().unwrap().to_string(),
                        v["body"].clone(),
                    )
                })
                .collect();
            state.batches.push(requests);
            let id = format!("batch_{}", state.batches.len());
            Reply::json(
                200,
                json!({"id": id, "object": "batch", "status": "validating"}),
            )
        }
        (Flavour::OpenAi, "GET", _) if path.starts_with("/v1/batches/") => {
            let id = &path["/v1/batches/".len()..];
            let Some(n) = batch_number(id, "batch_") else {
                return Reply::status(404, "no such batch");
            };
            if still_running(script, state) {
                return Reply::json(
                    200,
                    json!({"id": id, "status": "in_progress",
                    "request_counts": {"total": 2, "completed": 1, "failed": 0}}),
                );
            }
            Reply::json(
                200,
                json!({"id": id, "status": "completed",
                "output_file_id": format!("file-out{n}"), "error_file_id": format!("file-err{n}")}),
            )
        }
        (Flavour::OpenAi, "GET", _)
            if path.starts_with("/v1/files/") && path.ends_with("/content") =>
        {
            let file = &path["/v1/files/".len()..path.len() - "/content".len()];
            let (n, errors) = match (file.strip_prefix("file-out"), file.strip_prefix("file-err")) {
                (Some(n), _) => (n.parse().unwrap(), false),
                (_, Some(n)) => (n.parse().unwrap(), true),
                _ => return Reply::status(404, "no such file"),
            };
            Reply::status(200, &results_file(flavour, script, state, n, Some(errors)))
        }
        _ => Reply::status(
            404,
            &format!("the loopback batch API has no {} {path}", req.method),
        ),
    }
}

/// The number of a batch this server gave, or none for any other id.
fn batch_number(id: &str, prefix: &str) -> Option<usize> {
    id.strip_prefix(prefix)
        .and_then(|n| n.parse().ok())
        .filter(|&n| n >= 1)
}

fn still_running(script: &Script, state: &Mutex<State>) -> bool {
    let mut state = state.lock().unwrap();
    state.polls += 1;
    state.polls <= script.polls_before_end.load(Ordering::SeqCst)
}

/// The JSONL results of batch `n` (1-based). OpenAI: `Some(false)` is the
/// output file, `Some(true)` the error file.
fn results_file(
    flavour: Flavour,
    script: &Script,
    state: &Mutex<State>,
    n: usize,
    errors: Option<bool>,
) -> String {
    let requests = state.lock().unwrap().batches[n - 1].clone();
    let mut lines: Vec<String> = Vec::new();
    for (custom_id, body) in &requests {
        let fate = (script.fate)(custom_id, body);
        let is_error = matches!(fate, Fate::Errored | Fate::Expired);
        if errors.is_some_and(|e| e != is_error) {
            continue;
        }
        let line = match (flavour, fate) {
            (_, Fate::Missing) => continue,
            (Flavour::Anthropic, Fate::Answer(text)) => {
                anthropic_line(custom_id, &text, plain_usage(flavour))
            }
            (Flavour::Anthropic, Fate::AnswerWithUsage(text, usage)) => {
                anthropic_line(custom_id, &text, usage)
            }
            (Flavour::Anthropic, Fate::Errored) => {
                json!({"custom_id": custom_id, "result": {"type": "errored",
                "error": {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}}})
            }
            (Flavour::Anthropic, Fate::Expired) => {
                json!({"custom_id": custom_id, "result": {"type": "expired"}})
            }
            (Flavour::OpenAi, Fate::Answer(text)) => {
                openai_line(custom_id, &text, plain_usage(flavour))
            }
            (Flavour::OpenAi, Fate::AnswerWithUsage(text, usage)) => {
                openai_line(custom_id, &text, usage)
            }
            (Flavour::OpenAi, Fate::Errored) => {
                json!({"id": "req", "custom_id": custom_id, "error": null,
                "response": {"status_code": 500, "body": {"error": {"message": "server error"}}}})
            }
            (Flavour::OpenAi, Fate::Expired) => {
                json!({"id": "req", "custom_id": custom_id, "response": null,
                "error": {"code": "batch_expired", "message": "This request could not be executed before the completion window expired."}})
            }
        };
        lines.push(line.to_string());
    }
    if script.reverse {
        lines.reverse();
    }
    if errors != Some(true) {
        lines.extend(script.extra_lines.iter().cloned());
    }
    if script.torn && errors != Some(true) {
        if let Some(last) = lines.last_mut() {
            let half = last.len() / 2;
            last.truncate(half);
        }
    }
    let mut text = lines.join("\n");
    if !text.is_empty() && !script.torn {
        text.push('\n');
    }
    text
}

fn plain_usage(flavour: Flavour) -> Value {
    match flavour {
        Flavour::Anthropic => {
            json!({"input_tokens": PROMPT_TOKENS, "output_tokens": COMPLETION_TOKENS})
        }
        Flavour::OpenAi => {
            json!({"prompt_tokens": PROMPT_TOKENS, "completion_tokens": COMPLETION_TOKENS})
        }
    }
}

fn anthropic_line(custom_id: &str, text: &str, usage: Value) -> Value {
    json!({"custom_id": custom_id, "result": {"type": "succeeded", "message": {
        "id": "msg_batch", "type": "message", "role": "assistant", "model": "loopback-model",
        "content": [{"type": "text", "text": text}], "stop_reason": "end_turn", "usage": usage}}})
}

fn openai_line(custom_id: &str, text: &str, usage: Value) -> Value {
    json!({"id": "batch_req", "custom_id": custom_id, "error": null, "response": {"status_code": 200,
        "request_id": "req", "body": {"id": "chatcmpl-batch", "object": "chat.completion",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": usage}}})
}

/// The file part of a multipart/form-data upload, checked to say
/// `purpose=batch`.
fn file_part(body: &str) -> String {
    let boundary = body
        .lines()
        .next()
        .expect("a boundary line")
        .trim()
        .to_string();
    assert!(body.contains("name=\"purpose\"\r\n\r\nbatch\r\n"), "{body}");
    let start = body.find("filename=").expect("a file part");
    let content = &body[start..];
    let content = &content[content.find("\r\n\r\n").unwrap() + 4..];
    let end = content
        .find(&format!("\r\n{boundary}--"))
        .expect("the closing boundary");
    content[..end].to_string()
}
