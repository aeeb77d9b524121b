//! The machine-readable output of the contract: always one JSON object on
//! stdout, `{"reviews": [...], "nits": [...]}`, whatever the number of tasks.

use serde_json::{Value, json};

use crate::ledger::Report;
use crate::ledger::nits::Nit;
use crate::review::Skipped;
use crate::review::dry::DryRun;

pub fn reviews(reports: &[Report], nits: &[Nit], skipped: &[Skipped]) -> String {
    let body = json!({
        "reviews": reports,
        "nits": nits,
        "skipped": skipped,
    });
    pretty(&body)
}

/// `reviews`, with what the provider's batch API did (`--batch-api`,
/// `--collect`) under `batches`, and what the user should know.
pub fn reviews_with_batches(
    reports: &[Report],
    nits: &[Nit],
    skipped: &[Skipped],
    batches: &[Value],
    notices: &[String],
) -> String {
    let body = json!({
        "reviews": reports,
        "nits": nits,
        "skipped": skipped,
        "batches": batches,
        "notices": notices,
    });
    pretty(&body)
}

pub fn dry_runs(runs: &[DryRun]) -> String {
    let reviews: Vec<Value> = runs
        .iter()
        .map(|run| match &run.result {
            Ok(prepared) => with_defect(run, json!({
                "task_id": run.task_id,
                "feature": run.feature,
                "branch": run.branch,
                "base_commit": prepared.base_commit,
                "head_commit": prepared.head_commit,
                "prompt": prepared.prompt,
                // A review in parts sums its parts: each is within the
                // budget, which the total alone would not say.
                "tokens": {
                    "total": prepared.total_tokens,
                    "budget": prepared.budget,
                    "summed_over_parts": prepared.part_list.len(),
                    "largest_part": prepared.part_list.iter().map(|p| p.tokens).max().unwrap_or(0),
                    // The prompt's stable prefix, which providers may cache.
                    "stable": prepared.part_list.first().map_or(0, |p| p.stable_tokens),
                },
                "parts": prepared.part_list,
                "sections": prepared.sections,
                "coverage": coverage(&prepared.coverage, prepared.parts),
                "hashes": {"diff": prepared.diff_hash, "spec": prepared.spec_hash, "prompt": prepared.prompt_hash},
                "notices": prepared.notices,
                "criteria": prepared.criteria.iter().map(|c| json!({
                    "id": c.id,
                    "criterion": c.text,
                    "verify_by": c.verify_by,
                })).collect::<Vec<Value>>(),
                "impact": prepared.impact.as_ref().map_or(json!([]), |i| json!(i)),
                "checks": prepared.checks,
                "redactions": prepared.redactions,
                "error": Value::Null,
            })),
            Err(why) if run.nothing_implemented => with_defect(run, json!({
                "task_id": run.task_id,
                "feature": run.feature,
                "branch": run.branch,
                "verdict": "request_changes",
                "notices": [format!("{why}: the review would request changes without calling a model")],
                "error": Value::Null,
            })),
            Err(err) => with_defect(run, json!({
                "task_id": run.task_id,
                "feature": run.feature,
                "branch": run.branch,
                "error": err,
            })),
        })
        .collect();
    pretty(&json!({"reviews": reviews, "nits": []}))
}

/// A defect's dry run names the defect and what speed established.
fn with_defect(run: &DryRun, mut entry: Value) -> Value {
    if let (Some(name), Value::Object(map)) = (&run.defect, &mut entry) {
        let findings = run.result.as_ref().ok().and_then(|p| p.defect.as_ref());
        map.insert(
            "defect".to_string(),
            json!({"name": name, "speed": findings}),
        );
    }
    entry
}

/// A dry run's coverage, in the form of a review report's: the diff's
/// counts and the number of parts.
fn coverage(c: &crate::prompt::Coverage, parts: usize) -> Value {
    let mut value = json!(c);
    value["parts"] = json!(parts);
    value
}

/// The object printed when no review could start at all.
pub fn failure(error: &str) -> String {
    pretty(&json!({"reviews": [], "nits": [], "error": error}))
}

/// The object `speed nits --json` prints when it fails.
pub fn nits_failure(error: &str) -> String {
    pretty(&json!({"nits": [], "error": error}))
}

pub fn nits(nits: &[Nit]) -> String {
    pretty(&json!({"nits": nits}))
}

fn pretty(value: &Value) -> String {
    let mut text = serde_json::to_string_pretty(value).unwrap_or_else(|_| "{}".to_string());
    text.push('\n');
    text
}
