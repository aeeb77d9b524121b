//! `speed history` and `speed stats`: the review log read back, as lines
//! newest first or as statistics.

use std::path::Path;

use crate::exit::Outcome;
use crate::git::Repository;
use crate::history::{self, Filter};
use crate::ledger;
use crate::render::{self, Format};
use crate::settings::{HistorySettings, StatsSettings};

use super::{Colors, note, out};

pub(super) fn history_command(
    dir: &Path,
    settings: &HistorySettings,
    colors: Colors,
) -> anyhow::Result<Outcome> {
    let repo = Repository::discover(dir)?;
    let found = history::history(repo.state_root(), &settings.filter, settings.limit)?;
    if settings.format == Format::Json {
        out(&render::history::json(&found));
    } else {
        out(&render::history::human(&found, &colors.stdout));
        note(&format!(
            "{}\n",
            render::history::tally(&found, found.rows.len())
        ));
    }
    // Nothing to show is an error that says which (a script still gets
    // its empty document); a limit of 0 asked for nothing.
    if found.rows.is_empty() && settings.limit != Some(0) {
        note(&format!(
            "error: {}\n",
            nothing(repo.state_root(), &settings.filter, found.read)
        ));
        return Ok(Outcome::Error);
    }
    Ok(Outcome::Approved)
}

/// Why nothing was shown: no log at all, or nothing the filter admits.
fn nothing(root: &Path, filter: &Filter, read: usize) -> String {
    if read == 0 {
        return format!(
            "No reviews yet: {} holds none (`speed review` writes it).",
            root.join(ledger::LOG_FILE).display()
        );
    }
    match (&filter.subject, &filter.feature) {
        (Some(wanted), _) => format!("{} has no line in the review log.", wanted.label()),
        (None, Some(feature)) => format!("feature {feature} has no review in the review log."),
        (None, None) => "No review in the review log is that recent.".to_string(),
    }
}

pub(super) fn stats_command(
    dir: &Path,
    settings: &StatsSettings,
    colors: Colors,
) -> anyhow::Result<Outcome> {
    let repo = Repository::discover(dir)?;
    let (stats, read) = history::stats(repo.state_root(), &settings.filter, settings.prices)?;
    let scope = scope(&settings.filter, stats.all.reviews);
    let text = match settings.format {
        Format::Json => render::stats::json(&stats),
        Format::Html => render::html::stats::page(&stats, &scope),
        _ => render::stats::human(&stats, &scope, &colors.stdout),
    };
    out(&text);
    if stats.all.reviews == 0 {
        note(&format!(
            "error: {}\n",
            nothing(repo.state_root(), &settings.filter, read)
        ));
        return Ok(Outcome::Error);
    }
    Ok(Outcome::Approved)
}

/// "12 reviews in .speed/reviews/log.jsonl, feature x, since 2026-03-01".
fn scope(filter: &Filter, reviews: usize) -> String {
    let plural = if reviews == 1 { "" } else { "s" };
    let mut scope = format!("{reviews} review{plural} in {}", ledger::LOG_FILE);
    if let Some(feature) = &filter.feature {
        scope.push_str(&format!(", feature {feature}"));
    }
    if let Some(since) = filter.since {
        let day = history::calendar::day_of(since);
        scope.push_str(&format!(", since {}", history::calendar::date(day)));
    }
    scope
}
