//! What a review changes, and nothing else: a report file under
//! `.speed/reviews/`, one line appended to `.speed/reviews/log.jsonl`, the
//! task file it read (by its path, atomically, unknown fields kept), and in
//! the multi-player layout one event file. A review that failed writes its
//! report and log line (so the raw answers are kept) but never the task
//! file.
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
use crate::tasks::{self, Task, state::ReviewOutcome};
use crate::verdict::{self, CriterionStatus};

use super::Error;
use super::prepare::{Shared, Subject};
use super::report::{Evidence, Report, TaskUpdate};

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
    match (subject.task(), subject.defect()) {
        (Some(task), _) => {
            fsx::confine(&area, &task.path)?;
            if let Some(dir) = task.path.parent() {
                fsx::sweep_once(&area, dir);
            }
            lock_task(&shared.root, task, &subject.label()).map(Some)
        }
        (None, Some(review)) => {
            let dir = shared.root.join(&review.defect.dir);
            if review.update_state {
                fsx::confine(&area, &dir.join(crate::defects::store::STATE))?;
                fsx::confine(&area, &dir.join(crate::defects::store::REVIEW_LOG))?;
                fsx::sweep_once(&area, &dir);
            }
            let name = lock_name(&area, &dir, &format!("defect-{}", review.defect.name));
            acquire(&shared.root, &name, &subject.label()).map(Some)
        }
        (None, None) => Ok(None),
    }
}

/// The lock a review of `task` holds while it runs, so that nothing else
/// writes its file meanwhile (`speed override` takes it too). `label`
/// names the task when another process holds it.
pub fn lock_task(root: &Path, task: &Task, label: &str) -> Result<fsx::Lock, Error> {
    let name = lock_name(&area(root), &task.path, &format!("task-{}", task.id));
    acquire(root, &name, label)
}

fn acquire(root: &Path, name: &str, label: &str) -> Result<fsx::Lock, Error> {
    let area = area(root);
    let lock = root.join(LOCKS_DIR).join(name);
    match fsx::Lock::acquire(&area, &lock, LOCK_WAIT) {
        Ok(lock) => Ok(lock),
        Err(fsx::Error::Busy { holder, .. }) => Err(Error::BeingReviewed {
            subject: label.to_string(),
            holder,
        }),
        Err(err) => Err(err.into()),
    }
}

/// A lock file name per task file (or defect folder): readable, and exact
/// through a hash of its path (two features may both have a task 3).
fn lock_name(area: &Path, file: &Path, who: &str) -> String {
    let relative = file.strip_prefix(area).unwrap_or(file);
    let hash = Sha256::digest(relative.to_string_lossy().as_bytes());
    let hex: String = hash.iter().take(6).map(|b| format!("{b:02x}")).collect();
    format!("{}-{hex}.lock", slug(who))
}

pub fn record(
    shared: &Shared,
    task: Option<&Task>,
    report: &mut Report,
    evidence: &Evidence,
) -> Result<(), Error> {
    let _hold = interrupt::hold().ok_or(Error::Interrupted)?;
    let at = std::time::SystemTime::now();
    let now = humantime::format_rfc3339_millis(at).to_string();
    save_report(&shared.root, report, evidence, &now)?;
    // An offline review whose checks passed approves nothing: the task
    // file keeps its state.
    let task = task.filter(|_| report.verdict != Some(verdict::Kind::ChecksPassed));
    if let Some(task) = task {
        // Re-read the very file the review read: an orchestrator may have
        // written it meanwhile, and only the review's own fields change.
        let store = tasks::Store::open(&shared.root);
        let mut fresh = store.reload(task)?;
        let outcome = task_outcome(shared, report, evidence, &now);
        tasks::state::record_review(&mut fresh, &outcome);
        // The log line first: a task file that says "reviewed" always has
        // its line in the log, whatever stops speed between the two.
        append_log(&shared.root, report, &now)?;
        store.save(&fresh)?;
        report.task_update = Some(TaskUpdate {
            status: fresh.status.to_string(),
            revision_count: fresh.revision_count,
        });
        let verdict = if outcome.approved {
            "approve"
        } else {
            "request_changes"
        };
        if let Some(event) = tasks::events::review_completed(&fresh, verdict, &shared.actor, at) {
            tasks::events::write(&event)?;
        }
        return Ok(());
    }
    append_log(&shared.root, report, &now)
}

/// What the task file records of a decided review.
fn task_outcome(shared: &Shared, report: &Report, evidence: &Evidence, now: &str) -> ReviewOutcome {
    let approved = report.verdict == Some(verdict::Kind::Approve);
    let guardian = match report.guardian.status.as_str() {
        "not_run" => None,
        status => Some((status.to_string(), guardian_summary(report))),
    };
    // The safety net over what the task file receives (the review sealed
    // the report these come from; this guards the bytes).
    let net = |text: &str| crate::secrets::net::text(text).text;
    let guardian = guardian.map(|(status, summary)| (status, net(&summary)));
    ReviewOutcome {
        approved,
        feedback: report.feedback.as_deref().map(net),
        reviewed_at: now.to_string(),
        reviewed_by: shared.actor.name.clone(),
        diff_hash: report.hashes.diff.clone(),
        head_commit: report.head_commit.clone(),
        blocking: if approved {
            Vec::new()
        } else {
            blocking(report, evidence).iter().map(|b| net(b)).collect()
        },
        max_revisions: shared.settings.max_revisions,
        guardian,
    }
}

/// What stood in the way of an approval, one line each, for the task's
/// `review_history`: blocking issues (the model's and speed's), unmet
/// criteria, what the spec asks that is missing, and speed's overrules.
fn blocking(report: &Report, evidence: &Evidence) -> Vec<String> {
    let mut out = Vec::new();
    let added = evidence.decision.iter().flat_map(|d| &d.added_issues);
    if let Some(review) = &report.review {
        for issue in review.issues.iter().chain(added) {
            if !issue.severity.is_blocking() {
                continue;
            }
            let at = match (&issue.file, issue.line) {
                (Some(file), Some(line)) => format!(" {file}:{line}"),
                (Some(file), None) => format!(" {file}"),
                _ => String::new(),
            };
            out.push(format!(
                "{}{at}: {}",
                issue.severity.as_str(),
                issue.message
            ));
        }
        for c in &review.criteria {
            if c.status == CriterionStatus::Unmet {
                out.push(format!("{} unmet: {}", c.id, c.evidence));
            }
        }
        for m in &review.missing_from_spec {
            let what = if m.description.trim().is_empty() {
                &m.spec_quote
            } else {
                &m.description
            };
            out.push(format!("missing: {what}"));
        }
    }
    for o in &report.overrules {
        out.push(o.reason.clone());
    }
    if out.is_empty() {
        let first = report
            .feedback
            .as_deref()
            .and_then(|f| f.lines().map(str::trim).find(|l| !l.is_empty()));
        out.extend(first.map(str::to_string));
    }
    out.dedup();
    out
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
    let who = match (&report.task_id, &report.defect) {
        (Some(id), _) => format!("task-{id}"),
        (None, Some(defect)) => format!("defect-{}", defect.name),
        (None, None) => format!("branch-{}", report.branch),
    };
    // A file name is written too: through the safety net like its content.
    let who = crate::secrets::net::text(&who).text;
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
    ignore_in_git(root)?;
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

/// A `.gitignore` of `*` in the reviews folder, as the cache has: reports
/// hold diffs and prompts, which have no place in a commit.
fn ignore_in_git(root: &Path) -> Result<(), Error> {
    let path = root.join(REVIEWS_DIR).join(".gitignore");
    if path.exists() {
        return Ok(());
    }
    Ok(fsx::write_atomic(
        &area(root),
        &path,
        b"# Written by speed: review reports and logs hold diffs; keep them out of git.\n*\n",
    )?)
}

fn append_log(root: &Path, report: &Report, now: &str) -> Result<(), Error> {
    let mut line = json!({
        "at": now,
        "task": report.task_id,
        "feature": report.feature,
        "branch": report.branch,
        "head_commit": (!report.head_commit.is_empty()).then_some(&report.head_commit),
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
    if let (Some(defect), Value::Object(map)) = (&report.defect, &mut line) {
        map.insert("defect".to_string(), json!(defect.name));
        if let Some(found) = &defect.speed {
            map.insert(
                "defect_check".to_string(),
                json!({
                    "scope_violations": found.scope_violations.len(),
                    "lines": found.size.lines,
                    "files": found.size.files,
                    "large_diff": found.size.large,
                    "test_changes": found.test_changes.len(),
                }),
            );
        }
    }
    append_log_line(root, &line)
}

/// Append one line to the review log: a review's, or an override's.
pub fn append_log_line(root: &Path, line: &Value) -> Result<(), Error> {
    // The safety net: no log line holds a secret, whoever wrote it.
    let mut line = line.clone();
    crate::secrets::net::json(&mut line, "the review log");
    let text = serde_json::to_string(&line).unwrap_or_default();
    Ok(fsx::append_line(&area(root), &root.join(LOG_FILE), &text)?)
}
