//! The prompts of a review: the task, its criteria and notes, the earlier
//! reviews, the declared scope, the automated check results, the blast
//! radius and the spec sections, assembled within the token budget from
//! the templates, in parts when the diff does not fit one prompt (`split`),
//! and the guardian's prompt built from exactly the same inputs.

mod revision;
mod split;

use crate::checks::Finding;
use crate::checks::measure::Size;
use crate::defects::{self, Defect};
use crate::git::{Diff, short};
use crate::impact;
use crate::prompt::{self, Coverage, Prompt, SectionAccount};
use crate::secrets::net::Leak;
use crate::specs::{Document, Section};
use crate::tasks;
use crate::verdict;
use crate::work::{Resolved, Subject};

use super::Error;
use super::context::Context;
use super::facts::Facts;
use super::net;
use super::previous::Rereview;
use super::sources::Sources;

/// The prompts of a review: its inputs, owned (the guardian's prompt is
/// built from exactly what the review saw), the prompt of each part, what
/// of the diff they show, and the spec sections they hold.
pub struct Composed {
    pub parts: Parts,
    /// One prompt per part, in order, after the safety net; the whole
    /// prompt alone when the diff fits it.
    pub prompts: Vec<Prompt>,
    /// What of the diff the prompts showed, together.
    pub coverage: Coverage,
    /// The files each prompt showed, prompt by prompt.
    pub shown: Vec<Vec<prompt::ShownFile>>,
    /// The spec sections some part's prompt holds: the only text a quote
    /// may come from.
    pub sent: Vec<(String, Section)>,
    /// The vision text some part's prompt holds, as sections of the vision
    /// file (a sentence sent alone is a section of its own, under its
    /// heading): a quote of it is checked like a spec quote, and is a quote
    /// of the vision, not of the spec.
    pub vision_sent: Vec<(String, Section)>,
    /// The (document, heading path) of the sections the whole prompt holds:
    /// what the guardian is shown.
    pub sent_headings: Vec<(String, String)>,
    /// Of the spec sections the whole prompt holds.
    pub spec_hash: String,
    /// The budget each prompt was assembled within.
    pub budget: usize,
    /// Secrets the safety net replaced in the prompts.
    pub leaks: Vec<Leak>,
}

impl Composed {
    /// Every part's prompt as one text, for the report file, the prompt
    /// hash and a dry run: the prompt itself when there is one part.
    pub fn text(&self) -> String {
        if let [only] = self.prompts.as_slice() {
            return only.text.clone();
        }
        let count = self.prompts.len();
        self.prompts
            .iter()
            .enumerate()
            .map(|(n, p)| format!("===== part {} of {count} =====\n{}", n + 1, p.text))
            .collect::<Vec<_>>()
            .join("\n\n")
    }

    /// Every part's token accounting, part after part, each section named
    /// with its part when there are several.
    pub fn sections(&self) -> Vec<SectionAccount> {
        let several = self.prompts.len() > 1;
        self.prompts
            .iter()
            .enumerate()
            .flat_map(|(n, p)| {
                p.sections.iter().cloned().map(move |mut s| {
                    if several {
                        s.name = format!("{} (part {})", s.name, n + 1);
                    }
                    s
                })
            })
            .collect()
    }

    /// speed's own count of every part's prompt, summed.
    pub fn tokens(&self) -> usize {
        self.prompts.iter().map(|p| p.total_tokens).sum()
    }
}

/// What a review's prompt is made from.
#[derive(Clone, Copy)]
pub struct Inputs<'a> {
    pub subject: &'a Subject,
    pub resolved: &'a Resolved,
    pub sources: &'a Sources,
    pub facts: &'a Facts,
    /// What the reviewer must know (the sources' and the facts').
    pub notices: &'a [String],
}

/// An incremental review's prompts, and what its report says of them.
pub struct Incremental {
    pub composed: Composed,
    pub notice: String,
}

/// A re-review's prompts showing only what changed since the last review
/// and that review's findings and ratings, when `--incremental` asks for
/// them or the whole change is too large for one prompt (`full` needs
/// parts or leaves code unseen) and they fit; None for a full review.
pub fn incremental(
    ctx: &Context,
    inputs: &Inputs,
    rereview: &mut Rereview,
    full: &Composed,
) -> Option<Incremental> {
    let too_large = full.prompts.len() > 1 || full.coverage.unseen().is_some();
    // A rewritten branch's interdiff compares two trees: it never stands
    // in for the whole change (`previous`).
    if !(ctx.config.incremental || too_large)
        || rereview.interdiff.files.is_empty()
        || rereview.rewritten
    {
        return None;
    }
    // The same stages over the interdiff: the diff the prompt shows, and
    // the coverage of what the model saw, are its.
    let resolved = Resolved {
        branch: inputs.resolved.branch.clone(),
        base: inputs.resolved.base.clone(),
        diff: rereview.interdiff.clone(),
        dependencies: inputs.resolved.dependencies.clone(),
        notices: inputs.resolved.notices.clone(),
    };
    let mut notices = inputs.notices.to_vec();
    notices.extend(rereview.summary_lines());
    let shown = Inputs {
        resolved: &resolved,
        notices: &notices,
        ..*inputs
    };
    let mut shown_only = rereview.clone();
    // The interdiff is the diff of this prompt: not shown twice.
    shown_only.interdiff.files.clear();
    let composed = compose(ctx, &shown, Some(&shown_only)).ok()?;
    if composed.prompts.len() > 1 && !ctx.config.incremental {
        // Too large even so: the full review in parts sees more.
        return None;
    }
    rereview.incremental = true;
    let why = if ctx.config.incremental {
        "--incremental"
    } else {
        "the whole change does not fit one prompt"
    };
    Some(Incremental {
        composed,
        notice: format!(
            "Incremental review ({why}): the model saw what changed since the last review at {} ({} files) and that review's findings and ratings, not the whole change; {} reviewed the change up to that head.",
            short(&rereview.previous_head),
            rereview.interdiff.files.len(),
            rereview.previous_report
        ),
    })
}

/// Assemble the review's prompt from the subject, its sources and its
/// facts within the budget, split it into parts when the diff does not fit
/// one, and net it for secrets. `notices` are what the reviewer must know
/// (the sources' and the facts', in that order).
pub fn compose(
    ctx: &Context,
    inputs: &Inputs,
    rereview: Option<&Rereview>,
) -> Result<Composed, Error> {
    let Inputs {
        subject,
        resolved,
        sources,
        facts,
        notices,
    } = *inputs;
    let diff = &resolved.diff;
    let scope = subject.scope();
    let parts = Parts {
        kind: match subject {
            Subject::Defect(_) => prompt::Kind::Defect,
            _ => prompt::Kind::Review,
        },
        task: prompt_task(
            subject,
            &resolved.branch,
            &resolved.base.commit,
            &diff.head_commit,
        ),
        criteria: prompt_criteria(subject),
        task_notes: task_notes(subject, &resolved.dependencies),
        previous_review: previous_review(subject),
        previous_findings: rereview.map(Rereview::finding_lines).unwrap_or_default(),
        interdiff: rereview.map(Rereview::interdiff_items).unwrap_or_default(),
        scope: prompt::Scope {
            touched: scope.touched.clone(),
            to_create: scope.create.clone(),
            to_modify: scope.modify.clone(),
            to_delete: scope.delete.clone(),
        },
        gates: subject
            .task()
            .map(|t| {
                t.gate_checks
                    .iter()
                    .map(|g| prompt::GateCheck {
                        name: g.name.clone(),
                        status: g.status.clone(),
                        note: g.note.clone(),
                    })
                    .collect::<Vec<_>>()
            })
            .unwrap_or_default()
            .into_iter()
            .chain(gate_checks(&facts.checks))
            .collect(),
        assumptions: subject
            .task()
            .map(|t| t.assumptions.clone())
            .unwrap_or_default(),
        notices: notices.to_vec(),
        cross_cutting: sources.cross_cutting.clone(),
        // The rows of the symbols this diff changes: all of them, or in an
        // incremental review those the interdiff changes.
        impact: facts.impact.as_ref().map(|impact| {
            impact_rows(impact)
                .into_iter()
                .filter(|row| diff.files.iter().any(|f| f.path == row.file))
                .collect()
        }),
        defect: match (subject, &facts.defect) {
            (Subject::Defect(review), Some(found)) => Some(defect_prompt(&review.defect, found)),
            _ => None,
        },
        vision: review_vision(sources),
        scoring: prompt_scoring(ctx, sources),
    };
    let schema = serde_json::to_string(&verdict_schema(parts.kind, &dimensions(ctx, sources)))
        .unwrap_or_default();
    let input = parts.input(
        parts.kind,
        diff,
        sources.spec_sections.clone(),
        parts.vision.clone(),
        &schema,
    );
    let counter = ctx.counter.get()?;
    // An offline review sends no prompt: a change too large for the budget
    // (Django 5.0 → 5.1 lists 966 files) is still checked, and its prompt
    // still hashed for the log, in the budget it needs.
    let mut budget = ctx.config.budget;
    let whole = loop {
        match prompt::assemble(&input, counter, budget, &ctx.templates) {
            Err(
                prompt::Error::ProtectedTooLarge { needed, .. }
                | prompt::Error::NoRoomForCode { needed, .. },
            ) if ctx.sends_nothing() && needed > budget => budget = needed,
            other => break other?,
        }
    };
    let documents = sources.documents();
    let sent_whole = sent_sections(&documents, &whole);
    let spec_hash = crate::digest::sha256_text(
        &sent_whole
            .iter()
            .map(|(path, s)| format!("{path}\n{}\n", s.text))
            .collect::<String>(),
    );
    let sent_headings = whole.sent_sections.clone();
    let budget = whole.budget;
    let split::Split {
        mut prompts,
        coverage,
    } = split::split(
        ctx,
        &parts,
        diff,
        &sources.spec_sections,
        &|identifiers: &[String]| sources.spec_sections_for(identifiers),
        whole,
        &schema,
    )?;
    let shown = prompt::shown_by_part(diff, prompts.iter().map(|p| p.rest.as_ref()));
    let sent = if prompts.len() == 1 {
        sent_whole
    } else {
        let mut sent: Vec<(String, Section)> = Vec::new();
        for p in &prompts {
            for (path, section) in sent_sections(&documents, p) {
                // The same section (or rule) sent by several parts is one
                // passage; a rule is told from its section by its text.
                let known = sent.iter().any(|(q, s)| {
                    *q == path
                        && s.heading_path() == section.heading_path()
                        && s.start_line == section.start_line
                        && s.text == section.text
                });
                if !known {
                    sent.push((path, section));
                }
            }
        }
        sent
    };
    let vision_sent = vision_sent(parts.vision.as_ref(), &prompts);
    // The safety net, before anything is shown, sent or kept.
    let leaks = net::prompts(&mut prompts);
    Ok(Composed {
        parts,
        prompts,
        coverage,
        shown,
        sent,
        vision_sent,
        sent_headings,
        spec_hash,
        budget,
        leaks,
    })
}

/// The vision a review prompt may carry: none when it is also one of the
/// review's specs (its text is then spec text).
fn review_vision(sources: &Sources) -> Option<prompt::Vision> {
    sources
        .vision
        .clone()
        .filter(|v| !sources.specs.iter().any(|s| s.document.path == v.doc_path))
}

/// The vision text the prompts hold, as sections of the vision file: the
/// whole file's sections, or each sentence sent as a section of its own
/// under the heading it stands under.
fn vision_sent(vision: Option<&prompt::Vision>, prompts: &[Prompt]) -> Vec<(String, Section)> {
    let Some(vision) = vision else {
        return Vec::new();
    };
    let doc = crate::specs::parse(&vision.doc_path, &vision.text);
    let mut out: Vec<(String, Section)> = Vec::new();
    for piece in prompts.iter().flat_map(|p| &p.sent_vision) {
        let sections: Vec<Section> = if piece.text == vision.text {
            doc.sections.clone()
        } else {
            let under = doc
                .sections
                .iter()
                .rfind(|s| s.start_line <= piece.line)
                .or(doc.sections.first());
            vec![Section {
                titles: under.map(|s| s.titles.clone()).unwrap_or_default(),
                level: under.map_or(0, |s| s.level),
                start_line: piece.line,
                end_line: piece.line,
                text: piece.text.clone(),
            }]
        };
        for section in sections {
            let known = out
                .iter()
                .any(|(_, s)| s.start_line == section.start_line && s.text == section.text);
            if !known {
                out.push((vision.doc_path.clone(), section));
            }
        }
    }
    out
}

/// The owned inputs of a prompt, kept so the guardian's prompt is built from
/// exactly what the review saw.
#[derive(Debug, Clone)]
pub struct Parts {
    /// The review's prompt: `Review`, or `Defect` for a defect fix.
    pub kind: prompt::Kind,
    pub task: prompt::Task,
    pub criteria: Vec<prompt::Criterion>,
    /// The developer's decisions and concerns, and the dependencies.
    pub task_notes: Vec<String>,
    /// The attempt number, the latest feedback and earlier reviews.
    pub previous_review: Vec<String>,
    /// A re-review: the previous review's blocking findings (PF-1, …) and
    /// what changed since its head, numbered like the diff.
    pub previous_findings: Vec<String>,
    pub interdiff: Vec<String>,
    pub scope: prompt::Scope,
    pub gates: Vec<prompt::GateCheck>,
    pub assumptions: Vec<String>,
    pub notices: Vec<String>,
    pub cross_cutting: Vec<String>,
    pub impact: Option<Vec<prompt::ImpactRow>>,
    /// The report, triage, guidance and findings of a defect fix.
    pub defect: Option<prompt::Defect>,
    /// The vision the review's prompts carry (the guardian reads it its
    /// own way).
    pub vision: Option<prompt::Vision>,
    /// The dimensions the review rates, their minimums and the pass score,
    /// as the review's instructions state them.
    pub scoring: prompt::Scoring,
}

impl Parts {
    pub fn input<'a>(
        &self,
        kind: prompt::Kind,
        diff: &'a Diff,
        spec: Vec<prompt::SpecSection>,
        vision: Option<prompt::Vision>,
        schema: &'a str,
    ) -> prompt::Input<'a> {
        prompt::Input {
            kind,
            task: self.task.clone(),
            criteria: self.criteria.clone(),
            task_notes: self.task_notes.clone(),
            previous_review: self.previous_review.clone(),
            previous_findings: self.previous_findings.clone(),
            interdiff: self.interdiff.clone(),
            scope: self.scope.clone(),
            gates: self.gates.clone(),
            assumptions: self.assumptions.clone(),
            notices: self.notices.clone(),
            diff,
            spec,
            cross_cutting: self.cross_cutting.clone(),
            impact: self.impact.clone(),
            vision,
            schema,
            scoring: (kind != prompt::Kind::Guardian).then(|| self.scoring.clone()),
            defect: self.defect.clone(),
            part: None,
        }
    }
}

fn prompt_task(subject: &Subject, branch: &str, base: &str, head: &str) -> prompt::Task {
    let mut task = prompt::Task {
        branch: branch.to_string(),
        base_commit: short(base).to_string(),
        head_commit: short(head).to_string(),
        ..prompt::Task::default()
    };
    match subject {
        Subject::Task(t) => {
            task.id = t.id.clone();
            task.title = t.title.clone();
            task.feature = t.feature.clone();
            task.description = t.description.clone();
            task.rationale = t.rationale.clone();
        }
        Subject::Branch { branch, .. } => {
            task.id = format!("branch {branch}");
            task.title = format!("Changes on {branch}");
            task.description =
                "No task file: review this branch against the spec sections given.".to_string();
        }
        Subject::Defect(review) => return defect_task(&review.defect, branch, base, head),
    }
    task
}

fn prompt_criteria(subject: &Subject) -> Vec<prompt::Criterion> {
    subject
        .criteria()
        .iter()
        .map(|c| prompt::Criterion {
            id: c.id.clone(),
            text: c.text.clone(),
            verify_by: c.verify_by.clone().unwrap_or_default(),
        })
        .collect()
}

/// What the developer noted while working (decisions, concerns) and what
/// the task builds on, one item each.
fn task_notes(subject: &Subject, dependencies: &[String]) -> Vec<String> {
    let Some(task) = subject.task() else {
        return Vec::new();
    };
    let mut notes = Vec::new();
    notes.extend(task.decisions.iter().map(|d| format!("Decision: {d}")));
    notes.extend(task.concerns.iter().map(|c| format!("Concern: {c}")));
    notes.extend(dependencies.iter().map(|d| format!("Depends on {d}")));
    notes
}

/// What a re-review needs: which attempt this is, the feedback the last
/// review gave (each point must have been addressed), and the earlier
/// reviews, newest first.
fn previous_review(subject: &Subject) -> Vec<String> {
    let Some(task) = subject.task() else {
        return Vec::new();
    };
    let attempt = task.attempt();
    let mut items = vec![if attempt == 1 && task.review_feedback.is_none() {
        "First attempt at this task: no earlier review.".to_string()
    } else {
        format!(
            "This is attempt {attempt} at this task (retry_count {}, revision_count {}).",
            task.retry_count, task.revision_count
        )
    }];
    if let Some(feedback) = &task.review_feedback {
        items.push(format!(
            "Feedback of the last review, which this attempt had to address:\n{feedback}"
        ));
    }
    items.extend(revision::items(
        task.raw.get("revision_context"),
        task.review_feedback.as_deref(),
    ));
    items.extend(task.review_history.iter().rev().map(|entry| {
        format!(
            "Earlier review: {}",
            tasks::state::describe_history_entry(entry)
        )
    }));
    items
}

fn impact_rows(impact: &impact::Impact) -> Vec<prompt::ImpactRow> {
    // `rows` is `symbols` in the same order, formatted for the table.
    impact
        .rows()
        .into_iter()
        .zip(&impact.symbols)
        .map(|(row, changed)| prompt::ImpactRow {
            symbol: row.symbol,
            name: changed.symbol.clone(),
            file: changed.file.clone(),
            kind: serde_json::to_value(row.kind)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default(),
            change: if row.breaking {
                format!("{} (breaking)", row.change)
            } else {
                row.change.to_string()
            },
            dependents: row.dependents,
            dependent_files: row.files,
            stability: row.stability.to_string(),
            top: row.top,
        })
        .collect()
}

/// The findings as the prompt's automated check results.
fn gate_checks(findings: &[Finding]) -> Vec<prompt::GateCheck> {
    findings
        .iter()
        .map(|f| prompt::GateCheck {
            name: format!("speed check: {}", f.check),
            status: f.severity.as_str().to_string(),
            note: match f.location() {
                Some(at) => format!("{at}: {}", f.text()),
                None => f.text(),
            },
        })
        .collect()
}

/// The schema the review's answer must match: a defect fix's verdict must
/// also carry its scope check; every verdict rates the dimensions asked.
pub fn verdict_schema(kind: prompt::Kind, dimensions: &[&verdict::Dimension]) -> serde_json::Value {
    let schema = match kind {
        prompt::Kind::Defect => verdict::defect::json_schema(),
        // A re-review's previous findings, or an empty list: asked of every
        // review, so the schema reads the same in every prompt.
        _ => verdict::previous::with_previous(verdict::json_schema()),
    };
    let asked: Vec<(&str, &str)> = dimensions
        .iter()
        .map(|d| (d.name.as_str(), d.description.as_str()))
        .collect();
    verdict::with_dimensions(schema, &asked)
}

/// The dimensions the review asks to be rated, with their minimums, and
/// the pass score: what its instructions state decides.
fn prompt_scoring(ctx: &Context, sources: &Sources) -> prompt::Scoring {
    prompt::Scoring {
        dimensions: dimensions(ctx, sources)
            .into_iter()
            .map(|d| prompt::Rating {
                name: d.name.clone(),
                description: d.description.clone(),
                weight: d.weight,
                min_score: d.min_score,
            })
            .collect(),
        pass_score: ctx.config.scoring.pass_score,
    }
}

/// The quality dimensions the review asks the model to rate: coordination
/// compliance only when coordination requirements exist.
pub fn dimensions<'c>(ctx: &'c Context, sources: &Sources) -> Vec<&'c verdict::Dimension> {
    ctx.config.scoring.asked(!sources.coordination.is_empty())
}

/// The spec text `prompt` holds, as parsed sections: the only text its
/// quotes may come from. A section sent whole is itself; a rule sent alone
/// (its section not sent whole) is a section of its own, its text the
/// sentence as sent, at its line, under its section's headings.
fn sent_sections(documents: &[Document], prompt: &Prompt) -> Vec<(String, Section)> {
    let mut out = Vec::new();
    for (doc_path, heading) in &prompt.sent_sections {
        if let Some(doc) = documents.iter().find(|d| &d.path == doc_path) {
            if let Some(section) = doc.sections.iter().find(|s| &s.heading_path() == heading) {
                out.push((doc_path.clone(), section.clone()));
            }
        }
    }
    for rule in &prompt.sent_rules {
        let Some(doc) = documents.iter().find(|d| d.path == rule.doc_path) else {
            continue;
        };
        let Some(section) = doc
            .sections
            .iter()
            .find(|s| s.heading_path() == rule.heading_path)
        else {
            continue;
        };
        out.push((
            rule.doc_path.clone(),
            Section {
                titles: section.titles.clone(),
                level: section.level,
                start_line: rule.line,
                end_line: rule.line,
                text: rule.text.clone(),
            },
        ));
    }
    out
}

/// The guardian's prompt: the vision, the spec sections the review sent, the
/// task and its criteria, and the diff ranked and trimmed the same way, in
/// the guardian's own budget.
pub fn guardian_prompt(
    ctx: &Context,
    subject: &Subject,
    diff: &Diff,
    sources: &Sources,
    facts: &Facts,
    composed: &Composed,
) -> Result<Prompt, Error> {
    let vision_path = ctx.config.guardian.vision_file.clone();
    let vision = sources.vision.clone();
    let mut parts = composed.parts.clone();
    if let (Subject::Defect(review), Some(found)) = (subject, &facts.defect) {
        parts
            .notices
            .push(guardian_notice(&review.defect, &found.size));
    }
    if vision.is_none() {
        parts.notices.push(format!(
            "No product vision: {vision_path} does not exist on {}. Judge alignment from the spec sections.",
            ctx.main().name
        ));
    }
    let sent: Vec<prompt::SpecSection> = sources
        .spec_sections
        .iter()
        .filter(|s| {
            composed
                .sent_headings
                .iter()
                .any(|(path, heading)| path == &s.doc_path && heading == &s.heading_path)
        })
        .cloned()
        .collect();
    let schema = serde_json::to_string(&verdict::guardian_json_schema()).unwrap_or_default();
    let input = parts.input(prompt::Kind::Guardian, diff, sent, vision, &schema);
    Ok(prompt::assemble(
        &input,
        ctx.counter.get()?,
        ctx.config.guardian.budget,
        &ctx.templates,
    )?)
}

/// The defect as the prompt's task block shows it.
fn defect_task(defect: &Defect, branch: &str, base: &str, head: &str) -> prompt::Task {
    let report = &defect.report;
    let mut facts = vec![format!("defect folder: {}", defect.dir.display())];
    if let Some(severity) = &report.severity_label {
        facts.push(format!("severity: {severity}"));
    }
    if let Some(complexity) = defect.complexity() {
        facts.push(format!("complexity: {complexity}"));
    }
    if let Some(status) = defect.status() {
        facts.push(format!("status: {status}"));
    }
    if !report.related_features.is_empty() {
        facts.push(format!(
            "related features: {}",
            report.related_features.join(", ")
        ));
    }
    prompt::Task {
        id: format!("defect {}", defect.name),
        title: if report.title.is_empty() {
            defect.name.clone()
        } else {
            report.title.clone()
        },
        feature: None,
        branch: branch.to_string(),
        base_commit: crate::git::short(base).to_string(),
        head_commit: crate::git::short(head).to_string(),
        description: facts.join("\n"),
        rationale: "Fix the defect the report describes, and nothing else.".to_string(),
    }
}

/// The report, the triage and the guidance for the prompt.
fn defect_prompt(defect: &Defect, findings: &defects::Findings) -> prompt::Defect {
    prompt::Defect {
        report: defect.report_text.clone(),
        triage: serde_json::to_string_pretty(&defect.triage.raw).unwrap_or_default(),
        guidance: defect.context.clone().unwrap_or_default(),
        determinations: findings.lines(defect),
    }
}

/// The question the guardian is asked about a large fix.
fn guardian_notice(defect: &Defect, size: &Size) -> String {
    format!(
        "Defect-fix scope check: this is the fix of defect {}, and it is large for a fix: {}. Is this fix staying in scope? A fix corrects the defect and nothing else: reject feature additions, refactoring, new behaviour or changes the defect does not need, and say what to take out.",
        defect.name,
        size.describe()
    )
}
