//! `speed fix …` resolved: plain values for `app`. Only `run` reads the
//! configuration (the checks that look for a finding again at the agent's
//! commit are the review's, read at the main branch's commit).

use std::path::Path;
use std::time::Duration;

use crate::cli::{FixAction, FixArgs, FixFormat, ReviewArgs, fix::DEFAULT_AGENT_SECS};

use super::{Error, Repo, ReviewSettings, all_notices, locate, review_settings};

/// What `speed fix` does.
#[derive(Debug, Clone)]
pub enum FixSettings {
    List {
        task_id: Option<String>,
        feature: Option<String>,
        all: bool,
        json: bool,
    },
    Show {
        id: String,
        json: bool,
    },
    Done {
        id: String,
    },
    Skip {
        id: String,
        /// Never blank.
        reason: String,
    },
    Prompt {
        id: String,
    },
    Run {
        id: String,
        agent: Vec<String>,
        update_branch: bool,
        timeout: Duration,
        /// The review's settings, for its checks at the agent's commit.
        review: Box<ReviewSettings>,
    },
}

/// Resolve `speed fix …`; the notices say where the configuration came
/// from (for `run`).
pub(super) fn resolve(
    args: FixArgs,
    repo: Result<&dyn Repo, &str>,
    config_flag: Option<&Path>,
    dir: &Path,
    env: &dyn Fn(&str) -> Option<String>,
    warnings: &mut Vec<String>,
) -> Result<(FixSettings, Vec<String>), Error> {
    let json = |format: FixFormat| format == FixFormat::Json;
    let settings = match args.action {
        FixAction::List {
            task_id,
            feature,
            all,
            format,
        } => FixSettings::List {
            task_id,
            feature,
            all,
            json: json(format),
        },
        FixAction::Show { id, format } => FixSettings::Show {
            id,
            json: json(format),
        },
        FixAction::Done { id } => FixSettings::Done { id },
        FixAction::Skip { id, reason } => {
            let reason = reason.trim().to_string();
            if reason.is_empty() {
                return Err(Error::Flag {
                    flag: "--reason",
                    message: "a skipped fix needs a reason: say why it is not fixed".to_string(),
                });
            }
            FixSettings::Skip { id, reason }
        }
        FixAction::Prompt { id } => FixSettings::Prompt { id },
        FixAction::Run {
            id,
            update_branch,
            timeout,
            agent,
        } => {
            // Everything after --agent is the agent's: a flag of speed's
            // written there goes to the agent, and that deserves a word.
            for flag in ["--update-branch", "--timeout"] {
                if agent
                    .iter()
                    .skip(1)
                    .any(|a| a == flag || a.starts_with(&format!("{flag}=")))
                {
                    warnings.push(format!(
                        "{flag} comes after --agent, so it is passed to the agent; put speed's own options before --agent"
                    ));
                }
            }
            let located = locate::locate(repo, config_flag, None, env)?;
            let notices = all_notices(&located);
            let repo = repo.map_err(|why| Error::NoRepository(why.to_string()))?;
            let review = review_settings(ReviewArgs::default(), located, repo, dir, env, warnings)?;
            let settings = FixSettings::Run {
                id,
                agent,
                update_branch,
                timeout: Duration::from_secs(timeout.unwrap_or(DEFAULT_AGENT_SECS)),
                review: Box::new(review),
            };
            return Ok((settings, notices));
        }
    };
    Ok((settings, Vec::new()))
}
