//! Review report files under `.speed/reviews/`: one per review, named so
//! they sort by time and say whose review it is, never overwriting another
//! (two reviews of a task in the same millisecond get two files), each
//! with its Markdown summary beside it (`<report>.md`), both passed through
//! the secrets safety net as they are written.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::fsx;

use super::report::{Evidence, Report};
use super::{Error, REVIEWS_DIR, area, relative, slug};

/// Write the report file and its summary, and remember where, for the
/// output, the log and the task file.
pub fn save(root: &Path, report: &mut Report, evidence: &Evidence, now: &str) -> Result<(), Error> {
    let path = write_report(root, report, evidence, now)?;
    let summary = path.with_extension("md");
    report.report_path = Some(relative(root, &path));
    report.summary_path = Some(relative(root, &summary));
    let text = super::summary::markdown(report, evidence, now);
    let text = crate::secrets::net::text(&text).text;
    fsx::write_atomic(&area(root), &summary, text.as_bytes())?;
    // The file's name was its own to choose: now that it is known, the
    // report says where its summary lies.
    fsx::write_atomic(&area(root), &path, &body(report, evidence, now))?;
    Ok(())
}

/// A file name that sorts by time and says which review it is.
fn report_name(report: &Report, now: &str) -> String {
    let stamp: String = now
        .chars()
        .filter(|c| c.is_ascii_digit())
        .take(17)
        .collect();
    let who = match (&report.task_id, &report.defect) {
        (Some(id), _) => format!("task-{id}"),
        (None, Some(defect)) => format!("defect-{}", defect.name),
        (None, None) => format!("branch-{}", report.branch),
    };
    // A file name is written too: through the safety net like its content.
    let who = crate::secrets::net::text(&who).text;
    format!("{stamp}-{}", slug(&who))
}

/// Writes the report under a name no other review takes, even one of the
/// same task in the same millisecond in another process.
fn write_report(
    root: &Path,
    report: &Report,
    evidence: &Evidence,
    now: &str,
) -> Result<PathBuf, Error> {
    ignore_in_git(root)?;
    let text = body(report, evidence, now);
    let base = report_name(report, now);
    let name = |n: u32| {
        if n == 1 {
            format!("{base}.json")
        } else {
            format!("{base}-{n}.json")
        }
    };
    Ok(fsx::write_new(
        &area(root),
        &root.join(REVIEWS_DIR),
        &name,
        &text,
    )?)
}

/// The report file's bytes: the report, when it was written, its outcome
/// and its evidence, through the safety net.
fn body(report: &Report, evidence: &Evidence, now: &str) -> Vec<u8> {
    let mut body = serde_json::to_value(report).unwrap_or(Value::Null);
    if let (Value::Object(map), Ok(Value::Object(extra))) =
        (&mut body, serde_json::to_value(evidence))
    {
        map.insert("reviewed_at".to_string(), Value::String(now.to_string()));
        map.insert("outcome".to_string(), json!(report.outcome.code()));
        map.extend(extra);
    }
    // The safety net: the review sealed its report (`guard::seal`) and
    // turned what it found into findings; this replaces it in the bytes.
    crate::secrets::net::json(&mut body, "the report");
    (serde_json::to_string_pretty(&body).unwrap_or_default() + "\n").into_bytes()
}

/// A `.gitignore` of `*` in the reviews folder, as the cache has: reports
/// hold diffs and prompts, which have no place in a commit.
fn ignore_in_git(root: &Path) -> Result<(), Error> {
    Ok(fsx::ignore_in_git(
        &area(root),
        &root.join(REVIEWS_DIR),
        "review reports and logs hold diffs; keep them out of git.",
    )?)
}
