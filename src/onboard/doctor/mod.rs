//! `speed doctor`: whether a review would work here, area by area (git,
//! the configuration, the provider, the specs, the check commands, the
//! hooks, the task files), each finding with what to do about it. A
//! problem makes a review fail or mislead; a warning is worth fixing; a
//! note is information. Nothing is written: check commands run in a
//! temporary checkout of main, and the provider gets one probe call
//! (none with `--offline`).

mod commands;
mod provider;
mod repo;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::Error;
use crate::git::Repository;
use crate::settings::DoctorSettings;

/// The areas a doctor looks at, in the order it reports them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Area {
    Git,
    Config,
    Provider,
    Specs,
    Checks,
    Hooks,
    Tasks,
}

impl Area {
    pub fn as_str(self) -> &'static str {
        match self {
            Area::Git => "git",
            Area::Config => "configuration",
            Area::Provider => "provider",
            Area::Specs => "specs",
            Area::Checks => "check commands",
            Area::Hooks => "hooks",
            Area::Tasks => "task files",
        }
    }
}

/// How much a finding weighs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    /// As it should be.
    Ok,
    /// Worth knowing; nothing to fix.
    Note,
    /// Worth fixing; a review still works (`--strict` fails on it).
    Warning,
    /// A review would fail or mislead.
    Problem,
}

impl Level {
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Ok => "ok",
            Level::Note => "note",
            Level::Warning => "warning",
            Level::Problem => "problem",
        }
    }
}

/// One finding.
#[derive(Debug, Clone)]
pub struct Finding {
    pub area: Area,
    pub level: Level,
    /// What was found, in a sentence.
    pub text: String,
    /// What to do about it.
    pub fix: Option<String>,
}

/// What the doctor found, in report order.
#[derive(Debug)]
pub struct Report {
    pub root: PathBuf,
    pub findings: Vec<Finding>,
    pub duration: Duration,
    pub strict: bool,
}

impl Report {
    pub fn count(&self, level: Level) -> usize {
        self.findings.iter().filter(|f| f.level == level).count()
    }

    /// Whether the doctor passes: no problem, and no warning when strict.
    pub fn passed(&self) -> bool {
        self.count(Level::Problem) == 0 && (!self.strict || self.count(Level::Warning) == 0)
    }
}

/// What the areas add findings to.
pub(super) struct Findings {
    list: Vec<Finding>,
    area: Area,
}

impl Findings {
    fn area(&mut self, area: Area) {
        self.area = area;
    }

    fn add(&mut self, level: Level, text: impl Into<String>, fix: Option<String>) {
        self.list.push(Finding {
            area: self.area,
            level,
            text: text.into(),
            fix,
        });
    }

    fn ok(&mut self, text: impl Into<String>) {
        self.add(Level::Ok, text, None);
    }

    fn note(&mut self, text: impl Into<String>) {
        self.add(Level::Note, text, None);
    }

    fn warn(&mut self, text: impl Into<String>, fix: impl Into<String>) {
        self.add(Level::Warning, text, Some(fix.into()));
    }

    fn problem(&mut self, text: impl Into<String>, fix: impl Into<String>) {
        self.add(Level::Problem, text, Some(fix.into()));
    }
}

/// What the doctor is given.
pub struct Inputs<'a> {
    /// Where speed runs (`-C DIR`).
    pub dir: &'a Path,
    pub settings: &'a DoctorSettings,
    pub env: &'a dyn Fn(&str) -> Option<String>,
    /// The speed running now, to compare with the one the hooks would run.
    pub this_speed: Option<PathBuf>,
    /// Told before each step that may take a while (a check command run at
    /// main, the probe call), so a person knows what is being waited for.
    pub progress: &'a dyn Fn(&str),
}

/// Look at everything a review here depends on.
pub fn doctor(inputs: &Inputs) -> Result<Report, Error> {
    let started = Instant::now();
    let repository = Repository::discover(inputs.dir).map_err(|e| Error::NotARepository {
        path: inputs.dir.to_path_buf(),
        reason: e.to_string(),
    })?;
    let root = repository.root().to_path_buf();
    let mut findings = Findings {
        list: Vec::new(),
        area: Area::Git,
    };
    let review = inputs.settings.review.as_ref().ok().map(|r| &r.review);
    let main = repo::git(&repository, review, inputs.env, &mut findings);
    findings.area(Area::Config);
    repo::config(&repository, main.as_ref(), inputs.settings, &mut findings);
    findings.area(Area::Provider);
    match review {
        Some(review) => provider::check(&review.llm, inputs, &mut findings),
        None => findings.note("not checked: the configuration could not be read (above)"),
    }
    findings.area(Area::Specs);
    repo::specs(&repository, main.as_ref(), review, &mut findings);
    findings.area(Area::Checks);
    match (review, main.as_ref()) {
        (Some(review), Some(main)) => commands::check(
            &root,
            &main.commit,
            &review.checks.commands,
            inputs,
            &mut findings,
        ),
        (Some(review), None) if !review.checks.commands.is_empty() => {
            findings.note("not run: there is no main branch to run them at")
        }
        (Some(_), None) => findings.note("none configured"),
        (None, _) => findings.note("not checked: the configuration could not be read (above)"),
    }
    findings.area(Area::Hooks);
    repo::hooks(&repository, inputs, &mut findings);
    findings.area(Area::Tasks);
    repo::tasks(&root, &mut findings);
    Ok(Report {
        root,
        findings: findings.list,
        duration: started.elapsed(),
        strict: inputs.settings.strict,
    })
}
