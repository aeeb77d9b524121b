//! The values of the config sections (`[llm]`, `[review]`, `[guardian]`,
//! `[checks]`, …) after flags, environment and file, each recorded with
//! where it came from (`Recorder`): what every command that reviews or
//! shows settings resolves, and what `speed config` prints.

use std::time::Duration;

use serde::Serialize;

use crate::checks::{self, Check, CommandCheck};
use crate::cli::ValueArgs;
use crate::defects;
use crate::hook;
use crate::llm::{self, Choice};
use crate::review;

use super::{
    DEFAULT_BUDGET, DEFAULT_CONCURRENCY, DEFAULT_MAX_PARTS, DEFAULT_MAX_REVISIONS,
    DEFAULT_PROVIDER, DEFAULT_TOKENIZER, DEFAULT_VISION_FILE, Entry, Origin, Source, file, scoring,
    spec,
};

/// The values of the config sections after flags, environment and file,
/// shared by every command that reviews or shows settings.
pub(super) struct Values {
    pub(super) concurrency: usize,
    pub(super) budget: usize,
    pub(super) tokenizer: String,
    pub(super) max_revisions: u32,
    pub(super) max_parts: usize,
    pub(super) actor: Option<String>,
    pub(super) llm: llm::Config,
    pub(super) guardian: review::GuardianConfig,
    pub(super) checks: checks::Config,
    pub(super) defect: defects::Limits,
    pub(super) hook: hook::Policy,
    pub(super) spec_review: crate::spec_review::Config,
    pub(super) scoring: crate::verdict::Scoring,
    pub(super) human: review::Human,
    pub(super) reconcile: bool,
}

/// Picks each value by precedence and records where it came from.
pub(super) struct Recorder<'a> {
    pub(super) entries: &'a mut Vec<Entry>,
    pub(super) file: Source,
}

impl Recorder<'_> {
    pub(super) fn record(&mut self, key: &str, value: &impl Serialize, source: Source) {
        self.entries.push(Entry {
            key: key.to_string(),
            value: serde_json::to_value(value).unwrap_or(serde_json::Value::Null),
            source,
        });
    }

    /// The flag's value, else the file's, else the default.
    pub(super) fn pick<T: Serialize>(
        &mut self,
        key: &str,
        flag: Option<(T, &'static str)>,
        file: Option<T>,
        default: T,
    ) -> T {
        let (value, source) = match (flag, file) {
            (Some((v, name)), _) => (v, Source::Flag(name)),
            (None, Some(v)) => (v, self.file.clone()),
            (None, None) => (default, Source::Default),
        };
        self.record(key, &value, source);
        value
    }

    /// The file's value, else the default.
    pub(super) fn file<T: Serialize>(&mut self, key: &str, file: Option<T>, default: T) -> T {
        self.pick(key, None, file, default)
    }
}

impl Values {
    pub(super) fn resolve(
        file: &file::File,
        origin: Option<&Origin>,
        flags: &ValueArgs,
        env: &dyn Fn(&str) -> Option<String>,
        entries: &mut Vec<Entry>,
        warnings: &mut Vec<String>,
    ) -> Values {
        let mut r = Recorder {
            entries,
            file: origin.map_or(Source::Default, |o| Source::File(o.clone())),
        };
        let llm = llm_values(&mut r, &file.llm, flags);

        let f = &file.review;
        let budget = r.pick(
            "review.token_budget",
            flags.budget.map(|b| (b as usize, "--budget")),
            f.token_budget,
            DEFAULT_BUDGET,
        );
        let max_revisions = r.file(
            "review.max_revisions",
            f.max_revisions,
            DEFAULT_MAX_REVISIONS,
        );
        let max_parts = r.file("review.max_parts", f.max_parts, DEFAULT_MAX_PARTS);
        let actor = r.file("review.actor", f.actor.clone().map(Some), None);
        let tokenizer = r.file(
            "review.tokenizer",
            f.tokenizer.clone(),
            DEFAULT_TOKENIZER.to_string(),
        );
        let concurrency = r.pick(
            "review.concurrency",
            flags.concurrency.map(|c| (c as usize, "--concurrency")),
            f.concurrency,
            DEFAULT_CONCURRENCY,
        );
        let human = r.file("review.human", f.human, review::Human::default());
        let reconcile = r.file("review.reconcile", f.reconcile, true);
        let scoring = scoring::scoring(&mut r, file);

        let guardian = guardian_values(&mut r, &file.guardian, flags, budget, env, warnings);
        let checks = checks_values(&mut r, &file.checks);

        let f = &file.defect;
        let defaults = defects::Limits::default();
        let defect = defects::Limits {
            max_lines: r.file("defect.max_lines", f.max_lines, defaults.max_lines),
            max_files: r.file("defect.max_files", f.max_files, defaults.max_files),
            exempt: r.file("defect.exempt", f.exempt.clone(), defaults.exempt),
        };

        let f = &file.hook;
        let defaults = hook::Policy::default();
        let review_on_miss = r.file(
            "hook.review_on_miss",
            f.review_on_miss,
            defaults.review_on_miss,
        );
        // A review on a miss waits for a model: its own limits apply inside.
        let default_timeout = if review_on_miss {
            hook::DEFAULT_REVIEW_TIMEOUT_SECS
        } else {
            hook::DEFAULT_TIMEOUT_SECS
        };
        let hook = hook::Policy {
            review_on_miss,
            unknown: r.file("hook.unknown", f.unknown, defaults.unknown),
            on_error: r.file("hook.on_error", f.on_error, defaults.on_error),
            // In range (checked by `file`), so these cannot panic.
            timeout: Duration::from_secs_f64(r.file(
                "hook.timeout_secs",
                f.timeout_secs,
                default_timeout,
            )),
            local_timeout: Duration::from_secs_f64(r.file(
                "hook.local_timeout_secs",
                f.local_timeout_secs,
                hook::DEFAULT_LOCAL_TIMEOUT_SECS,
            )),
        };

        let spec_review = spec::values(&mut r, &file.spec_review);

        Values {
            spec_review,
            concurrency,
            budget,
            tokenizer,
            max_revisions,
            max_parts,
            actor,
            llm,
            guardian,
            checks,
            defect,
            hook,
            scoring,
            human,
            reconcile,
        }
    }
}

/// `[llm]` as the file read it into `llm::Config`, with `--offline`,
/// `--provider` and `--model` over it, and where each value came from.
fn llm_values(r: &mut Recorder, f: &file::Llm, flags: &ValueArgs) -> llm::Config {
    let flag = if flags.offline {
        Some((Choice::Offline, "--offline"))
    } else {
        flags
            .provider
            .as_deref()
            .and_then(Choice::parse)
            .map(|p| (p, "--provider"))
    };
    // Nothing says which model to ask: review with speed's checks alone,
    // so a fresh machine with no model server can still review.
    let unconfigured = flag.is_none()
        && flags.model.is_none()
        && !["provider", "base_url", "model", "command", "api_key_env"]
            .iter()
            .any(|key| f.has(key));
    let mut config = f.config.clone();
    let written = |key: &str| f.has(key).then_some(());
    config.provider = r.pick(
        "llm.provider",
        flag,
        written("provider").map(|()| config.provider),
        if unconfigured {
            Choice::Offline
        } else {
            DEFAULT_PROVIDER
        },
    );
    config.offline_note = (unconfigured && config.provider == Choice::Offline).then(|| {
        "no model provider is configured ([llm] in .speed/config.toml, or --provider): \
         reviewing offline with speed's own checks"
            .to_string()
    });
    let in_file = r.file.clone();
    let source = |key: &str| {
        if f.has(key) {
            in_file.clone()
        } else {
            Source::Default
        }
    };
    let base_url = source("base_url");
    r.record("llm.base_url", &config.base_url, base_url);
    config.model = r.pick(
        "llm.model",
        flags.model.clone().map(|m| (Some(m), "--model")),
        written("model").map(|()| config.model.clone()),
        None,
    );
    let c = &config;
    let values = [
        ("api_key_env", serde_json::json!(c.api_key_env)),
        ("command", serde_json::json!(c.command)),
        ("timeout_secs", serde_json::json!(c.timeout.as_secs_f64())),
        (
            "connect_timeout_secs",
            serde_json::json!(c.connect_timeout.as_secs_f64()),
        ),
        ("max_retries", serde_json::json!(c.max_retries)),
        (
            "retry_base_ms",
            serde_json::json!(c.retry_base.as_millis() as u64),
        ),
        ("temperature", serde_json::json!(c.temperature)),
        ("seed", serde_json::json!(c.seed)),
        ("max_output_tokens", serde_json::json!(c.max_output_tokens)),
        ("structured_output", serde_json::json!(c.structured_output)),
        (
            "cache_read_discount",
            serde_json::json!(c.cache_read_discount),
        ),
        ("batch_discount", serde_json::json!(c.batch_discount)),
        ("rpm", serde_json::json!(c.rpm)),
        ("tpm", serde_json::json!(c.tpm)),
        ("max_answer_bytes", serde_json::json!(c.max_answer_bytes)),
        (
            "price_input_per_mtok",
            serde_json::json!(c.price_input_per_mtok),
        ),
        (
            "price_output_per_mtok",
            serde_json::json!(c.price_output_per_mtok),
        ),
    ];
    for (key, value) in values {
        let source = source(key);
        r.record(&format!("llm.{key}"), &value, source);
    }
    config
}

fn guardian_values(
    r: &mut Recorder,
    f: &file::Guardian,
    flags: &ValueArgs,
    review_budget: usize,
    env: &dyn Fn(&str) -> Option<String>,
    warnings: &mut Vec<String>,
) -> review::GuardianConfig {
    let skip_env = match env("SKIP_GUARDIAN") {
        Some(value) => match value.trim().to_ascii_lowercase().as_str() {
            "1" | "true" | "yes" => true,
            "" | "0" | "false" | "no" => false,
            _ => {
                warnings.push(format!(
                    "SKIP_GUARDIAN={value:?} is not true or false: ignored"
                ));
                false
            }
        },
        None => false,
    };
    let (skip_reason, source) = if flags.no_guardian {
        (Some("--no-guardian"), Source::Flag("--no-guardian"))
    } else if skip_env {
        (Some("SKIP_GUARDIAN=true"), Source::Env("SKIP_GUARDIAN"))
    } else if f.enabled == Some(false) {
        (Some("guardian.enabled = false"), r.file.clone())
    } else if f.enabled == Some(true) {
        (None, r.file.clone())
    } else {
        (None, Source::Default)
    };
    r.record("guardian.enabled", &skip_reason.is_none(), source);
    review::GuardianConfig {
        enabled: skip_reason.is_none(),
        skip_reason: skip_reason.map(str::to_string),
        vision_file: r.file(
            "guardian.vision_file",
            f.vision_file.clone(),
            DEFAULT_VISION_FILE.to_string(),
        ),
        model: r.file("guardian.model", f.model.clone().map(Some), None),
        budget: r.file("guardian.token_budget", f.token_budget, review_budget),
    }
}

fn checks_values(r: &mut Recorder, f: &file::Checks) -> checks::Config {
    let word = |level: Option<crate::severity::Severity>| level.map_or("off", |s| s.as_str());
    let mut config = checks::Config::default();
    for (check, level) in config.levels.iter_mut() {
        // `large_diff` is also a table (lines, files): its level is `severity`.
        let key = match check {
            Check::LargeDiff => "checks.large_diff.severity".to_string(),
            _ => format!("checks.{}", check.name()),
        };
        let set = f.levels.iter().find(|(c, _)| c == check).map(|(_, l)| *l);
        let source = match set {
            Some(l) => {
                *level = l;
                r.file.clone()
            }
            None => Source::Default,
        };
        r.record(&key, &word(*level), source);
    }
    config.large_diff_lines = r.file(
        "checks.large_diff.lines",
        f.large_diff_lines,
        config.large_diff_lines,
    );
    config.large_diff_files = r.file(
        "checks.large_diff.files",
        f.large_diff_files,
        config.large_diff_files,
    );
    let commands = f.commands.as_ref().map(|list| {
        list.iter()
            .map(|c| CommandCheck {
                name: c.name.clone(),
                run: c.run.clone(),
                severity: c.severity.unwrap_or(checks::DEFAULT_COMMAND_SEVERITY),
                timeout: c.timeout_secs.map_or(
                    Duration::from_secs(checks::DEFAULT_COMMAND_TIMEOUT_SECS),
                    Duration::from_secs_f64,
                ),
                tool: c.tool.clone(),
            })
            .collect()
    });
    config.commands = r.file("checks.command", commands, Vec::new());
    config
}
