//! Locks held while a task (or a defect) is reviewed or overridden, so two
//! writers of its file never lose each other's changes, and the checks made
//! before any work starts: everything a review will write stays inside
//! `.speed/`.
//!
//! Two locks per piece of work:
//! - the review lock (`begin`, `lock_task`), held by a review from before
//!   it reads the task's state until its result is written, so a second
//!   review of the task waits and then reads what the first one left
//!   (`Queue::Wait`), or says the task is being reviewed (`Queue::NoWait`);
//! - the record lock (`recording`), held only while a decision is written
//!   (report, log line, task file, verdict cache), and taken by the merge
//!   gate before it reads them: the gate never decides from a state half
//!   written, and never waits for a review's model calls.

use std::path::Path;
use std::time::Duration;

use sha2::{Digest, Sha256};

use crate::fsx;
use crate::tasks::Task;
use crate::work::{Subject, Work};

use super::{Error, LOCKS_DIR, LOG_FILE, REVIEWS_DIR, area, slug};

/// How long a person's decision (`speed override`, `approve`, `reject`)
/// or the gate waits for a lock: writing a decision takes milliseconds.
const LOCK_WAIT: Duration = Duration::from_secs(10);

/// How long a review waits for another review of the same task to end: a
/// whole review, with its model calls and retries, takes minutes. A lock is
/// held by a live process only (the system releases a dead one's).
const REVIEW_WAIT: Duration = Duration::from_secs(60 * 60);

/// What a review does when another review of its subject holds the lock.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Queue {
    /// Wait for it to end, then review what it left.
    #[default]
    Wait,
    /// Say the subject is being reviewed, and stop (`--no-wait`).
    NoWait,
}

/// Before anything of the subject is read: check that everything this
/// review will write stays inside `.speed/` (so no model call is spent on a
/// review that could not be recorded), sweep what crashed runs left there,
/// and lock the subject. When another review holds it, `queued` is told who
/// before this one waits (`Queue::Wait`). The lock is held until the
/// returned value is dropped.
pub fn begin(
    root: &Path,
    subject: &Subject,
    queue: Queue,
    queued: &dyn Fn(&str),
) -> Result<Option<fsx::Lock>, Error> {
    let area = area(root);
    let reviews = root.join(REVIEWS_DIR);
    fsx::confine(&area, &reviews)?;
    fsx::confine(&area, &root.join(LOG_FILE))?;
    fsx::sweep_once(&area, &reviews);
    match (subject.task(), subject.defect()) {
        (Some(task), _) => {
            fsx::confine(&area, &task.path)?;
            if let Some(dir) = task.path.parent() {
                fsx::sweep_once(&area, dir);
            }
            let name = lock_name(&area, &task.path, &format!("task-{}", task.id));
            queue_for(root, &name, &subject.label(), queue, queued).map(Some)
        }
        (None, Some(review)) => {
            let dir = root.join(&review.defect.dir);
            if review.update_state {
                fsx::confine(&area, &dir.join(crate::defects::store::STATE))?;
                fsx::confine(&area, &dir.join(crate::defects::store::REVIEW_LOG))?;
                fsx::sweep_once(&area, &dir);
            }
            let name = lock_name(&area, &dir, &format!("defect-{}", review.defect.name));
            queue_for(root, &name, &subject.label(), queue, queued).map(Some)
        }
        (None, None) => Ok(None),
    }
}

/// The lock a review of `task` holds while it runs, so that nothing else
/// writes its file meanwhile (`speed override` takes it too). `label`
/// names the task when another process holds it.
pub fn lock_task(root: &Path, task: &Task, label: &str) -> Result<fsx::Lock, Error> {
    let name = lock_name(&area(root), &task.path, &format!("task-{}", task.id));
    acquire(root, &name, label, LOCK_WAIT)
}

/// The lock a piece of work's decision is written under (`Work::label`
/// names it, so a review and the gate find the same one).
pub fn recording(root: &Path, work: &Work) -> Result<fsx::Lock, Error> {
    let label = work.label();
    let name = lock_name(
        &area(root),
        Path::new(&label),
        &format!("record-{}", label.replace(' ', "-")),
    );
    acquire(root, &name, &label, LOCK_WAIT)
}

/// A review's lock: taken at once when free; else, with `Queue::Wait`,
/// after telling `queued` who holds it, waited for.
fn queue_for(
    root: &Path,
    name: &str,
    label: &str,
    queue: Queue,
    queued: &dyn Fn(&str),
) -> Result<fsx::Lock, Error> {
    match acquire(root, name, label, Duration::ZERO) {
        Err(Error::BeingReviewed { holder, .. }) if queue == Queue::Wait => {
            queued(&holder);
            acquire(root, name, label, REVIEW_WAIT)
        }
        taken => taken,
    }
}

fn acquire(root: &Path, name: &str, label: &str, wait: Duration) -> Result<fsx::Lock, Error> {
    let area = area(root);
    let lock = root.join(LOCKS_DIR).join(name);
    match fsx::Lock::acquire(&area, &lock, wait) {
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
