//! Command-line types (clap) only. Nothing here is seen by the commands:
//! `settings` turns these into plain, checked settings first. Value ranges
//! come from `settings::limits`, so a flag and its config key agree.

use std::path::PathBuf;

use clap::builder::RangedI64ValueParser;
use clap::{Args, Parser, Subcommand};

use crate::settings::limits;

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

    /// Print the report(s) as one JSON object on stdout.
    #[arg(long)]
    pub json: bool,

    /// Do everything up to the model call, print the prompt and its token
    /// accounting, change nothing.
    #[arg(long)]
    pub dry_run: bool,

    #[command(flatten)]
    pub values: ValueArgs,

    /// Review approved tasks again even when the diff is unchanged.
    #[arg(long)]
    pub force: bool,

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

    /// Reviews run at once in batch mode [default: 4].
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
pub struct NitsArgs {
    /// Print the nits as JSON on stdout.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct ConfigArgs {
    /// Print the settings as one JSON object on stdout.
    #[arg(long)]
    pub json: bool,

    #[command(flatten)]
    pub values: ValueArgs,
}

impl Cli {
    /// Whether the command promised one JSON object on stdout, which it
    /// must print even when it fails.
    pub fn json(&self) -> bool {
        match &self.command {
            Command::Review(args) => args.json,
            Command::Nits(args) => args.json,
            Command::Config(args) => args.json,
            Command::Hook(_) | Command::Override(_) => false,
        }
    }
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
        assert!(cli.json());
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
    fn task_ids_repeat() {
        let cli =
            Cli::try_parse_from(["speed", "review", "--task-id", "1", "--task-id", "2"]).unwrap();
        let Command::Review(args) = cli.command else {
            panic!("expected review")
        };
        assert_eq!(args.task_ids, ["1", "2"]);
    }
}
