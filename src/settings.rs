//! Flags + environment + `.speed/config.toml` resolved once into `Settings`.
//!
//! Precedence: command-line flags, then environment, then the config file,
//! then defaults. The config file is the one at the main branch's commit
//! (see `locate` for the whole rule), read strictly (see `file`). Commands
//! only ever see these plain values, never clap types, so they can be built
//! and tested without argv; git is reached through the small `Repo` trait.
//!
//! Every value resolved here is also recorded as an `Entry` with its source,
//! which is what `speed config` prints: one code path decides both.

mod file;
mod fix;
mod history;
mod locate;
mod merge;
mod scoring;
mod spec;
mod values;

use std::path::{Component, Path, PathBuf};
use std::time::Duration;

use crate::cli::{self, Cli, Command, HookAction, ReviewArgs, ValueArgs, limits};
use crate::git::{self, MainBranch};
use crate::hook;
use crate::llm::{Choice, ProviderKind};
use crate::render::{ColorWhen, Format};
use crate::review::{self, Target};

use crate::prompt::Override;
pub use file::{Error as FileError, Problem, Problems};
pub use fix::FixSettings;
pub use history::{HistorySettings, ShowSettings, Shown, StatsSettings};
pub use locate::{MainFound, Origin, Repo};
pub use merge::MergeView;
pub use spec::SpecReviewSettings;
use values::{Recorder, Values};

pub const CONFIG_PATH: &str = ".speed/config.toml";
pub const PROMPTS_DIR: &str = ".speed/prompts";
pub const DEFAULT_BUDGET: usize = 60_000;
pub const DEFAULT_CONCURRENCY: usize = 4;
pub const DEFAULT_MAX_REVISIONS: u32 = 2;
pub const DEFAULT_MAX_PARTS: usize = 4;
pub const DEFAULT_TOKENIZER: &str = "o200k_base";
pub const DEFAULT_VISION_FILE: &str = "specs/product/overview.md";
pub const DEFAULT_PROVIDER: Choice = Choice::Model(ProviderKind::OpenAi);
/// `speed review --collect`: how long to wait for a batch to end.
pub const DEFAULT_COLLECT_WAIT_SECS: f64 = 60.0;
/// An answer larger than this (from a server or a command) is refused.
pub const DEFAULT_MAX_ANSWER_BYTES: usize = crate::llm::DEFAULT_MAX_ANSWER_BYTES;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("cannot read {}: {source}", path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{file} is not UTF-8 text")]
    NotUtf8 { file: String },
    #[error(transparent)]
    File(#[from] FileError),
    #[error("{file}: git.main_branch = {named:?}: {message}")]
    MainRedirect {
        file: String,
        named: String,
        message: String,
    },
    /// Why there is no repository (git's message).
    #[error("{0}")]
    NoRepository(String),
    #[error(transparent)]
    Git(#[from] git::Error),
    #[error("{flag}: {message}")]
    Flag { flag: &'static str, message: String },
}

/// Where a value came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    Default,
    File(Origin),
    Env(&'static str),
    Flag(&'static str),
}

impl Source {
    /// `default`, `main`, `working_tree`, `config_file`, `environment` or `flag`.
    pub fn kind(&self) -> &'static str {
        match self {
            Source::Default => "default",
            Source::File(origin) => origin.kind(),
            Source::Env(_) => "environment",
            Source::Flag(_) => "flag",
        }
    }

    /// For people: "default", ".speed/config.toml at main (6f4bc06c71)",
    /// "environment MAIN_BRANCH", "flag --budget".
    pub fn describe(&self) -> String {
        match self {
            Source::Default => "default".to_string(),
            Source::File(origin) => origin.describe(CONFIG_PATH),
            Source::Env(var) => format!("environment {var}"),
            Source::Flag(flag) => format!("flag {flag}"),
        }
    }
}

/// One effective setting and its source, for `speed config`.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// Dotted key as in the config file (`llm.provider`).
    pub key: String,
    /// null when unset.
    pub value: serde_json::Value,
    pub source: Source,
}

/// Everything a command needs, resolved once.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Where speed was started (or `-C DIR`).
    pub dir: PathBuf,
    pub verbose: u8,
    /// `--color`: whether output meant for people is coloured (see
    /// `Settings::color`).
    pub color: ColorWhen,
    /// Problems worth telling the user that do not stop the run.
    pub warnings: Vec<String>,
    /// Where the configuration came from, when that needs saying.
    pub notices: Vec<String>,
    pub command: CommandSettings,
}

/// The shells `speed completions` writes scripts for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shell {
    Bash,
    Zsh,
    Fish,
}

impl From<cli::Shell> for Shell {
    fn from(shell: cli::Shell) -> Shell {
        match shell {
            cli::Shell::Bash => Shell::Bash,
            cli::Shell::Zsh => Shell::Zsh,
            cli::Shell::Fish => Shell::Fish,
        }
    }
}

#[derive(Debug, Clone)]
pub enum CommandSettings {
    Review(Box<ReviewSettings>),
    Nits {
        json: bool,
    },
    Config(Box<ConfigSettings>),
    /// Needs no repository and no configuration.
    Completions(Shell),
    /// The man page; needs no repository and no configuration.
    Man,
    Hook(HookCommand),
    Override(Box<OverrideSettings>),
    Fix(Box<FixSettings>),
    SpecReview(Box<SpecReviewSettings>),
    /// `speed approve`, `speed reject`: a person's word on an approval.
    Human(Box<HumanSettings>),
    Show(ShowSettings),
    History(HistorySettings),
    Stats(StatsSettings),
    /// `speed init`: needs a repository, no configuration.
    Init {
        hooks: bool,
    },
    Doctor(Box<DoctorSettings>),
    /// Needs no repository and no configuration.
    Schema(SchemaKind),
    /// `speed notes push|fetch`: the verdicts' git notes, to or from a remote.
    Notes {
        way: crate::ledger::notes::Sync,
        remote: String,
    },
}

/// `speed doctor`: what a review here would use (or why the configuration
/// cannot be read), and how strict to be.
#[derive(Debug, Clone)]
pub struct DoctorSettings {
    /// Ask no model.
    pub offline: bool,
    /// Warnings fail too.
    pub strict: bool,
    /// `--config FILE`, made absolute, when given.
    pub config_flag: Option<PathBuf>,
    /// A review's settings here, or why there are none (the error as a
    /// review would print it).
    pub review: Result<Box<ReviewSettings>, String>,
}

/// The documents `speed schema` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SchemaKind {
    Verdict,
    Guardian,
    SpecReview,
    Task,
    Report,
}

impl From<cli::SchemaKind> for SchemaKind {
    fn from(kind: cli::SchemaKind) -> SchemaKind {
        match kind {
            cli::SchemaKind::Verdict => SchemaKind::Verdict,
            cli::SchemaKind::Guardian => SchemaKind::Guardian,
            cli::SchemaKind::SpecReview => SchemaKind::SpecReview,
            cli::SchemaKind::Task => SchemaKind::Task,
            cli::SchemaKind::Report => SchemaKind::Report,
        }
    }
}

/// Checks a configuration's text as speed reads `.speed/config.toml`
/// (unknown keys, types, ranges); `file` names it in every problem.
pub fn check_config(text: &str, file: &str) -> Result<(), FileError> {
    file::parse(text, file).map(|_| ())
}

/// `speed approve` and `speed reject`.
#[derive(Debug, Clone)]
pub struct HumanSettings {
    pub task_id: String,
    pub feature: Option<String>,
    /// Never blank.
    pub by: String,
    /// What they say; a rejection's reason is never blank.
    pub say: crate::ledger::human::Say,
    /// `review.max_revisions`: a person's rejection counts against it as a
    /// review's does.
    pub max_revisions: u32,
}

/// `speed hook …`. Install and uninstall need no configuration; a hook run
/// decides with what a review would use (the main branch, `[hook]`, and
/// everything a review on a miss needs).
#[derive(Debug, Clone)]
pub enum HookCommand {
    Install {
        force: bool,
    },
    Uninstall,
    Run {
        hook: String,
        args: Vec<String>,
        review: Box<ReviewSettings>,
    },
}

/// `speed override`.
#[derive(Debug, Clone)]
pub struct OverrideSettings {
    pub task_id: String,
    pub feature: Option<String>,
    /// Never blank.
    pub reason: String,
    pub main: MainBranch,
}

/// `speed review` (and a hook run, which may review on a miss): the
/// review's own configuration, how its reports are printed, and the merge
/// gate's policy.
#[derive(Debug, Clone)]
pub struct ReviewSettings {
    pub review: review::Config,
    /// How reports are printed on stdout (`--json` is `Format::Json`).
    pub format: Format,
    pub hook: hook::Policy,
}

/// What `speed config` prints.
#[derive(Debug, Clone)]
pub struct ConfigSettings {
    pub json: bool,
    /// `--strict`: warnings fail the command.
    pub strict: bool,
    /// Where the configuration is read (None outside a repository or
    /// without a main branch).
    pub origin: Option<Origin>,
    /// Whether a file exists there.
    pub file_found: bool,
    /// The main branch, or why there is none.
    pub main: Result<(MainBranch, Source), String>,
    pub prompts: Vec<Override>,
    pub entries: Vec<Entry>,
}

/// The directory speed runs in: `-C DIR` (relative to `cwd`) or `cwd`.
pub fn run_dir(flag: Option<&Path>, cwd: &Path) -> PathBuf {
    match flag {
        Some(dir) => cwd.join(dir),
        None => cwd.to_path_buf(),
    }
}

impl Settings {
    /// Resolve settings from parsed flags, the directory speed runs in (see
    /// `run_dir`), the repository containing it (or why there is none) and
    /// an environment lookup (a function so tests need no real environment).
    pub fn resolve(
        cli: Cli,
        dir: PathBuf,
        repo: Result<&dyn Repo, &str>,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Settings, Error> {
        let mut r = Resolver {
            config_flag: cli.config.as_ref().map(|p| dir.join(p)),
            dir,
            repo,
            env,
            warnings: Vec::new(),
        };
        let none = Vec::new;
        let (command, notices) = match cli.command {
            Command::Review(args) => r.review(*args)?,
            Command::Config(args) => r.config(args)?,
            Command::Hook(args) => r.hook(args.action)?,
            Command::Override(args) => r.override_task(args)?,
            Command::Approve(args) => {
                let note = args
                    .note
                    .map(|n| n.trim().to_string())
                    .filter(|n| !n.is_empty());
                let human = human_settings(
                    args.task_id,
                    args.feature,
                    &args.by,
                    crate::ledger::human::Say::Approve(note),
                )?;
                r.human(human)?
            }
            Command::Reject(args) => {
                let reason = args.reason.trim().to_string();
                if reason.is_empty() {
                    return Err(Error::Flag {
                        flag: "--reason",
                        message: "a rejection needs a reason: it becomes the task's feedback"
                            .to_string(),
                    });
                }
                let human = human_settings(
                    args.task_id,
                    args.feature,
                    &args.by,
                    crate::ledger::human::Say::Reject(reason),
                )?;
                r.human(human)?
            }
            Command::Nits(args) => r.nits(args.json)?,
            Command::Fix(args) => {
                let (fix, notices) = fix::resolve(
                    args,
                    r.repo,
                    r.config_flag.as_deref(),
                    &r.dir,
                    r.env,
                    &mut r.warnings,
                )?;
                (CommandSettings::Fix(Box::new(fix)), notices)
            }
            Command::Spec(args) => {
                let cli::SpecAction::Review(args) = args.action;
                let located = r.locate(None)?;
                let notices = all_notices(&located);
                let repo = r.repository()?;
                let spec = spec::settings(*args, located, repo, &r.dir, r.env, &mut r.warnings)?;
                (CommandSettings::SpecReview(Box::new(spec)), notices)
            }
            Command::Completions(args) => (CommandSettings::Completions(args.shell.into()), none()),
            Command::Show(args) => {
                // Only to say whether an approval covers the subject now: a
                // repository without a main branch still shows its reviews.
                let main = r
                    .locate(None)
                    .ok()
                    .and_then(|located| located.main.ok())
                    .map(|found| found.branch);
                (
                    CommandSettings::Show(history::show(args, r.config_flag.as_deref(), main)?),
                    none(),
                )
            }
            Command::History(args) => (
                CommandSettings::History(history::history(args, r.config_flag.as_deref())?),
                none(),
            ),
            Command::Stats(args) => {
                let (stats, notices) = history::stats(
                    args,
                    r.repo,
                    r.config_flag.as_deref(),
                    r.env,
                    &mut r.warnings,
                )?;
                (CommandSettings::Stats(stats), notices)
            }
            Command::Man => (CommandSettings::Man, none()),
            Command::Init(args) => (CommandSettings::Init { hooks: args.hooks }, none()),
            Command::Doctor(args) => r.doctor(args)?,
            Command::Schema(args) => (CommandSettings::Schema(args.kind.into()), none()),
            Command::Notes(args) => {
                r.repository()?;
                let (way, remote) = match args.action {
                    cli::NotesAction::Push { remote } => (crate::ledger::notes::Sync::Push, remote),
                    cli::NotesAction::Fetch { remote } => {
                        (crate::ledger::notes::Sync::Fetch, remote)
                    }
                };
                (CommandSettings::Notes { way, remote }, none())
            }
        };
        Ok(Settings {
            dir: r.dir,
            verbose: cli.verbose,
            color: cli.color.into(),
            warnings: r.warnings,
            notices,
            command,
        })
    }
}

/// What every command's settings are resolved from, and the warnings met.
struct Resolver<'a> {
    dir: PathBuf,
    /// `--config FILE`, from the directory speed runs in.
    config_flag: Option<PathBuf>,
    repo: Result<&'a dyn Repo, &'a str>,
    env: &'a dyn Fn(&str) -> Option<String>,
    warnings: Vec<String>,
}

/// A command's settings and what the user should be told of them.
type Resolved = (CommandSettings, Vec<String>);

impl<'a> Resolver<'a> {
    fn locate(&self, base: Option<&str>) -> Result<locate::Located, Error> {
        locate::locate(self.repo, self.config_flag.as_deref(), base, self.env)
    }

    fn repository(&self) -> Result<&'a dyn Repo, Error> {
        self.repo
            .map_err(|why| Error::NoRepository(why.to_string()))
    }

    fn review(&mut self, args: ReviewArgs) -> Result<Resolved, Error> {
        let located = self.locate(args.values.base.as_deref())?;
        let notices = all_notices(&located);
        let repo = self.repository()?;
        let review = review_settings(args, located, repo, &self.dir, self.env, &mut self.warnings)?;
        Ok((CommandSettings::Review(Box::new(review)), notices))
    }

    fn config(&mut self, args: cli::ConfigArgs) -> Result<Resolved, Error> {
        let located = self.locate(args.values.base.as_deref())?;
        let notices = all_notices(&located);
        let mut config = config_settings(
            args.json,
            &args.values,
            located,
            self.env,
            &mut self.warnings,
        );
        config.strict = args.strict;
        Ok((CommandSettings::Config(Box::new(config)), notices))
    }

    /// Install and uninstall need no configuration; a hook run decides
    /// with what a review would use.
    fn hook(&mut self, action: HookAction) -> Result<Resolved, Error> {
        let (name, args) = match action {
            HookAction::Install { force } => {
                return Ok((
                    CommandSettings::Hook(HookCommand::Install { force }),
                    Vec::new(),
                ));
            }
            HookAction::Uninstall => {
                return Ok((CommandSettings::Hook(HookCommand::Uninstall), Vec::new()));
            }
            HookAction::Run { name, args } => (name, args),
        };
        let located = self.locate(None)?;
        let notices = all_notices(&located);
        let repo = self.repository()?;
        let review = review_settings(
            ReviewArgs::default(),
            located,
            repo,
            &self.dir,
            self.env,
            &mut self.warnings,
        )?;
        let run = HookCommand::Run {
            hook: name,
            args,
            review: Box::new(review),
        };
        Ok((CommandSettings::Hook(run), notices))
    }

    fn override_task(&mut self, args: cli::OverrideArgs) -> Result<Resolved, Error> {
        let reason = args.reason.trim().to_string();
        if reason.is_empty() {
            return Err(Error::Flag {
                flag: "--reason",
                message:
                    "an override needs a reason: say why the task is accepted despite its review"
                        .to_string(),
            });
        }
        let located = self.locate(None)?;
        let notices = all_notices(&located);
        let main = located.main?.branch;
        let settings = OverrideSettings {
            task_id: args.task_id,
            feature: args.feature,
            reason,
            main,
        };
        Ok((CommandSettings::Override(Box::new(settings)), notices))
    }

    /// A doctor's view: a review's settings when they resolve, and why
    /// not when they do not (that is one of the things it reports).
    fn doctor(&mut self, args: cli::DoctorArgs) -> Result<Resolved, Error> {
        let repo = self.repository()?;
        let (review, notices) = match self.locate(None) {
            Ok(located) => {
                let notices = all_notices(&located);
                let review = review_settings(
                    ReviewArgs::default(),
                    located,
                    repo,
                    &self.dir,
                    self.env,
                    &mut self.warnings,
                )
                .map(Box::new)
                .map_err(|e| e.to_string());
                (review, notices)
            }
            Err(err) => (Err(err.to_string()), Vec::new()),
        };
        let doctor = DoctorSettings {
            offline: args.offline,
            strict: args.strict,
            config_flag: self.config_flag.clone(),
            review,
        };
        Ok((CommandSettings::Doctor(Box::new(doctor)), notices))
    }

    /// `speed approve` / `speed reject`: the configuration's
    /// `review.max_revisions` (the file main's commit holds, or `--config`).
    fn human(&mut self, mut human: HumanSettings) -> Result<Resolved, Error> {
        let located = self.locate(None)?;
        let notices = all_notices(&located);
        human.max_revisions = located
            .config
            .as_ref()
            .and_then(|(file, _)| file.review.max_revisions)
            .unwrap_or(DEFAULT_MAX_REVISIONS);
        Ok((CommandSettings::Human(Box::new(human)), notices))
    }

    /// Nits use no configuration, but a file named on the command line is
    /// still checked rather than silently ignored.
    fn nits(&mut self, json: bool) -> Result<Resolved, Error> {
        if let Some(path) = &self.config_flag {
            let text = std::fs::read_to_string(path).map_err(|source| Error::Read {
                path: path.clone(),
                source,
            })?;
            file::parse(&text, &Origin::Flag(path.clone()).describe(CONFIG_PATH))?;
        }
        Ok((CommandSettings::Nits { json }, Vec::new()))
    }
}

impl Settings {
    /// Whether to colour text bound for a stream: `--color always` and
    /// `never` decide; `auto` colours a terminal unless NO_COLOR is set to
    /// something (no-color.org: a flag wins over the variable).
    pub fn color(&self, terminal: bool, env: &dyn Fn(&str) -> Option<String>) -> bool {
        self.color.colors(terminal, env)
    }
}

impl ReviewSettings {
    /// Whether reports are printed as one JSON object.
    pub fn json(&self) -> bool {
        self.format == Format::Json
    }
}

/// `speed approve` / `speed reject`: who must be named.
fn human_settings(
    task_id: String,
    feature: Option<String>,
    by: &str,
    say: crate::ledger::human::Say,
) -> Result<HumanSettings, Error> {
    let by = by.trim();
    if by.is_empty() {
        return Err(Error::Flag {
            flag: "--by",
            message: "say who decides: it is recorded with the decision".to_string(),
        });
    }
    Ok(HumanSettings {
        task_id,
        feature,
        by: by.to_string(),
        say,
        max_revisions: DEFAULT_MAX_REVISIONS,
    })
}

fn all_notices(located: &locate::Located) -> Vec<String> {
    located
        .notices
        .iter()
        .chain(&located.report_notices)
        .cloned()
        .collect()
}

fn review_settings(
    args: ReviewArgs,
    located: locate::Located,
    repo: &dyn Repo,
    dir: &Path,
    env: &dyn Fn(&str) -> Option<String>,
    warnings: &mut Vec<String>,
) -> Result<ReviewSettings, Error> {
    let main = located.main?.branch;
    let file = located
        .config
        .as_ref()
        .map(|(f, _)| f.clone())
        .unwrap_or_default();
    let mut entries = Vec::new();
    let values = Values::resolve(
        &file,
        located.origin.as_ref(),
        &args.values,
        env,
        &mut entries,
        warnings,
    );
    for e in &entries {
        tracing::debug!("setting {} = {} ({})", e.key, e.value, e.source.describe());
    }

    let exists = |path: &str| {
        matches!(repo.read_file(&main.commit, path), Ok(Some(_)))
            || repo.root().join(path).is_file()
    };
    let specs: Vec<String> = args
        .spec
        .iter()
        .map(|arg| spec_arg(arg, dir, repo.root(), &exists))
        .collect();
    let format = args.output_format().into();
    let shard = args
        .shard
        .map(|(index, count)| review::shard::Shard { index, count });
    let provider_batch = match (args.collect, args.batch_api) {
        (Some(id), _) => review::ProviderBatch::Collect {
            id: Some(id).filter(|id| !id.is_empty()),
            // In range (checked by the flag), so this cannot panic.
            wait: Duration::from_secs_f64(args.wait.unwrap_or(DEFAULT_COLLECT_WAIT_SECS)),
            // What CI services set (GitHub Actions, GitLab, CircleCI, ...).
            ci: env("CI").is_some_and(|v| matches!(v.trim(), "true" | "1" | "True" | "TRUE")),
        },
        (None, true) => review::ProviderBatch::Submit,
        (None, false) => review::ProviderBatch::Off,
    };
    let target = match (args.branch, args.defect) {
        (Some(branch), _) => Target::Branch {
            branch,
            specs: specs.clone(),
            criteria: args.criteria.map(|path| dir.join(path)),
        },
        (None, Some(name)) => Target::Defect {
            name,
            update_state: args.update_state,
        },
        (None, None) => Target::Tasks {
            ids: args.task_ids,
            feature: args.feature,
        },
    };
    Ok(ReviewSettings {
        review: review::Config {
            target,
            dry_run: args.dry_run,
            force: args.force,
            queue: if args.no_wait {
                crate::ledger::locks::Queue::NoWait
            } else {
                crate::ledger::locks::Queue::Wait
            },
            main,
            prompts: located.templates,
            report_notices: located.report_notices,
            concurrency: values.concurrency,
            budget: values.budget,
            tokenizer: values.tokenizer,
            max_revisions: values.max_revisions,
            max_parts: values.max_parts,
            actor: values.actor,
            spec_args: specs,
            llm: values.llm,
            guardian: values.guardian,
            checks: values.checks,
            defect: values.defect,
            scoring: values.scoring,
            human: values.human,
            reconcile: values.reconcile,
            shard,
            provider_batch,
            incremental: args.incremental,
        },
        format,
        hook: values.hook,
    })
}

fn config_settings(
    json: bool,
    flags: &ValueArgs,
    located: locate::Located,
    env: &dyn Fn(&str) -> Option<String>,
    warnings: &mut Vec<String>,
) -> ConfigSettings {
    let file = located
        .config
        .as_ref()
        .map(|(f, _)| f.clone())
        .unwrap_or_default();
    let mut entries = Vec::new();
    let main = match &located.main {
        Ok(found) => {
            entries.push(Entry {
                key: "git.main_branch".to_string(),
                value: found.branch.name.clone().into(),
                source: found.source.clone(),
            });
            Ok((found.branch.clone(), found.source.clone()))
        }
        Err(err) => {
            entries.push(Entry {
                key: "git.main_branch".to_string(),
                value: serde_json::Value::Null,
                source: Source::Default,
            });
            Err(err.to_string())
        }
    };
    Values::resolve(
        &file,
        located.origin.as_ref(),
        flags,
        env,
        &mut entries,
        warnings,
    );
    ConfigSettings {
        json,
        strict: false,
        file_found: located.config.is_some(),
        origin: located.origin,
        main,
        prompts: located.templates,
        entries,
    }
}

/// The actor names event files: letters, digits, `.`, `-`, `_`; at most 64;
/// not starting with a dot.
pub fn valid_actor(actor: &str) -> bool {
    !actor.is_empty()
        && actor.len() <= 64
        && !actor.starts_with('.')
        && actor
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_'))
}

/// A `--spec PATH[#Section]` with PATH made relative to the repository root.
/// A relative PATH is taken from the directory speed runs in, like git's
/// `-C`; when nothing is there but the path exists from the repository root
/// (at main's commit or in the working tree), that one is meant.
fn spec_arg(arg: &str, dir: &Path, root: &Path, exists: &dyn Fn(&str) -> bool) -> String {
    let (path, section) = match arg.split_once('#') {
        Some((path, section)) => (path.trim(), Some(section)),
        None => (arg.trim(), None),
    };
    if path.is_empty() {
        return arg.to_string();
    }
    let given = Path::new(path);
    let from_dir = inside(root, &dir.join(given));
    let from_root = (!given.is_absolute()).then(|| lexical(given)).flatten();
    let chosen = match (from_dir, from_root) {
        (Some(d), Some(r)) if d != r && !exists(&d) && exists(&r) => r,
        (Some(d), _) => d,
        (None, Some(r)) => r,
        // Outside the repository: left as given, so the error names it.
        (None, None) => path.to_string(),
    };
    match section {
        Some(section) => format!("{chosen}#{section}"),
        None => chosen,
    }
}

/// `path` relative to `root` ("a/b.md") when it lies inside it. Both are
/// compared in canonical form when they exist, so symlinked temp dirs and
/// `..` in `-C` agree with git's idea of the root.
fn inside(root: &Path, path: &Path) -> Option<String> {
    let root = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
    let path = canonical_prefix(path);
    let rel = path.strip_prefix(&root).ok()?;
    lexical(rel)
}

/// The path with its longest existing prefix canonicalized (the spec file
/// itself may exist only at main's commit), and `.`/`..` resolved.
fn canonical_prefix(path: &Path) -> PathBuf {
    let mut existing = path.to_path_buf();
    let mut rest = Vec::new();
    while !existing.exists() {
        match (existing.file_name(), existing.parent()) {
            (Some(name), Some(parent)) => {
                rest.push(name.to_os_string());
                existing = parent.to_path_buf();
            }
            _ => break,
        }
    }
    let mut out = std::fs::canonicalize(&existing).unwrap_or(existing);
    for part in rest.into_iter().rev() {
        match part.to_str() {
            Some("..") => {
                out.pop();
            }
            Some(".") => {}
            _ => out.push(part),
        }
    }
    out
}

/// A relative path with `.` and `..` resolved, joined with `/`; None when it
/// climbs out of where it starts.
fn lexical(path: &Path) -> Option<String> {
    let mut parts: Vec<String> = Vec::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                parts.pop()?;
            }
            Component::Normal(part) => parts.push(part.to_string_lossy().into_owned()),
            Component::RootDir | Component::Prefix(_) => return None,
        }
    }
    Some(parts.join("/"))
}

#[cfg(test)]
mod tests;
