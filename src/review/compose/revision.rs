//! The last review's `revision_context` (seed 001's RevisionContext, which
//! speed writes into the task with every request for changes) as the next
//! review's prompt shows it: what blocked, the scores, the attempts so far.
//! The task file is anyone's to edit, so the value is read leniently and
//! bounded: what has an unexpected shape is shown as its JSON, never
//! followed.

use serde_json::Value;

/// Entries shown per list.
const LISTED: usize = 25;
/// Characters kept of one entry.
const TEXT: usize = 500;

/// The prompt items for `context` (nothing for null or an empty one);
/// `feedback` is the task's `review_feedback`, already shown, so revision
/// notes equal to it are not shown twice.
pub fn items(context: Option<&Value>, feedback: Option<&str>) -> Vec<String> {
    let Some(Value::Object(context)) = context else {
        return Vec::new();
    };
    let mut text =
        String::from("Revision context of the last review (what this attempt had to fix):");
    if let Some(Value::Array(issues)) = context.get("blocking_issues") {
        if !issues.is_empty() {
            text.push_str("\nBlocking issues:");
            for issue in issues.iter().take(LISTED) {
                text.push_str(&format!("\n- {}", issue_line(issue)));
            }
            if issues.len() > LISTED {
                text.push_str(&format!("\n- …and {} more", issues.len() - LISTED));
            }
        }
    }
    if let Some(Value::String(notes)) = context.get("revision_notes") {
        let same = feedback.is_some_and(|f| f.trim() == notes.trim());
        if !notes.trim().is_empty() && !same {
            text.push_str(&format!("\nRevision notes: {}", clip(notes)));
        }
    }
    if let Some(scores) = context.get("scores").filter(|s| !s.is_null()) {
        text.push_str(&format!("\nScores: {}", scores_line(scores)));
    }
    if let Some(Value::Array(attempts)) = context.get("attempts") {
        let shown: Vec<String> = attempts.iter().take(LISTED).map(attempt_line).collect();
        if !shown.is_empty() {
            text.push_str(&format!("\nAttempts: {}", shown.join("; ")));
        }
    }
    vec![text]
}

fn issue_line(issue: &Value) -> String {
    let Value::Object(o) = issue else {
        return clip(&plain(issue));
    };
    let field = |key: &str| o.get(key).map(plain).filter(|s| !s.trim().is_empty());
    let mut line = String::new();
    if let Some(d) = field("dimension") {
        line.push_str(&format!("[{}] ", clip(&d)));
    }
    line.push_str(&clip(&field("message").unwrap_or_else(|| plain(issue))));
    if let Some(at) = field("location") {
        line.push_str(&format!(" ({})", clip(&at)));
    }
    if let Some(action) = field("required_action") {
        line.push_str(&format!("; required: {}", clip(&action)));
    }
    line
}

/// `code_quality 60 (minimum 70, under it), …; overall 72 (pass score 75)`.
fn scores_line(scores: &Value) -> String {
    let Some(dimensions) = scores.get("dimensions").and_then(Value::as_object) else {
        return clip(&plain(scores));
    };
    let mut parts: Vec<String> = dimensions
        .iter()
        .take(LISTED)
        .map(|(name, d)| {
            let score = d.get("score").map(plain).unwrap_or_default();
            match (d.get("min_score").and_then(Value::as_u64), d.get("passed")) {
                (Some(min), Some(Value::Bool(false))) => {
                    format!("{} {score} (minimum {min}, under it)", clip(name))
                }
                _ => format!("{} {score}", clip(name)),
            }
        })
        .collect();
    if let Some(overall) = scores.get("overall") {
        let pass = scores.get("pass_score").map(plain).unwrap_or_default();
        parts.push(format!("overall {} (pass score {pass})", plain(overall)));
    }
    parts.join(", ")
}

fn attempt_line(attempt: &Value) -> String {
    let field = |key: &str| attempt.get(key).map(plain).unwrap_or_default();
    let mut line = format!("attempt {} {}", field("attempt"), field("verdict"));
    let score = field("overall_score");
    if !score.is_empty() && score != "null" {
        line.push_str(&format!(" (overall {score})"));
    }
    clip(&line)
}

/// A value as text: a string as it is, anything else as its JSON.
fn plain(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

fn clip(text: &str) -> String {
    let one = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut out: String = one.chars().take(TEXT).collect();
    if one.chars().nth(TEXT).is_some() {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn shows_what_blocked_the_scores_and_the_attempts() {
        let context = json!({
            "blocking_issues": [
                {"message": "MAX_RENEWALS is 3", "dimension": "requirement_adherence",
                 "location": "catalog/src/loans.rs:8", "required_action": "Set it to 2"},
                "a bare string"
            ],
            "revision_notes": "same as the feedback",
            "scores": {"dimensions": {"code_quality": {"score": 60, "min_score": 70, "passed": false},
                                      "test_quality": {"score": 80, "min_score": 70, "passed": true}},
                       "overall": 72, "pass_score": 75},
            "attempts": [{"attempt": 1, "verdict": "request_changes", "overall_score": 72}]
        });
        let items = items(Some(&context), Some("same as the feedback"));
        assert_eq!(items.len(), 1);
        let text = &items[0];
        assert!(text.contains("- [requirement_adherence] MAX_RENEWALS is 3 (catalog/src/loans.rs:8); required: Set it to 2"), "{text}");
        assert!(text.contains("- a bare string"));
        assert!(
            !text.contains("Revision notes"),
            "shown once, as the feedback"
        );
        assert!(text.contains("Scores: code_quality 60 (minimum 70, under it), test_quality 80, overall 72 (pass score 75)"), "{text}");
        assert!(text.contains("Attempts: attempt 1 request_changes (overall 72)"));
    }

    #[test]
    fn nothing_or_anything_else_is_shown_safely() {
        assert!(items(None, None).is_empty());
        assert!(items(Some(&Value::Null), None).is_empty());
        assert!(items(Some(&json!("text")), None).is_empty());
        let long = "x".repeat(10_000);
        let many: Vec<Value> = (0..1000)
            .map(|i| json!({"message": format!("{i} {long}")}))
            .collect();
        let text = &items(
            Some(&json!({"blocking_issues": many, "scores": [1, 2]})),
            None,
        )[0];
        assert!(text.len() < 30_000, "{}", text.len());
        assert!(text.contains("…and 975 more"));
        assert!(text.contains("Scores: [1,2]"));
    }
}
