//! What one decided review says about the fix queue: the findings that
//! become fixes (a request for changes: its blocking check findings, the
//! model's critical and major issues, unmet criteria, unsatisfied or
//! missing spec requirements; an approval: its nits), the findings that
//! only keep an existing fix alive (the same finding, no longer blocking),
//! and which sources the review judged at all, so a fix is resolved only
//! by a review that could have found it again.

use std::collections::HashSet;

use crate::checks::{self, Category};
use crate::ledger::Report;
use crate::severity::Severity;
use crate::verdict::{CriterionStatus, Kind};

use super::model::{self, Found, Source, words};

/// A finding of the review, ready to be a fix.
#[derive(Debug, Clone)]
pub struct Candidate {
    pub source: Source,
    pub found: Found,
    pub fingerprint: String,
    pub priority: u32,
    pub description: String,
    /// A new fix is made of it (otherwise it only keeps an existing one).
    pub create: bool,
}

/// What the review could have found again.
#[derive(Debug, Clone, Default)]
pub struct Judged {
    /// Checks that ran to their end.
    pub checks: HashSet<String>,
    /// The model answered (so its issues, criteria and nits were judged).
    pub model: bool,
    /// The review rated a person's reason (a previous finding of theirs).
    pub person: bool,
    /// The review approved.
    pub approved: bool,
}

impl Judged {
    pub fn covers(&self, source: Source, check: Option<&str>) -> bool {
        match source {
            Source::Check => check.is_some_and(|c| self.checks.contains(c)),
            Source::Model | Source::Criterion | Source::Nit => self.model,
            // The plan stands rejected until a review approves the work
            // (as the task's `replan` does); a person's reason until a
            // review rates it.
            Source::Plan => self.approved,
            Source::Person => self.person,
        }
    }
}

/// The candidates of a decided review, and what it judged. A rejection of
/// the plan is one fix for the planner: the model's findings of that
/// review then keep existing fixes alive but make no coding fix (the work
/// follows a plan that is to change).
pub fn of(report: &Report, config: &checks::Config) -> (Vec<Candidate>, Judged) {
    let changes = report.verdict == Some(Kind::RequestChanges);
    let approved = report.verdict == Some(Kind::Approve);
    let replan = report.replan();
    let coding = changes && replan.is_none();
    let mut out: Vec<Candidate> = report
        .checks
        .iter()
        .map(|f| check(f, config, changes && f.blocking()))
        .collect();
    out.extend(replan.map(|reason| plan(&reason)));
    out.extend(people(report, changes));
    if let Some(review) = &report.review {
        out.extend(review.issues.iter().map(|i| issue(i, coding, approved)));
        out.extend(criteria(review, coding));
        out.extend(requirements(review, coding));
    }
    out.extend(report.guardian.flags.iter().map(|f| flag(f, approved)));
    // One candidate per finding: the same requirement named as unsatisfied
    // and as missing, or an issue repeated, is one fix.
    let mut unique: Vec<Candidate> = Vec::with_capacity(out.len());
    for candidate in out {
        match unique
            .iter_mut()
            .find(|c| c.fingerprint == candidate.fingerprint)
        {
            Some(kept) => kept.create |= candidate.create,
            None => unique.push(candidate),
        }
    }
    (unique, judged(report, config))
}

/// A review's rejection of the task's plan: the planner's, first.
fn plan(reason: &str) -> Candidate {
    let found = Found {
        kind: "plan/rejection".to_string(),
        check: None,
        category: None,
        severity: Severity::Major,
        file: None,
        line: None,
        column: None,
        rule: None,
        message: reason.to_string(),
        suggestion: None,
        command: None,
    };
    Candidate {
        source: Source::Plan,
        // One per task: the latest reason replaces the last.
        fingerprint: "plan".to_string(),
        priority: 1,
        description: format!("The plan is wrong: re-plan the task: {}", found.headline()),
        found,
        create: true,
    }
}

/// A person's reason (`speed reject`), made a fix when they rejected and
/// kept alive while a review finds it unresolved.
pub fn person(reason: &str, by: &str, create: bool) -> Candidate {
    let found = Found {
        kind: "person/rejection".to_string(),
        check: None,
        category: None,
        severity: Severity::Major,
        file: None,
        line: None,
        column: None,
        rule: Some(format!("rejected by {by}")),
        message: reason.trim().to_string(),
        suggestion: None,
        command: None,
    };
    Candidate {
        source: Source::Person,
        fingerprint: format!("person\0{}", words(reason)),
        priority: 2,
        description: format!("Answer {by}'s rejection: {}", found.headline()),
        found,
        create,
    }
}

/// The people's reasons the review rated: unresolved, they stay fixes.
fn people(report: &Report, changes: bool) -> Vec<Candidate> {
    report
        .previous_findings
        .iter()
        .filter(|p| {
            p.source == crate::verdict::previous::Source::Person
                && p.status == crate::verdict::PreviousStatus::Unresolved
        })
        .map(|p| person(&p.message, p.by.as_deref().unwrap_or("a person"), changes))
        .collect()
}

/// A model's issue: a fix when it blocks, a nit when it does not.
fn issue(issue: &crate::verdict::Issue, changes: bool, approved: bool) -> Candidate {
    let found = Found {
        kind: format!("review/{}", issue.severity.as_str()),
        check: None,
        category: None,
        severity: issue.severity,
        file: issue.file.clone(),
        line: issue.line,
        column: None,
        rule: None,
        message: issue.message.clone(),
        suggestion: Some(issue.suggestion.clone()).filter(|s| !s.trim().is_empty()),
        command: None,
    };
    let file = found.file.clone().unwrap_or_default();
    if issue.severity.is_blocking() {
        let priority = if issue.severity == Severity::Critical {
            1
        } else {
            2
        };
        let description = format!(
            "Fix the reviewer's {} issue{}: {}",
            issue.severity.as_str(),
            at(&found),
            found.headline()
        );
        return Candidate {
            source: Source::Model,
            fingerprint: format!("model\0{file}\0{}", words(&issue.message)),
            found,
            priority,
            description,
            create: changes,
        };
    }
    let description = format!("Nit{}: {}", at(&found), found.headline());
    Candidate {
        source: Source::Nit,
        fingerprint: format!("nit\0{file}\0{}", words(&issue.message)),
        priority: model::priority(5, issue.severity),
        found: Found {
            kind: "nit/review".to_string(),
            ..found
        },
        description,
        create: approved,
    }
}

/// The criteria the review found unmet.
fn criteria(review: &crate::verdict::Verdict, changes: bool) -> Vec<Candidate> {
    review
        .criteria
        .iter()
        .filter(|c| c.status == CriterionStatus::Unmet)
        .map(|c| {
            let found = Found {
                kind: format!("criterion/{}", c.id),
                check: None,
                category: None,
                severity: Severity::Major,
                file: None,
                line: None,
                column: None,
                rule: Some(c.id.clone()),
                message: if c.evidence.trim().is_empty() {
                    format!("{} is unmet", c.id)
                } else {
                    format!("{} is unmet: {}", c.id, c.evidence.trim())
                },
                suggestion: None,
                command: None,
            };
            Candidate {
                source: Source::Criterion,
                fingerprint: format!("criterion\0{}", c.id),
                priority: 3,
                description: format!("Meet acceptance criterion {}: {}", c.id, found.headline()),
                found,
                create: changes,
            }
        })
        .collect()
}

/// The spec requirements the review found unsatisfied or missing, matched
/// by their quote (the spec's own words, stable across reviews).
fn requirements(review: &crate::verdict::Verdict, changes: bool) -> Vec<Candidate> {
    let unsatisfied = review
        .spec_verification
        .iter()
        .filter(|s| !s.satisfied)
        .map(|s| {
            (
                "review/unsatisfied-requirement",
                &s.spec_quote,
                [&s.notes, &s.evidence],
            )
        });
    let missing = review.missing_from_spec.iter().map(|m| {
        (
            "review/missing-from-spec",
            &m.spec_quote,
            [&m.description, &m.description],
        )
    });
    let mut out = Vec::new();
    for (kind, quote, [why, more]) in unsatisfied.chain(missing) {
        let quote = quote.trim();
        let why = [why.trim(), more.trim()]
            .into_iter()
            .find(|w| !w.is_empty())
            .unwrap_or("");
        let message = match (quote.is_empty(), why.is_empty()) {
            (false, false) => format!("\"{quote}\": {why}"),
            (false, true) => format!("\"{quote}\" is not implemented"),
            (true, _) => why.to_string(),
        };
        if message.is_empty() {
            continue;
        }
        let key = if quote.is_empty() { why } else { quote };
        let found = Found {
            kind: kind.to_string(),
            check: None,
            category: None,
            severity: Severity::Major,
            file: None,
            line: None,
            column: None,
            rule: None,
            message,
            suggestion: None,
            command: None,
        };
        out.push(Candidate {
            source: Source::Model,
            fingerprint: format!("spec\0{}", words(key)),
            priority: 3,
            description: format!("Implement the spec: {}", found.headline()),
            found,
            create: changes,
        });
    }
    out
}

/// A guardian's flag of an approval: a nit.
fn flag(flag: &crate::verdict::Flag, approved: bool) -> Candidate {
    let message = if flag.spec_reference.trim().is_empty() {
        flag.description.trim().to_string()
    } else {
        format!(
            "{} ({})",
            flag.description.trim(),
            flag.spec_reference.trim()
        )
    };
    let found = Found {
        kind: "nit/guardian".to_string(),
        check: None,
        category: None,
        severity: flag.severity,
        file: None,
        line: None,
        column: None,
        rule: None,
        message,
        suggestion: None,
        command: None,
    };
    Candidate {
        source: Source::Nit,
        fingerprint: format!("nit\0\0{}", words(&flag.description)),
        priority: model::priority(5, flag.severity),
        description: format!("Guardian's concern: {}", found.headline()),
        found,
        create: approved,
    }
}

/// A check finding as a candidate.
fn check(f: &checks::Finding, config: &checks::Config, create: bool) -> Candidate {
    let command = config.commands.iter().find(|c| c.name == f.check);
    let category = f
        .category
        .or(command.and_then(|c| c.tool.category))
        .or_else(|| {
            command
                .is_none()
                .then(|| model::builtin_category(&f.check))
                .flatten()
        });
    let base = match command {
        Some(c) => c.tool.priority(),
        None => category.map_or(checks::tool::DEFAULT_PRIORITY, Category::default_priority),
    };
    let found = Found {
        kind: format!("check/{}", f.check),
        check: Some(f.check.clone()),
        category,
        severity: f.severity,
        file: f.file.clone(),
        line: f.line.map(u64::from),
        column: f.column.map(u64::from),
        rule: f.rule.clone(),
        message: f.message.clone(),
        suggestion: None,
        command: command.map(|c| c.run.clone()),
    };
    let what = match (category, &f.rule) {
        (Some(c), Some(rule)) => format!("{} {} ({rule})", f.check, c.as_str()),
        (Some(c), None) => format!("{} {}", f.check, c.as_str()),
        (None, Some(rule)) => format!("{} ({rule})", f.check),
        (None, None) => f.check.clone(),
    };
    let description = if f.check == "empty_diff" {
        // Not a defect to fix: speed found no work, and says so.
        let why = f
            .message
            .trim()
            .strip_prefix("Nothing was implemented")
            .unwrap_or(&f.message)
            .trim_start_matches([':', ' '])
            .trim_end_matches('.');
        if why.is_empty() {
            "Implement the task: speed found nothing implemented".to_string()
        } else {
            format!("Implement the task: speed found nothing implemented ({why})")
        }
    } else {
        format!(
            "Fix {what} {}{}: {}",
            f.severity.as_str(),
            at(&found),
            found.headline()
        )
    };
    Candidate {
        source: Source::Check,
        fingerprint: fingerprint(f),
        priority: model::priority(base, f.severity),
        description,
        found,
        create,
    }
}

/// What makes a check finding the same one in a later review: its check,
/// rule, file and words, not its line (code above it moves).
pub fn fingerprint(f: &checks::Finding) -> String {
    format!(
        "check\0{}\0{}\0{}\0{}",
        f.check,
        f.rule.as_deref().unwrap_or(""),
        f.file.as_deref().unwrap_or(""),
        words(&f.message)
    )
}

/// The checks a review ran to their end: the built-in ones that are on,
/// and the commands that did not fail as a whole (a finding with no file
/// and no rule is a command that crashed, timed out, or whose output could
/// not be read or was cut: what it did not say proves nothing).
fn judged(report: &Report, config: &checks::Config) -> Judged {
    let mut checks: HashSet<String> = config
        .levels
        .iter()
        .filter(|(_, level)| level.is_some())
        .map(|(check, _)| check.name().to_string())
        .collect();
    for command in &config.commands {
        let whole = report
            .checks
            .iter()
            .any(|f| f.check == command.name && f.file.is_none() && f.rule.is_none());
        if !whole || command.tool.parser.is_none() {
            checks.insert(command.name.clone());
        }
    }
    Judged {
        checks,
        model: report.review.is_some(),
        person: report
            .previous_findings
            .iter()
            .any(|p| p.source == crate::verdict::previous::Source::Person),
        approved: report.verdict == Some(Kind::Approve),
    }
}

/// " in src/a.rs:3", or nothing.
fn at(found: &Found) -> String {
    found
        .place()
        .map(|p| format!(" in {p}"))
        .unwrap_or_default()
}
