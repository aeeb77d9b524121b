//! `speed fix …`: the fix queue's commands, as clap types only (see the
//! parent module).

use clap::builder::RangedI64ValueParser;
use clap::{Args, Subcommand, ValueEnum};

/// The longest an agent may work on one fix, and the default.
pub const MAX_AGENT_SECS: i64 = 86_400;
pub const DEFAULT_AGENT_SECS: u64 = 1_800;

#[derive(Debug, Args)]
pub struct FixArgs {
    #[command(subcommand)]
    pub action: FixAction,
}

/// How a fix command prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FixFormat {
    Human,
    Json,
}

#[derive(Debug, Subcommand)]
pub enum FixAction {
    /// List the fix queue by priority (1 first): the open fixes, or every
    /// fix with --all.
    List {
        /// Only this task's fixes.
        #[arg(long = "task-id", value_name = "ID")]
        task_id: Option<String>,
        /// The task's feature, when the id exists in several.
        #[arg(long, value_name = "F", requires = "task_id")]
        feature: Option<String>,
        /// Completed, skipped and resolved fixes too.
        #[arg(long)]
        all: bool,
        /// human, or json: `{"fixes": [...]}`.
        #[arg(long, value_name = "FORMAT", default_value = "human")]
        format: FixFormat,
    },
    /// Show one fix: its finding, where it is, how it is checked, its history.
    Show {
        /// The fix's id (a unique prefix of four characters or more will do).
        id: String,
        #[arg(long, value_name = "FORMAT", default_value = "human")]
        format: FixFormat,
    },
    /// Mark a fix completed (you fixed it).
    Done { id: String },
    /// Skip a fix, with the reason (kept in its history).
    Skip {
        id: String,
        #[arg(long, value_name = "TEXT")]
        reason: String,
    },
    /// Print the fix task as a coding agent should get it.
    Prompt { id: String },
    /// Run a coding agent on a fix in a temporary worktree of its branch.
    ///
    /// The agent gets `speed fix prompt ID`'s text on stdin. When it
    /// committed, the finding's check runs again on its commit: the fix is
    /// completed only when the check no longer finds it. The branch moves
    /// to the commit only with --update-branch, and only as a fast-forward.
    /// Everything after --agent is the agent's command: put speed's own
    /// options before it.
    Run {
        id: String,
        /// Move the task branch to the agent's commit (fast-forward only).
        #[arg(long)]
        update_branch: bool,
        /// The agent's time limit in seconds [default: 1800].
        #[arg(long, value_name = "SECS",
              value_parser = RangedI64ValueParser::<u64>::new().range(1..=MAX_AGENT_SECS))]
        timeout: Option<u64>,
        /// The agent's command and its arguments, run without a shell.
        #[arg(long, value_name = "CMD", required = true, num_args = 1..,
              allow_hyphen_values = true)]
        agent: Vec<String>,
    },
}

impl FixArgs {
    /// Whether the command promised JSON on stdout.
    pub fn json(&self) -> bool {
        matches!(
            self.action,
            FixAction::List {
                format: FixFormat::Json,
                ..
            } | FixAction::Show {
                format: FixFormat::Json,
                ..
            }
        )
    }
}

#[cfg(test)]
mod tests {
    use crate::cli::{Cli, Command};
    use clap::Parser;

    use super::*;

    #[test]
    fn the_agent_takes_the_rest_of_the_line() {
        let cli = Cli::try_parse_from([
            "speed",
            "fix",
            "run",
            "abcd",
            "--update-branch",
            "--timeout",
            "60",
            "--agent",
            "claude",
            "-p",
            "--model",
            "x",
        ])
        .unwrap();
        let Command::Fix(args) = cli.command else {
            panic!("expected fix")
        };
        let FixAction::Run {
            id,
            update_branch,
            timeout,
            agent,
        } = args.action
        else {
            panic!("expected run")
        };
        assert_eq!(id, "abcd");
        assert!(update_branch);
        assert_eq!(timeout, Some(60));
        assert_eq!(agent, ["claude", "-p", "--model", "x"]);
        assert!(Cli::try_parse_from(["speed", "fix", "run", "abcd"]).is_err());
        assert!(Cli::try_parse_from(["speed", "fix", "list", "--feature", "f"]).is_err());
        let cli = Cli::try_parse_from(["speed", "fix", "list", "--format", "json"]).unwrap();
        assert_eq!(cli.promised_format(), Some(crate::cli::Format::Json));
    }
}
