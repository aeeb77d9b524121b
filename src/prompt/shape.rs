//! The answer's shape as a prompt shows it: a JSON Schema drawn compactly,
//! as the object it describes with each value's type in its place
//! (`{"verdict": "approve"|"request_changes", "line": integer|null, …}`).
//! A model reads the shape as well as the schema and the prompt pays a
//! fifth of the tokens (the library task's schema: 1,900 tokens
//! pretty-printed, under 400 as a shape). The descriptions stay in the
//! schema a provider enforces; what they say, the instructions say once.
//! Answers are validated against speed's rules whatever the prompt showed
//! (`verdict::validate`), so the shape informs and never decides.
//!
//! Pure text: a schema in, its shape out. What it cannot draw (a schema
//! that is not JSON, a construct it does not know) is shown as it was
//! given, minified, so nothing a prompt needs is lost.

use serde_json::{Map, Value};

/// The shape of `schema` (JSON Schema text): one line per property of the
/// top-level object, then one line per definition it refers to. Text that
/// is not a JSON object is returned trimmed, as given.
pub fn shape(schema: &str) -> String {
    let Ok(value) = serde_json::from_str::<Value>(schema) else {
        return schema.trim().to_string();
    };
    let Some(root) = value.as_object() else {
        return schema.trim().to_string();
    };
    let defs = root
        .get("$defs")
        .or_else(|| root.get("definitions"))
        .and_then(Value::as_object);
    let mut used: Vec<String> = Vec::new();
    let mut out = match properties(root) {
        Some(props) if is_object(root) => {
            let lines: Vec<String> = props
                .iter()
                .map(|(key, value)| format!("{}: {}", quoted(key), draw(value, &mut used)))
                .collect();
            if lines.is_empty() {
                "{}".to_string()
            } else {
                format!("{{\n{}\n}}", lines.join(",\n"))
            }
        }
        _ => draw(&value, &mut used),
    };
    // Each definition once, after the object, in the order first used; a
    // definition may refer to another, drawn after it.
    let mut drawn = 0;
    while drawn < used.len() {
        let name = used[drawn].clone();
        drawn += 1;
        let Some(def) = defs.and_then(|d| d.get(&name)) else {
            continue;
        };
        let body = draw(def, &mut used);
        out.push_str(&format!("\n{name} is {body}"));
    }
    out
}

fn is_object(schema: &Map<String, Value>) -> bool {
    match schema.get("type") {
        Some(Value::String(t)) => t == "object",
        Some(_) => false,
        None => schema.contains_key("properties"),
    }
}

fn properties(schema: &Map<String, Value>) -> Option<&Map<String, Value>> {
    schema.get("properties").and_then(Value::as_object)
}

fn quoted(key: &str) -> String {
    serde_json::to_string(key).unwrap_or_else(|_| format!("\"{key}\""))
}

/// One schema as a shape on one line; the definitions it refers to are
/// added to `used`.
fn draw(schema: &Value, used: &mut Vec<String>) -> String {
    let Some(map) = schema.as_object() else {
        // `true` / `false` schemas, or anything else: as given.
        return minified(schema);
    };
    if let Some(Value::String(reference)) = map.get("$ref") {
        let name = reference
            .rsplit('/')
            .next()
            .unwrap_or(reference)
            .to_string();
        if !used.contains(&name) {
            used.push(name.clone());
        }
        return name;
    }
    if let Some(values) = map.get("enum").and_then(Value::as_array) {
        let mut words: Vec<String> = values.iter().map(minified).collect();
        if nullable(map) && !values.contains(&Value::Null) {
            words.push("null".to_string());
        }
        return words.join("|");
    }
    if let Some(value) = map.get("const") {
        return minified(value);
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(options) = map.get(key).and_then(Value::as_array) {
            let drawn: Vec<String> = options.iter().map(|o| draw(o, used)).collect();
            return drawn.join("|");
        }
    }
    let types: Vec<&str> = match map.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ if map.contains_key("properties") => vec!["object"],
        _ if map.contains_key("items") => vec!["array"],
        _ => Vec::new(),
    };
    if types.is_empty() {
        // No type: any value, or a construct not drawn here.
        return if map.keys().all(|k| k == "description" || k == "title") {
            "any".to_string()
        } else {
            minified(schema)
        };
    }
    types
        .iter()
        .map(|t| match *t {
            "object" => object(map, used),
            "array" => match map.get("items") {
                Some(items) => format!("[{}]", draw(items, used)),
                None => "[any]".to_string(),
            },
            other => other.to_string(),
        })
        .collect::<Vec<_>>()
        .join("|")
}

fn nullable(map: &Map<String, Value>) -> bool {
    match map.get("type") {
        Some(Value::Array(ts)) => ts.iter().any(|t| t == "null"),
        _ => false,
    }
}

fn object(map: &Map<String, Value>, used: &mut Vec<String>) -> String {
    match properties(map) {
        Some(props) if !props.is_empty() => {
            let fields: Vec<String> = props
                .iter()
                .map(|(key, value)| format!("{}: {}", quoted(key), draw(value, used)))
                .collect();
            format!("{{{}}}", fields.join(", "))
        }
        _ => match map.get("additionalProperties") {
            Some(Value::Object(_)) => {
                let value = draw(&map["additionalProperties"], used);
                format!("{{string: {value}}}")
            }
            _ => "object".to_string(),
        },
    }
}

fn minified(value: &Value) -> String {
    serde_json::to_string(value).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_construct_of_speeds_schemas_is_drawn_in_place() {
        let schema = json!({
            "type": "object",
            "properties": {
                "verdict": {"type": "string", "enum": ["approve", "request_changes"]},
                "expectations": {"type": "string", "description": "said in the instructions"},
                "criteria": {"type": "array", "items": {"type": "object", "properties": {
                    "id": {"type": "string"},
                    "line": {"type": ["integer", "null"]},
                    "met": {"type": "boolean"},
                }, "required": ["id", "line", "met"], "additionalProperties": false}},
                "strengths": {"type": "array", "items": {"type": "string"}},
                "rejection": {"anyOf": [
                    {"type": "object", "properties": {"kind": {"type": "string", "enum": ["plan"]}}},
                    {"type": "null"},
                ]},
                "dimensions": {"type": "object", "properties": {
                    "code_quality": {"$ref": "#/$defs/rating"},
                    "test_quality": {"$ref": "#/$defs/rating"},
                }},
            },
            "$defs": {"rating": {"type": "object", "properties": {
                "score": {"type": "integer"}, "reason": {"type": "string"},
            }}},
        });
        assert_eq!(
            shape(&schema.to_string()),
            "{\n\
             \"verdict\": \"approve\"|\"request_changes\",\n\
             \"expectations\": string,\n\
             \"criteria\": [{\"id\": string, \"line\": integer|null, \"met\": boolean}],\n\
             \"strengths\": [string],\n\
             \"rejection\": {\"kind\": \"plan\"}|null,\n\
             \"dimensions\": {\"code_quality\": rating, \"test_quality\": rating}\n\
             }\n\
             rating is {\"score\": integer, \"reason\": string}"
        );
    }

    #[test]
    fn what_it_cannot_draw_is_kept_as_given() {
        assert_eq!(shape("  not json  "), "not json");
        assert_eq!(shape("[1, 2]"), "[1, 2]");
        // A construct without a type is shown minified, not lost.
        let odd = json!({"type": "object", "properties": {"x": {"not": {"type": "string"}}}});
        assert_eq!(
            shape(&odd.to_string()),
            "{\n\"x\": {\"not\":{\"type\":\"string\"}}\n}"
        );
        let free = json!({"type": "object", "properties": {"x": {"description": "d"}}});
        assert_eq!(shape(&free.to_string()), "{\n\"x\": any\n}");
        let map = json!({"type": "object", "additionalProperties": {"type": "integer"}});
        assert_eq!(shape(&map.to_string()), "{string: integer}");
    }

    #[test]
    fn a_definition_is_drawn_once_even_when_it_refers_to_itself() {
        let schema = json!({
            "type": "object",
            "properties": {"a": {"$ref": "#/$defs/node"}, "b": {"$ref": "#/$defs/node"}},
            "$defs": {"node": {"type": "object", "properties": {
                "next": {"anyOf": [{"$ref": "#/$defs/node"}, {"type": "null"}]}}}},
        });
        let drawn = shape(&schema.to_string());
        assert_eq!(drawn.matches("node is").count(), 1, "{drawn}");
        assert!(drawn.ends_with("node is {\"next\": node|null}"), "{drawn}");
    }
}
