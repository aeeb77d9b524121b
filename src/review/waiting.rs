//! What waits in a provider batch: batch mode leaves a task (or a defect)
//! out while a batch submitted with `--batch-api` holds its review at its
//! current head; `speed review --collect` finishes it.

use crate::git::Repository;
use crate::ledger::batches::{self, Batch, Pending};
use crate::work::{self, Subject};

use super::context::Context;

/// How the reason of a review skipped for its batch begins.
pub const WAITING: &str = "waiting in";

/// The batches waiting under `.speed/cache/batches/`.
pub struct Waiting {
    batches: Vec<Batch>,
    repo: Option<Repository>,
}

impl Waiting {
    /// The waiting batches; none when there are none or they cannot be
    /// read (`--collect` says why; batch mode then reviews as usual).
    pub fn read(ctx: &Context) -> Waiting {
        let batches = batches::list(&ctx.root)
            .map(|(batches, _)| batches)
            .unwrap_or_default();
        let repo = match batches.is_empty() {
            true => None,
            false => Repository::open(&ctx.root).ok(),
        };
        Waiting { batches, repo }
    }

    pub fn is_empty(&self) -> bool {
        self.batches.is_empty() || self.repo.is_none()
    }

    /// Why `subject` is left out: a batch holds its review at the head its
    /// branch is at now.
    pub fn reason(&self, ctx: &Context, subject: &Subject) -> Option<String> {
        let repo = self.repo.as_ref()?;
        let (batch, review) = self.batches.iter().find_map(|batch| {
            batch
                .reviews
                .iter()
                .find(|review| is_of(review, subject))
                .map(|review| (batch, review))
        })?;
        let head = work::resolve(repo, ctx.main(), subject)
            .ok()?
            .diff
            .head_commit;
        (head == review.head_commit).then(|| {
            format!(
                "{WAITING} {} batch {} (submitted {}): `speed review --collect {}` finishes it",
                batch.provider, batch.id, batch.submitted_at, batch.id
            )
        })
    }
}

fn is_of(review: &Pending, subject: &Subject) -> bool {
    match subject {
        Subject::Task(task) => {
            review.task.as_deref() == Some(task.id.as_str()) && review.feature == task.feature
        }
        Subject::Defect(d) => {
            review.task.is_none() && review.defect.as_deref() == Some(d.defect.name.as_str())
        }
        Subject::Branch { .. } => false,
    }
}
