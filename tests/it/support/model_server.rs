//! A loopback HTTP/1.1 server that plays a model for integration tests: the
//! OpenAI-compatible chat-completions API and the Anthropic Messages API.
//!
//! Use it from any integration test with `mod support;` and
//! `use support::model_server::{ModelServer, Reply};`:
//!
//! ```ignore
//! let server = ModelServer::scripted(vec![Reply::openai(r#"{"verdict":"approve"}"#)]);
//! // openai:    base_url = server.url()   (http://127.0.0.1:PORT/v1)
//! // anthropic: base_url = server.root()  (http://127.0.0.1:PORT; the provider
//! //            appends /v1/messages; server.url() works too)
//! let seen = server.requests(); // what the client sent, in arrival order
//! ```
//!
//! The server does not route: every request, whatever its path, goes to the
//! responder (or the next scripted reply), and tests check `requests()` for
//! the path. One thread per connection; every answer carries
//! `Connection: close`, so clients never reuse a connection. Request bodies
//! must have a Content-Length (reqwest's JSON bodies do). Dropping the server
//! stops it, releasing hung and delayed replies without answering them.
#![allow(dead_code)] // each test crate uses a different part of it

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// Token counts in every `Reply::openai*` and `Reply::anthropic*` usage block.
pub const PROMPT_TOKENS: u64 = 1234;
pub const COMPLETION_TOKENS: u64 = 56;

/// How long a connection may take to send its request.
const READ_TIMEOUT: Duration = Duration::from_secs(10);

/// One request as the server received it.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub method: String,
    /// The request target, e.g. `/v1/chat/completions`.
    pub path: String,
    /// Header names in lower case; a repeated header keeps its last value.
    pub headers: BTreeMap<String, String>,
    pub body: String,
    /// The body parsed as JSON, when it is JSON.
    pub json: Option<Value>,
}

impl Recorded {
    /// A header by case-insensitive name.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .get(&name.to_ascii_lowercase())
            .map(String::as_str)
    }

    /// The JSON body; panics with the raw body when it is not JSON.
    pub fn json(&self) -> &Value {
        self.json
            .as_ref()
            .unwrap_or_else(|| panic!("request body is not JSON: {}", self.body))
    }
}

/// What the server answers to one request.
#[derive(Debug, Clone)]
pub struct Reply {
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
    delay: Duration,
    hang: bool,
    body_pace: BodyPace,
}

/// How the body goes out after the head.
#[derive(Debug, Clone, Copy, PartialEq)]
enum BodyPace {
    /// All at once, with its Content-Length.
    Whole,
    /// One byte at a time with this pause between bytes, Content-Length
    /// announced: a slow server that never stalls long enough to trip a
    /// per-read timeout.
    Trickle(Duration),
    /// The body repeated without end and without a Content-Length, until
    /// the client goes away or the server stops.
    Endless,
}

impl Reply {
    /// A JSON answer with any status.
    pub fn json(status: u16, body: Value) -> Reply {
        Reply {
            status,
            headers: vec![("Content-Type".into(), "application/json".into())],
            body: body.to_string(),
            delay: Duration::ZERO,
            hang: false,
            body_pace: BodyPace::Whole,
        }
    }

    /// An error (or any) status with a raw body: JSON content type when the
    /// body is JSON, plain text otherwise.
    pub fn status(status: u16, body: &str) -> Reply {
        let content_type = if serde_json::from_str::<Value>(body).is_ok() {
            "application/json"
        } else {
            "text/plain; charset=utf-8"
        };
        Reply {
            status,
            headers: vec![("Content-Type".into(), content_type.into())],
            body: body.to_string(),
            delay: Duration::ZERO,
            hang: false,
            body_pace: BodyPace::Whole,
        }
    }

    /// A chat.completion whose message content is `content`, finish_reason "stop".
    pub fn openai(content: &str) -> Reply {
        Reply::openai_finished(content, "stop")
    }

    /// A chat.completion cut off at the output limit (finish_reason "length").
    pub fn openai_truncated(content: &str) -> Reply {
        Reply::openai_finished(content, "length")
    }

    fn openai_finished(content: &str, finish_reason: &str) -> Reply {
        Reply::json(
            200,
            json!({
                "id": "chatcmpl-loopback",
                "object": "chat.completion",
                "created": 0,
                "model": "loopback-model",
                "choices": [{
                    "index": 0,
                    "message": {"role": "assistant", "content": content},
                    "finish_reason": finish_reason,
                }],
                "usage": {
                    "prompt_tokens": PROMPT_TOKENS,
                    "completion_tokens": COMPLETION_TOKENS,
                    "total_tokens": PROMPT_TOKENS + COMPLETION_TOKENS,
                },
            }),
        )
    }

    /// A Messages API answer with one text block, stop_reason "end_turn".
    pub fn anthropic(text: &str) -> Reply {
        Reply::anthropic_message(json!([{"type": "text", "text": text}]), "end_turn")
    }

    /// A Messages API answer cut off at max_tokens.
    pub fn anthropic_truncated(text: &str) -> Reply {
        Reply::anthropic_message(json!([{"type": "text", "text": text}]), "max_tokens")
    }

    /// A Messages API answer calling the forced tool with `input`.
    pub fn anthropic_tool(input: Value) -> Reply {
        Reply::anthropic_message(
            json!([{"type": "tool_use", "id": "toolu_loopback", "name": "answer", "input": input}]),
            "tool_use",
        )
    }

    fn anthropic_message(content: Value, stop_reason: &str) -> Reply {
        Reply::json(
            200,
            json!({
                "id": "msg_loopback",
                "type": "message",
                "role": "assistant",
                "model": "loopback-model",
                "content": content,
                "stop_reason": stop_reason,
                "stop_sequence": null,
                "usage": {"input_tokens": PROMPT_TOKENS, "output_tokens": COMPLETION_TOKENS},
            }),
        )
    }

    /// Accepts and reads the request, then never answers (until shutdown).
    pub fn hang() -> Reply {
        Reply {
            hang: true,
            ..Reply::status(200, "")
        }
    }

    /// Adds a response header, e.g. `.header("Retry-After", "1")`.
    pub fn header(mut self, name: &str, value: &str) -> Reply {
        self.headers
            .retain(|(existing, _)| !existing.eq_ignore_ascii_case(name));
        self.headers.push((name.to_string(), value.to_string()));
        self
    }

    /// Answers only after this pause.
    pub fn delay(mut self, delay: Duration) -> Reply {
        self.delay = delay;
        self
    }

    /// Sends the body one byte at a time, `pause` apart.
    pub fn trickle(mut self, pause: Duration) -> Reply {
        self.body_pace = BodyPace::Trickle(pause);
        self
    }

    /// Sends the body over and over, never ending it.
    pub fn endless(mut self) -> Reply {
        self.body_pace = BodyPace::Endless;
        self
    }
}

type Responder = Box<dyn Fn(&Recorded) -> Reply + Send + Sync>;

struct Shared {
    responder: Responder,
    requests: Mutex<Vec<Recorded>>,
    in_flight: AtomicUsize,
    max_in_flight: AtomicUsize,
    stopping: Mutex<bool>,
    stopped: Condvar,
    connections: Mutex<Vec<JoinHandle<()>>>,
}

impl Shared {
    fn is_stopping(&self) -> bool {
        *self.stopping.lock().unwrap()
    }

    /// Sleeps up to `pause` (forever when `None`); returns false when the
    /// server is shutting down instead.
    fn pause(&self, pause: Option<Duration>) -> bool {
        let deadline = pause.map(|pause| Instant::now() + pause);
        let mut stopping = self.stopping.lock().unwrap();
        loop {
            if *stopping {
                return false;
            }
            match deadline {
                None => stopping = self.stopped.wait(stopping).unwrap(),
                Some(deadline) => {
                    let now = Instant::now();
                    if now >= deadline {
                        return true;
                    }
                    stopping = self
                        .stopped
                        .wait_timeout(stopping, deadline - now)
                        .unwrap()
                        .0;
                }
            }
        }
    }
}

/// A running loopback model server; stops on drop.
pub struct ModelServer {
    addr: SocketAddr,
    shared: Arc<Shared>,
    acceptor: Option<JoinHandle<()>>,
}

impl ModelServer {
    /// Answers every request with what `responder` returns for it.
    pub fn start(responder: impl Fn(&Recorded) -> Reply + Send + Sync + 'static) -> ModelServer {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
        let addr = listener
            .local_addr()
            .expect("loopback listener has an address");
        let shared = Arc::new(Shared {
            responder: Box::new(responder),
            requests: Mutex::new(Vec::new()),
            in_flight: AtomicUsize::new(0),
            max_in_flight: AtomicUsize::new(0),
            stopping: Mutex::new(false),
            stopped: Condvar::new(),
            connections: Mutex::new(Vec::new()),
        });
        let accepting = Arc::clone(&shared);
        let acceptor = thread::spawn(move || {
            for stream in listener.incoming() {
                if accepting.is_stopping() {
                    break;
                }
                let Ok(stream) = stream else { continue };
                let serving = Arc::clone(&accepting);
                let handle = thread::spawn(move || serve(stream, &serving));
                accepting.connections.lock().unwrap().push(handle);
            }
        });
        ModelServer {
            addr,
            shared,
            acceptor: Some(acceptor),
        }
    }

    /// Answers with `replies` in order, one per request; once they run out,
    /// with a 500 saying so.
    pub fn scripted(replies: Vec<Reply>) -> ModelServer {
        let count = replies.len();
        let next = AtomicUsize::new(0);
        ModelServer::start(move |_| {
            let index = next.fetch_add(1, Ordering::SeqCst);
            replies.get(index).cloned().unwrap_or_else(|| {
                Reply::status(
                    500,
                    &format!("loopback model server: script exhausted after {count} replies"),
                )
            })
        })
    }

    /// The OpenAI-compatible base URL: `http://127.0.0.1:PORT/v1`.
    /// A configuration asking this server as an OpenAI-compatible
    /// provider, with no retries and short waits, then `extra`.
    pub fn openai_config(&self, extra: &str) -> String {
        format!(
            "[llm]\nprovider = \"openai\"\nbase_url = \"{}\"\nmodel = \"m\"\ntimeout_secs = 10\nmax_retries = 0\nretry_base_ms = 10\n{extra}",
            self.url()
        )
    }

    pub fn url(&self) -> String {
        format!("{}/v1", self.root())
    }

    /// The server root, `http://127.0.0.1:PORT`: the Anthropic base URL.
    pub fn root(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Every request received so far, in arrival order (hung ones included).
    pub fn requests(&self) -> Vec<Recorded> {
        self.shared.requests.lock().unwrap().clone()
    }

    /// The most requests that were being answered at the same time.
    pub fn max_in_flight(&self) -> usize {
        self.shared.max_in_flight.load(Ordering::SeqCst)
    }
}

impl Drop for ModelServer {
    fn drop(&mut self) {
        *self.shared.stopping.lock().unwrap() = true;
        self.shared.stopped.notify_all();
        // Wakes the acceptor blocked in accept(); it sees the flag and stops.
        let _wake = TcpStream::connect(self.addr);
        if let Some(acceptor) = self.acceptor.take() {
            acceptor.join().ok();
        }
        let connections = std::mem::take(&mut *self.shared.connections.lock().unwrap());
        for connection in connections {
            connection.join().ok();
        }
    }
}

/// Counts a request as in flight until dropped, even if the responder panics.
struct InFlight<'a>(&'a Shared);

impl<'a> InFlight<'a> {
    fn enter(shared: &'a Shared) -> InFlight<'a> {
        let now = shared.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
        shared.max_in_flight.fetch_max(now, Ordering::SeqCst);
        InFlight(shared)
    }
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.in_flight.fetch_sub(1, Ordering::SeqCst);
    }
}

fn serve(stream: TcpStream, shared: &Shared) {
    if shared.is_stopping() {
        return;
    }
    stream.set_read_timeout(Some(READ_TIMEOUT)).ok();
    let Some(request) = read_request(&stream) else {
        return;
    };
    shared.requests.lock().unwrap().push(request.clone());
    let in_flight = InFlight::enter(shared);
    let reply = (shared.responder)(&request);
    let pause = if reply.hang {
        None
    } else if reply.delay > Duration::ZERO {
        Some(reply.delay)
    } else {
        Some(Duration::ZERO)
    };
    if pause != Some(Duration::ZERO) && !shared.pause(pause) {
        return;
    }
    // The request stops counting as in flight before its answer is written:
    // otherwise a client that got the answer could start its next request
    // while this one still counts, and the maximum would read one too high.
    drop(in_flight);
    write_reply(stream, &reply, shared);
}

/// Reads one request; `None` when the client closed or sent garbage.
fn read_request(stream: &TcpStream) -> Option<Recorded> {
    let mut reader = BufReader::new(stream);
    let mut line = String::new();
    reader.read_line(&mut line).ok()?;
    let mut parts = line.split_whitespace();
    let method = parts.next()?.to_string();
    let path = parts.next()?.to_string();
    let mut headers = BTreeMap::new();
    loop {
        line.clear();
        if reader.read_line(&mut line).ok()? == 0 {
            return None;
        }
        let header = line.trim_end_matches(['\r', '\n']);
        if header.is_empty() {
            break;
        }
        let (name, value) = header.split_once(':')?;
        headers.insert(name.trim().to_ascii_lowercase(), value.trim().to_string());
    }
    let length: usize = match headers.get("content-length") {
        Some(length) => length.parse().ok()?,
        None => 0,
    };
    let mut body = vec![0; length];
    reader.read_exact(&mut body).ok()?;
    let body = String::from_utf8_lossy(&body).into_owned();
    let json = serde_json::from_str(&body).ok();
    Some(Recorded {
        method,
        path,
        headers,
        body,
        json,
    })
}

fn write_reply(mut stream: TcpStream, reply: &Reply, shared: &Shared) {
    let mut head = format!("HTTP/1.1 {} {}\r\n", reply.status, reason(reply.status));
    for (name, value) in &reply.headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    if reply.body_pace != BodyPace::Endless {
        head.push_str(&format!("Content-Length: {}\r\n", reply.body.len()));
    }
    head.push_str("Connection: close\r\n\r\n");
    // The client may have given up (a timeout test); nothing to do then.
    if stream.write_all(head.as_bytes()).is_err() {
        return;
    }
    match reply.body_pace {
        BodyPace::Whole => {
            stream.write_all(reply.body.as_bytes()).ok();
        }
        BodyPace::Trickle(pause) => {
            for byte in reply.body.as_bytes() {
                if stream.write_all(&[*byte]).is_err() || !shared.pause(Some(pause)) {
                    return;
                }
            }
        }
        BodyPace::Endless => {
            let chunk = if reply.body.is_empty() {
                "x"
            } else {
                &reply.body
            };
            while !shared.is_stopping() && stream.write_all(chunk.as_bytes()).is_ok() {}
        }
    }
    stream.flush().ok();
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        408 => "Request Timeout",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        _ => "Status",
    }
}
