//! The settings of the commands that look back: `speed show`, `speed
//! history` and `speed stats`. Only `stats` reads the configuration (the
//! prices of `[llm]`, at the main branch's commit like a review's); the
//! other two read none, but a file named with `--config` is still checked
//! rather than silently ignored.

use std::path::Path;

use crate::cli::{HistoryArgs, ShowArgs, StatsArgs, SubjectArgs};
use crate::history::{self, Filter};
use crate::ledger::saved::Wanted;
use crate::render::Format;

use super::locate::{self, Origin, Repo};
use super::{CONFIG_PATH, Error, Values, all_notices, file};

/// `speed show`.
#[derive(Debug, Clone)]
pub struct ShowSettings {
    pub what: Shown,
    /// 1: the last review.
    pub nth: usize,
    pub format: Format,
    /// The main branch, when one is found: `show` says whether an approval
    /// covers the subject now, against the specs on it. None is no error:
    /// the saved review is shown all the same.
    pub main: Option<crate::git::MainBranch>,
}

/// What `speed show` shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Shown {
    Review(Wanted),
    /// No subject named: the last review of any.
    Latest,
    /// The session of a spec review of this feature.
    SpecSession(String),
}

/// `speed history`.
#[derive(Debug, Clone)]
pub struct HistorySettings {
    pub filter: Filter,
    pub limit: Option<usize>,
    pub format: Format,
}

/// `speed stats`.
#[derive(Debug, Clone)]
pub struct StatsSettings {
    pub filter: Filter,
    /// None unless both prices are configured.
    pub prices: Option<history::stats::Prices>,
    pub format: Format,
}

fn wanted(subject: SubjectArgs, feature: Option<String>) -> Option<Wanted> {
    if let Some(id) = subject.task_id {
        return Some(Wanted::Task { id, feature });
    }
    if let Some(name) = subject.defect {
        return Some(Wanted::Defect(name));
    }
    subject.branch.map(Wanted::Branch)
}

/// A file named with `--config` is checked even where none is used.
pub(super) fn check_config_flag(path: Option<&Path>) -> Result<(), Error> {
    let Some(path) = path else {
        return Ok(());
    };
    let text = std::fs::read_to_string(path).map_err(|source| Error::Read {
        path: path.to_path_buf(),
        source,
    })?;
    file::parse(
        &text,
        &Origin::Flag(path.to_path_buf()).describe(CONFIG_PATH),
    )?;
    Ok(())
}

pub(super) fn show(
    args: ShowArgs,
    config_flag: Option<&Path>,
    main: Option<crate::git::MainBranch>,
) -> Result<ShowSettings, Error> {
    check_config_flag(config_flag)?;
    let what = match args.spec {
        Some(feature) => Shown::SpecSession(feature),
        None => match wanted(args.subject, args.feature) {
            Some(wanted) => Shown::Review(wanted),
            None => Shown::Latest,
        },
    };
    Ok(ShowSettings {
        what,
        nth: args.nth,
        format: crate::cli::Format::from(args.format).into(),
        main,
    })
}

pub(super) fn history(
    args: HistoryArgs,
    config_flag: Option<&Path>,
) -> Result<HistorySettings, Error> {
    check_config_flag(config_flag)?;
    // --feature alone: the feature's lines; with --task-id: that task's.
    let (subject, feature) = match wanted(args.subject, args.feature.clone()) {
        Some(wanted) => (Some(wanted), None),
        None => (None, args.feature),
    };
    Ok(HistorySettings {
        filter: Filter {
            subject,
            feature,
            since: args.since,
        },
        limit: args.limit,
        format: crate::cli::Format::from(args.format).into(),
    })
}

/// The prices come from `[llm]` as a review would read it; the notices of
/// where the configuration came from go with them.
pub(super) fn stats(
    args: StatsArgs,
    repo: Result<&dyn Repo, &str>,
    config_flag: Option<&Path>,
    env: &dyn Fn(&str) -> Option<String>,
    warnings: &mut Vec<String>,
) -> Result<(StatsSettings, Vec<String>), Error> {
    let located = locate::locate(repo, config_flag, None, env)?;
    let notices = all_notices(&located);
    let file = located
        .config
        .as_ref()
        .map(|(f, _)| f.clone())
        .unwrap_or_default();
    let mut entries = Vec::new();
    let values = Values::resolve(
        &file,
        located.origin.as_ref(),
        &crate::cli::ValueArgs::default(),
        env,
        &mut entries,
        warnings,
    );
    let prices = match (
        values.llm.price_input_per_mtok,
        values.llm.price_output_per_mtok,
    ) {
        (Some(_), Some(_)) => crate::llm::cost::Prices::of(&values.llm),
        (None, None) => None,
        (Some(_), None) | (None, Some(_)) => {
            warnings.push(
                "only one of llm.price_input_per_mtok and llm.price_output_per_mtok is set: costs are not computed"
                    .to_string(),
            );
            None
        }
    };
    let settings = StatsSettings {
        filter: Filter {
            subject: None,
            feature: args.feature,
            since: args.since,
        },
        prices,
        format: crate::cli::Format::from(args.format).into(),
    };
    Ok((settings, notices))
}
