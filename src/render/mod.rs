//! Output of reports: printers over the same data, one per format (human,
//! JSON, SARIF, JUnit, GitHub workflow commands, Markdown, HTML pages; a
//! spec review's human and JSON output; the fix queue). Each returns text;
//! `app` decides where it goes. Colour is a parameter, chosen by `app`
//! (`--color`, the terminal and `NO_COLOR`), and the text reads the same
//! without it. What was decided before is printed here too: a saved report
//! (`show`), the log's lines (`history`), its statistics (`stats`), a spec
//! review's session (`session`).

pub mod coverage;
pub mod dry;
pub mod findings;
pub mod fixes;
pub mod github;
pub mod history;
pub mod html;
pub mod human;
pub mod json;
pub mod junit;
pub mod man;
pub mod markdown;
pub mod sarif;
pub mod session;
pub mod show;
pub mod spec_review;
pub mod stats;

/// How `speed review` prints its reports on stdout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// The report for people (the default).
    Human,
    /// One JSON object (`--json`).
    Json,
    /// SARIF 2.1.0, for code scanning.
    Sarif,
    /// JUnit XML: one test case per task, failed when not approved.
    Junit,
    /// GitHub Actions workflow commands and a step summary.
    Github,
    /// One self-contained HTML page.
    Html,
    /// Markdown, for a pull request comment.
    Markdown,
}

/// When output meant for people is coloured (`--color`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColorWhen {
    /// On a terminal, unless `NO_COLOR` is set to something.
    Auto,
    Always,
    Never,
}

impl ColorWhen {
    /// Whether to colour text bound for a stream: `always` and `never`
    /// decide; `auto` colours a terminal unless NO_COLOR is set to something
    /// (no-color.org: a flag wins over the variable).
    pub fn colors(self, terminal: bool, env: &dyn Fn(&str) -> Option<String>) -> bool {
        match self {
            ColorWhen::Always => true,
            ColorWhen::Never => false,
            ColorWhen::Auto => terminal && env("NO_COLOR").is_none_or(|v| v.is_empty()),
        }
    }
}

/// How a review's subject is named in lists: `feature/id` (ids repeat across
/// features), `task ID` for a task without a feature, or `branch B`.
pub fn subject(task_id: Option<&str>, feature: Option<&str>, branch: &str) -> String {
    match (task_id, feature) {
        (Some(id), Some(feature)) if !feature.is_empty() => format!("{feature}/{id}"),
        (Some(id), _) => format!("task {id}"),
        (None, _) if branch.is_empty() => "(unknown task)".to_string(),
        (None, _) => format!("branch {branch}"),
    }
}

/// `subject` of a report; a defect-fix review's is `defect NAME`.
pub fn report_subject(report: &crate::ledger::Report) -> String {
    if let Some(defect) = &report.defect {
        return format!("defect {}", defect.name);
    }
    subject(
        report.task_id.as_deref(),
        report.feature.as_deref(),
        &report.branch,
    )
}

/// `subject` of what a batch skipped: a task, or `defect NAME`.
pub fn skipped_subject(skipped: &crate::review::Skipped) -> String {
    match &skipped.defect {
        Some(name) => format!("defect {name}"),
        None => subject(skipped.task_id.as_deref(), skipped.feature.as_deref(), ""),
    }
}

/// The scores of a review for people, one line each: the overall against
/// the pass score, then every dimension (`✓`/`✗` against its minimum) with
/// its reason, bounded. Every printer shows them so.
pub fn score_lines(scores: &crate::verdict::Scores) -> Vec<String> {
    let overall = if scores.pass_criteria_met.overall_score_above_threshold {
        "at or above it"
    } else {
        "under it"
    };
    let mut lines = vec![format!(
        "Scores: overall {} (pass score {}, {overall})",
        scores.overall, scores.pass_score
    )];
    for r in &scores.dimensions {
        let mark = if r.passed { "✓" } else { "✗" };
        let min = r
            .min_score
            .map(|m| format!("minimum {m}, "))
            .unwrap_or_default();
        let reason = r.reason.split_whitespace().collect::<Vec<_>>().join(" ");
        let reason: String = reason.chars().take(200).collect();
        let reason = if reason.is_empty() {
            String::new()
        } else {
            format!(": {reason}")
        };
        lines.push(format!(
            "{mark} {} {} ({min}weight {}){reason}",
            r.name, r.score, r.weight
        ));
    }
    lines
}

/// What a person's review of the approval is, in one line; None when the
/// approval was not put to one.
pub fn human_review_line(report: &crate::ledger::Report) -> Option<String> {
    let h = report.human_review.as_ref()?;
    let id = report.task_id.as_deref().unwrap_or_default();
    Some(match h.status.as_str() {
        "pending" => format!(
            "Waiting for a person (review.human): speed approve --task-id {id} --by NAME, or speed reject --task-id {id} --by NAME --reason TEXT"
        ),
        status => format!("A person's review: {status} by {}", h.by),
    })
}

/// One command check as it ran, for people: its mark (`✓` passed, `✗`
/// failed or timed out, `–` skipped) and a few words after its name
/// (`0.4 s`, `1.2 s, 3 findings`, `timed out after 600.0 s`, `skipped: why`).
/// Every printer of a report says them so.
pub fn check_run_words(run: &crate::checks::CheckRun) -> (&'static str, String) {
    use crate::checks::RunOutcome;
    let seconds = format!("{:.1} s", run.duration_ms as f64 / 1000.0);
    let found = match run.findings {
        0 => String::new(),
        n => format!(", {}", plural(n, "finding")),
    };
    let edited = match run.changed.len() {
        0 => String::new(),
        n => format!(", edited {} of its checkout", plural(n, "file")),
    };
    match run.outcome {
        RunOutcome::Passed => ("✓", format!("{seconds}{found}")),
        RunOutcome::Failed => ("✗", format!("{seconds}{found}{edited}")),
        RunOutcome::TimedOut => ("✗", format!("timed out after {seconds}{found}")),
        RunOutcome::Skipped => {
            let why = run.reason.as_deref().unwrap_or("not run");
            let why = why.split_whitespace().collect::<Vec<_>>().join(" ");
            let why = match why.char_indices().nth(160) {
                Some((at, _)) => format!("{}…", &why[..at]),
                None => why,
            };
            ("–", format!("skipped: {why}"))
        }
    }
}

/// A command check as it ran, in one sentence: `check lint passed after
/// 0.4 s, 0 findings`, `check tests failed after 1.2 s, 1 finding: exited
/// with status 1`, `check ruff skipped: <why>` (SARIF notifications, GitHub
/// annotations).
pub fn check_run_sentence(run: &crate::checks::CheckRun) -> String {
    let mut text = format!("check {} {}", run.name, run.outcome.as_str());
    if run.outcome != crate::checks::RunOutcome::Skipped {
        let seconds = run.duration_ms as f64 / 1000.0;
        text.push_str(&format!(
            " after {seconds:.1} s, {}",
            plural(run.findings, "finding")
        ));
    }
    if let Some(reason) = &run.reason {
        text.push_str(": ");
        text.push_str(reason.trim());
    }
    text
}

/// ANSI styling, or none.
#[derive(Debug, Clone, Copy)]
pub struct Style {
    pub color: bool,
}

impl Style {
    fn paint(&self, code: &str, text: &str) -> String {
        if self.color {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_string()
        }
    }
    pub fn green(&self, text: &str) -> String {
        self.paint("32", text)
    }
    pub fn red(&self, text: &str) -> String {
        self.paint("31", text)
    }
    pub fn yellow(&self, text: &str) -> String {
        self.paint("33", text)
    }
    pub fn bold(&self, text: &str) -> String {
        self.paint("1", text)
    }
    pub fn dim(&self, text: &str) -> String {
        self.paint("2", text)
    }
}

/// "1 line", "2 lines".
pub fn plural(n: usize, word: &str) -> String {
    format!("{n} {word}{}", if n == 1 { "" } else { "s" })
}

/// "12,345 in, 678 out", and when the provider reported no usage and speed
/// counted what was sent and answered, said after: every format shows the
/// same figures the log and `speed stats` hold.
pub fn tokens_in_out(prompt: u64, completion: u64, by_speed: bool) -> String {
    let mut text = format!("{} in, {} out", thousands(prompt), thousands(completion));
    if by_speed {
        text.push_str(COUNTED_BY_SPEED);
    }
    text
}

/// What follows figures speed counted itself.
pub const COUNTED_BY_SPEED: &str = " (counted by speed: the provider reported no usage)";

pub use crate::numbers::thousands;

#[cfg(test)]
mod tests {
    #[test]
    fn subjects_name_the_feature_beside_the_id() {
        assert_eq!(
            super::subject(Some("1"), Some("speed-defects"), "b"),
            "speed-defects/1"
        );
        assert_eq!(super::subject(Some("1"), None, "b"), "task 1");
        assert_eq!(super::subject(None, None, "feature/x"), "branch feature/x");
    }
}
