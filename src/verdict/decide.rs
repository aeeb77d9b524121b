//! The final decision: speed, not the model, decides. Every spec quote is
//! looked up in the spec text that was sent and every cited location in the
//! diff and the files at the head commit. An approval is turned into
//! request_changes, with the reason recorded, when it rests on a quote not
//! found or on evidence pointing nowhere; when it has no basis in the spec
//! (no quote found although spec sections were sent, a requirement it marks
//! not satisfied, an item it lists as missing); when it comes with a blocking
//! issue, leaves a criterion unmet or unreported, or comes with an edit to
//! the spec itself; or when the model did not see all the changed code.
//! Pure and deterministic: the same verdict and input always give the same
//! decision. It never reads files or specs itself; the caller passes the
//! quote lookup and the head commit's files in.
//!
//! Left to the model's judgement on purpose: an `unverifiable` criterion,
//! and where a finding that is not a basis for approval (a minor issue, an
//! out-of-scope item) points: such a citation pointing nowhere is marked in
//! the report, not fatal.

use serde::{Deserialize, Serialize};

use super::evidence::{self, Citation, Sources};
use super::schema::{CriterionStatus, Issue, Kind, Severity, Verdict};

/// Where a quote was found: the caller adapts its spec lookup to this.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QuoteHit {
    pub doc_path: String,
    /// The section's heading path, e.g. "Library Catalog > Search".
    pub section: String,
    /// 1-based line in the document.
    pub line: usize,
    /// Found in the product vision, not in a spec section: checked like a
    /// spec quote, but not a spec basis for an approval.
    pub vision: bool,
}

/// Why a quote is no basis: it is not in the spec, it is too short to
/// identify a requirement, or it is in an HTML comment (not rendered, so
/// not spec text). Serialised as `not_in_spec`, `too_short`,
/// `html_comment`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum QuoteMiss {
    NotInSpec,
    TooShort,
    HtmlComment,
}

impl QuoteMiss {
    /// How a report says it, after "the quote …".
    pub fn words(self) -> &'static str {
        match self {
            QuoteMiss::NotInSpec => "is not found in the spec text sent",
            QuoteMiss::TooShort => {
                "is in the spec but too short to identify a requirement: a quote needs three words (six characters of Chinese or Japanese), or a whole line or list item"
            }
            QuoteMiss::HtmlComment => {
                "is inside an HTML comment of the spec, which is not rendered and is not spec text"
            }
        }
    }

    /// A few words for a table or a mark: "not in spec", "too short", "in
    /// an HTML comment".
    pub fn short(self) -> &'static str {
        match self {
            QuoteMiss::NotInSpec => "not in spec",
            QuoteMiss::TooShort => "too short",
            QuoteMiss::HtmlComment => "in an HTML comment",
        }
    }

    fn rule(self) -> Rule {
        match self {
            QuoteMiss::NotInSpec => Rule::FabricatedQuote,
            QuoteMiss::TooShort => Rule::QuoteTooShort,
            QuoteMiss::HtmlComment => Rule::QuoteInComment,
        }
    }
}

pub struct DecisionInput<'a> {
    /// Finds a quote in the spec text that was sent to the model, or says
    /// why it is no quote of it.
    pub find_quote: &'a dyn Fn(&str) -> Result<QuoteHit, QuoteMiss>,
    /// Spec sections were sent: an approval must then quote one of them.
    pub spec_sent: bool,
    /// Spec files the diff edits that the task does not declare in its scope.
    pub spec_edits: Vec<String>,
    /// The task's acceptance criterion ids (AC-1, AC-2, …) as sent.
    pub criteria_ids: Vec<String>,
    /// What cited locations are checked against; None leaves them unchecked.
    pub sources: Option<&'a Sources<'a>>,
    /// Changed code the model was never shown, in words ("3 of 9 changed
    /// files, 410 of 980 changed lines"); None when it saw all of it.
    pub unseen: Option<String>,
}

/// Why an approval was overruled; serialised as a stable snake_case id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Rule {
    /// A requirement marked satisfied quotes text the spec does not contain.
    FabricatedQuote,
    /// A requirement marked satisfied quotes spec text too short to
    /// identify a requirement (and no whole line or item).
    QuoteTooShort,
    /// A requirement marked satisfied quotes an HTML comment of the spec.
    QuoteInComment,
    /// Spec sections were sent, and no quote of the approval is found in them.
    NoSpecBasis,
    /// The approval marks one of its own requirements not satisfied.
    UnsatisfiedRequirement,
    /// The approval lists spec text the change does not implement.
    MissingRequirement,
    /// A critical or major issue.
    BlockingIssue,
    UnmetCriterion,
    /// A task criterion the verdict does not report on.
    UncheckedCriterion,
    /// Evidence of a satisfied requirement or a met criterion cites a file
    /// or a line that does not exist.
    EvidenceNotFound,
    /// Changed code was left out of every prompt of the review.
    UnseenCode,
    /// The diff edits a spec file the task does not declare.
    SpecEdited,
    /// The guardian gate rejected the approval (recorded by the review
    /// pipeline, which runs the guardian after this decision).
    GuardianRejected,
    /// One of speed's own checks found a critical or major problem
    /// (recorded by the review pipeline, which runs the checks).
    CheckFailed,
    /// A defect fix changes a path its triage's affected_files does not
    /// list (found by speed; see `verdict::defect`).
    OutsideAffectedFiles,
    /// A defect-fix review says its own scope is not ok.
    ScopeNotOk,
    /// A later commit changed the test that reproduced the defect.
    ReproducingTestChanged,
    /// A quality dimension scored under its minimum (applied by the review
    /// pipeline from `dimensions::Scores`).
    DimensionBelowMinimum,
    /// The weighted overall score is under `review.pass_score`.
    OverallBelowThreshold,
    /// A blocking finding of the previous review is still unresolved, as
    /// the model says or as speed records it (see `verdict::previous`).
    PreviousFindingUnresolved,
}

impl Rule {
    pub fn as_str(self) -> &'static str {
        match self {
            Rule::FabricatedQuote => "fabricated_quote",
            Rule::QuoteTooShort => "quote_too_short",
            Rule::QuoteInComment => "quote_in_comment",
            Rule::NoSpecBasis => "no_spec_basis",
            Rule::UnsatisfiedRequirement => "unsatisfied_requirement",
            Rule::MissingRequirement => "missing_requirement",
            Rule::BlockingIssue => "blocking_issue",
            Rule::UnmetCriterion => "unmet_criterion",
            Rule::UncheckedCriterion => "unchecked_criterion",
            Rule::EvidenceNotFound => "evidence_not_found",
            Rule::UnseenCode => "unseen_code",
            Rule::SpecEdited => "spec_edited",
            Rule::GuardianRejected => "guardian_rejected",
            Rule::CheckFailed => "check_failed",
            Rule::OutsideAffectedFiles => "outside_affected_files",
            Rule::ScopeNotOk => "scope_not_ok",
            Rule::ReproducingTestChanged => "reproducing_test_changed",
            Rule::DimensionBelowMinimum => "dimension_below_minimum",
            Rule::OverallBelowThreshold => "overall_below_threshold",
            Rule::PreviousFindingUnresolved => "previous_finding_unresolved",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Overrule {
    pub rule: Rule,
    /// Names the quote, issue, criterion or file at fault.
    pub reason: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QuoteCheck {
    pub spec_quote: String,
    pub found: bool,
    pub section: Option<String>,
    pub line: Option<usize>,
    pub doc_path: Option<String>,
    /// Found in the product vision rather than a spec section.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub vision: bool,
    /// Why a quote not found is no quote of the spec.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refused: Option<QuoteMiss>,
}

impl QuoteCheck {
    /// Why it was not found, in a few words ("not in spec" for a report
    /// written before the reasons were told apart).
    pub fn refusal(&self) -> &'static str {
        self.refused.unwrap_or(QuoteMiss::NotInSpec).short()
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Decision {
    /// What the model said.
    pub model: Kind,
    /// What speed decided.
    pub final_verdict: Kind,
    /// Recorded only when the model approved: each reason the approval fell.
    pub overrules: Vec<Overrule>,
    /// Every spec quote of the verdict, in order: spec_verification first,
    /// then missing_from_spec.
    pub quotes: Vec<QuoteCheck>,
    /// Every location the verdict cites, as checked (empty when no sources
    /// were given).
    pub citations: Vec<Citation>,
    /// Issues speed adds to the model's, for the feedback.
    pub added_issues: Vec<Issue>,
}

pub fn decide(verdict: &Verdict, input: &DecisionInput) -> Decision {
    let approved = verdict.verdict == Kind::Approve;
    let mut rules = Rules {
        approved,
        overrules: Vec::new(),
        added_issues: Vec::new(),
    };
    let quotes = rules.quotes(verdict, input);
    let citations = input
        .sources
        .map(|sources| evidence::cite(verdict, sources))
        .unwrap_or_default();
    if approved {
        rules.spec_basis(verdict, &quotes, input.spec_sent);
        rules.requirements(verdict);
        rules.blocking_issues(verdict);
        rules.criteria(verdict, &input.criteria_ids);
        rules.citations(&citations);
        rules.unseen(input.unseen.as_deref());
    }
    rules.spec_edits(&input.spec_edits);
    let Rules {
        overrules,
        added_issues,
        ..
    } = rules;
    let final_verdict = if approved && overrules.is_empty() {
        Kind::Approve
    } else {
        Kind::RequestChanges
    };
    Decision {
        model: verdict.verdict,
        final_verdict,
        overrules,
        quotes,
        citations,
        added_issues,
    }
}

/// The model rules as they apply, in order: each records its overrule
/// (only of an approval) and the issue it adds for the feedback.
struct Rules {
    approved: bool,
    overrules: Vec<Overrule>,
    added_issues: Vec<Issue>,
}

impl Rules {
    fn overrule(&mut self, rule: Rule, reason: String) {
        if self.approved {
            self.overrules.push(Overrule { rule, reason });
        }
    }

    /// A major issue with no location, for the feedback.
    fn add(&mut self, message: String, suggestion: String) {
        self.added_issues.push(Issue {
            severity: Severity::Major,
            file: None,
            line: None,
            end_line: None,
            message,
            suggestion,
            dimension: None,
        });
    }

    /// Every spec quote looked up in the text sent: spec_verification's
    /// first, then missing_from_spec's. A satisfied requirement of an
    /// approval whose quote is not there is a fabricated quote; one whose
    /// quote is too short, or in an HTML comment, is refused for that.
    fn quotes(&mut self, verdict: &Verdict, input: &DecisionInput) -> Vec<QuoteCheck> {
        let mut quotes = Vec::new();
        for (i, check) in verdict.spec_verification.iter().enumerate() {
            let q = look_up(&check.spec_quote, input);
            if let Some(miss) = q.refused {
                let rests_on_it = self.approved && check.satisfied;
                if rests_on_it {
                    self.overrule(
                        miss.rule(),
                        format!(
                            "spec_verification[{i}] is marked satisfied but its quote {:?} {}",
                            check.spec_quote,
                            miss.words()
                        ),
                    );
                }
                self.added_issues.push(quote_issue(
                    if rests_on_it {
                        Severity::Major
                    } else {
                        Severity::Minor
                    },
                    &check.spec_quote,
                    &format!("spec_verification[{i}]"),
                    miss,
                ));
            }
            quotes.push(q);
        }
        for (i, missing) in verdict.missing_from_spec.iter().enumerate() {
            // An item with no quote describes a gap in words only: nothing to look up.
            if missing.spec_quote.trim().is_empty() {
                continue;
            }
            let q = look_up(&missing.spec_quote, input);
            if let Some(miss) = q.refused {
                self.added_issues.push(quote_issue(
                    Severity::Minor,
                    &missing.spec_quote,
                    &format!("missing_from_spec[{i}]"),
                    miss,
                ));
            }
            quotes.push(q);
        }
        quotes
    }

    /// Spec sections were sent, so an approval must quote one of them: a
    /// quote of the vision is checked, but is no such basis.
    fn spec_basis(&mut self, verdict: &Verdict, quotes: &[QuoteCheck], spec_sent: bool) {
        let quoted = verdict
            .spec_verification
            .iter()
            .zip(quotes)
            .any(|(check, q)| check.satisfied && q.found && !q.vision);
        if spec_sent && !quoted {
            self.overrule(
                Rule::NoSpecBasis,
                "no requirement marked satisfied quotes the spec text sent: the approval has no basis in the spec".to_string(),
            );
            self.add(
                "The review could not tie the change to the spec: it quoted no requirement found in the spec sections sent.".to_string(),
                "Make the change implement the spec sections the task references, so a review can quote them.".to_string(),
            );
        }
    }

    /// An approval that marks a requirement unsatisfied, or lists what the
    /// change does not implement, contradicts itself.
    fn requirements(&mut self, verdict: &Verdict) {
        for (i, check) in verdict.spec_verification.iter().enumerate() {
            if !check.satisfied {
                self.overrule(
                    Rule::UnsatisfiedRequirement,
                    format!(
                        "spec_verification[{i}] is marked not satisfied: {:?}",
                        check.spec_quote
                    ),
                );
                self.add(
                    format!(
                        "Spec requirement not satisfied: {:?}{}",
                        check.spec_quote,
                        [check.notes.trim(), check.evidence.trim()]
                            .iter()
                            .find(|t| !t.is_empty())
                            .map(|t| format!(" ({t})"))
                            .unwrap_or_default()
                    ),
                    String::new(),
                );
            }
        }
        for (i, missing) in verdict.missing_from_spec.iter().enumerate() {
            let what = if missing.spec_quote.trim().is_empty() {
                missing.description.clone()
            } else {
                format!("{:?}", missing.spec_quote)
            };
            self.overrule(
                Rule::MissingRequirement,
                format!("missing_from_spec[{i}] lists what the change does not implement: {what}"),
            );
        }
    }

    fn blocking_issues(&mut self, verdict: &Verdict) {
        for (i, issue) in verdict.issues.iter().enumerate() {
            if issue.severity.is_blocking() {
                self.overrule(
                    Rule::BlockingIssue,
                    format!(
                        "issues[{i}] is {}{}: {}",
                        issue.severity.as_str(),
                        located(issue)
                            .map(|at| format!(" at {at}"))
                            .unwrap_or_default(),
                        issue.message
                    ),
                );
            }
        }
    }

    /// Every criterion met: none unmet, none left unrated.
    fn criteria(&mut self, verdict: &Verdict, criteria_ids: &[String]) {
        for c in &verdict.criteria {
            if c.status == CriterionStatus::Unmet {
                let why = if c.evidence.is_empty() {
                    String::new()
                } else {
                    format!(": {}", c.evidence)
                };
                self.overrule(Rule::UnmetCriterion, format!("{} is unmet{why}", c.id));
            }
        }
        for id in criteria_ids {
            let reported = verdict.criteria.iter().any(|c| same_id(&c.id, id));
            if !reported {
                self.overrule(
                    Rule::UncheckedCriterion,
                    format!("{id} is not reported on in the verdict's criteria"),
                );
                self.add(
                    format!("Acceptance criterion {id} was not checked by the review."),
                    format!(
                        "Make {id} verifiable from the diff (a test or a file:line that shows it is met)."
                    ),
                );
            }
        }
    }

    /// Evidence an approval rests on must point at something.
    fn citations(&mut self, citations: &[Citation]) {
        for c in citations.iter().filter(|c| c.basis && !c.found) {
            let why = c.problem.as_deref().unwrap_or("not found");
            self.overrule(
                Rule::EvidenceNotFound,
                format!(
                    "{} cites {}, which points nowhere: {why}",
                    c.from, c.reference
                ),
            );
            self.add(
                format!(
                    "The review's evidence {} ({}) points nowhere: {why}.",
                    c.reference, c.from
                ),
                "Check that the change contains what the review claims.".to_string(),
            );
        }
    }

    /// No approval of code the model never saw.
    fn unseen(&mut self, unseen: Option<&str>) {
        let Some(unseen) = unseen else { return };
        self.overrule(
            Rule::UnseenCode,
            format!("the model was not shown all the changed code: {unseen} left out for budget"),
        );
        self.add(
            format!(
                "The review could not see the whole change: {unseen} did not fit its prompts, so it cannot be approved."
            ),
            "Split the change into smaller tasks, or raise review.token_budget or review.max_parts.".to_string(),
        );
    }

    /// A task cannot rewrite its own source of truth.
    fn spec_edits(&mut self, spec_edits: &[String]) {
        for file in spec_edits {
            self.overrule(
                Rule::SpecEdited,
                format!("the diff edits the spec {file}, which the task does not declare"),
            );
            self.added_issues.push(Issue {
                severity: Severity::Major,
                file: Some(file.clone()),
                line: None,
                end_line: None,
                message: "The diff edits this spec, which the task does not declare: a task \
                          cannot rewrite its own source of truth."
                    .to_string(),
                suggestion: "Revert the spec change; spec changes go through their own task."
                    .to_string(),
                dimension: None,
            });
        }
    }
}

/// A blank quote is never looked up: it cannot be found, and a lookup might
/// match it anywhere.
fn look_up(quote: &str, input: &DecisionInput) -> QuoteCheck {
    let hit = if quote.trim().is_empty() {
        Err(QuoteMiss::NotInSpec)
    } else {
        (input.find_quote)(quote)
    };
    let (hit, refused) = match hit {
        Ok(hit) => (Some(hit), None),
        Err(miss) => (None, Some(miss)),
    };
    QuoteCheck {
        spec_quote: quote.to_string(),
        found: hit.is_some(),
        section: hit.as_ref().map(|h| h.section.clone()),
        line: hit.as_ref().map(|h| h.line),
        vision: hit.as_ref().is_some_and(|h| h.vision),
        doc_path: hit.map(|h| h.doc_path),
        refused,
    }
}

fn quote_issue(severity: Severity, quote: &str, at: &str, miss: QuoteMiss) -> Issue {
    let (message, suggestion) = match miss {
        QuoteMiss::NotInSpec => (
            format!("The review's spec quote {quote:?} ({at}) is not found in the spec text sent."),
            "Check the requirement against the spec's exact wording.",
        ),
        QuoteMiss::TooShort => (
            format!(
                "The review's spec quote {quote:?} ({at}) is too short to identify a requirement."
            ),
            "Quote the requirement's whole sentence, line or list item.",
        ),
        QuoteMiss::HtmlComment => (
            format!(
                "The review's spec quote {quote:?} ({at}) is inside an HTML comment, which is not spec text."
            ),
            "Rest the review on the spec's rendered text, not on comments.",
        ),
    };
    Issue {
        severity,
        file: None,
        line: None,
        end_line: None,
        message,
        suggestion: suggestion.to_string(),
        dimension: None,
    }
}

/// `file:line`, `file:line-end`, `file`, or nothing.
pub(crate) fn located(issue: &Issue) -> Option<String> {
    match (&issue.file, issue.line, issue.end_line) {
        (Some(f), Some(l), Some(e)) if !f.is_empty() && e != l => Some(format!("{f}:{l}-{e}")),
        (Some(f), Some(l), _) if !f.is_empty() => Some(format!("{f}:{l}")),
        (Some(f), _, _) if !f.is_empty() => Some(f.clone()),
        _ => None,
    }
}

/// Criterion ids as models write them back: "ac-1 " is AC-1.
fn same_id(a: &str, b: &str) -> bool {
    a.trim().eq_ignore_ascii_case(b.trim())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verdict::schema::{CriterionCheck, Missing, SpecCheck};

    const SPEC: &str = "# Library Catalog\n\nUsers can search for books and see real-time availability status.\nResults are paginated, 20 per page.\n";

    fn find(quote: &str) -> Result<QuoteHit, QuoteMiss> {
        SPEC.lines()
            .enumerate()
            .find(|(_, l)| l.contains(quote))
            .map(|(i, _)| QuoteHit {
                doc_path: "specs/product/library-catalog.md".into(),
                section: "Library Catalog".into(),
                line: i + 1,
                vision: false,
            })
            .ok_or(QuoteMiss::NotInSpec)
    }

    fn input() -> DecisionInput<'static> {
        DecisionInput {
            find_quote: &find,
            spec_sent: true,
            spec_edits: vec![],
            criteria_ids: vec!["AC-1".into()],
            sources: None,
            unseen: None,
        }
    }

    fn approval() -> Verdict {
        Verdict {
            verdict: Kind::Approve,
            expectations: "search shows availability".into(),
            criteria: vec![CriterionCheck {
                id: "AC-1".into(),
                status: CriterionStatus::Met,
                evidence: "tests/search.rs:10".into(),
            }],
            spec_verification: vec![SpecCheck {
                spec_quote: "Users can search for books and see real-time availability status"
                    .into(),
                spec_section: "Library Catalog".into(),
                satisfied: true,
                evidence: "src/catalog.rs:15".into(),
                notes: String::new(),
            }],
            missing_from_spec: vec![],
            out_of_scope: vec![],
            issues: vec![Issue {
                severity: Severity::Nit,
                file: Some("src/catalog.rs".into()),
                line: Some(28),
                end_line: None,
                message: "could be a computed field".into(),
                suggestion: "use a method".into(),
                dimension: None,
            }],
            strengths: vec!["tests".into()],
            defect_scope_check: None,
            scope_violations: vec![],
            dimensions: Default::default(),
            rejection: None,
            previous_findings: Vec::new(),
        }
    }

    fn rules(d: &Decision) -> Vec<&'static str> {
        d.overrules.iter().map(|o| o.rule.as_str()).collect()
    }

    #[test]
    fn a_clean_approval_stands_and_its_quotes_are_located() {
        let d = decide(&approval(), &input());
        assert_eq!(d.final_verdict, Kind::Approve);
        assert!(d.overrules.is_empty() && d.added_issues.is_empty());
        assert_eq!(
            d.quotes,
            [QuoteCheck {
                spec_quote: "Users can search for books and see real-time availability status"
                    .into(),
                found: true,
                section: Some("Library Catalog".into()),
                line: Some(3),
                doc_path: Some("specs/product/library-catalog.md".into()),
                vision: false,
                refused: None,
            }]
        );
    }

    #[test]
    fn a_quote_of_the_vision_alone_is_no_spec_basis() {
        let vision = |quote: &str| {
            "Configuration comes from flags."
                .contains(quote)
                .then(|| QuoteHit {
                    doc_path: "specs/product/overview.md".into(),
                    section: "Vision".into(),
                    line: 3,
                    vision: true,
                })
                .ok_or(QuoteMiss::NotInSpec)
                .or_else(|_| find(quote))
        };
        let mut input = input();
        input.find_quote = &vision;
        let mut v = approval();
        v.spec_verification[0].spec_quote = "Configuration comes from flags.".into();
        let d = decide(&v, &input);
        assert_eq!(rules(&d), ["no_spec_basis"]);
        assert!(d.quotes[0].found && d.quotes[0].vision);
        // Beside a spec quote it is a checked quote like any other.
        let mut v = approval();
        v.spec_verification.push(SpecCheck {
            spec_quote: "Configuration comes from flags.".into(),
            spec_section: "Product vision".into(),
            satisfied: true,
            evidence: "src/catalog.rs:15".into(),
            notes: String::new(),
        });
        let d = decide(&v, &input);
        assert_eq!(d.final_verdict, Kind::Approve, "{:?}", d.overrules);
        // And one the change breaks overrules the approval.
        v.spec_verification[1].satisfied = false;
        let d = decide(&v, &input);
        assert_eq!(rules(&d), ["unsatisfied_requirement"]);
    }

    #[test]
    fn approval_resting_on_a_fabricated_quote_falls() {
        let mut v = approval();
        v.spec_verification[0].spec_quote = "Users can reserve books online".into();
        let d = decide(&v, &input());
        assert_eq!(d.model, Kind::Approve);
        assert_eq!(d.final_verdict, Kind::RequestChanges);
        assert_eq!(rules(&d), ["fabricated_quote", "no_spec_basis"]);
        assert!(
            d.overrules[0]
                .reason
                .contains("\"Users can reserve books online\"")
        );
        assert!(!d.quotes[0].found && d.quotes[0].section.is_none());
        assert_eq!(d.added_issues.len(), 2);
        assert_eq!(d.added_issues[0].severity, Severity::Major);
        assert!(
            d.added_issues[0]
                .message
                .contains("\"Users can reserve books online\"")
        );
        assert!(
            d.added_issues[0]
                .message
                .contains("not found in the spec text sent")
        );
    }

    #[test]
    fn unfound_quote_in_a_request_changes_adds_a_minor_issue_only() {
        let mut v = approval();
        v.verdict = Kind::RequestChanges;
        v.spec_verification[0].spec_quote = "Users can reserve books online".into();
        v.missing_from_spec = vec![
            Missing {
                spec_quote: "Results are paginated".into(),
                description: "no paging".into(),
            },
            Missing {
                spec_quote: "Books can be rated".into(),
                description: "no ratings".into(),
            },
        ];
        let d = decide(&v, &input());
        assert_eq!(d.final_verdict, Kind::RequestChanges);
        assert!(d.overrules.is_empty());
        let found: Vec<(&str, bool)> = d
            .quotes
            .iter()
            .map(|q| (q.spec_quote.as_str(), q.found))
            .collect();
        assert_eq!(
            found,
            [
                ("Users can reserve books online", false),
                ("Results are paginated", true),
                ("Books can be rated", false)
            ]
        );
        let sev: Vec<Severity> = d.added_issues.iter().map(|i| i.severity).collect();
        assert_eq!(sev, [Severity::Minor, Severity::Minor]);
        assert!(d.added_issues[1].message.contains("missing_from_spec[1]"));
    }

    #[test]
    fn approval_with_a_major_or_critical_issue_falls() {
        let mut v = approval();
        v.issues.push(Issue {
            severity: Severity::Major,
            file: Some("src/catalog.rs".into()),
            line: Some(41),
            end_line: None,
            message: "search ignores availability".into(),
            suggestion: String::new(),
            dimension: None,
        });
        v.issues.push(Issue {
            severity: Severity::Critical,
            file: None,
            line: None,
            end_line: None,
            message: "SQL injection".into(),
            suggestion: String::new(),
            dimension: None,
        });
        let d = decide(&v, &input());
        assert_eq!(d.final_verdict, Kind::RequestChanges);
        assert_eq!(rules(&d), ["blocking_issue", "blocking_issue"]);
        assert_eq!(
            d.overrules[0].reason,
            "issues[1] is major at src/catalog.rs:41: search ignores availability"
        );
        assert_eq!(
            d.overrules[1].reason,
            "issues[2] is critical: SQL injection"
        );
    }

    #[test]
    fn minor_issues_and_nits_do_not_block() {
        let mut v = approval();
        v.issues[0].severity = Severity::Minor;
        assert_eq!(decide(&v, &input()).final_verdict, Kind::Approve);
    }

    #[test]
    fn approval_with_an_unmet_criterion_falls() {
        let mut v = approval();
        v.criteria[0].status = CriterionStatus::Unmet;
        v.criteria[0].evidence = "no test for empty query".into();
        let d = decide(&v, &input());
        assert_eq!(d.final_verdict, Kind::RequestChanges);
        assert_eq!(rules(&d), ["unmet_criterion"]);
        assert_eq!(
            d.overrules[0].reason,
            "AC-1 is unmet: no test for empty query"
        );
    }

    #[test]
    fn an_unverifiable_criterion_is_the_models_judgement() {
        let mut v = approval();
        v.criteria[0].status = CriterionStatus::Unverifiable;
        let d = decide(&v, &input());
        assert_eq!(d.final_verdict, Kind::Approve);
    }

    #[test]
    fn approval_without_a_basis_in_the_spec_falls() {
        // No quote at all, while spec sections were sent.
        let mut v = approval();
        v.spec_verification.clear();
        let d = decide(&v, &input());
        assert_eq!(rules(&d), ["no_spec_basis"]);
        // Without spec sections sent, there is nothing to quote.
        let mut inp = input();
        inp.spec_sent = false;
        assert_eq!(decide(&v, &inp).final_verdict, Kind::Approve);

        // Its own requirement marked not satisfied.
        let mut v = approval();
        v.spec_verification.push(SpecCheck {
            spec_quote: "Results are paginated, 20 per page.".into(),
            spec_section: "Library Catalog".into(),
            satisfied: false,
            evidence: String::new(),
            notes: "no paging yet".into(),
        });
        let d = decide(&v, &input());
        assert_eq!(rules(&d), ["unsatisfied_requirement"]);
        assert!(
            d.added_issues[0]
                .message
                .contains("\"Results are paginated, 20 per page.\" (no paging yet)")
        );

        // Spec text it lists as missing, even when it thinks another task
        // covers it: the approval is then not the review's to give.
        let mut v = approval();
        v.missing_from_spec.push(Missing {
            spec_quote: "Results are paginated".into(),
            description: "paging belongs to task 4".into(),
        });
        let d = decide(&v, &input());
        assert_eq!(rules(&d), ["missing_requirement"]);
        assert!(d.quotes[1].found);
    }

    #[test]
    fn approval_of_unseen_code_falls() {
        let mut inp = input();
        inp.unseen = Some("38 of 51 changed files".into());
        let d = decide(&approval(), &inp);
        assert_eq!(rules(&d), ["unseen_code"]);
        assert!(d.overrules[0].reason.contains("38 of 51 changed files"));
        let mut v = approval();
        v.verdict = Kind::RequestChanges;
        assert!(decide(&v, &inp).overrules.is_empty());
    }

    #[test]
    fn approval_resting_on_evidence_pointing_nowhere_falls_a_minor_finding_is_marked() {
        use crate::git::diff::Diff;
        let diff = Diff {
            base_commit: String::new(),
            head_commit: String::new(),
            files: vec![],
            sha256: String::new(),
        };
        let lines = |p: &str| Ok((p == "src/catalog.rs").then_some(30));
        let paths = vec!["src/catalog.rs".to_string()];
        let sources = Sources {
            diff: &diff,
            lines_at_head: &lines,
            head_paths: &paths,
        };
        let mut inp = input();
        inp.sources = Some(&sources);
        // The nit at src/catalog.rs:28 is fine; tests/search.rs:10 (AC-1's
        // evidence) is not at the head commit.
        let d = decide(&approval(), &inp);
        assert_eq!(rules(&d), ["evidence_not_found"]);
        assert_eq!(
            d.overrules[0].reason,
            "criteria[0].evidence cites tests/search.rs:10, which points nowhere: no file tests/search.rs at the head commit"
        );
        let mut v = approval();
        v.criteria[0].evidence = "src/catalog.rs:12".into();
        v.issues[0].line = Some(99);
        let d = decide(&v, &inp);
        assert_eq!(d.final_verdict, Kind::Approve, "{:?}", d.overrules);
        let marked: Vec<(&str, bool)> = d
            .citations
            .iter()
            .map(|c| (c.reference.as_str(), c.found))
            .collect();
        assert_eq!(
            marked,
            [
                ("src/catalog.rs:15", true),
                ("src/catalog.rs:12", true),
                ("src/catalog.rs:99", false)
            ]
        );
    }

    #[test]
    fn approval_that_skips_a_task_criterion_falls() {
        let mut v = approval();
        v.criteria[0].id = "ac-1".into();
        let mut inp = input();
        inp.criteria_ids = vec!["AC-1".into(), "AC-2".into()];
        let d = decide(&v, &inp);
        assert_eq!(rules(&d), ["unchecked_criterion"]);
        assert!(d.overrules[0].reason.starts_with("AC-2 "));
        assert!(d.added_issues[0].message.contains("AC-2"));
    }

    #[test]
    fn spec_edits_always_request_changes() {
        let mut inp = input();
        inp.spec_edits = vec!["specs/product/library-catalog.md".into()];
        let d = decide(&approval(), &inp);
        assert_eq!(d.final_verdict, Kind::RequestChanges);
        assert_eq!(rules(&d), ["spec_edited"]);
        assert_eq!(
            d.added_issues[0].file.as_deref(),
            Some("specs/product/library-catalog.md")
        );
        assert!(
            d.added_issues[0]
                .message
                .contains("a task cannot rewrite its own source of truth")
        );

        let mut v = approval();
        v.verdict = Kind::RequestChanges;
        let d = decide(&v, &inp);
        assert_eq!(d.final_verdict, Kind::RequestChanges);
        assert!(d.overrules.is_empty(), "nothing to overrule");
        assert_eq!(d.added_issues.len(), 1);
    }

    #[test]
    fn request_changes_is_never_turned_into_approve() {
        let mut v = approval();
        v.verdict = Kind::RequestChanges;
        let d = decide(&v, &input());
        assert_eq!(d.final_verdict, Kind::RequestChanges);
        assert!(d.overrules.is_empty() && d.added_issues.is_empty());
    }

    #[test]
    fn deterministic() {
        let mut v = approval();
        v.spec_verification[0].spec_quote = "invented".into();
        v.criteria[0].status = CriterionStatus::Unmet;
        let mut inp = input();
        inp.spec_edits = vec!["specs/a.md".into(), "specs/b.md".into()];
        let first = decide(&v, &inp);
        assert_eq!(
            rules(&first),
            [
                "fabricated_quote",
                "no_spec_basis",
                "unmet_criterion",
                "spec_edited",
                "spec_edited"
            ]
        );
        for _ in 0..5 {
            assert_eq!(decide(&v, &inp), first);
        }
    }
}
