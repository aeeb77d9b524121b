//! The verdict: what the model must answer, finding that answer in the text
//! a model really returns, strict validation, the corrective message for one
//! retry, merging the verdicts of a review done in parts, the check of every
//! cited location, speed's own final decision, and the feedback text for the
//! developer. Text in, plain data out: this part knows nothing of HTTP,
//! providers, files or git; the caller passes in the spec quote lookup and
//! the files at the head commit.

mod brackets;
#[cfg(test)]
mod corpus;
mod decide;
pub mod defect;
pub mod dimensions;
mod documents;
mod evidence;
mod extract;
mod feedback;
mod merge;
pub mod previous;
pub mod reconcile;
mod schema;
mod strict;
mod validate;

pub use decide::{
    Decision, DecisionInput, Overrule, QuoteCheck, QuoteHit, QuoteMiss, Rule, decide,
};
pub use dimensions::{Dimension, Scores, Scoring};
pub use documents::{DRAFT, guardian_document, verdict_document};
pub use evidence::{Citation, Sources};
pub use extract::{extract, extract_with_key};
pub use feedback::{feedback, guardian_feedback};
pub use merge::merge;
pub use schema::{
    CriterionCheck, CriterionStatus, DefectScopeCheck, DimensionScore, Flag, GuardianStatus,
    GuardianVerdict, Issue, Kind, Missing, OutOfScope, PreviousClaim, PreviousStatus, Rejection,
    RejectionKind, ScopeViolation, Severity, SpecCheck, Verdict, guardian_json_schema, json_schema,
    with_dimensions,
};
pub use validate::{Problem, correction, validate, validate_guardian};

/// Why a model's answer could not be turned into a verdict. Each variant is
/// also what `correction` tells the model on the retry.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Error {
    #[error("no JSON object found in the model's answer: saw {seen}")]
    NoObject { seen: String },
    /// `at` is the 1-based character position of the object's `{` in the
    /// answer; serde's line and column in `message` count from that brace.
    #[error("JSON object at char {at} is malformed: {message}")]
    Malformed { at: usize, message: String },
    /// Two answer objects that differ, or a key held twice with different
    /// values: speed never guesses which one the model meant.
    #[error("the model's answer is ambiguous: {reason}")]
    Ambiguous { reason: String },
    /// Extraction gave up before it could tell which object is the answer.
    #[error("the model's answer could not be read: {reason}")]
    Unreadable { reason: String },
    #[error("the model's answer does not match the schema: {}", list(problems))]
    Invalid { problems: Vec<Problem> },
}

fn list(problems: &[Problem]) -> String {
    problems
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("; ")
}

impl From<Vec<Problem>> for Error {
    fn from(problems: Vec<Problem>) -> Self {
        Error::Invalid { problems }
    }
}

/// What an answer must hold besides the verdict schema.
#[derive(Debug, Clone, Copy, Default)]
pub struct Expect<'a> {
    /// A defect-fix review: `defect_scope_check` and `scope_violations`.
    pub defect: bool,
    /// The quality dimensions the answer must rate, by name.
    pub dimensions: &'a [&'a str],
    /// A re-review: the previous findings the answer must rate (`PF-1`, …).
    pub previous: &'a [&'a str],
}

/// The reviewer's answer: extract, then validate.
pub fn parse(raw: &str) -> Result<Verdict, Error> {
    parse_expecting(raw, &Expect::default())
}

/// A defect-fix reviewer's answer: extract, require `defect_scope_check`
/// and `scope_violations`, then validate.
pub fn parse_defect(raw: &str) -> Result<Verdict, Error> {
    parse_expecting(
        raw,
        &Expect {
            defect: true,
            dimensions: &[],
            previous: &[],
        },
    )
}

/// An answer with what `expect` requires: every problem of the schema and
/// every requirement missed, reported together so one corrective retry can
/// mend them all.
pub fn parse_expecting(raw: &str, expect: &Expect) -> Result<Verdict, Error> {
    let value = extract(raw)?;
    let mut missing = if expect.defect {
        defect::missing_fields(&value)
    } else {
        Vec::new()
    };
    missing.extend(dimensions::missing(&value, expect.dimensions));
    missing.extend(previous::missing(&value, expect.previous));
    match validate(&value) {
        Ok(verdict) if missing.is_empty() => Ok(dimensions::canonical(verdict, expect.dimensions)),
        Ok(_) => Err(missing.into()),
        Err(mut problems) => {
            problems.extend(missing);
            Err(problems.into())
        }
    }
}

/// The guardian's answer: extract (the object with a `status` key), then
/// validate.
pub fn parse_guardian(raw: &str) -> Result<GuardianVerdict, Error> {
    Ok(validate_guardian(&extract_with_key(raw, "status")?)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_a_qwen_style_answer_end_to_end() {
        let raw = r#"<think>
The spec says "Users can search for books". The diff adds search. {not json}
</think>

Here is my review:

```json
{
  "verdict": "APPROVE",
  "expectations": "Search returns books with availability.",
  "criteria": [{"id": "AC-1", "status": "Met", "evidence": "tests/search.rs:8"}],
  "spec_verification": [{"spec_quote": "Users can search for books", "spec_section": "Library Catalog", "satisfied": true, "evidence": "src/catalog.rs:15", "notes": ""}],
  "issues": [{"severity": "Nit", "file": "src/catalog.rs", "line": "28", "message": "rename", "suggestion": "find_books"}]
}
```
"#;
        let v = parse(raw).expect("parses");
        assert_eq!(v.verdict, Kind::Approve);
        assert_eq!(v.issues[0].line, Some(28));
    }

    #[test]
    fn parse_reports_schema_problems_as_invalid() {
        let err = parse(r#"{"verdict": "lgtm", "expectations": "", "criteria": [], "spec_verification": [], "issues": []}"#)
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "the model's answer does not match the schema: verdict: expected one of approve, request_changes, got \"lgtm\""
        );
        assert!(
            correction(&err)
                .contains("- verdict: expected one of approve, request_changes, got \"lgtm\"")
        );
    }

    #[test]
    fn parse_guardian_skips_a_reviewer_object() {
        let raw = r#"Previous verdict: {"verdict": "approve"}
Guardian: {"status": "rejected", "summary": "Out of the product's scope.", "flags": []}"#;
        let g = parse_guardian(raw).unwrap();
        assert_eq!(g.status, GuardianStatus::Rejected);
        assert_eq!(g.summary, "Out of the product's scope.");
    }
}
