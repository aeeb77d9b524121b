//! `speed spec review`: runs the spec review loop (`spec_review::run`),
//! shows each step on stderr as it happens, and prints what it came to on
//! stdout: the summary for people, one JSON object, a CI format (SARIF,
//! JUnit, GitHub workflow commands), or a dry run's prompt (its accounting
//! on stderr).

use std::path::Path;

use anyhow::Context as _;

use super::{Colors, note, out};
use crate::exit::Outcome;
use crate::render::{self, Format};
use crate::settings::SpecReviewSettings;
use crate::spec_review;

pub fn spec_review_command(
    dir: &Path,
    settings: &SpecReviewSettings,
    colors: Colors,
) -> anyhow::Result<Outcome> {
    if let (Some(note), false) = (&settings.offline_note, settings.job.dry_run) {
        eprintln!("note: {note}");
    }
    let env = |key: &str| std::env::var(key).ok();
    let progress = |line: &str| eprintln!("{line}");
    let summary = spec_review::run(dir, &settings.job, &env, &progress)
        .context("the spec review could not run")?;
    for note in &summary.notes {
        match note.strip_prefix("warning: ") {
            Some(warning) => eprintln!("warning: {warning}"),
            None => eprintln!("note: {note}"),
        }
    }
    if summary.outcome == Outcome::Error {
        eprintln!("error: {}", summary.headline);
    }
    match settings.format {
        Format::Json => print!("{}", render::spec_review::json(&summary)),
        _ if summary.dry.is_some() => {
            if let Some(dry) = &summary.dry {
                print!("{}", dry.prompt);
            }
            eprint!("{}", render::spec_review::accounting(&summary));
        }
        // As for a review: no log unless the run decided (render::sarif).
        Format::Sarif if !render::spec_review::decided(&summary) => {
            eprintln!("{}", render::sarif::WITHHELD);
        }
        Format::Sarif => print!("{}", render::sarif::spec_log(&summary)),
        Format::Junit => print!("{}", render::junit::spec_report(&summary)),
        Format::Github => {
            super::append_step_summary(&render::github::spec_summary(&summary));
            print!(
                "{}",
                render::github::spec_commands(&summary, &super::stop_token())
            );
        }
        _ => print!("{}", render::spec_review::human(&summary, &colors.stdout)),
    }
    Ok(summary.outcome)
}
