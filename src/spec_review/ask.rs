//! Asking the model for a spec review: one call, and when the answer cannot
//! be used, one corrective retry that tells the model exactly what was
//! wrong (the verdict part's `correction`). Every call is recorded, and
//! every answer that could not be used is kept whole, for the session file.
//!
//! Bytes leave speed here, so the secrets safety net runs on the prompt and
//! the correction before they are sent, and on every answer as it arrives.

use serde::Serialize;

use crate::exit::Outcome;
use crate::llm::{self, Message, Provider, Request};
use crate::secrets::net;
use crate::verdict;

/// One call to the model, as the session records it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Call {
    /// "review" or "review (corrective retry)".
    pub stage: String,
    pub duration_ms: u64,
    pub prompt_tokens: Option<u64>,
    pub completion_tokens: Option<u64>,
    /// Why the answer could not be used, or why the call failed.
    pub error: Option<String>,
}

/// An answer that could not be used: its text (empty when the provider
/// returned none) and what was wrong.
#[derive(Debug, Clone, PartialEq)]
pub struct Unusable {
    pub raw: String,
    pub problem: String,
}

/// How the question ended.
#[derive(Debug)]
pub enum Ending<T> {
    Answer(T),
    /// Twice an answer that could not be used.
    Malformed,
    /// The model could not be reached (exit 52) or is misconfigured (1).
    Failed {
        outcome: Outcome,
        message: String,
    },
}

/// The ending, the calls made and the unusable answers met on the way.
#[derive(Debug)]
pub struct Asked<T> {
    pub ending: Ending<T>,
    pub calls: Vec<Call>,
    pub unusable: Vec<Unusable>,
    /// Secrets the net replaced in what was sent or received.
    pub leaks: usize,
}

/// Why one call gave no value.
enum Miss {
    Fatal(Outcome, String),
    /// An answer that cannot be used, and what to tell the model.
    Unusable(Unusable, String),
}

/// Asks `prompt`, reading answers with `parse`. `on_unusable` hears of
/// each unusable answer as it comes (attempt 1 or 2), for the events.
pub fn ask<T>(
    provider: &dyn Provider,
    prompt: &str,
    schema: Option<(String, serde_json::Value)>,
    parse: &dyn Fn(&str) -> Result<T, verdict::Error>,
    on_unusable: &mut dyn FnMut(u32, &Unusable),
) -> Asked<T> {
    let mut asked = Asked {
        ending: Ending::Malformed,
        calls: Vec::new(),
        unusable: Vec::new(),
        leaks: 0,
    };
    let mut prompt = prompt.to_string();
    asked.leaks += net::redact_in_place(&mut prompt, "the spec review prompt").len();
    let mut messages = vec![Message::user(prompt)];
    for attempt in 1..=2u32 {
        let request = Request {
            system: None,
            messages: messages.clone(),
            json_schema: schema.clone(),
        };
        let stage = match attempt {
            1 => "review",
            _ => "review (corrective retry)",
        };
        match call(provider, &request, stage, parse, &mut asked) {
            Ok(value) => {
                asked.ending = Ending::Answer(value);
                return asked;
            }
            Err(Miss::Fatal(outcome, message)) => {
                asked.ending = Ending::Failed { outcome, message };
                return asked;
            }
            Err(Miss::Unusable(unusable, mut correction)) => {
                on_unusable(attempt, &unusable);
                messages.push(Message::assistant(if unusable.raw.trim().is_empty() {
                    "(no usable answer)".to_string()
                } else {
                    unusable.raw.clone()
                }));
                // Built from the (netted) answer and speed's words; netted
                // all the same, as everything sent is.
                asked.leaks += net::redact_in_place(&mut correction, "the corrective retry").len();
                messages.push(Message::user(correction));
                asked.unusable.push(unusable);
            }
        }
    }
    asked
}

/// One call: its record in `asked.calls`, and the parsed answer or why not.
fn call<T>(
    provider: &dyn Provider,
    request: &Request,
    stage: &str,
    parse: &dyn Fn(&str) -> Result<T, verdict::Error>,
    asked: &mut Asked<T>,
) -> Result<T, Miss> {
    let started = std::time::Instant::now();
    match provider.complete(request) {
        Ok(mut completion) => {
            asked.leaks +=
                net::redact_in_place(&mut completion.text, "the model's spec review answer").len();
            let parsed = parse(&completion.text);
            asked.calls.push(Call {
                stage: stage.to_string(),
                duration_ms: completion.duration.as_millis() as u64,
                prompt_tokens: completion.prompt_tokens,
                completion_tokens: completion.completion_tokens,
                error: parsed.as_ref().err().map(ToString::to_string),
            });
            parsed.map_err(|err| {
                Miss::Unusable(
                    Unusable {
                        raw: completion.text,
                        problem: err.to_string(),
                    },
                    verdict::correction(&err),
                )
            })
        }
        Err(err) => {
            let message = err.to_string();
            asked.calls.push(Call {
                stage: stage.to_string(),
                duration_ms: started.elapsed().as_millis() as u64,
                prompt_tokens: None,
                completion_tokens: None,
                error: Some(message.clone()),
            });
            Err(match err.kind() {
                llm::ErrorKind::Unreachable => Miss::Fatal(Outcome::ModelUnreachable, message),
                llm::ErrorKind::Config => Miss::Fatal(Outcome::Error, message),
                // Cut off or empty: an answer that cannot be used.
                llm::ErrorKind::Output => {
                    let correction = format!(
                        "Your previous answer could not be used: {message}. Answer again with \
                         only the JSON object, complete and compact."
                    );
                    Miss::Unusable(
                        Unusable {
                            raw: String::new(),
                            problem: message,
                        },
                        correction,
                    )
                }
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;
    use std::time::Duration;

    /// Answers from a script, recording what it was sent.
    struct Script {
        answers: Mutex<Vec<Result<String, llm::Error>>>,
        sent: Mutex<Vec<Request>>,
    }

    impl Script {
        fn new(answers: Vec<Result<String, llm::Error>>) -> Script {
            Script {
                answers: Mutex::new(answers.into_iter().rev().collect()),
                sent: Mutex::new(Vec::new()),
            }
        }
    }

    impl Provider for Script {
        fn name(&self) -> &str {
            "script"
        }
        fn model(&self) -> &str {
            "m"
        }
        fn complete(&self, request: &Request) -> Result<llm::Completion, llm::Error> {
            self.sent.lock().unwrap().push(request.clone());
            let text = self.answers.lock().unwrap().pop().expect("scripted")?;
            Ok(llm::Completion {
                text,
                prompt_tokens: Some(10),
                completion_tokens: Some(5),
                duration: Duration::from_millis(3),
                attempts: 1,
            })
        }
    }

    fn number(raw: &str) -> Result<u32, verdict::Error> {
        let value = verdict::extract(raw)?;
        value["verdict"]
            .as_u64()
            .map(|n| n as u32)
            .ok_or_else(|| verdict::Error::Invalid {
                problems: vec![verdict::Problem {
                    path: "verdict".into(),
                    message: "expected a number".into(),
                }],
            })
    }

    #[test]
    fn one_corrective_retry_then_the_answer() {
        let script = Script::new(vec![
            Ok("no json here".into()),
            Ok(r#"{"verdict": 7}"#.into()),
        ]);
        let mut heard = Vec::new();
        let asked = ask(&script, "review this", None, &number, &mut |n, u| {
            heard.push((n, u.problem.clone()))
        });
        assert!(matches!(asked.ending, Ending::Answer(7)));
        assert_eq!(asked.calls.len(), 2);
        assert_eq!(heard.len(), 1);
        assert!(heard[0].1.contains("no JSON object"), "{heard:?}");
        let sent = script.sent.lock().unwrap();
        let retry = &sent[1].messages;
        assert_eq!(retry.len(), 3);
        assert_eq!(retry[1].content, "no json here");
        assert!(
            retry[2]
                .content
                .starts_with("Your previous answer could not be used.")
        );
    }

    #[test]
    fn malformed_twice_keeps_both_answers() {
        let script = Script::new(vec![Ok("{\"verdict\": \"x\"}".into()), Ok("{oops".into())]);
        let asked = ask(&script, "p", None, &number, &mut |_, _| {});
        assert!(matches!(asked.ending, Ending::Malformed));
        let raws: Vec<&str> = asked.unusable.iter().map(|u| u.raw.as_str()).collect();
        assert_eq!(raws, ["{\"verdict\": \"x\"}", "{oops"]);
    }

    #[test]
    fn an_unreachable_model_is_not_retried_here() {
        let script = Script::new(vec![Err(llm::Error::Connect {
            url: "http://127.0.0.1:9/v1".into(),
            reason: "refused".into(),
            attempts: 4,
        })]);
        let asked = ask(&script, "p", None, &number, &mut |_, _| {});
        match asked.ending {
            Ending::Failed { outcome, message } => {
                assert_eq!(outcome, Outcome::ModelUnreachable);
                assert!(message.contains("refused"));
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(script.sent.lock().unwrap().len(), 1);
    }

    #[test]
    fn a_secret_in_an_answer_is_replaced_before_anyone_sees_it() {
        let leaked = "{\"verdict\": \"x\", \"n\": \"AKIAIOSFODNN7EXAMPLQ\"}";
        let script = Script::new(vec![Ok(leaked.into()), Ok("{}".into())]);
        let asked = ask(&script, "p", None, &number, &mut |_, _| {});
        assert!(asked.leaks >= 1);
        assert!(!asked.unusable[0].raw.contains("AKIAIOSFODNN7EXAMPLQ"));
    }
}
