//! The answers a model gives, as JSON Schema (2020-12) documents for
//! people and tools (`speed schema verdict`, `speed schema guardian`): what
//! `validate` accepts, in the spelling speed asks for. (The schemas sent to
//! a model with structured output are `schema`'s strict-mode subset.)
//! speed reads a little more than these say: enum values in any case and
//! with spaces or hyphens for underscores (`"Request Changes"`), and a
//! line number written as a string.

use serde_json::{Value, json};

use super::schema::{
    CriterionStatus, GuardianStatus, Kind, PreviousStatus, RejectionKind, Severity,
};
use super::validate::{MAX_LIST_ITEMS, MAX_TEXT_CHARS};

pub const DRAFT: &str = "https://json-schema.org/draft/2020-12/schema";

fn names<T: Copy>(all: &[T], name: fn(T) -> &'static str) -> Vec<&'static str> {
    all.iter().map(|v| name(*v)).collect()
}

fn text(description: &str) -> Value {
    described(
        json!({"type": "string", "maxLength": MAX_TEXT_CHARS}),
        description,
    )
}

fn optional_text(description: &str) -> Value {
    described(
        json!({"type": ["string", "null"], "maxLength": MAX_TEXT_CHARS}),
        description,
    )
}

fn described(mut schema: Value, description: &str) -> Value {
    if !description.is_empty() {
        schema["description"] = json!(description);
    }
    schema
}

fn list(items: Value, description: &str) -> Value {
    described(
        json!({"type": ["array", "null"], "maxItems": MAX_LIST_ITEMS, "items": items}),
        description,
    )
}

fn required_list(items: Value, description: &str) -> Value {
    described(
        json!({"type": "array", "maxItems": MAX_LIST_ITEMS, "items": items}),
        description,
    )
}

/// A line: an integer, a range as a string (`"42-50"`), or null.
fn line() -> Value {
    json!({
        "description": "The line in the file at the head commit: a number, a range such as \"42-50\", or null",
        "anyOf": [
            {"type": "integer", "minimum": 0},
            {"type": "string", "pattern": "^\\s*[0-9]+\\s*((-|\u{2013}|\\.\\.)\\s*[0-9]+\\s*)?$"},
            {"type": "string", "pattern": "^\\s*$"},
            {"type": "null"}
        ]
    })
}

/// The reviewer's answer to a review (a task, a branch or a defect fix).
pub fn verdict_document() -> Value {
    let severity = json!({"enum": names(&Severity::ALL, Severity::as_str)});
    json!({
        "$schema": DRAFT,
        "title": "speed: the reviewer's verdict",
        "description": "The JSON object a model answers a review with. speed, not the model, decides the final verdict from it: every spec_quote is looked up in the spec sent, every file:line in the diff and the files at the head commit. Keys speed does not know are ignored. The prompt of a review asks for exactly what it needs: the dimensions to rate, previous_findings on a re-review, defect_scope_check and scope_violations on a defect fix.",
        "type": "object",
        "required": ["verdict", "expectations", "criteria", "spec_verification", "issues"],
        "properties": {
            "verdict": {"enum": names(&Kind::ALL, Kind::as_str)},
            "expectations": text("What the spec says this change should do, written before reading the diff"),
            "criteria": required_list(json!({
                "type": "object",
                "required": ["id", "status"],
                "properties": {
                    "id": {"type": "string", "minLength": 1, "pattern": "\\S", "description": "The criterion's id as the prompt lists it: AC-1, AC-2, …"},
                    "status": {"enum": names(&CriterionStatus::ALL, CriterionStatus::as_str)},
                    "evidence": optional_text("file:line, or why it cannot be verified")
                }
            }), "Every acceptance criterion of the prompt, rated once"),
            "spec_verification": required_list(json!({
                "type": "object",
                "required": ["spec_quote", "satisfied"],
                "properties": {
                    "spec_quote": {"type": "string", "minLength": 1, "pattern": "\\S", "maxLength": MAX_TEXT_CHARS, "description": "Exact text copied from the spec"},
                    "spec_section": optional_text("The section's heading or heading path"),
                    "satisfied": {"type": "boolean"},
                    "evidence": optional_text("file:line"),
                    "notes": optional_text("")
                }
            }), "The spec requirements this change is judged against, each quoted"),
            "missing_from_spec": list(json!({
                "type": "object",
                "properties": {
                    "spec_quote": optional_text("Exact text copied from the spec"),
                    "description": optional_text("What is not implemented")
                }
            }), "Requirements of the spec the change does not implement"),
            "out_of_scope": list(json!({
                "type": "object",
                "properties": {
                    "file": optional_text(""),
                    "line": line(),
                    "description": optional_text("Code no spec line asks for")
                }
            }), "Code no spec line asks for"),
            "issues": required_list(json!({
                "type": "object",
                "required": ["severity", "message"],
                "properties": {
                    "severity": severity,
                    "file": optional_text(""),
                    "line": line(),
                    "message": {"type": "string", "minLength": 1, "pattern": "\\S", "maxLength": MAX_TEXT_CHARS},
                    "suggestion": optional_text(""),
                    "dimension": optional_text("The quality dimension the issue bears on")
                }
            }), "Problems found; critical and major ones block an approval"),
            "strengths": list(json!({"type": "string", "maxLength": MAX_TEXT_CHARS}), ""),
            "dimensions": {
                "type": ["object", "null"],
                "maxProperties": MAX_LIST_ITEMS,
                "description": "A score for every quality dimension the prompt asks for, by name (requirement_adherence, code_quality, … as configured)",
                "propertyNames": {"minLength": 1, "maxLength": 100, "pattern": "\\S"},
                "additionalProperties": {"$ref": "#/$defs/rating"}
            },
            "rejection": {
                "description": "With request_changes: whether the implementation or the task's plan must change; null with approve",
                "anyOf": [
                    {
                        "type": "object",
                        "required": ["kind"],
                        "properties": {
                            "kind": {"enum": names(&RejectionKind::ALL, RejectionKind::as_str)},
                            "reason": optional_text("")
                        }
                    },
                    {"type": "null"}
                ]
            },
            "previous_findings": list(json!({
                "type": "object",
                "required": ["id", "status", "evidence"],
                "properties": {
                    "id": {"type": "string", "minLength": 1, "pattern": "\\S", "description": "PF-1, PF-2, … as the prompt lists them"},
                    "status": {"enum": names(&PreviousStatus::ALL, PreviousStatus::as_str)},
                    "evidence": {"type": "string", "minLength": 1, "pattern": "\\S", "maxLength": MAX_TEXT_CHARS}
                }
            }), "A re-review: each previous finding of the prompt, rated once"),
            "defect_scope_check": {
                "description": "A defect-fix review: speed's scope and size questions, answered",
                "anyOf": [
                    {
                        "type": "object",
                        "required": ["scope_ok", "large_diff"],
                        "properties": {
                            "scope_ok": {"type": "boolean"},
                            "large_diff": {"type": "boolean"}
                        }
                    },
                    {"type": "null"}
                ]
            },
            "scope_violations": list(json!({
                "type": "object",
                "properties": {
                    "file": optional_text(""),
                    "description": optional_text("")
                }
            }), "A defect-fix review: changed files outside the triage's affected_files")
        },
        "$defs": {
            "rating": {
                "type": "object",
                "required": ["score"],
                "properties": {
                    "score": {"type": "integer", "minimum": 0, "maximum": 100},
                    "reason": optional_text("One line")
                }
            }
        }
    })
}

/// The guardian's answer.
pub fn guardian_document() -> Value {
    json!({
        "$schema": DRAFT,
        "title": "speed: the guardian's answer",
        "description": "After an approval, the guardian says whether the change fits the product vision. rejected turns the approval into request_changes; flagged keeps it and shows the flags.",
        "type": "object",
        "required": ["status", "summary"],
        "properties": {
            "status": {"enum": names(&GuardianStatus::ALL, GuardianStatus::as_str)},
            "summary": text(""),
            "flags": list(json!({
                "type": "object",
                "required": ["severity", "description"],
                "properties": {
                    "severity": {"enum": names(&Severity::ALL, Severity::as_str)},
                    "description": {"type": "string", "minLength": 1, "pattern": "\\S", "maxLength": MAX_TEXT_CHARS},
                    "spec_reference": optional_text("")
                }
            }), "")
        }
    })
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use serde_json::{Value, json};

    use super::{guardian_document, verdict_document};
    use crate::verdict::{extract, extract_with_key, validate, validate_guardian};

    fn validator(schema: Value) -> (boon::Schemas, boon::SchemaIndex) {
        let mut schemas = boon::Schemas::new();
        let mut compiler = boon::Compiler::new();
        compiler
            .add_resource("answer.json", schema)
            .expect("a valid 2020-12 schema");
        let index = compiler.compile("answer.json", &mut schemas).unwrap();
        (schemas, index)
    }

    /// Answers speed reads although the schema, which states the spelling
    /// speed asks for, does not: enum values in another case or with
    /// spaces (`"Approve"`, `"request changes"`).
    const LOOSER_THAN_THE_SCHEMA: &[&str] = &["approve-loose-spelling"];

    /// Answers speed refuses for what no schema can say: a dimension rated
    /// twice under two spellings.
    const STRICTER_THAN_THE_SCHEMA: &[&str] = &[];

    /// Every answer of the corpus (`fixtures/answers/`) that is one JSON
    /// object: the schema accepts what speed's validation accepts and
    /// refuses what it refuses, but for the cases named above.
    #[test]
    fn the_schemas_agree_with_speed_on_the_corpus_of_real_answers() {
        let (review_schemas, review) = validator(verdict_document());
        let (guardian_schemas, guardian) = validator(guardian_document());
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/answers");
        let mut disagreements = Vec::new();
        let mut compared = 0;
        let mut entries: Vec<_> = std::fs::read_dir(&dir).unwrap().flatten().collect();
        entries.sort_by_key(|e| e.file_name());
        for entry in entries {
            let name = entry.file_name().to_string_lossy().into_owned();
            let Some(name) = name.strip_suffix(".txt") else {
                continue;
            };
            let text = std::fs::read_to_string(entry.path()).unwrap();
            let Some((head, answer)) = text.split_once("\n---\n") else {
                continue;
            };
            let is_guardian = head.lines().any(|l| l == "answer: guardian");
            let value = if is_guardian {
                extract_with_key(answer, "status")
            } else {
                extract(answer)
            };
            // Text that holds no single object is for extraction to judge.
            let Ok(value) = value else { continue };
            compared += 1;
            let (speed_ok, schema_ok) = if is_guardian {
                (
                    validate_guardian(&value).is_ok(),
                    guardian_schemas.validate(&value, guardian).is_ok(),
                )
            } else {
                (
                    validate(&value).is_ok(),
                    review_schemas.validate(&value, review).is_ok(),
                )
            };
            let excused = if speed_ok {
                LOOSER_THAN_THE_SCHEMA.contains(&name)
            } else {
                STRICTER_THAN_THE_SCHEMA.contains(&name)
            };
            if excused && speed_ok == schema_ok {
                disagreements.push(format!(
                    "{name}: excused above, but the schema agrees with speed"
                ));
            }
            if speed_ok != schema_ok && !excused {
                disagreements.push(format!(
                    "{name}: speed {}, the schema {}",
                    if speed_ok { "accepts" } else { "refuses" },
                    if schema_ok { "accepts" } else { "refuses" }
                ));
            }
        }
        assert!(compared >= 50, "only {compared} answers compared");
        assert!(disagreements.is_empty(), "{}", disagreements.join("\n"));
    }

    #[test]
    fn the_schema_refuses_what_speed_refuses_in_each_field() {
        let (schemas, index) = validator(verdict_document());
        let ok = json!({
            "verdict": "approve", "expectations": "x", "criteria": [], "spec_verification": [],
            "issues": [{"severity": "minor", "file": "a.rs", "line": "42-50", "message": "m"}],
            "dimensions": {"code_quality": {"score": 80, "reason": "r"}}
        });
        assert!(validate(&ok).is_ok());
        assert!(schemas.validate(&ok, index).is_ok());
        for (pointer, bad) in [
            ("/verdict", json!("maybe")),
            ("/criteria", json!("AC-1 met")),
            ("/issues/0/severity", json!("blocker")),
            ("/issues/0/line", json!("line 4")),
            ("/issues/0/message", json!(" ")),
            ("/dimensions/code_quality/score", json!(101)),
            ("/dimensions/code_quality/score", json!("80")),
            ("/rejection", json!("plan")),
        ] {
            let mut answer = ok.clone();
            if answer.pointer(pointer).is_none() {
                answer["rejection"] = Value::Null;
            }
            *answer.pointer_mut(pointer).unwrap() = bad.clone();
            assert!(
                validate(&answer).is_err(),
                "speed accepts {pointer} = {bad}"
            );
            assert!(
                schemas.validate(&answer, index).is_err(),
                "the schema accepts {pointer} = {bad}"
            );
        }
        let mut missing = ok.clone();
        missing.as_object_mut().unwrap().remove("spec_verification");
        assert!(validate(&missing).is_err() && schemas.validate(&missing, index).is_err());
    }
}
