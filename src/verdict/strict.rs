//! A JSON value read without losing what a plain parse hides: an object
//! that holds one key twice keeps only the last value in `serde_json::Value`,
//! so `{"verdict": "request_changes", "verdict": "approve"}` would silently
//! approve. Here a key repeated with a different value is recorded as a
//! conflict with its path; a key repeated with the same value is harmless.
//! It only reads; deciding what a conflict means is `extract`'s job.

use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};

/// A parsed value and the keys it holds twice with different values.
pub(crate) struct Strict {
    pub(crate) value: Value,
    /// `(path, message)`, e.g. `("issues[0].severity", "…")`.
    pub(crate) conflicts: Vec<(String, String)>,
}

impl Strict {
    fn plain(value: Value) -> Strict {
        Strict {
            value,
            conflicts: Vec::new(),
        }
    }

    /// The conflicts as one line each: `path: message`.
    pub(crate) fn describe_conflicts(&self) -> Vec<String> {
        self.conflicts
            .iter()
            .map(|(path, message)| format!("{path}: {message}"))
            .collect()
    }
}

impl<'de> Deserialize<'de> for Strict {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Strict, D::Error> {
        deserializer.deserialize_any(StrictVisitor)
    }
}

struct StrictVisitor;

impl<'de> Visitor<'de> for StrictVisitor {
    type Value = Strict;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Strict, E> {
        Ok(Strict::plain(Value::Bool(v)))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Strict, E> {
        Ok(Strict::plain(Value::Number(v.into())))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Strict, E> {
        Ok(Strict::plain(Value::Number(v.into())))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Strict, E> {
        Ok(Strict::plain(
            Number::from_f64(v).map_or(Value::Null, Value::Number),
        ))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Strict, E> {
        Ok(Strict::plain(Value::String(v.to_string())))
    }

    fn visit_string<E>(self, v: String) -> Result<Strict, E> {
        Ok(Strict::plain(Value::String(v)))
    }

    fn visit_unit<E>(self) -> Result<Strict, E> {
        Ok(Strict::plain(Value::Null))
    }

    fn visit_none<E>(self) -> Result<Strict, E> {
        Ok(Strict::plain(Value::Null))
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Strict, D::Error> {
        Strict::deserialize(d)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Strict, A::Error> {
        let mut items = Vec::new();
        let mut conflicts = Vec::new();
        while let Some(item) = seq.next_element::<Strict>()? {
            let at = items.len();
            conflicts.extend(
                item.conflicts
                    .into_iter()
                    .map(|(path, m)| (format!("[{at}]{}", nested(&path)), m)),
            );
            items.push(item.value);
        }
        Ok(Strict {
            value: Value::Array(items),
            conflicts,
        })
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Strict, A::Error> {
        let mut object = Map::new();
        let mut conflicts = Vec::new();
        while let Some(key) = map.next_key::<String>()? {
            let item: Strict = map.next_value()?;
            conflicts.extend(
                item.conflicts
                    .into_iter()
                    .map(|(path, m)| (format!("{key}{}", nested(&path)), m)),
            );
            match object.get(&key) {
                Some(first) if *first != item.value => {
                    conflicts.push((
                        key.clone(),
                        format!(
                            "the key appears twice with different values ({} and {})",
                            brief(first),
                            brief(&item.value)
                        ),
                    ));
                }
                Some(_) => {}
                None => {
                    object.insert(key, item.value);
                }
            }
        }
        Ok(Strict {
            value: Value::Object(object),
            conflicts,
        })
    }
}

/// A child's path as it follows its parent's: `.key` or `[i]`.
fn nested(path: &str) -> String {
    if path.starts_with('[') {
        path.to_string()
    } else {
        format!(".{path}")
    }
}

fn brief(v: &Value) -> String {
    let s = v.to_string();
    if s.chars().count() > 40 {
        format!("{}…", s.chars().take(40).collect::<String>())
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn read(text: &str) -> Strict {
        serde_json::from_str(text).expect("valid JSON")
    }

    #[test]
    fn reads_like_a_plain_value() {
        let text = r#"{"a": [1, -2, 3.5, "x", null, true], "b": {"c": {}}}"#;
        let s = read(text);
        assert_eq!(s.value, serde_json::from_str::<Value>(text).unwrap());
        assert!(s.conflicts.is_empty());
    }

    #[test]
    fn a_key_repeated_with_another_value_is_a_conflict_with_its_path() {
        let s = read(
            r#"{"verdict": "request_changes", "issues": [{"severity": "major", "severity": "nit"}], "verdict": "approve"}"#,
        );
        assert_eq!(
            s.describe_conflicts(),
            [
                "issues[0].severity: the key appears twice with different values (\"major\" and \"nit\")",
                "verdict: the key appears twice with different values (\"request_changes\" and \"approve\")",
            ]
        );
        // The first value is kept; what matters is that it is not trusted.
        assert_eq!(s.value["verdict"], json!("request_changes"));
    }

    #[test]
    fn a_key_repeated_with_the_same_value_is_harmless() {
        let s = read(r#"{"verdict": "approve", "verdict": "approve", "x": {"a": 1, "a": 1}}"#);
        assert!(s.conflicts.is_empty());
        assert_eq!(s.value, json!({"verdict": "approve", "x": {"a": 1}}));
    }

    #[test]
    fn nested_arrays_give_index_paths() {
        let s = read(r#"[[{"k": 1, "k": 2}]]"#);
        assert_eq!(s.conflicts[0].0, "[0][0].k");
    }
}
