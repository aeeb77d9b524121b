//! GitHub Actions output (`--format github`): workflow commands on stdout
//! (`::error file=…,line=…::…`, `::warning`, `::notice`) for every finding
//! and one line per review, each review's human report folded in a group,
//! and a Markdown summary for `$GITHUB_STEP_SUMMARY`.
//!
//! The runner reads every line of the job's output as a possible command, and
//! reports carry text from the model and the task file. So annotation values
//! are escaped as GitHub documents (`%`, CR and LF in messages; `:` and `,`
//! too in properties), and the human reports are printed between
//! `::stop-commands::TOKEN` and `::TOKEN::` with a token the caller draws at
//! random after the model has answered, so no text inside can end it.

use std::fmt::Write;

use crate::exit::Outcome;
use crate::ledger::Report;
use crate::review::Skipped;
use crate::review::shard::Share;
use crate::verdict::Kind;

use super::findings::{self, Finding, Level};
use super::{Style, human};

/// The workflow commands of a review command. `token` must be unguessable by
/// whoever wrote the reports' text (see the module doc); `share` is what a
/// `--shard K/N` runner held.
pub fn commands(
    reports: &[Report],
    skipped: &[Skipped],
    share: Option<&Share>,
    token: &str,
) -> String {
    let mut out = String::new();
    let plain = Style { color: false };
    for report in reports {
        let subject = super::report_subject(report);
        let found = findings::of(report);
        let shown = report.error.is_none() || report.prepared();
        if shown {
            let _ = writeln!(
                out,
                "::group::{}",
                data(&format!("speed: {subject}: {}", verdict_words(report)))
            );
            let _ = writeln!(out, "::stop-commands::{token}");
            out.push_str(&human::report(report, &plain));
            let _ = writeln!(out, "\n::{token}::");
            let _ = writeln!(out, "::endgroup::");
        }
        for finding in &found {
            let anchor = findings::anchor(report, finding);
            out.push_str(&annotation(&subject, finding, anchor));
        }
        let (level, line) = outcome_line(report, &found);
        let _ = writeln!(
            out,
            "::{level} title={}::{}",
            property(&format!("speed: {subject}")),
            data(&line)
        );
    }
    for s in skipped {
        let subject = super::skipped_subject(s);
        let _ = writeln!(
            out,
            "::notice title={}::{}",
            property(&format!("speed: {subject}")),
            data(&format!("skipped: {}", s.reason))
        );
    }
    if reports.is_empty() && skipped.is_empty() {
        let why = match share {
            Some(share) => format!("nothing to review in this shard: {}", share.line()),
            None => "nothing to review".to_string(),
        };
        let _ = writeln!(out, "::notice title=speed::{}", data(&why));
    }
    out
}

/// The workflow commands of a spec review: the summary for people folded
/// in a group (between stop-commands markers, see the module doc), an
/// annotation per finding at its place in the spec, and the outcome line.
pub fn spec_commands(summary: &crate::spec_review::Summary, token: &str) -> String {
    let mut out = String::new();
    let subject = format!("spec {}", summary.feature);
    let verdict = super::spec_review::verdict(summary);
    let _ = writeln!(
        out,
        "::group::{}",
        data(&format!("speed: {subject}: {verdict}"))
    );
    let _ = writeln!(out, "::stop-commands::{token}");
    out.push_str(&super::spec_review::human(summary, &Style { color: false }));
    let _ = writeln!(out, "\n::{token}::");
    let _ = writeln!(out, "::endgroup::");
    let found = super::spec_review::findings(summary);
    for finding in &found {
        let anchor = finding
            .file
            .as_deref()
            .map(|file| (file, finding.line))
            .or(Some((summary.spec_path.as_str(), Some(1))));
        out.push_str(&annotation(&subject, finding, anchor));
    }
    let level = match summary.outcome {
        Outcome::Approved => "notice",
        _ => "error",
    };
    let _ = writeln!(
        out,
        "::{level} title={}::{}",
        property(&format!("speed: {subject}")),
        data(&format!(
            "{verdict} ({}): {}",
            findings::count_words(&found),
            summary.headline
        ))
    );
    out
}

/// The Markdown summary of a spec review for `$GITHUB_STEP_SUMMARY`.
pub fn spec_summary(summary: &crate::spec_review::Summary) -> String {
    let mut out = format!(
        "## speed spec review: {}\n\n{}: {}\n\n",
        inline(&summary.feature),
        code(super::spec_review::verdict(summary)),
        inline(&summary.headline)
    );
    for f in super::spec_review::findings(summary) {
        let place = f
            .place()
            .map(|p| format!(" {}", code(&p)))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "- **{}** {}{place}: {}",
            f.level.as_str(),
            code(&f.rule),
            inline(&f.message)
        );
    }
    out
}

/// The workflow command printed when no review could start.
pub fn failure(error: &str) -> String {
    format!("::error title=speed::{}\n", data(error))
}

/// One finding's annotation, at `anchor` (see `findings::anchor`: a
/// finding with no file of its own is shown on the spec, as in SARIF).
fn annotation(subject: &str, finding: &Finding, anchor: Option<(&str, Option<u64>)>) -> String {
    let mut props = Vec::new();
    if let Some((file, line)) = anchor {
        props.push(format!("file={}", property(file)));
        if let Some(line) = line {
            props.push(format!("line={line}"));
            if let Some(end) = finding.end_line.filter(|e| *e > line) {
                props.push(format!("endLine={end}"));
            }
            if let Some(column) = finding.column.filter(|_| finding.line.is_some()) {
                props.push(format!("col={column}"));
            }
        }
    }
    props.push(format!(
        "title={}",
        property(&format!("speed {} ({subject})", finding.rule))
    ));
    let mut message = finding.message.trim().to_string();
    if let Some(suggestion) = &finding.suggestion {
        message.push_str("\nSuggestion: ");
        message.push_str(suggestion);
    }
    format!(
        "::{} {}::{}\n",
        command(finding.level),
        props.join(","),
        data(&message)
    )
}

fn command(level: Level) -> &'static str {
    match level {
        Level::Error => "error",
        Level::Warning => "warning",
        Level::Note => "notice",
    }
}

/// The one line that says how a review ended, and its level.
fn outcome_line(report: &Report, found: &[Finding]) -> (&'static str, String) {
    let counts = findings::count_words(found);
    let scores = report
        .scores
        .as_ref()
        .map(|s| {
            format!(
                "; overall score {} (pass score {})",
                s.overall, s.pass_score
            )
        })
        .unwrap_or_default();
    let waiting = super::human_review_line(report)
        .map(|line| format!("; {line}"))
        .unwrap_or_default();
    match (report.outcome, &report.error) {
        (Outcome::Approved, None) => (
            "notice",
            format!("{} ({counts}{scores}){waiting}", verdict_words(report)),
        ),
        (Outcome::ChangesRequested, None) => (
            "error",
            format!(
                "{} ({counts}{scores}){}{waiting}",
                verdict_words(report),
                task_words(report)
            ),
        ),
        (_, error) => (
            "error",
            format!(
                "review failed: {}",
                error.as_deref().unwrap_or("unknown error")
            ),
        ),
    }
}

fn verdict_words(report: &Report) -> &'static str {
    match (report.outcome, &report.error) {
        (Outcome::Approved, None) if report.verdict == Some(Kind::ChecksPassed) => {
            "checks passed (offline: no model judged the spec)"
        }
        (Outcome::Approved, None) => "approved",
        (Outcome::ChangesRequested, None) => "changes requested",
        _ => "review failed",
    }
}

fn task_words(report: &Report) -> String {
    match &report.task_update {
        Some(update) => format!(
            "; task now {} (revision {})",
            update.status, update.revision_count
        ),
        None => String::new(),
    }
}

/// A message: `%`, CR and LF escaped.
fn data(s: &str) -> String {
    s.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// A property value: as a message, plus `:` and `,`.
fn property(s: &str) -> String {
    data(s).replace(':', "%3A").replace(',', "%2C")
}

/// What the review's model and the guardian saw, each said when it saw
/// less than the whole diff (as the terminal says it).
fn seen_lines(report: &Report) -> Vec<String> {
    let mut out = Vec::new();
    let c = &report.coverage.diff;
    if c.files_unseen > 0 {
        out.push(format!(
            "{} {} of {} changed lines{}: {}",
            if report.unanswered().is_some() {
                "the prompts showed"
            } else {
                "the model saw"
            },
            super::thousands(c.lines_shown as u64),
            super::thousands((c.lines_shown + c.lines_unseen) as u64),
            match report.coverage.parts {
                0 | 1 => String::new(),
                n => format!(" in {n} parts"),
            },
            c.files_words()
        ));
    }
    if let Some((sentence, false)) = report.guardian.seen() {
        out.push(sentence);
    }
    out
}

/// The step summary holds at most about this much; GitHub takes 1 MiB.
const SUMMARY_BYTES: usize = 512 * 1024;

/// The Markdown summary for `$GITHUB_STEP_SUMMARY`: a table of the reviews,
/// then each review's findings.
pub fn summary(reports: &[Report], skipped: &[Skipped]) -> String {
    let mut out = String::from("## speed review\n\n");
    if reports.is_empty() && skipped.is_empty() {
        out.push_str("Nothing to review.\n");
        return out;
    }
    out.push_str("| | review | verdict | findings | task |\n| --- | --- | --- | --- | --- |\n");
    for report in reports {
        let found = findings::of(report);
        let counts = findings::count_words(&found);
        let mark = match (report.outcome, &report.error) {
            (Outcome::Approved, None) => "✅",
            (Outcome::ChangesRequested, None) => "❌",
            _ => "⚠️",
        };
        let task = report
            .task_update
            .as_ref()
            .map(|u| format!("{} (revision {})", u.status, u.revision_count))
            .unwrap_or_else(|| "-".to_string());
        let _ = writeln!(
            out,
            "| {mark} | {} | {} | {counts} | {} |",
            inline(&super::report_subject(report)),
            verdict_words(report),
            inline(&task)
        );
    }
    for s in skipped {
        let _ = writeln!(
            out,
            "| ⏭️ | {} | skipped | {} | - |",
            inline(&super::skipped_subject(s)),
            inline(&s.reason)
        );
    }
    for report in reports {
        let found = findings::of(report);
        // What the model and the guardian saw, when either saw less than
        // the whole diff.
        let seen = seen_lines(report);
        if found.is_empty()
            && report.error.is_none()
            && report.scores.is_none()
            && report.checks_run.is_empty()
            && seen.is_empty()
        {
            continue;
        }
        let _ = write!(out, "\n### {}", inline(&super::report_subject(report)));
        if let Some(title) = report.title.as_deref().filter(|t| !t.trim().is_empty()) {
            let _ = write!(out, ": {}", inline(title));
        }
        out.push_str("\n\n");
        if let Some(err) = &report.error {
            let _ = writeln!(out, "- **error**: {}", inline(err));
        }
        if let Some(scores) = &report.scores {
            for line in super::score_lines(scores) {
                let _ = writeln!(out, "- {}", inline(&line));
            }
        }
        if let Some(line) = super::human_review_line(report) {
            let _ = writeln!(out, "- {}", inline(&line));
        }
        for line in &seen {
            let _ = writeln!(out, "- {}", inline(line));
        }
        if !report.checks_run.is_empty() {
            let each: Vec<String> = report
                .checks_run
                .iter()
                .map(|run| {
                    let (mark, words) = super::check_run_words(run);
                    format!("{} {mark} {}", code(&run.name), inline(&words))
                })
                .collect();
            let _ = writeln!(out, "- checks: {}", each.join(" · "));
        }
        for (i, f) in found.iter().enumerate() {
            if out.len() > SUMMARY_BYTES {
                let _ = writeln!(
                    out,
                    "- …and {} more findings in the report",
                    found.len() - i
                );
                break;
            }
            let place = f
                .place()
                .map(|p| format!(" {}", code(&p)))
                .unwrap_or_default();
            let _ = writeln!(
                out,
                "- **{}** {}{place}: {}",
                f.level.as_str(),
                code(&f.rule),
                inline(&f.message)
            );
        }
        if let Some(path) = &report.report_path {
            let _ = writeln!(out, "\nFull report: {}", code(path));
        }
    }
    out
}

/// Text from elsewhere on one Markdown line, its markup inert: line breaks
/// become spaces and Markdown's punctuation is backslash-escaped (HTML too).
pub(super) fn inline(s: &str) -> String {
    let one_line = s.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut out = String::with_capacity(one_line.len());
    for c in one_line.chars() {
        if "\\`*_{}[]()<>#+-.!|~&".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// A code span that no backtick inside can close.
pub(super) fn code(s: &str) -> String {
    let one_line = s.split_whitespace().collect::<Vec<_>>().join(" ");
    let longest = one_line
        .split(|c| c != '`')
        .map(str::len)
        .max()
        .unwrap_or(0);
    let fence = "`".repeat(longest + 1);
    format!("{fence} {one_line} {fence}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping_follows_githubs_rules() {
        assert_eq!(data("50% done\r\nnext"), "50%25 done%0D%0Anext");
        assert_eq!(property("a:b,c%\n"), "a%3Ab%2Cc%25%0A");
        // A message cannot start a second command on a new line.
        let finding = Finding {
            rule: "review/major".into(),
            level: Level::Error,
            file: Some("src/a,b:c.rs".into()),
            line: Some(4),
            end_line: Some(6),
            column: None,
            message: "bad\n::add-mask::x".into(),
            suggestion: None,
            words: findings::Words::Speed,
        };
        let line = annotation("f/1", &finding, Some(("src/a,b:c.rs", Some(4))));
        assert_eq!(
            line,
            "::error file=src/a%2Cb%3Ac.rs,line=4,endLine=6,title=speed review/major (f/1)::bad%0A::add-mask::x\n"
        );
        assert_eq!(line.lines().count(), 1);
    }

    #[test]
    fn markdown_from_elsewhere_is_inert() {
        assert_eq!(inline("a|b\n<img> *x*"), "a\\|b \\<img\\> \\*x\\*");
        assert_eq!(code("a`b"), "`` a`b ``");
    }
}
