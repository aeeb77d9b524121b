//! The human report, modelled on "What the user sees" in seed 004: a header
//! per review, the verdict with who decided it, what speed overruled and why,
//! the spec checks, the issues, the guardian, then a batch summary and nits.

use std::fmt::Write;

use crate::exit::Outcome;
use crate::git::short;
use crate::ledger::Report;
use crate::ledger::nits::Nit;
use crate::review::Skipped;
use crate::verdict::{self, Severity};

use super::{Style, findings, thousands};

fn who(report: &Report) -> String {
    match (&report.task_id, &report.defect) {
        (Some(id), _) => format!("Task {id}"),
        (None, Some(defect)) => format!("Defect {}", defect.name),
        (None, None) => format!("Branch {}", report.branch),
    }
}

/// The banner printed once before the reviews.
pub fn banner(style: &Style) -> String {
    format!("{}\n", style.bold("═══ Code Review ═══"))
}

/// One review, complete.
pub fn report(report: &Report, style: &Style) -> String {
    let mut out = header(report, style);
    out.push_str(&part_failures(report, style));
    for notice in &report.notices {
        let _ = writeln!(out, "  {} {notice}", style.yellow("!"));
    }
    if let Some(block) = &report.defect {
        out.push_str(&defect(block, style));
    }
    out.push_str(&checks_run(&report.checks_run, style));
    out.push_str(&checks(&report.checks, style));
    if let Some(review) = &report.review {
        out.push_str(&spec_lines(report, review, style));
        out.push_str(&finding_lines(review, style));
    }
    out.push_str(&citations_nowhere(report, style));
    out.push_str(&reconcile_lines(report, style));
    out.push_str(&overrule_lines(report, style));
    out.push_str(&score_block(report, style));
    if let Some(block) = blast_radius(&report.impact, style) {
        out.push_str(&block);
    }
    out.push_str(&outcome(report, style));
    out
}

/// The title, the commits and the prompt's size, then coverage and cost.
fn header(report: &Report, style: &Style) -> String {
    let mut out = String::new();
    // Names as they are written (a branch `Feature/X` stays so); a branch
    // review's title is its branch, said once.
    let subject = match (&report.task_id, &report.defect) {
        (Some(id), _) => format!("task {id}"),
        (None, Some(defect)) => format!("defect {}", defect.name),
        (None, None) => format!("branch {}", report.branch),
    };
    let title = report.title.as_deref().unwrap_or(&report.branch);
    if report.task_id.is_none() && report.defect.is_none() && title == report.branch {
        let _ = writeln!(out, "\nReviewing branch {}", style.bold(title));
    } else {
        let _ = writeln!(out, "\nReviewing {subject}: {}", style.bold(title));
    }
    if !report.head_commit.is_empty() {
        let prompt = match report.coverage.parts {
            0 | 1 => format!(
                "prompt {} / {} tokens",
                thousands(report.tokens.prompt_counted as u64),
                thousands(report.tokens.budget as u64)
            ),
            parts => format!(
                "{parts} prompts, {} tokens in all, each within {}",
                thousands(report.tokens.prompt_counted as u64),
                thousands(report.tokens.budget as u64)
            ),
        };
        let _ = writeln!(
            out,
            "  {} {}..{}  {prompt}",
            report.branch,
            short(&report.base_commit),
            short(&report.head_commit),
        );
    }
    for line in coverage_line(report, style)
        .into_iter()
        .chain(cost_line(report))
    {
        let _ = writeln!(out, "{line}");
    }
    out
}

/// A failed review in parts: which part failed, and which answered.
fn part_failures(report: &Report, style: &Style) -> String {
    let mut out = String::new();
    if !report.parts.iter().any(|p| p.error.is_some()) {
        return out;
    }
    let of = report.parts.len();
    for p in &report.parts {
        let _ = match &p.error {
            Some(why) => writeln!(
                out,
                "  {} part {} of {of}: {}",
                style.red("✗"),
                p.index,
                clip(why, TEXT)
            ),
            None => writeln!(
                out,
                "  {} part {} of {of}: answered (kept in the report)",
                style.green("✓"),
                p.index
            ),
        };
    }
    out
}

/// The model's citations speed could not find.
fn citations_nowhere(report: &Report, style: &Style) -> String {
    let mut out = String::new();
    let nowhere: Vec<_> = report.evidence.iter().filter(|c| !c.found).collect();
    if nowhere.is_empty() {
        return out;
    }
    let _ = writeln!(out, "\n  Citations that point nowhere:");
    for c in nowhere.iter().take(LISTED) {
        let _ = writeln!(
            out,
            "    {} {} ({}): {}",
            style.yellow("?"),
            clip(&c.reference, 200),
            c.from,
            c.problem.as_deref().unwrap_or("not found")
        );
    }
    more(&mut out, nowhere.len());
    out
}

/// Each answer that contradicted itself, and what the model said when
/// asked once more.
fn reconcile_lines(report: &Report, style: &Style) -> String {
    let mut out = String::new();
    for line in report.reconciled() {
        let _ = writeln!(
            out,
            "\n  {} {}",
            style.yellow("Asked again:"),
            clip(&line, TEXT)
        );
    }
    out
}

/// What the model said, and each rule by which speed decided otherwise.
fn overrule_lines(report: &Report, style: &Style) -> String {
    let mut out = String::new();
    if report.overrules.is_empty() {
        return out;
    }
    let model = report
        .model_verdict
        .map(|k| k.as_str().to_string())
        .unwrap_or_default();
    let _ = writeln!(
        out,
        "\n  {} the model said {model}; speed decided otherwise:",
        style.yellow("Overruled:")
    );
    for o in report.overrules.iter().take(LISTED) {
        let _ = writeln!(out, "    - {} ({})", clip(&o.reason, TEXT), o.rule.as_str());
    }
    more(&mut out, report.overrules.len());
    out
}

/// The scores, a failed dimension in red.
fn score_block(report: &Report, style: &Style) -> String {
    let mut out = String::new();
    let Some(scores) = &report.scores else {
        return out;
    };
    let lines = super::score_lines(scores);
    let _ = writeln!(out, "\n  {}", lines[0]);
    for line in &lines[1..] {
        let painted = if line.starts_with('✗') {
            style.red(line)
        } else {
            line.clone()
        };
        let _ = writeln!(out, "    {painted}");
    }
    out
}

/// The verdict, the guardian, what became of the task and where the report is.
fn outcome(report: &Report, style: &Style) -> String {
    let mut out = String::new();
    let _ = writeln!(out);
    let _ = writeln!(out, "{}", verdict_line(report, style));
    if let Some(line) = guardian_line(report, style) {
        let _ = writeln!(out, "{line}");
    }
    if let Some(state) = report.defect.as_ref().and_then(|d| d.state.as_ref()) {
        let before = report
            .defect
            .as_ref()
            .and_then(|d| d.status.as_deref())
            .unwrap_or("-");
        let line = if before == state {
            format!("  state.json: {state} (unchanged)")
        } else {
            format!("  state.json: {before} → {state}")
        };
        let _ = writeln!(out, "{line}");
    }
    if let Some(line) = super::human_review_line(report) {
        let _ = writeln!(out, "  {}", style.yellow(&line));
    }
    if let Some(line) = task_line(report) {
        let _ = writeln!(out, "  {line}");
    }
    if let Some(path) = &report.report_path {
        let summary = report
            .summary_path
            .as_ref()
            .map(|s| format!(" (summary: {s})"))
            .unwrap_or_default();
        let _ = writeln!(out, "  {}", style.dim(&format!("report: {path}{summary}")));
    }
    out
}

/// What the model expected from the spec, each requirement it verified
/// (with whether speed found its quote), and what it says is missing.
fn spec_lines(report: &Report, review: &verdict::Verdict, style: &Style) -> String {
    let mut out = String::new();
    if !review.expectations.trim().is_empty() {
        let _ = writeln!(
            out,
            "\n  Expected from the spec: {}",
            review.expectations.trim()
        );
    }
    if !report.quotes.is_empty() {
        let _ = writeln!(out, "\n  Spec verification:");
        for (check, quote) in review
            .spec_verification
            .iter()
            .zip(&report.quotes)
            .take(LISTED)
        {
            let mark = match (quote.found, check.satisfied) {
                (false, _) => style.red(&format!("✗ {}", quote.refusal())),
                (true, true) => style.green("✓"),
                (true, false) => style.red("✗"),
            };
            let place = match (&quote.section, quote.line, quote.vision) {
                (Some(section), Some(line), true) => {
                    format!(" (product vision: {section}, line {line})")
                }
                (Some(section), Some(line), false) => format!(" ({section}, line {line})"),
                _ => String::new(),
            };
            let _ = writeln!(
                out,
                "    {mark} \"{}\"{place}",
                clip(&check.spec_quote, 160)
            );
            if !check.evidence.is_empty() {
                let _ = writeln!(out, "      {}", style.dim(&clip(&check.evidence, TEXT)));
            }
        }
        more(&mut out, review.spec_verification.len());
    }
    if !review.missing_from_spec.is_empty() {
        let _ = writeln!(out, "\n  Missing from the implementation:");
        for m in review.missing_from_spec.iter().take(LISTED) {
            let _ = writeln!(
                out,
                "    - \"{}\": {}",
                clip(&m.spec_quote, 160),
                clip(&m.description, TEXT)
            );
        }
        more(&mut out, review.missing_from_spec.len());
    }
    out
}

/// The criteria not confirmed, code out of scope and blocking issues.
fn finding_lines(review: &verdict::Verdict, style: &Style) -> String {
    let mut out = String::new();
    let unmet: Vec<_> = review
        .criteria
        .iter()
        .filter(|c| c.status != verdict::CriterionStatus::Met)
        .collect();
    if !unmet.is_empty() {
        let _ = writeln!(out, "\n  Criteria not confirmed:");
        for c in unmet.iter().take(LISTED) {
            let _ = writeln!(
                out,
                "    {} {}: {}",
                clip(&c.id, 40),
                c.status.as_str(),
                clip(&c.evidence, TEXT)
            );
        }
        more(&mut out, unmet.len());
    }
    if !review.out_of_scope.is_empty() {
        let _ = writeln!(out, "\n  Out of scope:");
        for o in review.out_of_scope.iter().take(LISTED) {
            let _ = writeln!(
                out,
                "    {} — {}",
                clip(&place(Some(&o.file), o.line, o.end_line), 200),
                clip(&o.description, TEXT)
            );
        }
        more(&mut out, review.out_of_scope.len());
    }
    let blocking: Vec<_> = review
        .issues
        .iter()
        .filter(|i| matches!(i.severity, Severity::Critical | Severity::Major))
        .collect();
    if !blocking.is_empty() {
        let _ = writeln!(out, "\n  Issues:");
        for issue in blocking.iter().take(LISTED) {
            let sev = style.red(&format!("[{}]", issue.severity.as_str()));
            let _ = writeln!(
                out,
                "    {sev} {} — {}",
                clip(&place(issue.file.as_ref(), issue.line, issue.end_line), 200),
                clip(&issue.message, TEXT)
            );
            if !issue.suggestion.is_empty() {
                let _ = writeln!(out, "      fix: {}", clip(&issue.suggestion, TEXT));
            }
        }
        more(&mut out, blocking.len());
    }
    out
}

/// What speed established about a defect fix, beside what the review said.
fn defect(block: &crate::ledger::report::DefectBlock, style: &Style) -> String {
    let mut out = String::new();
    let mut about: Vec<String> = Vec::new();
    about.extend(block.severity.clone());
    about.extend(block.complexity.clone());
    if let Some(status) = &block.status {
        about.push(format!("status {status}"));
    }
    let _ = writeln!(
        out,
        "\n  Defect {}{}",
        block.name,
        if about.is_empty() {
            String::new()
        } else {
            format!(" ({})", about.join(", "))
        }
    );
    if let Some(found) = &block.speed {
        let scope = match found.scope_violations.len() {
            0 => style.green("every changed path is in the triage's affected files"),
            n => style.red(&format!(
                "{n} changed path{} outside the triage's affected files",
                if n == 1 { "" } else { "s" }
            )),
        };
        let _ = writeln!(out, "    speed   scope: {scope}");
        for v in &found.scope_violations {
            let _ = writeln!(out, "              {} ({})", v.file, v.change);
        }
        let size = found.size.describe();
        let _ = writeln!(
            out,
            "            size: {}",
            if found.size.large {
                style.yellow(&format!("{size}: large for a fix"))
            } else {
                size
            }
        );
        if let Some(err) = &found.history_error {
            let _ = writeln!(
                out,
                "            test: {}",
                style.yellow(&format!("not checked ({err})"))
            );
        } else if !found.test_changes.is_empty() {
            for c in &found.test_changes {
                let _ = writeln!(out, "            test: {}", style.red(&c.description));
            }
        } else if found.reproducing_tests.is_empty() {
            let _ = writeln!(
                out,
                "            test: no reproducing test in an earlier commit"
            );
        } else {
            for t in &found.reproducing_tests {
                let _ = writeln!(
                    out,
                    "            test: {} unchanged since {}",
                    t.path,
                    t.commit.describe()
                );
            }
        }
    }
    if let Some(model) = &block.model {
        let check = match model.defect_scope_check {
            Some(c) => format!("scope_ok {}, large_diff {}", c.scope_ok, c.large_diff),
            None => "no defect_scope_check".to_string(),
        };
        let _ = writeln!(
            out,
            "    review  {check}, {} scope violation{}",
            model.scope_violations.len(),
            if model.scope_violations.len() == 1 {
                ""
            } else {
                "s"
            }
        );
        for v in &model.scope_violations {
            let _ = writeln!(out, "              {} — {}", v.file, v.description);
        }
    }
    out
}

/// How much of the diff the model saw: always said, and marked when code
/// went unseen.
fn coverage_line(report: &Report, style: &Style) -> Option<String> {
    Some(match super::coverage::review(report)? {
        (sentence, true) => format!("  {sentence}"),
        (sentence, false) => format!("  {} {sentence}", style.yellow("!")),
    })
}

/// Changed symbols shown in the terminal; the report file lists them all.
const IMPACT_ROWS: usize = 5;

/// The riskiest changed symbols that something depends on, breaking ones
/// marked: the report's `impact` is already ranked by risk.
fn blast_radius(impact: &serde_json::Value, style: &Style) -> Option<String> {
    let symbols = impact.as_array().filter(|s| !s.is_empty())?;
    let breaking = symbols.iter().filter(|s| s["breaking"] == true).count();
    let reached: Vec<&serde_json::Value> = symbols
        .iter()
        .filter(|s| s["breaking"] == true || s["dependents"]["symbols"].as_u64() > Some(0))
        .collect();
    let mut out = format!(
        "\n  Blast radius: {} changed symbol{}, {}",
        symbols.len(),
        if symbols.len() == 1 { "" } else { "s" },
        match (breaking, reached.len()) {
            (0, 0) => "none used elsewhere".to_string(),
            (0, _) => "none breaking".to_string(),
            (n, _) => style.red(&format!("{n} breaking")),
        }
    );
    out.push('\n');
    for s in reached.iter().take(IMPACT_ROWS) {
        let text = |key: &str| s[key].as_str().unwrap_or_default().to_string();
        let place = match s["renamed_to"].as_str() {
            Some(to) => format!("{} → {to}", text("file")),
            None => format!("{}:{}", text("file"), s["line"]),
        };
        let files = s["dependents"]["files"].as_array().map_or(0, Vec::len);
        let dependents = s["dependents"]["symbols"].as_u64().unwrap_or(0);
        let mark = if s["breaking"] == true {
            style.red("!")
        } else {
            " ".to_string()
        };
        let _ = writeln!(
            out,
            "    {mark} {} ({place}) {}: {dependents} dependent{} in {files} file{} ({})",
            text("symbol"),
            text("change").replace('_', " "),
            if dependents == 1 { "" } else { "s" },
            if files == 1 { "" } else { "s" },
            text("stability"),
        );
    }
    // The rows shown and the rest add up to the changed symbols, and the
    // breaking ones marked and the rest's to the breaking count.
    let shown = reached.len().min(IMPACT_ROWS);
    let rest = symbols.len() - shown;
    if rest > 0 {
        let rest_breaking = reached[shown..]
            .iter()
            .filter(|s| s["breaking"] == true)
            .count();
        let rest_used = reached.len() - shown - rest_breaking;
        let unused = symbols.len() - reached.len();
        let mut parts = Vec::new();
        if rest_breaking > 0 {
            parts.push(format!("{rest_breaking} breaking"));
        }
        if rest_used > 0 {
            let other = match (rest_breaking, rest_used) {
                (0, _) => "",
                (_, 1) => " other",
                _ => " others",
            };
            parts.push(format!("{rest_used}{other} used elsewhere"));
        }
        if unused > 0 {
            parts.push(format!("{unused} used nowhere"));
        }
        let _ = writeln!(
            out,
            "      {}",
            style.dim(&format!(
                "…and {rest} more in the report: {}",
                parts.join(", ")
            ))
        );
    }
    Some(out)
}

/// The command checks as they ran, on one line:
/// `checks: ruff ✓ 0.4 s · pytest ✗ 1.2 s, 2 findings`.
fn checks_run(runs: &[crate::checks::CheckRun], style: &Style) -> String {
    if runs.is_empty() {
        return String::new();
    }
    let each: Vec<String> = runs
        .iter()
        .map(|run| {
            let (mark, words) = super::check_run_words(run);
            let mark = match run.outcome {
                crate::checks::RunOutcome::Passed => style.green(mark),
                crate::checks::RunOutcome::Skipped => style.yellow(mark),
                _ => style.red(mark),
            };
            format!("{} {mark} {words}", clip(&run.name, 60))
        })
        .collect();
    format!("  checks: {}\n", each.join(" · "))
}

/// speed's own checks, worst first; a command's output tail indented.
pub(super) fn checks(findings: &[crate::checks::Finding], style: &Style) -> String {
    let mut out = String::new();
    if findings.is_empty() {
        return out;
    }
    let _ = writeln!(out, "\n  speed's checks:");
    for f in findings {
        let mark = if f.blocking() {
            style.red(&format!("✗ {}", f.severity.as_str()))
        } else {
            style.yellow(&format!("! {}", f.severity.as_str()))
        };
        let at = f.location().map(|l| format!(" {l}")).unwrap_or_default();
        let text = f.text();
        let mut lines = text.lines();
        let _ = writeln!(
            out,
            "    {mark} {}{at}: {}",
            f.check,
            lines.next().unwrap_or("")
        );
        for line in lines {
            let _ = writeln!(out, "        {}", style.dim(line));
        }
    }
    out
}

fn verdict_line(report: &Report, style: &Style) -> String {
    let who = who(report);
    let offline = report.model.provider == "none";
    match (report.outcome, report.verdict) {
        (Outcome::Approved, Some(verdict::Kind::ChecksPassed)) => style.green(&format!(
            "✓ {who}: speed's checks passed (offline: no model compared the work with the spec; nothing was approved)"
        )),
        (Outcome::ChangesRequested, _) if offline => {
            style.red(&format!("✗ {who}: changes requested by speed's checks (offline)"))
        }
        (Outcome::Approved, _) => style.green(&format!("✓ {who}: approved by the reviewer")),
        (Outcome::ChangesRequested, Some(verdict::Kind::Approve))
            if report
                .human_review
                .as_ref()
                .is_some_and(|h| h.status == "rejected") =>
        {
            let by = report.human_review.as_ref().map_or("", |h| h.by.as_str());
            style.red(&format!(
                "✗ {who}: rejected by {by} (the model approved; a person's word decides)"
            ))
        }
        (Outcome::ChangesRequested, _) => {
            use crate::ledger::report::RejectedKind;
            let judged = report.judge_rejection();
            let text = match judged.as_ref().map(|r| (r.kind, r)) {
                Some((RejectedKind::Plan, r)) => format!(
                    "✗ {who}: {} (the reviewer rejected the task's plan: {})",
                    r.headline(),
                    r.reason
                ),
                Some((RejectedKind::NothingImplemented, r)) => format!(
                    "✗ {who}: {} ({}; no model was asked)",
                    r.headline(),
                    r.reason
                ),
                _ if report.overrules.is_empty() => {
                    format!("✗ {who}: changes requested by the reviewer")
                }
                _ => format!("✗ {who}: changes requested by speed (overruled the model)"),
            };
            style.red(&text)
        }
        (_, _) => style.red(&format!(
            "✗ {who}: review failed: {}",
            report.error.as_deref().unwrap_or("unknown error")
        )),
    }
}

/// What the review did to the task file: approved (and done), back to
/// pending with its findings (or to the planner), or failed past the
/// revision limit. One line, whatever the verdict: an approval never reads
/// as a task sent back.
fn task_line(report: &Report) -> Option<String> {
    let update = report.task_update.as_ref()?;
    let subject = super::report_subject(report);
    let person_rejected = report
        .human_review
        .as_ref()
        .is_some_and(|h| h.status == "rejected");
    if report.verdict == Some(verdict::Kind::Approve) && !person_rejected {
        let waits = report.human_review.as_ref().is_some_and(|h| h.is_pending());
        let subject = if waits {
            format!("{subject}: the model's approval waits for a person;")
        } else {
            format!("{subject} is approved;")
        };
        return Some(match update.was.as_str() {
            was if !was.is_empty() && was != update.status => format!(
                "→ {subject} its status is now {} (was {was})",
                update.status
            ),
            _ => format!("→ {subject} its status stays {}", update.status),
        });
    }
    let revision = if update.new_revision || update.revision_count == 0 {
        format!("revision {}", update.revision_count)
    } else {
        format!(
            "revision {} still: the last rejection judged this commit too",
            update.revision_count
        )
    };
    let plan = report
        .judge_rejection()
        .filter(|r| r.kind == crate::ledger::report::RejectedKind::Plan);
    Some(match (update.status.as_str(), plan) {
        ("failed", _) => format!(
            "→ {subject} failed: {}",
            update
                .error
                .as_deref()
                .unwrap_or("past review.max_revisions")
        ),
        ("pending", Some(_)) => {
            format!(
                "→ {subject}: the plan is wrong: re-plan; the task is back to pending ({revision})"
            )
        }
        ("pending", None) => {
            let findings = findings::of(report).len();
            format!(
                "→ {subject} is back to pending with {} ({revision})",
                super::plural(findings, "finding")
            )
        }
        (status, _) => format!("→ {subject} is now {status}"),
    })
}

fn guardian_line(report: &Report, style: &Style) -> Option<String> {
    let g = &report.guardian;
    let line = match g.status.as_str() {
        "not_run" => return None,
        "skipped" => style.dim(&format!(
            "- Guardian: skipped ({})",
            g.reason.as_deref().unwrap_or("disabled")
        )),
        "aligned" => style.green(&format!("✓ Guardian: ALIGNED — {}", g.summary)),
        "flagged" => {
            let mut s = style.yellow(&format!("! Guardian: FLAGGED — {}", g.summary));
            for f in &g.flags {
                s.push_str(&format!(
                    "\n    [{}] {}",
                    f.severity.as_str(),
                    f.description
                ));
                if !f.spec_reference.is_empty() {
                    s.push_str(&format!(" ({})", f.spec_reference));
                }
            }
            s
        }
        "rejected" => {
            let mut s = style.red(&format!("✗ Guardian: REJECTED — {}", g.summary));
            for f in &g.flags {
                s.push_str(&format!(
                    "\n    [{}] {}",
                    f.severity.as_str(),
                    f.description
                ));
            }
            s
        }
        _ => style.red(&format!(
            "✗ Guardian: UNAVAILABLE — {}",
            g.reason.as_deref().unwrap_or("no answer")
        )),
    };
    // What it saw, like the review's coverage: marked when it saw less
    // than the whole diff.
    let seen = match super::coverage::guardian(report) {
        Some((sentence, true)) => format!("\n  {sentence}"),
        Some((sentence, false)) => format!("\n  {} {sentence}", style.yellow("!")),
        None => String::new(),
    };
    Some(line + &seen)
}

/// What the review cost and the tokens it was priced on; without prices,
/// the tokens alone (a provider that reports no usage: speed's count).
fn cost_line(report: &Report) -> Option<String> {
    let t = &report.tokens;
    let cached = match t.cache_read {
        0 => String::new(),
        n => format!(", {} read from the cache", thousands(n)),
    };
    let figures = format!(
        "{}{cached}{}",
        super::tokens_in_out(t.prompt, t.completion, false),
        if t.by_speed() {
            super::COUNTED_BY_SPEED
        } else {
            ""
        }
    );
    match report.cost {
        Some(cost) => Some(format!("  cost {:.4} for {figures}", cost.total)),
        None if t.by_speed() => Some(format!("  tokens {figures}")),
        None => None,
    }
}

/// The table printed after a batch.
pub fn summary(reports: &[Report], skipped: &[Skipped], style: &Style) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "\n{}", style.bold("Summary"));
    let rows: Vec<[String; 6]> = reports
        .iter()
        .map(|r| {
            [
                super::report_subject(r),
                match r.outcome {
                    Outcome::Approved if r.verdict == Some(verdict::Kind::ChecksPassed) => {
                        "checks passed".to_string()
                    }
                    Outcome::Approved
                        if r.human_review.as_ref().is_some_and(|h| h.is_pending()) =>
                    {
                        "approved, waiting for a person".to_string()
                    }
                    Outcome::Approved => "approved".to_string(),
                    Outcome::ChangesRequested => r
                        .judge_rejection()
                        .map_or("changes requested", |j| j.headline())
                        .to_string(),
                    Outcome::Blocked => "blocked".to_string(),
                    Outcome::ModelUnreachable => "model unreachable".to_string(),
                    Outcome::InvalidOutput => "invalid output".to_string(),
                    Outcome::Submitted => "pending in a batch".to_string(),
                    Outcome::Error | Outcome::Usage => "error".to_string(),
                },
                r.task_update
                    .as_ref()
                    .map_or_else(|| "-".to_string(), |u| u.status.clone()),
                r.guardian.status.replace("not_run", "-"),
                match r.tokens.by_speed() {
                    true => format!(
                        "{} (counted)",
                        thousands(r.tokens.prompt + r.tokens.completion)
                    ),
                    false => thousands(r.tokens.prompt + r.tokens.completion),
                },
                format!("{:.1}s", r.duration_ms as f64 / 1000.0),
            ]
        })
        .collect();
    let header = ["task", "verdict", "task now", "guardian", "tokens", "time"];
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |cells: &[String]| {
        cells
            .iter()
            .zip(&widths)
            .map(|(c, w)| format!("{c:<w$}"))
            .collect::<Vec<_>>()
            .join("  ")
            .trim_end()
            .to_string()
    };
    let header: Vec<String> = header.iter().map(|h| h.to_string()).collect();
    let _ = writeln!(out, "  {}", line(&header));
    for row in &rows {
        let _ = writeln!(out, "  {}", line(row));
    }
    for s in skipped {
        // A merged task's reason says what it is; others were skipped.
        let skipped = if s.merged { "" } else { "skipped, " };
        let _ = writeln!(
            out,
            "  {}",
            style.dim(&format!(
                "{}: {skipped}{}",
                super::skipped_subject(s),
                s.reason
            ))
        );
    }
    let approved = reports
        .iter()
        .filter(|r| r.outcome == Outcome::Approved)
        .count();
    let changes = reports
        .iter()
        .filter(|r| r.outcome == Outcome::ChangesRequested)
        .count();
    let failed = reports.len() - approved - changes;
    let _ = writeln!(
        out,
        "  {} reviewed: {approved} approved, {changes} changes requested, {failed} failed",
        reports.len()
    );
    let mut rules: Vec<(verdict::Rule, usize)> = Vec::new();
    for o in reports.iter().flat_map(|r| &r.overrules) {
        match rules.iter_mut().find(|(rule, _)| *rule == o.rule) {
            Some((_, n)) => *n += 1,
            None => rules.push((o.rule, 1)),
        }
    }
    if !rules.is_empty() {
        rules.sort();
        let counts: Vec<String> = rules
            .iter()
            .map(|(rule, n)| format!("{} {n}", rule.as_str()))
            .collect();
        let _ = writeln!(out, "  overruled: {}", counts.join(", "));
    }
    out
}

/// `feature/3: [nit] path:line — message`, one per line.
pub fn nits(nits: &[Nit], style: &Style) -> String {
    let mut out = String::new();
    if nits.is_empty() {
        return out;
    }
    let _ = writeln!(
        out,
        "\n{}",
        style.bold("Nits (non-blocking, from approved reviews):")
    );
    for nit in nits {
        let who = match &nit.defect {
            Some(name) => format!("defect {name}"),
            None => super::subject(nit.task_id.as_deref(), nit.feature.as_deref(), &nit.branch),
        };
        let _ = writeln!(
            out,
            "  {who}: [{}] {} — {}",
            nit.severity,
            place(nit.file.as_ref(), nit.line, None),
            nit.message
        );
    }
    out
}

fn place(file: Option<&String>, line: Option<u64>, end_line: Option<u64>) -> String {
    match (file, line, end_line) {
        (Some(f), Some(l), Some(e)) if !f.is_empty() && e != l => format!("{f}:{l}-{e}"),
        (Some(f), Some(l), _) if !f.is_empty() => format!("{f}:{l}"),
        (Some(f), None, _) if !f.is_empty() => f.clone(),
        _ => "(no file)".to_string(),
    }
}

/// Entries a list of the report shows; the report file keeps them all.
const LISTED: usize = 25;

/// Characters of one entry's text shown.
const TEXT: usize = 400;

/// The line standing for what a list did not show.
fn more(out: &mut String, total: usize) {
    if total > LISTED {
        let _ = writeln!(out, "    …and {} more in the report", total - LISTED);
    }
}

fn clip(text: &str, max: usize) -> String {
    let one_line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if one_line.chars().count() <= max {
        one_line
    } else {
        one_line.chars().take(max).collect::<String>() + "…"
    }
}
