//! JUnit XML output (`--format junit`), for CI test report tools: one test
//! suite, one test case per reviewed task (or branch), a `<failure>` holding
//! the findings when the review did not approve, an `<error>` when it could
//! not complete, `<skipped>` for tasks already approved at their diff. The
//! scores are properties of the suite (the schema most readers use has no
//! properties on a test case), named by subject. A report with nothing to
//! review says so in a skipped case, so an empty shard of a matrix reads as
//! a choice, not as a runner that found no tests.
//!
//! Each command check a review ran (its `checks_run`) is a test case of its
//! own after the review's, in class `speed.checks`, named `<check>
//! (<subject>)`, with the time it took: a `<failure>` when it failed (its
//! reason, findings and the files of its checkout it changed in the body),
//! an `<error>` when it timed out (it did not finish, as a review that could
//! not complete is an error), `<skipped>` with the reason when it did not
//! run. Cases rather than suite properties because every reader lists
//! cases with their status and time (GitLab's test report, Jenkins,
//! dorny/test-reporter, action-junit-report), while most show no
//! properties at all. A failed check is a failed case the way the tool's
//! own JUnit report would have it; the review's case is the gate. The
//! suite's time stays the reviews' (the checks ran within them).
//!
//! A review's case says what the model and the guardian saw of the diff,
//! marked `[warning]` when code went unseen.
//!
//! Every text comes from someone else (task titles, model messages), so it is
//! escaped, and characters XML 1.0 cannot carry become U+FFFD.

use crate::git::short;
use std::fmt::Write;

use crate::exit::Outcome;
use crate::ledger::Report;
use crate::review::Skipped;
use crate::review::shard::Share;

use super::findings::{self, Finding};

/// The suite of a review command's report.
pub const REVIEW_SUITE: &str = "speed review";

/// The suite of `speed spec review`'s report.
pub const SPEC_SUITE: &str = "speed spec review";

/// The test report of a review command; `share` is what a `--shard K/N`
/// runner held.
pub fn report(reports: &[Report], skipped: &[Skipped], share: Option<&Share>) -> String {
    let mut cases = String::new();
    let mut props = String::new();
    let (mut failures, mut errors) = (0, 0);
    let (mut tests_of_checks, mut skipped_checks) = (0, 0);
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
        props.push_str(&properties(report));
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
                    "changes requested: {errors_n} blocking, {}, {}",
                    super::plural(warnings_n, "warning"),
                    super::plural(notes_n, "note")
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
        let checks = check_cases(report);
        cases.push_str(&checks.cases);
        tests_of_checks += report.checks_run.len();
        failures += checks.failures;
        errors += checks.errors;
        skipped_checks += checks.skipped;
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
    let mut tests = reports.len() + skipped.len();
    let mut skips = skipped.len();
    if tests == 0 {
        cases.push_str(&nothing(share));
        tests = 1;
        skips = 1;
    }
    tests += tests_of_checks;
    skips += skipped_checks;
    if let Some(share) = share {
        let _ = writeln!(
            props,
            "      <property name=\"shard\" value=\"{}\"/>",
            attr(&share.shard.label())
        );
    }
    let props = if props.is_empty() {
        props
    } else {
        format!("    <properties>\n{props}    </properties>\n")
    };
    document(
        REVIEW_SUITE,
        &Counts {
            tests,
            failures,
            errors,
            skipped: skips,
            time_ms,
        },
        &props,
        &cases,
    )
}

/// The cases of a review's command checks (see the module doc).
#[derive(Default)]
struct CheckCases {
    cases: String,
    failures: usize,
    errors: usize,
    skipped: usize,
}

fn check_cases(report: &Report) -> CheckCases {
    use crate::checks::RunOutcome;
    let subject = super::report_subject(report);
    let mut out = CheckCases::default();
    for run in &report.checks_run {
        let _ = writeln!(
            out.cases,
            "    <testcase classname=\"speed.checks\" name=\"{}\" time=\"{}\">",
            attr(&format!("{} ({subject})", run.name)),
            seconds(run.duration_ms)
        );
        let mut body = format!("{}: {}\n", run.name, super::plural(run.findings, "finding"));
        if let Some(reason) = &run.reason {
            let _ = writeln!(body, "{}", reason.trim());
        }
        for file in &run.changed {
            let _ = writeln!(body, "changed: {file}");
        }
        let reason = run.reason.as_deref().unwrap_or(run.outcome.as_str());
        match run.outcome {
            RunOutcome::Passed => {
                let _ = writeln!(out.cases, "      <system-out>{}</system-out>", text(&body));
            }
            RunOutcome::Failed => {
                out.failures += 1;
                let _ = writeln!(
                    out.cases,
                    "      <failure message=\"{}\" type=\"check_failed\">{}</failure>",
                    attr(reason),
                    text(&body)
                );
            }
            RunOutcome::TimedOut => {
                out.errors += 1;
                let _ = writeln!(
                    out.cases,
                    "      <error message=\"{}\" type=\"timed_out\">{}</error>",
                    attr(reason),
                    text(&body)
                );
            }
            RunOutcome::Skipped => {
                out.skipped += 1;
                let _ = writeln!(out.cases, "      <skipped message=\"{}\"/>", attr(reason));
            }
        }
        out.cases.push_str("    </testcase>\n");
    }
    out
}

/// The one case of a report that reviewed nothing, and why: on purpose,
/// the way a skipped test is.
fn nothing(share: Option<&Share>) -> String {
    let (name, message) = match share {
        Some(share) => (
            format!("shard {}", share.shard.label()),
            format!(
                "{}: nothing to review in this shard, on purpose: the tasks were dealt to the other shards",
                share.line()
            ),
        ),
        None => (
            "speed review".to_string(),
            "nothing to review: no task needs a review".to_string(),
        ),
    };
    format!(
        "    <testcase classname=\"speed\" name=\"{}\" time=\"0\">\n      <skipped message=\"{}\"/>\n    </testcase>\n",
        attr(&name),
        attr(&message)
    )
}

/// A review's scores as properties of the suite, named by its subject
/// (`feature/3.overall_score`, `feature/3.pass_score`,
/// `feature/3.score.<dimension>`), which report tools show beside it.
fn properties(report: &Report) -> String {
    let Some(scores) = &report.scores else {
        return String::new();
    };
    let subject = super::report_subject(report);
    let mut out = String::new();
    let mut property = |name: &str, value: String| {
        let _ = writeln!(
            out,
            "      <property name=\"{}\" value=\"{}\"/>",
            attr(&format!("{subject}.{name}")),
            attr(&value)
        );
    };
    property("overall_score", scores.overall.to_string());
    property("pass_score", scores.pass_score.to_string());
    for r in &scores.dimensions {
        property(&format!("score.{}", r.name), r.score.to_string());
    }
    out
}

/// The test report printed when no review could start: one errored case
/// in `suite` (`REVIEW_SUITE`, `SPEC_SUITE`).
pub fn failure(suite: &str, error: &str) -> String {
    let case = format!(
        "    <testcase classname=\"speed\" name=\"{}\" time=\"0\">\n      <error message=\"{}\" type=\"error\"/>\n    </testcase>\n",
        attr(suite),
        attr(error)
    );
    let counts = Counts {
        tests: 1,
        failures: 0,
        errors: 1,
        skipped: 0,
        time_ms: 0,
    };
    document(suite, &counts, "", &case)
}

struct Counts {
    tests: usize,
    failures: usize,
    errors: usize,
    skipped: usize,
    time_ms: u64,
}

fn document(suite: &str, counts: &Counts, properties: &str, cases: &str) -> String {
    let Counts {
        tests,
        failures,
        errors,
        skipped,
        time_ms,
    } = counts;
    let counts = format!(
        "tests=\"{tests}\" failures=\"{failures}\" errors=\"{errors}\" skipped=\"{skipped}\" time=\"{}\"",
        seconds(*time_ms)
    );
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"speed\" {counts}>\n  <testsuite name=\"{}\" {counts}>\n{properties}{cases}  </testsuite>\n</testsuites>\n",
        attr(suite)
    )
}

/// The test report of a spec review: one case, failed when the spec needs
/// revision or is blocked, an error when the review could not run; the
/// latest scores are properties of the suite.
pub fn spec_report(summary: &crate::spec_review::Summary) -> String {
    use crate::spec_review::Summary;
    let s: &Summary = summary;
    let found = super::spec_review::findings(s);
    let mut body = String::new();
    for f in &found {
        let place = f.place().map(|p| format!(" {p}")).unwrap_or_default();
        let _ = writeln!(
            body,
            "[{}] {}{place}: {}",
            f.level.as_str(),
            f.rule,
            f.message.trim()
        );
        if let Some(fix) = &f.suggestion {
            let _ = writeln!(body, "    fix: {fix}");
        }
    }
    let _ = writeln!(body, "{}", s.headline);
    if let Some(path) = &s.session_path {
        let _ = writeln!(body, "session: {path}");
    }
    let mut counts = Counts {
        tests: 1,
        failures: 0,
        errors: 0,
        skipped: 0,
        time_ms: 0,
    };
    let verdict = super::spec_review::verdict(s);
    let outcome = match s.outcome {
        Outcome::Approved => format!("      <system-out>{}</system-out>\n", text(&body)),
        Outcome::ChangesRequested | Outcome::Blocked => {
            counts.failures = 1;
            format!(
                "      <failure message=\"{}\" type=\"{verdict}\">{}</failure>\n",
                attr(&s.headline),
                text(&body)
            )
        }
        _ => {
            counts.errors = 1;
            format!(
                "      <error message=\"{}\" type=\"{verdict}\">{}</error>\n",
                attr(&s.headline),
                text(&body)
            )
        }
    };
    let case = format!(
        "    <testcase classname=\"speed.spec\" name=\"{}\" time=\"0\">\n{outcome}    </testcase>\n",
        attr(&format!("spec {}: {}", s.feature, s.spec_path))
    );
    let mut props = String::new();
    let last = s
        .session
        .as_ref()
        .and_then(|session| session.iterations.last());
    if let Some(scores) = last.and_then(|it| it["result"]["scores"].as_object()) {
        for (name, score) in scores {
            let _ = writeln!(
                props,
                "      <property name=\"{}\" value=\"{}\"/>",
                attr(&format!("score.{name}")),
                attr(&score.to_string())
            );
        }
    }
    let props = if props.is_empty() {
        props
    } else {
        format!("    <properties>\n{props}    </properties>\n")
    };
    document(SPEC_SUITE, &counts, &props, &case)
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
    // What the model and the guardian saw: a verdict on part of the diff
    // says so beside its findings.
    let seen = [
        super::coverage::review(report),
        super::coverage::guardian(report),
    ];
    for (sentence, whole) in seen.into_iter().flatten() {
        let mark = if whole { "" } else { "[warning] " };
        let _ = writeln!(out, "{mark}{sentence}");
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
        let xml = failure(REVIEW_SUITE, "no <repo> here");
        assert!(xml.contains("errors=\"1\""), "{xml}");
        assert!(xml.contains("message=\"no &lt;repo&gt; here\""), "{xml}");
    }
}
