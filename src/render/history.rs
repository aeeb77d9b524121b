//! `speed history`: one line per line of the review log, newest first
//! (human), or the log lines themselves (JSON: `{"reviews": [...],
//! "skipped_lines": N}`). The log is hostile input like any other: in the
//! terminal each field is one line, control characters replaced.

use std::fmt::Write;

use serde_json::{Value, json};

use crate::history::{History, Row};
use crate::ledger::history::{Entry, Kind};

use super::{Style, thousands};

pub fn json(history: &History) -> String {
    let reviews: Vec<Value> = history
        .rows
        .iter()
        .map(|row| serde_json::from_str(&row.raw).unwrap_or(Value::Null))
        .collect();
    pretty(&json!({"reviews": reviews, "skipped_lines": history.skipped}))
}

/// The object `speed history --format json` prints when it fails.
pub fn json_failure(error: &str) -> String {
    pretty(&json!({"reviews": [], "skipped_lines": 0, "error": error}))
}

fn pretty(value: &Value) -> String {
    let mut text = serde_json::to_string_pretty(value).unwrap_or_else(|_| "{}".to_string());
    text.push('\n');
    text
}

/// A header, then one line per row:
/// `2026-03-02 10:00  library-catalog/2  #2  0123456789  request_changes  overruled: check_failed  guardian: rejected  12,345 in 678 out  4.2 s  openai/qwen`.
pub fn human(history: &History, style: &Style) -> String {
    let mut out = String::new();
    for row in &history.rows {
        let _ = writeln!(out, "{}", line(row, style));
    }
    out
}

/// What stderr says after the lines: how many, and what was skipped.
pub fn tally(history: &History, shown: usize) -> String {
    let mut out = format!("{shown} of {} log lines shown", history.read);
    if history.skipped > 0 {
        let _ = write!(
            out,
            "; {} skipped (torn, not text, or not speed's)",
            super::plural(history.skipped, "line")
        );
    }
    out
}

fn line(row: &Row, style: &Style) -> String {
    let e = &row.entry;
    let mut fields: Vec<String> = vec![
        when(e),
        one_line(&e.subject().label()),
        row.number
            .map_or_else(|| "  ".to_string(), |n| format!("#{n}")),
        e.head_commit
            .as_deref()
            .map_or_else(|| "-".to_string(), |c| one_line(crate::git::short(c))),
        decision(e, style),
    ];
    match e.kind() {
        Kind::Other => {
            if let Some(by) = &e.by {
                fields.push(format!("by {}", one_line(by)));
            }
            if let Some(reason) = &e.reason {
                fields.push(format!("\"{}\"", clip(&one_line(reason), 120)));
            }
            if let Some(via) = &e.via {
                fields.push(format!("via {}", one_line(via)));
            }
            if !e.commits.is_empty() {
                fields.push(format!("{} commits", e.commits.len()));
            }
            if let Some(status) = &e.task_status {
                fields.push(format!("task {}", one_line(status)));
            }
        }
        Kind::Decided | Kind::Failed => {
            if !e.overrules.is_empty() {
                fields.push(format!("overruled: {}", overruled(&e.overrules)));
            }
            if let Some(guardian) = e.guardian.as_deref().filter(|g| *g != "not_run") {
                fields.push(format!("guardian: {}", one_line(guardian)));
            }
            fields.push(if e.tokens.counted_by.as_deref() == Some("speed") {
                format!(
                    "{} in {} out (counted)",
                    thousands(e.tokens.prompt),
                    thousands(e.tokens.completion)
                )
            } else if (e.tokens.prompt, e.tokens.completion) == (0, 0) && e.tokens.counted > 0 {
                // An older line: speed counted its prompt, nothing else.
                format!("{} in (counted) ? out", thousands(e.tokens.counted))
            } else {
                format!(
                    "{} in {} out",
                    thousands(e.tokens.prompt),
                    thousands(e.tokens.completion)
                )
            });
            if let Some(ms) = e.duration_ms {
                fields.push(format!("{:.1} s", ms as f64 / 1000.0));
            }
            let model = match (&e.model.provider, &e.model.name) {
                (Some(p), Some(n)) if !n.is_empty() => format!("{p}/{n}"),
                (Some(p), _) => p.clone(),
                (None, Some(n)) => n.clone(),
                (None, None) => String::new(),
            };
            if !model.is_empty() {
                fields.push(one_line(&model));
            }
            if let Some(status) = &e.task_status {
                fields.push(format!("task {}", one_line(status)));
            }
            if let Some(err) = &e.error {
                fields.push(style.red(&format!("error: {}", clip(&one_line(err), 160))));
            }
        }
    }
    fields.join("  ")
}

/// Each rule once, in the order first named (an older line lists a rule
/// once per overrule: counted then).
fn overruled(rules: &[String]) -> String {
    let mut counted: Vec<(&str, usize)> = Vec::new();
    for rule in rules {
        match counted.iter_mut().find(|(r, _)| r == rule) {
            Some((_, n)) => *n += 1,
            None => counted.push((rule, 1)),
        }
    }
    counted
        .iter()
        .map(|(rule, n)| match n {
            1 => one_line(rule),
            n => format!("{} ×{n}", one_line(rule)),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn decision(e: &Entry, style: &Style) -> String {
    let mut word = one_line(e.decision_word());
    match e.rejection.as_deref() {
        Some("plan") => word.push_str(" (the plan is wrong: re-plan)"),
        Some("nothing_implemented") => word.push_str(" (speed found nothing implemented)"),
        _ => {}
    }
    match e.kind() {
        Kind::Decided if e.approved() => style.green(&word),
        Kind::Decided if e.decision_word() == "request_changes" => style.red(&word),
        Kind::Failed => style.red(&word),
        _ => style.yellow(&word),
    }
}

/// `2026-03-02 10:00` in UTC.
fn when(e: &Entry) -> String {
    let day = crate::history::calendar::day_of(e.time);
    let seconds = e.time.rem_euclid(86_400);
    format!(
        "{} {:02}:{:02}",
        crate::history::calendar::date(day),
        seconds / 3600,
        seconds % 3600 / 60
    )
}

/// Text from the log on one terminal line: whitespace runs as one space,
/// control characters (escape sequences among them) as `?`.
pub fn one_line(text: &str) -> String {
    text.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .chars()
        .map(|c| if c.is_control() { '?' } else { c })
        .collect()
}

fn clip(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_text_cannot_move_the_terminal() {
        assert_eq!(one_line("a\x1b[2Jb\n c\u{7}"), "a?[2Jb c?");
    }

    #[test]
    fn a_rule_is_named_once() {
        let rules: Vec<String> = [
            "evidence_not_found",
            "unmet_criterion",
            "evidence_not_found",
        ]
        .map(str::to_string)
        .to_vec();
        assert_eq!(overruled(&rules), "evidence_not_found ×2, unmet_criterion");
    }
}
