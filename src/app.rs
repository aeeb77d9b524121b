//! Commands: one function per command, and the only place that prints.
//!
//! `entry` is the whole program as a function (the binary and the demo call
//! it): parse flags, resolve settings, run the command, turn the outcome into
//! an exit code. Errors are reported here, once, with their context chain.
//! stdout carries only results (the prompt of a dry run, reports, JSON);
//! progress, warnings and errors go to stderr.

use std::ffi::OsString;
use std::io::{IsTerminal, Write};
use std::path::Path;
use std::sync::Arc;

use anyhow::Context as _;

use crate::cli::{self, Cli, Command};
use crate::defects;
use crate::exit::Outcome;
use crate::git::Repository;
use crate::ledger::{Report, nits};
use crate::llm;
use crate::prompt::{self, Templates};
use crate::render::Format;
use crate::render::{self, Style};
use crate::review::{self, Context, Models, Plan, Target, batch, dry};
use crate::settings::{self, CommandSettings, ConfigSettings, ReviewSettings, Settings};
use crate::tasks;
use crate::work::Subject;

mod config;
mod progress;
use progress::Progress;

// stdout and stderr may be closed under speed (`speed review | head`,
// `2>&-`), and std's printing macros panic then. In this module, the only
// one that prints, they are replaced by ones that never panic: see `out`
// and `note`. Both pass what they print through the secrets safety net.
macro_rules! print {
    ($($arg:tt)*) => { out(&format!($($arg)*)) };
}
macro_rules! eprint {
    ($($arg:tt)*) => { note(&format!($($arg)*)) };
}
macro_rules! eprintln {
    ($($arg:tt)*) => { note(&format!("{}\n", format_args!($($arg)*))) };
}

// After the macros, so the merge gate's commands print through them too.
mod batches;
mod fix;
mod gate;
mod history;
mod human;
mod onboard;
mod schema;
mod show;
mod spec;

/// Run speed with these arguments (the first is the program name) and return
/// the exit code the process should end with.
pub fn entry<I, T>(args: I) -> u8
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let args: Vec<OsString> = args.into_iter().map(Into::into).collect();
    let cli = match Cli::parse_checked(&args) {
        Ok(cli) => cli,
        Err(err) => {
            // clap formats help, version and usage errors; they are printed
            // like everything else (a usage error quotes what was typed).
            let terminal = if err.use_stderr() {
                std::io::stderr().is_terminal()
            } else {
                std::io::stdout().is_terminal()
            };
            let rendered = if terminal && std::env::var_os("NO_COLOR").is_none() {
                err.render().ansi().to_string()
            } else {
                err.render().to_string()
            };
            if !err.use_stderr() {
                print!("{rendered}");
                return Outcome::Approved.code();
            }
            eprint!("{rendered}");
            if let Some(shape) = usage_shape(&args) {
                print!("{}", shape.failure(err.render().to_string().trim()));
            }
            return Outcome::Usage.code();
        }
    };
    init_logging(cli.verbose);
    let shape = Shape::of(&cli);
    match run(cli) {
        Ok(outcome) => outcome.code(),
        Err(err) => {
            eprintln!("error: {err:#}");
            // A machine-readable format promises its document on stdout,
            // even when nothing could be done; every path that prints its
            // own returns Ok.
            if let Some(shape) = shape {
                print!("{}", shape.failure(&format!("{err:#}")));
            }
            Outcome::Error.code()
        }
    }
}

/// What a failed command prints on stdout: the document it promised
/// (JSON, SARIF, JUnit, workflow commands), empty, with the error in it.
#[derive(Debug, Clone, Copy)]
enum Shape {
    Review(Format),
    Nits,
    Config,
    Fix,
    SpecReview(Format),
    History,
    /// `speed show` and `speed stats`: one object, page or text.
    Document(Format),
}

impl Shape {
    fn of(cli: &Cli) -> Option<Shape> {
        let format = cli.promised_format()?;
        Some(match cli.command {
            Command::Nits(_) => Shape::Nits,
            Command::Config(_) => Shape::Config,
            Command::Fix(_) => Shape::Fix,
            Command::Spec(_) => Shape::SpecReview(format.into()),
            Command::History(_) => Shape::History,
            Command::Show(_) | Command::Stats(_) => Shape::Document(format.into()),
            _ => Shape::Review(format.into()),
        })
    }

    fn failure(self, error: &str) -> String {
        match self {
            // No log at all: one without results would close every alert.
            Shape::Review(Format::Sarif) => {
                eprintln!("{}", render::sarif::WITHHELD);
                String::new()
            }
            Shape::Review(Format::Junit) => {
                render::junit::failure(render::junit::REVIEW_SUITE, error)
            }
            Shape::Review(Format::Github) => render::github::failure(error),
            Shape::Review(Format::Html) | Shape::Document(Format::Html) => {
                render::html::failure(error)
            }
            Shape::Review(Format::Markdown) | Shape::Document(Format::Markdown) => {
                render::markdown::failure(error)
            }
            Shape::Review(_) => render::json::failure(error),
            Shape::Nits => render::json::nits_failure(error),
            Shape::Config => config::json_failure(error),
            Shape::Fix => render::fixes::json_failure(error),
            Shape::SpecReview(Format::Sarif) => Shape::Review(Format::Sarif).failure(error),
            Shape::SpecReview(Format::Junit) => {
                render::junit::failure(render::junit::SPEC_SUITE, error)
            }
            Shape::SpecReview(Format::Github) => render::github::failure(error),
            Shape::SpecReview(_) => render::spec_review::failure(error),
            Shape::History => render::history::json_failure(error),
            Shape::Document(_) => render::stats::json_failure(error),
        }
    }
}

/// For a usage error: the document the arguments asked for (`--json`, or
/// `--format F` for a review), by the first word naming a command (review
/// when none does).
fn usage_shape(args: &[OsString]) -> Option<Shape> {
    let words: Vec<&str> = args
        .iter()
        .skip(1)
        .map(|a| a.to_str().unwrap_or(""))
        .take_while(|a| *a != "--")
        .collect();
    let command = words.iter().find(|w| {
        matches!(
            **w,
            "review" | "nits" | "config" | "spec" | "fix" | "show" | "history" | "stats"
        )
    });
    let json = words.contains(&"--json");
    let format = words
        .iter()
        .enumerate()
        .find_map(|(i, w)| match w.strip_prefix("--format") {
            Some("") => words.get(i + 1).copied(),
            Some(rest) => rest.strip_prefix('='),
            None => None,
        })
        .and_then(|name| <cli::Format as clap::ValueEnum>::from_str(name, false).ok())
        .map(Format::from);
    match command {
        Some(&"nits") => json.then_some(Shape::Nits),
        Some(&"config") => json.then_some(Shape::Config),
        Some(&"spec") => format
            .filter(|f| {
                matches!(
                    f,
                    Format::Json | Format::Sarif | Format::Junit | Format::Github
                )
            })
            .map(Shape::SpecReview),
        Some(&"fix") => (format == Some(Format::Json)).then_some(Shape::Fix),
        Some(&"history") => (format == Some(Format::Json)).then_some(Shape::History),
        Some(&"show" | &"stats") => format.filter(|f| *f != Format::Human).map(Shape::Document),
        _ if json => Some(Shape::Review(Format::Json)),
        _ => format.filter(|f| *f != Format::Human).map(Shape::Review),
    }
}

fn init_logging(verbose: u8) {
    let level = match verbose {
        0 => "warn",
        1 => "info",
        _ => "debug",
    };
    let filter = tracing_subscriber::EnvFilter::try_from_env("SPEED_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(level));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(|| Netted)
        .with_ansi(false)
        .without_time()
        .try_init();
}

fn run(cli: Cli) -> anyhow::Result<Outcome> {
    // Ctrl-C and SIGTERM stop what speed started (a model command, temporary
    // files) before it ends; without the handlers they would be left behind.
    if let Err(err) = crate::interrupt::install() {
        eprintln!(
            "warning: cannot handle interrupts, so an interrupted run may leave a model command running: {err}"
        );
    }
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    let dir = settings::run_dir(cli.dir.as_deref(), &cwd);
    // Outside a repository speed still resolves settings (`speed config`
    // shows them); commands that need one report why there is none.
    let settings = if gate::runs_hook(&cli) {
        gate::resolve_bounded(cli, dir)?
    } else {
        let repo = Repository::discover(&dir).map_err(|err| err.to_string());
        let settings = Settings::resolve(
            cli,
            dir,
            repo.as_ref()
                .map(|r| r as &dyn settings::Repo)
                .map_err(String::as_str),
            &|key| std::env::var(key).ok(),
        )?;
        drop(repo);
        settings
    };
    for warning in &settings.warnings {
        eprintln!("warning: {warning}");
    }
    for notice in &settings.notices {
        eprintln!("note: {notice}");
    }
    let colors = Colors::of(&settings);
    match &settings.command {
        CommandSettings::Review(review) => review_command(&settings.dir, review, colors),
        CommandSettings::Nits { json } => nits_command(&settings.dir, *json, colors),
        CommandSettings::Config(config) => config_command(config, &settings),
        CommandSettings::Completions(shell) => completions_command(*shell),
        CommandSettings::Man => man_command(),
        CommandSettings::Hook(hook) => gate::hook_command(&settings.dir, hook),
        CommandSettings::Override(how) => gate::override_command(&settings.dir, how),
        CommandSettings::Fix(fix) => fix::fix_command(&settings.dir, fix, colors),
        CommandSettings::SpecReview(how) => spec::spec_review_command(&settings.dir, how, colors),
        CommandSettings::Human(how) => human::command(&settings.dir, how),
        CommandSettings::Show(show) => show::show_command(&settings.dir, show, colors),
        CommandSettings::History(h) => history::history_command(&settings.dir, h, colors),
        CommandSettings::Stats(stats) => history::stats_command(&settings.dir, stats, colors),
        CommandSettings::Init { hooks } => onboard::init_command(&settings.dir, *hooks, colors),
        CommandSettings::Doctor(doctor) => onboard::doctor_command(&settings.dir, doctor, colors),
        CommandSettings::Schema(kind) => schema::schema_command(*kind),
        CommandSettings::Notes { way, remote } => notes_command(&settings.dir, *way, remote),
    }
}

/// The styles of stdout and stderr, from `--color`, each stream being a
/// terminal or not, and NO_COLOR.
#[derive(Debug, Clone, Copy)]
struct Colors {
    stdout: Style,
    stderr: Style,
}

impl Colors {
    /// No colour anywhere: for a review a git hook runs, whose output git
    /// relays.
    fn plain() -> Colors {
        let none = Style { color: false };
        Colors {
            stdout: none,
            stderr: none,
        }
    }

    fn of(settings: &Settings) -> Colors {
        let env = |key: &str| std::env::var(key).ok();
        let style = |terminal| Style {
            color: settings.color(terminal, &env),
        };
        Colors {
            stdout: style(std::io::stdout().is_terminal()),
            stderr: style(std::io::stderr().is_terminal()),
        }
    }
}

/// `speed completions SHELL`: the script, generated from the clap
/// definitions, so it always matches the flags.
fn completions_command(shell: settings::Shell) -> anyhow::Result<Outcome> {
    use clap::CommandFactory;
    use clap_complete::Shell as Target;
    let target = match shell {
        settings::Shell::Bash => Target::Bash,
        settings::Shell::Zsh => Target::Zsh,
        settings::Shell::Fish => Target::Fish,
    };
    let mut script = Vec::new();
    clap_complete::generate(target, &mut Cli::command(), "speed", &mut script);
    print!("{}", String::from_utf8_lossy(&script));
    Ok(Outcome::Approved)
}

/// `speed man`: the man page in roff, generated from the clap definitions,
/// with a section per subcommand.
fn man_command() -> anyhow::Result<Outcome> {
    use clap::CommandFactory;
    let page = render::man::page(Cli::command()).context("cannot render the man page")?;
    print!("{}", String::from_utf8_lossy(&page));
    Ok(Outcome::Approved)
}

fn review_command(
    dir: &Path,
    settings: &ReviewSettings,
    colors: Colors,
) -> anyhow::Result<Outcome> {
    let config = &settings.review;
    if let (Some(note), false) = (&config.llm.offline_note, config.dry_run) {
        eprintln!("note: {note}");
    }
    let ctx = Context::open(dir, config.clone())?;
    if let review::ProviderBatch::Collect { .. } = config.provider_batch {
        return batches::collect_command(&ctx, settings, colors);
    }
    let plan = review::plan::plan(&ctx)?;
    if plan.batch_mode
        && plan.tasks_read == 0
        && plan.defects_read == 0
        && !plan.unreadable.is_empty()
    {
        eprintln!(
            "error: task files exist but none could be read ({} unreadable); nothing was reviewed",
            plan.unreadable.len()
        );
    }
    for report in &plan.unreadable {
        if let Some(err) = &report.error {
            eprintln!("error: {err}");
        }
    }
    for again in &plan.reselected {
        eprintln!("note: {}: {}", again.label(), again.reason);
    }
    // In every format: a CI log shows what this runner of the matrix held.
    if let Some(share) = &plan.share {
        eprintln!("{}", share.line());
    }
    if plan.subjects.is_empty() {
        return Ok(nothing_to_review(&ctx.root, settings, &plan, colors));
    }
    if config.dry_run {
        return Ok(dry_run_command(
            &ctx,
            settings,
            &plan.unreadable,
            plan.subjects,
            colors,
        ));
    }
    if config.provider_batch == review::ProviderBatch::Submit {
        return batches::submit_command(&ctx, settings, plan, colors);
    }
    run_reviews(&ctx, settings, plan, colors)
}

/// The built-in prompt templates with the overrides settings chose.
fn templates(overrides: &[prompt::Override]) -> anyhow::Result<Templates> {
    Ok(Templates::from_overrides(overrides)?)
}

/// Whose nits go with them: the work a batch found merged.
fn merged_owners(skipped: &[review::Skipped]) -> Vec<nits::Owner> {
    skipped
        .iter()
        .filter(|s| s.merged)
        .map(|s| nits::Owner {
            task_id: s.task_id.clone(),
            feature: s.feature.clone(),
            defect: s.defect.clone(),
        })
        .collect()
}

/// No review to run: either every named task was unreadable (an error) or
/// no `done` task needs a review (success).
fn nothing_to_review(
    root: &Path,
    settings: &ReviewSettings,
    plan: &Plan,
    colors: Colors,
) -> Outcome {
    if let Err(err) = nits::merge_save(root, &[], &[], &merged_owners(&plan.skipped)) {
        eprintln!("warning: could not save nits: {err}");
    }
    if !plan.unreadable.is_empty() {
        if settings.json() && settings.review.dry_run {
            let runs: Vec<dry::DryRun> = plan
                .unreadable
                .iter()
                .map(dry::DryRun::unreadable)
                .collect();
            print!("{}", render::json::dry_runs(&runs));
        } else if settings.format != Format::Human {
            let results = Results::new(&plan.unreadable, &plan.skipped);
            print_results(root, settings.format, &results, colors);
        }
        return Outcome::Error;
    }
    if settings.format != Format::Human {
        let results = Results {
            share: plan.share.as_ref(),
            ..Results::new(&[], &plan.skipped)
        };
        print_results(root, settings.format, &results, colors);
    } else if plan.batch_mode && plan.tasks_read == 0 && plan.defects_read == 0 {
        let mut looked: Vec<String> = tasks::Store::open(root)
            .task_folders()
            .iter()
            .map(|p| p.strip_prefix(root).unwrap_or(p).display().to_string())
            .collect();
        let defects = matches!(&settings.review.target, Target::Tasks { feature: None, .. });
        if defects {
            looked.extend(
                defects::Store::open(root)
                    .folders()
                    .iter()
                    .map(|p| p.display().to_string()),
            );
        }
        let feature = match &settings.review.target {
            Target::Tasks {
                feature: Some(f), ..
            } => format!(" of feature {f}"),
            _ => String::new(),
        };
        let fixed = if defects { " and no fixed defects" } else { "" };
        eprintln!(
            "Nothing to review: no task files{feature}{fixed} found (looked in {}).",
            looked.join(", ")
        );
    } else if !plan.batch_mode {
        // `--task-id` or `--defect` named work that is merged.
        for s in &plan.skipped {
            eprintln!(
                "{}: {}. Nothing to review; its file is unchanged.",
                render::skipped_subject(s),
                s.reason
            );
        }
    } else {
        let human = plan.skipped.iter().filter(|s| s.awaiting_human).count();
        let merged = plan.skipped.iter().filter(|s| s.merged).count();
        let missing = plan
            .skipped
            .iter()
            .filter(|s| s.branch_missing.is_some())
            .count();
        let approved = match plan.skipped.len() - human - merged - missing - plan.waiting {
            0 => String::new(),
            n => format!("; {n} approved and still covered by that approval"),
        };
        let approved = match merged {
            0 => approved,
            n => format!("{approved}; {n} merged into {}", settings.review.main.name),
        };
        let approved = match missing {
            0 => approved,
            1 => format!("{approved}; 1 whose branch is gone"),
            n => format!("{approved}; {n} whose branches are gone"),
        };
        let mut approved = match human {
            0 => approved,
            n => format!(
                "{approved}; {n} approved by the model and waiting for a person (speed approve or speed reject)"
            ),
        };
        if plan.waiting > 0 {
            approved.push_str(&format!(
                "; {} waiting in a provider batch (`speed review --collect`)",
                plan.waiting
            ));
        }
        if !plan.not_done.is_empty() {
            let statuses: Vec<String> = plan
                .not_done
                .iter()
                .map(|(status, n)| format!("{n} {status}"))
                .collect();
            approved.push_str(&format!(
                "; {} (only done tasks are reviewed)",
                statuses.join(", ")
            ));
        }
        if plan.other_shards > 0 {
            approved.push_str(&format!("; {} left to other shards", plan.other_shards));
        }
        let defects = match plan.defects_read {
            0 => String::new(),
            1 => ", 1 fixed defect".to_string(),
            n => format!(", {n} fixed defects"),
        };
        let here = match &plan.share {
            Some(share) => format!(" in shard {}", share.shard.label()),
            None => String::new(),
        };
        eprintln!(
            "Nothing to review: {} read{defects}, nothing{here} needs a review{approved}.",
            render::plural(plan.tasks_read, "task file"),
        );
        for s in plan
            .skipped
            .iter()
            .filter(|s| s.merged || s.branch_missing.is_some())
        {
            eprintln!("  {}: {}", render::skipped_subject(s), s.reason);
        }
    }
    Outcome::Approved
}

/// What a review command prints once its reviews are done.
struct Results<'a> {
    reports: &'a [Report],
    nits: &'a [nits::Nit],
    skipped: &'a [review::Skipped],
    batch_mode: bool,
    /// `--shard K/N`: what this shard held.
    share: Option<&'a review::shard::Share>,
    /// Every subject was decided (approved, checks passed or sent back):
    /// nothing failed and nothing waits in a provider batch.
    decided: bool,
}

impl<'a> Results<'a> {
    fn new(reports: &'a [Report], skipped: &'a [review::Skipped]) -> Results<'a> {
        Results {
            reports,
            nits: &[],
            skipped,
            batch_mode: false,
            share: None,
            decided: reports.iter().all(Report::decided),
        }
    }
}

/// Everything printed once the reviews are done, in the chosen format.
/// Human reports were printed as each review completed: the summary of a
/// batch and the nits follow them.
fn print_results(root: &Path, format: Format, results: &Results, colors: Colors) {
    let Results {
        reports,
        nits,
        skipped,
        batch_mode,
        share,
        decided,
    } = *results;
    let text = match format {
        Format::Human => {
            let mut text = String::new();
            if batch_mode || reports.len() > 1 {
                text.push_str(&render::human::summary(reports, skipped, &colors.stdout));
            }
            text.push_str(&render::human::nits(nits, &colors.stdout));
            text
        }
        Format::Json => render::json::reviews(reports, nits, skipped),
        // Code scanning reads a log without results as "every alert fixed":
        // a run that decided less than everything writes none (see
        // render::sarif).
        Format::Sarif if !decided => {
            eprintln!("{}", render::sarif::WITHHELD);
            String::new()
        }
        Format::Sarif => {
            let content = Content::open(root);
            render::sarif::log(reports, skipped, &|r, path, first, last| {
                content.lines(&r.head_commit, path, first, last)
            })
        }
        Format::Junit => render::junit::report(reports, skipped, share),
        Format::Html => {
            let pages: Vec<(&Report, Option<&str>, Option<&str>)> =
                reports.iter().map(|r| (r, None, None)).collect();
            show::review_page(root, &pages)
        }
        Format::Markdown => reports
            .iter()
            .map(|r| render::markdown::report(r, None, None))
            .collect::<Vec<_>>()
            .join("\n---\n\n"),
        Format::Github => {
            append_step_summary(&render::github::summary(reports, skipped));
            render::github::commands(reports, skipped, share, &stop_token())
        }
    };
    print!("{text}");
    let _ = std::io::stdout().flush();
}

/// The files at reviews' head commits, read once each: what SARIF
/// fingerprints are made of (the content a finding points at).
struct Content {
    repo: Option<Repository>,
    files: std::cell::RefCell<std::collections::HashMap<(String, String), Option<String>>>,
}

impl Content {
    fn open(root: &Path) -> Content {
        Content {
            repo: Repository::open(root).ok(),
            files: Default::default(),
        }
    }

    /// Lines `first..=last` (1-based) of `path` at `commit`; None when the
    /// file or the lines are not there.
    fn lines(&self, commit: &str, path: &str, first: u64, last: u64) -> Option<String> {
        let repo = self.repo.as_ref()?;
        if commit.is_empty() {
            return None;
        }
        let mut files = self.files.borrow_mut();
        let text = files
            .entry((commit.to_string(), path.to_string()))
            .or_insert_with(|| {
                repo.read_file(commit, path)
                    .ok()
                    .flatten()
                    .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
            })
            .as_deref()?;
        let skip = usize::try_from(first.checked_sub(1)?).ok()?;
        let take = usize::try_from(last.saturating_sub(first) + 1).ok()?;
        let lines: Vec<&str> = text.lines().skip(skip).take(take).collect();
        (!lines.is_empty()).then(|| lines.join("\n"))
    }
}

/// The token that ends GitHub's stop-commands, drawn after every model
/// answered: no text in the reports can know it (see render::github).
fn stop_token() -> String {
    format!("speed-{:016x}{:016x}", fastrand::u64(..), fastrand::u64(..))
}

/// In GitHub Actions, `$GITHUB_STEP_SUMMARY` names a file whose Markdown is
/// shown on the run's page; speed appends its summary there. A summary that
/// cannot be written is a warning: the review itself stands.
fn append_step_summary(markdown: &str) {
    let Some(path) = std::env::var_os("GITHUB_STEP_SUMMARY").filter(|p| !p.is_empty()) else {
        return;
    };
    let written = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .and_then(|mut file| file.write_all(format!("{markdown}\n").as_bytes()));
    if let Err(err) = written {
        eprintln!(
            "warning: cannot append the summary to GITHUB_STEP_SUMMARY ({}): {err}",
            Path::new(&path).display()
        );
    }
}

/// Ask the model for every subject, print each report as it completes, then
/// the summary and the nits.
fn run_reviews(
    ctx: &Context,
    settings: &ReviewSettings,
    plan: Plan,
    colors: Colors,
) -> anyhow::Result<Outcome> {
    let config = &ctx.config;
    let stdout_style = colors.stdout;
    let env = |key: &str| std::env::var(key).ok();
    let models = Models::build(&config.llm, config.guardian.model.as_deref(), &env)?;
    let pacer = (config.llm.rpm.is_some() || config.llm.tpm.is_some())
        .then(|| Arc::new(llm::pacing::Pacer::new(config.llm.rpm, config.llm.tpm)));
    let progress = Progress::start(std::io::stderr().is_terminal());

    let human = settings.format == Format::Human;
    if human {
        print!("{}", render::human::banner(&stdout_style));
    }
    // stdout and stderr on one terminal: the human report's failure line
    // is the error, said once.
    let one_screen = human && std::io::stdout().is_terminal() && std::io::stderr().is_terminal();
    let mut on_report = |report: &Report| {
        progress.clear();
        let shown = human && (report.error.is_none() || report.prepared());
        // Errors reach stderr (unless the report just printed on the same
        // terminal says it); a review that never reached the model has no
        // report to show, one that failed at the model keeps its report.
        if let Some(err) = report.error_line().filter(|_| !(shown && one_screen)) {
            // The runner reads commands from stderr too, and errors quote
            // servers and models: in GitHub Actions, one line each.
            let err = match settings.format {
                Format::Github => err.split_whitespace().collect::<Vec<_>>().join(" "),
                _ => err,
            };
            eprintln!("error: {err}");
        }
        if shown {
            print!("{}", render::human::report(report, &stdout_style));
        }
    };
    let reviewed = batch::run(
        ctx,
        &models,
        &pacer,
        &progress,
        plan.subjects,
        config.concurrency,
        &mut on_report,
    );
    progress.stop();
    let mut reports = plan.unreadable;
    reports.extend(reviewed);
    human::after_reviews(ctx, &mut reports);

    let found = nits::collect(&reports);
    let merged = merged_owners(&plan.skipped);
    if let Err(err) = nits::merge_save(&ctx.root, &reports, &found, &merged) {
        eprintln!("warning: could not save nits: {err}");
    }
    let results = Results {
        nits: &found,
        batch_mode: plan.batch_mode,
        share: plan.share.as_ref(),
        ..Results::new(&reports, &plan.skipped)
    };
    print_results(&ctx.root, settings.format, &results, colors);
    Ok(reports
        .iter()
        .fold(Outcome::Approved, |acc, r| acc.worst(r.outcome)))
}

fn dry_run_command(
    ctx: &Context,
    settings: &ReviewSettings,
    unreadable: &[Report],
    subjects: Vec<Subject>,
    colors: Colors,
) -> Outcome {
    let mut runs: Vec<dry::DryRun> = unreadable.iter().map(dry::DryRun::unreadable).collect();
    let already_reported = runs.len();
    runs.extend(subjects.into_iter().map(|s| dry::dry_run(ctx, s)));
    let err_style = colors.stderr;
    let explain = |run: &dry::DryRun, why: &str| match run.nothing_implemented {
        true => eprintln!("{why}: the review would request changes without calling a model"),
        false => eprintln!("error: {why}"),
    };
    if settings.json() {
        print!("{}", render::json::dry_runs(&runs));
        for run in &runs[already_reported..] {
            if let Err(why) = &run.result {
                explain(run, why);
            }
        }
    } else {
        for run in &runs[already_reported..] {
            match &run.result {
                Ok(prompt) => print!("{}", prompt.prompt),
                Err(why) => explain(run, why),
            }
            if run.result.is_ok() {
                eprint!("{}", render::dry::accounting(run, &err_style));
            }
        }
    }
    // Code a review would not see ends the output, marked, whatever the
    // format: the accounting above it is long.
    for run in &runs[already_reported..] {
        if let Some(warning) = render::dry::warning(run) {
            eprintln!("warning: {warning}");
        }
    }
    if runs.iter().any(dry::DryRun::failed) {
        Outcome::Error
    } else {
        Outcome::Approved
    }
}

/// `speed notes push|fetch`: speed's verdicts (git notes) to or from a
/// remote, and what that did.
fn notes_command(
    dir: &Path,
    way: crate::ledger::notes::Sync,
    remote: &str,
) -> anyhow::Result<Outcome> {
    use crate::git::Synced;
    use crate::ledger::notes::{self, REF, Sync};
    let repo = Repository::discover(dir)?;
    let root = repo.root().to_path_buf();
    drop(repo);
    let synced = notes::sync(&root, way, remote).with_context(|| match way {
        Sync::Push => format!("cannot push {REF} to {remote}"),
        Sync::Fetch => format!("cannot fetch {REF} from {remote}"),
    })?;
    let count = notes::count(&root);
    let held = format!(
        "{} with a note of speed's here",
        render::plural(count, "commit")
    );
    let line = match (way, synced) {
        (Sync::Fetch, Synced::NoneThere) => format!("{remote} holds no {REF} yet: nothing fetched"),
        (Sync::Push, Synced::NoneHere) => {
            format!("no {REF} here yet: nothing to push (a decided review writes one)")
        }
        (_, Synced::UpToDate) => format!("{REF} is the same here and on {remote}"),
        (Sync::Fetch, Synced::FastForward) => format!("fetched {REF} from {remote}"),
        (Sync::Fetch, _) => {
            format!("fetched {REF} from {remote} and joined it with the notes here")
        }
        (Sync::Push, Synced::Merged) => format!(
            "pushed {REF} to {remote}, after joining the notes {remote} had and these lacked"
        ),
        (Sync::Push, _) => format!("pushed {REF} to {remote}"),
    };
    eprintln!("{line} ({held}).");
    Ok(Outcome::Approved)
}

/// `speed config`: the effective settings and where each came from. The
/// prompt templates are parsed too, so a broken override fails here as it
/// would fail a review.
fn config_command(config: &ConfigSettings, settings: &Settings) -> anyhow::Result<Outcome> {
    templates(&config.prompts)?;
    if config.json {
        print!(
            "{}",
            config::json(config, &settings.notices, &settings.warnings)
        );
    } else {
        print!("{}", config::human(config));
    }
    if config.strict && !settings.warnings.is_empty() {
        eprintln!(
            "error: --strict: reading the settings gave {} warning{} (above)",
            settings.warnings.len(),
            if settings.warnings.len() == 1 {
                ""
            } else {
                "s"
            }
        );
        return Ok(Outcome::Error);
    }
    Ok(Outcome::Approved)
}

fn nits_command(dir: &Path, json: bool, colors: Colors) -> anyhow::Result<Outcome> {
    let repo = Repository::discover(dir)?;
    let mut saved = nits::load(repo.state_root())?;
    // The nits of current approvals: a task a person (or a later review
    // elsewhere) has since turned down has none to tidy.
    let store = tasks::Store::open(repo.state_root());
    saved.retain(|n| match (&n.task_id, &n.defect) {
        (Some(id), None) => store
            .find(id, n.feature.as_deref())
            .map_or(true, |t| t.review_verdict.as_deref() == Some("approve")),
        _ => true,
    });
    if json {
        print!("{}", render::json::nits(&saved));
    } else if saved.is_empty() {
        eprintln!("No nits saved: run `speed review` first.");
    } else {
        print!("{}", render::human::nits(&saved, &colors.stdout));
    }
    Ok(Outcome::Approved)
}

/// stderr for the log lines of `-v`, through the safety net like every
/// other line speed prints: one formatted event per write.
struct Netted;

impl Write for Netted {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        note(&String::from_utf8_lossy(buf));
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Set once stdout has failed: its reader is gone (`speed review | head`).
static STDOUT_CLOSED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Results on stdout, flushed at once. A reader that has gone away ends the
/// printing quietly: nothing more is written and nothing panics; the reviews
/// asked for are still done and recorded, and the exit code is theirs.
fn out(text: &str) {
    use std::sync::atomic::Ordering;
    if STDOUT_CLOSED.load(Ordering::SeqCst) {
        return;
    }
    let text = crate::secrets::net::printed(text);
    let mut stdout = std::io::stdout().lock();
    if stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
        .is_err()
    {
        STDOUT_CLOSED.store(true, Ordering::SeqCst);
    }
}

/// Messages on stderr. A closed stderr loses them; it never stops speed.
fn note(text: &str) {
    let text = crate::secrets::net::printed(text);
    let _ = std::io::stderr().lock().write_all(text.as_bytes());
}
