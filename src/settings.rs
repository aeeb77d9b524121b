//! Flags + environment + `.speed/config.toml` resolved once into `Settings`.
//!
//! Precedence: command-line flags, then environment, then the config file, then
//! defaults. Commands only ever see these plain values, never clap types, so
//! they can be built and tested without argv. Unknown config keys are reported
//! as warnings (a typo should not be silent, but a newer key should not break
//! an older speed).

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;

use crate::cli::{Cli, Command, ReviewArgs};

pub const DEFAULT_BUDGET: usize = 60_000;
pub const DEFAULT_CONCURRENCY: usize = 4;
pub const DEFAULT_MAX_REVISIONS: u32 = 2;
/// How many prompts a review whose diff does not fit one may use.
pub const DEFAULT_MAX_PARTS: usize = 4;
pub const DEFAULT_TOKENIZER: &str = "o200k_base";
pub const DEFAULT_VISION_FILE: &str = "specs/product/overview.md";
pub const CONFIG_PATH: &str = ".speed/config.toml";

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path} is not valid TOML: {message}")]
    Toml { path: PathBuf, message: String },
    #[error("{origin}: unknown provider {value:?} (expected openai, anthropic or command)")]
    UnknownProvider { origin: String, value: String },
    #[error("{origin}: {message}")]
    Invalid { origin: String, message: String },
}

/// Everything a command needs, resolved once.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Where speed was started (or `-C DIR`).
    pub dir: PathBuf,
    pub verbose: u8,
    /// Problems worth telling the user that do not stop the run.
    pub warnings: Vec<String>,
    pub command: CommandSettings,
}

#[derive(Debug, Clone)]
pub enum CommandSettings {
    Review(Box<ReviewSettings>),
    Nits { json: bool },
}

#[derive(Debug, Clone)]
pub struct ReviewSettings {
    pub target: Target,
    pub json: bool,
    pub dry_run: bool,
    pub force: bool,
    pub concurrency: usize,
    /// The first of `--base`, `git.main_branch`, `MAIN_BRANCH`; None lets git
    /// fall back to origin/HEAD, main, master.
    pub main_branch: Option<String>,
    pub budget: usize,
    pub tokenizer: String,
    pub max_revisions: u32,
    /// `review.max_parts`: prompts a review may split a large diff into;
    /// changed code beyond them is unseen and blocks approval.
    pub max_parts: usize,
    /// `--spec PATH[#Section]` as given: for a task, the last resort after
    /// its spec_references, its feature's spec_path and
    /// specs/product/<feature>.md.
    pub spec_args: Vec<String>,
    pub llm: LlmSettings,
    pub guardian: GuardianSettings,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Target {
    Tasks {
        ids: Vec<String>,
        feature: Option<String>,
    },
    Branch {
        branch: String,
        /// `PATH[#Section]` as given.
        specs: Vec<String>,
        criteria: Option<PathBuf>,
    },
}

#[derive(Debug, Clone, PartialEq)]
pub struct LlmSettings {
    /// None when nothing configured a provider.
    pub provider: Option<String>,
    pub base_url: Option<String>,
    pub model: Option<String>,
    pub api_key_env: Option<String>,
    pub command: Vec<String>,
    pub timeout: Duration,
    pub connect_timeout: Duration,
    pub max_retries: u32,
    pub retry_base: Duration,
    pub temperature: f64,
    pub seed: u64,
    pub max_output_tokens: u32,
    pub structured_output: bool,
    /// Requests and tokens per minute shared by all concurrent reviews.
    pub rpm: Option<u32>,
    pub tpm: Option<u32>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct GuardianSettings {
    pub enabled: bool,
    /// Why the guardian is off, recorded in reports ("--no-guardian", ...).
    pub skip_reason: Option<String>,
    pub vision_file: String,
    /// A different model for the guardian; None uses the review's.
    pub model: Option<String>,
    pub budget: usize,
}

/// The config file as written; every key optional.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct FileConfig {
    git: GitConfig,
    llm: LlmConfig,
    review: ReviewConfig,
    guardian: GuardianConfig,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct GitConfig {
    main_branch: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct LlmConfig {
    provider: Option<String>,
    base_url: Option<String>,
    model: Option<String>,
    api_key_env: Option<String>,
    command: Option<Vec<String>>,
    timeout_secs: Option<f64>,
    connect_timeout_secs: Option<f64>,
    max_retries: Option<u32>,
    retry_base_ms: Option<u64>,
    temperature: Option<f64>,
    seed: Option<u64>,
    max_output_tokens: Option<u32>,
    structured_output: Option<bool>,
    rpm: Option<u32>,
    tpm: Option<u32>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct ReviewConfig {
    token_budget: Option<usize>,
    max_revisions: Option<u32>,
    max_parts: Option<usize>,
    tokenizer: Option<String>,
    concurrency: Option<usize>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct GuardianConfig {
    enabled: Option<bool>,
    vision_file: Option<String>,
    model: Option<String>,
    token_budget: Option<usize>,
}

/// Keys the config file may hold, per table, for the unknown-key warning.
const KNOWN_KEYS: &[(&str, &[&str])] = &[
    ("git", &["main_branch"]),
    (
        "llm",
        &[
            "provider",
            "base_url",
            "model",
            "api_key_env",
            "command",
            "timeout_secs",
            "connect_timeout_secs",
            "max_retries",
            "retry_base_ms",
            "temperature",
            "seed",
            "max_output_tokens",
            "structured_output",
            "rpm",
            "tpm",
        ],
    ),
    (
        "review",
        &[
            "token_budget",
            "max_revisions",
            "max_parts",
            "tokenizer",
            "concurrency",
        ],
    ),
    (
        "guardian",
        &["enabled", "vision_file", "model", "token_budget"],
    ),
];

impl Settings {
    /// Resolve settings from parsed flags, the process's working directory and
    /// an environment lookup (a function so tests need no real environment).
    pub fn resolve(
        cli: Cli,
        cwd: &Path,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Settings, Error> {
        let dir = match &cli.dir {
            Some(dir) if dir.is_absolute() => dir.clone(),
            Some(dir) => cwd.join(dir),
            None => cwd.to_path_buf(),
        };
        let mut warnings = Vec::new();
        let config = match repo_root(&dir) {
            Some(root) => load_config(&root.join(CONFIG_PATH), &mut warnings)?,
            None => FileConfig::default(),
        };
        let command = match cli.command {
            Command::Review(args) => {
                CommandSettings::Review(Box::new(review_settings(*args, config, env)?))
            }
            Command::Nits(args) => CommandSettings::Nits { json: args.json },
        };
        Ok(Settings {
            dir,
            verbose: cli.verbose,
            warnings,
            command,
        })
    }
}

/// The nearest enclosing directory holding `.git` (a folder, or a file for
/// worktrees), for finding the config before git itself is opened.
fn repo_root(start: &Path) -> Option<PathBuf> {
    start
        .ancestors()
        .find(|dir| dir.join(".git").exists())
        .map(Path::to_path_buf)
}

fn load_config(path: &Path, warnings: &mut Vec<String>) -> Result<FileConfig, Error> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
            return Ok(FileConfig::default());
        }
        Err(source) => {
            return Err(Error::Read {
                path: path.to_path_buf(),
                source,
            });
        }
    };
    let toml_error = |err: toml::de::Error| Error::Toml {
        path: path.to_path_buf(),
        message: err.to_string().trim_end().to_string(),
    };
    let table: toml::Table = toml::from_str(&text).map_err(toml_error)?;
    warnings.extend(unknown_keys(&table, path));
    toml::from_str(&text).map_err(toml_error)
}

fn unknown_keys(table: &toml::Table, path: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for (name, value) in table {
        let Some((_, known)) = KNOWN_KEYS.iter().find(|(t, _)| t == name) else {
            out.push(format!(
                "{}: unknown table [{name}] ignored",
                path.display()
            ));
            continue;
        };
        if let Some(inner) = value.as_table() {
            for key in inner.keys().filter(|k| !known.contains(&k.as_str())) {
                out.push(format!(
                    "{}: unknown key {name}.{key} ignored",
                    path.display()
                ));
            }
        }
    }
    out
}

fn review_settings(
    args: ReviewArgs,
    config: FileConfig,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<ReviewSettings, Error> {
    let spec_args = args.spec.clone();
    let target = match args.branch {
        Some(branch) => Target::Branch {
            branch,
            specs: args.spec,
            criteria: args.criteria,
        },
        None => Target::Tasks {
            ids: args.task_ids,
            feature: args.feature,
        },
    };
    let main_branch = args
        .base
        .or(config.git.main_branch)
        .or_else(|| env("MAIN_BRANCH").filter(|v| !v.trim().is_empty()));

    let budget = args
        .budget
        .or(config.review.token_budget)
        .unwrap_or(DEFAULT_BUDGET);
    positive(budget, "token budget (--budget / review.token_budget)")?;
    let concurrency = args
        .concurrency
        .or(config.review.concurrency)
        .unwrap_or(DEFAULT_CONCURRENCY);
    positive(
        concurrency,
        "concurrency (--concurrency / review.concurrency)",
    )?;

    let max_parts = config.review.max_parts.unwrap_or(DEFAULT_MAX_PARTS);
    positive(max_parts, "review.max_parts")?;

    let llm = llm_settings(args.provider, args.model, config.llm)?;
    let guardian = guardian_settings(args.no_guardian, config.guardian, budget, env);

    Ok(ReviewSettings {
        target,
        json: args.json,
        dry_run: args.dry_run,
        force: args.force,
        concurrency,
        main_branch,
        budget,
        tokenizer: config
            .review
            .tokenizer
            .unwrap_or_else(|| DEFAULT_TOKENIZER.to_string()),
        max_revisions: config.review.max_revisions.unwrap_or(DEFAULT_MAX_REVISIONS),
        max_parts,
        spec_args,
        llm,
        guardian,
    })
}

fn positive(value: usize, what: &str) -> Result<(), Error> {
    if value == 0 {
        return Err(Error::Invalid {
            origin: what.to_string(),
            message: "must be at least 1".to_string(),
        });
    }
    Ok(())
}

fn seconds(value: Option<f64>, default: u64, key: &str) -> Result<Duration, Error> {
    match value {
        None => Ok(Duration::from_secs(default)),
        Some(secs) if secs.is_finite() && secs > 0.0 => Ok(Duration::from_secs_f64(secs)),
        Some(secs) => Err(Error::Invalid {
            origin: format!("{CONFIG_PATH}: llm.{key}"),
            message: format!("{secs} is not a positive number of seconds"),
        }),
    }
}

fn llm_settings(
    provider_flag: Option<String>,
    model_flag: Option<String>,
    config: LlmConfig,
) -> Result<LlmSettings, Error> {
    let (provider, origin) = match provider_flag {
        Some(p) => (Some(p), "--provider".to_string()),
        None => (config.provider, format!("{CONFIG_PATH}: llm.provider")),
    };
    let provider = provider.map(|p| p.trim().to_ascii_lowercase());
    if let Some(p) = &provider {
        if !["openai", "anthropic", "command"].contains(&p.as_str()) {
            return Err(Error::UnknownProvider {
                origin,
                value: p.clone(),
            });
        }
    }
    Ok(LlmSettings {
        provider,
        base_url: config.base_url,
        model: model_flag.or(config.model),
        api_key_env: config.api_key_env,
        command: config.command.unwrap_or_default(),
        timeout: seconds(config.timeout_secs, 120, "timeout_secs")?,
        connect_timeout: seconds(config.connect_timeout_secs, 10, "connect_timeout_secs")?,
        max_retries: config.max_retries.unwrap_or(3),
        retry_base: Duration::from_millis(config.retry_base_ms.unwrap_or(1000)),
        temperature: config.temperature.unwrap_or(0.0),
        seed: config.seed.unwrap_or(7),
        max_output_tokens: config.max_output_tokens.unwrap_or(4096),
        structured_output: config.structured_output.unwrap_or(false),
        rpm: config.rpm,
        tpm: config.tpm,
    })
}

fn guardian_settings(
    no_guardian: bool,
    config: GuardianConfig,
    review_budget: usize,
    env: &dyn Fn(&str) -> Option<String>,
) -> GuardianSettings {
    let skip_env = env("SKIP_GUARDIAN")
        .map(|v| matches!(v.trim().to_ascii_lowercase().as_str(), "1" | "true" | "yes"))
        .unwrap_or(false);
    let skip_reason = if no_guardian {
        Some("--no-guardian".to_string())
    } else if skip_env {
        Some("SKIP_GUARDIAN=true".to_string())
    } else if config.enabled == Some(false) {
        Some("guardian.enabled = false".to_string())
    } else {
        None
    };
    GuardianSettings {
        enabled: skip_reason.is_none(),
        skip_reason,
        vision_file: config
            .vision_file
            .unwrap_or_else(|| DEFAULT_VISION_FILE.to_string()),
        model: config.model,
        budget: config.token_budget.unwrap_or(review_budget),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    fn resolve_in(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Result<Settings, Error> {
        let cli = Cli::try_parse_from(args).unwrap();
        let env: Vec<(String, String)> = env
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Settings::resolve(cli, dir, &move |key| {
            env.iter().find(|(k, _)| k == key).map(|(_, v)| v.clone())
        })
    }

    fn review(settings: Settings) -> ReviewSettings {
        match settings.command {
            CommandSettings::Review(r) => *r,
            other => panic!("expected review settings, got {other:?}"),
        }
    }

    fn repo_with_config(config: &str) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join(".git")).unwrap();
        std::fs::create_dir_all(dir.path().join(".speed")).unwrap();
        std::fs::write(dir.path().join(CONFIG_PATH), config).unwrap();
        dir
    }

    #[test]
    fn defaults_without_config() {
        let dir = tempfile::tempdir().unwrap();
        let r = review(resolve_in(dir.path(), &["speed", "review"], &[]).unwrap());
        assert_eq!(r.budget, DEFAULT_BUDGET);
        assert_eq!(r.concurrency, DEFAULT_CONCURRENCY);
        assert_eq!(r.max_revisions, 2);
        assert_eq!(r.max_parts, DEFAULT_MAX_PARTS);
        assert_eq!(r.llm.provider, None);
        assert!(r.guardian.enabled);
        assert_eq!(r.guardian.vision_file, DEFAULT_VISION_FILE);
        assert_eq!(r.main_branch, None);
    }

    #[test]
    fn max_parts_is_read_and_must_be_positive() {
        let dir = repo_with_config("[review]\nmax_parts = 2\n");
        let r = review(resolve_in(dir.path(), &["speed", "review"], &[]).unwrap());
        assert_eq!(r.max_parts, 2);
        let dir = repo_with_config("[review]\nmax_parts = 0\n");
        let err = resolve_in(dir.path(), &["speed", "review"], &[]).unwrap_err();
        assert!(err.to_string().contains("review.max_parts"), "{err}");
    }

    #[test]
    fn flags_win_over_environment_and_file() {
        let dir = repo_with_config(
            "[git]\nmain_branch = \"trunk\"\n[llm]\nprovider = \"anthropic\"\nmodel = \"file-model\"\n[review]\ntoken_budget = 9000\n",
        );
        let r = review(
            resolve_in(
                dir.path(),
                &[
                    "speed",
                    "review",
                    "--base",
                    "dev",
                    "--provider",
                    "openai",
                    "--model",
                    "m",
                    "--budget",
                    "5000",
                ],
                &[("MAIN_BRANCH", "env-main")],
            )
            .unwrap(),
        );
        assert_eq!(r.main_branch.as_deref(), Some("dev"));
        assert_eq!(r.llm.provider.as_deref(), Some("openai"));
        assert_eq!(r.llm.model.as_deref(), Some("m"));
        assert_eq!(r.budget, 5000);
    }

    #[test]
    fn file_wins_over_main_branch_environment() {
        let dir = repo_with_config("[git]\nmain_branch = \"trunk\"\n");
        let r = review(
            resolve_in(dir.path(), &["speed", "review"], &[("MAIN_BRANCH", "env")]).unwrap(),
        );
        assert_eq!(r.main_branch.as_deref(), Some("trunk"));
        let plain = tempfile::tempdir().unwrap();
        let r = review(
            resolve_in(
                plain.path(),
                &["speed", "review"],
                &[("MAIN_BRANCH", "env")],
            )
            .unwrap(),
        );
        assert_eq!(r.main_branch.as_deref(), Some("env"));
    }

    #[test]
    fn guardian_skips_are_recorded_with_their_reason() {
        let dir = tempfile::tempdir().unwrap();
        let r = review(
            resolve_in(
                dir.path(),
                &["speed", "review"],
                &[("SKIP_GUARDIAN", "true")],
            )
            .unwrap(),
        );
        assert_eq!(
            r.guardian.skip_reason.as_deref(),
            Some("SKIP_GUARDIAN=true")
        );
        let r = review(resolve_in(dir.path(), &["speed", "review", "--no-guardian"], &[]).unwrap());
        assert_eq!(r.guardian.skip_reason.as_deref(), Some("--no-guardian"));
        let cfg = repo_with_config("[guardian]\nenabled = false\n");
        let r = review(resolve_in(cfg.path(), &["speed", "review"], &[]).unwrap());
        assert!(!r.guardian.enabled);
        assert_eq!(
            r.guardian.skip_reason.as_deref(),
            Some("guardian.enabled = false")
        );
    }

    #[test]
    fn bad_toml_names_the_file_and_line() {
        let dir = repo_with_config("[llm]\nprovider = \n");
        let err = resolve_in(dir.path(), &["speed", "review"], &[]).unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains("config.toml"), "{msg}");
        assert!(msg.contains("line 2"), "{msg}");
    }

    #[test]
    fn unknown_provider_is_an_error_and_unknown_keys_warn() {
        let dir = repo_with_config("[llm]\nprovider = \"gpt\"\n");
        let err = resolve_in(dir.path(), &["speed", "review"], &[]).unwrap_err();
        assert!(err.to_string().contains("unknown provider \"gpt\""));
        let dir = repo_with_config("[llm]\nprovidr = \"openai\"\n[extra]\nx = 1\n");
        let s = resolve_in(dir.path(), &["speed", "review"], &[]).unwrap();
        assert_eq!(s.warnings.len(), 2, "{:?}", s.warnings);
        assert!(s.warnings[0].contains("llm.providr") || s.warnings[1].contains("llm.providr"));
    }

    #[test]
    fn zero_budget_is_rejected() {
        let dir = tempfile::tempdir().unwrap();
        let err = resolve_in(dir.path(), &["speed", "review", "--budget", "0"], &[]).unwrap_err();
        assert!(err.to_string().contains("token budget"));
    }
}
