//! A spec review's session (`.speed/spec-reviews/<feature>.json`, the
//! contract's "Spec review") for `speed show --spec FEATURE`: the feature,
//! its PRD and spec, each iteration's verdict, scores and feedback, the
//! final verdict and what to do when blocked. Read from the session's JSON
//! as the contract shapes it, leniently (a key missing is left out), since
//! the file is written by `speed spec review` and may be older or newer.

use std::fmt::Write;

use serde_json::Value;

use super::github::{code, inline};
use super::history::one_line;

/// `{"completeness": 85, …}` as `completeness 85, …`.
fn scores(result: &Value) -> String {
    result["scores"]
        .as_object()
        .map(|s| {
            s.iter()
                .map(|(k, v)| format!("{k} {v}"))
                .collect::<Vec<_>>()
                .join(", ")
        })
        .unwrap_or_default()
}

fn text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// Feedback items of one iteration's result: (section, issue, suggestion).
pub fn feedback(result: &Value) -> Vec<(String, String, String)> {
    result["feedback"]
        .as_array()
        .map(|items| {
            items
                .iter()
                .map(|f| {
                    (
                        text(&f["section"]),
                        text(&f["issue"]),
                        text(&f["suggestion"]),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

/// What a session without a PRD says in its place.
const NO_PRD: &str = "(none: the spec was reviewed without one)";

/// The PRD the session reviewed the spec against, when it had one.
fn prd(session: &Value) -> Option<String> {
    Some(text(&session["prd_path"])).filter(|p| !p.trim().is_empty())
}

/// The final verdict in words.
pub fn verdict(session: &Value) -> String {
    match session["final_verdict"].as_str() {
        Some("pass") => "pass".to_string(),
        Some("blocked") => "blocked".to_string(),
        _ => "not decided yet".to_string(),
    }
}

pub fn human(session: &Value, path: &str) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Spec review of feature {}",
        one_line(&text(&session["feature"]))
    );
    let _ = writeln!(
        out,
        "  PRD {}  spec {}",
        prd(session).map_or_else(|| NO_PRD.to_string(), |p| one_line(&p)),
        one_line(&text(&session["specs_path"]))
    );
    let _ = writeln!(out, "  final verdict: {}", verdict(session));
    if let Some(reason) = session["block_reason"].as_str().filter(|r| !r.is_empty()) {
        let _ = writeln!(out, "  blocked because: {}", one_line(reason));
    }
    for it in session["iterations"].as_array().into_iter().flatten() {
        let result = &it["result"];
        let _ = writeln!(
            out,
            "\n  iteration {} ({}): {}{}",
            one_line(&text(&it["iteration"])),
            one_line(&text(&it["timestamp"])),
            one_line(&text(&result["verdict"])),
            match scores(result) {
                s if s.is_empty() => String::new(),
                s => format!("; {}", one_line(&s)),
            }
        );
        for (section, issue, suggestion) in feedback(result) {
            let _ = write!(out, "    - [{}] {}", one_line(&section), one_line(&issue));
            if !suggestion.is_empty() {
                let _ = write!(out, " → {}", one_line(&suggestion));
            }
            out.push('\n');
        }
    }
    let actions: Vec<String> = session["recovery_actions"]
        .as_array()
        .into_iter()
        .flatten()
        .map(text)
        .collect();
    if !actions.is_empty() {
        let _ = writeln!(out, "\n  to recover:");
        for a in actions {
            let _ = writeln!(out, "    - {}", one_line(&a));
        }
    }
    let _ = writeln!(out, "\n  session: {path}");
    out
}

pub fn markdown(session: &Value, path: &str) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# Spec review: {}\n\n- **PRD:** {}\n- **Spec:** {}\n- **Final verdict:** {}",
        inline(&text(&session["feature"])),
        prd(session).map_or_else(|| NO_PRD.to_string(), |p| code(&p)),
        code(&text(&session["specs_path"])),
        verdict(session)
    );
    if let Some(reason) = session["block_reason"].as_str().filter(|r| !r.is_empty()) {
        let _ = writeln!(out, "- **Blocked because:** {}", inline(reason));
    }
    let _ = writeln!(out, "- **Session:** {}", code(path));
    for it in session["iterations"].as_array().into_iter().flatten() {
        let result = &it["result"];
        let _ = writeln!(
            out,
            "\n## Iteration {}: {}\n",
            inline(&text(&it["iteration"])),
            inline(&text(&result["verdict"]))
        );
        let s = scores(result);
        if !s.is_empty() {
            let _ = writeln!(out, "Scores: {}\n", inline(&s));
        }
        for (section, issue, suggestion) in feedback(result) {
            let _ = writeln!(
                out,
                "- **{}**: {} *Suggestion:* {}",
                inline(&section),
                inline(&issue),
                inline(&suggestion)
            );
        }
    }
    out
}
