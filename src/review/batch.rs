//! Batch reviews: which tasks need a review, and running many reviews at once
//! with a fixed number of workers. One review failing never stops the others;
//! each report is handed back as soon as it completes.

use std::sync::Mutex;
use std::sync::mpsc;

use std::collections::HashMap;

use crate::defects::Defect;
use crate::git::Repository;
use crate::tasks::{Status, Task};

use super::model::Pacer;
use super::prepare::{self, Shared, Subject};
use super::report::Report;
use super::single::{self, Models};
use super::{Error, Events};

/// A task (or a defect) the batch did not send to the model, and why.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Skipped {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub defect: Option<String>,
    pub feature: Option<String>,
    pub reason: String,
}

impl Skipped {
    /// "task 3" or "defect login-crash".
    pub fn label(&self) -> String {
        match (&self.task_id, &self.defect) {
            (Some(id), _) => format!("task {id}"),
            (None, Some(name)) => format!("defect {name}"),
            (None, None) => String::new(),
        }
    }
}

/// Every `done` task whose last approval does not cover its current diff;
/// with `force`, approved ones too. A task whose diff cannot be computed is
/// selected, so its error is reported rather than hidden.
pub fn select(
    shared: &Shared,
    tasks: Vec<Task>,
    force: bool,
) -> Result<(Vec<Task>, Vec<Skipped>), Error> {
    let repo = Repository::open(&shared.root)?;
    let mut selected = Vec::new();
    let mut skipped = Vec::new();
    for task in tasks {
        if task.status != Status::Done {
            continue;
        }
        let approved = task.review_verdict.as_deref() == Some("approve");
        if !approved || force {
            selected.push(task);
            continue;
        }
        let subject = Subject::Task(Box::new(task.clone()));
        let reason = prepare::diff_for(&repo, &shared.main, &subject)
            .ok()
            .and_then(|resolved| {
                let head_time = repo.commit_time(&resolved.diff.head_commit).ok();
                covered(&task, &resolved.diff.sha256, head_time)
            });
        match reason {
            Some(reason) => skipped.push(Skipped {
                task_id: Some(task.id.clone()),
                defect: None,
                feature: task.feature.clone(),
                reason,
            }),
            None => selected.push(task),
        }
    }
    Ok((selected, skipped))
}

/// The fixed defects a batch reviews: each whose last review in the log
/// did not approve its current diff; with `force`, all of them. A defect
/// whose diff cannot be computed is selected, so its error is reported.
pub fn select_defects(
    shared: &Shared,
    defects: Vec<Defect>,
    force: bool,
) -> Result<(Vec<Defect>, Vec<Skipped>), Error> {
    if force || defects.is_empty() {
        return Ok((defects, Vec::new()));
    }
    let repo = Repository::open(&shared.root)?;
    let last = last_defect_reviews(&shared.root);
    let mut selected = Vec::new();
    let mut skipped = Vec::new();
    for defect in defects {
        let Some((decision, diff_hash)) = last.get(&defect.name) else {
            selected.push(defect);
            continue;
        };
        let subject = Subject::Defect(Box::new(super::defect::DefectReview::new(
            defect.clone(),
            false,
        )));
        let current = prepare::diff_for(&repo, &shared.main, &subject)
            .ok()
            .map(|resolved| resolved.diff.sha256);
        if decision == "approve" && current.as_deref() == Some(diff_hash.as_str()) {
            skipped.push(Skipped {
                task_id: None,
                defect: Some(defect.name.clone()),
                feature: None,
                reason: "approved at its current diff".to_string(),
            });
        } else {
            selected.push(defect);
        }
    }
    Ok((selected, skipped))
}

/// The last decided review of each defect in the review log: its decision
/// and the hash of the diff it saw. A line that cannot be read is passed
/// over: the log is the record, not an input that could approve anything.
fn last_defect_reviews(root: &std::path::Path) -> HashMap<String, (String, String)> {
    let mut last = HashMap::new();
    let Ok(text) = std::fs::read_to_string(root.join(super::record::LOG_FILE)) else {
        return last;
    };
    for line in text.lines() {
        let Ok(value) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        let (Some(name), Some(decision), Some(diff)) = (
            value["defect"].as_str(),
            value["decision"].as_str(),
            value["hashes"]["diff"].as_str(),
        ) else {
            continue;
        };
        last.insert(name.to_string(), (decision.to_string(), diff.to_string()));
    }
    last
}

/// Why an approved task's approval still covers its branch, if it does: it
/// was given to this very diff, or (an approval written before speed
/// recorded `reviewed_diff`) the branch's head commit is not newer than the
/// approval's `reviewed_at`.
fn covered(task: &Task, diff_hash: &str, head_time: Option<i64>) -> Option<String> {
    if let Some(reviewed) = &task.reviewed_diff {
        return (reviewed == diff_hash).then(|| "approved at its current diff".to_string());
    }
    let at = task.reviewed_at.as_deref()?;
    let approved = humantime::parse_rfc3339_weak(at.trim()).ok()?;
    let approved = approved
        .duration_since(std::time::UNIX_EPOCH)
        .ok()?
        .as_secs();
    let head_time = u64::try_from(head_time?).ok()?;
    (head_time <= approved)
        .then(|| format!("approved at {at}, and its head commit is not newer than that approval"))
}

/// Review every subject with `concurrency` workers; `on_report` sees each
/// report as it completes (from the calling thread). Returns the reports in
/// the order of `subjects`.
pub fn run(
    shared: &Shared,
    models: &Models,
    pacer: &Pacer,
    events: &dyn Events,
    subjects: Vec<Subject>,
    concurrency: usize,
    on_report: &mut dyn FnMut(&Report),
) -> Vec<Report> {
    let count = subjects.len();
    let queue = Mutex::new(subjects.into_iter().enumerate());
    let (tx, rx) = mpsc::channel::<(usize, Report)>();
    let mut results: Vec<Option<Report>> = (0..count).map(|_| None).collect();
    std::thread::scope(|scope| {
        for _ in 0..concurrency.clamp(1, count.max(1)) {
            let tx = tx.clone();
            let queue = &queue;
            scope.spawn(move || {
                loop {
                    // Nothing new starts once speed is stopping; reviews
                    // under way finish or are stopped by their cleanups.
                    if crate::interrupt::requested() {
                        break;
                    }
                    let next = queue
                        .lock()
                        .unwrap_or_else(|poisoned| poisoned.into_inner())
                        .next();
                    let Some((index, subject)) = next else { break };
                    let report = single::review(shared, models, pacer, events, subject);
                    if tx.send((index, report)).is_err() {
                        break;
                    }
                }
            });
        }
        drop(tx);
        for (index, report) in rx {
            on_report(&report);
            results[index] = Some(report);
        }
    });
    results.into_iter().flatten().collect()
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    fn task(text: &str) -> Task {
        Task::parse(Path::new(".speed/tasks/1.json"), None, text).unwrap()
    }

    #[test]
    fn an_approval_covers_its_own_diff_only() {
        let t = task(r#"{"reviewed_diff": "sha256:a", "reviewed_at": "2030-01-01T00:00:00Z"}"#);
        assert!(covered(&t, "sha256:a", Some(0)).is_some());
        // A recorded diff decides, whatever the times say.
        assert_eq!(covered(&t, "sha256:b", Some(0)), None);
    }

    #[test]
    fn an_older_approval_covers_a_head_not_newer_than_it() {
        // 2026-03-15T03:34:11Z is 1773545651.
        let t = task(r#"{"review_verdict": "approve", "reviewed_at": "2026-03-15T03:34:11Z"}"#);
        assert!(covered(&t, "sha256:x", Some(1_773_545_651)).is_some());
        assert!(covered(&t, "sha256:x", Some(1_773_545_000)).is_some());
        assert_eq!(covered(&t, "sha256:x", Some(1_773_545_652)), None);
        assert_eq!(covered(&t, "sha256:x", None), None);
        let millis = task(r#"{"reviewed_at": "2026-03-15T03:34:11.500Z"}"#);
        assert!(covered(&millis, "sha256:x", Some(1_773_545_651)).is_some());
        for unreadable in [r#"{}"#, r#"{"reviewed_at": "yesterday"}"#] {
            assert_eq!(covered(&task(unreadable), "sha256:x", Some(0)), None);
        }
    }
}
