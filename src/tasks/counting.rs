//! The arithmetic of a task's record, one rule for every actor who decides
//! (a review, a person through `speed approve`/`speed reject`, an
//! override): the number a new `review_history` entry takes, whether a
//! rejection counts as a new revision, when the task fails at
//! `review.max_revisions` and what its `error` then says, and which of
//! speed's own fields an earlier decision left behind.
//!
//! - Attempt numbers are unique and in order: one past the highest number
//!   the history holds, whoever wrote it. The orchestrator's `retry_count`
//!   is its own count of developer attempts and is never added in.
//! - A revision is a new attempt: a rejection of a head the last rejection
//!   already judged replaces the verdict and the feedback, not the count,
//!   so re-running a review of an unchanged head never fails a task.
//! - Past `review.max_revisions` revisions the task is `failed`, with an
//!   `error` saying how many, the limit, and what the last rejection said.
//! - An approval puts a task speed sent back (`pending`, `failed`) to
//!   `done`, so the status never disagrees with the verdict.
//! - speed's `error` (a failure it recorded) goes once the task no longer
//!   fails; an `error` someone else wrote is theirs and stays.
//! - A person's `override` stands in the task's fields only while
//!   decisions are about the head it was given at.

use serde_json::Value;

use super::{Status, Task};

/// Verdicts of `review_history` entries that rejected the work.
const REJECTIONS: [&str; 2] = ["request_changes", "human_reject"];

/// The attempt number of the next `review_history` entry: one past the
/// highest recorded (a number, or a string of digits written by hand), 1
/// for the first.
pub fn next_attempt(task: &Task) -> u32 {
    task.review_history
        .iter()
        .filter_map(|entry| match entry.get("attempt")? {
            Value::Number(n) => n.as_u64(),
            Value::String(s) => s.trim().parse::<u64>().ok(),
            _ => None,
        })
        .max()
        .map_or(1, |n| {
            u32::try_from(n.saturating_add(1)).unwrap_or(u32::MAX)
        })
}

/// The head commit the last rejection judged, when the history names one.
pub fn last_rejected_head(task: &Task) -> Option<&str> {
    task.review_history
        .iter()
        .rev()
        .find(|entry| {
            entry
                .get("verdict")
                .and_then(Value::as_str)
                .is_some_and(|v| REJECTIONS.contains(&v))
        })
        .and_then(|entry| entry.get("head_commit"))
        .and_then(Value::as_str)
        .filter(|head| !head.is_empty())
}

/// A rejection of the work at one head, by whoever decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rejection<'a> {
    /// The head commit rejected.
    pub head: &'a str,
    /// `review.max_revisions`.
    pub max_revisions: u32,
    /// Who rejected and why, for a failed task's `error`: "the last
    /// review: …", "Ana's rejection (speed reject): …".
    pub last: String,
}

/// What a rejection did to the count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Counted {
    /// A new revision (the head is not the one the last rejection judged).
    pub new_revision: bool,
    /// The task failed at `review.max_revisions`.
    pub failed: bool,
}

/// Count a rejection and set the status it leaves: `pending`, or `failed`
/// past the limit with the reason in `error`. Call it before the rejection's
/// own history entry is appended (it reads the last one).
pub fn reject(task: &mut Task, rejection: &Rejection) -> Counted {
    let new_revision = last_rejected_head(task) != Some(rejection.head);
    if new_revision {
        task.revision_count = task.revision_count.saturating_add(1);
    }
    let failed = task.revision_count > rejection.max_revisions;
    set_status(
        task,
        if failed {
            Status::Failed
        } else {
            Status::Pending
        },
    );
    set(task, "revision_count", Value::from(task.revision_count));
    if failed {
        let error = failure(task.revision_count, rejection);
        set(task, "error", Value::String(error));
    } else {
        clear_own_error(task);
    }
    Counted {
        new_revision,
        failed,
    }
}

/// An approval: a task speed sent back is done again, and speed's failure
/// no longer stands.
pub fn approve(task: &mut Task) {
    if matches!(task.status, Status::Pending | Status::Failed) {
        set_status(task, Status::Done);
    }
    clear_own_error(task);
}

/// Why the task failed, for its `error` field.
fn failure(revisions: u32, rejection: &Rejection) -> String {
    let mut reason = format!(
        "rejected {revisions} times, more than review.max_revisions ({}) allows",
        rejection.max_revisions
    );
    if !rejection.last.trim().is_empty() {
        reason.push_str("; ");
        reason.push_str(rejection.last.trim());
    }
    reason
}

/// The task's `error` goes when speed wrote it: the history records every
/// failure speed wrote (`error` of its entry), and an older speed's
/// wording is known by its start.
fn clear_own_error(task: &mut Task) {
    let Some(Value::String(current)) = task.raw.get("error") else {
        return;
    };
    let recorded = task
        .review_history
        .iter()
        .any(|entry| entry.get("error").and_then(Value::as_str) == Some(current.as_str()));
    let older = current.starts_with("review requested changes ")
        && current.contains("more than review.max_revisions");
    if recorded || older {
        set(task, "error", Value::Null);
    }
}

/// The task's `error` as it stands after this decision, for its history
/// entry: set only when the decision failed the task.
pub fn error_now(task: &Task) -> Option<Value> {
    (task.status == Status::Failed)
        .then(|| task.raw.get("error").cloned())
        .flatten()
        .filter(Value::is_string)
}

fn set_status(task: &mut Task, status: Status) {
    set(task, "status", Value::String(status.to_string()));
    task.status = status;
}

/// Replaces a value in place (keeping its position) or appends a new key.
fn set(task: &mut Task, key: &str, value: Value) {
    task.raw.insert(key.to_string(), value);
}

/// Sets `key` to null when it holds something: the key keeps its place and
/// says the value no longer stands; an absent key stays absent.
pub fn clear(task: &mut Task, key: &str) {
    if task.raw.get(key).is_some_and(|v| !v.is_null()) {
        set(task, key, Value::Null);
    }
}

/// A later decision about another head: the `override` a person gave at an
/// earlier head no longer stands in the task's fields (its `review_history`
/// entry keeps who, when, why and at which commit). At the head it was
/// given at it stands, as the merge gate still reads it there.
pub fn drop_override_of_another_head(task: &mut Task, head: &str) {
    let given_at = task
        .raw
        .get("override")
        .and_then(|o| o.get("head_commit"))
        .and_then(Value::as_str);
    let stands = match given_at {
        Some(given) => given == head,
        // An override that names no head cannot be told to be this one's.
        None => task.raw.get("override").is_none_or(Value::is_null),
    };
    if !stands {
        clear(task, "override");
    }
}

/// One line of what a rejection asked, for a failed task's `error`: the
/// first few blocking findings, else the first line of the feedback that
/// is not a heading over a list.
pub fn first_reasons(blocking: &[String], feedback: Option<&str>) -> String {
    const SHOWN: usize = 3;
    let shown: Vec<&str> = blocking
        .iter()
        .map(|b| b.trim())
        .filter(|b| !b.is_empty())
        .collect();
    if !shown.is_empty() {
        let mut line = shown
            .iter()
            .take(SHOWN)
            .copied()
            .collect::<Vec<_>>()
            .join("; ");
        if shown.len() > SHOWN {
            line.push_str(&format!(" (and {} more)", shown.len() - SHOWN));
        }
        return line;
    }
    feedback
        .unwrap_or_default()
        .lines()
        .map(|l| l.trim().trim_start_matches(['-', '*', '•']).trim())
        .find(|l| !l.is_empty() && !l.ends_with(':'))
        .unwrap_or_default()
        .to_string()
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    fn task(text: &str) -> Task {
        Task::parse(Path::new(".speed/tasks/3.json"), None, text).unwrap()
    }

    #[test]
    fn an_override_stands_at_its_head_and_goes_at_another() {
        let text = r#"{"override": {"by": "Ana", "head_commit": "aaa", "reason": "r"}}"#;
        let mut t = task(text);
        drop_override_of_another_head(&mut t, "aaa");
        assert_eq!(t.raw["override"]["by"], "Ana");
        drop_override_of_another_head(&mut t, "bbb");
        assert!(t.raw["override"].is_null());
        // One that names no head is not known to be this head's.
        let mut t = task(r#"{"override": {"by": "Ana"}}"#);
        drop_override_of_another_head(&mut t, "aaa");
        assert!(t.raw["override"].is_null());
        // None: nothing is written.
        let mut t = task(r#"{"id": 3}"#);
        drop_override_of_another_head(&mut t, "aaa");
        assert!(!t.raw.contains_key("override"));
    }

    #[test]
    fn attempts_follow_the_highest_recorded_number_whoever_wrote_it() {
        assert_eq!(next_attempt(&task(r#"{"retry_count": 4}"#)), 1);
        let t = task(
            r#"{"retry_count": 2, "review_history": [{"attempt": 1}, {"attempt": "3"},
                {"verdict": "skipped"}, {"attempt": "x"}, "free text"]}"#,
        );
        assert_eq!(next_attempt(&t), 4);
    }

    #[test]
    fn a_rejection_of_the_head_the_last_rejection_judged_is_no_new_revision() {
        let rejection = |head| Rejection {
            head,
            max_revisions: 1,
            last: "the last review: AC-2 unmet".into(),
        };
        let mut t = task(
            r#"{"status": "done", "revision_count": 1, "review_history": [
                {"attempt": 1, "verdict": "request_changes", "head_commit": "aaa"},
                {"attempt": 2, "verdict": "approve", "head_commit": "aaa"}]}"#,
        );
        let counted = reject(&mut t, &rejection("aaa"));
        assert_eq!(
            counted,
            Counted {
                new_revision: false,
                failed: false
            }
        );
        assert_eq!(
            (t.revision_count, t.raw["status"].as_str()),
            (1, Some("pending"))
        );
        // A new head counts, and past the limit the task fails with why.
        let counted = reject(&mut t, &rejection("bbb"));
        assert!(counted.new_revision && counted.failed);
        assert_eq!(t.raw["status"], "failed");
        assert_eq!(
            t.raw["error"],
            "rejected 2 times, more than review.max_revisions (1) allows; the last review: AC-2 unmet"
        );
    }

    #[test]
    fn an_approval_undoes_speeds_failure_but_not_someone_elses_error() {
        let mut t = task(
            r#"{"status": "failed", "error": "rejected 3 times, more than review.max_revisions (2) allows",
                "review_history": [{"attempt": 3, "verdict": "request_changes",
                "error": "rejected 3 times, more than review.max_revisions (2) allows"}]}"#,
        );
        approve(&mut t);
        assert_eq!(
            (t.raw["status"].as_str(), &t.raw["error"]),
            (Some("done"), &Value::Null)
        );
        let mut t =
            task(r#"{"status": "running", "error": "Quality gates failed: tests exited 2"}"#);
        approve(&mut t);
        assert_eq!(t.raw["status"], "running");
        assert_eq!(t.raw["error"], "Quality gates failed: tests exited 2");
        let mut t = task(
            r#"{"status": "pending", "error": "review requested changes 3 times, more than review.max_revisions (2); last review: Blocking issues (fix these first):"}"#,
        );
        approve(&mut t);
        assert_eq!(
            (t.raw["status"].as_str(), &t.raw["error"]),
            (Some("done"), &Value::Null)
        );
    }

    #[test]
    fn a_failure_names_findings_not_a_heading() {
        assert_eq!(
            first_reasons(
                &[],
                Some("Blocking issues (fix these first):\n- AC-2 is unmet: no hint\n")
            ),
            "AC-2 is unmet: no hint"
        );
        let many: Vec<String> = (1..=5).map(|n| format!("finding {n}")).collect();
        assert_eq!(
            first_reasons(&many, None),
            "finding 1; finding 2; finding 3 (and 2 more)"
        );
    }
}
