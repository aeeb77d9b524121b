//! The typed view of a task file, parsed leniently where the contract allows
//! two forms and strictly where a wrong type would change what is reviewed.
//! The whole file is kept in `Task::raw` so nothing unknown is lost on save.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::Error;

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

/// One acceptance criterion with its stable id (`AC-1`, `AC-2`, ...).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Criterion {
    pub id: String,
    pub text: String,
    pub verify_by: Option<String>,
}

impl Criterion {
    /// Criteria from one string of lines: blank lines dropped, leading
    /// bullets and numbers stripped, a trailing `[verify: X]` read as
    /// `verify_by`. Ids are numbered from AC-1 in order.
    pub fn parse_lines(text: &str) -> Vec<Criterion> {
        text.lines()
            .map(strip_bullet)
            .filter(|line| !line.is_empty())
            .enumerate()
            .map(|(i, line)| {
                let (text, verify_by) = split_verify(line);
                Criterion {
                    id: format!("AC-{}", i + 1),
                    text,
                    verify_by,
                }
            })
            .collect()
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

/// A task file: the typed fields speed uses, and the whole file in `raw`.
#[derive(Debug, Clone)]
pub struct Task {
    pub id: String,
    /// The feature folder the file lives in; None for `.speed/tasks/`.
    pub feature: Option<String>,
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
    pub gate_checks: Vec<GateCheck>,
    pub execution_base_commit: Option<String>,
    pub base_commit: Option<String>,
    pub review_verdict: Option<String>,
    pub reviewed_diff: Option<String>,
    pub revision_count: u32,
    /// The whole file, field order kept, written back by `Store::save`.
    pub raw: Map<String, Value>,
}

impl Task {
    /// Parse a task file's text. `path` is where it lives (for errors and
    /// for saving); its stem is the id when the file has none.
    pub fn parse(path: &Path, feature: Option<&str>, text: &str) -> Result<Task, Error> {
        let value: Value = serde_json::from_str(text).map_err(|e| malformed(path, &e))?;
        let Value::Object(raw) = value else {
            return Err(Error::InvalidField {
                path: path.to_path_buf(),
                field: "(top level)".to_string(),
                expected: "a JSON object".to_string(),
            });
        };
        let fields = Fields { path, raw: &raw };
        let id = match raw.get("id") {
            Some(Value::String(id)) => id.clone(),
            Some(Value::Number(id)) => id.to_string(),
            None | Some(Value::Null) => path
                .file_stem()
                .map(|stem| stem.to_string_lossy().into_owned())
                .unwrap_or_default(),
            Some(_) => return Err(fields.invalid("id", "a string or number")),
        };
        let branch = fields
            .string("branch")?
            .unwrap_or_else(|| format!("speed/task-{id}"));
        Ok(Task {
            feature: feature.map(str::to_string),
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
            gate_checks: fields.gate_checks()?,
            execution_base_commit: fields.string("execution_base_commit")?,
            base_commit: fields.string("base_commit")?,
            review_verdict: fields.string("review_verdict")?,
            reviewed_diff: fields.string("reviewed_diff")?,
            revision_count: fields.count("revision_count")?,
            id,
            raw,
        })
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
        let items = match self.get(KEY) {
            None => return Ok(Vec::new()),
            Some(Value::String(text)) => return Ok(Criterion::parse_lines(text)),
            Some(Value::Array(items)) => items,
            Some(_) => {
                return Err(self.invalid(
                    KEY,
                    "an array of {criterion, verify_by} or one string of lines",
                ));
            }
        };
        let mut criteria = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            let field = format!("{KEY}[{i}]");
            let (text, verify_by) = match item {
                Value::String(line) => split_verify(strip_bullet(line)),
                Value::Object(object) => {
                    let text = match object.get("criterion") {
                        Some(Value::String(s)) => s.trim().to_string(),
                        _ => return Err(self.invalid(&format!("{field}.criterion"), "a string")),
                    };
                    match object.get("verify_by") {
                        None | Some(Value::Null) => split_verify(&text),
                        Some(Value::String(v)) => (text, Some(v.clone())),
                        Some(_) => {
                            return Err(self.invalid(&format!("{field}.verify_by"), "a string"));
                        }
                    }
                }
                _ => return Err(self.invalid(&field, "a string or {criterion, verify_by}")),
            };
            if text.is_empty() {
                continue;
            }
            criteria.push(Criterion {
                id: format!("AC-{}", criteria.len() + 1),
                text,
                verify_by,
            });
        }
        Ok(criteria)
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

    fn gate_checks(&self) -> Result<Vec<GateCheck>, Error> {
        const KEY: &str = "gate_results";
        let checks = match self.get(KEY) {
            None => return Ok(Vec::new()),
            Some(Value::Object(results)) => match results.get("checks") {
                None | Some(Value::Null) => return Ok(Vec::new()),
                Some(Value::Array(checks)) => checks,
                Some(_) => {
                    return Err(
                        self.invalid(&format!("{KEY}.checks"), "an array of {name, status, note}")
                    );
                }
            },
            Some(_) => return Err(self.invalid(KEY, "an object {checks: [...]}")),
        };
        checks
            .iter()
            .enumerate()
            .map(|(i, check)| {
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
                Ok(GateCheck {
                    name: text("name")?,
                    status: text("status")?,
                    note: text("note")?,
                })
            })
            .collect()
    }
}

/// A line without its leading bullet (`- `, `* `, `+ `, `• `) or number
/// (`1. `, `1) `), trimmed.
fn strip_bullet(line: &str) -> &str {
    let line = line.trim();
    for bullet in ["- ", "* ", "+ ", "• "] {
        if let Some(rest) = line.strip_prefix(bullet) {
            return rest.trim();
        }
    }
    let digits = line.bytes().take_while(u8::is_ascii_digit).count();
    if digits > 0 {
        let rest = &line[digits..];
        if let Some(rest) = rest.strip_prefix(". ").or_else(|| rest.strip_prefix(") ")) {
            return rest.trim();
        }
    }
    line
}

/// Splits a trailing `[verify: X]` off a criterion.
fn split_verify(line: &str) -> (String, Option<String>) {
    let line = line.trim();
    let Some(open) = line.rfind('[') else {
        return (line.to_string(), None);
    };
    let Some(inner) = line[open + 1..].strip_suffix(']') else {
        return (line.to_string(), None);
    };
    let inner = inner.trim();
    match inner.get(..7) {
        Some(tag) if tag.eq_ignore_ascii_case("verify:") => {
            let how = inner[7..].trim();
            let text = line[..open].trim_end().to_string();
            (text, (!how.is_empty()).then(|| how.to_string()))
        }
        _ => (line.to_string(), None),
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
            r#"{"id": "3", "title": "List books", "description": "d", "rationale": "r",
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
        assert_eq!(task.id, "3");
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
            (r#"{"id": true}"#, "id", "a string or number"),
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
}
