//! What a review changes in a task (the contract's "What a review changes"):
//! the verdict, feedback, time, reviewed diff hash, status and revision
//! count. It edits the task in memory only; `Store::save` writes it.
//! Existing keys keep their position in the file; new keys are appended.

use serde_json::Value;

use super::{Status, Task};

/// The decided outcome of one review, as the task file records it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReviewOutcome {
    pub approved: bool,
    /// What to fix, for a request_changes.
    pub feedback: Option<String>,
    /// When the review finished (RFC 3339).
    pub reviewed_at: String,
    /// `sha256:<hex>` of the diff that was reviewed.
    pub diff_hash: String,
    /// `review.max_revisions`: past this many revisions a task fails.
    pub max_revisions: u32,
    /// The guardian's status and summary, when it ran.
    pub guardian: Option<(String, String)>,
}

/// Applies a review's outcome to the task's file fields and typed fields.
pub fn record_review(task: &mut Task, outcome: &ReviewOutcome) {
    let verdict = if outcome.approved {
        "approve"
    } else {
        "request_changes"
    };
    if !outcome.approved {
        task.revision_count = task.revision_count.saturating_add(1);
        task.status = if task.revision_count > outcome.max_revisions {
            Status::Failed
        } else {
            Status::Pending
        };
        set(task, "status", Value::String(task.status.to_string()));
    }
    set(task, "review_verdict", Value::String(verdict.to_string()));
    if !outcome.approved {
        let feedback = outcome.feedback.clone().unwrap_or_default();
        set(task, "review_feedback", Value::String(feedback));
    }
    set(
        task,
        "reviewed_at",
        Value::String(outcome.reviewed_at.clone()),
    );
    set(
        task,
        "reviewed_diff",
        Value::String(outcome.diff_hash.clone()),
    );
    if !outcome.approved {
        set(task, "revision_count", Value::from(task.revision_count));
    }
    if let Some((status, summary)) = &outcome.guardian {
        set(task, "guardian_verdict", Value::String(status.clone()));
        set(task, "guardian_summary", Value::String(summary.clone()));
    }
    task.review_verdict = Some(verdict.to_string());
    task.reviewed_diff = Some(outcome.diff_hash.clone());
}

/// Replaces a value in place (keeping its position) or appends a new key.
fn set(task: &mut Task, key: &str, value: Value) {
    task.raw.insert(key.to_string(), value);
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    fn task(text: &str) -> Task {
        Task::parse(Path::new(".speed/tasks/3.json"), None, text).unwrap()
    }

    fn outcome(approved: bool) -> ReviewOutcome {
        ReviewOutcome {
            approved,
            feedback: (!approved).then(|| "AC-2 is unmet: add the empty-catalog hint".to_string()),
            reviewed_at: "2025-01-02T03:04:05Z".into(),
            diff_hash: "sha256:abc".into(),
            max_revisions: 2,
            guardian: None,
        }
    }

    fn keys(task: &Task) -> Vec<&str> {
        task.raw.keys().map(String::as_str).collect()
    }

    #[test]
    fn approve_records_verdict_time_and_diff_and_keeps_status() {
        let mut t = task(r#"{"id": 3, "status": "done", "x-owner": "bob"}"#);
        record_review(&mut t, &outcome(true));
        assert_eq!(t.status, Status::Done);
        assert_eq!(t.raw["status"], "done");
        assert_eq!(t.raw["review_verdict"], "approve");
        assert_eq!(t.raw["reviewed_at"], "2025-01-02T03:04:05Z");
        assert_eq!(t.raw["reviewed_diff"], "sha256:abc");
        assert!(!t.raw.contains_key("review_feedback"));
        assert!(!t.raw.contains_key("revision_count"));
        assert_eq!(t.review_verdict.as_deref(), Some("approve"));
        assert_eq!(t.reviewed_diff.as_deref(), Some("sha256:abc"));
        assert_eq!(
            keys(&t),
            [
                "id",
                "status",
                "x-owner",
                "review_verdict",
                "reviewed_at",
                "reviewed_diff"
            ]
        );
    }

    #[test]
    fn request_changes_sends_the_task_back_with_feedback() {
        let mut t = task(
            r#"{"review_verdict": "approve", "id": 3, "status": "done", "revision_count": 0}"#,
        );
        record_review(&mut t, &outcome(false));
        assert_eq!(t.status, Status::Pending);
        assert_eq!(t.raw["status"], "pending");
        assert_eq!(t.raw["review_verdict"], "request_changes");
        assert_eq!(
            t.raw["review_feedback"],
            "AC-2 is unmet: add the empty-catalog hint"
        );
        assert_eq!(t.raw["revision_count"], 1);
        assert_eq!(t.revision_count, 1);
        // Existing keys stay where they were; new ones are appended.
        assert_eq!(
            keys(&t),
            [
                "review_verdict",
                "id",
                "status",
                "revision_count",
                "review_feedback",
                "reviewed_at",
                "reviewed_diff"
            ]
        );
    }

    #[test]
    fn request_changes_past_max_revisions_fails_the_task() {
        let mut t = task(r#"{"status": "done", "revision_count": 1}"#);
        record_review(&mut t, &outcome(false));
        assert_eq!((t.status.clone(), t.revision_count), (Status::Pending, 2));

        let mut t = task(r#"{"status": "done", "revision_count": 2}"#);
        record_review(&mut t, &outcome(false));
        assert_eq!((t.status.clone(), t.revision_count), (Status::Failed, 3));
        assert_eq!(t.raw["status"], "failed");
        assert_eq!(t.raw["revision_count"], 3);
    }

    #[test]
    fn guardian_outcome_is_recorded() {
        let mut t = task(r#"{"status": "done"}"#);
        let mut o = outcome(false);
        o.guardian = Some((
            "rejected".into(),
            "Adds a feature the vision excludes".into(),
        ));
        record_review(&mut t, &o);
        assert_eq!(t.raw["guardian_verdict"], "rejected");
        assert_eq!(
            t.raw["guardian_summary"],
            "Adds a feature the vision excludes"
        );
    }
}
