//! The decision, made here and nowhere else. The model's answer is first
//! checked against what was sent (`check_answer`: every quote against the
//! spec sections, every cited location against the diff and the head
//! commit, the criteria, unseen code, for a defect fix its own rules, and
//! for a re-review each claim on a previous finding);
//! then `rule` turns it into speed's verdict, overruling an approval for
//! the model's rules, the quality scores (a dimension under its minimum,
//! the overall under `review.pass_score`), speed's blocking checks and the
//! guardian, each once and in that order. An offline review and an empty
//! diff are decided here too, without a model.

use crate::checks::{self, Check, Finding};
use crate::defects;
use crate::git::short;
use crate::specs::quote::Miss;
use crate::specs::{QuoteIndex, Section};
use crate::verdict::{self, Kind, Overrule, QuoteMiss, Rule, Scores, Verdict};
use crate::work::{self, Resolved, Subject};

use super::Error;
use super::context::Context;
use super::head::HeadFiles;
use super::prepare::Prepared;

/// The model's answer, as checked by the verdict's rules.
pub struct Checked {
    pub answer: Verdict,
    /// The model rules' (and the defect rules') decision: quotes,
    /// citations, and the overrules of those rules.
    pub decision: verdict::Decision,
    /// The answer's quality scores against the configured thresholds; None
    /// when no dimension is asked.
    pub scores: Option<Scores>,
    /// A re-review: what speed recorded of each previous finding.
    pub previous: Vec<verdict::previous::Check>,
    /// A reconcile turn asked a request for changes that named nothing
    /// blocking what must change.
    pub asked_for_a_reason: bool,
}

/// Check the model's answer against what the review sent and what the head
/// commit holds.
pub fn check_answer(ctx: &Context, prepared: &Prepared, answer: Verdict) -> Result<Checked, Error> {
    let composed = &prepared.composed;
    // The spec first, so text both hold is a spec quote; the vision's text
    // is checked the same way but marked, since it is no spec basis.
    let sent: Vec<_> = composed
        .sent
        .iter()
        .chain(&composed.vision_sent)
        .cloned()
        .collect();
    let index = QuoteIndex::new(&sent);
    // The specs' HTML comments were never sent: a quote of one is told
    // apart from a quote of nothing.
    let comments = QuoteIndex::new(&comment_passages(&prepared.sources));
    let find = |quote: &str| match index.look_up(quote) {
        Ok(hit) => Ok(verdict::QuoteHit {
            vision: composed.vision_sent.iter().any(|(p, _)| *p == hit.doc_path),
            doc_path: hit.doc_path,
            section: hit.section,
            line: hit.line,
        }),
        Err(Miss::TooShort) => Err(QuoteMiss::TooShort),
        Err(Miss::NotFound) => match comments.look_up(quote) {
            Ok(_) | Err(Miss::TooShort) => Err(QuoteMiss::HtmlComment),
            Err(Miss::NotFound) => Err(QuoteMiss::NotInSpec),
        },
    };
    let head = HeadFiles::open(&ctx.root, &prepared.resolved.diff.head_commit)?;
    let lines_at_head = |path: &str| head.lines(path);
    let sources = verdict::Sources {
        diff: &prepared.resolved.diff,
        lines_at_head: &lines_at_head,
        head_paths: head.paths(),
    };
    let criteria_ids: Vec<String> = match &prepared.subject {
        Subject::Branch { .. } => Vec::new(),
        subject => subject.criteria().iter().map(|c| c.id.clone()).collect(),
    };
    let mut decision = verdict::decide(
        &answer,
        &verdict::DecisionInput {
            find_quote: &find,
            spec_sent: !composed.sent.is_empty(),
            spec_edits: prepared.sources.spec_edits.clone(),
            criteria_ids,
            sources: Some(&sources),
            unseen: composed.coverage.unseen(),
        },
    );
    if let Some(found) = &prepared.facts.defect {
        verdict::defect::apply(&mut decision, &answer, &defect_facts(found));
    }
    // A re-review: each claim on a previous finding against what the
    // interdiff touched; an unresolved blocking one overrules an approval.
    let previous = match &prepared.previous {
        Some(rereview) => verdict::previous::apply(&mut decision, &answer, &rereview.facts),
        None => Vec::new(),
    };
    let asked = super::compose::dimensions(ctx, &prepared.sources);
    let scores = verdict::dimensions::score(&answer, &asked, ctx.config.scoring.pass_score);
    Ok(Checked {
        answer,
        decision,
        scores,
        previous,
        asked_for_a_reason: false,
    })
}

/// Each HTML comment taken out of the specs, as a passage of its own at
/// its line.
fn comment_passages(sources: &super::sources::Sources) -> Vec<(String, Section)> {
    sources
        .specs
        .iter()
        .flat_map(|spec| {
            spec.comments.iter().map(|c| {
                let lines = c.text.matches('\n').count();
                (
                    spec.document.path.clone(),
                    Section {
                        titles: vec!["(HTML comment)".to_string()],
                        level: 0,
                        start_line: c.line,
                        end_line: c.line + lines,
                        text: c.text.clone(),
                    },
                )
            })
        })
        .collect()
}

/// What the guardian said, as far as the decision is concerned.
pub enum Guardian<'a> {
    /// It was not asked (the review requested changes, or a small defect
    /// fix), or not yet: its word does not enter the decision.
    NotAsked,
    Confirmed,
    /// Its summary, and the feedback a developer gets instead of the
    /// review's.
    Rejected {
        summary: &'a str,
        feedback: &'a str,
    },
}

/// speed's verdict, why, and the feedback a request for changes carries.
#[derive(Debug, Clone)]
pub struct Ruling {
    pub verdict: Kind,
    /// Every rule that overruled an approval, in the order applied.
    pub overrules: Vec<Overrule>,
    /// Written to the task file with a request for changes.
    pub feedback: Option<String>,
    /// The quality scores and which pass criteria hold; None without
    /// dimensions (or a model).
    pub scores: Option<Scores>,
}

impl Ruling {
    pub fn approves(&self) -> bool {
        self.verdict == Kind::Approve
    }
}

/// The one place where an approval is overruled: the model's rules and the
/// defect rules (already in `checked.decision`), then the quality scores,
/// then a blocking finding of speed's checks, then a guardian that
/// rejected it.
pub fn rule(checked: &Checked, checks: &[Finding], guardian: Guardian) -> Ruling {
    let decision = &checked.decision;
    let mut verdict = decision.final_verdict;
    let mut overrules = decision.overrules.clone();
    let mut feedback = verdict::feedback(&checked.answer, decision);
    let blocking: Vec<&Finding> = checks.iter().filter(|f| f.blocking()).collect();
    let mut scores = checked.scores.clone();
    if let Some(scores) = &mut scores {
        let added = decision
            .added_issues
            .iter()
            .any(|i| i.severity.is_blocking());
        let met = &mut scores.pass_criteria_met;
        met.no_blocking_issues &= blocking.is_empty() && !added;
        // The model's ratings are held to speed's thresholds, not the
        // model's: an approval with a critical dimension at 40 falls.
        let below = scores.overrules();
        if decision.model == Kind::Approve && !below.is_empty() {
            overrules.extend(below);
            verdict = Kind::RequestChanges;
        }
        if let Some(low) = scores.feedback() {
            feedback = format!("{}\n\n{low}", feedback.trim_end())
                .trim_start()
                .to_string();
        }
    }
    if verdict == Kind::Approve && !blocking.is_empty() {
        overrules.push(Overrule {
            rule: Rule::CheckFailed,
            reason: format!(
                "speed's checks found {} blocking problem{}: {}",
                blocking.len(),
                if blocking.len() == 1 { "" } else { "s" },
                blocking
                    .iter()
                    .map(|f| describe(f))
                    .collect::<Vec<_>>()
                    .join("; ")
            ),
        });
        verdict = Kind::RequestChanges;
    }
    if let (
        Kind::Approve,
        Guardian::Rejected {
            summary,
            feedback: said,
        },
    ) = (verdict, guardian)
    {
        overrules.push(Overrule {
            rule: Rule::GuardianRejected,
            reason: format!("the guardian rejected the approval: {summary}"),
        });
        verdict = Kind::RequestChanges;
        feedback = said.to_string();
    }
    // A request for changes that names nothing blocking is kept, and the
    // developer is told that the reviewer gave no reason (after a
    // reconcile turn: even when asked).
    if decision.model == Kind::RequestChanges
        && blocking.is_empty()
        && !verdict::reconcile::names_a_reason(&checked.answer, scores.as_ref())
    {
        let none = verdict::reconcile::gave_no_reason(checked.asked_for_a_reason);
        feedback = match feedback.trim() {
            NO_SPECIFIC_ISSUES => format!("{none}\n"),
            listed => format!("{none}\n\n{listed}\n"),
        };
    }
    let feedback = (verdict != Kind::Approve).then(|| {
        if !blocking.is_empty() {
            feedback.push_str(&check_feedback(&blocking));
        }
        match replan(&checked.answer) {
            Some(why) => format!("{why}\n\n{}", feedback.trim_start()),
            None => feedback,
        }
    });
    Ruling {
        verdict,
        overrules,
        feedback,
        scores,
    }
}

/// What `verdict::feedback` says of an answer that lists nothing.
const NO_SPECIFIC_ISSUES: &str = "The review reported no specific issues.";

/// A rejection of the plan is addressed to whoever plans the task: its
/// feedback opens saying so (the task file's `replan` says it too).
fn replan(answer: &Verdict) -> Option<String> {
    let rejection = answer.rejection.as_ref()?;
    let asked =
        answer.verdict == Kind::RequestChanges && rejection.kind == verdict::RejectionKind::Plan;
    asked.then(|| {
        let reason = rejection.reason.trim();
        format!(
            "Re-plan: the review rejects the task's plan, not only its implementation, so whoever plans the task must revise it before the work is tried again.{}",
            if reason.is_empty() {
                String::new()
            } else {
                format!("\nWhy: {reason}")
            }
        )
    })
}

/// An offline review: speed's checks alone decide. A blocking finding (or
/// a defect fix outside its scope, or passing by a changed test) requests
/// changes; otherwise the checks passed, which is not an approval: no one
/// compared the work with the spec.
pub fn offline(checks: &[Finding], defect: Option<&defects::Findings>) -> Ruling {
    let blocking: Vec<&Finding> = checks.iter().filter(|f| f.blocking()).collect();
    let defect = defect.map(defect_feedback).unwrap_or_default();
    if blocking.is_empty() && defect.is_empty() {
        return Ruling {
            verdict: Kind::ChecksPassed,
            overrules: Vec::new(),
            feedback: None,
            scores: None,
        };
    }
    let checks = if blocking.is_empty() {
        String::new()
    } else {
        check_feedback(&blocking)
    };
    Ruling {
        verdict: Kind::RequestChanges,
        overrules: Vec::new(),
        feedback: Some(format!("{defect}{checks}").trim_start().to_string()),
        scores: None,
    }
}

/// A branch with no changes: nothing was implemented, so changes are
/// requested without asking a model; the `empty_diff` finding says so
/// unless that check is off.
pub fn nothing_implemented(
    ctx: &Context,
    subject: &Subject,
    resolved: &Resolved,
) -> (Option<Finding>, Ruling) {
    let finding = ctx
        .config
        .checks
        .severity(Check::EmptyDiff)
        .map(|severity| Finding {
            check: Check::EmptyDiff.name().to_string(),
            severity,
            file: None,
            line: None,
            message: format!(
                "{}: the branch does not differ from its base.",
                work::NOTHING_IMPLEMENTED
            ),
            ..Finding::default()
        });
    let what = match subject {
        Subject::Defect(_) => "Commit the fix of the defect on this branch.",
        _ => "Implement the task on this branch and commit the work.",
    };
    let ruling = Ruling {
        verdict: Kind::RequestChanges,
        overrules: Vec::new(),
        feedback: Some(format!(
            "{}: branch {} has no changes against its base {} ({}). {what}",
            work::NOTHING_IMPLEMENTED,
            resolved.branch,
            short(&resolved.base.commit),
            resolved.base.how
        )),
        scores: None,
    };
    (finding, ruling)
}

/// The facts the defect rules apply.
fn defect_facts(found: &defects::Findings) -> verdict::defect::Facts {
    verdict::defect::Facts {
        scope_violations: found
            .scope_violations
            .iter()
            .map(|v| (v.file.clone(), v.description.clone()))
            .collect(),
        test_changes: found
            .test_changes
            .iter()
            .map(|c| (c.path.clone(), c.description.clone()))
            .collect(),
    }
}

/// What an offline review of a defect fix holds against it: speed's own
/// findings, as feedback (empty when there is none).
fn defect_feedback(found: &defects::Findings) -> String {
    let facts = defect_facts(found);
    if facts.scope_violations.is_empty() && facts.test_changes.is_empty() {
        return String::new();
    }
    let mut out = String::from("speed's own findings on this defect fix block it:\n");
    for (_, why) in facts.scope_violations.iter().chain(&facts.test_changes) {
        out.push_str(&format!("- {why}\n"));
    }
    out
}

/// `check (severity) file:line: message`, one finding on one line.
fn describe(f: &Finding) -> String {
    let text = f.text();
    let first = text.lines().next().unwrap_or("");
    match f.location() {
        Some(at) => format!("{} ({}) {at}: {first}", f.check, f.severity.as_str()),
        None => format!("{} ({}): {first}", f.check, f.severity.as_str()),
    }
}

/// The blocking findings as feedback a developer can act on.
fn check_feedback(blocking: &[&Finding]) -> String {
    let mut out = String::from("\n\nspeed's own checks found problems that block approval:\n");
    for f in blocking {
        out.push_str(&format!("- {}\n", describe(f)));
        // A command's output tail follows its first line.
        for line in f.message.lines().skip(1) {
            out.push_str(&format!("    {line}\n"));
        }
    }
    out
}

/// Findings sorted worst first, as a report lists them.
pub fn sorted(mut findings: Vec<Finding>) -> Vec<Finding> {
    checks::sort(&mut findings);
    findings
}
