//! A review's report as Markdown (`speed show --format markdown`, `speed
//! review --format markdown`), for a pull request comment or a wiki: the
//! decision and what speed overruled, the scores when the report has them,
//! the findings by level, the spec quotes as checked, the criteria, what
//! the model did not see, the guardian. Text from elsewhere is inert
//! (Markdown's punctuation and HTML escaped, one line per field), as in
//! the GitHub step summary.

use std::fmt::Write;

use serde_json::Value;

use crate::git::short;
use crate::ledger::Report;
use crate::ledger::report::RejectedKind;
use crate::verdict::Kind;

use super::findings::{self, Level};
use super::github::{code, inline};
use super::thousands;

/// One report; `reviewed_at` for a saved one, and `now` for one shown
/// later: whether an approval covers its subject today (`speed show`).
pub fn report(report: &Report, reviewed_at: Option<&str>, now: Option<&str>) -> String {
    let mut out = String::new();
    let subject = super::report_subject(report);
    let _ = write!(out, "# speed review: {}", inline(&subject));
    if let Some(title) = report.title.as_deref().filter(|t| !t.trim().is_empty()) {
        let _ = write!(out, ": {}", inline(title));
    }
    out.push_str("\n\n");
    let _ = writeln!(out, "- **Decision:** {}", inline(&decision(report)));
    if let Some(model) = report.model_verdict {
        let _ = writeln!(out, "- **The model said:** {}", model.as_str());
    }
    if let Some(line) = super::human_review_line(report) {
        let _ = writeln!(out, "- **Person's review:** {}", inline(&line));
    }
    if let Some(now) = now {
        let _ = writeln!(out, "- **Now:** {}", inline(now));
    }
    if !report.branch.is_empty() {
        let commits = if report.head_commit.is_empty() {
            String::new()
        } else {
            format!(
                " ({})",
                code(&format!(
                    "{}..{}",
                    short(&report.base_commit),
                    short(&report.head_commit)
                ))
            )
        };
        let _ = writeln!(out, "- **Branch:** {}{commits}", code(&report.branch));
    }
    if let Some(at) = reviewed_at {
        let _ = writeln!(out, "- **Reviewed at:** {}", date(at));
    }
    if !report.model.provider.is_empty() {
        let _ = writeln!(
            out,
            "- **Model:** {}",
            inline(format!("{} {}", report.model.provider, report.model.name).trim())
        );
    }
    let _ = writeln!(
        out,
        "- **Tokens:** {}; **duration** {:.1} s",
        super::tokens_in_out(
            report.tokens.prompt,
            report.tokens.completion,
            report.tokens.by_speed()
        ),
        report.duration_ms as f64 / 1000.0
    );
    if let Some(update) = &report.task_update {
        let _ = writeln!(
            out,
            "- **Task:** {} (revision {})",
            inline(&update.status),
            update.revision_count
        );
    }
    if let Some(path) = &report.report_path {
        let _ = writeln!(out, "- **Report:** {}", code(path));
    }
    let reconciled = report.reconciled();
    if !reconciled.is_empty() {
        out.push_str("\n## Asked again\n\n");
        for line in &reconciled {
            let _ = writeln!(out, "- {}", inline(line));
        }
    }
    if !report.overrules.is_empty() {
        out.push_str("\n## What speed overruled\n\n");
        for o in &report.overrules {
            let _ = writeln!(out, "- {}: {}", code(o.rule.as_str()), inline(&o.reason));
        }
    }
    if let Some(scores) = serde_json::to_value(report)
        .ok()
        .and_then(|v| v.get("scores").cloned())
    {
        scores_table(&mut out, &scores);
    }
    checks_run(&mut out, report);
    findings_by_level(&mut out, report);
    quotes(&mut out, report);
    criteria(&mut out, report);
    coverage(&mut out, report);
    guardian(&mut out, report);
    out
}

/// A time as speed writes them (`2026-11-28T10:04:05Z`) as it is: nothing
/// in it is Markdown mid-line, so escaping would only show backslashes.
/// Anything else (an edited report) is escaped like all text from
/// elsewhere.
fn date(at: &str) -> String {
    let plain = !at.is_empty()
        && at.starts_with(|c: char| c.is_ascii_digit())
        && at
            .chars()
            .all(|c| c.is_ascii_digit() || "-:T.Z+ ".contains(c));
    if plain { at.to_string() } else { inline(at) }
}

fn decision(report: &Report) -> String {
    match (report.verdict, &report.error) {
        (Some(Kind::Approve), _) => "approved".to_string(),
        (Some(Kind::ChecksPassed), _) => {
            "checks passed (offline: nothing was approved)".to_string()
        }
        (Some(Kind::RequestChanges), _) => match report.judge_rejection() {
            Some(r) if r.kind != RejectedKind::Implementation => {
                format!("{} ({})", r.headline(), r.reason)
            }
            _ if !report.overrules.is_empty() => {
                "changes requested by speed (it overruled the model)".to_string()
            }
            _ => "changes requested".to_string(),
        },
        (None, Some(err)) => format!("the review failed: {err}"),
        (None, None) => "no decision".to_string(),
    }
}

fn scores_table(out: &mut String, scores: &Value) {
    if !scores.is_object() {
        return;
    }
    let n = |v: &Value| {
        if v.is_null() {
            "none".to_string()
        } else {
            v.to_string()
        }
    };
    let _ = writeln!(
        out,
        "\n## Scores\n\nOverall {} (to pass: {}).\n",
        inline(&n(&scores["overall"])),
        inline(&n(&scores["pass_score"]))
    );
    if let Some(dimensions) = scores["dimensions"].as_object() {
        out.push_str("| dimension | score | weight | minimum | passed | why |\n| --- | --- | --- | --- | --- | --- |\n");
        for (name, d) in dimensions {
            let passed = match d["passed"].as_bool() {
                Some(true) => "yes",
                Some(false) => "no",
                None => "",
            };
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {passed} | {} |",
                inline(name),
                inline(&n(&d["score"])),
                inline(&n(&d["weight"])),
                inline(&n(&d["min_score"])),
                inline(d["reason"].as_str().unwrap_or_default())
            );
        }
    }
}

/// The command checks as they ran: one row each.
fn checks_run(out: &mut String, report: &Report) {
    if report.checks_run.is_empty() {
        return;
    }
    out.push_str("\n## Command checks\n\n| check | outcome | duration | findings | why |\n| --- | --- | --- | --- | --- |\n");
    for run in &report.checks_run {
        let why = match (&run.reason, run.changed.is_empty()) {
            (Some(reason), true) => inline(reason),
            (reason, false) => format!(
                "{}{}",
                reason
                    .as_deref()
                    .map(|r| inline(r) + ": ")
                    .unwrap_or_default(),
                run.changed
                    .iter()
                    .map(|f| code(f))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            (None, true) => String::new(),
        };
        let _ = writeln!(
            out,
            "| {} | {} | {:.1} s | {} | {why} |",
            code(&run.name),
            run.outcome.as_str(),
            run.duration_ms as f64 / 1000.0,
            run.findings
        );
    }
}

fn findings_by_level(out: &mut String, report: &Report) {
    let found = findings::of(report);
    out.push_str("\n## Findings\n");
    if found.is_empty() {
        out.push_str("\nNone.\n");
        return;
    }
    for (level, title) in [
        (Level::Error, "Errors (blocking)"),
        (Level::Warning, "Warnings"),
        (Level::Note, "Notes"),
    ] {
        let these: Vec<_> = found.iter().filter(|f| f.level == level).collect();
        if these.is_empty() {
            continue;
        }
        let _ = writeln!(out, "\n### {title}\n");
        for f in these {
            let place = f
                .place()
                .map(|p| format!(" at {}", code(&p)))
                .unwrap_or_default();
            let _ = write!(out, "- {}{place}: {}", code(&f.rule), inline(&f.message));
            if let Some(s) = &f.suggestion {
                let _ = write!(out, " *Suggestion:* {}", inline(s));
            }
            out.push('\n');
        }
    }
}

fn quotes(out: &mut String, report: &Report) {
    if report.quotes.is_empty() {
        return;
    }
    out.push_str(
        "\n## Spec quotes, as checked\n\n| section | quote | in the spec |\n| --- | --- | --- |\n",
    );
    for q in report.distinct_quotes() {
        let found = match (q.found, &q.doc_path, q.line) {
            (true, Some(doc), Some(line)) => format!("found at {}", code(&format!("{doc}:{line}"))),
            (true, _, _) => "found".to_string(),
            (false, _, _) => format!("**not found: {}**", q.refusal()),
        };
        let _ = writeln!(
            out,
            "| {} | {} | {found} |",
            inline(q.section.as_deref().unwrap_or("(no section)")),
            inline(&q.spec_quote)
        );
    }
}

fn criteria(out: &mut String, report: &Report) {
    let Some(review) = report.review.as_ref().filter(|r| !r.criteria.is_empty()) else {
        return;
    };
    out.push_str(
        "\n## Acceptance criteria\n\n| criterion | status | evidence |\n| --- | --- | --- |\n",
    );
    for c in &review.criteria {
        let _ = writeln!(
            out,
            "| {} | {} | {} |",
            inline(&c.id),
            c.status.as_str(),
            inline(&c.evidence)
        );
    }
}

fn coverage(out: &mut String, report: &Report) {
    if report.head_commit.is_empty() {
        return;
    }
    let c = &report.coverage.diff;
    let (seen, lines) = super::coverage::lines(c);
    let _ = writeln!(
        out,
        "\n## What the model did not see\n\n{} {} of {} changed lines{}{}: {}{}.",
        // A part that gave no answer: its share was shown, not reviewed.
        if report.unanswered().is_some() {
            "Its prompts showed"
        } else {
            "It saw"
        },
        thousands(seen as u64),
        thousands(lines as u64),
        match report.coverage.parts {
            0 | 1 => String::new(),
            n => format!(" in {n} parts"),
        },
        if report.coverage.incremental {
            " of the changes since the last review (incremental: not the whole change)"
        } else {
            ""
        },
        inline(&super::coverage::files(c)),
        inline(&super::coverage::by_name(c)),
    );
    if let Some(unanswered) = report.unanswered() {
        let _ = writeln!(out, "\n{}.", inline(&unanswered));
    }
    let parts = super::coverage::parts_files(report, &|path| code(path));
    if !parts.is_empty() {
        out.push_str("\n### Which part saw which file\n\n");
        for (head, files) in parts {
            let _ = writeln!(out, "- {}: {files}", inline(&head));
        }
    }
    omitted(out, c);
}

/// The files a prompt did not show whole, grouped: left out for budget,
/// shown in part, shown by name only; each with why.
fn omitted(out: &mut String, c: &crate::prompt::Coverage) {
    for (title, list) in c.omitted_groups() {
        let _ = writeln!(out, "\n{title} ({}):\n", list.len());
        for f in list {
            let _ = writeln!(out, "- {}: {}", code(&f.path), inline(&f.reason));
        }
    }
}

fn guardian(out: &mut String, report: &Report) {
    let g = &report.guardian;
    if g.status == "not_run" {
        return;
    }
    let _ = write!(out, "\n## Guardian\n\n{}", inline(&g.status));
    if !g.summary.trim().is_empty() {
        let _ = write!(out, ": {}", inline(&g.summary));
    } else if let Some(reason) = &g.reason {
        let _ = write!(out, " ({})", inline(reason));
    }
    out.push('\n');
    for f in &g.flags {
        let _ = writeln!(out, "- {}: {}", f.severity.as_str(), inline(&f.description));
    }
    // What it saw, like the review's coverage.
    if let (Some((sentence, _)), Some(c)) = (
        super::coverage::guardian(report),
        report.guardian.coverage.as_ref(),
    ) {
        let _ = writeln!(out, "\n{}.", inline(&sentence));
        omitted(out, c);
    }
}

/// What `--format markdown` prints when nothing could be shown.
pub fn failure(error: &str) -> String {
    format!("# speed\n\n**Error:** {}\n", inline(error))
}
