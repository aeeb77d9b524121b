//! What a review changes, and nothing else: the task file it read (by its
//! path, atomically, unknown fields kept), in the multi-player layout one
//! event file, a report file under `.speed/reviews/`, and one line appended
//! to `.speed/reviews/log.jsonl`. A review that failed writes its report and
//! log line (so the raw answers are kept) but never the task file.

use std::fs::OpenOptions;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde_json::{Value, json};

use crate::tasks::{self, Task, state::ReviewOutcome};
use crate::verdict::{self, CriterionStatus};

use super::Error;
use super::prepare::Shared;
use super::report::{Evidence, Report};

pub const REVIEWS_DIR: &str = ".speed/reviews";
pub const LOG_FILE: &str = ".speed/reviews/log.jsonl";

/// Serialises appends from concurrent reviews of one process.
static LOG_LOCK: Mutex<()> = Mutex::new(());

pub fn record(
    shared: &Shared,
    task: Option<&Task>,
    report: &mut Report,
    evidence: &Evidence,
) -> Result<(), Error> {
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
        store.save(&fresh)?;
        let verdict = if outcome.approved {
            "approve"
        } else {
            "request_changes"
        };
        if let Some(event) = tasks::events::review_completed(&fresh, verdict, &shared.actor, at) {
            tasks::events::write(&event)?;
        }
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
    ReviewOutcome {
        approved,
        feedback: report.feedback.clone(),
        reviewed_at: now.to_string(),
        reviewed_by: shared.actor.name.clone(),
        diff_hash: report.hashes.diff.clone(),
        head_commit: report.head_commit.clone(),
        blocking: if approved {
            Vec::new()
        } else {
            blocking(report, evidence)
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
    let slug: String = who
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!("{stamp}-{slug}")
}

fn write_report(
    root: &Path,
    report: &Report,
    evidence: &Evidence,
    now: &str,
) -> Result<PathBuf, Error> {
    let dir = root.join(REVIEWS_DIR);
    std::fs::create_dir_all(&dir).map_err(|source| Error::Write {
        path: dir.clone(),
        source,
    })?;
    ignore_in_git(&dir)?;
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
    let mut n = 1;
    loop {
        let name = if n == 1 {
            format!("{base}.json")
        } else {
            format!("{base}-{n}.json")
        };
        let path = dir.join(name);
        if !path.exists() {
            atomic_write(&dir, &path, text.as_bytes())?;
            return Ok(path);
        }
        n += 1;
    }
}

/// A `.gitignore` of `*` in the reviews folder, as the cache has: reports
/// hold diffs and prompts, which have no place in a commit.
fn ignore_in_git(dir: &Path) -> Result<(), Error> {
    let path = dir.join(".gitignore");
    if path.exists() {
        return Ok(());
    }
    std::fs::write(
        &path,
        "# Written by speed: review reports and logs hold diffs; keep them out of git.\n*\n",
    )
    .map_err(|source| Error::Write { path, source })
}

/// Temp file in the same folder, fsync, rename: readers see the old state or
/// the whole new file, never half of it.
pub fn atomic_write(dir: &Path, path: &Path, bytes: &[u8]) -> Result<(), Error> {
    let write_err = |source| Error::Write {
        path: path.to_path_buf(),
        source,
    };
    let mut tmp = tempfile::NamedTempFile::new_in(dir).map_err(write_err)?;
    tmp.write_all(bytes).map_err(write_err)?;
    tmp.as_file().sync_all().map_err(write_err)?;
    tmp.persist(path).map_err(|e| write_err(e.error))?;
    Ok(())
}

fn append_log(root: &Path, report: &Report, now: &str) -> Result<(), Error> {
    let mut line = json!({
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
    let path = root.join(LOG_FILE);
    let mut text = serde_json::to_string(&line).unwrap_or_default();
    text.push('\n');
    let _guard = LOG_LOCK
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let mut file = OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .map_err(|source| Error::Write {
            path: path.clone(),
            source,
        })?;
    file.write_all(text.as_bytes())
        .and_then(|()| file.sync_data())
        .map_err(|source| Error::Write { path, source })
}
