//! `speed review --batch-api` and `speed review --collect`: the reviews
//! asked through a provider's batch API, printed like any review's. A
//! submission prints the batch's id and ends with 54 (results pending); a
//! collection prints each finished review as it completes, then the
//! summary, and ends with 54 while a batch is still at work.

use std::io::IsTerminal;
use std::sync::Arc;

use serde_json::{Value, json};

use crate::exit::Outcome;
use crate::ledger::{Report, nits};
use crate::llm;
use crate::render::{self, Format};
use crate::review::collect::Collected;
use crate::review::{self, Context, Models, Plan};
use crate::settings::ReviewSettings;

use super::progress::Progress;
use super::{Colors, Results, note, out, print_results};

/// What both commands need: the batch API, the models for what is asked
/// directly, the pacing.
struct Asking {
    api: Box<dyn llm::batch::Api>,
    models: Models,
    pacer: review::Pacer,
}

impl Asking {
    fn build(ctx: &Context) -> anyhow::Result<Asking> {
        let config = &ctx.config;
        let env = |key: &str| std::env::var(key).ok();
        let api = llm::batch::api(&config.llm, &env)?;
        let models = Models::build(&config.llm, config.guardian.model.as_deref(), &env)?;
        let pacer = (config.llm.rpm.is_some() || config.llm.tpm.is_some())
            .then(|| Arc::new(llm::pacing::Pacer::new(config.llm.rpm, config.llm.tpm)));
        Ok(Asking { api, models, pacer })
    }
}

/// Prints a report as it completes: its error on stderr, its text on
/// stdout in the human format.
fn printer<'a>(
    settings: &'a ReviewSettings,
    colors: Colors,
    progress: &'a Progress,
) -> impl FnMut(&Report) + 'a {
    let human = settings.format == Format::Human;
    move |report: &Report| {
        progress.clear();
        if let Some(err) = report.error_line() {
            let err = match settings.format {
                Format::Github => err.split_whitespace().collect::<Vec<_>>().join(" "),
                _ => err,
            };
            eprintln!("error: {err}");
        }
        if human && (report.error.is_none() || report.prepared()) {
            print!("{}", render::human::report(report, &colors.stdout));
        }
    }
}

/// `speed review --batch-api`: prepare the selected reviews and submit
/// their model calls as one batch.
pub(super) fn submit_command(
    ctx: &Context,
    settings: &ReviewSettings,
    plan: Plan,
    colors: Colors,
) -> anyhow::Result<Outcome> {
    let asking = Asking::build(ctx)?;
    let progress = Progress::start(std::io::stderr().is_terminal());
    let mut on_report = printer(settings, colors, &progress);
    let submitted = review::submit::submit(
        ctx,
        &asking.models,
        &asking.pacer,
        &progress,
        asking.api.as_ref(),
        plan.subjects,
        &mut on_report,
    );
    progress.stop();
    let submission = submitted?;
    let mut reports = plan.unreadable;
    reports.extend(submission.reports);
    let mut outcome = worst(&reports);
    let mut batches = Vec::new();
    let mut notices = Vec::new();
    if let Some(batch) = &submission.batch {
        outcome = outcome.worst(Outcome::Submitted);
        let requests: usize = batch.reviews.iter().map(|r| r.requests.len()).sum();
        let line = format!(
            "Submitted {} review{} ({requests} request{}) as {} batch {}: `speed review --collect {}` finishes them.",
            batch.reviews.len(),
            plural(batch.reviews.len()),
            plural(requests),
            batch.provider,
            batch.id,
            batch.id
        );
        if settings.format == Format::Human {
            print!("{line}\n");
        } else {
            eprintln!("{line}");
        }
        notices.push(line);
        batches.push(json!({
            "id": batch.id,
            "provider": batch.provider,
            "status": batch.status,
            "submitted_at": batch.submitted_at,
            "reviews": batch.reviews,
        }));
    }
    let shown = Shown {
        reports: &reports,
        skipped: &plan.skipped,
        batches: &batches,
        notices: &notices,
        batch_mode: true,
        share: plan.share.as_ref(),
        // What waits in the batch is not decided yet.
        decided: submission.batch.is_none() && reports.iter().all(Report::decided),
    };
    print_all(&ctx.root, settings, &shown, colors);
    Ok(outcome)
}

/// `speed review --collect [ID]`: wait for the batch (or every waiting
/// batch), then finish its reviews.
pub(super) fn collect_command(
    ctx: &Context,
    settings: &ReviewSettings,
    colors: Colors,
) -> anyhow::Result<Outcome> {
    let asking = Asking::build(ctx)?;
    let progress = Progress::start(std::io::stderr().is_terminal());
    let mut on_report = printer(settings, colors, &progress);
    let collected = review::collect::collect(
        ctx,
        &asking.models,
        &asking.pacer,
        &progress,
        asking.api.as_ref(),
        &mut on_report,
    );
    progress.stop();
    let collected = match collected {
        Ok(collected) => collected,
        Err(err) => {
            eprintln!("error: {err}");
            if settings.format != Format::Human {
                print!(
                    "{}",
                    super::Shape::Review(settings.format).failure(&err.to_string())
                );
            }
            return Ok(err.outcome());
        }
    };
    let Collected {
        reports,
        skipped,
        mut notices,
        problems,
        waiting,
        finished,
    } = collected;
    for notice in &notices {
        eprintln!("note: {notice}");
    }
    for s in &skipped {
        eprintln!("note: {}: {}", s.label(), s.reason);
    }
    let mut outcome = worst(&reports);
    for problem in &problems {
        eprintln!("error: {problem}");
        outcome = outcome.worst(Outcome::Error);
    }
    notices.extend(problems.iter().cloned());
    let mut batches: Vec<Value> = finished
        .iter()
        .map(|id| json!({"id": id, "status": "collected"}))
        .collect();
    for w in &waiting {
        outcome = outcome.worst(Outcome::Submitted);
        let line = format!(
            "{} batch {} is still {}{}: its {} review{} wait; run `speed review --collect {}` again",
            w.provider,
            w.id,
            w.status,
            if w.counts.is_empty() {
                String::new()
            } else {
                format!(" ({})", w.counts.trim_matches('"'))
            },
            w.reviews,
            plural(w.reviews),
            w.id
        );
        eprintln!("{line}");
        notices.push(line);
        batches.push(
            json!({"id": w.id, "provider": w.provider, "status": w.status, "reviews": w.reviews}),
        );
    }
    if finished.is_empty()
        && waiting.is_empty()
        && reports.is_empty()
        && skipped.is_empty()
        && problems.is_empty()
    {
        eprintln!("Nothing to collect: no batch is waiting under .speed/cache/batches/.");
    }
    let found = nits::collect(&reports);
    if let Err(err) = nits::merge_save(&ctx.root, &reports, &found, &[]) {
        eprintln!("warning: could not save nits: {err}");
    }
    let shown = Shown {
        reports: &reports,
        skipped: &skipped,
        batches: &batches,
        notices: &notices,
        batch_mode: reports.len() + skipped.len() > 1,
        share: None,
        decided: waiting.is_empty() && problems.is_empty() && reports.iter().all(Report::decided),
    };
    print_all(&ctx.root, settings, &shown, colors);
    Ok(outcome)
}

/// What a submission or a collection shows.
struct Shown<'a> {
    reports: &'a [Report],
    skipped: &'a [review::Skipped],
    batches: &'a [Value],
    notices: &'a [String],
    batch_mode: bool,
    share: Option<&'a review::shard::Share>,
    decided: bool,
}

/// The summary and the documents of the chosen format; the JSON one says
/// what became of the batches.
fn print_all(root: &std::path::Path, settings: &ReviewSettings, shown: &Shown, colors: Colors) {
    let found = nits::collect(shown.reports);
    match settings.format {
        Format::Json => print!(
            "{}",
            render::json::reviews_with_batches(
                shown.reports,
                &found,
                shown.skipped,
                shown.batches,
                shown.notices
            )
        ),
        format
            if !shown.reports.is_empty()
                || !shown.skipped.is_empty()
                || format != Format::Human =>
        {
            let results = Results {
                reports: shown.reports,
                nits: &found,
                skipped: shown.skipped,
                batch_mode: shown.batch_mode,
                share: shown.share,
                decided: shown.decided,
            };
            print_results(root, format, &results, colors);
        }
        _ => {}
    }
}

fn worst(reports: &[Report]) -> Outcome {
    reports
        .iter()
        .fold(Outcome::Approved, |acc, r| acc.worst(r.outcome))
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}
