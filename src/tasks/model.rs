//! The typed view of a task file, parsed leniently where the contract allows
//! two forms and strictly where a wrong type would change what is reviewed.
//! The whole file is kept in `Task::raw` so nothing unknown is lost on save.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::Error;
use super::coordination::Coordination;
use super::criteria::{self, Criterion};

/// A task's lifecycle state; unknown values are kept verbatim.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Status {
    Pending,
    Running,
    Done,
    Failed,
    Blocked,
    Other(String),
}

impl Status {
    pub fn parse(text: &str) -> Status {
        match text.trim().to_ascii_lowercase().as_str() {
            "pending" => Status::Pending,
            "running" => Status::Running,
            "done" => Status::Done,
            "failed" => Status::Failed,
            "blocked" => Status::Blocked,
            _ => Status::Other(text.to_string()),
        }
    }

    pub fn as_str(&self) -> &str {
        match self {
            Status::Pending => "pending",
            Status::Running => "running",
            Status::Done => "done",
            Status::Failed => "failed",
            Status::Blocked => "blocked",
            Status::Other(text) => text,
        }
    }
}

impl std::fmt::Display for Status {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The files a task declares it will touch.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Scope {
    pub touched: Vec<String>,
    pub create: Vec<String>,
    pub modify: Vec<String>,
    pub delete: Vec<String>,
}

impl Scope {
    pub fn is_empty(&self) -> bool {
        self.entries().next().is_none()
    }

    /// Whether `path` falls inside the declared scope: an exact path, a
    /// folder (`src/x` or `src/x/` covers everything below it), or a glob
    /// where `*` stays within one folder and `**` crosses folders.
    pub fn declares(&self, path: &str) -> bool {
        let path = normalize(path);
        self.entries().any(|entry| {
            let entry = normalize(entry);
            if entry.is_empty() {
                return false;
            }
            if entry.contains('*') {
                return glob(entry.as_bytes(), path.as_bytes());
            }
            let dir = entry.trim_end_matches('/');
            path == dir
                || path
                    .strip_prefix(dir)
                    .is_some_and(|rest| rest.starts_with('/'))
        })
    }

    fn entries(&self) -> impl Iterator<Item = &String> {
        self.touched
            .iter()
            .chain(&self.create)
            .chain(&self.modify)
            .chain(&self.delete)
    }
}

fn normalize(path: &str) -> &str {
    let path = path.trim();
    path.strip_prefix("./").unwrap_or(path)
}

/// A small glob: `**` matches anything, `*` anything but `/`, `?` one
/// character but `/`.
fn glob(pattern: &[u8], text: &[u8]) -> bool {
    match pattern {
        [] => text.is_empty(),
        [b'*', b'*', rest @ ..] => {
            // `**/` also matches zero folders.
            if rest
                .strip_prefix(b"/")
                .is_some_and(|after| glob(after, text))
            {
                return true;
            }
            (0..=text.len()).any(|i| glob(rest, &text[i..]))
        }
        [b'*', rest @ ..] => {
            for i in 0..=text.len() {
                if glob(rest, &text[i..]) {
                    return true;
                }
                if text.get(i) == Some(&b'/') {
                    break;
                }
            }
            false
        }
        [b'?', rest @ ..] => matches!(text, [c, tail @ ..] if *c != b'/' && glob(rest, tail)),
        [p, rest @ ..] => matches!(text, [c, tail @ ..] if c == p && glob(rest, tail)),
    }
}

/// A spec section a task says it implements.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpecReference {
    pub spec: String,
    pub section: Option<String>,
    pub requirement: Option<String>,
}

/// One automated check result from `gate_results.checks`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GateCheck {
    pub name: String,
    pub status: String,
    pub note: String,
}

/// Which of the orchestrator's layouts a task file lives in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// `.speed/tasks/<id>.json`: a project without features.
    Flat,
    /// `.speed/features/<feature>/tasks/<id>.json`: single-player.
    Features,
    /// `.speed/shared/features/<feature>/tasks/<id>.json`: multi-player,
    /// where every review also leaves an event for the team.
    Shared,
}

/// A task file: the typed fields speed uses, and the whole file in `raw`.
#[derive(Debug, Clone)]
pub struct Task {
    /// Always the file's name without `.json`: a file whose `id` says
    /// otherwise is refused, so a review can never land in another task.
    pub id: String,
    /// The feature folder the file lives in; None for `.speed/tasks/`.
    pub feature: Option<String>,
    pub layout: Layout,
    /// The file this task was read from, and the only one a review writes.
    pub path: PathBuf,
    pub title: String,
    pub description: String,
    pub rationale: String,
    pub status: Status,
    /// `branch`, else `speed/task-<id>`.
    pub branch: String,
    pub base_branch: Option<String>,
    pub criteria: Vec<Criterion>,
    pub scope: Scope,
    pub spec_references: Vec<SpecReference>,
    pub assumptions: Vec<String>,
    /// What the developer decided and worried about.
    pub decisions: Vec<String>,
    pub concerns: Vec<String>,
    /// Ids of the tasks this one builds on.
    pub depends_on: Vec<String>,
    pub gate_checks: Vec<GateCheck>,
    pub execution_base_commit: Option<String>,
    pub base_commit: Option<String>,
    pub review_verdict: Option<String>,
    /// The latest review's feedback, as text; None when empty.
    pub review_feedback: Option<String>,
    pub reviewed_at: Option<String>,
    pub reviewed_diff: Option<String>,
    /// Developer attempts after the first, counted by the orchestrator.
    pub retry_count: u32,
    /// Reviews that requested changes, counted by speed.
    pub revision_count: u32,
    /// Earlier reviews as speed recorded them, oldest first.
    pub review_history: Vec<Value>,
    /// The task's own `coordination` requirements; None when it has none.
    pub coordination: Option<Coordination>,
    /// The file began with a UTF-8 byte order mark, kept when it is saved.
    pub bom: bool,
    /// The whole file, field order kept, written back by `Store::save`.
    pub raw: Map<String, Value>,
}

impl Task {
    /// Parse a task file's text. `path` is where it lives (for errors and
    /// for saving); its stem is the id, and an `id` field must agree with it.
    /// A leading UTF-8 byte order mark is allowed.
    pub fn parse(path: &Path, feature: Option<&str>, text: &str) -> Result<Task, Error> {
        let (text, bom) = match text.strip_prefix('\u{feff}') {
            Some(rest) => (rest, true),
            None => (text, false),
        };
        let value: Value = serde_json::from_str(text).map_err(|e| malformed(path, &e))?;
        let Value::Object(raw) = value else {
            return Err(Error::InvalidField {
                path: path.to_path_buf(),
                field: "(top level)".to_string(),
                expected: "a JSON object".to_string(),
            });
        };
        let fields = Fields { path, raw: &raw };
        let stem = path
            .file_stem()
            .map(|stem| stem.to_string_lossy().into_owned())
            .unwrap_or_default();
        let id = match raw.get("id") {
            None | Some(Value::Null) => stem.clone(),
            Some(Value::String(id)) => id.clone(),
            Some(Value::Number(n)) if n.is_u64() || n.is_i64() => n.to_string(),
            Some(_) => return Err(fields.invalid("id", "a string or an integer")),
        };
        if id != stem {
            return Err(Error::IdMismatch {
                path: path.to_path_buf(),
                id,
            });
        }
        let branch = fields
            .string("branch")?
            .unwrap_or_else(|| format!("speed/task-{id}"));
        Ok(Task {
            feature: feature.map(str::to_string),
            layout: if feature.is_some() {
                Layout::Features
            } else {
                Layout::Flat
            },
            path: path.to_path_buf(),
            title: fields.string("title")?.unwrap_or_default(),
            description: fields.string("description")?.unwrap_or_default(),
            rationale: fields.string("rationale")?.unwrap_or_default(),
            status: fields
                .string("status")?
                .map_or(Status::Pending, |s| Status::parse(&s)),
            branch,
            base_branch: fields.string("base_branch")?,
            criteria: fields.criteria()?,
            scope: Scope {
                touched: fields.strings("files_touched")?,
                create: fields.strings("files_to_create")?,
                modify: fields.strings("files_to_modify")?,
                delete: fields.strings("files_to_delete")?,
            },
            spec_references: fields.spec_references()?,
            assumptions: fields.strings("assumptions")?,
            decisions: fields.notes("decisions")?,
            concerns: fields.notes("concerns")?,
            depends_on: fields.ids("depends_on")?,
            gate_checks: fields.gate_checks()?,
            execution_base_commit: fields.string("execution_base_commit")?,
            base_commit: fields.string("base_commit")?,
            review_verdict: fields.string("review_verdict")?,
            review_feedback: fields.text("review_feedback"),
            reviewed_at: fields.string("reviewed_at")?,
            reviewed_diff: fields.string("reviewed_diff")?,
            retry_count: fields.count("retry_count")?,
            revision_count: fields.count("revision_count")?,
            review_history: fields.history()?,
            coordination: match fields.get("coordination") {
                Some(value) => Some(Coordination::parse(value, path, "coordination")?),
                None => None,
            },
            bom,
            id,
            raw,
        })
    }

    /// Which developer attempt is under review: the first, plus one for each
    /// retry the orchestrator made and each revision a review asked for.
    pub fn attempt(&self) -> u32 {
        1u32.saturating_add(self.retry_count)
            .saturating_add(self.revision_count)
    }
}

/// Typed access to a task file's fields, with errors naming file and field.
struct Fields<'a> {
    path: &'a Path,
    raw: &'a Map<String, Value>,
}

impl Fields<'_> {
    fn invalid(&self, field: &str, expected: &str) -> Error {
        Error::InvalidField {
            path: self.path.to_path_buf(),
            field: field.to_string(),
            expected: expected.to_string(),
        }
    }

    /// Absent and null both mean "not given".
    fn get(&self, key: &str) -> Option<&Value> {
        self.raw.get(key).filter(|v| !v.is_null())
    }

    fn string(&self, key: &str) -> Result<Option<String>, Error> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(_) => Err(self.invalid(key, "a string")),
        }
    }

    fn strings(&self, key: &str) -> Result<Vec<String>, Error> {
        match self.get(key) {
            None => Ok(Vec::new()),
            Some(Value::Array(items)) => items
                .iter()
                .enumerate()
                .map(|(i, item)| match item {
                    Value::String(s) => Ok(s.clone()),
                    _ => Err(self.invalid(&format!("{key}[{i}]"), "a string")),
                })
                .collect(),
            Some(_) => Err(self.invalid(key, "an array of strings")),
        }
    }

    fn count(&self, key: &str) -> Result<u32, Error> {
        match self.get(key) {
            None => Ok(0),
            Some(Value::Number(n)) => n
                .as_u64()
                .and_then(|n| u32::try_from(n).ok())
                .ok_or_else(|| self.invalid(key, "a non-negative integer")),
            Some(_) => Err(self.invalid(key, "a non-negative integer")),
        }
    }

    fn criteria(&self) -> Result<Vec<Criterion>, Error> {
        const KEY: &str = "acceptance_criteria";
        match self.get(KEY) {
            None => Ok(Vec::new()),
            Some(Value::String(text)) => Ok(Criterion::parse_lines(text)),
            Some(Value::Array(items)) => criteria::from_array(items).map_err(|bad| {
                let field = match bad.key {
                    Some(key) => format!("{KEY}[{}].{key}", bad.index),
                    None => format!("{KEY}[{}]", bad.index),
                };
                let expected = match bad.key {
                    None => "a string or {criterion, verify_by}",
                    Some(_) => "a string",
                };
                self.invalid(&field, expected)
            }),
            Some(_) => Err(self.invalid(
                KEY,
                "an array of {criterion, verify_by} or one string of lines",
            )),
        }
    }

    /// Notes a developer left (`decisions`, `concerns`): an array of strings,
    /// or one string. They are only shown to the reviewer, so an item of
    /// another type is shown as its JSON rather than refused.
    fn notes(&self, key: &str) -> Result<Vec<String>, Error> {
        match self.get(key) {
            None => Ok(Vec::new()),
            Some(Value::String(s)) if s.trim().is_empty() => Ok(Vec::new()),
            Some(Value::String(s)) => Ok(vec![s.clone()]),
            Some(Value::Array(items)) => Ok(items
                .iter()
                .filter(|item| !item.is_null())
                .map(|item| match item {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                })
                .filter(|note| !note.trim().is_empty())
                .collect()),
            Some(_) => Err(self.invalid(key, "an array of strings")),
        }
    }

    /// Task ids: strings or integers, one or an array.
    fn ids(&self, key: &str) -> Result<Vec<String>, Error> {
        let one = |value: &Value, field: &str| match value {
            Value::String(s) => Ok(s.trim().to_string()),
            Value::Number(n) if n.is_u64() || n.is_i64() => Ok(n.to_string()),
            _ => Err(self.invalid(field, "a task id (a string or an integer)")),
        };
        match self.get(key) {
            None => Ok(Vec::new()),
            Some(Value::Array(items)) => items
                .iter()
                .enumerate()
                .map(|(i, item)| one(item, &format!("{key}[{i}]")))
                .filter(|id| !matches!(id, Ok(id) if id.is_empty()))
                .collect(),
            Some(value) => one(value, key).map(|id| match id.is_empty() {
                true => Vec::new(),
                false => vec![id],
            }),
        }
    }

    /// Free text written by a reviewer (speed, or the orchestrator's own,
    /// which stores its verdict object): a string as is, anything else as
    /// its JSON. Empty means none.
    fn text(&self, key: &str) -> Option<String> {
        let text = match self.get(key)? {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        (!text.trim().is_empty()).then_some(text)
    }

    /// `review_history`: speed appends to it, so it must be an array.
    fn history(&self) -> Result<Vec<Value>, Error> {
        const KEY: &str = "review_history";
        match self.get(KEY) {
            None => Ok(Vec::new()),
            Some(Value::Array(items)) => Ok(items.clone()),
            Some(_) => Err(self.invalid(KEY, "an array of review entries")),
        }
    }

    fn spec_references(&self) -> Result<Vec<SpecReference>, Error> {
        const KEY: &str = "spec_references";
        let items = match self.get(KEY) {
            None => return Ok(Vec::new()),
            Some(Value::Array(items)) => items,
            Some(_) => return Err(self.invalid(KEY, "an array of {spec, section, requirement}")),
        };
        let mut refs = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            let field = format!("{KEY}[{i}]");
            let reference = match item {
                // `path#Section`, the form `--spec` takes.
                Value::String(s) => {
                    let (spec, section) = match s.split_once('#') {
                        Some((spec, section)) => (spec, Some(section.to_string())),
                        None => (s.as_str(), None),
                    };
                    SpecReference {
                        spec: spec.to_string(),
                        section,
                        requirement: None,
                    }
                }
                Value::Object(object) => {
                    let text = |key: &str| match object.get(key) {
                        None | Some(Value::Null) => Ok(None),
                        Some(Value::String(s)) => Ok(Some(s.clone())),
                        Some(_) => Err(self.invalid(&format!("{field}.{key}"), "a string")),
                    };
                    SpecReference {
                        spec: text("spec")?
                            .ok_or_else(|| self.invalid(&format!("{field}.spec"), "a string"))?,
                        section: text("section")?,
                        requirement: text("requirement")?,
                    }
                }
                _ => return Err(self.invalid(&field, "{spec, section, requirement}")),
            };
            refs.push(reference);
        }
        Ok(refs)
    }

    /// `gate_results.checks`, each with any details beyond name, status and
    /// note (such as `undeclared_files`) added to its note, then the other
    /// keys of `gate_results` that say something (`scope: {undeclared_files}`).
    fn gate_checks(&self) -> Result<Vec<GateCheck>, Error> {
        const KEY: &str = "gate_results";
        let results = match self.get(KEY) {
            None => return Ok(Vec::new()),
            Some(Value::Object(results)) => results,
            Some(_) => return Err(self.invalid(KEY, "an object {checks: [...]}")),
        };
        let checks: &[Value] = match results.get("checks") {
            None | Some(Value::Null) => &[],
            Some(Value::Array(checks)) => checks,
            Some(_) => {
                return Err(
                    self.invalid(&format!("{KEY}.checks"), "an array of {name, status, note}")
                );
            }
        };
        let mut out = Vec::with_capacity(checks.len());
        for (i, check) in checks.iter().enumerate() {
            let field = format!("{KEY}.checks[{i}]");
            let Value::Object(check) = check else {
                return Err(self.invalid(&field, "{name, status, note}"));
            };
            // Orchestrators write statuses as strings or booleans and
            // notes as text or numbers; all are shown as text.
            let text = |key: &str| match check.get(key) {
                None | Some(Value::Null) => Ok(String::new()),
                Some(Value::String(s)) => Ok(s.clone()),
                Some(v @ (Value::Bool(_) | Value::Number(_))) => Ok(v.to_string()),
                Some(_) => Err(self.invalid(&format!("{field}.{key}"), "a string")),
            };
            let mut note = text("note")?;
            for (key, value) in check {
                if matches!(key.as_str(), "name" | "status" | "note") || is_empty(value) {
                    continue;
                }
                if !note.is_empty() {
                    note.push_str("; ");
                }
                note.push_str(&format!("{key}: {}", describe(value)));
            }
            out.push(GateCheck {
                name: text("name")?,
                status: text("status")?,
                note,
            });
        }
        for (key, value) in results {
            if key == "checks" || is_empty(value) {
                continue;
            }
            out.push(GateCheck {
                name: key.clone(),
                status: String::new(),
                note: describe(value),
            });
        }
        Ok(out)
    }
}

fn is_empty(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::String(s) => s.trim().is_empty(),
        Value::Array(items) => items.is_empty(),
        Value::Object(map) => map.values().all(is_empty),
        Value::Bool(_) | Value::Number(_) => false,
    }
}

/// A gate detail as one line: lists joined with commas, objects as
/// `key: value; key: value`.
fn describe(value: &Value) -> String {
    match value {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        Value::Bool(_) | Value::Number(_) => value.to_string(),
        Value::Array(items) => items.iter().map(describe).collect::<Vec<_>>().join(", "),
        Value::Object(map) => map
            .iter()
            .filter(|(_, v)| !is_empty(v))
            .map(|(k, v)| format!("{k}: {}", describe(v)))
            .collect::<Vec<_>>()
            .join("; "),
    }
}

/// A JSON syntax error in the file at `path`, with its position.
pub(super) fn malformed(path: &Path, e: &serde_json::Error) -> Error {
    let message = e.to_string();
    // serde_json appends the position; it is reported separately.
    let message = match message.rfind(" at line ") {
        Some(at) => message[..at].to_string(),
        None => message,
    };
    Error::Malformed {
        path: path.to_path_buf(),
        line: e.line(),
        column: e.column(),
        message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Task, Error> {
        Task::parse(Path::new(".speed/tasks/7.json"), None, text)
    }

    #[test]
    fn criteria_as_array_of_objects_and_strings() {
        let task = parse(
            r#"{"id": 7, "acceptance_criteria": [
                {"criterion": "Books can be listed", "verify_by": "test"},
                {"criterion": "Empty catalog shows a hint"},
                "- Titles are sorted [verify: manual]"
            ]}"#,
        )
        .unwrap();
        assert_eq!(
            task.criteria,
            vec![
                Criterion {
                    id: "AC-1".into(),
                    text: "Books can be listed".into(),
                    verify_by: Some("test".into())
                },
                Criterion {
                    id: "AC-2".into(),
                    text: "Empty catalog shows a hint".into(),
                    verify_by: None
                },
                Criterion {
                    id: "AC-3".into(),
                    text: "Titles are sorted".into(),
                    verify_by: Some("manual".into())
                },
            ]
        );
    }

    #[test]
    fn criteria_as_one_string_of_lines() {
        let task = parse(
            r#"{"acceptance_criteria": "- Books can be listed [verify: test]\n\n* Search by author\n2. Sorted by title [Verify: review]\n3) Paged"}"#,
        )
        .unwrap();
        let got: Vec<(&str, &str, Option<&str>)> = task
            .criteria
            .iter()
            .map(|c| (c.id.as_str(), c.text.as_str(), c.verify_by.as_deref()))
            .collect();
        assert_eq!(
            got,
            vec![
                ("AC-1", "Books can be listed", Some("test")),
                ("AC-2", "Search by author", None),
                ("AC-3", "Sorted by title", Some("review")),
                ("AC-4", "Paged", None),
            ]
        );
    }

    #[test]
    fn a_bracket_that_is_not_verify_stays_in_the_text() {
        let criteria = Criterion::parse_lines("Returns [] for no match");
        assert_eq!(criteria[0].text, "Returns [] for no match");
        assert_eq!(criteria[0].verify_by, None);
    }

    #[test]
    fn defaults_when_fields_are_absent() {
        let task = parse("{}").unwrap();
        assert_eq!(task.id, "7");
        assert_eq!(task.branch, "speed/task-7");
        assert_eq!(task.status, Status::Pending);
        assert_eq!(task.revision_count, 0);
        assert!(task.criteria.is_empty());
        assert!(task.scope.is_empty());
    }

    #[test]
    fn reads_every_contract_field() {
        let task = parse(
            r#"{"id": "7", "title": "List books", "description": "d", "rationale": "r",
                "status": "done", "branch": "feat/list", "base_branch": "main",
                "files_touched": ["src/a.rs"], "files_to_create": ["src/new/"],
                "files_to_modify": ["src/**/*.py"], "files_to_delete": ["old.txt"],
                "spec_references": [{"spec": "specs/product/lib.md", "section": "Listing", "requirement": "R1"},
                                    "specs/product/lib.md#Search"],
                "assumptions": ["a1"],
                "gate_results": {"checks": [{"name": "tests", "status": "pass", "note": "12 passed"},
                                            {"name": "lint", "status": false}]},
                "execution_base_commit": "abc", "base_commit": "def",
                "review_verdict": "approve", "reviewed_diff": "sha256:x", "revision_count": 1}"#,
        )
        .unwrap();
        assert_eq!(task.id, "7");
        assert_eq!(task.title, "List books");
        assert_eq!(task.status, Status::Done);
        assert_eq!(task.branch, "feat/list");
        assert_eq!(task.base_branch.as_deref(), Some("main"));
        assert_eq!(task.spec_references[1].section.as_deref(), Some("Search"));
        assert_eq!(task.spec_references[0].requirement.as_deref(), Some("R1"));
        assert_eq!(task.gate_checks[1].status, "false");
        assert_eq!(task.gate_checks[0].note, "12 passed");
        assert_eq!(task.execution_base_commit.as_deref(), Some("abc"));
        assert_eq!(task.base_commit.as_deref(), Some("def"));
        assert_eq!(task.revision_count, 1);
        assert!(task.scope.declares("src/a.rs"));
        assert!(task.scope.declares("./src/new/mod.rs"));
        assert!(task.scope.declares("src/x/y/z.py"));
        assert!(task.scope.declares("src/z.py"));
        assert!(task.scope.declares("old.txt"));
        assert!(!task.scope.declares("src/b.rs"));
        assert!(!task.scope.declares("src/newer.rs"));
        assert!(!task.scope.declares("lib/z.py"));
    }

    #[test]
    fn single_star_stays_in_one_folder() {
        let scope = Scope {
            touched: vec!["src/*.rs".into()],
            ..Scope::default()
        };
        assert!(scope.declares("src/main.rs"));
        assert!(!scope.declares("src/git/mod.rs"));
    }

    #[test]
    fn unknown_status_is_kept() {
        let task = parse(r#"{"status": "in_review"}"#).unwrap();
        assert_eq!(task.status, Status::Other("in_review".into()));
        assert_eq!(task.status.as_str(), "in_review");
    }

    #[test]
    fn malformed_json_reports_line_and_column() {
        let err =
            parse("{\n  \"id\": 7,\n  \"title\": \"x\"\n  \"status\": \"done\"\n}").unwrap_err();
        match err {
            Error::Malformed {
                path, line, column, ..
            } => {
                assert_eq!(path, Path::new(".speed/tasks/7.json"));
                assert_eq!((line, column), (4, 3));
            }
            other => panic!("expected Malformed, got {other:?}"),
        }
    }

    #[test]
    fn wrong_field_types_name_the_field() {
        let cases = [
            (r#"{"title": 5}"#, "title", "a string"),
            (
                r#"{"acceptance_criteria": {"a": 1}}"#,
                "acceptance_criteria",
                "an array of {criterion, verify_by} or one string of lines",
            ),
            (
                r#"{"acceptance_criteria": [3]}"#,
                "acceptance_criteria[0]",
                "a string or {criterion, verify_by}",
            ),
            (
                r#"{"files_touched": ["a", 1]}"#,
                "files_touched[1]",
                "a string",
            ),
            (
                r#"{"revision_count": -1}"#,
                "revision_count",
                "a non-negative integer",
            ),
            (r#"{"id": true}"#, "id", "a string or an integer"),
            (r#"{"id": 7.0}"#, "id", "a string or an integer"),
            (r#"{"id": {"n": 7}}"#, "id", "a string or an integer"),
            (
                r#"{"depends_on": [1, {"id": 2}]}"#,
                "depends_on[1]",
                "a task id (a string or an integer)",
            ),
            (
                r#"{"review_history": {"attempt": 1}}"#,
                "review_history",
                "an array of review entries",
            ),
            (
                r#"{"acceptance_criteria": [{"criterion": "a", "verify_by": 1}]}"#,
                "acceptance_criteria[0].verify_by",
                "a string",
            ),
            (r#"[1]"#, "(top level)", "a JSON object"),
        ];
        for (text, want_field, want_expected) in cases {
            match parse(text) {
                Err(Error::InvalidField {
                    field, expected, ..
                }) => {
                    assert_eq!(
                        (field.as_str(), expected.as_str()),
                        (want_field, want_expected),
                        "{text}"
                    );
                }
                other => panic!("{text}: expected InvalidField, got {other:?}"),
            }
        }
    }

    #[test]
    fn an_id_that_disagrees_with_the_file_name_is_refused_naming_both() {
        for text in [r#"{"id": 2}"#, r#"{"id": "../../x"}"#, r#"{"id": "7 "}"#] {
            let err = parse(text).unwrap_err();
            assert!(matches!(err, Error::IdMismatch { .. }), "{text}: {err:?}");
            let message = err.to_string();
            assert!(
                message.contains(".speed/tasks/7.json") && message.contains("7.json"),
                "{message}"
            );
        }
        let message = parse(r#"{"id": 2}"#).unwrap_err().to_string();
        assert!(message.contains("\"2\""), "{message}");
        // Ids like 10a are file names like any other.
        let task = Task::parse(Path::new("t/10a.json"), None, r#"{"id": "10a"}"#).unwrap();
        assert_eq!(
            (task.id.as_str(), task.branch.as_str()),
            ("10a", "speed/task-10a")
        );
        assert_eq!(parse(r#"{"id": 7}"#).unwrap().id, "7");
    }

    #[test]
    fn a_byte_order_mark_is_read_and_remembered() {
        let task = parse("\u{feff}{\"id\": 7, \"title\": \"BOM\"}").unwrap();
        assert_eq!(task.title, "BOM");
        assert!(task.bom);
        assert!(!parse("{}").unwrap().bom);
    }

    #[test]
    fn reads_the_notes_real_task_files_carry() {
        let task = parse(
            r#"{"id": "7", "decisions": ["Used a Map", {"why": "speed"}, "", null],
                "concerns": "Tests deferred to task 4",
                "depends_on": ["2", 3, ""], "retry_count": 2, "revision_count": 1,
                "review_feedback": {"verdict": "request_changes", "issues": []},
                "reviewed_at": "2026-03-15T03:34:11Z",
                "review_history": [{"attempt": 1, "verdict": "request_changes"}],
                "gate_results": {"checks": [
                    {"name": "scope", "status": "warn", "undeclared_files": ["a.test.tsx", "b.tsx"]},
                    {"name": "lint", "status": "pass", "note": "clean", "extra": []}],
                  "scope": {"undeclared_files": ["a.test.tsx"]}, "other": {}}}"#,
        )
        .unwrap();
        assert_eq!(task.decisions, ["Used a Map", r#"{"why":"speed"}"#]);
        assert_eq!(task.concerns, ["Tests deferred to task 4"]);
        assert_eq!(task.depends_on, ["2", "3"]);
        assert_eq!(task.attempt(), 4);
        assert_eq!(
            task.review_feedback.as_deref(),
            Some(r#"{"verdict":"request_changes","issues":[]}"#)
        );
        assert_eq!(task.reviewed_at.as_deref(), Some("2026-03-15T03:34:11Z"));
        assert_eq!(task.review_history.len(), 1);
        let gates: Vec<(&str, &str, &str)> = task
            .gate_checks
            .iter()
            .map(|g| (g.name.as_str(), g.status.as_str(), g.note.as_str()))
            .collect();
        assert_eq!(
            gates,
            [
                ("scope", "warn", "undeclared_files: a.test.tsx, b.tsx"),
                ("lint", "pass", "clean"),
                ("scope", "", "undeclared_files: a.test.tsx"),
            ]
        );
        // Empty feedback is no feedback.
        assert_eq!(
            parse(r#"{"review_feedback": ""}"#).unwrap().review_feedback,
            None
        );
        assert_eq!(parse(r#"{"depends_on": 5}"#).unwrap().depends_on, ["5"]);
    }
}
