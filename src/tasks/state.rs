//! What a review changes in a task (the contract's "What a review changes"):
//! the verdict, feedback, time, reviewer, reviewed diff hash, status,
//! revision count, the reason a task failed, and one new entry in
//! `review_history` (the counting rules are `counting`'s, shared with a
//! person's decisions). It edits the task in memory only; `Store::save` writes
//! it. Existing keys keep their position in the file; new keys are appended;
//! earlier history entries are never touched.
//!
//! Beyond the contract's first fields, a review records its overall
//! quality score in the history entry, the path of its Markdown summary
//! (`review_summary`), a `revision_context` with every request for changes
//! (the builder's next attempt reads it; an approval clears it), `replan`
//! when the rejection is of the plan (marked with its head; an approval
//! clears it), and
//! `human_review` when a person must confirm the model's approval. The
//! guardian's verdict and summary stand only beside the review it judged;
//! a person's `override` stands only while the head it was given at is
//! the one reviewed (its history entry keeps it).
//!
//! Nothing someone else wrote is lost: a `review_feedback` that speed did
//! not write (the orchestrator's "--- Attempt 2 --- … Human guidance: …", a
//! person's edit of speed's text) is kept in the new history entry as
//! `previous_feedback` before the review replaces or clears it.

use serde_json::{Map, Value, json};

use super::{Task, counting};

/// The decided outcome of one review, as the task file records it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReviewOutcome {
    pub approved: bool,
    /// What to fix, for a request_changes.
    pub feedback: Option<String>,
    /// When the review finished (RFC 3339).
    pub reviewed_at: String,
    /// Who reviewed (config `review.actor`, else the git user).
    pub reviewed_by: String,
    /// `sha256:<hex>` of the diff that was reviewed.
    pub diff_hash: String,
    /// The branch's head commit that was reviewed.
    pub head_commit: String,
    /// The findings that stood in the way of an approval, one line each.
    pub blocking: Vec<String>,
    /// `review.max_revisions`: past this many revisions a task fails.
    pub max_revisions: u32,
    /// The guardian's status and summary, when it ran.
    pub guardian: Option<(String, String)>,
    /// The weighted overall quality score, when dimensions were rated.
    pub overall_score: Option<u32>,
    /// A request for changes: what the builder's next attempt reads.
    pub revision: Option<Revision>,
    /// A rejection of the plan: why, for whoever plans the task.
    pub replan: Option<String>,
    /// The model approved, and a person must confirm (`review.human`).
    pub human_pending: bool,
    /// The review's Markdown summary, relative to the repository root.
    pub summary: Option<String>,
}

/// What a request for changes hands the builder besides its feedback.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Revision {
    /// What blocks the approval, one object each (`message`, and where
    /// known `dimension`, `location`, `required_action`).
    pub blocking_issues: Vec<Value>,
    /// The review's scores as the report carries them (null without).
    pub scores: Value,
}

/// Applies a review's outcome to the task's file fields and typed fields.
pub fn record_review(task: &mut Task, outcome: &ReviewOutcome) {
    let verdict = if outcome.approved {
        "approve"
    } else {
        "request_changes"
    };
    let attempt = counting::next_attempt(task);
    // Read before the fields change below.
    let previous_feedback = unrecorded_feedback(task);
    let counted = if outcome.approved {
        counting::approve(task);
        None
    } else {
        let last = match &outcome.replan {
            Some(reason) => format!("the last review rejected the plan: {reason}"),
            None => format!(
                "the last review: {}",
                counting::first_reasons(&outcome.blocking, outcome.feedback.as_deref())
            ),
        };
        Some(counting::reject(
            task,
            &counting::Rejection {
                head: &outcome.head_commit,
                max_revisions: outcome.max_revisions,
                last,
            },
        ))
    };
    set(task, "review_verdict", Value::String(verdict.to_string()));
    let feedback = outcome.feedback.clone().unwrap_or_default();
    if !outcome.approved {
        set(task, "review_feedback", Value::String(feedback.clone()));
    } else {
        // The feedback was for an earlier attempt; the history keeps it.
        counting::clear(task, "review_feedback");
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
    set(
        task,
        "reviewed_by",
        Value::String(outcome.reviewed_by.clone()),
    );
    // The guardian's word belongs to this review or to none: a review it
    // did not judge leaves no earlier one standing.
    match &outcome.guardian {
        Some((status, summary)) => {
            set(task, "guardian_verdict", Value::String(status.clone()));
            set(task, "guardian_summary", Value::String(summary.clone()));
        }
        None => {
            counting::clear(task, "guardian_verdict");
            counting::clear(task, "guardian_summary");
        }
    }
    if let Some(summary) = &outcome.summary {
        set(task, "review_summary", Value::String(summary.clone()));
    }
    let mut entry = json!({
        "attempt": attempt,
        "verdict": verdict,
        "reviewed_at": outcome.reviewed_at,
        "head_commit": outcome.head_commit,
        "blocking": outcome.blocking,
        "feedback": outcome.feedback,
    });
    if let Value::Object(fields) = &mut entry {
        if let Some(score) = outcome.overall_score {
            fields.insert("overall_score".to_string(), Value::from(score));
        }
        if let Some((status, _)) = outcome.guardian.as_ref().filter(|(s, _)| s != "skipped") {
            fields.insert("guardian".to_string(), Value::String(status.clone()));
        }
        if outcome.replan.is_some() {
            fields.insert("rejection".to_string(), Value::from("plan"));
        }
        if counted.is_some_and(|c| !c.new_revision) {
            // Said, so a reader of the history knows why the count stayed.
            fields.insert("same_head".to_string(), Value::Bool(true));
        }
        if let Some(error) = counting::error_now(task) {
            fields.insert("error".to_string(), error);
        }
        if let Some(previous) = previous_feedback {
            fields.insert("previous_feedback".to_string(), previous);
        }
    }
    append_history(task, entry);
    counting::drop_override_of_another_head(task, &outcome.head_commit);
    record_follow_up(task, outcome);
    task.review_verdict = Some(verdict.to_string());
    task.reviewed_diff = Some(outcome.diff_hash.clone());
    task.reviewed_at = Some(outcome.reviewed_at.clone());
    task.review_feedback = (!outcome.approved && !feedback.trim().is_empty()).then_some(feedback);
}

/// What comes after the verdict: the revision context and a re-plan with
/// a request for changes (an approval clears both), and the person's part
/// (`human_review`): pending after an approval that waits for one, else a
/// request that no longer stands is withdrawn.
fn record_follow_up(task: &mut Task, outcome: &ReviewOutcome) {
    let present = |task: &Task, key: &str| task.raw.get(key).is_some_and(|v| !v.is_null());
    match (&outcome.revision, outcome.approved) {
        (Some(revision), false) => {
            let context = revision_context(
                task,
                revision,
                outcome.feedback.as_deref().unwrap_or_default(),
            );
            set(task, "revision_context", context);
        }
        _ if present(task, "revision_context") => set(task, "revision_context", Value::Null),
        _ => {}
    }
    match (&outcome.replan, outcome.approved) {
        (Some(reason), false) => set(
            task,
            "replan",
            json!({"reason": reason, "at": outcome.reviewed_at, "head_commit": outcome.head_commit}),
        ),
        // Marked with the review that rejected the plan, it stands for
        // whoever plans until an approval says the work is right.
        (_, true) => counting::clear(task, "replan"),
        _ => {}
    }
    if outcome.approved && outcome.human_pending {
        set(
            task,
            "human_review",
            json!({"status": "pending", "requested_at": outcome.reviewed_at,
                   "head_commit": outcome.head_commit}),
        );
    } else if present(task, "human_review") {
        set(task, "human_review", Value::Null);
    }
}

/// seed 001's RevisionContext, in the shape a builder's next run reads:
/// what blocks, what to do, the scores, and every attempt so far.
pub fn revision_context(task: &Task, revision: &Revision, notes: &str) -> Value {
    json!({
        "blocking_issues": revision.blocking_issues,
        "revision_notes": notes,
        "scores": revision.scores,
        "attempts": attempts(task),
    })
}

/// The history's reviews (and a person's decisions), one line each.
fn attempts(task: &Task) -> Vec<Value> {
    task.review_history
        .iter()
        .filter_map(|entry| {
            let verdict = entry.get("verdict")?.as_str()?;
            let at = entry
                .get("reviewed_at")
                .or_else(|| entry.get("at"))
                .cloned()
                .unwrap_or(Value::Null);
            Some(json!({
                "attempt": entry.get("attempt").cloned().unwrap_or(Value::Null),
                "verdict": verdict,
                "overall_score": entry.get("overall_score").cloned().unwrap_or(Value::Null),
                "reviewed_at": at,
            }))
        })
        .collect()
}

/// The task's `review_feedback` as it stands, when the history does not
/// already hold it: speed wrote it if, and only if, it is exactly the
/// `feedback` of the last `review_history` entry (speed writes the two
/// together, and a person who edits the text makes it differ). Comparing
/// with the history rather than keeping a hash of what speed wrote needs no
/// field of speed's own, survives an orchestrator that rewrites the file
/// without unknown fields, and errs only towards keeping: text the history
/// already holds is never lost. Null and blank feedback carry nothing. A
/// non-string value (the orchestrator's own verdict object) is kept as it is.
pub fn unrecorded_feedback(task: &Task) -> Option<Value> {
    let current = task.raw.get("review_feedback")?;
    match current {
        Value::Null => return None,
        Value::String(text) if text.trim().is_empty() => return None,
        _ => {}
    }
    let recorded = task
        .raw
        .get("review_history")
        .and_then(Value::as_array)
        .and_then(|entries| entries.last())
        .and_then(|entry| entry.get("feedback"));
    (recorded != Some(current)).then(|| current.clone())
}

/// Appends to `review_history`, creating it at the end of the file when
/// absent. `Task::parse` refused any other type, so an existing value is an
/// array here.
pub fn append_history(task: &mut Task, entry: Value) {
    match task.raw.get_mut("review_history") {
        Some(Value::Array(items)) => items.push(entry.clone()),
        _ => {
            task.raw.insert(
                "review_history".to_string(),
                Value::Array(vec![entry.clone()]),
            );
        }
    }
    task.review_history.push(entry);
}

/// Replaces a value in place (keeping its position) or appends a new key.
fn set(task: &mut Task, key: &str, value: Value) {
    task.raw.insert(key.to_string(), value);
}

/// One `review_history` entry as the prompt shows it: attempt, verdict,
/// time, head commit and what blocked it. Entries written by hand may lack
/// any of these; what is there is shown.
pub fn describe_history_entry(entry: &Value) -> String {
    let empty = Map::new();
    let object = entry.as_object().unwrap_or(&empty);
    let text = |key: &str| match object.get(key) {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Null) | None => String::new(),
        Some(other) => other.to_string(),
    };
    let mut line = String::new();
    let attempt = text("attempt");
    if !attempt.is_empty() {
        line.push_str(&format!("attempt {attempt}: "));
    }
    let verdict = text("verdict");
    line.push_str(if verdict.is_empty() {
        "review"
    } else {
        &verdict
    });
    let at = text("reviewed_at");
    if !at.is_empty() {
        line.push_str(&format!(" at {at}"));
    }
    let head = text("head_commit");
    if !head.is_empty() {
        let short: String = head.chars().take(10).collect();
        line.push_str(&format!(" (head {short})"));
    }
    let blocking: Vec<String> = match object.get("blocking") {
        Some(Value::Array(items)) => items
            .iter()
            .map(|i| match i {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            })
            .collect(),
        _ => Vec::new(),
    };
    if !blocking.is_empty() {
        line.push_str(&format!("; blocking: {}", blocking.join(" | ")));
    }
    if entry.is_object() {
        line
    } else {
        entry.to_string()
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::tasks::Status;

    fn task(text: &str) -> Task {
        Task::parse(Path::new(".speed/tasks/3.json"), None, text).unwrap()
    }

    fn outcome(approved: bool) -> ReviewOutcome {
        ReviewOutcome {
            approved,
            feedback: (!approved).then(|| "AC-2 is unmet: add the empty-catalog hint".to_string()),
            reviewed_at: "2025-01-02T03:04:05Z".into(),
            reviewed_by: "Ana".into(),
            diff_hash: "sha256:abc".into(),
            head_commit: "0123456789abcdef".into(),
            blocking: if approved {
                vec![]
            } else {
                vec!["AC-2 unmet: no hint".into()]
            },
            max_revisions: 2,
            guardian: None,
            overall_score: None,
            revision: None,
            replan: None,
            human_pending: false,
            summary: None,
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
        assert_eq!(t.raw["reviewed_by"], "Ana");
        assert_eq!(
            keys(&t),
            [
                "id",
                "status",
                "x-owner",
                "review_verdict",
                "reviewed_at",
                "reviewed_diff",
                "reviewed_by",
                "review_history"
            ]
        );
        assert_eq!(
            t.raw["review_history"],
            serde_json::json!([{"attempt": 1, "verdict": "approve", "reviewed_at": "2025-01-02T03:04:05Z",
                "head_commit": "0123456789abcdef", "blocking": [], "feedback": null}])
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
                "reviewed_diff",
                "reviewed_by",
                "review_history"
            ]
        );
        assert_eq!(
            t.raw["review_history"][0]["blocking"][0],
            "AC-2 unmet: no hint"
        );
        assert!(!t.raw.contains_key("error"));
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
        assert_eq!(
            t.raw["error"],
            "rejected 3 times, more than review.max_revisions (2) allows; the last review: AC-2 unmet: no hint"
        );
    }

    #[test]
    fn a_rejection_of_the_same_head_replaces_verdict_and_feedback_not_the_count() {
        let mut t = task(r#"{"status": "done", "revision_count": 2}"#);
        record_review(&mut t, &outcome(false));
        assert_eq!(
            (t.raw["status"].as_str(), t.revision_count),
            (Some("failed"), 3)
        );
        // The orchestrator sets it going again; the same head is judged
        // again: the count stays, the verdict and feedback are replaced.
        let mut t = task(r#"{"status": "done", "revision_count": 1}"#);
        record_review(&mut t, &outcome(false));
        t.raw.insert("status".into(), "done".into());
        let mut again = outcome(false);
        again.feedback = Some("AC-3 is unmet too".into());
        record_review(&mut t, &again);
        assert_eq!(
            (t.raw["status"].as_str(), t.revision_count),
            (Some("pending"), 2)
        );
        assert_eq!(t.raw["review_feedback"], "AC-3 is unmet too");
        let history = t.raw["review_history"].as_array().unwrap();
        assert_eq!(history[1]["same_head"], true);
        assert_eq!(
            history[1]["attempt"], 2,
            "a new entry, numbered after the last"
        );
        assert!(history[0].get("same_head").is_none());
    }

    #[test]
    fn an_approval_of_a_task_sent_back_says_done_and_drops_stale_fields() {
        let mut t = task(r#"{"status": "done", "revision_count": 2}"#);
        let mut first = outcome(true);
        first.guardian = Some(("aligned".into(), "fits the vision".into()));
        record_review(&mut t, &first);
        assert_eq!(t.raw["guardian_verdict"], "aligned");
        let mut plan = outcome(false);
        plan.head_commit = "fedcba9876543210".into();
        plan.replan = Some("AC-2 contradicts the spec".into());
        record_review(&mut t, &plan);
        assert_eq!(t.raw["status"], "failed");
        assert_eq!(
            t.raw["guardian_verdict"],
            Value::Null,
            "the guardian judged the approval"
        );
        assert_eq!(t.raw["replan"]["reason"], "AC-2 contradicts the spec");
        assert_eq!(
            t.raw["error"],
            "rejected 3 times, more than review.max_revisions (2) allows; the last review rejected the plan: AC-2 contradicts the spec"
        );
        let entry = &t.raw["review_history"][1];
        assert_eq!(
            (entry["rejection"].as_str(), entry["error"].as_str()),
            (Some("plan"), t.raw["error"].as_str())
        );
        assert_eq!(t.raw["review_history"][0]["guardian"], "aligned");
        // Re-planned, reworked and approved: done, nothing of the failure left.
        let mut done = outcome(true);
        done.head_commit = "1111111111111111".into();
        record_review(&mut t, &done);
        assert_eq!(t.raw["status"], "done");
        assert_eq!(t.status, Status::Done);
        for key in ["error", "replan", "revision_context", "review_feedback"] {
            assert!(
                t.raw.get(key).is_none_or(Value::is_null),
                "{key}: {}",
                t.raw[key]
            );
        }
        assert_eq!(t.raw["revision_count"], 3, "the revisions happened");
        let attempts: Vec<u64> = t.raw["review_history"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["attempt"].as_u64().unwrap())
            .collect();
        assert_eq!(attempts, [1, 2, 3]);
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

    #[test]
    fn history_grows_by_one_entry_and_never_rewrites_earlier_ones() {
        let mut t = task(
            r#"{"id": 3, "status": "done", "retry_count": 1, "review_feedback": "old",
                "review_history": [{"attempt": 1, "verdict": "request_changes", "note": "hand-written"}]}"#,
        );
        let earlier = t.raw["review_history"][0].clone();
        record_review(&mut t, &outcome(false));
        assert_eq!(t.raw["review_history"][0], earlier);
        assert_eq!(t.raw["review_history"][1]["attempt"], 2);
        assert_eq!(
            t.raw["review_feedback"],
            "AC-2 is unmet: add the empty-catalog hint"
        );

        t.status = Status::Done;
        record_review(&mut t, &outcome(true));
        let history = t.raw["review_history"].as_array().unwrap();
        assert_eq!(history.len(), 3);
        assert_eq!(history[0], earlier);
        assert_eq!(
            history[1]["feedback"],
            "AC-2 is unmet: add the empty-catalog hint"
        );
        assert_eq!(
            history[2]["attempt"], 3,
            "one past the last number; retry_count is not added"
        );
        // The approval clears the stale feedback but keeps the key's place.
        assert_eq!(t.raw["review_feedback"], Value::Null);
        assert_eq!(t.review_feedback, None);
        assert_eq!(t.review_history.len(), 3);
    }

    #[test]
    fn an_approval_adds_no_feedback_key() {
        let mut t = task(r#"{"id": 3, "status": "done", "review_feedback": null}"#);
        record_review(&mut t, &outcome(true));
        assert_eq!(t.raw["review_feedback"], Value::Null);
        let mut t = task(r#"{"id": 3, "status": "done"}"#);
        record_review(&mut t, &outcome(true));
        assert!(!t.raw.contains_key("review_feedback"));
    }

    const ORCHESTRATOR_FEEDBACK: &str = "--- Attempt 2 ---\nFailed with: Quality gates failed: tests exited 2\nHuman guidance: The gate command path was wrong; run pytest from the repo root.";

    #[test]
    fn feedback_speed_did_not_write_is_kept_in_the_new_entry() {
        for approved in [false, true] {
            let mut t = task(&format!(
                r#"{{"id": 3, "status": "done", "retry_count": 1, "review_feedback": {}}}"#,
                serde_json::to_string(ORCHESTRATOR_FEEDBACK).unwrap()
            ));
            record_review(&mut t, &outcome(approved));
            let entry = &t.raw["review_history"][0];
            assert_eq!(
                entry["previous_feedback"], ORCHESTRATOR_FEEDBACK,
                "{approved}"
            );
            let now = if approved {
                Value::Null
            } else {
                Value::from("AC-2 is unmet: add the empty-catalog hint")
            };
            assert_eq!(t.raw["review_feedback"], now);
            assert_eq!(t.review_history[0], *entry);
        }
    }

    #[test]
    fn speeds_own_feedback_is_not_kept_twice_but_a_persons_edit_of_it_is() {
        let mut t = task(r#"{"id": 3, "status": "done"}"#);
        record_review(&mut t, &outcome(false));
        t.status = Status::Done;
        record_review(&mut t, &outcome(false));
        let history = t.raw["review_history"].as_array().unwrap();
        assert_eq!(history.len(), 2);
        assert!(history.iter().all(|e| e.get("previous_feedback").is_none()));

        // A person adds guidance under speed's text.
        let edited = format!(
            "{}\nHuman guidance: keep the hint short.",
            t.raw["review_feedback"].as_str().unwrap()
        );
        t.raw
            .insert("review_feedback".into(), Value::String(edited.clone()));
        record_review(&mut t, &outcome(true));
        assert_eq!(
            t.raw["review_history"][2]["previous_feedback"],
            edited.as_str()
        );

        // The approval cleared the feedback; the next review has nothing to keep.
        record_review(&mut t, &outcome(false));
        assert!(
            t.raw["review_history"][3]
                .get("previous_feedback")
                .is_none()
        );
    }

    #[test]
    fn blank_feedback_is_nothing_to_keep_and_a_verdict_object_is_kept_as_it_is() {
        for blank in ["null", "\"\"", "\"  \\n\""] {
            let mut t = task(&format!(
                r#"{{"status": "done", "review_feedback": {blank}}}"#
            ));
            record_review(&mut t, &outcome(false));
            assert!(
                t.raw["review_history"][0]
                    .get("previous_feedback")
                    .is_none(),
                "{blank}"
            );
        }
        let verdict =
            serde_json::json!({"verdict": "request_changes", "issues": [{"message": "no tests"}]});
        let mut t = task(&format!(
            r#"{{"status": "done", "review_feedback": {verdict}}}"#
        ));
        record_review(&mut t, &outcome(false));
        assert_eq!(t.raw["review_history"][0]["previous_feedback"], verdict);
    }

    #[test]
    fn history_entries_read_as_one_line() {
        let entry = serde_json::json!({"attempt": 2, "verdict": "request_changes",
            "reviewed_at": "2025-01-02T03:04:05Z", "head_commit": "0123456789abcdef",
            "blocking": ["major src/a.rs:3: unchecked input", "AC-2 unmet"], "feedback": "x"});
        assert_eq!(
            describe_history_entry(&entry),
            "attempt 2: request_changes at 2025-01-02T03:04:05Z (head 0123456789); blocking: major src/a.rs:3: unchecked input | AC-2 unmet"
        );
        assert_eq!(describe_history_entry(&serde_json::json!({})), "review");
        assert_eq!(
            describe_history_entry(&serde_json::json!({"head_commit": "ééééééééééé"})),
            "review (head éééééééééé)"
        );
        assert_eq!(
            describe_history_entry(&serde_json::json!("free text")),
            "\"free text\""
        );
    }
}
