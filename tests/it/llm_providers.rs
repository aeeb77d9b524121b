//! `speed::llm` against a real loopback HTTP server playing the model, and
//! the command provider against small shell scripts. No network.

use std::net::TcpListener;
use std::time::{Duration, Instant};

use crate::support::model_server::{COMPLETION_TOKENS, ModelServer, PROMPT_TOKENS, Reply};
use serde_json::json;
use speed::llm::{self, Config, Error, ErrorKind, Message, ProviderKind, Request};

fn no_env(_: &str) -> Option<String> {
    None
}

fn config(provider: ProviderKind, base_url: String) -> Config {
    Config {
        provider: speed::llm::Choice::Model(provider),
        base_url: Some(base_url),
        model: Some("test-model".into()),
        timeout: Duration::from_secs(5),
        connect_timeout: Duration::from_secs(1),
        max_retries: 2,
        retry_base: Duration::from_millis(5),
        ..Config::default()
    }
}

fn openai(server: &ModelServer) -> Config {
    config(ProviderKind::OpenAi, server.url())
}

fn anthropic(server: &ModelServer) -> Config {
    config(ProviderKind::Anthropic, server.root())
}

fn anthropic_key(var: &str) -> Option<String> {
    (var == "ANTHROPIC_API_KEY").then(|| "sk-ant-test".to_string())
}

fn request() -> Request {
    Request {
        system: Some("You review code against a spec.".into()),
        messages: vec![Message::user("Review this diff.")],
        json_schema: Some((
            "verdict".into(),
            json!({"type": "object", "required": ["verdict"]}),
        )),
        cache_prefix: None,
    }
}

fn complete(
    config: &Config,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<llm::Completion, Error> {
    llm::provider(config, env)?.complete(&request())
}

#[test]
fn openai_sends_pinned_sampling_and_no_key_unless_configured() {
    let server = ModelServer::scripted(vec![Reply::openai(r#"{"verdict":"approve"}"#)]);
    let completion = complete(&openai(&server), &no_env).unwrap();

    assert_eq!(completion.text, r#"{"verdict":"approve"}"#);
    assert_eq!(completion.prompt_tokens, Some(PROMPT_TOKENS));
    assert_eq!(completion.completion_tokens, Some(COMPLETION_TOKENS));
    assert_eq!(completion.attempts, 1);

    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    let sent = &requests[0];
    assert_eq!(sent.method, "POST");
    assert_eq!(sent.path, "/v1/chat/completions");
    assert_eq!(sent.header("authorization"), None);
    let body = sent.json();
    assert_eq!(body["model"], "test-model");
    assert_eq!(body["temperature"].as_f64(), Some(0.0));
    assert_eq!(body["seed"], 7);
    assert_eq!(body["max_tokens"], 4096);
    assert_eq!(
        body["messages"],
        json!([
            {"role": "system", "content": "You review code against a spec."},
            {"role": "user", "content": "Review this diff."},
        ])
    );
    assert!(
        body.get("response_format").is_none(),
        "structured output is off by default"
    );
}

#[test]
fn openai_sends_the_key_as_a_bearer_token_when_a_variable_is_named() {
    let server = ModelServer::scripted(vec![Reply::openai("ok")]);
    let config = Config {
        api_key_env: Some("LOOPBACK_KEY".into()),
        ..openai(&server)
    };
    let env = |var: &str| (var == "LOOPBACK_KEY").then(|| "sk-loopback".to_string());
    complete(&config, &env).unwrap();
    assert_eq!(
        server.requests()[0].header("Authorization"),
        Some("Bearer sk-loopback")
    );
}

#[test]
fn openai_structured_output_is_sent_only_when_configured() {
    let server = ModelServer::scripted(vec![Reply::openai("{}")]);
    let config = Config {
        structured_output: true,
        ..openai(&server)
    };
    complete(&config, &no_env).unwrap();
    assert_eq!(
        server.requests()[0].json()["response_format"],
        json!({"type": "json_schema", "json_schema": {
            "name": "verdict", "strict": true,
            "schema": {"type": "object", "required": ["verdict"]}}})
    );
}

#[test]
fn anthropic_sends_its_headers_and_joins_text() {
    let server = ModelServer::scripted(vec![Reply::anthropic("looks right")]);
    let provider = llm::provider(&anthropic(&server), &anthropic_key).unwrap();
    assert_eq!(
        (provider.name(), provider.model()),
        ("anthropic", "test-model")
    );
    let completion = provider.complete(&request()).unwrap();

    assert_eq!(completion.text, "looks right");
    assert_eq!(completion.prompt_tokens, Some(PROMPT_TOKENS));
    assert_eq!(completion.completion_tokens, Some(COMPLETION_TOKENS));
    let sent = &server.requests()[0];
    assert_eq!(sent.path, "/v1/messages");
    assert_eq!(sent.header("x-api-key"), Some("sk-ant-test"));
    assert_eq!(sent.header("anthropic-version"), Some("2023-06-01"));
    let body = sent.json();
    assert_eq!(body["system"], "You review code against a spec.");
    assert_eq!(
        body["messages"],
        json!([{"role": "user", "content": "Review this diff."}])
    );
    assert_eq!(body["max_tokens"], 4096);
    assert_eq!(body["temperature"].as_f64(), Some(0.0));
    assert!(body.get("tools").is_none());
}

#[test]
fn anthropic_structured_output_forces_a_tool_and_returns_its_input() {
    let server = ModelServer::scripted(vec![Reply::anthropic_tool(json!({"verdict": "approve"}))]);
    let config = Config {
        structured_output: true,
        ..anthropic(&server)
    };
    let completion = complete(&config, &anthropic_key).unwrap();

    let answer: serde_json::Value = serde_json::from_str(&completion.text).unwrap();
    assert_eq!(answer, json!({"verdict": "approve"}));
    let body = server.requests()[0].json().clone();
    assert_eq!(body["tools"][0]["name"], "verdict");
    assert_eq!(
        body["tools"][0]["input_schema"],
        json!({"type": "object", "required": ["verdict"]})
    );
    assert_eq!(
        body["tool_choice"],
        json!({"type": "tool", "name": "verdict"})
    );
}

#[test]
fn a_length_cut_off_is_truncated_output_for_both_apis() {
    let server = ModelServer::scripted(vec![Reply::openai_truncated(r#"{"verdict": "appr"#)]);
    let err = complete(&openai(&server), &no_env).unwrap_err();
    assert!(
        matches!(
            err,
            Error::Truncated {
                max_output_tokens: 4096,
                ..
            }
        ),
        "{err}"
    );
    assert_eq!(err.kind(), ErrorKind::Output);
    assert_eq!(
        server.requests().len(),
        1,
        "a cut-off answer is not retried here"
    );

    let server = ModelServer::scripted(vec![Reply::anthropic_truncated(r#"{"verdict": "appr"#)]);
    let err = complete(&anthropic(&server), &anthropic_key).unwrap_err();
    assert!(matches!(err, Error::Truncated { .. }), "{err}");
    assert_eq!(err.kind(), ErrorKind::Output);
}

#[test]
fn too_many_requests_waits_for_retry_after_then_succeeds() {
    let server = ModelServer::scripted(vec![
        Reply::status(429, r#"{"error":"slow down"}"#).header("Retry-After", "1"),
        Reply::openai("ok"),
    ]);
    let started = Instant::now();
    let completion = complete(&openai(&server), &no_env).unwrap();

    assert!(
        started.elapsed() >= Duration::from_secs(1),
        "waited {:?}",
        started.elapsed()
    );
    assert_eq!(completion.text, "ok");
    assert_eq!(completion.attempts, 2);
    assert!(completion.duration >= Duration::from_secs(1));
    assert_eq!(server.requests().len(), 2);
}

#[test]
fn server_errors_are_retried_until_retries_run_out() {
    let server = ModelServer::start(|_| Reply::status(503, "model overloaded"));
    let err = complete(&openai(&server), &no_env).unwrap_err();

    assert!(
        matches!(
            err,
            Error::Status {
                status: 503,
                attempts: 3,
                ..
            }
        ),
        "{err:?}"
    );
    assert_eq!(err.kind(), ErrorKind::Unreachable);
    assert_eq!(server.requests().len(), 3);
    let message = err.to_string();
    assert!(message.contains("3 attempts"), "{message}");
    assert!(message.contains("model overloaded"), "{message}");
    assert!(message.contains(&server.url()), "{message}");
}

#[test]
fn a_bad_request_is_not_retried_and_shows_status_and_body() {
    let server = ModelServer::scripted(vec![
        Reply::status(
            400,
            r#"{"error":{"message":"model 'test-model' not found"}}"#,
        ),
        Reply::openai("never sent"),
    ]);
    let err = complete(&openai(&server), &no_env).unwrap_err();

    assert!(
        matches!(
            err,
            Error::Status {
                status: 400,
                attempts: 1,
                ..
            }
        ),
        "{err:?}"
    );
    assert_eq!(err.kind(), ErrorKind::Config);
    assert_eq!(server.requests().len(), 1);
    let message = err.to_string();
    assert!(message.contains("HTTP 400"), "{message}");
    assert!(
        message.contains("model 'test-model' not found"),
        "{message}"
    );
}

#[test]
fn a_long_error_body_is_cut_to_its_start() {
    let body = format!("{}END", "x".repeat(2000));
    let server = ModelServer::scripted(vec![Reply::status(401, &body)]);
    let message = complete(&openai(&server), &no_env).unwrap_err().to_string();
    assert!(message.contains(&"x".repeat(500)), "{message}");
    assert!(!message.contains("END"), "{message}");
}

#[test]
fn a_server_that_never_answers_times_out_within_the_configured_timeout() {
    let server = ModelServer::start(|_| Reply::hang());
    let config = Config {
        timeout: Duration::from_millis(300),
        max_retries: 1,
        ..openai(&server)
    };
    let started = Instant::now();
    let err = complete(&config, &no_env).unwrap_err();

    assert!(matches!(err, Error::Timeout { attempts: 2, .. }), "{err:?}");
    assert_eq!(err.kind(), ErrorKind::Unreachable);
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "took {:?}",
        started.elapsed()
    );
    assert_eq!(server.requests().len(), 2);
}

#[test]
fn a_refused_connection_is_unreachable_after_all_attempts() {
    let port = {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let config = config(ProviderKind::OpenAi, format!("http://127.0.0.1:{port}/v1"));
    let err = complete(&config, &no_env).unwrap_err();

    assert!(matches!(err, Error::Connect { attempts: 3, .. }), "{err:?}");
    assert_eq!(err.kind(), ErrorKind::Unreachable);
    assert!(
        err.to_string().contains(&format!("127.0.0.1:{port}")),
        "{err}"
    );
}

#[test]
fn a_missing_api_key_names_the_variable_and_sends_nothing() {
    let server = ModelServer::scripted(vec![]);
    let config = Config {
        api_key_env: Some("SPEED_LOOPBACK_KEY".into()),
        ..anthropic(&server)
    };
    let err = complete(&config, &no_env).unwrap_err();
    assert!(
        matches!(&err, Error::MissingApiKey { var } if var == "SPEED_LOOPBACK_KEY"),
        "{err:?}"
    );
    assert!(err.to_string().contains("SPEED_LOOPBACK_KEY"));
    assert!(server.requests().is_empty());
}

#[test]
fn the_key_never_appears_in_errors() {
    let server = ModelServer::start(|_| Reply::status(401, "invalid x-api-key"));
    let err = complete(&anthropic(&server), &anthropic_key).unwrap_err();
    assert!(!err.to_string().contains("sk-ant-test"));
    assert!(!format!("{err:?}").contains("sk-ant-test"));
}

#[test]
fn concurrent_requests_are_served_concurrently() {
    let server = ModelServer::start(|_| Reply::openai("ok").delay(Duration::from_millis(300)));
    let provider = llm::provider(&openai(&server), &no_env).unwrap();
    std::thread::scope(|scope| {
        for _ in 0..3 {
            scope.spawn(|| provider.complete(&request()).unwrap());
        }
    });
    assert_eq!(server.requests().len(), 3);
    assert!(
        server.max_in_flight() >= 2,
        "max in flight: {}",
        server.max_in_flight()
    );
}

fn command(script: &str) -> Config {
    Config {
        provider: speed::llm::Choice::Model(ProviderKind::Command),
        command: vec!["sh".into(), "-c".into(), script.into()],
        timeout: Duration::from_secs(5),
        ..Config::default()
    }
}

#[test]
fn the_command_gets_the_prompt_on_stdin_and_its_stdout_is_the_answer() {
    let provider = llm::provider(&command("cat"), &no_env).unwrap();
    assert_eq!((provider.name(), provider.model()), ("command", "sh"));
    let completion = provider.complete(&request()).unwrap();
    assert_eq!(
        completion.text,
        "=== SYSTEM ===\nYou review code against a spec.\n\n=== USER ===\nReview this diff.\n"
    );
    assert_eq!(completion.attempts, 1);
}

#[test]
fn a_large_prompt_and_answer_do_not_deadlock() {
    let provider = llm::provider(
        &command("cat; head -c 300000 /dev/zero | tr '\\0' e >&2"),
        &no_env,
    )
    .unwrap();
    let big = "word ".repeat(400_000);
    let request = Request {
        messages: vec![Message::user(big.clone())],
        ..Request::default()
    };
    let completion = provider.complete(&request).unwrap();
    assert!(completion.text.contains(big.trim_end()));
}

#[test]
fn a_failing_command_reports_its_status_and_stderr_tail() {
    let err = complete(
        &command("cat >/dev/null; echo 'not logged in' >&2; exit 3"),
        &no_env,
    )
    .unwrap_err();
    match &err {
        Error::Command {
            command,
            status,
            stderr_tail,
        } => {
            assert!(command.contains("exit 3"), "{command}");
            assert!(status.contains('3'), "{status}");
            assert_eq!(stderr_tail, "not logged in");
        }
        other => panic!("expected a command error, got {other:?}"),
    }
    assert_eq!(err.kind(), ErrorKind::Unreachable);
}

#[test]
fn a_command_that_runs_too_long_is_killed_with_what_it_started() {
    let marker = tempfile::tempdir().unwrap();
    let marker = marker.path().join("still-running");
    // The inner shell stands for a model process a wrapper script started:
    // killing only the outer shell would leave it running.
    let script = format!("sh -c \"sleep 1; touch '{}'\"; echo late", marker.display());
    let config = Config {
        timeout: Duration::from_millis(200),
        ..command(&script)
    };
    let started = Instant::now();
    let err = complete(&config, &no_env).unwrap_err();

    assert!(matches!(err, Error::Timeout { .. }), "{err:?}");
    assert_eq!(err.kind(), ErrorKind::Unreachable);
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "took {:?}",
        started.elapsed()
    );
    std::thread::sleep(Duration::from_millis(1500));
    assert!(
        !marker.exists(),
        "the command's process group was not killed"
    );
}

#[test]
fn an_empty_answer_or_a_missing_program_is_an_error() {
    let err = complete(&command("cat >/dev/null; echo '  '"), &no_env).unwrap_err();
    assert!(matches!(err, Error::EmptyAnswer { .. }), "{err:?}");
    assert_eq!(err.kind(), ErrorKind::Output);

    let config = Config {
        command: vec!["/nonexistent/speed-model-cli".into()],
        ..command("")
    };
    let err = complete(&config, &no_env).unwrap_err();
    assert!(matches!(err, Error::Spawn { .. }), "{err:?}");
    assert!(err.to_string().contains("/nonexistent/speed-model-cli"));
    assert_eq!(err.kind(), ErrorKind::Config);
}
