//! What a review changes, and nothing else: a report file under
//! `.speed/reviews/`, one line appended to `.speed/reviews/log.jsonl`, and
//! the task file (atomically, unknown fields kept). A review that failed
//! writes its report and log line (so the raw answers are kept) but never
//! the task file.
//!
//! Every write goes through `fsx`, confined to `.speed/`. The log line is
//! written before the task file, so a recorded verdict always has its log
//! line whatever stops speed; recording is a `hold`, so Ctrl-C waits for it
//! to finish; and a task is locked from before the model is asked until its
//! review is recorded, so two reviews of one task never lose each other's
//! changes.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::fsx;
use crate::interrupt;
use crate::tasks::{self, state::ReviewOutcome};
use crate::verdict;

use super::Error;
use super::prepare::{Prepared, Shared, Subject};
use super::report::{Evidence, Report};

pub const REVIEWS_DIR: &str = ".speed/reviews";
pub const LOG_FILE: &str = ".speed/reviews/log.jsonl";
/// One lock file per task under review, and one for the nits file.
pub const LOCKS_DIR: &str = ".speed/reviews/locks";

/// How long a review waits for another review of the same task to end
/// before saying the task is being reviewed. Recording takes milliseconds;
/// a whole review, with its model calls, takes far longer than this.
const LOCK_WAIT: Duration = Duration::from_secs(10);

/// The folder every write of a review is confined to.
pub fn area(root: &Path) -> PathBuf {
    root.join(".speed")
}

/// Before the model is asked: check that everything this review will write
/// stays inside `.speed/` (so no model call is spent on a review that could
/// not be recorded), sweep what crashed runs left there, and lock the task.
/// The lock is held until the returned value is dropped.
pub fn begin(shared: &Shared, subject: &Subject) -> Result<Option<fsx::Lock>, Error> {
    let area = area(&shared.root);
    let reviews = shared.root.join(REVIEWS_DIR);
    fsx::confine(&area, &reviews)?;
    fsx::confine(&area, &shared.root.join(LOG_FILE))?;
    fsx::sweep_once(&area, &reviews);
    let Some(task) = subject.task() else {
        return Ok(None);
    };
    fsx::confine(&area, &task.path)?;
    if let Some(dir) = task.path.parent() {
        fsx::sweep_once(&area, dir);
    }
    let lock = shared
        .root
        .join(LOCKS_DIR)
        .join(lock_name(&area, &task.path, &task.id));
    match fsx::Lock::acquire(&area, &lock, LOCK_WAIT) {
        Ok(lock) => Ok(Some(lock)),
        Err(fsx::Error::Busy { holder, .. }) => Err(Error::BeingReviewed {
            subject: subject.label(),
            holder,
        }),
        Err(err) => Err(err.into()),
    }
}

/// A lock file name per task file: readable, and exact through a hash of
/// the task file's path (two features may both have a task 3).
fn lock_name(area: &Path, task_file: &Path, id: &str) -> String {
    let relative = task_file.strip_prefix(area).unwrap_or(task_file);
    let hash = Sha256::digest(relative.to_string_lossy().as_bytes());
    let hex: String = hash.iter().take(6).map(|b| format!("{b:02x}")).collect();
    format!("task-{}-{hex}.lock", slug(id))
}

pub fn record(
    shared: &Shared,
    prepared: &Prepared,
    report: &mut Report,
    evidence: &Evidence,
) -> Result<(), Error> {
    let _hold = interrupt::hold().ok_or(Error::Interrupted)?;
    let now = now_rfc3339();
    save_report(&shared.root, report, evidence, &now)?;
    if let Some(task) = prepared.subject.task() {
        // Re-read the task: an orchestrator may have written it meanwhile, and
        // only the review's own fields should change.
        let store = tasks::Store::open(&shared.root);
        let mut fresh = store.find(&task.id, task.feature.as_deref())?;
        let approved = report.verdict == Some(verdict::Kind::Approve);
        let guardian = match report.guardian.status.as_str() {
            "not_run" => None,
            status => Some((status.to_string(), guardian_summary(report))),
        };
        tasks::state::record_review(
            &mut fresh,
            &ReviewOutcome {
                approved,
                feedback: report.feedback.clone(),
                reviewed_at: now.clone(),
                diff_hash: report.hashes.diff.clone(),
                max_revisions: shared.settings.max_revisions,
                guardian,
            },
        );
        // The log line first: a task file that says "reviewed" always has
        // its line in the log, whatever stops speed between the two.
        append_log(&shared.root, report, &now)?;
        store.save(&fresh)?;
        return Ok(());
    }
    append_log(&shared.root, report, &now)
}

pub fn record_failure(
    shared: &Shared,
    report: &mut Report,
    evidence: &Evidence,
) -> Result<(), Error> {
    let _hold = interrupt::hold().ok_or(Error::Interrupted)?;
    let now = now_rfc3339();
    save_report(&shared.root, report, evidence, &now)?;
    append_log(&shared.root, report, &now)
}

/// Write the report file and remember where, for the output and the log.
fn save_report(
    root: &Path,
    report: &mut Report,
    evidence: &Evidence,
    now: &str,
) -> Result<(), Error> {
    let path = write_report(root, report, evidence, now)?;
    report.report_path = Some(relative(root, &path));
    Ok(())
}

fn guardian_summary(report: &Report) -> String {
    match (&report.guardian.reason, report.guardian.summary.is_empty()) {
        (Some(reason), true) => reason.clone(),
        _ => report.guardian.summary.clone(),
    }
}

pub fn now_rfc3339() -> String {
    humantime::format_rfc3339_millis(std::time::SystemTime::now()).to_string()
}

fn relative(root: &Path, path: &Path) -> String {
    path.strip_prefix(root)
        .unwrap_or(path)
        .to_string_lossy()
        .into_owned()
}

/// A file name that sorts by time and says which review it is.
fn report_name(report: &Report, now: &str) -> String {
    let stamp: String = now
        .chars()
        .filter(|c| c.is_ascii_digit())
        .take(17)
        .collect();
    let who = match &report.task_id {
        Some(id) => format!("task-{id}"),
        None => format!("branch-{}", report.branch),
    };
    format!("{stamp}-{}", slug(&who))
}

/// Letters, digits and dashes only: safe in any file name.
fn slug(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// Writes the report under a name no other review takes, even one of the
/// same task in the same millisecond in another process.
fn write_report(
    root: &Path,
    report: &Report,
    evidence: &Evidence,
    now: &str,
) -> Result<PathBuf, Error> {
    let mut body = serde_json::to_value(report).unwrap_or(Value::Null);
    if let (Value::Object(map), Ok(Value::Object(extra))) =
        (&mut body, serde_json::to_value(evidence))
    {
        map.insert("reviewed_at".to_string(), Value::String(now.to_string()));
        map.insert("outcome".to_string(), json!(report.outcome.code()));
        map.extend(extra);
    }
    let text = serde_json::to_string_pretty(&body).unwrap_or_default() + "\n";
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
        text.as_bytes(),
    )?)
}

fn append_log(root: &Path, report: &Report, now: &str) -> Result<(), Error> {
    let line = json!({
        "at": now,
        "task": report.task_id,
        "feature": report.feature,
        "branch": report.branch,
        "decision": report.verdict,
        "model_verdict": report.model_verdict,
        "outcome": report.outcome.code(),
        "model": {"provider": report.model.provider, "name": report.model.name},
        "tokens": {"prompt": report.tokens.prompt, "completion": report.tokens.completion},
        "hashes": report.hashes,
        "guardian": report.guardian.status,
        "overrules": report.overrules.iter().map(|o| o.rule).collect::<Vec<_>>(),
        "duration_ms": report.duration_ms,
        "report": report.report_path,
        "error": report.error,
    });
    let text = serde_json::to_string(&line).unwrap_or_default();
    Ok(fsx::append_line(&area(root), &root.join(LOG_FILE), &text)?)
}
