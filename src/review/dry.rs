//! Dry runs: everything up to the model call, and nothing written.

use crate::git::short;
use crate::ledger::Report;
use crate::prompt::{Coverage, SectionAccount};
use crate::tasks::Criterion;
use crate::work::Subject;

use super::context::Context;
use super::net;
use super::prepare::{self, Prepared, Read};

pub struct DryRun {
    pub task_id: Option<String>,
    /// The defect whose fix this dry run prepared.
    pub defect: Option<String>,
    pub feature: Option<String>,
    pub branch: String,
    pub result: Result<DryPrompt, String>,
    /// The branch holds no changes: the review would request changes
    /// without a model, so this is not an error (`result` says why).
    pub nothing_implemented: bool,
}

/// One part's prompt, as `--dry-run --json` lists it.
#[derive(Debug, Clone, serde::Serialize)]
pub struct DryPart {
    /// 1-based.
    pub index: usize,
    pub tokens: usize,
    pub files: usize,
    /// The tokens of its stable part (instructions, schema, spec, vision,
    /// constraints): the prefix the reviews of a feature share.
    pub stable_tokens: usize,
    /// The files whose changes it shows, each whole or some hunks.
    pub shown: Vec<crate::prompt::ShownFile>,
}

pub struct DryPrompt {
    pub base_commit: String,
    pub head_commit: String,
    /// Every part's prompt, one after the other when the diff needs more
    /// than one.
    pub prompt: String,
    /// Summed over the parts; each part is within the budget.
    pub total_tokens: usize,
    pub budget: usize,
    /// Each part's prompt: its tokens (within the budget) and the files
    /// whose changes it shows.
    pub part_list: Vec<DryPart>,
    pub tokenizer: String,
    /// Every part's sections, part after part.
    pub sections: Vec<SectionAccount>,
    pub parts: usize,
    /// `review.max_parts`: the most prompts a review may use.
    pub max_parts: usize,
    pub coverage: Coverage,
    pub diff_hash: String,
    pub spec_hash: String,
    pub prompt_hash: String,
    pub notices: Vec<String>,
    /// The acceptance criteria as speed understood them and the prompt
    /// lists them.
    pub criteria: Vec<Criterion>,
    /// The changed symbols with their blast radius (None if it could not be
    /// computed; the notices say why).
    pub impact: Option<crate::impact::Impact>,
    /// What speed established about a defect fix.
    pub defect: Option<crate::defects::Findings>,
    /// speed's own checks, as the review would report them.
    pub checks: Vec<crate::checks::Finding>,
    pub redactions: Vec<crate::secrets::Redaction>,
}

impl DryRun {
    /// Whether this dry run found a problem the real review would fail on.
    pub fn failed(&self) -> bool {
        self.result.is_err() && !self.nothing_implemented
    }

    /// A task that could not be read, for the dry run's output.
    pub fn unreadable(report: &Report) -> DryRun {
        DryRun {
            task_id: report.task_id.clone(),
            defect: report.defect.as_ref().map(|d| d.name.clone()),
            feature: report.feature.clone(),
            branch: report.branch.clone(),
            result: Err(report.error.clone().unwrap_or_default()),
            nothing_implemented: false,
        }
    }
}

pub fn dry_run(ctx: &Context, subject: Subject) -> DryRun {
    let task = subject.task();
    let task_id = task.map(|t| t.id.clone());
    let feature = task.and_then(|t| t.feature.clone());
    let branch = subject.branch().to_string();
    let defect = subject.defect().map(|review| review.defect.name.clone());
    let label = subject.label();
    let prepared = prepare::read(ctx, subject).and_then(|read| match read {
        Read::Inputs(inputs) => prepare::prepare(ctx, *inputs).map(Ok),
        Read::NothingImplemented(empty) => Ok(Err(empty.resolved)),
    });
    let (result, nothing_implemented) = match prepared {
        Ok(Ok(prepared)) => (Ok(dry_prompt(ctx, prepared)), false),
        Ok(Err(resolved)) => (
            Err(format!(
                "{label}: the diff between {} and {} is empty: nothing was implemented",
                short(&resolved.base.commit),
                resolved.branch
            )),
            true,
        ),
        Err(err) => (Err(err.to_string()), false),
    };
    DryRun {
        task_id,
        defect,
        feature,
        branch,
        result,
        nothing_implemented,
    }
}

/// What a dry run shows of a prepared review: the safety net's findings in
/// the prompts are listed with the checks, as a review would report them.
fn dry_prompt(ctx: &Context, p: Prepared) -> DryPrompt {
    let composed = p.composed;
    let mut checks = p.facts.checks;
    checks.extend(net::leak_findings(&ctx.config.checks, &composed.leaks));
    crate::checks::sort(&mut checks);
    DryPrompt {
        // As the review reads them: redacted.
        criteria: p.subject.criteria().to_vec(),
        base_commit: p.resolved.base.commit,
        head_commit: p.resolved.diff.head_commit.clone(),
        total_tokens: composed.tokens(),
        budget: composed.budget,
        part_list: composed
            .prompts
            .iter()
            .enumerate()
            .map(|(n, p)| DryPart {
                index: n + 1,
                tokens: p.total_tokens,
                files: p.files_shown,
                stable_tokens: p.stable_tokens,
                shown: composed.shown.get(n).cloned().unwrap_or_default(),
            })
            .collect(),
        tokenizer: ctx.config.tokenizer.clone(),
        sections: composed.sections(),
        parts: composed.prompts.len(),
        max_parts: ctx.config.max_parts,
        prompt_hash: crate::digest::sha256_text(&composed.text()),
        prompt: composed.text(),
        coverage: composed.coverage,
        diff_hash: p.resolved.diff.sha256,
        spec_hash: composed.spec_hash,
        notices: ctx
            .config
            .report_notices
            .iter()
            .cloned()
            .chain(p.notices)
            .collect(),
        impact: p.facts.impact,
        defect: p.facts.defect,
        checks,
        redactions: p.facts.redactions,
    }
}
