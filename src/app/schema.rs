//! `speed schema KIND`: a JSON Schema (2020-12) on stdout, from the part
//! that reads or writes the document (the verdict's answers, the spec
//! review's answer, the task file, the report).

use super::out;
use crate::exit::Outcome;
use crate::settings::SchemaKind;
use crate::{ledger, spec_review, tasks, verdict};

pub fn schema_command(kind: SchemaKind) -> anyhow::Result<Outcome> {
    let document = match kind {
        SchemaKind::Verdict => verdict::verdict_document(),
        SchemaKind::Guardian => verdict::guardian_document(),
        SchemaKind::SpecReview => spec_review::answer_document(&spec_review::default_criteria(
            spec_review::DEFAULT_MIN_SCORE,
        )),
        SchemaKind::Task => tasks::document::document(),
        SchemaKind::Report => ledger::document::document(),
    };
    let mut text = serde_json::to_string_pretty(&document)?;
    text.push('\n');
    out(&text);
    Ok(Outcome::Approved)
}
