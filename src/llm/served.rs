//! The models an OpenAI-compatible server serves (`GET {base_url}/models`):
//! how `speed init` finds a local server (Ollama, llama.cpp, vLLM, LM
//! Studio) and a model it serves, and how `speed doctor` tells a server it
//! cannot reach from a model the server does not serve. One request, no
//! retry: these are questions about the machine, asked with a short limit.

use std::time::{Duration, Instant};

use serde_json::Value;

use super::http::{self, Secret};
use super::openai::DEFAULT_BASE_URL;
use super::{Config, Error, read_key};

/// The most of a model list read: a server listing more is hostile.
const MAX_LIST_BYTES: u64 = 4 << 20;

/// The ids of the models the server at `config.base_url` lists, in its
/// order, within `limit` (connecting included). The key of
/// `config.api_key_env` is sent when it names one; an unset variable is
/// the error it is for a review.
pub fn served_models(
    config: &Config,
    env: &dyn Fn(&str) -> Option<String>,
    limit: Duration,
) -> Result<Vec<String>, Error> {
    let base = http::base_url(config.base_url.as_deref().unwrap_or(DEFAULT_BASE_URL))?;
    let key = match &config.api_key_env {
        Some(var) => Some(read_key(var, env)?),
        None => None,
    };
    list(&base, key.as_ref(), limit)
}

fn list(base: &str, key: Option<&Secret>, limit: Duration) -> Result<Vec<String>, Error> {
    let url = format!("{base}/models");
    let loopback = reqwest::Url::parse(base)
        .ok()
        .and_then(|u| u.host_str().map(is_loopback))
        .unwrap_or(false);
    let mut builder = reqwest::blocking::Client::builder()
        .connect_timeout(limit)
        .timeout(limit);
    if loopback {
        // A proxy in the environment is for the outside world; asking it
        // for localhost would ask the proxy's own machine.
        builder = builder.no_proxy();
    }
    let client = builder.build().map_err(|e| Error::Client {
        reason: e.to_string(),
    })?;
    let mut request = client.get(&url);
    if let Some(key) = key {
        request = request.header("authorization", key.header("api_key_env", "Bearer ")?);
    }
    let started = Instant::now();
    let response = request.send().map_err(|e| {
        if e.is_timeout() {
            Error::Timeout {
                target: url.clone(),
                after: started.elapsed().max(limit),
                attempts: 1,
            }
        } else {
            Error::Connect {
                url: url.clone(),
                reason: reason(&e),
                attempts: 1,
            }
        }
    })?;
    let status = response.status().as_u16();
    let mut body = Vec::new();
    use std::io::Read as _;
    response
        .take(MAX_LIST_BYTES)
        .read_to_end(&mut body)
        .map_err(|e| Error::Connect {
            url: url.clone(),
            reason: format!("the answer could not be read: {e}"),
            attempts: 1,
        })?;
    let text = String::from_utf8_lossy(&body);
    if !(200..300).contains(&status) {
        return Err(Error::Status {
            method: "GET",
            url,
            status,
            body: http::body_start(&text),
            attempts: 1,
        });
    }
    ids(&text).ok_or_else(|| Error::Status {
        method: "GET",
        url,
        status,
        body: format!(
            "not a model list (`{{\"data\": [{{\"id\": …}}]}}`): {}",
            http::body_start(&text)
        ),
        attempts: 1,
    })
}

/// The ids of an OpenAI model list (`{"data": [{"id": …}]}`); Ollama's own
/// `{"models": [{"name": …}]}` is read too. None when the text is neither.
fn ids(text: &str) -> Option<Vec<String>> {
    let value: Value = serde_json::from_str(text).ok()?;
    let (list, key) = match (value.get("data"), value.get("models")) {
        (Some(Value::Array(list)), _) => (list, "id"),
        (_, Some(Value::Array(list))) => (list, "name"),
        _ => return None,
    };
    Some(
        list.iter()
            .filter_map(|m| m.get(key).and_then(Value::as_str))
            .map(|id| id.trim().to_string())
            .filter(|id| !id.is_empty() && !id.chars().any(char::is_control))
            .collect(),
    )
}

fn is_loopback(host: &str) -> bool {
    let host = host.trim_start_matches('[').trim_end_matches(']');
    host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// reqwest's own message ("error sending request") without its cause is
/// no reason; the innermost cause (connection refused) is.
fn reason(err: &reqwest::Error) -> String {
    let mut text = err.to_string();
    let mut source = std::error::Error::source(err);
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text = format!("{text}: {cause_text}");
        }
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_of_either_shape_are_read() {
        assert_eq!(
            ids(
                r#"{"object":"list","data":[{"id":"qwen2.5-coder:7b"},{"id":"nomic-embed-text"}]}"#
            ),
            Some(vec![
                "qwen2.5-coder:7b".to_string(),
                "nomic-embed-text".to_string()
            ])
        );
        assert_eq!(
            ids(r#"{"models":[{"name":"llama3"}]}"#),
            Some(vec!["llama3".to_string()])
        );
        assert_eq!(
            ids(r#"{"data":[{"id":"a\u0007b"},{"id":" "}]}"#),
            Some(vec![])
        );
        assert_eq!(ids("<html>"), None);
        assert_eq!(ids(r#"{"data": "x"}"#), None);
    }

    #[test]
    fn loopback_hosts() {
        assert!(is_loopback("localhost"));
        assert!(is_loopback("127.0.0.1"));
        assert!(is_loopback("[::1]"));
        assert!(!is_loopback("api.openai.com"));
    }

    #[test]
    fn a_closed_port_is_a_connect_error_naming_the_address() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        drop(listener);
        let config = Config {
            base_url: Some(format!("http://127.0.0.1:{port}/v1")),
            ..Config::default()
        };
        let err = served_models(&config, &|_| None, Duration::from_millis(500)).unwrap_err();
        let text = err.to_string();
        assert!(
            text.contains(&format!("127.0.0.1:{port}/v1/models")),
            "{text}"
        );
    }
}
