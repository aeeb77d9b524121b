//! The report of one review as a JSON Schema (2020-12) document (`speed
//! schema report`): each entry of `speed review --json`'s `reviews`, of
//! the report files under `.speed/reviews/` and of `speed show --format
//! json`. It names the keys whose meaning is fixed; more keys may be
//! added, and none of these changes meaning.

use serde_json::{Value, json};

fn string() -> Value {
    json!({"type": "string"})
}

fn nullable_string() -> Value {
    json!({"type": ["string", "null"]})
}

fn count() -> Value {
    json!({"type": "integer", "minimum": 0})
}

fn nullable_count() -> Value {
    json!({"type": ["integer", "null"], "minimum": 0})
}

/// What a prompt showed of the diff: the review's over all its parts, or
/// the guardian's. Files whole, in part (in files_shown and files_unseen
/// both) and left out add up to files_total less files_by_name.
fn coverage() -> Value {
    json!({
        "type": "object",
        "properties": {
            "files_total": count(),
            "files_shown": {"type": "integer", "minimum": 0, "description": "files whose changes the model saw, whole or in part"},
            "files_by_name": {"type": "integer", "minimum": 0, "description": "lockfiles, generated, vendored and binary files: named, content not shown"},
            "files_unseen": {"type": "integer", "minimum": 0, "description": "files with changes left out for budget, whole or some hunks"},
            "files_omitted": objects(json!({"path": string(), "reason": string()}), &["path"]),
            "lines_total": count(),
            "lines_shown": count(),
            "lines_unseen": count()
        }
    })
}

/// The files one part's prompt showed, each whole or some of its hunks.
fn shown_files() -> Value {
    objects(
        json!({
            "path": string(),
            "whole": {"type": "boolean"},
            "first_hunk": count(),
            "last_hunk": count(),
            "hunks": count()
        }),
        &["path", "whole"],
    )
}

fn objects(properties: Value, required: &[&str]) -> Value {
    json!({"type": "array", "items": {"type": "object", "required": required, "properties": properties}})
}

/// The reconcile turn of an answer that contradicted itself (absent when
/// none was asked).
fn reconcile() -> Value {
    let verdict = json!({"enum": ["approve", "request_changes"]});
    json!({
        "type": "object",
        "required": ["reason", "first_verdict", "first_scores", "turn", "verdict"],
        "properties": {
            "reason": {"enum": ["approval_under_minimum", "nothing_blocking"]},
            "first_verdict": verdict,
            "first_scores": {"type": "object", "additionalProperties": count()},
            "first_overall": nullable_count(),
            "turn": string(),
            "verdict": {"enum": ["approve", "request_changes", null]},
            "error": nullable_string()
        }
    })
}

/// The report's schema.
pub fn document() -> Value {
    let mut properties = serde_json::Map::new();
    let verdict = json!({"enum": ["approve", "request_changes", "checks_passed", null]});
    properties.insert("task_id".to_string(), nullable_string());
    properties.insert("feature".to_string(), nullable_string());
    properties.insert("branch".to_string(), string());
    properties.insert("title".to_string(), nullable_string());
    properties.insert("base_commit".to_string(), string());
    properties.insert("head_commit".to_string(), string());
    properties.insert("base_resolved_by".to_string(), string());
    properties.insert("verdict".to_string(), verdict);
    properties.insert(
        "model_verdict".to_string(),
        json!({"enum": ["approve", "request_changes", null]}),
    );
    properties.insert(
        "overrules".to_string(),
        objects(
            json!({"rule": string(), "reason": string()}),
            &["rule", "reason"],
        ),
    );
    properties.insert(
        "scores".to_string(),
        json!({
            "type": ["object", "null"],
            "properties": {
                "dimensions": {
                    "type": "object",
                    "additionalProperties": {
                        "type": "object",
                        "required": ["score"],
                        "properties": {
                            "score": {"type": "integer", "minimum": 0, "maximum": 100},
                            "weight": count(),
                            "min_score": nullable_count(),
                            "passed": {"type": "boolean"},
                            "reason": string()
                        }
                    }
                },
                "overall": nullable_count(),
                "pass_score": count(),
                "pass_criteria_met": {"type": "object", "additionalProperties": {"type": "boolean"}}
            }
        }),
    );
    properties.insert("review".to_string(), json!({
                "type": ["object", "null"],
                "description": "The model's verdict as validated (`speed schema verdict`); null when no model answered"
            }));
    properties.insert(
        "quotes".to_string(),
        objects(
            json!({
                "spec_quote": string(),
                "found": {"type": "boolean"},
                "section": nullable_string(),
                "line": nullable_count()
            }),
            &["spec_quote", "found"],
        ),
    );
    properties.insert(
        "evidence".to_string(),
        objects(
            json!({
                "ref": string(),
                "found": {"type": "boolean"},
                "in_diff": {"type": "boolean"}
            }),
            &["ref", "found"],
        ),
    );
    properties.insert(
        "checks".to_string(),
        objects(
            json!({
                "check": string(),
                "severity": {"enum": ["critical", "major", "minor", "nit"]},
                "file": nullable_string(),
                "line": nullable_count(),
                "message": string()
            }),
            &["check", "severity", "message"],
        ),
    );
    properties.insert(
        "checks_run".to_string(),
        objects(
            json!({
                "name": string(),
                "outcome": {"enum": ["passed", "failed", "timed_out", "skipped"]},
                "duration_ms": count(),
                "findings": count(),
                "reason": nullable_string(),
                "changed": {"type": "array", "items": string(), "description": "the files of its checkout the command changed (check_modified_checkout)"}
            }),
            &["name", "outcome", "duration_ms", "findings", "reason"],
        ),
    );
    properties.insert(
        "redactions".to_string(),
        objects(
            json!({"rule": string(), "file": nullable_string(), "line": nullable_count()}),
            &["rule"],
        ),
    );
    properties.insert(
        "guardian".to_string(),
        json!({
            "type": "object",
            "required": ["status"],
            "properties": {
                "status": {"enum": ["aligned", "flagged", "rejected", "skipped", "unavailable", "not_run"], "description": "not_run: the review ended before an approval the guardian could check"},
                "summary": nullable_string(),
                "flags": {"type": "array"},
                "coverage": {
                    "description": "What the guardian's prompt showed of the diff (within guardian.token_budget); absent when the guardian gave no answer",
                    "allOf": [coverage()]
                }
            }
        }),
    );
    properties.insert("impact".to_string(), json!({"type": "array", "description": "Each changed symbol, who depends on it, and its radius"}));
    properties.insert("coverage".to_string(), {
        let mut c = coverage();
        c["description"] =
            json!("What the review's prompts showed of the diff, over all its parts");
        c["properties"]["parts"] = count();
        c["properties"]["max_parts"] = count();
        c["properties"]["incremental"] = json!({"type": "boolean"});
        c
    });
    properties.insert(
        "hashes".to_string(),
        json!({
            "type": "object",
            "properties": {
                "diff": {"type": ["string", "null"], "pattern": "^sha256:[0-9a-f]{64}$"},
                "spec": {"type": ["string", "null"], "pattern": "^sha256:[0-9a-f]{64}$"},
                "prompt": {"type": ["string", "null"], "pattern": "^sha256:[0-9a-f]{64}$"}
            }
        }),
    );
    properties.insert("model".to_string(), json!({"type": "object", "properties": {"provider": nullable_string(), "name": nullable_string()}}));
    properties.insert(
        "tokens".to_string(),
        json!({
            "type": "object",
            "properties": {
                "prompt": nullable_count(),
                "completion": nullable_count(),
                "budget": nullable_count(),
                "cache_read": nullable_count(),
                "cache_write": nullable_count()
            }
        }),
    );
    properties.insert("cost".to_string(), json!({
                "type": ["object", "null"],
                "properties": {"input": {"type": "number"}, "output": {"type": "number"}, "total": {"type": "number"}}
            }));
    properties.insert("duration_ms".to_string(), count());
    properties.insert("error".to_string(), nullable_string());
    properties.insert("feedback".to_string(), nullable_string());
    properties.insert(
        "notices".to_string(),
        json!({"type": "array", "items": string()}),
    );
    properties.insert(
        "specs".to_string(),
        json!({"type": "array", "items": string()}),
    );
    properties.insert(
        "parts".to_string(),
        objects(
            json!({
                "index": count(),
                "tokens": count(),
                "files": count(),
                "status": {"enum": ["answered", "failed"]},
                "error": nullable_string(),
                "review": {"type": ["object", "null"]},
                "reconcile": reconcile(),
                "shown": shown_files()
            }),
            &["index", "status"],
        ),
    );
    properties.insert("reconcile".to_string(), reconcile());
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "speed: the report of one review",
        "description": "One review as speed reports it: an entry of `speed review --json`'s `reviews`, a report file under .speed/reviews/ (which also keeps the prompt and the raw answers), and `speed show --format json`. verdict is speed's decision; model_verdict the model's; overrules say why speed decided otherwise. A review that could not be made has error set. More keys may be added; none of these changes meaning.",
        "type": "object",
        "required": [
            "task_id", "feature", "branch", "base_commit", "head_commit", "verdict",
            "model_verdict", "overrules", "review", "quotes", "evidence", "checks",
            "redactions", "guardian", "impact", "coverage", "hashes", "model", "tokens",
            "duration_ms", "error"
        ],
        "properties": properties
    })
}
