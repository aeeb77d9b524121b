//! A person's word on a model's approval that waits for one (`review.human`
//! = `require`, or `prompt`): the changes `speed approve`, `speed reject`
//! and a skip at the prompt make to the task, in memory (`Store::save`
//! writes it). Each appends one `review_history` entry and never rewrites
//! an earlier one; existing keys keep their place.
//!
//! A rejection counts like a review's request for changes (`counting`):
//! `status: "pending"` (or `failed` past `review.max_revisions`), the
//! reason as `review_feedback` (feedback someone else wrote kept in the
//! entry as `previous_feedback`), a `revision_context`; the reason is a
//! previous finding the next review must answer. Nothing here turns a
//! request for changes into an approval: that stays `speed override`.

use serde_json::{Value, json};

use super::state::{Revision, append_history, revision_context, unrecorded_feedback};
use super::{Task, counting};

/// The approval a person is asked to confirm.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pending {
    /// When the model's approval asked for a person (RFC 3339).
    pub requested_at: String,
    /// The head commit the model approved.
    pub head_commit: String,
}

/// The approval waiting for a person, if the task has one: its
/// `human_review` says `pending` and its verdict is still the approval.
pub fn pending(task: &Task) -> Option<Pending> {
    let review = task.raw.get("human_review")?.as_object()?;
    let waiting = review.get("status").and_then(Value::as_str) == Some("pending")
        && task.review_verdict.as_deref() == Some("approve");
    let text = |key: &str| {
        review
            .get(key)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    waiting.then(|| Pending {
        requested_at: text("requested_at"),
        head_commit: text("head_commit"),
    })
}

/// Who decided, when, and why (a note for an approval, the reason for a
/// rejection or a skip).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Word {
    pub by: String,
    pub at: String,
    pub text: Option<String>,
    /// How it was given: "speed approve", "the prompt after speed review".
    pub via: String,
}

/// The person confirms the model's approval: the task stays approved and
/// done, and says who confirmed it at which commit.
pub fn approve(task: &mut Task, pending: &Pending, word: &Word) {
    let entry = entry(task, "human_approve", pending, word, "note");
    set(
        task,
        "human_review",
        json!({"status": "approved", "by": word.by, "at": word.at, "note": word.text,
               "head_commit": pending.head_commit, "requested_at": pending.requested_at,
               "via": word.via}),
    );
    append_history(task, entry);
}

/// The person turns the model's approval down: a rejection like a
/// review's (`counting`): back to `pending` with the reason as its
/// feedback, one more revision unless the last rejection judged the same
/// head, `failed` past `max_revisions`. Feedback someone else wrote since
/// the model's review (the orchestrator's) is kept in the entry.
pub fn reject(task: &mut Task, pending: &Pending, word: &Word, max_revisions: u32) {
    let reason = word.text.clone().unwrap_or_default();
    let previous_feedback = unrecorded_feedback(task);
    let mut entry = entry(task, "human_reject", pending, word, "reason");
    let counted = counting::reject(
        task,
        &counting::Rejection {
            head: &pending.head_commit,
            max_revisions,
            last: format!("the last, {}'s rejection ({}): {reason}", word.by, word.via),
        },
    );
    if let Value::Object(fields) = &mut entry {
        // As a review's entry: the feedback it wrote, so a later review
        // knows the task's feedback is this one's and not a person's edit.
        fields.insert("feedback".to_string(), Value::String(reason.clone()));
        if !counted.new_revision {
            fields.insert("same_head".to_string(), Value::Bool(true));
        }
        if let Some(error) = counting::error_now(task) {
            fields.insert("error".to_string(), error);
        }
        if let Some(previous) = previous_feedback {
            fields.insert("previous_feedback".to_string(), previous);
        }
    }
    set(
        task,
        "review_verdict",
        Value::String("request_changes".into()),
    );
    set(task, "review_feedback", Value::String(reason.clone()));
    set(
        task,
        "human_review",
        json!({"status": "rejected", "by": word.by, "at": word.at, "reason": reason,
               "head_commit": pending.head_commit, "requested_at": pending.requested_at,
               "via": word.via}),
    );
    // The guardian judged the approval a person has now turned down; its
    // word is kept in that review's history entry.
    counting::clear(task, "guardian_verdict");
    counting::clear(task, "guardian_summary");
    append_history(task, entry);
    let revision = Revision {
        blocking_issues: vec![json!({"message": reason, "by": word.by, "source": "person"})],
        scores: Value::Null,
    };
    let context = revision_context(task, &revision, &reason);
    set(task, "revision_context", context);
    task.review_verdict = Some("request_changes".to_string());
    task.review_feedback = Some(reason).filter(|r| !r.trim().is_empty());
}

/// The person was asked and decided nothing: recorded without an attempt
/// number (nothing was decided), and the approval still waits.
pub fn skip(task: &mut Task, pending: &Pending, word: &Word) {
    let mut entry = entry(task, "skipped", pending, word, "reason");
    if let Value::Object(fields) = &mut entry {
        fields.remove("attempt");
    }
    append_history(task, entry);
}

fn entry(task: &Task, verdict: &str, pending: &Pending, word: &Word, text_key: &str) -> Value {
    let mut entry = json!({
        "attempt": counting::next_attempt(task),
        "verdict": verdict,
        "by": word.by,
        "at": word.at,
        "head_commit": pending.head_commit,
        "via": word.via,
    });
    if let Value::Object(fields) = &mut entry {
        fields.insert(
            text_key.to_string(),
            word.text.clone().map_or(Value::Null, Value::String),
        );
    }
    entry
}

fn set(task: &mut Task, key: &str, value: Value) {
    task.raw.insert(key.to_string(), value);
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::tasks::state::{ReviewOutcome, record_review};

    fn approved_waiting() -> Task {
        let mut t = Task::parse(
            Path::new(".speed/tasks/3.json"),
            None,
            r#"{"id": 3, "status": "done", "x-owner": "bob"}"#,
        )
        .unwrap();
        record_review(
            &mut t,
            &ReviewOutcome {
                approved: true,
                feedback: None,
                reviewed_at: "2025-01-02T03:04:05Z".into(),
                reviewed_by: "speed".into(),
                diff_hash: "sha256:abc".into(),
                head_commit: "0123456789abcdef".into(),
                blocking: vec![],
                max_revisions: 2,
                guardian: None,
                overall_score: Some(91),
                revision: None,
                replan: None,
                human_pending: true,
                summary: Some(".speed/reviews/x.md".into()),
            },
        );
        t
    }

    fn word(text: Option<&str>) -> Word {
        Word {
            by: "Ana".into(),
            at: "2025-01-03T00:00:00Z".into(),
            text: text.map(str::to_string),
            via: "speed approve".into(),
        }
    }

    #[test]
    fn a_model_approval_waits_and_a_person_confirms_it() {
        let mut t = approved_waiting();
        assert_eq!(t.raw["human_review"]["status"], "pending");
        assert_eq!(t.raw["review_summary"], ".speed/reviews/x.md");
        assert_eq!(t.raw["review_history"][0]["overall_score"], 91);
        let p = pending(&t).unwrap();
        assert_eq!(p.head_commit, "0123456789abcdef");
        approve(&mut t, &p, &word(Some("looks right")));
        assert_eq!(t.raw["human_review"]["status"], "approved");
        assert_eq!(t.raw["human_review"]["note"], "looks right");
        assert_eq!(t.raw["review_verdict"], "approve");
        assert_eq!(t.raw["status"], "done");
        let last = &t.raw["review_history"][1];
        assert_eq!(last["verdict"], "human_approve");
        assert_eq!(last["by"], "Ana");
        assert!(pending(&t).is_none(), "approved once");
    }

    #[test]
    fn a_persons_rejection_counts_like_a_reviews_and_keeps_what_others_wrote() {
        let mut t = approved_waiting();
        // The orchestrator's own feedback after the model approved.
        t.raw.insert(
            "review_feedback".into(),
            "ORCH: integration smoke test failed".into(),
        );
        t.raw.insert("revision_count".into(), 2.into());
        t.revision_count = 2;
        let p = pending(&t).unwrap();
        reject(&mut t, &p, &word(Some("the hint text is wrong")), 2);
        assert_eq!(t.raw["status"], "failed");
        assert_eq!(t.raw["revision_count"], 3);
        assert_eq!(
            t.raw["error"],
            "rejected 3 times, more than review.max_revisions (2) allows; the last, Ana's rejection (speed approve): the hint text is wrong"
        );
        let entry = &t.raw["review_history"][1];
        assert_eq!(
            entry["previous_feedback"],
            "ORCH: integration smoke test failed"
        );
        assert_eq!(
            entry["attempt"], 2,
            "its own number, after the model's review"
        );
        assert_eq!(entry["error"], t.raw["error"]);
        assert_eq!(t.raw["review_feedback"], "the hint text is wrong");
    }

    #[test]
    fn a_rejection_sends_the_task_back_and_a_skip_changes_nothing_else() {
        let mut t = approved_waiting();
        let p = pending(&t).unwrap();
        skip(&mut t, &p, &word(Some("later")));
        assert_eq!(t.raw["review_history"][1]["verdict"], "skipped");
        assert_eq!(t.raw["review_history"][1]["reason"], "later");
        assert!(
            pending(&t).is_some(),
            "a skip approves nothing and keeps it waiting"
        );
        reject(&mut t, &p, &word(Some("the hint text is wrong")), 2);
        assert_eq!(t.raw["status"], "pending");
        assert_eq!(t.raw["review_verdict"], "request_changes");
        assert_eq!(t.raw["review_feedback"], "the hint text is wrong");
        assert_eq!(t.raw["revision_count"], 1);
        assert_eq!(t.raw["human_review"]["status"], "rejected");
        let entry = &t.raw["review_history"][2];
        assert_eq!(entry["verdict"], "human_reject");
        assert_eq!(entry["feedback"], "the hint text is wrong");
        let context = &t.raw["revision_context"];
        assert_eq!(context["revision_notes"], "the hint text is wrong");
        assert_eq!(context["attempts"].as_array().unwrap().len(), 3);
        assert_eq!(context["attempts"][0]["overall_score"], 91);
        assert!(pending(&t).is_none());
        // Keys the task had keep their place.
        let keys: Vec<&String> = t.raw.keys().collect();
        assert_eq!(keys[..3], ["id", "status", "x-owner"]);
    }
}
