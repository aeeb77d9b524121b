//! A person's decision to accept work despite its review, kept for audit.
//!
//! `speed override` writes it into the task file (`review_verdict:
//! "approve"` and an `override` object, atomically, unknown fields kept); a
//! hook bypassed with a reason (`SPEED_SKIP_HOOK=1`) records the same
//! decision without touching task files, since a merge is in progress. Both
//! append a log line with `decision: "override"` and keep the decision in
//! the verdict cache, where it covers the head commit it was made at and no
//! other.

use std::path::Path;

use serde_json::{Map, Value, json};

use crate::git::{MainBranch, Repository};
use crate::tasks::{self, Status};

use crate::work::{self, Subject, Work};

use super::locks::lock_task;
use super::log::append_log_line;
use super::verdicts::{self, Decision, Record};
use super::{Error, now_rfc3339};

/// Who decided, why, and how.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decider {
    /// The git user (`Name <email>`), else the login name.
    pub by: String,
    pub reason: String,
    /// "speed override", or "SPEED_SKIP_HOOK (pre-merge-commit)".
    pub via: String,
}

/// What `override_task` recorded.
#[derive(Debug, Clone)]
pub struct Overridden {
    pub task_id: String,
    pub feature: Option<String>,
    pub branch: String,
    pub head_commit: String,
    pub at: String,
    /// The review verdict the override replaced, if the task had one.
    pub overruled: Option<String>,
    /// Why the diff could not be hashed (the override stands without it).
    pub note: Option<String>,
}

/// Accept task `id` at its branch's head: the task file, the log, the cache.
pub fn override_task(
    root: &Path,
    main: &MainBranch,
    id: &str,
    feature: Option<&str>,
    decider: &Decider,
) -> Result<Overridden, Error> {
    let repo = Repository::open(root)?;
    let store = tasks::Store::open(root);
    let found = store.find(id, feature)?;
    let subject = Subject::Task(Box::new(found.clone()));
    // No review writes the task file while the override does, and the
    // override starts from the file as it is now.
    let _lock = lock_task(root, &found, &subject.label())?;
    // The gate reads the decision whole or not at all.
    let _record = super::locks::recording(root, &work::Work::of_task(&found))?;
    let mut task = store.reload(&found)?;
    let head = repo
        .branch_head(&task.branch)
        .map(|h| h.commit)
        .map_err(|source| work::Error::BranchMissing {
            subject: subject.label(),
            branch: task.branch.clone(),
            source: Box::new(source),
        })?;
    let (diff, note) = match work::resolve(&repo, main, &subject) {
        Ok(resolved) => (Some(resolved.diff.sha256), None),
        Err(err) => (None, Some(format!("the diff could not be hashed: {err}"))),
    };
    let at = now_rfc3339();
    let overruled = task.review_verdict.clone();
    // A person's earlier override is kept inside the new one, not lost.
    let previous: Map<String, Value> = [
        "review_verdict",
        "reviewed_at",
        "review_feedback",
        "override",
        "human_review",
        "error",
        "replan",
        "guardian_verdict",
    ]
    .iter()
    .filter_map(|key| task.raw.get(*key).map(|v| (key.to_string(), v.clone())))
    .collect();

    // The person accepts the work: it is done, approved at this diff (so a
    // batch review does not take it up again), and says who and why.
    task.raw
        .insert("status".to_string(), Value::String("done".to_string()));
    task.status = Status::Done;
    task.raw.insert(
        "review_verdict".to_string(),
        Value::String("approve".into()),
    );
    task.review_verdict = Some("approve".to_string());
    if let Some(diff) = &diff {
        task.raw
            .insert("reviewed_diff".to_string(), Value::String(diff.clone()));
        task.reviewed_diff = Some(diff.clone());
    }
    // A person's review the approval waited for is answered by this one;
    // what speed wrote for the decision it overrules no longer stands (it
    // is kept in `override.overruled`, and the history keeps the rest),
    // the overruled review's feedback included.
    for key in [
        "human_review",
        "error",
        "replan",
        "revision_context",
        "guardian_verdict",
        "guardian_summary",
    ] {
        tasks::counting::clear(&mut task, key);
    }
    // Feedback someone else wrote since speed's last decision (the
    // orchestrator's) is kept in the entry, as a review's and a person's
    // rejection keep it; the overruled review's own feedback is in its entry.
    let previous_feedback = tasks::state::unrecorded_feedback(&task);
    tasks::counting::clear(&mut task, "review_feedback");
    task.review_feedback = None;
    let attempt = tasks::counting::next_attempt(&task);
    task.raw.insert(
        "override".to_string(),
        json!({
            "by": decider.by,
            "at": at,
            "reason": decider.reason,
            "head_commit": head,
            "overruled": if previous.is_empty() { Value::Null } else { Value::Object(previous) },
        }),
    );
    // A decision like any other: one entry, numbered after the last.
    let mut entry = json!({
        "attempt": attempt,
        "verdict": "override",
        "by": decider.by,
        "at": at,
        "head_commit": head,
        "reason": decider.reason,
        "overruled": overruled,
        "via": decider.via,
    });
    if let (Some(previous), Value::Object(fields)) = (previous_feedback, &mut entry) {
        fields.insert("previous_feedback".to_string(), previous);
    }
    tasks::state::append_history(&mut task, entry);
    store.save(&task)?;

    let work = Work::Task {
        id: task.id.clone(),
        feature: task.feature.clone(),
    };
    record(
        root,
        &work,
        &task.branch,
        &head,
        diff,
        &at,
        decider,
        Ruled {
            overruled: overruled.as_deref(),
            attempt: Some(attempt),
        },
    )?;
    Ok(Overridden {
        task_id: task.id,
        feature: task.feature,
        branch: task.branch,
        head_commit: head,
        at,
        overruled,
        note,
    })
}

/// A hook let `work` in at `commit` because a person bypassed it with a
/// reason: the log and the cache, no task file.
pub fn record_bypass(
    root: &Path,
    work: &Work,
    branch: &str,
    commit: &str,
    decider: &Decider,
) -> Result<(), Error> {
    let at = now_rfc3339();
    record(
        root,
        work,
        branch,
        commit,
        None,
        &at,
        decider,
        Ruled {
            overruled: None,
            attempt: None,
        },
    )
}

/// A bypass that let commits in without knowing which work they carry (the
/// gate could not run): one log line naming them, nothing cached.
pub fn record_blind_bypass(
    root: &Path,
    commits: &[String],
    decider: &Decider,
) -> Result<(), Error> {
    append_log_line(
        root,
        &json!({
            "at": now_rfc3339(),
            "commits": commits,
            "decision": "override",
            "by": decider.by,
            "reason": decider.reason,
            "via": decider.via,
        }),
    )
}

/// What an override decided beyond who and why: the verdict it overruled
/// and, for a task file's override, the number of its history entry.
struct Ruled<'a> {
    overruled: Option<&'a str>,
    attempt: Option<u32>,
}

#[allow(clippy::too_many_arguments)]
fn record(
    root: &Path,
    work: &Work,
    branch: &str,
    commit: &str,
    diff: Option<String>,
    at: &str,
    decider: &Decider,
    ruled: Ruled,
) -> Result<(), Error> {
    let (task, feature, defect) = match work {
        Work::Task { id, feature } => (Some(id.clone()), feature.clone(), None),
        Work::Defect { name } => (None, None, Some(name.clone())),
    };
    let mut line = json!({
        "at": at,
        "task": task,
        "feature": feature,
        "branch": branch,
        "head_commit": commit,
        "decision": Decision::Override.as_str(),
        "by": decider.by,
        "reason": decider.reason,
        "via": decider.via,
        "overruled": ruled.overruled,
        "hashes": {"diff": diff},
    });
    if let (Some(name), Value::Object(map)) = (&defect, &mut line) {
        map.insert("defect".to_string(), Value::String(name.clone()));
    }
    if let (Some(attempt), Value::Object(map)) = (ruled.attempt, &mut line) {
        map.insert("attempt".to_string(), json!(attempt));
    }
    append_log_line(root, &line)?;
    let record = Record {
        task,
        feature,
        defect,
        head_commit: commit.to_string(),
        decision: Decision::Override,
        at: at.to_string(),
        diff,
        specs: Vec::new(),
        by: Some(decider.by.clone()),
        reason: Some(decider.reason.clone()),
        via: Some(decider.via.clone()),
        awaiting_human: false,
    };
    verdicts::Store::open(root).add(&record)?;
    super::notes::keep_decision(root, work, &record);
    Ok(())
}
