//! The shapes the models must answer in: the reviewer's verdict and the
//! guardian's, as typed data that serialises back to the contract's snake_case
//! form, plus the JSON Schemas sent to providers that support structured output.
//! Parsing lenient model text into these types is `extract` and `validate`'s
//! job, not this module's.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

pub use crate::severity::Severity;
use serde_json::{Value, json};

/// The two verdicts a review can end in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    Approve,
    RequestChanges,
    /// An offline review found nothing blocking: speed's own checks passed,
    /// no model judged the spec (never an approval; never the model's word).
    #[serde(skip_deserializing)]
    ChecksPassed,
}

impl Kind {
    pub const ALL: [Kind; 2] = [Kind::Approve, Kind::RequestChanges];

    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Approve => "approve",
            Kind::RequestChanges => "request_changes",
            Kind::ChecksPassed => "checks_passed",
        }
    }
}

impl std::fmt::Display for Kind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CriterionStatus {
    Met,
    Unmet,
    Unverifiable,
}

impl CriterionStatus {
    pub const ALL: [CriterionStatus; 3] = [
        CriterionStatus::Met,
        CriterionStatus::Unmet,
        CriterionStatus::Unverifiable,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            CriterionStatus::Met => "met",
            CriterionStatus::Unmet => "unmet",
            CriterionStatus::Unverifiable => "unverifiable",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GuardianStatus {
    Aligned,
    Flagged,
    Rejected,
}

impl GuardianStatus {
    pub const ALL: [GuardianStatus; 3] = [
        GuardianStatus::Aligned,
        GuardianStatus::Flagged,
        GuardianStatus::Rejected,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            GuardianStatus::Aligned => "aligned",
            GuardianStatus::Flagged => "flagged",
            GuardianStatus::Rejected => "rejected",
        }
    }
}

/// The reviewer's answer, as validated. Optional text the model left out is
/// an empty string, so reports always carry every key of the contract.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Verdict {
    pub verdict: Kind,
    pub expectations: String,
    pub criteria: Vec<CriterionCheck>,
    pub spec_verification: Vec<SpecCheck>,
    #[serde(default)]
    pub missing_from_spec: Vec<Missing>,
    #[serde(default)]
    pub out_of_scope: Vec<OutOfScope>,
    pub issues: Vec<Issue>,
    #[serde(default)]
    pub strengths: Vec<String>,
    /// Only defect-fix reviews carry these two.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub defect_scope_check: Option<DefectScopeCheck>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scope_violations: Vec<ScopeViolation>,
    /// A score from 0 to 100 and a reason per quality dimension, keyed by
    /// the dimension's name (speed's names once `dimensions::canonical`
    /// has matched the model's spelling).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub dimensions: BTreeMap<String, DimensionScore>,
    /// What a request for changes asks for: a new implementation, or a new
    /// plan. None when the model did not say (an implementation rejection).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rejection: Option<Rejection>,
    /// A re-review: what became of each blocking finding of the previous
    /// review (`PF-1`, `PF-2`, …), as the model says.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub previous_findings: Vec<PreviousClaim>,
}

/// What became of a previous review's blocking finding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PreviousStatus {
    Resolved,
    Unresolved,
    /// It no longer applies (its code or its requirement is gone).
    Obsolete,
}

impl PreviousStatus {
    pub const ALL: [PreviousStatus; 3] = [
        PreviousStatus::Resolved,
        PreviousStatus::Unresolved,
        PreviousStatus::Obsolete,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            PreviousStatus::Resolved => "resolved",
            PreviousStatus::Unresolved => "unresolved",
            PreviousStatus::Obsolete => "obsolete",
        }
    }
}

/// The model's word on one previous finding.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PreviousClaim {
    /// `PF-1`, …, as the prompt listed them.
    pub id: String,
    pub status: PreviousStatus,
    pub evidence: String,
}

/// The model's rating of one quality dimension.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DimensionScore {
    pub score: u32,
    #[serde(default)]
    pub reason: String,
}

/// What a rejection sends back: the work (`implementation`), or the plan
/// the work followed (`plan`), to whoever plans the task.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RejectionKind {
    Implementation,
    Plan,
}

impl RejectionKind {
    pub const ALL: [RejectionKind; 2] = [RejectionKind::Implementation, RejectionKind::Plan];

    pub fn as_str(self) -> &'static str {
        match self {
            RejectionKind::Implementation => "implementation",
            RejectionKind::Plan => "plan",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rejection {
    pub kind: RejectionKind,
    #[serde(default)]
    pub reason: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CriterionCheck {
    pub id: String,
    pub status: CriterionStatus,
    #[serde(default)]
    pub evidence: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SpecCheck {
    pub spec_quote: String,
    #[serde(default)]
    pub spec_section: String,
    pub satisfied: bool,
    #[serde(default)]
    pub evidence: String,
    #[serde(default)]
    pub notes: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Missing {
    #[serde(default)]
    pub spec_quote: String,
    #[serde(default)]
    pub description: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OutOfScope {
    #[serde(default)]
    pub file: String,
    #[serde(default)]
    pub line: Option<u64>,
    /// The last line when the model gave a range (`"42-50"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_line: Option<u64>,
    #[serde(default)]
    pub description: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Issue {
    pub severity: Severity,
    #[serde(default)]
    pub file: Option<String>,
    #[serde(default)]
    pub line: Option<u64>,
    /// The last line when the model gave a range (`"42-50"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_line: Option<u64>,
    pub message: String,
    #[serde(default)]
    pub suggestion: String,
    /// The quality dimension the issue bears on, when the model named one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dimension: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct DefectScopeCheck {
    pub scope_ok: bool,
    pub large_diff: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScopeViolation {
    #[serde(default)]
    pub file: String,
    #[serde(default)]
    pub description: String,
}

/// The guardian's answer, as validated.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GuardianVerdict {
    pub status: GuardianStatus,
    pub summary: String,
    #[serde(default)]
    pub flags: Vec<Flag>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Flag {
    pub severity: Severity,
    pub description: String,
    #[serde(default)]
    pub spec_reference: String,
}

fn names<T: Copy>(all: &[T], name: fn(T) -> &'static str) -> Value {
    Value::Array(all.iter().map(|v| Value::from(name(*v))).collect())
}

/// An object schema in the form OpenAI strict mode demands: every property
/// required (optional ones are nullable instead) and no extra keys.
fn object(properties: Value) -> Value {
    let required: Vec<Value> = properties
        .as_object()
        .map(|p| p.keys().map(|k| Value::from(k.as_str())).collect())
        .unwrap_or_default();
    json!({
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": false,
    })
}

fn nullable_string() -> Value {
    json!({"type": ["string", "null"]})
}

fn nullable_line() -> Value {
    json!({"type": ["integer", "null"], "description": "1-based line in the file on the task branch"})
}

/// The JSON Schema of the reviewer's verdict, in the subset that OpenAI's
/// `response_format: json_schema` strict mode accepts. A defect fix's adds
/// its scope check (`defect::json_schema`); a review's never asks for it.
pub fn json_schema() -> Value {
    object(json!({
        "verdict": {"type": "string", "enum": names(&Kind::ALL, Kind::as_str)},
        "expectations": {
            "type": "string",
            "description": "What the spec says this change should do, written before reading the diff"
        },
        "criteria": {"type": "array", "items": object(json!({
            "id": {"type": "string", "description": "The acceptance criterion id, e.g. AC-1"},
            "status": {"type": "string", "enum": names(&CriterionStatus::ALL, CriterionStatus::as_str)},
            "evidence": {"type": "string", "description": "file:line, or why it cannot be verified"},
        }))},
        "spec_verification": {"type": "array", "items": object(json!({
            "spec_quote": {"type": "string", "description": "Exact text copied from the spec"},
            "spec_section": {"type": "string"},
            "satisfied": {"type": "boolean"},
            "evidence": {"type": "string", "description": "file:line"},
            "notes": {"type": "string"},
        }))},
        "missing_from_spec": {"type": "array", "items": object(json!({
            "spec_quote": {"type": "string", "description": "Exact text copied from the spec"},
            "description": {"type": "string", "description": "What is not implemented"},
        }))},
        "out_of_scope": {"type": "array", "items": object(json!({
            "file": {"type": "string"},
            "line": nullable_line(),
            "description": {"type": "string", "description": "Code no spec line asks for"},
        }))},
        "issues": {"type": "array", "items": object(json!({
            "severity": {"type": "string", "enum": names(&Severity::ALL, Severity::as_str)},
            "file": nullable_string(),
            "line": nullable_line(),
            "message": {"type": "string"},
            "suggestion": {"type": "string"},
            "dimension": {"type": ["string", "null"], "description": "The quality dimension the issue bears on, or null"},
        }))},
        "strengths": {"type": "array", "items": {"type": "string"}},
        "rejection": {"anyOf": [
            object(json!({
                "kind": {"type": "string", "enum": names(&RejectionKind::ALL, RejectionKind::as_str),
                         "description": "implementation: the work must change; plan: the task itself is planned wrong"},
                "reason": {"type": "string"},
            })),
            {"type": "null"},
        ], "description": "With request_changes: what the rejection asks for; null with approve"},
    }))
}

/// `schema` with a `dimensions` object asking for a score and a reason for
/// each of `asked` (name and description): the dimensions a review rates,
/// listed with what each covers. One rating shape is defined once and
/// referred to, so each dimension costs the prompt a line, not a schema.
/// Without any dimension, the schema is unchanged.
pub fn with_dimensions(mut schema: Value, asked: &[(&str, &str)]) -> Value {
    if asked.is_empty() {
        return schema;
    }
    let mut properties = serde_json::Map::new();
    let mut covers = String::from(
        "Rate every dimension with an integer score from 0 to 100 and a one-line reason.",
    );
    for (name, description) in asked {
        properties.insert((*name).to_string(), json!({"$ref": "#/$defs/rating"}));
        if !description.trim().is_empty() {
            covers.push_str(&format!(" {name}: {}", description.trim()));
        }
    }
    let mut dimensions = object(Value::Object(properties));
    if let Value::Object(map) = &mut dimensions {
        map.insert("description".to_string(), Value::from(covers));
    }
    if let Some(Value::Object(props)) = schema.get_mut("properties") {
        props.insert("dimensions".to_string(), dimensions);
    }
    if let Some(Value::Array(required)) = schema.get_mut("required") {
        required.push(Value::from("dimensions"));
    }
    if let Value::Object(root) = &mut schema {
        root.insert(
            "$defs".to_string(),
            json!({"rating": object(json!({
                "score": {"type": "integer"},
                "reason": {"type": "string"},
            }))}),
        );
    }
    schema
}

/// The JSON Schema of the guardian's answer, same subset as `json_schema`.
pub fn guardian_json_schema() -> Value {
    object(json!({
        "status": {"type": "string", "enum": names(&GuardianStatus::ALL, GuardianStatus::as_str)},
        "summary": {"type": "string"},
        "flags": {"type": "array", "items": object(json!({
            "severity": {"type": "string", "enum": names(&Severity::ALL, Severity::as_str)},
            "description": {"type": "string"},
            "spec_reference": nullable_string(),
        }))},
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Walks a schema and checks the strict-mode rules on every object.
    fn assert_strict(schema: &Value, path: &str) {
        if let Some(obj) = schema.as_object() {
            let is_object = obj.get("type") == Some(&json!("object"));
            if is_object {
                let props = obj["properties"]
                    .as_object()
                    .expect("object has properties");
                let required: Vec<&str> = obj["required"]
                    .as_array()
                    .expect("object has required")
                    .iter()
                    .map(|v| v.as_str().expect("required names are strings"))
                    .collect();
                let keys: Vec<&str> = props.keys().map(String::as_str).collect();
                assert_eq!(keys, required, "{path}: every property must be required");
                assert_eq!(obj["additionalProperties"], json!(false), "{path}");
                for (k, v) in props {
                    assert_strict(v, &format!("{path}.{k}"));
                }
            }
            if let Some(items) = obj.get("items") {
                assert_strict(items, &format!("{path}[]"));
            }
            if let Some(any) = obj.get("anyOf").and_then(Value::as_array) {
                for v in any {
                    assert_strict(v, path);
                }
            }
        }
    }

    #[test]
    fn dimensions_are_required_each_rated_by_one_shared_shape() {
        let s = with_dimensions(
            json_schema(),
            &[("code_quality", "Readable code."), ("custom_one", "")],
        );
        assert_strict(&s, "verdict");
        assert_strict(&s["$defs"]["rating"], "rating");
        let dims = &s["properties"]["dimensions"];
        assert_eq!(dims["required"], json!(["code_quality", "custom_one"]));
        assert_eq!(
            dims["properties"]["custom_one"],
            json!({"$ref": "#/$defs/rating"})
        );
        assert!(
            dims["description"]
                .as_str()
                .unwrap()
                .contains("code_quality: Readable code.")
        );
        assert!(
            s["required"]
                .as_array()
                .unwrap()
                .contains(&json!("dimensions"))
        );
        assert_eq!(with_dimensions(json_schema(), &[]), json_schema());
    }

    #[test]
    fn schemas_follow_strict_mode_rules() {
        assert_strict(&json_schema(), "verdict");
        assert_strict(&guardian_json_schema(), "guardian");
        let s = json_schema();
        assert_eq!(
            s["properties"]["verdict"]["enum"],
            json!(["approve", "request_changes"])
        );
        assert_eq!(
            s["properties"]["issues"]["items"]["properties"]["severity"]["enum"],
            json!(["critical", "major", "minor", "nit"])
        );
        assert_eq!(
            guardian_json_schema()["properties"]["status"]["enum"],
            json!(["aligned", "flagged", "rejected"])
        );
    }

    #[test]
    fn verdict_serialises_in_contract_form() {
        let v = Verdict {
            verdict: Kind::RequestChanges,
            expectations: "search returns availability".into(),
            criteria: vec![CriterionCheck {
                id: "AC-1".into(),
                status: CriterionStatus::Unverifiable,
                evidence: "no test".into(),
            }],
            spec_verification: vec![],
            missing_from_spec: vec![],
            out_of_scope: vec![],
            issues: vec![Issue {
                severity: Severity::Major,
                file: Some("src/a.rs".into()),
                line: Some(3),
                end_line: None,
                message: "m".into(),
                suggestion: "s".into(),
                dimension: None,
            }],
            strengths: vec![],
            defect_scope_check: None,
            scope_violations: vec![],
            dimensions: Default::default(),
            rejection: None,
            previous_findings: Vec::new(),
        };
        let out = serde_json::to_value(&v).expect("serialises");
        assert_eq!(out["verdict"], "request_changes");
        assert_eq!(out["criteria"][0]["status"], "unverifiable");
        assert_eq!(out["issues"][0]["severity"], "major");
        assert_eq!(out["issues"][0]["line"], 3);
        assert!(
            out.get("defect_scope_check").is_none(),
            "only defect reviews carry it"
        );
        let back: Verdict = serde_json::from_value(out).expect("round-trips");
        assert_eq!(back, v);
    }
}
