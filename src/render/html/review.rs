//! The page of one or more reviews (`speed review --format html`, `speed
//! show --format html`): for each, the decision and what speed overruled,
//! the scores when the report has them, every finding, each spec quote
//! beside its section marked found or not found, the criteria, the diff
//! with each finding at its line, what the model did not see, and the
//! guardian. A finding is the same one every other format prints
//! (`render::findings`).

use serde_json::Value;

use crate::exit::Outcome;
use crate::git::{Diff, short};
use crate::ledger::Report;
use crate::ledger::report::RejectedKind;
use crate::render::findings::{self, Finding};
use crate::verdict::{CriterionStatus, Kind};

use super::diff::{self, Placed};
use super::{Html, clip, document};
use crate::render::thousands;

/// One review on the page.
pub struct Review<'a> {
    pub report: &'a Report,
    /// The diff it was about, when it can be shown.
    pub diff: Option<&'a Diff>,
    /// Why the diff is missing or differs, when it is or does.
    pub diff_note: Option<&'a str>,
    /// When a saved report was recorded.
    pub reviewed_at: Option<&'a str>,
    /// Shown later (`speed show`): whether an approval covers its subject
    /// today.
    pub now: Option<&'a str>,
}

/// The whole page.
pub fn page(reviews: &[Review<'_>]) -> String {
    let title = match reviews {
        [one] => format!("speed review: {}", heading(one.report)),
        _ => format!("speed review: {} reviews", reviews.len()),
    };
    document(&title, |page| {
        page.open("main", &[]).newline();
        match reviews {
            [] => {
                page.elem("h1", &[], "speed review")
                    .elem("p", &[], "Nothing was reviewed.");
            }
            [one] => review(page, one, 1, "h1"),
            many => {
                page.elem("h1", &[], &title).newline();
                contents(page, many);
                for (i, one) in many.iter().enumerate() {
                    review(page, one, i + 1, "h2");
                }
            }
        }
        page.close("main").newline();
    })
}

/// `library-catalog/2: Loan renewals`.
fn heading(report: &Report) -> String {
    let subject = crate::render::report_subject(report);
    match report
        .title
        .as_deref()
        .map(str::trim)
        .filter(|t| !t.is_empty())
    {
        Some(title) => format!("{subject}: {title}"),
        None => subject,
    }
}

/// A batch's table of contents: each review's subject, decision and
/// finding counts, linked to its section.
fn contents(page: &mut Html, reviews: &[Review<'_>]) {
    page.open("table", &[])
        .elem("caption", &[], "Reviews on this page")
        .raw("<thead><tr><th scope=\"col\">Review</th><th scope=\"col\">Decision</th><th scope=\"col\">Findings</th></tr></thead>")
        .open("tbody", &[])
        .newline();
    for (i, r) in reviews.iter().enumerate() {
        let counts = findings::count_words(&findings::of(r.report));
        page.open("tr", &[])
            .open("td", &[])
            .elem(
                "a",
                &[("href", &format!("#review-{}", i + 1))],
                &heading(r.report),
            )
            .close("td")
            .elem("td", &[], &decision(r.report))
            .elem("td", &[], &counts)
            .close("tr")
            .newline();
    }
    page.close("tbody").close("table").newline();
}

fn review(page: &mut Html, r: &Review<'_>, n: usize, level: &str) {
    let report = r.report;
    let id = format!("review-{n}");
    page.open(
        "article",
        &[("id", &id), ("aria-labelledby", &format!("{id}-title"))],
    )
    .newline()
    .elem(level, &[("id", &format!("{id}-title"))], &heading(report))
    .newline();
    facts(page, r);
    verdict(page, report, r.now);
    let sub = if level == "h1" { "h2" } else { "h3" };
    if let Some(scores) = scores_of(report) {
        section(page, &id, "scores", sub, "Scores", |page| {
            self::scores(page, &scores)
        });
    }
    if !report.checks_run.is_empty() {
        section(page, &id, "checks-run", sub, "Command checks", |page| {
            checks_run(page, report)
        });
    }
    let found = findings::of(report);
    let placed: Vec<Placed<'_>> = found
        .iter()
        .enumerate()
        .map(|(i, finding)| Placed { n: i + 1, finding })
        .collect();
    let prefix = format!("{id}-finding");
    section(page, &id, "findings", sub, "Findings", |page| {
        finding_list(page, &prefix, &placed)
    });
    if !report.quotes.is_empty() {
        section(
            page,
            &id,
            "quotes",
            sub,
            "Spec quotes, as checked",
            |page| quotes(page, report),
        );
    }
    if let Some(review) = report.review.as_ref().filter(|r| !r.criteria.is_empty()) {
        section(page, &id, "criteria", sub, "Acceptance criteria", |page| {
            criteria(page, review)
        });
    }
    section(
        page,
        &id,
        "diff",
        sub,
        "The diff, with each finding at its line",
        |page| {
            if let Some(note) = r.diff_note {
                page.elem("p", &[("class", "note")], note);
            }
            let with_file: Vec<Placed<'_>> = placed
                .iter()
                .filter(|p| p.finding.file.is_some())
                .map(|p| Placed {
                    n: p.n,
                    finding: p.finding,
                })
                .collect();
            diff::draw(page, &id, r.diff, &with_file);
        },
    );
    section(
        page,
        &id,
        "coverage",
        sub,
        "What the model did not see",
        |page| coverage(page, report),
    );
    section(page, &id, "guardian", sub, "Guardian", |page| {
        guardian(page, report)
    });
    if let Some(review) = &report.review {
        if !review.strengths.is_empty() || !review.expectations.trim().is_empty() {
            section(
                page,
                &id,
                "answer",
                sub,
                "The reviewer's expectations and strengths",
                |page| {
                    if !review.expectations.trim().is_empty() {
                        page.open("p", &[])
                            .elem("strong", &[], "Expected: ")
                            .text(&clip(&review.expectations, 4_000))
                            .close("p");
                    }
                    list(page, review.strengths.iter().map(|s| clip(s, 1_000)));
                },
            );
        }
    }
    page.close("article").newline();
}

fn section(
    page: &mut Html,
    id: &str,
    name: &str,
    level: &str,
    title: &str,
    body: impl FnOnce(&mut Html),
) {
    let heading = format!("{id}-{name}");
    page.open("section", &[("aria-labelledby", &heading)])
        .newline()
        .elem(level, &[("id", &heading)], title)
        .newline();
    body(page);
    page.close("section").newline();
}

fn facts(page: &mut Html, r: &Review<'_>) {
    let report = r.report;
    page.open("dl", &[("class", "facts")]).newline();
    let mut fact = |name: &str, value: &str| {
        if !value.is_empty() {
            page.elem("dt", &[], name).elem("dd", &[], value).newline();
        }
    };
    fact("Subject", &crate::render::report_subject(report));
    fact("Branch", &report.branch);
    if !report.head_commit.is_empty() {
        fact(
            "Commits",
            &format!(
                "{}..{}",
                short(&report.base_commit),
                short(&report.head_commit)
            ),
        );
    }
    fact("Reviewed at", r.reviewed_at.unwrap_or_default());
    if !report.model.provider.is_empty() {
        fact(
            "Model",
            format!("{} {}", report.model.provider, report.model.name).trim(),
        );
    }
    fact(
        "Tokens",
        &format!(
            "{} (prompt budget {})",
            crate::render::tokens_in_out(
                report.tokens.prompt,
                report.tokens.completion,
                report.tokens.by_speed()
            ),
            crate::render::thousands(report.tokens.budget as u64)
        ),
    );
    fact(
        "Duration",
        &format!("{:.1} s", report.duration_ms as f64 / 1000.0),
    );
    if let Some(update) = &report.task_update {
        fact(
            "Task",
            &format!("{} (revision {})", update.status, update.revision_count),
        );
    }
    fact("Specs", &report.specs.join(", "));
    fact(
        "Report file",
        report.report_path.as_deref().unwrap_or_default(),
    );
    page.close("dl").newline();
    if !report.notices.is_empty() {
        page.elem("p", &[], "Notices:");
        list(page, report.notices.iter().map(|n| clip(n, 2_000)));
    }
}

/// The decision in words.
fn decision(report: &Report) -> String {
    match (report.verdict, &report.error) {
        (Some(Kind::Approve), _) => "Approved".to_string(),
        (Some(Kind::ChecksPassed), _) => {
            "Checks passed (offline: no model compared the work with the spec; nothing was approved)"
                .to_string()
        }
        (Some(Kind::RequestChanges), _) => match report.judge_rejection() {
            Some(r) if r.kind != RejectedKind::Implementation => {
                format!("{} ({})", r.title(), clip(&r.reason, 2_000))
            }
            _ if !report.overrules.is_empty() => {
                "Changes requested, by speed (it overruled the model's approval)".to_string()
            }
            _ => "Changes requested".to_string(),
        },
        (None, Some(err)) => format!("The review failed: {}", clip(err, 2_000)),
        (None, None) => "No decision".to_string(),
    }
}

fn verdict(page: &mut Html, report: &Report, now: Option<&str>) {
    let class = match report.outcome {
        Outcome::Approved => "verdict approved",
        _ => "verdict rejected",
    };
    page.open("p", &[("class", class)])
        .text("Decision: ")
        .text(&decision(report))
        .close("p")
        .newline();
    if let Some(model) = report.model_verdict {
        page.elem("p", &[], &format!("The model said: {}.", model.as_str()));
    }
    if let Some(line) = crate::render::human_review_line(report) {
        page.elem("p", &[], &clip(&line, 2_000));
    }
    if let Some(now) = now {
        page.elem(
            "p",
            &[("class", "now")],
            &format!("Now: {}", clip(now, 2_000)),
        );
    }
    if let Some(feedback) = report.feedback.as_deref().filter(|f| !f.trim().is_empty()) {
        page.open("details", &[])
            .elem("summary", &[], "The feedback written for the developer")
            .elem("pre", &[], &clip(feedback, 20_000))
            .close("details")
            .newline();
    }
    for line in report.reconciled() {
        page.elem("p", &[("class", "reconcile")], &clip(&line, 2_000));
    }
    if report.overrules.is_empty() {
        return;
    }
    page.elem("p", &[], "What speed overruled, and why:");
    page.open("ul", &[]).newline();
    for o in &report.overrules {
        page.open("li", &[])
            .elem("code", &[], o.rule.as_str())
            .text(": ")
            .text(&clip(&o.reason, 2_000))
            .close("li")
            .newline();
    }
    page.close("ul").newline();
}

/// The report's `scores`, in the contract's shape, from its JSON form: a
/// report carries them once dimensions are scored.
fn scores_of(report: &Report) -> Option<Value> {
    let value = serde_json::to_value(report).ok()?;
    value.get("scores").filter(|s| s.is_object()).cloned()
}

/// `{dimensions: {name: {score, weight, min_score, passed, reason}},
/// overall, pass_score, pass_criteria_met: {…}}` as a table and a line.
pub fn scores(page: &mut Html, scores: &Value) {
    let number = |v: &Value| match v {
        Value::Number(n) => n.to_string(),
        Value::Null => "none".to_string(),
        other => other.to_string(),
    };
    page.open("p", &[])
        .text(&format!(
            "Overall score: {} (to pass: {}).",
            number(&scores["overall"]),
            number(&scores["pass_score"])
        ))
        .close("p")
        .newline();
    if let Some(dimensions) = scores["dimensions"].as_object() {
        page.open("table", &[])
            .elem("caption", &[], "Scores by dimension")
            .raw("<thead><tr><th scope=\"col\">Dimension</th><th scope=\"col\">Score</th><th scope=\"col\">Weight</th><th scope=\"col\">Minimum</th><th scope=\"col\">Passed</th><th scope=\"col\">Why</th></tr></thead>")
            .open("tbody", &[])
            .newline();
        for (name, d) in dimensions {
            let passed = match d["passed"].as_bool() {
                Some(true) => "passed",
                Some(false) => "below its minimum",
                None => "",
            };
            page.open("tr", &[])
                .elem("th", &[("scope", "row")], name)
                .elem("td", &[], &number(&d["score"]))
                .elem("td", &[], &number(&d["weight"]))
                .elem("td", &[], &number(&d["min_score"]))
                .elem("td", &[], passed)
                .elem(
                    "td",
                    &[],
                    &clip(d["reason"].as_str().unwrap_or_default(), 2_000),
                )
                .close("tr")
                .newline();
        }
        page.close("tbody").close("table").newline();
    }
    if let Some(met) = scores["pass_criteria_met"].as_object() {
        list(
            page,
            met.iter().map(|(name, v)| {
                let word = if v.as_bool() == Some(true) {
                    "met"
                } else {
                    "not met"
                };
                format!("{}: {word}", name.replace('_', " "))
            }),
        );
    }
}

/// Every finding: a link to where it stands in the diff, or the finding
/// itself when it has no file.
fn finding_list(page: &mut Html, prefix: &str, placed: &[Placed<'_>]) {
    let all: Vec<Finding> = placed.iter().map(|p| p.finding.clone()).collect();
    let (errors, warnings, notes) = findings::counts(&all);
    let count = |n: usize, word: &str| format!("{n} {word}{}", if n == 1 { "" } else { "s" });
    page.elem(
        "p",
        &[],
        &format!(
            "{} (blocking), {}, {}.",
            count(errors, "error"),
            count(warnings, "warning"),
            count(notes, "note")
        ),
    );
    if placed.is_empty() {
        return;
    }
    page.open("ol", &[]).newline();
    for p in placed {
        page.open("li", &[]);
        if p.finding.file.is_some() {
            let text = format!(
                "{} {} at {}: {}",
                p.finding.level.as_str(),
                p.finding.rule,
                p.finding.place().unwrap_or_default(),
                clip(&p.finding.message, 300)
            );
            page.elem("a", &[("href", &format!("#{prefix}-{}", p.n))], &text);
        } else {
            diff::finding(page, prefix, p);
        }
        page.close("li").newline();
    }
    page.close("ol").newline();
}

fn quotes(page: &mut Html, report: &Report) {
    page.open("table", &[])
        .elem("caption", &[], "Each quote of the spec the review rests on, looked up in the spec that was sent")
        .raw("<thead><tr><th scope=\"col\">Section</th><th scope=\"col\">Quote</th><th scope=\"col\">In the spec</th></tr></thead>")
        .open("tbody", &[])
        .newline();
    for q in report.distinct_quotes() {
        // A quote not found has no section of the spec: the one the
        // answer named is shown, as the answer's word.
        let claimed = || {
            report.review.as_ref().and_then(|r| {
                r.spec_verification
                    .iter()
                    .find(|c| c.spec_quote.trim() == q.spec_quote.trim())
                    .map(|c| c.spec_section.trim())
                    .filter(|s| !s.is_empty())
                    .map(|s| format!("{s} (as the answer names it)"))
            })
        };
        let section = q
            .section
            .clone()
            .or_else(claimed)
            .unwrap_or_else(|| "(no section)".to_string());
        let (class, word) = if q.found {
            let at = match (&q.doc_path, q.line) {
                (Some(doc), Some(line)) => format!("found at {doc}:{line}"),
                (Some(doc), None) => format!("found in {doc}"),
                _ => "found".to_string(),
            };
            ("found", at)
        } else {
            ("not-found", format!("not found: {}", q.refusal()))
        };
        page.open("tr", &[])
            .elem("td", &[], &clip(&section, 500))
            .open("td", &[])
            .elem("q", &[], &clip(&q.spec_quote, 2_000))
            .close("td")
            .elem("td", &[("class", class)], &word)
            .close("tr")
            .newline();
    }
    page.close("tbody").close("table").newline();
}

fn criteria(page: &mut Html, review: &crate::verdict::Verdict) {
    page.open("table", &[])
        .elem("caption", &[], "The criteria as the reviewer rated them")
        .raw("<thead><tr><th scope=\"col\">Criterion</th><th scope=\"col\">Status</th><th scope=\"col\">Evidence</th></tr></thead>")
        .open("tbody", &[])
        .newline();
    for c in &review.criteria {
        let class = match c.status {
            CriterionStatus::Met => "found",
            CriterionStatus::Unmet => "not-found",
            CriterionStatus::Unverifiable => "flagged",
        };
        page.open("tr", &[])
            .elem("th", &[("scope", "row")], &c.id)
            .elem("td", &[("class", class)], c.status.as_str())
            .elem("td", &[], &clip(&c.evidence, 2_000))
            .close("tr")
            .newline();
    }
    page.close("tbody").close("table").newline();
}

/// The command checks as they ran: one row each.
fn checks_run(page: &mut Html, report: &Report) {
    page.open("table", &[])
        .elem("caption", &[], "In the order they ran")
        .raw("<thead><tr><th scope=\"col\">Check</th><th scope=\"col\">Outcome</th><th scope=\"col\">Duration</th><th scope=\"col\">Findings</th><th scope=\"col\">Why</th></tr></thead>")
        .open("tbody", &[])
        .newline();
    for run in &report.checks_run {
        let mut why = run.reason.clone().unwrap_or_default();
        if !run.changed.is_empty() {
            why = format!("{why} (files changed: {})", run.changed.join(", "));
        }
        let class = match run.outcome {
            crate::checks::RunOutcome::Passed => "found",
            crate::checks::RunOutcome::Skipped => "flagged",
            _ => "not-found",
        };
        page.open("tr", &[])
            .elem("th", &[("scope", "row")], &run.name)
            .elem("td", &[("class", class)], run.outcome.as_str())
            .elem(
                "td",
                &[],
                &format!("{:.1} s", run.duration_ms as f64 / 1000.0),
            )
            .elem("td", &[], &run.findings.to_string())
            .elem("td", &[], &clip(why.trim(), 2_000))
            .close("tr")
            .newline();
    }
    page.close("tbody").close("table").newline();
}

fn coverage(page: &mut Html, report: &Report) {
    let c = &report.coverage;
    if report.head_commit.is_empty() {
        page.elem("p", &[], "The review stopped before a prompt was made.");
        return;
    }
    let parts = match c.parts {
        0 | 1 => "one prompt".to_string(),
        n => format!("{n} prompts"),
    };
    let (seen, lines) = super::super::coverage::lines(&c.diff);
    page.elem(
        "p",
        &[],
        &format!(
            "{} {} of {} changed lines, in {parts}: {}{}.",
            // A part that gave no answer: its share was shown, not reviewed.
            if report.unanswered().is_some() {
                "The prompts showed"
            } else {
                "The model saw"
            },
            thousands(seen as u64),
            thousands(lines as u64),
            super::super::coverage::files(&c.diff),
            super::super::coverage::by_name(&c.diff),
        ),
    );
    if let Some(unanswered) = report.unanswered() {
        page.elem("p", &[("class", "unanswered")], &format!("{unanswered}."));
    }
    parts_files(page, report);
    if c.diff.files_omitted.is_empty() {
        page.elem("p", &[], "Nothing was left out.");
        return;
    }
    omitted(page, &c.diff);
}

/// Which part of a review in parts saw which file: a row per part.
fn parts_files(page: &mut Html, report: &Report) {
    let count = report.parts.len();
    if count < 2 || report.parts.iter().all(|p| p.shown.is_empty()) {
        return;
    }
    page.open("table", &[("class", "parts")])
        .open("caption", &[])
        .text("Which part saw which file")
        .close("caption")
        .open("thead", &[])
        .open("tr", &[])
        .elem("th", &[("scope", "col")], "part")
        .elem("th", &[("scope", "col")], "files it saw")
        .close("tr")
        .close("thead")
        .open("tbody", &[])
        .newline();
    for p in &report.parts {
        let answered = p.status == "answered" && p.error.is_none();
        let head = format!(
            "{} of {count}{}",
            p.index,
            if answered { "" } else { " (no answer)" }
        );
        page.open("tr", &[])
            .elem("th", &[("scope", "row")], &head)
            .open("td", &[]);
        for (n, f) in p.shown.iter().enumerate() {
            if n > 0 {
                page.text(", ");
            }
            page.elem("code", &[], &f.path)
                .text(&format!(" ({})", f.extent()));
        }
        page.close("td").close("tr").newline();
    }
    page.close("tbody").close("table").newline();
}

/// The files a prompt did not show whole, grouped and each with why.
fn omitted(page: &mut Html, c: &crate::prompt::Coverage) {
    for (title, list) in c.omitted_groups() {
        page.elem("p", &[], &format!("{title} ({}):", list.len()));
        page.open("ul", &[]).newline();
        for f in list {
            page.open("li", &[])
                .elem("code", &[], &f.path)
                .text(": ")
                .text(&f.reason)
                .close("li")
                .newline();
        }
        page.close("ul").newline();
    }
}

fn guardian(page: &mut Html, report: &Report) {
    let g = &report.guardian;
    let said = match g.status.as_str() {
        "not_run" => "did not run".to_string(),
        "skipped" => format!("skipped ({})", g.reason.as_deref().unwrap_or("disabled")),
        "unavailable" => format!(
            "gave no answer, so it confirmed nothing ({})",
            g.reason.as_deref().unwrap_or("no answer")
        ),
        status => status.to_string(),
    };
    page.open("p", &[])
        .text("The guardian: ")
        .elem("strong", &[("class", &g.status)], &said)
        .close("p")
        .newline();
    if !g.summary.trim().is_empty() {
        page.elem("p", &[], &clip(&g.summary, 4_000));
    }
    // What it saw, like the review's coverage.
    if let (Some((sentence, all)), Some(c)) = (
        super::super::coverage::guardian(report),
        g.coverage.as_ref(),
    ) {
        let class = if all { "seen" } else { "unseen" };
        page.elem("p", &[("class", class)], &format!("{sentence}."));
        omitted(page, c);
    }
    list(
        page,
        g.flags.iter().map(|f| {
            let reference = if f.spec_reference.trim().is_empty() {
                String::new()
            } else {
                format!(" ({})", f.spec_reference.trim())
            };
            format!(
                "{}: {}{reference}",
                f.severity.as_str(),
                clip(&f.description, 2_000)
            )
        }),
    );
}

fn list(page: &mut Html, items: impl Iterator<Item = String>) {
    let items: Vec<String> = items.collect();
    if items.is_empty() {
        return;
    }
    page.open("ul", &[]).newline();
    for item in items {
        page.elem("li", &[], &item).newline();
    }
    page.close("ul").newline();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scores_in_the_contracts_shape_become_a_table_and_words() {
        let value = serde_json::json!({
            "dimensions": {
                "code_quality": {"score": 82, "weight": 2, "min_score": 70, "passed": true, "reason": "<b>tidy</b>"},
                "test_quality": {"score": 55, "weight": 2, "min_score": 70, "passed": false, "reason": "no test of renew()"}
            },
            "overall": 71,
            "pass_score": 75,
            "pass_criteria_met": {"all_critical_dimensions_pass": true, "overall_score_above_threshold": false}
        });
        let mut page = Html::default();
        scores(&mut page, &value);
        let out = page.into_string();
        assert!(out.contains("Overall score: 71 (to pass: 75)."), "{out}");
        assert!(out.contains("<th scope=\"row\">test_quality</th><td>55</td><td>2</td><td>70</td><td>below its minimum</td>"), "{out}");
        assert!(out.contains("&lt;b&gt;tidy&lt;/b&gt;"), "{out}");
        assert!(
            out.contains("<li>overall score above threshold: not met</li>"),
            "{out}"
        );
    }

    #[test]
    fn a_report_without_scores_has_no_scores_section() {
        let report = Report::default();
        assert_eq!(scores_of(&report), None);
        let page = page(&[Review {
            report: &report,
            diff: None,
            diff_note: Some("The review recorded no commits."),
            reviewed_at: None,
            now: None,
        }]);
        assert!(!page.contains(">Scores<"));
        assert!(page.contains("The review recorded no commits."));
    }
}
