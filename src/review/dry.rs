//! Dry runs: everything up to the model call, and nothing written.

use super::prepare::{self, Shared, Subject};
use super::split;
use crate::prompt::{Coverage, SectionAccount};
use crate::tasks::Criterion;

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

pub struct DryPrompt {
    pub base_commit: String,
    pub head_commit: String,
    /// Every part's prompt, one after the other when the diff needs more
    /// than one.
    pub prompt: String,
    /// Summed over the parts; each part is within the budget.
    pub total_tokens: usize,
    pub budget: usize,
    pub tokenizer: String,
    /// Every part's sections, part after part.
    pub sections: Vec<SectionAccount>,
    pub parts: usize,
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
    pub defect: Option<super::defect::Findings>,
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
    pub fn unreadable(report: &super::Report) -> DryRun {
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

pub fn dry_run(shared: &Shared, subject: Subject) -> DryRun {
    let task = subject.task();
    let task_id = task.map(|t| t.id.clone());
    let feature = task.and_then(|t| t.feature.clone());
    let branch = subject.branch().to_string();
    let defect = subject.defect().map(|review| review.defect.name.clone());
    let prepared = prepare::prepare(shared, subject);
    let nothing_implemented = matches!(prepared, Err(super::Error::EmptyDiff { .. }));
    let result = prepared
        .and_then(|p| split::split(shared, &p).map(|s| (p, s)))
        .map(|(mut p, mut split)| {
            // The safety net, as before a review's model call: what it
            // finds is replaced and listed with the checks.
            let leaks = super::guard::net_prompts(&mut split.prompts);
            let mut checks = std::mem::take(&mut p.checks);
            checks.extend(super::guard::leak_findings(&shared.settings.checks, &leaks));
            crate::checks::sort(&mut checks);
            (p, split, checks)
        })
        .map(|(p, split, checks)| DryPrompt {
            // As the review reads them: redacted.
            criteria: p.subject.criteria().to_vec(),
            base_commit: p.base_commit,
            head_commit: p.head_commit,
            total_tokens: split.prompts.iter().map(|p| p.total_tokens).sum(),
            budget: p.prompt.budget,
            tokenizer: shared.settings.tokenizer.clone(),
            sections: split.sections(),
            parts: split.prompts.len(),
            prompt_hash: prepare::sha256(&split.text()),
            prompt: split.text(),
            coverage: split.coverage,
            diff_hash: p.diff.sha256,
            spec_hash: p.spec_hash,
            notices: shared
                .settings
                .report_notices
                .iter()
                .cloned()
                .chain(p.notices)
                .collect(),
            impact: p.impact,
            defect: p.defect,
            checks,
            redactions: p.redactions,
        })
        .map_err(|e| e.to_string());
    DryRun {
        task_id,
        defect,
        feature,
        branch,
        result,
        nothing_implemented,
    }
}
