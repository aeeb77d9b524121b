//! Batch reviews: which tasks need a review, and running many reviews at once
//! with a fixed number of workers. One review failing never stops the others;
//! each report is handed back as soon as it completes.

use std::sync::Mutex;
use std::sync::mpsc;

use crate::git::Repository;
use crate::tasks::{Status, Task};

use super::model::Pacer;
use super::prepare::{self, Shared, Subject};
use super::report::Report;
use super::single::{self, Models};
use super::{Error, Events};

/// A task the batch did not send to the model, and why.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Skipped {
    pub task_id: String,
    pub feature: Option<String>,
    pub reason: String,
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
        match prepare::diff_for(&repo, &shared.main, &subject) {
            Ok((_, _, diff)) if task.reviewed_diff.as_deref() == Some(diff.sha256.as_str()) => {
                skipped.push(Skipped {
                    task_id: task.id.clone(),
                    feature: task.feature.clone(),
                    reason: "approved at its current diff".to_string(),
                });
            }
            _ => selected.push(task),
        }
    }
    Ok((selected, skipped))
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
