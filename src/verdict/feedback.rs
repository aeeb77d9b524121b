//! The feedback text written into a task for the developer agent's next try:
//! plain text, no colour, stable order, most urgent first. It formats what
//! the verdict and the decision hold; it adds no judgement of its own.

use super::decide::{Decision, located};
use super::schema::{CriterionStatus, GuardianVerdict, Issue, Severity, Verdict};

/// Entries listed per section; a developer acts on the first ones, and the
/// review report keeps them all. Bounds the task file whatever the model
/// wrote.
const LISTED: usize = 25;

/// Characters kept of one entry's text.
const ENTRY_CHARS: usize = 1_000;

/// One entry's text, on one line and bounded.
fn clipped(text: &str) -> String {
    let text = text.trim();
    if text.chars().count() <= ENTRY_CHARS {
        return text.to_string();
    }
    text.chars().take(ENTRY_CHARS).collect::<String>() + "…"
}

/// The line that stands for entries a section did not list.
fn more(s: &mut String, total: usize) {
    if total > LISTED {
        s.push_str(&format!(
            "- …and {} more in the review report\n",
            total - LISTED
        ));
    }
}

/// Blocking issues (critical, then major, the model's and speed's), missing
/// spec items, unmet criteria, minor issues, code out of scope, then nits.
pub fn feedback(verdict: &Verdict, decision: &Decision) -> String {
    let mut all: Vec<&Issue> = verdict
        .issues
        .iter()
        .chain(&decision.added_issues)
        .collect();
    // Stable: issues of one severity keep the model's order, speed's after.
    all.sort_by_key(|i| i.severity);
    let of = |pred: fn(Severity) -> bool| all.iter().copied().filter(move |i| pred(i.severity));

    let mut sections: Vec<String> = Vec::new();

    let blocking: Vec<&Issue> = of(Severity::is_blocking).collect();
    if !blocking.is_empty() {
        sections.push(issue_section(
            "Blocking issues (fix these first):",
            &blocking,
        ));
    }

    if !verdict.missing_from_spec.is_empty() {
        let mut s = String::from("Missing from the spec:\n");
        for m in verdict.missing_from_spec.iter().take(LISTED) {
            let (quote, description) = (clipped(&m.spec_quote), clipped(&m.description));
            match (quote.is_empty(), description.is_empty()) {
                (false, false) => {
                    s.push_str(&format!("- Spec: {quote:?}\n  Missing: {description}\n"))
                }
                (false, true) => s.push_str(&format!("- Spec: {quote:?}\n")),
                (true, _) => s.push_str(&format!("- Missing: {description}\n")),
            }
        }
        more(&mut s, verdict.missing_from_spec.len());
        sections.push(s);
    }

    let unmet: Vec<_> = verdict
        .criteria
        .iter()
        .filter(|c| c.status == CriterionStatus::Unmet)
        .collect();
    if !unmet.is_empty() {
        let mut s = String::from("Unmet acceptance criteria:\n");
        for c in unmet.iter().take(LISTED) {
            if c.evidence.is_empty() {
                s.push_str(&format!("- {}\n", clipped(&c.id)));
            } else {
                s.push_str(&format!("- {}: {}\n", clipped(&c.id), clipped(&c.evidence)));
            }
        }
        more(&mut s, unmet.len());
        sections.push(s);
    }

    let minor: Vec<&Issue> = of(|s| s == Severity::Minor).collect();
    if !minor.is_empty() {
        sections.push(issue_section("Minor issues:", &minor));
    }

    if !verdict.out_of_scope.is_empty() || !verdict.scope_violations.is_empty() {
        let mut s =
            String::from("Out of scope (no spec line asks for this; remove it or justify it):\n");
        let out_of_scope = verdict.out_of_scope.iter().map(|o| {
            let at = match o.line {
                Some(l) if !o.file.is_empty() => format!("{}:{l}", o.file),
                _ => o.file.clone(),
            };
            bullet(&clipped(&at), &clipped(&o.description))
        });
        let violations = verdict
            .scope_violations
            .iter()
            .map(|v| bullet(&clipped(&v.file), &clipped(&v.description)));
        let entries: Vec<String> = out_of_scope.chain(violations).collect();
        for entry in entries.iter().take(LISTED) {
            s.push_str(entry);
        }
        more(&mut s, entries.len());
        sections.push(s);
    }

    let nits: Vec<&Issue> = of(|s| s == Severity::Nit).collect();
    if !nits.is_empty() {
        sections.push(issue_section("Nits (optional):", &nits));
    }

    if sections.is_empty() {
        return "The review reported no specific issues.\n".to_string();
    }
    sections.join("\n")
}

/// The guardian's summary, then its flags.
pub fn guardian_feedback(g: &GuardianVerdict) -> String {
    let mut s = format!(
        "Product guardian: {}\n{}\n",
        g.status.as_str(),
        clipped(&g.summary)
    );
    if !g.flags.is_empty() {
        s.push_str("\nFlags:\n");
        for f in g.flags.iter().take(LISTED) {
            s.push_str(&format!(
                "- [{}] {}",
                f.severity.as_str(),
                clipped(&f.description)
            ));
            if !f.spec_reference.trim().is_empty() {
                s.push_str(&format!(" (spec: {})", clipped(&f.spec_reference)));
            }
            s.push('\n');
        }
        more(&mut s, g.flags.len());
    }
    s
}

fn issue_section(title: &str, issues: &[&Issue]) -> String {
    let mut s = format!("{title}\n");
    for (n, i) in issues.iter().take(LISTED).enumerate() {
        let at = located(i)
            .map(|at| format!("{}: ", clipped(&at)))
            .unwrap_or_default();
        s.push_str(&format!(
            "{}. [{}] {at}{}\n",
            n + 1,
            i.severity.as_str(),
            clipped(&i.message)
        ));
        if !i.suggestion.trim().is_empty() {
            s.push_str(&format!("   Fix: {}\n", clipped(&i.suggestion)));
        }
    }
    more(&mut s, issues.len());
    s
}

fn bullet(at: &str, text: &str) -> String {
    match (at.is_empty(), text.is_empty()) {
        (false, false) => format!("- {at}: {text}\n"),
        (false, true) => format!("- {at}\n"),
        (true, _) => format!("- {text}\n"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verdict::decide::{DecisionInput, QuoteHit, decide};
    use crate::verdict::schema::{CriterionCheck, Flag, GuardianStatus, Kind, Missing, OutOfScope};

    fn issue(
        severity: Severity,
        file: Option<&str>,
        line: Option<u64>,
        message: &str,
        suggestion: &str,
    ) -> Issue {
        Issue {
            severity,
            file: file.map(Into::into),
            line,
            end_line: None,
            message: message.into(),
            suggestion: suggestion.into(),
            dimension: None,
        }
    }

    fn no_quote(_: &str) -> Result<QuoteHit, crate::verdict::QuoteMiss> {
        Err(crate::verdict::QuoteMiss::NotInSpec)
    }

    #[test]
    fn long_answers_give_bounded_feedback() {
        let long = "x".repeat(5 * ENTRY_CHARS);
        let verdict = Verdict {
            verdict: Kind::RequestChanges,
            expectations: String::new(),
            criteria: vec![],
            spec_verification: vec![],
            missing_from_spec: vec![],
            out_of_scope: vec![],
            issues: (0..200)
                .map(|i| issue(Severity::Major, Some("a.rs"), Some(i), &long, &long))
                .collect(),
            strengths: vec![],
            defect_scope_check: None,
            scope_violations: vec![],
            dimensions: Default::default(),
            rejection: None,
            previous_findings: Vec::new(),
        };
        let decision = decide(
            &verdict,
            &DecisionInput {
                find_quote: &no_quote,
                spec_sent: false,
                spec_edits: vec![],
                criteria_ids: vec![],
                sources: None,
                unseen: None,
            },
        );
        let text = feedback(&verdict, &decision);
        assert!(text.contains("25. [major] a.rs:24: "), "{}", &text[..200]);
        assert!(!text.contains("26. [major]"));
        assert!(text.contains("…and 175 more in the review report"));
        // 25 entries of two clipped texts each, and a little framing.
        assert!(
            text.len() < 25 * 2 * (ENTRY_CHARS + 40) + 200,
            "{}",
            text.len()
        );
    }

    #[test]
    fn blocking_first_then_missing_unmet_minor_scope_nits() {
        let verdict = Verdict {
            verdict: Kind::RequestChanges,
            expectations: "search with availability".into(),
            criteria: vec![
                CriterionCheck {
                    id: "AC-1".into(),
                    status: CriterionStatus::Met,
                    evidence: "ok".into(),
                },
                CriterionCheck {
                    id: "AC-2".into(),
                    status: CriterionStatus::Unmet,
                    evidence: "no test for an empty query".into(),
                },
            ],
            spec_verification: vec![],
            missing_from_spec: vec![Missing {
                spec_quote: "Results are paginated, 20 per page.".into(),
                description: "search returns every match at once".into(),
            }],
            out_of_scope: vec![OutOfScope {
                file: "src/admin.rs".into(),
                line: Some(12),
                end_line: None,
                description: "an admin panel".into(),
            }],
            issues: vec![
                issue(
                    Severity::Nit,
                    Some("src/catalog.rs"),
                    Some(28),
                    "name could be clearer",
                    "rename to find_books",
                ),
                issue(
                    Severity::Minor,
                    Some("src/catalog.rs"),
                    None,
                    "clones every book",
                    "",
                ),
                issue(
                    Severity::Major,
                    Some("src/catalog.rs"),
                    Some(41),
                    "availability is not returned",
                    "include Book::status in the result",
                ),
                issue(
                    Severity::Critical,
                    Some("src/db.rs"),
                    Some(7),
                    "query built by string concatenation",
                    "use a bound parameter",
                ),
            ],
            strengths: vec![],
            defect_scope_check: None,
            scope_violations: vec![],
            dimensions: Default::default(),
            rejection: None,
            previous_findings: Vec::new(),
        };
        let decision = decide(
            &verdict,
            &DecisionInput {
                find_quote: &no_quote,
                spec_sent: true,
                spec_edits: vec!["specs/product/library-catalog.md".into()],
                criteria_ids: vec![],
                sources: None,
                unseen: None,
            },
        );
        let text = feedback(&verdict, &decision);
        let expected = r#"Blocking issues (fix these first):
1. [critical] src/db.rs:7: query built by string concatenation
   Fix: use a bound parameter
2. [major] src/catalog.rs:41: availability is not returned
   Fix: include Book::status in the result
3. [major] specs/product/library-catalog.md: The diff edits this spec, which the task does not declare: a task cannot rewrite its own source of truth.
   Fix: Revert the spec change; spec changes go through their own task.

Missing from the spec:
- Spec: "Results are paginated, 20 per page."
  Missing: search returns every match at once

Unmet acceptance criteria:
- AC-2: no test for an empty query

Minor issues:
1. [minor] src/catalog.rs: clones every book
2. [minor] The review's spec quote "Results are paginated, 20 per page." (missing_from_spec[0]) is not found in the spec text sent.
   Fix: Check the requirement against the spec's exact wording.

Out of scope (no spec line asks for this; remove it or justify it):
- src/admin.rs:12: an admin panel

Nits (optional):
1. [nit] src/catalog.rs:28: name could be clearer
   Fix: rename to find_books
"#;
        assert_eq!(text, expected);
        assert_eq!(feedback(&verdict, &decision), text, "stable");
    }

    #[test]
    fn nothing_to_report() {
        let verdict = Verdict {
            verdict: Kind::RequestChanges,
            expectations: String::new(),
            criteria: vec![],
            spec_verification: vec![],
            missing_from_spec: vec![],
            out_of_scope: vec![],
            issues: vec![],
            strengths: vec![],
            defect_scope_check: None,
            scope_violations: vec![],
            dimensions: Default::default(),
            rejection: None,
            previous_findings: Vec::new(),
        };
        let decision = decide(
            &verdict,
            &DecisionInput {
                find_quote: &no_quote,
                spec_sent: true,
                spec_edits: vec![],
                criteria_ids: vec![],
                sources: None,
                unseen: None,
            },
        );
        assert_eq!(
            feedback(&verdict, &decision),
            "The review reported no specific issues.\n"
        );
    }

    #[test]
    fn guardian_summary_then_flags() {
        let g = GuardianVerdict {
            status: GuardianStatus::Rejected,
            summary: "Adds a social feed the vision rules out.".into(),
            flags: vec![
                Flag {
                    severity: Severity::Critical,
                    description: "social feed".into(),
                    spec_reference: "overview.md#Non-goals".into(),
                },
                Flag {
                    severity: Severity::Minor,
                    description: "naming".into(),
                    spec_reference: String::new(),
                },
            ],
        };
        assert_eq!(
            guardian_feedback(&g),
            "Product guardian: rejected\nAdds a social feed the vision rules out.\n\nFlags:\n- [critical] social feed (spec: overview.md#Non-goals)\n- [minor] naming\n"
        );
    }
}
