//! `speed spec review`: runs the spec review loop (`spec_review::run`),
//! shows each step on stderr as it happens, and prints what it came to on
//! stdout: the summary for people, one JSON object, or a dry run's prompt
//! (its accounting on stderr).

use std::path::Path;

use anyhow::Context as _;

use super::{Colors, note, out};
use crate::exit::Outcome;
use crate::render;
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
    if settings.json {
        print!("{}", render::spec_review::json(&summary));
    } else if let Some(dry) = &summary.dry {
        print!("{}", dry.prompt);
        eprint!("{}", render::spec_review::accounting(&summary));
    } else {
        print!("{}", render::spec_review::human(&summary, &colors.stdout));
    }
    Ok(summary.outcome)
}
