//! The typed view of a defect folder. `triage.json` and `state.json` are
//! kept whole (`raw`) so the reviewer sees every field the triage wrote and
//! a state update keeps every field it does not know, in order; the few
//! fields speed itself relies on are checked strictly, with the line and
//! column of a wrong value.

use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::Value;

use super::Error;
use super::report::{self, Report};

/// Which of the orchestrator's layouts a defect lives in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Layout {
    /// `.speed/defects/<name>/`
    Single,
    /// `.speed/shared/defects/<name>/` (multi-player)
    Shared,
}

/// One defect, as read from its folder.
#[derive(Debug, Clone)]
pub struct Defect {
    /// The folder name.
    pub name: String,
    pub layout: Layout,
    /// The folder, relative to the repository root.
    pub dir: PathBuf,
    /// The branch holding the fix: `state.json`'s `branch`, else
    /// `speed/defect-<name>`.
    pub branch: String,
    /// `report.md` as written.
    pub report_text: String,
    pub report: Report,
    pub triage: Triage,
    /// None when the folder has no `state.json`.
    pub state: Option<State>,
    /// `context.md`: guidance an operator wrote for this fix.
    pub context: Option<String>,
}

impl Defect {
    /// "defect login-crash", for messages.
    pub fn label(&self) -> String {
        format!("defect {}", self.name)
    }

    /// The folder's files, relative to the repository root.
    pub fn file(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    /// The state's status, when there is one.
    pub fn status(&self) -> Option<&str> {
        self.state.as_ref().and_then(|s| s.status.as_deref())
    }

    /// The triage's complexity (`trivial`, `moderate`, `complex`), else the
    /// state's, for display.
    pub fn complexity(&self) -> Option<&str> {
        self.triage.complexity.as_deref().or_else(|| {
            self.state
                .as_ref()
                .and_then(|s| s.raw.get("complexity"))
                .and_then(Value::as_str)
        })
    }
}

/// `triage.json`: the fields speed decides with, and the whole object for
/// the reviewer.
#[derive(Debug, Clone, PartialEq)]
pub struct Triage {
    /// Paths (a folder ends in `/`; `*` and `**` globs are read as in task
    /// scopes) that the fix is expected to change.
    pub affected_files: Vec<String>,
    /// Spec paths, each optionally `#Section`: the source of truth.
    pub related_spec: Vec<String>,
    pub complexity: Option<String>,
    pub raw: Value,
}

/// `state.json`: the pipeline's state, kept whole for writing back.
#[derive(Debug, Clone, PartialEq)]
pub struct State {
    pub status: Option<String>,
    pub branch: Option<String>,
    pub raw: Value,
    /// The file began with a UTF-8 byte order mark (kept on write).
    pub bom: bool,
}

/// A field that may be one string or a list of strings.
#[derive(Deserialize)]
#[serde(untagged)]
enum OneOrMany {
    One(String),
    Many(Vec<String>),
}

impl OneOrMany {
    fn into_vec(self) -> Vec<String> {
        match self {
            OneOrMany::One(s) => vec![s],
            OneOrMany::Many(v) => v,
        }
    }
}

/// The triage fields speed relies on, typed so that serde names the line
/// and column of a wrong value.
#[derive(Deserialize)]
struct TriageFields {
    #[serde(default)]
    affected_files: Option<Vec<String>>,
    #[serde(default)]
    related_spec: Option<OneOrMany>,
    #[serde(default)]
    complexity: Option<Value>,
}

#[derive(Deserialize)]
struct StateFields {
    #[serde(default)]
    status: Option<String>,
    #[serde(default)]
    branch: Option<String>,
}

/// `text` without a UTF-8 byte order mark, and whether it had one.
fn without_bom(text: &str) -> (&str, bool) {
    match text.strip_prefix('\u{feff}') {
        Some(rest) => (rest, true),
        None => (text, false),
    }
}

/// The object in `text`, or an error naming the file, line and column.
fn object(path: &Path, text: &str) -> Result<Value, Error> {
    let value: Value = serde_json::from_str(text).map_err(|e| malformed(path, &e))?;
    if !value.is_object() {
        return Err(Error::Malformed {
            path: path.to_path_buf(),
            line: 1,
            column: 1,
            message: format!(
                "expected a JSON object, found {}",
                match value {
                    Value::Array(_) => "an array",
                    Value::String(_) => "a string",
                    Value::Number(_) => "a number",
                    Value::Bool(_) => "a boolean",
                    _ => "null",
                }
            ),
        });
    }
    Ok(value)
}

fn malformed(path: &Path, e: &serde_json::Error) -> Error {
    let message = e.to_string();
    // serde_json appends the position; it is reported separately.
    let message = match message.rfind(" at line ") {
        Some(at) => message[..at].to_string(),
        None => message,
    };
    let message = match e.classify() {
        serde_json::error::Category::Data => format!("wrong type: {message}"),
        _ => format!("invalid JSON: {message}"),
    };
    Error::Malformed {
        path: path.to_path_buf(),
        line: e.line(),
        column: e.column(),
        message,
    }
}

impl Triage {
    /// `path` names the file in errors.
    pub fn parse(path: &Path, text: &str) -> Result<Triage, Error> {
        let (text, _) = without_bom(text);
        let raw = object(path, text)?;
        let fields: TriageFields = serde_json::from_str(text).map_err(|e| malformed(path, &e))?;
        let Some(affected_files) = fields.affected_files else {
            return Err(Error::MissingField {
                path: path.to_path_buf(),
                field: "affected_files",
                why: "speed judges the fix's scope against the files the triage found (an array of paths)",
            });
        };
        let affected_files = affected_files
            .iter()
            .map(|p| p.trim().trim_start_matches("./").to_string())
            .filter(|p| !p.is_empty())
            .collect();
        let related_spec = fields
            .related_spec
            .map(OneOrMany::into_vec)
            .unwrap_or_default()
            .into_iter()
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .collect();
        let complexity = match fields.complexity {
            Some(Value::String(s)) if !s.trim().is_empty() => Some(s.trim().to_string()),
            _ => None,
        };
        Ok(Triage {
            affected_files,
            related_spec,
            complexity,
            raw,
        })
    }
}

impl State {
    pub fn parse(path: &Path, text: &str) -> Result<State, Error> {
        let (text, bom) = without_bom(text);
        let raw = object(path, text)?;
        let fields: StateFields = serde_json::from_str(text).map_err(|e| malformed(path, &e))?;
        let clean = |v: Option<String>| v.map(|s| s.trim().to_string()).filter(|s| !s.is_empty());
        Ok(State {
            status: clean(fields.status),
            branch: clean(fields.branch),
            raw,
            bom,
        })
    }
}

/// Reads `report.md`: UTF-8 text, or an error at the first byte that is not.
pub fn parse_report(path: &Path, bytes: Vec<u8>) -> Result<(String, Report), Error> {
    let text = utf8(path, bytes)?;
    let report = report::parse(&text);
    Ok((text, report))
}

/// The bytes as text, or an error naming the line and column of the first
/// byte that is not UTF-8.
pub fn utf8(path: &Path, bytes: Vec<u8>) -> Result<String, Error> {
    String::from_utf8(bytes).map_err(|e| {
        let valid = &e.as_bytes()[..e.utf8_error().valid_up_to()];
        let line = valid.iter().filter(|b| **b == b'\n').count() + 1;
        let column = valid.len() - valid.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1) + 1;
        Error::Malformed {
            path: path.to_path_buf(),
            line,
            column,
            message: "not UTF-8 text".to_string(),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path() -> &'static Path {
        Path::new(".speed/defects/x/triage.json")
    }

    /// The shape the orchestrator's triage agent answers in (agents/triage.md).
    const TRIAGE: &str = r#"{
  "is_defect": true,
  "reported_severity": "P1",
  "defect_type": "logic",
  "complexity": "moderate",
  "root_cause_hypothesis": "search() reads the cached flag",
  "affected_files": ["./catalog/src/search.rs", "catalog/src/loans.rs", " "],
  "blast_radius": "low",
  "blast_radius_detail": "only search",
  "test_coverage": "existing",
  "test_coverage_detail": "tests/search.rs covers search",
  "related_spec": "specs/product/library-catalog.md",
  "suggested_approach": "read loans",
  "regression_risks": ["pagination"],
  "escalation_reason": null
}"#;

    #[test]
    fn triage_of_the_orchestrator() {
        let t = Triage::parse(path(), TRIAGE).unwrap();
        assert_eq!(
            t.affected_files,
            ["catalog/src/search.rs", "catalog/src/loans.rs"]
        );
        assert_eq!(t.related_spec, ["specs/product/library-catalog.md"]);
        assert_eq!(t.complexity.as_deref(), Some("moderate"));
        assert_eq!(t.raw["regression_risks"][0], "pagination");
        let t = Triage::parse(
            path(),
            r#"{"affected_files": [], "related_spec": ["a.md#X", "b.md"]}"#,
        )
        .unwrap();
        assert_eq!(t.related_spec, ["a.md#X", "b.md"]);
        assert!(t.affected_files.is_empty());
    }

    #[test]
    fn malformed_triage_names_line_and_column() {
        let err = Triage::parse(
            path(),
            "{\n  \"complexity\": \"moderate\"\n  \"affected_files\": []\n}",
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            ".speed/defects/x/triage.json:3:3: invalid JSON: expected `,` or `}`"
        );
        let err = Triage::parse(path(), "{\n  \"affected_files\": [\"a\", 7]\n}").unwrap_err();
        let text = err.to_string();
        assert!(
            text.starts_with(
                ".speed/defects/x/triage.json:2:27: wrong type: invalid type: integer `7`"
            ),
            "{text}"
        );
        let err = Triage::parse(path(), "[1]").unwrap_err();
        assert_eq!(
            err.to_string(),
            ".speed/defects/x/triage.json:1:1: expected a JSON object, found an array"
        );
    }

    #[test]
    fn triage_without_affected_files_is_an_error() {
        let err = Triage::parse(path(), r#"{"complexity": "trivial"}"#).unwrap_err();
        assert!(
            err.to_string()
                .starts_with(".speed/defects/x/triage.json: field `affected_files` is missing"),
            "{err}"
        );
    }

    #[test]
    fn state_of_the_orchestrator() {
        let s = State::parse(
            Path::new("state.json"),
            "\u{feff}{\"status\": \"fixed\", \"severity\": null, \"branch\": null, \"created_at\": \"2025-01-01T00:00:00Z\"}",
        )
        .unwrap();
        assert_eq!(s.status.as_deref(), Some("fixed"));
        assert_eq!(s.branch, None);
        assert!(s.bom);
        let err = State::parse(Path::new("state.json"), "{\"branch\": 3}").unwrap_err();
        assert!(
            err.to_string().starts_with("state.json:1:12: wrong type"),
            "{err}"
        );
    }

    #[test]
    fn report_that_is_not_utf8_names_the_byte() {
        let err = parse_report(
            Path::new("report.md"),
            b"# Defect\nSeverity: P1\xff\n".to_vec(),
        )
        .unwrap_err();
        assert_eq!(err.to_string(), "report.md:2:13: not UTF-8 text");
    }
}
