//! The OpenAI-compatible chat-completions provider (OpenAI, Ollama, llama.cpp,
//! vLLM, LM Studio). It owns the request and response shapes of
//! `POST {base_url}/chat/completions`; retries belong to `http`.

use std::time::Instant;

use reqwest::header::HeaderMap;
use serde_json::{Value, json};

use super::http::{self, Secret, Transport};
use super::{Completion, Config, Error, Provider, Request};

pub(crate) const DEFAULT_BASE_URL: &str = "http://localhost:11434/v1";

#[derive(Debug)]
pub(crate) struct OpenAi {
    pub(super) transport: Transport,
    pub(super) url: String,
    pub(super) headers: HeaderMap,
    pub(super) model: String,
    temperature: f64,
    seed: u64,
    pub(super) max_output_tokens: u32,
    structured_output: bool,
}

impl OpenAi {
    pub(crate) fn new(
        config: &Config,
        model: String,
        key: Option<Secret>,
    ) -> Result<OpenAi, Error> {
        let base = http::base_url(config.base_url.as_deref().unwrap_or(DEFAULT_BASE_URL))?;
        let mut pairs = Vec::new();
        if let Some(key) = &key {
            let var = config.api_key_env.as_deref().unwrap_or("api_key_env");
            pairs.push(("authorization", key.header(var, "Bearer ")?));
        }
        Ok(OpenAi {
            transport: Transport::new(config, &base, key.as_ref())?,
            url: format!("{base}/chat/completions"),
            headers: http::headers(pairs),
            model,
            temperature: config.temperature,
            seed: config.seed,
            max_output_tokens: config.max_output_tokens,
            structured_output: config.structured_output,
        })
    }

    pub(super) fn body(&self, request: &Request) -> Value {
        let mut messages = Vec::with_capacity(request.messages.len() + 1);
        if let Some(system) = &request.system {
            messages.push(json!({"role": "system", "content": system}));
        }
        for message in &request.messages {
            messages.push(json!({"role": message.role.as_str(), "content": message.content}));
        }
        let mut body = json!({
            "model": self.model,
            "messages": messages,
            "temperature": self.temperature,
            "seed": self.seed,
            "max_tokens": self.max_output_tokens,
            "stream": false,
        });
        if let (true, Some((name, schema))) = (self.structured_output, &request.json_schema) {
            body["response_format"] = json!({
                "type": "json_schema",
                "json_schema": {"name": name, "strict": true, "schema": schema},
            });
        }
        body
    }
}

impl Provider for OpenAi {
    fn name(&self) -> &str {
        "openai"
    }

    fn model(&self) -> &str {
        &self.model
    }

    fn complete(&self, request: &Request) -> Result<Completion, Error> {
        let started = Instant::now();
        let answer = self
            .transport
            .post(&self.url, &self.headers, &self.body(request))?;
        let mut completion = read_answer(
            &answer.json,
            &self.url,
            self.max_output_tokens,
            answer.attempts,
        )?;
        completion.duration = started.elapsed();
        Ok(completion)
    }
}

/// Reads `choices[0].message.content` and the usage. Reasoning servers put
/// their thinking in `reasoning_content`, which is not the answer.
pub(super) fn read_answer(
    json: &Value,
    url: &str,
    max_output_tokens: u32,
    attempts: u32,
) -> Result<Completion, Error> {
    let Some(choice) = json.pointer("/choices/0") else {
        return Err(Error::BadResponse {
            url: url.to_string(),
            reason: "no choices[0] in the answer".to_string(),
            body: http::body_start(&json.to_string()),
            attempts,
        });
    };
    // Checked before the content: a model that spent its budget thinking has
    // an empty content, and "cut off" is the actionable explanation.
    if choice.get("finish_reason").and_then(Value::as_str) == Some("length") {
        return Err(Error::Truncated {
            origin: url.to_string(),
            max_output_tokens,
            attempts,
        });
    }
    let text = match choice.pointer("/message/content") {
        Some(Value::String(text)) => text.clone(),
        // Some servers send content as typed parts, like the vision API.
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|part| part.get("text").and_then(Value::as_str))
            .collect(),
        _ => String::new(),
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
    Ok(Completion {
        text,
        prompt_tokens: usage("prompt_tokens"),
        completion_tokens: usage("completion_tokens"),
        // Part of prompt_tokens, unlike Anthropic's figure.
        cache_read_tokens: usage("prompt_tokens_details/cached_tokens"),
        cache_write_tokens: None,
        duration: std::time::Duration::ZERO,
        attempts,
        batch: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::Message;

    fn provider(structured_output: bool) -> OpenAi {
        let config = Config {
            base_url: Some("http://127.0.0.1:9/v1/".into()),
            structured_output,
            ..Config::default()
        };
        OpenAi::new(&config, "qwen".into(), None).unwrap()
    }

    fn request() -> Request {
        Request {
            system: Some("be strict".into()),
            messages: vec![
                Message::user("review this"),
                Message::assistant("{}"),
                Message::user("again"),
            ],
            json_schema: Some(("verdict".into(), json!({"type": "object"}))),
            cache_prefix: None,
        }
    }

    #[test]
    fn the_url_has_no_double_slash() {
        assert_eq!(
            provider(false).url,
            "http://127.0.0.1:9/v1/chat/completions"
        );
    }

    #[test]
    fn the_body_puts_the_system_prompt_first_and_pins_sampling() {
        let body = provider(false).body(&request());
        assert_eq!(body["model"], "qwen");
        assert_eq!(body["temperature"], 0.0);
        assert_eq!(body["seed"], 7);
        assert_eq!(body["max_tokens"], 4096);
        let roles: Vec<&str> = body["messages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["role"].as_str().unwrap())
            .collect();
        assert_eq!(roles, ["system", "user", "assistant", "user"]);
        assert_eq!(body["messages"][0]["content"], "be strict");
        assert!(body.get("response_format").is_none());
    }

    #[test]
    fn structured_output_sends_a_strict_json_schema() {
        let body = provider(true).body(&request());
        assert_eq!(
            body["response_format"],
            json!({"type": "json_schema", "json_schema": {"name": "verdict", "strict": true, "schema": {"type": "object"}}})
        );
    }

    #[test]
    fn reasoning_content_is_not_the_answer() {
        let json = json!({"choices": [{"message": {"content": null, "reasoning_content": "hmm"}, "finish_reason": "stop"}]});
        let err = read_answer(&json, "u", 10, 1).unwrap_err();
        assert!(matches!(err, Error::EmptyAnswer { .. }));
        let json = json!({"choices": [{"message": {"content": "{\"a\":1}", "reasoning_content": "hmm"}, "finish_reason": "stop"}],
                          "usage": {"prompt_tokens": 5, "completion_tokens": 3}});
        let completion = read_answer(&json, "u", 10, 2).unwrap();
        assert_eq!(completion.text, "{\"a\":1}");
        assert_eq!(
            (completion.prompt_tokens, completion.completion_tokens),
            (Some(5), Some(3))
        );
        assert_eq!(completion.attempts, 2);
        assert_eq!(completion.cache_read_tokens, None);
        let json = json!({"choices": [{"message": {"content": "{}"}, "finish_reason": "stop"}],
                          "usage": {"prompt_tokens": 5000, "completion_tokens": 3,
                                    "prompt_tokens_details": {"cached_tokens": 4096}}});
        let completion = read_answer(&json, "u", 10, 1).unwrap();
        assert_eq!(completion.prompt_tokens, Some(5000));
        assert_eq!(completion.cache_read_tokens, Some(4096));
    }

    #[test]
    fn a_length_cut_off_is_truncated_even_with_empty_content() {
        let json = json!({"choices": [{"message": {"content": ""}, "finish_reason": "length"}]});
        let err = read_answer(&json, "u", 4096, 1).unwrap_err();
        assert!(matches!(
            err,
            Error::Truncated {
                max_output_tokens: 4096,
                ..
            }
        ));
    }

    #[test]
    fn an_answer_without_choices_is_a_bad_response() {
        let err = read_answer(&json!({"error": "nope"}), "u", 10, 1).unwrap_err();
        assert!(matches!(err, Error::BadResponse { .. }));
        assert!(err.to_string().contains("nope"));
    }
}
