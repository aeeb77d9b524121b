//! Output of `speed spec review`: the summary for people, one JSON object,
//! a dry run's accounting, and the findings the CI formats print (`sarif`,
//! `junit` and `github` hold the printers), over the same
//! `spec_review::Summary`.

use std::fmt::Write;

use serde_json::{Value, json};

use super::Style;
use super::findings::{Finding, Level};
use crate::exit::Outcome;
use crate::severity::Severity;
use crate::spec_review::Summary;

/// The word a run ends with in JSON: `pass`, `needs_revision`, `blocked`,
/// `checks_passed` / `checks_failed` (offline), `dry_run`,
/// `model_unreachable` or `error`.
pub fn verdict(s: &Summary) -> &'static str {
    if s.dry.is_some() {
        return "dry_run";
    }
    if s.offline {
        return match s.outcome {
            Outcome::ChangesRequested => "checks_failed",
            _ => "checks_passed",
        };
    }
    match s.outcome {
        Outcome::Approved => "pass",
        Outcome::ChangesRequested => "needs_revision",
        Outcome::Blocked | Outcome::InvalidOutput => "blocked",
        Outcome::ModelUnreachable => "model_unreachable",
        Outcome::Error | Outcome::Usage | Outcome::Submitted => "error",
    }
}

/// One JSON object: the run, speed's checks, and the session as saved.
pub fn json(s: &Summary) -> String {
    let mut out = json!({
        "feature": s.feature,
        "specs_path": s.spec_path,
        "prd_path": s.prd_path,
        "verdict": verdict(s),
        "exit_code": s.outcome.code(),
        "headline": s.headline,
        "checks": s.facts.findings,
        "requirements": s.facts.requirements,
        "requirements_not_traced": s.facts.requirements_not_traced,
        "session_path": s.session_path,
        "session": s.session,
        "notes": s.notes,
    });
    if let Some(dry) = &s.dry {
        out["dry_run"] = json!({
            "prompt": dry.prompt,
            "tokens": {"total": dry.tokens, "budget": dry.budget},
            "iteration": dry.iteration,
        });
    }
    pretty(&json!({ "spec_review": out }))
}

/// The object printed when the command failed before it could run.
pub fn failure(error: &str) -> String {
    pretty(&json!({"spec_review": null, "error": error}))
}

/// A dry run's accounting, for stderr.
pub fn accounting(s: &Summary) -> String {
    let Some(dry) = &s.dry else {
        return String::new();
    };
    let mut out = format!(
        "spec review prompt for {} (review {} of its session): {} tokens of a budget of {}\n",
        s.spec_path,
        dry.iteration,
        super::thousands(dry.tokens as u64),
        super::thousands(dry.budget as u64)
    );
    out.push_str(&checks(s, &Style { color: false }));
    out
}

/// The summary for people.
pub fn human(s: &Summary, style: &Style) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{} {}", style.bold("Spec review:"), s.feature);
    let _ = writeln!(out, "  spec: {}", s.spec_path);
    let _ = writeln!(
        out,
        "  PRD:  {}",
        s.prd_path
            .as_deref()
            .unwrap_or("none (completeness is judged against the spec's own goals)")
    );
    out.push('\n');
    out.push_str(&checks(s, style));
    if let Some(session) = &s.session {
        let minimums = minimums(&session.config);
        // The reviews of the current budget (a run that refused to start
        // shows them as they were).
        let start = u64::from(session.budget_starts_at);
        for it in session
            .iterations
            .iter()
            .filter(|it| it["iteration"].as_u64().is_some_and(|n| n >= start))
        {
            out.push('\n');
            out.push_str(&iteration(it, &minimums, style));
        }
    }
    let headline = match s.outcome {
        Outcome::Approved => style.green(&s.headline),
        Outcome::ChangesRequested => style.yellow(&s.headline),
        _ => style.red(&s.headline),
    };
    let _ = writeln!(out, "\n→ {headline}");
    if let Some(session) = &s.session {
        if session.blocked() {
            for action in &session.recovery_actions {
                let _ = writeln!(out, "  - {action}");
            }
        }
    }
    if let Some(path) = &s.session_path {
        let _ = writeln!(out, "{}", style.dim(&format!("session: {path}")));
    }
    out
}

/// speed's findings, most severe first.
fn checks(s: &Summary, style: &Style) -> String {
    let mut out = String::new();
    let facts = &s.facts;
    if !facts.requirements.is_empty() {
        let traced = facts
            .requirements
            .iter()
            .filter(|t| !t.sections.is_empty())
            .count();
        let _ = writeln!(
            out,
            "PRD requirements traced to the spec: {traced} of {}",
            facts.requirements.len()
        );
    }
    if facts.findings.is_empty() {
        let _ = writeln!(out, "speed's checks: nothing to report");
        return out;
    }
    let _ = writeln!(out, "speed's checks:");
    let mut findings: Vec<_> = facts.findings.iter().collect();
    findings.sort_by_key(|f| f.severity);
    for f in findings {
        let line = f.line();
        let line = match f.severity {
            Severity::Critical => style.red(&line),
            Severity::Major => style.yellow(&line),
            _ => line,
        };
        let _ = writeln!(out, "  {line}");
    }
    out
}

/// Each criterion's minimum, from the session's configuration.
fn minimums(config: &Value) -> Vec<(String, u64)> {
    config["criteria"]
        .as_array()
        .map(|list| {
            list.iter()
                .filter_map(|c| Some((c["name"].as_str()?.to_string(), c["min_score"].as_u64()?)))
                .collect()
        })
        .unwrap_or_default()
}

/// One iteration of the session as people read it.
fn iteration(it: &Value, minimums: &[(String, u64)], style: &Style) -> String {
    let mut out = String::new();
    let result = &it["result"];
    let verdict = result["verdict"].as_str().unwrap_or("?");
    let model = result["model_verdict"].as_str();
    let said = match model {
        Some(m) if m != verdict => format!(" (the model said {m})"),
        _ => String::new(),
    };
    let _ = writeln!(
        out,
        "{}{said}",
        style.bold(&format!(
            "Review {}: {verdict}",
            it["iteration"].as_u64().unwrap_or(0)
        ))
    );
    if let Some(scores) = result["scores"].as_object() {
        let shown: Vec<String> = scores
            .iter()
            .map(|(name, score)| {
                let score = score.as_u64().unwrap_or(0);
                match minimums.iter().find(|(n, _)| n == name) {
                    Some((_, min)) if score < *min => {
                        style.red(&format!("{name} {score} (under {min})"))
                    }
                    _ => format!("{name} {score}"),
                }
            })
            .collect();
        let _ = writeln!(out, "  scores: {}", shown.join(", "));
    }
    for o in result["overrules"].as_array().into_iter().flatten() {
        let _ = writeln!(out, "  overruled: {}", o["reason"].as_str().unwrap_or(""));
    }
    if let Some(error) = result["error"].as_str() {
        let _ = writeln!(out, "  error: {error}");
    }
    let feedback = result["feedback"].as_array().cloned().unwrap_or_default();
    if !feedback.is_empty() {
        let _ = writeln!(out, "  feedback:");
        for f in &feedback {
            let _ = writeln!(
                out,
                "    - {}: {}\n      suggestion: {}",
                f["section"].as_str().unwrap_or(""),
                f["issue"].as_str().unwrap_or(""),
                f["suggestion"].as_str().unwrap_or("")
            );
        }
    }
    let revision = &result["revision"];
    match revision["status"].as_str() {
        Some("applied") => {
            let _ = writeln!(
                out,
                "  revised by `{}`; the previous text is kept in {}",
                revision["reviser"].as_str().unwrap_or(""),
                revision["previous_text"].as_str().unwrap_or("")
            );
        }
        Some(status) => {
            let _ = writeln!(
                out,
                "  revision {status}: {}",
                revision["reason"].as_str().unwrap_or("")
            );
        }
        None => {}
    }
    out
}

fn pretty(value: &Value) -> String {
    let mut text = serde_json::to_string_pretty(value).unwrap_or_else(|_| "{}".to_string());
    text.push('\n');
    text
}

/// The latest review of the session's current budget, as saved.
fn last_review(s: &Summary) -> Option<&Value> {
    let session = s.session.as_ref()?;
    let start = u64::from(session.budget_starts_at);
    session
        .iterations
        .iter()
        .rev()
        .find(|it| it["iteration"].as_u64().is_some_and(|n| n >= start))
        .map(|it| &it["result"])
}

/// Whether the run came to a verdict on the spec (pass, needs revision,
/// blocked after reviews that answered, or speed's checks alone): what a
/// SARIF log may be written for (see `sarif`).
pub fn decided(s: &Summary) -> bool {
    if s.dry.is_some() {
        return false;
    }
    let answered = s.offline || last_review(s).is_some_and(|r| r["error"].is_null());
    answered
        && matches!(
            s.outcome,
            Outcome::Approved | Outcome::ChangesRequested | Outcome::Blocked
        )
}

/// Every finding of a spec review for the CI formats: speed's checks at
/// their place in the spec (or the PRD), then what the latest review
/// overruled and the feedback it gave, each at its section's heading.
pub fn findings(s: &Summary) -> Vec<Finding> {
    let mut out = Vec::new();
    for f in &s.facts.findings {
        let file = f.file.as_deref().unwrap_or(&s.spec_path);
        out.push(
            Finding::new(
                format!("spec-check/{}", f.check),
                Level::of(f.severity),
                f.message.clone(),
            )
            .at(Some(file), f.line.map(|l| l as u64)),
        );
    }
    let Some(review) = last_review(s) else {
        return out;
    };
    for o in review["overrules"].as_array().into_iter().flatten() {
        out.push(
            Finding::new(
                "spec-review/overrule".to_string(),
                Level::Error,
                format!(
                    "speed overruled the review: {}",
                    o["reason"].as_str().unwrap_or("")
                ),
            )
            .at(Some(&s.spec_path), None),
        );
    }
    // Feedback asks for a revision unless the spec passed; then it is advice.
    let level = match s.outcome {
        Outcome::Approved => Level::Note,
        _ => Level::Error,
    };
    for f in review["feedback"].as_array().into_iter().flatten() {
        let section = f["section"].as_str().unwrap_or("").trim();
        let line = heading_line(&s.facts.headings, section);
        out.push(
            Finding::new(
                "spec-review/feedback".to_string(),
                level,
                format!("{section}: {}", f["issue"].as_str().unwrap_or("").trim()),
            )
            .at(Some(&s.spec_path), line.map(|l| l as u64))
            .suggest(f["suggestion"].as_str().unwrap_or(""))
            .known_by(section),
        );
    }
    out
}

/// The line of the heading a section is named by: its heading path, or
/// its own title when that is unique.
fn heading_line(headings: &[(String, usize)], section: &str) -> Option<usize> {
    let section = section.trim().trim_start_matches('#').trim();
    if let Some((_, line)) = headings.iter().find(|(path, _)| path == section) {
        return Some(*line);
    }
    let by_title: Vec<usize> = headings
        .iter()
        .filter(|(path, _)| {
            path.rsplit(" > ")
                .next()
                .is_some_and(|title| title.eq_ignore_ascii_case(section))
        })
        .map(|(_, line)| *line)
        .collect();
    match by_title.as_slice() {
        [line] => Some(*line),
        _ => None,
    }
}
