//! The fix queue for people and for scripts: `speed fix list` as a table
//! (or `{"fixes": [...]}`), `speed fix show` as one fix's page. Text from
//! tools and models is shown on one line in the table, control characters
//! removed.

use std::fmt::Write;

use serde_json::json;

use crate::fixes::{Fix, Status};

use super::Style;

/// Characters of a description shown in the table.
const DESCRIPTION_CHARS: usize = 100;

/// `{"fixes": [...], "replans": [...]}`, in the order given: the coding
/// fixes, and apart from them the plan rejections, which are the
/// planner's and never a coding agent's.
pub fn json(fixes: &[Fix]) -> String {
    let (coding, plans): (Vec<&Fix>, Vec<&Fix>) = fixes.iter().partition(|f| f.source.coding());
    let mut text = serde_json::to_string_pretty(&json!({ "fixes": coding, "replans": plans }))
        .unwrap_or_else(|_| "{\"fixes\": [], \"replans\": []}".to_string());
    text.push('\n');
    text
}

/// What a fix command that failed prints when it promised JSON.
pub fn json_failure(error: &str) -> String {
    let mut text =
        serde_json::to_string_pretty(&json!({"fixes": [], "error": error})).unwrap_or_default();
    text.push('\n');
    text
}

/// One fix as JSON.
pub fn json_one(fix: &Fix) -> String {
    let mut text = serde_json::to_string_pretty(fix).unwrap_or_default();
    text.push('\n');
    text
}

/// The table of `speed fix list`: the coding fixes, then the plan
/// rejections apart, for the planner.
pub fn list(fixes: &[Fix], style: &Style) -> String {
    let (coding, plans): (Vec<Fix>, Vec<Fix>) =
        fixes.iter().cloned().partition(|f| f.source.coding());
    let mut out = String::new();
    if !coding.is_empty() {
        out.push_str(&table(&coding, style));
    }
    if !plans.is_empty() {
        if !out.is_empty() {
            out.push('\n');
        }
        let _ = writeln!(
            out,
            "{}",
            style.bold("For the planner: the plan is wrong, re-plan (not a coding fix)")
        );
        out.push_str(&table(&plans, style));
    }
    out
}

fn table(fixes: &[Fix], style: &Style) -> String {
    let mut out = String::new();
    let rows: Vec<[String; 6]> = fixes
        .iter()
        .map(|f| {
            [
                f.id.clone(),
                f.priority.to_string(),
                f.status.as_str().to_string(),
                f.source.as_str().to_string(),
                one_line(&f.short_owner(), 40),
                one_line(&f.finding.place().unwrap_or_else(|| "-".to_string()), 50),
            ]
        })
        .collect();
    let header = ["ID", "PRI", "STATUS", "SOURCE", "TASK", "WHERE"];
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |cells: &[String]| -> String {
        cells
            .iter()
            .zip(&widths)
            .map(|(c, w)| format!("{c:<w$}"))
            .collect::<Vec<_>>()
            .join("  ")
    };
    let head: Vec<String> = header.iter().map(|h| h.to_string()).collect();
    let _ = writeln!(out, "{}  DESCRIPTION", style.bold(&line(&head)));
    for (fix, row) in fixes.iter().zip(&rows) {
        let description = one_line(&fix.description, DESCRIPTION_CHARS);
        let text = format!("{}  {description}", line(row));
        let _ = writeln!(
            out,
            "{}",
            match fix.status {
                Status::Pending | Status::InProgress => text,
                _ => style.dim(&text),
            }
        );
    }
    out
}

/// The page of `speed fix show`.
pub fn show(fix: &Fix, style: &Style) -> String {
    let f = &fix.finding;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} {}: {}, priority {}",
        style.bold("fix"),
        style.bold(&fix.id),
        fix.status.as_str(),
        fix.priority
    );
    let _ = writeln!(out, "{}, branch {}", fix.owner(), fix.branch);
    let from = match (&f.check, f.category) {
        (Some(check), Some(category)) => {
            format!("{} `{check}` ({})", fix.source.as_str(), category.as_str())
        }
        (Some(check), None) => format!("{} `{check}`", fix.source.as_str()),
        _ => format!("{} ({})", fix.source.as_str(), f.kind),
    };
    let _ = writeln!(out, "source: {from}, {}", f.severity.as_str());
    if let Some(place) = f.place() {
        let _ = writeln!(out, "at: {place}");
    }
    if let Some(rule) = &f.rule {
        let _ = writeln!(out, "rule: {}", one_line(rule, 200));
    }
    let _ = writeln!(out, "{}", one_line(&fix.description, 300));
    let _ = writeln!(out, "message:");
    for line in f.message.lines() {
        let _ = writeln!(out, "  {}", one_line(line, 500));
    }
    if let Some(suggestion) = &f.suggestion {
        let _ = writeln!(out, "suggested fix: {}", one_line(suggestion, 500));
    }
    if let Some(command) = &f.command {
        let _ = writeln!(out, "checked by: {}", one_line(&command.join(" "), 300));
    }
    if let Some(reason) = &fix.reason {
        let _ = writeln!(out, "skipped because: {}", one_line(reason, 500));
    }
    if let Some(commit) = &fix.commit {
        let _ = writeln!(out, "fix run's commit: {commit}");
    }
    let _ = writeln!(
        out,
        "created {}; last found at {} ({})",
        fix.created_at,
        crate::git::short(&fix.last_seen_commit),
        fix.last_seen_at
    );
    if let Some(report) = &fix.report {
        let _ = writeln!(out, "report: {report}");
    }
    if !fix.history.is_empty() {
        let _ = writeln!(out, "history:");
        for e in &fix.history {
            let note = if e.note.is_empty() {
                String::new()
            } else {
                format!(": {}", one_line(&e.note, 300))
            };
            let _ = writeln!(
                out,
                "  {} {} by {}{note}",
                e.at,
                e.status.as_str(),
                one_line(&e.by, 80)
            );
        }
    }
    out
}

/// Text on one line: whitespace runs as one space, control characters
/// gone, at most `max` characters.
fn one_line(text: &str, max: usize) -> String {
    let words = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let clean: String = words.chars().filter(|c| !c.is_control()).collect();
    if clean.chars().count() > max {
        format!("{}…", clean.chars().take(max).collect::<String>())
    } else {
        clean
    }
}
