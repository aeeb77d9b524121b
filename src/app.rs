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
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::Context;
use clap::Parser;

use crate::cli::{Cli, Command};
use crate::exit::Outcome;
use crate::git::Repository;
use crate::llm;
use crate::prompt::{PendingCounter, Templates};
use crate::render::{self, Style};
use crate::review::{self, Event, Events, Shared, Subject, batch, dry, nits};
use crate::settings::{
    self, CommandSettings, ConfigSettings, LlmSettings, Provider, ReviewSettings, Settings, Target,
};
use crate::tasks;

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
mod gate;

/// Run speed with these arguments (the first is the program name) and return
/// the exit code the process should end with.
pub fn entry<I, T>(args: I) -> u8
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let args: Vec<OsString> = args.into_iter().map(Into::into).collect();
    let cli = match Cli::try_parse_from(&args) {
        Ok(cli) => cli,
        Err(err) => {
            // clap formats help, version and usage errors; they are printed
            // like everything else (a usage error quotes what was typed).
            let colored = if err.use_stderr() {
                std::io::stderr().is_terminal()
            } else {
                std::io::stdout().is_terminal()
            } && style_for(true).color;
            let rendered = if colored {
                err.render().ansi().to_string()
            } else {
                err.render().to_string()
            };
            if !err.use_stderr() {
                print!("{rendered}");
                return Outcome::Approved.code();
            }
            eprint!("{rendered}");
            if let Some(shape) = usage_json_shape(&args) {
                print!("{}", json_failure(shape, err.render().to_string().trim()));
            }
            return Outcome::Usage.code();
        }
    };
    init_logging(cli.verbose);
    let shape = cli.json().then(|| JsonShape::of(&cli.command));
    match run(cli) {
        Ok(outcome) => outcome.code(),
        Err(err) => {
            eprintln!("error: {err:#}");
            // `--json` promises one JSON object on stdout, even when nothing
            // could be done; every path that prints its own returns Ok.
            if let Some(shape) = shape {
                print!("{}", json_failure(shape, &format!("{err:#}")));
            }
            Outcome::Error.code()
        }
    }
}

/// Which JSON object a failed command prints: the one it would have printed,
/// empty, with `error` set.
#[derive(Debug, Clone, Copy)]
enum JsonShape {
    Review,
    Nits,
    Config,
}

impl JsonShape {
    fn of(command: &Command) -> JsonShape {
        match command {
            Command::Review(_) => JsonShape::Review,
            Command::Nits(_) => JsonShape::Nits,
            Command::Config(_) => JsonShape::Config,
            // They have no --json (`Cli::json` is false): never asked.
            Command::Hook(_) | Command::Override(_) => JsonShape::Review,
        }
    }
}

fn json_failure(shape: JsonShape, error: &str) -> String {
    match shape {
        JsonShape::Review => render::json::failure(error),
        JsonShape::Nits => render::json::nits_failure(error),
        JsonShape::Config => render::config::json_failure(error),
    }
}

/// For a usage error: whether `--json` was asked for, and by which command
/// (the first word naming one; review when none does).
fn usage_json_shape(args: &[OsString]) -> Option<JsonShape> {
    let words: Vec<&str> = args
        .iter()
        .skip(1)
        .map(|a| a.to_str().unwrap_or(""))
        .take_while(|a| *a != "--")
        .collect();
    if !words.contains(&"--json") {
        return None;
    }
    Some(
        match words
            .iter()
            .find(|w| matches!(**w, "review" | "nits" | "config"))
        {
            Some(&"nits") => JsonShape::Nits,
            Some(&"config") => JsonShape::Config,
            _ => JsonShape::Review,
        },
    )
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
    match &settings.command {
        CommandSettings::Review(review) => review_command(&settings.dir, review),
        CommandSettings::Nits { json } => nits_command(&settings.dir, *json),
        CommandSettings::Config(config) => config_command(config, &settings),
        CommandSettings::Hook(hook) => gate::hook_command(&settings.dir, hook),
        CommandSettings::Override(how) => gate::override_command(&settings.dir, how),
    }
}

/// Colour only on a terminal, and never with NO_COLOR set.
fn style_for(terminal: bool) -> Style {
    let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
    Style {
        color: terminal && !no_color,
    }
}

/// What a review command found to do.
struct Gathered {
    subjects: Vec<Subject>,
    /// Tasks that could not be read: reported, but they stop no other task.
    unreadable: Vec<review::Report>,
    /// Batch mode: tasks already approved at their current diff.
    skipped: Vec<batch::Skipped>,
    batch_mode: bool,
    /// Batch mode: the task files read (in the chosen feature), so "nothing
    /// to review" can say what it looked at.
    tasks_read: usize,
}

fn review_command(dir: &Path, settings: &ReviewSettings) -> anyhow::Result<Outcome> {
    if let (Some(note), false) = (&settings.llm.offline_note, settings.dry_run) {
        eprintln!("note: {note}");
    }
    // First, so the tokenizer is built while git is read. It lives as long
    // as the process: freeing its hundreds of thousands of entries on the
    // way out would only delay the exit (tens of ms), so it is never freed.
    let counter = Arc::new(PendingCounter::start(&settings.tokenizer)?);
    std::mem::forget(Arc::clone(&counter));
    let repo = Repository::discover(dir)?;
    let root = repo.root().to_path_buf();
    let shared = Shared {
        main: settings.main.clone(),
        counter,
        templates: templates(&settings.prompts)?,
        actor: actor(&repo, settings),
        settings: settings.clone(),
        root,
    };
    let gathered = gather(&shared)?;
    for report in &gathered.unreadable {
        if let Some(err) = &report.error {
            eprintln!("error: {err}");
        }
    }
    if gathered.subjects.is_empty() {
        return Ok(nothing_to_review(&shared.root, settings, &gathered));
    }
    if settings.dry_run {
        return Ok(dry_run_command(
            &shared,
            &gathered.unreadable,
            gathered.subjects,
        ));
    }
    run_reviews(&shared, gathered)
}

/// Who reviews: config `review.actor`, else the git user (`user.name`), else
/// the login name; the email is git's `user.email`, else `<name>@local`.
fn actor(repo: &Repository, settings: &ReviewSettings) -> tasks::Actor {
    let (git_name, git_email) = repo.user();
    let login = || {
        ["USER", "USERNAME"]
            .iter()
            .find_map(|key| std::env::var(key).ok().filter(|v| !v.trim().is_empty()))
    };
    let name = settings
        .actor
        .clone()
        .or(git_name)
        .or_else(login)
        .unwrap_or_default();
    tasks::Actor::new(&name, git_email.as_deref())
}

/// The built-in prompt templates with the overrides settings chose.
fn templates(overrides: &[settings::Override]) -> anyhow::Result<Templates> {
    Ok(Templates::with_overrides(overrides.iter().map(|o| {
        (o.name.as_str(), o.from.as_str(), o.text.as_str())
    }))?)
}

/// The tasks (or the branch) to review, from the settings' target.
fn gather(shared: &Shared) -> anyhow::Result<Gathered> {
    let store = tasks::Store::open(&shared.root);
    let mut gathered = Gathered {
        subjects: Vec::new(),
        unreadable: Vec::new(),
        skipped: Vec::new(),
        batch_mode: false,
        tasks_read: 0,
    };
    match &shared.settings.target {
        Target::Tasks { ids, feature } if !ids.is_empty() => {
            for id in ids {
                match store.find(id, feature.as_deref()) {
                    Ok(task) => gathered.subjects.push(Subject::Task(Box::new(task))),
                    Err(err) => gathered.unreadable.push(review::single::unreadable(
                        Some(id.clone()),
                        feature.clone(),
                        err.to_string(),
                    )),
                }
            }
        }
        Target::Tasks { feature, .. } => {
            let (all, broken) = store.scan()?;
            gathered.unreadable.extend(
                broken
                    .into_iter()
                    .map(|err| review::single::unreadable(None, None, err.to_string())),
            );
            let all: Vec<tasks::Task> = all
                .into_iter()
                .filter(|t| feature.is_none() || t.feature == *feature)
                .collect();
            gathered.tasks_read = all.len();
            if all.is_empty() && !gathered.unreadable.is_empty() {
                eprintln!(
                    "error: task files exist but none could be read ({} unreadable); nothing was reviewed",
                    gathered.unreadable.len()
                );
            }
            let (selected, skipped) = batch::select(shared, all, shared.settings.force)?;
            gathered.subjects = selected
                .into_iter()
                .map(|t| Subject::Task(Box::new(t)))
                .collect();
            gathered.skipped = skipped;
            gathered.batch_mode = true;
        }
        Target::Branch {
            branch,
            specs,
            criteria,
        } => {
            let criteria_path = criteria.clone();
            let criteria = match criteria {
                Some(path) => {
                    let text = std::fs::read_to_string(path)
                        .with_context(|| format!("cannot read criteria file {}", path.display()))?;
                    tasks::Criterion::parse_lines(&text)
                }
                None => Vec::new(),
            };
            gathered.subjects.push(Subject::Branch {
                branch: branch.clone(),
                specs: specs.clone(),
                criteria,
                criteria_file: criteria_path.clone(),
            });
        }
    }
    Ok(gathered)
}

/// No review to run: either every named task was unreadable (an error) or
/// no `done` task needs a review (success).
fn nothing_to_review(root: &Path, settings: &ReviewSettings, gathered: &Gathered) -> Outcome {
    if !gathered.unreadable.is_empty() {
        if settings.json && settings.dry_run {
            let runs: Vec<dry::DryRun> = gathered
                .unreadable
                .iter()
                .map(dry::DryRun::unreadable)
                .collect();
            print!("{}", render::json::dry_runs(&runs));
        } else if settings.json {
            print!(
                "{}",
                render::json::reviews(&gathered.unreadable, &[], &gathered.skipped)
            );
        }
        return Outcome::Error;
    }
    if settings.json {
        print!("{}", render::json::reviews(&[], &[], &gathered.skipped));
    } else if gathered.batch_mode && gathered.tasks_read == 0 {
        let looked: Vec<String> = tasks::Store::open(root)
            .task_folders()
            .iter()
            .map(|p| p.strip_prefix(root).unwrap_or(p).display().to_string())
            .collect();
        let feature = match &settings.target {
            Target::Tasks {
                feature: Some(f), ..
            } => format!(" of feature {f}"),
            _ => String::new(),
        };
        eprintln!(
            "Nothing to review: no task files{feature} found (looked in {}).",
            looked.join(", ")
        );
    } else {
        let approved = match gathered.skipped.len() {
            0 => String::new(),
            n => format!("; {n} approved and still covered by that approval"),
        };
        eprintln!(
            "Nothing to review: {} task file{} read, no `done` task needs a review{approved}.",
            gathered.tasks_read,
            if gathered.tasks_read == 1 { "" } else { "s" }
        );
    }
    Outcome::Approved
}

/// Ask the model for every subject, print each report as it completes, then
/// the summary and the nits.
fn run_reviews(shared: &Shared, gathered: Gathered) -> anyhow::Result<Outcome> {
    let settings = &shared.settings;
    let stdout_style = style_for(std::io::stdout().is_terminal());
    let models = build_models(&settings.llm, &settings.guardian.model)?;
    let pacer = (settings.llm.rpm.is_some() || settings.llm.tpm.is_some())
        .then(|| Arc::new(llm::pacing::Pacer::new(settings.llm.rpm, settings.llm.tpm)));
    let progress = Progress::start(std::io::stderr().is_terminal());

    if !settings.json {
        print!("{}", render::human::banner(&stdout_style));
    }
    let json = settings.json;
    let mut on_report = |report: &review::Report| {
        progress.clear();
        // Errors always reach stderr; a review that never reached the model
        // has no report to show, one that failed at the model keeps its report.
        if let Some(err) = &report.error {
            eprintln!("error: {}: {err}", label(report));
        }
        if !json && (report.error.is_none() || report.prepared()) {
            print!("{}", render::human::report(report, &stdout_style));
        }
    };
    let reviewed = batch::run(
        shared,
        &models,
        &pacer,
        &progress,
        gathered.subjects,
        settings.concurrency,
        &mut on_report,
    );
    progress.stop();
    let mut reports = gathered.unreadable;
    reports.extend(reviewed);

    let found = nits::collect(&reports);
    if let Err(err) = nits::merge_save(&shared.root, &reports, &found) {
        eprintln!("warning: could not save nits: {err}");
    }
    if json {
        print!(
            "{}",
            render::json::reviews(&reports, &found, &gathered.skipped)
        );
    } else {
        if gathered.batch_mode || reports.len() > 1 {
            print!(
                "{}",
                render::human::summary(&reports, &gathered.skipped, &stdout_style)
            );
        }
        print!("{}", render::human::nits(&found, &stdout_style));
    }
    Ok(reports
        .iter()
        .fold(Outcome::Approved, |acc, r| acc.worst(r.outcome)))
}

fn label(report: &review::Report) -> String {
    match &report.task_id {
        Some(id) => format!("task {id}"),
        None => format!("branch {}", report.branch),
    }
}

fn dry_run_command(
    shared: &Shared,
    unreadable: &[review::Report],
    subjects: Vec<Subject>,
) -> Outcome {
    let mut runs: Vec<dry::DryRun> = unreadable.iter().map(dry::DryRun::unreadable).collect();
    let already_reported = runs.len();
    runs.extend(subjects.into_iter().map(|s| dry::dry_run(shared, s)));
    let err_style = style_for(std::io::stderr().is_terminal());
    let explain = |run: &dry::DryRun, why: &str| match run.nothing_implemented {
        true => eprintln!("{why}: the review would request changes without calling a model"),
        false => eprintln!("error: {why}"),
    };
    if shared.settings.json {
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
                eprint!("{}", render::human::accounting(run, &err_style));
            }
        }
    }
    if runs.iter().any(dry::DryRun::failed) {
        Outcome::Error
    } else {
        Outcome::Approved
    }
}

fn llm_config(settings: &LlmSettings) -> anyhow::Result<llm::Config> {
    let provider = match settings.provider {
        Provider::Model(kind) => kind,
        Provider::Offline => {
            anyhow::bail!("an offline review asks no model (llm.provider = \"none\", --offline)")
        }
    };
    Ok(llm::Config {
        provider,
        base_url: settings.base_url.clone(),
        model: settings.model.clone(),
        api_key_env: settings.api_key_env.clone(),
        command: settings.command.clone(),
        timeout: settings.timeout,
        connect_timeout: settings.connect_timeout,
        max_retries: settings.max_retries,
        temperature: settings.temperature,
        seed: settings.seed,
        max_output_tokens: settings.max_output_tokens,
        structured_output: settings.structured_output,
        retry_base: settings.retry_base,
        max_answer_bytes: settings.max_answer_bytes,
    })
}

fn build_models(
    settings: &LlmSettings,
    guardian_model: &Option<String>,
) -> anyhow::Result<review::Models> {
    if settings.provider == Provider::Offline {
        let none: Arc<dyn llm::Provider> = Arc::new(review::NoModel);
        return Ok(review::Models {
            review: none.clone(),
            guardian: none,
        });
    }
    let env = |key: &str| std::env::var(key).ok();
    let config = llm_config(settings)?;
    let review: Arc<dyn llm::Provider> = Arc::from(llm::provider(&config, &env)?);
    let guardian = match guardian_model {
        Some(model) if Some(model) != settings.model.as_ref() => {
            let mut config = config.clone();
            config.model = Some(model.clone());
            Arc::from(llm::provider(&config, &env)?)
        }
        _ => review.clone(),
    };
    Ok(review::Models { review, guardian })
}

/// `speed config`: the effective settings and where each came from. The
/// prompt templates are parsed too, so a broken override fails here as it
/// would fail a review.
fn config_command(config: &ConfigSettings, settings: &Settings) -> anyhow::Result<Outcome> {
    templates(&config.prompts)?;
    if config.json {
        print!(
            "{}",
            render::config::json(config, &settings.notices, &settings.warnings)
        );
    } else {
        print!("{}", render::config::human(config));
    }
    Ok(Outcome::Approved)
}

fn nits_command(dir: &Path, json: bool) -> anyhow::Result<Outcome> {
    let repo = Repository::discover(dir)?;
    let saved = nits::load(repo.root())?;
    if json {
        print!("{}", render::json::nits(&saved));
    } else if saved.is_empty() {
        eprintln!("No nits saved: run `speed review` first.");
    } else {
        let style = style_for(std::io::stdout().is_terminal());
        print!("{}", render::human::nits(&saved, &style));
    }
    Ok(Outcome::Approved)
}

/// The progress display on stderr: a spinner line while models work, on a
/// terminal only; rate-limit waits are always reported.
struct Progress {
    terminal: bool,
    state: Arc<Mutex<ProgressState>>,
    stop: Arc<std::sync::atomic::AtomicBool>,
    thread: Mutex<Option<std::thread::JoinHandle<()>>>,
}

#[derive(Default)]
struct ProgressState {
    active: Vec<(String, &'static str, Instant)>,
    waiting: Option<String>,
    drawn: bool,
}

impl Progress {
    fn start(terminal: bool) -> Progress {
        let state = Arc::new(Mutex::new(ProgressState::default()));
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let thread = terminal.then(|| {
            let state = state.clone();
            let stop = stop.clone();
            std::thread::spawn(move || {
                let frames = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
                let mut i = 0;
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    if let Ok(mut s) = state.lock() {
                        if !s.active.is_empty() || s.waiting.is_some() {
                            let line = progress_line(&s, frames[i % frames.len()]);
                            eprint!("\r\x1b[2K{line}");
                            s.drawn = true;
                        }
                    }
                    i += 1;
                    std::thread::sleep(Duration::from_millis(100));
                }
            })
        });
        Progress {
            terminal,
            state,
            stop,
            thread: Mutex::new(thread),
        }
    }

    /// Erase the spinner line before printing results over it.
    fn clear(&self) {
        if let Ok(mut s) = self.state.lock() {
            if s.drawn {
                eprint!("\r\x1b[2K");
                s.drawn = false;
            }
        }
    }

    fn stop(&self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        if let Ok(mut thread) = self.thread.lock() {
            if let Some(handle) = thread.take() {
                let _ = handle.join();
            }
        }
        self.clear();
    }
}

fn progress_line(state: &ProgressState, frame: char) -> String {
    let mut parts: Vec<String> = state
        .active
        .iter()
        .map(|(label, what, since)| format!("{label} {what} {}s", since.elapsed().as_secs()))
        .collect();
    if let Some(wait) = &state.waiting {
        parts.push(wait.clone());
    }
    format!("{frame} waiting for the model: {}", parts.join(", "))
}

impl Events for Progress {
    fn event(&self, event: Event) {
        let Ok(mut s) = self.state.lock() else { return };
        match event {
            Event::ModelStarted { label, what } => {
                s.waiting = None;
                s.active.push((label, what, Instant::now()));
            }
            Event::ModelFinished { label, what } => {
                s.active.retain(|(l, w, _)| !(l == &label && *w == what));
            }
            Event::Waiting {
                label,
                seconds,
                why,
            } => {
                let text = format!("{label} paused {seconds:.1}s ({why})");
                if !self.terminal {
                    eprintln!("{text}");
                }
                s.waiting = Some(text);
            }
            Event::Retrying {
                label,
                what,
                reason,
            } => {
                if s.drawn {
                    eprint!("\r\x1b[2K");
                    s.drawn = false;
                }
                eprintln!("{label}: the {what} answer was invalid ({reason}); asking once more");
            }
        }
    }
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
