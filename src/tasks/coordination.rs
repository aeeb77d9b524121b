//! Coordination requirements (seed 001's "Coordination Requirements"): the
//! function profiles, shared interfaces, directory structure and prohibited
//! changes that tasks of one feature must respect together. They come from
//! a task's own `coordination` field and from its feature's
//! `coordination.json` (in either layout), and a review holds them all.
//!
//! Parsed strictly: a wrong type is an error naming the file and the field,
//! never a requirement silently dropped. Unknown keys are the
//! orchestrator's and are left alone.

use std::path::Path;

use serde_json::{Map, Value};

use super::Error;

/// More entries than this in one list is not a plan a reviewer can hold.
const MAX_ENTRIES: usize = 500;
/// The longest text of one entry, in characters.
const MAX_TEXT: usize = 2_000;
/// An arity above this is not a function's.
const MAX_ARITY: u64 = 255;

/// A function the plan fixes: its name and how many parameters it takes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FunctionProfile {
    /// `name`, or `Type::name` / `Class.name` for a method.
    pub name: String,
    /// Parameters, without `self` (Rust) or `self`/`cls` (Python).
    pub arity: u32,
    /// Where it lives, relative to the repository root.
    pub file: Option<String>,
    pub intent: String,
}

/// A name other tasks rely on: it must not be removed or renamed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SharedInterface {
    pub name: String,
    pub file: Option<String>,
}

/// Every coordination requirement a task is held to.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Coordination {
    pub function_profiles: Vec<FunctionProfile>,
    pub shared_interfaces: Vec<SharedInterface>,
    /// Globs (or folders) where files may be created.
    pub directory_structure: Vec<String>,
    /// Changes the plan forbids, in words: the model judges them.
    pub prohibited_changes: Vec<String>,
}

impl Coordination {
    pub fn is_empty(&self) -> bool {
        self.function_profiles.is_empty()
            && self.shared_interfaces.is_empty()
            && self.directory_structure.is_empty()
            && self.prohibited_changes.is_empty()
    }

    /// Parses `value` (a task's `coordination`, or a whole
    /// `coordination.json`); `field` prefixes the names in errors
    /// (`coordination` for a task's field, empty for a file).
    pub fn parse(value: &Value, path: &Path, field: &str) -> Result<Coordination, Error> {
        let at = |key: &str| {
            if field.is_empty() {
                key.to_string()
            } else {
                format!("{field}.{key}")
            }
        };
        let invalid = |key: String, expected: &str| Error::InvalidField {
            path: path.to_path_buf(),
            field: if key.is_empty() {
                "(top level)".to_string()
            } else {
                key
            },
            expected: expected.to_string(),
        };
        let Value::Object(object) = value else {
            return Err(invalid(
                field.to_string(),
                "an object of function_profiles, shared_interfaces, directory_structure and prohibited_changes",
            ));
        };
        let list = |key: &str| -> Result<&[Value], Error> {
            match object.get(key) {
                None | Some(Value::Null) => Ok(&[]),
                Some(Value::Array(items)) if items.len() <= MAX_ENTRIES => Ok(items),
                Some(Value::Array(_)) => Err(invalid(
                    at(key),
                    &format!("an array of at most {MAX_ENTRIES} entries"),
                )),
                Some(_) => Err(invalid(at(key), "an array")),
            }
        };
        let mut out = Coordination::default();
        for (i, item) in list("function_profiles")?.iter().enumerate() {
            let here = format!("{}[{i}]", at("function_profiles"));
            let entry = Entry::of(item, &here, path, "{name, arity, file, intent}")?;
            let arity = match entry.object.get("arity") {
                Some(Value::Number(n)) => n.as_u64().filter(|a| *a <= MAX_ARITY),
                _ => None,
            };
            out.function_profiles.push(FunctionProfile {
                name: entry.name()?,
                arity: arity.ok_or_else(|| {
                    invalid(
                        format!("{here}.arity"),
                        &format!("an integer from 0 to {MAX_ARITY}"),
                    )
                })? as u32,
                file: entry.optional("file")?,
                intent: entry.optional("intent")?.unwrap_or_default(),
            });
        }
        for (i, item) in list("shared_interfaces")?.iter().enumerate() {
            let here = format!("{}[{i}]", at("shared_interfaces"));
            let entry = Entry::of(item, &here, path, "{name, file}")?;
            out.shared_interfaces.push(SharedInterface {
                name: entry.name()?,
                file: entry.optional("file")?,
            });
        }
        for key in ["directory_structure", "prohibited_changes"] {
            let mut texts = Vec::new();
            for (i, item) in list(key)?.iter().enumerate() {
                match item {
                    Value::String(s) if !s.trim().is_empty() && s.chars().count() <= MAX_TEXT => {
                        texts.push(s.trim().to_string())
                    }
                    _ => {
                        return Err(invalid(
                            format!("{}[{i}]", at(key)),
                            &format!("a non-empty string of at most {MAX_TEXT} characters"),
                        ));
                    }
                }
            }
            match key {
                "directory_structure" => out.directory_structure = texts,
                _ => out.prohibited_changes = texts,
            }
        }
        Ok(out)
    }

    /// Adds what `other` requires that this does not already.
    pub fn extend(&mut self, other: Coordination) {
        fn add<T: PartialEq>(list: &mut Vec<T>, items: Vec<T>) {
            for item in items {
                if !list.contains(&item) {
                    list.push(item);
                }
            }
        }
        add(&mut self.function_profiles, other.function_profiles);
        add(&mut self.shared_interfaces, other.shared_interfaces);
        add(&mut self.directory_structure, other.directory_structure);
        add(&mut self.prohibited_changes, other.prohibited_changes);
    }

    /// The requirements as the reviewer reads them, one line each.
    pub fn lines(&self) -> Vec<String> {
        let mut out = Vec::new();
        for p in &self.function_profiles {
            let mut line = format!(
                "Coordination: function {} takes {} parameter{}",
                p.name,
                p.arity,
                if p.arity == 1 { "" } else { "s" }
            );
            if let Some(file) = &p.file {
                line.push_str(&format!(", in {file}"));
            }
            if !p.intent.trim().is_empty() {
                line.push_str(&format!(": {}", p.intent.trim()));
            }
            out.push(line);
        }
        for s in &self.shared_interfaces {
            out.push(match &s.file {
                Some(file) => format!(
                    "Coordination: shared interface {} ({file}) must not be removed or renamed",
                    s.name
                ),
                None => format!(
                    "Coordination: shared interface {} must not be removed or renamed",
                    s.name
                ),
            });
        }
        if !self.directory_structure.is_empty() {
            out.push(format!(
                "Coordination: new files only under {}",
                self.directory_structure.join(", ")
            ));
        }
        for p in &self.prohibited_changes {
            out.push(format!(
                "Coordination, prohibited change (rate it under coordination_compliance): {p}"
            ));
        }
        out
    }
}

/// One object entry of a list, with errors naming it.
struct Entry<'a> {
    object: &'a Map<String, Value>,
    here: &'a str,
    path: &'a Path,
}

impl<'a> Entry<'a> {
    fn of(item: &'a Value, here: &'a str, path: &'a Path, shape: &str) -> Result<Entry<'a>, Error> {
        match item {
            Value::Object(object) => Ok(Entry { object, here, path }),
            _ => Err(Error::InvalidField {
                path: path.to_path_buf(),
                field: here.to_string(),
                expected: format!("an object {shape}"),
            }),
        }
    }

    fn invalid(&self, key: &str, expected: &str) -> Error {
        Error::InvalidField {
            path: self.path.to_path_buf(),
            field: format!("{}.{key}", self.here),
            expected: expected.to_string(),
        }
    }

    /// A name: an identifier path, as code spells it.
    fn name(&self) -> Result<String, Error> {
        let expected = "a name (letters, digits, _, and :: or . between parts)";
        match self.object.get("name") {
            Some(Value::String(s)) if plausible_name(s.trim()) => Ok(s.trim().to_string()),
            _ => Err(self.invalid("name", expected)),
        }
    }

    fn optional(&self, key: &str) -> Result<Option<String>, Error> {
        match self.object.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) if s.trim().is_empty() => Ok(None),
            Some(Value::String(s)) if s.chars().count() <= MAX_TEXT => {
                Ok(Some(s.trim().to_string()))
            }
            Some(_) => {
                Err(self.invalid(key, &format!("a string of at most {MAX_TEXT} characters")))
            }
        }
    }
}

fn plausible_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 200
        && name
            .split("::")
            .flat_map(|part| part.split('.'))
            .all(|part| !part.is_empty() && part.chars().all(|c| c.is_alphanumeric() || c == '_'))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(value: Value) -> Result<Coordination, Error> {
        Coordination::parse(&value, Path::new(".speed/tasks/3.json"), "coordination")
    }

    #[test]
    fn reads_the_contract_example() {
        let c = parse(json!({
            "function_profiles": [{"name": "build_review_context", "arity": 3, "file": "src/review.py", "intent": "assemble"}],
            "shared_interfaces": [{"name": "ReviewReport", "file": "src/types.py"}],
            "directory_structure": ["src/review/**", "tests/**"],
            "prohibited_changes": ["Must not change the ticket state machine for non-reviewed tickets"],
            "x-owner": "planner"
        }))
        .unwrap();
        assert_eq!(c.function_profiles[0].arity, 3);
        assert_eq!(
            c.function_profiles[0].file.as_deref(),
            Some("src/review.py")
        );
        assert_eq!(c.shared_interfaces[0].name, "ReviewReport");
        assert_eq!(c.directory_structure, ["src/review/**", "tests/**"]);
        let lines = c.lines();
        assert_eq!(
            lines[0],
            "Coordination: function build_review_context takes 3 parameters, in src/review.py: assemble"
        );
        assert!(lines[3].contains("prohibited change"));
        assert!(!c.is_empty());
        assert!(parse(json!({})).unwrap().is_empty());
    }

    #[test]
    fn a_wrong_entry_is_an_error_naming_its_field() {
        let cases = [
            (
                json!({"function_profiles": [{"name": "f"}]}),
                "coordination.function_profiles[0].arity",
            ),
            (
                json!({"function_profiles": [{"name": "f", "arity": -1}]}),
                "coordination.function_profiles[0].arity",
            ),
            (
                json!({"function_profiles": [{"name": "f", "arity": "2"}]}),
                "coordination.function_profiles[0].arity",
            ),
            (
                json!({"function_profiles": ["f(a, b)"]}),
                "coordination.function_profiles[0]",
            ),
            (
                json!({"shared_interfaces": [{"name": "a b"}]}),
                "coordination.shared_interfaces[0].name",
            ),
            (
                json!({"directory_structure": "src/**"}),
                "coordination.directory_structure",
            ),
            (
                json!({"prohibited_changes": [""]}),
                "coordination.prohibited_changes[0]",
            ),
            (json!(["src/**"]), "coordination"),
        ];
        for (value, field) in cases {
            match parse(value.clone()) {
                Err(Error::InvalidField { field: f, .. }) => assert_eq!(f, field, "{value}"),
                other => panic!("{value}: {other:?}"),
            }
        }
        let many = json!({"prohibited_changes": vec!["x"; MAX_ENTRIES + 1]});
        assert!(parse(many).is_err());
    }

    #[test]
    fn extend_keeps_one_of_each() {
        let mut a = parse(json!({"directory_structure": ["src/**"]})).unwrap();
        let b = parse(json!({"directory_structure": ["src/**", "tests/**"],
            "shared_interfaces": [{"name": "Shelf::add"}]}))
        .unwrap();
        a.extend(b);
        assert_eq!(a.directory_structure, ["src/**", "tests/**"]);
        assert_eq!(a.shared_interfaces.len(), 1);
    }
}
