//! The task file as a JSON Schema (2020-12) document (`speed schema
//! task`): what `Task::parse` accepts, every dialect the orchestrator
//! writes included (criteria as an array of objects or strings, or one
//! string of lines; `depends_on` as one id or a list; notes as a string or
//! a list; spec references as objects or `path#Section` strings), and
//! every field speed writes back. Other fields are allowed: speed keeps
//! them as they are. What no schema can say: a task's `id` must be its
//! file's name.

use serde_json::{Value, json};

/// The statuses the orchestrator writes; speed reviews `done` tasks in
/// batch mode and keeps any other word as it is.
const STATUSES: &[&str] = &["pending", "running", "done", "failed", "blocked"];

fn nullable(schema: Value) -> Value {
    json!({"anyOf": [schema, {"type": "null"}]})
}

fn strings() -> Value {
    json!({"type": ["array", "null"], "items": {"type": "string"}})
}

fn text() -> Value {
    json!({"type": ["string", "null"]})
}

fn id() -> Value {
    json!({"type": ["string", "integer"]})
}

fn coordination() -> Value {
    let name = json!({
        "type": "string",
        "maxLength": 200,
        "pattern": "^\\s*[\\p{L}\\p{N}_]+((::|\\.)[\\p{L}\\p{N}_]+)*\\s*$",
        "description": "A name as code spells it: parts of letters, digits and _, joined by :: or ."
    });
    let optional_text = json!({"type": ["string", "null"], "maxLength": 2000});
    let texts = json!({
        "type": ["array", "null"],
        "maxItems": 500,
        "items": {"type": "string", "minLength": 1, "maxLength": 2000, "pattern": "\\S"}
    });
    json!({
        "type": ["object", "null"],
        "description": "Coordination requirements: function profiles, shared interfaces, where new files may go, prohibited changes",
        "properties": {
            "function_profiles": {
                "type": ["array", "null"],
                "maxItems": 500,
                "items": {
                    "type": "object",
                    "required": ["name", "arity"],
                    "properties": {
                        "name": name,
                        "arity": {"type": "integer", "minimum": 0, "maximum": 255},
                        "file": optional_text,
                        "intent": optional_text
                    }
                }
            },
            "shared_interfaces": {
                "type": ["array", "null"],
                "maxItems": 500,
                "items": {
                    "type": "object",
                    "required": ["name"],
                    "properties": {"name": name, "file": optional_text}
                }
            },
            "directory_structure": texts,
            "prohibited_changes": texts
        }
    })
}

/// The task file's schema.
pub fn document() -> Value {
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "speed: a task file",
        "description": "A task as people or an orchestrator write it, at .speed/tasks/<id>.json, .speed/features/<feature>/tasks/<id>.json or .speed/shared/features/<feature>/tasks/<id>.json. Every field is optional; a task's id is its file's name (10a.json holds task 10a). speed keeps every field it does not know, in order, when it writes the file back.",
        "type": "object",
        "properties": {
            "id": id(),
            "title": text(),
            "description": text(),
            "rationale": text(),
            "status": {
                "type": ["string", "null"],
                "description": "pending, running, done, failed or blocked; batch mode reviews done tasks",
                "examples": STATUSES
            },
            "branch": {"type": ["string", "null"], "description": "The task branch; speed/task-<id> when absent"},
            "base_branch": text(),
            "acceptance_criteria": {
                "description": "An array of {criterion, verify_by} (or of strings), or one string of lines: `- text [verify: test]`, `- [test] text`, `verify_by: test` on the line after a criterion. A criterion that starts with its own id ([AC-03]) keeps it.",
                "anyOf": [
                    {"type": "string"},
                    {"type": "null"},
                    {
                        "type": "array",
                        "items": {
                            "anyOf": [
                                {"type": "string"},
                                {
                                    "type": "object",
                                    "required": ["criterion"],
                                    "properties": {
                                        "criterion": {"type": "string"},
                                        "verify_by": {"type": ["string", "null"]},
                                        "id": {}
                                    }
                                }
                            ]
                        }
                    }
                ]
            },
            "files_touched": strings(),
            "files_to_create": strings(),
            "files_to_modify": strings(),
            "files_to_delete": strings(),
            "spec_references": {
                "type": ["array", "null"],
                "description": "The spec sections this task implements: {spec, section, requirement}, or \"path#Section\". spec is a path, or a kind (product, tech) meaning the feature's spec of that kind.",
                "items": {
                    "anyOf": [
                        {"type": "string"},
                        {
                            "type": "object",
                            "required": ["spec"],
                            "properties": {
                                "spec": {"type": "string"},
                                "section": text(),
                                "requirement": text()
                            }
                        }
                    ]
                }
            },
            "assumptions": strings(),
            "decisions": {"type": ["array", "string", "null"], "description": "What the developer decided: shown to the reviewer"},
            "concerns": {"type": ["array", "string", "null"], "description": "What the developer worried about: shown to the reviewer"},
            "depends_on": {
                "description": "Ids of the tasks this one builds on: one id, or a list",
                "anyOf": [id(), {"type": "null"}, {"type": "array", "items": id()}]
            },
            "gate_results": {
                "type": ["object", "null"],
                "description": "Automated check results, shown to the reviewer",
                "properties": {
                    "checks": {
                        "type": ["array", "null"],
                        "items": {
                            "type": "object",
                            "properties": {
                                "name": {"type": ["string", "boolean", "number", "null"]},
                                "status": {"type": ["string", "boolean", "number", "null"]},
                                "note": {"type": ["string", "boolean", "number", "null"]}
                            }
                        }
                    }
                }
            },
            "execution_base_commit": text(),
            "base_commit": text(),
            "retry_count": nullable(json!({"type": "integer", "minimum": 0, "maximum": 4294967295u64})),
            "coordination": coordination(),
            "review_verdict": {"type": ["string", "null"], "description": "Written by speed: approve or request_changes"},
            "review_feedback": {"description": "Written by speed (text); an orchestrator's own reviewer may have written an object"},
            "reviewed_at": {"type": ["string", "null"], "description": "Written by speed: RFC 3339"},
            "reviewed_diff": {"type": ["string", "null"], "description": "Written by speed: the hash of the diff an approval covers"},
            "reviewed_by": {"type": ["string", "null"], "description": "Written by speed"},
            "revision_count": nullable(json!({"type": "integer", "minimum": 0, "maximum": 4294967295u64})),
            "review_history": {"type": ["array", "null"], "description": "Written by speed: one entry per review, oldest first"}
        }
    })
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use serde_json::{Value, json};

    use super::document;
    use crate::tasks::Task;

    fn validator() -> (boon::Schemas, boon::SchemaIndex) {
        let mut schemas = boon::Schemas::new();
        let mut compiler = boon::Compiler::new();
        compiler
            .add_resource("task.json", document())
            .expect("a valid 2020-12 schema");
        let index = compiler.compile("task.json", &mut schemas).unwrap();
        (schemas, index)
    }

    /// Every task file of the fixtures: the orchestrator's layouts
    /// rewritten for the tests, and its real files as it committed them.
    fn fixture_tasks() -> Vec<PathBuf> {
        let mut out = Vec::new();
        let mut stack = vec![Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/tasks")];
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).unwrap().flatten() {
                let path = entry.path();
                if path.is_dir() {
                    stack.push(path);
                } else if path.extension().is_some_and(|e| e == "json")
                    && (path.parent().unwrap().ends_with("tasks")
                        || path.parent().unwrap().ends_with("real"))
                {
                    out.push(path);
                }
            }
        }
        out.sort();
        out
    }

    /// What speed itself says of a task file's text.
    fn parse(value: &Value) -> Result<Task, crate::tasks::Error> {
        let id = match &value["id"] {
            Value::String(id) => id.clone(),
            Value::Number(n) => n.to_string(),
            _ => "1".to_string(),
        };
        Task::parse(
            &PathBuf::from(format!("{id}.json")),
            None,
            &value.to_string(),
        )
    }

    #[test]
    fn every_task_file_speed_reads_is_valid_real_ones_included() {
        let (schemas, index) = validator();
        let files = fixture_tasks();
        let real = files
            .iter()
            .filter(|p| p.parent().unwrap().ends_with("real"))
            .count();
        assert!(files.len() >= 10 && real >= 3, "{files:?}");
        for path in files {
            let value: Value =
                serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
            parse(&value).unwrap_or_else(|e| panic!("speed refuses {}: {e}", path.display()));
            if let Err(err) = schemas.validate(&value, index) {
                panic!("{}: {err:#}", path.display());
            }
        }
    }

    #[test]
    fn every_dialect_is_accepted_by_both() {
        let (schemas, index) = validator();
        for task in [
            json!({"id": 3, "acceptance_criteria": ["- [test] Search is case-blind", "verify_by: test", {"criterion": "x", "verify_by": null}]}),
            json!({"id": "3", "depends_on": "2", "decisions": "one note", "concerns": [1, null, "x"]}),
            json!({"id": "3", "depends_on": 2, "spec_references": ["specs/product/shop.md#Cart", {"spec": "tech", "section": null}]}),
            json!({"id": "3", "gate_results": {"checks": [{"name": "tests", "status": true, "note": 3}], "scope": {}}}),
            json!({"id": "3", "review_feedback": {"verdict": "approve"}, "retry_count": null, "status": "in_review"}),
            json!({"id": "3", "coordination": {"function_profiles": [{"name": "Cart::add", "arity": 2}],
                   "shared_interfaces": [{"name": "cart.Cart"}], "directory_structure": ["src/**"]}}),
        ] {
            parse(&task).unwrap_or_else(|e| panic!("speed refuses {task}: {e}"));
            if let Err(err) = schemas.validate(&task, index) {
                panic!("{task}: {err:#}");
            }
        }
    }

    #[test]
    fn a_malformed_task_file_is_refused_by_both() {
        let (schemas, index) = validator();
        for task in [
            json!({"id": true}),
            json!({"id": "3", "acceptance_criteria": 42}),
            json!({"id": "3", "acceptance_criteria": [{"verify_by": "test"}]}),
            json!({"id": "3", "files_to_modify": "src/cart.rs"}),
            json!({"id": "3", "spec_references": [{"section": "Cart"}]}),
            json!({"id": "3", "spec_references": "specs/product/shop.md"}),
            json!({"id": "3", "depends_on": {"task": 2}}),
            json!({"id": "3", "retry_count": -1}),
            json!({"id": "3", "review_history": {"attempt": 1}}),
            json!({"id": "3", "gate_results": {"checks": [{"name": ["x"]}]}}),
            json!({"id": "3", "coordination": {"function_profiles": [{"name": "add"}]}}),
            json!({"id": "3", "coordination": {"shared_interfaces": [{"name": "not a name"}]}}),
            json!({"id": "3", "status": 3}),
            json!(["not", "an", "object"]),
        ] {
            assert!(parse(&task).is_err(), "speed reads {task}");
            assert!(
                schemas.validate(&task, index).is_err(),
                "the schema accepts {task}"
            );
        }
    }
}
