//! The Markdown summary of one review (seed 000's "Review Summary"), kept
//! beside its JSON report as the readable record of the work: what was
//! asked, what changed, the decision and the reasons speed kept or
//! overruled it, the scores, the findings by severity, concerns and
//! strengths, what the model did not see, the guardian, and a person's
//! part. Built from the report and its evidence only; bounded whatever the
//! model wrote, and passed through the secrets net by the writer.

use std::fmt::Write;

use crate::git::short;
use crate::severity::Severity;
use crate::verdict::Kind;

use super::report::{Evidence, Report};

/// Entries listed per section; the JSON report keeps them all.
const LISTED: usize = 50;
/// Characters kept of one text.
const TEXT: usize = 500;

/// The summary's Markdown text.
pub fn markdown(report: &Report, evidence: &Evidence, reviewed_at: &str) -> String {
    let mut out = String::new();
    let title = report.title.as_deref().unwrap_or(&report.branch);
    let _ = writeln!(out, "# Review of {}: {}\n", report.label(), cell(title));
    let (verdict, more) = decision(report);
    let _ = writeln!(out, "- Decision: **{verdict}**{more}");
    let _ = writeln!(out, "- Reviewed: {reviewed_at}");
    if !report.head_commit.is_empty() {
        let _ = writeln!(
            out,
            "- Branch: {} ({}..{})",
            cell(&report.branch),
            short(&report.base_commit),
            short(&report.head_commit)
        );
    }
    if !report.model.provider.is_empty() {
        let _ = writeln!(
            out,
            "- Model: {} {}",
            cell(&report.model.provider),
            cell(&report.model.name)
        );
    }
    if let Some(path) = &report.report_path {
        let _ = writeln!(out, "- Report: {path}");
    }
    asked(&mut out, report, evidence);
    changed(&mut out, evidence);
    reasons(&mut out, report);
    scores(&mut out, report);
    findings(&mut out, report);
    concerns(&mut out, report);
    unseen(&mut out, report, evidence);
    parts(&mut out, report);
    guardian(&mut out, report);
    out
}

/// A review in parts: which part saw which file (each part's line
/// bounded; the JSON report's `parts[].shown` lists every file).
fn parts(out: &mut String, report: &Report) {
    let count = report.parts.len();
    if count < 2 || report.parts.iter().all(|p| p.shown.is_empty()) {
        return;
    }
    let _ = writeln!(out, "\n## Which part saw which file\n");
    for p in &report.parts {
        let files: Vec<String> = p
            .shown
            .iter()
            .map(|f| format!("{} ({})", f.path, f.extent()))
            .collect();
        let answered = if p.status == "answered" && p.error.is_none() {
            ""
        } else {
            ", no answer: not reviewed"
        };
        let _ = writeln!(
            out,
            "- Part {} of {count} ({} file{}{answered}): {}",
            p.index,
            p.shown.len(),
            plural(p.shown.len()),
            cell(&files.join(", "))
        );
    }
}

/// speed's verdict, and what else there is to say of it: the model's word
/// when it differs, a person's review.
fn decision(report: &Report) -> (String, String) {
    let verdict = match (report.verdict, &report.error) {
        (Some(v), _) => v.as_str().to_string(),
        (None, Some(_)) => "review failed".to_string(),
        (None, None) => "none".to_string(),
    };
    let mut more = match report.model_verdict.map(Kind::as_str) {
        Some(said) if said != verdict => format!(" (the model said {said})"),
        _ => String::new(),
    };
    // What a request for changes asks for: the work, the plan, anything.
    if let Some(rejected) = report
        .judge_rejection()
        .filter(|r| r.kind != super::report::RejectedKind::Implementation)
    {
        let _ = write!(more, ": {}", rejected.headline());
        if !rejected.reason.is_empty() {
            let _ = write!(more, " ({})", cell(&rejected.reason));
        }
    }
    if let Some(human) = &report.human_review {
        let _ = write!(more, "; a person's review: {}", human.status);
        if !human.by.is_empty() {
            let _ = write!(more, " by {}", cell(&human.by));
        }
    }
    (verdict, more)
}

fn asked(out: &mut String, report: &Report, evidence: &Evidence) {
    let _ = writeln!(out, "\n## What was asked\n");
    for line in evidence.asked.iter().take(LISTED) {
        let _ = writeln!(out, "- {}", cell(line));
    }
    if !report.specs.is_empty() {
        let _ = writeln!(out, "- Spec: {}", cell(&report.specs.join(", ")));
    }
    if let Some(review) = &report.review {
        if !review.expectations.trim().is_empty() {
            let _ = writeln!(
                out,
                "- What the reviewer expected from the spec: {}",
                cell(&review.expectations)
            );
        }
        for c in review.criteria.iter().take(LISTED) {
            let _ = writeln!(
                out,
                "- {} rated {} by the reviewer ({})",
                cell(&c.id),
                c.status.as_str(),
                cell(&c.evidence)
            );
        }
    }
}

fn changed(out: &mut String, evidence: &Evidence) {
    let _ = writeln!(out, "\n## What changed\n");
    if evidence.changes.is_empty() {
        let _ = writeln!(out, "Nothing.");
        return;
    }
    let added: usize = evidence.changes.iter().map(|c| c.additions).sum();
    let removed: usize = evidence.changes.iter().map(|c| c.deletions).sum();
    let _ = writeln!(
        out,
        "{} file{}, {added} line{} added, {removed} removed.\n",
        evidence.changes.len(),
        plural(evidence.changes.len()),
        plural(added)
    );
    let _ = writeln!(
        out,
        "| file | change | + | − |\n| --- | --- | ---: | ---: |"
    );
    for c in evidence.changes.iter().take(LISTED) {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} |",
            cell(&c.path),
            c.status,
            c.additions,
            c.deletions
        );
    }
    more(out, evidence.changes.len());
}

fn reasons(out: &mut String, report: &Report) {
    let _ = writeln!(out, "\n## Decision and reasons\n");
    if let Some(err) = &report.error {
        let _ = writeln!(out, "The review could not be completed: {}", cell(err));
        return;
    }
    if report.overrules.is_empty() {
        let kept = match report.model_verdict {
            Some(said) => format!("speed kept the model's verdict ({said}): no rule overruled it."),
            None => "No model was asked: speed's own checks decided.".to_string(),
        };
        let _ = writeln!(out, "{kept}");
    } else {
        let _ = writeln!(out, "speed overruled the model's approval:\n");
        for o in report.overrules.iter().take(LISTED) {
            let _ = writeln!(out, "- {}: {}", o.rule.as_str(), cell(&o.reason));
        }
        more(out, report.overrules.len());
    }
    for line in report.reconciled() {
        let _ = writeln!(out, "\n{}", cell(&line));
    }
    if let Some(rejection) = report.review.as_ref().and_then(|r| r.rejection.as_ref()) {
        if report.verdict == Some(Kind::RequestChanges) {
            let _ = writeln!(
                out,
                "\nThe rejection asks for a new {}: {}",
                rejection.kind.as_str(),
                cell(&rejection.reason)
            );
        }
    }
    if let Some(human) = &report.human_review {
        let _ = writeln!(
            out,
            "\nA person's review: {} ({}){}",
            human.status,
            human.at,
            if human.is_pending() {
                ": confirm with `speed approve` or turn down with `speed reject`"
            } else {
                ""
            }
        );
    }
}

fn scores(out: &mut String, report: &Report) {
    let Some(scores) = &report.scores else {
        return;
    };
    let _ = writeln!(out, "\n## Scores\n");
    let _ = writeln!(
        out,
        "| dimension | score | minimum | weight | passed | reason |\n| --- | ---: | ---: | ---: | --- | --- |"
    );
    for r in &scores.dimensions {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} |",
            r.name,
            r.score,
            r.min_score.map_or("-".to_string(), |m| m.to_string()),
            r.weight,
            if r.passed { "yes" } else { "**no**" },
            cell(&r.reason)
        );
    }
    let met = &scores.pass_criteria_met;
    let yes = |b: bool| if b { "yes" } else { "no" };
    let _ = writeln!(
        out,
        "\nOverall {} (pass score {}). Every minimum met: {}; no blocking issue: {}; overall at or above the pass score: {}.",
        scores.overall,
        scores.pass_score,
        yes(met.all_critical_dimensions_pass),
        yes(met.no_blocking_issues),
        yes(met.overall_score_above_threshold)
    );
}

fn findings(out: &mut String, report: &Report) {
    let mut lines: Vec<(Severity, String)> = Vec::new();
    if let Some(review) = &report.review {
        for i in &review.issues {
            let at = match (&i.file, i.line) {
                (Some(f), Some(l)) => format!(" ({f}:{l})"),
                (Some(f), None) => format!(" ({f})"),
                _ => String::new(),
            };
            let dimension = i
                .dimension
                .as_ref()
                .map(|d| format!(" [{d}]"))
                .unwrap_or_default();
            lines.push((i.severity, format!("{}{at}{dimension}", cell(&i.message))));
        }
    }
    for f in &report.checks {
        let at = f.location().map(|a| format!(" ({a})")).unwrap_or_default();
        let first = f.message.lines().next().unwrap_or_default();
        lines.push((
            f.severity,
            format!("speed's {} check{at}: {}", f.check, cell(first)),
        ));
    }
    if lines.is_empty() {
        return;
    }
    let _ = writeln!(out, "\n## Findings\n");
    for severity in Severity::ALL {
        let of: Vec<&String> = lines
            .iter()
            .filter(|(s, _)| *s == severity)
            .map(|(_, l)| l)
            .collect();
        if of.is_empty() {
            continue;
        }
        let _ = writeln!(out, "### {} ({})\n", severity.as_str(), of.len());
        for line in of.iter().take(LISTED) {
            let _ = writeln!(out, "- {line}");
        }
        more(out, of.len());
        let _ = writeln!(out);
    }
}

fn concerns(out: &mut String, report: &Report) {
    let Some(review) = &report.review else {
        return;
    };
    let mut concerns: Vec<String> = Vec::new();
    for m in &review.missing_from_spec {
        let what = if m.description.trim().is_empty() {
            &m.spec_quote
        } else {
            &m.description
        };
        concerns.push(format!("Missing from the spec: {}", cell(what)));
    }
    for o in &review.out_of_scope {
        concerns.push(format!(
            "Out of scope: {} ({})",
            cell(&o.description),
            cell(&o.file)
        ));
    }
    if !concerns.is_empty() {
        let _ = writeln!(out, "\n## Concerns\n");
        for c in concerns.iter().take(LISTED) {
            let _ = writeln!(out, "- {c}");
        }
        more(out, concerns.len());
    }
    if !review.strengths.is_empty() {
        let _ = writeln!(out, "\n## Strengths\n");
        for s in review.strengths.iter().take(LISTED) {
            let _ = writeln!(out, "- {}", cell(s));
        }
        more(out, review.strengths.len());
    }
}

fn unseen(out: &mut String, report: &Report, evidence: &Evidence) {
    let omitted = &report.coverage.diff.files_omitted;
    let unseen = report.coverage.diff.unseen();
    let spec_left_out = evidence
        .sections
        .iter()
        .find(|s| s.name == "spec")
        .map(|s| s.omitted.as_slice())
        .unwrap_or_default();
    let unanswered = report.unanswered();
    if omitted.is_empty()
        && unseen.is_none()
        && unanswered.is_none()
        && report.notices.is_empty()
        && spec_left_out.is_empty()
    {
        return;
    }
    let _ = writeln!(out, "\n## What the model did not see\n");
    if let Some(unanswered) = unanswered {
        let _ = writeln!(out, "- {}.", cell(&unanswered));
    }
    if let Some(unseen) = unseen {
        let _ = writeln!(out, "- Left out of every prompt: {unseen}");
    }
    let c = &report.coverage.diff;
    if c.files_partly() > 0 || c.files_left_out() > 0 {
        let _ = writeln!(
            out,
            "- {} {} of {} changed lines{}: {}",
            if report.unanswered().is_some() {
                "Its prompts showed"
            } else {
                "It saw"
            },
            crate::numbers::thousands(c.lines_shown as u64),
            crate::numbers::thousands((c.lines_shown + c.lines_unseen) as u64),
            match report.coverage.parts {
                0 | 1 => String::new(),
                n => format!(" in {n} parts"),
            },
            c.files_words()
        );
    }
    for f in omitted.iter().take(LISTED) {
        let _ = writeln!(out, "- {}: {}", cell(&f.path), cell(&f.reason));
    }
    more(out, omitted.len());
    spec_sections(out, spec_left_out);
    for n in report.notices.iter().take(LISTED) {
        let _ = writeln!(out, "- Note: {}", cell(n));
    }
}

/// Spec sections the prompt left out, on one line: counted, the highest
/// ranked named (a big spec's hundred headings would bury the summary; the
/// JSON report lists every one).
fn spec_sections(out: &mut String, left_out: &[crate::prompt::Omission]) {
    const NAMED: usize = 5;
    let n = left_out.len();
    if n == 0 {
        return;
    }
    let named: Vec<String> = left_out.iter().take(NAMED).map(|o| cell(&o.item)).collect();
    let in_part = left_out.iter().filter(|o| o.sent_in_part()).count();
    let _ = write!(
        out,
        "- {n} spec section{} left out for budget{}{}: {}",
        plural(n),
        match in_part {
            0 => String::new(),
            k => format!(" ({k} of them sent in part, as their rules alone)"),
        },
        if n > NAMED {
            ", the highest ranked"
        } else {
            ""
        },
        named.join("; ")
    );
    if n > NAMED {
        let _ = write!(out, "; and {} more (the JSON report lists each)", n - NAMED);
    }
    out.push('\n');
}

fn guardian(out: &mut String, report: &Report) {
    let g = &report.guardian;
    let _ = writeln!(out, "\n## Guardian\n");
    let said = match (g.summary.trim(), g.reason.as_deref()) {
        ("", Some(reason)) => cell(reason),
        (summary, _) => cell(summary),
    };
    let _ = writeln!(out, "{}: {said}", g.status);
    for f in g.flags.iter().take(LISTED) {
        let _ = writeln!(out, "- [{}] {}", f.severity.as_str(), cell(&f.description));
    }
    // What it saw, like the review's coverage, and what it did not.
    if let (Some((sentence, _)), Some(c)) = (g.seen(), g.coverage.as_ref()) {
        let _ = writeln!(out, "\n{}.", cell(&sentence));
        let (left_out, partly) = c.omitted_for_budget();
        let not_whole: Vec<_> = left_out.into_iter().chain(partly).collect();
        for f in not_whole.iter().take(LISTED) {
            let _ = writeln!(out, "- {}: {}", cell(&f.path), cell(&f.reason));
        }
        more(out, not_whole.len());
    }
}

/// A text on one line, bounded, safe in a table cell.
fn cell(text: &str) -> String {
    let one = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut out: String = one.chars().take(TEXT).collect();
    if one.chars().nth(TEXT).is_some() {
        out.push('…');
    }
    out.replace('|', "\\|")
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

fn more(out: &mut String, total: usize) {
    if total > LISTED {
        let _ = writeln!(out, "- …and {} more in the JSON report", total - LISTED);
    }
}
