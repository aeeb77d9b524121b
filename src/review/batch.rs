//! Many reviews at once with a fixed number of workers. One review failing
//! never stops the others; each report is handed back as soon as it
//! completes.

use std::sync::Mutex;
use std::sync::mpsc;

use crate::ledger::Report;
use crate::work::Subject;

use super::Events;
use super::ask::{Models, Pacer};
use super::context::Context;

/// Review every subject with `concurrency` workers; `on_report` sees each
/// report as it completes (from the calling thread). Returns the reports in
/// the order of `subjects`.
pub fn run(
    ctx: &Context,
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
                    let report = super::run::review(ctx, models, pacer, events, subject);
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
