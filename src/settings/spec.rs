//! `speed spec review`'s settings: `[spec_review]` resolved into the
//! spec review part's own `Config` (with its `Entry` for `speed config`),
//! and the command's flags applied over it, with the model, the budget and
//! the prompt templates a review would use.

use std::path::Path;
use std::time::Duration;

use serde_json::json;

use super::{Error, Recorder, Repo, Source, Values, file, locate, spec_arg};
use crate::cli::{SpecReviewArgs, ValueArgs};
use crate::spec_review::{self, Criterion, Job, Target};

/// What `speed spec review` runs with.
#[derive(Debug, Clone)]
pub struct SpecReviewSettings {
    pub job: Job,
    /// How the outcome is printed on stdout (human, json, sarif, junit,
    /// github).
    pub format: crate::render::Format,
    /// Why no model is asked although nobody said `--offline`.
    pub offline_note: Option<String>,
}

/// `[spec_review]` from the file, else the defaults.
pub(super) fn values(r: &mut Recorder, f: &file::SpecReview) -> spec_review::Config {
    let min_score = r.file(
        "spec_review.min_score",
        f.min_score,
        spec_review::DEFAULT_MIN_SCORE,
    );
    let criteria = match &f.criteria {
        Some(list) => list
            .iter()
            .map(|(name, description, min)| Criterion {
                name: name.clone(),
                description: description.clone(),
                min_score: min.unwrap_or(min_score),
            })
            .collect(),
        None => spec_review::default_criteria(min_score),
    };
    let source = match f.criteria {
        Some(_) => r.file.clone(),
        None => Source::Default,
    };
    let names: Vec<&str> = criteria.iter().map(|c| c.name.as_str()).collect();
    r.record("spec_review.criteria", &names, source.clone());
    // Then one line each in `speed config`: a description is a sentence.
    for c in &criteria {
        r.record(
            &format!("spec_review.criteria.{}", c.name),
            &json!({"description": c.description, "min_score": c.min_score}),
            source.clone(),
        );
    }
    spec_review::Config {
        criteria,
        min_score,
        max_iterations: r.file(
            "spec_review.max_iterations",
            f.max_iterations,
            spec_review::DEFAULT_MAX_ITERATIONS,
        ),
        reviser: r.file("spec_review.reviser", f.reviser.clone(), Vec::new()),
        // In range (checked by `file`), so this cannot panic.
        reviser_timeout: Duration::from_secs_f64(r.file(
            "spec_review.reviser_timeout_secs",
            f.reviser_timeout_secs,
            spec_review::DEFAULT_REVISER_TIMEOUT_SECS as f64,
        )),
    }
}

/// The command's settings: the configuration at main's commit (as for a
/// review), the flags over it, and paths made relative to the root.
pub(super) fn settings(
    args: SpecReviewArgs,
    located: locate::Located,
    repo: &dyn Repo,
    dir: &Path,
    env: &dyn Fn(&str) -> Option<String>,
    warnings: &mut Vec<String>,
) -> Result<SpecReviewSettings, Error> {
    let file = located
        .config
        .as_ref()
        .map(|(f, _)| f.clone())
        .unwrap_or_default();
    let flags = ValueArgs {
        offline: args.offline,
        ..ValueArgs::default()
    };
    let mut entries = Vec::new();
    let values = Values::resolve(
        &file,
        located.origin.as_ref(),
        &flags,
        env,
        &mut entries,
        warnings,
    );
    let main = located.main.as_ref().ok().map(|m| m.branch.commit.clone());
    let exists = |path: &str| {
        main.as_deref()
            .is_some_and(|commit| matches!(repo.read_file(commit, path), Ok(Some(_))))
            || repo.root().join(path).is_file()
    };
    let path = |arg: &String| spec_arg(arg, dir, repo.root(), &exists);
    let mut config = values.spec_review;
    if let Some(n) = args.max_iterations {
        config.max_iterations = n;
    }
    if !args.reviser.is_empty() {
        config.reviser = args.reviser;
    }
    let offline_note = values.llm.offline_note.clone().filter(|_| !args.offline);
    Ok(SpecReviewSettings {
        job: Job {
            config,
            llm: values.llm,
            target: Target {
                feature: args.feature,
                spec: args.spec.as_ref().map(path),
                prd: args.prd.as_ref().map(path),
                rev: args.rev,
            },
            resume: args.resume,
            dry_run: args.dry_run,
            budget: values.budget,
            tokenizer: values.tokenizer,
            actor: values.actor,
            prompts: located.templates,
        },
        format: args.format.into(),
        offline_note,
    })
}
