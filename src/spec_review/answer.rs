//! The model's answer to a spec review: `{verdict, scores, feedback}`,
//! found in what the model returned by the verdict part's extraction (prose,
//! fences, `<think>` blocks; a key held twice with different values is
//! ambiguous), validated strictly (every configured criterion an integer
//! from 0 to 100, feedback required with `needs_revision`, each `section`
//! a heading of the spec), and then decided by speed: a `pass` with a score
//! under its minimum, or despite a critical finding of speed's checks, is
//! `needs_revision`. Every problem names its path, for the one corrective
//! retry. Pure: text in, plain data out.

use serde::Serialize;
use serde_json::{Map, Value, json};

use super::checks::Facts;
use super::config::Criterion;
use crate::specs::{self, Document};
use crate::verdict::{self, Problem};

/// At most this many feedback items, and characters per text.
const MAX_FEEDBACK: usize = 50;
const MAX_TEXT_CHARS: usize = 2_000;
/// Headings listed when a section is not found.
const LISTED_HEADINGS: usize = 40;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Pass,
    NeedsRevision,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::NeedsRevision => "needs_revision",
        }
    }
}

/// One thing to change in the spec.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Feedback {
    /// The heading path of the section it names, as the spec has it.
    pub section: String,
    pub issue: String,
    pub suggestion: String,
}

impl Feedback {
    /// One line for the reviser, the prompt of the next review and people.
    pub fn line(&self) -> String {
        format!(
            "- {}: {} Suggestion: {}",
            self.section, self.issue, self.suggestion
        )
    }
}

/// A valid answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    pub verdict: Verdict,
    /// Every configured criterion, in the configuration's order.
    pub scores: Vec<(String, u8)>,
    pub feedback: Vec<Feedback>,
}

impl Answer {
    /// The scores as one JSON object, in the configuration's order.
    pub fn scores_json(&self) -> Value {
        scores_json(&self.scores)
    }
}

pub fn scores_json(scores: &[(String, u8)]) -> Value {
    Value::Object(
        scores
            .iter()
            .map(|(name, score)| (name.clone(), json!(score)))
            .collect(),
    )
}

/// A pass speed did not accept, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Overrule {
    pub rule: &'static str,
    pub reason: String,
}

/// speed's decision on a valid answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    pub verdict: Verdict,
    pub overrules: Vec<Overrule>,
    /// The model's feedback, and speed's own for each overrule.
    pub feedback: Vec<Feedback>,
}

/// Finds and validates the answer in `raw`.
pub fn parse(raw: &str, criteria: &[Criterion], spec: &Document) -> Result<Answer, verdict::Error> {
    let value = verdict::extract(raw)?;
    Ok(validate(&value, criteria, spec)?)
}

/// Checks an answer object; every problem is listed.
pub fn validate(
    value: &Value,
    criteria: &[Criterion],
    spec: &Document,
) -> Result<Answer, Vec<Problem>> {
    let mut problems = Vec::new();
    let mut problem = |path: &str, message: String| {
        problems.push(Problem {
            path: path.to_string(),
            message,
        })
    };
    let Some(obj) = value.as_object() else {
        problem(
            "(root)",
            format!("expected a JSON object, got {}", kind(value)),
        );
        return Err(problems);
    };
    let verdict = match obj.get("verdict") {
        Some(Value::String(s)) => match folded(s).as_str() {
            "pass" => Some(Verdict::Pass),
            "needsrevision" => Some(Verdict::NeedsRevision),
            _ => {
                problem(
                    "verdict",
                    format!("expected one of pass, needs_revision, got {:?}", clip(s)),
                );
                None
            }
        },
        Some(other) => {
            problem(
                "verdict",
                format!("expected one of pass, needs_revision, got {}", kind(other)),
            );
            None
        }
        None => {
            problem(
                "verdict",
                "is required (one of pass, needs_revision)".into(),
            );
            None
        }
    };
    let scores = scores(obj, criteria, &mut problem);
    let feedback = feedback(obj, spec, &mut problem);
    if verdict == Some(Verdict::NeedsRevision) && feedback.as_ref().is_some_and(Vec::is_empty) {
        problem(
            "feedback",
            "must not be empty when the verdict is needs_revision: say what to change".into(),
        );
    }
    match (verdict, scores, feedback) {
        (Some(verdict), Some(scores), Some(feedback)) if problems.is_empty() => Ok(Answer {
            verdict,
            scores,
            feedback,
        }),
        _ => Err(problems),
    }
}

fn scores(
    obj: &Map<String, Value>,
    criteria: &[Criterion],
    problem: &mut impl FnMut(&str, String),
) -> Option<Vec<(String, u8)>> {
    let wanted = || {
        criteria
            .iter()
            .map(|c| c.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let map = match obj.get("scores") {
        Some(Value::Object(map)) => map,
        Some(other) => {
            problem(
                "scores",
                format!(
                    "expected an object of integer scores ({}), got {}",
                    wanted(),
                    kind(other)
                ),
            );
            return None;
        }
        None => {
            let hint = if obj.contains_key("score") {
                ": the key is `scores`, not `score`"
            } else {
                ""
            };
            problem(
                "scores",
                format!(
                    "is required: an integer from 0 to 100 for each of {}{hint}",
                    wanted()
                ),
            );
            return None;
        }
    };
    let mut out = Vec::with_capacity(criteria.len());
    let mut ok = true;
    for c in criteria {
        let path = format!("scores.{}", c.name);
        match map.get(&c.name) {
            Some(Value::Number(n)) => match n.as_u64() {
                Some(score) if score <= 100 => out.push((c.name.clone(), score as u8)),
                _ => {
                    problem(&path, format!("expected an integer from 0 to 100, got {n}"));
                    ok = false;
                }
            },
            Some(other) => {
                problem(
                    &path,
                    format!("expected an integer from 0 to 100, got {}", kind(other)),
                );
                ok = false;
            }
            None => {
                problem(&path, "is required: an integer from 0 to 100".into());
                ok = false;
            }
        }
    }
    ok.then_some(out)
}

fn feedback(
    obj: &Map<String, Value>,
    spec: &Document,
    problem: &mut impl FnMut(&str, String),
) -> Option<Vec<Feedback>> {
    let items = match obj.get("feedback") {
        None | Some(Value::Null) => return Some(Vec::new()),
        Some(Value::Array(items)) => items,
        Some(other) => {
            problem(
                "feedback",
                format!("expected an array, got {}", kind(other)),
            );
            return None;
        }
    };
    if items.len() > MAX_FEEDBACK {
        problem(
            "feedback",
            format!(
                "has {} items; at most {MAX_FEEDBACK}: keep the most important",
                items.len()
            ),
        );
        return None;
    }
    let mut out = Vec::with_capacity(items.len());
    let mut ok = true;
    for (i, item) in items.iter().enumerate() {
        let at = format!("feedback[{i}]");
        let Some(item) = item.as_object() else {
            problem(&at, format!("expected an object, got {}", kind(item)));
            ok = false;
            continue;
        };
        let mut text = |key: &str| -> Option<String> {
            let path = format!("{at}.{key}");
            match item.get(key) {
                Some(Value::String(s)) if s.trim().is_empty() => {
                    problem(&path, "must not be empty".into());
                    None
                }
                Some(Value::String(s)) if s.chars().count() > MAX_TEXT_CHARS => {
                    problem(
                        &path,
                        format!("is longer than {MAX_TEXT_CHARS} characters: be brief"),
                    );
                    None
                }
                Some(Value::String(s)) => Some(s.trim().to_string()),
                Some(other) => {
                    problem(&path, format!("expected a string, got {}", kind(other)));
                    None
                }
                None => {
                    problem(&path, "is required".into());
                    None
                }
            }
        };
        let (section, issue, suggestion) = (text("section"), text("issue"), text("suggestion"));
        let section = section.and_then(|name| match specs::find_section(spec, &name) {
            Some(found) => Some(found.heading_path()),
            None => {
                problem(
                    &format!("{at}.section"),
                    format!(
                        "{:?} is not a heading of the spec; its headings: {}",
                        clip(&name),
                        headings(spec)
                    ),
                );
                None
            }
        });
        match (section, issue, suggestion) {
            (Some(section), Some(issue), Some(suggestion)) => out.push(Feedback {
                section,
                issue,
                suggestion,
            }),
            _ => ok = false,
        }
    }
    ok.then_some(out)
}

/// The spec's heading paths, for a problem message.
fn headings(spec: &Document) -> String {
    let all: Vec<String> = spec.sections.iter().map(|s| s.heading_path()).collect();
    let mut shown = all
        .iter()
        .take(LISTED_HEADINGS)
        .cloned()
        .collect::<Vec<_>>()
        .join("; ");
    if all.len() > LISTED_HEADINGS {
        shown.push_str(&format!("; …and {} more", all.len() - LISTED_HEADINGS));
    }
    shown
}

/// speed's decision: a pass with a score under its criterion's minimum, or
/// despite a critical finding, needs revision; each reason is an overrule
/// and an item of feedback for whoever revises.
pub fn decide(answer: &Answer, criteria: &[Criterion], facts: &Facts, spec: &Document) -> Decision {
    let mut feedback = answer.feedback.clone();
    let mut overrules = Vec::new();
    if answer.verdict == Verdict::Pass {
        let top = spec
            .sections
            .iter()
            .find(|s| s.level > 0)
            .or(spec.sections.first())
            .map_or_else(|| "(preamble)".to_string(), |s| s.heading_path());
        for (name, score) in &answer.scores {
            let Some(c) = criteria.iter().find(|c| &c.name == name) else {
                continue;
            };
            if *score < c.min_score {
                let reason = format!(
                    "{name} scored {score}, under its minimum of {}",
                    c.min_score
                );
                feedback.push(Feedback {
                    section: top.clone(),
                    issue: format!("speed: {reason}."),
                    suggestion: format!("Revise the spec for {name}: {}", c.description),
                });
                overrules.push(Overrule {
                    rule: "score_below_minimum",
                    reason,
                });
            }
        }
        for finding in facts
            .findings
            .iter()
            .filter(|f| f.severity == crate::severity::Severity::Critical)
        {
            let reason = format!("speed's check {} found: {}", finding.check, finding.message);
            feedback.push(Feedback {
                section: finding.section.clone().unwrap_or_else(|| top.clone()),
                issue: format!("speed: {reason}"),
                suggestion: "Remove it from the spec.".to_string(),
            });
            overrules.push(Overrule {
                rule: "critical_finding",
                reason,
            });
        }
    }
    let verdict = if overrules.is_empty() {
        answer.verdict
    } else {
        Verdict::NeedsRevision
    };
    Decision {
        verdict,
        overrules,
        feedback,
    }
}

/// The answer as a JSON Schema (2020-12) document for people and tools
/// (`speed schema spec-review`), with `criteria` (the configured ones) as
/// the scores asked: what `validate` accepts, in the spelling speed asks
/// for (it also reads the verdict in any case, with spaces or hyphens).
/// Whether each `section` is a heading of the spec is checked against the
/// spec itself, which no schema knows.
pub fn document(criteria: &[Criterion]) -> Value {
    let names: Vec<&str> = criteria.iter().map(|c| c.name.as_str()).collect();
    let properties: Map<String, Value> = criteria
        .iter()
        .map(|c| {
            (
                c.name.clone(),
                json!({"type": "integer", "minimum": 0, "maximum": 100, "description": c.description}),
            )
        })
        .collect();
    let text =
        json!({"type": "string", "minLength": 1, "pattern": "\\S", "maxLength": MAX_TEXT_CHARS});
    json!({
        "$schema": verdict::DRAFT,
        "title": "speed: the spec reviewer's answer",
        "description": "The JSON object a model answers `speed spec review` with. Every configured criterion is scored (the defaults are listed; [spec_review.criteria] replaces them); scores for other names are ignored. feedback must not be empty with needs_revision, and each section must be a heading (or heading path) of the spec.",
        "type": "object",
        "required": ["verdict", "scores"],
        "properties": {
            "verdict": {"enum": ["pass", "needs_revision"]},
            "scores": {
                "type": "object",
                "required": names,
                "properties": properties,
            },
            "feedback": {
                "type": ["array", "null"],
                "maxItems": MAX_FEEDBACK,
                "items": {
                    "type": "object",
                    "required": ["section", "issue", "suggestion"],
                    "properties": {
                        "section": {"type": "string", "minLength": 1, "pattern": "\\S", "maxLength": MAX_TEXT_CHARS, "description": "A heading of the spec, or its heading path (Design > Errors)"},
                        "issue": text,
                        "suggestion": text,
                    },
                },
            },
        },
        "if": {"properties": {"verdict": {"const": "needs_revision"}}, "required": ["verdict"]},
        "then": {"required": ["feedback"], "properties": {"feedback": {"type": "array", "minItems": 1}}},
    })
}

/// The answer's JSON Schema: for structured output, and in the prompt.
pub fn json_schema(criteria: &[Criterion]) -> Value {
    let names: Vec<&str> = criteria.iter().map(|c| c.name.as_str()).collect();
    let properties: Map<String, Value> = criteria
        .iter()
        .map(|c| {
            (
                c.name.clone(),
                json!({"type": "integer", "minimum": 0, "maximum": 100}),
            )
        })
        .collect();
    json!({
        "type": "object",
        "required": ["verdict", "scores", "feedback"],
        "additionalProperties": false,
        "properties": {
            "verdict": {"type": "string", "enum": ["pass", "needs_revision"]},
            "scores": {
                "type": "object",
                "required": names,
                "additionalProperties": false,
                "properties": properties,
            },
            "feedback": {
                "type": "array",
                "maxItems": MAX_FEEDBACK,
                "items": {
                    "type": "object",
                    "required": ["section", "issue", "suggestion"],
                    "additionalProperties": false,
                    "properties": {
                        "section": {"type": "string", "description": "a heading of the spec"},
                        "issue": {"type": "string"},
                        "suggestion": {"type": "string"},
                    },
                },
            },
        },
    })
}

/// "needs_revision", "Needs Revision" and "NEEDS-REVISION" meet as one.
fn folded(s: &str) -> String {
    s.chars()
        .filter(|c| !matches!(c, ' ' | '_' | '-'))
        .flat_map(char::to_lowercase)
        .collect()
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn clip(s: &str) -> String {
    match s.char_indices().nth(80) {
        Some((end, _)) => format!("{}…", &s[..end]),
        None => s.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec_review::config::default_criteria;
    use crate::specs::parse as parse_md;

    const SPEC: &str =
        "# Late fines\n\n## Charging\n\nA fine per day.\n\n## Cap\n\nAt most the price.\n";

    fn answer(verdict: &str, testability: Value, feedback: Value) -> String {
        json!({
            "verdict": verdict,
            "scores": {"completeness": 90, "consistency": 85, "testability": testability, "architecture": 80},
            "feedback": feedback,
        })
        .to_string()
    }

    fn problems(raw: &str) -> Vec<String> {
        let spec = parse_md("s.md", SPEC);
        match parse(raw, &default_criteria(70), &spec) {
            Err(verdict::Error::Invalid { problems }) => {
                problems.iter().map(ToString::to_string).collect()
            }
            other => panic!("expected problems, got {other:?}"),
        }
    }

    #[test]
    fn a_valid_answer_in_prose_with_sections_named_by_title() {
        let raw = format!(
            "Here is my review:\n```json\n{}\n```",
            answer(
                "Needs Revision",
                json!(60),
                json!([{"section": "cap", "issue": "No currency.", "suggestion": "Say cents."}])
            )
        );
        let spec = parse_md("s.md", SPEC);
        let got = parse(&raw, &default_criteria(70), &spec).unwrap();
        assert_eq!(got.verdict, Verdict::NeedsRevision);
        assert_eq!(got.scores[2], ("testability".to_string(), 60));
        assert_eq!(got.feedback[0].section, "Late fines > Cap");
        assert_eq!(
            got.scores_json().to_string(),
            r#"{"completeness":90,"consistency":85,"testability":60,"architecture":80}"#
        );
    }

    #[test]
    fn every_problem_is_named_by_its_path() {
        let raw = answer(
            "maybe",
            json!(85.5),
            json!([{"section": "Refunds", "issue": "", "suggestion": 3}]),
        );
        let got = problems(&raw);
        assert_eq!(got.len(), 5, "{got:?}");
        assert!(got[0].starts_with("verdict: expected one of pass, needs_revision, got \"maybe\""));
        assert!(
            got[1].starts_with("scores.testability: expected an integer from 0 to 100, got 85.5")
        );
        assert!(
            got.iter()
                .any(|p| p.starts_with("feedback[0].issue: must not be empty"))
        );
        assert!(
            got.iter()
                .any(|p| p.starts_with("feedback[0].suggestion: expected a string"))
        );
        assert!(
            got.iter().any(|p| p.contains("\"Refunds\" is not a heading of the spec; its headings: Late fines; Late fines > Charging; Late fines > Cap")),
            "{got:?}"
        );
    }

    #[test]
    fn missing_scores_ranges_and_feedback_rules() {
        let got = problems(&answer("needs_revision", json!(101), json!([])));
        assert_eq!(
            got,
            [
                "scores.testability: expected an integer from 0 to 100, got 101",
                "feedback: must not be empty when the verdict is needs_revision: say what to change"
            ]
        );
        let got = problems(r#"{"verdict": "pass", "score": {}, "feedback": []}"#);
        assert!(
            got[0].contains("the key is `scores`, not `score`"),
            "{got:?}"
        );
        let got = problems(r#"{"verdict": "pass", "scores": {"completeness": -1}}"#);
        assert_eq!(got.len(), 4, "{got:?}");
        assert!(
            got[1].starts_with("scores.consistency: is required"),
            "{got:?}"
        );
    }

    #[test]
    fn a_key_held_twice_is_ambiguous_not_the_last_one() {
        let raw =
            r#"{"verdict": "needs_revision", "verdict": "pass", "scores": {}, "feedback": []}"#;
        let spec = parse_md("s.md", SPEC);
        let err = parse(raw, &default_criteria(70), &spec).unwrap_err();
        assert!(matches!(err, verdict::Error::Ambiguous { .. }), "{err}");
    }

    #[test]
    fn speed_turns_a_pass_under_a_minimum_into_needs_revision() {
        let spec = parse_md("s.md", SPEC);
        let mut criteria = default_criteria(70);
        criteria[2].min_score = 80;
        let raw = answer("pass", json!(75), json!([]));
        let got = parse(&raw, &criteria, &spec).unwrap();
        let decision = decide(&got, &criteria, &Facts::default(), &spec);
        assert_eq!(decision.verdict, Verdict::NeedsRevision);
        assert_eq!(decision.overrules[0].rule, "score_below_minimum");
        assert_eq!(
            decision.overrules[0].reason,
            "testability scored 75, under its minimum of 80"
        );
        assert_eq!(decision.feedback[0].section, "Late fines");
        let passing = parse(&answer("pass", json!(80), json!([])), &criteria, &spec).unwrap();
        assert_eq!(
            decide(&passing, &criteria, &Facts::default(), &spec).verdict,
            Verdict::Pass
        );
    }

    #[test]
    fn the_schema_lists_every_criterion() {
        let schema = json_schema(&default_criteria(70));
        assert_eq!(
            schema["properties"]["scores"]["required"],
            json!(["completeness", "consistency", "testability", "architecture"])
        );
    }

    /// The seed asks for validation under 10 ms: this reports how long a
    /// normal answer takes (run with `--nocapture` to see it); it asserts
    /// nothing about time, since a shared machine's load decides that.
    #[test]
    fn validation_time_of_a_normal_answer_is_reported() {
        let spec = parse_md("s.md", SPEC);
        let criteria = default_criteria(70);
        let feedback: Vec<Value> = (0..8)
            .map(|i| json!({"section": if i % 2 == 0 { "Charging" } else { "Late fines > Cap" },
                            "issue": "The rule does not say what happens on the due date itself.",
                            "suggestion": "State whether the due date counts as a late day, with an example."}))
            .collect();
        let raw = format!(
            "<think>Reading the spec.</think>\nMy review:\n```json\n{}\n```\n",
            answer("needs_revision", json!(55), Value::Array(feedback))
        );
        let runs = 200;
        let start = std::time::Instant::now();
        for _ in 0..runs {
            parse(&raw, &criteria, &spec).unwrap();
        }
        let each = start.elapsed() / runs;
        eprintln!(
            "spec review answer ({} bytes, 8 feedback items): extracted and validated in {each:?} on average over {runs} runs",
            raw.len()
        );
    }
}
