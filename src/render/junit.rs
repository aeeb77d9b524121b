//! JUnit XML output (`--format junit`), for CI test report tools: one test
//! suite, one test case per reviewed task (or branch), a `<failure>` holding
//! the findings when the review did not approve, an `<error>` when it could
//! not complete, `<skipped>` for tasks already approved at their diff.
//!
//! Every text comes from someone else (task titles, model messages), so it is
//! escaped, and characters XML 1.0 cannot carry become U+FFFD.

use crate::git::short;
use std::fmt::Write;

use crate::exit::Outcome;
use crate::ledger::Report;
use crate::review::Skipped;

use super::findings::{self, Finding};

const SUITE: &str = "speed review";

/// The test report of a review command.
pub fn report(reports: &[Report], skipped: &[Skipped]) -> String {
    let mut cases = String::new();
    let (mut failures, mut errors) = (0, 0);
    let mut time_ms = 0;
    for report in reports {
        time_ms += report.duration_ms;
        let found = findings::of(report);
        let subject = super::report_subject(report);
        let name = match report.title.as_deref().map(str::trim) {
            Some(title) if !title.is_empty() => format!("{subject}: {title}"),
            _ => subject.clone(),
        };
        let _ = writeln!(
            cases,
            "    <testcase classname=\"{}\" name=\"{}\" time=\"{}\">",
            attr(&classname(report)),
            attr(&name),
            seconds(report.duration_ms)
        );
        cases.push_str(&properties(report));
        match (report.outcome, &report.error) {
            (Outcome::Approved, None) => {
                let out = details(report, &found);
                if !out.is_empty() {
                    let _ = writeln!(cases, "      <system-out>{}</system-out>", text(&out));
                }
            }
            (Outcome::ChangesRequested, None) => {
                failures += 1;
                let (errors_n, warnings_n, notes_n) = findings::counts(&found);
                let message = format!(
                    "changes requested: {errors_n} blocking, {warnings_n} warnings, {notes_n} notes"
                );
                let _ = writeln!(
                    cases,
                    "      <failure message=\"{}\" type=\"request_changes\">{}</failure>",
                    attr(&message),
                    text(&details(report, &found))
                );
            }
            (outcome, error) => {
                errors += 1;
                let message = error.as_deref().unwrap_or("the review failed");
                let kind = match outcome {
                    Outcome::ModelUnreachable => "model_unreachable",
                    Outcome::InvalidOutput => "invalid_output",
                    _ => "error",
                };
                let _ = writeln!(
                    cases,
                    "      <error message=\"{}\" type=\"{kind}\">{}</error>",
                    attr(message),
                    text(&details(report, &found))
                );
            }
        }
        cases.push_str("    </testcase>\n");
    }
    for s in skipped {
        let subject = super::skipped_subject(s);
        let _ = write!(
            cases,
            "    <testcase classname=\"{}\" name=\"{}\" time=\"0\">\n      <skipped message=\"{}\"/>\n    </testcase>\n",
            attr(&match (&s.defect, &s.feature) {
                (Some(_), _) => "speed.defects".to_string(),
                (None, feature) => format!("speed.{}", feature.as_deref().unwrap_or("tasks")),
            }),
            attr(&subject),
            attr(&s.reason)
        );
    }
    document(
        reports.len() + skipped.len(),
        failures,
        errors,
        skipped.len(),
        time_ms,
        &cases,
    )
}

/// A test case's scores as properties (`overall_score`, `pass_score`,
/// `score.<dimension>`), which report tools show beside the case.
fn properties(report: &Report) -> String {
    let Some(scores) = &report.scores else {
        return String::new();
    };
    let mut out = String::from("      <properties>\n");
    let mut property = |name: &str, value: String| {
        let _ = writeln!(
            out,
            "        <property name=\"{}\" value=\"{}\"/>",
            attr(name),
            attr(&value)
        );
    };
    property("overall_score", scores.overall.to_string());
    property("pass_score", scores.pass_score.to_string());
    for r in &scores.dimensions {
        property(&format!("score.{}", r.name), r.score.to_string());
    }
    out.push_str("      </properties>\n");
    out
}

/// The test report printed when no review could start: one errored case.
pub fn failure(error: &str) -> String {
    let case = format!(
        "    <testcase classname=\"speed\" name=\"speed review\" time=\"0\">\n      <error message=\"{}\" type=\"error\"/>\n    </testcase>\n",
        attr(error)
    );
    document(1, 0, 1, 0, 0, &case)
}

fn document(
    tests: usize,
    failures: usize,
    errors: usize,
    skipped: usize,
    time_ms: u64,
    cases: &str,
) -> String {
    let counts = format!(
        "tests=\"{tests}\" failures=\"{failures}\" errors=\"{errors}\" skipped=\"{skipped}\" time=\"{}\"",
        seconds(time_ms)
    );
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"speed\" {counts}>\n  <testsuite name=\"{SUITE}\" {counts}>\n{cases}  </testsuite>\n</testsuites>\n"
    )
}

/// `speed.<feature>`, `speed.tasks` without one, `speed.defects` for a
/// defect fix, `speed.branch` for a branch review: report tools group cases
/// by class.
fn classname(report: &Report) -> String {
    match (&report.task_id, &report.feature) {
        (Some(_), Some(feature)) if !feature.is_empty() => format!("speed.{feature}"),
        (Some(_), _) => "speed.tasks".to_string(),
        (None, _) if report.defect.is_some() => "speed.defects".to_string(),
        (None, _) => "speed.branch".to_string(),
    }
}

/// The body of a case: the commits, the findings one per line with their
/// place and fix, the task update and where the full report is.
fn details(report: &Report, found: &[Finding]) -> String {
    let mut out = String::new();
    if !report.head_commit.is_empty() {
        let _ = writeln!(
            out,
            "{} {}..{}",
            report.branch,
            short(&report.base_commit),
            short(&report.head_commit)
        );
    }
    for f in found {
        let place = f.place().map(|p| format!(" {p}")).unwrap_or_default();
        let _ = writeln!(
            out,
            "[{}] {}{place}: {}",
            f.level.as_str(),
            f.rule,
            f.message.trim()
        );
        if let Some(s) = &f.suggestion {
            let _ = writeln!(out, "    fix: {s}");
        }
    }
    if let Some(scores) = &report.scores {
        for line in super::score_lines(scores) {
            let _ = writeln!(out, "{line}");
        }
    }
    if let Some(line) = super::human_review_line(report) {
        let _ = writeln!(out, "{line}");
    }
    if let Some(update) = &report.task_update {
        let _ = writeln!(
            out,
            "task status: {} (revision {})",
            update.status, update.revision_count
        );
    }
    if let Some(path) = &report.report_path {
        let _ = writeln!(out, "report: {path}");
    }
    out
}

fn seconds(ms: u64) -> String {
    format!("{:.3}", ms as f64 / 1000.0)
}

/// Text content: `&`, `<` and `>` escaped, characters XML 1.0 forbids
/// replaced.
fn text(s: &str) -> String {
    escape(s, false)
}

/// An attribute value in double quotes: quotes, and line breaks and tabs
/// too, so readers do not normalise them away.
fn attr(s: &str) -> String {
    escape(s, true)
}

fn escape(s: &str, attribute: bool) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' if attribute => out.push_str("&quot;"),
            '\'' if attribute => out.push_str("&apos;"),
            '\n' if attribute => out.push_str("&#10;"),
            '\r' => out.push_str("&#13;"),
            '\t' if attribute => out.push_str("&#9;"),
            c if allowed_in_xml(c) => out.push(c),
            _ => out.push('\u{FFFD}'),
        }
    }
    out
}

/// XML 1.0's Char production.
fn allowed_in_xml(c: char) -> bool {
    matches!(c, '\t' | '\n' | '\r' | '\u{20}'..='\u{D7FF}' | '\u{E000}'..='\u{FFFD}' | '\u{10000}'..)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping_covers_markup_quotes_and_forbidden_characters() {
        assert_eq!(text("a < b && c > d"), "a &lt; b &amp;&amp; c &gt; d");
        assert_eq!(
            attr("say \"hi\"\n'x'"),
            "say &quot;hi&quot;&#10;&apos;x&apos;"
        );
        assert_eq!(
            text("bell\u{7} nul\u{0} ok\n"),
            "bell\u{FFFD} nul\u{FFFD} ok\n"
        );
        assert_eq!(text("]]>"), "]]&gt;");
        assert_eq!(text("\u{FFFE}"), "\u{FFFD}");
    }

    #[test]
    fn a_failure_document_is_one_errored_case() {
        let xml = failure("no <repo> here");
        assert!(xml.contains("errors=\"1\""), "{xml}");
        assert!(xml.contains("message=\"no &lt;repo&gt; here\""), "{xml}");
    }
}
