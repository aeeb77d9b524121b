//! Command-line types (clap) only. Nothing here is seen by the commands:
//! `settings` turns these into plain, checked settings first.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

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

    /// More logging on stderr (repeat for more).
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub verbose: u8,

    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Review finished tasks (or one branch) against the product spec.
    ///
    /// With no --task-id: every `done` task whose last approval does not cover
    /// its current diff. Exit codes: 0 approved, 1 error, 2 usage, 50 changes
    /// requested, 52 model unreachable, 53 model output invalid.
    Review(Box<ReviewArgs>),
    /// Print the nits saved by the last batch review.
    Nits(NitsArgs),
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
}

#[derive(Debug, Default, Args)]
pub struct ReviewArgs {
    /// Task to review (repeatable). Without it, every `done` task not yet
    /// approved at its current diff.
    #[arg(long = "task-id", value_name = "ID", conflicts_with = "branch")]
    pub task_ids: Vec<String>,

    /// Feature whose tasks to consider (picks one when an id exists in two).
    #[arg(long, value_name = "F")]
    pub feature: Option<String>,

    /// Print the report(s) as one JSON object on stdout.
    #[arg(long)]
    pub json: bool,

    /// Do everything up to the model call, print the prompt and its token
    /// accounting, change nothing.
    #[arg(long)]
    pub dry_run: bool,

    /// Skip the guardian gate after an approval.
    #[arg(long)]
    pub no_guardian: bool,

    /// Model provider: openai (any OpenAI-compatible server), anthropic or command.
    #[arg(long, value_name = "P")]
    pub provider: Option<String>,

    /// Model name sent to the provider.
    #[arg(long, value_name = "M")]
    pub model: Option<String>,

    /// Prompt token budget [default: 60000].
    #[arg(long, value_name = "TOKENS")]
    pub budget: Option<usize>,

    /// Reviews run at once in batch mode [default: 4].
    #[arg(long, value_name = "N")]
    pub concurrency: Option<usize>,

    /// Review approved tasks again even when the diff is unchanged.
    #[arg(long)]
    pub force: bool,

    /// Review this branch instead of a task (needs --spec).
    #[arg(long, value_name = "B", requires = "spec")]
    pub branch: Option<String>,

    /// The main branch to diff against.
    #[arg(long, value_name = "REF")]
    pub base: Option<String>,

    /// Spec to review against, optionally with #Section (repeatable).
    #[arg(long, value_name = "PATH[#Section]")]
    pub spec: Vec<String>,

    /// Acceptance criteria for --branch: a file with one criterion per line.
    #[arg(long, value_name = "FILE", requires = "branch")]
    pub criteria: Option<PathBuf>,
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
pub struct NitsArgs {
    /// Print the nits as JSON on stdout.
    #[arg(long)]
    pub json: bool,
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

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
    fn task_ids_repeat() {
        let cli =
            Cli::try_parse_from(["speed", "review", "--task-id", "1", "--task-id", "2"]).unwrap();
        let Command::Review(args) = cli.command else {
            panic!("expected review")
        };
        assert_eq!(args.task_ids, ["1", "2"]);
    }
}
