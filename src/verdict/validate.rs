//! Strict validation of an extracted JSON value into a `Verdict` or a
//! `GuardianVerdict`, collecting every problem with its path, and the
//! corrective message sent back to the model. Lenient only where a model's
//! spelling cannot change the meaning: enum case and separators, a line
//! number written as a string, absent optional lists. It never decides
//! anything about the review; that is `decide`'s job.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::{Map, Value};

use super::Error;
use super::schema::{
    CriterionCheck, CriterionStatus, DefectScopeCheck, DimensionScore, Flag, GuardianStatus,
    GuardianVerdict, Issue, Kind, Missing, OutOfScope, PreviousClaim, PreviousStatus, Rejection,
    RejectionKind, ScopeViolation, Severity, SpecCheck, Verdict,
};

/// The most entries a list of the answer may hold. A review that finds
/// more than this has stopped being a review; past it, everything after
/// (overrules, feedback, the terminal, the task file) would grow with
/// whatever a hostile or looping model wrote.
pub const MAX_LIST_ITEMS: usize = 200;

/// The longest a single text of the answer may be, in characters.
pub const MAX_TEXT_CHARS: usize = 8_000;

/// One way the model's answer does not match the schema.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Problem {
    /// Where, e.g. `issues[2].severity`; `(root)` for the answer itself.
    pub path: String,
    pub message: String,
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.path, self.message)
    }
}

/// Checks the reviewer's answer against the contract's verdict schema.
pub fn validate(value: &Value) -> Result<Verdict, Vec<Problem>> {
    let mut c = Checker::default();
    let Some(obj) = c.root(value) else {
        return Err(c.problems);
    };
    let verdict = c.required_enum(obj, "verdict", "verdict", &Kind::ALL, Kind::as_str);
    let expectations = c.required_string(obj, "expectations", "expectations", false);
    let criteria = c.list(obj, "criteria", true, |c, o, p| {
        let id = c.required_string(o, "id", p, true);
        let status = c.required_enum(
            o,
            "status",
            p,
            &CriterionStatus::ALL,
            CriterionStatus::as_str,
        );
        let evidence = c.optional_string(o, "evidence", p).unwrap_or_default();
        Some(CriterionCheck {
            id: id?,
            status: status?,
            evidence,
        })
    });
    let spec_verification = c.list(obj, "spec_verification", true, |c, o, p| {
        let spec_quote = c.required_string(o, "spec_quote", p, true);
        let spec_section = c.optional_string(o, "spec_section", p).unwrap_or_default();
        let satisfied = c.required_bool(o, "satisfied", p);
        let evidence = c.optional_string(o, "evidence", p).unwrap_or_default();
        let notes = c.optional_string(o, "notes", p).unwrap_or_default();
        Some(SpecCheck {
            spec_quote: spec_quote?,
            spec_section,
            satisfied: satisfied?,
            evidence,
            notes,
        })
    });
    let missing_from_spec = c.list(obj, "missing_from_spec", false, |c, o, p| {
        Some(Missing {
            spec_quote: c.optional_string(o, "spec_quote", p).unwrap_or_default(),
            description: c.optional_string(o, "description", p).unwrap_or_default(),
        })
    });
    let out_of_scope = c.list(obj, "out_of_scope", false, |c, o, p| {
        let (line, end_line) = c.lines(o, "line", p);
        Some(OutOfScope {
            file: c.optional_string(o, "file", p).unwrap_or_default(),
            line,
            end_line,
            description: c.optional_string(o, "description", p).unwrap_or_default(),
        })
    });
    let issues = c.list(obj, "issues", true, |c, o, p| {
        let severity = c.required_enum(o, "severity", p, &Severity::ALL, Severity::as_str);
        let file = c.optional_string(o, "file", p);
        let (line, end_line) = c.lines(o, "line", p);
        let message = c.required_string(o, "message", p, true);
        let suggestion = c.optional_string(o, "suggestion", p).unwrap_or_default();
        let dimension = c
            .optional_string(o, "dimension", p)
            .filter(|d| !d.trim().is_empty());
        Some(Issue {
            severity: severity?,
            file,
            line,
            end_line,
            message: message?,
            suggestion,
            dimension,
        })
    });
    let strengths = c.strings(obj, "strengths");
    let defect_scope_check = match obj.get("defect_scope_check") {
        None | Some(Value::Null) => None,
        Some(Value::Object(o)) => {
            let p = "defect_scope_check";
            let scope_ok = c.required_bool(o, "scope_ok", p);
            let large_diff = c.required_bool(o, "large_diff", p);
            scope_ok
                .zip(large_diff)
                .map(|(scope_ok, large_diff)| DefectScopeCheck {
                    scope_ok,
                    large_diff,
                })
        }
        Some(other) => {
            c.wrong_type("defect_scope_check", "an object or null", other);
            None
        }
    };
    let scope_violations = c.list(obj, "scope_violations", false, |c, o, p| {
        Some(ScopeViolation {
            file: c.optional_string(o, "file", p).unwrap_or_default(),
            description: c.optional_string(o, "description", p).unwrap_or_default(),
        })
    });
    let dimensions = c.dimensions(obj);
    let rejection = c.rejection(obj);
    // Which ids must be rated, and each once, is `previous::missing`'s
    // question; here each entry's shape.
    let previous_findings = c.list(obj, "previous_findings", false, |c, o, p| {
        let id = c.required_string(o, "id", p, true);
        let status = c.required_enum(o, "status", p, &PreviousStatus::ALL, PreviousStatus::as_str);
        let evidence = c.required_string(o, "evidence", p, true);
        Some(PreviousClaim {
            id: id?.trim().to_string(),
            status: status?,
            evidence: evidence?,
        })
    });

    match (verdict, expectations) {
        (Some(verdict), Some(expectations)) if c.problems.is_empty() => Ok(Verdict {
            verdict,
            expectations,
            criteria,
            spec_verification,
            missing_from_spec,
            out_of_scope,
            issues,
            strengths,
            defect_scope_check,
            scope_violations,
            dimensions,
            rejection,
            previous_findings,
        }),
        _ => Err(c.problems),
    }
}

/// Checks the guardian's answer: `status` and `summary` required, `flags`
/// defaulting to empty.
pub fn validate_guardian(value: &Value) -> Result<GuardianVerdict, Vec<Problem>> {
    let mut c = Checker::default();
    let Some(obj) = c.root(value) else {
        return Err(c.problems);
    };
    let status = c.required_enum(
        obj,
        "status",
        "status",
        &GuardianStatus::ALL,
        GuardianStatus::as_str,
    );
    let summary = c.required_string(obj, "summary", "summary", false);
    let flags = c.list(obj, "flags", false, |c, o, p| {
        let severity = c.required_enum(o, "severity", p, &Severity::ALL, Severity::as_str);
        let description = c.required_string(o, "description", p, true);
        let spec_reference = c
            .optional_string(o, "spec_reference", p)
            .unwrap_or_default();
        Some(Flag {
            severity: severity?,
            description: description?,
            spec_reference,
        })
    });
    match (status, summary) {
        (Some(status), Some(summary)) if c.problems.is_empty() => Ok(GuardianVerdict {
            status,
            summary,
            flags,
        }),
        _ => Err(c.problems),
    }
}

/// The message sent back to the model after an answer that could not be
/// used: what was wrong, each problem with its path, then the rule again.
pub fn correction(error: &Error) -> String {
    let mut out = String::from("Your previous answer could not be used.\n");
    match error {
        Error::Invalid { problems } => {
            // Enough to act on; the rest are usually the same mistake again.
            const LISTED: usize = 40;
            out.push_str("It does not match the required schema:\n");
            for p in problems.iter().take(LISTED) {
                out.push_str(&format!("- {p}\n"));
            }
            if problems.len() > LISTED {
                out.push_str(&format!(
                    "- …and {} more problems of the same kinds\n",
                    problems.len() - LISTED
                ));
            }
        }
        other => {
            out.push_str(&format!("- {other}\n"));
        }
    }
    out.push_str(
        "\nAnswer again with ONE JSON object that matches the required schema exactly, and \
         nothing else: no prose before or after it, no markdown fence, no comments, no \
         trailing commas. Use only the allowed values for enumerated fields.\n",
    );
    out
}

/// `"42"` or a range `"42-50"` (also with an en dash or `..`, and blanks
/// around the numbers).
fn line_range(s: &str) -> Option<(u64, u64)> {
    let s = s.trim();
    let (first, last) = ["-", "\u{2013}", ".."]
        .iter()
        .find_map(|sep| s.split_once(sep))
        .unwrap_or((s, s));
    Some((first.trim().parse().ok()?, last.trim().parse().ok()?))
}

/// The lowercase form a model's enum spelling is compared in: "Request
/// Changes", "REQUEST-CHANGES" and "request_changes" all meet as
/// "requestchanges".
pub(super) fn folded(s: &str) -> String {
    s.chars()
        .filter(|c| !matches!(c, ' ' | '_' | '-'))
        .flat_map(char::to_lowercase)
        .collect()
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Shows a value briefly in a problem message.
fn shown(v: &Value) -> String {
    let s = v.to_string();
    if s.chars().count() > 60 {
        format!("{}…", s.chars().take(60).collect::<String>())
    } else {
        s
    }
}

fn join(path: &str, key: &str) -> String {
    if path == key || path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

#[derive(Default)]
struct Checker {
    problems: Vec<Problem>,
}

impl Checker {
    fn problem(&mut self, path: impl Into<String>, message: impl Into<String>) {
        self.problems.push(Problem {
            path: path.into(),
            message: message.into(),
        });
    }

    /// A text of the answer, refused past `MAX_TEXT_CHARS`.
    fn text(&mut self, path: &str, s: &str) -> Option<String> {
        let chars = s.chars().count();
        if chars > MAX_TEXT_CHARS {
            self.problem(
                path,
                format!("is {chars} characters long; at most {MAX_TEXT_CHARS}: be brief"),
            );
            return None;
        }
        Some(s.to_string())
    }

    /// Whether a list is short enough to read; a problem when it is not.
    fn short_enough(&mut self, key: &str, items: &[Value]) -> bool {
        if items.len() > MAX_LIST_ITEMS {
            self.problem(
                key,
                format!(
                    "has {} entries; at most {MAX_LIST_ITEMS}: keep the most important",
                    items.len()
                ),
            );
            return false;
        }
        true
    }

    fn wrong_type(&mut self, path: &str, expected: &str, got: &Value) {
        self.problem(
            path,
            format!("expected {expected}, got {} {}", type_name(got), shown(got)),
        );
    }

    fn root<'v>(&mut self, value: &'v Value) -> Option<&'v Map<String, Value>> {
        let obj = value.as_object();
        if obj.is_none() {
            self.wrong_type("(root)", "a JSON object", value);
        }
        obj
    }

    /// `path` is the containing item's path; for top-level fields it equals
    /// `key`.
    fn required_string(
        &mut self,
        obj: &Map<String, Value>,
        key: &str,
        path: &str,
        non_empty: bool,
    ) -> Option<String> {
        let at = join(path, key);
        match obj.get(key) {
            None => {
                self.problem(at, "is required");
                None
            }
            Some(Value::String(s)) if non_empty && s.trim().is_empty() => {
                self.problem(at, "must not be empty");
                None
            }
            Some(Value::String(s)) => self.text(&at, s),
            Some(other) => {
                self.wrong_type(&at, "a string", other);
                None
            }
        }
    }

    /// Absent and null are both "not given".
    fn optional_string(
        &mut self,
        obj: &Map<String, Value>,
        key: &str,
        path: &str,
    ) -> Option<String> {
        match obj.get(key) {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => self.text(&join(path, key), s),
            Some(other) => {
                self.wrong_type(&join(path, key), "a string or null", other);
                None
            }
        }
    }

    fn required_bool(&mut self, obj: &Map<String, Value>, key: &str, path: &str) -> Option<bool> {
        let at = join(path, key);
        match obj.get(key) {
            None => {
                self.problem(at, "is required");
                None
            }
            Some(Value::Bool(b)) => Some(*b),
            Some(other) => {
                self.wrong_type(&at, "true or false", other);
                None
            }
        }
    }

    fn required_enum<T: Copy>(
        &mut self,
        obj: &Map<String, Value>,
        key: &str,
        path: &str,
        all: &[T],
        name: fn(T) -> &'static str,
    ) -> Option<T> {
        let at = join(path, key);
        let allowed = all.iter().map(|v| name(*v)).collect::<Vec<_>>().join(", ");
        match obj.get(key) {
            None => {
                self.problem(at, format!("is required (one of {allowed})"));
                None
            }
            Some(Value::String(s)) => {
                let wanted = folded(s);
                let hit = all.iter().copied().find(|v| folded(name(*v)) == wanted);
                if hit.is_none() {
                    self.problem(at, format!("expected one of {allowed}, got {s:?}"));
                }
                hit
            }
            Some(other) => {
                self.wrong_type(&at, &format!("one of {allowed}"), other);
                None
            }
        }
    }

    /// A 1-based line or range of lines: an integer, a numeric string, or
    /// a range such as `"42-50"`; absent, null or a blank string mean no
    /// line. Returns the first line and, for a range, the last.
    fn lines(
        &mut self,
        obj: &Map<String, Value>,
        key: &str,
        path: &str,
    ) -> (Option<u64>, Option<u64>) {
        let expected =
            "a line number (an integer, a numeric string or a range like \"42-50\") or null";
        match obj.get(key) {
            None | Some(Value::Null) => (None, None),
            Some(Value::Number(n)) => {
                let line = n.as_u64();
                if line.is_none() {
                    self.wrong_type(&join(path, key), expected, &Value::Number(n.clone()));
                }
                (line, None)
            }
            Some(Value::String(s)) if s.trim().is_empty() => (None, None),
            Some(Value::String(s)) => match line_range(s) {
                Some((first, last)) if last < first => {
                    self.problem(
                        join(path, key),
                        format!("the range {s:?} ends before it starts"),
                    );
                    (None, None)
                }
                Some((first, last)) => (Some(first), (last != first).then_some(last)),
                None => {
                    self.problem(join(path, key), format!("expected {expected}, got {s:?}"));
                    (None, None)
                }
            },
            Some(other) => {
                self.wrong_type(&join(path, key), expected, other);
                (None, None)
            }
        }
    }

    /// A list of objects, each read by `item` with its path (`issues[2]`).
    /// Items with problems are left out of the result; the problems make the
    /// whole validation fail, so nothing is lost silently.
    fn list<T>(
        &mut self,
        obj: &Map<String, Value>,
        key: &str,
        required: bool,
        mut item: impl FnMut(&mut Self, &Map<String, Value>, &str) -> Option<T>,
    ) -> Vec<T> {
        let items = match (obj.get(key), required) {
            (None, true) => {
                self.problem(key, "is required (an array, possibly empty)");
                return Vec::new();
            }
            (None | Some(Value::Null), false) => return Vec::new(),
            (Some(Value::Array(items)), _) => items,
            (Some(other), _) => {
                self.wrong_type(key, "an array", other);
                return Vec::new();
            }
        };
        if !self.short_enough(key, items) {
            return Vec::new();
        }
        let mut out = Vec::with_capacity(items.len());
        for (i, v) in items.iter().enumerate() {
            let at = format!("{key}[{i}]");
            match v {
                Value::Object(o) => {
                    if let Some(t) = item(self, o, &at) {
                        out.push(t);
                    }
                }
                other => self.wrong_type(&at, "an object", other),
            }
        }
        out
    }

    /// `dimensions`: an object whose every value is `{score, reason}`, the
    /// score an integer from 0 to 100. Absent or null is no rating here;
    /// whether every dimension asked was rated is `dimensions::missing`'s
    /// question.
    fn dimensions(&mut self, obj: &Map<String, Value>) -> BTreeMap<String, DimensionScore> {
        const NAME_CHARS: usize = 100;
        let mut out = BTreeMap::new();
        let map = match obj.get("dimensions") {
            None | Some(Value::Null) => return out,
            Some(Value::Object(map)) => map,
            Some(other) => {
                self.wrong_type(
                    "dimensions",
                    "an object of {\"score\", \"reason\"} by dimension name",
                    other,
                );
                return out;
            }
        };
        if map.len() > MAX_LIST_ITEMS {
            self.problem(
                "dimensions",
                format!(
                    "has {} entries; at most {MAX_LIST_ITEMS}: rate the dimensions asked for",
                    map.len()
                ),
            );
            return out;
        }
        for (name, value) in map {
            if name.chars().count() > NAME_CHARS || name.trim().is_empty() {
                let shown: String = name.chars().take(40).collect();
                self.problem(
                    "dimensions",
                    format!("{shown:?} is not a dimension name: use the names asked for"),
                );
                continue;
            }
            let at = format!("dimensions.{name}");
            let Value::Object(o) = value else {
                self.wrong_type(
                    &at,
                    "an object {\"score\": 0-100, \"reason\": \"…\"}",
                    value,
                );
                continue;
            };
            let score = self.score(o, &at);
            let reason = self.optional_string(o, "reason", &at).unwrap_or_default();
            if let Some(score) = score {
                out.insert(name.clone(), DimensionScore { score, reason });
            }
        }
        out
    }

    /// A dimension's score: an integer from 0 to 100, nothing else (not a
    /// string, not 85.5, not 101).
    fn score(&mut self, o: &Map<String, Value>, path: &str) -> Option<u32> {
        let at = join(path, "score");
        let expected = "an integer from 0 to 100";
        match o.get("score") {
            None => {
                self.problem(at, format!("is required ({expected})"));
                None
            }
            Some(Value::Number(n)) => match n.as_u64() {
                Some(score) if score <= 100 => Some(score as u32),
                _ => {
                    self.problem(at, format!("expected {expected}, got {n}"));
                    None
                }
            },
            Some(other) => {
                self.wrong_type(&at, expected, other);
                None
            }
        }
    }

    /// `rejection`: `{kind, reason}` or null.
    fn rejection(&mut self, obj: &Map<String, Value>) -> Option<Rejection> {
        match obj.get("rejection") {
            None | Some(Value::Null) => None,
            Some(Value::Object(o)) => {
                let kind = self.required_enum(
                    o,
                    "kind",
                    "rejection",
                    &RejectionKind::ALL,
                    RejectionKind::as_str,
                );
                let reason = self
                    .optional_string(o, "reason", "rejection")
                    .unwrap_or_default();
                kind.map(|kind| Rejection { kind, reason })
            }
            Some(other) => {
                self.wrong_type(
                    "rejection",
                    "an object {\"kind\": \"implementation\" or \"plan\", \"reason\": \"…\"} or null",
                    other,
                );
                None
            }
        }
    }

    fn strings(&mut self, obj: &Map<String, Value>, key: &str) -> Vec<String> {
        match obj.get(key) {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(items)) => {
                if !self.short_enough(key, items) {
                    return Vec::new();
                }
                let mut out = Vec::with_capacity(items.len());
                for (i, v) in items.iter().enumerate() {
                    match v {
                        Value::String(s) => {
                            if let Some(s) = self.text(&format!("{key}[{i}]"), s) {
                                out.push(s);
                            }
                        }
                        other => self.wrong_type(&format!("{key}[{i}]"), "a string", other),
                    }
                }
                out
            }
            Some(other) => {
                self.wrong_type(key, "an array of strings", other);
                Vec::new()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A realistic answer from a local coder model: capitalised enums, a
    /// line as a string, nulls for optional fields, an extra key.
    fn realistic() -> Value {
        json!({
            "verdict": "Request Changes",
            "expectations": "The catalog search returns books with their availability status.",
            "criteria": [
                {"id": "AC-1", "status": "MET", "evidence": "src/catalog.rs:40"},
                {"id": "AC-2", "status": "Unverifiable", "evidence": null}
            ],
            "spec_verification": [{
                "spec_quote": "Users can search for books and see real-time availability status",
                "spec_section": "Library Catalog",
                "satisfied": false,
                "evidence": "src/catalog.rs:40",
                "notes": null
            }],
            "missing_from_spec": [{"spec_quote": "Results are paginated", "description": "no pagination"}],
            "out_of_scope": [{"file": "src/admin.rs", "line": "12", "description": "admin panel"}],
            "issues": [
                {"severity": "Critical", "file": "src/catalog.rs", "line": 41, "message": "SQL built by string concatenation", "suggestion": "use a bound parameter"},
                {"severity": "nit", "file": null, "line": null, "message": "typo in comment", "suggestion": null}
            ],
            "strengths": ["small diff"],
            "confidence": 0.8
        })
    }

    #[test]
    fn accepts_a_realistic_answer() {
        let v = validate(&realistic()).expect("valid");
        assert_eq!(v.verdict, Kind::RequestChanges);
        assert_eq!(v.criteria[0].status, CriterionStatus::Met);
        assert_eq!(v.criteria[1].status, CriterionStatus::Unverifiable);
        assert_eq!(v.criteria[1].evidence, "");
        assert_eq!(v.out_of_scope[0].line, Some(12));
        assert_eq!(v.issues[0].severity, Severity::Critical);
        assert_eq!(v.issues[1].file, None);
        assert_eq!(v.issues[1].suggestion, "");
        assert_eq!(v.strengths, vec!["small diff".to_string()]);
    }

    #[test]
    fn a_line_may_be_a_range() {
        let mut v = realistic();
        v["issues"][0]["line"] = json!("42-50");
        v["out_of_scope"][0]["line"] = json!(" 7 \u{2013} 9 ");
        v["issues"][1]["line"] = json!("12");
        let v = validate(&v).unwrap();
        assert_eq!(
            (v.issues[0].line, v.issues[0].end_line),
            (Some(42), Some(50))
        );
        assert_eq!(
            (v.out_of_scope[0].line, v.out_of_scope[0].end_line),
            (Some(7), Some(9))
        );
        assert_eq!((v.issues[1].line, v.issues[1].end_line), (Some(12), None));

        let mut bad = realistic();
        bad["issues"][0]["line"] = json!("50-42");
        let problems = validate(&bad).unwrap_err();
        assert_eq!(
            problems[0].to_string(),
            "issues[0].line: the range \"50-42\" ends before it starts"
        );
    }

    #[test]
    fn enums_match_whatever_the_case_and_separators() {
        for spelling in ["approve", "Approve", "APPROVE"] {
            let mut v = realistic();
            v["verdict"] = json!(spelling);
            assert_eq!(validate(&v).unwrap().verdict, Kind::Approve, "{spelling}");
        }
        for spelling in [
            "request_changes",
            "REQUEST_CHANGES",
            "request changes",
            "Request-Changes",
            "requestChanges",
        ] {
            let mut v = realistic();
            v["verdict"] = json!(spelling);
            assert_eq!(
                validate(&v).unwrap().verdict,
                Kind::RequestChanges,
                "{spelling}"
            );
        }
    }

    #[test]
    fn optional_lists_default_to_empty() {
        let v = validate(&json!({
            "verdict": "approve", "expectations": "", "criteria": [],
            "spec_verification": [], "issues": []
        }))
        .unwrap();
        assert!(
            v.missing_from_spec.is_empty() && v.out_of_scope.is_empty() && v.strengths.is_empty()
        );
        assert_eq!(v.defect_scope_check, None);
    }

    #[test]
    fn missing_required_fields_are_each_reported() {
        let problems = validate(&json!({"verdict": "approve", "issues": []})).unwrap_err();
        let paths: Vec<&str> = problems.iter().map(|p| p.path.as_str()).collect();
        assert_eq!(paths, ["expectations", "criteria", "spec_verification"]);
        assert!(
            problems
                .iter()
                .all(|p| p.message.starts_with("is required"))
        );
    }

    #[test]
    fn every_problem_is_collected_with_its_path() {
        let mut v = realistic();
        v["verdict"] = json!("maybe");
        v["criteria"][1]["status"] = json!(true);
        v["spec_verification"][0]["satisfied"] = json!("yes");
        v["issues"][1]["severity"] = json!("high");
        v["issues"][0]["line"] = json!("forty");
        v["issues"][0].as_object_mut().unwrap().remove("message");
        v["strengths"] = json!("good");
        let problems = validate(&v).unwrap_err();
        let shown: Vec<String> = problems.iter().map(ToString::to_string).collect();
        assert_eq!(
            shown,
            [
                "verdict: expected one of approve, request_changes, got \"maybe\"",
                "criteria[1].status: expected one of met, unmet, unverifiable, got a boolean true",
                "spec_verification[0].satisfied: expected true or false, got a string \"yes\"",
                "issues[0].line: expected a line number (an integer, a numeric string or a range like \"42-50\") or null, got \"forty\"",
                "issues[0].message: is required",
                "issues[1].severity: expected one of critical, major, minor, nit, got \"high\"",
                "strengths: expected an array of strings, got a string \"good\"",
            ]
        );
    }

    #[test]
    fn wrong_container_types() {
        let problems = validate(&json!(["approve"])).unwrap_err();
        assert_eq!(
            problems[0].to_string(),
            "(root): expected a JSON object, got an array [\"approve\"]"
        );
        let mut v = realistic();
        v["issues"] = json!({"severity": "major"});
        v["criteria"] = json!(["AC-1"]);
        v["defect_scope_check"] = json!({"scope_ok": true});
        let paths: Vec<String> = validate(&v)
            .unwrap_err()
            .into_iter()
            .map(|p| p.path)
            .collect();
        assert_eq!(
            paths,
            ["criteria[0]", "issues", "defect_scope_check.large_diff"]
        );
    }

    #[test]
    fn empty_spec_quote_and_negative_line_are_problems() {
        let mut v = realistic();
        v["spec_verification"][0]["spec_quote"] = json!("  ");
        v["out_of_scope"][0]["line"] = json!(-3);
        let problems = validate(&v).unwrap_err();
        assert_eq!(problems[0].path, "spec_verification[0].spec_quote");
        assert_eq!(problems[0].message, "must not be empty");
        assert_eq!(problems[1].path, "out_of_scope[0].line");
    }

    #[test]
    fn an_answer_too_long_to_read_is_a_problem_not_a_review() {
        let mut answer = realistic();
        let quote = json!({"spec_quote": "q", "satisfied": true, "evidence": "a.rs:1"});
        answer["spec_verification"] = Value::Array(vec![quote; MAX_LIST_ITEMS + 1]);
        answer["strengths"] = json!(["x".repeat(MAX_TEXT_CHARS + 1)]);
        let problems = validate(&answer).unwrap_err();
        assert!(
            problems.iter().any(|p| p.path == "spec_verification"
                && p.message
                    .starts_with(&format!("has {} entries", MAX_LIST_ITEMS + 1))),
            "{problems:?}"
        );
        assert!(
            problems
                .iter()
                .any(|p| p.path == "strengths[0]" && p.message.contains("characters long")),
            "{problems:?}"
        );
        // At the limits, the same answer is fine.
        answer["spec_verification"] = Value::Array(vec![
            json!({"spec_quote": "q", "satisfied": true, "evidence": "a.rs:1"});
            MAX_LIST_ITEMS
        ]);
        answer["strengths"] = json!(["x".repeat(MAX_TEXT_CHARS)]);
        assert!(validate(&answer).is_ok());
    }

    #[test]
    fn a_correction_lists_a_bounded_number_of_problems() {
        let problems: Vec<Problem> = (0..500)
            .map(|i| Problem {
                path: format!("issues[{i}].severity"),
                message: "is required".into(),
            })
            .collect();
        let text = correction(&Error::Invalid { problems });
        assert!(text.contains("issues[39].severity"));
        assert!(!text.contains("issues[40].severity"));
        assert!(text.contains("…and 460 more problems"));
    }

    #[test]
    fn defect_fields_are_read() {
        let mut v = realistic();
        v["defect_scope_check"] = json!({"scope_ok": false, "large_diff": true});
        v["scope_violations"] = json!([{"file": "src/x.rs", "description": "unrelated refactor"}]);
        let v = validate(&v).unwrap();
        assert_eq!(
            v.defect_scope_check,
            Some(DefectScopeCheck {
                scope_ok: false,
                large_diff: true
            })
        );
        assert_eq!(v.scope_violations[0].file, "src/x.rs");
    }

    #[test]
    fn dimensions_rejection_and_an_issues_dimension_are_read_strictly() {
        let mut v = realistic();
        v["dimensions"] = json!({"code_quality": {"score": 82, "reason": "clear"},
                                 "test_quality": {"score": 0, "reason": null}});
        v["rejection"] = json!({"kind": "Plan", "reason": "AC-2 contradicts the spec"});
        v["issues"][0]["dimension"] = json!("security_performance");
        let ok = validate(&v).unwrap();
        assert_eq!(ok.dimensions["code_quality"].score, 82);
        assert_eq!(ok.dimensions["test_quality"].reason, "");
        assert_eq!(ok.rejection.unwrap().kind, RejectionKind::Plan);
        assert_eq!(
            ok.issues[0].dimension.as_deref(),
            Some("security_performance")
        );
        assert_eq!(ok.issues[1].dimension, None);

        v["dimensions"] = json!({"a": {"score": "82"}, "b": {"score": 100.0}, "c": 7,
                                 "d": {"score": true}, "e": {}});
        v["rejection"] = json!("plan");
        let shown: Vec<String> = validate(&v)
            .unwrap_err()
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            shown,
            [
                "dimensions.a.score: expected an integer from 0 to 100, got a string \"82\"",
                "dimensions.b.score: expected an integer from 0 to 100, got 100.0",
                "dimensions.c: expected an object {\"score\": 0-100, \"reason\": \"…\"}, got a number 7",
                "dimensions.d.score: expected an integer from 0 to 100, got a boolean true",
                "dimensions.e.score: is required (an integer from 0 to 100)",
                "rejection: expected an object {\"kind\": \"implementation\" or \"plan\", \"reason\": \"…\"} or null, got a string \"plan\"",
            ]
        );
    }

    #[test]
    fn guardian_answers() {
        let g = validate_guardian(&json!({
            "status": "FLAGGED", "summary": "Serves the mission, but adds an admin surface.",
            "flags": [{"severity": "Minor", "description": "admin panel not in vision", "spec_reference": null}]
        }))
        .unwrap();
        assert_eq!(g.status, GuardianStatus::Flagged);
        assert_eq!(g.flags[0].severity, Severity::Minor);
        assert_eq!(g.flags[0].spec_reference, "");

        let g = validate_guardian(&json!({"status": "aligned", "summary": "fine"})).unwrap();
        assert!(g.flags.is_empty());

        let problems = validate_guardian(&json!({"status": "ok", "flags": [{"severity": "low"}]}))
            .unwrap_err();
        let shown: Vec<String> = problems.iter().map(ToString::to_string).collect();
        assert_eq!(
            shown,
            [
                "status: expected one of aligned, flagged, rejected, got \"ok\"",
                "summary: is required",
                "flags[0].severity: expected one of critical, major, minor, nit, got \"low\"",
                "flags[0].description: is required",
            ]
        );
    }

    #[test]
    fn correction_lists_problems_and_restates_the_rule() {
        let problems = vec![
            Problem {
                path: "issues[2].severity".into(),
                message: "expected one of critical, major, minor, nit, got \"high\"".into(),
            },
            Problem {
                path: "expectations".into(),
                message: "is required".into(),
            },
        ];
        let text = correction(&Error::Invalid { problems });
        assert!(text.contains(
            "- issues[2].severity: expected one of critical, major, minor, nit, got \"high\"\n"
        ));
        assert!(text.contains("- expectations: is required\n"));
        assert!(text.contains("ONE JSON object"));
        assert!(text.contains("no prose"));

        let text = correction(&Error::Malformed {
            at: 12,
            message: "trailing comma at line 3 column 1".into(),
        });
        assert!(text.contains(
            "- JSON object at char 12 is malformed: trailing comma at line 3 column 1\n"
        ));
        assert!(text.contains("ONE JSON object"));
    }
}
