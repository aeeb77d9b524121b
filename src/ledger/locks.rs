//! Locks held while a task (or a defect) is reviewed or overridden, so two
//! writers of its file never lose each other's changes, and the checks made
//! before any work starts: everything a review will write stays inside
//! `.speed/`.

use std::path::Path;
use std::time::Duration;

use sha2::{Digest, Sha256};

use crate::fsx;
use crate::tasks::Task;
use crate::work::Subject;

use super::{Error, LOCKS_DIR, LOG_FILE, REVIEWS_DIR, area, slug};

/// How long a review waits for another review of the same task to end
/// before saying the task is being reviewed. Recording takes milliseconds;
/// a whole review, with its model calls, takes far longer than this.
const LOCK_WAIT: Duration = Duration::from_secs(10);

/// Before the model is asked: check that everything this review will write
/// stays inside `.speed/` (so no model call is spent on a review that could
/// not be recorded), sweep what crashed runs left there, and lock the task.
/// The lock is held until the returned value is dropped.
pub fn begin(root: &Path, subject: &Subject) -> Result<Option<fsx::Lock>, Error> {
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
            lock_task(root, task, &subject.label()).map(Some)
        }
        (None, Some(review)) => {
            let dir = root.join(&review.defect.dir);
            if review.update_state {
                fsx::confine(&area, &dir.join(crate::defects::store::STATE))?;
                fsx::confine(&area, &dir.join(crate::defects::store::REVIEW_LOG))?;
                fsx::sweep_once(&area, &dir);
            }
            let name = lock_name(&area, &dir, &format!("defect-{}", review.defect.name));
            acquire(root, &name, &subject.label()).map(Some)
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
