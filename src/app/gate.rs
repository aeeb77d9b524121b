//! `speed hook install | uninstall | run` and `speed override`: the merge
//! gate's commands. Part of `app`, so they print (to stderr: git shows a
//! hook's output to the person merging) and choose exit codes.
//!
//! A hook never hangs a merge: the user's own hook, reading git's input and
//! speed's own check each run under a time limit, and any failure blocks
//! with a clear message (fail closed) unless `hook.on_error = "allow"`.

use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use anyhow::Context;

use super::note;

use crate::cli::{Cli, Command, HookAction};
use crate::exit::Outcome;
use crate::git::Repository;
use crate::git::short;
use crate::hook;
use crate::hook::gate::{Arrival, Cover, Findings, Gate, Miss};
use crate::hook::install::{self, Action};
use crate::hook::owners;
use crate::hook::run::{self, Hook, Local};
use crate::ledger::overrides::{self, Decider};
use crate::ledger::verdicts;
use crate::review::Target;
use crate::settings::{self, HookCommand, OverrideSettings, ReviewSettings, Settings};
use crate::work::Work;

pub fn hook_command(dir: &Path, command: &HookCommand) -> anyhow::Result<Outcome> {
    match command {
        HookCommand::Install { force } => {
            let hooks = hooks_dir(dir)?;
            let done = install::install(&hooks, *force)?;
            report_actions(&done);
            Ok(Outcome::Approved)
        }
        HookCommand::Uninstall => {
            let hooks = hooks_dir(dir)?;
            let done = install::uninstall(&hooks)?;
            if done.is_empty() {
                eprintln!("No speed hooks in {}: nothing to remove.", hooks.display());
            }
            report_actions(&done);
            Ok(Outcome::Approved)
        }
        HookCommand::Run { hook, args, review } => Ok(run_hook(dir, review, hook, args)),
    }
}

fn hooks_dir(dir: &Path) -> anyhow::Result<PathBuf> {
    let repo = Repository::discover(dir)?;
    Ok(repo.hooks_dir()?)
}

fn report_actions(done: &[Action]) {
    for action in done {
        match action {
            Action::Installed(path) => eprintln!("installed {}", path.display()),
            Action::Updated(path) => eprintln!("updated {}", path.display()),
            Action::Unchanged(path) => eprintln!("{} is up to date", path.display()),
            Action::KeptLocal(from, to) => eprintln!(
                "kept your {} as {} (speed runs it first, with the same arguments and input)",
                from.display(),
                to.display()
            ),
            Action::Removed(path) => eprintln!("removed {}", path.display()),
            Action::Restored(from, to) => {
                eprintln!("put back {} as {}", from.display(), to.display())
            }
            Action::LeftForeign(path) => {
                eprintln!("left {} alone: speed did not write it", path.display())
            }
            Action::SkippedForeign(path) => eprintln!(
                "left your {} alone: a merge that speed blocked and that is then concluded \
                 with `git commit` is caught at push only (`speed hook install --force` \
                 keeps yours as .local and runs it first)",
                path.display()
            ),
        }
    }
}

/// Why a piece of work ran out of time or failed to finish.
enum Stopped {
    TimedOut(Duration),
    Crashed,
}

/// Run `work` on its own thread; it must finish within `limit`. A thread
/// still running then is left behind: the process ends soon after. A result
/// that comes after the limit counts as too late too, so the limit means the
/// same however busy the machine is.
fn within<T: Send + 'static>(
    limit: Duration,
    work: impl FnOnce() -> T + Send + 'static,
) -> Result<T, Stopped> {
    let started = Instant::now();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(work());
    });
    match rx.recv_timeout(limit) {
        Ok(value) if started.elapsed() <= limit => Ok(value),
        Ok(_) | Err(mpsc::RecvTimeoutError::Timeout) => Err(Stopped::TimedOut(limit)),
        Err(mpsc::RecvTimeoutError::Disconnected) => Err(Stopped::Crashed),
    }
}

/// How long reading the configuration may take before a hook gives up
/// (fail closed): the configured limits are not known before it is read.
const SETTINGS_LIMIT: Duration = Duration::from_secs(30);

/// Whether these flags run a hook: then the configuration too is read
/// under a time limit (`resolve_bounded`).
pub fn runs_hook(cli: &Cli) -> bool {
    matches!(
        &cli.command,
        Command::Hook(args) if matches!(args.action, HookAction::Run { .. })
    )
}

/// `Settings::resolve` for a hook run, bounded by `SETTINGS_LIMIT`, with
/// the repository seen through `MergeView`.
pub fn resolve_bounded(cli: Cli, dir: PathBuf) -> anyhow::Result<Settings> {
    let resolved = within(SETTINGS_LIMIT, move || {
        let repo = Repository::discover(&dir).map_err(|err| err.to_string());
        let view = repo.as_ref().ok().map(settings::MergeView::of);
        let repo: Result<&dyn settings::Repo, &str> = match (&view, &repo) {
            (Some(view), _) => Ok(view),
            (None, Err(why)) => Err(why.as_str()),
            (None, Ok(_)) => unreachable!("a view exists for every repository"),
        };
        Settings::resolve(cli, dir.clone(), repo, &|key| std::env::var(key).ok())
    });
    match resolved {
        Ok(settings) => Ok(settings?),
        Err(stopped) => Err(anyhow::anyhow!(
            "{}; the hook blocks",
            stopped_text(&stopped, "reading the configuration")
        )),
    }
}

fn env(key: &str) -> Option<String> {
    std::env::var(key).ok()
}

fn truthy(key: &str) -> bool {
    env(key).is_some_and(|v| {
        matches!(
            v.trim().to_ascii_lowercase().as_str(),
            "1" | "true" | "yes" | "on"
        )
    })
}

/// `speed hook run <name> [ARGS]`: the user's hook, then the bypass or the
/// gate. Every failure goes through `failed`, which applies `on_error`.
fn run_hook(dir: &Path, review: &ReviewSettings, name: &str, args: &[String]) -> Outcome {
    let settings = &review.hook;
    let hook = match Hook::parse(name) {
        Ok(hook) => hook,
        Err(err) => return failed(settings, name, "hook", &err.to_string()),
    };
    let label = format!("speed {}", hook.name());
    // Under the pre-commit framework, it read git's input and runs the
    // other hooks itself.
    let pre_commit = env("PRE_COMMIT").as_deref() == Some("1");
    let input = if hook.reads_input() && !pre_commit {
        match within(settings.timeout, run::read_input) {
            Ok(Ok(bytes)) => Some(bytes),
            Ok(Err(err)) => return failed(settings, &label, hook.verb(), &err.to_string()),
            Err(stopped) => {
                return failed(
                    settings,
                    &label,
                    hook.verb(),
                    &stopped_text(&stopped, "reading git's input"),
                );
            }
        }
    } else {
        None
    };
    if !pre_commit {
        if let Some(outcome) = run_user_hook(dir, settings, hook, args, input.as_deref()) {
            return outcome;
        }
    }

    let bypass = truthy("SPEED_SKIP_HOOK");
    let reason = env("SPEED_OVERRIDE_REASON")
        .map(|r| r.trim().to_string())
        .filter(|r| !r.is_empty());
    if bypass && reason.is_none() {
        eprintln!(
            "{label}: SPEED_SKIP_HOOK=1 needs a reason, which is logged as an override: \
             SPEED_SKIP_HOOK=1 SPEED_OVERRIDE_REASON=\"why this {} cannot wait for a review\" git {} …",
            hook.verb(),
            hook.verb()
        );
        return Outcome::Error;
    }

    let check = {
        let dir = dir.to_path_buf();
        let review = review.clone();
        let args = args.to_vec();
        let input = input.clone().unwrap_or_default();
        within(settings.timeout, move || {
            check(&dir, &review, hook, &args, &input, !bypass)
        })
    };
    let checked = match check {
        Ok(Ok(checked)) => checked,
        Ok(Err(err)) if bypass => {
            return bypass_blind(dir, hook, reason.unwrap_or_default(), &format!("{err:#}"));
        }
        Err(stopped) if bypass => {
            return bypass_blind(
                dir,
                hook,
                reason.unwrap_or_default(),
                &stopped_text(&stopped, "the check"),
            );
        }
        Ok(Err(err)) => return failed(settings, &label, hook.verb(), &format!("{err:#}")),
        Err(stopped) => {
            return failed(
                settings,
                &label,
                hook.verb(),
                &stopped_text(&stopped, "the check"),
            );
        }
    };
    let Some(checked) = checked else {
        return Outcome::Approved;
    };
    if let Some(reason) = reason {
        return bypass_recorded(&checked, hook, reason);
    }
    verdict(&checked, settings, hook)
}

fn stopped_text(stopped: &Stopped, what: &str) -> String {
    match stopped {
        Stopped::TimedOut(limit) => format!(
            "{what} did not finish within {} s (hook.timeout_secs)",
            limit.as_secs_f64()
        ),
        Stopped::Crashed => format!("{what} stopped unexpectedly"),
    }
}

/// speed could not decide: block (fail closed) unless `on_error = "allow"`.
fn failed(settings: &hook::Policy, label: &str, verb: &str, why: &str) -> Outcome {
    eprintln!("{label}: cannot check the {verb}: {why}");
    match settings.on_error {
        hook::AllowOrBlock::Block => {
            eprintln!(
                "{label}: the {verb} is blocked. Fix the problem, or let it through once with the reason logged: \
                 SPEED_SKIP_HOOK=1 SPEED_OVERRIDE_REASON=\"…\"; hook.on_error = \"allow\" lets a {verb} through whenever speed fails."
            );
            Outcome::Error
        }
        hook::AllowOrBlock::Allow => {
            eprintln!("{label}: the {verb} goes ahead anyway (hook.on_error = \"allow\").");
            Outcome::Approved
        }
    }
}

/// The hook speed kept as `<name>.local`, run first. Some outcome when it
/// decided (it failed, or it could not be run); None to go on.
fn run_user_hook(
    dir: &Path,
    settings: &hook::Policy,
    hook: Hook,
    args: &[String],
    input: Option<&[u8]>,
) -> Option<Outcome> {
    let label = format!("speed {}", hook.name());
    let hooks = match hooks_dir(dir) {
        Ok(hooks) => hooks,
        Err(err) => return Some(failed(settings, &label, hook.verb(), &format!("{err:#}"))),
    };
    let local = install::local_path(&hooks, hook.name());
    match install::owner(&local) {
        Ok(None) => return None,
        // A copy of speed's own script would call speed again, forever.
        Ok(Some(true)) => {
            eprintln!(
                "{label}: {} is a copy of speed's own hook; not run",
                local.display()
            );
            return None;
        }
        Ok(Some(false)) => {}
        Err(err) => return Some(failed(settings, &label, hook.verb(), &err.to_string())),
    }
    match run::run_local(&local, args, input, settings.local_timeout) {
        Ok(Local::Passed) => None,
        Ok(Local::NotExecutable) => {
            eprintln!(
                "{label}: {} is not executable, so it was not run (git would not run it either)",
                local.display()
            );
            None
        }
        Ok(Local::Failed(code)) => {
            let code = code.map_or("a signal".to_string(), |c| format!("exit {c}"));
            eprintln!(
                "{label}: {} failed ({code}): the {} is blocked",
                local.display(),
                hook.verb()
            );
            Some(Outcome::Error)
        }
        Ok(Local::TimedOut(limit)) => {
            eprintln!(
                "{label}: {} did not finish within {} s (hook.local_timeout_secs) and was stopped: the {} is blocked",
                local.display(),
                limit.as_secs_f64(),
                hook.verb()
            );
            Some(Outcome::Error)
        }
        Err(err) => Some(failed(settings, &label, hook.verb(), &err.to_string())),
    }
}

/// What the gate found, with what it needs to say so.
struct Checked {
    root: PathBuf,
    findings: Findings,
}

/// Everything up to the decision, on the worker thread. None when the
/// merge or push does not touch the main branch. With `review`, a head no
/// approval covers is reviewed (`hook.review_on_miss`) and checked again.
fn check(
    dir: &Path,
    settings: &ReviewSettings,
    hook: Hook,
    args: &[String],
    input: &[u8],
    review: bool,
) -> anyhow::Result<Option<Checked>> {
    let repo = Repository::discover(dir)?;
    let root = repo.state_root().to_path_buf();
    let main = settings.review.main.clone();
    let vars: Vec<(String, String)> = std::env::vars_os()
        .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
        .collect();
    let incoming = run::incoming(&repo, &main, hook, args, input, &vars)?;
    if incoming.is_empty() {
        return Ok(None);
    }
    let owners = owners::list(&root).context("cannot list the tasks and defects")?;
    let store = verdicts::Store::open(&root);
    let gate = Gate {
        repo: &repo,
        main: &main,
        owners: &owners,
        store: &store,
    };
    let gather = || gate.check_all(&incoming);
    let mut findings = gather()?;
    if review && settings.hook.review_on_miss && review_misses(dir, settings, &findings) {
        findings = gather()?;
    }
    Ok(Some(Checked { root, findings }))
}

/// `hook.review_on_miss`: review each task whose head arrives uncovered.
/// Whether any review ran.
fn review_misses(dir: &Path, settings: &ReviewSettings, findings: &Findings) -> bool {
    let mut reviewed = false;
    for arrival in findings.arrivals.iter().filter(|a| a.verdict.is_err()) {
        let Work::Task { id, feature } = &arrival.work else {
            eprintln!(
                "speed: {} is not reviewed on a miss: run its review yourself",
                arrival.work.label()
            );
            continue;
        };
        if arrival.partial() {
            continue;
        }
        eprintln!(
            "speed: reviewing {} at {} (hook.review_on_miss)",
            arrival.work.label(),
            short(&arrival.commit)
        );
        let mut review = settings.clone();
        review.review.target = Target::Tasks {
            ids: vec![id.clone()],
            feature: feature.clone(),
        };
        if let Err(err) = super::review_command(dir, &review, super::Colors::plain()) {
            eprintln!(
                "speed: the review of {} failed: {err:#}",
                arrival.work.label()
            );
        }
        reviewed = true;
    }
    reviewed
}

/// Block (exit 50) when any work arrives uncovered, or when unknown commits
/// arrive and `hook.unknown = "block"`.
fn verdict(checked: &Checked, settings: &hook::Policy, hook: Hook) -> Outcome {
    let label = format!("speed {}", hook.name());
    let findings = &checked.findings;
    let misses: Vec<&Arrival> = findings
        .arrivals
        .iter()
        .filter(|a| a.verdict.is_err())
        .collect();
    let unknown_blocks =
        settings.unknown == hook::AllowOrBlock::Block && !findings.unknown.is_empty();
    for arrival in findings.arrivals.iter().filter(|a| a.verdict.is_ok()) {
        for note in &arrival.notes {
            tracing::info!("{}: {note}", arrival.work.label());
        }
    }
    if misses.is_empty() && !unknown_blocks {
        let covered: Vec<String> = findings
            .arrivals
            .iter()
            .filter_map(|a| a.verdict.as_ref().ok().map(|c| covered_text(a, c)))
            .collect();
        if !covered.is_empty() {
            eprintln!("{label}: {}", covered.join("; "));
        }
        if !findings.unknown.is_empty() {
            tracing::info!(
                "{} commit(s) belong to no task or defect and pass (hook.unknown = \"allow\")",
                findings.unknown.len()
            );
        }
        return Outcome::Approved;
    }

    let mut text = format!("{label}: the {} is blocked:", hook.verb());
    if !misses.is_empty() {
        let what = if misses.len() == 1 {
            "piece of work is"
        } else {
            "pieces of work are"
        };
        text.push_str(&format!(
            " {} {what} not covered by an approval.\n",
            misses.len()
        ));
    } else {
        text.push('\n');
    }
    for arrival in &misses {
        text.push_str(&miss_text(arrival));
    }
    if misses.iter().any(|a| a.verdict == Err(Miss::NeverReviewed)) {
        text.push_str(&format!(
            "\nReviewed elsewhere (in CI, in another clone)? Its verdict travels as a git note: `speed notes fetch` brings {}, then try again.\n",
            crate::ledger::notes::REF
        ));
    }
    if unknown_blocks {
        let list: Vec<&str> = findings.unknown.iter().take(10).map(|c| short(c)).collect();
        let more = findings.unknown.len().saturating_sub(10);
        text.push_str(&format!(
            "\n  {} commit(s) belong to no task or defect, and hook.unknown = \"block\": {}{}\n",
            findings.unknown.len(),
            list.join(", "),
            if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            }
        ));
    }
    text.push_str(&format!(
        "\nTo let this {0} through once, with the reason logged as an override:\n  SPEED_SKIP_HOOK=1 SPEED_OVERRIDE_REASON=\"why\" git {0} …\n",
        hook.verb()
    ));
    eprint!("{text}");
    Outcome::ChangesRequested
}

fn covered_text(arrival: &Arrival, cover: &Cover) -> String {
    let at = short(&arrival.commit);
    match cover {
        Cover::Approved { .. } => format!("{} approved at {at}", arrival.work.label()),
        Cover::Overridden { by, .. } => {
            format!(
                "{} accepted at {at} by an override ({by})",
                arrival.work.label()
            )
        }
        Cover::HumanApproved { by, .. } => format!(
            "{} approved at {at}, confirmed by {by}",
            arrival.work.label()
        ),
        Cover::SameDiff { .. } | Cover::TaskFile { .. } | Cover::Merged { .. } => format!(
            "{} at {at}: {}",
            arrival.work.label(),
            cover.describe(&arrival.commit)
        ),
    }
}

fn miss_text(arrival: &Arrival) -> String {
    let why = match arrival.verdict.as_ref().err() {
        Some(miss) => miss.describe(&arrival.commit),
        None => Miss::NeverReviewed.describe(&arrival.commit),
    };
    let mut text = format!(
        "\n  {}, branch {}, commit {}: {why}\n",
        arrival.work.label(),
        arrival.branch,
        short(&arrival.commit)
    );
    if arrival.partial() {
        text.push_str(&format!(
            "    {} is part of the branch, not its head ({}): merge the head once it is approved\n",
            short(&arrival.commit),
            short(&arrival.head)
        ));
    }
    for note in &arrival.notes {
        text.push_str(&format!("    note: {note}\n"));
    }
    match &arrival.work {
        Work::Task { id, feature } => {
            let feature = feature
                .as_deref()
                .map(|f| format!(" --feature {}", quote(f)))
                .unwrap_or_default();
            if let Some(Miss::AwaitingHuman { .. }) = arrival.verdict.as_ref().err() {
                text.push_str(&format!(
                    "    confirm it:    speed approve --task-id {}{feature} --by \"…\"\n",
                    quote(id)
                ));
            }
            text.push_str(&format!(
                "    review it:     speed review --task-id {}{feature}\n    or accept it:  speed override --task-id {}{feature} --reason \"…\"\n",
                quote(id),
                quote(id)
            ));
        }
        Work::Defect { name } => {
            text.push_str(&format!(
                "    review it:     speed review --defect {}\n",
                quote(name)
            ));
        }
    }
    text
}

/// A word as a shell would need it typed.
fn quote(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"._/-:@+=".contains(&b));
    if plain {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

/// Who is deciding: the git user, else the login name.
fn decider(root: &Path, reason: String, via: String) -> Decider {
    let by = Repository::open(root)
        .ok()
        .and_then(|repo| repo.user_identity())
        .or_else(|| {
            ["USER", "USERNAME", "LOGNAME"]
                .iter()
                .find_map(|k| env(k).filter(|v| !v.trim().is_empty()))
                .map(|login| format!("{login} (no git user.name)"))
        })
        .unwrap_or_else(|| "unknown (no git user.name, no login name)".to_string());
    // The reason is kept in the task file, the log and the verdict cache:
    // a secret pasted into it is replaced like one in a task field.
    let reason = crate::secrets::redact(&reason, crate::secrets::Context::PROSE).text;
    Decider { by, reason, via }
}

/// A bypass with a reason: every uncovered arrival is logged (and cached)
/// as an override of its commit; the hook passes.
fn bypass_recorded(checked: &Checked, hook: Hook, reason: String) -> Outcome {
    let label = format!("speed {}", hook.name());
    let who = decider(
        &checked.root,
        reason,
        format!("SPEED_SKIP_HOOK ({})", hook.name()),
    );
    let misses: Vec<&Arrival> = checked
        .findings
        .arrivals
        .iter()
        .filter(|a| a.verdict.is_err())
        .collect();
    let mut logged = Vec::new();
    for arrival in &misses {
        if let Err(err) = overrides::record_bypass(
            &checked.root,
            &arrival.work,
            &arrival.branch,
            &arrival.commit,
            &who,
        ) {
            eprintln!(
                "{label}: the bypass could not be logged: {err}; the {} is blocked",
                hook.verb()
            );
            return Outcome::Error;
        }
        logged.push(format!(
            "{} at {}",
            arrival.work.label(),
            short(&arrival.commit)
        ));
    }
    if !checked.findings.unknown.is_empty() {
        if let Err(err) =
            overrides::record_blind_bypass(&checked.root, &checked.findings.unknown, &who)
        {
            eprintln!(
                "{label}: the bypass could not be logged: {err}; the {} is blocked",
                hook.verb()
            );
            return Outcome::Error;
        }
        logged.push(format!(
            "{} commit(s) of no task",
            checked.findings.unknown.len()
        ));
    }
    let what = if logged.is_empty() {
        "nothing needed it".to_string()
    } else {
        format!("logged as an override of {}", logged.join(", "))
    };
    eprintln!(
        "{label}: bypassed by SPEED_SKIP_HOOK=1 ({}; reason: {}): {what}",
        who.by, who.reason
    );
    Outcome::Approved
}

/// A bypass when the gate itself could not run: the commits git named are
/// logged, and the hook passes.
fn bypass_blind(dir: &Path, hook: Hook, reason: String, why: &str) -> Outcome {
    let label = format!("speed {}", hook.name());
    eprintln!("{label}: cannot check the {}: {why}", hook.verb());
    let repo = match Repository::discover(dir) {
        Ok(repo) => repo,
        Err(err) => {
            eprintln!(
                "{label}: the bypass cannot be logged ({err}): the {} is blocked",
                hook.verb()
            );
            return Outcome::Error;
        }
    };
    let commits = match hook {
        Hook::PreMergeCommit | Hook::PreCommit => repo.merge_heads().unwrap_or_default(),
        Hook::PrePush => Vec::new(),
    };
    let who = decider(
        repo.state_root(),
        reason,
        format!("SPEED_SKIP_HOOK ({})", hook.name()),
    );
    match overrides::record_blind_bypass(repo.state_root(), &commits, &who) {
        Ok(()) => {
            eprintln!(
                "{label}: bypassed by SPEED_SKIP_HOOK=1 ({}; reason: {}), logged",
                who.by, who.reason
            );
            Outcome::Approved
        }
        Err(err) => {
            eprintln!(
                "{label}: the bypass could not be logged: {err}; the {} is blocked",
                hook.verb()
            );
            Outcome::Error
        }
    }
}

pub fn override_command(dir: &Path, settings: &OverrideSettings) -> anyhow::Result<Outcome> {
    let repo = Repository::discover(dir)?;
    let root = repo.state_root().to_path_buf();
    let who = decider(&root, settings.reason.clone(), "speed override".to_string());
    let done = overrides::override_task(
        &root,
        &settings.main,
        &settings.task_id,
        settings.feature.as_deref(),
        &who,
    )?;
    let work = Work::Task {
        id: done.task_id.clone(),
        feature: done.feature.clone(),
    };
    if let Some(note) = &done.note {
        eprintln!("warning: {note}");
    }
    // The fixes its review asked for are a person's decision now. The
    // override stands whatever happens here.
    let owner = crate::fixes::Owner::Task {
        id: done.task_id.clone(),
        feature: done.feature.clone(),
    };
    let store = crate::fixes::Store::open(&root);
    let skipped = match crate::fixes::queue::absorb_override(
        &store,
        &owner,
        &done.head_commit,
        &who.reason,
        &who.by,
    ) {
        Ok(0) => String::new(),
        Ok(n) => format!(
            "\n{} skipped: a review of a later commit that finds one again opens it again.",
            crate::render::plural(n, "open fix")
        ),
        Err(err) => {
            eprintln!("warning: the fix queue could not be updated: {err}");
            String::new()
        }
    };
    let overruled = done
        .overruled
        .as_deref()
        .map(|v| format!(", overruling its review ({v})"))
        .unwrap_or_else(|| ", which had no review".to_string());
    eprintln!(
        "{} accepted at commit {} of {} by {}{overruled}.\nReason: {}\nThis covers commit {} only: a later commit needs a review (or another override).{skipped}",
        work.label(),
        short(&done.head_commit),
        done.branch,
        who.by,
        who.reason,
        short(&done.head_commit)
    );
    Ok(Outcome::Approved)
}
