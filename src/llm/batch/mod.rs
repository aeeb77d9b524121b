//! The providers' batch APIs: many requests submitted at once and answered
//! within a day at a lower price (Anthropic Message Batches, OpenAI Batch).
//! This part submits requests under `custom_id`s, polls a batch, and reads
//! its results back as answers by `custom_id`, in whatever order the
//! provider wrote them. Each request's body is the one the synchronous
//! provider would send (`anthropic::Anthropic::body`, `openai::OpenAi::body`)
//! and each answer is read like a synchronous one, so a batch's answer is
//! the same `Completion`.
//!
//! Everything a provider returns is untrusted: ids are checked before they
//! go into a path or a URL, a results URL is fetched only on the configured
//! origin, result files are read up to a limit, and a line that cannot be
//! read is a notice, never a failure of the others. It decides nothing and
//! writes nothing: the caller keeps the state and finishes the reviews.

mod anthropic;
mod openai;

use std::collections::HashMap;

use serde_json::Value;

use super::{Choice, Completion, Config, Error, ProviderKind, Request};

/// One request of a batch.
#[derive(Debug, Clone)]
pub struct Item {
    /// Names the request in the batch and its result: `[A-Za-z0-9_-]`,
    /// 1 to 64 characters (Anthropic's rule, the stricter one).
    pub custom_id: String,
    pub request: Request,
}

/// A batch the provider accepted.
#[derive(Debug, Clone, PartialEq)]
pub struct Submitted {
    pub id: String,
    /// OpenAI: the uploaded file of requests.
    pub input_file: Option<String>,
    /// The provider's word for its state ("in_progress", "validating").
    pub status: String,
}

/// Where a batch stands.
#[derive(Debug, Clone, PartialEq)]
pub enum Progress {
    /// Still at work: its status and its counts, as the provider gave them.
    Running {
        status: String,
        counts: String,
    },
    Ended(Ended),
}

/// A batch that will not change any more.
#[derive(Debug, Clone, PartialEq)]
pub struct Ended {
    /// "ended" (Anthropic); "completed", "expired", "cancelled", "failed"
    /// (OpenAI).
    pub status: String,
    /// Where its results are: a results URL (Anthropic) or file ids
    /// (OpenAI: the output file, then the error file).
    pub files: Vec<String>,
    /// Why the whole batch failed, when it did (OpenAI's validation).
    pub failure: Option<String>,
}

/// The answer to one request.
#[derive(Debug, Clone)]
pub enum Answer {
    /// The provider answered: read as a synchronous answer is (an answer
    /// cut off or empty is an error of kind `Output`).
    Answered(Result<Completion, Error>),
    /// Errored, expired or canceled: no answer; why.
    Unanswered(String),
}

/// A batch's results.
#[derive(Debug, Clone, Default)]
pub struct Results {
    pub answers: HashMap<String, Answer>,
    /// Lines that could not be read, results repeated: said, not fatal.
    pub notices: Vec<String>,
}

/// A provider's batch API.
pub trait Api: Send + Sync {
    fn provider(&self) -> ProviderKind;
    fn model(&self) -> &str;
    /// Submit every item as one batch.
    fn submit(&self, items: &[Item]) -> Result<Submitted, Error>;
    fn poll(&self, id: &str) -> Result<Progress, Error>;
    /// The answers of an ended batch of `expected` requests.
    fn results(&self, id: &str, ended: &Ended, expected: usize) -> Result<Results, Error>;
}

/// The batch API of the configured provider: Anthropic or OpenAI; any
/// other is an error saying so.
pub fn api(config: &Config, env: &dyn Fn(&str) -> Option<String>) -> Result<Box<dyn Api>, Error> {
    let model = super::require_model(config);
    match config.provider {
        Choice::Model(ProviderKind::Anthropic) => {
            let var = config
                .api_key_env
                .as_deref()
                .unwrap_or(super::anthropic::DEFAULT_KEY_ENV);
            let key = super::read_key(var, env)?;
            let inner = super::anthropic::Anthropic::new(config, model?, key)?;
            Ok(Box::new(anthropic::Batches::new(inner, config)))
        }
        Choice::Model(ProviderKind::OpenAi) => {
            let key = match &config.api_key_env {
                Some(var) => Some(super::read_key(var, env)?),
                None => None,
            };
            let inner = super::openai::OpenAi::new(config, model?, key)?;
            Ok(Box::new(openai::Batches::new(inner, config)))
        }
        other => Err(Error::Batch {
            what: format!(
                "--batch-api needs provider \"anthropic\" or \"openai\" (their batch APIs); the configured provider is \"{}\"",
                other.as_str()
            ),
        }),
    }
}

/// Whether `id` may name a batch or a file in a path or a URL: letters,
/// digits, `_` and `-`, at most 128 characters.
pub fn valid_id(id: &str) -> bool {
    (1..=128).contains(&id.len())
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// Whether `id` is a valid `custom_id` for both providers.
pub fn valid_custom_id(id: &str) -> bool {
    id.len() <= 64 && valid_id(id)
}

/// An id the provider handed back, checked before it is used.
fn checked_id(json: &Value, pointer: &str, url: &str) -> Result<String, Error> {
    match json.pointer(pointer).and_then(Value::as_str) {
        Some(id) if valid_id(id) => Ok(id.to_string()),
        Some(id) => Err(Error::Batch {
            what: format!(
                "{url} answered an id speed will not use ({}): only letters, digits, _ and - are expected",
                shown(id)
            ),
        }),
        None => Err(Error::BadResponse {
            url: url.to_string(),
            reason: format!("no {} in the answer", pointer.trim_start_matches('/')),
            body: super::http::body_start(&json.to_string()),
            attempts: 1,
        }),
    }
}

/// Results files are as large as their answers: up to the longest answer
/// per request, and never more than a gigabyte.
fn results_limit(config_limit: usize, expected: usize) -> usize {
    config_limit
        .saturating_mul(expected.max(1))
        .saturating_add(64 * 1024)
        .min(1 << 30)
}

/// Reads a JSONL results file: each line through `read`, which names its
/// `custom_id` and answer. A line that is not JSON (a torn last line of a
/// partial file), has no `custom_id`, or repeats one already answered, is
/// a notice; the first answer of a `custom_id` stands. A file of garbage
/// gets its first `MAX_LINE_NOTICES` notices and a count of the rest, not
/// one notice a line.
fn read_lines(
    text: &str,
    origin: &str,
    results: &mut Results,
    read: &dyn Fn(&Value) -> Option<(String, Answer)>,
) {
    let mut ignored = 0usize;
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let parsed = serde_json::from_str::<Value>(line).ok();
        let notice = match parsed.as_ref().and_then(read) {
            None => format!(
                "{origin}: line {} is not a result speed can read, ignored: {}",
                n + 1,
                shown(line)
            ),
            Some((custom_id, _)) if results.answers.contains_key(&custom_id) => format!(
                "{origin}: line {} repeats the result of {}, ignored: the first stands",
                n + 1,
                shown(&custom_id)
            ),
            Some((custom_id, answer)) => {
                results.answers.insert(custom_id, answer);
                continue;
            }
        };
        ignored += 1;
        if ignored <= MAX_LINE_NOTICES {
            results.notices.push(notice);
        }
    }
    if ignored > MAX_LINE_NOTICES {
        results.notices.push(format!(
            "{origin}: {} more lines were ignored",
            ignored - MAX_LINE_NOTICES
        ));
    }
}

/// The notices one results file gets for the lines it ignores.
const MAX_LINE_NOTICES: usize = 10;

/// A provider's word for a batch's state, as speed keeps and prints it: at
/// most 40 characters, control characters (a terminal's escapes, line
/// breaks) left out.
fn status_word(status: Option<&str>) -> String {
    let word: String = status
        .unwrap_or("unknown")
        .chars()
        .filter(|c| !c.is_control())
        .take(40)
        .collect();
    if word.is_empty() {
        "unknown".to_string()
    } else {
        word
    }
}

/// A provider's text in a message: one line, control characters out, cut
/// to a length a terminal shows.
pub fn shown(text: &str) -> String {
    const MAX: usize = 80;
    let clean: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    let mut out: String = clean.chars().take(MAX).collect();
    if clean.chars().nth(MAX).is_some() {
        out.push('…');
    }
    format!("{out:?}")
}

/// An answer read like a synchronous one, marked as the batch's.
fn answered(read: Result<Completion, Error>, batch: &str) -> Answer {
    Answer::Answered(read.map(|mut completion| {
        completion.batch = Some(batch.to_string());
        completion.attempts = 1;
        completion
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_checked_before_they_name_a_file_or_a_url() {
        assert!(valid_id("msgbatch_01HkcTjaV5uDC8jWR4ZsDV8d"));
        assert!(valid_id("batch_abc-123"));
        for bad in ["", "../x", "a/b", "a b", "x\n", "%2e%2e", &"a".repeat(129)] {
            assert!(!valid_id(bad), "{bad:?}");
        }
        assert!(valid_custom_id(&"a".repeat(64)));
        assert!(!valid_custom_id(&"a".repeat(65)));
    }

    #[test]
    fn result_lines_are_read_in_any_order_and_bad_ones_are_notices() {
        let text = "{\"id\":\"b\",\"ok\":true}\nnot json\n{\"id\":\"a\",\"ok\":false}\n{\"id\":\"b\",\"ok\":false}\n{\"nothing\":1}\n{\"id\":\"c\",\"ok\":tr";
        let mut results = Results::default();
        read_lines(text, "results", &mut results, &|v| {
            let id = v["id"].as_str()?.to_string();
            let answer = match v["ok"].as_bool()? {
                true => Answer::Answered(Ok(Completion::default())),
                false => Answer::Unanswered("errored".into()),
            };
            Some((id, answer))
        });
        assert!(matches!(results.answers["b"], Answer::Answered(Ok(_))));
        assert!(matches!(results.answers["a"], Answer::Unanswered(_)));
        assert!(!results.answers.contains_key("c"));
        assert_eq!(results.notices.len(), 4, "{:?}", results.notices);
        assert!(results.notices[1].contains("repeats the result of \"b\""));
        assert!(results.notices[3].contains("line 6"));
    }

    #[test]
    fn a_file_of_garbage_gets_a_few_notices_and_a_count() {
        let text = "junk\n".repeat(100_000);
        let mut results = Results::default();
        read_lines(&text, "f", &mut results, &|_| None);
        assert!(results.answers.is_empty());
        assert_eq!(results.notices.len(), MAX_LINE_NOTICES + 1);
        assert!(
            results.notices[MAX_LINE_NOTICES].contains("99990 more lines were ignored"),
            "{:?}",
            results.notices.last()
        );
    }

    #[test]
    fn a_status_is_a_short_printable_word() {
        assert_eq!(status_word(Some("in_progress")), "in_progress");
        assert_eq!(status_word(Some("in_\u{1b}[31mx\nY")), "in_[31mxY");
        assert_eq!(status_word(Some("\u{7}")), "unknown");
        assert_eq!(status_word(None), "unknown");
        assert_eq!(status_word(Some(&"a".repeat(100))).len(), 40);
    }

    #[test]
    fn provider_text_is_one_short_line() {
        let long = format!("a\nb{}", "x".repeat(200));
        let s = shown(&long);
        assert!(!s.contains('\n'));
        assert!(s.chars().count() < 90, "{s}");
        assert!(s.contains('…'));
    }

    #[test]
    fn results_are_read_within_a_limit() {
        assert_eq!(results_limit(10, 0), 10 + 64 * 1024);
        assert_eq!(results_limit(usize::MAX, 5), 1 << 30);
    }
}
