//! The provider a review would ask: its model named, its key's variable
//! set (by name; the value is never shown), its server reachable, and one
//! probe call whose answer must be JSON in the verdict's shape, with what
//! the call cost. `--offline` makes no request at all.

use std::time::Duration;

use serde_json::json;

use super::{Findings, Inputs};
use crate::llm::{self, Choice, ProviderKind};
use crate::onboard::detect;
use crate::verdict;

/// The longest a model list may take: a server that cannot list its
/// models in this long is not answering.
const LIST_LIMIT: Duration = Duration::from_secs(10);

/// How much of an answer that was not a verdict is shown.
const SHOWN_CHARS: usize = 300;

pub(super) fn check(config: &llm::Config, inputs: &Inputs, out: &mut Findings) {
    let kind = match config.provider {
        Choice::Offline => {
            out.warn(
                "no model: llm.provider is \"none\", so every review is offline (speed's own checks alone) and none can approve",
                "configure a model in the [llm] block of .speed/config.toml (docs/models.md): the one `speed init` writes holds the lines to uncomment",
            );
            return;
        }
        Choice::Model(kind) => kind,
    };
    let model = config.model.as_deref().unwrap_or_default();
    match kind {
        ProviderKind::OpenAi | ProviderKind::Anthropic if model.trim().is_empty() => {
            out.problem(
                format!("llm.model is not set: the {kind} provider needs the model to ask"),
                "set model in the [llm] block of .speed/config.toml (or pass --model)",
            );
            return;
        }
        ProviderKind::Command => {
            let Some(program) = config.command.first() else {
                out.problem(
                    "llm.provider is \"command\" but llm.command is empty",
                    "set command = [\"program\", \"arg\", …] in the [llm] block",
                );
                return;
            };
            match detect::which(program, inputs.env) {
                Some(path) => out.ok(format!(
                    "the command provider runs `{}` ({})",
                    config.command.join(" "),
                    path.display()
                )),
                None => {
                    out.problem(
                        format!("the command provider's program `{program}` is not found on PATH"),
                        "install it, or name it with its full path in llm.command",
                    );
                    return;
                }
            }
        }
        _ => {}
    }
    if let Some(var) = key_variable(config, kind) {
        match (inputs.env)(&var) {
            Some(value) if !value.trim().is_empty() => {
                out.ok(format!("the API key variable {var} is set"));
            }
            _ => {
                out.problem(
                    format!("the API key variable {var} is not set: every review fails (exit 1) until it is"),
                    format!("export {var}=… (in CI: a secret passed as {var}); llm.api_key_env names the variable, never the key"),
                );
                return;
            }
        }
    }
    if inputs.settings.offline {
        out.note("no request made (--offline)");
        return;
    }
    if kind == ProviderKind::OpenAi {
        let base = config
            .base_url
            .clone()
            .unwrap_or_else(|| "http://localhost:11434/v1".to_string());
        match llm::served_models(config, inputs.env, LIST_LIMIT.min(config.timeout)) {
            Ok(models) => {
                if models.iter().any(|m| m == model) {
                    out.ok(format!("{base} answers and serves {model}"));
                } else if models.is_empty() {
                    out.ok(format!("{base} answers (it lists no model)"));
                } else {
                    out.warn(
                        format!(
                            "{base} answers, but does not list the model {model} (it lists {})",
                            list(&models)
                        ),
                        "set llm.model to one it serves (Ollama: `ollama pull` the model first)",
                    );
                }
            }
            // Some OpenAI-compatible servers do not list models: the probe
            // below says whether they answer.
            Err(llm::Error::Status { status: 404, .. }) => {}
            Err(err) => {
                out.problem(
                    format!("cannot reach the model server: {err}"),
                    format!("start the server, or point llm.base_url at it (now {base})"),
                );
                return;
            }
        }
    }
    probe(config, inputs, out);
}

/// The variable a key is read from: `api_key_env`, and for Anthropic its
/// default.
fn key_variable(config: &llm::Config, kind: ProviderKind) -> Option<String> {
    match (&config.api_key_env, kind) {
        (Some(var), ProviderKind::OpenAi | ProviderKind::Anthropic) => Some(var.clone()),
        (None, ProviderKind::Anthropic) => Some("ANTHROPIC_API_KEY".to_string()),
        _ => None,
    }
}

/// One call through the provider a review uses; the answer must be a
/// verdict speed can read.
fn probe(config: &llm::Config, inputs: &Inputs, out: &mut Findings) {
    // No retries: one call answers the question, and a doctor should not
    // wait through backoff.
    let config = &llm::Config {
        max_retries: 0,
        ..config.clone()
    };
    let provider = match llm::provider(config, inputs.env) {
        Ok(provider) => provider,
        Err(err) => {
            out.problem(
                format!("the provider cannot be set up: {err}"),
                "fix the [llm] block",
            );
            return;
        }
    };
    let example = json!({
        "verdict": "request_changes",
        "expectations": "Nothing: this is a connection test, with no change to review.",
        "criteria": [],
        "spec_verification": [],
        "missing_from_spec": [],
        "out_of_scope": [],
        "issues": [],
        "strengths": [],
        "rejection": {"kind": "implementation", "reason": "connection test"}
    });
    let request = llm::Request {
        system: Some(
            "You are a code reviewer that answers with a single JSON object and nothing else: no prose, no code fence."
                .to_string(),
        ),
        messages: vec![llm::Message::user(format!(
            "This is a connection test from `speed doctor`: there is no change to review. Answer with exactly this JSON object:\n{example}"
        ))],
        json_schema: None,
        cache_prefix: None,
    };
    let what = format!("{} ({})", provider.model(), provider.name());
    (inputs.progress)(&format!("asking {what} one probe call…"));
    let completion = match provider.complete(&request) {
        Ok(completion) => completion,
        Err(err) => {
            out.problem(
                format!("the probe call to {what} failed: {err}"),
                "check that the model is served and the key is valid; `speed review -v` logs each request",
            );
            return;
        }
    };
    let took = completion.duration.as_secs_f64();
    let tokens = match (completion.prompt_tokens, completion.completion_tokens) {
        (Some(i), Some(o)) => format!("{i} tokens in, {o} out"),
        _ => "the provider reports no token counts".to_string(),
    };
    let cost = llm::cost::Prices::of(config)
        .map(|prices| {
            let usage = llm::cost::Usage {
                input: completion.prompt_tokens.unwrap_or(0),
                output: completion.completion_tokens.unwrap_or(0),
                ..llm::cost::Usage::default()
            };
            format!(
                "; cost {:.6}",
                llm::cost::cost(&usage, &prices).rounded().total
            )
        })
        .unwrap_or_default();
    match verdict::parse(&completion.text) {
        Ok(_) => out.ok(format!(
            "{what} answered the probe with JSON in the verdict's shape in {took:.1} s ({tokens}{cost})"
        )),
        Err(err) => out.problem(
            format!(
                "{what} answered the probe, but not with JSON in the verdict's shape ({err}); it said: {}",
                shown(&completion.text)
            ),
            "use a model that follows instructions to the letter (a larger or an instruction-tuned one), or set llm.structured_output = true where the server supports it",
        ),
    }
}

fn shown(text: &str) -> String {
    let one_line: String = text
        .trim()
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    match one_line.char_indices().nth(SHOWN_CHARS) {
        Some((cut, _)) => format!("{}…", &one_line[..cut]),
        None if one_line.is_empty() => "(nothing)".to_string(),
        None => one_line,
    }
}

fn list(models: &[String]) -> String {
    let mut shown: Vec<String> = models.iter().take(8).cloned().collect();
    if models.len() > 8 {
        shown.push(format!("{} more", models.len() - 8));
    }
    shown.join(", ")
}
