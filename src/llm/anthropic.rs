//! The Anthropic Messages API provider. It owns the request and response
//! shapes of `POST {base_url}/v1/messages`, including structured output by a
//! forced tool; retries belong to `http`.

use std::time::{Duration, Instant};

use reqwest::header::{HeaderMap, HeaderValue};
use serde_json::{Value, json};

use super::http::{self, Secret, Transport};
use super::{Completion, Config, Error, Provider, Request};

pub(crate) const DEFAULT_BASE_URL: &str = "https://api.anthropic.com";
pub(crate) const DEFAULT_KEY_ENV: &str = "ANTHROPIC_API_KEY";
const API_VERSION: &str = "2023-06-01";

#[derive(Debug)]
pub(crate) struct Anthropic {
    pub(super) transport: Transport,
    pub(super) url: String,
    pub(super) headers: HeaderMap,
    pub(super) model: String,
    temperature: f64,
    pub(super) max_output_tokens: u32,
    structured_output: bool,
}

impl Anthropic {
    pub(crate) fn new(config: &Config, model: String, key: Secret) -> Result<Anthropic, Error> {
        let base = http::base_url(config.base_url.as_deref().unwrap_or(DEFAULT_BASE_URL))?;
        // People copy the base URL from docs with or without the version
        // segment; both mean the same endpoint.
        let url = if base.ends_with("/v1") {
            format!("{base}/messages")
        } else {
            format!("{base}/v1/messages")
        };
        let var = config.api_key_env.as_deref().unwrap_or(DEFAULT_KEY_ENV);
        Ok(Anthropic {
            transport: Transport::new(config, &base, Some(&key))?,
            url,
            headers: http::headers(vec![
                ("x-api-key", key.header(var, "")?),
                ("anthropic-version", HeaderValue::from_static(API_VERSION)),
            ]),
            model,
            temperature: config.temperature,
            max_output_tokens: config.max_output_tokens,
            structured_output: config.structured_output,
        })
    }

    /// The forced tool (name and schema), when structured output is on and the
    /// request has a schema.
    pub(super) fn tool<'r>(&self, request: &'r Request) -> Option<&'r (String, Value)> {
        request
            .json_schema
            .as_ref()
            .filter(|_| self.structured_output)
    }

    pub(super) fn body(&self, request: &Request) -> Value {
        let messages: Vec<Value> = request
            .messages
            .iter()
            .enumerate()
            .map(|(n, message)| {
                let cached = (n == 0).then_some(request.cache_prefix).flatten();
                json!({"role": message.role.as_str(), "content": content(&message.content, cached)})
            })
            .collect();
        let mut body = json!({
            "model": self.model,
            "max_tokens": self.max_output_tokens,
            "temperature": self.temperature,
            "messages": messages,
        });
        if let Some(system) = &request.system {
            body["system"] = json!(system);
        }
        if let Some((name, schema)) = self.tool(request) {
            body["tools"] = json!([{
                "name": name,
                "description": "Give the answer. Its input is the complete answer, following the schema.",
                "input_schema": schema,
            }]);
            body["tool_choice"] = json!({"type": "tool", "name": name});
        }
        body
    }
}

impl Provider for Anthropic {
    fn name(&self) -> &str {
        "anthropic"
    }

    fn model(&self) -> &str {
        &self.model
    }

    fn complete(&self, request: &Request) -> Result<Completion, Error> {
        let started = Instant::now();
        let answer = self
            .transport
            .post(&self.url, &self.headers, &self.body(request))?;
        let tool = self.tool(request).map(|(name, _)| name.as_str());
        let mut completion = read_answer(
            &answer.json,
            &self.url,
            tool,
            self.max_output_tokens,
            answer.attempts,
        )?;
        completion.duration = started.elapsed();
        Ok(completion)
    }
}

/// A message's content: its text, or with a cached prefix two text blocks,
/// the first marked `cache_control` (Anthropic caches everything up to the
/// mark). A prefix that is empty, the whole text, or not on a character
/// boundary marks nothing.
fn content(text: &str, cache_prefix: Option<usize>) -> Value {
    match cache_prefix {
        Some(n) if n > 0 && n < text.len() && text.is_char_boundary(n) => json!([
            {"type": "text", "text": &text[..n], "cache_control": {"type": "ephemeral"}},
            {"type": "text", "text": &text[n..]},
        ]),
        _ => json!(text),
    }
}

/// The forced tool's input (serialised) when a tool was forced, else the text
/// blocks joined: they are consecutive pieces of one answer.
pub(super) fn read_answer(
    json: &Value,
    url: &str,
    tool: Option<&str>,
    max_output_tokens: u32,
    attempts: u32,
) -> Result<Completion, Error> {
    let Some(blocks) = json.get("content").and_then(Value::as_array) else {
        return Err(Error::BadResponse {
            url: url.to_string(),
            reason: "no content array in the answer".to_string(),
            body: http::body_start(&json.to_string()),
            attempts,
        });
    };
    if json.get("stop_reason").and_then(Value::as_str) == Some("max_tokens") {
        return Err(Error::Truncated {
            origin: url.to_string(),
            max_output_tokens,
            attempts,
        });
    }
    // Only one tool is offered and it is forced, so the first tool_use block
    // is its answer whatever name a proxy or an older model echoes back.
    let tool_input = tool.and_then(|_| {
        blocks.iter().find_map(|block| {
            (block.get("type").and_then(Value::as_str) == Some("tool_use"))
                .then(|| block.get("input"))
                .flatten()
        })
    });
    let text = match tool_input {
        Some(input) => input.to_string(),
        None => blocks
            .iter()
            .filter(|block| block.get("type").and_then(Value::as_str) == Some("text"))
            .filter_map(|block| block.get("text").and_then(Value::as_str))
            .collect(),
    };
    if text.trim().is_empty() {
        return Err(Error::EmptyAnswer {
            origin: url.to_string(),
            attempts,
        });
    }
    let usage = |field: &str| {
        json.pointer(&format!("/usage/{field}"))
            .and_then(Value::as_u64)
    };
    // `input_tokens` leaves out what was read from or written to the
    // prompt cache; speed's prompt tokens are all of the input.
    let cache_read = usage("cache_read_input_tokens");
    let cache_write = usage("cache_creation_input_tokens");
    let prompt_tokens = usage("input_tokens").map(|fresh| {
        fresh
            .saturating_add(cache_read.unwrap_or(0))
            .saturating_add(cache_write.unwrap_or(0))
    });
    Ok(Completion {
        text,
        prompt_tokens,
        completion_tokens: usage("output_tokens"),
        cache_read_tokens: cache_read,
        cache_write_tokens: cache_write,
        duration: Duration::ZERO,
        attempts,
        batch: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::Message;

    fn provider(base_url: &str, structured_output: bool) -> Anthropic {
        let config = Config {
            base_url: Some(base_url.into()),
            structured_output,
            ..Config::default()
        };
        Anthropic::new(
            &config,
            "claude".into(),
            Secret::new("sk-ant-secret".into()),
        )
        .unwrap()
    }

    fn request() -> Request {
        Request {
            system: Some("be strict".into()),
            messages: vec![Message::user("review this")],
            json_schema: Some(("verdict".into(), json!({"type": "object"}))),
            cache_prefix: None,
        }
    }

    #[test]
    fn the_url_accepts_a_base_with_or_without_the_version() {
        assert_eq!(
            provider("https://api.anthropic.com/", false).url,
            "https://api.anthropic.com/v1/messages"
        );
        assert_eq!(
            provider("https://proxy.local/v1", false).url,
            "https://proxy.local/v1/messages"
        );
    }

    #[test]
    fn the_key_never_shows_in_debug_output() {
        let debug = format!("{:?}", provider("https://api.anthropic.com", false));
        assert!(!debug.contains("sk-ant-secret"), "{debug}");
    }

    #[test]
    fn the_body_carries_the_system_prompt_apart() {
        let body = provider("http://h", false).body(&request());
        assert_eq!(body["system"], "be strict");
        assert_eq!(
            body["messages"],
            json!([{"role": "user", "content": "review this"}])
        );
        assert_eq!(body["max_tokens"], 4096);
        assert!(body.get("tools").is_none());
    }

    #[test]
    fn a_cached_prefix_is_marked_with_cache_control() {
        let mut request = request();
        request.messages = vec![
            Message::user("stable part|changing part"),
            Message::assistant("{}"),
        ];
        request.cache_prefix = Some("stable part|".len());
        let body = provider("http://h", false).body(&request);
        assert_eq!(
            body["messages"][0]["content"],
            json!([{"type": "text", "text": "stable part|", "cache_control": {"type": "ephemeral"}},
                   {"type": "text", "text": "changing part"}])
        );
        assert_eq!(body["messages"][1]["content"], "{}");
        // A prefix off a character boundary, or the whole text, marks nothing.
        for n in [0, 1000, 1] {
            request.messages[0] = Message::user("é and more");
            request.cache_prefix = Some(n);
            let body = provider("http://h", false).body(&request);
            assert_eq!(body["messages"][0]["content"], "é and more", "{n}");
        }
    }

    #[test]
    fn structured_output_forces_a_tool_with_the_schema() {
        let body = provider("http://h", true).body(&request());
        assert_eq!(body["tools"][0]["name"], "verdict");
        assert_eq!(body["tools"][0]["input_schema"], json!({"type": "object"}));
        assert_eq!(
            body["tool_choice"],
            json!({"type": "tool", "name": "verdict"})
        );
    }

    #[test]
    fn the_forced_tool_input_is_the_answer() {
        let json = json!({"content": [{"type": "text", "text": "Here:"},
                                      {"type": "tool_use", "id": "t", "name": "verdict", "input": {"verdict": "approve"}}],
                          "stop_reason": "tool_use", "usage": {"input_tokens": 9, "output_tokens": 4}});
        let completion = read_answer(&json, "u", Some("verdict"), 10, 1).unwrap();
        assert_eq!(completion.text, r#"{"verdict":"approve"}"#);
        assert_eq!(
            (completion.prompt_tokens, completion.completion_tokens),
            (Some(9), Some(4))
        );
        assert_eq!(completion.cache_read_tokens, None);
    }

    #[test]
    fn cached_input_counts_in_the_prompt_tokens() {
        let json = json!({"content": [{"type": "text", "text": "{}"}], "stop_reason": "end_turn",
                          "usage": {"input_tokens": 50, "output_tokens": 4,
                                    "cache_read_input_tokens": 9000, "cache_creation_input_tokens": 0}});
        let completion = read_answer(&json, "u", None, 10, 1).unwrap();
        assert_eq!(completion.prompt_tokens, Some(9050));
        assert_eq!(completion.cache_read_tokens, Some(9000));
        assert_eq!(completion.cache_write_tokens, Some(0));
    }

    #[test]
    fn text_blocks_are_joined() {
        let json = json!({"content": [{"type": "text", "text": "{\"a\":"}, {"type": "text", "text": "1}"}], "stop_reason": "end_turn"});
        assert_eq!(
            read_answer(&json, "u", None, 10, 1).unwrap().text,
            "{\"a\":1}"
        );
    }

    #[test]
    fn max_tokens_is_truncated_and_nothing_is_empty() {
        let json =
            json!({"content": [{"type": "text", "text": "{\"a\":"}], "stop_reason": "max_tokens"});
        assert!(matches!(
            read_answer(&json, "u", None, 10, 1),
            Err(Error::Truncated { .. })
        ));
        let json = json!({"content": [], "stop_reason": "end_turn"});
        assert!(matches!(
            read_answer(&json, "u", None, 10, 1),
            Err(Error::EmptyAnswer { .. })
        ));
    }
}
