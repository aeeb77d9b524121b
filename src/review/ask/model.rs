//! Asking the model: one call, and when the answer is not a valid object, one
//! corrective retry that tells the model exactly what was wrong. Every call is
//! recorded so the report can reproduce the decision.
//!
//! This is where bytes leave speed and come back, so the secrets safety
//! net runs here on every message before it is sent and on every answer
//! as it arrives: what it finds is replaced and reported as a `Leak`.

use std::time::Instant;

use crate::exit::Outcome;
use crate::llm::{self, Message, Provider, Request, Role};
use crate::secrets::net::{self, Leak};

use crate::ledger::report::Call;

use super::super::{Event, Events};

/// Why no usable answer came back.
#[derive(Debug, Clone)]
pub struct Failure {
    pub outcome: Outcome,
    pub message: String,
}

/// Limits shared by concurrent reviews; None when unpaced.
pub type Pacer = Option<std::sync::Arc<llm::pacing::Pacer>>;

pub struct Asked<T> {
    pub result: Result<T, Failure>,
    pub calls: Vec<Call>,
    /// Secrets the safety net replaced in what was sent or received.
    pub leaks: Vec<Leak>,
    /// The conversation that gave the answer, the answer last (as
    /// received, netted): a reconcile turn goes on from it. Empty when no
    /// answer could be used.
    pub conversation: Vec<Message>,
}

/// Why an answer could not be used.
#[derive(Debug, Clone)]
pub struct Rejection {
    /// What was wrong, briefly: for the report, the log and the message a
    /// review that stays invalid ends with.
    pub summary: String,
    /// What the model is told on the corrective retry.
    pub correction: String,
}

/// The rejection of an answer the verdict module could not use.
pub fn rejection(error: &crate::verdict::Error) -> Rejection {
    Rejection {
        summary: error.to_string(),
        correction: crate::verdict::correction(error),
    }
}

/// What a caller asks: the prompt, an optional JSON schema for structured
/// output, and how to turn raw text into a value (or a rejection).
pub struct Question<'a, T> {
    /// "review" or "guardian".
    pub stage: &'static str,
    /// Which part of a review done in parts, as (number, count).
    pub part: Option<(usize, usize)>,
    pub label: &'a str,
    pub prompt: &'a str,
    /// Tokens to reserve with the pacer: the prompt plus the largest answer.
    pub reserve_tokens: u64,
    pub schema: Option<(String, serde_json::Value)>,
    pub parse: &'a dyn Fn(&str) -> Result<T, Rejection>,
    /// The run's model calls in flight at once: one is held around each
    /// call.
    pub slots: &'a llm::pacing::Slots,
    /// The prompt's first this many bytes are its stable part, for the
    /// provider's prompt cache.
    pub cache_prefix: Option<usize>,
    /// speed's token counter: what a call whose provider reports no usage
    /// sent and received is counted with it (None: left unknown).
    pub counter: Option<&'a crate::prompt::Counter>,
}

pub fn ask<T>(
    provider: &dyn Provider,
    question: &Question<'_, T>,
    pacer: &Pacer,
    events: &dyn Events,
) -> Asked<T> {
    let mut calls = Vec::new();
    let mut leaks = Vec::new();
    let mut last_problem = String::new();
    // "review", "review (part 2 of 3)": what the report's calls and the
    // failure message name.
    let named = match question.part {
        Some((n, count)) => format!("{} (part {n} of {count})", question.stage),
        None => question.stage.to_string(),
    };
    let mut prompt = question.prompt.to_string();
    leaks.extend(net::redact_in_place(
        &mut prompt,
        &format!("the {named} prompt"),
    ));
    let cache_prefix = stable_prefix(question.prompt, &prompt, question.cache_prefix);
    let mut messages = vec![Message {
        role: Role::User,
        content: prompt,
    }];
    for attempt in 0..2 {
        let stage = if attempt == 0 {
            named.clone()
        } else {
            format!("{named} (corrective retry)")
        };
        let call = Exchange {
            stage,
            named: &named,
            messages: &messages,
            cache_prefix,
        };
        let (answer_text, rejection) =
            match call.make(provider, question, pacer, events, &mut calls, &mut leaks) {
                Ok((value, answer)) => {
                    messages.push(Message {
                        role: Role::Assistant,
                        content: answer,
                    });
                    return Asked {
                        result: Ok(value),
                        calls,
                        leaks,
                        conversation: messages,
                    };
                }
                Err(Miss::Fatal(failure)) => {
                    return Asked {
                        result: Err(failure),
                        calls,
                        leaks,
                        conversation: Vec::new(),
                    };
                }
                Err(Miss::Invalid(answer_text, rejection)) => (answer_text, rejection),
            };
        last_problem = rejection.summary.clone();
        if attempt == 0 {
            events.event(Event::Retrying {
                label: question.label.to_string(),
                what: question.stage,
                reason: brief(&rejection.summary),
            });
            messages.push(Message {
                role: Role::Assistant,
                content: if answer_text.trim().is_empty() {
                    "(no usable answer)".to_string()
                } else {
                    answer_text
                },
            });
            // Built from the model's (already netted) answer and speed's
            // own words; netted all the same, as everything sent is.
            let mut correction = rejection.correction;
            leaks.extend(net::redact_in_place(
                &mut correction,
                &format!("the {named} corrective retry"),
            ));
            messages.push(Message {
                role: Role::User,
                content: correction,
            });
        }
    }
    Asked {
        result: Err(Failure {
            outcome: Outcome::InvalidOutput,
            message: format!(
                "the model's {named} answer was still invalid after one corrective retry: {}",
                whole(&last_problem)
            ),
        }),
        calls,
        leaks,
        conversation: Vec::new(),
    }
}

/// One more turn of a conversation that gave a usable answer: `turn` is
/// sent after it (netted, like everything sent), recorded as the
/// `stage` call, and its answer read as the first one was. No corrective
/// retry follows: an answer that cannot be used leaves the first one
/// standing, which the caller decides on.
pub fn follow_up<T>(
    provider: &dyn Provider,
    question: &Question<'_, T>,
    conversation: &[Message],
    turn: &str,
    stage: &str,
    pacer: &Pacer,
    events: &dyn Events,
) -> Asked<T> {
    let named = match question.part {
        Some((n, count)) => format!("{} (part {n} of {count})", question.stage),
        None => question.stage.to_string(),
    };
    let mut calls = Vec::new();
    let mut leaks = Vec::new();
    let mut turn = turn.to_string();
    leaks.extend(net::redact_in_place(
        &mut turn,
        &format!("the {named} {stage}"),
    ));
    let mut messages = conversation.to_vec();
    messages.push(Message {
        role: Role::User,
        content: turn,
    });
    let cache_prefix = match messages.first() {
        Some(first) => stable_prefix(question.prompt, &first.content, question.cache_prefix),
        None => None,
    };
    let call = Exchange {
        stage: format!("{named} ({stage})"),
        named: &named,
        messages: &messages,
        cache_prefix,
    };
    let result = match call.make(provider, question, pacer, events, &mut calls, &mut leaks) {
        Ok((value, answer)) => {
            messages.push(Message {
                role: Role::Assistant,
                content: answer,
            });
            Ok(value)
        }
        Err(Miss::Fatal(failure)) => Err(failure),
        Err(Miss::Invalid(_, rejection)) => Err(Failure {
            outcome: Outcome::InvalidOutput,
            message: format!(
                "the model's {named} answer to the {stage} turn could not be used: {}",
                brief(&rejection.summary)
            ),
        }),
    };
    let conversation = if result.is_ok() { messages } else { Vec::new() };
    Asked {
        result,
        calls,
        leaks,
        conversation,
    }
}

/// Why one call gave no value.
enum Miss {
    /// The provider failed in a way a retry of the question cannot mend.
    Fatal(Failure),
    /// An answer (its text, perhaps empty) that could not be used.
    Invalid(String, Rejection),
}

/// One call of the conversation so far.
struct Exchange<'a> {
    /// The report's name for this call ("review (corrective retry)").
    stage: String,
    named: &'a str,
    messages: &'a [Message],
    /// The first message's stable part, for the provider's prompt cache.
    cache_prefix: Option<usize>,
}

impl Exchange<'_> {
    /// Send the conversation, record the call, and read the answer.
    fn make<T>(
        self,
        provider: &dyn Provider,
        question: &Question<'_, T>,
        pacer: &Pacer,
        events: &dyn Events,
        calls: &mut Vec<Call>,
        leaks: &mut Vec<Leak>,
    ) -> Result<(T, String), Miss> {
        let request = Request {
            system: None,
            messages: self.messages.to_vec(),
            json_schema: question.schema.clone(),
            cache_prefix: self.cache_prefix,
        };
        // A slot first: the pacer counts a request as started when it
        // grants it.
        let _slot = question.slots.acquire();
        let _permit = pacer.as_ref().map(|p| {
            p.acquire(question.reserve_tokens, &|wait| {
                events.event(Event::Waiting {
                    label: question.label.to_string(),
                    seconds: wait.as_secs_f64(),
                    why: "rate limit".to_string(),
                })
            })
        });
        events.event(Event::ModelStarted {
            label: question.label.to_string(),
            what: question.stage,
        });
        let started = Instant::now();
        let response = provider.complete(&request);
        events.event(Event::ModelFinished {
            label: question.label.to_string(),
            what: question.stage,
        });
        match response {
            Ok(mut completion) => {
                leaks.extend(net::redact_in_place(
                    &mut completion.text,
                    &format!("the model's {} answer", self.named),
                ));
                let parsed = (question.parse)(&completion.text);
                // No usage from the provider (a command such as `claude
                // -p`): speed's own count, said to be one.
                let counted = match (completion.prompt_tokens, completion.completion_tokens) {
                    (None, None) => question.counter.map(|counter| {
                        let sent: usize = self
                            .messages
                            .iter()
                            .map(|m| counter.count(&m.content))
                            .sum();
                        (sent as u64, counter.count(&completion.text) as u64)
                    }),
                    _ => None,
                };
                calls.push(Call {
                    stage: self.stage,
                    duration_ms: completion.duration.as_millis() as u64,
                    attempts: completion.attempts,
                    prompt_tokens: counted.map(|c| c.0).or(completion.prompt_tokens),
                    completion_tokens: counted.map(|c| c.1).or(completion.completion_tokens),
                    counted: counted.is_some(),
                    cache_read_tokens: completion.cache_read_tokens,
                    cache_write_tokens: completion.cache_write_tokens,
                    batch: completion.batch.clone(),
                    answer: Some(completion.text.clone()),
                    error: parsed.as_ref().err().map(|r| r.summary.clone()),
                });
                match parsed {
                    Ok(value) => Ok((value, completion.text)),
                    Err(rejection) => Err(Miss::Invalid(completion.text, rejection)),
                }
            }
            Err(err) => {
                calls.push(Call {
                    stage: self.stage,
                    duration_ms: started.elapsed().as_millis() as u64,
                    attempts: err.attempts().unwrap_or(1),
                    prompt_tokens: None,
                    completion_tokens: None,
                    counted: false,
                    cache_read_tokens: None,
                    cache_write_tokens: None,
                    batch: None,
                    answer: None,
                    error: Some(err.to_string()),
                });
                Err(match err.kind() {
                    llm::ErrorKind::Unreachable => Miss::Fatal(Failure {
                        outcome: Outcome::ModelUnreachable,
                        message: err.to_string(),
                    }),
                    llm::ErrorKind::Config => Miss::Fatal(Failure {
                        outcome: Outcome::Error,
                        message: err.to_string(),
                    }),
                    llm::ErrorKind::Output => Miss::Invalid(
                        String::new(),
                        Rejection {
                            summary: err.to_string(),
                            correction: format!(
                                "Your previous answer could not be used: {err}. Answer again with \
                                 only the JSON object, complete and compact: shorter evidence and \
                                 notes, no prose before or after it."
                            ),
                        },
                    ),
                })
            }
        }
    }
}

/// The stable prefix of the prompt as sent: the composed one's, when the
/// safety net left that prefix as it was (it changes nothing in a composed
/// prompt, which was netted already; a change would move the boundary).
pub fn stable_prefix(composed: &str, sent: &str, prefix: Option<usize>) -> Option<usize> {
    let n = prefix?;
    (n <= composed.len()
        && n <= sent.len()
        && sent.is_char_boundary(n)
        && composed.as_bytes()[..n] == sent.as_bytes()[..n])
        .then_some(n)
}

/// A problem on one line, cut to a length a terminal line can show.
/// The reason a review failed, as the report keeps it: on one line, whole
/// up to a bound far past any list of problems a validator gives, and then
/// cut between words.
fn whole(text: &str) -> String {
    const MAX: usize = 8_000;
    let one_line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match one_line.char_indices().nth(MAX) {
        None => one_line,
        Some((at, _)) => {
            let cut = one_line[..at].rfind(' ').unwrap_or(at);
            format!("{}…", &one_line[..cut])
        }
    }
}

fn brief(text: &str) -> String {
    const MAX: usize = 400;
    let one_line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut out: String = one_line.chars().take(MAX).collect();
    if one_line.chars().nth(MAX).is_some() {
        out.push('…');
    }
    out
}
