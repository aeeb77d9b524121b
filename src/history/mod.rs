//! Looking back over what was decided: the lines of the review log a
//! person asks for (`speed history`), the statistics of the log
//! (`speed stats`), and the diff a saved report was about, to show beside
//! its findings. Above `ledger`, whose files it reads; it writes nothing,
//! decides nothing, calls no model, and prints nothing (`render` does).

pub mod calendar;
pub mod diff;
pub mod session;
pub mod since;
pub mod stats;

use std::collections::{HashMap, VecDeque};
use std::path::Path;

use crate::ledger::history::{self, Entry, Kind, Subject};
use crate::ledger::saved::Wanted;

pub use stats::Stats;

/// Which lines of the log.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Filter {
    /// One subject's lines (a task of any feature when none is named).
    pub subject: Option<Wanted>,
    /// The lines of one feature.
    pub feature: Option<String>,
    /// Lines recorded at or after this (seconds since the epoch).
    pub since: Option<i64>,
}

impl Filter {
    pub fn admits(&self, entry: &Entry) -> bool {
        if self.since.is_some_and(|since| entry.time < since) {
            return false;
        }
        if let Some(feature) = &self.feature {
            if entry.feature.as_deref() != Some(feature.as_str()) {
                return false;
            }
        }
        match (&self.subject, entry.subject()) {
            (None, _) => true,
            (Some(Wanted::Task { id, feature }), Subject::Task { feature: f, id: i }) => {
                &i == id && feature.as_ref().is_none_or(|want| f.as_ref() == Some(want))
            }
            (Some(Wanted::Defect(name)), Subject::Defect(n)) => &n == name,
            (Some(Wanted::Branch(branch)), Subject::Branch(b)) => &b == branch,
            _ => false,
        }
    }
}

/// One line of the log as `speed history` shows it.
#[derive(Debug, Clone)]
pub struct Row {
    pub entry: Entry,
    /// The line as written.
    pub raw: String,
    /// The decision's number: the attempt its task's `review_history`
    /// gives it (the line's `attempt`: a review's, a person's, an
    /// override's), else, for a defect or a line written before speed
    /// logged attempts, the how-many-th decided review of its subject over
    /// the whole log. None for a failed review (no attempt: the task file
    /// did not change) and a skip.
    pub number: Option<usize>,
}

/// What `speed history` shows.
#[derive(Debug, Clone, Default)]
pub struct History {
    /// Newest first.
    pub rows: Vec<Row>,
    /// Lines that were not speed's (torn, not text, foreign).
    pub skipped: usize,
    /// Lines of speed's in the log, whatever the filter.
    pub read: usize,
}

/// The lines `filter` admits, newest first, at most `limit` of them.
pub fn history(
    root: &Path,
    filter: &Filter,
    limit: Option<usize>,
) -> Result<History, crate::ledger::Error> {
    let mut counts: HashMap<Subject, usize> = HashMap::new();
    let mut kept: VecDeque<Row> = VecDeque::new();
    let scanned = history::scan(root, |line| {
        let decided = line.entry.kind() == Kind::Decided;
        let counted = decided.then(|| {
            let n = counts.entry(line.entry.subject()).or_default();
            *n += 1;
            *n
        });
        let number = match line.entry.attempt {
            Some(attempt) => usize::try_from(attempt).ok(),
            None => counted,
        };
        if !filter.admits(&line.entry) {
            return;
        }
        if limit == Some(0) {
            return;
        }
        kept.push_back(Row {
            raw: String::from_utf8_lossy(line.raw).into_owned(),
            entry: line.entry,
            number,
        });
        if limit.is_some_and(|limit| kept.len() > limit) {
            kept.pop_front();
        }
    })?;
    Ok(History {
        rows: kept.into_iter().rev().collect(),
        skipped: scanned.skipped,
        read: scanned.read,
    })
}

/// The statistics of the lines `filter` admits (its subject is not used:
/// statistics are of a feature or of everything), and how many lines of
/// speed's the log holds in all.
pub fn stats(
    root: &Path,
    filter: &Filter,
    prices: Option<stats::Prices>,
) -> Result<(Stats, usize), crate::ledger::Error> {
    let mut tally = stats::Tally::default();
    let scanned = history::scan(root, |line| {
        if filter.admits(&line.entry) {
            tally.add(line.entry);
        }
    })?;
    Ok((tally.finish(prices, scanned.skipped), scanned.read))
}
