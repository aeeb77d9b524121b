//! Command-line types (clap) only. Nothing here is seen by the commands:
//! `settings` turns these into plain, checked settings first (the value
//! enums here convert into the plain ones of the parts that own them, such
//! as `render::Format`). Value ranges live here, in `limits`, and the
//! config file is checked against the same ones, so a flag and its config
//! key agree.

use std::path::PathBuf;

use clap::builder::RangedI64ValueParser;
use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::render;

pub mod fix;
pub use fix::{FixAction, FixArgs, FixFormat};
mod spec;
pub use spec::{SpecAction, SpecArgs, SpecFormat, SpecReviewArgs};

/// The ranges numbers must lie in, shared by config keys and flags.
pub mod limits {
    use std::ops::RangeInclusive;

    pub const TOKEN_BUDGET: RangeInclusive<i64> = 1..=10_000_000;
    pub const CONCURRENCY: RangeInclusive<i64> = 1..=256;
    pub const MAX_REVISIONS: RangeInclusive<i64> = 0..=100;
    pub const MAX_PARTS: RangeInclusive<i64> = 1..=16;
    pub const MAX_RETRIES: RangeInclusive<i64> = 0..=10;
    pub const RETRY_BASE_MS: RangeInclusive<i64> = 0..=600_000;
    pub const TEMPERATURE: RangeInclusive<f64> = 0.0..=2.0;
    pub const MAX_OUTPUT_TOKENS: RangeInclusive<i64> = 1..=1_000_000;
    pub const RPM: RangeInclusive<i64> = 1..=1_000_000;
    pub const TPM: RangeInclusive<i64> = 1..=1_000_000_000;
    pub const MAX_ANSWER_BYTES: RangeInclusive<i64> = 1024..=(1 << 30);
    pub const DIFF_LINES: RangeInclusive<i64> = 1..=100_000_000;
    pub const DIFF_FILES: RangeInclusive<i64> = 1..=10_000_000;
    /// A score and its minimums: a spec review's, a quality dimension's,
    /// `review.pass_score`.
    pub const SCORE: RangeInclusive<i64> = 0..=100;
    /// Reviews of a spec review session before it is blocked.
    pub const MAX_ITERATIONS: RangeInclusive<i64> = 1..=20;
    /// A quality dimension's weight in the overall score.
    pub const WEIGHT: RangeInclusive<i64> = 1..=100;
    /// `speed show --nth`, `speed history --limit`.
    pub const NTH: RangeInclusive<i64> = 1..=1_000_000_000;
    pub const LIMIT: RangeInclusive<i64> = 0..=1_000_000_000;
    /// A price per million tokens, in any currency.
    pub const PRICE_PER_MTOK: RangeInclusive<f64> = 0.0..=1_000_000.0;
    /// A day: a model call or a check command that takes longer is stuck.
    pub const MAX_TIMEOUT_SECS: f64 = 86_400.0;
    pub const MAX_CONNECT_TIMEOUT_SECS: f64 = 600.0;
    /// A discount: the fraction taken off a price.
    pub const DISCOUNT: RangeInclusive<f64> = 0.0..=1.0;
    /// `--shard K/N`: the most runners a matrix shares tasks between.
    pub const MAX_SHARDS: u32 = 10_000;
}

/// speed: a git-native spec-alignment reviewer.
///
/// Diffs a task branch against main, loads the product spec that is the source
/// of truth, assembles a token-budgeted prompt, asks a model for a verdict that
/// must quote the spec, checks it mechanically and records the outcome.
#[derive(Debug, Parser)]
#[command(name = "speed", version, propagate_version = true)]
pub struct Cli {
    /// Run as if started in this directory.
    #[arg(short = 'C', global = true, value_name = "DIR")]
    pub dir: Option<PathBuf>,

    /// Read the configuration from this file instead of the main branch's
    /// .speed/config.toml.
    #[arg(long, global = true, value_name = "FILE")]
    pub config: Option<PathBuf>,

    /// More logging on stderr (repeat for more).
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub verbose: u8,

    /// When to colour the output: auto (on a terminal, unless NO_COLOR is
    /// set), always or never.
    #[arg(long, global = true, value_name = "WHEN", default_value = "auto")]
    pub color: ColorWhen,

    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Review finished tasks (or one branch) against the product spec.
    ///
    /// With no --task-id: every `done` task whose last approval does not cover
    /// its current diff. Exit codes: 0 approved, 1 error, 2 usage, 50 changes
    /// requested, 52 model unreachable, 53 model output invalid, 54 submitted
    /// to a provider batch (results pending).
    Review(Box<ReviewArgs>),
    /// Print the nits saved by the last batch review.
    Nits(NitsArgs),
    /// Print the effective settings and where each came from.
    ///
    /// The configuration is read at the main branch's commit (the working
    /// tree's copy on the main branch itself, or the file named with
    /// --config); flags and environment win over it. Takes the review's
    /// setting flags to show what a review with them would use.
    Config(ConfigArgs),
    /// Install, remove or run speed's git hooks: the merge gate.
    ///
    /// pre-merge-commit blocks a merge into the main branch, and pre-push a
    /// push to it, when a task's work arrives without an approval covering
    /// its head commit (exit 50).
    Hook(HookArgs),
    /// Accept a task despite its review, with a reason (kept for audit).
    ///
    /// Writes review_verdict "approve" and an `override` object into the
    /// task file and logs the decision; it covers the task's current head
    /// commit and no other.
    Override(OverrideArgs),
    /// The fix queue: list, show, do, skip, prompt or run (an agent) the
    /// fixes reviews found.
    Fix(FixArgs),
    /// Review a draft spec before anyone implements it: `speed spec review`.
    Spec(SpecArgs),
    /// Confirm a model's approval that waits for a person (review.human).
    ///
    /// Records who approved, at the commit the model reviewed; refused when
    /// the branch moved since. Until then the task is not covered for the
    /// merge hooks or batch mode.
    Approve(ApproveArgs),
    /// Turn down a model's approval that waits for a person (review.human).
    ///
    /// The task goes back to pending with the reason as its feedback, and
    /// one more revision is counted.
    Reject(RejectArgs),
    /// Print a shell completion script (bash, zsh or fish) on stdout.
    ///
    /// bash: `speed completions bash > ~/.local/share/bash-completion/completions/speed`;
    /// zsh: `speed completions zsh > ~/.zfunc/_speed` (with ~/.zfunc in fpath);
    /// fish: `speed completions fish > ~/.config/fish/completions/speed.fish`.
    Completions(CompletionsArgs),
    /// Print the last (or --nth) review of a task, defect or branch from its
    /// saved report, or a spec review's session (--spec FEATURE).
    ///
    /// --format json prints the report object as `speed review --json`
    /// printed it; html one self-contained page with the diff and each
    /// finding at its line. Exit 1 when the subject was never reviewed or
    /// its report no longer parses.
    Show(ShowArgs),
    /// One line per review (and override) from the review log, newest first.
    ///
    /// Torn or foreign lines of .speed/reviews/log.jsonl are skipped and
    /// counted, never fatal.
    History(HistoryArgs),
    /// Statistics of the review log: approval rates, blocking reasons,
    /// tokens, cost, durations; in all, per feature and per week.
    Stats(StatsArgs),
    /// Write what a first review needs here, never overwriting anything.
    ///
    /// .speed/config.toml for the model found on this machine
    /// (ANTHROPIC_API_KEY, OPENAI_API_KEY, a server on localhost answering
    /// its model list, `claude` on PATH; a key's value is never written),
    /// checks for the languages found (commented out unless the tool is
    /// installed), specs/product/ with the product vision and a spec
    /// template, a task file template, and .gitignore lines for speed's
    /// runtime state. A second run changes nothing and says what exists.
    /// Exit 1 outside a git repository.
    Init(InitArgs),
    /// Say whether a review would work here, and what to do where it would
    /// not.
    ///
    /// Checks git (main found, shallow clone, detached HEAD), the
    /// configuration (valid, committed on main), the provider (its key's
    /// variable, the server, one probe call that must answer JSON in the
    /// verdict's shape), the specs and the vision, each check command
    /// (found, run once at main in a temporary checkout) and the hooks.
    /// Exit 1 on a problem that would make a review fail or mislead, 0
    /// otherwise; --strict fails on warnings too.
    Doctor(DoctorArgs),
    /// Print the JSON Schema (2020-12) of what speed reads or writes.
    ///
    /// verdict and guardian: the model's answers to a review; spec-review:
    /// the model's answer to a spec review; task: a task file (every
    /// dialect the orchestrator writes); report: one entry of `speed review
    /// --json`'s `reviews`.
    Schema(SchemaArgs),
    /// Move speed's verdicts, kept as git notes under refs/notes/speed, to
    /// or from a remote.
    ///
    /// Every decided review is also a note on its head commit, so a CI
    /// runner's approval survives its checkout and a fresh clone's hooks
    /// honour it once fetched. `fetch` joins the remote's notes with ours;
    /// `push` fetches and joins first when the remote has notes ours lack.
    /// Plain git does the same: `git fetch origin refs/notes/speed:refs/notes/speed`.
    Notes(NotesArgs),
    /// Print the man page (roff) on stdout: `speed man > speed.1`.
    #[command(hide = true)]
    Man,
}

#[derive(Debug, Args)]
pub struct InitArgs {
    /// Also install the git hooks (the merge gate), as `speed hook install`.
    #[arg(long)]
    pub hooks: bool,
}

#[derive(Debug, Args)]
pub struct DoctorArgs {
    /// Ask no model: the provider's key variable and command are checked,
    /// no request is made.
    #[arg(long)]
    pub offline: bool,

    /// Fail (exit 1) on warnings too.
    #[arg(long)]
    pub strict: bool,
}

#[derive(Debug, Args)]
pub struct SchemaArgs {
    /// Which schema.
    #[arg(value_name = "KIND")]
    pub kind: SchemaKind,
}

/// The documents `speed schema` describes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SchemaKind {
    /// The reviewer's answer.
    Verdict,
    /// The guardian's answer.
    Guardian,
    /// The spec reviewer's answer.
    SpecReview,
    /// A task file.
    Task,
    /// One review of `speed review --json`'s `reviews`.
    Report,
}

#[derive(Debug, Args)]
pub struct NotesArgs {
    #[command(subcommand)]
    pub action: NotesAction,
}

#[derive(Debug, Subcommand)]
pub enum NotesAction {
    /// Push refs/notes/speed to the remote.
    Push {
        /// The remote to push to.
        #[arg(long, value_name = "NAME", default_value = "origin", value_parser = remote)]
        remote: String,
    },
    /// Fetch refs/notes/speed from the remote and join it with ours.
    Fetch {
        /// The remote to fetch from.
        #[arg(long, value_name = "NAME", default_value = "origin", value_parser = remote)]
        remote: String,
    },
}

/// A remote's name or URL, never one git would read as an option.
fn remote(text: &str) -> Result<String, String> {
    let text = text.trim();
    if text.is_empty() || text.starts_with('-') {
        return Err("a remote's name or URL (not empty, not starting with '-')".to_string());
    }
    Ok(text.to_string())
}

/// When to colour the output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ColorWhen {
    Auto,
    Always,
    Never,
}

/// How `speed review` prints its reports on stdout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// The report for people (the default).
    Human,
    /// One JSON object, as --json.
    Json,
    /// SARIF 2.1.0, for code scanning (GitHub's upload-sarif and other viewers).
    Sarif,
    /// JUnit XML: one test case per task, failed when not approved.
    Junit,
    /// GitHub Actions workflow commands (annotations), and a summary in
    /// $GITHUB_STEP_SUMMARY when it is set.
    Github,
    /// One self-contained HTML page: the diff with each finding at its line.
    Html,
    /// Markdown, for a pull request comment.
    Markdown,
}

/// How `speed show` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ShowFormat {
    Human,
    /// The report object, as `speed review --json` printed it.
    Json,
    Markdown,
    /// One self-contained page.
    Html,
}

/// How `speed history` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum HistoryFormat {
    Human,
    /// `{"reviews": [log lines], "skipped_lines": N}`.
    Json,
}

/// How `speed stats` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum StatsFormat {
    Human,
    Json,
    /// One self-contained page with its figures as inline SVG.
    Html,
}

impl From<ShowFormat> for Format {
    fn from(format: ShowFormat) -> Format {
        match format {
            ShowFormat::Human => Format::Human,
            ShowFormat::Json => Format::Json,
            ShowFormat::Markdown => Format::Markdown,
            ShowFormat::Html => Format::Html,
        }
    }
}

impl From<HistoryFormat> for Format {
    fn from(format: HistoryFormat) -> Format {
        match format {
            HistoryFormat::Human => Format::Human,
            HistoryFormat::Json => Format::Json,
        }
    }
}

impl From<StatsFormat> for Format {
    fn from(format: StatsFormat) -> Format {
        match format {
            StatsFormat::Human => Format::Human,
            StatsFormat::Json => Format::Json,
            StatsFormat::Html => Format::Html,
        }
    }
}

impl From<ColorWhen> for render::ColorWhen {
    fn from(when: ColorWhen) -> render::ColorWhen {
        match when {
            ColorWhen::Auto => render::ColorWhen::Auto,
            ColorWhen::Always => render::ColorWhen::Always,
            ColorWhen::Never => render::ColorWhen::Never,
        }
    }
}

impl From<Format> for render::Format {
    fn from(format: Format) -> render::Format {
        match format {
            Format::Human => render::Format::Human,
            Format::Json => render::Format::Json,
            Format::Sarif => render::Format::Sarif,
            Format::Junit => render::Format::Junit,
            Format::Github => render::Format::Github,
            Format::Html => render::Format::Html,
            Format::Markdown => render::Format::Markdown,
        }
    }
}

/// The shells `speed completions` writes scripts for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Shell {
    Bash,
    Zsh,
    Fish,
}

#[derive(Debug, Default, Args)]
pub struct ReviewArgs {
    /// Task to review (repeatable). Without it, every `done` task not yet
    /// approved at its current diff, and every defect whose state.json says
    /// `fixed`.
    #[arg(long = "task-id", value_name = "ID", conflicts_with = "branch")]
    pub task_ids: Vec<String>,

    /// Review the fix of this defect (.speed/defects/NAME/ or
    /// .speed/shared/defects/NAME/): its report, triage and branch.
    #[arg(long, value_name = "NAME", conflicts_with_all = ["task_ids", "branch", "feature"])]
    pub defect: Option<String>,

    /// With --defect: an approval moves the defect's state.json from `fixed`
    /// to `reviewed`, and the review is appended to its logs/review.log.
    #[arg(long, requires = "defect")]
    pub update_state: bool,

    /// Feature whose tasks to consider (picks one when an id exists in two).
    #[arg(long, value_name = "F")]
    pub feature: Option<String>,

    /// Print the report(s) as one JSON object on stdout (as --format json).
    #[arg(long, conflicts_with = "format")]
    pub json: bool,

    /// Output format on stdout: human, json, sarif, junit, github, html or
    /// markdown.
    #[arg(long, value_name = "FORMAT")]
    pub format: Option<Format>,

    /// Do everything up to the model call, print the prompt and its token
    /// accounting, change nothing (human or json format only).
    #[arg(long)]
    pub dry_run: bool,

    #[command(flatten)]
    pub values: ValueArgs,

    /// Review approved tasks again even when the diff is unchanged.
    #[arg(long)]
    pub force: bool,

    /// When another speed is reviewing the same task, say so and exit 52
    /// instead of waiting for it to end.
    #[arg(long)]
    pub no_wait: bool,

    /// Review this branch instead of a task (needs --spec).
    #[arg(long, value_name = "B", requires = "spec")]
    pub branch: Option<String>,

    /// Spec to review against, optionally with #Section (repeatable); a
    /// relative path is relative to the directory speed runs in, else to
    /// the repository root.
    #[arg(long, value_name = "PATH[#Section]")]
    pub spec: Vec<String>,

    /// Acceptance criteria for --branch: a file with one criterion per line.
    #[arg(long, value_name = "FILE", requires = "branch")]
    pub criteria: Option<PathBuf>,

    /// A re-review shows what changed since the last review and that
    /// review's findings, not the whole change (as when the change is too
    /// large for the budget); the report says `coverage.incremental`.
    #[arg(long)]
    pub incremental: bool,

    /// Review only the K-th of N partitions of the selected tasks (1 ≤ K ≤
    /// N), for a CI matrix of N runners. A task's partition follows from
    /// its feature and id alone.
    #[arg(long, value_name = "K/N", value_parser = shard, conflicts_with_all = ["branch", "defect"])]
    pub shard: Option<(u32, u32)>,

    /// Submit the model calls of every prepared review as one batch of the
    /// provider's batch API (anthropic or openai: a lower price, answers
    /// within a day); prints the batch id and exits 54.
    #[arg(long, conflicts_with_all = ["dry_run", "branch", "offline"])]
    pub batch_api: bool,

    /// Finish the reviews of a batch submitted with --batch-api (without
    /// an id: every waiting batch); exits 54 while a batch is still at work.
    #[arg(long, value_name = "BATCH_ID", num_args = 0..=1, default_missing_value = "",
          conflicts_with_all = ["task_ids", "defect", "branch", "feature", "dry_run", "force",
                                "shard", "batch_api", "spec", "criteria", "incremental"])]
    pub collect: Option<String>,

    /// With --collect: the seconds to wait for the batch to end [default: 60].
    #[arg(long, value_name = "SECS", requires = "collect", value_parser = wait_secs)]
    pub wait: Option<f64>,
}

/// `--shard K/N`.
fn shard(text: &str) -> Result<(u32, u32), String> {
    let parsed = text
        .split_once('/')
        .and_then(|(k, n)| Some((k.trim().parse::<u32>().ok()?, n.trim().parse::<u32>().ok()?)));
    match parsed {
        Some((k, n)) if k >= 1 && k <= n && n <= limits::MAX_SHARDS => Ok((k, n)),
        _ => Err(format!(
            "expected K/N with 1 ≤ K ≤ N ≤ {} (e.g. 2/4)",
            limits::MAX_SHARDS
        )),
    }
}

/// `--wait SECS`: from 0 to a day.
fn wait_secs(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(secs) if (0.0..=limits::MAX_TIMEOUT_SECS).contains(&secs) => Ok(secs),
        _ => Err(format!(
            "expected seconds from 0 to {}",
            limits::MAX_TIMEOUT_SECS
        )),
    }
}

/// The flags that override configured values; `review` and `config` share
/// them.
#[derive(Debug, Args, Default)]
pub struct ValueArgs {
    /// Skip the guardian gate after an approval.
    #[arg(long)]
    pub no_guardian: bool,

    /// Model provider: openai (any OpenAI-compatible server), anthropic,
    /// command, or none (an offline review by speed's own checks).
    #[arg(long, value_name = "P", value_parser = ["openai", "anthropic", "command", "none"])]
    pub provider: Option<String>,

    /// Review with speed's own checks alone: no model is called, an
    /// approval is never written (the same as --provider none).
    #[arg(long)]
    pub offline: bool,

    /// Model name sent to the provider.
    #[arg(long, value_name = "M")]
    pub model: Option<String>,

    /// Prompt token budget [default: 60000].
    #[arg(long, value_name = "TOKENS",
          value_parser = RangedI64ValueParser::<u64>::new().range(limits::TOKEN_BUDGET))]
    pub budget: Option<u64>,

    /// Model calls at once: the reviews of a batch and the parts of a review in parts [default: 4].
    #[arg(long, value_name = "N",
          value_parser = RangedI64ValueParser::<u64>::new().range(limits::CONCURRENCY))]
    pub concurrency: Option<u64>,

    /// The main branch to diff against.
    #[arg(long, value_name = "REF")]
    pub base: Option<String>,
}

#[derive(Debug, Args)]
pub struct HookArgs {
    #[command(subcommand)]
    pub action: HookAction,
}

#[derive(Debug, Subcommand)]
pub enum HookAction {
    /// Write the pre-merge-commit, pre-push and pre-commit hooks into the
    /// folder git runs hooks from (pre-commit guards only a merge concluded
    /// by `git commit`).
    Install {
        /// Keep a hook speed did not write as <name>.local (speed runs it
        /// first) instead of refusing.
        #[arg(long)]
        force: bool,
    },
    /// Remove speed's hooks and put back what --force kept aside.
    Uninstall,
    /// What a hook script runs: the gate for one hook.
    Run {
        /// pre-merge-commit, pre-commit or pre-push.
        #[arg(value_name = "HOOK")]
        name: String,
        /// The arguments git gave the hook.
        #[arg(
            value_name = "ARGS",
            trailing_var_arg = true,
            allow_hyphen_values = true
        )]
        args: Vec<String>,
    },
}

#[derive(Debug, Args)]
pub struct OverrideArgs {
    /// The task to accept.
    #[arg(long = "task-id", value_name = "ID")]
    pub task_id: String,

    /// Its feature, when the id exists in several.
    #[arg(long, value_name = "F")]
    pub feature: Option<String>,

    /// Why the task is accepted despite its review (required, logged).
    #[arg(long, value_name = "TEXT")]
    pub reason: String,
}

#[derive(Debug, Args)]
pub struct ApproveArgs {
    /// The task whose approval to confirm.
    #[arg(long = "task-id", value_name = "ID")]
    pub task_id: String,

    /// Its feature, when the id exists in several.
    #[arg(long, value_name = "F")]
    pub feature: Option<String>,

    /// Who approves (required, logged).
    #[arg(long, value_name = "NAME")]
    pub by: String,

    /// A note kept with the approval.
    #[arg(long, value_name = "TEXT")]
    pub note: Option<String>,
}

#[derive(Debug, Args)]
pub struct RejectArgs {
    /// The task whose approval to turn down.
    #[arg(long = "task-id", value_name = "ID")]
    pub task_id: String,

    /// Its feature, when the id exists in several.
    #[arg(long, value_name = "F")]
    pub feature: Option<String>,

    /// Who rejects (required, logged).
    #[arg(long, value_name = "NAME")]
    pub by: String,

    /// What must change: written to the task as its review_feedback.
    #[arg(long, value_name = "TEXT")]
    pub reason: String,
}

#[derive(Debug, Args)]
pub struct NitsArgs {
    /// Print the nits as JSON on stdout.
    #[arg(long)]
    pub json: bool,
}

/// Whose reviews: one of these.
#[derive(Debug, Args)]
#[group(id = "subject", multiple = false)]
pub struct SubjectArgs {
    /// A task (with --feature when its id exists in several features).
    #[arg(long = "task-id", value_name = "ID")]
    pub task_id: Option<String>,

    /// A defect's fix.
    #[arg(long, value_name = "NAME")]
    pub defect: Option<String>,

    /// A branch reviewed with `speed review --branch`.
    #[arg(long, value_name = "B")]
    pub branch: Option<String>,
}

#[derive(Debug, Args)]
#[command(group = clap::ArgGroup::new("whose").args(["task_id", "defect", "branch", "spec"]))]
pub struct ShowArgs {
    #[command(flatten)]
    pub subject: SubjectArgs,

    /// The feature of --task-id.
    #[arg(long, value_name = "F", requires = "task_id")]
    pub feature: Option<String>,

    /// A spec review's session: .speed/spec-reviews/FEATURE.json.
    #[arg(long, value_name = "FEATURE", conflicts_with_all = ["task_id", "defect", "branch", "nth"])]
    pub spec: Option<String>,

    /// The N-th last review (1 is the last).
    #[arg(long, value_name = "N", default_value_t = 1,
          value_parser = RangedI64ValueParser::<usize>::new().range(limits::NTH))]
    pub nth: usize,

    /// human, json (the report object), markdown or html.
    #[arg(long, value_name = "FORMAT", default_value = "human")]
    pub format: ShowFormat,
}

#[derive(Debug, Args)]
pub struct HistoryArgs {
    #[command(flatten)]
    pub subject: SubjectArgs,

    /// The lines of this feature (with --task-id: that task's).
    #[arg(long, value_name = "F", conflicts_with_all = ["defect", "branch"])]
    pub feature: Option<String>,

    /// Lines recorded since: a day (2026-03-01), a moment (RFC 3339) or a
    /// span back from now (7d, 2weeks).
    #[arg(long, value_name = "DATE", value_parser = since)]
    pub since: Option<i64>,

    /// At most this many lines, the newest.
    #[arg(long, value_name = "N",
          value_parser = RangedI64ValueParser::<usize>::new().range(limits::LIMIT))]
    pub limit: Option<usize>,

    /// human or json.
    #[arg(long, value_name = "FORMAT", default_value = "human")]
    pub format: HistoryFormat,
}

#[derive(Debug, Args)]
pub struct StatsArgs {
    /// Lines recorded since: a day (2026-03-01), a moment (RFC 3339) or a
    /// span back from now (7d, 2weeks).
    #[arg(long, value_name = "DATE", value_parser = since)]
    pub since: Option<i64>,

    /// The reviews of one feature.
    #[arg(long, value_name = "F")]
    pub feature: Option<String>,

    /// human, json or html.
    #[arg(long, value_name = "FORMAT", default_value = "human")]
    pub format: StatsFormat,
}

/// `--since`, as seconds since the epoch (a bad date is a usage error).
fn since(text: &str) -> Result<i64, String> {
    crate::history::since::parse(text, std::time::SystemTime::now())
}

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_name = "SHELL")]
    pub shell: Shell,
}

#[derive(Debug, Args)]
pub struct ConfigArgs {
    /// Print the settings as one JSON object on stdout.
    #[arg(long)]
    pub json: bool,

    /// Fail (exit 1) when reading the settings gave a warning (an unknown
    /// value of an environment variable, say), after printing them.
    #[arg(long)]
    pub strict: bool,

    #[command(flatten)]
    pub values: ValueArgs,
}

impl ReviewArgs {
    /// The output format asked for: `--json` is `--format json`.
    pub fn output_format(&self) -> Format {
        match (self.json, self.format) {
            (true, _) => Format::Json,
            (false, format) => format.unwrap_or(Format::Human),
        }
    }
}

impl Cli {
    /// Parse argv, then the combinations clap cannot express, as usage
    /// errors of the same kind (exit 2).
    pub fn parse_checked<I, T>(args: I) -> Result<Cli, clap::Error>
    where
        I: IntoIterator<Item = T>,
        T: Into<std::ffi::OsString> + Clone,
    {
        let cli = Cli::try_parse_from(args)?;
        if let Command::Spec(SpecArgs {
            action: SpecAction::Review(spec),
        }) = &cli.command
        {
            if spec.dry_run && !matches!(spec.format, SpecFormat::Human | SpecFormat::Json) {
                let name = spec
                    .format
                    .to_possible_value()
                    .map(|v| v.get_name().to_string())
                    .unwrap_or_default();
                return Err(<Cli as clap::CommandFactory>::command().error(
                    clap::error::ErrorKind::ArgumentConflict,
                    format!(
                        "--dry-run prints a prompt, not review results: use it with --format human or json, not {name}"
                    ),
                ));
            }
        }
        if let Command::Review(review) = &cli.command {
            let format = review.output_format();
            if review.dry_run && !matches!(format, Format::Human | Format::Json) {
                let name = format
                    .to_possible_value()
                    .map(|v| v.get_name().to_string())
                    .unwrap_or_default();
                return Err(<Cli as clap::CommandFactory>::command().error(
                    clap::error::ErrorKind::ArgumentConflict,
                    format!(
                        "--dry-run prints a prompt, not review results: use it with --format human or json, not {name}"
                    ),
                ));
            }
        }
        Ok(cli)
    }

    /// The machine-readable format the command promised on stdout, which it
    /// must print even when it fails; None for output meant for people.
    pub fn promised_format(&self) -> Option<Format> {
        let format = match &self.command {
            Command::Review(args) => args.output_format(),
            Command::Nits(args) if args.json => Format::Json,
            Command::Config(args) if args.json => Format::Json,
            Command::Fix(args) if args.json() => Format::Json,
            Command::Spec(SpecArgs {
                action: SpecAction::Review(args),
            }) => match args.format {
                SpecFormat::Human => Format::Human,
                SpecFormat::Json => Format::Json,
                SpecFormat::Sarif => Format::Sarif,
                SpecFormat::Junit => Format::Junit,
                SpecFormat::Github => Format::Github,
            },
            Command::Show(args) => args.format.into(),
            Command::History(args) => args.format.into(),
            Command::Stats(args) => args.format.into(),
            _ => Format::Human,
        };
        (format != Format::Human).then_some(format)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    /// clap checks a command's definition only where its own debug
    /// assertions are compiled in: under `cargo test`, not `--release`.
    #[cfg(debug_assertions)]
    #[test]
    fn cli_definition_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn branch_requires_spec() {
        let err = Cli::try_parse_from(["speed", "review", "--branch", "x"]).unwrap_err();
        assert_eq!(err.kind(), clap::error::ErrorKind::MissingRequiredArgument);
    }

    #[test]
    fn values_out_of_range_are_usage_errors() {
        for args in [
            ["speed", "review", "--budget", "0"],
            ["speed", "review", "--concurrency", "0"],
            ["speed", "review", "--concurrency", "100000"],
            ["speed", "review", "--provider", "gpt"],
        ] {
            let err = Cli::try_parse_from(args).unwrap_err();
            assert_eq!(err.exit_code(), 2, "{args:?}");
        }
    }

    #[test]
    fn config_is_global_and_config_takes_the_value_flags() {
        let cli = Cli::try_parse_from(["speed", "nits", "--config", "x.toml"]).unwrap();
        assert_eq!(cli.config.as_deref(), Some(std::path::Path::new("x.toml")));
        let cli = Cli::try_parse_from(["speed", "config", "--json", "--budget", "9000"]).unwrap();
        assert_eq!(cli.promised_format(), Some(Format::Json));
        let Command::Config(args) = cli.command else {
            panic!("expected config")
        };
        assert_eq!(args.values.budget, Some(9000));
    }

    #[test]
    fn defect_stands_alone_and_update_state_needs_it() {
        let cli = Cli::try_parse_from([
            "speed",
            "review",
            "--defect",
            "login-crash",
            "--update-state",
        ])
        .unwrap();
        let Command::Review(args) = cli.command else {
            panic!("expected review")
        };
        assert_eq!(args.defect.as_deref(), Some("login-crash"));
        assert!(args.update_state);
        for args in [
            &["speed", "review", "--update-state"][..],
            &["speed", "review", "--defect", "x", "--task-id", "1"],
            &[
                "speed", "review", "--defect", "x", "--branch", "b", "--spec", "s.md",
            ],
            &["speed", "review", "--defect", "x", "--feature", "f"],
        ] {
            let err = Cli::try_parse_from(args).unwrap_err();
            assert_eq!(err.exit_code(), 2, "{args:?}");
        }
    }

    #[test]
    fn json_is_format_json_and_conflicts_with_another_format() {
        let format = |args: &[&str]| {
            let cli = Cli::parse_checked(args.iter().copied()).unwrap();
            let Command::Review(review) = cli.command else {
                panic!("expected review")
            };
            review.output_format()
        };
        assert_eq!(format(&["speed", "review", "--json"]), Format::Json);
        assert_eq!(
            format(&["speed", "review", "--format", "json"]),
            Format::Json
        );
        assert_eq!(
            format(&["speed", "review", "--format", "sarif"]),
            Format::Sarif
        );
        assert_eq!(format(&["speed", "review"]), Format::Human);
        let err =
            Cli::parse_checked(["speed", "review", "--json", "--format", "sarif"]).unwrap_err();
        assert_eq!(err.kind(), clap::error::ErrorKind::ArgumentConflict);
    }

    #[test]
    fn dry_run_takes_only_human_or_json() {
        for format in ["sarif", "junit", "github"] {
            let err = Cli::parse_checked(["speed", "review", "--dry-run", "--format", format])
                .unwrap_err();
            assert_eq!(err.exit_code(), 2, "{format}");
            assert!(err.to_string().contains(format), "{err}");
        }
        for format in ["human", "json"] {
            Cli::parse_checked(["speed", "review", "--dry-run", "--format", format]).unwrap();
        }
    }

    #[test]
    fn color_is_global() {
        let cli = Cli::try_parse_from(["speed", "nits", "--color", "never"]).unwrap();
        assert_eq!(cli.color, ColorWhen::Never);
        let cli = Cli::try_parse_from(["speed", "--color=always", "review"]).unwrap();
        assert_eq!(cli.color, ColorWhen::Always);
        assert!(Cli::try_parse_from(["speed", "review", "--color", "sometimes"]).is_err());
    }

    #[test]
    fn spec_review_may_name_no_feature_and_the_reviser_takes_the_rest() {
        // Neither FEATURE nor --spec: the active feature (decided later).
        let cli = Cli::try_parse_from(["speed", "spec", "review"]).unwrap();
        let Command::Spec(SpecArgs {
            action: SpecAction::Review(args),
        }) = cli.command
        else {
            panic!("expected spec review")
        };
        assert_eq!((args.feature, args.spec), (None, None));
        let cli = Cli::try_parse_from([
            "speed",
            "spec",
            "review",
            "fines",
            "--format",
            "json",
            "--reviser",
            "claude",
            "-p",
            "--offline",
        ])
        .unwrap();
        assert_eq!(cli.promised_format(), Some(Format::Json));
        let Command::Spec(SpecArgs {
            action: SpecAction::Review(args),
        }) = cli.command
        else {
            panic!("expected spec review")
        };
        assert_eq!(args.feature.as_deref(), Some("fines"));
        assert_eq!(args.reviser, ["claude", "-p", "--offline"]);
        assert!(!args.offline);
        for args in [
            &["speed", "spec", "review", "f", "--max-iterations", "0"][..],
            &[
                "speed",
                "spec",
                "review",
                "f",
                "--rev",
                "HEAD",
                "--reviser",
                "x",
            ],
            &["speed", "spec", "review", "f", "--format", "html"],
        ] {
            assert_eq!(
                Cli::try_parse_from(args).unwrap_err().exit_code(),
                2,
                "{args:?}"
            );
        }
        Cli::try_parse_from(["speed", "spec", "review", "--spec", "s.md"]).unwrap();
        for format in ["sarif", "junit", "github"] {
            Cli::try_parse_from(["speed", "spec", "review", "f", "--format", format]).unwrap();
            let dry = Cli::parse_checked([
                "speed",
                "spec",
                "review",
                "f",
                "--dry-run",
                "--format",
                format,
            ]);
            assert_eq!(dry.unwrap_err().exit_code(), 2, "{format}");
        }
    }

    #[test]
    fn task_ids_repeat() {
        let cli =
            Cli::try_parse_from(["speed", "review", "--task-id", "1", "--task-id", "2"]).unwrap();
        let Command::Review(args) = cli.command else {
            panic!("expected review")
        };
        assert_eq!(args.task_ids, ["1", "2"]);
    }
}
