//! What every review of a run shares, built once: the review's
//! configuration (each part's own configuration inside it), the repository
//! root, the main branch, the prompt templates, the token counter, who
//! the reviews are recorded as, and the model calls allowed at once. `settings` fills `Config`; nothing here
//! reads flags or the config file.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::checks;
use crate::defects;
use crate::git::{MainBranch, Repository};
use crate::llm;
use crate::prompt::{self, PendingCounter, Templates};
use crate::tasks::Actor;
use crate::verdict;

use super::Error;

/// How a run reviews: what, with which model, within which limits.
#[derive(Debug, Clone)]
pub struct Config {
    pub target: Target,
    pub dry_run: bool,
    /// Batch mode: review approved tasks again too.
    pub force: bool,
    /// What a review does when another review of its subject is under way
    /// (`--no-wait`: say so and stop).
    pub queue: crate::ledger::locks::Queue,
    /// The branch that holds the source of truth.
    pub main: MainBranch,
    /// Prompt templates replacing built-in ones, read like the config.
    pub prompts: Vec<prompt::Override>,
    /// Said in every report: the configuration or a template that decided
    /// the review is not main's committed one, or the working tree's was
    /// not used.
    pub report_notices: Vec<String>,
    pub concurrency: usize,
    pub budget: usize,
    pub tokenizer: String,
    pub max_revisions: u32,
    /// At most this many model calls share one large diff.
    pub max_parts: usize,
    /// `review.actor`: who a review is recorded as (`reviewed_by`, the actor
    /// of event files in the multi-player layout); None means the git user.
    pub actor: Option<String>,
    /// `--spec PATH[#Section]`, PATH relative to the repository root: for a
    /// task, it replaces the task's spec_references, its feature's
    /// spec_path and specs/product/<feature>.md.
    pub spec_args: Vec<String>,
    pub llm: llm::Config,
    pub guardian: GuardianConfig,
    pub checks: checks::Config,
    pub defect: defects::Limits,
    /// `[dimensions.*]` and `review.pass_score`: what the model rates and
    /// the thresholds speed holds the ratings to.
    pub scoring: verdict::Scoring,
    /// `review.human`: whether a model's approval waits for a person.
    pub human: Human,
    /// `review.reconcile`: an answer that contradicts itself is asked
    /// about once more before speed decides (`verdict::reconcile`).
    pub reconcile: bool,
    /// `--shard K/N`: only this part of the selected subjects.
    pub shard: Option<super::shard::Shard>,
    /// `--batch-api`, `--collect`: the provider's batch API.
    pub provider_batch: ProviderBatch,
    /// `--incremental`: a re-review shows what changed since the last
    /// review and its verdict, not the whole change.
    pub incremental: bool,
}

/// `review.human`: who has the last word on an approval.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Human {
    /// The checked model verdict is final.
    #[default]
    Auto,
    /// On a terminal, a person is asked after a model's approval; off a
    /// terminal, as `Require`.
    Prompt,
    /// A model's approval waits for `speed approve` or `speed reject`.
    Require,
}

impl Human {
    pub const WORDS: &'static [&'static str] = &["auto", "prompt", "require"];

    pub fn parse(word: &str) -> Option<Human> {
        match word {
            "auto" => Some(Human::Auto),
            "prompt" => Some(Human::Prompt),
            "require" => Some(Human::Require),
            _ => None,
        }
    }

    /// Whether a model's approval waits for a person.
    pub fn waits(self) -> bool {
        self != Human::Auto
    }
}

/// How the model is asked: now, or through the provider's batch API.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum ProviderBatch {
    /// Each review asks the model as it runs.
    #[default]
    Off,
    /// `--batch-api`: prepare every review, submit its calls as one batch.
    Submit,
    /// `--collect [ID]`: finish the reviews of a submitted batch (every
    /// waiting batch without an id), waiting at most `wait` for it to end.
    Collect {
        id: Option<String>,
        wait: std::time::Duration,
        /// Running in CI (`CI=true`): a checkout with no batch state is
        /// the submitting job's state not carried over, an error, not
        /// "nothing to collect".
        ci: bool,
    },
}

/// `[guardian]`: the second gate after an approval.
#[derive(Debug, Clone, PartialEq)]
pub struct GuardianConfig {
    pub enabled: bool,
    /// Why the guardian is off, recorded in reports ("--no-guardian", ...).
    pub skip_reason: Option<String>,
    pub vision_file: String,
    /// A different model for the guardian; None uses the review's.
    pub model: Option<String>,
    pub budget: usize,
}

/// What a review command was asked to review.
#[derive(Debug, Clone, PartialEq)]
pub enum Target {
    Tasks {
        ids: Vec<String>,
        feature: Option<String>,
    },
    Branch {
        branch: String,
        /// `PATH[#Section]`, PATH relative to the repository root.
        specs: Vec<String>,
        /// Absolute (relative paths are taken from the directory speed runs in).
        criteria: Option<PathBuf>,
    },
    /// `--defect NAME`: the fix of one defect.
    Defect {
        name: String,
        /// `--update-state`: an approval moves state.json from `fixed` to
        /// `reviewed`, and the review goes to the defect's logs/review.log.
        update_state: bool,
    },
}

/// What is shared by every review of a run (and across batch threads).
pub struct Context {
    /// Where speed's state lives (the folder holding `.speed/`): the main
    /// worktree's root, from whichever worktree speed runs in.
    pub root: PathBuf,
    /// The root of the worktree speed runs in, whose files (a `--spec` not
    /// committed on main) are read from the checkout.
    pub worktree: PathBuf,
    pub config: Config,
    /// Built on its own thread; taken when the first prompt is assembled.
    pub counter: Arc<PendingCounter>,
    pub templates: Templates,
    /// Who the reviews are recorded as.
    pub actor: Actor,
    /// The model calls in flight at once (`review.concurrency`), shared by
    /// the reviews of a batch and the parts of each review.
    pub calls: llm::pacing::Slots,
}

impl Context {
    /// The context of reviews in the repository containing `dir`. The
    /// tokenizer is named now, so an unknown encoding fails at once, and
    /// built on a thread of its own (`warm`).
    pub fn open(dir: &Path, config: Config) -> Result<Context, Error> {
        let counter = Arc::new(PendingCounter::start(&config.tokenizer)?);
        warm(&counter);
        let repo = Repository::discover(dir)?;
        Ok(Context {
            root: repo.state_root().to_path_buf(),
            worktree: repo.root().to_path_buf(),
            counter,
            templates: Templates::from_overrides(&config.prompts)?,
            actor: actor(&repo, config.actor.as_deref()),
            calls: llm::pacing::Slots::new(config.concurrency),
            config,
        })
    }

    pub fn main(&self) -> &MainBranch {
        &self.config.main
    }

    /// Whether no model is asked: speed's own checks decide.
    pub fn offline(&self) -> bool {
        self.config.llm.offline()
    }

    /// An offline review that is not a dry run: it sends nothing, so its
    /// prompt is built only to be hashed, whatever its size (a dry run
    /// still shows what a model would be sent).
    pub fn sends_nothing(&self) -> bool {
        self.offline() && !self.config.dry_run
    }
}

/// Build what every review needs and nothing before it does, on a thread
/// of its own while the review reads git, the specs and the code: the
/// secret rules (some thirty regular expressions, needed once the diff is
/// read) and the tokenizer (a DFA of its word pattern, needed when the
/// first prompt is counted, then warmed on a sample of a prompt, which
/// saves the review's counts about a millisecond of building search states
/// and paging in tables). Each is built once whoever asks first, so
/// the review waits only for what is not built yet; nothing it finds
/// depends on which thread built them.
fn warm(counter: &Arc<PendingCounter>) {
    let counter = Arc::clone(counter);
    // Without a thread, each is built when first needed, as before.
    let _ = std::thread::Builder::new()
        .name("speed-warm".into())
        .spawn(move || {
            crate::secrets::warm();
            // An encoding that cannot be built says so where it is used.
            if let Ok(counter) = counter.get() {
                counter.warm();
            }
        });
}

/// Who reviews: config `review.actor`, else the git user (`user.name`), else
/// the login name; the email is git's `user.email`, else `<name>@local`.
fn actor(repo: &Repository, configured: Option<&str>) -> Actor {
    let (git_name, git_email) = repo.user();
    let login = || {
        ["USER", "USERNAME"]
            .iter()
            .find_map(|key| std::env::var(key).ok().filter(|v| !v.trim().is_empty()))
    };
    let name = configured
        .map(str::to_string)
        .or(git_name)
        .or_else(login)
        .unwrap_or_default();
    Actor::new(&name, git_email.as_deref())
}
