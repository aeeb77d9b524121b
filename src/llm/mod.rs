//! Language-model providers: they turn a prompt into text.
//!
//! This part owns the provider trait, its configuration, the three providers
//! (`openai` for any OpenAI-compatible server, `anthropic`, and `command` for a
//! local CLI reading the prompt on stdin), the HTTP retry policy and the pacing
//! of concurrent requests. It knows nothing of verdicts, tasks or specs: the
//! caller decides what the text means. It never prints and never exits.

mod anthropic;
pub mod batch;
mod command;
pub mod cost;
mod error;
mod http;
mod openai;
pub mod pacing;
mod served;
pub use served::served_models;

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

pub use error::{Error, ErrorKind};
pub use pacing::{Pacer, Permit};

/// Who said a message of the conversation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    User,
    Assistant,
}

impl Role {
    /// The role's name on the wire, shared by both HTTP APIs.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::User => "user",
            Role::Assistant => "assistant",
        }
    }
}

/// One turn of the conversation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    pub role: Role,
    pub content: String,
}

impl Message {
    pub fn user(content: impl Into<String>) -> Message {
        Message {
            role: Role::User,
            content: content.into(),
        }
    }

    pub fn assistant(content: impl Into<String>) -> Message {
        Message {
            role: Role::Assistant,
            content: content.into(),
        }
    }
}

/// What to ask the model.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Request {
    pub system: Option<String>,
    pub messages: Vec<Message>,
    /// A JSON Schema the answer must follow, with a name for it. Sent to the
    /// server only when `Config::structured_output` is on; otherwise the prompt
    /// alone has to ask for the shape.
    pub json_schema: Option<(String, serde_json::Value)>,
    /// The first message's first this many bytes are the prompt's stable
    /// part, the same across the reviews of a feature: a provider that
    /// caches a marked prefix (Anthropic's `cache_control`) is told to cache
    /// it; servers that cache every prefix (OpenAI, llama.cpp, vLLM) need
    /// no mark.
    pub cache_prefix: Option<usize>,
}

/// The model's answer and what it cost.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Completion {
    /// The answer; with structured output on Anthropic, the forced tool's
    /// input serialised as JSON.
    pub text: String,
    pub prompt_tokens: Option<u64>,
    pub completion_tokens: Option<u64>,
    /// The part of `prompt_tokens` the provider read from its prompt cache
    /// (Anthropic `cache_read_input_tokens`, OpenAI
    /// `prompt_tokens_details.cached_tokens`), and the part it wrote to it
    /// (Anthropic `cache_creation_input_tokens`).
    pub cache_read_tokens: Option<u64>,
    pub cache_write_tokens: Option<u64>,
    /// Wall time of the whole call, retries and waits included.
    pub duration: Duration,
    /// Requests made, the successful one included.
    pub attempts: u32,
    /// The provider batch that answered, when a batch did (`batch`).
    pub batch: Option<String>,
}

/// A way to get an answer from a model.
pub trait Provider: Send + Sync {
    /// `"openai"`, `"anthropic"` or `"command"`.
    fn name(&self) -> &str;
    /// The model name as configured (for `command`, the configured model or
    /// else the program).
    fn model(&self) -> &str;
    fn complete(&self, request: &Request) -> Result<Completion, Error>;
}

/// Which provider to build.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ProviderKind {
    /// Any OpenAI-compatible chat-completions server (Ollama, llama.cpp, vLLM,
    /// LM Studio, OpenAI). The default, since local servers speak it.
    #[default]
    OpenAi,
    Anthropic,
    Command,
}

impl ProviderKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ProviderKind::OpenAi => "openai",
            ProviderKind::Anthropic => "anthropic",
            ProviderKind::Command => "command",
        }
    }
}

impl fmt::Display for ProviderKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for ProviderKind {
    type Err = Error;

    fn from_str(name: &str) -> Result<ProviderKind, Error> {
        match name {
            "openai" => Ok(ProviderKind::OpenAi),
            "anthropic" => Ok(ProviderKind::Anthropic),
            "command" => Ok(ProviderKind::Command),
            other => Err(Error::UnknownProvider {
                name: other.to_string(),
            }),
        }
    }
}

/// `llm.provider` / `--provider`: a model provider, or `none` for a review
/// by speed's own checks alone (offline), which asks no model at all.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Choice {
    Model(ProviderKind),
    Offline,
}

impl Choice {
    pub const WORDS: &'static [&'static str] = &["openai", "anthropic", "command", "none"];

    pub fn parse(word: &str) -> Option<Choice> {
        match word {
            "none" => Some(Choice::Offline),
            other => other.parse().ok().map(Choice::Model),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Choice::Model(kind) => kind.as_str(),
            Choice::Offline => "none",
        }
    }
}

impl serde::Serialize for Choice {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// Resolved provider settings (the `[llm]` block of `.speed/config.toml`
/// after flags and environment have been applied).
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// Which provider, or none (an offline review).
    pub provider: Choice,
    /// Why the review is offline when nobody asked for it (no provider is
    /// configured), for stderr.
    pub offline_note: Option<String>,
    /// openai: default `http://localhost:11434/v1`; anthropic: default
    /// `https://api.anthropic.com`.
    pub base_url: Option<String>,
    /// Required for `openai` and `anthropic`.
    pub model: Option<String>,
    /// The name of the variable holding the key, never the key. openai sends
    /// no key unless this is set; anthropic defaults to `ANTHROPIC_API_KEY`.
    pub api_key_env: Option<String>,
    /// argv of the `command` provider; run without a shell.
    pub command: Vec<String>,
    /// Limit for one attempt: the whole HTTP exchange, or the command's run.
    pub timeout: Duration,
    pub connect_timeout: Duration,
    /// Retries after the first attempt, for transient HTTP failures only.
    pub max_retries: u32,
    pub temperature: f64,
    pub seed: u64,
    pub max_output_tokens: u32,
    /// Send `Request::json_schema` to the server (OpenAI `response_format`,
    /// Anthropic forced tool; for `command`, appended to the prompt).
    pub structured_output: bool,
    /// The fraction taken off the input price for input read from the
    /// provider's prompt cache, and off every price for a batch's answers
    /// (`cost`); None: the provider's usual discount.
    pub cache_read_discount: Option<f64>,
    pub batch_discount: Option<f64>,
    /// First backoff step; doubles per retry, with full jitter.
    pub retry_base: Duration,
    /// The longest answer read from a server or a command; past it the
    /// answer is refused (`Error::TooLarge`) without reading the rest.
    pub max_answer_bytes: usize,
    /// Requests and tokens per minute shared by all concurrent reviews
    /// (`pacing`); None is unpaced.
    pub rpm: Option<u32>,
    pub tpm: Option<u32>,
    /// What the provider charges per million input and output tokens, in
    /// any currency (`speed stats` prices the log's tokens with them).
    pub price_input_per_mtok: Option<f64>,
    pub price_output_per_mtok: Option<f64>,
}

/// A verdict is a few kilobytes; megabytes come only from a broken or
/// hostile server or command.
pub const DEFAULT_MAX_ANSWER_BYTES: usize = 4 * 1024 * 1024;

impl Default for Config {
    fn default() -> Config {
        Config {
            provider: Choice::Model(ProviderKind::OpenAi),
            offline_note: None,
            base_url: None,
            model: None,
            api_key_env: None,
            command: Vec::new(),
            timeout: Duration::from_secs(120),
            connect_timeout: Duration::from_secs(10),
            max_retries: 3,
            temperature: 0.0,
            seed: 7,
            max_output_tokens: 4096,
            structured_output: false,
            cache_read_discount: None,
            batch_discount: None,
            retry_base: Duration::from_secs(1),
            max_answer_bytes: DEFAULT_MAX_ANSWER_BYTES,
            rpm: None,
            tpm: None,
            price_input_per_mtok: None,
            price_output_per_mtok: None,
        }
    }
}

impl Config {
    /// Whether no model is asked (`llm.provider = "none"`, `--offline`).
    pub fn offline(&self) -> bool {
        self.provider == Choice::Offline
    }
}

const CONFIG_HINT: &str = "set provider, base_url and model in the [llm] block of \
     .speed/config.toml, or pass --provider and --model";

/// Builds the configured provider. `env` reads environment variables (the
/// API key); tests pass a closure instead of touching the process environment.
pub fn provider(
    config: &Config,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Box<dyn Provider>, Error> {
    let kind = match config.provider {
        Choice::Model(kind) => kind,
        Choice::Offline => return Ok(Box::new(Offline)),
    };
    match kind {
        ProviderKind::OpenAi => {
            let model = require_model(config)?;
            let key = match &config.api_key_env {
                Some(var) => Some(read_key(var, env)?),
                None => None,
            };
            Ok(Box::new(openai::OpenAi::new(config, model, key)?))
        }
        ProviderKind::Anthropic => {
            let model = require_model(config)?;
            let var = config
                .api_key_env
                .as_deref()
                .unwrap_or(anthropic::DEFAULT_KEY_ENV);
            let key = read_key(var, env)?;
            Ok(Box::new(anthropic::Anthropic::new(config, model, key)?))
        }
        ProviderKind::Command => {
            if config.command.is_empty() {
                return Err(Error::NotConfigured {
                    hint: "provider \"command\" needs the program to run: set \
                           command = [\"program\", \"arg\", ...] in the [llm] block of \
                           .speed/config.toml"
                        .to_string(),
                });
            }
            Ok(Box::new(command::Command::new(config)))
        }
    }
}

/// The provider of an offline review: it is never asked (an offline
/// review decides before any model call), and says so if it were.
pub struct Offline;

impl Provider for Offline {
    fn name(&self) -> &str {
        "none"
    }

    fn model(&self) -> &str {
        ""
    }

    fn complete(&self, _request: &Request) -> Result<Completion, Error> {
        Err(Error::NotConfigured {
            hint: "an offline review asks no model".to_string(),
        })
    }
}

fn require_model(config: &Config) -> Result<String, Error> {
    match config.model.as_deref().map(str::trim) {
        Some(model) if !model.is_empty() => Ok(model.to_string()),
        _ => Err(Error::NotConfigured {
            hint: format!(
                "no model for provider \"{}\": {CONFIG_HINT}",
                config.provider.as_str()
            ),
        }),
    }
}

fn read_key(var: &str, env: &dyn Fn(&str) -> Option<String>) -> Result<http::Secret, Error> {
    match env(var) {
        Some(key) if !key.trim().is_empty() => Ok(http::Secret::new(key.trim().to_string())),
        _ => Err(Error::MissingApiKey {
            var: var.to_string(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn no_env(_: &str) -> Option<String> {
        None
    }

    fn configured(provider: ProviderKind) -> Config {
        Config {
            provider: Choice::Model(provider),
            model: Some("m".into()),
            ..Config::default()
        }
    }

    #[test]
    fn nothing_configured_says_where_to_configure() {
        let err = provider(&Config::default(), &no_env).err().unwrap();
        assert!(matches!(err, Error::NotConfigured { .. }));
        assert_eq!(err.kind(), ErrorKind::Config);
        let message = err.to_string();
        assert!(message.contains("[llm]"), "{message}");
        assert!(message.contains(".speed/config.toml"), "{message}");
        assert!(message.contains("--provider"), "{message}");
        assert!(message.contains("--model"), "{message}");
    }

    #[test]
    fn command_provider_needs_a_command() {
        let err = provider(&configured(ProviderKind::Command), &no_env)
            .err()
            .unwrap();
        assert!(err.to_string().contains("command = ["), "{err}");
    }

    #[test]
    fn openai_needs_no_key_unless_a_variable_is_named() {
        let p = provider(&configured(ProviderKind::OpenAi), &no_env).unwrap();
        assert_eq!(p.name(), "openai");
        assert_eq!(p.model(), "m");
    }

    #[test]
    fn a_named_but_unset_key_variable_is_an_error_naming_it() {
        let config = Config {
            api_key_env: Some("MY_KEY".into()),
            ..configured(ProviderKind::OpenAi)
        };
        let err = provider(&config, &no_env).err().unwrap();
        assert!(matches!(&err, Error::MissingApiKey { var } if var == "MY_KEY"));
        assert!(err.to_string().contains("MY_KEY"));
        assert_eq!(err.kind(), ErrorKind::Config);
    }

    #[test]
    fn anthropic_reads_its_default_key_variable() {
        let err = provider(&configured(ProviderKind::Anthropic), &no_env)
            .err()
            .unwrap();
        assert!(matches!(&err, Error::MissingApiKey { var } if var == "ANTHROPIC_API_KEY"));
        let env = |var: &str| (var == "ANTHROPIC_API_KEY").then(|| "sk-ant".to_string());
        let p = provider(&configured(ProviderKind::Anthropic), &env).unwrap();
        assert_eq!(p.name(), "anthropic");
    }

    #[test]
    fn provider_names_parse_and_unknown_ones_are_named() {
        assert_eq!(
            "anthropic".parse::<ProviderKind>().unwrap(),
            ProviderKind::Anthropic
        );
        assert_eq!(
            "command".parse::<ProviderKind>().unwrap(),
            ProviderKind::Command
        );
        let err = "gemini".parse::<ProviderKind>().unwrap_err();
        assert!(err.to_string().contains("gemini"));
        assert!(err.to_string().contains("openai"));
    }

    #[test]
    fn provider_words_round_trip() {
        for word in Choice::WORDS {
            assert_eq!(Choice::parse(word).unwrap().as_str(), *word);
        }
        assert_eq!(Choice::parse("gpt"), None);
    }

    #[test]
    fn defaults_match_the_documented_ones() {
        let c = Config::default();
        assert_eq!(c.timeout, Duration::from_secs(120));
        assert_eq!(c.connect_timeout, Duration::from_secs(10));
        assert_eq!(c.max_retries, 3);
        assert_eq!(c.temperature, 0.0);
        assert_eq!(c.max_output_tokens, 4096);
    }
}
