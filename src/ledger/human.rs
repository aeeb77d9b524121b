//! A person's word on a model's approval that waits for one: `speed
//! approve`, `speed reject`, and a skip at the prompt after a review. Each
//! is checked against the task as it is now (under its lock), recorded in
//! the review log first (`decision: "human_approve"`, `"human_reject"` or
//! `"skipped"`), then in the task file (see `tasks::human`), then in the
//! verdict cache at the commit the model approved, where the merge gate
//! reads it.
//!
//! An approval is refused when the task has no approval waiting, or when
//! its branch moved since the model's review: a person confirms what was
//! reviewed, not a later commit.

use std::path::Path;

use serde_json::json;

use crate::git::{Repository, short};
use crate::tasks::{self, human};
use crate::work::{self, Subject, Work};

use super::locks::lock_task;
use super::log::append_log_line;
use super::verdicts::{self, Decision, Record, Trust};
use super::{Error, now_rfc3339};

/// What the person says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Say {
    /// Confirm, with an optional note.
    Approve(Option<String>),
    /// Turn down, with the reason (the task's feedback).
    Reject(String),
    /// Decide nothing now, with why.
    Skip(String),
}

impl Say {
    fn decision(&self) -> Decision {
        match self {
            Say::Approve(_) => Decision::HumanApprove,
            Say::Reject(_) => Decision::HumanReject,
            Say::Skip(_) => Decision::Skipped,
        }
    }

    fn text(&self) -> Option<String> {
        match self {
            Say::Approve(note) => note.clone(),
            Say::Reject(text) | Say::Skip(text) => Some(text.clone()),
        }
    }
}

/// What was recorded.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub task_id: String,
    pub feature: Option<String>,
    pub branch: String,
    /// The commit the model approved, which the decision is about.
    pub head_commit: String,
    pub at: String,
    pub decision: Decision,
    /// The task's status and revision count now.
    pub status: String,
    pub revision_count: u32,
    /// A rejection counted a new revision (not one of a head the last
    /// rejection already judged).
    pub new_revision: bool,
    /// Why the task failed, when the rejection failed it.
    pub error: Option<String>,
}

/// Record what `by` says about task `id`'s approval, given `via` ("speed
/// approve", "the prompt after speed review"); a rejection counts against
/// `max_revisions` (`review.max_revisions`) as a review's does.
pub fn decide(
    root: &Path,
    id: &str,
    feature: Option<&str>,
    by: &str,
    say: &Say,
    via: &str,
    max_revisions: u32,
) -> Result<Recorded, Error> {
    let store = tasks::Store::open(root);
    let found = store.find(id, feature)?;
    let subject = Subject::Task(Box::new(found.clone()));
    let _lock = lock_task(root, &found, &subject.label())?;
    // The gate reads the decision whole or not at all.
    let _record = super::locks::recording(root, &crate::work::Work::of_task(&found))?;
    let mut task = store.reload(&found)?;
    let label = subject.label();
    let Some(pending) = human::pending(&task) else {
        let now = match (&task.review_verdict, task.raw.get("human_review")) {
            (_, Some(h)) if h.get("status").and_then(|s| s.as_str()) == Some("approved") => {
                "a person already approved it".to_string()
            }
            (Some(verdict), _) => format!("its review_verdict is {verdict:?}"),
            (None, _) => "it has no review".to_string(),
        };
        return Err(Error::Refused(format!(
            "{label} has no model approval waiting for a person ({now}); `speed approve` and `speed reject` answer an approval that review.human made wait (a request for changes is accepted with `speed override`)"
        )));
    };
    let repo = Repository::open(root)?;
    let head = repo
        .branch_head(&task.branch)
        .map(|h| h.commit)
        .map_err(|source| work::Error::BranchMissing {
            subject: label.clone(),
            branch: task.branch.clone(),
            source: Box::new(source),
        })?;
    if matches!(say, Say::Approve(_)) && head != pending.head_commit {
        return Err(Error::Refused(format!(
            "{label}: branch {} moved since the model's review (it approved {}, the branch is at {}): review it again (speed review --task-id {})",
            task.branch,
            short(&pending.head_commit),
            short(&head),
            task.id
        )));
    }
    let work = Work::Task {
        id: task.id.clone(),
        feature: task.feature.clone(),
    };
    // The task file says what waits; the ledger must say so too: a person
    // confirms an approval speed recorded, never one a hand-edited file
    // claims.
    if matches!(say, Say::Approve(_)) && !recorded_waiting(root, &pending.head_commit, &work) {
        return Err(Error::Refused(format!(
            "{label}: no model approval waiting for a person is recorded at {} (.speed/reviews/log.jsonl): review it again (speed review --task-id {})",
            short(&pending.head_commit),
            task.id
        )));
    }
    let at = now_rfc3339();
    let word = human::Word {
        by: by.to_string(),
        at: at.clone(),
        text: say.text(),
        via: via.to_string(),
    };
    let decision = say.decision();
    let revisions_before = task.revision_count;
    // The number the decision's history entry takes (a skip takes none).
    let attempt = (!matches!(say, Say::Skip(_))).then(|| tasks::counting::next_attempt(&task));
    match say {
        Say::Approve(_) => human::approve(&mut task, &pending, &word),
        Say::Reject(_) => human::reject(&mut task, &pending, &word, max_revisions),
        Say::Skip(_) => human::skip(&mut task, &pending, &word),
    }
    // The log first: a task file that says a person decided always has its
    // line in the log, and the line says what it left the task at.
    let text_key = if matches!(say, Say::Approve(_)) {
        "note"
    } else {
        "reason"
    };
    let mut line = json!({
        "at": at,
        "task": task.id,
        "feature": task.feature,
        "branch": task.branch,
        "head_commit": pending.head_commit,
        "decision": decision.as_str(),
        "by": by,
        text_key: word.text,
        "via": via,
        "requested_at": pending.requested_at,
    });
    if let (Some(attempt), serde_json::Value::Object(map)) = (attempt, &mut line) {
        map.insert("attempt".to_string(), json!(attempt));
    }
    if let (Say::Reject(_), serde_json::Value::Object(map)) = (say, &mut line) {
        map.insert("task_status".to_string(), json!(task.status.as_str()));
        map.insert("revision_count".to_string(), json!(task.revision_count));
    }
    append_log_line(root, &line)?;
    store.save(&task)?;
    let record = Record {
        task: Some(task.id.clone()),
        feature: task.feature.clone(),
        defect: None,
        head_commit: pending.head_commit.clone(),
        decision,
        at: at.clone(),
        diff: None,
        specs: Vec::new(),
        by: Some(by.to_string()),
        reason: word.text.clone(),
        via: Some(via.to_string()),
        awaiting_human: false,
    };
    // A cache: the log holds the decision if this fails, and the gate
    // reads the log when the cache does not know a head.
    if let Err(err) = verdicts::Store::open(root).add(&record) {
        tracing::warn!(
            "the verdict cache was not updated for {}: {err}",
            work.label()
        );
    }
    super::notes::keep_decision(root, &work, &record);
    Ok(Recorded {
        task_id: task.id.clone(),
        feature: task.feature.clone(),
        branch: task.branch.clone(),
        head_commit: pending.head_commit,
        at,
        decision,
        status: task.status.to_string(),
        revision_count: task.revision_count,
        new_revision: task.revision_count != revisions_before,
        error: (task.status == tasks::Status::Failed)
            .then(|| {
                task.raw
                    .get("error")
                    .and_then(|e| e.as_str())
                    .map(str::to_string)
            })
            .flatten(),
    })
}

/// Whether the latest judgement recorded about `work` at `head` is a
/// model's approval waiting for a person.
fn recorded_waiting(root: &Path, head: &str, work: &Work) -> bool {
    let found = verdicts::Store::open(root).at_head(
        head,
        work,
        Trust {
            cache: true,
            log: true,
        },
    );
    found
        .records
        .iter()
        .rev()
        .find(|r| !matches!(r.decision, Decision::ChecksPassed | Decision::Skipped))
        .is_some_and(|r| r.decision == Decision::Approve && r.awaiting_human)
}
